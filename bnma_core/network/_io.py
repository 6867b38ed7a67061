"""Shared helpers of the network readers and writers: sources, gzip, CPT row orders."""

from __future__ import annotations

import gzip
import math
from collections.abc import Iterable
from pathlib import Path

import numpy as np

from .. import scores
from ..data import DataError


def read_source(source: str | Path | bytes, what: str, marker: str) -> bytes:
    """Raw bytes of ``source``: a path, raw (possibly gzipped) bytes, or text. A ``str``
    containing ``marker`` (``"{"`` for BIF, ``"<"`` for XML) or a line break is text, any other
    ``str`` a path."""
    if isinstance(source, bytes):
        raw = source
    elif isinstance(source, Path) or (marker not in source and "\n" not in source):
        p = Path(source)
        if not p.is_file():
            raise ValueError(f"No {what} file at {str(p)!r}.")
        raw = p.read_bytes()
    else:
        return source.encode("utf-8")
    return gzip.decompress(raw) if raw[:2] == b"\x1f\x8b" else raw


def decode(raw: bytes) -> str:
    """UTF-8 text, Latin-1 when that fails."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return raw.decode("latin-1")


def write_bytes(path: str | Path, data: bytes) -> None:
    """Write ``data``; gzip-compressed when ``path`` ends in ``.gz`` (mtime 0, so the bytes
    depend only on the content)."""
    p = Path(path)
    if p.suffix == ".gz":
        with open(p, "wb") as fh, gzip.GzipFile(fileobj=fh, mode="wb", mtime=0,
                                                filename="") as gz:
            gz.write(data)
    else:
        p.write_bytes(data)


def rows_from_last_fastest(values: np.ndarray, parent_cards: list[int]) -> np.ndarray:
    """(q, r) rows listed with the **last** parent varying fastest (JavaBayes ``table``,
    XMLBIF) -> the library's layout (first parent fastest)."""
    k = len(parent_cards)
    r = values.shape[-1]
    arr = values.reshape(tuple(parent_cards) + (r,))
    return np.transpose(arr, tuple(range(k - 1, -1, -1)) + (k,)).reshape(-1, r)


def rows_to_last_fastest(cpt: np.ndarray, parent_cards: list[int]) -> np.ndarray:
    """Inverse of :func:`rows_from_last_fastest`."""
    k = len(parent_cards)
    r = cpt.shape[-1]
    arr = cpt.reshape(tuple(parent_cards[::-1]) + (r,))
    return np.transpose(arr, tuple(range(k - 1, -1, -1)) + (k,)).reshape(-1, r)


def missing_message(fmt: str, missing: list[str], block: str) -> str:
    """``"<fmt>: variable 'A' has no <block>."`` or ``"<fmt>: 2 variables have no <block>:
    'A', 'B'."``."""
    if len(missing) == 1:
        return f"{fmt}: variable {missing[0]!r} has no {block}."
    return f"{fmt}: {len(missing)} variables have no {block}: {', '.join(map(repr, missing))}."


def check_table_sizes(fmt: str, tables: Iterable[tuple[str, str, list[int], int]]) -> None:
    """Refuse, before any table is allocated, a network whose probability tables are larger
    than the library holds.

    Parameters
    ----------
    fmt : str
        The format, for the message ("BIF", "XMLBIF").
    tables : iterable of (where, child, parent_cards, r)
        One entry per declared table: where it is declared (e.g. ``"BIF line 12"``), the child's
        name, its parents' numbers of states and its own; sized as q x r cells with q the
        product of the parents' states (Python ints: no overflow).

    Raises
    ------
    DataError
        One table, or all of them together, over :data:`bnma_core.scores.MAX_DENSE_FAMILY_CELLS`
        cells: the limit (and message) of :func:`bnma_core.scores.family_counts`, which
        tabulates the same (q, r) tables from data.
    """
    limit = scores.MAX_DENSE_FAMILY_CELLS
    total = 0
    for where, child, cards, r in tables:
        cells = math.prod(cards) * r
        if cells > limit:
            raise DataError(
                f"{where}: a probability table for variable {child!r} with {len(cards)} "
                f"parents would have {cells:.3g} cells ({cells * 8 / 2**30:.3g} GiB), more than "
                f"this library holds ({limit:.3g} cells, {limit * 8 // 2**20} MiB). Use fewer "
                "parents per variable or merge the states of many-valued variables.")
        total += cells
    if total > limit:
        raise DataError(
            f"{fmt}: the network's probability tables would have {total:.3g} cells together "
            f"({total * 8 / 2**30:.3g} GiB), more than this library holds ({limit:.3g} cells, "
            f"{limit * 8 // 2**20} MiB). Use fewer parents per variable or merge the states "
            "of many-valued variables.")
