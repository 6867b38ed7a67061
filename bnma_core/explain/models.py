"""The models behind an averaged prediction and the structure-uncertainty interval (DESIGN §15).

Every averaging classifier predicts P(c | x) = sum_m pi_m(x) P(c | x, m): a weighted average of
the class posteriors of its models m (orders, feature sets, equivalence classes, subsamples,
bootstrap members, super-parents). Estimators that average expose their models through
``model_log_joints(X, codes=...)`` -> (log w_m (M,), log P(c, x_obs | m) (M, n, C), averaging):

* ``averaging="joint"`` (order BMA with ``combine="joint"``, MA-NB, AODE): the joints are
  averaged, so pi_m(x) ∝ w_m P(x_obs | m) — the posterior of model m given the training data
  *and* the case's findings;
* ``averaging="posterior"`` (K-best, subbagging, bagging, a single network): pi_m(x) = w_m.

:class:`ModelSet` holds them; :func:`model_set` builds it for any fitted estimator (one model,
``decomposed=False``, for an estimator that does not expose its models). The structure
interval is the weighted (1 - level)/2 and (1 + level)/2 quantiles of P(c | x, m) under
pi_m(x) (:func:`weighted_quantile`).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np

__all__ = ["KINDS", "ModelSet", "as_codes", "averaged_proba", "lse", "model_set",
           "models_and_proba", "weighted_quantile"]

KINDS = {
    "OrderMCMCBMA": "orders",
    "FixedOrderBMA": "one order",
    "MANaiveBayes": "feature sets",
    "KBestEC": "equivalence classes",
    "SubbaggingKBest": "subsamples x equivalence classes",
    "BaggingEBN": "bootstrap networks",
    "AdaBoostEBN": "boosted networks",
    "BANMix": "boosted networks",
    "AODE": "super-parents",
}
"""What the models of each averaging class are (plain words for the page and the CLI)."""

def lse(a: np.ndarray, axis: int = 0, keepdims: bool = False) -> np.ndarray:
    """log sum exp along ``axis`` (-inf when every term is -inf); several times faster than
    ``np.logaddexp.reduce``."""
    a = np.asarray(a, dtype=float)
    if 0 < a.shape[axis] <= 8:  # few terms (classes): pairwise np.logaddexp, no temporaries
        parts = np.moveaxis(a, axis, 0)
        out = parts[0]
        for part in parts[1:]:
            out = np.logaddexp(out, part)
        return np.expand_dims(out, axis) if keepdims else out
    m = np.max(a, axis=axis, keepdims=True)
    m = np.where(np.isfinite(m), m, 0.0)
    with np.errstate(divide="ignore"):
        out = np.log(np.sum(np.exp(a - m), axis=axis, keepdims=True)) + m
    return out if keepdims else np.squeeze(out, axis=axis)


MAX_CELLS = 2 ** 24
"""Largest models x rows x classes block computed at once (rows are processed in blocks)."""

MAX_TOTAL_CELLS = 2 ** 25
"""Largest models x rows x classes of one :class:`ModelSet` (256 MB of joints); more is refused
with the number of rows that fits."""


def as_codes(est: Any, X: Any) -> np.ndarray:
    """Rows as the estimator's feature codes (int64, -1 = missing), as ``predict_proba`` reads
    them (labels through the estimator's encoder, codes as given)."""
    X = np.asarray(X) if not hasattr(X, "columns") else X
    if isinstance(X, np.ndarray) and X.ndim == 1:
        X = X[None, :]
    return np.asarray(est._prepare_predict(X), dtype=np.int64)


def averaged_proba(est: Any, codes: np.ndarray) -> np.ndarray:
    """The estimator's own averaged P(c | x) of feature codes (its ``predict_proba``, one
    batched call; rows are grouped by missingness pattern inside)."""
    lp = est._predict_log_proba_codes(np.ascontiguousarray(codes, dtype=np.int32))
    lp = lp - np.logaddexp.reduce(lp, axis=1, keepdims=True)
    return np.exp(lp)


@dataclass(frozen=True)
class ModelSet:
    """The models behind the averaged prediction of some rows.

    Attributes
    ----------
    kind : str
        What the models are (:data:`KINDS`; "single structure" for one network, "not
        decomposed" for an estimator without ``model_log_joints``).
    log_weights : (M,) float
        log w_m, the weights of the models before the case is seen.
    log_joints : (M, n, C) float
        log P(c, x_obs | m); for an estimator that is not decomposed, its log P(c | x).
    averaging : {"joint", "posterior"}
        How the estimator combines its models (module docstring).
    decomposed : bool
        False when the estimator does not expose its models (then ``log_joints`` are not
        joints, and neither finding predictions nor the conflict measure are available).
    exact : bool
        False when the models are a Monte Carlo sample of the averaged ones (MA-NB beyond
        ``max_exact`` features): the average of the models then estimates the prediction.
    """

    kind: str
    log_weights: np.ndarray
    log_joints: np.ndarray
    averaging: str
    decomposed: bool = True
    exact: bool = True

    @property
    def n_models(self) -> int:
        return int(len(self.log_weights))

    @property
    def single(self) -> bool:
        """One model: the structure interval is a point."""
        return self.n_models == 1

    @cached_property
    def log_evidence(self) -> np.ndarray:
        """log P(x_obs | m), (M, n)."""
        return lse(self.log_joints, axis=2)

    @cached_property
    def log_posteriors(self) -> np.ndarray:
        """log P(c | x_obs, m), (M, n, C) (-inf rows where P(x_obs | m) = 0)."""
        ev = self.log_evidence
        with np.errstate(invalid="ignore"):
            out = self.log_joints - ev[:, :, None]
        return np.where(np.isfinite(ev)[:, :, None], out, -np.inf)

    @cached_property
    def model_weights(self) -> np.ndarray:
        """pi_m(x): each model's weight in the average of each row, (M, n), columns sum to 1."""
        lw = np.broadcast_to(self.log_weights[:, None], self.log_joints.shape[:2])
        if self.averaging == "joint":
            lw = lw + self.log_evidence
        z = lse(lw, axis=0, keepdims=True)
        with np.errstate(invalid="ignore"):
            w = np.exp(lw - z)
        return np.where(np.isfinite(w), w, 0.0)

    def posteriors(self) -> np.ndarray:
        """P(c | x_obs, m), (M, n, C)."""
        return np.exp(self.log_posteriors)

    def averaged(self) -> np.ndarray:
        """sum_m pi_m(x) P(c | x_obs, m), (n, C): the estimator's prediction."""
        return np.einsum("mn,mnc->nc", self.model_weights, self.posteriors())

    def interval(self, level: float = 0.9) -> np.ndarray:
        """Weighted ((1 - level)/2, (1 + level)/2) quantiles of P(c | x_obs, m) under pi_m(x):
        (n, C, 2)."""
        lo, hi = (1 - level) / 2, (1 + level) / 2
        P = self.posteriors()
        W = self.model_weights
        out = np.empty(P.shape[1:] + (2,))
        for c in range(P.shape[2]):
            out[:, c, 0] = weighted_quantile(P[:, :, c], W, lo)
            out[:, c, 1] = weighted_quantile(P[:, :, c], W, hi)
        return out

    def log_mixture_evidence(self) -> np.ndarray:
        """log sum_m w_m P(x_obs | m) / sum_m w_m, (n,): the averaged model's probability of
        the findings (DESIGN §15; used by the conflict measure and finding predictions)."""
        lw = self.log_weights - lse(self.log_weights)
        return lse(lw[:, None] + self.log_evidence, axis=0)


def weighted_quantile(values: np.ndarray, weights: np.ndarray, q: float) -> np.ndarray:
    """The q-quantile of each column of ``values`` (M, n) under ``weights`` (M, n): the
    smallest value whose cumulative weight (sorted ascending, weights normalised per column)
    reaches q (the lower inverse of the weighted distribution function)."""
    values = np.asarray(values, dtype=float)
    weights = np.asarray(weights, dtype=float)
    order = np.argsort(values, axis=0, kind="stable")
    v = np.take_along_axis(values, order, axis=0)
    w = np.take_along_axis(weights, order, axis=0)
    cw = np.cumsum(w, axis=0)
    total = cw[-1:]
    cw = cw / np.where(total > 0, total, 1.0)
    idx = np.argmax(cw >= q - 1e-12, axis=0)
    return v[idx, np.arange(v.shape[1])]


def model_set(est: Any, X: Any, codes: bool = False, **options: Any) -> ModelSet:
    """The models behind ``est``'s prediction of the rows ``X`` (module docstring).

    Parameters
    ----------
    est : fitted estimator
    X : array-like or DataFrame
        Rows as for ``predict_proba`` (missing values allowed), or feature codes with
        ``codes=True``.
    **options
        Passed to ``model_log_joints`` (MA-NB: ``max_exact``, ``n_sampled``,
        ``random_state``).
    """
    Xc = np.asarray(X, dtype=np.int64) if codes else as_codes(est, X)
    if Xc.ndim == 1:
        Xc = Xc[None, :]
    name = type(est).__name__
    fn = getattr(est, "model_log_joints", None)
    if fn is None:
        lp = np.log(averaged_proba(est, Xc))
        return ModelSet("not decomposed", np.zeros(1), lp[None], "posterior", decomposed=False)
    step = max(len(Xc), 1)
    if name == "MANaiveBayes":  # 2^N models: blocks of rows of at most MAX_CELLS cells
        p = Xc.shape[1]
        m = 2 ** p if p <= options.get("max_exact", 16) else options.get("n_sampled", 4096)
        cells = m * len(est.classes_)
        if cells * len(Xc) > MAX_TOTAL_CELLS:
            raise ValueError(f"{m} feature sets x {len(Xc)} rows is too much at once; pass at "
                             f"most {max(1, MAX_TOTAL_CELLS // cells)} rows per call.")
        step = max(1, MAX_CELLS // cells)
    blocks = [fn(Xc[s:s + step], codes=True, **options) for s in range(0, max(len(Xc), 1), step)]
    lw, averaging = blocks[0][0], blocks[0][2]
    if len(lw) * len(Xc) * len(est.classes_) > MAX_TOTAL_CELLS:
        raise ValueError(f"{len(lw)} models x {len(Xc)} rows is too much at once; pass at most "
                         f"{max(1, MAX_TOTAL_CELLS // (len(lw) * len(est.classes_)))} rows per "
                         "call.")
    lj = np.concatenate([b[1] for b in blocks], axis=1)
    kind = KINDS.get(name, "models")
    if len(lw) == 1 and name != "FixedOrderBMA":
        kind = "single structure"
    exact = not (name == "MANaiveBayes" and Xc.shape[1] > options.get("max_exact", 16))
    return ModelSet(kind, np.asarray(lw, dtype=float), lj, averaging, True, exact)


def models_and_proba(est: Any, codes: np.ndarray, **options: Any) -> tuple[ModelSet, np.ndarray]:
    """:func:`model_set` of feature codes and the averaged P(c | x): from the models when they
    are exact (the same numbers as ``predict_proba``, to rounding; one pass over the models
    instead of two), else from ``predict_proba``."""
    ms = model_set(est, codes, codes=True, **options)
    if ms.decomposed and ms.exact:
        return ms, ms.averaged()
    return ms, averaged_proba(est, codes)
