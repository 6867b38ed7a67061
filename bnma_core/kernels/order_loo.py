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
    memo_counts,
    memo_store,
    window_buffers,
)


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
    npa = pa.shape[0]
    for row in range(train_t.shape[1]):
        j = 0
        for kk in range(npa):
            y = train_t[pa[kk], row]
            if y < 0:
                j = -1
                break
            j += y * st[kk]
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
    npa = pa.shape[0]
    for i in range(rows.shape[0]):
        row = rows[i]
        j = 0
        for kk in range(npa):
            y = train_t[pa[kk], row]
            if y < 0:
                j = -1
                break
            j += y * st[kk]
        jrow[row] = j


@njit(cache=True, nogil=True)
def orders_loo_log_joint(tab: TableArrays, orders: np.ndarray, train_t: np.ndarray,
                         weights: np.ndarray, rows: np.ndarray, arities: np.ndarray,
                         score_kind: int, ess: float, class_index: int, out: np.ndarray,
                         memo: dict, budget: np.ndarray) -> None:
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
    (:func:`bnma_core.kernels.orders.memo_counts`; ``budget``: its cells still free)."""
    T, n = orders.shape
    n_rows = rows.shape[0]
    n_classes = arities[class_index]
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
    for i in range(n_rows):
        yc[i] = train_t[class_index, rows[i]]
    out[:, :, :] = 0.0
    prod = np.ones((T, n_rows, n_classes))
    for v in range(n):
        r = arities[v]
        _node_windows(tab, orders, pos, v, class_index, W, used, sum_w, dep, idx, wv)
        mix[:, :, :] = 0.0
        common[:] = 0.0
        norm[:, :] = 0.0
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
            for i in range(n_rows):
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
                    common[t] += we
        # the node's factor (mix + common) / norm multiplied into ``prod``, a log taken only
        # when the product leaves [1e-150, 1e150] and at the end: a division per row and
        # order instead of 1 + C logs (which were most of a pass: mushroom 2,000 rows)
        for t in range(T):
            for i in range(n_rows):
                inv = 1.0 / norm[t, i]
                for c in range(n_classes):
                    f = (mix[t, c, i] + common[t]) * inv if dep[t] else common[t] * inv
                    p_ = prod[t, i, c] * f
                    if not 1e-150 <= p_ <= 1e150:
                        out[t, i, c] += math.log(p_)
                        p_ = 1.0
                    prod[t, i, c] = p_
    for t in range(T):
        for i in range(n_rows):
            for c in range(n_classes):
                out[t, i, c] += math.log(prod[t, i, c])
