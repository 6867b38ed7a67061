"""Figures of probability quality: the CORP reliability diagram with consistency bands, decision
curves, and Demšar's critical-difference diagram (tables from :mod:`bnma_core.calibration` and
:mod:`bnma_core.comparison`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from ..markup import plain, plain_all
from .evaluation import _wrap, line_style

__all__ = ["reliability_figure", "decision_curve_figure", "critical_difference_figure",
           "MAX_CD_METHODS"]

_BAND_FILL = "rgba(120, 120, 120, 0.18)"


def reliability_figure(curves: pd.DataFrame | Mapping[str, pd.DataFrame],
                       decomposition: pd.DataFrame | Mapping[str, pd.DataFrame] | None = None,
                       title: str = "Reliability diagram (CORP)",
                       forecast_label: str = "forecast probability") -> go.Figure:
    """CORP reliability curves with their consistency bands, the diagonal and the forecasts'
    distribution.

    Parameters
    ----------
    curves : the table of :func:`bnma_core.calibration.corp_reliability`, or ``{method:
        table}``; each curve joins the calibrated values of the distinct forecasts linearly
        (as scikit-learn's isotonic fit interpolates), each band is a shaded area (the band of
        calibrated forecasts: a curve outside it is miscalibrated there)
    decomposition : :func:`bnma_core.calibration.corp_decomposition`'s row (or ``{method:
        row}``), written into the legend as MCB / DSC / UNC
    forecast_label : the x-axis title (e.g. ``"P(malignant)"`` or ``"top-label confidence"``)
    """
    curves = dict(curves) if isinstance(curves, Mapping) else {"model": curves}
    if decomposition is not None and not isinstance(decomposition, Mapping):
        decomposition = {next(iter(curves)): decomposition}
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=[0, 1], y=[0, 1], mode="lines", name="calibrated (diagonal)",
                             line=dict(dash="dot", color="#999999", width=1),
                             hoverinfo="skip"))
    counts = np.zeros(20)
    edges = np.linspace(0, 1, 21)
    banded = False
    lines = 2
    for i, (name, tab) in enumerate(curves.items()):
        x = tab["forecast"].to_numpy(float)
        style = line_style(i)
        if "band_lower" in tab and tab["band_lower"].notna().all():
            fig.add_trace(go.Scatter(
                x=np.concatenate([x, x[::-1]]),
                y=np.concatenate([tab["band_upper"].to_numpy(float),
                                  tab["band_lower"].to_numpy(float)[::-1]]),
                fill="toself", fillcolor=_BAND_FILL, line=dict(width=0),
                # no legend entry per band (they share one grey): one for all, below
                name=f"{plain(name)}: consistency band", showlegend=False,
                hoverinfo="skip", legendgroup=plain(name)))
            banded = True
        label = str(name)
        if decomposition is not None and name in decomposition:
            d = decomposition[name].iloc[0]
            label += (f" (MCB {d['miscalibration']:.3f}, DSC {d['discrimination']:.3f}, "
                      f"UNC {d['uncertainty']:.3f})")
        label = _wrap(label, 70)
        lines += label.count("<br>") + 1
        fig.add_trace(go.Scatter(
            x=x, y=tab["calibrated"], mode="lines", name=label,
            legendgroup=plain(name), line=dict(width=2, **style),
            customdata=tab["n"], hovertemplate="forecast %{x:.3f} → observed %{y:.3f}"
            "<br>%{customdata} rows<extra>" + plain(name) + "</extra>"))
        counts += np.histogram(x, bins=edges, weights=tab["n"].to_numpy(float))[0]
    if banded:
        fig.add_trace(go.Scatter(x=[None], y=[None], mode="lines", fill="toself",
                                 fillcolor=_BAND_FILL, line=dict(width=8, color=_BAND_FILL),
                                 name="grey: each curve's consistency band", hoverinfo="skip"))
    # the forecasts' distribution, bars in the lower fifth of the plot (a CORP diagram's inset)
    if counts.sum() > 0:
        fig.add_trace(go.Bar(x=(edges[:-1] + edges[1:]) / 2, y=counts / counts.max() * 0.2,
                             width=0.045, marker_color="rgba(31, 119, 180, 0.25)",
                             name="forecasts (relative count)", customdata=counts,
                             hovertemplate="%{customdata:.0f} forecasts<extra></extra>"))
    fig.update_layout(
        title=title, xaxis_title=forecast_label, yaxis_title="observed frequency (CORP)",
        template="plotly_white", xaxis_range=[0, 1], yaxis_range=[0, 1],
        xaxis_constrain="domain", yaxis_scaleanchor="x",
        # below the square plot: a curve may run through any corner
        legend=dict(orientation="v", x=0, y=-0.15, xanchor="left", yanchor="top"),
        height=480 + 22 * lines, margin=dict(l=60, r=20, t=60, b=50))
    return fig


def decision_curve_figure(table: pd.DataFrame, title: str = "Decision curve",
                          positive: str | None = None) -> go.Figure:
    """Net benefit against the threshold probability, one line per model, with treat all
    (dashed) and treat none (the zero line).

    Parameters
    ----------
    table : :func:`bnma_core.calibration.decision_curve`'s long table
    positive : the positive class's name, for the axis title
    """
    fig = go.Figure()
    models = [m for m in dict.fromkeys(table["model"]) if m not in ("treat all", "treat none")]
    fixed = {"treat all": dict(color="#555555", dash="dash", width=1.5),
             "treat none": dict(color="#000000", dash="dot", width=1.5)}
    for i, m in enumerate([*models, "treat all", "treat none"]):
        d = table[table["model"] == m]
        if d.empty:
            continue
        line = fixed.get(m) or dict(width=2, **line_style(i))
        fig.add_trace(go.Scatter(x=d["threshold"], y=d["net_benefit"], mode="lines",
                                 name=_wrap(str(m), 70), line=line,
                                 hovertemplate="threshold %{x:.2f}: net benefit %{y:.4f}"
                                 "<extra>" + plain(m) + "</extra>"))
    prevalence = float(table["prevalence"].max()) if len(table) else 1.0
    event = f"P({plain(positive)})" if positive else "risk"
    fig.update_layout(
        title=title, template="plotly_white",
        xaxis_title=f"threshold probability ({event} at which one would treat)",
        yaxis_title="net benefit (true positives per row, net of harms)",
        # treat all falls steeply below 0: show the useful range, as decision-curve papers do
        yaxis_range=[-0.05 * max(prevalence, 0.2), 1.1 * prevalence], xaxis_range=[0, 1],
        # below the plot: the curves of good models run along the top, where a legend sat
        legend=dict(x=0, y=-0.18, xanchor="left", yanchor="top", orientation="v"),
        height=460 + 22 * (len(models) + 2), margin=dict(l=60, r=20, t=60, b=50))
    return fig


MAX_CD_METHODS = 50
"""Most methods drawn in a critical-difference diagram: the best by mean rank; the rest stay
in the table (the figure's title says how many are left out)."""


def _nice_step(span: float, most: int = 20) -> int:
    """A whole tick step (1, 2, 5, 10, 20, ...) giving at most ``most`` ticks over ``span``."""
    step = 1
    while span / step > most:
        for m in (2, 5, 10):
            if span / (step * m) <= most or m == 10:
                step *= m
                break
    return step


def critical_difference_figure(cd: Any, title: str | None = None, *,
                               max_methods: int = MAX_CD_METHODS) -> go.Figure:
    """Demšar's critical-difference diagram: the mean ranks on an axis (1 = best, at the
    left), each method's name joined to its rank, the critical difference as a bar, and a thick
    line under each group of methods that do not differ significantly.

    Only the ``max_methods`` best methods are drawn (the figure stays small: a diagram of
    10,000 names is 6 MB that no browser draws); the title says how many were left out, and
    the groups are cut to the methods drawn. The axis has at most 20 ticks.

    Parameters
    ----------
    cd : :class:`bnma_core.comparison.CriticalDifference`
    max_methods : most methods drawn, the best by mean rank
    """
    k_all = len(cd.ranks)
    ranks = cd.ranks.head(int(max_methods))
    k = len(ranks)
    names = plain_all(ranks["method"].astype(str))
    r = ranks["mean_rank"].to_numpy(float)
    fig = go.Figure()
    axis_y = 0.0
    x_max = k_all if k == k_all else max(k, int(np.ceil(max(r.max(), 1 + cd.cd))))
    shapes = [dict(type="line", x0=1, x1=x_max, y0=axis_y, y1=axis_y, line=dict(width=1.5))]
    annotations = []
    step = _nice_step(x_max - 1)
    for t in [1, *range(step, x_max + 1, step)] if step > 1 else range(1, x_max + 1):
        shapes.append(dict(type="line", x0=t, x1=t, y0=axis_y, y1=axis_y + 0.08,
                           line=dict(width=1)))
        annotations.append(dict(x=t, y=axis_y + 0.1, text=str(t), showarrow=False,
                                yanchor="bottom"))
    shown = set(names)
    spans = []
    for members in cd.groups:
        idx = [names.index(plain(m)) for m in members if plain(m) in shown]
        if len(idx) >= 2 and (min(idx), max(idx)) not in spans:
            spans.append((min(idx), max(idx)))
    n_left = (k + 1) // 2
    n_groups = len(spans)
    top = -0.25 - 0.15 * n_groups  # names below the group bars
    for i, (name, rank) in enumerate(zip(names, r)):
        left = i < n_left
        row = i if left else k - 1 - i
        y = top - 0.22 * row
        x_end = 0.5 if left else k + 0.5
        shapes.append(dict(type="line", x0=rank, x1=rank, y0=axis_y, y1=y,
                           line=dict(width=1, color="#444444")))
        shapes.append(dict(type="line", x0=rank, x1=x_end, y0=y, y1=y,
                           line=dict(width=1, color="#444444")))
        annotations.append(dict(x=x_end, y=y, text=f"{name} ({rank:.2f})", showarrow=False,
                                xanchor="right" if left else "left"))
        fig.add_trace(go.Scatter(x=[rank], y=[axis_y], mode="markers", marker=dict(size=7),
                                 name=name, showlegend=False,
                                 hovertemplate=f"{name}: mean rank {rank:.3f}<extra></extra>"))
    for g, (i0, i1) in enumerate(spans):
        y = -0.2 - 0.15 * g
        shapes.append(dict(type="line", x0=r[i0] - 0.03, x1=r[i1] + 0.03, y0=y,
                           y1=y, line=dict(width=5, color="#d62728")))
    # the critical difference, above the axis from rank 1
    cd_y = 0.45
    shapes.append(dict(type="line", x0=1, x1=1 + cd.cd, y0=cd_y, y1=cd_y,
                       line=dict(width=2, color="#000000")))
    annotations.append(dict(x=1 + cd.cd / 2, y=cd_y + 0.05, showarrow=False, yanchor="bottom",
                            text=f"CD = {cd.cd:.2f} (α = {cd.alpha:g})"))
    bottom = top - 0.22 * max(n_left, k - n_left) - 0.1
    n_blocks = int(ranks["n_blocks"].iloc[0]) if "n_blocks" in ranks else None
    fig.update_layout(
        title=(title or (f"Mean ranks over {n_blocks} data sets (Nemenyi critical difference)"
                         if n_blocks else "Mean ranks (Nemenyi critical difference)"))
        + (f"<br><sup>the {k} best of {k_all} methods; all are in the table</sup>"
           if k < k_all else ""),
        template="plotly_white", shapes=shapes, annotations=annotations,
        xaxis=dict(range=[-0.9 - 0.02 * max(map(len, names)) * x_max, x_max + 1.9
                          + 0.02 * max(map(len, names)) * x_max],
                   visible=False),
        yaxis=dict(range=[bottom, 0.8], visible=False),
        height=max(260, int(140 + 40 * max(n_left, k - n_left) + 20 * n_groups)),
        margin=dict(l=20, r=20, t=60, b=20))
    return fig
