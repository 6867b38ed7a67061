"""Order MCMC: Metropolis-Hastings over node orders (Friedman & Koller 2003; Hwang & Zhang 2005,
Section III-B; DESIGN §4).

The target is P(≺ | D) ∝ prod_i sum_{Z ⊆ pred≺(i), |Z| <= l} exp S(X_i; Z) with a uniform prior
over orders. The paper's move swaps two uniformly chosen positions (symmetric proposal, so the
acceptance probability is min(1, P(≺new|D) / P(≺t|D)), eq. 12); adjacent swaps, relocation of
one node, and a BiDAG-like mix (13 % random swaps, 86 % adjacent swaps, 1 % relocations) are
options. After a move touching positions a < b only the nodes at positions a..b are rescored.

Step mode (:meth:`OrderMCMC.step`) advances one chain a few iterations through the same
kernel and reports each move from the kernel's own records; the chains record their order every
``trace_every`` iterations for the convergence diagnostics of
:mod:`bnma_core.structure.diagnostics` (DESIGN §14).

Known bias: a uniform prior over *orders* is not a uniform prior over DAGs. A DAG consistent
with many orders (e.g. a sparse one) is counted once per consistent order, so order MCMC weights
each DAG by its number of linear extensions (Friedman & Koller 2003; Ellis & Wong 2008). The
paper's method (eq. 10-11) inherits this.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from itertools import permutations

import numpy as np
import pandas as pd

from ..kernels.orders import (
    ChainArrays,
    mcmc_run,
    order_best_parents,
    orders_edge_probabilities,
    propose_order,
)
from .score_table import ScoreTable

MOVES = ("swap", "adjacent", "relocate", "mix")
STARTS = ("random", "given", "reversed")
LOG2E = 1.0 / math.log(2.0)
THREAD_PREFIX = "order-mcmc"
CHUNK_SECONDS = 0.1  # kernel call length between stop checks in OrderMCMC.stream
MIN_CHUNK = 100
MAX_TRACE_ORDERS = 1000  # orders recorded per chain for the diagnostics by default
MAX_RECORDED_ORDERS = 100_000  # at most (8 n bytes each: 30 MB per ALARM chain)
MOVE_KINDS = ("swap", "relocate")  # the kernel's move codes 0, 1


def spearman_orders(order: Sequence[int], reference: Sequence[int]) -> float:
    """Spearman rank correlation between two orders of the same variables (positions as ranks):
    1 - 6 sum_v d_v^2 / (n (n^2 - 1)), d_v = position of v in ``order`` minus in ``reference``."""
    order = np.asarray(order)
    reference = np.asarray(reference)
    n = len(order)
    if sorted(order.tolist()) != sorted(reference.tolist()):
        raise ValueError("Both orders must contain the same variables.")
    if n < 2:
        return 1.0
    pos = np.empty(n, dtype=np.int64)
    ref = np.empty(n, dtype=np.int64)
    pos[order] = np.arange(n)
    ref[reference] = np.arange(n)
    d = (pos - ref).astype(float)
    return float(1.0 - 6.0 * (d @ d) / (n * (n * n - 1.0)))


def potential_scale_reduction(chains: Sequence[np.ndarray]) -> float:
    """Rank-normalised split R-hat of a scalar trace (Vehtari, Gelman, Simpson, Carpenter &
    Bürkner 2021: the split R-hat of Gelman & Rubin 1992 after rank normalisation and
    folding; DESIGN §11, §14), computed by ArviZ (``arviz_stats``): max of the split R-hat
    of the rank-normalised draws (bulk) and of the rank-normalised absolute deviations from
    the median (tail). Chains are cut to the shortest. Values above 1.01 say the chains do
    not yet agree; NaN with fewer than two chains, fewer than 4 draws per chain or no
    variation within the chains.
    """
    from arviz_stats.base import array_stats  # slow import (~0.6 s): only when used

    arrays = [np.asarray(c, dtype=float) for c in chains]
    if len(arrays) < 2 or min(len(c) for c in arrays) < 4:
        return float("nan")
    draws = min(len(c) for c in arrays)
    x = np.stack([c[:draws] for c in arrays])
    with np.errstate(divide="ignore", invalid="ignore"):
        return float(array_stats.rhat(x, method="rank"))


def exact_order_posterior(table: ScoreTable) -> tuple[np.ndarray, np.ndarray]:
    """Every order of n <= 8 variables with its exact posterior P(≺ | D) (for tests).
    Returns (orders (n!, n), probabilities (n!,))."""
    n = table.n_vars
    if n > 8:
        raise ValueError("Exact enumeration of orders is limited to 8 variables.")
    orders = np.array(list(permutations(range(n))), dtype=np.int64)
    logp = np.array([table.order_log_score(o) for o in orders])
    p = np.exp(logp - logp.max())
    return orders, p / p.sum()


def keep_iterations(n_iter: int, burn_in: int, n_orders: int) -> np.ndarray:
    """0-based iterations whose order is kept: burn_in + k * step, k < n_orders, with
    step = ceil((n_iter - burn_in) / n_orders) (paper: every 1,667th order from the 10,001st
    iteration of 60,000)."""
    step = max(1, -(-(n_iter - burn_in) // n_orders))
    its = burn_in + step * np.arange(n_orders)
    return its[its < n_iter]


def _draw_moves(rng: np.random.Generator, n: int, n_iter: int, move: str
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    i = rng.integers(0, n, size=n_iter)
    j = rng.integers(0, n - 1, size=n_iter)
    j = j + (j >= i)
    kind = np.zeros(n_iter, dtype=np.int64)
    if move == "adjacent":
        i = rng.integers(0, n - 1, size=n_iter)
        j = i + 1
    elif move == "relocate":
        kind[:] = 1
    elif move == "mix":
        u = rng.random(n_iter)
        adj = (u >= 0.13) & (u < 0.99)
        ia = rng.integers(0, n - 1, size=n_iter)
        i = np.where(adj, ia, i)
        j = np.where(adj, ia + 1, j)
        kind[u >= 0.99] = 1
    log_u = np.log(rng.random(n_iter))
    return i.astype(np.int64), j.astype(np.int64), kind, log_u


class OrderChain:
    """One Metropolis-Hastings chain over orders; advance it with :meth:`advance`."""

    def __init__(self, table: ScoreTable, n_iter: int, burn_in: int, n_orders: int, move: str,
                 rng: np.random.Generator, init_order: np.ndarray | None,
                 reference: np.ndarray | None, trace_every: int = 0) -> None:
        n = table.n_vars
        self.table = table
        self.n_iter = n_iter
        self.order = (rng.permutation(n) if init_order is None
                      else np.array(init_order, dtype=np.int64))
        self.mi, self.mj, self.mk, self.log_u = _draw_moves(rng, n, n_iter, move)
        # full regime: predecessor bitmasks; candidate regime: per-position candidate-local
        # masks and the position of each variable; both updated incrementally by the kernel
        self.prefix, self.terms, self.local = table.order_state(self.order)
        self.pos = np.empty(n, dtype=np.int64)
        self.pos[self.order] = np.arange(n)
        if reference is not None:
            self.ref_pos = np.empty(n, dtype=np.int64)
            self.ref_pos[np.asarray(reference)] = np.arange(n)
            d = (np.arange(n) - self.ref_pos[self.order]).astype(float)
            sumd2 = float(d @ d)
        else:
            self.ref_pos = np.zeros(0, dtype=np.int64)
            sumd2 = 0.0
        self.state = np.array([self.terms.sum(), 0.0, sumd2])
        self.initial_log_score = float(self.state[0])
        self.trace_score = np.zeros(n_iter)
        self.trace_acc = np.zeros(n_iter, dtype=np.bool_)
        self.trace_spear = np.full(n_iter if reference is not None else 0, np.nan)
        its = keep_iterations(n_iter, burn_in, n_orders)
        self.keep_slot = np.full(n_iter, -1, dtype=np.int64)
        self.keep_slot[its] = np.arange(len(its))
        self.kept_iterations = its
        self.kept = np.zeros((len(its), n), dtype=np.int64)
        # orders after iterations trace_every, 2 trace_every, ... (edge traces, diagnostics)
        self.trace_every = int(trace_every)
        n_thin = n_iter // self.trace_every if self.trace_every > 0 else 0
        self.thin_orders = np.zeros((n_thin, n), dtype=np.int64)
        # log acceptance ratio of each proposal: allocated when step mode asks for it
        self.trace_delta = np.zeros(0)
        self.arrays = ChainArrays(self.order, self.prefix, self.terms, self.local, self.pos,
                                  self.state,
                                  self.mi, self.mj, self.mk, self.log_u, self.trace_score,
                                  self.trace_acc, self.keep_slot, self.kept, self.ref_pos,
                                  self.trace_spear, self.trace_delta, self.thin_orders,
                                  self.trace_every)
        self.t = 0
        self.seconds = 0.0  # wall time in the kernel
        self.cpu_seconds = 0.0  # CPU time of the thread in the kernel (load-independent)

    def advance(self, stop: int) -> None:
        stop = min(stop, self.n_iter)
        if stop <= self.t:
            return
        t0 = time.perf_counter()
        c0 = time.thread_time()
        mcmc_run(self.table.arrays(), self.arrays, self.t, stop)
        self.seconds += time.perf_counter() - t0
        self.cpu_seconds += time.thread_time() - c0
        self.t = stop

    def record_moves(self) -> None:
        """From now on the kernel records each proposal's log acceptance ratio
        (``trace_delta``, NaN for iterations done before; 8 bytes per iteration)."""
        if self.trace_delta.shape[0] == 0:
            self.trace_delta = np.full(self.n_iter, np.nan)
            self.arrays = self.arrays._replace(trace_delta=self.trace_delta)

    def recorded_orders(self, after: int = 0) -> tuple[np.ndarray, np.ndarray]:
        """Orders recorded every ``trace_every`` iterations so far, after iteration ``after``
        (1-based): (orders (T, n), iterations (T,))."""
        if self.trace_every <= 0:
            return np.zeros((0, self.order.shape[0]), dtype=np.int64), np.zeros(0, np.int64)
        done = min(self.t // self.trace_every, self.thin_orders.shape[0])
        its = self.trace_every * np.arange(1, done + 1)
        keep = its > after
        return self.thin_orders[:done][keep], its[keep]

    @property
    def n_kept(self) -> int:
        return int(np.searchsorted(self.kept_iterations, self.t))

    @property
    def log_score(self) -> float:
        return float(self.state[0])

    @property
    def acceptance_rate(self) -> float:
        return float(self.state[1] / self.t) if self.t else 0.0


@dataclass
class OrderMCMCResult:
    """What a (possibly stopped) run produced.

    ``orders``: kept orders (T, n), interleaved across chains (chain 0's first, chain 1's
    first, ...) so that the first k rows draw on every chain; ``order_chain`` /
    ``order_iteration`` say where each came from; ``trace``: DataFrame with chain, iteration,
    log2_score (log2 P(≺, D), Fig. 5), accepted and, with a reference order, spearman;
    ``rhat``: rank-normalised split R-hat (:func:`potential_scale_reduction`) of the
    post-burn-in log score over all chains (NaN with one chain).
    """

    orders: np.ndarray
    order_chain: np.ndarray
    order_iteration: np.ndarray
    trace: pd.DataFrame
    rhat: float
    acceptance_rate: float
    iterations_done: int
    seconds: float


@dataclass(frozen=True)
class MoveRecord:
    """One iteration of an order-MCMC chain, as step mode shows it.

    ``order`` is the order before the move; the move is a ``kind`` "swap" of the nodes at
    ``positions`` (i, j) (adjacent when |i - j| = 1) or a "relocate" of the node at position
    i to position j; ``nodes`` are the variables it moves (both for a swap, one for a
    relocation). Scores are natural-log order scores log P(≺, D) (DESIGN §4):
    ``proposed_log_score = log_score + log_ratio``; the move is accepted when
    log(``uniform``) < ``log_ratio``, i.e. with probability
    ``acceptance_probability`` = min(1, exp(log_ratio)) (Hwang & Zhang eq. 12).
    """

    iteration: int  # 1-based
    order: np.ndarray
    kind: str
    positions: tuple[int, int]
    nodes: tuple[int, ...]
    proposed_order: np.ndarray
    log_score: float
    proposed_log_score: float
    log_ratio: float
    acceptance_probability: float
    uniform: float
    accepted: bool

    @property
    def new_order(self) -> np.ndarray:
        """The order after the iteration (the proposed one if accepted)."""
        return self.proposed_order if self.accepted else self.order


@dataclass
class StepResult:
    """What :meth:`OrderMCMC.step` did: the ``moves`` in iteration order, the ``order`` and
    ``log_score`` reached after ``iteration`` iterations of chain ``chain``, the best network
    for that order (``best_dag[y, x]`` True for the arc y -> x; each node's highest-scoring
    parent set among its predecessors) and the arcs ``added_arcs`` / ``removed_arcs``
    (lists of (parent, child)) relative to the best network of the order before the call."""

    chain: int
    moves: list[MoveRecord]
    order: np.ndarray
    log_score: float
    iteration: int
    best_dag: np.ndarray
    added_arcs: list[tuple[int, int]]
    removed_arcs: list[tuple[int, int]]

    def to_frame(self, names: Sequence[str] | None = None) -> pd.DataFrame:
        """One row per move: iteration, kind, positions, the moved nodes (by name when
        ``names`` is given), scores, acceptance probability, uniform draw, accepted."""
        def label(v: int):
            return names[v] if names is not None else v

        return pd.DataFrame({
            "iteration": [m.iteration for m in self.moves],
            "kind": [m.kind for m in self.moves],
            "position_i": [m.positions[0] for m in self.moves],
            "position_j": [m.positions[1] for m in self.moves],
            "nodes": [", ".join(str(label(v)) for v in m.nodes) for m in self.moves],
            "log_score": [m.log_score for m in self.moves],
            "proposed_log_score": [m.proposed_log_score for m in self.moves],
            "acceptance_probability": [m.acceptance_probability for m in self.moves],
            "uniform": [m.uniform for m in self.moves],
            "accepted": [m.accepted for m in self.moves],
        })


def _arcs(adj: np.ndarray) -> list[tuple[int, int]]:
    return [(int(y), int(x)) for y, x in zip(*np.nonzero(adj))]


class OrderMCMC:
    """Several order-MCMC chains over one score table.

    Parameters
    ----------
    table : ScoreTable
    n_iter, burn_in, n_orders : int
        Iterations per chain, discarded burn-in, orders kept per chain (paper: 60,000, 10,000,
        30).
    move : {"swap", "adjacent", "relocate", "mix"}
    n_chains : int
        Chains run in parallel threads (the kernel releases the GIL).
    start : {"random", "given", "reversed"}
        Initial order: random permutation, ``start_order``, or ``start_order`` reversed (the
        paper starts from a reversed original order, Fig. 5).
    start_order, reference_order : sequence of variable indices, optional
        ``reference_order`` enables the Spearman trace (Fig. 6).
    random_state : int, Generator or None
    trace_every : int or None
        Record each chain's order after every ``trace_every``-th iteration, for the edge
        traces of the convergence diagnostics (:meth:`edge_traces`, :meth:`diagnostics`);
        0 records none. Default: ceil(n_iter / 1,000), at most 1,000 orders per chain
        (n × 8 bytes each: 0.3 MB per ALARM chain; at most 100,000 per chain). Recording
        does not change the chain.

    Step mode: :meth:`step` advances one chain by a few iterations through the same kernel
    and reports every move (:class:`StepResult`).
    """

    def __init__(self, table: ScoreTable, n_iter: int = 60000, burn_in: int = 10000,
                 n_orders: int = 30, move: str = "swap", n_chains: int = 1,
                 start: str = "random", start_order: Sequence[int] | None = None,
                 reference_order: Sequence[int] | None = None, random_state=None,
                 trace_every: int | None = None) -> None:
        n = table.n_vars
        if move not in MOVES:
            raise ValueError(f"Unknown move {move!r}; choose one of {', '.join(MOVES)}.")
        if start not in STARTS:
            raise ValueError(f"Unknown start {start!r}; choose one of {', '.join(STARTS)}.")
        if int(n_iter) < 1 or int(burn_in) < 0 or int(burn_in) >= int(n_iter):
            raise ValueError("Need n_iter >= 1 and 0 <= burn_in < n_iter.")
        if int(n_orders) < 1:
            raise ValueError("n_orders must be at least 1.")
        if int(n_chains) < 1:
            raise ValueError("n_chains must be at least 1.")
        if n < 2:
            raise ValueError("Order MCMC needs at least two variables.")
        init = None
        if start != "random":
            if start_order is None:
                raise ValueError(f"start={start!r} needs start_order.")
            init = _check_order(start_order, n)
            if start == "reversed":
                init = init[::-1].copy()
        ref = None if reference_order is None else _check_order(reference_order, n)
        if trace_every is None:
            trace_every = -(-int(n_iter) // MAX_TRACE_ORDERS)
        if int(trace_every) < 0:
            raise ValueError("trace_every must be 0 (record no orders) or a positive number "
                             "of iterations.")
        if int(trace_every) > 0 and int(n_iter) // int(trace_every) > MAX_RECORDED_ORDERS:
            raise ValueError(
                f"trace_every={int(trace_every)} would record "
                f"{int(n_iter) // int(trace_every):,} orders per chain; the limit is "
                f"{MAX_RECORDED_ORDERS:,}: use trace_every >= "
                f"{-(-int(n_iter) // MAX_RECORDED_ORDERS)} (or 0 to record none).")
        rng = np.random.default_rng(random_state)
        seeds = rng.integers(0, 2**63 - 1, size=int(n_chains))
        self.n_iter, self.burn_in = int(n_iter), int(burn_in)
        self.reference = ref
        self.table = table
        self.trace_every = int(trace_every)
        self.chains = [OrderChain(table, int(n_iter), int(burn_in), int(n_orders), move,
                                  np.random.default_rng(s), init, ref, self.trace_every)
                       for s in seeds]

    def _pool(self) -> ThreadPoolExecutor | None:
        """Threads for the chains (None for one chain, run in the caller's thread)."""
        if len(self.chains) == 1:
            return None
        return ThreadPoolExecutor(max_workers=len(self.chains),
                                  thread_name_prefix=THREAD_PREFIX)

    def _advance_all(self, stop: int, pool: ThreadPoolExecutor | None = None) -> None:
        if len(self.chains) == 1:
            self.chains[0].advance(stop)
            return
        if pool is not None:
            list(pool.map(lambda c: c.advance(stop), self.chains))
            return
        with self._pool() as ex:
            list(ex.map(lambda c: c.advance(stop), self.chains))

    def run(self) -> OrderMCMCResult:
        self._advance_all(self.n_iter)
        return self.result()

    def _chunk(self, remaining: int) -> int:
        """Iterations of the next kernel call when a stop may be requested: about
        ``CHUNK_SECONDS`` of the slowest chain at its measured rate (at least
        ``MIN_CHUNK``, 1,000 before any rate is known)."""
        rates = [c.t / c.seconds for c in self.chains if c.seconds > 0]
        size = int(min(rates) * CHUNK_SECONDS) if rates else 1000
        return max(1, min(remaining, max(MIN_CHUNK, size)))

    def stream(self, every: int = 500, should_stop: Callable[[], bool] | None = None
               ) -> Iterator[dict]:
        """Advance all chains ``every`` iterations at a time, yielding one event per chain:
        chain, iteration (done so far), n_iter, log2_score, acceptance_rate, order (indices),
        spearman (None without a reference order), iter_per_s, done.

        ``should_stop`` (optional, called between kernel calls of about ``CHUNK_SECONDS``
        each, so also inside a long ``every`` step) ends the stream early when it returns
        True; the chains then hold the iterations done so far (see :meth:`result`). The chain
        threads live for the stream and are joined when it ends or is closed, so none is left
        running afterwards. Chunking does not change the chains (moves are drawn in advance).
        """
        every = max(1, int(every))
        pool = self._pool()
        try:
            t = min(c.t for c in self.chains)
            while t < self.n_iter:
                target = min(t + every, self.n_iter)
                while t < target:
                    if should_stop is not None and should_stop():
                        return
                    t += self._chunk(target - t)
                    self._advance_all(t, pool)
                yield from self._events()
        finally:
            if pool is not None:
                pool.shutdown(wait=True)

    def _events(self) -> Iterator[dict]:
        for k, c in enumerate(self.chains):
            yield {
                "chain": k, "iteration": c.t, "n_iter": self.n_iter,
                "log2_score": c.log_score * LOG2E,
                "acceptance_rate": c.acceptance_rate,
                "order": c.order.copy(),
                "spearman": (float(c.trace_spear[c.t - 1]) if self.reference is not None
                             else None),
                "iter_per_s": c.t / c.seconds if c.seconds > 0 else float("nan"),
                "done": c.t >= self.n_iter,
            }

    def step(self, n_steps: int = 1, chain: int = 0) -> StepResult:
        """Advance one chain by ``n_steps`` iterations (step mode) and report every move.

        The iterations run in the sampler's own kernel (:func:`~bnma_core.kernels.orders.
        mcmc_run`) with the pre-drawn moves and uniforms of this chain, so a chain stepped
        1, 10 or 100 iterations at a time is the chain :meth:`run` produces with the same
        seed (``tests/structure/test_mcmc_step.py``). The kernel records each proposal's log
        acceptance ratio; each :class:`MoveRecord` reads the move (positions, kind) and the
        uniform draw from the chain's arrays and the proposed order from the kernel's proposal
        function (:func:`~bnma_core.kernels.orders.propose_order`). The result also holds the best
        network of the order reached and the arcs that changed since the order before the
        call. Steps past ``n_iter`` are not taken (the result then has fewer moves).
        """
        if not 0 <= int(chain) < len(self.chains):
            raise ValueError(f"chain must be between 0 and {len(self.chains) - 1}; this run "
                             f"has {len(self.chains)} chain(s).")
        if int(n_steps) < 1:
            raise ValueError("n_steps must be at least 1.")
        c = self.chains[int(chain)]
        if c.t >= self.n_iter:
            raise ValueError(f"Chain {chain} has done all its {self.n_iter} iterations; start "
                             "a new run with more iterations to step further.")
        c.record_moves()
        tab = self.table.arrays()
        order = c.order.copy()
        score = c.log_score
        dag_before = order_best_parents(tab, order)
        start = c.t
        c.advance(start + int(n_steps))
        moves = []
        for it in range(start, c.t):
            i, j, kind = int(c.mi[it]), int(c.mj[it]), int(c.mk[it])
            proposed = propose_order(order, i, j, kind)
            delta = float(c.trace_delta[it])
            accepted = bool(c.trace_acc[it])
            nodes = (int(order[i]), int(order[j])) if kind == 0 else (int(order[i]),)
            moves.append(MoveRecord(
                iteration=it + 1, order=order, kind=MOVE_KINDS[kind], positions=(i, j),
                nodes=nodes, proposed_order=proposed, log_score=score,
                proposed_log_score=score + delta, log_ratio=delta,
                acceptance_probability=float(min(1.0, math.exp(min(delta, 0.0)))),
                uniform=float(math.exp(c.log_u[it])), accepted=accepted))
            if accepted:
                order = proposed
            score = float(c.trace_score[it])
        dag = order_best_parents(tab, c.order)
        return StepResult(chain=int(chain), moves=moves, order=c.order.copy(),
                          log_score=c.log_score, iteration=c.t, best_dag=dag,
                          added_arcs=_arcs(dag & ~dag_before),
                          removed_arcs=_arcs(dag_before & ~dag))

    def recorded_orders(self, chain: int = 0, after_burn_in: bool = True
                        ) -> tuple[np.ndarray, np.ndarray]:
        """The orders chain ``chain`` recorded every ``trace_every`` iterations so far (after
        the burn-in unless ``after_burn_in`` is False): (orders (T, n), 1-based iterations)."""
        return self.chains[chain].recorded_orders(self.burn_in if after_burn_in else 0)

    def log_score_traces(self) -> np.ndarray:
        """(n_chains, draws) natural-log order scores log P(≺, D) of every post-burn-in
        iteration, cut to the chain that has done the fewest."""
        t = min(c.t for c in self.chains)
        if t <= self.burn_in:
            return np.zeros((len(self.chains), 0))
        return np.stack([c.trace_score[self.burn_in: t] for c in self.chains])

    def edge_traces(self) -> np.ndarray:
        """(n_chains, draws, n, n) order-conditional edge posteriors P(y -> x | D, ≺) of the
        post-burn-in orders recorded every ``trace_every`` iterations (DESIGN §4), cut to the
        chain with the fewest: the edge-indicator traces of
        :func:`bnma_core.structure.diagnostics.convergence_diagnostics` (why these and not the
        best network's 0/1 arcs: see that function). Memory: 8 n² bytes per draw (11 kB for
        ALARM; 4 chains × 1,000 draws 44 MB)."""
        orders = [self.recorded_orders(k)[0] for k in range(len(self.chains))]
        draws = min(len(o) for o in orders)
        tab = self.table.arrays()
        n = self.table.n_vars
        if draws == 0:
            return np.zeros((len(self.chains), 0, n, n))
        if len(self.chains) == 1:
            return orders_edge_probabilities(tab, orders[0][:draws])[None]
        with ThreadPoolExecutor(max_workers=min(len(self.chains), 4),
                                thread_name_prefix=THREAD_PREFIX) as ex:
            parts = list(ex.map(lambda o: orders_edge_probabilities(tab, o[:draws]), orders))
        return np.stack(parts)

    def diagnostics(self, names: Sequence[str] | None = None, **kwargs):
        """Convergence diagnostics of this run (:func:`bnma_core.structure.diagnostics.
        convergence_diagnostics` on :meth:`log_score_traces` and :meth:`edge_traces`); needs
        at least 4 chains."""
        from .diagnostics import convergence_diagnostics

        return convergence_diagnostics(self.log_score_traces(), self.edge_traces(), names,
                                       **kwargs)

    def result(self) -> OrderMCMCResult:
        """Kept orders so far (if no order was kept yet, e.g. stopped during burn-in, the
        current order of every chain), the trace of the iterations done, and R-hat."""
        kept = [c.kept[: c.n_kept] for c in self.chains]
        its = [c.kept_iterations[: c.n_kept] for c in self.chains]
        rows, chain_ids, iters = [], [], []
        for r in range(max(len(k) for k in kept)):
            for ci, k in enumerate(kept):
                if r < len(k):
                    rows.append(k[r])
                    chain_ids.append(ci)
                    iters.append(its[ci][r])
        if not rows:
            rows = [c.order.copy() for c in self.chains]
            chain_ids = list(range(len(self.chains)))
            iters = [c.t - 1 for c in self.chains]
        frames = []
        for ci, c in enumerate(self.chains):
            d = {"chain": np.full(c.t, ci), "iteration": np.arange(1, c.t + 1),
                 "log2_score": c.trace_score[: c.t] * LOG2E, "accepted": c.trace_acc[: c.t]}
            if self.reference is not None:
                d["spearman"] = c.trace_spear[: c.t]
            frames.append(pd.DataFrame(d))
        trace = pd.concat(frames, ignore_index=True)
        post = [c.trace_score[self.burn_in: c.t] for c in self.chains]
        done = sum(c.t for c in self.chains)
        acc = sum(c.state[1] for c in self.chains) / done if done else 0.0
        return OrderMCMCResult(np.array(rows, dtype=np.int64), np.array(chain_ids),
                               np.array(iters), trace, potential_scale_reduction(post),
                               float(acc), int(min(c.t for c in self.chains)),
                               float(sum(c.seconds for c in self.chains)))


def _check_order(order: Sequence[int], n: int) -> np.ndarray:
    arr = np.asarray(order, dtype=np.int64)
    if arr.shape != (n,) or sorted(arr.tolist()) != list(range(n)):
        raise ValueError(f"An order must list each of the {n} variables exactly once.")
    return arr
