"""Step mode of order MCMC, server side: one ``OrderMCMC.step`` call of 1, 10 and 100 iterations
on ASIA (forward sample of 1,000 rows, 8 variables) and WBC (the bundled file, 10 variables),
l = 3, the BiDAG-like mix of moves; plus what recording costs the fast path (ALARM, 1,000 rows,
l = 3, all 7,807 parent sets per node: iterations per second with no records, with the default
order trace for the diagnostics, and with step mode's per-iteration log acceptance ratios).

Run: ``.venv/bin/python benchmarks/mcmc_step.py``. One JSON line per figure on stdout; each
step time is the median over ``STEPS`` calls on one chain (a page calls ``step`` on a chain
kept in the session, so the score table is built once and not timed); numba compilation is
excluded by a warm-up. Target: one step <= 20 ms. Runtime: about half a minute.
"""

from __future__ import annotations

import sys
import time

import numpy as np
from _bench import emit, median

from bnma_core import load_dataset
from bnma_core.datasets import bundled_path
from bnma_core.network import load_network
from bnma_core.structure.orders import OrderMCMC
from bnma_core.structure.score_table import build_score_table

STEPS = 50
REPEATS = 3


def step_seconds(table, k: int) -> float:
    """Median seconds of ``step(k)`` over STEPS calls on one chain."""
    m = OrderMCMC(table, n_iter=STEPS * k + 1, burn_in=0, move="mix", random_state=0)
    times = []
    for _ in range(STEPS):
        t = time.perf_counter()
        m.step(k)
        times.append(time.perf_counter() - t)
    return median(times)


def rate(table, n_iter: int, trace_every: int | None, record_moves: bool) -> float:
    """Iterations per CPU second of the kernel's thread (best of REPEATS; the machine is
    shared, and CPU time is what the load affects least)."""
    best = 0.0
    for rep in range(REPEATS):
        m = OrderMCMC(table, n_iter=n_iter, burn_in=n_iter // 6, trace_every=trace_every,
                      random_state=rep)
        if record_moves:
            m.chains[0].record_moves()
        m.run()
        best = max(best, n_iter / max(m.chains[0].cpu_seconds, 1e-9))
    return best


def main() -> None:
    asia = load_network("asia").sample(1000, seed=0)
    wbc = load_dataset(str(bundled_path("wbc.csv")))
    tables = {"asia": build_score_table(asia.codes, asia.arities, 3),
              "wbc": build_score_table(wbc.codes, wbc.arities, 3)}
    OrderMCMC(tables["asia"], n_iter=300, burn_in=0, random_state=0).step(200)  # warm-up
    for name, table in tables.items():
        for k in (1, 10, 100):
            emit(f"step_{k}_ms_{name}", 1000 * step_seconds(table, k), "ms", 3)
    alarm = load_network("alarm").sample(1000, seed=0)
    ta = build_score_table(alarm.codes, alarm.arities, 3)
    OrderMCMC(ta, n_iter=200, burn_in=10, random_state=0).run()
    for label, every, rec in (("no_records", 0, False), ("order_trace", None, False),
                              ("order_trace_and_moves", None, True)):
        emit(f"mcmc_iter_per_cpu_s_alarm_n1000_{label}", rate(ta, 60000, every, rec), "it/s", 0)
    print(f"# {tables['asia'].n_vars} ASIA and {tables['wbc'].n_vars} WBC variables",
          file=sys.stderr)


if __name__ == "__main__":
    np.seterr(all="ignore")
    main()
