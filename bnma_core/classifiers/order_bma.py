"""Bayesian model averaging of Bayesian network classifiers over node orders
(Dash & Cooper 2004; Hwang & Zhang 2005).

* :class:`FixedOrderBMA` — eq. 9: exact average over every DAG consistent with one order (in-degree
  <= l), weighted by P(G) P(D | G).
* :class:`OrderMCMCBMA` — eq. 11: the average of eq. 9 over T orders sampled by order MCMC.

Both treat the class as one more node of the network. The class posterior normalises the joint
P(c, f | D) over c. Missing test values are marginalized per order: the barren ones (missing,
and no variable outside them may have them as a parent under that order) are dropped exactly,
the others are summed out by enumeration when they have at most ``max_missing_states`` joint
states, else estimated by Monte Carlo (``n_mc`` uniformly drawn completions, importance weight =
number of joint states / n_mc); :meth:`missing_value_paths` says which was used.
``predict_missing="impute"`` instead draws every missing value uniformly at random, as the
paper's experiments did (Section IV-D).

The marginal-likelihood parameter is named ``scoring`` (not ``score``) so that
scikit-learn's ``ClassifierMixin.score(X, y)`` keeps working on these estimators.
"""

from __future__ import annotations

import copy
import math
import os
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np
import pandas as pd
from scipy.special import logsumexp

from ..data import CODE_DTYPE
from ..scores import PRIORS, SCORES, class_mutual_informations
from ..structure.candidates import expand_candidates
from ..structure.orders import MOVES, STARTS, OrderMCMC, OrderMCMCResult
from ..structure.score_table import build_score_table, compress_rows, count_memo
from .base import (
    DEPRECATED,
    RANDOM_STATE,
    Check,
    DiscreteBNClassifier,
    Interval,
    Options,
    training_row_indices,
)

MISSING = ("marginalize", "impute")
"""Values of ``predict_missing``."""
COMBINE = ("joint", "posterior")
EDGE_GRAPH_MIN_WEIGHT = 1e-3
N_THREADS = min(4, os.cpu_count() or 1)
THREAD_MIN_ROWS = 5000
"""Rows per thread below which :meth:`_OrderBMABase.order_log_joints` stays on the calling
thread: a pool's start costs more CPU than a few thousand rows (an explained case's 256
coalitions and their completions: ~0.7 ms per thread started)."""
FACTOR_MAX_ROWS = 20
"""Rows with missing values above which :meth:`_OrderBMABase._marginal_log_joints` sums them
out completion by completion unless they agree wherever observed (one case's coalitions): the
completion path tabulates a node's terms over all the rows of a call at once and splits them
over threads. Measured with the CPTs cached per table (``ScoreTable.cpt_cache``; `bma10`
fitted on all rows, random incomplete rows of each set, CPU s, factors against completions):
vote 10 rows 0.0053 against 0.0122, 30 rows 0.0157 against 0.0134, 100 rows 0.082 against
0.026; mushroom 10 rows 0.0023 against 0.0027, 30 rows 0.0039 against 0.0030, 100 rows
0.0093 against 0.0039. (Before the cache the completion path recounted its CPTs at each of
its ~22 kernel calls and the limit was 100: crx's 37 rows 0.10 against 0.19.)"""

ONE_PASS_STATES = 64
"""Joint states up to which :meth:`_OrderBMABase._marginal_log_joints_by_completions` sums a
row's missing values out once for all orders, over those barren under none of them, when its
barren set differs between orders (else order by order, over each order's fewer). The row
costs its states x T in the one pass against the sum of its per-order states plus two kernel
calls per order; vote, 100 incomplete rows (34 with barren sets that differ), ``bma10``'s
orders refitted on the complete rows, CPU ms: 21.3 order by order, 18.2 with 64, 18.6 with 256,
24.8 with 4096 (the rows with 10-12 missing votes then cost 2^12 x 10 completions each)."""

FACTOR_MAX_CELLS = 2 ** 23
"""Completion sums (x classes) the node-factor kernel holds at once: 64 MB."""


def _split_at(n: int, cuts: np.ndarray) -> list[tuple[int, int]]:
    """[0, n) cut before each index of ``cuts`` (each block at least one row)."""
    edges = sorted({0, n, *(int(c) for c in cuts if 0 < c < n)})
    return list(zip(edges[:-1], edges[1:]))


def _split(lo: int, hi: int, parts: int) -> list[tuple[int, int]]:
    b = np.linspace(lo, hi, parts + 1).astype(int)
    return [(int(x), int(y)) for x, y in zip(b[:-1], b[1:]) if y > x]


def _unique_rows(mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``np.unique(mask, axis=0, return_inverse=True)`` of a bool matrix (the same rows in the
    same, lexicographic, order): up to 62 columns each row is read as one integer with the
    first column most significant, which is ~10x faster than sorting rows."""
    n, p = mask.shape
    if p > 62 or n == 0:
        pats, inv = np.unique(mask, axis=0, return_inverse=True)
        return pats, inv.ravel()
    key = mask.astype(np.int64) @ (np.int64(1) << np.arange(p - 1, -1, -1, dtype=np.int64))
    _, first, inv = np.unique(key, return_index=True, return_inverse=True)
    return mask[first], inv.ravel()


def _draw_completions(rng: np.random.Generator, starts: np.ndarray, cols: np.ndarray,
                      ars: np.ndarray, n_cols: np.ndarray, n_mc: int, draws: np.ndarray) -> None:
    """``draws[at:at + n_mc, c] = rng.integers(0, a, size=(n_mc, len(c)))`` for each spec s in
    turn (at = ``starts[s]``, c and a the first ``n_cols[s]`` of ``cols[s]`` and ``ars[s]``): by
    :func:`bnma_core.kernels.order_marginal.bounded_draws` from the generator's raw words when
    it reproduces NumPy here (checked once per process), else by NumPy itself."""
    if not len(starts):
        return
    if _lemire_matches_numpy():
        from ..kernels.order_marginal import bounded_draws

        raw = copy.deepcopy(rng).bit_generator.random_raw(int(n_cols.sum()) * n_mc // 2 + 64)
        if bounded_draws(raw, starts, cols, ars, n_cols, n_mc, draws) >= 0:
            return
    for at, c, a, k in zip(starts, cols, ars, n_cols):
        draws[at:at + n_mc, c[:k]] = rng.integers(0, a[:k], size=(n_mc, int(k)))


_LEMIRE_OK: list[bool] = []


def _lemire_matches_numpy() -> bool:
    """Whether :func:`bnma_core.kernels.order_marginal.bounded_draws` gives this NumPy's
    ``Generator.integers`` stream (arities 1-10 and 255, several specs in a row), once per
    process."""
    if not _LEMIRE_OK:
        from ..kernels.order_marginal import bounded_draws

        ars = [np.array(a, dtype=np.int64) for a in ([10, 10, 9], [2], [3, 1, 7, 255], [5, 4])]
        n_mc = 257
        specs = [(n_mc * s, np.arange(len(a)), a) for s, a in enumerate(ars)]
        ref = np.zeros((n_mc * len(ars), 4), dtype=CODE_DTYPE)
        rng = np.random.default_rng(12345)
        for at, c, a in specs:
            ref[at:at + n_mc, c] = rng.integers(0, a, size=(n_mc, len(c)))
        got = np.zeros_like(ref)
        raw = np.random.default_rng(12345).bit_generator.random_raw(2 * n_mc * 4)
        starts = np.array([a for a, _, _ in specs], dtype=np.int64)
        cols = np.zeros((len(specs), 4), dtype=np.int64)
        arr = np.ones((len(specs), 4), dtype=np.int64)
        for s, (_, c, a) in enumerate(specs):
            cols[s, :len(c)] = c
            arr[s, :len(c)] = a
        ok = bounded_draws(raw, starts, cols, arr, np.array([len(a) for a in ars]), n_mc,
                           got) >= 0
        _LEMIRE_OK.append(bool(ok and (got == ref).all()))
    return _LEMIRE_OK[0]


def _is_order(value: Any) -> bool:
    return not isinstance(value, str) and len(value) > 0


_ORDER = Check(_is_order, "a sequence of variable names or indices")
_COMMON_CONSTRAINTS = {
    "max_parents": [Interval("int", 0, None)],
    "structure_prior": [Options(*PRIORS)],
    "scoring": [Options(*SCORES)],
    "ess": [Interval("real", 0, None, "neither")],
    "predict_missing": [Options(*MISSING)],
    "max_missing_states": [Interval("int", 1, None)],
    "n_mc": [Interval("int", 1, None)],
    "prune_eps": [Interval("real", 0, None)],
    "random_state": [RANDOM_STATE],
    "candidates": [Options("auto"), None, Interval("int", 1, None),
                   Check(lambda v: np.asarray(v).ndim == 2, "an (n, K) array of candidates")],
}
_RENAMED = {"prior": "structure_prior", "missing": "predict_missing"}


class _OrderBMABase(DiscreteBNClassifier):
    """Shared machinery: score table, class posteriors from a list of orders, edge posteriors."""

    _renamed_parameters = _RENAMED

    # --- setup -------------------------------------------------------------------------------
    def _setup(self, X: np.ndarray, y: np.ndarray, scoring: str | None = None,
               ess: float | None = None) -> None:
        """Score table of the training rows; ``scoring`` / ``ess`` override the parameters
        (the Dirichlet prior chosen by :class:`OrderMCMCBMA`'s ``dirichlet_grid``)."""
        self.scoring_ = self.scoring if scoring is None else scoring
        self.ess_ = float(self.ess if ess is None else ess)
        p = X.shape[1]
        self.class_index_ = p
        feats, cname = self._variable_names()
        self.variable_names_ = feats + [cname]
        codes = np.column_stack([X, y]).astype(CODE_DTYPE)
        self.variable_arities_ = np.append(self.arities_, len(self.classes_)).astype(np.int64)
        self.table_ = build_score_table(codes, self.variable_arities_, self.max_parents,
                                        self.scoring_, self._param("structure_prior"), self.ess_,
                                        candidates=self.candidates, prune_eps=self.prune_eps)
        self._fit_rows = codes  # kept for candidate expansion only, dropped after setup

    def _resolve_order(self, order: Sequence[Any]) -> np.ndarray:
        n = len(self.variable_names_)
        idx = []
        for v in order:
            if isinstance(v, (int, np.integer)):
                idx.append(int(v))
            elif str(v) in self.variable_names_:
                idx.append(self.variable_names_.index(str(v)))
            else:
                raise ValueError(f"Unknown variable {v!r} in the order; variables are "
                                 + ", ".join(self.variable_names_))
        if sorted(idx) != list(range(n)):
            raise ValueError(f"An order must list each of the {n} variables (class included) "
                             "exactly once.")
        return np.asarray(idx, dtype=np.int64)

    # --- classification ------------------------------------------------------------------
    def _expand_missing(self, X: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Complete test rows: (rows (k, p), group = original row, log weight); a missing value
        is drawn uniformly (``predict_missing="impute"``; marginalizing goes through
        :meth:`_marginal_log_joints`)."""
        miss = X < 0
        if not miss.any():
            return X, np.arange(len(X)), np.zeros(len(X))
        rng = np.random.default_rng(self.random_state)
        Xi = X.copy()
        r, c = np.nonzero(miss)
        Xi[r, c] = rng.integers(0, self.arities_[c])
        return Xi, np.arange(len(X)), np.zeros(len(X))

    def _barren(self, miss: np.ndarray, orders: np.ndarray, can: np.ndarray | None = None
                ) -> np.ndarray:
        """Barren features of each row under each order, (T, n_rows, p) bool (``can``: the
        table's :meth:`ScoreTable.possible_parents` of ``orders`` when the caller has them).

        Under one order eq. 9 is P(c, x | D, ≺) = prod_i phi_i(x_i | x_pred(i)), each phi_i a
        mixture of posterior-predictive CPTs that sums to one over x_i. A missing feature is
        barren when every variable that may have it as a parent (in a parent set of nonzero
        weight, :meth:`ScoreTable.possible_parents`) is itself a barren feature; summing the
        barren features out, last in the order first, multiplies by one, so their terms are
        dropped exactly (Shachter 1986; Koller & Friedman 2009 §9.3). The class is never
        barren. Decided from the last variable of the order backwards, as a variable's possible
        children all come after it."""
        from ..kernels.order_marginal import barren_features

        return barren_features(np.ascontiguousarray(miss, dtype=bool),
                               np.ascontiguousarray(orders, dtype=np.int64),
                               self.table_.possible_parents(orders) if can is None else can,
                               int(self.class_index_))

    def _completions(self, X: np.ndarray, sum_out: np.ndarray, rng: np.random.Generator,
                     states: int | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Rows with the cells of ``sum_out`` filled by every combination of their values
        (at most ``max_missing_states`` of them; the last summed-out column varying fastest),
        else by ``n_mc`` uniform draws (``states``: at most ``states`` of them, else
        ``states`` draws): (rows, group = index into X, log weight). The
        enumerated rows come first, all at once, then the drawn ones pattern by pattern
        (patterns in :func:`_unique_rows` order, members in row order: the generator's
        sequence :meth:`_monte_carlo_plan` reproduces); each row's completions keep their
        order."""
        ar_all = np.asarray(self.arities_, dtype=np.int64)
        card = np.where(sum_out, ar_all[None, :], 1)
        n_states = np.prod(card.astype(float), axis=1)
        enum = n_states <= (self.max_missing_states if states is None else states)
        n_mc = int(self.n_mc if states is None else states)
        rows, groups, logw = [], [], []
        e = np.flatnonzero(enum)
        if len(e):
            count = np.prod(card[e], axis=1)
            rep = np.repeat(e, count)
            j = np.arange(len(rep)) - np.repeat(np.cumsum(count) - count, count)
            # stride of each summed-out column: the product of the arities after it
            stride = np.cumprod(card[e][:, ::-1], axis=1)[:, ::-1] // card[e]
            block = X[rep]
            for c in np.flatnonzero(sum_out[e].any(axis=0)):
                at = np.flatnonzero(np.repeat(sum_out[e, c], count))
                block[at, c] = (j[at] // np.repeat(stride[:, c], count)[at]) % ar_all[c]
            rows.append(block)
            groups.append(rep)
            logw.append(np.zeros(len(rep)))
        if not enum.all():
            d = np.flatnonzero(~enum)
            pats, inv = _unique_rows(sum_out[d])
            for g, pat in enumerate(pats):
                cols = np.nonzero(pat)[0]
                ar = ar_all[cols]
                n_st = float(np.prod(ar.astype(float)))
                for r in d[inv == g]:  # each row its own draws, in row order
                    fills = rng.integers(0, ar, size=(n_mc, len(cols)))
                    block = np.repeat(X[r][None, :], len(fills), axis=0)
                    block[:, cols] = fills
                    rows.append(block)
                    groups.append(np.full(len(fills), r))
                    logw.append(np.full(len(fills), math.log(n_st / len(fills))))
        return np.concatenate(rows), np.concatenate(groups), np.concatenate(logw)

    def missing_value_paths(self, X: Any, codes: bool = False,
                            orders: np.ndarray | None = None) -> np.ndarray:
        """How each row's missing values are handled under each order, (T, n_rows) str:
        ``"complete"`` (none missing), ``"barren"`` (all missing features barren, dropped
        exactly), ``"exact"`` (the non-barren ones enumerated, at most ``max_missing_states``
        joint states), ``"monte_carlo"`` (more: ``n_mc`` uniform completions) or ``"impute"``
        (``predict_missing="impute"``). See :meth:`_barren` and DESIGN §4."""
        Xc = np.asarray(X, dtype=CODE_DTYPE) if codes else self._prepare_predict(X)
        orders = np.asarray(self._orders_ if orders is None else orders)
        miss = Xc < 0
        out = np.full((len(orders), len(Xc)), "complete", dtype=object)
        rows = miss.any(axis=1)
        if not rows.any():
            return out
        if self._param("predict_missing") == "impute":
            out[:, rows] = "impute"
            return out
        keep = miss[rows][None] & ~self._barren(miss[rows], orders)
        states = np.prod(np.where(keep, self.arities_[None, None, :], 1).astype(float), axis=2)
        out[:, rows] = np.where(~keep.any(axis=2), "barren",
                                np.where(states <= self.max_missing_states, "exact",
                                         "monte_carlo"))
        return out

    def _marginal_log_joints(self, X: np.ndarray, orders: np.ndarray, batch: int
                             ) -> np.ndarray:
        """:meth:`order_log_joints` with ``predict_missing="marginalize"`` and some value
        missing: the numbers of :meth:`_marginal_log_joints_by_completions` (the same barren
        sets, the same enumerated or Monte Carlo completions, drawn from the same generator
        in the same sequence), computed by node factors
        (:func:`bnma_core.kernels.order_marginal.marginal_log_joints`): each node's term is
        tabulated over the missing values it reads instead of evaluated at every completion,
        and shared by the rows when they agree wherever observed (one case's coalitions).
        Equal to the completion-by-completion sums to 1e-9 (tested). More than
        :data:`FACTOR_MAX_ROWS` rows with missing values that do not agree (a data set's
        prediction) go the completion path, which is cheaper there."""
        from ..kernels.order_marginal import marginal_log_joints

        miss = X < 0
        part = miss.any(axis=1)
        rows = np.nonzero(part)[0]
        Xm = X[rows]
        obs = Xm >= 0
        hi = np.where(obs, Xm, -1).max(axis=0)
        lo = np.where(obs, Xm, np.iinfo(np.int32).max).min(axis=0)
        memo = bool(((hi == lo) | ~obs.any(axis=0)).all())
        if not memo and len(rows) > FACTOR_MAX_ROWS:
            return self._marginal_log_joints_by_completions(X, orders, batch)
        T, k = len(orders), len(self.classes_)
        out = np.full((T, len(X), k), -np.inf)
        if (~part).any():
            out[:, ~part] = self._log_joints_rows(X[~part], orders, batch)
        barren = self._barren(miss[rows], orders)
        summed = miss[rows][None] & ~barren
        p = X.shape[1]
        n = p + 1
        pad = np.zeros((T, len(rows), 1), dtype=bool)
        summed_n = np.ascontiguousarray(np.concatenate([summed, pad], axis=2))
        barren_n = np.ascontiguousarray(np.concatenate([barren, pad], axis=2))
        mc_start, logw, draws = self._monte_carlo_plan(summed, barren, n)
        rows_t = np.ascontiguousarray(
            np.column_stack([Xm, np.zeros(len(rows), dtype=CODE_DTYPE)]).T.astype(CODE_DTYPE))
        tab = self.table_
        res = np.empty((T, len(rows), k))
        # the kernel keeps each node's table and terms at the draws for every (order, row):
        # rows in blocks of at most FACTOR_MAX_CELLS completion sums (a block's rows share
        # their tables); without memo a pair's tables and terms may reach its completions'
        # count for each node, so blocks n times smaller (with memo they are shared: 0.4-0.6
        # of the completion sums on WBC's coalitions)
        n_c = np.where(mc_start >= 0, float(self.n_mc),
                       np.prod(np.where(summed, self.arities_.astype(float), 1.0), axis=2))
        cells = np.cumsum(n_c.sum(axis=0) * k * (1 if memo else n))
        cuts = np.searchsorted(cells, np.arange(1, int(cells[-1] // FACTOR_MAX_CELLS) + 1)
                               * FACTOR_MAX_CELLS)
        args = (tab.window_arrays(), np.ascontiguousarray(orders, dtype=np.int64), tab.data_t,
                tab.weights, tab.cpt_cache(orders), tab.arities, tab.score_kind, float(tab.ess),
                self.class_index_)
        for a, b in _split_at(len(rows), cuts):
            part_res = np.empty((T, b - a, k))
            marginal_log_joints(*args, np.ascontiguousarray(rows_t[:, a:b]),
                                np.ascontiguousarray(summed_n[:, a:b]),
                                np.ascontiguousarray(barren_n[:, a:b]),
                                np.ascontiguousarray(mc_start[:, a:b]), draws, int(self.n_mc),
                                np.ascontiguousarray(logw[:, a:b]), memo,
                                int(self.max_missing_states), part_res)
            res[:, a:b] = part_res
        out[:, rows] = res
        return out

    def _monte_carlo_plan(self, summed: np.ndarray, barren: np.ndarray, n: int
                          ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The Monte Carlo completions of :meth:`_marginal_log_joints_by_completions`, drawn
        from the same generator in the same sequence (rows whose barren set is the same under
        every order first, one set of draws for all orders; then order by order; within each,
        by :meth:`_completions`' pattern order): (T, rows) first draw row (-1 = enumerated),
        (T, rows) log importance weight, (n_draws, n) drawn rows (int32)."""
        T, R, _ = summed.shape
        mc_start = np.full((T, R), -1, dtype=np.int64)
        logw = np.zeros((T, R))
        n_states = np.prod(np.where(summed, self.arities_.astype(float), 1.0), axis=2)
        over = n_states > self.max_missing_states
        if not over.any():  # every sum enumerated: nothing drawn
            return mc_start, logw, np.zeros((0, n), dtype=CODE_DTYPE)
        same = (barren == barren[:1]).all(axis=(0, 2))
        groups = []  # (orders, rows) in the order _marginal_log_joints_by_completions draws
        if same.any():
            groups.append((slice(None), np.nonzero(same & over[0])[0]))
        for t in range(T) if not same.all() else ():
            groups.append((t, np.nonzero(~same & over[t])[0]))
        n_mc = int(self.n_mc)
        p = summed.shape[2]
        where, masks = [], []  # (order or all, row) and its summed-out values, as drawn
        for ts, sel in groups:
            if not len(sel):
                continue
            sum_out = summed[0 if isinstance(ts, slice) else ts, sel]
            if p <= 62:  # _unique_rows' pattern order, members in row order: a stable sort
                key = sum_out.astype(np.int64) @ (np.int64(1) << np.arange(p - 1, -1, -1))
                seq = np.argsort(key, kind="stable")
            else:
                _, inv = _unique_rows(sum_out)
                seq = np.argsort(inv, kind="stable")
            where += [(ts, int(r)) for r in sel[seq]]
            masks.append(sum_out[seq])
        M = np.concatenate(masks)
        n_cols = M.sum(axis=1)
        width = max(int(n_cols.max()), 1)
        cols = np.argsort(~M, axis=1, kind="stable")[:, :width]
        present = np.arange(width)[None, :] < n_cols[:, None]
        ars = np.where(present, self.arities_[cols], 1).astype(np.int64)
        lws = np.log(np.prod(ars.astype(float), axis=1) / n_mc)
        starts = n_mc * np.arange(len(M), dtype=np.int64)
        for s_, (ts, r) in enumerate(where):
            mc_start[ts, r] = starts[s_]
            logw[ts, r] = lws[s_]
        draws = np.zeros((n_mc * len(M), n), dtype=CODE_DTYPE)
        _draw_completions(np.random.default_rng(self.random_state), starts,
                          np.ascontiguousarray(cols, dtype=np.int64), ars, n_cols.astype(np.int64),
                          n_mc, draws)
        return mc_start, logw, draws

    def _marginal_log_joints_by_completions(self, X: np.ndarray, orders: np.ndarray,
                                            batch: int) -> np.ndarray:
        """:meth:`order_log_joints` with ``predict_missing="marginalize"`` and some value
        missing, completion by completion (the reference of :meth:`_marginal_log_joints`).
        Per order: the barren features' terms are left out (:meth:`_barren`); the
        other missing features K are summed over their completions (:meth:`_completions`),
        which only the terms of K and of the variables that may have a parent in K depend on,
        so each completion carries those terms and the row's other terms are computed once:
        log P(c, x_obs) = log sum_K prod_{affected} phi_i + sum_{others} log phi_i (eq. 9).

        Rows whose barren set is the same under every order, or whose values missing and
        barren under no order have at most :data:`ONE_PASS_STATES` joint states (they are
        summed out exactly either way), are completed once and computed for all orders in one
        pass (over the values barren under no order; the variables a completion carries: those
        affected under any order); the others order by order. Only rows with the same barren
        set everywhere can be Monte Carlo in the one pass, so the draws are those of
        :meth:`_monte_carlo_plan`."""
        T, k = len(orders), len(self.classes_)
        out = np.full((T, len(X), k), -np.inf)
        miss = X < 0
        part = miss.any(axis=1)
        if (~part).any():
            out[:, ~part] = self._log_joints_rows(X[~part], orders, batch)
        rows = np.nonzero(part)[0]
        can = self.table_.possible_parents(orders)
        barren = self._barren(miss[rows], orders, can)
        can = can.astype(np.int64)
        rng = np.random.default_rng(self.random_state)
        everywhere = barren.all(axis=0)
        states = np.prod(np.where(miss[rows] & ~everywhere, self.arities_[None, :], 1
                                  ).astype(float), axis=1)
        same = ((barren == barren[:1]).all(axis=(0, 2))
                | (states <= min(ONE_PASS_STATES, self.max_missing_states)))
        if same.any():
            r = rows[same]
            out[:, r] = self._summed_out(X[r], everywhere[same], can.max(axis=0), orders,
                                         batch, rng)
        for t in range(T) if not same.all() else ():
            r = rows[~same]
            out[t, r] = self._summed_out(X[r], barren[t, ~same], can[t], orders[t:t + 1],
                                         batch, rng)[0]
        return out

    def _summed_out(self, Xm: np.ndarray, barren: np.ndarray, can: np.ndarray,
                    orders: np.ndarray, batch: int, rng: np.random.Generator,
                    states: int | None = None) -> np.ndarray:
        """log P(c, x_obs | D, ≺_t) of rows ``Xm`` for ``orders`` under all of which
        ``barren`` (rows, p) are barren and ``can`` (n, n) covers the possible parents:
        (T, rows, n_classes) (:meth:`_marginal_log_joints`; ``states``: that of
        :meth:`_completions`)."""
        n_rows, k = len(Xm), len(self.classes_)
        miss = Xm < 0
        no_class = np.zeros((n_rows, 1), dtype=bool)
        sum_out = miss & ~barren
        K = np.hstack([sum_out, no_class])
        B = np.hstack([barren, no_class])
        affected = (K | ((K.astype(np.int64) @ can) > 0)) & ~B
        Xc, groups, logw = self._completions(Xm, sum_out, rng, states)
        lj = self._log_joints_rows(Xc, orders, batch, skip=B[groups] | ~affected[groups])
        lj = lj + logw[None, :, None]
        # log-sum-exp of each row's completions
        srt = np.argsort(groups, kind="stable")
        g = groups[srt]
        starts = np.flatnonzero(np.r_[True, g[1:] != g[:-1]])
        lj = lj[:, srt]
        mx = np.maximum.reduceat(lj, starts, axis=1)
        mx = np.where(np.isfinite(mx), mx, 0.0)
        tot = np.add.reduceat(np.exp(lj - np.repeat(mx, np.diff(np.r_[starts, len(g)]),
                                                    axis=1)), starts, axis=1)
        out = np.full((len(orders), n_rows, k), -np.inf)
        out[:, g[starts]] = np.log(tot) + mx
        # the terms no completion changes, once per row
        return out + self._log_joints_rows(Xm, orders, batch, skip=B | affected)

    def order_log_joints(self, X: np.ndarray, orders: np.ndarray | None = None,
                         batch: int = 200_000) -> np.ndarray:
        """log P(c, x | D, ≺_t) for each order t, test row and class (eq. 9), missing values
        handled as set by ``predict_missing`` (marginalized: barren features dropped exactly,
        the others enumerated or, beyond ``max_missing_states`` joint states, Monte Carlo;
        :meth:`missing_value_paths`). ``X`` are feature codes. Returns (T, n_rows, n_classes).

        The rows go to the kernel in at most ``batch`` rows per call (and one part per thread);
        the CPTs are counted once per table (``ScoreTable.cpt_cache``), so many calls cost
        little more than one. The kernel's own memory is O(rows), so a large batch is
        safe."""
        orders = self._orders_ if orders is None else orders
        X = np.asarray(X, dtype=CODE_DTYPE)
        if (X < 0).any() and self._param("predict_missing") == "marginalize":
            return self._marginal_log_joints(X, np.asarray(orders, dtype=np.int64), batch)
        Xc, groups, logw = self._expand_missing(X)
        # each distinct (completed) test row is classified once
        uniq, _, inverse = compress_rows(Xc, return_inverse=True)
        if len(uniq) < len(Xc):
            lj = self._log_joints_rows(uniq, np.asarray(orders), batch)[:, inverse]
        else:
            lj = self._log_joints_rows(Xc, np.asarray(orders), batch)
        n_rows, k = len(X), len(self.classes_)
        out = np.full((len(lj), n_rows, k), -np.inf)
        lj = lj + logw[None, :, None]
        for t in range(len(lj)):
            np.logaddexp.at(out[t], groups, lj[t])  # sum completions into rows
        return out

    def _log_joints_rows(self, Xc: np.ndarray, orders: np.ndarray, batch: int,
                         skip: np.ndarray | None = None) -> np.ndarray:
        """log P(c, x | D, ≺_t) of complete feature rows ``Xc``: (T, len(Xc), n_classes);
        with ``skip`` (len(Xc), p + 1) bool, the marked variables' terms are left out
        (:meth:`ScoreTable.order_log_joints`)."""
        tab = self.table_
        orders = np.ascontiguousarray(np.asarray(orders, dtype=np.int64))
        n_parts = max(min(N_THREADS, len(Xc) // THREAD_MIN_ROWS), -(-len(Xc) // batch), 1)
        chunks = _split(0, len(Xc), n_parts)

        def one(chunk: tuple[int, int]) -> np.ndarray:
            a, b = chunk
            test_t = np.ascontiguousarray(
                np.column_stack([Xc[a:b], np.zeros(b - a, dtype=CODE_DTYPE)]).T)
            # CPTs counted from the table's distinct training rows and their multiplicities
            return tab.order_log_joints(
                orders, None, test_t, self.class_index_,
                skip=None if skip is None else np.ascontiguousarray(skip[a:b].T))

        if len(chunks) > 1:
            with ThreadPoolExecutor(max_workers=N_THREADS) as ex:
                parts = list(ex.map(one, chunks))
        else:
            parts = [one(c) for c in chunks]
        if not parts:
            return np.zeros((len(orders), 0, len(self.classes_)))
        return np.concatenate(parts, axis=1)

    def refit_fixed_orders(self, X: np.ndarray, y: np.ndarray, prune_eps: float | None = None
                           ) -> _OrderBMABase:
        """A copy of this fitted model refitted on other rows with its kept orders fixed:
        for each order the structure weights exp S(X_i; Z) of eq. 9 and the
        posterior-predictive CPTs (N_ijk + a_ijk) / (N_ij + a_ij) counted on (``X``, ``y``),
        over the parent sets the orders' sums read on the training data
        (:func:`bnma_core.structure.score_table.rescored_for_orders`; with ``prune_eps=0``
        every set of the order). With the training rows minus a fold this is the fold's
        leave-out predictive of the fixed orders in closed form — Dirichlet-multinomial
        counts without the fold, no order MCMC and no full score table per fold; only the
        orders' own dependence on the fold is ignored (used by
        :class:`bnma_core.classifiers.stacking.PredictiveStacking` with
        ``inner_fit="downdate"``, measured in docs/accuracy.md §13). Missing values (-1)
        count as in ``fit``.

        Parameters
        ----------
        X : (n, p) int array
            Feature codes of this model (-1 = missing).
        y : (n,) int array
            Class indices into ``classes_``.
        prune_eps : float, optional
            A wider pruning tolerance than the model's (``prune_eps``) for these sums: fewer
            parent sets to count, every node term low by at most log(1 + prune_eps).
        """
        from ..structure.score_table import rescored_for_orders

        X = np.asarray(X, dtype=CODE_DTYPE)
        y = np.asarray(y)
        if X.ndim != 2 or X.shape[1] != self.class_index_ or len(y) != len(X) or len(X) == 0:
            raise ValueError(f"refit_fixed_orders needs a non-empty (n, {self.class_index_}) "
                             "array of feature codes and n class indices.")
        if ((y < 0) | (y >= len(self.classes_))).any():
            raise ValueError(f"Class indices must be 0..{len(self.classes_) - 1}.")
        new = copy.copy(self)
        new.table_ = rescored_for_orders(self.table_, self._orders_,
                                         np.column_stack([X, y]).astype(CODE_DTYPE), prune_eps)
        return new

    def estimate_fit_bytes(self, n_rows: int, arities: Any, n_classes: int) -> int:
        """Memory the fitted model keeps: the score table a fit on ``n_rows`` rows of features
        with ``arities`` and ``n_classes`` classes would build (the regime ``candidates``
        chooses), per node and parent set its mask, score, exponential and band (32 bytes),
        and in the candidate regime the 2^K node-term table and the candidate bits; priced
        from the shape before any fit (the build's own working memory is guarded by the
        table's ``max_bytes``). 0 when the fit would refuse the data itself (it says why)."""
        from ..data import DataError
        from ..structure.score_table import DEFAULT_MAX_BYTES, choose_regime, n_parent_sets

        ar = np.append(np.asarray(arities, dtype=np.int64), int(n_classes))
        n = len(ar)
        l_eff = min(int(self.max_parents), n - 1)
        try:
            k, _ = choose_regime(self.candidates, n, int(n_rows), ar, l_eff, DEFAULT_MAX_BYTES)
        except DataError:
            return 0
        except ValueError:  # the table alone is over the library's own limit
            return DEFAULT_MAX_BYTES + 1
        if k is None:
            return n * n_parent_sets(n - 1, l_eff) * 32
        return n * (n_parent_sets(k, l_eff) * 32 + 2 ** k * 8 + n * 4)

    def loo_log_proba(self, X: np.ndarray, y: np.ndarray, prune_eps: float | None = None,
                      rows: Any = None, held_states: int | None = None) -> np.ndarray:
        """Leave-one-out class log posteriors of the training rows with the kept orders fixed.

        Row i's entry is log P(c | x_i) of every class under this model's orders refitted
        without row i: eq. 9 with every family's weight exp S(X_i; Z) and CPT counted without
        the row, in closed form from the full-data counts
        (:func:`bnma_core.kernels.order_loo.orders_loo_log_joint`: the family's marginal
        likelihood divided by the row's own predictive probability). Equal to
        :meth:`refit_fixed_orders` on the rows minus row i, predicting row i, over the parent
        sets the model keeps (tested to 1e-9 with ``prune_eps=0``); only the sampled orders
        themselves saw row i. A row with a missing value has its own leave-one-out too when
        ``held_states`` allows every such row's completions: each completion through the
        same closed form, the families that did not count the row keeping their counts and
        losing its node-average credit, summed (tested against refits without the row);
        otherwise those rows are held out together: predicted by :meth:`refit_fixed_orders`
        on the complete rows (their values marginalised as in ``predict``, or once for all
        orders: ``held_states``). The complete rows' families that some row lacks keep their
        node-average credit for the missing rows from all rows (the kernel's note). The n
        posteriors cost about one prediction of n rows; they give
        the stacking weights of :class:`bnma_core.classifiers.stacking.PredictiveStacking`
        (``inner_fit="loo"``; Yao et al. 2018 weight by leave-one-out predictive densities).

        Parameters
        ----------
        X : (n, p) int array
            Feature codes of the rows this model was fitted on (-1 = missing).
        y : (n,) int array
            Their class indices into ``classes_``.
        prune_eps : float, optional
            A wider pruning tolerance than the model's (``prune_eps``): the parent sets each
            order's window sums, fewer to count, every node term low by at most
            log(1 + prune_eps).
        rows : array of int, optional
            The training rows (indices into ``X``) whose posteriors are wanted (default all):
            only these are predicted (the counts are all rows').
        held_states : int, optional
            When no wanted row with a missing value has more than ``held_states`` joint
            states of its missing values, each such row's leave-one-out in closed form, its
            completions summed (no refit: mushroom's 100 sampled rows, 4 states each;
            ``stack`` 0.194 -> 0.174 CPU s, its three order averages spared their refits on
            the complete rows). Otherwise the rows
            with a missing value are held out together, their values summed out once for all
            orders over the values barren under none of them: exactly up to
            ``held_states`` joint states, else by ``held_states`` uniform draws (importance
            weight states / draws; common to the orders); a row with many missing values
            then costs at most ``held_states`` completions per order instead of up to
            ``max_missing_states`` (vote: 100 held rows 18.7 -> 5.2 CPU ms, their log scores
            within 0.007 on average; docs/accuracy.md §13). Default: held out together and
            marginalised as ``predict`` does (order by order where the barren sets differ, up
            to ``max_missing_states``, else ``n_mc`` draws).

        Returns
        -------
        (len(rows), n_classes) float array
        """
        from ..kernels.order_loo import orders_loo_log_joint

        X = np.asarray(X, dtype=CODE_DTYPE)
        y = np.asarray(y)
        n_fit = int(self.table_.weights.sum())
        if (X.ndim != 2 or X.shape[1] != self.class_index_ or len(y) != len(X)
                or len(X) != n_fit):
            raise ValueError(f"loo_log_proba needs the {n_fit} training rows of this model: "
                             f"an (n, {self.class_index_}) array of feature codes and n class "
                             "indices.")
        if ((y < 0) | (y >= len(self.classes_))).any():
            raise ValueError(f"Class indices must be 0..{len(self.classes_) - 1}.")
        rows = training_row_indices(rows, len(X))
        rows = np.arange(len(X)) if rows is None else rows
        codes = np.column_stack([X, y]).astype(CODE_DTYPE)
        uniq, weights, inverse = compress_rows(codes, return_inverse=True)
        complete = (uniq >= 0).all(axis=1)
        wanted = np.zeros(len(uniq), dtype=bool)
        wanted[inverse[rows]] = True
        ev = np.flatnonzero(complete & wanted)
        held = ~(X[rows] >= 0).all(axis=1)
        hv, ho, owner = self._held_completions(codes[rows[held]], held_states)
        tab = self.table_
        arrays = tab.window_arrays()
        if prune_eps is not None and prune_eps > self.prune_eps:
            arrays = arrays._replace(log_eps_rel=math.log(prune_eps / tab.n_sets))
        orders = np.ascontiguousarray(self._orders_, dtype=np.int64)
        out = np.empty((len(orders), len(ev) + hv.shape[1], len(self.classes_)))
        orders_loo_log_joint(arrays, orders, np.ascontiguousarray(uniq.T), weights, ev,
                             tab.arities, tab.score_kind, float(tab.ess), self.class_index_,
                             out, *count_memo(uniq, weights), hv, ho)
        lp = np.zeros((len(uniq), len(self.classes_)))  # incomplete rows: filled below
        joint = self._combine(out[:, :len(ev)])
        lp[ev] = joint - np.logaddexp.reduce(joint, axis=1, keepdims=True)
        res = lp[inverse[rows]]
        if owner is not None and held.any():  # each held row's completions summed
            res[held] = self._summed_completions(out[:, len(ev):], owner, int(held.sum()))
        elif held.any():  # rows with a missing value: held out together
            res[held] = self._held_out_log_proba(X, y, rows[held], prune_eps, held_states)
        return res

    def _summed_completions(self, lj: np.ndarray, owner: np.ndarray, n: int) -> np.ndarray:
        """(n, n_classes) log P(c | x_obs) of ``n`` rows from the log joints ``lj`` (T, H, C)
        of their completions, completion h belonging to row ``owner[h]``."""
        rows = np.full((lj.shape[0], n, lj.shape[2]), -np.inf)
        np.logaddexp.at(rows, (slice(None), owner), lj)
        joint = self._combine(rows)
        return joint - np.logaddexp.reduce(joint, axis=1, keepdims=True)

    def _held_completions(self, codes: np.ndarray, limit: int | None
                          ) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
        """Every joint state of the missing values of each row of ``codes`` (features and
        class, each row with a missing value) as columns: values (n_vars, H), the observed
        mask of the row behind each (n_vars, H) and its row index (H,); no column and None
        when ``limit`` (``held_states``) is None, ``predict_missing`` does not marginalise
        or a row has more than ``limit`` states (:meth:`loo_log_proba` then holds the rows
        out together)."""
        ar = np.asarray(self.table_.arities, dtype=np.int64)
        miss = codes < 0
        pats, kind = np.unique(miss, axis=0, return_inverse=True)
        kind = kind.ravel()
        per = np.array([int(np.prod(ar[p])) for p in pats], dtype=np.int64)
        if (limit is None or self._param("predict_missing") != "marginalize"
                or per.max(initial=0) > limit):
            none = np.zeros((codes.shape[1], 0), dtype=np.int64)
            return none, none.astype(bool), None
        sizes = per[kind]
        owner = np.repeat(np.arange(len(codes)), sizes)
        vals = np.repeat(codes.astype(np.int64), sizes, axis=0)
        starts = np.cumsum(sizes) - sizes
        for p, pat in enumerate(pats):  # rows with the same missing values: one grid
            rows = np.flatnonzero(kind == p)
            grid = np.indices(ar[pat]).reshape(int(pat.sum()), -1).T
            at = (starts[rows][:, None] + np.arange(per[p])[None, :]).ravel()
            vals[np.ix_(at, np.flatnonzero(pat))] = np.tile(grid, (len(rows), 1))
        return (np.ascontiguousarray(vals.T), np.ascontiguousarray(~miss[owner].T), owner)

    def _held_out_log_proba(self, X: np.ndarray, y: np.ndarray, rows: np.ndarray,
                            prune_eps: float | None, held_states: int | None) -> np.ndarray:
        """(len(rows), n_classes) log P(c | x) of the training rows ``rows`` (each with a
        missing value) under the model refitted on the complete training rows
        (:meth:`loo_log_proba`)."""
        complete = (X >= 0).all(axis=1)
        if not complete.any():
            raise ValueError("Every training row has a missing value: no complete row to "
                             "predict them from.")
        rest = self.refit_fixed_orders(X[complete], y[complete], prune_eps)
        if held_states is None or self._param("predict_missing") != "marginalize":
            return rest.predict_log_proba(X[rows])
        return rest._one_pass_log_proba(X[rows], int(held_states))

    def _one_pass_log_proba(self, X: np.ndarray, states: int) -> np.ndarray:
        """log P(c | x) of rows ``X`` (codes, each with a missing value) with their missing
        values summed out once for all orders (``held_states`` of :meth:`loo_log_proba`)."""
        orders = np.asarray(self._orders_, dtype=np.int64)
        miss = X < 0
        can = self.table_.possible_parents(orders)
        everywhere = self._barren(miss, orders, can).all(axis=0)
        can = can.astype(np.int64).max(axis=0)
        joint = self._combine(self._summed_out(X, everywhere, can, orders, 200_000,
                                               np.random.default_rng(self.random_state),
                                               states))
        return joint - np.logaddexp.reduce(joint, axis=1, keepdims=True)

    def _combine(self, lj: np.ndarray, combine: str | None = None) -> np.ndarray:
        if (combine or self.combine) == "joint":
            return np.logaddexp.reduce(lj, axis=0) - math.log(len(lj))
        post = lj - np.logaddexp.reduce(lj, axis=2, keepdims=True)
        return np.logaddexp.reduce(post, axis=0) - math.log(len(lj))

    def _predict_log_proba_codes(self, X: np.ndarray) -> np.ndarray:
        return self._combine(self.order_log_joints(X))

    # --- structure summaries -------------------------------------------------------------
    def _edge_summaries(self) -> None:
        tab = self.table_
        n = len(self.variable_names_)
        c = self.class_index_
        E = np.zeros((n, n))
        mb = np.zeros(n)
        for order in self._orders_:
            e, co = tab.edge_probabilities(order, c)
            E += e
            # f in MB(C) unless: f not a parent of C, C not a parent of f, no common child x
            # (x != C, x != f); these involve different nodes' parent sets, independent given
            # the order.
            no_child = 1 - co
            no_child[c, :] = 1.0
            np.fill_diagonal(no_child, 1.0)
            mb += 1 - (1 - e[:, c]) * (1 - e[c, :]) * no_child.prod(axis=0)
        E /= len(self._orders_)
        mb /= len(self._orders_)
        names = self.variable_names_
        self.edge_posterior_ = pd.DataFrame(E, index=names, columns=names)
        self.edge_posterior_.index.name = "parent"
        self.edge_posterior_.columns.name = "child"
        import networkx as nx  # imported when a model is fitted, not with this module

        G = nx.DiGraph()
        G.add_nodes_from(names)
        G.add_weighted_edges_from((names[a], names[b], float(E[a, b]))
                                  for a, b in zip(*np.nonzero(E >= EDGE_GRAPH_MIN_WEIGHT)))
        self.edge_graph_ = G
        feats = [i for i in range(n) if i != c]
        self.markov_blanket_probability_ = pd.Series(
            mb[feats], index=[names[i] for i in feats], name="P(in Markov blanket of class)")

    def model_log_joints(self, X: Any, codes: bool = False
                         ) -> tuple[np.ndarray, np.ndarray, str]:
        """The models behind the average: one per kept order (DESIGN §15).

        Parameters
        ----------
        X : array-like or DataFrame (n_rows, n_features)
            Rows as for :meth:`predict_proba` (missing values allowed).
        codes : bool
            ``X`` is already an array of feature codes (-1 = missing).

        Returns
        -------
        log_weights : (T,) float
            log 1/T: the kept orders are draws from P(≺ | D) (Hwang & Zhang eq. 11).
        log_joints : (T, n_rows, n_classes) float
            log P(c, x_obs | D, ≺_t) by eq. 9, missing values as set by ``predict_missing``
            (:meth:`order_log_joints`).
        averaging : {"joint", "posterior"}
            ``combine``: "joint" averages the joints (each order's class posterior weighted
            by w_t P(x_obs | D, ≺_t)), "posterior" the class posteriors (weights w_t).
        """
        Xc = np.asarray(X, dtype=CODE_DTYPE) if codes else self._prepare_predict(X)
        lj = self.order_log_joints(Xc)
        return np.full(len(lj), -math.log(len(lj))), lj, self.combine


class FixedOrderBMA(_OrderBMABase):
    """BMA over every DAG consistent with one node order (Hwang & Zhang eq. 9; Dash & Cooper 2004).

    Parameters
    ----------
    order : sequence of variable names or indices, optional
        The order over all variables, class included (indices: features 0..p-1, class p). Default
        (a heuristic, not from the paper): the class first, then the features by decreasing
        mutual information with the class — so every feature may take the class as a parent.
    max_parents : int
        Maximum in-degree l (paper: 3).
    structure_prior : {"hz", "uniform"}
        Structure prior, Hwang & Zhang eq. 13 by default.
    scoring : {"k2", "bdeu"}
        Marginal likelihood; K2 (a_ijk = 1) is the paper's.
    ess : float
        BDeu equivalent sample size.
    predict_missing : {"marginalize", "impute"}
        A missing value in a row to classify: summed out (exactly, or by Monte Carlo beyond
        ``max_missing_states``), or drawn uniformly at random (the paper's experiments).
    max_missing_states, n_mc : int
        Exact marginalization up to this many joint missing states; else ``n_mc`` Monte-Carlo
        completions.
    prune_eps : float
        Parent sets whose total relative weight is below this are skipped (see
        :mod:`bnma_core.structure.score_table`); 0 = exact.
    random_state : int or None
        Only for Monte-Carlo completions / imputation.
    candidates : "auto", None, int or (n, K) array
        Parent-set regime (:func:`bnma_core.structure.score_table.build_score_table`): "auto"
        (default) = every parent set up to 64 variables (the paper's), beyond that (or when
        that table would not fit in memory) K = 16 candidate parents per node chosen by
        single-parent score gain; None = every parent set; K = K candidates per node.
    prior, missing : deprecated
        Former names of ``structure_prior`` and ``predict_missing`` (accepted with a
        FutureWarning until the next release).

    Attributes
    ----------
    order_ : list of str
    table_ : ScoreTable
    edge_posterior_, edge_graph_, markov_blanket_probability_
        Edge posteriors P(y -> x | D, ≺), their DiGraph (weight >= 1e-3) and P(f ∈ MB(class)).

    References
    ----------
    Hwang & Zhang (2005), eq. 9; Dash & Cooper (2004).
    """

    _parameter_constraints = {**_COMMON_CONSTRAINTS, "order": [None, _ORDER]}

    def __init__(self, *, order: Sequence[Any] | None = None, max_parents: int = 3,
                 structure_prior: str = "hz", scoring: str = "k2", ess: float = 1.0,
                 predict_missing: str = "marginalize", max_missing_states: int = 4096,
                 n_mc: int = 512, prune_eps: float = 1e-12, random_state: Any = None,
                 candidates: Any = "auto", prior: Any = DEPRECATED,
                 missing: Any = DEPRECATED) -> None:
        self.order = order
        self.max_parents = max_parents
        self.structure_prior = structure_prior
        self.scoring = scoring
        self.ess = ess
        self.predict_missing = predict_missing
        self.max_missing_states = max_missing_states
        self.n_mc = n_mc
        self.prune_eps = prune_eps
        self.random_state = random_state
        self.candidates = candidates
        self.prior = prior
        self.missing = missing

    combine = "joint"

    def _fit_codes(self, X: np.ndarray, y: np.ndarray) -> None:
        self._setup(X, y)
        del self._fit_rows
        if self.order is None:
            mi = class_mutual_informations(X, y, self.arities_, len(self.classes_))
            feats = np.lexsort((np.arange(len(mi)), -mi))
            order = np.concatenate([[self.class_index_], feats]).astype(np.int64)
        else:
            order = self._resolve_order(self.order)
        self._orders_ = order[None, :]
        self.order_ = [self.variable_names_[i] for i in order]
        self._edge_summaries()


class OrderMCMCBMA(_OrderBMABase):
    """BMA of Bayesian network classifiers over node orders sampled by order MCMC
    (Hwang & Zhang 2005, eq. 11): P(U | D) ≈ (1/T) sum_t P(U | D, ≺_t), each term by eq. 9.

    Parameters
    ----------
    n_iter, burn_in, n_orders : int
        Iterations, burn-in and kept orders per chain (paper: 60,000, 10,000, 30 — every
        1,667th order after burn-in).
    max_parents, structure_prior, scoring, ess
        As in :class:`FixedOrderBMA`.
    move : {"swap", "adjacent", "relocate", "mix"}
        Proposal (paper: swap two uniformly chosen positions).
    n_chains : int
        Independent chains (parallel threads); kept orders are interleaved across chains.
    predict_missing, max_missing_states, n_mc, prune_eps
        As in :class:`FixedOrderBMA`.
    random_state : int or None
    candidates : "auto", None, int or (n, K) array
        As in :class:`FixedOrderBMA`: "auto" (default) = every parent set up to 64 variables,
        else K = 16 candidate parents per node; None = every parent set; K = K candidates.
    expand_rounds : int
        Candidate regime only: rounds of BiDAG-style expansion before the run
        (:func:`bnma_core.structure.candidates.expand_candidates`): a pilot run with the same
        settings, then non-candidates that would improve a sampled best parent set replace
        candidates without edge posterior mass, and the table is rebuilt; stops early when
        nothing changes. 0 (default) = none.
    start : {"random", "given", "reversed"}; start_order : sequence, optional
        Initial order (the paper starts from a reversed original order).
    reference_order : sequence, optional
        Order (names or indices) to which Spearman correlations are computed (Fig. 6).
    combine : {"joint", "posterior"}
        "joint" averages P(c, f | D, ≺_t) as eq. 11 states; "posterior" averages the per-order
        class posteriors instead.
    dirichlet_grid : sequence of ("k2" or positive float), optional
        Dirichlet priors to choose from on the training rows: ``"k2"`` (a_ijk = 1) or a BDeu
        equivalent sample size. One chain is run per entry (same seed) and the entry with the
        largest marginal likelihood of the training data at its best sampled order,
        max_t log P(D, ≺_t) (the order score, :meth:`ScoreTable.order_log_score`), is kept
        with its orders -- a type-II maximum likelihood choice of the parameter prior
        (Silander, Kontkanen & Myllymäki 2007 on BDeu's sensitivity to it; results:
        docs/accuracy.md §6). None (default): ``scoring`` / ``ess`` as given. ``fit_stream``
        does not take a grid.
    prior, missing : deprecated
        Former names of ``structure_prior`` and ``predict_missing``.

    Attributes
    ----------
    scoring_, ess_ : the Dirichlet prior used (chosen from ``dirichlet_grid`` if given)
    dirichlet_log_ml_ : dict, only with ``dirichlet_grid``
        Entry ("k2" or the ESS) -> max_t log P(D, ≺_t) of its run.
    sampled_orders_ : ndarray (T, n) of variable indices (into ``variable_names_``)
    sampled_order_names_ : list of list of str
    orders_prior_ : (str, float)
        The Dirichlet prior (scoring, ess) under which the kept orders were sampled: this
        model's own, or another model's (:meth:`fit_at_orders`).
    trace_ : DataFrame (chain, iteration, log2_score, accepted[, spearman])
        The log score of the chain that sampled the orders (under ``orders_prior_``).
    rhat_ : float
        Rank-normalised split R-hat of the post-burn-in log score (Vehtari et al. 2021, by
        ArviZ; NaN with one chain).
    acceptance_rate_ : float
    edge_posterior_ : DataFrame (parent x child), edge_graph_ : networkx.DiGraph
    markov_blanket_probability_ : Series (per feature)

    Notes
    -----
    Order MCMC puts a uniform prior on orders, so each DAG is weighted by its number of
    consistent orders (see :mod:`bnma_core.structure.orders`).

    Examples
    --------
    A short chain with at most two parents per node (the paper: 60,000 iterations, three):

    >>> from bnma_core.classifiers.order_bma import OrderMCMCBMA
    >>> from bnma_core.data import load_dataset
    >>> from bnma_core.datasets import bundled_path
    >>> ds = load_dataset(bundled_path("wbc.csv"))
    >>> bma = OrderMCMCBMA(n_iter=1000, burn_in=200, n_orders=10, max_parents=2,
    ...                    random_state=0)
    >>> bma = bma.fit(ds.X, ds.y, arities=ds.arities[ds.feature_indices])
    >>> len(bma.sampled_orders_)
    10
    >>> bma.predict_proba(ds.X[:2]).round(2).tolist()
    [[1.0, 0.0], [0.08, 0.92]]
    """

    _parameter_constraints = {
        **_COMMON_CONSTRAINTS,
        "n_iter": [Interval("int", 1, None)],
        "burn_in": [Interval("int", 0, None)],
        "n_orders": [Interval("int", 1, None)],
        "move": [Options(*MOVES)],
        "n_chains": [Interval("int", 1, None)],
        "start": [Options(*STARTS)],
        "start_order": [None, _ORDER],
        "reference_order": [None, _ORDER],
        "combine": [Options(*COMBINE)],
        "expand_rounds": [Interval("int", 0, None)],
        "dirichlet_grid": [None, Options("k2"), Interval("real", 0, None, "neither"),
                           Check(lambda v: not isinstance(v, str) and len(v) > 0,
                                 "a non-empty sequence of 'k2' and positive numbers")],
    }

    def __init__(self, *, n_iter: int = 60000, burn_in: int = 10000, n_orders: int = 30,
                 max_parents: int = 3, structure_prior: str = "hz", scoring: str = "k2",
                 ess: float = 1.0, move: str = "swap", n_chains: int = 1,
                 predict_missing: str = "marginalize", random_state: Any = None,
                 max_missing_states: int = 4096, n_mc: int = 512,
                 prune_eps: float = 1e-12, candidates: Any = "auto",
                 start: str = "random", start_order: Sequence[Any] | None = None,
                 reference_order: Sequence[Any] | None = None, combine: str = "joint",
                 expand_rounds: int = 0, dirichlet_grid: Sequence[Any] | None = None,
                 prior: Any = DEPRECATED, missing: Any = DEPRECATED) -> None:
        self.n_iter = n_iter
        self.burn_in = burn_in
        self.n_orders = n_orders
        self.max_parents = max_parents
        self.structure_prior = structure_prior
        self.scoring = scoring
        self.ess = ess
        self.move = move
        self.n_chains = n_chains
        self.predict_missing = predict_missing
        self.random_state = random_state
        self.max_missing_states = max_missing_states
        self.n_mc = n_mc
        self.prune_eps = prune_eps
        self.candidates = candidates
        self.start = start
        self.start_order = start_order
        self.reference_order = reference_order
        self.combine = combine
        self.expand_rounds = expand_rounds
        self.dirichlet_grid = dirichlet_grid
        self.prior = prior
        self.missing = missing

    def _sampler(self, X: np.ndarray, y: np.ndarray, reference_order: Any,
                 scoring: str | None = None, ess: float | None = None) -> OrderMCMC:
        self._setup(X, y, scoring, ess)
        ref = reference_order if reference_order is not None else self.reference_order
        ref_idx = None if ref is None else self._resolve_order(ref)
        start_idx = None if self.start_order is None else self._resolve_order(self.start_order)
        self._expand(start_idx)
        del self._fit_rows
        return OrderMCMC(self.table_, self.n_iter, self.burn_in, self.n_orders, self.move,
                         self.n_chains, self.start, start_idx, ref_idx, self.random_state)

    def _expand(self, start_idx: np.ndarray | None) -> None:
        """``expand_rounds`` rounds of candidate expansion (pilot run, expand, rebuild)."""
        self.candidates_replaced_ = []
        rounds = int(self.expand_rounds)
        if rounds == 0 or self.table_.regime != "candidates":
            return
        codes = self._fit_rows
        for _ in range(rounds):
            pilot = OrderMCMC(self.table_, self.n_iter, self.burn_in, self.n_orders, self.move,
                              self.n_chains, self.start, start_idx, None,
                              self.random_state).run()
            cand, replaced = expand_candidates(self.table_, pilot.orders)
            self.candidates_replaced_.append(replaced)
            if replaced == 0:
                break
            self.table_ = build_score_table(codes, self.variable_arities_, self.max_parents,
                                            self.scoring_, self._param("structure_prior"),
                                            self.ess_, candidates=cand, prune_eps=self.prune_eps)

    def _finish(self, res: OrderMCMCResult) -> None:
        self.mcmc_result_ = res
        self._orders_ = res.orders
        self.sampled_orders_ = res.orders
        self.sampled_order_names_ = [[self.variable_names_[i] for i in o] for o in res.orders]
        self.trace_ = res.trace
        self.rhat_ = res.rhat
        self.acceptance_rate_ = res.acceptance_rate
        self.iterations_done_ = res.iterations_done
        self.mcmc_seconds_ = res.seconds
        self.orders_prior_ = (self.scoring_, float(self.ess_))
        self._edge_summaries()

    def _dirichlet_grid(self) -> list[tuple[str, float, Any]] | None:
        """``dirichlet_grid`` as (scoring, ess, label) triples (ValueError when malformed)."""
        if self.dirichlet_grid is None:
            return None
        grid = [self.dirichlet_grid] if isinstance(self.dirichlet_grid, str | int | float) \
            else list(self.dirichlet_grid)
        out = []
        for g in grid:
            if isinstance(g, str) and g.lower() == "k2":
                out.append(("k2", 1.0, "k2"))
            elif isinstance(g, int | float | np.integer | np.floating) and not isinstance(
                    g, bool) and math.isfinite(g) and g > 0:
                out.append(("bdeu", float(g), float(g)))
            else:
                raise ValueError(f"dirichlet_grid entries are 'k2' or a positive equivalent "
                                 f"sample size; got {g!r}.")
        if not out:
            raise ValueError("dirichlet_grid is empty; give None or at least one entry.")
        return out

    def _fit_codes(self, X: np.ndarray, y: np.ndarray) -> None:
        grid = self._dirichlet_grid()
        if grid is None:
            sampler = self._sampler(X, y, None)
            self._finish(sampler.run())
            return
        best, scores = None, {}
        for scoring, ess, label in grid:
            sampler = self._sampler(X, y, None, scoring, ess)
            res = sampler.run()
            orders = res.orders
            ml = max(self.table_.order_log_score(o) for o in orders)
            scores[label] = ml
            if best is None or ml > best[0]:  # ties: the earlier entry
                best = (ml, scoring, ess, res, self.table_)
        _, self.scoring_, self.ess_, res, self.table_ = best
        self.dirichlet_log_ml_ = scores
        self._finish(res)

    def fit_at_orders(self, X: Any, y: Any, source: OrderMCMCBMA, arities: Any = None
                      ) -> OrderMCMCBMA:
        """Fit on (``X``, ``y``) at the orders a fitted ``source`` kept, without a chain.

        The score table, and so every order's structure weights exp S(X_i; Z) and CPTs in
        eq. 9, are this model's (its ``scoring`` and ``ess``); only the orders averaged over
        (eq. 11) are ``source``'s: P(c, x | D) = (1/T) sum_t P(c, x | D, ≺_t) with ≺_t sampled
        under ``source``'s prior (``orders_prior_``; ``trace_`` and ``rhat_`` are that
        chain's). :class:`bnma_core.classifiers.stacking.PredictiveStacking` fits its order
        averages that differ only in the Dirichlet prior this way (one chain for the three
        priors of ``stack``; DESIGN §9).

        Parameters
        ----------
        X, y, arities
            As for :meth:`fit`; the same variables (and arities) as ``source``'s training data.
        source : OrderMCMCBMA
            A fitted model whose kept orders (``sampled_orders_``) are reused.

        Returns
        -------
        self
        """
        if not isinstance(source, OrderMCMCBMA) or not hasattr(source, "mcmc_result_"):
            raise ValueError("fit_at_orders needs a fitted OrderMCMCBMA as source.")
        if self.dirichlet_grid is not None:
            raise ValueError("fit_at_orders fits one Dirichlet prior: set dirichlet_grid=None.")
        Xc, yc = self._prepare_fit(X, y, arities)
        self._setup(Xc, yc)
        del self._fit_rows
        if not np.array_equal(self.variable_arities_, source.variable_arities_):
            raise ValueError("fit_at_orders: the source model was fitted on other variables "
                             f"(arities {source.variable_arities_.tolist()}, here "
                             f"{self.variable_arities_.tolist()}).")
        self.candidates_replaced_ = []
        self._finish(source.mcmc_result_)
        self.orders_prior_ = source.orders_prior_
        return self

    def fit_stream(self, X: Any, y: Any, every: int = 500, reference_order: Any = None,
                   arities: Any = None, should_stop: Callable[[], bool] | None = None
                   ) -> Iterator[dict]:
        """Fit while yielding progress every ``every`` iterations (one event per chain):
        ``{"chain", "iteration", "n_iter", "log2_score", "acceptance_rate", "order" (names,
        class included), "spearman" (float or None), "iter_per_s", "done"}``.

        Stopping early leaves a fitted model built from the orders kept so far (or, if stopped
        during burn-in, from each chain's current order), either by closing the generator
        (Stop after an event) or by ``should_stop``: a callable checked between kernel calls of
        about 0.1 s (:data:`bnma_core.structure.orders.CHUNK_SECONDS`), also inside a long
        ``every`` step; when it returns True the stream ends (no further event) and the model
        is built. The chain threads are joined before the model is built, so none runs after
        the generator has finished or been closed."""
        if self._dirichlet_grid() is not None:
            raise ValueError("fit_stream does not choose a Dirichlet prior; use fit, or give "
                             "dirichlet_grid=None.")
        Xc, yc = self._prepare_fit(X, y, arities)
        sampler = self._sampler(Xc, yc, reference_order)
        names = self.variable_names_
        stream = sampler.stream(every, should_stop)
        try:
            for ev in stream:
                ev["order"] = [names[i] for i in ev["order"]]
                yield ev
        finally:
            stream.close()  # joins the chain threads
            self._finish(sampler.result())

    def _subset(self, n: int) -> np.ndarray:
        T = len(self._orders_)
        if not 1 <= n <= T:
            raise ValueError(f"n must be between 1 and the {T} kept orders.")
        return np.arange(n) * (T // n)

    def predict_proba_n_orders(self, X: Any, n: int | Sequence[int]
                               ) -> np.ndarray | dict[int, np.ndarray]:
        """Class posteriors averaging only n of the kept orders, spread as in the paper: with
        T kept, orders 0, T//n, 2 T//n, ... (n = 1: the first; T = 30, n = 10: every third).
        ``n`` may be a list: returns {n: probabilities}, computing each order once."""
        lj = self.order_log_joints(self._prepare_predict(X))
        out = {int(k): self.proba_from_log_joints(lj, int(k))
               for k in ([n] if isinstance(n, (int, np.integer)) else list(n))}
        return out[int(n)] if isinstance(n, (int, np.integer)) else out

    def proba_from_log_joints(self, log_joints: np.ndarray, n: int | None = None,
                              combine: str | None = None) -> np.ndarray:
        """Class posteriors from :meth:`order_log_joints` output, over n of the kept orders
        (spread as in :meth:`predict_proba_n_orders`; None = all) combined by ``combine``
        (default: the estimator's)."""
        lj = log_joints if n is None else log_joints[self._subset(int(n))]
        lp = self._combine(lj, combine)
        return np.exp(lp - logsumexp(lp, axis=1, keepdims=True))
