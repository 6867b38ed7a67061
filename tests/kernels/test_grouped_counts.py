"""Paper-regime score tables counted over suffix groups (issue 15, many rows): the same parent
sets and local scores as one counting pass over all rows per variable set
(``kernels.orders.build_full_table``, the previous kernel, kept as the oracle), with missing
values, multiplicities, K2 and BDeu; suffix groups against their definition."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bnma_core.kernels.grouped_counts import build_full_table_grouped, suffix_groups
from bnma_core.kernels.orders import build_full_table
from bnma_core.structure.score_table import (
    _log_priors,
    build_score_table,
    compress_rows,
    n_parent_sets,
    suffix_sort,
)


def _one_pass(codes, ar, max_parents, score, ess):
    uniq, w = compress_rows(codes)
    n = codes.shape[1]
    m = n_parent_sets(n - 1, max_parents)
    cells = int(np.prod(np.sort(ar)[::-1][: max_parents + 1]))
    return build_full_table(np.ascontiguousarray(uniq.T), w, ar, max_parents,
                            _log_priors(n, max_parents, "hz"), int(score == "bdeu"), ess, m,
                            cells)


def _as_dicts(masks, scores):
    return [dict(zip(masks[i].tolist(), scores[i].tolist())) for i in range(masks.shape[0])]


@settings(max_examples=40, deadline=None)
@given(n=st.integers(2, 7), n_rows=st.integers(1, 120), seed=st.integers(0, 10_000),
       max_parents=st.integers(0, 3), missing=st.sampled_from([0.0, 0.15]),
       score=st.sampled_from(["k2", "bdeu"]))
def test_grouped_table_equals_one_pass(n, n_rows, seed, max_parents, missing, score):
    rng = np.random.default_rng(seed)
    ar = rng.integers(1, 4, n).astype(np.int64)
    codes = (rng.random((n_rows, n)) * ar).astype(np.int32)
    codes[rng.random(codes.shape) < missing] = -1
    codes = np.vstack([codes, codes[: n_rows // 2]])  # repeated rows: multiplicities > 1
    l = min(max_parents, n - 1)
    m1, s1 = _one_pass(codes, ar, l, score, 1.5)
    t = build_score_table(codes, ar, l, score=score, ess=1.5, prune_eps=0.0)
    for d1, d2 in zip(_as_dicts(m1, s1), _as_dicts(t.masks, t.scores), strict=True):
        assert d1.keys() == d2.keys()
        for k, v in d1.items():
            assert d2[k] == pytest.approx(v, abs=1e-9)


def test_grouped_kernel_same_order_as_one_pass(alarm):
    """Without relabelling, the kernel fills each node's sets in the one-pass order."""
    codes = alarm.sample_codes(3000, seed=1)
    ar = alarm.arities.astype(np.int64)
    m1, s1 = _one_pass(codes, ar, 2, "k2", 1.0)
    uniq, w = compress_rows(codes)
    d, w = suffix_sort(np.ascontiguousarray(uniq.T).astype(np.int8), w)
    m2, s2 = build_full_table_grouped(d, w, ar, 2, _log_priors(len(ar), 2, "hz"), 0, 1.0,
                                      m1.shape[1], int(np.prod(np.sort(ar)[::-1][:3])))
    np.testing.assert_array_equal(m1, m2)
    np.testing.assert_allclose(s1, s2, rtol=0, atol=1e-9)


@settings(max_examples=30, deadline=None)
@given(n=st.integers(1, 6), n_rows=st.integers(1, 60), seed=st.integers(0, 10_000))
def test_suffix_groups_definition(n, n_rows, seed):
    rng = np.random.default_rng(seed)
    codes = rng.integers(-1, 3, (n_rows, n)).astype(np.int32)
    uniq, w = compress_rows(codes)
    d, _ = suffix_sort(np.ascontiguousarray(uniq.T), w)
    gid = suffix_groups(d)
    for c in range(n):
        for r in range(1, d.shape[1]):
            same = bool((d[c + 1:, r] == d[c + 1:, r - 1]).all())
            assert (gid[c, r] == gid[c, r - 1]) == same
        # contiguous: each group id appears in one run
        assert (np.diff(gid[c]) >= 0).all()


@pytest.mark.parametrize("score", ["k2", "bdeu"])
@pytest.mark.parametrize("missing", [0.0, 0.1])
def test_sparse_leaf_tables_score_as_one_pass(score, missing):
    """Issue 34: the largest sets (the leaves) are scored over their non-zero cells only when
    fewer than half of the cells are non-zero (many-valued attributes, few rows, as WBC);
    the scores stay those of the one-pass oracle."""
    rng = np.random.default_rng(7)
    ar = np.array([10, 9, 10, 8, 10, 2], dtype=np.int64)
    codes = (rng.random((80, len(ar))) * ar).astype(np.int32)
    codes[:, 1] = (codes[:, 0] + rng.integers(0, 2, 80)) % ar[1]
    codes[rng.random(codes.shape) < missing] = -1
    m1, s1 = _one_pass(codes, ar, 3, score, 1.0)
    t = build_score_table(codes, ar, 3, score=score, ess=1.0, prune_eps=0.0)
    for d1, d2 in zip(_as_dicts(m1, s1), _as_dicts(t.masks, t.scores), strict=True):
        assert d1.keys() == d2.keys()
        for k, v in d1.items():
            assert d2[k] == pytest.approx(v, abs=1e-9)


@pytest.mark.parametrize("missing", [0.0, 0.1])
def test_shared_counting_gives_the_separate_tables(missing):
    """Issue 34: inside ``shared_counting`` the three Dirichlet priors of ``stack`` are scored
    from one counting pass; each table equals its separate build exactly, whatever prior
    is asked first, and a prior not listed is built on its own."""
    from bnma_core.structure.score_table import shared_counting

    rng = np.random.default_rng(3)
    ar = np.array([4, 3, 5, 2, 3, 2], dtype=np.int64)
    codes = (rng.random((150, len(ar))) * ar).astype(np.int32)
    codes[:, 1] = (codes[:, 0] + rng.integers(0, 2, 150)) % ar[1]
    codes[rng.random(codes.shape) < missing] = -1
    priors = [("k2", 1.0), ("bdeu", 1.0), ("bdeu", 20.0)]
    sep = {q: build_score_table(codes, ar, 2, score=q[0], ess=q[1]) for q in priors}
    for first in priors:
        with shared_counting(priors):
            got = {q: build_score_table(codes, ar, 2, score=q[0], ess=q[1])
                   for q in [first] + [q for q in priors if q != first]}
            other = build_score_table(codes, ar, 2, score="bdeu", ess=5.0)
        for q in priors:
            assert (got[q].score, got[q].ess) == q
            np.testing.assert_array_equal(got[q].masks, sep[q].masks)
            np.testing.assert_array_equal(got[q].limits, sep[q].limits)
            np.testing.assert_array_equal(got[q].scores, sep[q].scores)
        ref = build_score_table(codes, ar, 2, score="bdeu", ess=5.0)
        np.testing.assert_array_equal(other.scores, ref.scores)
