"""Tree-augmented naive Bayes (Friedman, Geiger & Goldszmidt 1997)."""

from __future__ import annotations

from typing import Any

import networkx as nx
import numpy as np

from ..scores import class_mutual_informations, pairwise_conditional_mutual_information
from .augmented import CPT_PRIOR_CONSTRAINTS, AugmentedNaiveBayes
from .base import DEPRECATED, Interval


class TAN(AugmentedNaiveBayes):
    """Tree-augmented naive Bayes.

    The features form a maximum-weight spanning tree on the conditional mutual information
    I(X_i; X_j | C) (natural log, empirical distribution of the training rows complete in
    X_i, X_j, C), directed away from ``root``; the class is a parent of every feature.

    Parameters
    ----------
    alpha : float, default 1.0
        Dirichlet pseudo-count per CPT cell (see :class:`~bnma_core.classifiers.NaiveBayes`).
    root : int or str, optional
        Root of the tree: a feature index or name. Default: feature 0.
    cpt_prior, ess : str or float, optional; float, default 1.0
        Named CPT prior replacing ``alpha``, and the BDeu equivalent sample size (see
        :class:`~bnma_core.classifiers.augmented.AugmentedNaiveBayes`).

    Notes
    -----
    Ties between equal CMI weights are broken by networkx's Kruskal algorithm on the edges
    listed in index order, so results are deterministic. Fitted attributes: see
    :class:`~bnma_core.classifiers.augmented.AugmentedNaiveBayes`; feature edges carry
    ``weight`` = CMI, class edges ``weight`` = I(X_i; C).

    References
    ----------
    Friedman, N., Geiger, D. & Goldszmidt, M. (1997). Bayesian network classifiers.
    Machine Learning 29, 131-163 (Construct-TAN, Theorem 2).

    Examples
    --------
    >>> from bnma_core.classifiers.tan import TAN
    >>> from bnma_core.data import load_dataset
    >>> from bnma_core.datasets import bundled_path
    >>> ds = load_dataset(bundled_path("wbc.csv"))
    >>> tan = TAN().fit(ds.X, ds.y, arities=ds.arities[ds.feature_indices])
    >>> sorted(tan.structure_.edges)[:2]  # a networkx DiGraph; array input names columns x0..
    [('class', 'x0'), ('class', 'x1')]
    >>> tan.predict_proba(ds.X[:2]).round(3).tolist()
    [[1.0, 0.0], [0.994, 0.006]]
    """

    _parameter_constraints = {**CPT_PRIOR_CONSTRAINTS,
                              "root": [None, str, Interval("int", 0, None)]}

    def __init__(self, *, alpha: float = 1.0, root: Any = None, cpt_prior: Any = None,
                 ess: float = 1.0, prior: Any = DEPRECATED) -> None:
        self.alpha = alpha
        self.root = root
        self.cpt_prior = cpt_prior
        self.ess = ess
        self.prior = prior

    def _root_index(self, p: int) -> int:
        if self.root is None:
            return 0
        if isinstance(self.root, str):
            names = list(getattr(self, "feature_names_", []))
            if self.root not in names:
                raise ValueError(f"root {self.root!r} is not a feature name.")
            return names.index(self.root)
        r = int(self.root)
        if not 0 <= r < p:
            raise ValueError(f"root must be a feature index between 0 and {p - 1} (got {r}).")
        return r

    def _learn_parents(self, X: np.ndarray, y: np.ndarray):
        p = X.shape[1]
        n_classes = len(self.classes_)
        cmi = pairwise_conditional_mutual_information(X, y, self.arities_, n_classes)
        mi = class_mutual_informations(X, y, self.arities_, n_classes)
        root = self._root_index(p)
        g = nx.Graph()
        g.add_nodes_from(range(p))
        g.add_weighted_edges_from((i, j, cmi[i, j]) for i in range(p) for j in range(i + 1, p))
        tree = nx.maximum_spanning_tree(g, weight="weight")
        parents: list[list[int]] = [[] for _ in range(p)]
        weights = {}
        for u, v in nx.bfs_edges(tree, root):
            parents[v] = [u]
            weights[(u, v)] = float(cmi[u, v])
        return parents, weights, mi
