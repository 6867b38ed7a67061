"""Crash-safe results store of the reproduction runner (DESIGN §8).

Layout under ``root`` (one folder per paper)::

    <root>/<paper>/cells/<key_id>.parquet   one finished cell (one row), written atomically
    <root>/<paper>/compact/part-<time>-<id>.parquet   many finished cells (compacted)
    <root>/<paper>/runs/<run_id>.json       one record per run (start, end, workers, counts)
    <root>/<paper>/report.html              the last report
    <root>/<paper>/report_quick.html        the last report of the quick (smoke-size) grid
    <root>/<paper>/manifest/<report>.json   what the report writer wrote: size and SHA-256

Only a report whose bytes match its manifest entry is one this program wrote
(:meth:`ResultStore.read_report`): a file planted in the folder, or changed after it was
written, is not shown by the dashboard.

On a shared server the dashboard keeps every store under one **results root** (a server
setting: the environment variable :data:`RESULTS_ROOT_ENV`, by default the project's own
``experiments/out/reproduce``); :func:`store_folder` refuses a folder typed by a user that is
not inside it (after resolving ``..`` and symbolic links).

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

__all__ = ["ResultStore", "key_id", "cell_seed", "code_version", "machine", "RESULTS_ROOT_ENV",
           "results_root", "store_folder", "inside"]

RESULTS_ROOT_ENV = "BNMA_RESULTS_ROOT"
"""Environment variable naming the results root of the dashboard (and the CLI's default
``--out``)."""


def results_root(default: str | Path) -> Path:
    """The results root: ``$BNMA_RESULTS_ROOT`` when set, else ``default``; absolute, symbolic
    links resolved. Nothing is created."""
    return Path(os.environ.get(RESULTS_ROOT_ENV) or default).expanduser().resolve()


def inside(root: Path, path: Path) -> bool:
    """True when ``path`` (resolved: ``..`` and symbolic links followed) is ``root`` or lies
    under it; ``root`` must be resolved already."""
    try:
        return path.resolve().is_relative_to(root)
    except (OSError, RuntimeError):  # a symlink loop
        return False


def store_folder(root: Path, text: str) -> Path:
    """The store folder a user typed, relative to the results ``root`` (empty: the root
    itself; an absolute path is accepted when it lies inside the root). Nothing is created.

    Raises
    ------
    ValueError
        The folder lies outside the root (after resolving ``..`` and symbolic links).
    """
    text = (text or "").strip()
    path = (root / text) if text else root
    if not inside(root, path):
        raise ValueError(f"The folder {text!r} is outside the results folder; reports are kept "
                         "only there. Type a folder inside it, or leave the box empty.")
    return path.resolve()

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
    create : bool
        Create the store's folders (a run writes); False only looks (listing runs and reports
        creates nothing).
    """

    def __init__(self, root: str | Path, paper: str, create: bool = True) -> None:
        self.root = Path(root)
        self.paper = paper
        self.dir = self.root / paper
        self.cells_dir = self.dir / "cells"
        self.compact_dir = self.dir / "compact"
        self.runs_dir = self.dir / "runs"
        self.manifest_dir = self.dir / "manifest"
        if create:
            for d in (self.cells_dir, self.compact_dir, self.runs_dir, self.manifest_dir):
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
        """Run records, newest first (a file that is not a run record is skipped)."""
        recs = []
        for p in sorted(self.runs_dir.glob("*.json")):
            try:
                rec = json.loads(p.read_text())
            except (OSError, ValueError):
                continue
            if isinstance(rec, dict) and "started" in rec:
                recs.append(rec)
        df = pd.DataFrame(recs)
        return df.sort_values("started", ascending=False, ignore_index=True) if len(df) else df


    # reports ----------------------------------------------------------------------------
    def write_report(self, name: str, data: bytes, run_id: str | None = None) -> Path:
        """Write a report (atomically) and its manifest entry (size, SHA-256, time, run)."""
        path = self.dir / _report_name(name)
        _atomic_write_bytes(path, data)
        self.manifest_dir.mkdir(parents=True, exist_ok=True)
        entry = {"file": path.name, "bytes": len(data), "sha256": hashlib.sha256(data).hexdigest(),
                 "written": _now(), "run_id": run_id, "code_version": code_version()}
        _atomic_write_bytes(self.manifest_dir / f"{path.name}.json",
                            json.dumps(entry, indent=1).encode())
        return path

    def read_report(self, name: str) -> bytes | None:
        """The bytes of a report this program wrote: its manifest entry exists and matches
        (size and SHA-256), and the file is a regular file inside the store's folder (no
        symbolic link out of it). None otherwise: absent, planted, or changed since."""
        path = self.dir / _report_name(name)
        try:
            entry = json.loads((self.manifest_dir / f"{path.name}.json").read_text())
            if path.is_symlink() or not inside(self.dir.resolve(), path):
                return None
            data = path.read_bytes()
        except (OSError, ValueError):
            return None
        if len(data) != entry.get("bytes") or \
                hashlib.sha256(data).hexdigest() != entry.get("sha256"):
            return None
        return data


def _report_name(name: str) -> str:
    """A report's file name: ``report[_GRID].html``, nothing else (no folder, no other file)."""
    if not (name.startswith("report") and name.endswith(".html")) or Path(name).name != name:
        raise ValueError(f"{name!r} is not a report file name")
    return name


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
