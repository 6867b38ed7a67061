"""K-best / subbagging classifiers: fit and predict time by number of variables (JSON lines).

    PYTHONPATH=. python benchmarks/kbest.py [--vars 8,11,14] [--rows 1000]

Figures: ``kbest100_fit_n{v}`` (KBestEC, K = 100), ``subbkb_fit_n{v}`` (T = 10, K = 10),
``*_predict_1000rows_n{v}`` (with 10 % missing test values, exact marginalisation) and
``apses_subbkb_n{v}`` (the structure statistic for T = 10 subsamples), in seconds.
"""

from __future__ import annotations

import argparse

import numpy as np
from _bench import emit, timed

from bnma_core.analysis import apses
from bnma_core.classifiers.kbest import KBestEC, SubbaggingKBest


def data(n_vars: int, n_rows: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 2, size=(n_rows, n_vars - 1))
    for j in range(1, n_vars - 1):
        X[:, j] = np.where(rng.random(n_rows) < 0.3, X[:, j - 1], X[:, j])
    y = np.where(rng.random(n_rows) < 0.8, X[:, 0] ^ X[:, 1], rng.integers(0, 2, n_rows))
    return X, y


def bench(v: int, rows: int) -> None:
    X, y = data(v, rows)
    Xt = X.astype(float)
    Xt[np.random.default_rng(1).random(X.shape) < 0.1] = np.nan
    est = None
    for name, make in (("kbest100", lambda: KBestEC(n_best=100)),
                       ("subbkb", lambda: SubbaggingKBest(random_state=0))):
        est = make().fit(X, y)
        emit(f"{name}_fit_n{v}", timed(lambda m=make: m().fit(X, y), repeats=1), "s")
        emit(f"{name}_predict_1000rows_n{v}",
             timed(lambda e=est: e.predict_proba(Xt[:1000]), repeats=1), "s")
    D = np.column_stack([X, y])
    subs = [D[s.rows] for s in est.subsamples_]
    emit(f"apses_subbkb_n{v}",
         timed(lambda: apses(subs, [2] * v, random_state=0), repeats=1, warmup=False), "s")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--vars", default="8,11,14")
    ap.add_argument("--rows", type=int, default=1000)
    a = ap.parse_args()
    for v in (int(s) for s in a.vars.split(",")):
        bench(v, a.rows)


if __name__ == "__main__":
    main()
