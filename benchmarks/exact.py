"""Speed and memory of exact / K-best structure learning (issue #11).

Run: ``.venv/bin/python benchmarks/exact.py [--quick]``. Prints one JSON line per figure
(``{"name", "value", "unit"}``) on stdout. Each configuration runs in a fresh subprocess (after
a warm-up call that loads the numba cache) so its peak resident memory can be read; the wall
time and the CPU time of the call are both reported (the machine is shared by several users,
CPU seconds are the less disturbed figure). Data: N = 1,000 rows sampled from ALARM (seed 0),
the first n variables. Writes ``benchmarks/out/exact.html`` (plotly: time and memory vs n and
vs K). Targets (issue #11): n = 17 optimal < 2 s, K = 10 classes < 3 s, K = 100 < 60 s and
< 4 GB; n = 20 optimal < 10 s, K = 10 < 60 s. Runtime: several minutes (``--quick``: n <= 17).
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

from _bench import emit

ROOT = Path(__file__).resolve().parents[1]  # subprocesses import this checkout's bnma_core

N_ROWS = 1000
OUT = ROOT / "benchmarks" / "out"


def one(n: int, k: int, classes: bool) -> dict:
    """Time one k_best call in this process (after a small warm-up) and report peak RSS."""
    from bnma_core.network import load_network
    from bnma_core.structure.exact import k_best

    bn = load_network("alarm")
    X = bn.sample_codes(N_ROWS, seed=0)[:, :n]
    ar = bn.arities[:n]
    k_best(X[:, :5], ar[:5], k, classes=classes)  # load the numba cache
    base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    t, c = time.perf_counter(), time.process_time()
    res = k_best(X, ar, k, classes=classes)
    wall, cpu = time.perf_counter() - t, time.process_time() - c
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return {"n": n, "k": k, "classes": classes, "wall": wall, "cpu": cpu,
            "peak_gb": peak / 1e6, "extra_gb": max(peak - base, 0) / 1e6, "found": len(res),
            "best": res[0].log_score}


def run(n: int, k: int, classes: bool) -> dict:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    out = subprocess.run([sys.executable, __file__, "--one", str(n), str(k), str(int(classes))],
                         capture_output=True, text=True, env=env, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(quick: bool) -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    load = os.getloadavg()[0]
    print(f"load average {load:.1f} on {os.cpu_count()} cores", file=sys.stderr)
    top = 17 if quick else 20
    rows = []
    for n in range(10, top + 1):
        for k, classes in ((1, False), (10, True)):
            r = run(n, k, classes)
            rows.append(r)
            tag = "optimal" if k == 1 else f"k{k}_classes"
            emit(f"exact_n{n}_{tag}_wall", r["wall"], "s", 3)
            emit(f"exact_n{n}_{tag}_cpu", r["cpu"], "s", 3)
            emit(f"exact_n{n}_{tag}_peak_rss", r["peak_gb"], "GB", 3)
    for n in (15, 17):
        for k in (1, 10, 100):
            r = run(n, k, True)
            rows.append({**r, "vs_k": True})
            emit(f"exact_n{n}_k{k}_classes_wall", r["wall"], "s", 3)
            emit(f"exact_n{n}_k{k}_classes_cpu", r["cpu"], "s", 3)
            emit(f"exact_n{n}_k{k}_classes_peak_rss", r["peak_gb"], "GB", 3)
    (OUT / "exact.json").write_text(json.dumps(rows, indent=1))
    plot(rows)


def plot(rows: list[dict]) -> None:
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots

    fig = make_subplots(rows=1, cols=2, subplot_titles=("time and memory vs n",
                                                        "time and memory vs K"),
                        specs=[[{"secondary_y": True}, {"secondary_y": True}]])
    for k in (1, 10):
        rs = [r for r in rows if r["k"] == k and not r.get("vs_k")]
        lab = "optimal DAG" if k == 1 else "K = 10 classes"
        fig.add_trace(go.Scatter(x=[r["n"] for r in rs], y=[r["cpu"] for r in rs],
                                 name=f"{lab}: CPU s", mode="lines+markers"), 1, 1)
        fig.add_trace(go.Scatter(x=[r["n"] for r in rs], y=[r["peak_gb"] for r in rs],
                                 name=f"{lab}: peak GB", mode="lines+markers",
                                 line={"dash": "dot"}), 1, 1, secondary_y=True)
    for n in (15, 17):
        rs = [r for r in rows if r.get("vs_k") and r["n"] == n]
        fig.add_trace(go.Scatter(x=[r["k"] for r in rs], y=[r["cpu"] for r in rs],
                                 name=f"n = {n}: CPU s", mode="lines+markers"), 1, 2)
        fig.add_trace(go.Scatter(x=[r["k"] for r in rs], y=[r["peak_gb"] for r in rs],
                                 name=f"n = {n}: peak GB", mode="lines+markers",
                                 line={"dash": "dot"}), 1, 2, secondary_y=True)
    fig.update_yaxes(type="log", title_text="CPU seconds", secondary_y=False)
    fig.update_yaxes(title_text="peak memory (GB)", secondary_y=True)
    fig.update_xaxes(title_text="variables n", row=1, col=1)
    fig.update_xaxes(title_text="K", type="log", row=1, col=2)
    fig.update_layout(title=f"Exact / K-best structure learning, ALARM, N = {N_ROWS}")
    fig.write_html(OUT / "exact.html", include_plotlyjs="cdn")


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--one":
        print(json.dumps(one(int(sys.argv[2]), int(sys.argv[3]), bool(int(sys.argv[4])))))
    else:
        main("--quick" in sys.argv)
