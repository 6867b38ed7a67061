"""bnma_core: Bayesian model averaging of Bayesian network classifiers.

A library with no Streamlit import. Data flow (DESIGN §1): CSV -> DiscreteDataset -> score
tables / counts -> structures -> classifiers -> evaluation -> figures.
"""

from .data import DataError, DiscreteDataset, load_dataset

__all__ = ["DataError", "DiscreteDataset", "load_dataset"]
__version__ = "0.1.0"
