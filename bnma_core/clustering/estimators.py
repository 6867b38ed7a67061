"""EMA-TAN and its baselines EMA, EM-TAN and EM-BNET (Santafé, Lozano & Larrañaga;
docs/specs.md §11-19; DESIGN §4, §6)."""

from __future__ import annotations

from typing import Any

import networkx as nx
import numpy as np

from ..kernels.clustering import (
    bnet_counts,
    bnet_e_step,
    bnet_m_step,
    e_step,
    expected_counts,
    ma_step,
    max_abs_diff,
    max_spanning_tree_parents,
)
from ..kernels.information import pairwise_cmi
from .base import _BaseClusterer, _offsets

CLASS = "C"


class _TanParams:
    """Parameters of one EMA / EMA-TAN / EM-TAN model (outputs of the MA step)."""

    __slots__ = ("theta_c", "t0", "tc", "tx", "tcx", "w0", "wc", "wx", "wcx", "D", "P",
                 "act_ptr", "act_idx", "lp")

    def __init__(self, out: tuple, lp: tuple) -> None:
        for name, val in zip(self.__slots__, out):
            setattr(self, name, val)
        self.lp = lp  # the log structure priors used (a fixed tree for EM-TAN)


class _TanEngine:
    """EM loop pieces over the parent-set family {∅, {C}, {X_j}, {C, X_j}} (positions)."""

    def __init__(self, est: _BaseClusterer, Xe: np.ndarray, starts: np.ndarray,
                 arities: np.ndarray, order: np.ndarray, lp: tuple, average: bool,
                 pairs: bool, learn_tree: bool = False) -> None:
        self.Xe, self.starts = Xe, starts
        self.arities = np.asarray(arities, dtype=np.int64)
        self.offs = _offsets(self.arities)
        self.R = int(self.arities.sum())
        self.k = est.n_clusters
        self.bdeu = est.scoring == "bdeu"
        self.alpha = float(est.alpha)
        self.alpha_c = self.alpha / self.k if self.bdeu else self.alpha
        self.lp0, self.lpc, self.lpx, self.lpcx = lp
        self.average = average
        self.pairs = pairs
        self.learn_tree = learn_tree
        self.order = order
        self._total = None
        if Xe.shape[0] == starts.shape[0] - 1 and self.k > 1:  # complete data
            self._total = expected_counts(Xe, np.ones((Xe.shape[0], 1)), self.offs, self.R,
                                          pairs)

    def counts(self, gamma: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Expected counts (eq. 3-4). Without missing values the total over clusters is a
        constant (C-free counts); then the last cluster's counts are that total minus the
        others, which saves 1 / r_C of the work."""
        if self._total is None:
            return expected_counts(self.Xe, gamma, self.offs, self.R, self.pairs)
        G, nc = expected_counts(self.Xe, np.ascontiguousarray(gamma[:, :-1]), self.offs,
                                self.R, self.pairs)
        last = self._total[0][:, :, 0] - G.sum(axis=2)
        G = np.concatenate([G, last[:, :, None]], axis=2)
        return G, np.append(nc, self._total[1][0] - nc.sum())

    def _tree_priors(self, gamma: np.ndarray) -> tuple:
        """EM-TAN structure step: maximum-weight spanning tree of I(X_i; X_j | C) from the
        expected frequencies (Friedman et al. 1997; the project's ``pairwise_cmi`` kernel on the
        C-completed rows weighted by gamma), Prim from the first column (its root)."""
        n = len(self.arities)
        k = self.k
        M = self.Xe.shape[0]
        Xr = np.ascontiguousarray(np.tile(self.Xe, (k, 1)))
        yr = np.repeat(np.arange(k, dtype=self.Xe.dtype), M)
        w = np.ascontiguousarray(gamma.T.reshape(-1))
        cmi = pairwise_cmi(Xr, yr, self.arities, k, w, 0.0)
        lp0 = np.full(n, -np.inf)
        lpc = np.full(n, -np.inf)
        lpx = np.full((n, n), -np.inf)
        lpcx = np.full((n, n), -np.inf)
        parent = max_spanning_tree_parents(cmi)
        for i in range(n):
            if parent[i] < 0:
                lpc[i] = 0.0
            else:
                lpcx[i, parent[i]] = 0.0
        return lp0, lpc, lpx, lpcx

    def m_step(self, gamma: np.ndarray) -> _TanParams:
        G, nc = self.counts(gamma)
        lp = self._tree_priors(gamma) if self.learn_tree else (
            self.lp0, self.lpc, self.lpx, self.lpcx)
        return _TanParams(ma_step(G, nc, self.arities, self.offs, self.alpha, self.bdeu,
                                  self.alpha_c, *lp, self.average), lp)

    def e_step(self, p: _TanParams, Xe: np.ndarray, starts: np.ndarray,
               new_data: bool = False) -> tuple:
        gamma = np.empty((Xe.shape[0], self.k))
        row_ll = np.empty(starts.shape[0] - 1)
        ll = e_step(Xe, starts, self.offs, np.log(p.theta_c), p.D, p.P, p.act_ptr, p.act_idx,
                    gamma, row_ll)
        return gamma, ll, row_ll

    def delta(self, a: _TanParams, b: _TanParams) -> float:
        """Largest change of theta_C, every theta^v and every weight w_i^v (docs/specs.md §14)."""
        d = 0.0
        for name in ("theta_c", "t0", "tc", "tx", "tcx", "w0", "wc", "wx", "wcx"):
            d = max(d, max_abs_diff(getattr(a, name).ravel(), getattr(b, name).ravel()))
        return d

    def objective(self, p: _TanParams, ll: float) -> None:
        return None

    def class_prior(self, p: _TanParams) -> np.ndarray:
        return p.theta_c

    def summary(self, p: _TanParams) -> dict:
        return {"class_edge_posterior": p.wc + p.wcx.sum(axis=1)}

    def n_params(self, p: _TanParams) -> float:
        """(r_C - 1) + sum_i sum_v w_i^v q_i^v (r_i - 1): the posterior-expected parameter count
        (docs/specs.md §18, a stated heuristic for averaged models)."""
        r = self.arities
        k = self.k
        tot = float(k - 1)
        tot += float(((p.w0 + p.wc * k) * (r - 1)).sum())
        tot += float(((p.wx + p.wcx * k) * r[None, :] * (r[:, None] - 1)).sum())
        return tot


def _tan_class_priors(est: _BaseClusterer, order: np.ndarray, allow_x: bool) -> tuple:
    """Log structure priors of the candidate sets of each position (-inf = not a candidate):
    P_i = {∅, {C}} ∪ {{X_j}, {C, X_j} : j before i in π} (Def. 1), restricted by
    ``class_parent="always"`` to the sets containing C."""
    n = len(order)
    prior = est.structure_prior

    def lp(pos: int, parents: tuple) -> float:
        if prior == "uniform":
            return 0.0
        orig = tuple(CLASS if v == CLASS else int(order[v]) for v in parents)
        return float(prior(int(order[pos]), orig))

    always = est.class_parent == "always"
    lp0 = np.full(n, -np.inf)
    lpc = np.full(n, -np.inf)
    lpx = np.full((n, n), -np.inf)
    lpcx = np.full((n, n), -np.inf)
    for i in range(n):
        if not always:
            lp0[i] = lp(i, ())
        lpc[i] = lp(i, (CLASS,))
        if allow_x:
            for j in range(i):
                if not always:
                    lpx[i, j] = lp(i, (j,))
                lpcx[i, j] = lp(i, (CLASS, j))
    return lp0, lpc, lpx, lpcx


class _TanFamilyClusterer(_BaseClusterer):
    """Attributes shared by EMA, EMA-TAN and EM-TAN."""

    _allow_x = True

    def _set_model_attributes(self, engine: Any, params: _TanParams, gamma: np.ndarray,
                              Xe: np.ndarray) -> None:
        super()._set_model_attributes(engine, params, gamma, Xe)
        order = self.order_
        n = len(order)
        names = self._names()
        ps: list[list[tuple]] = [[] for _ in range(n)]
        pw: list[list[float]] = [[] for _ in range(n)]
        edge = np.zeros((n, n))
        cls = np.zeros(n)
        lp = params.lp
        for i in range(n):
            oi = int(order[i])
            cands = []
            if lp[0][i] > -np.inf:
                cands.append(((), params.w0[i]))
            if lp[1][i] > -np.inf:
                cands.append(((CLASS,), params.wc[i]))
            for j in range(n):
                if lp[2][i, j] > -np.inf:
                    cands.append(((int(order[j]),), params.wx[i, j]))
                if lp[3][i, j] > -np.inf:
                    cands.append(((CLASS, int(order[j])), params.wcx[i, j]))
                edge[oi, int(order[j])] = params.wx[i, j] + params.wcx[i, j]
            ps[oi] = [c[0] for c in cands]
            pw[oi] = [float(c[1]) for c in cands]
            cls[oi] = params.wc[i] + params.wcx[i].sum()
        self.parent_sets_ = ps
        self.parent_set_weights_ = [np.asarray(w) for w in pw]
        self.class_edge_posterior_ = cls
        self.edge_posterior_ = edge
        g = nx.DiGraph()
        cname = "cluster"
        while cname in names:
            cname += "_"
        self.class_node_ = cname
        g.add_node(cname)
        g.add_nodes_from(names)
        for i in range(n):
            if cls[i] > 0:
                g.add_edge(cname, names[i], weight=float(cls[i]))
            for j in range(n):
                if edge[i, j] > 0:
                    g.add_edge(names[j], names[i], weight=float(edge[i, j]))
        self.structure_ = g


class EMATAN(_TanFamilyClusterer):
    """EMA-TAN: clustering by (approximate) Bayesian model averaging over all TAN models
    consistent with an ancestral order π (Santafé, Lozano & Larrañaga, section 3).

    Every iteration completes the latent cluster C with expected counts (E step, eq. 3-4) and
    averages, per feature X_i, over its 2i candidate parent sets ∅, {C}, {X_j}, {C, X_j}
    (j before i in π): eq. 6 estimates theta^v weighted by w_i^v ∝ p_S^v M_i^v, the Dirichlet
    marginal likelihood of the fractional counts (eq. 10-12). The product of these mixtures is
    exactly the average over all 2^n n! structures of L(π) (Theorem 1; docs/specs.md §13).

    Parameters
    ----------
    n_clusters : int
        Number of clusters r_C (fixed in advance).
    n_init : int
        Random starts; the paper uses 100 and keeps the highest training log-likelihood.
    tol, max_iter : float, int
        Stop when the largest change of theta_C, any theta^v or any w_i^v is below ``tol``.
    random_state : None, int or numpy Generator
        Draws the order (``order="random"``) and the starts; estimators given the same seed
        share their starts.
    order : "random", "chow_liu" or a permutation
        π: one random draw per fit (paper), the breadth-first order of the Chow-Liu tree of the
        observed features (a learned heuristic), or a list of column indices / names.
    alpha : float
        Dirichlet hyperparameter per cell (``scoring="k2"``: 1 = K2) or BDeu equivalent sample
        size (``scoring="bdeu"``); also for C (alpha, or alpha / r_C for BDeu).
    scoring : {"k2", "bdeu"}
    structure_prior : "uniform" or callable
        Modular prior p_S (eq. 2): ``f(feature, parents) -> log p_S`` with ``parents`` a tuple
        of column indices and ``"C"``; ``-inf`` removes a set.
    class_parent : {"optional", "always"}
        ``"always"`` keeps only the sets containing C (never collapsed in the prototype runs
        of docs/specs.md §17).
    selection : {"best_ll", "best_non_collapsed"}
        Which start defines the model (the second falls back to the best if all collapsed).
    restart_collapsed : bool
        Draw further starts (up to 3 n_init) until ``n_init`` starts did not collapse.
    init : {"random_nb", "random_resp"}
        Random naive Bayes then an E step (default), or random responsibilities.
    stop_collapsed : bool
        Stop a start as soon as it collapses (an absorbing state, docs/specs.md §17).
    n_jobs : int
        Starts run in this many threads (the kernels release the GIL).

    Attributes
    ----------
    order_ : ndarray
        π as column indices.
    parent_sets_, parent_set_weights_ : list
        Per feature (column index), its candidate parent sets (tuples of column indices and
        ``"C"``) and their posterior weights w_i^v.
    class_edge_posterior_ : ndarray (n,)
        P(C ∈ Pa_i).
    edge_posterior_ : ndarray (n, n)
        ``[i, j]`` = P(X_j -> X_i).
    structure_ : networkx.DiGraph
        The averaged TAN, edges weighted by their posterior (class node ``class_node_``).
    class_prior_, labels_, responsibilities_, cluster_profiles_, cluster_sizes_
    log_likelihood_, loglik_traces_, n_iter_, converged_
    collapsed_ : bool
        The selected start is collapsed (p(c | x) does not depend on x).
    collapsed_starts_, n_starts_, best_start_, start_logliks_, start_collapsed_
    n_features_in_, arities_
    """

    _uses_order = True
    _name = "EMA-TAN"

    def _make_engine(self, Xe, starts, arities, order):
        return _TanEngine(self, Xe, starts, arities, order,
                          _tan_class_priors(self, order, True), average=True, pairs=True)


class EMA(_TanFamilyClusterer):
    """EMA: model averaging over the 2^n selective naive Bayes models (each feature has parent
    set ∅ or {C}) for clustering (Santafé et al. 2006). Parameters and attributes as
    :class:`EMATAN` (``order`` is not used; ``class_parent="always"`` gives naive-Bayes EM with
    eq. 6 updates)."""

    _name = "EMA"

    def _make_engine(self, Xe, starts, arities, order):
        return _TanEngine(self, Xe, starts, arities, order,
                          _tan_class_priors(self, order, False), average=True, pairs=False)


class EMTAN(_TanFamilyClusterer):
    """EM-TAN: structural EM learning one TAN each iteration (Friedman et al. 1997 inside EM):
    after every E step, the maximum-weight spanning tree of I(X_i; X_j | C) from the expected
    frequencies, rooted at the first column, C a parent of every feature, CPTs by eq. 6.
    Parameters and attributes as :class:`EMATAN` (``order``, ``structure_prior`` and
    ``class_parent`` are not used); ``tree_parent_[i]`` is the feature parent of column i
    (-1 for the root)."""

    _name = "EM-TAN"

    def _make_engine(self, Xe, starts, arities, order):
        n = len(arities)
        lp = (np.full(n, -np.inf), np.zeros(n), np.full((n, n), -np.inf),
              np.full((n, n), -np.inf))
        return _TanEngine(self, Xe, starts, arities, order, lp, average=False, pairs=True,
                          learn_tree=True)

    def _set_model_attributes(self, engine, params, gamma, Xe):
        super()._set_model_attributes(engine, params, gamma, Xe)
        parent = np.full(self.n_features_in_, -1)
        for i, sets in enumerate(self.parent_sets_):
            for s in sets:
                if len(s) == 2:
                    parent[i] = s[1]
        self.tree_parent_ = parent


class _BnetParams:
    __slots__ = ("theta_c", "log_tab")

    def __init__(self, theta_c: np.ndarray, log_tab: np.ndarray) -> None:
        self.theta_c = theta_c
        self.log_tab = log_tab


class _BnetEngine:
    """EM-BNET: parameter EM for the complete network C -> X_i, X_j -> X_i (j < i in π);
    CPT rows stored for the parent configurations present in the (completed) training rows,
    unseen configurations predict 1 / r_i."""

    def __init__(self, est: _BaseClusterer, Xe: np.ndarray, starts: np.ndarray,
                 arities: np.ndarray, order: np.ndarray) -> None:
        self.arities = np.asarray(arities, dtype=np.int64)
        self.k = est.n_clusters
        self.alpha = float(est.alpha)
        n = len(arities)
        self.keys: list[np.ndarray] = []
        self.ids = self._ids(Xe, fit=True)
        counts = np.array([int(self.ids[:, i].max()) + 1 for i in range(n)], dtype=np.int64)
        self.n_configs = counts
        self.tbase = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(counts * self.k * self.arities, out=self.tbase[1:])
        if est.scoring == "bdeu":
            q = self.k * np.concatenate([[1.0], np.cumprod(self.arities[:-1].astype(float))])
            self.alphas = self.alpha / (self.arities * q)
            self.alpha_c = self.alpha / self.k
        else:
            self.alphas = np.full(n, self.alpha)
            self.alpha_c = self.alpha
        self.Xe = Xe
        self._new_ids: dict[int, np.ndarray] = {}

    def _ids(self, X: np.ndarray, fit: bool) -> np.ndarray:
        M, n = X.shape
        ids = np.zeros((M, n), dtype=np.int64)
        for i in range(1, n):
            prev = ids[:, i - 1]
            key = prev * self.arities[i - 1] + X[:, i - 1]
            if fit:
                uniq, inv = np.unique(key, return_inverse=True)
                self.keys.append(uniq)
                ids[:, i] = inv
            else:
                uniq = self.keys[i - 1]
                pos = np.clip(np.searchsorted(uniq, key), 0, max(len(uniq) - 1, 0))
                found = (prev >= 0) & (uniq[pos] == key)
                ids[:, i] = np.where(found, pos, -1)
        return ids

    def m_step(self, gamma: np.ndarray) -> _BnetParams:
        cnt, nc = bnet_counts(self.Xe, self.ids, gamma, self.tbase, self.arities,
                              int(self.tbase[-1]))
        theta_c = (self.alpha_c + nc) / (self.k * self.alpha_c + nc.sum())
        return _BnetParams(theta_c, bnet_m_step(cnt, self.tbase, self.arities, self.alphas,
                                                self.k))

    def e_step(self, p: _BnetParams, Xe: np.ndarray, starts: np.ndarray,
               new_data: bool = False) -> tuple:
        ids = self._ids(Xe, fit=False) if new_data else self.ids
        gamma = np.empty((Xe.shape[0], self.k))
        row_ll = np.empty(starts.shape[0] - 1)
        ll = bnet_e_step(Xe, ids, starts, self.tbase, self.arities, np.log(p.theta_c),
                         p.log_tab, gamma, row_ll)
        return gamma, ll, row_ll

    def delta(self, a: _BnetParams, b: _BnetParams) -> float:
        return max(max_abs_diff(a.theta_c, b.theta_c),
                   max_abs_diff(np.exp(a.log_tab), np.exp(b.log_tab)))

    def objective(self, p: _BnetParams, ll: float) -> float:
        """LL + sum alpha log theta: the log posterior (up to a constant) of which eq. 6 is the
        MAP under Dir(alpha + 1) priors; EM never decreases it (docs/specs.md §19, oracle 9)."""
        per = np.repeat(self.alphas, np.diff(self.tbase))
        return float(ll + (per * p.log_tab).sum() + self.alpha_c * np.log(p.theta_c).sum())

    def class_prior(self, p: _BnetParams) -> np.ndarray:
        return p.theta_c

    def summary(self, p: _BnetParams) -> dict:
        return {}

    def n_params(self, p: _BnetParams) -> float:
        return float(self.k - 1 + (self.n_configs * self.k * (self.arities - 1)).sum())


class EMBNET(_BaseClusterer):
    """EM-BNET: multi-start parameter EM for the complete Bayesian network consistent with π
    (C -> every X_i, X_j -> X_i for j before i), eq. 6 estimates (paper section 4). The
    saturated network does not identify the partition; it is the paper's baseline. Parameters
    as :class:`EMATAN` (``structure_prior`` and ``class_parent`` are not used);
    ``objective_traces_`` holds LL + Σ alpha log theta per iteration (never decreasing)."""

    _uses_order = True
    _name = "EM-BNET"

    def _make_engine(self, Xe, starts, arities, order):
        return _BnetEngine(self, Xe, starts, arities, order)

    def _set_model_attributes(self, engine, params, gamma, Xe):
        super()._set_model_attributes(engine, params, gamma, Xe)
        names = self._names()
        n = len(names)
        cname = "cluster"
        while cname in names:
            cname += "_"
        self.class_node_ = cname
        g = nx.DiGraph()
        g.add_node(cname)
        g.add_nodes_from(names)
        for pos, col in enumerate(self.order_):
            g.add_edge(cname, names[col], weight=1.0)
            for prev in self.order_[:pos]:
                g.add_edge(names[prev], names[col], weight=1.0)
        self.structure_ = g
        self.class_edge_posterior_ = np.ones(n)
        edge = np.zeros((n, n))
        for pos, col in enumerate(self.order_):
            edge[col, self.order_[:pos]] = 1.0
        self.edge_posterior_ = edge
