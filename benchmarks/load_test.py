"""Load test of the dashboard: N = 2..8 browser sessions run order MCMC on WBC at once.

One JSON line per N: completion, Stop latency, observer page-switch latency p50 / p95, server
RSS at start, peak and after every session closed (issue 14, "A class at once"). Needs Debian's
chromium and playwright (dev requirements). Usage:

    PYTHONPATH=. .venv/bin/python benchmarks/load_test.py [N ...]   # default: 2 4 8 (as make bench)
"""

from __future__ import annotations

import json
import sys

from bnma_ui.browser import missing_requirement
from bnma_ui.loadtest import run_load


def main(argv: list[str]) -> int:
    reason = missing_requirement()
    if reason:
        print(json.dumps({"skipped": reason}))
        return 0
    for n in [int(a) for a in argv] or [2, 4, 8]:
        res = run_load(n)
        out = res.as_dict()
        out["residual_rss_mb"] = round(res.rss_end_mb - res.rss_start_mb, 1)
        print(json.dumps({"name": f"load_test_n{n}", **out}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
