"""Dask overhead of the reproduction runner (issue 17) on the smallest grid.

Runs the ``smoke`` paper's cells (a seeded Monte Carlo mean: microseconds of work) through
:func:`bnma_core.reproduce.run_grid` in this process and on a local Dask cluster, so the time
per cell is almost all overhead: task submission, transfer, result gathering and the atomic
Parquet write of the store.

    PYTHONPATH=. .venv/bin/python benchmarks/dask_overhead.py [--cells 200]
    PYTHONPATH=. .venv/bin/python benchmarks/dask_overhead.py --store-only [--store DIR]

Prints one JSON line per figure: cluster start-up, per-cell wall time serially (store write
included) and with 1 and 2 workers, and the Dask overhead per cell (Dask minus serial); then
the store's reading at many cells: a copy of the cell files of ``--store`` (a paper folder of
a results store, e.g. a finished dash2002 run, 27,400 cells) or ``--store-cells`` synthetic
ones, read the former way (one ``pq.read_table`` per file), with one ``pyarrow.dataset`` scan,
compacted (time of :meth:`ResultStore.compact`) and read from the one part file. CPU seconds
are printed beside wall seconds (the machine is shared).
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
import time
from pathlib import Path

from _bench import emit

from bnma_core.reproduce import run_grid, smoke


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cells", type=int, default=200)
    ap.add_argument("--store", default=None, help="a paper folder of a results store")
    ap.add_argument("--store-cells", type=int, default=2000,
                    help="synthetic cells when --store is not given")
    ap.add_argument("--store-only", action="store_true", help="only the store figures")
    a = ap.parse_args()
    if not a.store_only:
        dask_figures(a.cells)
    store_figures(a.store, a.store_cells)


def _both(fn) -> tuple[float, float, object]:
    t, c = time.perf_counter(), time.process_time()
    out = fn()
    return time.perf_counter() - t, time.process_time() - c, out


def store_figures(source: str | None, n_cells: int) -> None:
    """Reading a store of many cells: per-file, one dataset scan, compaction, compacted."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from bnma_core.reproduce import ResultStore

    with tempfile.TemporaryDirectory() as tmp:
        st = ResultStore(tmp, "bench")
        if source:
            src = Path(source)
            for f in sorted((src / "cells").glob("*.parquet")):
                shutil.copyfile(f, st.cells_dir / f.name)
            for f in sorted((src / "compact").glob("part-*.parquet")):
                shutil.copyfile(f, st.compact_dir / f.name)
        else:
            w, c, _ = _both(lambda: [st.append({
                "key_id": f"{i:016x}", "key": {"i": i}, "result": {"R": 0.5, "delta": 0.01},
                "seconds": 0.1, "cpu_seconds": 0.1, "worker": "w", "run_id": "r",
                "code_version": "v", "machine": "m"}) for i in range(n_cells)])
            emit("reproduce.store_append_per_cell", 1000 * w / n_cells, "ms")
        n = len(st.done_ids())
        emit("reproduce.store_cells", n, "cells", 0)
        files = sorted(st.cells_dir.glob("*.parquet"))
        w, c, _ = _both(lambda: pa.concat_tables([pq.read_table(f) for f in files],
                                                 promote_options="default"))
        emit("reproduce.store_read_per_file_s", w, "s", 2)
        emit("reproduce.store_read_per_file_cpu_s", c, "s", 2)
        w, c, df = _both(st.cells)
        assert len(df) == n
        emit("reproduce.store_read_dataset_s", w, "s", 2)
        emit("reproduce.store_read_dataset_cpu_s", c, "s", 2)
        w, c, _ = _both(st.compact)
        emit("reproduce.store_compact_s", w, "s", 2)
        emit("reproduce.store_compact_cpu_s", c, "s", 2)
        w, c, df = _both(st.cells)
        assert len(df) == n
        emit("reproduce.store_read_compacted_s", w, "s", 3)
        emit("reproduce.store_read_compacted_cpu_s", c, "s", 3)
        w, c, ids = _both(st.done_ids)
        assert len(ids) == n
        emit("reproduce.store_done_ids_compacted_s", w, "s", 3)


def dask_figures(n_cells: int) -> None:
    keys = smoke.grid(n=n_cells)
    from dask.distributed import Client, LocalCluster

    with tempfile.TemporaryDirectory() as tmp:
        t = time.perf_counter()
        run_grid("smoke", tmp, keys=keys, workers=0, fresh=True)
        serial = (time.perf_counter() - t) / n_cells
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
                    best = min(best, (time.perf_counter() - t) / n_cells)
            emit(f"reproduce.dask_per_cell_{n}w", 1000 * best, "ms")
            emit(f"reproduce.dask_overhead_per_cell_{n}w", 1000 * (best - serial), "ms")


if __name__ == "__main__":
    main()
