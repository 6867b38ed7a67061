"""The Reports page on a shared server: every store lives under one results root (a server
setting), a folder typed outside it is refused, looking creates nothing, and only reports this
program wrote are shown."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from bnma_core.reproduce.runner import run_grid, write_report
from bnma_core.reproduce.store import (
    RESULTS_ROOT_ENV,
    ResultStore,
    results_root,
    store_folder,
)

ROOT = Path(__file__).resolve().parents[2]
PAGE = "pages/8_Reports.py"
PLANTED = b"<html><script>alert('planted')</script></html>"


@pytest.fixture(scope="module")
def written(tmp_path_factory) -> Path:
    """A store with one finished smoke grid and its report, written by the runner."""
    out = tmp_path_factory.mktemp("store")
    run_grid("smoke", out, quick=True, workers=0)
    write_report("smoke", out, quick=True)
    return out


def _page(monkeypatch, root: Path, typed: str | None = None):
    from streamlit.testing.v1 import AppTest

    monkeypatch.setenv(RESULTS_ROOT_ENV, str(root))
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    at.switch_page(PAGE)
    at.run()
    if typed is not None:
        at.text_input(key="rep_out").set_value(typed).run()
    assert not at.exception, at.exception
    return at


def _tree(path: Path) -> set[str]:
    return {str(p.relative_to(path)) for p in path.rglob("*")}


# --- the library side --------------------------------------------------------------------------
def test_store_folder_stays_inside_the_root(tmp_path):
    root = (tmp_path / "root").resolve()
    (root / "sub").mkdir(parents=True)
    (tmp_path / "elsewhere").mkdir()
    os.symlink(tmp_path / "elsewhere", root / "link")
    assert store_folder(root, "") == root and store_folder(root, "  ") == root
    assert store_folder(root, "sub") == root / "sub"
    assert store_folder(root, "sub/../sub") == root / "sub"
    assert store_folder(root, str(root / "sub")) == root / "sub"  # absolute, inside
    assert store_folder(root, "not/yet") == root / "not" / "yet"  # nothing created
    assert not (root / "not").exists()
    for bad in ("..", "../elsewhere", "sub/../../elsewhere", "/tmp", "/", str(tmp_path),
                "link", "link/x"):
        with pytest.raises(ValueError, match="outside the results folder"):
            store_folder(root, bad)


def test_results_root_is_a_server_setting(tmp_path, monkeypatch):
    monkeypatch.delenv(RESULTS_ROOT_ENV, raising=False)
    assert results_root(tmp_path / "default") == (tmp_path / "default").resolve()
    monkeypatch.setenv(RESULTS_ROOT_ENV, str(tmp_path / "set"))
    assert results_root(tmp_path / "default") == (tmp_path / "set").resolve()
    assert not (tmp_path / "set").exists() and not (tmp_path / "default").exists()


def test_only_reports_in_the_manifest_are_read(tmp_path, written):
    store = ResultStore(written, "smoke", create=False)
    data = store.read_report("report_quick.html")
    assert data is not None and data.startswith(b"<!DOCTYPE html>")
    planted = ResultStore(tmp_path, "smoke")
    (planted.dir / "report_quick.html").write_bytes(PLANTED)
    assert planted.read_report("report_quick.html") is None  # no manifest entry
    copy = ResultStore(tmp_path / "copy", "smoke")
    copy.write_report("report_quick.html", b"<html>ours</html>")
    assert copy.read_report("report_quick.html") == b"<html>ours</html>"
    (copy.dir / "report_quick.html").write_bytes(b"<html>changed</html>")
    assert copy.read_report("report_quick.html") is None  # changed after it was written
    (copy.dir / "report_quick.html").unlink()
    os.symlink(written / "smoke" / "report_quick.html", copy.dir / "report_quick.html")
    assert copy.read_report("report_quick.html") is None  # a link out of the store
    for name in ("../report_quick.html", "runs/x.json", "report_quick.html/../../x.html"):
        with pytest.raises(ValueError):
            copy.read_report(name)


def test_looking_creates_no_folder(tmp_path):
    ResultStore(tmp_path / "look", "smoke", create=False).runs()
    assert not (tmp_path / "look").exists()


# --- the page -----------------------------------------------------------------------------------
def test_page_lists_and_opens_reports_under_the_root(monkeypatch, written):
    at = _page(monkeypatch, written)
    assert list(at.dataframe[0].value["Paper"]) == ["smoke"]
    assert at.selectbox(key="rep_choice").value == "smoke (quick)"
    assert [b.proto.label for b in at.get("download_button")] == ["Download HTML"]
    assert not at.error and not at.warning
    at.toggle(key="rep_show").set_value(True).run()
    assert len(at.get("iframe")) == 1


@pytest.mark.parametrize("typed", ["..", "../..", "/", "/tmp", "smoke/../../x"])
def test_page_refuses_a_folder_outside_the_root(monkeypatch, written, typed):
    before = _tree(written.parent)
    at = _page(monkeypatch, written, typed)
    assert [e.value for e in at.error] == [
        f"The folder {typed!r} is outside the results folder; reports are kept only there. "
        "Type a folder inside it, or leave the box empty."]
    # the default (the root itself) is shown instead
    assert list(at.dataframe[0].value["Paper"]) == ["smoke"]
    assert _tree(written.parent) == before


def test_page_refuses_a_symlink_out_of_the_root(monkeypatch, tmp_path, written):
    root = tmp_path / "root"
    root.mkdir()
    os.symlink(written, root / "link")  # the runs behind the link are outside the root
    at = _page(monkeypatch, root, "link")
    assert len(at.error) == 1 and "outside the results folder" in at.error[0].value
    assert not at.dataframe and not at.get("download_button")


def test_page_creates_nothing_just_to_look(monkeypatch, tmp_path):
    root = tmp_path / "absent"
    at = _page(monkeypatch, root)
    assert not root.exists()
    assert any("No stored runs in the results folder" in i.value for i in at.info)
    (root / "sub").mkdir(parents=True)
    at.text_input(key="rep_out").set_value("sub/new").run()
    assert not at.exception and not (root / "sub" / "new").exists()
    assert any("No stored runs in `sub/new`" in i.value for i in at.info)
    assert _tree(root) == {"sub"}


def test_page_does_not_show_a_planted_report(monkeypatch, tmp_path, written):
    root = tmp_path / "root"
    planted = ResultStore(root, "smoke")  # a folder a run made, then a file put there by hand
    (planted.dir / "report_quick.html").write_bytes(PLANTED)
    (planted.dir / "report_full.html").write_bytes(PLANTED)
    at = _page(monkeypatch, root)
    assert not at.get("iframe") and not at.get("download_button") and not len(at.toggle)
    assert len(at.warning) == 1 and "not written by BNMA Studio" in at.warning[0].value
