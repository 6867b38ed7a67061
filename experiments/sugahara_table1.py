"""Table 1 of Sugahara, Aomi & Ueno, "Bayesian network model averaging classifiers by
subbagging" (paper 001; spec ``../shared/specs/subbagging-kbest.md``; issue 12).

Command line (from the repository root; ``PYTHONPATH=.`` in a worktree)::

    python experiments/sugahara_table1.py [--datasets lenses,iris] [--methods nb,proposed]
        [--folds 10] [--seed 0] [--no-apses] [--data ../shared/data/sugahara]
        [--out experiments/out/sugahara_table1] [--anchors]

Protocol (paper §5, spec §5): rows with any missing value removed before cross-validation;
continuous columns (listed per file in ``../shared/data/sugahara/README.md``) split into two
bins at the training fold's median (x <= median -> low); stratified k-fold CV with a fixed
seed; accuracy = correct / N pooled over the folds. Every method uses BDeu (α = 1) and EAP
parameters α_ijk = 1 / (r_i q_i).

Outputs in ``--out``: ``folds.csv`` (one line per data set × method × fold: correct, tested,
seconds, class parents, APSES; appended as each job ends, so an interrupted run resumes where
it stopped), ``table1.csv`` and ``table1.md`` (ours vs the paper, difference, binomial SE,
"within 2 SE", averages, Wilcoxon p-values raw and Hommel-adjusted, runtime, the paper's central
claims). Progress: a tqdm bar over the jobs. ``--anchors``: the same methods on the Weka folds of
``../shared/anchors`` -> ``anchor_folds.csv``, ``anchors.csv`` (beside the best Weka / pyAgrum
anchor).
"""

from __future__ import annotations

import argparse
import math
import time
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.model_selection import StratifiedKFold
from tqdm import tqdm

from bnma_core.analysis import (
    apses,
    compare_over_datasets,
    structure_statistics,
    wilcoxon_over_datasets,
)
from bnma_core.classifiers.kbest import structures_of
from bnma_core.classifiers.registry import make_classifier
from bnma_core.data import DataError

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"
DATA_DIR = SHARED / "data" / "sugahara"
PAPER_TABLE = SHARED / "specs" / "subbagging-table1.csv"
ANCHORS = SHARED / "anchors"

# Table 1 column -> (registry name, parameter overrides). Paper settings are the registry's.
METHODS: dict[str, tuple[str, dict]] = {
    "nb": ("nb_eap", {}),
    "tan": ("tan_eap", {}),
    "acll_tan": ("acll_tan", {}),
    "ebn": ("ebn", {}),
    "eanb": ("eanb", {}),
    "banmix": ("banmix", {}),
    "adaboost_ebn": ("adaboost_ebn", {}),
    "b_rai": ("brai", {}),
    "bagging_ebn": ("bagging_ebn", {}),
    "kbestec100": ("kbest", {}),
    "proposed": ("subbkb", {}),
}
PAPER_METHODS = list(METHODS)
# diagnostics (not columns of the paper): uniform weights over the K classes
METHODS.update({"kbestec100_uniform": ("kbest", {"weighting": "uniform"}),
                "proposed_uniform": ("subbkb", {"weighting": "uniform"})})
APSES_METHODS = ("kbestec100", "proposed")
PARENT_METHODS = ("ebn", "proposed")


@dataclass(frozen=True)
class Dataset:
    name: str          # the paper's name
    file: str
    continuous: str | tuple[str, ...]   # "all" or column names


DATASETS = [
    Dataset("lenses", "lenses.csv", ()),
    Dataset("mtx6", "mux6.csv", ()),
    Dataset("post", "post_operative.csv", ()),
    Dataset("zoo", "zoo.csv", ()),
    Dataset("HayesRoth", "hayes_roth.csv", ()),
    Dataset("iris", "iris.csv", "all"),
    Dataset("wine", "wine.csv", "all"),
    Dataset("glass", "glass.csv", "all"),
    Dataset("CVR", "vote.csv", ()),
    Dataset("heart", "heart_statlog.csv", ("age", "resting_blood_pressure",
                                           "serum_cholesterol", "max_heart_rate", "oldpeak",
                                           "major_vessels")),
    Dataset("BreastCancer", "breast_cancer_ljubljana.csv", ()),
    Dataset("cleve", "cleve.csv", ("age", "rest_sbp", "cholesterol", "max_hr", "st_by_exercise",
                                   "major_vessels_colored")),
    Dataset("liver", "liver_bupa.csv", "all"),
    Dataset("threeOf9", "three_of_nine.csv", ()),
    Dataset("crx", "crx.csv", ("a2", "a3", "a8", "a11", "a14", "a15")),
    Dataset("Australian", "australian.csv", ("a2", "a3", "a7", "a10", "a13", "a14")),
    Dataset("pima", "pima.csv", "all"),
    Dataset("TicTacToe", "tic_tac_toe.csv", ()),
    Dataset("banknote", "banknote.csv", "all"),
    Dataset("Solar Flare", "solar_flare.csv", ()),
    Dataset("CMC", "cmc.csv", ("wife_age", "children")),
    Dataset("led7", "led7.csv", ()),
    Dataset("EEG", "eeg_eye_state.csv", "all"),
    Dataset("HTRU2", "htru2.csv", "all"),
    Dataset("MAGICGT", "magic.csv", "all"),
]
# shuttle-small (No. 23) is not available (README of the data folder).

FOLD_COLUMNS = ["dataset", "method", "fold", "correct", "tested", "fit_seconds",
                "predict_seconds", "class_parents", "apses", "error"]


# ------------------------------------------------------------------------------------ data
def load(ds: Dataset, data_dir: Path = DATA_DIR) -> tuple[pd.DataFrame, np.ndarray, list[str]]:
    """Complete rows of a data set: features (str / float), class labels, continuous columns."""
    df = pd.read_csv(data_dir / ds.file, dtype=str, keep_default_na=False, na_values=[""])
    df = df.dropna().reset_index(drop=True)
    y = df.pop("class").to_numpy()
    cont = list(df.columns) if ds.continuous == "all" else list(ds.continuous)
    unknown = [c for c in cont if c not in df.columns]
    if unknown:
        raise DataError(f"{ds.file}: continuous columns not found: {unknown}")
    for c in cont:
        df[c] = pd.to_numeric(df[c])
    return df, y, cont


def encode_fold(df: pd.DataFrame, cont: Sequence[str], train: np.ndarray
                ) -> tuple[np.ndarray, np.ndarray]:
    """Codes of every row: categorical columns by their sorted values over the whole data set
    (so arities are fixed), continuous columns 0 / 1 at the training rows' median
    (x <= median -> 0). Returns (codes, arities)."""
    cols, ar = [], []
    for c in df.columns:
        if c in cont:
            med = float(np.median(df[c].to_numpy()[train]))
            cols.append((df[c].to_numpy() > med).astype(np.int64))
            ar.append(2)
        else:
            cat = pd.Categorical(df[c], categories=sorted(df[c].unique()))
            cols.append(cat.codes.astype(np.int64))
            ar.append(len(cat.categories))
    return np.column_stack(cols), np.asarray(ar, dtype=np.int64)


def folds_of(y: np.ndarray, n_folds: int, seed: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """Stratified folds with a fixed seed (fewer members than folds in a class: warned by
    scikit-learn and accepted)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        skf = StratifiedKFold(n_splits=n_folds, shuffle=True, random_state=seed)
        return list(skf.split(np.zeros(len(y)), y))


# ------------------------------------------------------------------------------------ jobs
def run_job(df: pd.DataFrame, y: np.ndarray, cont: Sequence[str], train: np.ndarray,
            test: np.ndarray, method: str, seed: int, with_apses: bool = True) -> dict:
    """Fit one method on one fold; accuracy counts, timings and structure statistics."""
    X, ar = encode_fold(df, cont, train)
    reg, over = METHODS[method]
    est = make_classifier(reg, random_state=seed, **over)
    rec = {"class_parents": np.nan, "apses": np.nan, "error": ""}
    t0 = time.perf_counter()
    try:
        est.fit(X[train], y[train], arities=ar)
    except DataError as e:          # e.g. above the exact-search limits: recorded, not fatal
        return {**rec, "correct": 0, "tested": 0, "fit_seconds": time.perf_counter() - t0,
                "predict_seconds": 0.0, "error": str(e).replace("\n", " ")}
    t1 = time.perf_counter()
    pred = est.predict(X[test])
    t2 = time.perf_counter()
    rec.update(correct=int((pred == y[test]).sum()), tested=len(test), fit_seconds=t1 - t0,
               predict_seconds=t2 - t1)
    if method in PARENT_METHODS:
        rec["class_parents"] = structure_statistics(structures_of(est),
                                                    est.class_index_)["class_parents"]
    if with_apses and method in APSES_METHODS:
        D = np.column_stack([X[train], pd.Categorical(y[train], categories=est.classes_).codes])
        full_ar = np.append(ar, len(est.classes_))
        sets = D if method == "kbestec100" else [D[s.rows] for s in est.subsamples_]
        rec["apses"] = apses(sets, full_ar, random_state=seed)
    return rec


def run(datasets: Sequence[Dataset], methods: Sequence[str], out: Path, folds: int = 10,
        seed: int = 0, with_apses: bool = True, data_dir: Path = DATA_DIR,
        progress: bool = True, log: Callable[[str], None] = print) -> pd.DataFrame:
    """Run (or resume) every data set × method × fold job; returns the fold table."""
    out.mkdir(parents=True, exist_ok=True)
    path = out / "folds.csv"
    done = pd.read_csv(path, keep_default_na=False) if path.exists() else pd.DataFrame(
        columns=FOLD_COLUMNS)
    have = {(str(d), str(m), int(f)) for d, m, f in done[["dataset", "method", "fold"]].values}
    plan = []
    for ds in datasets:
        if not (data_dir / ds.file).exists():
            log(f"skip {ds.name}: {ds.file} not found in {data_dir}")
            continue
        plan += [(ds, m, f) for m in methods for f in range(folds)
                 if (ds.name, m, f) not in have]
    cache: dict[str, tuple] = {}
    bar = tqdm(plan, disable=not progress, desc="Table 1", unit="job")
    for ds, m, f in bar:
        bar.set_postfix_str(f"{ds.name} {m} {f}")
        if ds.name not in cache:
            df, y, cont = load(ds, data_dir)
            cache = {ds.name: (df, y, cont, folds_of(y, folds, seed))}
        df, y, cont, splits = cache[ds.name]
        train, test = splits[f]
        rec = {"dataset": ds.name, "method": m, "fold": f,
               **run_job(df, y, cont, train, test, m, seed + f, with_apses)}
        pd.DataFrame([rec], columns=FOLD_COLUMNS).to_csv(
            path, mode="a", header=not path.exists(), index=False)
    return pd.read_csv(path, keep_default_na=False)


# ------------------------------------------------------------------------------------ tables
def paper_table(path: Path = PAPER_TABLE) -> pd.DataFrame:
    t = pd.read_csv(path)
    t = t[t["no"].notna()].copy()
    for c in t.columns:
        if c not in ("dataset", "file"):
            t[c] = pd.to_numeric(t[c])
    return t.set_index("dataset")


def summarize(folds: pd.DataFrame, paper: pd.DataFrame | None = None,
              methods: Sequence[str] | None = None) -> dict[str, pd.DataFrame]:
    """Per data set: pooled accuracy, the paper's value, difference, SE and the 2-SE verdict
    per method; structure statistics; averages, Wilcoxon p-values and the claims."""
    f = folds.copy()
    f["error"] = f["error"].fillna("").astype(str)
    for c in ("correct", "tested", "fit_seconds", "predict_seconds", "class_parents", "apses"):
        f[c] = pd.to_numeric(f[c], errors="coerce")
    methods = list(dict.fromkeys(f["method"])) if methods is None else list(methods)
    ok = f[f["error"] == ""]
    g = ok.groupby(["dataset", "method"])
    acc = (g["correct"].sum() / g["tested"].sum()).unstack()
    n = g["tested"].sum().unstack()
    secs = (g["fit_seconds"].sum() + g["predict_seconds"].sum()).unstack()
    order = [d.name for d in DATASETS if d.name in acc.index]
    acc, n, secs = acc.reindex(order), n.reindex(order), secs.reindex(order)
    rows = []
    for d in order:
        rec: dict = {"dataset": d, "N": int(n.loc[d].max())}
        for m in methods:
            a = acc.loc[d].get(m, np.nan)
            rec[m] = a
            if paper is not None and d in paper.index and m in paper.columns:
                pv = float(paper.loc[d, m])
                se = math.sqrt(pv * (1 - pv) / rec["N"]) if rec["N"] else np.nan
                rec[f"{m}_paper"] = pv
                rec[f"{m}_diff"] = a - pv
                rec[f"{m}_se"] = se
                rec[f"{m}_within_2se"] = bool(abs(a - pv) <= 2 * se) if np.isfinite(a) else None
            rec[f"{m}_seconds"] = secs.loc[d].get(m, np.nan)
        for m in PARENT_METHODS:
            v = ok[(ok["dataset"] == d) & (ok["method"] == m)]["class_parents"]
            rec[f"parents_{m}"] = float(v.mean()) if len(v) else np.nan
        for m in APSES_METHODS:
            v = ok[(ok["dataset"] == d) & (ok["method"] == m)]["apses"]
            rec[f"apses_{m}"] = float(v.mean()) if len(v) else np.nan
        rows.append(rec)
    table = pd.DataFrame(rows)
    skipped = f[f["error"] != ""].groupby(["dataset", "method"])["error"].first().reset_index()
    tests = pd.DataFrame()
    complete = acc.reindex(columns=methods).dropna()
    if "proposed" in methods and len(complete) >= 2:
        tests = compare_over_datasets(complete, "proposed",
                                      [m for m in methods if m != "proposed"])
    return {"table": table, "accuracy": acc, "tests": tests, "skipped": skipped,
            "complete": complete}


def claims(acc: pd.DataFrame, sizes: pd.Series) -> list[str]:
    """The paper's central claims checked on the data sets where every method ran."""
    out = []
    mean = acc.mean()
    if {"proposed", "kbestec100", "ebn"} <= set(acc.columns):
        p, k, e = mean["proposed"], mean["kbestec100"], mean["ebn"]
        out.append(f"Average accuracy proposed {p:.4f}, KBestEC100 {k:.4f}, EBN {e:.4f} over "
                   f"{len(acc)} data sets: proposed >= KBestEC100 "
                   f"{'holds' if p >= k else 'does NOT hold'}; KBestEC100 >= EBN "
                   f"{'holds' if k >= e else 'does NOT hold'}.")
    if "proposed" in acc.columns:
        small = sizes.reindex(acc.index) < 1000
        for m in acc.columns:
            if m == "proposed" or small.sum() < 2:
                continue
            d = acc.loc[small, "proposed"] - acc.loc[small, m]
            p = wilcoxon_over_datasets(acc.loc[small, "proposed"], acc.loc[small, m])
            out.append(f"Small data sets ({int(small.sum())}): proposed - {m} = {d.mean():+.4f} "
                       f"on average (wins {(d > 0).sum()}, losses {(d < 0).sum()}, "
                       f"Wilcoxon p = {p:.3f}).")
    return out


# ------------------------------------------------------------------------------------ anchors
def run_anchors(methods: Sequence[str], out: Path, anchors: Path = ANCHORS, seed: int = 0,
                progress: bool = True, datasets: Sequence[str] = ()) -> pd.DataFrame:
    """The methods on the Weka folds of ``../shared/anchors`` (all-nominal data, fixed folds),
    mean of the 10 fold accuracies beside the best Weka / pyAgrum anchor and Weka's
    BayesNet HC-P3 (the best single anchor overall). Resumable like :func:`run`
    (``anchor_folds.csv``); writes ``anchors.csv``."""
    out.mkdir(parents=True, exist_ok=True)
    path = out / "anchor_folds.csv"
    done = pd.read_csv(path) if path.exists() else pd.DataFrame(
        columns=["dataset", "method", "fold", "accuracy", "seconds", "error"])
    have = {(str(d), str(m), int(f)) for d, m, f in done[["dataset", "method", "fold"]].values}
    names = sorted(p.stem for p in (anchors / "data").glob("*.csv"))
    run_names = [d for d in names if not datasets or d in datasets]
    jobs = [(d, m, k) for d in run_names for m in methods for k in range(10)
            if (d, m, k) not in have]
    cache: dict = {}
    for d, m, k in tqdm(jobs, disable=not progress, desc="anchors", unit="job"):
        if d not in cache:
            df = pd.read_csv(anchors / "data" / f"{d}.csv", dtype=str, keep_default_na=False)
            fold = np.loadtxt(anchors / "folds" / f"{d}.weka.txt", dtype=int)
            y = df.pop(df.columns[-1]).to_numpy()      # class is the last column
            cache = {d: (df, y, fold)}
        df, y, fold = cache[d]
        X, ar = encode_fold(df, [], np.ones(len(y), bool))
        tr, te = fold != k, fold == k
        reg, over = METHODS[m]
        t0 = time.perf_counter()
        err, acc = "", np.nan
        try:
            est = make_classifier(reg, random_state=seed + k, **over).fit(X[tr], y[tr],
                                                                       arities=ar)
            acc = float((est.predict(X[te]) == y[te]).mean())
        except DataError as e:
            err = str(e).replace("\n", " ")
        rec = {"dataset": d, "method": m, "fold": k, "accuracy": acc,
               "seconds": time.perf_counter() - t0, "error": err}
        pd.DataFrame([rec]).to_csv(path, mode="a", header=not path.exists(), index=False)
    folds = pd.read_csv(path)
    ours = folds.groupby(["dataset", "method"])["accuracy"].agg(["mean", "std"]).unstack()
    res = pd.read_csv(anchors / "results.csv")
    rows = []
    for d in sorted(set(folds["dataset"])):
        r = res[res["dataset"] == d].dropna(subset=["acc_mean"])
        best = r.loc[r["acc_mean"].idxmax()]
        hc = r[(r["tool"].str.startswith("weka")) & (r["method"] == "BayesNet-HC-P3")]
        rec = {"dataset": d, "best_anchor": f"{best['tool']} {best['method']}",
               "best_anchor_acc": float(best["acc_mean"]),
               "weka_hc_p3": float(hc["acc_mean"].iloc[0]) if len(hc) else np.nan}
        for m in methods:
            rec[m] = ours["mean"].loc[d].get(m, np.nan)
            rec[f"{m}_se"] = ours["std"].loc[d].get(m, np.nan) / math.sqrt(10)
        rows.append(rec)
    table = pd.DataFrame(rows)
    table.to_csv(out / "anchors.csv", index=False)
    return table


def _fmt(v: object) -> str:
    if isinstance(v, float):
        return "" if np.isnan(v) else f"{v:.4f}"
    return str(v)


def markdown(summary: dict[str, pd.DataFrame], methods: Sequence[str],
             claim_lines: Sequence[str]) -> str:
    t = summary["table"]
    lines = ["| dataset | N | " + " | ".join(methods) + " |",
             "|---|---:|" + "---:|" * len(methods)]
    for _, r in t.iterrows():
        cells = []
        for m in methods:
            a = r.get(m, np.nan)
            if f"{m}_paper" in r and np.isfinite(a):
                mark = "" if r[f"{m}_within_2se"] else " ✗"
                cells.append(f"{a:.4f} ({r[f'{m}_paper']:.4f}, ±{2 * r[f'{m}_se']:.3f}){mark}")
            else:
                cells.append(_fmt(a))
        lines.append(f"| {r['dataset']} | {r['N']} | " + " | ".join(cells) + " |")
    lines += ["", "Cells: ours (paper, ±2 SE = 2 sqrt(p(1-p)/N) around the paper's value); ✗ = "
              "outside 2 SE.", ""]
    comp = summary["complete"]
    if len(comp):
        lines.append(f"Averages over the {len(comp)} data sets where every method ran: "
                     + ", ".join(f"{m} {comp[m].mean():.4f}" for m in methods if m in comp))
    if len(summary["tests"]):
        lines += ["", "| proposed vs | wins | draws | losses | p (Wilcoxon) | p (Hommel) |",
                  "|---|---:|---:|---:|---:|---:|"]
        for _, r in summary["tests"].iterrows():
            lines.append(f"| {r['method']} | {r['wins']} | {r['draws']} | {r['losses']} | "
                         f"{r['p_wilcoxon']:.4f} | {r['p_hommel']:.4f} |")
    secs = [c for c in t.columns if c.endswith("_seconds")]
    if secs:
        lines += ["", "Runtime (s, fit + predict, all folds): " + ", ".join(
            f"{c[:-8]} {t[c].sum():.0f}" for c in secs)]
    if len(summary["skipped"]):
        lines += ["", "Not run (limits or errors):"] + [
            f"- {r['dataset']} / {r['method']}: {r['error']}"
            for _, r in summary["skipped"].iterrows()]
    lines += ["", "Claims:"] + [f"- {c}" for c in claim_lines]
    return "\n".join(lines) + "\n"


def write_outputs(folds: pd.DataFrame, out: Path, methods: Sequence[str]) -> dict:
    paper = paper_table() if PAPER_TABLE.exists() else None
    s = summarize(folds, paper, methods)
    sizes = s["table"].set_index("dataset")["N"]
    cl = claims(s["complete"], sizes)
    s["table"].to_csv(out / "table1.csv", index=False)
    if len(s["tests"]):
        s["tests"].to_csv(out / "tests.csv", index=False)
    (out / "table1.md").write_text(markdown(s, methods, cl))
    s["claims"] = cl
    return s


def main(argv: Sequence[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--datasets", default="", help="comma-separated paper names (default all)")
    ap.add_argument("--methods", default=",".join(PAPER_METHODS),
                    help="Table 1 columns; diagnostics: kbestec100_uniform, proposed_uniform")
    ap.add_argument("--folds", type=int, default=10)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--no-apses", action="store_true")
    ap.add_argument("--data", type=Path, default=DATA_DIR)
    ap.add_argument("--out", type=Path, default=ROOT / "experiments" / "out" / "sugahara_table1")
    ap.add_argument("--anchors", action="store_true",
                    help="run the methods on the Weka folds of ../shared/anchors instead")
    a = ap.parse_args(argv)
    wanted = [s for s in a.datasets.split(",") if s]
    ds = [d for d in DATASETS if not wanted or d.name in wanted]
    methods = [m for m in a.methods.split(",") if m]
    bad = [m for m in methods if m not in METHODS]
    if bad:
        ap.error(f"unknown methods {bad}; choose from {', '.join(METHODS)}")
    if a.anchors:
        print(run_anchors(methods, a.out, seed=a.seed, datasets=wanted).to_string(index=False))
        return
    t0 = time.perf_counter()
    folds = run(ds, methods, a.out, a.folds, a.seed, not a.no_apses, a.data)
    s = write_outputs(folds, a.out, methods)
    print((a.out / "table1.md").read_text())
    print(f"wall time this session: {time.perf_counter() - t0:.0f} s; "
          f"{len(s['table'])} data sets")


if __name__ == "__main__":
    main()
