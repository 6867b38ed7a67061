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


def page_links() -> None:
    """Links to every page in ``pages/`` (label from the file name, e.g. 2_Order_MCMC.py)."""
    from . import ROOT

    pages = sorted((ROOT / "pages").glob("[0-9]*_*.py"))
    if not pages:
        return
    st.markdown("**Next: analyse the data**")
    for path in pages:
        label = path.stem.split("_", 1)[1].replace("_", " ")
        st.page_link(f"pages/{path.name}", label=label, icon="➡️")
