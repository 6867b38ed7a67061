"""Shared input handling for every BNMA classifier (scikit-learn conventions, DESIGN §6).

Inputs accepted by ``fit`` / ``predict`` / ``predict_proba``:

* an integer array of state codes (``0 .. r-1``; negative values mean *missing*), e.g.
  ``DiscreteDataset.X``; arities are ``max + 1`` over the training rows unless ``fit`` is given
  ``arities=``. At prediction a code ``>= arity`` (a state never seen in training) is treated as
  missing and marginalized, with an :class:`UnseenValueWarning` naming the columns;
* a pandas DataFrame (labels, numbers or both) or a float array: coded by a
  :class:`~bnma_core.data.DiscreteEncoder` fitted on the training rows (categorical values kept,
  continuous columns split at the training median). ``NaN`` / ``None`` are missing; a label
  never seen in training is treated as missing too, with an :class:`UnseenValueWarning`
  (as scikit-learn's ``OneHotEncoder(handle_unknown="ignore")`` warns);
* a :class:`~bnma_core.data.DiscreteDataset` through :meth:`DiscreteBNClassifier.fit_dataset`
  (what :func:`bnma_core.classifiers.registry.fit_method` calls): the dataset's codes, arities,
  variable names, state labels and class labels, no re-encoding.
"""

from __future__ import annotations

import functools
import inspect
import math
import sys
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.exceptions import DataConversionWarning
from sklearn.utils.multiclass import type_of_target
from sklearn.utils.validation import check_is_fitted

from ..data import CODE_DTYPE, DataError, DiscreteEncoder


class UnseenValueWarning(UserWarning):
    """Prediction rows hold values no training row had; they are treated as missing."""


def _plain(v: Any) -> Any:
    """A NumPy scalar as the Python value it holds (for messages)."""
    return v.item() if isinstance(v, np.generic) else v


def _warn_unseen(unseen: np.ndarray, names: list[str], examples: list[Any]) -> None:
    """One warning per call: the columns (with a value) whose unseen cells are marginalized."""
    counts = unseen.sum(axis=0)
    cols = np.flatnonzero(counts)
    if not len(cols):
        return
    parts = [f"{names[j]} ({int(counts[j])} row{'s' if counts[j] > 1 else ''}, "
             f"e.g. {_plain(examples[j])!r})" for j in cols[:5]]
    more = f" and {len(cols) - 5} more columns" if len(cols) > 5 else ""
    warnings.warn("Values not seen in training are treated as missing and marginalized: "
                  + ", ".join(parts) + more + ".", UnseenValueWarning,
                  stacklevel=caller_level())


_PACKAGE_DIR = str(Path(__file__).resolve().parents[1])


def caller_level() -> int:
    """``stacklevel`` of the first frame outside ``bnma_core``, so that a warning points at
    the user's ``predict`` call however deep the library's own calls go."""
    frame, level = sys._getframe(1), 1
    while frame is not None and frame.f_code.co_filename.startswith(_PACKAGE_DIR):
        frame, level = frame.f_back, level + 1
    return level


# --- parameters: one declared table per estimator ---------------------------------------------
# scikit-learn's ``_parameter_constraints`` idea (sklearn/utils/_param_validation.py) with the
# library's one-sentence messages ("NAME must be LIMIT (got VALUE)."): an estimator declares
# ``_parameter_constraints = {name: [constraint, ...]}`` (a value is valid when it satisfies one
# of the constraints) and, for a renamed parameter, ``_renamed_parameters = {old: new}``.
# ``__init__`` stores every parameter unchanged; :meth:`DiscreteBNClassifier._validate_parameters`
# checks them when fitting (DESIGN §10, parameter glossary).

DEPRECATED = "deprecated"
"""Default of a parameter's former name: not given (scikit-learn's deprecation pattern)."""


def _is_deprecated_default(value: Any) -> bool:
    return isinstance(value, str) and value == DEPRECATED


class Interval:
    """Numbers between ``low`` and ``high`` (None: unbounded); ``kind`` "int" or "real";
    ``closed`` one of "both", "left", "right", "neither". Booleans, NaN and infinity are
    never accepted."""

    def __init__(self, kind: str, low: float | None = None, high: float | None = None,
                 closed: str = "both") -> None:
        self.kind, self.low, self.high, self.closed = kind, low, high, closed

    def __call__(self, value: Any) -> bool:
        if isinstance(value, bool | np.bool_):
            return False
        ok_type = (int, np.integer) if self.kind == "int" else (int, float, np.integer,
                                                                np.floating)
        if not isinstance(value, ok_type) or not math.isfinite(float(value)):
            return False
        v = float(value)
        lo_ok = self.low is None or (v >= self.low if self.closed in ("both", "left")
                                     else v > self.low)
        hi_ok = self.high is None or (v <= self.high if self.closed in ("both", "right")
                                      else v < self.high)
        return lo_ok and hi_ok

    def __str__(self) -> str:
        what = "integer" if self.kind == "int" else "number"
        left_open = self.closed in ("right", "neither")
        if self.high is None and self.low == 0:
            return f"a positive {what}" if left_open else f"a non-negative {what}"
        if self.high is None and self.low == 1 and self.kind == "int" and not left_open:
            return "a positive integer"
        if self.high is None and self.low is not None:
            return f"an {what} {'>' if left_open else '>='} {self.low:g}" if what == "integer" \
                else f"a {what} {'>' if left_open else '>='} {self.low:g}"
        lo = "-inf" if self.low is None else f"{self.low:g}"
        hi = "inf" if self.high is None else f"{self.high:g}"
        return (f"a{'n' if what == 'integer' else ''} {what} in "
                f"{'(' if left_open else '['}{lo}, {hi}"
                f"{']' if self.closed in ('both', 'right') else ')'}")


class Options:
    """One of the given values (strings compared exactly)."""

    def __init__(self, *values: Any) -> None:
        self.values = values

    def __call__(self, value: Any) -> bool:
        return isinstance(value, str | int | float) and not isinstance(value, bool) \
            and value in self.values

    def __str__(self) -> str:
        return "one of " + ", ".join(repr(v) for v in self.values)


class Check:
    """Any value ``predicate`` accepts, described by ``description``."""

    def __init__(self, predicate: Callable[[Any], bool], description: str) -> None:
        self.predicate, self.description = predicate, description

    def __call__(self, value: Any) -> bool:
        try:
            return bool(self.predicate(value))
        except (TypeError, ValueError):
            return False

    def __str__(self) -> str:
        return self.description


BOOLEAN = Check(lambda v: isinstance(v, bool | np.bool_), "True or False")
RANDOM_STATE = Check(lambda v: v is None or (isinstance(v, int | np.integer)
                                             and not isinstance(v, bool) and v >= 0)
                     or isinstance(v, np.random.Generator | np.random.RandomState),
                     "None, a non-negative integer seed or a numpy random generator")


def training_row_indices(rows: Any, n: int) -> np.ndarray | None:
    """The ``rows`` argument of a ``loo_log_proba`` (the training rows whose leave-one-out
    posteriors are wanted) as int64 indices into the n training rows; None stays None (all).
    ValueError when they are not such indices."""
    if rows is None:
        return None
    idx = np.asarray(rows)
    if idx.ndim != 1 or not (np.issubdtype(idx.dtype, np.integer) or len(idx) == 0) or (
            len(idx) and (idx.min() < 0 or idx.max() >= n)):
        raise ValueError(f"rows must be indices of the {n} training rows.")
    return idx.astype(np.int64)


def _satisfies(value: Any, constraint: Any) -> bool:
    if constraint is None:
        return value is None
    if isinstance(constraint, type):
        return isinstance(value, constraint)
    return constraint(value)


def _describe(constraint: Any) -> str:
    if constraint is None:
        return "None"
    if isinstance(constraint, type):
        return f"a {constraint.__name__}"
    return str(constraint)


def check_parameter(name: str, value: Any, constraints: list) -> None:
    """ValueError "NAME must be A or B (got VALUE)." unless ``value`` satisfies one of
    ``constraints`` (None, a type, or an :class:`Interval` / :class:`Options` / :class:`Check`)."""
    if any(_satisfies(value, c) for c in constraints):
        return
    described = [_describe(c) for c in constraints]
    text = described[0] if len(described) == 1 else \
        ", ".join(described[:-1]) + " or " + described[-1]
    raise ValueError(f"{name} must be {text} (got {value!r}).")


def _same(a: Any, b: Any) -> bool:
    if a is b:
        return True
    try:
        return bool(a == b)
    except (TypeError, ValueError):
        return False


@functools.cache
def _init_parameters(kind: type) -> Any:
    """The parameters of ``kind.__init__`` (its signature, read once per class)."""
    return inspect.signature(kind.__init__).parameters


def validate_parameters(est: Any, params: dict[str, Any] | None = None) -> dict[str, Any]:
    """The parameters of ``est`` (or ``params``, default ``est.get_params(deep=False)``) by
    their current names, checked against its declared ``_parameter_constraints``; a value
    given under a former name (``_renamed_parameters``) is used for the new name with a
    FutureWarning naming it (ValueError when both are given).
    """
    params = dict(est.get_params(deep=False) if params is None else params)
    renamed = getattr(type(est), "_renamed_parameters", {})
    if renamed:
        sig = _init_parameters(type(est))
        for old, new in renamed.items():
            value = params.pop(old, DEPRECATED)
            if _is_deprecated_default(value):
                continue
            if not _same(params[new], sig[new].default):
                raise ValueError(f"{type(est).__name__}: give {new} only ({old} is its former "
                                 "name).")
            warnings.warn(f"{type(est).__name__}: the parameter {old!r} was renamed {new!r}; "
                          f"{old} is accepted until the next release. Use {new}={value!r}.",
                          FutureWarning, stacklevel=caller_level())
            params[new] = value
    for name, constraints in getattr(type(est), "_parameter_constraints", {}).items():
        check_parameter(name, params[name], constraints)
    return params


def _check_array(X: Any) -> np.ndarray:
    """A 2-D array of a supported dtype (ValueError otherwise)."""
    Xa = np.asarray(X)
    if Xa.dtype.kind == "c":
        raise ValueError("Complex data not supported.")
    if Xa.dtype.kind not in "iufbOUS":
        raise ValueError(f"Unsupported input dtype {Xa.dtype}")
    if Xa.ndim != 2:
        raise ValueError(f"Expected 2D array, got {Xa.ndim}D array instead. Reshape your data.")
    return Xa


def _is_code_array(X: Any) -> bool:
    if isinstance(X, pd.DataFrame):
        return False
    arr = np.asarray(X)
    if arr.dtype.kind in "iu":
        return True
    if arr.dtype.kind == "f":
        finite = arr[np.isfinite(arr)]
        return bool(np.all(np.mod(finite, 1) == 0)) and arr.size > 0 and not np.isinf(arr).any()
    return False


def _state_codes(X: Any) -> np.ndarray:
    """State codes as int64 with every missing value (NaN or negative) set to -1. Integer input
    is copied without the float round trip, which costs time on large inputs (~0.5 s per call
    on 500,000 × 36 codes)."""
    Xa = np.asarray(X)
    if np.issubdtype(Xa.dtype, np.integer):
        codes = Xa.astype(np.int64)  # a copy
    else:
        Xf = np.asarray(Xa, dtype=float)
        codes = np.where(np.isnan(Xf), -1, Xf).astype(np.int64)
    codes[codes < 0] = -1
    return codes


class DiscreteBNClassifier(ClassifierMixin, BaseEstimator):
    """Base class: converts inputs to codes, stores ``classes_``; subclasses implement
    ``_fit_codes(X, y)`` and ``_predict_log_proba_codes(X)`` on int32 code arrays
    (``X``: (n, p) with -1 = missing; ``y``: (n,) in ``0..n_classes-1``).

    Subclasses declare their parameters' limits in ``_parameter_constraints`` and former
    parameter names in ``_renamed_parameters`` (module section "parameters"); both are checked
    at the start of every fit.
    """

    _parameter_constraints: dict[str, list] = {}
    _renamed_parameters: dict[str, str] = {}

    def _validate_parameters(self) -> dict[str, Any]:
        """Check the parameters (:func:`validate_parameters`) and keep their values by current
        name for :meth:`_param`."""
        self._params = validate_parameters(self)
        return self._params

    def _param(self, name: str) -> Any:
        """The value of parameter ``name`` for this fit (given under its former name or not)."""
        params = getattr(self, "_params", None)
        return getattr(self, name) if params is None else params[name]

    # --- input conversion ------------------------------------------------------------------
    def _prepare_fit(self, X: Any, y: Any, arities: Any = None) -> tuple[np.ndarray, np.ndarray]:
        """Validate ``X`` / ``y``; set ``classes_``, ``arities_``, ``feature_states_``,
        ``input_encoder_``, ``n_features_in_``; return (int32 codes, int32 class codes).
        The parameters are checked first (:meth:`_validate_parameters`)."""
        self._validate_parameters()
        y_arr = self._check_y(y)
        if sp.issparse(X):
            raise TypeError("Sparse data was passed, but dense data is required; "
                            "convert it with X.toarray().")
        Xdf = None
        if isinstance(X, pd.DataFrame):
            self.feature_names_in_ = np.asarray([str(c) for c in X.columns], dtype=object)
            Xdf = X.reset_index(drop=True)
            Xdf.columns = list(self.feature_names_in_)
        else:
            X = _check_array(X)
        n = len(X)
        if n != len(y_arr):
            raise ValueError(f"X has {n} rows but y has {len(y_arr)} labels")
        if n == 0:
            raise ValueError("0 sample(s) (shape=(0, ...)) while a minimum of 1 is required.")
        if X.shape[1] == 0:
            raise ValueError(f"0 feature(s) (shape=({n}, 0)) while a minimum of 1 is required.")
        self.classes_, y_codes = np.unique(y_arr, return_inverse=True)
        if len(self.classes_) < 2:
            raise DataError("The class has a single value (1 class); at least two classes "
                            "are needed.")
        if Xdf is None and _is_code_array(X):
            codes = self._codes_from_array(X, arities)
        else:
            codes = self._codes_from_frame(X if Xdf is None else Xdf)
        self.n_features_in_ = codes.shape[1]
        return np.ascontiguousarray(codes, dtype=CODE_DTYPE), y_codes.astype(CODE_DTYPE)

    def _check_y(self, y: Any) -> np.ndarray:
        """``y`` as a 1-D array of categorical labels without missing values (its Series name
        kept for the class node)."""
        if y is None:
            raise ValueError("requires y to be passed, but the target y is None")
        name = getattr(y, "name", None)
        self._y_name = None if name is None else str(name)
        y_arr = np.asarray(y)
        if y_arr.ndim != 1:
            if y_arr.ndim == 2 and y_arr.shape[1] == 1:
                warnings.warn("A column-vector y was passed when a 1d array was expected.",
                              DataConversionWarning, stacklevel=4)
                y_arr = y_arr.ravel()
            else:
                raise ValueError("y must be one-dimensional")
        # missing and infinite labels first: type_of_target casts floats to int to test them
        if y_arr.dtype.kind not in "biu" and pd.isna(pd.Series(y_arr, dtype=object)).any():
            raise ValueError("y contains missing values; remove those rows first.")
        if y_arr.dtype.kind == "f" and np.isinf(y_arr).any():
            raise ValueError("y contains infinity; the class must be categorical.")
        if y_arr.dtype.kind == "f" and type_of_target(y_arr) == "continuous":
            raise ValueError("Unknown label type: continuous. The class must be categorical.")
        return y_arr

    def _codes_from_array(self, X: np.ndarray, arities: Any) -> np.ndarray:
        """State codes given directly (NaN / negative = missing); arities given or inferred."""
        if hasattr(self, "feature_names_in_"):  # from an earlier fit on a DataFrame
            del self.feature_names_in_
        codes = _state_codes(X)
        self.input_encoder_ = None
        inferred = np.maximum(codes.max(axis=0) + 1, 1)
        if arities is not None:
            arities = np.asarray(arities, dtype=np.int64)
            if arities.shape != inferred.shape or (arities < inferred).any():
                raise ValueError("arities must cover every code in X")
            self.arities_ = arities
        else:
            self.arities_ = inferred.astype(np.int64)
        self.feature_states_ = [[str(s) for s in range(a)] for a in self.arities_]
        return codes

    def _codes_from_frame(self, X: Any) -> np.ndarray:
        """Labels / numbers coded by the one encoder (:class:`~bnma_core.data.DiscreteEncoder`)
        fitted on these training rows."""
        if isinstance(X, pd.DataFrame):
            Xdf = X
        else:
            Xdf = pd.DataFrame(np.asarray(X, dtype=object))
            Xdf.columns = [f"x{j}" for j in range(Xdf.shape[1])]
        self.input_encoder_ = DiscreteEncoder().fit(Xdf)
        self.arities_ = self.input_encoder_.arities
        self.feature_states_ = self.input_encoder_.states
        return self.input_encoder_.transform(Xdf)

    def _prepare_predict(self, X: Any) -> np.ndarray:
        check_is_fitted(self, "classes_")
        if sp.issparse(X):
            raise TypeError("Sparse data was passed, but dense data is required; "
                            "convert it with X.toarray().")
        if self.input_encoder_ is not None:
            if isinstance(X, pd.DataFrame):
                Xdf = X.reset_index(drop=True)
                Xdf.columns = [str(c) for c in Xdf.columns]
                if hasattr(self, "feature_names_in_"):
                    missing = [c for c in self.feature_names_in_ if c not in Xdf.columns]
                    if missing:
                        raise DataError("Columns missing from the data: " + ", ".join(missing))
                    Xdf = Xdf[list(self.feature_names_in_)]
                else:
                    Xdf = Xdf.copy()
                    Xdf.columns = [f"x{j}" for j in range(Xdf.shape[1])]
            else:
                Xa = np.asarray(X, dtype=object)
                if Xa.ndim != 2:
                    raise ValueError("Expected 2D array. Reshape your data.")
                Xdf = pd.DataFrame(Xa, columns=[f"x{j}" for j in range(Xa.shape[1])])
            if Xdf.shape[1] != self.n_features_in_:
                raise ValueError(f"X has {Xdf.shape[1]} features, but {type(self).__name__} "
                                 f"is expecting {self.n_features_in_} features as input.")
            codes = self.input_encoder_.transform(Xdf)
            unseen = (codes < 0) & Xdf.notna().to_numpy()
            if unseen.any():
                _warn_unseen(unseen, list(Xdf.columns),
                             [Xdf.iloc[np.argmax(unseen[:, j]), j] for j in range(unseen.shape[1])])
            return codes
        Xa = np.asarray(X.to_numpy() if isinstance(X, pd.DataFrame) else X)
        if Xa.ndim != 2:
            raise ValueError("Expected 2D array. Reshape your data.")
        if Xa.shape[1] != self.n_features_in_:
            raise ValueError(f"X has {Xa.shape[1]} features, but {type(self).__name__} "
                             f"is expecting {self.n_features_in_} features as input.")
        codes = _state_codes(Xa)
        unseen = codes >= self.arities_[None, :]
        if unseen.any():
            _warn_unseen(unseen, self._variable_names()[0],
                         [codes[np.argmax(unseen[:, j]), j] for j in range(unseen.shape[1])])
            codes[unseen] = -1
        return np.ascontiguousarray(codes, dtype=CODE_DTYPE)

    def _variable_names(self) -> tuple[list[str], str]:
        """Feature names (``feature_names_in_`` or ``x0, x1, ...``) and a distinct class-node
        name (the label Series' name, else ``"class"``), for structures and explanations."""
        p = self.n_features_in_
        fin = getattr(self, "feature_names_in_", None)
        names = [str(s) for s in fin] if fin is not None and len(fin) == p else [
            f"x{j}" for j in range(p)]
        cname = getattr(self, "_y_name", None) or "class"
        while cname in names:
            cname += "_"
        return names, cname

    # --- public API ------------------------------------------------------------------------
    def fit(self, X: Any, y: Any, arities: Any = None) -> DiscreteBNClassifier:
        """Fit on feature codes/labels ``X`` and class labels ``y``.

        ``arities`` (optional) gives the number of states of each feature when ``X`` is a
        code array, so that states absent from these rows still get parameters.
        """
        Xc, yc = self._prepare_fit(X, y, arities)
        self._fit_codes(Xc, yc)
        return self

    def fit_dataset(self, dataset: Any, rows: Any = None) -> DiscreteBNClassifier:
        """Fit on rows of a :class:`~bnma_core.data.DiscreteDataset` without re-encoding.

        The model learns from ``dataset.X[rows]`` with the dataset's arities (states absent
        from these rows keep their code), names its variables after the dataset
        (``feature_names_in_``, the class node after ``dataset.class_name``), keeps the
        dataset's state labels (``feature_states_``) and has the dataset's class labels as
        ``classes_`` (those present in ``rows``, in the dataset's class order). Predict with
        feature codes (``dataset.X``).

        Parameters
        ----------
        dataset : DiscreteDataset
        rows : array of int or bool, optional
            Training rows (default all). All are used, incomplete ones included; which rows
            a method may learn from is decided by
            :func:`bnma_core.classifiers.registry.fit_method`.
        """
        idx = np.arange(dataset.n_rows) if rows is None else np.asarray(rows)
        if idx.dtype == bool:
            idx = np.flatnonzero(idx)
        y = pd.Series(dataset.y[idx], name=dataset.class_name)
        Xc, yc = self._prepare_fit(np.ascontiguousarray(dataset.X[idx]), y,
                                   dataset.arities[dataset.feature_indices])
        # class codes -> labels (code order = the dataset's class order; no string sorting)
        self.classes_ = np.asarray(dataset.classes, dtype=object)[self.classes_]
        self.feature_names_in_ = np.asarray(dataset.feature_names, dtype=object)
        self.feature_states_ = [list(s) for s in dataset.feature_states]
        self._fit_codes(Xc, yc)
        return self

    def predict_log_proba(self, X: Any) -> np.ndarray:
        """Log class posteriors, shape (n_rows, n_classes), columns ordered as ``classes_``."""
        lp = self._predict_log_proba_codes(self._prepare_predict(X))
        return lp - np.logaddexp.reduce(lp, axis=1, keepdims=True)

    def predict_proba(self, X: Any) -> np.ndarray:
        """Class posteriors, shape (n_rows, n_classes), columns ordered as ``classes_``."""
        return np.exp(self.predict_log_proba(X))

    def predict(self, X: Any) -> np.ndarray:
        """Most probable class of each row."""
        lp = self.predict_log_proba(X)
        return self.classes_[np.argmax(lp, axis=1)]

    # --- to implement ----------------------------------------------------------------------
    def _fit_codes(self, X: np.ndarray, y: np.ndarray) -> None:  # pragma: no cover
        raise NotImplementedError

    def _predict_log_proba_codes(self, X: np.ndarray) -> np.ndarray:  # pragma: no cover
        raise NotImplementedError

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True
        tags.input_tags.categorical = True
        tags.input_tags.string = True
        return tags

    # --- per-model joints (bnma_core.explain) ----------------------------------------------
    @staticmethod
    def _pattern_groups(codes: np.ndarray, target: int) -> list[tuple[np.ndarray, np.ndarray]]:
        """(rows, observed variables) blocks of :meth:`_factor_log_joint`: one per missingness
        pattern, patterns with fewer than :data:`bnma_core.factors.MIN_PATTERN_ROWS` rows
        pooled into one block (their variables observed in some row enter as soft evidence,
        as in ``class_log_posterior``)."""
        from ..factors import MIN_PATTERN_ROWS

        observed = np.asarray(codes) >= 0
        observed[:, target] = False
        if not len(observed):
            return []
        patterns, inverse = np.unique(observed, axis=0, return_inverse=True)
        order = np.argsort(inverse.ravel(), kind="stable")
        bounds = np.cumsum(np.bincount(inverse.ravel(), minlength=len(patterns)))[:-1]
        blocks, pooled = [], []
        for pat, rows in zip(patterns, np.split(order, bounds)):
            if len(rows) < MIN_PATTERN_ROWS and len(patterns) > 1:
                pooled.append(rows)
            else:
                blocks.append((rows, np.flatnonzero(pat)))
        if pooled:
            rows = np.sort(np.concatenate(pooled))
            blocks.append((rows, np.flatnonzero(observed[rows].any(axis=0))))
        return blocks

    @staticmethod
    def _factor_log_joint(model: Any, target: int, codes: np.ndarray,
                          groups: list | None = None) -> np.ndarray:
        """Exact log P(target = k, x_obs) of a factorised model for each row of ``codes``
        ((n, n_vars), -1 = unobserved, the target column ignored): shape (n, r_target).

        Unlike :func:`bnma_core.factors.class_log_posterior`, which may drop the factors that
        do not involve the target, this is the joint itself, so it can be compared across
        models (the model weights and the finding predictions of DESIGN §15). One
        :func:`bnma_core.factors.log_joint_batch` per block of :meth:`_pattern_groups`
        (``groups``: those blocks, computed once for many models of the same rows).
        """
        from ..factors import log_joint_batch

        codes = np.asarray(codes, dtype=np.int64)
        out = np.empty((len(codes), int(model.cards[target])))
        if groups is None:
            groups = DiscreteBNClassifier._pattern_groups(codes, target)
        for rows, obs in groups:
            out[rows] = log_joint_batch(model, target, obs, codes[np.ix_(rows, obs)])
        return out

    def _networks_log_joints(self, networks: Any, X: np.ndarray, target: int) -> np.ndarray:
        """Exact log P(c, x_obs | network) of feature codes ``X`` for each network (a
        :class:`~bnma_core.network.DiscreteBN` over the features and the class at ``target``):
        (len(networks), n, n_classes); the missingness blocks are computed once."""
        codes = np.column_stack([X, np.full(len(X), -1)]).astype(np.int64)
        groups = self._pattern_groups(codes, target)
        if not len(networks):
            return np.zeros((0, len(X), len(self.classes_)))
        return np.stack([self._factor_log_joint(net.factor_model(), target, codes, groups)
                         for net in networks])
