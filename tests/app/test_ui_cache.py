"""The dashboard's shared result store is bounded (entries, bytes, time to live)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from bnma_ui.cache import ResultStore, approx_nbytes, evict_oldest


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


def _while_changed(change, read, rounds: int = 300) -> None:
    """Call ``read()`` ``rounds`` times while another thread calls ``change(i)`` without
    pause (the interpreter switching threads every few microseconds), re-raising what
    ``read`` raised; the two start together at a barrier."""
    import sys
    import threading

    done, ready = threading.Event(), threading.Barrier(2)

    def mutate() -> None:
        ready.wait()
        i = 0
        while not done.is_set():
            change(i)
            i += 1

    thread = threading.Thread(target=mutate, daemon=True)
    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        thread.start()
        ready.wait()
        for _ in range(rounds):
            read()
    finally:
        done.set()
        sys.setswitchinterval(old)
        thread.join()


def test_approx_nbytes_of_an_object_another_thread_changes():
    """A stored value may be changed by another thread while it is measured (a shared model
    gaining a cached attribute, a dict of partial results): the walk reads snapshots and
    never raises 'dictionary changed size during iteration' (issue 36 item 6)."""

    class Model:
        pass

    model, table = Model(), {}
    for k in range(200):
        setattr(model, f"a{k}", np.zeros(1))
        table[k] = [np.zeros(1)]
    model.table = table

    def change(i: int) -> None:
        name = f"x{i % 50}"
        if hasattr(model, name):
            delattr(model, name)
            table.pop(1000 + i % 50, None)
        else:
            setattr(model, name, np.zeros(1))
            table[1000 + i % 50] = np.zeros(1)

    _while_changed(change, lambda: approx_nbytes(model))


def test_evict_oldest_keeps_the_newest_and_the_key_in_use():
    store = {k: k for k in "abcdef"}
    evict_oldest(store, 3, keep="a")
    assert list(store) == ["a", "e", "f"]
    evict_oldest(store, 5)
    assert list(store) == ["a", "e", "f"]

