"""Structure of the graph / class-balance / heatmap figures (no browser)."""

from __future__ import annotations

import networkx as nx
import numpy as np
import plotly.graph_objects as go
import pytest

from bnma_core import viz
from bnma_core.viz.graphs import dag_figure, dag_layout


def _arrows(fig: go.Figure) -> list:
    return [a for a in fig.layout.annotations if a.showarrow]


def _trace(fig: go.Figure, name: str):
    found = [t for t in fig.data if t.name == name]
    return found[0] if found else None


def _naive(n: int = 5) -> nx.DiGraph:
    g = nx.DiGraph()
    g.add_node("C")
    for i in range(n):
        g.add_edge("C", f"F{i}")
    return g


def test_reexported_from_viz_package():
    for name in ("dag_figure", "dag_layout", "class_balance_figure", "heatmap_figure"):
        assert getattr(viz, name) is getattr(viz.graphs, name)


def test_dag_figure_nodes_arrows_and_class_trace():
    g = _naive(5)
    g.add_edge("F0", "F1")
    fig = dag_figure(g, class_node="C", highlight_nodes=["F0"])
    assert len(_arrows(fig)) == g.number_of_edges() == 6
    nodes = _trace(fig, "nodes")
    assert list(nodes.text) == ["F1", "F2", "F3", "F4"]
    assert list(_trace(fig, "highlighted").text) == ["F0"]
    cls = _trace(fig, "class")
    assert list(cls.text) == ["C"] and cls.marker.symbol == "diamond"
    assert cls.marker.color != nodes.marker.color
    assert len(_trace(fig, "edges").x) == 6  # one hover marker per edge
    n_drawn = sum(len(t.text) for t in fig.data if t.name in ("nodes", "highlighted", "class"))
    assert n_drawn == g.number_of_nodes()


def test_arrows_point_from_parent_to_child():
    g = nx.DiGraph([("A", "B")])
    pos = {"A": (0.0, 0.0), "B": (1.0, 1.0)}
    (arrow,) = _arrows(dag_figure(g, positions=pos))
    assert (arrow.ax, arrow.ay) == (0.0, 0.0) and (arrow.x, arrow.y) == (1.0, 1.0)
    assert arrow.axref == "x" and arrow.ayref == "y"


def test_threshold_drops_edges_and_weights_set_width():
    g = nx.DiGraph()
    g.add_edge("A", "B", weight=0.9)
    g.add_edge("A", "C", weight=0.2)
    g.add_edge("B", "C", weight=0.5)
    assert len(_arrows(dag_figure(g, threshold=0.0))) == 3
    fig = dag_figure(g, threshold=0.4)
    arrows = _arrows(fig)
    assert len(arrows) == 2
    widths = sorted(a.arrowwidth for a in arrows)
    assert widths[0] < widths[1]  # 0.5 thinner than 0.9
    assert fig.data[0].marker.showscale  # colour bar for weighted edges
    assert len(_arrows(dag_figure(g, threshold=0.95))) == 0
    # every node still drawn
    fig = dag_figure(g, threshold=0.95)
    assert sum(len(t.text) for t in fig.data if t.name == "nodes") == 3


def test_unweighted_graph_has_no_colourbar_and_equal_widths():
    fig = dag_figure(_naive(3))
    assert not fig.data[0].marker.showscale
    assert len({a.arrowwidth for a in _arrows(fig)}) == 1


def test_highlight_edges_coloured():
    g = nx.DiGraph([("A", "B"), ("B", "C")])
    fig = dag_figure(g, highlight_edges=[("B", "C")])
    colours = {(a.ax, a.x): a.arrowcolor for a in _arrows(fig)}
    assert len(set(colours.values())) == 2


def test_layered_layout_depth_columns_and_range():
    g = nx.DiGraph([("A", "B"), ("B", "C"), ("A", "C"), ("A", "D")])
    pos = dag_layout(g, "layered")
    assert pos["A"][0] < pos["B"][0] < pos["C"][0]  # longest-path depth
    assert pos["D"][0] == pos["B"][0]
    arr = np.array(list(pos.values()))
    assert arr.min() >= 0 and arr.max() <= 1
    # no two nodes share a position
    assert len({tuple(np.round(p, 9)) for p in pos.values()}) == 4


@pytest.mark.parametrize("layout", ["layered", "spring"])
def test_layouts_deterministic_and_complete(layout):
    g = nx.gn_graph(25, seed=3).reverse()
    p1, p2 = dag_layout(g, layout), dag_layout(g, layout)
    assert p1 == p2 and set(p1) == set(g.nodes)
    fig = dag_figure(g, class_node=0, layout=layout, title="t")
    assert len(_arrows(fig)) == g.number_of_edges()
    assert fig.layout.title.text == "t"


def test_cyclic_and_empty_graphs_do_not_fail():
    cyc = nx.DiGraph([("A", "B"), ("B", "A"), ("B", "C")])
    assert len(_arrows(dag_figure(cyc))) == 3
    empty = nx.DiGraph()
    fig = dag_figure(empty)
    assert len(_arrows(fig)) == 0
    single = nx.DiGraph()
    single.add_node("only")
    assert dag_layout(single)["only"] == (0.5, 0.5)


def test_bad_arguments_raise_clear_errors():
    with pytest.raises(ValueError, match="layout"):
        dag_layout(_naive(2), "circle")
    with pytest.raises(ValueError, match="position"):
        dag_figure(_naive(2), positions={"C": (0, 0)})
    with pytest.raises(ValueError, match="same length"):
        viz.class_balance_figure(["a", "b"], [1])
    with pytest.raises(ValueError, match="does not match"):
        viz.heatmap_figure(np.zeros((2, 3)), ["a", "b"], ["x", "y"])


def test_class_balance_figure():
    fig = viz.class_balance_figure(["benign", "malignant"], [444, 239], class_name="class")
    assert len(fig.data) == 1 and isinstance(fig.data[0], go.Bar)
    assert list(fig.data[0].x) == ["benign", "malignant"]
    assert list(fig.data[0].y) == [444, 239]
    assert fig.data[0].text[0] == "444 (65.0%)"
    assert fig.layout.xaxis.title.text == "class"


def test_heatmap_figure():
    m = np.arange(6, dtype=float).reshape(2, 3) / 5
    fig = viz.heatmap_figure(m, ["r0", "r1"], ["a", "b", "c"], "H", zmin=0, zmax=1,
                             value_label="P")
    (heat,) = fig.data
    assert isinstance(heat, go.Heatmap)
    assert np.array_equal(np.asarray(heat.z), m)
    assert list(heat.y) == ["r0", "r1"] and list(heat.x) == ["a", "b", "c"]
    assert heat.zmin == 0 and heat.zmax == 1
    assert heat.text[1][2] == "1.00"
    assert fig.layout.yaxis.autorange == "reversed"
    big = viz.heatmap_figure(np.zeros((30, 30)), list(range(30)), list(range(30)))
    assert big.data[0].text is None


def test_layered_layout_of_a_cyclic_graph_follows_heavier_edges():
    g = nx.DiGraph()
    g.add_edge("A", "B", weight=0.9)
    g.add_edge("B", "A", weight=0.1)
    g.add_edge("B", "C", weight=0.8)
    pos = dag_layout(g, "layered")
    assert pos["A"][0] < pos["B"][0] < pos["C"][0]
    g["A"]["B"]["weight"], g["B"]["A"]["weight"] = 0.1, 0.9
    pos = dag_layout(g, "layered")
    assert pos["B"][0] < pos["A"][0]


def test_layout_uses_only_the_drawn_edges():
    g = nx.DiGraph()
    g.add_edge("A", "B", weight=0.9)
    g.add_edge("B", "C", weight=0.1)  # hidden at threshold 0.5: C is not pushed right of B
    fig = dag_figure(g, threshold=0.5)
    xs = {t: x for tr in fig.data if tr.name == "nodes" for t, x in zip(tr.text, tr.x)}
    assert xs["C"] == xs["A"] < xs["B"]


def test_edge_heatmap_labels_every_variable():
    """37 variables (ALARM): every one is a tick on both axes, none skipped by plotly."""
    from bnma_core.viz.mcmc import edge_posterior_heatmap

    names = [f"v{i}" for i in range(37)]
    fig = edge_posterior_heatmap(np.random.default_rng(0).random((37, 37)), names)
    assert list(fig.layout.xaxis.tickvals) == names and list(fig.layout.yaxis.tickvals) == names
    assert fig.data[0].zmin == 0 and fig.data[0].zmax == 1


def test_evaluation_figures_read_well():
    """Issue 14 item 15: the accuracy axis ends at 1, 'AUC' not 'Auc', ROC curves all look
    different and the legend sits inside the plot (never cut off)."""
    import pandas as pd

    from bnma_core.viz import accuracy_bar_figure, roc_figure

    summary = pd.DataFrame({"method": ["nb", "tan"], "auc_mean": [0.99, 0.98],
                            "auc_std": [0.02, 0.01]})
    fig = accuracy_bar_figure(summary, metric="auc")
    assert fig.layout.yaxis.range[1] == 1.0 and fig.layout.title.text.startswith("AUC ")
    curves = {f"m{i}": ([0, 0.5, 1], [0, 0.8, 1], 0.8) for i in range(14)}
    roc = roc_figure(curves)
    styles = {(t.line.color, t.line.dash) for t in roc.data[1:]}
    assert len(styles) == 14
    assert roc.layout.legend.xanchor == "right" and 0 <= roc.layout.legend.x <= 1
    assert roc.layout.yaxis.range[1] == 1


def test_arrowheads_from_above_stop_clear_of_the_label():
    """Item 15: a label sits above its node; an arrow arriving from above stops above it."""
    from bnma_core.viz.graphs import LABEL_HEIGHT

    g = nx.DiGraph([("a", "b"), ("b", "c")])
    pos = {"a": (0.5, 1.0), "b": (0.5, 0.5), "c": (0.9, 0.5)}
    fig = dag_figure(g, positions=pos, edge_weight=None)
    by_target = {(a.ax, a.ay, a.x, a.y): a for a in _arrows(fig)}
    down = by_target[(0.5, 1.0, 0.5, 0.5)]
    side = by_target[(0.5, 0.5, 0.9, 0.5)]
    assert down.standoff >= 14 // 2 + LABEL_HEIGHT  # clears marker and label
    assert side.standoff < down.standoff


def test_ukdb_networks_layered_one_above_the_other_on_37_variables():
    """Item 15: the UKDB figure of an ALARM case (37 variables, its strongest arcs) is two
    full-width panels on one layered layout: arcs point rightwards (parents left of children,
    but where the two networks' orders disagree), labels clear of each other, class ->
    feature arcs not drawn, and arcs only in one network red."""
    import dataclasses

    from bnma_core.classifiers.ukdb import UKDB
    from bnma_core.network import load_network
    from bnma_core.viz.ukdb import ukdb_layout, ukdb_structures_figure
    from bnma_ui.models import strongest_arcs

    ds = load_network("alarm").sample(400, seed=0, class_variable="CATECHOL")
    frame = ds.to_frame()
    X, y = frame.drop(columns=ds.class_name), frame[ds.class_name]
    e = UKDB(k=2).fit(X, y).explain(X.iloc[[0]])
    keep = set(e.class_parents_domain) | set(e.class_parents_personalized)
    dom = strongest_arcs(e.domain_graph, e.class_name, 12, keep)
    per = strongest_arcs(e.personalized_graph, e.class_name, 12, keep)
    nodes = set(dom) | set(per)
    dom = strongest_arcs(e.domain_graph, e.class_name, 12, nodes)
    per = strongest_arcs(e.personalized_graph, e.class_name, 12, nodes)
    shown = dataclasses.replace(e, domain_graph=dom, personalized_graph=per)
    pos = ukdb_layout(dom, e.class_name, per)
    assert set(pos) == nodes
    arcs = [(a, b) for g in (dom, per) for a, b in g.edges if a != e.class_name]
    rightwards = sum(pos[a][0] < pos[b][0] for a, b in arcs)
    assert rightwards >= 0.75 * len(arcs)  # the union of two rankings may hold cycles
    # no two nodes at one place (labels would overlap)
    assert len({(round(x, 3), round(y, 3)) for x, y in pos.values()}) == len(pos)
    fig = ukdb_structures_figure(shown)
    arrows = _arrows(fig)
    drawn = sum(1 for g in (dom, per) for a, b, d in g.edges(data=True)
                if not (a == e.class_name and d.get("role") == "class"))
    assert len(arrows) == drawn
    assert {a.xref for a in arrows} == {"x", "x2"}
    red = [a for a in arrows if a.arrowcolor == "#d62728"]
    assert 0 < len(red) <= drawn
    titles = [a.text for a in fig.layout.annotations if not a.showarrow
              and a.text.startswith(("General network", "Network for this case"))]
    assert len(titles) == 2 and fig.layout.yaxis.domain[0] > fig.layout.yaxis2.domain[1]
    assert fig.layout.height >= 600


def test_long_heatmap_keeps_readable_labels():
    """Cluster profiles of ALARM (~110 value rows): every row label at least 10 px with at
    least 16 px of height per row (the figure grows instead of shrinking the font)."""
    rows = [f"VARIABLE{i} = STATE" for i in range(110)]
    fig = viz.heatmap_figure(np.zeros((110, 2)), rows, ["cluster 1", "cluster 2"])
    assert fig.layout.yaxis.tickfont.size >= 10
    assert fig.layout.height / 110 >= 16
    assert list(fig.layout.yaxis.tickvals) == rows


def test_highlight_edges_may_be_a_generator():
    """The arrows and the hover text both see the highlighted edges, also from a generator."""
    import networkx as nx

    from bnma_core.viz.graphs import dag_figure

    g = nx.DiGraph([("a", "b"), ("b", "c")])
    as_list = dag_figure(g, highlight_edges=[("a", "b")])
    as_gen = dag_figure(g, highlight_edges=(e for e in [("a", "b")]))
    assert as_gen.to_json() == as_list.to_json()
