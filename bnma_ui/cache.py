"""Cached data loading and cached heavy work, keyed by content / dataset identity.

Streamlit hashes the arguments of a cached function; a :class:`DiscreteDataset` is passed as
``_ds`` (not hashed) together with its identity (:func:`bnma_ui.state.data_id`: the raw data
and every setting that built it, hashed), so equal data share one entry. Uploaded tables and
the datasets built from them are kept in :class:`ResultStore` s bounded by bytes and age, as
pickles (compact, sized exactly, and every session gets its own copy, as with
``st.cache_data``); a refused file is remembered too, by its content hash, so it is not read
again on every rerun.
"""

from __future__ import annotations

import hashlib
import pickle
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
import streamlit as st
from streamlit.logger import get_logger

from bnma_core.data import MIN_COMPLETE_ROWS, DataError, DiscreteDataset, load_dataset, read_table
from bnma_core.datasets import bundled_csv_files, bundled_path
from bnma_core.limits import INPUT_RANGES

if TYPE_CHECKING:
    from bnma_core.network import DiscreteBN

_LOG = get_logger("bnma_ui.cache")  # Streamlit's handler: lines reach the server log


def sample_csv_files() -> list[str]:
    """Bundled CSV files (the repository's ``sample_data/``, WBC first)."""
    return bundled_csv_files()


def sample_csv_bytes(name: str) -> bytes:
    """Content of one bundled CSV file (FileNotFoundError for any other name)."""
    return bundled_path(name).read_bytes()


def content_hash(raw: bytes) -> str:
    """SHA-256 of a file's bytes: the key of everything computed from them."""
    return hashlib.sha256(raw).hexdigest()


TABLE_CACHE_BYTES = 128 * 2**20
"""Bytes of parsed tables (an uploaded file read for its columns; pickled) kept for every
session: a 50 MB upload's table fits."""
DATASET_CACHE_BYTES = 256 * 2**20
"""Bytes of encoded datasets (from files and network samples; pickled) kept for every
session."""
DATA_CACHE_TTL = 1800.0
"""Seconds a cached table or dataset not used is kept."""


@st.cache_resource
def table_cache() -> ResultStore:
    """The server's bounded store of parsed tables (and of refused files)."""
    return ResultStore(max_entries=32, max_bytes=TABLE_CACHE_BYTES, ttl=DATA_CACHE_TTL)


@st.cache_resource
def dataset_cache() -> ResultStore:
    """The server's bounded store of encoded datasets (and of refused files and settings)."""
    return ResultStore(max_entries=32, max_bytes=DATASET_CACHE_BYTES, ttl=DATA_CACHE_TTL)


@dataclass(frozen=True)
class Refused:
    """A :class:`DataError` remembered in a cache, so the same input is refused at once."""

    message: str


@dataclass(frozen=True)
class Pickled:
    """A value kept as its pickle (made by this program from its own objects)."""

    blob: bytes


def memo(store: ResultStore, key: Any, compute: Any, spinner: str) -> Any:
    """``compute()`` kept in ``store`` under ``key`` as its pickle, sized by the pickle's
    length, or the :class:`DataError` it raised (as :class:`Refused`). A hit returns a new
    copy, which the session may change freely."""
    hit = store.get(key, _ABSENT)
    if isinstance(hit, Refused):
        raise DataError(hit.message)
    if isinstance(hit, Pickled):
        return pickle.loads(hit.blob)
    try:
        with st.spinner(spinner):
            value = compute()
    except DataError as exc:
        store.put(key, Refused(str(exc)), nbytes=len(str(exc)))
        raise
    blob = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
    store.put(key, Pickled(blob), nbytes=len(blob))
    return value


_ABSENT = object()


def csv_table(raw: bytes, sep: str | None, decimal: str | None, digest: str | None = None
              ) -> pd.DataFrame:
    """:func:`bnma_core.data.read_table` of a CSV's bytes (text values; a file too short to
    learn from is refused before it is parsed), kept by content hash + options."""
    digest = digest or content_hash(raw)
    return memo(table_cache(), (digest, sep, decimal),
                lambda: read_table(raw, sep=sep, decimal=decimal, min_rows=MIN_COMPLETE_ROWS),
                "Reading the file...")


def load_csv(raw: bytes, target: str | None, discretization: str, n_bins: int, missing: str,
             sep: str | None = None, decimal: str | None = None, drop: tuple[str, ...] = (),
             class_bins: int = 0, digest: str | None = None) -> DiscreteDataset:
    """:func:`bnma_core.data.load_dataset` on the CSV bytes, kept by content hash + options."""
    digest = digest or content_hash(raw)
    key = ("csv", digest, target, discretization, int(n_bins), missing, sep, decimal,
           tuple(drop), int(class_bins))
    return memo(dataset_cache(), key,
                lambda: load_dataset(raw, target, discretization=discretization,
                                     n_bins=n_bins, missing=missing, sep=sep, decimal=decimal,
                                     drop_columns=list(drop), class_bins=class_bins),
                "Reading and encoding the data...")


@st.cache_resource(show_spinner="Reading the network...")
def network(name: str) -> DiscreteBN:
    """A bundled network (``alarm``, ``hepar2``, ``asia``), read once per server."""
    from bnma_core.network import load_network  # imported on demand: numba start-up cost

    return load_network(name)


@st.cache_data(show_spinner="Estimating the cost of the chosen methods on these data...",
               max_entries=64)
def resource_limit(_ds: DiscreteDataset, fingerprint: str, method: str, n_models: int = 1
                   ) -> str:
    """:func:`bnma_core.classifiers.registry.resource_limit` of a registered method on the
    dataset (why it would pass its resource guard, '' if not; ``n_models`` fitted models held
    at once), cached by dataset fingerprint, method and ``n_models``: B-RAI prices its tree by
    one run of plain RAI (up to a few seconds)."""
    from bnma_core.classifiers.registry import resource_limit as limit

    return limit(method, _ds, n_models=n_models)


def sample_network(name: str, n_rows: int, seed: int, class_variable: str) -> DiscreteDataset:
    """``n_rows`` forward samples of a bundled network as a dataset, kept by its arguments;
    rows and seed outside :data:`bnma_core.limits.INPUT_RANGES` raise :class:`DataError`
    before anything is sampled."""
    for field_name, value in (("rows", n_rows), ("seed", seed)):
        problem = INPUT_RANGES[field_name].problem(value)
        if problem:
            raise DataError(problem)
    key = ("network", name, int(n_rows), int(seed), class_variable)
    return memo(dataset_cache(), key,
                lambda: network(name).sample(int(n_rows), int(seed), class_variable),
                "Sampling from the network...")


class ResultStore:
    """Finished runs shared by every session of this server, bounded so memory comes back.

    A dict-like least-recently-used store keyed by (page, dataset fingerprint, parameters):
    running the same deterministic analysis again is instant. It holds at most
    ``max_entries`` results and about ``max_bytes`` of arrays (numpy arrays and DataFrames
    reachable from an entry, measured when it is stored), and forgets an entry not used for
    ``ttl`` seconds. The oldest entries go first.
    """

    def __init__(self, max_entries: int = 16, max_bytes: int = 256 * 2**20,
                 ttl: float = 1800.0) -> None:
        self.max_entries, self.max_bytes, self.ttl = max_entries, max_bytes, ttl
        self._items: OrderedDict[Any, tuple[Any, int, float]] = OrderedDict()
        self._lock = threading.Lock()

    def _expire(self, now: float) -> None:
        for k in [k for k, (_, _, t) in self._items.items() if now - t > self.ttl]:
            del self._items[k]

    def __contains__(self, key: Any) -> bool:
        with self._lock:
            self._expire(time.time())
            return key in self._items

    def __getitem__(self, key: Any) -> Any:
        hit = self.get(key, _ABSENT)
        if hit is _ABSENT:
            raise KeyError(key)
        return hit

    def get(self, key: Any, default: Any = None) -> Any:
        """The entry under ``key``, or ``default`` when it is absent or expired: one read
        under the lock (another session may evict an entry at any time, so ``key in store``
        followed by ``store[key]`` can fail; pages call this instead)."""
        with self._lock:
            now = time.time()
            item = self._items.pop(key, None)
            if item is None or now - item[2] > self.ttl:
                return default
            self._items[key] = (item[0], item[1], now)  # most recently used last
            return item[0]

    def __setitem__(self, key: Any, value: Any) -> None:
        self.put(key, value)

    def put(self, key: Any, value: Any, nbytes: int | None = None) -> None:
        """Store ``value`` (sized by :func:`approx_nbytes` unless ``nbytes`` is given), then
        forget the oldest entries until the store is within its bounds."""
        size = approx_nbytes(value) if nbytes is None else int(nbytes)
        with self._lock:
            self._items.pop(key, None)
            if size > self.max_bytes:
                return  # too large to keep: the run stays in its own session only
            self._items[key] = (value, size, time.time())
            self._expire(time.time())
            while (len(self._items) > self.max_entries
                   or sum(s for _, s, _ in self._items.values()) > self.max_bytes):
                self._items.popitem(last=False)

    def __len__(self) -> int:
        with self._lock:
            return len(self._items)

    @property
    def nbytes(self) -> int:
        with self._lock:
            return sum(s for _, s, _ in self._items.values())

    def clear(self) -> None:
        with self._lock:
            self._items.clear()


def evict_oldest(store: dict, limit: int, keep: Any = _ABSENT) -> None:
    """Forget the oldest entries of a session's insertion-ordered ``store`` until it holds at
    most ``limit`` (``keep``, the key in use, is never forgotten).

    The keys are read once as a snapshot (``list(store)``, one step under the GIL) and popped
    with a default: Streamlit's fast reruns let a session's old script run go on while its
    new one runs the same page, and a live ``next(k for k in store ...)`` then raised
    ``RuntimeError: dictionary changed size during iteration`` (issue 36 item 6)."""
    for key in [k for k in list(store) if k != keep][:max(0, len(store) - int(limit))]:
        store.pop(key, None)


def approx_nbytes(obj: Any, _depth: int = 0, _seen: set | None = None) -> int:
    """Bytes of the numpy arrays and DataFrames reachable from ``obj`` (through dicts, lists,
    tuples and object attributes, a few levels deep): the memory a stored result pins.

    Every container is read as a snapshot (``list(d.values())``, one step under the GIL):
    the object may be shared with another thread that changes it meanwhile (a model from
    :func:`result_store` explained by another session, a partial result its worker still
    fills), and iterating a dict live raised ``RuntimeError: dictionary changed size during
    iteration`` (issue 36 item 6)."""
    seen = set() if _seen is None else _seen
    if id(obj) in seen or _depth > 4:
        return 0
    seen.add(id(obj))
    if isinstance(obj, np.ndarray):
        return int(obj.nbytes)
    if isinstance(obj, (pd.DataFrame, pd.Series)):
        return int(obj.memory_usage(deep=False).sum() if isinstance(obj, pd.DataFrame)
                   else obj.memory_usage(deep=False))
    if isinstance(obj, dict):
        items = list(obj.values())
    elif isinstance(obj, (list, tuple)):
        items = list(obj)
    elif hasattr(obj, "__dict__"):
        items = list(vars(obj).values())
    else:
        return 0
    return sum(approx_nbytes(v, _depth + 1, seen) for v in items)


@st.cache_resource
def result_store() -> ResultStore:
    """The server's one bounded :class:`ResultStore` of finished runs."""
    return ResultStore()


@st.cache_resource(show_spinner=False)
def start_warmup() -> threading.Thread:
    """Compile the numba kernels once per server in a low-priority background thread
    (:mod:`bnma_core.warmup`), so that the first run a user starts times the method, not the
    compiler. Pages call this at the top; it returns at once."""
    from bnma_core import warmup

    from .background import lower_priority

    def target() -> None:
        lower_priority()
        warmup.warm_up_once()
        state = warmup.status()
        _LOG.info("kernel warm-up done in %.1f s%s", state["seconds"] or 0.0,
                  f" (failed: {state['error']})" if state["error"] else "")

    thread = threading.Thread(target=target, name="bnma-warmup", daemon=True)
    thread.start()
    return thread


def compiling() -> bool:
    """True while the server's first-start compilation is still going on."""
    from bnma_core import warmup

    return start_warmup().is_alive() and not warmup.status()["done"]
