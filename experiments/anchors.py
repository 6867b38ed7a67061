"""Every registered method against Weka and pyAgrum on Weka's own folds (issue 16 item 1).

A thin command line over :mod:`bnma_core.reproduce.anchors` (the one implementation; ``bnma
reproduce anchors [--quick]`` runs the same cells on Dask and writes an HTML report). The
anchors (the shared ``anchors`` folder next to the repository, not part of a clone; see its
README) are seven all-nominal datasets, the test fold (0-9) of every row in Weka's
``-x 10 -s 1`` stratified cross-validation, and the accuracy of 38 Weka / pyAgrum
configurations. For each dataset and fold k every method is trained on the rows whose fold is
not k and tested on fold k, and the table reports the mean of the ten fold accuracies (the
anchors' ``acc_mean``) with its standard error sd / sqrt(10).

Command line (from the repository root)::

    PYTHONPATH=. python experiments/anchors.py [--methods all|nb,tan,...] [--datasets all|wbc,...]
        [--seed 1] [--n-jobs 1] [--out experiments/out/anchors] [--anchors PATH]
        [--update]

Writes ``folds.csv`` (dataset, method, fold, accuracy, n_test, seconds, cpu_seconds),
``summary.csv`` (one row per dataset and method: acc_mean, acc_se, best Weka / pyAgrum anchor,
difference to the best anchor, win / tie / loss, seconds) and ``table.md`` (the summary as a
markdown table, with the mean over the datasets and the win / tie / loss count per method).
``--methods`` takes registry names and the experiment-only names of
``bnma_core.reproduce.anchors.EXTRA_METHODS`` (``cvselect``).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from bnma_core.reproduce.anchors import (  # noqa: F401 - re-exported for callers
    ANCHORS,
    BEST_SINGLE_ANCHOR_MEAN,
    DATASETS,
    EXTRA_METHODS,
    TIE,
    anchor_configurations,
    anchor_table,
    comparison_table,
    load,
    markdown,
    overview,
    run,
    run_fold,
    run_method,
    summarize,
    target_claims,
)

ROOT = Path(__file__).resolve().parents[1]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--methods", default="all",
                    help="registry names, comma-separated, or 'all'; 'cvselect' adds the "
                         "experiment-only inner-CV selection")
    ap.add_argument("--datasets", default="all")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--n-jobs", type=int, default=1)
    ap.add_argument("--out", type=Path, default=ROOT / "experiments" / "out" / "anchors")
    ap.add_argument("--anchors", type=Path, default=ANCHORS)
    ap.add_argument("--update", action="store_true",
                    help="keep the other methods' rows of an earlier run in --out")
    args = ap.parse_args(argv)
    if not (args.anchors / "results.csv").exists():
        ap.error(f"no anchors at {args.anchors} (the shared folder next to the repository)")
    methods = None if args.methods == "all" else args.methods.split(",")
    datasets = None if args.datasets == "all" else args.datasets.split(",")
    try:
        res = run(args.out, methods, datasets, args.anchors, args.seed, args.n_jobs,
                  update=args.update)
    except ValueError as e:
        ap.error(str(e))
    print(markdown(res["summary"]))
    from bnma_core.reproduce.report import claims_text

    for m in dict.fromkeys(res["summary"]["method"]):
        if res["summary"].query("method == @m")["logloss_mean"].notna().sum() == len(DATASETS):
            print(f"\n{m}:\n" + claims_text(target_claims(res["summary"], m, args.anchors)[:3]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
