"""The recommended method is named once (``registry.DEFAULT_METHOD``) and the CLI's default
``--methods`` and the Compare page's default selection read it (issue 16 item 3)."""

from __future__ import annotations

import pytest
from conftest import ROOT

from bnma_core import cli
from bnma_core.classifiers import registry


def test_default_method_is_registered():
    assert registry.DEFAULT_METHOD in registry.available_methods()


def _cv_default_methods() -> list[str]:
    args = cli.build_parser().parse_args(["cv", "--data", "wbc"])
    return args.methods.split(",")


def test_cli_default_methods_read_the_constant(monkeypatch):
    assert _cv_default_methods()[0] == registry.DEFAULT_METHOD
    monkeypatch.setattr(registry, "DEFAULT_METHOD", "aode")
    assert _cv_default_methods()[0] == "aode"
    assert len(set(_cv_default_methods())) == len(_cv_default_methods())


def test_compare_page_default_selection_reads_the_constant(monkeypatch):
    st_testing = pytest.importorskip("streamlit.testing.v1")
    from bnma_core.data import load_dataset
    from bnma_core.datasets import bundled_path

    def selected() -> list[str]:
        at = st_testing.AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
        at.switch_page("pages/1_Compare_methods.py")
        at.session_state["bnma_dataset"] = load_dataset(bundled_path("wbc.csv"))
        at.session_state["bnma_dataset_label"] = "test data"
        at.run()
        assert not at.exception, [e.value for e in at.exception]
        return list(at.multiselect(key="cmp_methods").value)

    first = selected()
    assert first[0] == registry.DEFAULT_METHOD and len(first) == len(set(first)) <= 5
    monkeypatch.setattr(registry, "DEFAULT_METHOD", "aode")
    assert selected()[0] == "aode"
