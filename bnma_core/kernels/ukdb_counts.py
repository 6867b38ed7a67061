"""Count tables of UKDB in one pass over the training rows, their leave-one-out downdates and
the per-row parent choice (numba; DESIGN §5).

UKDB (:mod:`bnma_core.classifiers.ukdb`) reads its local measures and UKDB_P's CPT rows from
class-conditional contingency tables: every attribute with the class n(x_i, c), every attribute
pair with the class n(x_i, x_j, c) with their margins, and the tables n(x_S, c) of attribute
subsets S with |S| <= k + 1. Counted one table at a time (one numpy or kernel call each) these
were thousands of small calls per fit; here all tables of a kind are counted in one loop over
the rows. Every cell is a sum of ones, so the tables equal the per-table counts exactly
(available cases: a row counts in a table only if it has every member of the table; the class
is never missing). Configuration indices follow :func:`bnma_core.kernels.counting.parent_strides`
(first member fastest).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit, types
from numba.extending import intrinsic

from .counting import config_index, parent_strides


@intrinsic
def popcount(typingctx, x):
    """Number of set bits of a uint64, as an int64 (LLVM's ctpop: one instruction where the
    CPU has it)."""
    sig = types.int64(types.uint64)

    def codegen(context, builder, signature, args):
        fn = builder.module.declare_intrinsic("llvm.ctpop", [args[0].type])
        return builder.call(fn, args)

    return sig, codegen


@njit(cache=True, nogil=True)
def state_bitsets(data: np.ndarray, arities: np.ndarray):
    """The training rows holding each value, as bit sets: the count of any attribute
    configuration with a class, n(x_S, c), is the number of bits of the AND of its members'
    sets and the class's (exact; rows missing a member are in none of its sets, the available
    cases of :func:`subset_class_counts`).

    Parameters
    ----------
    data : int array (n, p + 1)
        Attribute codes (-1 = missing) and the class index in the last column.
    arities : int64 array (p + 1,)
        States of every attribute and, last, the number of classes m.

    Returns
    -------
    bits : (sum(arities), ceil(n / 64)) uint64 array
        Row r is bit r % 64 of word r // 64 of the set of its value; variable v's state s
        (the class: v = p) is set ``offsets[v] + s``.
    offsets : (p + 2,) int64 array
    observed : (p, ceil(n / 64)) uint64 array
        The rows where each attribute is observed (the union of its states' sets).
    """
    n, nv = data.shape
    words = (n + 63) // 64
    offsets = np.zeros(nv + 1, dtype=np.int64)
    for v in range(nv):
        offsets[v + 1] = offsets[v] + arities[v]
    bits = np.zeros((offsets[nv], words), dtype=np.uint64)
    observed = np.zeros((nv - 1, words), dtype=np.uint64)
    for r in range(n):
        w = r // 64
        bit = np.uint64(1) << np.uint64(r % 64)
        for v in range(nv):
            s = data[r, v]
            if s >= 0:
                bits[offsets[v] + s, w] |= bit
                if v < nv - 1:
                    observed[v, w] |= bit
    return bits, offsets, observed


@njit(cache=True, nogil=True)
def pair_class_counts(data: np.ndarray, arities: np.ndarray, n_classes: int):
    """Every attribute table n(x_i, c) and every pair table n(x_i, x_j, c) (i < j) with its
    margins, in one pass over the rows.

    Parameters
    ----------
    data : int array (n, p + 1)
        Attribute codes (-1 = missing) and the class index in the last column.
    arities : int64 array (p,)
        States of every attribute.
    n_classes : int

    Returns
    -------
    single : (p, r_max, m) float array
        n(x_i = a, c) over the rows where x_i is observed (padded states zero).
    flat : (sum_{i<j} r_i r_j m,) float array
        The pair tables one after another; pair (i, j) at ``offsets[i, j]``, cell
        ((a r_j + b) m + c) (the C-order ravel of an (r_i, r_j, m) array).
    offsets : (p, p) int64 array
        Start of each pair's table in ``flat`` (upper triangle; zero elsewhere).
    rows, cols : (p, p, r_max, m) float arrays
        n(x_i = a, c) resp. n(x_j = b, c) over the rows where both x_i and x_j are observed.
    totals : (p, p, m) float array
        n(c) over the same rows.
    """
    n, p = data.shape[0], data.shape[1] - 1
    m = n_classes
    rmax = 1
    for i in range(p):
        if arities[i] > rmax:
            rmax = arities[i]
    offsets = np.zeros((p, p), dtype=np.int64)
    off = 0
    for i in range(p):
        for j in range(i + 1, p):
            offsets[i, j] = off
            off += arities[i] * arities[j] * m
    single = np.zeros((p, rmax, m))
    flat = np.zeros(off)
    rows = np.zeros((p, p, rmax, m))
    cols = np.zeros((p, p, rmax, m))
    totals = np.zeros((p, p, m))
    for r in range(n):
        c = data[r, p]
        for i in range(p):
            a = data[r, i]
            if a < 0:
                continue
            single[i, a, c] += 1.0
            for j in range(i + 1, p):
                b = data[r, j]
                if b < 0:
                    continue
                flat[offsets[i, j] + (a * arities[j] + b) * m + c] += 1.0
                rows[i, j, a, c] += 1.0
                cols[i, j, b, c] += 1.0
                totals[i, j, c] += 1.0
    return single, flat, offsets, rows, cols, totals


@njit(cache=True, nogil=True)
def subset_class_counts(data: np.ndarray, subsets: np.ndarray, sizes: np.ndarray,
                        arities: np.ndarray):
    """The tables n(x_S, c) of many attribute subsets S in one call.

    Parameters
    ----------
    data : int array (n, p + 1)
        Attribute codes (-1 = missing) and the class index in the last column.
    subsets : int64 array (s, w)
        Member indices of each subset in its first ``sizes[t]`` entries (the rest ignored).
    sizes : int64 array (s,)
    arities : int64 array (p + 1,)
        States of every attribute and, last, the number of classes m.

    Returns
    -------
    flat : float array
        The (q_S, m) tables one after another (row-major: configuration, then class); table t
        at ``offsets[t]``; the configuration index has the first member fastest. Equal to
        :func:`bnma_core.kernels.counting.count_family` with the class as child and S as
        parents.
    offsets : (s + 1,) int64 array
    strides : (s, w) int64 array
        :func:`bnma_core.kernels.counting.parent_strides` of each subset (zero-padded).
    """
    s, w = subsets.shape
    n, c = data.shape[0], data.shape[1] - 1
    m = arities[c]
    offsets = np.zeros(s + 1, dtype=np.int64)
    strides = np.zeros((s, w), dtype=np.int64)
    for t in range(s):
        members = subsets[t, :sizes[t]]
        st = parent_strides(members, arities)
        q = 1
        for a in range(sizes[t]):
            strides[t, a] = st[a]
            q *= arities[members[a]]
        offsets[t + 1] = offsets[t] + q * m
    flat = np.zeros(offsets[s])
    for t in range(s):
        members = subsets[t, :sizes[t]]
        st = strides[t, :sizes[t]]
        base = offsets[t]
        for r in range(n):
            j = config_index(data, r, members, st)
            if j >= 0:
                flat[base + j * m + data[r, c]] += 1.0
    return flat, offsets, strides


@njit(cache=True)
def _xlogx_step(t: float) -> float:
    """t log t - (t - 1) log(t - 1) (0 log 0 = 0): what removing one count from a cell
    holding t takes from sum t log t."""
    v = 0.0
    if t > 0.0:
        v += t * math.log(t)
    if t - 1.0 > 0.0:
        v -= (t - 1.0) * math.log(t - 1.0)
    return v


@njit(cache=True)
def cmi_steps(flat: np.ndarray, offsets: np.ndarray, rows: np.ndarray, cols: np.ndarray,
              totals: np.ndarray, arities: np.ndarray, smoothing: float):
    """What removing one row takes from each smoothed cell of the tables of
    :func:`pair_class_counts` (:func:`_xlogx_step` of every cell, once), for
    :func:`cmi_downdate_rows`.

    Returns
    -------
    tot : (p, p) float array
        T, the smoothed total of each pair's table (upper triangle).
    g_flat, g_rows, g_cols, g_tot : float arrays shaped like ``flat``, ``rows``, ``cols``,
        ``totals``
        The step of each smoothed cell.
    """
    p = offsets.shape[0]
    m = totals.shape[2]
    tot = np.zeros((p, p))
    g_flat = np.zeros(flat.shape[0])
    g_rows = np.zeros(rows.shape)
    g_cols = np.zeros(cols.shape)
    g_tot = np.zeros(totals.shape)
    for i in range(p):
        ri = arities[i]
        for j in range(i + 1, p):
            rj = arities[j]
            t = 0.0
            for c in range(m):
                t += totals[i, j, c]
                g_tot[i, j, c] = _xlogx_step(totals[i, j, c] + ri * rj * smoothing)
                for a in range(ri):
                    g_rows[i, j, a, c] = _xlogx_step(rows[i, j, a, c] + rj * smoothing)
                for b in range(rj):
                    g_cols[i, j, b, c] = _xlogx_step(cols[i, j, b, c] + ri * smoothing)
            tot[i, j] = t + ri * rj * m * smoothing
            for q in range(offsets[i, j], offsets[i, j] + ri * rj * m):
                g_flat[q] = _xlogx_step(flat[q] + smoothing)
    return tot, g_flat, g_rows, g_cols, g_tot


@njit(cache=True)
def cmi_downdate_rows(data: np.ndarray, r0: int, r1: int, cmi: np.ndarray, steps,
                      offsets: np.ndarray, arities: np.ndarray, log_base: float,
                      out: np.ndarray) -> None:
    """I(X_i; X_j | C) of every attribute pair without row r of ``data``, for the rows
    r0 <= r < r1, into ``out[r - r0]`` (p, p) (symmetric, zero diagonal), from the full-data
    ``cmi`` and :func:`cmi_steps`: the per-row step of :func:`cmi_downdates` (see there),
    pairs outer so that each pair's steps are read once for the rows."""
    p = data.shape[1] - 1
    tot, g_flat, g_rows, g_cols, g_tot = steps
    m = g_tot.shape[2]
    for r in range(r0, r1):
        for i in range(p):
            out[r - r0, i, i] = 0.0
    for i in range(p):
        for j in range(i + 1, p):
            big_t = tot[i, j]
            v0 = cmi[i, j]
            for r in range(r0, r1):
                a = data[r, i]
                b = data[r, j]
                v = v0
                if a >= 0 and b >= 0:
                    c = data[r, p]
                    ti = v * log_base * big_t
                    ti -= g_flat[offsets[i, j] + (a * arities[j] + b) * m + c]
                    ti -= g_tot[i, j, c]
                    ti += g_rows[i, j, a, c]
                    ti += g_cols[i, j, b, c]
                    v = ti / (big_t - 1.0) / log_base if big_t - 1.0 > 0.0 else 0.0
                out[r - r0, i, j] = v
                out[r - r0, j, i] = v


@njit(cache=True, nogil=True)
def cmi_downdates(data: np.ndarray, cmi: np.ndarray, flat: np.ndarray, offsets: np.ndarray,
                  rows: np.ndarray, cols: np.ndarray, totals: np.ndarray,
                  arities: np.ndarray, smoothing: float, log_base: float) -> np.ndarray:
    """I(X_i; X_j | C) of every attribute pair on the training rows without row r, for every
    row r of ``data`` (its codes and class, last column), from the full-data values ``cmi``
    (in units of ``log_base``) and the tables of :func:`pair_class_counts`.

    With t the smoothed counts of a pair's table (T their total), T I = sum t log t +
    sum_c t_c log t_c - sum_{x,c} t_xc log t_xc - sum_{y,c} t_yc log t_yc (nats), the
    entropy form of :func:`bnma_core.scores.conditional_mutual_information`. Removing row r,
    which holds (a, b, c), takes one count from one cell of each sum and from T, so each
    pair is downdated in O(1) (four :func:`_xlogx_step`, looked up from :func:`cmi_steps`);
    pairs where row r misses a value never counted it and keep ``cmi``. Agrees with
    recounting D_{-r} to rounding (tested).

    Returns
    -------
    (n, p, p) float array, symmetric, zero diagonal.
    """
    n, p = data.shape[0], data.shape[1] - 1
    out = np.empty((n, p, p))
    steps = cmi_steps(flat, offsets, rows, cols, totals, arities, smoothing)
    cmi_downdate_rows(data, 0, n, cmi, steps, offsets, arities, log_base, out)
    return out


@njit(cache=True)
def tie_key(x: float, scale: float) -> float:
    """x * ``scale`` rounded half to even: ``numpy.round(x, d)`` with scale = 10**d is this
    divided by ``scale``, so comparing keys compares the rounded values (ties included)."""
    return np.rint(x * scale)


@njit(cache=True)
def structure_row(dep: np.ndarray, obs: np.ndarray, k: int, min_dependence: float,
                  use_min: bool, tie_scale: float, order: np.ndarray,
                  parents: np.ndarray) -> int:
    """The UKDB construction of one (local) conditional dependence matrix ``dep`` (p, p,
    symmetric), over the attributes with ``obs`` True:
    :func:`bnma_core.classifiers.ukdb.build_k_dependence_structure` with its rounding to
    log10(``tie_scale``) decimals (:func:`tie_key`).

    Each candidate's sum of dependences with the other candidates (in index order) ranks it
    (ties to the lower index); the attribute at ranking position pos >= k takes as parents
    the at most k attributes ranked before it with the highest dependence (strictly above
    ``min_dependence`` if ``use_min``), most dependent first, ties to the lower index.
    ``order`` (p,) receives the ranking (observed attributes first, then the others in
    index order), ``parents`` (p, k) the parents (-1 padded). Returns the number of
    observed attributes."""
    p = dep.shape[0]
    n_obs = 0
    for i in range(p):
        if obs[i]:
            n_obs += 1
    # sums[i] = sum_j dep[j, i] in index order j, all i at once (independent accumulators;
    # dep is symmetric, so this is build_k_dependence_structure's sum over dep[i, j])
    sums = np.zeros(p)
    for j in range(p):
        if obs[j]:
            for i in range(p):
                if obs[i] and i != j:
                    sums[i] += dep[j, i]
    cand = np.empty(n_obs, dtype=np.int64)
    key = np.empty(n_obs)
    t = 0
    for i in range(p):
        if obs[i]:
            cand[t] = i
            key[t] = -tie_key(sums[i], tie_scale)
            t += 1
    idx = np.argsort(key, kind="mergesort")
    for t in range(n_obs):
        order[t] = cand[idx[t]]
    t = n_obs
    for i in range(p):
        if not obs[i]:
            order[t] = i
            t += 1
    parents[:, :] = -1
    if k == 0:
        return n_obs
    best_v = np.empty(k + 1)
    best_j = np.empty(k + 1, dtype=np.int64)
    for pos in range(k, n_obs):
        i = order[pos]
        got = 0
        for t in range(pos):
            j = order[t]
            v = tie_key(dep[i, j], tie_scale)
            if got == k and (v < best_v[k - 1] or (v == best_v[k - 1] and j > best_j[k - 1])):
                continue
            if use_min and not v / tie_scale > min_dependence:
                continue
            # insert (v, j) into the best list: higher v first, then lower j
            q = got
            while q > 0 and (v > best_v[q - 1] or (v == best_v[q - 1] and j < best_j[q - 1])):
                best_v[q] = best_v[q - 1]
                best_j[q] = best_j[q - 1]
                q -= 1
            if q < k:
                best_v[q] = v
                best_j[q] = j
                if got < k:
                    got += 1
        for a in range(got):
            parents[i, a] = best_j[a]
    return n_obs


@njit(cache=True, nogil=True)
def k_dependence_structures(dep: np.ndarray, obs: np.ndarray, k: int, min_dependence: float,
                            use_min: bool, tie_scale: float):
    """:func:`structure_row` of every row's dependence matrix ``dep`` (n, p, p) with its
    observed attributes ``obs`` (n, p).

    Returns
    -------
    order : (n, p) int64 array
    n_obs : (n,) int64 array
    parents : (n, p, k) int64 array, padded with -1.
    """
    n, p = obs.shape
    order = np.empty((n, p), dtype=np.int64)
    n_obs = np.empty(n, dtype=np.int64)
    parents = np.empty((n, p, k), dtype=np.int64)
    for r in range(n):
        n_obs[r] = structure_row(dep[r], obs[r], k, min_dependence, use_min, tie_scale,
                                 order[r], parents[r])
    return order, n_obs, parents
