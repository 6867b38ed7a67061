"""The model: :class:`DiscreteBN`, a DAG over named discrete variables with one CPT per node.

Conventions (shared with :mod:`bnma_core.scores` and :mod:`bnma_core.factors`): node ``i`` has
parents ``parents[i]`` (in the order of the BIF ``probability ( X | A, B )`` line) and a CPT
``cpts[i]`` of shape (q_i, r_i); row j is the parent configuration in mixed radix with the
**first parent varying fastest**, j = sum_k x_{pa_k} * prod_{l<k} r_{pa_l}
(:func:`bnma_core.kernels.counting.parent_strides`). Every row sums to 1.

Sampling lives in :mod:`.sampling`, exact queries in :mod:`.inference` (through
:mod:`bnma_core.factors`); the methods here delegate to them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import networkx as nx
import numpy as np
import pandas as pd

from ..data import CODE_DTYPE, DiscreteDataset
from ..factors import CycleError, FactorModel, children_of, markov_blanket, topological_order
from ..scores import family_counts, posterior_cpt
from . import inference, sampling

__all__ = ["ROW_SUM_ATOL", "DiscreteBN"]

#: Rows of a CPT may deviate from 1 by this much before they are renormalised; BIF files print
#: probabilities with few decimals (ALARM's 0.3333333 x 3 sums to 0.9999999).
ROW_SUM_ATOL = 1e-5


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
        self._children = children_of(self.parents)
        try:
            self._topo = topological_order(self.parents, self._children)
        except CycleError as e:
            raise ValueError("The parent lists contain a directed cycle (a Bayesian network must "
                             "be acyclic); variables on or below the cycle: "
                             f"{', '.join(self.names[i] for i in e.nodes)}.") from None
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
        return markov_blanket(self.parents, self._children, i)

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
    def sample_codes(self, n_rows: int, seed: int | np.random.Generator | None = None
                     ) -> np.ndarray:
        """Forward (ancestral) sampling: ``n_rows`` complete rows as int32 codes (n_rows, n_vars).

        The same ``seed`` gives the same sample (one uniform draw per cell from
        ``numpy.random.default_rng(seed)``, consumed row by row).
        """
        return sampling.sample_codes(self, n_rows, seed)

    def sample(self, n_rows: int, seed: int | np.random.Generator | None = None,
               class_variable: int | str | None = None) -> DiscreteDataset:
        """A forward sample as a :class:`DiscreteDataset` (class = ``class_variable``, default the
        last node of the network)."""
        return sampling.sample_dataset(self, n_rows, seed, class_variable)

    def sample_frame(self, n_rows: int, seed: int | np.random.Generator | None = None
                     ) -> pd.DataFrame:
        """A forward sample as a DataFrame of state labels (one column per variable)."""
        return sampling.sample_frame(self, n_rows, seed)

    # ------------------------------------------------------------------ probabilities
    def factor_model(self) -> FactorModel:
        """The network's CPTs as a :class:`bnma_core.factors.FactorModel` (cached)."""
        fm = self._cache.get("factors")
        if fm is None:
            fm = FactorModel(self.arities, self.parents, self.cpts)
            self._cache["factors"] = fm
        return fm

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
        return inference.log_prob(self, self._check_codes(codes, allow_missing=False))

    def posterior(self, target: int | str, evidence: Mapping[int | str, int | str] | None = None
                  ) -> np.ndarray:
        """Exact P(target | evidence) by variable elimination (:mod:`bnma_core.factors`).

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
        return inference.posterior(self, t, obs, vals)

    def marginals(self) -> list[np.ndarray]:
        """Exact prior marginals P(X_i), one (r_i,) array per node."""
        m = self._cache.get("marginals")
        if m is None:
            m = inference.marginals(self)
            self._cache["marginals"] = m
        return [x.copy() for x in m]

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
        :func:`bnma_core.factors.class_log_posterior`: rows whose Markov blanket of the target
        is observed use the closed form P(t | mb) ∝ theta_t(t | pa_t) prod_{ch}
        theta_ch(x_ch | pa_ch) (Pearl 1988); the others are grouped by missingness pattern and
        solved by batched variable elimination (rare patterns pooled with soft evidence).
        """
        t = self._resolve(target, "target")
        return inference.class_posterior(self, t, self._check_codes(codes, allow_missing=True))


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


