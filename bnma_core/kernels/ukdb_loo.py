"""UKDB's per-row work in numba: every row's UKDB_L structure without the row, every row's
UKDB_P structure at its own values, and every row's family log scores from the count tables
(DESIGN §5; :meth:`bnma_core.classifiers.ukdb.UKDB.loo_log_proba` and UKDB_P's batch
prediction).

One loop over the rows with a (p, p) scratch matrix replaces the (n, p, p) and
(n, p (p - 1) / 2, m) arrays and the numpy passes over them: the local measures come from the
formula's one home (:func:`bnma_core.kernels.information.local_information_value`), the CMI
downdates from :func:`bnma_core.kernels.ukdb_counts.cmi_downdate_row`, the construction from
:func:`bnma_core.kernels.ukdb_counts.structure_row`.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from .information import local_information_value
from .ukdb_counts import cmi_downdate_row, cmi_steps, structure_row


@njit(cache=True)
def domain_loo_structures(data: np.ndarray, cmi: np.ndarray, flat: np.ndarray,
                          offsets: np.ndarray, rows: np.ndarray, cols: np.ndarray,
                          totals: np.ndarray, arities: np.ndarray, smoothing: float,
                          log_base: float, k: int, min_dependence: float, use_min: bool,
                          tie_scale: float):
    """UKDB_L's structure on the training rows without row r, for every row r of ``data``
    (codes and class, last column): the CMI matrix downdated for the row
    (:func:`bnma_core.kernels.ukdb_counts.cmi_downdate_row`, from the full-data ``cmi`` in
    units of ``log_base`` and the tables of
    :func:`bnma_core.kernels.ukdb_counts.pair_class_counts`) and the construction over all
    attributes (:func:`bnma_core.kernels.ukdb_counts.structure_row`).

    Returns
    -------
    order : (n, p) int64 array
    n_obs : (n,) int64 array (p: every attribute is ranked)
    parents : (n, p, k) int64 array, padded with -1.
    """
    n, p = data.shape[0], data.shape[1] - 1
    steps = cmi_steps(flat, offsets, rows, cols, totals, arities, smoothing)
    order = np.empty((n, p), dtype=np.int64)
    n_obs = np.empty(n, dtype=np.int64)
    parents = np.empty((n, p, k), dtype=np.int64)
    obs = np.ones(p, dtype=np.bool_)
    dep = np.empty((p, p))
    rank = np.empty(p, dtype=np.int64)
    rounded = np.empty((p, p))
    for r in range(n):
        cmi_downdate_row(data, r, cmi, steps, offsets, arities, log_base, dep)
        n_obs[r] = structure_row(dep, obs, k, min_dependence, use_min, tie_scale, order[r],
                                 rank, rounded, parents[r])
    return order, n_obs, parents


@njit(cache=True)
def personalized_structures(X: np.ndarray, W: np.ndarray, drop: np.ndarray,
                            flat: np.ndarray, offsets: np.ndarray, rows: np.ndarray,
                            cols: np.ndarray, totals: np.ndarray, arities: np.ndarray,
                            smoothing: float, log_base: float, k: int,
                            min_dependence: float, use_min: bool, tie_scale: float):
    """UKDB_P's structure of every row of ``X`` (codes, -1 = missing): CLMI I(x_i; x_j | C)
    of every observed pair at the row's values (paper 004 eq. 14) from the smoothed tables of
    :func:`bnma_core.kernels.ukdb_counts.pair_class_counts` plus the pseudo instance
    "x labelled c" with weight ``W[r, c]``, minus ``drop[r, c]`` (the row's own count, for
    leave-one-out), in units of ``log_base``, then the construction over the observed
    attributes (:func:`bnma_core.kernels.ukdb_counts.structure_row`).

    The counts are those of :func:`bnma_core.kernels.ukdb_counts.pair_counts_at` and the
    measure that of :func:`bnma_core.scores.conditional_local_mutual_information_counts`
    (both through :func:`bnma_core.kernels.information.local_information_value`), the same
    floating-point operations in the same order, so the structures equal those built from
    :meth:`bnma_core.classifiers.ukdb.UKDB.local_information` (tested).

    Returns
    -------
    order : (n, p) int64 array
        Observed attributes in ranking order first.
    n_obs : (n,) int64 array
    parents : (n, p, k) int64 array, padded with -1.
    """
    n, p = X.shape
    m = W.shape[1]
    order = np.empty((n, p), dtype=np.int64)
    n_obs = np.empty(n, dtype=np.int64)
    parents = np.empty((n, p, k), dtype=np.int64)
    dep = np.zeros((p, p))
    rank = np.empty(p, dtype=np.int64)
    rounded = np.empty((p, p))
    n_xy = np.empty(m)
    num = np.empty(m)
    den = np.empty(m)
    obs = np.empty(p, dtype=np.bool_)
    for r in range(n):
        for i in range(p):
            obs[i] = X[r, i] >= 0
        for i in range(p):
            a = X[r, i]
            dep[i, i] = 0.0
            for j in range(i + 1, p):
                b = X[r, j]
                if a < 0 or b < 0:
                    dep[i, j] = 0.0
                    dep[j, i] = 0.0
                    continue
                ri = arities[i]
                rj = arities[j]
                base = offsets[i, j] + (a * rj + b) * m
                s_x = rj * smoothing
                s_y = ri * smoothing
                s_c = (ri * rj) * smoothing
                for c in range(m):
                    w = W[r, c]
                    d = drop[r, c]
                    n_xy[c] = (flat[base + c] - d) + smoothing + w
                    n_xc = (rows[i, j, a, c] - d) + s_x + w
                    n_yc = (cols[i, j, b, c] - d) + s_y + w
                    n_c = (totals[i, j, c] - d) + s_c + w
                    num[c] = n_xy[c] * n_c
                    den[c] = n_xc * n_yc
                v = local_information_value(n_xy, num, den) / log_base
                dep[i, j] = v
                dep[j, i] = v
        n_obs[r] = structure_row(dep, obs, k, min_dependence, use_min, tie_scale, order[r],
                                 rank, rounded, parents[r])
    return order, n_obs, parents


@njit(cache=True)
def family_log_scores(xs: np.ndarray, fam_row: np.ndarray, fam_child: np.ndarray,
                      fam_table: np.ndarray, fam_drop: np.ndarray, fam_pxp: np.ndarray,
                      members: np.ndarray, flat: np.ndarray, offs: np.ndarray,
                      strides: np.ndarray, drop: np.ndarray, extra: np.ndarray,
                      alpha: float, pad_alpha: np.ndarray, arities: np.ndarray,
                      n_rows: int) -> np.ndarray:
    """Sum over each row's families of log CPT entries at the row's values, every class:
    log P(c | x_p) + sum_i log P(x_i | c, pi_i), each CPT row the posterior-predictive
    (N + a) / (N_row + sum a) (the formula of :func:`bnma_core.scores.posterior_cpt`, which
    cannot be called from a kernel; tested equal to 1e-12) of counts read from the tables
    n(x_S, c).

    Parameters
    ----------
    xs : (n, p) int64 array
        Codes (missing read as 0: their families are not listed).
    fam_row, fam_child, fam_table : (F,) int64 arrays
        Each family's row, child attribute (-1: the class family of X_p) and table.
    fam_drop : (F,) float array
        1 where the family's table counted the row (``drop`` is removed), else 0.
    fam_pxp : (F,) bool array
        Class families that also add log P(x_p) (smoothed from the same table with
        pseudo-count ``alpha``: the row's X_p completed where it missed a member).
    members, strides : (U, w) int64 arrays
        Each table's sorted members (padded with p) and configuration strides.
    flat : float array, offs : (U + 1,) int64 array
        The (q_S, m) tables one after another.
    drop, extra : (n, m) float arrays
        Counts removed from (the row's own) and added to (pseudo instances) every CPT row at
        the row's values.
    alpha : float
        Pseudo-count of P(c | x_p); ``pad_alpha`` (p, r_max) those of each attribute's
        states.

    Returns
    -------
    (n_rows, m) float array
    """
    m = drop.shape[1]
    p = xs.shape[1]
    w = members.shape[1]
    out = np.zeros((n_rows, m))
    num = np.empty(m)
    for f in range(fam_row.shape[0]):
        r = fam_row[f]
        u = fam_table[f]
        off = offs[u]
        cell = 0
        where_i = -1
        for t in range(w):
            v = members[u, t]
            if v >= p:
                break
            cell += xs[r, v] * strides[u, t]
            if v == fam_child[f]:
                where_i = t
        dd = fam_drop[f]
        i = fam_child[f]
        if i < 0:
            den = 0.0
            for c in range(m):
                num[c] = ((flat[off + cell * m + c] - drop[r, c] * dd) + extra[r, c]) + alpha
                den += num[c]
            for c in range(m):
                out[r, c] += math.log(num[c] / den)
            if fam_pxp[f]:
                q = (offs[u + 1] - off) // m
                total = 0.0
                n_j = 0.0
                for j in range(q):
                    s = 0.0
                    for c in range(m):
                        s += flat[off + j * m + c]
                    total += s + alpha
                    if j == cell:
                        n_j = s + alpha
                lp = math.log(n_j / total)
                for c in range(m):
                    out[r, c] += lp
            continue
        st = strides[u, where_i]
        x = xs[r, i]
        base = cell - x * st
        for c in range(m):
            den = 0.0
            mine = 0.0
            for s in range(arities[i]):
                v = flat[off + (base + s * st) * m + c]
                if s == x:
                    v = (v - drop[r, c] * dd) + extra[r, c]
                v += pad_alpha[i, s]
                den += v
                if s == x:
                    mine = v
            out[r, c] += math.log(mine / den)
    return out
