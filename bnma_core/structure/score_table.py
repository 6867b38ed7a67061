"""Score tables for node-order methods (Hwang & Zhang 2005; DESIGN §3-4, §9).

Two regimes:

* **paper-faithful** (``candidates=None``): every parent set of at most ``max_parents`` variables
  drawn from all the other variables (ALARM, l = 3: 7,807 sets per node), with its local score
  S(X_i; Z) = log rho(X_i | Z) + log ML(X_i, Z). An order's node term sums the sets that fit in
  the node's predecessors.
* **candidate-restricted** (``candidates=K`` or an explicit (n, K) array, K <= 16; the approach
  of BiDAG and sumu): each node keeps K candidate parents — by default the K variables with the
  largest single-parent score gain S(X_i; {X_j}) - S(X_i; ∅) — and all their subsets of at most
  ``max_parents``; a per-node table over candidate bitmasks U holds
  log sum_{S ⊆ U} exp S(X_i; S), built once by a zeta (subset-sum) transform, so an order's node
  term is one lookup. Parent sets outside the candidates get probability zero. Parent sets are
  indexed *within* the candidate set (bit b = the node's b-th candidate) and the chains keep
  positions instead of predecessor bitmasks, so this regime has no limit on the number of
  variables (HEPAR II 70, WIN95PTS 76, ANDES 223; the paper-faithful regime keeps uint64 masks
  over all variables and at most 64 of them). ``candidates="auto"`` picks the paper-faithful
  regime up to 64 variables when its table fits ``max_bytes``, else K = 16. Candidate sets can
  be expanded where sampled orders press on their boundary
  (:mod:`bnma_core.structure.candidates`).

Counting: the data are reduced to their distinct rows with multiplicities
(:func:`compress_rows`) and every count is a weighted count over them, so the cost grows with
the number of distinct rows rather than with N (identical counts, tested). In the
paper-faithful regime each variable set's joint table is counted over *suffix groups*
(:mod:`bnma_core.kernels.grouped_counts`): the distinct rows are relabelled by decreasing
entropy and sorted from the last column (:func:`suffix_sort`), and a set carries its rows
merged on (values of the later columns, joint cell), so adding a later variable reads far
fewer entries than rows (ALARM, N = 1,000,000: 11 % of the one-pass work; table 26.8 -> 8.5
CPU s). The counts equal one pass over all rows (tested against
:func:`bnma_core.kernels.orders.build_full_table`).

Pruning: each node's sets are sorted by decreasing score; for an order the scan starts at the
best *compatible* set (score M) and stops below M + log(eps / m) (m = sets per node), so the mass
it drops is below ``eps`` times the kept mass and every node term is low by at most
log(1 + eps) <= eps (``prune_eps=0`` keeps everything). Because the empty set is always
compatible, sets below S(∅) + log(eps / m) are never scanned (``limits``).

Missing values (-1): each family is counted on the n rows complete on it (available-case
counts), and each of the N - n rows it lacks is credited with the average fitted log predictive
probability of the rows it has: S = log ML_n + (N - n) / n * sum_jk N_jk log theta_jk (the
node-average marginal likelihood, after the node-average likelihood of Balov 2013 and Bodewes &
Scutari 2021; :func:`bnma_core.kernels.orders.node_average_log_ml`). Scored raw, the families
would be marginal likelihoods of different numbers of rows, which are not comparable, and
parent sets containing an incomplete variable would be favoured for that alone. Completed this
way every node term speaks for all N rows, so the two orientations of an arc keep the balance
they have on complete data, while the complexity cost stays that of the observed rows; the
score is unchanged on complete data and keeps the per-node additive form the order sums need.
The example that showed the problem and the alternatives not kept: docs/decisions.md §1. See
:func:`node_average_log_ml`.
"""

from __future__ import annotations

import contextlib
import contextvars
import math
import threading
from dataclasses import dataclass, field, replace

import numpy as np

from ..data import CODE_DTYPE, DataError
from ..kernels.grouped_counts import build_full_tables_grouped
from ..kernels.orders import (
    CptCache,
    TableArrays,
    build_candidate_tables,
    candidate_bits,
    extend_cpt_cache,
    joint_family_fit,
    new_count_memo,
    no_cpt_cache,
    node_log_sum,
    order_edge_probabilities,
    order_terms,
    orders_edge_probabilities,
    orders_log_joint,
    orders_log_joint_barren,
    single_parent_scores,
    sort_table,
    window_rescore,
    zeta_log_rows,
)
from ..kernels.orders import (
    node_average_log_ml as _node_average,
)
from ..scores import _check_prior, family_counts, log_ml_counts, log_structure_prior

SCORE_KINDS = {"k2": 0, "bdeu": 1}
DEFAULT_MAX_BYTES = 2_000_000_000
MAX_CANDIDATES = 16
DEFAULT_CANDIDATES = 16  # K of candidates="auto" beyond 64 variables
MAX_FULL_VARS = 64  # the full regime's parent sets are uint64 bitmasks over all variables
CPT_CACHE_MAX_CELLS = 2 ** 22
"""Cells (float64) a table's CPT cache may hold: 32 MB (:meth:`ScoreTable.cpt_cache`); the
parent sets beyond are counted by the kernels at every call, as without a cache."""


class _CptState:
    """A table's CPT cache (:meth:`ScoreTable.cpt_cache`): the cache, the orders whose windows
    it covers (as bytes) and the lock its extensions take."""

    __slots__ = ("cache", "orders", "lock")

    def __init__(self) -> None:
        self.cache: CptCache = no_cpt_cache()
        self.orders: set[bytes] = set()
        self.lock = threading.Lock()


_CPT_STATE_LOCK = threading.Lock()  # creates a table's _CptState once


@dataclass
class ScoreTable:
    """Per-node parent sets and local scores, sorted by decreasing score (numba-friendly arrays).

    Attributes
    ----------
    masks : (n, m) uint64
        Parent-set bitmasks: bit v = variable v is a parent (full regime), bit b = candidate
        ``cand[i, b]`` is a parent (candidate regime: local to the node's candidates, so the
        number of variables is not limited).
    scores : (n, m) float64
        Local scores S(X_i; Z), natural log.
    limits : (n,) int64
        Entries worth scanning per node (see module docstring).
    arities : (n,) int64
    max_parents, score, prior, ess, prune_eps
        Settings the table was built with.
    log_eps_rel : float
        log(prune_eps / m), the pruning window (``-inf`` = exact).
    regime : {"full", "candidates"}
    cand : (n, K) int64
        Candidate parents per node, ascending (empty (n, 0) in the full regime).
    logsum : (n, 2^K) float64
        Zeta-transformed node terms over candidate bitmasks (empty in the full regime).
    logsum_pending : bool
        ``logsum`` still holds each set's score at its local mask, to be subset-summed when
        an order is first scored (:meth:`arrays`; :func:`shared_counting`'s other priors).
    data_t : (n, U) int32, weights : (U,) int64
        The training data the table was counted from as its U distinct rows (transposed) and
        their multiplicities (:func:`compress_rows`); the CPTs of the order classifiers are
        counted from them too, once per parent set (:meth:`cpt_cache`).
    """

    masks: np.ndarray
    scores: np.ndarray
    limits: np.ndarray
    arities: np.ndarray
    max_parents: int
    score: str
    prior: str
    ess: float
    prune_eps: float
    log_eps_rel: float
    regime: str = "full"
    cand: np.ndarray = field(default_factory=lambda: np.zeros((0, 0), dtype=np.int64))
    logsum: np.ndarray = field(default_factory=lambda: np.zeros((0, 0)))
    exps: np.ndarray = field(default_factory=lambda: np.zeros((0, 0)))
    bid: np.ndarray = field(default_factory=lambda: np.zeros((0, 0), dtype=np.int64))
    band_first: np.ndarray = field(default_factory=lambda: np.zeros((0, 0), dtype=np.int64))
    band_anchor: np.ndarray = field(default_factory=lambda: np.zeros((0, 0)))
    cbit: np.ndarray = field(default_factory=lambda: np.zeros((0, 0), dtype=np.int32))
    data_t: np.ndarray = field(default_factory=lambda: np.zeros((0, 0), dtype=CODE_DTYPE))
    weights: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    logsum_pending: bool = False

    _arrays: TableArrays | None = field(default=None, init=False, repr=False, compare=False)
    _window: TableArrays | None = field(default=None, init=False, repr=False, compare=False)
    _cpt: _CptState | None = field(default=None, init=False, repr=False, compare=False)

    def __getstate__(self) -> dict:
        """Pickled without the CPT cache (:meth:`cpt_cache`, rebuilt on use)."""
        return {**self.__dict__, "_cpt": None}

    def arrays(self) -> TableArrays:
        """The table as the order kernels take it: one typed namedtuple (built once), its
        ``logsum`` subset-summed (done here the first time when ``logsum_pending``)."""
        if self.logsum_pending:
            logsum = np.array(self.logsum)  # a copy: tables made by replace() share it
            zeta_log_rows(logsum, int(self.cand.shape[1]))
            self.logsum, self.logsum_pending, self._arrays = logsum, False, None
        if self._arrays is None:
            self._arrays = self._pack()
        return self._arrays

    def window_arrays(self) -> TableArrays:
        """:meth:`arrays` for the kernels that read an order's pruning windows and never the
        candidate regime's ``logsum`` (prediction, leave-one-out, windows rescored, edge
        probabilities): without subset-summing a pending ``logsum`` first."""
        if not self.logsum_pending:
            return self.arrays()
        if self._window is None:
            self._window = self._pack()
        return self._window

    def _pack(self) -> TableArrays:
        """The table's arrays as one typed namedtuple, ``logsum`` as it stands."""
        return TableArrays(self.masks, self.scores, self.exps, self.bid, self.band_first,
                           self.band_anchor, self.limits, float(self.log_eps_rel),
                           self.regime_code, self.logsum, self.cand, self.cbit)

    def kernel_args(self) -> TableArrays:
        """Alias of :meth:`arrays` (kept for callers of the former 11-tuple)."""
        return self.arrays()

    @property
    def n_vars(self) -> int:
        return self.masks.shape[0]

    @property
    def n_sets(self) -> int:
        return self.masks.shape[1]

    @property
    def score_kind(self) -> int:
        return SCORE_KINDS[self.score]

    @property
    def regime_code(self) -> int:
        return 0 if self.regime == "full" else 1

    @property
    def nbytes(self) -> int:
        return int(self.masks.nbytes + self.scores.nbytes + self.exps.nbytes
                   + self.bid.nbytes + self.logsum.nbytes + self.cbit.nbytes)

    def parents(self, node: int, k: int) -> list[int]:
        """Variable indices (ascending) of node ``node``'s k-th parent set, in either regime."""
        g = int(self.masks[node, k])
        if self.regime == "candidates":
            return [int(self.cand[node, b]) for b in range(self.cand.shape[1]) if g >> b & 1]
        return [b for b in range(self.n_vars) if g >> b & 1]

    def node_log_sum(self, node: int, predecessors: int, exact: bool = False) -> float:
        """log sum_{Z ⊆ predecessors, |Z| <= l} exp S(X_node; Z) (``predecessors`` a bitmask
        over all variables, a Python int of any width; the candidate regime is exact)."""
        i = node
        if self.regime == "candidates":
            pred = int(predecessors)
            local = sum(1 << b for b, u in enumerate(self.cand[i]) if (pred >> int(u)) & 1)
            return float(self.arrays().logsum[i, local])
        lim = self.n_sets if exact else int(self.limits[i])
        return float(node_log_sum(self.masks[i], self.scores[i], self.exps[i], self.bid[i],
                                  self.band_first[i], self.band_anchor[i], lim,
                                  np.uint64(predecessors),
                                  -np.inf if exact else self.log_eps_rel))

    def order_terms(self, order: np.ndarray) -> np.ndarray:
        """Node terms of ``order`` (per position), natural log."""
        return self.order_state(order)[1]

    def order_state(self, order: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Per position of ``order``: predecessor bitmasks (uint64, full regime; zeros in the
        candidate regime), node terms, candidate-local masks (candidate regime; zeros in the
        full regime)."""
        return order_terms(np.ascontiguousarray(order, dtype=np.int64), self.arrays())

    def order_log_joints(self, orders: np.ndarray, train_t: np.ndarray | None,
                         test_t: np.ndarray, class_index: int, out: np.ndarray | None = None,
                         weights: np.ndarray | None = None, skip: np.ndarray | None = None
                         ) -> np.ndarray:
        """log P(c, x | D, ≺_t) by Hwang & Zhang eq. 9 for every order t (rows of ``orders``),
        complete test row x and class c.

        With ``skip`` ((n, n_test) bool), variable v's term is left out of row r where
        ``skip[v, r]`` (a -1 code there reads as state 0). Leaving out barren variables sums
        them out exactly provided no variable outside the row's barren set may have one as a
        parent under any of ``orders`` (:meth:`possible_parents`; DESIGN §4).

        Parameters
        ----------
        orders : (T, n) int array
        train_t : (n, n_train) int32 or None
            The training codes this table was built from, transposed (-1 = missing); None =
            the table's own distinct rows and multiplicities (``data_t``, ``weights``), whose
            CPTs are counted once and kept (:meth:`cpt_cache`); explicit rows are counted at
            every call.
        test_t : (n, n_test) int32
            Complete test rows, transposed; the class row is ignored.
        class_index : int
        out : (T, n_test, n_classes) float array, optional
        weights : (n_train,) int64, optional
            Multiplicity of each training row (default 1).

        Returns
        -------
        (T, n_test, n_classes) float array
        """
        orders = np.ascontiguousarray(orders, dtype=np.int64)
        k = int(self.arities[class_index])
        if out is None:
            out = np.empty((orders.shape[0], test_t.shape[1], k))
        if train_t is None:
            train_t, weights, cache = self.data_t, self.weights, self.cpt_cache(orders)
        else:
            cache = no_cpt_cache()  # the cache holds the table's own rows' CPTs only
            if weights is None:
                weights = np.ones(train_t.shape[1], dtype=np.int64)
        args = (self.window_arrays(), orders, train_t, np.asarray(weights, dtype=np.int64), cache,
                self.arities, self.score_kind, float(self.ess), test_t)
        if skip is None:
            orders_log_joint(*args, int(class_index), out)
        else:
            orders_log_joint_barren(*args, np.ascontiguousarray(skip, dtype=bool),
                                    int(class_index), out)
        return out

    def cpt_cache(self, orders: np.ndarray) -> CptCache:
        """The posterior-predictive CPTs θ̂_ijk = (a_ijk + N_ijk) / (a_ij + N_ij) (eq. 9) of
        the parent sets the eq. 9 sums of ``orders`` (T, n) read, counted once from this
        table's own training rows (``data_t``, ``weights``) under its prior (``score``,
        ``ess``) and kept for every later prediction from this table, under any orders
        (DESIGN §4, "CPTs counted once per table").

        A CPT depends on its family, the training rows and the prior only, not on the order,
        the window or the test rows, yet each kernel call counted every CPT it read from the
        training rows; predicting rows with missing values calls the kernels many times (one
        call per order and group of completions). The first call with an order counts the
        sets of its windows that the cache lacks (:func:`~bnma_core.kernels.orders.
        extend_cpt_cache`, the same :func:`~bnma_core.kernels.orders.family_cpt` arithmetic
        the kernels used, so the predictions are unchanged to the bit); an order seen before
        costs a set lookup. The cache holds at most :data:`CPT_CACHE_MAX_CELLS` = 2^22 cells
        (32 MB); the sets beyond are counted by the kernels at each call (``off`` = -1).
        Thread-safe (a lock per table: concurrent callers wait for one extension instead of
        counting the same sets twice). Not pickled nor saved in model files. A table made by
        :func:`rescored_for_orders` (``refit_fixed_orders``) has its own rows and so its own
        cache.

        Parameters
        ----------
        orders : (T, n) int array

        Returns
        -------
        CptCache
            For the kernels' ``cache`` argument with ``train_t = data_t`` and ``weights =
            weights`` only.
        """
        orders = np.ascontiguousarray(np.atleast_2d(orders), dtype=np.int64)
        if self._cpt is None:
            with _CPT_STATE_LOCK:
                if self._cpt is None:
                    self._cpt = _CptState()
        state = self._cpt
        with state.lock:
            new = [t for t in range(orders.shape[0]) if orders[t].tobytes() not in state.orders]
            if new:
                fresh = np.ascontiguousarray(orders[new])
                state.cache, _ = extend_cpt_cache(
                    self.window_arrays(), fresh, self.data_t,
                    np.asarray(self.weights, dtype=np.int64), self.arities, self.score_kind,
                    float(self.ess), state.cache, CPT_CACHE_MAX_CELLS,
                    *count_memo(np.ascontiguousarray(self.data_t.T), self.weights))
                state.orders.update(o.tobytes() for o in fresh)
            return state.cache

    def possible_parents(self, orders: np.ndarray) -> np.ndarray:
        """``out[t, y, x]``: y is in some parent set of x with nonzero weight in x's sum of
        eq. 9 under order t (the window of :meth:`edge_probabilities`), (T, n, n) bool."""
        orders = np.ascontiguousarray(np.atleast_2d(orders), dtype=np.int64)
        return orders_edge_probabilities(self.window_arrays(), orders) > 0.0

    def edge_probabilities(self, order: np.ndarray, class_index: int
                           ) -> tuple[np.ndarray, np.ndarray]:
        """Given an order: ``edge[y, x] = P(y -> x | D, ≺)`` and ``co[x, f] = P({C, f} ⊆ Pa(x)
        | D, ≺)`` for the class C (DESIGN §4), both (n, n)."""
        return order_edge_probabilities(self.window_arrays(),
                                        np.ascontiguousarray(order, dtype=np.int64),
                                        int(class_index))

    def order_log_score(self, order: np.ndarray) -> float:
        """log P(≺, D) up to a constant = sum_i log sum_{Z ⊆ pred(i)} exp S(X_i; Z), natural log
        (uniform prior over orders; DESIGN §4)."""
        return float(self.order_terms(order).sum())


def rescored_for_orders(table: ScoreTable, orders: np.ndarray, codes: np.ndarray,
                        prune_eps: float | None = None) -> ScoreTable:
    """The table of the same settings on other data, restricted to what ``orders`` use: each
    node's parent sets in the pruning window of any of ``orders`` (the sets their eq. 9 sums
    read), scored again on ``codes`` (n_rows, n_vars; -1 = missing) — the rest of the table,
    below ``prune_eps`` relative mass under every one of these orders on the table's own data,
    is dropped — and ``codes`` as the data its CPTs are counted from. On the table's own data
    the orders' class posteriors are unchanged; on the training rows minus a fold they are the
    fold's leave-out predictive of the fixed orders (structure weights and CPTs without the
    fold; docs/accuracy.md §13). Not for order MCMC (node sums over other orders would miss sets).
    ``prune_eps`` (at least the table's; default the table's) sets the window: a larger one
    keeps fewer sets, every node term low by at most log(1 + prune_eps)."""
    orders = np.ascontiguousarray(np.atleast_2d(orders), dtype=np.int64)
    data_t, _ = _validate(codes, table.arities, table.max_parents, table.score, table.prior,
                          table.ess)
    uniq, weights = compress_rows(data_t.T)
    n = table.n_vars
    eps = table.prune_eps if prune_eps is None else max(float(prune_eps), table.prune_eps)
    log_eps_rel = math.log(eps / table.n_sets) if eps > 0 else -math.inf
    masks, scores = window_rescore(table.window_arrays(), orders, np.ascontiguousarray(uniq),
                                   weights.astype(np.float64), table.arities,
                                   _log_priors(n, table.max_parents, table.prior),
                                   SCORE_KINDS[table.score], float(table.ess), log_eps_rel,
                                   *count_memo(uniq, weights))
    masks, scores, limits, exps, bid, band_first, band_anchor = sort_table(
        masks, scores, log_eps_rel)
    return replace(table, masks=masks, scores=scores, limits=limits, exps=exps, bid=bid,
                   prune_eps=eps, log_eps_rel=log_eps_rel,
                   band_first=band_first, band_anchor=band_anchor,
                   data_t=np.ascontiguousarray(uniq.T), weights=weights)


def n_parent_sets(n_others: int, max_parents: int) -> int:
    """sum_{k <= l} C(n_others, k)."""
    return sum(math.comb(n_others, k) for k in range(min(max_parents, n_others) + 1))


def _validate(codes: np.ndarray, arities: np.ndarray, max_parents: int, score: str,
              prior: str, ess: float) -> tuple[np.ndarray, np.ndarray]:
    codes = np.asarray(codes)
    if codes.ndim != 2 or codes.shape[0] == 0:
        raise DataError("The data must be a non-empty table (rows x variables) of state codes.")
    arities = np.asarray(arities, dtype=np.int64)
    n = codes.shape[1]
    if arities.shape != (n,):
        raise ValueError("arities must give one number of states per column.")
    if (arities < 1).any():
        raise ValueError("Every variable needs at least one state.")
    if (codes >= arities[None, :]).any():
        raise DataError("A state code is larger than its variable's number of states.")
    if n < 2:
        raise DataError("Node-order methods need at least two variables.")
    if not isinstance(max_parents, (int, np.integer)) or max_parents < 0:
        raise ValueError("max_parents must be a non-negative integer.")
    if score not in SCORE_KINDS:
        raise ValueError(f"Unknown score {score!r} for score tables; choose 'k2' or 'bdeu'.")
    if not (ess > 0 and math.isfinite(ess)):
        raise ValueError(f"The equivalent sample size must be positive (got {ess}).")
    _check_prior(prior)
    return np.ascontiguousarray(codes.T, dtype=CODE_DTYPE), arities


def estimate_table_bytes(n_vars: int, n_rows: int, arities: np.ndarray, max_parents: int,
                         n_candidates: int | None = None) -> int:
    """Memory the build will need (tables + working buffers), computed before building: per
    node and parent set a mask, score, exponential and band index (plus the sort's copies);
    the row buffers of the counting; in the candidate regime the 2^K node-term table, the
    (n, n) candidate bit map and single-parent scores."""
    l_eff = min(max_parents, n_vars - 1)
    top = np.sort(np.asarray(arities, dtype=np.int64))[::-1][: l_eff + 1]
    max_cells = int(np.prod(top.astype(float)))
    if n_candidates is None:
        m = n_parent_sets(n_vars - 1, l_eff)
        return int(n_vars * m * 8 * 6 + (l_eff + 2) * n_rows * 8 + max_cells * 8)
    m = n_parent_sets(n_candidates, l_eff)
    return int(n_vars * m * 8 * 6 + n_vars * (2 ** n_candidates) * 8
               + n_vars * n_vars * (4 + 8) + n_rows * n_vars * 4 + max_cells * 8)


def node_average_log_ml(codes: np.ndarray, child: int, parents, arities: np.ndarray,
                        score: str = "k2", ess: float = 1.0) -> float:
    """Node-average log marginal likelihood of one family, as the score tables use it:
    log ML_n + (N - n) / n * sum_jk N_jk log theta_jk, with n the rows complete on the family,
    N all rows and theta_jk = (N_jk + a_ijk) / (N_ij + a_ij) (see the module docstring;
    Balov 2013, Bodewes & Scutari 2021 eq. 4, Heckerman et al. 1995 eq. 8). Equal to the log
    marginal likelihood on complete data. For users and tests; the tables compute it inside
    :mod:`bnma_core.kernels.orders` with the same functions.
    """
    codes = np.asarray(codes)
    counts = family_counts(codes, child, parents, arities)
    q, r = counts.shape
    if score not in SCORE_KINDS:
        raise ValueError(f"Unknown score {score!r} for score tables; choose 'k2' or 'bdeu'.")
    a = 1.0 if score == "k2" else ess / (q * r)
    ml = log_ml_counts(counts, score, ess)
    fit = joint_family_fit(np.ascontiguousarray(counts.ravel()), q * r, 1, r, a)
    return float(_node_average(ml, fit, codes.shape[0], int(counts.sum())))


def _log_priors(n: int, max_parents: int, prior: str) -> np.ndarray:
    return np.array([log_structure_prior(n, k, prior) for k in range(max_parents + 1)])


def compress_rows(codes: np.ndarray, return_inverse: bool = False):
    """The distinct rows of ``codes`` (U, n) and their multiplicities (U,) int64: every count
    of the order methods is a weighted count over them, so the counting cost grows with the
    number of distinct rows, not with N (ALARM samples: 67 % distinct at N = 5,000, 40 % at
    100,000, 24 % at 1,000,000). Rows are packed into a few 64-bit words (ceil(log2(r + 1))
    bits per column, missing = 0) and those are sorted, which is ~10x faster than
    ``np.unique(codes, axis=0)``. With ``return_inverse`` also the index of each input row
    among the distinct rows (``uniq[inverse] == codes``).

    Inside :func:`shared_counting` the result is kept for the block (read-only arrays): the
    candidates of ``stack`` compress the same training rows for each prior's table, leave-one-out
    pass and refit (mushroom: 9 calls of 1.3 ms per fit, 3 distinct)."""
    codes = np.ascontiguousarray(codes, dtype=CODE_DTYPE)
    shared = _SHARED_PRIORS.get()
    if shared is None:
        return _compress_rows(codes, return_inverse)
    key = (codes.shape, codes.tobytes())
    out = shared[2].get(key)
    if out is None:
        out = shared[2][key] = _compress_rows(codes, True)
        for a in out:
            a.setflags(write=False)
    return out if return_inverse else out[:2]


def count_memo(uniq: np.ndarray, weights: np.ndarray):
    """The memo of family counts over the distinct rows ``uniq`` with multiplicities
    ``weights`` (:func:`bnma_core.kernels.orders.new_count_memo`) that the leave-one-out
    passes (:func:`bnma_core.kernels.order_loo.orders_loo_log_joint`) and the refits at fixed
    orders (:func:`rescored_for_orders`) read and fill: inside :func:`shared_counting` one per
    set of rows for the block (``stack``'s three priors count a family of their windows
    once: mushroom's 397 families of the three leave-one-out passes are 242 distinct, vote's
    3,244 are 1,449), else a new empty one."""
    shared = _SHARED_PRIORS.get()
    if shared is None:
        return new_count_memo()
    key = (uniq.shape, uniq.tobytes(), np.asarray(weights, dtype=np.int64).tobytes())
    memo = shared[3].get(key)
    if memo is None:
        memo = shared[3][key] = new_count_memo()
    return memo


def _compress_rows(codes: np.ndarray, return_inverse: bool):
    """:func:`compress_rows` of contiguous ``codes``, computed."""
    n_rows, n = codes.shape
    if n_rows <= 1:
        ones = np.ones(n_rows, dtype=np.int64)
        return (codes, ones, np.zeros(n_rows, dtype=np.int64)) if return_inverse else (codes,
                                                                                         ones)
    width = np.maximum(1, np.ceil(np.log2(codes.max(axis=0).astype(float) + 2.0))).astype(int)
    words, used = [], 64
    for j in range(n):
        if used + width[j] > 64:
            words.append(np.zeros(n_rows, dtype=np.uint64))
            used = 0
        words[-1] |= (codes[:, j].astype(np.int64) + 1).astype(np.uint64) << np.uint64(used)
        used += int(width[j])
    key = np.ascontiguousarray(np.column_stack(words))
    order = np.lexsort(key.T[::-1])
    k = key[order]
    first = np.ones(n_rows, dtype=bool)
    first[1:] = (k[1:] != k[:-1]).any(axis=1)
    starts = np.flatnonzero(first)
    counts = np.diff(np.append(starts, n_rows)).astype(np.int64)
    uniq = np.ascontiguousarray(codes[order[starts]])
    if not return_inverse:
        return uniq, counts
    inverse = np.empty(n_rows, dtype=np.int64)
    inverse[order] = np.cumsum(first) - 1
    return uniq, counts, inverse


def _grouped_full_table(data_t, weights, arities, l_eff, log_prior, kinds, esses, m, max_cells):
    """Paper-regime masks and scores by :func:`build_full_table_grouped`, with the columns
    relabelled by decreasing entropy (the last columns, whose values define the suffix groups,
    then vary least and the groups merge most: 0.11 instead of 0.19 of the one-pass work on
    ALARM, 1,000,000 rows) and stored as int8 when the arities allow (cache-resident). The
    result is mapped back to the original variable indices. ``kinds`` / ``esses``: the
    Dirichlet priors scored from the one counting pass; scores (P, n, m)."""
    n = data_t.shape[0]
    ent = np.empty(n)
    total = float(weights.sum())
    for v in range(n):
        p = np.bincount(data_t[v] + 1, weights=weights) / total
        p = p[p > 0]
        ent[v] = -(p * np.log(p)).sum()
    perm = np.lexsort((np.arange(n), -ent))  # new column k = variable perm[k]
    small = data_t[perm].astype(np.int8 if arities.max() <= 127 else CODE_DTYPE)
    small, w = suffix_sort(small, weights)
    pm, ps = build_full_tables_grouped(small, w, np.ascontiguousarray(arities[perm]), l_eff,
                                       log_prior, np.asarray(kinds, dtype=np.int64),
                                       np.asarray(esses, dtype=np.float64), m, max_cells)
    masks = np.zeros_like(pm)
    for k in range(n):
        masks |= ((pm >> np.uint64(k)) & np.uint64(1)) << np.uint64(perm[k])
    out_m = np.empty_like(pm)
    out_s = np.empty_like(ps)
    out_m[perm] = masks
    out_s[:, perm] = ps
    return out_m, out_s


def suffix_sort(data_t: np.ndarray, weights: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct rows ``data_t`` (n, U) and their ``weights`` reordered by their values read
    from the last column backwards (``np.lexsort``: column n - 1 most significant), so that for
    every c the rows agreeing on all columns > c are contiguous: the suffix groups the
    paper-regime counting merges (:mod:`bnma_core.kernels.grouped_counts`)."""
    order = np.lexsort(data_t)
    return np.ascontiguousarray(data_t[:, order]), np.ascontiguousarray(weights[order])


def _pair_candidates(data_t: np.ndarray, weights: np.ndarray, arities: np.ndarray, k: int,
                     score: str, prior: str, ess: float) -> np.ndarray:
    n = data_t.shape[0]
    k = min(int(k), n - 1)
    pair = single_parent_scores(data_t, weights.astype(np.float64), arities,
                                _log_priors(n, 1, prior), SCORE_KINDS[score], float(ess))
    cand = np.empty((n, k), dtype=np.int64)
    for i in range(n):
        gain = pair[i] - pair[i, i]
        gain[i] = -np.inf
        order = np.lexsort((np.arange(n), -gain))
        cand[i] = np.sort(order[:k])
    return cand


def select_candidates(codes: np.ndarray, arities: np.ndarray, k: int, score: str = "k2",
                      prior: str = "hz", ess: float = 1.0) -> np.ndarray:
    """K candidate parents per node: the K other variables with the largest single-parent
    score gain S(X_i; {X_j}) - S(X_i; ∅) (ties broken by column index), the default candidate
    choice (a score-based screening, as BiDAG's and sumu's candidate sets; each gain is a
    Bayes factor of X_j -> X_i against no parent). Any number of variables; n^2 families are
    scored (:func:`bnma_core.kernels.orders.single_parent_scores`). Returns (n, K) int64,
    each row ascending."""
    _, arities = _validate(codes, arities, 1, score, prior, ess)
    uniq, w = compress_rows(codes)
    return _pair_candidates(np.ascontiguousarray(uniq.T), w, arities, k, score, prior, ess)


def build_score_table(codes: np.ndarray, arities: np.ndarray, max_parents: int = 3,
                      score: str = "k2", prior: str = "hz", ess: float = 1.0,
                      candidates: int | np.ndarray | None = None, prune_eps: float = 1e-12,
                      max_bytes: int = DEFAULT_MAX_BYTES) -> ScoreTable:
    """Build the score table of every node (class included) from coded data.

    Parameters
    ----------
    codes : (n_rows, n_vars) int array
        State codes, -1 = missing (a family's counts skip rows missing one of its variables and
        the rows it lacks are credited with its average fitted log-likelihood per row, see the
        module docstring).
    arities : (n_vars,) int array
    max_parents : int
        Maximum in-degree l (the paper uses 3).
    score : {"k2", "bdeu"}
        K2 (a_ijk = 1, the paper's setting) or BDeu with equivalent sample size ``ess``.
    prior : {"hz", "uniform"}
        Structure prior: Hwang & Zhang eq. 13 (see :func:`bnma_core.scores.log_structure_prior`)
        or uniform.
    candidates : None, "auto", int or (n, K) int array
        None = paper-faithful (all parent sets, at most 64 variables); K = candidate-restricted
        with K candidates per node chosen by :func:`select_candidates`; an array gives them
        explicitly. K <= 16. "auto" = paper-faithful up to 64 variables when the table fits in
        ``max_bytes``, else K = ``DEFAULT_CANDIDATES`` (or n - 1 if smaller).
    prune_eps : float
        Relative mass a node term may drop (see module docstring); 0 = exact.
    max_bytes : int
        Refuse (ValueError) when the estimated memory exceeds this.

    Returns
    -------
    ScoreTable

    References
    ----------
    Hwang & Zhang (2005), eqs. 7, 9 and 13; Friedman & Koller (2003) for order scores.
    """
    data_t, arities = _validate(codes, arities, max_parents, score, prior, ess)
    n, n_rows = data_t.shape
    uniq, weights = compress_rows(data_t.T)
    data_t = np.ascontiguousarray(uniq.T)
    l_eff = min(int(max_parents), n - 1)
    if prune_eps < 0 or not math.isfinite(prune_eps):
        raise ValueError("prune_eps must be a finite number >= 0.")
    k, cand = choose_regime(candidates, n, n_rows, arities, l_eff, max_bytes)
    log_prior = _log_priors(n, l_eff, prior)
    max_cells = int(np.prod(np.sort(arities)[::-1][: l_eff + 1]))
    regime = "full" if k is None else "candidates"
    m = n_parent_sets(n - 1 if k is None else k, l_eff)
    key = (data_t.tobytes(), data_t.shape, weights.tobytes(), arities.tobytes(), l_eff, prior,
           float(prune_eps), regime, k, None if cand is None else cand.tobytes())
    shared = _SHARED_PRIORS.get()
    if shared is not None and key in shared[1] and (score, float(ess)) in shared[1][key]:
        return shared[1][key].pop((score, float(ess)))
    priors = [(score, float(ess))]
    if shared is not None and (score, float(ess)) in shared[0]:
        priors += [q for q in shared[0] if q != priors[0]]
    if k is None:
        masks, all_scores = _grouped_full_table(
            data_t, weights, arities, l_eff, log_prior, [SCORE_KINDS[q[0]] for q in priors],
            [q[1] for q in priors], m, max_cells)
        extra = [_no_candidates(n)] * len(priors)
    else:
        masks, all_scores, extra = _candidate_tables(data_t, weights, arities, k, cand, priors,
                                                     prior, l_eff, log_prior, m,
                                                     shared[0][0] if len(priors) > 1 else None)
    if len(priors) > 1:
        shared[1][key] = {}
        for j, q in enumerate(priors[1:], 1):
            shared[1][key][q] = _sorted_table(
                masks.copy(), all_scores[j], m, regime, q[0], q[1], *extra[j], arities, l_eff,
                prior, prune_eps, data_t, weights, logsum_pending=k is not None)
    return _sorted_table(masks, all_scores[0], m, regime, score, float(ess), *extra[0],
                         arities, l_eff, prior, prune_eps, data_t, weights)


def _no_candidates(n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The empty candidate arrays (candidates, log-sums, candidate bits) of a "full" table."""
    return np.zeros((n, 0), dtype=np.int64), np.zeros((n, 0)), np.zeros((n, 0), dtype=np.int32)


def _candidate_tables(data_t: np.ndarray, weights: np.ndarray, arities: np.ndarray, k: int,
                      cand: np.ndarray | None, priors: list[tuple[str, float]], prior: str,
                      l_eff: int, log_prior: np.ndarray, m: int,
                      select_under: tuple[str, float] | None = None) -> tuple:
    """The unsorted tables of the candidate-restricted regime (``k`` candidates per node,
    chosen by :func:`select_candidates` unless ``cand`` gives them), counted once for all the
    priors (:func:`bnma_core.kernels.orders.build_candidate_tables`); returns (masks, scores
    (P, n, m), per prior (candidates, log-sums, candidate bits)). The candidates are chosen
    under each of ``priors`` ((score, ess) pairs), or once under ``select_under`` for all of
    them (:func:`shared_counting`: one set of families, counted once)."""
    n = data_t.shape[0]
    if cand is None and select_under is not None:
        cand = _pair_candidates(data_t, weights, arities, k, select_under[0], prior,
                                select_under[1])
    cands = np.stack([cand if cand is not None
                      else _pair_candidates(data_t, weights, arities, k, q[0], prior, q[1])
                      for q in priors])
    # only the first prior's node terms are summed over subsets now; the others' are when
    # their table first scores an order (ScoreTable.arrays): an order average fitted at
    # another's orders (stack's share_orders) never does
    zeta = np.arange(len(priors)) == 0
    masks, scores, logsums = build_candidate_tables(
        data_t, weights.astype(np.float64), arities, cands, l_eff, log_prior,
        np.array([SCORE_KINDS[q[0]] for q in priors], dtype=np.int64),
        np.array([q[1] for q in priors], dtype=np.float64), m, zeta)
    return masks, scores, [(cands[j], logsums[j], candidate_bits(cands[j], n=n))
                           for j in range(len(priors))]


def _sorted_table(masks: np.ndarray, scores: np.ndarray, m: int, regime: str, score: str,
                  ess: float, cand: np.ndarray, logsum: np.ndarray, cbit: np.ndarray,
                  arities: np.ndarray, l_eff: int, prior: str, prune_eps: float,
                  data_t: np.ndarray, weights: np.ndarray, logsum_pending: bool = False
                  ) -> ScoreTable:
    """Sort a node-score table into bands (:func:`sort_table`; each node term may drop
    relative mass ``prune_eps`` over its ``m`` parent sets, see the module docstring) and
    wrap it as a :class:`ScoreTable` (``logsum_pending``: ``logsum`` not yet
    subset-summed)."""
    log_eps_rel = math.log(prune_eps / m) if prune_eps > 0 else -math.inf
    masks, scores, limits, exps, bid, band_first, band_anchor = sort_table(masks, scores,
                                                                            log_eps_rel)
    return ScoreTable(masks, scores, limits, arities, l_eff, score, prior, ess,
                      float(prune_eps), log_eps_rel, regime, cand, logsum, exps, bid,
                      band_first, band_anchor, cbit, data_t, weights, logsum_pending)


_SHARED_PRIORS: contextvars.ContextVar = contextvars.ContextVar("shared_priors", default=None)


@contextlib.contextmanager
def shared_counting(priors):
    """Inside the block, a :func:`build_score_table` under one of ``priors`` ((score, ess)
    pairs, e.g. ``[("k2", 1.0), ("bdeu", 1.0), ("bdeu", 20.0)]``) counts its data once and
    scores every listed prior from the same counts (paper regime:
    :func:`bnma_core.kernels.grouped_counts.build_full_tables_grouped`; candidate regime:
    :func:`bnma_core.kernels.orders.build_candidate_tables`); a later build of the same data,
    settings and one of the other priors returns that table instead of counting again. The
    tables are the ones separate builds give (equal arrays, tested), except that in the
    candidate regime the candidate parents the build selects (``candidates=K``) are selected
    once, under the first listed prior, for all of them: one set of families, counted once
    and scored per prior (separate selections share ~80 % of the candidates on HEPAR II and
    made the kernel count 2.1 times the families; docs/accuracy.md §13). The block also keeps
    each :func:`compress_rows` result (the same rows compressed for every prior's table,
    leave-one-out pass and refit) and the family counts its kernels take on the same rows
    (:func:`count_memo`). All are dropped at the end of the block. Used by ``stack``'s three
    order averages (DESIGN §9)."""
    token = _SHARED_PRIORS.set(([(str(s), float(e)) for s, e in priors], {}, {}, {}))
    try:
        yield
    finally:
        _SHARED_PRIORS.reset(token)


def choose_regime(candidates: int | np.ndarray | str | None, n: int, n_rows: int,
                   arities: np.ndarray, l_eff: int, max_bytes: int
                   ) -> tuple[int | None, np.ndarray | None]:
    """Resolve ``candidates`` ("auto" included) as :func:`_resolve_candidates` does and refuse
    a regime that cannot hold ``n`` variables or whose estimated memory exceeds ``max_bytes``."""
    if isinstance(candidates, str):
        if candidates != "auto":
            raise ValueError(f"Unknown candidates {candidates!r}; use None, 'auto', a number "
                             "or an (n_vars, K) array.")
        full_fits = (n <= MAX_FULL_VARS
                     and estimate_table_bytes(n, n_rows, arities, l_eff) <= max_bytes)
        candidates = None if full_fits else min(DEFAULT_CANDIDATES, n - 1)
    k, cand = _resolve_candidates(candidates, n)
    if k is None and n > MAX_FULL_VARS:
        raise DataError(
            f"The paper-faithful regime (every parent set) handles at most {MAX_FULL_VARS} "
            f"variables (got {n}); use candidates=K (K <= {MAX_CANDIDATES} candidate parents "
            "per node) or candidates='auto'.")
    need = estimate_table_bytes(n, n_rows, arities, l_eff, k)
    if need > max_bytes:
        raise ValueError(
            f"The score table would need about {need / 1e9:.2f} GB (limit "
            f"{max_bytes / 1e9:.2f} GB): lower max_parents, use fewer variables or the "
            "candidate-restricted regime with fewer candidates.")
    return k, cand


def _resolve_candidates(candidates: int | np.ndarray | None, n: int
                        ) -> tuple[int | None, np.ndarray | None]:
    """(K, explicit candidate array or None to select them); (None, None) = full regime."""
    if candidates is None:
        return None, None
    if isinstance(candidates, (int, np.integer)):
        if not 1 <= candidates <= MAX_CANDIDATES:
            raise ValueError(f"The number of candidate parents must be 1..{MAX_CANDIDATES}.")
        return min(int(candidates), n - 1), None
    cand = np.asarray(candidates, dtype=np.int64)
    if cand.ndim != 2 or cand.shape[0] != n or cand.shape[1] > MAX_CANDIDATES:
        raise ValueError(f"candidates must be an (n_vars, K) array with K <= {MAX_CANDIDATES}.")
    for i in range(n):
        if (len(set(cand[i].tolist())) != cand.shape[1] or i in cand[i]
                or (cand[i] < 0).any() or (cand[i] >= n).any()):
            raise ValueError(f"Candidate parents of node {i} must be distinct other variables.")
    return cand.shape[1], np.sort(cand, axis=1)
