"""UKDB case study on the Wisconsin breast cancer data (paper 004, "UKDB"; DESIGN §5).

Command line (from the repository root)::

    python experiments/ukdb_wbc.py [--folds 10] [--seed 1] [--out experiments/out/ukdb_wbc]

Reproduces

1. the largest conditional mutual information I(X_i; X_j | C) among WBC attribute pairs (the
   paper: 0.4733, attributed to clump thickness / uniformity of cell size), under several
   definitions (log base, smoothing, rows with the 16 missing bare_nuclei values kept or
   dropped) -> ``cmi_variants.csv``;
2. the per-instance networks of two contrasting test instances (each classified by a model
   trained on all other rows): row 72 (clump thickness = 1, uniformity of cell size = 3, the
   paper's example, benign) and row 23 (malignant, bare_nuclei missing) ->
   ``instance_<row>.txt``, ``instance_<row>_structures.html``, ``instance_<row>_posterior.html``;
3. 10-fold cross-validated zero-one loss of NB, TAN, KDB (k = 1, 2), UKDB_L, UKDB_P and UKDB
   (k = 1, 2), plus a sensitivity check of UKDB_P / UKDB (k = 2) to two open choices
   (smoothed information measures; uniform pseudo-instance weights) -> ``cv_folds.csv``,
   ``cv_zero_one_loss.csv``.

Runtime: about 1 minute on a shared 2-core machine (the UKDB_P rows dominate: one network per
test instance).
"""

from __future__ import annotations

import argparse
import itertools
import math
from pathlib import Path

import numpy as np
import pandas as pd

from bnma_core.classifiers.ukdb import UKDB, UKDBExplanation
from bnma_core.data import load_dataset
from bnma_core.datasets import bundled_path
from bnma_core.scores import (
    conditional_mutual_information,
    joint_distribution,
)

ROOT = Path(__file__).resolve().parents[1]

WBC = bundled_path("wbc.csv")
PAPER_CMI = 0.4733
CASE_ROWS = (72, 23)


def cmi_variants(path: Path = WBC) -> pd.DataFrame:
    """Largest CMI pair and the clump thickness / cell size CMI under each definition tried.

    Returns one row per (rows, smoothing, base): the pair with the largest CMI, its value,
    I(clump thickness; cell size | C) and I(cell size; cell shape | C). "smoothing" is the
    pseudo-count added to every cell of the (x_i, x_j, c) table before normalising
    ("1/(r_i r_j m)" = one pseudo instance spread over the table, the m-estimate used by
    several KDB implementations)."""
    recs = []
    for missing in ("drop", "keep"):
        ds = load_dataset(path, missing=missing)
        names = ds.feature_names
        data, ar, c = ds.codes, ds.arities, ds.class_index
        for smooth_name, base in itertools.product(("0", "1/(r_i r_j m)", "1"), (2.0, math.e)):
            best = (-np.inf, None)
            vals = {}
            for i, j in itertools.combinations(range(len(names)), 2):
                sm = {"0": 0.0, "1": 1.0}.get(smooth_name, 1.0 / (ar[i] * ar[j] * ar[c]))
                v = conditional_mutual_information(
                    joint_distribution(data, [i, j, c], ar, smoothing=sm), base)
                vals[names[i], names[j]] = v
                if v > best[0]:
                    best = (v, (names[i], names[j]))
            recs.append(dict(
                rows="complete rows (683)" if missing == "drop" else "all rows (699), pairwise",
                smoothing=smooth_name, log_base="2 (bits)" if base == 2 else "e (nats)",
                largest_pair=" / ".join(best[1]), largest_cmi=round(best[0], 4),
                cmi_clump_thickness_cell_size=round(vals["clump_thickness", "cell_size"], 4),
                cmi_cell_size_cell_shape=round(vals["cell_size", "cell_shape"], 4),
                abs_diff_to_paper=round(abs(best[0] - PAPER_CMI), 4)))
    return pd.DataFrame(recs)


def case_study(path: Path = WBC, rows: tuple[int, ...] = CASE_ROWS, k: int = 2
               ) -> dict[int, UKDBExplanation]:
    """Explanation of each row by a UKDB trained on all other rows (raw values, so missing
    training values are used family by family)."""
    df = pd.read_csv(path)
    X, y = df.drop(columns="class"), df["class"]
    out = {}
    for r in rows:
        train = np.setdiff1d(np.arange(len(df)), [r])
        model = UKDB(k=k).fit(X.iloc[train], y.iloc[train])
        out[r] = model.explain(X.iloc[[r]])
    return out


def cv_methods(ks: tuple[int, ...] = (1, 2), sensitivity: bool = True) -> dict:
    """Estimators compared: NB, TAN, KDB, UKDB_L, UKDB_P, UKDB for each k; with
    ``sensitivity`` also UKDB_P / UKDB (largest k) with one pseudo-count added to every cell
    of the information-measure tables (``mi_smoothing=1``, suffix ``_s1``) and with uniform
    pseudo-instance weights (suffix ``_uw``)."""
    from bnma_core.classifiers.registry import make_classifier

    methods = {"nb": make_classifier("nb"), "tan": make_classifier("tan")}
    for k in ks:
        methods[f"kdb{k}"] = make_classifier("kdb", k=k)
    for k in ks:
        methods[f"ukdb_l{k}"] = UKDB(k=k, mode="domain")
        methods[f"ukdb_p{k}"] = UKDB(k=k, mode="personalized")
        methods[f"ukdb{k}"] = UKDB(k=k, mode="ensemble")
    if sensitivity:
        k = max(ks)
        for mode, nm in (("personalized", f"ukdb_p{k}"), ("ensemble", f"ukdb{k}")):
            methods[nm + "_s1"] = UKDB(k=k, mode=mode, mi_smoothing=1.0)
            methods[nm + "_uw"] = UKDB(k=k, mode=mode, pseudo_weights="uniform")
    return methods


def cv_table(path: Path = WBC, folds: int = 10, seed: int = 1, ks: tuple[int, ...] = (1, 2),
             n_jobs: int = 1, sensitivity: bool = True) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Stratified k-fold CV; returns (per-fold results, zero-one loss mean / sd per method)."""
    from bnma_core.evaluation import cross_validate

    res = cross_validate(str(path), cv_methods(ks, sensitivity), folds=folds, seed=seed,
                         n_jobs=n_jobs)
    res["zero_one_loss"] = 1.0 - res["accuracy"]
    table = res.groupby("method", sort=False).agg(
        zero_one_loss=("zero_one_loss", "mean"), sd=("zero_one_loss", "std"),
        log_loss=("log_loss", "mean"), fit_time_s=("fit_time_s", "sum"),
        predict_time_s=("predict_time_s", "sum")).reset_index()
    return res, table


def run(out_dir: Path, folds: int = 10, seed: int = 1, ks: tuple[int, ...] = (1, 2),
        rows: tuple[int, ...] = CASE_ROWS, n_jobs: int = 1) -> dict[str, pd.DataFrame]:
    """Everything above; writes CSV / text / HTML into ``out_dir`` and returns the tables."""
    from bnma_core.viz.ukdb import posterior_bars_figure, ukdb_structures_figure

    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    variants = cmi_variants()
    variants.to_csv(out_dir / "cmi_variants.csv", index=False)
    for r, e in case_study(rows=rows).items():
        (out_dir / f"instance_{r}.txt").write_text(e.summary(n_pairs=8) + "\n")
        e.differing_pairs.to_csv(out_dir / f"instance_{r}_pairs.csv", index=False)
        ukdb_structures_figure(e).write_html(out_dir / f"instance_{r}_structures.html",
                                             include_plotlyjs="cdn")
        posterior_bars_figure(e).write_html(out_dir / f"instance_{r}_posterior.html",
                                            include_plotlyjs="cdn")
    folds_df, table = cv_table(folds=folds, seed=seed, ks=ks, n_jobs=n_jobs)
    folds_df.to_csv(out_dir / "cv_folds.csv", index=False)
    table.to_csv(out_dir / "cv_zero_one_loss.csv", index=False)
    return {"cmi_variants": variants, "cv": table}


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--folds", type=int, default=10)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--n-jobs", type=int, default=1)
    ap.add_argument("--out", default=str(ROOT / "experiments" / "out" / "ukdb_wbc"))
    a = ap.parse_args(argv)
    tables = run(Path(a.out), a.folds, a.seed, n_jobs=a.n_jobs)
    with pd.option_context("display.width", 200, "display.max_columns", 20):
        print(tables["cmi_variants"].to_string(index=False))
        print(tables["cv"].to_string(index=False, float_format=lambda v: f"{v:.4f}"))
    for r in CASE_ROWS:
        print(f"\n--- row {r} ---")
        print((Path(a.out) / f"instance_{r}.txt").read_text())


if __name__ == "__main__":
    main()
