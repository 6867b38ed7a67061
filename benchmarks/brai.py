"""B-RAI (Sugahara et al.'s Table 1 baseline): fit cost by training size on EEG eye state, the
data set where B-RAI as published is too slow for the Table 1 hour (JSON lines).

    PYTHONPATH=. python benchmarks/brai.py [--rows 1000,3000]

Figures: ``brai_fit_eeg_{n}rows`` (CPU seconds of one fit on n rows of the first training fold,
seed 0), ``brai_fit_us_per_test_eeg_{n}rows`` (those CPU µs per G² test run, everything
included), ``brai_g2_tests_eeg_{n}rows`` (G² tests run), ``brai_tree_nodes_eeg_{n}rows``
(internal nodes of the generating tree), ``brai_estimate_ratio_eeg_{n}rows`` (tests run / the size
guard's estimate from plain RAI), ``brai_estimated_tests_eeg_fold`` and ``brai_guard_s_eeg_fold``
(the estimate for the whole first training fold and the CPU seconds the guard takes to refuse it)
and ``brai_g2_test_us`` (µs per call of the Python-level
:func:`~bnma_core.classifiers.brai.g2_test` on 3,000 rows; B-RAI's bootstrap samples use the
thinning kernel instead). Needs the Sugahara data (``$BNMA_SUGAHARA_DATA`` or
``shared/data/sugahara`` next to the repository); skips cleanly without.

Measured 24 Nov 2026 (numba G² statistic, RAI in Python): 1,000 rows 1.9 CPU s (67,610 tests,
501 tree nodes); 3,000 rows 43 CPU s (1.54 million tests, 6,316 nodes: ~28 µs per test including
RAI's Python). The numpy G² (before the kernel) cost ~140 µs per test.

Measured 26 Nov 2026 after the result-preserving speed-ups (one numba kernel per thinning step,
memoized leaf scores, batched structure sampling; identical predictions), on the shared machine
at load 4-7: 1,000 rows 0.7 CPU s (10 µs per test), 3,000 rows 14.7 CPU s (the same 1.54 million
tests: 9.5 µs per test); ``brai_g2_test_us`` 18 µs (unchanged path). The tree, and with it the
number of tests, still grows much faster than the rows (4,000 rows of another subsample: 10,233
nodes, 4.47 million tests, 47 CPU s), which keeps a full EEG fold out of the Table 1 hour.

Measured 26 Nov 2026 (session 5, quiet machine, the size guard ``max_ci_tests``): 1,000 rows
0.5 CPU s (7.4 µs per test), 3,000 rows 12.3 CPU s (8.0 µs per test); tests run / the guard's
estimate 1.9 and 2.28 on this script's subsamples (0.96-2.2 on others, ``experiments/sugahara.md``);
the whole first training fold (13,482 rows, 3,908 distinct): plain RAI reaches order 10,
estimate 3.9e8 tests, refused in 1.0 CPU s; the largest cap within the default limit is
``max_order=5`` (1.7e7 tests).
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np
from _bench import emit, timed

from bnma_core.classifiers.brai import BRAI, g2_test
from bnma_core.reproduce import sugahara as S


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rows", default="1000,3000")
    a = ap.parse_args()
    if "EEG" in S.missing_datasets():
        print(json.dumps({"skipped": f"EEG data not found in {S.data_dir()}"}))
        return
    k = S.grid(datasets=["EEG"], methods=["b_rai"])[0]
    df, y, cont, splits = S._prepared(k["file"], k["sha256"], "all", k["folds"], k["seed"])
    train, _ = splits[0]
    X, ar = S.encode_fold(df, cont, train)
    rng = np.random.default_rng(0)
    X3 = X[rng.choice(train, 3000, replace=False)]
    emit("brai_g2_test_us", 1e6 * timed(lambda: g2_test(X3, 0, 1, (2, 3, 4), ar), 20), "us", 1)
    for n in (int(v) for v in a.rows.split(",")):
        sub = rng.choice(train, n, replace=False)
        t = time.process_time()
        est = BRAI(random_state=0).fit(X[sub], y[sub], arities=ar)
        cpu = time.process_time() - t
        emit(f"brai_fit_eeg_{n}rows", cpu, "s", 1)
        emit(f"brai_fit_us_per_test_eeg_{n}rows", 1e6 * cpu / est.tree_size_["ci_tests"], "us", 1)
        emit(f"brai_g2_tests_eeg_{n}rows", est.tree_size_["ci_tests"], "", 0)
        emit(f"brai_tree_nodes_eeg_{n}rows", est.tree_size_["internal"], "", 0)
        emit(f"brai_estimate_ratio_eeg_{n}rows",
             est.tree_size_["ci_tests"] / est.size_estimate_["estimated_ci_tests"], "", 2)
    t = time.process_time()
    guess = BRAI(max_ci_tests=None).check_resources(X[train], y[train], arities=ar)
    emit("brai_guard_s_eeg_fold", time.process_time() - t, "s", 1)
    emit("brai_estimated_tests_eeg_fold", guess["estimated_ci_tests"], "", 0)


if __name__ == "__main__":
    main()
