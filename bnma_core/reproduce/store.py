"""Crash-safe results store of the reproduction runner (DESIGN §8).

Layout under ``root`` (one folder per paper)::

    <root>/<paper>/cells/<key_id>.parquet   one finished cell (one row), written atomically
    <root>/<paper>/compact/part-<time>-<id>.parquet   many finished cells (compacted)
    <root>/<paper>/runs/<run_id>.json       one record per run (start, end, workers, counts)
    <root>/<paper>/report.html              the last report

A cell file is written to a temporary name in the same folder and renamed (``os.replace``,
atomic on POSIX), so a crash leaves either no file or a whole one; the file name is the cell's
key id, so a cell finished twice (a retried task) is stored once. Parquet through pyarrow.

Thousands of one-row files are slow to list and read (dash2002 has 27,400 cells), so
:meth:`ResultStore.compact` folds the cell files and earlier parts into one part file: it
writes the new part atomically, then deletes what it folded in. A crash between the two
leaves a cell both in the new part and in a cell file (or an older part); readers therefore
keep one row per key id — a cell file before any part, a newer part before an older one — so
an interrupted compaction loses nothing and duplicates nothing, and the next compaction
finishes the job. Reading goes through :mod:`pyarrow.dataset` (one scan over every file, the
``key_id`` column alone for :meth:`ResultStore.done_ids`).
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
import os
import platform
import subprocess
import uuid
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as pads
import pyarrow.parquet as pq

__all__ = ["ResultStore", "key_id", "cell_seed", "code_version", "machine"]

COLUMNS = ("key_id", "paper", "key", "result", "seconds", "cpu_seconds", "worker", "run_id",
           "code_version", "machine", "finished")


def _canonical(key: dict) -> str:
    return json.dumps(key, sort_keys=True, separators=(",", ":"), default=str)


def key_id(key: dict) -> str:
    """Stable 16-hex-digit id of a cell key (SHA-256 of its canonical JSON)."""
    return hashlib.sha256(_canonical(key).encode()).hexdigest()[:16]


def cell_seed(key: dict) -> int:
    """A 32-bit seed derived from the cell key alone, so results do not depend on which worker
    ran the cell or in what order."""
    return int(hashlib.sha256(("seed:" + _canonical(key)).encode()).hexdigest()[:8], 16)


@lru_cache(maxsize=1)
def code_version() -> str:
    """``git describe --always --dirty`` of the checkout holding this package, else
    ``bnma_core.__version__``."""
    from bnma_core import __version__

    try:
        out = subprocess.run(["git", "describe", "--always", "--dirty", "--tags"],
                             cwd=Path(__file__).parent, capture_output=True, text=True,
                             timeout=10)
        if out.returncode == 0 and out.stdout.strip():
            return f"{__version__}+g{out.stdout.strip()}"
    except (OSError, subprocess.SubprocessError):
        pass
    return __version__


@lru_cache(maxsize=1)
def machine() -> str:
    """Host name, CPU count and platform, e.g. ``host (2 cores, Linux-6.1-x86_64)``."""
    return f"{platform.node()} ({os.cpu_count()} cores, {platform.platform(terse=True)})"


def _now() -> str:
    return _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds")


def _atomic_write_bytes(path: Path, data: bytes) -> None:
    tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex}.tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)


class ResultStore:
    """Finished cells and run records of one paper, under ``root / paper``.

    Parameters
    ----------
    root : path
        Store root (the CLI's ``--out``).
    paper : str
        Paper name (a sub-folder).
    """

    def __init__(self, root: str | Path, paper: str) -> None:
        self.root = Path(root)
        self.paper = paper
        self.dir = self.root / paper
        self.cells_dir = self.dir / "cells"
        self.compact_dir = self.dir / "compact"
        self.runs_dir = self.dir / "runs"
        for d in (self.cells_dir, self.compact_dir, self.runs_dir):
            d.mkdir(parents=True, exist_ok=True)

    @property
    def report_path(self) -> Path:
        return self.dir / "report.html"

    # cells ------------------------------------------------------------------------------
    def append(self, row: dict[str, Any]) -> Path:
        """Store one finished cell atomically (``row`` holds the :data:`COLUMNS`; ``key`` and
        ``result`` as dicts or JSON text)."""
        rec = {c: row.get(c) for c in COLUMNS}
        for c in ("key", "result"):
            if not isinstance(rec[c], str):
                rec[c] = json.dumps(rec[c], sort_keys=True, default=_json_default)
        rec["paper"] = rec["paper"] or self.paper
        rec["finished"] = rec["finished"] or _now()
        table = pa.Table.from_pylist([rec], schema=_SCHEMA)
        sink = pa.BufferOutputStream()
        pq.write_table(table, sink)
        path = self.cells_dir / f"{rec['key_id']}.parquet"
        _atomic_write_bytes(path, sink.getvalue().to_pybytes())
        return path

    def _cell_files(self) -> list[Path]:
        return sorted(self.cells_dir.glob("*.parquet"))

    def _parts(self) -> list[Path]:
        """Compacted part files, newest first (their names start with the UTC time)."""
        return sorted(self.compact_dir.glob("part-*.parquet"), reverse=True)

    def _tables(self, columns: list[str], ids: set[str] | None,
                files: tuple[list[Path], list[Path]] | None = None) -> list[pa.Table]:
        """Every stored row in priority order, each table with a ``_rank`` column: the cell
        files first (one multi-threaded :mod:`pyarrow.dataset` scan; their names are key ids,
        so they are unique), then each part, newest first."""
        flt = None if ids is None else pc.field("key_id").isin(pa.array(sorted(ids),
                                                                         pa.string()))
        cell_files, parts = files or (self._cell_files(), self._parts())
        cell_files = [f for f in cell_files if ids is None or f.stem in ids]
        sources = ([cell_files] if cell_files else []) + [[p] for p in parts]
        out = []
        for rank, files in enumerate(sources):
            dset = pads.dataset([str(f) for f in files], format="parquet", schema=_SCHEMA)
            t = dset.to_table(columns=columns, filter=flt)
            out.append(t.append_column("_rank", pa.array(np.full(len(t), rank, np.int32))))
        return out

    def _scan(self, columns: list[str] | None, ids: set[str] | None) -> pa.Table:
        """One row per stored key id (a cell file before a part, a newer part before an
        older one)."""
        cols = list(columns or COLUMNS)
        want = cols if "key_id" in cols else ["key_id", *cols]
        for attempt in range(5):  # a compaction may remove a listed file under our feet
            try:
                tables = self._tables(want, ids)
                break
            except OSError:  # FileNotFoundError, or pyarrow's error for a vanished file
                if attempt == 4:
                    raise
        if not tables:
            return _SCHEMA.empty_table().select(cols)
        table = pa.concat_tables(tables)
        if len(tables) > 1 and len(pc.unique(table["key_id"])) < table.num_rows:
            table = _first_per_key(table)
        return table.select(cols)

    def done_ids(self) -> set[str]:
        """Key ids of the stored cells (cell files and compacted parts)."""
        ids = {p.stem for p in self._cell_files()}  # a cell file is named by its key id
        for attempt in range(5):
            try:
                for part in self._parts():
                    ids.update(pq.read_table(part, columns=["key_id"])["key_id"].to_pylist())
                return ids
            except OSError:  # a compaction replaced the part meanwhile: list again
                if attempt == 4:
                    raise
                ids |= {p.stem for p in self._cell_files()}
        return ids

    def cells(self, ids: set[str] | None = None) -> pd.DataFrame:
        """Stored cells (all, or those whose key id is in ``ids``), one row per key id,
        ``key`` / ``result`` parsed into dicts."""
        df = self._scan(None, ids).sort_by("key_id").to_pandas()  # key-id order, as before
        if df.empty:
            return pd.DataFrame(columns=list(COLUMNS))
        df["key"] = df["key"].map(json.loads)
        df["result"] = df["result"].map(json.loads)
        return df

    def compact(self) -> int:
        """Fold every cell file and part into one new part file (crash-safe, see the module
        docstring); returns how many cells the new part holds (0: nothing to do)."""
        cell_files, parts = self._cell_files(), self._parts()
        if not cell_files and len(parts) <= 1:
            return 0
        files = [*cell_files, *parts]
        table = _first_per_key(pa.concat_tables(self._tables(list(COLUMNS), None,
                                                             (cell_files, parts))))
        table = table.select(list(COLUMNS))
        table = table.sort_by("key_id")
        name = (f"part-{_dt.datetime.now(_dt.UTC).strftime('%Y%m%dT%H%M%S%f')}-"
                f"{uuid.uuid4().hex[:8]}.parquet")
        sink = pa.BufferOutputStream()
        pq.write_table(table, sink)
        _atomic_write_bytes(self.compact_dir / name, sink.getvalue().to_pybytes())
        # the new part holds everything read: only now remove what it replaces
        for f in files:
            f.unlink(missing_ok=True)
        return table.num_rows

    def clear(self) -> int:
        """Remove every stored cell (``--fresh``); returns how many."""
        n = len(self.done_ids())
        for p in [*self._cell_files(), *self._parts()]:
            p.unlink(missing_ok=True)
        return n

    # runs -------------------------------------------------------------------------------
    def write_run(self, record: dict[str, Any]) -> None:
        """Write (or overwrite) one run record, atomically."""
        path = self.runs_dir / f"{record['run_id']}.json"
        _atomic_write_bytes(path, json.dumps(record, indent=1, default=_json_default).encode())

    def runs(self) -> pd.DataFrame:
        """Run records, newest first."""
        recs = [json.loads(p.read_text()) for p in self.runs_dir.glob("*.json")]
        df = pd.DataFrame(recs)
        return df.sort_values("started", ascending=False, ignore_index=True) if len(df) else df


_SCHEMA = pa.schema([("key_id", pa.string()), ("paper", pa.string()), ("key", pa.string()),
                     ("result", pa.string()), ("seconds", pa.float64()),
                     ("cpu_seconds", pa.float64()), ("worker", pa.string()),
                     ("run_id", pa.string()),
                     ("code_version", pa.string()), ("machine", pa.string()),
                     ("finished", pa.string())])


def _first_per_key(table: pa.Table) -> pa.Table:
    """The row of lowest ``_rank`` (highest priority) for each key id."""
    table = table.sort_by([("key_id", "ascending"), ("_rank", "ascending")])
    keys = table["key_id"].to_numpy(zero_copy_only=False)
    first = np.ones(len(keys), dtype=bool)
    first[1:] = keys[1:] != keys[:-1]
    return table.filter(pa.array(first))


def _json_default(v: Any) -> Any:
    if hasattr(v, "item"):  # numpy scalar
        return v.item()
    if hasattr(v, "tolist"):
        return v.tolist()
    return str(v)
