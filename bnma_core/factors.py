"""Exact elimination of unobserved variables over a model's factors (log space).

**A model supplies its factors (log P(x_i | pa_i) tables), this module marginalises the missing
ones.** Every factorised model in BNMA Studio — :class:`bnma_core.network.DiscreteBN`, the
augmented naive Bayes classifiers (NB, TAN, KDB), UKDB_L, the exact-BN / EANB classifiers
(through ``DiscreteBN``) — describes itself as a :class:`FactorModel` (cardinalities, parent
lists, one CPT per variable) and calls :func:`class_log_posterior` for a batch of rows with
missing values (code ``-1``). The one exception is order-averaged BMA
(``order_bma._expand_missing``): there each node's term is an average over all its parent sets
among its predecessors (Hwang & Zhang eq. 9), a factor over the node and every predecessor, so
there are no small factors to eliminate; it sums the joint completions exactly up to a stated
size, then samples.

The quantity is the evidence-restricted joint, computed by sum-product variable elimination
(Zhang & Poole 1994; Koller & Friedman 2009, alg. 9.1):

    log P(t, x_obs) = log sum_{x_hid} prod_i theta_i(x_i | x_pa(i)),

summed over the unobserved variables x_hid of the ancestral set of {t} ∪ obs (barren nodes sum
to one and are dropped). Rows whose Markov blanket of ``t`` is fully observed use the closed
form log P(t | mb) = log theta_t(t | pa_t) + sum_{ch} log theta_ch(x_ch | pa_ch) (Pearl 1988).
Rows whose ancestral set of {t} ∪ obs has no unobserved variable besides ``t`` (every
unobserved variable barren; Shachter 1986) get the product of those families in closed form,
whatever their patterns (:func:`closed_form_log_joint`: one vectorised pass for many Shapley
coalitions). The other rows are grouped by missingness pattern; each group is one batched
elimination with hard evidence, and patterns rarer than ``min_pattern_rows`` are pooled into one
elimination in which each partly observed variable enters through the indicator
lambda(x) = [x == code or code == -1] (soft evidence). Models with the same structure are
evaluated together as one model with their number as an extra observed parent
(:func:`stack_models`).

Layout
------
CPT of variable i: shape (q_i, r_i); row j is the parent configuration in mixed radix with the
**first parent varying fastest** (:func:`bnma_core.kernels.counting.parent_strides`), the layout
of :class:`~bnma_core.network.DiscreteBN`. Its factor has scope ``(*reversed(parents), i)`` so
that reshaping the table needs no copy.

Numerics
--------
:class:`Factor` tables are natural logs (``-inf`` = probability zero); :func:`product` adds and
:func:`sum_out` is ``logsumexp``. Inside an elimination the tables are carried as linear tables
rescaled to a maximum of 1 per batch row plus one running log scale per row (the "scaled factor"
representation), so each step is one ``numpy.einsum``. When every CPT entry is positive and a
result still underflows to 0, the affected rows are recomputed with the log-space
:func:`product` / :func:`sum_out` (exact, slower).
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Callable, Iterable, Sequence
from typing import Any, NamedTuple

import numpy as np

from .kernels.counting import parent_strides

__all__ = ["CHUNK_CELLS", "MIN_PATTERN_ROWS", "CycleError", "Factor", "FactorModel",
           "children_of", "class_log_posterior", "closed_form_log_joint", "eliminate",
           "log_joint_batch", "markov_blanket",
           "markov_blanket_log_scores", "min_fill_order", "product", "stack_models",
           "stacked_codes", "sum_out", "topological_order"]

CHUNK_CELLS = 2_000_000
"""Largest number of float64 cells of one intermediate factor over a block of rows (~16 MB);
rows are processed in blocks that respect it."""

MIN_PATTERN_ROWS = 8
"""Missingness patterns with fewer rows are pooled into one soft-evidence elimination."""

_MAX_OPERANDS = 24  # numpy.einsum accepts at most 32 operands


class Factor(NamedTuple):
    """log phi(x_scope), optionally one table per batch row.

    Attributes
    ----------
    scope : tuple of int
        Variable indices, one per table axis (after the row axis when ``batched``).
    log_table : ndarray
        Shape ``(n_rows,)`` if ``batched``, then the cardinality of each scope variable.
    batched : bool
        Whether the first axis indexes rows (evidence-reduced factors differ per row).
    """

    scope: tuple[int, ...]
    log_table: np.ndarray
    batched: bool = False

    def card(self, v: int) -> int:
        """Cardinality of scope variable ``v``."""
        return int(self.log_table.shape[int(self.batched) + self.scope.index(v)])


# ---------------------------------------------------------------------- log-space reference ops
def _union_scope(factors: Sequence[Any]) -> tuple[int, ...]:
    seen: dict[int, None] = {}
    for f in factors:
        for v in f.scope:
            seen.setdefault(v, None)
    return tuple(seen)


def _aligned(f: Factor, scope: tuple[int, ...], batched: bool) -> np.ndarray:
    """``f.log_table`` transposed and reshaped to broadcast over ``scope`` (row axis first)."""
    off = int(f.batched)
    perm = sorted(range(len(f.scope)), key=lambda a: scope.index(f.scope[a]))
    t = np.transpose(f.log_table, list(range(off)) + [off + a for a in perm])
    shape = [1] * len(scope)
    for a in perm:
        shape[scope.index(f.scope[a])] = f.log_table.shape[off + a]
    lead = (t.shape[0],) if f.batched else ((1,) if batched else ())
    return t.reshape(lead + tuple(shape))


def product(factors: Sequence[Factor]) -> Factor:
    """Factor product in log space: log prod_f phi_f = sum_f log phi_f (Koller & Friedman 2009,
    def. 4.2), scope = the union of the scopes in order of first appearance."""
    if not factors:
        return Factor((), np.zeros(()), False)
    scope = _union_scope(factors)
    batched = any(f.batched for f in factors)
    total = _aligned(factors[0], scope, batched)
    for f in factors[1:]:
        total = total + _aligned(f, scope, batched)
    full = ((max(f.log_table.shape[0] for f in factors if f.batched),) if batched else ())
    full += tuple(next(f.card(v) for f in factors if v in f.scope) for v in scope)
    return Factor(scope, np.broadcast_to(total, full), batched)


def sum_out(factor: Factor, variables: Iterable[int]) -> Factor:
    """Marginalise ``variables``: log sum_{x_V} phi = logsumexp over their axes (all ``-inf``
    slices give ``-inf``)."""
    drop = list(dict.fromkeys(int(v) for v in variables))
    if not drop:
        return factor
    if any(v not in factor.scope for v in drop):
        raise ValueError(f"Cannot sum out {[v for v in drop if v not in factor.scope]}: not in "
                         f"the factor's scope {factor.scope}.")
    from scipy.special import logsumexp  # on first use: keeps `import bnma_core.network` light

    off = int(factor.batched)
    axes = tuple(off + factor.scope.index(v) for v in drop)
    table = logsumexp(factor.log_table, axis=axes)
    return Factor(tuple(v for v in factor.scope if v not in drop), np.asarray(table),
                  factor.batched)


def _log_contract(factors: Sequence[Factor], out_scope: tuple[int, ...]) -> Factor:
    """sum_out(product(factors)) with the result's axes in ``out_scope`` order."""
    f = product(factors)
    f = sum_out(f, [v for v in f.scope if v not in out_scope])
    return _reorder(f, out_scope)


def _reorder(f: Factor, scope: tuple[int, ...]) -> Factor:
    off = int(f.batched)
    perm = list(range(off)) + [off + f.scope.index(v) for v in scope]
    return Factor(tuple(scope), np.transpose(f.log_table, perm), f.batched)


# ---------------------------------------------------------------------- elimination order
def min_fill_order(hidden: Iterable[int], scopes: Iterable[Iterable[int]],
                   cards: Sequence[int] | np.ndarray) -> list[int]:
    """Greedy elimination order: fewest fill-in edges, ties broken by the smallest product of
    the neighbours' cardinalities, then the smallest index (Koller & Friedman 2009, §9.4.3.2).

    Parameters
    ----------
    hidden : iterable of int
        Variables to eliminate.
    scopes : iterable of iterables of int
        Scopes of the factors (they define the interaction graph).
    cards : sequence of int
        Cardinality of every variable, indexed by variable.
    """
    return _min_fill(hidden, scopes, cards)[0]


def _min_fill(hidden: Iterable[int], scopes: Iterable[Iterable[int]], cards: Any
              ) -> tuple[list[int], int]:
    """:func:`min_fill_order` and the largest number of cells of a factor it creates (the
    eliminated variable and its neighbours)."""
    card = {}
    nb: dict[int, set[int]] = {}
    for sc in scopes:
        sc = list(sc)
        for v in sc:
            card[v] = int(cards[v])
            nb.setdefault(v, set()).update(u for u in sc if u != v)
    left = set(hidden)
    order: list[int] = []
    worst = 1
    while left:
        best, best_key = -1, (0, 0, 0)
        for v in left:
            ns = list(nb.get(v, ()))
            fill = 0
            for a in range(len(ns)):
                na = nb[ns[a]]
                for b in range(a + 1, len(ns)):
                    if ns[b] not in na:
                        fill += 1
            w = 1
            for u in ns:
                w *= card[u]
            key = (fill, w, v)
            if best < 0 or key < best_key:
                best, best_key = v, key
        ns = nb.pop(best, set())
        for u in ns:
            nb[u].discard(best)
            nb[u].update(x for x in ns if x != u)
        left.discard(best)
        order.append(best)
        worst = max(worst, best_key[1] * card.get(best, 1))
    return order, worst


# ---------------------------------------------------------------------- scaled linear tables
class _Lin(NamedTuple):
    """phi = table * exp(log_scale[row]) with one log scale per row kept by the caller."""

    scope: tuple[int, ...]
    table: np.ndarray
    batched: bool


def _einsum(factors: Sequence[_Lin], out_scope: tuple[int, ...]) -> _Lin:
    """sum over the variables not in ``out_scope`` of the product of ``factors`` (linear)."""
    while len(factors) > _MAX_OPERANDS:  # fold groups, keeping what later factors still need
        group, rest = list(factors[:_MAX_OPERANDS]), list(factors[_MAX_OPERANDS:])
        needed = set(out_scope).union(*(f.scope for f in rest))
        keep = tuple(sorted({v for f in group for v in f.scope} & needed))
        factors = [_einsum(group, keep), *rest]
    labels: dict[int, int] = {}
    for f in factors:
        for v in f.scope:
            labels.setdefault(v, len(labels))
    for v in out_scope:
        labels.setdefault(v, len(labels))
    row = len(labels)
    batched = any(f.batched for f in factors)
    args: list[Any] = []
    for f in factors:
        args += [f.table, ([row] if f.batched else []) + [labels[v] for v in f.scope]]
    out = ([row] if batched else []) + [labels[v] for v in out_scope]
    arr = np.einsum(*args, out, optimize=len(factors) > 2) if args else np.ones(())
    return _Lin(tuple(out_scope), arr, batched)


def _rescaled(f: _Lin, log_scale: np.ndarray) -> _Lin:
    """Divide by the per-row maximum (1 where it is 0) and add its log to ``log_scale``."""
    t = f.table
    if f.batched:
        m = t.reshape(t.shape[0], -1).max(axis=1) if t.ndim > 1 else t.copy()
        m = np.where(m > 0, m, 1.0)
        log_scale += np.log(m)
        return _Lin(f.scope, t / m.reshape((-1,) + (1,) * (t.ndim - 1)), True)
    m = float(t.max()) if t.size else 1.0
    if m > 0:
        log_scale += math.log(m)
        t = t / m
    return _Lin(f.scope, t, False)


def _to_lin(f: Factor, log_scale: np.ndarray) -> _Lin:
    """A log factor as a linear table with maximum 1 (per row), the shift added to the scale."""
    t = f.log_table
    if f.batched:
        m = t.reshape(t.shape[0], -1).max(axis=1) if t.ndim > 1 else t.copy()
        m = np.where(np.isfinite(m), m, 0.0)
        log_scale += m
        return _Lin(f.scope, np.exp(t - m.reshape((-1,) + (1,) * (t.ndim - 1))), True)
    m = float(t.max()) if t.size else 0.0
    m = m if math.isfinite(m) else 0.0
    log_scale += m
    return _Lin(f.scope, np.exp(t - m), False)


def _run(factors: list, order: Sequence[int], keep: tuple[int, ...],
         combine: Callable[[list, tuple[int, ...]], Any]) -> Any:
    """Variable elimination (Koller & Friedman 2009, alg. 9.1): for each variable of
    ``order`` combine the factors that mention it into one without it; finally combine all
    into a factor over ``keep``."""
    factors = list(factors)
    for v in order:
        touching = [f for f in factors if v in f.scope]
        if not touching:
            continue
        factors = [f for f in factors if v not in f.scope]
        out_scope = tuple(sorted({u for f in touching for u in f.scope} - {v}))
        factors.append(combine(touching, out_scope))
    return combine(factors, tuple(v for v in keep if any(v in f.scope for f in factors)))


def _eliminate_rows(factors: list[Factor], order: Sequence[int], keep: tuple[int, ...],
                    n_rows: int, positive: bool) -> np.ndarray:
    """log sum over every variable outside ``keep`` of the product of the log ``factors``:
    shape (n_rows, *cards of keep). Scaled-linear elimination; when the true result is known
    to be positive (``positive``) rows that underflowed are recomputed in log space."""
    log_scale = np.zeros(n_rows)
    lin = [_to_lin(f, log_scale) for f in factors]
    res = _run(lin, order, keep, lambda fs, sc: _rescaled(_einsum(fs, sc), log_scale))
    # keep variables that no factor mentions get a size-1 axis (the caller broadcasts)
    shape = tuple(res.table.shape[int(res.batched) + res.scope.index(v)] if v in res.scope
                  else 1 for v in keep)
    table = np.broadcast_to((res.table if res.batched else res.table[None]).reshape(
        (-1,) + shape), (n_rows,) + shape)
    with np.errstate(divide="ignore"):
        out = np.log(table) + log_scale.reshape((-1,) + (1,) * (table.ndim - 1))
    if positive:
        bad = np.flatnonzero(~np.isfinite(out.reshape(n_rows, -1)).all(axis=1))
        if len(bad):  # underflow: those rows again in log space
            sub = [_take_rows(f, bad) for f in factors]
            exact = _run(sub, order, keep, _log_contract)
            out[bad] = (exact.log_table if exact.batched else exact.log_table[None]).reshape(
                (-1,) + shape)
    return out


def _take_rows(f: Factor, rows: np.ndarray | slice) -> Factor:
    return Factor(f.scope, f.log_table[rows], True) if f.batched else f


def eliminate(factors: Sequence[Factor], keep: Sequence[int] = (),
              order: Sequence[int] | None = None) -> Factor:
    """Sum every variable not in ``keep`` out of the product of ``factors`` (log space).

    Parameters
    ----------
    factors : sequence of Factor
        Log factors; batched ones must share the number of rows.
    keep : sequence of int
        Variables of the result, in this axis order (each must be in some factor's scope).
    order : sequence of int, optional
        Elimination order of the other variables; default :func:`min_fill_order`.

    Returns
    -------
    Factor
        Scope ``tuple(keep)``; batched when any input is.
    """
    keep = tuple(int(v) for v in keep)
    scope = _union_scope(factors)
    if any(v not in scope for v in keep):
        raise ValueError(f"keep lists variable(s) that no factor mentions: "
                         f"{[v for v in keep if v not in scope]}.")
    cards = {v: next(f.card(v) for f in factors if v in f.scope) for v in scope}
    hidden = [v for v in scope if v not in keep]
    if order is None:
        order = min_fill_order(hidden, [f.scope for f in factors], cards)
    elif sorted(order) != sorted(hidden):
        raise ValueError("order must list every variable that is not kept, once.")
    rows = [f.log_table.shape[0] for f in factors if f.batched]
    if len(set(rows)) > 1:
        raise ValueError(f"Batched factors have different numbers of rows: {sorted(set(rows))}.")
    positive = all(np.isfinite(f.log_table).all() for f in factors)
    out = _eliminate_rows(list(factors), order, keep, rows[0] if rows else 1, positive)
    return Factor(keep, out, True) if rows else Factor(keep, out[0], False)


# ---------------------------------------------------------------------- the model's factors
class FactorModel:
    """The factors of a discrete Bayesian network: one CPT theta_i(x_i | pa_i) per variable.

    Parameters
    ----------
    cards : sequence of int
        Cardinality r_i of every variable (>= 1).
    parents : sequence of sequences of int
        Parent indices of every variable; their order fixes the CPT row layout.
    cpts : sequence of array-like
        ``cpts[i]`` has shape (q_i, r_i), q_i = prod of the parents' cardinalities, rows in
        mixed radix with the first parent fastest; entries are probabilities (>= 0).

    Raises
    ------
    ValueError
        Wrong lengths or shapes, unknown or repeated parents, a directed cycle, negative or
        non-finite entries.

    Notes
    -----
    Treat an instance as immutable. ``log_cpts`` holds log theta (``-inf`` for zeros).
    """

    def __init__(self, cards: Sequence[int], parents: Sequence[Iterable[int]],
                 cpts: Sequence[Any]) -> None:
        self.cards = np.array(cards, dtype=np.int64).ravel()
        n = len(self.cards)
        if len(parents) != n or len(cpts) != n:
            raise ValueError(f"cards ({n}), parents ({len(parents)}) and cpts ({len(cpts)}) "
                             "must have one entry per variable.")
        if n and (self.cards < 1).any():
            raise ValueError("Every cardinality must be at least 1.")
        self.parents = [_check_parents(i, pa, n) for i, pa in enumerate(parents)]
        self.cpts = [_check_table(i, c, self.parents[i], self.cards) for i, c in enumerate(cpts)]
        with np.errstate(divide="ignore"):
            self.log_cpts = [np.log(c) for c in self.cpts]
        self.positive = all(bool((c > 0).all()) for c in self.cpts)
        self.children = children_of(self.parents)
        topological_order(self.parents, self.children)  # raises CycleError
        self._strides = [parent_strides(pa, self.cards) for pa in self.parents]

    @property
    def n_vars(self) -> int:
        return len(self.cards)

    def strides(self, i: int) -> np.ndarray:
        """Mixed-radix strides of the parents of ``i`` (first parent fastest,
        :func:`~bnma_core.kernels.counting.parent_strides`)."""
        return self._strides[i]

    def markov_blanket(self, i: int) -> list[int]:
        """Parents, children and the children's other parents of ``i`` (sorted)."""
        return markov_blanket(self.parents, self.children, i)

    def ancestral_set(self, nodes: Iterable[int]) -> list[int]:
        """``nodes`` and all their ancestors (sorted)."""
        seen: set[int] = set()
        stack = [int(v) for v in nodes]
        while stack:
            v = stack.pop()
            if v not in seen:
                seen.add(v)
                stack.extend(int(p) for p in self.parents[v])
        return sorted(seen)

    def factor(self, i: int) -> Factor:
        """log theta_i as a factor with scope ``(*reversed(parents[i]), i)``."""
        scope = tuple(int(p) for p in self.parents[i][::-1]) + (i,)
        return Factor(scope, self.log_cpts[i].reshape([int(self.cards[v]) for v in scope]))


def _check_parents(i: int, pa: Iterable[int], n: int) -> np.ndarray:
    idx = np.array([int(p) for p in pa], dtype=np.int64)
    if len(idx) and (idx.min() < 0 or idx.max() >= n):
        raise ValueError(f"Variable {i} has a parent index outside 0..{n - 1}.")
    if len(set(idx.tolist())) != len(idx) or i in idx:
        raise ValueError(f"Variable {i} lists a parent twice or itself as a parent.")
    return idx


def _check_table(i: int, cpt: Any, pa: np.ndarray, cards: np.ndarray) -> np.ndarray:
    q = int(np.prod(cards[pa])) if len(pa) else 1
    a = np.asarray(cpt, dtype=np.float64)
    if a.ndim == 1 and q == 1:
        a = a[None, :]
    if a.shape != (q, int(cards[i])):
        raise ValueError(f"The CPT of variable {i} has shape {a.shape}; expected "
                         f"({q}, {int(cards[i])}).")
    if not np.isfinite(a).all() or (a < 0).any():
        raise ValueError(f"The CPT of variable {i} has negative or non-finite entries.")
    return a


class CycleError(ValueError):
    """The parent lists contain a directed cycle; ``nodes`` are the variables on or below it."""

    def __init__(self, nodes: list[int]) -> None:
        super().__init__(f"The parent lists contain a directed cycle; variables on or below it: "
                         f"{nodes}.")
        self.nodes = nodes


def children_of(parents: Sequence[np.ndarray]) -> list[np.ndarray]:
    """Children of every variable (increasing index) from the parent lists."""
    ch: list[list[int]] = [[] for _ in parents]
    for i, pa in enumerate(parents):
        for p in pa:
            ch[int(p)].append(i)
    return [np.array(c, dtype=np.int64) for c in ch]


def topological_order(parents: Sequence[np.ndarray],
                      children: Sequence[np.ndarray] | None = None) -> list[int]:
    """Every parent before its children, the smallest ready index first (Kahn 1962).

    Raises
    ------
    CycleError
        If the parent lists contain a directed cycle.
    """
    children = children_of(parents) if children is None else children
    indeg = [len(p) for p in parents]
    ready = [i for i, d in enumerate(indeg) if d == 0]
    heapq.heapify(ready)
    order: list[int] = []
    while ready:
        i = heapq.heappop(ready)
        order.append(i)
        for c in children[i]:
            indeg[c] -= 1
            if indeg[c] == 0:
                heapq.heappush(ready, int(c))
    if len(order) != len(parents):
        raise CycleError([i for i, d in enumerate(indeg) if d > 0])
    return order


def markov_blanket(parents: Sequence[np.ndarray], children: Sequence[np.ndarray],
                   i: int) -> list[int]:
    """Parents, children and the children's other parents of ``i`` (sorted; Pearl 1988)."""
    mb = set(parents[i].tolist()) | set(children[i].tolist())
    for c in children[i]:
        mb |= set(parents[int(c)].tolist())
    mb.discard(i)
    return sorted(mb)


# ---------------------------------------------------------------------- batched queries
def markov_blanket_log_scores(model: FactorModel, t: int, codes: np.ndarray) -> np.ndarray:
    """log theta_t(t | pa_t) + sum_{ch} log theta_ch(x_ch | pa_ch) for rows whose Markov
    blanket of ``t`` is observed: log P(t, x) up to a per-row constant (Pearl 1988), (n, r_t)."""
    lc = model.log_cpts
    pa = model.parents[t]
    j = codes[:, pa] @ model.strides(t) if len(pa) else np.zeros(len(codes), np.int64)
    out = lc[t][j].copy()
    states = np.arange(int(model.cards[t]))[None, :]
    for ch in model.children[t]:
        ch = int(ch)
        pa_c = model.parents[ch]
        s = model.strides(ch)
        pos = int(np.flatnonzero(pa_c == t)[0])
        others = np.arange(len(pa_c)) != pos
        base = codes[:, pa_c[others]] @ s[others]
        out += lc[ch][base[:, None] + states * s[pos], codes[:, ch][:, None]]
    return out


def _direct_terms(model: FactorModel, i: int, t: int, hard: dict[int, int], ev: np.ndarray
                  ) -> np.ndarray:
    """log theta_i for a family whose variables other than ``t`` are all hard evidence:
    (n, r_t) values (index arithmetic, as in :func:`markov_blanket_log_scores`)."""
    r_t = int(model.cards[t])
    pa = model.parents[i]
    strides = model.strides(i)
    j: Any = 0
    for p, s in zip(pa, strides):
        p = int(p)
        j = j + (np.arange(r_t)[None, :] * int(s) if p == t else ev[:, hard[p], None] * int(s))
    col = np.arange(r_t)[None, :] if i == t else ev[:, hard[i], None]
    return model.log_cpts[i][j, col]  # broadcasts to (n, r_t)


def _reduced(model: FactorModel, i: int, hard: dict[int, int], ev: np.ndarray) -> Factor:
    """log theta_i sliced row by row at the hard evidence (batched unless none applies)."""
    f = model.factor(i)
    axes = [a for a, v in enumerate(f.scope) if v in hard]
    if not axes:
        return f
    table = np.moveaxis(f.log_table, axes, list(range(len(axes))))
    table = table[tuple(ev[:, hard[f.scope[a]]] for a in axes)]
    return Factor(tuple(v for v in f.scope if v not in hard), table, True)


def _evidence_factors(model: FactorModel, t: int, obs: Sequence[int], ev: np.ndarray
                      ) -> tuple[np.ndarray, list[Factor], list[int]]:
    """The families of the ancestral set of {t} ∪ obs reduced by the evidence rows ``ev``
    (n, len(obs)): (sum of the log terms that depend on ``t`` only, shape (n, r_t); the other
    factors; the hidden variables). A column without -1 is hard evidence (sliced per row); a
    column with some -1 stays hidden with an indicator factor (soft evidence)."""
    soft = (ev < 0).any(axis=0) if ev.size else np.zeros(len(obs), dtype=bool)
    hard = {int(v): k for k, v in enumerate(obs) if not soft[k]}
    keep = model.ancestral_set([t, *(int(v) for v in obs)])
    direct = np.zeros((ev.shape[0], int(model.cards[t])))
    factors = []
    for k in np.flatnonzero(soft):
        v = int(obs[k])
        e = ev[:, k][:, None]
        ind = (e < 0) | (e == np.arange(int(model.cards[v]))[None, :])
        with np.errstate(divide="ignore"):
            factors.append(Factor((v,), np.log(ind.astype(np.float64)), True))
    for i in keep:
        if all(v == t or v in hard for v in (i, *model.parents[i].tolist())):
            direct += _direct_terms(model, i, t, hard, ev)
        else:
            factors.append(_reduced(model, i, hard, ev))
    hidden = [v for v in keep if v != t and v not in hard]
    return direct, factors, hidden


def log_joint_batch(model: FactorModel, t: int, obs: Sequence[int], ev: np.ndarray, *,
                    chunk_cells: int = CHUNK_CELLS, enumeration_limit: int = 0) -> np.ndarray:
    """log P(t = k, evidence row) for a batch of evidence rows: shape (n, r_t).

    Parameters
    ----------
    model : FactorModel
    t : int
        Target variable (not in ``obs``).
    obs : sequence of int
        Evidence variables; ``ev[:, k]`` holds the codes of ``obs[k]`` (-1 = unobserved in that
        row: soft evidence).
    ev : (n, len(obs)) int array
    chunk_cells : int
        Rows are eliminated in blocks whose largest intermediate factor has at most this many
        cells.
    enumeration_limit : int
        When the hidden variables have at most this many joint states, sum them out in one
        contraction instead of one at a time (same result).
    """
    ev = np.asarray(ev, dtype=np.int64)
    if ev.ndim != 2 or ev.shape[1] != len(obs):
        raise ValueError(f"ev must have shape (n_rows, {len(obs)}); got {ev.shape}.")
    if t in set(int(v) for v in obs):
        raise ValueError(f"The target {t} is also an evidence variable.")
    n = ev.shape[0]
    out, rest, hidden = _evidence_factors(model, t, obs, ev)
    if not rest:
        return out
    scopes = [f.scope for f in rest]
    joint = math.prod(int(model.cards[v]) for v in hidden)
    if joint <= enumeration_limit:  # one contraction over every hidden variable and t
        order: list[int] = []
        cells = joint * int(model.cards[t])
    else:
        order, cells = _min_fill(hidden, scopes, model.cards)
        cells = max(cells, int(model.cards[t]))
    block = max(1, int(chunk_cells) // cells)
    for s in range(0, n, block):
        e = min(n, s + block)
        sub = [_take_rows(f, slice(s, e)) for f in rest]
        out[s:e] += _eliminate_rows(sub, order, (t,), e - s, model.positive)
    return out


def closed_form_log_joint(model: FactorModel, target: int, codes: np.ndarray
                          ) -> tuple[np.ndarray, np.ndarray]:
    """log P(target = k, x_obs) of the rows that need no elimination, all at once.

    Per row, the relevant variables are the ancestral set A of {target} ∪ observed; every
    other unobserved variable is barren (none of its descendants is observed or the target)
    and sums to one (Shachter 1986). When no variable of A is unobserved except the target,
    the joint is the product of the families of A, evaluated by index arithmetic for all such
    rows together whatever their missingness patterns:
    log P(t, x_obs) = sum_{i in A} log theta_i(x_i | x_pa(i)).

    Parameters
    ----------
    model : FactorModel
    target : int
    codes : (n, n_vars) int array
        Validated codes, -1 = unobserved; the target column is ignored.

    Returns
    -------
    rows : (n,) bool
        The rows computed here (the others need :func:`log_joint_batch`).
    log_joint : (rows.sum(), r_target) float64
        Their log P(target = k, x_obs), the exact joint (not only up to a constant).
    """
    codes = np.asarray(codes, dtype=np.int64)
    n, V = codes.shape
    observed = codes >= 0
    observed[:, target] = False
    anc = observed.copy()
    anc[:, target] = True
    parent_of = np.zeros((V, V), dtype=np.int64)  # [i, p] = 1 when p is a parent of i
    for i, pa in enumerate(model.parents):
        parent_of[i, pa] = 1
    while True:  # close under "parent of"
        grown = anc | ((anc.astype(np.int64) @ parent_of) > 0)
        if (grown == anc).all():
            break
        anc = grown
    hidden = anc & ~observed
    hidden[:, target] = False
    rows = ~hidden.any(axis=1)
    c = codes[rows]
    a = anc[rows]
    r_t = int(model.cards[target])
    states = np.arange(r_t)[None, :]
    out = np.zeros((len(c), r_t))
    for i in range(V):
        use = np.flatnonzero(a[:, i])
        if not len(use):
            continue
        ci = c[use]
        j: Any = np.zeros((len(use), 1), dtype=np.int64)
        for p, st in zip(model.parents[i], model.strides(i)):
            p = int(p)
            j = j + (states * int(st) if p == target else ci[:, p, None] * int(st))
        col = states if i == target else ci[:, i, None]
        out[use] += model.log_cpts[i][j, col]
    return rows, out


def _row_groups(observed: np.ndarray) -> list[np.ndarray]:
    """Row indices grouped by identical boolean rows (bit-packed keys, one stable sort, so
    each group's indices are increasing)."""
    packed = np.packbits(observed, axis=1)
    pad = (-packed.shape[1]) % 8
    if pad:
        packed = np.pad(packed, ((0, 0), (0, pad)))
    keys = np.ascontiguousarray(packed).view(np.uint64)
    order = np.lexsort(keys.T[::-1]) if keys.shape[1] > 1 else np.argsort(keys[:, 0],
                                                                          kind="stable")
    sk = keys[order]
    starts = np.flatnonzero(np.r_[True, (sk[1:] != sk[:-1]).any(axis=1)])
    return np.split(order, starts[1:])


def _check_codes(model: FactorModel, target: int, codes: np.ndarray) -> None:
    if codes.ndim != 2 or codes.shape[1] != model.n_vars:
        raise ValueError(f"codes must have shape (n_rows, {model.n_vars}); got {codes.shape}.")
    if not 0 <= int(target) < model.n_vars:
        raise ValueError(f"target {target} is not a variable index (0..{model.n_vars - 1}).")
    if codes.size and ((codes < -1).any() or (codes >= model.cards[None, :]).any()):
        raise ValueError("codes must be -1 (unobserved) or state indices 0..card-1.")


def class_log_posterior(model: FactorModel, target: int, codes: np.ndarray, *,
                        min_pattern_rows: int = MIN_PATTERN_ROWS, chunk_cells: int = CHUNK_CELLS,
                        enumeration_limit: int = 0, validate: bool = True) -> np.ndarray:
    """Unnormalised log P(target, observed values) for many rows, exact.

    Parameters
    ----------
    model : FactorModel
    target : int
        The class (query) variable.
    codes : (n_rows, n_vars) int array
        Codes in the model's variable order, -1 = unobserved; the target column is ignored.
    min_pattern_rows, chunk_cells, enumeration_limit
        Batching controls (module docstring, :func:`log_joint_batch`); they change speed and
        memory, not the result.
    validate : bool
        Check the shape and range of ``codes`` (callers that have validated them pass False).

    Returns
    -------
    (n_rows, r_target) float64
        log P(target = k, x_obs) up to an additive constant per row (normalise each row with
        ``logsumexp``). A row of ``-inf`` means the observed values have probability zero;
        rows whose Markov blanket of the target is observed get log P(target | blanket),
        which ignores observed values outside the blanket even if they are impossible.
    """
    codes = np.asarray(codes)
    if validate:
        _check_codes(model, target, codes)
    n = codes.shape[0]
    out = np.empty((n, int(model.cards[target])))
    if n == 0:
        return out
    observed = codes >= 0
    observed[:, target] = False
    mb = model.markov_blanket(target)
    full = observed[:, mb].all(axis=1) if mb else np.ones(n, dtype=bool)
    if full.any():
        out[full] = markov_blanket_log_scores(model, target, codes[full])
    rest = np.flatnonzero(~full)
    if not len(rest):
        return out
    closed, values = closed_form_log_joint(model, target, codes[rest])
    out[rest[closed]] = values
    rest = rest[~closed]
    if not len(rest):
        return out
    opts = {"chunk_cells": chunk_cells, "enumeration_limit": enumeration_limit}
    pooled = []
    for rows in _row_groups(observed[rest]):
        rows = rest[rows]
        if len(rows) < min_pattern_rows:
            pooled.append(rows)
            continue
        obs = np.flatnonzero(observed[rows[0]])
        out[rows] = log_joint_batch(model, target, obs, codes[np.ix_(rows, obs)], **opts)
    if pooled:
        rows = np.sort(np.concatenate(pooled))
        obs = np.flatnonzero(observed[rows].any(axis=0))
        out[rows] = log_joint_batch(model, target, obs, codes[np.ix_(rows, obs)], **opts)
    return out


# ---------------------------------------------------------------------- many models at once
def stack_models(models: Sequence[FactorModel]) -> FactorModel:
    """M models with the same cardinalities and parent lists as one model with one more
    variable ``s`` (index ``n_vars``, cardinality M, the model's number) that is an extra last
    parent of every variable: theta_i(x_i | pa_i, s = m) = theta_i of model m (the CPTs stacked
    row-wise: with the first parent fastest, s has stride q_i). Its own table is all ones
    (log 0), so with ``s`` observed every query of the stacked model equals the same query of
    model ``s`` — exactly, term by term — and one batched elimination serves all M models
    (rows from :func:`stacked_codes`).

    Raises
    ------
    ValueError
        No models, or models whose cardinalities or parent lists differ.
    """
    if not models:
        raise ValueError("stack_models needs at least one model.")
    first = models[0]
    for m in models[1:]:
        if not np.array_equal(m.cards, first.cards) or any(
                not np.array_equal(a, b) for a, b in zip(m.parents, first.parents)):
            raise ValueError("Only models with the same cardinalities and parent lists can be "
                             "stacked.")
    n = first.n_vars
    M = len(models)
    cards = [*first.cards.tolist(), M]
    parents = [[*pa.tolist(), n] for pa in first.parents] + [[]]
    cpts = [np.concatenate([m.cpts[i] for m in models], axis=0) for i in range(n)]
    return FactorModel(cards, parents, [*cpts, np.ones((1, M))])


def stacked_codes(codes: np.ndarray, n_models: int) -> np.ndarray:
    """Rows of :func:`stack_models`: ``codes`` repeated once per model, model by model, with
    the model's number appended: shape (n_models · n, n_vars + 1); row m·n + j is row j for
    model m."""
    codes = np.asarray(codes, dtype=np.int64)
    n = codes.shape[0]
    return np.column_stack([np.tile(codes, (n_models, 1)),
                            np.repeat(np.arange(n_models, dtype=np.int64), n)])
