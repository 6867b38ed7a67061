"""Speed and memory of the exact order-modular edge posteriors
(``bnma_core.structure.exact.edge_posteriors``; Koivisto & Sood 2004, Koivisto 2006).

Run: ``.venv/bin/python benchmarks/exact_edges.py [--quick]``. Prints one JSON line per figure
(``{"name", "value", "unit"}``) on stdout. Each size runs in a fresh subprocess (after a small
warm-up call that loads the numba cache) so its peak resident memory can be read: the process's
peak RSS and the part the call added above the loaded data (``extra``). Wall and CPU time of the
call are both reported (the machine is shared; CPU seconds are the less disturbed figure).
Data: N = 1,000 rows sampled from ALARM (seed 0), the first n variables, K2, at most 3 parents,
uniform structure prior. Sizes n = 10, 15, 20 (``--quick``: 10, 15). Target: n = 20 in seconds,
under 1 GB.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

from _bench import emit

ROOT = Path(__file__).resolve().parents[1]  # subprocesses import this checkout's bnma_core

N_ROWS = 1000
SIZES = (10, 15, 20)


def one(n: int) -> dict:
    """Time one edge_posteriors call in this process and report its peak RSS."""
    from bnma_core.network import load_network
    from bnma_core.structure.exact import edge_posteriors

    bn = load_network("alarm")
    X = bn.sample_codes(N_ROWS, seed=0)[:, :n]
    ar = bn.arities[:n]
    edge_posteriors(X[:, :4], ar[:4])  # load the numba cache
    base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    t, c = time.perf_counter(), time.process_time()
    E = edge_posteriors(X, ar, max_parents=3, score="k2")
    wall, cpu = time.perf_counter() - t, time.process_time() - c
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return {"n": n, "wall": wall, "cpu": cpu, "peak_gb": peak / 1e6,
            "extra_gb": max(peak - base, 0) / 1e6, "expected_edges": float(E.sum())}


def run(n: int) -> dict:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    out = subprocess.run([sys.executable, __file__, "--one", str(n)], capture_output=True,
                         text=True, env=env, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(quick: bool) -> None:
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores", file=sys.stderr)
    for n in SIZES[:2] if quick else SIZES:
        r = run(n)
        emit(f"exact_edges_n{n}_wall", r["wall"], "s", 3)
        emit(f"exact_edges_n{n}_cpu", r["cpu"], "s", 3)
        emit(f"exact_edges_n{n}_peak_rss", r["peak_gb"], "GB", 3)
        emit(f"exact_edges_n{n}_extra_rss", r["extra_gb"], "GB", 3)


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--one":
        print(json.dumps(one(int(sys.argv[2]))))
    else:
        main("--quick" in sys.argv)
