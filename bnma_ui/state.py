"""The active dataset and persistent widget values in ``st.session_state``."""

from __future__ import annotations

from typing import Any

import streamlit as st

from bnma_core.data import DiscreteDataset

DATASET_KEY = "bnma_dataset"
DATASET_LABEL_KEY = "bnma_dataset_label"
DATASET_NETWORK_KEY = "bnma_dataset_network"
_PERSIST_KEY = "_bnma_persist"


def set_dataset(ds: DiscreteDataset, label: str, network: str | None = None) -> None:
    """Make ``ds`` the dataset every page uses; ``label`` says where it came from and
    ``network`` names the bundled network it was sampled from (if any)."""
    st.session_state[DATASET_KEY] = ds
    st.session_state[DATASET_LABEL_KEY] = label
    st.session_state[DATASET_NETWORK_KEY] = network


def clear_dataset() -> None:
    for key in (DATASET_KEY, DATASET_LABEL_KEY, DATASET_NETWORK_KEY):
        st.session_state.pop(key, None)


def dataset_network() -> str | None:
    """Name of the bundled network the active dataset was sampled from, else None."""
    return st.session_state.get(DATASET_NETWORK_KEY)


def get_dataset() -> DiscreteDataset | None:
    return st.session_state.get(DATASET_KEY)


def dataset_label() -> str:
    return st.session_state.get(DATASET_LABEL_KEY, "")


def require_dataset() -> DiscreteDataset:
    """The active dataset; without one, say so, link back to the data page and stop the page."""
    ds = get_dataset()
    if ds is None:
        st.warning("No dataset is loaded yet. Choose one on the data page first; "
                   "this page will then use it.")
        st.page_link("app.py", label="Go to the data page", icon="📂")
        st.stop()
    return ds


def persistent(key: str, default: Any, options: list | None = None) -> str:
    """Widget key whose value survives switching to another page and back.

    Streamlit forgets a widget's state when a page without that widget runs. Call this before
    creating the widget (``st.selectbox(..., key=persistent("k", default))``, without passing a
    default value to the widget) and :func:`remember` after it. With ``options``, a value that
    is no longer among them (e.g. another file's columns) falls back to ``default``.
    """
    store = st.session_state.setdefault(_PERSIST_KEY, {})
    if key not in st.session_state:
        st.session_state[key] = store.get(key, default)
    if options is not None and st.session_state[key] not in options:
        st.session_state[key] = default
    return key


def remember(*keys: str) -> None:
    """Store the current value of widget ``keys`` for :func:`persistent`."""
    store = st.session_state.setdefault(_PERSIST_KEY, {})
    for key in keys:
        if key in st.session_state:
            store[key] = st.session_state[key]
