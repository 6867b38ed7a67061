"""Contingency counting, configuration indices and Dirichlet-multinomial marginal likelihoods
(numba).

Configuration index (the one home of this formula; DESIGN §3): a parent list (pa_1, ..., pa_m)
with arities (r_1, ..., r_m) has q = prod_k r_k configurations; the configuration of values
(x_1, ..., x_m) is j = sum_k x_k s_k with strides s_1 = 1, s_k = s_{k-1} r_{k-1}: mixed radix
with the *first* parent varying fastest. :func:`parent_strides` computes the strides (callable
from Python and from other numba kernels, where LLVM inlines it); :func:`config_index` is one
row, :func:`config_indices` all rows. CPT rows (``posterior_cpt``, ``DiscreteBN.cpts``) follow
this layout.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from numba import njit


@njit(cache=True)
def parent_strides(parents: np.ndarray, arities: np.ndarray) -> np.ndarray:
    """Mixed-radix strides: configuration j = sum_k x_{pa_k} * stride_k (first parent fastest).

    Parameters
    ----------
    parents : int64 array (m,)
        Parent indices into ``arities``, in CPT order.
    arities : int64 array
        States of every variable.
    """
    s = np.empty(parents.shape[0], dtype=np.int64)
    acc = 1
    for k in range(parents.shape[0]):
        s[k] = acc
        acc *= arities[parents[k]]
    return s


@njit(cache=True)
def _n_configs(parents: np.ndarray, arities: np.ndarray) -> int:
    q = 1
    for k in range(parents.shape[0]):
        q *= arities[parents[k]]
    return q


@njit(cache=True)
def config_index(data: np.ndarray, row: int, parents: np.ndarray, strides: np.ndarray) -> int:
    """Parent configuration j of one row, or -1 if a parent is missing."""
    j = 0
    for k in range(parents.shape[0]):
        v = data[row, parents[k]]
        if v < 0:
            return -1
        j += v * strides[k]
    return j


@njit(cache=True)
def config_indices(data: np.ndarray, parents: np.ndarray, arities: np.ndarray) -> np.ndarray:
    """Parent configuration j of every row of ``data`` (int64, -1 where a parent is missing):
    :func:`config_index` over all rows."""
    strides = parent_strides(parents, arities)
    out = np.empty(data.shape[0], dtype=np.int64)
    for row in range(data.shape[0]):
        out[row] = config_index(data, row, parents, strides)
    return out


@njit(cache=True)
def count_family(data: np.ndarray, child: int, parents: np.ndarray,
                 arities: np.ndarray) -> np.ndarray:
    """Counts N_ijk as a (q_i, r_i) float array; rows with a missing value (-1) in the child or
    a parent are skipped."""
    strides = parent_strides(parents, arities)
    counts = np.zeros((_n_configs(parents, arities), arities[child]), dtype=np.float64)
    for row in range(data.shape[0]):
        x = data[row, child]
        if x >= 0:
            j = config_index(data, row, parents, strides)
            if j >= 0:
                counts[j, x] += 1.0
    return counts


@njit(cache=True)
def count_family_weighted(data: np.ndarray, weights: np.ndarray, child: int, parents: np.ndarray,
                          arities: np.ndarray) -> np.ndarray:
    """Like :func:`count_family` with a weight per row (pseudo instances, EM statistics).

    Kept as a second loop rather than one kernel with an "unweighted" flag: the merged kernel
    measured 5 % slower (CPU time, 20,000 rows, 3 parents) for both uses."""
    strides = parent_strides(parents, arities)
    counts = np.zeros((_n_configs(parents, arities), arities[child]), dtype=np.float64)
    for row in range(data.shape[0]):
        x = data[row, child]
        if x >= 0:
            j = config_index(data, row, parents, strides)
            if j >= 0:
                counts[j, x] += weights[row]
    return counts


LOG_RISING_CUTOFF = 64
RISING_SLOTS = 256  # slots of a family-scoring kernel's cache (a power of two)


class RisingCache(NamedTuple):
    """Tables of :func:`log_rising`, one per hyperparameter value ``a`` in a direct-mapped
    cache (a slot is chosen by hashing the bits of ``a``; a slot taken by another ``a`` is
    rebuilt). Built by :func:`rising_cache`; BDeu's a_ijk = ess / (r q) takes few values over
    a score table (one per table size), so most terms of a kernel call are read, not
    computed."""

    cum: np.ndarray  # (S, LOG_RISING_CUTOFF + 1): cum[s, i] = sum_{i' < i} log(a_s + i')
    a: np.ndarray  # (S,) the a of each slot (NaN = empty)
    la: np.ndarray  # (S,) lgamma(a_s)
    built: np.ndarray  # (S,) int64: cum[s, :built + 1] is filled
    bits_f: np.ndarray  # (1,) float64 scratch ...
    bits_u: np.ndarray  # (1,) ... and its uint64 view (the bits of a, for the slot)


@njit(cache=True)
def rising_cache(n_slots: int) -> RisingCache:
    """An empty :class:`RisingCache` of ``n_slots`` slots (a power of two; 2 for one family,
    ``RISING_SLOTS`` for a kernel that scores many)."""
    cum = np.empty((n_slots, LOG_RISING_CUTOFF + 1))
    cum[:, 0] = 0.0
    bits_f = np.zeros(1)
    return RisingCache(cum, np.full(n_slots, np.nan), np.zeros(n_slots),
                       np.zeros(n_slots, dtype=np.int64), bits_f, bits_f.view(np.uint64))


@njit(cache=True, inline="always")
def log_gamma_large(x: float) -> float:
    """lgamma(x) for x > ``LOG_RISING_CUTOFF`` by Stirling's series to the x^-5 term
    (Abramowitz & Stegun 6.1.41): the next term, 1 / (1680 x^7), is below 1e-16 there, so the
    value equals ``math.lgamma`` to rounding (``tests/kernels/test_log_rising.py``) at a
    third of its cost (one log); the large counts of a score table's small families take it."""
    ix = 1.0 / x
    ix2 = ix * ix
    return ((x - 0.5) * math.log(x) - x + 0.9189385332046728
            + ix * (1.0 / 12.0 - ix2 * (1.0 / 360.0 - ix2 * (1.0 / 1260.0))))


@njit(cache=True, inline="always")
def log_rising(rc: RisingCache, a: float, c: int) -> float:
    """lgamma(a + c) - lgamma(a) = sum_{i < c} log(a + i) for an integer count c >= 0 (the
    rising-factorial terms of eq. 8 of Heckerman et al. 1995, DESIGN §3): the one home of these
    terms for integer counts in the kernels.

    Read from a table of cumulative logs kept per value of ``a`` in ``rc``
    (:func:`rising_cache`), filled lazily up to the largest count asked so far; counts above
    ``LOG_RISING_CUTOFF`` take lgamma(a + c) - lgamma(a) (:func:`log_gamma_large`). Entry c
    of a table is the same sum in the same order however and whenever it was filled, so the
    value depends on (a, c) only, never on the cache's history (tables counted for several
    priors at once equal separate builds exactly). Equal to the lgamma form to 1e-12
    (``tests/kernels/test_log_rising.py``; the sum of logs is the more accurate of the two for
    small ``a``).
    """
    rc.bits_f[0] = a
    s = (rc.bits_u[0] * np.uint64(0x9E3779B97F4A7C15)) >> np.uint64(56)
    s &= np.uint64(rc.a.shape[0] - 1)
    if rc.a[s] != a:
        rc.a[s] = a
        rc.la[s] = math.lgamma(a)
        rc.built[s] = 0
    b = rc.built[s]
    if c <= b:
        return rc.cum[s, c]
    if c > LOG_RISING_CUTOFF:
        return log_gamma_large(a + c) - rc.la[s]
    acc = rc.cum[s, b]
    for i in range(b, c):
        acc += math.log(a + i)
        rc.cum[s, i + 1] = acc
    rc.built[s] = c
    return acc


@njit(cache=True)
def log_ml_from_counts(counts: np.ndarray, alpha: np.ndarray) -> float:
    """Dirichlet-multinomial log marginal likelihood of one family (Cooper & Herskovits 1992;
    Heckerman et al. 1995, eq. 8; DESIGN §3):
    sum_j [lgamma(a_ij) - lgamma(a_ij + N_ij)] + sum_jk [lgamma(a_ijk + N_ijk) - lgamma(a_ijk)].
    ``alpha`` has the shape of ``counts``."""
    total = 0.0
    q, r = counts.shape
    for j in range(q):
        a_j = 0.0
        n_j = 0.0
        for k in range(r):
            a = alpha[j, k]
            c = counts[j, k]
            a_j += a
            n_j += c
            if c != 0.0:
                total += math.lgamma(a + c) - math.lgamma(a)
        if n_j != 0.0:
            total += math.lgamma(a_j) - math.lgamma(a_j + n_j)
    return total


@njit(cache=True)
def log_ml_uniform_alpha(counts: np.ndarray, a: float) -> float:
    """:func:`log_ml_from_counts` with every a_ijk = a (K2: a = 1; BDeu: a = ess / (r q))."""
    return log_ml_uniform_alpha_cached(counts, a, rising_cache(2))


@njit(cache=True)
def log_ml_uniform_alpha_cached(counts: np.ndarray, a: float, rc: RisingCache) -> float:
    """:func:`log_ml_uniform_alpha` with the terms of integer counts read from ``rc``
    (:func:`log_rising`; a kernel scoring many families passes one cache to all); fractional
    counts (weights, EM statistics) call lgamma."""
    total = 0.0
    q, r = counts.shape
    la = math.lgamma(a)
    a_j = a * r
    la_j = math.lgamma(a_j)
    for j in range(q):
        n_j = 0.0
        for k in range(r):
            c = counts[j, k]
            n_j += c
            if c != 0.0:
                ci = int(c)
                if ci == c:
                    total += log_rising(rc, a, ci)
                else:
                    total += math.lgamma(a + c) - la
        if n_j != 0.0:
            ni = int(n_j)
            if ni == n_j:
                total -= log_rising(rc, a_j, ni)
            else:
                total += la_j - math.lgamma(a_j + n_j)
    return total
