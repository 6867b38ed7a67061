"""Random Bayesian networks for simulation studies (Dash & Cooper 2002, section 4.1).

Procedure 1 (random structure generation), given N and N_k: create N + 1 nodes X_1..X_{N+1};
node X_i draws a number of parents N_pa uniformly from 0..min(i - 1, N_k) and picks them
uniformly from X_1..X_{i-1}. Every CPT column theta_ij is drawn uniformly from the probability
simplex (a flat Dirichlet), *lazily*: only when forward sampling first meets parent
configuration j, so in-degrees up to 200 (2^200 configurations) cost only the configurations
the samples visit. The class node is picked uniformly at random among the N + 1 nodes.
"""

from __future__ import annotations

import networkx as nx
import numpy as np

from .data import CODE_DTYPE, DiscreteDataset, dataset_from_codes
from .kernels.counting import parent_strides

__all__ = ["RandomNetwork", "random_network"]

# mixed-radix configuration indices fit in int64 below this many bits
_MAX_INDEX_BITS = 62


class RandomNetwork:
    """A random DAG over N + 1 discrete nodes with lazily drawn CPT columns.

    Parameters
    ----------
    parents : list of ndarray
        Parents of each node (indices of earlier nodes: node order is a topological order).
    arities : ndarray of shape (n_nodes,)
        States per node.
    class_index : int
        The node designated as the class.
    seed : int or numpy Generator, optional
        Randomness for the CPT columns (drawn on first use) and for :meth:`sample`.

    Notes
    -----
    The CPT columns drawn so far are kept, so successive calls to :meth:`sample` (training
    records, then test records) come from the same distribution. ``n_columns_drawn`` tells how
    many columns exist.
    """

    def __init__(self, parents: list[np.ndarray], arities: np.ndarray, class_index: int,
                 seed: int | np.random.Generator | None = None) -> None:
        self.parents = [np.asarray(p, dtype=np.int64) for p in parents]
        self.arities = np.asarray(arities, dtype=np.int64)
        if len(self.parents) != len(self.arities):
            raise ValueError("one parent list per node is needed")
        for i, pa in enumerate(self.parents):
            if len(pa) and (pa.min() < 0 or pa.max() >= i):
                raise ValueError(f"node {i} has a parent that does not precede it")
        if not 0 <= class_index < len(self.arities):
            raise ValueError("class_index is not a node of the network")
        self.class_index = int(class_index)
        self.rng = np.random.default_rng(seed)
        self._columns: list[dict] = [{} for _ in self.parents]

    @property
    def n_nodes(self) -> int:
        return len(self.parents)

    @property
    def names(self) -> list[str]:
        return [f"X{i + 1}" for i in range(self.n_nodes)]

    @property
    def n_columns_drawn(self) -> int:
        return sum(len(c) for c in self._columns)

    def to_digraph(self) -> nx.DiGraph:
        """The structure as a networkx DiGraph (node names X1..X{N+1})."""
        g = nx.DiGraph()
        names = self.names
        g.add_nodes_from(names)
        for i, pa in enumerate(self.parents):
            g.add_edges_from((names[int(j)], names[i]) for j in pa)
        return g

    def _column_keys(self, node: int, pa_values: np.ndarray) -> tuple[list, np.ndarray]:
        """Distinct parent configurations among the rows (hashable keys) and each row's index
        into them."""
        pa = self.parents[node]
        bits = float(np.sum(np.log2(self.arities[pa]))) if len(pa) else 0.0
        if bits <= _MAX_INDEX_BITS:
            strides = parent_strides(pa, self.arities)
            idx = pa_values.astype(np.int64) @ strides if len(pa) else np.zeros(
                len(pa_values), dtype=np.int64)
            uniq, inv = np.unique(idx, return_inverse=True)
            return uniq.tolist(), inv
        uniq, inv = np.unique(pa_values, axis=0, return_inverse=True)
        return [row.tobytes() for row in uniq], inv.ravel()

    def sample(self, n_rows: int, seed: int | np.random.Generator | None = None) -> np.ndarray:
        """Forward (ancestral) sampling of ``n_rows`` complete records.

        Parameters
        ----------
        n_rows : int
        seed : int or Generator, optional
            Randomness of the records; the network's own generator when omitted. New CPT
            columns always come from the network's generator, so the same network seed and
            the same sequence of calls give the same network and records.

        Returns
        -------
        ndarray of shape (n_rows, n_nodes), int32 state codes.
        """
        if n_rows < 0:
            raise ValueError("n_rows must be non-negative")
        rng = self.rng if seed is None else np.random.default_rng(seed)
        codes = np.zeros((n_rows, self.n_nodes), dtype=CODE_DTYPE)
        for node in range(self.n_nodes):
            r = int(self.arities[node])
            keys, inv = self._column_keys(node, codes[:, self.parents[node]])
            store = self._columns[node]
            cols = [store.get(key) for key in keys]
            new = [u for u, col in enumerate(cols) if col is None]
            if new:  # flat Dirichlet = normalised standard exponentials
                e = self.rng.standard_exponential((len(new), r))
                e /= e.sum(axis=1, keepdims=True)
                for u, col in zip(new, e):
                    store[keys[u]] = cols[u] = col
            cum = np.cumsum(np.asarray(cols), axis=1)[inv]
            draw = rng.random(n_rows)[:, None]
            codes[:, node] = np.minimum((draw >= cum).sum(axis=1), r - 1)
        return codes

    def dataset(self, n_rows: int, seed: int | np.random.Generator | None = None
                ) -> DiscreteDataset:
        """:meth:`sample` wrapped as a DiscreteDataset with the class column marked."""
        return dataset_from_codes(self.sample(n_rows, seed), self.names, self.arities,
                                  class_index=self.class_index)


def random_network(n_features: int, max_parents: int, arity: int = 2,
                   seed: int | np.random.Generator | None = None) -> RandomNetwork:
    """Procedure 1 of Dash & Cooper (2002): a random DAG over ``n_features + 1`` nodes.

    Parameters
    ----------
    n_features : int
        N; the network has N + 1 nodes, one of which becomes the class.
    max_parents : int
        N_k, the largest in-degree.
    arity : int, default 2
        States of every node (the paper uses binary variables).
    seed : int or Generator, optional

    Returns
    -------
    RandomNetwork with a class node drawn uniformly from the N + 1 nodes.

    References
    ----------
    Dash & Cooper (2002), section 4.1, Procedure 1.
    """
    if n_features < 1:
        raise ValueError("n_features must be at least 1")
    if max_parents < 0:
        raise ValueError("max_parents must be non-negative")
    if arity < 2:
        raise ValueError("arity must be at least 2")
    rng = np.random.default_rng(seed)
    n_nodes = n_features + 1
    parents = []
    for i in range(n_nodes):  # node X_{i+1} may pick among X_1..X_i
        n_pa = int(rng.integers(0, min(i, max_parents) + 1))
        parents.append(np.sort(rng.choice(i, size=n_pa, replace=False)) if n_pa else
                       np.zeros(0, dtype=np.int64))
    class_index = int(rng.integers(0, n_nodes))
    return RandomNetwork(parents, np.full(n_nodes, arity), class_index, rng)
