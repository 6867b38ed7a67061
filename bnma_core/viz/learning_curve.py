"""Figure of a learning curve (:mod:`bnma_core.learning_curve`): held-out log-loss (or
accuracy) of the single best network, order-MCMC averaging and the true network against the
training size, with an interval over repetitions."""

from __future__ import annotations

import math

import pandas as pd
import plotly.graph_objects as go

__all__ = ["learning_curve_figure"]

CURVE_STYLE = {"single": ("#d62728", "solid", "circle"),
               "bma": ("#1f77b4", "solid", "diamond"),
               "true": ("#2ca02c", "dash", None)}
"""(colour, dash, marker symbol) of each predictor's curve."""

METRIC_TITLES = {"log_loss": "held-out log-loss (nats, lower is better)",
                 "accuracy": "held-out accuracy"}
EXCESS_TITLES = {"log_loss": "excess log-loss over the true network (nats)",
                 "accuracy": "accuracy minus the true network's"}


def _rgba(hex_color: str, alpha: float) -> str:
    h = hex_color.lstrip("#")
    return f"rgba({int(h[0:2], 16)},{int(h[2:4], 16)},{int(h[4:6], 16)},{alpha})"


def learning_curve_figure(results: pd.DataFrame, metric: str = "log_loss",
                          title: str | None = None, level: float = 0.9,
                          sizes: list[int] | None = None, excess: bool = False) -> go.Figure:
    """Curves of ``metric`` against the training size, one per predictor, each with a band
    of its interval over repetitions.

    Parameters
    ----------
    results : pandas.DataFrame
        Rows of :func:`bnma_core.learning_curve.learning_curve` (the tables of the sizes done
        so far, concatenated): columns ``size``, ``repetition``, ``model``, ``log_loss``,
        ``accuracy``.
    metric : {"log_loss", "accuracy"}
    title : str, optional
    level : float
        Coverage of the band: mean ± Student t quantile · sd / sqrt(repetitions)
        (:func:`bnma_core.learning_curve.summarize_learning_curve`); no band with one
        repetition.
    sizes : list of int, optional
        All training sizes of the run: the x axis spans them from the start, so that the
        curves grow into a fixed frame while the sizes finish.
    excess : bool
        Plot each learner's metric minus the true network's on the same repetition (log-loss:
        the excess over the floor H(C | X), the part learning can still remove), with the true
        network at 0; differences between the learners of a few hundredths of a nat then fill
        the plot instead of a thin sliver above the floor.

    Returns
    -------
    plotly.graph_objects.Figure
        For each predictor present a band trace (``"<model> interval"``, no legend entry) and
        a line trace named by :data:`bnma_core.learning_curve.MODEL_LABELS`, and one legend
        entry that says what the bands are; x axis logarithmic (training rows).
    """
    from ..learning_curve import MODELS, summarize_learning_curve

    if excess and len(results):
        results = _minus_truth(results, metric)
    summary = summarize_learning_curve(results, metric, level) if len(results) else \
        pd.DataFrame(columns=["size", "model", "mean", "low", "high", "n"])
    fig = go.Figure()
    for model in MODELS:
        part = summary[summary["model"] == model].sort_values("size")
        if not part.empty:
            _add_curve(fig, model, part, level)
    if any(t.name.endswith(" interval") for t in fig.data):  # what the shading means
        fig.add_trace(go.Scatter(
            x=[None], y=[None], mode="lines", fill="toself", line=dict(width=0),
            fillcolor="rgba(120,120,120,0.25)", hoverinfo="skip",
            name=f"shaded: {int(round(level * 100))} % interval of the mean"))
    all_sizes = sorted(set(sizes or []) | set(summary["size"].astype(int).tolist()))
    _layout(fig, all_sizes, metric, title, excess)
    return fig


def _minus_truth(results: pd.DataFrame, metric: str) -> pd.DataFrame:
    """``results`` with each row's ``metric`` minus the true network's on the same size and
    repetition (the ``excess`` view of :func:`learning_curve_figure`).

    Parameters
    ----------
    results : pandas.DataFrame
        Rows of :func:`bnma_core.learning_curve.learning_curve`.
    metric : str

    Returns
    -------
    pandas.DataFrame
        A copy; the true network's rows become 0.
    """
    truth = results[results["model"] == "true"].set_index(["size", "repetition"])[metric]
    results = results.copy()
    key = pd.MultiIndex.from_frame(results[["size", "repetition"]])
    results[metric] = results[metric].to_numpy() - truth.reindex(key).to_numpy()
    return results


def _add_curve(fig: go.Figure, model: str, part: pd.DataFrame, level: float) -> None:
    """Add one predictor's interval band (not for the true network, nor with one repetition)
    and its mean line to ``fig``.

    Parameters
    ----------
    fig : plotly.graph_objects.Figure
    model : str
        One of :data:`bnma_core.learning_curve.MODELS`.
    part : pandas.DataFrame
        Its rows of :func:`bnma_core.learning_curve.summarize_learning_curve`, by size.
    level : float
        Coverage of the band.
    """
    from ..learning_curve import MODEL_LABELS

    color, dash, symbol = CURVE_STYLE[model]
    band = part.dropna(subset=["low", "high"])
    if model != "true" and not band.empty:
        bx = band["size"].tolist()
        fig.add_trace(go.Scatter(
            x=bx + bx[::-1], y=band["high"].tolist() + band["low"].tolist()[::-1],
            mode="lines", fill="toself", fillcolor=_rgba(color, 0.15), line=dict(width=0),
            name=f"{model} interval", showlegend=False, hoverinfo="skip"))
    fig.add_trace(go.Scatter(
        x=part["size"].tolist(), y=part["mean"].tolist(),
        mode="lines+markers" if symbol else "lines",
        name=MODEL_LABELS[model], line=dict(color=color, dash=dash, width=2.5),
        marker=dict(symbol=symbol or "circle", size=8),
        customdata=part[["low", "high", "n"]].to_numpy(),
        hovertemplate=(f"{MODEL_LABELS[model]}<br>%{{x}} training rows<br>"
                       f"mean %{{y:.4f}}<br>{int(level * 100)}% interval "
                       "%{customdata[0]:.4f} – %{customdata[1]:.4f}"
                       "<br>%{customdata[2]} repetitions<extra></extra>")))


def _layout(fig: go.Figure, all_sizes: list[int], metric: str, title: str | None,
            excess: bool) -> None:
    """Axes, legend and frame of :func:`learning_curve_figure`: a logarithmic x axis that
    spans ``all_sizes`` from the start, so the curves grow into a fixed frame.

    Parameters
    ----------
    fig : plotly.graph_objects.Figure
    all_sizes : list of int
        Sorted training sizes (run and done).
    metric : str
    title : str or None
    excess : bool
        Whether the y axis shows the excess over the true network (zero line drawn).
    """
    xaxis = dict(title="training rows", type="log", tickvals=all_sizes or None,
                 tickformat=",d")
    if all_sizes:
        xaxis["range"] = [math.log10(all_sizes[0]) - 0.08, math.log10(all_sizes[-1]) + 0.08]
    fig.update_layout(
        title=title, xaxis=xaxis,
        yaxis=dict(title=(EXCESS_TITLES if excess else METRIC_TITLES)[metric]),
        height=420, margin=dict(l=60, r=20, t=50 if title else 20, b=50),
        plot_bgcolor="white", hovermode="closest",
        legend=dict(orientation="h", yanchor="bottom", y=1.0, xanchor="right", x=1.0))
    fig.update_xaxes(showgrid=True, gridcolor="#eeeeee")
    fig.update_yaxes(showgrid=True, gridcolor="#eeeeee", zeroline=excess,
                     zerolinecolor="#bbbbbb")
