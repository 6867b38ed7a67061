"""ROC-area gain of model-averaged (MA) over MAP naive Bayes — Dash & Cooper (2002), section 4.

Command line (from the repository root)::

    python experiments/manb_roc.py [--tests nodes,records,density,worst,alarm,hepar]
                                   [--trials 20] [--jobs 1] [--seed 0] [--smoke]
                                   [--out experiments/out/manb_roc]

Reproduces, with ``--trials`` trials per point (the paper: 500 / 200 / 500 / 1000 / 100 / 200):

* Fig. 2(a) ``nodes``: N in {5..500} features, N_r = 200 training and 100 test records, N_k = 5;
* Fig. 2(b) ``records``: N = 200, N_r in {25..12,800}, N_k = 5;
* Fig. 2(c) ``density``: N = 200, N_r = 200, N_k in {1..10, 20, ..., 200};
* Fig. 3 ``worst``: the records test with N = 5, N_k = 5;
* Fig. 4 ``alarm``: ALARM, class ANAPHYLAXIS or HYPOVOLEMIA, 1,000 test records;
* Fig. 5 ``hepar``: HEPAR II, class THepatitis (toxic hepatitis) or Hyperbilirubinemia,
  500 test records.

Random networks follow Procedure 1 (``bnma_core.synthetic``), binary nodes, flat-Dirichlet CPT
columns drawn lazily, class node uniform. Each trial (Procedure 2) trains the MAP naive Bayes
(``NaiveBayes(alpha=1)``: eq. 6, all arcs) and the MA naive Bayes (theta*, eq. 12; K2, uniform
structure prior) on the same records and measures their ROC areas R and R̂ on the test records;
Δ_ROC = (R̂ − R)/R, δ_ROC = (R̂ − R)/(1 − R) (δ = 0 when R = 1).
A draw whose training or test records contain a single class has no ROC area; it is redrawn
(new network for random networks, new records for ALARM / HEPAR II) and counted in
``redraws``.

Writes ``trials.csv`` (one row per trial), ``summary.csv`` (means, ±1σ, 99% confidence
intervals) and one figure per test (``<test>.html`` and ``.json``) under ``--out``.

Runtime: on one loaded core ~0.2 s per trial at N = 200 / N_r = 200; ``--trials 20`` for all
six tests takes about 5 minutes (--jobs 2 halves it on an idle machine); ``--smoke`` seconds.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import pandas as pd
from joblib import Parallel, delayed

# the cells, seeds and statistics live in the package (shared with `bnma reproduce dash2002`)
from bnma_core.reproduce.dash2002 import (  # noqa: F401  (re-exported for tests and notebooks)
    MAX_REDRAWS,
    RECORDS,
    TESTS,
    _run_task,
    _tasks,
    compare_on,
    hash_test,
    network_trial,
    random_network_trial,
    roc_gains,
    summarize,
)
from bnma_core.viz.naive import roc_gain_figure


def run(tests: list[str], trials: int, out_dir: str | Path | None = None, jobs: int = 1,
        seed: int = 0, smoke: bool = False, verbose: bool = True) -> tuple[pd.DataFrame,
                                                                            pd.DataFrame]:
    """Run the chosen tests; returns (per-trial DataFrame, summary DataFrame) and writes the
    CSV files and figures when ``out_dir`` is given."""
    unknown = [t for t in tests if t not in TESTS]
    if unknown:
        raise ValueError(f"Unknown test(s) {unknown}; choose from {', '.join(TESTS)}.")
    if trials < 2:
        raise ValueError("trials must be at least 2 (a confidence interval needs two).")
    tasks = [t for test in tests for t in _tasks(test, trials, seed, smoke)]
    t0 = time.perf_counter()
    if jobs == 1:
        results = [_run_task(t) for t in tasks]
    else:
        results = Parallel(n_jobs=jobs, batch_size=4)(delayed(_run_task)(t) for t in tasks)
    trial_df = pd.DataFrame(results)
    summary = summarize(trial_df)
    if verbose:
        print(f"{len(tasks)} trials in {time.perf_counter() - t0:.1f} s", file=sys.stderr)
    if out_dir is not None:
        out = Path(out_dir)
        out.mkdir(parents=True, exist_ok=True)
        trial_df.to_csv(out / "trials.csv", index=False)
        summary.to_csv(out / "summary.csv", index=False)
        for test in tests:
            spec = TESTS[test]
            sub = summary[summary["test"] == test].rename(columns={"value": spec["param"]})
            if "classes" not in spec:
                sub = sub.drop(columns="series")
            fig = roc_gain_figure(sub, spec["param"], spec["title"] + f" — {trials} trials",
                                  spec["x_title"], spec["log_x"])
            fig.write_html(out / f"{test}.html", include_plotlyjs="cdn")
            (out / f"{test}.json").write_text(fig.to_json())
    return trial_df, summary


def format_summary(summary: pd.DataFrame) -> str:
    """Plain-text table: mean ± 99% CI (in %) of Δ_ROC and δ_ROC per point."""
    lines = [f"{'test':8s} {'series':19s} {'param':12s} {'value':>6s} {'n':>4s} "
             f"{'R':>6s} {'R_hat':>6s} {'Delta% ±CI99':>15s} {'delta% ±CI99':>15s}"]
    for r in summary.itertuples():
        lines.append(
            f"{r.test:8s} {r.series:19s} {r.param:12s} {r.value:6d} {r.n:4d} {r.R_mean:6.3f} "
            f"{r.R_hat_mean:6.3f} {100 * r.Delta_mean:+7.2f} ±{100 * r.Delta_ci99:5.2f} "
            f"{100 * r.delta_mean:+7.2f} ±{100 * r.delta_ci99:5.2f}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tests", default="nodes,records,density,worst,alarm,hepar")
    ap.add_argument("--trials", type=int, default=20)
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--smoke", action="store_true")
    ap.add_argument("--out", default="experiments/out/manb_roc")
    args = ap.parse_args(argv)
    _, summary = run([t.strip() for t in args.tests.split(",") if t.strip()], args.trials,
                     args.out, args.jobs, args.seed, args.smoke)
    print(format_summary(summary))
    print(json.dumps({"out": str(Path(args.out).resolve())}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
