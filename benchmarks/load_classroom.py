"""A class on one server: 30 browser sessions step ASIA order-MCMC chains on the Teach page
(one "+1" every 2 s each) while 2 sessions run a full order MCMC on WBC (Order MCMC page).

COLD then WARM: the checkout (``--ref``, default ``HEAD``) is exported with ``git archive`` into
a fresh folder (no numba cache), compiled with ``python -m bnma_core.warmup`` as ``make venv``
does, then served; the class comes (cold), leaves, and comes again to the same server (warm).
The server runs with ``NUMBA_DEBUG_CACHE=1``: every kernel it compiles itself (one the install's
warm-up missed) is listed under ``compiled_by_server``. One JSON line per round, with the
machine's load averages beside every figure. Needs Debian's chromium and playwright. Usage:

    PYTHONPATH=. .venv/bin/python benchmarks/load_classroom.py [--steppers 30] [--runners 2]
        [--ref HEAD] [--rounds cold warm]
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bnma_ui import ROOT
from bnma_ui.browser import headless_chromium, missing_requirement, rss_mb, streamlit_server
from bnma_ui.loadtest import classroom_round, load_average

_SAVED = re.compile(r"\[cache\] data saved to .*?([\w.]+?)-\d+\.py\d+\.\d+\.nbc")


def fresh_install(ref: str, folder: Path) -> float:
    """``git archive ref`` into ``folder`` and the install's warm-up there; its seconds."""
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", ref], check=True,
                             capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(folder)], input=archive, check=True)
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-m", "bnma_core.warmup"], cwd=folder, check=True,
                   env={"PYTHONPATH": str(folder), "PATH": "/usr/bin:/bin"},
                   stdout=subprocess.DEVNULL)
    return time.perf_counter() - t0


def compiled_by_server(log: Path, offset: int = 0) -> list[str]:
    """Kernels the server compiled (numba cache writes in its log), from byte ``offset``."""
    text = log.read_text(errors="replace")[offset:]
    return sorted(set(_SAVED.findall(text)))


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steppers", type=int, default=30)
    ap.add_argument("--runners", type=int, default=2)
    ap.add_argument("--ref", default="HEAD")
    ap.add_argument("--rounds", nargs="+", default=["cold", "warm"])
    ap.add_argument("--min-seconds", type=float, default=60.0)
    ap.add_argument("--max-seconds", type=float, default=240.0)
    args = ap.parse_args(argv)
    reason = missing_requirement()
    if reason:
        print(json.dumps({"skipped": reason}))
        return 0
    folder = Path(tempfile.mkdtemp(prefix="bnma_classroom_"))
    out = ROOT / "benchmarks" / "out"
    log = out / f"load_classroom_{args.steppers}.log"
    try:
        install_s = fresh_install(args.ref, folder)
        print(json.dumps({"name": "classroom_install_warmup", "ref": args.ref,
                          "seconds": round(install_s, 1), "uptime": load_average()}),
              flush=True)
        with streamlit_server(log, app_dir=folder, env={"NUMBA_DEBUG_CACHE": "1"}) as (
                url, proc), headless_chromium() as browser:
            print(json.dumps({"name": "classroom_server_started", "rss_mb": rss_mb(proc.pid),
                              "uptime": load_average()}), flush=True)
            for label in args.rounds:
                offset = log.stat().st_size
                res = classroom_round(browser, url, proc.pid, label, args.steppers,
                                      args.runners, min_seconds=args.min_seconds,
                                      max_seconds=args.max_seconds, log=log,
                                      idle_seconds=10.0)
                row = {"name": f"load_classroom_{args.steppers}_{args.runners}_{label}",
                       **res.as_dict(), "compiled_by_server": compiled_by_server(log, offset),
                       "uptime_after": load_average()}
                print(json.dumps(row), flush=True)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
