"""Speed of order MCMC and BMA over node orders on ALARM samples (issue #3, item 9).

Run: ``.venv/bin/python benchmarks/order_mcmc.py``. Prints one JSON line per figure
(``{"name", "value", "unit"}``) on stdout; numba compilation is excluded by a warm-up, and each
timing is the best of ``REPEATS`` runs (the machine is shared, so the best run is the least
disturbed). Iterations per CPU second of the MCMC thread and the machine's load go to stderr.
Setting: ALARM forward samples (seed 0, class CATECHOL), max in-degree l = 3, paper-faithful
regime (all 7,807 parent sets per node), the paper's random-swap move, one chain; the candidate
regime uses K = 16 candidate parents per node. Targets on a quiet 2-core machine: table <= 2 s,
>= 50,000 it/s, 60k iterations <= 2 s, >= 1,000,000 it/s with candidates, classification of
3,000 rows x 30 orders <= 5 s. Stopping a streamed run (issue 14, item 8; ALARM n = 1,000,
2 chains, l = 3, ``every`` = 2,000): one ``every`` step, ``gen.close()`` + building the model
after a Stop, and the time from a ``should_stop`` request (set from another thread, as the
dashboard does) to the finished model; target < 1 s. Runtime: about a minute.
"""

from __future__ import annotations

import os
import sys
import threading
import time

import numpy as np
from _bench import emit, median, timed

from bnma_core.classifiers.order_bma import OrderMCMCBMA
from bnma_core.network import load_network
from bnma_core.structure.orders import OrderMCMC
from bnma_core.structure.score_table import build_score_table

REPEATS = 3
CLASS = "CATECHOL"


def mcmc_rate(table, n_iter: int, name: str) -> float:
    """Iterations per second of one chain (kernel wall time, best of REPEATS); the rate per
    CPU second of the kernel's thread, which the machine's load affects much less, goes to
    stderr."""
    rates, cpu = [], []
    for rep in range(REPEATS):
        m = OrderMCMC(table, n_iter=n_iter, burn_in=n_iter // 6, n_orders=30, random_state=rep)
        m.run()
        rates.append(n_iter / m.chains[0].seconds)
        cpu.append(n_iter / max(m.chains[0].cpu_seconds, 1e-9))
    print(f"# {name}: {max(cpu):,.0f} iterations per CPU second", file=sys.stderr, flush=True)
    return max(rates)


def stream_figures(d1000) -> None:
    """Stop latency of OrderMCMCBMA.fit_stream: step time at every = 2,000, close + model
    build, and should_stop request -> model built (median of REPEATS)."""
    kw = dict(n_iter=400000, burn_in=10000, n_orders=30, n_chains=2, max_parents=3)
    steps, closes, stops = [], [], []
    for rep in range(REPEATS):
        clf = OrderMCMCBMA(random_state=rep, **kw)
        gen = clf.fit_stream(d1000.X, d1000.y, every=2000)
        t = None
        for ev in gen:
            if ev["chain"] == 1:
                now = time.perf_counter()
                if t is not None:
                    steps.append(now - t)
                t = now
                if ev["iteration"] >= 12000:
                    break
        t0 = time.perf_counter()
        gen.close()
        closes.append(time.perf_counter() - t0)
        flag, end = threading.Event(), {}

        def work(clf, flag=flag, end=end):
            for _ in clf.fit_stream(d1000.X, d1000.y, every=2000, should_stop=flag.is_set):
                pass
            end["t"] = time.perf_counter()

        th = threading.Thread(target=work, args=(OrderMCMCBMA(random_state=rep, **kw),))
        th.start()
        time.sleep(2.0)  # let the chains run (not a test: a benchmark's setup)
        t0 = time.perf_counter()
        flag.set()
        th.join()
        stops.append(end["t"] - t0)
    emit("stream_step_s_every2000_n1000_2chains", median(steps), "s")
    emit("stop_close_and_build_s_n1000", median(closes), "s")
    emit("stop_request_to_model_s_n1000", median(stops), "s")


def main() -> None:
    bn = load_network("alarm")
    d1000 = bn.sample(1000, seed=0, class_variable=CLASS)
    d5000 = bn.sample(5000, seed=0, class_variable=CLASS)
    test = bn.sample(3000, seed=1, class_variable=CLASS)
    # warm-up (numba compilation / cache load)
    small = build_score_table(d1000.codes[:50], d1000.arities, 3)
    OrderMCMC(small, n_iter=200, burn_in=10, random_state=0).run()
    OrderMCMC(build_score_table(d1000.codes[:50], d1000.arities, 3, candidates=16),
              n_iter=200, burn_in=10, random_state=0).run()

    emit("score_table_build_s_n5000",
         timed(lambda: build_score_table(d5000.codes, d5000.arities, 3)), "s")
    t1000 = build_score_table(d1000.codes, d1000.arities, 3)
    t5000 = build_score_table(d5000.codes, d5000.arities, 3)
    emit("mcmc_iter_per_s_n1000", mcmc_rate(t1000, 60000, "n1000"), "it/s")
    emit("mcmc_iter_per_s_n5000", mcmc_rate(t5000, 60000, "n5000"), "it/s")
    emit("mcmc_60k_iterations_s_n1000",
         timed(lambda: OrderMCMC(t1000, 60000, 10000, 30, random_state=0).run()), "s")

    clf = OrderMCMCBMA(n_iter=60000, burn_in=10000, n_orders=30, random_state=0)
    clf.fit(d1000.X, d1000.y)
    clf.predict_proba(test.X[:10])
    emit("classify_3000_rows_30_orders_s", timed(lambda: clf.predict_proba(test.X)), "s")

    tc = build_score_table(d1000.codes, d1000.arities, 3, candidates=16)
    emit("mcmc_iter_per_s_candidates_n1000", mcmc_rate(tc, 600000, "candidates"), "it/s")
    stream_figures(d1000)
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"# machine: {os.cpu_count()} cores, load average {load:.1f}; acceptance rate "
          f"{clf.acceptance_rate_:.3f}; accuracy {np.mean(clf.predict(test.X) == test.y):.3f}",
          file=sys.stderr, flush=True)


if __name__ == "__main__":
    main()
