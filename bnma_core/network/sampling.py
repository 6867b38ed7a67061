"""Forward (ancestral) sampling of a :class:`~bnma_core.network.DiscreteBN`.

The loop is the numba kernel :func:`bnma_core.kernels.sampling.forward_sample` (Henrion 1988,
probabilistic logic sampling); this module builds its flat tables once per network (cached on
the instance) and wraps the codes as arrays, datasets or label frames.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from ..data import DataError, DiscreteDataset, dataset_from_codes
from ..kernels.counting import parent_strides
from ..kernels.sampling import forward_sample

if TYPE_CHECKING:
    from .model import DiscreteBN

__all__ = ["MAX_SAMPLE_CELLS", "labels_frame", "sample_chunks", "sample_codes",
           "sample_dataset", "sample_frame", "sampling_tables"]

MAX_SAMPLE_CELLS = 1 << 28
"""Rows × variables of one in-memory sample (268 million cells: 2 GiB of uniform draws and
1 GiB of codes); larger samples are streamed with :func:`sample_chunks` (``bnma sample`` does)."""


def sampling_tables(bn: DiscreteBN) -> tuple[np.ndarray, ...]:
    """(order, par_flat, par_off, stride_flat, cum_flat, cpt_off) for
    :func:`~bnma_core.kernels.sampling.forward_sample` (cached on ``bn``)."""
    t = bn._cache.get("sampling")
    if t is not None:
        return t
    n = bn.n_vars
    par_off = np.zeros(n + 1, dtype=np.int64)
    par_off[1:] = np.cumsum([len(p) for p in bn.parents])
    par_flat = np.concatenate([*bn.parents, np.zeros(0, np.int64)]).astype(np.int64)
    stride_flat = np.concatenate(
        [*(parent_strides(p, bn.arities) for p in bn.parents), np.zeros(0, np.int64)])
    cums = []
    for c in bn.cpts:
        cum = np.cumsum(c, axis=1)
        last = c.shape[1] - 1 - np.argmax((c > 0)[:, ::-1], axis=1)
        cum[np.arange(c.shape[1])[None, :] >= last[:, None]] = 2.0  # never pick a zero state
        cums.append(cum.ravel())
    cpt_off = np.zeros(n + 1, dtype=np.int64)
    cpt_off[1:] = np.cumsum([c.size for c in bn.cpts])
    t = (np.array(bn.topological_order(), dtype=np.int64), par_flat, par_off,
         stride_flat.astype(np.int64), np.concatenate(cums), cpt_off)
    bn._cache["sampling"] = t
    return t


def sample_codes(bn: DiscreteBN, n_rows: int,
                 seed: int | np.random.Generator | None = None) -> np.ndarray:
    """``n_rows`` complete rows as int32 codes (n_rows, n_vars); one uniform draw per cell from
    ``numpy.random.default_rng(seed)``, consumed row by row (same seed, same sample)."""
    n_rows = int(n_rows)
    if n_rows < 0:
        raise ValueError("n_rows must be >= 0")
    if n_rows * bn.n_vars > MAX_SAMPLE_CELLS:
        raise DataError(
            f"{n_rows:,} rows x {bn.n_vars} variables of {bn.name} is more than one sample "
            f"held in memory may be ({MAX_SAMPLE_CELLS:,} cells, at most "
            f"{MAX_SAMPLE_CELLS // bn.n_vars:,} rows here); stream it in pieces with "
            "bnma_core.network.sampling.sample_chunks (as `bnma sample` does) or ask for fewer "
            "rows.")
    return _codes(bn, np.random.default_rng(seed), n_rows)


def _codes(bn: DiscreteBN, rng: np.random.Generator, n_rows: int) -> np.ndarray:
    return forward_sample(*sampling_tables(bn), bn.arities, rng.random((n_rows, bn.n_vars)))


def sample_chunks(bn: DiscreteBN, n_rows: int, seed: int | np.random.Generator | None = None,
                  chunk_rows: int = 100_000) -> Iterator[np.ndarray]:
    """The rows of :func:`sample_codes` ``(bn, n_rows, seed)``, identical and in the same order,
    as int32 code blocks of at most ``chunk_rows`` rows: memory stays that of one block.
    (NumPy's ``Generator.random`` fills arrays in C order, so consecutive blocks drawn from one
    generator are the rows of one large draw.)"""
    n_rows, chunk_rows = int(n_rows), int(chunk_rows)
    if n_rows < 0 or chunk_rows < 1:
        raise ValueError("n_rows must be >= 0 and chunk_rows >= 1")
    rng = np.random.default_rng(seed)
    for start in range(0, n_rows, chunk_rows):
        yield _codes(bn, rng, min(chunk_rows, n_rows - start))


def sample_dataset(bn: DiscreteBN, n_rows: int, seed: int | np.random.Generator | None = None,
                   class_variable: int | str | None = None) -> DiscreteDataset:
    """A forward sample as a :class:`DiscreteDataset` (class = ``class_variable``, default the
    last node)."""
    ci = bn.n_vars - 1 if class_variable is None else bn.index(class_variable)
    codes = sample_codes(bn, n_rows, seed)
    ds = dataset_from_codes(codes, list(bn.names), bn.arities.copy(), ci,
                            [list(s) for s in bn.states])
    ds.notices.append(f"{len(codes)} rows sampled from the {bn.name} network "
                      f"(seed {seed}); class variable {bn.names[ci]}.")
    return ds


def sample_frame(bn: DiscreteBN, n_rows: int,
                 seed: int | np.random.Generator | None = None) -> pd.DataFrame:
    """A forward sample as a DataFrame of state labels (one column per variable)."""
    return labels_frame(bn, sample_codes(bn, n_rows, seed))


def labels_frame(bn: DiscreteBN, codes: np.ndarray) -> pd.DataFrame:
    """Codes of ``bn``'s variables as a DataFrame of state labels (one column per variable)."""
    return pd.DataFrame({nm: np.array(st, dtype=object)[codes[:, i]]
                         for i, (nm, st) in enumerate(zip(bn.names, bn.states, strict=True))})
