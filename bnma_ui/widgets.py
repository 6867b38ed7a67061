"""Common widgets: teaching expanders and the sidebar badge of the active dataset."""

from __future__ import annotations

import streamlit as st

from .state import dataset_label, get_dataset


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
            st.caption(f"**Dataset:** {dataset_label()}  \n"
                       f"{ds.n_rows} rows · {ds.n_vars - 1} features · class "
                       f"`{ds.class_name}` ({len(ds.classes)} classes)")


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
