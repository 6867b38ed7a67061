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
from pathlib import Path

import numpy as np
import pandas as pd

from bnma_core.classifiers.ukdb import UKDBExplanation
from bnma_core.data import load_dataset

# the CMI definitions and the compared methods live in the package (`bnma reproduce ukdb`)
from bnma_core.reproduce.ukdb import (  # noqa: F401  (re-exported for tests)
    CASE_ROWS,
    PAPER_CMI,
    WBC,
    cmi_variants,
    cv_methods,
)

ROOT = Path(__file__).resolve().parents[1]

def case_study(path: Path = WBC, rows: tuple[int, ...] = CASE_ROWS, k: int = 2
               ) -> dict[int, UKDBExplanation]:
    """Explanation of each row (the file's row number) by a UKDB trained on all other rows
    (incomplete rows kept: missing training values are used family by family)."""
    from bnma_core.classifiers.registry import fit_method

    ds = load_dataset(path, missing="keep")
    out = {}
    for r in rows:
        pos = ds.position_of_row(r)
        # maximum-likelihood information measures, as in the paper (the library default adds
        # one pseudo-count per cell since issue 16; with it row 23, malignant, gets P(malignant)
        # 0.496 from the ensemble: UKDB_L 0.530, UKDB_P 0.462)
        model = fit_method("ukdb", ds, np.delete(np.arange(ds.n_rows), pos), k=k,
                           mi_smoothing=0.0)
        out[r] = model.explain(ds.X[pos])
    return out


def cv_table(path: Path = WBC, folds: int = 10, seed: int = 1, ks: tuple[int, ...] = (1, 2),
             n_jobs: int = 1, sensitivity: bool = True) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Stratified k-fold CV; returns (per-fold results, zero-one loss mean / sd per method)."""
    from bnma_core.evaluation import cross_validate

    res = cross_validate(str(path), cv_methods(ks, sensitivity), folds=folds, seed=seed,
                         workers=max(n_jobs, 1))
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
