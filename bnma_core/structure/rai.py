"""RAI structure learning and B-RAI's graph-generating tree (DESIGN §4).

**RAI** (recursive autonomy identification; Yehezkel & Lerner, JMLR 10, 2009) learns a CPDAG
by conditional-independence (CI) tests of increasing order n. A call RAI(n, en, ex) on
*endogenous* nodes ``en`` with *exogenous* (already-learned ancestor) nodes ``ex``:

0. exits when no endogenous node has more than n potential parents (parents and undirected
   neighbours: the "fan-in");
1. tests every edge from an exogenous to an endogenous node, then every edge between two
   endogenous nodes, for independence given a set of n potential parents of either end point
   (edges removed at once, the separating set remembered), orienting v-structures and
   propagating orientations (Meek's rules R1-R4,
   :meth:`bnma_core.structure.cpdag.PDAG.meek_closure`) after each of the two steps;
2. splits ``en`` into the *descendant* sub-structure (the nodes of lowest topological order:
   not a parent of any endogenous node and not joined to one by an undirected path) and the
   *ancestor* sub-structures (the connected components of the rest);
3. recurses with order n + 1 on each ancestor sub-structure (same ``ex``) and then on the
   descendant sub-structure (``ex`` plus all ancestor nodes).

**B-RAI** (Rohekar, Gurwicz, Nisimov, Koren & Novik, NeurIPS 2018) turns the recursion into a
*graph-generating tree* (:class:`GeneratingTree`): at each call it draws ``s`` bootstrap samples
of the training rows, runs step 1-2 on each (a "cookie" per sample) and recurses from each, so
every internal node has ``s`` alternative children; an exit is a leaf holding the learned
sub-graph of its endogenous nodes and its BDeu score (the sum of the endogenous nodes' family
log marginal likelihoods on the training data, after a consistent DAG extension; −∞ if there is
none). A structure is sampled from the tree bottom-up (:func:`sample_dags`): for every cookie
the sub-trees are sampled, the cookie's score is the sum of their sampled scores, and one cookie
is chosen with probability proportional to exp(score) (the posterior of the sampled
sub-structure; uniformly if every score is −∞). The sampled graph's skeleton is then
re-oriented (v-structures of the sampled graph, then R1-R3).

**As the authors' code does it** (IntelLabs ``causality-lab``, ``causal_discovery_algs/brai.py``
and ``rai.py``; choices the papers leave open): CI tests use all potential parents of either
end point; an edge is removed as soon as one test accepts independence and later tests see the
thinned graph; leaves are scored on the whole training set with BDeu (total ess 1, i.e.
a_ijk = 1 / (r_i q_i)); the descendant sub-structure of a cookie is learned from the graph as
the ancestor sub-trees left it; the descendant set is the lowest topological set as in the
original RAI code (the Python code's variant that takes all but the highest set is not used).

**Choices of this implementation**: the CI test is the G² test (:func:`bnma_core.scores.g2_test`)
at level ``significance`` (the authors' code uses a conditional-mutual-information threshold,
available as ``cmi``); ``max_order`` optionally caps the order (None: as published, recursion
until the exit condition); with ``s = 1`` no bootstrap is drawn, so the tree is a single path
and B-RAI reduces to plain RAI on the training rows (:func:`rai`); every sampled CPDAG becomes
a DAG by a consistent extension (Dor & Tarsi 1992,
:func:`bnma_core.structure.cpdag.consistent_extension`; if a sampled graph has none, a greedy
acyclic orientation in index order). Counts are taken over the distinct training rows weighted
by their multiplicities, and a bootstrap sample is drawn as its row counts,
Multinomial(N, multiplicity / N) — the same distribution as N rows drawn with replacement, at a
cost that grows with the number of distinct rows rather than with N.

**Speed, with the same results for a given seed** (pinned by ``tests/classifiers/test_brai.py``
against the outputs of the earlier pure-Python implementation): a bootstrap cookie's two thinning
steps each run as one numba kernel (:func:`bnma_core.kernels.citests.thin_pairs`: all pairs, the
condition sets in the same order, the edge removed at the first accepted test, the same G² table,
statistic and scipy p-value; a pair with several tests to come and few cells is first counted once
over its candidate variables); the leaf scores are memoized by sub-graph (the same sub-graphs recur
across the tree); the samples are drawn node by node for all samples at once (:func:`_sample_many`:
the same random numbers in the same order, the same floating-point operations as one-at-a-time
sampling). Plain RAI (:func:`rai`, ``s = 1``) keeps the Python path with its test cache. What
remains is the size of the tree (``benchmarks/brai.py``, ``experiments/sugahara.md``).

References
----------
Yehezkel, R. & Lerner, B. (2009). Bayesian network structure learning by recursive autonomy
identification. JMLR 10, 1527-1570. Rohekar, R. Y., Gurwicz, Y., Nisimov, S., Koren, G. &
Novik, G. (2018). Bayesian structure learning by recursive bootstrap. NeurIPS 31. Reference
code: IntelLabs ``causality-lab`` (``causal_discovery_algs/brai.py``, ``rai.py``).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from itertools import chain, combinations
from typing import Any

import networkx as nx
import numpy as np

from ..kernels.citests import bootstrap_columns, g2_statistic, thin_pairs
from ..scores import DirichletScore, family_counts, g2_test, observed_family_counts
from .cpdag import PDAG, consistent_extension
from .exact import ResourceLimitError, _fmt_secs

__all__ = ["GeneratingTree", "rai", "sample_dags"]

#: Families with more cells than this are scored from their observed parent configurations
#: only (:func:`bnma_core.scores.observed_family_counts`; the same BDeu value).
_DENSE_CELLS = 1 << 22


def _dag_parents(g: PDAG) -> tuple[tuple[int, ...], ...] | None:
    """Parents of a consistent extension of ``g`` (Dor & Tarsi 1992), or None if none."""
    try:
        dag = consistent_extension(g.to_networkx())
    except ValueError:
        return None
    return tuple(tuple(sorted(dag.predecessors(v))) for v in range(len(g.par)))


def _greedy_dag_parents(g: PDAG) -> tuple[tuple[int, ...], ...]:
    """A DAG close to ``g`` when it has no consistent extension (conflicting orientations):
    arcs, then undirected edges, added in index order, each reversed if it would close a
    cycle."""
    n = len(g.par)
    d = nx.DiGraph()
    d.add_nodes_from(range(n))
    edges = sorted((u, v) for v in range(n) for u in g.par[v])
    edges += sorted((u, v) for v in range(n) for u in g.und[v] if u < v)
    for u, v in edges:
        if d.has_edge(u, v) or d.has_edge(v, u):
            continue
        if nx.has_path(d, v, u):
            u, v = v, u
        d.add_edge(u, v)
    return tuple(tuple(sorted(d.predecessors(v))) for v in range(n))


# ------------------------------------------------------------------------------ RAI steps
def _key(a: int, b: int) -> tuple[int, int]:
    return (a, b) if a < b else (b, a)


class _CITest:
    """G² independence decisions on one data table, given as distinct rows and their
    multiplicities (cached: the table does not change)."""

    def __init__(self, data: np.ndarray, arities: np.ndarray, significance: float,
                 weights: np.ndarray | None = None, cmi: float | None = None) -> None:
        self.data = np.ascontiguousarray(data, dtype=np.int64)
        self.arities = np.ascontiguousarray(arities, dtype=np.int64)
        self.significance = significance
        self.cmi = cmi
        self.weights = (np.ones(len(self.data)) if weights is None
                        else np.ascontiguousarray(weights, dtype=np.float64))
        self.cache: dict[tuple, bool] = {}
        self.n_tests = 0

    def independent(self, x: int, y: int, z: tuple[int, ...]) -> bool:
        k = (*_key(x, y), tuple(sorted(z)))
        hit = self.cache.get(k)
        if hit is None:
            self.n_tests += 1
            if self.cmi is None:
                p = g2_test(self.data, k[0], k[1], k[2], self.arities, self.weights)
                hit = p > self.significance
            else:                   # CMI (nats) = G² / 2N at most the threshold
                g2 = g2_statistic(self.data, self.weights, k[0], k[1],
                                  np.asarray(k[2], dtype=np.int64), self.arities)
                hit = g2 <= 2.0 * self.cmi * float(self.weights.sum())
            self.cache[k] = hit
        return hit


def _condition_sets(g: PDAG, a: int, b: int, order: int):
    """Sets of ``order`` potential parents of a (without b), then of b (without a), each once."""
    pa = sorted(g.potential_parents(a) - {b})
    pb = sorted(g.potential_parents(b) - {a})
    seen = set()
    for z in chain(combinations(pa, order), combinations(pb, order)):
        if z not in seen:
            seen.add(z)
            yield z


def _thin(g: PDAG, sep: dict, pairs, order: int, ci: _CITest) -> None:
    for a, b in pairs:
        if not g.adjacent(a, b):
            continue
        for z in _condition_sets(g, a, b, order):
            if ci.independent(a, b, z):
                g.delete(a, b)
                sep[_key(a, b)] = frozenset(z)
                break


class _BootCI:
    """G² independence decisions on one bootstrap sample, made by the numba kernel
    :func:`bnma_core.kernels.citests.thin_pairs` one whole thinning step at a time: the same
    pairs, condition sets, order and decisions as :func:`_thin` with a fresh :class:`_CITest`
    (within one RAI call no test repeats — step A1's and B1's pairs are disjoint — so the cache
    of :class:`_CITest` never hits there)."""

    def __init__(self, cols: np.ndarray, weights: np.ndarray, arities: np.ndarray,
                 significance: float, cmi: float | None = None) -> None:
        self.cols, self.weights, self.arities = cols, weights, arities
        self.significance = significance
        self.cmi = -1.0 if cmi is None else float(cmi)
        self.n_tests = 0


def _thin_fast(g: PDAG, sep: dict, pairs: list, order: int, ci: _BootCI) -> None:
    """:func:`_thin` by the kernel: the graph as boolean matrices, the removals copied back."""
    if not pairs:
        return
    n = len(g.par)
    par = np.zeros((n, n), dtype=np.bool_)
    und = np.zeros((n, n), dtype=np.bool_)
    for v in range(n):
        for u in g.par[v]:
            par[u, v] = True
        for u in g.und[v]:
            und[v, u] = True
    pr = np.array(pairs, dtype=np.int64).reshape(-1, 2)
    removed = np.zeros(len(pr), dtype=np.bool_)
    sepsets = np.zeros((len(pr), max(order, 1)), dtype=np.int64)
    ci.n_tests += thin_pairs(ci.cols, ci.weights, ci.arities, par, und, pr, order,
                             ci.significance, removed, sepsets, ci.cmi)
    for i in np.flatnonzero(removed):
        a, b = int(pr[i, 0]), int(pr[i, 1])
        g.delete(a, b)
        sep[_key(a, b)] = frozenset(int(v) for v in sepsets[i, :order])


def _orient_v_structures(g: PDAG, sep: dict, en: list[int]) -> None:
    """x --- z --- y (or x --- z <- y) with x, y non-adjacent and z outside their separating
    set: x -> z <- y (RAI's orientation of colliders at endogenous nodes)."""
    und0 = [set(u) for u in g.und]
    for z in en:
        for x, y in combinations(sorted(und0[z]), 2):
            if not g.adjacent(x, y) and z not in sep.get(_key(x, y), ()):
                g.orient(x, z)
                g.orient(y, z)
    und1 = [set(u) for u in g.und]
    par1 = [set(p) for p in g.par]
    for z in en:
        for x in sorted(und1[z]):
            for y in sorted(par1[z]):
                if x != y and not g.adjacent(x, y) and z not in sep.get(_key(x, y), ()):
                    g.orient(x, z)


def _orient(g: PDAG, sep: dict, en: list[int]) -> None:
    _orient_v_structures(g, sep, en)
    g.meek_closure((1, 2, 3, 4))
    for x, y in combinations(en, 2):          # bidirected (conflicting) edges -> undirected
        if x in g.par[y] and y in g.par[x]:
            g.par[x].discard(y)
            g.par[y].discard(x)
            g.add_undirected(x, y)


def _refine_and_orient(g: PDAG, sep: dict, en: list[int], ex: list[int], order: int,
                       ci: _CITest) -> None:
    """RAI steps A1 (exogenous -> endogenous edges) and B1 (edges among endogenous nodes)."""
    if isinstance(ci, _BootCI):
        _thin_fast(g, sep, [(e, v) for v in en for e in ex], order, ci)
        _orient(g, sep, en)
        _thin_fast(g, sep, list(combinations(en, 2)), order, ci)
    else:
        _thin(g, sep, ((e, v) for v in en for e in ex), order, ci)
        _orient(g, sep, en)
        _thin(g, sep, combinations(en, 2), order, ci)
    _orient(g, sep, en)


def _components(nodes, nbrs) -> list[set[int]]:
    """Connected components of ``nodes`` under the neighbour function ``nbrs`` (restricted to
    ``nodes``)."""
    left, out = set(nodes), []
    for v in nodes:
        if v not in left:
            continue
        comp, stack = {v}, [v]
        left.discard(v)
        while stack:
            for u in nbrs(stack.pop()):
                if u in left:
                    left.discard(u)
                    comp.add(u)
                    stack.append(u)
        out.append(comp)
    return out


def _split(g: PDAG, en: list[int]) -> tuple[list[int], list[list[int]], list[int]]:
    """RAI step B2: the descendant sub-structure (lowest topological order) and the connected
    ancestor sub-structures of the other endogenous nodes."""
    parents = {u for v in en for u in g.par[v]} & set(en)
    hit = set()                 # endogenous nodes joined to a parent by an undirected path
    for comp in _components(en, lambda v: g.und[v]):
        if comp & parents:
            hit |= comp
    desc = [v for v in en if v not in parents and v not in hit]
    dset = set(desc)
    anc = [v for v in en if v not in dset]
    aset = set(anc)
    adj = {v: (g.par[v] | g.und[v]) & aset for v in anc}
    for v in anc:
        for u in adj[v]:
            adj[u].add(v)
    comps = _components(anc, adj.__getitem__)
    return desc, sorted((sorted(c) for c in comps), key=lambda c: c[0]), anc


def _exit(g: PDAG, en: list[int], order: int, max_order: int | None) -> bool:
    if not en or (max_order is not None and order > max_order):
        return True
    return all(len(g.par[v]) + len(g.und[v]) <= order for v in en)


def rai(data: np.ndarray, arities: np.ndarray, significance: float = 0.05,
        max_order: int | None = None, *, alpha: float | None = None) -> nx.DiGraph:
    """The CPDAG learned by RAI (Yehezkel & Lerner 2009) with G² tests.

    Parameters
    ----------
    data : (N, n) int array
        Complete codes 0..r_i - 1.
    arities : (n,) int array
    significance : float in (0, 1), default 0.05
        Level of the G² tests (:func:`bnma_core.scores.g2_test`): X ⊥ Y | Z is accepted, and
        the edge removed, when the p-value exceeds it.
    max_order : int or None
        Largest conditioning-set size (None: until RAI's exit condition).
    alpha : float, optional
        Former name of ``significance`` (deprecated; a ``FutureWarning`` names the new one).

    Returns
    -------
    networkx.DiGraph
        Edge attribute ``directed``; an undirected edge as two opposite arcs
        (:mod:`bnma_core.structure.cpdag` convention). Re-oriented from the skeleton as B-RAI
        does: v-structures, then Meek's rules R1-R3.

    Examples
    --------
    >>> from bnma_core.network import load_network
    >>> net = load_network("asia")
    >>> cpdag = rai(net.sample_codes(5000, seed=0), net.arities)
    >>> sorted(cpdag.nodes) == list(range(len(net.arities)))
    True
    """
    if alpha is not None:
        warnings.warn("rai's parameter alpha was renamed significance; alpha will be removed "
                      "in the next release.", FutureWarning, stacklevel=2)
        significance = alpha
    try:
        level = float(significance)
    except (TypeError, ValueError):
        level = float("nan")
    if not 0.0 < level < 1.0 or isinstance(significance, bool):
        raise ValueError(f"significance must be in (0, 1) (got {significance!r}).")
    if max_order is not None and (isinstance(max_order, bool)
                                  or not isinstance(max_order, (int, np.integer))
                                  or max_order < 0):
        raise ValueError(f"max_order must be None or a non-negative integer (got {max_order!r}).")
    data = np.asarray(data)
    ar = np.asarray(arities, dtype=np.int64)
    if data.ndim != 2 or ar.shape != (data.shape[1],):
        raise ValueError(f"data must be a (rows, variables) code array with one arity per "
                         f"column (got data {data.shape}, arities {ar.shape}).")
    if data.size and (data.min() < 0 or (data >= ar).any()):
        raise ValueError("data must be complete codes 0..r_i - 1 (RAI needs complete rows; "
                         "missing values, code -1, are not allowed).")
    data = np.ascontiguousarray(data, dtype=np.int64)
    rows, mult = np.unique(data, axis=0, return_counts=True)
    ci = _CITest(rows, ar, level, mult.astype(float))
    g, sep = PDAG(data.shape[1], complete=True), {}

    def recurse(en: list[int], ex: list[int], order: int) -> None:
        if _exit(g, en, order, max_order):
            return
        _refine_and_orient(g, sep, en, ex, order, ci)
        desc, ancs, anc = _split(g, en)
        for a in ancs:
            recurse(a, ex, order + 1)
        recurse(desc, sorted(set(ex) | set(anc)), order + 1)

    recurse(list(range(data.shape[1])), [], 0)
    return _reorient(_edges_of(g)).to_networkx()


# ------------------------------------------------------------------ graph-generating tree
@dataclass
class _Leaf:
    en: tuple[int, ...]
    edges: dict            # v -> (frozenset of parents, frozenset of undirected neighbours)
    score: float


@dataclass
class _Cookie:
    ancestors: list        # of _Leaf / _Multi
    descendant: Any


@dataclass
class _Multi:
    en: tuple[int, ...]
    cookies: list


def _edges_of(g: PDAG, en=None, scope=None) -> dict:
    n = len(g.par)
    en = range(n) if en is None else en
    scope = set(range(n)) if scope is None else scope
    return {v: (frozenset(g.par[v] & scope), frozenset(g.und[v] & scope)) for v in en}


def _assemble(edges: dict, n: int) -> PDAG:
    """A PDAG from arrowheads into nodes (B-RAI's ``add_edges_from``)."""
    g = PDAG(n)
    for v, (par, und) in edges.items():
        g.par[v] |= par
        g.und[v] |= und
        for u in und:
            g.und[u].add(v)
    return g


def _reorient(edges: dict) -> PDAG:
    """B-RAI's final re-orientation: the sampled skeleton, v-structures u -> v <- w for
    non-adjacent parents u, w of v in the sampled graph, then Meek's rules R1-R3."""
    n = max(edges) + 1 if edges else 0
    g = _assemble(edges, n)
    out = PDAG(n)
    for v in range(n):
        for u in g.par[v] | g.und[v]:
            out.und[v].add(u)
            out.und[u].add(v)
    for v in range(n):
        for u, w in combinations(sorted(g.par[v]), 2):
            if not g.adjacent(u, w):
                out.orient(u, v)
                out.orient(w, v)
    out.meek_closure((1, 2, 3))
    return out


class _OverBudget(Exception):
    """Plain RAI stopped: the tree it prices would pass the size guard."""


class GeneratingTree:
    """B-RAI's graph-generating tree on one table of complete rows (the authors'
    ``learn_recursively``; the module docstring describes the algorithm).

    Parameters
    ----------
    data : (N, n) int array
        Complete codes 0..r_i - 1.
    ar : (n,) int array
        Arities.
    significance : float
        Level of the G² tests (used when ``cmi`` is None).
    s : int
        Bootstrap samples (children) per internal node; 1: plain RAI on the rows, no random
        numbers drawn.
    max_order : int or None
        Largest conditioning-set size (None: until RAI's exit condition).
    score : DirichletScore
        The leaves' family score (B-RAI: BDeu, ess 1).
    rng : numpy.random.Generator
        Source of the bootstrap samples.
    cmi : float or None, default None
        A conditional-mutual-information threshold (nats) to test with instead of G²
        (causality-lab's ``CondIndepCMI``).
    max_tests : int or None, default None
        Size guard: :meth:`check_size` refuses a tree estimated above it, and :meth:`build`
        stops one that passes it.

    Examples
    --------
    >>> import numpy as np
    >>> from bnma_core.network import load_network
    >>> from bnma_core.scores import DirichletScore
    >>> net = load_network("asia")
    >>> rng = np.random.default_rng(0)
    >>> tree = GeneratingTree(net.sample_codes(2000, seed=1), net.arities, 0.05, 3, None,
    ...                       DirichletScore("bdeu", 1.0), rng)
    >>> root = tree.build()
    >>> dags = sample_dags(root, rng, 10)
    >>> len(dags), len(dags[0]) == len(net.arities)
    (10, True)
    """

    def __init__(self, data: np.ndarray, ar: np.ndarray, significance: float, s: int,
                 max_order: int | None, score: DirichletScore, rng: np.random.Generator,
                 cmi: float | None = None, max_tests: int | None = None) -> None:
        self.data, self.ar, self.significance, self.s = data, ar, significance, s
        self.max_tests = max_tests
        self.max_order, self.rng, self.score = max_order, rng, score
        self.n = data.shape[1]
        # Distinct rows and multiplicities: a bootstrap sample of the N rows is a
        # Multinomial(N, multiplicity / N) draw of counts over them, and every count costs
        # O(distinct rows) instead of O(N).
        self.rows, mult = np.unique(data, axis=0, return_counts=True)
        self.mult = mult.astype(float)
        self.ar64 = np.ascontiguousarray(ar, dtype=np.int64)
        # Column-major codes for the thinning kernel (one byte per code when they fit).
        self.cols = np.ascontiguousarray(self.rows.T, dtype=np.uint8 if ar.max(initial=0) <= 256
                                         else np.int64)
        self.use_cmi_threshold(cmi)
        self.local: dict[tuple, float] = {}
        self.leaf_scores: dict[tuple, float] = {}
        self.n_tests = 0
        self.n_leaves = 0
        self.n_internal = 0

    def use_cmi_threshold(self, cmi: float | None) -> None:
        """Test with the CMI threshold ``cmi`` from now on (None: G² at ``significance``)."""
        self.cmi = cmi
        self.full_ci = _CITest(self.rows, self.ar, self.significance, self.mult, cmi)  # s = 1

    def build(self) -> Any:
        """The tree from the complete undirected graph over all n variables: its root (a
        leaf when RAI exits at once). Counts its nodes and tests (:meth:`size`)."""
        n = self.n
        root, _, _ = self.learn(PDAG(n, complete=True), {}, list(range(n)), [], 0)
        return root

    def size(self) -> dict:
        """``internal`` and ``leaves`` (nodes built so far) and ``ci_tests`` (CI tests run,
        bootstrap samples and the training rows together)."""
        return {"internal": self.n_internal, "leaves": self.n_leaves,
                "ci_tests": self.n_tests + self.full_ci.n_tests}

    def rai_calls(self) -> list[tuple[int, int]]:
        """(order, CI tests run) of every call of plain RAI on the training rows (no
        bootstrap; the thinning kernel on the distinct rows and their multiplicities, no random
        numbers drawn): the deterministic skeleton of the generating tree."""
        return self.plain_rai(self.cmi)[1]

    def select_cmi_threshold(self, grid: tuple[float, ...]) -> tuple[float, list[float]]:
        """The CMI threshold of ``grid`` whose plain-RAI structure has the highest BDeu score
        on the training rows (ties: the highest threshold) and every threshold's score — the
        choice Yehezkel & Lerner (2009) propose for RAI and causality-lab's
        ``search_threshold_bdeu`` makes (a structure without a consistent extension: −∞).

        Only thresholds whose B-RAI tree fits ``max_tests`` are eligible: plain RAI at a
        threshold is stopped as soon as its estimate of the tree (:meth:`check_size`) passes
        the limit, and the threshold scores −∞ (on small data the CMI's upward bias, about
        df / 2N, keeps nearly every edge at low thresholds, RAI climbs to order 10 and more,
        and those trees would be refused anyway).
        """
        scores = []
        for th in grid:
            try:
                g, _ = self.plain_rai(float(th), budget=self.max_tests)
            except _OverBudget:
                scores.append(-np.inf)
                continue
            parents = _dag_parents(_reorient(_edges_of(g)))
            scores.append(-np.inf if parents is None else
                          float(sum(self.local_score(v, parents[v]) for v in range(self.n))))
        best = max(range(len(grid)), key=lambda i: (scores[i], grid[i]))
        return float(grid[best]), scores

    def plain_rai(self, cmi: float | None, budget: int | None = None
                  ) -> tuple[PDAG, list[tuple[int, int]]]:
        """Plain RAI on the training rows with the kernel's tests (G² at ``significance``, or
        the CMI threshold ``cmi``): the learned graph and (order, tests) of every call. With
        ``budget``, :class:`_OverBudget` as soon as the tree estimate of :meth:`check_size`
        passes it."""
        ci = _BootCI(self.cols, self.mult, self.ar64, self.significance, cmi)
        g, sep, calls = PDAG(self.n, complete=True), {}, []
        est = [0.0]

        def recurse(en: list[int], ex: list[int], order: int) -> None:
            if _exit(g, en, order, self.max_order):
                return
            t0 = ci.n_tests
            _refine_and_orient(g, sep, en, ex, order, ci)
            calls.append((order, ci.n_tests - t0))
            est[0] += (ci.n_tests - t0) * self.s ** (order + 1)
            if budget is not None and est[0] > budget:
                raise _OverBudget
            desc, ancs, anc = _split(g, en)
            for a in ancs:
                recurse(a, ex, order + 1)
            recurse(desc, sorted(set(ex) | set(anc)), order + 1)

        recurse(list(range(self.n)), [], 0)
        return g, calls

    def seconds_per_test(self) -> float:
        """CPU seconds per CI test of the tree, everything included, on this machine: about
        2 µs plus 5 ns per distinct training row (``benchmarks/brai.py``: 8.6 µs with 1,495
        distinct rows, 9.6 µs with 1,822)."""
        return 2e-6 + 5e-9 * len(self.mult)

    def check_size(self) -> dict:
        """Estimate the tree's CI tests before building it and refuse, with the remedies, when
        the estimate exceeds ``max_tests``.

        A call of plain RAI at order o stands for about s^o calls of the tree, each running s
        bootstrap cookies, so the tree runs about sum_calls tests(call) s^(o + 1) tests.
        Measured against the built tree (EEG subsamples of 1,000-4,000 rows, HTRU2, MAGICGT,
        zoo, CVR, crx of Sugahara et al.'s Table 1): actual / estimate 0.4-2.1. Calls of order
        at most k are the same with ``max_order = k``, so the same run prices every cap.
        """
        calls = self.rai_calls()
        s = self.s

        def est(cap: int | None) -> float:
            return float(sum(t * s ** (o + 1) for o, t in calls if cap is None or o <= cap))

        total = est(None)
        info = {"estimated_ci_tests": total,
                "rai_max_order": max((o for o, _ in calls), default=-1),
                "estimated_seconds": total * self.seconds_per_test()}
        if self.max_tests is None or total <= self.max_tests:
            return info
        fits = [k for k in range(info["rai_max_order"] + 1) if est(k) <= self.max_tests]
        cap = (f"max_order={fits[-1]} (about {est(fits[-1]):.2g} tests), " if fits else "")
        raise ResourceLimitError(
            f"B-RAI would run about {total:.2g} CI tests on these {len(self.data):,} rows "
            f"(≈ {_fmt_secs(info['estimated_seconds'])} on this machine; plain RAI reaches "
            f"order {info['rai_max_order']} and the tree repeats each call about s^order "
            f"times); the limit is max_ci_tests={self.max_tests:.3g}. Remedies: {cap}"
            f"cmi_threshold='bdeu' (a CMI-threshold test, its threshold chosen by BDeu, keeps "
            f"the tree small on large data), fewer rows, or max_ci_tests=None to run it "
            f"anyway.")

    def local_score(self, v: int, parents: tuple[int, ...]) -> float:
        k = (v, parents)
        if k not in self.local:
            q = int(np.prod([int(self.ar[u]) for u in parents], dtype=object))
            if q * int(self.ar[v]) <= _DENSE_CELLS:
                counts = family_counts(self.rows, v, list(parents), self.ar, self.mult)
                self.local[k] = self.score.log_ml(counts)
            else:       # a family too large to tabulate: its observed configurations only
                counts = observed_family_counts(self.rows, v, list(parents), self.ar, self.mult)
                self.local[k] = self.score.log_ml(counts, q=q)
        return self.local[k]

    def leaf(self, g: PDAG, en: list[int], ex: list[int]) -> _Leaf:
        self.n_leaves += 1
        edges = _edges_of(g, en, set(en) | set(ex))
        # The score is a function of the sub-graph's content only (the consistent extension
        # picks sinks in node order), and the same sub-graphs recur across the tree.
        key = tuple(edges.items())
        score = self.leaf_scores.get(key)
        if score is None:
            parents = _dag_parents(_assemble(edges, self.n))
            score = (-np.inf if parents is None
                     else float(sum(self.local_score(v, parents[v]) for v in en)))
            self.leaf_scores[key] = score
        return _Leaf(tuple(en), edges, score)

    def learn(self, g: PDAG, sep: dict, en: list[int], ex: list[int], order: int):
        """Returns (tree node, graph, separating sets) — the graph as the last hypothesis
        left it, which the caller's next sub-structure starts from (as in the authors' code)."""
        if _exit(g, en, order, self.max_order):
            return self.leaf(g, en, ex), g, sep
        self.n_internal += 1
        g0, sep0 = g, sep
        cookies = []
        for _ in range(self.s):
            g, sep = g0.copy(), dict(sep0)
            if self.s == 1:
                ci = self.full_ci
            else:
                boot = self.rng.multinomial(len(self.data), self.mult / len(self.data))
                ci = _BootCI(*bootstrap_columns(self.cols, boot), self.ar64, self.significance,
                             self.cmi)
            _refine_and_orient(g, sep, en, ex, order, ci)
            if ci is not self.full_ci:
                self.n_tests += ci.n_tests
                if self.max_tests is not None and self.n_tests > self.max_tests:
                    raise ResourceLimitError(
                        f"B-RAI stopped after {self.n_tests:,} CI tests, above max_ci_tests="
                        f"{self.max_tests:.3g} (the estimate before the run was lower: it is "
                        f"within a factor of about 2). Remedies: max_order, cmi_threshold, "
                        f"fewer rows, or max_ci_tests=None to run it anyway.")
            desc, ancs, anc = _split(g, en)
            children = []
            for a in ancs:
                node, g, sep = self.learn(g, sep, a, ex, order + 1)
                children.append(node)
            node, g, sep = self.learn(g, sep, desc, sorted(set(ex) | set(anc)), order + 1)
            cookies.append(_Cookie(children, node))
        return _Multi(tuple(en), cookies), g, sep


def _sample(node, rng: np.random.Generator) -> tuple[dict, float]:
    """One sub-graph (arrowheads into the node's endogenous nodes) and its score: each cookie's
    sub-trees sampled, one cookie drawn with probability ∝ exp(its summed score) (the authors'
    ``_sample_cpdag_recursive`` at temperature 1)."""
    if isinstance(node, _Leaf):
        return node.edges, node.score
    draws = []
    for c in node.cookies:
        edges: dict = {}
        total = 0.0
        for sub in (*c.ancestors, c.descendant):
            e, sc = _sample(sub, rng)
            edges.update(e)
            total += sc
        draws.append((edges, total))
    scores = np.array([d[1] for d in draws])
    top = scores.max()
    if len(draws) == 1:
        i = 0
    elif np.isfinite(top):
        p = np.exp(scores - top)
        i = int(rng.choice(len(draws), p=p / p.sum()))
    else:
        i = int(rng.integers(0, len(draws)))
    return draws[i]


def _post_order(root) -> list:
    """The internal tree nodes in the order :func:`_sample` finishes them (children first)."""
    out, stack = [], [(root, False)]
    while stack:
        node, done = stack.pop()
        if isinstance(node, _Leaf):
            continue
        if done:
            out.append(node)
            continue
        stack.append((node, True))
        subs = [sub for c in node.cookies for sub in (*c.ancestors, c.descendant)]
        stack.extend((sub, False) for sub in reversed(subs))
    return out


def _draws(nodes: list, kinds: list[int], rng: np.random.Generator, T: int
           ) -> tuple[np.ndarray, np.ndarray]:
    """The random numbers of T calls of :func:`_sample`, in their order: per sample, a uniform
    per node of kind 1 (runs of them drawn at once, as ``Generator.random(k)`` gives the same
    stream) and ``Generator.integers(0, cookies)`` per node of kind 2. Returns (uniforms (T,
    n_1), integers (T, n_2))."""
    segments: list[tuple[int, int]] = []       # runs of uniforms, single integers
    for kind, m in zip(kinds, nodes):
        if kind == 1 and segments and segments[-1][0] == 1:
            segments[-1] = (1, segments[-1][1] + 1)
        elif kind:
            segments.append((kind, 1 if kind == 1 else len(m.cookies)))
    u = np.empty((T, kinds.count(1)))
    ints = np.empty((T, kinds.count(2)), dtype=np.int64)
    for t in range(T):
        i = j = 0
        for kind, k in segments:
            if kind == 1:
                u[t, i:i + k] = rng.random(k)
                i += k
            else:
                ints[t, j] = rng.integers(0, k)
                j += 1
    return u, ints


def _sample_many(root, rng: np.random.Generator, T: int) -> list[dict] | None:
    """``[_sample(root, rng)[0] for _ in range(T)]`` with the same random numbers and the same
    results, computed one tree node at a time for all T samples at once (numpy over T).

    Every call of :func:`_sample` visits every internal node in the same post-order and draws
    at a node with several cookies: one uniform number if a cookie can score above −∞
    (``Generator.choice`` with ``p``: ``cdf = cumsum(p) / its last entry``, then the index of
    the first entry above the uniform), ``Generator.integers(0, cookies)`` if none can (all
    cookies contain a sub-tree that scores −∞ whatever is sampled). So the draws of the T
    samples are made first, in that order, and each node's choice is replicated from them with
    the same floating-point operations (the scores summed sub-tree by sub-tree in order,
    ``exp(score - max)``, the sum of fewer than 8 terms left to right as numpy's reduction
    does). Returns None — the caller then samples one structure at a time — for a node with 8
    or more cookies (numpy sums those pairwise).
    """
    if isinstance(root, _Leaf):
        return [root.edges] * T
    nodes = _post_order(root)
    dead: dict[int, bool] = {}

    def is_dead(sub) -> bool:
        return sub.score == -np.inf if isinstance(sub, _Leaf) else dead[id(sub)]

    kinds = []                  # per node: 0 no draw, 1 a uniform, 2 an integer
    for m in nodes:
        if len(m.cookies) >= 8:
            return None
        dead[id(m)] = all(any(is_dead(sub) for sub in (*c.ancestors, c.descendant))
                          for c in m.cookies)
        kinds.append(0 if len(m.cookies) == 1 else 2 if dead[id(m)] else 1)
    u, ints = _draws(nodes, kinds, rng, T)
    score: dict[int, np.ndarray] = {}
    choice: dict[int, np.ndarray] = {}
    i = j = 0
    for kind, m in zip(kinds, nodes):
        S = np.empty((T, len(m.cookies)))
        for c_i, c in enumerate(m.cookies):
            tot = np.zeros(T)
            for sub in (*c.ancestors, c.descendant):
                tot = tot + (sub.score if isinstance(sub, _Leaf) else score.pop(id(sub)))
            S[:, c_i] = tot
        if kind == 0:
            pick = np.zeros(T, dtype=np.int64)
        elif kind == 2:
            pick = ints[:, j]
            j += 1
        else:
            P = np.exp(S - S.max(axis=1)[:, None])
            total = P[:, 0].copy()
            for c_i in range(1, P.shape[1]):
                total = total + P[:, c_i]
            cdf = np.cumsum(P / total[:, None], axis=1)
            cdf = cdf / cdf[:, -1:]
            pick = (cdf <= u[:, i:i + 1]).sum(axis=1)
            i += 1
        choice[id(m)] = pick
        score[id(m)] = S[np.arange(T), pick]
    out = []
    for t in range(T):
        edges: dict = {}
        stack = [root]
        while stack:
            node = stack.pop()
            if isinstance(node, _Leaf):
                edges.update(node.edges)
                continue
            c = node.cookies[choice[id(node)][t]]
            stack.extend(reversed((*c.ancestors, c.descendant)))
        out.append(edges)
    return out




def sample_dags(root: Any, rng: np.random.Generator, n_samples: int
                ) -> list[tuple[tuple[int, ...], ...]]:
    """``n_samples`` DAGs drawn from a generating tree (:meth:`GeneratingTree.build`), each as
    one sorted parent tuple per variable.

    Each draw picks, bottom-up, one cookie per internal node with probability ∝ exp(its
    sampled score) (:func:`_sample`; all draws made node by node for every sample at once by
    :func:`_sample_many` when it can, with the same random numbers and results); the sampled
    graph is re-oriented (v-structures, then Meek's rules R1-R3) and extended to a DAG
    (Dor & Tarsi 1992; a greedy acyclic orientation if it has no consistent extension).
    Repeated draws are repeated in the list (their frequencies are B-RAI's weights).
    """
    sampled = _sample_many(root, rng, n_samples)
    if sampled is None:                 # the general path (see _sample_many)
        sampled = [_sample(root, rng)[0] for _ in range(n_samples)]
    dags: dict = {}
    out = []
    for edges in sampled:
        key = tuple(edges.items())
        parents = dags.get(key)
        if parents is None:
            g = _reorient(edges)
            parents = dags[key] = _dag_parents(g) or _greedy_dag_parents(g)
        out.append(parents)
    return out
