"""Dask overhead of the reproduction runner (issue 17) on the smallest grid.

Runs the ``smoke`` paper's cells (a seeded Monte Carlo mean: microseconds of work) through
:func:`bnma_core.reproduce.run_grid` in this process and on a local Dask cluster, so the time
per cell is almost all overhead: task submission, transfer, result gathering and the atomic
Parquet write of the store.

    PYTHONPATH=. .venv/bin/python benchmarks/dask_overhead.py [--cells 200]

Prints one JSON line per figure: cluster start-up, per-cell wall time serially (store write
included) and with 1 and 2 workers, and the Dask overhead per cell (Dask minus serial).
"""

from __future__ import annotations

import argparse
import tempfile
import time

from _bench import emit

from bnma_core.reproduce import run_grid, smoke


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cells", type=int, default=200)
    a = ap.parse_args()
    keys = smoke.grid(n=a.cells)
    from dask.distributed import Client, LocalCluster

    with tempfile.TemporaryDirectory() as tmp:
        t = time.perf_counter()
        run_grid("smoke", tmp, keys=keys, workers=0, fresh=True)
        serial = (time.perf_counter() - t) / a.cells
        emit("reproduce.serial_per_cell", 1000 * serial, "ms")
        for n in (1, 2):
            t = time.perf_counter()
            with LocalCluster(n_workers=n, threads_per_worker=1, processes=True,
                              dashboard_address=":0", silence_logs=50) as lc, Client(lc) as c:
                c.run(lambda: __import__("bnma_core.reproduce.smoke"))  # imports, once
                emit(f"reproduce.cluster_start_{n}w", time.perf_counter() - t, "s", 2)
                best = float("inf")
                for _ in range(3):
                    t = time.perf_counter()
                    run_grid("smoke", tmp, keys=keys, scheduler=lc.scheduler_address,
                             fresh=True)
                    best = min(best, (time.perf_counter() - t) / a.cells)
            emit(f"reproduce.dask_per_cell_{n}w", 1000 * best, "ms")
            emit(f"reproduce.dask_overhead_per_cell_{n}w", 1000 * (best - serial), "ms")


if __name__ == "__main__":
    main()
