"""Building the active dataset from a :class:`~bnma_core.data.spec.DatasetSpec`, with the
server's caches, and restoring it from a page's URL (the router and the Data page share this).

The spec object (source and every reading setting) is the library's; this module adds what a
server needs: the bytes of an upload kept in the session, datasets cached by content hash and
spec (:mod:`bnma_ui.cache`), and the origin hash every shared result is keyed on
(:func:`bnma_ui.state.data_id`)."""

from __future__ import annotations

from typing import Any

import streamlit as st

from bnma_core.data import DataError
from bnma_core.data.spec import DatasetSpec

from . import cache
from .state import get_dataset, seed_widgets, set_dataset

UPLOAD_KEY = "_bnma_upload"  # (file name, bytes, content hash, file id) of the last upload
RESTORED_KEY = "_bnma_url_restored"  # the URL was read once in this session
LOST_UPLOAD_KEY = "_bnma_lost_upload"  # a link named an upload we do not have
URL_PROBLEMS_KEY = "_bnma_url_problems"  # what a restored link asked for that was not used

WIDGET_OF = {"file": "app_sample_file", "target": "app_target", "discretization": "app_disc",
             "bins": "app_bins", "missing": "app_missing", "drop": "app_drop",
             "class_bins": "app_cbins", "net": "app_network", "rows": "app_net_rows",
             "seed": "app_net_seed"}
"""Spec field -> the persistent widget key of the Data page that shows it."""

SEP_CHOICE = {None: "auto", ",": "comma", ";": "semicolon", "\t": "tab"}
"""Separator -> the Data page's option (and back: :data:`SEP_OF`)."""
DEC_CHOICE = {None: "auto", ".": "point", ",": "comma"}
SEP_OF = {v: k for k, v in SEP_CHOICE.items()}
DEC_OF = {v: k for k, v in DEC_CHOICE.items()}


def raw_bytes(spec: DatasetSpec) -> tuple[bytes | None, str]:
    """The CSV's bytes and their content hash; (None, "") for an upload not in this session
    (or a network sample)."""
    if spec.source == "bundled":
        raw = spec.path().read_bytes()
        return raw, cache.content_hash(raw)
    if spec.source == "upload":
        stored = st.session_state.get(UPLOAD_KEY)
        if stored is None:
            return None, ""
        return stored[1], stored[2]
    return None, ""


def build_dataset(spec: DatasetSpec) -> tuple[Any, str, str | None, str | None]:
    """(dataset, label, network name or None, origin) for ``spec``; the dataset is None for
    an upload that is not in this session. The dataset is cached by the file's content hash
    and the spec; the origin hashes both: the key of every result shared between sessions
    (:func:`bnma_ui.state.data_id`)."""
    spec.check()
    whole = spec.replace(keep=())  # the kept features are selected from the cached whole
    if spec.source == "network":
        bn = cache.network(spec.net)
        ds = cache.memo(cache.dataset_cache(), ("network", whole),
                        lambda: whole.build(network=bn), "Sampling from the network...")
        network, digest = spec.net, ""
    else:
        raw, digest = raw_bytes(spec)
        if raw is None:
            return None, "", None, None
        ds = cache.memo(cache.dataset_cache(), ("csv", digest, whole.replace(file=None)),
                        lambda: whole.build(raw=raw), "Reading and encoding the data...")
        network = None
    if spec.keep:
        ds = ds.select_features(list(spec.keep))
    params = sorted(spec.to_query_params().items())
    origin = cache.content_hash(repr((digest, params)).encode())
    return ds, spec.label, network, origin


def restore_from_url() -> None:
    """Once per session: rebuild the dataset named in the URL (reload or shared link) and
    preset the Data page's widgets to it. Values no widget could take are left out and said
    (:meth:`DatasetSpec.from_query_params`) before anything is built."""
    if st.session_state.get(RESTORED_KEY):
        return
    st.session_state[RESTORED_KEY] = True
    spec, problems = DatasetSpec.from_query_params(
        {k: st.query_params[k] for k in st.query_params})
    if spec is None or get_dataset() is not None:
        return
    if problems:
        st.session_state[URL_PROBLEMS_KEY] = problems
    given = {k for k in spec.__dataclass_fields__
             if getattr(spec, k) != getattr(DatasetSpec(), k)}
    values = {WIDGET_OF[k]: getattr(spec, k) for k in given if k in WIDGET_OF}
    for k in ("drop",):
        if k in values:
            values[WIDGET_OF[k]] = list(values[WIDGET_OF[k]])
    values["app_source"] = spec.source
    values["app_sep"] = SEP_CHOICE[spec.sep]
    values["app_dec"] = DEC_CHOICE[spec.decimal]
    if spec.source == "network":
        values.pop("app_target", None)
        if spec.target:
            values[f"app_net_class_{spec.net}"] = spec.target
    if spec.keep:
        values.update(app_keep_on=True, app_keep=list(spec.keep), app_keep_k=len(spec.keep))
    seed_widgets(values)
    if spec.source == "upload":
        st.session_state[LOST_UPLOAD_KEY] = spec.file or "your file"
        return
    try:
        ds, label, network, origin = build_dataset(spec)
    except DataError:
        return  # the Data page shows the problem with its widgets preset
    if ds is not None:
        set_dataset(ds, label, network, spec, origin)
