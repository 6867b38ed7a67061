"""CSV -> :class:`DiscreteDataset`: validation, discretization, encoding, missing values.

Everything downstream (scores, structures, classifiers) sees small integer codes only:
``codes[r, v]`` in ``0 .. arities[v]-1`` and ``-1`` for a missing value (DESIGN §2).

Bad input raises :class:`DataError` with a message written for the person who chose the file,
never a traceback and never a silently wrong result.

One stage per module, each importing only the ones above it:

* :mod:`.base` — codes (``CODE_DTYPE``, ``MISSING``), the data layer's own limits,
  :class:`DataError` (a file's shape and bin counts: :mod:`bnma_core.limits`);
* :mod:`.labels` — raw values -> text labels, one pass per distinct value;
* :mod:`.reading` — :func:`read_table`: decoding, separator and decimal-comma sniffing, the
  pyarrow path for large files;
* :mod:`.encoding` — :class:`DiscreteEncoder` (categorical coding, discretization),
  :func:`encode_labels`;
* :mod:`.dataset` — :class:`DiscreteDataset`;
* :mod:`.preparation` — class and identifier guessing: :func:`prepare_frame`,
  :func:`choose_class_column`, :func:`numeric_class_warning`;
* :mod:`.loaders` — :func:`load_dataset`, :func:`dataset_from_codes`.

Every name is importable from ``bnma_core.data`` itself (a module-level constant is read where
it is defined: patch ``bnma_core.data.reading.PYARROW_MIN_BYTES``, not this package's copy).
:func:`~bnma_core.scores.informative_features` lives with the information measures in
:mod:`bnma_core.scores`; ``from bnma_core.data import informative_features`` still works, loaded
on first use so that this package never imports the scores (which import it).
"""

from __future__ import annotations

from ..limits import MAX_BINS, MAX_CELLS, MAX_CLASS_VALUES, MAX_COLUMNS, MAX_ROWS
from .base import (
    CLASS_COLUMN_NAMES,
    CODE_DTYPE,
    DISCRETIZATIONS,
    MAX_CATEGORIES,
    MAX_INT_CATEGORIES,
    MIN_COMPLETE_ROWS,
    MISSING,
    MISSING_POLICIES,
    NA_STRINGS,
    DataError,
)
from .dataset import DiscreteDataset
from .encoding import ColumnCoding, DiscreteEncoder, check_discretization, encode_labels
from .encoding import _cut_labels as _cut_labels
from .encoding import _cut_points as _cut_points
from .labels import _factorizing_once as _factorizing_once
from .labels import _is_na as _is_na
from .labels import _label as _label
from .labels import _state_labels as _state_labels
from .loaders import _encode_transposed as _encode_transposed
from .loaders import dataset_from_codes, load_dataset
from .preparation import (
    check_class_bins,
    choose_class_column,
    numeric_class_warning,
    prepare_frame,
    prepare_frame_rows,
)
from .reading import DECIMAL_MARKS, HEAD_BYTES, PYARROW_MIN_BYTES, SEPARATORS, read_table
from .reading import _read_pyarrow as _read_pyarrow

__all__ = [
    "MAX_BINS",
    "MAX_CELLS",
    "MAX_CLASS_VALUES",
    "MAX_COLUMNS",
    "MAX_ROWS",
    "CLASS_COLUMN_NAMES",
    "CODE_DTYPE",
    "DISCRETIZATIONS",
    "DataError",
    "MAX_CATEGORIES",
    "MAX_INT_CATEGORIES",
    "MIN_COMPLETE_ROWS",
    "MISSING",
    "MISSING_POLICIES",
    "NA_STRINGS",
    "DECIMAL_MARKS",
    "HEAD_BYTES",
    "PYARROW_MIN_BYTES",
    "SEPARATORS",
    "read_table",
    "ColumnCoding",
    "DiscreteEncoder",
    "check_discretization",
    "encode_labels",
    "DiscreteDataset",
    "check_class_bins",
    "choose_class_column",
    "numeric_class_warning",
    "prepare_frame",
    "prepare_frame_rows",
    "dataset_from_codes",
    "load_dataset",
    "informative_features",
]


def __getattr__(name: str):
    """Names whose home moved out of the data layer, imported when first asked for."""
    if name == "informative_features":
        from ..scores import informative_features

        return informative_features
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | {"informative_features"})
