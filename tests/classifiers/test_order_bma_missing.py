"""Order-BMA prediction with missing findings (DESIGN §4): barren features dropped exactly, the
others enumerated, Monte Carlo only beyond ``max_missing_states``.

Oracles: brute-force enumeration of every missing value through the complete-row kernel (no
barren shortcut); the former code path (kept below, verbatim in substance) for rows it summed
out exactly; and a count of the rows and orders that fall back to Monte Carlo."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from oracles import chained_codes
from scipy.special import logsumexp

from bnma_core.classifiers.order_bma import FixedOrderBMA, OrderMCMCBMA
from bnma_core.data import CODE_DTYPE, load_dataset
from bnma_core.datasets import bundled_path
from bnma_core.structure.score_table import compress_rows


def _data(n_feat: int, seed: int, n_rows: int = 120
          ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Random codes where each feature copies the class or an earlier feature (p = 0.6)."""
    return chained_codes(n_feat, seed, n_rows, 3)


def _brute_force(est, X: np.ndarray) -> np.ndarray:
    """log P(c, x_obs | D, ≺_t): every missing value enumerated, each completion through the
    complete-row path, summed; (T, n_rows, n_classes)."""
    out = []
    for row in X:
        cols = np.nonzero(row < 0)[0]
        fills = list(itertools.product(*[range(int(est.arities_[c])) for c in cols]))
        block = np.repeat(row[None, :], len(fills), axis=0)
        if len(cols):
            block[:, cols] = np.asarray(fills)
        out.append(logsumexp(est.order_log_joints(block), axis=1))
    return np.stack(out, axis=1)


def _old_order_log_joints(est, X: np.ndarray) -> np.ndarray:
    """The former marginalization: every missing value of a row enumerated when they have at
    most ``max_missing_states`` joint states, else ``n_mc`` uniform completions for all
    orders at once (the code before barren features were dropped)."""
    X = np.asarray(X, dtype=CODE_DTYPE)
    miss = X < 0
    rng = np.random.default_rng(est.random_state)
    rows, groups, logw = [X[~miss.any(axis=1)]], [np.nonzero(~miss.any(axis=1))[0]], [
        np.zeros(int((~miss.any(axis=1)).sum()))]
    for r in np.nonzero(miss.any(axis=1))[0]:
        cols = np.nonzero(miss[r])[0]
        ar = est.arities_[cols]
        n_states = float(np.prod(ar.astype(float)))
        if n_states <= est.max_missing_states:
            fills = np.indices(tuple(ar)).reshape(len(cols), -1).T
            lw = np.zeros(len(fills))
        else:
            fills = rng.integers(0, ar, size=(int(est.n_mc), len(cols)))
            lw = np.full(len(fills), math.log(n_states / len(fills)))
        block = np.repeat(X[r][None, :], len(fills), axis=0)
        block[:, cols] = fills
        rows.append(block)
        groups.append(np.full(len(fills), r))
        logw.append(lw)
    Xc, groups, logw = np.concatenate(rows), np.concatenate(groups), np.concatenate(logw)
    uniq, _, inverse = compress_rows(Xc, return_inverse=True)
    lj = est._log_joints_rows(uniq, np.asarray(est._orders_), 200_000)[:, inverse]
    out = np.full((len(lj), len(X), len(est.classes_)), -np.inf)
    lj = lj + logw[None, :, None]
    for t in range(len(lj)):
        np.logaddexp.at(out[t], groups, lj[t])
    return out


def _old_monte_carlo_pairs(est, X: np.ndarray) -> int:
    """(row, order) pairs the former code estimated by Monte Carlo."""
    states = np.prod(np.where(X < 0, est.arities_[None, :], 1).astype(float), axis=1)
    return int((states > est.max_missing_states).sum()) * len(est._orders_)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(n_feat=st.integers(2, 5), seed=st.integers(0, 10_000), max_parents=st.integers(1, 3),
       prune=st.sampled_from([0.0, 1e-12]), candidates=st.sampled_from([None, 2]))
def test_exact_equals_brute_force_fixed_order(n_feat, seed, max_parents, prune, candidates):
    """Random order and missingness patterns, n <= 6 variables, every parent set or two
    candidate parents per node: the barren shortcut plus enumeration equals enumerating every
    missing value, to 1e-12."""
    X, y, ar = _data(n_feat, seed)
    rng = np.random.default_rng(seed + 1)
    order = list(rng.permutation(n_feat + 1))
    est = FixedOrderBMA(order=order, max_parents=max_parents, prune_eps=prune,
                        candidates=candidates).fit(X, y, arities=ar[:-1])
    rows = X[rng.integers(0, len(X), 24)].copy()
    rows[rng.random(rows.shape) < 0.5] = -1
    rows[0] = -1  # every finding unknown
    got = est.order_log_joints(rows)
    ref = _brute_force(est, rows)
    np.testing.assert_allclose(got, ref, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(est.predict_proba(rows),
                               np.exp(ref[0] - logsumexp(ref[0], axis=1, keepdims=True)),
                               rtol=0, atol=1e-12)
    assert not (est.missing_value_paths(rows, codes=True) == "monte_carlo").any()


def test_exact_equals_brute_force_over_sampled_orders():
    """Several orders, each with its own barren set, summed into one prediction."""
    X, y, ar = _data(5, 7, 200)
    est = OrderMCMCBMA(n_iter=800, burn_in=100, n_orders=6, max_parents=2,
                       random_state=0).fit(X, y, arities=ar[:-1])
    assert len({tuple(o) for o in est.sampled_orders_}) > 1
    rng = np.random.default_rng(0)
    rows = X[:40].copy()
    rows[rng.random(rows.shape) < 0.5] = -1
    ref = _brute_force(est, rows)
    np.testing.assert_allclose(est.order_log_joints(rows), ref, rtol=1e-12, atol=1e-12)
    paths = est.missing_value_paths(rows, codes=True)
    assert (paths == "barren").any() and (paths == "exact").any()
    # both routes taken: rows completed once for all orders, and order by order
    barren = est._barren(rows < 0, est._orders_)
    same = (barren == barren[:1]).all(axis=(0, 2))
    assert same[(rows < 0).any(axis=1)].any() and not same.all()


def test_barren_features_are_those_after_every_observed_one():
    """Class first, then the features in index order: trailing unknown findings are barren
    (their terms dropped); an unknown finding before an observed one is not."""
    X, y, ar = _data(4, 3)
    est = FixedOrderBMA(order=[4, 0, 1, 2, 3], max_parents=2).fit(X, y, arities=ar[:-1])
    rows = np.array([[1, 0, -1, -1], [-1, -1, -1, -1], [-1, 1, 0, 0], [0, 1, 0, 1]])
    b = est._barren(rows < 0, est._orders_)[0]
    assert b[0].tolist() == [False, False, True, True]
    assert b[1].all()
    assert not b[2, 0]  # feature 0 may be a parent of observed features 1-3
    assert est.missing_value_paths(rows, codes=True)[0].tolist() == [
        "barren", "barren", "exact", "complete"]


@settings(max_examples=80, deadline=None)
@given(seed=st.integers(0, 10_000), n=st.integers(2, 7), T=st.integers(1, 4),
       R=st.integers(1, 6))
def test_barren_kernel_equals_the_definition(seed, n, T, R):
    """``kernels.order_marginal.barren_features`` equals the definition read backwards along
    each order in plain Python (a missing feature is barren when every possible child is a
    barren feature; the class never is), on random orders, possible-parent relations
    consistent with the orders and missing patterns."""
    from bnma_core.kernels.order_marginal import barren_features

    rng = np.random.default_rng(seed)
    c = int(rng.integers(n))
    orders = np.array([rng.permutation(n) for _ in range(T)], dtype=np.int64)
    can = np.zeros((T, n, n), dtype=bool)
    for t in range(T):
        pos = np.empty(n, dtype=int)
        pos[orders[t]] = np.arange(n)
        later = pos[:, None] < pos[None, :]
        can[t] = later & (rng.random((n, n)) < 0.5)
    miss = rng.random((R, n)) < 0.6
    miss[:, c] = False
    got = barren_features(miss, orders, can, c)
    for t in range(T):
        for i in range(R):
            full = np.zeros(n, dtype=bool)
            for v in orders[t][::-1]:
                if v != c:
                    full[v] = miss[i, v] and full[np.nonzero(can[t, v])[0]].all()
            assert got[t, i].tolist() == full[:n].tolist()


@pytest.fixture(scope="module")
def wbc_case():
    """A short order-MCMC BMA on WBC (10 orders, at most 3 parents) and the 2^8 coalition rows
    of case 23 (bare_nuclei unknown; every subset of its 8 findings kept)."""
    ds = load_dataset(bundled_path("wbc.csv"))
    est = OrderMCMCBMA(n_iter=3000, burn_in=500, n_orders=10, max_parents=3,
                       random_state=0).fit(ds.X, ds.y, arities=ds.arities[ds.feature_indices])
    x = ds.X[23].astype(np.int64)
    obs = np.nonzero(x >= 0)[0]
    C = []
    for bits in itertools.product((False, True), repeat=len(obs)):
        r = np.full_like(x, -1)
        keep = obs[np.asarray(bits, dtype=bool)]
        r[keep] = x[keep]
        C.append(r)
    return est, np.asarray(C)


def test_rows_exact_before_are_unchanged(wbc_case):
    """Rows the former code summed out exactly (at most max_missing_states joint states) give
    the same log joints and probabilities to 1e-12."""
    est, C = wbc_case
    states = np.prod(np.where(C < 0, est.arities_[None, :], 1).astype(float), axis=1)
    exact = C[states <= est.max_missing_states]
    assert len(exact) == 37  # 1 + 8 + 28 rows with at most 3 unknown (arity 10)
    old = _old_order_log_joints(est, exact)
    new = est.order_log_joints(exact)
    np.testing.assert_allclose(new, old, rtol=1e-12, atol=1e-12)
    po = est._combine(old)
    np.testing.assert_allclose(est.predict_proba(exact),
                               np.exp(po - logsumexp(po, axis=1, keepdims=True)),
                               rtol=0, atol=1e-12)


def test_monte_carlo_used_strictly_less_often(wbc_case):
    """Per (row, order), the Monte Carlo fallback is taken only where the former code took it
    too, and strictly less often on the coalition rows."""
    est, C = wbc_case
    paths = est.missing_value_paths(C, codes=True)
    states = np.prod(np.where(C < 0, est.arities_[None, :], 1).astype(float), axis=1)
    old_mc = np.broadcast_to(states > est.max_missing_states, paths.shape)
    new_mc = paths == "monte_carlo"
    assert not (new_mc & ~old_mc).any()
    assert new_mc.sum() < _old_monte_carlo_pairs(est, C)


def test_monte_carlo_rows_are_seeded_and_close(wbc_case):
    """Rows beyond the limit (four unknown findings of ten states, not all barren): the same
    seed gives the same estimate, near the exact value computed with a raised limit."""
    est, C = wbc_case
    rows = C[(C < 0).sum(axis=1) == 5][:6]  # bare_nuclei and four findings unknown
    paths = est.missing_value_paths(rows, codes=True)
    assert (paths == "monte_carlo").any()
    a, b = est.predict_proba(rows), est.predict_proba(rows)
    np.testing.assert_array_equal(a, b)
    limit = est.max_missing_states
    try:
        est.max_missing_states = 10 ** 5
        assert not (est.missing_value_paths(rows, codes=True) == "monte_carlo").any()
        exact = est.predict_proba(rows)
    finally:
        est.max_missing_states = limit
    np.testing.assert_allclose(a, exact, atol=0.1)


def test_complete_rows_take_the_complete_path(wbc_case):
    """No missing value: the former path, bit for bit."""
    est, C = wbc_case
    full = C[-1:]
    assert (full >= 0).sum() == 8 and est.missing_value_paths(full, codes=True)[0, 0] == "exact"
    X = load_dataset(bundled_path("wbc.csv")).X
    X = X[(X >= 0).all(axis=1)][:50]
    np.testing.assert_array_equal(est.order_log_joints(X), _old_order_log_joints(est, X))


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 40), st.integers(1, 70), st.integers(0, 10**6))
def test_unique_rows_is_numpy_unique(n, p, seed):
    """The packed-integer ``_unique_rows`` gives np.unique(axis=0)'s rows, order and inverse
    (the order fixes the Monte Carlo draws)."""
    from bnma_core.classifiers.order_bma import _unique_rows

    m = np.random.default_rng(seed).random((n, p)) < 0.3
    m[: n // 2, : max(1, p // 3)] = False  # repeated rows
    pats, inv = _unique_rows(m)
    ref, rinv = np.unique(m, axis=0, return_inverse=True)
    np.testing.assert_array_equal(pats, ref)
    np.testing.assert_array_equal(inv, rinv.ravel())


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 10**6), st.integers(1, 40))
def test_completions_enumerate_every_combination_row_by_row(seed, n_rows):
    """``_completions``: a row whose summed-out cells have at most ``max_missing_states``
    joint states gets every combination once, the last summed-out column varying fastest
    (itertools.product's order), weight log 1; above, ``n_mc`` uniform draws weighted by
    states / n_mc."""
    rng = np.random.default_rng(seed)
    ar = np.array([2, 3, 4, 2, 5])
    X = np.column_stack([rng.integers(0, a, n_rows) for a in ar]).astype(np.int32)
    y = np.arange(n_rows) % 2
    X = np.vstack([X, X[:1]]) if n_rows == 1 else X
    y = np.array([0, 1]) if n_rows == 1 else y
    est = OrderMCMCBMA(n_iter=20, burn_in=5, n_orders=1, max_parents=1, random_state=0,
                       max_missing_states=24, n_mc=7).fit(X, y, arities=ar)
    X = X[:n_rows]
    sum_out = rng.random(X.shape) < 0.4
    Xm = np.where(sum_out, -1, X).astype(np.int32)
    rows, groups, logw = est._completions(Xm, sum_out, np.random.default_rng(1))
    for r in range(n_rows):
        got, lw = rows[groups == r], logw[groups == r]
        cols = np.flatnonzero(sum_out[r])
        states = int(np.prod(ar[cols]))
        if states <= 24:
            want = [list(v) for v in itertools.product(*[range(a) for a in ar[cols]])]
            assert got[:, cols].tolist() == (want if len(cols) else [[]])
            assert (lw == 0).all()
        else:
            assert len(got) == 7 and np.allclose(lw, math.log(states / 7))
            assert ((got[:, cols] >= 0) & (got[:, cols] < ar[cols])).all()
        keep = np.setdiff1d(np.arange(5), cols)
        assert (got[:, keep] == Xm[r, keep]).all()
