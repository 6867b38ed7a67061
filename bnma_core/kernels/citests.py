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

import llvmlite.binding as llvm
import numpy as np
from numba import njit, types
from numba.extending import get_cython_function_address

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


# scipy's chi-square survival function (cephes ``chdtrc``, what ``scipy.special.chdtrc``
# calls) linked by symbol name, so the kernels that call it can be cached.
llvm.add_symbol("bnma_scipy_chdtrc",
                get_cython_function_address("scipy.special.cython_special", "chdtrc"))
_chdtrc = types.ExternalFunction("bnma_scipy_chdtrc", types.float64(types.float64, types.float64))


@njit(cache=True)
def _g2_p_value(cols: np.ndarray, weights: np.ndarray, x: int, y: int, z: np.ndarray,
                arities: np.ndarray, idx: np.ndarray, buf: np.ndarray) -> float:
    """p-value of the G² test of X ⊥ Y | Z (x < y) on column-major complete codes ``cols``
    (n_vars, n) with integer-valued row weights: the table, statistic and chi-square survival
    function exactly as :func:`g2_statistic` and ``scipy.special.chdtrc`` (the same cephes
    routine) compute them. The cell of every row is built column by column in ``idx`` (n,)
    int64 (vectorisable loops), and the weights are added into four interleaved tables in
    ``buf`` (at least 4 cells) then summed — exact, the counts being integers, and free of the
    store-to-load stalls of one table when consecutive rows share a cell."""
    rx = arities[x]
    ry = arities[y]
    cells = rx * ry
    n = cols.shape[1]
    cx = cols[x]
    cy = cols[y]
    for r in range(n):
        idx[r] = np.int64(cx[r]) * ry + np.int64(cy[r])
    size = cells
    for t in range(z.shape[0]):
        c = cols[z[t]]
        for r in range(n):
            idx[r] += np.int64(c[r]) * size
        size *= arities[z[t]]
    qz = size // cells
    for i in range(4 * size):
        buf[i] = 0.0
    n4 = n - n % 4
    for r in range(0, n4, 4):
        buf[idx[r]] += weights[r]
        buf[size + idx[r + 1]] += weights[r + 1]
        buf[2 * size + idx[r + 2]] += weights[r + 2]
        buf[3 * size + idx[r + 3]] += weights[r + 3]
    for r in range(n4, n):
        buf[idx[r]] += weights[r]
    counts = buf[:size]
    for i in range(size):
        counts[i] = ((buf[i] + buf[size + i]) + buf[2 * size + i]) + buf[3 * size + i]
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
    df = (rx - 1) * (ry - 1) * qz
    return _chdtrc(float(max(df, 1)), 2.0 * g2)


@njit(cache=True)
def _next_combination(idx: np.ndarray, n: int) -> bool:
    """Advance ``idx`` (k increasing indices into range(n)) to the next combination in
    lexicographic order (``itertools.combinations``); False when exhausted."""
    k = idx.shape[0]
    i = k - 1
    while i >= 0 and idx[i] == n - k + i:
        i -= 1
    if i < 0:
        return False
    idx[i] += 1
    for t in range(i + 1, k):
        idx[t] = idx[t - 1] + 1
    return True


@njit(cache=True)
def thin_pairs(cols: np.ndarray, weights: np.ndarray, arities: np.ndarray, par: np.ndarray,
               und: np.ndarray, pairs: np.ndarray, order: int, alpha: float,
               removed: np.ndarray, sepsets: np.ndarray) -> int:
    """One thinning step of RAI: for each pair (a, b) of ``pairs`` (m, 2) in turn, if still
    adjacent, G² tests of a ⊥ b | Z for Z over the ``order``-subsets of a's potential parents
    (without b), then of b's (without a) not already tested, in ``itertools.combinations``
    order; the first p-value above ``alpha`` removes the edge (later pairs see the thinned
    graph). The graph is ``par[u, v]`` (an arrowhead u -> v) and the symmetric ``und``
    (undirected edges), both (n, n) bool and updated in place; ``removed[i]`` and
    ``sepsets[i, :order]`` record pair i's removal and separating set. Returns the number of
    tests run. Data: complete codes ``cols`` (n_vars, n_rows), column-major, with row
    weights."""
    n = par.shape[0]
    n_tests = 0
    cand_a = np.empty(n, dtype=np.int64)
    cand_b = np.empty(n, dtype=np.int64)
    in_a = np.zeros(n, dtype=np.bool_)
    idx = np.empty(order, dtype=np.int64)
    z = np.empty(order, dtype=np.int64)
    cell = np.empty(cols.shape[1], dtype=np.int64)
    top = 1                     # the largest table: the pair's and ``order`` largest arities
    srt = np.sort(arities)[::-1]
    for t in range(min(order + 2, srt.shape[0])):
        top *= srt[t]
    buf = np.empty(4 * top)
    for i in range(pairs.shape[0]):
        a = pairs[i, 0]
        b = pairs[i, 1]
        if not (und[a, b] or par[b, a] or par[a, b]):
            continue
        x = min(a, b)
        y = max(a, b)
        na = 0
        nb = 0
        for u in range(n):
            in_a[u] = False
            if u != b and (par[u, a] or und[a, u]):
                cand_a[na] = u
                na += 1
                in_a[u] = True
            if u != a and (par[u, b] or und[b, u]):
                cand_b[nb] = u
                nb += 1
        found = False
        for side in range(2):
            cand = cand_a if side == 0 else cand_b
            m = na if side == 0 else nb
            if order > m:
                continue
            for t in range(order):
                idx[t] = t
            more = True
            while more:
                dup = side == 1
                for t in range(order):
                    z[t] = cand[idx[t]]
                    if not in_a[z[t]]:
                        dup = False
                if not dup:
                    n_tests += 1
                    if _g2_p_value(cols, weights, x, y, z, arities, cell, buf) > alpha:
                        found = True
                        break
                more = _next_combination(idx, m)
            if found:
                break
        if found:
            par[a, b] = False
            par[b, a] = False
            und[a, b] = False
            und[b, a] = False
            removed[i] = True
            for t in range(order):
                sepsets[i, t] = z[t]
    return n_tests
