"""bnma_core: Bayesian model averaging of Bayesian network classifiers.

A library with no Streamlit import. Data flow (DESIGN §1): CSV -> DiscreteDataset -> score
tables / counts -> structures -> classifiers -> evaluation -> figures.

"DESIGN §n" in a docstring means section n of ``docs/DESIGN.md`` in the repository (the design
document: architecture, data flow, formulas with their paper equations and their one home in the
code, glossary). Bundled data: :mod:`bnma_core.datasets`.
"""

from .data import DataError, DiscreteDataset, load_dataset
from .model_io import load_model, save_model

__all__ = ["DataError", "DiscreteDataset", "load_dataset", "load_model", "save_model"]
__version__ = "0.1.0"
