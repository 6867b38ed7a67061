"""Raw values -> text labels, one pass per distinct value.

A column's distinct values are found once by hashing (:func:`_factorize`; within one
:func:`~bnma_core.data.load_dataset` call each categorical column's factorization is kept,
:func:`_factorizing_once`), then labelled (``1.0`` -> ``"1"``), sorted as a reader expects
(numbers by value, bin labels by their upper end) and tested for being numeric or continuous.
Shared by the reader (pyarrow's categoricals), the encoder and the preparation checks.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

import numpy as np
import pandas as pd

from .base import MISSING


def _as_numeric(col: pd.Series) -> pd.Series | None:
    """The column as floats if every non-missing value is a number, else None."""
    if pd.api.types.is_bool_dtype(col):
        return col.astype(float)
    if pd.api.types.is_numeric_dtype(col):
        return col.astype(float)
    factorized = _factorize(col)
    if factorized is not None:  # parse each distinct value once
        inverse, uniques = factorized
        if not uniques:
            return None
        num_u = pd.to_numeric(pd.Series(uniques, dtype=object), errors="coerce")
        if num_u.isna().any():
            return None
        vals = np.append(num_u.to_numpy(dtype=float), np.nan)
        return pd.Series(vals[inverse], index=col.index, dtype=float)
    nonmiss = col.dropna()
    num = pd.to_numeric(nonmiss, errors="coerce")
    if len(nonmiss) and num.notna().all():
        out = pd.Series(np.nan, index=col.index, dtype=float)
        out[nonmiss.index] = num.astype(float)
        return out
    return None


def _is_continuous(num: pd.Series, max_int_categories: int) -> bool:
    vals = num.dropna().to_numpy()
    if vals.size == 0:
        return False
    if not np.all(np.equal(np.mod(vals, 1), 0)):
        return True
    return np.unique(vals).size > max_int_categories


_BIN_LABEL = re.compile(r"^(?:≤ (?P<le>\S+)|(?P<lo>[^–]+)–(?P<hi>\S+)|> (?P<gt>\S+))$")


def _sort_key(v: str) -> tuple:
    """Numbers by value, bin labels (``≤ 3.5``, ``3.5–7``, ``> 7``) by their upper end, then
    text."""
    try:
        return (0, float(v), v)
    except ValueError:
        pass
    m = _BIN_LABEL.match(v)
    if m:
        try:
            upper = float(m["le"] or m["hi"]) if not m["gt"] else float("inf")
            return (0, upper, v)
        except ValueError:
            pass
    return (1, 0.0, v)


def _label(v: Any) -> str:
    """Text label of a raw categorical value (1.0 -> '1')."""
    if isinstance(v, (float, np.floating)) and float(v).is_integer():
        return str(int(v))
    return str(v).strip()


def _labels(col: pd.Series) -> pd.Series:
    """``col.map(_label)`` computed once per distinct value (missing stays missing)."""
    factorized = _factorize(col)
    if factorized is None:
        return col.map(_label)
    inverse, uniques = factorized
    if isinstance(col.dtype, pd.CategoricalDtype):  # stays categorical: labels merged by code
        names = [_label(u) for u in uniques]
        states = list(dict.fromkeys(names))
        if len(states) < len(names):
            pos = {s: k for k, s in enumerate(states)}
            remap = np.array([pos[v] for v in names] + [MISSING], dtype=np.intp)
            inverse = remap[inverse]
        cat = pd.Categorical.from_codes(inverse, categories=pd.Index(states, dtype=object))
        return pd.Series(cat, index=col.index, name=col.name)
    lab = np.array([_label(u) for u in uniques] + [np.nan], dtype=object)
    return pd.Series(lab[inverse], index=col.index, name=col.name, dtype=object)


def _n_labels(col: pd.Series) -> int:
    """Number of distinct labels of the non-missing values."""
    factorized = _factorize(col)
    if factorized is None:
        return col.dropna().map(_label).nunique()
    return len({_label(u) for u in factorized[1] if not _is_na(u)})


def _is_na(v: Any) -> bool:
    return v is None or v is pd.NA or (isinstance(v, (float, np.floating)) and np.isnan(v))


def _factorize(col: pd.Series) -> tuple[np.ndarray, list] | None:
    """(codes of the distinct values, -1 = missing; the distinct values) by hashing, so that
    :func:`_label` runs once per distinct value, not per cell. None for mixed columns such as
    booleans next to numbers (hashing would merge True with 1)."""
    if isinstance(col.dtype, pd.CategoricalDtype):  # codes as they are, unused states dropped
        codes = col.array.codes
        memo = _FACTORIZED.get()
        if memo is None:
            return _factorize_categorical(codes, col.cat.categories)
        base = codes if codes.base is None else codes.base
        key = (codes.__array_interface__["data"][0], codes.shape, codes.strides)
        hit = memo.get(key)
        if hit is None or hit[0] is not base or hit[1] is not col.dtype:
            hit = (base, col.dtype, _factorize_categorical(codes, col.cat.categories))
            memo[key] = hit
        return hit[2]
    if pd.api.types.infer_dtype(col, skipna=True) not in _HASH_SAFE:
        return None
    inverse, uniques = pd.factorize(col, use_na_sentinel=True)
    return inverse, list(uniques)


def _factorize_categorical(codes: np.ndarray, cats: pd.Index) -> tuple[np.ndarray, list]:
    used = np.bincount(codes.astype(np.intp) + 1, minlength=len(cats) + 1)[1:] > 0
    if used.all():
        return codes, list(cats)
    remap = np.full(len(cats) + 1, -1, dtype=np.intp)
    remap[:-1][used] = np.arange(int(used.sum()))
    return remap[codes], list(cats[used])


_FACTORIZED: ContextVar[dict | None] = ContextVar("_FACTORIZED", default=None)
"""Within :func:`_factorizing_once` (one :func:`load_dataset` call): each categorical column's
factorization by the address, shape and strides of its codes (the codes array and the dtype
are kept and compared, so a key is never reused for other data), so that the constant-column,
identifier, numeric and state checks and the encoding share one pass over the codes."""


@contextmanager
def _factorizing_once() -> Iterator[None]:
    token = _FACTORIZED.set({})
    try:
        yield
    finally:
        _FACTORIZED.reset(token)


_HASH_SAFE = {"string", "integer", "floating", "mixed-integer-float", "boolean", "empty",
              "decimal", "categorical"}
"""Kinds of column (``pandas.api.types.infer_dtype``) whose distinct values hash apart exactly
when their labels differ or coincide; other mixes (e.g. True next to 1) are labelled cell by
cell."""


def _state_labels(col: pd.Series) -> list[str]:
    """Sorted distinct labels of the non-missing values of a categorical column."""
    factorized = _factorize(col)
    values = col.dropna() if factorized is None else [u for u in factorized[1] if not _is_na(u)]
    return sorted({_label(v) for v in values}, key=_sort_key)
