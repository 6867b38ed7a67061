"""Probability quality with intervals: accuracy, log-loss, Brier score and ROC AUC of class
probabilities, each with a 95 % interval, per fold and pooled over folds.

Everything works on plain arrays, so the same functions serve a fresh cross-validation, a run
restored from a store, or any other table of out-of-fold predictions:

* ``y`` — (n,) int array of true class codes 0..K-1;
* ``P`` — (n, K) float array, column k = P(class code k | row), rows summing to 1;
* ``classes`` — the K class labels (optional; they name the per-class rows);
* ``folds`` — (n,) fold id of each row (optional; adds one block of rows per fold);
* ``seed`` — the seed of the bootstrap (same seed, same interval).

Intervals (DESIGN §11):

* AUC: DeLong, DeLong & Clarke-Pearson (1988) variance from placement values, computed by the
  fast algorithm of Sun & Xu (2014) (midranks instead of all m·n comparisons), normal interval
  clipped to [0, 1]. With more than two classes the AUC is the macro one-vs-rest mean over the
  classes present, and its variance the same placement-value variance of the mean (every class's
  rows are the positives of their own AUC and negatives of the others'; see :func:`macro_auc`).
  Where the placement values do not vary (an AUC of exactly 1 or 0, every score tied) DeLong's
  variance is 0 and its interval a point, which a finite sample never proves: there, and with a
  single positive or negative row, the interval is Newcombe's (2006) score interval
  (:func:`newcombe_auc_interval`), which inverts the Hanley & McNeil (1982) variance.
* Accuracy: Wilson's (1927) score interval of a proportion
  (``statsmodels.stats.proportion.proportion_confint``), never of zero width: 139 of 139 rows
  right gives about [0.973, 1], not [1, 1].
* Log-loss, Brier: percentile bootstrap over rows (Efron & Tibshirani 1993, ch. 13), seeded.
  Each is a mean of one number per row, so a bootstrap replicate is a resampled mean and the
  interval stays on the metric's own scale (a log-loss interval never goes below 0).

The Brier score is the multi-class one of Brier (1950): Σ_k (P_ik − 1[y_i = k])² averaged over
rows, in [0, 2] — for two classes twice the binary (p − y)² form, and the convention of the
anchors' ``proba_results.csv``. Log-loss clips probabilities at 1e-15 like
:func:`bnma_core.evaluation.classification_metrics`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

__all__ = ["CI_LEVEL", "N_BOOTSTRAP", "METRICS", "check_predictions", "row_scores",
           "delong_auc", "macro_auc", "auc_per_class", "bootstrap_mean_interval",
           "wilson_interval", "newcombe_auc_interval", "metric_intervals"]

CI_LEVEL = 0.95
"""Level of every interval unless told otherwise."""

N_BOOTSTRAP = 2000
"""Bootstrap replicates per interval (the Monte Carlo error of a 95 % percentile bound is then
about 0.1 standard errors)."""

METRICS = ("accuracy", "log_loss", "brier", "auc")
"""The metrics of :func:`metric_intervals`, in table order."""

_EPS = 1e-15
_MIN_SE = 1e-9  # a DeLong standard error below this is rounding error of a zero
_ROW_SUM_TOL = 1e-6
_CHUNK_CELLS = 2_000_000  # bootstrap indices drawn in blocks of at most this many cells


# --------------------------------------------------------------------------------------------
# Input checks
# --------------------------------------------------------------------------------------------


def check_predictions(y: Any, P: Any, classes: Sequence[Any] | None = None
                      ) -> tuple[np.ndarray, np.ndarray]:
    """Validated ``(y, P)`` as int64 codes and a float64 probability matrix.

    Raises
    ------
    ValueError
        With one sentence naming the limit and the remedy when ``P`` is not an (n, K ≥ 2)
        matrix of probabilities whose rows sum to 1, ``y`` is not n class codes in 0..K-1, or
        ``classes`` does not name the K columns.
    """
    P = np.asarray(P, dtype=float)
    if P.ndim != 2 or P.shape[1] < 2:
        raise ValueError(f"The probabilities have shape {P.shape}; pass an (n rows, n classes) "
                         "matrix with at least two class columns.")
    if P.shape[0] == 0:
        raise ValueError("There are no rows of predictions; pass at least one row.")
    nan_rows = np.flatnonzero(np.isnan(P).any(axis=1))
    if nan_rows.size:
        raise ValueError(f"{nan_rows.size} rows (the first is row {int(nan_rows[0])}) have no "
                         "probabilities (NaN), as rows of a fold that did not finish; pass only "
                         "the rows that were predicted.")
    if not np.all(np.isfinite(P)) or P.min() < -_ROW_SUM_TOL or P.max() > 1 + _ROW_SUM_TOL:
        raise ValueError("The probabilities must be finite numbers in [0, 1]; pass class "
                         "probabilities, not scores or log-probabilities.")
    sums = P.sum(axis=1)
    bad = np.flatnonzero(np.abs(sums - 1.0) > _ROW_SUM_TOL)
    if bad.size:
        raise ValueError(f"Row {int(bad[0])} of the probabilities sums to {sums[bad[0]]:.6g}, "
                         "not 1; pass normalised class probabilities (one column per class).")
    y_raw = np.asarray(y)
    if y_raw.dtype == bool:
        y_raw = y_raw.astype(np.int64)
    if y_raw.ndim != 1 or len(y_raw) != P.shape[0]:
        raise ValueError(f"There are {y_raw.size} true classes for {P.shape[0]} rows of "
                         "probabilities; pass one class code per row.")
    if not np.issubdtype(y_raw.dtype, np.integer):
        if not (np.issubdtype(y_raw.dtype, np.floating) and np.all(y_raw == np.round(y_raw))):
            raise ValueError("The true classes must be integer codes 0..K-1; encode labels "
                             "with the dataset's class order first.")
    y = y_raw.astype(np.int64)
    if y.min() < 0 or y.max() >= P.shape[1]:
        raise ValueError(f"True class codes run from {y.min()} to {y.max()} but there are "
                         f"{P.shape[1]} probability columns; codes must be 0..{P.shape[1] - 1}.")
    if classes is not None and len(classes) != P.shape[1]:
        raise ValueError(f"{len(classes)} class labels for {P.shape[1]} probability columns; "
                         "pass one label per column, in code order.")
    return y, np.clip(P, 0.0, 1.0)


def _check_level(level: float) -> float:
    level = float(level)
    if not 0.0 < level < 1.0:
        raise ValueError(f"The interval level is {level}; pass a probability such as 0.95.")
    return level


# --------------------------------------------------------------------------------------------
# Per-row scores and the bootstrap
# --------------------------------------------------------------------------------------------


def row_scores(y: Any, P: Any) -> dict[str, np.ndarray]:
    """One number per row whose mean is the metric.

    Returns
    -------
    dict
        ``accuracy`` (1.0 when the most probable class — the first on ties — is the true one),
        ``log_loss`` (−ln max(P(true class), 1e-15)) and ``brier`` (Σ_k (P_ik − 1[y_i = k])²,
        Brier 1950).
    """
    y, P = check_predictions(y, P)
    rows = np.arange(len(y))
    onehot = np.zeros_like(P)
    onehot[rows, y] = 1.0
    return {"accuracy": (np.argmax(P, axis=1) == y).astype(float),
            "log_loss": -np.log(np.maximum(P[rows, y], _EPS)),
            "brier": np.sum((P - onehot) ** 2, axis=1)}


def bootstrap_mean_interval(values: np.ndarray, *, level: float = CI_LEVEL,
                            n_bootstrap: int = N_BOOTSTRAP, seed: int | np.random.SeedSequence = 0
                            ) -> np.ndarray:
    """Percentile bootstrap interval of the mean of each column of ``values``.

    Rows are resampled with replacement (the same resampled rows for every column, so the
    intervals of several metrics of one model, or of several models given as columns, come from
    common bootstrap samples).

    Parameters
    ----------
    values : (n,) or (n, m) array
    level : coverage of the interval
    n_bootstrap : number of replicates
    seed : seed of the replicates (same seed, same interval)

    Returns
    -------
    (m, 2) array of (lower, upper); NaN when n < 2.
    """
    level = _check_level(level)
    if int(n_bootstrap) < 1:
        raise ValueError(f"n_bootstrap is {n_bootstrap}; pass at least 1 (e.g. 2000).")
    v = np.asarray(values, dtype=float)
    v = v[:, None] if v.ndim == 1 else v
    n, m = v.shape
    if n < 2:
        return np.full((m, 2), np.nan)
    rng = np.random.default_rng(seed)
    reps = np.empty((int(n_bootstrap), m))
    columns = np.ascontiguousarray(v.T)  # one 1-D gather per column: 3x faster than v[idx]
    step = max(1, _CHUNK_CELLS // n)
    for start in range(0, int(n_bootstrap), step):
        b = min(step, int(n_bootstrap) - start)
        idx = rng.integers(0, n, size=(b, n))
        for j in range(m):
            reps[start:start + b, j] = columns[j][idx].mean(axis=1)
    alpha = 1.0 - level
    return np.quantile(reps, [alpha / 2, 1 - alpha / 2], axis=0).T


# --------------------------------------------------------------------------------------------
# AUC with DeLong's variance (fast algorithm of Sun & Xu 2014)
# --------------------------------------------------------------------------------------------


def _midranks(a: np.ndarray) -> np.ndarray:
    from scipy.stats import rankdata

    return rankdata(a, method="average", axis=0)


def _placements(positive: np.ndarray, scores: np.ndarray
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(AUCs, V10 of the positives, V01 of the negatives) of each score column.

    V10_i = share of negatives scored below positive i (ties count one half), V01_j = share of
    positives scored above negative j: DeLong et al. (1988) structural components, from the
    midranks as in Sun & Xu (2014).
    """
    pos, neg = scores[positive], scores[~positive]
    m, n = len(pos), len(neg)
    tz = _midranks(np.vstack([pos, neg]))
    v10 = (tz[:m] - _midranks(pos)) / n
    v01 = 1.0 - (tz[m:] - _midranks(neg)) / m
    auc = v10.mean(axis=0)
    return auc, v10, v01


def delong_auc(y_binary: Any, scores: Any) -> tuple[np.ndarray, np.ndarray]:
    """ROC AUCs of one or several score columns and DeLong's covariance matrix.

    Parameters
    ----------
    y_binary : (n,) bool / 0-1 array, True for the positive class
    scores : (n,) or (n, M) array, higher = more likely positive

    Returns
    -------
    auc : (M,) array
    cov : (M, M) array, Cov = S10 / m + S01 / n with S10, S01 the sample covariances
        (ddof 1) of the positives' and the negatives' placement values (DeLong et al. 1988,
        Sun & Xu 2014). NaN when fewer than two positives or two negatives.

    Raises
    ------
    ValueError
        When there are no positives or no negatives (the AUC is undefined).
    """
    positive = np.asarray(y_binary).astype(bool)
    s = np.asarray(scores, dtype=float)
    s = s[:, None] if s.ndim == 1 else s
    if s.shape[0] != len(positive):
        raise ValueError(f"{len(positive)} outcomes for {s.shape[0]} scores; pass one of each "
                         "per row.")
    m = int(positive.sum())
    n = len(positive) - m
    if m == 0 or n == 0:
        raise ValueError("The AUC needs both positive and negative rows; only one outcome "
                         "occurs here.")
    auc, v10, v01 = _placements(positive, s)
    M = s.shape[1]
    if m < 2 or n < 2:
        return auc, np.full((M, M), np.nan)
    cov = (np.atleast_2d(np.cov(v10, rowvar=False)) / m
           + np.atleast_2d(np.cov(v01, rowvar=False)) / n)
    return auc, cov


def macro_auc(y: Any, P: Any) -> tuple[float, float]:
    """ROC AUC with its DeLong standard error; macro one-vs-rest mean for K > 2 classes.

    Two classes: the AUC of column 1 (as :func:`bnma_core.evaluation.classification_metrics`).
    More classes: the mean over the classes c present in ``y`` of AUC_c (class c against the
    rest, scored by P[:, c]). Its variance generalises DeLong's: rows of class c are the
    positives of AUC_c and negatives of every other AUC_k, so to first order
    AUC_macro − θ = Σ_i T_i with, for a row i of class c,
    T_i = (1/K') [V10_c(i) / n_c + Σ_{k ≠ c} V01_k(i) / (N − n_k)], and
    Var = Σ_c n_c · s²_c(T), s²_c the sample variance of T over class c's rows. With two classes
    this is DeLong's variance exactly (AUC_0 = AUC_1).

    Returns
    -------
    (auc, se); (NaN, NaN) when fewer than two classes occur, se NaN when a class occurs once.
    """
    y, P = check_predictions(y, P)
    present = np.unique(y)
    if len(present) < 2:
        return float("nan"), float("nan")
    if P.shape[1] == 2:
        auc, cov = delong_auc(y == 1, P[:, 1])
        return float(auc[0]), float(np.sqrt(cov[0, 0]))
    K = len(present)
    N = len(y)
    counts = {int(c): int(np.sum(y == c)) for c in present}
    T = np.zeros(N)
    aucs = []
    for c in present:
        positive = y == c
        auc, v10, v01 = _placements(positive, P[:, [c]])
        aucs.append(float(auc[0]))
        T[positive] += v10[:, 0] / counts[int(c)]
        T[~positive] += v01[:, 0] / (N - counts[int(c)])
    T /= K
    if min(counts.values()) < 2:
        return float(np.mean(aucs)), float("nan")
    var = sum(counts[int(c)] * np.var(T[y == c], ddof=1) for c in present)
    return float(np.mean(aucs)), float(np.sqrt(var))


def wilson_interval(successes: int, n: int, *, level: float = CI_LEVEL) -> tuple[float, float]:
    """Wilson's (1927) score interval of a proportion ``successes / n``
    (``statsmodels.stats.proportion.proportion_confint(method="wilson")``): within [0, 1], of
    positive width for every n ≥ 1, also at 0 or n successes (DESIGN §11)."""
    from statsmodels.stats.proportion import proportion_confint

    level = _check_level(level)
    lo, hi = proportion_confint(int(successes), int(n), alpha=1.0 - level, method="wilson")
    p = int(successes) / int(n)  # rounding put 1 − 1e-16 above 10 of 10: hold the estimate
    return float(min(max(0.0, lo), p)), float(max(min(1.0, hi), p))


def _newcombe_variance(theta: float, m: int, n: int) -> float:
    """Newcombe's (2006, method 5) variance of an AUC θ from m positive and n negative rows:
    Hanley & McNeil's (1982) variance with Q1 = θ/(2 − θ), Q2 = 2θ²/(1 + θ) and both group
    sizes replaced by N* = (m + n)/2,
    θ(1 − θ)/(mn) · [2N* − 1 − (3N* − 3)/((2 − θ)(1 + θ))]."""
    half = (m + n) / 2.0
    return theta * (1.0 - theta) / (m * n) * (2 * half - 1 - (3 * half - 3)
                                               / ((2.0 - theta) * (1.0 + theta)))


def newcombe_auc_interval(auc: float, m: int, n: int, *, level: float = CI_LEVEL
                          ) -> tuple[float, float]:
    """Newcombe's (2006) score interval of an AUC from ``m`` positive and ``n`` negative rows.

    The limits are the θ with (AUC − θ)² = z² V(θ), V of :func:`_newcombe_variance` (a
    Wilson-type inversion: the variance is taken at the limit, not at the estimate), found by
    Brent's method. Unlike a Wald interval it does not collapse where the estimate is 0 or 1:
    an AUC of 1 from 50 and 89 rows gives about [0.96, 1].

    Reference: Newcombe, R. G. (2006). Confidence intervals for an effect size measure based on
    the Mann-Whitney statistic. Part 2: asymptotic methods and evaluation. Statistics in
    Medicine 25, 559-573.
    """
    from scipy.optimize import brentq
    from scipy.stats import norm

    level = _check_level(level)
    if m < 1 or n < 1:
        raise ValueError("The AUC needs both positive and negative rows; only one outcome "
                         "occurs here.")
    a = min(1.0, max(0.0, float(auc)))
    z = norm.ppf(0.5 + level / 2)

    def gap(theta: float) -> float:  # > 0 outside the interval, < 0 inside
        return abs(a - theta) - z * np.sqrt(max(0.0, _newcombe_variance(theta, m, n)))

    inside_lo = a if gap(a) < 0 else a - 1e-12  # V(a) = 0 at a = 1: step just inside
    inside_hi = a if gap(a) < 0 else a + 1e-12
    lower = 0.0 if a <= 0.0 or gap(0.0) <= 0 else brentq(gap, 0.0, inside_lo, xtol=1e-12)
    upper = 1.0 if a >= 1.0 or gap(1.0) <= 0 else brentq(gap, inside_hi, 1.0, xtol=1e-12)
    return float(lower), float(upper)


def _auc_interval(auc: float, se: float, z: float, level: float, y: np.ndarray, P: np.ndarray
                  ) -> tuple[float, float, str]:
    """DeLong's normal interval where its standard error is positive (above rounding error,
    :data:`_MIN_SE`), else Newcombe's score
    interval (one-vs-rest per class present and averaged for a macro AUC: as if the classes'
    AUCs moved together, so never narrower than theirs)."""
    if np.isfinite(se) and se > _MIN_SE:
        return max(0.0, auc - z * se), min(1.0, auc + z * se), "DeLong"
    present = np.unique(y)
    if len(present) < 2:
        return float("nan"), float("nan"), "DeLong"
    cols = [1] if P.shape[1] == 2 else list(present)
    bounds = []
    for c in cols:
        pos = y == c
        auc_c = auc if len(cols) == 1 else float(_placements(pos, P[:, [c]])[0][0])
        bounds.append(newcombe_auc_interval(auc_c, int(pos.sum()), int((~pos).sum()),
                                            level=level))
    lo, hi = np.mean(bounds, axis=0)
    return float(min(lo, auc)), float(max(hi, auc)), "Newcombe"


def auc_per_class(y: Any, P: Any, classes: Sequence[Any] | None = None, *,
                  level: float = CI_LEVEL) -> pd.DataFrame:
    """One-vs-rest AUC of each class present, with DeLong intervals.

    Returns
    -------
    DataFrame with columns ``class``, ``auc``, ``lower``, ``upper``, ``n_positive``,
    ``n_negative``.
    """
    from scipy.stats import norm

    y, P = check_predictions(y, P, classes)
    level = _check_level(level)
    z = norm.ppf(0.5 + level / 2)
    labels = list(classes) if classes is not None else list(range(P.shape[1]))
    rows = []
    present = np.unique(y)
    for c in range(P.shape[1]):
        m = int(np.sum(y == c))
        row = {"class": labels[c], "auc": np.nan, "lower": np.nan, "upper": np.nan,
               "n_positive": m, "n_negative": len(y) - m}
        if c in present and len(present) > 1:
            auc, cov = delong_auc(y == c, P[:, c])
            se = float(np.sqrt(cov[0, 0]))
            lo, hi, _ = _auc_interval(float(auc[0]), se, z, level, (y == c).astype(np.int64),
                                      np.column_stack([1.0 - P[:, c], P[:, c]]))
            row.update(auc=float(auc[0]), lower=lo, upper=hi)
        rows.append(row)
    return pd.DataFrame(rows)


# --------------------------------------------------------------------------------------------
# The table
# --------------------------------------------------------------------------------------------


def _block(y: np.ndarray, P: np.ndarray, level: float, n_bootstrap: int,
           seed: np.random.SeedSequence) -> list[dict[str, Any]]:
    from scipy.stats import norm

    scores = row_scores(y, P)
    right = int(scores["accuracy"].sum())
    lo, hi = wilson_interval(right, len(y), level=level)
    out = [{"metric": "accuracy", "estimate": right / len(y), "lower": lo, "upper": hi,
            "interval": "Wilson"}]
    names = ["log_loss", "brier"]
    values = np.column_stack([scores[k] for k in names])
    bounds = bootstrap_mean_interval(values, level=level, n_bootstrap=n_bootstrap, seed=seed)
    out += [{"metric": k, "estimate": float(values[:, j].mean()), "lower": float(bounds[j, 0]),
             "upper": float(bounds[j, 1]), "interval": "bootstrap"} for j, k in enumerate(names)]
    auc, se = macro_auc(y, P)
    z = norm.ppf(0.5 + level / 2)
    lo, hi, how = _auc_interval(auc, se, z, level, y, P)
    out.append({"metric": "auc", "estimate": auc, "lower": lo, "upper": hi, "interval": how})
    for row in out:
        row["n"] = len(y)
    return out


def metric_intervals(y: Any, P: Any | Mapping[str, Any], *, folds: Any = None,
                     classes: Sequence[Any] | None = None, level: float = CI_LEVEL,
                     n_bootstrap: int = N_BOOTSTRAP, seed: int = 0) -> pd.DataFrame:
    """Accuracy, log-loss, Brier score and AUC with intervals, pooled over folds and per fold.

    Parameters
    ----------
    y : (n,) int array of true class codes
    P : (n, K) class probabilities, or ``{method: (n, K) array}`` for several methods
        predicting the same rows (adds a ``method`` column; all methods share the bootstrap
        resamples, so their intervals are comparable)
    folds : (n,) fold id of each row, optional
    classes : the K class labels, optional (checked against ``P``'s columns)
    level : interval coverage (0.95)
    n_bootstrap : bootstrap replicates per interval
    seed : seed of the bootstrap; the pooled block and each fold get their own stream derived
        from it, so the same seed gives the same intervals

    Returns
    -------
    DataFrame
        Tidy: one row per (method,) scope, fold and metric, with columns ``scope``
        (``"pooled"`` or ``"fold"``), ``fold`` (NA for pooled), ``metric``, ``estimate``,
        ``lower``, ``upper``, ``interval`` (``"Wilson"`` for the accuracy, ``"bootstrap"``
        for log-loss and Brier, ``"DeLong"`` or ``"Newcombe"`` for the AUC), ``level``, ``n``.
        The pooled AUC ranks all out-of-fold rows together, so it differs from the mean of
        the per-fold AUCs; the pooled bootstrap resamples rows regardless of their fold.
    """
    if isinstance(P, Mapping):
        if not P:
            raise ValueError("No methods given; pass at least one probability matrix.")
        parts = [metric_intervals(y, p, folds=folds, classes=classes, level=level,
                                  n_bootstrap=n_bootstrap, seed=seed).assign(method=str(name))
                 for name, p in P.items()]
        out = pd.concat(parts, ignore_index=True)
        return out[["method", *[c for c in out.columns if c != "method"]]]
    y, P = check_predictions(y, P, classes)
    level = _check_level(level)
    seq = np.random.SeedSequence(int(seed))
    rows = [{"scope": "pooled", "fold": pd.NA, **r}
            for r in _block(y, P, level, n_bootstrap, seq)]
    if folds is not None:
        folds = np.asarray(folds)
        if folds.shape != y.shape:
            raise ValueError(f"{folds.size} fold ids for {len(y)} rows; pass one fold id per "
                             "row.")
        for i, f in enumerate(np.unique(folds)):
            sel = folds == f
            sub = np.random.SeedSequence([int(seed), i + 1])
            rows += [{"scope": "fold", "fold": f.item() if hasattr(f, "item") else f, **r}
                     for r in _block(y[sel], P[sel], level, n_bootstrap, sub)]
    out = pd.DataFrame(rows)
    out["level"] = level
    return out[["scope", "fold", "metric", "estimate", "lower", "upper", "interval", "level",
                "n"]]
