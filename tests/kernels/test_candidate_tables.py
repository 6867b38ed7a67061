"""Candidate-regime score tables for several Dirichlet priors from one counting pass (issue 34):
``kernels.orders.build_candidate_tables`` equals one ``build_candidate_table`` per prior and
each family counted on its own (``family_local_ml``), with
the priors' candidates equal on some nodes and different on others, and ``shared_counting``
builds the candidate-regime tables of ``stack``'s three priors with one kernel call, each equal
to its separate build with the candidates selected under the first listed prior."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bnma_core.kernels.order_dp import log_zeta_subsets
from bnma_core.kernels.orders import (
    _zeta_log,
    build_candidate_table,
    build_candidate_tables,
    family_local_ml,
)
from bnma_core.structure import score_table as st_mod
from bnma_core.structure.score_table import (
    _log_priors,
    build_score_table,
    compress_rows,
    n_parent_sets,
    shared_counting,
)

PRIORS = [("k2", 1.0), ("bdeu", 1.0), ("bdeu", 20.0)]


def _codes(n_rows, n, seed, missing):
    rng = np.random.default_rng(seed)
    ar = rng.integers(2, 5, n).astype(np.int64)
    codes = (rng.random((n_rows, n)) * ar).astype(np.int32)
    for v in range(1, n):  # some dependence, so that candidates differ in strength
        codes[:, v] = np.where(rng.random(n_rows) < 0.5, codes[:, v - 1] % ar[v], codes[:, v])
    codes[rng.random(codes.shape) < missing] = -1
    return codes, ar


@settings(max_examples=25, deadline=None)
@given(n=st.integers(2, 7), n_rows=st.integers(1, 80), k=st.integers(0, 4),
       max_parents=st.integers(0, 3), missing=st.sampled_from([0.0, 0.15]),
       seed=st.integers(0, 10_000))
def test_tables_of_several_priors_equal_separate_builds(n, n_rows, k, max_parents, missing,
                                                        seed):
    codes, ar = _codes(n_rows, n, seed, missing)
    uniq, w = compress_rows(codes)
    data_t = np.ascontiguousarray(uniq.T)
    k = min(k, n - 1)
    l_eff = min(max_parents, n - 1)
    rng = np.random.default_rng(seed + 1)
    base = np.array([np.sort(rng.choice([u for u in range(n) if u != i], k, replace=False))
                     for i in range(n)], dtype=np.int64).reshape(n, k)
    cands = np.stack([base, base.copy(), base.copy()])
    for i in range(n):  # prior 2 gets other candidates on some nodes
        if rng.random() < 0.5 and k < n - 1:
            cands[2, i] = np.sort(rng.choice([u for u in range(n) if u != i], k, replace=False))
    lp = _log_priors(n, l_eff, "hz")
    m = n_parent_sets(k, l_eff)
    kinds = np.array([0, 1, 1], dtype=np.int64)
    esses = np.array([1.0, 1.0, 20.0])
    masks, scores, logsum = build_candidate_tables(data_t, w.astype(float), ar, cands, l_eff, lp,
                                                   kinds, esses, m, np.ones(3, dtype=bool))
    for p in range(3):  # oracle: each family counted and scored on its own (family_local_ml)
        for i in range(n):
            for j, g in enumerate(masks[i]):
                pa = np.array([cands[p, i, b] for b in range(k) if int(g) >> b & 1], np.int64)
                ref = lp[len(pa)] + family_local_ml(uniq, w.astype(float), ar, i, pa,
                                                    int(kinds[p]), float(esses[p]))
                assert scores[p, i, j] == ref
        m1, s1, z1 = build_candidate_table(data_t, w.astype(float), ar, cands[p], l_eff, lp,
                                           int(kinds[p]), float(esses[p]), m)
        np.testing.assert_array_equal(masks, m1)
        np.testing.assert_array_equal(scores[p], s1)
        np.testing.assert_array_equal(logsum[p], z1)


@pytest.mark.parametrize("missing", [0.0, 0.1])
@pytest.mark.parametrize("candidates", [3, "explicit"])
def test_shared_counting_candidate_regime(monkeypatch, missing, candidates):
    """Inside ``shared_counting`` one kernel call builds the three tables; each equals its
    separate build exactly (scores, log-sums, candidates) with the candidates selected under
    the first listed prior (K2), whatever prior is asked first."""
    codes, ar = _codes(200, 8, 4, missing)
    if candidates == "explicit":
        candidates = np.array([[u for u in range(8) if u != i][:3] for i in range(8)])
    chosen = candidates
    if isinstance(candidates, int):  # the priors' own selections differ: the first's is kept
        own = {q: st_mod.select_candidates(codes, ar, candidates, q[0], "hz", q[1])
               for q in PRIORS}
        assert any((own[q] != own[PRIORS[0]]).any() for q in PRIORS[1:])
        chosen = own[PRIORS[0]]
    sep = {q: build_score_table(codes, ar, 2, score=q[0], ess=q[1], candidates=chosen)
           for q in PRIORS}
    kernel = st_mod.build_candidate_tables
    calls = []
    monkeypatch.setattr(st_mod, "build_candidate_tables",
                        lambda *a: calls.append(1) or kernel(*a))
    for first in PRIORS:
        calls.clear()
        with shared_counting(PRIORS):
            got = {q: build_score_table(codes, ar, 2, score=q[0], ess=q[1],
                                        candidates=candidates)
                   for q in [first] + [q for q in PRIORS if q != first]}
        assert len(calls) == 1
        for q in PRIORS:
            assert (got[q].score, got[q].ess, got[q].regime) == (*q, "candidates")
            for name in ("masks", "scores", "limits", "cand", "cbit", "exps"):
                np.testing.assert_array_equal(getattr(got[q], name), getattr(sep[q], name))
            # the other priors' node terms are subset-summed on first use (logsum_pending)
            np.testing.assert_array_equal(got[q].arrays().logsum, sep[q].logsum)


@settings(max_examples=60, deadline=None)
@given(K=st.integers(0, 8), max_parents=st.integers(0, 4),
       spread=st.sampled_from([1.0, 50.0, 400.0, 900.0]), level=st.floats(-3000.0, 0.0),
       seed=st.integers(0, 10_000))
def test_linear_zeta_equals_log_space(K, max_parents, spread, level, seed):
    """The candidate tables' subset-sum transform (linear space when the empty set is within
    700 nats of the row's top, else log space) equals the log-space transform to 1e-12
    relative; beyond 700 nats it is the log-space transform itself."""
    rng = np.random.default_rng(seed)
    row = np.full(1 << K, -np.inf)
    for u in range(1 << K):
        if bin(u).count("1") <= max_parents:
            row[u] = level + spread * rng.random()
    ref = row.copy()
    log_zeta_subsets(ref, K)
    got = row.copy()
    _zeta_log(got, K)
    np.testing.assert_allclose(got, ref, rtol=1e-14, atol=1e-12)
    if row.max() - row[0] > 700:
        np.testing.assert_array_equal(got, ref)
