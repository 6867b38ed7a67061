"""Information-measure kernels (numba): all pairwise conditional mutual informations."""

from __future__ import annotations

import math

import numpy as np
from numba import njit


@njit(cache=True)
def pairwise_cmi(X: np.ndarray, y: np.ndarray, arities: np.ndarray, n_classes: int,
                 weights: np.ndarray, smoothing: float) -> np.ndarray:
    """I(X_i; X_j | C) in nats for every feature pair, from (weighted) counts over the rows where
    X_i, X_j and C are all observed, plus ``smoothing`` pseudo-counts per cell:
    sum_{x,y,c} P(x,y,c) log [P(x,y,c) P(c) / (P(x,c) P(y,c))]."""
    n, p = X.shape
    out = np.zeros((p, p))
    rmax = 1
    for i in range(p):
        if arities[i] > rmax:
            rmax = arities[i]
    cnt = np.zeros((rmax, rmax, n_classes))
    for i in range(p):
        ri = arities[i]
        for j in range(i + 1, p):
            rj = arities[j]
            cnt[:ri, :rj, :] = smoothing
            for r in range(n):
                a = X[r, i]
                b = X[r, j]
                c = y[r]
                if a < 0 or b < 0 or c < 0:
                    continue
                cnt[a, b, c] += weights[r]
            total = 0.0
            for a in range(ri):
                for b in range(rj):
                    for c in range(n_classes):
                        total += cnt[a, b, c]
            if total <= 0.0:
                continue
            val = 0.0
            for c in range(n_classes):
                pc = 0.0
                for a in range(ri):
                    for b in range(rj):
                        pc += cnt[a, b, c]
                if pc <= 0.0:
                    continue
                for a in range(ri):
                    pac = 0.0
                    for b in range(rj):
                        pac += cnt[a, b, c]
                    if pac <= 0.0:
                        continue
                    for b in range(rj):
                        nabc = cnt[a, b, c]
                        if nabc <= 0.0:
                            continue
                        pbc = 0.0
                        for a2 in range(ri):
                            pbc += cnt[a2, b, c]
                        val += nabc * math.log(nabc * pc / (pac * pbc))
            out[i, j] = val / total
            out[j, i] = out[i, j]
    return out


@njit(cache=True, inline="always")
def local_information_value(n_joint: np.ndarray, log_ratio: np.ndarray, t: int) -> float:
    """sum_c (n_joint_c / sum_c n_joint_c) log_ratio_c in nats over the classes (columns) of
    row ``t`` of the (N, m) arrays, one value (or value pair) per row, with
    log_ratio_c = log(num_c / den_c): the local measures LMI and CLMI of paper 004 eq. (14)
    (DESIGN §5), num / den the count products of
    :func:`bnma_core.scores.local_mutual_information_counts` resp.
    :func:`bnma_core.scores.conditional_local_mutual_information_counts`, which evaluate
    every value through :func:`local_information`. The logarithms come in precomputed
    (numpy's vectorised log, an order of magnitude faster than one call per value). Classes
    with n_joint_c = 0 contribute 0; a value with no weight at all gives 0."""
    m = n_joint.shape[1]
    tot = 0.0
    for c in range(m):
        tot += n_joint[t, c]
    if not tot > 0.0:
        return 0.0
    v = 0.0
    for c in range(m):
        if n_joint[t, c] > 0.0:
            v += n_joint[t, c] * log_ratio[t, c]
    return v / tot


@njit(cache=True)
def local_information(n_joint: np.ndarray, log_ratio: np.ndarray) -> np.ndarray:
    """:func:`local_information_value` of every row of the (N, m) arrays: (N,) nats."""
    out = np.empty(n_joint.shape[0])
    for t in range(n_joint.shape[0]):
        out[t] = local_information_value(n_joint, log_ratio, t)
    return out
