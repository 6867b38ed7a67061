"""Forward (ancestral) sampling of a discrete Bayesian network (numba)."""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True)
def forward_sample(order: np.ndarray, par_flat: np.ndarray, par_off: np.ndarray,
                   stride_flat: np.ndarray, cum_flat: np.ndarray, cpt_off: np.ndarray,
                   arities: np.ndarray, u: np.ndarray) -> np.ndarray:
    """Ancestral sampling by inverse CDF (Henrion 1988, probabilistic logic sampling).

    Parameters
    ----------
    order : (n_vars,) int64
        A topological order of the nodes.
    par_flat, par_off : int64
        Parents of node i are ``par_flat[par_off[i]:par_off[i + 1]]``.
    stride_flat : int64
        Mixed-radix strides of those parents (first parent fastest), same layout as ``par_flat``.
    cum_flat, cpt_off : float64, int64
        Row-wise cumulative CPT of node i, flattened (q_i * r_i values from ``cpt_off[i]``);
        entries from the last positive probability of a row onwards are set above 1 so that a
        uniform draw in [0, 1) never selects a zero-probability state.
    arities : (n_vars,) int64
    u : (n_rows, n_vars) float64
        Uniform draws in [0, 1); column i drives node i.

    Returns
    -------
    (n_rows, n_vars) int32 codes.
    """
    n_rows, n_vars = u.shape
    out = np.empty((n_rows, n_vars), dtype=np.int32)
    for row in range(n_rows):
        for t in range(n_vars):
            i = order[t]
            j = 0
            for k in range(par_off[i], par_off[i + 1]):
                j += out[row, par_flat[k]] * stride_flat[k]
            r = arities[i]
            base = cpt_off[i] + j * r
            x = u[row, i]
            s = r - 1
            for k in range(r):
                if x < cum_flat[base + k]:
                    s = k
                    break
            out[row, i] = s
    return out
