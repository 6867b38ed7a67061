"""Table 1 of Santafé, Lozano & Larrañaga (EMA-TAN for clustering), reproduced (issue 13).

A thin command line over :mod:`bnma_core.reproduce.santafe` (the grid, the cells, the tables and
the HTML report live there; ``bnma reproduce santafe`` runs its default grid). This script adds a
wall-clock budget and a grid size of your choice, and reports on the networks that finished::

    PYTHONPATH=. python experiments/santafe_table1.py [--quick] [--networks 100] [--starts 100]
        [--n-vars 2,4,8,10,12,14] [--sizes 40,80,160,320,640]
        [--orders random,generating,chow_liu] [--embnet-orders random,generating]
        [--peer-networks 3] [--balanced] [--budget SECONDS] [--workers 2] [--chunk 5]
        [--out experiments/out/reproduce]
    PYTHONPATH=. python experiments/santafe_table1.py --report [same grid options]

The cells are stored by the reproduction runner (Dask, one Parquet file per finished cell), so
a stopped run resumes where it stopped. The grid is network-major: when the budget runs out, the
report uses the networks finished in *every* (n, N, method) cell, the same number everywhere.
``--report`` prints Table 1 and the per-method summary as Markdown and writes the HTML report.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import defaultdict

from bnma_core.reproduce import santafe
from bnma_core.reproduce.runner import run_grid, write_report
from bnma_core.reproduce.store import ResultStore, key_id

DEFAULT_OUT = "experiments/out/reproduce"


def complete_keys(keys: list[dict], done: set[str]) -> tuple[list[dict], int]:
    """The keys of the first networks finished in every cell (the same count per (n, N)) and
    that count."""
    by_net: dict[int, list[dict]] = defaultdict(list)
    for k in keys:
        by_net[k["network"]].append(k)
    out: list[dict] = []
    count = 0
    for net in sorted(by_net):
        if not all(key_id(k) in done for k in by_net[net]):
            break
        out += by_net[net]
        count += 1
    return out, count


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ints = lambda s: tuple(int(v) for v in s.split(",") if v)  # noqa: E731
    strs = lambda s: tuple(v for v in s.split(",") if v)  # noqa: E731
    ap.add_argument("--quick", action="store_true", help="the smoke grid")
    ap.add_argument("--networks", type=int)
    ap.add_argument("--starts", type=int)
    ap.add_argument("--n-vars", type=ints)
    ap.add_argument("--sizes", type=ints)
    ap.add_argument("--orders", type=strs)
    ap.add_argument("--embnet-orders", type=strs)
    ap.add_argument("--peer-networks", type=int)
    ap.add_argument("--balanced", action="store_true", default=None)
    ap.add_argument("--seed", type=int)
    ap.add_argument("--budget", type=float, help="stop starting cells after this many seconds")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--chunk", type=int, default=5,
                    help="networks submitted to Dask at a time (bounds the task count)")
    ap.add_argument("--out", default=DEFAULT_OUT)
    ap.add_argument("--report", action="store_true", help="report on the stored cells only")
    a = ap.parse_args(argv)
    overrides = {"networks": a.networks, "starts": a.starts, "n_vars": a.n_vars,
                 "sizes": a.sizes, "orders": a.orders, "embnet_orders": a.embnet_orders,
                 "peer_networks": a.peer_networks, "balanced": a.balanced, "seed": a.seed}
    try:
        keys = santafe.grid(a.quick, **overrides)
    except ValueError as e:
        print(f"santafe_table1: error: {e}", file=sys.stderr)
        return 2
    if not a.report:
        t0 = time.monotonic()
        stop = None if a.budget is None else (lambda: time.monotonic() - t0 > a.budget)
        nets = sorted({k["network"] for k in keys})
        for lo in range(0, len(nets), a.chunk):  # a few thousand Dask tasks at a time
            part = [k for k in keys if k["network"] in nets[lo:lo + a.chunk]]
            s = run_grid("santafe", a.out, quick=a.quick, workers=a.workers, keys=part,
                         should_stop=stop, progress=True)
            print(f"santafe: networks {nets[lo]}..{nets[min(lo + a.chunk, len(nets)) - 1]}: "
                  f"{s.n_computed} cells computed, {s.n_skipped} reused, "
                  f"{s.wall_seconds:.0f} s, {len(s.failures)} failed"
                  + (" (budget reached; rerun to resume)" if s.stopped else ""),
                  file=sys.stderr)
            if s.stopped:
                break
    done = ResultStore(a.out, "santafe").done_ids()
    use, count = complete_keys(keys, done)
    if not use:
        print("santafe: no network is finished in every cell yet", file=sys.stderr)
        return 1
    path = write_report("santafe", a.out, a.quick, keys=use)
    cells = ResultStore(a.out, "santafe").cells({key_id(k) for k in use})
    df = santafe.frame(cells)
    print(f"{count} networks per cell; report: {path}\n")
    print(santafe.wdl_markdown(santafe.table1(df)))
    print()
    print(santafe.wdl_markdown(santafe.table1(df, pooled=True)))
    print()
    print(santafe.frame_markdown(santafe.method_summary(df)))
    ps = santafe.peer_summary(df)
    if len(ps):
        print()
        print(santafe.frame_markdown(ps))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
