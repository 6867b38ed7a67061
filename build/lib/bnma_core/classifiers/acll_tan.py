"""aCLL-TAN: the TAN that maximises the approximate conditional log-likelihood (Carvalho,
Adão & Mateus 2013), as a baseline of Sugahara, Aomi & Ueno's Table 1 (DESIGN §6)."""

from __future__ import annotations

from typing import Any

import networkx as nx
import numpy as np

from ..scores import family_counts
from .augmented import AugmentedNaiveBayes

__all__ = ["ACLLTAN", "acll_family"]


def acll_family(counts: np.ndarray, n_classes: int, beta: float, n_prime: float) -> float:
    """aCLL term of one feature: sum_{j,k,c} (N_ijck + β N_ij·k) log(N_ij+ck / N_ij+c).

    Parameters
    ----------
    counts : (q, r) array
        :func:`bnma_core.scores.family_counts` of the feature with parents (C, *Π*) — the class
        first, so row j·|C| + c holds N_ijc·.
    n_classes : int
    beta, n_prime : float
        β and the pseudo-count floor N' of the score.

    Returns
    -------
    float

    Notes
    -----
    N_ij+ck = N_ijck + β sum_c' N_ijc'k if that is >= N', else N'; N_ij+c = sum_k N_ij+ck
    (Sugahara, Aomi & Ueno, §2, the aCLL equation, after Carvalho, Adão & Mateus 2013).
    """
    q, r = counts.shape
    N = counts.reshape(q // n_classes, n_classes, r)          # (j, c, k)
    a = N + beta * N.sum(axis=1, keepdims=True)
    plus = np.where(a >= n_prime, a, n_prime)
    return float(np.sum(a * (np.log(plus) - np.log(plus.sum(axis=2, keepdims=True)))))


class ACLLTAN(AugmentedNaiveBayes):
    """Tree-augmented naive Bayes that maximises the decomposable aCLL score.

    The gain of feature parent j for feature i is w(j -> i) = aCLL(i | {C, X_j}) -
    aCLL(i | {C}) (:func:`acll_family`); the gains need not be symmetric, so the feature tree
    is the maximum spanning arborescence of the complete gain digraph (Edmonds' algorithm,
    :func:`networkx.maximum_spanning_arborescence`). Parameters are EAP with BDeu pseudo-counts
    (``prior="bdeu", ess=1``), as the paper uses for every classifier.

    Parameters
    ----------
    beta : float, default 0.5
        β of aCLL. Carvalho et al. found it by Monte Carlo; their value could not be checked
        here, so it is a parameter (spec ``subbagging-kbest.md`` §4, "open").
    n_prime : float, default 0.5
        Pseudo-count floor N' (same status as ``beta``).
    prior, ess, alpha
        CPT prior (default the paper's EAP: ``prior="bdeu", ess=1.0``); see
        :class:`~bnma_core.classifiers.augmented.AugmentedNaiveBayes`.

    Notes
    -----
    Counts for the score use the training rows observed in the feature, its parent and the
    class. Ties are broken by networkx's deterministic Edmonds implementation.

    References
    ----------
    Carvalho, A. M., Adão, P. & Mateus, P. (2013). Efficient approximation of the conditional
    relative entropy with applications to discriminative learning of Bayesian network
    classifiers. Entropy 15(7), 2716-2735. Sugahara, Aomi & Ueno (paper 001), §2.
    """

    def __init__(self, beta: float = 0.5, n_prime: float = 0.5, alpha: float = 1.0,
                 prior: Any = "bdeu", ess: float = 1.0) -> None:
        self.beta = beta
        self.n_prime = n_prime
        self.alpha = alpha
        self.prior = prior
        self.ess = ess

    def _learn_parents(self, X: np.ndarray, y: np.ndarray):
        beta, n_prime = float(self.beta), float(self.n_prime)
        if not (beta >= 0 and n_prime > 0 and np.isfinite(beta) and np.isfinite(n_prime)):
            raise ValueError("beta must be >= 0 and n_prime > 0 (finite).")
        p = X.shape[1]
        K = len(self.classes_)
        data = np.column_stack([X, y])
        ar = np.append(np.asarray(self.arities_, dtype=np.int64), K)
        base = [acll_family(family_counts(data, i, [p], ar), K, beta, n_prime) for i in range(p)]
        parents: list[list[int]] = [[] for _ in range(p)]
        if p == 1:
            return parents, {}, None
        g = nx.DiGraph()
        g.add_nodes_from(range(p))
        for i in range(p):
            for j in range(p):
                if i != j:
                    gain = acll_family(family_counts(data, i, [p, j], ar), K, beta, n_prime)
                    g.add_edge(j, i, weight=gain - base[i])
        tree = nx.maximum_spanning_arborescence(g, attr="weight", preserve_attrs=True)
        weights = {}
        for u, v, d in tree.edges(data=True):
            parents[v] = [u]
            weights[(u, v)] = float(d["weight"])
        return parents, weights, None
