"""Saving and loading model files on the pages (DESIGN §17): a download button for the model a
page uses, an upload that reads a model file under the limits of
:func:`bnma_core.model_io.read_model` and of the server's upload size, and the provenance line
shown wherever a loaded model's predictions are.

A loaded model lives in this session's ``st.session_state`` only (never in a server-wide cache),
so it cannot reach another session.
"""

from __future__ import annotations

import hashlib
from typing import Any

import streamlit as st

from bnma_core.model_io import MAX_FILE_BYTES, ModelFileError, model_bytes, read_model

from .widgets import md_escape

_KEY = "_model_file_{}"


def upload_limit() -> int:
    """Bytes a model file may have here: the smaller of the library's limit and the server's
    upload size (``server.maxUploadSize``, MB)."""
    try:
        server = int(st.get_option("server.maxUploadSize")) * 2**20
    except (RuntimeError, TypeError, ValueError):
        server = MAX_FILE_BYTES
    return min(MAX_FILE_BYTES, server)


def provenance(info: dict) -> str:
    """One line: method, training data fingerprint and rows, seed, library version, date."""
    fp = str(info.get("data_fingerprint", "unknown"))[:12]
    return (f"Loaded model: {info.get('method_name') or info.get('method')} "
            f"({info.get('method')}), fitted on {info.get('n_rows', '?')} rows of data "
            f"{fp}, seed {info.get('seed')}, BNMA Studio {info.get('library_version')}, saved "
            f"{info.get('created')}.")


def compatibility(model_file: Any, ds: Any) -> str:
    """Why the loaded model cannot score the active data ('' when it can): the same features
    with the same states, and the same classes."""
    info = model_file.info
    if list(info.get("features", [])) != list(ds.feature_names):
        return ("The loaded model was fitted on other columns than the active data's; load "
                "the data it was fitted on (or data with the same columns).")
    if [list(s) for s in info.get("feature_states", [])] != [list(s) for s in
                                                              ds.feature_states]:
        return ("The loaded model codes some column's values differently from the active data "
                "(other categories or cut points); load data read the same way.")
    if [str(c) for c in info.get("classes", [])] != [str(c) for c in ds.classes]:
        return "The loaded model predicts other classes than the active data's class column."
    return ""


def read_upload(data: bytes) -> Any:
    """A :class:`~bnma_core.model_io.ModelFile` from uploaded bytes, or a one-sentence
    :class:`~bnma_core.model_io.ModelFileError`."""
    limit = upload_limit()
    if len(data) > limit:
        raise ModelFileError(f"Not loaded: the file is {len(data) / 2**20:.0f} MB, more than "
                             f"the {limit / 2**20:.0f} MB this server accepts.")
    return read_model(data)


def panel(ds: Any, model: Any, method: str, key: str, train_rows: Any = None) -> Any:
    """Download the page's model, or upload one and use it instead.

    Returns the loaded :class:`~bnma_core.model_io.ModelFile` when one is loaded, compatible
    with ``ds`` and chosen ("Use the loaded model"), else None. The upload is read once per
    file content and kept in this session only.
    """
    slot = _KEY.format(key)
    with st.expander("Model file: save this model, or load a saved one"):
        c1, c2 = st.columns(2)
        if model is not None:
            def data() -> bytes:  # built on click only
                rows = ds if train_rows is None else ds.subset(train_rows)
                return model_bytes(model, dataset=rows, method=method)

            c1.download_button("Save this model (.bnma)", data, file_name=f"{method}.bnma",
                               mime="application/zip", key=f"{slot}_save",
                               help="A pickle-free model file: the fitted model, how the "
                                    "columns are coded and its provenance (bnma predict, "
                                    "bnma export and this page read it).")
        up = c2.file_uploader("Load a saved model", type=["bnma"], key=f"{slot}_upload")
        if up is None:
            st.session_state.pop(slot, None)
            return None
        raw = up.getvalue()
        digest = hashlib.sha256(raw).hexdigest()
        held = st.session_state.get(slot)
        if held is None or held[0] != digest:
            try:
                held = (digest, read_upload(raw), "")
            except ModelFileError as exc:
                held = (digest, None, str(exc))
            st.session_state[slot] = held
        _, mf, problem = held
        if mf is None:
            st.error(md_escape(problem))
            return None
        st.caption(md_escape(provenance(mf.info)))
        why = compatibility(mf, ds)
        if why:
            st.warning(md_escape(why))
            return None
        if not st.checkbox("Use the loaded model", value=True, key=f"{slot}_use"):
            return None
    return mf
