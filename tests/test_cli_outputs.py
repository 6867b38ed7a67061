"""Every output path of a command is checked before it runs (issue 36 item 9): no silent
overwrite without ``--force``, no symbolic link followed, no empty name, no file named twice,
no missing folder discovered after the work."""

from __future__ import annotations

import os

import pytest

from bnma_core import cli


@pytest.fixture
def no_work(monkeypatch):
    """Fail the test if a command gets as far as reading data or cross-validating."""
    def boom(*args, **kwargs):
        raise AssertionError("the command ran before checking its outputs")

    monkeypatch.setattr("bnma_core.evaluation.cross_validate", boom)
    monkeypatch.setattr("bnma_core.data.spec.DatasetSpec.build", boom)


def run(argv, capsys):
    rc = cli.main([str(a) for a in argv])
    return rc, capsys.readouterr().err.strip()


CV = ["cv", "--data", "wbc", "--methods", "nb", "--folds", "2", "--no-progress"]


def test_cv_refuses_to_overwrite_predictions_without_force(tmp_path, capsys, no_work):
    old = tmp_path / "oof.csv"
    old.write_text("keep me")
    rc, err = run([*CV, "--predictions", old], capsys)
    assert rc == 2 and err == f"bnma: error: {old} exists; use --force to overwrite it"
    assert old.read_text() == "keep me"


def test_cv_refuses_a_symbolic_link(tmp_path, capsys, no_work):
    target = tmp_path / "elsewhere.csv"
    target.write_text("keep me")
    link = tmp_path / "oof.csv"
    os.symlink(target, link)
    rc, err = run([*CV, "--predictions", link, "--force"], capsys)
    assert rc == 2 and "is a symbolic link" in err
    assert target.read_text() == "keep me"


def test_cv_refuses_an_empty_name(capsys, no_work):
    rc, err = run([*CV, "--predictions", ""], capsys)
    assert rc == 2 and err == "bnma: error: --predictions is an empty file name; give a file name"


def test_cv_refuses_the_same_file_twice(tmp_path, capsys, no_work):
    both = tmp_path / "x.csv"
    rc, err = run([*CV, "--out", both, "--predictions", tmp_path / "." / "x.csv"], capsys)
    assert rc == 2 and "--out and --predictions name the same file" in err


def test_a_missing_folder_fails_before_the_run(tmp_path, capsys, no_work):
    rc, err = run([*CV, "--out", tmp_path / "absent" / "x.csv"], capsys)
    assert rc == 2 and "the folder" in err and "does not exist" in err


@pytest.mark.parametrize("argv", [
    ["report", "--data", "wbc", "--methods", "nb"],
    ["fit", "--data", "wbc", "--method", "nb"],
    ["sample", "--rows", "60"],
])
def test_report_fit_and_sample_refuse_to_overwrite(argv, tmp_path, capsys, no_work):
    old = tmp_path / "out.file"
    old.write_text("keep me")
    rc, err = run([*argv, "--out", old], capsys)
    assert rc == 2 and "exists; use --force to overwrite it" in err
    assert old.read_text() == "keep me"


def test_force_overwrites(tmp_path, capsys):
    old = tmp_path / "oof.csv"
    old.write_text("old")
    rc, err = run([*CV, "--predictions", old, "--force"], capsys)
    assert rc == 0, err
    assert old.read_text().startswith("row,")
