"""A prediction with its uncertainty: the averaged probability, the structure interval and the
structure + parameter interval (DESIGN §15)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .models import ModelSet, as_codes, models_and_proba, weighted_quantile
from .parameters import DrawResult, parameter_draws

__all__ = ["LEVEL", "ONE_MODEL", "Prediction", "method_words", "predict_with_uncertainty"]

LEVEL = 0.9
"""Default probability of the intervals."""

ONE_MODEL = 0.99
"""Weight from which one model carries (nearly) all of an average: the structure interval is
(nearly) a point and :meth:`Prediction.interval_note` says why."""

_ONE = {"orders": "order", "feature sets": "feature set",
        "equivalence classes": "equivalence class",
        "subsamples x equivalence classes": "(subsample, equivalence class) pair",
        "bootstrap networks": "bootstrap network", "boosted networks": "boosted network",
        "super-parents": "super-parent network",
        "models of the stacked methods": "model of the stacked methods"}
"""One of each kind of model (:data:`~bnma_core.explain.models.KINDS`), for sentences."""


def method_words(name: str) -> str:
    """A registered method in plain words (its display name; the code itself when it is not
    registered)."""
    from ..classifiers.registry import display_name

    try:
        return display_name(name)
    except (ValueError, KeyError):
        return str(name)


def _and(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


@dataclass(frozen=True)
class Prediction:
    """Averaged class probabilities of some rows with two intervals.

    Attributes
    ----------
    classes : ndarray
        The estimator's ``classes_``.
    proba : (n, C) float
        The estimator's averaged P(c | x) (``predict_proba``).
    level : float
        Probability of the intervals (0.9: the 5 % and 95 % weighted quantiles).
    models : ModelSet
        The models behind the average, their weights pi_m(x) and class posteriors.
    structure_interval : (n, C, 2) float
        Weighted quantiles of P(c | x, m) over the models (structure uncertainty); a point
        (both ends = ``proba``) for a single structure (``single_structure``).
    draws : DrawResult or None
        The (structure, parameter) draws when asked for (``n_draws`` > 0); for a stack, its
        ``fixed`` components entered without parameter draws.
    parameter_interval : (n, C, 2) float or None
        Weighted quantiles of the draws (structure + parameter uncertainty).
    seed : int or None
        Seed of the draws.
    """

    classes: np.ndarray
    proba: np.ndarray
    level: float
    models: ModelSet
    structure_interval: np.ndarray
    draws: DrawResult | None = None
    parameter_interval: np.ndarray | None = None
    seed: Any = None

    @property
    def single_structure(self) -> bool:
        """The prediction rests on one model: the structure interval is a point."""
        return self.models.single

    @property
    def predicted(self) -> np.ndarray:
        """Index of the most probable class of each row."""
        return np.argmax(self.proba, axis=1)

    def uncertain(self) -> np.ndarray:
        """Rows whose decision the uncertainty could change: the lower end of the predicted
        class's interval (structure + parameter when drawn, else structure) does not exceed
        the upper end of another class's (two classes: the interval reaches 0.5), (n,) bool.
        A single structure without draws is never flagged (its interval is a point)."""
        iv = self.parameter_interval if self.parameter_interval is not None else \
            self.structure_interval
        c = self.predicted
        rows = np.arange(len(c))
        lower = iv[rows, c, 0]
        upper = iv[:, :, 1].copy()
        upper[rows, c] = -np.inf
        return lower <= upper.max(axis=1)

    def describe(self, row: int = 0, cls: int | None = None) -> str:
        """One sentence in plain words, e.g. "malignant: 0.93, 90 % of the averaged models
        between 0.88 and 0.97"."""
        c = int(self.predicted[row]) if cls is None else int(cls)
        pct = round(100 * self.level)
        lo, hi = self.structure_interval[row, c]
        text = f"{self.classes[c]}: {self.proba[row, c]:.2f}, "
        if self.single_structure and self.models.kind == "one order":
            text += ("one order, its networks averaged exactly (no interval over orders)")
        elif self.models.kind == "not decomposed":
            text += "the method combines its networks itself (no interval over structures)"
        elif self.single_structure:
            text += "one model (no structure interval)"
        else:
            text += f"{pct} % of the averaged {self.models.kind} between {lo:.2f} and {hi:.2f}"
        if self.parameter_interval is not None:
            plo, phi = self.parameter_interval[row, c]
            text += f"; with parameter uncertainty {plo:.2f} to {phi:.2f}"
            if self.draws.fixed:
                text += (f" (the share of {_and([method_words(n) for n in self.draws.fixed])}"
                         " is counted without parameter uncertainty)")
        return text

    def interval_note(self, row: int = 0, cls: int | None = None) -> str:
        """Why an interval of ``row`` is (nearly) a point, or why both intervals are the same,
        in one plain sentence ("" when there is nothing to explain; DESIGN §15):

        * one of several models carries at least :data:`ONE_MODEL` of the weight: "The data
          leave no doubt about the structure: one feature set carries 100.0 % of the weight;
          the wider interval adds parameter uncertainty.";
        * both intervals read the same (two decimals): the models and the draws agree on one
          number, or the models disagree more than each model's own numbers are uncertain, and
          an end that is a stacked method's probability without parameter draws is named.
        """
        c = int(self.predicted[row]) if cls is None else int(cls)
        if self.single_structure:
            return ""
        w = self.models.model_weights[:, row]
        top = int(np.argmax(w))
        if w[top] >= ONE_MODEL:
            one = _ONE.get(self.models.kind, "model")
            text = (f"The data leave no doubt about the structure: one {one} carries "
                    f"{100 * w[top]:.1f} % of the weight")
            if self.parameter_interval is not None:
                text += "; the wider interval adds parameter uncertainty"
            return text + "."
        if self.parameter_interval is None:
            return ""
        s = [f"{v:.2f}" for v in self.structure_interval[row, c]]
        p = [f"{v:.2f}" for v in self.parameter_interval[row, c]]
        if s != p:
            return ""
        name = str(self.classes[c])
        if s[0] == s[1]:
            pct = round(100 * self.level)
            return (f"Both intervals are the one number {s[0]}: {pct} % of the averaged models "
                    f"and of the parameter draws give {name} a probability that rounds to it.")
        text = (f"Both intervals are {s[0]} to {s[1]}: the averaged models disagree more than "
                "each model's own numbers are uncertain, so parameter uncertainty does not "
                "widen the interval")
        ends = self.parameter_interval[row, c]
        post = self.models.posteriors()[:, row, c]
        for part in self.models.parts:
            if part.name not in self.draws.fixed:
                continue
            for end, word in zip(ends, ("lower", "upper")):
                if np.isclose(post[part.start:part.stop], end, rtol=0, atol=1e-12).any():
                    share = w[part.start:part.stop].sum()
                    text += (f"; its {word} end is the probability given by "
                             f"{method_words(part.name)} ({100 * share:.0f} % of the weight), "
                             "which has no parameter draws")
                    break
        return text + "."

    def to_dict(self, row: int = 0) -> dict:
        """One row as plain JSON-ready values."""
        out = {"classes": [str(c) for c in self.classes],
               "probability": [float(v) for v in self.proba[row]],
               "predicted": str(self.classes[int(self.predicted[row])]),
               "level": float(self.level), "models": self.models.kind,
               "n_models": self.models.n_models,
               "single_structure": bool(self.single_structure),
               "uncertain": bool(self.uncertain()[row]),
               "structure_interval": self.structure_interval[row].tolist()}
        if self.parameter_interval is not None:
            out["parameter_interval"] = self.parameter_interval[row].tolist()
            out["n_draws"] = self.draws.n_draws
            out["seed"] = self.seed
            if self.draws.fixed:
                out["fixed_components"] = list(self.draws.fixed)
        if self.models.parts:
            out["components"] = {p.name: p.weight for p in self.models.parts}
        return out


def predict_with_uncertainty(est: Any, X: Any, level: float = LEVEL, n_draws: int = 0,
                             train: Any = None, seed: Any = 0, codes: bool = False,
                             **options: Any) -> Prediction:
    """The averaged probability of each row with its structure interval and, when
    ``n_draws`` > 0, its structure + parameter interval (module docstring, DESIGN §15).

    Parameters
    ----------
    est : fitted estimator
    X : array-like or DataFrame (n_rows, n_features), or one row
        Rows as for ``predict_proba`` (missing values allowed: marginalised by the model).
    level : float in (0, 1)
        Probability of the intervals.
    n_draws : int
        (Structure, CPT) draws from the Dirichlet posteriors; 0 = no parameter interval.
    train : DiscreteDataset or (X, y), optional
        The rows the model was fitted on (parameter draws of every method but order BMA).
    seed : int or Generator
        Seed of the draws (and of MA-NB's sampled feature sets beyond 16 features).
    codes : bool
        ``X`` is already an array of feature codes (-1 = missing).

    Returns
    -------
    Prediction
    """
    if not 0 < float(level) < 1:
        raise ValueError(f"level must be between 0 and 1 (got {level!r}), e.g. 0.9.")
    Xc = np.asarray(X, dtype=np.int64) if codes else as_codes(est, X)
    if Xc.ndim == 1:
        Xc = Xc[None, :]
    if type(est).__name__ == "MANaiveBayes" or hasattr(est, "stack_components"):
        options.setdefault("random_state", seed)
    models, proba = models_and_proba(est, Xc, **options)
    interval = models.interval(level)
    if models.single:
        interval = np.repeat(proba[:, :, None], 2, axis=2)
    draws = pint = None
    if n_draws:
        draws = parameter_draws(est, Xc, models.model_weights, train, n_draws, seed,
                                models=models)
        lo, hi = (1 - level) / 2, (1 + level) / 2
        pint = np.empty_like(interval)
        for c in range(proba.shape[1]):
            pint[:, c, 0] = weighted_quantile(draws.posteriors[:, :, c], draws.weights, lo)
            pint[:, c, 1] = weighted_quantile(draws.posteriors[:, :, c], draws.weights, hi)
    return Prediction(np.asarray(est.classes_), proba, float(level), models, interval, draws,
                      pint, seed if n_draws else None)
