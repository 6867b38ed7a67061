"""numba kernels for exact and K-best Bayesian network structure learning (DESIGN §3, §4, §9).

Conventions
-----------
* ``data_t``: complete training data transposed, shape (n_vars, n_rows), int32 codes.
* Variable sets are bitmasks (bit v = variable v). A *compressed* index of a parent set
  P ⊆ V∖{v} drops bit v: ``compress(P, v) = (P & (2^v - 1)) | ((P >> (v + 1)) << v)``; it keeps
  the subset order, so clearing one bit of a compressed index removes that variable.
* Local scores ``ls[v, compress(P, v)]`` (natural log, -inf = forbidden parent set).
* The four entry kernels release the GIL (``nogil=True``), so a dashboard thread keeps
  redrawing while a search runs in a worker thread.
* K-best lists are sorted by decreasing score; equal scores are broken by the smaller parent
  mask (parent-set lists) or the smaller (sink, index, index) triple (network lists), so every
  run on the same data gives the same lists (deterministic tie-breaking).

References
----------
Silander, T. & Myllymäki, P. (2006). A simple approach for finding the globally optimal
Bayesian network structure. UAI.
Tian, J., He, R. & Ram, L. (2010). Bayesian model averaging using the k-best Bayesian network
structures. UAI.
Chen, Y. & Tian, J. (2014). Finding the k-best equivalence classes of Bayesian network
structures for model averaging. AAAI.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit


@njit(cache=True)
def _count_terms(cnt: np.ndarray, n_ids: int, hist: np.ndarray, seen: np.ndarray) -> int:
    """Histogram of the cell counts ``cnt[0:n_ids]`` into ``hist`` (distinct values listed in
    ``seen``); ``cnt`` is left zeroed. Returns the number of distinct count values."""
    n_seen = 0
    for i in range(n_ids):
        c = np.int64(cnt[i])
        cnt[i] = 0.0
        if hist[c] == 0:
            seen[n_seen] = c
            n_seen += 1
        hist[c] += 1
    return n_seen


@njit(cache=True)
def _terms_from_hist(hist: np.ndarray, seen: np.ndarray, n_seen: int, score_kind: int,
                     a: float, lg_r: np.ndarray, G: np.ndarray, mask: int) -> float:
    """Set terms of one variable set from the histogram of its cell counts (``hist[c]`` cells
    hold c rows; the distinct c are ``seen[:n_seen]``); K2 also writes ``G[:, mask]``."""
    tot = 0.0
    if score_kind == 0:
        for k in range(n_seen):
            c = seen[k]
            tot += hist[c] * math.lgamma(1.0 + c)
        for tt in range(G.shape[0]):
            g = 0.0
            for k in range(n_seen):
                c = seen[k]
                g += hist[c] * lg_r[tt, c]
            G[tt, mask] = g
    else:
        la = math.lgamma(a)
        for k in range(n_seen):
            c = seen[k]
            tot += hist[c] * (math.lgamma(a + c) - la)
    return tot


@njit(cache=True)
def _terms_direct(cnt: np.ndarray, n_ids: int, score_kind: int, a: float,
                  r_values: np.ndarray, G: np.ndarray, mask: int, clear: bool) -> float:
    """Set terms from fractional cell counts ``cnt[:n_ids]`` (one lgamma per cell); the
    weighted-data counterpart of :func:`_terms_from_hist`. ``clear`` zeroes ``cnt``."""
    tot = 0.0
    if score_kind == 0:
        for tt in range(G.shape[0]):
            G[tt, mask] = 0.0
        for i in range(n_ids):
            c = cnt[i]
            tot += math.lgamma(1.0 + c)
            for tt in range(G.shape[0]):
                G[tt, mask] += math.lgamma(r_values[tt]) - math.lgamma(r_values[tt] + c)
            if clear:
                cnt[i] = 0.0
    else:
        la = math.lgamma(a)
        for i in range(n_ids):
            tot += math.lgamma(a + cnt[i]) - la
            if clear:
                cnt[i] = 0.0
    return tot


@njit(cache=True, nogil=True)
def subset_log_terms(data_t: np.ndarray, weights: np.ndarray, arities: np.ndarray,
                     max_size: int, score_kind: int, ess: float,
                     r_values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per-variable-set sums from which every family's Dirichlet log marginal likelihood follows.

    ``data_t`` holds the distinct rows (patterns) of the data, transposed, and ``weights`` how
    many times each occurs (float64; fractional weights, e.g. boosting's, are allowed and then
    every cell costs one lgamma instead of one histogram entry). For every set S with
    |S| <= ``max_size`` the joint contingency table of S is counted once (depth-first over
    sets; the patterns' dense cell ids of the prefix set are refined by the new variable, so
    a table never has more cells than patterns; once every pattern has its own cell,
    supersets have the same cell counts and are not recounted) and summarised over its
    non-empty cells c with counts N_c:

    * BDeu (``score_kind`` 1): ``A[S] = sum_c [lgamma(ess / Q_S + N_c) - lgamma(ess / Q_S)]``,
      Q_S = prod_{u in S} r_u. The BDeu family score is then
      ``log ML(v | P) = A[P ∪ {v}] - A[P]`` (Heckerman et al. 1995, eq. 8 with
      a_ijk = ess / (r_v q_v): the a_ijk sum is A of the family and, because
      a_ij = ess / Q_P, the a_ij sum is -A[P]).
    * K2 (``score_kind`` 0): ``A[S] = sum_c lgamma(1 + N_c)`` and
      ``G[t, S] = sum_c [lgamma(r_t) - lgamma(r_t + N_c)]`` for each distinct arity
      ``r_values[t]``, so ``log ML(v | P) = A[P ∪ {v}] + G[t(r_v), P]`` (Cooper & Herskovits
      1992).

    Sets larger than ``max_size`` keep NaN. Returns ``A`` (2^n,) and ``G`` (len(r_values), 2^n)
    (``G`` is (0, 0) for BDeu).
    """
    n, n_pat = data_t.shape
    total = 0.0
    integral = True
    for p in range(n_pat):
        total += weights[p]
        if weights[p] != math.floor(weights[p]):
            integral = False
    n_rows = np.int64(total) if integral else 0
    n_sets = 1 << n
    A = np.full(n_sets, np.nan)
    n_r = r_values.shape[0] if score_kind == 0 else 0
    G = np.zeros((n_r, n_sets if score_kind == 0 else 0))
    r_max = 1
    for v in range(n):
        r_max = max(r_max, arities[v])
    lg_r = np.zeros((n_r, n_rows + 1))
    for t in range(n_r):
        base = math.lgamma(r_values[t])
        for c in range(n_rows + 1):
            lg_r[t, c] = base - math.lgamma(r_values[t] + c)
    hist = np.zeros(n_rows + 1, dtype=np.int64)
    seen = np.zeros(n_rows + 1, dtype=np.int64)
    # empty set: one cell holding every row
    one = np.full(1, total)
    if integral:
        hist[n_rows] = 1
        seen[0] = n_rows
        A[0] = _terms_from_hist(hist, seen, 1, score_kind, ess, lg_r, G, 0)
        hist[n_rows] = 0
    else:
        A[0] = _terms_direct(one, 1, score_kind, ess, r_values, G, 0, False)
    L = min(max_size, n)
    if L == 0 or n == 0:
        return A, G
    # histogram of the pattern weights: the cell counts of every saturated set
    sat_hist = np.zeros(n_rows + 1, dtype=np.int64)
    sat_seen = np.zeros(n_rows + 1, dtype=np.int64)
    n_sat = 0
    for p in range(n_pat):
        c = np.int64(weights[p]) if integral else 0
        if sat_hist[c] == 0:
            sat_seen[n_sat] = c
            n_sat += 1
        sat_hist[c] += 1
    ids = np.zeros((L + 1, n_pat), dtype=np.int32)
    n_ids = np.ones(L + 1, dtype=np.int64)
    q = np.ones(L + 1)
    masks = np.zeros(L + 1, dtype=np.int64)
    remap = np.zeros(n_pat * r_max + 1, dtype=np.int32)
    stamps = np.zeros(n_pat * r_max + 1, dtype=np.int64)
    stamp = 0
    cnt = np.zeros(n_pat + 1)
    comb = np.zeros(L, dtype=np.int64)
    t = 0
    comb[0] = 0
    while t >= 0:
        if comb[t] >= n:
            t -= 1
            if t >= 0:
                comb[t] += 1
            continue
        v = comb[t]
        r = arities[v]
        mask = masks[t] | (1 << v)
        masks[t + 1] = mask
        q[t + 1] = q[t] * r
        a = ess / q[t + 1]
        if n_ids[t] == n_pat:
            # every pattern already in its own cell: the counts cannot change
            n_ids[t + 1] = n_pat
            if integral:
                A[mask] = _terms_from_hist(sat_hist, sat_seen, n_sat, score_kind, a, lg_r, G,
                                           mask)
            else:
                A[mask] = _terms_direct(weights, n_pat, score_kind, a, r_values, G, mask,
                                        False)
        else:
            row_v = data_t[v]
            prev = ids[t]
            cur = ids[t + 1]
            n_new = 0
            stamp += 1
            for p in range(n_pat):
                key = prev[p] * r + row_v[p]
                if stamps[key] != stamp:
                    stamps[key] = stamp
                    remap[key] = n_new
                    n_new += 1
                d = remap[key]
                cur[p] = d
                cnt[d] += weights[p]
            n_ids[t + 1] = n_new
            if integral:
                n_seen = _count_terms(cnt, n_new, hist, seen)
                A[mask] = _terms_from_hist(hist, seen, n_seen, score_kind, a, lg_r, G, mask)
                for k in range(n_seen):
                    hist[seen[k]] = 0
            else:
                A[mask] = _terms_direct(cnt, n_new, score_kind, a, r_values, G, mask, True)
        if t + 1 < L and comb[t] + 1 < n:
            t += 1
            comb[t] = comb[t - 1] + 1
        else:
            comb[t] += 1
    return A, G


@njit(cache=True)
def _popcount(x: np.int64) -> int:
    c = 0
    while x:
        x &= x - 1
        c += 1
    return c


@njit(cache=True)
def expand_index(idx: np.int64, v: int) -> np.int64:
    """Compressed parent-set index of variable v -> parent bitmask over all variables."""
    low = idx & ((1 << v) - 1)
    return low | ((idx >> v) << (v + 1))


@njit(cache=True)
def compress_mask(mask: np.int64, v: int) -> np.int64:
    """Parent bitmask (bit v clear) -> compressed index for variable v."""
    low = mask & ((1 << v) - 1)
    return low | ((mask >> (v + 1)) << v)


@njit(cache=True, nogil=True)
def local_score_table(A: np.ndarray, G: np.ndarray, r_index: np.ndarray, m: int,
                      forced: np.int64, score_kind: int, max_parents: int) -> np.ndarray:
    """Local scores ``ls[v, compress(P, v)]`` of the DP variables 0..m-1 (bits 0..m-1 of the
    set masks) for every P ⊆ {0..m-1}∖{v}, each family scored with the extra parents ``forced``
    (a mask of variables >= m, e.g. the class in EANB): ls = log ML(v | P ∪ forced), from the
    set terms of :func:`subset_log_terms`. Parent sets with more than ``max_parents`` DP
    variables get -inf."""
    H = 1 << (m - 1) if m > 0 else 0
    ls = np.empty((m, H))
    for v in range(m):
        for idx in range(H):
            if _popcount(idx) > max_parents:
                ls[v, idx] = -np.inf
                continue
            P = expand_index(idx, v) | forced
            fam = P | (1 << v)
            if score_kind == 0:
                ls[v, idx] = A[fam] + G[r_index[v], P]
            else:
                ls[v, idx] = A[fam] - A[P]
    return ls


@njit(cache=True, nogil=True)
def kbest_parent_sets(ls: np.ndarray, K: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The K best parent sets of every variable v inside every candidate set W ⊆ V∖{v}
    (Silander & Myllymäki 2006 for K = 1; Tian, He & Ram 2010): the list of W merges W itself
    with the lists of W∖{u}, u in W. A set P ⊊ W sits at the head of the lists of every
    W∖{u}, u ∉ P, at the same time; all those heads advance together, so it is kept once.

    Returns ``bs`` (m, 2^(m-1), K) scores, ``bm`` (m, 2^(m-1), K) parent masks (over all m
    variables, uint32) and ``bl`` (m, 2^(m-1)) list lengths; entries indexed by compressed W.
    """
    m, H = ls.shape
    bs = np.full((m, H, K), -np.inf)
    bm = np.zeros((m, H, K), dtype=np.uint32)
    bl = np.zeros((m, H), dtype=np.int32)
    mm = max(m, 1)
    subs = np.zeros(mm, dtype=np.int64)
    pos = np.zeros(mm, dtype=np.int64)
    lens = np.zeros(mm, dtype=np.int64)
    hsc = np.zeros(mm)
    hmk = np.zeros(mm, dtype=np.int64)
    for v in range(m):
        for w in range(H):
            nb = 0
            x = w
            while x:
                low = x & -x
                sb = w ^ low
                x ^= low
                ln = bl[v, sb]
                if ln > 0:
                    subs[nb] = sb
                    pos[nb] = 0
                    lens[nb] = ln
                    hsc[nb] = bs[v, sb, 0]
                    hmk[nb] = np.int64(bm[v, sb, 0])
                    nb += 1
            own = ls[v, w]
            own_left = own > -np.inf
            own_mask = expand_index(w, v)
            cnt = 0
            while cnt < K:
                best = -np.inf
                best_mask = np.int64(0)
                found = False
                if own_left:
                    best = own
                    best_mask = own_mask
                    found = True
                for h in range(nb):
                    if pos[h] < lens[h]:
                        sc = hsc[h]
                        if (not found) or sc > best or (sc == best and hmk[h] < best_mask):
                            best = sc
                            best_mask = hmk[h]
                            found = True
                if not found:
                    break
                if own_left and best_mask == own_mask:
                    own_left = False
                for h in range(nb):
                    if pos[h] < lens[h] and hmk[h] == best_mask:
                        p = pos[h] + 1
                        pos[h] = p
                        if p < lens[h]:
                            hsc[h] = bs[v, subs[h], p]
                            hmk[h] = np.int64(bm[v, subs[h], p])
                bs[v, w, cnt] = best
                bm[v, w, cnt] = best_mask
                cnt += 1
            bl[v, w] = cnt
    return bs, bm, bl


@njit(cache=True)
def _heap_less(hs: np.ndarray, ht: np.ndarray, a: int, b: int) -> bool:
    """True if entry a ranks before entry b (higher score, then smaller tie key)."""
    if hs[a] != hs[b]:
        return hs[a] > hs[b]
    return ht[a] < ht[b]


@njit(cache=True)
def _heap_push(hs, ht, size, score, tie):
    k = size
    while k > 0:
        par = (k - 1) >> 1
        if hs[par] > score or (hs[par] == score and ht[par] < tie):
            break
        hs[k] = hs[par]
        ht[k] = ht[par]
        k = par
    hs[k] = score
    ht[k] = tie
    return size + 1


@njit(cache=True)
def _heap_pop(hs, ht, size):
    """Remove the top entry (returned as (score, tie)) and restore the heap."""
    top_s = hs[0]
    top_t = ht[0]
    size -= 1
    ls_ = hs[size]
    lt = ht[size]
    k = 0
    while True:
        c = 2 * k + 1
        if c >= size:
            break
        if c + 1 < size and _heap_less(hs, ht, c + 1, c):
            c += 1
        if hs[c] > ls_ or (hs[c] == ls_ and ht[c] < lt):
            hs[k] = hs[c]
            ht[k] = ht[c]
            k = c
        else:
            break
    hs[k] = ls_
    ht[k] = lt
    return size, top_s, top_t


@njit(cache=True)
def _reconstruct(W: np.int64, idx: int, nsink: np.ndarray, ni: np.ndarray, nj: np.ndarray,
                 bm: np.ndarray, pa: np.ndarray, need: np.int64 = -1) -> None:
    """Parent masks ``pa[v]`` of the ``idx``-th network on the set W (unwinding the sinks);
    stops once every variable in the mask ``need`` has been visited (default: all)."""
    U = W
    k = idx
    while U and (U & need):
        s = nsink[U, k]
        sub = U & ~(np.int64(1) << s)
        pa[s] = bm[s, compress_mask(sub, s), nj[U, k]]
        k = ni[U, k]
        U = sub


@njit(cache=True, nogil=True)
def kbest_networks(bs: np.ndarray, bm: np.ndarray, bl: np.ndarray, K: int, ec_mode: bool,
                   ecode: np.ndarray, vcode: np.ndarray):
    """K best DAGs (``ec_mode`` False; Tian, He & Ram 2010) or K best Markov equivalence
    classes (``ec_mode`` True; Chen & Tian 2014) over every subset W of the m variables.

    best(W) lists merge, over the sinks s in W, the sums (k-th network on W∖{s}) + (k'-th
    parent set of s inside W∖{s}), enumerated lazily in score order with one heap. DAG mode
    keeps a candidate only when s is its largest sink (a DAG is built once, from its largest
    sink; the sink set is carried per entry). EC mode keeps a candidate only when its
    equivalence-class key (64-bit Zobrist hash of skeleton edges ``ecode[a, b]`` and
    v-structures ``vcode[a, b, c]`` = a -> c <- b, a < b; Verma & Pearl 1990) differs from the
    keys already accepted for W; the key is updated incrementally from the sub-network.

    Returns (``score`` (K,), ``parents`` (K, m) uint32 parent masks, ``keys`` (K,) uint64,
    ``count``) for the full set, plus the per-subset tables for inspection.
    """
    m = bs.shape[0]
    S = 1 << m
    ns = np.full((S, K), -np.inf)
    nsink = np.zeros((S, K), dtype=np.int8)
    ni = np.zeros((S, K), dtype=np.int32)
    nj = np.zeros((S, K), dtype=np.int32)
    nl = np.zeros(S, dtype=np.int32)
    nsinks = np.zeros((S, K), dtype=np.uint32)
    nkey = np.zeros((S, K), dtype=np.uint64)
    ns[0, 0] = 0.0
    nl[0] = 1
    cap = m + 2 * m * K * K + 4
    hs = np.empty(cap)
    ht = np.empty(cap, dtype=np.int64)
    pa = np.zeros(max(m, 1), dtype=np.uint32)
    KK = np.int64(K) * K
    tsize = 4
    while tsize < 4 * K:
        tsize *= 2
    hmask = np.uint64(tsize - 1)
    tkey = np.zeros(tsize, dtype=np.uint64)
    tstamp = np.full(tsize, -1, dtype=np.int64)
    for W in range(1, S):
        size = 0
        x = W
        while x:
            low = x & -x
            s = 0
            while (low >> s) != 1:
                s += 1
            x ^= low
            sub = W ^ low
            w = compress_mask(sub, s)
            if bl[s, w] > 0 and nl[sub] > 0:
                size = _heap_push(hs, ht, size, ns[sub, 0] + bs[s, w, 0], s * KK)
        cnt = 0
        while cnt < K and size > 0:
            size, sc, tie = _heap_pop(hs, ht, size)
            s = tie // KK
            i = (tie // K) % K
            j = tie % K
            sub = W & ~(np.int64(1) << s)
            w = compress_mask(sub, s)
            if j + 1 < bl[s, w]:
                size = _heap_push(hs, ht, size, ns[sub, i] + bs[s, w, j + 1], tie + 1)
            if j == 0 and i + 1 < nl[sub]:
                size = _heap_push(hs, ht, size, ns[sub, i + 1] + bs[s, w, 0], tie + K)
            P = np.int64(bm[s, w, j])
            if ec_mode:
                key = nkey[sub, i]
                y = P
                while y:
                    lo = y & -y
                    p = 0
                    while (lo >> p) != 1:
                        p += 1
                    y ^= lo
                    if p < s:
                        key ^= ecode[p, s]
                    else:
                        key ^= ecode[s, p]
                if _popcount(P) >= 2:
                    _reconstruct(sub, i, nsink, ni, nj, bm, pa, P)
                    for a in range(m):
                        if not (P >> a) & 1:
                            continue
                        for b in range(a + 1, m):
                            if not (P >> b) & 1:
                                continue
                            if ((np.int64(pa[a]) >> b) & 1) or ((np.int64(pa[b]) >> a) & 1):
                                continue
                            key ^= vcode[a, b, s]
                # open-addressing set of the keys accepted for W (stamped, never cleared)
                slot = np.int64(key & hmask)
                dup = False
                while tstamp[slot] == W:
                    if tkey[slot] == key:
                        dup = True
                        break
                    slot = (slot + 1) & hmask
                if dup:
                    continue
                tstamp[slot] = W
                tkey[slot] = key
                nkey[W, cnt] = key
            else:
                sk = np.int64(nsinks[sub, i]) & ~P
                if (sk >> (s + 1)) != 0:
                    continue
                nsinks[W, cnt] = sk | (np.int64(1) << s)
            ns[W, cnt] = sc
            nsink[W, cnt] = s
            ni[W, cnt] = i
            nj[W, cnt] = j
            cnt += 1
        nl[W] = cnt
    full = S - 1
    count = nl[full]
    scores = ns[full, :count].copy()
    parents = np.zeros((count, m), dtype=np.uint32)
    for k in range(count):
        _reconstruct(np.int64(full), k, nsink, ni, nj, bm, pa)
        for v in range(m):
            parents[k, v] = pa[v]
    keys = nkey[full, :count].copy()
    return scores, parents, keys, count
