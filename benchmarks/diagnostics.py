"""Convergence diagnostics of order MCMC (``structure.diagnostics``) on ALARM: 4 chains x 60,000
iterations (burn-in 10,000; 1,000 forward-sampled rows; l = 3; all 7,807 parent sets per
node). Figures: the run itself (context), the edge traces (order-conditional edge posteriors of
the recorded post-burn-in orders, ``OrderMCMC.edge_traces``) and ``convergence_diagnostics``
(ArviZ: R-hat, bulk / tail ESS, MCSE of the log score and of every edge, autocorrelation, rank
plots, verdict, concordance), wall and CPU seconds, and the memory of what is recorded.

Run: ``.venv/bin/python benchmarks/diagnostics.py``. One JSON line per figure on stdout; each
time is the best of ``REPEATS`` calls after a warm-up (numba compilation, the arviz_stats
import). Target: diagnostics <= 2 s. Runtime: about a minute.
"""

from __future__ import annotations

import sys
import time

from _bench import emit

from bnma_core.network import load_network
from bnma_core.structure.diagnostics import convergence_diagnostics
from bnma_core.structure.orders import OrderMCMC
from bnma_core.structure.score_table import build_score_table

REPEATS = 3


def best(fn) -> tuple[float, float, object]:
    """(wall seconds, CPU seconds of this process, result) of the fastest of REPEATS calls."""
    runs = []
    for _ in range(REPEATS):
        t, c = time.perf_counter(), time.process_time()
        out = fn()
        runs.append((time.perf_counter() - t, time.process_time() - c, out))
    return min(runs, key=lambda r: r[0])


def main() -> None:
    bn = load_network("alarm")
    d = bn.sample(1000, seed=0, class_variable="CATECHOL")
    table = build_score_table(d.codes, d.arities, 3)
    warm = OrderMCMC(table, n_iter=200, burn_in=10, n_chains=4, trace_every=10,
                     random_state=0)
    warm.run()
    warm.diagnostics()  # warm-up: kernels, the arviz_stats import
    m = OrderMCMC(table, n_iter=60000, burn_in=10000, n_chains=4, random_state=0)
    t = time.perf_counter()
    m.run()
    emit("run_4x60000_s_alarm", time.perf_counter() - t, "s")
    wall, cpu, edges = best(m.edge_traces)
    emit("edge_traces_s_alarm", wall, "s")
    emit("edge_traces_cpu_s_alarm", cpu, "s")
    log_score = m.log_score_traces()
    wall, cpu, report = best(lambda: convergence_diagnostics(log_score, edges, d.names))
    emit("diagnostics_s_alarm_4x60000", wall, "s")
    emit("diagnostics_cpu_s_alarm_4x60000", cpu, "s")
    emit("edge_traces_mb_alarm", edges.nbytes / 1e6, "MB", 2)
    emit("recorded_orders_mb_per_chain_alarm", m.chains[0].thin_orders.nbytes / 1e6, "MB", 3)
    emit("log_score_trace_mb_per_chain_alarm", m.chains[0].trace_score.nbytes / 1e6, "MB", 3)
    print(f"# {edges.shape[1]} edge draws per chain, {int((~report.edges['settled']).sum())} "
          f"varying edges; {report.verdict}", file=sys.stderr)


if __name__ == "__main__":
    main()
