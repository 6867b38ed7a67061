"""Figures: evaluation (accuracy bars with error bars, ROC curves)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from ..markup import plain, plain_all

__all__ = ["accuracy_bar_figure", "interval_bar_figure", "roc_figure", "roc_small_multiples",
           "line_style", "METRIC_LABELS", "PARTIAL_COLOUR"]

PARTIAL_COLOUR = "#b0b0b0"
"""Colour of a method whose run did not finish every fold (its numbers are not comparable with
the others')."""


def accuracy_bar_figure(summary: pd.DataFrame, metric: str = "accuracy",
                        title: str | None = None) -> go.Figure:
    """Bar per method: mean of ``metric`` over folds with ± one standard deviation.

    Parameters
    ----------
    summary : DataFrame
        Output of :func:`bnma_core.evaluation.summarize` (columns ``method``,
        ``<metric>_mean`` and optionally ``<metric>_std``), or the per-fold results of
        :func:`bnma_core.evaluation.cross_validate` (summarized here).
    metric : str
        ``accuracy``, ``auc`` or ``log_loss``.
    """
    if f"{metric}_mean" not in summary.columns:
        if metric not in summary.columns:
            raise ValueError(f"The table has no {metric!r} column.")
        g = summary.groupby("method", sort=False)[metric]
        summary = pd.DataFrame({"method": list(g.groups), f"{metric}_mean": g.mean().to_numpy(),
                                f"{metric}_std": g.std(ddof=1).to_numpy()})
    mean = summary[f"{metric}_mean"].to_numpy(dtype=float)
    std_col = f"{metric}_std"
    std = (summary[std_col].fillna(0).to_numpy(dtype=float) if std_col in summary.columns
           else np.zeros_like(mean))
    methods = plain_all(summary["method"].astype(str))
    fig = go.Figure(go.Bar(
        x=methods, y=mean, error_y=dict(type="data", array=std, visible=True),
        text=[f"{m:.3f}" for m in mean], textposition="inside", insidetextanchor="start",
        textfont=dict(color="white"),  # inside, at the foot: never under the whisker
        hovertemplate="%{x}: %{y:.4f} ± %{error_y.array:.4f}<extra></extra>"))
    label = METRIC_LABELS.get(metric, metric.replace("_", " "))
    bounded = metric in ("accuracy", "auc")
    fig.update_layout(
        title=title or f"{label} by method (mean ± sd over folds)",
        xaxis_title="method", yaxis_title=label, template="plotly_white",
        margin=dict(t=80),
        # a bar's length is its value: the axis starts at 0 (0.948 must not look like half of
        # 0.971); a proportion never exceeds 1
        yaxis_range=[0.0, 1.0] if bounded else None, yaxis_rangemode="tozero")
    return fig


METRIC_LABELS = {"accuracy": "Accuracy", "auc": "AUC", "log_loss": "Log-loss",
                 "brier": "Brier score"}
"""How metrics are written in titles and axes (AUC, not 'Auc')."""

_COLOURS = ("#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2",
            "#17becf", "#bcbd22", "#7f7f7f")
_DASHES = ("solid", "dash", "dot", "dashdot")


def line_style(i: int) -> dict:
    """Colour and dash of the i-th curve: ten colours, then the same colours dashed, so no
    two of the first forty curves look alike."""
    return dict(color=_COLOURS[i % len(_COLOURS)], dash=_DASHES[(i // len(_COLOURS)) % 4])


def _curve(value: Any) -> tuple[np.ndarray, np.ndarray, float | None]:
    if isinstance(value, Mapping):
        return (np.asarray(value["fpr"]), np.asarray(value["tpr"]),
                None if value.get("auc") is None else float(value["auc"]))
    seq: Sequence = value
    return np.asarray(seq[0]), np.asarray(seq[1]), (float(seq[2]) if len(seq) > 2 else None)


def roc_figure(curves: Mapping[str, Any] | pd.DataFrame, title: str = "ROC curves", *,
               auc_label: str = "AUC") -> go.Figure:
    """ROC curves of several methods with the chance diagonal.

    Parameters
    ----------
    curves : dict or DataFrame
        ``{name: (fpr, tpr)}``, ``{name: (fpr, tpr, auc)}`` or ``{name: {"fpr", "tpr",
        "auc"}}`` (e.g. from :func:`sklearn.metrics.roc_curve`), or a long DataFrame with
        columns ``method``, ``fpr``, ``tpr``.
    auc_label : how the legend names the area (e.g. ``"pooled AUC"`` for out-of-fold rows
        ranked together, to tell it from a mean over folds)
    """
    if isinstance(curves, pd.DataFrame):
        curves = {m: (g["fpr"].to_numpy(), g["tpr"].to_numpy())
                  for m, g in curves.groupby("method", sort=False)}
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=[0, 1], y=[0, 1], mode="lines", name="chance",
                             line=dict(dash="dot", color="#999999", width=1),
                             hoverinfo="skip"))
    for i, (name, value) in enumerate(curves.items()):
        fpr, tpr, auc = _curve(value)
        label = _wrap(f"{name} ({auc_label} {auc:.3f})" if auc is not None else str(name),
                      48)  # the legend sits inside the plot: long names wrap
        fig.add_trace(go.Scatter(x=fpr, y=tpr, mode="lines", name=label,
                                 line=dict(width=2, **line_style(i))))
    fig.update_layout(
        title=title, xaxis_title="false positive rate (1 - specificity)",
        yaxis_title="true positive rate (sensitivity)", template="plotly_white",
        xaxis_range=[0, 1], yaxis_range=[0, 1], xaxis_constrain="domain",
        # the legend inside the empty lower-right corner: never cut off by a narrow column
        legend=dict(x=0.98, y=0.02, xanchor="right", yanchor="bottom",
                    bgcolor="rgba(255,255,255,0.85)", bordercolor="#cccccc", borderwidth=1),
        margin=dict(l=60, r=20, t=60, b=50))
    return fig


def _wrap(text: str, width: int) -> str:
    """``text`` broken into lines of at most ``width`` characters at spaces (plotly ``<br>``),
    so long method names neither crowd the plot nor overlap their neighbours."""
    import textwrap

    text = plain(text)  # a name typed by a user: never markup
    return "<br>".join(textwrap.wrap(text, width=width, break_long_words=False)) or text


def interval_bar_figure(table: pd.DataFrame, metric: str = "accuracy", *,
                        labels: Mapping[str, str] | None = None,
                        partial: Mapping[str, str] | None = None,
                        title: str | None = None) -> go.Figure:
    """Dot plot: per method the pooled estimate of ``metric`` (a dot) with its 95 % interval
    (a whisker).

    A dot plot, not bars: a bar's length reads as its value, so bars must start at 0, where
    intervals of 0.93-0.97 shrink to nothing; a dot and its whisker are read by position, so
    the axis may zoom to the intervals (its title says so). The method names sit on the
    vertical axis (never rotated), each value is written to the right of its interval's upper
    end (never crossed by the whisker), and the interval is the metric's own (Wilson for the
    accuracy, bootstrap over rows, DeLong / Newcombe for the AUC, from
    :func:`bnma_core.cv_summary.interval_table`), so a log-loss interval never goes below 0.

    Parameters
    ----------
    table : one row per method with ``method``, ``<metric>``, ``<metric>_lower``,
        ``<metric>_upper``
    metric : ``accuracy``, ``log_loss``, ``brier`` or ``auc``
    labels : ``{method: display name}``
    partial : ``{method: note}`` for methods that did not finish every fold: drawn grey, the
        note (e.g. ``"3 of 10 folds"``) added to the name
    """
    for col in (metric, f"{metric}_lower", f"{metric}_upper"):
        if col not in table.columns:
            raise ValueError(f"The table has no {col!r} column; pass interval_table's output.")
    labels = dict(labels or {})
    partial = dict(partial or {})
    methods = table["method"].astype(str).tolist()
    est = table[metric].to_numpy(dtype=float)
    lo = table[f"{metric}_lower"].to_numpy(dtype=float)
    hi = table[f"{metric}_upper"].to_numpy(dtype=float)
    lo = np.where(np.isfinite(lo), lo, est)
    hi = np.where(np.isfinite(hi), hi, est)
    names = [_wrap(labels.get(m, m) + (f" — {partial[m]}" if m in partial else ""), 34)
             for m in methods]
    colours = [PARTIAL_COLOUR if m in partial else _COLOURS[0] for m in methods]
    fig = go.Figure(go.Scatter(
        y=names, x=est, mode="markers", marker=dict(color=colours, size=11, symbol="circle"),
        error_x=dict(type="data", symmetric=False, array=hi - est, arrayminus=est - lo,
                     visible=True, color="#333333", thickness=2, width=6),
        customdata=np.column_stack([lo, hi]),
        hovertemplate="%{y}: %{x:.4f} (95 % interval %{customdata[0]:.4f} to "
                      "%{customdata[1]:.4f})<extra></extra>", showlegend=False))
    fig.add_trace(go.Scatter(  # the values, right of each interval's upper end
        y=names, x=hi, mode="text", text=[f"  {v:.3f}" for v in est],
        textposition="middle right", hoverinfo="skip", showlegend=False, cliponaxis=False,
        textfont=dict(color=["#777777" if m in partial else "#222222" for m in methods])))
    label = METRIC_LABELS.get(metric, metric.replace("_", " "))
    bounded = metric in ("accuracy", "auc")
    span = float(np.nanmax(hi) - np.nanmin(lo)) if len(est) else 1.0
    left = float(np.nanmin(lo)) if len(est) else 0.0
    right = float(np.nanmax(hi)) if len(est) else 1.0
    pad = max(span, 0.02)
    x_lo = max(0.0, left - 0.15 * pad)
    x_hi = right + 0.45 * pad  # room for the value labels
    zoomed = x_lo > 0.0
    fig.update_layout(
        title=title or f"{label} by method (pooled over folds; dot: estimate, line: 95 % "
                       "interval)",
        xaxis_title=label + (" (higher is better" if metric in ("accuracy", "auc")
                             else " (lower is better")
        + ("; the axis does not start at 0)" if zoomed else ")"),
        template="plotly_white",
        # a proportion's axis ends at 1; the labels past it are drawn in the right margin
        xaxis_range=[x_lo, min(x_hi, 1.0) if bounded else x_hi],
        xaxis_tickangle=0, yaxis=dict(autorange="reversed", automargin=True),
        height=max(260, 100 + 48 * len(methods)),
        margin=dict(l=10, r=70 if bounded and x_hi > 1.0 else 20, t=60, b=50))
    return fig


def roc_small_multiples(curves: Mapping[str, Any], *, labels: Mapping[str, str] | None = None,
                        columns: int = 3, title: str = "ROC curves") -> go.Figure:
    """One small ROC plot per method (the other methods' curves faint grey behind), so nine
    curves stay distinguishable.

    Parameters
    ----------
    curves : ``{method: {"fpr", "tpr", "auc"}}`` (:func:`bnma_core.evaluation.roc_curves`);
        the AUC is the pooled one and each panel's title says so
    labels : ``{method: display name}``
    columns : panels per row
    """
    from plotly.subplots import make_subplots

    labels = dict(labels or {})
    names = list(curves)
    n = max(1, len(names))
    cols = max(1, min(int(columns), n))
    rows = (n + cols - 1) // cols
    parsed = {m: _curve(v) for m, v in curves.items()}
    titles = [_wrap(labels.get(m, m), 40) + (f"<br>pooled AUC {parsed[m][2]:.3f}"
                                              if parsed[m][2] is not None else "")
              for m in names]
    fig = make_subplots(rows=rows, cols=cols, subplot_titles=titles,
                        horizontal_spacing=0.07, vertical_spacing=0.28 / rows + 0.06)
    for i, m in enumerate(names):
        r, c = i // cols + 1, i % cols + 1
        fig.add_trace(go.Scatter(x=[0, 1], y=[0, 1], mode="lines", showlegend=False,
                                 line=dict(dash="dot", color="#999999", width=1),
                                 hoverinfo="skip"), row=r, col=c)
        for other in names:
            if other != m:
                fo, to, _ = parsed[other]
                fig.add_trace(go.Scatter(x=fo, y=to, mode="lines", showlegend=False,
                                         line=dict(color="rgba(150,150,150,0.35)", width=1),
                                         hoverinfo="skip"), row=r, col=c)
        fpr, tpr, _ = parsed[m]
        fig.add_trace(go.Scatter(x=fpr, y=tpr, mode="lines", showlegend=False,
                                 name=plain(labels.get(m, m)),
                                 line=dict(width=2.5, color=_COLOURS[i % len(_COLOURS)]),
                                 hovertemplate="FPR %{x:.3f}, TPR %{y:.3f}<extra>"
                                 + plain(labels.get(m, m)) + "</extra>"), row=r, col=c)
        fig.update_xaxes(range=[0, 1], row=r, col=c, tickvals=[0, 0.5, 1],
                         title_text="false positive rate" if r == rows else None)
        fig.update_yaxes(range=[0, 1.02], row=r, col=c, tickvals=[0, 0.5, 1],
                         title_text="true positive rate" if c == 1 else None)
    for a in fig.layout.annotations:
        a.font = dict(size=12)
    fig.update_layout(title=title, template="plotly_white",
                      height=int(110 + 330 * rows), margin=dict(l=60, r=20, t=110, b=50))
    return fig
