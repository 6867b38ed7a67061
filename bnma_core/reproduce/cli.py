"""``bnma reproduce PAPER``: run a paper's grid on Dask, store every cell, write the
HTML report.

Usage::

    bnma reproduce PAPER [--quick] [--workers N] [--scheduler tcp://host:port] [--out DIR]
                         [--dashboard HOST:PORT] [--fresh] [--no-progress]
    python -m bnma_core.reproduce PAPER ...          (the same, without the bnma front end)

PAPER: ``hwang2005``, ``dash2002``, ``ukdb``, ``sugahara``, ``santafe``, ``anchors`` (and
``smoke``, the runner's self-test). A paper listed in ``PENDING`` answers "not yet available:
issue N" with exit status 2 (none is pending now).
A rerun skips the cells already stored under ``--out``; ``--fresh`` recomputes them. Exit
status: 0 done (report written), 1 the grid did not finish, 2 bad input.

The ``bnma`` command adds it with::

    from bnma_core.reproduce import cli as reproduce_cli
    reproduce_cli.add_parser(sub)        # in build_parser(); dispatch: reproduce_cli.run(args)
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from .papers import NotAvailable, paper_names

__all__ = ["add_parser", "run", "main", "DEFAULT_OUT"]

DEFAULT_OUT = "experiments/out/reproduce"
EXIT_USAGE = 2


def _workers(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 0:
        raise argparse.ArgumentTypeError("use 0 (in this process) or a positive number")
    return value


def configure(p: argparse.ArgumentParser) -> argparse.ArgumentParser:
    p.add_argument("paper", metavar="PAPER", help="one of: " + ", ".join(paper_names()))
    p.add_argument("--quick", action="store_true", help="the smoke-size grid (minutes)")
    p.add_argument("--workers", type=_workers, default=2,
                   help="worker processes of the local Dask cluster (0 = in this process)")
    p.add_argument("--scheduler", default=None, metavar="ADDR",
                   help="use an existing Dask scheduler, e.g. tcp://host:8786")
    p.add_argument("--out", default=None,
                   help="results store and reports (default: $BNMA_RESULTS_ROOT, the "
                        f"dashboard's results folder, else {DEFAULT_OUT})")
    p.add_argument("--dashboard", default=None, metavar="HOST:PORT",
                   help="where the local cluster's Dask dashboard listens during the run "
                        "(default 127.0.0.1:0: this machine only, a free port; ':0' for every "
                        "interface)")
    p.add_argument("--fresh", action="store_true", help="recompute the stored cells")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.set_defaults(func=run)
    return p


def add_parser(subparsers) -> argparse.ArgumentParser:
    """Add the ``reproduce`` sub-command to ``bnma``'s sub-parsers."""
    return configure(subparsers.add_parser(
        "reproduce", help="reproduce a paper's tables and figures (Dask; HTML report)",
        description=__doc__.split("\n\n")[0]))


def run(args: argparse.Namespace) -> int:
    """Run the sub-command; returns the exit status (messages on stderr, report path on
    stdout)."""
    from .papers import load_paper, missing_inputs
    from .runner import run_grid, write_report
    from .store import RESULTS_ROOT_ENV

    if args.out is None:
        args.out = os.environ.get(RESULTS_ROOT_ENV) or DEFAULT_OUT
    try:
        load_paper(args.paper)
    except NotAvailable as e:
        print(f"bnma reproduce: {e}", file=sys.stderr)
        return EXIT_USAGE
    except ValueError as e:
        print(f"bnma reproduce: error: {e}", file=sys.stderr)
        return EXIT_USAGE
    reason = missing_inputs(args.paper, args.quick)
    if reason:
        print(f"bnma reproduce: {reason}", file=sys.stderr)
        return EXIT_USAGE
    try:
        summary = run_grid(args.paper, args.out, quick=args.quick, workers=args.workers,
                           scheduler=args.scheduler, fresh=args.fresh,
                           progress=not args.no_progress,
                           **({"dashboard_address": args.dashboard} if args.dashboard else {}))
    except ConnectionError as e:
        print(f"bnma reproduce: error: {e}", file=sys.stderr)
        return EXIT_USAGE
    print(f"{args.paper}: {summary.n_computed} cells computed, {summary.n_skipped} reused, "
          f"{summary.wall_seconds:.1f} s", file=sys.stderr)
    for msg in summary.failures[:5]:
        print(f"bnma reproduce: a cell failed: {msg}", file=sys.stderr)
    if summary.n_computed + summary.n_skipped < summary.n_cells:
        print(f"bnma reproduce: the grid did not finish ({summary.record.get('status')}); "
              "rerun the same command to resume", file=sys.stderr)
        return 1
    path = write_report(args.paper, args.out, args.quick, summary)
    print(Path(path).resolve())
    return 0


def main(argv: list[str] | None = None) -> int:
    p = configure(argparse.ArgumentParser(prog="python -m bnma_core.reproduce",
                                          description=__doc__.split("\n\n")[0]))
    return run(p.parse_args(argv))
