"""Import time of ``bnma_core`` (target: under 2 s; numba compiles lazily with cache=True).

Run: ``.venv/bin/python benchmarks/import_time.py``. Prints one JSON line per figure.
Each figure is the median of 5 fresh interpreter starts.
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


if __name__ == "__main__":
    for name, stmt in MODULES.items():
        emit(name, measure(stmt), "s", digits=3)
