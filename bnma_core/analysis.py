"""Structure statistics and significance tests of the subbagging paper (DESIGN §4, §8).

* :func:`apses` — the posterior standard error of structures (APSES) of Sugahara, Aomi & Ueno.
* :func:`class_parent_count`, :func:`markov_blanket_size`, :func:`structure_statistics` —
  the "Parents" column of their Table 1 and the class's Markov-blanket size.
* :func:`wilcoxon_over_datasets`, :func:`hommel`, :func:`win_draw_loss`,
  :func:`compare_over_datasets` — two-sided Wilcoxon signed-rank tests of one method against
  each other over data sets (scipy), Hommel's adjustment for multiple comparisons (not in
  scipy 1.17; statsmodels is not a dependency), and win / draw / loss counts.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
from scipy.special import logsumexp
from scipy.stats import wilcoxon

from .structure.exact import structure_log_score

__all__ = ["apses", "class_parent_count", "compare_over_datasets", "hommel",
           "markov_blanket_size", "random_dag", "structure_statistics", "wilcoxon_over_datasets",
           "win_draw_loss"]


# ------------------------------------------------------------------------ structure statistics
def class_parent_count(parents: Sequence[Iterable[int]], class_index: int) -> int:
    """Number of parents of the class node."""
    return len(tuple(parents[class_index]))


def markov_blanket_size(parents: Sequence[Iterable[int]], class_index: int) -> int:
    """|MB(C)|: parents, children and the children's other parents of the class (Pearl 1988)."""
    pa = [set(p) for p in parents]
    c = class_index
    children = {i for i, p in enumerate(pa) if c in p}
    mb = set(pa[c]) | children
    for ch in children:
        mb |= pa[ch]
    mb.discard(c)
    return len(mb)


def structure_statistics(structures: Iterable[Any], class_index: int) -> dict[str, float]:
    """Unweighted means over ``structures`` (objects with ``.parents``, e.g.
    :class:`~bnma_core.structure.exact.ScoredStructure`) of the number of class parents and
    the Markov-blanket size, as in the "Parents" column of Sugahara, Aomi & Ueno's Table 1
    (an unweighted mean over folds × T × K structures; the count depends on the DP's
    representative DAG of each equivalence class, docs/specs.md §6)."""
    pa = [s.parents for s in structures]
    if not pa:
        raise ValueError("No structures given.")
    return {"class_parents": float(np.mean([class_parent_count(p, class_index) for p in pa])),
            "markov_blanket": float(np.mean([markov_blanket_size(p, class_index) for p in pa])),
            "n_structures": len(pa)}


# ------------------------------------------------------------------------------------ APSES
def random_dag(n_vars: int, rng: np.random.Generator, edge_prob: float = 0.5
               ) -> tuple[tuple[int, ...], ...]:
    """A random DAG: a uniformly random order, each edge consistent with it present with
    probability ``edge_prob`` (docs/specs.md §6 default for APSES)."""
    order = rng.permutation(n_vars)
    parents: list[list[int]] = [[] for _ in range(n_vars)]
    for a in range(n_vars):
        for b in range(a + 1, n_vars):
            if rng.random() < edge_prob:
                parents[int(order[b])].append(int(order[a]))
    return tuple(tuple(sorted(p)) for p in parents)


def apses(datasets: np.ndarray | Sequence[np.ndarray], arities: Sequence[int],
          n_structures: int = 10, n_bootstrap: int = 10, ess: float = 1.0,
          random_state: Any = None) -> float:
    """Average posterior standard error of structures (APSES).

    Draw M random DAGs G_m (:func:`random_dag`) and B bootstrap samples D̃_i of the data (same
    size, with replacement); p_mi = P(D̃_i | G_m) / sum_m' P(D̃_i | G_m') (BDeu marginal
    likelihoods, normalised in log space); SE_m = sqrt(sum_i (p_mi - p̄_m)^2 / (B (B - 1)));
    APSES = mean_m SE_m (Sugahara, Aomi & Ueno, §4, the APSES equation; with M = B = 10 the
    divisor is 90).

    Parameters
    ----------
    datasets : (n, v) int array, or a sequence of them
        Complete state codes. One array: the K-best method on the whole training data. A
        sequence (the subsamples D_1..D_T of the proposed method): each D_t is bootstrapped
        and p_mi is the average over t of the normalised posteriors (docs/specs.md §6).
    arities : (v,) ints
    n_structures, n_bootstrap : int, default 10
        M and B (the paper's 10 and 10).
    ess : float, default 1.0
        BDeu equivalent sample size.
    random_state : int, Generator or None

    Returns
    -------
    float

    Notes
    -----
    How the paper drew its random DAGs is not stated; ours: random order, each allowed edge
    with probability 0.5 (docs/specs.md §6 "open"). The same M DAGs are used for every t.
    """
    sets = [np.asarray(datasets)] if isinstance(datasets, np.ndarray) else [
        np.asarray(d) for d in datasets]
    if not sets or any(d.ndim != 2 or len(d) == 0 for d in sets):
        raise ValueError("apses needs one or more non-empty 2-D code arrays.")
    M, B = int(n_structures), int(n_bootstrap)
    if M < 2 or B < 2:
        raise ValueError("apses needs at least 2 structures and 2 bootstrap samples.")
    rng = np.random.default_rng(random_state)
    ar = np.asarray(arities, dtype=np.int64)
    dags = [random_dag(len(ar), rng) for _ in range(M)]
    p = np.zeros((M, B))
    for D in sets:
        for i in range(B):
            Db = D[rng.integers(0, len(D), len(D))]
            s = np.array([structure_log_score(Db, ar, g, "bdeu", ess) for g in dags])
            p[:, i] += np.exp(s - logsumexp(s)) / len(sets)
    se = np.sqrt(((p - p.mean(axis=1, keepdims=True)) ** 2).sum(axis=1) / (B * (B - 1)))
    return float(se.mean())


# ------------------------------------------------------------------------- significance tests
def wilcoxon_over_datasets(a: Sequence[float], b: Sequence[float],
                           alternative: str = "two-sided", method: str = "approx") -> float:
    """p-value of the Wilcoxon signed-rank test of paired values ``a`` vs ``b`` (one pair per
    data set): zero differences dropped, no continuity correction
    (``scipy.stats.wilcoxon(zero_method="wilcox", correction=False, method=method)``). The
    default ``method="approx"`` (normal approximation) is the variant that reproduces the
    p-values printed in Sugahara, Aomi & Ueno's Table 1 (docs/specs.md §6); ``method="auto"``
    (scipy's default: exact distribution for small samples without ties) is what Santafé et al.'s
    comparisons use (``reproduce.santafe``). All differences zero: 1.0."""
    d = np.asarray(a, dtype=float) - np.asarray(b, dtype=float)
    if d.ndim != 1 or np.isnan(d).any():
        raise ValueError("wilcoxon_over_datasets needs two equal-length vectors without NaN.")
    if not np.any(d != 0):
        return 1.0
    return float(wilcoxon(d, zero_method="wilcox", correction=False, method=method,
                          alternative=alternative).pvalue)


def hommel(pvalues: Sequence[float]) -> np.ndarray:
    """Hommel-adjusted p-values (Hommel 1988; closed testing with Simes tests).

    The adjusted p-value of H_i is max over the index sets I containing i of the Simes
    p-value min_j |I| p_(j)^I / j. Computed with the O(n^2) algorithm of Wright (1992)
    (the one statsmodels' ``multipletests(method="hommel")`` uses): for m = n .. 2,
    c_m = min_{j<=m} m p_(n-m+j) / j over the m largest p-values; the m largest get
    max(a, c_m), the others max(a, min(m p, c_m)).

    Parameters
    ----------
    pvalues : sequence of float in [0, 1]

    Returns
    -------
    ndarray
        Adjusted p-values in the input order (>= the raw ones, <= 1).

    References
    ----------
    Hommel, G. (1988). A stagewise rejective multiple test procedure based on a modified
    Bonferroni test. Biometrika 75, 383-386. Wright, S. P. (1992). Adjusted p-values for
    simultaneous inference. Biometrics 48, 1005-1013.
    """
    p = np.asarray(pvalues, dtype=float)
    if p.ndim != 1 or np.isnan(p).any() or (p < 0).any() or (p > 1).any():
        raise ValueError("hommel needs a 1-D vector of p-values in [0, 1].")
    n = len(p)
    if n == 0:
        return p.copy()
    order = np.argsort(p, kind="stable")
    ps = p[order]
    a = ps.copy()
    for m in range(n, 1, -1):
        cm = np.min(m * ps[n - m:] / np.arange(1, m + 1))
        a[n - m:] = np.maximum(a[n - m:], cm)
        a[:n - m] = np.maximum(a[:n - m], np.minimum(m * ps[:n - m], cm))
    out = np.empty(n)
    out[order] = np.minimum(a, 1.0)
    return out


def win_draw_loss(a: Sequence[float], b: Sequence[float], tol: float = 0.0
                  ) -> tuple[int, int, int]:
    """(wins, draws, losses) of ``a`` against ``b``; |a - b| <= tol is a draw."""
    d = np.asarray(a, dtype=float) - np.asarray(b, dtype=float)
    return int((d > tol).sum()), int((np.abs(d) <= tol).sum()), int((d < -tol).sum())


def compare_over_datasets(scores: pd.DataFrame | Mapping[str, Sequence[float]], reference: str,
                          others: Sequence[str] | None = None) -> pd.DataFrame:
    """``reference`` against each other column of ``scores`` (rows = data sets).

    Returns one row per other method: mean difference (reference - other), wins / draws /
    losses of the reference, raw two-sided Wilcoxon p (:func:`wilcoxon_over_datasets`) and the
    Hommel-adjusted p over all the comparisons made (:func:`hommel`). Data sets with a missing
    value for either method are left out of that comparison.
    """
    df = pd.DataFrame(scores)
    if reference not in df.columns:
        raise ValueError(f"Unknown reference method {reference!r}.")
    others = [c for c in df.columns if c != reference] if others is None else list(others)
    rows = []
    for m in others:
        pair = df[[reference, m]].dropna()
        w, d, loss = win_draw_loss(pair[reference], pair[m])
        rows.append({"method": m, "n_datasets": len(pair),
                     "mean_diff": float((pair[reference] - pair[m]).mean()),
                     "wins": w, "draws": d, "losses": loss,
                     "p_wilcoxon": wilcoxon_over_datasets(pair[reference], pair[m])})
    out = pd.DataFrame(rows)
    if len(out):
        out["p_hommel"] = hommel(out["p_wilcoxon"].to_numpy())
    return out
