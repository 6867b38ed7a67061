"""numba kernel: eq. 9 joints of rows with missing values, summed out by node factors
(Hwang & Zhang 2005 eq. 9; DESIGN §4, §15).

Under one order t eq. 9 is a product of node terms, log P(c, x | D, ≺_t) = Σ_v τ_tv(x, c),
and node v's term depends on x only through S_tv = {v} ∪ U_tv, U_tv the variables in some
parent set of v with nonzero window weight (:meth:`ScoreTable.possible_parents`). A row with
missing values K summed out (the barren ones left out, DESIGN §4) is

    log P(c, x_obs | D, ≺_t) = log Σ_{x_K} exp Σ_{v affected} τ_tv(x, c) + Σ_{v other} τ_tv(x, c)

over all joint states of K (exact) or ``n_mc`` drawn completions with the importance weight
(Monte Carlo). :meth:`OrderMCMCBMA._summed_out` computes every completion's row through the
generic kernel, each node's term over every parent set per completion. Here each node's term is
tabulated once over D = K ∩ S_tv only (its factor: at most the completions' count of entries,
usually far fewer, as a node depends on few of the missing values) and the completions add
table entries. When the rows agree wherever they are observed (the coalitions of one case's
Shapley values, DESIGN §15) a factor depends on (t, v, D) alone and is computed once for all
rows of the call (``memo``). Same arithmetic per term as
:func:`bnma_core.kernels.orders.orders_log_joint` (the same sets in the same order), so the
joints equal the completion-by-completion ones to rounding (tested to 1e-9 on the log joints and
on the explanations built from them).

Two passes: node by node, each node's tables (a table set by set, an odometer over D moving
each set's CPT index by the changed parent's stride; :func:`_tabulate`) and which table each
(order, row) pair reads; then pair by pair, its completions' sums in one accumulator of at most
``max_missing_states`` (or ``n_mc``) entries that stays in the cache, the nodes' tables added in
node order (the same additions in the same order as one accumulator over all pairs filled node
by node, so the same bits), and its log-sum-exp.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from .orders import (
    CptCache,
    TableArrays,
    _mask_parents,
    _node_windows,
    cached_family_cpt,
    window_buffers,
)

MEMO_MAX_VARS = 12
"""A node whose S_tv holds more variables than this is not memoised (2^|S| slots per order)."""


@njit(cache=True)
def _tabulate(x: np.ndarray, v: int, t: int, nd: int, dvars: np.ndarray, dsize: int,
              arities: np.ndarray, nw: np.ndarray, wk: np.ndarray, wW: np.ndarray,
              knpa: np.ndarray, kpa: np.ndarray, kst: np.ndarray, khasc: np.ndarray,
              koff: np.ndarray, cpts: np.ndarray, r: int, class_index: int, C: int, lw: float,
              dep: bool, mixd: np.ndarray, comd: np.ndarray, qstep: np.ndarray,
              qdig: np.ndarray, dst: np.ndarray, d0: int) -> None:
    """Node v's eq. 9 term under order t, log [Σ_Z w_Z θ̂(x_v | z)] − log Σ_Z w_Z for every
    class, at every joint state of D = ``dvars[:nd]`` (the first fastest; ``x`` the row's
    other values) into ``dst[d0:]`` (state s, class c at ``d0 + s C + c``), accumulated as
    :func:`bnma_core.kernels.orders._mix_in` does (sets in increasing index; per-class sets
    apart from the others), the same sums in the same order for each state. Set by set: a
    set's index from the values outside D is computed once and an odometer over D moves it by
    the changed parent's stride (``mixd``, ``comd``, ``qstep``, ``qdig`` work arrays of at
    least ``dsize`` C, ``dsize``, ``nd``, ``nd``)."""
    for s_ in range(dsize * C):
        mixd[s_] = 0.0
    for s_ in range(dsize):
        comd[s_] = 0.0
    vq = -1  # v's place in D (v summed out)
    for q in range(nd):
        if dvars[q] == v and v != class_index:
            vq = q
    for e in range(nw[t]):
        kk = wk[t, e]
        we = wW[t, e]
        hc = khasc[kk]
        j0 = 0
        for q in range(nd):
            qstep[q] = 0
        for d in range(knpa[kk]):
            if d != hc:
                u = kpa[kk, d]
                inD = False
                for q in range(nd):
                    if dvars[q] == u:
                        qstep[q] = kst[kk, d]
                        inD = True
                if not inD:
                    j0 += x[u] * kst[kk, d]
        sc = kst[kk, hc] * r if hc >= 0 else 0
        for q in range(nd):
            qdig[q] = 0
        j = j0
        for s_ in range(dsize):
            b = j * r + koff[kk]
            xv = qdig[vq] if vq >= 0 else x[v]
            if v == class_index:
                for c in range(C):
                    mixd[s_ * C + c] += we * cpts[b + c]
            elif hc >= 0 and C == 2:
                mixd[2 * s_] += we * cpts[b + xv]
                mixd[2 * s_ + 1] += we * cpts[b + sc + xv]
            elif hc >= 0:
                for c in range(C):
                    mixd[s_ * C + c] += we * cpts[b + c * sc + xv]
            else:
                comd[s_] += we * cpts[b + xv]
            for q in range(nd):  # odometer over D, the first fastest
                qdig[q] += 1
                j += qstep[q]
                if qdig[q] < arities[dvars[q]]:
                    break
                j -= qdig[q] * qstep[q]
                qdig[q] = 0
    for s_ in range(dsize):
        if dep:
            for c in range(C):
                dst[d0 + s_ * C + c] = math.log(mixd[s_ * C + c] + comd[s_]) - lw
        else:
            val = math.log(comd[s_]) - lw
            for c in range(C):
                dst[d0 + s_ * C + c] = val


@njit(cache=True)
def _scope(summed: np.ndarray, inS: np.ndarray, arities: np.ndarray, dvars: np.ndarray,
           dstr: np.ndarray) -> tuple[int, int]:
    """D = K ∩ S_tv of one (order, row), ascending, into ``dvars[:nd]`` with strides ``dstr``
    (the first fastest): returns (nd, its joint states)."""
    nd = 0
    dsize = 1
    for u in range(summed.shape[0]):
        if summed[u] and inS[u]:
            dvars[nd] = u
            dstr[nd] = dsize
            dsize *= arities[u]
            nd += 1
    return nd, dsize


@njit(cache=True)
def _grow(pool: np.ndarray, used: int, need: int) -> np.ndarray:
    if used + need <= pool.shape[0]:
        return pool
    new = np.empty(max(2 * pool.shape[0], used + need))
    new[:used] = pool[:used]
    return new


@njit(cache=True)
def _most_parents(masks: np.ndarray) -> int:
    """The most parents of any set (the largest popcount of the masks), at least 1."""
    width = 1
    for v in range(masks.shape[0]):
        for k in range(masks.shape[1]):
            g = masks[v, k]
            bits = 0
            while g != np.uint64(0):
                g &= g - np.uint64(1)
                bits += 1
            width = max(width, bits)
    return min(width, max(masks.shape[0], 1))


@njit(cache=True)
def _node_families(tab: TableArrays, train_t: np.ndarray, weights: np.ndarray,
                   cache: CptCache, arities: np.ndarray, score_kind: int, ess: float,
                   class_index: int, v: int, used: np.ndarray, pa: np.ndarray, st: np.ndarray,
                   knpa: np.ndarray, kpa: np.ndarray, kst: np.ndarray, khasc: np.ndarray,
                   koff: np.ndarray, kloc: np.ndarray, kidx: np.ndarray) -> np.ndarray:
    """Node v's sets some order uses (``used``), numbered kk = ``kloc[k]`` (``kidx[kk]`` = k):
    their parents and strides (``kpa``, ``kst``, ``knpa``), the class's place among them
    (``khasc``), and an array holding their posterior-predictive CPTs, set kk's at
    ``koff[kk]``: the table's ``cache`` itself when it holds them all, else a new array they
    are copied into or counted into once (:func:`~bnma_core.kernels.orders.cached_family_cpt`).
    """
    r = arities[v]
    nk = 0
    size = 0
    all_cached = cache.off.shape[0] > 0
    for k in range(tab.masks.shape[1]):
        if not used[k]:
            continue
        npa, q, has_c = _mask_parents(tab, v, tab.masks[v, k], arities, class_index, pa, st)
        knpa[nk] = npa
        khasc[nk] = has_c
        for d in range(npa):
            kpa[nk, d] = pa[d]
            kst[nk, d] = st[d]
        koff[nk] = size
        kloc[k] = nk
        kidx[nk] = k
        size += q * r
        nk += 1
        all_cached = all_cached and cache.off[v, k] >= 0
    if all_cached:  # read in place
        for kk in range(nk):
            koff[kk] = cache.off[v, kidx[kk]]
        return cache.flat
    cpts = np.empty(size)
    for kk in range(nk):
        npa = knpa[kk]
        q = 1
        for d in range(npa):
            q *= arities[kpa[kk, d]]
        a = 1.0 if score_kind == 0 else ess / (r * q)
        cpt, base = cached_family_cpt(cache, train_t, weights, v, kidx[kk], kpa[kk, :npa],
                                      kst[kk, :npa], q, r, a)
        cpts[koff[kk]:koff[kk] + q * r] = cpt[base:base + q * r]
    return cpts


@njit(cache=True)
def _order_windows(W: np.ndarray, kloc: np.ndarray, knpa: np.ndarray, kpa: np.ndarray,
                   class_index: int, v: int, nw: np.ndarray, wk: np.ndarray, wW: np.ndarray,
                   inS: np.ndarray, spos: np.ndarray) -> int:
    """Each order t's window of node v (``nw[t]`` sets ``wk[t]`` with weights ``wW[t]``, in
    increasing set index) and the variables its term reads, S_tv without the class (``inS``,
    their rank ``spos``); returns the largest |S_tv|."""
    T, m = W.shape
    n = inS.shape[1]
    smax = 0
    for t in range(T):
        e = 0
        inS[t, :] = False
        for k in range(m):
            if W[t, k] > 0.0:
                kk = kloc[k]
                wk[t, e] = kk
                wW[t, e] = W[t, k]
                e += 1
                for d in range(knpa[kk]):
                    if kpa[kk, d] != class_index:
                        inS[t, kpa[kk, d]] = True
        nw[t] = e
        if v != class_index:
            inS[t, v] = True
        s = 0
        for u in range(n):
            if inS[t, u]:
                spos[t, u] = s
                s += 1
            else:
                spos[t, u] = -1
        smax = max(smax, s)
    return smax


@njit(cache=True)
def _log_sum(acc: np.ndarray, cnt: int, C: int, logw: float, once: np.ndarray,
             out: np.ndarray) -> None:
    """``out[c]`` = log Σ_s exp ``acc[s C + c]`` over a pair's ``cnt`` completions + its log
    weight + its constant terms ``once[c]``; -inf when every completion is."""
    for c in range(C):
        mx = -np.inf
        for s_ in range(cnt):
            val = acc[s_ * C + c]
            if val > mx:
                mx = val
        if mx == -np.inf:
            out[c] = -np.inf
            continue
        tot = 0.0
        for s_ in range(cnt):
            tot += math.exp(acc[s_ * C + c] - mx)
        out[c] = math.log(tot) + mx + logw + once[c]


@njit(cache=True)
def _add_enumerated(summed: np.ndarray, arities: np.ndarray, dvars: np.ndarray,
                    dstr: np.ndarray, nd: int, pool: np.ndarray, base: int, C: int, cnt: int,
                    acc: np.ndarray, o: int, kvars: np.ndarray, kdig: np.ndarray,
                    kstep: np.ndarray) -> None:
    """Add a node's table (over D = ``dvars[:nd]``, strides ``dstr``, at ``pool[base:]``) to
    every one of the ``cnt`` states of the summed values K (``summed``, the first fastest) in
    ``acc[o:]``, D's index kept by an odometer over K."""
    nkv = 0
    for u in range(summed.shape[0]):
        if summed[u]:
            kvars[nkv] = u
            kdig[nkv] = 0
            kstep[nkv] = 0
            nkv += 1
    for d in range(nd):
        for q in range(nkv):
            if kvars[q] == dvars[d]:
                kstep[q] = dstr[d]
    # the first summed variable in an inner loop of fixed stride, the others by the odometer
    a0 = arities[kvars[0]]
    st0 = kstep[0] * C
    j = 0
    for s0 in range(0, cnt, a0):
        b = base + j * C
        oo = o + s0 * C
        if C == 2:  # the common case, unrolled
            for k in range(a0):
                acc[oo + 2 * k] += pool[b + k * st0]
                acc[oo + 2 * k + 1] += pool[b + k * st0 + 1]
        else:
            for k in range(a0):
                for c in range(C):
                    acc[oo + k * C + c] += pool[b + k * st0 + c]
        for q in range(1, nkv):
            kdig[q] += 1
            j += kstep[q]
            if kdig[q] < arities[kvars[q]]:
                break
            j -= kdig[q] * kstep[q]
            kdig[q] = 0


@njit(cache=True)
def _drawn_terms(x: np.ndarray, v: int, t: int, summed: np.ndarray, draws: np.ndarray,
                 mc: int, cnt: int, nw: np.ndarray, wk: np.ndarray, wW: np.ndarray,
                 knpa: np.ndarray, kpa: np.ndarray, kst: np.ndarray, khasc: np.ndarray,
                 koff: np.ndarray, cpts: np.ndarray, r: int, class_index: int, C: int,
                 lw: float, dep: bool, dvars: np.ndarray, dstr: np.ndarray,
                 mixd: np.ndarray, comd: np.ndarray, dst: np.ndarray, o: int) -> None:
    """Node v's term under order t at each of the ``cnt`` drawn completions (``draws[mc:]``;
    ``x`` the row's observed values) into ``dst[o:]`` (draw s, class c at ``o + s C + c``): the
    arithmetic of :func:`_tabulate` at one state, set by set, each set's index from the
    observed parents computed once."""
    for s_ in range(cnt * C):
        mixd[s_] = 0.0
    for s_ in range(cnt):
        comd[s_] = 0.0
    v_drawn = v != class_index and summed[v]
    for e in range(nw[t]):
        kk = wk[t, e]
        we = wW[t, e]
        hc = khasc[kk]
        j0 = 0
        nvar = 0
        for d in range(knpa[kk]):
            if d != hc:
                u = kpa[kk, d]
                if summed[u]:
                    dvars[nvar] = u
                    dstr[nvar] = kst[kk, d]
                    nvar += 1
                else:
                    j0 += x[u] * kst[kk, d]
        sc = kst[kk, hc] * r if hc >= 0 else 0
        for s_ in range(cnt):
            drow = mc + s_
            j = j0
            for q in range(nvar):
                j += draws[drow, dvars[q]] * dstr[q]
            j = j * r + koff[kk]
            xv = draws[drow, v] if v_drawn else x[v]
            if v == class_index:
                for c in range(C):
                    mixd[s_ * C + c] += we * cpts[j + c]
            elif hc >= 0 and C == 2:
                mixd[2 * s_] += we * cpts[j + xv]
                mixd[2 * s_ + 1] += we * cpts[j + sc + xv]
            elif hc >= 0:
                for c in range(C):
                    mixd[s_ * C + c] += we * cpts[j + c * sc + xv]
            else:
                comd[s_] += we * cpts[j + xv]
    for s_ in range(cnt):
        if dep:
            for c in range(C):
                dst[o + s_ * C + c] = math.log(mixd[s_ * C + c] + comd[s_]) - lw
        else:
            val = math.log(comd[s_]) - lw
            for c in range(C):
                dst[o + s_ * C + c] = val


@njit(cache=True, nogil=True)
def marginal_log_joints(tab: TableArrays, orders: np.ndarray, train_t: np.ndarray,
                        weights: np.ndarray, cache: CptCache, arities: np.ndarray,
                        score_kind: int, ess: float, class_index: int, rows_t: np.ndarray,
                        summed: np.ndarray,
                        barren: np.ndarray, mc_start: np.ndarray, draws: np.ndarray,
                        n_mc: int, logw: np.ndarray, memo: bool, max_table: int,
                        out: np.ndarray) -> None:
    """log P(c, x_obs | D, ≺_t) of rows with missing values (module docstring).

    Parameters
    ----------
    tab, orders, train_t, weights, cache, arities, score_kind, ess, class_index
        As :func:`bnma_core.kernels.orders.orders_log_joint` (``orders`` (T, n); ``cache``
        the table's :class:`~bnma_core.kernels.orders.CptCache` when ``train_t`` are its own
        rows, else :func:`~bnma_core.kernels.orders.no_cpt_cache`).
    rows_t : (n, R) int32
        The rows, transposed (-1 = missing; the class row is ignored).
    summed, barren : (T, R, n) bool
        Under order t, row r's values summed out (K) and left out (barren: their terms are
        dropped); every other value is observed.
    mc_start : (T, R) int64
        -1: K enumerated over all its joint states; else the first of the ``n_mc`` rows of
        ``draws`` (n_draws, n) holding row r's drawn completion of K under order t.
    logw : (T, R) float
        Log importance weight added to each completion (0 when enumerated).
    memo : bool
        The rows agree wherever two of them are observed: node factors are shared by rows.
    max_table : int
        With ``memo``, a factor of up to this many states is tabulated even when a pair has
        fewer completions (it serves the other rows too).
    out : (T, R, n_classes) float, overwritten.
    """
    T, n = orders.shape
    R = rows_t.shape[1]
    C = arities[class_index]
    m = tab.masks.shape[1]
    n_c = np.empty((T, R), dtype=np.int64)  # completions per pair
    for t in range(T):
        for i in range(R):
            if mc_start[t, i] >= 0:
                n_c[t, i] = n_mc
            else:
                cnt = 1
                for u in range(n):
                    if summed[t, i, u]:
                        cnt *= arities[u]
                n_c[t, i] = cnt
    once = np.zeros((T, R, C))
    # pass 1, node by node: each node's tables (``pool``, shared by the rows with ``memo``)
    # and where each pair's is (``tb``: -1 none, the node barren or its term constant (added
    # to ``once``); -2 its values at the pair's draws, stored at ``dbuf[doff]``)
    tb = np.full((T, R, n), -1, dtype=np.int64)
    doff = np.zeros((T, R, n), dtype=np.int64)
    inS_v = np.zeros((n, T, n), dtype=np.bool_)
    pos, W, used, sum_w, dep, idx, wv, pa, st = window_buffers(orders, m)
    knpa = np.empty(m, dtype=np.int64)
    width = _most_parents(tab.masks)
    kpa = np.empty((m, width), dtype=np.int64)
    kst = np.empty((m, width), dtype=np.int64)
    khasc = np.empty(m, dtype=np.int64)
    koff = np.empty(m, dtype=np.int64)
    kloc = np.empty(m, dtype=np.int64)
    kidx = np.empty(m, dtype=np.int64)
    nw = np.empty(T, dtype=np.int64)
    wk = np.empty((T, m), dtype=np.int64)
    wW = np.empty((T, m))
    inS = np.zeros((T, n), dtype=np.bool_)
    spos = np.full((T, n), -1, dtype=np.int64)
    mixd = np.empty(max(n_mc, 1) * C)
    comd = np.empty(max(n_mc, 1))
    x = np.empty(n, dtype=np.int64)
    dvars = np.empty(n, dtype=np.int64)
    dstr = np.empty(n, dtype=np.int64)
    kvars = np.empty(n, dtype=np.int64)
    kdig = np.empty(n, dtype=np.int64)
    kstep = np.empty(n, dtype=np.int64)
    pool = np.empty(4096 * C)
    n_pool = 0
    dbuf = np.empty(max(n_mc, 1) * C)
    n_dbuf = 0
    tmix = np.empty(4096 * C)
    tcom = np.empty(4096)
    for v in range(n):
        r = arities[v]
        _node_windows(tab, orders, pos, v, class_index, W, used, sum_w, dep, idx, wv)
        cpts = _node_families(tab, train_t, weights, cache, arities, score_kind, ess,
                              class_index, v, used, pa, st, knpa, kpa, kst, khasc, koff, kloc,
                              kidx)
        smax = _order_windows(W, kloc, knpa, kpa, class_index, v, nw, wk, wW, inS, spos)
        inS_v[v] = inS
        use_memo = memo and smax <= MEMO_MAX_VARS
        slots = np.full((T, 1 << smax) if use_memo else (1, 1), -1, dtype=np.int64)
        for t in range(T):
            lw = math.log(sum_w[t])
            for i in range(R):
                if barren[t, i, v]:
                    continue
                nd, dsize = _scope(summed[t, i], inS[t], arities, dvars, dstr)
                key = 0  # D's bits among S_tv's ranks
                for d in range(nd if use_memo else 0):
                    key |= 1 << spos[t, dvars[d]]
                for u in range(n):
                    x[u] = max(rows_t[u, i], 0)
                cnt = n_c[t, i]
                if not (nd == 0 or dsize <= cnt or (use_memo and dsize <= max_table)):
                    # too many states of D to tabulate: the term at each draw, set by set
                    dbuf = _grow(dbuf, n_dbuf, cnt * C)
                    _drawn_terms(x, v, t, summed[t, i], draws, mc_start[t, i], cnt, nw, wk,
                                 wW, knpa, kpa, kst, khasc, koff, cpts, r, class_index, C, lw,
                                 dep[t], dvars, dstr, mixd, comd, dbuf, n_dbuf)
                    tb[t, i, v] = -2
                    doff[t, i, v] = n_dbuf
                    n_dbuf += cnt * C
                    continue
                if use_memo and slots[t, key] >= 0:
                    base = slots[t, key]
                else:
                    pool = _grow(pool, n_pool, dsize * C)
                    base = n_pool
                    if dsize > tmix.shape[0] // C:
                        tmix = np.empty(dsize * C)
                        tcom = np.empty(dsize)
                    _tabulate(x, v, t, nd, dvars, dsize, arities, nw, wk, wW, knpa, kpa, kst,
                              khasc, koff, cpts, r, class_index, C, lw, dep[t], tmix, tcom,
                              kstep, kdig, pool, base)
                    n_pool += dsize * C
                    if use_memo:
                        slots[t, key] = base
                if nd == 0:
                    for c in range(C):
                        once[t, i, c] += pool[base + c]
                else:
                    tb[t, i, v] = base
    # pass 2, pair by pair: its completions' sums of the nodes' terms (in node order, as one
    # accumulator per pair would get them) and their log-sum-exp, plus its weight and its
    # constant terms
    acc = np.empty(max(int(n_c.max()) if T * R > 0 else 1, 1) * C)
    for t in range(T):
        for i in range(R):
            cnt = n_c[t, i]
            mc = mc_start[t, i]
            acc[:cnt * C] = 0.0
            for v in range(n):
                base = tb[t, i, v]
                if base == -1:
                    continue
                if base == -2:
                    o = doff[t, i, v]
                    for s_ in range(cnt * C):
                        acc[s_] += dbuf[o + s_]
                    continue
                nd, dsize = _scope(summed[t, i], inS_v[v, t], arities, dvars, dstr)
                if mc < 0:  # every state of K, the first summed variable fastest
                    _add_enumerated(summed[t, i], arities, dvars, dstr, nd, pool, base, C,
                                    cnt, acc, 0, kvars, kdig, kstep)
                    continue
                for s_ in range(cnt):  # the drawn completions
                    drow = mc + s_
                    j = 0
                    for d in range(nd):
                        j += draws[drow, dvars[d]] * dstr[d]
                    b = base + j * C
                    for c in range(C):
                        acc[s_ * C + c] += pool[b + c]
            _log_sum(acc, cnt, C, logw[t, i], once[t, i], out[t, i])


@njit(cache=True)
def bounded_draws(raw: np.ndarray, starts: np.ndarray, cols: np.ndarray, ar: np.ndarray,
                  n_cols: np.ndarray, n_mc: int, draws: np.ndarray) -> int:
    """NumPy's ``Generator.integers(0, ar, size=(n_mc, k))`` with an array ``ar`` (the
    broadcast path: Lemire's bounded integers, one 32-bit word per value, Lemire 2019), for
    each spec s in turn: ``draws[starts[s] + i, cols[s, j]]`` for i < n_mc, j < n_cols[s],
    from the 32-bit words of ``raw`` (a fresh PCG64's ``random_raw``: the low half of each
    64-bit output first, as its ``next_uint32`` hands them out). Returns the words used, or -1
    when ``raw`` ran out (the caller draws with NumPy instead). About 10x faster than NumPy's
    broadcast path, which costs ~20 ns per value; checked against it by the caller
    (:func:`bnma_core.classifiers.order_bma._lemire_matches_numpy`) and the tests."""
    n_words = 2 * raw.shape[0]
    w = 0
    mask = np.uint64(0xFFFFFFFF)
    for s in range(starts.shape[0]):
        for i in range(n_mc):
            row = starts[s] + i
            for j in range(n_cols[s]):
                a = np.uint64(ar[s, j])
                if a == 1:
                    draws[row, cols[s, j]] = 0
                    continue
                threshold = np.uint64(0)  # (2^32 - a) mod a, computed when first needed
                while True:  # Lemire: accept unless the low word falls below the threshold
                    if w >= n_words:
                        return -1
                    word = raw[w >> 1]
                    u = (word & mask) if (w & 1) == 0 else (word >> np.uint64(32))
                    w += 1
                    m = u * a
                    left = m & mask
                    if left >= a:
                        break
                    if threshold == 0:
                        threshold = (mask - (a - np.uint64(1))) % a
                    if left >= threshold:
                        break
                draws[row, cols[s, j]] = np.int64(m >> np.uint64(32))
    return w


@njit(cache=True)
def barren_features(miss: np.ndarray, orders: np.ndarray, can: np.ndarray,
                    class_index: int) -> np.ndarray:
    """Barren features of each row under each order, (T, n_rows, p) bool: a missing feature
    v is barren under order t when every variable that may have it as a parent (``can[t, v,
    u]``: v in some parent set of u with nonzero weight) is itself a barren feature; the class
    is never barren (Shachter 1986). Decided from the last variable of each order backwards,
    as a variable's possible children all come after it. ``miss`` (n_rows, p) bool."""
    T, n = orders.shape
    R, p = miss.shape
    out = np.zeros((T, R, p), dtype=np.bool_)
    full = np.zeros(n, dtype=np.bool_)
    for t in range(T):
        for i in range(R):
            full[:] = False
            for k in range(n - 1, -1, -1):
                v = orders[t, k]
                if v == class_index or not miss[i, v]:
                    continue
                ok = True
                for u in range(n):
                    if can[t, v, u] and not full[u]:
                        ok = False
                        break
                full[v] = ok
            for v in range(p):
                out[t, i, v] = full[v]
    return out
