"""The Glossary page lists every term with its formula and filters by a search."""

from __future__ import annotations

from pathlib import Path

from streamlit.testing.v1 import AppTest

from bnma_core.glossary import TERMS

APP = str(Path(__file__).resolve().parents[1] / "app.py")


def test_glossary_lists_and_filters_terms():
    at = AppTest.from_file(APP, default_timeout=60)
    at.switch_page("pages/9_Glossary.py")
    at.run()
    assert not at.exception
    names = [s.value for s in at.subheader]
    assert names == [t.name for t in TERMS]
    assert {"Markov blanket", "R-hat (split R-hat)", "Equivalence class (CPDAG)",
            "Edge posterior", "Model averaging (BMA)", "Node order"} <= set(names)
    at.text_input[0].set_value("blanket").run()
    assert [s.value for s in at.subheader] == ["Markov blanket"]
    at.text_input[0].set_value("no such thing").run()
    assert not at.subheader and at.info
