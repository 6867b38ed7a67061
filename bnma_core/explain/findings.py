"""What if, which test next, and is this case unusual (DESIGN §15).

* :func:`what_if` — findings changed, added or cleared (set unknown): the new probability and
  its intervals, up to :data:`MAX_SCENARIOS` scenarios beside the case itself, each row with
  the intervals (and draws) it would get alone.
* :func:`next_test` — for each unobserved finding X_j, under one joint, the averaged joint
  P(c, x) = sum_m w_m P(c, x | m) / sum_m w_m (:meth:`~bnma_core.explain.ModelSet.joint`;
  given the findings each model weighs pi_m(x_obs) ∝ w_m P(x_obs | m)): the value of
  information as the expected reduction of the class entropy (Howard 1966),
  VOI_j = H(C | x_obs) - sum_v P(v | x_obs) H(C | x_obs, v) = I(C; X_j | x_obs) >= 0, every
  term under that joint; and the probability that observing X_j flips the decision
  [P(k | ·) >= threshold], sum_v P(v | x_obs) [decision(x_obs, v) != decision(x_obs)]. Where
  the joint's P(c | x_obs) differs from the estimator's prediction (averages of posteriors:
  K-best, subbagging, bagging; stacks) by more than :data:`JOINT_TOLERANCE`, ``NextTest.note``
  says so.
* :func:`unusual_case` — Jensen's conflict measure (Jensen, Chamberlain, Nordahl & Jensen
  1991) conf(x) = log (prod_i P(x_i) / P(x_obs)) under the averaged model
  P(x) = sum_m w_m P(x | m) / sum_m w_m (> 0: the findings fit together worse than
  independent ones would), and the share of the training cases whose findings (restricted to
  those known in this case) are more probable than the case's.

A stack of conditionals, P(c | x) = sum_k w_k P_k(c | x), defines no joint P(x). Its averaged
joint is the mixture sum_k w'_k P_k(c, x) of the components that define one (w'_k: their stack
weights renormalised among them); a component that does not (UKDB) is left out, and the results
name it (``without_joint``). The value of information is that joint's mutual information, so it
is never negative.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .models import MAX_TOTAL_CELLS, as_codes, defines_joint, lse, model_set, models_and_proba
from .parameters import DrawResult, training_codes
from .shapley import _feature_names
from .uncertainty import LEVEL, Prediction, _and, method_words, predict_with_uncertainty

__all__ = ["JOINT_TOLERANCE", "MAX_SCENARIOS", "NextTest", "Scenario", "Unusual", "joint_note",
           "next_test", "scenario_codes", "unusual_case", "what_if"]

MAX_SCENARIOS = 3
"""Most what-if scenarios computed beside the case."""

JOINT_TOLERANCE = 0.01
"""Largest difference between the averaged joint's class probability and the estimator's
prediction that :func:`next_test` leaves unsaid."""


def _row(est: Any, x: Any, codes: bool) -> np.ndarray:
    r = np.asarray(x, dtype=np.int64) if codes else as_codes(est, x)
    r = np.asarray(r).reshape(-1)
    if len(r) != est.n_features_in_:
        raise ValueError(f"The case has {len(r)} values; the model expects "
                         f"{est.n_features_in_} features.")
    return r


def _decomposed(est: Any, what: str) -> None:
    if not defines_joint(est):
        raise ValueError(f"{type(est).__name__} does not give the probability of findings, so "
                         f"{what} is not available for it; choose another method that does, e.g. "
                         "model-averaged naive Bayes (manb) or naive Bayes (nb).")


# ---------------------------------------------------------------------- what if
@dataclass(frozen=True)
class Scenario:
    """One what-if scenario: the changes asked for and the resulting feature codes."""

    changes: dict
    codes: np.ndarray


def scenario_codes(est: Any, x: Any, changes: Mapping[Any, Any], codes: bool = False
                   ) -> Scenario:
    """The case ``x`` with ``changes`` applied: feature (name or index) -> new value (state
    label or code), or None to clear it (unknown)."""
    row = _row(est, x, codes).copy()
    names = _feature_names(est, len(row))
    states = getattr(est, "feature_states_", None)
    for key, val in changes.items():
        if isinstance(key, (int, np.integer)) and not isinstance(key, bool):
            j = int(key)
            if not 0 <= j < len(row):
                raise ValueError(f"Feature index {j} is outside 0..{len(row) - 1}.")
        elif str(key) in names:
            j = names.index(str(key))
        else:
            raise ValueError(f"Unknown finding {key!r}; findings are {', '.join(names)}.")
        if val is None:
            row[j] = -1
            continue
        labels = [str(s) for s in states[j]] if states is not None else []
        if str(val) in labels:
            row[j] = labels.index(str(val))
        elif isinstance(val, (int, np.integer)) and 0 <= int(val) < int(est.arities_[j]):
            row[j] = int(val)
        else:
            shown = ", ".join(labels) if labels else f"codes 0..{int(est.arities_[j]) - 1}"
            raise ValueError(f"{val!r} is not a state of {names[j]}; states are {shown}.")
    return Scenario(dict(changes), row)


def what_if(est: Any, x: Any, scenarios: Sequence[Mapping[Any, Any]], level: float = LEVEL,
            n_draws: int = 0, train: Any = None, seed: Any = 0, codes: bool = False
            ) -> tuple[list[Scenario], Prediction]:
    """The case and up to three scenarios (changed, added or cleared findings) predicted
    together: row 0 of the returned :class:`Prediction` is the case, row k scenario k.

    Each row is judged as the case alone would be: its probability, structure interval and,
    with ``n_draws``, its parameter interval are those of
    :func:`~bnma_core.explain.predict_with_uncertainty` of that row alone with the same
    ``n_draws`` and ``seed`` (the draws of a row do not depend on the rows beside it), so a
    scenario identical to the case gets the case's numbers and the same "uncertain" flag.

    Parameters
    ----------
    scenarios : sequence of dicts
        Each: feature (name or index) -> new value (state label or code) or None (unknown).
    level, n_draws, train, seed
        As :func:`~bnma_core.explain.predict_with_uncertainty` (a Generator ``seed`` gives one
        integer seed, used for every row).
    """
    if len(scenarios) > MAX_SCENARIOS:
        raise ValueError(f"At most {MAX_SCENARIOS} scenarios at once (got {len(scenarios)}); "
                         "compare them in turns.")
    base = _row(est, x, codes)
    sc = [scenario_codes(est, base, ch, codes=True) for ch in scenarios]
    rows = np.vstack([base] + [s.codes for s in sc])
    if isinstance(seed, np.random.Generator):
        seed = int(seed.integers(2 ** 63))
    together = predict_with_uncertainty(est, rows, level, 0, train, seed, codes=True)
    alone: dict[bytes, Prediction] = {}
    for r in rows:
        if r.tobytes() not in alone:
            alone[r.tobytes()] = predict_with_uncertainty(est, r, level, n_draws, train, seed,
                                                          codes=True)
    each = [alone[r.tobytes()] for r in rows]
    out = dataclasses.replace(
        together, proba=np.concatenate([p.proba for p in each]),
        structure_interval=np.concatenate([p.structure_interval for p in each]))
    if not n_draws:
        return sc, out
    D = max(p.draws.n_draws for p in each)
    post = np.zeros((D, len(rows), len(est.classes_)))
    weights = np.zeros((D, len(rows)))
    for i, p in enumerate(each):  # rows with fewer draws: the rest weigh 0
        post[:p.draws.n_draws, i] = p.draws.posteriors[:, 0]
        weights[:p.draws.n_draws, i] = p.draws.weights[:, 0]
    draws = DrawResult(post, weights, each[0].draws.fixed)
    return sc, dataclasses.replace(
        out, draws=draws, parameter_interval=np.concatenate([p.parameter_interval
                                                             for p in each]), seed=seed)


# ---------------------------------------------------------------------- which test next
@dataclass(frozen=True)
class NextTest:
    """Value of information of each unobserved finding, best first.

    Attributes
    ----------
    findings : list of str
    columns : (K,) int
        Feature indices.
    voi : (K,) float
        Expected reduction of the class entropy (nats): I(C; X_j | x_obs) >= 0 under the
        averaged joint.
    flip_probability : (K,) float
        Probability that observing the finding changes the decision.
    value_probabilities : list of (r_j,) float
        P(x_j = v | x_obs) under the averaged joint.
    value_posteriors : list of (r_j, C) float
        P(c | x_obs, x_j = v) under the averaged joint.
    entropy : float
        H(C | x_obs) now (nats), under the averaged joint.
    target, threshold : int, float
        The decision: P(class ``target``) >= ``threshold``.
    decision : bool
        The decision now, under the averaged joint.
    without_joint : tuple of str
        A stack's components left out of the averaged joint (they define no probability of
        findings; module docstring).
    joint_probability : (C,) float
        P(c | x_obs) under the averaged joint.
    prediction : (C,) float
        The estimator's own P(c | x_obs) (``predict_proba``, what a page shows).
    note : str
        One sentence when the two differ by more than :data:`JOINT_TOLERANCE` or a stack's
        component is left out ("" otherwise): what the ranking is computed under.
    """

    findings: list[str]
    columns: np.ndarray
    voi: np.ndarray
    flip_probability: np.ndarray
    value_probabilities: list[np.ndarray]
    value_posteriors: list[np.ndarray]
    entropy: float
    target: int
    threshold: float
    decision: bool
    without_joint: tuple = ()
    joint_probability: np.ndarray | None = None
    prediction: np.ndarray | None = None
    note: str = ""

    def ranked(self) -> list[dict]:
        return [{"finding": f, "voi": float(v), "flip_probability": float(p)}
                for f, v, p in zip(self.findings, self.voi, self.flip_probability)]


def _entropy(p: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        return -np.where(p > 0, p * np.log(p), 0.0).sum(axis=-1)


def next_test(est: Any, x: Any, threshold: float = 0.5, target: int | None = None,
              candidates: Sequence[Any] | None = None, codes: bool = False) -> NextTest:
    """Rank the unobserved findings of a case by value of information (module docstring).

    Parameters
    ----------
    threshold : float in (0, 1)
        The decision is P(class ``target`` | findings) >= threshold.
    target : int, optional
        Class index of the decision (default: the predicted class).
    candidates : sequence of feature names or indices, optional
        Only these unobserved findings (default: all of them).
    """
    _decomposed(est, "the value of information")
    if not 0 < float(threshold) < 1:
        raise ValueError(f"threshold must be between 0 and 1 (got {threshold!r}).")
    row = _row(est, x, codes)
    names = _feature_names(est, len(row))
    miss = [j for j in range(len(row)) if row[j] < 0]
    if candidates is not None:
        want = {names.index(str(c)) if str(c) in names else int(c) for c in candidates}
        miss = [j for j in miss if j in want]
    rows = [row]
    spans = []
    for j in miss:
        r = int(est.arities_[j])
        block = np.repeat(row[None], r, axis=0)
        block[:, j] = np.arange(r)
        spans.append((len(rows), r))
        rows.extend(block)
    rows = np.vstack(rows)
    ms, proba = models_and_proba(est, rows)
    if target is None:
        target = int(np.argmax(proba[0]))
    joint = ms.joint()
    lw = joint.log_weights - lse(joint.log_weights)
    la = lse(lw[:, None, None] + joint.log_joints, axis=0)   # log P(c, x_row), (rows, C)
    now = _normalised(la[0])
    decision = bool(now[target] >= threshold)
    H0 = float(_entropy(now))
    voi, flip, vp, vpost = [], [], [], []
    for start, r in spans:
        pv, post = _table(la[start:start + r], now)
        # I(C; X_j | x_obs) of the table P(v, c | x_obs): >= 0 up to rounding
        voi.append(max(0.0, float(_entropy(pv @ post) - pv @ _entropy(post))))
        flip.append(float(pv @ ((post[:, target] >= threshold) != decision)))
        vp.append(pv)
        vpost.append(post)
    order = np.argsort(-np.asarray(voi), kind="stable") if voi else np.zeros(0, dtype=int)
    return NextTest([names[miss[k]] for k in order], np.asarray(miss, dtype=int)[order],
                    np.asarray(voi)[order] if voi else np.zeros(0),
                    np.asarray(flip)[order] if flip else np.zeros(0),
                    [vp[k] for k in order], [vpost[k] for k in order], H0, int(target),
                    float(threshold), decision, ms.without_joint, now, proba[0],
                    joint_note(est, now, proba[0], int(target), ms.without_joint))


def _normalised(logp: np.ndarray) -> np.ndarray:
    """exp(logp) normalised (uniform when every entry is -inf)."""
    z = lse(logp)
    if not np.isfinite(z):
        return np.full(len(logp), 1.0 / len(logp))
    return np.exp(logp - z)


def _table(la: np.ndarray, now: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """P(v | x_obs) (r,) and P(c | x_obs, v) (r, C) of the joint table log P(c, x_obs, v)
    (r, C); a value of probability 0 keeps the present posterior ``now``."""
    z = lse(la.ravel())
    if not np.isfinite(z):
        return np.full(len(la), 1.0 / len(la)), np.repeat(now[None], len(la), axis=0)
    T = np.exp(la - z)
    pv = T.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        post = np.where(pv[:, None] > 0, T / pv[:, None], now[None])
    return pv / pv.sum(), post


def joint_note(est: Any, joint: np.ndarray, prediction: np.ndarray, target: int,
               without_joint: Sequence[str] = ()) -> str:
    """What a ranking of findings is computed under, in one sentence ("" when there is nothing
    to say): the averaged joint's P(class ``target`` | x_obs) where it differs from the
    estimator's prediction by more than :data:`JOINT_TOLERANCE`, and a stack's components
    left out of it (module docstring)."""
    cls = str(est.classes_[target])
    left = ""
    if without_joint:
        named = _and([method_words(n) for n in without_joint])
        one = len(without_joint) == 1
        left = (f"the method{'' if one else 's'} {named} {'is' if one else 'are'} left out "
                f"because {'it gives' if one else 'they give'} no probability of findings")
    if np.max(np.abs(np.asarray(joint) - np.asarray(prediction))) > JOINT_TOLERANCE:
        text = ("These values are computed under one joint model of the findings, the networks "
                "weighted by how well they predict this patient's findings, which gives "
                f"{cls} {joint[target]:.2f} where the prediction above gives "
                f"{prediction[target]:.2f}")
        return text + (f"; {left}." if left else ".")
    return f"In these values {left}." if left else ""


# ---------------------------------------------------------------------- unusual case
@dataclass(frozen=True)
class Unusual:
    """How unusual a case's findings are under the averaged model.

    Attributes
    ----------
    conflict : float
        Jensen's conf(x) = sum_i log P(x_i) - log P(x_obs) (nats); > 0 flags findings that
        fit together worse than independent ones.
    log_likelihood : float
        log P(x_obs) of the case's findings.
    finding_log_probabilities : dict
        log P(x_i) of each finding.
    rarer_than : float or None
        Share of the training cases whose findings (only those known in this case) are more
        probable than the case's (0.99: rarer than 99 % of them); None without training rows
        or without a known finding (nothing to compare: every case has probability 1).
    training_log_likelihoods : ndarray or None
    without_joint : tuple of str
        A stack's components left out of P(x) (module docstring).
    """

    conflict: float
    log_likelihood: float
    finding_log_probabilities: dict
    rarer_than: float | None = None
    training_log_likelihoods: np.ndarray | None = None
    without_joint: tuple = ()

    @property
    def no_findings(self) -> bool:
        """No finding is known: there is no conflict and no percentile to give."""
        return not self.finding_log_probabilities

    def to_dict(self) -> dict:
        """JSON-ready (without the training log-likelihoods)."""
        out = {"conflict": self.conflict, "log_likelihood": self.log_likelihood,
               "finding_log_probabilities": dict(self.finding_log_probabilities),
               "rarer_than": self.rarer_than}
        if self.without_joint:
            out["without_joint"] = list(self.without_joint)
        return out


def unusual_case(est: Any, x: Any, train: Any = None, codes: bool = False) -> Unusual:
    """Jensen's conflict measure of the case and its likelihood rank among the training
    cases (module docstring).

    Parameters
    ----------
    train : DiscreteDataset or (X, y), optional
        The training rows; their class is not used.
    """
    _decomposed(est, "the conflict measure")
    row = _row(est, x, codes)
    names = _feature_names(est, len(row))
    F = np.flatnonzero(row >= 0)
    singles = np.full((len(F), len(row)), -1, dtype=np.int64)
    singles[np.arange(len(F)), F] = row[F]
    ms = model_set(est, np.vstack([row[None], singles]), codes=True)
    le = ms.log_mixture_evidence()
    if not len(F):  # no finding: P(x_obs) = 1, nothing to conflict
        le = np.zeros(1)
    conflict = float(le[1:].sum() - le[0])
    out = {"conflict": conflict, "log_likelihood": float(le[0]),
           "finding_log_probabilities": {names[j]: float(v) for j, v in zip(F, le[1:])},
           "without_joint": ms.without_joint}
    if train is not None and len(F):
        Xt, _ = training_codes(est, train)
        Xt = Xt.copy()
        Xt[:, row < 0] = -1
        step = max(1, MAX_TOTAL_CELLS // (ms.n_models * len(est.classes_)))
        lt = np.concatenate([model_set(est, Xt[s:s + step], codes=True).log_mixture_evidence()
                             for s in range(0, len(Xt), step)]) if len(Xt) else np.zeros(0)
        out["rarer_than"] = float(np.mean(lt > le[0]))
        out["training_log_likelihoods"] = lt
    return Unusual(**out)
