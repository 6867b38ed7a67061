"""The G² statistic of a conditional-independence test, counted straight from the rows (numba).

G² = 2 Σ_{x,y,z} N_xyz log(N_xyz N_z / (N_xz N_yz)) (Spirtes, Glymour & Scheines 2000, §5.4.2),
the contingency table of (X, Y, Z) counted from (distinct) rows with multiplicities. The Python
reference is :func:`bnma_core.scores.g2_test`'s former body: ``scores.joint_counts``
plus numpy arithmetic, ~140 µs per test on 3,000 rows, nearly all call overhead — B-RAI runs
millions of tests (``experiments/sugahara.md``). Cell order: z's configuration index with the
first conditioning variable fastest (``kernels.counting.parent_strides``), then x, then y.

:func:`thin_pairs` runs one whole thinning step of RAI / B-RAI (every pair, every condition set,
sequential removals) on a bootstrap sample's column-major codes with integer weights, with the
same tables, statistics and p-values (scipy's cephes ``chdtrc``, linked by symbol) as
:func:`g2_statistic` plus ``scipy.special.chdtrc`` — the tables hold integer-valued sums, which
floating-point addition computes exactly in any order.

A table of more than :data:`DENSE_TABLE_CELLS` cells (a high-order test on many-state
variables: ten 10-state variables make 10^10 cells) is not allocated: the rows are sorted by
their cell (:func:`_half_g2_sorted`) and only the non-empty cells are summed, in the dense
loop's order, so the statistic and the p-value are the same to the last bit.
"""

from __future__ import annotations

import math

import llvmlite.binding as llvm
import numpy as np
from numba import njit, types
from numba.extending import get_cython_function_address

from .counting import parent_strides

#: Largest contingency table (cells) a test counts in a dense array (8 MB; the thinning kernel
#: keeps four); larger tables are counted from the sorted rows (:func:`_half_g2_sorted`).
DENSE_TABLE_CELLS = 1 << 20


@njit(cache=True)
def _half_g2(counts: np.ndarray, rx: int, ry: int, qz: int) -> float:
    """G² / 2 = sum N_xyz log(N_xyz N_z / (N_xz N_yz)) of a contingency table laid out as
    ``counts[j * rx * ry + a * ry + b]`` (Z configuration j, X = a, Y = b); empty Z slices add
    nothing. The one home of the arithmetic for :func:`g2_statistic` and the thinning kernel."""
    cells = rx * ry
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
    return g2


@njit(cache=True)
def _half_g2_sorted(codes: np.ndarray, weights: np.ndarray, rx: int, ry: int) -> float:
    """:func:`_half_g2` without the dense table: ``codes`` (2 + k, n) holds each row's Y, X,
    then Z_1..Z_k codes (complete rows). The rows are put in the order of their dense cell
    index (Z_k most significant, ..., Z_1, X, Y least: a stable sort per variable, least
    significant first), so each cell sums its rows' weights in row order as the dense count
    does, and the non-empty cells and Z slices are visited in the dense loop's order: the
    same floating-point operations (an empty cell only adds 0), so the result equals
    :func:`_half_g2` on the dense table to the last bit, for any weights."""
    m = codes.shape[0]
    n = codes.shape[1]
    perm = np.arange(n)
    key = np.empty(n, dtype=np.int64)
    for t in range(m):
        for i in range(n):
            key[i] = codes[t, perm[i]]
        perm = perm[np.argsort(key, kind="mergesort")]
    nxz = np.empty(rx)
    nyz = np.empty(ry)
    ca = np.empty(n, dtype=np.int64)           # the non-empty cells of one Z slice
    cb = np.empty(n, dtype=np.int64)
    cc = np.empty(n)
    g2 = 0.0
    i = 0
    while i < n:
        for a in range(rx):
            nxz[a] = 0.0
        for b in range(ry):
            nyz[b] = 0.0
        nz = 0.0
        nc = 0
        t = i
        while True:                             # the cells of the Z configuration of row i
            r = perm[t]
            a = codes[1, r]
            b = codes[0, r]
            c = 0.0
            while t < n and codes[1, perm[t]] == a and codes[0, perm[t]] == b:
                same = True
                for v in range(2, m):
                    if codes[v, perm[t]] != codes[v, perm[i]]:
                        same = False
                        break
                if not same:
                    break
                c += weights[perm[t]]
                t += 1
            ca[nc] = a
            cb[nc] = b
            cc[nc] = c
            nc += 1
            nxz[a] += c
            nyz[b] += c
            nz += c
            if t >= n:
                break
            same = True
            for v in range(2, m):
                if codes[v, perm[t]] != codes[v, perm[i]]:
                    same = False
                    break
            if not same:
                break
        if nz > 0.0:
            for u in range(nc):
                c = cc[u]
                if c > 0.0:
                    g2 += c * math.log(c * nz / (nxz[ca[u]] * nyz[cb[u]]))
        i = t
    return g2


@njit(cache=True)
def _table_cells(arities: np.ndarray, x: int, y: int, z: np.ndarray) -> float:
    """Cells of the (X, Y, Z) contingency table, as a float (no integer overflow)."""
    size = float(arities[x]) * float(arities[y])
    for t in range(z.shape[0]):
        size *= float(arities[z[t]])
    return size


@njit(cache=True)
def _dof(rx: int, ry: int, arities: np.ndarray, z: np.ndarray) -> float:
    """(r_x - 1)(r_y - 1) prod r_z, at least 1: in int64 as the dense path computes it, in
    floating point when it would overflow."""
    qf = 1.0
    for t in range(z.shape[0]):
        qf *= float(arities[z[t]])
    if qf * float(rx) * float(ry) < 4e18:
        qz = 1
        for t in range(z.shape[0]):
            qz *= arities[z[t]]
        return float(max((rx - 1) * (ry - 1) * qz, 1))
    return max(float(rx - 1) * float(ry - 1) * qf, 1.0)


@njit(cache=True)
def g2_statistic(rows: np.ndarray, weights: np.ndarray, x: int, y: int, z: np.ndarray,
                 arities: np.ndarray) -> float:
    """G² of X ⊥ Y | Z on ``rows`` (n, n_vars) int with row weights ``weights`` (n,) float.

    Rows with a missing value (code < 0) in X, Y or Z are skipped. A table above
    :data:`DENSE_TABLE_CELLS` cells is counted from the sorted rows (the same value).
    """
    rx = arities[x]
    ry = arities[y]
    if _table_cells(arities, x, y, z) > DENSE_TABLE_CELLS:
        k = z.shape[0]
        keep = np.empty(rows.shape[0], dtype=np.int64)
        m = 0
        for r in range(rows.shape[0]):
            ok = rows[r, x] >= 0 and rows[r, y] >= 0
            for t in range(k):
                if rows[r, z[t]] < 0:
                    ok = False
            if ok:
                keep[m] = r
                m += 1
        codes = np.empty((2 + k, m), dtype=np.int64)
        w = np.empty(m)
        for i in range(m):
            r = keep[i]
            codes[0, i] = rows[r, y]
            codes[1, i] = rows[r, x]
            for t in range(k):
                codes[2 + t, i] = rows[r, z[t]]
            w[i] = weights[r]
        return 2.0 * _half_g2_sorted(codes, w, rx, ry)
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
    g2 = _half_g2(counts, rx, ry, qz)
    return 2.0 * g2


# scipy's chi-square survival function (cephes ``chdtrc``, what ``scipy.special.chdtrc``
# calls) linked by symbol name, so the kernels that call it can be cached.
llvm.add_symbol("bnma_scipy_chdtrc",
                get_cython_function_address("scipy.special.cython_special", "chdtrc"))
_chdtrc = types.ExternalFunction("bnma_scipy_chdtrc", types.float64(types.float64, types.float64))


@njit(cache=True)
def _g2_p_value(cols: np.ndarray, weights: np.ndarray, x: int, y: int, z: np.ndarray,
                arities: np.ndarray, idx: np.ndarray, buf: np.ndarray, cmi: float) -> float:
    """p-value of the G² test of X ⊥ Y | Z (x < y) on column-major complete codes ``cols``
    (n_vars, n) with integer-valued row weights: the table, statistic and chi-square survival
    function exactly as :func:`g2_statistic` and ``scipy.special.chdtrc`` (the same cephes
    routine) compute them. The cell of every row is built column by column in ``idx`` (n,)
    int64 (vectorisable loops), and the weights are added into four interleaved tables in
    ``buf`` (at least 4 cells) then summed — exact, the counts being integers, and free of the
    store-to-load stalls of one table when consecutive rows share a cell.

    With ``cmi >= 0`` the decision is the authors' conditional-mutual-information threshold
    (causality-lab's ``CondIndepCMI``) instead: 1.0 when the empirical CMI (nats,
    G² / 2N) is at most ``cmi``, else 0.0 — so that ``> significance`` decides both tests."""
    rx = arities[x]
    ry = arities[y]
    cells = rx * ry
    n = cols.shape[1]
    cx = cols[x]
    cy = cols[y]
    if _table_cells(arities, x, y, z) > DENSE_TABLE_CELLS:
        k = z.shape[0]
        codes = np.empty((2 + k, n), dtype=np.int64)
        for r in range(n):
            codes[0, r] = cy[r]
            codes[1, r] = cx[r]
            for t in range(k):
                codes[2 + t, r] = cols[z[t], r]
        g2 = _half_g2_sorted(codes, weights, rx, ry)
        if cmi >= 0.0:
            total = 0.0
            for r in range(n):
                total += weights[r]
            return 1.0 if g2 <= cmi * total else 0.0
        return _chdtrc(_dof(rx, ry, arities, z), 2.0 * g2)
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
    g2 = _half_g2(counts, rx, ry, qz)
    if cmi >= 0.0:
        total = 0.0
        for i in range(size):
            total += counts[i]
        return 1.0 if g2 <= cmi * total else 0.0
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
def _n_choose(m: int, k: int) -> int:
    if k > m:
        return 0
    r = 1
    for t in range(k):
        r = r * (m - t) // (t + 1)
    return r


@njit(cache=True)
def _n_tests_bound(na: int, nb: int, cand_a: np.ndarray, cand_b: np.ndarray, order: int,
                   in_a: np.ndarray) -> int:
    """Tests of one pair if no test accepts: a's ``order``-subsets plus b's not within a's."""
    common = 0
    for t in range(nb):
        if in_a[cand_b[t]]:
            common += 1
    return _n_choose(na, order) + _n_choose(nb, order) - _n_choose(common, order)


@njit(cache=True)
def _project(cols: np.ndarray, weights: np.ndarray, arities: np.ndarray, vs: np.ndarray,
             size: int, cell: np.ndarray, tbl: np.ndarray, pcols: np.ndarray,
             pw: np.ndarray) -> int:
    """The rows projected on the variables ``vs`` (``size`` = the product of their arities):
    the non-empty cells, their codes in ``pcols[:len(vs), :m]`` and summed weights in
    ``pw[:m]``; returns m."""
    n = cols.shape[1]
    k = vs.shape[0]
    last = cols[vs[k - 1]]
    for r in range(n):
        cell[r] = np.int64(last[r])
    for t in range(k - 2, -1, -1):
        c = cols[vs[t]]
        ar = arities[vs[t]]
        for r in range(n):
            cell[r] = cell[r] * ar + np.int64(c[r])
    for j in range(size):
        tbl[j] = 0.0
    for r in range(n):
        tbl[cell[r]] += weights[r]
    m = 0
    for j in range(size):
        if tbl[j] > 0.0:
            v = j
            for t in range(k):
                ar = arities[vs[t]]
                pcols[t, m] = v % ar
                v //= ar
            pw[m] = tbl[j]
            m += 1
    return m


@njit(cache=True)
def thin_pairs(cols: np.ndarray, weights: np.ndarray, arities: np.ndarray, par: np.ndarray,
               und: np.ndarray, pairs: np.ndarray, order: int, significance: float,
               removed: np.ndarray, sepsets: np.ndarray, cmi: float = -1.0) -> int:
    """One thinning step of RAI: for each pair (a, b) of ``pairs`` (m, 2) in turn, if still
    adjacent, G² tests of a ⊥ b | Z for Z over the ``order``-subsets of a's potential parents
    (without b), then of b's (without a) not already tested, in ``itertools.combinations``
    order; the first p-value above ``significance`` removes the edge (later pairs see the
    thinned graph). The graph is ``par[u, v]`` (an arrowhead u -> v) and the symmetric ``und``
    (undirected edges), both (n, n) bool and updated in place; ``removed[i]`` and
    ``sepsets[i, :order]`` record pair i's removal and separating set. Returns the number of
    tests run. Data: complete codes ``cols`` (n_vars, n_rows), column-major, with row
    weights. ``cmi >= 0``: the CMI-threshold test instead of G² (see :func:`_g2_p_value`)."""
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
        top = min(top * srt[t], DENSE_TABLE_CELLS)     # larger tables: counted sorted
    buf = np.empty(4 * top)
    cap = cols.shape[1] // 2        # projection only when it at least halves the rows
    tbl = np.empty(cap + 1)
    pcols = np.empty((n, cap + 1), dtype=cols.dtype)
    pw = np.empty(cap + 1)
    pv = np.empty(n, dtype=np.int64)
    loc = np.zeros(n, dtype=np.int64)
    par_ar = np.empty(n, dtype=np.int64)
    zl = np.empty(order, dtype=np.int64)
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
        # Several tests to come and few cells over the pair and all its candidates: count
        # once over those variables, then test on the non-empty cells as weighted rows (the
        # same integer counts, so the same tables and statistics).
        tc, tw, tx, ty, tz, tar = cols, weights, x, y, z, arities
        projected = False
        if order > 0 and _n_tests_bound(na, nb, cand_a, cand_b, order, in_a) >= 2:
            nv = 2
            pv[0] = x
            pv[1] = y
            size = arities[x] * arities[y]
            for u in range(n):
                if u != a and u != b and (in_a[u] or par[u, b] or und[b, u]):
                    pv[nv] = u
                    nv += 1
                    size *= arities[u]
                    if size > cap:
                        break
            if size <= cap:
                m2 = _project(cols, weights, arities, pv[:nv], size, cell, tbl, pcols, pw)
                for t in range(nv):
                    loc[pv[t]] = t
                    par_ar[t] = arities[pv[t]]
                tc, tw, tx, ty, tz, tar = pcols[:nv, :m2], pw[:m2], 0, 1, zl, par_ar[:nv]
                projected = True
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
                    if projected:
                        for t in range(order):
                            zl[t] = loc[z[t]]
                    if _g2_p_value(tc, tw, tx, ty, tz, tar, cell, buf, cmi) > significance:
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


@njit(cache=True)
def bootstrap_columns(cols: np.ndarray, counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The columns ``cols`` (n_vars, n) of the rows drawn at least once (``counts`` (n,) > 0)
    and their counts as float weights — ``cols[:, counts > 0]`` and
    ``counts[counts > 0].astype(float)`` without numpy's slow boolean indexing along axis 1."""
    m = 0
    for r in range(counts.shape[0]):
        if counts[r] > 0:
            m += 1
    out = np.empty((cols.shape[0], m), dtype=cols.dtype)
    w = np.empty(m)
    j = 0
    for r in range(counts.shape[0]):
        if counts[r] > 0:
            w[j] = float(counts[r])
            j += 1
    for v in range(cols.shape[0]):
        j = 0
        c = cols[v]
        for r in range(counts.shape[0]):
            if counts[r] > 0:
                out[v, j] = c[r]
                j += 1
    return out, w
