"""Glossary: the words the dashboard uses, in plain language, each with its formula."""

from __future__ import annotations

import streamlit as st

st.set_page_config(page_title="Glossary · BNMA Studio", page_icon=":material/menu_book:",
                   layout="wide")

from bnma_core.glossary import TERMS  # noqa: E402
from bnma_ui.widgets import md_escape  # noqa: E402

st.title("Glossary")
st.caption("The words used across BNMA Studio, in plain language. Open a term's formula for "
           "the mathematics; docs/DESIGN.md in the repository has the full notation.")
query = st.text_input("Find a term", placeholder="e.g. Markov blanket",
                      help="Filters the list by the term's name and explanation.")
shown = [t for t in TERMS if not query or query.lower() in (t.name + " " + t.plain).lower()]
if not shown:
    st.info(f"No term matches {md_escape(repr(query))}.")
for term in shown:
    st.subheader(term.name)
    st.markdown(term.plain)
    if term.formula:
        with st.expander("Formula"):
            st.markdown(term.formula)
