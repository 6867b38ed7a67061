"""A tiny grid for tests and the Dask-overhead benchmark (not a paper): a seeded Monte Carlo
mean per cell, microseconds of work. ``hold`` in a key keeps the cell busy that many seconds
longer (to kill a worker in the middle of a grid in the tests)."""

from __future__ import annotations

import time

import pandas as pd

from .store import cell_seed

TITLE = "Quick check of the run machinery (a few seconds)"


def grid(quick: bool = True, n: int | None = None, hold: float | None = None) -> list[dict]:
    """``n`` cells (default 12 quick, 24 full); the full grid holds each cell 0.25 s."""
    n = (12 if quick else 24) if n is None else n
    hold = (0.0 if quick else 0.25) if hold is None else hold
    return [{"n_features": 3 + (i % 2), "n_train": 30, "rep": i, "hold": hold}
            for i in range(n)]


def config(quick: bool) -> dict:
    return {"cells": len(grid(quick))}


def cell(key: dict) -> dict:
    """A seeded Monte Carlo estimate (numpy only, so workers start fast): the mean of
    ``n_train`` Beta(n_features, 2) draws."""
    import numpy as np

    if key.get("fail"):
        raise ValueError("this cell fails on purpose (runner test)")
    seed = cell_seed(key)
    x = np.random.default_rng(seed).beta(key["n_features"], 2, size=key["n_train"])
    if key.get("hold"):
        time.sleep(float(key["hold"]))
    return {"seed": seed, "mean": float(x.mean()), "sd": float(x.std())}


def report(cells: pd.DataFrame, meta: dict) -> str:
    from bnma_core.export import html_report

    tab = pd.DataFrame([{**k, **r} for k, r in zip(cells["key"], cells["result"], strict=True)])
    return html_report(TITLE, [("Cells", tab)], {**meta})
