"""Discrete Bayesian networks: DAG + CPTs, BIF read/write, forward sampling, exact inference.

Conventions (shared with :mod:`bnma_core.scores`): node ``i`` has parents ``parents[i]`` (in the
order of the BIF ``probability ( X | A, B )`` line) and a CPT ``cpts[i]`` of shape (q_i, r_i); row
j is the parent configuration in mixed radix with the **first parent varying fastest**,
j = sum_k x_{pa_k} * prod_{l<k} r_{pa_l}. Every row sums to 1.

Exact inference is variable elimination (Zhang & Poole 1994; Koller & Friedman 2009, alg. 9.1)
on the ancestral set of the query and evidence variables (barren nodes removed) with a greedy
min-fill elimination order. Evidence can be a batch of rows: the evidence-reduced factors carry a
leading row axis, so all rows sharing one missingness pattern are solved by one elimination.
"""

from __future__ import annotations

import gzip
import heapq
import io
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import networkx as nx
import numpy as np
import pandas as pd

from .data import CODE_DTYPE, DiscreteDataset, dataset_from_codes
from .datasets import bundled_path
from .kernels.sampling import forward_sample
from .scores import family_counts, posterior_cpt

__all__ = ["BUNDLED_NETWORKS", "DiscreteBN", "load_network", "read_bif", "write_bif"]

BUNDLED_NETWORKS = ("alarm", "hepar2", "asia")

#: Rows of a CPT may deviate from 1 by this much before they are renormalised; BIF files print
#: probabilities with few decimals (ALARM's 0.3333333 x 3 sums to 0.9999999).
ROW_SUM_ATOL = 1e-5

_BATCH_CHUNK = 2048  # rows per batched elimination (bounds the size of intermediate factors)
_MIN_PATTERN_ROWS = 8  # rarer missingness patterns are pooled into one soft-evidence batch
_MAX_OPERANDS = 24  # einsum accepts at most 32 operands


def _strides(parents: np.ndarray, arities: np.ndarray) -> np.ndarray:
    """Mixed-radix strides of a parent list (first parent fastest)."""
    s = np.ones(len(parents), dtype=np.int64)
    if len(parents) > 1:
        s[1:] = np.cumprod(arities[parents[:-1]])
    return s


class DiscreteBN:
    """A discrete Bayesian network: a DAG over named variables with one CPT per node.

    Parameters
    ----------
    names : sequence of str
        Variable names (unique).
    states : sequence of sequence of str
        State labels per variable (unique within a variable, at least one).
    parents : sequence of iterables
        Parents of each node, as indices or names. The order fixes the CPT row layout.
    cpts : sequence of array-like
        One (q_i, r_i) table per node, q_i = product of the parents' arities; rows are parent
        configurations with the first parent varying fastest; each row sums to 1 (deviations
        up to ``atol`` are renormalised, larger ones raise).
    name : str
        Network name (written to BIF).
    atol : float
        Tolerance on the row sums.

    Raises
    ------
    ValueError
        Duplicate names or states, unknown parents, a cycle, wrong CPT shapes, negative or
        non-finite entries, rows not summing to 1.

    Notes
    -----
    Treat an instance as immutable: derived arrays (sampling tables, log CPTs) are cached.
    """

    def __init__(self, names: Sequence[str], states: Sequence[Sequence[str]],
                 parents: Sequence[Iterable[int | str]], cpts: Sequence[Any], *,
                 name: str = "unknown", atol: float = ROW_SUM_ATOL) -> None:
        self.name = str(name)
        self.names = [str(n) for n in names]
        n = len(self.names)
        if n == 0:
            raise ValueError("A network needs at least one variable.")
        self._index = {nm: i for i, nm in enumerate(self.names)}
        if len(self._index) != n:
            dup = sorted({x for x in self.names if self.names.count(x) > 1})
            raise ValueError(f"Variable names must be unique; repeated: {', '.join(dup)}.")
        if len(states) != n or len(parents) != n or len(cpts) != n:
            raise ValueError(f"names ({n}), states ({len(states)}), parents ({len(parents)}) and "
                             f"cpts ({len(cpts)}) must have one entry per variable.")
        self.states = [[str(s) for s in st] for st in states]
        for nm, st in zip(self.names, self.states):
            if not st:
                raise ValueError(f"Variable {nm!r} has no states.")
            if len(set(st)) != len(st):
                raise ValueError(f"Variable {nm!r} has repeated state names: {st}.")
        self.arities = np.array([len(s) for s in self.states], dtype=np.int64)
        self.parents = []
        for i, pa in enumerate(parents):
            idx = np.array([self._resolve(p, f"parent of {self.names[i]!r}") for p in pa],
                           dtype=np.int64)
            if len(set(idx.tolist())) != len(idx):
                raise ValueError(f"Variable {self.names[i]!r} lists a parent twice.")
            if i in idx:
                raise ValueError(f"Variable {self.names[i]!r} cannot be its own parent.")
            self.parents.append(idx)
        self._topo = self._compute_topological_order()
        self.cpts = [self._check_cpt(i, c, atol) for i, c in enumerate(cpts)]
        self._cache: dict[str, Any] = {}

    # ------------------------------------------------------------------ construction helpers
    def _resolve(self, node: int | str, what: str = "variable") -> int:
        if isinstance(node, (int, np.integer)) and not isinstance(node, bool):
            i = int(node)
            if not 0 <= i < len(self.names):
                raise ValueError(f"Unknown {what}: index {i} (the network has "
                                 f"{len(self.names)} variables).")
            return i
        i = self._index.get(str(node))
        if i is None:
            raise ValueError(f"Unknown {what}: {node!r} is not a variable of this network.")
        return i

    def _compute_topological_order(self) -> list[int]:
        n = len(self.names)
        indeg = np.array([len(p) for p in self.parents])
        children: list[list[int]] = [[] for _ in range(n)]
        for i, pa in enumerate(self.parents):
            for p in pa:
                children[int(p)].append(i)
        ready = [i for i in range(n) if indeg[i] == 0]
        order: list[int] = []
        heapq.heapify(ready)
        while ready:
            i = heapq.heappop(ready)
            order.append(i)
            for c in children[i]:
                indeg[c] -= 1
                if indeg[c] == 0:
                    heapq.heappush(ready, c)
        if len(order) != n:
            left = [self.names[i] for i in range(n) if indeg[i] > 0]
            raise ValueError("The parent lists contain a directed cycle (a Bayesian network must "
                             f"be acyclic); variables on or below the cycle: {', '.join(left)}.")
        self._children = [np.array(c, dtype=np.int64) for c in children]
        return order

    def _check_cpt(self, i: int, cpt: Any, atol: float) -> np.ndarray:
        nm = self.names[i]
        q = int(np.prod(self.arities[self.parents[i]])) if len(self.parents[i]) else 1
        r = int(self.arities[i])
        a = np.array(cpt, dtype=np.float64)
        if a.ndim == 1 and q == 1:
            a = a[None, :]
        if a.shape != (q, r):
            raise ValueError(f"The CPT of {nm!r} has shape {a.shape}; expected ({q}, {r}) "
                             f"({q} parent configurations x {r} states).")
        if not np.isfinite(a).all() or (a < 0).any():
            raise ValueError(f"The CPT of {nm!r} has negative or non-finite probabilities.")
        s = a.sum(axis=1)
        bad = np.flatnonzero(np.abs(s - 1.0) > atol)
        if len(bad):
            j = int(bad[0])
            raise ValueError(f"Row {j} of the CPT of {nm!r} sums to {s[j]:.6g}, not 1 "
                             f"({len(bad)} bad row(s)).")
        fix = np.abs(s - 1.0) > 1e-12
        if fix.any():
            a[fix] /= s[fix, None]
        a.setflags(write=False)
        return a

    @classmethod
    def from_structure(cls, names: Sequence[str], states: Sequence[Sequence[str]],
                       parents: Sequence[Iterable[int | str]], data_codes: Any,
                       alpha: float | np.ndarray = 1.0, name: str = "fitted") -> DiscreteBN:
        """Fit posterior-predictive CPTs for a given DAG.

        theta_ijk = (a_ijk + N_ijk) / (a_ij + N_ij) (DESIGN §3; Heckerman et al. 1995), with
        N_ijk counted over the rows where the child and its parents are observed.

        Parameters
        ----------
        names, states, parents
            As in the constructor.
        data_codes : (n_rows, n_vars) int array or DiscreteDataset
            Codes in the network's variable order; -1 = missing.
        alpha : float
            Dirichlet pseudo-count a_ijk (1 = K2 / Laplace).
        """
        codes = getattr(data_codes, "codes", data_codes)
        codes = np.ascontiguousarray(codes, dtype=CODE_DTYPE)
        n = len(names)
        if len(states) != n or len(parents) != n:
            raise ValueError("names, states and parents must have one entry per variable.")
        if codes.ndim != 2 or codes.shape[1] != n:
            raise ValueError(f"data_codes must have one column per variable ({n}); "
                             f"got shape {codes.shape}.")
        arities = np.array([len(s) for s in states], dtype=np.int64)
        if codes.size and ((codes >= arities[None, :]).any() or (codes < -1).any()):
            raise ValueError("data_codes holds a code outside 0..arity-1 (or -1 for missing).")
        pa_idx = [_ix(names, p) for p in parents]
        cpts = [posterior_cpt(family_counts(codes, i, np.array(pa_idx[i], dtype=np.int64),
                                            arities), alpha) for i in range(n)]
        return cls(names, states, pa_idx, cpts, name=name)

    # ------------------------------------------------------------------ basic views
    @property
    def n_vars(self) -> int:
        return len(self.names)

    @property
    def n_arcs(self) -> int:
        return int(sum(len(p) for p in self.parents))

    @property
    def n_parameters(self) -> int:
        """Free parameters sum_i q_i (r_i - 1)."""
        return int(sum(c.shape[0] * (c.shape[1] - 1) for c in self.cpts))

    @property
    def children(self) -> list[np.ndarray]:
        return [c.copy() for c in self._children]

    def index(self, name: int | str) -> int:
        """Index of a variable given by name (or index, checked)."""
        return self._resolve(name)

    def state_index(self, node: int | str, state: int | str) -> int:
        """Index of a state given by label (str) or index (int), checked."""
        i = self._resolve(node)
        if isinstance(state, (int, np.integer)) and not isinstance(state, bool):
            k = int(state)
            if not 0 <= k < self.arities[i]:
                raise ValueError(f"State index {k} is out of range for {self.names[i]!r} "
                                 f"({self.arities[i]} states).")
            return k
        try:
            return self.states[i].index(str(state))
        except ValueError:
            raise ValueError(f"{state!r} is not a state of {self.names[i]!r}; states are "
                             f"{', '.join(self.states[i])}.") from None

    def markov_blanket(self, node: int | str) -> list[int]:
        """Parents, children and the children's other parents of a node (sorted indices)."""
        i = self._resolve(node)
        mb = set(self.parents[i].tolist()) | set(self._children[i].tolist())
        for c in self._children[i]:
            mb |= set(self.parents[int(c)].tolist())
        mb.discard(i)
        return sorted(mb)

    @property
    def graph(self) -> nx.DiGraph:
        """The DAG over node names; nodes carry ``states``."""
        g = nx.DiGraph(name=self.name)
        for nm, st in zip(self.names, self.states):
            g.add_node(nm, states=list(st))
        for i, pa in enumerate(self.parents):
            g.add_edges_from((self.names[int(p)], self.names[i]) for p in pa)
        return g

    def topological_order(self) -> list[int]:
        """Node indices with every parent before its children (smallest index first on ties)."""
        return list(self._topo)

    def __repr__(self) -> str:
        return (f"DiscreteBN({self.name!r}: {self.n_vars} nodes, {self.n_arcs} arcs, "
                f"{self.n_parameters} free parameters)")

    # ------------------------------------------------------------------ sampling
    def _sampling_tables(self) -> tuple:
        t = self._cache.get("sampling")
        if t is None:
            par_off = np.zeros(self.n_vars + 1, dtype=np.int64)
            par_off[1:] = np.cumsum([len(p) for p in self.parents])
            par_flat = np.concatenate([*self.parents, np.zeros(0, np.int64)]).astype(np.int64)
            stride_flat = np.concatenate(
                [*(_strides(p, self.arities) for p in self.parents), np.zeros(0, np.int64)])
            cums = []
            for c in self.cpts:
                cum = np.cumsum(c, axis=1)
                last = c.shape[1] - 1 - np.argmax((c > 0)[:, ::-1], axis=1)
                cum[np.arange(c.shape[1])[None, :] >= last[:, None]] = 2.0
                cums.append(cum.ravel())
            cpt_off = np.zeros(self.n_vars + 1, dtype=np.int64)
            cpt_off[1:] = np.cumsum([c.size for c in self.cpts])
            t = (np.array(self._topo, dtype=np.int64), par_flat, par_off,
                 stride_flat.astype(np.int64), np.concatenate(cums), cpt_off)
            self._cache["sampling"] = t
        return t

    def sample_codes(self, n_rows: int, seed: int | np.random.Generator | None = None
                     ) -> np.ndarray:
        """Forward (ancestral) sampling: ``n_rows`` complete rows as int32 codes (n_rows, n_vars).

        The same ``seed`` gives the same sample (one uniform draw per cell from
        ``numpy.random.default_rng(seed)``, consumed row by row).
        """
        n_rows = int(n_rows)
        if n_rows < 0:
            raise ValueError("n_rows must be >= 0")
        rng = np.random.default_rng(seed)
        u = rng.random((n_rows, self.n_vars))
        order, par_flat, par_off, stride_flat, cum_flat, cpt_off = self._sampling_tables()
        return forward_sample(order, par_flat, par_off, stride_flat, cum_flat, cpt_off,
                              self.arities, u)

    def sample(self, n_rows: int, seed: int | np.random.Generator | None = None,
               class_variable: int | str | None = None) -> DiscreteDataset:
        """A forward sample as a :class:`DiscreteDataset` (class = ``class_variable``, default the
        last node of the network)."""
        ci = self.n_vars - 1 if class_variable is None else self._resolve(class_variable)
        codes = self.sample_codes(n_rows, seed)
        ds = dataset_from_codes(codes, list(self.names), self.arities.copy(), ci,
                                [list(s) for s in self.states])
        ds.notices.append(f"{len(codes)} rows sampled from the {self.name} network "
                          f"(seed {seed}); class variable {self.names[ci]}.")
        return ds

    def sample_frame(self, n_rows: int, seed: int | np.random.Generator | None = None
                     ) -> pd.DataFrame:
        """A forward sample as a DataFrame of state labels (one column per variable)."""
        codes = self.sample_codes(n_rows, seed)
        return pd.DataFrame({nm: np.array(st, dtype=object)[codes[:, i]]
                             for i, (nm, st) in enumerate(zip(self.names, self.states))})

    # ------------------------------------------------------------------ probabilities
    def _log_cpts(self) -> list[np.ndarray]:
        lc = self._cache.get("log_cpts")
        if lc is None:
            with np.errstate(divide="ignore"):
                lc = [np.log(c) for c in self.cpts]
            self._cache["log_cpts"] = lc
        return lc

    def _check_codes(self, codes: Any, allow_missing: bool) -> np.ndarray:
        c = np.asarray(codes)
        if c.ndim == 1:
            c = c[None, :]
        if c.ndim != 2 or c.shape[1] != self.n_vars:
            raise ValueError(f"codes must have shape (n_rows, {self.n_vars}); got {c.shape}.")
        c = c.astype(np.int64)
        lo = -1 if allow_missing else 0
        if c.size and ((c < lo).any() or (c >= self.arities[None, :]).any()):
            what = "-1 (unobserved) or " if allow_missing else ""
            raise ValueError(f"codes must be {what}state indices 0..arity-1 of each variable.")
        return c

    def log_prob(self, codes: Any) -> np.ndarray:
        """log P(x) of complete rows: sum_i log theta_i(x_i | x_pa(i)); -inf if impossible."""
        c = self._check_codes(codes, allow_missing=False)
        lc = self._log_cpts()
        out = np.zeros(c.shape[0])
        for i, pa in enumerate(self.parents):
            j = c[:, pa] @ _strides(pa, self.arities) if len(pa) else 0
            out += lc[i][j, c[:, i]]
        return out

    def _ancestral_set(self, nodes: Iterable[int]) -> list[int]:
        seen = set()
        stack = [int(v) for v in nodes]
        while stack:
            v = stack.pop()
            if v in seen:
                continue
            seen.add(v)
            stack.extend(int(p) for p in self.parents[v])
        return sorted(seen)

    def _ve_batch(self, target: int, obs: Sequence[int], ev: np.ndarray) -> np.ndarray:
        """Unnormalised P(target, evidence row) for a batch of evidence rows, shape (n, r_t).

        ``obs`` are the observed variables (target excluded), ``ev`` (n, len(obs)) their codes.
        A column without -1 is hard evidence: the factors are sliced row by row and the variable
        leaves their scope. A column with some -1 (rows of different missingness patterns in one
        batch) stays a hidden variable multiplied by the indicator factor
        lambda(x) = [code == -1 or x == code]. Barren nodes (outside the ancestral set of the
        target and the evidence) are dropped; factors are rescaled per row after every
        elimination (the scale cancels on normalising).
        """
        n = ev.shape[0]
        soft_cols = (ev < 0).any(axis=0) if ev.size else np.zeros(len(obs), dtype=bool)
        obs_pos = {int(v): k for k, v in enumerate(obs) if not soft_cols[k]}
        keep = self._ancestral_set([target, *(int(v) for v in obs)])
        factors: list[tuple[list[int], np.ndarray, bool]] = []
        for k in np.flatnonzero(soft_cols):
            v = int(obs[k])
            e = ev[:, k][:, None]
            lam = ((e < 0) | (e == np.arange(self.arities[v])[None, :])).astype(np.float64)
            factors.append(([v], lam, True))
        for i in keep:
            scope = [int(p) for p in self.parents[i][::-1]] + [i]
            arr = self.cpts[i].reshape([int(self.arities[v]) for v in scope])
            o_axes = [a for a, v in enumerate(scope) if v in obs_pos]
            batched = False
            if o_axes:
                arr = np.moveaxis(arr, o_axes, list(range(len(o_axes))))
                arr = arr[tuple(ev[:, obs_pos[scope[a]]] for a in o_axes)]
                scope = [v for v in scope if v not in obs_pos]
                batched = True
            factors.append((scope, arr, batched))
        hidden = [v for v in keep if v != target and v not in obs_pos]
        for v in _min_fill_order(hidden, [f[0] for f in factors], self.arities):
            use = [f for f in factors if v in f[0]]
            factors = [f for f in factors if v not in f[0]]
            out_scope = sorted({u for f in use for u in f[0]} - {v})
            factors.append(_contract(use, out_scope))
        scope, arr, batched = _contract(factors, [target])
        return np.broadcast_to(arr if batched else arr[None, :],
                               (n, int(self.arities[target]))).copy()

    def _finish(self, p: np.ndarray) -> np.ndarray:
        s = p.sum(axis=1, keepdims=True)
        if (s <= 0).any():
            k = int((s <= 0).sum())
            raise ValueError(f"{k} evidence row(s) have probability zero under the network "
                             "(the observed values cannot occur together).")
        return p / s

    def posterior(self, target: int | str, evidence: Mapping[int | str, int | str] | None = None
                  ) -> np.ndarray:
        """Exact P(target | evidence) by variable elimination.

        Parameters
        ----------
        target : int or str
        evidence : dict
            Variable (name or index) -> state (label or index).

        Returns
        -------
        (r_target,) float64 probabilities.
        """
        t = self._resolve(target, "target")
        obs, vals = [], []
        for k, v in (evidence or {}).items():
            i = self._resolve(k, "evidence variable")
            if i == t:
                raise ValueError(f"The target {self.names[t]!r} is also given as evidence.")
            if i in obs:
                raise ValueError(f"Evidence on {self.names[i]!r} is given twice.")
            obs.append(i)
            vals.append(self.state_index(i, v))
        ev = np.array([vals], dtype=np.int64).reshape(1, len(obs))
        return self._finish(self._ve_batch(t, obs, ev))[0]

    def marginals(self) -> list[np.ndarray]:
        """Exact prior marginals P(X_i), one (r_i,) array per node."""
        m = self._cache.get("marginals")
        if m is None:
            m = [self._finish(self._ve_batch(i, [], np.zeros((1, 0), np.int64)))[0]
                 for i in range(self.n_vars)]
            self._cache["marginals"] = m
        return [x.copy() for x in m]

    def _mb_log_posterior(self, t: int, c: np.ndarray) -> np.ndarray:
        """Unnormalised log P(t | Markov blanket) = log theta_t(t | pa_t)
        + sum_{ch in children(t)} log theta_ch(x_ch | pa_ch) for rows whose blanket is observed."""
        lc = self._log_cpts()
        r = int(self.arities[t])
        pa = self.parents[t]
        j = c[:, pa] @ _strides(pa, self.arities) if len(pa) else np.zeros(len(c), np.int64)
        out = lc[t][j].copy()
        states = np.arange(r)[None, :]
        for ch in self._children[t]:
            ch = int(ch)
            pa_c = self.parents[ch]
            s = _strides(pa_c, self.arities)
            pos = int(np.flatnonzero(pa_c == t)[0])
            others = np.arange(len(pa_c)) != pos
            base = c[:, pa_c[others]] @ s[others]
            out += lc[ch][base[:, None] + states * s[pos], c[:, ch][:, None]]
        return out

    def _ve_rows(self, t: int, c: np.ndarray, rows: np.ndarray, obs: np.ndarray,
                 out: np.ndarray) -> None:
        """Posteriors of ``rows`` by batched elimination over the variables ``obs`` (chunked)."""
        ev = c[:, obs]
        for s in range(0, len(rows), _BATCH_CHUNK):
            rr = rows[s:s + _BATCH_CHUNK]
            out[rr] = self._finish(self._ve_batch(t, obs.tolist(), ev[rr]))

    def class_posterior(self, target: int | str, codes: Any) -> np.ndarray:
        """Exact P(target | observed values) for a batch of rows.

        Parameters
        ----------
        target : int or str
        codes : (n_rows, n_vars) int array
            State codes in the network's variable order; -1 = unobserved. The target column is
            ignored.

        Returns
        -------
        (n_rows, r_target) float64 posteriors.

        Notes
        -----
        Rows whose Markov blanket of the target is fully observed use the closed form
        P(t | mb) ∝ theta_t(t | pa_t) prod_{ch} theta_ch(x_ch | pa_ch) (Pearl 1988), vectorised
        over rows. The other rows are grouped by missingness pattern and each group is solved by
        one batched variable elimination with hard evidence (barren nodes pruned per pattern);
        patterns with fewer than 8 rows are pooled into one batched elimination in which each
        partly observed variable enters through an indicator factor (1 where unobserved).
        """
        t = self._resolve(target, "target")
        c = self._check_codes(codes, allow_missing=True)
        n = c.shape[0]
        r = int(self.arities[t])
        out = np.empty((n, r))
        if n == 0:
            return out
        observed = c >= 0
        observed[:, t] = False
        mb = self.markov_blanket(t)
        full = observed[:, mb].all(axis=1) if mb else np.ones(n, dtype=bool)
        if full.any():
            lp = self._mb_log_posterior(t, c[full])
            m = lp.max(axis=1, keepdims=True)
            if not np.isfinite(m).all():
                raise ValueError(f"{int((~np.isfinite(m)).sum())} evidence row(s) have "
                                 "probability zero under the network (the observed values "
                                 "cannot occur together).")
            p = np.exp(lp - m)
            out[full] = p / p.sum(axis=1, keepdims=True)
        rest = np.flatnonzero(~full)
        if len(rest):
            patterns, inv, counts = np.unique(observed[rest], axis=0, return_inverse=True,
                                              return_counts=True)
            inv = inv.ravel()
            pooled = []
            for k, pat in enumerate(patterns):
                rows = rest[inv == k]
                if counts[k] < _MIN_PATTERN_ROWS:
                    pooled.append(rows)
                    continue
                self._ve_rows(t, c, rows, np.flatnonzero(pat), out)
            if pooled:
                rows = np.sort(np.concatenate(pooled))
                self._ve_rows(t, c, rows, np.flatnonzero(observed[rows].any(axis=0)), out)
        return out


def _ix(names: Sequence[str], pa: Iterable[int | str]) -> list[int]:
    """Parent entries (indices or names) -> indices (validation happens in the constructor)."""
    lookup = {str(n): i for i, n in enumerate(names)}
    out = []
    for p in pa:
        if isinstance(p, (int, np.integer)):
            if not 0 <= int(p) < len(names):
                raise ValueError(f"Unknown parent index {int(p)} ({len(names)} variables).")
            out.append(int(p))
        elif str(p) in lookup:
            out.append(lookup[str(p)])
        else:
            raise ValueError(f"Unknown parent {p!r}: it is not one of the variable names.")
    return out


# ---------------------------------------------------------------------- variable elimination
def _min_fill_order(hidden: list[int], scopes: list[list[int]], arities: np.ndarray
                    ) -> list[int]:
    """Greedy elimination order: fewest fill-in edges, ties broken by the smallest product of
    neighbour domain sizes (Koller & Friedman 2009, §9.4.3.2)."""
    nb: dict[int, set[int]] = {}
    for sc in scopes:
        for v in sc:
            nb.setdefault(v, set()).update(u for u in sc if u != v)
    left = set(hidden)
    order = []
    while left:
        best, best_key = -1, None
        for v in left:
            ns = list(nb.get(v, ()))
            fill = 0
            for a in range(len(ns)):
                na = nb[ns[a]]
                for b in range(a + 1, len(ns)):
                    if ns[b] not in na:
                        fill += 1
            w = math.prod(int(arities[u]) for u in ns)
            key = (fill, w, v)
            if best_key is None or key < best_key:
                best, best_key = v, key
        ns = nb.pop(best, set())
        for u in ns:
            nb[u].discard(best)
            nb[u].update(x for x in ns if x != u)
        left.discard(best)
        order.append(best)
    return order


def _contract(factors: list[tuple[list[int], np.ndarray, bool]], out_scope: list[int]
              ) -> tuple[list[int], np.ndarray, bool]:
    """Multiply factors and sum out every variable not in ``out_scope`` (einsum); the result is
    rescaled to a maximum of 1 per batch row."""
    # einsum takes at most 32 operands: fold the list in groups, keeping every variable that a
    # later factor or the output still needs
    while len(factors) > _MAX_OPERANDS:
        group, rest = factors[:_MAX_OPERANDS], factors[_MAX_OPERANDS:]
        needed = set(out_scope).union(*(f[0] for f in rest))
        keep = sorted({v for f in group for v in f[0]} & needed)
        factors = [_contract(group, keep), *rest]
    labels: dict[int, int] = {}
    for sc, _, _ in factors:
        for v in sc:
            labels.setdefault(v, len(labels))
    for v in out_scope:
        labels.setdefault(v, len(labels))
    bl = len(labels)
    batched = any(f[2] for f in factors)
    args: list[Any] = []
    for sc, arr, b in factors:
        args += [arr, ([bl] if b else []) + [labels[v] for v in sc]]
    out_labels = ([bl] if batched else []) + [labels[v] for v in out_scope]
    if args:
        arr = np.einsum(*args, out_labels, optimize=len(factors) > 2)
    else:
        arr = np.ones(())
    if batched:
        m = arr.reshape(arr.shape[0], -1).max(axis=1) if arr.ndim > 1 else arr
        m = np.where(m > 0, m, 1.0)
        arr = arr / m.reshape((-1,) + (1,) * (arr.ndim - 1))
    else:
        m = arr.max() if arr.size else 1.0
        if m > 0:
            arr = arr / m
    return list(out_scope), arr, batched


# ---------------------------------------------------------------------- BIF
_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|//[^\n]*|/\*.*?\*/|[{}\[\]()|,;]'
                    r'|(?:[^\s{}\[\]()|,;"/]|/(?![/*]))+', re.S)


class _Tokens:
    def __init__(self, text: str) -> None:
        self.text = text
        self.toks = [(m.group(), m.start()) for m in _TOKEN.finditer(text)
                     if not m.group().startswith(("//", "/*"))]
        self.i = 0

    def line(self, pos: int | None = None) -> int:
        if pos is None:
            pos = self.toks[min(self.i, len(self.toks) - 1)][1] if self.toks else 0
        return self.text.count("\n", 0, pos) + 1

    def error(self, msg: str) -> ValueError:
        return ValueError(f"BIF line {self.line()}: {msg}")

    def at_end(self) -> bool:
        return self.i >= len(self.toks)

    def peek(self) -> str:
        if self.i >= len(self.toks):
            raise ValueError("BIF text ends too early (a block is not closed).")
        return self.toks[self.i][0]

    def next(self) -> str:
        if self.i >= len(self.toks):
            raise ValueError("BIF text ends too early (a block is not closed).")
        self.i += 1
        return self.toks[self.i - 1][0]

    def expect(self, tok: str) -> None:
        got = self.next()
        if got != tok:
            self.i -= 1
            raise self.error(f"expected {tok!r} but found {got!r}.")

    def name(self) -> str:
        t = self.next()
        if t in "{}[]()|,;":
            self.i -= 1
            raise self.error(f"expected a name but found {t!r}.")
        return t[1:-1] if t.startswith('"') else t

    def skip_statement(self) -> None:
        """Skip to the ';' that ends the current statement (property lines)."""
        depth = 0
        while True:
            t = self.next()
            if t in "{(":
                depth += 1
            elif t in "})":
                depth -= 1
                if depth < 0:
                    self.i -= 1
                    return
            elif t == ";" and depth == 0:
                return

    def skip_block(self) -> None:
        self.expect("{")
        depth = 1
        while depth:
            t = self.next()
            depth += (t == "{") - (t == "}")

    def numbers(self) -> list[float]:
        out = []
        while True:
            t = self.next()
            if t == ";":
                return out
            if t == ",":
                continue
            try:
                out.append(float(t))
            except ValueError:
                self.i -= 1
                raise self.error(f"expected a probability but found {t!r}.") from None


def _parse_bif(text: str, atol: float) -> DiscreteBN:
    tk = _Tokens(text)
    net_name = "unknown"
    names: list[str] = []
    states: dict[str, list[str]] = {}
    probs: dict[str, tuple[list[str], dict[tuple[str, ...], list[float]], list[float] | None,
                           list[float] | None, int]] = {}
    while not tk.at_end():
        kw = tk.next()
        low = kw.lower()
        if low == "network":
            if tk.peek() != "{":
                net_name = tk.name()
            tk.skip_block()
        elif low == "variable":
            var = tk.name()
            if var in states:
                raise tk.error(f"variable {var!r} is declared twice.")
            tk.expect("{")
            st: list[str] | None = None
            while tk.peek() != "}":
                item = tk.next().lower()
                if item == "type":
                    kind = tk.next().lower()
                    if kind != "discrete":
                        raise tk.error(f"variable {var!r} has type {kind!r}; only discrete "
                                       "variables are supported.")
                    tk.expect("[")
                    try:
                        count = int(tk.next())
                    except ValueError:
                        raise tk.error(f"the number of states of {var!r} is not an "
                                       "integer.") from None
                    tk.expect("]")
                    tk.expect("{")
                    st = []
                    while tk.peek() != "}":
                        if tk.peek() == ",":
                            tk.next()
                            continue
                        st.append(tk.name())
                    tk.expect("}")
                    if tk.peek() == ";":
                        tk.next()
                    if len(st) != count:
                        raise tk.error(f"variable {var!r} declares {count} states but lists "
                                       f"{len(st)} ({', '.join(st)}).")
                    if len(set(st)) != len(st):
                        raise tk.error(f"variable {var!r} lists a state twice.")
                elif item == "property":
                    tk.skip_statement()
                elif item == ";":
                    continue
                else:
                    raise tk.error(f"unexpected {item!r} in the declaration of {var!r}.")
            tk.expect("}")
            if st is None:
                raise tk.error(f"variable {var!r} has no 'type discrete [ n ] {{ ... }}' line.")
            names.append(var)
            states[var] = st
        elif low == "probability":
            line = tk.line()
            tk.expect("(")
            child = tk.name()
            pa: list[str] = []
            if tk.peek() == "|":
                tk.next()
                while tk.peek() != ")":
                    if tk.peek() == ",":
                        tk.next()
                        continue
                    pa.append(tk.name())
            tk.expect(")")
            if child in probs:
                raise tk.error(f"the probability of {child!r} is given twice.")
            rows: dict[tuple[str, ...], list[float]] = {}
            table = default = None
            tk.expect("{")
            while tk.peek() != "}":
                item = tk.peek()
                if item == "(":
                    tk.next()
                    cfg = []
                    while tk.peek() != ")":
                        if tk.peek() == ",":
                            tk.next()
                            continue
                        cfg.append(tk.name())
                    tk.expect(")")
                    key = tuple(cfg)
                    if key in rows:
                        raise tk.error(f"parent configuration ({', '.join(cfg)}) of {child!r} "
                                       "is given twice.")
                    rows[key] = tk.numbers()
                elif item.lower() == "table":
                    tk.next()
                    table = tk.numbers()
                elif item.lower() == "default":
                    tk.next()
                    default = tk.numbers()
                elif item.lower() == "property":
                    tk.next()
                    tk.skip_statement()
                elif item == ";":
                    tk.next()
                else:
                    raise tk.error(f"unexpected {item!r} in the probability block of "
                                   f"{child!r}.")
            tk.expect("}")
            probs[child] = (pa, rows, table, default, line)
        else:
            tk.i -= 1
            raise tk.error(f"expected 'network', 'variable' or 'probability' but found {kw!r}.")
    if not names:
        raise ValueError("The BIF text declares no variables.")
    parents, cpts = [], []
    for var in names:
        if var not in probs:
            raise ValueError(f"BIF: variable {var!r} has no probability block.")
        pa, rows, table, default, line = probs[var]
        where = f"BIF line {line} (probability of {var!r})"
        for p in pa:
            if p not in states:
                raise ValueError(f"{where}: parent {p!r} is not a declared variable.")
        r = len(states[var])
        ar = [len(states[p]) for p in pa]
        q = math.prod(ar)
        if table is not None:
            if pa:
                raise ValueError(f"{where}: a 'table' for a node with parents is not supported; "
                                 "give one row per parent configuration.")
            if rows:
                raise ValueError(f"{where}: both a table and parent rows are given.")
            if len(table) != r:
                raise ValueError(f"{where}: the table has {len(table)} values; {var!r} has "
                                 f"{r} states.")
            cpt = np.array(table, dtype=np.float64)[None, :]
        else:
            cpt = np.full((q, r), np.nan)
            if default is not None:
                if len(default) != r:
                    raise ValueError(f"{where}: the default row has {len(default)} values; "
                                     f"{var!r} has {r} states.")
                cpt[:] = default
            strides = np.ones(len(pa), dtype=np.int64)
            if len(pa) > 1:
                strides[1:] = np.cumprod(ar[:-1])
            lookup = [{s: k for k, s in enumerate(states[p])} for p in pa]
            for cfg, vals in rows.items():
                if len(cfg) != len(pa):
                    raise ValueError(f"{where}: configuration ({', '.join(cfg)}) has "
                                     f"{len(cfg)} values for {len(pa)} parent(s).")
                j = 0
                for k, s in enumerate(cfg):
                    if s not in lookup[k]:
                        raise ValueError(f"{where}: {s!r} is not a state of parent {pa[k]!r} "
                                         f"(states: {', '.join(states[pa[k]])}).")
                    j += lookup[k][s] * int(strides[k])
                if len(vals) != r:
                    raise ValueError(f"{where}: row ({', '.join(cfg)}) has {len(vals)} values; "
                                     f"{var!r} has {r} states.")
                cpt[j] = vals
            missing = np.isnan(cpt).any(axis=1)
            if missing.any():
                raise ValueError(f"{where}: {int(missing.sum())} of {q} parent configurations "
                                 "have no probabilities.")
        parents.append(pa)
        cpts.append(cpt)
    try:
        return DiscreteBN(names, [states[v] for v in names], parents, cpts, name=net_name,
                          atol=atol)
    except ValueError as e:
        raise ValueError(f"BIF: {e}") from None


def _read_text(source: str | Path | bytes) -> str:
    if isinstance(source, bytes):
        raw = source
    elif isinstance(source, Path) or "{" not in source:
        p = Path(source)
        if not p.is_file():
            raise ValueError(f"No BIF file at {str(p)!r}.")
        raw = p.read_bytes()
    else:
        return source
    if raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return raw.decode("latin-1")


def read_bif(source: str | Path | bytes, atol: float = ROW_SUM_ATOL) -> DiscreteBN:
    """Read a network in the BIF dialect of the bnlearn repository / pgmpy.

    Parameters
    ----------
    source : str, Path or bytes
        A path to a ``.bif`` or ``.bif.gz`` file (gzip detected from the content), BIF text, or
        raw (possibly gzipped) bytes.
    atol : float
        Tolerance on CPT row sums (rows are renormalised).

    Returns
    -------
    DiscreteBN
        Variables in declaration order, parents in the order of each ``probability`` line.

    Raises
    ------
    ValueError
        Syntax errors (with the line), unknown variables or states, wrong value counts, missing
        parent configurations, cycles, rows not summing to 1.
    """
    return _parse_bif(_read_text(source), atol)


_BAD_NAME = re.compile(r'[\s{}\[\]()|,;"]|//|/\*')


def bif_text(bn: DiscreteBN) -> str:
    """The network as BIF text (rows listed with the first parent varying fastest; every
    probability printed with ``repr`` so that reading it back gives identical floats)."""
    for label in [bn.name, *bn.names, *(s for st in bn.states for s in st)]:
        if not label or _BAD_NAME.search(label):
            raise ValueError(f"{label!r} cannot be written to BIF (names must be non-empty and "
                             "contain no spaces, brackets, commas, semicolons, '|' or quotes).")
    out = io.StringIO()
    out.write(f"network {bn.name} {{\n}}\n")
    for nm, st in zip(bn.names, bn.states):
        out.write(f"variable {nm} {{\n  type discrete [ {len(st)} ] {{ {', '.join(st)} }};\n}}\n")
    for i, nm in enumerate(bn.names):
        pa = bn.parents[i]
        cpt = bn.cpts[i]
        if not len(pa):
            out.write(f"probability ( {nm} ) {{\n  table {_nums(cpt[0])};\n}}\n")
            continue
        out.write(f"probability ( {nm} | {', '.join(bn.names[int(p)] for p in pa)} ) {{\n")
        strides = _strides(pa, bn.arities)
        for j in range(cpt.shape[0]):
            cfg = [bn.states[int(p)][(j // int(s)) % int(bn.arities[p])]
                   for p, s in zip(pa, strides)]
            out.write(f"  ({', '.join(cfg)}) {_nums(cpt[j])};\n")
        out.write("}\n")
    return out.getvalue()


def _nums(row: np.ndarray) -> str:
    return ", ".join(repr(float(x)) for x in row)


def write_bif(bn: DiscreteBN, path: str | Path) -> None:
    """Write ``bn`` as BIF; gzip-compressed when ``path`` ends in ``.gz`` (mtime 0, so the bytes
    depend only on the network)."""
    p = Path(path)
    data = bif_text(bn).encode("utf-8")
    if p.suffix == ".gz":
        with open(p, "wb") as fh, gzip.GzipFile(fileobj=fh, mode="wb", mtime=0,
                                                filename="") as gz:
            gz.write(data)
    else:
        p.write_bytes(data)


def load_network(name_or_path: str | Path | DiscreteBN) -> DiscreteBN:
    """A bundled network by name (``alarm``, ``hepar2``, ``asia``, in
    ``bnma_core/datasets/``) or a network read from a ``.bif`` / ``.bif.gz`` path."""
    if isinstance(name_or_path, DiscreteBN):
        return name_or_path
    key = str(name_or_path).strip().lower()
    if key in BUNDLED_NETWORKS:
        bn = read_bif(bundled_path(f"{key}.bif.gz"))
        bn.name = key
        return bn
    p = Path(name_or_path)
    if not p.is_file():
        raise ValueError(f"Unknown network {str(name_or_path)!r}: give one of "
                         f"{', '.join(BUNDLED_NETWORKS)} or the path of a .bif / .bif.gz file.")
    return read_bif(p)
