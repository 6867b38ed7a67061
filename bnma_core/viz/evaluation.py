"""Figures: evaluation (accuracy bars with error bars, ROC curves)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
import plotly.graph_objects as go

__all__ = ["accuracy_bar_figure", "roc_figure"]


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
        text=[f"{m:.3f}" for m in mean], textposition="outside",
        hovertemplate="%{x}: %{y:.4f} ± %{error_y.array:.4f}<extra></extra>"))
    label = metric.replace("_", " ")
    lo = float(np.nanmin(mean - std)) if len(mean) else 0.0
    fig.update_layout(
        title=title or f"{label.capitalize()} by method (mean ± sd over folds)",
        xaxis_title="method", yaxis_title=label, template="plotly_white",
        yaxis_range=[max(0.0, lo - 0.05), 1.02] if metric in ("accuracy", "auc") else None)
    return fig


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
                             line=dict(dash="dash", color="grey"), hoverinfo="skip"))
    for name, value in curves.items():
        fpr, tpr, auc = _curve(value)
        label = f"{name} (AUC {auc:.3f})" if auc is not None else str(name)
        fig.add_trace(go.Scatter(x=fpr, y=tpr, mode="lines", name=label))
    fig.update_layout(title=title, xaxis_title="false positive rate (1 - specificity)",
                      yaxis_title="true positive rate (sensitivity)", template="plotly_white",
                      xaxis_range=[0, 1], yaxis_range=[0, 1.02])
    return fig
