"""Speed of explaining cases under the averaged model (``bnma_core.explain``, DESIGN §15).

Run: ``.venv/bin/python benchmarks/explain.py [--quick]``. Prints one JSON line per figure
(``{"name", "value", "unit"}``); times are CPU seconds of this process (``time.process_time``,
all its threads), the best of 3 calls after one warm-up (the machine is shared: 2 cores; wall
time depends on the load, CPU time much less). Targets (after the model is fitted):

* one WBC case (row 23, one finding unknown) with ``bma10``, ``manb``, ``kbest_subbagging`` and
  ``stack`` (``DEFAULT_METHOD``: its components' models flattened, UKDB without draws): the
  prediction with both intervals (400 Dirichlet draws) + exact Shapley values + the
  next-test ranking of the unknown findings, each method <= 0.2 s; for ``stack`` also the
  time of each component's part (``stack.part.<component>.<what>_s``);
* ``stack`` on row 23 and on row 0 (nine findings, 512 coalitions) with order BMA's missing
  values summed out by node factors and, alternating in the same run, completion by
  completion as before issue 34 (``one_case*_reference_s``; the same numbers);
* one what-if change on WBC with ``DEFAULT_METHOD`` <= 0.1 s;
* exact Shapley values of 16 findings (ALARM sample: 16 features and a class) <= 2 s;
* 1,000 WBC cases with both intervals <= 10 s.

The last line is the peak resident memory of the whole run (all models loaded).
"""

from __future__ import annotations

import os
import resource
import sys
import time

import numpy as np
from _bench import emit
from _bench import timed as _wall_timed

from bnma_core import explain as E
from bnma_core.classifiers.order_bma import _OrderBMABase
from bnma_core.classifiers.registry import DEFAULT_METHOD, fit_method
from bnma_core.data import dataset_from_codes, load_dataset
from bnma_core.datasets import bundled_path
from bnma_core.explain.models import defines_joint
from bnma_core.explain.parameters import supports_draws

QUICK = "--quick" in sys.argv
FACTORS = _OrderBMABase._marginal_log_joints
REPEATS = 1 if QUICK else 3
N_DRAWS = 400


def timed(fn, repeats: int = 3) -> float:
    """CPU seconds of the best of ``repeats`` calls after one warm-up call."""
    fn()
    best = float("inf")
    for _ in range(repeats):
        c = time.process_time()
        fn()
        best = min(best, time.process_time() - c)
    return best


def one_case(est, ds, x) -> None:
    E.predict_with_uncertainty(est, x, codes=True, n_draws=N_DRAWS, train=ds)
    E.shapley_values(est, x, codes=True)
    E.next_test(est, x, codes=True)


def main() -> None:
    ds = load_dataset(bundled_path("wbc.csv"))
    x = ds.X[23].astype(np.int64)  # bare_nuclei unknown
    models = {}
    for m in ("bma10", "manb", "kbest_subbagging", "stack"):
        t0 = time.perf_counter()
        est = models[m] = fit_method(m, ds, random_state=0)
        emit(f"explain.wbc.{m}.fit_wall_s", time.perf_counter() - t0, "s")
        figures = {
            "interval": lambda est=est: E.predict_with_uncertainty(
                est, x, codes=True, n_draws=N_DRAWS, train=ds),
            "shapley": lambda est=est: E.shapley_values(est, x, codes=True),
            "next_test": lambda est=est: E.next_test(est, x, codes=True),
            "one_case": lambda est=est: one_case(est, ds, x)}
        for what, fn in figures.items():
            emit(f"explain.wbc.{m}.{what}_s", timed(fn, REPEATS), "s")
        emit(f"explain.wbc.{m}.one_case_wall_s",
             _wall_timed(lambda est=est: one_case(est, ds, x), REPEATS), "s")
    # issue 34: order BMA's missing values by node factors against the completion-by-completion
    # reference (equal numbers), alternating in this run; row 23 (8 findings) and row 0 (9)
    x9 = ds.X[0].astype(np.int64)
    for tag, impl in (("_reference", _OrderBMABase._marginal_log_joints_by_completions),
                      ("", FACTORS)):
        _OrderBMABase._marginal_log_joints = impl
        try:
            for label, case in (("", x), ("_9_findings", x9)):
                emit(f"explain.wbc.stack.one_case{label}{tag}_s",
                     timed(lambda case=case: one_case(models["stack"], ds, case), REPEATS), "s")
        finally:
            _OrderBMABase._marginal_log_joints = FACTORS
    for name, _, comp in models["stack"].stack_components():  # where the stack's time goes
        draws = N_DRAWS if supports_draws(comp) else 0  # UKDB: structure interval only
        parts = {
            "interval": lambda comp=comp, draws=draws: E.predict_with_uncertainty(
                comp, x, codes=True, n_draws=draws, train=(ds.X, ds.y)),
            "shapley": lambda comp=comp: E.shapley_values(comp, x, codes=True),
            "next_test": lambda comp=comp: E.next_test(comp, x, codes=True)
            if defines_joint(comp) else None}
        for what, fn in parts.items():
            emit(f"explain.wbc.stack.part.{name}.{what}_s", timed(fn, REPEATS), "s")
    est = models.get(DEFAULT_METHOD) or fit_method(DEFAULT_METHOD, ds, random_state=0)
    change = [{ds.feature_names[0]: 0}]
    emit(f"explain.wbc.{DEFAULT_METHOD}.what_if_structure_s",
         timed(lambda: E.what_if(est, x, change, codes=True), REPEATS), "s")
    emit(f"explain.wbc.{DEFAULT_METHOD}.what_if_both_intervals_s",
         timed(lambda: E.what_if(est, x, change, codes=True, n_draws=N_DRAWS, train=ds),
               REPEATS), "s")
    rows = np.random.default_rng(0).integers(0, ds.n_rows, 1000)
    Xb = ds.X[rows].astype(np.int64)
    emit(f"explain.wbc.{DEFAULT_METHOD}.1000_cases_both_intervals_s",
         timed(lambda: E.predict_with_uncertainty(est, Xb, codes=True, n_draws=N_DRAWS,
                                                  train=ds), REPEATS), "s")
    # 16 findings: ALARM sample, 16 features and a class
    from bnma_core.network import load_network

    bn = load_network("alarm")
    D = bn.sample_codes(2000, seed=0)[:, :17]
    names = bn.names[:17]
    big = dataset_from_codes(D, names, bn.arities[:17], class_index=16,
                             states=[bn.states[i] for i in range(17)])
    case = big.X[0].astype(np.int64)
    for m in ("nb", "tan", "aode", "manb"):
        est = fit_method(m, big)
        emit(f"explain.alarm16.{m}.exact_shapley_16_s",
             timed(lambda est=est: E.shapley_values(est, case, codes=True),
                   REPEATS), "s")

    emit("explain.peak_rss_mb", resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, "MB")
    emit("explain.load_average_1min", os.getloadavg()[0], "")


if __name__ == "__main__":
    main()
