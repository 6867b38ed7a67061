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
import math
import time
from pathlib import Path

import numpy as np
import pandas as pd

from bnma_core.classifiers.order_bma import FixedOrderBMA, OrderMCMCBMA
from bnma_core.network import load_network
from bnma_core.structure.orders import LOG2E
from bnma_core.viz.mcmc import orders_accuracy_figure, rank_correlation_figure, trace_figure

CLASS_VARIABLES = ("CATECHOL", "SHUNT")
SIZES = (25, 50, 100, 500, 1000)
N_ORDERS_COMPARED = (1, 5, 10, 30)
MISSING_PCTS = (5, 10, 20)
JS = "directory"  # figures share one plotly.min.js next to them
PAPER = {
    "fig6_mean_spearman": "< 0.1 at n = 25, about 0.5 at n = 500 and 1000",
    "fig7": "BMA over 10 orders >= over 1 order at every size; original order best, reversed "
            "worst; the 1-vs-10 gap is largest at n = 50 and 100 and vanishes at 500-1000",
    "fig9": "multiple orders always beat a single order; the gap grows with the missing share",
}


def _mask_features(codes: np.ndarray, class_index: int, pct: float,
                   rng: np.random.Generator) -> np.ndarray:
    out = codes.copy()
    feats = np.array([i for i in range(codes.shape[1]) if i != class_index])
    k = int(round(pct / 100 * len(feats)))
    for row in out:
        row[rng.choice(feats, size=k, replace=False)] = -1
    return out


def _train_sample(bn, size: int, rep: int, ci: int) -> tuple[np.ndarray, int]:
    """Training codes of one repetition (redrawn while the class has a single value) and the
    number of redraws."""
    seed, resampled = 100000 + 100 * size + rep, 0
    while True:
        tr = bn.sample_codes(size, seed=seed)
        if len(np.unique(tr[:, ci])) > 1:
            return tr, resampled
        seed += 7919
        resampled += 1


def _accuracy(clf, p: np.ndarray, yte: np.ndarray) -> float:
    # classes absent from training are never predicted; accuracy counts them wrong
    return float(np.mean(clf.classes_[p.argmax(axis=1)] == yte))


def _order_count_rows(clf, lj: np.ndarray, compared: list[int], base: dict,
                      yte: np.ndarray) -> list[dict]:
    """Accuracy with k of the kept orders (joint and mean-posterior combination)."""
    rows = []
    for k in compared:
        rows.append({**base, "method": f"{k} order" + "s" * (k > 1),
                     "accuracy": _accuracy(clf, clf.proba_from_log_joints(lj, k), yte)})
    for k in compared:
        if k > 1:
            rows.append({**base, "method": f"{k} orders, mean posterior",
                         "accuracy": _accuracy(clf, clf.proba_from_log_joints(
                             lj, k, "posterior"), yte)})
    return rows


def _one_rep(bn, cv: str, ctx: dict, size: int, rep: int, p: dict) -> dict:
    """Fit one training sample; rows for the three tables and, if kept, its trace."""
    ci, feats, topo_clf, yte = ctx["ci"], ctx["feats"], ctx["topo_clf"], ctx["yte"]
    tr, resampled = _train_sample(bn, size, rep, ci)
    Xtr, ytr, ar = tr[:, feats], tr[:, ci], bn.arities[feats]
    t0 = time.perf_counter()
    clf = OrderMCMCBMA(n_iter=p["n_iter"], burn_in=p["burn_in"], n_orders=p["n_orders"],
                       max_parents=p["max_parents"], start="reversed", start_order=topo_clf,
                       reference_order=topo_clf, random_state=rep)
    clf.fit(Xtr, ytr, arities=ar)
    out = {"t_fit": time.perf_counter() - t0, "trace": None, "missing": []}
    out["spearman"] = {"class_variable": cv, "n_train": size, "rep": rep,
                       "spearman": float(clf.trace_["spearman"].iloc[p["burn_in"]:].mean()),
                       "acceptance_rate": clf.acceptance_rate_, "resampled": resampled}
    if rep == p["first_rep"] and size in (min(p["sizes"]), max(p["sizes"])):
        out["trace"] = (clf.trace_, clf.table_.order_log_score(np.asarray(topo_clf)) * LOG2E)
    base = {"class_variable": cv, "n_train": size, "rep": rep}
    lj = clf.order_log_joints(ctx["Xte"])
    acc = _order_count_rows(clf, lj, p["compared"], base, yte)
    for name, order in (("original order", topo_clf), ("reversed order", topo_clf[::-1])):
        fo = FixedOrderBMA(order=order, max_parents=p["max_parents"]).fit(Xtr, ytr, arities=ar)
        acc.append({**base, "method": name,
                    "accuracy": float(np.mean(fo.predict(ctx["Xte"]) == yte))})
    acc.append({**base, "method": "Bayes optimal", "accuracy": ctx["optimal"]})
    out["accuracy"] = acc
    if size == p["missing_n_train"]:
        clf.set_params(missing="impute")
        for pct, codes in ctx["miss_sets"].items():
            ljm = clf.order_log_joints(codes[:, feats])
            mb = {**base, "missing_pct": pct}
            out["missing"] += _order_count_rows(clf, ljm, p["compared"], mb, yte)
            out["missing"].append({**mb, "method": "Bayes optimal",
                                   "accuracy": ctx["optimal_missing"][pct]})
    return out


def _class_context(bn, cv: str, test_codes: np.ndarray, topo: list[int],
                   missing_pcts) -> dict:
    """Per class variable: feature indices, the topological order in classifier indices, the
    test set (complete and with masked features) and the Bayes-optimal accuracies."""
    n = bn.n_vars
    ci = bn.index(cv)
    feats = [i for i in range(n) if i != ci]
    to_clf = {v: j for j, v in enumerate(feats)}
    to_clf[ci] = len(feats)
    yte = test_codes[:, ci]
    post = bn.class_posterior(cv, test_codes)
    miss_sets = {pct: _mask_features(test_codes, ci, pct, np.random.default_rng(pct))
                 for pct in missing_pcts}
    return {"ci": ci, "feats": feats, "topo_clf": [to_clf[v] for v in topo],
            "Xte": test_codes[:, feats], "yte": yte,
            "optimal": float(np.mean(post.argmax(axis=1) == yte)), "miss_sets": miss_sets,
            "optimal_missing": {pct: float(np.mean(bn.class_posterior(cv, c).argmax(axis=1)
                                                   == yte)) for pct, c in miss_sets.items()}}


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


def summarize(res: dict[str, pd.DataFrame]) -> dict:
    """Means per cell, next to the paper's statements."""
    sp = res["spearman"].groupby(["class_variable", "n_train"])["spearman"].agg(["mean", "std"])
    acc = res["accuracy"].pivot_table(index=["class_variable", "n_train"], columns="method",
                                      values="accuracy", aggfunc="mean")
    out = {"spearman": {f"{a} n={b}": [round(m, 3), round(s, 3) if not math.isnan(s) else None]
                        for (a, b), (m, s) in sp.iterrows()},
           "accuracy": {f"{a} n={b}": {k: round(v, 4) for k, v in row.items()}
                        for (a, b), row in acc.iterrows()},
           "paper": PAPER}
    if len(res["missing"]):
        mi = res["missing"].pivot_table(index=["class_variable", "missing_pct"],
                                        columns="method", values="accuracy", aggfunc="mean")
        out["missing"] = {f"{a} {b}%": {k: round(v, 4) for k, v in row.items()}
                          for (a, b), row in mi.iterrows()}
    return out


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
