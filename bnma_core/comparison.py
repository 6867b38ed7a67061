"""Comparing many methods: over the folds of one data set, and over many data sets.

Input is a long table with one row per (method, block) and a column per metric — the shape of
:func:`bnma_core.evaluation.cross_validate`'s result (blocks = ``fold``) or of a table of
per-data-set scores (blocks = ``dataset``). Every test returns a tidy DataFrame that exports
with ``to_csv``.

* Over folds: the Friedman test of equal mean ranks with the Iman-Davenport F
  (:func:`friedman_test`), then every pair of methods by a Wilcoxon signed-rank test, Holm-
  corrected over all k(k − 1)/2 pairs (:func:`pairwise_wilcoxon`). Pairwise Wilcoxon rather
  than mean-rank post-hoc tests, whose verdict on a pair depends on the other methods
  compared (Benavoli, Corani & Mangili 2016).
* Over data sets: Demšar's (2006) mean ranks with the Nemenyi critical difference and the
  groups of methods within it (:func:`critical_difference`; the numbers of ``autorank``'s
  Friedman-Nemenyi mode), and the Bayesian signed-rank test with a region of practical
  equivalence (:func:`bayesian_signed_rank`, Benavoli et al. 2014, 2017; the sampler of
  ``baycomp``).

Rank 1 is the best method. Which way is better comes from the metric name
(:data:`HIGHER_IS_BETTER`) or the ``higher_is_better`` argument.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import combinations
from typing import Any

import numpy as np
import pandas as pd

__all__ = ["HIGHER_IS_BETTER", "holm_adjust", "score_matrix", "mean_ranks", "friedman_test",
           "pairwise_wilcoxon", "CriticalDifference", "nemenyi_cd", "critical_difference",
           "bayesian_signed_rank", "bayesian_signed_rank_pairs"]

HIGHER_IS_BETTER = {"accuracy": True, "auc": True, "log_loss": False, "brier": False,
                    "fit_time_s": False, "predict_time_s": False}
"""Direction of the metrics this module knows; others need ``higher_is_better``."""


# --------------------------------------------------------------------------------------------
# Shaping and ranking
# --------------------------------------------------------------------------------------------


def _direction(metric: str, higher_is_better: bool | None) -> bool:
    if higher_is_better is not None:
        return bool(higher_is_better)
    if metric not in HIGHER_IS_BETTER:
        raise ValueError(f"Whether a higher {metric!r} is better is unknown; pass "
                         "higher_is_better=True or False.")
    return HIGHER_IS_BETTER[metric]


def score_matrix(table: pd.DataFrame, metric: str, *, block: str = "fold",
                 method: str = "method") -> pd.DataFrame:
    """The (blocks × methods) matrix of ``metric`` from a long table.

    Raises
    ------
    ValueError
        When a column is missing, a (method, block) pair occurs twice, or a method lacks some
        block (e.g. folds not finished after Stop): tests over blocks need every method on
        every block, so the message names what is missing.
    """
    for col in (block, method, metric):
        if col not in table.columns:
            raise ValueError(f"The table has no {col!r} column; it has "
                             f"{', '.join(map(str, table.columns))}.")
    if table.duplicated([block, method]).any():
        raise ValueError(f"Some (method, {block}) pairs occur twice; pass one score per "
                         f"method and {block}.")
    wide = table.pivot(index=block, columns=method, values=metric)
    # blocks and methods in the order of the table (pivot sorts them)
    wide = wide.loc[list(dict.fromkeys(table[block])), list(dict.fromkeys(table[method]))]
    missing = wide.isna()
    if missing.any().any():
        gaps = [f"{m} ({int(missing[m].sum())} of {len(wide)})" for m in wide.columns
                if missing[m].any()]
        raise ValueError(f"Scores are missing for {', '.join(gaps)} {block}s; compare only "
                         f"the {block}s every method finished, or finish the run.")
    return wide.astype(float)


def _ranks(wide: pd.DataFrame, higher_is_better: bool) -> pd.DataFrame:
    """Rank of each method within each block, 1 = best, ties get the average rank."""
    return wide.rank(axis=1, ascending=not higher_is_better, method="average")


def mean_ranks(table: pd.DataFrame, metric: str, *, block: str = "fold",
               method: str = "method", higher_is_better: bool | None = None) -> pd.DataFrame:
    """Mean rank of each method over the blocks (1 = best), best first.

    Returns
    -------
    DataFrame with ``method``, ``mean_rank``, ``mean`` (of the metric), ``n_blocks``.
    """
    hib = _direction(metric, higher_is_better)
    wide = score_matrix(table, metric, block=block, method=method)
    r = _ranks(wide, hib).mean()
    out = pd.DataFrame({"method": wide.columns, "mean_rank": r.to_numpy(),
                        "mean": wide.mean().to_numpy(), "n_blocks": len(wide)})
    return out.sort_values("mean_rank", kind="stable").reset_index(drop=True)


def holm_adjust(pvalues: Sequence[float]) -> np.ndarray:
    """Holm's (1979) step-down adjusted p-values.

    Sorted ascending, p_(i) becomes max_{j ≤ i} min(1, (m − j + 1) p_(j)); rejecting where the
    adjusted value is ≤ α controls the family-wise error rate at α. NaN p-values stay NaN and
    do not count in m.
    """
    p = np.asarray(pvalues, dtype=float)
    out = np.full(p.shape, np.nan)
    ok = np.flatnonzero(np.isfinite(p))
    if ok.size == 0:
        return out
    order = ok[np.argsort(p[ok], kind="stable")]
    m = len(order)
    adj = np.minimum(1.0, (m - np.arange(m)) * p[order])
    out[order] = np.maximum.accumulate(adj)
    return out


# --------------------------------------------------------------------------------------------
# Over folds: Friedman, pairwise Wilcoxon with Holm
# --------------------------------------------------------------------------------------------


def _tie_sum(ranks: np.ndarray) -> float:
    """Σ over rows and tie groups of t³ − t, t the size of each group of equal ranks in a
    row (one sort of the matrix, no loop over the rows)."""
    r = np.sort(ranks, axis=1)
    N, k = r.shape
    # a run of equal values starts at column 0 and wherever the value changes
    starts = np.ones((N, k), dtype=bool)
    starts[:, 1:] = r[:, 1:] != r[:, :-1]
    flat = np.flatnonzero(starts.ravel())
    t = np.diff(np.append(flat, N * k)).astype(float)
    return float(np.sum(t ** 3 - t))


def friedman_test(table: pd.DataFrame, metric: str, *, block: str = "fold",
                  method: str = "method", higher_is_better: bool | None = None
                  ) -> pd.DataFrame:
    """Friedman test that all methods have the same mean rank, with the Iman-Davenport F.

    χ²_F = 12N / (k(k + 1)) · [Σ_j R_j² − k(k + 1)² / 4] over N blocks and k methods with mean
    ranks R_j, divided by 1 − Σ(t³ − t) / (N k (k² − 1)) when ranks are tied (t = size of each
    tie), referred to χ² with k − 1 degrees of freedom; F_F = (N − 1) χ²_F / (N(k − 1) − χ²_F)
    referred to F(k − 1, (k − 1)(N − 1)) (Demšar 2006, §3.2.2, who recommends F_F).

    Returns
    -------
    One-row DataFrame: ``metric``, ``n_blocks``, ``n_methods``, ``chi2``, ``df``,
    ``p_value``, ``iman_davenport_f``, ``df1``, ``df2``, ``p_value_f``.

    Raises
    ------
    ValueError
        With fewer than 3 methods (compare two with :func:`pairwise_wilcoxon`) or 2 blocks.
    """
    from scipy.stats import chi2, f

    hib = _direction(metric, higher_is_better)
    wide = score_matrix(table, metric, block=block, method=method)
    N, k = wide.shape
    if k < 3 or N < 2:
        raise ValueError(f"The Friedman test needs at least 3 methods and 2 {block}s, got {k} "
                         f"and {N}; compare two methods with pairwise_wilcoxon.")
    ranks = _ranks(wide, hib).to_numpy()
    R = ranks.mean(axis=0)
    stat = 12 * N / (k * (k + 1)) * (np.sum(R ** 2) - k * (k + 1) ** 2 / 4)
    ties = _tie_sum(ranks)
    correction = 1 - ties / (N * k * (k * k - 1))
    stat = stat / correction if correction > 0 else 0.0
    denom = N * (k - 1) - stat
    F = (N - 1) * stat / denom if denom > 0 else np.inf
    df1, df2 = k - 1, (k - 1) * (N - 1)
    return pd.DataFrame([{"metric": metric, "n_blocks": N, "n_methods": k, "chi2": stat,
                          "df": df1, "p_value": float(chi2.sf(stat, df1)),
                          "iman_davenport_f": F, "df1": df1, "df2": df2,
                          "p_value_f": float(f.sf(F, df1, df2)) if np.isfinite(F) else 0.0}])


def pairwise_wilcoxon(table: pd.DataFrame, metric: str, *, block: str = "fold",
                      method: str = "method", higher_is_better: bool | None = None,
                      alpha: float = 0.05) -> pd.DataFrame:
    """Wilcoxon signed-rank test of every pair of methods, Holm-corrected over all pairs.

    Zero differences are dropped (scipy's "wilcox" zero method, as
    :func:`bnma_core.evaluation.wilcoxon_against`); when all differences are zero the p-value
    is 1.

    Returns
    -------
    DataFrame, one row per pair (a, b) in the table's method order: ``method_a``,
    ``method_b``, ``metric``, ``n_blocks``, ``mean_diff`` (a − b), ``wins`` / ``ties`` /
    ``losses`` (blocks where a is better than / equal to / worse than b), ``statistic``,
    ``p_value`` (two-sided), ``p_holm``, ``significant`` (p_holm ≤ α), ``better`` (the
    method with more wins when significant, else empty).
    """
    from scipy.stats import wilcoxon

    hib = _direction(metric, higher_is_better)
    wide = score_matrix(table, metric, block=block, method=method)
    rows = []
    for a, b in combinations(wide.columns, 2):
        d = (wide[a] - wide[b]).to_numpy()
        better = d if hib else -d
        nz = d[d != 0]
        if nz.size == 0:
            stat, pval = 0.0, 1.0
        else:
            r = wilcoxon(nz, zero_method="wilcox")
            stat, pval = float(r.statistic), float(r.pvalue)
        rows.append({"method_a": a, "method_b": b, "metric": metric, "n_blocks": len(d),
                     "mean_diff": float(d.mean()), "wins": int((better > 0).sum()),
                     "ties": int((d == 0).sum()), "losses": int((better < 0).sum()),
                     "statistic": stat, "p_value": pval})
    out = pd.DataFrame(rows, columns=["method_a", "method_b", "metric", "n_blocks",
                                      "mean_diff", "wins", "ties", "losses", "statistic",
                                      "p_value"])
    out["p_holm"] = holm_adjust(out["p_value"].to_numpy())
    out["significant"] = out["p_holm"] <= alpha
    out["better"] = [
        (r.method_a if r.wins > r.losses else r.method_b) if r.significant else ""
        for r in out.itertuples()]
    return out


# --------------------------------------------------------------------------------------------
# Over data sets: critical difference, Bayesian signed-rank test
# --------------------------------------------------------------------------------------------


@dataclass
class CriticalDifference:
    """Demšar's comparison of k methods over N data sets.

    Attributes
    ----------
    ranks : DataFrame of :func:`mean_ranks` (best first) plus ``group``: the labels of the
        groups (cliques) the method belongs to, ``;``-separated
    cd : the Nemenyi critical difference q_α √(k(k + 1) / (6N))
    alpha : the level of ``cd``
    groups : each group as a tuple of methods whose mean ranks lie within ``cd`` of each
        other (maximal runs in rank order, as ``autorank`` draws them)
    friedman : :func:`friedman_test`'s row
    """

    ranks: pd.DataFrame
    cd: float
    alpha: float
    groups: list[tuple[str, ...]] = field(default_factory=list)
    friedman: pd.DataFrame | None = None

    def table(self) -> pd.DataFrame:
        """The ranks with ``cd``, ``alpha``, the Friedman p-value and N on every row (one tidy
        table for CSV)."""
        out = self.ranks.copy()
        out["cd"] = self.cd
        out["alpha"] = self.alpha
        if self.friedman is not None:
            out["friedman_p_value"] = float(self.friedman["p_value"].iloc[0])
        return out


def nemenyi_cd(k: int, n_blocks: int, alpha: float = 0.05) -> float:
    """Nemenyi critical difference q_α √(k(k + 1) / (6N)), q_α the studentized range
    quantile (infinite degrees of freedom) over √2 (Demšar 2006, §3.2.2)."""
    from scipy.stats import studentized_range

    q = studentized_range.ppf(1 - alpha, k, np.inf) / np.sqrt(2)
    return float(q * np.sqrt(k * (k + 1) / (6 * n_blocks)))


def _first_true(n: int, size: int, holds: Any) -> np.ndarray:
    """For ``size`` monotone questions over positions 0..n-1, the first position where each
    holds (n where it never does): a vectorised binary search. ``holds(pos)`` gets one
    position per question and answers all of them; for each question the answer must be
    False, ..., False, True, ..., True along the positions. O(size · log n) time, O(size)
    memory."""
    lo = np.zeros(size, dtype=np.int64)
    hi = np.full(size, n, dtype=np.int64)
    while True:
        active = lo < hi
        if not active.any():
            return lo
        mid = (lo + hi) // 2
        ok = holds(np.minimum(mid, n - 1)) & active
        hi = np.where(ok, mid, hi)
        lo = np.where(active & ~ok, mid + 1, lo)


def _groups(names: list[str], ranks: np.ndarray, cd: float) -> list[tuple[int, int]]:
    """Maximal runs (i, j) of the rank-sorted methods with r_j − r_i ≤ cd, each ending past the
    previous run (``autorank``'s ``get_sorted_rank_groups``).

    ``ranks`` is sorted ascending, so the last j with r_j − r_i ≤ cd is one binary search per
    i (the floating-point difference is monotone in r_j, so this is the same j as a scan
    comparing every pair): O(k log k) instead of the O(k²) double loop.
    """
    r = np.asarray(ranks, dtype=float)
    k = len(r)
    if k < 2:
        return []
    past = _first_true(k, k, lambda pos: r[pos] - r > cd)  # ranks within cd come before
    out = []
    cur_max = -1
    for i in range(k):
        last = int(past[i]) - 1
        if last > i and last > cur_max:
            cur_max = last
            out.append((i, last))
    return out


MAX_GROUP_LABELS = 4
"""A method in more critical-difference groups than this gets its groups as a range "3-9"."""


def _group_labels(spans: list[tuple[int, int]], k: int) -> list[str]:
    """The ``group`` column: for each rank position the groups (numbered from 1) it belongs
    to. Both ends of the runs increase, so those groups are one range of numbers, found by
    two binary searches per position (O(k log k))."""
    if not spans:
        return [""] * k
    starts = np.array([i for i, _ in spans])
    ends = np.array([j for _, j in spans])
    pos = np.arange(k)
    first = np.searchsorted(ends, pos, side="left")        # first group ending at or after r
    last = np.searchsorted(starts, pos, side="right") - 1  # last group starting at or before r
    out = []
    for a, b in zip(first.tolist(), last.tolist()):
        if a > b:
            out.append("")
        elif b - a < MAX_GROUP_LABELS:
            out.append(";".join(str(g + 1) for g in range(a, b + 1)))
        else:
            out.append(f"{a + 1}-{b + 1}")
    return out


def critical_difference(table: pd.DataFrame, metric: str, *, block: str = "dataset",
                        method: str = "method", higher_is_better: bool | None = None,
                        alpha: float = 0.05) -> CriticalDifference:
    """Mean ranks over data sets with the Nemenyi critical difference (Demšar 2006).

    Two methods whose mean ranks differ by more than ``cd`` differ significantly at level
    ``alpha``; methods in one group do not. Equals ``autorank(..., force_mode=
    "nonparametric")``'s mean ranks, critical distance and groups.
    """
    if not 0 < alpha < 1:
        raise ValueError(f"alpha is {alpha}; pass a level such as 0.05.")
    ranks = mean_ranks(table, metric, block=block, method=method,
                       higher_is_better=higher_is_better)
    k, N = len(ranks), int(ranks["n_blocks"].iloc[0])
    if k < 2 or N < 2:
        raise ValueError(f"A critical-difference comparison needs at least 2 methods and 2 "
                         f"{block}s, got {k} and {N}.")
    cd = nemenyi_cd(k, N, alpha)
    names = ranks["method"].tolist()
    spans = _groups(names, ranks["mean_rank"].to_numpy(), cd)
    groups = [tuple(names[i:j + 1]) for i, j in spans]
    ranks["group"] = _group_labels(spans, k)
    fried = (friedman_test(table, metric, block=block, method=method,
                           higher_is_better=higher_is_better) if k >= 3 else None)
    return CriticalDifference(ranks=ranks, cd=cd, alpha=alpha, groups=groups, friedman=fried)


DRAW_BLOCK_CELLS = 1_000_000
"""Dirichlet weights drawn at once by the Bayesian signed-rank test (8 MB): the draws come in
blocks of this many numbers, so its memory does not grow with draws × data sets."""


def _check_signed_rank_args(x: np.ndarray, y: np.ndarray, rope: float, prior: float,
                            n_samples: int) -> None:
    if x.shape != y.shape or x.size == 0:
        raise ValueError(f"{x.size} and {y.size} scores; pass both methods' scores on the same "
                         "data sets.")
    if not np.all(np.isfinite(x)) or not np.all(np.isfinite(y)):
        raise ValueError("Scores must be finite numbers; drop the data sets a method did not "
                         "finish.")
    if rope < 0 or prior < 0 or int(n_samples) < 1:
        raise ValueError("rope and prior must be ≥ 0 and n_samples ≥ 1; e.g. rope=0.01, "
                         "prior=0.5, n_samples=50000.")


class _PairSums:
    """Σ_ij w_i w_j H(z_i + z_j − t) for many weight vectors w without the N × N matrix.

    With z sorted, the j for which the floating-point sum z_i + z_j exceeds t form a suffix
    (floating-point addition is monotone), and those for which it equals t a run just before
    it; both boundaries are found per i by binary search once. For each draw w the weighted
    count is then Σ_i w_i (suffix sum of w past the boundary, plus half the run) from one
    cumulative sum: O(N) per draw instead of O(N²), and exactly the pairs the matrix counts.
    """

    def __init__(self, z: np.ndarray):
        self.z = z
        self.order = np.argsort(z, kind="stable")
        self.zs = z[self.order]

    def first(self, t: float, strict: bool) -> np.ndarray:
        """Per i, the first sorted position p with z_i + zs[p] > t (strict) or ≥ t."""
        z, zs = self.z, self.zs
        if strict:
            return _first_true(len(zs), len(z), lambda pos: z + zs[pos] > t)
        return _first_true(len(zs), len(z), lambda pos: z + zs[pos] >= t)


def _signed_rank_samples(diffs: Sequence[np.ndarray], rope: float, prior: float,
                         n_samples: int, seed: int) -> list[np.ndarray]:
    """The posterior draws (θ_left, θ_rope, θ_right) of :func:`bayesian_signed_rank` for
    several vectors of differences over the same N data sets, drawn with the same Dirichlet
    weights (as every pair got from ``baycomp`` with one seed): the weights are drawn in
    blocks of :data:`DRAW_BLOCK_CELLS` from one ``RandomState(seed)`` stream, which gives
    the numbers of one ``dirichlet(weights, n_samples)`` call, so memory is O(N) and time
    O(n_samples · N) per vector."""
    n_samples = int(n_samples)
    n = len(diffs[0]) + 1
    weights = np.ones(n)
    weights[0] = prior
    plans = []
    for d in diffs:
        pairs = _PairSums(np.concatenate([[0.0], np.asarray(d, dtype=float)]))
        t = 2 * rope
        # (first j with z_i + z_j ≥ s, first with > s) for s = t, and −t with a rope
        bounds = [(pairs.first(t, False), pairs.first(t, True))]
        if rope > 0:
            bounds.append((pairs.first(-t, False), pairs.first(-t, True)))
        # the run of sums equal to ±t is empty for almost every i: its half-weight is added
        # for the i where it is not
        plans.append((pairs.order, [(lo, np.flatnonzero(hi != lo), hi) for lo, hi in bounds]))
    out = [np.zeros((n_samples, 3)) for _ in diffs]
    rs = np.random.RandomState(seed)
    block = max(1, DRAW_BLOCK_CELLS // n)
    cum = None
    for start in range(0, n_samples, block):
        b = min(block, n_samples - start)
        w = rs.dirichlet(weights, b)
        if cum is None or cum.shape[0] != b:
            cum = np.zeros((b, n + 1))
        for (order, bounds), samples in zip(plans, out):
            np.cumsum(np.take(w, order, axis=1), axis=1, out=cum[:, 1:])  # Σ_{q<p} w_(q)
            counted = []  # Σ_i w_i (weight of the j before lo_i + half the run lo_i..hi_i)
            for lo, ties, hi in bounds:
                c = np.einsum("ij,ij->i", w, np.take(cum, lo, axis=1))
                if ties.size:
                    c += 0.5 * np.einsum("ij,ij->i", w[:, ties],
                                         np.take(cum, hi[ties], axis=1)
                                         - np.take(cum, lo[ties], axis=1))
                counted.append(c)
            rows = samples[start:start + b]
            # pairs above t: all pairs minus those below t and half of those equal to t
            total = cum[:, n]
            rows[:, 2] = total * total - counted[0]
            if rope > 0:
                rows[:, 0] = counted[1]
                rows[:, 1] = 1 - rows[:, 0] - rows[:, 2]
            else:
                rows[:, 0] = 1 - rows[:, 2]
    return out


def _signed_rank_probabilities(samples: np.ndarray, higher_is_better: bool
                               ) -> dict[str, float]:
    """Shares of the draws in which each of (left, rope, right) is the largest."""
    p_left, p_rope, p_right = np.bincount(np.argmax(samples, axis=1),
                                          minlength=3) / len(samples)
    # left: b − a below the rope, i.e. a scores higher
    a_better, b_better = (p_left, p_right) if higher_is_better else (p_right, p_left)
    return {"p_a_better": float(a_better), "p_equivalent": float(p_rope),
            "p_b_better": float(b_better)}


def bayesian_signed_rank(a: Any, b: Any, *, rope: float, higher_is_better: bool = True,
                         prior: float = 0.5, n_samples: int = 50_000, seed: int = 0
                         ) -> dict[str, float]:
    """Bayesian signed-rank test of two methods' scores over data sets.

    The differences z_i = b_i − a_i get a Dirichlet-process posterior with a pseudo-observation
    z_0 = 0 of weight ``prior``; each posterior draw w ~ Dir(prior, 1, ..., 1) gives
    θ_left = Σ_ij w_i w_j 1[z_i + z_j < −2r], θ_right likewise > 2r (ties count one half) and
    θ_rope the rest; the probabilities are the shares of draws in which each is the largest
    (Benavoli, Mangili, Corani, Zaffalon & Ruggeri 2014; Benavoli, Corani, Demšar & Zaffalon
    2017). Same draws as ``baycomp.SignedRankTest`` with ``random_state=seed``; the double
    sum is computed from sorted differences and cumulative sums (:class:`_PairSums`), in
    O(N) memory and O(n_samples · N) time, where ``baycomp`` builds the N × N matrix.

    Parameters
    ----------
    a, b : (N,) scores of the two methods on the same data sets
    rope : half-width r of the region of practical equivalence, in the metric's units
    higher_is_better : direction of the metric
    prior : weight of the pseudo-observation at 0
    n_samples : posterior draws
    seed : seed of the draws

    Returns
    -------
    dict with ``p_a_better``, ``p_equivalent``, ``p_b_better`` (summing to 1).
    """
    x = np.asarray(a, dtype=float).ravel()
    y = np.asarray(b, dtype=float).ravel()
    _check_signed_rank_args(x, y, rope, prior, n_samples)
    samples = _signed_rank_samples([y - x], rope, prior, n_samples, seed)[0]
    return _signed_rank_probabilities(samples, higher_is_better)


def bayesian_signed_rank_pairs(table: pd.DataFrame, metric: str, *, rope: float,
                               block: str = "dataset", method: str = "method",
                               higher_is_better: bool | None = None, prior: float = 0.5,
                               n_samples: int = 50_000, seed: int = 0,
                               threshold: float = 0.95) -> pd.DataFrame:
    """:func:`bayesian_signed_rank` for every pair of methods over the data sets.

    Returns
    -------
    DataFrame, one row per pair: ``method_a``, ``method_b``, ``metric``, ``rope``,
    ``n_blocks``, ``p_a_better``, ``p_equivalent``, ``p_b_better``, ``decision`` — ``"a
    better"`` / ``"equivalent"`` / ``"b better"`` when that probability is at least
    ``threshold``, else ``"undecided"`` (the data cannot tell).
    """
    hib = _direction(metric, higher_is_better)
    wide = score_matrix(table, metric, block=block, method=method)
    values = wide.to_numpy()
    _check_signed_rank_args(values, values, rope, prior, n_samples)
    pairs = list(combinations(range(wide.shape[1]), 2))
    samples = (_signed_rank_samples([values[:, j] - values[:, i] for i, j in pairs], rope,
                                    prior, n_samples, seed) if pairs else [])
    rows = []
    for (i, j), draws in zip(pairs, samples):
        p = _signed_rank_probabilities(draws, hib)
        best = max(p, key=p.get)
        decision = ({"p_a_better": "a better", "p_equivalent": "equivalent",
                     "p_b_better": "b better"}[best] if p[best] >= threshold else "undecided")
        rows.append({"method_a": wide.columns[i], "method_b": wide.columns[j],
                     "metric": metric, "rope": rope, "n_blocks": len(wide), **p,
                     "decision": decision})
    return pd.DataFrame(rows, columns=["method_a", "method_b", "metric", "rope", "n_blocks",
                                       "p_a_better", "p_equivalent", "p_b_better",
                                       "decision"])
