"""Common widgets: teaching expanders, the sidebar badge of the active dataset, and every
figure drawn with its PNG / SVG download buttons (:func:`chart`)."""

from __future__ import annotations

import functools
import re
from typing import Any

import streamlit as st

from bnma_core import export

from .state import dataset_label, get_dataset

EXPORT_WIDTH = 1100  # px of an exported figure without its own width (the browser's is unknown)

_MARKDOWN_PUNCTUATION = re.compile(r"([!-/:-@\[-`{-~])")  # every ASCII punctuation mark


def md_escape(text: object) -> str:
    """``text`` (a file or column name, a value, a message quoting them) as Markdown that
    Streamlit shows literally: every ASCII punctuation mark backslash-escaped (CommonMark
    §2.4), so no link, image, emphasis, heading, LaTeX (``$``), HTML tag, ``:color[...]``
    directive or ``:icon:`` code is formed, and line breaks made spaces (a blank line would
    end the paragraph the text sits in)."""
    flat = re.sub(r"[\r\n]+", " ", str(text))
    return _MARKDOWN_PUNCTUATION.sub(r"\\\1", flat)


def md_code(text: object) -> str:
    """``text`` as an inline code span (shown literally, in a fixed-width font): fenced by
    more backticks than it holds in a row, line breaks made spaces."""
    flat = re.sub(r"[\r\n]+", " ", str(text))
    longest = max((len(run) for run in re.findall(r"`+", flat)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if flat.startswith("`") or flat.endswith("`") or not flat.strip() else ""
    return f"{fence}{pad}{flat}{pad}{fence}"


def what_am_i_looking_at(markdown: str) -> None:
    """The plain-language explanation of a page (collapsed by default)."""
    with st.expander("What am I looking at?"):
        st.markdown(markdown)


def equations(markdown: str) -> None:
    """The formulas a page implements (markdown with ``$...$`` / ``$$...$$`` LaTeX)."""
    with st.expander("Equations"):
        st.markdown(markdown)


def sidebar_dataset_badge() -> None:
    """Show which dataset is active in the sidebar of every page."""
    ds = get_dataset()
    with st.sidebar:
        if ds is None:
            st.caption("No dataset loaded.")
        else:
            st.caption(f"**Dataset:** {md_escape(dataset_label())}  \n"
                       f"{ds.n_rows} rows · {ds.n_vars - 1} features · class "
                       f"{md_code(ds.class_name)} ({len(ds.classes)} classes)")


PAGE_ICONS = {  # Material Symbols (always rendered; emoji can show as empty boxes)
    "compare": ":material/compare_arrows:", "order": ":material/timeline:",
    "ukdb": ":material/person_search:", "naive": ":material/account_tree:",
    "exact": ":material/target:", "glossary": ":material/menu_book:",
    "cluster": ":material/bubble_chart:", "report": ":material/description:",
}
DEFAULT_PAGE_ICON = ":material/analytics:"


def page_files() -> list[str]:
    """Every page in ``pages/`` as a path relative to the app folder (``pages/2_X.py``), in
    the order of their numbers, so a new page file appears without editing the app."""
    from . import ROOT

    return [f"pages/{p.name}" for p in sorted((ROOT / "pages").glob("[0-9]*_*.py"))]


def page_title(path: str) -> str:
    """Navigation label of a page file: ``pages/2_Order_MCMC.py`` -> ``Order MCMC``."""
    stem = path.rsplit("/", 1)[-1].removesuffix(".py")
    return stem.split("_", 1)[1].replace("_", " ") if "_" in stem else stem


def page_icon(path: str) -> str:
    """The Material icon of a page file (matched by a word of its name)."""
    low = path.lower()
    return next((icon for word, icon in PAGE_ICONS.items() if word in low), DEFAULT_PAGE_ICON)


def page_links() -> None:
    """Links to every page in ``pages/``."""
    pages = page_files()
    if not pages:
        return
    st.markdown("**Next: analyse the data**")
    for path in pages:
        st.page_link(path, label=page_title(path), icon=page_icon(path))


@functools.lru_cache(maxsize=1)
def image_export_problem() -> str | None:
    """Why figures cannot be written as PNG / SVG on this server, else None.

    kaleido 1.x draws the figure in a Chrome or Chromium it finds on the server (Debian:
    ``apt-get install chromium``); without one the buttons are replaced by a plain note."""
    try:
        import kaleido  # noqa: F401
    except ImportError:
        return "the kaleido package is not installed (pip install kaleido)"
    try:
        from choreographer.browsers.chromium import Chromium

        found = Chromium.find_browser(skip_local=False)
    except Exception:  # noqa: BLE001 - choreographer's lookup moved: let kaleido try
        return None
    if not found:
        return "no Chrome or Chromium browser was found on the server (apt-get install chromium)"
    return None


def _slug(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_-]+", "_", name).strip("_") or "figure"


def figure_bytes(fig: Any, fmt: str) -> bytes:
    """The figure as PNG (2x scale) or SVG, at :data:`EXPORT_WIDTH` px unless it sets its own
    width (through :func:`bnma_core.export.figure_image`). Raises ``RuntimeError`` with a plain
    message when the image engine fails."""
    out = fig
    if fig.layout.width is None:
        out = type(fig)(fig).update_layout(width=EXPORT_WIDTH)
    data = export.figure_image(out, fmt, scale=2.0 if fmt == "png" else 1.0)
    if data is None:
        raise RuntimeError(f"the figure could not be written as {fmt.upper()} (kaleido failed)")
    return data


def figure_downloads(fig: Any, name: str, where: Any = None) -> None:
    """PNG and SVG download buttons for ``fig`` (files ``name.png`` / ``name.svg``), built
    only when clicked; where no image engine exists, a caption says why instead."""
    where = st if where is None else where
    problem = image_export_problem()
    if problem is not None:
        where.caption(f"PNG / SVG download unavailable: {problem}. The chart's toolbar "
                      "(camera icon, top right) still saves an SVG.")
        return
    slug = _slug(name)
    row = where.container(horizontal=True, gap="small")
    for fmt, mime in (("png", "image/png"), ("svg", "image/svg+xml")):
        row.download_button(
            fmt.upper(), functools.partial(figure_bytes, fig, fmt), f"{slug}.{fmt}", mime,
            on_click="ignore", icon=":material/download:", key=f"fig_{slug}_{fmt}",
            type="tertiary", help=f"Download this figure as {fmt.upper()}"
            + (" (image, 2x resolution)." if fmt == "png" else " (vector, for papers)."))


def chart(fig: Any, name: str, where: Any = None, **kwargs: Any) -> None:
    """Draw a plotly figure across its container, with the toolbar's SVG download named
    ``name`` and PNG / SVG download buttons below it (:func:`figure_downloads`)."""
    where = st if where is None else where
    box = where.container()
    box.plotly_chart(fig, width="stretch", config=export.figure_config(_slug(name)), **kwargs)
    figure_downloads(fig, name, box)
