"""Figures: evaluation (accuracy bars with error bars, ROC curves)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
import plotly.graph_objects as go

__all__ = ["accuracy_bar_figure", "roc_figure", "line_style", "METRIC_LABELS"]


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
    methods = summary["method"].astype(str).tolist()
    fig = go.Figure(go.Bar(
        x=methods, y=mean, error_y=dict(type="data", array=std, visible=True),
        text=[f"{m:.3f}" for m in mean], textposition="inside", insidetextanchor="start",
        textfont=dict(color="white"),  # inside, at the foot: never under the whisker
        hovertemplate="%{x}: %{y:.4f} ± %{error_y.array:.4f}<extra></extra>"))
    label = METRIC_LABELS.get(metric, metric.replace("_", " "))
    bounded = metric in ("accuracy", "auc")
    lo = float(np.nanmin(mean - std)) if len(mean) else 0.0
    fig.update_layout(
        title=title or f"{label} by method (mean ± sd over folds)",
        xaxis_title="method", yaxis_title=label, template="plotly_white",
        margin=dict(t=80),
        # a proportion never exceeds 1: the axis ends there
        yaxis_range=[max(0.0, lo - 0.05), 1.0] if bounded else None)
    return fig


METRIC_LABELS = {"accuracy": "Accuracy", "auc": "AUC", "log_loss": "Log-loss"}
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


def roc_figure(curves: Mapping[str, Any] | pd.DataFrame, title: str = "ROC curves"
               ) -> go.Figure:
    """ROC curves of several methods with the chance diagonal.

    Parameters
    ----------
    curves : dict or DataFrame
        ``{name: (fpr, tpr)}``, ``{name: (fpr, tpr, auc)}`` or ``{name: {"fpr", "tpr",
        "auc"}}`` (e.g. from :func:`sklearn.metrics.roc_curve`), or a long DataFrame with
        columns ``method``, ``fpr``, ``tpr``.
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
        label = f"{name} (AUC {auc:.3f})" if auc is not None else str(name)
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
