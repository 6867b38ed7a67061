"""Speed of bnma_core.network on the bundled ALARM and HEPAR II networks.

Run: ``.venv/bin/python benchmarks/network_speed.py``. Prints one JSON line per figure (best of
5 runs after a warm-up call, so numba compilation is excluded): BIF parse time, forward sampling
of 20,000 rows, exact class posteriors for 3,000 rows (fully observed = Markov-blanket formula;
10 % of the cells unobserved = batched variable elimination) and one single-query posterior.
Runtime: a few seconds.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from _bench import emit, timed

from bnma_core.network import SAMPLE_DATA, load_network, read_bif

TARGETS = {"alarm": "BP", "hepar2": "Cirrhosis"}


def emit_ms(name: str, value: float) -> None:
    emit(name, value, "ms", digits=3)


def best_ms(fn: Callable[..., object], *args: object, repeats: int = 5) -> float:
    return 1e3 * timed(lambda: fn(*args), repeats)


def bench(net: str, target: str) -> None:
    emit_ms(f"{net}_parse_ms", best_ms(read_bif, SAMPLE_DATA / f"{net}.bif.gz"))
    bn = load_network(net)
    emit_ms(f"{net}_sample_20000_ms", best_ms(bn.sample_codes, 20_000, 0))
    codes = bn.sample_codes(3_000, seed=1)
    t = bn.index(target)
    emit_ms(f"{net}_class_posterior_3000_complete_ms", best_ms(bn.class_posterior, t, codes))
    partial = codes.copy()
    partial[np.random.default_rng(2).random(codes.shape) < 0.1] = -1
    emit_ms(f"{net}_class_posterior_3000_10pct_missing_ms",
         best_ms(bn.class_posterior, t, partial, repeats=2))
    ev = {v: int(partial[0, v]) for v in range(bn.n_vars) if v != t and partial[0, v] >= 0}
    emit_ms(f"{net}_posterior_one_query_ms", best_ms(bn.posterior, t, ev))


if __name__ == "__main__":
    for name, target in TARGETS.items():
        bench(name, target)
