"""What a finished or stopped cross-validation says, ready for a page or a report: which folds
each method finished, the metrics with 95 % intervals per method, methods whose out-of-fold
predictions are identical, and the time a running comparison still needs.

Inputs are :func:`bnma_core.evaluation.cross_validate`'s per-fold table and its out-of-fold
predictions (:class:`~bnma_core.evaluation.CVPredictions`: ``y``, ``classes``, ``proba``
and, when known, ``folds``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from itertools import combinations
from typing import Any

import numpy as np
import pandas as pd

__all__ = ["fold_status", "interval_table", "identical_predictions", "remaining_seconds",
           "time_left", "MIN_FITS_FOR_ESTIMATE",
           "INTERVAL_METRICS", "per_fold_intervals",
           "duration_words", "calibration_views", "common_decision_curve", "over_datasets",
           "read_scores_table", "anchor_scores", "DATASET_METRICS", "MAX_SCORE_DATASETS",
           "MAX_SCORE_METHODS", "MAX_PAIR_METHODS", "MAX_PAIR_CELLS", "check_score_table_size",
           "max_pair_methods"]

INTERVAL_METRICS = {"accuracy": "accuracy", "log_loss": "log-loss", "brier": "Brier",
                    "auc": "AUC"}
"""Metrics of :func:`interval_table`, as written in its column names."""


def fold_status(results: pd.DataFrame, methods: Sequence[str], n_folds: int) -> pd.DataFrame:
    """Which folds each method finished, in the order of ``methods``.

    Returns
    -------
    DataFrame with ``method``, ``folds_done``, ``folds`` (the finished folds, numbered from 1,
    as text such as ``"1-3, 5"``; ``"none"`` when no fold finished) and ``complete`` (all
    ``n_folds`` finished). A method with no finished fold keeps its row, so a page can say so
    instead of dropping it.
    """
    rows = []
    for m in methods:
        done = sorted(int(f) + 1 for f in results.loc[results["method"] == m, "fold"])
        rows.append({"method": m, "folds_done": len(done), "folds": _ranges(done) or "none",
                     "complete": len(done) == int(n_folds)})
    return pd.DataFrame(rows, columns=["method", "folds_done", "folds", "complete"])


def _ranges(values: Sequence[int]) -> str:
    """``[1, 2, 3, 5]`` -> ``"1-3, 5"``."""
    out: list[str] = []
    for v in values:
        if out and "-" not in out[-1] and int(out[-1]) == v - 1:
            out[-1] = f"{out[-1]}-{v}"
        elif out and "-" in out[-1] and int(out[-1].split("-")[1]) == v - 1:
            out[-1] = f"{out[-1].split('-')[0]}-{v}"
        else:
            out.append(str(v))
    return ", ".join(out)


def _finished(predictions: Any, method: str) -> tuple[np.ndarray, np.ndarray, Any]:
    P = predictions.proba[method]
    ok = ~np.isnan(P).any(axis=1)
    folds = getattr(predictions, "folds", None)
    return predictions.y[ok], P[ok], None if folds is None else np.asarray(folds)[ok]


def interval_table(predictions: Any, results: pd.DataFrame | None = None, *,
                   n_bootstrap: int | None = None, seed: int = 0) -> pd.DataFrame:
    """Accuracy, log-loss, Brier score and AUC of each method with 95 % intervals, pooled over
    the rows the method predicted (:func:`bnma_core.metrics.metric_intervals`: Wilson for the
    accuracy, bootstrap over rows for log-loss and Brier, DeLong for the AUC or Newcombe's score
    interval where DeLong's variance is 0), plus the mean of the per-fold AUCs.

    The pooled AUC ranks every out-of-fold row together; the mean over folds averages the
    AUC of each test fold. They differ (a little) because the folds' models score on slightly
    different scales, so both are given under names that say which is which.

    Parameters
    ----------
    predictions : CVPredictions
    results : the per-fold table (for the mean over folds of the AUC), optional
    n_bootstrap, seed : of the bootstrap intervals

    Returns
    -------
    DataFrame, one row per method with predictions: ``method``, ``rows`` (rows predicted),
    then for each metric m of :data:`INTERVAL_METRICS` ``m``, ``m_lower``, ``m_upper``, and
    ``auc_fold_mean``.
    """
    from .metrics import N_BOOTSTRAP, metric_intervals

    rows = []
    for m in predictions.proba:
        y, P, _ = _finished(predictions, m)
        if not len(y):
            continue
        tab = metric_intervals(y, P, classes=predictions.classes, seed=seed,
                               n_bootstrap=int(n_bootstrap or N_BOOTSTRAP))
        row: dict[str, Any] = {"method": m, "rows": len(y)}
        for r in tab.itertuples():
            row[r.metric] = r.estimate
            row[f"{r.metric}_lower"] = r.lower
            row[f"{r.metric}_upper"] = r.upper
        if results is not None and len(results):
            row["auc_fold_mean"] = float(results.loc[results["method"] == m, "auc"].mean())
        rows.append(row)
    return pd.DataFrame(rows)


def per_fold_intervals(predictions: Any, *, n_bootstrap: int | None = None, seed: int = 0
                       ) -> pd.DataFrame | None:
    """:func:`bnma_core.metrics.metric_intervals` per fold of each method (the rows with
    ``scope == "fold"``), or None when the predictions do not record each row's fold."""
    from .metrics import N_BOOTSTRAP, metric_intervals

    if getattr(predictions, "folds", None) is None:
        return None
    parts = []
    for m in predictions.proba:
        y, P, folds = _finished(predictions, m)
        if len(y):
            tab = metric_intervals(y, P, folds=folds, classes=predictions.classes, seed=seed,
                                   n_bootstrap=int(n_bootstrap or N_BOOTSTRAP))
            parts.append(tab[tab["scope"] == "fold"].assign(method=m))
    return pd.concat(parts, ignore_index=True) if parts else None


def identical_predictions(proba: Mapping[str, np.ndarray], atol: float = 1e-12
                          ) -> list[tuple[str, ...]]:
    """Groups of methods whose out-of-fold probabilities agree on every row both predicted.

    Two methods agree when every probability differs by at most ``atol`` on the rows both
    predicted (at least one). This is no bug when an averaging method's posterior puts all its
    weight on the one model another method selects (e.g. model-averaged naive Bayes whose
    posterior over feature subsets concentrates on the full set, or an ensemble of k best
    networks in which the best network's weight is ≈ 1).

    Returns
    -------
    list of tuples of method names (two or more each), in the order of ``proba``.
    """
    names = list(proba)
    parent = {m: m for m in names}

    def find(m: str) -> str:
        while parent[m] != m:
            m = parent[m]
        return m

    for a, b in combinations(names, 2):
        Pa, Pb = np.asarray(proba[a], float), np.asarray(proba[b], float)
        if Pa.shape != Pb.shape:
            continue
        both = ~np.isnan(Pa).any(axis=1) & ~np.isnan(Pb).any(axis=1)
        if both.any() and np.allclose(Pa[both], Pb[both], rtol=0.0, atol=atol):
            parent[find(b)] = find(a)
    groups: dict[str, list[str]] = {}
    for m in names:
        groups.setdefault(find(m), []).append(m)
    return [tuple(g) for g in groups.values() if len(g) > 1]


def remaining_seconds(done: int, total: int, elapsed: float) -> float | None:
    """Estimated seconds until a run of ``total`` fits ends: ``elapsed`` / ``done`` × fits
    left. The wall-clock time per finished fit is the mean fit time divided by the number of
    workers fitting at once, so the estimate is mean fit time × fits left / workers without
    being told the workers. None before the first fit has finished."""
    if done <= 0:
        return None
    return float(elapsed) / done * max(0, int(total) - int(done))


MIN_FITS_FOR_ESTIMATE = 2
"""Finished fits before :func:`time_left` estimates (the first fit carries the start-up)."""


def time_left(fits: Sequence[tuple[str, float]], methods: Sequence[str], n_folds: int, *,
              running_for: float = 0.0) -> tuple[float | None, bool]:
    """Seconds a cross-validation run still needs, from the wall-clock seconds of the fits
    done so far.

    Fits run method after method, and methods differ in cost by a factor of 60 or more (nb
    against stack), so one mean over all fits misleads (the Compare page said "about 6 min
    left" at 15 s for a run that ended at 61 s). Each method's remaining folds are priced by
    its own fits: the median of its fits after its first (the first carries compilation and
    caches) or its first alone. A method not started yet is priced like the median of the
    started methods, and the estimate is then called rough. The fit in progress has run
    ``running_for`` seconds already.

    Parameters
    ----------
    fits : (method, seconds) of each finished fit, in the order they finished
    methods : every method of the run
    n_folds : folds per method
    running_for : seconds since the last fit finished

    Returns
    -------
    (seconds or None, rough): None before :data:`MIN_FITS_FOR_ESTIMATE` fits have finished
    ("estimating"); ``rough`` when some method has not finished a fit yet.
    """
    if len(fits) < MIN_FITS_FOR_ESTIMATE:
        return None, True
    by_method: dict[str, list[float]] = {}
    for m, sec in fits:
        by_method.setdefault(m, []).append(float(sec))
    per_fit = {m: float(np.median(d[1:])) if len(d) > 1 else d[0]
               for m, d in by_method.items()}
    fallback = float(np.median(list(per_fit.values())))
    left = 0.0
    in_progress = True  # the first method with folds left is the one running
    for m in methods:
        todo = int(n_folds) - len(by_method.get(m, []))
        if todo <= 0:
            continue
        cost = per_fit.get(m, fallback)
        left += todo * cost
        if in_progress:
            left -= min(float(running_for), cost)
            in_progress = False
    rough = any(m not in by_method for m in methods)
    return max(0.0, left), rough


def duration_words(seconds: float) -> str:
    """A time estimate in words, rounded as estimates deserve: "40 s", "3 min", "1 h 20 min"."""
    s = max(0.0, float(seconds))
    if s < 90:
        return f"{max(1, round(s / 5) * 5 if s >= 10 else round(s))} s"
    m = round(s / 60)
    if m < 90:
        return f"{m} min"
    return f"{m // 60} h {m % 60:02d} min"


def calibration_views(predictions: Any, methods: Sequence[str], positive: Any = None, *,
                      seed: int = 0) -> dict[str, Any]:
    """Everything a page shows about calibration, each method on the rows it predicted.

    Parameters
    ----------
    predictions : CVPredictions
    methods : the methods to include (each must have predictions)
    positive : the event's class (label); None for top-label with more than two classes (two
        classes: the second class)

    Returns
    -------
    dict with ``curves`` and ``decomposition`` (``{method: table}``, inputs of
    :func:`bnma_core.viz.calibration.reliability_figure`), ``event`` (``"P(<class>)"`` or
    ``"top-label"``) and ``table``: per method the pooled calibration intercept and slope
    with 95 % Wald intervals (:func:`bnma_core.calibration.calibration_intercept_slope`) and
    the CORP decomposition of the Brier score of the event's forecast.
    """
    from .calibration import (
        calibration_summary,
        calibration_target,
        corp_decomposition,
        corp_reliability,
    )

    curves, decomp, rows, event = {}, {}, [], ""
    for m in methods:
        y, P, _ = _finished(predictions, m)
        if not len(y):
            continue
        f, o, event = calibration_target(y, P, positive=positive, classes=predictions.classes)
        curves[m] = corp_reliability(f, o, seed=seed)
        decomp[m] = corp_decomposition(f, o)
        s = calibration_summary(y, P, positive=positive, classes=predictions.classes)
        s = s[s["scope"] == "pooled"].set_index("parameter")
        row: dict[str, Any] = {"method": m, "event": event}
        for par in ("intercept", "slope"):
            row[par] = float(s.loc[par, "estimate"])
            row[f"{par}_lower"] = float(s.loc[par, "lower"])
            row[f"{par}_upper"] = float(s.loc[par, "upper"])
        d = decomp[m].iloc[0]
        row.update(miscalibration=float(d["miscalibration"]),
                   discrimination=float(d["discrimination"]),
                   uncertainty=float(d["uncertainty"]), rows=len(y))
        rows.append(row)
    return {"curves": curves, "decomposition": decomp, "event": event,
            "table": pd.DataFrame(rows)}


def common_decision_curve(predictions: Any, methods: Sequence[str], positive: Any
                          ) -> pd.DataFrame:
    """:func:`bnma_core.calibration.decision_curve` of ``methods`` (two classes) on the rows
    every one of them predicted, so their curves share one prevalence and one treat-all line."""
    from .calibration import decision_curve

    ok = np.ones(len(predictions.y), dtype=bool)
    for m in methods:
        ok &= ~np.isnan(predictions.proba[m]).any(axis=1)
    return decision_curve(predictions.y[ok], {m: predictions.proba[m][ok] for m in methods},
                          positive=positive, classes=predictions.classes)


DATASET_METRICS = {"accuracy": True, "log_loss": False, "brier": False, "auc": True}
"""Score columns :func:`over_datasets` reads (and whether higher is better)."""

MAX_SCORE_DATASETS = 2_000
"""Most data sets a table of scores may hold (a comparison over data sets usually has tens):
the Bayesian signed-rank test costs O(draws × data sets) per pair (DESIGN §7), about half a
CPU second per pair at this size."""

MAX_SCORE_METHODS = 1_000
"""Most methods a table of scores may hold: the critical-difference groups can name
O(methods²) members, and no reader can take in more ranks than this."""

MAX_PAIR_METHODS = 10
"""Most methods in the Bayesian signed-rank test at once (45 pairs)."""

MAX_PAIR_CELLS = 20_000
"""Most pairs × data sets in one Bayesian signed-rank request (about 10 CPU s with 20,000
draws): 45 pairs over 444 data sets, or 10 pairs over 2,000."""


def max_pair_methods(n_datasets: int) -> int:
    """How many methods the Bayesian signed-rank test takes at once over ``n_datasets`` data
    sets: at most :data:`MAX_PAIR_METHODS`, and k(k − 1)/2 pairs × data sets within
    :data:`MAX_PAIR_CELLS` (at least 2)."""
    k = 2
    while k < MAX_PAIR_METHODS and (k + 1) * k // 2 * max(1, int(n_datasets)) <= MAX_PAIR_CELLS:
        k += 1
    return k


def read_scores_table(raw: bytes, max_bytes: int = 5 * 2**20) -> pd.DataFrame:
    """A user's table of scores per data set and method (CSV: ``dataset``, ``method`` and one
    or more of :data:`DATASET_METRICS`'s columns), checked.

    Raises
    ------
    ValueError
        One sentence naming the limit and the remedy: too large, not CSV, a missing column, no
        rows, a score that is not a finite number, more than :data:`MAX_SCORE_DATASETS` data
        sets or :data:`MAX_SCORE_METHODS` methods.
    """
    import io

    if len(raw) > max_bytes:
        raise ValueError(f"The table has {len(raw) / 2**20:.1f} MB; a table of scores per data "
                         f"set and method fits in {max_bytes // 2**20} MB.")
    try:
        tab = pd.read_csv(io.BytesIO(raw), dtype={"dataset": str, "method": str})
    except (ValueError, pd.errors.ParserError, UnicodeDecodeError) as exc:
        raise ValueError(f"The file is not a readable CSV table ({exc}); save it as CSV with "
                         "a header row.") from None
    tab.columns = [str(c).strip() for c in tab.columns]
    scores = [c for c in DATASET_METRICS if c in tab.columns]
    if "dataset" not in tab.columns or "method" not in tab.columns or not scores:
        raise ValueError("The table needs the columns dataset, method and at least one of "
                         + ", ".join(DATASET_METRICS) + " (one row per data set and method).")
    if tab.empty:
        raise ValueError("The table has a header but no rows; add one row of scores per data "
                         "set and method.")
    for c in scores:
        vals = pd.to_numeric(tab[c], errors="coerce")
        bad = vals.isna() & tab[c].notna()
        if bad.any():
            raise ValueError(f"Column {c} holds {tab[c][bad].iloc[0]!r}, not a number; give "
                             "scores as numbers with a decimal point.")
        infinite = np.isinf(vals.to_numpy(dtype=float))
        if infinite.any():
            raise ValueError(f"Column {c} holds {tab[c][infinite].iloc[0]!r} in row "
                             f"{int(np.flatnonzero(infinite)[0]) + 1}, not a finite score; "
                             "leave the cell empty where a method has no score.")
        tab[c] = vals
    if not any(tab[c].notna().any() for c in scores):
        raise ValueError("No score column holds a number; fill in " + ", ".join(scores)
                         + " for each data set and method.")
    check_score_table_size(tab["dataset"].nunique(), tab["method"].nunique())
    return tab[["dataset", "method", *scores]]


def check_score_table_size(n_datasets: int, n_methods: int) -> None:
    """Refuse a comparison over more than :data:`MAX_SCORE_DATASETS` data sets or
    :data:`MAX_SCORE_METHODS` methods, with the remedy (one sentence)."""
    if n_datasets > MAX_SCORE_DATASETS:
        raise ValueError(f"The table has {n_datasets:,} data sets; a comparison takes at most "
                         f"{MAX_SCORE_DATASETS:,} (split the table, or keep a sample of the "
                         "data sets).")
    if n_methods > MAX_SCORE_METHODS:
        raise ValueError(f"The table has {n_methods:,} methods; a comparison takes at most "
                         f"{MAX_SCORE_METHODS:,} (keep the best, or compare groups of methods "
                         "separately).")


def over_datasets(table: pd.DataFrame, metric: str, methods: Sequence[str] | None = None, *,
                  pair_methods: Sequence[str] | None = None, rope: float = 0.01,
                  n_samples: int = 20_000, seed: int = 0, ranks: bool = True
                  ) -> dict[str, Any]:
    """Demšar's critical difference and the Bayesian signed-rank test of every pair, over the
    data sets of a long (``dataset``, ``method``, ``metric``) table.

    Only methods with a score on every data set take part (the tests need complete blocks);
    the others are returned as ``left_out``. ``pair_methods`` limits the Bayesian test to the
    pairs among those methods (k methods give k(k − 1)/2 pairs; default all, at most
    :func:`max_pair_methods` methods). ``ranks=False`` skips the critical difference (``cd``
    is then None), for a page that has it already and asks for other pairs.

    Returns
    -------
    dict with ``cd`` (:class:`bnma_core.comparison.CriticalDifference`), ``pairs``
    (:func:`bnma_core.comparison.bayesian_signed_rank_pairs`; None with fewer than two
    ``pair_methods``), ``left_out`` and ``methods``.

    Raises
    ------
    ValueError
        Fewer than two complete methods or two data sets; more data sets or methods than
        :func:`check_score_table_size` allows; more than :func:`max_pair_methods` methods
        for the Bayesian test.
    """
    from .comparison import bayesian_signed_rank_pairs, critical_difference

    if metric is None or metric not in table.columns:
        raise ValueError("Choose a score column the table has: "
                         + (", ".join(c for c in table.columns if c in DATASET_METRICS)
                            or "it has none of " + ", ".join(DATASET_METRICS)) + ".")
    tab = table.dropna(subset=[metric])
    if methods is not None:
        tab = tab[tab["method"].isin(list(methods))]
    tab = tab.drop_duplicates(["dataset", "method"])
    n_sets = tab["dataset"].nunique()
    check_score_table_size(n_sets, tab["method"].nunique())
    counts = tab.groupby("method", sort=False)["dataset"].nunique()
    complete = [m for m, c in counts.items() if c == n_sets]
    left_out = [m for m in counts.index if m not in complete]
    if methods is not None:
        left_out += [m for m in methods if m not in counts.index]
    tab = tab[tab["method"].isin(complete)]
    if len(complete) < 2 or n_sets < 2:
        raise ValueError(f"{len(complete)} methods have a score on all {n_sets} data sets; "
                         "choose at least two methods scored on at least two data sets.")
    hib = DATASET_METRICS.get(metric)
    cd = (critical_difference(tab, metric, block="dataset", higher_is_better=hib)
          if ranks else None)
    paired = complete if pair_methods is None else [m for m in dict.fromkeys(pair_methods)
                                                    if m in complete]
    most = max_pair_methods(n_sets)
    if len(paired) > most:
        raise ValueError(f"{len(paired)} methods for the Bayesian signed-rank test over "
                         f"{n_sets:,} data sets; choose at most {most} (each pair is one test).")
    tab = tab[tab["method"].isin(paired)]
    pairs = (bayesian_signed_rank_pairs(tab, metric, rope=rope, block="dataset",
                                        higher_is_better=hib, n_samples=n_samples, seed=seed)
             if len(paired) >= 2 else None)
    return {"cd": cd, "pairs": pairs, "left_out": left_out, "methods": complete}


def anchor_scores() -> pd.DataFrame | None:
    """The anchors' configurations (Weka and pyAgrum on seven data sets) as a long table with
    ``dataset``, ``method``, ``accuracy``, ``log_loss``, ``brier``; None when the anchors
    folder is absent (:func:`bnma_core.reproduce.anchors.anchor_configurations`)."""
    from .reproduce import anchors

    try:
        tab = anchors.anchor_configurations()
    except FileNotFoundError:
        return None
    return tab.rename(columns={"acc_mean": "accuracy", "logloss_mean": "log_loss",
                               "brier_mean": "brier"})[["dataset", "method", "accuracy",
                                                        "log_loss", "brier"]]
