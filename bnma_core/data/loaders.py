"""Loaders: a table or a code matrix -> :class:`~bnma_core.data.DiscreteDataset`.

:func:`load_dataset` chains reading, preparation and encoding (each categorical column
factorized once) and applies the missing-value policy; :func:`dataset_from_codes` wraps codes
that are integers already (e.g. samples of a network).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from .base import CODE_DTYPE, MIN_COMPLETE_ROWS, MISSING_POLICIES, DataError
from .dataset import DiscreteDataset
from .encoding import DiscreteEncoder, check_discretization, encode_labels
from .labels import _factorizing_once
from .preparation import prepare_frame_rows


def _encode_transposed(X: pd.DataFrame, labels: pd.Series, discretization: str, n_bins: int,
                       cut_points: dict | None) -> tuple[DiscreteEncoder, np.ndarray,
                                                         list[str], np.ndarray]:
    """Fit the encoder on ``X`` and encode the class labels; the features' codes are written
    variable by variable into a ``(n_vars + 1, n_rows)`` array (int8 when every arity is below
    128) whose last row is left for the class codes. Returns ``(enc, y, classes, codes_t)``."""
    enc = DiscreteEncoder(discretization, n_bins, cut_points).fit(X)
    y, classes = encode_labels(labels)
    small = max([len(classes), *enc.arities]) < 128  # codes fit in int8 before the copy
    codes_t = np.empty((X.shape[1] + 1, len(X)), dtype=np.int8 if small else CODE_DTYPE)
    enc._transform_into(X, codes_t[:-1])  # variable by variable
    return enc, y, classes, codes_t


def _complete_rows(codes_t: np.ndarray) -> tuple[np.ndarray, int]:
    """Mask and count of the rows with no missing feature value (``codes_t`` is transposed,
    class last); :class:`DataError` when fewer than :data:`MIN_COMPLETE_ROWS`."""
    complete = ~(codes_t[:-1] < 0).any(axis=0)
    n_complete = int(complete.sum())
    if n_complete < MIN_COMPLETE_ROWS:
        raise DataError(
            f"Only {n_complete} row(s) have no missing value; at least {MIN_COMPLETE_ROWS} "
            "complete rows are needed to learn anything."
        )
    return complete, n_complete


def _note_discretized(enc: DiscreteEncoder, notices: list[str]) -> None:
    """Append a notice naming the continuous columns ``enc`` discretized, and how (if any)."""
    cont = [c.name for c in enc.columns_ if c.kind == "continuous"]
    if cont:
        how = {"median": "two bins split at the median",
               "quantile": f"{enc.n_bins} equal-frequency bins",
               "cuts": "the given cut points"}[enc.discretization]
        notices.append(f"Continuous column(s) discretized into {how}: " + ", ".join(cont) + ".")


def _apply_missing_policy(missing: str, codes: np.ndarray, raw: pd.DataFrame,
                          row_ids: np.ndarray, complete: np.ndarray, n_complete: int,
                          notices: list[str]) -> tuple[np.ndarray, pd.DataFrame, np.ndarray]:
    """Under ``missing="drop"`` keep only the ``complete`` rows of ``codes``, ``raw`` and
    ``row_ids`` (with a notice); otherwise return them unchanged."""
    if missing == "drop" and n_complete < len(codes):
        notices.append(f"{len(codes) - n_complete} row(s) with missing values were set aside "
                       f"for training ({n_complete} complete rows remain).")
        codes, raw = codes[complete], raw.loc[complete].reset_index(drop=True)
        row_ids = row_ids[complete]
    return codes, raw, row_ids


def _assemble_dataset(codes: np.ndarray, enc: DiscreteEncoder, classes: list[str], cls: Any,
                      notices: list[str], raw: pd.DataFrame,
                      row_ids: np.ndarray) -> DiscreteDataset:
    """Wrap the row-major ``codes`` (class last) as a :class:`DiscreteDataset`;
    :class:`DataError` when fewer than two classes are left."""
    y = codes[:, -1]
    if y.size == 0 or y.min() == y.max():
        raise DataError("After removing incomplete rows only one class is left.")
    return DiscreteDataset(
        codes=codes,
        arities=np.append(enc.arities, len(classes)),
        names=enc.names + [str(cls)],
        states=enc.states + [classes],
        class_index=len(enc.names),
        notices=notices,
        encoder=enc,
        raw=raw,
        row_ids=row_ids,
    )


def load_dataset(source: Any, target: str | None = None, *, discretization: str = "median",
                 n_bins: int = 3, cut_points: dict | None = None, missing: str = "keep",
                 drop_id_columns: bool = True, sep: str | None = None,
                 decimal: str | None = None, drop_columns: Any = (),
                 class_bins: int = 0) -> DiscreteDataset:
    """Read a CSV (path, bytes, file object or DataFrame) into a :class:`DiscreteDataset`.

    Parameters
    ----------
    source : path, bytes, file-like or DataFrame
    target : str, optional
        Class column; default a column named class/target/label/diagnosis, else the last.
    discretization, n_bins, cut_points
        How continuous columns are binned (see :class:`DiscreteEncoder`).
    missing : {"keep", "drop"}
        ``"keep"`` (default; the same default as the CLI and the dashboard) keeps rows with a
        missing feature value, coded ``-1`` (the methods learn from available cases and
        marginalize at prediction); ``"drop"`` removes them (noted). ``row_ids`` keep the
        file's row numbers either way.
    drop_id_columns : bool
        Remove identifier-like columns (every value distinct), with a notice.
    sep, decimal : str, optional
        Column separator and decimal mark; detected when None (see :func:`read_table`).
    drop_columns : list of str
        Columns to leave out. Constant columns are always left out (with a notice).
    class_bins : int
        Group a numeric class column into this many equal-frequency classes (0 = no).

    Raises
    ------
    DataError
        For every kind of bad input, with a plain-language message.

    Examples
    --------
    >>> from bnma_core.data import load_dataset
    >>> from bnma_core.datasets import bundled_path
    >>> ds = load_dataset(bundled_path("wbc.csv"))
    >>> ds.X.shape, ds.names[ds.class_index], ds.states[ds.class_index]
    ((699, 9), 'class', ['benign', 'malignant'])
    >>> int((ds.X == -1).sum())  # missing feature values are kept, coded -1
    16

    A DataFrame works too; text columns keep their states, numbers are cut at the median:

    >>> import pandas as pd
    >>> df = pd.DataFrame({"colour": ["red", "blue", "red", "green"] * 3,
    ...                    "weight": [1.0, 2.5, 3.0, 0.5] * 3, "class": ["a", "b"] * 6})
    >>> tiny = load_dataset(df)
    >>> tiny.states[0], tiny.arities.tolist()
    (['blue', 'green', 'red'], [3, 2, 2])
    """
    if missing not in MISSING_POLICIES:
        raise DataError(f"Unknown missing-value policy {missing!r}; use 'drop' or 'keep'.")
    check_discretization(discretization, n_bins)  # before the file is read
    with _factorizing_once():  # each categorical column factorized once
        X, labels, notices, row_ids = prepare_frame_rows(
            source, target, drop_id_columns, sep=sep, decimal=decimal,
            drop_columns=drop_columns, class_bins=class_bins)
        cls = labels.name
        enc, y, classes, codes_t = _encode_transposed(X, labels, discretization, n_bins,
                                                      cut_points)
    codes_t[-1] = y
    complete, n_complete = _complete_rows(codes_t)
    raw = X.copy(deep=False)  # (copy on write: X's columns are not changed)
    raw[cls] = labels
    codes = np.empty(codes_t.shape[::-1], dtype=CODE_DTYPE)
    codes[...] = codes_t.T
    del codes_t
    codes, raw, row_ids = _apply_missing_policy(missing, codes, raw, row_ids, complete,
                                                n_complete, notices)
    _note_discretized(enc, notices)
    return _assemble_dataset(codes, enc, classes, cls, notices, raw, row_ids)


def dataset_from_codes(codes: np.ndarray, names: list[str] | None = None,
                       arities: np.ndarray | None = None, class_index: int = -1,
                       states: list[list[str]] | None = None) -> DiscreteDataset:
    """Wrap an integer code matrix (e.g. samples of a network) as a dataset."""
    codes = np.asarray(codes, dtype=CODE_DTYPE)
    n_vars = codes.shape[1]
    if names is None:
        names = [f"X{i}" for i in range(n_vars)]
    if arities is None:
        arities = np.maximum(codes.max(axis=0) + 1, 1)
    arities = np.asarray(arities, dtype=np.int64)
    if states is None:
        states = [[str(s) for s in range(a)] for a in arities]
    return DiscreteDataset(codes, arities, list(names), states, class_index % n_vars)
