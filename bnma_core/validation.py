"""External validation of a saved model (TRIPOD+AI items 12-13, 23; DESIGN §17): the model's
discrimination, calibration and clinical utility on another data set beside the development
data's out-of-fold figures, and how the case mix differs (``bnma report --model``).

Nothing is computed here that the library computes elsewhere: the intervals come from
:func:`bnma_core.metrics.metric_intervals`, calibration from
:mod:`bnma_core.calibration` (through :class:`~bnma_core.evaluation.CVPredictions`, the one
table of predictions), figures from :mod:`bnma_core.viz.calibration`, the page from
:func:`bnma_core.export.html_report`. The one new measure is the case-mix shift of each feature:
the total-variation distance between its distribution in the development and the validation
data, TV = ½ Σ_s |p_dev(s) − p_val(s)| over its states and "missing" (0: the same
distribution, 1: no state in common).
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from .data import DataError


def development_predictions(ds: Any, method: str, *, folds: int = 10, seed: int = 1,
                            missing: str = "keep", params: Mapping | None = None) -> Any:
    """The out-of-fold predictions of ``method`` on its development data (stratified
    ``folds``-fold cross-validation, :func:`bnma_core.evaluation.cross_validate`), saved in
    the model file by ``bnma fit --cv-folds``."""
    from .evaluation import cross_validate

    _, pred = cross_validate(ds, [method], folds=folds, seed=seed, missing=missing,
                             method_params={method: dict(params or {})}, return_proba=True)
    return pred


def _shift_tables(names: list[str], states: list[list[str]], dev: np.ndarray,
                  val: np.ndarray) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Per feature: the total-variation distance (most shifted first) and the long table of
    state shares in both data sets (missing values as the state "missing")."""
    rows, shares = [], []
    for j, (name, st) in enumerate(zip(names, states)):
        labels = [*st, "missing"]
        k = len(st)
        p = np.bincount(np.where(dev[:, j] < 0, k, dev[:, j]), minlength=k + 1) / max(len(dev), 1)
        q = np.bincount(np.where(val[:, j] < 0, k, val[:, j]), minlength=k + 1) / max(len(val), 1)
        tv = 0.5 * float(np.abs(p - q).sum())
        top = int(np.argmax(np.abs(p - q)))
        rows.append({"feature": name, "total variation": round(tv, 4),
                     "largest change": f"{labels[top]}: {p[top]:.1%} → {q[top]:.1%}",
                     "missing (development)": f"{p[k]:.1%}", "missing (validation)": f"{q[k]:.1%}"})
        for s, a, b in zip(labels, p, q):
            if a or b:
                shares.append({"feature": name, "state": s, "development": a, "validation": b})
    table = pd.DataFrame(rows).sort_values("total variation", ascending=False, kind="stable")
    return table.reset_index(drop=True), pd.DataFrame(shares)


def _shift_figure(table: pd.DataFrame, shares: pd.DataFrame, top: int = 6) -> Any:
    """Bars of each feature's TV distance and, for the most shifted ones, the state shares in
    both data sets side by side."""
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots

    feats = table["feature"].tolist()[:top]
    fig = make_subplots(rows=1, cols=2, column_widths=[0.4, 0.6], horizontal_spacing=0.18,
                        subplot_titles=("total-variation distance",
                                        f"state shares of the {len(feats)} most shifted"))
    t = table.iloc[::-1]
    fig.add_trace(go.Bar(x=t["total variation"], y=t["feature"], orientation="h",
                         marker_color="#1f4e79", showlegend=False,
                         hovertemplate="%{y}: %{x:.3f}<extra></extra>"), row=1, col=1)
    sub = shares[shares["feature"].isin(feats)]
    labels = [f"{f} = {s}" for f, s in zip(sub["feature"], sub["state"])]
    for col, colour in (("development", "#7f7f7f"), ("validation", "#d62728")):
        fig.add_trace(go.Bar(x=sub[col], y=labels, orientation="h", name=col,
                             marker_color=colour), row=1, col=2)
    fig.update_layout(barmode="group", height=max(420, 16 * len(sub) + 120),
                      margin=dict(l=10, r=10, t=50, b=40), legend=dict(orientation="h"))
    fig.update_xaxes(range=[0, 1], row=1, col=1)
    fig.update_xaxes(tickformat=".0%", row=1, col=2)
    return fig


def _side_by_side(dev: pd.DataFrame | None, val: pd.DataFrame, key: str) -> pd.DataFrame:
    """Pooled estimates with intervals, development and validation as columns."""
    from .report import _with_interval

    def column(tab: pd.DataFrame) -> pd.Series:
        pooled = tab[tab["scope"] == "pooled"]
        return pd.Series({r[key]: _with_interval(r["estimate"], r["lower"], r["upper"])
                          for _, r in pooled.iterrows()})

    out = pd.DataFrame({"validation": column(val)})
    out.insert(0, "development (out-of-fold)",
               column(dev) if dev is not None else "not saved (bnma fit --cv-folds K)")
    out.index.name = key
    return out


def _calibration_long(cal: pd.DataFrame) -> pd.DataFrame:
    """:func:`~bnma_core.calibration.calibration_summary`'s pooled intercept and slope (with
    their intervals) and CORP decomposition as (measure, scope, estimate, lower, upper)
    rows."""
    pooled = cal[cal["scope"] == "pooled"]
    out = [{"measure": f"calibration {r['parameter']}", "scope": "pooled",
            "estimate": r["estimate"], "lower": r["lower"], "upper": r["upper"]}
           for _, r in pooled.iterrows()]
    first = pooled.iloc[0]
    for name in ("miscalibration", "discrimination", "uncertainty"):
        out.append({"measure": f"CORP {name}", "scope": "pooled", "estimate": first[name],
                    "lower": np.nan, "upper": np.nan})
    return pd.DataFrame(out)


def _validation_cases(model_file: Any, frame: pd.DataFrame, classes: list[str],
                      cname: str) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """The model's codes and class indices of the cases of ``frame`` with a known class,
    and the notes for the report (unseen values, ignored columns, cases left out).

    Raises
    ------
    DataError
        No class column ``cname``, fewer than two classes with a known outcome, or a
        missing feature column.
    """
    from .classifiers.base import UnseenValueWarning
    from .data.labels import _label
    from .scoring import case_codes

    if cname not in frame.columns:
        raise DataError(f"The validation data have no class column {cname!r}; external "
                        "validation needs each case's outcome.")
    notes = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", UnseenValueWarning)
        codes, extra = case_codes(model_file, frame)
    notes += [str(w.message) for w in caught]
    extra = [c for c in extra if c != cname]
    if extra:
        notes.append("Columns not used by the model (ignored): " + ", ".join(extra) + ".")
    index = {c: k for k, c in enumerate(classes)}
    y = np.array([index.get(_label(v), -1) if pd.notna(v) else -1 for v in frame[cname]])
    if (y < 0).any():
        notes.append(f"{int((y < 0).sum())} case(s) without a known class "
                     f"({', '.join(classes)}) were left out.")
    keep = y >= 0
    if keep.sum() < 2 or len(np.unique(y[keep])) < 2:
        raise DataError("The validation data need cases of at least two classes with a known "
                        "outcome.")
    return codes[keep], y[keep], notes


def _calibration_parts(val: Any, dev: Any, pos: Any,
                       label: str) -> tuple[pd.DataFrame, dict, dict, str]:
    """The calibration table (development beside validation) and the CORP reliability
    curves and decompositions of the validation predictions ``val`` (under ``label``) and,
    when ``dev`` is not None, the development out-of-fold predictions; and the event name.
    """
    val_c = _calibration_long(val.calibration_summary(positive=pos))
    dev_c = None if dev is None else _calibration_long(dev.calibration_summary(positive=pos))
    cal_table = _side_by_side(dev_c, val_c, "measure")
    curves, decomp, event = val.reliability(positive=pos)
    if dev is not None:
        dcurves, ddecomp, _ = dev.reliability(positive=pos)
        curves = {"development (out-of-fold)": next(iter(dcurves.values())),
                  "validation": curves[label]}
        decomp = {"development (out-of-fold)": next(iter(ddecomp.values())),
                  "validation": decomp[label]}
    return cal_table, curves, decomp, event


def _provenance_table(info: Mapping[str, Any], method: str) -> pd.DataFrame:
    """The model file's provenance (method, rows fitted on, data fingerprint, seed, library
    version, save time) as a one-column table."""
    return pd.DataFrame({"model": [f"{method} ({info.get('method_name', '')})",
                                   f"{info.get('n_rows', '?')} rows",
                                   str(info.get("data_fingerprint", "?")),
                                   str(info.get("seed")), str(info.get("library_version")),
                                   str(info.get("created"))]},
                        index=pd.Index(["method", "fitted on", "data fingerprint", "seed",
                                        "library version", "saved"], name=""))


def _validation_data_text(info: Mapping[str, Any], classes: list[str], y: np.ndarray,
                          has_dev: bool, source: str, notes: list[str]) -> str:
    """The "Validation data" section: cases per outcome, where the development figures come
    from, and the notes of :func:`_validation_cases`."""
    outcome = pd.Series(np.asarray(classes)[y]).value_counts().reindex(classes, fill_value=0)
    dev_note = ("Development: out-of-fold predictions of a "
                f"{info['development']['folds']}-fold cross-validation (seed "
                f"{info['development']['seed']}) on the training data."
                if has_dev else "The model file holds no development out-of-fold "
                "predictions (fit it with bnma fit --cv-folds K to compare).")
    return (f"{source}: {len(y)} cases with a known outcome; "
            + "; ".join(f"{c}: {n}" for c, n in outcome.items()) + ".\n\n"
            + dev_note + ("\n\n" + "\n\n".join(notes) if notes else ""))


def _case_mix_sections(model_file: Any, codes: np.ndarray) -> list[tuple[str, Any]]:
    """The case-mix sections: TV distance per feature (table and figure) between the model
    file's training rows and the validation ``codes``, or a note when it holds no rows."""
    if model_file.train is None:
        return [("Case mix", "The model file holds no training rows (saved with "
                 "keep_rows=False), so the case mix cannot be compared.")]
    info = model_file.info
    table, shares = _shift_tables(list(info["features"]), info["feature_states"],
                                  np.asarray(model_file.train[0]), codes)
    return [("Case mix: development vs validation (most shifted first)",
             table.set_index("feature")),
            ("Case mix figure", _shift_figure(table, shares))]


def external_validation_report(model_file: Any, frame: pd.DataFrame, *, positive: Any = None,
                               n_bootstrap: int | None = None, seed: int = 0,
                               source: str = "external data",
                               figures: str = "interactive") -> str:
    """The external-validation page of a saved model on ``frame`` (raw values with the class
    column), as self-contained HTML.

    Sections: the model's provenance; the validation data (rows, outcome, columns ignored,
    values unseen in development); discrimination and accuracy (accuracy, log-loss, Brier,
    AUC with 95 % intervals) and calibration (intercept, slope with intervals, CORP
    decomposition) beside the development data's out-of-fold figures when the model file
    holds them; CORP reliability diagrams of both; the decision curve on the validation data;
    the case mix (TV distance per feature, most shifted first; table and figure).

    Raises
    ------
    DataError
        No class column, no case with a known class, or a missing feature column.
    """
    from .evaluation import CVPredictions
    from .export import html_report
    from .metrics import N_BOOTSTRAP
    from .viz.calibration import decision_curve_figure, reliability_figure

    info = model_file.info
    est = model_file.estimator
    method = str(info.get("method") or "model")
    classes = [str(c) for c in est.classes_]
    cname = info.get("class_name") or "class"
    codes, y, notes = _validation_cases(model_file, frame, classes, cname)
    P = est.predict_proba(codes)
    label = "validation"
    val = CVPredictions(y, classes, {label: P}, folds=np.zeros(len(y), dtype=np.int64),
                        class_name=cname)
    dev = model_file.development
    boot = dict(n_bootstrap=int(n_bootstrap or N_BOOTSTRAP), seed=int(seed))
    val_m = val.metric_intervals(**boot)
    dev_m = None if dev is None else dev.metric_intervals(**boot)
    metrics_table = _side_by_side(dev_m, val_m, "metric")
    pos = positive if positive is not None else (classes[1] if len(classes) == 2 else None)
    if pos is not None and str(pos) not in classes:
        raise DataError(f"--positive {pos!r} is not a class of this model ({', '.join(classes)}).")
    cal_table, curves, decomp, event = _calibration_parts(val, dev, pos, label)
    sections: list[tuple[str, Any]] = [
        ("Model (provenance)", _provenance_table(info, method)),
        ("Validation data", _validation_data_text(info, classes, y, dev is not None, source,
                                                  notes)),
        ("Discrimination and accuracy (95 % intervals)", metrics_table),
        ("Calibration of " + event, cal_table),
        ("Reliability (CORP)", reliability_figure(curves, decomp))]
    if len(classes) == 2:
        dc = val.decision_curve(positive=pos)
        sections.append(("Decision curve (validation data)",
                         decision_curve_figure(dc, positive=str(pos))))
    sections += _case_mix_sections(model_file, codes)
    settings = {"model": method, "validation data": source, "positive class": str(pos),
                "bootstrap replicates": boot["n_bootstrap"], "seed": seed}
    return html_report(f"External validation of {method}", sections, settings=settings,
                       figures=figures)
