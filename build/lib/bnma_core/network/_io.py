"""Shared helpers of the network readers and writers: sources, gzip, CPT row orders."""

from __future__ import annotations

import gzip
from pathlib import Path

import numpy as np


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
