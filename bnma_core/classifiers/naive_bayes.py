"""Naive Bayes: the class is the only parent of every feature."""

from __future__ import annotations

from typing import Any

import numpy as np

from .augmented import AugmentedNaiveBayes
from .base import DEPRECATED


class NaiveBayes(AugmentedNaiveBayes):
    """Naive Bayes classifier with Dirichlet-smoothed (posterior-predictive) parameters.

    Parameters
    ----------
    alpha : float, default 1.0
        Pseudo-count added to every cell: theta_ijk = (alpha + N_ijk) / (alpha r_i + N_ij).
        With ``alpha=1`` this is exactly the MAP naive Bayes of Dash & Cooper (2002), eq. 6,
        with a_ijk = 1 (and the class prior (1 + N_c) / (|C| + N)): the single-structure
        baseline their model-averaged naive classifier is compared against.
    cpt_prior, ess : str or float, optional; float, default 1.0
        Named CPT prior replacing ``alpha``, and the BDeu equivalent sample size (see
        :class:`~bnma_core.classifiers.augmented.AugmentedNaiveBayes`).

    Notes
    -----
    Training rows with a missing feature value still count for every other feature. A missing
    feature at prediction time is marginalized exactly, which for naive Bayes means its factor
    is dropped. Fitted attributes: see
    :class:`~bnma_core.classifiers.augmented.AugmentedNaiveBayes`.

    References
    ----------
    Dash, D. & Cooper, G. F. (2002). Exact model averaging with naive Bayesian classifiers.
    ICML, eq. 6.
    Sugahara, Aomi & Ueno. Bayesian network model averaging classifiers by subbagging
    (the EAP prior, ``cpt_prior="bdeu"``).

    Examples
    --------
    >>> from bnma_core.classifiers.naive_bayes import NaiveBayes
    >>> from bnma_core.data import load_dataset
    >>> from bnma_core.datasets import bundled_path
    >>> ds = load_dataset(bundled_path("wbc.csv"))
    >>> nb = NaiveBayes().fit(ds.X, ds.y, arities=ds.arities[ds.feature_indices])
    >>> nb.predict_proba(ds.X[:2]).round(3).tolist()
    [[1.0, 0.0], [0.0, 1.0]]
    >>> round(nb.score(ds.X, ds.y), 3)  # training accuracy
    0.974
    """

    def __init__(self, *, alpha: float = 1.0, cpt_prior: Any = None, ess: float = 1.0,
                 prior: Any = DEPRECATED) -> None:
        self.alpha = alpha
        self.cpt_prior = cpt_prior
        self.ess = ess
        self.prior = prior

    def _learn_parents(self, X: np.ndarray, y: np.ndarray):
        return [[] for _ in range(X.shape[1])], {}, None
