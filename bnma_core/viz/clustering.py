"""Figures of the clustering estimators (EMA-TAN and baselines)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go

from ..markup import plain_all
from .graphs import heatmap_figure

__all__ = ["cluster_profiles_figure", "cluster_sizes_figure", "loglik_traces_figure",
           "contingency_figure"]


def loglik_traces_figure(traces: Sequence[Sequence[float]],
                         collapsed: Sequence[bool] | None = None, best: int | None = None,
                         title: str = "Log-likelihood of each start") -> go.Figure:
    """One line per start: training log-likelihood against the iteration. Collapsed starts are
    dashed grey, the selected start thick."""
    fig = go.Figure()
    for s, tr in enumerate(traces):
        tr = np.asarray(tr, dtype=float)
        if tr.size == 0:
            continue
        is_col = bool(collapsed[s]) if collapsed is not None and s < len(collapsed) else False
        is_best = best is not None and s == best
        fig.add_trace(go.Scatter(
            x=np.arange(1, tr.size + 1), y=tr, mode="lines",
            name=f"start {s + 1}" + (" (collapsed)" if is_col else "")
            + (" (selected)" if is_best else ""),
            line=dict(width=3.5 if is_best else 1.2, dash="dot" if is_col else "solid",
                      color="#999999" if is_col and not is_best else None),
            opacity=1.0 if is_best else 0.7,
            hovertemplate="iteration %{x}<br>log-likelihood %{y:.2f}<extra>%{fullData.name}"
                          "</extra>"))
    fig.update_layout(title=title, xaxis_title="iteration", yaxis_title="log-likelihood",
                      showlegend=len(traces) <= 12, height=380,
                      margin=dict(l=60, r=20, t=50, b=50))
    return fig


def cluster_profiles_figure(profiles: Sequence[np.ndarray], names: Sequence[str],
                            states: Sequence[Sequence[str]],
                            cluster_names: Sequence[str] | None = None,
                            title: str = "Cluster profiles: P(value | cluster)") -> go.Figure:
    """Heatmap with one row per (variable, state) and one column per cluster, the probability
    of the state within the cluster (``profiles[i]`` has shape (n_clusters, r_i))."""
    k = profiles[0].shape[0] if len(profiles) else 0
    cols = list(cluster_names) if cluster_names is not None else [
        f"cluster {c + 1}" for c in range(k)]
    rows, labels = [], []
    for name, prof, st in zip(names, profiles, states):
        for s in range(prof.shape[1]):
            rows.append(prof[:, s])
            labels.append(f"{name} = {st[s] if s < len(st) else s}")
    mat = np.array(rows) if rows else np.zeros((0, k))
    fig = heatmap_figure(mat, labels, cols, title, zmin=0.0, zmax=1.0,
                         value_label="probability", col_title="cluster")
    fig.update_layout(height=max(300, 60 + 18 * len(labels)))
    return fig


def cluster_sizes_figure(sizes: Sequence[int], cluster_names: Sequence[str] | None = None,
                         title: str = "Cluster sizes") -> go.Figure:
    """Bar chart of the number of rows assigned to each cluster."""
    names = list(cluster_names) if cluster_names is not None else [
        f"cluster {c + 1}" for c in range(len(sizes))]
    fig = go.Figure(go.Bar(x=plain_all(names), y=list(sizes), text=list(sizes),
                           textposition="auto"))
    fig.update_layout(title=title, yaxis_title="rows", height=300,
                      margin=dict(l=60, r=20, t=50, b=40))
    return fig


def contingency_figure(table: np.ndarray, class_names: Sequence[str],
                       cluster_names: Sequence[str] | None = None,
                       title: str = "Classes against clusters") -> go.Figure:
    """Counts of rows per (class, cluster)."""
    table = np.asarray(table)
    cols = list(cluster_names) if cluster_names is not None else [
        f"cluster {c + 1}" for c in range(table.shape[1])]
    return heatmap_figure(table, list(class_names), cols, title, value_label="rows",
                          row_title="class", col_title="cluster", annotate=True)
