"""No uploaded name becomes a live link or markup in a figure (issue 36 item 5, DESIGN §7).

plotly.js draws ``<a href>`` in any text as a link (and as ``xlink:href`` in an exported SVG).
Every figure builder of :mod:`bnma_core.viz` is called here with hostile names (columns, states,
classes, methods, data sets); the figure must hold no ``<a`` tag plotly would read, the name
must still read as typed (its characters as entities), and the export must hold no link.
"""

from __future__ import annotations

import json
import re
from types import SimpleNamespace

import networkx as nx
import numpy as np
import pandas as pd
import plotly.graph_objects as go
import pytest
from hypothesis import given
from hypothesis import strategies as st

from bnma_core import viz
from bnma_core.markup import has_link, plain, without_links

EVIL = '<a href="https://evil.example/c">c</a>'
EVIL2 = '<A HREF="https://evil.example/d">d</A>'  # plotly reads tag names in any case
SHOWN = plain(EVIL)  # what the figure holds: plotly turns the entities back into EVIL
LIVE = re.compile(r"<\s*/?\s*a(?![\w-])", re.IGNORECASE)  # an a tag as plotly.js reads it


def _strings(value):
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from _strings(v)
    elif isinstance(value, list | tuple):
        for v in value:
            yield from _strings(v)
    elif isinstance(value, np.ndarray) and value.dtype.kind in "OUS":
        yield from _strings(value.tolist())


def _svg_link(svg: str):
    """A link element or link attribute in an SVG (the text ``href="..."`` inside a drawn
    label is fine: it is character data, shown, not followed)."""
    return re.search(r"<a[\s>]|xlink:href=[\"']?https?://evil", svg)


def _prediction(classes):
    p = np.array([[0.3, 0.7]])
    si = np.stack([p - 0.1, np.minimum(p + 0.1, 1)], axis=-1)
    return SimpleNamespace(classes=np.array(classes), proba=p, structure_interval=si,
                           parameter_interval=si, level=0.9, predicted=p.argmax(1))


def _quantity(name):
    rng = np.random.default_rng(0)
    return SimpleNamespace(name=name, rank_counts=rng.integers(1, 9, (4, 10)),
                           autocorrelation=rng.uniform(-0.1, 1, (4, 20)),
                           draws=rng.uniform(0, 1, (4, 30)), rhat=1.01)


def _curve():
    return pd.DataFrame({"forecast": [0.1, 0.5, 0.9], "calibrated": [0.1, 0.5, 0.9],
                         "band_lower": [0.0, 0.4, 0.8], "band_upper": [0.2, 0.6, 1.0],
                         "n": [5, 5, 5]})


def _cd():
    from bnma_core.comparison import critical_difference
    rng = np.random.default_rng(0)
    rows = [{"dataset": f"d{i}", "method": m, "accuracy": rng.uniform()}
            for i in range(8) for m in (EVIL, EVIL2, "naive")]
    return critical_difference(pd.DataFrame(rows), "accuracy")


def _graph():
    g = nx.DiGraph()
    g.add_edge("class", EVIL, weight=0.9)
    g.add_edge(EVIL, EVIL2, weight=0.6)
    return g


def _ukdb_explanation():
    from bnma_core.classifiers.ukdb import UKDB
    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.integers(0, 2, (60, 3)), columns=[EVIL, EVIL2, "x"]).astype(str)
    y = pd.Series(np.where(X[EVIL] == "1", EVIL, "b"), name="class")
    return UKDB().fit(X, y).explain(X.iloc[[0]])


def _edge_table():
    return pd.DataFrame({"subsample 1": [0.5], "subsample 2": [0.7], "mean": [0.6],
                         "sd": [0.1]}, index=[f"{EVIL} -> {EVIL2}"])


BUILDERS = {
    "reliability_figure": lambda: viz.reliability_figure({EVIL: _curve()}),
    "decision_curve_figure": lambda: viz.decision_curve_figure(pd.DataFrame(
        {"model": [EVIL, EVIL, "treat all", "treat all", "treat none", "treat none"],
         "threshold": [0.1, 0.5] * 3, "net_benefit": [0.3, 0.1, 0.2, 0.0, 0.0, 0.0],
         "prevalence": [0.4] * 6}),
        positive=EVIL2),
    "critical_difference_figure": lambda: viz.critical_difference_figure(_cd()),
    "cluster_profiles_figure": lambda: viz.cluster_profiles_figure(
        [np.array([[0.2, 0.8], [0.6, 0.4]])], [EVIL], [[EVIL2, "b"]], cluster_names=[EVIL, "k"]),
    "cluster_sizes_figure": lambda: viz.cluster_sizes_figure([3, 4], [EVIL, EVIL2]),
    "contingency_figure": lambda: viz.contingency_figure(np.array([[1, 2], [3, 4]]),
                                                         [EVIL, EVIL2], [EVIL, "k"]),
    "order_move_figure": lambda: viz.order_move_figure([EVIL, EVIL2, "x"], [0, 1, 2], (0, 2),
                                                       "swap", [2, 1, 0], True),
    "rank_plot_figure": lambda: viz.rank_plot_figure(_quantity(f"{EVIL} -> {EVIL2}")),
    "autocorrelation_figure": lambda: viz.autocorrelation_figure(_quantity(EVIL)),
    "edge_traces_figure": lambda: viz.edge_traces_figure([_quantity(f"{EVIL} -> x")]),
    "concordance_figure": lambda: viz.concordance_figure(pd.DataFrame(
        {"parent": [EVIL], "child": [EVIL2], "run_a": [0.4], "run_b": [0.5],
         "difference": [0.1]})),
    "exact_vs_estimate_figure": lambda: viz.exact_vs_estimate_figure(
        np.array([[0, 0.4], [0.3, 0]]), np.array([[0, 0.5], [0.2, 0]]), [EVIL, EVIL2]),
    "accuracy_bar_figure": lambda: viz.accuracy_bar_figure(pd.DataFrame(
        {"method": [EVIL, EVIL2], "accuracy_mean": [0.9, 0.8], "accuracy_std": [0.1, 0.1]})),
    "roc_figure": lambda: viz.roc_figure({EVIL: ([0, 0.5, 1], [0, 0.8, 1])}),
    "interval_bar_figure": lambda: viz.interval_bar_figure(pd.DataFrame(
        {"method": [EVIL, EVIL2], "accuracy": [0.9, 0.8], "accuracy_lower": [0.8, 0.7],
         "accuracy_upper": [0.95, 0.9]}), partial={EVIL2: "3 of 10 folds"}),
    "roc_small_multiples": lambda: viz.roc_small_multiples(
        {EVIL: ([0, 0.5, 1], [0, 0.8, 1]), EVIL2: ([0, 0.2, 1], [0, 0.6, 1])}),
    "dag_figure": lambda: viz.dag_figure(_graph(), class_node="class"),
    "class_balance_figure": lambda: viz.class_balance_figure([EVIL, EVIL2], [3, 5]),
    "heatmap_figure": lambda: viz.heatmap_figure(np.eye(2), [EVIL, EVIL2], [EVIL2, EVIL]),
    "edge_stability_figure": lambda: viz.edge_stability_figure(_edge_table()),
    "subsample_posterior_figure": lambda: viz.subsample_posterior_figure(
        np.array([[0.2, 0.8], [0.4, 0.6]]), [EVIL, EVIL2], truth=EVIL),
    "edge_posterior_heatmap": lambda: viz.edge_posterior_heatmap(np.eye(2), [EVIL, EVIL2]),
    "orders_accuracy_figure": lambda: viz.orders_accuracy_figure(pd.DataFrame(
        {"n_train": [10, 20, 10, 20], "method": [EVIL, EVIL, EVIL2, EVIL2],
         "accuracy": [0.6, 0.7, 0.65, 0.8]})),
    "arc_posterior_figure": lambda: viz.arc_posterior_figure([EVIL, EVIL2], [0.9, 0.2]),
    "parameter_comparison_figure": lambda: viz.parameter_comparison_figure(
        np.array([[0.2, 0.8], [0.6, 0.4]]), np.array([[0.3, 0.7], [0.5, 0.5]]),
        feature_name=EVIL, class_names=[EVIL, EVIL2], state_names=[EVIL2, "s"]),
    "roc_curves_figure": lambda: viz.roc_curves_figure(
        [0, 1, 0, 1], {EVIL: [0.1, 0.9, 0.3, 0.7]}, positive_label=EVIL2),
    "probability_figure": lambda: viz.probability_figure(_prediction([EVIL, EVIL2])),
    "contributions_figure": lambda: viz.contributions_figure(
        SimpleNamespace(target=1, names=[EVIL, EVIL2], values=np.array([0.5, -0.2]),
                        empty=-0.6, full=-0.3, model_sd=np.full(2, 0.1)),
        {EVIL: EVIL2, EVIL2: "1"}, [EVIL, EVIL2]),
    "scenarios_figure": lambda: viz.scenarios_figure(_prediction([EVIL, EVIL2]),
                                                     [EVIL, EVIL2]),
    "ukdb_figures": lambda: [viz.ukdb_structures_figure(e := _ukdb_explanation()),
                             viz.posterior_bars_figure(e)],
}


def _figures(name):
    out = BUILDERS[name]()
    return out if isinstance(out, list) else [out]


def test_every_figure_builder_is_covered():
    """A new builder of bnma_core.viz is added to BUILDERS (or named here with the reason)."""
    import inspect
    no_user_text = {"loglik_traces_figure", "exact_error_figure", "rank_correlation_figure",
                    "class_weights_figure", "subsample_weights_figure", "trace_figure",
                    "learning_curve_figure", "roc_gain_figure"}  # numbers and our own names
    made = {n for n, f in vars(viz).items() if callable(f) and inspect.isfunction(f)
            and (n.endswith("_figure") or n.endswith("_heatmap") or n == "roc_small_multiples")
            and f.__module__.startswith("bnma_core.viz")}
    covered = set(BUILDERS) | {"ukdb_structures_figure", "posterior_bars_figure"}
    assert made - covered - no_user_text == set()


@pytest.mark.parametrize("name", sorted(BUILDERS))
def test_builder_draws_hostile_names_as_text_not_links(name):
    for fig in _figures(name):
        strings = list(_strings(fig.to_plotly_json()))
        live = [s for s in strings if LIVE.search(s)]
        assert not live, f"{name} would draw a link: {live[:2]}"
        assert not has_link(fig)
        # the name still reads as typed: its escaped form is in the figure (maybe wrapped)
        assert any("&lt;" in s and "evil.example/" in s for s in strings), name


@pytest.mark.parametrize("name", sorted(BUILDERS))
def test_builder_hostile_names_read_back_as_typed(name):
    """plotly decodes the entities: the label shows the characters typed, once escaped."""
    import html
    for fig in _figures(name):
        strings = list(_strings(fig.to_plotly_json()))
        assert not any("&amp;lt;" in s for s in strings), f"{name} escaped a name twice"
        assert any("evil.example/c" in html.unescape(s) for s in strings)


def test_defensive_pass_keeps_own_markup_and_breaks_links():
    fig = go.Figure(go.Bar(x=[EVIL, "b"], y=[1, 2], name=f"<b>x</b><br>{EVIL2}",
                           text=np.array([EVIL, "plain"], dtype=object)))
    fig.update_layout(title=f"<i>t</i><sup>2</sup> {EVIL}",
                      annotations=[dict(text="< a href='https://evil.example'>z</ a>",
                                        x=0, y=0)])
    assert has_link(fig)
    out = without_links(fig)
    assert not has_link(out)
    text = json.dumps(out.to_plotly_json(), default=str)
    assert "<b>x</b><br>" in text and "<i>t</i><sup>2</sup>" in text
    assert not LIVE.search(text)
    assert without_links(out) is out  # nothing left to change: the same figure


def test_export_has_no_link_even_from_a_builder_that_forgot_plain():
    from bnma_core import export
    fig = go.Figure(go.Bar(x=[EVIL], y=[1], name=EVIL))
    fig.update_layout(title=EVIL)
    html_text = export.html_report("r", [("figure", fig)], figures="cdn")
    embedded = html_text.split("<h2>figure</h2>", 1)[1]
    assert "evil.example" in embedded  # the name is there...
    assert not re.search(r"(<|\\u003c)\s*a\s+href", embedded, re.IGNORECASE)  # ...not as a tag
    assert not has_link(export.with_margins(fig))


def test_svg_export_draws_the_names_but_no_link():
    """The critical-difference and Patient charts, and a figure whose builder forgot
    :func:`plain`, exported as SVG in one call of the image engine (one Chromium start)."""
    from bnma_core import export
    raw = go.Figure(go.Bar(x=[EVIL], y=[1], name=EVIL))
    raw.update_layout(title=EVIL)
    figs = [*_figures("critical_difference_figure"), *_figures("probability_figure"), raw]
    svgs = export.figure_images(figs, "svg")
    if svgs is None:
        pytest.skip("no image engine (kaleido with a Chromium)")
    for svg in svgs:
        text = svg.decode()
        assert "evil.example" in text  # the name is drawn...
        assert not _svg_link(text)  # ...but never as a link


@given(st.text())
def test_plain_leaves_no_tag(text):
    out = plain(text)
    assert "<" not in out and ">" not in out
    import html
    assert html.unescape(out) == text  # plotly shows what was typed
    assert not LIVE.search(out)


def test_step_player_writes_variable_names_into_html_escaped():
    """The Teach step player builds its move table as HTML (innerHTML): every variable name
    written there goes through its ``esc``, and ``esc`` leaves no tag (run by node)."""
    import shutil
    import subprocess

    from bnma_core.viz.step_player import _TEMPLATE
    html_rows = [line for line in _TEMPLATE.splitlines() if "names[" in line and "<td" in line]
    assert html_rows and all("esc(names[" in line for line in html_rows)
    node = shutil.which("node")
    if node is None:
        pytest.skip("no node to run the player's esc")
    esc = next(line for line in _TEMPLATE.splitlines() if line.startswith("const esc ="))
    out = subprocess.run([node, "-e", f"{esc}\nprocess.stdout.write(esc({json.dumps(EVIL)}))"],
                         capture_output=True, text=True, timeout=30, check=True).stdout
    assert out == SHOWN


def test_dashboard_chart_draws_no_link():
    """bnma_ui.widgets.chart hands plotly a figure with no ``<a`` tag left."""
    from bnma_ui import widgets

    class Box:
        shown: list = []

        def container(self, *args, **kwargs):
            return self

        def plotly_chart(self, fig, *args, **kwargs):
            Box.shown.append(fig)

        def __getattr__(self, name):  # captions, download buttons
            return lambda *args, **kwargs: None

    fig = go.Figure(go.Bar(x=[EVIL], y=[1], name=f"<b>{EVIL}</b>"))
    widgets.chart(fig, "hostile", where=Box())
    (shown,) = Box.shown
    assert not has_link(shown) and shown.data[0].name.startswith("<b>")
