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

__all__ = ["lesson_dataset", "step_sampler", "exact_convergence"]

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
