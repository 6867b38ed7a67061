"""Order methods beyond 64 variables (issue 15, section 1): the candidate regime with parent sets
indexed within the candidate set. Oracles: all variables as candidates equals the exact
(paper-faithful) regime to 1e-9; node terms, edge posteriors and candidate choice against
brute force on 70 variables; incremental chain state equals full recomputation; memory refused
before allocating; the order classifiers on HEPAR II (70 variables) with default settings."""

from itertools import combinations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.special import logsumexp

from bnma_core.classifiers.order_bma import FixedOrderBMA, OrderMCMCBMA
from bnma_core.data import DataError
from bnma_core.kernels.orders import candidate_local_masks, order_terms
from bnma_core.scores import log_structure_prior
from bnma_core.structure.orders import OrderMCMC
from bnma_core.structure.score_table import (
    build_score_table,
    compress_rows,
    node_average_log_ml,
    select_candidates,
)


def _chain_data(n, n_rows, seed=0, arity=2, noise=0.25):
    """Each variable copies one of the two before it (with noise): a sparse chain-like DAG."""
    rng = np.random.default_rng(seed)
    codes = rng.integers(0, arity, size=(n_rows, n))
    for v in range(1, n):
        src = codes[:, v - 1] if v < 2 or rng.random() < 0.5 else codes[:, v - 2]
        codes[:, v] = np.where(rng.random(n_rows) < noise, codes[:, v], src)
    return codes.astype(np.int32), np.full(n, arity, dtype=np.int64)


def _score(codes, ar, i, pa, l_prior_n):
    return (log_structure_prior(l_prior_n, len(pa), "hz")
            + node_average_log_ml(codes, i, list(pa), ar, "k2", 1.0))


def _brute_term(codes, ar, i, allowed, l):
    vals = [_score(codes, ar, i, pa, len(ar))
            for k in range(l + 1) for pa in combinations(sorted(allowed), k)]
    return logsumexp(vals)


def test_all_variables_as_candidates_equal_the_exact_regime():
    """K = n - 1: same order terms, class posteriors and edge posteriors as every parent set
    (prune_eps = 0), to 1e-9."""
    codes, ar = _chain_data(9, 300, seed=1, arity=3)
    codes[np.random.default_rng(2).random(codes.shape) < 0.03] = -1
    exact = build_score_table(codes, ar, max_parents=3, prune_eps=0.0)
    cand = build_score_table(codes, ar, max_parents=3, prune_eps=0.0, candidates=8)
    assert cand.regime == "candidates" and exact.regime == "full"
    rng = np.random.default_rng(0)
    for _ in range(20):
        order = rng.permutation(9)
        np.testing.assert_allclose(cand.order_terms(order), exact.order_terms(order),
                                   rtol=0, atol=1e-9)
        e1, c1 = cand.edge_probabilities(order, 8)
        e2, c2 = exact.edge_probabilities(order, 8)
        np.testing.assert_allclose(e1, e2, atol=1e-9)
        np.testing.assert_allclose(c1, c2, atol=1e-9)
    X, y = codes[:, :8], codes[:, 8]
    keep = y >= 0
    X, y = X[keep], y[keep]
    kw = dict(max_parents=3, prune_eps=0.0)
    p1 = FixedOrderBMA(candidates=8, **kw).fit(X, y).predict_proba(X[:50])
    p2 = FixedOrderBMA(candidates=None, **kw).fit(X, y).predict_proba(X[:50])
    np.testing.assert_allclose(p1, p2, atol=1e-9)
    m1 = OrderMCMCBMA(n_iter=400, burn_in=100, n_orders=5, candidates=8, random_state=3,
                      **kw).fit(X, y)
    m2 = OrderMCMCBMA(n_iter=400, burn_in=100, n_orders=5, candidates=None, random_state=3,
                      **kw).fit(X, y)
    np.testing.assert_array_equal(m1.sampled_orders_, m2.sampled_orders_)
    np.testing.assert_allclose(m1.predict_proba(X[:50]), m2.predict_proba(X[:50]), atol=1e-9)
    np.testing.assert_allclose(m1.edge_posterior_.values, m2.edge_posterior_.values, atol=1e-9)


def test_seventy_variables_node_terms_and_edges_brute_force():
    n = 70
    codes, ar = _chain_data(n, 120, seed=3)
    t = build_score_table(codes, ar, max_parents=2, prune_eps=0.0, candidates=4)
    assert t.regime == "candidates" and t.cand.shape == (n, 4)
    assert (np.diff(t.cand, axis=1) > 0).all()
    rng = np.random.default_rng(1)
    order = rng.permutation(n)
    pos = np.empty(n, dtype=int)
    pos[order] = np.arange(n)
    terms = t.order_terms(order)
    edge, _ = t.edge_probabilities(order, 0)
    for v in [order[0], order[5], order[40], order[-1], 67, 69]:
        allowed = [int(u) for u in t.cand[v] if pos[u] < pos[v]]
        assert terms[pos[v]] == pytest.approx(_brute_term(codes, ar, v, allowed, 2), abs=1e-9)
        # edge posterior given the order, by enumeration of the allowed parent sets
        sets = [pa for k in range(3) for pa in combinations(allowed, k)]
        w = np.array([_score(codes, ar, v, pa, n) for pa in sets])
        w = np.exp(w - w.max())
        w /= w.sum()
        for u in range(n):
            ref = sum(wi for wi, pa in zip(w, sets) if u in pa)
            assert edge[u, v] == pytest.approx(ref, abs=1e-9)
    # a Python-int bitmask of any width works for one node term
    v = int(order[-1])
    pred = sum(1 << int(u) for u in order[:-1])
    assert t.node_log_sum(v, pred) == pytest.approx(terms[-1], abs=1e-12)


def test_select_candidates_beyond_64_variables():
    n = 68
    codes, ar = _chain_data(n, 100, seed=4)
    cand = select_candidates(codes, ar, 3)
    assert cand.shape == (n, 3)
    for i in [0, 33, 66, 67]:
        base = _score(codes, ar, i, [], n)
        gains = {j: _score(codes, ar, i, [j], n) - base for j in range(n) if j != i}
        best = sorted(gains, key=lambda j: (-gains[j], j))[:3]
        assert sorted(best) == list(cand[i])


@pytest.mark.parametrize("move", ["swap", "mix", "relocate"])
def test_wide_chain_state_equals_full_recomputation(move):
    """On 90 variables the chain's positions, candidate-local masks and terms, updated
    incrementally, equal a full recomputation after thousands of moves, and the log score
    equals the sum of the terms."""
    n = 90
    codes, ar = _chain_data(n, 150, seed=5)
    t = build_score_table(codes, ar, max_parents=2, candidates=6)
    m = OrderMCMC(t, n_iter=12000, burn_in=0, n_orders=10, move=move, random_state=2)
    c = m.chains[0]
    for stop in range(3000, 12001, 3000):
        c.advance(stop)
        _, terms, local = order_terms(c.order, t.arrays())
        np.testing.assert_array_equal(c.local, local)
        np.testing.assert_array_equal(c.local, candidate_local_masks(c.order, t.cand, t.cbit))
        np.testing.assert_array_equal(c.pos[c.order], np.arange(n))
        np.testing.assert_array_equal(c.terms, terms)
        assert c.log_score == pytest.approx(terms.sum(), abs=1e-6)
    assert 0.01 < c.acceptance_rate < 1
    again = OrderMCMC(t, n_iter=12000, burn_in=0, n_orders=10, move=move, random_state=2)
    again.run()
    np.testing.assert_array_equal(again.chains[0].order, c.order)


def test_regimes_limits_and_memory_refusal():
    codes, ar = _chain_data(70, 50, seed=6)
    with pytest.raises(DataError, match="at most 64 variables.*candidates"):
        build_score_table(codes, ar, max_parents=2)
    auto = build_score_table(codes, ar, max_parents=2, candidates="auto")
    assert auto.regime == "candidates" and auto.cand.shape == (70, 16)
    small = build_score_table(codes[:, :10], ar[:10], max_parents=2, candidates="auto")
    assert small.regime == "full"
    with pytest.raises(ValueError, match=r"would need about .* GB"):
        build_score_table(codes, ar, max_parents=2, candidates=16, max_bytes=10_000_000)
    with pytest.raises(ValueError, match="Unknown candidates"):
        build_score_table(codes, ar, candidates="many")


def test_order_classifiers_on_hepar2_with_defaults():
    """HEPAR II (70 variables) works unchanged: the default regime is candidate-restricted,
    edges only from candidates, probabilities sum to one, same seed same result."""
    from bnma_core.network import load_network

    net = load_network("hepar2")
    codes = net.sample_codes(400, seed=0)
    c = net.index("Cirrhosis") if "Cirrhosis" in net.names else net.n_vars - 1
    X, y = np.delete(codes, c, axis=1), codes[:, c]
    kw = dict(n_iter=3000, burn_in=500, n_orders=4, max_parents=2, random_state=1)
    clf = OrderMCMCBMA(**kw).fit(X, y)
    assert clf.table_.regime == "candidates" and clf.table_.n_vars == 70
    p = clf.predict_proba(X[:40])
    np.testing.assert_allclose(p.sum(axis=1), 1.0)
    E = clf.edge_posterior_.values
    cand = clf.table_.cand
    outside = np.ones_like(E, dtype=bool)
    for v in range(70):
        outside[cand[v], v] = False
    assert E[outside].max() == 0.0 and E.max() > 0.5
    np.testing.assert_array_equal(OrderMCMCBMA(**kw).fit(X, y).sampled_orders_,
                                  clf.sampled_orders_)
    fo = FixedOrderBMA(max_parents=2).fit(X, y)
    assert fo.table_.regime == "candidates"
    assert fo.score(X, y) > 0.5


def test_counting_over_distinct_rows_equals_one_pass_counts():
    """Tables count the distinct rows with their multiplicities: scores equal the one-pass
    (row by row) scores of bnma_core.scores' definition to 1e-9, with missing values, in both
    regimes; the class log joints equal those counted from every training row."""
    rng = np.random.default_rng(7)
    base, ar = _chain_data(6, 40, seed=8, arity=3)
    base[rng.random(base.shape) < 0.05] = -1
    codes = base[rng.integers(0, 40, size=3000)]
    for cands in (None, 3):
        t = build_score_table(codes, ar, max_parents=2, prune_eps=0.0, candidates=cands)
        assert t.data_t.shape[1] <= 40 and t.weights.sum() == 3000
        for i in range(6):
            for k, s in enumerate(t.scores[i]):
                assert s == pytest.approx(_score(codes, ar, i, t.parents(i, k), 6), abs=1e-9)
        orders = np.array([rng.permutation(6) for _ in range(3)])
        test_t = np.ascontiguousarray(np.abs(codes[:50]).T)
        np.testing.assert_allclose(
            t.order_log_joints(orders, None, test_t, 5),
            t.order_log_joints(orders, np.ascontiguousarray(codes.T), test_t, 5), atol=1e-9)


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 300), st.integers(1, 9), st.integers(0, 2**32 - 1))
def test_compress_rows_equals_numpy_unique(n_rows, n_vars, seed):
    rng = np.random.default_rng(seed)
    ar = rng.integers(1, 40, size=n_vars)  # wide codes: several 64-bit words per row
    codes = (rng.integers(0, 3, size=(n_rows, n_vars)) * (ar // 3)).astype(np.int32)
    codes[rng.random(codes.shape) < 0.1] = -1
    uniq, w = compress_rows(codes)
    ref, cnt = np.unique(codes, axis=0, return_counts=True)
    assert {tuple(r): c for r, c in zip(uniq.tolist(), w)} == {
        tuple(r): c for r, c in zip(ref.tolist(), cnt)}
    assert len(uniq) == len(ref) and w.sum() == n_rows


def test_duplicate_test_rows_are_classified_once_with_the_same_answer():
    codes, ar = _chain_data(7, 300, seed=9, arity=3)
    X, y = codes[:, :6], codes[:, 6]
    clf = FixedOrderBMA(max_parents=2).fit(X, y)
    rng = np.random.default_rng(0)
    Xt = X[rng.integers(0, 20, size=200)].copy()
    Xt[::7, 2] = -1  # missing values: completions of duplicate rows are shared too
    got = clf.predict_proba(Xt)
    one_by_one = np.vstack([clf.predict_proba(Xt[i:i + 1]) for i in range(0, 200, 13)])
    np.testing.assert_allclose(got[::13], one_by_one, atol=1e-12)
    uniq, w, inv = compress_rows(Xt, return_inverse=True)
    np.testing.assert_array_equal(uniq[inv], Xt)
    assert w.sum() == 200 and len(uniq) <= 20 * 2
