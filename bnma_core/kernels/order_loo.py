"""Leave-one-out class posteriors of fixed-order BMA in closed form (numba).

For a fixed order, Hwang & Zhang's eq. 9 averages every node over its parent sets Z with
weights exp S(X_i; Z) (the Dirichlet-multinomial marginal likelihood of the family, times its
structure prior) and posterior-predictive CPTs. The marginal likelihood of a family is
exchangeable in the rows, so removing one row r divides it by that row's own predictive:

    exp S_{-r}(X_i; Z) = exp S(X_i; Z) / θ̂_{-r}(x_i^r | z^r),
    θ̂_{-r}(k | j) = (N_jk - [j, k is row r's cell] + a_jk) / (N_j - [j is row r's] + a_j),

with N the counts of all training rows (Heckerman et al. 1995 eq. 8, read sequentially). The
leave-one-out term of node i for row r and class c is then

    log sum_Z w_Z θ̂_{-r}(x_i | z, c) / θ̂_{-r}(x_i^r | z^r) - log sum_Z w_Z / θ̂_{-r}(x_i^r | z^r)

(w_Z the full-data window weights of :func:`bnma_core.kernels.orders._node_windows`): the
exact eq. 9 of the order refitted without row r, over the parent sets the full-data window
keeps. Only the orders themselves (sampled on all rows) and the window's pruning see row r.
Every training row is classified from one count of each family, so the n leave-one-out
posteriors cost about one prediction of n rows (stacking weights by LOO: Yao et al. 2018).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from .orders import (
    TableArrays,
    _mask_parents,
    _node_windows,
    joint_family_fit,
    memo_counts,
    memo_store,
    window_buffers,
)


@njit(cache=True, inline="always")
def _row_config(train_t: np.ndarray, row: int, pa: np.ndarray, st: np.ndarray) -> int:
    """Parent configuration j of training row ``row`` (column of ``train_t``) given parents
    ``pa`` with strides ``st``; -1 when a parent is missing."""
    j = 0
    for kk in range(pa.shape[0]):
        y = train_t[pa[kk], row]
        if y < 0:
            return -1
        j += y * st[kk]
    return j


@njit(cache=True)
def _family_counts(train_t: np.ndarray, weights: np.ndarray, v: int, pa: np.ndarray,
                   st: np.ndarray, q: int, r: int, cnt: np.ndarray, nj: np.ndarray,
                   jrow: np.ndarray) -> None:
    """Counts N_jk (flat j * r + k, into ``cnt``) and N_j (into ``nj``) of child v given
    parents ``pa`` (strides ``st``), row counted ``weights`` times, rows missing the child or
    a parent skipped: the counts of :func:`bnma_core.kernels.orders.family_cpt` before
    smoothing. Each row's parent configuration j (-1 when a parent is missing) goes to
    ``jrow``."""
    cnt[: q * r] = 0.0
    nj[:q] = 0.0
    for row in range(train_t.shape[1]):
        j = _row_config(train_t, row, pa, st)
        jrow[row] = j
        x = train_t[v, row]
        if j >= 0 and x >= 0:
            cnt[j * r + x] += weights[row]
            nj[j] += weights[row]


@njit(cache=True)
def _scored_configs(train_t: np.ndarray, rows: np.ndarray, pa: np.ndarray, st: np.ndarray,
                    jrow: np.ndarray) -> None:
    """The parent configuration j of each row in ``rows`` (-1 when a parent is missing) into
    ``jrow`` (as :func:`_family_counts` gives every row's)."""
    for i in range(rows.shape[0]):
        jrow[rows[i]] = _row_config(train_t, rows[i], pa, st)


@njit(cache=True)
def _held_terms(held_v: np.ndarray, held_o: np.ndarray, n_c: int, v: int, pa: np.ndarray,
                st: np.ndarray, r: int, has_c: int, sc: int, a: float, class_index: int,
                cnt: np.ndarray, nj: np.ndarray, q: int, n_total: float, yc: np.ndarray,
                inv_own: np.ndarray, g: np.ndarray, h: np.ndarray) -> None:
    """The terms of one family (child v, parents ``pa``) for the held rows (columns of
    ``held_v``, scored rows ``n_c`` onward) of :func:`orders_loo_log_joint`: ``inv_own`` the
    family's weight without the row relative to W, ``g`` its per-class predictive times that
    (class-related families), ``h`` its predictive at the row's value times that (the
    others; 1 when the family counted the row)."""
    ar = a * r
    mult = -1.0  # exp(-fit / N_family), computed when a row needs it
    for i in range(n_c, inv_own.shape[0]):
        col = i - n_c
        j = 0
        counted = held_o[v, col]
        for kk in range(pa.shape[0]):
            j += held_v[pa[kk], col] * st[kk]
            counted = counted and held_o[pa[kk], col]
        x = held_v[v, col]
        if counted:  # as a complete row: one copy of its cell removed
            sub = 1.0
            inv = (nj[j] - 1.0 + ar) / (cnt[j * r + x] - 1.0 + a)
        else:
            if mult < 0.0:
                n_fam = 0.0
                for jj in range(q):
                    n_fam += nj[jj]
                mult = 1.0
                if 0.0 < n_fam < n_total:
                    mult = math.exp(-joint_family_fit(cnt, q * r, 1, r, a) / n_fam)
            sub = 0.0
            inv = mult
        inv_own[i] = inv
        if v == class_index:
            for c in range(g.shape[0]):
                g[c, i] = (cnt[j * r + c] - (sub if c == x else 0.0) + a) / (
                    nj[j] - sub + ar) * inv
        elif has_c >= 0:
            j0 = j - yc[i] * sc
            for c in range(g.shape[0]):
                if c == yc[i] and counted:
                    g[c, i] = 1.0
                else:
                    jc = j0 + c * sc
                    g[c, i] = (cnt[jc * r + x] + a) / (nj[jc] + ar) * inv
        else:
            h[i] = 1.0 if counted else inv * (cnt[j * r + x] + a) / (nj[j] + ar)


@njit(cache=True, nogil=True)
def orders_loo_log_joint(tab: TableArrays, orders: np.ndarray, train_t: np.ndarray,
                         weights: np.ndarray, rows: np.ndarray, arities: np.ndarray,
                         score_kind: int, ess: float, class_index: int, out: np.ndarray,
                         memo: dict, budget: np.ndarray, held_v: np.ndarray,
                         held_o: np.ndarray) -> None:
    """Leave-one-out log P_{-r}(c, x^r | ≺_t) of training rows r (the columns ``rows`` of
    ``train_t``: complete, class row included), order t and class c: eq. 9 of the order
    refitted without one copy of row r (module docstring). The training rows are the columns
    of ``train_t`` (-1 = missing: skipped by the families lacking it) counted ``weights``
    times. ``out`` (T, len(rows), n_classes) is overwritten.

    A family counted on fewer rows than the training rows (a value missing) is scored by the
    node-average marginal likelihood (:func:`bnma_core.kernels.orders.node_average_log_ml`),
    whose credit for the missing rows also moves a little without row r; that move is
    ignored (exact on complete training rows). Each family's counts are read from ``memo``
    when another pass over the same rows counted them, and left there
    (:func:`bnma_core.kernels.orders.memo_counts`; ``budget``: its cells still free).

    ``held_v`` (n, H) are further rows scored after ``rows`` (``out`` then has
    len(rows) + H rows): completions of training rows with missing values, ``held_o``
    (n, H) marking the values the training row had observed. A family that counted that
    row (all its members observed) loses one copy of its cell, as above; one that did not
    keeps its counts and loses the row's node-average credit, its weight times
    exp(-fit / N_family) (:func:`bnma_core.kernels.orders.node_average_log_ml`: one row fewer
    to credit). Summed over a row's completions this is eq. 9 refitted without the row,
    predicting its observed values (exact when it is the only training row with a missing
    value; tested against refits)."""
    T, n = orders.shape
    n_c = rows.shape[0]
    n_rows = n_c + held_v.shape[1]
    n_classes = arities[class_index]
    n_total = 0.0
    for u in range(weights.shape[0]):
        n_total += weights[u]
    m = tab.masks.shape[1]
    pos, W, used, sum_w, dep, idx, wv, pa, st = window_buffers(orders, m)
    max_cells = 1
    inv_own = np.empty(n_rows)
    g = np.empty((n_classes, n_rows))
    mix = np.zeros((T, n_classes, n_rows))
    common = np.zeros(T)
    norm = np.zeros((T, n_rows))
    cnt = np.zeros(max_cells)
    nj = np.zeros(max_cells)
    jrow = np.empty(train_t.shape[1], dtype=np.int64)
    yc = np.empty(n_rows, dtype=np.int64)
    for i in range(n_c):
        yc[i] = train_t[class_index, rows[i]]
    for i in range(n_c, n_rows):
        yc[i] = held_v[class_index, i - n_c]
    corr = np.zeros((T, n_rows))  # held rows: a family that did not count the row
    h = np.empty(n_rows)
    out[:, :, :] = 0.0
    prod = np.ones((T, n_rows, n_classes))
    for v in range(n):
        r = arities[v]
        _node_windows(tab, orders, pos, v, class_index, W, used, sum_w, dep, idx, wv)
        mix[:, :, :] = 0.0
        common[:] = 0.0
        norm[:, :] = 0.0
        corr[:, n_c:] = 0.0
        for k in range(m):
            if not used[k]:
                continue
            npa, q, has_c = _mask_parents(tab, v, tab.masks[v, k], arities, class_index, pa,
                                          st)
            if q * r > cnt.shape[0]:
                cnt = np.zeros(q * r)
                nj = np.zeros(q * r)
            key, got = memo_counts(memo, v, pa[:npa], arities.shape[0])
            if got.shape[0] == q * r:  # counted by an earlier pass over these rows
                cnt[: q * r] = got
                nj[:q] = 0.0
                for c in range(q * r):
                    nj[c // r] += got[c]
                _scored_configs(train_t, rows, pa[:npa], st[:npa], jrow)
            else:
                _family_counts(train_t, weights, v, pa[:npa], st[:npa], q, r, cnt, nj, jrow)
                memo_store(memo, key, cnt[: q * r], budget)
            a = 1.0 if score_kind == 0 else ess / (r * q)
            ar = a * r
            sc = st[has_c] if has_c >= 0 else 0
            per_class = v == class_index or has_c >= 0
            for i in range(n_c):
                j = jrow[rows[i]]
                x = train_t[v, rows[i]]
                inv = (nj[j] - 1.0 + ar) / (cnt[j * r + x] - 1.0 + a)  # 1 / own predictive
                inv_own[i] = inv
                if v == class_index:  # the class's own CPT: row r's parents, every class
                    for c in range(n_classes):
                        g[c, i] = (cnt[j * r + c] - (1.0 if c == x else 0.0) + a) / (
                            nj[j] - 1.0 + ar) * inv
                elif has_c >= 0:  # the class among the parents: another configuration
                    j0 = j - yc[i] * sc
                    for c in range(n_classes):
                        if c == yc[i]:
                            g[c, i] = 1.0
                        else:
                            jc = j0 + c * sc
                            g[c, i] = (cnt[jc * r + x] + a) / (nj[jc] + ar) * inv
            if n_rows > n_c:
                _held_terms(held_v, held_o, n_c, v, pa[:npa], st[:npa], r, has_c, sc, a,
                            class_index, cnt, nj, q, n_total, yc, inv_own, g, h)
            # g = θ̂_{-r}(c) / θ̂_{-r}(own); a family's weight without row r is W / θ̂_{-r}(own)
            for t in range(T):
                we = W[t, k]
                if we == 0.0:
                    continue
                for i in range(n_rows):
                    norm[t, i] += we * inv_own[i]
                if per_class:
                    for c in range(n_classes):
                        for i in range(n_rows):
                            mix[t, c, i] += we * g[c, i]
                else:  # its term at the row's own value: W / θ̂ * θ̂ = W, for every row
                    common[t] += we  # (h - 1: a held row the family did not count)
                    for i in range(n_c, n_rows):
                        corr[t, i] += we * (h[i] - 1.0)
        # the node's factor (mix + common) / norm multiplied into ``prod``, a log taken only
        # when the product leaves [1e-150, 1e150] and at the end: a division per row and
        # order instead of 1 + C logs (which were most of a pass: mushroom 2,000 rows)
        for t in range(T):
            for i in range(n_rows):
                inv = 1.0 / norm[t, i]
                com = common[t] + corr[t, i]
                for c in range(n_classes):
                    f = (mix[t, c, i] + com) * inv if dep[t] else com * inv
                    p_ = prod[t, i, c] * f
                    if not 1e-150 <= p_ <= 1e150:
                        out[t, i, c] += math.log(p_)
                        p_ = 1.0
                    prod[t, i, c] = p_
    for t in range(T):
        for i in range(n_rows):
            for c in range(n_classes):
                out[t, i, c] += math.log(prod[t, i, c])
