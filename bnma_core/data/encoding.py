"""Encoding: raw columns -> integer codes, learned on training rows only.

:class:`DiscreteEncoder` decides per column whether it is categorical (its labels are the
states) or continuous (cut into bins at the median, at quantiles or at given cut points,
labelled ``≤ 3.5`` / ``3.5–7`` / ``> 7``) and codes new rows the same way
(:class:`ColumnCoding`); :func:`encode_labels` codes the class.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from ..limits import MAX_BINS
from .base import (
    CODE_DTYPE,
    DISCRETIZATIONS,
    MAX_CATEGORIES,
    MAX_INT_CATEGORIES,
    MISSING,
    DataError,
)
from .labels import (
    _as_numeric,
    _factorize,
    _is_continuous,
    _is_na,
    _label,
    _sort_key,
    _state_labels,
)


def _fmt(x: float) -> str:
    return f"{x:.6g}"


@dataclass
class ColumnCoding:
    """How one raw column becomes codes: its kind, its states and (if continuous) cut points."""

    name: str
    kind: str  # "categorical" or "continuous"
    states: list[str]
    cuts: np.ndarray | None = None  # x <= cuts[0] -> 0, cuts[0] < x <= cuts[1] -> 1, ...

    def encode(self, col: pd.Series, out: np.ndarray | None = None) -> np.ndarray:
        """Codes of ``col`` (``-1`` = missing), written into ``out`` when it is given."""
        if out is None:
            out = np.empty(len(col), dtype=CODE_DTYPE)
        if self.kind == "continuous":
            out[:] = MISSING
            num = _as_numeric(col)
            if num is None:
                num = pd.to_numeric(col, errors="coerce")
            x = num.to_numpy(dtype=float)
            ok = ~np.isnan(x)
            out[ok] = np.searchsorted(self.cuts, x[ok], side="left").astype(CODE_DTYPE)
            return out
        index = {s: i for i, s in enumerate(self.states)}
        factorized = _factorize(col)
        if factorized is None:  # bools mixed with numbers: label value by value
            out[:] = MISSING
            for r, v in enumerate(col.to_numpy(dtype=object)):
                if not _is_na(v):
                    out[r] = index.get(_label(v), MISSING)
            return out
        inverse, uniques = factorized
        lookup = np.array([index.get(_label(u), MISSING) for u in uniques] + [MISSING],
                          dtype=out.dtype)
        return np.take(lookup, inverse, out=out)  # inverse -1 (missing): the trailing MISSING


def _cut_points(x: np.ndarray, method: str, n_bins: int, given: Any) -> np.ndarray:
    x = x[~np.isnan(x)]
    if method == "cuts":
        cuts = np.unique(np.asarray(given, dtype=float))
    elif method == "median":
        med = float(np.median(x))
        # x <= median -> low bin. If the median is the maximum every value would land low;
        # then split just below it instead, so both bins are used when two values exist.
        if med >= x.max() and np.unique(x).size > 1:
            med = float(np.max(x[x < med]))
        cuts = np.array([med])
    elif method == "quantile":
        qs = np.quantile(x, np.linspace(0, 1, n_bins + 1)[1:-1])
        cuts = np.unique(qs)
        cuts = cuts[cuts < x.max()] if np.unique(x).size > 1 else cuts
    else:  # pragma: no cover - validated earlier
        raise DataError(f"Unknown discretization {method!r}.")
    return cuts


def _fmt_short(x: float) -> str:
    """A cut point as a reader writes it: 3 significant digits (4 for large numbers)."""
    return f"{x:.4g}" if abs(x) >= 100 else f"{x:.3g}"


def _cut_labels(cuts: np.ndarray) -> list[str]:
    """Readable bin labels: ``["≤ 3.5", "3.5–7", "> 7"]`` (a bin holds x with
    ``lower < x ≤ upper``; the rounding never makes two labels equal)."""
    if cuts.size == 0:
        return ["all"]
    text = [_fmt_short(c) for c in cuts]
    if len(set(text)) < len(text):  # rounding merged two cut points: keep full precision
        text = [_fmt(c) for c in cuts]
    labels = [f"≤ {text[0]}"]
    for a, b in zip(text[:-1], text[1:]):
        labels.append(f"{a}–{b}")
    labels.append(f"> {text[-1]}")
    return labels


@dataclass
class DiscreteEncoder:
    """Learns, on training rows only, how each raw column maps to codes.

    Parameters
    ----------
    discretization : {"median", "quantile", "cuts", "none"}
        Continuous columns: two bins split at the training median (Sugahara et al.; default),
        ``n_bins`` equal-frequency bins, or the user's ``cut_points`` ({column: [c1, c2, ...]});
        ``"none"`` keeps every column's values as its categories (at most 64 per column).
    n_bins : int
        Number of bins for ``"quantile"`` (2..20).
    cut_points : dict, optional
        Cut points per column for ``"cuts"``; columns without an entry use the median.
    max_int_categories : int
        Integer columns with more distinct values than this are treated as continuous.
    vocabulary : DataFrame, optional
        Rows whose categorical values define the state lists (e.g. the whole file while the
        cut points are fitted on a training fold: state names carry no label information).
    """

    discretization: str = "median"
    n_bins: int = 3
    cut_points: dict | None = None
    max_int_categories: int = MAX_INT_CATEGORIES
    columns_: list[ColumnCoding] = field(default_factory=list)

    def fit(self, df: pd.DataFrame, vocabulary: pd.DataFrame | None = None) -> DiscreteEncoder:
        check_discretization(self.discretization, self.n_bins)
        self.columns_ = []
        vocab = df if vocabulary is None else vocabulary
        for name in df.columns:
            col = df[name]
            if col.isna().all():
                raise DataError(f"Column {name!r} is entirely missing; remove it or fill it in.")
            num = _as_numeric(col)
            continuous = (num is not None and self.discretization != "none"
                          and _is_continuous(num, self.max_int_categories))
            if self.discretization == "cuts" and self.cut_points and name in self.cut_points:
                if num is None:
                    raise DataError(f"Cut points were given for {name!r}, which is not numeric.")
                continuous = True
            if continuous:
                given = (self.cut_points or {}).get(name)
                method = self.discretization if (self.discretization != "cuts"
                                                 or given is not None) else "median"
                cuts = _cut_points(num.to_numpy(dtype=float), method, self.n_bins, given)
                self.columns_.append(ColumnCoding(name, "continuous", _cut_labels(cuts), cuts))
            else:
                states = _state_labels(vocab[name] if name in vocab.columns else col)
                if len(states) > MAX_CATEGORIES:
                    raise DataError(
                        f"Column {name!r} has {len(states)} different values; at most "
                        f"{MAX_CATEGORIES} categories are supported. If it is a measurement, "
                        "make it numeric so it can be discretized; if it is an identifier, "
                        "remove it."
                    )
                self.columns_.append(ColumnCoding(name, "categorical", states))
        return self

    def refit(self, df: pd.DataFrame) -> DiscreteEncoder:
        """A copy whose continuous columns have their cut points fitted on ``df`` (e.g. the
        training rows of a cross-validation fold); which columns are continuous and the states
        of categorical columns stay as fitted (they carry no label information).

        Parameters
        ----------
        df : DataFrame
            Raw rows holding at least the continuous columns.

        Returns
        -------
        DiscreteEncoder
            A new fitted encoder (``self`` is not changed).
        """
        if not self.columns_:
            raise ValueError("refit() needs a fitted encoder; call fit() first.")
        out = DiscreteEncoder(self.discretization, self.n_bins, self.cut_points,
                              self.max_int_categories)
        for c in self.columns_:
            if c.kind != "continuous":
                out.columns_.append(c)
                continue
            num = _as_numeric(df[c.name])
            if num is None:
                num = pd.to_numeric(df[c.name], errors="coerce")
            x = num.to_numpy(dtype=float)
            if np.isnan(x).all():  # no value in these rows: keep the cut points
                out.columns_.append(c)
                continue
            given = (self.cut_points or {}).get(c.name)
            method = self.discretization if (self.discretization != "cuts"
                                             or given is not None) else "median"
            if method not in ("median", "quantile", "cuts"):
                method = "median"
            cuts = _cut_points(x, method, self.n_bins, given)
            out.columns_.append(ColumnCoding(c.name, "continuous", _cut_labels(cuts), cuts))
        return out

    def transform(self, df: pd.DataFrame) -> np.ndarray:
        missing = [c.name for c in self.columns_ if c.name not in df.columns]
        if missing:
            raise DataError("Columns missing from the data: " + ", ".join(missing) + ".")
        out = np.empty((len(self.columns_), len(df)), dtype=CODE_DTYPE)  # column by column
        self._transform_into(df, out)
        return np.ascontiguousarray(out.T)

    def _transform_into(self, df: pd.DataFrame, out: np.ndarray) -> None:
        """Write the codes of column ``j`` into row ``out[j]`` (``out``: (n_columns, n_rows))."""
        for j, c in enumerate(self.columns_):
            c.encode(df[c.name], out[j])

    @property
    def names(self) -> list[str]:
        return [c.name for c in self.columns_]

    @property
    def states(self) -> list[list[str]]:
        return [list(c.states) for c in self.columns_]

    @property
    def arities(self) -> np.ndarray:
        return np.array([len(c.states) for c in self.columns_], dtype=np.int64)


def check_discretization(method: str, n_bins: int = 3) -> None:
    if method not in DISCRETIZATIONS:
        raise DataError(
            f"Unknown discretization {method!r}; choose one of {', '.join(DISCRETIZATIONS)}."
        )
    try:
        k = int(n_bins)
    except (TypeError, ValueError):
        k = -1
    if method == "quantile" and not 2 <= k <= MAX_BINS:
        raise DataError(f"The number of bins must be between 2 and {MAX_BINS} (got "
                        f"{str(n_bins)[:40]}); choose fewer bins.")


def encode_labels(labels: pd.Series, classes: list[str] | None = None) -> tuple[np.ndarray,
                                                                                 list[str]]:
    """Class labels -> codes (classes sorted like states; unknown labels -> -1)."""
    labels = pd.Series(labels) if not isinstance(labels, pd.Series) else labels
    factorized = _factorize(labels)
    if factorized is None or (factorized[0] < 0).any():  # missing labels: label them as text
        if classes is None:
            classes = sorted(set(labels.map(_label)), key=_sort_key)
        index = {c: i for i, c in enumerate(classes)}
        codes = np.array([index.get(_label(v), MISSING) for v in labels], dtype=CODE_DTYPE)
        return codes, classes
    inverse, uniques = factorized
    names = [_label(u) for u in uniques]
    if classes is None:
        classes = sorted(set(names), key=_sort_key)
    index = {c: i for i, c in enumerate(classes)}
    lookup = np.array([index.get(v, MISSING) for v in names] + [MISSING], dtype=CODE_DTYPE)
    return lookup[inverse], classes
