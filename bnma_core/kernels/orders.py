"""numba kernels for node-order methods: score tables, order scores, order MCMC, fixed-order
BMA classification and edge posteriors (Hwang & Zhang 2005; DESIGN §3-4, §9).

Conventions
-----------
* ``data_t`` is the training data transposed, shape (n_vars, n_rows), int32, -1 = missing.
* A score table holds, per node, parent-set bitmasks ``masks[i, k]`` (uint64) and local scores
  ``scores[i, k]`` (natural log) sorted by decreasing score; ``limits[i]`` is the number of
  entries worth scanning (see :func:`node_log_sum`).
* Order state: ``order[p]`` = variable at position p; ``prefix[p]`` = bitmask of the variables at
  positions < p; ``terms[p]`` = log sum_{Z ⊆ pred} exp S(order[p]; Z).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

# --------------------------------------------------------------------------------------------
# Score tables
# --------------------------------------------------------------------------------------------


@njit(cache=True)
def _family_log_ml(table: np.ndarray, size: int, stride: int, r: int, score_kind: int,
                   ess: float, lfact: np.ndarray) -> float:
    """Log marginal likelihood of the child with stride ``stride`` and ``r`` states inside the
    joint count table of a variable set (mixed radix, first variable fastest).
    score_kind 0 = K2 (a_ijk = 1, via the log-factorial table), 1 = BDeu(ess)."""
    total = 0.0
    q = size // r
    if score_kind == 0:
        lg_r = lfact[r - 1]
        for idx in range(size):
            if (idx // stride) % r != 0:
                continue
            n_j = 0
            for k in range(r):
                c = table[idx + k * stride]
                if c > 0:
                    n_j += c
                    total += lfact[c]
            if n_j > 0:
                total += lg_r - lfact[r + n_j - 1]
    else:
        a = ess / (r * q)
        a_j = ess / q
        la = math.lgamma(a)
        la_j = math.lgamma(a_j)
        for idx in range(size):
            if (idx // stride) % r != 0:
                continue
            n_j = 0
            for k in range(r):
                c = table[idx + k * stride]
                if c > 0:
                    n_j += c
                    total += math.lgamma(a + c) - la
            if n_j > 0:
                total += la_j - math.lgamma(a_j + n_j)
    return total


@njit(cache=True)
def _family_log_ml_sparse(table: np.ndarray, touched: np.ndarray, n_touched: int, size: int,
                          stride: int, r: int, score_kind: int, ess: float, lfact: np.ndarray,
                          nj: np.ndarray) -> float:
    """:func:`_family_log_ml` visiting only the ``n_touched`` non-zero cells (listed in
    ``touched``); empty cells and parent configurations contribute nothing. ``nj`` is a zeroed
    work array of the table's size, left zeroed."""
    total = 0.0
    q = size // r
    a = 1.0 if score_kind == 0 else ess / (r * q)
    la = math.lgamma(a)
    for t in range(n_touched):
        p = touched[t]
        c = table[p]
        if score_kind == 0:
            total += lfact[c]
        else:
            total += math.lgamma(a + c) - la
        nj[p - ((p // stride) % r) * stride] += c
    a_j = a * r
    la_j = math.lgamma(a_j)
    for t in range(n_touched):
        p = touched[t]
        key = p - ((p // stride) % r) * stride
        n = nj[key]
        if n > 0:
            if score_kind == 0:
                total += lfact[r - 1] - lfact[r + n - 1]
            else:
                total += la_j - math.lgamma(a_j + n)
            nj[key] = 0
    return total


@njit(cache=True)
def build_full_table(data_t: np.ndarray, arities: np.ndarray, max_parents: int,
                     log_prior: np.ndarray, score_kind: int, ess: float, n_sets: int,
                     max_cells: int) -> tuple[np.ndarray, np.ndarray]:
    """Local scores of every family with at most ``max_parents`` parents.

    Every variable set V with |V| <= max_parents + 1 is enumerated depth-first; its joint
    contingency table is counted once (the row index of the prefix is reused, DESIGN §9) and the
    |V| families "v given V minus v" are scored from it.
    Returns unsorted ``masks`` (n, n_sets) uint64 and ``scores`` (n, n_sets) float64.
    """
    n, n_rows = data_t.shape
    L = max_parents + 1
    masks = np.zeros((n, n_sets), dtype=np.uint64)
    scores = np.full((n, n_sets), -np.inf)
    fill = np.zeros(n, dtype=np.int64)
    lfact = np.zeros(n_rows + 2 + int(arities.max()) + 1)
    for c in range(1, lfact.shape[0]):
        lfact[c] = lfact[c - 1] + math.log(c)
    comb = np.zeros(L, dtype=np.int64)
    partial = np.zeros((L + 1, n_rows), dtype=np.int64)
    stride = np.ones(L + 1, dtype=np.int64)
    table = np.zeros(max_cells, dtype=np.int64)
    touched = np.empty(max_cells, dtype=np.int64)
    nj = np.zeros(max_cells, dtype=np.int64)
    t = 0
    comb[0] = 0
    while t >= 0:
        if comb[t] >= n:
            t -= 1
            if t >= 0:
                comb[t] += 1
            continue
        v = comb[t]
        row_v = data_t[v]
        prev = partial[t]
        cur = partial[t + 1]
        st = stride[t]
        for row in range(n_rows):
            x = row_v[row]
            p = prev[row]
            if x < 0 or p < 0:
                cur[row] = -1
            else:
                cur[row] = p + x * st
        size = st * arities[v]
        stride[t + 1] = size
        n_touched = 0
        sparse = n_rows < size  # fewer rows than cells: visit only the non-zero cells
        if sparse:
            for row in range(n_rows):
                p = cur[row]
                if p >= 0:
                    if table[p] == 0:
                        touched[n_touched] = p
                        n_touched += 1
                    table[p] += 1
        else:
            for row in range(n_rows):
                p = cur[row]
                if p >= 0:
                    table[p] += 1
        setmask = np.uint64(0)
        for s in range(t + 1):
            setmask |= np.uint64(1) << np.uint64(comb[s])
        for s in range(t + 1):
            child = comb[s]
            if sparse:
                ml = _family_log_ml_sparse(table, touched, n_touched, size, stride[s],
                                           arities[child], score_kind, ess, lfact, nj)
            else:
                ml = _family_log_ml(table, size, stride[s], arities[child], score_kind, ess,
                                    lfact)
            k = fill[child]
            masks[child, k] = setmask ^ (np.uint64(1) << np.uint64(child))
            scores[child, k] = log_prior[t] + ml
            fill[child] = k + 1
        if sparse:
            for c in range(n_touched):
                table[touched[c]] = 0
        else:
            table[:size] = 0
        if t + 1 < L and comb[t] + 1 < n:
            t += 1
            comb[t] = comb[t - 1] + 1
        else:
            comb[t] += 1
    return masks, scores


@njit(cache=True)
def family_log_ml(data_t: np.ndarray, arities: np.ndarray, child: int, parents: np.ndarray,
                  score_kind: int, ess: float, lfact: np.ndarray,
                  table: np.ndarray) -> float:
    """Log marginal likelihood of one family (child, parents) counted from ``data_t``."""
    n_rows = data_t.shape[1]
    size = 1
    for k in range(parents.shape[0]):
        size *= arities[parents[k]]
    r = arities[child]
    size *= r
    for c in range(size):
        table[c] = 0
    for row in range(n_rows):
        x = data_t[child, row]
        if x < 0:
            continue
        idx = 0
        st = 1
        ok = True
        for k in range(parents.shape[0]):
            v = data_t[parents[k], row]
            if v < 0:
                ok = False
                break
            idx += v * st
            st *= arities[parents[k]]
        if ok:
            table[idx + x * st] += 1
    return _family_log_ml(table, size, size // r, r, score_kind, ess, lfact)


@njit(cache=True)
def build_candidate_table(data_t: np.ndarray, arities: np.ndarray, cand: np.ndarray,
                          max_parents: int, log_prior: np.ndarray, score_kind: int, ess: float,
                          n_sets: int, max_cells: int
                          ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Candidate-restricted regime: for node i, every subset S of its K candidates
    ``cand[i]`` with |S| <= max_parents is scored; returns global ``masks`` / ``scores``
    (n, n_sets) and the per-node table ``logsum[i, U] = log sum_{S ⊆ U} exp S(X_i; S)`` over all
    2^K candidate bitmasks U, computed by a zeta (subset-sum) transform in log space."""
    n, n_rows = data_t.shape
    K = cand.shape[1]
    full = 1 << K
    masks = np.zeros((n, n_sets), dtype=np.uint64)
    scores = np.full((n, n_sets), -np.inf)
    logsum = np.full((n, full), -np.inf)
    lfact = np.zeros(n_rows + 2 + int(arities.max()) + 1)
    for c in range(1, lfact.shape[0]):
        lfact[c] = lfact[c - 1] + math.log(c)
    table = np.zeros(max_cells, dtype=np.int64)
    pa = np.zeros(max_parents, dtype=np.int64)
    for i in range(n):
        k = 0
        for local in range(full):
            # popcount
            m = local
            cnt = 0
            while m:
                m &= m - 1
                cnt += 1
            if cnt > max_parents:
                continue
            g = np.uint64(0)
            c = 0
            for b in range(K):
                if (local >> b) & 1:
                    pa[c] = cand[i, b]
                    g |= np.uint64(1) << np.uint64(cand[i, b])
                    c += 1
            s = log_prior[cnt] + family_log_ml(data_t, arities, i, pa[:cnt], score_kind, ess,
                                               lfact, table)
            masks[i, k] = g
            scores[i, k] = s
            logsum[i, local] = s
            k += 1
        row = logsum[i]
        for b in range(K):
            bit = 1 << b
            for u in range(full):
                if u & bit:
                    a = row[u]
                    o = row[u ^ bit]
                    if o > a:
                        a, o = o, a
                    if o == -np.inf:
                        row[u] = a
                    else:
                        row[u] = a + math.log1p(math.exp(o - a))
    return masks, scores, logsum


BAND_WIDTH = 600.0


@njit(cache=True)
def sort_table(masks: np.ndarray, scores: np.ndarray, log_eps_rel: float):
    """Sort each node's parent sets by decreasing score; compute the static scan limit (sets
    scoring below S(empty) + log_eps_rel are never within the pruning window of any order, since
    the empty set is always compatible, DESIGN §4) and precomputed exponentials.

    Exponentials are stored per band of 600 nats below the node's best score:
    ``exps[i, k] = exp(S_k - anchor)`` with ``anchor = band_anchor[i, bid[i, k]]``, so they
    never underflow; ``band_first[i, b]`` is the first entry of band b.
    """
    n, m = scores.shape
    om = np.empty_like(masks)
    osc = np.empty_like(scores)
    limits = np.empty(n, dtype=np.int64)
    exps = np.empty_like(scores)
    bid = np.empty((n, m), dtype=np.int64)
    n_bands = 1
    for i in range(n):
        lo = scores[i].min()
        hi = scores[i].max()
        nb = int((hi - lo) // BAND_WIDTH) + 1
        n_bands = max(n_bands, nb)
    band_first = np.full((n, n_bands + 1), m, dtype=np.int64)
    band_anchor = np.zeros((n, n_bands))
    for i in range(n):
        idx = np.argsort(-scores[i])
        s_empty = -np.inf
        for k in range(m):
            om[i, k] = masks[i, idx[k]]
            osc[i, k] = scores[i, idx[k]]
            if om[i, k] == 0:
                s_empty = osc[i, k]
        top = osc[i, 0]
        for b in range(n_bands):
            band_anchor[i, b] = top - BAND_WIDTH * b
        prev = -1
        for k in range(m):
            b = int((top - osc[i, k]) // BAND_WIDTH)
            bid[i, k] = b
            exps[i, k] = math.exp(osc[i, k] - band_anchor[i, b])
            while prev < b:
                prev += 1
                band_first[i, prev] = k
        lim = m
        thr = s_empty + log_eps_rel
        for k in range(m):
            if osc[i, k] < thr:
                lim = k
                break
        limits[i] = lim
    return om, osc, limits, exps, bid, band_first, band_anchor


# --------------------------------------------------------------------------------------------
# Order scores
# --------------------------------------------------------------------------------------------


@njit(cache=True, fastmath={"reassoc", "nsz", "contract"})
def _masked_sum(ms: np.ndarray, es: np.ndarray, notpred: np.uint64) -> float:
    acc = 0.0
    for j in range(ms.shape[0]):
        acc += es[j] if (ms[j] & notpred) == 0 else 0.0
    return acc


@njit(cache=True)
def _first_compatible(ms: np.ndarray, limit: int, notpred: np.uint64) -> int:
    k = 0
    while k + 16 <= limit:
        blk = ms[k:k + 16]
        hit = False
        for j in range(16):
            hit |= (blk[j] & notpred) == 0
        if hit:
            break
        k += 16
    while k < limit and (ms[k] & notpred) != 0:
        k += 1
    return k


@njit(cache=True)
def node_log_sum(ms: np.ndarray, ss: np.ndarray, es: np.ndarray, bid: np.ndarray,
                 band_first: np.ndarray, band_anchor: np.ndarray, limit: int,
                 pred: np.uint64, log_eps_rel: float) -> float:
    """log sum_{Z ⊆ pred} exp S(X_i; Z) from the node's sets sorted by score (one row of each
    table array).

    The first compatible set has the best compatible score M; only sets scoring at least
    M + log_eps_rel are summed (their end is found by bisection), using the precomputed banded
    exponentials. With m sets per node and log_eps_rel = log(eps / m) the dropped mass is below
    eps times the kept mass, so the result is low by at most log(1 + eps) <= eps.
    ``log_eps_rel = -inf`` sums every compatible set (exact).
    """
    notpred = ~pred
    k = _first_compatible(ms, limit, notpred)
    if k == limit:
        return -np.inf
    best = ss[k]
    if log_eps_rel == -np.inf:
        end = limit
    else:
        thr = best + log_eps_rel
        lo = k + 1
        hi = limit
        while lo < hi:
            mid = (lo + hi) >> 1
            if ss[mid] < thr:
                hi = mid
            else:
                lo = mid + 1
        end = lo
    acc = 0.0
    b = bid[k]
    j = k
    while j < end:
        stop = min(end, band_first[b + 1])
        if stop > j:
            part = _masked_sum(ms[j:stop], es[j:stop], notpred)
            if part > 0.0:
                acc += part * math.exp(band_anchor[b] - best)
        j = stop
        b += 1
    return best + math.log(acc)


@njit(cache=True)
def candidate_local_mask(bytemap: np.ndarray, v: int, pred: np.uint64) -> int:
    """Bitmask over node v's K candidates of those in ``pred``; ``bytemap[v, byte, value]``
    gives the candidate bits of each byte of the predecessor mask (indexed in place: no row
    view, see :func:`mcmc_run`)."""
    local = 0
    for byte in range(bytemap.shape[1]):
        local |= bytemap[v, byte, (pred >> np.uint64(8 * byte)) & np.uint64(255)]
    return local


@njit(cache=True)
def candidate_bytemap(cand: np.ndarray, n: int) -> np.ndarray:
    """Per node, byte position and byte value: the candidate bitmask it contributes."""
    nbytes = (n + 7) // 8
    K = cand.shape[1]
    out = np.zeros((cand.shape[0], nbytes, 256), dtype=np.int32)
    for i in range(cand.shape[0]):
        for b in range(K):
            v = cand[i, b]
            byte = v // 8
            bit = v % 8
            for val in range(256):
                if (val >> bit) & 1:
                    out[i, byte, val] |= 1 << b
    return out


@njit(cache=True)
def _node_term(v: int, pred: np.uint64, masks: np.ndarray, scores: np.ndarray,
               exps: np.ndarray, bid: np.ndarray, band_first: np.ndarray,
               band_anchor: np.ndarray, limits: np.ndarray, log_eps_rel: float, regime: int,
               logsum: np.ndarray, bytemap: np.ndarray) -> float:
    if regime == 0:
        return node_log_sum(masks[v], scores[v], exps[v], bid[v], band_first[v],
                            band_anchor[v], limits[v], pred, log_eps_rel)
    return logsum[v, candidate_local_mask(bytemap, v, pred)]


@njit(cache=True)
def order_terms(order: np.ndarray, masks: np.ndarray, scores: np.ndarray, exps: np.ndarray,
                bid: np.ndarray, band_first: np.ndarray, band_anchor: np.ndarray,
                limits: np.ndarray, log_eps_rel: float, regime: int, logsum: np.ndarray,
                bytemap: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Full (non-incremental) evaluation: prefix masks and node terms of an order."""
    n = order.shape[0]
    prefix = np.zeros(n, dtype=np.uint64)
    terms = np.zeros(n)
    pred = np.uint64(0)
    for p in range(n):
        v = order[p]
        prefix[p] = pred
        terms[p] = _node_term(v, pred, masks, scores, exps, bid, band_first, band_anchor,
                              limits, log_eps_rel, regime, logsum, bytemap)
        pred |= np.uint64(1) << np.uint64(v)
    return prefix, terms


@njit(cache=True)
def candidate_local_masks(order: np.ndarray, bytemap: np.ndarray) -> np.ndarray:
    """Candidate regime: ``local[p]`` = bitmask over the candidates of ``order[p]`` of those
    placed before position p (the index of its node term in ``logsum``)."""
    n = order.shape[0]
    local = np.zeros(n, dtype=np.int64)
    pred = np.uint64(0)
    for p in range(n):
        v = order[p]
        local[p] = candidate_local_mask(bytemap, v, pred)
        pred |= np.uint64(1) << np.uint64(v)
    return local


@njit(cache=True, nogil=True)
def mcmc_run(order: np.ndarray, prefix: np.ndarray, terms: np.ndarray, local: np.ndarray,
             state: np.ndarray, masks: np.ndarray, scores: np.ndarray, exps: np.ndarray,
             bid: np.ndarray, band_first: np.ndarray, band_anchor: np.ndarray,
             limits: np.ndarray, log_eps_rel: float, regime: int, logsum: np.ndarray,
             bytemap: np.ndarray, move_i: np.ndarray, move_j: np.ndarray,
             move_kind: np.ndarray, log_u: np.ndarray, start: int, stop: int,
             trace_score: np.ndarray, trace_acc: np.ndarray, keep_slot: np.ndarray,
             kept: np.ndarray, ref_pos: np.ndarray, trace_spear: np.ndarray) -> None:
    """Metropolis-Hastings over node orders for iterations ``start..stop-1`` (in place).

    Move kinds (all symmetric proposals, so the acceptance ratio is P(new|D)/P(old|D),
    Hwang & Zhang eq. 12): 0 = swap positions i and j (the paper's move; adjacent swaps are
    drawn with j = i + 1), 1 = relocate the node at position i to position j. Only positions
    min(i, j)..max(i, j) are rescored. ``state`` = [total log score, accepted count,
    sum of squared rank differences to the reference (if any)].
    Candidate regime (``regime`` 1): ``local[p]`` is the candidate-local mask of the node at
    position p (:func:`candidate_local_masks`), the index of its term in ``logsum``. In a swap
    of positions lo < hi with a = order[lo], b = order[hi], b moves to lo (its mask is looked up
    from prefix[lo]) and a to hi (from prefix[hi] - a + b). Every node v strictly between keeps
    its position and its predecessor set loses a and gains b, so its mask changes by
    x = bit_v(a) | bit_v(b) (bit_v(u) = the bit of u among v's candidates, 0 if u is not one;
    read from ``bytemap``): local'[p] = local[p] ^ x, rescored only if x != 0. The changed
    positions are collected in ``chg_*`` and written back only on acceptance; ``delta`` is
    summed in position order, as a full rescore of lo..hi would, so the chain is identical to
    one that rescores every position. In the full regime ``local`` is unused.
    The candidate path indexes 2-D/3-D arrays in place (``logsum[v, m]``, ``bytemap[v, ...]``):
    a row view such as ``bytemap[v]`` made inside the loop costs two atomic reference-count
    updates (NRT incref/decref), which took about 2/3 of the time before.
    Random draws are made outside (``move_*``, ``log_u``), so runs split into chunks give the
    same chain as one run.
    """
    n = order.shape[0]
    new_order = np.empty(n, dtype=order.dtype)
    new_prefix = np.empty(n, dtype=np.uint64)
    new_terms = np.empty(n)
    new_local = np.empty(n, dtype=np.int64)
    chg_pos = np.empty(n, dtype=np.int64)
    chg_term = np.empty(n)
    chg_local = np.empty(n, dtype=np.int64)
    has_ref = ref_pos.shape[0] == n
    total = state[0]
    n_acc = state[1]
    sumd2 = state[2]
    for it in range(start, stop):
        i = move_i[it]
        j = move_j[it]
        lo = min(i, j)
        hi = max(i, j)
        if regime == 1 and move_kind[it] == 0:
            # candidate regime, swap (see the docstring): b = order[hi] moves to lo, a to hi,
            # the nodes between change their mask by the candidate bits of a and b
            a = order[lo]
            b = order[hi]
            ab = (np.uint64(1) << np.uint64(a)) | (np.uint64(1) << np.uint64(b))
            byte_a = a >> 3
            val_a = 1 << (a & 7)
            byte_b = b >> 3
            val_b = 1 << (b & 7)
            m = candidate_local_mask(bytemap, b, prefix[lo])
            t = logsum[b, m]
            chg_pos[0] = lo
            chg_term[0] = t
            chg_local[0] = m
            delta = t - terms[lo]
            n_chg = 1
            for p in range(lo + 1, hi):
                v = order[p]
                x = bytemap[v, byte_a, val_a] | bytemap[v, byte_b, val_b]
                if x != 0:
                    m = local[p] ^ x
                    t = logsum[v, m]
                    chg_pos[n_chg] = p
                    chg_term[n_chg] = t
                    chg_local[n_chg] = m
                    delta += t - terms[p]
                    n_chg += 1
            m = candidate_local_mask(bytemap, a, prefix[hi] ^ ab)
            t = logsum[a, m]
            chg_pos[n_chg] = hi
            chg_term[n_chg] = t
            chg_local[n_chg] = m
            delta += t - terms[hi]
            n_chg += 1
            accepted = log_u[it] < delta
            if accepted:
                if has_ref:
                    d_old = lo - ref_pos[a]
                    d_new = lo - ref_pos[b]
                    sumd2 += d_new * d_new - d_old * d_old
                    d_old = hi - ref_pos[b]
                    d_new = hi - ref_pos[a]
                    sumd2 += d_new * d_new - d_old * d_old
                order[lo] = b
                order[hi] = a
                for p in range(lo + 1, hi + 1):
                    prefix[p] ^= ab
                for c in range(n_chg):
                    p = chg_pos[c]
                    terms[p] = chg_term[c]
                    local[p] = chg_local[c]
                total += delta
                n_acc += 1
        else:
            # proposed segment lo..hi
            if move_kind[it] == 0:
                for p in range(lo, hi + 1):
                    new_order[p] = order[p]
                new_order[i] = order[j]
                new_order[j] = order[i]
            else:
                if i < j:
                    for p in range(i, j):
                        new_order[p] = order[p + 1]
                    new_order[j] = order[i]
                else:
                    for p in range(j + 1, i + 1):
                        new_order[p] = order[p - 1]
                    new_order[j] = order[i]
            pred = prefix[lo]
            delta = 0.0
            for p in range(lo, hi + 1):
                v = new_order[p]
                new_prefix[p] = pred
                if regime == 1:
                    m = candidate_local_mask(bytemap, v, pred)
                    new_local[p] = m
                    t = terms[p] if v == order[p] and m == local[p] else logsum[v, m]
                else:
                    t = node_log_sum(masks[v], scores[v], exps[v], bid[v], band_first[v],
                                     band_anchor[v], limits[v], pred, log_eps_rel)
                new_terms[p] = t
                delta += t - terms[p]
                pred |= np.uint64(1) << np.uint64(v)
            accepted = log_u[it] < delta
            if accepted:
                if has_ref:
                    for p in range(lo, hi + 1):
                        d_old = p - ref_pos[order[p]]
                        d_new = p - ref_pos[new_order[p]]
                        sumd2 += d_new * d_new - d_old * d_old
                for p in range(lo, hi + 1):
                    order[p] = new_order[p]
                    prefix[p] = new_prefix[p]
                    terms[p] = new_terms[p]
                if regime == 1:
                    for p in range(lo, hi + 1):
                        local[p] = new_local[p]
                total += delta
                n_acc += 1
        trace_score[it] = total
        trace_acc[it] = accepted
        if has_ref:
            trace_spear[it] = 1.0 - 6.0 * sumd2 / (n * (n * n - 1.0))
        slot = keep_slot[it]
        if slot >= 0:
            for p in range(n):
                kept[slot, p] = order[p]
    state[0] = total
    state[1] = n_acc
    state[2] = sumd2


# --------------------------------------------------------------------------------------------
# Fixed-order BMA: class posteriors (eq. 9) and edge posteriors
# --------------------------------------------------------------------------------------------


@njit(cache=True)
def _window(masks_i: np.ndarray, scores_i: np.ndarray, limit: int, pred: np.uint64,
            log_eps_rel: float, out_idx: np.ndarray, out_w: np.ndarray) -> int:
    """Indices and weights exp(S - M) of the compatible sets summed by :func:`node_log_sum`."""
    notpred = ~pred
    c = 0
    best = 0.0
    for k in range(limit):
        if (masks_i[k] & notpred) != 0:
            continue
        sc = scores_i[k]
        if c == 0:
            best = sc
        elif sc < best + log_eps_rel:
            break
        out_idx[c] = k
        out_w[c] = math.exp(sc - best)
        c += 1
    return c


@njit(cache=True, nogil=True)
def orders_log_joint(orders: np.ndarray, masks: np.ndarray, scores: np.ndarray,
                     limits: np.ndarray, log_eps_rel: float, train_t: np.ndarray,
                     arities: np.ndarray, score_kind: int, ess: float, test_t: np.ndarray,
                     class_index: int, out: np.ndarray) -> None:
    """log P(c, x | D, ≺_t) for every order t, complete test row x (the class column of
    ``test_t`` is ignored) and class c, by Hwang & Zhang eq. 9:

        P(U | D, ≺) = prod_i [sum_Z exp S(X_i; Z) θ̂(x_i | z)] / prod_i [sum_Z exp S(X_i; Z)]

    with θ̂_ijk = (a_ijk + N_ijk) / (a_ij + N_ij). Node by node, every parent set used by any
    order is counted and applied to all test rows once (DESIGN §9), then added with each order's
    weight; sets without the class (and not of the class node) are applied once for all classes.
    ``orders`` (T, n); ``test_t`` (n_vars, n_test); ``out`` (T, n_test, n_classes) is
    overwritten.
    """
    T, n = orders.shape
    n_test = test_t.shape[1]
    n_classes = arities[class_index]
    m = masks.shape[1]
    idx = np.empty(m, dtype=np.int64)
    wv = np.empty(m)
    W = np.zeros((T, m))
    used = np.zeros(m, dtype=np.bool_)
    sum_w = np.zeros(T)
    dep = np.zeros(T, dtype=np.bool_)
    pos = np.empty((T, n), dtype=np.int64)
    for t in range(T):
        for p in range(n):
            pos[t, orders[t, p]] = p
    pa = np.empty(64, dtype=np.int64)
    st = np.empty(64, dtype=np.int64)
    jrow = np.empty(n_test, dtype=np.int64)
    th = np.empty((n_classes, n_test))
    mix = np.zeros((T, n_classes, n_test))
    common = np.zeros((T, n_test))
    out[:, :, :] = 0.0
    for v in range(n):
        r = arities[v]
        xs = test_t[v]
        used[:] = False
        for t in range(T):
            pred = np.uint64(0)
            for p in range(pos[t, v]):
                pred |= np.uint64(1) << np.uint64(orders[t, p])
            cnt = _window(masks[v], scores[v], limits[v], pred, log_eps_rel, idx, wv)
            W[t, :] = 0.0
            tot = 0.0
            for e in range(cnt):
                W[t, idx[e]] = wv[e]
                used[idx[e]] = True
                tot += wv[e]
            sum_w[t] = tot
            dep[t] = v == class_index or pos[t, class_index] < pos[t, v]
        mix[:, :, :] = 0.0
        common[:, :] = 0.0
        for k in range(m):
            if not used[k]:
                continue
            g = masks[v, k]
            npa = 0
            q = 1
            has_c = -1
            for b in range(n):
                if (g >> np.uint64(b)) & np.uint64(1):
                    pa[npa] = b
                    st[npa] = q
                    if b == class_index:
                        has_c = npa
                    q *= arities[b]
                    npa += 1
            counts = np.zeros(q * r)
            for row in range(train_t.shape[1]):
                x = train_t[v, row]
                if x < 0:
                    continue
                j = 0
                ok = True
                for kk in range(npa):
                    y = train_t[pa[kk], row]
                    if y < 0:
                        ok = False
                        break
                    j += y * st[kk]
                if ok:
                    counts[j * r + x] += 1.0
            a = 1.0 if score_kind == 0 else ess / (r * q)
            for j in range(q):
                nj = 0.0
                for kk in range(r):
                    nj += counts[j * r + kk]
                f = 1.0 / (a * r + nj)
                for kk in range(r):
                    counts[j * r + kk] = (a + counts[j * r + kk]) * f
            # row index into the CPT: (configuration of the non-class parents) * r
            for r_ in range(n_test):
                jrow[r_] = 0
            for kk in range(npa):
                if kk != has_c:
                    col = test_t[pa[kk]]
                    sk = st[kk] * r
                    for r_ in range(n_test):
                        jrow[r_] += col[r_] * sk
            per_class = v == class_index or has_c >= 0
            if v == class_index:
                for c in range(n_classes):
                    for r_ in range(n_test):
                        th[c, r_] = counts[jrow[r_] + c]
            elif has_c >= 0:
                sc = st[has_c] * r
                for c in range(n_classes):
                    off = c * sc
                    for r_ in range(n_test):
                        th[c, r_] = counts[jrow[r_] + off + xs[r_]]
            else:
                for r_ in range(n_test):
                    th[0, r_] = counts[jrow[r_] + xs[r_]]
            for t in range(T):
                we = W[t, k]
                if we == 0.0:
                    continue
                if per_class:
                    for c in range(n_classes):
                        mc = mix[t, c]
                        tc = th[c]
                        for r_ in range(n_test):
                            mc[r_] += we * tc[r_]
                else:
                    cm = common[t]
                    t0 = th[0]
                    for r_ in range(n_test):
                        cm[r_] += we * t0[r_]
        for t in range(T):
            lw = math.log(sum_w[t])
            if dep[t]:
                for c in range(n_classes):
                    for r_ in range(n_test):
                        out[t, r_, c] += math.log(mix[t, c, r_] + common[t, r_]) - lw
            else:
                for r_ in range(n_test):
                    val = math.log(common[t, r_]) - lw
                    for c in range(n_classes):
                        out[t, r_, c] += val


@njit(cache=True)
def order_edge_probabilities(order: np.ndarray, masks: np.ndarray, scores: np.ndarray,
                             limits: np.ndarray, log_eps_rel: float, class_index: int
                             ) -> tuple[np.ndarray, np.ndarray]:
    """Given an order: ``edge[y, x] = P(y -> x | D, ≺)`` = sum_{Z ∋ y} exp S(x; Z) / sum_Z
    exp S(x; Z) (DESIGN §4), and ``co[x, f] = P({C, f} ⊆ Pa(x) | D, ≺)`` for the class C."""
    n = order.shape[0]
    m = masks.shape[1]
    idx = np.empty(m, dtype=np.int64)
    w = np.empty(m)
    edge = np.zeros((n, n))
    co = np.zeros((n, n))
    cbit = np.uint64(1) << np.uint64(class_index)
    pred = np.uint64(0)
    for p in range(n):
        v = order[p]
        cnt = _window(masks[v], scores[v], limits[v], pred, log_eps_rel, idx, w)
        pred |= np.uint64(1) << np.uint64(v)
        tot = 0.0
        for e in range(cnt):
            tot += w[e]
        for e in range(cnt):
            g = masks[v, idx[e]]
            we = w[e] / tot
            with_c = (g & cbit) != 0
            for b in range(n):
                if (g >> np.uint64(b)) & np.uint64(1):
                    edge[b, v] += we
                    if with_c and b != class_index:
                        co[v, b] += we
    return edge, co
