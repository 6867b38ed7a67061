"""Layered (Sugiyama) network drawings: no arrow through a node it does not join, no two labels
overlapping — checked on the coordinates of the figure itself (pixels: the layered drawing
keeps one unit per pixel on both axes)."""

from __future__ import annotations

import re

import networkx as nx
import numpy as np
import pytest

from bnma_core.network import load_network
from bnma_core.viz.graphs import LABEL_HEIGHT, dag_figure, label_width, layered_drawing

CLEARANCE = 2.0
"""Pixels an edge keeps from the rim of a node it does not join (beyond the marker radius)."""


def _nodes(fig) -> dict:
    """name -> (x, y, marker radius in px) from the node traces."""
    out = {}
    for t in fig.data:
        if t.name in ("nodes", "highlighted", "class"):
            for name, x, y in zip(t.text, t.x, t.y):
                out[name] = (float(x), float(y), float(t.marker.size) / 2)
    return out


def _polylines(fig) -> list[list[tuple[float, float]]]:
    """Every drawn edge as the points it passes: path shapes (source and bends) joined to the
    arrow annotation that ends the edge (from the last bend, or from the source)."""
    paths = []
    for sh in fig.layout.shapes:
        pts = [tuple(map(float, p.split(","))) for p in re.findall(r"[-\d.]+,[-\d.]+", sh.path)]
        paths.append(pts)
    lines = []
    for a in fig.layout.annotations:
        if not a.showarrow:
            continue
        start, end = (float(a.ax), float(a.ay)), (float(a.x), float(a.y))
        # a path ends a third of the way along the arrow's shaft, from the last bend
        owner = [p for p in paths if len(p) > 1 and np.allclose(p[-2], start, atol=0.01)]
        lines.append((owner[0][:-1] if owner else [start]) + [end])
    return lines


def _segment_distance(p, a, b) -> float:
    p, a, b = (np.asarray(v, dtype=float) for v in (p, a, b))
    ab = b - a
    t = 0.0 if not ab.any() else float(np.clip((p - a) @ ab / (ab @ ab), 0.0, 1.0))
    return float(np.linalg.norm(p - (a + t * ab)))


def _edge_violations(fig) -> list[str]:
    nodes = _nodes(fig)
    bad = []
    for line in _polylines(fig):
        ends = {n for n, (x, y, _) in nodes.items()
                if np.allclose((x, y), line[0], atol=0.01) or np.allclose((x, y), line[-1],
                                                                           atol=0.01)}
        for a, b in zip(line, line[1:]):
            for n, (x, y, r) in nodes.items():
                if n not in ends and _segment_distance((x, y), a, b) < r + CLEARANCE:
                    bad.append(f"{sorted(ends)} passes {n}")
    return bad


def _label_boxes(fig) -> list[tuple[str, float, float, float, float]]:
    """(text, x0, x1, y0, y1) of every node label, as drawn: centred on its node, raised by
    its ``yshift``, :data:`LABEL_HEIGHT` tall and :func:`label_width` wide."""
    boxes = []
    for a in fig.layout.annotations:
        if a.showarrow or not a.text:
            continue
        w, cy = label_width(a.text), float(a.y) + float(a.yshift or 0)
        boxes.append((a.text, float(a.x) - w / 2, float(a.x) + w / 2,
                      cy - LABEL_HEIGHT / 2, cy + LABEL_HEIGHT / 2))
    return boxes


def _label_overlaps(fig) -> list[str]:
    boxes = _label_boxes(fig)
    bad = []
    for i, (ta, ax0, ax1, ay0, ay1) in enumerate(boxes):
        for tb, bx0, bx1, by0, by1 in boxes[i + 1:]:
            if ax0 < bx1 and bx0 < ax1 and ay0 < by1 and by0 < ay1:
                bad.append(f"{ta} / {tb}")
    return bad


def _random_dag(n: int, p: float, seed: int) -> nx.DiGraph:
    rng = np.random.default_rng(seed)
    names = [f"V{i}_{'x' * int(rng.integers(0, 9))}" for i in range(n)]
    g = nx.DiGraph()
    g.add_nodes_from(names)
    for i in range(n):
        for j in range(i + 1, n):
            if rng.random() < p:
                g.add_edge(names[i], names[j])
    return g


CASES = [("asia", load_network("asia").graph, "either"),
         ("alarm", load_network("alarm").graph, "HR")] + [
    (f"random{s}", _random_dag(n, p, s), None)
    for s, (n, p) in enumerate([(12, 0.3), (25, 0.12), (40, 0.06), (30, 0.2)])]


@pytest.mark.parametrize("name,graph,cls", CASES, ids=[c[0] for c in CASES])
def test_no_edge_through_a_node_and_no_label_overlap(name, graph, cls):
    fig = dag_figure(graph, class_node=cls, edge_weight=None)
    assert fig.layout.yaxis.scaleanchor == "x"       # one unit = one pixel on both axes
    assert len(_polylines(fig)) == graph.number_of_edges()
    assert _edge_violations(fig) == []
    assert _label_overlaps(fig) == []
    # the figure is tall and wide enough to hold the drawing at one unit per pixel
    xr, yr = fig.layout.xaxis.range, fig.layout.yaxis.range
    m = fig.layout.margin
    assert fig.layout.width - m.l - m.r >= xr[1] - xr[0] - 1
    assert fig.layout.height - m.t - m.b >= yr[1] - yr[0] - 1


def test_asia_tub_to_either_does_not_cross_lung():
    """The drawing the teacher met: tub -> either was routed through lung."""
    fig = dag_figure(load_network("asia").graph, class_node="lung", edge_weight=None)
    assert not [v for v in _edge_violations(fig) if "lung" in v.split(" passes ")[1]]


def test_long_edges_bend_at_every_column_they_cross():
    g = nx.DiGraph([("a", "b"), ("b", "c"), ("c", "d"), ("a", "d")])
    d = layered_drawing(g)
    assert [d.columns[n] for n in "abcd"] == [0, 1, 2, 3]
    assert len(d.routes[("a", "d")]) == 2 and d.routes[("a", "b")] == []
    xs = sorted({x for x, _ in d.positions.values()})
    assert [x for x, _ in d.routes[("a", "d")]] == xs[1:3]


def test_geometry_check_catches_an_edge_through_a_node():
    """The check can fail: three nodes on a line, the long edge drawn straight."""
    g = nx.DiGraph([("a", "b"), ("b", "c"), ("a", "c")])
    pos = {"a": (0.0, 0.0), "b": (100.0, 0.0), "c": (200.0, 0.0)}
    fig = dag_figure(g, positions=pos, edge_weight=None)
    assert _edge_violations(fig) == ["['a', 'c'] passes b"]


def test_label_check_catches_overlapping_labels():
    g = nx.DiGraph()
    g.add_nodes_from(["LONGNAME_ONE", "LONGNAME_TWO"])
    fig = dag_figure(g, positions={"LONGNAME_ONE": (0.0, 0.0), "LONGNAME_TWO": (30.0, 0.0)})
    assert _label_overlaps(fig) == ["LONGNAME_ONE / LONGNAME_TWO"]


def test_sources_sit_next_to_their_first_child():
    g = nx.DiGraph([("a", "b"), ("b", "c"), ("c", "d"), ("s", "d")])
    d = layered_drawing(g)
    assert d.columns["s"] == d.columns["d"] - 1


def test_layered_drawing_is_deterministic():
    g = load_network("alarm").graph
    assert layered_drawing(g) == layered_drawing(g)


def test_spring_layout_still_available():
    g = load_network("asia").graph
    fig = dag_figure(g, layout="spring", edge_weight=None)
    assert len(fig.layout.shapes) == 0 and fig.layout.yaxis.scaleanchor is None


def test_layered_drawing_is_remembered_and_returned_as_a_copy():
    """A page redrawn for every MCMC step draws the same networks again: the second drawing
    comes from the memo, equal to a fresh one and safe to change."""
    import time

    from bnma_core.viz import graphs as g

    net = load_network("alarm").graph
    g._memo_drawing.cache_clear()
    t0 = time.perf_counter()
    first = g.layered_drawing(net)
    t1 = time.perf_counter()
    second = g.layered_drawing(net)
    t2 = time.perf_counter()
    fresh = g._layered_drawing(net)
    assert first.positions == second.positions == fresh.positions
    assert first.routes == fresh.routes
    assert g._memo_drawing.cache_info().hits == 1
    second.positions.clear()
    assert g.layered_drawing(net).positions == fresh.positions
    print(f"layered drawing of ALARM: {t1 - t0:.3f} s, remembered {t2 - t1:.4f} s")
