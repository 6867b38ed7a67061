"""Order BMA predicts from CPTs counted once per score table (``ScoreTable.cpt_cache``, issue
34) with the numbers of counting every CPT at every kernel call.

Oracle: the same model with the cache switched off (``ScoreTable.cpt_cache`` returning the
empty cache: every kernel counts its CPTs from the training rows, as before). Equal exactly
(the same CPT values read by the same arithmetic) on complete rows, on rows with missing values
through the completion path and the node-factor path, for subsets and permutations of the
kept orders and for orders the model never kept, with the cache bounded to a few cells, and on
a model refitted with fixed orders (its own table, its own cache). The kernels do read the
cache (a poisoned cache changes the predictions) except with explicit training rows."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
from oracles import chained_codes

from bnma_core.classifiers.order_bma import OrderMCMCBMA
from bnma_core.data import CODE_DTYPE
from bnma_core.kernels.orders import CptCache, no_cpt_cache
from bnma_core.model_io import model_bytes, read_model
from bnma_core.structure import score_table
from bnma_core.structure.score_table import ScoreTable


@pytest.fixture(scope="module", params=[(None, "k2"), (2, "bdeu")], ids=["full-k2", "cand-bdeu"])
def fitted(request):
    """A model on data with missing training values, and test rows: complete ones, rows with
    random missing values, one case's coalitions (the factor path's memo)."""
    candidates, scoring = request.param
    X, y, ar = chained_codes(6, 5, 160, 3)
    rng = np.random.default_rng(0)
    X[rng.random(X.shape) < 0.08] = -1
    est = OrderMCMCBMA(n_iter=400, burn_in=50, n_orders=5, max_parents=2, scoring=scoring,
                       candidates=candidates, max_missing_states=8, n_mc=16, random_state=0
                       ).fit(X, y, arities=ar[:-1])
    complete = X[(X >= 0).all(axis=1)][:40]
    holes = X[:60].copy()
    holes[rng.random(holes.shape) < 0.4] = -1
    x = complete[0]
    coal = np.array([np.where(np.arange(len(x)) < b, x, -1) for b in range(len(x) + 1)]
                    + [np.where(np.arange(len(x)) % 2 == b % 2, x, -1) for b in range(2)])
    return est, X, y, complete.astype(CODE_DTYPE), holes.astype(CODE_DTYPE), \
        coal.astype(CODE_DTYPE)


def _fresh(est) -> OrderMCMCBMA:
    """The model with an empty cache (its table copied, the copy's cache not yet built)."""
    return pickle.loads(pickle.dumps(est))


def _counting(monkeypatch) -> None:
    monkeypatch.setattr(ScoreTable, "cpt_cache", lambda self, orders: no_cpt_cache())


def _paths(est, complete, holes, coal, orders):
    orders = np.ascontiguousarray(orders, dtype=np.int64)
    return [est.order_log_joints(complete, orders),
            est._marginal_log_joints_by_completions(holes, orders, 200_000),
            est._marginal_log_joints(holes[:40], orders, 200_000),  # factors, no memo
            est._marginal_log_joints(coal, orders, 200_000)]  # factors, memo


def _orders(est, seed: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    kept = est._orders_
    other = np.array([rng.permutation(kept.shape[1]) for _ in range(3)], dtype=np.int64)
    return [kept[2:4], kept[::-1], other, kept[:1], kept]


def _assert_same(got, ref) -> None:
    for g, r in zip(got, ref, strict=True):
        np.testing.assert_array_equal(g, r)


def test_cached_cpts_give_the_numbers_of_counting(fitted, monkeypatch):
    """Orders in the sequence subset, permutation, orders never kept, one order, all kept:
    the cache grows call by call and every path's log joints equal counting's exactly."""
    est, _, _, complete, holes, coal = fitted
    cached = _fresh(est)
    got = [_paths(cached, complete, holes, coal, o) for o in _orders(est, 1)]
    assert cached.table_._cpt is not None and len(cached.table_._cpt.orders) > len(est._orders_)
    with monkeypatch.context() as mp:
        _counting(mp)
        ref = [_paths(est, complete, holes, coal, o) for o in _orders(est, 1)]
    for g, r in zip(got, ref, strict=True):
        _assert_same(g, r)
    np.testing.assert_array_equal(cached.predict_log_proba(holes),
                                  est.predict_log_proba(holes))


def test_bounded_cache_gives_the_numbers_of_counting(fitted, monkeypatch):
    """A cache of a few hundred cells holds some sets; the kernels count the others."""
    est, _, _, complete, holes, coal = fitted
    with monkeypatch.context() as mp:
        mp.setattr(score_table, "CPT_CACHE_MAX_CELLS", 300)
        small = _fresh(est)
        got = _paths(small, complete, holes, coal, est._orders_)
        cache = small.table_._cpt.cache
        assert 0 < cache.flat.shape[0] <= 300 and (cache.off == -1).any()
    with monkeypatch.context() as mp:
        _counting(mp)
        ref = _paths(est, complete, holes, coal, est._orders_)
    _assert_same(got, ref)


def _poison(table: ScoreTable, orders: np.ndarray) -> None:
    cache = table.cpt_cache(orders)
    table._cpt.cache = CptCache(cache.off, np.full_like(cache.flat, 0.5))


def test_kernels_read_the_cache_but_not_with_explicit_rows(fitted):
    """Every kernel path reads the cache (poisoned CPTs change all its numbers); a call with
    explicit training rows counts them and ignores the table's cache."""
    est, _, _, complete, holes, coal = fitted
    clean = _fresh(est)
    ref = _paths(clean, complete, holes, coal, est._orders_)
    bad = _fresh(est)
    _poison(bad.table_, est._orders_)
    for g, r in zip(_paths(bad, complete, holes, coal, est._orders_), ref, strict=True):
        assert not np.allclose(g, r)
    tab = bad.table_
    test_t = np.ascontiguousarray(np.column_stack(
        [complete, np.zeros(len(complete), dtype=CODE_DTYPE)]).T)
    explicit = tab.order_log_joints(est._orders_, tab.data_t, test_t, est.class_index_,
                                    weights=tab.weights)
    np.testing.assert_array_equal(explicit, ref[0])


def test_refit_fixed_orders_has_its_own_cache(fitted, monkeypatch):
    """``refit_fixed_orders`` on half the rows: a new table whose cache holds its own rows'
    CPTs (not the full model's): the numbers of counting on those rows."""
    est, X, y, complete, holes, coal = fitted
    model = _fresh(est)
    _paths(model, complete, holes, coal, est._orders_)  # the full model's cache built
    half = model.refit_fixed_orders(X[::2], y[::2])
    assert half.table_ is not model.table_
    got = _paths(half, complete, holes, coal, half._orders_)
    assert half.table_._cpt is not model.table_._cpt
    with monkeypatch.context() as mp:
        _counting(mp)
        ref = _paths(est.refit_fixed_orders(X[::2], y[::2]), complete, holes, coal,
                     half._orders_)
    _assert_same(got, ref)


def test_cache_is_neither_pickled_nor_saved(fitted):
    """A model that has predicted pickles and saves without its cache (a model file holds no
    cache either) and predicts the same after loading."""
    est, _, _, complete, holes, _ = fitted
    model = _fresh(est)
    before = model.predict_log_proba(holes)
    assert model.table_._cpt is not None
    back = pickle.loads(pickle.dumps(model))
    assert back.table_._cpt is None
    loaded = read_model(model_bytes(model), self_check=False).estimator
    assert loaded.table_._cpt is None
    for m in (back, loaded):
        np.testing.assert_array_equal(m.predict_log_proba(holes), before)
        np.testing.assert_array_equal(m.predict_log_proba(complete),
                                      model.predict_log_proba(complete))


def test_threads_share_one_cache(fitted, monkeypatch):
    """Rows split between threads (a few rows per thread forced): the threads wait for one
    extension of the cache and give counting's numbers."""
    from bnma_core.classifiers import order_bma

    est, _, _, complete, holes, _ = fitted
    rows = np.concatenate([complete] * 3)
    with monkeypatch.context() as mp:
        _counting(mp)
        ref = est.order_log_joints(rows)
    model = _fresh(est)
    monkeypatch.setattr(order_bma, "THREAD_MIN_ROWS", 10)
    monkeypatch.setattr(order_bma, "N_THREADS", 4)
    np.testing.assert_array_equal(model.order_log_joints(rows), ref)
    assert len(model.table_._cpt.orders) == len(np.unique(est._orders_, axis=0))
