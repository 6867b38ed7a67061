"""Table 1 of Sugahara, Aomi & Ueno, "Bayesian network model averaging classifiers by
subbagging" (paper 001; spec ``../shared/specs/subbagging-kbest.md``; issue 12): the command-line
front end over :mod:`bnma_core.reproduce.sugahara` (the one implementation of the protocol) and
the Dask runner of ``bnma reproduce`` (issue 17).

Command line (from the repository root; ``PYTHONPATH=.`` in a worktree)::

    python experiments/sugahara_table1.py [--quick] [--datasets lenses,iris]
        [--methods nb,proposed] [--folds 10] [--seed 0] [--no-apses] [--workers 2]
        [--out experiments/out/reproduce] [--fresh] [--report-only]
    python experiments/sugahara_table1.py --anchors [--anchor-datasets vote]

The grid of (data set × method × fold) cells runs on a local Dask cluster (``--workers 0``: in
this process); every finished cell is stored in ``<out>/sugahara/cells`` so an interrupted run
resumes where it stopped (``bnma reproduce sugahara`` uses the same store and cells). Outputs in
``<out>/sugahara``: ``report.html`` (the HTML report), ``table1.csv`` (one row per data set),
``folds.csv`` (one row per cell) and ``table1.md`` (ours vs the paper, ±2 SE, averages, Wilcoxon
raw and Hommel-adjusted p-values, structure statistics, CPU seconds, the claims).

``--report-only``: no computing; the report and tables from the cells of the grid stored so far
(a partial grid is allowed and said so in the report: ``report_partial.html``).

``--anchors``: the 11 methods on the Weka folds of ``../shared/anchors`` through
``experiments/anchors.py``'s runner (``<out>/anchors_sugahara``).
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Sequence
from pathlib import Path

from bnma_core.reproduce import sugahara as S
from bnma_core.reproduce.runner import run_grid, write_report
from bnma_core.reproduce.store import ResultStore, key_id

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_OUT = ROOT / "experiments" / "out" / "reproduce"


def write_tables(out: Path, keys: list[dict]) -> dict:
    """``table1.csv``, ``folds.csv`` and ``table1.md`` from the stored cells of ``keys``."""
    store = ResultStore(out, "sugahara")
    cells = store.cells({key_id(k) for k in keys})
    folds = S.fold_frame(cells)
    methods = [m for m in S.METHODS if m in set(folds["method"])]
    s = S.summarize(folds, S.paper_table(), methods)
    claims = S.check_claims(s)
    folds.sort_values(["dataset", "method", "fold"]).to_csv(store.dir / "folds.csv",
                                                            index=False)
    s["table"].to_csv(store.dir / "table1.csv", index=False)
    (store.dir / "table1.md").write_text(S.markdown(s, methods, claims))
    return {**s, "claims": claims}


def partial_report(out: Path, keys: list[dict], quick: bool = False,
                   name: str = "report_partial.html") -> Path:
    """``report_partial.html`` from the stored cells of ``keys`` (missing cells allowed; the
    report's settings say how many are finished). Also the report of a narrowed grid
    (``report_subset.html``), so that ``report.html`` / ``report_full.html`` always show the
    paper's whole grid."""
    from bnma_core.reproduce.store import _atomic_write_bytes

    store = ResultStore(out, "sugahara")
    cells = store.cells({key_id(k) for k in keys})
    meta = {"config": S.config(quick), "paper": "sugahara",
            "grid": f"{len(cells)} of {len(keys)} cells finished"
            + (" (PARTIAL)" if len(cells) < len(keys) else ""),
            "cell time, sum (s)": round(float(cells["seconds"].sum()), 1) if len(cells) else 0}
    path = store.dir / name
    _atomic_write_bytes(path, S.report(cells, meta).encode("utf-8"))
    return path


def run_anchors(out: Path, datasets: Sequence[str] | None) -> str:
    """The 11 Table 1 methods (registry names) through ``experiments/anchors.py``'s runner."""
    from experiments import anchors

    methods = [S.METHODS[m][0] for m in S.PAPER_METHODS]
    res = anchors.run(out, methods=methods, datasets=list(datasets) if datasets else None)
    return anchors.markdown(res["summary"])


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="lenses, mtx6, iris; 2 folds")
    ap.add_argument("--datasets", default="", help="comma-separated paper names (default all)")
    ap.add_argument("--methods", default="",
                    help="Table 1 columns (default all 11); diagnostics: kbestec100_uniform, "
                         "proposed_uniform, b_rai_cmi, b_rai_bdeu")
    ap.add_argument("--folds", type=int, default=None)
    ap.add_argument("--seed", type=int, default=None)
    ap.add_argument("--no-apses", action="store_true")
    ap.add_argument("--workers", type=int, default=2, help="Dask workers (0 = this process)")
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT)
    ap.add_argument("--fresh", action="store_true", help="recompute the stored cells")
    ap.add_argument("--report-only", action="store_true",
                    help="write the report and tables from the cells stored so far")
    ap.add_argument("--anchors", action="store_true",
                    help="run the 11 methods on the Weka folds of ../shared/anchors instead")
    ap.add_argument("--anchor-datasets", default="", help="comma-separated (default all)")
    a = ap.parse_args(argv)
    if a.anchors:
        wanted = [d for d in a.anchor_datasets.split(",") if d]
        print(run_anchors(a.out / "anchors_sugahara", wanted or None))
        return 0
    try:
        keys = S.grid(a.quick, [d for d in a.datasets.split(",") if d] or None,
                      [m for m in a.methods.split(",") if m] or None, a.folds, a.seed,
                      False if a.no_apses else None)
    except ValueError as e:
        ap.error(str(e))
    if a.report_only:
        path = partial_report(a.out, keys, a.quick)
        s = write_tables(a.out, keys)
        print((path.parent / "table1.md").read_text())
        print(f"report: {path}; {len(s['table'])} data sets")
        return 0
    t0 = time.perf_counter()
    summary = run_grid("sugahara", a.out, quick=a.quick, workers=a.workers, fresh=a.fresh,
                       progress=True, keys=keys)
    for msg in summary.failures[:5]:
        print(f"a cell failed: {msg}")
    if summary.n_computed + summary.n_skipped < summary.n_cells:
        print("the grid did not finish; rerun the same command to resume")
        return 1
    narrowed = bool(a.datasets or a.methods) or a.folds is not None or a.seed is not None \
        or a.no_apses
    path = (partial_report(a.out, keys, a.quick, "report_subset.html") if narrowed
            else write_report("sugahara", a.out, a.quick, summary, keys=keys))
    s = write_tables(a.out, keys)
    print((path.parent / "table1.md").read_text())
    print(f"report: {path}\nwall time this session: {time.perf_counter() - t0:.0f} s; "
          f"{len(s['table'])} data sets")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
