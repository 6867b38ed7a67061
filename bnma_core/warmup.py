"""Compile every numba kernel once, ahead of the first real fit.

numba compiles a kernel on its first call (seconds each; ~10 s for the order-BMA methods) and,
with ``cache=True``, keeps the machine code on disk next to the package. Running this module
once after installing (``python -m bnma_core.warmup``; ``make venv`` does it) or in a background
thread when the dashboard starts means that the first fit a user times measures the method, not
the compiler. Every registered method is fitted on a small slice of the bundled WBC data with a
few missing values (so the missing-value paths compile too) and asked for class posteriors; a
bundled network is sampled and queried.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable

import numpy as np

# small settings for methods whose defaults would make the warm-up slow
_SMALL = {"n_iter": 300, "burn_in": 50, "n_orders": 2, "k": 3, "n_subsamples": 2,
          "n_estimators": 2, "n_init": 2}

_state: dict[str, object] = {"done": False, "seconds": None, "error": None}


def _small_data() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    from .data import load_dataset
    from .datasets import bundled_path

    ds = load_dataset(bundled_path("wbc.csv"), missing="keep")
    rows = np.r_[np.flatnonzero(ds.missing_mask().any(axis=1))[:4], np.arange(80)]
    X, y = ds.X[rows].copy(), ds.y[rows].copy()
    return X, y, ds.arities[ds.feature_indices]


def warm_up(progress: Callable[[str, float], None] | None = None) -> dict[str, float]:
    """Fit and query every registered method once on small data; returns seconds per method.

    A method that fails here is reported in the result as ``nan`` (the warm-up must never stop
    a program from starting); its error surfaces on first real use with a proper message.
    """
    from .classifiers.registry import METHODS, make_classifier
    from .network import load_network
    from .structure.exact import edge_posteriors

    X, y, arities = _small_data()
    times: dict[str, float] = {}
    for name, spec in METHODS.items():
        t0 = time.perf_counter()
        try:
            params = {k: v for k, v in _SMALL.items() if k in spec.defaults}
            est = make_classifier(name, **params)
            if "random_state" in est.get_params():  # the same warm-up on every machine
                est.set_params(random_state=0)
            est.fit(X, y, arities=arities)
            est.predict_proba(X[:10])
            times[name] = time.perf_counter() - t0
        except Exception:  # noqa: BLE001 - reported as nan, see docstring
            times[name] = float("nan")
        if progress is not None:
            progress(name, times[name])
    t0 = time.perf_counter()
    bn = load_network("asia")
    codes = bn.sample_codes(50, seed=0)
    codes[::7, 0] = -1
    bn.class_posterior(bn.n_vars - 1, codes)
    edge_posteriors(codes, bn.arities)  # the exact order-modular DP (kernels.order_dp)
    times["network"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    _warm_dashboard_paths(codes, bn.arities)
    times["dashboard"] = time.perf_counter() - t0
    return times


def _warm_dashboard_paths(codes: np.ndarray, arities: np.ndarray) -> None:
    """The paths the dashboard uses beyond ``fit``: order-MCMC step mode (move records, the
    best network of an order), the edge traces and ArviZ diagnostics of 4 chains, the exact
    edge posteriors beside a sampler (lesson 2 of the Teach page) and the structural Hamming
    distance. Without this, a class's first step took seconds of compilation."""
    from .structure.distance import structural_hamming_distance
    from .structure.exact import edge_posteriors
    from .structure.orders import OrderMCMC
    from .structure.score_table import build_score_table

    for prior in ("hz", "uniform"):
        table = build_score_table(np.where(codes < 0, 0, codes), arities, max_parents=3,
                                  prior=prior)
        mcmc = OrderMCMC(table, n_iter=80, burn_in=10, n_orders=5, n_chains=4,
                         random_state=0, trace_every=1)
        mcmc.step(1)
        mcmc.step(10)
        mcmc.run()
        mcmc.diagnostics()  # edge traces (orders_edge_probabilities) and arviz_stats
    complete = np.where(codes < 0, 0, codes)
    edge_posteriors(complete, arities, structure_prior="uniform")  # the complete-data route
    import networkx as nx

    structural_hamming_distance(nx.DiGraph([(0, 1)]), nx.DiGraph([(1, 0)]))


def warm_up_once() -> None:
    """:func:`warm_up` for a background thread at application start: runs once per process
    and records whether it has finished (:func:`status`)."""
    if _state["done"]:
        return
    t0 = time.perf_counter()
    try:
        warm_up()
    except Exception as exc:  # noqa: BLE001 - never stop the app from starting
        _state["error"] = repr(exc)
    _state["seconds"] = time.perf_counter() - t0
    _state["done"] = True


def status() -> dict[str, object]:
    """``{"done": bool, "seconds": float | None, "error": str | None}`` of this process's
    warm-up."""
    return dict(_state)


def main() -> int:
    t0 = time.perf_counter()

    def show(name: str, seconds: float) -> None:
        print(f"  {name:10s} {seconds:6.2f} s", flush=True)

    print("Compiling the numba kernels (once; cached on disk)...", flush=True)
    warm_up(show)
    print(f"done in {time.perf_counter() - t0:.1f} s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
