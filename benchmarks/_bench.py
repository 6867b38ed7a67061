"""Shared helpers of the benchmark scripts: timing and the one-JSON-line-per-figure output."""

from __future__ import annotations

import json
import statistics
import time
from collections.abc import Callable


def emit(name: str, value: float, unit: str, digits: int = 4) -> None:
    """Print one figure as ``{"name": ..., "value": ..., "unit": ...}``."""
    print(json.dumps({"name": name, "value": round(float(value), digits), "unit": unit}),
          flush=True)


def timed(fn: Callable[[], object], repeats: int = 3, warmup: bool = True,
          stat: Callable[[list[float]], float] = min) -> float:
    """Seconds per call of ``fn``: ``stat`` (default the best) over ``repeats`` calls, after one
    untimed warm-up call (numba compilation / cache load) unless ``warmup`` is False."""
    if warmup:
        fn()
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return float(stat(times))


median = statistics.median
