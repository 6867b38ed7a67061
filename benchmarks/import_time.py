"""Import time and memory of ``bnma_core`` (targets: under 2 s; resident memory after importing
the order-BMA module under 150 MB, issue 15).

Run: ``.venv/bin/python benchmarks/import_time.py``. Prints one JSON line per figure.
Each time is the median of 5 fresh interpreter starts; ``*_rss_mb`` is the peak resident
memory of a fresh interpreter after the import, and ``rss_steps`` the increase of each
dependency imported in turn (what the order-BMA module's memory is made of).

Measured (pandas 3.1, numba 0.68, scikit-learn 1.9; peak RSS in MB): python 12.8,
``bnma_core`` / ``data`` / ``registry`` 141-142 (numpy + pandas, which loads pyarrow; no numba,
scikit-learn, scipy or networkx: ``tests/test_lazy_imports.py``), order-BMA module 341.6
(353.0 before networkx was made lazy). Steps: numpy 18.5, numba 127.6 (LLVM; it also loads
scipy), ``sklearn.base`` 177.8 (scikit-learn loads pandas, pyarrow and scipy itself), pandas and
scipy.special then 0, the bnma_core modules 7.9. The target (< 150 MB) is below the floor of
what the module must import: numpy + numba alone 159.1, numpy + numba + ``sklearn.base`` (the
estimator base class) 336.9. Getting under it would take numba kernels compiled on first use
and an estimator base class without scikit-learn.
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
    "floor_numpy_numba": "import numpy, numba",
    "floor_numpy_numba_sklearn_base": "import numpy, numba, sklearn.base",
}
STEPS = ["numpy", "numba", "sklearn.base", "pandas", "scipy.special",
         "bnma_core.classifiers.order_bma"]
"""The order-BMA module's imports in turn: its kernels need numba (which loads scipy), its base
class scikit-learn's ``BaseEstimator`` (which loads pandas, pyarrow and scipy), so pandas and
scipy.special add nothing after them; networkx is imported when a model is fitted."""


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
