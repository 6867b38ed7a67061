"""The active dataset and persistent widget values in ``st.session_state``."""

from __future__ import annotations

import hashlib
import weakref
from typing import Any

import pandas as pd
import streamlit as st

from bnma_core.data import DiscreteDataset
from bnma_core.data.spec import DatasetSpec

DATASET_KEY = "bnma_dataset"
DATASET_LABEL_KEY = "bnma_dataset_label"
DATASET_NETWORK_KEY = "bnma_dataset_network"
_PERSIST_KEY = "_bnma_persist"


DATASET_SPEC_KEY = "bnma_dataset_spec"
DATASET_ORIGIN_KEY = "bnma_dataset_origin"  # hash of the raw data + every setting that built it
DATA_PAGE_KEY = "_bnma_data_page"  # the Data page object of st.navigation (set by app.py)


def write_url(spec: DatasetSpec | None) -> None:
    """Put the dataset choice into the page's URL, so a reload or a shared link restores it
    (:meth:`~bnma_core.data.spec.DatasetSpec.to_query_params`)."""
    if spec is None:
        return
    params = spec.to_query_params()
    if {k: st.query_params[k] for k in st.query_params} != params:
        st.query_params.from_dict(params)


def set_dataset(ds: DiscreteDataset, label: str, network: str | None = None,
                spec: DatasetSpec | None = None, origin: str | None = None) -> None:
    """Make ``ds`` the dataset every page uses; ``label`` says where it came from,
    ``network`` names the bundled network it was sampled from (if any) and ``spec`` is the
    choice that rebuilds it (written into the URL). ``origin`` identifies the raw data and
    every setting that built ``ds`` (a hash); without it the dataset's content is hashed,
    raw values included (:func:`content_id`)."""
    st.session_state[DATASET_KEY] = ds
    st.session_state[DATASET_LABEL_KEY] = label
    st.session_state[DATASET_NETWORK_KEY] = network
    st.session_state[DATASET_SPEC_KEY] = spec
    st.session_state[DATASET_ORIGIN_KEY] = (weakref.ref(ds), origin or content_id(ds))
    write_url(spec)


def content_id(ds: DiscreteDataset) -> str:
    """A hash of everything a result computed from ``ds`` may depend on: the codes, names and
    states (:meth:`DiscreteDataset.fingerprint`), the raw values (cross-validation refits the
    bins on them) and the encoder's settings and cut points."""
    h = hashlib.sha256(ds.fingerprint().encode())
    if ds.raw is not None:
        h.update(repr(list(ds.raw.columns)).encode())
        h.update(pd.util.hash_pandas_object(ds.raw.astype(object), index=False)
                 .to_numpy().tobytes())
    enc = ds.encoder
    if enc is not None:
        h.update(repr((enc.discretization, enc.n_bins, enc.cut_points,
                       enc.max_int_categories)).encode())
        for c in enc.columns_:
            h.update(repr((c.name, c.kind, c.states,
                           None if c.cuts is None else c.cuts.tolist())).encode())
    return h.hexdigest()


def data_id(ds: DiscreteDataset) -> str:
    """The key under which results computed from ``ds`` are shared between sessions: the
    active dataset's origin (the raw data and every setting that built it, see
    :func:`set_dataset`) together with ``ds``'s own fingerprint (a page may use a part of the
    active dataset, e.g. fewer features). Two sessions get the same key only for the same
    data read the same way."""
    active = get_dataset()
    origin = st.session_state.get(DATASET_ORIGIN_KEY)
    if active is None:
        return content_id(ds)
    if origin is None or origin[0]() is not active:  # set without an origin (or replaced)
        origin = (weakref.ref(active), content_id(active))
        st.session_state[DATASET_ORIGIN_KEY] = origin
    return hashlib.sha256(f"{origin[1]}:{ds.fingerprint()}".encode()).hexdigest()


def dataset_spec() -> DatasetSpec | None:
    """The choice that built the active dataset."""
    return st.session_state.get(DATASET_SPEC_KEY)


def clear_dataset() -> None:
    for key in (DATASET_KEY, DATASET_LABEL_KEY, DATASET_NETWORK_KEY, DATASET_SPEC_KEY,
                DATASET_ORIGIN_KEY):
        st.session_state.pop(key, None)


def seed_widgets(values: dict[str, Any]) -> None:
    """Preset the values :func:`persistent` widgets start from (e.g. restored from a URL)."""
    st.session_state.setdefault(_PERSIST_KEY, {}).update(values)


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
        st.warning("No dataset is loaded yet. Choose one on the Data page first; "
                   "this page will then use it.")
        st.page_link(st.session_state.get(DATA_PAGE_KEY, "app.py"),
                     label="Go to the Data page", icon=":material/table_view:")
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
