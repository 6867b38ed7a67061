"""What if, which test next, and is this case unusual (DESIGN §15).

* :func:`what_if` — findings changed, added or cleared (set unknown): the new probability and
  its intervals, up to :data:`MAX_SCENARIOS` scenarios beside the case itself.
* :func:`next_test` — for each unobserved finding X_j, under the averaged model:
  P(x_j = v | x_obs) = sum_m pi_m(x_obs) P(x_obs, v | m) / P(x_obs | m); the value of
  information as the expected reduction of the class entropy (Howard 1966),
  VOI_j = H(C | x_obs) - sum_v P(v | x_obs) H(C | x_obs, v), with P(C | x_obs, v) the
  estimator's averaged prediction; and the probability that observing X_j flips the decision
  [P(k | ·) >= threshold], sum_v P(v | x_obs) [decision(x_obs, v) != decision(x_obs)].
* :func:`unusual_case` — Jensen's conflict measure (Jensen, Chamberlain, Nordahl & Jensen
  1991) conf(x) = log (prod_i P(x_i) / P(x_obs)) under the averaged model
  P(x) = sum_m w_m P(x | m) / sum_m w_m (> 0: the findings fit together worse than
  independent ones would), and the share of the training cases whose findings (restricted to
  those known in this case) are more probable than the case's.

A stack of conditionals, P(c | x) = sum_k w_k P_k(c | x), defines no joint P(x). The choice
here: P(x_j | x_obs) and P(x) are the mixtures sum_k w'_k P_k(.) of the components that define
them (w'_k: their stack weights renormalised among them); a component that does not (UKDB) is
left out, and the results name it (``without_joint``). The class posteriors P(c | x_obs, v)
stay the stack's own, so its VOI is not a mutual information and may be negative.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .models import MAX_TOTAL_CELLS, as_codes, defines_joint, model_set, models_and_proba
from .parameters import training_codes
from .shapley import _feature_names
from .uncertainty import LEVEL, Prediction, predict_with_uncertainty

__all__ = ["MAX_SCENARIOS", "NextTest", "Scenario", "Unusual", "next_test", "scenario_codes",
           "unusual_case", "what_if"]

MAX_SCENARIOS = 3
"""Most what-if scenarios computed beside the case."""


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
                         f"{what} is not available for it; choose another method (e.g. bma10, "
                         "manb, nb).")


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

    Parameters
    ----------
    scenarios : sequence of dicts
        Each: feature (name or index) -> new value (state label or code) or None (unknown).
    level, n_draws, train, seed
        As :func:`~bnma_core.explain.predict_with_uncertainty`.
    """
    if len(scenarios) > MAX_SCENARIOS:
        raise ValueError(f"At most {MAX_SCENARIOS} scenarios at once (got {len(scenarios)}); "
                         "compare them in turns.")
    base = _row(est, x, codes)
    sc = [scenario_codes(est, base, ch, codes=True) for ch in scenarios]
    rows = np.vstack([base] + [s.codes for s in sc])
    return sc, predict_with_uncertainty(est, rows, level, n_draws, train, seed, codes=True)


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
        Expected reduction of the class entropy (nats).
    flip_probability : (K,) float
        Probability that observing the finding changes the decision.
    value_probabilities : list of (r_j,) float
        P(x_j = v | x_obs) under the averaged model.
    value_posteriors : list of (r_j, C) float
        P(c | x_obs, x_j = v).
    entropy : float
        H(C | x_obs) now (nats).
    target, threshold : int, float
        The decision: P(class ``target``) >= ``threshold``.
    decision : bool
        The decision now.
    without_joint : tuple of str
        A stack's components left out of P(x_j | x_obs) (they define no probability of
        findings; module docstring).
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
    decision = bool(proba[0, target] >= threshold)
    H0 = float(_entropy(proba[0]))
    voi, flip, vp, vpost = [], [], [], []
    for start, r in spans:
        pv = ms.finding_probabilities(0, start, start + r)
        post = proba[start:start + r]
        voi.append(H0 - float(pv @ _entropy(post)))
        flip.append(float(pv @ ((post[:, target] >= threshold) != decision)))
        vp.append(pv)
        vpost.append(post)
    order = np.argsort(-np.asarray(voi), kind="stable") if voi else np.zeros(0, dtype=int)
    return NextTest([names[miss[k]] for k in order], np.asarray(miss, dtype=int)[order],
                    np.asarray(voi)[order] if voi else np.zeros(0),
                    np.asarray(flip)[order] if flip else np.zeros(0),
                    [vp[k] for k in order], [vpost[k] for k in order], H0, int(target),
                    float(threshold), decision, ms.without_joint)


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
        probable than the case's (0.99: rarer than 99 % of them); None without training rows.
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
    conflict = float(le[1:].sum() - le[0])
    out = {"conflict": conflict, "log_likelihood": float(le[0]),
           "finding_log_probabilities": {names[j]: float(v) for j, v in zip(F, le[1:])},
           "without_joint": ms.without_joint}
    if train is not None:
        Xt, _ = training_codes(est, train)
        Xt = Xt.copy()
        Xt[:, row < 0] = -1
        step = max(1, MAX_TOTAL_CELLS // (ms.n_models * len(est.classes_)))
        lt = np.concatenate([model_set(est, Xt[s:s + step], codes=True).log_mixture_evidence()
                             for s in range(0, len(Xt), step)]) if len(Xt) else np.zeros(0)
        out["rarer_than"] = float(np.mean(lt > le[0]))
        out["training_log_likelihoods"] = lt
    return Unusual(**out)
