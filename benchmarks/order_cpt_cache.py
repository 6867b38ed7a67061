"""Order BMA predicting from CPTs counted once per score table (``ScoreTable.cpt_cache``,
issue 34) against counting every CPT at every kernel call, as before: both in this one run,
alternating (the "counting" side has ``ScoreTable.cpt_cache`` return the empty cache, so every
kernel counts its CPTs from the training rows, the former code path; the numbers are the same,
tested in ``tests/classifiers/test_order_bma_cpt_cache.py``).

Run: ``PYTHONPATH=. .venv/bin/python benchmarks/order_cpt_cache.py [--quick]``. Prints one JSON
line per figure; CPU seconds of this process (``time.process_time``), the best of ``REPEATS``:

* ``vote`` (``shared/data``, ``BNMA_SHARED_DATA``; skipped when absent), ``bma10``:
  ``predict_log_proba`` of its 203 rows with a missing value and of its 124 rows with exactly
  one, warm (the cache built by an earlier call) and first call on the fitted model (the
  cache built in it);
* complete rows, first call and warm: WBC (683 rows) and an ALARM sample (500 rows, class BP);
* one WBC case explained with ``stack`` (interval with 400 draws, Shapley values, next test;
  ``benchmarks/explain.py``'s ``one_case``), row 23 and row 0 (nine findings).

The last line is the 1-minute load average at the end.
"""

from __future__ import annotations

import os
import pickle
import sys
import time
from pathlib import Path

import numpy as np
from _bench import emit

from bnma_core import explain as E
from bnma_core.classifiers.registry import fit_method
from bnma_core.data import dataset_from_codes, load_dataset
from bnma_core.datasets import bundled_path
from bnma_core.kernels.orders import no_cpt_cache
from bnma_core.structure.score_table import ScoreTable

QUICK = "--quick" in sys.argv
REPEATS = 1 if QUICK else 5
CACHED = ScoreTable.cpt_cache


def _counting(on: bool) -> None:
    """Every kernel counts its CPTs (the code before the cache) when ``on``."""
    ScoreTable.cpt_cache = (lambda self, orders: no_cpt_cache()) if on else CACHED


def _best(fn, fresh=None) -> float:
    """Best CPU seconds of ``fn(model)`` over ``REPEATS`` calls; with ``fresh`` each call gets
    a new copy of that model without a cache (its first prediction), else ``fn()`` warm."""
    best = float("inf")
    for _ in range(REPEATS):
        arg = pickle.loads(pickle.dumps(fresh)) if fresh is not None else None
        c = time.process_time()
        fn(arg) if fresh is not None else fn()
        best = min(best, time.process_time() - c)
    return best


def _ab(name: str, fn, model=None) -> None:
    """``name``'s figure with counting and with the cache, alternating, and their ratio."""
    out = {}
    for side in ("counting", "cached", "counting", "cached"):
        _counting(side == "counting")
        try:
            if model is None:
                fn()  # warm-up: numba, and the cache when on
            t = _best(fn, model)
        finally:
            _counting(False)
        out[side] = min(out.get(side, float("inf")), t)
    emit(f"{name}.counting_s", out["counting"], "s")
    emit(f"{name}.cached_s", out["cached"], "s")
    emit(f"{name}.speedup", out["counting"] / out["cached"], "x")


def _network_data(net: str, cls: str, n_rows: int):
    from bnma_core.network import load_network

    bn = load_network(net)
    D = bn.sample_codes(n_rows, seed=0)
    return dataset_from_codes(D, bn.names, bn.arities, class_index=bn.names.index(cls),
                              states=[bn.states[i] for i in range(len(bn.names))])


def one_case(est, ds, x) -> None:
    E.predict_with_uncertainty(est, x, codes=True, n_draws=400, train=ds)
    E.shapley_values(est, x, codes=True)
    E.next_test(est, x, codes=True)


def main() -> None:
    shared = Path(os.environ.get("BNMA_SHARED_DATA",
                                 Path(__file__).resolve().parents[2] / "shared" / "data"))
    if (shared / "vote.csv").is_file():
        ds = load_dataset(shared / "vote.csv")
        est = fit_method("bma10", ds, random_state=0)
        n_miss = (ds.X < 0).sum(axis=1)
        for label, rows in (("incomplete_203", ds.X[n_miss > 0]),
                            ("one_missing_124", ds.X[n_miss == 1])):
            _ab(f"cpt_cache.vote.{label}", lambda rows=rows: est.predict_log_proba(rows))
            _ab(f"cpt_cache.vote.{label}.first_call",
                lambda m, rows=rows: m.predict_log_proba(rows), est)
    for label, ds in (("wbc", load_dataset(bundled_path("wbc.csv"))),
                      ("alarm500", _network_data("alarm", "BP", 500))):
        est = fit_method("bma10", ds, random_state=0)
        X = ds.X[(ds.X >= 0).all(axis=1)]
        _ab(f"cpt_cache.{label}.complete_{len(X)}", lambda est=est, X=X: est.predict_log_proba(X))
        _ab(f"cpt_cache.{label}.complete_{len(X)}.first_call",
            lambda m, X=X: m.predict_log_proba(X), est)
    ds = load_dataset(bundled_path("wbc.csv"))
    stack = fit_method("stack", ds, random_state=0)
    for row in (23, 0):
        x = ds.X[row].astype(np.int64)
        _ab(f"cpt_cache.wbc.stack.one_case_row{row}", lambda x=x: one_case(stack, ds, x))
    emit("cpt_cache.load_average_1min", os.getloadavg()[0], "")


if __name__ == "__main__":
    main()
