"""The dataset: :class:`DiscreteDataset`, integer codes with their names, states and class
(DESIGN §2)."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import pandas as pd

from .base import CODE_DTYPE, MISSING, DataError
from .encoding import DiscreteEncoder
from .labels import _label


@dataclass
class DiscreteDataset:
    """A fully discrete data set (DESIGN §2).

    Attributes
    ----------
    codes : ndarray of shape (n_rows, n_vars), dtype int32
        State index of each value; ``-1`` marks a missing value.
    arities : ndarray of shape (n_vars,), int64
        Number of states r_i of each variable.
    names : list of str
        Variable names (the class included, at ``class_index``).
    states : list of list of str
        State labels per variable.
    class_index : int
        Column of the class variable in ``codes``.
    notices : list of str
        Plain-language notes on what loading did (dropped columns/rows, discretization).
    encoder : DiscreteEncoder or None
        How the feature columns were coded (reuse it on new rows; :meth:`DiscreteEncoder.refit`
        refits its cut points on training rows).
    raw : DataFrame or None
        The raw values of the kept rows (features and class), as read from the file.
    row_ids : ndarray of shape (n_rows,), int64
        Row number of each row in the original file (0 = first data row after the header),
        so that the numbers a user sees refer to the file even after rows were removed.
        Default ``0 .. n_rows-1``.
    """

    codes: np.ndarray
    arities: np.ndarray
    names: list[str]
    states: list[list[str]]
    class_index: int
    notices: list[str] = field(default_factory=list)
    encoder: DiscreteEncoder | None = None
    raw: pd.DataFrame | None = None
    row_ids: np.ndarray | None = None

    def __post_init__(self) -> None:
        self.codes = np.ascontiguousarray(self.codes, dtype=CODE_DTYPE)
        self.arities = np.asarray(self.arities, dtype=np.int64)
        if self.codes.ndim != 2 or self.codes.shape[1] != len(self.names):
            raise ValueError("codes must be (n_rows, n_vars) with one name per column")
        if self.codes.size and (self.codes.max(axis=0) >= self.arities).any():
            raise ValueError("a code is >= its variable's arity")
        if self.row_ids is None:
            self.row_ids = np.arange(self.codes.shape[0], dtype=np.int64)
        self.row_ids = np.asarray(self.row_ids, dtype=np.int64)
        if self.row_ids.shape != (self.codes.shape[0],):
            raise ValueError("row_ids must have one entry per row")

    # convenient views --------------------------------------------------------------------
    @property
    def n_rows(self) -> int:
        return int(self.codes.shape[0])

    @property
    def n_vars(self) -> int:
        return int(self.codes.shape[1])

    @property
    def feature_indices(self) -> np.ndarray:
        return np.array([i for i in range(self.n_vars) if i != self.class_index], dtype=np.int64)

    @property
    def X(self) -> np.ndarray:
        """Feature codes (n_rows, n_features), class column removed."""
        return np.ascontiguousarray(self.codes[:, self.feature_indices])

    @property
    def y(self) -> np.ndarray:
        """Class codes (n_rows,)."""
        return np.ascontiguousarray(self.codes[:, self.class_index])

    @property
    def feature_names(self) -> list[str]:
        return [self.names[i] for i in self.feature_indices]

    @property
    def feature_states(self) -> list[list[str]]:
        return [self.states[i] for i in self.feature_indices]

    @property
    def class_name(self) -> str:
        return self.names[self.class_index]

    @property
    def classes(self) -> list[str]:
        return list(self.states[self.class_index])

    def fingerprint(self) -> str:
        """Stable hash of codes, names and states (a cache key for dashboards)."""
        h = hashlib.sha1()
        h.update(self.codes.tobytes())
        h.update(repr((self.names, self.states, self.class_index)).encode())
        return h.hexdigest()

    def missing_mask(self) -> np.ndarray:
        return self.codes < 0

    def complete_rows(self) -> DiscreteDataset:
        """The dataset restricted to rows without a missing value."""
        keep = ~self.missing_mask().any(axis=1)
        return self.subset(np.flatnonzero(keep))

    def subset(self, rows: np.ndarray) -> DiscreteDataset:
        """The dataset restricted to ``rows`` (positions); ``row_ids`` keep the file's row
        numbers."""
        raw = None if self.raw is None else self.raw.iloc[rows].reset_index(drop=True)
        return DiscreteDataset(self.codes[rows], self.arities.copy(), list(self.names),
                               [list(s) for s in self.states], self.class_index,
                               list(self.notices), self.encoder, raw, self.row_ids[rows])

    def select_features(self, features: Any) -> DiscreteDataset:
        """The dataset with only ``features`` (names, kept in the dataset's order) and the
        class; the encoder and raw values follow, so cross-validation still refits bins."""
        wanted = [str(f) for f in features]
        unknown = [f for f in wanted if f not in self.feature_names]
        if unknown:
            raise DataError("Not features of this dataset: " + ", ".join(unknown[:10]) + ".")
        if not wanted:
            raise DataError("Keep at least one feature.")
        keep = [j for j, n in enumerate(self.names)
                if j == self.class_index or n in set(wanted)]
        names = [self.names[j] for j in keep]
        enc = self.encoder
        if enc is not None:
            enc = replace(enc, columns_=[c for c in enc.columns_ if c.name in names])
        raw = None if self.raw is None else self.raw[[n for n in names if n in self.raw]]
        dropped = len(self.feature_names) - len(wanted)
        notices = list(self.notices) + [
            f"{len(wanted)} of {len(self.feature_names)} features kept ({dropped} left out)."]
        return DiscreteDataset(self.codes[:, keep], self.arities[keep], names,
                               [list(self.states[j]) for j in keep], keep.index(
                                   self.class_index), notices, enc, raw, self.row_ids)

    def position_of_row(self, row_id: int) -> int:
        """Position in ``codes`` of the file's row ``row_id`` (ValueError if it was removed)."""
        hit = np.flatnonzero(self.row_ids == int(row_id))
        if not len(hit):
            raise ValueError(f"Row {row_id} of the file is not in this dataset (it was removed "
                             "while loading, e.g. for a missing value).")
        return int(hit[0])

    def codes_from_states(self, frame: pd.DataFrame) -> np.ndarray:
        """Feature codes of rows given as state labels (a DataFrame with the feature columns;
        ``None`` / NaN / an unknown label -> ``-1``), e.g. a patient typed into a form."""
        absent = [n for n in self.feature_names if n not in frame.columns]
        if absent:
            raise DataError("Columns missing from the data: " + ", ".join(absent) + ".")
        out = np.full((len(frame), len(self.feature_names)), MISSING, dtype=CODE_DTYPE)
        for j, (name, states) in enumerate(zip(self.feature_names, self.feature_states)):
            index = {s: k for k, s in enumerate(states)}
            for r, v in enumerate(frame[name].to_numpy(dtype=object)):
                if v is None or (isinstance(v, float) and np.isnan(v)) or v is pd.NA:
                    continue
                out[r, j] = index.get(str(v), index.get(_label(v), MISSING))
        return out

    def to_frame(self) -> pd.DataFrame:
        """State labels as a DataFrame (missing values as NaN)."""
        cols = {}
        for j, name in enumerate(self.names):
            lab = np.array(self.states[j] + [np.nan], dtype=object)
            cols[name] = lab[np.where(self.codes[:, j] < 0, len(self.states[j]), self.codes[:, j])]
        return pd.DataFrame(cols)

    def summary(self) -> pd.DataFrame:
        """One row per variable: role, kind, number of states, missing count, state counts."""
        rows = []
        kinds = {}
        if self.encoder is not None:
            kinds = {c.name: c.kind for c in self.encoder.columns_}
        for j, name in enumerate(self.names):
            col = self.codes[:, j]
            counts = np.bincount(col[col >= 0], minlength=self.arities[j])
            rows.append({
                "variable": name,
                "role": "class" if j == self.class_index else "feature",
                "kind": kinds.get(name, "categorical"),
                "states": int(self.arities[j]),
                "missing": int((col < 0).sum()),
                "counts": ", ".join(f"{s}: {c}" for s, c in zip(self.states[j], counts)),
            })
        return pd.DataFrame(rows)
