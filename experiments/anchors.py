"""Every registered method against Weka and pyAgrum on Weka's own folds (issue 16 item 1).

The anchors (the shared ``anchors`` folder next to the repository, not part of a clone; see its
README) are seven all-nominal datasets, the test fold (0-9) of every row in Weka's
``-x 10 -s 1`` stratified cross-validation, and the accuracy of 38 Weka / pyAgrum
configurations. For each dataset and fold k this script trains every method on the rows whose
fold is not k and tests on fold k -- the same rows Weka used -- and reports the mean of the ten
fold accuracies (the anchors' ``acc_mean``) with its standard error sd / sqrt(10).

Command line (from the repository root)::

    PYTHONPATH=. python experiments/anchors.py [--methods all|nb,tan,...] [--datasets all|wbc,...]
        [--seed 1] [--n-jobs 1] [--out experiments/out/anchors] [--anchors PATH]
        [--update]

Writes ``folds.csv`` (dataset, method, fold, accuracy, seconds), ``summary.csv`` (one row per
dataset and method: acc_mean, acc_se, best Weka / pyAgrum anchor, difference to the best anchor,
win / tie / loss, seconds) and ``table.md`` (the summary as a markdown table, with the mean over
the datasets and the win / tie / loss count per method).

Win / tie / loss: against the best anchor of the dataset (the best of all 38 configurations,
itself chosen on the test folds); a tie is a difference within half a point (0.005), as issue 16
asks. Coding: every attribute is nominal; the states of a column are the values in the whole
file (no label information), so a value absent from a training fold still has a parameter.

Runtime: a few minutes for all registered methods with ``--n-jobs 2`` (the order-MCMC methods
``bma10`` / ``bma30`` dominate).
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
import pandas as pd

from bnma_core.classifiers.base import DiscreteBNClassifier
from bnma_core.classifiers.registry import available_methods, make_classifier

ROOT = Path(__file__).resolve().parents[1]
ANCHORS = ROOT.parent / "shared" / "anchors"  # next to the repository; not part of a clone
DATASETS = ("wbc", "contact-lenses", "breast-cancer", "vote", "iris", "glass", "diabetes")
TIE = 0.005
BEST_SINGLE_ANCHOR_MEAN = 0.8145  # Weka BayesNet HC-P3 over the seven (anchors README)


def load(name: str, anchors: Path = ANCHORS) -> tuple[np.ndarray, np.ndarray, np.ndarray,
                                                        np.ndarray]:
    """Codes (n, p) int32, class codes, feature arities and Weka's test fold of every row."""
    df = pd.read_csv(anchors / "data" / f"{name}.csv", dtype=str, keep_default_na=False)
    folds = np.loadtxt(anchors / "folds" / f"{name}.weka.txt", dtype=np.int64)
    if len(folds) != len(df):
        raise ValueError(f"{name}: {len(df)} rows but {len(folds)} fold labels.")
    feats, target = list(df.columns[:-1]), df.columns[-1]   # the class is the last column
    cols = [pd.factorize(df[c], sort=True) for c in feats]
    X = np.column_stack([codes for codes, _ in cols]).astype(np.int32)
    ar = np.array([len(u) for _, u in cols], dtype=np.int64)
    y = pd.factorize(df[target], sort=True)[0].astype(np.int32)
    return X, y, ar, folds


class NestedCVSelect(DiscreteBNClassifier):
    """Choose one of several registered methods on the training rows only, by an inner
    stratified cross-validation (accuracy; ties to the earlier candidate), then refit it on all
    training rows. A candidate for issue 16's recommended method: its choice never sees the
    test fold.

    Parameters
    ----------
    candidates : tuple of str
        Registry names.
    inner_folds : int
        Inner folds (fewer if a class has fewer rows; at least 2).
    random_state : int
        Seed of the inner split and of randomized candidates.

    Attributes
    ----------
    chosen_ : str, inner_scores_ : dict name -> inner accuracy, model_ : the refitted method.
    """

    def __init__(self, candidates: tuple[str, ...] = ("aode", "bma10", "manb", "ukdb1"),
                 inner_folds: int = 5, random_state: int = 1) -> None:
        self.candidates = candidates
        self.inner_folds = inner_folds
        self.random_state = random_state

    def _fit_codes(self, X: np.ndarray, y: np.ndarray) -> None:
        from sklearn.model_selection import StratifiedKFold

        k = int(min(self.inner_folds, max(2, np.bincount(y).min())))
        skf = StratifiedKFold(n_splits=k, shuffle=True, random_state=self.random_state)
        splits = list(skf.split(X, y))
        scores = {}
        for name in self.candidates:
            hits = 0
            for tr, te in splits:
                est = make_classifier(name, random_state=self.random_state)
                est.fit(X[tr], y[tr], arities=self.arities_)
                hits += int(np.sum(est.predict(X[te]) == y[te]))
            scores[name] = hits / len(y)
        self.inner_scores_ = scores
        self.chosen_ = max(self.candidates, key=lambda n: scores[n])  # first of the best
        self.model_ = make_classifier(self.chosen_, random_state=self.random_state)
        self.model_.fit(X, y, arities=self.arities_)

    def _predict_log_proba_codes(self, X: np.ndarray) -> np.ndarray:
        out = np.full((len(X), len(self.classes_)), -np.inf)
        lp = self.model_.predict_log_proba(X)
        out[:, np.asarray(self.model_.classes_, dtype=np.int64)] = lp
        return out


EXTRA_METHODS = {"cvselect": NestedCVSelect}
"""Experiment-only methods (not registered): name -> class with ``random_state``."""


def _make(name: str, seed: int, params: dict | None):
    if name in EXTRA_METHODS:
        return EXTRA_METHODS[name](random_state=seed, **(params or {}))
    return make_classifier(name, random_state=seed, **(params or {}))


def anchor_table(anchors: Path = ANCHORS) -> pd.DataFrame:
    """Best Weka and best pyAgrum configuration per dataset (by acc_mean)."""
    r = pd.read_csv(anchors / "results.csv").dropna(subset=["acc_mean"])
    r["family"] = np.where(r["tool"].str.startswith("weka"), "weka", "pyagrum")
    recs = []
    for ds, g in r.groupby("dataset", sort=False):
        rec = {"dataset": ds}
        for fam in ("weka", "pyagrum"):
            b = g[g["family"] == fam].sort_values("acc_mean", ascending=False).iloc[0]
            rec[f"best_{fam}"] = float(b["acc_mean"])
            rec[f"best_{fam}_method"] = str(b["method"])
        rec["best_anchor"] = max(rec["best_weka"], rec["best_pyagrum"])
        recs.append(rec)
    return pd.DataFrame(recs)


def run_method(name: str, dataset: str, anchors: Path = ANCHORS, seed: int = 1,
               params: dict | None = None) -> list[dict]:
    """Ten Weka folds of one method on one dataset: one record per fold."""
    X, y, ar, folds = load(dataset, anchors)
    recs = []
    for k in range(int(folds.max()) + 1):
        te = folds == k
        est = _make(name, seed, params)
        t = time.perf_counter()
        est.fit(X[~te], y[~te], arities=ar)
        pred = est.predict(X[te])
        recs.append({"dataset": dataset, "method": name, "fold": k,
                     "accuracy": float(np.mean(pred == y[te])),
                     "seconds": time.perf_counter() - t})
    return recs


def summarize(folds: pd.DataFrame, anchors: Path = ANCHORS) -> pd.DataFrame:
    """Per dataset and method: acc_mean ± SE beside the best anchors, win / tie / loss."""
    g = folds.groupby(["dataset", "method"], sort=False)
    s = g["accuracy"].agg(acc_mean="mean", acc_sd="std", n_folds="count").reset_index()
    s["acc_se"] = s["acc_sd"] / np.sqrt(s["n_folds"])
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
    out["seconds"] = summary.groupby("method", sort=False)["seconds"].sum()
    out["mean_minus_best_single_anchor"] = out["mean"] - BEST_SINGLE_ANCHOR_MEAN
    return out.join(t).sort_values("mean", ascending=False)


def markdown(summary: pd.DataFrame) -> str:
    """The summary as a markdown table: methods as rows, datasets as columns."""
    ds = list(dict.fromkeys(summary["dataset"]))
    ov = overview(summary)
    cell = summary.set_index(["method", "dataset"])
    head = ["method", *ds, "mean", "W/T/L", "s"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for m, row in ov.iterrows():
        vals = []
        for d in ds:
            if (m, d) in cell.index:
                c = cell.loc[(m, d)]
                mark = {"win": "+", "loss": "-", "tie": "="}[c["result"]]
                vals.append(f"{c['acc_mean']:.3f}±{c['acc_se']:.3f}{mark}")
            else:
                vals.append("")
        lines.append(f"| {m} | " + " | ".join(vals) + f" | {row['mean']:.4f} | "
                     f"{int(row['win'])}/{int(row['tie'])}/{int(row['loss'])} | "
                     f"{row['seconds']:.1f} |")
    a = summary.drop_duplicates("dataset").set_index("dataset")
    for fam in ("weka", "pyagrum"):
        vals = [f"{a.loc[d, f'best_{fam}']:.3f} ({a.loc[d, f'best_{fam}_method']})" for d in ds]
        lines.append(f"| best {fam} | " + " | ".join(vals)
                     + f" | {a[f'best_{fam}'].mean():.4f} | | |")
    return "\n".join(lines)


def run(out: Path | None, methods: list[str] | None = None, datasets: list[str] | None = None,
        anchors: Path = ANCHORS, seed: int = 1, n_jobs: int = 1,
        params: dict[str, dict] | None = None, update: bool = False
        ) -> dict[str, pd.DataFrame]:
    """All (dataset, method) pairs; writes the CSVs and ``table.md`` to ``out`` if given.
    ``update``: keep the other methods' rows of an earlier ``out/folds.csv`` (rerun a few
    methods without rerunning all)."""
    from joblib import Parallel, delayed

    methods = list(methods or available_methods())
    datasets = list(datasets or DATASETS)
    params = params or {}
    jobs = [delayed(run_method)(m, d, anchors, seed, params.get(m))
            for d in datasets for m in methods]
    recs = [r for rs in Parallel(n_jobs=n_jobs)(jobs) for r in rs]
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


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--methods", default="all",
                    help="registry names, comma-separated, or 'all'; 'cvselect' adds the "
                         "experiment-only NestedCVSelect")
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
    res = run(args.out, methods, datasets, args.anchors, args.seed, args.n_jobs,
              update=args.update)
    print(markdown(res["summary"]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
