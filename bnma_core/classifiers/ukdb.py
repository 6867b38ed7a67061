"""Unrestricted k-dependence Bayesian classifier (UKDB): domain and personalized knowledge.

UKDB (the paper in ``papers/004``; its formulas were lost in extraction, so the construction
follows the reconstruction in DESIGN §5) is the uniform average of two k-dependence networks:

* **UKDB_L** (domain knowledge), learned once from the training data. Attributes are ranked by
  SCMI_i = sum_{j != i} I(X_i; X_j | C). The first k attributes form X_p, the *parents of the
  class* (Markov-blanket view); every other attribute X_i takes C plus at most k parents among
  the attributes ranked before it, those with the highest I(X_i; X_j | C). Classification:
  P(c | x) ∝ P(c | x_p) prod_{i not in p} P(x_i | c, pi_i).
* **UKDB_P** (personalized knowledge), built for each test instance x by the same construction
  with the local measures at x's values: LMI I(x_i; C) and CLMI I(x_i; x_j | C) (see
  :func:`bnma_core.scores.local_mutual_information`,
  :func:`bnma_core.scores.conditional_local_mutual_information`), estimated from the training
  data plus one pseudo instance per class (x labelled c, weighted by the UKDB_L posterior
  P_L(c | x)). Attributes missing in x are left out of the ranking and of the network.
* **UKDB**: P(c | x) = (P_L(c | x) + P_P(c | x)) / 2.

With k = 0, X_p is empty and no attribute has an attribute parent: both networks are the naive
Bayes classifier P(c) prod_i P(x_i | c) with the same Laplace-type estimates (tested).

Missing test values are marginalized exactly in UKDB_L: the fitted network is a
:class:`bnma_core.factors.FactorModel` (P(x_p) written as the chain P(x_p1) P(x_p2 | x_p1) ...
of the one smoothed joint table, P(c | x_p), P(x_i | c, pi_i)) and
:func:`bnma_core.factors.class_log_posterior` sums the missing values out (barren attributes
drop out); UKDB_P never contains them.

:meth:`UKDB.loo_log_proba` gives the training rows' leave-one-out class posteriors from the
fitted counts minus each row's own, equal to refitting without the row (DESIGN §5), for
leave-one-out stacking (Yao et al. 2018). The tables are counted in one pass
(:mod:`bnma_core.kernels.ukdb_counts`); the per-row work of batch prediction and
leave-one-out (local measures, structures, family scores) is one numba pass over the rows
(:mod:`bnma_core.kernels.ukdb_loo`).

References
----------
Paper 004 (UKDB; WBC case study), eq. for MI / CMI (1), (5), LMI / CLMI (14), classification
rule (12), ensemble (last equation of section 3); DESIGN.md §5.
Sahami, M. (1996). Learning limited dependence Bayesian classifiers. KDD (KDB).
"""

from __future__ import annotations

import itertools
import math
import weakref
from dataclasses import dataclass
from typing import Any

import networkx as nx
import numpy as np
import pandas as pd
from sklearn.base import clone

from ..data import CODE_DTYPE
from ..factors import CHUNK_CELLS, MIN_PATTERN_ROWS, FactorModel, class_log_posterior
from ..kernels.counting import config_indices
from ..kernels.information import local_information
from ..kernels.ukdb_counts import (
    k_dependence_structures,
    pair_class_counts,
    state_bitsets,
    subset_class_counts,
)
from ..kernels.ukdb_loo import (
    clmi_arguments,
    domain_loo_structures,
    family_log_scores,
    personalized_structures,
)
from ..scores import (
    conditional_local_mutual_information_counts,
    family_counts,
    local_mutual_information_counts,
    mutual_information,
    pairwise_conditional_mutual_information,
    posterior_cpt,
)
from .augmented import ENUMERATION_LIMIT
from .base import (
    BOOLEAN,
    DEPRECATED,
    Check,
    DiscreteBNClassifier,
    Interval,
    Options,
    training_row_indices,
    validate_parameters,
)

__all__ = ["UKDB", "UKDBExplanation", "KDependenceStructure", "build_k_dependence_structure"]

MODES = ("ensemble", "domain", "personalized")
PSEUDO_WEIGHTS = ("domain", "uniform", "none")
TIE_DECIMALS = 10

POOL_CPT_CELLS = 8192
"""UKDB_L pools rare missingness patterns into one soft-evidence elimination
(:data:`bnma_core.factors.MIN_PATTERN_ROWS`) only while its largest CPT has at most this many
cells; above, every pattern is its own hard-evidence elimination (pooling keeps partly observed
attributes hidden, each with a per-row table of its family: WBC k = 3, 6990 rows, 10 % missing
0.75 s pooled vs 0.22 s per pattern; k = 2 0.066 s vs 0.18 s). Speed only, same result."""

LOO_COMPLETIONS = 1024
""":meth:`UKDB.loo_log_proba` sums the missing values of an incomplete training row whose
leave-one-out UKDB_L structure differs from the full fit's over its completions when they are
at most this many; a row with more is marginalised in a model of its structure (one per
distinct structure), which costs a model build. Speed only, the same values (tested). A
completion costs one pass of the family kernel (~p popcount families): HEPAR II 500 rows with
2 % missing 0.105 CPU s at 64, 0.072 at 1024, 0.079 at 4096."""

COMPLETION_ROWS = 4096
"""Completed rows scored per call in :meth:`UKDB._completion_log_scores` (memory bound)."""

BATCH_CELLS = 2 ** 20
"""UKDB_P predicts rows in batches of at most this many cells per row-family array (rows x
attributes x (k + 2 + classes)): the memory of a batch stays bounded whatever the number of
rows."""

LOG_BATCH_CELLS = 2 ** 16
"""UKDB_P's CLMI arguments are computed for this many cells at a time (rows x attribute pairs x
classes) and their logarithms taken by numpy in one vectorised call (10x faster than one call
per value in a kernel); small enough to stay in cache."""

# UKDB_L's FactorModel per fitted estimator, outside its __dict__ (sklearn's
# check_dict_unchanged: predicting must not add attributes)
_FACTOR_MODELS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def chain_conditionals(joint: np.ndarray, cards: Any) -> list[np.ndarray]:
    """A joint table P(x_1, ..., x_k) as the chain P(x_1) P(x_2 | x_1) ... P(x_k | x_<k).

    Parameters
    ----------
    joint : (q,) array
        Probabilities of the configurations of (x_1, ..., x_k) in mixed radix with x_1
        fastest (:func:`bnma_core.kernels.counting.parent_strides`); q = prod(cards).
    cards : sequence of int
        Cardinalities r_1, ..., r_k.

    Returns
    -------
    list of ndarray
        Entry j has shape (prod(cards[:j]), r_j): P(x_j | x_1, ..., x_{j-1}) = M_j / M_{j-1}
        with M_j the marginal of ``joint`` over the first j variables, rows in the library's
        CPT layout (first parent fastest). The product of the chain equals ``joint`` (up to
        rounding) wherever the conditioning marginal is positive; a zero marginal gives a
        uniform row (any row is then consistent with the joint).
    """
    cards = [int(r) for r in cards]
    k = len(cards)
    t = np.asarray(joint, dtype=np.float64).reshape(cards[::-1])  # axes (x_k, ..., x_1)
    out = []
    prev = np.ones(())
    for j in range(k):
        # marginal over x_1..x_{j+1}: sum out x_k..x_{j+2} (the leading axes)
        mj = t.sum(axis=tuple(range(k - j - 1))) if j < k - 1 else t
        with np.errstate(invalid="ignore", divide="ignore"):
            cond = mj / prev[None]
        cond = np.where(prev[None] > 0, cond, 1.0 / cards[j])
        out.append(np.ascontiguousarray(cond.reshape(cards[j], -1).T))
        prev = mj
    return out


# --------------------------------------------------------------------------------------------
# Structure construction (shared by UKDB_L and UKDB_P)
# --------------------------------------------------------------------------------------------


@dataclass
class KDependenceStructure:
    """One UKDB network over feature indices.

    Attributes
    ----------
    order : list of int
        Attributes ranked by decreasing sum of (local) conditional mutual information.
    class_parents : list of int
        X_p, the first k attributes of ``order``: the parents of the class.
    parents : dict int -> list of int
        Attribute parents (besides C) of every attribute not in X_p, most dependent first.
    sums : ndarray
        SCMI (or SCLMI) of every attribute (NaN for attributes left out).
    """

    order: list[int]
    class_parents: list[int]
    parents: dict[int, list[int]]
    sums: np.ndarray


def build_k_dependence_structure(dependence: np.ndarray, k: int,
                                 candidates: list[int] | None = None,
                                 min_dependence: float | None = None) -> KDependenceStructure:
    """UKDB construction from a symmetric matrix of (local) conditional dependences.

    Parameters
    ----------
    dependence : (p, p) array
        I(X_i; X_j | C) (UKDB_L) or I(x_i; x_j | C) (UKDB_P); the diagonal is ignored.
    k : int
        Size of X_p and maximum number of attribute parents.
    candidates : list of int, optional
        Attributes taking part (default all); others are left out (missing values in UKDB_P).
    min_dependence : float, optional
        If given, an attribute parent must have dependence strictly above this value (so an
        attribute may get fewer than k parents); default: the k highest, whatever their value.

    Returns
    -------
    KDependenceStructure
        Ties in the ranking and in the parent choice (values equal to ``TIE_DECIMALS``
        decimals) are broken by the lower attribute index.

    References
    ----------
    Paper 004, section 3 (SCMI ranking, X_p, at most k parents); DESIGN §5.
    """
    p = dependence.shape[0]
    cand = list(range(p)) if candidates is None else [int(i) for i in candidates]
    sums = np.full(p, np.nan)
    for i in cand:
        sums[i] = sum(dependence[i, j] for j in cand if j != i)
    # rank on values rounded to TIE_DECIMALS so that ties in exact arithmetic stay ties
    # whatever the floating-point summation order, and fall to the lower index
    dependence = np.round(dependence, TIE_DECIMALS)
    key = np.round(sums, TIE_DECIMALS)
    order = sorted(cand, key=lambda i: (-key[i], i))
    class_parents = order[:k]
    parents: dict[int, list[int]] = {}
    for pos in range(len(class_parents), len(order)):
        i = order[pos]
        before = order[:pos]
        if min_dependence is not None:
            before = [j for j in before if dependence[i, j] > min_dependence]
        ranked = sorted(before, key=lambda j: (-dependence[i, j], j))
        parents[i] = ranked[:k]
    return KDependenceStructure(order, class_parents, parents, sums)


# --------------------------------------------------------------------------------------------
# Explanation
# --------------------------------------------------------------------------------------------


@dataclass
class UKDBExplanation:
    """Everything the UKDB page shows for one test instance.

    Attributes
    ----------
    instance : dict
        Feature name -> value label (``None`` if missing).
    domain_graph, personalized_graph : networkx.DiGraph
        Nodes: feature names and the class name (node attribute ``role`` = "class" /
        "feature", as in every classifier's ``structure_``; ``missing`` = bool). Edge
        attribute ``weight``: CMI (domain) resp. CLMI (personalized) for attribute ->
        attribute edges, MI resp. LMI for edges with the class; edge ``role`` =
        "class-parent" (X_p -> C), "class" (C -> X_i), "joint" (inside X_p) or "parent"
        (X_j -> X_i), the last two as in the augmented classifiers.
    posterior_domain, posterior_personalized, posterior_ensemble : ndarray
        Class posteriors aligned with ``classes``.
    classes : list of str
    class_name : str
    differing_pairs : DataFrame
        One row per pair of observed attribute values: feature_a, value_a, feature_b, value_b,
        clmi, cmi, difference (= clmi - cmi), text; sorted by |difference|, largest first.
        ``clmi`` is the value UKDB_P ranks with (training data plus the pseudo instances),
        ``cmi`` the training-data value UKDB_L uses.
    class_parents_domain, class_parents_personalized : list of str
    base : float
        Log base of every information value (2 = bits).
    """

    instance: dict[str, str | None]
    domain_graph: nx.DiGraph
    personalized_graph: nx.DiGraph
    posterior_domain: np.ndarray
    posterior_personalized: np.ndarray
    posterior_ensemble: np.ndarray
    classes: list[str]
    class_name: str
    differing_pairs: pd.DataFrame
    class_parents_domain: list[str]
    class_parents_personalized: list[str]
    base: float

    def summary(self, n_pairs: int = 5) -> str:
        """Plain-text report (used by ``bnma explain``)."""
        unit = "bits" if self.base == 2 else ("nats" if self.base == math.e else
                                               f"log base {self.base:g}")
        lines = ["Instance: " + ", ".join(f"{k} = {'?' if v is None else v}"
                                          for k, v in self.instance.items())]
        for label, post in (("domain (UKDB_L)", self.posterior_domain),
                            ("personalized (UKDB_P)", self.posterior_personalized),
                            ("ensemble (UKDB)", self.posterior_ensemble)):
            lines.append(f"P({self.class_name} | x), {label}: " + ", ".join(
                f"{c} {p:.3f}" for c, p in zip(self.classes, post)))
        for label, g, cp in (("Domain", self.domain_graph, self.class_parents_domain),
                             ("Personalized", self.personalized_graph,
                              self.class_parents_personalized)):
            lines.append(f"{label} network: parents of {self.class_name}: "
                         f"{', '.join(cp) if cp else '(none)'}")
            for a, b, d in g.edges(data=True):
                if d["role"] == "parent":
                    lines.append(f"  {a} -> {b}  ({d['weight']:.4f} {unit})")
        lines.append(f"Attribute-value pairs whose local dependence differs most from the "
                     f"overall one ({unit}):")
        lines += ["  " + t for t in self.differing_pairs["text"].head(n_pairs)]
        return "\n".join(lines)


# --------------------------------------------------------------------------------------------
# Classifier
# --------------------------------------------------------------------------------------------




class UKDB(DiscreteBNClassifier):
    """Unrestricted k-dependence Bayesian classifier (domain, personalized or both).

    Parameters
    ----------
    k : int, default 2
        Dependence order: number of class parents X_p and maximum number of attribute parents
        per attribute. k = 0 gives naive Bayes.
    k_grid : sequence of int, optional
        Candidates for ``k`` chosen on the training rows (DESIGN §10, "a setting chosen on the
        training rows"): by a stratified ``inner_folds``-fold cross-validation on the training
        rows only (highest accuracy; ties to the smaller k; the smallest k when a class has a
        single training row); the choice is ``k_``, the inner accuracies ``k_scores_``, and
        ``k`` is not used. None (default): ``k`` as given.
    mode : {"ensemble", "domain", "personalized"}, default "ensemble"
        "domain" = UKDB_L, "personalized" = UKDB_P, "ensemble" = their uniform average.
    alpha : float, default 1.0
        Dirichlet pseudo-count of every CPT cell: P(x_i | c, pi) = (N + alpha) /
        (N_pi,c + r_i alpha); the same for P(c | x_p) (alpha = 1: Laplace correction, which
        the paper names as the remedy for poorly estimated probabilities).
    base : float, default 2.0
        Log base of MI / CMI / LMI / CLMI. Rankings do not depend on it; 2 (bits) is the unit of
        the paper's WBC value 0.4733 (DESIGN §5's default e would report 0.3288 nats).
    mi_smoothing : float, default 1.0
        Pseudo-count added to every cell of the joint tables the information measures are
        computed from: by default the same Laplace prior as the parameters (``alpha`` = 1), so
        a rare value pair is not dominated by the pseudo instance in UKDB_P's CLMI (what it
        changes in accuracy: docs/accuracy.md §1). 0 = maximum likelihood, which reproduces
        the paper's WBC value 0.4733 best (``experiments/ukdb_wbc.py``).
    pseudo_weights : {"domain", "uniform", "none"}, default "domain"
        Weight of the pseudo instance "x labelled c" in UKDB_P: the UKDB_L posterior
        P_L(c | x) (DESIGN §5), 1/m, or no pseudo instances.
    pseudo_in_parameters : bool, default False
        Whether UKDB_P's CPT entries also count the pseudo instances (the paper adds them to
        estimate the dependence measures; by default the parameters use training data only).
    min_dependence : float or None, default None
        If a number, attribute parents need (local) CMI strictly above it, so an attribute may
        get fewer than k parents; None keeps the k highest whatever their sign.
    inner_folds : int, default 5
        Inner folds of the choice of ``k`` from ``k_grid`` (fewer when a class has fewer
        training rows; at least 2).
    max_table_cells : int, default 2**20
        Budget (float cells) for the count tables n(x_S, c) over every attribute subset S of
        size <= k + 1 that UKDB_P's per-row path (:meth:`explain`,
        :meth:`personalized_structure`) reads, all built together when the first is read
        (a fit that never explains a row, e.g. inside ``stack``, builds none); if all tables
        together would exceed it, each table is built on its first use and kept. The default
        builds WBC's 130 tables (k = 2) together and HEPAR II's (69 attributes: 54,810
        subsets) one by one. Batch prediction and :meth:`loo_log_proba` count from the value
        bit sets instead (:func:`bnma_core.kernels.ukdb_counts.state_bitsets`; the same
        integers) and build no table.
    cv_folds : deprecated
        Former name of ``inner_folds``; a sequence given as ``k`` is taken as ``k_grid``
        (both accepted with a FutureWarning until the next release).

    Attributes
    ----------
    mi_ : (p,) array, I(X_i; C).
    cmi_ : (p, p) array, I(X_i; X_j | C).
    domain_structure_ : KDependenceStructure
    structure_ : networkx.DiGraph, the UKDB_L network (edge weights CMI / MI).

    References
    ----------
    Paper 004 (UKDB), section 3 and Algorithms 1-2; DESIGN.md §5.
    """

    #: training rows with missing values are used family by family (available cases)
    handles_missing_in_fit = True

    _parameter_constraints = {
        "k": [Interval("int", 0, None)],
        "k_grid": [None, Check(lambda v: not isinstance(v, str) and len(v) > 0 and all(
            Interval("int", 0, None)(k) for k in v), "a non-empty sequence of integers >= 0")],
        "mode": [Options(*MODES)],
        "alpha": [Interval("real", 0, None, "neither")],
        "base": [Check(lambda b: Interval("real", 0, None, "neither")(b) and b != 1,
                       "a positive number other than 1 (the log base)")],
        "mi_smoothing": [Interval("real", 0, None)],
        "pseudo_weights": [Options(*PSEUDO_WEIGHTS)],
        "pseudo_in_parameters": [BOOLEAN],
        "min_dependence": [None, Interval("real")],
        "max_table_cells": [Interval("real", 0, None)],
        "inner_folds": [Interval("int", 2, None)],
    }
    _renamed_parameters = {"cv_folds": "inner_folds"}

    def __init__(self, *, k: int = 2, mode: str = "ensemble", alpha: float = 1.0,
                 base: float = 2.0, mi_smoothing: float = 1.0, pseudo_weights: str = "domain",
                 pseudo_in_parameters: bool = False, min_dependence: float | None = None,
                 max_table_cells: int = 2 ** 20, inner_folds: int = 5,
                 k_grid: Any = None, cv_folds: Any = DEPRECATED) -> None:
        self.k = k
        self.k_grid = k_grid
        self.mode = mode
        self.alpha = alpha
        self.base = base
        self.mi_smoothing = mi_smoothing
        self.pseudo_weights = pseudo_weights
        self.pseudo_in_parameters = pseudo_in_parameters
        self.min_dependence = min_dependence
        self.max_table_cells = max_table_cells
        self.inner_folds = inner_folds
        self.cv_folds = cv_folds

    # --- parameter checks ----------------------------------------------------------------------
    def _validate_parameters(self) -> dict[str, Any]:
        """The parameter table's check; a sequence given as ``k`` (its former meaning) is
        taken as ``k_grid`` with a FutureWarning."""
        if isinstance(self.k, list | tuple | np.ndarray) and self.k_grid is None:
            import warnings

            from .base import caller_level

            warnings.warn(f"UKDB: a sequence as k (k={self.k!r}) now goes in k_grid; k is "
                          f"the dependence order only. Use k_grid={tuple(self.k)!r}.",
                          FutureWarning, stacklevel=caller_level())
            check = type(self)._parameter_constraints["k_grid"][1]
            if not check(self.k):
                raise ValueError(f"k must be an integer >= 0 (got {self.k!r}).")
            self._params = validate_parameters(
                self, {**self.get_params(deep=False), "k": int(self.k[0]), "k_grid": self.k})
            return self._params
        return super()._validate_parameters()

    def _k_candidates(self) -> list:
        grid = self._param("k_grid")
        return [self.k] if grid is None else list(grid)

    def _choose_k(self, X: np.ndarray, y: np.ndarray) -> int:
        """k_ from the candidates by inner stratified CV on the training rows, so that the
        outer test rows never inform the choice (docs/accuracy.md §2)."""
        ks = sorted({int(k) for k in self._k_candidates()})
        self.k_scores_ = {}
        if len(ks) == 1:
            return ks[0]
        from sklearn.model_selection import StratifiedKFold

        n_splits = int(min(self._param("inner_folds"), max(2, np.bincount(y).min())))
        if np.bincount(y).min() < 2:
            return ks[0]
        splits = list(StratifiedKFold(n_splits=n_splits, shuffle=True, random_state=0)
                      .split(X, y))
        for k in ks:
            hits = 0
            for tr, te in splits:
                inner = clone(self).set_params(k=k, k_grid=None, cv_folds=DEPRECATED).fit(
                    X[tr], y[tr], arities=self.arities_)
                hits += int(np.sum(inner.predict(X[te]) == y[te]))
            self.k_scores_[k] = hits / len(y)
        return max(ks, key=lambda k: (self.k_scores_[k], -k))

    def fit(self, X: Any, y: Any, arities: Any = None) -> UKDB:
        """Fit UKDB_L and keep the statistics UKDB_P needs (see
        :meth:`DiscreteBNClassifier.fit`). The class node is named after ``y.name`` if ``y``
        is a pandas Series, else "class"."""
        return super().fit(X, y, arities)

    # --- training ------------------------------------------------------------------------------
    def _fit_codes(self, X: np.ndarray, y: np.ndarray) -> None:
        self.k_ = self._choose_k(X, y)
        self.class_name_ = self._variable_names()[1]
        p = X.shape[1]
        m = len(self.classes_)
        self.n_classes_ = m
        self._data = np.ascontiguousarray(np.column_stack([X, y]), dtype=CODE_DTYPE)
        self._ar = np.append(np.asarray(self.arities_, dtype=np.int64), m)
        self._fit_local_tables(p, m)
        self._bitsets = state_bitsets(self._data, self._ar)
        self.mi_ = self._class_mutual_informations()
        self.cmi_ = pairwise_conditional_mutual_information(X, y, self.arities_, m, None,
                                                            self.mi_smoothing, self.base)
        st = self._learn_domain_structure()
        self.domain_structure_ = st
        # UKDB_L parameters: P(c | x_p) as a (q_p, m) CPT (X_p in class_parents order, first
        # fastest) and the joint P(x_p) (q_p,) from the same smoothed counts (it only matters
        # when an X_p value is missing and has to be summed out)
        (self._class_counts, self._pxp, self._class_cpt, self._family_counts,
         self._cpts) = self._domain_tables(st)
        # UKDB_P's pseudo-counts per attribute, padded to the largest arity with zeros
        r_max = int(max(self.arities_.max(), 1))
        self._pad_alpha = np.where(np.arange(r_max)[None, :] < self.arities_[:, None],
                                   float(self.alpha), 0.0)
        self._subset_tables: dict[tuple[int, ...], tuple[np.ndarray, np.ndarray]] = {}
        self._all_subset_tables_tried = False
        self.structure_ = self._graph(st, self.mi_, self.cmi_, set())

    def _domain_tables(self, st: KDependenceStructure) -> tuple:
        """UKDB_L's counts and parameters for the structure ``st`` from the training rows:
        n(x_p, c) (q_p, m), P(x_p) (q_p,), P(c | x_p) (q_p, m) (X_p in class_parents order,
        first fastest; P(x_p) from the same smoothed counts: it only matters when an X_p value
        is missing and has to be summed out), and per attribute its counts and CPT
        P(x_i | c, pi_i) in the library's layout (parents (C, *pa), class fastest)."""
        c = self._data.shape[1] - 1
        cc = family_counts(self._data, c, np.asarray(st.class_parents, dtype=np.int64),
                           self._ar)
        pxp = posterior_cpt(cc.sum(axis=1)[None, :], self.alpha)[0]
        counts: dict[int, np.ndarray] = {}
        cpts: dict[int, np.ndarray] = {}
        for i, pa in st.parents.items():
            counts[i] = family_counts(self._data, i, np.asarray([c, *pa], dtype=np.int64),
                                      self._ar)
            cpts[i] = posterior_cpt(counts[i], self.alpha)
        return cc, pxp, posterior_cpt(cc, self.alpha), counts, cpts

    def _learn_domain_structure(self) -> KDependenceStructure:
        """UKDB_L's structure from the fitted CMI (a method, so that a test can force the
        structure of another fit: the oracle of :meth:`loo_log_proba`)."""
        return build_k_dependence_structure(self.cmi_, self.k_,
                                            min_dependence=self.min_dependence)

    def _precompute_subset_tables(self, p: int, m: int) -> None:
        """Build n(x_S, c) for every attribute subset S with |S| <= k + 1 (the families UKDB_P
        can use: X_p with C, and an attribute with its at most k parents) if they fit in
        ``max_table_cells``; else they are built one by one on use (:meth:`_subset_table`)."""
        self._all_subset_tables_tried = True
        size = min(self.k_ + 1, p)
        rmax = float(max(int(self.arities_.max()), 1))
        bound = sum(math.comb(p, s) * rmax ** s for s in range(size + 1)) * m
        if bound > self.max_table_cells:
            return
        self._add_subset_tables([subset for s_ in range(size + 1)
                                 for subset in itertools.combinations(range(p), s_)])

    def _add_subset_tables(self, subsets: list[tuple[int, ...]]) -> None:
        """Count the tables n(x_S, c) of the sorted attribute subsets ``subsets`` not built yet,
        all in one pass (:func:`bnma_core.kernels.ukdb_counts.subset_class_counts`), and keep
        them (:meth:`_subset_table`)."""
        new = [s for s in dict.fromkeys(subsets) if s not in self._subset_tables]
        if not new:
            return
        width = max(1, max(len(s) for s in new))
        members = np.zeros((len(new), width), dtype=np.int64)
        sizes = np.asarray([len(s) for s in new], dtype=np.int64)
        for t, s in enumerate(new):
            members[t, :len(s)] = s
        flat, offs, strides = subset_class_counts(self._data, members, sizes, self._ar)
        m = self.n_classes_
        for t, s in enumerate(new):
            table = flat[offs[t]:offs[t + 1]].reshape(-1, m)
            self._subset_tables[s] = (table, strides[t, :len(s)])

    def _subset_table(self, subset: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray]:
        """(q_S, m) training counts n(x_S, c) of a sorted attribute subset S (rows missing a
        member skipped; configuration index with the first member fastest) and its strides."""
        hit = self._subset_tables.get(subset)
        if hit is None and not getattr(self, "_all_subset_tables_tried", True):
            self._precompute_subset_tables(len(self.arities_), self.n_classes_)
            hit = self._subset_tables.get(subset)
        if hit is None:
            self._add_subset_tables([subset])
            hit = self._subset_tables[subset]
        return hit

    def _fit_local_tables(self, p: int, m: int) -> None:
        """Training counts behind LMI / CLMI, laid out so that the local measures of every
        attribute pair at one instance's values are a few vectorized lookups:
        ``_pair_flat`` holds each (x_i, x_j, c) table of a pair i < j at ``_pair_off[i, j]``;
        row / column / class sums per pair and the (x_i, c) tables are padded arrays, all
        counted in one pass (:func:`bnma_core.kernels.ukdb_counts.pair_class_counts`)."""
        (self._single, self._pair_flat, self._pair_off, self._pair_rows, self._pair_cols,
         self._pair_class) = pair_class_counts(self._data, np.asarray(self.arities_,
                                                                      dtype=np.int64), m)

    def _class_mutual_informations(self) -> np.ndarray:
        """I(X_i; C) of every attribute from the tables n(x_i, c) of :meth:`_fit_local_tables`
        (:func:`bnma_core.scores.mutual_information` on the smoothed joint, as
        :func:`bnma_core.scores.class_mutual_informations`; the same numbers, tested)."""
        sm = float(self.mi_smoothing)
        out = np.empty(len(self.arities_))
        for i, r in enumerate(self.arities_):
            t = self._single[i, :int(r)] + sm
            out[i] = mutual_information(t / t.sum(), self.base)
        return out

    # --- UKDB_L prediction -----------------------------------------------------------------
    def _factor_model(self) -> FactorModel:
        """The fitted UKDB_L network as a :class:`~bnma_core.factors.FactorModel`.

        Variables 0..p-1 are the attributes, p the class. X_p = (x_p1, ..., x_pk)
        (``domain_structure_.class_parents``) carry the chain P(x_p1) P(x_p2 | x_p1) ... of
        the one smoothed joint P(x_p) (:func:`chain_conditionals`), the class P(c | x_p), every
        other attribute P(x_i | c, pi_i) with parents (C, *pi_i). Cached outside the estimator
        (predicting leaves ``__dict__`` unchanged) until the next fit.

        References
        ----------
        Paper 004, classification rule (12); DESIGN §5.
        """
        cached = _FACTOR_MODELS.get(self)
        if cached is not None and cached[0] is self._cpts:
            return cached[1]
        model = self._build_factor_model(self.domain_structure_, self._pxp, self._class_cpt,
                                         self._cpts)
        _FACTOR_MODELS[self] = (self._cpts, model)
        return model

    def _build_factor_model(self, st: KDependenceStructure, pxp: np.ndarray,
                            class_cpt: np.ndarray, attr_cpts: dict) -> FactorModel:
        """:meth:`_factor_model` of the structure ``st`` with these parameters."""
        p = len(self.arities_)
        cards = self._ar
        parents: list[list[int]] = [[] for _ in range(p + 1)]
        cpts: list[Any] = [None] * (p + 1)
        chain = chain_conditionals(pxp, cards[st.class_parents])
        for j, v in enumerate(st.class_parents):
            parents[v] = list(st.class_parents[:j])
            cpts[v] = chain[j]
        parents[p] = list(st.class_parents)
        cpts[p] = class_cpt
        for i, pa in st.parents.items():
            parents[i] = [p, *pa]
            cpts[i] = attr_cpts[i]
        return FactorModel(cards, parents, cpts)

    def _domain_log_scores(self, X: np.ndarray, model: FactorModel | None = None
                           ) -> np.ndarray:
        """log P_L(c, x_obs) up to a per-row constant, shape (n, m): missing attributes (-1)
        marginalised exactly by :func:`bnma_core.factors.class_log_posterior` (``model``:
        another structure's, default the fitted one)."""
        p = X.shape[1]
        codes = np.column_stack([X, np.zeros(len(X), dtype=X.dtype)])
        model = self._factor_model() if model is None else model
        largest = max(c.size for c in model.cpts)
        return class_log_posterior(model, p, codes, validate=False,
                                   enumeration_limit=ENUMERATION_LIMIT, chunk_cells=CHUNK_CELLS,
                                   min_pattern_rows=(MIN_PATTERN_ROWS
                                                     if largest <= POOL_CPT_CELLS else 1))

    # --- UKDB_P -----------------------------------------------------------------------------
    def _pseudo(self, domain_post: np.ndarray) -> np.ndarray:
        """Weights of the pseudo instances "x labelled c" of ``pseudo_weights`` for UKDB_L
        posteriors ``domain_post`` (m,) or (n, m) (one row per instance)."""
        post = np.asarray(domain_post, dtype=float)
        if self.pseudo_weights == "domain":
            return post
        if self.pseudo_weights == "uniform":
            return np.full(post.shape, 1.0 / self.n_classes_)
        return np.zeros(post.shape)

    def local_information(self, x: np.ndarray, pseudo: np.ndarray | None = None
                          ) -> tuple[np.ndarray, np.ndarray]:
        """LMI I(x_i; C) and CLMI I(x_i; x_j | C) at the values of one instance.

        Parameters
        ----------
        x : (p,) int array of codes (-1 = missing)
        pseudo : (m,) array, optional
            Weight of the pseudo instance "x labelled c" added to the training counts
            (default none).

        Returns
        -------
        lmi : (p,) array (NaN where x_i is missing)
        clmi : (p, p) symmetric array (NaN where a value is missing; zero diagonal)

        Notes
        -----
        Gathers, for all attributes and attribute pairs at once, the counts at x's values from
        tables kept at fit time, and evaluates them with the formulas' one home,
        :func:`bnma_core.scores.local_mutual_information_counts` and
        :func:`bnma_core.scores.conditional_local_mutual_information_counts` (vectorised over
        the batch). Equal to :func:`bnma_core.scores.local_mutual_information` and
        :func:`bnma_core.scores.conditional_local_mutual_information` on
        :func:`bnma_core.scores.joint_distribution` of the training rows plus the weighted
        pseudo rows (tested to 1e-12).

        References
        ----------
        Paper 004 eq. (14); DESIGN §5.
        """
        x = np.asarray(x, dtype=np.int64)
        p, m = len(x), self.n_classes_
        w = np.zeros(m) if pseudo is None else np.asarray(pseudo, dtype=float)
        sm = float(self.mi_smoothing)
        ar = np.asarray(self.arities_, dtype=np.int64)
        obs = np.flatnonzero(x >= 0)
        lmi = np.full(p, np.nan)
        clmi = np.full((p, p), np.nan)
        clmi[obs, obs] = 0.0
        # LMI (paper eq. 14): sum_c P(c|x_i) log [P(x_i, c) / (P(x_i) P(c))]
        t = self._single[obs] + sm                       # (n_obs, rmax, m)
        valid = np.arange(t.shape[1])[None, :] < ar[obs][:, None]
        t = np.where(valid[:, :, None], t, 0.0)
        t[np.arange(len(obs)), x[obs]] += w
        lmi[obs] = local_mutual_information_counts(t[np.arange(len(obs)), x[obs]],
                                                   t.sum(axis=1), self.base)
        # CLMI (paper eq. 14): sum_c P(c|x_i,x_j) log [P(x_i,x_j|c) / (P(x_i|c) P(x_j|c))]
        iu, ju = np.triu_indices(len(obs), 1)
        I, J = obs[iu], obs[ju]
        if len(I):
            a, b = x[I], x[J]
            cells = (self._pair_off[I, J] + (a * ar[J] + b) * m)[:, None] + np.arange(m)
            n_xy = self._pair_flat[cells] + sm + w                          # (pairs, m)
            n_xc = self._pair_rows[I, J, a] + ar[J][:, None] * sm + w
            n_yc = self._pair_cols[I, J, b] + ar[I][:, None] * sm + w
            n_c = self._pair_class[I, J] + (ar[I] * ar[J])[:, None] * sm + w
            vals = conditional_local_mutual_information_counts(n_xy, n_xc, n_yc, n_c, self.base)
            clmi[I, J] = clmi[J, I] = vals
        return lmi, clmi

    def personalized_structure(self, x: np.ndarray, pseudo: np.ndarray
                               ) -> tuple[KDependenceStructure, np.ndarray, np.ndarray]:
        """UKDB_P network for one instance (codes ``x``) with pseudo weights ``pseudo``;
        returns (structure, lmi, clmi)."""
        lmi, clmi = self.local_information(x, pseudo)
        obs = [int(i) for i in np.flatnonzero(np.asarray(x) >= 0)]
        st = build_k_dependence_structure(np.nan_to_num(clmi), self.k_, candidates=obs,
                                          min_dependence=self.min_dependence)
        return st, lmi, clmi

    def _personalized_log_scores(self, x: np.ndarray, st: KDependenceStructure,
                                 pseudo: np.ndarray) -> np.ndarray:
        """log P(c | x_p) + sum_i log P(x_i | c, pi_i) at the instance's values.

        The CPT rows needed are read from the count tables n(x_S, c) built at fit
        (:meth:`_subset_table`), so the cost does not depend on the number of training rows;
        equal to counting the matching training rows directly (tested to 1e-12)."""
        m = self.n_classes_
        extra = pseudo if self.pseudo_in_parameters else np.zeros(m)
        cp = tuple(sorted(st.class_parents))
        table, strides = self._subset_table(cp)
        j = int(x[list(cp)].astype(np.int64) @ strides) if cp else 0
        n_c = table[j] + extra
        out = np.log(posterior_cpt(n_c[None, :], self.alpha)[0])
        attrs = list(st.parents)
        if not attrs:
            return out
        # for every attribute, the CPT rows (one per class) at the instance's parent values:
        # an (m, r_i) count table, padded to r_max (zero pseudo-count on padded states) and
        # evaluated in one posterior_cpt call
        r_max = self._pad_alpha.shape[1]
        k = len(attrs)
        counts = np.zeros((k, m, r_max))
        for t, i in enumerate(attrs):
            subset = tuple(sorted([i, *st.parents[i]]))
            table, strides = self._subset_table(subset)
            pos = subset.index(i)
            base = sum(int(x[v]) * int(strides[a]) for a, v in enumerate(subset) if a != pos)
            r_i = int(self.arities_[i])
            counts[t, :, :r_i] = table[base + np.arange(r_i) * strides[pos]].T
        rows, xs = np.arange(k), x[attrs]
        counts[rows, :, xs] += extra
        theta = posterior_cpt(counts, self._pad_alpha[attrs][:, None, :])
        return out + np.log(theta[rows, :, xs]).sum(axis=0)

    # --- prediction -------------------------------------------------------------------------
    def _posteriors(self, X: np.ndarray, drop: np.ndarray | None = None,
                    domain_structure: str = "refit", rows: np.ndarray | None = None
                    ) -> tuple[np.ndarray, np.ndarray | None]:
        """Normalised domain posteriors and (unless mode == "domain") personalized ones.

        ``drop`` (n, m), only with ``X`` the training rows: each row's own one-hot class
        counts, removed from every table at the row's values (:meth:`loo_log_proba`, with its
        ``domain_structure``), for the training rows ``rows`` (default all)."""
        if drop is None:
            ld = self._domain_log_scores(X)
        else:
            ld = self._domain_loo_log_scores(domain_structure, rows)
            if rows is not None:
                ld, X, drop = ld[rows], X[rows], drop[rows]
        pd_ = np.exp(ld - np.logaddexp.reduce(ld, axis=1, keepdims=True))
        if self.mode == "domain":
            return pd_, None
        W = self._pseudo(pd_)
        pp = np.empty_like(pd_)
        size = max(1, BATCH_CELLS // max(1, self._family_cells()))
        for a in range(0, X.shape[0], size):
            lp = self._personalized_log_scores_batch(
                X[a:a + size], W[a:a + size], None if drop is None else drop[a:a + size])
            pp[a:a + size] = np.exp(lp - np.logaddexp.reduce(lp, axis=1, keepdims=True))
        return pd_, pp

    def _domain_loo_log_scores(self, domain_structure: str, rows: np.ndarray | None = None
                               ) -> np.ndarray:
        """(n, m) log P_L(c, x_i) up to a per-row constant under UKDB_L fitted without row i,
        for every training row i (with ``rows``, only those rows' entries are computed): with
        the full fit's structure (``"full"``), or with the
        structure D_{-i} gives (``"refit"``: the CMI matrix downdated per row and the
        construction of :func:`build_k_dependence_structure`, in one kernel pass,
        :func:`bnma_core.kernels.ukdb_loo.domain_loo_structures`). Complete rows that keep
        the full fit's structure take the fitted model plus :meth:`_domain_loo_corrections`
        (its factors re-estimated without the row); complete rows with another structure read
        their factors from the counts minus the row (:meth:`_family_log_scores`; P(x_p) is
        constant in c); incomplete rows are summed over their completions
        (:meth:`_completion_log_scores`) when they have few, else take the fitted model plus
        the corrections (full structure) or are marginalised in a model of their structure,
        one per distinct structure."""
        data = self._data
        n, p = data.shape[0], data.shape[1] - 1
        m = self.n_classes_
        X = data[:, :p]
        if domain_structure == "full" or n == 0:
            return self._domain_log_scores(X) + self._domain_loo_corrections()
        k = int(self.k_)
        st = self.domain_structure_
        full_par = np.full((p, k), -1, dtype=np.int64)
        for i, pa in st.parents.items():
            full_par[i, :len(pa)] = pa
        ncp = min(k, p)
        full_cp = np.asarray(st.order[:ncp], dtype=np.int64)
        y = data[:, p].astype(np.int64)
        k_, md, use_min, scale = self._structure_settings()
        wanted = np.ones(n, dtype=bool)
        if rows is not None:
            wanted[:] = False
            wanted[rows] = True
        # row i's structure depends on row i only: computed for the wanted rows (the others'
        # entries are never read)
        sel = np.flatnonzero(wanted)
        order = np.full((n, p), -1, dtype=np.int64)
        n_obs = np.zeros(n, dtype=np.int64)
        parents = np.full((n, p, k), -1, dtype=np.int64)
        order[sel], n_obs[sel], parents[sel] = domain_loo_structures(
            np.ascontiguousarray(data[sel]), self.cmi_, *self._pair_tables(),
            float(self.mi_smoothing), math.log(self.base), k_, md, use_min, scale)
        other = ~((order[:, :ncp] == full_cp).all(axis=1)
                  & (parents == full_par).all(axis=(1, 2))) & wanted
        complete = (X >= 0).all(axis=1)
        ld = np.zeros((n, m))
        # complete rows with another structure: every factor read from the subset tables
        # minus the row (P(x_p) is constant in c); the rows that keep the full fit's
        # structure (most: 5,398 of mushroom's 5,644 complete rows) read the fitted tables
        # below, a quarter of the cost
        todo = np.flatnonzero(complete & wanted & other)
        size = max(1, BATCH_CELLS // max(1, self._family_cells()))
        for a in range(0, len(todo), size):
            r = todo[a:a + size]
            ld[r] = self._family_log_scores(X[r], order[r], n_obs[r], parents[r],
                                            np.zeros((len(r), m)), np.eye(m)[y[r]])
        kept = list(np.flatnonzero(~other & wanted & complete))
        groups: dict[tuple, list[int]] = {}
        # incomplete rows: summed over their completions when few (a bit-set count per
        # completion: vote's leave-one-out pass 9.8 -> 6.4 ms against eliminating in the
        # fitted model), else the fitted model (full structure) or one of their structure
        inc = np.flatnonzero(~complete & wanted)
        if len(inc):
            done = self._completion_log_scores(inc, order[inc], parents[inc], ld)
            for t in inc[~done]:
                if not other[t]:
                    kept.append(int(t))
                    continue
                key = (tuple(order[t, :ncp].tolist()), parents[t].tobytes())
                groups.setdefault(key, []).append(int(t))
        kept = np.sort(np.asarray(kept, dtype=np.int64))
        if len(kept):
            ld[kept] = (self._domain_log_scores(X[kept])
                        + self._domain_loo_corrections(kept))
        for (cp, par), members in groups.items():
            r = np.asarray(members)
            ld[r] = self._structure_loo_log_scores(
                list(cp), np.frombuffer(par, dtype=np.int64).reshape(p, k), r)
        return ld

    def _structure_loo_log_scores(self, cp: list[int], pa: np.ndarray, rows: np.ndarray
                                  ) -> np.ndarray:
        """UKDB_L's leave-one-out log P(c, x_i) of the training rows ``rows`` that share the
        structure of class parents ``cp`` and attribute parents ``pa`` (p, k; -1 padded):
        marginalised in a model of that structure, plus the factors re-estimated without each
        row (:meth:`_domain_loo_log_scores`)."""
        p = pa.shape[0]
        st_g = KDependenceStructure(
            order=cp, class_parents=cp,
            parents={i: [int(v) for v in pa[i] if v >= 0] for i in range(p) if i not in cp},
            sums=np.full(p, np.nan))
        tables = self._domain_tables(st_g)
        model = self._build_factor_model(st_g, tables[1], tables[2], tables[4])
        return (self._domain_log_scores(self._data[rows, :p], model)
                + self._domain_loo_corrections(rows, st_g, tables))

    def _completion_log_scores(self, rows: np.ndarray, order: np.ndarray, parents: np.ndarray,
                               out: np.ndarray) -> np.ndarray:
        """UKDB_L's leave-one-out log P(c, x_obs) of incomplete training rows ``rows``, each in
        its own structure (``order`` / ``parents`` as :meth:`_personalized_structures_batch`),
        by summing the missing values out explicitly: every completion of the row is scored
        from the counts (:meth:`_family_log_scores`; the row's count removed only from
        the families it was counted in), and the completions are added up (log-sum-exp).
        Written into ``out`` for the rows with at most :data:`LOO_COMPLETIONS` completions;
        returns which rows those were (the others need a model of their structure)."""
        p = self._data.shape[1] - 1
        m = self.n_classes_
        X = self._data[rows, :p].astype(np.int64)
        y = self._data[rows, p].astype(np.int64)
        mis = X < 0
        card = np.where(mis, np.asarray(self.arities_, dtype=np.int64)[None, :], 1)
        combos = card.prod(axis=1)
        done = combos <= LOO_COMPLETIONS
        # stride of each missing attribute in the row's mixed-radix completion index
        stride = np.cumprod(np.concatenate([np.ones((len(X), 1), dtype=np.int64),
                                            card[:, :-1]], axis=1), axis=1)
        todo = np.flatnonzero(done)
        # chunks of rows with at most COMPLETION_ROWS completions together (or one row)
        ends = np.cumsum(combos[todo])
        cuts = np.flatnonzero(np.diff(ends // COMPLETION_ROWS, prepend=0)) if len(todo) else []
        for t in np.split(todo, cuts):
            if not len(t):
                continue
            reps = np.repeat(t, combos[t])
            starts = np.concatenate([[0], np.cumsum(combos[t])[:-1]])
            j = np.arange(len(reps)) - np.repeat(starts, combos[t])
            Xe = np.where(mis[reps], (j[:, None] // stride[reps]) % card[reps], X[reps])
            scores = self._family_log_scores(
                Xe, order[reps], np.full(len(reps), p), parents[reps], np.zeros((len(reps), m)),
                np.eye(m)[y[reps]], counted=~mis[reps])
            out[rows[t]] = np.logaddexp.reduceat(scores, starts, axis=0)
        return done

    def _domain_loo_corrections(self, rows: np.ndarray | None = None,
                                st: KDependenceStructure | None = None,
                                tables: tuple | None = None) -> np.ndarray:
        """(n, m) log P_L^{-i}(c, x_i) - log P_L(c, x_i) of the training rows ``rows``
        (default all): UKDB_L's factors that row i was counted in (it has all the factor's
        variables) re-estimated from the counts minus row i
        (:func:`bnma_core.scores.posterior_cpt`), at the row's values. The factors with a
        missing variable did not count row i (available cases) and are marginalised as
        before; P(x_p) does not depend on c when x_p is observed. ``st`` / ``tables``
        (:meth:`_domain_tables`): another structure's, default the fitted one."""
        data = self._data if rows is None else self._data[rows]
        n, c = data.shape[0], data.shape[1] - 1
        m = self.n_classes_
        y = data[:, c].astype(np.int64)
        out = np.zeros((n, m))
        if st is None:
            st = self.domain_structure_
            tables = (self._class_counts, self._pxp, self._class_cpt, self._family_counts,
                      self._cpts)
        class_counts, _, class_cpt, fam_counts, cpts = tables
        # P(c | x_p): the row's CPT row, every class
        j = config_indices(data, np.asarray(st.class_parents, dtype=np.int64), self._ar)
        ok = np.flatnonzero(j >= 0)
        counts = class_counts[j[ok]]
        counts[np.arange(len(ok)), y[ok]] -= 1.0
        out[ok] += (np.log(posterior_cpt(counts[:, None, :], self.alpha)[:, 0])
                    - np.log(class_cpt[j[ok]]))
        # P(x_i | c, pi_i): only the row's own class y_i has a count less
        for i, pa in st.parents.items():
            j = config_indices(data, np.asarray([c, *pa], dtype=np.int64), self._ar)
            x = data[:, i].astype(np.int64)
            ok = np.flatnonzero((j >= 0) & (x >= 0))
            e = np.arange(len(ok))
            counts = fam_counts[i][j[ok]]
            counts[e, x[ok]] -= 1.0
            theta = posterior_cpt(counts[:, None, :], self.alpha)[e, 0, x[ok]]
            out[ok, y[ok]] += np.log(theta) - np.log(cpts[i][j[ok], x[ok]])
        return out

    def loo_log_proba(self, X: Any, y: Any, domain_structure: str = "refit",
                      rows: Any = None) -> np.ndarray:
        """Leave-one-out class log posteriors of the training rows, without refits.

        Row i's log P(c | x_i) of every class under UKDB fitted on the training rows without
        row i (D_{-i}), in closed form from the fitted counts minus row i's own counts: the
        log predictive densities that stacking weights need (Yao et al. 2018), at about the
        cost of one batch prediction of the n rows.

        Parameters
        ----------
        X : (n, p) int array
            The feature codes (-1 = missing) this model was fitted on, in the same order.
        y : (n,) int array
            Their classes as indices into ``classes_``.
        domain_structure : {"refit", "full"}, default "refit"
            UKDB_L's structure for row i: the one D_{-i} gives (exact leave-one-out), or the
            full fit's (the approximation below; a little cheaper).
        rows : array of int, optional
            The training rows (indices into ``X``) whose posteriors are wanted (default all):
            UKDB_P's personalized part, most of the cost, is computed for these only.

        Returns
        -------
        (len(rows), len(classes_)) ndarray
            log P_{-i}(c | x_i).

        Raises
        ------
        ValueError
            ``X`` / ``y`` are not the fitted rows (shape or values), or an unknown
            ``domain_structure``.

        Notes
        -----
        Given UKDB_L's structure, closed form (paper 004, section 3; DESIGN §5):

        * UKDB_L: every factor that counted row i (the row has all of the factor's variables:
          available cases) is re-estimated from its counts minus row i: P(c | x_p), P(x_p) and
          P(x_j | c, pi_j); factors with a variable missing in row i never counted it and stay;
          missing values are marginalised as in prediction.
        * UKDB_P: the local measures LMI / CLMI at x_i (paper eq. 14) and every CPT row are
          computed from the tables minus row i's one-hot class count at its own values (row i
          has every attribute UKDB_P uses), with pseudo instances weighted by the
          leave-one-out UKDB_L posterior: the personalized structure is the one D_{-i} gives.

        UKDB_L's structure (the global CMI ranking, X_p and every attribute's parents):
        with ``domain_structure="refit"`` (default) the one D_{-i} gives: every pair's CMI
        downdated in O(1) from the pair tables (entropy form), the construction redone per
        row (one kernel pass), complete rows' factors counted minus the row (rows
        with a missing value whose structure changes summed over their completions, or above
        :data:`LOO_COMPLETIONS` one marginalising model per distinct structure); with
        ``"full"`` it is kept from the fit on all rows, the one approximation (optimistic
        where few rows decide the structure: HEPAR II 500 rows, 0.14 nats per row, DESIGN
        §5). ``k_`` (chosen from ``k_grid``) is kept in both. Tested against plain refits on
        D_{-i} (1e-10) and, for ``"full"``, refits with the structure forced. A class whose
        only training row is i keeps its place in ``classes_`` (only the prior's
        pseudo-counts).

        References
        ----------
        Paper 004 (UKDB), section 3, eq. (12), (14); DESIGN §5. Yao, Y., Vehtari, A.,
        Simpson, D. and Gelman, A. (2018). Using stacking to average Bayesian predictive
        distributions. Bayesian Analysis 13(3), 917-1007 (leave-one-out stacking).
        """
        from sklearn.utils.validation import check_is_fitted

        check_is_fitted(self, "domain_structure_")
        data = self._data
        n, p = data.shape[0], data.shape[1] - 1
        X = np.asarray(X)
        y = np.asarray(y)
        if X.shape != (n, p) or y.shape != (n,):
            raise ValueError(f"loo_log_proba takes the {n} training rows of {p} feature codes "
                             f"and their {n} class indices this model was fitted on; got X "
                             f"of shape {X.shape} and y of shape {y.shape}.")
        if not (np.array_equal(X, data[:, :p]) and np.array_equal(y, data[:, p])):
            raise ValueError("loo_log_proba takes the rows this model was fitted on, in the "
                             "same order (feature codes, -1 = missing, and class indices into "
                             "classes_); the rows given differ.")
        if domain_structure not in ("refit", "full"):
            raise ValueError(f"domain_structure must be 'refit' or 'full' (got "
                             f"{domain_structure!r}).")
        rows = training_row_indices(rows, n)
        drop = np.zeros((n, self.n_classes_))
        drop[np.arange(n), data[:, p]] = 1.0
        return self._log_posterior(*self._posteriors(data[:, :p], drop, domain_structure,
                                                     rows))

    # --- UKDB_P over a batch of rows ----------------------------------------------------------
    def _family_cells(self) -> int:
        """Cells per row of :meth:`_family_log_scores`'s arrays (one family per attribute:
        its k + 1 members, key and class scores)."""
        return len(self.arities_) * (int(self.k_) + 2 + self.n_classes_)

    def _local_information_batch(self, X: np.ndarray, W: np.ndarray, with_lmi: bool = True,
                                 drop: np.ndarray | None = None
                                 ) -> tuple[np.ndarray | None, np.ndarray]:
        """:meth:`local_information` of every row of ``X`` (codes, -1 = missing) with pseudo
        weights ``W`` (n, m) at once: lmi (n, p) (None unless ``with_lmi``), clmi (n, p, p),
        the same elementwise operations in the same order (equal to the per-row values;
        tested). ``drop`` (n, m): counts removed from every table at the row's values before
        smoothing (the row's own one-hot class). The dense arrays of an inspection path:
        prediction and :meth:`loo_log_proba` compute the same CLMI per row in a kernel
        (:meth:`_personalized_log_scores_batch`)."""
        X = np.asarray(X, dtype=np.int64)
        n, p = X.shape
        m = self.n_classes_
        sm = float(self.mi_smoothing)
        ar = np.asarray(self.arities_, dtype=np.int64)
        obs = X >= 0
        xs = np.where(obs, X, 0)
        lmi = None
        if with_lmi:
            rows = np.arange(n)[:, None]
            feats = np.arange(p)[None, :]
            t = self._single + sm                                   # (p, rmax, m)
            valid = np.arange(t.shape[1])[None, :] < ar[:, None]
            t = np.broadcast_to(np.where(valid[:, :, None], t, 0.0), (n, *t.shape)).copy()
            if drop is not None:
                t[rows, feats, xs] -= np.where(obs[:, :, None], drop[:, None, :], 0.0)
            t[rows, feats, xs] += W[:, None, :]
            lmi = local_mutual_information_counts(t[rows, feats, xs], t.sum(axis=2), self.base)
            lmi[~obs] = np.nan
        clmi = np.full((n, p, p), np.nan)
        I, J = np.triu_indices(p, 1)
        if len(I):
            joint = np.empty((n, len(I), m))
            ratio = np.empty_like(joint)
            clmi_arguments(np.ascontiguousarray(X), np.ascontiguousarray(W, dtype=np.float64),
                           np.zeros((n, m)) if drop is None
                           else np.ascontiguousarray(drop, dtype=float),
                           *self._pair_tables(), sm, joint, ratio)
            np.log(ratio, out=ratio)
            vals = (local_information(joint.reshape(-1, m), ratio.reshape(-1, m))
                    .reshape(n, len(I)) / math.log(self.base))
            vals[~(obs[:, I] & obs[:, J])] = np.nan
            clmi[:, I, J] = vals
            clmi[:, J, I] = vals
        d = np.arange(p)
        clmi[:, d, d] = np.where(obs, 0.0, np.nan)
        return lmi, clmi

    def _personalized_structures_batch(self, X: np.ndarray, clmi: np.ndarray
                                       ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """:func:`build_k_dependence_structure` of every row's CLMI (rows of ``X``; missing
        attributes left out), in one kernel call
        (:func:`bnma_core.kernels.ukdb_counts.k_dependence_structures`).

        Returns
        -------
        order : (n, p) int array
            Observed attributes in ranking order first (row r's first ``n_obs[r]`` entries).
        n_obs : (n,) int array
        parents : (n, p, k) int array
            ``parents[r, i]``: attribute parents of attribute i in row r, most dependent
            first, padded with -1 (rows of class parents and missing attributes all -1).
        """
        obs = np.ascontiguousarray(np.asarray(X) >= 0)
        return k_dependence_structures(np.ascontiguousarray(np.nan_to_num(clmi)), obs,
                                       *self._structure_settings())

    def _structure_settings(self) -> tuple[int, float, bool, float]:
        """k, min_dependence (0 if None), whether it is used, and the scale of
        ``TIE_DECIMALS``: the construction's settings for the structure kernels
        (:func:`bnma_core.kernels.ukdb_counts.structure_row`)."""
        md = self.min_dependence
        return (int(self.k_), 0.0 if md is None else float(md), md is not None,
                10.0 ** TIE_DECIMALS)

    def _pair_tables(self) -> tuple:
        """The pair tables of :meth:`_fit_local_tables` and the arities, as the kernels take
        them."""
        return (self._pair_flat, self._pair_off, self._pair_rows, self._pair_cols,
                self._pair_class, np.asarray(self.arities_, dtype=np.int64))

    def _personalized_log_scores_batch(self, X: np.ndarray, W: np.ndarray,
                                       drop: np.ndarray | None = None) -> np.ndarray:
        """log P(c | x_p) + sum_i log P(x_i | c, pi_i) of every row of ``X`` in its own UKDB_P
        network (pseudo weights ``W`` (n, m)), shape (n, m): :meth:`personalized_structure`
        and :meth:`_personalized_log_scores` over a batch. Each row's CLMI and structure in
        one kernel pass (:func:`bnma_core.kernels.ukdb_loo.personalized_structures`, the same
        values as :meth:`local_information`), every CPT row read from the subset count
        tables (:meth:`_family_log_scores`; equal to the per-row path to 1e-12; tested).
        ``drop`` (n, m): counts removed from every table at the row's values (the row's own
        one-hot class: :meth:`loo_log_proba`)."""
        X = np.ascontiguousarray(X, dtype=np.int64)
        n, p = X.shape
        m = self.n_classes_
        W = np.ascontiguousarray(W, dtype=np.float64)
        extra = W if self.pseudo_in_parameters else np.zeros((n, m))
        d = (np.zeros((n, m)) if drop is None
             else np.ascontiguousarray(drop, dtype=np.float64))
        k, md, use_min, scale = self._structure_settings()
        order = np.empty((n, p), dtype=np.int64)
        n_obs = np.empty(n, dtype=np.int64)
        parents = np.empty((n, p, k), dtype=np.int64)
        pairs = p * (p - 1) // 2
        size = max(1, LOG_BATCH_CELLS // max(1, pairs * m))
        joint = np.empty((min(n, size), pairs, m))
        ratio = np.empty_like(joint)
        tables = self._pair_tables()
        for a in range(0, n, size):
            b = min(n, a + size)
            clmi_arguments(X[a:b], W[a:b], d[a:b], *tables, float(self.mi_smoothing),
                           joint[:b - a], ratio[:b - a])
            lr = ratio[:b - a].reshape(-1, m)
            np.log(lr, out=lr)
            personalized_structures(X[a:b], joint[:b - a].reshape(-1, m), lr,
                                    math.log(self.base), k, md, use_min, scale, order[a:b],
                                    n_obs[a:b], parents[a:b])
        return self._family_log_scores(X, order, n_obs, parents, extra, d)

    def _family_log_scores(self, X: np.ndarray, order: np.ndarray, n_obs: np.ndarray,
                           parents: np.ndarray, extra: np.ndarray, d: np.ndarray,
                           counted: np.ndarray | None = None) -> np.ndarray:
        """log P(c | x_p) + sum_i log P(x_i | c, pi_i) of every row of ``X`` in its own network
        (:meth:`_personalized_structures_batch`'s ``order`` / ``n_obs`` / ``parents``: X_p the
        first k of the order), every CPT row counted at the row's values plus ``extra``
        (n, m) and minus ``d`` (n, m) at the row's own values, in one kernel pass over the
        families (:func:`bnma_core.kernels.ukdb_loo.family_log_scores`; counts from the
        value bit sets of the fit, the same integers as the tables of
        :meth:`_subset_table`).

        ``counted`` (n, p) bool, for rows completed from a training row with missing values
        (:meth:`_completion_log_scores`): ``d`` is removed only from the families whose
        members were all observed in that row (the tables that counted it), and
        log P(x_p) is added where an X_p member was not (it then varies with the
        completion)."""
        X = np.ascontiguousarray(X, dtype=np.int64)
        n, p = X.shape
        if counted is None:
            counted = np.ones((n, p), dtype=bool)
        return family_log_scores(
            X, np.ascontiguousarray(order, dtype=np.int64),
            np.ascontiguousarray(n_obs, dtype=np.int64),
            np.ascontiguousarray(parents, dtype=np.int64),
            np.ascontiguousarray(d, dtype=np.float64),
            np.ascontiguousarray(extra, dtype=np.float64),
            np.ascontiguousarray(counted, dtype=bool), float(self.alpha), self._pad_alpha,
            np.asarray(self.arities_, dtype=np.int64), *self._bitsets, int(self.k_))

    def _predict_log_proba_codes(self, X: np.ndarray) -> np.ndarray:
        return self._log_posterior(*self._posteriors(X))

    def _log_posterior(self, pd_: np.ndarray, pp: np.ndarray | None) -> np.ndarray:
        """log P(c | x) of ``mode`` from the two networks' posteriors."""
        if self.mode == "domain":
            post = pd_
        elif self.mode == "personalized":
            post = pp
        else:
            post = 0.5 * (pd_ + pp)
        with np.errstate(divide="ignore"):
            return np.log(post)

    # --- explanation ------------------------------------------------------------------------
    def _feature_names(self) -> list[str]:
        return self._variable_names()[0]

    def _graph(self, st: KDependenceStructure, mi: np.ndarray, dep: np.ndarray,
               missing: set[int]) -> nx.DiGraph:
        names = self._feature_names()
        cname = self.class_name_
        g = nx.DiGraph()
        g.add_node(cname, role="class", missing=False)
        for i, nm in enumerate(names):
            g.add_node(nm, role="feature", missing=i in missing)
        for a, v in enumerate(st.class_parents):
            g.add_edge(names[v], cname, weight=float(mi[v]), role="class-parent")
            for u in st.class_parents[:a]:
                g.add_edge(names[u], names[v], weight=float(dep[u, v]), role="joint")
        for i, pa in st.parents.items():
            g.add_edge(cname, names[i], weight=float(mi[i]), role="class")
            for v in pa:
                g.add_edge(names[v], names[i], weight=float(dep[v, i]), role="parent")
        return g

    def _codes_for_one(self, x: Any) -> np.ndarray:
        if isinstance(x, pd.Series):
            x = x.to_frame().T
        if isinstance(x, pd.DataFrame):
            if len(x) != 1:
                raise ValueError(f"explain() takes one instance; got {len(x)} rows.")
            return self._prepare_predict(x)[0]
        arr = np.asarray(x)
        if arr.ndim == 2 and arr.shape[0] == 1:
            arr = arr[0]
        if arr.ndim != 1:
            raise ValueError("explain() takes one instance: a 1-row DataFrame or a 1-D code "
                             "array.")
        if arr.shape[0] != self.n_features_in_:
            raise ValueError(f"The instance has {arr.shape[0]} values but the model was "
                             f"trained on {self.n_features_in_} features.")
        f = np.asarray(pd.to_numeric(pd.Series(arr, dtype=object), errors="coerce"),
                       dtype=float)
        codes = np.where(np.isnan(f), -1, f).astype(np.int64)
        codes[(codes < 0) | (codes >= self.arities_)] = -1
        return codes.astype(CODE_DTYPE)

    def explain(self, x: Any) -> UKDBExplanation:
        """Both networks, the three posteriors and the most locally-different pairs for ONE
        instance (a 1-row DataFrame in the training columns, or a 1-D array of codes; missing
        values allowed)."""
        codes = self._codes_for_one(x)
        row = codes[None, :]
        ld = self._domain_log_scores(row)[0]
        post_d = np.exp(ld - np.logaddexp.reduce(ld))
        w = self._pseudo(post_d)
        st, lmi, clmi = self.personalized_structure(codes, w)
        lp = self._personalized_log_scores(codes, st, w)
        post_p = np.exp(lp - np.logaddexp.reduce(lp))
        names = self._feature_names()
        states = self.feature_states_
        missing = {int(i) for i in np.flatnonzero(codes < 0)}
        obs = [i for i in range(len(codes)) if i not in missing]
        recs = []
        for a, i in enumerate(obs):
            for j in obs[a + 1:]:
                vi, vj = states[i][codes[i]], states[j][codes[j]]
                recs.append(dict(feature_a=names[i], value_a=vi, feature_b=names[j],
                                 value_b=vj, clmi=float(clmi[i, j]), cmi=float(self.cmi_[i, j]),
                                 difference=float(clmi[i, j] - self.cmi_[i, j]),
                                 text=(f"{names[i].replace('_', ' ')} = {vi} and "
                                       f"{names[j].replace('_', ' ')} = {vj}: CLMI "
                                       f"{clmi[i, j]:.4f} here, CMI {self.cmi_[i, j]:.4f} "
                                       "overall")))
        cols = ["feature_a", "value_a", "feature_b", "value_b", "clmi", "cmi", "difference",
                "text"]
        pairs = pd.DataFrame(recs, columns=cols)
        if len(pairs):
            pairs = pairs.iloc[np.argsort(-pairs["difference"].abs().to_numpy(),
                                          kind="stable")].reset_index(drop=True)
        return UKDBExplanation(
            instance={names[i]: (None if codes[i] < 0 else states[i][codes[i]])
                      for i in range(len(codes))},
            domain_graph=self._graph(self.domain_structure_, self.mi_, self.cmi_, missing),
            personalized_graph=self._graph(st, lmi, clmi, missing),
            posterior_domain=post_d,
            posterior_personalized=post_p,
            posterior_ensemble=0.5 * (post_d + post_p),
            classes=[str(c) for c in self.classes_],
            class_name=self.class_name_,
            differing_pairs=pairs,
            class_parents_domain=[names[v] for v in self.domain_structure_.class_parents],
            class_parents_personalized=[names[v] for v in st.class_parents],
            base=float(self.base),
        )
