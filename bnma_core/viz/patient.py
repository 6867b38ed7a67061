"""Figures and wording for one patient's prediction under the averaged model (DESIGN §15):
the probability bar with its two intervals, the waterfall of the findings' contributions, the
what-if scenarios side by side, and the verdict a page may show (never a plain class for a
coin flip)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import plotly.graph_objects as go

from ..markup import plain
from .graphs import label_width

__all__ = ["COIN_FLIP_MARGIN", "MISSING", "RARE", "case_report", "case_report_sections",
           "contributions_figure", "is_uncertain", "label_margins", "probability_figure",
           "next_test_table", "scenarios_figure", "uncertain_rows", "unusual_sentence", "verdict"]

RARE = 0.99
"""A case whose findings are rarer than this share of the training cases gets a warning."""

COIN_FLIP_MARGIN = 0.1
"""A prediction whose most probable class leads the runner-up by less than this is a coin flip,
whatever its intervals say (a single network has a point interval)."""

MISSING = "missing"
"""How a missing finding is shown (the Data page's word)."""

_SUPPORT = "#2ca02c"
_AGAINST = "#d62728"
_STRUCTURE = "#1f4e79"
_PARAMETER = "#7f7f7f"

FONT_SIZE = 12
"""plotly's default font size (px): tick labels, legend entries and axis titles here."""

DRAWN_WIDTH = 700
"""Width (px) assumed for a figure without its own when its legend rows are counted: the static
figures of a case report are drawn at this width (:func:`bnma_core.export.html_report`)."""


def label_margins(tick_labels: Sequence[str] = (), legend: Sequence[str] = (),
                  width: int | None = None, x_title: bool = True) -> dict:
    """Plot margins (px) computed from the text they must hold, so that a figure drawn without
    plotly's second automargin pass (a static SVG by kaleido on a loaded server) keeps every
    label whole: ``l`` fits the widest y tick label (:func:`bnma_core.viz.graphs.label_width`
    at :data:`FONT_SIZE`), ``t`` the legend's rows when it is drawn above the plot (entries
    laid out left to right over ``width``, :data:`DRAWN_WIDTH` by default), ``b`` the x tick
    labels and the x-axis title."""
    left = max((label_width(t, FONT_SIZE) for t in tick_labels), default=0.0) + 14
    rows, used = (1 if legend else 0), 0.0
    room = (width or DRAWN_WIDTH) - left - 20
    for name in legend:  # a horizontal legend entry: 40 px of symbol and gaps + its text
        w = label_width(name, FONT_SIZE) + 40
        if used and used + w > room:
            rows, used = rows + 1, 0.0
        used += w
    return dict(l=int(np.ceil(left)), r=20, t=10 + 22 * rows, b=24 + (24 if x_title else 0))


def is_uncertain(prediction: Any, row: int = 0, margin: float = COIN_FLIP_MARGIN) -> bool:
    """The decision of ``row`` could go either way: the prediction's intervals reach another
    class (:meth:`~bnma_core.explain.Prediction.uncertain`), or the most probable class leads
    the runner-up by less than ``margin``."""
    return bool(uncertain_rows(prediction, margin)[row])


def uncertain_rows(prediction: Any, margin: float = COIN_FLIP_MARGIN) -> np.ndarray:
    """:func:`is_uncertain` of every row at once, (n,) bool (``bnma predict``)."""
    p = -np.sort(-np.asarray(prediction.proba, dtype=float), axis=1)
    close = p[:, 0] - p[:, 1] < margin if p.shape[1] > 1 else np.zeros(len(p), dtype=bool)
    return close | np.asarray(prediction.uncertain(), dtype=bool)


def verdict(prediction: Any, row: int = 0, margin: float = COIN_FLIP_MARGIN) -> dict:
    """What a page shows as the prediction of ``row``: ``label`` (the class, or "uncertain"),
    ``uncertain``, ``sentence`` (:meth:`~bnma_core.explain.Prediction.describe`), ``note``
    (:meth:`~bnma_core.explain.Prediction.interval_note`: why an interval is a point or both
    are the same; "" when there is nothing to explain) and, for an uncertain case,
    ``warning``: one plain sentence naming the competing probabilities."""
    uncertain = is_uncertain(prediction, row, margin)
    c = int(prediction.predicted[row])
    note = getattr(prediction, "interval_note", None)
    out = {"label": "uncertain" if uncertain else str(prediction.classes[c]),
           "uncertain": uncertain, "sentence": prediction.describe(row),
           "note": note(row) if note is not None else ""}
    if uncertain:
        ranked = np.argsort(-prediction.proba[row])[:2]
        pair = " vs ".join(f"{prediction.classes[k]} {prediction.proba[row, k]:.2f}"
                           for k in ranked)
        out["warning"] = (f"Uncertain: {pair}. The models do not settle this case; treat it "
                          "as undecided and look at the findings below.")
    return out


def unusual_sentence(unusual: Any) -> str | None:
    """How unusual a case is, in one plain sentence (from
    :func:`bnma_core.explain.unusual_case`; None without training cases): "This combination of
    findings is rarer than 99 % of training cases." when it is (≥ :data:`RARE`), else the
    share of training cases with a more probable combination, and the conflict when > 0; with
    no finding known, that there is neither."""
    if unusual is not None and getattr(unusual, "no_findings", False):
        return ("No finding is known yet, so there is nothing to compare with the training "
                "cases and no conflict between findings.")
    if unusual is None or unusual.rarer_than is None:
        return None
    share = int(np.floor(100 * unusual.rarer_than))
    if unusual.rarer_than >= RARE:
        text = f"This combination of findings is rarer than {share} % of training cases"
    else:
        text = (f"{share} % of training cases have a more probable combination of findings: "
                + ("not unusual" if share < 90 else "somewhat unusual"))
    if unusual.conflict > 0:
        text += ("; the findings fit together worse than unrelated findings would "
                 f"(conflict {unusual.conflict:.2f})")
    return text + "."


def probability_figure(prediction: Any, row: int = 0, height: int | None = None) -> go.Figure:
    """One horizontal bar per class: the averaged probability of ``row``, a thick dark whisker
    for the structure interval (over the averaged models) and a thin grey one for the structure
    + parameter interval when drawn. The dotted line at 0.5 is where two classes tie."""
    classes = [plain(c) for c in prediction.classes]  # user labels: never markup
    p = np.asarray(prediction.proba[row], dtype=float)
    si = np.asarray(prediction.structure_interval[row], dtype=float)
    pct = round(100 * prediction.level)
    fig = go.Figure(go.Bar(
        y=classes, x=p, orientation="h", marker_color="#9ecae1", showlegend=False,
        text=[f"{v:.2f}" for v in p], textposition="inside", insidetextanchor="start",
        error_x=dict(type="data", symmetric=False, array=np.maximum(si[:, 1] - p, 0),
                     arrayminus=np.maximum(p - si[:, 0], 0), color=_STRUCTURE, thickness=4,
                     width=10),
        hovertemplate="%{y}: %{x:.3f}<extra></extra>"))
    legend = [(f"{pct} % of the averaged models", _STRUCTURE, 4)]
    if prediction.parameter_interval is not None:
        pi = np.asarray(prediction.parameter_interval[row], dtype=float)
        fig.add_trace(go.Scatter(
            y=classes, x=p, mode="markers", marker=dict(size=1, color=_PARAMETER),
            showlegend=False,
            error_x=dict(type="data", symmetric=False, array=np.maximum(pi[:, 1] - p, 0),
                         arrayminus=np.maximum(p - pi[:, 0], 0), color=_PARAMETER,
                         thickness=1.5, width=18),
            hovertemplate="%{y}: " + f"{pct} % interval with parameter uncertainty"
                          "<extra></extra>"))
        legend.append((f"{pct} % with parameter uncertainty", _PARAMETER, 1.5))
    for name, color, width in legend:  # legend entries drawn as the whiskers' lines
        fig.add_trace(go.Scatter(x=[None], y=[None], mode="lines", name=name,
                                 line=dict(color=color, width=width)))
    fig.add_vline(x=0.5, line_dash="dot", line_color="#555")
    margin = label_margins(classes, [name for name, _, _ in legend])
    fig.update_layout(
        height=height or margin["t"] + margin["b"] + 40 * len(classes) + 20, margin=margin,
        xaxis=dict(range=[0, 1.0001], title="probability", dtick=0.1, automargin=True),
        yaxis=dict(autorange="reversed", automargin=True), plot_bgcolor="white", bargap=0.45,
        legend=dict(orientation="h", yanchor="bottom", y=1.0, x=0))
    return fig


def _finding_label(name: str, value: Any) -> str:
    return f"{plain(name)} = {MISSING if value is None else plain(value)}"


def contributions_figure(shapley: Any, values: dict, classes: Sequence[Any],
                         height: int | None = None, row_height: int = 34) -> go.Figure:
    """Waterfall of the findings' Shapley values (nats of log-odds of the predicted class),
    from "no finding known" to "this case", findings sorted by |contribution| (largest first,
    at the top). Green steps support the predicted class, red ones speak against it; the
    whiskers are ± one standard deviation of the finding's contribution across the averaged
    models (the spread over structures), absent for a single network.

    Parameters
    ----------
    shapley : ShapleyResult
        From :func:`bnma_core.explain.shapley_values`.
    values : dict
        Finding name -> its value (state label), for the labels.
    classes : sequence
        The estimator's ``classes_`` (to name the predicted class).
    height, row_height : int, optional
        Figure height in pixels (default: ``row_height`` per bar plus room for the axis).
    """
    target = plain(classes[shapley.target])
    order = np.argsort(-np.abs(shapley.values), kind="stable")
    labels = [_finding_label(shapley.names[k], values.get(shapley.names[k])) for k in order]
    steps = np.asarray(shapley.values, dtype=float)[order]
    y = ["no finding known"] + labels + ["this case"]
    x = [shapley.empty] + list(steps) + [shapley.full]
    fig = go.Figure(go.Waterfall(
        orientation="h", y=y, x=x, measure=["absolute"] + ["relative"] * len(steps) + ["total"],
        increasing=dict(marker=dict(color=_SUPPORT)), decreasing=dict(marker=dict(color=_AGAINST)),
        totals=dict(marker=dict(color="#6baed6")), connector=dict(line=dict(color="#bbb")),
        text=[f"{shapley.empty:+.2f}"] + [f"{v:+.2f}" for v in steps] + [f"{shapley.full:+.2f}"],
        textposition="outside", hovertemplate="%{y}: %{text}<extra></extra>",
        showlegend=False))
    if shapley.model_sd is not None and len(steps):
        sd = np.asarray(shapley.model_sd, dtype=float)[order]
        ends = shapley.empty + np.cumsum(steps)
        fig.add_trace(go.Scatter(
            y=labels, x=ends, mode="markers", marker=dict(size=3, color="#333"),
            error_x=dict(type="data", array=sd, color="#333", thickness=1.5, width=6),
            name="spread across the averaged models (± 1 sd)", showlegend=True,
            hovertemplate="%{y}: spread ± %{error_x.array:.2f}<extra></extra>"))
    fig.add_vline(x=0, line_color="#555", line_width=1)
    for name, color in ((f"supports {target}", _SUPPORT), (f"speaks against {target}", _AGAINST)):
        fig.add_trace(go.Bar(x=[None], y=[None], marker_color=color, name=name,
                             showlegend=True, orientation="h"))
    path = np.concatenate([[0.0, shapley.empty], shapley.empty + np.cumsum(steps)])
    if shapley.model_sd is not None and len(steps):
        path = np.concatenate([path, ends - sd, ends + sd])
    lo, hi = float(path.min()), float(path.max())
    pad = 0.18 * max(hi - lo, 1e-9)  # room for the value labels outside the bars
    # the legend above the plot: below it, its distance from the x-axis title would depend on
    # the figure's height (paper coordinates) and it was drawn over the title
    margin = label_margins(y, [t.name for t in fig.data if t.showlegend])
    fig.update_layout(
        height=height or margin["t"] + margin["b"] + row_height * len(y) + 20, margin=margin,
        xaxis=dict(title=f"log-odds of {target} (0 = even; right = more likely)",
                   zeroline=False, range=[lo - pad, hi + pad], automargin=True),
        yaxis=dict(autorange="reversed", type="category", automargin=True),
        plot_bgcolor="white",
        legend=dict(orientation="h", yanchor="bottom", y=1.0, x=0))
    return fig


def scenarios_figure(prediction: Any, names: Sequence[str], cls: int | None = None,
                     height: int | None = None) -> go.Figure:
    """The probability of class ``cls`` (default: the first row's predicted class) for the
    case and its what-if scenarios side by side (row k of ``prediction`` is named
    ``names[k]``), with the structure interval as a thick whisker and the structure +
    parameter interval as a thin one when drawn."""
    c = int(prediction.predicted[0]) if cls is None else int(cls)
    p = np.asarray(prediction.proba[:, c], dtype=float)
    si = np.asarray(prediction.structure_interval[:, c], dtype=float)
    target = plain(prediction.classes[c])
    names = [plain(n) for n in names]
    fig = go.Figure(go.Bar(
        x=names, y=p, marker_color=["#6baed6"] + ["#fdae6b"] * (len(p) - 1),
        text=[f"{v:.2f}" for v in p], textposition="inside", showlegend=False,
        error_y=dict(type="data", symmetric=False, array=np.maximum(si[:, 1] - p, 0),
                     arrayminus=np.maximum(p - si[:, 0], 0), color=_STRUCTURE, thickness=4,
                     width=10),
        hovertemplate="%{x}: %{y:.3f}<extra></extra>"))
    if prediction.parameter_interval is not None:
        pi = np.asarray(prediction.parameter_interval[:, c], dtype=float)
        fig.add_trace(go.Scatter(
            x=names, y=p, mode="markers", marker=dict(size=1, color=_PARAMETER),
            name="with parameter uncertainty", showlegend=False,
            error_y=dict(type="data", symmetric=False, array=np.maximum(pi[:, 1] - p, 0),
                         arrayminus=np.maximum(p - pi[:, 0], 0), color=_PARAMETER,
                         thickness=1.5, width=18), hoverinfo="skip"))
    fig.add_hline(y=0.5, line_dash="dot", line_color="#555")
    margin = label_margins(["1.0"], x_title=False)
    margin["l"] += 24  # the y-axis title beside the tick labels
    margin["b"] += int(np.ceil(max(label_width(n, FONT_SIZE) for n in names) * 0.7))  # tilted
    fig.update_layout(height=height or 340, margin=margin,
                      xaxis=dict(automargin=True),
                      yaxis=dict(range=[0, 1.0001], title=f"probability of {target}",
                                 automargin=True),
                      plot_bgcolor="white")
    return fig


def case_report_sections(prediction: Any, findings: dict, shapley: Any = None,
                         unusual: Any = None, next_tests: Any = None,
                         next_note: str = "") -> list:
    """The sections of a one-page case report (for :func:`bnma_core.export.html_report`):
    the prediction in words (with the uncertain warning and how unusual the case is), the
    probability bar, the contributions waterfall (its labels name every known finding with
    its value; the unknown ones are listed in words) and the next-test table, sized to fit an
    A4 page with the settings.

    Parameters
    ----------
    prediction : Prediction
    findings : dict
        Finding name -> value (None = missing), in the data's order.
    shapley : ShapleyResult, optional
    unusual : Unusual, optional
    next_tests : DataFrame, optional
        The next-test ranking as shown on the page.
    next_note : str, optional
        What the ranking is computed under (``NextTest.note``), printed under it.
    """
    v = verdict(prediction)
    text = v["sentence"] + "."
    if v["note"]:
        text += " " + v["note"]
    if v["uncertain"]:
        text += "\n\n" + v["warning"]
    rare = unusual_sentence(unusual)
    if rare:
        text += "\n\n" + rare
    unknown = [f for f, x in findings.items() if x is None]
    text += "\n\nNot known: " + (", ".join(unknown) if unknown else "none") + "."
    sections = [("Prediction", text),
                ("How likely, and how sure", probability_figure(prediction, height=150))]
    if shapley is not None and len(shapley.names):
        sections.append(("What each finding contributes",
                         contributions_figure(shapley, findings, prediction.classes,
                                              row_height=18)))
    if next_tests is not None and len(next_tests):
        sections.append(("Which test next", next_tests.set_index(next_tests.columns[0])))
        if next_note:
            sections.append(("How the next tests are computed", next_note))
    return sections


def next_test_table(next_test: Any):
    """The next-test ranking as the Patient page and the case report show it (best first):
    the finding, the uncertainty it removes on average (value of information as a share of
    the class entropy) and the chance it changes the decision; None when every finding is
    known.

    Parameters
    ----------
    next_test : NextTest
        From :func:`bnma_core.explain.next_test`.
    """
    import pandas as pd

    if next_test is None or not len(next_test.findings):
        return None
    h = next_test.entropy
    return pd.DataFrame({
        "finding not yet known": list(next_test.findings),
        "uncertainty it removes on average": [
            f"{100 * v / h:.0f} %" if h > 0 else "0 %" for v in next_test.voi],
        "chance it changes the decision": [f"{100 * p:.0f} %"
                                           for p in next_test.flip_probability]})


def case_report(prediction: Any, findings: dict, settings: dict, shapley: Any = None,
                unusual: Any = None, next_tests: Any = None, identifier: str = "",
                notes: str = "", next_note: str = "") -> str:
    """The one-page case report (HTML that prints on one A4 page, DESIGN §15) as the Patient
    page's button and ``bnma explain --report`` write it: :func:`case_report_sections` in
    :func:`bnma_core.export.html_report` with static figures, the settings (data, method,
    seed, version) and the editable "Patient identifier" and "Notes" fields (escaped).

    Parameters
    ----------
    prediction, findings, shapley, unusual
        As in :func:`case_report_sections`; a part that could not be computed is None.
    settings : dict
        The run's settings, printed first.
    next_tests : DataFrame or NextTest, optional
        The ranking as shown (:func:`next_test_table`) or the result it is made from.
    identifier, notes : str
        Initial text of the report's two fields.
    next_note : str, optional
        The sentence shown beside the ranking (``NextTest.note``); taken from ``next_tests``
        when that is a ``NextTest``.
    """
    from .. import export

    if next_tests is not None and hasattr(next_tests, "flip_probability"):
        next_note = next_note or getattr(next_tests, "note", "") or ""
        next_tests = next_test_table(next_tests)
    sections = case_report_sections(prediction, findings, shapley, unusual, next_tests,
                                    next_note)
    return export.html_report("Case report", sections, settings=settings,
                              fields={"Patient identifier": identifier, "Notes": notes},
                              figures="static")
