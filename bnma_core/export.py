"""Exports of what the library computes: graphs as GraphML, tables as CSV, figures as PNG / SVG
(when a static-image engine is available) and a self-contained HTML report of a run.

Every function returns bytes or text, so the CLI can write them to files and the dashboard can
offer them as downloads.
"""

from __future__ import annotations

import datetime as _dt
import html
import io
import platform
from collections.abc import Iterable, Mapping
from typing import Any

import networkx as nx
import pandas as pd

__all__ = ["graph_graphml", "table_csv", "csv_safe", "figure_image", "html_report",
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


def figure_config(filename: str) -> dict:
    """plotly config for the chart's own toolbar: "download as SVG" (vector, for papers), named
    after the figure; PNG comes from :func:`figure_image` where an engine is available."""
    return {"toImageButtonOptions": {"format": "svg", "filename": filename},
            "displaylogo": False}


def figure_image(fig: Any, fmt: str = "png", scale: float = 2.0) -> bytes | None:
    """A plotly figure as PNG or SVG bytes through kaleido, or None when no image engine is
    installed (kaleido needs a Chrome/Chromium; the figure's toolbar still offers a download)."""
    if fmt not in ("png", "svg"):
        raise ValueError("fmt must be 'png' or 'svg'")
    try:
        return fig.to_image(format=fmt, scale=scale)
    except Exception:  # noqa: BLE001 - no kaleido / no browser: the caller offers HTML instead
        return None


def html_report(title: str, sections: Iterable[tuple[str, Any]],
                settings: Mapping[str, Any] | None = None) -> str:
    """One self-contained HTML page (plotly.js embedded once, no internet needed to open it).

    Parameters
    ----------
    title : str
    sections : iterable of (heading, content)
        ``content`` is a plotly figure, a DataFrame (rendered as a table), or text (paragraphs
        separated by blank lines; HTML-escaped).
    settings : mapping, optional
        The run's settings, shown first as a table with the date, Python and platform.
    """
    parts = [f"<h1>{html.escape(title)}</h1>"]
    meta = {"created": _dt.datetime.now().isoformat(timespec="seconds"),
            "python": platform.python_version(), "platform": platform.platform()}
    rows = {**dict(settings or {}), **meta}
    parts.append("<h2>Settings</h2>" + pd.Series({k: str(v) for k, v in rows.items()},
                                                  name="value").to_frame().to_html())
    plotly_included = False
    for heading, content in sections:
        parts.append(f"<h2>{html.escape(str(heading))}</h2>")
        if hasattr(content, "to_html") and hasattr(content, "layout"):  # plotly figure
            parts.append(content.to_html(full_html=False,
                                         include_plotlyjs=not plotly_included and True))
            plotly_included = True
        elif isinstance(content, pd.DataFrame | pd.Series):
            frame = content.to_frame() if isinstance(content, pd.Series) else content
            parts.append(frame.to_html(float_format=lambda x: f"{x:.4g}"))
        else:
            parts += [f"<p>{html.escape(p)}</p>" for p in str(content).split("\n\n") if p]
    style = ("body{font-family:sans-serif;max-width:1100px;margin:2em auto;color:#222}"
             "table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:2px 6px}")
    return (f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>{html.escape(title)}"
            f"</title><style>{style}</style></head><body>{''.join(parts)}</body></html>")
