"""Cross-validation on the grid engine: 1 worker (in this process) against 2 Dask workers.

ALARM, 20,000 forward samples (seed 0, class BP, 36 features, the data as coded), 8 methods
× 10 stratified folds through :func:`bnma_core.evaluation.cross_validate`: ``workers=1`` fits
in this process; ``workers=2`` starts a local Dask cluster of two single-threaded worker
processes (start-up, imports and the workers' first calls of the numba kernels included);
``warm 2`` runs on a cluster started beforehand whose workers ran the same small compile step
as this process, so it compares the fits alone. The per-fold tables of the three runs must be
equal (timing columns aside), which the script checks.

    PYTHONPATH=. .venv/bin/python benchmarks/cv_dask.py [--quick] [--rows N] [--folds K]

``--quick``: 2,000 rows and 3 folds (about a minute). Prints one JSON line per figure (wall
and CPU seconds of this process; the workers' CPU is not in the latter), the speed-up, and the
summed fit seconds per method of the serial run. On a machine whose cores are shared, the
speed-up is bounded by the free cores, not by the engine.
"""

from __future__ import annotations

import argparse
import logging
import time

import pandas as pd
from _bench import emit

from bnma_core.evaluation import cross_validate
from bnma_core.network import load_network

METHODS = ["nb", "tan", "kdb2", "aode", "manb", "fobma", "bma10", "ukdb"]
TIMING = ["fit_time_s", "predict_time_s"]


def _compile() -> None:
    """Load every kernel the methods use (from numba's cache): a small run, in each process."""
    net = load_network("alarm")
    cross_validate(net.sample(500, 1, class_variable="BP"), METHODS, folds=2)


def _run(ds, folds: int, **engine) -> tuple[float, float, pd.DataFrame]:
    w, c = time.perf_counter(), time.process_time()
    res = cross_validate(ds, METHODS, folds=folds, seed=1, **engine)
    return time.perf_counter() - w, time.process_time() - c, res


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="2,000 rows, 3 folds")
    ap.add_argument("--rows", type=int, default=None)
    ap.add_argument("--folds", type=int, default=None)
    a = ap.parse_args()
    rows = a.rows or (2_000 if a.quick else 20_000)
    folds = a.folds or (3 if a.quick else 10)
    tag = f"cv_dask.alarm{rows}_{len(METHODS)}m_{folds}f"

    _compile()
    ds = load_network("alarm").sample(rows, 0, class_variable="BP")

    w1, c1, serial = _run(ds, folds, workers=1)
    emit(f"{tag}.workers1_wall_s", w1, "s", 1)
    emit(f"{tag}.workers1_cpu_s", c1, "s", 1)
    for m, g in serial.groupby("method", sort=False):
        emit(f"{tag}.workers1.{m}.fit_s", g["fit_time_s"].sum(), "s", 2)

    w2, c2, two = _run(ds, folds, workers=2)
    emit(f"{tag}.workers2_wall_s", w2, "s", 1)
    emit(f"{tag}.workers2_client_cpu_s", c2, "s", 1)
    emit(f"{tag}.speedup_2_vs_1", w1 / w2, "x", 2)

    from dask.distributed import Client, LocalCluster

    t = time.perf_counter()
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                      dashboard_address="127.0.0.1:0", silence_logs=logging.CRITICAL) as lc, \
            Client(lc) as client:
        emit(f"{tag}.cluster_start_s", time.perf_counter() - t, "s", 1)
        t = time.perf_counter()
        client.run(_compile)
        emit(f"{tag}.workers_compile_step_s", time.perf_counter() - t, "s", 1)
        w3, _, warm = _run(ds, folds, scheduler=lc.scheduler_address)
    emit(f"{tag}.warm2_wall_s", w3, "s", 1)
    emit(f"{tag}.speedup_warm2_vs_1", w1 / w3, "x", 2)

    for other in (two, warm):
        pd.testing.assert_frame_equal(serial.drop(columns=TIMING), other.drop(columns=TIMING))
    emit(f"{tag}.same_results", 1, "bool", 0)


if __name__ == "__main__":
    main()
