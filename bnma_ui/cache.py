"""Cached data loading and cached heavy work, keyed by content / dataset fingerprint.

Streamlit hashes the arguments of a cached function; a :class:`DiscreteDataset` is passed as
``_ds`` (not hashed) together with its ``fingerprint`` (hashed), so equal data share one entry.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import streamlit as st

from bnma_core.data import DiscreteDataset, load_dataset, read_table
from bnma_core.datasets import bundled_csv_files, bundled_path

if TYPE_CHECKING:
    from bnma_core.network import DiscreteBN


def sample_csv_files() -> list[str]:
    """Bundled CSV files (``bnma_core/datasets``, WBC first)."""
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


@st.cache_data(show_spinner="Sampling from the network...", max_entries=16)
def sample_network(name: str, n_rows: int, seed: int, class_variable: str) -> DiscreteDataset:
    """``n_rows`` forward samples of a bundled network as a dataset, cached by its arguments."""
    return network(name).sample(n_rows, seed, class_variable)


@st.cache_resource
def result_store() -> dict:
    """Finished runs shared by all sessions of this server, keyed by (page, dataset
    fingerprint, parameters): running the same deterministic analysis again is instant."""
    return {}
