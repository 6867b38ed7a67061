"""Figures for teaching and checking order MCMC: one move drawn on the order (step mode), the
convergence diagnostics of :mod:`bnma_core.structure.diagnostics` (rank plots, traces of the
least-converged edges, the two-runs concordance scatter of BiDAG's ``plotpcor``) and the
MCMC estimate against the exact edge posteriors (DESIGN §13-§14)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from ..markup import plain

__all__ = ["arrows", "order_move_figure", "rank_plot_figure", "autocorrelation_figure",
           "edge_traces_figure", "concordance_figure", "exact_vs_estimate_figure",
           "exact_error_figure"]

_MOVED = "#e8590c"  # the nodes a move touches
_PLAIN = "#dbe4ff"
_CHAIN_COLOURS = ("#1c7ed6", "#e8590c", "#2f9e44", "#ae3ec9", "#f59f00", "#0c8599")


def arrows(text: str) -> str:
    """``text`` with the edges of :mod:`bnma_core.structure.diagnostics` ("y -> x") written
    as readers see them ("y → x")."""
    return str(text).replace(" -> ", " → ")


def order_move_figure(names: Sequence[str], order: Sequence[int], positions: tuple[int, int],
                      kind: str, proposed_order: Sequence[int], accepted: bool,
                      title: str | None = None) -> go.Figure:
    """One Metropolis-Hastings move drawn on the order: the current order as a row of boxes
    (position 1 on the left) with the moved nodes in orange, the proposed order below it and
    arrows from each moved node's place to its new place; the row kept after the iteration is
    framed (the proposed one when accepted).

    Parameters
    ----------
    names : variable names by index
    order, proposed_order : variable indices by position (before the move, proposed)
    positions : (i, j) the move's positions (0-based), as in
        :class:`~bnma_core.structure.orders.MoveRecord`
    kind : "swap" or "relocate"
    accepted : whether the chain moved to the proposed order
    """
    order = [int(v) for v in order]
    proposed = [int(v) for v in proposed_order]
    n = len(order)
    i, j = positions
    moved = {order[i], order[j]} if kind == "swap" else {order[i]}
    fig = go.Figure()
    rows = ((1.0, order, "current order"), (0.0, proposed, "proposed order"))
    for y, seq, label in rows:
        kept = (y == 0.0) == bool(accepted)
        for pos, v in enumerate(seq):
            fig.add_shape(type="rect", x0=pos - 0.45, x1=pos + 0.45, y0=y - 0.22, y1=y + 0.22,
                          fillcolor=_MOVED if v in moved else _PLAIN,
                          line={"color": "#222" if kept else "#adb5bd",
                                "width": 2 if kept else 1})
            fig.add_annotation(x=pos, y=y, text=plain(names[v]), showarrow=False,
                               font={"size": 12, "color": "white" if v in moved else "#222"})
        fig.add_annotation(x=-0.55, y=y, xanchor="right", showarrow=False,
                           text=f"<b>{label}</b>" if kept else label, font={"size": 12})
    for v in moved:  # arrow from the node's position in the order to its proposed position
        a, b = order.index(v), proposed.index(v)
        fig.add_annotation(x=b, y=0.24, ax=a, ay=0.76, xref="x", yref="y", axref="x",
                           ayref="y", showarrow=True, arrowhead=3, arrowwidth=2,
                           arrowcolor=_MOVED, text="")
    what = ("swap of positions" if kind == "swap" else "move of the node at position")
    verb = "moved to" if kind == "relocate" else "and"
    fig.update_layout(
        title=title or f"{what} {i + 1} {verb} {j + 1}: "
                       + ("accepted" if accepted else "rejected (the chain stays)"),
        template="plotly_white", height=230, margin={"l": 130, "r": 20, "t": 50, "b": 10},
        showlegend=False)
    fig.update_xaxes(range=[-0.6, n - 0.4], visible=False)
    fig.update_yaxes(range=[-0.35, 1.35], visible=False)
    return fig


def rank_plot_figure(quantity: Any, title: str | None = None) -> go.Figure:
    """Rank plot (Vehtari et al. 2021) of one quantity's draws: per chain, how many of its
    draws fall in each bin of the ranks pooled over all chains
    (:attr:`QuantityDiagnostics.rank_counts`), one line per chain, and the count every bin
    would have if all chains sampled the same distribution (dashed). Chains that disagree
    show as lines that rise and fall in opposite halves."""
    counts = np.asarray(quantity.rank_counts)
    n_chains, n_bins = counts.shape
    x = (np.arange(n_bins) + 0.5) / n_bins
    fig = go.Figure()
    for c in range(n_chains):
        fig.add_trace(go.Scatter(x=x, y=counts[c], mode="lines", line_shape="hvh",
                                 name=f"chain {c}",
                                 line={"color": _CHAIN_COLOURS[c % len(_CHAIN_COLOURS)]}))
    expected = counts.sum() / (n_chains * n_bins)
    fig.add_trace(go.Scatter(x=[0, 1], y=[expected] * 2, mode="lines", name="uniform",
                             line={"dash": "dash", "color": "#444"}))
    fig.update_layout(title=title or f"Rank plot: {plain(arrows(quantity.name))}",
                      template="plotly_white",
                      xaxis_title="rank of the draw among all chains (fraction)",
                      yaxis_title="draws in the bin", yaxis_rangemode="tozero")
    return fig


def autocorrelation_figure(quantity: Any, title: str | None = None) -> go.Figure:
    """Autocorrelation of one quantity's draws against the lag, one line per chain
    (:attr:`QuantityDiagnostics.autocorrelation`, ArviZ's ``autocorr``). Draws far apart in
    a chain should be nearly independent: a curve that stays high for many lags means few
    effective draws (the ESS divides the draws by roughly 1 + 2 Σ_t ρ_t)."""
    acf = np.asarray(quantity.autocorrelation, dtype=float)
    fig = go.Figure()
    lags = np.arange(acf.shape[1])
    for c in range(acf.shape[0]):
        fig.add_trace(go.Scatter(x=lags, y=acf[c], mode="lines", name=f"chain {c}",
                                 line={"color": _CHAIN_COLOURS[c % len(_CHAIN_COLOURS)]}))
    fig.add_hline(y=0, line={"color": "#888", "width": 1})
    fig.update_layout(title=title or f"Autocorrelation: {plain(arrows(quantity.name))}",
                      template="plotly_white", xaxis_title="lag (kept draws)",
                      yaxis_title="autocorrelation", yaxis_range=[-0.25, 1.05])
    return fig


def edge_traces_figure(quantities: Sequence[Any],
                       title: str = "Least converged edges: P(edge | data, order)"
                       ) -> go.Figure:
    """The traces of a few edges (:attr:`ConvergenceReport.least_converged`), one panel per
    edge with its R-hat, one line per chain: chains that disagree sit at different levels."""
    k = max(1, len(quantities))
    height = 120 + 150 * k
    # 44 px between panels: a panel's title sits in the gap, clear of the panel above
    fig = make_subplots(rows=k, cols=1, shared_xaxes=True,
                        vertical_spacing=min(0.3, 44 / (height - 130)),
                        subplot_titles=[f"{plain(arrows(q.name))} (R-hat {q.rhat:.3f})"
                                        for q in quantities] or ["no varying edge"])
    for r, q in enumerate(quantities, start=1):
        draws = np.asarray(q.draws)
        for c in range(draws.shape[0]):
            fig.add_trace(go.Scatter(y=draws[c], mode="lines", name=f"chain {c}",
                                     legendgroup=f"chain {c}", showlegend=r == 1,
                                     line={"width": 1,
                                           "color": _CHAIN_COLOURS[c % len(_CHAIN_COLOURS)]}),
                          row=r, col=1)
        fig.update_yaxes(range=[-0.05, 1.05], row=r, col=1)
    fig.update_xaxes(title_text="recorded order after burn-in", row=k, col=1)
    fig.update_layout(title=title, template="plotly_white", height=height,
                      margin={"t": 90, "b": 40})
    return fig


def concordance_figure(concordance: pd.DataFrame, title: str | None = None,
                       labels: tuple[str, str] = ("chains of run A", "chains of run B")
                       ) -> go.Figure:
    """Edge posteriors of two independent runs against each other (BiDAG's ``plotpcor``):
    one point per ordered pair, on the diagonal when both runs agree. ``concordance`` has the
    columns of :func:`bnma_core.structure.diagnostics.edge_concordance`."""
    d = concordance
    text = [f"{plain(p)} → {plain(c)}" for p, c in zip(d["parent"], d["child"])]
    far = d["difference"].abs() if len(d) else pd.Series(dtype=float)
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=[0, 1], y=[0, 1], mode="lines", name="agreement",
                             line={"dash": "dash", "color": "#888"}, hoverinfo="skip"))
    fig.add_trace(go.Scatter(x=d["run_a"], y=d["run_b"], mode="markers", text=text,
                             name="edge", hovertemplate="%{text}<br>A %{x:.3f}, B %{y:.3f}"
                             "<extra></extra>",
                             marker={"size": 8, "color": far, "colorscale": "Reds", "cmin": 0,
                                     "cmax": max(0.2, float(far.max()) if len(far) else 0.2),
                                     "line": {"width": 0.5, "color": "#333"}}))
    worst = float(far.max()) if len(far) else 0.0
    fig.update_layout(
        title=title or f"Two runs' edge posteriors (largest gap {worst:.3f})",
        template="plotly_white", xaxis_title=f"P(edge | data), {labels[0]}",
        yaxis_title=f"P(edge | data), {labels[1]}", showlegend=False)
    fig.update_xaxes(range=[-0.03, 1.03])
    fig.update_yaxes(range=[-0.03, 1.03], scaleanchor="x", scaleratio=1)
    return fig


def exact_vs_estimate_figure(exact: np.ndarray, estimate: np.ndarray, names: Sequence[str],
                             title: str | None = None) -> go.Figure:
    """Each edge's exact posterior (x) against its MCMC estimate (y): on the diagonal when the
    estimate is right; hover names the edge."""
    ex = np.asarray(exact, dtype=float)
    es = np.asarray(estimate, dtype=float)
    y, x = np.nonzero(~np.eye(len(ex), dtype=bool))
    err = np.abs(es[y, x] - ex[y, x])
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=[0, 1], y=[0, 1], mode="lines", line={"dash": "dash",
                             "color": "#888"}, hoverinfo="skip", name="exact = estimate"))
    fig.add_trace(go.Scatter(
        x=ex[y, x], y=es[y, x], mode="markers", name="edge",
        text=[f"{plain(names[a])} → {plain(names[b])}" for a, b in zip(y, x)],
        hovertemplate="%{text}<br>exact %{x:.4f}<br>MCMC %{y:.4f}<extra></extra>",
        marker={"size": 8, "color": err, "colorscale": "Reds", "cmin": 0,
                "cmax": max(0.1, float(err.max())), "line": {"width": 0.5, "color": "#333"}}))
    fig.update_layout(title=title or f"MCMC against exact (largest error {err.max():.3f})",
                      template="plotly_white", xaxis_title="exact P(edge | data)",
                      yaxis_title="order-MCMC estimate", showlegend=False)
    fig.update_xaxes(range=[-0.03, 1.03])
    fig.update_yaxes(range=[-0.03, 1.03], scaleanchor="x", scaleratio=1)
    return fig


def exact_error_figure(errors: pd.DataFrame,
                       title: str = "Largest error of MCMC against exact") -> go.Figure:
    """max over edges of |estimate − exact| (column ``max_abs_error``) against ``iteration``,
    one line per ``series`` if present, on a log scale: it shrinks about as 1 / sqrt(draws)
    once the chains mix."""
    fig = go.Figure()
    groups = errors.groupby("series", sort=False) if "series" in errors else [("MCMC", errors)]
    for name, d in groups:
        fig.add_trace(go.Scatter(x=d["iteration"], y=d["max_abs_error"], mode="lines+markers",
                                 name=str(name)))
    # no digits on a log axis's minor ticks ("9 8 7 ... 2" crowded into "0.1"); one tick
    # format for the iterations ("1,000")
    fig.update_layout(title=title, template="plotly_white", xaxis_title="iterations per chain",
                      yaxis_title="max |estimate − exact|", yaxis_type="log",
                      yaxis_minorloglabels="none", xaxis_tickformat=",d",
                      showlegend="series" in errors)
    return fig
