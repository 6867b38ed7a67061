"""Cost of the Compare page's "Table of scores" (issue 36 item 3): CPU seconds and peak memory
growth of the page's calls — the ranks with the critical difference, then the Bayesian
signed-rank test of the chosen pairs (``bnma_core.cv_summary.over_datasets``) — and the size
of the critical-difference chart, on random scores of

* 2 methods over N data sets (``--sets``), and
* M methods over 3 data sets (``--methods``; 4 methods in the Bayesian test).

Each case runs in a fresh process (peak RSS is per process). One JSON line per case::

    python benchmarks/compare_scores.py --sets 2000 4000 8000 --methods 10000 20000

The limits of the page (:data:`~bnma_core.cv_summary.MAX_SCORE_DATASETS`,
:data:`~bnma_core.cv_summary.MAX_SCORE_METHODS`) are lifted here so that the algorithms are
measured past them.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time


def case(kind: str, n: int) -> dict:
    """One measurement in this process."""
    import numpy as np
    import pandas as pd

    from bnma_core import cv_summary, viz

    cv_summary.MAX_SCORE_DATASETS = cv_summary.MAX_SCORE_METHODS = 10**9
    rng = np.random.default_rng(0)
    if kind == "sets":
        tab = pd.DataFrame({"dataset": np.repeat([f"d{i}" for i in range(n)], 2),
                            "method": np.tile(["a", "b"], n),
                            "accuracy": rng.uniform(0.6, 0.9, 2 * n).round(4)})
        pairs = ["a", "b"]
    else:
        tab = pd.DataFrame({"dataset": np.repeat(["d0", "d1", "d2"], n),
                            "method": np.tile([f"m{i}" for i in range(n)], 3),
                            "accuracy": rng.uniform(0.6, 0.9, 3 * n).round(4)})
        pairs = [f"m{i}" for i in range(4)]
    rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    t0 = time.process_time()
    full = cv_summary.over_datasets(tab, "accuracy", pair_methods=[])
    cv_summary.over_datasets(tab, "accuracy", pair_methods=pairs, rope=0.01, ranks=False)
    cpu = time.process_time() - t0
    rss1 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    fig = viz.critical_difference_figure(full["cd"])
    return {"kind": kind, "n": n, "cpu_s": round(cpu, 2),
            "peak_rss_growth_mb": round((rss1 - rss0) / 1024, 1),
            "chart_json_bytes": len(fig.to_json())}


def main(argv: list[str] | None = None) -> list[dict]:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sets", type=int, nargs="*", default=[2000, 4000, 8000])
    ap.add_argument("--methods", type=int, nargs="*", default=[10000, 20000])
    ap.add_argument("--case", nargs=2, metavar=("KIND", "N"), help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.case:
        print(json.dumps(case(args.case[0], int(args.case[1]))), flush=True)
        return []
    import os
    from pathlib import Path

    import bnma_core

    # the children measure the bnma_core this process imports (a checkout or the installed one)
    env = {**os.environ, "PYTHONPATH": str(Path(bnma_core.__file__).resolve().parents[1])}
    out = []
    for kind, sizes in (("sets", args.sets), ("methods", args.methods)):
        for n in sizes:
            res = subprocess.run([sys.executable, __file__, "--case", kind, str(n)],
                                 capture_output=True, text=True, check=True, env=env)
            line = res.stdout.strip().splitlines()[-1]
            print(line, flush=True)
            out.append(json.loads(line))
    return out


if __name__ == "__main__":
    main()
