"""Stacking / pseudo-BMA over model families by inner-CV conditional log score (issue 16)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.special import logsumexp
from sklearn.base import clone

from bnma_core.classifiers.registry import make_classifier
from bnma_core.classifiers.stacking import (
    INNER_PRUNE_EPS,
    LOO_MISSING_STATES,
    PredictiveStacking,
    stacking_weights,
)


def _objective(lp: np.ndarray, w: np.ndarray) -> float:
    with np.errstate(divide="ignore"):
        return float(logsumexp(lp + np.log(w)[None, :], axis=1).sum())


def test_stacking_weights_match_brute_force_on_two_candidates():
    rng = np.random.default_rng(0)
    lp = np.log(rng.uniform(0.05, 1.0, size=(12, 2)))
    w = stacking_weights(lp, max_iter=100000, tol=0.0)
    grid = np.linspace(0, 1, 200001)
    obj = [_objective(lp, np.array([g, 1 - g])) for g in grid[::100]]
    g0 = grid[::100][int(np.argmax(obj))]
    fine = grid[(grid > g0 - 2e-3) & (grid < g0 + 2e-3)]
    best = fine[int(np.argmax([_objective(lp, np.array([g, 1 - g])) for g in fine]))]
    assert w[0] == pytest.approx(best, abs=2e-5)
    assert _objective(lp, w) >= max(obj) - 1e-9


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 30), st.integers(1, 4), st.integers(0, 10**6))
def test_stacking_weights_on_simplex_and_not_worse_than_vertices(n, k, seed):
    lp = np.log(np.random.default_rng(seed).uniform(1e-3, 1.0, size=(n, k)))
    w = stacking_weights(lp)
    assert w.shape == (k,) and (w >= 0).all() and w.sum() == pytest.approx(1.0, abs=1e-12)
    best = _objective(lp, w)
    for j in range(k):
        assert best >= _objective(lp, np.eye(k)[j]) - 1e-6 * max(1.0, abs(best))
    assert best >= _objective(lp, np.full(k, 1 / k)) - 1e-9


def _plain_em(lp: np.ndarray, max_iter: int = 200000, tol: float = 1e-15) -> np.ndarray:
    """The EM of ``stacking_weights`` as it was written before SQUAREM (issue 34)."""
    w = np.full(lp.shape[1], 1.0 / lp.shape[1])
    prev = -np.inf
    for _ in range(max_iter):
        with np.errstate(divide="ignore"):
            a = lp + np.log(w)[None, :]
        norm = logsumexp(a, axis=1, keepdims=True)
        obj = float(norm.sum())
        w = np.exp(a - norm).mean(axis=0)
        if obj - prev < tol * max(1.0, abs(obj)):
            break
        prev = obj
    return w / w.sum()


@settings(max_examples=30, deadline=None)
@given(st.integers(2, 60), st.integers(2, 5), st.integers(0, 10**6))
def test_squarem_weights_are_the_em_fixed_point(n, k, seed):
    """The accelerated EM reaches the optimum the plain EM crawls to: the KKT conditions of
    the concave objective (mean responsibility ratio 1 on the support, <= 1 off it) and the
    objective of the plain EM run long."""
    rng = np.random.default_rng(seed)
    lp = np.log(rng.uniform(1e-3, 1.0, size=(n, k)))
    lp[:, 0] += rng.uniform(0, 1)  # one candidate often dominates: weights tending to 0
    w = stacking_weights(lp)
    s = np.exp(lp) @ w
    grad = (np.exp(lp) / s[:, None]).mean(axis=0)  # d objective / d w_k, divided by n
    assert np.all(grad <= 1 + 1e-6)
    assert np.allclose(grad[w > 1e-4], 1.0, atol=1e-6)
    ref = _plain_em(lp)
    assert _objective(lp, w) >= _objective(lp, ref) - 1e-9 * max(1.0, abs(_objective(lp, w)))


def test_dominating_candidate_takes_all_weight():
    lp = np.column_stack([np.full(20, np.log(0.9)), np.full(20, np.log(0.3))])
    assert stacking_weights(lp)[0] == pytest.approx(1.0, abs=1e-6)


def test_stacking_weights_bad_input():
    with pytest.raises(ValueError, match="finite"):
        stacking_weights(np.array([[0.0, -np.inf]]))
    with pytest.raises(ValueError, match="non-empty"):
        stacking_weights(np.zeros((0, 2)))


def _data(seed: int = 0, n: int = 120):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    X = np.column_stack([np.where(rng.random(n) < 0.8, y, 1 - y),
                         rng.integers(0, 3, n), (y + rng.integers(0, 2, n)) % 3]).astype(np.int32)
    return X, y


def test_single_candidate_is_that_candidate():
    X, y = _data()
    st_ = PredictiveStacking(candidates=("nb",), random_state=0).fit(X, y, arities=[2, 3, 3])
    nb = make_classifier("nb").fit(X, y, arities=[2, 3, 3])
    assert st_.weights_ == {"nb": 1.0}
    np.testing.assert_allclose(st_.predict_proba(X), nb.predict_proba(X), atol=1e-12)


@pytest.mark.parametrize("weighting", ["stacking", "pseudo-bma", "select", "select-accuracy"])
def test_weightings_give_a_mixture_and_same_seed_same_result(weighting):
    X, y = _data(1)
    est = PredictiveStacking(candidates=("nb", "tan", "aode"), weighting=weighting,
                             random_state=3)
    p1 = est.fit(X, y).predict_proba(X)
    p2 = clone(est).fit(X, y).predict_proba(X)
    np.testing.assert_array_equal(p1, p2)
    w = np.array(list(est.weights_.values()))
    assert w.sum() == pytest.approx(1.0) and (w >= 0).all()
    assert p1.sum(axis=1) == pytest.approx(1.0)
    mix = sum(wk * est.models_[n].predict_proba(X) for n, wk in est.weights_.items() if wk > 0)
    np.testing.assert_allclose(p1, mix, atol=1e-12)
    if weighting.startswith("select"):
        assert sorted(w)[-1] == 1.0
    if weighting == "select":
        assert max(est.elpd_, key=est.elpd_.get) == next(n for n, v in est.weights_.items() if v)
    if weighting == "pseudo-bma":
        e = np.array(list(est.elpd_.values()))
        np.testing.assert_allclose(w, np.where(np.exp(e - logsumexp(e)) < 1e-6, 0,
                                               np.exp(e - logsumexp(e))) / w.sum(), atol=1e-9)


def test_missing_values_and_absent_class_in_inner_folds():
    X, y = _data(2, 40)
    y = y.copy()
    y[:2] = 2  # a class with two rows: absent from some inner training folds
    X = X.copy()
    X[5, 1] = -1
    est = PredictiveStacking(candidates=("nb", "aode"), random_state=0).fit(X, y)
    p = est.predict_proba(X)
    assert np.isfinite(p).all() and p.shape == (40, 3)


@pytest.mark.parametrize("kw, msg", [
    ({"candidates": ("nb", "magic")}, "Unknown method 'magic'"),
    ({"candidates": ()}, "candidates must be a registry name or a non-empty sequence"),
    ({"candidates": ("nb", "nb")}, "distinct"),
    ({"weighting": "vote"}, "weighting must be one of"),
    ({"inner_folds": 1}, "inner_folds must be an integer >= 2"),
    ({"loo_missing_states": 0}, "loo_missing_states must be"),
])
def test_bad_parameters(kw, msg):
    X, y = _data()
    with pytest.raises(ValueError, match=msg):
        PredictiveStacking(**kw).fit(X, y)


def test_incomplete_rows_reach_the_candidates_that_learn_from_them():
    """The mushroom bug: an estimator without a declaration had its incomplete training rows
    dropped by fit_method; the stack declares them and hands them to each candidate that
    learns from incomplete rows (complete rows only to the others)."""
    from bnma_core.classifiers.registry import capabilities, fit_method
    from bnma_core.data import load_dataset
    from bnma_core.datasets import bundled_path

    ds = load_dataset(bundled_path("wbc.csv"))  # 16 missing values kept
    assert capabilities(PredictiveStacking()).learns_from_incomplete_rows
    rows = np.arange(0, ds.n_rows, 2)
    st_ = fit_method(PredictiveStacking(candidates=("nb",), random_state=0), ds, rows)
    nb = fit_method("nb", ds, rows)
    assert st_.n_train_rows_ == nb.n_train_rows_ == len(rows)
    np.testing.assert_allclose(st_.predict_proba(ds.X), nb.predict_proba(ds.X), atol=1e-12)
    # a candidate that refuses incomplete rows gets the complete ones only
    X, y = ds.X[rows], ds.y[rows]
    ar = ds.arities[ds.feature_indices]
    est = PredictiveStacking(candidates=("nb", "ebn"), random_state=0).fit(X, y, arities=ar)
    ebn = est._fit_candidate("ebn", 0, X, y)
    assert ebn.n_rows_dropped_ == 0 and (X < 0).any(axis=1).sum() > 0
    assert np.isfinite(est.predict_proba(ds.X)).all()


def test_leave_one_out_densities_of_order_bma_are_the_default():
    """``inner_fit="loo"`` (the default): an order-MCMC candidate's log scores are its
    full-data model's leave-one-out posteriors (``loo_log_proba`` at ``INNER_PRUNE_EPS``,
    tested equal to refits without each row); a candidate without them (naive Bayes) keeps
    the inner folds."""
    X, y = _data(2, n=90)
    ar = [2, 3, 3]
    est = PredictiveStacking(candidates=("bma10", "nb"), inner_folds=3,
                             random_state=4).fit(X, y, arities=ar)
    assert est.inner_fit == "loo" and est.inner_fit_ == {"bma10": "loo", "nb": "refit"}
    full = make_classifier("bma10", random_state=4).fit(X, y, arities=ar)
    loo = full.loo_log_proba(X, y, INNER_PRUNE_EPS)[np.arange(len(y)), y]
    assert est.elpd_["bma10"] == pytest.approx(np.maximum(loo, np.log(1e-9)).sum(), rel=1e-12)
    folds = PredictiveStacking(candidates=("bma10", "nb"), inner_folds=3, inner_fit="downdate",
                               random_state=4).fit(X, y, arities=ar)
    assert folds.elpd_["nb"] == pytest.approx(est.elpd_["nb"], rel=1e-12)
    assert folds.elpd_["bma10"] != pytest.approx(est.elpd_["bma10"], rel=1e-6)


@pytest.mark.parametrize("inner_fit", ["downdate", "refit"])
def test_inner_fold_densities_of_order_bma(inner_fit):
    """``inner_fit="downdate"``: an order-MCMC candidate's inner-fold log scores are those of
    its full-data model with the orders fixed and everything else counted without the fold
    (``refit_fixed_orders``, itself tested equal to explicit fixed-order refits); ``"refit"``:
    a fresh fit per fold (the former procedure). The mixture's component is the full-data
    model either way."""
    from sklearn.model_selection import StratifiedKFold

    X, y = _data(2, n=90)
    ar = [2, 3, 3]
    est = PredictiveStacking(candidates=("bma10", "nb"), inner_folds=3, inner_fit=inner_fit,
                             random_state=4).fit(X, y, arities=ar)
    full = make_classifier("bma10", random_state=4).fit(X, y, arities=ar)
    elpd = 0.0
    for tr, te in StratifiedKFold(3, shuffle=True, random_state=4).split(X, y):
        m = (full.refit_fixed_orders(X[tr], y[tr], INNER_PRUNE_EPS) if inner_fit == "downdate"
             else make_classifier("bma10", random_state=4).fit(X[tr], y[tr], arities=ar))
        elpd += np.maximum(m.predict_log_proba(X[te])[np.arange(len(te)), y[te]],
                           np.log(1e-9)).sum()
    assert est.elpd_["bma10"] == pytest.approx(elpd, rel=1e-12)
    if est.weights_["bma10"] > 0:
        np.testing.assert_allclose(est.models_["bma10"].predict_proba(X),
                                   full.predict_proba(X), atol=1e-12)


@pytest.mark.parametrize("n_features, kernel", [(6, "_grouped_full_table"),
                                                 (70, "_candidate_tables")])
def test_the_three_priors_are_counted_once(monkeypatch, n_features, kernel):
    """``stack``'s three order averages (K2, BDeu 1, BDeu 20) get their score tables from one
    counting pass (``shared_counting``), in both regimes (the candidate regime beyond 64
    variables): one kernel call per fit (the tables equal separate builds:
    ``tests/kernels/test_candidate_tables.py``, ``test_grouped_counts.py``)."""
    from bnma_core.structure import score_table

    rng = np.random.default_rng(3)
    X = rng.integers(0, 3, size=(120, n_features))
    y = (X[:, 0] + X[:, 1] + rng.integers(0, 2, 120)) % 2
    calls = []
    real = getattr(score_table, kernel)
    monkeypatch.setattr(score_table, kernel, lambda *a, **k: calls.append(1) or real(*a, **k))
    PredictiveStacking(candidates=("bma10", "bma10_bdeu", "bma10_smooth"),
                       random_state=0).fit(X, y)
    assert len(calls) == 1


def test_order_averages_of_three_priors_share_one_chain():
    """``share_orders`` (default): the order averages that differ only in the Dirichlet prior
    average over the orders the first of them sampled; each is the order average of its own
    prior at those orders (its own table: equal to a separate fit of that prior evaluated at
    the shared orders), and says under which prior its orders were sampled."""
    X, y = _data(2, n=90)
    ar = [2, 3, 3]
    names = ("bma10", "bma10_bdeu", "bma10_smooth")
    est = PredictiveStacking(candidates=names, random_state=4).fit(X, y, arities=ar)
    full = {n: m for n, m in est.models_.items()}
    src = make_classifier("bma10", random_state=4).fit(X, y, arities=ar)
    for name in names[1:]:
        follower = make_classifier(name, random_state=4).fit_at_orders(X, y, src, arities=ar)
        own = make_classifier(name, random_state=4).fit(X, y, arities=ar)
        np.testing.assert_array_equal(follower.sampled_orders_, src.sampled_orders_)
        assert follower.orders_prior_ == ("k2", 1.0)
        assert own.orders_prior_ == (own.scoring_, own.ess_)
        np.testing.assert_allclose(follower.order_log_joints(X),
                                   own.order_log_joints(X, src.sampled_orders_), atol=1e-12)
        if name in full:
            np.testing.assert_allclose(full[name].predict_proba(X), follower.predict_proba(X),
                                       atol=1e-12)
    alone = PredictiveStacking(candidates=names, share_orders=False,
                               random_state=4).fit(X, y, arities=ar)
    orders = {n: m.sampled_orders_ for n, m in alone.models_.items()}
    assert all(m.orders_prior_ == (m.scoring_, m.ess_) for m in alone.models_.values())
    assert len(orders) < 2 or not all(np.array_equal(o, next(iter(orders.values())))
                                      for o in orders.values())


def test_fit_at_orders_refuses_what_it_cannot_do():
    X, y = _data(2, n=60)
    src = make_classifier("bma10", random_state=0)
    with pytest.raises(ValueError, match="fitted OrderMCMCBMA"):
        make_classifier("bma10_bdeu").fit_at_orders(X, y, src)
    src.fit(X, y, arities=[2, 3, 3])
    with pytest.raises(ValueError, match="other variables"):
        make_classifier("bma10_bdeu").fit_at_orders(X, y, src, arities=[2, 3, 4])
    with pytest.raises(ValueError, match="dirichlet_grid=None"):
        make_classifier("bma10_ml").fit_at_orders(X, y, src)


@settings(max_examples=25, deadline=None)
@given(st.integers(2, 25), st.integers(2, 4), st.integers(0, 10**6))
def test_integer_row_weights_are_repeated_rows(n, k, seed):
    """A row of weight v_i in the stacking objective counts as v_i copies of the row."""
    rng = np.random.default_rng(seed)
    lp = np.log(rng.uniform(1e-3, 1.0, size=(n, k)))
    v = rng.integers(1, 4, size=n)
    np.testing.assert_allclose(stacking_weights(lp, row_weights=v.astype(float)),
                               stacking_weights(np.repeat(lp, v, axis=0)), atol=1e-7)
    with pytest.raises(ValueError, match="row_weights"):
        stacking_weights(lp, row_weights=np.zeros(n))


def test_leave_one_out_of_some_rows_equals_those_rows_of_all():
    """``loo_log_proba(rows=...)`` of the order averages and of UKDB gives those rows' entries
    of the all-rows call (complete rows and rows with a missing value)."""
    X, y = _data(2, n=90)
    X = X.copy()
    X[[3, 10, 40], [1, 2, 0]] = -1
    rows = np.array([40, 0, 3, 7, 89, 3])
    for name, kw in (("bma10", {"prune_eps": INNER_PRUNE_EPS}), ("ukdb2", {})):
        m = make_classifier(name, random_state=0).fit(X, y, arities=[2, 3, 3])
        codes = np.searchsorted(np.asarray(m.classes_), y)
        every = m.loo_log_proba(X, codes, **kw)
        np.testing.assert_allclose(m.loo_log_proba(X, codes, rows=rows, **kw), every[rows],
                                   atol=1e-12)
        with pytest.raises(ValueError, match="indices of the 90 training rows"):
            m.loo_log_proba(X, codes, rows=[90], **kw)


def test_leave_one_out_of_a_stratified_sample_of_rows():
    """Beyond ``loo_rows`` complete rows / ``loo_incomplete_rows`` rows with a missing value,
    the weights come from a seeded simple random sample of each, every sampled row standing
    for its stratum's rows / sample size; below them, from every row."""
    from bnma_core.classifiers.registry import fit_method
    from bnma_core.data import load_dataset
    from bnma_core.datasets import bundled_path

    ds = load_dataset(bundled_path("wbc.csv"))  # 683 complete rows, 16 with a missing value
    kw = {"candidates": ("bma10", "ukdb2"), "loo_rows": 100, "loo_incomplete_rows": 5}
    a = fit_method(PredictiveStacking(**kw, random_state=2), ds)
    b = fit_method(PredictiveStacking(**kw, random_state=2), ds)
    incomplete = (ds.X < 0).any(axis=1)
    assert len(a.scored_rows_) == 105 and incomplete[a.scored_rows_].sum() == 5
    np.testing.assert_array_equal(a.scored_rows_, b.scored_rows_)
    assert a.weights_ == b.weights_
    allrows = fit_method(PredictiveStacking(candidates=kw["candidates"], random_state=2), ds)
    assert len(allrows.scored_rows_) == ds.n_rows
    # the sampled estimate of each elpd is near the all-rows sum (683 / 100 and 16 / 5 weights)
    for name, e in allrows.elpd_.items():
        assert a.elpd_[name] == pytest.approx(e, rel=0.5)
    m = a.models_.get("bma10") or fit_method("bma10", ds, random_state=2)
    lp = m.loo_log_proba(ds.X, np.searchsorted(np.asarray(m.classes_), ds.y), INNER_PRUNE_EPS,
                         rows=a.scored_rows_, held_states=LOO_MISSING_STATES
                         )[np.arange(105), ds.y[a.scored_rows_]]
    v = np.where(incomplete[a.scored_rows_], 16 / 5, 683 / 100)
    assert a.elpd_["bma10"] == pytest.approx(v @ np.maximum(lp, np.log(1e-9)), rel=1e-12)


def test_loo_missing_states_sums_the_scored_rows_missing_values_out_once():
    """``loo_missing_states``: when every scored incomplete row has at most that many joint
    states of its missing values, each is scored by its own leave-one-out in closed form (not
    held out with the others: another elpd than ``None``'s, close to it); else the incomplete
    rows are held out together, their values summed out once for all orders, by that many
    draws beyond (another elpd again: the oracle can fail)."""
    rng = np.random.default_rng(4)
    X, y = _data(4, n=150)
    X = X.copy()
    X[rng.random(X.shape) < 0.25] = -1
    kw = {"candidates": ("bma10", "nb"), "random_state": 0}
    exact = PredictiveStacking(loo_missing_states=None, **kw).fit(X, y, arities=[2, 3, 3])
    once = PredictiveStacking(loo_missing_states=10**6, **kw).fit(X, y, arities=[2, 3, 3])
    drawn = PredictiveStacking(loo_missing_states=1, **kw).fit(X, y, arities=[2, 3, 3])
    assert 1e-3 < abs(once.elpd_["bma10"] - exact.elpd_["bma10"]) < 2.0
    assert abs(drawn.elpd_["bma10"] - exact.elpd_["bma10"]) > 1e-3
    assert drawn.elpd_["nb"] == exact.elpd_["nb"]
