"""Calibration and clinical utility of predicted probabilities: CORP reliability diagrams with
consistency bands, calibration intercept and slope, decision curves.

Inputs are plain arrays, as in :mod:`bnma_core.metrics`: true class codes ``y``, an (n, K)
probability matrix ``P``, optional class labels. :func:`calibration_target` turns them into one
*forecast* (a probability in [0, 1]) and one binary *outcome* per row:

* two classes: P(positive class) and "the row is of the positive class" (positive class: code
  1 unless told);
* more classes, no positive class given: the **top-label** forecast max_k P_ik and "the most
  probable class is the true one" (Guo et al. 2017); with a positive class: that class against
  the rest.

What each function computes (formulas in DESIGN §11):

* :func:`corp_reliability` — the CORP reliability curve (Dimitriadis, Gneiting & Jordan 2021):
  the isotonic (pool-adjacent-violators) regression of the outcome on the forecast, i.e. the
  calibrated probability at each distinct forecast value, with consistency bands from
  outcomes resampled under the hypothesis that the forecasts are calibrated (y* ~
  Bernoulli(forecast)).
* :func:`corp_decomposition` — the CORP decomposition of the mean Brier score of the forecast,
  S̄ = MCB − DSC + UNC (miscalibration, discrimination, uncertainty).
* :func:`calibration_intercept_slope` — logistic recalibration (Cox 1958; Van Calster et al.
  2019): slope b of logit P(y = 1) = a + b·logit(p), and the calibration intercept a of
  logit P(y = 1) = a + logit(p) (slope fixed at 1), with Wald intervals.
* :func:`net_benefit`, :func:`decision_curve` — decision-curve analysis (Vickers & Elkin 2006):
  net benefit TP/n − FP/n · t/(1 − t) of treating the rows whose forecast is ≥ t, against
  treating all and treating none.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from .metrics import CI_LEVEL, check_predictions

__all__ = ["BAND_LEVEL", "calibration_target", "corp_reliability", "corp_decomposition",
           "calibration_intercept_slope", "calibration_summary", "net_benefit",
           "decision_curve", "DEFAULT_THRESHOLDS"]

BAND_LEVEL = 0.90
"""Level of the consistency bands (the default of Dimitriadis et al.'s ``reliabilitydiag``)."""

DEFAULT_THRESHOLDS = np.round(np.arange(0.01, 1.0, 0.01), 2)
"""Threshold probabilities of a decision curve: 0.01, 0.02, ..., 0.99."""

_EPS = 1e-15


# --------------------------------------------------------------------------------------------
# Forecast and outcome
# --------------------------------------------------------------------------------------------


def _positive_code(positive: Any, classes: Sequence[Any] | None, n_classes: int) -> int:
    if classes is not None:
        labels = [str(c) for c in classes]
        if str(positive) in labels:
            return labels.index(str(positive))
    if isinstance(positive, (int, np.integer)) and 0 <= int(positive) < n_classes:
        return int(positive)
    known = ", ".join(map(str, classes)) if classes is not None else f"0..{n_classes - 1}"
    raise ValueError(f"The positive class {positive!r} is not one of the classes; choose one "
                     f"of {known}.")


def calibration_target(y: Any, P: Any, *, positive: Any = None,
                       classes: Sequence[Any] | None = None
                       ) -> tuple[np.ndarray, np.ndarray, str]:
    """(forecast, outcome, description) of the binary event whose calibration is assessed.

    Parameters
    ----------
    y, P : true class codes and the (n, K) probability matrix
    positive : a class label (matched against ``classes``) or code; default code 1 for two
        classes, top-label for more
    classes : the K class labels, optional

    Returns
    -------
    forecast : (n,) float, the predicted probability of the event
    outcome : (n,) int 0/1, whether the event happened
    description : ``"P(<label>)"`` or ``"top-label"``
    """
    y, P = check_predictions(y, P, classes)
    K = P.shape[1]
    if positive is None and K > 2:
        top = np.argmax(P, axis=1)
        return P.max(axis=1), (top == y).astype(np.int64), "top-label"
    code = 1 if positive is None else _positive_code(positive, classes, K)
    label = classes[code] if classes is not None else code
    return P[:, code].copy(), (y == code).astype(np.int64), f"P({label})"


def _check_binary(forecast: Any, outcome: Any) -> tuple[np.ndarray, np.ndarray]:
    p = np.asarray(forecast, dtype=float).ravel()
    o = np.asarray(outcome).ravel()
    if p.shape != o.shape or p.size == 0:
        raise ValueError(f"{p.size} forecasts for {o.size} outcomes; pass one of each per row.")
    if not np.all(np.isfinite(p)) or p.min() < 0 or p.max() > 1:
        raise ValueError("Forecasts must be probabilities in [0, 1]; pass P(event), not a "
                         "score or a log-probability.")
    if not np.all(np.isin(o, (0, 1))):
        raise ValueError("Outcomes must be 0 or 1; use calibration_target to turn class codes "
                         "into the outcome of one event.")
    return p, o.astype(np.int64)


# --------------------------------------------------------------------------------------------
# CORP reliability diagram
# --------------------------------------------------------------------------------------------


def _pav_by_value(sums: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """Isotonic fit at each distinct forecast value (sorted) from outcome sums and counts."""
    from sklearn.isotonic import isotonic_regression

    return isotonic_regression(sums / counts, sample_weight=counts, y_min=0.0, y_max=1.0)


def corp_reliability(forecast: Any, outcome: Any, *, band_level: float | None = BAND_LEVEL,
                     n_resamples: int = 200, seed: int = 0) -> pd.DataFrame:
    """CORP reliability curve with consistency bands (Dimitriadis, Gneiting & Jordan 2021).

    The calibrated probability at a forecast value x is the isotonic regression of the outcome
    on the forecast (pool-adjacent-violators, ties in x pooled), so the curve is a monotone
    step function chosen without bins or bandwidths. The consistency band at x holds the
    central ``band_level`` share of the same fit repeated on outcomes drawn as y* ~
    Bernoulli(forecast): where the curve leaves the band, the forecasts are not calibrated at
    that level (the paper's resampling-based bands).

    Parameters
    ----------
    forecast : (n,) predicted probabilities of the event
    outcome : (n,) 0/1 outcomes
    band_level : coverage of the consistency band; None for no band
    n_resamples : resamples of the band (each one isotonic fit over the distinct forecast
        values: 200 take ~1 s for 20,000 distinct values)
    seed : seed of the resampling (same seed, same band)

    Returns
    -------
    DataFrame
        One row per distinct forecast value, ascending: ``forecast``, ``calibrated``,
        ``n`` (rows with that forecast), ``band_lower``, ``band_upper`` (NaN without a band).
    """
    p, o = _check_binary(forecast, outcome)
    values, inverse, counts = np.unique(p, return_inverse=True, return_counts=True)
    sums = np.bincount(inverse, weights=o, minlength=len(values))
    fit = _pav_by_value(sums, counts.astype(float))
    lower = upper = np.full(len(values), np.nan)
    if band_level is not None:
        if not 0 < band_level < 1:
            raise ValueError(f"band_level is {band_level}; pass a probability such as 0.90.")
        if int(n_resamples) < 2:
            raise ValueError(f"n_resamples is {n_resamples}; pass at least 2 (e.g. 1000).")
        rng = np.random.default_rng(seed)
        draws = rng.binomial(counts[None, :], values[None, :],
                             size=(int(n_resamples), len(values)))
        refits = np.vstack([_pav_by_value(d.astype(float), counts.astype(float))
                            for d in draws])
        a = (1 - band_level) / 2
        lower, upper = np.quantile(refits, [a, 1 - a], axis=0)
    return pd.DataFrame({"forecast": values, "calibrated": fit, "n": counts,
                         "band_lower": lower, "band_upper": upper})


def corp_decomposition(forecast: Any, outcome: Any) -> pd.DataFrame:
    """CORP decomposition of the mean Brier score of a binary forecast.

    With S̄_X the mean (p − y)² of the forecasts, S̄_C that of the CORP-recalibrated forecasts
    (:func:`corp_reliability`'s ``calibrated``) and S̄_R that of the constant forecast ȳ:
    MCB = S̄_X − S̄_C (miscalibration, ≥ 0), DSC = S̄_R − S̄_C (discrimination, ≥ 0),
    UNC = S̄_R, and S̄_X = MCB − DSC + UNC (Dimitriadis, Gneiting & Jordan 2021).

    Returns
    -------
    One-row DataFrame with ``mean_score``, ``miscalibration``, ``discrimination``,
    ``uncertainty``, ``n``.
    """
    p, o = _check_binary(forecast, outcome)
    curve = corp_reliability(p, o, band_level=None)
    recal = curve["calibrated"].to_numpy()[np.searchsorted(curve["forecast"].to_numpy(), p)]
    s_x = float(np.mean((p - o) ** 2))
    s_c = float(np.mean((recal - o) ** 2))
    s_r = float(np.mean((o.mean() - o) ** 2))
    return pd.DataFrame([{"mean_score": s_x, "miscalibration": s_x - s_c,
                          "discrimination": s_r - s_c, "uncertainty": s_r, "n": len(p)}])


# --------------------------------------------------------------------------------------------
# Calibration intercept and slope
# --------------------------------------------------------------------------------------------


def _logistic_fit(X: np.ndarray, y: np.ndarray, offset: np.ndarray, max_iter: int = 100
                  ) -> tuple[np.ndarray, np.ndarray, bool]:
    """Maximum-likelihood logistic regression by Newton steps with step halving:
    (coefficients, covariance = inverse Fisher information, converged)."""
    from scipy.special import expit

    def loglik(beta: np.ndarray) -> float:
        eta = X @ beta + offset
        return float(np.sum(y * eta - np.logaddexp(0.0, eta)))

    beta = np.zeros(X.shape[1])
    ll = loglik(beta)
    H = np.eye(X.shape[1])
    for _ in range(max_iter):
        mu = expit(X @ beta + offset)
        H = X.T @ (X * (mu * (1 - mu))[:, None])
        grad = X.T @ (y - mu)
        try:
            step = np.linalg.solve(H, grad)
        except np.linalg.LinAlgError:
            return beta, np.full_like(H, np.nan), False
        t = 1.0
        while t > 1e-10 and loglik(beta + t * step) < ll - 1e-12:
            t /= 2
        beta = beta + t * step
        ll = loglik(beta)
        if np.max(np.abs(t * step)) < 1e-10:
            mu = expit(X @ beta + offset)
            H = X.T @ (X * (mu * (1 - mu))[:, None])
            try:
                return beta, np.linalg.inv(H), bool(np.all(np.abs(beta) < 1e3))
            except np.linalg.LinAlgError:
                return beta, np.full_like(H, np.nan), False
    return beta, np.full_like(H, np.nan), False


def calibration_intercept_slope(forecast: Any, outcome: Any, *, level: float = CI_LEVEL
                                ) -> pd.DataFrame:
    """Calibration intercept and slope by logistic recalibration, with Wald intervals.

    With L = logit(p) (p clipped to [1e-15, 1 − 1e-15]):

    * slope b from logit P(y = 1) = a + b·L (Cox 1958): b < 1 means the forecasts are too
      extreme (over-confident), b > 1 too modest;
    * intercept a from logit P(y = 1) = a + L, the slope fixed at 1 (calibration-in-the-large):
      a < 0 means the forecasts are too high on average (Van Calster et al. 2019).

    A perfectly calibrated forecast has intercept 0 and slope 1.

    Returns
    -------
    DataFrame with rows ``intercept`` and ``slope`` and columns ``parameter``, ``estimate``,
    ``se``, ``lower``, ``upper``, ``level``, ``n``, ``converged`` (False — and NaN estimates —
    when the forecasts separate the outcomes perfectly, so the maximum-likelihood fit diverges).

    Raises
    ------
    ValueError
        When only one outcome occurs (nothing to recalibrate against).
    """
    from scipy.special import logit
    from scipy.stats import norm

    p, o = _check_binary(forecast, outcome)
    if o.min() == o.max():
        raise ValueError("Calibration intercept and slope need both outcomes; only "
                         f"{'events' if o[0] else 'non-events'} occur here.")
    if not 0 < level < 1:
        raise ValueError(f"The interval level is {level}; pass a probability such as 0.95.")
    L = logit(np.clip(p, _EPS, 1 - _EPS))
    n = len(p)
    z = norm.ppf(0.5 + level / 2)
    rows = []
    fits = {"intercept": (np.ones((n, 1)), L, 0), "slope": (np.column_stack([np.ones(n), L]),
                                                            np.zeros(n), 1)}
    for name, (X, offset, j) in fits.items():
        beta, cov, ok = _logistic_fit(X, o.astype(float), offset)
        est, se = (float(beta[j]), float(np.sqrt(cov[j, j]))) if ok else (np.nan, np.nan)
        rows.append({"parameter": name, "estimate": est, "se": se, "lower": est - z * se,
                     "upper": est + z * se, "level": level, "n": n, "converged": ok})
    return pd.DataFrame(rows)


def calibration_summary(y: Any, P: Any | Mapping[str, Any], *, positive: Any = None,
                        classes: Sequence[Any] | None = None, folds: Any = None,
                        level: float = CI_LEVEL) -> pd.DataFrame:
    """Calibration intercept and slope and the CORP decomposition, pooled and per fold, for one
    or several methods.

    Parameters
    ----------
    y, P : true class codes and the (n, K) probabilities, or ``{method: (n, K) array}``
    positive, classes : the event, as in :func:`calibration_target` (top-label for K > 2
        without ``positive``)
    folds : (n,) fold id of each row, optional
    level : interval coverage

    Returns
    -------
    Tidy DataFrame: (``method``,) ``scope`` (``"pooled"`` / ``"fold"``), ``fold``, ``target``,
    then :func:`calibration_intercept_slope`'s columns, then ``miscalibration``,
    ``discrimination``, ``uncertainty`` and ``mean_score`` of the block. A block in which only
    one outcome occurs gets NaN estimates and ``converged`` False.
    """
    if isinstance(P, Mapping):
        if not P:
            raise ValueError("No methods given; pass at least one probability matrix.")
        out = pd.concat([calibration_summary(y, p, positive=positive, classes=classes,
                                             folds=folds, level=level).assign(method=str(m))
                         for m, p in P.items()], ignore_index=True)
        return out[["method", *[c for c in out.columns if c != "method"]]]
    forecast, outcome, target = calibration_target(y, P, positive=positive, classes=classes)
    blocks = [("pooled", pd.NA, np.ones(len(outcome), dtype=bool))]
    if folds is not None:
        folds = np.asarray(folds)
        if folds.shape != outcome.shape:
            raise ValueError(f"{folds.size} fold ids for {len(outcome)} rows; pass one fold id "
                             "per row.")
        blocks += [("fold", f.item() if hasattr(f, "item") else f, folds == f)
                   for f in np.unique(folds)]
    parts = []
    for scope, fold, sel in blocks:
        f, o = forecast[sel], outcome[sel]
        if o.min() == o.max():
            tab = pd.DataFrame({"parameter": ["intercept", "slope"], "estimate": np.nan,
                                "se": np.nan, "lower": np.nan, "upper": np.nan, "level": level,
                                "n": len(o), "converged": False})
        else:
            tab = calibration_intercept_slope(f, o, level=level)
        dec = corp_decomposition(f, o).iloc[0]
        for col in ("miscalibration", "discrimination", "uncertainty", "mean_score"):
            tab[col] = float(dec[col])
        parts.append(tab.assign(scope=scope, fold=fold, target=target))
    out = pd.concat(parts, ignore_index=True)
    first = ["scope", "fold", "target"]
    return out[[*first, *[c for c in out.columns if c not in first]]]


# --------------------------------------------------------------------------------------------
# Decision curves
# --------------------------------------------------------------------------------------------


def _thresholds(thresholds: Any) -> np.ndarray:
    t = DEFAULT_THRESHOLDS if thresholds is None else np.asarray(thresholds, dtype=float).ravel()
    if t.size == 0 or not np.all(np.isfinite(t)) or t.min() < 0 or t.max() >= 1:
        raise ValueError("Threshold probabilities must lie in [0, 1); pass e.g. "
                         "numpy.arange(0.01, 1, 0.01).")
    return t


def net_benefit(forecast: Any, outcome: Any, thresholds: Any = None) -> pd.DataFrame:
    """Net benefit of treating the rows whose forecast is at least the threshold t.

    NB(t) = TP(t)/n − FP(t)/n · t/(1 − t) (Vickers & Elkin 2006): true positives gain
    1, false positives cost the odds of the threshold, the exchange rate a patient who chooses
    t accepts.

    Returns
    -------
    DataFrame with ``threshold``, ``n``, ``prevalence``, ``test_pos_rate``, ``tp_rate``
    (TP/n), ``fp_rate`` (FP/n), ``net_benefit`` — the columns and values of ``dcurves.dca``.
    """
    p, o = _check_binary(forecast, outcome)
    t = _thresholds(thresholds)
    treated = p[None, :] >= t[:, None]
    n = len(p)
    tp = (treated & (o[None, :] == 1)).sum(axis=1) / n
    fp = (treated & (o[None, :] == 0)).sum(axis=1) / n
    return pd.DataFrame({"threshold": t, "n": n, "prevalence": o.mean(),
                         "test_pos_rate": treated.mean(axis=1), "tp_rate": tp, "fp_rate": fp,
                         "net_benefit": tp - fp * t / (1 - t)})


def decision_curve(y: Any, P: Any | Mapping[str, Any], *, positive: Any = None,
                   classes: Sequence[Any] | None = None, thresholds: Any = None
                   ) -> pd.DataFrame:
    """Decision curves of one or several methods against treating all and treating none.

    Parameters
    ----------
    y : true class codes (two classes)
    P : (n, 2) probabilities, or ``{method: (n, 2) array}``
    positive : the class whose prediction triggers treatment (label or code; default code 1)
    classes : the two class labels, optional
    thresholds : threshold probabilities in [0, 1) (default 0.01..0.99)

    Returns
    -------
    Long DataFrame: the columns of :func:`net_benefit` plus ``model`` first — each method's
    name, ``"treat all"`` (NB = π − (1 − π)·t/(1 − t), π the prevalence) and ``"treat none"``
    (NB = 0).
    """
    mats = dict(P) if isinstance(P, Mapping) else {"model": P}
    if not mats:
        raise ValueError("No methods given; pass at least one probability matrix.")
    parts = []
    outcome = None
    for name, mat in mats.items():
        if np.asarray(mat).ndim == 2 and np.asarray(mat).shape[1] != 2:
            raise ValueError(f"Decision curves need two classes, {name!r} has "
                             f"{np.asarray(mat).shape[1]}; choose a positive class and merge "
                             "the others first.")
        forecast, outcome, _ = calibration_target(y, mat, positive=positive, classes=classes)
        parts.append(net_benefit(forecast, outcome, thresholds).assign(model=str(name)))
    parts.append(net_benefit(np.ones(len(outcome)), outcome, thresholds).assign(
        model="treat all"))
    none = net_benefit(np.zeros(len(outcome)), outcome, thresholds)
    none[["test_pos_rate", "tp_rate", "fp_rate", "net_benefit"]] = 0.0
    parts.append(none.assign(model="treat none"))
    out = pd.concat(parts, ignore_index=True)
    return out[["model", *[c for c in out.columns if c != "model"]]]
