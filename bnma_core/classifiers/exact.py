"""Classifiers on Bayesian networks learned over the features and the class together: the
shared base :class:`ExactStructureClassifier`, and EBN and EANB on the exactly optimal network
(DESIGN §3, §6).

* :class:`ExactStructureClassifier`: the plumbing of every classifier whose networks are whole
  structures over the features and the class, learned from complete rows — EBN / EANB here,
  the K-best averages (:mod:`~bnma_core.classifiers.kbest`), the exact-network ensembles
  (:mod:`~bnma_core.classifiers.ensembles`) and B-RAI (:mod:`~bnma_core.classifiers.brai`).
* :class:`ExactBN` (``ebn``): the optimal DAG over the features and the class together (the
  class may get parents and children; Silander & Myllymäki 2006), predicting with the class
  posterior of that network.
* :class:`ExactANB` (``eanb``): exact augmented naive Bayes — the class is a parent of every
  feature, the features' structure is optimal (Sugahara, Uto & Ueno 2018).

Both use BDeu with equivalent sample size ``ess`` (α = 1 in Sugahara, Aomi & Ueno) and EAP
parameters θ_ijk = (N_ijk + α/(r_i q_i)) / (N_ij + α/q_i). A missing test value is
marginalized exactly (variable elimination in :meth:`bnma_core.network.DiscreteBN.class_posterior`).
"""

from __future__ import annotations

import math
import weakref
from typing import Any

import numpy as np

from ..data import DataError
from ..network import DiscreteBN
from ..structure.exact import ExactLimits, ScoredStructure, best_network
from .base import DiscreteBNClassifier, Interval, Options

__all__ = ["ExactANB", "ExactBN", "ExactStructureClassifier", "check_ess"]


def check_ess(ess: Any) -> float:
    """The equivalent sample size ``ess`` as a float if it is a finite positive number, else a
    ValueError."""
    try:
        a = float(ess)
    except (TypeError, ValueError):
        raise ValueError(f"ess must be a positive number (got {ess!r}).") from None
    if not (a > 0 and math.isfinite(a)):
        raise ValueError(f"ess must be a positive number (got {ess!r}).")
    return a


class ExactStructureClassifier(DiscreteBNClassifier):
    """Base of the classifiers whose networks are whole structures over the features and the
    class (the class may have parents and children), learned from complete training rows.

    It holds what they share: the complete training table (features, then the class in column
    ``class_index_``), networks with EAP parameters θ_ijk = (N_ijk + α/(r_i q_i)) /
    (N_ij + α/q_i) (α = ``ess``), and exact class posteriors with missing test values
    marginalised (:meth:`bnma_core.network.DiscreteBN.class_posterior`). A subclass learns its
    structures in ``_fit_codes`` and averages :meth:`_posterior` over its networks in
    ``_predict_log_proba_codes``; it must have an ``ess`` parameter.
    """

    def _training_table(self, X: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Complete rows of [X | y] as int64 and the arities (features, then the class).
        Sets ``class_index_`` and ``n_rows_dropped_``."""
        data, ar, _ = self._weighted_training_table(X, y, None)
        return data, ar

    def _weighted_training_table(self, X: np.ndarray, y: np.ndarray,
                                 weights: np.ndarray | None
                                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
        """:meth:`_training_table` with row ``weights`` (or None): rows of weight 0 are left
        out too, and the kept rows' weights are returned third."""
        data = np.column_stack([X, y]).astype(np.int64)
        ar = np.append(np.asarray(self.arities_, dtype=np.int64), len(self.classes_))
        keep = (data >= 0).all(axis=1)
        if weights is not None:
            keep &= weights > 0
        if not keep.any():
            raise DataError("No training row is complete" + (" with a positive weight"
                            if weights is not None else "") + "; exact structure learning "
                            "needs complete rows (remove or impute missing values).")
        self.class_index_ = X.shape[1]
        self.n_rows_dropped_ = int((~keep).sum())
        return (np.ascontiguousarray(data[keep]), ar,
                None if weights is None else weights[keep])

    def _names_states(self) -> tuple[list[str], list[list[str]]]:
        """Variable names and state labels of the networks (features, then the class)."""
        names, cname = self._variable_names()
        cstates = [str(s) for s in self.classes_]
        if len(set(cstates)) != len(cstates):
            cstates = [f"class{i}" for i in range(len(cstates))]
        return names + [cname], [list(s) for s in self.feature_states_] + [cstates]

    def _network(self, s: ScoredStructure, data: np.ndarray, ar: np.ndarray,
                 weights: np.ndarray | None = None) -> DiscreteBN:
        """Structure ``s`` with EAP parameters from ``data`` (rows weighted by ``weights``)."""
        names, states = self._names_states()
        return s.fit_network(data, ar, check_ess(self.ess), names, states,
                             sample_weight=weights)

    def _posterior(self, net: DiscreteBN, X: np.ndarray) -> np.ndarray:
        """P(c | x) of one network for feature codes ``X`` (-1 = missing, marginalised)."""
        codes = np.column_stack([X, np.full(len(X), -1)]).astype(np.int64)
        return net.class_posterior(self.class_index_, codes)

    def _networks_posteriors(self, networks: Any, X: np.ndarray) -> np.ndarray:
        """P(c | x) of every network for feature codes ``X``: (len(networks), n, n_classes),
        equal to :meth:`_posterior` network by network. Networks with the same structure are
        evaluated together through :func:`bnma_core.factors.stack_models` (one batched
        elimination per structure and missingness block instead of one per network; DESIGN
        §11)."""
        from ..factors import MIN_PATTERN_ROWS, class_log_posterior, stacked_codes
        from ..network.inference import normalised_posterior

        n, c = len(X), self.class_index_
        out = np.empty((len(networks), n, len(self.classes_)))
        if not len(networks) or not n:
            return out
        codes = np.column_stack([X, np.full(n, -1)]).astype(np.int64)
        for idx, model in _stacked_groups(networks):
            M = len(idx)
            lj = class_log_posterior(model, c, stacked_codes(codes, M), validate=False,
                                     min_pattern_rows=MIN_PATTERN_ROWS * M)
            out[idx] = normalised_posterior(lj).reshape(M, n, -1)
        return out

    def _networks_log_joints(self, networks: Any, X: np.ndarray, target: int) -> np.ndarray:
        """Exact log P(c, x_obs | network) of feature codes ``X`` for each network:
        (len(networks), n, n_classes), the numbers the base class computes network by network.
        Networks with the same structure are evaluated together
        (:func:`bnma_core.factors.stack_models`): the rows whose relevant variables are all
        observed in closed form (:func:`bnma_core.factors.closed_form_log_joint`), the others
        by elimination, one per missingness block."""
        from ..factors import (
            MIN_PATTERN_ROWS,
            closed_form_log_joint,
            log_joint_batch,
            stacked_codes,
        )

        n = len(X)
        out = np.empty((len(networks), n, len(self.classes_)))
        if not len(networks) or not n:
            return out
        codes = np.column_stack([X, np.full(n, -1)]).astype(np.int64)
        observed = codes >= 0
        observed[:, target] = False
        patterns, inverse = np.unique(observed, axis=0, return_inverse=True)
        inverse = inverse.ravel()
        members = np.split(np.argsort(inverse, kind="stable"),
                           np.cumsum(np.bincount(inverse, minlength=len(patterns)))[:-1])
        for idx, model in _stacked_groups(networks):
            M = len(idx)
            closed, values = closed_form_log_joint(model, target, stacked_codes(codes, M))
            closed = closed[:n]  # the same rows for every model of the group
            res = np.empty((M, n, out.shape[2]))
            res[:, closed] = values.reshape(M, int(closed.sum()), out.shape[2])
            # blocks of the rows left (as _pattern_groups: rare patterns pooled)
            left = [k for k in range(len(patterns)) if not closed[members[k][0]]]
            blocks, pooled = [], []
            for k in left:
                if len(members[k]) < MIN_PATTERN_ROWS and len(left) > 1:
                    pooled.append(members[k])
                else:
                    blocks.append((members[k], np.flatnonzero(patterns[k])))
            if pooled:
                rows = np.sort(np.concatenate(pooled))
                blocks.append((rows, np.flatnonzero(observed[rows].any(axis=0))))
            for rows, obs in blocks:
                ev = codes[np.ix_(rows, obs)]
                for m, k in enumerate(idx):
                    res[m, rows] = log_joint_batch(networks[k].factor_model(), target, obs, ev)
            out[idx] = res
        return out

    @staticmethod
    def _log(p: np.ndarray) -> np.ndarray:
        with np.errstate(divide="ignore"):
            return np.log(p)


def _stacked_groups(networks: Any) -> list[tuple[np.ndarray, Any]]:
    """The networks grouped by structure (parent lists, cardinalities and whether every CPT
    entry is positive, which decides the underflow fallback): (indices in ``networks``, their
    :func:`bnma_core.factors.stack_models`), cached in ``_STACKS``."""
    from ..factors import stack_models

    keys: dict[Any, list[int]] = {}
    for k, net in enumerate(networks):
        fm = net.factor_model()
        key = (tuple(fm.cards.tolist()), tuple(tuple(pa.tolist()) for pa in fm.parents),
               fm.positive)
        keys.setdefault(key, []).append(k)
    groups = []
    for idx in keys.values():
        members = [networks[k].factor_model() for k in idx]
        cached = _STACKS.get(members[0])
        if cached is None or len(cached[0]) != len(members) or any(
                a() is not b for a, b in zip(cached[0], members)):
            cached = ([weakref.ref(m) for m in members], stack_models(members))
            _STACKS[members[0]] = cached
        groups.append((np.array(idx), cached[1]))
    return groups


_STACKS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
"""Stacked models by the factor model of their first network, with weak references to the
members (not pickled with the estimator; dropped with the networks)."""


class ExactBN(ExactStructureClassifier):
    """Classifier on the globally optimal Bayesian network (EBN).

    Parameters
    ----------
    ess : float, default 1.0
        BDeu equivalent sample size α; also sets the EAP pseudo-counts α / (r_i q_i).
    max_parents : int or None, default None
        Maximum in-degree (None = unrestricted, as in the paper).
    scoring : {"bdeu", "k2"}, default "bdeu"
        Structure score (K2 uses the same EAP parameters). Named ``scoring`` because
        ``score`` is scikit-learn's accuracy method.
    limits : ExactLimits or None
        Size / memory thresholds (default :data:`bnma_core.structure.exact.DEFAULT_LIMITS`:
        at most 20 variables including the class).

    Attributes
    ----------
    structure_ : ScoredStructure
        The optimal DAG over columns 0..p-1 (features) and p (the class).
    network_ : DiscreteBN
        That DAG with EAP parameters.
    class_index_ : int
        Column of the class in ``structure_`` / ``network_`` (= n_features_in_).
    n_rows_dropped_ : int
        Training rows left out because a value was missing (exact structure learning needs
        complete rows; the paper removes them too) or their weight was 0.

    Notes
    -----
    Exact search is exponential in the number of variables: time and memory grow as
    2^n; inputs above the limits are refused before anything is allocated.

    References
    ----------
    Silander, T. & Myllymäki, P. (2006). UAI. Sugahara, Aomi & Ueno
    (docs/specs.md §1, §3.2).
    """

    _augmented = False
    _parameter_constraints = {
        "ess": [Interval("real", 0, None, "neither")],
        "max_parents": [None, Interval("int", 0, None)],
        "scoring": [Options("bdeu", "k2")],
        "limits": [None, ExactLimits],
    }

    def __init__(self, *, ess: float = 1.0, max_parents: int | None = None, scoring: str = "bdeu",
                 limits: ExactLimits | None = None) -> None:
        self.ess = ess
        self.max_parents = max_parents
        self.scoring = scoring
        self.limits = limits

    def fit(self, X: Any, y: Any, arities: Any = None,
            sample_weight: Any = None) -> ExactBN:
        """Fit on features ``X`` and labels ``y``; ``sample_weight`` (optional, one
        non-negative weight per row) turns counts into sums of weights, in the score and in
        the EAP parameters (our AdaBoost(EBN) default, docs/specs.md §4)."""
        self._sample_weight = None
        if sample_weight is not None:
            w = np.asarray(sample_weight, dtype=np.float64)
            if w.ndim != 1 or len(w) != len(np.asarray(y)):
                raise ValueError("sample_weight must have one weight per row.")
            if not np.isfinite(w).all() or (w < 0).any():
                raise ValueError("sample_weight must be finite and non-negative.")
            if not (w > 0).any():
                raise ValueError("Every sample weight is zero: at least one row needs a "
                                 "positive weight.")
            self._sample_weight = w
        try:
            return super().fit(X, y, arities)
        finally:
            self._sample_weight = None

    def _learn(self, data: np.ndarray, arities: np.ndarray, c: int,
               weights: np.ndarray | None) -> ScoredStructure:
        return best_network(data, arities, score=self.scoring, ess=self.ess,
                            max_parents=self.max_parents, class_index=c,
                            augmented=self._augmented, limits=self.limits,
                            sample_weight=weights)

    def _fit_codes(self, X: np.ndarray, y: np.ndarray) -> None:
        data, ar, w = self._weighted_training_table(X, y, getattr(self, "_sample_weight", None))
        self.structure_ = self._learn(data, ar, self.class_index_, w)
        self.network_ = self._network(self.structure_, data, ar, w)

    def _predict_log_proba_codes(self, X: np.ndarray) -> np.ndarray:
        return self._log(self._posterior(self.network_, X))

    @property
    def class_parents_(self) -> tuple[int, ...]:
        """Features that are parents of the class in the learned network."""
        return self.structure_.parents[self.class_index_]


class ExactANB(ExactBN):
    """Exact augmented naive Bayes (EANB): the class is a parent of every feature and has no
    parents; the structure among the features is the BDeu-optimal one given that.

    Parameters and attributes as :class:`ExactBN`; ``max_parents`` counts the class (so at
    least 1), and the limits count the features.

    References
    ----------
    Sugahara, S., Uto, M. & Ueno, M. (2018). Exact learning augmented naive Bayes classifier.
    PGM. See docs/specs.md §3.2.
    """

    _augmented = True
