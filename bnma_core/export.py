"""Exports of what the library computes: graphs as GraphML, tables as CSV, figures as PNG / SVG
(when a static-image engine is available) and a self-contained HTML report of a run.

Every function returns bytes or text, so the CLI can write them to files and the dashboard can
offer them as downloads.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import html
import io
import platform
import threading
from collections import OrderedDict
from collections.abc import Iterable, Mapping
from typing import Any

import networkx as nx
import pandas as pd

from bnma_core.markup import without_links

__all__ = ["graph_graphml", "table_csv", "csv_safe", "figure_image", "figure_images",
           "html_report", "Html",
           "figure_config"]


def graph_graphml(graph: nx.DiGraph) -> bytes:
    """A (weighted) directed graph as GraphML, readable by networkx, Gephi, Cytoscape and yEd.

    Node and edge attributes that GraphML cannot hold (lists, arrays) are written as text.
    """
    g = nx.DiGraph()
    for n, data in graph.nodes(data=True):
        g.add_node(str(n), **{k: _graphml_value(v) for k, v in data.items()})
    for u, v, data in graph.edges(data=True):
        g.add_edge(str(u), str(v), **{k: _graphml_value(x) for k, x in data.items()})
    buf = io.BytesIO()
    nx.write_graphml(g, buf)
    return buf.getvalue()


def _graphml_value(v: Any) -> Any:
    if isinstance(v, bool | int | float | str):
        return v
    if hasattr(v, "item") and getattr(v, "ndim", 1) == 0:  # numpy scalar
        return v.item()
    return str(v)


FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
"""First characters that make a spreadsheet read a CSV cell as a formula (OWASP, "CSV
injection")."""


def csv_safe(value: Any) -> Any:
    """``value`` as a spreadsheet will read it as text: a string starting with one of
    :data:`FORMULA_STARTS` gets a leading single quote (OWASP's rule against CSV injection:
    ``=HYPERLINK(...)`` from an uploaded file must not come back as a live formula). Numbers,
    and strings that are numbers (``-3.5``, ``+1e3``), are returned unchanged."""
    if not isinstance(value, str) or not value.startswith(FORMULA_STARTS):
        return value
    if value[0] in "+-":
        try:
            float(value)
            return value
        except ValueError:
            pass
    return "'" + value


def _csv_safe_frame(table: pd.DataFrame) -> pd.DataFrame:
    """A copy of ``table`` with every text cell, column name and index label through
    :func:`csv_safe` (numeric columns are left as they are)."""
    out = table.copy()
    for j in range(out.shape[1]):
        col = out.iloc[:, j]
        if not (pd.api.types.is_numeric_dtype(col.dtype) or
                pd.api.types.is_datetime64_any_dtype(col.dtype)):
            out.isetitem(j, col.astype(object).map(csv_safe))
    return out.rename(index=csv_safe, columns=csv_safe)


def table_csv(table: pd.DataFrame | pd.Series, index: bool = True) -> bytes:
    """A table as UTF-8 CSV (missing values as empty fields), safe to open in a spreadsheet:
    text cells, column names and index labels that would start a formula are quoted
    (:func:`csv_safe`); numbers stay numbers. Lines end in CRLF (RFC 4180), so a field holding
    a line break of either kind is put in double quotes and cannot start a row of its own."""
    frame = table.to_frame() if isinstance(table, pd.Series) else table
    return _csv_safe_frame(frame).to_csv(index=index, lineterminator="\r\n").encode("utf-8")


MODEBAR_CSS = (
    "[data-testid='stPlotlyChart'] .modebar-container{opacity:0;transition:opacity .15s}"
    "[data-testid='stPlotlyChart']:hover .modebar-container,"
    "[data-testid='stPlotlyChart']:focus-within .modebar-container{opacity:1}"
    "@media print{.modebar-container{display:none!important}}")
"""The chart toolbar (plotly's mode bar) shown only while the pointer is over its chart or
the chart has the keyboard focus: Streamlit draws it always, over the figure's title and
legend; never printed."""


def figure_config(filename: str) -> dict:
    """plotly config for the chart's own toolbar: "download as SVG" (vector, for papers), named
    after the figure; PNG comes from :func:`figure_image` where an engine is available. The
    toolbar shows on hover only (with :data:`MODEBAR_CSS` on the dashboard)."""
    return {"toImageButtonOptions": {"format": "svg", "filename": filename},
            "displaylogo": False, "displayModeBar": "hover"}


def figure_image(fig: Any, fmt: str = "png", scale: float = 2.0) -> bytes | None:
    """A plotly figure as PNG or SVG bytes through kaleido, or None when no image engine is
    installed (kaleido needs a Chrome/Chromium; the figure's toolbar still offers a download).
    Drawn once per content and by one engine at a time (:func:`figure_images`)."""
    if fmt not in ("png", "svg"):
        raise ValueError("fmt must be 'png' or 'svg'")
    out = figure_images([fig], fmt, scale)
    return None if out is None else out[0]


PRINT_CSS = (
    "@page{size:A4;margin:12mm}"
    "@media print{html{zoom:.9}body{max-width:none;margin:0;font-size:10pt}"
    "h1{font-size:15pt}h2{font-size:12pt;margin:.6em 0 .2em}"
    ".figure,table,.fields{break-inside:avoid;page-break-inside:avoid}"
    ".figure img,.figure svg{width:100%!important;height:auto!important}"
    ".js-plotly-plot,.plot-container,.svg-container{width:100%!important}"
    "table{font-size:8.5pt}td,th{padding:0 4px}p{margin:.3em 0}"
    "input,textarea{border:none;border-bottom:1px solid gray}}"
    ".figure img{max-width:100%;height:auto}"
    ".modebar-container{display:none!important}"  # no chart toolbar in a document
    ".fields label{display:block;font-weight:bold;margin-top:.4em}"
    ".fields input,.fields textarea{width:100%;box-sizing:border-box;font:inherit;padding:3px}"
)
"""Print rules of :func:`html_report`: A4 with 12 mm margins, the page drawn at 90 % so a case
report (settings, two figures, a table) fits one sheet; figures scaled to the page width (no
clipped legend or axis) and never split across pages."""

FIGURE_MODES = ("interactive", "static", "cdn")


class Html(str):
    """Text that :func:`html_report` inserts as HTML, unescaped: only for HTML built from
    escaped text (:func:`bnma_core.handouts.markdown_html`)."""


def html_report(title: str, sections: Iterable[tuple[str, Any]],
                settings: Mapping[str, Any] | None = None,
                fields: Mapping[str, str] | None = None, figures: str = "interactive",
                print_width: int | None = None) -> str:
    """One self-contained HTML page that prints on A4 without clipping (:data:`PRINT_CSS`).

    Parameters
    ----------
    title : str
    sections : iterable of (heading, content)
        ``content`` is a plotly figure, a DataFrame (rendered as a table), :class:`Html`
        (inserted as it is: HTML its maker has escaped, e.g. :func:`bnma_core.handouts.
        markdown_html`), or text (paragraphs separated by blank lines; HTML-escaped).
    settings : mapping, optional
        The run's settings, shown first as a table with the date, Python and platform.
    fields : mapping, optional
        Label -> initial text of fields the reader fills in (e.g. a patient identifier and
        notes): shown first, editable in the browser and printed with what was typed. A label
        containing "notes" is a multi-line box.
    figures : {"interactive", "static", "cdn"}
        "interactive": plotly.js embedded once for all figures (about 4.6 MB, opens offline);
        "static": every figure as an inline SVG drawn by kaleido at ``print_width`` px (a few
        tens of kB each, prints exactly as shown), falling back to "interactive" when no
        image engine is installed; "cdn": plotly.js loaded from the internet when opened.
    print_width : int, optional
        Width in pixels of the figures (default: 700 for static ones, which fits A4's printable
        width; interactive ones keep their own unless given).
    """
    if figures not in FIGURE_MODES:
        raise ValueError(f"figures must be one of {', '.join(FIGURE_MODES)} (got {figures!r}).")
    parts = [f"<h1>{html.escape(title)}</h1>"]
    if fields:
        boxes = []
        for i, (label, text) in enumerate(fields.items()):
            lab = html.escape(str(label))
            val = html.escape(str(text or ""))
            if "notes" in str(label).lower():
                boxes.append(f"<label for='field{i}'>{lab}</label>"
                             f"<textarea id='field{i}' rows='3'>{val}</textarea>")
            else:
                boxes.append(f"<label for='field{i}'>{lab}</label>"
                             f"<input id='field{i}' type='text' value='{val}'>")
        parts.append(f"<div class='fields'>{''.join(boxes)}</div>")
    meta = {"created": _dt.datetime.now().isoformat(timespec="seconds"),
            "python": platform.python_version(), "platform": platform.platform()}
    rows = {**dict(settings or {}), **meta}
    parts.append("<h2>Settings</h2>" + pd.Series({k: str(v) for k, v in rows.items()},
                                                  name="value").to_frame().to_html())
    plotly_included = False
    sections = list(sections)
    svgs: list = []
    if figures == "static":  # every figure in one call: the image engine starts once
        figs = [with_margins(c).update_layout(width=print_width or 700) for _, c in sections
                if _is_figure(c)]
        svgs = figure_images(figs, "svg") if figs else []
        if svgs is None:
            figures = "interactive"
    svg_iter = iter(svgs or [])
    for heading, content in sections:
        parts.append(f"<h2>{html.escape(str(heading))}</h2>")
        if _is_figure(content):
            if figures == "static":
                text, embedded = _svg_html(next(svg_iter)), False
            else:
                text, embedded = _figure_html(content, figures, print_width,
                                              not plotly_included)
            parts.append(f"<div class='figure'>{text}</div>")
            plotly_included = plotly_included or embedded
        elif isinstance(content, Html):
            parts.append(str(content))
        elif isinstance(content, pd.DataFrame | pd.Series):
            frame = content.to_frame() if isinstance(content, pd.Series) else content
            parts.append(frame.to_html(float_format=lambda x: f"{x:.4g}"))
        else:
            parts += [f"<p>{html.escape(p)}</p>" for p in str(content).split("\n\n") if p]
    style = ("body{font-family:sans-serif;max-width:1100px;margin:2em auto;color:#222}"
             "table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:2px 6px}"
             + PRINT_CSS)
    return (f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>{html.escape(title)}"
            f"</title><style>{style}</style></head><body>{''.join(parts)}</body></html>")


def with_margins(fig: Any) -> Any:
    """A copy of ``fig`` whose axes make room for their tick labels and titles (plotly's
    ``automargin``) whatever template it was built with: Streamlit's plotly template, the
    default in the dashboard's process, leaves it off, so a figure exported from the server
    had its axis title drawn over its tick labels and long category names cut at the edge
    (DESIGN §7). Every export (SVG, PNG, HTML) passes here, so here too any
    ``<a href>`` left in the figure's text is made literal (:func:`bnma_core.markup.
    without_links`, DESIGN §7): no live link in a downloaded figure or report."""
    out = type(fig)(without_links(fig))
    if hasattr(out, "update_xaxes"):
        out.update_xaxes(automargin=True)
        out.update_yaxes(automargin=True)
    return out


def _is_figure(content: Any) -> bool:
    return hasattr(content, "to_html") and hasattr(content, "layout")


def _svg_html(svg: bytes) -> str:
    text = svg.decode("utf-8")
    return text[text.index("<svg"):] if "<svg" in text else text


IMAGE_CACHE_BYTES = 32 * 2 ** 20
"""Memory kept by the cache of drawn figures (:func:`figure_images`): the most recently used
images up to this many bytes."""

_ENGINE = threading.Lock()  # one kaleido (one Chromium and its helpers) at a time
_IMAGES: OrderedDict[str, bytes] = OrderedDict()
_IMAGES_LOCK = threading.Lock()


def _image_key(fig: Any, fmt: str, scale: float, width: int, height: int) -> str:
    """The content of a drawing: the figure's JSON, format, scale and size."""
    text = fig.to_json() if hasattr(fig, "to_json") else repr(fig)
    return hashlib.sha256(f"{fmt}|{scale}|{width}|{height}|{text}".encode()).hexdigest()


def _cached_image(key: str) -> bytes | None:
    with _IMAGES_LOCK:
        data = _IMAGES.get(key)
        if data is not None:
            _IMAGES.move_to_end(key)
        return data


def _keep_image(key: str, data: bytes) -> None:
    with _IMAGES_LOCK:
        _IMAGES[key] = data
        total = sum(len(v) for v in _IMAGES.values())
        while total > IMAGE_CACHE_BYTES and len(_IMAGES) > 1:
            total -= len(_IMAGES.popitem(last=False)[1])


def figure_images(figs: list, fmt: str = "svg", scale: float = 1.0) -> list[bytes] | None:
    """Several plotly figures as PNG or SVG bytes in one call of the image engine (kaleido
    starts its browser once: about 5 s saved per figure), or None when no engine works.

    Each drawing is kept by its content (figure JSON, format, scale, size; the most recent
    :data:`IMAGE_CACHE_BYTES`), so a case report asked for again, or by several tabs at once,
    is drawn once; and one engine runs at a time in the process (a lock: requests queue), so
    four tabs clicking the case-report button start one Chromium, not four.
    """
    if fmt not in ("png", "svg"):
        raise ValueError("fmt must be 'png' or 'svg'")
    figs = [with_margins(f) for f in figs]
    sizes = [(int(f.layout.width or 700), int(f.layout.height or 500)) for f in figs]
    keys = [_image_key(f, fmt, scale, w, h) for f, (w, h) in zip(figs, sizes)]
    out = [_cached_image(k) for k in keys]
    if all(x is not None for x in out):
        return out
    with _ENGINE:
        out = [_cached_image(k) for k in keys]  # drawn meanwhile by the request ahead
        todo = [i for i, x in enumerate(out) if x is None]
        if todo:
            drawn = _draw([figs[i] for i in todo], fmt, scale, [sizes[i] for i in todo])
            if drawn is None:
                return None
            for i, data in zip(todo, drawn):
                out[i] = data
                _keep_image(keys[i], data)
    return out


DRAW_TIMEOUT_S = 60.0
"""Longest wait for one kaleido call (a case report's figures take a few seconds, Chromium's
start included). A call that has not returned by then is abandoned: the Chromium processes it
started are killed and the call is tried once more; a second failure gives no images (the
caller's fallback) instead of a request that never answers (kaleido 1.5 can wait forever on a
browser that stopped answering: seen once in CI, 15 minutes)."""


def _draw(figs: list, fmt: str, scale: float, sizes: list) -> list[bytes] | None:
    """``figs`` drawn by kaleido in one call (the caller holds the engine's lock), at most
    :data:`DRAW_TIMEOUT_S` per attempt, two attempts."""
    for _ in range(2):
        before = _browser_children()
        box: list = []
        worker = threading.Thread(target=_draw_into, args=(box, figs, fmt, scale, sizes),
                                  daemon=True, name="bnma-figure-images")
        worker.start()
        worker.join(DRAW_TIMEOUT_S)
        if not worker.is_alive():
            return box[0] if box else None
        _kill(_browser_children() - before)  # the stuck call's browser: its pipes close
        worker.join(10.0)
    return None


def _draw_into(box: list, figs: list, fmt: str, scale: float, sizes: list) -> None:
    """Append kaleido's drawings of ``figs`` (None when it fails) to ``box``."""
    box.append(_draw_once(figs, fmt, scale, sizes))


def _draw_once(figs: list, fmt: str, scale: float, sizes: list) -> list[bytes] | None:
    import tempfile
    from pathlib import Path

    try:
        import plotly.io as pio

        with tempfile.TemporaryDirectory() as tmp:
            paths = [Path(tmp) / f"figure{i}.{fmt}" for i in range(len(figs))]
            pio.write_images(figs, paths, format=fmt, scale=scale,  # the figures' own sizes
                             width=[w for w, _ in sizes], height=[h for _, h in sizes])
            return [p.read_bytes() for p in paths]
    except Exception:  # noqa: BLE001 - no kaleido / no browser: the caller falls back
        return None


def _browser_children() -> set[int]:
    """Process ids of this process's descendants that run a browser (kaleido's Chromium and
    its launcher), read from /proc (an empty set where there is none)."""
    import os

    parents: dict[int, int] = {}
    try:
        entries = [e for e in os.listdir("/proc") if e.isdigit()]
    except OSError:
        return set()
    for e in entries:
        try:
            with open(f"/proc/{e}/stat", "rb") as f:
                stat = f.read()
            parents[int(e)] = int(stat[stat.rfind(b")") + 2:].split()[1])
        except (OSError, ValueError, IndexError):
            continue
    found, frontier = set(), {os.getpid()}
    while frontier:
        frontier = {p for p, pp in parents.items() if pp in frontier and p not in found}
        found |= frontier
    out = set()
    for pid in found:
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                cmd = f.read().lower()
        except OSError:
            continue
        if b"chrom" in cmd or b"choreographer" in cmd or b"kaleido" in cmd:
            out.add(pid)
    return out


def _kill(pids: set[int]) -> None:
    import os
    import signal

    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass


def _figure_html(fig: Any, figures: str, width: int | None, first: bool) -> tuple[str, bool]:
    """One interactive figure of :func:`html_report` as HTML, and whether plotly.js was
    embedded with it (only with the first figure; "cdn" loads it from the internet)."""
    sized = with_margins(fig)
    if width:
        sized.update_layout(width=width)
    include = "cdn" if figures == "cdn" else first
    return sized.to_html(full_html=False, include_plotlyjs=include,
                         config={"displaylogo": False, "responsive": False}), include is True
