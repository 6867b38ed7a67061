"""The sample data live where a user browses them: the repository's top-level ``sample_data/``
with its README (provenance, licences, checksums), read from there by a checkout, and by name
(``--data wbc``) from any working directory. How a wheel carries them: tests/test_packaging.py."""

from __future__ import annotations

import hashlib
import re

import pytest
from conftest import ROOT

import bnma_core.datasets as datasets
from bnma_core.cli import main
from bnma_core.datasets import bundled_csv_files, bundled_files, bundled_networks, bundled_path

SAMPLE = ROOT / "sample_data"
FILES = ["alarm.bif.gz", "asia.bif.gz", "hepar2.bif.gz", "wbc.csv"]


def test_sample_data_is_a_top_level_folder_with_its_readme():
    assert sorted(f.name for f in SAMPLE.iterdir()) == ["README.md", *FILES]
    # one home: the package folder holds the code that reads them, not a second copy
    assert [f.name for f in (ROOT / "bnma_core" / "datasets").glob("*") if f.is_file()] \
        == ["__init__.py"]


def test_readme_gives_each_file_its_provenance_and_checksum():
    rows = re.findall(r"^\| `([^`]+)` \|.*\| `([0-9a-f]{64})` \|$",
                      (SAMPLE / "README.md").read_text(encoding="utf-8"), flags=re.M)
    assert sorted(name for name, _ in rows) == FILES
    for name, digest in rows:
        assert hashlib.sha256((SAMPLE / name).read_bytes()).hexdigest() == digest, name


def test_a_checkout_reads_the_top_level_folder():
    assert datasets.sample_data_dir() == SAMPLE
    assert bundled_path("wbc.csv") == SAMPLE / "wbc.csv"
    assert bundled_files() == FILES
    assert bundled_csv_files() == ["wbc.csv"]
    assert bundled_networks() == ["alarm", "asia", "hepar2"]
    for bad in ("sample_data/wbc.csv", "../wbc.csv", "mushroom.csv"):
        with pytest.raises(FileNotFoundError, match="not a bundled data file"):
            bundled_path(bad)


def test_an_installed_copy_is_read_first_and_a_missing_folder_is_named(tmp_path, monkeypatch):
    packaged = tmp_path / "packaged"
    packaged.mkdir()
    (packaged / "wbc.csv").write_bytes((SAMPLE / "wbc.csv").read_bytes())
    monkeypatch.setattr(datasets, "PACKAGED_DIR", packaged)
    assert bundled_path("wbc.csv") == packaged / "wbc.csv"
    monkeypatch.setattr(datasets, "PACKAGED_DIR", tmp_path / "absent")
    monkeypatch.setattr(datasets, "CHECKOUT_DIR", tmp_path / "also_absent")
    with pytest.raises(FileNotFoundError, match="sample data folder is missing.*pip install"):
        bundled_files()


def _cv(data: str, capsys) -> str:
    code = main(["cv", "--data", data, "--methods", "nb", "--folds", "2", "--no-progress"])
    out, err = capsys.readouterr()
    assert code == 0, err
    return out


def test_cv_reads_the_repository_path_from_the_root(monkeypatch, capsys):
    """The path the design card, the README and the dashboard's label name."""
    monkeypatch.chdir(ROOT)
    assert "nb" in _cv("sample_data/wbc.csv", capsys)


def test_cv_reads_the_bundled_name_from_anywhere(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert "nb" in _cv("wbc", capsys)
