"""Cross-fitting for the Patient page's "leave this case out" (issue 34 item 2): the model that
explains row i never saw row i, folds are stratified and drawn from the seed alone, and a fold
model equals a fit on the rows outside its fold."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as hs

from bnma_core.crossfit import CrossFit, fold_assignment


@settings(max_examples=60, deadline=None)
@given(y=hs.lists(hs.integers(-1, 3), min_size=2, max_size=120), k=hs.integers(2, 12),
       seed=hs.integers(0, 2**31 - 1))
def test_every_row_is_in_one_fold_and_its_model_never_sees_it(y, k, seed):
    y = np.asarray(y)
    folds = fold_assignment(y, k, seed)
    kk = min(k, len(y))
    assert folds.min() >= 0 and folds.max() < kk
    sizes = np.bincount(folds, minlength=kk)
    assert sizes.max() - sizes.min() <= 1  # balanced
    for c in np.unique(y):  # stratified: each class spread evenly over the folds
        per = np.bincount(folds[y == c], minlength=kk)
        assert per.max() - per.min() <= 1
    assert np.array_equal(folds, fold_assignment(y, k, seed))  # from the seed alone
    cf = CrossFit(method="nb", seed=seed, folds=folds, models=[None] * kk)
    for i in range(len(y)):
        assert i not in set(cf.train_rows(cf.fold_of(i)).tolist())
        assert i in set(cf.test_rows(cf.fold_of(i)).tolist())


def test_the_model_for_a_row_is_the_fit_without_its_fold(wbc):
    """Naive Bayes fold models: model_for(i) predicts row i exactly as a fit on the rows
    outside i's fold, and not as a fit on all rows (the row's own counts are out)."""
    from bnma_core.classifiers.registry import fit_method

    cf = CrossFit.plan(wbc, "nb", n_folds=10, seed=3)
    seen = []
    cf.fit(wbc, progress=seen.append)
    assert cf.complete and [e["done"] for e in seen] == list(range(1, 11))
    full = fit_method("nb", wbc)
    differs = 0
    for i in (0, 23, 400, 698):
        k = cf.fold_of(i)
        ref = fit_method("nb", wbc, cf.train_rows(k))
        x = wbc.X[i:i + 1]
        got = cf.model_for(i).predict_proba(x)
        np.testing.assert_allclose(got, ref.predict_proba(x), rtol=0, atol=1e-12)
        assert cf.model_for(i).n_train_rows_ == len(cf.train_rows(k)) < wbc.n_rows
        differs += not np.allclose(got, full.predict_proba(x), rtol=0, atol=1e-9)
    assert differs  # leaving the fold out changes the prediction


def test_wanted_fold_first_stop_between_folds_and_same_seed_same_models(wbc):
    cf = CrossFit.plan(wbc, "bma1", n_folds=4, seed=7, n_iter=300, burn_in=50,
                       max_parents=1)
    order = []
    calls = {"n": 0}

    def stop():
        calls["n"] += 1
        return calls["n"] > 2  # two folds, then Stop

    cf.fit(wbc, want=lambda: 2, progress=lambda e: order.append(e["fold"]),
           should_stop=stop)
    assert order == [2, 0] and cf.n_fitted == 2 and not cf.complete
    cf.fit(wbc)
    again = CrossFit.plan(wbc, "bma1", n_folds=4, seed=7, n_iter=300, burn_in=50,
                          max_parents=1).fit(wbc)
    x = wbc.X[:50]
    for a, b in zip(cf.models, again.models):
        np.testing.assert_array_equal(a.predict_proba(x), b.predict_proba(x))
    assert "part" in cf.describe(5) and "left out" in cf.describe(5)
