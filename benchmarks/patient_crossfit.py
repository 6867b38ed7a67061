"""A new case within a second (issue 34 item 2): the Patient page with "Leave this case out of
training" on, the default method, WBC, in AppTest (the page's own code, no browser).

Prints: the first result after choosing the method (one fold model, the shown row's, then the
explanation: wall and this process's CPU seconds), the time until all K fold models are in,
and the rerun after a row change once they are (p50 / p95 over ``--rows`` rows: no fit, only
the explanation). Before cross-fitting every row change refitted the method (one fit on all
rows but one: printed as ``refit_per_row``, the cost each row change had). Load average
beside.

The row changes are measured twice in the same run, alternating row by row (the page's
result cache cleared before each): with order BMA's missing values summed out by node factors
(``row_change_*``, :meth:`OrderMCMCBMA._marginal_log_joints`, issue 34) and completion by
completion as before (``row_change_reference_*``,
:meth:`OrderMCMCBMA._marginal_log_joints_by_completions`; equal numbers). Usage:

    PYTHONPATH=. .venv/bin/python benchmarks/patient_crossfit.py [--method stack] [--rows 20]
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np
import streamlit.testing.v1 as st_testing
from _bench import emit

from bnma_core.classifiers.order_bma import _OrderBMABase
from bnma_core.classifiers.registry import DEFAULT_METHOD, fit_method
from bnma_core.data import load_dataset
from bnma_core.datasets import bundled_path

RUN_KEY = "patient_fit__bnma_bg"
RESULTS_KEY = "_patient_results"
FACTORS = _OrderBMABase._marginal_log_joints
REFERENCE = _OrderBMABase._marginal_log_joints_by_completions
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--method", default=DEFAULT_METHOD)
    p.add_argument("--rows", type=int, default=20)
    args = p.parse_args(argv)
    ds = load_dataset(bundled_path("wbc.csv"))
    print(f"# load average {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f}", flush=True)
    fit_method(args.method, ds, np.arange(50), random_state=0)  # kernels loaded (warm server)
    c0 = time.process_time()
    t0 = time.perf_counter()
    fit_method(args.method, ds, np.arange(1, ds.n_rows), random_state=0)
    emit(f"patient_{args.method}_refit_per_row_wall", time.perf_counter() - t0, "s")
    emit(f"patient_{args.method}_refit_per_row_cpu", time.process_time() - c0, "s")

    at = st_testing.AppTest.from_file(os.path.join(ROOT, "app.py"), default_timeout=600)
    at.switch_page("pages/3_Patient.py")
    at.session_state["bnma_dataset"] = ds
    at.session_state["bnma_dataset_label"] = "wbc.csv"
    at.session_state["pt_method"] = args.method
    at.session_state["pt_row"] = 23
    c0, t0 = time.process_time(), time.perf_counter()
    at.run()
    run = at.session_state[RUN_KEY]
    cf = run.meta["crossfit"]
    pos = ds.position_of_row(23)
    tick = __import__("threading").Event()
    while cf.model_for(pos) is None and not run.done:  # the page's fragment waits for this
        tick.wait(0.05)
    at.run()  # the rerun the fragment triggers: the explanation
    emit(f"patient_{args.method}_first_result_wall", time.perf_counter() - t0, "s")
    emit(f"patient_{args.method}_first_result_cpu", time.process_time() - c0, "s")
    assert at.session_state["_patient_results"], "no explanation shown"
    run.wait(3600)
    emit(f"patient_{args.method}_all_folds_wall", time.perf_counter() - t0, "s")
    emit(f"patient_{args.method}_all_folds_cpu", time.process_time() - c0, "s")
    at.run()
    times = {"": [], "_reference": []}
    cpu = {"": [], "_reference": []}
    rng = np.random.default_rng(0)
    try:
        for row in rng.choice(ds.row_ids, size=args.rows, replace=False):
            for tag, impl in (("_reference", REFERENCE), ("", FACTORS)):
                _OrderBMABase._marginal_log_joints = impl
                at.session_state[RESULTS_KEY] = {}
                t, c = time.perf_counter(), time.process_time()
                at.number_input(key="pt_row").set_value(int(row)).run()
                times[tag].append(time.perf_counter() - t)
                cpu[tag].append(time.process_time() - c)
                assert at.session_state[RUN_KEY] is run and not at.exception
    finally:
        _OrderBMABase._marginal_log_joints = FACTORS
    for tag in ("_reference", ""):
        name = f"patient_{args.method}_row_change{tag}"
        emit(f"{name}_p50", float(np.percentile(times[tag], 50)), "s")
        emit(f"{name}_p95", float(np.percentile(times[tag], 95)), "s")
        emit(f"{name}_cpu_p50", float(np.percentile(cpu[tag], 50)), "s")
        emit(f"{name}_cpu_p95", float(np.percentile(cpu[tag], 95)), "s")
    print(f"# load average after {os.getloadavg()[0]:.2f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
