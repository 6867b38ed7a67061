"""Speed of the clustering estimators (EMA-TAN and baselines; issue 13).

Command line: ``python benchmarks/clustering.py [--repeats 3] [--skip-large]``. One JSON line per
figure (after one untimed warm-up for numba compilation / cache load):

* ``<method>_fit_s_n14_N640_100starts``: fit with 100 starts on a random TAN sample with
  n = 14 features, N = 640 rows (Table 1's largest cell); target for EMA-TAN < 10 s; also
  ``<method>_cpu_s_...``, the process CPU time (on a shared machine wall time overstates);
* ``ematan_fit_s_100000x30_k3_10starts``: EMA-TAN, 100,000 rows x 30 three-state features,
  3 clusters, 10 starts on 2 threads (``n_jobs=2``); target < 60 s. Also the CPU seconds of
  both threads (the machine may be shared), the iterations over all starts and the seconds
  per iteration of one thread.
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from _bench import emit, median, timed  # noqa: E402

from bnma_core.clustering import make_clusterer  # noqa: E402
from bnma_core.clustering.synthetic import random_tan  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="clustering speed")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--skip-large", action="store_true")
    ap.add_argument("--methods", default="ematan,ema,emtan,embnet")
    args = ap.parse_args(argv)
    warnings.simplefilter("ignore")
    rng = np.random.default_rng(0)
    net = random_tan(14, rng)
    X, _ = net.sample(640, rng)
    for name in args.methods.split(","):
        cpu: list[float] = []

        def fit(name=name, cpu=cpu):
            c = time.process_time()
            make_clusterer(name, n_init=100, random_state=0).fit(X)
            cpu.append(time.process_time() - c)
        emit(f"{name}_fit_s_n14_N640_100starts", timed(fit, args.repeats, stat=median), "s")
        emit(f"{name}_cpu_s_n14_N640_100starts", median(cpu[1:]), "s")
    if not args.skip_large:
        rng = np.random.default_rng(1)
        n, N, k = 30, 100_000, 3
        net = random_tan(n, rng, max_states=3, n_clusters=k, balanced=True)
        net.arities[:] = 3
        net.cpts = [rng.dirichlet(np.ones(3), size=(k, 3 if net.parent[i] >= 0 else 1))
                    for i in range(n)]
        Xl, _ = net.sample(N, rng)
        make_clusterer("ematan", n_clusters=k, n_init=1, max_iter=2, random_state=0).fit(
            Xl[:1000])  # compile / load the cache
        t = time.perf_counter()
        cpu = time.process_time()
        m = make_clusterer("ematan", n_clusters=k, n_init=10, random_state=0, n_jobs=2).fit(Xl)
        sec = time.perf_counter() - t
        cpu = time.process_time() - cpu
        iters = sum(len(tr) for tr in m.loglik_traces_)
        emit("ematan_fit_s_100000x30_k3_10starts", sec, "s")
        emit("ematan_cpu_s_100000x30_k3_10starts", cpu, "s")
        emit("ematan_iterations_100000x30_k3_10starts", iters, "iterations")
        emit("ematan_s_per_iteration_100000x30_k3", sec / max(iters, 1) * 2, "s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
