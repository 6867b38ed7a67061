"""A model report: one self-contained, printable HTML page of a cross-validated model, its
sections in the order of the TRIPOD+AI items a software run can answer.

:func:`model_report` reads the data, cross-validates the methods (the grid engine of
:func:`bnma_core.evaluation.cross_validate`), fits each method once on every row for the
structure appendix, and writes the page; :func:`build_model_report` writes the page of a run
that is already done (the Compare page's ``(results, predictions)``). Every number comes from
the one table of out-of-fold predictions (:class:`~bnma_core.evaluation.CVPredictions`):
discrimination and the other scores with intervals (:mod:`bnma_core.metrics`), calibration and
decision curves (:mod:`bnma_core.calibration`).

The page is :func:`bnma_core.export.html_report`'s (plotly.js embedded once, every user text
HTML-escaped) with an A4 print style: figures are drawn at a fixed width that fits the
printable width of an A4 page, so printing clips none of them.

Items (Collins et al. 2024, TRIPOD+AI, BMJ 385:e078378) are numbered as in the statement; the
checklist at the top marks each one *present* (and where) or *not applicable* (and why).
Items only the authors can report (title, setting, eligibility, ethics, funding, ...) are
named at the end of the checklist.
"""

from __future__ import annotations

import html
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from .data import DataError, DiscreteDataset

__all__ = ["TRIPOD_AI_ITEMS", "build_model_report", "model_report", "PRINT_CSS",
           "FIGURE_WIDTH_PX", "UNNAMED_SOURCE", "settings_in_effect", "settings_in_words"]

TRIPOD_AI_ITEMS: dict[str, str] = {
    "5a": "Data: source of data",
    "7": "Data preparation",
    "8a": "Outcome: definition",
    "9a": "Predictors: choice of predictors",
    "9b": "Predictors: definition and handling (discretization)",
    "10": "Sample size",
    "11": "Missing data",
    "12a": "Analytical methods: how the data were used (internal validation)",
    "12c": "Analytical methods: type of model, model building, settings",
    "12e": "Analytical methods: performance measures",
    "12f": "Analytical methods: model updating (recalibration)",
    "13": "Class imbalance",
    "15": "Model output",
    "16": "Training versus evaluation data",
    "18f": "Open science: code and version",
    "20a": "Results: participants (rows) and outcome events",
    "21": "Results: model development (rows and events per analysis)",
    "22": "Results: model specification (structure-uncertainty appendix)",
    "23a": "Results: model performance with intervals (discrimination, calibration, "
           "clinical utility)",
    "23b": "Results: heterogeneity of performance across clusters",
}
"""The TRIPOD+AI items this report answers or marks not applicable, in the statement's order
(Collins et al. 2024)."""

AUTHOR_ITEMS = ("1 title", "2 abstract", "3a-3c context, target population and health "
                "inequalities", "4 objectives", "5b dates", "6a-6c setting, eligibility and "
                "treatments", "8b-8c outcome assessment and blinding", "9c predictor "
                "assessment", "14 fairness", "17 ethics", "18a-18e funding, conflicts, protocol, "
                "registration and data sharing", "19 patient and public involvement",
                "20b-20c participant characteristics", "24-27 discussion and usability")
"""TRIPOD+AI items that need what only the authors know."""

FIGURE_WIDTH_PX = 680
"""Width of every figure: the printable width of an A4 page with 15 mm margins (180 mm at
96 px per inch), so that a printed figure is never clipped."""

PRINT_CSS = (
    "@page{size:A4;margin:15mm}"
    ".status-present{color:#1a7f37;font-weight:bold;white-space:nowrap}"
    ".status-na{color:#777;white-space:nowrap}"
    "table{max-width:100%}td,th{vertical-align:top;word-break:normal}"
    "td{overflow-wrap:anywhere}th{overflow-wrap:break-word}"
    "@media print{body{max-width:none;margin:0;font-size:10pt}"
    "h2{break-after:avoid;page-break-after:avoid}"
    ".plotly-graph-div,.js-plotly-plot,svg{break-inside:avoid;page-break-inside:avoid;"
    "max-width:100%!important;overflow:visible!important}"
    "table{font-size:7.5pt;width:auto;max-width:100%}td,th{padding:1px 3px}"
    "tr{break-inside:avoid;page-break-inside:avoid}"
    ".modebar{display:none!important}}")
"""Print style added to the page: A4, figures and table rows kept whole, no toolbar; tables
never wider than the page (cells wrap, headers at word boundaries, data cells anywhere as a
last resort; a smaller font when printed)."""

_MAX_STATES_SHOWN = 12
_MAX_EDGES_SHOWN = 30


@dataclass
class _Item:
    """One TRIPOD+AI item of the page: present (with its sections) or not applicable."""

    code: str
    present: bool
    note: str


def _esc(text: Any) -> str:
    """``text`` as plotly shows it literally (it reads a few HTML tags in labels)."""
    return html.escape(str(text), quote=False)


def _fit_width(fig: Any, height: int = 460) -> Any:
    fig.update_layout(width=FIGURE_WIDTH_PX, height=height, autosize=False)
    return fig


# --------------------------------------------------------------------------------------------
# Tables of the data
# --------------------------------------------------------------------------------------------


def _predictor_table(ds: DiscreteDataset) -> pd.DataFrame:
    """One row per predictor: type, number of states, states, missing values."""
    kinds = {}
    if ds.encoder is not None:
        kinds = {c.name: c.kind for c in ds.encoder.columns_}
    rows = []
    for j, name in enumerate(ds.names):
        if j == ds.class_index:
            continue
        states = list(ds.states[j])
        shown = ", ".join(states[:_MAX_STATES_SHOWN]) + (
            f", ... ({len(states) - _MAX_STATES_SHOWN} more)"
            if len(states) > _MAX_STATES_SHOWN else "")
        miss = int(np.sum(ds.codes[:, j] < 0))
        rows.append({"predictor": name, "type": kinds.get(name, "coded"),
                     "states": len(states), "state labels (whole file)": shown,
                     "missing": miss, "missing %": round(100.0 * miss / max(ds.n_rows, 1), 1)})
    return pd.DataFrame(rows).set_index("predictor")


def _outcome_table(y: np.ndarray, classes: Sequence[str], positive: str | None
                   ) -> pd.DataFrame:
    counts = np.bincount(y[y >= 0], minlength=len(classes))
    return pd.DataFrame({"class": list(classes), "rows": counts,
                         "share %": np.round(100.0 * counts / max(counts.sum(), 1), 1),
                         "positive class": ["yes" if c == positive else "" for c in classes]}
                        ).set_index("class")


def _cut_point_table(cut_points: Mapping[int, Mapping[str, Sequence[float]]]) -> pd.DataFrame:
    """Rows = folds, columns = continuous predictors, cells = the cut points fitted on that
    fold's training rows."""
    cols = list(dict.fromkeys(c for cp in cut_points.values() for c in cp))
    rows = []
    for f in sorted(cut_points):
        row = {"fold": f + 1}
        for c in cols:
            row[c] = "; ".join(f"{x:.6g}" for x in cut_points[f].get(c, []))
        rows.append(row)
    return pd.DataFrame(rows).set_index("fold")


def _fold_table(pred: Any, results: pd.DataFrame) -> pd.DataFrame:
    """Rows and outcome events per fold: training rows used by each method, test rows, and the
    test rows of each class."""
    out = []
    folds = np.asarray(pred.folds)
    for f in sorted(set(folds.tolist())):
        sel = folds == f
        row = {"fold": int(f) + 1, "test rows": int(sel.sum()),
               "training rows": int(len(folds) - sel.sum())}
        counts = np.bincount(pred.y[sel], minlength=len(pred.classes))
        for c, n in zip(pred.classes, counts, strict=True):
            row[f"test rows of class {c}"] = int(n)
        sub = results[results["fold"] == f]
        dropped = int(sub["n_train_dropped"].max()) if len(sub) else 0
        row["training rows left out by a method (incomplete)"] = dropped
        out.append(row)
    return pd.DataFrame(out).set_index("fold")


def _with_interval(est: float, lo: float, hi: float) -> str:
    if not np.isfinite(est):
        return "—"
    if not (np.isfinite(lo) and np.isfinite(hi)):
        return f"{est:.4g}"
    return f"{est:.4g} [{lo:.4g}, {hi:.4g}]"


def _interval_table(tab: pd.DataFrame, key: str, index: Sequence[str]) -> pd.DataFrame:
    """A tidy table of estimates with bounds as one cell ``est [lower, upper]`` per ``key``
    value (a metric or a parameter), rows ``index`` (method, fold); folds counted from 1."""
    t = tab.copy()
    if "fold" in t:
        t["fold"] = t["fold"].map(lambda f: "pooled" if pd.isna(f) else int(f) + 1)
    t["value"] = [_with_interval(float(e), float(lo), float(hi)) for e, lo, hi in
                  zip(t["estimate"], t["lower"], t["upper"], strict=True)]
    order = list(dict.fromkeys(t[key]))
    out = t.pivot_table(index=list(index), columns=key, values="value", aggfunc="first",
                        sort=False)
    return out[order]


def _methods_table(methods: Sequence[str], settings: Mapping[str, Mapping[str, Any]],
                   seed: int | None) -> pd.DataFrame:
    from .classifiers.registry import METHODS, capabilities

    rows = []
    for m in methods:
        spec = METHODS.get(m)
        caps = None
        try:
            caps = capabilities(m)
        except (KeyError, ValueError):
            pass
        params = settings.get(m, {})
        rows.append({
            "method": m, "what it does": spec.description if spec else "",
            "settings": settings_in_words(params),
            "learns from incomplete rows": caps.fit_missing if caps else "",
            "missing values at prediction": caps.predict_missing if caps else "",
            "seed (random_state)": seed if spec is not None and spec.randomized
            else "deterministic"})
    return pd.DataFrame(rows).set_index("method")


def settings_in_effect(params: Mapping[str, Any]) -> dict[str, Any]:
    """The parameters of a method that act on its fit (scikit-learn's ``get_params``): without
    the deprecated ones (their value is the :data:`~bnma_core.classifiers.base.DEPRECATED`
    marker), those left at None (unused or chosen automatically), the seed (reported on its
    own) and, for the CPT prior, only the pseudo-count that applies: ``alpha`` when
    ``cpt_prior`` is None, else ``cpt_prior`` and ``ess``."""
    from .classifiers.base import DEPRECATED

    out = {k: v for k, v in params.items()
           if k != "random_state" and v is not None and not (isinstance(v, str)
                                                             and v == DEPRECATED)}
    if "cpt_prior" in params:
        if params["cpt_prior"] is None:
            out.pop("ess", None)
        else:
            out.pop("alpha", None)
    return out


def settings_in_words(params: Mapping[str, Any]) -> str:
    """:func:`settings_in_effect` as a reader reads them: "alpha 1, scoring k2, burn in 2000"
    (names with spaces, no quotes; a sequence as its items)."""
    def word(v: Any) -> str:
        if isinstance(v, list | tuple):
            return " / ".join(word(x) for x in v)
        if isinstance(v, bool):
            return "yes" if v else "no"
        if isinstance(v, float) and v.is_integer():
            return str(int(v))
        return str(v)

    return ", ".join(f"{k.replace('_', ' ')} {word(v)}"
                     for k, v in sorted(settings_in_effect(params).items()))


def _method_settings(methods: Sequence[str], seed: int,
                     method_params: Mapping[str, Mapping[str, Any]] | None
                     ) -> dict[str, dict[str, Any]]:
    """Every parameter of each registry method as it was run (defaults, seed, overrides)."""
    from .classifiers.registry import make_classifier

    out = {}
    for m in methods:
        try:
            est = make_classifier(m, **{"random_state": seed, **dict((method_params or {})
                                                                       .get(m, {}))})
            out[m] = est.get_params(deep=False)
        except (KeyError, ValueError, TypeError):
            out[m] = dict((method_params or {}).get(m, {}))
    return out


# --------------------------------------------------------------------------------------------
# Structure appendix
# --------------------------------------------------------------------------------------------


def _structure(model: Any, names: Sequence[str], class_name: str
               ) -> tuple[pd.DataFrame | None, Any, str]:
    """(edge table, heatmap or None, sentence) of one model fitted on every row."""
    from .viz.mcmc import edge_posterior_heatmap

    if getattr(model, "edge_posterior_", None) is not None:
        E = model.edge_posterior_
        long = (E.stack().rename("posterior").reset_index()
                .rename(columns={E.index.name or "level_0": "parent",
                                 E.columns.name or "level_1": "child"}))
        long = long[long["posterior"] >= 0.01].sort_values("posterior", ascending=False)
        lab = [_esc(n) for n in E.index]
        fig = edge_posterior_heatmap(pd.DataFrame(E.to_numpy(), index=lab, columns=lab))
        side = max(FIGURE_WIDTH_PX - 40, 300)
        fig.update_layout(width=FIGURE_WIDTH_PX, height=side, autosize=False)
        return (long.head(_MAX_EDGES_SHOWN).reset_index(drop=True), fig,
                "Posterior probability of each arc, averaged over the structures the method "
                f"averages (arcs of probability ≥ 0.01, at most {_MAX_EDGES_SHOWN}, are "
                "listed).")
    if getattr(model, "arc_posterior_", None) is not None:
        feats = getattr(model, "feature_names_", None) or [n for n in names if n != class_name]
        tab = pd.DataFrame({"parent": class_name, "child": list(feats),
                            "posterior": np.asarray(model.arc_posterior_, dtype=float)})
        return (tab.sort_values("posterior", ascending=False).reset_index(drop=True), None,
                "Posterior probability of each class → feature arc (the naive-Bayes structures "
                "are averaged exactly).")
    g = getattr(model, "structure_", None)
    if g is not None and hasattr(g, "edges"):
        tab = pd.DataFrame([{"parent": str(u), "child": str(v)} for u, v in g.edges()])
        return (tab, None, "One network: the method learns a single structure, so there is no "
                           "structure uncertainty to show; its arcs are listed.")
    return None, None, ""


def _structure_sections(ds: DiscreteDataset, methods: Sequence[str], seed: int,
                        method_params: Mapping[str, Mapping[str, Any]] | None
                        ) -> tuple[list[tuple[str, Any]], dict[str, bool]]:
    """Appendix sections (each method fitted once on every row) and which methods had a
    structure to show."""
    from .classifiers.registry import capabilities, fit_method

    sections: list[tuple[str, Any]] = []
    shown: dict[str, bool] = {}
    for m in methods:
        try:
            exposes = capabilities(m).exposes
        except (KeyError, ValueError):
            exposes = ()
        if not set(exposes) & {"dag", "edge_posteriors"}:
            shown[m] = False
            sections.append((f"Appendix — {m}", f"Not applicable: {m} exposes no network "
                             "structure or edge posteriors."))
            continue
        model = fit_method(m, ds, **{"random_state": seed, **dict((method_params or {})
                                                                  .get(m, {}))})
        tab, fig, note = _structure(model, ds.names, ds.class_name)
        shown[m] = tab is not None
        if tab is None:
            sections.append((f"Appendix — {m}", f"Not applicable: {m} exposes no structure."))
            continue
        kind = "edge posteriors" if "posterior" in tab else "network"
        sections.append((f"Appendix — {m}: {kind} (fitted on all {ds.n_rows} rows)", note))
        sections.append((f"Appendix — {m}: arcs", tab))
        if fig is not None:
            sections.append((f"Appendix — {m}: edge posterior heatmap", fig))
    return sections, shown


# --------------------------------------------------------------------------------------------
# The page
# --------------------------------------------------------------------------------------------


def _checklist(items: Sequence[_Item]) -> str:
    """The checklist as an HTML table (status classes for colour); notes escaped."""
    rows = []
    for it in items:
        status = ('<span class="status-present">present</span>' if it.present
                  else '<span class="status-na">not applicable</span>')
        rows.append(f"<tr><td>{html.escape(it.code)}</td>"
                    f"<td>{html.escape(TRIPOD_AI_ITEMS[it.code])}</td><td>{status}</td>"
                    f"<td>{html.escape(it.note)}</td></tr>")
    return ("<table class='tripod-checklist'><thead><tr><th>TRIPOD+AI item</th><th>topic</th>"
            "<th>status</th><th>where / why</th></tr></thead><tbody>" + "".join(rows)
            + "</tbody></table>")


@dataclass
class _Run:
    """What every section of the report reads: the data, the finished cross-validation and
    the settings it ran with (resolved once by :func:`build_model_report`)."""

    ds: DiscreteDataset
    results: pd.DataFrame
    predictions: Any
    source: str
    methods: list
    classes: list
    positive: str
    missing: str
    method_params: Mapping[str, Mapping[str, Any]] | None
    discretization: str
    n_bins: int | None
    n_bootstrap: int

    @property
    def binary(self) -> bool:
        return len(self.classes) == 2

    @property
    def seed(self) -> int | None:
        return self.predictions.seed

    @property
    def n_folds(self) -> int:
        folds = self.predictions.folds
        return (len(np.unique(folds)) if folds is not None
                else int(self.results["fold"].nunique()))

    @property
    def counts(self) -> np.ndarray:
        return np.bincount(self.ds.y, minlength=len(self.classes))


@dataclass
class _Page:
    """The checklist items and the sections of the page, in the order they are added."""

    items: list = field(default_factory=list)
    sections: list = field(default_factory=list)

    def item(self, code: str, present: bool, note: str, *content: tuple[str, Any]) -> None:
        """Add TRIPOD+AI item ``code`` to the checklist, with its sections (headings prefixed
        by the item's code)."""
        self.items.append(_Item(code, present, note))
        for heading, body in content:
            self.sections.append((f"{code} · {heading}", body))


def _data_items(page: _Page, run: _Run) -> None:
    """TRIPOD+AI 5a (source of data), 7 (data preparation) and 8a (outcome)."""
    ds = run.ds
    attrs = ds.raw.attrs if ds.raw is not None else {}
    read_as = [f"Source: {run.source}.", f"{ds.n_rows} rows and {ds.n_vars} columns used "
               f"({ds.n_vars - 1} predictors and the outcome)."]
    if attrs.get("sep"):
        read_as.append(f"Read with column separator {attrs.get('sep')!r} and decimal mark "
                       f"{attrs.get('decimal')!r}.")
    elif ds.raw is not None:
        read_as.append("Given as a table in memory (no text was parsed, so there is no "
                       "separator or decimal mark).")
    else:
        read_as.append("Given as coded values (no file was parsed).")
    page.item("5a", True, "section 5a", ("Data source", " ".join(read_as)))
    notes = "\n\n".join(ds.notices) if ds.notices else "No column was removed or recoded."
    page.item("7", True, "section 7", ("Data preparation", notes))
    page.item("8a", True, "section 8a",
              ("Outcome", f"Outcome column: {ds.class_name}. Positive class (the event of the "
                          f"calibration{' and decision curve' if run.binary else ''}): "
                          f"{run.positive}."),
              ("Outcome classes", _outcome_table(ds.y, run.classes, run.positive)))


def _predictor_items(page: _Page, run: _Run) -> None:
    """TRIPOD+AI 9a (choice of predictors) and 9b (their handling: discretization)."""
    page.item("9a", True, "section 9a", ("Predictors", _predictor_table(run.ds)))
    cut_points = run.predictions.cut_points
    if not {c for cp in cut_points.values() for c in cp}:
        page.item("9b", True, "section 9b", ("Predictor handling", "Every predictor is "
                                             "categorical and used with its own states; no "
                                             "cut points."))
        return
    how = (f"Continuous predictors are discretized by {run.discretization}"
           + (f" into {run.n_bins} bins" if run.discretization == "quantile" and run.n_bins
              else ""))
    if run.ds.raw is not None:
        how += (", the cut points fitted on the training rows of each fold only (test "
                "rows never move a cut point).")
    else:
        how += (", once on the whole file (the data was given already coded, so every "
                "fold has the same cut points).")
    how += (" States of categorical predictors come from the whole file (they carry no "
            "outcome information).")
    page.item("9b", True, "section 9b", ("Predictor handling: discretization", how),
              ("Cut points per fold (value ≤ cut → lower bin)", _cut_point_table(cut_points)))


def _sample_items(page: _Page, run: _Run) -> None:
    """TRIPOD+AI 10 (sample size) and 11 (missing data)."""
    ds, smallest = run.ds, int(run.counts.min())
    page.item("10", True, "section 10", ("Sample size", (
        f"All {ds.n_rows} available rows were used (no sample-size calculation); the smallest "
        f"class has {smallest} rows, {smallest // max(run.n_folds, 1)} per test fold.")))
    miss_cols = int(np.sum((ds.codes < 0).any(axis=0)))
    miss_rows = int(np.sum((ds.codes < 0).any(axis=1)))
    policy = ("kept: each method learns from the available cases (or by EM) and marginalizes "
              "a missing value when it predicts" if run.missing == "keep" else
              "dropped before the folds were made (complete-case analysis)")
    dropped = run.results.groupby("method", sort=False)["n_train_dropped"].mean()
    extra = [f"{m} cannot learn from incomplete rows and left out {d:.0f} training rows per "
             "fold." for m, d in dropped.items() if d > 0]
    page.item("11", True, "section 11", ("Missing data", " ".join([
        f"{miss_rows} of {ds.n_rows} rows ({100.0 * miss_rows / max(ds.n_rows, 1):.1f} %) have "
        f"a missing value, in {miss_cols} columns. Rows with a missing value were {policy}.",
        *extra])))


def _measures_text(run: _Run) -> str:
    """TRIPOD+AI 12e in words: the performance measures and their intervals."""
    return (
        "Discrimination: ROC AUC (one-vs-rest macro mean for more than two classes) with "
        "DeLong's 95 % interval. Accuracy, log-loss (natural log) and the multi-class Brier "
        f"score with 95 % percentile bootstrap intervals over rows ({run.n_bootstrap} "
        f"replicates, seed {run.seed or 0}). Calibration: CORP reliability diagram with 90 % "
        "consistency bands (Dimitriadis, Gneiting & Jordan 2021), calibration intercept and "
        "slope by logistic recalibration with Wald intervals (Van Calster et al. 2019)"
        + (f", for P({run.positive})" if run.binary else ", top-label")
        + ". Every measure is computed from the pooled out-of-fold probabilities and per fold."
        + (" Clinical utility: decision curve of net benefit against treat all and treat none "
           "(Vickers & Elkin 2006)." if run.binary else ""))


def _analysis_items(page: _Page, run: _Run) -> None:
    """TRIPOD+AI 12a (use of the data), 12c (methods and settings), 12e (measures), 12f
    (updating), 13 (class imbalance), 15 (model output) and 16 (training vs evaluation)."""
    seed = run.seed
    page.item("12a", True, "section 12a", ("Use of the data", (
        f"Internal validation by stratified {run.n_folds}-fold cross-validation "
        f"(scikit-learn StratifiedKFold, shuffled, seed {seed}): every row is predicted once "
        "by a model that never saw it. Every method gets the same folds.")))
    settings_of = _method_settings(run.methods, seed if seed is not None else 0,
                                   run.method_params)
    page.item("12c", True, "section 12c", ("Methods and settings",
                                           _methods_table(run.methods, settings_of, seed)))
    page.item("12e", True, "section 12e", ("Performance measures", _measures_text(run)))
    page.item("12f", False, "no model updating or recalibration was done")
    counts = run.counts
    page.item("13", True, "section 13", ("Class imbalance", (
        "Class shares: " + ", ".join(f"{c} {100.0 * n / counts.sum():.1f} %"
                                     for c, n in zip(run.classes, counts, strict=True))
        + ". No resampling or reweighting was applied; folds are stratified by class.")))
    page.item("15", True, "section 15", ("Model output", (
        "Each method outputs a probability for every class; the predicted class is the most "
        "probable one (no threshold was tuned).")))
    page.item("16", False, "internal validation only: training and test rows come from the "
                           "same data set")


def _results_items(page: _Page, run: _Run) -> None:
    """TRIPOD+AI 18f (code and version), 20a (rows and outcome events) and 21 (rows and
    events per fold)."""
    from . import __version__
    from .reproduce.store import code_version

    page.item("18f", True, "section 18f", ("Software and version", (
        f"BNMA Studio {__version__} (code {code_version()}), bnma_core; seed {run.seed}.")))
    page.item("20a", True, "section 20a", ("Rows and outcome events", (
        f"{run.ds.n_rows} rows: " + ", ".join(f"{n} {c}" for c, n in
                                              zip(run.classes, run.counts, strict=True))
        + ".")))
    page.item("21", True, "section 21", ("Rows and events in each fold",
                                         _fold_table(run.predictions, run.results)))


def _calibration_table(run: _Run) -> tuple[str, pd.DataFrame]:
    """TRIPOD+AI 23a's calibration: intercept and slope with intervals and the CORP
    decomposition of the Brier score, per method and fold."""
    cal = run.predictions.calibration_summary(positive=run.positive if run.binary else None)
    tab = _interval_table(cal, "parameter", ["method", "fold"])
    dec = cal[cal["parameter"] == "slope"].assign(
        fold=lambda d: d["fold"].map(lambda f: "pooled" if pd.isna(f) else int(f) + 1))
    dec = dec.set_index(["method", "fold"])[["miscalibration", "discrimination",
                                            "uncertainty"]]
    tab = tab.join(dec.rename(columns=lambda c: f"CORP {c}"))
    return (f"Calibration of {cal['target'].iloc[0]}: intercept and slope [95 % interval] "
            "(ideal 0 and 1), CORP decomposition of the Brier score", tab)


def _performance_sections(run: _Run) -> list[tuple[str, Any]]:
    """TRIPOD+AI 23a: discrimination and scores with intervals (pooled and per fold),
    calibration, the reliability diagram and, for two classes, the decision curve."""
    from .calibration import DEFAULT_THRESHOLDS
    from .viz.calibration import decision_curve_figure, reliability_figure

    pred, binary, positive = run.predictions, run.binary, run.positive
    perf: list[tuple[str, Any]] = []
    mi = pred.metric_intervals(n_bootstrap=run.n_bootstrap, seed=run.seed or 0)
    perf.append(("Discrimination and scores, pooled over folds: estimate [95 % interval]",
                 _interval_table(mi[mi["scope"] == "pooled"], "metric", ["method"])))
    perf.append(("Scores per fold: estimate [95 % interval]",
                 _interval_table(mi[mi["scope"] == "fold"], "metric", ["method", "fold"])))
    perf.append(_calibration_table(run))
    curves, decomp, target = pred.reliability(positive=positive if binary else None)
    fig = reliability_figure({_esc(m): c for m, c in curves.items()},
                             {_esc(m): d for m, d in decomp.items()},
                             forecast_label=(f"predicted {_esc(target)}"
                                             if target != "top-label"
                                             else "top-label confidence"))
    perf.append(("Reliability diagram (CORP)", _fit_width(fig, 640)))
    if binary:
        dc = pred.decision_curve(positive=positive, thresholds=DEFAULT_THRESHOLDS)
        dfig = decision_curve_figure(dc.assign(model=dc["model"].map(_esc)),
                                     positive=_esc(positive))
        perf.append(("Decision curve", _fit_width(dfig)))
        grid = dc[dc["threshold"].isin([0.05, 0.1, 0.2, 0.3, 0.5])]
        perf.append(("Net benefit at selected thresholds",
                     grid.pivot(index="threshold", columns="model", values="net_benefit")))
    stopped = [m for m in run.methods if int((run.results["method"] == m).sum()) < run.n_folds]
    if stopped:
        perf.insert(0, ("Unfinished methods", "Not every fold finished for: "
                        + ", ".join(stopped) + "; their figures use the finished folds only."))
    return perf


def _structure_item(page: _Page, run: _Run, structures: bool) -> list[tuple[str, Any]]:
    """TRIPOD+AI 22 (model specification): the structure appendix's sections when asked for
    (each method fitted once on every row), and the item's checklist entry."""
    shown: dict[str, bool] = {}
    appendix: list[tuple[str, Any]] = []
    if structures:
        appendix, shown = _structure_sections(run.ds, run.methods, run.seed or 0,
                                              run.method_params)
    if any(shown.values()):
        page.item("22", True, "appendix (structure uncertainty): "
                  + ", ".join(m for m, s in shown.items() if s))
    else:
        page.item("22", False, "no method exposes a network structure or edge posteriors"
                  if structures else "structure appendix not requested")
    return appendix


def _resolved_run(ds: DiscreteDataset, results: pd.DataFrame, predictions: Any, source: str,
                  methods: Sequence[str] | None, positive: str | None, missing: str,
                  method_params: Mapping[str, Mapping[str, Any]] | None,
                  discretization: str | None, n_bins: int | None,
                  n_bootstrap: int | None) -> _Run:
    """The report's inputs checked (one sentence each) and its defaults resolved."""
    from .metrics import N_BOOTSTRAP

    if results.empty or not predictions.proba:
        raise ValueError("No fold finished, so there is nothing to report; run the "
                         "cross-validation to the end first.")
    classes = list(predictions.classes)
    if positive is None:
        positive = classes[1]
    if str(positive) not in classes:
        raise ValueError(f"The positive class {positive!r} is not one of the classes "
                         + ", ".join(classes) + "; choose one of them.")
    enc = ds.encoder
    return _Run(ds=ds, results=results, predictions=predictions,
                source=str(source).strip() or UNNAMED_SOURCE,
                methods=list(methods or predictions.methods), classes=classes,
                positive=str(positive), missing=missing, method_params=method_params,
                discretization=discretization or (enc.discretization if enc is not None
                                                  else "none"),
                n_bins=n_bins or (enc.n_bins if enc is not None else None),
                n_bootstrap=int(n_bootstrap or N_BOOTSTRAP))


UNNAMED_SOURCE = "a table given without a name"
"""The data's name in a report whose caller named none (an empty ``source``)."""


def build_model_report(ds: DiscreteDataset, results: pd.DataFrame, predictions: Any, *,
                       source: str, methods: Sequence[str] | None = None,
                       positive: str | None = None, missing: str = "keep",
                       method_params: Mapping[str, Mapping[str, Any]] | None = None,
                       discretization: str | None = None, n_bins: int | None = None,
                       structures: bool = True, n_bootstrap: int | None = None) -> str:
    """The model report of a finished cross-validation, as one HTML page: one builder per
    TRIPOD+AI section (data, predictors, sample size and missing data, analysis, results,
    performance, structure appendix), in the statement's order.

    Parameters
    ----------
    ds : the dataset as read (names, states, notices, the separator and decimal mark used)
    results, predictions : ``cross_validate(..., return_proba=True)``'s pair
    source : the data's name as the user gave it (file name or bundled data set; an empty
        one is reported as :data:`UNNAMED_SOURCE`)
    methods : the methods, in order (default: those of ``predictions``)
    positive : the positive class (default: the second class); the decision curve and the
        calibration of two classes are for this class
    missing : the dataset-level missing-value policy the data was read with
    method_params : parameter overrides the methods ran with
    discretization, n_bins : how continuous columns were binned (default: the encoder's)
    structures : fit each method on every row for the structure appendix
    n_bootstrap : bootstrap replicates of the intervals (default
        :data:`bnma_core.metrics.N_BOOTSTRAP`)

    Returns
    -------
    str : the HTML page.

    Raises
    ------
    ValueError
        No finished fold, or a positive class that is not a class.
    """
    from . import __version__
    from .export import html_report
    from .reproduce.store import code_version

    run = _resolved_run(ds, results, predictions, source, methods, positive, missing,
                        method_params, discretization, n_bins, n_bootstrap)
    page = _Page()
    for builder in (_data_items, _predictor_items, _sample_items, _analysis_items,
                    _results_items):
        builder(page, run)
    perf = _performance_sections(run)  # item 22 comes before 23a in the checklist
    appendix = _structure_item(page, run, structures)
    page.items.append(_Item("23a", True, "section 23a"))
    page.sections.extend((f"23a · {h}", b) for h, b in perf)
    page.item("23b", False, "one data set without clusters (centres)")

    checklist = ("Each TRIPOD+AI item (Collins et al. 2024, BMJ 385:e078378) that a software "
                 "run can answer, marked present or not applicable. Only the authors can report "
                 "the others: " + "; ".join(AUTHOR_ITEMS) + ".")
    settings = {"data": run.source, "outcome": ds.class_name, "positive class": run.positive,
                "methods": ", ".join(run.methods), "folds": run.n_folds, "seed": run.seed,
                "missing values": missing, "discretization": run.discretization,
                "version": f"{__version__} ({code_version()})"}
    html_page = html_report(f"Model report: {ds.class_name} ({run.source})",
                            [("TRIPOD+AI checklist", checklist), *page.sections, *appendix],
                            settings)
    return _with_checklist(html_page, page.items)


def _with_checklist(html_page: str, items: Sequence[_Item]) -> str:
    """The page with the checklist table right after its heading's paragraph, and the print
    style (:data:`PRINT_CSS`) added."""
    marker = "<h2>TRIPOD+AI checklist</h2>"
    i = html_page.index(marker) + len(marker)
    j = html_page.index("</p>", i) + len("</p>")
    html_page = html_page[:j] + _checklist(items) + html_page[j:]
    return html_page.replace("</head>", f"<style>{PRINT_CSS}</style></head>", 1)


def model_report(data: Any, methods: Sequence[str] | str, *, target: str | None = None,
                 positive: str | None = None, folds: int = 10, seed: int = 1,
                 discretization: str = "median", n_bins: int = 3, missing: str = "keep",
                 method_params: Mapping[str, Mapping[str, Any]] | None = None,
                 workers: int = 1, scheduler: str | None = None,
                 read_options: Mapping[str, Any] | None = None, source: str | None = None,
                 structures: bool = True, n_bootstrap: int | None = None,
                 progress: Callable[[int, int, str, int], None] | None = None,
                 should_stop: Callable[[], bool] | None = None) -> str:
    """Cross-validate ``methods`` on ``data`` and return the model report (HTML).

    Parameters
    ----------
    data : path, bytes, DataFrame or DiscreteDataset (read by
        :func:`~bnma_core.data.load_dataset` with ``read_options``: ``sep``, ``decimal``,
        ``drop_columns``)
    methods : registry names (list or comma-separated)
    source : the data's name in the report (default: the path, else "data")
    Other parameters as :func:`bnma_core.evaluation.cross_validate` and
    :func:`build_model_report`.

    Raises
    ------
    DataError, ValueError
        Unreadable data, one class only, unknown method or positive class, too few rows for
        the folds: one sentence each.
    """
    from .data import load_dataset
    from .evaluation import cross_validate

    if isinstance(methods, str):
        methods = [m.strip() for m in methods.split(",") if m.strip()]
    methods = list(dict.fromkeys(methods))
    if isinstance(data, DiscreteDataset):
        ds = data
    else:
        ds = load_dataset(data, target, discretization=discretization, n_bins=n_bins,
                          missing=missing, **dict(read_options or {}))
    if len(np.unique(ds.y)) < 2:
        raise DataError(f"The outcome {ds.class_name!r} has one class only; a model report "
                        "needs at least two classes.")
    if positive is not None and str(positive) not in ds.classes:
        raise ValueError(f"The positive class {positive!r} is not one of the classes "
                         + ", ".join(ds.classes) + "; choose one of them.")
    results, pred = cross_validate(ds, methods, folds=folds, seed=seed, missing=missing,
                                   method_params=method_params, return_proba=True,
                                   workers=workers, scheduler=scheduler, progress=progress,
                                   should_stop=should_stop)
    name = source or (str(data) if isinstance(data, (str,)) else "data")
    return build_model_report(ds, results, pred, source=name, methods=methods,
                              positive=positive, missing=missing, method_params=method_params,
                              discretization=discretization, n_bins=n_bins,
                              structures=structures, n_bootstrap=n_bootstrap)
