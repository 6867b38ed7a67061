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

Missing test values are marginalized exactly in UKDB_L (missing attributes without observed
descendants drop out; the remaining ones are summed over by enumeration), and UKDB_P never
contains them.

References
----------
Paper 004 (UKDB; WBC case study), eq. for MI / CMI (1), (5), LMI / CLMI (14), classification
rule (12), ensemble (last equation of section 3); DESIGN.md §5.
Sahami, M. (1996). Learning limited dependence Bayesian classifiers. KDD (KDB).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import networkx as nx
import numpy as np
import pandas as pd

from ..data import CODE_DTYPE
from ..kernels.counting import parent_strides
from ..scores import (
    class_mutual_informations,
    conditional_local_mutual_information_counts,
    family_counts,
    joint_counts,
    local_mutual_information_counts,
    pairwise_conditional_mutual_information,
    posterior_cpt,
)
from .base import DiscreteBNClassifier

__all__ = ["UKDB", "UKDBExplanation", "KDependenceStructure", "build_k_dependence_structure"]

MODES = ("ensemble", "domain", "personalized")
PSEUDO_WEIGHTS = ("domain", "uniform", "none")
TIE_DECIMALS = 10


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
        Number of class parents X_p and maximum number of attribute parents per attribute.
        k = 0 gives naive Bayes.
    mode : {"ensemble", "domain", "personalized"}, default "ensemble"
        "domain" = UKDB_L, "personalized" = UKDB_P, "ensemble" = their uniform average.
    alpha : float, default 1.0
        Dirichlet pseudo-count of every CPT cell: P(x_i | c, pi) = (N + alpha) /
        (N_pi,c + r_i alpha); the same for P(c | x_p) (alpha = 1: Laplace correction, which
        the paper names as the remedy for poorly estimated probabilities).
    base : float, default 2.0
        Log base of MI / CMI / LMI / CLMI. Rankings do not depend on it; 2 (bits) is the unit of
        the paper's WBC value 0.4733 (DESIGN §5's default e would report 0.3288 nats).
    mi_smoothing : float, default 0.0
        Pseudo-count added to every cell of the joint tables the information measures are
        computed from (0 = maximum likelihood, which reproduces the paper's WBC value best).
    pseudo_weights : {"domain", "uniform", "none"}, default "domain"
        Weight of the pseudo instance "x labelled c" in UKDB_P: the UKDB_L posterior
        P_L(c | x) (DESIGN §5), 1/m, or no pseudo instances.
    pseudo_in_parameters : bool, default False
        Whether UKDB_P's CPT entries also count the pseudo instances (the paper adds them to
        estimate the dependence measures; by default the parameters use training data only).
    min_dependence : float or None, default None
        If a number, attribute parents need (local) CMI strictly above it, so an attribute may
        get fewer than k parents; None keeps the k highest whatever their sign.
    max_missing_configurations : int, default 1_000_000
        Largest number of joint states of missing attributes UKDB_L enumerates to marginalize
        them in one test row (an error explains the limit if it is exceeded).

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

    def __init__(self, k: int = 2, mode: str = "ensemble", alpha: float = 1.0, base: float = 2.0,
                 mi_smoothing: float = 0.0, pseudo_weights: str = "domain",
                 pseudo_in_parameters: bool = False, min_dependence: float | None = None,
                 max_missing_configurations: int = 1_000_000) -> None:
        self.k = k
        self.mode = mode
        self.alpha = alpha
        self.base = base
        self.mi_smoothing = mi_smoothing
        self.pseudo_weights = pseudo_weights
        self.pseudo_in_parameters = pseudo_in_parameters
        self.min_dependence = min_dependence
        self.max_missing_configurations = max_missing_configurations

    # --- parameter checks ----------------------------------------------------------------------
    def _check_params(self) -> None:
        if isinstance(self.k, bool) or not isinstance(self.k, (int, np.integer)) or self.k < 0:
            raise ValueError(f"k must be a whole number >= 0 (got {self.k!r}).")
        if self.mode not in MODES:
            raise ValueError(f"Unknown mode {self.mode!r}; choose one of {', '.join(MODES)}.")
        if not (self.alpha > 0 and math.isfinite(self.alpha)):
            raise ValueError(f"alpha must be a positive number (got {self.alpha!r}).")
        if not (self.base > 0 and self.base != 1 and math.isfinite(self.base)):
            raise ValueError(f"The log base must be positive and not 1 (got {self.base!r}).")
        if not (self.mi_smoothing >= 0 and math.isfinite(self.mi_smoothing)):
            raise ValueError("mi_smoothing must be >= 0.")
        if self.pseudo_weights not in PSEUDO_WEIGHTS:
            raise ValueError(f"Unknown pseudo_weights {self.pseudo_weights!r}; choose one of "
                             f"{', '.join(PSEUDO_WEIGHTS)}.")
        if self.max_missing_configurations < 1:
            raise ValueError("max_missing_configurations must be at least 1.")

    def fit(self, X: Any, y: Any, arities: Any = None) -> UKDB:
        """Fit UKDB_L and keep the statistics UKDB_P needs (see
        :meth:`DiscreteBNClassifier.fit`). The class node is named after ``y.name`` if ``y``
        is a pandas Series, else "class"."""
        return super().fit(X, y, arities)

    # --- training ------------------------------------------------------------------------------
    def _fit_codes(self, X: np.ndarray, y: np.ndarray) -> None:
        self._check_params()
        self.class_name_ = self._variable_names()[1]
        p = X.shape[1]
        m = len(self.classes_)
        self.n_classes_ = m
        self._X = X
        self._y = y
        self._data = np.ascontiguousarray(np.column_stack([X, y]), dtype=CODE_DTYPE)
        self._ar = np.append(np.asarray(self.arities_, dtype=np.int64), m)
        c = p
        self._fit_local_tables(p, m)
        self.mi_ = class_mutual_informations(X, y, self.arities_, m, None, self.mi_smoothing,
                                             self.base)
        self.cmi_ = pairwise_conditional_mutual_information(X, y, self.arities_, m, None,
                                                            self.mi_smoothing, self.base)
        st = build_k_dependence_structure(self.cmi_, int(self.k),
                                          min_dependence=self.min_dependence)
        self.domain_structure_ = st
        # UKDB_L parameters. Class factor: log P(x_p) + log P(c | x_p) as a (q_p, m) table
        # (P(x_p) only matters when an X_p value is missing and has to be summed out).
        cp = np.asarray(st.class_parents, dtype=np.int64)
        cc = family_counts(self._data, c, cp, self._ar)
        n_xp = cc.sum(axis=1)
        log_pxp = np.log(posterior_cpt(n_xp[None, :], self.alpha)[0])
        self._class_table = np.log(posterior_cpt(cc, self.alpha)) + log_pxp[:, None]
        self._class_strides = parent_strides(cp, self._ar)
        # attribute CPTs in the library's layout: parent list (C, *pa), class fastest
        self._cpts: dict[int, np.ndarray] = {}
        self._strides: dict[int, np.ndarray] = {}
        for i, pa in st.parents.items():
            fam = np.asarray([c] + list(pa), dtype=np.int64)
            self._cpts[i] = np.log(posterior_cpt(family_counts(self._data, i, fam, self._ar),
                                                 self.alpha))
            self._strides[i] = parent_strides(fam, self._ar)
        # UKDB_P's pseudo-counts per attribute, padded to the largest arity with zeros
        r_max = int(max(self.arities_.max(), 1))
        self._pad_alpha = np.where(np.arange(r_max)[None, :] < self.arities_[:, None],
                                   float(self.alpha), 0.0)
        children: dict[int, list[int]] = {i: [] for i in range(p)}
        for i, pa in st.parents.items():
            for j in pa:
                children[j].append(i)
        self._children = children
        self.structure_ = self._graph(st, self.mi_, self.cmi_, set())

    def _counts(self, variables: list[int]) -> np.ndarray:
        """Count table over ``variables`` (rows missing one of them skipped)."""
        return joint_counts(self._data, variables, self._ar)

    def _fit_local_tables(self, p: int, m: int) -> None:
        """Training counts behind LMI / CLMI, laid out so that the local measures of every
        attribute pair at one instance's values are a few vectorized lookups:
        ``_pair_flat`` holds each (x_i, x_j, c) table of a pair i < j at ``_pair_off[i, j]``;
        row / column / class sums per pair and the (x_i, c) tables are padded arrays."""
        c = p
        rmax = int(max(self.arities_.max(), 1))
        self._pair_off = np.zeros((p, p), dtype=np.int64)
        self._pair_rows = np.zeros((p, p, rmax, m))   # n(x_i = a, c) among the pair's rows
        self._pair_cols = np.zeros((p, p, rmax, m))   # n(x_j = b, c)
        self._pair_class = np.zeros((p, p, m))        # n(c)
        flat, off = [], 0
        for i in range(p):
            for j in range(i + 1, p):
                t = self._counts([i, j, c])
                self._pair_off[i, j] = off
                flat.append(t.ravel())
                off += t.size
                self._pair_rows[i, j, :t.shape[0]] = t.sum(axis=1)
                self._pair_cols[i, j, :t.shape[1]] = t.sum(axis=0)
                self._pair_class[i, j] = t.sum(axis=(0, 1))
        self._pair_flat = np.concatenate(flat) if flat else np.zeros(0)
        self._single = np.zeros((p, rmax, m))
        for i in range(p):
            t = self._counts([i, c])
            self._single[i, :t.shape[0]] = t

    # --- UKDB_L prediction -----------------------------------------------------------------
    def _domain_eval(self, rows: np.ndarray) -> np.ndarray:
        """log P(c, observed part) for rows whose missing attributes are all barren (no
        observed descendants) except X_p, which must be complete. Shape (n, m)."""
        st = self.domain_structure_
        n, m = rows.shape[0], self.n_classes_
        if st.class_parents:
            cfg = rows[:, st.class_parents].astype(np.int64) @ self._class_strides
            out = self._class_table[cfg].copy()
        else:
            out = np.repeat(self._class_table, n, axis=0)
        for i, pa in st.parents.items():
            xi = rows[:, i]
            present = xi >= 0
            if not present.any():
                continue
            # row of (c, pa) = c + sum_k x_pa_k stride_k (class first, stride 1)
            cfg = np.where(present[:, None], rows[:, pa], 0).astype(np.int64) \
                @ self._strides[i][1:]
            table = self._cpts[i]
            xs = np.where(present, xi, 0)
            for c in range(m):
                out[:, c] += np.where(present, table[cfg + c, xs], 0.0)
        return out

    def _relevant_missing(self, row: np.ndarray) -> list[int]:
        """Missing attributes that must be summed out (X_p members and ancestors of observed
        attributes); the others are barren and drop out."""
        st = self.domain_structure_
        missing = {int(i) for i in np.flatnonzero(row < 0)}
        cp = set(st.class_parents)
        changed = True
        while changed:
            changed = False
            for v in sorted(missing):
                if v not in cp and all(row[ch] < 0 and ch not in missing
                                       for ch in self._children[v]):
                    missing.discard(v)
                    changed = True
        return sorted(missing)

    def _domain_log_scores(self, X: np.ndarray) -> np.ndarray:
        out = np.empty((X.shape[0], self.n_classes_))
        relevant = [self._relevant_missing(r) if (r < 0).any() else [] for r in X]
        simple = np.array([not r for r in relevant], dtype=bool)
        if simple.any():
            out[simple] = self._domain_eval(X[simple])
        for idx in np.flatnonzero(~simple):
            rel = relevant[idx]
            sizes = [int(self._ar[v]) for v in rel]
            n_cfg = int(np.prod(sizes, dtype=np.float64))
            if n_cfg > self.max_missing_configurations:
                raise ValueError(
                    f"Row {idx} has {len(rel)} missing values with {n_cfg} joint states to sum "
                    f"over, more than max_missing_configurations="
                    f"{self.max_missing_configurations}; raise that limit or fill some in.")
            grid = np.repeat(X[idx][None, :], n_cfg, axis=0)
            grid[:, rel] = np.indices(sizes).reshape(len(rel), -1).T
            lp = self._domain_eval(grid)
            out[idx] = np.logaddexp.reduce(lp, axis=0)
        return out

    # --- UKDB_P -----------------------------------------------------------------------------
    def _pseudo(self, domain_post: np.ndarray) -> np.ndarray:
        m = self.n_classes_
        if self.pseudo_weights == "domain":
            return np.asarray(domain_post, dtype=float)
        if self.pseudo_weights == "uniform":
            return np.full(m, 1.0 / m)
        return np.zeros(m)

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
        st = build_k_dependence_structure(np.nan_to_num(clmi), int(self.k), candidates=obs,
                                          min_dependence=self.min_dependence)
        return st, lmi, clmi

    def _personalized_log_scores(self, x: np.ndarray, st: KDependenceStructure,
                                 pseudo: np.ndarray) -> np.ndarray:
        """log P(c | x_p) + sum_i log P(x_i | c, pi_i) at the instance's values (CPT entries
        counted directly from the training rows)."""
        m = self.n_classes_
        X, y, a = self._X, self._y, self.alpha
        extra = pseudo if self.pseudo_in_parameters else np.zeros(m)
        match = np.ones(len(y), dtype=bool)
        for v in st.class_parents:
            match &= X[:, v] == x[v]
        n_c = np.bincount(y[match], minlength=m) + extra
        out = np.log(posterior_cpt(n_c[None, :], a)[0])
        attrs = list(st.parents)
        if not attrs:
            return out
        # for every attribute, the CPT rows (one per class) at the instance's parent values:
        # an (m, r_i) count table, padded to r_max (zero pseudo-count on padded states) and
        # evaluated in one posterior_cpt call
        r_max = self._pad_alpha.shape[1]
        k = len(attrs)
        counts = np.empty((k, m * r_max))
        for t, i in enumerate(attrs):
            match = X[:, i] >= 0
            for v in st.parents[i]:
                match &= X[:, v] == x[v]
            counts[t] = np.bincount(y[match] * r_max + X[match, i], minlength=m * r_max)
        counts = counts.reshape(k, m, r_max)
        rows, xs = np.arange(k), x[attrs]
        counts[rows, :, xs] += extra
        theta = posterior_cpt(counts, self._pad_alpha[attrs][:, None, :])
        return out + np.log(theta[rows, :, xs]).sum(axis=0)

    # --- prediction -------------------------------------------------------------------------
    def _posteriors(self, X: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
        """Normalised domain posteriors and (unless mode == "domain") personalized ones."""
        ld = self._domain_log_scores(X)
        pd_ = np.exp(ld - np.logaddexp.reduce(ld, axis=1, keepdims=True))
        if self.mode == "domain":
            return pd_, None
        pp = np.empty_like(pd_)
        for r in range(X.shape[0]):
            w = self._pseudo(pd_[r])
            st, _, _ = self.personalized_structure(X[r], w)
            lp = self._personalized_log_scores(X[r], st, w)
            pp[r] = np.exp(lp - np.logaddexp.reduce(lp))
        return pd_, pp

    def _predict_log_proba_codes(self, X: np.ndarray) -> np.ndarray:
        pd_, pp = self._posteriors(X)
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
