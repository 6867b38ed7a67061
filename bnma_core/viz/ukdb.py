"""Figures for UKDB explanations: the domain and personalized networks side by side, and the
class posteriors of the general network (UKDB_L), the network for this case (UKDB_P) and their
ensemble, and the verdict a page may show (never a plain class for a coin flip)."""

from __future__ import annotations

import math
from typing import Any

import networkx as nx
import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from ..markup import plain, plain_all
from .graphs import (
    DRAWING_PAD_BOTTOM,
    DRAWING_PAD_TOP,
    LABEL_FONT_SIZE,
    _arrow_standoff,
    label_width,
    layered_drawing,
    normalized_drawing,
)

__all__ = ["ukdb_structures_figure", "posterior_bars_figure", "ukdb_layout", "ukdb_verdict"]

_SAME = "#7f7f7f"
_ONLY = "#d62728"
_CLASS_EDGE = "#1f77b4"


def _drawn(graph: nx.DiGraph, class_node: str) -> list[tuple[str, str, dict]]:
    """The arcs a UKDB drawing shows: feature -> feature and class parent -> class. The class
    -> feature arcs are left out: every feature but the class parents has one, so they say
    nothing about this case and cover the rest (the legend says so)."""
    return [(a, b, d) for a, b, d in graph.edges(data=True)
            if not (a == class_node and d.get("role", "class") == "class")]


def ukdb_layout(graph: nx.DiGraph, class_node: str, other: nx.DiGraph | None = None
                ) -> dict[str, tuple[float, float]]:
    """Positions shared by the domain and the personalized network of an explanation.

    The layered layout of :func:`bnma_core.viz.graphs.layered_drawing` (columns by longest
    path, left to right; order within a column by igraph's Sugiyama layout) applied to the
    union of the drawn arcs of both networks (:func:`_drawn`): the class parents come first,
    the class after them, and every feature right of the features it depends on in either
    network. Coordinates in [0, 1].
    """
    return _ukdb_drawing(graph, class_node, other)[0]


def _ukdb_drawing(graph: nx.DiGraph, class_node: str, other: nx.DiGraph | None = None
                  ) -> tuple[dict, dict]:
    """:func:`ukdb_layout`'s positions and the bends of every arc of the union, in [0, 1]."""
    return normalized_drawing(_union_drawing(graph, class_node, other))


def _union_drawing(graph: nx.DiGraph, class_node: str, other: nx.DiGraph | None = None):
    """The layered drawing (pixels) of the union of both networks' drawn arcs."""
    union = nx.DiGraph()
    for g in (graph, other):
        if g is None:
            continue
        union.add_nodes_from(g.nodes)
        for a, b, d in _drawn(g, class_node):
            w = abs(float(d.get("weight", 0.0)))
            if not union.has_edge(a, b) or union[a][b]["weight"] < w:
                union.add_edge(a, b, weight=w)
    return layered_drawing(union, edge_weight="weight")


def _label(graph: nx.DiGraph, n: Any) -> str:
    return plain(n) + (" (?)" if graph.nodes[n].get("missing") else "")


def _extent(drawing: Any, graph: nx.DiGraph) -> tuple[float, float, float, float]:
    """(x0, x1, y0, y1) in pixels holding every node, bend and label of a panel: labels are
    centred on their node and raised above it, so the x range reaches half a label beyond
    each node and the y range a label's height above the top row."""
    pts = list(drawing.positions.values()) + [p for r in drawing.routes.values() for p in r]
    xs = np.array([p[0] for p in pts] or [0.0])
    ys = np.array([p[1] for p in pts] or [0.0])
    half = [(x - label_width(_label(graph, n), LABEL_FONT_SIZE) / 2,
             x + label_width(_label(graph, n), LABEL_FONT_SIZE) / 2)
            for n, (x, _) in drawing.positions.items() if n in graph]
    x0 = min([xs.min()] + [a for a, _ in half]) - 8
    x1 = max([xs.max()] + [b for _, b in half]) + 8
    return float(x0), float(x1), float(ys.min() - DRAWING_PAD_BOTTOM), \
        float(ys.max() + DRAWING_PAD_TOP)


def _max_weight(graph: nx.DiGraph, class_node: str) -> float:
    ws = [abs(d.get("weight", 0.0)) for a, b, d in graph.edges(data=True)
          if d.get("role", "parent") in ("parent", "joint") and class_node not in (a, b)]
    return max(ws, default=0.0)


def _draw(fig: go.Figure, graph: nx.DiGraph, other: nx.DiGraph, pos: dict, class_node: str,
          row: int, unit: str, routes: dict | None = None) -> None:
    scale = _max_weight(graph, class_node) or 1.0
    xref = "x" if row == 1 else f"x{row}"
    yref = "y" if row == 1 else f"y{row}"
    size = {n: 20 if n == class_node else 14 for n in graph.nodes}
    for a, b, d in _drawn(graph, class_node):
        x0, y0 = pos[a]
        x1, y1 = pos[b]
        # edge vocabulary (every classifier's graphs): role "class" / "class-parent" touch the
        # class; "parent" / "joint" join two attributes
        attr_edge = d.get("role", "parent") in ("parent", "joint") and class_node not in (a, b)
        differs = not (other.has_edge(a, b) or other.has_edge(b, a))
        color = (_ONLY if differs else _SAME) if attr_edge else _CLASS_EDGE
        width = 1 + 4 * abs(d.get("weight", 0.0)) / scale if attr_edge else 2
        bends = list((routes or {}).get((a, b), ()))
        if bends:  # through the layout's bend points; the arrow from the last one
            sx, sy = bends[-1]
            pts = [(x0, y0)] + bends + [(sx + (x1 - sx) / 3, sy + (y1 - sy) / 3)]
            fig.add_shape(type="path", xref=xref, yref=yref, layer="below",
                          path="M " + " L ".join(f"{x:.5f},{y:.5f}" for x, y in pts),
                          line=dict(color=color, width=width))
        else:
            sx, sy = x0, y0
        fig.add_annotation(x=x1, y=y1, ax=sx, ay=sy, xref=xref, yref=yref, axref=xref,
                           ayref=yref, showarrow=True, arrowhead=2, arrowsize=1,
                           arrowwidth=width, arrowcolor=color,
                           standoff=_arrow_standoff(sx, sy, x1, y1, size[b]),
                           startstandoff=0 if bends else size[a] // 2 + 1,
                           opacity=1.0 if bends else 0.85, text="")
        # invisible midpoint marker carrying the hover text
        fig.add_trace(go.Scatter(
            x=[(x0 + x1) / 2], y=[(y0 + y1) / 2], mode="markers",
            marker=dict(size=8, color=color, opacity=0.01), showlegend=False,
            hovertext=f"{plain(a)} → {plain(b)}: {d.get('weight', float('nan')):.4f} {unit}"
                      + (" (only in this network)" if attr_edge and differs else ""),
            hoverinfo="text"), row=row, col=1)
    names = list(graph.nodes)
    colors = ["#ff7f0e" if n == class_node else
              ("#dddddd" if graph.nodes[n].get("missing") else "#9edae5") for n in names]
    fig.add_trace(go.Scatter(
        x=[pos[n][0] for n in names], y=[pos[n][1] for n in names], mode="markers",
        marker=dict(size=[size[n] for n in names], color=colors,
                    symbol=["diamond" if n == class_node else "circle" for n in names],
                    line=dict(color="#333", width=1)),
        hovertext=[f"<b>{plain(n)}</b>: {'missing' if graph.nodes[n].get('missing') else 'known'}"
                   for n in names], hoverinfo="text", showlegend=False), row=row, col=1)
    for n in names:  # labels above the nodes, on a light box readable over the arrows
        fig.add_annotation(x=pos[n][0], y=pos[n][1], xref=xref, yref=yref, showarrow=False,
                           text=_label(graph, n),
                           yshift=size[n] // 2 + 8, font=dict(size=11, color="#222222"),
                           bgcolor="rgba(255,255,255,0.75)", borderpad=1)


def ukdb_structures_figure(explanation: Any, height: int | None = None) -> go.Figure:
    """The UKDB_L (domain) and UKDB_P (personalized) networks of one instance, one above the
    other on the same layered layout (:func:`ukdb_layout`), each across the full width.

    Attribute -> attribute edges are red when the other network does not have them (in either
    direction), grey when both do; their width is proportional to |CMI| (top) resp. |CLMI|
    (bottom), relative to the largest in that network (hover an edge's midpoint for its value).
    The class is the orange diamond; blue arrows join the class parents to it; the class ->
    feature arcs (every other feature has one) are not drawn. Missing attributes are grey and
    marked "(?)". On networks of many variables pass only the class's neighbourhood (e.g. the
    strongest arcs, as the dashboard does).

    Parameters
    ----------
    explanation : UKDBExplanation
        From :meth:`bnma_core.classifiers.ukdb.UKDB.explain`.
    height : int, optional
        Figure height in pixels; default grows with the tallest column of nodes.
    """
    unit = "bits" if explanation.base == 2 else "nats" if explanation.base == math.e else ""
    cname = explanation.class_name
    dom, per = explanation.domain_graph, explanation.personalized_graph
    drawing = _union_drawing(dom, cname, per)
    both = nx.compose(dom, per)
    x0, x1, y0, y1 = _extent(drawing, both)
    panel, gap, top, bottom = y1 - y0, TITLE_GAP, 34, LEGEND_HEIGHT
    plot_h = 2 * panel + gap
    fig = make_subplots(rows=2, cols=1, vertical_spacing=gap / plot_h, subplot_titles=(
        "General network: learned from all training cases",
        "Network for this case: built for this patient's values"))
    pos, routes = drawing.positions, drawing.routes
    _draw(fig, dom, per, pos, cname, 1, unit, routes)
    _draw(fig, per, dom, pos, cname, 2, unit, routes)
    for r, xa in ((1, "x"), (2, "x2")):
        # one unit = one pixel on both axes, the ranges holding every node, bend and label:
        # nothing drawn outside its panel, nothing cut at its edge
        fig.update_xaxes(visible=False, range=[x0, x1], constrain="domain", row=r, col=1)
        fig.update_yaxes(visible=False, range=[y0, y1], scaleanchor=xa, scaleratio=1,
                         constrain="domain", row=r, col=1)
    fig.add_annotation(
        text=("<span style='color:#d62728'>red</span>: dependence only in this network; "
              "grey: in both;<br><span style='color:#1f77b4'>blue</span>: class parents → "
              "class; (?) = missing value;<br>every other feature also depends on the class "
              "(not drawn)"),
        xref="paper", yref="paper", x=0.5, y=0, yanchor="top", yshift=-10, showarrow=False,
        font=dict(size=12))
    fig.update_layout(height=height or int(plot_h + top + bottom),
                      width=int(max(x1 - x0 + 40, 480)),
                      margin=dict(l=20, r=20, t=top, b=bottom), plot_bgcolor="white")
    return fig


TITLE_GAP = 64
"""Pixels between the two panels of :func:`ukdb_structures_figure`: the lower panel's title
and the room the labels of the upper panel's bottom row need."""

LEGEND_HEIGHT = 78
"""Pixels below the lower panel for the colour legend (three lines of 12 px text)."""


def posterior_bars_figure(explanation: Any, classes: list[str] | None = None) -> go.Figure:
    """Grouped bars: P(class | x) under UKDB_L, UKDB_P and the ensemble (their average).

    Parameters
    ----------
    explanation : UKDBExplanation
    classes : list of str, optional
        Class labels (default ``explanation.classes``).
    """
    classes = plain_all(explanation.classes if classes is None else classes)
    fig = go.Figure()
    for label, post in (("General network", explanation.posterior_domain),
                        ("Network for this case", explanation.posterior_personalized),
                        ("Average (UKDB)", explanation.posterior_ensemble)):
        post = np.asarray(post, dtype=float)
        fig.add_trace(go.Bar(name=label, x=classes, y=post,
                             text=[f"{p:.3f}" for p in post], textposition="auto"))
    fig.update_layout(barmode="group", yaxis=dict(range=[0, 1], title="probability"),
                      height=360,
                      margin=dict(l=10, r=10, t=30, b=10))
    return fig


def ukdb_verdict(explanation: Any, margin: float | None = None) -> dict:
    """What a page shows as UKDB's prediction of one case: ``label`` (the class, or
    "uncertain"), ``uncertain``, ``sentence`` and, when uncertain, ``warning``.

    UKDB averages two networks, the general one and the one built for this case; the case is
    uncertain when its most probable class leads the runner-up by less than ``margin``
    (:data:`bnma_core.viz.patient.COIN_FLIP_MARGIN`) or the two networks favour different
    classes. The sentence gives the average with both networks' values for that class, e.g.
    "malignant: 0.93 (general network 0.90, network for this case 0.96)".
    """
    from .patient import COIN_FLIP_MARGIN

    margin = COIN_FLIP_MARGIN if margin is None else float(margin)
    classes = [str(c) for c in explanation.classes]
    ens = np.asarray(explanation.posterior_ensemble, dtype=float)
    dom = np.asarray(explanation.posterior_domain, dtype=float)
    per = np.asarray(explanation.posterior_personalized, dtype=float)
    c = int(np.argmax(ens))
    top = np.sort(ens)[::-1]
    disagree = int(np.argmax(dom)) != int(np.argmax(per))
    uncertain = bool((len(top) > 1 and top[0] - top[1] < margin) or disagree)
    out = {"label": "uncertain" if uncertain else classes[c], "uncertain": uncertain,
           "sentence": f"{classes[c]}: {ens[c]:.2f} (general network {dom[c]:.2f}, network "
                       f"for this case {per[c]:.2f})"}
    if uncertain:
        ranked = np.argsort(-ens)[:2]
        pair = " vs ".join(f"{classes[k]} {ens[k]:.2f}" for k in ranked)
        why = " and the two networks favour different classes" if disagree else ""
        out["warning"] = (f"Uncertain: {pair}{why}. The model does not settle this case; "
                          "treat it as undecided.")
    return out
