"""Table 1 of Santafé, Lozano & Larrañaga (EMA-TAN for clustering), reproduced (issue 13).

Command line (from the repository root)::

    python experiments/santafe_table1.py [--n-vars 2,4,8,10,12,14] [--sizes 40,80,160,320,640]
        [--networks 100] [--starts 100] [--orders random,generating,chow_liu] [--balanced]
        [--extra stepmix,kmodes] [--budget SECONDS] [--jobs 1] [--seed 0] [--smoke]
        [--out experiments/out/santafe_table1]

Protocol (spec ``ema-tan-clustering.md`` §6): per number of features n, ``--networks`` random
TANs (r_i uniform on {2, 3}, a random recursive tree on a random permutation, C -> every X_i,
CPT rows ~ Dir(1), theta_C ~ Dir(1, 1) or 1/2 with ``--balanced``), each sampled independently
at every N in ``--sizes``. On every data set EMA-TAN, EM-TAN, EM-BNET and EMA are fitted with
``--starts`` random starts each, all sharing the starts (one ``random_state`` per data set);
EMA-TAN and EM-BNET share the order π, for every variant in ``--orders``: ``random`` (the
paper: one random π per data set), ``generating`` (a topological order of the true tree, so the
true model is inside L(π)) and ``chow_liu`` (learned from the data, no labels). The labels are
the argmax of p(c | x); accuracy is against the sampled cluster labels under the best label
matching (Hungarian). Per cell: EMA-TAN wins / draws / losses against each baseline (equal
numbers of correctly clustered rows = draw), and the two-sided Wilcoxon signed-rank test on the
paired accuracies (``scipy.stats.wilcoxon``, zero differences dropped): bold if p < 0.10, box if
p < 0.01. Nothing is tuned on the true partitions.

``--extra stepmix,kmodes`` also fits a StepMix latent class model (categorical measurement,
the same number of starts) and k-modes (Huang init, the same number of starts) on the same
data sets, when those packages are installed (``requirements-dev.txt``).

Resumable: every finished data set appends its rows to ``datasets.csv``; a rerun skips the data
sets already there. ``--budget`` stops starting new data sets after that many seconds. Writes
``datasets.csv`` (one row per data set, order variant and method), ``table1.csv`` (the paper's
columns plus p-values, our order variant, the paper's numbers beside ours) and
``collapse.csv`` (share of collapsed starts, majority share, ARI per cell and method).
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats
from sklearn.metrics import adjusted_rand_score

if __package__ in (None, ""):  # run as a script: make bnma_core importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bnma_core.clustering import EMA, EMATAN, EMBNET, EMTAN, cluster_accuracy  # noqa: E402
from bnma_core.clustering.base import chow_liu_order  # noqa: E402
from bnma_core.clustering.synthetic import random_tan  # noqa: E402

#: Table 1 of the paper as transcribed in the spec (W/D/L and the 10% bold marks).
PAPER_CSV = Path(__file__).resolve().parent / "santafe_table1_paper.csv"
BASELINES = {"EM-TAN": "emtan", "EM-BNET": "embnet", "EMA": "ema"}
DEFAULT_OUT = Path("experiments/out/santafe_table1")
SMOKE = dict(n_vars=[4, 8], sizes=[80, 160], networks=10, starts=5)


def _fit(method: str, X: np.ndarray, arities: np.ndarray, k: int, starts: int, seed: int,
         order=None, n_jobs: int = 1) -> tuple[np.ndarray, dict]:
    t = time.perf_counter()
    extra: dict = {}
    if method in ("stepmix", "kmodes"):
        labels = _fit_external(method, X, k, starts, seed)
    else:
        cls = {"ematan": EMATAN, "emtan": EMTAN, "embnet": EMBNET, "ema": EMA}[method]
        kw = dict(n_clusters=k, n_init=starts, random_state=seed, n_jobs=n_jobs)
        if order is not None:
            kw["order"] = list(order)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            m = cls(**kw).fit(X, arities=arities)
        labels = m.labels_
        extra = dict(collapsed=bool(m.collapsed_), collapsed_starts=m.collapsed_starts_,
                     n_starts=m.n_starts_, loglik=m.log_likelihood_)
    extra["seconds"] = time.perf_counter() - t
    return labels, extra


def _fit_external(method: str, X: np.ndarray, k: int, starts: int, seed: int) -> np.ndarray:
    if method == "stepmix":
        from stepmix.stepmix import StepMix

        m = StepMix(n_components=k, measurement="categorical", n_init=starts,
                    random_state=seed, verbose=0, progress_bar=0)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            m.fit(X)
        return np.asarray(m.predict(X))
    from kmodes.kmodes import KModes

    m = KModes(n_clusters=k, init="Huang", n_init=starts, random_state=seed, n_jobs=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return np.asarray(m.fit_predict(X))


def _available(extra: list[str]) -> list[str]:
    out = []
    for name in extra:
        try:
            __import__({"stepmix": "stepmix", "kmodes": "kmodes"}[name])
            out.append(name)
        except ImportError:
            print(f"[santafe] {name} is not installed; skipped", file=sys.stderr)
    return out


def run_dataset(n: int, net_index: int, size: int, *, seed: int, starts: int, orders: list[str],
                balanced: bool, extra: list[str], n_jobs: int = 1) -> list[dict]:
    """Every method on one data set: rows (method, order variant, accuracy, ...)."""
    net = random_tan(n, np.random.default_rng([seed, n, net_index]), balanced=balanced)
    rng = np.random.default_rng([seed, n, net_index, size])
    X, c = net.sample(size, rng)
    fit_seed = int(rng.integers(2**31))
    base = dict(n_vars=n, network=net_index, sample_size=size,
                majority=float(np.bincount(c).max() / size))
    rows = []

    def record(method, order_kind, labels, info):
        rows.append({**base, "method": method, "order": order_kind,
                     "correct": int(round(cluster_accuracy(c, labels) * size)),
                     "accuracy": cluster_accuracy(c, labels),
                     "ari": adjusted_rand_score(c, labels), **info})

    for name in ("emtan", "ema", *extra):
        labels, info = _fit(name, X, net.arities, 2, starts, fit_seed, n_jobs=n_jobs)
        record(name, "-", labels, info)
    for kind in orders:
        if kind == "random":
            order = np.random.default_rng([seed, n, net_index, size, 1]).permutation(n)
        elif kind == "generating":
            order = net.order
        elif kind == "chow_liu":
            order = None
        else:
            raise ValueError(f"unknown order variant {kind!r}")
        for name in ("ematan", "embnet"):
            if kind == "chow_liu":
                order = chow_liu_order(X, net.arities)
            labels, info = _fit(name, X, net.arities, 2, starts, fit_seed, order, n_jobs)
            record(name, kind, labels, info)
    return rows


def _wilcoxon(a: np.ndarray, b: np.ndarray) -> float:
    d = a - b
    if not np.any(d != 0):
        return 1.0
    return float(stats.wilcoxon(a, b, zero_method="wilcox").pvalue)


def summarize(df: pd.DataFrame) -> pd.DataFrame:
    """Table 1 rows: per order variant, comparison and cell, W/D/L of EMA-TAN and Wilcoxon p."""
    out = []
    for kind in sorted(df.loc[df.method == "ematan", "order"].unique()):
        ema_tan = df[(df.method == "ematan") & (df.order == kind)]
        for label, method in BASELINES.items():
            other = df[(df.method == method) & (
                (df.order == kind) if method == "embnet" else (df.order == "-"))]
            for (n, size), a in ema_tan.groupby(["n_vars", "sample_size"]):
                b = other[(other.n_vars == n) & (other.sample_size == size)]
                m = a.merge(b, on="network", suffixes=("_a", "_b"))
                if m.empty:
                    continue
                ca, cb = m.correct_a.to_numpy(), m.correct_b.to_numpy()
                p = _wilcoxon(m.accuracy_a.to_numpy(), m.accuracy_b.to_numpy())
                out.append(dict(comparison=f"EMA-TAN vs {label}", order=kind, n_vars=n,
                                sample_size=size, ematan_wins=int((ca > cb).sum()),
                                draws=int((ca == cb).sum()), ematan_losses=int((ca < cb).sum()),
                                n_networks=len(m), p_value=p,
                                bold_p_lt_0_10=p < 0.10, box_p_lt_0_01=p < 0.01,
                                mean_acc_ematan=float(m.accuracy_a.mean()),
                                mean_acc_other=float(m.accuracy_b.mean())))
    table = pd.DataFrame(out)
    if len(table) and PAPER_CSV.exists():
        ref = pd.read_csv(PAPER_CSV).rename(columns={
            "ematan_wins": "paper_wins", "draws": "paper_draws",
            "ematan_losses": "paper_losses", "bold_p_lt_0.10": "paper_bold"})
        table = table.merge(ref, on=["comparison", "n_vars", "sample_size"], how="left")
    return table


def collapse_summary(df: pd.DataFrame) -> pd.DataFrame:
    g = df.groupby(["n_vars", "sample_size", "method", "order"])
    out = g.agg(datasets=("accuracy", "size"), mean_accuracy=("accuracy", "mean"),
                mean_ari=("ari", "mean"), majority=("majority", "mean"),
                seconds=("seconds", "mean"))
    if "collapsed_starts" in df:
        d = df.dropna(subset=["collapsed_starts"])
        g2 = d.groupby(["n_vars", "sample_size", "method", "order"])
        out["share_starts_collapsed"] = g2.collapsed_starts.sum() / g2.n_starts.sum()
        out["share_selected_collapsed"] = g2.collapsed.mean()
    return out.reset_index()


def run(n_vars, sizes, networks, starts, orders=("random",), balanced=False, extra=(),
        seed=0, out_dir: Path | None = DEFAULT_OUT, budget: float | None = None,
        n_jobs: int = 1, verbose: bool = True) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Run (or resume) the protocol; returns (per-data-set rows, Table 1 rows)."""
    from tqdm import tqdm

    extra = _available(list(extra))
    done = pd.DataFrame()
    path = None
    if out_dir is not None:
        out_dir = Path(out_dir)
        out_dir.mkdir(parents=True, exist_ok=True)
        path = out_dir / "datasets.csv"
        if path.exists():
            done = pd.read_csv(path)
    keys = set()
    if len(done):
        keys = set(zip(done.n_vars, done.network, done.sample_size))
    jobs = [(n, i, s) for i in range(networks) for n in n_vars for s in sizes
            if (n, i, s) not in keys]
    t0 = time.perf_counter()
    rows = [done] if len(done) else []
    for n, i, s in tqdm(jobs, disable=not verbose, desc="data sets"):
        if budget is not None and time.perf_counter() - t0 > budget:
            print(f"[santafe] budget of {budget:.0f} s reached; rerun to resume",
                  file=sys.stderr)
            break
        new = pd.DataFrame(run_dataset(n, i, s, seed=seed, starts=starts, orders=list(orders),
                                       balanced=balanced, extra=extra, n_jobs=n_jobs))
        rows.append(new)
        if path is not None:
            new.to_csv(path, mode="a", header=not path.exists(), index=False)
    df = pd.concat(rows, ignore_index=True) if rows else pd.DataFrame()
    table = summarize(df) if len(df) else pd.DataFrame()
    if out_dir is not None and len(df):
        table.to_csv(out_dir / "table1.csv", index=False)
        collapse_summary(df).to_csv(out_dir / "collapse.csv", index=False)
    return df, table


def markdown(table: pd.DataFrame, collapse: pd.DataFrame | None = None) -> str:
    """Our W/D/L beside the paper's, cell by cell (and accuracy / collapse per method)."""
    lines = ["| comparison | π | n | N | ours W/D/L | p | paper W/D/L | paper p<0.10 |",
             "|---|---|---|---|---|---|---|---|"]
    for r in table.itertuples():
        paper = (f"{int(r.paper_wins)}/{int(r.paper_draws)}/{int(r.paper_losses)}"
                 if "paper_wins" in table and pd.notna(r.paper_wins) else "—")
        bold = "**" if r.p_value < 0.10 else ""
        lines.append(f"| {r.comparison} | {r.order} | {r.n_vars} | {r.sample_size} | "
                     f"{bold}{r.ematan_wins}/{r.draws}/{r.ematan_losses}{bold} | "
                     f"{r.p_value:.3g} | {paper} | "
                     f"{getattr(r, 'paper_bold', '—')} |")
    if collapse is not None and len(collapse):
        lines += ["", "| n | N | method | π | data sets | accuracy | ARI | majority share | "
                  "starts collapsed | selected start collapsed | seconds |",
                  "|---|---|---|---|---|---|---|---|---|---|---|"]
        for r in collapse.itertuples():
            sc = getattr(r, "share_starts_collapsed", float("nan"))
            ss = getattr(r, "share_selected_collapsed", float("nan"))
            lines.append(
                f"| {r.n_vars} | {r.sample_size} | {r.method} | {r.order} | {r.datasets} | "
                f"{r.mean_accuracy:.3f} | {r.mean_ari:.3f} | {r.majority:.3f} | "
                f"{'—' if pd.isna(sc) else f'{sc:.0%}'} | {'—' if pd.isna(ss) else f'{ss:.0%}'}"
                f" | {r.seconds:.2f} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n-vars", default="2,4,8,10,12,14")
    ap.add_argument("--sizes", default="40,80,160,320,640")
    ap.add_argument("--networks", type=int, default=100)
    ap.add_argument("--starts", type=int, default=100)
    ap.add_argument("--orders", default="random,generating,chow_liu")
    ap.add_argument("--balanced", action="store_true")
    ap.add_argument("--extra", default="")
    ap.add_argument("--budget", type=float, default=None)
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--smoke", action="store_true")
    ap.add_argument("--out", default=str(DEFAULT_OUT))
    ap.add_argument("--report", action="store_true",
                    help="print the Markdown tables of the results in --out and exit")
    a = ap.parse_args(argv)
    if a.report:
        df = pd.read_csv(Path(a.out) / "datasets.csv")
        print(markdown(summarize(df), collapse_summary(df)))
        return 0
    ints = lambda s: [int(v) for v in s.split(",") if v]  # noqa: E731
    cfg = dict(n_vars=ints(a.n_vars), sizes=ints(a.sizes), networks=a.networks,
               starts=a.starts)
    if a.smoke:
        cfg.update(SMOKE)
    _, table = run(**cfg, orders=[o for o in a.orders.split(",") if o], balanced=a.balanced,
                   extra=[e for e in a.extra.split(",") if e], seed=a.seed,
                   out_dir=Path(a.out), budget=a.budget, n_jobs=a.jobs)
    if len(table):
        cols = ["comparison", "order", "n_vars", "sample_size", "ematan_wins", "draws",
                "ematan_losses", "p_value"]
        cols += [c for c in ("paper_wins", "paper_draws", "paper_losses") if c in table]
        print(table[cols].to_string(index=False))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
