"""The recommended method is named once (``registry.DEFAULT_METHOD``) and the CLI's default
``--methods`` and the Compare page's default selection read it (issue 16 item 3)."""

from __future__ import annotations

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
    import streamlit.testing.v1 as st_testing

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


def test_recommended_method_is_less_over_confident_than_bma10_on_wbc():
    """BMA's posterior on WBC settles on one near-naive-Bayes network, so ``bma10`` double-counts
    nine correlated attributes (docs/accuracy.md §12); the recommended stacking of ``bma10``
    (three priors) and UKDB, weighted on the training rows only, has a clearly lower log-loss
    on held-out rows and fewer confident errors."""
    import numpy as np
    from sklearn.model_selection import StratifiedKFold

    from bnma_core.data import load_dataset
    from bnma_core.datasets import bundled_path
    from bnma_core.metrics import row_scores

    ds = load_dataset(bundled_path("wbc.csv"), missing="drop")
    X, y, arities = ds.X, ds.y, ds.arities[ds.feature_indices]
    tr, te = next(StratifiedKFold(3, shuffle=True, random_state=0).split(X, y))
    loss, wrong = {}, {}
    for name in (registry.DEFAULT_METHOD, "bma10"):
        est = registry.make_classifier(name, random_state=1)
        est.fit(X[tr], y[tr], arities=arities)
        P = est.predict_proba(X[te])
        loss[name] = float(np.mean(row_scores(y[te], P)["log_loss"]))
        wrong[name] = int(np.sum((P.max(axis=1) > 0.99) & (P.argmax(axis=1) != y[te])))
    assert loss[registry.DEFAULT_METHOD] < loss["bma10"] - 0.03, loss
    assert wrong[registry.DEFAULT_METHOD] < wrong["bma10"], wrong
