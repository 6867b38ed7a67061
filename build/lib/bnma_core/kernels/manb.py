"""Naive-Bayes sufficient statistics and log joints (numba), for the MA naive classifier.

Tables are laid out ``(n_features, r_max, n_classes)`` so the class index is contiguous;
states ``k >= r_i`` of a feature with fewer than ``r_max`` states stay zero / unused.
"""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True)
def naive_counts(X: np.ndarray, y: np.ndarray, n_classes: int, r_max: int) -> np.ndarray:
    """N_ijk with j = class: counts[i, k, c] = #rows with F_i = k and C = c.

    Rows with ``y < 0`` and cells with ``X < 0`` (missing) are skipped.
    """
    n, p = X.shape
    counts = np.zeros((p, r_max, n_classes), dtype=np.float64)
    for row in range(n):
        c = y[row]
        if c < 0:
            continue
        xr = X[row]
        for i in range(p):
            k = xr[i]
            if k >= 0:
                counts[i, k, c] += 1.0
    return counts


@njit(cache=True)
def naive_counts_soft(X: np.ndarray, resp: np.ndarray, r_max: int) -> np.ndarray:
    """Expected N_ijk when row ``l`` belongs to class c with probability ``resp[l, c]``
    (E step for unlabelled rows); missing cells (``X < 0``) are skipped."""
    n, p = X.shape
    n_classes = resp.shape[1]
    counts = np.zeros((p, r_max, n_classes), dtype=np.float64)
    for row in range(n):
        xr = X[row]
        w = resp[row]
        for i in range(p):
            k = xr[i]
            if k >= 0:
                for c in range(n_classes):
                    counts[i, k, c] += w[c]
    return counts


@njit(cache=True)
def naive_log_joint(X: np.ndarray, log_prior: np.ndarray, log_theta: np.ndarray) -> np.ndarray:
    """log P(c, f) = log P(c) + sum_i log theta[i, f_i, c] per row (eq. 4 of Dash & Cooper 2002);
    missing features (``X < 0``) are marginalized, i.e. skipped."""
    n, p = X.shape
    n_classes = log_prior.shape[0]
    out = np.empty((n, n_classes), dtype=np.float64)
    for row in range(n):
        xr = X[row]
        for c in range(n_classes):
            out[row, c] = log_prior[c]
        for i in range(p):
            k = xr[i]
            if k >= 0:
                for c in range(n_classes):
                    out[row, c] += log_theta[i, k, c]
    return out
