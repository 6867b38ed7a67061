"""Names users see: methods in words beside their code, technical terms linked to the Glossary
page, missing values called missing."""

from __future__ import annotations

import re

import pytest
from conftest import ROOT

from bnma_core.classifiers.registry import METHODS
from bnma_core.glossary import TERMS


def test_method_label_puts_the_display_name_before_the_code():
    from bnma_ui.widgets import method_label

    assert method_label("bma10") == "Order-MCMC averaging, 10 orders (bma10)"
    assert method_label("ukdb") == f"{METHODS['ukdb2'].display_name} (ukdb)"  # an alias
    assert method_label("nosuch") == "nosuch"
    for code in METHODS:
        assert method_label(code).endswith(f"({code})") and len(method_label(code)) > len(code) + 3


def test_glossary_links_point_at_a_term_of_the_glossary_page():
    from bnma_ui.widgets import GLOSSARY_PAGE, glossary_help, glossary_link, page_title, term_anchor

    assert page_title("pages/9_Glossary.py") == GLOSSARY_PAGE  # the page's URL path
    assert glossary_link("Markov blanket") == "[Markov blanket](Glossary#markov-blanket)"
    assert term_anchor("Marginal likelihood (K2, BDeu)") == "marginal-likelihood-k2-bdeu"
    assert len({term_anchor(t.name) for t in TERMS}) == len(TERMS)  # one anchor per term
    with pytest.raises(ValueError, match="not a Glossary term"):
        glossary_link("Nonsense")
    text = glossary_help("Why.", "Missing value", "Node order")
    assert text.startswith("Why.") and "(Glossary#missing-value)" in text


def test_every_page_links_technical_terms_the_glossary_has():
    """The pages name Glossary terms in help texts (``glossary_help``); each exists."""
    names = {t.name for t in TERMS}
    used = set()
    for path in sorted((ROOT / "pages").glob("*.py")):
        text = path.read_text()
        for call in re.findall(r"glossary_help\((.*?)\)\)", text, flags=re.S):
            used |= set(re.findall(r'"([^"]+)"\s*$', call.strip()))
    assert used and used <= names, used - names


def test_missing_values_are_called_missing():
    missing = next(t for t in TERMS if t.name == "Missing value")
    assert "code -1" not in missing.plain and "'missing'" in missing.plain
