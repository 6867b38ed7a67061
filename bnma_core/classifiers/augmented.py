"""Augmented naive Bayes classifiers: shared fitting and exact inference.

An *augmented naive Bayes* network has the class C as a parent of every feature, plus a set
of feature parents for each feature (none: naive Bayes; a tree: TAN; at most k: KDB). The
subclasses only choose the feature parents (:meth:`AugmentedNaiveBayes._learn_parents`);
everything else lives here once:

* **Parameters.** Posterior-predictive CPTs theta_ijk = (a_ijk + N_ijk) / (a_ij + N_ij)
  (DESIGN §3; Dash & Cooper 2002, eq. 6), computed with :func:`bnma_core.scores.family_counts`
  and :func:`bnma_core.scores.posterior_cpt`. By default one pseudo-count ``alpha`` = a per
  cell, so the class prior is (a + N_c) / (a |C| + N); ``prior="bdeu"`` (with ``ess``) gives
  a_ijk = ess / (r_i q_i) for every node, the class included (q = 1): the EAP parameters that
  Sugahara et al. use for every classifier (``ess=1``); ``prior="k2"`` / ``"laplace"``: 1.
* **Missing values in training.** Counts are taken per family: a training row with a missing
  value is skipped only in the families (child + parents) that involve that value and still
  counts everywhere else. Structure statistics (MI, CMI) likewise use the rows complete in the
  variables concerned.
* **Missing values at prediction.** Marginalized exactly: P(c | x_obs) ∝ sum over the states of
  the missing features of P(c) prod_i theta_i(x_i | c, pa_i). Test rows are grouped by their
  missingness pattern. Missing features without observed descendants are barren (their factors
  sum to one) and are dropped; for naive Bayes that removes the factor of every missing feature.
  The joint states of the remaining missing features are enumerated when there are at most
  :data:`ENUMERATION_LIMIT` of them; otherwise variable elimination over the feature graph
  (greedy smallest-factor order) is used. Both are exact.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import networkx as nx
import numpy as np

from ..kernels.counting import parent_strides
from ..scores import cpt_alpha, family_counts, posterior_cpt
from .base import DiscreteBNClassifier

ENUMERATION_LIMIT = 4096
"""Largest number of joint states of the missing (non-barren) features that is enumerated;
more states use variable elimination."""

_CHUNK_CELLS = 2_000_000  # float64 cells of one intermediate factor block (~16 MB)


def _logsumexp(a: np.ndarray, axis: int | tuple[int, ...]) -> np.ndarray:
    """log sum exp over ``axis`` (entries are finite: every CPT entry is positive)."""
    m = np.max(a, axis=axis, keepdims=True)
    return np.squeeze(m, axis=axis) + np.log(np.sum(np.exp(a - m), axis=axis))


def _positive(value: Any, message: str) -> float:
    """``value`` as a positive finite float, else ValueError(message)."""
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise ValueError(message) from None
    if not (v > 0 and math.isfinite(v)):
        raise ValueError(message)
    return v


def _check_alpha(alpha: Any) -> float:
    return _positive(alpha, f"alpha must be a positive number (got {alpha!r}).")


def resolve_cpt_prior(prior: Any, alpha: Any, ess: Any) -> tuple[str | float, float]:
    """The (prior, ess) pair that :func:`bnma_core.scores.posterior_cpt` takes, from a
    classifier's ``prior`` / ``alpha`` / ``ess`` parameters: ``prior=None`` means the
    pseudo-count ``alpha`` (the historical parameter); a given ``prior`` (a name or a positive
    pseudo-count) replaces ``alpha``, which must then keep its default 1.0."""
    e = _positive(ess, f"ess must be a positive number (got {ess!r}).")
    if prior is None:
        return _check_alpha(alpha), e
    if _check_alpha(alpha) != 1.0:
        raise ValueError(f"Give either prior={prior!r} or alpha={alpha!r}, not both "
                         "(prior=None uses alpha as the pseudo-count).")
    if isinstance(prior, str):
        cpt_alpha(prior, 2, 1, e)  # validates the name
        return ("k2" if prior == "laplace" else prior), e
    return _positive(prior, f"prior must be 'bdeu', 'k2', 'laplace' or a positive "
                            f"pseudo-count (got {prior!r})."), e


class _Factor:
    """log phi(c, x_vars) for a block of rows: ``table`` has shape (n, n_classes, r_v...)
    with the missing variables ``vars`` (sorted feature indices) as trailing axes."""

    __slots__ = ("vars", "table")

    def __init__(self, vars_: tuple[int, ...], table: np.ndarray) -> None:
        self.vars = vars_
        self.table = table


def _joint_size(v: int, factors: Sequence[_Factor], sizes: dict[int, int]) -> int:
    """Number of joint states of the factor created by eliminating ``v``."""
    vs = set().union(*[f.vars for f in factors if v in f.vars])
    return math.prod(sizes[u] for u in vs)


class AugmentedNaiveBayes(DiscreteBNClassifier):
    """Base of NB, TAN and KDB: class parent of every feature plus learned feature parents.

    Subclasses implement ``_learn_parents(X, y)`` returning one list of feature-parent indices
    per feature and a dict ``{(parent, child): weight}`` of edge weights (e.g. CMI).

    Parameters
    ----------
    alpha : float, default 1.0
        Pseudo-count a_ijk of every CPT cell, used when ``prior`` is None.
    prior : {"bdeu", "k2", "laplace"} or float, optional
        Dirichlet prior of the CPTs (:func:`bnma_core.scores.posterior_cpt`). None (the
        default) uses the pseudo-count ``alpha``; ``"bdeu"`` gives a_ijk = ess / (r_i q_i)
        for every node, the class included: ``prior="bdeu", ess=1.0`` are the EAP parameters
        of Sugahara et al. (theta_ijk = (N_ijk + 1/(r_i q_i)) / (N_ij + 1/q_i));
        ``"k2"`` = ``"laplace"`` = pseudo-count 1; a number is the pseudo-count.
    ess : float, default 1.0
        Equivalent sample size of ``prior="bdeu"``.

    Fitted attributes
    -----------------
    feature_parents_ : list of list of int
        Feature parents of each feature (the class is a parent of all and is not listed).
    cpts_ : list of ndarray
        ``cpts_[i]`` has shape (q_i, r_i) in the library's CPT layout (as ``DiscreteBN``) with
        parent list (C, *feature_parents_[i]): rows are parent configurations indexed mixed
        radix with the first parent (the class) varying fastest, i.e. row
        j = c + |C| (x_pa1 + r_pa1 x_pa2 + ...); columns are the states of feature i.
    class_prior_ : ndarray of shape (n_classes,)
        P(C = c) = (a_c + N_c) / (sum_c a_c + N) (a_c = alpha, or ess / |C| for "bdeu").
    structure_ : networkx.DiGraph
        Nodes: the feature names and the class name (``class_name_``; ``"class"`` unless the
        labels are a named Series, made unique if a feature has that name), node attribute
        ``role`` = "class" / "feature". Edges class -> feature (edge ``role`` = "class") and
        feature parent -> feature (``role`` = "parent"); feature edges carry ``weight`` =
        I(X_i; X_j | C) (nats) where the method uses it, class edges ``weight`` = I(X_i; C)
        where computed, else 0.
    feature_names_ : list of str
        ``feature_names_in_`` when fitted on a DataFrame, else ``x0, x1, ...``.
    """

    def __init__(self, alpha: float = 1.0, prior: Any = None, ess: float = 1.0) -> None:
        self.alpha = alpha
        self.prior = prior
        self.ess = ess

    # --- hooks -----------------------------------------------------------------------------
    def _learn_parents(self, X: np.ndarray, y: np.ndarray
                       ) -> tuple[list[list[int]], dict[tuple[int, int], float],
                                  np.ndarray | None]:  # pragma: no cover
        """Return (feature parents, {(parent, child): weight}, I(X_i;C) or None)."""
        raise NotImplementedError

    # --- fitting ---------------------------------------------------------------------------
    def fit(self, X: Any, y: Any, arities: Any = None) -> AugmentedNaiveBayes:
        """Fit on features ``X`` (codes, labels or numbers; see the base class) and labels ``y``.

        Training rows with missing values are used family by family (module docstring).
        """
        return super().fit(X, y, arities)

    def _fit_codes(self, X: np.ndarray, y: np.ndarray) -> None:
        prior, ess = resolve_cpt_prior(getattr(self, "prior", None), self.alpha,
                                       getattr(self, "ess", 1.0))
        p = X.shape[1]
        n_classes = len(self.classes_)
        names, cname = self._variable_names()
        self.feature_names_ = names
        self.class_name_ = cname

        parents, weights, class_mi = self._learn_parents(X, y)
        self.feature_parents_ = [list(map(int, pa)) for pa in parents]

        data = np.column_stack([X, y]).astype(X.dtype)
        ar = np.append(np.asarray(self.arities_, dtype=np.int64), n_classes)
        self.class_prior_ = posterior_cpt(family_counts(data, p, [], ar), prior, ess)[0]
        self.cpts_ = [posterior_cpt(family_counts(data, i, [p] + self.feature_parents_[i], ar),
                                    prior, ess) for i in range(p)]
        self._log_cpts = [np.log(t) for t in self.cpts_]
        self._strides = [parent_strides(np.array([p] + pa, dtype=np.int64), ar)
                         for pa in self.feature_parents_]
        self._log_prior = np.log(self.class_prior_)

        g = nx.DiGraph()
        g.add_node(cname, role="class")
        g.add_nodes_from(names, role="feature")
        for i in range(p):
            w = 0.0 if class_mi is None else float(class_mi[i])
            g.add_edge(cname, names[i], role="class", weight=w)
        for i, pa in enumerate(self.feature_parents_):
            for j in pa:
                g.add_edge(names[j], names[i], role="parent",
                           weight=float(weights.get((j, i), 0.0)))
        self.structure_ = g
        self._children = [[i for i in range(p) if j in self.feature_parents_[i]]
                          for j in range(p)]

    # --- inference -------------------------------------------------------------------------
    def _family_factor(self, i: int, X: np.ndarray, missing: tuple[int, ...]) -> _Factor:
        """log theta_i(x_i | c, pa_i) for rows ``X`` with the ``missing`` variables free."""
        n = X.shape[0]
        n_classes = len(self.classes_)
        fam = [i] + self.feature_parents_[i]
        fvars = tuple(sorted(v for v in set(fam) if v in missing))
        nd = 2 + len(fvars)

        def code(v: int) -> np.ndarray:
            shape = [1] * nd
            if v in fvars:
                shape[2 + fvars.index(v)] = int(self.arities_[v])
                return np.arange(int(self.arities_[v])).reshape(shape)
            shape[0] = n
            return X[:, v].astype(np.int64).reshape(shape)

        cshape = [1] * nd
        cshape[1] = n_classes
        row: np.ndarray = np.arange(n_classes).reshape(cshape)  # class: first parent, stride 1
        strides = self._strides[i]
        for k, v in enumerate(self.feature_parents_[i]):
            row = row + int(strides[k + 1]) * code(v)
        table = self._log_cpts[i][row, code(i)]
        full = (n, n_classes) + tuple(int(self.arities_[v]) for v in fvars)
        return _Factor(fvars, np.broadcast_to(table, full))

    @staticmethod
    def _expand(f: _Factor, allvars: tuple[int, ...], sizes: dict[int, int]) -> np.ndarray:
        shape = f.table.shape[:2] + tuple(sizes[v] if v in f.vars else 1 for v in allvars)
        return f.table.reshape(shape)

    def _product(self, factors: Sequence[_Factor], sizes: dict[int, int]) -> _Factor:
        allvars = tuple(sorted(set().union(*[f.vars for f in factors])))
        total = self._expand(factors[0], allvars, sizes)
        for f in factors[1:]:
            total = total + self._expand(f, allvars, sizes)
        return _Factor(allvars, total)

    def _eliminate(self, factors: list[_Factor], sizes: dict[int, int], enumerate_all: bool
                   ) -> np.ndarray:
        """Sum out every variable of ``factors``; returns (n, n_classes) log values."""
        if enumerate_all:
            prod = self._product(factors, sizes)
            return _logsumexp(prod.table, axis=tuple(range(2, prod.table.ndim)))
        factors = list(factors)
        remaining = set().union(*[f.vars for f in factors])
        while remaining:
            v = min(sorted(remaining), key=lambda u, fs=factors: _joint_size(u, fs, sizes))
            touching = [f for f in factors if v in f.vars]
            factors = [f for f in factors if v not in f.vars]
            prod = self._product(touching, sizes)
            ax = 2 + prod.vars.index(v)
            factors.append(_Factor(tuple(u for u in prod.vars if u != v),
                                   _logsumexp(prod.table, axis=ax)))
            remaining.discard(v)
        out = factors[0].table
        for f in factors[1:]:
            out = out + f.table
        return out

    def _pattern_missing_terms(self, X: np.ndarray, missing: tuple[int, ...]) -> np.ndarray:
        """Sum over the missing features' states of the factors that involve them, for rows
        sharing the missingness pattern ``missing``: (n, n_classes) log values.

        Missing features without an observed descendant are barren (their factors sum to one
        and are skipped); the factors of fully observed families are added by the caller."""
        miss = set(missing)
        removed: set[int] = set()
        changed = True
        while changed:
            changed = False
            for v in miss - removed:
                if all(ch in removed for ch in self._children[v]):
                    removed.add(v)
                    changed = True
        free = tuple(sorted(miss - removed))
        out = np.zeros((X.shape[0], len(self.classes_)))
        if not free:
            return out
        # families touching a free variable (the others are observed or barren)
        fams = [i for i in range(X.shape[1]) if i not in removed
                and (i in miss or any(v in miss for v in self.feature_parents_[i]))]
        sizes = {v: int(self.arities_[v]) for v in free}
        n_states = math.prod(sizes.values())
        enumerate_all = n_states <= ENUMERATION_LIMIT
        block = max(1, _CHUNK_CELLS // (len(self.classes_) * (n_states if enumerate_all
                                                              else 64)))
        for start in range(0, X.shape[0], block):
            Xb = X[start:start + block]
            factors = [self._family_factor(i, Xb, free) for i in fams]
            out[start:start + block] = self._eliminate(factors, sizes, enumerate_all)
        return out

    def _predict_log_proba_codes(self, X: np.ndarray) -> np.ndarray:
        n = X.shape[0]
        out = np.broadcast_to(self._log_prior, (n, len(self.classes_))).copy()
        if n == 0:
            return out
        miss = X < 0
        Xc = np.where(miss, 0, X)
        # factors of fully observed families, all rows at once
        for i in range(X.shape[1]):
            fam = [i] + self.feature_parents_[i]
            observed = ~miss[:, fam].any(axis=1)
            out += np.where(observed[:, None], self._family_factor(i, Xc, ()).table, 0.0)
        incomplete = np.flatnonzero(miss.any(axis=1))
        if len(incomplete) == 0:
            return out
        patterns, inverse = np.unique(miss[incomplete], axis=0, return_inverse=True)
        inverse = np.asarray(inverse).ravel()
        for g, pat in enumerate(patterns):
            rows = incomplete[inverse == g]
            out[rows] += self._pattern_missing_terms(X[rows], tuple(np.flatnonzero(pat).tolist()))
        return out
