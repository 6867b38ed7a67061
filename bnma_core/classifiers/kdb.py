"""k-dependence Bayesian classifier (Sahami 1996)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..scores import class_mutual_informations, pairwise_conditional_mutual_information
from .augmented import CPT_PRIOR_CONSTRAINTS, AugmentedNaiveBayes
from .base import DEPRECATED, Interval


class KDB(AugmentedNaiveBayes):
    """k-dependence Bayesian classifier.

    Features are ranked by I(X_i; C) (descending; ties by column order). Each feature takes
    the class plus up to ``k`` parents among the features ranked before it: those with the
    largest I(X_i; X_j | C) (ties by rank). Information in nats from the empirical
    distribution of the training rows complete in the variables concerned. ``k=0`` is naive
    Bayes. Sahami's optional CMI threshold is not used (every feature gets min(k, rank) parents).

    Parameters
    ----------
    k : int, default 2
        Dependence order: the most feature parents a feature may have.
    alpha : float, default 1.0
        Dirichlet pseudo-count per CPT cell (see :class:`~bnma_core.classifiers.NaiveBayes`).
    cpt_prior, ess : str or float, optional; float, default 1.0
        Named CPT prior replacing ``alpha``, and the BDeu equivalent sample size (see
        :class:`~bnma_core.classifiers.augmented.AugmentedNaiveBayes`).

    Attributes
    ----------
    order_ : ndarray
        Feature indices in decreasing order of I(X_i; C).

    References
    ----------
    Sahami, M. (1996). Learning limited dependence Bayesian classifiers. KDD-96, 335-338
    (the KDB algorithm, Fig. 1).
    """

    _parameter_constraints = {**CPT_PRIOR_CONSTRAINTS, "k": [Interval("int", 0, None)]}

    def __init__(self, *, k: int = 2, alpha: float = 1.0, cpt_prior: Any = None,
                 ess: float = 1.0, prior: Any = DEPRECATED) -> None:
        self.k = k
        self.alpha = alpha
        self.cpt_prior = cpt_prior
        self.ess = ess
        self.prior = prior

    def _learn_parents(self, X: np.ndarray, y: np.ndarray):
        k = int(self.k)
        p = X.shape[1]
        n_classes = len(self.classes_)
        mi = class_mutual_informations(X, y, self.arities_, n_classes)
        order = np.argsort(-mi, kind="stable")
        self.order_ = order
        cmi = (pairwise_conditional_mutual_information(X, y, self.arities_, n_classes)
               if k > 0 and p > 1 else np.zeros((p, p)))
        parents: list[list[int]] = [[] for _ in range(p)]
        weights = {}
        for pos, i in enumerate(order):
            before = order[:pos]
            if k == 0 or len(before) == 0:
                continue
            rank = np.argsort(-cmi[i, before], kind="stable")[:k]
            parents[i] = [int(before[r]) for r in rank]
            for j in parents[i]:
                weights[(j, int(i))] = float(cmi[i, j])
        return parents, weights, mi
