"""aCLL-TAN: the TAN that maximises the approximate conditional log-likelihood (Carvalho,
Adão & Mateus 2013), as a baseline of Sugahara, Aomi & Ueno's Table 1 (DESIGN §6).

Checked against the paper (Entropy 15(7), 2716-2735, 2013):

* **Score.** Eq. (28) (the maximised form of eq. (25), parameters of Theorem 3.8):
  sum_{i,j,k,c} (α N_ijck + β sum_{c' != c} N_ijc'k) log(N_ij+ck / N_ij+c), α = 1 + β, with
  N_ij+ck = α N_ijck + β sum_{c' != c} N_ijc'k floored at the pseudo-count N'. Because
  α N_ijck + β sum_{c' != c} N_ijc'k = N_ijck + β sum_{c'} N_ijc'k, this is exactly the form
  transcribed by Sugahara et al. (§2) and computed by :func:`acll_family`. The class-prior term
  of eq. (28) does not depend on the feature tree and is left out.
* **β.** Negative: the least-squares slope β = Cov(A, B) / Var(B) of A = −log sum_c U_c on
  B = sum_c log U_c (Theorem 3.2, eq. (19)). Under the paper's *Dirichlet assumption*
  (U_1..U_s, 1 − sum U) ~ Dir(1, ..., 1, N) with N the number of training rows (§3.1.2,
  eq. (24)) it is found by Monte Carlo (Algorithm 2: Gamma draws, m = 100,000; Example 3.7
  gives β = −0.39291 for s = 2 and −0.239266 for s = 3 at N = 1,000). Under the *uniform
  assumption* β = (π² − 18)/24 = −0.3388 for two classes (eq. (13)) and −0.198873 for three
  (Example 3.6). :func:`acll_beta` implements both; Sugahara et al. say only that "β is found
  using a Monte-Carlo method", i.e. the Dirichlet assumption, our default.
* **N'.** The paper's experiments set the pseudo-count N' = 5 "as suggested in [Friedman et
  al. 1997]" (§5); our default. (Before this check the defaults were β = N' = 0.5, unverified.)
"""

from __future__ import annotations

import math
from functools import lru_cache
from typing import Any

import networkx as nx
import numpy as np

from ..scores import family_counts
from .augmented import CPT_PRIOR_CONSTRAINTS, AugmentedNaiveBayes
from .base import DEPRECATED, Interval, Options

__all__ = ["ACLLTAN", "acll_beta", "acll_family"]

MC_SAMPLES = 100_000
"""Monte Carlo draws of :func:`acll_beta` (the paper's m for the Dirichlet case, Example 3.7)."""


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
    N_ij+ck = N_ijck + β sum_c' N_ijc'k if that is >= N', else N'; N_ij+c = sum_k N_ij+ck.
    Carvalho, Adão & Mateus 2013, eq. (28) with α = 1 + β (α N_ijck + β sum_{c' != c} N_ijc'k
    = N_ijck + β sum_c' N_ijc'k); Sugahara, Aomi & Ueno, §2. The weights are not floored and
    are negative where a class is rare in a cell (β < 0).
    """
    q, r = counts.shape
    N = counts.reshape(q // n_classes, n_classes, r)          # (j, c, k)
    a = N + beta * N.sum(axis=1, keepdims=True)
    plus = np.where(a >= n_prime, a, n_prime)
    return float(np.sum(a * (np.log(plus) - np.log(plus.sum(axis=2, keepdims=True)))))


@lru_cache(maxsize=256)
def _beta_mc(n_classes: int, b: float, uniform: bool, n_samples: int, seed: int) -> float:
    rng = np.random.default_rng(seed)
    if uniform:
        u = rng.random((n_samples, n_classes))
    else:
        y = rng.gamma(np.append(np.ones(n_classes), b), size=(n_samples, n_classes + 1))
        u = y[:, :n_classes] / y.sum(axis=1, keepdims=True)
    a = -np.log(u.sum(axis=1))
    bb = np.log(u).sum(axis=1)
    cov = np.cov(a, bb)
    return float(cov[0, 1] / cov[1, 1])


def acll_beta(n_classes: int, n_rows: int | None = None, assumption: str = "dirichlet",
              n_samples: int = MC_SAMPLES, seed: int = 0) -> float:
    """β of aCLL: the minimum-variance unbiased slope β = Cov(A, B) / Var(B), A = −log sum_c U_c,
    B = sum_c log U_c (Carvalho, Adão & Mateus 2013, Theorem 3.2, eq. (19)).

    Parameters
    ----------
    n_classes : int
        s, the number of classes (>= 2).
    n_rows : int, optional
        N, the number of training rows (needed for ``"dirichlet"``).
    assumption : {"dirichlet", "uniform"}
        ``"dirichlet"``: (U_1..U_s, 1 − sum U) ~ Dir(1, ..., 1, N) (§3.1.2, eq. (24)), β by Monte
        Carlo with Gamma draws (Algorithm 2). ``"uniform"``: U ~ Uniform([0, p]^s) (Assumption
        3.3; p is irrelevant): (π² − 18)/24 for s = 2 (eq. (13)), Monte Carlo otherwise.
    n_samples, seed : int
        Monte Carlo draws (the paper's m = 100,000) and their seed (fixed: same β every call).

    Returns
    -------
    float
        E.g. −0.3929 for s = 2, N = 1,000 and −0.2399 for s = 3 (paper, Example 3.7:
        −0.39291, −0.239266).
    """
    if isinstance(n_classes, bool) or not isinstance(n_classes, (int, np.integer)) \
            or n_classes < 2:
        raise ValueError(f"n_classes must be an integer >= 2 (got {n_classes!r}).")
    if assumption == "uniform":
        if n_classes == 2:
            return (math.pi ** 2 - 18.0) / 24.0
        return _beta_mc(int(n_classes), 0.0, True, int(n_samples), int(seed))
    if assumption != "dirichlet":
        raise ValueError(f"assumption must be 'dirichlet' or 'uniform' (got {assumption!r}).")
    if n_rows is None or isinstance(n_rows, bool) or not isinstance(n_rows, (int, np.integer)) \
            or n_rows < 1:
        raise ValueError(f"n_rows must be a positive integer for the Dirichlet assumption "
                         f"(got {n_rows!r}).")
    return _beta_mc(int(n_classes), float(n_rows), False, int(n_samples), int(seed))


class ACLLTAN(AugmentedNaiveBayes):
    """Tree-augmented naive Bayes that maximises the decomposable aCLL score.

    The gain of feature parent j for feature i is w(j -> i) = aCLL(i | {C, X_j}) -
    aCLL(i | {C}) (:func:`acll_family`); aCLL is not score-equivalent (Carvalho et al. 2013,
    Theorem 3.9), so the gains need not be symmetric and the feature tree is the maximum
    spanning arborescence of the complete gain digraph (Edmonds' algorithm,
    :func:`networkx.maximum_spanning_arborescence`). Parameters are EAP with BDeu
    pseudo-counts (``cpt_prior="bdeu", ess=1``), as Sugahara et al. use for every classifier.

    Parameters
    ----------
    beta : {"dirichlet", "uniform"} or float, default "dirichlet"
        β of aCLL. ``"dirichlet"``: the paper's Monte Carlo value under the symmetric Dirichlet
        assumption Dir(1, ..., 1, N), N = training rows, for the data's number of classes
        (:func:`acll_beta`); ``"uniform"``: the uniform-assumption value; a number in (−1, 1]
        is used as given (α = 1 + β > 0).
    n_prime : float, default 5.0
        Pseudo-count floor N' (the paper's experiments, §5).
    cpt_prior, ess, alpha
        CPT prior (default the paper's EAP: ``cpt_prior="bdeu", ess=1.0``); see
        :class:`~bnma_core.classifiers.augmented.AugmentedNaiveBayes`.

    Attributes
    ----------
    beta_ : float
        The β used.

    Notes
    -----
    Counts for the score use the training rows observed in the feature, its parent and the
    class; N of the Dirichlet β is the number of training rows. Ties are broken by networkx's
    deterministic Edmonds implementation.

    References
    ----------
    Carvalho, A. M., Adão, P. & Mateus, P. (2013). Efficient approximation of the conditional
    relative entropy with applications to discriminative learning of Bayesian network
    classifiers. Entropy 15(7), 2716-2735 (eq. (13), (19), (24), (28); Algorithm 2; Example
    3.7; §5). Sugahara, Aomi & Ueno (paper 001), §2.
    """

    _parameter_constraints = {
        **CPT_PRIOR_CONSTRAINTS,
        "beta": [Options("dirichlet", "uniform"), Interval("real", -1, 1, "right")],
        "n_prime": [Interval("real", 0, None, "neither")],
    }

    def __init__(self, *, beta: Any = "dirichlet", n_prime: float = 5.0, alpha: float = 1.0,
                 cpt_prior: Any = "bdeu", ess: float = 1.0, prior: Any = DEPRECATED) -> None:
        self.beta = beta
        self.n_prime = n_prime
        self.alpha = alpha
        self.cpt_prior = cpt_prior
        self.ess = ess
        self.prior = prior

    def _resolve_beta(self, n_classes: int, n_rows: int) -> float:
        if isinstance(self.beta, str):  # validated: "dirichlet" or "uniform"
            if n_classes < 2:
                return 0.0          # one class: every tree has the same (zero) CLL
            return acll_beta(n_classes, max(n_rows, 1), self.beta)
        return float(self.beta)

    def _learn_parents(self, X: np.ndarray, y: np.ndarray):
        n_prime = float(self.n_prime)
        p = X.shape[1]
        K = len(self.classes_)
        beta = self.beta_ = self._resolve_beta(K, len(y))
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
