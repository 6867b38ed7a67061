"""Averaged one-dependence estimators (AODE; Webb, Boughton & Wang 2005).

AODE averages, over every attribute X_i taken in turn as the *super-parent* of all other
attributes, the one-dependence estimator (SPODE)

    P_i(c, x) = P(c, x_i) prod_{j != i} P(x_j | c, x_i)                       (Webb et al. eq. 7)

and predicts P(c | x) ∝ sum_{i in S(x)} P_i(c, x), where S(x) holds the attributes whose value
x_i occurs in at least ``frequency_limit`` training rows (Weka's ``-F``, default 1). If no
attribute qualifies, the prediction is naive Bayes. The division by |S(x)| in Webb et al. is a
constant of the row and does not change the class posterior.

Estimates (Weka 3.x ``weka.classifiers.bayes.AODE`` without ``-M``: Laplace estimates, one
pseudo-count ``alpha`` per cell, ``alpha = 1`` reproducing Weka):

* P(c, x_i) = (N(c, x_i) + a) / (N_i + a m r_i), N_i = training rows with x_i observed (the
  joint (c, x_i) table as one Dirichlet row);
* P(x_j | c, x_i) = (N(c, x_i, x_j) + a) / (N(c, x_i, x_j observed) + a r_j) (available cases,
  as Weka subtracts the rows missing x_j);
* naive-Bayes fallback: P(c) = (N_c + a) / (N + a m), P(x_j | c) = (N(c, x_j) + a) /
  (N(c, x_j observed) + a r_j).

Every CPT goes through :func:`bnma_core.scores.posterior_cpt`, every count through
:func:`bnma_core.scores.family_counts` (numba kernel ``kernels.counting.count_family``).

Missing test values (``predict_missing``):

* a missing *child* x_j drops its factor P(x_j | c, x_i): the exact marginal of every SPODE,
  since the factor sums to one over x_j;
* a missing *super-parent* x_i: ``"marginalize"`` (default) sums SPODE i over the qualifying
  values of x_i, sum_v P(c, v) prod_{j observed} P(x_j | c, v), which makes the prediction the
  exact marginal of sum_i P_i(c, x) over all completions of the missing values (tested against
  brute-force enumeration); ``"skip"`` leaves SPODE i out, as Weka does. Skipping is exact only
  for the mixture restricted to the observed super-parents, not for the AODE of the complete
  row (it is a different model whenever a super-parent is missing).

References
----------
Webb, G. I., Boughton, J. R. & Wang, Z. (2005). Not so naive Bayes: aggregating one-dependence
estimators. Machine Learning 58, 5-24 (eq. 7; frequency limit m = 30 in the paper, 1 in Weka).
Weka 3.6 ``weka.classifiers.bayes.AODE`` (options ``-F 1``, Laplace estimates).
"""

from __future__ import annotations

import math
from typing import Any

import networkx as nx
import numpy as np

from ..data import CODE_DTYPE
from ..scores import family_counts, posterior_cpt
from .base import DEPRECATED, DiscreteBNClassifier, Interval, Options

__all__ = ["AODE"]

MISSING_PARENT = ("marginalize", "skip")
_CHUNK_CELLS = 2 ** 22


class AODE(DiscreteBNClassifier):
    """Averaged one-dependence estimators (Webb, Boughton & Wang 2005), as in Weka.

    Parameters
    ----------
    frequency_limit : int, default 1
        An attribute value seen in fewer training rows cannot be a super-parent (Weka ``-F``;
        Webb et al. used 30). 0 uses every attribute.
    alpha : float, default 1.0
        Pseudo-count per cell of every estimate (1 = Weka's Laplace estimates; see the module
        docstring for the three formulas).
    predict_missing : {"marginalize", "skip"}, default "marginalize"
        What a missing super-parent value in a row to classify does: summed out exactly, or
        its SPODE left out (Weka). A missing child value always drops its factor (exact).
    missing : deprecated
        Former name of ``predict_missing`` (accepted with a FutureWarning until the next
        release).

    Attributes
    ----------
    log_joint_ : list of (m * r_i,) arrays
        log P(c, x_i = v) at index c + m v.
    log_cond_ : dict (i, j) -> (m * r_i, r_j) array
        log P(x_j | c, x_i) in the library's CPT layout (parents (C, X_i), class fastest).
    log_nb_prior_ : (m,) array, log_nb_ : list of (m, r_j) arrays
        The naive-Bayes fallback.
    frequencies_ : list of (r_i,) arrays
        Training rows with X_i = v (the super-parent test).
    structure_ : networkx.DiGraph
        Class node (``role`` "class") with an edge to every feature (edge ``role`` "class");
        feature -> feature edges (``role`` "parent") in both directions, ``weight`` = 1/p, the
        share of the SPODEs in which the edge occurs.
    """

    #: training rows with missing values are used family by family (available cases)
    handles_missing_in_fit = True

    _parameter_constraints = {
        "frequency_limit": [Interval("int", 0, None)],
        "alpha": [Interval("real", 0, None, "neither")],
        "predict_missing": [Options(*MISSING_PARENT)],
    }
    _renamed_parameters = {"missing": "predict_missing"}

    def __init__(self, *, frequency_limit: int = 1, alpha: float = 1.0,
                 predict_missing: str = "marginalize", missing: Any = DEPRECATED) -> None:
        self.frequency_limit = frequency_limit
        self.alpha = alpha
        self.predict_missing = predict_missing
        self.missing = missing

    # --- training ------------------------------------------------------------------------------
    def _fit_codes(self, X: np.ndarray, y: np.ndarray) -> None:
        a = float(self.alpha)
        p = X.shape[1]
        m = len(self.classes_)
        self.n_classes_ = m
        data = np.ascontiguousarray(np.column_stack([X, y]), dtype=CODE_DTYPE)
        ar = np.append(np.asarray(self.arities_, dtype=np.int64), m)
        c = p
        nc = family_counts(data, c, None, ar)                       # (1, m)
        self.log_nb_prior_ = np.log(posterior_cpt(nc, a)[0])
        self.log_nb_ = []
        self.log_joint_ = []
        self.frequencies_ = []
        for i in range(p):
            t = family_counts(data, i, [c], ar)                     # (m, r_i): N(c, x_i)
            self.log_nb_.append(np.log(posterior_cpt(t, a)))
            # joint (c, x_i) as one Dirichlet row, index c + m v
            self.log_joint_.append(np.log(posterior_cpt(t.T.reshape(1, -1), a)[0]))
            self.frequencies_.append(t.sum(axis=0))
        self.log_cond_ = {}
        for i in range(p):
            for j in range(p):
                if i != j:
                    cnt = family_counts(data, j, [c, i], ar)        # (m r_i, r_j)
                    self.log_cond_[(i, j)] = np.log(posterior_cpt(cnt, a))
        self.structure_ = self._graph()

    def _graph(self) -> nx.DiGraph:
        names, cname = self._variable_names()
        g = nx.DiGraph()
        g.add_node(cname, role="class")
        for nm in names:
            g.add_node(nm, role="feature")
            g.add_edge(cname, nm, role="class", weight=1.0)
        p = len(names)
        for i in range(p):
            for j in range(p):
                if i != j:
                    g.add_edge(names[i], names[j], role="parent", weight=1.0 / p)
        return g

    # --- prediction -----------------------------------------------------------------------------
    def _spode_log_scores(self, X: np.ndarray, i: int) -> np.ndarray:
        """log P_i(c, x_i = v, x_obs without i) for every value v: shape (n, r_i, m)."""
        n, p = X.shape
        m = self.n_classes_
        r = int(self.arities_[i])
        # log P(c, v) at index c + m v -> (r, m)
        out = np.broadcast_to(self.log_joint_[i].reshape(r, m), (n, r, m)).copy()
        rows_cv = (np.arange(m)[None, :] + m * np.arange(r)[:, None])   # (r, m)
        for j in range(p):
            if j == i:
                continue
            xj = X[:, j]
            obs = xj >= 0
            if not obs.any():
                continue
            table = self.log_cond_[(i, j)]                      # (m r, r_j)
            vals = table[:, np.where(obs, xj, 0)]               # (m r, n)
            vals = vals[rows_cv.ravel()].reshape(r, m, n).transpose(2, 0, 1)
            out += np.where(obs[:, None, None], vals, 0.0)
        return out

    def _predict_log_proba_codes(self, X: np.ndarray) -> np.ndarray:
        n, p = X.shape
        m = self.n_classes_
        if n == 0:
            return np.zeros((0, m))
        rmax = int(max(self.arities_.max(), 1))
        step = max(1, _CHUNK_CELLS // max(1, p * p * rmax * m))
        return np.concatenate([self._log_scores(X[s:s + step]) for s in range(0, n, step)])

    def _log_scores(self, X: np.ndarray) -> np.ndarray:
        terms = self._spode_terms(X)
        out = np.logaddexp.reduce(terms, axis=1)                # (n, m)
        none = ~np.isfinite(out).any(axis=1)
        if none.any():
            out[none] = self._naive_bayes(X[none])
        return out

    def _naive_bayes(self, X: np.ndarray) -> np.ndarray:
        out = np.repeat(self.log_nb_prior_[None, :], X.shape[0], axis=0)
        for j in range(X.shape[1]):
            xj = X[:, j]
            obs = xj >= 0
            out += np.where(obs[:, None], self.log_nb_[j][:, np.where(obs, xj, 0)].T, 0.0)
        return out

    def fit(self, X: Any, y: Any, arities: Any = None) -> AODE:
        """Count and estimate every SPODE (see :meth:`DiscreteBNClassifier.fit`)."""
        return super().fit(X, y, arities)

    def _spode_terms(self, X: np.ndarray) -> np.ndarray:
        """log P_i(c, x_obs) of every SPODE i (-inf where x_i does not qualify): (n, p, m)."""
        n, p = X.shape
        m = self.n_classes_
        lim = int(self.frequency_limit)
        terms = np.full((n, p, m), -np.inf)
        for i in range(p):
            s = self._spode_log_scores(X, i)                    # (n, r_i, m)
            ok = self.frequencies_[i] >= lim                    # (r_i,) qualifying values
            xi = X[:, i]
            obs = xi >= 0
            xs = np.where(obs, xi, 0)
            picked = s[np.arange(n), xs]                         # (n, m)
            use = obs & ok[xs]
            terms[use, i] = picked[use]
            if self._param("predict_missing") == "marginalize" and (~obs).any() and ok.any():
                miss = ~obs
                terms[miss, i] = np.logaddexp.reduce(s[miss][:, ok], axis=1)
        return terms

    def model_log_joints(self, X: Any, codes: bool = False
                         ) -> tuple[np.ndarray, np.ndarray, str]:
        """The super-parent models behind the average (DESIGN §15).

        Returns log weights (p + 1,) = log 1/p for the p SPODEs and 0 for the naive-Bayes
        fallback; log joints (p + 1, n_rows, n_classes): log P_i(c, x_obs) of SPODE i (-inf
        when x_i does not qualify as a super-parent), and in the last slot the naive-Bayes
        joint for rows where no attribute qualifies (-inf elsewhere); and "joint" (AODE
        sums the joints, so SPODE i weighs P_i(x_obs) in the class posterior).
        ``codes=True``: ``X`` is already an array of feature codes.
        """
        Xc = np.asarray(X, dtype=CODE_DTYPE) if codes else self._prepare_predict(X)
        n, p = Xc.shape
        m = self.n_classes_
        lj = np.full((p + 1, n, m), -np.inf)
        if n:
            lj[:p] = self._spode_terms(Xc).transpose(1, 0, 2)
            none = ~np.isfinite(lj[:p]).any(axis=(0, 2))
            if none.any():
                lj[p, none] = self._naive_bayes(Xc[none])
        return np.append(np.full(p, -math.log(max(p, 1))), 0.0), lj, "joint"
