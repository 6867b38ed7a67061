"""Common widgets: teaching expanders, the sidebar badge of the active dataset, and every
figure drawn with its PNG / SVG download buttons (:func:`chart`)."""

from __future__ import annotations

import functools
import re
from typing import Any

import streamlit as st

from bnma_core import export
from bnma_core.markup import without_links

from .state import dataset_label, get_dataset

EXPORT_WIDTH = 1100  # px of an exported figure without its own width (the browser's is unknown)

_MARKDOWN_PUNCTUATION = re.compile(r"([!-/:-@\[-`{-~])")  # every ASCII punctuation mark


def md_escape(text: object) -> str:
    """``text`` (a file or column name, a value, a message quoting them) as Markdown that
    Streamlit shows literally: every ASCII punctuation mark backslash-escaped (CommonMark
    §2.4), so no link, image, emphasis, heading, LaTeX (``$``), HTML tag, ``:color[...]``
    directive or ``:icon:`` code is formed, and line breaks made spaces (a blank line would
    end the paragraph the text sits in). GitHub-flavoured Markdown also turns a bare
    ``http://…`` or ``www.…`` into a link whatever is escaped, so a word joiner (U+2060,
    invisible) is put inside ``://`` and after ``www``: the text reads the same, no link forms."""
    flat = re.sub(r"[\r\n]+", " ", str(text))
    flat = re.sub(r"(?i)(:)(//)|(www)(\.)", lambda m: (m.group(1) or m.group(3)) + "\u2060"
                  + (m.group(2) or m.group(4)), flat)
    return _MARKDOWN_PUNCTUATION.sub(r"\\\1", flat)


def md_code(text: object) -> str:
    """``text`` as an inline code span (shown literally, in a fixed-width font): fenced by
    more backticks than it holds in a row, line breaks made spaces."""
    flat = re.sub(r"[\r\n]+", " ", str(text))
    longest = max((len(run) for run in re.findall(r"`+", flat)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if flat.startswith("`") or flat.endswith("`") or not flat.strip() else ""
    return f"{fence}{pad}{flat}{pad}{fence}"


def method_label(code: str) -> str:
    """A method as users read it: its plain-words name with the code in brackets, e.g.
    "Order-MCMC averaging, 10 orders (bma10)" (the registry's ``display_name``); the code
    alone if it is not a registered method."""
    from bnma_core.classifiers.registry import display_name, is_method

    return f"{display_name(code)} ({code})" if is_method(code) else str(code)


def term_anchor(term: str) -> str:
    """The anchor of a Glossary term's heading (``Markov blanket`` -> ``markov-blanket``)."""
    return re.sub(r"[^a-z0-9]+", "-", term.lower()).strip("-")


GLOSSARY_PAGE = "Glossary"  # the Glossary page's URL path (pages/9_Glossary.py)


def glossary_link(term: str, text: str | None = None) -> str:
    """A Markdown link to ``term`` on the Glossary page (it opens in a new browser tab, so the
    page the user is on keeps its state). ValueError for a term the Glossary lacks."""
    from bnma_core.glossary import TERMS

    if term not in {t.name for t in TERMS}:
        raise ValueError(f"{term!r} is not a Glossary term.")
    return f"[{text or term}]({GLOSSARY_PAGE}#{term_anchor(term)})"


def glossary_help(text: str, *terms: str) -> str:
    """A widget's ``help=`` text ending with links to the Glossary ``terms``."""
    links = ", ".join(glossary_link(t) for t in terms)
    return f"{text}\n\nGlossary: {links}."


def file_rows(frame: Any, row_ids: Any) -> Any:
    """``frame`` (rows of a dataset's table) for display: indexed by the rows' numbers in the
    file (``row``, 0 = first row after the header) and a missing value shown as "missing"."""
    out = frame.astype(object).where(frame.notna(), "missing")
    out.index = [int(r) for r in row_ids]
    out.index.name = "row"
    return out


DATA_PREVIEW_KEY = "data_preview"
"""Key prefix of the containers holding rows of the user's data: their columns are the file's,
so a wide file scrolls sideways there (the browser suite's every-header-visible check exempts
them; every other table shows all its headers at 1280 px)."""


def data_rows(frame: Any, name: str, where: Any = None) -> None:
    """Rows of the user's data (from :func:`file_rows`) across the container, in a container
    keyed ``data_preview_<name>`` (:data:`DATA_PREVIEW_KEY`)."""
    where = st if where is None else where
    where.container(key=f"{DATA_PREVIEW_KEY}_{name}").dataframe(frame, width="stretch")


def what_am_i_looking_at(markdown: str) -> None:
    """The plain-language explanation of a page (collapsed by default)."""
    with st.expander("What am I looking at?"):
        st.markdown(markdown)


def equations(markdown: str) -> None:
    """The formulas a page implements (markdown with ``$...$`` / ``$$...$$`` LaTeX)."""
    with st.expander("Equations"):
        st.markdown(markdown)


def page_style() -> None:
    """The dashboard's own CSS, once per run from the router (``app.py``): the chart toolbar
    on hover only (:data:`bnma_core.export.MODEBAR_CSS`), never over a chart's title or
    legend while one reads it."""
    st.html(f"<style>{export.MODEBAR_CSS}</style>")


def sidebar_dataset_badge() -> None:
    """Show which dataset is active in the sidebar of every page."""
    ds = get_dataset()
    with st.sidebar:
        if ds is None:
            st.caption("No dataset loaded.")
        else:
            st.caption(f"**Dataset:** {md_escape(dataset_label())}  \n"
                       f"{ds.n_rows} rows · {ds.n_vars - 1} features · outcome: "
                       f"{md_code(ds.class_name)} ({len(ds.classes)} classes)")


PAGE_ICONS = {  # Material Symbols (always rendered; emoji can show as empty boxes)
    "compare": ":material/compare_arrows:", "order": ":material/timeline:",
    "ukdb": ":material/person_search:", "naive": ":material/account_tree:",
    "exact": ":material/target:", "glossary": ":material/menu_book:",
    "cluster": ":material/bubble_chart:", "report": ":material/description:",
    "teach": ":material/school:", "patient": ":material/stethoscope:",
}
DEFAULT_PAGE_ICON = ":material/analytics:"


DATA_PAGE = "pages/0_Data.py"
"""The Data page: the first entry of the navigation and the page opened at the app's root."""


def page_number(path: str) -> int:
    """The number a page file's name starts with (``pages/10_X.py`` -> 10)."""
    return int(re.match(r"\d+", path.rsplit("/", 1)[-1]).group())


def page_files(folder: Any = None) -> list[str]:
    """Every page in ``pages/`` (or ``folder``) as a path relative to the app folder
    (``pages/2_X.py``), in the order of their numbers as numbers (``10_X`` after ``9_Y``;
    equal numbers by name), so a new page file appears without editing the app."""
    from pathlib import Path

    from . import ROOT

    where = ROOT / "pages" if folder is None else Path(folder)
    files = [p.name for p in where.glob("[0-9]*_*.py")]
    return [f"pages/{name}" for name in sorted(files, key=lambda n: (page_number(n), n))]


def analysis_pages() -> list[str]:
    """The pages after the Data page (:func:`page_files` without :data:`DATA_PAGE`)."""
    return [p for p in page_files() if p != DATA_PAGE]


def page_title(path: str) -> str:
    """Navigation label of a page file: ``pages/2_Order_MCMC.py`` -> ``Order MCMC``."""
    stem = path.rsplit("/", 1)[-1].removesuffix(".py")
    return stem.split("_", 1)[1].replace("_", " ") if "_" in stem else stem


def page_icon(path: str) -> str:
    """The Material icon of a page file (matched by a word of its name)."""
    low = path.lower()
    return next((icon for word, icon in PAGE_ICONS.items() if word in low), DEFAULT_PAGE_ICON)


def page_links() -> None:
    """Links to every page after the Data page."""
    pages = analysis_pages()
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
    ``name`` and PNG / SVG download buttons below it (:func:`figure_downloads`). No ``<a href>``
    in its text is drawn as a link (:func:`bnma_core.markup.without_links`, issue 36 item 5)."""
    fig = without_links(fig)
    where = st if where is None else where
    box = where.container()
    box.plotly_chart(fig, width="stretch", config=export.figure_config(_slug(name)), **kwargs)
    figure_downloads(fig, name, box)
