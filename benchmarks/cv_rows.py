"""Cross-validation on many rows (issue 15): 5-fold CV of ``nb``, ``tan`` and ``bma10`` on
500,000 forward samples of ALARM (class BP, 36 features), the data as coded
(``DiscreteBN.sample``). Target: <= 60 s for the three together.

Run: ``PYTHONPATH=. .venv/bin/python benchmarks/cv_rows.py [n_rows]``. Prints per method the
summed fit and predict seconds of the folds (wall, from ``cross_validate``'s table), the whole
run's process CPU seconds and wall seconds, and the peak resident memory. The numba kernels are
compiled / loaded first on a small run.
"""

from __future__ import annotations

import resource
import sys
import time

from _bench import emit

from bnma_core.evaluation import cross_validate
from bnma_core.network import load_network

METHODS = ["nb", "tan", "bma10"]


def main(n_rows: int = 500_000) -> None:
    net = load_network("alarm")
    cross_validate(net.sample(2000, 1, class_variable="BP"), METHODS, folds=2)  # compile
    ds = net.sample(n_rows, 0, class_variable="BP")
    c0, w0 = time.process_time(), time.perf_counter()
    res = cross_validate(ds, METHODS, folds=5)
    cpu, wall = time.process_time() - c0, time.perf_counter() - w0
    for m, g in res.groupby("method", sort=False):
        emit(f"cv5_{n_rows}.{m}.fit_seconds", g["fit_time_s"].sum(), "s", 2)
        emit(f"cv5_{n_rows}.{m}.predict_seconds", g["predict_time_s"].sum(), "s", 2)
        emit(f"cv5_{n_rows}.{m}.accuracy", g["accuracy"].mean(), "", 4)
    emit(f"cv5_{n_rows}.total_cpu_seconds", cpu, "s", 1)
    emit(f"cv5_{n_rows}.total_wall_seconds", wall, "s", 1)
    emit(f"cv5_{n_rows}.peak_rss_mb",
         resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e3, "MB", 0)


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 500_000)
