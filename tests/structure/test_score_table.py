"""Score tables: every local score against bnma_core.scores (node-average marginal likelihood
with missing values), node terms against brute-force sums, the zeta-transformed candidate
table, pruning bounds, the inlined log-ML copies against their home, memory refusal, bad
input."""

import math
from itertools import combinations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.special import logsumexp

from bnma_core.data import DataError
from bnma_core.scores import (
    local_score,
    log_marginal_likelihood,
    log_structure_prior,
    mask_to_parents,
    parents_to_mask,
)
from bnma_core.structure.score_table import (
    build_score_table,
    estimate_table_bytes,
    n_parent_sets,
    node_average_log_ml,
    select_candidates,
)


def ref_score(codes, i, pa, ar, score="k2", ess=1.0, prior="hz"):
    """S(X_i; Z) as the tables define it: structure prior + node-average log-ML."""
    return (log_structure_prior(len(ar), len(pa), prior)
            + node_average_log_ml(codes, i, list(pa), ar, score, ess))


def _data(n_rows=150, seed=0, arities=(2, 3, 2, 4, 2, 3), missing=0.05):
    rng = np.random.default_rng(seed)
    ar = np.array(arities)
    codes = rng.integers(0, ar, size=(n_rows, len(ar)))
    codes[:, 1] = (codes[:, 0] + codes[:, 2] + (rng.random(n_rows) < 0.2)) % 3
    codes[:, 4] = np.where(rng.random(n_rows) < 0.8, codes[:, 1] % 2, codes[:, 4])
    codes[rng.random(codes.shape) < missing] = -1
    return codes.astype(np.int32), ar


@pytest.mark.parametrize("score,prior,n_rows", [("k2", "hz", 150), ("bdeu", "uniform", 150),
                                                ("k2", "uniform", 12), ("bdeu", "hz", 12)])
def test_every_local_score_matches_scores_module(score, prior, n_rows):
    # 12 rows: fewer rows than cells, the sparse counting path
    codes, ar = _data(n_rows=n_rows)
    t = build_score_table(codes, ar, max_parents=3, score=score, prior=prior, ess=2.0,
                          prune_eps=0.0)
    n = len(ar)
    assert t.n_sets == n_parent_sets(n - 1, 3) == 1 + 5 + 10 + 10
    for i in range(n):
        masks = sorted(int(m) for m in t.masks[i])
        expect = sorted(parents_to_mask(pa) for k in range(4)
                        for pa in combinations([v for v in range(n) if v != i], k))
        assert masks == expect
        assert (np.diff(t.scores[i]) <= 0).all()
        for m, s in zip(t.masks[i], t.scores[i]):
            ref = ref_score(codes, i, mask_to_parents(int(m)), ar, score, 2.0, prior)
            assert s == pytest.approx(ref, abs=1e-9)


def _brute_node(codes, ar, i, pred, l, score="k2", prior="hz"):
    vals = [ref_score(codes, i, list(pa), ar, score, 1.0, prior)
            for k in range(l + 1) for pa in combinations(pred, k)]
    return logsumexp(vals)


def test_node_terms_and_order_score_brute_force():
    codes, ar = _data(seed=1)
    t = build_score_table(codes, ar, max_parents=2, prune_eps=0.0)
    rng = np.random.default_rng(0)
    for _ in range(5):
        order = rng.permutation(len(ar))
        ref = [_brute_node(codes, ar, v, list(order[:p]), 2) for p, v in enumerate(order)]
        np.testing.assert_allclose(t.order_terms(order), ref, atol=1e-9)
        assert t.order_log_score(order) == pytest.approx(sum(ref), abs=1e-9)


def test_pruning_bound_against_unpruned():
    # many rows: local scores spread over hundreds of nats, so pruning really drops sets
    codes, ar = _data(n_rows=3000, seed=2, missing=0.0)
    exact = build_score_table(codes, ar, max_parents=3, prune_eps=0.0)
    pruned = build_score_table(codes, ar, max_parents=3, prune_eps=1e-12)
    assert (pruned.limits < exact.limits).any()
    rng = np.random.default_rng(1)
    for _ in range(200):
        order = rng.permutation(len(ar))
        a, b = exact.order_terms(order), pruned.order_terms(order)
        assert (b <= a + 1e-12).all()
        np.testing.assert_allclose(a, b, atol=1e-12, rtol=0)
    loose = build_score_table(codes, ar, max_parents=3, prune_eps=1e-3)
    for _ in range(50):
        order = rng.permutation(len(ar))
        d = exact.order_terms(order) - loose.order_terms(order)
        assert (d >= -1e-12).all() and (d <= math.log1p(1e-3) + 1e-12).all()


def test_candidate_table_is_subset_sum():
    codes, ar = _data(seed=3)
    n = len(ar)
    t = build_score_table(codes, ar, max_parents=2, candidates=3, prune_eps=0.0)
    assert t.regime == "candidates" and t.cand.shape == (n, 3) and t.logsum.shape == (n, 8)
    for i in range(n):
        assert i not in t.cand[i]
        for U in range(8):
            sub = [int(t.cand[i, b]) for b in range(3) if U >> b & 1]
            assert t.logsum[i, U] == pytest.approx(_brute_node(codes, ar, i, sub, 2), abs=1e-9)
    rng = np.random.default_rng(0)
    for _ in range(5):
        order = rng.permutation(n)
        ref = [_brute_node(codes, ar, v, [u for u in order[:p] if u in t.cand[v]], 2)
               for p, v in enumerate(order)]
        np.testing.assert_allclose(t.order_terms(order), ref, atol=1e-9)
    # candidates by score gain: the top single-parent gains
    cand = select_candidates(codes, ar, 2)
    for i in range(n):
        gains = {j: ref_score(codes, i, [j], ar) for j in range(n) if j != i}
        best = sorted(gains, key=lambda j: (-gains[j], j))[:2]
        assert sorted(best) == list(cand[i])
    explicit = build_score_table(codes, ar, max_parents=2, candidates=t.cand, prune_eps=0.0)
    np.testing.assert_allclose(explicit.logsum, t.logsum)


def test_memory_refusal_and_bad_input():
    codes, ar = _data()
    need = estimate_table_bytes(len(ar), len(codes), ar, 3)
    with pytest.raises(ValueError, match="would need about"):
        build_score_table(codes, ar, max_parents=3, max_bytes=need - 1)
    with pytest.raises(ValueError, match="Unknown score"):
        build_score_table(codes, ar, score="bic")
    with pytest.raises(ValueError, match="Unknown structure prior"):
        build_score_table(codes, ar, prior="flat")
    with pytest.raises(ValueError, match="one number of states"):
        build_score_table(codes, ar[:-1])
    with pytest.raises(DataError, match="at most 64"):
        build_score_table(np.zeros((5, 65), dtype=int), np.full(65, 2))
    with pytest.raises(DataError, match="larger than"):
        build_score_table(codes, np.ones(len(ar), dtype=int))
    with pytest.raises(ValueError, match="1..16"):
        build_score_table(codes, ar, candidates=17)
    with pytest.raises(ValueError, match="distinct other"):
        build_score_table(codes, ar, candidates=np.zeros((len(ar), 2), dtype=int))
    with pytest.raises(ValueError, match="prune_eps"):
        build_score_table(codes, ar, prune_eps=-1)


@pytest.mark.parametrize("score", ["k2", "bdeu"])
def test_node_average_score_definition(score):
    """Complete data: the table's scores are the plain local scores to 1e-12. Missing values:
    log-ML of the complete rows + (N - n) x their average fitted log-likelihood, computed
    independently by dropping rows (full and candidate regimes)."""
    codes, ar = _data(missing=0.0)
    t = build_score_table(codes, ar, max_parents=2, score=score, ess=3.0, prune_eps=0.0)
    for i in range(len(ar)):
        for m, s in zip(t.masks[i], t.scores[i]):
            pa = mask_to_parents(int(m))
            assert s == pytest.approx(local_score(codes, i, pa, ar, score, 3.0), abs=1e-12)
    codes, ar = _data(missing=0.1, seed=5)
    n = len(codes)
    for i, pa in [(1, [0]), (4, [1, 3]), (0, []), (3, [0, 1, 2])]:
        rows = (codes[:, [i] + pa] >= 0).all(axis=1)
        sub = codes[rows]
        ml = log_marginal_likelihood(sub, i, pa, ar, score, 3.0)
        q, r = int(np.prod(ar[pa])), int(ar[i])
        a = 1.0 if score == "k2" else 3.0 / (q * r)
        counts = np.zeros((q, r))
        for row in sub:
            j = int(np.ravel_multi_index(tuple(row[pa][::-1]), tuple(ar[pa][::-1]))) if pa else 0
            counts[j, row[i]] += 1
        theta = (counts + a) / (counts.sum(axis=1, keepdims=True) + a * r)
        fit = float((counts * np.log(theta)).sum())
        expect = ml + (n - rows.sum()) * fit / rows.sum()
        assert node_average_log_ml(codes, i, pa, ar, score, 3.0) == pytest.approx(expect,
                                                                                   abs=1e-9)
    for cand in [None, 3]:
        t = build_score_table(codes, ar, max_parents=2, score=score, ess=3.0, prune_eps=0.0,
                              candidates=cand)
        for i in range(len(ar)):
            for k, s in enumerate(t.scores[i]):
                pa = t.parents(i, k)
                assert s == pytest.approx(ref_score(codes, i, pa, ar, score, 3.0, "hz"),
                                          abs=1e-9)


def test_missing_values_do_not_favour_incomplete_parents():
    """Issue 14: removing 10 % of one variable's values must not make it a better parent.
    The raw available-case log-ML gains tens of nats per lost row set; the node-average one
    stays within a few nats of the complete-data difference."""
    rng = np.random.default_rng(0)
    n_rows = 600
    a = rng.integers(0, 3, n_rows)
    b = np.where(rng.random(n_rows) < 0.7, a, rng.integers(0, 3, n_rows))
    c = np.where(rng.random(n_rows) < 0.7, a, rng.integers(0, 3, n_rows))
    codes = np.column_stack([a, b, c]).astype(np.int32)
    ar = np.array([3, 3, 3])
    holed = codes.copy()
    holed[rng.random(n_rows) < 0.1, 2] = -1
    full = build_score_table(codes, ar, max_parents=1, prune_eps=0.0)
    miss = build_score_table(holed, ar, max_parents=1, prune_eps=0.0)

    def gap(t):  # S(b | {c}) - S(b | {a}): how much better c is than a as b's parent
        sc = dict(zip(t.masks[1].tolist(), t.scores[1]))
        return sc[1 << 2] - sc[1 << 0]

    raw = (local_score(holed, 1, [2], ar) - local_score(holed, 1, [0], ar))
    assert gap(full) < -50  # a is the true parent
    assert raw - gap(full) > 20  # the bias the old score had
    assert abs(gap(miss) - gap(full)) < 10


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_inlined_log_ml_copies_equal_home(data):
    """joint_family_log_ml (dense and sparse) reads a family from a joint count table; it must
    equal counting.log_ml_uniform_alpha on the same counts to 1e-12 (K2 and BDeu)."""
    from bnma_core.kernels.counting import log_ml_uniform_alpha, rising_cache
    from bnma_core.kernels.orders import (
        joint_family_log_ml,
        log_factorials,
    )

    ar = np.array(data.draw(st.lists(st.integers(1, 4), min_size=1, max_size=3)))
    size = int(np.prod(ar))
    cells = data.draw(st.lists(st.integers(0, 30), min_size=size, max_size=size))
    table = np.array(cells, dtype=np.int64)
    s = data.draw(st.integers(0, len(ar) - 1))
    kind = data.draw(st.sampled_from([0, 1]))
    ess = data.draw(st.floats(0.1, 20.0))
    stride = int(np.prod(ar[:s]))
    r = int(ar[s])
    # (q, r) counts of the child s given the other variables, first variable fastest
    counts = np.moveaxis(table.reshape(ar[::-1]), len(ar) - 1 - s, -1).reshape(-1, r)
    q = counts.shape[0]
    ref = log_ml_uniform_alpha(counts.astype(float), 1.0 if kind == 0 else ess / (r * q))
    lfact = log_factorials(int(table.sum()) + r + 2)
    dense = joint_family_log_ml(table, table, 0, size, stride, r, False, kind, ess, lfact,
                                np.zeros(size, dtype=np.int64), np.empty(size, dtype=np.int64),
                                rising_cache(4))
    touched = np.nonzero(table)[0].astype(np.int64)
    nj = np.zeros(size, dtype=np.int64)
    sparse = joint_family_log_ml(table, touched, len(touched), size, stride, r, True, kind, ess,
                                 lfact, nj, np.empty(size, dtype=np.int64), rising_cache(4))
    assert dense == pytest.approx(ref, abs=1e-12, rel=1e-13)
    assert sparse == pytest.approx(ref, abs=1e-12, rel=1e-13)
    assert not nj.any()


def test_shared_priors_sum_their_node_terms_over_subsets_on_first_order_score():
    """In the candidate regime, the tables ``shared_counting`` scores for the priors after the
    first keep their node terms un-summed until an order is scored (``logsum_pending``):
    prediction windows and edge probabilities never need them (``window_arrays``), and the
    first ``arrays()`` gives exactly the separately built table's sums."""
    from bnma_core.structure.score_table import shared_counting

    rng = np.random.default_rng(5)
    codes = rng.integers(0, 3, size=(150, 70)).astype(np.int32)
    codes[:, 1] = (codes[:, 0] + rng.integers(0, 2, 150)) % 3
    ar = np.full(70, 3)
    priors = [("k2", 1.0), ("bdeu", 1.0), ("bdeu", 20.0)]
    with shared_counting(priors):
        tables = [build_score_table(codes, ar, 2, s, "hz", e, candidates=6) for s, e in priors]
    assert [t.logsum_pending for t in tables] == [False, True, True]
    orders = np.stack([rng.permutation(70) for _ in range(3)])
    for (s, e), tab in zip(priors, tables, strict=True):
        alone = build_score_table(codes, ar, 2, s, "hz", e,
                                  candidates=tab.cand)
        np.testing.assert_array_equal(tab.possible_parents(orders),
                                      alone.possible_parents(orders))
        assert tab.logsum_pending == ((s, e) != priors[0])  # windows read: still pending
        np.testing.assert_array_equal(tab.arrays().logsum, alone.logsum)
        assert not tab.logsum_pending
        assert tab.order_log_score(orders[0]) == alone.order_log_score(orders[0])


def test_rows_compressed_once_inside_shared_counting():
    """Inside ``shared_counting`` a repeated ``compress_rows`` of the same rows returns the kept
    (read-only) arrays, equal to a fresh computation; outside, a fresh writable result."""
    from bnma_core.structure.score_table import compress_rows, shared_counting

    rng = np.random.default_rng(0)
    codes = rng.integers(-1, 3, size=(300, 5)).astype(np.int32)
    fresh = compress_rows(codes, return_inverse=True)
    with shared_counting([("k2", 1.0)]):
        a = compress_rows(codes, return_inverse=True)
        b = compress_rows(codes.copy())
        other = compress_rows(codes[:100])
    assert b[0] is a[0] and b[1] is a[1] and not a[0].flags.writeable
    for x, y in zip(a, fresh, strict=True):
        np.testing.assert_array_equal(x, y)
    np.testing.assert_array_equal(other[0], compress_rows(codes[:100])[0])
    assert compress_rows(codes)[0].flags.writeable
