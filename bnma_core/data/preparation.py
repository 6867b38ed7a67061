"""Preparing a table for classification: which column is the class, which columns stay.

:func:`prepare_frame_rows` reads a table, picks the class column (:func:`choose_class_column`),
drops rows without a class, groups a numeric class into bins on request, and leaves out
constant and identifier-like columns, each with a notice; :func:`numeric_class_warning` flags a
class that looks like a measurement. Ranking the features by their information about the class
is :func:`bnma_core.scores.informative_features`.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pandas as pd

from ..limits import MAX_CLASS_VALUES
from .base import CLASS_COLUMN_NAMES, MAX_INT_CATEGORIES, MIN_COMPLETE_ROWS, DataError
from .dataset import DiscreteDataset
from .encoding import _cut_labels, _cut_points
from .labels import _as_numeric, _factorize, _labels, _n_labels
from .reading import read_table


def choose_class_column(columns: list[str], target: str | None = None) -> str:
    """The class column: ``target`` if given, else a column named class/target/label/diagnosis
    (case-insensitive), else the last column."""
    if target is not None:
        if target not in columns:
            raise DataError(
                f"The class column {target!r} is not in the file. Columns are: "
                + ", ".join(columns[:20]) + ("..." if len(columns) > 20 else "")
            )
        return target
    lower = {c.lower(): c for c in columns}
    for name in CLASS_COLUMN_NAMES:
        if name in lower:
            return lower[name]
    return columns[-1]


_ID_WORDS = frozenset({"id", "ids", "uid", "uuid", "key", "code", "no", "nr", "num", "number",
                       "index", "idx", "ref", "record", "row"})


def _id_name(name: Any) -> bool:
    """A column name with a word that names identifiers (``patient_id``, ``PatientID``,
    ``Sample code number``, ``row``) — word by word, so ``acid`` or ``fluid`` do not count."""
    words = re.findall(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+", str(name))
    return any(w.lower() in _ID_WORDS for w in words)


def _id_like(col: pd.Series) -> bool:
    """All values present and distinct, and either text (a label that is never repeated
    carries no information) or whole numbers that count rows (consecutive) or sit in a column
    named like an identifier. Other all-distinct whole numbers (an income, a count) are
    measurements: kept and binned like any numeric column."""
    if col.isna().any() or len(col) < MIN_COMPLETE_ROWS:
        return False
    factorized = _factorize(col)
    if (len(factorized[1]) if factorized is not None else col.nunique()) != len(col):
        return False
    num = _as_numeric(col)
    if num is None:
        return True
    values = num.to_numpy()
    if not np.all(np.equal(np.mod(values, 1), 0)):
        return False
    return _id_name(col.name) or bool(np.all(np.diff(np.sort(values)) == 1))


def prepare_frame(source: Any, target: str | None = None, drop_id_columns: bool = True
                  ) -> tuple[pd.DataFrame, pd.Series, list[str]]:
    """Read and validate a table; split it into raw features and class labels.

    Returns ``(features, labels, notices)``; rows with a missing class are dropped (noted).
    Raises :class:`DataError` (one sentence: the problem and the remedy, DESIGN §2) for every
    input it cannot use: unknown columns, no data rows, an entirely missing column, an unusable
    class column.
    """
    X, labels, notices, _ = prepare_frame_rows(source, target, drop_id_columns)
    return X, labels, notices


def prepare_frame_rows(source: Any, target: str | None = None, drop_id_columns: bool = True,
                       *, sep: str | None = None, decimal: str | None = None,
                       drop_columns: Any = (), class_bins: int = 0,
                       drop_constant_columns: bool = True
                       ) -> tuple[pd.DataFrame, pd.Series, list[str], np.ndarray]:
    """:func:`prepare_frame` plus the file row number (0 = first data row) of every row kept.

    ``sep`` / ``decimal`` as in :func:`read_table`; ``drop_columns`` are left out (the user's
    choice); ``class_bins`` > 1 groups a numeric class column into that many equal-frequency
    bins; constant columns (one value in every row) are left out with a notice.
    """
    class_bins = check_class_bins(class_bins)
    df = read_table(source, sep=sep, decimal=decimal, min_rows=MIN_COMPLETE_ROWS)
    notices: list[str] = list(df.attrs.get("notices", []))
    drop_columns = [str(c) for c in (drop_columns or ())]
    unknown = [c for c in drop_columns if c not in df.columns]
    if unknown:
        raise DataError("Columns to leave out are not in the file: " + ", ".join(unknown) + ".")
    if drop_columns:
        df = df.drop(columns=drop_columns)
        notices.append("Left out as you asked: " + ", ".join(drop_columns) + ".")
    if df.shape[1] < 2:
        raise DataError(
            f"The table has {df.shape[1]} column(s); at least two are needed "
            "(one or more features and a class). Is the file comma-separated?"
        )
    if len(df) == 0:
        raise DataError("The file has a header but no data rows.")
    cls = choose_class_column(list(df.columns), target)
    for name in df.columns:
        if df[name].isna().all():
            raise DataError(f"Column {name!r} is entirely missing; remove it or fill it in.")
    y = df[cls]
    row_ids = np.arange(len(df), dtype=np.int64)
    if y.isna().any():
        n = int(y.isna().sum())
        notices.append(f"{n} row(s) without a value in the class column {cls!r} were removed.")
        row_ids = row_ids[y.notna().to_numpy()]
        df = df.loc[y.notna()].reset_index(drop=True)
        y = df[cls]
    labels = _labels(y)
    if class_bins > 1:
        labels = _bin_class(y, cls, class_bins, notices)
    n_classes = labels.nunique()
    if n_classes < 2:
        only = labels.iloc[0] if len(labels) else "(none)"
        raise DataError(
            f"The class column {cls!r} has a single value ({only!r}); a classifier needs at "
            "least two classes. Choose another class column."
        )
    if n_classes > MAX_CLASS_VALUES:
        raise DataError(
            f"The class column {cls!r} has {n_classes} different values (more than "
            f"{MAX_CLASS_VALUES}). Is it the right column? A continuous outcome must be "
            "grouped into bins before classification (choose a number of class groups)."
        )
    X = df.drop(columns=[cls])
    if drop_constant_columns:
        const = [c for c in X.columns if _n_labels(X[c]) == 1]
        if const and len(const) < X.shape[1]:
            X = X.drop(columns=const)
            notices.append("Left out because every row has the same value (a constant "
                           "carries no information): " + ", ".join(const) + ".")
    if drop_id_columns:
        ids = [c for c in X.columns if _id_like(X[c])]
        if ids and len(ids) < X.shape[1]:
            X = X.drop(columns=ids)
            notices.append("Identifier-like column(s) removed (every value distinct): "
                           + ", ".join(ids) + ".")
    return X.reset_index(drop=True), labels.reset_index(drop=True), notices, row_ids


def check_class_bins(class_bins: Any) -> int:
    """The number of class bins as an int (0 or 1: the class is not grouped), or
    :class:`DataError` unless it is a whole number from 0 to :data:`MAX_CLASS_VALUES` (more
    classes are refused anyway): checked before any bin is computed."""
    try:
        k = int(class_bins or 0)
    except (TypeError, ValueError):
        k = -1
    if not 0 <= k <= MAX_CLASS_VALUES:
        raise DataError(f"The number of class groups must be between 2 and {MAX_CLASS_VALUES} "
                        f"(got {str(class_bins)[:40]}); choose fewer groups.")
    return k


def _bin_class(y: pd.Series, cls: str, k: int, notices: list[str]) -> pd.Series:
    """A numeric class column grouped into ``k`` equal-frequency bins with readable labels."""
    num = _as_numeric(y)
    if num is None:
        raise DataError(f"The class column {cls!r} is not numeric, so it cannot be grouped "
                        "into bins; its values are used as classes.")
    cuts = _cut_points(num.to_numpy(dtype=float), "quantile", k, None)
    names = _cut_labels(cuts)
    codes = np.searchsorted(cuts, num.to_numpy(dtype=float), side="left")
    notices.append(f"The numeric class column {cls!r} was grouped into {len(names)} classes "
                   "of about equal size: " + ", ".join(names) + ".")
    return pd.Series([names[c] for c in codes], index=y.index, name=y.name)


def numeric_class_warning(ds: DiscreteDataset, limit: int = MAX_INT_CATEGORIES) -> str:
    """A plain warning when the class looks like a measurement (numeric, more than ``limit``
    values, e.g. an ``age`` column), else ``""``: such a target is rarely meant as that many
    separate classes."""
    classes = ds.classes
    if len(classes) <= limit:
        return ""
    try:
        [float(c) for c in classes]
    except ValueError:
        return ""
    return (f"The class column {ds.class_name!r} holds numbers with {len(classes)} different "
            "values, so every value is treated as a class of its own. If it is a "
            "measurement, group it into a few bins, or choose another class column.")
