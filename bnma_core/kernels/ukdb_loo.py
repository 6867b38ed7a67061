"""UKDB's per-row work in numba: every row's UKDB_L structure without the row, every row's
UKDB_P structure at its own values, and every row's family log scores (DESIGN §5;
:meth:`bnma_core.classifiers.ukdb.UKDB.loo_log_proba` and UKDB_P's batch prediction).

Passes over the rows with a (p, p) scratch matrix per row replace the (n, p, p) and
(n, p (p - 1) / 2, m) arrays and the numpy passes over them: UKDB_L's CMI downdates
(:func:`bnma_core.kernels.ukdb_counts.cmi_downdate_rows`), UKDB_P's CLMI arguments (in
cache-sized batches of rows whose logarithms numpy takes in one vectorised call, then summed
by the formula's one home, :func:`bnma_core.kernels.information.local_information_value`),
the construction (:func:`bnma_core.kernels.ukdb_counts.structure_row`) and the families'
counts (popcounts of the value bit sets of
:func:`bnma_core.kernels.ukdb_counts.state_bitsets`). The entry kernels release the GIL
(``nogil=True``): candidates fitted in threads run them side by side.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit, types
from numba.typed import Dict

from .information import local_information_value
from .ukdb_counts import cmi_downdate_rows, cmi_steps, popcount, structure_row


@njit(cache=True, nogil=True)
def domain_loo_structures(data: np.ndarray, cmi: np.ndarray, flat: np.ndarray,
                          offsets: np.ndarray, rows: np.ndarray, cols: np.ndarray,
                          totals: np.ndarray, arities: np.ndarray, smoothing: float,
                          log_base: float, k: int, min_dependence: float, use_min: bool,
                          tie_scale: float):
    """UKDB_L's structure on the training rows without row r, for every row r of ``data``
    (codes and class, last column): the CMI matrix downdated for the row
    (:func:`bnma_core.kernels.ukdb_counts.cmi_downdate_rows`, from the full-data ``cmi`` in
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
    block = 16  # rows downdated together: each pair's steps read once per block
    dep = np.empty((block, p, p))
    for r0 in range(0, n, block):
        r1 = min(n, r0 + block)
        cmi_downdate_rows(data, r0, r1, cmi, steps, offsets, arities, log_base, dep)
        for r in range(r0, r1):
            n_obs[r] = structure_row(dep[r - r0], obs, k, min_dependence, use_min, tie_scale,
                                     order[r], parents[r])
    return order, n_obs, parents


@njit(cache=True, nogil=True)
def clmi_arguments(X: np.ndarray, W: np.ndarray, drop: np.ndarray, flat: np.ndarray,
                   offsets: np.ndarray, rows: np.ndarray, cols: np.ndarray,
                   totals: np.ndarray, arities: np.ndarray, smoothing: float,
                   joint: np.ndarray, ratio: np.ndarray) -> None:
    """What CLMI I(x_i; x_j | C) (paper 004 eq. 14) needs at every row's values, for every
    attribute pair i < j (pair t in the order of ``numpy.triu_indices(p, 1)``).

    The counts are the tables of :func:`bnma_core.kernels.ukdb_counts.pair_class_counts`
    over the pair's rows, smoothed, plus the pseudo instance "x labelled c" with weight
    ``W[r, c]``, minus ``drop[r, c]`` (the row's own count, for leave-one-out):
    n_xy = (n(x_i, x_j, c) - drop) + smoothing + W, and the margins n_xc, n_yc, n_c the same
    way with r_j, r_i and r_i r_j times the smoothing. Written: ``joint[r, t, c]`` = n_xy
    and ``ratio[r, t, c]`` = n_xy n_c / (n_xc n_yc), the argument of the logarithm of
    :func:`bnma_core.scores.conditional_local_mutual_information_counts` (the same
    floating-point operations). A pair with a missing value, or a class with no weight, gets
    joint 0 and ratio 1. ``joint`` and ``ratio`` are (n, p (p - 1) / 2, m) arrays filled in
    place; the pairs are the outer loop, so each pair's tables are read once for all rows."""
    n, p = X.shape
    m = W.shape[1]
    # pairs outer, rows inner: each pair's tables are read once for the whole batch
    t = 0
    for i in range(p):
        ri = arities[i]
        for j in range(i + 1, p):
            rj = arities[j]
            s_x = rj * smoothing
            s_y = ri * smoothing
            s_c = (ri * rj) * smoothing
            for r in range(n):
                a = X[r, i]
                b = X[r, j]
                if a < 0 or b < 0:
                    for c in range(m):
                        joint[r, t, c] = 0.0
                        ratio[r, t, c] = 1.0
                    continue
                base = offsets[i, j] + (a * rj + b) * m
                for c in range(m):
                    w = W[r, c]
                    d = drop[r, c]
                    n_xy = (flat[base + c] - d) + smoothing + w
                    n_xc = (rows[i, j, a, c] - d) + s_x + w
                    n_yc = (cols[i, j, b, c] - d) + s_y + w
                    n_c = (totals[i, j, c] - d) + s_c + w
                    joint[r, t, c] = n_xy
                    den = n_xc * n_yc
                    # den = 0 only with n_xy = 0 (no weight: the class's term is 0)
                    ratio[r, t, c] = (n_xy * n_c) / den if den > 0.0 else 1.0
            t += 1


@njit(cache=True, nogil=True)
def personalized_structures(X: np.ndarray, joint: np.ndarray, log_ratio: np.ndarray,
                            log_base: float, k: int, min_dependence: float, use_min: bool,
                            tie_scale: float, order: np.ndarray, n_obs: np.ndarray,
                            parents: np.ndarray) -> None:
    """UKDB_P's structure of every row of ``X`` (codes, -1 = missing) from
    :func:`clmi_arguments` (``joint`` and ``log_ratio``, the logarithms of its ratios, as
    (n p (p - 1) / 2, m) arrays: row r's pairs one after another): each observed pair's CLMI
    (:func:`bnma_core.kernels.information.local_information_value`, in units of
    ``log_base``; the values of :meth:`bnma_core.classifiers.ukdb.UKDB.local_information`)
    and the construction over the observed attributes
    (:func:`bnma_core.kernels.ukdb_counts.structure_row`), into ``order`` (n, p),
    ``n_obs`` (n,) and ``parents`` (n, p, k)."""
    n, p = X.shape
    dep = np.zeros((p, p))
    obs = np.empty(p, dtype=np.bool_)
    t = 0
    for r in range(n):
        for i in range(p):
            obs[i] = X[r, i] >= 0
        for i in range(p):
            dep[i, i] = 0.0
            for j in range(i + 1, p):
                v = 0.0
                if obs[i] and obs[j]:
                    v = local_information_value(joint, log_ratio, t) / log_base
                dep[i, j] = v
                dep[j, i] = v
                t += 1
        n_obs[r] = structure_row(dep, obs, k, min_dependence, use_min, tie_scale, order[r],
                                 parents[r])


@njit(cache=True, inline="always")
def _key_digit(key: int, base: int, v: int, x: int) -> int:
    """``key`` extended by the digits v + 1, x + 1 in base ``base`` (-1 once it would
    overflow, or already -1): the memo keys of :func:`family_log_scores`."""
    if key < 0 or key > (2 ** 62) // (base * base):
        return -1
    return (key * base + v + 1) * base + x + 1


@njit(cache=True)
def _family_mask(mask: np.ndarray, every: np.ndarray, bits: np.ndarray, offsets: np.ndarray,
                 x: np.ndarray, members: np.ndarray) -> None:
    """``every`` AND the bit sets of ``members`` at their values in ``x``, into ``mask``."""
    mask[:] = every
    for t in range(members.shape[0]):
        row = offsets[members[t]] + x[members[t]]
        for w in range(mask.shape[0]):
            mask[w] &= bits[row, w]


@njit(cache=True, nogil=True)
def family_log_scores(X: np.ndarray, order: np.ndarray, n_obs: np.ndarray,
                      parents: np.ndarray, drop: np.ndarray, extra: np.ndarray,
                      counted: np.ndarray, alpha: float, pad_alpha: np.ndarray,
                      arities: np.ndarray, bits: np.ndarray, offsets: np.ndarray,
                      observed: np.ndarray, k: int) -> np.ndarray:
    """log P(c | x_p) + sum_i log P(x_i | c, pi_i) of every row of ``X`` in its own network,
    every class, each CPT row the posterior-predictive (N + a) / (N_row + sum a) (the formula
    of :func:`bnma_core.scores.posterior_cpt`, which a kernel cannot call; tested equal to
    1e-12) of training counts at the row's values, counted from the value bit sets of
    :func:`bnma_core.kernels.ukdb_counts.state_bitsets` (exact integers: the same counts as
    the tables n(x_S, c)), once per family and values met (a row meeting them again reads
    them).

    Parameters
    ----------
    X : (n, p) int64 array
        Codes of the rows scored (-1 = missing: not in the network).
    order, n_obs, parents : arrays
        Each row's network (:func:`personalized_structures`): X_p the first min(k, n_obs)
        attributes of ``order``, every other ranked attribute with ``parents`` (-1 padded).
    drop, extra : (n, m) float arrays
        Counts removed from (the row's own) and added to (pseudo instances) every CPT row at
        the row's values.
    counted : (n, p) bool array
        The attributes the training row behind each scored row had observed: ``drop`` is
        removed only from families whose members are all counted, and a class family with a
        member not counted adds log P(x_p) (smoothed with ``alpha`` from the same counts:
        the row's X_p completed, :meth:`bnma_core.classifiers.ukdb.UKDB._completion_log_scores`).
    alpha : float
        Pseudo-count of P(c | x_p); ``pad_alpha`` (p, r_max) those of each attribute's
        states.
    bits, offsets, observed : arrays
        :func:`bnma_core.kernels.ukdb_counts.state_bitsets` of the training rows.

    Returns
    -------
    (n, m) float array
    """
    n, p = X.shape
    m = drop.shape[1]
    words = bits.shape[1]
    out = np.zeros((n, m))
    every = np.zeros(words, dtype=np.uint64)
    for c in range(m):
        for w in range(words):
            every[w] |= bits[offsets[p] + c, w]
    mask = np.empty(words, dtype=np.uint64)
    num = np.empty(m)
    hit = np.zeros(m, dtype=np.int64)
    seen = np.zeros(m, dtype=np.int64)
    alpha_sum = np.zeros(p)
    for i in range(p):
        for s in range(arities[i]):
            alpha_sum[i] += pad_alpha[i, s]
    # the counts of a family at given values, kept for the rows that meet it again (rows
    # share values and structures: UKDB's leave-one-out of mushroom's 2,100 scored rows
    # 0.040 -> 0.028 CPU s, the same numbers)
    seen_at = Dict.empty(key_type=types.int64, value_type=types.int64[::1])
    base = max(p, int(arities.max())) + 2
    for r in range(n):
        # the class family: n(x_p, c)
        ncp = min(n_obs[r], k)
        dd = 1.0
        key = p + 1
        for t in range(ncp):
            v = order[r, t]
            key = _key_digit(key, base, v, X[r, v])
            if not counted[r, v]:
                dd = 0.0
        got = seen_at.get(key) if key >= 0 and dd == 1.0 else None
        if got is None:
            _family_mask(mask, every, bits, offsets, X[r], order[r, :ncp])
            got = np.empty(m, dtype=np.int64)
            for c in range(m):
                row = offsets[p] + c
                hits = 0
                for w in range(words):
                    hits += popcount(mask[w] & bits[row, w])
                got[c] = hits
            if key >= 0 and dd == 1.0:
                seen_at[key] = got
        den = 0.0
        for c in range(m):
            num[c] = ((float(got[c]) - drop[r, c] * dd) + extra[r, c]) + alpha
            den += num[c]
        for c in range(m):
            out[r, c] += math.log(num[c] / den)
        if dd == 0.0:
            # log P(x_p) = (n(x_p) + alpha) / (n + q alpha) over the rows with X_p observed
            hits = 0
            total = 0
            q = 1
            for w in range(words):
                hits += popcount(mask[w])
                o = every[w]
                for t in range(ncp):
                    o &= observed[order[r, t], w]
                total += popcount(o)
            for t in range(ncp):
                q *= arities[order[r, t]]
            lp = math.log((float(hits) + alpha) / (float(total) + q * alpha))
            for c in range(m):
                out[r, c] += lp
        # the attribute families
        for pos in range(k, n_obs[r]):
            i = order[r, pos]
            x = X[r, i]
            dd = 1.0 if counted[r, i] else 0.0
            npa = 0
            key = _key_digit(i + 1, base, i, x)
            while npa < k and parents[r, i, npa] >= 0:
                v = parents[r, i, npa]
                key = _key_digit(key, base, v, X[r, v])
                if not counted[r, v]:
                    dd = 0.0
                npa += 1
            got = seen_at.get(key) if key >= 0 else None
            if got is None:
                # per class: n(x_i = x, pi_i, c) and n(pi_i, c) over the rows with x_i observed
                _family_mask(mask, every, bits, offsets, X[r], parents[r, i, :npa])
                own = offsets[i] + x
                for c in range(m):
                    hit[c] = 0
                    seen[c] = 0
                for w in range(words):
                    mw = mask[w] & observed[i, w]
                    if mw == 0:
                        continue
                    xw = mw & bits[own, w]
                    for c in range(m):
                        cw = bits[offsets[p] + c, w]
                        seen[c] += popcount(mw & cw)
                        hit[c] += popcount(xw & cw)
                got = np.empty(2 * m, dtype=np.int64)
                got[:m] = hit
                got[m:] = seen
                if key >= 0:
                    seen_at[key] = got
            else:
                hit[:] = got[:m]
                seen[:] = got[m:]
            for c in range(m):
                mine = ((float(hit[c]) - drop[r, c] * dd) + extra[r, c]) + pad_alpha[i, x]
                den = ((float(seen[c]) - drop[r, c] * dd) + extra[r, c]) + alpha_sum[i]
                out[r, c] += math.log(mine / den)
    return out
