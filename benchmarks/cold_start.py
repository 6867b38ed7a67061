"""The first fit a user runs (issue 15, latency): ``bma10`` fitted on the bundled WBC data in
a fresh interpreter, with an empty numba cache (a fresh install before any warm-up) and after
``python -m bnma_core.warmup`` filled that cache (what ``make venv`` and the dashboard's start
do). Target: the first fit after the warm-up < 2 s.

Run: ``PYTHONPATH=. .venv/bin/python benchmarks/cold_start.py``. The numba cache is pointed at a
temporary folder (``NUMBA_CACHE_DIR``), so the repository's cache is neither used nor touched.
Prints wall and process CPU seconds of the first ``fit`` + ``predict_proba`` (import excluded),
of a second fit in the same process, and of the warm-up itself.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time

from _bench import emit

FIRST_FIT = r"""
import json, time
from bnma_core.classifiers.registry import make_classifier
from bnma_core.data import load_dataset
from bnma_core.datasets import bundled_path
ds = load_dataset(bundled_path("wbc.csv"))
out = {}
for k in ("first", "second"):
    t, c = time.perf_counter(), time.process_time()
    est = make_classifier("bma10", random_state=0).fit(ds.X, ds.y, arities=ds.arities[:-1])
    est.predict_proba(ds.X)
    out[k] = (time.perf_counter() - t, time.process_time() - c)
print(json.dumps(out))
"""


def _run(code: str, env: dict) -> str:
    return subprocess.check_output([sys.executable, "-c", code], env=env, text=True)


def main() -> None:
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, NUMBA_CACHE_DIR=cache)
        cold = json.loads(_run(FIRST_FIT, env).splitlines()[-1])
        emit("bma10_first_fit_empty_cache.wall_seconds", cold["first"][0], "s", 3)
        emit("bma10_first_fit_empty_cache.cpu_seconds", cold["first"][1], "s", 3)
        emit("bma10_second_fit.wall_seconds", cold["second"][0], "s", 3)
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, NUMBA_CACHE_DIR=cache)
        t, c = time.perf_counter(), os.times()
        subprocess.check_output([sys.executable, "-m", "bnma_core.warmup"], env=env)
        c2 = os.times()
        emit("warmup.wall_seconds", time.perf_counter() - t, "s", 2)
        emit("warmup.cpu_seconds", (c2.children_user + c2.children_system)
             - (c.children_user + c.children_system), "s", 2)
        warm = json.loads(_run(FIRST_FIT, env).splitlines()[-1])
        emit("bma10_first_fit_after_warmup.wall_seconds", warm["first"][0], "s", 3)
        emit("bma10_first_fit_after_warmup.cpu_seconds", warm["first"][1], "s", 3)


if __name__ == "__main__":
    main()
