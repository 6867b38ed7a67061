"""numba kernels for node-order methods: score tables, order scores, order MCMC, fixed-order
BMA classification and edge posteriors (Hwang & Zhang 2005; DESIGN §3-4, §9).

Conventions
-----------
* ``data_t`` is the training data transposed, shape (n_vars, n_rows), int32, -1 = missing.
* A score table holds, per node, parent-set bitmasks ``masks[i, k]`` (uint64) and local scores
  ``scores[i, k]`` (natural log) sorted by decreasing score; ``limits[i]`` is the number of
  entries worth scanning (see :func:`node_log_sum`). The kernels take it as one
  :class:`TableArrays` (a typed namedtuple: numba passes it as one argument and resolves every
  field at compile time, so it costs nothing at run time, see ``benchmarks/order_mcmc.py``).
* Order state: ``order[p]`` = variable at position p; ``prefix[p]`` = bitmask of the variables at
  positions < p; ``terms[p]`` = log sum_{Z ⊆ pred} exp S(order[p]; Z). A chain's arrays travel
  as one :class:`ChainArrays`.
* Missing values: a family is counted on the rows complete on it, and its log marginal
  likelihood is rescaled to all rows (the node-average marginal likelihood,
  :func:`node_average_log_ml`), so that parent sets containing an incomplete variable are not
  favoured for being scored on fewer rows.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from numba import njit

from .counting import (
    RISING_SLOTS,
    RisingCache,
    count_family_weighted,
    log_ml_uniform_alpha_cached,
    log_rising,
    rising_cache,
)
from .order_dp import log_zeta_subsets


class TableArrays(NamedTuple):
    """A score table as the kernels see it (built by
    :meth:`bnma_core.structure.score_table.ScoreTable.arrays`)."""

    masks: np.ndarray  # (n, m) uint64, sorted by decreasing score per node
    scores: np.ndarray  # (n, m) float64
    exps: np.ndarray  # (n, m) banded exponentials (see sort_table)
    bid: np.ndarray  # (n, m) band of each entry
    band_first: np.ndarray  # (n, n_bands + 1) first entry of each band
    band_anchor: np.ndarray  # (n, n_bands) log anchor of each band
    limits: np.ndarray  # (n,) entries worth scanning
    log_eps_rel: float  # pruning window, -inf = exact
    regime: int  # 0 = all parent sets, 1 = candidate-restricted
    logsum: np.ndarray  # (n, 2^K) zeta-transformed node terms (candidate regime)
    cand: np.ndarray  # (n, K) candidate parents of each node, ascending (candidate regime)
    cbit: np.ndarray  # (n, n) int32: cbit[v, u] = bit of u among v's candidates, 0 if none


class ChainArrays(NamedTuple):
    """One order-MCMC chain's state, pre-drawn moves and outputs (all updated in place by
    :func:`mcmc_run`; built by :class:`bnma_core.structure.orders.OrderChain`)."""

    order: np.ndarray  # (n,) variable at each position
    prefix: np.ndarray  # (n,) uint64 predecessor mask of each position
    terms: np.ndarray  # (n,) node term of each position
    local: np.ndarray  # (n,) candidate-local mask of each position (candidate regime)
    pos: np.ndarray  # (n,) position of each variable (candidate regime)
    state: np.ndarray  # [total log score, accepted count, sum of squared rank differences]
    move_i: np.ndarray  # (n_iter,) first position of each proposal
    move_j: np.ndarray  # (n_iter,) second position
    move_kind: np.ndarray  # (n_iter,) 0 = swap, 1 = relocate
    log_u: np.ndarray  # (n_iter,) log uniform draws for acceptance
    trace_score: np.ndarray  # (n_iter,) log score after each iteration
    trace_acc: np.ndarray  # (n_iter,) bool, accepted
    keep_slot: np.ndarray  # (n_iter,) row of ``kept`` to store the order in, -1 = none
    kept: np.ndarray  # (n_kept, n) kept orders
    ref_pos: np.ndarray  # (n,) position of each variable in the reference order, or (0,)
    trace_spear: np.ndarray  # (n_iter,) Spearman correlation to the reference, or (0,)
    trace_delta: np.ndarray  # (n_iter,) log acceptance ratio of each proposal, or (0,) = off
    thin_orders: np.ndarray  # (n_iter // thin, n) order after every thin-th iteration
    thin: int  # record the order after iterations thin, 2 thin, ... (1-based)


class CptCache(NamedTuple):
    """Posterior-predictive CPTs of some of a score table's parent sets, counted once from the
    table's own training rows under its Dirichlet prior (built by
    :meth:`bnma_core.structure.score_table.ScoreTable.cpt_cache` with :func:`extend_cpt_cache`;
    read by :func:`cached_family_cpt`). Node v's k-th set's CPT (q r cells, index j r + x, as
    :func:`family_cpt` returns it) is ``flat[off[v, k] : off[v, k] + q r]``; ``off[v, k]`` =
    -1: not cached (counted when needed). An ``off`` of shape (0, 0) is no cache
    (:func:`no_cpt_cache`)."""

    off: np.ndarray  # (n, m) int64 offset of each set's CPT in ``flat``, -1 = not cached
    flat: np.ndarray  # (cells,) float64, the cached CPTs one after another


def no_cpt_cache() -> CptCache:
    """The empty :class:`CptCache`: every CPT is counted from the training rows the kernel is
    given (explicit training rows other than the table's own)."""
    return CptCache(np.full((0, 0), -1, dtype=np.int64), np.zeros(0))


# --------------------------------------------------------------------------------------------
# Score tables
# --------------------------------------------------------------------------------------------


@njit(cache=True)
def joint_family_fit(table: np.ndarray, size: int, stride: int, r: int, a: float) -> float:
    """sum_jk N_jk log theta_jk with theta_jk = (N_jk + a) / (N_j + a r), the fitted
    (posterior-predictive) log-likelihood of the family's rows, read like
    :func:`joint_family_log_ml` (a (q, r) count array flattened in C order is the case
    ``stride`` = 1, ``size`` = q r)."""
    total = 0.0
    block = stride * r
    for base in range(0, size, block):  # configurations in increasing cell index, no division
        for idx in range(base, base + stride):
            n_j = 0.0
            for k in range(r):
                c = table[idx + k * stride]
                if c > 0:
                    n_j += c
                    total += c * math.log(c + a)
            if n_j > 0:
                total -= n_j * math.log(n_j + a * r)
    return total


@njit(cache=True)
def node_average_log_ml(ml: float, fit: float, n_rows: int, n_family: int) -> float:
    """Node-average log marginal likelihood of a family counted on ``n_family`` of the
    ``n_rows`` rows: ml + (n_rows - n_family) * fit / n_family, with ``ml`` the log marginal
    likelihood of those rows and ``fit`` their fitted log-likelihood
    (:func:`joint_family_fit`). Equal to ``ml`` when no row is lost (or none is left).

    Each row the family lacks is credited with the average fitted log predictive probability
    of the rows it has: the node-average likelihood of Balov (2013) and Bodewes & Scutari
    (2021, eq. 4), N * (1 / |O_iZ|) sum_{rows in O_iZ} log p(x_i | z), applied to the rows
    that are missing, while the marginal likelihood's complexity cost stays that of the
    observed rows. Why: raw available-case scores put families containing an incomplete
    variable on fewer rows, hence larger (less negative) log marginal likelihoods, and would
    prefer them for that alone; credited this way every node term speaks for all N rows, as
    on complete data. The alternatives measured and not kept: docs/decisions.md §1.
    """
    if n_family <= 0 or n_family >= n_rows:
        return ml
    return ml + (n_rows - n_family) * fit / n_family


@njit(cache=True)
def log_factorials(n_max: int) -> np.ndarray:
    """lfact[c] = log c! = lgamma(c + 1) for c = 0..n_max (K2 terms by table lookup)."""
    lfact = np.zeros(n_max + 1)
    for c in range(1, n_max + 1):
        lfact[c] = lfact[c - 1] + math.log(c)
    return lfact


@njit(cache=True)
def _cell_terms(table: np.ndarray, touched: np.ndarray, n_touched: int, size: int,
                sparse: bool, score_kind: int, a: float, lfact: np.ndarray,
                rc: RisingCache) -> float:
    """sum over the non-zero cells of a joint count table of lgamma(a + N) - lgamma(a): the
    cell terms of eq. 8 (Heckerman et al. 1995), the same for every family "v given the rest"
    of the set under one prior, since BDeu's a_ijk = ess / (r q) = ess / size (K2: a = 1, by
    log-factorials). Dense: cells in index order; sparse: the ``n_touched`` listed ones."""
    total = 0.0
    if sparse:
        for t in range(n_touched):
            c = table[touched[t]]
            total += lfact[c] if score_kind == 0 else log_rising(rc, a, c)
    else:
        for idx in range(size):
            c = table[idx]
            if c > 0:
                total += lfact[c] if score_kind == 0 else log_rising(rc, a, c)
    return total


@njit(cache=True)
def _config_totals(table: np.ndarray, touched: np.ndarray, n_touched: int, size: int,
                   stride: int, r: int, sparse: bool, nj: np.ndarray, out: np.ndarray) -> int:
    """The non-zero parent-configuration totals N_ij of the child with stride ``stride`` and
    ``r`` states in a joint count table, into ``out``; returns how many. Dense: configurations
    in increasing cell index, without a division per cell; sparse: from the ``n_touched``
    listed cells through ``nj`` (a zeroed work array of the table's size, left zeroed)."""
    cnt = 0
    if sparse:
        for t in range(n_touched):
            p = touched[t]
            nj[p - ((p // stride) % r) * stride] += table[p]
        for t in range(n_touched):
            p = touched[t]
            key = p - ((p // stride) % r) * stride
            if nj[key] > 0:
                out[cnt] = nj[key]
                cnt += 1
                nj[key] = 0
        return cnt
    block = stride * r
    for base in range(0, size, block):
        for idx in range(base, base + stride):
            n_j = 0
            for k in range(r):
                n_j += table[idx + k * stride]
            if n_j > 0:
                out[cnt] = n_j
                cnt += 1
    return cnt


@njit(cache=True)
def _config_terms(totals: np.ndarray, cnt: int, r: int, score_kind: int, a_j: float,
                  lfact: np.ndarray, rc: RisingCache) -> float:
    """sum_j lgamma(a_ij) - lgamma(a_ij + N_ij) over the configuration totals of a family
    (:func:`_config_totals`; K2: a_ij = r, by log-factorials)."""
    total = 0.0
    for t in range(cnt):
        n = totals[t]
        if score_kind == 0:
            total += lfact[r - 1] - lfact[r + n - 1]
        else:
            total -= log_rising(rc, a_j, n)
    return total


@njit(cache=True)
def joint_family_log_ml(table: np.ndarray, touched: np.ndarray, n_touched: int, size: int,
                        stride: int, r: int, sparse: bool, score_kind: int, ess: float,
                        lfact: np.ndarray, nj: np.ndarray, totals: np.ndarray,
                        rc: RisingCache) -> float:
    """Log marginal likelihood of the child with stride ``stride`` and ``r`` states inside the
    integer joint count table of a variable set (mixed radix, first variable fastest; sparse:
    only the ``n_touched`` non-zero cells listed in ``touched`` are read): cell terms
    (:func:`_cell_terms`) plus configuration terms (:func:`_config_terms`). score_kind 0 = K2
    (a_ijk = 1, log-factorials), 1 = BDeu(ess) (terms by
    :func:`bnma_core.kernels.counting.log_rising` from the cache ``rc``). ``nj`` (table size,
    zeroed) and ``totals`` (at least q) are work arrays.

    The family score of :func:`bnma_core.kernels.counting.log_ml_uniform_alpha` (the one home,
    Heckerman et al. 1995 eq. 8) read in place from the joint table, in two parts so that
    :func:`_score_set` computes the cell terms once per set and prior and the configuration
    totals once per family for all priors. ``tests/structure/test_score_table.py`` asserts it
    equals the home to 1e-12 (hypothesis, random tables, K2 and BDeu, dense and sparse).
    """
    q = size // r
    a = 1.0 if score_kind == 0 else ess / size
    a_j = 1.0 * r if score_kind == 0 else ess / q
    cnt = _config_totals(table, touched, n_touched, size, stride, r, sparse, nj, totals)
    return (_cell_terms(table, touched, n_touched, size, sparse, score_kind, a, lfact, rc)
            + _config_terms(totals, cnt, r, score_kind, a_j, lfact, rc))


@njit(cache=True)
def _extend_rows(row_v: np.ndarray, prev: np.ndarray, cur: np.ndarray, st: int) -> None:
    """Joint-table cell of every row after adding a variable with stride ``st`` (-1 = a
    variable of the set is missing in the row)."""
    for row in range(row_v.shape[0]):
        x = row_v[row]
        p = prev[row]
        if x < 0 or p < 0:
            cur[row] = -1
        else:
            cur[row] = p + x * st


@njit(cache=True)
def _count_child(cfg: np.ndarray, x_i: np.ndarray, weights: np.ndarray, r: int,
                 buf: np.ndarray) -> np.ndarray:
    """Add the counts of a child with ``r`` states (its value ``x_i[row]`` in each row) by
    parent configuration ``cfg[row]`` (-1 = the child or a parent missing) into ``buf`` at
    j * r + k, row r counting ``weights[r]`` times, and return ``buf`` (its first q r entries
    are the (q, r) counts of :func:`bnma_core.kernels.counting.count_family_weighted`; the
    caller zeroes them after use). ``cfg`` comes from :func:`_extend_rows`, one parent at a
    time."""
    for row in range(cfg.shape[0]):
        c = cfg[row]
        if c >= 0:
            buf[c * r + x_i[row]] += weights[row]
    return buf


@njit(cache=True)
def _fill_joint(cur: np.ndarray, table: np.ndarray, touched: np.ndarray, sparse: bool,
                weights: np.ndarray) -> tuple[int, int]:
    """Count the rows' cells into ``table``, row r counting ``weights[r]`` times (the
    multiplicity of a distinct row); returns (cells touched (sparse only), rows complete on
    the set)."""
    n_touched = 0
    n_complete = 0
    for row in range(cur.shape[0]):
        p = cur[row]
        if p >= 0:
            if sparse and table[p] == 0:
                touched[n_touched] = p
                n_touched += 1
            wr = weights[row]
            table[p] += wr
            n_complete += wr
    return n_touched, n_complete


@njit(cache=True)
def _count_values(table: np.ndarray, touched: np.ndarray, n_touched: int, size: int,
                  sparse: bool, chist: np.ndarray, cvals: np.ndarray) -> int:
    """The distinct non-zero counts of a joint count table (dense: every cell; sparse: the
    ``n_touched`` listed ones) into ``cvals[:nd]``, the number of cells holding count c added
    to ``chist[c]`` (a zeroed work array of the largest count + 1; the caller reads and zeroes
    ``chist[cvals[:nd]]``); returns nd."""
    nd = 0
    for t in range(n_touched if sparse else size):
        c = table[touched[t]] if sparse else table[t]
        if c > 0:
            if chist[c] == 0:
                cvals[nd] = c
                nd += 1
            chist[c] += 1
    return nd


@njit(cache=True)
def _score_set(members: np.ndarray, stride: np.ndarray, table: np.ndarray, touched: np.ndarray,
               n_touched: int, n_complete: int, n_rows: int, size: int, sparse: bool,
               arities: np.ndarray, log_prior: float, score_kinds: np.ndarray,
               esses: np.ndarray, lfact: np.ndarray, nj: np.ndarray, totals: np.ndarray,
               cterms: np.ndarray, cfit: np.ndarray, chist: np.ndarray, cvals: np.ndarray,
               rc: RisingCache, masks: np.ndarray, scores: np.ndarray, fill: np.ndarray
               ) -> None:
    """Score the families "v given the set minus v" of one variable set from its joint count
    table (member s has stride ``stride[s]``) under every prior (``score_kinds[p]``,
    ``esses[p]``), appending them to ``masks`` / ``scores[p]`` (``fill[p]`` per node). Each
    family's log-ML is :func:`joint_family_log_ml`'s and, when rows are missing, its fit
    :func:`joint_family_fit`'s, both in two parts: the cell parts (sum over the non-zero cells
    of lgamma(a + N) - lgamma(a), and of N log(N + a)) depend on the set and the prior only
    (a = a_ijk is the same for every family of the set) and are computed once per prior from
    the distinct counts and their numbers of cells (:func:`_count_values`; ``cterms``,
    ``cfit``: work arrays of P; ``chist``, ``cvals``: :func:`_count_values`'), the
    configuration parts once per family from its configuration totals."""
    n_p = score_kinds.shape[0]
    missing = 0 < n_complete < n_rows
    nd = _count_values(table, touched, n_touched, size, sparse, chist, cvals)
    for p in range(n_p):
        kind = score_kinds[p]
        a = 1.0 if kind == 0 else esses[p] / size
        ct = 0.0
        cf = 0.0
        for d in range(nd):
            c = cvals[d]
            m = chist[c]
            ct += m * (lfact[c] if kind == 0 else log_rising(rc, a, c))
            if missing:
                cf += m * (c * math.log(c + a))
        cterms[p] = ct
        cfit[p] = cf
    for d in range(nd):
        chist[cvals[d]] = 0
    setmask = np.uint64(0)
    for s in range(members.shape[0]):
        setmask |= np.uint64(1) << np.uint64(members[s])
    for s in range(members.shape[0]):
        child = members[s]
        r = arities[child]
        cnt = _config_totals(table, touched, n_touched, size, stride[s], r, sparse, nj, totals)
        for p in range(n_p):
            kind = score_kinds[p]
            a_j = 1.0 * r if kind == 0 else esses[p] / (size // r)
            ml = cterms[p] + _config_terms(totals, cnt, r, kind, a_j, lfact, rc)
            if missing:  # the configuration part of the fit
                a_r = (1.0 if kind == 0 else esses[p] / size) * r
                fit = cfit[p]
                for t in range(cnt):
                    fit -= totals[t] * math.log(totals[t] + a_r)
                ml = node_average_log_ml(ml, fit, n_rows, n_complete)
            k = fill[p, child]
            masks[child, k] = setmask ^ (np.uint64(1) << np.uint64(child))
            scores[p, child, k] = log_prior + ml
            fill[p, child] = k + 1


@njit(cache=True)
def build_full_table(data_t: np.ndarray, weights: np.ndarray, arities: np.ndarray,
                     max_parents: int, log_prior: np.ndarray, score_kind: int, ess: float,
                     n_sets: int, max_cells: int) -> tuple[np.ndarray, np.ndarray]:
    """Local scores of every family with at most ``max_parents`` parents.

    Every variable set V with |V| <= max_parents + 1 is enumerated depth-first; its joint
    contingency table is counted once (the row index of the prefix is reused, DESIGN §9) and the
    |V| families "v given V minus v" are scored from it, by the node-average log-ML
    (:func:`node_average_log_ml`) when rows are missing.
    Returns unsorted ``masks`` (n, n_sets) uint64 and ``scores`` (n, n_sets) float64.
    """
    n, n_distinct = data_t.shape
    n_rows = 0
    for r_ in range(n_distinct):
        n_rows += weights[r_]
    L = max_parents + 1
    masks = np.zeros((n, n_sets), dtype=np.uint64)
    scores = np.full((n, n_sets), -np.inf)
    fill = np.zeros(n, dtype=np.int64)
    lfact = log_factorials(n_rows + 2 + int(arities.max()))
    comb = np.zeros(L, dtype=np.int64)
    partial = np.zeros((L + 1, n_distinct), dtype=np.int64)
    stride = np.ones(L + 1, dtype=np.int64)
    table = np.zeros(max_cells, dtype=np.int64)
    touched = np.empty(max_cells, dtype=np.int64)
    nj = np.zeros(max_cells, dtype=np.int64)
    totals = np.empty(max_cells, dtype=np.int64)
    kinds = np.full(1, score_kind, dtype=np.int64)
    esses = np.full(1, ess)
    cterms = np.empty(1)
    cfit = np.empty(1)
    chist = np.zeros(n_rows + 1, dtype=np.int64)
    cvals = np.empty(min(max_cells, n_rows + 1), dtype=np.int64)
    rc = rising_cache(RISING_SLOTS)
    t = 0
    comb[0] = 0
    while t >= 0:
        if comb[t] >= n:
            t -= 1
            if t >= 0:
                comb[t] += 1
            continue
        v = comb[t]
        _extend_rows(data_t[v], partial[t], partial[t + 1], stride[t])
        size = stride[t] * arities[v]
        stride[t + 1] = size
        sparse = n_distinct < size  # fewer rows than cells: visit only the non-zero cells
        n_touched, n_complete = _fill_joint(partial[t + 1], table, touched, sparse, weights)
        _score_set(comb[: t + 1], stride, table, touched, n_touched, n_complete, n_rows, size,
                   sparse, arities, log_prior[t], kinds, esses, lfact, nj, totals, cterms,
                   cfit, chist, cvals, rc, masks, scores.reshape((1, n, n_sets)),
                   fill.reshape((1, n)))
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
def family_local_ml(data: np.ndarray, weights: np.ndarray, arities: np.ndarray, child: int,
                    parents: np.ndarray, score_kind: int, ess: float) -> float:
    """Node-average log marginal likelihood of one family counted from ``data`` (n_distinct,
    n_vars), row r counting ``weights[r]`` times (multiplicities of distinct rows, float64):
    counts and log-ML by their homes in :mod:`bnma_core.kernels.counting`, completed by
    :func:`node_average_log_ml`."""
    return family_local_ml_cached(data, weights, arities, child, parents, score_kind, ess,
                                  rising_cache(2))


@njit(cache=True)
def family_local_ml_cached(data: np.ndarray, weights: np.ndarray, arities: np.ndarray,
                           child: int, parents: np.ndarray, score_kind: int, ess: float,
                           rc: RisingCache) -> float:
    """:func:`family_local_ml` reading its log-ML terms from ``rc``
    (:func:`bnma_core.kernels.counting.rising_cache`, one for all the families a kernel
    scores)."""
    counts = count_family_weighted(data, weights, child, parents, arities)
    return counts_local_ml(counts, weights.sum(), score_kind, ess, rc)


@njit(cache=True)
def counts_local_ml(counts: np.ndarray, n_rows: float, score_kind: int, ess: float,
                    rc: RisingCache) -> float:
    """Node-average log marginal likelihood of a family from its (q, r) counts over
    ``n_rows`` rows: :func:`bnma_core.kernels.counting.log_ml_uniform_alpha_cached` completed by
    :func:`node_average_log_ml` (K2: a_ijk = 1; BDeu: ess / (r q))."""
    q, r = counts.shape
    a = 1.0 if score_kind == 0 else ess / (r * q)
    ml = log_ml_uniform_alpha_cached(counts, a, rc)
    n_family = counts.sum()
    if 0 < n_family < n_rows:
        fit = joint_family_fit(counts.ravel(), q * r, 1, r, a)
        ml = node_average_log_ml(ml, fit, n_rows, n_family)
    return ml


@njit(cache=True)
def _popcount(x: int) -> int:
    c = 0
    while x:
        x &= x - 1
        c += 1
    return c


ZETA_LINEAR_RANGE = 700.0  # nats between a row's largest entry and its empty set


@njit(cache=True)
def _zeta_log(row: np.ndarray, K: int) -> None:
    """In place: row[U] <- log sum_{S ⊆ U} exp row[S] over K-bit masks (subset-sum transform).

    Every U contains the empty set, so when row[∅] is within ``ZETA_LINEAR_RANGE`` nats of the
    row's largest entry M, every sum is at least e^-700 times exp M: the transform runs on
    exp(row - M) with plain additions (no term that matters underflows; the relative error of
    a sum of K-fold additions of positive numbers is below K machine epsilons) and one log per
    entry, instead of one exp and one log1p per addition. Otherwise it runs in log space
    (:func:`bnma_core.kernels.order_dp.log_zeta_subsets`). The two agree to 1e-12
    (``tests/kernels/test_candidate_tables.py``)."""
    full = 1 << K
    top = row.max()
    if not (row[0] > -np.inf and top - row[0] <= ZETA_LINEAR_RANGE):
        log_zeta_subsets(row, K)
        return
    for u in range(full):
        row[u] = math.exp(row[u] - top) if row[u] > -np.inf else 0.0
    b = 0
    while b + 1 < K:  # bits b and b + 1 in one pass (the additions of two passes, in order)
        bit = 1 << b
        for base in range(0, full, bit << 2):
            for u in range(base, base + bit):
                x0 = row[u]
                x1 = row[u + bit] + x0
                x2 = row[u + 2 * bit]
                x3 = row[u + 3 * bit] + x2
                row[u + bit] = x1
                row[u + 2 * bit] = x2 + x0
                row[u + 3 * bit] = x3 + x1
        b += 2
    if b < K:
        bit = 1 << b
        for u in range(bit):
            row[u + bit] += row[u]
    for u in range(full):
        row[u] = top + math.log(row[u])


def build_candidate_table(data_t: np.ndarray, weights: np.ndarray, arities: np.ndarray,
                          cand: np.ndarray,
                          max_parents: int, log_prior: np.ndarray, score_kind: int, ess: float,
                          n_sets: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Candidate-restricted regime: for node i, every subset S of its K candidates
    ``cand[i]`` with |S| <= max_parents is scored; returns ``masks`` / ``scores`` (n, n_sets),
    the masks *local* to the node's candidates (bit b = ``cand[i, b]``, so no global variable
    bitmask and no limit on the number of variables), and the per-node table
    ``logsum[i, U] = log sum_{S ⊆ U} exp S(X_i; S)`` over all 2^K candidate bitmasks U,
    computed by a zeta (subset-sum) transform in log space. One prior of
    :func:`build_candidate_tables`."""
    masks, scores, logsum = build_candidate_tables(
        data_t, weights, arities, np.ascontiguousarray(cand[None]), max_parents, log_prior,
        np.array([score_kind], np.int64), np.array([ess], np.float64), n_sets,
        np.ones(1, dtype=np.bool_))
    return masks, scores[0], logsum[0]


@njit(cache=True)
def _next_candidate(start: int, n_union: int, ok: np.ndarray, pos: np.ndarray) -> int:
    """First union member j >= ``start`` that some prior still counting the current family
    (``ok[p]``) has among its candidates (``pos[p, j]`` >= 0); ``n_union`` if none."""
    for j in range(start, n_union):
        for p in range(ok.shape[0]):
            if ok[p] and pos[p, j] >= 0:
                return j
    return n_union


@njit(cache=True)
def build_candidate_tables(data_t: np.ndarray, weights: np.ndarray, arities: np.ndarray,
                           cands: np.ndarray, max_parents: int, log_prior: np.ndarray,
                           score_kinds: np.ndarray, esses: np.ndarray, n_sets: int,
                           zeta: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`build_candidate_table` for P Dirichlet priors (``score_kinds[p]``, ``esses[p]``)
    with candidates ``cands[p]`` (n, K) each, from one counting pass: each family of a node
    (a subset of at most ``max_parents`` of the union of its candidates under the priors that
    is within one prior's candidates) is counted once and scored under every prior whose
    candidates contain it (the three priors of ``stack``, DESIGN §9). The subsets are
    enumerated depth-first, each family's parent configuration of every row extended from its
    prefix's by one variable (one read per row instead of one per parent). ``data_t`` (n, U)
    distinct rows, ``weights`` (U,) float64 multiplicities. Returns ``masks`` (n, n_sets),
    the same for every prior (subsets in increasing local bitmask), ``scores`` (P, n, n_sets)
    and ``logsum`` (P, n, 2^K): zeta-transformed for the priors with ``zeta[p]``, else each
    set's score at its local mask (-inf elsewhere) for :func:`zeta_log_rows` later."""
    n_p, n, K = cands.shape
    u_rows = data_t.shape[1]
    full = 1 << K
    n_rows = weights.sum()
    slot = np.full(full, -1, dtype=np.int64)  # position of each local mask in a node's list
    k = 0
    for local in range(full):
        if _popcount(local) <= max_parents:
            slot[local] = k
            k += 1
    masks = np.zeros((n, n_sets), dtype=np.uint64)
    for i in range(n):
        for local in range(full):
            if slot[local] >= 0:
                masks[i, slot[local]] = np.uint64(local)
    scores = np.full((n_p, n, n_sets), -np.inf)
    logsum = np.full((n_p, n, full), -np.inf)
    top = np.sort(arities)[::-1]
    max_cells = 1
    for t in range(min(max_parents + 1, n)):
        max_cells *= top[t]
    buf = np.zeros(max_cells)
    L = max_parents + 1
    cfg = np.empty((L, u_rows), dtype=np.int64)
    stride = np.ones(L, dtype=np.int64)
    comb = np.zeros(L, dtype=np.int64)  # union positions of the current family's parents
    ok = np.zeros((L, n_p), dtype=np.bool_)  # ok[t, p]: prior p has the family at depth t
    loc = np.zeros((L, n_p), dtype=np.int64)  # its mask local to prior p's candidates
    pos = np.empty((n_p, n_p * K), dtype=np.int64)
    rc = rising_cache(RISING_SLOTS)
    for i in range(n):
        r = arities[i]
        x_i = data_t[i]
        union = np.unique(cands[:, i, :])
        n_union = union.shape[0]
        pos[:, :] = -1
        for p in range(n_p):
            for b in range(K):
                pos[p, np.searchsorted(union, cands[p, i, b])] = b
        for row in range(u_rows):
            cfg[0, row] = 0 if x_i[row] >= 0 else -1
        ok[0, :] = True
        loc[0, :] = 0
        t = 0  # depth: the family counted has t parents, union members comb[:t]
        while True:
            q = stride[t]
            counts = _count_child(cfg[t], x_i, weights, r, buf)[: q * r].reshape((q, r))
            for p in range(n_p):
                if ok[t, p]:
                    sc = log_prior[t] + counts_local_ml(counts, n_rows, score_kinds[p], esses[p],
                                                        rc)
                    scores[p, i, slot[loc[t, p]]] = sc
                    logsum[p, i, loc[t, p]] = sc
            buf[: q * r] = 0.0
            # next family in depth-first order: descend, else advance, else backtrack
            j = n_union
            if t < max_parents:
                j = _next_candidate(comb[t - 1] + 1 if t > 0 else 0, n_union, ok[t], pos)
            if j < n_union:
                comb[t] = j
                t += 1
            else:
                while t > 0:
                    j = _next_candidate(comb[t - 1] + 1, n_union, ok[t - 1], pos)
                    if j < n_union:
                        comb[t - 1] = j
                        break
                    t -= 1
                if t == 0:
                    break
            j = comb[t - 1]
            u = union[j]
            for p in range(n_p):
                ok[t, p] = ok[t - 1, p] and pos[p, j] >= 0
                loc[t, p] = loc[t - 1, p] | (1 << max(pos[p, j], 0))
            stride[t] = stride[t - 1] * arities[u]
            _extend_rows(data_t[u], cfg[t - 1], cfg[t], stride[t - 1])
        for p in range(n_p):
            if zeta[p]:
                _zeta_log(logsum[p, i], K)
    return masks, scores, logsum


@njit(cache=True)
def zeta_log_rows(logsum: np.ndarray, K: int) -> None:
    """In place: every row of ``logsum`` (n, 2^K) subset-sum transformed (:func:`_zeta_log`),
    the last step of :func:`build_candidate_tables` for a table built without it."""
    for i in range(logsum.shape[0]):
        _zeta_log(logsum[i], K)


@njit(cache=True)
def single_parent_scores(data_t: np.ndarray, weights: np.ndarray, arities: np.ndarray,
                         log_prior: np.ndarray,
                         score_kind: int, ess: float) -> np.ndarray:
    """out[i, j] = S(X_i; {X_j}) for j != i and out[i, i] = S(X_i; ∅) (node-average
    log-ML as in the tables, :func:`family_local_ml`), for any number of variables; the
    candidate choice of :func:`bnma_core.structure.score_table.select_candidates`."""
    n = data_t.shape[0]
    data = np.ascontiguousarray(data_t.T)
    out = np.empty((n, n))
    pa = np.zeros(1, dtype=np.int64)
    rc = rising_cache(RISING_SLOTS)
    for i in range(n):
        out[i, i] = log_prior[0] + family_local_ml_cached(data, weights, arities, i, pa[:0],
                                                          score_kind, ess, rc)
        for j in range(n):
            if j != i:
                pa[0] = j
                out[i, j] = log_prior[1] + family_local_ml_cached(data, weights, arities, i,
                                                                  pa, score_kind, ess, rc)
    return out


@njit(cache=True)
def extended_set_scores(data: np.ndarray, weights: np.ndarray, arities: np.ndarray,
                        child: int, base: np.ndarray,
                        others: np.ndarray, log_prior: float, score_kind: int,
                        ess: float) -> np.ndarray:
    """out[t] = S(X_child; base ∪ {others[t]}) (``log_prior`` = the prior of that size,
    ``data`` (n_rows, n_vars)); the boundary scores of candidate expansion
    (:func:`bnma_core.structure.candidates.expand_candidates`)."""
    out = np.empty(others.shape[0])
    pa = np.empty(base.shape[0] + 1, dtype=np.int64)
    rc = rising_cache(RISING_SLOTS)
    for c in range(base.shape[0]):
        pa[c] = base[c]
    for t in range(others.shape[0]):
        pa[base.shape[0]] = others[t]
        out[t] = log_prior + family_local_ml_cached(data, weights, arities, child, pa,
                                                    score_kind, ess, rc)
    return out


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


@njit(cache=True, inline="always")
def candidate_mask_before(cand: np.ndarray, cbit: np.ndarray, v: int, pos: np.ndarray,
                          limit: int) -> int:
    """Bitmask over node v's K candidates of those at a position < ``limit`` (``pos[u]`` =
    position of u): the index of v's node term in ``logsum`` when v stands at ``limit``.
    Candidates are indexed within the candidate set, so any number of variables works."""
    local = 0
    for b in range(cand.shape[1]):
        if pos[cand[v, b]] < limit:
            local |= 1 << b
    return local


@njit(cache=True)
def candidate_bits(cand: np.ndarray, n: int) -> np.ndarray:
    """cbit[v, u] = 1 << b if u is v's b-th candidate, else 0 ((n, n) int32, K <= 31)."""
    out = np.zeros((cand.shape[0], n), dtype=np.int32)
    for v in range(cand.shape[0]):
        for b in range(cand.shape[1]):
            out[v, cand[v, b]] = 1 << b
    return out


@njit(cache=True)
def order_positions(order: np.ndarray) -> np.ndarray:
    """pos[order[p]] = p."""
    pos = np.empty(order.shape[0], dtype=np.int64)
    for p in range(order.shape[0]):
        pos[order[p]] = p
    return pos


@njit(cache=True)
def order_terms(order: np.ndarray, tab: TableArrays
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Full (non-incremental) evaluation of an order: predecessor bitmasks (full regime, n <=
    64; zeros in the candidate regime), node terms, and candidate-local masks (candidate
    regime; zeros in the full regime), per position."""
    n = order.shape[0]
    prefix = np.zeros(n, dtype=np.uint64)
    terms = np.zeros(n)
    local = np.zeros(n, dtype=np.int64)
    if tab.regime == 1:
        pos = order_positions(order)
        for p in range(n):
            v = order[p]
            m = candidate_mask_before(tab.cand, tab.cbit, v, pos, p)
            local[p] = m
            terms[p] = tab.logsum[v, m]
        return prefix, terms, local
    pred = np.uint64(0)
    for p in range(n):
        v = order[p]
        prefix[p] = pred
        terms[p] = node_log_sum(tab.masks[v], tab.scores[v], tab.exps[v], tab.bid[v],
                                tab.band_first[v], tab.band_anchor[v], tab.limits[v], pred,
                                tab.log_eps_rel)
        pred |= np.uint64(1) << np.uint64(v)
    return prefix, terms, local


@njit(cache=True)
def candidate_local_masks(order: np.ndarray, cand: np.ndarray, cbit: np.ndarray) -> np.ndarray:
    """Candidate regime: ``local[p]`` = bitmask over the candidates of ``order[p]`` of those
    placed before position p (the index of its node term in ``logsum``)."""
    pos = order_positions(order)
    local = np.zeros(order.shape[0], dtype=np.int64)
    for p in range(order.shape[0]):
        local[p] = candidate_mask_before(cand, cbit, order[p], pos, p)
    return local


# --------------------------------------------------------------------------------------------
# Order MCMC
# --------------------------------------------------------------------------------------------


class _Scratch(NamedTuple):
    """Work arrays of :func:`_segment_move` (the proposed segment)."""

    new_order: np.ndarray
    new_prefix: np.ndarray
    new_terms: np.ndarray
    new_local: np.ndarray


@njit(cache=True, inline="always")
def _propose_into(order: np.ndarray, new_order: np.ndarray, i: int, j: int, kind: int,
                  lo: int, hi: int) -> None:
    """Proposed order of positions lo..hi (lo = min(i, j), hi = max(i, j)) into
    ``new_order``: swap positions i and j (kind 0) or relocate the node at position i to
    position j (kind 1). The one definition of the proposal: the chain
    (:func:`_propose_segment`) and :func:`propose_order` both call it."""
    if kind == 0:
        for p in range(lo, hi + 1):
            new_order[p] = order[p]
        new_order[i] = order[j]
        new_order[j] = order[i]
    elif i < j:
        for p in range(i, j):
            new_order[p] = order[p + 1]
        new_order[j] = order[i]
    else:
        for p in range(j + 1, i + 1):
            new_order[p] = order[p - 1]
        new_order[j] = order[i]


@njit(cache=True, inline="always")
def _propose_segment(ch: ChainArrays, w: _Scratch, it: int, lo: int, hi: int) -> None:
    """Proposed order of positions lo..hi of iteration ``it``'s move into ``w.new_order``."""
    _propose_into(ch.order, w.new_order, ch.move_i[it], ch.move_j[it], ch.move_kind[it], lo,
                  hi)


@njit(cache=True)
def propose_order(order: np.ndarray, i: int, j: int, kind: int) -> np.ndarray:
    """The whole order a move proposes (a copy): swap positions i and j (kind 0) or relocate
    the node at position i to position j (kind 1), by the chain's own :func:`_propose_into`
    (what step mode shows for a rejected move)."""
    new_order = order.copy()
    _propose_into(order, new_order, i, j, kind, min(i, j), max(i, j))
    return new_order


@njit(cache=True, inline="always")
def _ref_sq_distance_change(ref_pos: np.ndarray, order: np.ndarray, new_order: np.ndarray,
                            lo: int, hi: int) -> float:
    """Change of Σ_p (p - ref_pos[order[p]])² when positions ``lo..hi`` of ``order`` become
    those of ``new_order``: the update of the Spearman distance to the reference order
    (Hwang & Zhang 2005's rank-correlation trace) for a move that touches only that segment."""
    dsum = 0.0
    for p in range(lo, hi + 1):
        d_old = p - ref_pos[order[p]]
        d_new = p - ref_pos[new_order[p]]
        dsum += d_new * d_new - d_old * d_old
    return dsum


@njit(cache=True, inline="always")
def _segment_move(tab: TableArrays, ch: ChainArrays, w: _Scratch, it: int, lo: int, hi: int,
                  has_ref: bool) -> tuple[bool, float, float]:
    """Any move in the full regime: rescore positions lo..hi of the proposed order, accept or
    not, update. Returns (accepted, log acceptance ratio = proposed minus current log score,
    change of sum d^2 (0 when rejected))."""
    _propose_segment(ch, w, it, lo, hi)
    order, prefix, terms, ref_pos = ch.order, ch.prefix, ch.terms, ch.ref_pos
    new_order, new_prefix, new_terms = w.new_order, w.new_prefix, w.new_terms
    pred = prefix[lo]
    delta = 0.0
    for p in range(lo, hi + 1):
        v = new_order[p]
        new_prefix[p] = pred
        t = node_log_sum(tab.masks[v], tab.scores[v], tab.exps[v], tab.bid[v],
                         tab.band_first[v], tab.band_anchor[v], tab.limits[v], pred,
                         tab.log_eps_rel)
        new_terms[p] = t
        delta += t - terms[p]
        pred |= np.uint64(1) << np.uint64(v)
    if not ch.log_u[it] < delta:
        return False, delta, 0.0
    dsum = _ref_sq_distance_change(ref_pos, order, new_order, lo, hi) if has_ref else 0.0
    for p in range(lo, hi + 1):
        order[p] = new_order[p]
        prefix[p] = new_prefix[p]
        terms[p] = new_terms[p]
    return True, delta, dsum


@njit(cache=True, inline="always")
def _candidate_relocate(tab: TableArrays, ch: ChainArrays, w: _Scratch, it: int, lo: int,
                        hi: int, has_ref: bool) -> tuple[bool, float, float]:
    """Candidate regime, relocation of the node u at position i to position j: the nodes
    between shift by one and gain (i > j) or lose (i < j) u as a predecessor, so their mask
    changes by ``cbit[v, u]``; u's mask is read from the positions (predecessors: pos <= j if
    i < j, pos < j if i > j). Rescored in position order, as a full rescore would be."""
    _propose_segment(ch, w, it, lo, hi)
    order, terms, local, pos, ref_pos = ch.order, ch.terms, ch.local, ch.pos, ch.ref_pos
    new_order, new_terms, new_local = w.new_order, w.new_terms, w.new_local
    cand, cbit, logsum = tab.cand, tab.cbit, tab.logsum
    i = ch.move_i[it]
    j = ch.move_j[it]
    u = order[i]
    shift = 1 if i < j else -1  # node at new position p was at p + shift
    delta = 0.0
    for p in range(lo, hi + 1):
        v = new_order[p]
        if p == j:
            m = candidate_mask_before(cand, cbit, u, pos, j + 1 if i < j else j)
            t = logsum[u, m]
        else:
            x = cbit[v, u]
            m = local[p + shift]
            t = terms[p + shift]
            if x != 0:
                m ^= x
                t = logsum[v, m]
        new_local[p] = m
        new_terms[p] = t
        delta += t - terms[p]
    if not ch.log_u[it] < delta:
        return False, delta, 0.0
    dsum = _ref_sq_distance_change(ref_pos, order, new_order, lo, hi) if has_ref else 0.0
    for p in range(lo, hi + 1):
        order[p] = new_order[p]
        pos[new_order[p]] = p
        terms[p] = new_terms[p]
        local[p] = new_local[p]
    return True, delta, dsum


@njit(cache=True, nogil=True)
def mcmc_run(tab: TableArrays, ch: ChainArrays, start: int, stop: int) -> None:
    """Metropolis-Hastings over node orders for iterations ``start..stop-1`` (in place).

    Move kinds (all symmetric proposals, so the acceptance ratio is P(new|D)/P(old|D),
    Hwang & Zhang eq. 12): 0 = swap positions i and j (the paper's move; adjacent swaps are
    drawn with j = i + 1), 1 = relocate the node at position i to position j. Only positions
    min(i, j)..max(i, j) are rescored. ``ch.state`` = [total log score, accepted count,
    sum of squared rank differences to the reference (if any)].
    Candidate regime (``tab.regime`` 1): ``local[p]`` is the candidate-local mask of the node
    at position p (:func:`candidate_local_masks`), the index of its term in ``logsum``, and
    ``pos[v]`` the position of v; no global variable bitmask is used, so any number of
    variables works. In a swap of positions lo < hi with a = order[lo], b = order[hi], b moves
    to lo (its mask: its candidates at positions < lo) and a to hi (its candidates at
    positions < hi, and b); an adjacent swap reads both from the old masks (b loses a, a gains
    b), in O(1). Every node v strictly between keeps its position and its
    predecessor set loses a and gains b, so its mask changes by x = cbit[v, a] | cbit[v, b]
    (the bits of a and b among v's candidates, 0 if not candidates): local'[p] = local[p] ^ x,
    rescored only if x != 0. The changed positions are collected in ``chg_*`` and written back
    only on acceptance; ``delta`` is summed in position order, as a full rescore of lo..hi
    would, so the chain is identical to one that rescores every position. Relocations:
    :func:`_candidate_relocate`; full regime: :func:`_segment_move`.

    Why the candidate swap is written inline, with the namedtuples' fields unpacked once into
    locals, and the arrays indexed in place (``logsum[v, m]``, not a row view made in the
    loop): each field read from a tuple and each view made inside the loop is a
    reference-count update, which cost a quarter to a third of the speed (docs/decisions.md
    §2).
    Random draws are made outside (``move_*``, ``log_u``), so runs split into chunks give the
    same chain as one run.

    Records for step mode and diagnostics: when ``ch.trace_delta`` has a slot per iteration,
    it receives each proposal's log acceptance ratio (proposed minus current log score, also
    for rejected moves; the acceptance probability is min(1, exp(delta))); ``ch.thin_orders``
    row r receives the order after iteration (r + 1) * ``ch.thin``. Both cost one comparison
    per iteration when off (``benchmarks/mcmc_step.py``).
    """
    order, terms, local, pos, state = ch.order, ch.terms, ch.local, ch.pos, ch.state
    move_i, move_j, move_kind, log_u = ch.move_i, ch.move_j, ch.move_kind, ch.log_u
    trace_score, trace_acc, keep_slot, kept = ch.trace_score, ch.trace_acc, ch.keep_slot, ch.kept
    ref_pos, trace_spear = ch.ref_pos, ch.trace_spear
    trace_delta, thin_orders, thin = ch.trace_delta, ch.thin_orders, ch.thin
    logsum, cand, cbit, regime = tab.logsum, tab.cand, tab.cbit, tab.regime
    K = cand.shape[1]
    n = order.shape[0]
    w = _Scratch(np.empty(n, dtype=order.dtype), np.empty(n, dtype=np.uint64),
                 np.empty(n), np.empty(n, dtype=np.int64))
    chg_pos = np.empty(n, dtype=np.int64)
    chg_term = np.empty(n)
    chg_local = np.empty(n, dtype=np.int64)
    has_ref = ref_pos.shape[0] == n
    record = trace_delta.shape[0] > 0
    # next iteration whose order is recorded: (it + 1) a multiple of thin (-1 = none)
    next_thin = -1
    if thin > 0 and thin_orders.shape[0] > 0:
        next_thin = ((start + thin) // thin) * thin - 1
    total = state[0]
    n_acc = state[1]
    sumd2 = state[2]
    for it in range(start, stop):
        i = move_i[it]
        j = move_j[it]
        lo = min(i, j)
        hi = max(i, j)
        if regime == 1 and move_kind[it] == 0:
            # candidate regime, swap (see the docstring)
            a = order[lo]
            b = order[hi]
            if hi == lo + 1:  # adjacent: b loses a as a predecessor
                m = local[hi] ^ cbit[b, a]
            else:
                m = 0
                for q in range(K):
                    if pos[cand[b, q]] < lo:
                        m |= 1 << q
            t = logsum[b, m]
            chg_pos[0] = lo
            chg_term[0] = t
            chg_local[0] = m
            delta = t - terms[lo]
            n_chg = 1
            for p in range(lo + 1, hi):
                v = order[p]
                x = cbit[v, a] | cbit[v, b]
                if x != 0:
                    m = local[p] ^ x
                    t = logsum[v, m]
                    chg_pos[n_chg] = p
                    chg_term[n_chg] = t
                    chg_local[n_chg] = m
                    delta += t - terms[p]
                    n_chg += 1
            if hi == lo + 1:  # adjacent: a gains b
                m = local[lo] | cbit[a, b]
            else:
                m = cbit[a, b]
                for q in range(K):
                    if pos[cand[a, q]] < hi:
                        m |= 1 << q
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
                pos[b] = lo
                pos[a] = hi
                for c in range(n_chg):
                    p = chg_pos[c]
                    terms[p] = chg_term[c]
                    local[p] = chg_local[c]
                total += delta
                n_acc += 1
        else:
            if regime == 1:
                accepted, delta, dsum = _candidate_relocate(tab, ch, w, it, lo, hi, has_ref)
            else:
                accepted, delta, dsum = _segment_move(tab, ch, w, it, lo, hi, has_ref)
            if accepted:
                total += delta
                n_acc += 1
                sumd2 += dsum
        trace_score[it] = total
        trace_acc[it] = accepted
        if record:
            trace_delta[it] = delta
        if it == next_thin:
            row = (it + 1) // thin - 1
            if row < thin_orders.shape[0]:
                for p in range(n):
                    thin_orders[row, p] = order[p]
            next_thin += thin
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


@njit(cache=True)
def _node_pred(tab: TableArrays, order: np.ndarray, pos: np.ndarray, v: int) -> np.uint64:
    """Predecessors of v in an order as the table's masks read them: a global bitmask (full
    regime) or a mask over v's candidates (candidate regime)."""
    if tab.regime == 1:
        return np.uint64(candidate_mask_before(tab.cand, tab.cbit, v, pos, pos[v]))
    pred = np.uint64(0)
    for p in range(pos[v]):
        pred |= np.uint64(1) << np.uint64(order[p])
    return pred


@njit(cache=True)
def window_buffers(orders: np.ndarray, m: int) -> tuple:
    """Work arrays of the kernels that apply each node's order windows
    (:func:`_node_windows`) for T orders (T, n) over tables of ``m`` parent sets per node:
    ``pos`` (T, n) the position of each variable in each order, ``W`` (T, m), ``used`` (m,),
    ``sum_w`` (T,), ``dep`` (T,), ``idx`` (m,), ``wv`` (m,), and ``pa`` / ``st`` (n,) for a
    parent set's parents and strides (:func:`_mask_parents`)."""
    T, n = orders.shape
    pos = np.empty((T, n), dtype=np.int64)
    for t in range(T):
        for p in range(n):
            pos[t, orders[t, p]] = p
    return (pos, np.zeros((T, m)), np.zeros(m, dtype=np.bool_), np.zeros(T),
            np.zeros(T, dtype=np.bool_), np.empty(m, dtype=np.int64), np.empty(m),
            np.empty(max(n, 1), dtype=np.int64), np.empty(max(n, 1), dtype=np.int64))


@njit(cache=True)
def _node_windows(tab: TableArrays, orders: np.ndarray, pos: np.ndarray, v: int,
                  class_index: int, W: np.ndarray, used: np.ndarray, sum_w: np.ndarray,
                  dep: np.ndarray, idx: np.ndarray, wv: np.ndarray) -> None:
    """For node v and every order t: window weights ``W[t, k]`` of v's parent sets, their sum,
    which sets any order uses, and whether v's term depends on the class (v is the class or
    comes after it)."""
    T = orders.shape[0]
    used[:] = False
    for t in range(T):
        pred = _node_pred(tab, orders[t], pos[t], v)
        cnt = _window(tab.masks[v], tab.scores[v], tab.limits[v], pred, tab.log_eps_rel, idx,
                      wv)
        W[t, :] = 0.0
        tot = 0.0
        for e in range(cnt):
            W[t, idx[e]] = wv[e]
            used[idx[e]] = True
            tot += wv[e]
        sum_w[t] = tot
        dep[t] = v == class_index or pos[t, class_index] < pos[t, v]


@njit(cache=True)
def _mask_parents(tab: TableArrays, v: int, g: np.uint64, arities: np.ndarray,
                  class_index: int, pa: np.ndarray, st: np.ndarray) -> tuple[int, int, int]:
    """Parents of node v's parent-set mask ``g`` (global, or local to v's candidates) into
    ``pa`` in increasing variable index, with their strides (first parent fastest) into
    ``st``; returns (number of parents, configurations q, index of the class among them or
    -1)."""
    npa = 0
    q = 1
    has_c = -1
    nb = tab.cand.shape[1] if tab.regime == 1 else arities.shape[0]
    for b in range(nb):
        if (g >> np.uint64(b)) & np.uint64(1):
            u = tab.cand[v, b] if tab.regime == 1 else b
            pa[npa] = u
            st[npa] = q
            if u == class_index:
                has_c = npa
            q *= arities[u]
            npa += 1
    return npa, q, has_c


@njit(cache=True)
def _prefix_key(pa: np.ndarray, npa: int, n: int, L: int) -> int:
    """Sort key of a parent list (ascending variable indices, at most L of n variables): the
    lists in key order are in lexicographic order, so consecutive families share their longest
    prefixes (:func:`_count_after`). Exact while (n + 1)^L < 2^62 (:func:`_prefix_order`)."""
    key = 0
    for d in range(L):
        key = key * (n + 1) + (pa[d] + 1 if d < npa else 0)
    return key


@njit(cache=True)
def _prefix_order(key: np.ndarray, n: int, L: int) -> np.ndarray:
    """The order in which to count families with sort keys ``key`` (:func:`_prefix_key`):
    lexicographic, or as listed when the keys would overflow int64."""
    if (n + 1.0) ** L < 2.0 ** 62:
        return np.argsort(key)
    return np.arange(key.shape[0])


@njit(cache=True)
def _count_after(data_t: np.ndarray, weights: np.ndarray, arities: np.ndarray,
                 x_v: np.ndarray, r: int, pa: np.ndarray, npa: int, depth: int, cur: np.ndarray,
                 stride: np.ndarray, cfg: np.ndarray, buf: np.ndarray) -> int:
    """Count child ``x_v`` (``r`` states) given parents ``pa[:npa]`` (ascending) into
    ``buf[: q r]`` (index j r + x, first parent fastest; q = ``stride[npa]``, the caller zeroes
    the cells after use), extending the parent configurations ``cfg`` of the previous family
    (parents ``cur[:depth]``; ``cfg[0]`` = 0 where the child is observed, else -1) from the
    longest prefix the two share (:func:`_extend_rows`, :func:`_count_child`): families
    counted in lexicographic order of their parent lists (:func:`_prefix_order`) mostly add
    one parent. Returns the new depth (``npa``). The counts of :func:`family_cpt`."""
    d = 0
    while d < depth and d < npa and cur[d] == pa[d]:
        d += 1
    for dd in range(d, npa):
        u = pa[dd]
        cur[dd] = u
        stride[dd + 1] = stride[dd] * arities[u]
        _extend_rows(data_t[u], cfg[dd], cfg[dd + 1], stride[dd])
    _count_child(cfg[npa], x_v, weights, r, buf)
    return npa


COUNT_MEMO_CELLS = 8_000_000
"""Most count cells (float64) a family-count memo (:func:`new_count_memo`) keeps: 64 MB."""


def new_count_memo():
    """An empty memo of family counts over one set of rows, shared by the kernels that count
    families on those rows (:func:`memo_counts`): a numba typed dict from a family key to its
    flat (q r) counts, and the cells it may still take (``COUNT_MEMO_CELLS``)."""
    from numba import types
    from numba.typed import Dict

    return (Dict.empty(key_type=types.int64, value_type=types.float64[::1]),
            np.array([COUNT_MEMO_CELLS], dtype=np.int64))


@njit(cache=True)
def memo_counts(memo, v: int, pa: np.ndarray, n: int) -> tuple[int, np.ndarray]:
    """(key, counts) of child v given the ascending parents ``pa`` among ``n`` variables in
    ``memo`` (:func:`new_count_memo`): counts flat, index j r + k with the first parent
    fastest, the layout of :func:`family_cpt`'s counts; empty when not kept. The key is -1
    (never kept) when it would not fit an int64."""
    key = v + 1  # digits v + 1, pa + 1 in base n + 1: one key per family
    for kk in range(pa.shape[0]):
        if key > (2 ** 62) // (n + 1):
            return -1, np.empty(0)
        key = key * (n + 1) + pa[kk] + 1
    if key in memo:
        return key, memo[key]
    return key, np.empty(0)


@njit(cache=True)
def memo_store(memo, key: int, counts: np.ndarray, budget: np.ndarray) -> None:
    """Keep a copy of a family's ``counts`` under ``key`` (:func:`memo_counts`) while the
    memo's ``budget`` of cells lasts."""
    if key >= 0 and budget[0] >= counts.shape[0]:
        memo[key] = counts.copy()
        budget[0] -= counts.shape[0]


@njit(cache=True, inline="always")
def _count_or_read(memo, budget: np.ndarray, v: int, n: int, data_t: np.ndarray,
                   weights: np.ndarray, arities: np.ndarray, x_v: np.ndarray, r: int,
                   pa: np.ndarray, npa: int, depth: int, cur: np.ndarray, stride: np.ndarray,
                   cfg: np.ndarray, buf: np.ndarray) -> tuple[int, int]:
    """:func:`_count_after` of child v given ``pa[:npa]`` into ``buf``, or its counts read
    from ``memo`` when an earlier kernel counted them on the same rows (the prefix state then
    stays that of the last family counted); a family counted is left in the memo. Returns
    (q, the new depth)."""
    fkey, got = memo_counts(memo, v, pa[:npa], n)
    if got.shape[0] > 0:
        q = got.shape[0] // r
        buf[: q * r] = got
        return q, depth
    depth = _count_after(data_t, weights, arities, x_v, r, pa, npa, depth, cur, stride, cfg,
                         buf)
    q = stride[npa]
    memo_store(memo, fkey, buf[: q * r], budget)
    return q, depth


@njit(cache=True)
def window_rescore(tab: TableArrays, orders: np.ndarray, data: np.ndarray, weights: np.ndarray,
                   arities: np.ndarray, log_prior: np.ndarray, score_kind: int, ess: float,
                   log_eps_rel: float, memo, budget: np.ndarray
                   ) -> tuple[np.ndarray, np.ndarray]:
    """The parent sets any of ``orders`` sums over (each node's pruning window as
    :func:`orders_log_joint` reads it, with ``log_eps_rel`` for the table's), scored again on
    other data: (masks, scores), (n, m')
    with m' the most sets of a node, unsorted; a node with fewer is padded with the mask of
    all bits (never compatible: it holds the node itself) scored below its others. ``data``
    (U, n) distinct rows with float64 multiplicities ``weights``; scores are
    ``log_prior[|Z|]`` + :func:`family_local_ml` (the table's node-average log marginal
    likelihood, so the same data give the table's scores): the leave-fold-out
    predictive of fixed orders. A family another call counted on the same rows is read from
    ``memo`` (:func:`new_count_memo`; ``budget`` its cells still free), the others are
    counted and left there."""
    T, n = orders.shape
    m = tab.masks.shape[1]
    pos = np.empty((T, n), dtype=np.int64)
    for t in range(T):
        for p in range(n):
            pos[t, orders[t, p]] = p
    used = np.zeros((n, m), dtype=np.bool_)
    idx = np.empty(m, dtype=np.int64)
    wv = np.empty(m)
    width = 1
    for v in range(n):
        cnt_v = 0
        for t in range(T):
            pred = _node_pred(tab, orders[t], pos[t], v)
            c = _window(tab.masks[v], tab.scores[v], tab.limits[v], pred, log_eps_rel, idx,
                        wv)
            for e in range(c):
                if not used[v, idx[e]]:
                    used[v, idx[e]] = True
                    cnt_v += 1
        width = max(width, cnt_v)
    masks = np.full((n, width), ~np.uint64(0), dtype=np.uint64)
    scores = np.empty((n, width))
    pa = np.empty(max(n, 1), dtype=np.int64)
    st = np.empty(max(n, 1), dtype=np.int64)
    rc = rising_cache(RISING_SLOTS)
    # each node's sets are counted in lexicographic order of their parent lists, each family's
    # configurations extended from the longest prefix it shares with the previous one
    L = log_prior.shape[0]
    data_t = np.ascontiguousarray(data.T)
    u_rows = data.shape[0]
    n_rows = weights.sum()
    top = np.sort(arities)[::-1]
    max_cells = 1
    for t in range(min(L, n)):
        max_cells *= top[t]
    buf = np.zeros(max_cells)
    cfg = np.empty((L, u_rows), dtype=np.int64)
    stride = np.ones(L, dtype=np.int64)
    cur = np.empty(L, dtype=np.int64)
    plist = np.empty((width, L), dtype=np.int64)
    nlist = np.empty(width, dtype=np.int64)
    key = np.empty(width, dtype=np.int64)
    for v in range(n):
        c = 0
        for k in range(m):
            if used[v, k]:
                g = tab.masks[v, k]
                npa, _q, _h = _mask_parents(tab, v, g, arities, -1, pa, st)
                masks[v, c] = g
                nlist[c] = npa
                key[c] = _prefix_key(pa, npa, n, L)
                for d in range(L):
                    plist[c, d] = pa[d] if d < npa else -1
                c += 1
        order = _prefix_order(key[:c], n, L)
        r = arities[v]
        x_v = data_t[v]
        for row in range(u_rows):
            cfg[0, row] = 0 if x_v[row] >= 0 else -1
        depth = 0
        low = np.inf
        for e in order:
            npa = nlist[e]
            q, depth = _count_or_read(memo, budget, v, n, data_t, weights, arities, x_v, r,
                                      plist[e], npa, depth, cur, stride, cfg, buf)
            counts = buf[: q * r].reshape((q, r))
            sc = log_prior[npa] + counts_local_ml(counts, n_rows, score_kind, ess, rc)
            buf[: q * r] = 0.0
            scores[v, e] = sc
            low = min(low, sc)
        for k in range(c, width):
            scores[v, k] = low - 1.0
    return masks, scores


@njit(cache=True)
def family_cpt(train_t: np.ndarray, weights: np.ndarray, v: int, pa: np.ndarray,
               st: np.ndarray, q: int, r: int, a: float) -> np.ndarray:
    """Posterior-predictive CPT theta_jk = (a + N_jk) / (a r + N_j) of child v given parents
    ``pa`` (strides ``st``), flat with index j * r + k; training row r counts ``weights[r]``
    times (multiplicities of distinct rows); rows missing the child or a parent are skipped
    (Hwang & Zhang eq. 9). An inlined copy of
    :func:`bnma_core.scores.posterior_cpt` (with :func:`bnma_core.scores.family_counts`), which
    are Python functions and cannot be called from this kernel;
    ``tests/classifiers/test_order_bma.py`` asserts they are equal to 1e-12."""
    cpt = np.zeros(q * r)
    npa = pa.shape[0]
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
            cpt[j * r + x] += weights[row]
    _counts_to_cpt(cpt, 0, q, r, a)
    return cpt


@njit(cache=True)
def _counts_to_cpt(cpt: np.ndarray, base: int, q: int, r: int, a: float) -> None:
    """The counts N_jk in ``cpt[base + j r + k]`` turned in place into theta_jk =
    (a + N_jk) / (a r + N_j) (:func:`family_cpt`)."""
    for j in range(q):
        b = base + j * r
        nj = 0.0
        for kk in range(r):
            nj += cpt[b + kk]
        f = 1.0 / (a * r + nj)
        for kk in range(r):
            cpt[b + kk] = (a + cpt[b + kk]) * f


@njit(cache=True)
def cached_family_cpt(cache: CptCache, train_t: np.ndarray, weights: np.ndarray, v: int,
                      k: int, pa: np.ndarray, st: np.ndarray, q: int, r: int, a: float
                      ) -> tuple[np.ndarray, int]:
    """Node v's k-th parent set's CPT as (array, offset of its first cell): read from
    ``cache`` when it holds it (no copy), else counted by :func:`family_cpt` from ``train_t``
    (offset 0). Same numbers either way: the cache was counted by :func:`family_cpt` from the
    same rows under the same prior (:func:`extend_cpt_cache`)."""
    if cache.off.shape[0] > 0:
        o = cache.off[v, k]
        if o >= 0:
            return cache.flat, o
    return family_cpt(train_t, weights, v, pa, st, q, r, a), 0


@njit(cache=True, nogil=True)
def extend_cpt_cache(tab: TableArrays, orders: np.ndarray, train_t: np.ndarray,
                     weights: np.ndarray, arities: np.ndarray, score_kind: int, ess: float,
                     cache: CptCache, max_cells: int, memo, budget: np.ndarray
                     ) -> tuple[CptCache, int]:
    """``cache`` extended with the CPT of every parent set some order of ``orders`` (T, n)
    reads (each node's window, :func:`_node_windows`, as :func:`orders_log_joint` reads it)
    and ``cache`` lacks, from ``train_t`` / ``weights`` with a = 1 (K2, ``score_kind`` 0) or
    ess / (r q) (BDeu), while the cache stays within ``max_cells`` cells (the sets beyond stay
    uncached: the kernels count them when needed). ``cache`` may be :func:`no_cpt_cache`.
    Returns (the new cache, the sets added); the former cache's cells are copied, not changed.

    The CPTs are :func:`family_cpt`'s to the bit: the same integer-valued counts (sums of
    integer weights, exact in float64 in any order) turned into theta by the same
    :func:`_counts_to_cpt`; a node's families are counted in lexicographic order of their
    parent lists, each extending the previous one's configurations (:func:`_count_after`, as
    :func:`window_rescore` counts), ~2x fewer row passes than counting each family apart; a
    family in ``memo`` (:func:`new_count_memo`, counted on the same rows by an earlier kernel:
    a refit's rescoring) is read from it, the others are counted and left there."""
    T, n = orders.shape
    m = tab.masks.shape[1]
    U = train_t.shape[1]
    pos, W, used, sum_w, dep, idx, wv, pa, st = window_buffers(orders, m)
    off = np.full((n, m), -1, dtype=np.int64)
    if cache.off.shape[0] > 0:
        off[:, :] = cache.off
    size = cache.flat.shape[0]
    new_v = np.empty(n * m, dtype=np.int64)
    new_k = np.empty(n * m, dtype=np.int64)
    first = np.zeros(n + 1, dtype=np.int64)  # node v's new sets: first[v] .. first[v + 1] - 1
    n_new = 0
    L = 1
    most = 1
    for v in range(n):
        first[v] = n_new
        _node_windows(tab, orders, pos, v, 0, W, used, sum_w, dep, idx, wv)
        r = arities[v]
        for k in range(m):
            if not used[k] or off[v, k] >= 0:
                continue
            npa, q, _ = _mask_parents(tab, v, tab.masks[v, k], arities, -1, pa, st)
            if size + q * r > max_cells:
                continue
            off[v, k] = size
            size += q * r
            new_v[n_new] = v
            new_k[n_new] = k
            n_new += 1
            L = max(L, npa)
            most = max(most, q * r)
    first[n] = n_new
    if n_new == 0:
        return cache, 0
    flat = np.empty(size)
    flat[:cache.flat.shape[0]] = cache.flat
    buf = np.zeros(most)
    cfg = np.empty((L + 1, U), dtype=np.int64)
    stride = np.ones(L + 1, dtype=np.int64)
    cur = np.empty(L, dtype=np.int64)
    plist = np.empty((n_new, L), dtype=np.int64)
    nlist = np.empty(n_new, dtype=np.int64)
    key = np.empty(n_new, dtype=np.int64)
    for v in range(n):
        lo, hi = first[v], first[v + 1]
        if lo == hi:
            continue
        for e in range(lo, hi):
            npa, _, _ = _mask_parents(tab, v, tab.masks[v, new_k[e]], arities, -1, pa, st)
            nlist[e] = npa
            key[e] = _prefix_key(pa, npa, n, L)
            for d in range(L):
                plist[e, d] = pa[d] if d < npa else -1
        r = arities[v]
        x_v = train_t[v]
        for row in range(U):
            cfg[0, row] = 0 if x_v[row] >= 0 else -1
        depth = 0
        for e0 in _prefix_order(key[lo:hi], n, L):
            e = lo + e0
            npa = nlist[e]
            q, depth = _count_or_read(memo, budget, v, n, train_t, weights, arities, x_v, r,
                                      plist[e], npa, depth, cur, stride, cfg, buf)
            o = off[v, new_k[e]]
            flat[o:o + q * r] = buf[:q * r]
            buf[:q * r] = 0.0
            a = 1.0 if score_kind == 0 else ess / (r * q)
            _counts_to_cpt(flat, o, q, r, a)
    return CptCache(off, flat), n_new


@njit(cache=True)
def _cpt_at_tests(cpt: np.ndarray, base: int, test_t: np.ndarray, v: int, pa: np.ndarray,
                  st: np.ndarray, has_c: int, r: int, class_index: int, n_classes: int,
                  jrow: np.ndarray, th: np.ndarray) -> bool:
    """theta(x_v | parents) of every test row into ``th``, the CPT's cells starting at
    ``cpt[base]`` (:func:`cached_family_cpt`): per class (rows c of ``th``) when v is the class
    or has it as a parent (returns True), else once in row 0 (returns False)."""
    n_test = test_t.shape[1]
    xs = test_t[v]
    jrow[:] = base  # index into cpt: base + (configuration of the non-class parents) * r
    for kk in range(pa.shape[0]):
        if kk != has_c:
            col = test_t[pa[kk]]
            sk = st[kk] * r
            for r_ in range(n_test):
                jrow[r_] += col[r_] * sk
    if v == class_index:
        for c in range(n_classes):
            for r_ in range(n_test):
                th[c, r_] = cpt[jrow[r_] + c]
        return True
    if has_c >= 0:
        sc = st[has_c] * r
        for c in range(n_classes):
            off = c * sc
            for r_ in range(n_test):
                th[c, r_] = cpt[jrow[r_] + off + xs[r_]]
        return True
    for r_ in range(n_test):
        th[0, r_] = cpt[jrow[r_] + xs[r_]]
    return False


@njit(cache=True)
def _mix_in(W: np.ndarray, k: int, th: np.ndarray, per_class: bool, mix: np.ndarray,
            common: np.ndarray) -> None:
    """Add parent set k's theta, weighted by each order's window weight, to the mixtures."""
    n_classes, n_test = mix.shape[1], mix.shape[2]
    for t in range(W.shape[0]):
        we = W[t, k]
        if we == 0.0:
            continue
        if per_class:
            for c in range(n_classes):
                for r_ in range(n_test):
                    mix[t, c, r_] += we * th[c, r_]
        else:
            for r_ in range(n_test):
                common[t, r_] += we * th[0, r_]


@njit(cache=True)
def _add_node_log(out: np.ndarray, mix: np.ndarray, common: np.ndarray, sum_w: np.ndarray,
                  dep: np.ndarray) -> None:
    """out[t, row, c] += log of node v's mixture over its parent sets (eq. 9 numerator over
    denominator)."""
    T, n_test, n_classes = out.shape
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


@njit(cache=True, nogil=True)
def orders_log_joint(tab: TableArrays, orders: np.ndarray, train_t: np.ndarray,
                     weights: np.ndarray, cache: CptCache, arities: np.ndarray,
                     score_kind: int, ess: float, test_t: np.ndarray, class_index: int,
                     out: np.ndarray) -> None:
    """log P(c, x | D, ≺_t) for every order t, complete test row x (the class column of
    ``test_t`` is ignored) and class c, by Hwang & Zhang eq. 9:

        P(U | D, ≺) = prod_i [sum_Z exp S(X_i; Z) θ̂(x_i | z)] / prod_i [sum_Z exp S(X_i; Z)]

    with θ̂_ijk = (a_ijk + N_ijk) / (a_ij + N_ij) (:func:`family_cpt`). Node by node, every
    parent set used by any order is counted (or read from ``cache``, the CPTs of the table's
    own training rows, :class:`CptCache`; pass :func:`no_cpt_cache` with other training rows)
    and applied to all test rows once (DESIGN §4, §9), then added with each order's weight;
    sets without the class (and not of the class node) are applied once for all classes.
    ``orders`` (T, n); ``test_t`` (n_vars, n_test); ``out`` (T, n_test, n_classes) is
    overwritten.
    """
    T, n = orders.shape
    n_test = test_t.shape[1]
    n_classes = arities[class_index]
    m = tab.masks.shape[1]
    pos, W, used, sum_w, dep, idx, wv, pa, st = window_buffers(orders, m)
    jrow = np.empty(n_test, dtype=np.int64)
    th = np.empty((n_classes, n_test))
    mix = np.zeros((T, n_classes, n_test))
    common = np.zeros((T, n_test))
    out[:, :, :] = 0.0
    for v in range(n):
        r = arities[v]
        _node_windows(tab, orders, pos, v, class_index, W, used, sum_w, dep, idx, wv)
        mix[:, :, :] = 0.0
        common[:, :] = 0.0
        for k in range(m):
            if not used[k]:
                continue
            npa, q, has_c = _mask_parents(tab, v, tab.masks[v, k], arities, class_index, pa,
                                          st)
            a = 1.0 if score_kind == 0 else ess / (r * q)
            cpt, base = cached_family_cpt(cache, train_t, weights, v, k, pa[:npa], st[:npa], q,
                                          r, a)
            per_class = _cpt_at_tests(cpt, base, test_t, v, pa[:npa], st[:npa], has_c, r,
                                      class_index, n_classes, jrow, th)
            _mix_in(W, k, th, per_class, mix, common)
        _add_node_log(out, mix, common, sum_w, dep)


@njit(cache=True)
def _node_terms(tab: TableArrays, train_t: np.ndarray, weights: np.ndarray, cache: CptCache,
                arities: np.ndarray, score_kind: int, ess: float, v: int, class_index: int,
                W: np.ndarray, used: np.ndarray, sum_w: np.ndarray, dep: np.ndarray,
                rows_t: np.ndarray, pa: np.ndarray, st: np.ndarray) -> np.ndarray:
    """Node v's eq. 9 term log [sum_Z w_Z θ̂(x_v | z)] − log sum_Z w_Z for every order t,
    class c and row of ``rows_t`` (n, n_rows; codes >= 0): (T, n_classes, n_rows), from the
    windows of :func:`_node_windows` — the arithmetic of :func:`orders_log_joint`."""
    T, m = W.shape
    n_rows = rows_t.shape[1]
    n_classes = arities[class_index]
    r = arities[v]
    jrow = np.empty(n_rows, dtype=np.int64)
    th = np.empty((n_classes, n_rows))
    mix = np.zeros((T, n_classes, n_rows))
    common = np.zeros((T, n_rows))
    for k in range(m):
        if not used[k]:
            continue
        npa, q, has_c = _mask_parents(tab, v, tab.masks[v, k], arities, class_index, pa, st)
        a = 1.0 if score_kind == 0 else ess / (r * q)
        cpt, base = cached_family_cpt(cache, train_t, weights, v, k, pa[:npa], st[:npa], q, r,
                                      a)
        per_class = _cpt_at_tests(cpt, base, rows_t, v, pa[:npa], st[:npa], has_c, r,
                                  class_index, n_classes, jrow, th)
        _mix_in(W, k, th, per_class, mix, common)
    for t in range(T):
        lw = math.log(sum_w[t])
        for i in range(n_rows):
            if dep[t]:
                for c in range(n_classes):
                    mix[t, c, i] = math.log(mix[t, c, i] + common[t, i]) - lw
            else:
                val = math.log(common[t, i]) - lw
                for c in range(n_classes):
                    mix[t, c, i] = val
    return mix


@njit(cache=True, nogil=True)
def orders_log_joint_barren(tab: TableArrays, orders: np.ndarray, train_t: np.ndarray,
                            weights: np.ndarray, cache: CptCache, arities: np.ndarray,
                            score_kind: int, ess: float, test_t: np.ndarray, skip: np.ndarray,
                            class_index: int, out: np.ndarray) -> None:
    """:func:`orders_log_joint` leaving out node v's term in the rows where ``skip[v, row]``:
    a sum over some of eq. 9's node terms. With the terms of barren variables left out this is
    their exact sum over their values, when no node outside the barren set has one in a parent
    set of nonzero weight under any order in ``orders`` (Shachter 1986; Koller & Friedman 2009
    §9.3; the caller checks this, DESIGN §4); the caller may also split a row's terms between
    rows. A negative code in ``test_t`` reads as state 0 (a skipped variable: it only feeds
    skipped terms or terms of weight zero).

    Each node's term is computed only for the rows that need it; when the node and the union
    U of its used parent sets have fewer joint states than such rows, the term is tabulated
    once per state of (x_v, x_U) — the same arithmetic on enumerated rows, so the same values
    — and looked up per row."""
    T, n = orders.shape
    n_test = test_t.shape[1]
    n_classes = arities[class_index]
    m = tab.masks.shape[1]
    pos, W, used, sum_w, dep, idx, wv, pa, st = window_buffers(orders, m)
    upa = np.empty(max(n, 1), dtype=np.int64)
    ust = np.empty(max(n, 1), dtype=np.int64)
    act = np.empty(n_test, dtype=np.int64)
    out[:, :, :] = 0.0
    for v in range(n):
        n_act = 0
        for r_ in range(n_test):
            if not skip[v, r_]:
                act[n_act] = r_
                n_act += 1
        if n_act == 0:
            continue
        _node_windows(tab, orders, pos, v, class_index, W, used, sum_w, dep, idx, wv)
        g = np.uint64(0)
        for k in range(m):
            if used[k]:
                g |= tab.masks[v, k]
        # joint states of v and its possible parents, the class left out (per-class terms)
        nu, _, _ = _mask_parents(tab, v, g, arities, class_index, upa, ust)
        # stop counting once the states reach the rows: with many possible parents the
        # product overflows int64 (40 ternary features: a negative array size)
        n_states = 1 if v == class_index else arities[v]
        for kk in range(nu):
            if upa[kk] != class_index and n_states < n_act:
                n_states *= arities[upa[kk]]
        if n_states < n_act:
            syn = np.zeros((n, n_states), dtype=test_t.dtype)
            stride = 1
            if v != class_index:
                for i in range(n_states):
                    syn[v, i] = i % arities[v]
                stride = arities[v]
            for kk in range(nu):
                u = upa[kk]
                if u == class_index:
                    continue
                for i in range(n_states):
                    syn[u, i] = (i // stride) % arities[u]
                ust[kk] = stride
                stride *= arities[u]
            val = _node_terms(tab, train_t, weights, cache, arities, score_kind, ess, v,
                              class_index, W, used, sum_w, dep, syn, pa, st)
            for i in range(n_act):
                r_ = act[i]
                j = 0
                if v != class_index:
                    j = max(test_t[v, r_], 0)
                for kk in range(nu):
                    u = upa[kk]
                    if u != class_index:
                        j += max(test_t[u, r_], 0) * ust[kk]
                for t in range(T):
                    for c in range(n_classes):
                        out[t, r_, c] += val[t, c, j]
            continue
        sub = np.empty((n, n_act), dtype=test_t.dtype)
        for u in range(n):
            for i in range(n_act):
                x = test_t[u, act[i]]
                sub[u, i] = 0 if x < 0 else x
        val = _node_terms(tab, train_t, weights, cache, arities, score_kind, ess, v,
                          class_index, W, used, sum_w, dep, sub, pa, st)
        for i in range(n_act):
            r_ = act[i]
            for t in range(T):
                for c in range(n_classes):
                    out[t, r_, c] += val[t, c, i]


@njit(cache=True)
def order_edge_probabilities(tab: TableArrays, order: np.ndarray, class_index: int
                             ) -> tuple[np.ndarray, np.ndarray]:
    """Given an order: ``edge[y, x] = P(y -> x | D, ≺)`` = sum_{Z ∋ y} exp S(x; Z) / sum_Z
    exp S(x; Z) (DESIGN §4), and ``co[x, f] = P({C, f} ⊆ Pa(x) | D, ≺)`` for the class C
    (either regime, any number of variables in the candidate regime)."""
    n = order.shape[0]
    m = tab.masks.shape[1]
    idx = np.empty(m, dtype=np.int64)
    w = np.empty(m)
    edge = np.zeros((n, n))
    co = np.zeros((n, n))
    pa = np.empty(n, dtype=np.int64)
    st = np.empty(n, dtype=np.int64)
    ar = np.ones(n, dtype=np.int64)
    pos = order_positions(order)
    for p in range(n):
        v = order[p]
        pred = _node_pred(tab, order, pos, v)
        cnt = _window(tab.masks[v], tab.scores[v], tab.limits[v], pred, tab.log_eps_rel, idx, w)
        tot = 0.0
        for e in range(cnt):
            tot += w[e]
        for e in range(cnt):
            we = w[e] / tot
            npa, _, has_c = _mask_parents(tab, v, tab.masks[v, idx[e]], ar, class_index, pa,
                                          st)
            for kk in range(npa):
                b = pa[kk]
                edge[b, v] += we
                if has_c >= 0 and b != class_index:
                    co[v, b] += we
    return edge, co


@njit(cache=True)
def _entry_parents(tab: TableArrays) -> tuple[np.ndarray, np.ndarray]:
    """Variable indices of the parents of every scanned table entry: ``par[v, k, :npar[v, k]]``
    for k < ``limits[v]`` (global bits in the full regime, candidate-local bits mapped through
    ``cand`` in the candidate regime)."""
    n, m = tab.masks.shape
    nb = tab.cand.shape[1] if tab.regime == 1 else n
    npar = np.zeros((n, m), dtype=np.int64)
    most = 0
    for v in range(n):
        for k in range(tab.limits[v]):
            g = tab.masks[v, k]
            c = 0
            while g != np.uint64(0):
                g &= g - np.uint64(1)
                c += 1
            npar[v, k] = c
            most = max(most, c)
    par = np.zeros((n, m, max(most, 1)), dtype=np.int64)
    for v in range(n):
        for k in range(tab.limits[v]):
            g = tab.masks[v, k]
            c = 0
            for b in range(nb):
                if (g >> np.uint64(b)) & np.uint64(1):
                    par[v, k, c] = tab.cand[v, b] if tab.regime == 1 else b
                    c += 1
    return par, npar


@njit(cache=True, nogil=True)
def orders_edge_probabilities(tab: TableArrays, orders: np.ndarray) -> np.ndarray:
    """``out[t, y, x] = P(y -> x | D, ≺_t)`` for every order t of ``orders`` (T, n): the
    order-conditional edge posteriors of :func:`order_edge_probabilities` (the same window of
    parent sets and weights, :func:`_window`), for many orders at once — each entry's parents
    are listed once per call instead of decoded from its bitmask per order (the edge traces
    of :mod:`bnma_core.structure.diagnostics`; tested equal to the one-order function)."""
    T, n = orders.shape
    m = tab.masks.shape[1]
    par, npar = _entry_parents(tab)
    idx = np.empty(m, dtype=np.int64)
    w = np.empty(m)
    out = np.zeros((T, n, n))
    for t in range(T):
        order = orders[t]
        pos = order_positions(order)
        for v in range(n):
            pred = _node_pred(tab, order, pos, v)
            cnt = _window(tab.masks[v], tab.scores[v], tab.limits[v], pred, tab.log_eps_rel,
                          idx, w)
            tot = 0.0
            for e in range(cnt):
                tot += w[e]
            for e in range(cnt):
                k = idx[e]
                we = w[e] / tot
                for c in range(npar[v, k]):
                    out[t, par[v, k, c], v] += we
    return out


@njit(cache=True)
def order_best_parents(tab: TableArrays, order: np.ndarray) -> np.ndarray:
    """The best network consistent with an order: ``adj[y, x]`` is True when y is a parent of
    x in x's highest-scoring parent set among those of its predecessors (either regime). Each
    node's sets are sorted by decreasing score, so that set is the first compatible one; it
    always lies within the scan limit, since the empty set is compatible and scores above the
    limit (:func:`sort_table`). The DAG maximising P(G, D) given ≺, as the factorisation over
    nodes given the order is separable (Buntine 1991; Friedman & Koller 2003)."""
    n = order.shape[0]
    adj = np.zeros((n, n), dtype=np.bool_)
    pa = np.empty(n, dtype=np.int64)
    st = np.empty(n, dtype=np.int64)
    ar = np.ones(n, dtype=np.int64)
    pos = order_positions(order)
    for v in range(n):
        pred = _node_pred(tab, order, pos, v)
        limit = tab.limits[v]
        k = _first_compatible(tab.masks[v], limit, ~pred)
        if k == limit:
            continue
        npa, _, _ = _mask_parents(tab, v, tab.masks[v, k], ar, -1, pa, st)
        for kk in range(npa):
            adj[pa[kk], v] = True
    return adj
