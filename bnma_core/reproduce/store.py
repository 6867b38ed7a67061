"""Crash-safe results store of the reproduction runner (issue 17; DESIGN "Reproductions").

Layout under ``root`` (one folder per paper)::

    <root>/<paper>/cells/<key_id>.parquet   one finished cell (one row), written atomically
    <root>/<paper>/runs/<run_id>.json       one record per run (start, end, workers, counts)
    <root>/<paper>/report.html              the last report

A cell file is written to a temporary name in the same folder and renamed (``os.replace``,
atomic on POSIX), so a crash leaves either no file or a whole one; the file name is the cell's
key id, so a cell finished twice (a retried task) is stored once. Parquet through pyarrow.
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

import pandas as pd
import pyarrow as pa
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
    ran the cell or in what order (issue 17)."""
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
        self.runs_dir = self.dir / "runs"
        self.cells_dir.mkdir(parents=True, exist_ok=True)
        self.runs_dir.mkdir(parents=True, exist_ok=True)

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

    def done_ids(self) -> set[str]:
        """Key ids of the stored cells."""
        return {p.stem for p in self.cells_dir.glob("*.parquet")}

    def cells(self, ids: set[str] | None = None) -> pd.DataFrame:
        """Stored cells (all, or those whose key id is in ``ids``), ``key`` / ``result`` parsed
        into dicts."""
        paths = sorted(p for p in self.cells_dir.glob("*.parquet")
                       if ids is None or p.stem in ids)
        if not paths:
            return pd.DataFrame(columns=list(COLUMNS))
        df = pa.concat_tables([pq.read_table(p) for p in paths],
                              promote_options="default").to_pandas()
        df["key"] = df["key"].map(json.loads)
        df["result"] = df["result"].map(json.loads)
        return df

    def clear(self) -> int:
        """Remove every stored cell (``--fresh``); returns how many."""
        n = 0
        for p in self.cells_dir.glob("*.parquet"):
            p.unlink()
            n += 1
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


def _json_default(v: Any) -> Any:
    if hasattr(v, "item"):  # numpy scalar
        return v.item()
    if hasattr(v, "tolist"):
        return v.tolist()
    return str(v)
