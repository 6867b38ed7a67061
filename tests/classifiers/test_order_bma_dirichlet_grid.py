"""Order-MCMC BMA with its Dirichlet prior chosen on the training rows by the marginal
likelihood (``dirichlet_grid``, issue 16)."""

from __future__ import annotations

import numpy as np
import pytest

from bnma_core.classifiers.order_bma import OrderMCMCBMA

KW = {"n_iter": 300, "burn_in": 50, "n_orders": 3, "max_parents": 2, "random_state": 4}


def _data(n: int = 80, seed: int = 0):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    X = np.column_stack([np.where(rng.random(n) < 0.85, y, 1 - y), rng.integers(0, 3, n),
                         (y + rng.integers(0, 2, n)) % 3]).astype(np.int32)
    return X, y


def test_grid_keeps_the_entry_with_the_largest_marginal_likelihood():
    X, y = _data()
    est = OrderMCMCBMA(dirichlet_grid=("k2", 0.5, 8.0), **KW).fit(X, y)
    ml = est.dirichlet_log_ml_
    assert set(ml) == {"k2", 0.5, 8.0}
    best = max(ml, key=ml.get)
    assert est.ess_ == (1.0 if best == "k2" else best)
    assert est.scoring_ == ("k2" if best == "k2" else "bdeu")
    # the same model as fitting the chosen prior directly (same seed, same chain)
    direct = OrderMCMCBMA(scoring=est.scoring_, ess=est.ess_, **KW).fit(X, y)
    np.testing.assert_allclose(est.predict_proba(X), direct.predict_proba(X), atol=1e-12)
    np.testing.assert_array_equal(est.sampled_orders_, direct.sampled_orders_)
    # each entry's criterion is max_t log P(D, order_t) of its own run
    for label, val in ml.items():
        kw = {"scoring": "k2"} if label == "k2" else {"scoring": "bdeu", "ess": label}
        one = OrderMCMCBMA(**kw, **KW).fit(X, y)
        assert val == pytest.approx(max(one.table_.order_log_score(o)
                                        for o in one.sampled_orders_), abs=1e-9)


def test_no_grid_keeps_the_parameters():
    X, y = _data()
    est = OrderMCMCBMA(scoring="bdeu", ess=3.0, **KW).fit(X, y)
    assert (est.scoring_, est.ess_) == ("bdeu", 3.0) and not hasattr(est, "dirichlet_log_ml_")


@pytest.mark.parametrize("grid", [(), ("k3",), (0.0,), (-1.0,), (float("nan"),), (True,)])
def test_bad_grid(grid):
    X, y = _data()
    with pytest.raises(ValueError, match="dirichlet_grid"):
        OrderMCMCBMA(dirichlet_grid=grid, **KW).fit(X, y)


def test_fit_stream_refuses_a_grid():
    X, y = _data()
    with pytest.raises(ValueError, match="fit_stream"):
        next(OrderMCMCBMA(dirichlet_grid=("k2", 1.0), **KW).fit_stream(X, y))
