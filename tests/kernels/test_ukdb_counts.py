"""UKDB's one-pass count tables (``kernels.ukdb_counts``) equal the per-table counts they
replace (:func:`bnma_core.scores.joint_counts`, :func:`bnma_core.scores.family_counts`)
exactly, with missing values (available cases), over random data (Hypothesis); so do the
counts read from the value bit sets; the leave-one-out CMI downdate equals recounting without
the row; the structure kernel equals
:func:`bnma_core.classifiers.ukdb.build_k_dependence_structure`."""

import itertools
import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from numba import njit

from bnma_core.data import CODE_DTYPE
from bnma_core.kernels.counting import parent_strides
from bnma_core.kernels.ukdb_counts import (
    cmi_downdates,
    k_dependence_structures,
    pair_class_counts,
    popcount,
    state_bitsets,
    subset_class_counts,
)
from bnma_core.scores import (
    family_counts,
    joint_counts,
    pairwise_conditional_mutual_information,
)


def _data(seed, n, arities, m, missing):
    rng = np.random.default_rng(seed)
    X = np.column_stack([rng.integers(0, r, n) for r in arities]) if n else \
        np.zeros((0, len(arities)), dtype=np.int64)
    X[rng.random(X.shape) < missing] = -1
    y = rng.integers(0, m, n)
    return np.ascontiguousarray(np.column_stack([X, y]), dtype=CODE_DTYPE)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**31), n=st.integers(0, 60),
       arities=st.lists(st.integers(1, 4), min_size=1, max_size=5), m=st.integers(2, 3),
       missing=st.sampled_from([0.0, 0.3]))
def test_pair_tables_equal_joint_counts(seed, n, arities, m, missing):
    data = _data(seed, n, arities, m, missing)
    p = len(arities)
    ar = np.asarray(arities, dtype=np.int64)
    ar_c = np.append(ar, m)
    single, flat, off, rows, cols, totals = pair_class_counts(data, ar, m)
    assert flat.size == sum(arities[i] * arities[j] * m for i, j in
                            itertools.combinations(range(p), 2))
    for i in range(p):
        np.testing.assert_array_equal(single[i, :ar[i]], joint_counts(data, [i, p], ar_c))
        assert not single[i, ar[i]:].any()
        for j in range(i + 1, p):
            t = joint_counts(data, [i, j, p], ar_c)
            np.testing.assert_array_equal(flat[off[i, j]:off[i, j] + t.size], t.ravel())
            np.testing.assert_array_equal(rows[i, j, :ar[i]], t.sum(axis=1))
            np.testing.assert_array_equal(cols[i, j, :ar[j]], t.sum(axis=0))
            np.testing.assert_array_equal(totals[i, j], t.sum(axis=(0, 1)))


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**31), n=st.integers(0, 60),
       arities=st.lists(st.integers(1, 4), min_size=1, max_size=5), m=st.integers(2, 3),
       missing=st.sampled_from([0.0, 0.3]), width=st.integers(0, 3))
def test_subset_tables_equal_family_counts(seed, n, arities, m, missing, width):
    data = _data(seed, n, arities, m, missing)
    p = len(arities)
    ar_c = np.append(np.asarray(arities, dtype=np.int64), m)
    subsets = [s for w in range(min(width, p) + 1) for s in itertools.combinations(range(p), w)]
    members = np.zeros((len(subsets), max(1, width)), dtype=np.int64)
    sizes = np.asarray([len(s) for s in subsets], dtype=np.int64)
    for t, s in enumerate(subsets):
        members[t, :len(s)] = s
    flat, offs, strides = subset_class_counts(data, members, sizes, ar_c)
    for t, s in enumerate(subsets):
        vs = np.asarray(s, dtype=np.int64)
        ref = family_counts(data, p, vs, ar_c)
        np.testing.assert_array_equal(flat[offs[t]:offs[t + 1]].reshape(-1, m), ref)
        np.testing.assert_array_equal(strides[t, :len(s)], parent_strides(vs, ar_c))


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**31), n=st.integers(2, 30),
       arities=st.lists(st.integers(1, 4), min_size=2, max_size=5), m=st.integers(2, 3),
       missing=st.sampled_from([0.0, 0.3]), smoothing=st.sampled_from([0.0, 0.5, 1.0]),
       base=st.sampled_from([2.0, math.e]))
def test_cmi_downdates_equal_recounting_without_the_row(seed, n, arities, m, missing,
                                                        smoothing, base):
    """The O(1) downdate of every pair's CMI (entropy form) equals
    :func:`bnma_core.scores.pairwise_conditional_mutual_information` on the rows without row r,
    for every r, to 1e-12 (empty tables and cells emptied by the removal included)."""
    data = _data(seed, n, arities, m, missing)
    p = len(arities)
    ar = np.asarray(arities, dtype=np.int64)
    X, y = data[:, :p], data[:, p]
    cmi = pairwise_conditional_mutual_information(X, y, ar, m, None, smoothing, base)
    _, flat, off, rows, cols, totals = pair_class_counts(data, ar, m)
    got = cmi_downdates(data, cmi, flat, off, rows, cols, totals, ar, smoothing, math.log(base))
    for r in range(n):
        keep = np.arange(n) != r
        ref = pairwise_conditional_mutual_information(X[keep], y[keep], ar, m, None, smoothing,
                                                      base)
        np.testing.assert_allclose(got[r], ref, rtol=1e-12, atol=1e-12)


@njit
def _popcounts(words):
    s = 0
    for w in words:
        s += popcount(w)
    return s


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**31), n=st.integers(0, 150),
       arities=st.lists(st.integers(1, 4), min_size=1, max_size=5), m=st.integers(2, 3),
       missing=st.sampled_from([0.0, 0.3]), width=st.integers(0, 3))
def test_bitset_counts_equal_subset_tables(seed, n, arities, m, missing, width):
    """Issue 34: n(x_S, c) as the bits of the AND of the members' value sets and the class's
    (:func:`state_bitsets`, what UKDB's family kernel counts with) equals the subset tables
    for every configuration (more than 64 rows: several words), and the observed sets are
    the rows where each attribute is known."""
    data = _data(seed, n, arities, m, missing)
    p = len(arities)
    ar_c = np.append(np.asarray(arities, dtype=np.int64), m)
    bits, off, observed = state_bitsets(data, ar_c)
    assert bits.shape == (sum(arities) + m, (n + 63) // 64)

    def count(words):
        assert _popcounts(words) == sum(int(w).bit_count() for w in words)
        return _popcounts(words)

    def row_set(words):
        return {w * 64 + b for w in range(len(words)) for b in range(64)
                if (int(words[w]) >> b) & 1}

    for i in range(p):
        assert row_set(observed[i]) == set(np.flatnonzero(data[:, i] >= 0).tolist())
    for s_ in (s_ for w in range(min(width, p) + 1) for s_ in itertools.combinations(range(p), w)):
        vs = np.asarray(s_, dtype=np.int64)
        ref = family_counts(data, p, vs, ar_c)                       # (q_S, m)
        st_ = parent_strides(vs, ar_c)
        for cfg in itertools.product(*(range(ar_c[v]) for v in s_)):
            j = int(np.dot(cfg, st_)) if len(s_) else 0
            for c in range(m):
                mask = bits[off[p] + c].copy()
                for v, x in zip(s_, cfg, strict=True):
                    mask &= bits[off[v] + x]
                assert count(mask) == ref[j, c]


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**31), p=st.integers(1, 7), k=st.integers(0, 3),
       levels=st.integers(1, 4), missing=st.sampled_from([0.0, 0.3]),
       min_dependence=st.sampled_from([None, 0.0, 0.3]))
def test_structure_kernel_equals_build_k_dependence_structure(seed, p, k, levels, missing,
                                                              min_dependence):
    """Issue 34: the per-row construction kernel (:func:`k_dependence_structures`, used by
    UKDB_P's batch path and the leave-one-out structures) gives the ranking, X_p and parents
    of :func:`bnma_core.classifiers.ukdb.build_k_dependence_structure` on symmetric
    matrices with many exact ties (few distinct values, some perturbed below the rounding)
    and missing attributes left out."""
    from bnma_core.classifiers.ukdb import TIE_DECIMALS, build_k_dependence_structure

    rng = np.random.default_rng(seed)
    n = 6
    dep = rng.integers(0, levels, (n, p, p)) / levels - 0.2
    dep = dep + np.triu(rng.choice([0.0, 1e-14, -1e-14], (n, p, p)), 1)
    dep = np.triu(dep, 1)
    dep = dep + dep.transpose(0, 2, 1)
    obs = rng.random((n, p)) >= missing
    md = 0.0 if min_dependence is None else min_dependence
    order, n_obs, parents = k_dependence_structures(np.ascontiguousarray(dep), obs, k, md,
                                                    min_dependence is not None,
                                                    10.0 ** TIE_DECIMALS)
    for r in range(n):
        cand = np.flatnonzero(obs[r]).tolist()
        d = np.where(obs[r][:, None] & obs[r][None, :], dep[r], 0.0)
        ref = build_k_dependence_structure(d, k, candidates=cand,
                                           min_dependence=min_dependence)
        assert n_obs[r] == len(cand)
        assert order[r, :n_obs[r]].tolist() == ref.order
        assert sorted(order[r, n_obs[r]:].tolist()) == order[r, n_obs[r]:].tolist()
        for i in range(p):
            got = parents[r, i][parents[r, i] >= 0].tolist()
            assert got == ref.parents.get(i, [])
