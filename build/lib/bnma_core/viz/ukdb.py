"""Figures for UKDB explanations: the domain and personalized networks side by side, and the
class posteriors of UKDB_L, UKDB_P and their ensemble."""

from __future__ import annotations

import math
from typing import Any

import networkx as nx
import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

__all__ = ["ukdb_structures_figure", "posterior_bars_figure", "ukdb_layout"]

_SAME = "#7f7f7f"
_ONLY = "#d62728"
_CLASS_EDGE = "#1f77b4"


def ukdb_layout(graph: nx.DiGraph, class_node: str) -> dict[str, tuple[float, float]]:
    """Class in the centre, features on a circle in node order (the same positions for both
    networks of an explanation, so they can be compared)."""
    feats = [n for n in graph.nodes if n != class_node]
    pos = {class_node: (0.0, 0.0)}
    for a, n in enumerate(feats):
        t = math.pi / 2 - 2 * math.pi * a / max(len(feats), 1)
        pos[n] = (math.cos(t), math.sin(t))
    return pos


def _max_weight(graph: nx.DiGraph, class_node: str) -> float:
    ws = [abs(d.get("weight", 0.0)) for a, b, d in graph.edges(data=True)
          if d.get("role", "parent") in ("parent", "joint") and class_node not in (a, b)]
    return max(ws, default=0.0)


def _draw(fig: go.Figure, graph: nx.DiGraph, other: nx.DiGraph, pos: dict, class_node: str,
          col: int, unit: str) -> None:
    scale = _max_weight(graph, class_node) or 1.0
    xref = "x" if col == 1 else f"x{col}"
    yref = "y" if col == 1 else f"y{col}"
    for a, b, d in graph.edges(data=True):
        x0, y0 = pos[a]
        x1, y1 = pos[b]
        # edge vocabulary (every classifier's graphs): role "class" / "class-parent" touch the
        # class; "parent" / "joint" join two attributes
        attr_edge = d.get("role", "parent") in ("parent", "joint") and class_node not in (a, b)
        differs = not (other.has_edge(a, b) or other.has_edge(b, a))
        color = (_ONLY if differs else _SAME) if attr_edge else _CLASS_EDGE
        width = 1 + 4 * abs(d.get("weight", 0.0)) / scale if attr_edge else 1
        fig.add_annotation(x=x1, y=y1, ax=x0, ay=y0, xref=xref, yref=yref, axref=xref,
                           ayref=yref, showarrow=True, arrowhead=3, arrowsize=1,
                           arrowwidth=width, arrowcolor=color, standoff=14, startstandoff=14,
                           opacity=0.8 if attr_edge else 0.35, text="")
        # invisible midpoint marker carrying the hover text
        fig.add_trace(go.Scatter(
            x=[(x0 + x1) / 2], y=[(y0 + y1) / 2], mode="markers",
            marker=dict(size=8, color=color, opacity=0.01), showlegend=False,
            hovertext=f"{a} → {b}: {d.get('weight', float('nan')):.4f} {unit}"
                      + (" (only in this network)" if attr_edge and differs else ""),
            hoverinfo="text"), row=1, col=col)
    names = list(graph.nodes)
    colors = ["#ff7f0e" if n == class_node else
              ("#dddddd" if graph.nodes[n].get("missing") else "#9edae5") for n in names]
    fig.add_trace(go.Scatter(
        x=[pos[n][0] for n in names], y=[pos[n][1] for n in names], mode="markers+text",
        text=[n.replace("_", " ") + (" (?)" if graph.nodes[n].get("missing") else "")
              for n in names],
        textposition="top center", marker=dict(size=22, color=colors,
                                               line=dict(color="#333", width=1)),
        hoverinfo="text", showlegend=False), row=1, col=col)


def ukdb_structures_figure(explanation: Any, height: int = 520) -> go.Figure:
    """The UKDB_L (domain) and UKDB_P (personalized) networks of one instance side by side.

    Attribute -> attribute edges are red when the other network does not have them (in either
    direction), grey when both do; their width is proportional to |CMI| (left) resp. |CLMI|
    (right), relative to the largest in that network (hover an edge's midpoint for its value).
    Class edges are blue. Missing attributes are grey and marked "(?)".

    Parameters
    ----------
    explanation : UKDBExplanation
        From :meth:`bnma_core.classifiers.ukdb.UKDB.explain`.
    """
    unit = "bits" if explanation.base == 2 else "nats" if explanation.base == math.e else ""
    cname = explanation.class_name
    pos = ukdb_layout(explanation.domain_graph, cname)
    fig = make_subplots(rows=1, cols=2, subplot_titles=(
        "Domain knowledge (UKDB_L): learned from all training cases",
        "Personalized knowledge (UKDB_P): built for this case"))
    _draw(fig, explanation.domain_graph, explanation.personalized_graph, pos, cname, 1, unit)
    _draw(fig, explanation.personalized_graph, explanation.domain_graph, pos, cname, 2, unit)
    for c in (1, 2):
        fig.update_xaxes(visible=False, range=[-1.45, 1.45], row=1, col=c)
        fig.update_yaxes(visible=False, range=[-1.3, 1.35], row=1, col=c)
    fig.add_annotation(
        text=("<span style='color:#d62728'>red</span>: dependence only in this network; "
              "grey: in both; <span style='color:#1f77b4'>blue</span>: class edges; "
              "(?) = missing value"), xref="paper", yref="paper", x=0.5, y=-0.02,
        showarrow=False, font=dict(size=12))
    fig.update_layout(height=height, margin=dict(l=10, r=10, t=50, b=30),
                      plot_bgcolor="white")
    return fig


def posterior_bars_figure(explanation: Any, classes: list[str] | None = None) -> go.Figure:
    """Grouped bars: P(class | x) under UKDB_L, UKDB_P and the ensemble (their average).

    Parameters
    ----------
    explanation : UKDBExplanation
    classes : list of str, optional
        Class labels (default ``explanation.classes``).
    """
    classes = list(explanation.classes if classes is None else classes)
    fig = go.Figure()
    for label, post in (("Domain (UKDB_L)", explanation.posterior_domain),
                        ("Personalized (UKDB_P)", explanation.posterior_personalized),
                        ("Ensemble (UKDB)", explanation.posterior_ensemble)):
        post = np.asarray(post, dtype=float)
        fig.add_trace(go.Bar(name=label, x=classes, y=post,
                             text=[f"{p:.3f}" for p in post], textposition="auto"))
    fig.update_layout(barmode="group", yaxis=dict(range=[0, 1], title="probability"),
                      xaxis_title=explanation.class_name, height=360,
                      margin=dict(l=10, r=10, t=30, b=10))
    return fig
