"""Pieces shared by the papers' HTML reports: confidence intervals, claim verdicts
in plain sentences, and the page itself through :func:`bnma_core.export.html_report` (plotly.js
embedded once; the file opens without internet)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

__all__ = ["REPRODUCED", "NOT_REPRODUCED", "NOT_CHECKABLE", "MIN_REPETITIONS", "mean_ci",
           "claim", "claims_text", "cells_frame", "build_report", "over_repetitions"]

REPRODUCED, NOT_REPRODUCED, NOT_CHECKABLE = "reproduced", "not reproduced", "not checkable"


def mean_ci(values: Sequence[float], level: float = 0.95) -> tuple[float, float]:
    """Mean and half-width of its Student-t confidence interval (nan half-width for n < 2)."""
    v = np.asarray(values, dtype=float)
    v = v[~np.isnan(v)]
    if len(v) == 0:
        return float("nan"), float("nan")
    if len(v) < 2:
        return float(v.mean()), float("nan")
    half = stats.t.ppf(0.5 + level / 2, len(v) - 1) * v.std(ddof=1) / np.sqrt(len(v))
    return float(v.mean()), float(half)


MIN_REPETITIONS = 5
"""Fewer repetitions per point cannot decide a difference of a few tenths (of a percent of
accuracy, or of a rank correlation): the one rule of every claim decided over repetitions."""


def over_repetitions(ok: bool, n_repetitions: int, why_not: str = "") -> tuple[str, str]:
    """(status, reason) of a claim decided over repetitions, the same rule for every paper:
    a claim that holds is :data:`REPRODUCED`; one that does not is :data:`NOT_CHECKABLE` with
    fewer than :data:`MIN_REPETITIONS` repetitions per point (too few to tell a miss from
    noise) and :data:`NOT_REPRODUCED` (with ``why_not``) otherwise."""
    if ok:
        return REPRODUCED, ""
    if n_repetitions < MIN_REPETITIONS:
        return NOT_CHECKABLE, (f"fewer than {MIN_REPETITIONS} repetitions per point "
                               f"({n_repetitions}): too few to decide (run the full grid)")
    return NOT_REPRODUCED, why_not


def claim(text: str, paper: str, ours: str, status: str, reason: str = "") -> dict[str, str]:
    """One claim of the paper with our finding; ``status`` is one of :data:`REPRODUCED`,
    :data:`NOT_REPRODUCED`, :data:`NOT_CHECKABLE`."""
    if status not in (REPRODUCED, NOT_REPRODUCED, NOT_CHECKABLE):
        raise ValueError(f"unknown claim status {status!r}")
    return {"claim": text, "paper": paper, "ours": ours, "status": status, "reason": reason}


def claims_text(claims: Iterable[dict[str, str]]) -> str:
    """One plain sentence per claim, e.g. "Reproduced: ... (paper: ...; ours: ...)."."""
    out = []
    for c in claims:
        s = f"{c['status'].capitalize()}: {c['claim']} (paper: {c['paper']}; ours: {c['ours']})"
        if c["reason"]:
            s += f" — {c['reason']}"
        out.append(s.rstrip(".") + ".")
    return "\n\n".join(out)


def cells_frame(cells: pd.DataFrame) -> pd.DataFrame:
    """Stored cells as one flat table: key fields, scalar results, ``seconds``, ``worker``."""
    rows = []
    for k, r, sec, w in zip(cells["key"], cells["result"], cells["seconds"], cells["worker"],
                            strict=True):
        rows.append({**k, **{a: b for a, b in r.items() if not isinstance(b, list | dict)},
                     "seconds": sec, "worker": w})
    return pd.DataFrame(rows)


def build_report(title: str, claims: list[dict[str, str]], sections: list[tuple[str, Any]],
                 config: dict[str, Any], meta: dict[str, Any]) -> str:
    """The report page: settings (configuration + run time, machine, code version), the claims
    as sentences and as a table, then the paper's sections (figures, tables, notes)."""
    counts = pd.Series([c["status"] for c in claims]).value_counts().to_dict() if claims else {}
    summary = ", ".join(f"{n} {s}" for s, n in counts.items()) or "no claims checked"
    head = [("Claims", f"{len(claims)} claims: {summary}.\n\n" + claims_text(claims))]
    if claims:
        head.append(("Claims: paper beside ours", pd.DataFrame(claims)))
    return _html(title, head + list(sections), {**config, **meta})


def _html(title, sections, settings):
    from bnma_core.export import html_report

    return html_report(title, sections, settings)
