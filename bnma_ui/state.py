"""The active dataset and persistent widget values in ``st.session_state``."""

from __future__ import annotations

import hashlib
import weakref
from typing import Any

import pandas as pd
import streamlit as st

from bnma_core.data import DiscreteDataset

DATASET_KEY = "bnma_dataset"
DATASET_LABEL_KEY = "bnma_dataset_label"
DATASET_NETWORK_KEY = "bnma_dataset_network"
_PERSIST_KEY = "_bnma_persist"


DATASET_SPEC_KEY = "bnma_dataset_spec"
DATASET_ORIGIN_KEY = "bnma_dataset_origin"  # hash of the raw data + every setting that built it
DATA_PAGE_KEY = "_bnma_data_page"  # the Data page object of st.navigation (set by app.py)

SPEC_FIELDS: dict[str, type] = {
    "src": str, "file": str, "target": str, "disc": str, "bins": int, "missing": str,
    "sep": str, "dec": str, "drop": list, "cbins": int, "keep": list,
    "net": str, "rows": int, "seed": int, "cls": str}
"""The dataset choice as plain values (also the page URL's query parameters, DESIGN §7):
source (``bundled`` / ``network`` / ``upload``), the file, class column, binning, missing
policy, separator and decimal mark (``auto`` = detect), columns left out, class bins, the
features kept, and for a network sample its name, rows, seed and class variable."""


def spec_to_params(spec: dict[str, Any]) -> dict[str, str]:
    """A dataset spec as URL query parameters (lists joined by commas; empty values left
    out)."""
    out = {}
    for k, v in spec.items():
        if k not in SPEC_FIELDS or v is None or v == "" or v == [] or v == ():
            continue
        out[k] = ",".join(map(str, v)) if isinstance(v, (list, tuple)) else str(v)
    return out


def spec_from_params(params: Any) -> dict[str, Any] | None:
    """The dataset spec in query parameters (``st.query_params`` or a dict), or None when
    they hold none. A number that does not parse is kept as its text, for the caller to
    refuse with a message (``app.checked_spec``, against the widgets' ranges)."""
    if "src" not in params or params["src"] not in ("bundled", "network", "upload"):
        return None
    spec: dict[str, Any] = {}
    for k, kind in SPEC_FIELDS.items():
        if k not in params:
            continue
        v = params[k]
        if kind is int:
            try:
                spec[k] = int(v)
            except ValueError:
                spec[k] = str(v)
        elif kind is list:
            spec[k] = [t for t in str(v).split(",") if t]
        else:
            spec[k] = str(v)
    return spec


def write_url(spec: dict[str, Any] | None) -> None:
    """Put the dataset choice into the page's URL, so a reload or a shared link restores it."""
    if spec is None:
        return
    params = spec_to_params(spec)
    if {k: st.query_params[k] for k in st.query_params} != params:
        st.query_params.from_dict(params)


def set_dataset(ds: DiscreteDataset, label: str, network: str | None = None,
                spec: dict[str, Any] | None = None, origin: str | None = None) -> None:
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


def dataset_spec() -> dict[str, Any] | None:
    """The choice that built the active dataset (see :data:`SPEC_FIELDS`)."""
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
