"""Dash & Cooper (2002), ROC-area gain of model-averaged over MAP naive Bayes (Figs. 2-5), as a
grid of cells for :mod:`bnma_core.reproduce`.

One cell = one trial of Procedure 2 (a fresh Procedure-1 network or fresh records of ALARM /
HEPAR II, MAP naive Bayes eq. 6 (``NaiveBayes(alpha=1)``, computed from the same fit as
``MANaiveBayes.predict_proba_map``) against ``MANaiveBayes`` theta* eq. 10-12, K2, uniform
structure prior); its key is (test, series, param, value, trial) and holds the seed
(derived from those, not from the execution order). Δ_ROC = (R̂ − R)/R, δ_ROC = (R̂ − R)/(1 − R)
(:func:`roc_gains`). ``experiments/manb_roc.py`` runs the same cells with joblib and writes CSVs.
"""

from __future__ import annotations

import time
from functools import lru_cache

import numpy as np
import pandas as pd
from scipy import stats

from bnma_core.classifiers.manb import MANaiveBayes
from bnma_core.synthetic import random_network

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


def roc_area(positive: np.ndarray, score: np.ndarray) -> float:
    """Area under the ROC curve of a binary ``score`` by the Mann-Whitney identity
    AUC = (sum of the positives' mid-ranks − n₁(n₁ + 1)/2) / (n₁ n₀), ties counting one half:
    the same number as ``sklearn.metrics.roc_auc_score`` (tested to 1e-12) without its input
    validation, which took a quarter of a small cell's time."""
    positive = np.asarray(positive, dtype=bool)
    n1 = int(positive.sum())
    n0 = len(positive) - n1
    if n1 == 0 or n0 == 0:
        raise ValueError("the ROC area needs both classes among the test records")
    ranks = stats.rankdata(score)
    return float((ranks[positive].sum() - n1 * (n1 + 1) / 2) / (n1 * n0))


def compare_on(X_train: np.ndarray, y_train: np.ndarray, X_test: np.ndarray,
               y_test: np.ndarray, arities: np.ndarray) -> tuple[float, float]:
    """ROC areas (R of the MAP naive Bayes, R̂ of the MA naive Bayes) for a binary class.

    One :class:`MANaiveBayes` fit gives both: θ* (eq. 10-12) for R̂ and the MAP naive Bayes
    (eq. 6, every arc; ``predict_proba_map`` = ``NaiveBayes(alpha=1)``) for R."""
    ma = MANaiveBayes(alpha=1.0, scoring="k2", arc_prior=0.5).fit(X_train, y_train,
                                                                 arities=arities)
    positive = y_test == ma.classes_[1]
    r_ma = roc_area(positive, ma.predict_proba(X_test)[:, 1])
    r_map = roc_area(positive, ma.predict_proba_map(X_test)[:, 1])
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




# ---- the reproduction: grid, cell, report ----------------------------------------------
TITLE = "Dash & Cooper (2002): exact model averaging with naive Bayes — ROC-area gains (Fig. 2-5)"
QUICK: dict[str, tuple[list[int], int]] = {  # test -> (values, trials): a few minutes
    "nodes": ([5, 20, 200], 20),
    "worst": ([25, 200, 800], 20),
    "alarm": ([25, 800, 12800], 10),
}


def _keys(test: str, trials: int, seed: int = 0, values: list[int] | None = None) -> list[dict]:
    keys = []
    for test_, series, param, value, trial, kw in _tasks(test, trials, seed, smoke=False):
        if values is None or value in values:
            keys.append({"test": test_, "series": series, "param": param, "value": value,
                         "trial": trial, **kw})
    return keys


def grid(quick: bool = False, seed: int = 0) -> list[dict]:
    """Full: every test at the paper's number of trials (~27,000 cells). Quick: :data:`QUICK`.
    A quick cell has the same key (and seed) as the full grid's cell at that point, so a later
    full run reuses it."""
    keys: list[dict] = []
    if quick:
        for test, (values, trials) in QUICK.items():
            keys += _keys(test, trials, seed, values)
    else:
        for test, spec in TESTS.items():
            keys += _keys(test, spec["paper_trials"], seed)
    return keys


def config(quick: bool = False) -> dict:
    tests = ({t: f"values {v}, {n} trials" for t, (v, n) in QUICK.items()} if quick else
             {t: f"values {s['values']}, {s['paper_trials']} trials" for t, s in TESTS.items()})
    return {"grid": "quick" if quick else "full", **{f"test {k}": v for k, v in tests.items()},
            "classifiers": "MAP naive Bayes = NaiveBayes(alpha=1) (MANaiveBayes.predict_proba_map)"
                           " vs MANaiveBayes(alpha=1, K2, arc prior 0.5)",
            "confidence intervals": "99 % Student t (as the paper's solid error bars)"}


def cell(key: dict) -> dict:
    """One trial: R (MAP NB), R̂ (MA NB), Δ_ROC, δ_ROC, redraws."""
    kw = {k: key[k] for k in ("n_features", "max_parents", "n_train", "n_test", "seed")
          if k in key}
    row = _run_task((key["test"], key["series"], key["param"], key["value"], key["trial"], kw))
    return {k: row[k] for k in ("R", "R_hat", "redraws", "Delta", "delta")}


def _trials_frame(cells: pd.DataFrame) -> pd.DataFrame:
    rows = [{**{k: key[k] for k in ("test", "series", "param", "value", "trial")}, **res}
            for key, res in zip(cells["key"], cells["result"], strict=True)]
    df = pd.DataFrame(rows)
    df["_t"] = df["test"].map(list(TESTS).index)
    return df.sort_values(["_t", "series", "value", "trial"], ignore_index=True).drop(
        columns="_t")


def _point(summary: pd.DataFrame, test: str, value: int, series: str = "") -> pd.Series | None:
    s = summary[(summary["test"] == test) & (summary["value"] == value)
                & (summary["series"] == series)]
    return None if s.empty else s.iloc[0]


def _fmt(r: pd.Series, key: str = "Delta") -> str:
    return (f"{100 * r[f'{key}_mean']:+.1f} ± {100 * r[f'{key}_ci99']:.1f} % "
            f"(99 % CI, {int(r['n'])} trials)")


def check_claims(summary: pd.DataFrame, trials: pd.DataFrame) -> list[dict]:
    """The paper's claims (section 4) against the summary of our trials."""
    return (_claims_nodes(summary, trials) + _claims_records_density(summary)
            + _claims_worst_networks(summary))


def _claims_nodes(summary: pd.DataFrame, trials: pd.DataFrame) -> list[dict]:
    """Fig. 2a: the gain once N > 150, and its growth with the number of features."""
    from .report import NOT_CHECKABLE, NOT_REPRODUCED, REPRODUCED, claim

    out = []
    nodes = summary[summary["test"] == "nodes"].sort_values("value")
    big = nodes[nodes["value"] >= 150]
    text = "MA beats MAP naive Bayes by Δ_ROC ≈ +5 %, δ_ROC ≈ +10 % once N > 150 (Fig. 2a)"
    if big.empty:
        out.append(claim(text, "Δ ≈ +5 %, δ ≈ +10 %", "no point with N ≥ 150", NOT_CHECKABLE,
                         "the grid has no nodes-test point with N ≥ 150"))
    else:
        r = big.iloc[-1]
        lo = r["Delta_mean"] - r["Delta_ci99"]
        ok = lo > 0 and 0.025 <= r["Delta_mean"] <= 0.10
        out.append(claim(text, "Δ ≈ +5 %, δ ≈ +10 %",
                         f"N = {int(r['value'])}: Δ {_fmt(r)}, δ {_fmt(r, 'delta')}",
                         REPRODUCED if ok else NOT_REPRODUCED,
                         "" if ok else "the 99 % CI of Δ includes 0 or its mean is more than a "
                         "factor 2 from +5 %"))
    text = "the gain grows with the number of features N (Fig. 2a)"
    if len(nodes) < 2:
        out.append(claim(text, "rising, levelling off above 150", "fewer than two N",
                         NOT_CHECKABLE, "the grid has fewer than two nodes-test points"))
    else:
        lo_v, hi_v = int(nodes["value"].iloc[0]), int(nodes["value"].iloc[-1])
        t = trials[trials["test"] == "nodes"]
        a, b = t[t["value"] == lo_v]["Delta"], t[t["value"] == hi_v]["Delta"]
        p = float(stats.ttest_ind(b, a, equal_var=False).pvalue) if len(a) > 1 else np.nan
        ok = b.mean() > a.mean() and p < 0.01
        out.append(claim(text, "rising, levelling off above 150",
                         f"Δ {100 * a.mean():+.2f} % at N = {lo_v}, {100 * b.mean():+.2f} % at "
                         f"N = {hi_v} (Welch p = {p:.2g})", REPRODUCED if ok else NOT_REPRODUCED,
                         "" if ok else "the difference is not significant at 1 %"))
    return out


def _claims_records_density(summary: pd.DataFrame) -> list[dict]:
    """Fig. 2b (gain over the number of records) and Fig. 2c (generator density)."""
    from .report import NOT_CHECKABLE, NOT_REPRODUCED, REPRODUCED, claim

    out = []
    rec = summary[summary["test"] == "records"].sort_values("value")
    text = ("every N_r gives a gain significant at 99 %, with a maximum Δ ≈ 5 % between 200 and "
            "800 records (Fig. 2b)")
    if rec.empty:
        out.append(claim(text, "all significant; max Δ ≈ 5 % at 200-800", "not run",
                         NOT_CHECKABLE, "the records test is not in this grid (full run only)"))
    else:
        sig = (rec["Delta_mean"] - rec["Delta_ci99"] > 0)
        peak = int(rec.loc[rec["Delta_mean"].idxmax(), "value"])
        ok = bool(sig.all()) and 200 <= peak <= 800
        out.append(claim(text, "all significant; max Δ ≈ 5 % at 200-800",
                         f"{int(sig.sum())}/{len(rec)} significant; maximum at N_r = {peak} "
                         f"({100 * rec['Delta_mean'].max():+.1f} %)",
                         REPRODUCED if ok else NOT_REPRODUCED,
                         "" if ok else "not all points significant or the peak lies elsewhere"))
    den = summary[summary["test"] == "density"]
    text = ("sparse generators (N_k < 10) give Δ ≈ 4-6 %; very dense ones a gain 2-3 times "
            "smaller (Fig. 2c)")
    if den.empty:
        out.append(claim(text, "Δ 4-6 % at N_k < 10, / 2-3 when dense", "not run",
                         NOT_CHECKABLE, "the density test is not in this grid (full run only)"))
    else:
        sp, de = den[den["value"] < 10]["Delta_mean"], den[den["value"] >= 60]["Delta_mean"]
        ok = len(sp) and len(de) and 0.03 <= sp.mean() <= 0.07 and de.mean() < sp.mean() / 1.5
        out.append(claim(text, "Δ 4-6 % at N_k < 10, / 2-3 when dense",
                         f"Δ {100 * sp.mean():+.1f} % sparse, {100 * de.mean():+.1f} % dense",
                         REPRODUCED if ok else NOT_REPRODUCED,
                         "" if ok else "levels or ratio differ from the paper's"))
    return out


def _claims_worst_networks(summary: pd.DataFrame) -> list[dict]:
    """Fig. 3 (the worst case) and Figs. 4-5 (ALARM, HEPAR)."""
    from .report import NOT_CHECKABLE, NOT_REPRODUCED, REPRODUCED, claim

    out = []
    wc = summary[summary["test"] == "worst"]
    text = ("worst case (N = 5, N_k = 5): little if any significant gain, and MAP is never "
            "significantly better (Fig. 3)")
    if wc.empty:
        out.append(claim(text, "no significant difference", "not run", NOT_CHECKABLE,
                         "the worst-case test is not in this grid"))
    else:
        worse = int((wc["Delta_mean"] + wc["Delta_ci99"] < 0).sum())
        small = bool((wc["Delta_mean"].abs() < 0.01).all())
        ok = worse == 0 and small
        out.append(claim(text, "no significant difference",
                         f"|Δ| ≤ {100 * wc['Delta_mean'].abs().max():.2f} % at every N_r; MAP "
                         f"significantly better at {worse} of {len(wc)} points",
                         REPRODUCED if ok else NOT_REPRODUCED,
                         "" if ok else "MAP significantly better somewhere, or a gain ≥ 1 %"))
    for test, figure, paper in (("alarm", "Fig. 4", "gains on average, several points not "
                                 "significant; MAP better at two anaphylaxis points (95 %)"),
                                ("hepar", "Fig. 5", "typically significant gains at 99 %, "
                                 "not always")):
        t = summary[summary["test"] == test]
        text = f"{TESTS[test]['network'].upper()}: MA improves the ROC area on average ({figure})"
        if t.empty:
            out.append(claim(text, paper, "not run", NOT_CHECKABLE,
                             f"the {test} test is not in this grid"))
            continue
        pos = int((t["Delta_mean"] - t["Delta_ci99"] > 0).sum())
        neg = int((t["Delta_mean"] + t["Delta_ci99"] < 0).sum())
        ok = t["Delta_mean"].mean() > 0 and pos >= 1
        out.append(claim(text, paper, f"mean Δ over points {100 * t['Delta_mean'].mean():+.1f} %;"
                         f" {pos} of {len(t)} points significant gains, {neg} significant "
                         "losses (99 %)", REPRODUCED if ok else NOT_REPRODUCED,
                         "" if ok else "no significant gain at any point"))
    return out


def report(cells: pd.DataFrame, meta: dict) -> str:
    """The HTML report: claims, the summary table (Δ, δ with 99 % CIs), one figure per test."""
    from bnma_core.viz.naive import roc_gain_figure

    from .report import build_report

    trials = _trials_frame(cells)
    summary = summarize(trials)
    claims = check_claims(summary, trials)
    sections: list[tuple[str, object]] = []
    for test in summary["test"].unique():
        spec = TESTS[test]
        sub = summary[summary["test"] == test].rename(columns={"value": spec["param"]})
        if "classes" not in spec:
            sub = sub.drop(columns="series")
        sections.append((spec["title"], roc_gain_figure(sub, spec["param"], spec["title"],
                                                         spec["x_title"], spec["log_x"])))
    tab = summary.copy()
    for k in ("Delta", "delta"):
        tab[f"{k} % (99 % CI)"] = [f"{100 * m:+.2f} ± {100 * h:.2f}"
                                  for m, h in zip(tab[f"{k}_mean"], tab[f"{k}_ci99"],
                                                  strict=True)]
    sections.append(("Summary per point", tab[["test", "series", "param", "value", "n",
                                                "R_mean", "R_hat_mean", "Delta % (99 % CI)",
                                                "delta % (99 % CI)", "redraws"]]))
    return build_report(TITLE, claims, sections, meta.pop("config", {}), meta)
