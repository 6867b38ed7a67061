"""Printable handouts of the Teach page's lessons (DESIGN §7): the lesson's text with its
Markdown rendered, its settings and the figures of what was run, as one self-contained HTML
page that prints on A4 (:func:`bnma_core.export.html_report` with static figures).

Figures are drawn as SVG at the printable width (:data:`PRINT_WIDTH`), so nothing is cropped
and no toolbar is printed; each stays on one page (``break-inside: avoid``).
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterable, Mapping
from typing import Any

from .export import Html, html_report

__all__ = ["markdown_html", "lesson_handout", "PRINT_WIDTH"]

PRINT_WIDTH = 700
"""Figure width in CSS pixels: A4's printable width (186 mm at 12 mm margins, ~703 px)."""
PRINT_HEIGHT = 340
"""Height of a figure that sets none (plotly's default, 450, left half-pages blank)."""
PRINT_MAX_HEIGHT = 600
"""A taller figure is drawn at this height (a handout page holds ~1,100 px)."""

_INLINE = [(re.compile(r"\*\*(.+?)\*\*"), r"<strong>\1</strong>"),
           (re.compile(r"(?<![\w*])\*(?!\s)(.+?)(?<!\s)\*(?![\w*])"), r"<em>\1</em>"),
           (re.compile(r"`([^`]+)`"), r"<code>\1</code>")]


def markdown_html(text: str) -> Html:
    """The small Markdown of the lessons' texts as HTML: paragraphs (blank lines), lists
    ("- " lines), ``**bold**``, ``*italic*`` and ```code```. The text is HTML-escaped first,
    so nothing in it can become markup other than these."""
    out = []
    for block in re.split(r"\n\s*\n", str(text).strip()):
        lines = block.splitlines()
        if lines and all(ln.lstrip().startswith("- ") for ln in lines):
            items = "".join(f"<li>{_inline(ln.lstrip()[2:])}</li>" for ln in lines)
            out.append(f"<ul>{items}</ul>")
        elif block.strip():
            out.append(f"<p>{_inline(' '.join(ln.strip() for ln in lines))}</p>")
    return Html("".join(out))


def _inline(text: str) -> str:
    text = html.escape(text, quote=False)
    for pattern, repl in _INLINE:
        text = pattern.sub(repl, text)
    return text


def _for_print(fig: Any) -> Any:
    """A copy of a plotly figure sized for the page: :data:`PRINT_WIDTH` wide, at most
    :data:`PRINT_MAX_HEIGHT` tall, axis margins computed from the labels."""
    out = type(fig)(fig)
    height = out.layout.height or PRINT_HEIGHT
    out.update_layout(width=PRINT_WIDTH, height=min(height, PRINT_MAX_HEIGHT))
    out.update_xaxes(automargin=True)
    out.update_yaxes(automargin=True)
    return out


_PRINT_STYLE = Html("<style>.modebar-container{display:none!important}"
                    "h2{break-after:avoid;page-break-after:avoid}</style>")
"""No plotly toolbar in print (also when figures fall back to interactive), and no heading
left alone at the foot of a page."""


def lesson_handout(title: str, text: str, settings: Mapping[str, Any],
                   sections: Iterable[tuple[str, Any]], figures: str = "static") -> str:
    """A lesson's handout: ``title``, the lesson's ``text`` (Markdown, :func:`markdown_html`),
    its ``settings`` and ``sections`` (heading, figure / table / text; text as Markdown).

    Figures are static SVG at :data:`PRINT_WIDTH` (``figures="static"``; without an image
    engine :func:`~bnma_core.export.html_report` falls back to interactive figures, then
    without their toolbar in print)."""
    body: list[tuple[str, Any]] = [("The lesson", Html(_PRINT_STYLE + markdown_html(text)))]
    for heading, content in sections:
        if isinstance(content, str) and not isinstance(content, Html):
            content = markdown_html(content)
        elif hasattr(content, "to_html") and hasattr(content, "layout"):
            content = _for_print(content)
        body.append((heading, content))
    return html_report(title, body, settings, figures=figures, print_width=PRINT_WIDTH)
