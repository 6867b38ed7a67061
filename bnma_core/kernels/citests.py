"""The G² statistic of a conditional-independence test, counted straight from the rows (numba).

G² = 2 Σ_{x,y,z} N_xyz log(N_xyz N_z / (N_xz N_yz)) (Spirtes, Glymour & Scheines 2000, §5.4.2),
the contingency table of (X, Y, Z) counted from (distinct) rows with multiplicities. The Python
reference is :func:`bnma_core.classifiers.brai.g2_test`'s former body: ``scores.joint_counts``
plus numpy arithmetic, ~140 µs per test on 3,000 rows, nearly all call overhead — B-RAI runs
millions of tests (``experiments/sugahara.md``). Cell order: z's configuration index with the
first conditioning variable fastest (``kernels.counting.parent_strides``), then x, then y.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from .counting import parent_strides


@njit(cache=True)
def g2_statistic(rows: np.ndarray, weights: np.ndarray, x: int, y: int, z: np.ndarray,
                 arities: np.ndarray) -> float:
    """G² of X ⊥ Y | Z on ``rows`` (n, n_vars) int with row weights ``weights`` (n,) float.

    Rows with a missing value (code < 0) in X, Y or Z are skipped.
    """
    rx = arities[x]
    ry = arities[y]
    strides = parent_strides(z, arities)
    qz = 1
    for t in range(z.shape[0]):
        qz *= arities[z[t]]
    cells = rx * ry
    counts = np.zeros(qz * cells)
    for r in range(rows.shape[0]):
        vx = rows[r, x]
        vy = rows[r, y]
        if vx < 0 or vy < 0:
            continue
        j = 0
        ok = True
        for t in range(z.shape[0]):
            v = rows[r, z[t]]
            if v < 0:
                ok = False
                break
            j += v * strides[t]
        if ok:
            counts[j * cells + vx * ry + vy] += weights[r]
    nxz = np.empty(rx)
    nyz = np.empty(ry)
    g2 = 0.0
    for j in range(qz):
        base = j * cells
        nz = 0.0
        for a in range(rx):
            nxz[a] = 0.0
        for b in range(ry):
            nyz[b] = 0.0
        for a in range(rx):
            for b in range(ry):
                c = counts[base + a * ry + b]
                nxz[a] += c
                nyz[b] += c
                nz += c
        if nz <= 0.0:
            continue
        for a in range(rx):
            for b in range(ry):
                c = counts[base + a * ry + b]
                if c > 0.0:
                    g2 += c * math.log(c * nz / (nxz[a] * nyz[b]))
    return 2.0 * g2
