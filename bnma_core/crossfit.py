"""Leave-one-out by cross-fitting: K fold models, fitted once, explain every row of the data.

Explaining a row "as a new patient" needs a model that never saw it. Refitting per row costs a
whole fit per case (tens of seconds with ``stack`` on WBC). Cross-fitting (Chernozhukov et al.
2018, the cross-fitting of double machine learning; the same split as K-fold
cross-validation) fits K models once per (data set, method, seed): the rows are split into K
folds, and the model of fold k learns from every row outside fold k. A row of fold k is then
explained by model k, which did not see it (nor the other rows of its fold: it learned from
(K - 1) / K of the data, 90 % with K = 10, instead of all rows but one). Changing the row costs
nothing once the K models exist.

The folds are stratified by class and drawn from the seed alone (:func:`fold_assignment`), so
the same data, method and seed give the same folds and — with ``random_state=seed`` for
randomized methods — the same models in every process.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

N_FOLDS = 10
"""Default number of folds (K)."""


def fold_assignment(y: np.ndarray, n_folds: int = N_FOLDS, seed: int = 0) -> np.ndarray:
    """The fold (0..K-1) of each row, stratified by class, from ``seed`` alone.

    Within each class (a missing class, code -1, is one more group) the rows are shuffled
    (``numpy.random.default_rng(seed)``) and dealt to the folds in turn, continuing where the
    previous class stopped, so fold sizes differ by at most one and each class is spread
    evenly. ``K = min(n_folds, n_rows)``.

    Parameters
    ----------
    y : array of int, shape (n_rows,)
        Class codes (-1 for missing).
    n_folds : int, default 10
    seed : int, default 0

    Returns
    -------
    ndarray of int, shape (n_rows,)
    """
    y = np.asarray(y)
    n = len(y)
    if n < 2:
        raise ValueError("Cross-fitting needs at least two rows.")
    if int(n_folds) < 2:
        raise ValueError(f"Cross-fitting needs at least two folds (got {n_folds}).")
    k = min(int(n_folds), n)
    rng = np.random.default_rng(seed)
    folds = np.empty(n, dtype=np.int64)
    offset = 0
    for c in np.unique(y):
        idx = rng.permutation(np.flatnonzero(y == c))
        folds[idx] = (offset + np.arange(len(idx))) % k
        offset = (offset + len(idx)) % k
    return folds


@dataclass
class CrossFit:
    """K fold models of one method on one data set (module docstring).

    Attributes
    ----------
    method : str
        Registry code of the method.
    seed : int
        Seed of the folds and ``random_state`` of every fold model of a randomized method.
    folds : ndarray of int
        Fold of each row position of the data set.
    params : dict
        Overrides of the method's registered defaults.
    models : list
        Model k (learned without fold k), None until fitted.
    fit_seconds : list of float
        CPU seconds of each fold's fit (NaN until fitted).
    """

    method: str
    seed: int
    folds: np.ndarray
    params: dict = field(default_factory=dict)
    models: list = field(default_factory=list)
    fit_seconds: list = field(default_factory=list)

    @classmethod
    def plan(cls, dataset: Any, method: str, n_folds: int = N_FOLDS, seed: int = 0,
             **params: Any) -> CrossFit:
        """The folds of ``dataset`` for ``method``, no model fitted yet."""
        folds = fold_assignment(dataset.y, n_folds, seed)
        k = int(folds.max()) + 1
        return cls(method=method, seed=int(seed), folds=folds, params=dict(params),
                   models=[None] * k, fit_seconds=[float("nan")] * k)

    @property
    def n_folds(self) -> int:
        return len(self.models)

    @property
    def n_fitted(self) -> int:
        return sum(m is not None for m in self.models)

    @property
    def complete(self) -> bool:
        return self.n_fitted == self.n_folds

    def fold_of(self, position: int) -> int:
        """The fold of row ``position`` (an index into the data set's rows)."""
        return int(self.folds[int(position)])

    def train_rows(self, fold: int) -> np.ndarray:
        """Row positions model ``fold`` learns from: every row outside the fold."""
        return np.flatnonzero(self.folds != int(fold))

    def test_rows(self, fold: int) -> np.ndarray:
        """Row positions of ``fold`` (explained by model ``fold``)."""
        return np.flatnonzero(self.folds == int(fold))

    def model_for(self, position: int) -> Any:
        """The model that did not see row ``position`` (None until its fold is fitted)."""
        return self.models[self.fold_of(position)]

    def fit_fold(self, dataset: Any, fold: int) -> Any:
        """Fit (or return) model ``fold`` on :meth:`train_rows` (``random_state=seed`` for a
        randomized method)."""
        from .classifiers.registry import fit_method, get_spec

        fold = int(fold)
        if self.models[fold] is None:
            if len(dataset.y) != len(self.folds):
                raise ValueError("This cross-fit was planned for another data set "
                                 f"({len(self.folds)} rows, not {len(dataset.y)}).")
            params = dict(self.params)
            if get_spec(self.method).randomized:
                params.setdefault("random_state", self.seed)
            t0 = time.process_time()
            model = fit_method(self.method, dataset, self.train_rows(fold), **params)
            self.fit_seconds[fold] = time.process_time() - t0
            self.models[fold] = model
        return self.models[fold]

    def fit(self, dataset: Any, want: Callable[[], int | None] | None = None,
            progress: Callable[[dict], None] | None = None,
            should_stop: Callable[[], bool] | None = None) -> CrossFit:
        """Fit every fold model not yet fitted, one after another.

        Parameters
        ----------
        dataset : DiscreteDataset
            The data set the folds were planned on.
        want : callable, optional
            Asked before each fold: the fold needed first (e.g. the fold of the row a user
            looks at), or None; otherwise the folds go in order.
        progress : callable, optional
            Called after each fold with ``{"fold", "done", "n_folds", "cpu_seconds"}``.
        should_stop : callable, optional
            Checked before each fold; True ends the fit with the folds fitted so far (the
            others stay None).

        Returns
        -------
        self
        """
        while not self.complete:
            if should_stop is not None and should_stop():
                break
            wanted = want() if want is not None else None
            if wanted is None or self.models[int(wanted)] is not None:
                wanted = next(k for k, m in enumerate(self.models) if m is None)
            self.fit_fold(dataset, wanted)
            if progress is not None:
                progress({"fold": int(wanted), "done": self.n_fitted, "n_folds": self.n_folds,
                          "cpu_seconds": self.fit_seconds[int(wanted)]})
        return self

    def describe(self, position: int) -> str:
        """Which model explains row ``position``, in words (for the Patient page)."""
        k = self.fold_of(position)
        n_out = int(np.sum(self.folds == k))
        return (f"Learned without this case: the data were split into {self.n_folds} parts "
                f"and this case is explained by the model learned from the other "
                f"{self.n_folds - 1} ({len(self.folds) - n_out:,} cases; part {k + 1} of "
                f"{self.n_folds}, {n_out:,} cases including this one, was left out).")
