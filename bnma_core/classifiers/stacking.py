"""Averaging over model families weighted by their out-of-sample *conditional* predictive
likelihood (Bayesian stacking and pseudo-BMA; Yao, Vehtari, Simpson & Gelman 2018), and the
selection of one family by inner cross-validation (results: docs/accuracy.md §4, §7).

The joint marginal likelihood P(D | M) that weights structures inside one BMA classifier scores
how well a model explains *all* variables; a classifier is judged on P(c | x). Across model
families (naive Bayes, TAN, AODE's SPODEs, k-dependence networks, order-MCMC BMA, ...) the
weights here use only the class-given-features predictive density, estimated on the training
rows by an inner stratified K-fold cross-validation: every training row i gets, from each
candidate k fitted without its inner fold, the log predictive probability of its class

    l_ik = log p_k(c_i | x_i, D_{-fold(i)}).

Weightings (``weighting``):

* ``"stacking"`` — the stacking weights of Yao et al. (2018), eq. 4 with the log score:
  w = argmax_{w in simplex} sum_i log sum_k w_k exp(l_ik), found by the EM fixed point for
  mixture weights (the objective is concave in w, so the fixed point is its maximum);
* ``"pseudo-bma"`` — Yao et al. eq. 8 (pseudo-BMA): w_k ∝ exp(elpd_k), elpd_k = sum_i l_ik;
* ``"select"`` — all weight on the candidate with the largest elpd_k (cross-validated
  selection by log score; ``"select-accuracy"`` selects by inner accuracy instead, ties to the
  earlier candidate).

Each candidate with a weight is then refitted on all training rows and the prediction is the
mixture p(c | x) = sum_k w_k p_k(c | x). Nothing in the weights sees a test row. Training rows
with a missing value reach the candidates that learn from incomplete rows (their declared
``fit_missing``); the others learn from the complete rows, inside the inner folds too.

References
----------
Yao, Y., Vehtari, A., Simpson, D. & Gelman, A. (2018). Using stacking to average Bayesian
predictive distributions. Bayesian Analysis 13(3), 917-1007 (eqs. 4 and 8).

Magnusson, M., Andersen, M. R., Jonasson, J. & Vehtari, A. (2019). Bayesian leave-one-out
cross-validation for large data. Proceedings of ICML 2019, PMLR 97, 4244-4253 (elpd from a
subsample of the rows).
"""

from __future__ import annotations

import functools
import inspect
import math
import numbers
import warnings
from typing import Any

import numpy as np
from scipy.special import logsumexp

from ..structure.score_table import shared_counting
from .base import BOOLEAN, RANDOM_STATE, Check, DiscreteBNClassifier, Interval, Options

__all__ = ["PredictiveStacking", "stacking_weights", "WEIGHTINGS"]

WEIGHTINGS = ("stacking", "pseudo-bma", "select", "select-accuracy")
INNER_FITS = ("loo", "downdate", "refit")
"""Values of ``inner_fit``: how a candidate predicts its held-out inner fold."""
INNER_PRUNE_EPS = 5e-2
"""Pruning tolerance of the order averages' closed-form inner scores (``loo_log_proba``,
``refit_fixed_orders``): each node term of eq. 9 low by at most log(1 + 5e-2). The inner log
scores only set the weights. Leave-one-out passes of the three order averages (500 rows, one
run, docs/accuracy.md §13): HEPAR II 0.50 CPU s at 1e-6, 0.36 at 1e-4, 0.19 at 1e-2, the
elpds within 0.008 nats of 1e-6's and the stacking weights within 2e-4; ALARM 0.29, 0.19,
0.11 s, elpds within 1e-3 nats, weights equal to four decimals. From 1e-2 to 5e-2 (its
windows hold 21,105 families at 1e-2 for BDeu ESS 20): HEPAR II's ``stack`` 2.91 -> 2.66
times one ``bma10`` fit, weights equal to three decimals; anchors' mean log-loss 0.4531 /
0.4502 / 0.4514 -> 0.4532 / 0.4502 / 0.4514 (seeds 0-2); vote 10-fold CV 0.1036 -> 0.1040
(seeds 0-4, within their spread)."""
LOO_ROWS = 2000
"""Default ``loo_rows``: complete training rows scored by leave-one-out (a sample beyond)."""
LOO_INCOMPLETE_ROWS = 100
"""Default ``loo_incomplete_rows``: rows with a missing value scored (a sample beyond)."""
LOO_MISSING_STATES = 64
"""Default ``loo_missing_states``: the most joint states of a scored row's missing values for
which the order averages score every such row by its own closed-form leave-one-out, and the
states summed out exactly when they hold them out together instead (as many uniform draws
beyond)."""
LOG_FLOOR = math.log(1e-9)
"""Floor of a candidate's log predictive probability: a class a candidate never saw in an inner
training fold would otherwise give log 0 and forbid any weight on it."""


@functools.cache
def _loo_takes(kind: type, name: str) -> bool:
    """Whether a candidate class's ``loo_log_proba`` takes the argument ``name``
    (``prune_eps``, ``held_states``: the order averages' does; UKDB's is exact and has
    neither)."""
    return name in inspect.signature(kind.loo_log_proba).parameters


def stacking_weights(log_pred: np.ndarray, max_iter: int = 10000, tol: float = 1e-13,
                     row_weights: np.ndarray | None = None) -> np.ndarray:
    """Stacking weights of Yao et al. (2018, eq. 4) with the log score.

    Parameters
    ----------
    log_pred : (n, K) array
        l_ik = log p_k(y_i | x_i) out of sample (finite).
    row_weights : (n,) array of positive floats, optional
        v_i: row i stands for v_i rows (a stratified sample of the rows, each weighted by its
        stratum's inverse sampling fraction; Magnusson et al. 2019). Default: ones.

    Returns
    -------
    (K,) weights on the simplex maximising sum_i v_i log sum_k w_k exp(l_ik).

    Notes
    -----
    EM for the weights of a K-component mixture with fixed components: w_k <- mean_i r_ik with
    responsibilities r_ik ∝ w_k exp(l_ik). Each step does not decrease the (concave) objective.
    The steps run in :func:`bnma_core.kernels.stacking.stacking_em`, accelerated by SQUAREM,
    on the densities scaled per row (each row's largest is 1): WBC's plain EM took 9,144 steps
    (1.9 CPU s with ``scipy.special.logsumexp`` per step).
    """
    from ..kernels.stacking import stacking_em

    lp = np.asarray(log_pred, dtype=float)
    if lp.ndim != 2 or lp.shape[1] == 0 or lp.shape[0] == 0:
        raise ValueError("log_pred must be a non-empty (n_rows, n_candidates) array.")
    if not np.isfinite(lp).all():
        raise ValueError("log_pred must be finite (floor the log probabilities first).")
    v = np.ones(len(lp)) if row_weights is None else np.asarray(row_weights, dtype=float)
    if v.shape != (len(lp),) or not (np.isfinite(v).all() and (v > 0).all()):
        raise ValueError("row_weights must be n positive finite numbers.")
    m = lp.max(axis=1)
    w = stacking_em(np.ascontiguousarray(np.exp(lp - m[:, None])), np.ascontiguousarray(v),
                    float(v @ m), int(max_iter), float(tol))
    return w


class PredictiveStacking(DiscreteBNClassifier):
    """Mixture of registered classifiers weighted by their inner-CV conditional log score.

    Parameters
    ----------
    candidates : tuple of str
        Registry names (:mod:`bnma_core.classifiers.registry`) of the model families averaged.
    weighting : {"stacking", "pseudo-bma", "select", "select-accuracy"}
        How the inner-CV log scores become weights (module docstring).
    inner_folds : int
        Inner stratified folds (fewer when the smallest class has fewer training rows; at
        least 2).
    inner_fit : {"loo", "downdate", "refit"}
        How a candidate's out-of-sample log scores l_ik are obtained. ``"loo"`` (default): a
        candidate that offers ``loo_log_proba`` (the order-MCMC averages, UKDB) is fitted once
        on all training rows and gives every training row's leave-one-out class posterior in
        closed form (Dirichlet-multinomial counts without the row; the structure search's own
        dependence on the row ignored; rows with a missing value held out together) — Yao et
        al.'s leave-one-out weights; a candidate without it uses the inner folds below.
        ``"downdate"``: inner folds; a candidate that offers ``refit_fixed_orders`` is fitted
        once on all training rows and each fold is predicted with its sampled orders kept,
        its structure weights and CPTs counted without the fold. ``"refit"``: every candidate
        fitted again without each fold (structure search included). docs/accuracy.md §13
        measures what each changes.
    share_orders : bool
        Order-MCMC candidates that differ only in their Dirichlet prior (``scoring``,
        ``ess``; ``stack``'s three) share one chain: the first of them in ``candidates``
        samples its orders, the others are fitted at those orders under their own prior
        (:meth:`bnma_core.classifiers.order_bma.OrderMCMCBMA.fit_at_orders`), each with its
        own structure weights and CPTs within the orders. False: one chain each.
    loo_rows, loo_incomplete_rows : int or None
        With ``inner_fit="loo"``, the most complete rows, and rows with a missing value,
        whose leave-one-out scores set the weights: beyond them a seeded simple random sample
        of that many, each row weighted by its stratum's size / sample size in the objective
        (:meth:`_scored_rows`; Magnusson et al. 2019). A row with a missing value costs the
        order averages a marginal prediction (its missing values summed out), hundreds of
        times a complete row's closed form. None: every row.
    loo_missing_states : int or None
        With ``inner_fit="loo"``, how the order averages score the scored rows that have a
        missing value (``held_states`` of
        :meth:`bnma_core.classifiers.order_bma.OrderMCMCBMA.loo_log_proba`): when none has
        more than this many joint states of its missing values, each by its own
        leave-one-out in closed form (its completions summed); else held out together
        (refitted on the complete rows), their values summed out once for all orders,
        exactly up to this many joint states, else by this many uniform draws. None: held
        out together and summed as the candidate predicts (exactly up to its
        ``max_missing_states`` per order). Only the weights' estimate depends on it, not the
        fitted candidates.
    random_state : int or None
        Seed of the inner split and of the randomized candidates (resolved in ``fit``).

    Attributes
    ----------
    weights_ : dict name -> weight
    elpd_ : dict name -> sum of inner-CV log predictive probabilities of the training classes
        (estimated from ``scored_rows_`` with their weights when the rows were sampled)
    inner_accuracy_ : dict name -> inner-CV accuracy (likewise)
    scored_rows_ : int array, the training rows whose out-of-sample scores set the weights
    models_ : dict name -> candidate refitted on all training rows (weight > 0 only)
    """

    _parameter_constraints = {
        "candidates": [Check(lambda v: isinstance(v, str) or (
            len(v) > 0 and all(isinstance(n, str) for n in v)),
            "a registry name or a non-empty sequence of them")],
        "weighting": [Options(*WEIGHTINGS)],
        "inner_folds": [Interval("int", 2, None)],
        "inner_fit": [Options(*INNER_FITS)],
        "share_orders": [BOOLEAN],
        "loo_rows": [None, Interval("int", 1, None)],
        "loo_incomplete_rows": [None, Interval("int", 1, None)],
        "loo_missing_states": [None, Interval("int", 1, None)],
        "random_state": [RANDOM_STATE],
    }

    def __init__(self, *, candidates: tuple[str, ...] = ("nb", "tan", "aode", "kdb1", "bma10"),
                 weighting: str = "stacking", inner_folds: int = 5,
                 inner_fit: str = "loo", share_orders: bool = True,
                 loo_rows: int | None = LOO_ROWS,
                 loo_incomplete_rows: int | None = LOO_INCOMPLETE_ROWS,
                 loo_missing_states: int | None = LOO_MISSING_STATES,
                 random_state: Any = 1) -> None:
        self.candidates = candidates
        self.weighting = weighting
        self.inner_folds = inner_folds
        self.inner_fit = inner_fit
        self.share_orders = share_orders
        self.loo_rows = loo_rows
        self.loo_incomplete_rows = loo_incomplete_rows
        self.loo_missing_states = loo_missing_states
        self.random_state = random_state

    def _check(self) -> list[str]:
        from .registry import get_spec

        names = [self.candidates] if isinstance(self.candidates, str) else list(self.candidates)
        if not names:
            raise ValueError("PredictiveStacking needs at least one candidate method.")
        for n in names:
            get_spec(n)  # ValueError naming the registered methods
        if len(set(names)) != len(names):
            raise ValueError(f"candidates must be distinct; got {names}")
        return names

    def _seed(self) -> int:
        from sklearn.utils import check_random_state

        if isinstance(self.random_state, int | np.integer):
            return int(self.random_state)
        return int(check_random_state(self.random_state).randint(0, 2**31 - 1))

    # training rows with missing values go to the candidates that learn from them (each
    # candidate's declared ``fit_missing``); the others get the complete rows
    handles_missing_in_fit = True

    def _make(self, name: str, seed: int):
        from .registry import make_classifier

        return make_classifier(name, random_state=seed)

    def _fit_candidate(self, name: str, seed: int, X: np.ndarray, y: np.ndarray,
                       source: Any = None):
        """Candidate ``name`` fitted on the rows of (``X``, ``y``) it learns from; at the
        orders of ``source`` (a candidate fitted on the same rows, :meth:`_chain_leaders`)
        when given."""
        from .registry import training_rows

        rows = training_rows(name, X)
        est = self._make(name, seed)
        if source is None:
            est.fit(X[rows], y[rows], arities=self.arities_)
        else:
            est.fit_at_orders(X[rows], y[rows], source, arities=self.arities_)
        return est

    def _chain_leaders(self, protos: dict) -> dict[str, str | None]:
        """Candidate name -> the candidate whose sampled orders it reuses (``share_orders``),
        None for one that samples its own: order averages (unfitted ``protos``) that differ
        only in ``scoring`` / ``ess`` reuse the orders of the first of them in
        ``candidates``."""
        from .order_bma import OrderMCMCBMA

        leaders: dict[str, str | None] = {}
        first: dict[str, str] = {}
        for name, est in protos.items():
            leaders[name] = None
            if not (self.share_orders and type(est) is OrderMCMCBMA
                    and est.dirichlet_grid is None):
                continue
            key = repr(sorted((k, repr(v)) for k, v in est.get_params().items()
                              if k not in ("scoring", "ess")))
            if key in first:
                leaders[name] = first[key]
            else:
                first[key] = name
        return leaders

    def _class_log_proba(self, est, X: np.ndarray) -> np.ndarray:
        """(n, n_classes) log P(c | x) of a fitted candidate on this model's class codes."""
        return self._on_classes(est, est.predict_log_proba(X))

    def _fit_codes(self, X: np.ndarray, y: np.ndarray) -> None:
        names = self._check()
        seed = self._seed()
        self.seed_ = seed
        counts = np.bincount(y, minlength=len(self.classes_))
        k = int(min(int(self.inner_folds), max(2, counts[counts > 0].min()), len(y)))
        scored, v = self._scored_rows(X, seed)
        at = np.full(len(y), -1)
        at[scored] = np.arange(len(scored))
        ys = y[scored]
        lp = np.zeros((len(scored), len(names)))
        hits = np.zeros(len(names))  # weighted by v
        # candidates fitted once on all training rows: by leave-one-out (loo) or predicting
        # the inner folds by refit_fixed_orders (downdate)
        protos = {name: self._make(name, seed) for name in names}
        shared = self._shared_priors(protos)
        leaders = self._chain_leaders(protos)
        # the three priors' tables counted once, and the training rows compressed once for
        # every table, leave-one-out pass and refit (shared_counting)
        with shared_counting(shared):
            full, loo = self._fitted_once(protos, leaders, seed, X, y)
            for j, name in enumerate(names):
                if name in loo:
                    lpc = self._loo_log_proba(name, full[name], X, y, scored)
                    lp[:, j] = np.maximum(lpc[np.arange(len(ys)), ys], LOG_FLOOR)
                    hits[j] = v @ (lpc.argmax(axis=1) == ys)
            if len(loo) < len(names):  # some candidate predicts inner folds
                self._inner_fold_scores(names, loo, full, leaders, seed, k, X, y, at, v, lp,
                                        hits)
        elpd = v @ lp
        if self.weighting == "stacking":
            w = stacking_weights(lp, row_weights=v)
        elif self.weighting == "pseudo-bma":
            w = np.exp(elpd - logsumexp(elpd))
        else:
            crit = elpd if self.weighting == "select" else hits
            w = np.zeros(len(names))
            w[int(np.argmax(crit))] = 1.0  # first of the best
        w[w < 1e-6] = 0.0
        w = w / w.sum()
        self.inner_folds_ = k
        self.inner_fit_ = {n: "loo" if n in loo else ("downdate" if n in full else "refit")
                           for n in names}
        self.elpd_ = dict(zip(names, elpd.tolist(), strict=True))
        self.inner_accuracy_ = dict(zip(names, (hits / v.sum()).tolist(), strict=True))
        self.scored_rows_ = scored
        self.weights_ = dict(zip(names, w.tolist(), strict=True))
        self.models_ = {}
        refits: dict[str, Any] = dict(full)
        with shared_counting(shared):
            for name, wk in self.weights_.items():
                # a candidate whose orders a weighted one reuses is fitted too
                if name not in refits and (wk > 0 or any(
                        lead == name and self.weights_[m] > 0 for m, lead in leaders.items())):
                    lead = leaders[name]
                    refits[name] = self._fit_candidate(name, seed, X, y,
                                                       None if lead is None else refits[lead])
                if wk > 0:
                    self.models_[name] = refits[name]

    def _inner_fold_scores(self, names: list[str], loo: set, full: dict, leaders: dict,
                           seed: int, k: int, X: np.ndarray, y: np.ndarray, at: np.ndarray,
                           v: np.ndarray, lp: np.ndarray, hits: np.ndarray) -> None:
        """Fill ``lp`` (scored rows x candidates) and ``hits`` for the candidates not in
        ``loo`` from ``k`` stratified inner folds: an order average of ``full`` predicts each
        fold at its kept orders with the counts without the fold (``refit_fixed_orders``),
        any other candidate is refitted without it (sharing its chain leader's orders within
        the fold). ``at`` maps a training row to its scored row (-1: not scored), ``v`` the
        scored rows' weights."""
        from sklearn.model_selection import StratifiedKFold

        skf = StratifiedKFold(n_splits=k, shuffle=True, random_state=seed)
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message="The least populated class")
            splits = list(skf.split(np.zeros(len(y)), y))
        for tr, te in splits:
            fold: dict[str, Any] = {}  # the candidates refitted on this fold's training rows
            te = te[at[te] >= 0]
            for j, name in enumerate(names):
                if name in loo:
                    continue
                if name in full:
                    est = full[name]
                    est = est.refit_fixed_orders(X[tr], np.searchsorted(
                        np.asarray(est.classes_, dtype=np.int64), y[tr]), INNER_PRUNE_EPS)
                else:
                    lead = leaders[name]
                    est = self._fit_candidate(name, seed, X[tr], y[tr],
                                              None if lead is None else fold.get(lead))
                    fold[name] = est
                if not len(te):
                    continue
                lpc = self._class_log_proba(est, X[te])
                lp[at[te], j] = np.maximum(lpc[np.arange(len(te)), y[te]], LOG_FLOOR)
                hits[j] += v[at[te]] @ (lpc.argmax(axis=1) == y[te])

    def _scored_rows(self, X: np.ndarray, seed: int) -> tuple[np.ndarray, np.ndarray]:
        """The training rows whose out-of-sample scores set the weights, and each one's weight
        v_i in the objective: every row, weight 1; with ``inner_fit="loo"``, beyond
        ``loo_rows`` complete rows or ``loo_incomplete_rows`` rows with a missing value, a
        simple random sample of that many of them (seeded), each standing for its stratum's
        rows / sample size (the stratified estimate of the sum over all rows; Magnusson et
        al. 2019 estimate leave-one-out elpd from a subsample the same way)."""
        if self.inner_fit != "loo":
            return np.arange(len(X)), np.ones(len(X))
        rng = np.random.default_rng(seed)
        incomplete = (X < 0).any(axis=1)
        rows, weights = [], []
        for stratum, cap in ((~incomplete, self.loo_rows),
                             (incomplete, self.loo_incomplete_rows)):
            idx = np.flatnonzero(stratum)
            if cap is not None and len(idx) > cap:
                rows.append(np.sort(rng.choice(idx, size=int(cap), replace=False)))
                weights.append(np.full(int(cap), len(idx) / int(cap)))
            else:
                rows.append(idx)
                weights.append(np.ones(len(idx)))
        order = np.argsort(np.concatenate(rows), kind="stable")
        return np.concatenate(rows)[order], np.concatenate(weights)[order]

    def estimate_fit_bytes(self, n_rows: int, arities: Any, n_classes: int) -> int:
        """Memory of the candidates' fitted models (the sum of those that price theirs:
        ``estimate_fit_bytes``), all of which a fit holds at once."""
        names = self._check()
        seed = self._seed()
        return sum(int(est.estimate_fit_bytes(n_rows, arities, n_classes))
                   for est in (self._make(n, seed) for n in names)
                   if callable(getattr(est, "estimate_fit_bytes", None)))

    def _fitted_once(self, protos: dict, leaders: dict, seed: int, X: np.ndarray,
                     y: np.ndarray) -> tuple[dict, set]:
        """The candidates fitted once on all training rows, and those of them that give their
        out-of-sample log scores by ``loo_log_proba`` (``inner_fit="loo"``); the others of
        them predict the inner folds by ``refit_fixed_orders``. Called inside
        :func:`shared_counting`."""
        from .registry import training_rows

        full: dict[str, Any] = {}
        loo: set[str] = set()
        if self.inner_fit == "refit":
            return full, loo
        for name, proto in protos.items():
            kind = type(proto)
            if self.inner_fit == "loo" and callable(getattr(kind, "loo_log_proba", None)):
                loo.add(name)
            elif not (callable(getattr(kind, "refit_fixed_orders", None))
                      and len(training_rows(name, X)) == len(X)):
                continue
            lead = leaders[name]
            full[name] = self._fit_candidate(
                name, seed, X, y, None if lead is None or lead not in full else full[lead])
        return full, loo

    def _loo_log_proba(self, name: str, est, X: np.ndarray, y: np.ndarray,
                       scored: np.ndarray) -> np.ndarray:
        """(len(scored), n_classes) out-of-sample log P(c | x) of the training rows
        ``scored`` from a candidate fitted once: leave-one-out on the rows it learned from,
        its prediction on the rows it did not (a candidate that learns from complete rows
        only)."""
        from .registry import training_rows

        rows = training_rows(name, X)
        at = np.full(len(X), -1)
        at[rows] = np.arange(len(rows))
        inside = at[scored] >= 0
        codes = np.asarray(est.classes_, dtype=np.int64)
        out = np.empty((len(scored), len(self.classes_)))
        if not inside.all():
            out[~inside] = self._class_log_proba(est, X[scored[~inside]])
        kw = {"prune_eps": INNER_PRUNE_EPS} if _loo_takes(type(est), "prune_eps") else {}
        if _loo_takes(type(est), "held_states"):
            kw["held_states"] = self.loo_missing_states
        out[inside] = self._on_classes(est, est.loo_log_proba(
            X[rows], np.searchsorted(codes, y[rows]), rows=at[scored[inside]], **kw))
        return out

    def _on_classes(self, est, lpc: np.ndarray) -> np.ndarray:
        """(n, n_classes) log probabilities of a candidate (its own classes) on this model's
        class codes (a class the candidate never saw: -inf)."""
        out = np.full((len(lpc), len(self.classes_)), -np.inf)
        out[:, np.asarray(est.classes_, dtype=np.int64)] = lpc
        return out

    @staticmethod
    def _shared_priors(protos: dict) -> list[tuple[str, float]]:
        """The Dirichlet priors of the candidates (unfitted ``protos``) whose score tables on
        the same rows are counted once (``bma10``, ``bma10_bdeu``, ``bma10_smooth``;
        :func:`bnma_core.structure.score_table.shared_counting`), in the order of
        ``candidates``."""
        priors = []
        for proto in protos.values():
            scoring, ess = getattr(proto, "scoring", None), getattr(proto, "ess", None)
            if isinstance(scoring, str) and isinstance(ess, numbers.Real):
                priors.append((scoring, float(ess)))
        return priors

    def _predict_log_proba_codes(self, X: np.ndarray) -> np.ndarray:
        parts = [math.log(self.weights_[n]) + self._class_log_proba(m, X)
                 for n, m in self.models_.items()]
        return logsumexp(np.stack(parts), axis=0)

    def stack_components(self) -> list[tuple[str, float, Any]]:
        """The mixture's components: (registry name, weight w_k, candidate fitted on all
        training rows) for each candidate with a positive weight, in the order of
        ``candidates``. The prediction is P(c | x) = sum_k w_k P_k(c | x); explaining a case
        decomposes it through them (DESIGN §15)."""
        return [(n, float(self.weights_[n]), m) for n, m in self.models_.items()]

    def component_log_proba(self, X: Any, codes: bool = False) -> np.ndarray:
        """log P_k(c | x) of each component of :meth:`stack_components` on this model's classes
        (a class a component never saw: -inf), (K, n_rows, n_classes); the prediction is
        log sum_k w_k P_k(c | x).

        Parameters
        ----------
        X : array-like or DataFrame (n_rows, n_features)
            Rows as for :meth:`predict_proba` (missing values allowed).
        codes : bool
            ``X`` is already an array of feature codes (-1 = missing).
        """
        Xc = np.asarray(X, dtype=np.int32) if codes else self._prepare_predict(X)
        if Xc.ndim == 1:
            Xc = Xc[None, :]
        return np.stack([self._class_log_proba(m, Xc) for m in self.models_.values()])
