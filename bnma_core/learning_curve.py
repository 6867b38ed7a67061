"""Why averaging: learning curves of one network, an average over networks and the truth.

Training sets of growing size are sampled from a known network (ASIA, ALARM, ...); on one
large held-out sample of the same network three predictors of the class variable are scored
by log-loss and accuracy:

* ``"single"`` — the single best network: the DAG of highest score P(G, D) among the best
  DAGs of the orders order MCMC sampled (the best DAG of an order maximises P(G, D) over the
  DAGs consistent with it, node by node: Buntine 1991; Friedman & Koller 2003), with
  posterior-mean CPTs under the same Dirichlet prior; its class posterior by exact inference.
  This is the maximum a posteriori structure as far as the chain found it, i.e. what
  "pick the best network and use it" gives.
* ``"bma"`` — Bayesian model averaging over the same sampled orders (Hwang & Zhang 2005,
  eq. 11): the registered order-MCMC method (default ``bma10``), fitted on the same rows
  with the same seed, so the two differ only in averaging or not.
* ``"true"`` — the generating network itself, by exact inference: the floor no learner
  beats in expectation (its expected log-loss is the conditional entropy H(C | X)).

With few rows the posterior over structures is spread and the single network is
over-confident where its arcs are wrong: averaging lowers the log-loss. With many rows the
posterior concentrates on one structure and the curves meet. Accuracy often hides this (the
arg-max class rarely changes), hence log-loss is the quantity to plot
(``experiments/learning_curve.md`` measures which cases show a gap).

:func:`learning_curve` yields one table per training size as soon as it is done, so a page
can draw the curves while they grow and stop between (or inside) fits.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any

import numpy as np
import pandas as pd

from .classifiers.registry import fit_method, resolve_name
from .data import CODE_DTYPE
from .data.loaders import dataset_from_codes
from .kernels.orders import order_best_parents
from .metrics import row_scores
from .network import DiscreteBN, load_network
from .scores import family_counts, posterior_cpt

__all__ = ["DEFAULT_SIZES", "MODELS", "MODEL_LABELS", "LearningCurveCase", "DEFAULT_CASES",
           "learning_curve", "run_learning_curve", "summarize_learning_curve",
           "single_best_network"]

DEFAULT_SIZES = (25, 50, 100, 200, 500, 1000)
"""Training sizes of a learning curve (rows sampled from the network)."""

MODELS = ("single", "bma", "true")
"""The three predictors, in drawing order."""

MODEL_LABELS = {"single": "single best network", "bma": "order-MCMC averaging (BMA)",
                "true": "true network"}

PREDICT_CHUNK = 256
"""Held-out rows classified per call, so that ``should_stop`` is checked at least this often."""


@dataclass(frozen=True)
class LearningCurveCase:
    """A network and a class variable for which the learning curve shows what averaging buys
    (measured in ``experiments/learning_curve.md``)."""

    network: str
    class_variable: str
    description: str


DEFAULT_CASES = (
    LearningCurveCase("asia", "smoke",
                      "ASIA, class 'smoke': predicted from its children lung and bronc and "
                      "what they explain; averaging removes a quarter to a third of the "
                      "single network's excess log-loss up to 100 rows (accuracy .62 "
                      "against .57 at 50 rows); the curves meet by 1,000."),
    LearningCurveCase("alarm", "VENTLUNG",
                      "ALARM, class VENTLUNG (lung ventilation): at 25 rows averaging is "
                      "ahead of one network (log-loss .36 against .40, accuracy .92 against "
                      ".90 over 15 repetitions); from 50 rows on the two are level within "
                      "the noise: on 37 variables the gain is a very-small-sample effect."),
)
"""Default cases (the Teach page's presets)."""


def _check_args(bn: DiscreteBN, class_variable: str, sizes: Sequence[int], repetitions: int,
                n_test: int) -> tuple[int, list[int]]:
    try:
        ci = bn.index(class_variable)
    except (KeyError, ValueError):
        raise ValueError(f"{class_variable!r} is not a variable of the {bn.name} network; "
                         f"choose one of {', '.join(bn.names)}.") from None
    try:
        sizes = sorted({int(s) for s in sizes})
    except (TypeError, ValueError):
        raise ValueError("sizes must be whole numbers of training rows, e.g. "
                         "(25, 50, 100).") from None
    if not sizes or sizes[0] < 2:
        raise ValueError("sizes must hold at least one training size of 2 rows or more.")
    if sizes[-1] > 100_000:
        raise ValueError(f"The largest training size is {sizes[-1]:,}; at most 100,000 rows "
                         "per fit (use fewer rows).")
    if int(repetitions) < 1:
        raise ValueError("repetitions must be at least 1.")
    if not 1 <= int(n_test) <= 1_000_000:
        raise ValueError("n_test must be between 1 and 1,000,000 held-out rows.")
    return ci, sizes


def _dag_log_score(table: Any, adj: np.ndarray) -> float:
    """log P(G, D) (up to a constant) of a DAG given as ``adj[parent, child]``: the sum of the
    table's local scores of each node's parent set (the set must be in the table)."""
    total = 0.0
    for v in range(adj.shape[1]):
        parents = np.flatnonzero(adj[:, v])
        if table.regime == "candidates":
            pos = {int(u): b for b, u in enumerate(table.cand[v])}
            mask = sum(1 << pos[int(u)] for u in parents)
        else:
            mask = sum(1 << int(u) for u in parents)
        hit = np.flatnonzero(table.masks[v] == np.uint64(mask))
        total += float(table.scores[v, hit[0]])
    return total


def single_best_network(model: Any, train_codes: np.ndarray,
                        states: Sequence[Sequence[str]]) -> DiscreteBN:
    """The single best network of a fitted order-MCMC model.

    Parameters
    ----------
    model : OrderMCMCBMA
        Fitted; its variables are the features then the class (``model.variable_names_``).
    train_codes : (n_rows, n_vars) int array
        The training rows in the model's variable order (class last).
    states : list of list of str
        State labels of each variable, same order.

    Returns
    -------
    DiscreteBN
        Over ``model.variable_names_``: the highest-scoring of the best DAGs of the sampled
        orders (``kernels.orders.order_best_parents``; score = sum of the table's local
        scores, structure prior included), with posterior-mean CPTs under the model's
        Dirichlet prior (K2: a_ijk = 1; BDeu: ess / (r q); DESIGN §3).
    """
    table = model.table_
    arrays = table.arrays()
    best, best_score = None, -np.inf
    for order in np.asarray(model.sampled_orders_):
        adj = order_best_parents(arrays, np.ascontiguousarray(order, dtype=np.int64))
        s = _dag_log_score(table, adj)
        if s > best_score:
            best, best_score = adj, s
    ar = np.asarray(model.variable_arities_, dtype=np.int64)
    codes = np.ascontiguousarray(train_codes, dtype=CODE_DTYPE)
    parents = [np.flatnonzero(best[:, v]).astype(np.int64) for v in range(best.shape[1])]
    cpts = [posterior_cpt(family_counts(codes, v, parents[v], ar), model.scoring_, model.ess_)
            for v in range(len(parents))]
    return DiscreteBN(model.variable_names_, states, parents, cpts, name="single best")


MAX_REDRAWS = 200
"""Training samples drawn at most per repetition until every class occurs in the smallest."""


def _training_pool(bn: DiscreteBN, ci: int, sizes: list[int], rng: np.random.Generator
                   ) -> np.ndarray:
    """Rows of the largest size whose first ``sizes[0]`` rows hold every class state: samples
    are redrawn (same generator) until they do, since a classifier cannot learn a class it
    never saw (its log-loss there would be infinite) -- the curves are conditional on every
    class occurring in the training rows."""
    k = int(bn.arities[ci])
    for _ in range(MAX_REDRAWS):
        pool = bn.sample_codes(sizes[-1], rng)
        if len(np.unique(pool[:sizes[0], ci])) == k:
            return pool
    raise ValueError(f"Among {MAX_REDRAWS} samples of {sizes[0]} rows none held every state "
                     f"of {bn.names[ci]} (a state is too rare); start the sizes higher or "
                     "choose another class variable.")


def _chunked(predict: Callable[[np.ndarray], np.ndarray], X: np.ndarray,
             should_stop: Callable[[], bool]) -> np.ndarray | None:
    """``predict`` over row blocks of :data:`PREDICT_CHUNK`; None when stopped."""
    out = []
    for lo in range(0, len(X), PREDICT_CHUNK):
        if should_stop():
            return None
        out.append(predict(X[lo:lo + PREDICT_CHUNK]))
    return np.concatenate(out) if out else np.zeros((0, 0))


def _fit_bma(method: str, ds: Any, rows: np.ndarray, params: Mapping[str, Any],
             should_stop: Callable[[], bool]) -> Any:
    """The registered order method fitted on ``rows``; through ``fit_stream`` (stoppable
    every ~0.1 s) when it has one. None when stopped."""
    from .classifiers.registry import get_spec

    est = get_spec(method).make(**params)
    if not hasattr(est, "fit_stream") or getattr(est, "dirichlet_grid", None) is not None:
        return fit_method(method, ds, rows, **params)
    labels = np.asarray(ds.classes, dtype=object)[ds.y[rows]]
    stream = est.fit_stream(np.ascontiguousarray(ds.X[rows]), labels,
                            every=max(int(est.n_iter), 1),
                            arities=ds.arities[ds.feature_indices], should_stop=should_stop)
    for _ in stream:  # should_stop ends the stream within ~0.1 s
        pass
    return None if should_stop() else est


def learning_curve(network: str | DiscreteBN = "asia", class_variable: str = "smoke", *,
                   sizes: Sequence[int] = DEFAULT_SIZES, repetitions: int = 5,
                   n_test: int = 5000, method: str = "bma10",
                   method_params: Mapping[str, Any] | None = None, seed: int = 0,
                   should_stop: Callable[[], bool] | None = None
                   ) -> Iterator[pd.DataFrame]:
    """Held-out log-loss and accuracy of the single best network, order-MCMC BMA and the true
    network, for growing training sizes sampled from a known network.

    Parameters
    ----------
    network : str or DiscreteBN
        A bundled network name (``"asia"``, ``"alarm"``, ...), a BIF / XMLBIF path, or a
        network (:func:`bnma_core.network.load_network`).
    class_variable : str
        The variable to predict from all the others.
    sizes : sequence of int
        Training sizes, run smallest first. Repetition r draws one training sample of the
        largest size and uses its first n rows for size n (nested samples: the curves of one
        repetition differ only by the added rows).
    repetitions : int
        Independent training samples per size (intervals over them).
    n_test : int
        Held-out rows, sampled once (seeded) and shared by all sizes and repetitions.
    method : str
        A registered order-MCMC method (``bma1``, ``bma10``, ``bma30``); its sampled orders
        also give the single best network.
    method_params : mapping, optional
        Overrides of the method's defaults (e.g. ``{"n_iter": 20000}``); ``random_state`` is
        set per fit from ``seed``.
    seed : int
        Everything random follows from it: the same seed gives the same tables.
    should_stop : callable, optional
        Checked between fits, every ~0.1 s inside the MCMC and between blocks of
        :data:`PREDICT_CHUNK` held-out rows; when it returns True the generator ends (the
        unfinished size is not yielded).

    Yields
    ------
    pandas.DataFrame
        One per training size: a row per (repetition, model) with columns ``size``,
        ``repetition``, ``model`` (:data:`MODELS`), ``log_loss`` (mean −ln P(true class),
        natural log), ``accuracy``, ``seconds`` (fit and prediction).

    Raises
    ------
    ValueError
        Unknown network, class variable or method, or sizes / repetitions / n_test out of
        range.
    """
    stop = should_stop or (lambda: False)
    bn = load_network(network)
    ci, sizes = _check_args(bn, class_variable, sizes, repetitions, n_test)
    method = _order_method(method)
    params = dict(method_params or {})
    test_codes = bn.sample_codes(int(n_test), np.random.default_rng([int(seed), 0]))
    true_rows = row_scores(test_codes[:, ci], bn.class_posterior(ci, test_codes))
    pools = [_training_pool(bn, ci, sizes, np.random.default_rng([int(seed), 1, r]))
             for r in range(int(repetitions))]
    for n in sizes:
        rows = []
        for r, pool in enumerate(pools):
            if stop():
                return
            fit_seed = int(np.random.SeedSequence([int(seed), 2, n, r]).generate_state(1)[0])
            scored = _score_fit(bn, ci, pool[:n], test_codes, method,
                                {**params, "random_state": fit_seed}, stop)
            if scored is None:
                return
            rows += [(n, r, key, ll, acc, secs) for key, ll, acc, secs in scored]
            rows.append((n, r, "true", float(true_rows["log_loss"].mean()),
                         float(true_rows["accuracy"].mean()), 0.0))
        yield pd.DataFrame(rows, columns=["size", "repetition", "model", "log_loss",
                                          "accuracy", "seconds"])


def _order_method(method: str) -> str:
    """The registered name of ``method``, which must be an order-MCMC method (it has
    ``n_orders``: its sampled orders also give the single best network).

    Parameters
    ----------
    method : str
        A method name or alias.

    Returns
    -------
    str
        The resolved name.

    Raises
    ------
    ValueError
        Not an order-MCMC method.
    """
    method = resolve_name(method)
    from .classifiers.registry import get_spec

    if "n_orders" not in get_spec(method).defaults:
        raise ValueError(f"method must be an order-MCMC method (bma1, bma10, bma30); "
                         f"got {method!r}.")
    return method


def _score_fit(bn: DiscreteBN, ci: int, train: np.ndarray, test_codes: np.ndarray,
               method: str, params: Mapping[str, Any], stop: Callable[[], bool]
               ) -> list[tuple[str, float, float, float]] | None:
    """Fit the BMA method on ``train`` and score it and the single best network of its
    sampled orders on the held-out rows (one repetition of one size of
    :func:`learning_curve`).

    Parameters
    ----------
    bn : DiscreteBN
        The generating network.
    ci : int
        Index of the class variable.
    train, test_codes : (rows, n_vars) int arrays
        Training and held-out rows, network column order.
    method : str
        The registered order-MCMC method.
    params : mapping
        Its parameters, ``random_state`` included.
    stop : callable
        ``should_stop`` of :func:`learning_curve`.

    Returns
    -------
    list of (model, log_loss, accuracy, seconds), or None
        ``"single"`` then ``"bma"``; None when stopped.
    """
    names, states = list(bn.names), [list(s) for s in bn.states]
    n = len(train)
    y_test = test_codes[:, ci]
    feats = [i for i in range(bn.n_vars) if i != ci]
    model_order = feats + [ci]           # the order methods' variables: features, then class
    ds = dataset_from_codes(train, names, bn.arities.copy(), ci, states)
    t0 = time.perf_counter()
    model = _fit_bma(method, ds, np.arange(n), params, stop)
    if model is None:
        return None
    Xt = np.ascontiguousarray(test_codes[:, feats])
    P_bma = _chunked(model.predict_proba, Xt, stop)
    if P_bma is None:
        return None
    index = {str(c): k for k, c in enumerate(ds.classes)}
    aligned = np.zeros((len(Xt), len(ds.classes)))
    aligned[:, [index[str(c)] for c in model.classes_]] = P_bma  # all: see pools
    t_bma = time.perf_counter() - t0
    t0 = time.perf_counter()
    single = single_best_network(model, train[:, model_order],
                                 [states[i] for i in model_order])
    test_single = test_codes[:, model_order].copy()
    test_single[:, -1] = -1
    P_single = _chunked(partial(single.class_posterior, len(model_order) - 1),
                        test_single, stop)
    if P_single is None:
        return None
    t_single = time.perf_counter() - t0
    out = []
    for key, P, secs in (("single", P_single, t_single), ("bma", aligned, t_bma)):
        sc = row_scores(y_test, P)
        out.append((key, float(sc["log_loss"].mean()), float(sc["accuracy"].mean()), secs))
    return out


def run_learning_curve(*args: Any, **kwargs: Any) -> pd.DataFrame:
    """All sizes of :func:`learning_curve` (same arguments) in one table."""
    parts = list(learning_curve(*args, **kwargs))
    if not parts:
        return pd.DataFrame(columns=["size", "repetition", "model", "log_loss", "accuracy",
                                     "seconds"])
    return pd.concat(parts, ignore_index=True)


def summarize_learning_curve(results: pd.DataFrame, metric: str = "log_loss",
                             level: float = 0.9) -> pd.DataFrame:
    """Mean and an interval over repetitions of ``metric`` per (size, model), and the paired
    difference single − BMA.

    The interval is mean ± t_{(1+level)/2, R−1} · sd / sqrt(R) over the R repetitions
    (Student t; no interval with R = 1).

    Returns
    -------
    pandas.DataFrame
        Columns ``size``, ``model``, ``mean``, ``low``, ``high``, ``n``; plus rows with
        ``model == "single - bma"`` holding the paired difference (positive = averaging
        better for log-loss).
    """
    from scipy.stats import t as student_t

    if metric not in ("log_loss", "accuracy"):
        raise ValueError(f"metric must be 'log_loss' or 'accuracy'; got {metric!r}.")
    wide = results.pivot_table(index=["size", "repetition"], columns="model", values=metric)
    if {"single", "bma"} <= set(wide.columns):
        wide["single - bma"] = wide["single"] - wide["bma"]
    out = []
    for model in [m for m in (*MODELS, "single - bma") if m in wide.columns]:
        for size, vals in wide[model].groupby(level="size"):
            v = vals.dropna().to_numpy()
            mean = float(v.mean()) if v.size else float("nan")
            if v.size > 1:
                half = float(student_t.ppf((1 + level) / 2, v.size - 1)
                             * v.std(ddof=1) / np.sqrt(v.size))
            else:
                half = float("nan")
            out.append((int(size), model, mean, mean - half, mean + half, int(v.size)))
    return pd.DataFrame(out, columns=["size", "model", "mean", "low", "high", "n"])
