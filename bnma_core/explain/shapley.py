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

from .models import EXACT_LIMIT, as_codes, is_additive, is_stack, lse, model_set

__all__ = ["EXACT_LIMIT", "ShapleyResult", "is_additive", "shapley_values"]

MAX_SPREAD_CELLS = 2 ** 22
"""Largest models x coalitions x classes block computed at once (the coalitions are processed
in chunks; more models than this for one coalition: no spread is given)."""

MAX_SPREAD_TOTAL = 2 ** 27
"""Largest models x coalitions x classes for the per-model values of one case (e.g. MA-NB's
65,536 feature sets inside a stack over 16 findings: no spread)."""

MAX_ADDITIVE_MODEL_CELLS = 2 ** 28
"""Largest models x (findings + 1) x max(features, classes) of a naive-Bayes average's
per-model values (MA-NB's 2^N or sampled feature sets; beyond, no spread is given)."""


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


def _exact_coefficients(masks: np.ndarray, N: int, wt: np.ndarray) -> np.ndarray:
    """c(S, i) with phi_i = sum_S c(S, i) v(S) over the coalitions ``masks`` (bitmasks):
    w(|S| - 1) when i is in S, -w(|S|) when it is not (the Shapley sum regrouped by
    coalition, so that the exact values accumulate chunk by chunk): (len(masks), N)."""
    bits = _mask_bits(masks, N)
    size = bits.sum(axis=1)
    return np.where(bits, wt[np.maximum(size - 1, 0)][:, None],
                    -wt[np.minimum(size, N - 1)][:, None])


def _permutation_keep(perms: np.ndarray) -> np.ndarray:
    """Coalitions of permutations (P, N): rows k (N + 1) + j hold the first j findings of
    permutation k, (P (N + 1), N) bool."""
    P, N = perms.shape
    keep = np.zeros((P, N + 1, N), dtype=bool)
    for k in range(1, N + 1):
        keep[np.arange(P)[:, None], k, perms[:, :k]] = True
    return keep.reshape(-1, N)


def _permutation_contributions(v: np.ndarray, perms: np.ndarray) -> np.ndarray:
    """Marginal contributions of each finding along each permutation from the games
    v (..., P (N + 1)) of :func:`_permutation_keep`'s coalitions: (..., P, N)."""
    P, N = perms.shape
    delta = np.diff(v.reshape(v.shape[:-1] + (P, N + 1)), axis=-1)   # of perms[:, k]
    contrib = np.empty_like(delta)
    np.put_along_axis(contrib, np.broadcast_to(perms, delta.shape), delta, axis=-1)
    return contrib


class _Accumulator:
    """Shapley values accumulated over chunks of coalitions: exact (the coefficients of
    :func:`_exact_coefficients`) or sampled (sums and sums of squares of the contributions
    along permutations, for the mean and its standard error)."""

    def __init__(self, shape: tuple, N: int, exact: bool) -> None:
        self.exact = exact
        self.sum = np.zeros(shape + (N,))
        self.sq = None if exact else np.zeros(shape + (N,))
        self.n = 0

    def add_exact(self, v: np.ndarray, coef: np.ndarray) -> None:
        self.sum += v @ coef

    def add_sampled(self, v: np.ndarray, perms: np.ndarray) -> None:
        c = _permutation_contributions(v, perms)                        # (..., P, N)
        self.sum += c.sum(axis=-2)
        self.sq += (c ** 2).sum(axis=-2)
        self.n += len(perms)

    def result(self) -> tuple[np.ndarray, np.ndarray]:
        if self.exact:
            return self.sum, np.zeros_like(self.sum)
        P = self.n
        mean = self.sum / P
        var = np.maximum(self.sq - P * mean ** 2, 0.0) / (P - 1)
        return mean, np.sqrt(var / P)


def _additive_values(base: np.ndarray, ell: np.ndarray, target: int, exact: bool,
                     perms: np.ndarray | None, cells: int) -> tuple[np.ndarray, np.ndarray]:
    """Shapley values of additive games v(S) = g(base + sum_{i in S} ell_i),
    g(a) = a_target - log sum_{c != target} exp a_c, for G games at once: base (G, C),
    ell (G, N, C) -> values and standard errors (G, N).

    Two classes: g is linear, so phi_i = g(base + ell_i) - g(base) = ell_i(target) -
    ell_i(other), the weight of evidence (closed form, O(N)). More classes: the coalitions
    (exact) or the permutations' prefixes (sampled; cumulative sums along each order), at
    most ``cells`` games x coalitions x classes at a time."""
    G, N, C = ell.shape
    if C == 2:
        o = 1 - target
        return ell[:, :, target] - ell[:, :, o], np.zeros((G, N))
    acc = _Accumulator((G,), N, exact)
    if exact:
        wt = _coalition_weights(N)
        step = max(1, cells // (G * C))
        for s in range(0, 2 ** N, step):
            masks = np.arange(s, min(s + step, 2 ** N))
            keep = _mask_bits(masks, N).astype(float)
            a = base[:, None, :] + np.einsum("kn,gnc->gkc", keep, ell)
            acc.add_exact(_log_odds(a, target), _exact_coefficients(masks, N, wt))
    else:
        step = max(1, cells // (G * (N + 1) * C))
        for s in range(0, len(perms), step):
            pc = perms[s:s + step]
            steps = ell[:, pc, :]                                            # (G, P, N, C)
            a = np.concatenate([np.zeros(steps.shape[:2] + (1, C)), np.cumsum(steps, axis=2)],
                               axis=2) + base[:, None, None, :]
            acc.add_sampled(_log_odds(a, target).reshape(G, -1), pc)
    return acc.result()


def shapley_values(est: Any, x: Any, target: int | None = None, exact_limit: int = EXACT_LIMIT,
                   n_permutations: int = 256, seed: Any = 0, spread: bool = True,
                   codes: bool = False, chunk_rows: int | None = None,
                   closed_form: bool = True) -> ShapleyResult:
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
    chunk_rows : int, optional
        Coalition rows predicted at once (default: as many as the explanation budget's
        memory allows for this estimator, :func:`bnma_core.explain.budget.rows_per_chunk`);
        the values accumulate chunk by chunk, so the peak memory does not grow with 2^N.
    closed_form : bool
        For an estimator that predicts as one naive Bayes network (:func:`is_additive`: NB,
        MA-NB) play the game on its per-finding terms, read from N + 1 predictions (two
        classes: the weight of evidence, exact whatever N; DESIGN §15). False: through the
        coalitions as for any estimator (the tests' oracle).
    """
    row = np.asarray(x, dtype=np.int64) if codes else as_codes(est, x)
    row = row.reshape(-1)
    names = _feature_names(est, len(row))
    F = np.flatnonzero(row >= 0)
    N = len(F)
    C = len(est.classes_)
    if chunk_rows is None:
        from .budget import rows_per_chunk

        chunk_rows = rows_per_chunk(est, row)
    chunk_rows = max(1, int(chunk_rows))
    additive = closed_form and is_additive(est)
    probe, target, full = _full_case(est, row, target, spread)
    if N == 0:
        z = np.zeros(0)
        return ShapleyResult(F, [], z, z, full, full, target, True)
    exact = N <= int(exact_limit) or (additive and C == 2)
    perms = None if exact else _random_orders(N, n_permutations, seed)
    M = probe.n_models if probe is not None else 1
    n_rows = N + 1 if additive else 2 ** N if exact else len(perms) * (N + 1)
    use_models = probe is not None and M > 1 and M * n_rows * C <= MAX_SPREAD_TOTAL
    if additive:
        values, se, empty, full, mv = _additive_game(est, row, F, target, exact, perms, full,
                                                     use_models, M, chunk_rows)
    else:
        values, se, empty, mv = _coalition_game(est, row, F, target, exact, perms, use_models,
                                                M, chunk_rows)
    mm, msd, mw = _model_spread(mv, probe)
    return ShapleyResult(F, [names[j] for j in F], values, se, full, empty, target, exact,
                         0 if exact else len(perms), mm, msd, mv, mw)


def _predict(est: Any, rows: np.ndarray) -> np.ndarray:
    """The averaged model's log class posteriors of code rows (n, C)."""
    return est._predict_log_proba_codes(np.ascontiguousarray(rows, dtype=np.int32))


def _full_case(est: Any, row: np.ndarray, target: int | None, spread: bool
               ) -> tuple[Any, int, float]:
    """The full case first: its model set (for the spread; None without one), the class
    (default: the predicted one, checked against ``classes_``) and v(F)."""
    C = len(est.classes_)
    probe = None
    if spread and (hasattr(est, "model_log_joints") or is_stack(est)):
        probe = model_set(est, row[None], codes=True)
    if probe is not None and probe.exact:
        with np.errstate(divide="ignore"):
            full_lp = np.log(probe.averaged()[0])
    else:
        full_lp = _predict(est, row[None])[0]
    if target is None:
        target = int(np.argmax(full_lp))
    if not 0 <= int(target) < C:
        raise ValueError(f"target must be a class index 0..{C - 1} (got {target!r}).")
    target = int(target)
    return probe, target, float(_log_odds(full_lp, target))


def _random_orders(N: int, n_permutations: int, seed: Any) -> np.ndarray:
    """``n_permutations`` seeded random orders of N findings, (P, N)."""
    P = int(n_permutations)
    if P < 2:
        raise ValueError("n_permutations must be at least 2.")
    return np.argsort(np.random.default_rng(seed).random((P, N)), axis=1)


def _coalition_rows(row: np.ndarray, F: np.ndarray, keep: np.ndarray) -> np.ndarray:
    """The case's rows with the findings F not kept (``keep`` (n, N) bool) unknown (-1)."""
    rows = np.repeat(row[None], len(keep), axis=0)
    sub = rows[:, F]
    sub[~keep] = -1
    rows[:, F] = sub
    return rows


def _mask_bits(masks: np.ndarray, N: int) -> np.ndarray:
    """The findings in each coalition bitmask: (len(masks), N) bool."""
    return ((masks[:, None] >> np.arange(N)[None, :]) & 1).astype(bool)


def _additive_game(est: Any, row: np.ndarray, F: np.ndarray, target: int, exact: bool,
                   perms: np.ndarray | None, full: float, use_models: bool, M: int,
                   chunk_rows: int) -> tuple:
    """The game of an additive estimator on its per-finding terms, read from the empty case
    and each finding alone (N + 1 predictions; :func:`_additive_values`): values, standard
    errors, v(∅), v(F) (exact: v(∅) + sum phi) and the per-model values (or None)."""
    N = len(F)
    C = len(est.classes_)
    keep = np.zeros((N + 1, N), dtype=bool)
    keep[np.arange(1, N + 1), np.arange(N)] = True
    use_models = use_models and M * (N + 1) * max(len(row), C) <= MAX_ADDITIVE_MODEL_CELLS
    lps, mlps = [], []
    step = max(1, min(chunk_rows, MAX_SPREAD_CELLS // (M * C) if use_models else chunk_rows))
    for s in range(0, N + 1, step):
        rows = _coalition_rows(row, F, keep[s:s + step])
        lps.append(_predict(est, rows))
        if use_models:
            mlps.append(model_set(est, rows, codes=True).log_posteriors)
    lp = np.concatenate(lps)
    lp = lp - lse(lp, axis=-1, keepdims=True)
    games = [lp]
    if use_models:
        games.append(np.concatenate(mlps, axis=1))
    allv = []
    for g in games:
        g = g.reshape((-1,) + g.shape[-2:])                                # (G, N + 1, C)
        with np.errstate(invalid="ignore"):
            ell = g[:, 1:] - g[:, :1]
        ell = np.where(np.isfinite(ell), ell, 0.0)
        allv.append(_additive_values(g[:, 0], ell, target, exact, perms, MAX_SPREAD_CELLS))
    values, se = allv[0][0][0], allv[0][1][0]
    empty = float(_log_odds(lp[0], target))
    full = empty + float(values.sum()) if exact else full
    return values, se, empty, full, allv[1][0] if use_models else None


def _coalition_game(est: Any, row: np.ndarray, F: np.ndarray, target: int, exact: bool,
                    perms: np.ndarray | None, use_models: bool, M: int, chunk_rows: int
                    ) -> tuple:
    """The game through the coalitions' predictions, chunk by chunk: all 2^N (exact) or the
    prefixes of the orders ``perms`` (sampled): values, standard errors, v(∅) and the
    per-model values (or None)."""
    N = len(F)
    C = len(est.classes_)
    acc = _Accumulator((), N, exact)
    macc = _Accumulator((M,), N, exact) if use_models else None
    step = min(chunk_rows, max(1, MAX_SPREAD_CELLS // (M * C))) if use_models else chunk_rows
    if exact:
        wt = _coalition_weights(N)
        chunks = ((_mask_bits(m, N), _exact_coefficients(m, N, wt))
                  for m in (np.arange(s, min(s + step, 2 ** N)) for s in range(0, 2 ** N, step)))
    else:
        per = max(1, step // (N + 1))
        chunks = ((_permutation_keep(pc), pc)
                  for pc in (perms[s:s + per] for s in range(0, len(perms), per)))
    empty = None
    for keep, how in chunks:
        v, vm = _game(est, _coalition_rows(row, F, keep), target, use_models)
        for a, g in ((acc, v), (macc, vm)):
            if a is not None:
                (a.add_exact if exact else a.add_sampled)(g, how)
        if empty is None:
            empty = float(v[0])
    values, se = acc.result()
    return values, se, empty, macc.result()[0] if macc is not None else None


def _model_spread(mv: np.ndarray | None, probe: Any) -> tuple:
    """Weighted mean and standard deviation over the models of their own values ``mv``
    (M, N), weights the models' for the full case (a model with non-finite values or no
    weight left out): mean, sd, weights (all None without ``mv``)."""
    if mv is None:
        return None, None, None
    mw = probe.model_weights[:, 0]
    ok = np.isfinite(mv).all(axis=1) & (mw > 0)
    w = np.where(ok, mw, 0.0)
    w = w / w.sum() if w.sum() > 0 else w
    mvz = np.where(ok[:, None], mv, 0.0)
    mm = w @ mvz
    msd = np.sqrt(np.maximum(w @ (mvz - mm[None]) ** 2, 0.0))
    return mm, msd, mw


def _game(est: Any, rows: np.ndarray, target: int, models: bool
          ) -> tuple[np.ndarray, np.ndarray | None]:
    """v of coalition rows (the averaged model's log-odds) and, with ``models``, every
    averaged model's own v, (M, rows): one pass over the models when they give the averaged
    prediction exactly."""
    if not models:
        return _log_odds(_predict(est, rows), target), None
    ms = model_set(est, rows, codes=True)
    if ms.exact:
        with np.errstate(divide="ignore"):
            v = _log_odds(np.log(ms.averaged()), target)
    else:
        v = _log_odds(_predict(est, rows), target)
    return v, _log_odds(ms.log_posteriors, target)


def _feature_names(est: Any, p: int) -> list[str]:
    fn = getattr(est, "_variable_names", None)
    if fn is not None:
        return list(fn()[0])
    return [f"x{j}" for j in range(p)]
