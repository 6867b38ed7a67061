"""Brute-force oracles shared by the tests: every DAG of a few nodes, its equivalence class by
the skeleton and v-structures (Verma & Pearl 1990), and the small K-best data set.

Written independently of :mod:`bnma_core.structure` on purpose: a test compares the library
with these, so they must not reuse its code. (``tests/structure/test_exact.py`` keeps its own
vectorised enumerator of compressed parent bitmasks, a different representation for the exact-search
kernels.)
"""

from __future__ import annotations

from itertools import combinations, product

import networkx as nx
import numpy as np


def kbest_data(n: int = 40, seed: int = 3) -> tuple[np.ndarray, np.ndarray]:
    """Codes of three features and a class (arities 2, 3, 2, 2; class last) with a strong
    class-feature link and a feature depending on the class and another feature.

    Seed 3: no two of the 12 best classes tie in score (seed 2 has exact ties between distinct
    classes, where the K-best list may keep either)."""
    rng = np.random.default_rng(seed)
    ar = np.array([2, 3, 2, 2])
    D = rng.integers(0, ar, size=(n, 4))
    D[:, 3] = np.where(rng.random(n) < 0.8, D[:, 0], D[:, 3])
    D[:, 1] = np.where(rng.random(n) < 0.6, (D[:, 3] + D[:, 2]) % 3, D[:, 1])
    return D, ar


def all_dag_parents(n: int):
    """Every DAG over ``n`` nodes as a tuple of parent tuples (one per node), by filtering all
    parent-set combinations for acyclicity (543 for n = 4, 29,281 for n = 5)."""
    cands = [[tuple(s) for r in range(n) for s in combinations([u for u in range(n) if u != v], r)]
             for v in range(n)]
    for pa in product(*cands):
        g = nx.DiGraph()
        g.add_nodes_from(range(n))
        g.add_edges_from((p, v) for v in range(n) for p in pa[v])
        if nx.is_directed_acyclic_graph(g):
            yield pa


def all_dag_graphs(n: int):
    """Every DAG over ``n`` nodes as a networkx DiGraph with nodes ``0..n-1``."""
    for pa in all_dag_parents(n):
        g = nx.DiGraph()
        g.add_nodes_from(range(n))
        g.add_edges_from((p, v) for v in range(n) for p in pa[v])
        yield g


def equivalence_class_key(parents) -> tuple[frozenset, frozenset]:
    """Skeleton and v-structures ``(a, c, b)`` with ``a < b`` of a DAG given by parent tuples:
    two DAGs are Markov equivalent iff their keys are equal."""
    n = len(parents)
    adj = {frozenset((p, c)) for c in range(n) for p in parents[c]}
    vs = frozenset((min(a, b), c, max(a, b)) for c in range(n)
                   for a, b in combinations(parents[c], 2) if frozenset((a, b)) not in adj)
    return frozenset(adj), vs

def brute_joint(model) -> np.ndarray:
    """The full joint by enumeration, CPT rows indexed with the documented layout (first
    parent fastest), independent of the module's code."""
    shape = tuple(int(c) for c in model.cards)
    joint = np.zeros(shape)
    for x in product(*(range(c) for c in shape)):
        p = 1.0
        for i, pa in enumerate(model.parents):
            j, stride = 0, 1
            for v in pa:
                j += x[v] * stride
                stride *= shape[v]
            p *= model.cpts[i][j, x[i]]
        joint[x] = p
    return joint


def chained_codes(n_feat: int, seed: int, n_rows: int, max_arity: int
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Random feature codes (n_rows, n_feat), class codes and arities (features then class,
    2..max_arity states) with some dependence: each feature copies the class (the first
    feature always, the others with probability 0.3) or an earlier feature, with probability
    0.6 per row, else is uniform."""
    rng = np.random.default_rng(seed)
    ar = rng.integers(2, max_arity + 1, size=n_feat + 1)
    y = rng.integers(0, ar[-1], n_rows)
    cols: list[np.ndarray] = []
    for j in range(n_feat):
        src = y if j == 0 or rng.random() < 0.3 else cols[rng.integers(0, j)]
        copy = rng.random(n_rows) < 0.6
        cols.append(np.where(copy, src % ar[j], rng.integers(0, ar[j], n_rows)))
    return np.column_stack(cols).astype(np.int64), y, ar
