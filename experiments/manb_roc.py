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
from functools import lru_cache
from pathlib import Path

import numpy as np
import pandas as pd
from joblib import Parallel, delayed
from scipy import stats
from sklearn.metrics import roc_auc_score

from bnma_core.classifiers.manb import MANaiveBayes
from bnma_core.classifiers.naive_bayes import NaiveBayes
from bnma_core.synthetic import random_network
from bnma_core.viz.naive import roc_gain_figure

RECORDS = [25, 50, 100, 200, 800, 2000, 3200, 12800]
TESTS: dict[str, dict] = {
    "nodes": dict(param="n_features", values=[5, 10, 20, 40, 80, 100, 150, 200, 500],
                  fixed=dict(n_train=200, n_test=100, max_parents=5), paper_trials=500,
                  log_x=True, x_title="number of features N",
                  title="Nodes test (N_r = 200, N_k = 5) — Fig. 2(a)"),
    "records": dict(param="n_train", values=RECORDS,
                    fixed=dict(n_features=200, n_test=100, max_parents=5), paper_trials=200,
                    log_x=True, x_title="training records N_r",
                    title="Training-records test (N = 200, N_k = 5) — Fig. 2(b)"),
    "density": dict(param="max_parents",
                    values=[1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 20, 40, 60, 80, 100, 150, 200],
                    fixed=dict(n_features=200, n_train=200, n_test=100), paper_trials=500,
                    log_x=True, x_title="maximum in-degree N_k",
                    title="Density test (N = 200, N_r = 200) — Fig. 2(c)"),
    "worst": dict(param="n_train", values=RECORDS,
                  fixed=dict(n_features=5, n_test=100, max_parents=5), paper_trials=1000,
                  log_x=True, x_title="training records N_r",
                  title="Worst case (N = 5, N_k = 5) — Fig. 3"),
    "alarm": dict(param="n_train", values=RECORDS, network="alarm",
                  classes=["ANAPHYLAXIS", "HYPOVOLEMIA"], fixed=dict(n_test=1000),
                  paper_trials=100, log_x=True, x_title="training records N_r",
                  title="ALARM — Fig. 4"),
    "hepar": dict(param="n_train", values=RECORDS, network="hepar2",
                  classes=["THepatitis", "Hyperbilirubinemia"], fixed=dict(n_test=500),
                  paper_trials=200, log_x=True, x_title="training records N_r",
                  title="HEPAR II — Fig. 5"),
}
MAX_REDRAWS = 1000


def roc_gains(r_map: float, r_ma: float) -> tuple[float, float]:
    """Δ_ROC = (R̂ − R)/R and δ_ROC = (R̂ − R)/(T − R) with T = 1, δ = 0 when R = T."""
    delta_big = (r_ma - r_map) / r_map
    delta_small = 0.0 if r_map >= 1.0 else (r_ma - r_map) / (1.0 - r_map)
    return delta_big, delta_small


def _usable(y_train: np.ndarray, y_test: np.ndarray) -> bool:
    return len(np.unique(y_train)) == 2 and len(np.unique(y_test)) == 2


def compare_on(X_train: np.ndarray, y_train: np.ndarray, X_test: np.ndarray,
               y_test: np.ndarray, arities: np.ndarray) -> tuple[float, float]:
    """ROC areas (R of the MAP naive Bayes, R̂ of the MA naive Bayes) for a binary class."""
    ma = MANaiveBayes(alpha=1.0, scoring="k2", arc_prior=0.5).fit(X_train, y_train,
                                                                 arities=arities)
    nb = NaiveBayes(alpha=1.0).fit(X_train, y_train, arities=arities)
    positive = y_test == ma.classes_[1]
    r_ma = roc_auc_score(positive, ma.predict_proba(X_test)[:, 1])
    r_map = roc_auc_score(positive, nb.predict_proba(X_test)[:, 1])
    return float(r_map), float(r_ma)


def random_network_trial(n_features: int, max_parents: int, n_train: int, n_test: int,
                         seed: int) -> dict:
    """One trial of Procedure 2 on a fresh Procedure-1 network (binary nodes)."""
    for attempt in range(MAX_REDRAWS):
        net = random_network(n_features, max_parents, seed=[seed, attempt])
        codes = net.sample(n_train + n_test)
        feats = [i for i in range(net.n_nodes) if i != net.class_index]
        X, y = codes[:, feats], codes[:, net.class_index]
        if _usable(y[:n_train], y[n_train:]):
            r_map, r_ma = compare_on(X[:n_train], y[:n_train], X[n_train:], y[n_train:],
                                     net.arities[feats])
            return dict(R=r_map, R_hat=r_ma, redraws=attempt)
    raise RuntimeError("no usable draw: the class never took both values")


@lru_cache(maxsize=4)
def _bundled_network(name: str):
    from bnma_core.network import load_network

    return load_network(name)


def network_trial(network: str, class_variable: str, n_train: int, n_test: int,
                  seed: int) -> dict:
    """One trial on a bundled network: fresh training and test records by forward sampling."""
    bn = _bundled_network(network)
    for attempt in range(MAX_REDRAWS):
        ds = bn.sample(n_train + n_test, seed=[seed, attempt], class_variable=class_variable)
        X, y = ds.X, ds.y
        if _usable(y[:n_train], y[n_train:]):
            feats = ds.feature_indices
            r_map, r_ma = compare_on(X[:n_train], y[:n_train], X[n_train:], y[n_train:],
                                     ds.arities[feats])
            return dict(R=r_map, R_hat=r_ma, redraws=attempt)
    raise RuntimeError(f"{class_variable}: no sample with both classes in {MAX_REDRAWS} draws")


def _tasks(test: str, trials: int, seed: int, smoke: bool) -> list[tuple]:
    spec = TESTS[test]
    values = spec["values"]
    fixed = dict(spec["fixed"])
    if smoke:  # a few small points: exercises every code path in seconds
        values = [v for v in values if v <= 200][:2]
        if "n_features" in fixed:
            fixed["n_features"] = min(fixed["n_features"], 20)
        fixed["n_test"] = min(fixed["n_test"], 100)
    series = spec.get("classes", [""])
    tasks = []
    for s_idx, series_name in enumerate(series):
        for v_idx, v in enumerate(values):
            for t in range(trials):
                kw = {**fixed, spec["param"]: int(v),
                      "seed": int(seed * 1_000_003 + (hash_test(test) * 131 + s_idx) * 10_007
                                  + v_idx * 1009 + t)}
                tasks.append((test, series_name, spec["param"], int(v), t, kw))
    return tasks


def hash_test(test: str) -> int:
    """A stable small integer per test name (Python's hash() is salted per process)."""
    return sum((i + 1) * ord(ch) for i, ch in enumerate(test)) % 997


def _run_task(task: tuple) -> dict:
    test, series_name, param, value, trial, kw = task
    t0 = time.perf_counter()
    spec = TESTS[test]
    if "network" in spec:
        res = network_trial(spec["network"], series_name, kw["n_train"], kw["n_test"],
                            kw["seed"])
    else:
        res = random_network_trial(kw["n_features"], kw["max_parents"], kw["n_train"],
                                   kw["n_test"], kw["seed"])
    d_big, d_small = roc_gains(res["R"], res["R_hat"])
    return dict(test=test, series=series_name, param=param, value=value, trial=trial,
                seed=kw["seed"], **res, Delta=d_big, delta=d_small,
                seconds=time.perf_counter() - t0)


def summarize(trials: pd.DataFrame) -> pd.DataFrame:
    """Mean, standard deviation and 99% confidence half-width (Student t) of Δ_ROC and δ_ROC
    per test, series and parameter value, with a one-sample t-test p-value (mean = 0)."""
    rows = []
    for (test, series, param, value), g in trials.groupby(
            ["test", "series", "param", "value"], sort=False):
        n = len(g)
        row = dict(test=test, series=series, param=param, value=value, n=n,
                   R_mean=g["R"].mean(), R_hat_mean=g["R_hat"].mean(),
                   redraws=int(g["redraws"].sum()))
        for key in ("Delta", "delta"):
            v = g[key].to_numpy()
            sd = float(v.std(ddof=1)) if n > 1 else float("nan")
            half = float(stats.t.ppf(0.995, n - 1) * sd / np.sqrt(n)) if n > 1 else float("nan")
            row.update({f"{key}_mean": float(v.mean()), f"{key}_sd": sd, f"{key}_ci99": half,
                        f"{key}_p": float(stats.ttest_1samp(v, 0.0).pvalue) if n > 1 and sd > 0
                        else float("nan")})
        rows.append(row)
    return pd.DataFrame(rows)


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
