"""Cached data loading and cached heavy work, keyed by content / dataset fingerprint.

Streamlit hashes the arguments of a cached function; a :class:`DiscreteDataset` is passed as
``_ds`` (not hashed) together with its ``fingerprint`` (hashed), so equal data share one entry.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
import streamlit as st

from bnma_core.data import DiscreteDataset, load_dataset, read_table
from bnma_core.datasets import bundled_csv_files, bundled_path

if TYPE_CHECKING:
    from bnma_core.network import DiscreteBN


def sample_csv_files() -> list[str]:
    """Bundled CSV files (the repository's ``sample_data/``, WBC first)."""
    return bundled_csv_files()


def sample_csv_bytes(name: str) -> bytes:
    """Content of one bundled CSV file (FileNotFoundError for any other name)."""
    return bundled_path(name).read_bytes()


@st.cache_data(show_spinner=False, max_entries=32)
def csv_columns(raw: bytes) -> list[str]:
    """Column names of a CSV (raises DataError for unreadable input)."""
    return [str(c) for c in read_table(raw).columns]


@st.cache_data(show_spinner="Reading and encoding the data...", max_entries=32)
def load_csv(raw: bytes, target: str | None, discretization: str, n_bins: int,
             missing: str) -> DiscreteDataset:
    """:func:`bnma_core.data.load_dataset` on the CSV bytes, cached by content + options."""
    return load_dataset(raw, target, discretization=discretization, n_bins=n_bins,
                        missing=missing)


@st.cache_resource(show_spinner="Reading the network...")
def network(name: str) -> DiscreteBN:
    """A bundled network (``alarm``, ``hepar2``, ``asia``), read once per server."""
    from bnma_core.network import load_network  # imported on demand: numba start-up cost

    return load_network(name)


@st.cache_data(show_spinner="Estimating the cost of the chosen methods on these data...",
               max_entries=64)
def resource_limit(_ds: DiscreteDataset, fingerprint: str, method: str) -> str:
    """:func:`bnma_core.classifiers.registry.resource_limit` of a registered method on the
    dataset (why it would pass its resource guard, '' if not), cached by dataset fingerprint
    and method: B-RAI prices its tree by one run of plain RAI (up to a few seconds)."""
    from bnma_core.classifiers.registry import resource_limit as limit

    return limit(method, _ds)


@st.cache_data(show_spinner="Sampling from the network...", max_entries=16)
def sample_network(name: str, n_rows: int, seed: int, class_variable: str) -> DiscreteDataset:
    """``n_rows`` forward samples of a bundled network as a dataset, cached by its arguments."""
    return network(name).sample(n_rows, seed, class_variable)


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
        with self._lock:
            value, size, _ = self._items.pop(key)
            self._items[key] = (value, size, time.time())  # most recently used last
            return value

    def get(self, key: Any, default: Any = None) -> Any:
        try:
            return self[key]
        except KeyError:
            return default

    def __setitem__(self, key: Any, value: Any) -> None:
        size = approx_nbytes(value)
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


def approx_nbytes(obj: Any, _depth: int = 0, _seen: set | None = None) -> int:
    """Bytes of the numpy arrays and DataFrames reachable from ``obj`` (through dicts, lists,
    tuples and object attributes, a few levels deep): the memory a stored result pins."""
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
        items = obj.values()
    elif isinstance(obj, (list, tuple)):
        items = obj
    elif hasattr(obj, "__dict__"):
        items = vars(obj).values()
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

    thread = threading.Thread(target=target, name="bnma-warmup", daemon=True)
    thread.start()
    return thread


def compiling() -> bool:
    """True while the server's first-start compilation is still going on."""
    from bnma_core import warmup

    return start_warmup().is_alive() and not warmup.status()["done"]
