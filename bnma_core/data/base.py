"""Codes, the data layer's own limits and its error, shared by every stage (DESIGN §2).

Everything downstream (scores, structures, classifiers) sees small integer codes only:
``codes[r, v]`` in ``0 .. arities[v]-1`` and :data:`MISSING` (``-1``) for a missing value, in
arrays of :data:`CODE_DTYPE`. Bad input raises :class:`DataError` with a message written for the
person who chose the file, never a traceback and never a silently wrong result. The limits on
a file's shape and on bin counts are in :mod:`bnma_core.limits`.
"""

from __future__ import annotations

import numpy as np

CODE_DTYPE = np.int32
"""dtype of every code array handed to kernels (one dtype = one numba specialisation)."""

MISSING = -1
MAX_CATEGORIES = 64
MIN_COMPLETE_ROWS = 10
MAX_INT_CATEGORIES = 10
"""An integer column with at most this many distinct values is categorical (e.g. WBC's 1-10
scores); with more it is treated as continuous and discretized."""

CLASS_COLUMN_NAMES = ("class", "target", "label", "diagnosis")
NA_STRINGS = ["", "?", "NA", "N/A", "NaN", "nan", "null", "NULL", "None"]
DISCRETIZATIONS = ("median", "quantile", "cuts", "none")
MISSING_POLICIES = ("keep", "drop")
"""Dataset-level missing-value policy (rows): keep rows with a missing value, or drop them."""


class DataError(ValueError):
    """A problem with the user's data, with a message meant for the user."""
