"""Sizing an explanation before it runs (DESIGN §15, Budget).

One case's explanation costs what its estimator costs on the rows it predicts: 2^N coalition
rows for the exact Shapley values of N findings (P (N + 1) when sampled over P orders), one
row per value of each unknown finding for the next test, N + 1 rows plus the training rows for
the unusual-case check, and ``n_draws`` networks for the parameter interval. A row with unknown
findings costs the estimator its own marginalisation: order BMA sums up to
``max_missing_states`` completions per order (else ``n_mc`` Monte Carlo ones), the K-best and
bagging families eliminate per missingness pattern and model, UKDB learns a personalised
network per row.

:func:`plan_explanation` estimates each part's CPU seconds from those shapes (the per-row
costs below were measured on the 2-core reference machine; they are estimates, within a
factor of about 2) and compares them with the per-request budget
(:func:`bnma_core.limits.explain_budget`: ``BNMA_EXPLAIN_BUDGET_CPU_S``,
``BNMA_EXPLAIN_BUDGET_MB``). Within it, every part runs in full. Above it, the parts that fit
their share keep it and the others share the rest: the Shapley values are sampled over as many
random orders as fit (with their standard errors), the parameter interval takes fewer draws,
the unusual-case check leaves out the training-case percentile; a part that cannot fit even so
is refused with one sentence naming the remedy. Every change is said in one sentence
(:attr:`ExplanationPlan.sentences`).

Memory is bounded separately and always: the coalitions are predicted in chunks of
:func:`rows_per_chunk` rows, so the peak does not grow with 2^N (the Shapley values
accumulate chunk by chunk, :func:`bnma_core.explain.shapley_values`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..limits import INPUT_RANGES, Budget, explain_budget
from .models import EXACT_LIMIT, as_codes, is_additive, is_stack

__all__ = ["ExplanationPlan", "PartPlan", "plan_explanation", "row_costs", "rows_per_chunk"]

MIN_PERMUTATIONS = 16
"""Fewest random orders of the findings worth showing (below: the Shapley part is refused)."""

MIN_DRAWS = 40
"""Fewest parameter draws worth an interval (below: the structure interval only)."""

SHARES = {"draws": 0.2, "shapley": 0.5, "next_test": 0.15, "unusual": 0.15}
"""Each part's share of the CPU budget when the whole explanation does not fit."""

# --- measured per-row costs (CPU seconds, 2-core reference machine, 200 x 12 features) -------
ORDER_CELL_S = 8e-8
"""Order BMA: one completed row x order x variable of eq. 9 (a Monte Carlo completion counts
twice: one draw loop per row)."""
ORDER_SETS = 299
"""Order BMA: parent sets per node of the score table the costs above were measured with
(12 features, at most 3 parents); the costs scale with the table's own number."""
MISSING_ROW_S = 1e-3
"""Order BMA: the fixed cost of a row with unknown findings (its barren set and completions)."""
COMPLETE_ROW_S = 1e-5
"""Order BMA: a complete row, per order."""
ELIMINATION_S = 2e-3
"""K-best, subbagging, bagging, boosting: exact elimination of one missingness pattern in one
network of 13 variables (grows with the square of the variables)."""
AUGMENTED_S = 1.2e-4
"""TAN, KDB: one row with unknown findings, 13 variables (grows with the variables)."""
AODE_S = 1e-5
"""AODE: one row per super-parent model."""
UKDB_S = 4e-4
"""UKDB: one row (a personalised network), 13 variables (grows with their square)."""
NAIVE_S = 1e-8
"""Naive Bayes / MA-NB's theta* network: one finding x class of one row."""
MANB_MODEL_S = 1e-9
"""MA-NB's model set: one feature set x feature x class of one row."""

DRAW_FAMILY_S = 5e-5
"""Parameter draws: one family of one drawn network (its concentrations and Dirichlet rows)."""

BYTES_PER_COMPLETION = 6
"""Order BMA: bytes per completed row and variable (codes, skip mask), plus 24 per order and
class (log joints and their temporaries)."""


def _n_features(est: Any) -> int:
    return int(est.n_features_in_)


def _n_models(est: Any) -> int:
    """The number of models behind an average (1 for one network), from the fitted
    attributes without predicting."""
    name = type(est).__name__
    p = _n_features(est)
    if hasattr(est, "_orders_"):
        return len(est._orders_)
    if name == "MANaiveBayes":
        return 2 ** p if p <= 16 else 4096
    if name == "KBestEC":
        return len(est.structures_)
    if name == "SubbaggingKBest":
        return sum(len(s.structures) for s in est.subsamples_)
    if name == "AODE":
        return p + 1
    for attr in ("members_", "estimators_"):
        if hasattr(est, attr):
            return len(getattr(est, attr))
    return 1


def row_costs(est: Any, rows: np.ndarray, models: bool = False
              ) -> tuple[np.ndarray, np.ndarray]:
    """Estimated CPU seconds and peak bytes of predicting each of ``rows`` (feature codes,
    -1 = unknown) with ``est`` (``models``: through its model set, as the per-model Shapley
    values and the finding probabilities do): two (n,) arrays. A stack costs the sum of its
    components' seconds and the largest of their bytes (they run one after another)."""
    rows = np.atleast_2d(np.asarray(rows, dtype=np.int64))
    n, p = rows.shape
    C = len(est.classes_)
    if is_stack(est):
        secs, peak = np.zeros(n), np.zeros(n)
        for _, _, comp in est.stack_components():
            s, b = row_costs(comp, rows, models)
            secs += s
            peak = np.maximum(peak, b)
        return secs, peak
    miss = rows < 0
    any_miss = miss.any(axis=1)
    V = (p + 1) / 13.0
    M = _n_models(est)
    name = type(est).__name__
    if hasattr(est, "_orders_") and hasattr(est, "table_"):     # order BMA
        orders = np.asarray(est._orders_)
        T = len(orders)
        # a node's term sums over its parent sets: the measured cost was for 299 per node
        sets = float(est.table_.n_sets) / ORDER_SETS
        cells = np.full(n, float(T))                 # completed rows x orders
        peak = np.ones(n)
        if est._param("predict_missing") == "marginalize" and any_miss.any():
            # the unknown findings that are not barren are completed (DESIGN §4)
            keep = miss[any_miss][None] & ~est._barren(miss[any_miss], orders)   # (T, k, p)
            log_states = (keep * np.log(np.asarray(est.arities_, dtype=float))).sum(axis=2)
            exact = log_states <= math.log(est.max_missing_states) + 1e-9
            comp = np.where(exact, np.exp(np.minimum(log_states, 60.0)), 2.0 * est.n_mc)
            cells[any_miss] = comp.sum(axis=0)
            peak[any_miss] = comp.max(axis=0)
        secs = sets * (cells * (p + 1) * ORDER_CELL_S +
                       np.where(any_miss, MISSING_ROW_S, T * COMPLETE_ROW_S))
        peak = peak * ((p + 1) * BYTES_PER_COMPLETION + 24 * T * C)
        return secs, peak + 8 * p
    if name == "MANaiveBayes" and models:
        return np.full(n, M * p * C * MANB_MODEL_S), np.full(n, 8.0 * M * (C + p))
    if is_additive(est):
        return np.full(n, p * C * NAIVE_S + 1e-7), np.full(n, 16.0 * p * C)
    if hasattr(est, "personalized_structure"):                   # UKDB
        return np.full(n, UKDB_S * V * V), np.full(n, 64.0 * (p + 1) ** 2)
    if name == "AODE":
        return np.full(n, AODE_S * M * V), np.full(n, 32.0 * M * C)
    if hasattr(est, "feature_parents_"):                         # TAN, KDB
        return np.where(any_miss, AUGMENTED_S * V, 1e-6 * V), np.full(n, 64.0 * (p + 1) * C)
    # an average of networks eliminated per missingness pattern (K-best, bagging, ...)
    patterns = len(np.unique(miss, axis=0)) if n else 0
    per = np.where(any_miss, ELIMINATION_S * V * V * M * max(patterns, 1) / max(n, 1),
                   3e-6 * M * V)
    return per, np.full(n, 32.0 * M * C * (p + 1))


def rows_per_chunk(est: Any, row: np.ndarray, budget: Budget | None = None) -> int:
    """Coalition rows of one case predicted at once: as many as a quarter of the memory
    budget holds at the costliest of 256 of its coalitions (seeded sample; every one when
    there are fewer), at most 8,192."""
    budget = budget or explain_budget()
    row = np.asarray(row, dtype=np.int64).reshape(-1)
    F = np.flatnonzero(row >= 0)
    peak = float(row_costs(est, _coalition_rows(row, F, 256, prefixes=False), models=True)[1]
                 .max())
    return int(max(1, min(8192, budget.memory_bytes / 4 // max(peak, 1.0))))


@dataclass(frozen=True)
class PartPlan:
    """How one part of an explanation runs.

    Attributes
    ----------
    mode : str
        "full" (as asked), "exact" / "closed form" / "sampled" (Shapley), "reduced" (fewer
        draws, no percentile) or "refused".
    seconds : float
        Estimated CPU seconds as planned (for a refused part: what it would have cost).
    full_seconds : float
        Estimated CPU seconds of the part as asked.
    options : dict
        Keyword arguments for the part's function (e.g. ``n_permutations``, ``n_draws``).
    sentence : str
        What changed and why, in one sentence ("" when nothing did).
    """

    mode: str
    seconds: float
    full_seconds: float
    options: dict = field(default_factory=dict)
    sentence: str = ""

    @property
    def refused(self) -> bool:
        return self.mode == "refused"


@dataclass(frozen=True)
class ExplanationPlan:
    """The plan of one case's explanation: each part's :class:`PartPlan` (keys ``draws``,
    ``shapley``, ``next_test``, ``unusual``) and the budget it was sized against."""

    parts: dict
    budget: Budget

    @property
    def sentences(self) -> list[str]:
        """The sentences to show, one per part that was changed or refused."""
        return [p.sentence for p in self.parts.values() if p.sentence]

    @property
    def seconds(self) -> float:
        return float(sum(p.seconds for p in self.parts.values() if not p.refused))

    def options(self, part: str) -> dict:
        return dict(self.parts[part].options)

    def refused(self, part: str) -> str:
        """The refusal sentence of ``part`` ("" when it runs)."""
        p = self.parts[part]
        return p.sentence if p.refused else ""

    def to_dict(self) -> dict:
        return {"budget": {"memory_mb": self.budget.memory_mb,
                           "cpu_seconds": self.budget.cpu_seconds},
                "estimated_cpu_seconds": round(self.seconds, 3),
                "parts": {k: {"mode": p.mode, "estimated_cpu_seconds": round(p.seconds, 3),
                              "as_asked_cpu_seconds": round(p.full_seconds, 3),
                              **({"sentence": p.sentence} if p.sentence else {})}
                          for k, p in self.parts.items()}}


def _coalition_rows(row: np.ndarray, F: np.ndarray, sample: int, prefixes: bool
                    ) -> np.ndarray:
    """Coalition rows of the case: all 2^N when at most ``sample`` (and not ``prefixes``),
    else a seeded sample of ``sample``: uniform over the subsets, or (``prefixes``) the
    prefixes of random orders (size uniform on 0..N)."""
    N = len(F)
    if 2 ** N <= sample and not prefixes:
        masks = np.arange(2 ** N)
        keep = ((masks[:, None] >> np.arange(N)[None, :]) & 1).astype(bool)
    else:
        rng = np.random.default_rng(0)
        if prefixes:
            size = rng.integers(0, N + 1, sample)
            keep = np.argsort(rng.random((sample, N)), axis=1) < size[:, None]
        else:
            keep = rng.random((sample, N)) < 0.5
    rows = np.repeat(row[None], len(keep), axis=0)
    sub = rows[:, F]
    sub[~keep] = -1
    rows[:, F] = sub
    return rows


def _mean_cost(est: Any, row: np.ndarray, F: np.ndarray, prefixes: bool, models: bool,
               sample: int = 512) -> float:
    """Mean estimated seconds of one coalition row of the case."""
    return float(row_costs(est, _coalition_rows(row, F, sample, prefixes), models)[0].mean())


def _shapley_costs(est: Any, row: np.ndarray, n_permutations: int, exact_limit: int
                   ) -> tuple[str, float, float]:
    """(mode as asked, its seconds, seconds of one sampled order)."""
    F = np.flatnonzero(row >= 0)
    N = len(F)
    C = len(est.classes_)
    if N == 0:
        return "exact", 0.0, 0.0
    models = _n_models(est) > 1 or is_stack(est)
    if is_additive(est):
        one = float(row_costs(est, row[None])[0][0])
        base = (N + 1) * one * (3 if models else 1)
        if C == 2:
            return "closed form", base, 0.0
        if N <= exact_limit:
            return "exact", base + 2 ** N * N * C * NAIVE_S, 0.0
        return "sampled", base + n_permutations * N * C * NAIVE_S, N * C * NAIVE_S
    per_order = (N + 1) * _mean_cost(est, row, F, True, models)
    if N <= exact_limit:
        return "exact", 2 ** N * _mean_cost(est, row, F, False, models), per_order
    return "sampled", n_permutations * per_order, per_order


def _draws_cost(est: Any, row: np.ndarray, n_draws: float) -> float:
    """Seconds of ``n_draws`` (network, CPT) draws for one row: a network's families per
    drawn structure (order BMA, MA-NB: one per draw; the others: one per model) and each
    draw's completions of the row's unknown ancestors (up to 4,096 joint states, else an
    elimination). A stack: its components' shares (UKDB draws nothing)."""
    if is_stack(est):
        return sum(_draws_cost(comp, row, n_draws * w) for _, w, comp in est.stack_components()
                   if hasattr(comp, "model_log_joints"))
    p = len(row)
    C = len(est.classes_)
    miss = row < 0
    if is_additive(est):           # a naive network: an unknown finding is never an ancestor
        miss = np.zeros(p, dtype=bool)
    elif hasattr(est, "feature_parents_"):   # TAN, KDB: the unknown ancestors of the findings
        seen = np.zeros(p, dtype=bool)
        stack = [int(j) for j in np.flatnonzero(~miss)]
        while stack:
            for u in est.feature_parents_[stack.pop()]:
                if not seen[u]:
                    seen[u] = True
                    stack.append(int(u))
        miss = miss & seen
    states = math.exp(min(float((miss * np.log(np.asarray(est.arities_, dtype=float))).sum()),
                          60.0))
    fill = min(states, 4096.0)
    drawn = hasattr(est, "_orders_") or type(est).__name__ == "MANaiveBayes"
    networks = n_draws if drawn else min(n_draws, _n_models(est))
    return (networks * (p + 1) * DRAW_FAMILY_S + n_draws * (p + 1) * 1e-6
            + n_draws * (p + 1) * C * fill * 2e-8)


def _s(seconds: float) -> str:
    """Seconds in words: '0.3', '12', '3,218'."""
    return f"{seconds:,.1f}" if seconds < 10 else f"{seconds:,.0f}"


def _rows_cost(est: Any, rows: np.ndarray) -> float:
    return float(row_costs(est, rows, models=True)[0].sum())


def plan_explanation(est: Any, x: Any, *, n_draws: int = 400, n_permutations: int = 256,
                     exact_limit: int = EXACT_LIMIT, train: Any = None,
                     budget: Budget | None = None, codes: bool = False,
                     parts: tuple = ("draws", "shapley", "next_test", "unusual")
                     ) -> ExplanationPlan:
    """Size each part of one case's explanation from its shape and fit it to the budget
    (module docstring).

    Parameters
    ----------
    est : fitted estimator
    x : one row, as for ``predict_proba`` (codes with ``codes=True``)
    n_draws : int
        Parameter draws asked for (0: none); at most ``INPUT_RANGES["draws"].high``.
    n_permutations : int
        Random orders of the findings when the Shapley values are sampled.
    exact_limit : int
        Exact Shapley values up to this many findings, as asked.
    train : DiscreteDataset or (X, y), optional
        The training rows (their number sizes the unusual-case percentile).
    budget : Budget, optional
        Default :func:`bnma_core.limits.explain_budget` (the server's setting).
    parts : tuple of str
        The parts to plan.

    Returns
    -------
    ExplanationPlan
        Per part the mode, the options for its function, the estimated seconds and the
        sentence to show. Call e.g. ``shapley_values(est, x, **plan.options("shapley"))``
        unless ``plan.refused("shapley")``.
    """
    budget = budget or explain_budget()
    problem = INPUT_RANGES["draws"].problem(n_draws) if n_draws else ""
    if problem:
        raise ValueError(problem)
    row = np.asarray(x, dtype=np.int64) if codes else as_codes(est, x)
    row = row.reshape(-1)
    N = int((row >= 0).sum())
    full: dict[str, float] = {}
    info: dict[str, Any] = {}
    if "draws" in parts and n_draws:
        full["draws"] = _draws_cost(est, row, int(n_draws))
    if "shapley" in parts:
        mode, full["shapley"], per_order = _shapley_costs(est, row, int(n_permutations),
                                                          exact_limit)
        info["shapley"] = (mode, per_order)
    if "next_test" in parts:
        full["next_test"] = _rows_cost(est, _next_test_rows(est, row))
    if "unusual" in parts:
        info["unusual"] = _unusual_costs(est, row, train)
        full["unusual"] = sum(info["unusual"])
    B = budget.cpu_seconds
    allowed = _allowed(full, B)
    limit = f"this server's limit of {B:g} CPU seconds per explanation"
    out: dict[str, PartPlan] = {}
    if "draws" in full:
        out["draws"] = _plan_draws(full["draws"], allowed["draws"], int(n_draws), limit)
    if "shapley" in full:
        out["shapley"] = _plan_shapley(full["shapley"], allowed["shapley"], *info["shapley"],
                                       N, int(n_permutations), exact_limit, limit)
    if "next_test" in full:
        s, a = full["next_test"], allowed["next_test"]
        out["next_test"] = PartPlan("full", s, s) if s <= a else PartPlan(
            "refused", 0.0, s, {},
            f"The next-test ranking of the {len(row) - N} unknown findings would take "
            f"about {_s(s)} CPU seconds, over {limit}; enter more findings or choose a "
            "faster method (e.g. naive Bayes or MA-NB).")
    if "unusual" in full:
        out["unusual"] = _plan_unusual(full["unusual"], allowed["unusual"], *info["unusual"],
                                       train, limit)
    return ExplanationPlan(out, budget)


def _next_test_rows(est: Any, row: np.ndarray) -> np.ndarray:
    """The case and, for each unknown finding, the case with each of its values."""
    miss = np.flatnonzero(row < 0)
    r = np.asarray(est.arities_, dtype=np.int64)[miss]
    rows = np.repeat(row[None], 1 + int(r.sum()), axis=0)
    at = 1
    for j, rj in zip(miss, r):
        rows[at:at + rj, j] = np.arange(rj)
        at += rj
    return rows


def _unusual_costs(est: Any, row: np.ndarray, train: Any) -> tuple[float, float]:
    """Seconds of the unusual-case check: the case's own part (the case and each finding
    alone) and the training-case percentile's."""
    F = np.flatnonzero(row >= 0)
    singles = np.full((len(F), len(row)), -1, dtype=np.int64)
    singles[np.arange(len(F)), F] = row[F]
    own = _rows_cost(est, np.vstack([row[None], singles]))
    n_train = 0
    if train is not None:
        n_train = len(train.X) if hasattr(train, "X") else len(train[0])
    # the training rows take the case's unknown findings: cost like the case itself
    return own, n_train * _rows_cost(est, row[None])


def _allowed(full: dict, B: float) -> dict:
    """Each part's allowed seconds: unlimited when all fit ``B``; else a part that fits its
    share (:data:`SHARES`) keeps its cost and the others share the rest by their shares."""
    if sum(full.values()) <= B:
        return dict.fromkeys(full, math.inf)
    fits = {k for k, s in full.items() if s <= B * SHARES[k]}
    rest = B - sum(full[k] for k in fits)
    share = sum(SHARES[k] for k in full if k not in fits)
    return {k: (full[k] if k in fits else rest * SHARES[k] / share) for k in full}


def _plan_draws(s: float, a: float, n_draws: int, limit: str) -> PartPlan:
    """The parameter draws: all, fewer (at least :data:`MIN_DRAWS`) or refused."""
    if s <= a:
        return PartPlan("full", s, s, {"n_draws": n_draws})
    k = int(n_draws * a / s)
    if k >= MIN_DRAWS:
        return PartPlan("reduced", s * k / n_draws, s, {"n_draws": k},
                        f"The parameter interval uses {k:,} draws instead of {n_draws:,} to "
                        f"stay within {limit}.")
    return PartPlan("refused", 0.0, s, {"n_draws": 0},
                    f"No parameter interval: {n_draws:,} draws would take about {_s(s)} CPU "
                    f"seconds, over {limit}; the structure interval is shown.")


def _plan_shapley(s: float, a: float, mode: str, per_order: float, N: int,
                  n_permutations: int, exact_limit: int, limit: str) -> PartPlan:
    """The Shapley values: as asked, sampled over as many orders as fit (at least
    :data:`MIN_PERMUTATIONS`) or refused."""
    base = {"exact_limit": exact_limit, "n_permutations": n_permutations}
    if s <= a:
        return PartPlan(mode, s, s, base)
    P = int(min(n_permutations, a / per_order)) if per_order > 0 else 0
    what = (f"the exact values over all {2 ** N:,} combinations of the {N} findings"
            if mode == "exact" else f"{n_permutations:,} random orders")
    if P >= MIN_PERMUTATIONS:
        return PartPlan(
            "sampled", P * per_order, s, {"exact_limit": -1, "n_permutations": P},
            f"The contributions are estimated from {P:,} random orders of the findings "
            f"(± one standard error shown): {what} would take about {_s(s)} CPU seconds, "
            f"over {limit}.")
    return PartPlan(
        "refused", 0.0, s, base,
        f"The contributions of the {N} findings are not computed: even {MIN_PERMUTATIONS} "
        f"random orders would take about {_s(MIN_PERMUTATIONS * per_order)} CPU seconds, over "
        f"{limit}. Choose naive Bayes or MA-NB (their contributions are exact in closed form) "
        "or a method averaging fewer networks.")


def _plan_unusual(s: float, a: float, own: float, train_s: float, train: Any, limit: str
                  ) -> PartPlan:
    """The unusual-case check: in full, without the training-case percentile, or refused."""
    if s <= a:
        return PartPlan("full", s, s, {"train": train})
    if own <= a:
        return PartPlan("reduced", own, s, {"train": None},
                        f"How unusual the case is among the training cases is not computed "
                        f"(about {_s(train_s)} CPU seconds, over {limit}); the conflict "
                        "measure is.")
    return PartPlan("refused", 0.0, s, {"train": None},
                    f"The unusual-case check would take about {_s(s)} CPU seconds, over "
                    f"{limit}; choose a faster method (e.g. naive Bayes or MA-NB).")
