"""Shapley values of the findings of one case (DESIGN §15).

The game: v(S) = log-odds of the class ĉ given only the findings in S,

    v(S) = log P(ĉ | x_S) - log (1 - P(ĉ | x_S)),

where a finding left out is *marginalised* by the model itself (its code set to -1, the
model's own missing-value handling: no background sample). The Shapley value of finding i
(Shapley 1953) is

    phi_i = sum_{S ⊆ F∖{i}} |S|! (N - |S| - 1)! / N! [v(S ∪ {i}) - v(S)],

N = |F| the findings of the case; sum_i phi_i = v(F) - v(∅) (efficiency). Up to
:data:`EXACT_LIMIT` findings every one of the 2^N coalitions is one row of a single batched
prediction (the estimator groups the rows by missingness pattern); beyond, phi_i is the mean
marginal contribution over random orders of the findings (Štrumbelj & Kononenko 2014), with
its standard error.

For an average over models the same game is played by every model m with its own class
posterior; the values phi_i^m give each finding's mean contribution sum_m pi_m phi_i^m and its
spread across the models (pi_m = the model's weight for the full case). For a stack the models
are its components' models flattened, with weights w_k pi_km(x) (a component that is not
decomposed, UKDB, is one model; :mod:`bnma_core.explain.models`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from .models import as_codes, is_stack, lse, model_set

__all__ = ["EXACT_LIMIT", "ShapleyResult", "shapley_values"]

EXACT_LIMIT = 16
"""Most findings for the exact (all-coalitions) Shapley values."""

MAX_SPREAD_CELLS = 2 ** 22
"""Largest models x coalitions block for the per-model values (else no spread is given)."""


@dataclass(frozen=True)
class ShapleyResult:
    """Contributions of the findings of one case to the log-odds of class ``target``.

    Attributes
    ----------
    findings : (N,) int
        Feature indices of the findings (the observed features of the case).
    names : list of str
        Their names.
    values : (N,) float
        Shapley values of the averaged model's log-odds (nats; > 0 supports ``target``).
    standard_error : (N,) float
        Monte Carlo standard error (zeros when exact).
    full, empty : float
        v(F) (the case's log-odds) and v(∅) (no finding known).
    target : int
        Index of the class in ``classes_``.
    exact : bool
    n_permutations : int
        Sampled orders of the findings (0 when exact).
    model_mean, model_sd : (N,) float or None
        Weighted mean and standard deviation over the averaged models of each model's own
        Shapley value (None when the estimator does not expose its models or they are too
        many for the coalitions).
    model_values : (M, N) float or None
    model_weights : (M,) float or None
    """

    findings: np.ndarray
    names: list[str]
    values: np.ndarray
    standard_error: np.ndarray
    full: float
    empty: float
    target: int
    exact: bool
    n_permutations: int = 0
    model_mean: np.ndarray | None = None
    model_sd: np.ndarray | None = None
    model_values: np.ndarray | None = None
    model_weights: np.ndarray | None = None

    def to_dict(self, classes: Any = None) -> dict:
        """JSON-ready: the class, v(F), v(∅), and each finding's contribution keyed by its
        name (``classes``: the estimator's ``classes_``, to name the class)."""
        return {"target": self.target if classes is None else str(classes[self.target]),
                "log_odds": self.full, "log_odds_no_findings": self.empty,
                "exact": self.exact, "n_permutations": self.n_permutations,
                "contributions": {d.pop("finding"): d for d in self.ranked()}}

    def ranked(self) -> list[dict]:
        """Findings by decreasing |value| as dicts (name, value, se, mean, sd)."""
        out = []
        for k in np.argsort(-np.abs(self.values), kind="stable"):
            d = {"finding": self.names[k], "value": float(self.values[k]),
                 "standard_error": float(self.standard_error[k])}
            if self.model_mean is not None:
                d["model_mean"] = float(self.model_mean[k])
                d["model_sd"] = float(self.model_sd[k])
            out.append(d)
        return out


def _log_odds(lp: np.ndarray, target: int) -> np.ndarray:
    """log P(target) - log(1 - P(target)) from log probabilities (..., C), in log space."""
    with np.errstate(invalid="ignore"):
        lp = lp - lse(lp, axis=-1, keepdims=True)
        others = np.delete(lp, target, axis=-1)
        return lp[..., target] - lse(others, axis=-1)


def _coalition_weights(N: int) -> np.ndarray:
    """|S|! (N - |S| - 1)! / N! for |S| = 0..N-1."""
    return np.array([math.exp(math.lgamma(s + 1) + math.lgamma(N - s) - math.lgamma(N + 1))
                     for s in range(N)])


def _exact(v: np.ndarray, N: int) -> np.ndarray:
    """Shapley values of games v (..., 2^N) indexed by coalition bitmask: (..., N)."""
    masks = np.arange(2 ** N)
    size = np.array([bin(m).count("1") for m in masks])
    wt = _coalition_weights(N)
    out = np.empty(v.shape[:-1] + (N,))
    for i in range(N):
        without = masks[(masks >> i) & 1 == 0]
        out[..., i] = (v[..., without | (1 << i)] - v[..., without]) @ wt[size[without]]
    return out


def shapley_values(est: Any, x: Any, target: int | None = None, exact_limit: int = EXACT_LIMIT,
                   n_permutations: int = 256, seed: Any = 0, spread: bool = True,
                   codes: bool = False) -> ShapleyResult:
    """Shapley values of the findings of one case for the log-odds of class ``target``
    (module docstring).

    Parameters
    ----------
    est : fitted estimator
    x : one row (array-like or one-row DataFrame), as for ``predict_proba``
    target : int, optional
        Index of the class in ``est.classes_`` (default: the predicted class ĉ).
    exact_limit : int
        Exact over all 2^N coalitions up to this many findings, else sampled.
    n_permutations : int
        Random orders of the findings when sampled (seed ``seed``).
    spread : bool
        Also compute every averaged model's own values (mean and spread).
    codes : bool
        ``x`` is already feature codes.
    """
    row = np.asarray(x, dtype=np.int64) if codes else as_codes(est, x)
    row = row.reshape(-1)
    names = _feature_names(est, len(row))
    F = np.flatnonzero(row >= 0)
    N = len(F)
    C = len(est.classes_)

    def predict(rows: np.ndarray) -> np.ndarray:
        return est._predict_log_proba_codes(np.ascontiguousarray(rows, dtype=np.int32))

    # the full case first: its models (for the spread) and the predicted class
    probe = None
    if spread and (hasattr(est, "model_log_joints") or is_stack(est)):
        probe = model_set(est, row[None], codes=True)
    if probe is not None and probe.exact:
        with np.errstate(divide="ignore"):
            full_lp = np.log(probe.averaged()[0])
    else:
        full_lp = predict(row[None])[0]
    if target is None:
        target = int(np.argmax(full_lp))
    if not 0 <= int(target) < C:
        raise ValueError(f"target must be a class index 0..{C - 1} (got {target!r}).")
    target = int(target)
    full = float(_log_odds(full_lp, target))
    if N == 0:
        z = np.zeros(0)
        return ShapleyResult(F, [], z, z, full, full, target, True)
    exact = N <= int(exact_limit)
    rng = np.random.default_rng(seed)
    if exact:  # coalition bitmask m over the findings: row m (0 = none, 2^N - 1 = all)
        masks = np.arange(2 ** N)
        keep = ((masks[:, None] >> np.arange(N)[None, :]) & 1).astype(bool)
    else:  # permutation k: rows k (N + 1) + j hold its first j findings
        P = int(n_permutations)
        if P < 2:
            raise ValueError("n_permutations must be at least 2.")
        perms = np.argsort(rng.random((P, N)), axis=1)
        keep = np.zeros((P, N + 1, N), dtype=bool)
        for k in range(1, N + 1):
            keep[np.arange(P)[:, None], k, perms[:, :k]] = True
        keep = keep.reshape(-1, N)
    rows = np.repeat(row[None], len(keep), axis=0)
    sub = rows[:, F]
    sub[~keep] = -1
    rows[:, F] = sub

    def values_of(v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        if exact:
            return _exact(v, N), np.zeros(v.shape[:-1] + (N,))
        vv = v.reshape(v.shape[:-1] + (P, N + 1))
        delta = np.diff(vv, axis=-1)                     # contribution of perms[:, k]
        contrib = np.empty_like(delta)
        np.put_along_axis(contrib, np.broadcast_to(perms, delta.shape), delta, axis=-1)
        mean = contrib.mean(axis=-2)
        se = contrib.std(axis=-2, ddof=1) / math.sqrt(P)
        return mean, se

    mm = msd = mv = mw = None
    ms = None
    if probe is not None and probe.n_models > 1 and \
            probe.n_models * len(rows) * C <= MAX_SPREAD_CELLS:
        ms = model_set(est, rows, codes=True)
    if ms is not None and ms.exact:  # the models give the averaged prediction too (one pass)
        with np.errstate(divide="ignore"):
            v = _log_odds(np.log(ms.averaged()), target)
    else:
        v = _log_odds(predict(rows), target)
    values, se = values_of(v)
    empty = float(v[0])
    if ms is not None:
        vm = _log_odds(ms.log_posteriors, target)           # (M, rows)
        mv = values_of(vm)[0]
        mw = probe.model_weights[:, 0]
        ok = np.isfinite(mv).all(axis=1) & (mw > 0)
        w = np.where(ok, mw, 0.0)
        w = w / w.sum() if w.sum() > 0 else w
        mvz = np.where(ok[:, None], mv, 0.0)
        mm = w @ mvz
        msd = np.sqrt(np.maximum(w @ (mvz - mm[None]) ** 2, 0.0))
    return ShapleyResult(F, [names[j] for j in F], values, se, full, empty, target, exact,
                         0 if exact else P, mm, msd, mv, mw)


def _feature_names(est: Any, p: int) -> list[str]:
    fn = getattr(est, "_variable_names", None)
    if fn is not None:
        return list(fn()[0])
    return [f"x{j}" for j in range(p)]
