"""The memory of a fit priced before it runs (issue 36: one upload must not take the server
down): ``estimate_fit_bytes`` of the order averages and of ``stack``, and
``registry.resource_limit`` against ``limits.fit_budget_bytes``."""

from __future__ import annotations

import numpy as np
import pytest

from bnma_core.classifiers.registry import fit_method, get_spec, resource_limit
from bnma_core.data import dataset_from_codes, load_dataset
from bnma_core.datasets import bundled_path
from bnma_core.limits import FIT_BUDGET_MB, fit_budget_bytes


def _wide(n_features: int, n_rows: int = 60, seed: int = 0):
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 3, size=(n_rows, n_features))
    y = (X[:, 0] + rng.integers(0, 2, n_rows)) % 2
    return dataset_from_codes(np.column_stack([X, y]).astype(np.int32),
                              [f"f{j}" for j in range(n_features)] + ["class"],
                              [3] * n_features + [2], class_index=n_features)


@pytest.mark.parametrize("n_features, candidates", [(12, None), (20, 4)])
def test_the_price_is_the_fitted_score_table(n_features, candidates):
    """What ``estimate_fit_bytes`` says before the fit is what the fitted model's score table
    holds (both regimes), to within 5 %."""
    ds = _wide(n_features, n_rows=80)
    est = fit_method("bma10", ds, random_state=0, candidates=candidates, max_parents=2)
    price = get_spec("bma10").make(candidates=candidates, max_parents=2).estimate_fit_bytes(
        ds.n_rows, ds.arities[ds.feature_indices], len(ds.classes))
    assert price == pytest.approx(est.table_.nbytes, rel=0.05)


def test_a_wide_upload_is_refused_before_the_fit_with_the_remedy(monkeypatch):
    """``stack`` on 1,000 features would hold ~1.5 GB of score tables (the hostile visitor's
    upload took the server to 2.4 GB): refused in one sentence with the remedies, before any
    fit; ten cross-fitting models multiply the price; WBC passes; naive Bayes has no table."""
    monkeypatch.delenv("BNMA_FIT_BUDGET_MB", raising=False)
    wide = _wide(1000)
    why = resource_limit("stack", wide)
    assert why.startswith("stack: its fitted models would hold about 1.5 GB") and \
        "naive Bayes (nb)" in why and "one model of all rows" not in why, why
    assert resource_limit("nb", wide) == ""
    mid = _wide(100)
    assert resource_limit("stack", mid) == ""
    ten = resource_limit("stack", mid, n_models=10)
    assert "10 models" in ten and "learn one model of all rows" in ten, ten
    wbc = load_dataset(bundled_path("wbc.csv"))
    assert resource_limit("stack", wbc, n_models=10) == ""
    assert fit_budget_bytes() == FIT_BUDGET_MB * 2 ** 20
    monkeypatch.setenv("BNMA_FIT_BUDGET_MB", "4096")
    assert resource_limit("stack", wide) == ""
    monkeypatch.setenv("BNMA_FIT_BUDGET_MB", "lots")
    with pytest.raises(ValueError, match="BNMA_FIT_BUDGET_MB must be a number"):
        fit_budget_bytes()
