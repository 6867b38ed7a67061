"""Shared machinery of the EM-type clusterers (EMA-TAN, EMA, EM-TAN, EM-BNET).

Santafé, Lozano & Larrañaga, "Bayesian model averaging of TAN models for clustering" (the
paper; equation numbers are its own), whose model, defaults and protocol are summarised in
docs/specs.md §11-19 (DESIGN §4, §6). A fit is

1. input -> integer codes (-1 = missing) through :meth:`_BaseClusterer._prepare_fit` (the one
   place that calls the data encoder), columns permuted into the ancestral order π;
2. rows with missing cells expanded into their completions (the E step normalises over them,
   i.e. marginalises the missing cells exactly);
3. ``n_init`` starts, each a loop  counts -> M/MA step -> E step  until the largest parameter
   change is below ``tol``; a start whose responsibilities stop depending on x is *collapsed*
   (docs/specs.md §17) and stopped;
4. the start chosen by ``selection`` defines the fitted model.
"""

from __future__ import annotations

import itertools
import math
import warnings
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, ClusterMixin
from sklearn.utils.validation import check_is_fitted

from ..classifiers.base import BOOLEAN, Check, Interval, Options, validate_parameters
from ..data import CODE_DTYPE, DataError, DiscreteDataset, DiscreteEncoder
from ..kernels.clustering import e_step

#: A start is collapsed when max_{l,c} |gamma_l(c) - mean_l gamma_l(c)| falls below this.
COLLAPSE_SPREAD = 0.01
#: Largest number of completions enumerated for one row with missing values.
MAX_COMPLETIONS_PER_ROW = 4096
#: With ``restart_collapsed=True``, at most this many times ``n_init`` starts are drawn.
RESTART_CAP = 3

SELECTIONS = ("best_ll", "best_non_collapsed")
INITS = ("random_nb", "random_resp")
SCORES = ("k2", "bdeu")
CLASS_PARENT = ("optional", "always")


class CollapsedStartWarning(UserWarning):
    """The selected start is collapsed: its clusters do not depend on the data."""


def _seed_sequence(random_state: Any) -> np.random.SeedSequence:
    if isinstance(random_state, np.random.SeedSequence):
        return random_state
    if isinstance(random_state, np.random.Generator):
        return np.random.SeedSequence(int(random_state.integers(2**63)))
    if isinstance(random_state, np.random.RandomState):
        return np.random.SeedSequence(int(random_state.randint(2**31)))
    if random_state is None or isinstance(random_state, (int, np.integer)):
        return np.random.SeedSequence(None if random_state is None else int(random_state))
    raise ValueError(f"random_state must be None, an int or a numpy Generator "
                     f"(got {random_state!r}).")


def expand_missing(X: np.ndarray, arities: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Replace each row with missing cells (-1) by all its completions.

    Returns ``(Xe, starts)``: completed rows, and group boundaries (row l of ``X`` is
    ``Xe[starts[l]:starts[l + 1]]``). Raises :class:`ValueError` when a row would need more
    than ``MAX_COMPLETIONS_PER_ROW`` completions.
    """
    X = np.ascontiguousarray(X, dtype=CODE_DTYPE)
    miss = X < 0
    n_rows = X.shape[0]
    if not miss.any():
        return X, np.arange(n_rows + 1, dtype=np.int64)
    sizes = np.ones(n_rows, dtype=np.int64)
    for i in range(X.shape[1]):
        sizes *= np.where(miss[:, i], arities[i], 1)
    worst = int(np.argmax(sizes))
    if sizes[worst] > MAX_COMPLETIONS_PER_ROW:
        raise ValueError(
            f"Row {worst} has {int(miss[worst].sum())} missing values ({int(sizes[worst])} "
            f"completions). Missing values are marginalised exactly by enumerating their "
            f"completions, at most {MAX_COMPLETIONS_PER_ROW} per row; drop or impute rows "
            "with that many missing values.")
    starts = np.zeros(n_rows + 1, dtype=np.int64)
    np.cumsum(sizes, out=starts[1:])
    Xe = np.repeat(X, sizes, axis=0)
    for row in np.flatnonzero(miss.any(axis=1)):
        cols = np.flatnonzero(miss[row])
        combos = np.array(list(itertools.product(*[range(int(arities[c])) for c in cols])),
                          dtype=CODE_DTYPE)
        Xe[starts[row]:starts[row + 1]][:, cols] = combos
    return np.ascontiguousarray(Xe), starts


def group_sum(gamma: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """Per original row, the sum over its completions (gamma for complete rows)."""
    if gamma.shape[0] == starts.shape[0] - 1:
        return gamma
    return np.add.reduceat(gamma, starts[:-1], axis=0)


def cluster_accuracy(y_true: Any, y_pred: Any) -> float:
    """Accuracy of a partition under the best one-to-one matching of cluster labels to classes
    (Hungarian algorithm, :func:`scipy.optimize.linear_sum_assignment`, on the confusion
    matrix). Unmatched clusters (more clusters than classes) count as errors."""
    from scipy.optimize import linear_sum_assignment

    yt = np.asarray(y_true)
    yp = np.asarray(y_pred)
    if yt.shape != yp.shape or yt.ndim != 1:
        raise ValueError("y_true and y_pred must be 1-D and of the same length.")
    if yt.size == 0:
        raise ValueError("cluster_accuracy needs at least one row.")
    _, ti = np.unique(yt, return_inverse=True)
    _, pi = np.unique(yp, return_inverse=True)
    cm = np.zeros((pi.max() + 1, ti.max() + 1))
    np.add.at(cm, (pi, ti), 1)
    r, c = linear_sum_assignment(-cm)
    return float(cm[r, c].sum() / yt.size)


class _BaseClusterer(ClusterMixin, BaseEstimator):
    """Common parameters, input handling, multi-start loop and prediction.

    Subclasses define ``_make_engine(Xe, starts, arities, order)`` returning an object with
    ``m_step(gamma) -> params``, ``e_step(params, Xe, starts) -> (gamma, ll, row_ll)``,
    ``delta(old, new) -> float``, ``n_params(params) -> float`` and ``prepare(X)`` (codes in
    position order -> what ``e_step`` needs for new rows).
    """

    _uses_order = False
    _name = "clusterer"
    _parameter_constraints = {
        "n_clusters": [Interval("int", 2, None)],
        "n_init": [Interval("int", 1, None)],
        "tol": [Interval("real", 0, None, "neither")],
        "max_iter": [Interval("int", 1, None)],
        "random_state": [None, Interval("int", 0, None), np.random.Generator,
                         np.random.RandomState, np.random.SeedSequence],
        "order": [Options("random", "chow_liu"),
                  Check(lambda v: not isinstance(v, str) and len(v) > 0,
                        "a permutation of the columns (indices or names)")],
        "alpha": [Interval("real", 0, None, "neither")],
        "scoring": [Options(*SCORES)],
        "structure_prior": [Options("uniform"),
                            Check(callable, "a callable f(feature, parents) -> log prior")],
        "class_parent": [Options(*CLASS_PARENT)],
        "selection": [Options(*SELECTIONS)],
        "restart_collapsed": [BOOLEAN],
        "init": [Options(*INITS)],
        "stop_collapsed": [BOOLEAN],
        "n_jobs": [Interval("int", 1, None)],
    }

    def __init__(self, *, n_clusters: int = 2, n_init: int = 10, tol: float = 1e-4,
                 max_iter: int = 200, random_state: Any = None, order: Any = "random",
                 alpha: float = 1.0, scoring: str = "k2", structure_prior: Any = "uniform",
                 class_parent: str = "optional", selection: str = "best_ll",
                 restart_collapsed: bool = False, init: str = "random_nb",
                 stop_collapsed: bool = True, n_jobs: int = 1) -> None:
        self.n_clusters = n_clusters
        self.n_init = n_init
        self.tol = tol
        self.max_iter = max_iter
        self.random_state = random_state
        self.order = order
        self.alpha = alpha
        self.scoring = scoring
        self.structure_prior = structure_prior
        self.class_parent = class_parent
        self.selection = selection
        self.restart_collapsed = restart_collapsed
        self.init = init
        self.stop_collapsed = stop_collapsed
        self.n_jobs = n_jobs

    # --- validation ---------------------------------------------------------------------
    def _check_params(self, n_rows: int) -> None:
        """The declared parameter table (``_parameter_constraints``, DESIGN §6) and the one
        limit that depends on the data: no more clusters than rows."""
        validate_parameters(self)
        if self.n_clusters > n_rows:
            raise ValueError(f"n_clusters={self.n_clusters} is larger than the number of rows "
                             f"({n_rows}).")

    # --- input -----------------------------------------------------------------------------
    def _prepare_fit(self, X: Any, arities: Any) -> np.ndarray:
        """Codes (n, p) int32 with -1 = missing; sets ``arities_``, ``feature_names_in_``
        (DataFrame input), ``feature_states_``, ``n_features_in_``, ``input_encoder_``."""
        self.input_encoder_ = None
        if isinstance(X, DiscreteDataset):
            codes = X.X
            ar = X.arities[X.feature_indices]
            self.feature_names_in_ = np.asarray(X.feature_names, dtype=object)
            self.feature_states_ = X.feature_states
            if arities is not None:
                raise ValueError("arities cannot be given with a DiscreteDataset.")
            self.arities_ = np.asarray(ar, dtype=np.int64)
        elif isinstance(X, pd.DataFrame) or (
                not np.issubdtype(np.asarray(X).dtype, np.number)):
            df = X if isinstance(X, pd.DataFrame) else pd.DataFrame(np.asarray(X, dtype=object))
            df = df.reset_index(drop=True)
            df.columns = [str(c) for c in df.columns]
            if df.shape[1] == 0:
                raise ValueError("X has no columns.")
            if arities is not None:
                raise ValueError("arities can only be given with integer codes.")
            # the one call of the project's encoder
            self.input_encoder_ = DiscreteEncoder().fit(df)
            codes = self.input_encoder_.transform(df)
            self.feature_names_in_ = np.asarray(self.input_encoder_.names, dtype=object)
            self.feature_states_ = self.input_encoder_.states
            self.arities_ = self.input_encoder_.arities
        else:
            Xa = np.asarray(X, dtype=float)
            if Xa.ndim != 2:
                raise ValueError(f"Expected a 2-D array of codes, got {Xa.ndim}-D.")
            if Xa.shape[1] == 0:
                raise ValueError("X has no columns.")
            if np.isinf(Xa).any() or (np.mod(Xa[np.isfinite(Xa)], 1) != 0).any():
                raise ValueError("X must hold integer state codes (0..r-1; -1 or NaN = "
                                 "missing); pass a DataFrame to have values encoded.")
            codes = np.where(np.isnan(Xa), -1, Xa).astype(np.int64)
            codes[codes < 0] = -1
            inferred = np.maximum(codes.max(axis=0) + 1, 1) if len(codes) else np.ones(
                codes.shape[1], np.int64)
            if arities is not None:
                ar = np.asarray(arities, dtype=np.int64)
                if ar.shape != inferred.shape or (ar < inferred).any():
                    raise ValueError("arities must have one entry per column and cover every "
                                     "code in X.")
            else:
                ar = inferred.astype(np.int64)
            self.arities_ = ar
            self.feature_states_ = [[str(s) for s in range(a)] for a in ar]
            codes = codes.astype(CODE_DTYPE)
        codes = np.ascontiguousarray(codes, dtype=CODE_DTYPE)
        if codes.shape[0] == 0:
            raise ValueError("X has no rows.")
        if (codes < 0).all(axis=1).any():
            raise DataError("Some rows have every value missing; remove them.")
        if (self.arities_ < 1).any():
            raise DataError("A column has no observed value.")
        self.n_features_in_ = codes.shape[1]
        return codes

    def _prepare_predict(self, X: Any) -> np.ndarray:
        check_is_fitted(self, "order_")
        if isinstance(X, DiscreteDataset):
            codes = X.X
        elif self.input_encoder_ is not None:
            df = X if isinstance(X, pd.DataFrame) else pd.DataFrame(
                np.asarray(X, dtype=object), columns=list(self.feature_names_in_))
            df = df.reset_index(drop=True)
            df.columns = [str(c) for c in df.columns]
            codes = self.input_encoder_.transform(df)
        else:
            Xa = np.asarray(X.to_numpy() if isinstance(X, pd.DataFrame) else X, dtype=float)
            if Xa.ndim != 2:
                raise ValueError("Expected a 2-D array of codes.")
            codes = np.where(np.isnan(Xa), -1, Xa).astype(np.int64)
        if codes.shape[1] != self.n_features_in_:
            raise ValueError(f"X has {codes.shape[1]} features, but {type(self).__name__} was "
                             f"fitted with {self.n_features_in_}.")
        codes = np.asarray(codes, dtype=np.int64)
        codes[(codes < 0) | (codes >= self.arities_[None, :])] = -1
        if (codes < 0).all(axis=1).any():
            raise DataError("Some rows have every value missing.")
        return np.ascontiguousarray(codes, dtype=CODE_DTYPE)

    def _names(self) -> list[str]:
        fin = getattr(self, "feature_names_in_", None)
        if fin is not None and len(fin) == self.n_features_in_:
            return [str(s) for s in fin]
        return [f"x{j}" for j in range(self.n_features_in_)]

    # --- order -----------------------------------------------------------------------------
    def _resolve_order(self, codes: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        n = codes.shape[1]
        if not self._uses_order:
            return np.arange(n)
        o = self.order
        if isinstance(o, str):
            if o == "random":
                return rng.permutation(n)
            if o == "chow_liu":
                return chow_liu_order(codes, self.arities_)
            if o == "given":
                raise ValueError("order='given' needs the permutation itself: pass "
                                 "order=[...] (column indices or names).")
            raise ValueError(f"order must be 'random', 'chow_liu' or a permutation (got {o!r}).")
        seq = list(o)
        names = self._names()
        idx = [names.index(v) if isinstance(v, str) and v in names else v for v in seq]
        try:
            arr = np.asarray(idx, dtype=np.int64)
        except (TypeError, ValueError):
            raise ValueError(f"order must list column indices or names (got {o!r}).") from None
        if sorted(arr.tolist()) != list(range(n)):
            raise ValueError(f"order must be a permutation of the {n} columns (got {seq!r}).")
        return arr

    # --- starts ----------------------------------------------------------------------------
    def _initial_gamma(self, rng: np.random.Generator, Xe: np.ndarray, starts: np.ndarray,
                       arities_pos: np.ndarray, order: np.ndarray) -> np.ndarray:
        """gamma^(0): a random naive Bayes (theta_C ~ Dir(1), theta(x_i | c) ~ Dir(1), drawn in
        the original column order so that every method and order shares the start) followed by
        an E step; or ``init="random_resp"``: gamma_l ~ Dir(1)."""
        k = self.n_clusters
        n_groups = starts.shape[0] - 1
        if self.init == "random_resp":
            g = rng.dirichlet(np.ones(k), size=n_groups)
            sizes = np.diff(starts)
            return np.ascontiguousarray(np.repeat(g / sizes[:, None], sizes, axis=0))
        theta_c = rng.dirichlet(np.ones(k))
        ar = self.arities_
        tables = [rng.dirichlet(np.ones(int(ar[i])), size=k).T for i in range(len(ar))]
        offs = _offsets(arities_pos)
        D = np.zeros((int(arities_pos.sum()), k))
        for pos, col in enumerate(order):
            D[offs[pos]:offs[pos] + ar[col]] = tables[col]
        gamma = np.empty((Xe.shape[0], k))
        row_ll = np.empty(n_groups)
        n = len(ar)
        e_step(Xe, starts, offs, np.log(theta_c), D, np.zeros((1, 1, k)),
               np.zeros(n + 1, np.int64), np.zeros(0, np.int64), gamma, row_ll)
        return gamma

    def _run_start(self, engine: Any, gamma: np.ndarray, Xe: np.ndarray, starts: np.ndarray,
                   index: int, callback: Callable | None,
                   should_stop: Callable[[], bool] | None) -> dict:
        trace: list[float] = []
        objective: list[float] = []
        params = None
        converged = False
        collapsed = False
        spread = float("nan")
        it = 0
        for it in range(1, self.max_iter + 1):
            new = engine.m_step(gamma)
            gamma, ll, _ = engine.e_step(new, Xe, starts)
            trace.append(ll)
            obj = engine.objective(new, ll)
            if obj is not None:
                objective.append(obj)
            delta = np.inf if params is None else engine.delta(params, new)
            params = new
            gr = group_sum(gamma, starts)
            spread = float(np.abs(gr - gr.mean(axis=0)).max())
            collapsed = spread < COLLAPSE_SPREAD
            if callback is not None:
                callback({"start": index, "iteration": it, "loglik": ll,
                          "collapsed": collapsed, "weights": engine.summary(params)})
            if delta < self.tol:
                converged = True
                break
            if collapsed and self.stop_collapsed:
                break
            if should_stop is not None and should_stop():
                break
        return {"params": params, "loglik": trace[-1], "trace": np.asarray(trace),
                "objective": np.asarray(objective), "n_iter": it, "converged": converged,
                "collapsed": collapsed, "spread": spread, "start": index}

    # --- fit -------------------------------------------------------------------------------
    def fit(self, X: Any, y: Any = None, arities: Any = None, *,
            callback: Callable[[dict], None] | None = None,
            should_stop: Callable[[], bool] | None = None) -> _BaseClusterer:
        """Fit on integer codes (with optional ``arities``), a DataFrame or a
        :class:`~bnma_core.data.DiscreteDataset` (its class column is left out). ``y`` is
        ignored. ``callback(event)`` receives a dict per iteration (start, iteration, loglik,
        collapsed, weights); ``should_stop()`` True ends the fit with the starts run so far."""
        codes = self._prepare_fit(X, arities)
        self._check_params(codes.shape[0])
        ss_order, ss_starts = _seed_sequence(self.random_state).spawn(2)
        order = self._resolve_order(codes, np.random.default_rng(ss_order))
        ar_pos = self.arities_[order]
        Xe, starts = expand_missing(codes[:, order], ar_pos)
        engine = self._make_engine(Xe, starts, ar_pos, order)
        cap = self.n_init * (RESTART_CAP if self.restart_collapsed else 1)
        seeds = ss_starts.spawn(cap)
        results: list[dict] = []

        def one(s: int) -> dict | None:
            if should_stop is not None and should_stop() and results:
                return None
            rng = np.random.default_rng(seeds[s])
            g0 = self._initial_gamma(rng, Xe, starts, ar_pos, order)
            return self._run_start(engine, g0, Xe, starts, s, callback, should_stop)

        nxt = 0
        while nxt < cap:
            usable = sum(not r["collapsed"] for r in results)
            want = self.n_init - (usable if self.restart_collapsed else len(results))
            if want <= 0 or (should_stop is not None and should_stop() and results):
                break
            batch = list(range(nxt, min(cap, nxt + want)))
            nxt = batch[-1] + 1
            if self.n_jobs > 1 and len(batch) > 1:
                with ThreadPoolExecutor(self.n_jobs) as pool:
                    out = list(pool.map(one, batch))
                results.extend(r for r in out if r is not None)
            else:
                for s in batch:
                    r = one(s)
                    if r is not None:
                        results.append(r)
            if not self.restart_collapsed:
                break
        if not results:  # stopped before the first start could run: run one anyway
            results.append(one(0))
        self._finish(engine, results, order, Xe, starts)
        return self

    def _finish(self, engine: Any, results: list[dict], order: np.ndarray, Xe: np.ndarray,
                starts: np.ndarray) -> None:
        lls = np.array([r["loglik"] for r in results])
        ok = np.array([not r["collapsed"] for r in results])
        if self.selection == "best_non_collapsed" and ok.any():
            best = int(np.flatnonzero(ok)[np.argmax(lls[ok])])
        else:
            best = int(np.argmax(lls))
        r = results[best]
        self.order_ = np.asarray(order, dtype=np.int64)
        self._engine = engine
        self._params = r["params"]
        self.loglik_traces_ = [x["trace"] for x in results]
        self.objective_traces_ = [x["objective"] for x in results]
        self.start_logliks_ = lls
        self.start_collapsed_ = ~ok
        self.n_starts_ = len(results)
        self.collapsed_starts_ = int((~ok).sum())
        self.best_start_ = best
        self.n_iter_ = int(r["n_iter"])
        self.converged_ = bool(r["converged"])
        self.collapsed_ = bool(r["collapsed"])
        gamma, ll, row_ll = engine.e_step(self._params, Xe, starts)
        resp = group_sum(gamma, starts)
        self.log_likelihood_ = float(ll)
        self.n_rows_ = int(starts.shape[0] - 1)
        self.labels_ = np.argmax(resp, axis=1)
        self.responsibilities_ = resp
        self._set_model_attributes(engine, self._params, gamma, Xe)
        if self.collapsed_:
            warnings.warn(
                f"{type(self).__name__}: the selected start is collapsed (its clusters do not "
                f"depend on the data); {self.collapsed_starts_} of {self.n_starts_} starts "
                "collapsed. Remedies: selection='best_non_collapsed', restart_collapsed=True, "
                "more starts (n_init), or class_parent='always'.", CollapsedStartWarning,
                stacklevel=3)

    def _set_model_attributes(self, engine: Any, params: Any, gamma: np.ndarray,
                              Xe: np.ndarray) -> None:
        names = self._names()
        k = self.n_clusters
        self.class_prior_ = np.asarray(engine.class_prior(params))
        # per-cluster profiles p(x_i = s | c) from the expected counts of the final E step
        profiles = []
        for pos, col in enumerate(self.order_):
            r = int(self.arities_[col])
            m = np.zeros((k, r))
            for c in range(k):
                m[c] = np.bincount(Xe[:, pos], weights=gamma[:, c], minlength=r)
            profiles.append(m / np.maximum(m.sum(axis=1, keepdims=True), 1e-300))
        inv = np.argsort(self.order_)
        self.cluster_profiles_ = [profiles[inv[i]] for i in range(len(names))]
        self.cluster_sizes_ = np.bincount(self.labels_, minlength=k)

    # --- prediction -------------------------------------------------------------------------
    def _e_step_new(self, X: Any) -> tuple[np.ndarray, np.ndarray]:
        codes = self._prepare_predict(X)
        Xe, starts = expand_missing(codes[:, self.order_], self.arities_[self.order_])
        gamma, _, row_ll = self._engine.e_step(self._params, Xe, starts, new_data=True)
        return group_sum(gamma, starts), row_ll

    def predict_proba(self, X: Any) -> np.ndarray:
        """p(C = c | x) per row, shape (n_rows, n_clusters); missing values marginalised."""
        return self._e_step_new(X)[0]

    def predict(self, X: Any) -> np.ndarray:
        """Most probable cluster of each row."""
        return np.argmax(self.predict_proba(X), axis=1)

    def score_samples(self, X: Any) -> np.ndarray:
        """log p(x) of each row under the fitted model (missing values marginalised)."""
        return self._e_step_new(X)[1]

    def score(self, X: Any, y: Any = None) -> float:
        """Mean log-likelihood per row (scikit-learn convention: higher is better)."""
        return float(np.mean(self.score_samples(X)))

    def n_parameters(self) -> float:
        """Number of free parameters (posterior-expected for averaged models, docs/specs.md §18)."""
        check_is_fitted(self, "order_")
        return float(self._engine.n_params(self._params))

    def bic(self, X: Any = None) -> float:
        """-2 log L + k log N (training data unless ``X`` is given)."""
        ll, n = self._ll_n(X)
        return -2.0 * ll + self.n_parameters() * math.log(n)

    def aic(self, X: Any = None) -> float:
        """-2 log L + 2 k (training data unless ``X`` is given)."""
        ll, _ = self._ll_n(X)
        return -2.0 * ll + 2.0 * self.n_parameters()

    def _ll_n(self, X: Any) -> tuple[float, int]:
        check_is_fitted(self, "order_")
        if X is None:
            return self.log_likelihood_, self.n_rows_
        s = self.score_samples(X)
        return float(s.sum()), len(s)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True
        tags.input_tags.categorical = True
        tags.non_deterministic = False
        return tags


def _offsets(arities: np.ndarray) -> np.ndarray:
    offs = np.zeros(len(arities), dtype=np.int64)
    if len(arities) > 1:
        np.cumsum(arities[:-1], out=offs[1:])
    return offs


def chow_liu_order(codes: np.ndarray, arities: np.ndarray) -> np.ndarray:
    """A learned ancestral order: breadth-first order of the maximum-weight spanning tree of
    the pairwise mutual informations I(X_i; X_j) (Chow & Liu 1968), rooted at the feature with
    the largest total mutual information. The Chow-Liu tree is then inside L(π)."""
    import networkx as nx

    from ..scores import joint_distribution, mutual_information

    n = codes.shape[1]
    if n == 1:
        return np.zeros(1, dtype=np.int64)
    g = nx.Graph()
    g.add_nodes_from(range(n))
    mi = np.zeros((n, n))
    for i in range(n):
        for j in range(i + 1, n):
            mi[i, j] = mi[j, i] = mutual_information(
                joint_distribution(codes, [i, j], arities))
            g.add_edge(i, j, weight=mi[i, j])
    tree = nx.maximum_spanning_tree(g)
    root = int(np.argmax(mi.sum(axis=1)))
    return np.asarray(list(nx.bfs_tree(tree, root)), dtype=np.int64)
