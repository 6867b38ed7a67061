"""Import time and memory of ``bnma_core`` (targets: under 2 s; resident memory after importing
the order-BMA module under 150 MB, issue 15).

Run: ``.venv/bin/python benchmarks/import_time.py``. Prints one JSON line per figure.
Each time is the median of 5 fresh interpreter starts; ``*_rss_mb`` is the peak resident
memory of a fresh interpreter after the import, and ``rss_steps`` the increase of each
dependency imported in turn (what the order-BMA module's memory is made of).
"""

from __future__ import annotations

import statistics
import subprocess
import sys

from _bench import emit

MODULES = {
    "import_bnma_core_s": "import bnma_core",
    "import_bnma_core_all_s": (
        "import bnma_core.data, bnma_core.scores, bnma_core.classifiers.registry, bnma_core.viz"
    ),
}


def measure(stmt: str, repeats: int = 5) -> float:
    code = f"import time; t = time.perf_counter(); {stmt}; print(time.perf_counter() - t)"
    times = [float(subprocess.check_output([sys.executable, "-c", code], text=True))
             for _ in range(repeats)]
    return statistics.median(times)


RSS_MODULES = {
    "python": "pass",
    "bnma_core": "import bnma_core",
    "order_bma": "import bnma_core.classifiers.order_bma",
    "registry": "import bnma_core.classifiers.registry",
}
STEPS = ["numpy", "pandas", "numba", "scipy.special", "networkx", "sklearn.base",
         "bnma_core.classifiers.order_bma"]


def rss_mb(stmt: str) -> float:
    code = (f"import resource; {stmt}; "
            "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e3)")
    return float(subprocess.check_output([sys.executable, "-c", code], text=True))


def rss_steps() -> None:
    code = ("import importlib, resource\n"
            "def r(): return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e3\n"
            f"prev = r()\nfor m in {STEPS!r}:\n"
            "    importlib.import_module(m); now = r(); print(m, now - prev); prev = now\n")
    for line in subprocess.check_output([sys.executable, "-c", code], text=True).splitlines():
        mod, mb = line.split()
        emit(f"rss_step.{mod}_mb", float(mb), "MB", 1)


if __name__ == "__main__":
    for name, stmt in MODULES.items():
        emit(name, measure(stmt), "s", digits=3)
    for name, stmt in RSS_MODULES.items():
        emit(f"{name}_rss_mb", rss_mb(stmt), "MB", 1)
    rss_steps()
