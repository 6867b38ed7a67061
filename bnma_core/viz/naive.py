"""Figures for model-averaged naive Bayes (Dash & Cooper 2002): arc posteriors, MAP versus
model-averaged parameters, ROC curves and the ROC-gain experiment plots (their Fig. 2-5)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from ..markup import plain, plain_all

__all__ = [
    "arc_posterior_figure",
    "parameter_comparison_figure",
    "roc_curves_figure",
    "roc_gain_figure",
]


def arc_posterior_figure(names: Sequence[str], arc_posterior: Sequence[float],
                         top: int | None = 40) -> go.Figure:
    """Horizontal bars of P(C -> F_i | D), the posterior probability that each feature is
    connected to the class (the weights of eq. 13), most probable first.

    Parameters
    ----------
    names : feature names
    arc_posterior : one probability per feature (``MANaiveBayes.arc_posterior_``)
    top : show only this many features (None = all)
    """
    post = np.asarray(arc_posterior, dtype=float)
    if len(names) != len(post):
        raise ValueError("one name per arc posterior is needed")
    order = np.argsort(-post, kind="stable")[: top or len(post)]
    fig = go.Figure(go.Bar(
        x=post[order][::-1], y=[plain(names[i]) for i in order][::-1], orientation="h",
        marker_color=["#1f77b4" if p >= 0.5 else "#aec7e8" for p in post[order][::-1]],
        hovertemplate="%{y}: P(class → feature | data) = %{x:.3f}<extra></extra>"))
    fig.add_vline(x=0.5, line_dash="dot", line_color="grey")
    fig.update_layout(
        title="Posterior probability that each feature depends on the class",
        xaxis_title="P(class → feature | data)", xaxis_range=[0, 1],
        height=max(300, 22 * len(order) + 120), margin=dict(l=10, r=10, t=50, b=40))
    return fig


def parameter_comparison_figure(theta_map: np.ndarray, theta_star: np.ndarray,
                                feature_name: str = "feature",
                                class_names: Sequence[str] | None = None,
                                state_names: Sequence[str] | None = None,
                                theta_empty: np.ndarray | None = None,
                                arc_posterior: float | None = None) -> go.Figure:
    """P(feature = k | class = c) under the MAP naive Bayes (eq. 6, all arcs) next to the
    model-averaged theta* (eq. 12) for one feature: theta* shrinks the class-conditional
    distributions towards the class-independent one (``theta_empty``) by 1 - P(arc | D).

    Parameters
    ----------
    theta_map, theta_star : arrays (n_classes, r) — ``theta_map_[i]``, ``theta_star_[i]``
    theta_empty : optional array (r,) — ``theta_empty_[i]``, drawn as a dotted line
    arc_posterior : optional float, shown in the title
    """
    tm, ts = np.asarray(theta_map, float), np.asarray(theta_star, float)
    if tm.shape != ts.shape:
        raise ValueError("theta_map and theta_star must have the same shape")
    n_classes, r = tm.shape
    classes = (plain_all(class_names) if class_names is not None
               else [str(c) for c in range(n_classes)])
    states = plain_all(state_names) if state_names is not None else [str(k) for k in range(r)]
    fig = make_subplots(rows=1, cols=n_classes, shared_yaxes=True,
                        subplot_titles=[f"class = {c}" for c in classes])
    for c in range(n_classes):
        show = c == 0
        fig.add_bar(x=states, y=tm[c], name="MAP naive Bayes", marker_color="#ff7f0e",
                    legendgroup="map", showlegend=show, row=1, col=c + 1)
        fig.add_bar(x=states, y=ts[c], name="model average (θ*)", marker_color="#1f77b4",
                    legendgroup="ma", showlegend=show, row=1, col=c + 1)
        if theta_empty is not None:
            fig.add_scatter(x=states, y=np.asarray(theta_empty, float), mode="lines+markers",
                            line=dict(dash="dot", color="grey"), name="ignoring the class",
                            legendgroup="empty", showlegend=show, row=1, col=c + 1)
    title = f"P({plain(feature_name)} | class): MAP versus model average"
    if arc_posterior is not None:
        title += f" — P(class → {plain(feature_name)} | data) = {arc_posterior:.3f}"
    fig.update_layout(title=title, barmode="group", yaxis_title="probability",
                      yaxis_range=[0, 1])
    return fig


def roc_curves_figure(y_true: Sequence, scores: Mapping[str, Sequence[float]],
                      positive_label: str = "positive class",
                      curves: Mapping[str, Mapping] | None = None) -> go.Figure:
    """ROC curves of several classifiers on the same test rows, with their areas.

    The curves and areas come from :func:`bnma_core.evaluation.roc_curve_points` (this
    function only draws them).

    Parameters
    ----------
    y_true : 0/1 (or boolean) labels, 1 = positive class
    scores : {classifier name: predicted probability of the positive class}
    curves : optional, precomputed ``{name: {"fpr", "tpr", "auc"}}`` (then ``y_true`` and
        ``scores`` are not used)
    """
    if curves is None:
        from ..evaluation import roc_curve_points  # lazy: keeps `import viz` light

        y = np.asarray(y_true).astype(int)
        if len(np.unique(y)) != 2:
            raise ValueError("ROC curves need test rows from both classes")
        curves = roc_curve_points(y == 1, scores)
    from .evaluation import roc_figure  # the one ROC drawing (legend, colours, axes)

    return roc_figure(curves, title=f"ROC curves ({plain(positive_label)})")


def roc_gain_figure(summary: pd.DataFrame, x: str, title: str = "",
                    x_title: str | None = None, log_x: bool = False) -> go.Figure:
    """Mean Δ_ROC and δ_ROC (in %) against one experimental parameter, like Fig. 2-5 of
    Dash & Cooper (2002): error bars = 99% confidence interval of the mean, shaded band =
    ±1 standard deviation of the trials.

    Parameters
    ----------
    summary : DataFrame with columns ``x``, ``Delta_mean``, ``Delta_ci99``, ``Delta_sd``,
        ``delta_mean``, ``delta_ci99``, ``delta_sd`` (fractions; shown as percentages) and
        optionally ``series`` (one line pair per value, e.g. the class node)
    x : name of the parameter column
    """
    fig = make_subplots(rows=1, cols=2, subplot_titles=[
        "Δ_ROC = (R̂ − R) / R", "δ_ROC = (R̂ − R) / (1 − R)"])
    groups = summary.groupby("series", sort=False) if "series" in summary else [("", summary)]
    palette = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#8c564b"]
    for g_idx, (label, df) in enumerate(groups):
        df = df.sort_values(x)
        color = palette[g_idx % len(palette)]
        xs = df[x].to_numpy(dtype=float)
        for col, key in enumerate(("Delta", "delta"), start=1):
            mean = 100 * df[f"{key}_mean"].to_numpy(dtype=float)
            sd = 100 * df[f"{key}_sd"].to_numpy(dtype=float)
            ci = 100 * df[f"{key}_ci99"].to_numpy(dtype=float)
            fig.add_scatter(x=np.r_[xs, xs[::-1]], y=np.r_[mean + sd, (mean - sd)[::-1]],
                            mode="lines", fill="toself", fillcolor=color, opacity=0.15,
                            line=dict(width=0),
                            hoverinfo="skip", showlegend=col == 1,
                            name=f"{label} ±1σ".strip(), legendgroup=f"{label}sd",
                            row=1, col=col)
            fig.add_scatter(x=xs, y=mean, mode="lines+markers", line=dict(color=color),
                            error_y=dict(type="data", array=ci, visible=True, thickness=2),
                            name=f"{label} mean, 99% CI".strip(), legendgroup=f"{label}m",
                            showlegend=col == 1, row=1, col=col)
            fig.add_hline(y=0, line_dash="dot", line_color="grey", row=1, col=col)
            fig.update_xaxes(title_text=x_title or x, type="log" if log_x else "linear",
                             tickvals=np.unique(summary[x].to_numpy(dtype=float)),
                             row=1, col=col)
            fig.update_yaxes(title_text="% (model average vs MAP naive Bayes)", row=1, col=col)
    fig.update_layout(title=title)
    return fig
