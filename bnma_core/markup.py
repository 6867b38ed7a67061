"""User text inside plotly figures, shown as typed and never as a link (DESIGN §7).

plotly.js reads a small HTML subset in every text it draws (titles, tick labels, legend names,
hover text, annotations): ``<br>``, ``<b>``, ``<i>``, ``<sup>``, ``<sub>``, ``<span>`` and
``<a href>``, the last a live link, also inside an exported SVG (``xlink:href``). A column, class,
method or data set name comes from an upload, so it goes through :func:`plain` before it enters a
figure (its ``&``, ``<`` and ``>`` become entities: plotly shows them literally and parses no tag);
and every figure shown or exported goes through :func:`without_links`, which neutralises any
``<a`` tag left by a builder that forgot :func:`plain`, keeping the figures' own markup.
"""
from __future__ import annotations

import re
from typing import Any

import numpy as np

__all__ = ["plain", "plain_all", "without_links", "has_link"]

_ANCHOR = re.compile(r"<(?=\s*/?\s*a(?![\w-]))", re.IGNORECASE)
"""The ``<`` of an opening or closing ``a`` tag as plotly.js would read it (case, spaces)."""


def plain(text: Any) -> str:
    """``text`` as a string plotly draws literally: ``&``, ``<``, ``>`` as HTML entities.

    Parameters
    ----------
    text : any
        A user-provided name (column, state, class, method, data set); ``str(text)`` is used.

    Returns
    -------
    str
        Text with no ``<`` left, so no tag (``<a href>``, ``<b>``, ``<br>``) is parsed; plotly
        turns the entities back into the characters typed. Apply once: a second call shows
        ``&amp;lt;``.
    """
    return str(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def plain_all(texts: Any) -> list[str]:
    """:func:`plain` of every item of ``texts`` (names of columns, classes, methods)."""
    return [plain(t) for t in texts]


def _unlinked(value: Any) -> tuple[Any, bool]:
    """``value`` (plotly JSON: dicts, lists, arrays, strings) with every ``<a`` tag's ``<`` as
    ``&lt;``, and whether anything changed."""
    if isinstance(value, str):
        if "<" not in value:
            return value, False
        out = _ANCHOR.sub("&lt;", value)
        return out, out != value
    if isinstance(value, dict):
        changed = False
        out = {}
        for k, v in value.items():
            out[k], c = _unlinked(v)
            changed = changed or c
        return (out, True) if changed else (value, False)
    if isinstance(value, list | tuple):
        pairs = [_unlinked(v) for v in value]
        if any(c for _, c in pairs):
            return [v for v, _ in pairs], True
        return value, False
    if isinstance(value, np.ndarray) and value.dtype.kind in "OUS":
        items, changed = _unlinked(value.tolist())
        return (np.asarray(items, dtype=object), True) if changed else (value, False)
    return value, False


def has_link(fig: Any) -> bool:
    """Whether plotly would draw a link (an ``<a`` tag) anywhere in ``fig``'s text."""
    return _unlinked(fig.to_plotly_json())[1]


def without_links(fig: Any) -> Any:
    """``fig`` with no ``<a`` tag left in any of its strings (the ``<`` becomes ``&lt;``, so the
    tag shows as typed): the defensive pass applied to every figure shown (``bnma_ui.widgets.
    chart``) or exported (:func:`bnma_core.export.with_margins`). The figures' own markup
    (``<br>``, ``<b>``, ``<i>``, ``<sup>``, ``<sub>``) is kept. Returns ``fig`` itself when it
    holds no link, else a new figure of the same type."""
    if not hasattr(fig, "to_plotly_json"):
        return fig
    spec, changed = _unlinked(fig.to_plotly_json())
    if not changed:
        return fig
    frames = spec.get("frames") if isinstance(spec, dict) else None
    out = type(fig)(data=spec.get("data"), layout=spec.get("layout"),
                    frames=frames or None, skip_invalid=True)
    return out
