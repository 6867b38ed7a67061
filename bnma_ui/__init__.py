"""Helpers shared by the Streamlit pages (may import streamlit; bnma_core never does).

- :mod:`bnma_ui.state`: the active dataset in ``st.session_state``, widget values that survive
  page switches, and the "no dataset yet" guard.
- :mod:`bnma_ui.cache`: cached loading of bundled / uploaded / network-sampled data and cached
  heavy work keyed by the dataset fingerprint.
- :mod:`bnma_ui.widgets`: the teaching expanders and the sidebar dataset badge.
"""


from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]  # the app's folder (app.py, pages/)
