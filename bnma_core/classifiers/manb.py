"""Exact model averaging over all naive-Bayes feature sets (Dash & Cooper 2002; DESIGN §4).

A naive structure S is a subset of the arcs C -> F_i; there are 2^N of them. Under Dirichlet
parameter priors, parameter independence and a modular structure prior, averaging the
predictions of all 2^N structures (weighted by P(S | D)) equals the prediction of ONE naive
network over all N features with parameters (eq. 10-13)

    theta*_ijk  ∝  rho^∅_ijk + rho^C_ijk
             =  P(F_i has no arc | D) * theta^∅_ik + P(C -> F_i | D) * theta^C_ijk,

with theta^∅ / theta^C the eq. 6 posterior-mean parameters of F_i without / with the class as
parent, and the per-feature arc posterior

    P(C -> F_i | D) = p_i ML^C_i / (p_i ML^C_i + (1 - p_i) ML^∅_i)

(p_i = prior probability of the arc, ML = family marginal likelihood, eq. 8). Each column of
theta* is already normalised because theta^∅ and theta^C are. Everything is computed from the
same sufficient statistics as one MAP naive Bayes, in log space.
"""

from __future__ import annotations

from typing import Any

import networkx as nx
import numpy as np

from ..data import CODE_DTYPE
from ..kernels.manb import naive_counts, naive_counts_soft, naive_log_joint
from ..scores import DirichletScore, posterior_cpt
from .base import DEPRECATED, Check, DiscreteBNClassifier, Interval, Options

__all__ = ["MANaiveBayes"]

_SCORES = ("k2", "bdeu")
_MISSING = ("em", "available")


class MANaiveBayes(DiscreteBNClassifier):
    """Model-averaged naive Bayes: the exact average over all 2^N feature-set structures.

    Parameters
    ----------
    alpha : float, default 1.0
        Dirichlet hyperparameter a_ijk of every cell when ``scoring="k2"`` (1 = the K2 metric of
        Cooper & Herskovits 1992, the paper's choice; other values give the uniform BD metric).
    scoring : {"k2", "bdeu"}, default "k2"
        (Named ``scoring``, not ``score``, so that scikit-learn's ``score(X, y)`` keeps working.)
        ``"k2"``: a_ijk = ``alpha``; ``"bdeu"``: a_ijk = ``ess`` / (r_i q_i) with q_i = 1 for a
        feature without parent and q_i = number of classes with the class as parent (the class
        node itself gets ``ess`` / n_classes).
    ess : float, default 1.0
        BDeu equivalent sample size.
    arc_prior : float or array of shape (n_features,), default 0.5
        Prior probability of the arc C -> F_i (Assumption 5, p_s of eq. 3). 0.5 for every
        feature is the uniform prior over the 2^N structures; an array gives one value per
        feature. Values must lie in [0, 1]; 1 forces the arc (the MAP naive Bayes), 0 removes it.
    fit_missing : {"em", "available"}, default "em"
        Incomplete training data (Dash & Cooper, section 5). A missing feature value in a
        labelled row is a missing *leaf*: integrating it out leaves exactly the observed-value
        counts in both the marginal likelihood and the parameter posterior of every structure,
        which is also the fixed point of EM's expected statistics for that family, so both
        options use the observed counts for it (exact, no iteration). Unlabelled rows (passed
        as ``fit(..., X_unlabeled=...)``) are used by ``"em"``: the E step gives each row its
        class probabilities under the current theta* model and adds them as expected counts
        N^C_ijk (N^∅ gets the observed values), the M step recomputes theta*; ``"available"``
        ignores unlabelled rows.
    max_em_iter : int, default 100
        Most EM iterations (only used with unlabelled rows).
    tol : float, default 1e-8
        EM stops when no parameter (theta* or class prior) changes by more than ``tol``.
    missing : deprecated
        Former name of ``fit_missing`` (accepted with a FutureWarning until the next release).

    Attributes
    ----------
    arc_posterior_ : ndarray of shape (n_features,)
        P(C -> F_i | D), the weight of theta^C in eq. 13.
    theta_star_ : list of ndarray (n_classes, r_i)
        Model-averaged parameters theta*_i[c, k] = P(F_i = k | C = c) (eq. 12).
    theta_map_ : list of ndarray (n_classes, r_i)
        Eq. 6 parameters of the naive network with all arcs: the MAP naive Bayes, i.e.
        ``NaiveBayes(alpha=alpha).cpts_`` for ``scoring="k2"`` (the paper's baseline).
    theta_empty_ : list of ndarray (r_i,)
        Eq. 6 parameters of each feature without parent.
    class_prior_ : ndarray of shape (n_classes,)
        Eq. 6 class distribution (the class node is parentless in every structure).
    log_ml_arc_, log_ml_empty_ : ndarray of shape (n_features,)
        Log marginal likelihoods (eq. 8) of F_i with and without the class as parent.
    n_iter_ : int
        EM iterations run (0 without unlabelled rows).
    structure_ : networkx.DiGraph
        The averaged structure: class -> feature arcs with ``weight`` (and ``posterior``) =
        P(C -> F_i | D) and ``role`` = "class"; nodes carry ``role`` "class" / "feature" (as in
        ``NaiveBayes``).
    feature_names_, class_name_ : list of str, str
        Node names used in ``structure_``.

    Notes
    -----
    Fitting costs one counting pass over the data, O(N_r N) plus O(N N_f N_c) for the
    parameters — the cost of one MAP naive Bayes. Prediction is O(N N_c) per row; missing
    features at prediction are marginalized (skipped), as in the brute-force average.

    References
    ----------
    Dash, D. & Cooper, G. F. (2002). Exact model averaging with naive Bayesian classifiers.
    ICML, eq. 6 (parameters), 8 (marginal likelihood), 10-12 (theta*), 13 (arc weights).

    Examples
    --------
    >>> from bnma_core.classifiers.manb import MANaiveBayes
    >>> from bnma_core.data import load_dataset
    >>> from bnma_core.datasets import bundled_path
    >>> ds = load_dataset(bundled_path("wbc.csv"))
    >>> manb = MANaiveBayes().fit(ds.X, ds.y, arities=ds.arities[ds.feature_indices])
    >>> manb.arc_posterior_.round(2).tolist()  # P(class -> feature | D) for each feature
    [1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0]
    >>> manb.predict_proba(ds.X[:2]).round(3).tolist()
    [[1.0, 0.0], [0.0, 1.0]]
    """

    _parameter_constraints = {
        "alpha": [Interval("real", 0, None, "neither")],
        "scoring": [Options(*_SCORES)],
        "ess": [Interval("real", 0, None, "neither")],
        "fit_missing": [Options(*_MISSING)],
        "max_em_iter": [Interval("int", 1, None)],
        "tol": [Interval("real", 0, None, "neither")],
        "arc_prior": [Check(lambda v: np.all((np.asarray(v, dtype=np.float64) >= 0)
                                             & (np.asarray(v, dtype=np.float64) <= 1))
                            and np.asarray(v).ndim <= 1,
                            "a probability in [0, 1] or one per feature (values must lie in "
                            "[0, 1])")],
    }
    _renamed_parameters = {"missing": "fit_missing"}

    def __init__(self, *, alpha: float = 1.0, scoring: str = "k2", ess: float = 1.0,
                 arc_prior: Any = 0.5, fit_missing: str = "em", max_em_iter: int = 100,
                 tol: float = 1e-8, missing: Any = DEPRECATED) -> None:
        self.alpha = alpha
        self.scoring = scoring
        self.ess = ess
        self.arc_prior = arc_prior
        self.fit_missing = fit_missing
        self.max_em_iter = max_em_iter
        self.tol = tol
        self.missing = missing

    # --- fitting -----------------------------------------------------------------------------
    def fit(self, X: Any, y: Any, arities: Any = None, X_unlabeled: Any = None) -> MANaiveBayes:
        """Fit on labelled rows ``X``, ``y``; ``X_unlabeled`` (optional) holds rows whose class
        is unknown, used by EM when ``fit_missing="em"``.

        Parameters
        ----------
        X : array-like or DataFrame (n_rows, n_features)
        y : array-like (n_rows,)
        arities : array-like of int, optional
            States per feature when ``X`` is a code array.
        X_unlabeled : array-like or DataFrame (n_unlabeled, n_features), optional

        Returns
        -------
        self
        """
        Xc, yc = self._prepare_fit(X, y, arities)
        Xu = None
        if X_unlabeled is not None:
            Xu = self._prepare_predict(X_unlabeled)
        self._fit_codes(Xc, yc, Xu)
        return self

    def _arc_prior(self, n_features: int) -> np.ndarray:
        """``arc_prior`` as one probability per feature (its shape depends on the data, so it
        is checked here rather than in the parameter table)."""
        prior = np.asarray(self.arc_prior, dtype=np.float64)
        if prior.ndim == 0:
            prior = np.full(n_features, float(prior))
        if prior.shape != (n_features,):
            raise ValueError(f"arc_prior must be one number or one value per feature "
                             f"({n_features}); got shape {prior.shape}.")
        if not np.all((prior >= 0) & (prior <= 1)):
            raise ValueError("arc_prior values are probabilities and must lie in [0, 1].")
        return prior

    def _fit_codes(self, X: np.ndarray, y: np.ndarray, X_unlabeled: np.ndarray | None = None
                   ) -> None:
        n_classes = len(self.classes_)
        arities = np.asarray(self.arities_, dtype=np.int64)
        arc_prior = self._arc_prior(X.shape[1])
        r_max = int(max(arities.max(), 1))
        X = np.ascontiguousarray(X, dtype=CODE_DTYPE)
        y = np.ascontiguousarray(y, dtype=CODE_DTYPE)
        counts = naive_counts(X, y, n_classes, r_max)
        class_counts = np.bincount(y[y >= 0], minlength=n_classes).astype(np.float64)
        self._set_parameters(counts, class_counts, arities, arc_prior)
        self.n_iter_ = 0
        if X_unlabeled is not None and len(X_unlabeled) and self._param("fit_missing") == "em":
            self._em(counts, class_counts, X_unlabeled, arities, arc_prior)
        self._set_structure()

    def _em(self, counts: np.ndarray, class_counts: np.ndarray, X_unlabeled: np.ndarray,
            arities: np.ndarray, arc_prior: np.ndarray) -> None:
        """EM over the classes of unlabelled rows, from the labelled-data model."""
        r_max = counts.shape[1]
        Xu = np.ascontiguousarray(X_unlabeled, dtype=CODE_DTYPE)
        for it in range(int(self.max_em_iter)):
            lj = naive_log_joint(Xu, self._log_prior, self._log_theta)
            resp = np.exp(lj - np.logaddexp.reduce(lj, axis=1, keepdims=True))
            old_theta, old_prior = self._log_theta.copy(), self.class_prior_.copy()
            self._set_parameters(counts + naive_counts_soft(Xu, resp, r_max),
                                 class_counts + resp.sum(axis=0), arities, arc_prior)
            self.n_iter_ = it + 1
            change = max(float(np.max(np.abs(np.exp(self._log_theta) - np.exp(old_theta)))),
                         float(np.max(np.abs(self.class_prior_ - old_prior))))
            if change <= self.tol:
                break

    def _score(self) -> DirichletScore:
        """The family score: BD with a_ijk = ``alpha`` (K2 for alpha = 1) or BDeu(ess)."""
        if self.scoring == "k2":
            return DirichletScore("bd", alpha=float(self.alpha))
        return DirichletScore("bdeu", float(self.ess))

    def _set_parameters(self, counts: np.ndarray, class_counts: np.ndarray,
                        arities: np.ndarray, arc_prior: np.ndarray) -> None:
        """theta^∅, theta^C, marginal likelihoods, arc posteriors and theta* from (expected)
        sufficient statistics ``counts`` (n_features, r_max, n_classes)."""
        p, r_max, n_classes = counts.shape
        score = self._score()
        valid = np.arange(r_max)[None, :] < arities[:, None]  # (p, r_max)
        a_c = np.array([score.cell_alpha(int(ri), n_classes) for ri in arities])  # (p,)
        a_0 = np.array([score.cell_alpha(int(ri), 1) for ri in arities])
        counts0 = counts.sum(axis=2)  # (p, r_max): the parentless family
        # eq. 6 for both families, stacked over features in the (q, r) CPT layout; a zero
        # pseudo-count on padded states keeps them at zero
        theta_c = posterior_cpt(counts.transpose(0, 2, 1),
                                np.where(valid, a_c[:, None], 0.0)[:, None, :]
                                ).transpose(0, 2, 1)  # (p, r_max, n_classes)
        theta_0 = posterior_cpt(counts0[:, None, :],
                                np.where(valid, a_0[:, None], 0.0)[:, None, :])[:, 0, :]
        # eq. 8, one Dirichlet-multinomial per family
        lml_c = np.empty(p)
        lml_0 = np.empty(p)
        for i in range(p):
            ri = int(arities[i])
            lml_c[i] = score.log_ml(counts[i, :ri, :].T)
            lml_0[i] = score.log_ml(counts0[i:i + 1, :ri])
        # eq. 13 weights: local posterior of P_i = {C} versus P_i = ∅
        with np.errstate(divide="ignore"):
            lw_c = np.log(arc_prior) + lml_c
            lw_0 = np.log1p(-arc_prior) + lml_0
        lz = np.logaddexp(lw_c, lw_0)
        log_arc, log_none = lw_c - lz, lw_0 - lz
        # eq. 12 in log space: log(P(arc) theta^C + P(no arc) theta^∅)
        with np.errstate(divide="ignore"):
            log_tc = np.log(theta_c)
            log_t0 = np.log(theta_0)
        log_star = np.logaddexp(log_arc[:, None, None] + log_tc,
                                log_none[:, None, None] + log_t0[:, :, None])
        log_star = np.where(valid[:, :, None], log_star, 0.0)
        self.class_prior_ = posterior_cpt(class_counts[None, :],
                                          score.cell_alpha(n_classes, 1))[0]
        self._log_prior = np.log(self.class_prior_)
        self._log_theta = np.ascontiguousarray(log_star)
        self._log_theta_map = np.ascontiguousarray(np.where(valid[:, :, None], log_tc, 0.0))
        self.arc_posterior_ = np.exp(log_arc)
        self.log_ml_arc_ = lml_c
        self.log_ml_empty_ = lml_0
        ar = [int(a) for a in arities]
        self.theta_star_ = [np.exp(log_star[i, :ri, :].T) for i, ri in enumerate(ar)]
        self.theta_map_ = [theta_c[i, :ri, :].T.copy() for i, ri in enumerate(ar)]
        self.theta_empty_ = [theta_0[i, :ri].copy() for i, ri in enumerate(ar)]

    # --- prediction --------------------------------------------------------------------------
    def _predict_log_proba_codes(self, X: np.ndarray) -> np.ndarray:
        return naive_log_joint(np.ascontiguousarray(X, dtype=CODE_DTYPE), self._log_prior,
                               self._log_theta)

    def predict_proba_map(self, X: Any) -> np.ndarray:
        """Class posteriors of the MAP naive Bayes (every arc C -> F_i, eq. 6 parameters
        ``theta_map_``) from this fit, through the same eq. 4 kernel as :meth:`predict_proba`.

        For ``scoring="k2"`` this equals ``NaiveBayes(alpha=alpha).fit(X, y).predict_proba``
        (tested to 1e-9) at the cost of one pass over ``X``, so Dash & Cooper's comparison of
        the MAP and the model-averaged naive Bayes (Procedure 2) needs one fit, not two.
        Missing features are marginalized (skipped), as in :meth:`predict_proba`.
        """
        lp = naive_log_joint(np.ascontiguousarray(self._prepare_predict(X), dtype=CODE_DTYPE),
                             self._log_prior, self._log_theta_map)
        return np.exp(lp - np.logaddexp.reduce(lp, axis=1, keepdims=True))

    def _set_structure(self) -> None:
        names, cname = self._variable_names()
        self.feature_names_, self.class_name_ = names, cname
        g = nx.DiGraph()
        g.add_node(cname, role="class")
        g.add_nodes_from(names, role="feature")
        for name, w in zip(names, self.arc_posterior_):
            g.add_edge(cname, name, role="class", weight=float(w), posterior=float(w))
        self.structure_ = g

    # --- the models behind the average (bnma_core.explain) -------------------------------
    def model_log_joints(self, X: Any, codes: bool = False, max_exact: int = 16,
                         n_sampled: int = 4096, random_state: Any = 0
                         ) -> tuple[np.ndarray, np.ndarray, str]:
        """The naive feature sets behind the average (DESIGN §15).

        A feature set S (the features with an arc C -> F_i) has the posterior
        P(S | D) = prod_{i in S} P(C -> F_i | D) prod_{i not in S} (1 - P(C -> F_i | D))
        (eq. 13 weights are independent per feature) and the joint
        log P(c, x_obs | S) = log P(c) + sum_{i in S, obs} log theta^C_i(x_i | c)
        + sum_{i not in S, obs} log theta^∅_i(x_i) (eq. 6 parameters). Summing
        P(S | D) P(c, x_obs | S) over all S gives the theta* prediction (eq. 10-12).

        Parameters
        ----------
        X : array-like or DataFrame (n_rows, n_features)
        codes : bool
            ``X`` is already an array of feature codes (-1 = missing).
        max_exact : int
            With at most this many features every one of the 2^N sets is returned
            (log weight log P(S | D)); beyond, ``n_sampled`` sets are drawn from P(S | D)
            (seed ``random_state``; log weight -log n_sampled each), a Monte Carlo estimate
            of the average.
        n_sampled : int
        random_state : int or Generator

        Returns
        -------
        log_weights : (M,) float
        log_joints : (M, n_rows, n_classes) float
        averaging : "joint"
        """
        Xc = np.asarray(X, dtype=np.int64) if codes else np.asarray(
            self._prepare_predict(X), dtype=np.int64)
        n, p = Xc.shape
        arc = np.asarray(self.arc_posterior_, dtype=float)
        if p <= int(max_exact):
            masks = ((np.arange(2 ** p)[:, None] >> np.arange(p)[None, :]) & 1).astype(float)
            with np.errstate(divide="ignore"):
                lw = np.where(masks > 0, np.log(arc)[None, :], np.log1p(-arc)[None, :]).sum(
                    axis=1)
        else:
            rng = np.random.default_rng(random_state)
            masks = (rng.random((int(n_sampled), p)) < arc[None, :]).astype(float)
            lw = np.full(len(masks), -np.log(len(masks)))
        m = len(self.classes_)
        if len(masks) * n * m > 2 ** 26:
            raise ValueError(f"{len(masks)} feature sets x {n} rows is too many at once; pass "
                             f"at most {max(1, 2 ** 26 // (len(masks) * m))} rows per call.")
        obs = Xc >= 0
        xs = np.where(obs, Xc, 0)
        cols = np.arange(p)[None, :]
        log_c = self._log_theta_map[cols, xs]                            # (n, p, m)
        log_0 = np.stack([np.log(t) for t in self._theta_empty_padded()])[cols, xs]  # (n, p)
        diff = np.where(obs[:, :, None], log_c - log_0[:, :, None], 0.0)
        base = np.where(obs, log_0, 0.0).sum(axis=1)                     # (n,)
        lj = (masks @ diff.transpose(1, 0, 2).reshape(p, n * m)).reshape(len(masks), n, m)
        lj += self._log_prior[None, None, :] + base[None, :, None]
        return lw, lj, "joint"

    def _theta_empty_padded(self) -> list[np.ndarray]:
        """theta^∅_i padded to the largest arity (padding 1: never indexed)."""
        r_max = self._log_theta_map.shape[1]
        return [np.concatenate([t, np.ones(r_max - len(t))]) for t in self.theta_empty_]
