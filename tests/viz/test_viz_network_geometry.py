"""Every network figure of the dashboard passes the layered drawing's geometric test (issue 33
item 8): the UKDB page's two panels hold every arrow, bend and label inside their own panel
(nothing clipped at a panel's edge, nothing over a title or the legend), and the averaged
network of Order MCMC and the K-best CPDAGs draw no edge through a node and no label over
another. Coordinates are the figures' own (pixels: one unit per pixel on both axes)."""

from __future__ import annotations

import re

import networkx as nx
import numpy as np
import pytest
from test_viz_layout import _edge_violations, _label_overlaps

from bnma_core.viz.graphs import LABEL_HEIGHT, dag_figure, label_width


@pytest.fixture(scope="module")
def ukdb_figure():
    from bnma_core.classifiers.registry import fit_method
    from bnma_core.data import load_dataset
    from bnma_core.datasets import bundled_path
    from bnma_core.viz.ukdb import ukdb_structures_figure

    ds = load_dataset(bundled_path("wbc.csv"))
    model = fit_method("ukdb", ds, np.arange(1, ds.n_rows), k=2)
    x = ds.X[0].copy()
    x[5] = -1  # a missing finding: its label carries " (?)"
    return ukdb_structures_figure(model.explain(x))


def _panel_items(fig, xref: str):
    """Points (path bends, arrow ends) and label boxes (text, x0, x1, y0, y1) of one panel."""
    points, boxes = [], []
    for sh in fig.layout.shapes:
        if sh.xref == xref:
            points += [tuple(map(float, p.split(",")))
                       for p in re.findall(r"[-\d.]+,[-\d.]+", sh.path)]
    for a in fig.layout.annotations:
        if a.xref != xref:
            continue
        if a.showarrow:
            points += [(float(a.x), float(a.y)), (float(a.ax), float(a.ay))]
        elif a.text:
            w, cy = label_width(a.text), float(a.y) + float(a.yshift or 0)
            boxes.append((a.text, float(a.x) - w / 2, float(a.x) + w / 2,
                          cy - LABEL_HEIGHT / 2, cy + LABEL_HEIGHT / 2))
    return points, boxes


@pytest.mark.parametrize("row", [1, 2])
def test_ukdb_panels_hold_every_arrow_bend_and_label(ukdb_figure, row):
    fig = ukdb_figure
    xref, xaxis, yaxis = (("x", fig.layout.xaxis, fig.layout.yaxis) if row == 1 else
                          ("x2", fig.layout.xaxis2, fig.layout.yaxis2))
    (x0, x1), (y0, y1) = xaxis.range, yaxis.range
    points, boxes = _panel_items(fig, xref)
    assert points and boxes
    outside = [p for p in points if not (x0 <= p[0] <= x1 and y0 <= p[1] <= y1)]
    assert outside == [], "arrows or bends outside their panel (clipped at its edge)"
    cut = [b[0] for b in boxes if b[1] < x0 or b[2] > x1 or b[3] < y0 or b[4] > y1]
    assert cut == [], "labels cut at the panel's edge"
    assert any(b[0].endswith(" (?)") for b in boxes)
    overlap = [(a[0], b[0]) for i, a in enumerate(boxes) for b in boxes[i + 1:]
               if a[1] < b[2] and b[1] < a[2] and a[3] < b[4] and b[3] < a[4]]
    assert overlap == []
    assert yaxis.scaleanchor == ("x" if row == 1 else "x2")  # one unit = one pixel


def test_ukdb_titles_and_legend_sit_outside_the_panels(ukdb_figure):
    fig = ukdb_figure
    d1, d2 = fig.layout.yaxis.domain, fig.layout.yaxis2.domain
    titles = [a for a in fig.layout.annotations if a.xref == "paper" and a.text
              and a.text.startswith(("General network", "Network for this case"))]
    assert len(titles) == 2
    lower_title = next(a for a in titles if a.text.startswith("Network for"))
    assert d2[1] <= lower_title.y <= d1[0]  # in the gap between the panels
    legend = next(a for a in fig.layout.annotations if a.xref == "paper" and a.text
                  and a.text.startswith("<span"))
    assert legend.y <= d2[0] and legend.yanchor == "top"  # below the lower panel
    assert fig.layout.margin.b >= 3 * 16  # its three lines fit in the bottom margin


def _averaged_network(n: int = 14, seed: int = 0) -> nx.DiGraph:
    """A weighted DAG like Order MCMC's averaged network (weights = edge posteriors)."""
    rng = np.random.default_rng(seed)
    names = [f"variable_{i}" for i in range(n)]
    g = nx.DiGraph()
    g.add_nodes_from(names)
    for i in range(n):
        for j in range(i + 1, n):
            if rng.random() < 0.2:
                g.add_edge(names[i], names[j], weight=float(rng.uniform(0.3, 1.0)))
    return g


def test_order_mcmc_averaged_network_passes_the_geometric_test():
    g = _averaged_network()
    fig = dag_figure(g, class_node="variable_3", highlight_nodes=["variable_5"],
                     threshold=0.5, weight_label="P(edge | data)", weight_range=(0.0, 1.0))
    assert fig.layout.yaxis.scaleanchor == "x"
    assert _edge_violations(fig) == [] and _label_overlaps(fig) == []


def test_kbest_cpdag_passes_the_geometric_test():
    """A CPDAG's undirected edges are drawn both ways (a cycle of two arcs)."""
    g = nx.DiGraph([("clump_thickness", "class"), ("class", "cell_size"),
                    ("cell_size", "cell_shape"), ("cell_shape", "cell_size"),
                    ("class", "bare_nuclei"), ("bare_nuclei", "bland_chromatin"),
                    ("class", "mitoses"), ("cell_size", "normal_nucleoli")])
    fig = dag_figure(g, class_node="class", edge_weight=None, title="#1: weight 0.5")
    assert _edge_violations(fig) == [] and _label_overlaps(fig) == []
