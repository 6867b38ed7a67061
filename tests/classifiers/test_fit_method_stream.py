"""registry.fit_method's streaming option: progress events while order MCMC fits, the same
model as the plain fit (names, class labels, orders), and an early stop."""

import numpy as np
import pytest

from bnma_core.classifiers.registry import fit_method
from bnma_core.network import load_network

PARAMS = dict(n_iter=600, burn_in=100, n_orders=5, n_chains=2, max_parents=2, random_state=3)


@pytest.fixture(scope="module")
def asia():
    return load_network("asia").sample(300, seed=1, class_variable="lung")


def test_streamed_fit_is_the_plain_fit(asia):
    events = []
    model = fit_method("bma30", asia, progress=events.append, progress_every=200, **PARAMS)
    plain = fit_method("bma30", asia, **PARAMS)
    assert [(e["chain"], e["iteration"]) for e in events] == [
        (c, t) for t in (200, 400, 600) for c in (0, 1)]
    assert all(set(e) >= {"log2_score", "acceptance_rate", "order", "done"} for e in events)
    assert model.variable_names_ == plain.variable_names_ == asia.feature_names + ["lung"]
    assert list(model.classes_) == list(plain.classes_) == asia.classes
    np.testing.assert_array_equal(model.sampled_orders_, plain.sampled_orders_)
    np.testing.assert_allclose(model.predict_proba(asia.X[:20]),
                               plain.predict_proba(asia.X[:20]))
    assert model.n_train_rows_ == asia.n_rows


def test_should_stop_ends_the_fit_with_a_model(asia):
    events = []
    model = fit_method("bma30", asia, progress=events.append, progress_every=100,
                       should_stop=lambda: len(events) >= 2,
                       **{**PARAMS, "n_iter": 100_000, "burn_in": 100})
    assert model.iterations_done_ < 100_000 and len(model.sampled_orders_) >= 1
    assert model.predict_proba(asia.X[:3]).shape == (3, 2)


def test_progress_needs_a_streaming_estimator(asia):
    with pytest.raises(ValueError, match="cannot report progress"):
        fit_method("nb", asia, progress=print)
