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

import numpy as np
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


def held_upload(up: Any, slot: str) -> tuple[Any, str]:
    """(model file, '') or (None, one sentence) for the uploaded file ``up``, read once per
    file content and kept under ``slot`` in this session's state only."""
    raw = up.getvalue()
    digest = hashlib.sha256(raw).hexdigest()
    held = st.session_state.get(slot)
    if held is None or held[0] != digest:
        try:
            held = (digest, read_upload(raw), "")
        except ModelFileError as exc:
            held = (digest, None, str(exc))
        st.session_state[slot] = held
    return held[1], held[2]


def comparison_model_bytes(ds: Any, method: str, seed: int, preds: Any) -> bytes:
    """The model file of one method of a finished comparison: ``method`` fitted on every row
    of ``ds`` with the comparison's seed (as ``bnma fit --seed``), holding the comparison's
    out-of-fold predictions of that method as its development predictions (as
    ``bnma fit --cv-folds``; the development column of the external validation, DESIGN §17)."""
    from dataclasses import replace

    from bnma_core.classifiers.registry import fit_method, get_spec

    params = {"random_state": int(seed)} if get_spec(method).randomized else {}
    model = fit_method(method, ds, **params)
    development = replace(preds, proba={method: preds.proba[method]})
    return model_bytes(model, dataset=ds, method=method, development=development)


def validation_inputs(model_file: Any, ds: Any) -> tuple[Any, Any]:
    """The model file and frame that :mod:`bnma_core.validation` validates on the active data
    ``ds`` (compatible: :func:`compatibility` is ''): ``ds``'s state labels, read through the
    states the model file names (the same codes as ``ds``, also for cut continuous columns)."""
    from dataclasses import replace

    return replace(model_file, encoder=None), ds.to_frame()


def external_validation(model_file: Any, ds: Any, *, n_bootstrap: int | None = None,
                        seed: int = 0) -> tuple[Any, Any]:
    """The external validation of ``model_file`` on ``ds`` as the page shows it: the table of
    discrimination and accuracy (pooled, 95 % intervals; the development out-of-fold column
    beside it when the file holds it) and the CORP reliability figure of both, from the
    library calls :func:`bnma_core.validation.external_validation_report` makes (its first
    table and its reliability section)."""
    from bnma_core.evaluation import CVPredictions
    from bnma_core.metrics import N_BOOTSTRAP
    from bnma_core.scoring import case_codes
    from bnma_core.validation import _side_by_side
    from bnma_core.viz.calibration import reliability_figure

    mf, frame = validation_inputs(model_file, ds)
    codes, _ = case_codes(mf, frame)
    est = mf.estimator
    val = CVPredictions(np.asarray(ds.y), [str(c) for c in est.classes_],
                        {"validation": est.predict_proba(codes)},
                        folds=np.zeros(len(ds.y), dtype=np.int64), class_name=ds.class_name)
    boot = dict(n_bootstrap=int(n_bootstrap or N_BOOTSTRAP), seed=int(seed))
    dev = mf.development
    table = _side_by_side(None if dev is None else dev.metric_intervals(**boot),
                          val.metric_intervals(**boot), "metric")
    classes = val.classes
    pos = classes[1] if len(classes) == 2 else None
    curves, decomp, _ = val.reliability(positive=pos)
    if dev is not None:
        dcurves, ddecomp, _ = dev.reliability(positive=pos)
        curves = {"development (out-of-fold)": next(iter(dcurves.values())),
                  "validation": curves["validation"]}
        decomp = {"development (out-of-fold)": next(iter(ddecomp.values())),
                  "validation": decomp["validation"]}
    return table, reliability_figure(curves, decomp)


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
        mf, problem = held_upload(up, slot)
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
