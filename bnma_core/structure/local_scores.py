"""Local scores of every parent set of every variable, for exact structure learning
(DESIGN §3, §9).

Each variable set's joint contingency table is counted once (numba,
:func:`bnma_core.kernels.exact.subset_log_terms`) and every family score follows from two set
terms: BDeu ``log ML(v | P) = A(P ∪ {v}) - A(P)``, K2 ``log ML(v | P) = A(P ∪ {v}) + G_r(P)``.
These are the Dirichlet log marginal likelihood of
:func:`bnma_core.scores.log_ml_counts` rearranged by cells (tests check equality to 1e-9); no
pass over the data per family.

Table layout: ``table[v, compress(P, v)]`` with ``compress`` of
:mod:`bnma_core.kernels.exact` (parent bitmask with bit v removed).
"""

from __future__ import annotations

import math
from collections.abc import Iterable

import numpy as np

from ..data import CODE_DTYPE, DataError
from ..kernels.exact import local_score_table, subset_log_terms
from ..scores import parents_to_mask

SCORE_KINDS = {"k2": 0, "bdeu": 1}
MAX_VARS = 30
MAX_FAMILY_CELLS = 1 << 22
"""Largest family (child states × parent configurations) a learned network may hold: its
dense table of parameters is then at most 32 MB. Larger parent sets get score -inf, like sets
beyond ``max_parents`` (a BDeu optimum on few, repeated rows — a bootstrap sample — can ask for
six 10-valued parents, 10^7 cells per node, more memory than a classifier should take)."""


def validate_complete(X: np.ndarray, arities: Iterable[int]) -> tuple[np.ndarray, np.ndarray]:
    """Check a complete code table and its arities; returns (int32 codes, int64 arities)."""
    X = np.asarray(X)
    if X.ndim != 2 or X.shape[0] == 0 or X.shape[1] == 0:
        raise DataError("The data must be a non-empty table (rows x variables) of state codes.")
    if X.dtype.kind not in "iu":
        if X.dtype.kind == "f" and np.isfinite(X).all() and (np.mod(X, 1) == 0).all():
            X = X.astype(np.int64)
        else:
            raise DataError("Exact structure learning needs integer state codes without "
                            "missing values (NaN).")
    ar = np.asarray(list(arities) if not isinstance(arities, np.ndarray) else arities,
                    dtype=np.int64)
    n = X.shape[1]
    if ar.shape != (n,):
        raise ValueError(f"arities must give one number of states per column ({n}); got "
                         f"{ar.shape[0] if ar.ndim == 1 else ar.shape}.")
    if (ar < 1).any():
        raise ValueError("Every variable needs at least one state.")
    if (X < 0).any():
        bad = int((X < 0).any(axis=1).sum())
        raise DataError(f"{bad} row(s) have missing values; exact structure learning needs "
                        "complete rows (remove or impute them first, as the paper does).")
    if (X >= ar[None, :]).any():
        col = int(np.flatnonzero((X >= ar[None, :]).any(axis=0))[0])
        raise DataError(f"Column {col} holds a state code >= its number of states "
                        f"({int(ar[col])}).")
    if n > MAX_VARS:
        raise DataError(f"Exact structure learning handles at most {MAX_VARS} variables "
                        f"(got {n}); select features first.")
    return np.ascontiguousarray(X, dtype=CODE_DTYPE), ar


def check_score(score: str, ess: float) -> int:
    if score not in SCORE_KINDS:
        raise ValueError(f"Unknown score {score!r} for exact learning; choose 'bdeu' or 'k2'.")
    if not (isinstance(ess, (int, float, np.floating, np.integer)) and ess > 0
            and math.isfinite(ess)):
        raise ValueError(f"The equivalent sample size must be positive (got {ess}).")
    return SCORE_KINDS[score]


def check_weights(sample_weight, n_rows: int) -> np.ndarray | None:
    """None, or a validated float64 array of non-negative finite row weights."""
    if sample_weight is None:
        return None
    w = np.asarray(sample_weight, dtype=np.float64)
    if w.shape != (n_rows,):
        raise ValueError(f"sample_weight must have one weight per row ({n_rows}).")
    if not np.isfinite(w).all() or (w < 0).any():
        raise ValueError("sample_weight must be finite and non-negative.")
    if w.sum() <= 0:
        raise ValueError("sample_weight sums to zero.")
    return w


def set_terms(X: np.ndarray, arities: np.ndarray, score: str = "bdeu", ess: float = 1.0,
              max_size: int | None = None, sample_weight: np.ndarray | None = None
              ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Set terms A (2^n,) and G (n_r, 2^n) of every variable set of at most ``max_size``
    variables (see :func:`bnma_core.kernels.exact.subset_log_terms`) and the index of each
    variable's arity in G's rows. ``sample_weight`` weights the rows (counts become sums of
    weights, as in :func:`bnma_core.scores.family_counts`)."""
    X, ar = validate_complete(X, arities)
    kind = check_score(score, ess)
    w = check_weights(sample_weight, X.shape[0])
    n = X.shape[1]
    r_values, r_index = np.unique(ar, return_inverse=True)
    patterns, inv, counts = np.unique(X, axis=0, return_inverse=True, return_counts=True)
    weights = (counts.astype(np.float64) if w is None
               else np.bincount(inv.ravel(), weights=w, minlength=len(patterns)))
    keep = weights > 0
    patterns, weights = patterns[keep], weights[keep]
    A, G = subset_log_terms(np.ascontiguousarray(patterns.T, dtype=CODE_DTYPE),
                            weights, ar, n if max_size is None else
                            int(max_size), kind, float(ess), r_values.astype(np.float64))
    return A, G, r_index.astype(np.int64)


def local_scores(X: np.ndarray, arities: Iterable[int], score: str = "bdeu", ess: float = 1.0,
                 max_parents: int | None = None, forced: Iterable[int] = (),
                 sample_weight: np.ndarray | None = None,
                 max_family_cells: int | None = MAX_FAMILY_CELLS) -> np.ndarray:
    """Local scores of every parent set of every variable (BDeu with equivalent sample size
    ``ess`` or K2), uniform structure prior.

    Parameters
    ----------
    X : (n_rows, n_vars) int array
        Complete state codes.
    arities : (n_vars,) ints
    score : {"bdeu", "k2"}
    ess : float
        BDeu equivalent sample size α (1 in Sugahara et al.).
    max_parents : int or None
        Largest parent set among the learned variables (None = no limit).
    forced : iterable of int
        Variables that are parents of every other variable and are not learned (the class in
        EANB). They must be the last columns; the table then covers the first
        n_vars - len(forced) variables, each family scored with the forced parents added.
    sample_weight : (n_rows,) floats, optional
        Row weights (fractional counts, e.g. boosting); default 1 per row.
    max_family_cells : int or None, default :data:`MAX_FAMILY_CELLS`
        Largest r_v · q_v (forced parents included) a family may have; None = no limit.

    Returns
    -------
    (m, 2^(m-1)) float64
        ``table[v, compress(P, v)] = log ML(v | P ∪ forced)``; -inf beyond ``max_parents``
        and for families larger than ``max_family_cells``.

    References
    ----------
    Heckerman, Geiger & Chickering (1995), eq. 8 (BDeu); Cooper & Herskovits (1992) (K2);
    Silander & Myllymäki (2006), §3 (all local scores from the contingency tables).
    """
    X, ar = validate_complete(X, arities)
    n = X.shape[1]
    forced = sorted(int(f) for f in forced)
    m = n - len(forced)
    if forced and forced != list(range(m, n)):
        raise ValueError("Forced parents must be the last columns.")
    lim = m - 1 if max_parents is None else int(max_parents)
    if lim < 0:
        raise ValueError("max_parents must be a non-negative integer.")
    A, G, r_index = set_terms(X, ar, score, ess, max_size=min(lim, m - 1) + 1 + len(forced),
                              sample_weight=sample_weight)
    table = local_score_table(A, G, r_index, m, np.int64(parents_to_mask(forced)),
                              SCORE_KINDS[score], lim)
    if max_family_cells is not None and float(np.prod(ar.astype(float))) > max_family_cells:
        for v in range(m):  # row by row: no second table in memory
            table[v][family_cells_row(ar, m, v) > max_family_cells] = -np.inf
    return table


def family_cells_row(arities: np.ndarray, m: int, v: int) -> np.ndarray:
    """``cells[compress(P, v)] = r_v · Π_{p ∈ P ∪ forced} r_p`` for every parent set P of
    variable ``v`` among the first ``m`` columns (forced = the columns after them), as floats,
    laid out like row ``v`` of :func:`local_scores`' table."""
    ar = np.asarray(arities, dtype=float)
    row = np.empty(1 << max(m - 1, 0))
    row[0] = ar[v] * float(np.prod(ar[m:]))
    for b, u in enumerate(u for u in range(m) if u != v):
        row[1 << b: 2 << b] = row[: 1 << b] * ar[u]  # the sets with bit b: those without, × r_u
    return row


def lookup(table: np.ndarray, v: int, parents: Iterable[int]) -> float:
    """``table[v, compress(P, v)]`` for a parent list P (indices of the learned variables)."""
    mask = parents_to_mask(parents)
    if (mask >> v) & 1:
        raise ValueError("A variable cannot be its own parent.")
    low = mask & ((1 << v) - 1)
    return float(table[v, low | ((mask >> (v + 1)) << v)])
