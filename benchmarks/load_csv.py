"""CSV loading against pandas (issue 15, many rows): ``load_dataset`` beside ``pandas.read_csv``
on the same 500,000 x 37 CSV (forward samples of ALARM, written to a temporary folder).

Run: ``PYTHONPATH=. .venv/bin/python benchmarks/load_csv.py [n_rows]``. Prints, best of
``REPEATS`` runs taken interleaved: process CPU seconds and wall seconds of
``pandas.read_csv(path)`` (default typing), of ``pandas.read_csv(path, dtype=str)`` (text, as
a loader that keeps labels must read it) and of ``load_dataset(path)``, and the ratios
``load_dataset / read_csv``. Target: at most 2x ``read_csv``.
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

import pandas as pd
from _bench import emit

from bnma_core.data import load_dataset
from bnma_core.network import load_network

REPEATS = 3


def write_csv(path: Path, n_rows: int) -> None:
    net = load_network("alarm")
    codes = net.sample_codes(n_rows, seed=0)
    pd.DataFrame({name: pd.Categorical.from_codes(codes[:, i], net.states[i])
                  for i, name in enumerate(net.names)}).to_csv(path, index=False)


def _time(fn) -> tuple[float, float]:
    c0, w0 = time.process_time(), time.perf_counter()
    fn()
    return time.process_time() - c0, time.perf_counter() - w0


def main(n_rows: int = 500_000) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "alarm.csv"
        write_csv(path, n_rows)
        emit("csv_mb", path.stat().st_size / 1e6, "MB", 1)
        runs = {"read_csv": lambda: pd.read_csv(path),
                "read_csv_str": lambda: pd.read_csv(path, dtype=str),
                "load_dataset": lambda: load_dataset(path)}
        best = {k: (float("inf"), float("inf")) for k in runs}
        for _ in range(REPEATS):
            for k, fn in runs.items():
                cpu, wall = _time(fn)
                best[k] = (min(best[k][0], cpu), min(best[k][1], wall))
        for k, (cpu, wall) in best.items():
            emit(f"{k}.cpu_seconds", cpu, "s", 3)
            emit(f"{k}.wall_seconds", wall, "s", 3)
        emit("load_dataset_over_read_csv.cpu", best["load_dataset"][0] / best["read_csv"][0],
             "ratio", 2)
        emit("load_dataset_over_read_csv.wall", best["load_dataset"][1] / best["read_csv"][1],
             "ratio", 2)
        emit("load_dataset_over_read_csv_str.cpu",
             best["load_dataset"][0] / best["read_csv_str"][0], "ratio", 2)


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 500_000)
