"""ALARM reproduction of Hwang & Zhang (2005), Figs. 5, 6, 7 and 9 (issue #3, item 8).

Command (full run, paper settings except ``--reps``)::

    .venv/bin/python experiments/alarm_orders.py --reps 10

Options: ``--sizes 25 50 100 500 1000``, ``--reps`` (paper: 10), ``--n-test`` (3000),
``--n-iter`` / ``--burn-in`` / ``--n-orders`` (60000 / 10000 / 30), ``--out``. Repetitions can
be split over runs (``--first-rep 5 --reps 5 --out DIR2``) and merged afterwards with
``--combine DIR1 DIR2 --out DIR``.

What it does: for each class variable (CATECHOL, SHUNT), training size and repetition, it draws a
training set from the bundled ALARM network (the same training sets for both class variables)
and a 3,000-row test set; runs order MCMC (max in-degree 3, K2, Hwang-Zhang prior, the paper's
random-swap move, start = the reversed topological order of ALARM, as in Fig. 5) and records:

* Fig. 6 — the mean Spearman rank correlation of all post-burn-in orders with ALARM's
  topological order (``spearman.csv``);
* Fig. 7 — test accuracy of BMA over the first 1 sampled order and over 5 / 10 / 30 of the kept
  orders (every 6th / 3rd / all) — combined as eq. 11 states (average of the joint
  P(c, f | D, ≺_t)) and, for comparison, as the mean of the per-order class posteriors
  ("mean posterior") — over the original (topological) order and over the reversed order, and
  the Bayes-optimal accuracy of the true network (exact inference) as the ceiling
  (``accuracy.csv``);
* Fig. 9 — at training size 100, accuracy when 5 / 10 / 20 % of the 36 feature values of every
  test row (2 / 4 / 7 variables, chosen at random per row) are removed, filled by random
  imputation as in the paper (``missing.csv``), with the Bayes-optimal ceiling marginalizing
  them exactly;
* Fig. 5 — the MCMC trace of repetition 0 at the smallest and largest training sizes.

Outputs go to ``experiments/out/alarm_orders/`` (CSV, plotly HTML). If a training sample
contains a single class (possible for n = 25, the rarer class has probability ~0.1), the next seed
is used and the resample is counted in the ``resampled`` column.

Runtime: the full run with 10 repetitions takes ~1.5-2 h on a quiet 2-core machine (classifying
3,000 rows with 30 orders at n = 25 is the costliest step: nearly every parent set is within
the pruning window); ``--reps 3`` about a third of that.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import pandas as pd

from bnma_core.network import load_network

# the cells live in the package (shared with `bnma reproduce hwang2005`)
from bnma_core.reproduce.hwang2005 import (  # noqa: F401  (re-exported for tests)
    CLASS_VARIABLES,
    MISSING_PCTS,
    N_ORDERS_COMPARED,
    PAPER,
    SIZES,
    _class_context,
    _mask_features,
    _one_rep,
    summarize,
)
from bnma_core.viz.mcmc import orders_accuracy_figure, rank_correlation_figure, trace_figure

JS = "directory"  # figures share one plotly.min.js next to them


def run(sizes=SIZES, class_variables=CLASS_VARIABLES, n_reps: int = 10, n_test: int = 3000,
        n_iter: int = 60000, burn_in: int = 10000, n_orders: int = 30,
        missing_pcts=MISSING_PCTS, missing_n_train: int = 100, max_parents: int = 3,
        out_dir: str | Path | None = "experiments/out/alarm_orders",
        verbose: bool = True, first_rep: int = 0) -> dict[str, pd.DataFrame]:
    """Run the experiment; returns {"spearman", "accuracy", "missing"} DataFrames and, when
    ``out_dir`` is given, writes them as CSV with the figures."""
    bn = load_network("alarm")
    topo = bn.topological_order()
    test_codes = bn.sample_codes(n_test, seed=123456)
    p = {"n_iter": n_iter, "burn_in": burn_in, "n_orders": n_orders, "max_parents": max_parents,
         "first_rep": first_rep, "sizes": sizes, "missing_n_train": missing_n_train,
         "compared": [k for k in N_ORDERS_COMPARED if k <= n_orders]}
    sp_rows, acc_rows, miss_rows, traces = [], [], [], {}
    t_start = time.perf_counter()
    for cv in class_variables:
        ctx = _class_context(bn, cv, test_codes, topo, missing_pcts)
        for size in sizes:
            for rep in range(first_rep, first_rep + n_reps):
                out = _one_rep(bn, cv, ctx, size, rep, p)
                sp_rows.append(out["spearman"])
                acc_rows += out["accuracy"]
                miss_rows += out["missing"]
                if out["trace"] is not None:
                    traces[(cv, size)] = out["trace"]
                if verbose:
                    accs = {r["method"]: r["accuracy"] for r in out["accuracy"]}
                    last = p["compared"][-1]
                    print(f"[{time.perf_counter() - t_start:7.0f}s] {cv} n={size} rep={rep}: "
                          f"spearman {sp_rows[-1]['spearman']:.3f}, 1 order "
                          f"{accs['1 order']:.3f}, {last} orders "
                          f"{accs[f'{last} order' + 's' * (last > 1)]:.3f}, "
                          f"fit {out['t_fit']:.1f}s", flush=True)
    res = {"spearman": pd.DataFrame(sp_rows), "accuracy": pd.DataFrame(acc_rows),
           "missing": pd.DataFrame(miss_rows)}
    if out_dir is not None:
        write_outputs(res, out_dir, burn_in, missing_n_train)
        for (cv, size), (tr_df, ref) in traces.items():
            trace_figure(tr_df, reference_log2=ref, burn_in=burn_in,
                         title=f"Fig. 5: trace, class {cv}, n = {size}").write_html(
                Path(out_dir) / f"fig5_trace_{cv}_n{size}.html", include_plotlyjs=JS)
    return res


def write_outputs(res: dict[str, pd.DataFrame], out_dir: str | Path, burn_in: int,
                  missing_n_train: int) -> None:
    """CSV files, Figs. 6, 7, 9 (plotly HTML) and summary.json."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    for k, df in res.items():
        df.to_csv(out / f"{k}.csv", index=False)
    rank_correlation_figure(res["spearman"]).write_html(out / "fig6_spearman.html",
                                                       include_plotlyjs=JS)
    for cv in res["spearman"]["class_variable"].unique():
        d = res["accuracy"][res["accuracy"]["class_variable"] == cv]
        orders_accuracy_figure(d, title=f"Fig. 7: accuracy, class {cv}").write_html(
            out / f"fig7_accuracy_{cv}.html", include_plotlyjs=JS)
        if len(res["missing"]):
            d = res["missing"][res["missing"]["class_variable"] == cv]
            orders_accuracy_figure(d, x="missing_pct",
                                   title=f"Fig. 9: missing test values, class {cv}, "
                                         f"n = {missing_n_train}").write_html(
                out / f"fig9_missing_{cv}.html", include_plotlyjs=JS)
    (out / "summary.json").write_text(json.dumps(summarize(res), indent=1))


def combine(in_dirs: list[str], out_dir: str, burn_in: int = 10000,
            missing_n_train: int = 100) -> dict[str, pd.DataFrame]:
    """Concatenate the CSVs of runs over disjoint repetitions (``--first-rep``)."""
    res = {}
    for k in ("spearman", "accuracy", "missing"):
        frames = [pd.read_csv(Path(d) / f"{k}.csv") for d in in_dirs
                  if (Path(d) / f"{k}.csv").stat().st_size > 1]
        res[k] = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
    write_outputs(res, out_dir, burn_in, missing_n_train)
    return res


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=list(SIZES))
    ap.add_argument("--class-variables", nargs="+", default=list(CLASS_VARIABLES))
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--n-test", type=int, default=3000)
    ap.add_argument("--n-iter", type=int, default=60000)
    ap.add_argument("--burn-in", type=int, default=10000)
    ap.add_argument("--n-orders", type=int, default=30)
    ap.add_argument("--first-rep", type=int, default=0,
                    help="index of the first repetition (seeds depend on it)")
    ap.add_argument("--out", default="experiments/out/alarm_orders")
    ap.add_argument("--combine", nargs="+", default=None, metavar="DIR",
                    help="only merge the CSVs of earlier runs into --out")
    a = ap.parse_args()
    if a.combine:
        res = combine(a.combine, a.out, a.burn_in)
    else:
        res = run(a.sizes, a.class_variables, a.reps, a.n_test, a.n_iter, a.burn_in,
                  a.n_orders, out_dir=a.out, first_rep=a.first_rep)
    print(json.dumps(summarize(res), indent=1))


if __name__ == "__main__":
    main()
