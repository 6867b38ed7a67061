"""Load test beside a hostile visitor: N normal browser sessions run order MCMC on WBC (as in
``load_test.py``), once alone and once while a hostile visitor opens crafted links and uploads
odd files (``bnma_ui.loadtest.hostile_session``); the normal sessions' completion, Stop and
page-switch figures should stay within 20 % of the run without it, and the server's RSS under
1.5 GB.

One JSON line per run (``hostile`` false / true) with the load average beside it, then a
Markdown table. Needs Debian's chromium and playwright (dev requirements). Usage:

    PYTHONPATH=. .venv/bin/python benchmarks/load_hostile.py [--n 8] [--app-dir DIR]
        [--only hostile|calm] [--label TEXT] [--iterations 20000]

``--app-dir`` serves the app of another checkout (e.g. ``git archive main | tar -x -C DIR``)
for a before / after comparison; the driver is always this checkout's.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
from pathlib import Path

from bnma_ui.browser import missing_requirement
from bnma_ui.loadtest import run_load


def _row(label: str, r: dict) -> str:
    secs = r["run_seconds"][1:] or [math.nan]  # session 0 is stopped; the others finish
    hostile = r["hostile_actions"]
    exc = sum(a["shown"].startswith("EXCEPTION") for a in hostile)
    hung = sum(a["shown"].startswith("no answer") for a in hostile)
    return (f"| {label} | {'yes' if r['hostile'] else 'no'} | {r['completed']}/{r['n_sessions']} "
            f"| {max(secs):.1f} | {r['stop_latency_s']:.1f} | {r['switch_p50_s']:.2f} / "
            f"{r['switch_p95_s']:.2f} ({r['switches']}) | {r['rss_start_mb']:.0f} | "
            f"{r['rss_peak_mb']:.0f} | {r['load_before']} | "
            f"{len(hostile)} actions, {exc} tracebacks, {hung} hung |")


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--n", type=int, default=8, help="normal sessions")
    p.add_argument("--iterations", type=int, default=20_000)
    p.add_argument("--app-dir", type=Path, default=None)
    p.add_argument("--only", choices=("hostile", "calm"), default=None)
    p.add_argument("--label", default="this checkout")
    p.add_argument("--log-dir", type=Path, default=Path("benchmarks/out"))
    args = p.parse_args(argv)
    reason = missing_requirement()
    if reason:
        print(json.dumps({"skipped": reason}))
        return 0
    rows = []
    for hostile in (False, True):
        if args.only and args.only != ("hostile" if hostile else "calm"):
            continue
        before = " ".join(f"{x:.2f}" for x in os.getloadavg())
        res = run_load(args.n, iterations=args.iterations, hostile=hostile,
                       app_dir=args.app_dir, log_dir=args.log_dir / args.label.replace(" ", "_"))
        out = {"name": f"load_hostile_n{args.n}", "label": args.label, **res.as_dict(),
               "load_before": before,
               "load_after": " ".join(f"{x:.2f}" for x in os.getloadavg())}
        print(json.dumps(out), flush=True)
        rows.append(_row(args.label, out))
    print("| app | hostile | completed | slowest normal run (s) | Stop (s) | page switch "
          "p50 / p95 (s) (n) | RSS start (MB) | RSS peak (MB) | load avg before | hostile "
          "visitor |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    print("\n".join(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
