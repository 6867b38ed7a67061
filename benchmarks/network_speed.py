"""Speed of exact inference: bnma_core.network on ALARM / HEPAR II, augmented NB/TAN on WBC.

Run: ``.venv/bin/python benchmarks/network_speed.py``. Prints one JSON line per figure (best of
5 runs after a warm-up call, so numba compilation is excluded): BIF parse time, forward sampling
of 20,000 rows, exact class posteriors for 3,000 rows (fully observed = Markov-blanket formula;
10 % of the cells unobserved = batched variable elimination) and one single-query posterior;
then NB / TAN ``predict_proba`` on the bundled WBC data tiled to 6,990 rows with 10 % of the
test cells unobserved (exact marginalization of the missing features). Runtime: a few seconds.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from _bench import emit, timed

from bnma_core.classifiers.naive_bayes import NaiveBayes
from bnma_core.classifiers.tan import TAN
from bnma_core.data import load_dataset
from bnma_core.datasets import bundled_path
from bnma_core.network import load_network, read_bif

TARGETS = {"alarm": "BP", "hepar2": "Cirrhosis"}


def emit_ms(name: str, value: float) -> None:
    emit(name, value, "ms", digits=3)


def best_ms(fn: Callable[..., object], *args: object, repeats: int = 5) -> float:
    return 1e3 * timed(lambda: fn(*args), repeats)


def bench(net: str, target: str) -> None:
    emit_ms(f"{net}_parse_ms", best_ms(read_bif, bundled_path(f"{net}.bif.gz")))
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


def bench_augmented() -> None:
    ds = load_dataset(bundled_path("wbc.csv"), missing="keep")
    X, y = ds.X, ds.y
    arities = ds.arities[ds.feature_indices]
    Xt = np.tile(X, (10, 1))
    Xt[np.random.default_rng(3).random(Xt.shape) < 0.1] = -1
    for model in (NaiveBayes(), TAN()):
        model.fit(X, y, arities=arities)
        emit_ms(f"wbc_{type(model).__name__.lower()}_predict_{len(Xt)}_10pct_missing_ms",
                best_ms(model.predict_proba, Xt))


if __name__ == "__main__":
    for name, target in TARGETS.items():
        bench(name, target)
    bench_augmented()
