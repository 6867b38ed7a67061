"""Figures: graphs (DAG drawings), class balance and generic heatmaps.

A DAG is drawn from a :class:`networkx.DiGraph`: a networkx-style layout gives node positions,
plotly draws nodes as one scatter trace per role (ordinary / highlighted / class) and every edge
as an arrow annotation whose width and colour encode the edge's weight (e.g. an edge posterior
P(Y -> X | D)). Invisible markers at edge midpoints carry the hover text of each edge.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Mapping, Sequence

import networkx as nx
import numpy as np
import plotly.graph_objects as go
from plotly.colors import sample_colorscale

__all__ = [
    "dag_layout",
    "dag_figure",
    "class_balance_figure",
    "heatmap_figure",
]

EDGE_COLORSCALE = "Blues"
NODE_COLOR = "#9ecae1"
HIGHLIGHT_COLOR = "#fdae6b"
CLASS_COLOR = "#d62728"
HIGHLIGHT_EDGE_COLOR = "#e6550d"
LAYOUTS = ("layered", "spring")


def _acyclic(graph: nx.DiGraph, edge_weight: str | None) -> nx.DiGraph:
    """The graph itself if acyclic, else a maximal acyclic subgraph built greedily from the
    heaviest edges (an averaged graph may hold both Y -> X and X -> Y)."""
    if nx.is_directed_acyclic_graph(graph):
        return graph
    dag = nx.DiGraph()
    dag.add_nodes_from(graph.nodes)
    edges = sorted(graph.edges(data=True), key=lambda e: -_edge_weight(e[2], edge_weight))
    for u, v, _ in edges:
        if u != v and not nx.has_path(dag, v, u):
            dag.add_edge(u, v)
    return dag


def _layers(graph: nx.DiGraph) -> dict[Hashable, int]:
    """Longest-path depth of each node of a DAG (sources at 0)."""
    depth: dict[Hashable, int] = {}
    for node in nx.topological_sort(graph):
        preds = list(graph.predecessors(node))
        depth[node] = 1 + max(depth[p] for p in preds) if preds else 0
    return depth


def dag_layout(graph: nx.DiGraph, layout: str = "layered", class_node: Hashable | None = None,
               seed: int = 0, edge_weight: str | None = "weight"
               ) -> dict[Hashable, tuple[float, float]]:
    """Node positions for :func:`dag_figure`, reusable to draw two graphs on the same layout.

    Parameters
    ----------
    graph : networkx.DiGraph
    layout : {"layered", "spring"}
        ``"layered"``: columns by longest-path depth, left to right, nodes within a column
        ordered by the mean position of their parents (barycentre heuristic) to reduce
        crossings; odd columns sit a third of a row lower (no arc through a node).
        ``"spring"``: force-directed (``networkx.spring_layout``, fixed seed).
    class_node : hashable, optional
        Ignored by the layered layout except that the class is placed first in its column;
        in the spring layout it is pinned at the centre.
    seed : int
        Seed of the spring layout.
    edge_weight : str or None
        Edge attribute deciding, in a graph with cycles, which edges the layered layout
        follows (heaviest first; the others are drawn against the flow).

    Returns
    -------
    dict
        node -> (x, y), x and y in [0, 1].
    """
    if layout not in LAYOUTS:
        raise ValueError(f"Unknown layout {layout!r}; choose one of {', '.join(LAYOUTS)}.")
    nodes = list(graph.nodes)
    if not nodes:
        return {}
    if layout == "spring":
        k = 1.5 / np.sqrt(max(len(nodes), 1))
        if class_node is not None and class_node in graph:
            pos = nx.spring_layout(graph.to_undirected(), k=k, seed=seed,
                                   pos={class_node: (0.0, 0.0)}, fixed=[class_node])
        else:
            pos = nx.spring_layout(graph.to_undirected(), k=k, seed=seed)
        arr = np.array([pos[n] for n in nodes], dtype=float)
    else:
        graph = _acyclic(graph, edge_weight)
        depth = _layers(graph)
        n_layers = max(depth.values()) + 1
        columns: list[list[Hashable]] = [[] for _ in range(n_layers)]
        for node in nodes:  # insertion order keeps the drawing stable
            columns[depth[node]].append(node)
        rank: dict[Hashable, float] = {}
        for li, col in enumerate(columns):
            if li > 0:
                def bary(n: Hashable) -> float:
                    ps = [rank[p] for p in graph.predecessors(n) if p in rank]
                    return float(np.mean(ps)) if ps else 0.5
                col.sort(key=bary)
            if class_node in col:
                col.remove(class_node)
                col.insert(0, class_node)
            for i, node in enumerate(col):
                rank[node] = (i + 0.5) / len(col)
        tallest = max(len(c) for c in columns)
        arr = np.zeros((len(nodes), 2))
        index = {n: i for i, n in enumerate(nodes)}
        for li, col in enumerate(columns):
            for i, node in enumerate(col):
                # centre short columns vertically against the tallest one; every other
                # column a third of a row lower, so that an arc skipping a column does not
                # run through the node of the same row in between
                offset = (tallest - len(col)) / 2.0 + (0.35 if li % 2 and tallest > 1 else 0.0)
                arr[index[node]] = (li, -(offset + i))
    lo, hi = arr.min(axis=0), arr.max(axis=0)
    span = np.where(hi - lo > 0, hi - lo, 1.0)
    arr = (arr - lo) / span
    arr[:, np.asarray(hi - lo) == 0] = 0.5
    return {n: (float(x), float(y)) for n, (x, y) in zip(nodes, arr)}


def fig_height(pos: Mapping[Hashable, tuple[float, float]], height: int | None = None) -> int:
    """Figure height giving each row of nodes about 50 px (or ``height`` if given)."""
    if height:
        return int(height)
    if not pos:
        return 300
    xs = np.round([p[0] for p in pos.values()], 6)
    ys = np.round([p[1] for p in pos.values()], 6)
    tallest = int(np.unique(xs, return_counts=True)[1].max())
    if tallest >= 2 or len(np.unique(ys)) <= 2:  # layered: the tallest column sets the height
        rows = tallest + 1
    else:  # free (spring) layout: scale with the node count
        rows = int(np.ceil(np.sqrt(len(ys)) * 2.2))
    return int(np.clip(90 + 50 * rows, 300, 1500))


def _edge_weight(data: Mapping, edge_weight: str | None) -> float:
    if edge_weight is None:
        return 1.0
    w = data.get(edge_weight, 1.0)
    try:
        return float(w)
    except (TypeError, ValueError):
        return 1.0


def dag_figure(graph: nx.DiGraph, class_node: Hashable | None = None,
               highlight_nodes: Iterable[Hashable] = (), edge_weight: str | None = "weight",
               threshold: float = 0.0, layout: str = "layered", title: str | None = None, *,
               highlight_edges: Iterable[tuple[Hashable, Hashable]] = (),
               positions: Mapping[Hashable, tuple[float, float]] | None = None,
               weight_range: tuple[float, float] | None = None,
               weight_label: str = "weight", height: int | None = None) -> go.Figure:
    """Draw a DAG with arrows, readable labels, a distinct class node and weighted edges.

    Parameters
    ----------
    graph : networkx.DiGraph
        The structure. Edge attribute ``edge_weight`` (default ``"weight"``; missing -> 1)
        sets each arrow's width and colour.
    class_node : hashable, optional
        Drawn as a red diamond.
    highlight_nodes : iterable
        Drawn in orange (e.g. the class's Markov blanket).
    edge_weight : str or None
        Edge attribute holding the weight; None draws every edge alike.
    threshold : float
        Edges with weight below this are not drawn (nodes always are).
    layout : {"layered", "spring"}
        See :func:`dag_layout` (applied to the drawn edges); ignored when ``positions`` is
        given.
    title : str, optional
    highlight_edges : iterable of (u, v)
        Edges drawn in orange and dashed-free bold (e.g. edges that differ between two
        structures).
    positions : mapping, optional
        node -> (x, y), e.g. from :func:`dag_layout` of a union graph so that two drawings share
        node positions.
    weight_range : (float, float), optional
        Weights mapped to the thinnest / palest and widest / darkest arrow; default
        ``(0, max(1, max weight))``.
    weight_label : str
        Name of the weight in hover text and colour bar (e.g. "P(edge | D)").
    height : int, optional
        Figure height in pixels; default grows with the tallest layer.

    Returns
    -------
    plotly.graph_objects.Figure
        Traces: ``nodes`` (ordinary), ``highlighted`` and ``class`` (only those present), and
        ``edges`` (hover markers at edge midpoints, carrying the colour bar). Annotations: one
        arrow per drawn edge (``showarrow=True``) and one label per node.
    """
    edges = _drawn_edges(graph, edge_weight, threshold)
    pos = _positions(graph, edges, positions, layout, class_node)
    highlight = set(highlight_nodes)
    if weight_range is None:
        weight_range = _default_weight_range(edges)
    weighted = edge_weight is not None and any(
        edge_weight in d for _, _, d in graph.edges(data=True))
    size, has_class = _node_sizes(graph, highlight, class_node)

    marked_edges = {tuple(e) for e in highlight_edges}     # once: it may be a generator
    fig = go.Figure()
    annotations = _edge_arrows(edges, pos, size, weight_range, weighted, marked_edges)
    fig.add_trace(_edge_hover_trace(edges, pos, weight_range, weighted, weight_label,
                                    marked_edges, fig_height(pos, height)))
    groups, marked = _node_groups(graph, class_node, highlight, has_class, size)
    for nodes, name, color, symbol, node_size in groups:
        if nodes:
            fig.add_trace(_node_trace(graph, pos, nodes, name, color, symbol, node_size))
            annotations += _node_labels(pos, nodes, node_size)
    fig.update_layout(
        title=title, annotations=annotations, hovermode="closest",
        height=fig_height(pos, height),
        margin=dict(l=20, r=20, t=60 if title else 30, b=20),
        showlegend=bool(marked) or has_class,
        legend=dict(orientation="h", yanchor="bottom", y=1.0, xanchor="right", x=1.0),
        plot_bgcolor="white",
        xaxis=dict(visible=False, range=[-0.1, 1.1]),
        yaxis=dict(visible=False, range=[-0.06, 1.1]),
    )
    return fig


def _default_weight_range(edges: list) -> tuple[float, float]:
    """``(0, max(1, max weight))`` of the drawn edges; (0, 1) when none is drawn."""
    weights = np.array([w for _, _, w in edges], dtype=float)
    top = max(1.0, float(weights.max())) if weights.size else 1.0
    return (0.0, top)


def _node_sizes(graph: nx.DiGraph, highlight: set, class_node: Hashable | None
                ) -> tuple[dict, bool]:
    """Marker size of every node (ordinary 14, highlighted 16, class 20) and whether the class
    node is in the graph."""
    size = {n: 14 for n in graph.nodes}
    size.update({n: 16 for n in highlight if n in size})
    has_class = class_node is not None and class_node in graph
    if has_class:
        size[class_node] = 20
    return size, has_class


def _node_groups(graph: nx.DiGraph, class_node: Hashable | None, highlight: set,
                 has_class: bool, size: Mapping) -> tuple[list[tuple], list]:
    """(nodes, trace name, colour, symbol, marker size) of each node role in drawing order,
    and the highlighted nodes other than the class."""
    ordinary = [n for n in graph.nodes if n != class_node and n not in highlight]
    marked = [n for n in graph.nodes if n != class_node and n in highlight]
    groups = [(ordinary, "nodes", NODE_COLOR, "circle", 14),
              (marked, "highlighted", HIGHLIGHT_COLOR, "circle", 16)]
    if has_class:
        groups.append(([class_node], "class", CLASS_COLOR, "diamond", size[class_node]))
    return groups, marked


def _drawn_edges(graph: nx.DiGraph, edge_weight: str | None, threshold: float
                 ) -> list[tuple[Hashable, Hashable, float]]:
    """(u, v, weight) of the edges whose weight reaches ``threshold``."""
    edges = []
    for u, v, data in graph.edges(data=True):
        w = _edge_weight(data, edge_weight)
        if w >= threshold:
            edges.append((u, v, w))
    return edges


def _positions(graph: nx.DiGraph, edges: list, positions: Mapping | None, layout: str,
               class_node: Hashable | None) -> dict:
    """Given positions, or a layout of the drawn edges; every node must have one."""
    if positions is None:
        shown = nx.DiGraph()
        shown.add_nodes_from(graph.nodes)
        shown.add_weighted_edges_from(edges, weight="w")
        pos = dag_layout(shown, layout, class_node, edge_weight="w")
    else:
        pos = dict(positions)
    missing = [n for n in graph.nodes if n not in pos]
    if missing:
        raise ValueError(f"No position given for node(s): {', '.join(map(str, missing[:5]))}")
    return pos


def _scaled(w: float, weight_range: tuple[float, float]) -> float:
    """Weight mapped to [0, 1] within ``weight_range`` (clipped)."""
    wlo, whi = weight_range
    wspan = whi - wlo if whi > wlo else 1.0
    return float(np.clip((w - wlo) / wspan, 0.0, 1.0))


def _edge_arrows(edges: list, pos: Mapping, size: Mapping, weight_range: tuple[float, float],
                 weighted: bool, hi_edges: set) -> list[dict]:
    """One arrow annotation per drawn edge, width and colour by weight, clear of the nodes."""
    arrows = []
    for u, v, w in edges:
        (x0, y0), (x1, y1) = pos[u], pos[v]
        s = _scaled(w, weight_range)
        if (u, v) in hi_edges:
            color, width = HIGHLIGHT_EDGE_COLOR, 1.5 + 3.0 * s
        elif weighted:
            color, width = sample_colorscale(EDGE_COLORSCALE, [0.35 + 0.65 * s])[0], 0.8 + 3.2 * s
        else:
            color, width = "#636363", 1.4
        arrows.append(dict(
            x=x1, y=y1, ax=x0, ay=y0, xref="x", yref="y", axref="x", ayref="y",
            showarrow=True, arrowhead=2, arrowsize=1.0, arrowwidth=width, arrowcolor=color,
            standoff=_arrow_standoff(x0, y0, x1, y1, size[v]),
            startstandoff=size[u] // 2 + 1, text="",
        ))
    return arrows


LABEL_HEIGHT = 16
"""Height in pixels of a node label's box (font 11 plus padding), drawn above the node."""


def _arrow_standoff(x0: float, y0: float, x1: float, y1: float, node_size: int) -> int:
    """Pixels between an arrowhead and the centre of its target node: clear of the marker,
    and for an arrow arriving from above (steeper than 30°) also clear of the label above
    the node, so the head is never hidden under the label."""
    base = node_size // 2 + 3
    dy, dx = y0 - y1, abs(x1 - x0)
    if dy > 0 and dy > 0.3 * dx:  # comes down onto the label box
        return base + LABEL_HEIGHT + 6
    return base


def _edge_hover_trace(edges: list, pos: Mapping, weight_range: tuple[float, float],
                      weighted: bool, weight_label: str, hi_edges: set,
                      height: int) -> go.Scatter:
    """Invisible markers at the edge midpoints: hover text, and the colour bar when
    weighted."""
    mid_x, mid_y, mid_text, mid_w = [], [], [], []
    for u, v, w in edges:
        (x0, y0), (x1, y1) = pos[u], pos[v]
        mid_x.append((x0 + x1) / 2)
        mid_y.append((y0 + y1) / 2)
        txt = f"{u} → {v}"
        if weighted:
            txt += f"<br>{weight_label}: {w:.3g}"
        if (u, v) in hi_edges:
            txt += "<br>(highlighted)"
        mid_text.append(txt)
        mid_w.append(w)
    marker = dict(size=6, opacity=0.0, color=mid_w if weighted else "#636363")
    if weighted:
        wlo, whi = weight_range
        ts = np.linspace(0, 1, 6)
        scale = [[t, c] for t, c in zip(ts, sample_colorscale(EDGE_COLORSCALE,
                                                              list(0.35 + 0.65 * ts)))]
        marker.update(colorscale=scale, cmin=wlo, cmax=whi, showscale=True,
                      colorbar=dict(title=dict(text=weight_label, side="right"), thickness=12,
                                    len=min(1.0, 260 / max(height, 1)),
                                    y=1.0, yanchor="top"))
    return go.Scatter(x=mid_x, y=mid_y, mode="markers", name="edges", marker=marker,
                      hovertext=mid_text, hoverinfo="text", showlegend=False)


def _node_trace(graph: nx.DiGraph, pos: Mapping, nodes: list, name: str, color: str,
                symbol: str, size: int) -> go.Scatter:
    """Markers of one group of nodes, with their parents in the hover text."""
    hover = []
    for n in nodes:
        parents = ", ".join(map(str, graph.predecessors(n))) or "none"
        hover.append(f"<b>{n}</b><br>parents: {parents}")
    return go.Scatter(
        x=[pos[n][0] for n in nodes], y=[pos[n][1] for n in nodes],
        mode="markers", name=name, text=[str(n) for n in nodes],
        marker=dict(size=size, color=color, symbol=symbol,
                    line=dict(width=1.5, color="#333333")),
        hovertext=hover, hoverinfo="text",
    )


def _node_labels(pos: Mapping, nodes: list, size: int) -> list[dict]:
    """Labels above the nodes on a light background (readable over arrows)."""
    return [dict(x=pos[n][0], y=pos[n][1], xref="x", yref="y", text=str(n), showarrow=False,
                 yshift=size // 2 + 8, font=dict(size=11, color="#222222"),
                 bgcolor="rgba(255,255,255,0.65)", borderpad=1) for n in nodes]


def class_balance_figure(classes: Sequence[str], counts: Sequence[int],
                         title: str | None = "Class balance", class_name: str = "class"
                         ) -> go.Figure:
    """Bar chart of how many rows fall in each class, labelled with counts and percentages.

    Parameters
    ----------
    classes : sequence of str
        Class labels.
    counts : sequence of int
        Rows per class (same order).
    title : str, optional
    class_name : str
        Axis title (the class column's name).

    Returns
    -------
    plotly.graph_objects.Figure
        One bar trace with one bar per class.
    """
    counts = np.asarray(counts, dtype=float)
    if len(classes) != counts.size:
        raise ValueError("classes and counts must have the same length")
    total = counts.sum() if counts.sum() > 0 else 1.0
    text = [f"{int(c)} ({100 * c / total:.1f}%)" for c in counts]
    fig = go.Figure(go.Bar(x=[str(c) for c in classes], y=counts, text=text,
                           textposition="auto", marker_color="#3182bd", name="rows",
                           hovertemplate="%{x}: %{y} rows<extra></extra>"))
    fig.update_layout(title=title, xaxis_title=class_name, yaxis_title="rows",
                      height=340, margin=dict(l=40, r=20, t=50 if title else 20, b=40),
                      plot_bgcolor="white")
    fig.update_xaxes(type="category")
    return fig


def heatmap_figure(matrix: np.ndarray, row_names: Sequence[str], col_names: Sequence[str],
                   title: str | None = None, *, zmin: float | None = None,
                   zmax: float | None = None, colorscale: str = "Blues",
                   value_label: str = "value", row_title: str | None = None,
                   col_title: str | None = None, annotate: bool | None = None) -> go.Figure:
    """Heatmap of a matrix with named rows and columns (row 0 at the top).

    Parameters
    ----------
    matrix : array of shape (n_rows, n_cols)
    row_names, col_names : sequence of str
    title : str, optional
    zmin, zmax : float, optional
        Colour range (default: the data's range).
    colorscale : str
    value_label : str
        Colour-bar title and hover label.
    row_title, col_title : str, optional
        Axis titles.
    annotate : bool, optional
        Write each value in its cell; default when the matrix has at most 400 cells.

    Returns
    -------
    plotly.graph_objects.Figure
        One heatmap trace.
    """
    z = np.asarray(matrix, dtype=float)
    if z.ndim != 2 or z.shape != (len(row_names), len(col_names)):
        raise ValueError(
            f"matrix shape {z.shape} does not match {len(row_names)} row and "
            f"{len(col_names)} column names")
    if annotate is None:
        annotate = z.size <= 400
    rows = [str(r) for r in row_names]
    cols = [str(c) for c in col_names]
    heat = go.Heatmap(
        z=z, x=cols, y=rows, zmin=zmin, zmax=zmax, colorscale=colorscale,
        colorbar=dict(title=dict(text=value_label, side="right"), thickness=12),
        hovertemplate=f"%{{y}} / %{{x}}<br>{value_label}: %{{z:.3g}}<extra></extra>",
    )
    if annotate:
        heat.update(text=np.vectorize(lambda v: "" if np.isnan(v) else f"{v:.2f}")(z),
                    texttemplate="%{text}", textfont=dict(size=10))
    fig = go.Figure(heat)
    longest = max((len(c) for c in cols), default=1)
    # every label shown, none skipped, none below 10 px: a long table grows (18 px per row)
    row_font = dict(size=11 if len(rows) <= 30 else 10)
    col_font = dict(size=11 if len(cols) <= 30 else 10 if len(cols) <= 60 else 8)
    per_row = 26 if len(rows) <= 30 else 18
    fig.update_layout(
        title=title,
        height=int(np.clip(120 + per_row * len(rows) + 6.5 * longest, 320, 3600)),
        margin=dict(l=20, r=20, t=50 if title else 20, b=20), plot_bgcolor="white",
        xaxis=dict(title=col_title, tickangle=-45, type="category", tickmode="array",
                   tickvals=cols, ticktext=cols, tickfont=col_font),
        yaxis=dict(title=row_title, autorange="reversed", type="category", tickmode="array",
                   tickvals=rows, ticktext=rows, tickfont=row_font),
    )
    return fig
