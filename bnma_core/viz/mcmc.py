"""Figures for order MCMC and BMA over node orders (Hwang & Zhang 2005, Figs. 5-7 and 9)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from ..markup import plain

__all__ = ["trace_figure", "rank_correlation_figure", "edge_posterior_heatmap",
           "orders_accuracy_figure"]

_MAX_POINTS = 1500  # per chain: SVG lines stay quick to redraw


def _thin(df: pd.DataFrame) -> pd.DataFrame:
    step = max(1, len(df) // _MAX_POINTS)
    return df.iloc[::step]


SCORE_UNITS = {"log2": ("log2_score", "log2 P(order, data)"),
               "ln": ("log_score", "ln P(order, data)")}
"""Units of an order score: the trace's column and the axis title naming the unit."""
SCORE_TICKS = ",.7~r"
"""One tick format for order scores: thousands separators, the decimals the tick needs and no
more ("−3,339", "−3,338.5"), never an exponent."""


def trace_figure(trace_df: pd.DataFrame, reference_log2: float | None = None,
                 burn_in: int | None = None, title: str = "Order MCMC trace",
                 unit: str = "log2") -> go.Figure:
    """log P(≺, D) per iteration, one line per chain (paper Fig. 5: log2).

    Parameters
    ----------
    trace_df : DataFrame with columns chain, iteration and the unit's score column
        (``log2_score`` or ``log_score``, :data:`SCORE_UNITS`)
    reference_log2 : float, optional
        Score of a reference order (e.g. the true network's) in the figure's unit, drawn
        dashed.
    burn_in : int, optional
        Draws a vertical line at the end of burn-in.
    unit : {"log2", "ln"}
        The score's logarithm, named on the y axis; ticks as :data:`SCORE_TICKS`.
    """
    if unit not in SCORE_UNITS:
        raise ValueError(f"unit must be one of {', '.join(SCORE_UNITS)} (got {unit!r}).")
    column, y_title = SCORE_UNITS[unit]
    fig = go.Figure()
    for chain, d in trace_df.groupby("chain", sort=True):
        d = _thin(d)
        fig.add_trace(go.Scatter(x=d["iteration"], y=d[column], mode="lines",
                                   name=f"chain {chain}"))
    if reference_log2 is not None and len(trace_df):
        # a legend entry (beside the plot), not a label on the line: a label sat under the
        # chains' lines
        lo, hi = float(trace_df["iteration"].min()), float(trace_df["iteration"].max())
        fig.add_trace(go.Scatter(x=[lo, hi], y=[reference_log2] * 2, mode="lines",
                                 name="reference order", hoverinfo="name+y",
                                 line={"dash": "dash", "color": "#444", "width": 2}))
    if burn_in:
        fig.add_vline(x=burn_in, line_dash="dot", line_color="#888")
        fig.add_annotation(x=burn_in, y=1.0, yref="paper", yanchor="top", xanchor="left",
                           text="end of burn-in", showarrow=False,
                           font={"size": 11, "color": "#555"}, bgcolor="rgba(255,255,255,0.8)")
    fig.update_layout(title=title, xaxis_title="iteration", yaxis_title=y_title,
                      yaxis_tickformat=SCORE_TICKS, xaxis_tickformat=",d",
                      template="plotly_white")
    return fig


def rank_correlation_figure(df: pd.DataFrame, title: str | None = None) -> go.Figure:
    """Spearman rank correlation with a reference order (paper Fig. 6).

    ``df`` either has columns n_train and spearman (one row per run; the figure shows the mean
    and standard deviation per training size, one series per ``class_variable`` if present) or
    columns iteration and spearman (a live trace, one line per ``chain``).
    """
    fig = go.Figure()
    if "n_train" in df.columns:
        groups = df.groupby("class_variable") if "class_variable" in df.columns else [("", df)]
        for name, d in groups:
            agg = d.groupby("n_train")["spearman"].agg(["mean", "std"]).reset_index()
            fig.add_trace(go.Scatter(x=agg["n_train"].astype(str), y=agg["mean"],
                                     error_y={"type": "data", "array": agg["std"].fillna(0)},
                                     mode="lines+markers", name=str(name) or "mean"))
        fig.update_layout(xaxis_title="training set size", xaxis_type="category")
        title = title or "Rank correlation of sampled orders with the reference order"
    else:
        for chain, d in df.groupby("chain") if "chain" in df.columns else [(0, df)]:
            d = _thin(d)
            fig.add_trace(go.Scatter(x=d["iteration"], y=d["spearman"], mode="lines",
                                       name=f"chain {chain}"))
        fig.update_layout(xaxis_title="iteration")
        title = title or "Spearman correlation with the reference order"
    fig.update_layout(title=title, yaxis_title="Spearman rank correlation",
                      yaxis_range=[-1, 1], template="plotly_white")
    return fig


def edge_posterior_heatmap(edge_posterior: pd.DataFrame | np.ndarray,
                           names: Sequence[str] | None = None,
                           title: str = "Edge posterior P(parent -> child | data)") -> go.Figure:
    """Heatmap of edge posterior probabilities (rows = parents, columns = children), every
    variable labelled (:func:`bnma_core.viz.graphs.heatmap_figure`)."""
    from .graphs import heatmap_figure

    if isinstance(edge_posterior, pd.DataFrame):
        names = list(edge_posterior.index) if names is None else list(names)
        z = edge_posterior.to_numpy()
    else:
        z = np.asarray(edge_posterior)
        names = [str(i) for i in range(z.shape[0])] if names is None else list(names)
    return heatmap_figure(z, names, names, title, zmin=0.0, zmax=1.0,
                          value_label="P(edge | data)", row_title="parent", col_title="child",
                          annotate=False)


def orders_accuracy_figure(df: pd.DataFrame, x: str | None = None,
                           title: str = "Accuracy of BMA over node orders") -> go.Figure:
    """Mean accuracy (± std over runs) per method against ``x`` (paper Figs. 7 and 9).

    ``df`` has columns method, accuracy and ``x`` (default n_train, or missing_pct if present
    and n_train is not); with a ``class_variable`` column each class variable gets its own
    line style.
    """
    if x is None:
        x = "n_train" if "n_train" in df.columns else "missing_pct"
    fig = go.Figure()
    keys = ["class_variable", "method"] if "class_variable" in df.columns else ["method"]
    dashes = ["solid", "dash", "dot", "dashdot"]
    cvs = list(dict.fromkeys(df["class_variable"])) if "class_variable" in df.columns else []
    for key, d in df.groupby(keys, sort=False):
        key = key if isinstance(key, tuple) else (key,)
        agg = d.groupby(x)["accuracy"].agg(["mean", "std"]).reset_index()
        name = " / ".join(plain(k) for k in key)
        dash = dashes[cvs.index(key[0]) % 4] if cvs else "solid"
        fig.add_trace(go.Scatter(x=agg[x].astype(str), y=agg["mean"], name=name,
                                 mode="lines+markers", line={"dash": dash},
                                 error_y={"type": "data", "array": agg["std"].fillna(0)}))
    fig.update_layout(title=title, xaxis_title=x.replace("_", " "), yaxis_title="accuracy",
                      xaxis_type="category", template="plotly_white")
    return fig
