"""Order methods beyond 64 variables: candidate score tables and order MCMC on wide networks
(issue 15, section 1).

Run: ``PYTHONPATH=. .venv/bin/python benchmarks/wide_orders.py [networks...]`` (default: alarm,
hepar2, win95pts, andes; networks other than the bundled ones are read as ``<name>.bif.gz`` from
the shared data folder next to the repository, skipped when absent). Prints one JSON line per
figure on stdout. Setting: N = 1,000 forward samples (seed 0), max in-degree l = 3, K2 +
Hwang-Zhang prior, candidate regime with K = 16 candidates per node chosen by single-parent
score gain (``candidates="auto"`` beyond 64 variables; ALARM is run with K = 16 explicitly, to
compare with the previous kernels), one chain. Figures per network: table build seconds
(candidate choice + scoring + zeta transform, best of ``REPEATS`` after a warm-up on a small
table), the table's memory and its estimate made before building, order-MCMC iterations per
second (wall and per CPU second of the kernel thread; swap = the paper's move, mix = the
BiDAG-like mix), ``OrderMCMCBMA`` with the ``bma10`` settings (10,000 iterations, 10 orders) fit
and prediction of 1,000 rows, and the process's peak resident memory. Targets: ANDES table < 30
s, >= 20,000 it/s; HEPAR II >= 50,000 it/s. Runtime: about two minutes.

``--rows``: many rows instead (issue 15, section 2): the paper-regime ALARM table (all 7,807
parent sets per node, l = 3) for N = 10,000 .. 1,000,000 forward samples: distinct rows, seconds
to find them (``compress_rows``), table seconds (wall and process CPU), peak resident memory;
the figure of seconds against N goes to ``benchmarks/out/rows_scaling.html``. Target:
1,000,000 rows < 10 s, < 2 GB, linear in N.
"""

from __future__ import annotations

import resource
import sys
import time
from pathlib import Path

import numpy as np
from _bench import emit

from bnma_core.classifiers.order_bma import OrderMCMCBMA
from bnma_core.network import load_network
from bnma_core.structure.orders import OrderMCMC
from bnma_core.structure.score_table import (
    build_score_table,
    compress_rows,
    estimate_table_bytes,
)

REPEATS = 2
N_ROWS = 1000
SHARED = Path(__file__).resolve().parents[1].parent / "shared" / "data"
NETWORKS = ["alarm", "hepar2", "win95pts", "andes"]


def _network(name: str):
    try:
        return load_network(name)
    except Exception:  # noqa: BLE001 - not bundled: look in the shared data
        path = SHARED / f"{name}.bif.gz"
        return load_network(path) if path.exists() else None


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e3


def mcmc_rates(table, n_iter: int, move: str) -> tuple[float, float]:
    wall, cpu = [], []
    for rep in range(REPEATS):
        m = OrderMCMC(table, n_iter=n_iter, burn_in=n_iter // 10, n_orders=10, move=move,
                      random_state=rep)
        m.run()
        wall.append(n_iter / m.chains[0].seconds)
        cpu.append(n_iter / max(m.chains[0].cpu_seconds, 1e-9))
    return max(wall), max(cpu)


def bench(name: str) -> None:
    net = _network(name)
    if net is None:
        print(f"# {name}: not found, skipped", file=sys.stderr)
        return
    codes = net.sample_codes(N_ROWS, seed=0)
    n = net.n_vars
    cands = 16 if n <= 64 else "auto"
    times = []
    for _ in range(REPEATS):
        t0 = time.perf_counter()
        table = build_score_table(codes, net.arities, 3, candidates=cands)
        times.append(time.perf_counter() - t0)
    k = table.cand.shape[1]
    emit(f"{name}.n_vars", n, "variables", 0)
    emit(f"{name}.table_seconds", min(times), "s")
    emit(f"{name}.table_mb", table.nbytes / 1e6, "MB", 1)
    emit(f"{name}.table_estimate_mb", estimate_table_bytes(n, N_ROWS, net.arities, 3, k) / 1e6,
         "MB", 1)
    for move in ("swap", "mix"):
        wall, cpu = mcmc_rates(table, 400_000 if n < 100 else 200_000, move)
        emit(f"{name}.mcmc_{move}_it_per_s", wall, "it/s", 0)
        emit(f"{name}.mcmc_{move}_it_per_cpu_s", cpu, "it/s", 0)
    X, y = np.delete(codes, n - 1, axis=1), codes[:, n - 1]
    clf = OrderMCMCBMA(n_iter=10000, burn_in=2000, n_orders=10, max_parents=3, random_state=0)
    t0 = time.perf_counter()
    clf.fit(X, y)
    emit(f"{name}.bma10_fit_seconds", time.perf_counter() - t0, "s")
    t0 = time.perf_counter()
    clf.predict_proba(X)
    emit(f"{name}.bma10_predict_1000_seconds", time.perf_counter() - t0, "s")
    emit(f"{name}.peak_rss_mb", _peak_mb(), "MB", 0)


ROW_SIZES = (10_000, 100_000, 250_000, 500_000, 1_000_000)


def rows_scaling(sizes=ROW_SIZES) -> None:
    import plotly.graph_objects as go

    net = load_network("alarm")
    build_score_table(net.sample_codes(500, seed=0), net.arities, 3)  # compile / load
    out = []
    for n_rows in sizes:
        codes = net.sample_codes(n_rows, seed=0)
        t0 = time.perf_counter()
        uniq, _ = compress_rows(codes)
        t_comp = time.perf_counter() - t0
        t0, c0 = time.perf_counter(), time.process_time()
        build_score_table(codes, net.arities, 3)
        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
        emit(f"alarm_rows_{n_rows}.distinct_rows", len(uniq), "rows", 0)
        emit(f"alarm_rows_{n_rows}.compress_seconds", t_comp, "s")
        emit(f"alarm_rows_{n_rows}.table_seconds", wall, "s")
        emit(f"alarm_rows_{n_rows}.table_cpu_seconds", cpu, "s")
        emit(f"alarm_rows_{n_rows}.peak_rss_mb", _peak_mb(), "MB", 0)
        out.append((n_rows, len(uniq), wall, cpu))
    arr = np.array(out, dtype=float)
    fig = go.Figure([go.Scatter(x=arr[:, 0], y=arr[:, 2], name="table, wall s"),
                     go.Scatter(x=arr[:, 0], y=arr[:, 3], name="table, CPU s"),
                     go.Scatter(x=arr[:, 0], y=arr[:, 1] / 1e5, name="distinct rows / 100,000")])
    fig.update_layout(title="ALARM paper-regime score table (l = 3) against N",
                      xaxis_title="rows N", yaxis_title="seconds")
    path = Path(__file__).resolve().parent / "out" / "rows_scaling.html"
    path.parent.mkdir(exist_ok=True)
    fig.write_html(path, include_plotlyjs="cdn")
    print(f"# figure: {path}", file=sys.stderr)


def main(names: list[str]) -> None:
    warm = load_network("asia").sample_codes(200, seed=0)  # compile / load the kernels
    t = build_score_table(warm, load_network("asia").arities, 2, candidates=3)
    OrderMCMC(t, n_iter=2000, burn_in=100, n_orders=2, move="mix", random_state=0).run()
    for name in names:
        bench(name)


if __name__ == "__main__":
    if "--rows" in sys.argv:
        rows_scaling()
    else:
        main(sys.argv[1:] or NETWORKS)
