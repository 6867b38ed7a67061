"""The models behind an averaged prediction and the structure-uncertainty interval (DESIGN §15).

Every averaging classifier predicts P(c | x) = sum_m pi_m(x) P(c | x, m): a weighted average of
the class posteriors of its models m (orders, feature sets, equivalence classes, subsamples,
bootstrap members, super-parents). Estimators that average expose their models through
``model_log_joints(X, codes=...)`` -> (log w_m (M,), log P(c, x_obs | m) (M, n, C), averaging):

* ``averaging="joint"`` (order BMA with ``combine="joint"``, MA-NB, AODE): the joints are
  averaged, so pi_m(x) ∝ w_m P(x_obs | m) — the posterior of model m given the training data
  *and* the case's findings;
* ``averaging="posterior"`` (K-best, subbagging, bagging, a single network): pi_m(x) = w_m.

A stack (:class:`~bnma_core.classifiers.stacking.PredictiveStacking`, ``averaging="stack"``)
mixes the class posteriors of its components, P(c | x) = sum_k w_k P_k(c | x). Each component
that is itself an average decomposes into its models with weights pi_km(x) as above; the
flattened models carry the weights w_k pi_km(x), and a component without models (UKDB) counts
as one model (its :class:`Part` says so).

The probability of findings comes from one joint, the *averaged joint* (:meth:`ModelSet.joint`):
P(c, x) = sum_m w_m P(c, x | m) / sum_m w_m over the models that define one, so that given
findings each model weighs pi_m(x) ∝ w_m P(x_obs | m) whatever the estimator's own averaging
(K-best, subbagging, bagging average posteriors with w_m; a hard vote's members enter with
their own joints). A stack of conditionals defines no joint P(x); its averaged joint is the
mixture sum_k w'_k P_k(c, x) of the components that define one, their weights renormalised
(:meth:`ModelSet.log_mixture_evidence`).

:class:`ModelSet` holds them; :func:`model_set` builds it for any fitted estimator (one model,
``decomposed=False``, for an estimator that does not expose its models). The structure
interval is the weighted (1 - level)/2 and (1 + level)/2 quantiles of P(c | x, m) under
pi_m(x) (:func:`weighted_quantile`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np

__all__ = ["EXACT_LIMIT", "KINDS", "ModelSet", "Part", "as_codes", "averaged_proba",
           "defines_joint", "is_additive", "is_stack", "lse", "model_set", "models_and_proba",
           "weighted_quantile"]

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
    "PredictiveStacking": "models of the stacked methods",
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


def is_stack(est: Any) -> bool:
    """``est`` is a mixture of fitted components (``stack_components``): a stack."""
    return hasattr(est, "stack_components")


def defines_joint(est: Any) -> bool:
    """``est`` gives the probability of findings P(x_obs): it exposes its models, or it is a
    stack with at least one component that does (DESIGN §15)."""
    if is_stack(est):
        return any(defines_joint(m) for _, _, m in est.stack_components())
    return hasattr(est, "model_log_joints")


@dataclass(frozen=True)
class Part:
    """One component of a stack inside a flattened :class:`ModelSet`.

    Attributes
    ----------
    name : str
        The component's registry name.
    weight : float
        w_k, its weight in the stack.
    models : ModelSet
        Its own models (one "not decomposed" model for UKDB).
    start, stop : int
        Its models' rows in the flattened set.
    estimator : fitted estimator
    """

    name: str
    weight: float
    models: ModelSet
    start: int
    stop: int
    estimator: Any = None

    @property
    def joint(self) -> bool:
        """The component defines the probability of findings."""
        return self.models.decomposed


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
    averaging : {"joint", "posterior", "stack"}
        How the estimator combines its models (module docstring).
    decomposed : bool
        False when the estimator does not expose its models (then ``log_joints`` are not
        joints, and neither finding predictions nor the conflict measure are available).
    exact : bool
        False when the models are a Monte Carlo sample of the averaged ones (MA-NB beyond
        ``max_exact`` features): the average of the models then estimates the prediction.
    parts : tuple of Part
        A stack's components (empty otherwise); ``log_joints`` then holds each component's
        rows (joints, or log P(c | x) for a component that is not decomposed) and
        ``log_weights`` log w_k + log w_km.
    member_joints : (M, n, C) float or None
        The models' own log P(c, x_obs | m) when ``log_joints`` hold something else (a hard
        vote: each member's one-hot vote times P(x_obs | m)); used by :meth:`joint`.
    """

    kind: str
    log_weights: np.ndarray
    log_joints: np.ndarray
    averaging: str
    decomposed: bool = True
    exact: bool = True
    parts: tuple = ()
    member_joints: np.ndarray | None = None

    @property
    def without_joint(self) -> tuple[str, ...]:
        """A stack's components that define no probability of findings (left out of
        :meth:`log_mixture_evidence` and :meth:`finding_probabilities`, the others'
        weights renormalised)."""
        return tuple(p.name for p in self.parts if not p.joint)

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
        """pi_m(x): each model's weight in the average of each row, (M, n), columns sum to 1
        (a stack: w_k pi_km(x) over its components' models)."""
        if self.parts:
            w = np.concatenate([p.weight * p.models.model_weights for p in self.parts])
            z = w.sum(axis=0, keepdims=True)
            return w / np.where(z > 0, z, 1.0)
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

    def joint(self) -> ModelSet:
        """The averaged joint (module docstring, DESIGN §15): the models that define a joint
        with their weights w_m before the findings and their own joints, averaged as joints
        (``averaging="joint"``: given findings, pi_m(x) ∝ w_m P(x_obs | m)). A stack: the
        flattened models of its components that define one, component k's weighing
        w'_k w_km / sum_m w_km (w'_k renormalised among them); ``without_joint`` names the
        others. Its :meth:`averaged` is P(c | x_obs) under that joint, which differs from the
        estimator's prediction when the estimator averages posteriors or is a stack."""
        if self.parts:
            joint = self._joint_parts()
            lk = np.log([p.weight for p in joint])
            lk = lk - lse(lk)
            subs = [p.models.joint() for p in joint]
            return ModelSet(self.kind, np.concatenate([w + s.log_weights - lse(s.log_weights)
                                                       for w, s in zip(lk, subs)]),
                            np.concatenate([s.log_joints for s in subs]), "joint", True,
                            all(s.exact for s in subs))
        if not self.decomposed:
            raise ValueError("This method does not give the probability of findings.")
        lj = self.log_joints if self.member_joints is None else self.member_joints
        return ModelSet(self.kind, self.log_weights, lj, "joint", True, self.exact)

    def log_mixture_evidence(self) -> np.ndarray:
        """log sum_m w_m P(x_obs | m) / sum_m w_m, (n,): the probability of the findings under
        the averaged joint (:meth:`joint`; DESIGN §15; the conflict measure and the finding
        predictions). A stack: log sum_k w'_k P_k(x_obs) over the components that define it
        (weights w_k renormalised among them)."""
        if self.parts:
            return self.joint().log_mixture_evidence()
        lw = self.log_weights - lse(self.log_weights)
        return lse(lw[:, None] + self.log_evidence, axis=0)

    def _joint_parts(self) -> list[Part]:
        joint = [p for p in self.parts if p.joint and p.weight > 0]
        if not joint:
            raise ValueError("No method in this stack gives the probability of findings; "
                             "add one that does (e.g. bma10, manb, nb) to its candidates.")
        return joint


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
    if is_stack(est):
        return _stack_model_set(est, Xc, **options)
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
    member = None
    if getattr(est, "voting", "soft") == "hard":  # the members' own joints (ModelSet.joint)
        member = fn(Xc, codes=True, voting="soft")[1]
    return ModelSet(kind, np.asarray(lw, dtype=float), lj, averaging, True, exact,
                    member_joints=member)


def _stack_model_set(est: Any, Xc: np.ndarray, **options: Any) -> ModelSet:
    """The flattened models of a stack (module docstring): each component's
    :func:`model_set` on the stack's classes (``options`` reach MA-NB components only)."""
    C = len(est.classes_)
    parts, lw, lj, start = [], [], [], 0
    for name, w, comp in est.stack_components():
        opts = options if type(comp).__name__ == "MANaiveBayes" else {}
        sub = model_set(comp, Xc, codes=True, **opts)
        cls = np.asarray(comp.classes_, dtype=np.int64)
        if len(cls) != C or (cls != np.arange(C)).any():  # a component missing a class
            full = np.full(sub.log_joints.shape[:2] + (C,), -np.inf)
            full[:, :, cls] = sub.log_joints
            member = None
            if sub.member_joints is not None:
                member = np.full_like(full, -np.inf)
                member[:, :, cls] = sub.member_joints
            sub = ModelSet(sub.kind, sub.log_weights, full, sub.averaging, sub.decomposed,
                           sub.exact, sub.parts, member)
        parts.append(Part(name, w, sub, start, start + sub.n_models, comp))
        start += sub.n_models
        lw.append(math.log(w) + sub.log_weights - lse(sub.log_weights))
        lj.append(sub.log_joints)
    if start * len(Xc) * C > MAX_TOTAL_CELLS:
        raise ValueError(f"{start} models x {len(Xc)} rows is too much at once; pass at most "
                         f"{max(1, MAX_TOTAL_CELLS // (start * C))} rows per call.")
    return ModelSet(KINDS.get(type(est).__name__, KINDS["PredictiveStacking"]),
                    np.concatenate(lw), np.concatenate(lj, axis=0), "stack",
                    any(p.joint for p in parts), all(p.models.exact for p in parts),
                    tuple(parts))


def models_and_proba(est: Any, codes: np.ndarray, **options: Any) -> tuple[ModelSet, np.ndarray]:
    """:func:`model_set` of feature codes and the averaged P(c | x): from the models when they
    are exact (the same numbers as ``predict_proba``, to rounding; one pass over the models
    instead of two), else from ``predict_proba``."""
    ms = model_set(est, codes, codes=True, **options)
    if ms.decomposed and ms.exact:
        return ms, ms.averaged()
    return ms, averaged_proba(est, codes)


EXACT_LIMIT = 16
"""Most findings for the exact (all-coalitions) Shapley values."""


def is_additive(est: Any) -> bool:
    """``est`` predicts as one naive Bayes network: log P(c | x_S) = log P(c) + sum over the
    findings in S of log theta_i(x_i | c), up to a constant (naive Bayes; MA-NB, whose average
    over the 2^N feature sets is the naive network of theta*, Dash & Cooper 2002 eq. 10-12),
    a left-out finding dropped exactly (it is barren)."""
    return type(est).__name__ == "MANaiveBayes" or \
        getattr(est, "_naive_log_theta", None) is not None
