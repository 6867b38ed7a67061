"""Classifiers on the exactly optimal Bayesian network: EBN and EANB (DESIGN §3, §6).

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

from typing import Any

import numpy as np

from ..data import DataError
from ..structure.exact import ExactLimits, ScoredStructure, best_network
from .base import DiscreteBNClassifier, Interval, Options


class ExactBN(DiscreteBNClassifier):
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
    Silander, T. & Myllymäki, P. (2006). UAI. Sugahara, Aomi & Ueno (spec
    ``subbagging-kbest.md`` §1, §3.2).
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
        the EAP parameters (the spec's AdaBoost(EBN) default)."""
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
        data = np.column_stack([X, y]).astype(np.int64)
        ar = np.append(np.asarray(self.arities_, dtype=np.int64), len(self.classes_))
        c = X.shape[1]
        w = getattr(self, "_sample_weight", None)
        complete = (data >= 0).all(axis=1)
        if w is not None:
            complete &= w > 0
        if not complete.any():
            raise DataError("No training row is complete (with a positive weight); exact "
                            "structure learning needs complete rows.")
        self.n_rows_dropped_ = int((~complete).sum())
        data = data[complete]
        w = None if w is None else w[complete]
        self.class_index_ = c
        self.structure_ = self._learn(data, ar, c, w)
        names, cname = self._variable_names()
        cstates = [str(s) for s in self.classes_]
        if len(set(cstates)) != len(cstates):
            cstates = [f"class{i}" for i in range(len(cstates))]
        states = [list(s) for s in self.feature_states_] + [cstates]
        self.network_ = self.structure_.fit_network(data, ar, float(self.ess),
                                                    names + [cname], states, sample_weight=w)

    def _predict_log_proba_codes(self, X: np.ndarray) -> np.ndarray:
        codes = np.column_stack([X, np.full(len(X), -1)])
        p = self.network_.class_posterior(self.class_index_, codes)
        with np.errstate(divide="ignore"):
            return np.log(p)

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
    PGM. Spec ``subbagging-kbest.md`` §3.2.
    """

    _augmented = True
