"""Evaluation: stratified cross-validation, metrics, significance tests, bias-variance.

Every function takes the data either as a :class:`~bnma_core.data.DiscreteDataset` or as
something :func:`~bnma_core.data.prepare_frame` reads (path, bytes, DataFrame). When the raw
values are available, the discretization of continuous columns is refitted on the training
rows of each split only, so test rows never influence the cut points. The vocabulary of
categorical states, and whether a column is continuous at all, come from the whole file: they
carry no label information.

Methods are given as registry names (``["nb", "tan"]``, see
:mod:`bnma_core.classifiers.registry`) or as a dict ``{name: unfitted estimator}``.
The (method × fold) fits, and the fits of :func:`bias_variance`, run through the grid engine
of the reproductions (:func:`bnma_core.reproduce.runner.run_tasks`): in this process with
``workers=1``, on a local Dask cluster of ``workers`` processes, or on an existing cluster
(``scheduler="tcp://host:port"``), with the same results every way (each fit is a pure
function of its method, its fold and the seed).

:func:`cross_validate` keeps every row's out-of-fold class probabilities
(:class:`CVPredictions`): the one table from which every metric with its interval
(:mod:`bnma_core.metrics`), the calibration and the decision curves
(:mod:`bnma_core.calibration`) are computed, also after a round trip through Parquet.
"""

from __future__ import annotations

import json
import os
import time
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from sklearn.metrics import roc_auc_score
from sklearn.model_selection import StratifiedKFold, train_test_split

from .data import (
    MISSING_POLICIES,
    DataError,
    DiscreteDataset,
    check_discretization,
    load_dataset,
)

RESULT_COLUMNS = ["method", "fold", "accuracy", "log_loss", "auc", "fit_time_s",
                  "predict_time_s", "n_train", "n_test", "n_train_dropped"]
"""Columns of :func:`cross_validate`'s result. ``n_train`` is the number of training rows the
method learned from; ``n_train_dropped`` the training rows with a missing value it could not use
(non-zero only for a method declaring ``fit_missing="drop"``)."""

METRICS = ("accuracy", "log_loss", "auc")
HIGHER_IS_BETTER = {"accuracy": True, "auc": True, "log_loss": False, "fit_time_s": False,
                    "predict_time_s": False}
"""Direction of each metric: Wilcoxon wins and losses count a method *better* than the
baseline (higher accuracy / AUC, lower log-loss / time)."""

_EPS = 1e-15


# --------------------------------------------------------------------------------------------
# Data and methods
# --------------------------------------------------------------------------------------------


@dataclass
class _Source:
    """One data set and how to encode any train/test split of it.

    Categorical columns keep the codes of the whole file (state names carry no label
    information); continuous columns have their cut points refitted on each training split by
    the dataset's own encoder (:meth:`~bnma_core.data.DiscreteEncoder.refit`). Whether a column
    is continuous is decided once on the whole file, like its states.
    """

    ds: DiscreteDataset

    @property
    def y(self) -> np.ndarray:
        return self.ds.y

    @property
    def classes(self) -> list[str]:
        return self.ds.classes

    @property
    def n_rows(self) -> int:
        return self.ds.n_rows

    def split(self, train: np.ndarray, test: np.ndarray
              ) -> tuple[DiscreteDataset, DiscreteDataset]:
        """(training dataset, test dataset) for the row positions ``train`` / ``test``."""
        ds = self.ds
        enc = ds.encoder
        cont = [] if enc is None or ds.raw is None else [
            c for c in enc.columns_ if c.kind == "continuous"]
        codes, arities, states = ds.codes, ds.arities, ds.states
        if cont:
            enc = enc.refit(ds.raw.iloc[train].reset_index(drop=True))
            codes, arities = ds.codes.copy(), ds.arities.copy()
            states = [list(s) for s in ds.states]
            for c in enc.columns_:
                if c.kind != "continuous":
                    continue
                j = ds.names.index(c.name)
                codes[:, j] = c.encode(ds.raw[c.name])
                arities[j], states[j] = len(c.states), list(c.states)

        def part(rows: np.ndarray) -> DiscreteDataset:  # no raw copy: folds are for fitting
            return DiscreteDataset(codes[rows], arities, ds.names, states, ds.class_index,
                                   encoder=enc, row_ids=ds.row_ids[rows])

        return part(train), part(test)


def _source(data: Any, target: str | None, discretization: str, n_bins: int,
            missing: str = "keep") -> _Source:
    """The data as a :class:`DiscreteDataset` read by :func:`~bnma_core.data.load_dataset`
    (the one path from a table to codes), rows with a missing value kept or dropped."""
    if missing not in MISSING_POLICIES:
        raise DataError(f"Unknown missing-value policy {missing!r}; use 'keep' or 'drop'.")
    if isinstance(data, DiscreteDataset):
        return _Source(data.complete_rows() if missing == "drop" else data)
    check_discretization(discretization, n_bins)
    return _Source(load_dataset(data, target, discretization=discretization, n_bins=n_bins,
                                missing=missing))


def _estimators(methods: Any, seed: int, method_params: Mapping[str, Mapping[str, Any]] | None
                ) -> dict[str, Any]:
    from .classifiers.registry import make_classifier

    method_params = dict(method_params or {})
    if isinstance(methods, str):
        methods = [m.strip() for m in methods.split(",") if m.strip()]
    if isinstance(methods, Mapping):
        out = dict(methods)
    else:
        out = {}
        for name in methods:
            overrides = {"random_state": seed, **dict(method_params.get(name, {}))}
            out[name] = make_classifier(name, **overrides)
    if not out:
        raise ValueError("No methods given; name at least one method (e.g. nb).")
    return out


def _check_methods_fit(ests: Mapping[str, Any], ds: DiscreteDataset) -> None:
    """Refuse, before any fit, methods whose declared limits the data exceed, and those whose
    resource guard, priced on all rows, the data would pass (B-RAI's tree size:
    :func:`~bnma_core.classifiers.registry.resource_limit`)."""
    from .classifiers.registry import check_capabilities, resource_limit

    problems = []
    for name, est in ests.items():
        try:
            check_capabilities(est, ds.n_vars, len(ds.classes), label=name)
        except ValueError as exc:
            problems.append(str(exc))
            continue
        why = resource_limit(est, ds, label=name)
        if why:
            problems.append(why)
    if problems:
        raise ValueError(" ".join(problems))


# --------------------------------------------------------------------------------------------
# Metrics
# --------------------------------------------------------------------------------------------


def aligned_proba(est: Any, X: np.ndarray, classes: Sequence[str]) -> np.ndarray:
    """``est.predict_proba(X)`` with one column per class of the dataset, in code order
    (classes unseen in training get probability 0).

    Parameters
    ----------
    est : fitted estimator whose ``classes_`` are class labels (as
        :func:`~bnma_core.classifiers.registry.fit_method` gives)
    X : feature codes
    classes : the dataset's class labels (``DiscreteDataset.classes``)
    """
    P = np.asarray(est.predict_proba(X), dtype=float)
    index = {str(c): k for k, c in enumerate(classes)}
    out = np.zeros((P.shape[0], len(classes)))
    out[:, [index[str(c)] for c in est.classes_]] = P
    return out


def classification_metrics(y: np.ndarray, P: np.ndarray) -> dict[str, float]:
    """Accuracy, log-loss and AUC of class probabilities.

    Parameters
    ----------
    y : (n,) int array of true class codes
    P : (n, n_classes) array, column k = P(class code k | row)

    Returns
    -------
    dict with ``accuracy`` (share of rows whose most probable class is the true one),
    ``log_loss`` (mean of -ln P(true class), probabilities clipped at 1e-15) and ``auc``
    (binary ROC AUC of column 1; with more classes the macro one-vs-rest mean over the
    classes present; NaN when only one class is present).
    """
    y = np.asarray(y, dtype=np.int64)
    P = np.asarray(P, dtype=float)
    n_classes = P.shape[1]
    pred = np.argmax(P, axis=1)
    acc = float(np.mean(pred == y))
    p_true = np.clip(P[np.arange(len(y)), y], _EPS, 1.0)
    ll = float(-np.mean(np.log(p_true)))
    present = np.unique(y)
    if len(present) < 2:
        auc = float("nan")
    elif n_classes == 2:
        auc = float(roc_auc_score(y, P[:, 1]))
    else:
        aucs = [roc_auc_score(y == c, P[:, c]) for c in present]
        auc = float(np.mean(aucs))
    return {"accuracy": acc, "log_loss": ll, "auc": auc}


_metrics = classification_metrics  # the name used before


def _cv_cell(name: str, est: Any, fold: int, split: tuple[DiscreteDataset, DiscreteDataset]
             ) -> dict[str, Any]:
    """One (method, fold) cell of a cross-validation: fit on the fold's training part, predict
    its test part. A pure function of its arguments (the estimator carries its seed), so it
    gives the same result in this process and on any Dask worker."""
    from .classifiers.registry import fit_method

    train, test = split
    t0 = time.perf_counter()
    model = fit_method(est, train)
    t1 = time.perf_counter()
    P = aligned_proba(model, test.X, test.classes)
    t2 = time.perf_counter()
    used = int(model.n_train_rows_)
    return {"method": name, "fold": fold, **classification_metrics(test.y, P),
            "fit_time_s": t1 - t0, "predict_time_s": t2 - t1, "n_train": used,
            "n_test": test.n_rows, "n_train_dropped": train.n_rows - used, "_proba": P}


def _cv_splits(src: _Source, folds: int, seed: int
               ) -> list[tuple[int, DiscreteDataset, DiscreteDataset, np.ndarray]]:
    """(fold, training dataset, test dataset, test row positions) of each stratified fold."""
    skf = StratifiedKFold(n_splits=folds, shuffle=True, random_state=seed)
    splits = []
    for f, (tr, te) in enumerate(skf.split(np.zeros(src.n_rows), src.y)):
        train, test = src.split(tr, te)
        splits.append((f, train, test, te))
    return splits


def _fold_cut_points(train: DiscreteDataset) -> dict[str, list[float]]:
    """Cut points of each continuous column as fitted for one training part (empty when the
    data has no continuous column)."""
    enc = train.encoder
    if enc is None:
        return {}
    return {c.name: [float(x) for x in c.cuts] for c in enc.columns_
            if c.kind == "continuous" and c.cuts is not None}


def _engine_workers(workers: Any, scheduler: str | None, n_jobs: Any) -> int:
    """The runner's ``workers`` (0 = in this process) for ``cross_validate``'s ``workers``
    (1 = in this process); ``n_jobs`` is the former name (-1 = every core)."""
    if n_jobs is not None:
        warnings.warn("n_jobs is renamed workers (the processes of the Dask grid engine); "
                      "n_jobs will be removed.", FutureWarning, stacklevel=3)
        workers = (os.cpu_count() or 1) if n_jobs == -1 else n_jobs
    if isinstance(workers, bool) or not isinstance(workers, (int, np.integer)) or workers < 1:
        raise ValueError(f"workers must be a whole number of at least 1 (got {workers!r}); "
                         "1 runs in this process.")
    return 0 if int(workers) == 1 and scheduler is None else int(workers)


STOP_POLL_SECONDS = 0.1
"""How often a cross-validation in this process asks ``should_stop`` while a fit runs."""


class _Stopped(Exception):
    """Raised in :func:`_cv_run` when ``should_stop`` turned True while a fit ran."""


def _abandonable(fn: Callable[..., Any], should_stop: Callable[[], bool]
                 ) -> Callable[..., Any]:
    """``fn`` run in a daemon thread and waited for in slices of :data:`STOP_POLL_SECONDS`,
    asking ``should_stop`` between them: when it turns True the wait ends at once
    (:class:`_Stopped`) and the fit is abandoned; it finishes in its thread and its result is
    dropped. A fit cannot be interrupted from outside (a numba kernel, a stack of 24 inner
    fits), so this is how Stop ends a run within a fraction of a second rather than after the
    fit in progress (about 20 s for ``stack`` on a busy server; DESIGN §7). The thread
    inherits the caller's CPU priority."""
    import threading

    def run(*args: Any) -> Any:
        box: dict[str, Any] = {}
        done = threading.Event()

        def target() -> None:
            try:
                box["value"] = fn(*args)
            except BaseException as exc:  # noqa: BLE001 - handed to the waiting caller
                box["error"] = exc
            finally:
                done.set()

        threading.Thread(target=target, name="bnma-cv-fit", daemon=True).start()
        while not done.wait(STOP_POLL_SECONDS):
            if should_stop():
                raise _Stopped
        if "error" in box:
            raise box["error"]
        return box["value"]

    return run


def _cv_run(src: _Source, ests: Mapping[str, Any], splits: list, workers: int,
            scheduler: str | None, progress: Callable[[int, int, str, int], None] | None,
            should_stop: Callable[[], bool] | None
            ) -> tuple[list[dict[str, Any]], dict[str, np.ndarray]]:
    """Run the (method × fold) cells through the grid engine: (result rows in (method, fold)
    order, out-of-fold probabilities per method), calling ``progress`` after each cell."""
    from .reproduce.runner import Shared, run_tasks

    n_classes = len(src.classes)
    tasks = [(name, est, f, Shared(f)) for name, est in ests.items() for f, *_ in splits]
    total = len(tasks)
    rows: dict[int, dict[str, Any]] = {}
    proba: dict[str, np.ndarray] = {}

    def done(i: int, res: dict[str, Any]) -> None:
        P = res.pop("_proba")
        out = proba.setdefault(res["method"], np.full((src.n_rows, n_classes), np.nan))
        out[splits[res["fold"]][3]] = P
        rows[i] = res
        if progress is not None:
            progress(len(rows), total, res["method"], res["fold"])

    local = workers == 0 and scheduler is None and should_stop is not None
    try:  # in this process a fit in progress is abandoned on Stop; Dask cancels its own
        run_tasks(_abandonable(_cv_cell, should_stop) if local else _cv_cell, tasks,
                  on_result=done, workers=workers, scheduler=scheduler,
                  shared=[(train, test) for _, train, test, _ in splits],
                  should_stop=should_stop)
    except _Stopped:
        pass
    proba = {name: proba[name] for name in ests if name in proba}
    return [rows[i] for i in sorted(rows)], proba


# --------------------------------------------------------------------------------------------
# Cross-validation
# --------------------------------------------------------------------------------------------


def cross_validate(data: Any, methods: Sequence[str] | Mapping[str, Any], folds: int = 10,
                   seed: int = 1, target: str | None = None, discretization: str = "median",
                   n_bins: int = 3, n_jobs: int | None = None,
                   progress: Callable[[int, int, str, int], None] | None = None,
                   should_stop: Callable[[], bool] | None = None,
                   method_params: Mapping[str, Mapping[str, Any]] | None = None,
                   return_proba: bool = False, missing: str = "keep", *, workers: int = 1,
                   scheduler: str | None = None
                   ) -> pd.DataFrame | tuple[pd.DataFrame, CVPredictions]:
    """Stratified k-fold cross-validation of several methods on one data set.

    Parameters
    ----------
    data : DiscreteDataset, path, bytes or DataFrame
        A dataset with ``raw`` values and an ``encoder`` has its discretization refitted on each
        training fold with the encoder's settings (``discretization`` / ``n_bins`` ignored), one
        without raw values is used as coded; anything else is read by
        :func:`~bnma_core.data.prepare_frame` (``target``: the class column) and discretized per
        fold with ``discretization`` / ``n_bins``.
    methods : list of registry names, comma-separated string, or dict name -> estimator
    folds : int
        Number of stratified folds (``StratifiedKFold(shuffle=True, random_state=seed)``).
    seed : int
        Seed of the fold split; also passed as ``random_state`` to randomized registry methods.
    n_jobs : int, optional
        Former name of ``workers`` (FutureWarning; -1 = every core).
    progress : callable, optional
        ``progress(done, total, method, fold)`` after each finished fit.
    should_stop : callable, optional
        Checked before each fit and every 0.1 s while one runs here (at least every 0.5 s on Dask,
        which then cancels the unfinished fits); once True, the finished fits' results are returned
        at once (a fit running here is abandoned: it ends in its own thread, its result dropped).
    method_params : dict, optional
        ``{name: {param: value}}`` overrides for registry methods.
    return_proba : bool
        Also return the out-of-fold probabilities (:class:`CVPredictions`, whence every metric,
        calibration and decision curve, e.g. :func:`roc_curves`): ``(results, predictions)``.
    missing : {"keep", "drop"}
        Rows with a missing feature value: ``"keep"`` (default, as the CLI and the dashboard) or
        ``"drop"`` them before the folds are made (all methods then use complete rows only).
    workers : int
        1 (default): fits run one after another in this process; more: on a local Dask cluster of
        that many processes (:func:`bnma_core.reproduce.runner.run_tasks`). Same results.
    scheduler : str, optional
        Address of an existing Dask scheduler (``tcp://host:port``) to run the fits on
        (``workers`` is then ignored); its workers need this package installed.

    Returns
    -------
    DataFrame
        One row per (method, fold), in method then fold order: method, fold, accuracy, log_loss
        (natural log, probabilities clipped at 1e-15), auc (binary ROC AUC; macro one-vs-rest
        over the classes in the test fold for more than two classes; NaN if it has one class),
        fit_time_s, predict_time_s, n_train (training rows the method learned from), n_test,
        n_train_dropped (training rows with a missing value the method could not use).

    Notes
    -----
    Every method gets the same folds and training rows, incomplete ones included, and is fit by
    :func:`bnma_core.classifiers.registry.fit_method` as it declares: every registered method learns
    from all rows (available-case counts or EM), one declaring ``fit_missing="drop"`` from complete
    rows only. Test folds keep every row (the models marginalize missing values).

    Raises
    ------
    DataError
        Too few rows for the number of folds (a fold smaller than the number of classes).
    ValueError
        Unknown method, bad ``folds``, or a method whose declared limits (number of variables,
        two classes only) the data exceed (raised before any fit).
    """
    engine_workers, src, ests, splits = _cv_setup(data, methods, folds, seed, target,
                                                  discretization, n_bins, method_params,
                                                  missing, workers, scheduler, n_jobs)
    rows, proba = _cv_run(src, ests, splits, engine_workers, scheduler, progress, should_stop)
    results = pd.DataFrame(rows, columns=RESULT_COLUMNS)
    if return_proba:
        return results, _cv_predictions(src, splits, proba, seed)
    return results


def _cv_setup(data: Any, methods: Any, folds: Any, seed: int, target: str | None,
              discretization: str, n_bins: int,
              method_params: Mapping[str, Mapping[str, Any]] | None, missing: str,
              workers: Any, scheduler: str | None, n_jobs: Any
              ) -> tuple[int, _Source, dict[str, Any], list]:
    """The engine workers, data, estimators and folds of :func:`cross_validate`, every check
    made before any fit: (workers, source, name -> estimator, :func:`_cv_splits`)."""
    engine_workers = _engine_workers(workers, scheduler, n_jobs)
    src = _source(data, target, discretization, n_bins, missing)
    ests = _estimators(methods, seed, method_params)
    _check_methods_fit(ests, src.ds)
    splits = _cv_splits(src, _check_folds(folds, src), seed)
    return engine_workers, src, ests, splits


def _cv_predictions(src: _Source, splits: list, proba: dict[str, np.ndarray],
                    seed: int) -> CVPredictions:
    """The out-of-fold predictions of :func:`cross_validate` (``return_proba=True``): each
    row's fold, row id and true class, each method's probabilities and each fold's cut
    points."""
    fold_of = np.empty(src.n_rows, dtype=np.int64)
    for f, _, _, te in splits:
        fold_of[te] = f
    ds = src.ds
    return CVPredictions(
        src.y.copy(), list(src.classes), proba, folds=fold_of,
        row_ids=np.asarray(ds.row_ids, dtype=np.int64).copy(), seed=int(seed),
        cut_points={f: _fold_cut_points(train) for f, train, _, _ in splits},
        class_name=ds.class_name)


PREDICTION_KEY_COLUMNS = ["row", "fold", "method", "true_class"]
"""The first columns of :meth:`CVPredictions.table`; one probability column ``P(<class>)``
per class follows."""

_PARQUET_META = b"bnma.cv_predictions"


def proba_column(label: Any) -> str:
    """The name of the probability column of class ``label`` in :meth:`CVPredictions.table`."""
    return f"P({label})"


@dataclass
class CVPredictions:
    """Out-of-fold class probabilities of a cross-validation run: the one table every metric,
    calibration and decision curve of the run is computed from.

    Attributes
    ----------
    y : (n_rows,) int array of true class codes
    classes : list of str, the class labels (code order)
    proba : dict method -> (n_rows, n_classes) array; rows of folds not run (stopped early)
        are NaN
    folds : (n_rows,) int array, the fold whose test part each row was in (None when unknown)
    row_ids : (n_rows,) int array, each row's number in the file (0 = first data row)
    seed : the seed of the fold split and of the randomized methods
    cut_points : ``{fold: {column: [cut points]}}``, the discretization of each continuous
        column as fitted on that fold's training rows (empty dicts without continuous columns)
    class_name : the outcome column
    """

    y: np.ndarray
    classes: list[str]
    proba: dict[str, np.ndarray]
    folds: np.ndarray | None = None
    row_ids: np.ndarray | None = None
    seed: int | None = None
    cut_points: dict[int, dict[str, list[float]]] = field(default_factory=dict)
    class_name: str | None = None

    @property
    def methods(self) -> list[str]:
        return list(self.proba)

    def _rows(self) -> np.ndarray:
        return (np.arange(len(self.y)) if self.row_ids is None
                else np.asarray(self.row_ids, dtype=np.int64))

    def finished(self, method: str) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
        """(y, P, folds) of the rows ``method`` predicted (all of them unless the run was
        stopped early)."""
        if method not in self.proba:
            raise ValueError(f"{method!r} has no predictions; methods: "
                             + ", ".join(self.proba) + ".")
        P = self.proba[method]
        ok = ~np.isnan(P).any(axis=1)
        folds = None if self.folds is None else np.asarray(self.folds)[ok]
        return self.y[ok], P[ok], folds

    def table(self) -> pd.DataFrame:
        """The tidy table: one row per (method, predicted row) with ``row`` (file row number),
        ``fold``, ``method``, ``true_class`` (label) and one probability column per class
        (:func:`proba_column`), methods in run order, rows in file order."""
        rows = self._rows()
        folds = (np.full(len(self.y), -1, dtype=np.int64) if self.folds is None
                 else np.asarray(self.folds, dtype=np.int64))
        labels = np.asarray(self.classes, dtype=object)
        parts = []
        for name, P in self.proba.items():
            ok = ~np.isnan(P).any(axis=1)
            part = pd.DataFrame({"row": rows[ok], "fold": folds[ok], "method": name,
                                 "true_class": labels[self.y[ok]]})
            for k, c in enumerate(self.classes):
                part[proba_column(c)] = P[ok, k]
            parts.append(part)
        cols = [*PREDICTION_KEY_COLUMNS, *map(proba_column, self.classes)]
        if not parts:
            return pd.DataFrame(columns=cols)
        return pd.concat(parts, ignore_index=True)[cols]

    @classmethod
    def from_table(cls, table: pd.DataFrame, classes: Sequence[str] | None = None, *,
                   seed: int | None = None,
                   cut_points: Mapping[int, Mapping[str, Sequence[float]]] | None = None,
                   class_name: str | None = None) -> CVPredictions:
        """The predictions of a table in the layout of :meth:`table` (e.g. read back from a
        file); ``classes`` gives the code order (default: the order of the probability
        columns). Rows are the rows the table holds, in file order."""
        missing = [c for c in PREDICTION_KEY_COLUMNS if c not in table.columns]
        if missing:
            raise ValueError("The table has no column " + ", ".join(missing) + "; it needs "
                             + ", ".join(PREDICTION_KEY_COLUMNS) + " and one P(class) column "
                             "per class.")
        if classes is None:
            classes = [c[2:-1] for c in table.columns if c.startswith("P(") and c.endswith(")")]
        classes = [str(c) for c in classes]
        absent = [proba_column(c) for c in classes if proba_column(c) not in table.columns]
        if len(classes) < 2 or absent:
            raise ValueError("The table needs one probability column per class, named "
                             "P(<class>), for at least two classes.")
        from .export import csv_safe

        code = {c: k for k, c in enumerate(classes)}
        # a label a spreadsheet would read as a formula was written with a leading quote
        # (bnma_core.export.table_csv); read it back as the class it names
        code.update({csv_safe(c): k for c, k in list(code.items())})
        truth = table["true_class"].astype(str)
        unknown = sorted(set(truth) - set(code))
        if unknown:
            raise ValueError(f"True class {unknown[0]!r} is not one of the classes "
                             + ", ".join(classes) + ".")
        rows = np.unique(table["row"].to_numpy(dtype=np.int64))
        pos = np.searchsorted(rows, table["row"].to_numpy(dtype=np.int64))
        y = np.full(len(rows), -1, dtype=np.int64)
        y[pos] = truth.map(code).to_numpy(dtype=np.int64)
        folds = np.full(len(rows), -1, dtype=np.int64)
        folds[pos] = table["fold"].to_numpy(dtype=np.int64)
        cols = [proba_column(c) for c in classes]
        proba = {}
        for name in dict.fromkeys(table["method"].astype(str)):
            sel = (table["method"].astype(str) == name).to_numpy()
            P = np.full((len(rows), len(classes)), np.nan)
            P[pos[sel]] = table.loc[sel, cols].to_numpy(dtype=float)
            proba[name] = P
        return cls(y, classes, proba, folds=folds, row_ids=rows, seed=seed,
                   cut_points={int(f): {str(k): [float(x) for x in v] for k, v in cp.items()}
                               for f, cp in (cut_points or {}).items()},
                   class_name=class_name)

    # --- storage --------------------------------------------------------------------------
    def _meta(self) -> dict[str, Any]:
        return {"classes": list(self.classes), "seed": self.seed, "class_name": self.class_name,
                "cut_points": {str(f): cp for f, cp in self.cut_points.items()}}

    def to_parquet(self, path: str | Path) -> Path:
        """Write :meth:`table` to a Parquet file, with the class order, seed, outcome name and
        per-fold cut points in the file's metadata (read back by :meth:`read_parquet`)."""
        import pyarrow as pa
        import pyarrow.parquet as pq

        t = pa.Table.from_pandas(self.table(), preserve_index=False)
        meta = {**(t.schema.metadata or {}),
                _PARQUET_META: json.dumps(self._meta()).encode("utf-8")}
        pq.write_table(t.replace_schema_metadata(meta), str(path))
        return Path(path)

    @classmethod
    def read_parquet(cls, path: str | Path) -> CVPredictions:
        """The predictions written by :meth:`to_parquet`."""
        import pyarrow.parquet as pq

        t = pq.read_table(str(path))
        raw = (t.schema.metadata or {}).get(_PARQUET_META)
        if raw is None:
            raise ValueError(f"{path} holds no cross-validation predictions (written by "
                             "CVPredictions.to_parquet).")
        meta = json.loads(raw)
        return cls.from_table(t.to_pandas(), meta["classes"], seed=meta.get("seed"),
                              cut_points={int(f): cp for f, cp in
                                          (meta.get("cut_points") or {}).items()},
                              class_name=meta.get("class_name"))

    # --- metrics from the table ----------------------------------------------------------
    def metric_intervals(self, **kwargs: Any) -> pd.DataFrame:
        """:func:`bnma_core.metrics.metric_intervals` of each method on the rows it predicted,
        pooled and per fold (keywords: ``level``, ``n_bootstrap``, ``seed``)."""
        from .metrics import metric_intervals

        parts = []
        for name in self.proba:
            y, P, folds = self.finished(name)
            if len(y):
                parts.append(metric_intervals(y, P, folds=folds, classes=self.classes,
                                              **kwargs).assign(method=name))
        out = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()
        return out[["method", *[c for c in out.columns if c != "method"]]] if parts else out

    def calibration_summary(self, positive: Any = None, **kwargs: Any) -> pd.DataFrame:
        """:func:`bnma_core.calibration.calibration_summary` of each method (pooled and per
        fold; the positive class for two classes, top-label for more unless ``positive``)."""
        from .calibration import calibration_summary

        parts = []
        for name in self.proba:
            y, P, folds = self.finished(name)
            if len(y):
                parts.append(calibration_summary(y, P, positive=positive, classes=self.classes,
                                                 folds=folds, **kwargs).assign(method=name))
        out = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()
        return out[["method", *[c for c in out.columns if c != "method"]]] if parts else out

    def reliability(self, positive: Any = None, **kwargs: Any
                    ) -> tuple[dict[str, pd.DataFrame], dict[str, pd.DataFrame], str]:
        """CORP reliability curves and decompositions of each method, and the event's
        description (``"P(<class>)"`` or ``"top-label"``): the inputs of
        :func:`bnma_core.viz.calibration.reliability_figure`."""
        from .calibration import calibration_target, corp_decomposition, corp_reliability

        curves, decomp, target = {}, {}, ""
        for name in self.proba:
            y, P, _ = self.finished(name)
            if not len(y):
                continue
            f, o, target = calibration_target(y, P, positive=positive, classes=self.classes)
            curves[name] = corp_reliability(f, o, **kwargs)
            decomp[name] = corp_decomposition(f, o)
        return curves, decomp, target

    def decision_curve(self, positive: Any = None, thresholds: Any = None) -> pd.DataFrame:
        """:func:`bnma_core.calibration.decision_curve` of the methods (two classes), on the
        rows every method predicted."""
        from .calibration import decision_curve

        if len(self.classes) != 2:
            raise ValueError(f"Decision curves need two classes; this outcome has "
                             f"{len(self.classes)}.")
        ok = np.ones(len(self.y), dtype=bool)
        for P in self.proba.values():
            ok &= ~np.isnan(P).any(axis=1)
        return decision_curve(self.y[ok], {m: P[ok] for m, P in self.proba.items()},
                              positive=positive, classes=self.classes, thresholds=thresholds)


def roc_curves(predictions: CVPredictions, positive: str | int | None = None
               ) -> dict[str, dict[str, Any]]:
    """ROC curve of each method from out-of-fold probabilities (input of
    :func:`bnma_core.viz.roc_figure`).

    Parameters
    ----------
    predictions : CVPredictions
        From ``cross_validate(..., return_proba=True)``.
    positive : str or int, optional
        The positive class (label or code); default the second class (one-vs-rest when there
        are more than two classes).

    Returns
    -------
    dict method -> {"fpr", "tpr", "auc"} (pooled over folds)
    """
    if positive is None:
        pos = 1
    elif isinstance(positive, str):
        if positive not in predictions.classes:
            raise ValueError(f"{positive!r} is not a class; classes are "
                             + ", ".join(predictions.classes) + ".")
        pos = predictions.classes.index(positive)
    else:
        pos = int(positive)
    out = {}
    for name, P in predictions.proba.items():
        ok = ~np.isnan(P).any(axis=1)
        out.update(roc_curve_points(predictions.y[ok] == pos, {name: P[ok, pos]}))
    return out


def roc_curve_points(truth: Any, scores: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """ROC curve and area of several score vectors on the same rows.

    Parameters
    ----------
    truth : (n,) booleans or 0/1, True = positive class
    scores : dict name -> (n,) scores (e.g. predicted probability of the positive class)

    Returns
    -------
    dict name -> {"fpr", "tpr", "auc"}; empty when ``truth`` holds one class only.
    """
    from sklearn.metrics import roc_curve

    truth = np.asarray(truth).astype(bool)
    if truth.all() or not truth.any():
        return {}
    out = {}
    for name, sc in scores.items():
        sc = np.asarray(sc, dtype=float)
        fpr, tpr, _ = roc_curve(truth, sc)
        out[name] = {"fpr": fpr, "tpr": tpr, "auc": float(roc_auc_score(truth, sc))}
    return out


def _check_folds(folds: Any, src: _Source) -> int:
    if isinstance(folds, bool) or not isinstance(folds, (int, np.integer)) or folds < 2:
        raise ValueError(f"The number of folds must be a whole number of at least 2 "
                         f"(got {folds!r}).")
    n_classes = len(np.unique(src.y))
    if src.n_rows // folds < n_classes:
        raise DataError(
            f"{folds} folds of {src.n_rows} rows give test folds of {src.n_rows // folds} "
            f"row(s), fewer than the {n_classes} classes. Use fewer folds.")
    counts = np.bincount(src.y[src.y >= 0])
    counts = counts[counts > 0]
    if counts.min() < 2:
        raise DataError("A class has a single row; every class needs at least two rows "
                        "for cross-validation.")
    return int(folds)


# --------------------------------------------------------------------------------------------
# Summaries and tests
# --------------------------------------------------------------------------------------------


SUMMARY_COLUMNS = ["method", "folds", "accuracy_mean", "accuracy_std", "auc_mean", "auc_std",
                   "log_loss_mean", "log_loss_std", "fit_time_s_mean", "fit_time_s_total",
                   "n_train_mean", "n_train_dropped_mean"]


def summarize(results: pd.DataFrame) -> pd.DataFrame:
    """Per method (in order of appearance): folds; mean and standard deviation over folds
    (ddof 1) of accuracy, AUC and log-loss; fit_time_s mean (per fold) and total; the mean
    number of training rows the method learned from (``n_train_mean``) and of incomplete
    training rows it could not use (``n_train_dropped_mean``)."""
    if results.empty:
        return pd.DataFrame(columns=SUMMARY_COLUMNS)
    g = results.groupby("method", sort=False)
    cols = {"folds": g["fold"].count()}
    for m in METRICS:
        cols[f"{m}_mean"] = g[m].mean()
        cols[f"{m}_std"] = g[m].std(ddof=1)
    cols["fit_time_s_mean"] = g["fit_time_s"].mean()
    cols["fit_time_s_total"] = g["fit_time_s"].sum()
    cols["n_train_mean"] = g["n_train"].mean()
    cols["n_train_dropped_mean"] = (g["n_train_dropped"].mean()
                                    if "n_train_dropped" in results else 0.0)
    out = pd.DataFrame(cols).reset_index()
    return out[SUMMARY_COLUMNS]


def wilcoxon_against(results: pd.DataFrame, baseline: str, metric: str = "accuracy"
                     ) -> pd.DataFrame:
    """Paired Wilcoxon signed-rank test of every method against ``baseline``.

    Pairs are matched on the fold (and on ``dataset`` when that column exists, so results of
    several data sets can be pooled). Zero differences are dropped ("wilcox" zero method);
    when all differences are zero the p-value is 1.

    Returns
    -------
    DataFrame
        One row per other method: method, baseline, metric, n_pairs, mean_diff (method minus
        baseline), wins / ties / losses (folds where the method is better than, equal to or
        worse than the baseline: higher accuracy or AUC, *lower* log-loss or time, see
        :data:`HIGHER_IS_BETTER`), statistic, p_value (two-sided).
    """
    from scipy.stats import wilcoxon

    if metric not in results.columns:
        raise ValueError(f"Unknown metric {metric!r}; choose one of "
                         + ", ".join(c for c in results.columns if c not in ("method",)) + ".")
    methods = list(dict.fromkeys(results["method"]))
    if baseline not in methods:
        raise ValueError(f"Baseline {baseline!r} is not among the methods: {', '.join(methods)}.")
    keys = ["dataset", "fold"] if "dataset" in results.columns else ["fold"]
    base = results[results["method"] == baseline].set_index(keys)[metric]
    rows = []
    for m in methods:
        if m == baseline:
            continue
        other = results[results["method"] == m].set_index(keys)[metric]
        pair = pd.concat([other, base], axis=1, join="inner").dropna()
        d = (pair.iloc[:, 0] - pair.iloc[:, 1]).to_numpy()
        better = d if HIGHER_IS_BETTER.get(metric, True) else -d
        nz = d[d != 0]
        if nz.size == 0:
            stat, pval = 0.0, 1.0
        else:
            r = wilcoxon(nz, zero_method="wilcox")
            stat, pval = float(r.statistic), float(r.pvalue)
        rows.append({"method": m, "baseline": baseline, "metric": metric, "n_pairs": len(d),
                     "mean_diff": float(d.mean()) if len(d) else float("nan"),
                     "wins": int((better > 0).sum()), "ties": int((d == 0).sum()),
                     "losses": int((better < 0).sum()), "statistic": stat, "p_value": pval})
    return pd.DataFrame(rows, columns=["method", "baseline", "metric", "n_pairs", "mean_diff",
                                       "wins", "ties", "losses", "statistic", "p_value"])


# --------------------------------------------------------------------------------------------
# Bias-variance decomposition
# --------------------------------------------------------------------------------------------


def zero_one_decomposition(predictions: np.ndarray, y: np.ndarray, n_classes: int
                           ) -> dict[str, np.ndarray]:
    """Kohavi & Wolpert (1996) zero-one loss terms per test point, noise taken as zero.

    Parameters
    ----------
    predictions : (n_repeats, n_test) int array of predicted class codes
    y : (n_test,) true class codes
    n_classes : int

    Returns
    -------
    dict of (n_test,) arrays ``error``, ``bias2``, ``variance`` with, for P_H(y|x) the share of
    training sets predicting y at x and P_F(y|x) = [y = true class] (no noise, sigma² = 0):
    bias² = 1/2 sum_y (P_F(y|x) - P_H(y|x))², variance = 1/2 (1 - sum_y P_H(y|x)²)
    (Kohavi & Wolpert 1996 definitions, with plug-in estimates of P_H), and
    error = 1 - P_H(true|x) = bias² + variance exactly.
    """
    predictions = np.asarray(predictions, dtype=np.int64)
    T = predictions.shape[0]
    ph = np.zeros((predictions.shape[1], n_classes))
    for c in range(n_classes):
        ph[:, c] = (predictions == c).sum(axis=0) / T
    pf = np.zeros_like(ph)
    pf[np.arange(len(y)), y] = 1.0
    bias2 = 0.5 * ((pf - ph) ** 2).sum(axis=1)
    variance = 0.5 * (1.0 - (ph ** 2).sum(axis=1))
    error = 1.0 - ph[np.arange(len(y)), y]
    return {"error": error, "bias2": bias2, "variance": variance}


def _check_bias_variance_args(n_repeats: Any, train_fraction: float, test_fraction: float
                              ) -> None:
    """Refuse fewer than two repeats and fractions outside (0, 1) (:func:`bias_variance`)."""
    if isinstance(n_repeats, bool) or not isinstance(n_repeats, (int, np.integer)) \
            or n_repeats < 2:
        raise ValueError(f"n_repeats must be a whole number of at least 2 (got {n_repeats!r}).")
    for nm, v in (("train_fraction", train_fraction), ("test_fraction", test_fraction)):
        if not 0 < float(v) < 1:
            raise ValueError(f"{nm} must be strictly between 0 and 1 (got {v!r}).")


def _holdout_split(src: _Source, test_fraction: float, seed: int
                   ) -> tuple[np.ndarray, np.ndarray]:
    """(training pool, held-out test rows): one stratified split of the row positions."""
    idx = np.arange(src.n_rows)
    try:
        pool, test = train_test_split(idx, test_size=test_fraction, random_state=seed,
                                      stratify=src.y)
    except ValueError as exc:
        raise DataError(f"Too few rows to hold out a stratified test set: {exc}") from None
    return pool, test


def _bv_cell(name: str, est: Any, draw: tuple[DiscreteDataset, DiscreteDataset]
             ) -> tuple[str, np.ndarray]:
    """Fit ``est`` on one training set: (name, predicted class codes of the test set)."""
    from .classifiers.registry import fit_method

    train, test_ds = draw
    P = aligned_proba(fit_method(est, train), test_ds.X, test_ds.classes)
    return name, np.argmax(P, axis=1)


def _bv_rows(name: str, preds: list[np.ndarray], src: _Source, test: np.ndarray, m: int,
             n_repeats: int, per_point: bool) -> pd.DataFrame:
    """One method's rows of :func:`bias_variance` from its predictions on every training set."""
    terms = zero_one_decomposition(np.array(preds), src.y[test], len(src.classes))
    if per_point:
        return pd.DataFrame({"method": name, "row": test, **terms, "noise": 0.0})
    return pd.DataFrame([{
        "method": name, "error": float(terms["error"].mean()),
        "bias2": float(terms["bias2"].mean()),
        "variance": float(terms["variance"].mean()), "noise": 0.0,
        "n_train": m, "n_test": len(test), "n_repeats": int(n_repeats)}])


def bias_variance(methods: Sequence[str] | Mapping[str, Any], data: Any, n_repeats: int = 10,
                  train_fraction: float = 0.5, seed: int = 0, *, test_fraction: float = 0.5,
                  target: str | None = None, discretization: str = "median", n_bins: int = 3,
                  method_params: Mapping[str, Mapping[str, Any]] | None = None,
                  n_jobs: int | None = None, per_point: bool = False, missing: str = "keep",
                  workers: int = 1, scheduler: str | None = None) -> pd.DataFrame:
    """Zero-one loss bias-variance decomposition of Kohavi & Wolpert (1996).

    The rows are split once (stratified, ``seed``) into a held-out test set
    (``test_fraction``) and a training pool. Each of ``n_repeats`` training sets is drawn
    uniformly *without replacement* from the pool, ``train_fraction`` of its size (K&W use
    training sets of half the pool). Each method is trained on every training set and
    predicts the test set; :func:`zero_one_decomposition` gives bias², variance and the error
    per test point, averaged over the test set. Noise is assumed zero (a single label per
    point cannot reveal it; any real noise is absorbed into bias²), so
    error = bias² + variance. Discretization is refitted on each training set.

    Parameters
    ----------
    methods : list of registry names or dict name -> estimator
    data : DiscreteDataset, path, bytes or DataFrame (see :func:`cross_validate`)
    n_repeats : int
        Number of training sets (more gives steadier variance estimates).
    train_fraction : float
        Size of each training set as a fraction of the pool (0 < f < 1).
    seed : int
        Seed of the test split and of the training-set draws (and ``random_state`` of
        randomized methods).
    per_point : bool
        Return one row per (method, test point) instead of one row per method.
    missing : {"keep", "drop"}
        Rows with a missing feature value (see :func:`cross_validate`).
    workers, scheduler : where the fits run (see :func:`cross_validate`; ``n_jobs`` is the
        former name of ``workers``)

    Returns
    -------
    DataFrame
        Per method: method, error, bias2, variance, noise (0), n_train, n_test, n_repeats.

    References
    ----------
    Kohavi, R. & Wolpert, D. H. (1996). Bias plus variance decomposition for zero-one loss
    functions. ICML, 275-283.
    """
    _check_bias_variance_args(n_repeats, train_fraction, test_fraction)
    engine_workers = _engine_workers(workers, scheduler, n_jobs)
    src = _source(data, target, discretization, n_bins, missing)
    ests = _estimators(methods, seed, method_params)
    _check_methods_fit(ests, src.ds)
    pool, test = _holdout_split(src, test_fraction, seed)
    rng = np.random.default_rng(seed)
    m = max(2, int(round(train_fraction * len(pool))))
    draws = []
    for _ in range(n_repeats):
        tr = np.sort(rng.choice(pool, size=m, replace=False))
        draws.append(src.split(tr, test))
    from .reproduce.runner import Shared, run_tasks

    tasks = [(name, est, Shared(d)) for name, est in ests.items() for d in range(len(draws))]
    got: dict[int, tuple[str, np.ndarray]] = {}
    run_tasks(_bv_cell, tasks, on_result=got.__setitem__, workers=engine_workers,
              scheduler=scheduler, shared=draws)
    out = [got[i] for i in range(len(tasks))]
    rows = [_bv_rows(name, [p for nm, p in out if nm == name], src, test, m, n_repeats,
                     per_point) for name in ests]
    return pd.concat(rows, ignore_index=True)


__all__ = ["cross_validate", "CVPredictions", "PREDICTION_KEY_COLUMNS", "proba_column",
           "roc_curves", "roc_curve_points", "summarize",
           "wilcoxon_against", "bias_variance", "zero_one_decomposition",
           "classification_metrics", "aligned_proba", "RESULT_COLUMNS", "SUMMARY_COLUMNS",
           "HIGHER_IS_BETTER"]
