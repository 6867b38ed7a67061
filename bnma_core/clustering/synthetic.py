"""Random TAN models with a latent cluster variable, for the Table 1 protocol
(docs/specs.md §16)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass
class RandomTAN:
    """C -> every X_i plus a tree over the features.

    Attributes
    ----------
    arities : (n,) states of each feature
    parent : (n,) feature parent of each feature (-1 = root)
    order : (n,) a topological order of the tree (the generating order π)
    theta_c : (r_C,) cluster prior
    cpts : list of arrays; ``cpts[i][c, a, k]`` = p(X_i = k | C = c, X_parent = a) (a = 0 for
        the root)
    """

    arities: np.ndarray
    parent: np.ndarray
    order: np.ndarray
    theta_c: np.ndarray
    cpts: list

    @property
    def n_clusters(self) -> int:
        return len(self.theta_c)

    def sample(self, n_rows: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        """``n_rows`` forward samples: feature codes (n_rows, n) int32 and cluster labels."""
        c = rng.choice(self.n_clusters, size=n_rows, p=self.theta_c)
        X = np.zeros((n_rows, len(self.arities)), dtype=np.int32)
        for i in self.order:
            pa = X[:, self.parent[i]] if self.parent[i] >= 0 else np.zeros(n_rows, np.int64)
            probs = self.cpts[i][c, pa]  # (n_rows, r_i)
            u = rng.random((n_rows, 1))
            X[:, i] = np.minimum((probs.cumsum(axis=1) < u).sum(axis=1), self.arities[i] - 1)
        return X, c


def random_tan(n_features: int, rng: np.random.Generator, max_states: int = 3,
               n_clusters: int = 2, balanced: bool = False) -> RandomTAN:
    """A random TAN (docs/specs.md §16 defaults, which the paper leaves open): r_i uniform on
    {2..max_states}; the tree a random recursive tree on a random permutation (node t of the
    permutation attaches to a uniformly chosen earlier node); every CPT row ~ Dir(1);
    theta_C ~ Dir(1) (``balanced``: uniform)."""
    n = int(n_features)
    if n < 1:
        raise ValueError("n_features must be at least 1")
    arities = rng.integers(2, max_states + 1, n).astype(np.int64)
    perm = rng.permutation(n)
    parent = np.full(n, -1, dtype=np.int64)
    for t in range(1, n):
        parent[perm[t]] = perm[rng.integers(0, t)]
    theta_c = np.full(n_clusters, 1.0 / n_clusters) if balanced else rng.dirichlet(
        np.ones(n_clusters))
    cpts = []
    for i in range(n):
        q = arities[parent[i]] if parent[i] >= 0 else 1
        cpts.append(rng.dirichlet(np.ones(arities[i]), size=(n_clusters, q)))
    return RandomTAN(arities, parent, perm, theta_c, cpts)
