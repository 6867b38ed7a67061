"""The computations behind the dashboard's guided lessons (the Teach page): the lessons' data,
an order-MCMC sampler to step through, and the MCMC edge posteriors converging to the exact
ones (DESIGN §13-§14).

Everything here is the library's own machinery (:func:`build_score_table`,
:class:`~bnma_core.structure.orders.OrderMCMC`, :func:`~bnma_core.structure.exact.
edge_posteriors`) with a lesson's settings, so that what a class sees is what the library
computes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import numpy as np

from ..data import DiscreteDataset
from .orders import OrderMCMC
from .score_table import build_score_table

__all__ = ["lesson_dataset", "step_sampler", "step_frames", "exact_convergence"]

STEP_BATCH = 1000
"""Moves of chain 0 sent to the browser at once by :func:`step_frames` (DESIGN §14)."""

LESSON_DATA = {"asia": "1,000 rows sampled from ASIA (seed 0), class lung",
               "wbc": "the bundled WBC data, complete rows (683)"}


def lesson_dataset(name: str, rows: int = 1000, seed: int = 0) -> DiscreteDataset:
    """A lesson's data: ``"asia"`` (``rows`` rows sampled from the bundled ASIA network with
    ``seed``, class ``lung``) or ``"wbc"`` (the bundled WBC data, rows with a missing value
    left out)."""
    if name == "asia":
        from ..network import load_network

        return load_network("asia").sample(int(rows), seed=int(seed), class_variable="lung")
    if name == "wbc":
        from ..data import load_dataset
        from ..datasets import bundled_path

        return load_dataset(bundled_path("wbc.csv"), missing="drop")
    raise ValueError(f"Unknown lesson data {name!r}; choose one of {', '.join(LESSON_DATA)}.")


def step_sampler(ds: DiscreteDataset, *, n_iter: int = 4000, burn_in: int = 1000,
                 n_chains: int = 4, max_parents: int = 3, score: str = "k2",
                 structure_prior: str = "hz", move: str = "swap", random_state: int = 0
                 ) -> OrderMCMC:
    """An order-MCMC sampler over every variable of ``ds`` (class included), to advance with
    :meth:`OrderMCMC.step` and finish with :meth:`OrderMCMC.run`: the score table and chains
    of :class:`~bnma_core.classifiers.order_bma.OrderMCMCBMA` with the same settings
    (Hwang & Zhang's swap move, K2, their structure prior by default), orders recorded every
    ``ceil(n_iter / 1,000)`` iterations for :meth:`OrderMCMC.diagnostics`. Memory: about
    60 bytes per iteration and chain (the pre-drawn moves and the traces)."""
    table = build_score_table(ds.codes, ds.arities, max_parents=int(max_parents), score=score,
                              prior=structure_prior)
    return OrderMCMC(table, n_iter=int(n_iter), burn_in=int(burn_in), n_orders=30,
                     move=move, n_chains=int(n_chains), random_state=random_state)


def step_frames(ds: DiscreteDataset, *, n_iter: int = 5000, burn_in: int | None = None,
                random_state: int = 0, start: int = 0, count: int = STEP_BATCH,
                chain: int = 0, history_points: int = 1500) -> dict:
    """A batch of consecutive moves of one chain, ready to be played move by move in the
    browser (the Teach page's step mode, DESIGN §14): the server computes ``count`` moves at
    once (a move costs about 0.02 ms in the kernel), the browser shows them one at a time.

    The chain is the one :func:`step_sampler` builds with the same ``n_iter``, ``burn_in``
    (default ``n_iter // 4``) and ``random_state``: chain ``chain`` is advanced to iteration
    ``start`` by the kernel, then stepped ``count`` iterations by :meth:`OrderMCMC.step`, so
    every move is the :class:`~bnma_core.structure.orders.MoveRecord` of that iteration.

    Returns
    -------
    dict
        JSON-ready (lists, floats, ints, str): ``names``, ``class_name``, ``n_iter``,
        ``burn_in``, ``start``, ``order`` (variable indices by position at ``start``),
        ``score`` (its natural-log order score log P(≺, D)), ``history`` (pairs
        [iteration, log score] from iteration 0 to ``start``, at most ``history_points``),
        ``moves``: columns of one entry per iteration, read from its
        :class:`~bnma_core.structure.orders.MoveRecord`: ``iteration`` (1-based), ``i`` /
        ``j`` (the move's positions, 0-based), ``kind`` ("swap" / "relocate"), ``nodes``
        (the moved variables), ``log_score`` (before the move), ``proposed_log_score``,
        ``log_ratio`` (Δ),
        ``acceptance_probability``, ``uniform`` (u), ``accepted``, ``proposed_order`` and
        ``net`` (the best network of the order after the move, an index into ``nets``);
        ``nets``: the distinct best networks of the orders reached (lists of [parent,
        child]); ``net0``: the best network of the order at ``start``. The browser only
        displays these numbers: it computes none of them.
    """
    from ..kernels.orders import order_best_parents

    n_iter = int(n_iter)
    burn_in = n_iter // 4 if burn_in is None else int(burn_in)
    if not 0 <= int(start) <= n_iter:
        raise ValueError(f"start must be between 0 and {n_iter:,} (the chain's iterations).")
    sampler = step_sampler(ds, n_iter=n_iter, burn_in=burn_in, random_state=random_state)
    c = sampler.chains[int(chain)]
    c.advance(int(start))
    tab = sampler.table.arrays()
    nets: dict[tuple, int] = {}

    def net_of(order: np.ndarray) -> int:
        adj = order_best_parents(tab, order)
        key = tuple((int(y), int(x)) for y, x in zip(*np.nonzero(adj)))
        return nets.setdefault(key, len(nets))

    order0, score0 = c.order.copy(), c.log_score
    net0 = net_of(order0)
    hist_it = np.arange(0, c.t + 1)
    hist = np.r_[c.initial_log_score, c.trace_score[: c.t]]
    thin = max(1, len(hist_it) // int(history_points))
    keep = np.unique(np.r_[hist_it[::thin], hist_it[-1]])
    cols = ("iteration", "i", "j", "kind", "nodes", "log_score", "proposed_log_score",
            "log_ratio",
            "acceptance_probability", "uniform", "accepted", "proposed_order", "net")
    moves: dict[str, list] = {k: [] for k in cols}
    if c.t < n_iter and int(count) > 0:
        net = net0
        for m in sampler.step(int(count), int(chain)).moves:
            if m.accepted:
                net = net_of(m.proposed_order)
            for k, v in (("iteration", m.iteration), ("i", m.positions[0]),
                         ("j", m.positions[1]), ("kind", m.kind),
                         ("nodes", [int(x) for x in m.nodes]),
                         ("log_score", round(m.log_score, 4)),
                         ("proposed_log_score", round(m.proposed_log_score, 4)),
                         ("log_ratio", round(m.log_ratio, 4)),
                         ("acceptance_probability", round(m.acceptance_probability, 4)),
                         ("uniform", round(m.uniform, 4)), ("accepted", bool(m.accepted)),
                         ("proposed_order", [int(x) for x in m.proposed_order]),
                         ("net", net)):
                moves[k].append(v)
    return {"names": [str(v) for v in ds.names], "class_name": str(ds.class_name),
            "n_iter": n_iter, "burn_in": burn_in, "start": int(start),
            "order": [int(v) for v in order0], "score": float(score0),
            "history": [[int(i), round(float(hist[i]), 4)] for i in keep],
            "moves": moves, "nets": [[list(a) for a in arcs] for arcs in nets],
            "net0": net0}


def exact_convergence(ds: DiscreteDataset, *, n_iter: int = 20000, burn_in: int = 2000,
                      n_chains: int = 4, max_parents: int = 3, score: str = "k2",
                      structure_prior: str = "hz", every: int = 500, random_state: int = 0,
                      should_stop: Callable[[], bool] | None = None,
                      exact: np.ndarray | None = None) -> Iterator[dict]:
    """Order MCMC's edge posteriors approaching the exact ones as the chains run.

    First the exact P(u -> v | D) under the sampler's own target
    (:func:`~bnma_core.structure.exact.edge_posteriors` with the same ``max_parents``,
    ``score`` and ``structure_prior``; at most 20 variables), then every ``every`` iterations
    after the burn-in the MCMC estimate: the average over all chains of the order-conditional
    edge posteriors P(u -> v | D, ≺_t) of the orders recorded so far after the burn-in (each
    recorded order's term computed once). Yields dicts: ``iteration`` (per chain), ``draws``
    (recorded orders averaged), ``max_abs_error`` and ``mean_abs_error`` over the n (n − 1)
    edges, ``estimate`` and ``exact`` ((n, n) arrays, row = parent). ``should_stop`` is
    checked about every 0.1 s of chains (:meth:`OrderMCMC.stream`). ``exact`` may be given
    when already computed.
    """
    from ..kernels.orders import orders_edge_probabilities
    from .exact import edge_posteriors

    if exact is None:
        exact = edge_posteriors(ds.codes, ds.arities, max_parents=int(max_parents),
                                score=score, structure_prior=structure_prior)
    sampler = step_sampler(ds, n_iter=n_iter, burn_in=burn_in, n_chains=n_chains,
                           max_parents=max_parents, score=score,
                           structure_prior=structure_prior, random_state=random_state)
    tab = sampler.table.arrays()
    n = exact.shape[0]
    total = np.zeros((n, n))
    used = [0] * n_chains  # recorded orders already added, per chain
    off = ~np.eye(n, dtype=bool)
    for ev in sampler.stream(every, should_stop):
        if ev["chain"] != n_chains - 1:
            continue  # one event per round: after the last chain's
        for c in range(n_chains):
            orders, _ = sampler.recorded_orders(c)
            new = orders[used[c]:]
            if len(new):
                total += orders_edge_probabilities(tab, np.ascontiguousarray(new)).sum(axis=0)
                used[c] += len(new)
        draws = sum(used)
        if draws == 0:
            continue  # still in the burn-in
        estimate = total / draws
        err = np.abs(estimate - exact)[off]
        yield {"iteration": int(ev["iteration"]), "draws": int(draws),
               "max_abs_error": float(err.max()), "mean_abs_error": float(err.mean()),
               "estimate": estimate, "exact": exact}
