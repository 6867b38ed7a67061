"""The sample data: the files of the repository's top-level ``sample_data/`` folder.

``wbc.csv`` (Wisconsin breast cancer, the dashboard's default) and the networks
``alarm.bif.gz``, ``hepar2.bif.gz``, ``asia.bif.gz``; provenance and licences in
``sample_data/README.md``. Nothing here is downloaded at run time.

Where the files are read from:

* a checkout, or an editable install of it (``make venv``): ``sample_data/`` beside the
  ``bnma_core/`` folder, the folder a user browses;
* an installed wheel (``pip install .``): the same files inside the package, as
  ``bnma_core/datasets/sample_data/`` (``pyproject.toml`` maps the top-level folder there;
  DESIGN §8).
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["bundled_path", "bundled_files", "bundled_csv_files", "bundled_networks",
           "sample_data_dir"]

_HERE = Path(__file__).resolve().parent
#: Where a wheel puts the sample data (looked at first: an installed package reads its own copy).
PACKAGED_DIR = _HERE / "sample_data"
#: The repository's top-level folder (a checkout or an editable install).
CHECKOUT_DIR = _HERE.parent.parent / "sample_data"


def sample_data_dir() -> Path:
    """The folder holding the sample data: the installed package's copy, else the checkout's.

    Raises
    ------
    FileNotFoundError
        If neither folder exists (a copy of ``bnma_core`` without its data).
    """
    for folder in (PACKAGED_DIR, CHECKOUT_DIR):
        if folder.is_dir():
            return folder
    raise FileNotFoundError(
        f"the sample data folder is missing: neither {PACKAGED_DIR} (an installed wheel) nor "
        f"{CHECKOUT_DIR} (a checkout) exists; install the package with `pip install .` from "
        "the repository, or restore its sample_data/ folder")


def bundled_files() -> list[str]:
    """Names of every sample data file (CSV and ``.bif.gz``), sorted."""
    return sorted(p.name for p in sample_data_dir().iterdir()
                  if p.is_file() and (p.name.endswith(".csv") or p.name.endswith(".bif.gz")))


def bundled_csv_files() -> list[str]:
    """Sample CSV files, WBC first."""
    names = [n for n in bundled_files() if n.endswith(".csv")]
    if "wbc.csv" in names:
        names.remove("wbc.csv")
        names.insert(0, "wbc.csv")
    return names


def bundled_networks() -> list[str]:
    """Names of the sample networks (``alarm``, ``asia``, ``hepar2``)."""
    return [n[: -len(".bif.gz")] for n in bundled_files() if n.endswith(".bif.gz")]


def bundled_path(name: str) -> Path:
    """Path of one sample data file, e.g. ``bundled_path("wbc.csv")``.

    Raises
    ------
    FileNotFoundError
        If ``name`` is not a sample data file (names with a directory part are refused).
    """
    if Path(name).name != name or name not in bundled_files():
        raise FileNotFoundError(
            f"{name!r} is not a bundled data file; bundled: {', '.join(bundled_files())}")
    return sample_data_dir() / name
