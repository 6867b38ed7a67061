"""BNMA Studio dashboard: the router.

Run with ``streamlit run app.py``. This file restores the dataset a link names (once per
session, :func:`bnma_ui.data.restore_from_url`), keeps the dataset choice in the URL on every
page, and lists the pages with ``st.navigation``: the Data page (``pages/0_Data.py``) first and
at the app's root, then every other page of ``pages/`` in the order of its number
(:func:`bnma_ui.widgets.page_files`), so a new page file appears without editing this file.
"""

from __future__ import annotations

import streamlit as st

import bnma_ui.background  # noqa: F401  (one session-state lock for all script runs of a session)
from bnma_ui.data import LOST_UPLOAD_KEY, restore_from_url
from bnma_ui.state import DATA_PAGE_KEY, dataset_spec, get_dataset, write_url
from bnma_ui.widgets import DATA_PAGE, analysis_pages, page_icon, page_style, page_title

st.set_page_config(page_title="BNMA Studio", page_icon=":material/hub:", layout="wide")
page_style()

restore_from_url()
write_url(dataset_spec())  # a page switch starts from a bare URL: keep the choice in it
data = st.Page(DATA_PAGE, title="Data", icon=":material/table_view:", default=True)
st.session_state[DATA_PAGE_KEY] = data
pages = [data] + [st.Page(path, title=page_title(path), icon=page_icon(path))
                  for path in analysis_pages()]
if st.session_state.get(LOST_UPLOAD_KEY) and get_dataset() is None:
    st.sidebar.warning("The link named an uploaded file, which cannot be restored from a "
                       "link: upload it again on the Data page.")
st.navigation(pages).run()
