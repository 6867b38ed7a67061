"""Speed of order-BMA prediction with missing findings (DESIGN §4: barren variables dropped,
the rest enumerated, Monte Carlo only beyond ``max_missing_states``).

Run: ``.venv/bin/python benchmarks/order_bma_missing.py [--quick]``. Prints one JSON line per
figure (``{"name", "value", "unit"}``); times are wall seconds, the best of 3 calls after one
warm-up (the machine is shared: 2 cores). Figures, with ``bma10`` fitted on WBC (seed 0):

* ``predict_proba`` of the 2^9 Shapley coalition rows of one case (row 23; every subset of its
  findings kept, the others unknown);
* the explain figure of that case: interval (400 Dirichlet draws) + exact Shapley values +
  next-test ranking (as ``benchmarks/explain.py``'s ``one_case``);
* ``predict_proba`` of all 683 complete WBC rows (the complete-data path);
* how many of the 512 coalition rows the Monte Carlo fallback estimated.
"""

from __future__ import annotations

import itertools
import math
import sys
import time

import numpy as np
from _bench import emit, timed

from bnma_core import explain as E
from bnma_core.classifiers.registry import fit_method
from bnma_core.data import load_dataset
from bnma_core.datasets import bundled_path

QUICK = "--quick" in sys.argv
REPEATS = 1 if QUICK else 3
N_DRAWS = 400


def cpu_timed(fn, repeats: int) -> float:
    """CPU seconds of the process (all threads) per call, the best of ``repeats`` after one
    warm-up: less sensitive than wall time to other jobs on the shared machine."""
    fn()
    best = math.inf
    for _ in range(repeats):
        t = time.process_time()
        fn()
        best = min(best, time.process_time() - t)
    return best


def coalition_rows(x: np.ndarray) -> np.ndarray:
    """Every subset of the observed findings of ``x`` kept, the rest set to -1 (2^N rows)."""
    obs = np.nonzero(x >= 0)[0]
    rows = []
    for bits in itertools.product((False, True), repeat=len(obs)):
        r = np.full_like(x, -1)
        keep = obs[np.asarray(bits, dtype=bool)]
        r[keep] = x[keep]
        rows.append(r)
    return np.asarray(rows)


def main() -> None:
    ds = load_dataset(bundled_path("wbc.csv"))
    x = ds.X[23].astype(np.int64)  # bare_nuclei unknown: 9 findings
    est = fit_method("bma10", ds, random_state=0)
    C = coalition_rows(x)
    emit("order_bma_missing.wbc.bma10.coalition_rows", len(C), "rows", 0)
    emit("order_bma_missing.wbc.bma10.predict_coalitions_s",
         timed(lambda: est.predict_proba(C), REPEATS), "s")
    emit("order_bma_missing.wbc.bma10.predict_coalitions_cpu_s",
         cpu_timed(lambda: est.predict_proba(C), REPEATS), "s")
    if hasattr(est, "missing_value_paths"):
        paths = est.missing_value_paths(C, codes=True)
        for what in ("barren", "exact", "monte_carlo"):
            emit(f"order_bma_missing.wbc.bma10.coalition_row_orders_{what}",
                 int((paths == what).sum()), "(row, order) pairs", 0)
    else:  # before: one decision per row, Monte Carlo beyond max_missing_states
        states = np.prod(np.where(C < 0, est.arities_[None, :], 1).astype(float), axis=1)
        emit("order_bma_missing.wbc.bma10.coalition_row_orders_monte_carlo",
             int((states > est.max_missing_states).sum()) * len(est._orders_),
             "(row, order) pairs", 0)
    def one_case() -> None:
        E.predict_with_uncertainty(est, x, codes=True, n_draws=N_DRAWS, train=ds)
        E.shapley_values(est, x, codes=True)
        E.next_test(est, x, codes=True)

    emit("order_bma_missing.wbc.bma10.explain_one_case_s", timed(one_case, REPEATS), "s")
    emit("order_bma_missing.wbc.bma10.explain_one_case_cpu_s", cpu_timed(one_case, REPEATS),
         "s")
    full = ds.X[(ds.X >= 0).all(axis=1)]
    emit("order_bma_missing.wbc.bma10.predict_complete_rows",
         len(full), "rows", 0)
    emit("order_bma_missing.wbc.bma10.predict_complete_s",
         timed(lambda: est.predict_proba(full), max(REPEATS, 5)), "s")
    emit("order_bma_missing.wbc.bma10.predict_complete_cpu_s",
         cpu_timed(lambda: est.predict_proba(full), max(REPEATS, 5)), "s")


if __name__ == "__main__":
    main()
