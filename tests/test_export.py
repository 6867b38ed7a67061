"""Exports: GraphML and CSV read back to the same values; the HTML report is self-contained."""

from __future__ import annotations

import io

import networkx as nx
import numpy as np
import pandas as pd
import plotly.graph_objects as go

from bnma_core import export


def test_graphml_round_trip_keeps_weights_and_roles():
    g = nx.DiGraph()
    g.add_node("class", role="class")
    g.add_node("a", role="feature")
    g.add_edge("class", "a", weight=np.float64(0.75), kind=("x", 1))
    back = nx.read_graphml(io.BytesIO(export.graph_graphml(g)))
    assert back.nodes["class"]["role"] == "class"
    assert back.edges["class", "a"]["weight"] == 0.75
    assert back.edges["class", "a"]["kind"] == "('x', 1)"


def test_csv_round_trip():
    t = pd.DataFrame({"a": [0.1, np.nan]}, index=["x", "y"])
    back = pd.read_csv(io.BytesIO(export.table_csv(t)), index_col=0)
    pd.testing.assert_frame_equal(back, t)


def test_html_report_is_self_contained():
    fig1 = go.Figure(go.Scatter(x=[1, 2], y=[3, 4]))
    fig2 = go.Figure(go.Bar(x=["a"], y=[1]))
    page = export.html_report("Run <1>", [("Trace", fig1), ("Table", pd.DataFrame({"v": [1.5]})),
                                          ("Note", "first\n\nsecond <b>"), ("Bars", fig2)],
                              settings={"seed": 3})
    assert page.startswith("<!DOCTYPE html>") and "Run &lt;1&gt;" in page
    assert page.count("<h2>") == 5 and "seed" in page and "second &lt;b&gt;" in page
    assert "<script src=" not in page  # plotly.js embedded, nothing fetched
    assert page.count("plotly.js v") == 1  # the library embedded once for both figures


def test_chart_toolbar_shows_on_hover_only_and_never_prints():
    """Issue 33 item 5: the mode bar is drawn over titles and legends unless hidden until the
    pointer is over its chart (Streamlit draws it always); a document never prints it."""
    from conftest import ROOT

    assert export.figure_config("x")["displayModeBar"] == "hover"
    assert ":hover .modebar-container," in export.MODEBAR_CSS
    assert ".modebar-container{opacity:0" in export.MODEBAR_CSS
    assert "page_style()" in (ROOT / "app.py").read_text()  # applied on every page
    report = export.html_report("r", [("f", go.Figure(go.Bar(x=[1], y=[2])))])
    assert ".modebar-container{display:none!important}" in report


def test_static_figures_drawn_once_per_content_by_one_engine_at_a_time(monkeypatch):
    """Issue 36 item 7: four tabs clicking the case-report button at once started 41
    Chromium processes; the drawings are now cached by content and the engine is a lock."""
    import threading

    export._IMAGES.clear()
    calls, running, peak = [], [0], [0]
    guard = threading.Lock()
    started = threading.Barrier(4)

    def fake_draw(figs, fmt, scale, sizes):
        with guard:
            running[0] += 1
            peak[0] = max(peak[0], running[0])
        calls.append(len(figs))
        with guard:
            running[0] -= 1
        return [f"<svg>{i}</svg>".encode() for i in range(len(figs))]

    monkeypatch.setattr(export, "_draw", fake_draw)
    figs = [go.Figure(go.Bar(x=[1, 2], y=[3, 4])), go.Figure(go.Scatter(x=[1], y=[2]))]

    def tab():
        started.wait(5)
        assert export.figure_images(figs, "svg") is not None

    threads = [threading.Thread(target=tab) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert peak[0] == 1 and calls == [2]  # one engine at a time; each figure drawn once
    other = go.Figure(go.Bar(x=[1, 2], y=[3, 5]))
    assert export.figure_image(other, "svg") == b"<svg>0</svg>" and calls == [2, 1]
    export._IMAGES.clear()


def test_a_hung_image_export_gives_up_and_kills_its_browser(monkeypatch):
    """kaleido can wait forever on a browser that stopped answering: each attempt is abandoned
    after ``DRAW_TIMEOUT_S``, the browser it started is killed, one more attempt is made, and
    then no images (the caller's fallback) instead of a request that never answers."""
    import subprocess
    import sys
    import time


    started = []

    def hung_write_images(*args, **kwargs):  # a "browser" child that never answers
        proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)",
                                 "--fake-chromium"])
        started.append(proc)
        proc.wait()  # returns only when the browser is killed
        raise RuntimeError("browser closed")

    import plotly.io as pio

    monkeypatch.setattr(pio, "write_images", hung_write_images)
    monkeypatch.setattr(export, "DRAW_TIMEOUT_S", 1.0)
    t0 = time.monotonic()
    assert export._draw([go.Figure()], "svg", 1.0, [(100, 100)]) is None
    assert time.monotonic() - t0 < 20
    assert len(started) == 2  # tried twice
    for proc in started:
        assert proc.wait(timeout=10) is not None  # killed, not left running
