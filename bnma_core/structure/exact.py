"""Exact and K-best Bayesian network structure learning (DESIGN §3, §4, §9).

* :func:`best_network` — the optimal DAG by dynamic programming over variable subsets
  (Silander & Myllymäki 2006): best parent set of every variable inside every candidate set,
  best sink of every subset, optimal order, optimal network.
* :func:`k_best` — the K best DAGs (Tian, He & Ram 2010) or the K best Markov equivalence
  classes (Chen & Tian 2014), by the same DP carrying sorted lists of K partial solutions.
* :func:`edge_posteriors` — the exact posterior probability of every edge under the
  order-modular prior that order MCMC samples from (uniform over node orders), by forward and
  backward sums over subsets (Koivisto & Sood 2004; Koivisto 2006; DESIGN §13).

Variants: **EBN** (``augmented=False``: every variable, the class included, is learned freely)
and **EANB** (``augmented=True``: the class at ``class_index`` is a parent of every feature and
has no parents; the features' structure is optimal; Sugahara, Uto & Ueno 2018).

Scores are log P(D | G) under BDeu (equivalent sample size ``ess``, α = 1 by default) or K2,
plus a uniform structure prior (log prior 0). Training data must be complete (except for
:func:`edge_posteriors`, which scores incomplete data as order MCMC does).

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
from ..kernels.order_dp import order_modular_edges
from ..network import DiscreteBN
from ..scores import PRIORS, family_counts, log_ml_counts, log_structure_prior, posterior_cpt
from .cpdag import dag_to_cpdag, ec_hash, parents_to_dag, zobrist_codes
from .local_scores import MAX_FAMILY_CELLS, check_score, local_scores, validate_complete


class ResourceLimitError(DataError):
    """The requested exact search would exceed the configured size, memory or time limits."""


class Stopped(Exception):
    """Raised by :func:`k_best` when its ``progress`` callback asked to stop."""


STAGES = ("local scores", "best parent sets", "networks")


@dataclass
class ExactLimits:
    """Refusal thresholds, checked before anything is allocated (docs/specs.md §8).

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
    2^n K 33 bytes, local scores n 2^(n-1) 8 bytes, set terms 2^(n+1) 8 bytes (docs/specs.md §8).
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
    if not b < 1e15:  # also inf: sizes beyond a float (1,025+ variables)
        return "more than 1,000 TB"
    if b >= 1e12:
        return f"{b / 1e12:,.0f} TB"
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
        α_ijk = ess / (r_i q_i) (BDeu pseudo-counts; docs/specs.md §1), counted
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
        Row weights: counts become sums of weights (AdaBoost-style learners; docs/specs.md §4).
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
    Sugahara, Aomi & Ueno (docs/specs.md §3).

    Examples
    --------
    Three binary variables have 25 DAGs in 11 equivalence classes (docs/specs.md §3.6):

    >>> import numpy as np
    >>> X = np.random.default_rng(0).integers(0, 2, size=(50, 3))
    >>> len(k_best(X, [2, 2, 2], 100)), len(k_best(X, [2, 2, 2], 100, classes=False))
    (11, 25)
    >>> best = k_best(X, [2, 2, 2], 3)
    >>> best[0].parents  # independent data: the empty graph scores best
    ((), (), ())
    >>> round(float(posterior_weights(best).sum()), 6)
    1.0
    """
    K, Xc, ar, perm, m, lim = _check_search(X, arities, k, classes, score, ess, max_parents,
                                            class_index, augmented, limits)
    return _search_structures(Xc, ar, perm, m, lim, K, classes, score, ess, augmented,
                              class_index, sample_weight, max_family_cells, progress)


def _search_structures(Xc: np.ndarray, ar: np.ndarray, perm: list[int], m: int,
                       lim: int | None, K: int, classes: bool, score: str, ess: float,
                       augmented: bool, class_index: int | None,
                       sample_weight: np.ndarray | None, max_family_cells: int | None,
                       progress: Callable[[str, float], bool] | None) -> list[ScoredStructure]:
    """The stages of :func:`k_best` on checked input (see :func:`_check_search`): local
    scores, K best parent sets, K best networks (Tian, He & Ram 2010; Chen & Tian 2014 when
    ``classes``), decoded over the original columns; each big table is freed once the next
    stage has been built from it."""
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


MAX_EDGE_VARS = 20
"""Most variables :func:`edge_posteriors` takes: its tables grow as n 2^n (n = 20: about
0.2 GB and 2 s with at most 3 parents, 11 s without a parent limit, on the reference machine;
each further variable more than doubles both)."""


MAX_INCOMPLETE_PARENT_SETS = 20_000
"""With missing values :func:`edge_posteriors` scores every family on its own complete rows
through order MCMC's score table, one entry per parent set: at most this many parent sets per
variable (n = 15 without a parent limit, 16,384 sets: about 10 s; 32,768: about 50 s)."""


def edge_posteriors_bytes(n_vars: int) -> float:
    """Memory :func:`edge_posteriors` needs for ``n_vars`` variables, in bytes: the local
    scores and their subset sums, n 2^(n-1) doubles each; forward and backward sums, 2^n each;
    the set terms of the local scores, about 2^(n+1) doubles."""
    n = int(n_vars)
    if n > 1000:  # 2.0 ** 1024 overflows a float (OverflowError)
        return math.inf
    return 8.0 * (2 * n * 2.0 ** max(n - 1, 0) + 2 * 2.0 ** n + 2 * 2.0 ** n)


def edge_posteriors(X: np.ndarray, arities: Sequence[int], max_parents: int | None = 3,
                    score: str = "k2", ess: float = 1.0, structure_prior: str = "uniform"
                    ) -> np.ndarray:
    """Exact posterior probability of every edge, P(u -> v | D), under the order-modular
    prior that order MCMC samples from.

    The target is that of :class:`bnma_core.structure.orders.OrderMCMC` on the paper-faithful
    score table of :func:`bnma_core.structure.score_table.build_score_table` built with the
    same ``max_parents``, ``score``, ``ess`` and ``prior=structure_prior``: a uniform prior
    over node orders and, given an order, independent parent sets Z ⊆ pred(v), |Z| <=
    ``max_parents``, weighted by exp S(v; Z) = ρ(v | Z) ML(v, Z) (DESIGN §3-4). So
    P(u -> v | D) = Σ_≺ P(≺ | D) P(u -> v | ≺, D), which the average of
    :meth:`~bnma_core.structure.score_table.ScoreTable.edge_probabilities` over sampled orders
    estimates. A DAG is weighted by its number of consistent orders (the order-modular prior,
    not a uniform prior over DAGs; Friedman & Koller 2003).

    Computed by dynamic programming over the 2^n variable subsets in log space (Koivisto &
    Sood 2004, §3-4; Koivisto 2006): subset sums α_v of the local scores, forward sums L(S)
    over the orders of S, backward sums R(S) over the orders of the rest, and per child v the
    superset sums Γ_v(Z) of L(U) R(U ∪ {v}); P(u -> v | D) = Σ_{Z ∋ u} exp(S(v; Z) + Γ_v(Z)
    − L(V)) (:func:`bnma_core.kernels.order_dp.order_modular_edges`; DESIGN §13). Time
    O(n^2 2^n), memory O(n 2^n): n = 20 in seconds.

    Parameters
    ----------
    X : (n_rows, n_vars) int array
        State codes, -1 = missing. Complete data are scored from one count per variable set
        (:func:`bnma_core.structure.local_scores.local_scores`). With missing values each
        family is scored as order MCMC scores it: counted on the rows complete on the family,
        the rows it lacks credited with its average fitted log-likelihood (the node-average
        marginal likelihood of :mod:`bnma_core.structure.score_table`); the local scores then
        come from that score table itself (a parent-set limit is needed for it to fit).
    arities : (n_vars,) ints
    max_parents : int or None, default 3
        Largest parent set (None = no limit). The paper's and order MCMC's default is 3.
    score : {"k2", "bdeu"}
        Family marginal likelihood: K2 (a_ijk = 1) or BDeu with equivalent sample size ``ess``.
    ess : float, default 1.0
    structure_prior : {"uniform", "hz"}
        log ρ(v | Z) added to every local score: 0, or Hwang & Zhang's eq. 13
        (:func:`bnma_core.scores.log_structure_prior`).

    Returns
    -------
    (n_vars, n_vars) float64
        ``P[u, v] = P(u -> v | D)`` (row parent, column child; zero diagonal), the layout of
        ``OrderMCMCBMA.edge_posterior_``.

    Raises
    ------
    ResourceLimitError
        More than :data:`MAX_EDGE_VARS` variables (checked before anything is allocated).
    DataError, ValueError
        Malformed data or options.

    References
    ----------
    Koivisto, M. & Sood, K. (2004). Exact Bayesian structure discovery in Bayesian networks.
    JMLR 5, 549-573. Koivisto, M. (2006). Advances in exact Bayesian structure discovery in
    Bayesian networks. UAI.
    """
    local = _order_local_scores(X, arities, max_parents, score, ess, structure_prior)
    n = local.shape[0]
    if n == 1:
        return np.zeros((1, 1))
    edge, _, _ = order_modular_edges(local)
    return edge


def _check_edge_options(X: np.ndarray, arities: Sequence[int], max_parents: int | None,
                        score: str, ess: float, structure_prior: str
                        ) -> tuple[np.ndarray, np.ndarray, int]:
    """The checks of :func:`edge_posteriors` before any table is allocated; returns (codes,
    arities, parent-set limit)."""
    X = np.asarray(X)
    if X.ndim != 2 or X.shape[0] == 0 or X.shape[1] == 0:
        raise DataError("The data must be a non-empty table (rows x variables) of state codes.")
    n = X.shape[1]
    if n > MAX_EDGE_VARS:
        raise ResourceLimitError(
            f"Exact edge posteriors handle at most {MAX_EDGE_VARS} variables (got {n}, which "
            f"would need about {_fmt_bytes(edge_posteriors_bytes(n))}): select at most "
            f"{MAX_EDGE_VARS} variables, or estimate the edge posteriors by order MCMC "
            "(OrderMCMCBMA's edge_posterior_).")
    if X.dtype.kind not in "iu":
        if X.dtype.kind == "f" and np.isfinite(X).all() and (np.mod(X, 1) == 0).all():
            X = X.astype(np.int64)
        else:
            raise DataError("Exact edge posteriors need integer state codes (-1 = missing), "
                            "not NaN or text; encode the data first (load_dataset).")
    ar = np.asarray(arities, dtype=np.int64)
    if ar.shape != (n,):
        raise ValueError(f"arities must give one number of states per column ({n}).")
    if (ar < 1).any():
        raise ValueError("Every variable needs at least one state.")
    if (X < -1).any() or (X >= ar[None, :]).any():
        col = int(np.flatnonzero(((X < -1) | (X >= ar[None, :])).any(axis=0))[0])
        raise DataError(f"Column {col} holds a state code outside -1..{int(ar[col]) - 1} "
                        "(-1 = missing).")
    if max_parents is None:
        lim = n - 1
    elif (isinstance(max_parents, bool) or not isinstance(max_parents, (int, np.integer))
          or max_parents < 0):
        raise ValueError(f"max_parents must be a non-negative integer or None (got "
                         f"{max_parents!r}).")
    else:
        lim = min(int(max_parents), n - 1)
    check_score(score, ess)
    if structure_prior not in PRIORS:
        raise ValueError(f"Unknown structure prior {structure_prior!r}; choose one of "
                         f"{', '.join(PRIORS)}.")
    return X, ar, lim


def _order_local_scores(X: np.ndarray, arities: Sequence[int], max_parents: int | None,
                        score: str, ess: float, structure_prior: str,
                        via_score_table: bool = False) -> np.ndarray:
    """``local[v, compress(Z, v)] = S(v; Z) = log ρ(v | Z) + log ML(v, Z)`` for every parent
    set Z of every variable (-inf beyond the parent-set limit), the input of
    :func:`bnma_core.kernels.order_dp.order_modular_edges`. Complete data (unless
    ``via_score_table``): from the set terms of :func:`.local_scores.local_scores`; with
    missing values: the entries of order MCMC's own score table (node-average scores)."""
    X, ar, lim = _check_edge_options(X, arities, max_parents, score, ess, structure_prior)
    n = X.shape[1]
    if n == 1:
        return np.zeros((1, 1))
    if via_score_table or (X < 0).any():
        _check_incomplete_route(X.shape[0], ar, lim)
        return _local_from_score_table(X, ar, lim, score, ess, structure_prior)
    local = local_scores(X, ar, score, ess, lim, max_family_cells=None)
    prior = np.array([log_structure_prior(n, k, structure_prior) if k <= lim else -np.inf
                      for k in range(n)])
    local += prior[np.bitwise_count(np.arange(local.shape[1], dtype=np.uint64))][None, :]
    return local


def _check_incomplete_route(n_rows: int, ar: np.ndarray, lim: int) -> None:
    """Refuse (before allocation) a score table of incomplete data with more than
    :data:`MAX_INCOMPLETE_PARENT_SETS` parent sets per variable or more memory than the score
    tables allow, naming the largest ``max_parents`` that fits."""
    from .score_table import DEFAULT_MAX_BYTES, estimate_table_bytes, n_parent_sets

    n = len(ar)

    def fits(k: int) -> bool:
        return (n_parent_sets(n - 1, k) <= MAX_INCOMPLETE_PARENT_SETS
                and estimate_table_bytes(n, n_rows, ar, k) <= DEFAULT_MAX_BYTES)

    if fits(lim):
        return
    best = max((k for k in range(lim) if fits(k)), default=0)
    raise ResourceLimitError(
        f"With missing values every family is scored on its own complete rows, one table "
        f"entry per parent set: {n_parent_sets(n - 1, lim):,} parent sets per variable need "
        f"about {_fmt_bytes(estimate_table_bytes(n, n_rows, ar, lim))} (limits "
        f"{MAX_INCOMPLETE_PARENT_SETS:,} sets and {_fmt_bytes(DEFAULT_MAX_BYTES)}): use "
        f"max_parents={best} or less, or remove / impute the incomplete rows.")


def _local_from_score_table(X: np.ndarray, ar: np.ndarray, lim: int, score: str, ess: float,
                            structure_prior: str) -> np.ndarray:
    """The local scores of the paper-faithful order-MCMC score table (unpruned) laid out by
    compressed parent set (its own size check refuses a table that does not fit)."""
    from .score_table import build_score_table  # the order-method kernels, compiled on use

    tab = build_score_table(X, ar, max_parents=lim, score=score, prior=structure_prior,
                            ess=ess, candidates=None, prune_eps=0.0)
    n = X.shape[1]
    local = np.full((n, 1 << (n - 1)), -np.inf)
    for v in range(n):
        masks = tab.masks[v].astype(np.int64)
        idx = (masks & ((1 << v) - 1)) | ((masks >> (v + 1)) << v)
        local[v, idx] = tab.scores[v]
    return local
