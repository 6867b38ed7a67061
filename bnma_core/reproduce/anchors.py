"""Our methods against Weka and pyAgrum on Weka's own folds, as a grid of cells for
:mod:`bnma_core.reproduce`: ``bnma reproduce anchors [--quick]``.

The anchors (the shared ``anchors`` folder next to the repository, or the folder named by the
environment variable ``BNMA_ANCHORS``; not part of a clone, see its README) are seven
all-nominal datasets, the test fold (0-9) of every row in Weka's ``-x 10 -s 1`` stratified
cross-validation, and the accuracy of 38 Weka / pyAgrum configurations on them. One cell = one
(dataset, method, fold): the method is trained on the rows whose fold is not k and tested on
fold k -- the rows Weka used -- so per dataset the mean of the ten cell accuracies is the
anchors' ``acc_mean``, with its standard error sd / sqrt(10), and the mean of the ten cell
log-losses (−ln max(p(true class), 1e-15), mean over the fold's rows) and Brier scores is the
anchors' ``logloss_mean`` / ``brier_mean`` (``proba_results.csv``).

The target for the recommended method (:func:`target_claims`): a lower mean log-loss than every
anchor configuration, within :data:`LOGLOSS_WITHIN` of the best configuration on at least 5 of
the 7 datasets, and the best mean accuracy rank (Demšar 2006), each with the Bayesian
signed-rank verdict over the datasets (Benavoli et al. 2017; :mod:`bnma_core.comparison`).

Win / tie / loss: against the best anchor of the dataset (the best of all 38 configurations,
itself chosen on the test folds, a choice a user cannot make); a tie is a difference within half
a point (:data:`TIE`), as the accuracy target asks (docs/accuracy.md §8). Coding: every
attribute is nominal; the states of a column are the values in the whole file (no label
information), so a value absent from a training fold still has a parameter. Our methods use
their registry defaults (randomized ones with ``random_state`` = the key's seed); nothing is
chosen on a test fold.

``experiments/anchors.py`` is the command-line front end of the same functions (joblib instead
of Dask, markdown table, ``--methods`` / ``--datasets``).
"""

from __future__ import annotations

import os
import time
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from bnma_core.classifiers.registry import MethodSpec
from bnma_core.metrics import row_scores

__all__ = ["ANCHORS", "DATASETS", "TIE", "BEST_SINGLE_ANCHOR_MEAN", "TARGET", "LOGLOSS_WITHIN",
           "ROPE", "load", "anchor_table", "anchor_configurations", "ceilings", "make_method",
           "run_fold", "run_method", "summarize", "overview", "markdown", "run",
           "comparison_table", "target_claims", "grid", "config", "cell", "report"]

ROOT = Path(__file__).resolve().parents[2]
ANCHORS = Path(os.environ.get("BNMA_ANCHORS", ROOT.parent / "shared" / "anchors"))
"""Default anchors folder: ``$BNMA_ANCHORS``, else the shared ``anchors`` folder next to the
repository."""
DATASETS = ("wbc", "contact-lenses", "breast-cancer", "vote", "iris", "glass", "diabetes")
TIE = 0.005
BEST_SINGLE_ANCHOR_MEAN = 0.8145  # Weka BayesNet HC-P3 over the seven (anchors README)
LOGLOSS_WITHIN = 0.02
TARGET = {"within": 5}
"""The target for the recommended method (the accuracy target of docs/accuracy.md §8 restated
for probabilities, :func:`target_claims`): a lower mean log-loss than every anchor configuration,
within :data:`LOGLOSS_WITHIN` of the best configuration on at least ``within`` of the 7
datasets, the best mean accuracy rank."""
ROPE = {"log_loss": 0.01, "accuracy": TIE}
"""Regions of practical equivalence of the Bayesian signed-rank verdicts: 0.01 log-loss (half
the per-dataset margin of the target), half a point of accuracy (the tie of docs/accuracy.md §8)."""

TITLE = "Reference results: BNMA Studio's methods against Weka and pyAgrum on Weka's folds"
QUICK_DATASETS = ("contact-lenses", "iris", "breast-cancer")


def _dir(anchors: str | Path | None) -> Path:
    path = ANCHORS if anchors is None else Path(anchors)
    if not (path / "results.csv").exists():
        raise FileNotFoundError(
            f"no anchors at {path}: the shared anchors folder next to the repository (or "
            "the folder named by BNMA_ANCHORS) is needed for this comparison")
    return path


def missing_inputs(quick: bool = False) -> str | None:
    """The anchors folder is not part of the package: say where it was looked for and how to
    name it (:func:`bnma_core.reproduce.papers.missing_inputs`)."""
    path = ANCHORS
    # the quick grid runs the recommended method on all seven; its own three are named first
    datasets = (*QUICK_DATASETS, *(d for d in DATASETS if d not in QUICK_DATASETS)) if quick \
        else DATASETS
    if not (path / "results.csv").exists():
        return (f"anchors: the anchors folder (Weka's folds and the Weka / pyAgrum results) "
                f"was not found at {path}; it is not part of the package. Set "
                "BNMA_ANCHORS=/path/to/anchors (the folder holding results.csv, data/ and folds/) "
                "and run again.")
    absent = [d for d in datasets if not (path / "data" / f"{d}.csv").exists()
              or not (path / "folds" / f"{d}.weka.txt").exists()]
    if absent:
        return (f"anchors: {path} lacks the data or folds of {', '.join(absent)}; the folder "
                "named by BNMA_ANCHORS must hold data/NAME.csv and folds/NAME.weka.txt for each.")
    return None


@lru_cache(maxsize=16)
def _load(name: str, anchors: str) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    root = Path(anchors)
    if name not in DATASETS and not (root / "data" / f"{name}.csv").exists():
        raise ValueError(f"unknown anchors dataset {name!r}; choose from {', '.join(DATASETS)}")
    df = pd.read_csv(root / "data" / f"{name}.csv", dtype=str, keep_default_na=False)
    folds = np.loadtxt(root / "folds" / f"{name}.weka.txt", dtype=np.int64)
    if len(folds) != len(df):
        raise ValueError(f"{name}: {len(df)} rows but {len(folds)} fold labels.")
    feats, target = list(df.columns[:-1]), df.columns[-1]   # the class is the last column
    cols = [pd.factorize(df[c], sort=True) for c in feats]
    X = np.column_stack([codes for codes, _ in cols]).astype(np.int32)
    ar = np.array([len(u) for _, u in cols], dtype=np.int64)
    y = pd.factorize(df[target], sort=True)[0].astype(np.int32)
    for a in (X, y, ar, folds):
        a.setflags(write=False)
    return X, y, ar, folds


def load(name: str, anchors: str | Path | None = None
         ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Codes (n, p) int32, class codes, feature arities and Weka's test fold of every row
    (read-only arrays, cached)."""
    return _load(name, str(_dir(anchors)))


def anchor_table(anchors: str | Path | None = None) -> pd.DataFrame:
    """Best Weka and best pyAgrum configuration per dataset (by acc_mean)."""
    r = pd.read_csv(_dir(anchors) / "results.csv").dropna(subset=["acc_mean"])
    r["family"] = np.where(r["tool"].str.startswith("weka"), "weka", "pyagrum")
    recs = []
    for ds, g in r.groupby("dataset", sort=False):
        rec: dict[str, Any] = {"dataset": ds}
        for fam in ("weka", "pyagrum"):
            b = g[g["family"] == fam].sort_values("acc_mean", ascending=False).iloc[0]
            rec[f"best_{fam}"] = float(b["acc_mean"])
            rec[f"best_{fam}_method"] = str(b["method"])
        rec["best_anchor"] = max(rec["best_weka"], rec["best_pyagrum"])
        recs.append(rec)
    return pd.DataFrame(recs)


def _cell_class_counts(cells: np.ndarray, y: np.ndarray, n_cells: int, n_classes: int
                       ) -> np.ndarray:
    """(n_cells, n_classes) counts of the rows of each cell of the attribute table by class."""
    counts = np.zeros((n_cells, n_classes), dtype=np.int64)
    np.add.at(counts, (cells, y), 1)
    return counts


def ceilings(anchors: str | Path | None = None, datasets: tuple[str, ...] = DATASETS
             ) -> pd.DataFrame:
    """What the data allow on Weka's folds, per dataset (docs/accuracy.md §9).

    ``single_rule``: the accuracy on all rows of the best single function of the attributes
    (the majority class of each occupied cell of the attribute table) — no rule does better;
    ``fold_oracle``: the mean over folds of the best function of each *test* fold (the bound
    for any learner, which may predict a cell differently from fold to fold); ``lookup_table``:
    the cell-majority table learned on each training fold (a cell absent from training gets
    the training majority), a memorising baseline.
    """
    recs = []
    for name in datasets:
        X, y, _, folds = load(name, anchors)
        _, cells = np.unique(X, axis=0, return_inverse=True)
        cells = cells.ravel()
        shape = (int(cells.max()) + 1, int(y.max()) + 1)
        per_fold, lookup = [], []
        for k in range(int(folds.max()) + 1):
            te = folds == k
            test = _cell_class_counts(cells[te], y[te], *shape)
            per_fold.append(test.max(axis=1).sum() / te.sum())
            train = _cell_class_counts(cells[~te], y[~te], *shape)
            fallback = int(train.sum(axis=0).argmax())
            pred = np.where(train.sum(axis=1) > 0, train.argmax(axis=1), fallback)
            lookup.append(float(np.mean(pred[cells[te]] == y[te])))
        everything = _cell_class_counts(cells, y, *shape)
        recs.append({"dataset": name, "rows": len(y), "cells": shape[0],
                     "single_rule": everything.max(axis=1).sum() / len(y),
                     "fold_oracle": float(np.mean(per_fold)),
                     "lookup_table": float(np.mean(lookup))})
    return pd.DataFrame(recs)


# --- methods ----------------------------------------------------------------------------------
EXTRA_METHODS: dict[str, MethodSpec] = {s.name: s for s in (
    MethodSpec("cvselect", "bnma_core.classifiers.stacking:PredictiveStacking",
               "One of aode / bma10 / manb / ukdb1 chosen per training fold by inner 5-fold CV "
               "accuracy (docs/accuracy.md §4).",
               {"candidates": ("aode", "bma10", "manb", "ukdb1"),
                "weighting": "select-accuracy"}, randomized=True,
               display_name="The most accurate of four methods, chosen by inner "
                            "cross-validation"),
)}
"""Experiment-only methods (not registered with the library's methods): code ->
:class:`~bnma_core.classifiers.registry.MethodSpec`, the method registry's shape."""


def get_method_spec(name: str) -> MethodSpec:
    """The :class:`MethodSpec` of a registry method or of an :data:`EXTRA_METHODS` one."""
    from bnma_core.classifiers.registry import get_spec

    return EXTRA_METHODS[name] if name in EXTRA_METHODS else get_spec(name)


def make_method(name: str, seed: int = 1, params: dict | None = None):
    """A new estimator: a registry name or an :data:`EXTRA_METHODS` name."""
    return get_method_spec(name).make(random_state=seed, **(params or {}))


def run_fold(name: str, dataset: str, fold: int, anchors: str | Path | None = None,
             seed: int = 1, params: dict | None = None) -> dict:
    """Train ``name`` on the rows outside Weka's fold ``fold`` and test on the fold."""
    X, y, ar, folds = load(dataset, anchors)
    te = folds == int(fold)
    if not te.any():
        raise ValueError(f"{dataset}: no row in fold {fold}")
    est = make_method(name, seed, params)
    t, c = time.perf_counter(), time.process_time()
    est.fit(np.array(X[~te]), np.array(y[~te]), arities=np.array(ar))
    P = _class_probabilities(est, np.array(X[te]), int(y.max()) + 1)
    scores = row_scores(y[te], P)
    return {"dataset": dataset, "method": name, "fold": int(fold),
            "accuracy": float(np.mean(scores["accuracy"])),
            "log_loss": float(np.mean(scores["log_loss"])),
            "brier": float(np.mean(scores["brier"])), "n_test": int(te.sum()),
            "seconds": time.perf_counter() - t, "cpu_seconds": time.process_time() - c}


def _class_probabilities(est, X: np.ndarray, n_classes: int) -> np.ndarray:
    """(n, n_classes) class probabilities of a fitted estimator over the data set's classes
    (a class absent from the training fold gets 0), from its log probabilities when it has
    them, so the most probable class is the one ``predict`` returns."""
    if hasattr(est, "predict_log_proba"):
        lp = np.asarray(est.predict_log_proba(X), dtype=float)
    else:  # pragma: no cover - every registered method has predict_log_proba
        with np.errstate(divide="ignore"):
            lp = np.log(np.asarray(est.predict_proba(X), dtype=float))
    lp = lp - lp.max(axis=1, keepdims=True)
    P = np.exp(lp)
    P /= P.sum(axis=1, keepdims=True)
    out = np.zeros((len(X), n_classes))
    out[:, np.asarray(est.classes_, dtype=np.int64)] = P
    return out


def run_method(name: str, dataset: str, anchors: str | Path | None = None, seed: int = 1,
               params: dict | None = None) -> list[dict]:
    """Ten Weka folds of one method on one dataset: one record per fold."""
    _, _, _, folds = load(dataset, anchors)
    return [run_fold(name, dataset, k, anchors, seed, params)
            for k in range(int(folds.max()) + 1)]


# --- tables -----------------------------------------------------------------------------------
def summarize(folds: pd.DataFrame, anchors: str | Path | None = None) -> pd.DataFrame:
    """Per dataset and method: acc_mean ± SE beside the best anchors, win / tie / loss."""
    folds = folds.copy()
    for col in ("log_loss", "brier"):  # cells stored before these were recorded: NaN
        if col not in folds:
            folds[col] = np.nan
    g = folds.groupby(["dataset", "method"], sort=False)
    s = g["accuracy"].agg(acc_mean="mean", acc_sd="std", n_folds="count").reset_index()
    s["acc_se"] = s["acc_sd"] / np.sqrt(s["n_folds"])
    # mean over folds of the per-fold means, the statistic of the anchors' logloss_mean;
    # NaN when a fold lacks it
    s["logloss_mean"] = g["log_loss"].mean(numeric_only=True).to_numpy()
    s.loc[g["log_loss"].count().to_numpy() < s["n_folds"].to_numpy(), "logloss_mean"] = np.nan
    s["brier_mean"] = g["brier"].mean().to_numpy()
    s["seconds"] = g["seconds"].sum().to_numpy()
    s = s.merge(anchor_table(anchors), on="dataset", how="left")
    s["diff_to_best"] = s["acc_mean"] - s["best_anchor"]
    s["result"] = np.where(s["diff_to_best"] > TIE, "win",
                           np.where(s["diff_to_best"] < -TIE, "loss", "tie"))
    return s


def overview(summary: pd.DataFrame) -> pd.DataFrame:
    """One row per method: mean accuracy over the datasets, wins / ties / losses, seconds."""
    t = summary.pivot_table(index="method", columns="dataset", values="acc_mean", sort=False)
    out = pd.DataFrame({"mean": t.mean(axis=1)})
    for res in ("win", "tie", "loss"):
        out[res] = summary.assign(v=summary["result"] == res).groupby(
            "method", sort=False)["v"].sum()
    out["logloss_mean"] = summary.pivot_table(
        index="method", columns="dataset", values="logloss_mean", sort=False,
        dropna=False).mean(axis=1, skipna=False)
    out["seconds"] = summary.groupby("method", sort=False)["seconds"].sum()
    out["mean_minus_best_single_anchor"] = out["mean"] - BEST_SINGLE_ANCHOR_MEAN
    return out.join(t).sort_values("mean", ascending=False)


def markdown(summary: pd.DataFrame) -> str:
    """The summary as a markdown table: methods as rows, datasets as columns."""
    ds = list(dict.fromkeys(summary["dataset"]))
    ov = overview(summary)
    cell_ = summary.set_index(["method", "dataset"])
    head = ["method", *ds, "mean", "W/T/L", "log-loss", "s"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for m, row in ov.iterrows():
        vals = []
        for d in ds:
            if (m, d) in cell_.index:
                c = cell_.loc[(m, d)]
                mark = {"win": "+", "loss": "-", "tie": "="}[c["result"]]
                vals.append(f"{c['acc_mean']:.3f}±{c['acc_se']:.3f}{mark}")
            else:
                vals.append("")
        lines.append(f"| {m} | " + " | ".join(vals) + f" | {row['mean']:.4f} | "
                     f"{int(row['win'])}/{int(row['tie'])}/{int(row['loss'])} | "
                     f"{row['logloss_mean']:.4f} | {row['seconds']:.1f} |")
    a = summary.drop_duplicates("dataset").set_index("dataset")
    for fam in ("weka", "pyagrum"):
        vals = [f"{a.loc[d, f'best_{fam}']:.3f} ({a.loc[d, f'best_{fam}_method']})" for d in ds]
        lines.append(f"| best {fam} | " + " | ".join(vals)
                     + f" | {a[f'best_{fam}'].mean():.4f} | | | |")
    return "\n".join(lines)


def run(out: str | Path | None, methods: list[str] | None = None,
        datasets: list[str] | None = None, anchors: str | Path | None = None, seed: int = 1,
        n_jobs: int = 1, params: dict[str, dict] | None = None, update: bool = False
        ) -> dict[str, pd.DataFrame]:
    """All (dataset, method, fold) cells in this process or with joblib workers; writes
    ``folds.csv``, ``summary.csv`` and ``table.md`` to ``out`` if given. ``update``: keep the
    other methods' rows of an earlier ``out/folds.csv`` (rerun a few methods only)."""
    from joblib import Parallel, delayed

    from bnma_core.classifiers.registry import available_methods

    methods = list(methods or available_methods())
    datasets = list(datasets or DATASETS)
    for m in methods:
        get_method_spec(m)  # unknown names fail before any work
    params = params or {}
    anchors = _dir(anchors)
    jobs = [delayed(run_fold)(m, d, k, anchors, seed, params.get(m))
            for d in datasets for m in methods
            for k in range(int(load(d, anchors)[3].max()) + 1)]
    recs = Parallel(n_jobs=n_jobs)(jobs)
    folds = pd.DataFrame(recs)
    if update and out is not None and (Path(out) / "folds.csv").exists():
        old = pd.read_csv(Path(out) / "folds.csv")
        keep = ~(old["method"].isin(methods) & old["dataset"].isin(datasets))
        folds = pd.concat([old[keep], folds], ignore_index=True)
    summary = summarize(folds, anchors)
    if out is not None:
        out = Path(out)
        out.mkdir(parents=True, exist_ok=True)
        folds.to_csv(out / "folds.csv", index=False)
        summary.to_csv(out / "summary.csv", index=False)
        (out / "table.md").write_text(markdown(summary) + "\n")
    return {"folds": folds, "summary": summary, "overview": overview(summary)}


# --- the target, in sentences ----------------------------------------------------------------
def anchor_configurations(anchors: str | Path | None = None) -> pd.DataFrame:
    """Every anchor configuration per dataset, long: ``method`` ("Weka AODE", "pyAgrum
    TAN/default/argmax"), ``dataset``, ``acc_mean`` (``results.csv``), ``logloss_mean`` and
    ``brier_mean`` (``proba_results.csv``; NaN where a configuration has none). Weka's
    ``/noADTree`` rows are dropped: the same models without Weka's ADTree cache, with the same
    numbers, so keeping them would count each of those configurations twice in a ranking."""
    root = _dir(anchors)

    def named(df: pd.DataFrame) -> pd.DataFrame:
        df = df[~df["method"].str.endswith("/noADTree")].copy()
        tool = np.where(df["tool"].str.startswith("weka"), "Weka", "pyAgrum")
        df["method"] = tool + " " + df["method"]
        return df

    acc = named(pd.read_csv(root / "results.csv"))[["method", "dataset", "acc_mean"]]
    if (root / "proba_results.csv").exists():
        proba = named(pd.read_csv(root / "proba_results.csv"))[
            ["method", "dataset", "logloss_mean", "brier_mean"]]
        acc = acc.merge(proba, on=["method", "dataset"], how="left")
    else:
        acc = acc.assign(logloss_mean=np.nan, brier_mean=np.nan)
    return acc.reset_index(drop=True)


def _complete(long: pd.DataFrame, value: str, datasets: tuple[str, ...] = DATASETS
              ) -> pd.DataFrame:
    """(methods x datasets) of ``value`` for the methods that have it on every dataset."""
    wide = long.pivot_table(index="method", columns="dataset", values=value, sort=False)
    wide = wide.reindex(columns=list(datasets))
    return wide.dropna()


def _verdict(p: dict[str, float], ours: str, other: str, rope: float, unit: str) -> str:
    return (f"Bayesian signed-rank over the 7 datasets, rope ±{rope:g} {unit}: P({ours} better) "
            f"{p['p_a_better']:.2f}, P(equivalent) {p['p_equivalent']:.2f}, P({other} better) "
            f"{p['p_b_better']:.2f}")


def comparison_table(summary: pd.DataFrame, method: str | None = None,
                     anchors: str | Path | None = None) -> pd.DataFrame:
    """The recommended method against each anchor configuration over the seven datasets.

    One row per configuration complete on the seven in accuracy, then ``method`` itself:
    ``logloss_mean`` (mean over the datasets; NaN for configurations without probabilities),
    ``within_0.02`` (datasets within :data:`LOGLOSS_WITHIN` of the best configuration there),
    ``acc_mean``, ``acc_rank`` (Demšar's mean rank of accuracy over the datasets among all the
    rows, rank 1 best, ties shared), and the Bayesian signed-rank test of ``method`` against
    the configuration on log-loss (rope :data:`ROPE` ``["log_loss"]``) and on accuracy (rope
    ``["accuracy"]``): ``ll_p_ours``, ``ll_p_equivalent``, ``ll_p_theirs``, ``acc_p_ours``, ...
    (:func:`bnma_core.comparison.bayesian_signed_rank`, Benavoli et al. 2017).
    """
    from bnma_core.classifiers.registry import DEFAULT_METHOD
    from bnma_core.comparison import bayesian_signed_rank, mean_ranks

    method = method or DEFAULT_METHOD
    conf = anchor_configurations(anchors)
    ours = summary[summary["method"] == method][["method", "dataset", "acc_mean",
                                                "logloss_mean", "brier_mean"]]
    if not set(DATASETS) <= set(ours["dataset"]):
        raise ValueError(f"{method} ran on {ours['dataset'].nunique()} of the "
                         f"{len(DATASETS)} datasets; the comparison needs all seven.")
    long = pd.concat([conf, ours], ignore_index=True)
    acc = _complete(long, "acc_mean")
    ll = long.pivot_table(index="method", columns="dataset", values="logloss_mean",
                          sort=False).reindex(index=acc.index, columns=list(DATASETS))
    best_ll = ll.drop(index=method).min()  # per dataset, over the configurations
    # accuracies to the anchors' 4 printed decimals, so equal accuracies tie in the ranks
    ranks = mean_ranks(acc.round(4).stack().rename("acc_mean").reset_index(), "acc_mean",
                       block="dataset", higher_is_better=True).set_index("method")
    rows = []
    for name in acc.index:
        rec: dict[str, Any] = {"method": name, "logloss_mean": ll.loc[name].mean(skipna=False),
                               "within_0.02": int((ll.loc[name] - best_ll
                                                   <= LOGLOSS_WITHIN + 1e-12).sum()),
                               "acc_mean": acc.loc[name].mean(),
                               "acc_rank": float(ranks.loc[name, "mean_rank"])}
        if name != method:
            for key, tab, hib in (("ll", ll, False), ("acc", acc, True)):
                if tab.loc[name].isna().any():
                    continue
                p = bayesian_signed_rank(tab.loc[method].to_numpy(), tab.loc[name].to_numpy(),
                                         rope=ROPE["log_loss" if key == "ll" else "accuracy"],
                                         higher_is_better=hib)
                rec.update({f"{key}_p_ours": p["p_a_better"],
                            f"{key}_p_equivalent": p["p_equivalent"],
                            f"{key}_p_theirs": p["p_b_better"]})
        rows.append(rec)
    out = pd.DataFrame(rows)
    for d in DATASETS:
        out[f"logloss {d}"] = ll[d].to_numpy()
    return out.sort_values("logloss_mean", na_position="last").reset_index(drop=True)


def target_claims(summary: pd.DataFrame, method: str | None = None,
                  anchors: str | Path | None = None) -> list[dict]:
    """The accuracy target, restated for probabilities, checked for ``method`` (default the
    registry's ``DEFAULT_METHOD``), and UKDB ≥ KDB; one
    :func:`~bnma_core.reproduce.report.claim` each (status "reproduced" = target met):

    1. a lower mean log-loss over the seven datasets than every anchor configuration that has
       probabilities on all seven;
    2. within :data:`LOGLOSS_WITHIN` log-loss of the best configuration of the dataset on at
       least ``TARGET["within"]`` of the seven (the best per dataset is chosen on the test
       folds, a choice a user cannot make);
    3. the best mean accuracy rank (Demšar 2006) among the configurations complete on the
       seven and the method.

    Each claim carries the Bayesian signed-rank verdict (Benavoli et al. 2017) of the method
    against the configuration that decides it.
    """
    from bnma_core.classifiers.registry import DEFAULT_METHOD

    from .report import NOT_CHECKABLE, claim

    method = method or DEFAULT_METHOD
    s = summary[summary["method"] == method].set_index("dataset")
    have = [d for d in DATASETS if d in s.index and np.isfinite(s.loc[d, "logloss_mean"])]
    texts = (f"the recommended method ({method}) has a lower mean log-loss over the 7 datasets "
             "than every anchor configuration",
             f"the recommended method ({method}) is within {LOGLOSS_WITHIN} log-loss of the best "
             f"anchor configuration on at least {TARGET['within']} of the 7 datasets",
             f"the recommended method ({method}) has the best mean accuracy rank (Demšar) among "
             "the anchor configurations complete on the 7 datasets")
    if len(have) < len(DATASETS):
        why = (f"{method} has log-loss on {len(have)} of the {len(DATASETS)} datasets (quick "
               "grid, or cells stored before log-loss was recorded: rerun with --fresh)")
        out = [claim(t, "target", "—", NOT_CHECKABLE, why) for t in texts]
    else:
        tab = comparison_table(summary, method, anchors).set_index("method")
        out = [_logloss_claim(tab, method, texts[0]),
               _within_claim(s, method, anchors, texts[1]),
               _rank_claim(tab, method, texts[2])]
    return out + _ukdb_claims(summary)


def _table_verdict(row: pd.Series, key: str, method: str, rival: str, rope: float,
                   what: str) -> str:
    """:func:`_verdict` from the signed-rank columns ``{key}_p_ours`` / ``_p_equivalent`` /
    ``_p_theirs`` of a :func:`comparison_table` row (``key`` "ll" or "acc")."""
    return _verdict({"p_a_better": row[f"{key}_p_ours"],
                     "p_equivalent": row[f"{key}_p_equivalent"],
                     "p_b_better": row[f"{key}_p_theirs"]}, method, rival, rope, what)


def _logloss_claim(tab: pd.DataFrame, method: str, text: str) -> dict:
    """Claim 1 of :func:`target_claims`: ``method``'s mean log-loss below every anchor
    configuration's with log-loss on all seven (``tab``: :func:`comparison_table` indexed by
    method)."""
    from .report import NOT_REPRODUCED, REPRODUCED, claim

    me, others = tab.loc[method], tab.drop(index=method)
    with_ll = others.dropna(subset=["logloss_mean"])
    best = with_ll["logloss_mean"].idxmin()
    ok = bool(me["logloss_mean"] < with_ll["logloss_mean"].min())
    return claim(
        text, f"target < {with_ll['logloss_mean'].min():.4f} ({best}, the lowest of "
        f"{len(with_ll)} configurations)",
        f"{me['logloss_mean']:.4f}",
        REPRODUCED if ok else NOT_REPRODUCED,
        _table_verdict(with_ll.loc[best], "ll", method, best, ROPE["log_loss"], "log-loss"))


def _within_claim(s: pd.DataFrame, method: str, anchors: str | Path | None,
                  text: str) -> dict:
    """Claim 2 of :func:`target_claims`: ``method`` within :data:`LOGLOSS_WITHIN` of the
    per-dataset best anchor configuration on at least ``TARGET["within"]`` datasets (``s``:
    the method's summary rows indexed by dataset)."""
    from bnma_core.comparison import bayesian_signed_rank

    from .report import NOT_REPRODUCED, REPRODUCED, claim

    conf = anchor_configurations(anchors)
    ll = _complete(conf, "logloss_mean")
    per_best = conf.pivot_table(index="method", columns="dataset",
                                values="logloss_mean").min()[list(DATASETS)]
    mine = s.loc[list(DATASETS), "logloss_mean"]
    gap = mine - per_best
    n_within = int((gap <= LOGLOSS_WITHIN + 1e-12).sum())
    p = bayesian_signed_rank(mine.to_numpy(), per_best.to_numpy(), rope=LOGLOSS_WITHIN,
                             higher_is_better=False)
    return claim(
        text, f"target >= {TARGET['within']} of 7",
        f"{n_within} of 7; behind by more on "
        + (", ".join(f"{d} ({gap[d]:+.3f})" for d in DATASETS
                     if gap[d] > LOGLOSS_WITHIN + 1e-12) or "none"),
        REPRODUCED if n_within >= TARGET["within"] else NOT_REPRODUCED,
        _verdict(p, method, "the per-dataset best", LOGLOSS_WITHIN, "log-loss")
        + f" ({len(ll)} configurations have log-loss on all seven)")


def _rank_claim(tab: pd.DataFrame, method: str, text: str) -> dict:
    """Claim 3 of :func:`target_claims`: ``method``'s mean accuracy rank below every anchor
    configuration's (``tab``: :func:`comparison_table` indexed by method)."""
    from .report import NOT_REPRODUCED, REPRODUCED, claim

    me, others = tab.loc[method], tab.drop(index=method)
    ranked = tab.sort_values("acc_rank")
    rival = others.sort_values("acc_rank").index[0]
    ok = bool(me["acc_rank"] < others["acc_rank"].min())
    return claim(
        text, f"target: rank below every configuration's (best of them {rival}, "
        f"{others.loc[rival, 'acc_rank']:.2f})",
        f"{me['acc_rank']:.2f} (place {list(ranked.index).index(method) + 1} of "
        f"{len(ranked)}; mean accuracy {me['acc_mean']:.4f})",
        REPRODUCED if ok else NOT_REPRODUCED,
        _table_verdict(others.loc[rival], "acc", method, rival, ROPE["accuracy"], "accuracy"))


def _ukdb_claims(summary: pd.DataFrame) -> list[dict]:
    """The UKDB ≥ KDB claim of :func:`target_claims` (accuracy on WBC and win/draw/loss over
    the anchors), or none when the summary lacks either method."""
    from bnma_core.classifiers.registry import ALIASES

    from .report import NOT_REPRODUCED, REPRODUCED, claim

    # stored results may name kdb2 / ukdb2 by their aliases kdb / ukdb
    piv = summary.assign(method=summary["method"].replace(ALIASES)).pivot_table(
        index="dataset", columns="method", values="acc_mean")
    if not {"ukdb2", "kdb2"} <= set(piv.columns):
        return []
    d = (piv["ukdb2"] - piv["kdb2"]).dropna()
    w, t_, l_ = int((d > TIE).sum()), int((d.abs() <= TIE).sum()), int((d < -TIE).sum())
    wbc = (f"WBC {piv.loc['wbc', 'ukdb2']:.4f} vs {piv.loc['wbc', 'kdb2']:.4f}; "
           if "wbc" in piv.index else "")
    ok = ("wbc" in piv.index and piv.loc["wbc", "ukdb2"] >= piv.loc["wbc", "kdb2"]
          and w >= l_)
    return [claim("UKDB (registry default) is at least as accurate as KDB on WBC and "
                  "in win/draw/loss over the anchors", "target UKDB >= KDB",
                  f"{wbc}W/D/L {w}/{t_}/{l_}", REPRODUCED if ok else NOT_REPRODUCED,
                  "" if ok else "see docs/accuracy.md §1-2 (the shared data sets too)")]


# --- the reproduction: grid, cell, report -------------------------------------------------
def _methods(quick: bool) -> list[str]:
    from bnma_core.classifiers.registry import DEFAULT_METHOD, available_methods

    if quick:
        return list(dict.fromkeys([DEFAULT_METHOD, "nb", "aode"]))
    return list(dict.fromkeys([DEFAULT_METHOD, *available_methods()]))


def grid(quick: bool = False, seed: int = 1) -> list[dict]:
    """Cells {dataset, method, fold, seed}: quick = the default method on the seven datasets
    (enough to check the target) and naive Bayes and AODE on three small ones; full = every
    registered method on the seven. The keys do not read the anchors folder (a missing folder
    fails the cells with a plain message)."""
    if quick:
        from bnma_core.classifiers.registry import DEFAULT_METHOD

        pairs = [(d, DEFAULT_METHOD) for d in DATASETS] + [
            (d, m) for d in QUICK_DATASETS for m in _methods(True) if m != DEFAULT_METHOD]
    else:
        pairs = [(d, m) for d in DATASETS for m in _methods(False)]
    return [{"dataset": d, "method": m, "fold": k, "seed": seed} for d, m in pairs
            for k in range(10)]


def config(quick: bool = False) -> dict:
    from bnma_core.classifiers.registry import DEFAULT_METHOD

    return {"grid": "quick" if quick else "full", "anchors": str(ANCHORS),
            "datasets": (f"{', '.join(DATASETS)} (the recommended method); "
                         f"{', '.join(QUICK_DATASETS)} (the others)" if quick
                         else ", ".join(DATASETS)),
            "methods": ", ".join(_methods(quick)), "recommended method": DEFAULT_METHOD,
            "folds": "Weka's -x 10 -s 1 folds (fold of every row in the anchors)",
            "tie": f"within {TIE} (half a point) of the best anchor"}


def cell(key: dict) -> dict:
    r = run_fold(key["method"], key["dataset"], int(key["fold"]), None, int(key["seed"]),
                 key.get("params"))
    return {k: r[k] for k in ("accuracy", "log_loss", "brier", "n_test", "seconds",
                              "cpu_seconds")}


def folds_frame(cells: pd.DataFrame) -> pd.DataFrame:
    """Stored cells as the per-fold table of :func:`run`."""
    return pd.DataFrame([{"dataset": k["dataset"], "method": k["method"], "fold": k["fold"],
                          **r} for k, r in zip(cells["key"], cells["result"], strict=True)])


def report(cells: pd.DataFrame, meta: dict) -> str:
    import plotly.express as px

    from bnma_core.classifiers.registry import DEFAULT_METHOD

    from .report import build_report

    folds = folds_frame(cells)
    summary = summarize(folds)
    claims = target_claims(summary, DEFAULT_METHOD)
    ov = overview(summary)[["mean", "win", "tie", "loss", "logloss_mean", "seconds",
                            "mean_minus_best_single_anchor"]]
    sections: list[tuple[str, object]] = [
        ("How to read", "Accuracy = mean of the ten per-fold accuracies on Weka's own folds "
         "(± standard error over folds); log-loss = mean of the ten per-fold mean "
         "−ln p(true class), the anchors' own statistic. The best Weka and the best pyAgrum "
         "configuration of "
         "each dataset are the best of their configurations on the test folds, a choice a user "
         "cannot make. Win / tie / loss: more than half a point ahead of the best anchor / "
         "within half a point / more than half a point behind. Seconds: wall clock of fit + "
         "predict over the ten folds."),
        ("All methods over the datasets", ov.reset_index()),
        ("What the data allow", "single_rule: accuracy on all rows of the best single function "
         "of the attributes (each cell's majority class); fold_oracle: the best function of each "
         "test fold, averaged (a bound for any learner); lookup_table: each training fold's "
         "cell-majority table. A method ahead of single_rule predicts some mixed cell "
         "differently from fold to fold."),
        ("Ceilings", ceilings(datasets=tuple(dict.fromkeys(summary["dataset"]))))]
    if DEFAULT_METHOD in set(summary["method"]) and set(DATASETS) <= set(
            summary.loc[summary["method"] == DEFAULT_METHOD, "dataset"]):
        sections += [
            ("The recommended method against each anchor configuration",
             f"{DEFAULT_METHOD} and every anchor configuration complete on the seven datasets: "
             "mean log-loss (−ln p(true class), mean over folds, then over datasets; blank for "
             f"configurations without probabilities), datasets within {LOGLOSS_WITHIN} of the "
             "best configuration there, mean accuracy and its mean rank (Demšar; 1 = best), and "
             f"the Bayesian signed-rank probabilities that {DEFAULT_METHOD} is better, "
             "practically equivalent (rope ±0.01 log-loss, ±0.005 accuracy) or worse."),
            ("Against each configuration", comparison_table(summary, DEFAULT_METHOD))]
    for ds, g in summary.groupby("dataset", sort=False):
        a = g.iloc[0]
        tab = g[["method", "acc_mean", "acc_se", "diff_to_best", "result", "seconds"]]
        tab = tab.sort_values("acc_mean", ascending=False)
        anchors_rows = pd.DataFrame([
            {"method": f"best Weka: {a['best_weka_method']}", "acc_mean": a["best_weka"]},
            {"method": f"best pyAgrum: {a['best_pyagrum_method']}",
             "acc_mean": a["best_pyagrum"]}])
        sections.append((f"{ds}", pd.concat([tab, anchors_rows], ignore_index=True)))
    fig = px.scatter(summary, x="dataset", y="acc_mean", error_y="acc_se", color="method",
                     title="Accuracy on Weka's folds (± SE); black crosses: best anchor")
    best = summary.drop_duplicates("dataset")
    fig.add_scatter(x=best["dataset"], y=best["best_anchor"], mode="markers", name="best anchor",
                    marker={"symbol": "x", "color": "black", "size": 10})
    sections.append(("Accuracy by dataset", fig))
    return build_report(TITLE, claims, sections, meta.pop("config", {}), meta)
