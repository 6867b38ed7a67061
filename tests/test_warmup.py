"""The warm-up fits every registered method on small data with missing values (so that each
one's kernels compile before a user's first fit) and never raises."""

from __future__ import annotations

import math

from bnma_core import warmup
from bnma_core.classifiers.registry import available_methods


def test_warm_up_fits_every_registered_method():
    seen = []
    times = warmup.warm_up(lambda name, s: seen.append(name))
    assert seen == available_methods()
    failed = [m for m in available_methods() if not math.isfinite(times[m])]
    assert not failed, f"these methods failed on small data with missing values: {failed}"
    assert math.isfinite(times["network"])


def test_warm_up_once_records_status():
    warmup.warm_up_once()
    st = warmup.status()
    assert st["done"] and st["error"] is None and st["seconds"] >= 0
