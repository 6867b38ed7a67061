"""Figures: graphs (DAG drawings), class balance and generic heatmaps.

A DAG is drawn from a :class:`networkx.DiGraph`. The default layout is layered (Sugiyama,
Tagawa & Toda 1981, by igraph's ``layout_sugiyama``): parents left of children, one column per
longest-path depth, the order within a column chosen to reduce crossings, and every edge that
spans several columns routed through the layout's dummy vertices, one per column it crosses, so
that no arrow runs through a node it does not join. The layered drawing is in pixels: columns
are as far apart as their widest labels need and rows as far as a node and its label need, and
the figure keeps one pixel per unit (``scaleanchor``), so that no two labels overlap at the
drawing's own size (:func:`layered_drawing`). Plotly draws nodes as one scatter trace per role
(ordinary / highlighted / class), the bends of a routed edge as a path shape and every edge's
last leg as an arrow annotation whose width and colour encode the edge's weight (e.g. an edge
posterior P(Y -> X | D)). Invisible markers on the edges carry their hover text. The spring
layout (networkx) stays for undirected reading: related variables close together.
"""

from __future__ import annotations

import copy
import functools
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

import networkx as nx
import numpy as np
import plotly.graph_objects as go
from plotly.colors import sample_colorscale

from ..markup import plain

__all__ = [
    "dag_layout",
    "edge_polyline",
    "layered_drawing",
    "normalized_drawing",
    "LayeredDrawing",
    "label_width",
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


ROW_GAP = 44
"""Pixels between the centres of two nodes (or bend points) of one column of the layered
drawing: a node (up to 20 px), its label above it (:data:`LABEL_HEIGHT`) and a gap."""

COLUMN_GAP = 72
"""Least pixels between two columns of the layered drawing (more when their labels are wide
or their edges steep)."""

LABEL_FONT_SIZE = 11
"""Font size of node labels (px)."""

_NARROW = set("ijlrtf.,:;'|!()[]I1 ")
_WIDE = set("MWmw@%")


def label_width(text: object, font_size: int = LABEL_FONT_SIZE) -> float:
    """Estimated width in pixels of a node label in plotly's default sans-serif font, padding
    included: per character about 0.55 em (capitals 0.66 em, narrow letters 0.32 em, M / W
    0.85 em), rounded up so that two labels this far apart never touch."""
    em = 0.0
    for ch in str(text):
        if ch in _WIDE:
            em += 0.85
        elif ch in _NARROW:
            em += 0.32
        elif ch.isupper():
            em += 0.68
        else:
            em += 0.57
    return em * font_size + 6.0


@dataclass(frozen=True)
class LayeredDrawing:
    """A layered (Sugiyama) drawing of a directed graph, in pixels.

    Attributes
    ----------
    positions : dict
        node -> (x, y) in pixels, x growing rightwards (parents left of children), y growing
        upwards (plotly's axis direction), the drawing's lower-left corner at (0, 0).
    routes : dict
        (u, v) -> list of (x, y) bend points between u and v: the dummy vertices of an edge
        that spans several columns, one per column crossed (empty for adjacent columns).
    columns : dict
        node -> column index (longest-path depth).
    width, height : float
        Extent of the node centres in pixels.
    """

    positions: dict = field(default_factory=dict)
    routes: dict = field(default_factory=dict)
    columns: dict = field(default_factory=dict)
    width: float = 0.0
    height: float = 0.0


def layered_drawing(graph: nx.DiGraph, edge_weight: str | None = "weight",
                    font_size: int = LABEL_FONT_SIZE) -> LayeredDrawing:
    """Layered drawing of a directed graph (:func:`_layered_drawing`), remembered for the last
    256 graphs (nodes in order, edges and their ``edge_weight``): a page redrawn for each step
    of a chain draws the same few networks again, and the layout was a tenth of a step's
    server time. A copy is returned, so callers may change it."""
    key = (tuple(graph.nodes),
           tuple((u, v, graph.edges[u, v].get(edge_weight) if edge_weight else None)
                 for u, v in graph.edges),
           edge_weight, font_size)
    try:
        hash(key)
    except TypeError:  # an unhashable weight: no memo
        return _layered_drawing(graph, edge_weight, font_size)
    return copy.deepcopy(_memo_drawing(key))


@functools.lru_cache(maxsize=256)
def _memo_drawing(key: tuple) -> LayeredDrawing:
    nodes, edges, edge_weight, font_size = key
    g = nx.DiGraph()
    g.add_nodes_from(nodes)
    for u, v, w in edges:
        g.add_edge(u, v, **({edge_weight: w} if edge_weight and w is not None else {}))
    return _layered_drawing(g, edge_weight, font_size)


def _layered_drawing(graph: nx.DiGraph, edge_weight: str | None = "weight",
                     font_size: int = LABEL_FONT_SIZE) -> LayeredDrawing:
    """Layered drawing of a directed graph: columns, order within columns, bends of long edges.

    Steps (Sugiyama, Tagawa & Toda 1981): (1) a graph with cycles keeps its heaviest acyclic
    subgraph (edges added by decreasing ``edge_weight`` unless they close a cycle); (2) every
    node goes to the column of its longest-path depth, sources at 0; (3) igraph's
    ``Graph.layout_sugiyama`` inserts a dummy vertex wherever an edge crosses a column, orders
    each column by the barycentre heuristic to reduce crossings and places the vertices at
    least one row apart; (4) rows are :data:`ROW_GAP` pixels apart and each pair of adjacent
    columns as far apart as the wider of (a) their widest labels (:func:`label_width`) side
    by side with 18 px between them, (b) :data:`COLUMN_GAP` and (c) what keeps the steepest
    segment between them 12 px or more from the other vertices of both columns.

    Since every node sits on a column and every edge bends at a dummy vertex on each column it
    crosses, an edge's segments run between adjacent columns only; with (c) none passes
    within 12 px of a node it does not join, and with (a) and ``ROW_GAP`` no two labels
    (drawn above their nodes) overlap.

    Parameters
    ----------
    graph : networkx.DiGraph
    edge_weight : str or None
        Edge attribute deciding which edges of a cycle set the columns.
    font_size : int
        Label font size the column gaps are computed for.

    Returns
    -------
    LayeredDrawing
    """
    import igraph as ig

    nodes = list(graph.nodes)
    if not nodes:
        return LayeredDrawing()
    depth = _columns(_acyclic(graph, edge_weight))
    index = {n: i for i, n in enumerate(nodes)}
    edges = [(u, v) for u, v in graph.edges if u != v]
    # the proper layered graph: a dummy vertex wherever an edge crosses a column, so that every
    # edge igraph sees joins adjacent columns (its own edge routing is not used)
    layers, links, chain_ids = _proper_layered_graph(nodes, edges, depth, index)
    g = ig.Graph(n=len(layers), edges=links, directed=True)
    lay = g.layout_sugiyama(layers=layers, hgap=1, vgap=1)
    coords = np.asarray(lay.coords, dtype=float)[:len(layers)]
    rows = _straightened_rows(layers, links, coords[:, 0])
    n_cols = max(depth.values()) + 1
    row_node = {n: rows[index[n]] for n in nodes}
    chains = [[(layers[i], rows[i]) for i in ids] for ids in chain_ids]
    top = max(max(row_node.values()), max((r for ch in chains for _, r in ch), default=0.0))
    x_of_col = _column_offsets(nodes, depth, chains, n_cols, font_size)
    pos = {n: (float(x_of_col[depth[n]]), float((top - row_node[n]) * ROW_GAP)) for n in nodes}
    routes = {(u, v): [(float(x_of_col[c]), float((top - r) * ROW_GAP)) for c, r in ch[1:-1]]
              for (u, v), ch in zip(edges, chains)}
    return LayeredDrawing(positions=pos, routes=routes, columns=dict(depth),
                          width=float(x_of_col[-1]), height=float(top * ROW_GAP))


def _proper_layered_graph(nodes: list, edges: list, depth: Mapping[Hashable, int],
                          index: Mapping[Hashable, int]
                          ) -> tuple[list[int], list[tuple[int, int]], list[list[int]]]:
    """The proper layered graph of step (3) of :func:`_layered_drawing`.

    Parameters
    ----------
    nodes : list
        The graph's nodes; vertex ``index[n]`` is node ``n``.
    edges : list of (u, v)
        Edges without self-loops.
    depth : mapping
        node -> column (:func:`_columns`).
    index : mapping
        node -> vertex id.

    Returns
    -------
    layers : list of int
        Column of every vertex: the nodes first, then one dummy vertex wherever an edge
        crosses a column.
    links : list of (int, int)
        Vertex pairs in adjacent columns, the segments of all edges.
    chain_ids : list of list of int
        Per edge, its vertex ids from ``u`` to ``v`` (dummies in between).
    """
    layers = [depth[n] for n in nodes]
    links, chain_ids = [], []
    for u, v in edges:
        step = 1 if depth[v] > depth[u] else -1
        ids = [index[u]]
        for c in range(depth[u] + step, depth[v], step):
            ids.append(len(layers))
            layers.append(c)
        ids.append(index[v])
        links += list(zip(ids, ids[1:]))
        chain_ids.append(ids)
    return layers, links, chain_ids


def _column_offsets(nodes: list, depth: Mapping[Hashable, int], chains: list,
                    n_cols: int, font_size: int) -> list[float]:
    """x of each column in pixels: step (4) of :func:`_layered_drawing`.

    Adjacent columns are as far apart as the wider of (a) their widest labels side by side
    with 18 px between them, (b) :data:`COLUMN_GAP` and (c) what keeps the steepest segment
    between them 12 px or more from the other vertices of both columns.

    Parameters
    ----------
    nodes : list
    depth : mapping
        node -> column.
    chains : list of list of (column, row)
        Per edge, its vertices from ``u`` to ``v``.
    n_cols : int
    font_size : int

    Returns
    -------
    list of float
        ``n_cols`` offsets, the first 0.
    """
    widths = [0.0] * n_cols
    for n in nodes:
        widths[depth[n]] = max(widths[depth[n]], label_width(n, font_size))
    # steepest vertical run of a segment between columns c and c+1 (in rows)
    steep = [0.0] * max(n_cols - 1, 0)
    for ch in chains:
        for (c0, r0), (c1, r1) in zip(ch, ch[1:]):
            if abs(c1 - c0) == 1:
                steep[min(c0, c1)] = max(steep[min(c0, c1)], abs(r1 - r0))
    clear = 12.0
    x_of_col = [0.0]
    for c in range(n_cols - 1):
        dy = steep[c] * ROW_GAP
        # distance from a vertex one row away to the segment: ROW_GAP dx / hypot(dx, dy)
        need_steep = clear * dy / np.sqrt(ROW_GAP ** 2 - clear ** 2)
        gap = max(COLUMN_GAP, (widths[c] + widths[c + 1]) / 2 + 18.0, need_steep)
        x_of_col.append(x_of_col[-1] + gap)
    return x_of_col


def _columns(dag: nx.DiGraph) -> dict[Hashable, int]:
    """Column of each node of a DAG: its longest-path depth, except that a source with
    children moves right to the column just before its nearest child (fewer long edges,
    Gansner et al. 1993 note the same gain from balancing such nodes)."""
    depth = _layers(dag)
    for n in dag.nodes:
        kids = list(dag.successors(n))
        if kids and not any(True for _ in dag.predecessors(n)):
            depth[n] = min(depth[c] for c in kids) - 1
    return depth


STRAIGHTEN_SWEEPS = 8
"""Sweeps of :func:`_straightened_rows` (each visits every column twice)."""


def _straightened_rows(layers: list[int], links: list[tuple[int, int]],
                       wish: np.ndarray) -> np.ndarray:
    """Row of every vertex of the proper layered graph (nodes and dummy vertices).

    The order within each column is igraph's (its within-layer coordinate ``wish``; ties by
    the mean coordinate of the vertex's neighbours, then by vertex id). Rows keep that order
    at least 1 apart, first as close as possible to igraph's coordinates, then over
    :data:`STRAIGHTEN_SWEEPS` sweeps as close as possible to the mean row of each vertex's
    neighbours in the adjacent columns (edges run straighter and less steep), each column
    solved in least squares by pool-adjacent-violators on (wish - rank) (the placement step
    of Sugiyama et al. 1981 as a constrained least-squares problem)."""
    n = len(layers)
    nbrs: list[list[int]] = [[] for _ in range(n)]
    for a, b in links:
        nbrs[a].append(b)
        nbrs[b].append(a)
    wish = np.asarray(wish, dtype=float)
    cols: dict[int, list[int]] = {}
    for i in range(n):
        cols.setdefault(layers[i], []).append(i)
    for ids in cols.values():
        ids.sort(key=lambda i: (wish[i], float(np.mean(wish[nbrs[i]])) if nbrs[i] else wish[i],
                                i))
    rows = np.zeros(n)

    def place(ids: list[int], target: np.ndarray) -> None:
        rank = np.arange(len(ids))
        rows[ids] = _isotonic(target - rank) + rank

    for ids in cols.values():
        place(ids, wish[ids])
    order = sorted(cols)
    for _ in range(STRAIGHTEN_SWEEPS):
        for c in order + order[::-1]:
            ids = cols[c]
            place(ids, np.array([rows[nbrs[i]].mean() if nbrs[i] else rows[i] for i in ids]))
    return rows - rows.min()


def _isotonic(y: np.ndarray) -> np.ndarray:
    """The non-decreasing sequence closest to ``y`` in least squares (pool adjacent
    violators)."""
    blocks: list[list[float]] = []   # [mean, count]
    for v in y:
        blocks.append([float(v), 1.0])
        while len(blocks) > 1 and blocks[-2][0] > blocks[-1][0]:
            m2, c2 = blocks.pop()
            m1, c1 = blocks.pop()
            blocks.append([(m1 * c1 + m2 * c2) / (c1 + c2), c1 + c2])
    return np.concatenate([np.full(int(c), m) for m, c in blocks]) if blocks else np.zeros(0)


def normalized_drawing(drawing: LayeredDrawing) -> tuple[dict, dict]:
    """Positions and bends of a layered drawing scaled to [0, 1] on each axis (as
    :func:`dag_layout` returns them), for figures that place several drawings in panels."""
    if not drawing.positions:
        return {}, {}
    arr = np.array(list(drawing.positions.values()), dtype=float)
    lo, hi = arr.min(axis=0), arr.max(axis=0)
    span = np.where(hi - lo > 0, hi - lo, 1.0)
    flat = hi - lo == 0

    def scale(p) -> tuple[float, float]:
        q = (np.asarray(p, dtype=float) - lo) / span
        q[flat] = 0.5
        return float(q[0]), float(q[1])

    pos = {n: scale(p) for n, p in drawing.positions.items()}
    routes = {e: [scale(p) for p in pts] for e, pts in drawing.routes.items()}
    return pos, routes


def dag_layout(graph: nx.DiGraph, layout: str = "layered", class_node: Hashable | None = None,
               seed: int = 0, edge_weight: str | None = "weight"
               ) -> dict[Hashable, tuple[float, float]]:
    """Node positions for :func:`dag_figure`, reusable to draw two graphs on the same layout.

    Parameters
    ----------
    graph : networkx.DiGraph
    layout : {"layered", "spring"}
        ``"layered"``: the node positions of :func:`layered_drawing` (columns by longest-path
        depth, left to right; order within a column by igraph's Sugiyama layout), scaled to
        [0, 1]. ``"spring"``: force-directed (``networkx.spring_layout``, fixed seed).
    class_node : hashable, optional
        In the spring layout the class is pinned at the centre; the layered layout places it
        like any other node.
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
        return normalized_drawing(layered_drawing(graph, edge_weight))[0]
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
    pos, drawing = _positions(graph, edges, positions, layout, class_node)
    routes = drawing.routes if drawing is not None else {}
    highlight = set(highlight_nodes)
    if weight_range is None:
        weight_range = _default_weight_range(edges)
    weighted = edge_weight is not None and any(
        edge_weight in d for _, _, d in graph.edges(data=True))
    size, has_class = _node_sizes(graph, highlight, class_node)

    marked_edges = {tuple(e) for e in highlight_edges}     # once: it may be a generator
    fig = go.Figure()
    annotations, shapes = _edge_arrows(edges, pos, size, weight_range, weighted, marked_edges,
                                       routes)
    height = _drawing_height(drawing, title, height) if drawing is not None \
        else fig_height(pos, height)
    fig.add_trace(_edge_hover_trace(edges, pos, weight_range, weighted, weight_label,
                                    marked_edges, height, routes))
    groups, marked = _node_groups(graph, class_node, highlight, has_class, size)
    for nodes, name, color, symbol, node_size in groups:
        if nodes:
            fig.add_trace(_node_trace(graph, pos, nodes, name, color, symbol, node_size))
            annotations += _node_labels(pos, nodes, node_size)
    _base_layout(fig, title, annotations, shapes, height, bool(marked) or has_class)
    if drawing is not None:
        _pixel_axes(fig, drawing, graph, weighted)
    return fig


def _base_layout(fig: go.Figure, title: str | None, annotations: list, shapes: list,
                 height: int, showlegend: bool) -> None:
    """Layout of :func:`dag_figure`: arrows and labels, a horizontal legend top right, hidden
    axes over the unit square (:func:`_pixel_axes` replaces them for a layered drawing)."""
    fig.update_layout(
        title=title, annotations=annotations, shapes=shapes, hovermode="closest",
        height=height,
        margin=dict(l=20, r=20, t=60 if title else 30, b=20),
        showlegend=showlegend,
        legend=dict(orientation="h", yanchor="bottom", y=1.0, xanchor="right", x=1.0),
        plot_bgcolor="white",
        xaxis=dict(visible=False, range=[-0.1, 1.1]),
        yaxis=dict(visible=False, range=[-0.06, 1.1]),
    )


DRAWING_PAD_TOP = 34
"""Pixels above the top row of a layered drawing: the top labels and the legend."""

DRAWING_PAD_BOTTOM = 16
"""Pixels below the bottom row of a layered drawing (the bottom nodes)."""


def _drawing_height(drawing: LayeredDrawing, title: str | None, height: int | None) -> int:
    """Figure height holding a layered drawing at one pixel per unit (or ``height``)."""
    if height:
        return int(height)
    margins = (60 if title else 30) + 20
    return int(min(drawing.height + DRAWING_PAD_TOP + DRAWING_PAD_BOTTOM + margins, 6000))


def _pixel_axes(fig: go.Figure, drawing: LayeredDrawing, graph: nx.DiGraph,
                weighted: bool) -> None:
    """Axes in pixels of a layered drawing, one unit = one pixel on both (``scaleanchor``),
    wide enough for the labels of the first and last columns; the figure's own width (used
    by image export; a page may stretch it) holds the whole drawing."""
    first = max((label_width(n) for n, c in drawing.columns.items() if c == 0), default=0.0)
    last_col = max(drawing.columns.values(), default=0)
    last = max((label_width(n) for n, c in drawing.columns.items() if c == last_col),
               default=0.0)
    x0, x1 = -first / 2 - 12, drawing.width + last / 2 + 12
    y0, y1 = -DRAWING_PAD_BOTTOM, drawing.height + DRAWING_PAD_TOP
    fig.update_layout(
        xaxis=dict(visible=False, range=[x0, x1], constrain="domain"),
        yaxis=dict(visible=False, range=[y0, y1], scaleanchor="x", scaleratio=1,
                   constrain="domain"),
        width=int(max(x1 - x0 + 40 + (90 if weighted else 0), 320)),
    )


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
               class_node: Hashable | None) -> tuple[dict, LayeredDrawing | None]:
    """Given positions, or a layout of the drawn edges; every node must have one. The layered
    layout also returns its drawing (pixel positions and the bends of long edges)."""
    drawing = None
    if positions is None:
        shown = nx.DiGraph()
        shown.add_nodes_from(graph.nodes)
        shown.add_weighted_edges_from(edges, weight="w")
        if layout == "layered":
            drawing = layered_drawing(shown, "w")
            pos = dict(drawing.positions)
        else:
            pos = dag_layout(shown, layout, class_node, edge_weight="w")
    else:
        pos = dict(positions)
    missing = [n for n in graph.nodes if n not in pos]
    if missing:
        raise ValueError(f"No position given for node(s): {', '.join(map(str, missing[:5]))}")
    return pos, drawing


def _scaled(w: float, weight_range: tuple[float, float]) -> float:
    """Weight mapped to [0, 1] within ``weight_range`` (clipped)."""
    wlo, whi = weight_range
    wspan = whi - wlo if whi > wlo else 1.0
    return float(np.clip((w - wlo) / wspan, 0.0, 1.0))


def _edge_style(w: float, weight_range: tuple[float, float], weighted: bool,
                highlighted: bool) -> tuple[str, float]:
    """(colour, width) of an edge: orange when highlighted, else by weight."""
    s = _scaled(w, weight_range)
    if highlighted:
        return HIGHLIGHT_EDGE_COLOR, 1.5 + 3.0 * s
    if weighted:
        return sample_colorscale(EDGE_COLORSCALE, [0.35 + 0.65 * s])[0], 0.8 + 3.2 * s
    return "#636363", 1.4


def _edge_arrows(edges: list, pos: Mapping, size: Mapping, weight_range: tuple[float, float],
                 weighted: bool, hi_edges: set, routes: Mapping | None = None
                 ) -> tuple[list[dict], list[dict]]:
    """One arrow annotation per drawn edge, width and colour by weight, clear of the nodes;
    an edge with bends (``routes``) is a path shape from its source through the bends and an
    arrow from the last bend to its target."""
    arrows, shapes = [], []
    for u, v, w in edges:
        color, width = _edge_style(w, weight_range, weighted, (u, v) in hi_edges)
        bends = list((routes or {}).get((u, v), ()))
        (x0, y0), (x1, y1) = (bends[-1] if bends else pos[u]), pos[v]
        if bends:
            # the path runs a third of the way into the last leg, under the arrow's shaft, so
            # that the two join without a notch
            pts = [pos[u]] + bends + [(x0 + (x1 - x0) / 3, y0 + (y1 - y0) / 3)]
            path = "M " + " L ".join(f"{x:.2f},{y:.2f}" for x, y in pts)
            shapes.append(dict(type="path", path=path, xref="x", yref="y", layer="below",
                               line=dict(color=color, width=width),
                               name=f"{plain(u)} → {plain(v)}"))
        arrows.append(dict(
            x=x1, y=y1, ax=x0, ay=y0, xref="x", yref="y", axref="x", ayref="y",
            showarrow=True, arrowhead=2, arrowsize=1.0, arrowwidth=width, arrowcolor=color,
            standoff=_arrow_standoff(x0, y0, x1, y1, size[v]),
            startstandoff=0 if bends else size[u] // 2 + 1, text="",
        ))
    return arrows, shapes


def edge_polyline(u: Hashable, v: Hashable, pos: Mapping, routes: Mapping | None = None
                  ) -> list[tuple[float, float]]:
    """The points an edge is drawn through: its source, its bends, its target."""
    return [tuple(pos[u])] + [tuple(p) for p in (routes or {}).get((u, v), ())] \
        + [tuple(pos[v])]


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
                      height: int, routes: Mapping | None = None) -> go.Scatter:
    """Invisible markers halfway along the edges: hover text, and the colour bar when
    weighted."""
    mid_x, mid_y, mid_text, mid_w = [], [], [], []
    for u, v, w in edges:
        pts = np.asarray(edge_polyline(u, v, pos, routes), dtype=float)
        k = (len(pts) - 1) // 2   # middle segment
        (x0, y0), (x1, y1) = pts[k], pts[k + 1]
        mid_x.append((x0 + x1) / 2)
        mid_y.append((y0 + y1) / 2)
        txt = f"{plain(u)} → {plain(v)}"
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
        parents = ", ".join(map(plain, graph.predecessors(n))) or "none"
        hover.append(f"<b>{plain(n)}</b><br>parents: {parents}")
    return go.Scatter(
        x=[pos[n][0] for n in nodes], y=[pos[n][1] for n in nodes],
        mode="markers", name=name, text=[plain(n) for n in nodes],
        marker=dict(size=size, color=color, symbol=symbol,
                    line=dict(width=1.5, color="#333333")),
        hovertext=hover, hoverinfo="text",
    )


def _node_labels(pos: Mapping, nodes: list, size: int) -> list[dict]:
    """Labels above the nodes on a light background (readable over arrows)."""
    return [dict(x=pos[n][0], y=pos[n][1], xref="x", yref="y", text=plain(n), showarrow=False,
                 yshift=size // 2 + 8, font=dict(size=11, color="#222222"),
                 bgcolor="rgba(255,255,255,0.85)", borderpad=1) for n in nodes]


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
    fig = go.Figure(go.Bar(x=[plain(c) for c in classes], y=counts, text=text,
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
    rows = [plain(r) for r in row_names]  # user names: never markup
    cols = [plain(c) for c in col_names]
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
