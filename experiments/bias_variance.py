"""Bias-variance decomposition of zero-one loss (Kohavi & Wolpert 1996) for NB, TAN, KDB,
UKDB_L, UKDB_P and UKDB (paper 004's comparison), on WBC and every classification CSV in
the shared data folder next to the repository (``<root>/../shared/data``, ``--shared``; not part
of a clone: only WBC is used when it is absent).

Command line (from the repository root)::

    .venv/bin/python experiments/bias_variance.py [--repeats 20] [--train-fraction 0.5]
        [--seed 0] [--mushroom-rows 2000] [--n-jobs 1] [--out experiments/out/bias_variance]
        [--shared ../shared/data]

For each data set the rows are split once into a stratified half held out for testing and a
training pool; ``--repeats`` training sets of ``--train-fraction`` of the pool are drawn without
replacement (``bnma_core.evaluation.bias_variance``). Continuous columns (iris, glass, pima) are
split at the training median (the project default). ``mushroom.csv`` (never copied into the
repository) is used only if present, subsampled to ``--mushroom-rows`` rows (seeded, stratified
by class) because UKDB_P builds one network per test instance.

Writes ``bias_variance.csv`` (dataset, method, error, bias2, variance, ...), the pivot tables
``zero_one_loss.csv``, ``bias.csv``, ``variance.csv`` and ``win_draw_loss.csv`` (UKDB against
KDB with the same k; a draw is a difference of at most ``--draw-tolerance``).

Runtime: about 5 minutes with the defaults on a shared 2-core machine (2.5 of them for the
mushroom subsample; noisy, other jobs were running); ``--repeats 5`` takes about 1-2 minutes.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import pandas as pd

from bnma_core.datasets import bundled_path

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "data"  # next to the repository; not part of a clone

DEFAULT_METHODS = ("nb", "tan", "kdb1", "kdb2", "ukdb_l", "ukdb_p", "ukdb1", "ukdb2")
PAIRS = (("ukdb1", "kdb1"), ("ukdb2", "kdb2"))


def datasets(shared: Path = SHARED, mushroom_rows: int | None = 2000, seed: int = 0,
             names: list[str] | None = None) -> dict[str, pd.DataFrame]:
    """WBC (bundled) and the other CSVs in ``shared`` (skipping any that are absent)."""
    out = {"wbc": pd.read_csv(bundled_path("wbc.csv"))}
    if shared.is_dir():
        for path in sorted(shared.glob("*.csv")):
            name = path.stem
            if name == "wbc":
                continue
            df = pd.read_csv(path)
            if name == "mushroom" and mushroom_rows and len(df) > mushroom_rows:
                from sklearn.model_selection import train_test_split

                df, _ = train_test_split(df, train_size=mushroom_rows, random_state=seed,
                                         stratify=df["class"])
                df = df.reset_index(drop=True)
            out[name] = df
    if names is not None:
        out = {k: v for k, v in out.items() if k in names}
    return out


def win_draw_loss(results: pd.DataFrame, pairs=PAIRS, tolerance: float = 0.001
                  ) -> pd.DataFrame:
    """Counts over data sets of UKDB (first of each pair) having lower / equal / higher error,
    bias² and variance than KDB (second); equal = |difference| <= ``tolerance``."""
    recs = []
    for a, b in pairs:
        for metric in ("error", "bias2", "variance"):
            piv = results.pivot(index="dataset", columns="method", values=metric)
            if a not in piv or b not in piv:
                continue
            d = (piv[a] - piv[b]).dropna()
            recs.append(dict(comparison=f"{a} vs {b}", metric=metric,
                             win=int((d < -tolerance).sum()),
                             draw=int((d.abs() <= tolerance).sum()),
                             loss=int((d > tolerance).sum())))
    return pd.DataFrame(recs)


def run(out_dir: Path | None, methods=DEFAULT_METHODS, n_repeats: int = 20,
        train_fraction: float = 0.5, seed: int = 0, mushroom_rows: int | None = 2000,
        names: list[str] | None = None, n_jobs: int = 1, draw_tolerance: float = 0.001,
        shared: Path = SHARED, verbose: bool = False) -> dict[str, pd.DataFrame]:
    """Run the decomposition on every data set; write CSVs to ``out_dir`` (if given)."""
    from bnma_core.evaluation import bias_variance

    rows = []
    for name, df in datasets(shared, mushroom_rows, seed, names).items():
        t0 = time.perf_counter()
        res = bias_variance(list(methods), df, n_repeats=n_repeats,
                            train_fraction=train_fraction, seed=seed, target="class",
                            workers=max(n_jobs, 1))
        res.insert(0, "dataset", name)
        res["seconds"] = time.perf_counter() - t0
        rows.append(res)
        if verbose:
            print(f"{name}: {len(df)} rows, {time.perf_counter() - t0:.1f} s", flush=True)
    results = pd.concat(rows, ignore_index=True)
    tables = {"results": results, "win_draw_loss": win_draw_loss(results,
                                                                   tolerance=draw_tolerance)}
    order = [m for m in methods]
    for metric, fname in (("error", "zero_one_loss"), ("bias2", "bias"),
                          ("variance", "variance")):
        piv = results.pivot(index="dataset", columns="method", values=metric)[order]
        piv.loc["mean"] = piv.mean()
        tables[fname] = piv
    if out_dir is not None:
        out_dir = Path(out_dir)
        out_dir.mkdir(parents=True, exist_ok=True)
        results.to_csv(out_dir / "bias_variance.csv", index=False)
        for key in ("zero_one_loss", "bias", "variance"):
            tables[key].to_csv(out_dir / f"{key}.csv")
        tables["win_draw_loss"].to_csv(out_dir / "win_draw_loss.csv", index=False)
    return tables


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeats", type=int, default=20)
    ap.add_argument("--train-fraction", type=float, default=0.5)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--mushroom-rows", type=int, default=2000)
    ap.add_argument("--datasets", default=None, help="comma-separated subset of data set names")
    ap.add_argument("--methods", default=",".join(DEFAULT_METHODS))
    ap.add_argument("--n-jobs", type=int, default=1)
    ap.add_argument("--draw-tolerance", type=float, default=0.001)
    ap.add_argument("--out", default=str(ROOT / "experiments" / "out" / "bias_variance"))
    ap.add_argument("--shared", default=str(SHARED),
                    help="folder of further CSV data sets (skipped when absent)")
    a = ap.parse_args(argv)
    names = a.datasets.split(",") if a.datasets else None
    tables = run(Path(a.out), a.methods.split(","), a.repeats, a.train_fraction, a.seed,
                 a.mushroom_rows, names, a.n_jobs, a.draw_tolerance, shared=Path(a.shared),
                 verbose=True)
    fmt = {"float_format": lambda v: f"{v:.4f}"}
    for key in ("zero_one_loss", "bias", "variance"):
        print(f"\n{key}\n" + tables[key].to_string(**fmt))
    print("\n" + tables["win_draw_loss"].to_string(index=False))


if __name__ == "__main__":
    main()
