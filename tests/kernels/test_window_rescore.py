"""The parent sets a few fixed orders read, scored again on other rows
(``kernels.orders.window_rescore``, behind ``rescored_for_orders``; issue 34 item 3): each
family counted from its prefix's configurations equals the family counted on its own
(``family_local_ml``) exactly, in both regimes, with missing values and repeated rows; the sets
kept are the union of the orders' pruning windows."""

import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from bnma_core.kernels.orders import (
    _mask_parents,
    family_local_ml,
    new_count_memo,
    window_rescore,
)
from bnma_core.structure.score_table import (
    SCORE_KINDS,
    _log_priors,
    build_score_table,
    compress_rows,
)


@settings(max_examples=25, deadline=None)
@given(n=st.integers(2, 7), n_rows=st.integers(2, 80), seed=st.integers(0, 10_000),
       max_parents=st.integers(0, 3), missing=st.sampled_from([0.0, 0.15]),
       score=st.sampled_from(["k2", "bdeu"]), candidates=st.sampled_from([None, 2]),
       eps=st.sampled_from([0.0, 1e-4, 0.5]))
def test_rescored_sets_equal_families_counted_alone(n, n_rows, seed, max_parents, missing,
                                                    score, candidates, eps):
    rng = np.random.default_rng(seed)
    ar = rng.integers(1, 4, n).astype(np.int64)
    codes = (rng.random((n_rows, n)) * ar).astype(np.int32)
    for v in range(1, n):
        codes[:, v] = np.where(rng.random(n_rows) < 0.5, codes[:, v - 1] % ar[v], codes[:, v])
    codes[rng.random(codes.shape) < missing] = -1
    l = min(max_parents, n - 1)
    cand = None if candidates is None else min(candidates, n - 1)
    table = build_score_table(codes, ar, l, score=score, ess=2.0, prune_eps=eps,
                              candidates=cand)
    tab = table.arrays()
    orders = np.array([rng.permutation(n) for _ in range(3)], dtype=np.int64)
    other = np.vstack([codes[: n_rows // 2], codes[: n_rows // 4]])  # other rows, repeats
    uniq, w = compress_rows(other)
    wf = w.astype(np.float64)
    lp = _log_priors(n, l, "hz")
    log_eps_rel = math.log(eps / table.n_sets) if eps > 0 else -math.inf
    memo = new_count_memo()
    masks, scores = window_rescore(tab, orders, uniq, wf, ar, lp, SCORE_KINDS[score], 2.0,
                                   log_eps_rel, *memo)
    # a second call on the same rows reads every family's counts from the memo: the same
    m2, s2 = window_rescore(tab, orders, uniq, wf, ar, lp, SCORE_KINDS[score], 2.0,
                            log_eps_rel, *memo)
    assert np.array_equal(m2, masks) and np.array_equal(s2, scores)
    pa = np.empty(n, dtype=np.int64)
    st_ = np.empty(n, dtype=np.int64)
    for v in range(n):
        real = masks[v] != ~np.uint64(0)
        # the kept sets: every set in some order's window (eps = 0: every compatible set)
        if eps == 0.0:
            for o in orders:
                before = set(o[: list(o).index(v)].tolist())
                for k in range(table.n_sets):
                    if set(table.parents(v, k)) <= before:
                        assert table.masks[v, k] in masks[v][real]
        for c in np.flatnonzero(real):
            npa = _mask_parents(tab, v, masks[v, c], ar, -1, pa, st_)[0]
            ref = lp[npa] + family_local_ml(uniq, wf, ar, v, pa[:npa].copy(),
                                            SCORE_KINDS[score], 2.0)
            assert scores[v, c] == ref
        if (~real).any():
            assert (scores[v][~real] == scores[v][real].min() - 1.0).all()
