"""numba kernels of the exact order-modular dynamic programme over variable subsets: the
posterior probability of every edge under the uniform prior over node orders that order MCMC
samples from (Koivisto & Sood 2004; Koivisto 2006; DESIGN §4, §13).

Conventions (as :mod:`bnma_core.kernels.exact`)
-----------------------------------------------
* Variable sets are bitmasks (bit v = variable v). A parent set P ⊆ V∖{v} of variable v is
  stored at its *compressed* index ``compress(P, v)`` (bit v dropped), so one row of length
  2^(n-1) holds every parent set of v, in subset order.
* Everything is a natural logarithm; sums are log-sum-exp with the largest term factored out,
  -inf = zero mass (a forbidden parent set).

Notation: β_v(Z) = exp S(v; Z) the local score (structure prior included), α_v(U) = Σ_{Z ⊆ U}
β_v(Z), L(S) = Σ over orders of S of Π α_v(pred), R(S) = Σ over orders of V∖S placed after S of
Π α_v(pred), and Γ_v(Z) = Σ_{U ⊇ Z, U ⊆ V∖{v}} L(U) R(U ∪ {v}).

References
----------
Koivisto, M. & Sood, K. (2004). Exact Bayesian structure discovery in Bayesian networks. JMLR 5,
549-573 (§3, forward sums; §4, edge posteriors).
Koivisto, M. (2006). Advances in exact Bayesian structure discovery in Bayesian networks. UAI
(backward sums and the per-edge γ terms for all edges at once).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from .exact import compress_mask, expand_index


@njit(cache=True, inline="always")
def _lae(a: float, b: float) -> float:
    """log(exp a + exp b) without overflow; -inf + -inf = -inf."""
    if a < b:
        a, b = b, a
    if b == -np.inf:
        return a
    return a + math.log1p(math.exp(b - a))


@njit(cache=True)
def log_zeta_subsets(row: np.ndarray, n_bits: int) -> None:
    """In place: ``row[U] <- log Σ_{Z ⊆ U} exp row[Z]`` for every U over ``n_bits`` bits (the
    zeta / subset-sum transform in log space, n_bits 2^(n_bits-1) additions)."""
    size = 1 << n_bits
    for b in range(n_bits):
        bit = 1 << b
        for base in range(0, size, bit << 1):
            for k in range(base, base + bit):
                row[k + bit] = _lae(row[k + bit], row[k])


@njit(cache=True)
def log_zeta_supersets(row: np.ndarray, n_bits: int) -> None:
    """In place: ``row[U] <- log Σ_{Z ⊇ U} exp row[Z]`` (the upward / superset-sum transform
    in log space)."""
    size = 1 << n_bits
    for b in range(n_bits):
        bit = 1 << b
        for base in range(0, size, bit << 1):
            for k in range(base, base + bit):
                row[k] = _lae(row[k], row[k + bit])


@njit(cache=True, nogil=True)
def order_modular_sums(alpha: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Forward and backward sums over subsets from the node terms ``alpha[v, compress(U, v)]``
    = log α_v(U):

    * L(∅) = 0, L(S) = log Σ_{v ∈ S} exp(L(S∖{v}) + α_v(S∖{v})) — v the last of S
      (Koivisto & Sood 2004, §3);
    * R(V) = 0, R(S) = log Σ_{v ∉ S} exp(α_v(S) + R(S ∪ {v})) — v the first after S
      (Koivisto 2006).

    L(V) = R(∅) = log Σ_≺ Π_v α_v(pred≺(v)), the order-summed evidence up to the constant
    uniform prior over orders. Returns (L, R), each (2^n,)."""
    n = alpha.shape[0]
    S_all = 1 << n
    L = np.empty(S_all)
    R = np.empty(S_all)
    terms = np.empty(max(n, 1))
    L[0] = 0.0
    for S in range(1, S_all):
        cnt = 0
        mx = -np.inf
        x = S
        while x:
            low = x & -x
            x ^= low
            v = 0
            while (low >> v) != 1:
                v += 1
            sub = S ^ low
            t = L[sub] + alpha[v, compress_mask(np.int64(sub), v)]
            terms[cnt] = t
            cnt += 1
            if t > mx:
                mx = t
        L[S] = _sum_exp(terms, cnt, mx)
    full = S_all - 1
    R[full] = 0.0
    for S in range(full - 1, -1, -1):
        cnt = 0
        mx = -np.inf
        x = full ^ S
        while x:
            low = x & -x
            x ^= low
            v = 0
            while (low >> v) != 1:
                v += 1
            t = alpha[v, compress_mask(np.int64(S), v)] + R[S | low]
            terms[cnt] = t
            cnt += 1
            if t > mx:
                mx = t
        R[S] = _sum_exp(terms, cnt, mx)
    return L, R


@njit(cache=True, inline="always")
def _sum_exp(terms: np.ndarray, cnt: int, mx: float) -> float:
    """log Σ exp terms[:cnt] given their maximum ``mx``."""
    if mx == -np.inf:
        return -np.inf
    s = 0.0
    for k in range(cnt):
        s += math.exp(terms[k] - mx)
    return mx + math.log(s)


@njit(cache=True, nogil=True)
def order_modular_edges(local: np.ndarray) -> tuple[np.ndarray, float, np.ndarray]:
    """Exact edge posteriors P(u -> v | D) under the uniform prior over orders.

    Parameters
    ----------
    local : (n, 2^(n-1)) float64
        ``local[v, compress(Z, v)]`` = S(v; Z) = log β_v(Z), the local score with the structure
        prior included; -inf for a parent set that is not allowed (e.g. beyond
        ``max_parents``). Not modified.

    Returns
    -------
    edge : (n, n) float64
        ``edge[u, v] = P(u -> v | D) = Σ_{Z ∋ u} β_v(Z) Γ_v(Z) / L(V)`` (Koivisto 2006): the
        orders in which v's predecessors are exactly U contribute L(U) β_v(Z) R(U ∪ {v}) for
        each Z ⊆ U, so Γ_v, the superset sum of L(U) R(U ∪ {v}), collects them all.
    log_evidence : float
        L(V) = log Σ_≺ Π_v α_v(pred≺(v)).
    parent_mass : (n,) float64
        Σ_Z P(Pa(v) = Z | D) per v; 1 up to rounding (every order gives v one parent set), a
        check of the forward and backward sums.

    Work: n (n-1) 2^(n-2) log-additions for the α_v (subset sums) and as many for the Γ_v
    (superset sums), n 2^(n-1) for L and for R; memory n 2^(n-1) + 2^(n+1) doubles besides
    ``local``.
    """
    n, H = local.shape
    alpha = local.copy()
    for v in range(n):
        log_zeta_subsets(alpha[v], n - 1)
    L, R = order_modular_sums(alpha)
    log_z = L[(1 << n) - 1]
    edge = np.zeros((n, n))
    mass = np.zeros(n)
    gam = alpha[0]  # alpha is no longer needed: its rows hold the Γ_v in turn
    for v in range(n):
        bit_v = np.int64(1) << v
        for U in range(H):
            P = expand_index(np.int64(U), v)
            gam[U] = L[P] + R[P | bit_v]
        log_zeta_supersets(gam, n - 1)
        for z in range(H):
            s = local[v, z]
            if s == -np.inf:
                continue
            p = math.exp(s + gam[z] - log_z)
            mass[v] += p
            P = expand_index(np.int64(z), v)
            while P:
                low = P & -P
                P ^= low
                u = 0
                while (low >> u) != 1:
                    u += 1
                edge[u, v] += p
    return edge, log_z, mass
