"""The dashboard's shared result store is bounded (entries, bytes, time to live)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from bnma_ui.cache import ResultStore, approx_nbytes


def test_approx_nbytes_counts_arrays_through_objects():
    class Model:
        def __init__(self):
            self.table = np.zeros(1000)  # 8,000 bytes
            self.trace = pd.DataFrame({"a": np.zeros(500)})  # 4,000 bytes + index

    entry = {"model": Model(), "train": np.arange(100, dtype=np.int64), "name": "x"}
    n = approx_nbytes(entry)
    assert 8000 + 4000 + 800 <= n <= 8000 + 4000 + 800 + 1000


def test_store_evicts_least_recently_used_by_count_and_bytes():
    s = ResultStore(max_entries=3, max_bytes=10_000, ttl=1e9)
    for k in "abc":
        s[k] = np.zeros(100)  # 800 bytes each
    assert s["a"] is not None  # a becomes the most recent
    s["d"] = np.zeros(100)
    assert "b" not in s and all(k in s for k in "acd")
    s["e"] = np.zeros(1200)  # 9,600 bytes: the others must go to fit
    assert "e" in s and len(s) == 1 and s.nbytes <= 10_000
    s["huge"] = np.zeros(5000)  # larger than the whole budget: not kept
    assert "huge" not in s and "e" in s


def test_store_forgets_entries_after_their_time_to_live():
    s = ResultStore(ttl=0.0)
    s["a"] = 1
    assert "a" not in s
