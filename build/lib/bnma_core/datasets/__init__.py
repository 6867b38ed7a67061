"""Bundled data shipped inside the package (read with :mod:`importlib.resources`).

``wbc.csv`` (Wisconsin breast cancer, the dashboard's default) and the networks
``alarm.bif.gz``, ``hepar2.bif.gz``, ``asia.bif.gz``; provenance and licences in this folder's
``README.md``. Nothing here is downloaded at run time.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

__all__ = ["bundled_path", "bundled_files", "bundled_csv_files", "bundled_networks"]


def _root() -> Path:
    return Path(str(resources.files(__name__)))


def bundled_files() -> list[str]:
    """Names of every bundled data file (CSV and ``.bif.gz``), sorted."""
    return sorted(p.name for p in _root().iterdir()
                  if p.is_file() and (p.name.endswith(".csv") or p.name.endswith(".bif.gz")))


def bundled_csv_files() -> list[str]:
    """Bundled CSV files, WBC first."""
    names = [n for n in bundled_files() if n.endswith(".csv")]
    if "wbc.csv" in names:
        names.remove("wbc.csv")
        names.insert(0, "wbc.csv")
    return names


def bundled_networks() -> list[str]:
    """Names of the bundled networks (``alarm``, ``asia``, ``hepar2``)."""
    return [n[: -len(".bif.gz")] for n in bundled_files() if n.endswith(".bif.gz")]


def bundled_path(name: str) -> Path:
    """Path of one bundled file, e.g. ``bundled_path("wbc.csv")``.

    Raises
    ------
    FileNotFoundError
        If ``name`` is not a bundled file (names with a directory part are refused).
    """
    if Path(name).name != name or name not in bundled_files():
        raise FileNotFoundError(
            f"{name!r} is not a bundled data file; bundled: {', '.join(bundled_files())}")
    return _root() / name
