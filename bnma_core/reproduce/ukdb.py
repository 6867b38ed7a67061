"""UKDB case study on WBC (paper 004; DESIGN §5) and the bias-variance comparison, as a grid of
cells for :mod:`bnma_core.reproduce`.

Cells: ``{"part": "cmi"}`` — the largest conditional mutual information under several
definitions (the paper: 0.4733); ``{"part": "cv", "method": ...}`` — stratified k-fold zero-one
loss of one method on WBC (the same folds for every method: the seed is in the key);
``{"part": "bv", "method": ...}`` — the Kohavi-Wolpert bias-variance decomposition of one method
on WBC. ``experiments/ukdb_wbc.py`` and ``experiments/bias_variance.py`` run the same code with
more outputs (per-instance networks, the shared data sets).
"""

from __future__ import annotations

import itertools
import math
from pathlib import Path

import numpy as np
import pandas as pd

from bnma_core.classifiers.ukdb import UKDB
from bnma_core.data import load_dataset
from bnma_core.datasets import bundled_path
from bnma_core.scores import conditional_mutual_information, joint_distribution

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


def cv_methods(ks: tuple[int, ...] = (1, 2), sensitivity: bool = True) -> dict:
    """Estimators compared: NB, TAN, KDB, UKDB_L, UKDB_P, UKDB for each k; with
    ``sensitivity`` also UKDB_P / UKDB (largest k) with maximum-likelihood information-measure
    tables (``mi_smoothing=0``, suffix ``_s0``; the default adds one pseudo-count per cell,
    docs/accuracy.md §1) and with uniform pseudo-instance weights (suffix ``_uw``)."""
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
            methods[nm + "_s0"] = UKDB(k=k, mode=mode, mi_smoothing=0.0)
            methods[nm + "_uw"] = UKDB(k=k, mode=mode, pseudo_weights="uniform")
    return methods


# ---- the reproduction: grid, cell, report ----------------------------------------------
TITLE = ("UKDB, domain and personalized knowledge (breast cancer): the WBC case study and "
         "the bias-variance of UKDB against KDB")
FULL = {"folds": 10, "cv_seed": 1, "ks": (1, 2), "sensitivity": True, "bv_repeats": 20,
        "bv_seed": 0, "bv_methods": ("nb", "tan", "kdb1", "kdb2", "ukdb_l1", "ukdb_p1", "ukdb1",
                                     "ukdb2")}
QUICK = {**FULL, "folds": 5, "sensitivity": False, "bv_repeats": 5,
         "bv_methods": ("nb", "kdb1", "kdb2", "ukdb1", "ukdb2")}
BV_NAMES = {"ukdb_l1": ("ukdb", {"k": 1, "mode": "domain"}),
            "ukdb_p1": ("ukdb", {"k": 1, "mode": "personalized"}),
            "ukdb1": ("ukdb", {"k": 1}), "ukdb2": ("ukdb", {"k": 2}),
            "kdb1": ("kdb", {"k": 1}), "kdb2": ("kdb", {"k": 2})}


def grid(quick: bool = False) -> list[dict]:
    s = QUICK if quick else FULL
    keys: list[dict] = [{"part": "cmi"}]
    keys += [{"part": "cv", "method": m, "folds": s["folds"], "seed": s["cv_seed"]}
             for m in cv_methods(s["ks"], s["sensitivity"])]
    keys += [{"part": "bv", "method": m, "repeats": s["bv_repeats"], "seed": s["bv_seed"],
              "train_fraction": 0.5} for m in s["bv_methods"]]
    return keys


def config(quick: bool = False) -> dict:
    s = QUICK if quick else FULL
    return {"grid": "quick" if quick else "full", **{k: str(v) for k, v in s.items()},
            "data": "WBC (bundled wbc.csv, 699 rows, 16 missing bare_nuclei)",
            "confidence intervals": "95 % Student t over folds / paired over folds"}


def _estimator(name: str):
    from bnma_core.classifiers.registry import make_classifier

    if name in BV_NAMES:
        kind, kw = BV_NAMES[name]
        return UKDB(**kw) if kind == "ukdb" else make_classifier(kind, **kw)
    return make_classifier(name)


def cell(key: dict) -> dict:
    if key["part"] == "cmi":
        return {"variants": cmi_variants().to_dict(orient="records")}
    if key["part"] == "cv":
        from bnma_core.evaluation import cross_validate

        est = cv_methods((1, 2), True)[key["method"]]
        res = cross_validate(str(WBC), {key["method"]: est}, folds=key["folds"],
                             seed=key["seed"])
        return {"zero_one_loss": [float(1 - a) for a in res["accuracy"]],
                "log_loss": [float(v) for v in res["log_loss"]]}
    if key["part"] == "bv":
        from bnma_core.evaluation import bias_variance

        df = pd.read_csv(WBC)
        res = bias_variance({key["method"]: _estimator(key["method"])}, df,
                            n_repeats=key["repeats"], train_fraction=key["train_fraction"],
                            seed=key["seed"], target="class")
        r = res.iloc[0]
        return {k: float(r[k]) for k in ("error", "bias2", "variance")}
    raise ValueError(f"unknown cell part {key['part']!r}")


def _parts(cells: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    cmi = pd.DataFrame()
    cv, bv = [], []
    for k, r in zip(cells["key"], cells["result"], strict=True):
        if k["part"] == "cmi":
            cmi = pd.DataFrame(r["variants"])
        elif k["part"] == "cv":
            cv += [{"method": k["method"], "fold": i, "zero_one_loss": v}
                   for i, v in enumerate(r["zero_one_loss"])]
        else:
            bv.append({"method": k["method"], **r})
    return cmi, pd.DataFrame(cv), pd.DataFrame(bv)


def check_claims(cmi: pd.DataFrame, cv: pd.DataFrame, bv: pd.DataFrame) -> list[dict]:
    from .report import NOT_CHECKABLE, NOT_REPRODUCED, REPRODUCED, claim, mean_ci

    out = []
    best = cmi.loc[cmi["abs_diff_to_paper"].idxmin()]
    pair_ok = set(best["largest_pair"].split(" / ")) == {"clump_thickness", "cell_size"}
    ok = pair_ok and best["abs_diff_to_paper"] < 5e-4
    out.append(claim(
        "the largest CMI among WBC attribute pairs is 0.4733, between clump thickness and "
        "uniformity of cell size", "0.4733 (clump thickness / cell size)",
        f"closest of {len(cmi)} definitions: {best['largest_cmi']:.4f} ({best['largest_pair']};"
        f" {best['rows']}, smoothing {best['smoothing']}, log {best['log_base']}); clump "
        f"thickness / cell size: {best['cmi_clump_thickness_cell_size']:.4f}",
        REPRODUCED if ok else NOT_REPRODUCED,
        "" if ok else f"the largest pair under the {len(cmi)} definitions tried: "
        f"{', '.join(sorted(set(cmi['largest_pair'])))}; the closest value differs by "
        f"{best['abs_diff_to_paper']:.4f}" + ("" if pair_ok else ", but the pair is not the one "
                                              "the paper names")))
    piv = cv.pivot_table(index="fold", columns="method", values="zero_one_loss")
    for k in (1, 2):
        a, b = f"ukdb{k}", f"kdb{k}"
        text = f"UKDB has a lower zero-one loss than KDB with the same k (k = {k}) on WBC"
        if a not in piv or b not in piv:
            out.append(claim(text, "UKDB < KDB", "not run", NOT_CHECKABLE, ""))
            continue
        m, h = mean_ci(piv[a] - piv[b])
        if m + h < 0:
            status, reason = REPRODUCED, ""
        elif m - h > 0:
            status, reason = NOT_REPRODUCED, "UKDB's loss is significantly higher on WBC"
        else:
            status, reason = NOT_CHECKABLE, ("the difference is within the 95 % CI: one data set "
                                             "cannot decide (the paper's claim rests on 10 more "
                                             "UCI data sets)")
        out.append(claim(text, "UKDB better (no WBC numbers given)",
                         f"{piv[a].mean():.3f} vs {piv[b].mean():.3f}; paired difference "
                         f"{m:+.4f} ± {h:.4f} (95 % CI over {len(piv)} folds)", status, reason))
    for k in (1, 2):
        a, b = f"ukdb{k}", f"kdb{k}"
        text = f"UKDB has a lower variance than KDB (k = {k}) in the bias-variance decomposition"
        if bv.empty or a not in set(bv["method"]) or b not in set(bv["method"]):
            out.append(claim(text, "lower bias and variance", "not run", NOT_CHECKABLE, ""))
            continue
        va = bv.set_index("method")
        ok = va.loc[a, "variance"] < va.loc[b, "variance"]
        out.append(claim(text, "UKDB more robust (bias and variance)",
                         f"variance {va.loc[a, 'variance']:.4f} vs {va.loc[b, 'variance']:.4f};"
                         f" bias² {va.loc[a, 'bias2']:.4f} vs {va.loc[b, 'bias2']:.4f} (WBC "
                         "only, one split: no CI)", REPRODUCED if ok else NOT_REPRODUCED,
                         "" if ok else "UKDB's variance is not lower on WBC"))
    return out


def report(cells: pd.DataFrame, meta: dict) -> str:
    import plotly.express as px

    from .report import build_report, mean_ci

    cmi, cv, bv = _parts(cells)
    claims = check_claims(cmi, cv, bv)
    rows = []
    for m, g in cv.groupby("method", sort=False):
        mu, h = mean_ci(g["zero_one_loss"])
        rows.append({"method": m, "zero-one loss": mu, "95 % CI": h, "folds": len(g)})
    table = pd.DataFrame(rows)
    fig = px.bar(table, x="method", y="zero-one loss", error_y="95 % CI",
                 title="WBC: cross-validated zero-one loss (95 % CI over folds)")
    sections: list[tuple[str, object]] = [
        ("Largest CMI under each definition (paper: 0.4733)", cmi),
        ("Zero-one loss on WBC", table), ("Zero-one loss", fig)]
    if not bv.empty:
        sections.append(("Bias-variance decomposition on WBC (Kohavi & Wolpert 1996)", bv))
    return build_report(TITLE, claims, sections, meta.pop("config", {}), meta)
