"""Exact and K-best Bayesian network structure learning (DESIGN §3, §4, §9).

* :func:`best_network` — the optimal DAG by dynamic programming over variable subsets
  (Silander & Myllymäki 2006): best parent set of every variable inside every candidate set,
  best sink of every subset, optimal order, optimal network.
* :func:`k_best` — the K best DAGs (Tian, He & Ram 2010) or the K best Markov equivalence
  classes (Chen & Tian 2014), by the same DP carrying sorted lists of K partial solutions.

Variants: **EBN** (``augmented=False``: every variable, the class included, is learned freely)
and **EANB** (``augmented=True``: the class at ``class_index`` is a parent of every feature and
has no parents; the features' structure is optimal; Sugahara, Uto & Ueno 2018).

Scores are log P(D | G) under BDeu (equivalent sample size ``ess``, α = 1 by default) or K2,
plus a uniform structure prior (log prior 0). Training data must be complete.

Determinism: ties in score are broken by the kernels' fixed order (parent sets by smaller
bitmask, networks by smaller (sink, rank, rank)), so the same data give the same list.
Equivalence classes are identified by a 64-bit Zobrist key of skeleton and v-structures
(:func:`bnma_core.structure.cpdag.ec_hash`), never by score equality.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import cached_property

import networkx as nx
import numpy as np

from ..data import DataError
from ..kernels.exact import kbest_networks, kbest_parent_sets
from ..network import DiscreteBN
from ..scores import family_counts, log_ml_counts, posterior_cpt
from .cpdag import dag_to_cpdag, ec_hash, parents_to_dag, zobrist_codes
from .local_scores import MAX_FAMILY_CELLS, check_score, local_scores, validate_complete


class ResourceLimitError(DataError):
    """The requested exact search would exceed the configured size, memory or time limits."""


class Stopped(Exception):
    """Raised by :func:`k_best` when its ``progress`` callback asked to stop."""


STAGES = ("local scores", "best parent sets", "networks")


@dataclass
class ExactLimits:
    """Refusal thresholds, checked before anything is allocated (spec §8).

    Attributes
    ----------
    max_vars_k10 : int
        Most variables in the DP (EANB: features) for K <= 10.
    max_vars_k100 : int
        Most variables in the DP for K > 10.
    max_bytes : float
        Memory budget in bytes for the DP tables.
    """

    max_vars_k10: int = 20
    max_vars_k100: int = 18
    max_bytes: float = 12e9


DEFAULT_LIMITS = ExactLimits()

# seconds per unit of work, measured on the 2-core reference machine (benchmarks/exact.py)
_SEC_PER_COUNT = 2.5e-9     # one row of one variable set's contingency table
_SEC_PER_MERGE = 7e-9       # one head comparison in a parent-set list merge
_SEC_PER_HEAP = 1e-7        # one heap step of the network lists


def estimate_resources(n_vars: int, k: int, n_rows: int = 1000, augmented: bool = False
                       ) -> tuple[float, float]:
    """(bytes, seconds) the K-best DP over ``n_vars`` variables will need (before allocation).

    Memory: K-best parent-set lists n 2^(n-1) K (8 + 4) bytes, network lists
    2^n K 33 bytes, local scores n 2^(n-1) 8 bytes, set terms 2^(n+1) 8 bytes (spec §8).
    Time: set counting 2^n N, list merges n 2^(n-1) n K / 2, heap work 2^n n K log2(K + 1).
    """
    n, K = int(n_vars), int(k)
    half = 2.0 ** (n - 1) if n > 0 else 0.5
    full = 2.0 ** n
    sets = 2.0 ** (n + (1 if augmented else 0))
    mem = n * half * (K * 12 + 4 + 8) + full * (K * 33 + 4) + sets * 8 * 2
    secs = (sets * n_rows * _SEC_PER_COUNT + n * half * n * max(K, 1) / 2 * _SEC_PER_MERGE
            + full * (n + K * math.log2(K + 1)) * _SEC_PER_HEAP)
    return mem, secs


def check_limits(n_vars: int, k: int, n_rows: int = 1000, augmented: bool = False,
                 limits: ExactLimits | None = None) -> tuple[float, float]:
    """Raise :class:`ResourceLimitError` with a plain message when the search is too large."""
    lim = DEFAULT_LIMITS if limits is None else limits
    mem, secs = estimate_resources(n_vars, k, n_rows, augmented)
    max_vars = lim.max_vars_k10 if k <= 10 else lim.max_vars_k100
    what = "features" if augmented else "variables"
    hint = "select features or lower K" + ("" if augmented else ", or use EANB")
    if n_vars > max_vars:
        raise ResourceLimitError(
            f"{n_vars} {what} need about {_fmt_bytes(mem)} for K = {k} (and about "
            f"{_fmt_secs(secs)}); the limit is {max_vars} {what} on this machine — {hint}.")
    if mem > lim.max_bytes:
        raise ResourceLimitError(
            f"{n_vars} {what} need about {_fmt_bytes(mem)} for K = {k}; the memory limit is "
            f"{_fmt_bytes(lim.max_bytes)} — {hint}.")
    return mem, secs


def _fmt_bytes(b: float) -> str:
    return f"{b / 1e9:.1f} GB" if b >= 1e8 else f"{b / 1e6:.0f} MB"


def _fmt_secs(s: float) -> str:
    if s < 60:
        return f"{max(s, 0.1):.1f} s"
    if s < 3600:
        return f"{s / 60:.0f} min"
    return f"{s / 3600:.1f} h"


@dataclass
class ScoredStructure:
    """One DAG (and its equivalence class) with its score.

    Attributes
    ----------
    log_score : float
        log P(D | G) + log prior (uniform prior: 0), natural log.
    parents : tuple of tuples
        Sorted parent column indices of every variable 0..n-1.
    key : int
        64-bit equivalence-class key (:func:`bnma_core.structure.cpdag.ec_hash`).
    dag : networkx.DiGraph
        The DAG over column indices 0..n-1 (the class's representative found by the DP);
        built on first access.
    cpdag : networkx.DiGraph
        Its CPDAG (``directed`` edge attribute; undirected edges as two opposite arcs); built
        on first access.
    """

    log_score: float
    parents: tuple[tuple[int, ...], ...]
    key: int

    @classmethod
    def from_parents(cls, log_score: float, parents: Sequence[Iterable[int]]
                     ) -> ScoredStructure:
        pa = tuple(tuple(sorted(int(p) for p in ps)) for ps in parents)
        return cls(float(log_score), pa, ec_hash(pa))

    @cached_property
    def dag(self) -> nx.DiGraph:
        return parents_to_dag(self.parents)

    @cached_property
    def cpdag(self) -> nx.DiGraph:
        return dag_to_cpdag(self.dag)

    @property
    def n_edges(self) -> int:
        return sum(len(p) for p in self.parents)

    def fit_network(self, X: np.ndarray, arities: Sequence[int], ess: float = 1.0,
                    names: Sequence[str] | None = None,
                    states: Sequence[Sequence[str]] | None = None,
                    sample_weight: np.ndarray | None = None) -> DiscreteBN:
        """The DAG with EAP parameters θ_ijk = (N_ijk + α_ijk) / (N_ij + α_ij),
        α_ijk = ess / (r_i q_i) (BDeu pseudo-counts; Sugahara et al., §1 of the spec), counted
        on the rows of ``X`` where the family is observed (missing = -1), each row weighted by
        ``sample_weight`` if given."""
        X = np.asarray(X)
        ar = np.asarray(arities, dtype=np.int64)
        n = len(self.parents)
        nm = [f"x{i}" for i in range(n)] if names is None else list(names)
        st = [[str(s) for s in range(int(a))] for a in ar] if states is None else states
        cpts = []
        for i, pa in enumerate(self.parents):
            counts = family_counts(X, i, list(pa), ar, sample_weight)
            q, r = counts.shape
            cpts.append(posterior_cpt(counts, ess / (r * q)))
        return DiscreteBN(nm, st, [list(p) for p in self.parents], cpts, name="exact")


def posterior_weights(structures: Sequence[ScoredStructure]) -> np.ndarray:
    """Posterior of each structure normalised within the list: exp(S_k - max S) / sum."""
    s = np.array([x.log_score for x in structures], dtype=float)
    if s.size == 0:
        return s
    w = np.exp(s - s.max())
    return w / w.sum()


def _check_k(k: int) -> int:
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
        raise ValueError(f"k must be a positive integer (got {k!r}).")
    if k > 10_000:
        raise ValueError("k is limited to 10,000.")
    return int(k)


def k_best(X: np.ndarray, arities: Sequence[int], k: int, *, classes: bool = True,
           score: str = "bdeu", ess: float = 1.0, max_parents: int | None = None,
           class_index: int | None = None, augmented: bool = False,
           limits: ExactLimits | None = None,
           progress: Callable[[str, float], bool] | None = None,
           sample_weight: np.ndarray | None = None,
           max_family_cells: int | None = MAX_FAMILY_CELLS) -> list[ScoredStructure]:
    """The K best DAGs or the K best Markov equivalence classes, best first.

    Parameters
    ----------
    X : (n_rows, n_vars) int array
        Complete state codes (no missing values).
    arities : (n_vars,) ints
    k : int
        Number of structures (fewer are returned when fewer exist).
    classes : bool, default True
        True: K best equivalence classes, each once with its DP representative DAG
        (Chen & Tian 2014; needs the score-equivalent BDeu). False: K best DAGs
        (Tian, He & Ram 2010).
    score : {"bdeu", "k2"}
    ess : float, default 1.0
        BDeu equivalent sample size α.
    max_parents : int or None
        Maximum in-degree (EANB: counting the class).
    class_index : int or None
        The class column (needed when ``augmented``).
    augmented : bool, default False
        EANB: class parent of every feature, class parentless, features' structure optimal.
    limits : ExactLimits, optional
        Size/memory thresholds (default :data:`DEFAULT_LIMITS`).
    progress : callable, optional
        ``progress(stage, fraction)`` is called before each of the :data:`STAGES` (and with
        ``"done", 1.0``); returning True raises :class:`Stopped` there (a stage itself runs to
        its end).
    sample_weight : (n_rows,) floats, optional
        Row weights: counts become sums of weights (AdaBoost-style learners; spec §4).
    max_family_cells : int or None, default ``MAX_FAMILY_CELLS`` (:mod:`.local_scores`)
        Families with more cells (r_v · q_v) are not considered, so that every returned
        network's parameter tables fit in memory; None = no limit.

    Returns
    -------
    list of ScoredStructure

    Raises
    ------
    ResourceLimitError
        When the search exceeds ``limits`` (checked before allocation).

    References
    ----------
    Silander & Myllymäki (2006); Tian, He & Ram (2010); Chen & Tian (2014), §3-4;
    Sugahara, Aomi & Ueno (spec §3).
    """
    K, Xc, ar, perm, m, lim = _check_search(X, arities, k, classes, score, ess, max_parents,
                                            class_index, augmented, limits)
    n = Xc.shape[1]
    tick = _stage_ticker(progress)
    tick(STAGES[0], 0.0)
    ls, offset = _permuted_local_scores(Xc, ar, perm, score, ess, lim, augmented, class_index,
                                        sample_weight, max_family_cells)
    if m == 0:
        return [ScoredStructure.from_parents(0.0, [()] * n)]
    tick(STAGES[1], 0.3)
    bs, bm, bl = kbest_parent_sets(ls, K)
    del ls
    ecode, vcode = zobrist_codes(m)
    tick(STAGES[2], 0.6)
    scores, masks, _, count = kbest_networks(bs, bm, bl, K, bool(classes), ecode, vcode)
    del bs, bm, bl
    out = _decode_structures(scores, masks, count, perm, n, m, augmented, class_index, offset)
    if progress is not None:
        progress("done", 1.0)
    return out


def _check_search(X: np.ndarray, arities: Sequence[int], k: int, classes: bool, score: str,
                  ess: float, max_parents: int | None, class_index: int | None, augmented: bool,
                  limits: ExactLimits | None) -> tuple:
    """Every check of :func:`k_best` before a table is allocated; returns (K, codes, arities,
    DP column order, number of DP variables, in-degree limit)."""
    K = _check_k(k)
    Xc, ar = validate_complete(X, arities)
    kind = check_score(score, ess)
    if classes and kind != 1:
        raise ValueError("Equivalence classes need a score-equivalent score: use score='bdeu' "
                         "(K2 gives equivalent DAGs different scores).")
    perm, m, lim = _search_order(Xc.shape[1], max_parents, class_index, augmented)
    check_limits(m, K, Xc.shape[0], augmented, limits)
    return K, Xc, ar, perm, m, lim


def _search_order(n: int, max_parents: int | None, class_index: int | None, augmented: bool
                  ) -> tuple[list[int], int, int | None]:
    """Check the structure options of :func:`k_best`; return (column order of the DP, the
    class last in EANB; number of DP variables; in-degree limit of the DP variables)."""
    if max_parents is not None and (isinstance(max_parents, bool) or not isinstance(
            max_parents, (int, np.integer)) or max_parents < 0):
        raise ValueError("max_parents must be a non-negative integer or None.")
    if class_index is not None and not (isinstance(class_index, (int, np.integer))
                                        and 0 <= class_index < n):
        raise ValueError(f"class_index must be a column index 0..{n - 1}.")
    if augmented:
        if class_index is None:
            raise ValueError("augmented=True (EANB) needs class_index.")
        if n < 2:
            raise DataError("EANB needs the class and at least one feature.")
        if max_parents is not None and max_parents < 1:
            raise ValueError("In EANB the class is a parent of every feature: max_parents "
                             "must be at least 1.")
        c = int(class_index)
        perm = [i for i in range(n) if i != c] + [c]
        m = n - 1
        lim = None if max_parents is None else int(max_parents) - 1
    else:
        perm = list(range(n))
        m = n
        lim = None if max_parents is None else int(max_parents)
    return perm, m, lim


def _stage_ticker(progress: Callable[[str, float], bool] | None) -> Callable[[str, float], None]:
    """``tick(stage, fraction)``: report the stage to ``progress``; raise :class:`Stopped` when
    it returns True."""

    def tick(stage: str, fraction: float) -> None:
        if progress is not None and progress(stage, fraction):
            raise Stopped(f"Stopped before the stage {stage!r}.")

    return tick


def _permuted_local_scores(Xc: np.ndarray, ar: np.ndarray, perm: list[int], score: str,
                           ess: float, lim: int | None, augmented: bool, class_index: int | None,
                           sample_weight: np.ndarray | None, max_family_cells: int | None
                           ) -> tuple[np.ndarray, float]:
    """Local scores of the columns in DP order ``perm`` (EANB: the class, last, forced into
    every parent set) and the score offset (EANB: the class's parentless family score)."""
    n = Xc.shape[1]
    Xp = Xc[:, perm]
    arp = ar[perm]
    ls = local_scores(Xp, arp, score, ess, lim, forced=[n - 1] if augmented else (),
                      sample_weight=sample_weight, max_family_cells=max_family_cells)
    offset = 0.0
    if augmented:
        offset = log_ml_counts(family_counts(Xc, int(class_index), [], ar, sample_weight),
                               score, ess)
    return ls, offset


def _decode_structures(scores: np.ndarray, masks: np.ndarray, count, perm: list[int], n: int,
                       m: int, augmented: bool, class_index: int | None,
                       offset: float) -> list[ScoredStructure]:
    """The DP's networks (parent bitmasks over the DP order ``perm``) as ScoredStructures over
    the original columns, the class added as a parent of every feature in EANB."""
    out = []
    for r in range(int(count)):
        parents: list[tuple[int, ...]] = [()] * n
        for i in range(m):
            pm = int(masks[r, i])
            pa = [perm[b] for b in range(m) if (pm >> b) & 1]
            if augmented:
                pa.append(int(class_index))
            parents[perm[i]] = tuple(sorted(pa))
        out.append(ScoredStructure.from_parents(float(scores[r]) + offset, parents))
    return out


def best_network(X: np.ndarray, arities: Sequence[int], score: str = "bdeu", ess: float = 1.0,
                 max_parents: int | None = None, class_index: int | None = None,
                 augmented: bool = False, *, limits: ExactLimits | None = None,
                 sample_weight: np.ndarray | None = None) -> ScoredStructure:
    """The optimal DAG (Silander & Myllymäki 2006; EANB with ``augmented=True``).

    Same parameters as :func:`k_best` with k = 1; returns one :class:`ScoredStructure`.
    """
    return k_best(X, arities, 1, classes=False, score=score, ess=ess, max_parents=max_parents,
                  class_index=class_index, augmented=augmented, limits=limits,
                  sample_weight=sample_weight)[0]


def structure_log_score(X: np.ndarray, arities: Sequence[int], parents: Sequence[Iterable[int]],
                        score: str = "bdeu", ess: float = 1.0) -> float:
    """log P(D | G) of a given DAG (sum of family scores from
    :func:`bnma_core.scores.log_ml_counts`), for checking a structure from elsewhere."""
    Xc, ar = validate_complete(X, arities)
    check_score(score, ess)
    return float(sum(log_ml_counts(family_counts(Xc, i, list(pa), ar), score, ess)
                     for i, pa in enumerate(parents)))
