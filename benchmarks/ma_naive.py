"""Speed of the model-averaged naive Bayes versus the MAP naive Bayes (Dash & Cooper 2002).

Command line: ``python benchmarks/ma_naive.py [--repeats 5]``. Prints one JSON line per figure:

* ``manb_fit_s_500x12800``: fit theta* (MANaiveBayes) on N = 500 binary features x 12,800 rows;
* ``nb_fit_s_500x12800``: fit the MAP naive Bayes on the same rows;
* ``manb_predict_s_10000``: class posteriors of 10,000 rows.

Each figure is the median of ``--repeats`` runs after one warm-up (numba compilation excluded).
Targets: fit under 1 s and within 1.5x the MAP fit; prediction under 0.5 s. The paper's claim
is that theta* costs the same as one MAP naive Bayes (O(N_r N N_f N_c)).
"""

from __future__ import annotations

import argparse

import numpy as np
from _bench import emit, median, timed

from bnma_core.classifiers.manb import MANaiveBayes
from bnma_core.classifiers.naive_bayes import NaiveBayes


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="MA naive Bayes speed")
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args(argv)
    rng = np.random.default_rng(0)
    n, p = 12_800, 500
    y = rng.integers(0, 2, n)
    # features: a quarter depend on the class, the rest are noise
    X = rng.integers(0, 2, (n, p))
    dep = rng.random((n, p // 4)) < 0.7
    X[:, : p // 4] = np.where(dep, y[:, None], X[:, : p // 4])
    X = X.astype(np.int32)
    ma = MANaiveBayes()
    nb = NaiveBayes(alpha=1.0)
    t_ma = timed(lambda: ma.fit(X, y), args.repeats, stat=median)
    t_nb = timed(lambda: nb.fit(X, y), args.repeats, stat=median)
    X_test = X[:10_000]
    t_pred = timed(lambda: ma.predict_proba(X_test), args.repeats, stat=median)
    for name, value in (("manb_fit_s_500x12800", t_ma), ("nb_fit_s_500x12800", t_nb),
                        ("manb_predict_s_10000", t_pred)):
        emit(name, value, "s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
