"""EM / EMA kernels for clustering with a latent class C (numba, log space where it matters).

Layout (DESIGN §3, §4; Santafé, Lozano & Larrañaga, "Bayesian model averaging of TAN models for
clustering"): the ``n`` features are already permuted into the ancestral order π, so column
``i`` is position ``i``. States are one-hot offsets ``off[i] + k`` into ``R = sum_i r_i``.

* Expected co-occurrence counts ``G`` of shape ``(R, R, r_C)``:
  ``G[off[j] + a, off[i] + k, c] = sum_l gamma_l(c) 1[x_j = a, x_i = k]`` for ``j < i``, and the
  diagonal ``G[off[i] + k, off[i] + k, c] = sum_l gamma_l(c) 1[x_i = k]`` (eq. 3 and 4). Every
  parent set of the TAN class (∅, {C}, {X_j}, {C, X_j}) reads its counts from ``G``.
* Candidate parent sets of feature ``i``, each with a log structure prior (``-inf`` = not a
  candidate): ``lp0[i]`` (∅), ``lpc[i]`` ({C}), ``lpx[i, j]`` ({X_j}), ``lpcx[i, j]`` ({C, X_j}),
  any ``j != i``. EMA-TAN allows ``j < i``; EMA only ∅ / {C}; a fixed TAN one set per feature.
* The averaged CPT (Theorem 1, eq. 11-12) is never materialised over all of (c, x_<i): it is
  ``theta~_i(k | c, x) = D[off[i] + k, c] + sum_j P[off[j] + x_j, off[i] + k, c]`` with
  ``D = w_∅ theta^∅ + w_C theta^C`` and ``P = w_Xj theta^Xj + w_CXj theta^CXj``.

Missing values are handled by the caller: each row with missing cells is expanded into its
completions (consecutive rows of one *group*), and the E step normalises over the completions
and clusters of a group, which marginalises the missing cells exactly.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from .counting import log_ml_uniform_alpha

#: Parent sets whose posterior weight is below this are left out of the E-step sum (their
#: contribution to theta~ is below 2 n 1e-15 in absolute probability).
PRUNE_WEIGHT = 1e-15


@njit(cache=True, nogil=True)
def _normalize_block(gamma: np.ndarray, m0: int, m1: int, rc: int) -> float:
    """Turn the log joint terms ``gamma[m0:m1, :rc]`` of one data row (its completions of the
    missing cells times the clusters) into responsibilities in place; returns their
    log-sum-exp, the row's log-likelihood."""
    mx = -np.inf
    for m in range(m0, m1):
        for c in range(rc):
            if gamma[m, c] > mx:
                mx = gamma[m, c]
    acc = 0.0
    for m in range(m0, m1):
        for c in range(rc):
            acc += math.exp(gamma[m, c] - mx)
    lse = mx + math.log(acc)
    for m in range(m0, m1):
        for c in range(rc):
            gamma[m, c] = math.exp(gamma[m, c] - lse)
    return lse


@njit(cache=True, nogil=True)
def e_step(X: np.ndarray, starts: np.ndarray, offs: np.ndarray, log_theta_c: np.ndarray,
           D: np.ndarray, P: np.ndarray, act_ptr: np.ndarray, act_idx: np.ndarray,
           gamma: np.ndarray, row_ll: np.ndarray) -> float:
    """E step of EMA / EMA-TAN / EM-TAN: ``gamma[m, c] = p(C = c, completion m | x_obs)`` and the
    observed log-likelihood ``sum_l log sum_{m in group l, c} p(c, x_m)`` (docs/specs.md §12).

    ``act_idx[act_ptr[i]:act_ptr[i + 1]]`` lists the features j with a non-zero ``P`` block for
    feature i. ``gamma`` (M, r_C) and ``row_ll`` (n_groups,) are written in place.
    """
    M, n = X.shape
    rc = log_theta_c.shape[0]
    total = 0.0
    s = np.empty(rc)
    prod = np.empty(rc)
    for g in range(starts.shape[0] - 1):
        m0 = starts[g]
        m1 = starts[g + 1]
        for m in range(m0, m1):
            # product of the factors in linear space, moved into the log when it gets small
            for c in range(rc):
                gamma[m, c] = log_theta_c[c]
                prod[c] = 1.0
            for i in range(n):
                col = offs[i] + X[m, i]
                for c in range(rc):
                    s[c] = D[col, c]
                for t in range(act_ptr[i], act_ptr[i + 1]):
                    j = act_idx[t]
                    row = offs[j] + X[m, j]
                    for c in range(rc):
                        s[c] += P[row, col, c]
                for c in range(rc):
                    prod[c] *= s[c]
                    if prod[c] < 1e-200:
                        gamma[m, c] += math.log(prod[c]) if prod[c] > 0.0 else -np.inf
                        prod[c] = 1.0
            for c in range(rc):
                gamma[m, c] += math.log(prod[c])
        lse = _normalize_block(gamma, m0, m1, rc)
        row_ll[g] = lse
        total += lse
    return total


@njit(cache=True, nogil=True)
def expected_counts(X: np.ndarray, gamma: np.ndarray, offs: np.ndarray, R: int,
                    pairs: bool) -> tuple:
    """Expected counts ``G`` (R, R, r_C) (lower-triangular pair blocks ``j < i`` when ``pairs``,
    plus the diagonal one-variable counts) and ``N_C`` (r_C,) from the responsibilities (eq. 3-4).
    """
    M, n = X.shape
    rc = gamma.shape[1]
    G = np.zeros((R, R, rc))
    nc = np.zeros(rc)
    for m in range(M):
        for c in range(rc):
            nc[c] += gamma[m, c]
        for i in range(n):
            ci = offs[i] + X[m, i]
            for c in range(rc):
                G[ci, ci, c] += gamma[m, c]
            if pairs:
                for j in range(i):
                    cj = offs[j] + X[m, j]
                    for c in range(rc):
                        G[cj, ci, c] += gamma[m, c]
    return G, nc


@njit(cache=True, nogil=True)
def _pair(G: np.ndarray, oj: int, a: int, oi: int, k: int, c: int, j: int, i: int) -> float:
    if j < i:
        return G[oj + a, oi + k, c]
    return G[oi + k, oj + a, c]


@njit(cache=True, nogil=True)
def _cpt_rows(cnt: np.ndarray, a: float, out: np.ndarray) -> None:
    """Eq. 6 of the paper (posterior mean, Dirichlet a per cell) row by row:
    theta_jk = (a + N_jk) / (r a + N_j) -- the numba twin of ``scores.posterior_cpt`` with a
    uniform a."""
    q, r = cnt.shape
    for j in range(q):
        nj = 0.0
        for k in range(r):
            nj += cnt[j, k]
        den = r * a + nj
        for k in range(r):
            out[j, k] = (a + cnt[j, k]) / den


@njit(cache=True, nogil=True)
def ma_step(G: np.ndarray, nc: np.ndarray, arities: np.ndarray, offs: np.ndarray,
            alpha: float, bdeu: bool, alpha_c: float, lp0: np.ndarray, lpc: np.ndarray,
            lpx: np.ndarray, lpcx: np.ndarray, average: bool) -> tuple:
    """Model-averaging step (docs/specs.md §12; paper eq. 6 and 9-12).

    For every candidate parent set v of every feature: eq. 6 estimates theta^v from the expected
    counts, the family log marginal likelihood log M_i^v = ``log_ml_uniform_alpha`` of those
    fractional counts (K2 / BD with one ``alpha`` per cell, or BDeu with equivalent sample
    size ``alpha`` when ``bdeu``), and the posterior weight w_i^v ∝ p_S^v M_i^v (log-sum-exp).
    With ``average=False`` the log ML is skipped and the weights are the normalised priors
    (a fixed structure: one allowed set per feature).

    Returns
    -------
    theta_c : (r_C,) eq. 6 for C
    t0 : (R,) theta^∅;  tc : (R, r_C) theta^{C};  tx : (R, R) theta^{X_j}[a, k];
    tcx : (R, R, r_C) theta^{C, X_j}[a, k, c]  (block (j, i) at rows off[j].., cols off[i]..)
    w0, wc : (n,) ; wx, wcx : (n, n) posterior weights of the sets
    D : (R, r_C), P : (R, R, r_C) the averaged tables; act_ptr, act_idx : non-zero P blocks
    """
    n = arities.shape[0]
    rc = nc.shape[0]
    R = G.shape[0]
    ntot = 0.0
    for c in range(rc):
        ntot += nc[c]
    theta_c = np.empty(rc)
    for c in range(rc):
        theta_c[c] = (alpha_c + nc[c]) / (rc * alpha_c + ntot)
    t0 = np.zeros(R)
    tc = np.zeros((R, rc))
    tx = np.zeros((R, R))
    tcx = np.zeros((R, R, rc))
    w0 = np.zeros(n)
    wc = np.zeros(n)
    wx = np.zeros((n, n))
    wcx = np.zeros((n, n))
    D = np.zeros((R, rc))
    P = np.zeros((R, R, rc))
    act_ptr = np.zeros(n + 1, dtype=np.int64)
    act_tmp = np.empty(n * n, dtype=np.int64)
    n_act = 0
    s0 = np.empty(n)
    sc = np.empty(n)
    sx = np.empty((n, n))
    scx = np.empty((n, n))
    for i in range(n):
        ri = arities[i]
        oi = offs[i]
        # ∅
        s0[i] = lp0[i]
        if lp0[i] > -np.inf:
            cnt = np.empty((1, ri))
            for k in range(ri):
                s = 0.0
                for c in range(rc):
                    s += G[oi + k, oi + k, c]
                cnt[0, k] = s
            a = alpha / ri if bdeu else alpha
            out = np.empty((1, ri))
            _cpt_rows(cnt, a, out)
            for k in range(ri):
                t0[oi + k] = out[0, k]
            if average:
                s0[i] += log_ml_uniform_alpha(cnt, a)
        # {C}
        sc[i] = lpc[i]
        if lpc[i] > -np.inf:
            cnt = np.empty((rc, ri))
            for c in range(rc):
                for k in range(ri):
                    cnt[c, k] = G[oi + k, oi + k, c]
            a = alpha / (ri * rc) if bdeu else alpha
            out = np.empty((rc, ri))
            _cpt_rows(cnt, a, out)
            for c in range(rc):
                for k in range(ri):
                    tc[oi + k, c] = out[c, k]
            if average:
                sc[i] += log_ml_uniform_alpha(cnt, a)
        for j in range(n):
            sx[i, j] = lpx[i, j]
            scx[i, j] = lpcx[i, j]
            if j == i:
                sx[i, j] = -np.inf
                scx[i, j] = -np.inf
                continue
            rj = arities[j]
            oj = offs[j]
            if lpx[i, j] > -np.inf:
                cnt = np.empty((rj, ri))
                for aa in range(rj):
                    for k in range(ri):
                        s = 0.0
                        for c in range(rc):
                            s += _pair(G, oj, aa, oi, k, c, j, i)
                        cnt[aa, k] = s
                a = alpha / (ri * rj) if bdeu else alpha
                out = np.empty((rj, ri))
                _cpt_rows(cnt, a, out)
                for aa in range(rj):
                    for k in range(ri):
                        tx[oj + aa, oi + k] = out[aa, k]
                if average:
                    sx[i, j] += log_ml_uniform_alpha(cnt, a)
            if lpcx[i, j] > -np.inf:
                # configuration index c + r_C * a (first parent, C, fastest)
                cnt = np.empty((rc * rj, ri))
                for aa in range(rj):
                    for c in range(rc):
                        for k in range(ri):
                            cnt[c + rc * aa, k] = _pair(G, oj, aa, oi, k, c, j, i)
                a = alpha / (ri * rj * rc) if bdeu else alpha
                out = np.empty((rc * rj, ri))
                _cpt_rows(cnt, a, out)
                for aa in range(rj):
                    for c in range(rc):
                        for k in range(ri):
                            tcx[oj + aa, oi + k, c] = out[c + rc * aa, k]
                if average:
                    scx[i, j] += log_ml_uniform_alpha(cnt, a)
        # normalise the weights of feature i (log-sum-exp)
        mx = max(s0[i], sc[i])
        for j in range(n):
            mx = max(mx, sx[i, j], scx[i, j])
        tot = 0.0
        if s0[i] > -np.inf:
            tot += math.exp(s0[i] - mx)
        if sc[i] > -np.inf:
            tot += math.exp(sc[i] - mx)
        for j in range(n):
            if sx[i, j] > -np.inf:
                tot += math.exp(sx[i, j] - mx)
            if scx[i, j] > -np.inf:
                tot += math.exp(scx[i, j] - mx)
        lz = mx + math.log(tot)
        w0[i] = math.exp(s0[i] - lz) if s0[i] > -np.inf else 0.0
        wc[i] = math.exp(sc[i] - lz) if sc[i] > -np.inf else 0.0
        for k in range(ri):
            for c in range(rc):
                D[oi + k, c] = w0[i] * t0[oi + k] + wc[i] * tc[oi + k, c]
        for j in range(n):
            wx[i, j] = math.exp(sx[i, j] - lz) if sx[i, j] > -np.inf else 0.0
            wcx[i, j] = math.exp(scx[i, j] - lz) if scx[i, j] > -np.inf else 0.0
            ux = wx[i, j] >= PRUNE_WEIGHT
            ucx = wcx[i, j] >= PRUNE_WEIGHT
            if not (ux or ucx):
                continue
            act_tmp[n_act] = j
            n_act += 1
            oj = offs[j]
            for aa in range(arities[j]):
                for k in range(ri):
                    for c in range(rc):
                        v = 0.0
                        if ux:
                            v += wx[i, j] * tx[oj + aa, oi + k]
                        if ucx:
                            v += wcx[i, j] * tcx[oj + aa, oi + k, c]
                        P[oj + aa, oi + k, c] = v
        act_ptr[i + 1] = n_act
    act_idx = act_tmp[:n_act].copy()
    return theta_c, t0, tc, tx, tcx, w0, wc, wx, wcx, D, P, act_ptr, act_idx


# --------------------------------------------------------------------------------------------
# EM-BNET: the complete network C -> X_i, X_j -> X_i (j < i), CPTs stored per observed
# parent configuration of x_<i (sparse).
# --------------------------------------------------------------------------------------------


@njit(cache=True, nogil=True)
def bnet_e_step(X: np.ndarray, ids: np.ndarray, starts: np.ndarray, tbase: np.ndarray,
                arities: np.ndarray, log_theta_c: np.ndarray, log_tab: np.ndarray,
                gamma: np.ndarray, row_ll: np.ndarray) -> float:
    """E step of EM-BNET. ``ids[m, i]`` is the index of the configuration of x_<i among the
    observed ones (-1 = unseen: theta = 1 / r_i); the CPT row of (c, u) for feature i starts at
    ``tbase[i] + (u * r_C + c) * r_i`` in ``log_tab``."""
    M, n = X.shape
    rc = log_theta_c.shape[0]
    total = 0.0
    for g in range(starts.shape[0] - 1):
        m0 = starts[g]
        m1 = starts[g + 1]
        for m in range(m0, m1):
            for c in range(rc):
                s = log_theta_c[c]
                for i in range(n):
                    u = ids[m, i]
                    ri = arities[i]
                    if u < 0:
                        s -= math.log(ri)
                    else:
                        s += log_tab[tbase[i] + (u * rc + c) * ri + X[m, i]]
                gamma[m, c] = s
        lse = _normalize_block(gamma, m0, m1, rc)
        row_ll[g] = lse
        total += lse
    return total


@njit(cache=True, nogil=True)
def bnet_counts(X: np.ndarray, ids: np.ndarray, gamma: np.ndarray, tbase: np.ndarray,
                arities: np.ndarray, size: int) -> tuple:
    """Expected counts of EM-BNET in the layout of :func:`bnet_e_step` and N_C."""
    M, n = X.shape
    rc = gamma.shape[1]
    cnt = np.zeros(size)
    nc = np.zeros(rc)
    for m in range(M):
        for c in range(rc):
            nc[c] += gamma[m, c]
        for i in range(n):
            ri = arities[i]
            base = tbase[i] + ids[m, i] * rc * ri + X[m, i]
            for c in range(rc):
                cnt[base + c * ri] += gamma[m, c]
    return cnt, nc


@njit(cache=True, nogil=True)
def bnet_m_step(cnt: np.ndarray, tbase: np.ndarray, arities: np.ndarray, alphas: np.ndarray,
                rc: int) -> np.ndarray:
    """Eq. 6 estimates for every stored CPT row of EM-BNET (``alphas[i]`` per cell of feature
    i); returns the log CPT entries."""
    n = arities.shape[0]
    out = np.empty(cnt.shape[0])
    for i in range(n):
        ri = arities[i]
        a = alphas[i]
        nrows = (tbase[i + 1] - tbase[i]) // ri
        for row in range(nrows):
            b = tbase[i] + row * ri
            block = cnt[b:b + ri].reshape((1, ri))
            res = np.empty((1, ri))
            _cpt_rows(block, a, res)
            for k in range(ri):
                out[b + k] = math.log(res[0, k])
    return out


@njit(cache=True, nogil=True)
def max_spanning_tree_parents(weight: np.ndarray) -> np.ndarray:
    """Maximum-weight spanning tree of a complete undirected graph (symmetric ``weight``) by
    Prim's algorithm from node 0, returned as the parent of each node when the tree is directed
    away from node 0 (-1 for node 0). Ties go to the lowest index. O(n^2)."""
    n = weight.shape[0]
    parent = np.full(n, -1, dtype=np.int64)
    in_tree = np.zeros(n, dtype=np.bool_)
    best = np.full(n, -np.inf)
    in_tree[0] = True
    for j in range(1, n):
        best[j] = weight[0, j]
        parent[j] = 0
    for _ in range(n - 1):
        v = -1
        bv = -np.inf
        for j in range(n):
            if not in_tree[j] and (v < 0 or best[j] > bv):
                v = j
                bv = best[j]
        in_tree[v] = True
        for j in range(n):
            if not in_tree[j] and weight[v, j] > best[j]:
                best[j] = weight[v, j]
                parent[j] = v
    return parent


@njit(cache=True, nogil=True)
def max_abs_diff(a: np.ndarray, b: np.ndarray) -> float:
    """max |a - b| over two flat arrays of the same length (0 if empty)."""
    d = 0.0
    for t in range(a.shape[0]):
        x = abs(a[t] - b[t])
        if x > d:
            d = x
    return d
