"""The CPTs a score table caches for the order kernels (``kernels.orders.extend_cpt_cache``,
``ScoreTable.cpt_cache``; issue 34): every cached set is the one the windows of the given
orders read, its CPT equals :func:`~bnma_core.kernels.orders.family_cpt` counted on its own
exactly (prefix-shared counting changes nothing), extensions keep the cells already cached,
and the cell bound leaves the sets beyond it uncached."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from bnma_core.kernels.orders import (
    _mask_parents,
    _node_windows,
    extend_cpt_cache,
    family_cpt,
    new_count_memo,
    no_cpt_cache,
    window_buffers,
)
from bnma_core.structure.score_table import build_score_table


def _table(n, n_rows, seed, max_parents, missing, score, candidates, eps):
    rng = np.random.default_rng(seed)
    ar = rng.integers(1, 4, n).astype(np.int64)
    codes = (rng.random((n_rows, n)) * ar).astype(np.int32)
    for v in range(1, n):
        codes[:, v] = np.where(rng.random(n_rows) < 0.5, codes[:, v - 1] % ar[v], codes[:, v])
    codes[rng.random(codes.shape) < missing] = -1
    cand = None if candidates is None else min(candidates, n - 1)
    table = build_score_table(codes, ar, min(max_parents, n - 1), score=score, ess=2.0,
                              prune_eps=eps, candidates=cand)
    orders = np.array([rng.permutation(n) for _ in range(4)], dtype=np.int64)
    return table, orders


def _window_sets(table, orders) -> np.ndarray:
    """used[v, k]: some order's window of node v holds set k."""
    tab = table.arrays()
    n, m = table.masks.shape
    pos, W, used, sum_w, dep, idx, wv, pa, st_ = window_buffers(orders, m)
    out = np.zeros((n, m), dtype=bool)
    for v in range(n):
        _node_windows(tab, orders, pos, v, 0, W, used, sum_w, dep, idx, wv)
        out[v] = used
    return out


def _counted(table, v, k) -> np.ndarray:
    n = table.n_vars
    pa = np.empty(n, dtype=np.int64)
    st_ = np.empty(n, dtype=np.int64)
    npa, q, _ = _mask_parents(table.arrays(), v, table.masks[v, k], table.arities, -1, pa, st_)
    r = int(table.arities[v])
    a = 1.0 if table.score_kind == 0 else table.ess / (r * q)
    return family_cpt(table.data_t, np.asarray(table.weights, dtype=np.int64), v, pa[:npa],
                      st_[:npa], q, r, a)


def _extend(table, orders, cache, max_cells=2 ** 22, memo=None):
    return extend_cpt_cache(table.arrays(), orders, table.data_t,
                            np.asarray(table.weights, dtype=np.int64), table.arities,
                            table.score_kind, float(table.ess), cache, max_cells,
                            *(memo or new_count_memo()))


@settings(max_examples=30, deadline=None)
@given(n=st.integers(2, 7), n_rows=st.integers(2, 80), seed=st.integers(0, 10_000),
       max_parents=st.integers(0, 3), missing=st.sampled_from([0.0, 0.15]),
       score=st.sampled_from(["k2", "bdeu"]), candidates=st.sampled_from([None, 2]),
       eps=st.sampled_from([0.0, 1e-4, 0.5]))
def test_cached_cpts_equal_family_cpt_counted_alone(n, n_rows, seed, max_parents, missing,
                                                    score, candidates, eps):
    """Both regimes, K2 and BDeu, missing values and repeated rows: the sets cached for two
    orders, then extended with two more, are exactly the windows' sets, each CPT bit for bit
    :func:`family_cpt`'s, and the first extension's cells are kept unchanged."""
    table, orders = _table(n, n_rows, seed, max_parents, missing, score, candidates, eps)
    first, n_first = _extend(table, orders[:2], no_cpt_cache())
    used = _window_sets(table, orders[:2])
    assert ((first.off >= 0) == used).all() and n_first == used.sum()
    cache, n_more = _extend(table, orders[2:], first)
    used_all = _window_sets(table, orders)
    assert ((cache.off >= 0) == used_all).all() and n_first + n_more == used_all.sum()
    assert (cache.off[first.off >= 0] == first.off[first.off >= 0]).all()
    np.testing.assert_array_equal(cache.flat[:first.flat.shape[0]], first.flat)
    for v, k in zip(*np.nonzero(used_all), strict=True):
        ref = _counted(table, v, k)
        o = cache.off[v, k]
        np.testing.assert_array_equal(cache.flat[o:o + ref.shape[0]], ref)
    again, n_again = _extend(table, orders, cache)  # nothing new: the same cache back
    assert n_again == 0 and again.flat is cache.flat
    # the counts left in a memo by one build are read back by the next: the same CPTs
    memo = new_count_memo()
    built, _ = _extend(table, orders, no_cpt_cache(), memo=memo)
    assert len(memo[0]) == used_all.sum()
    read, _ = _extend(table, orders, no_cpt_cache(), memo=memo)
    np.testing.assert_array_equal(read.flat, built.flat)


def test_cell_bound_leaves_the_rest_uncached():
    """With room for a few cells only, the cache stops within the bound; the sets it holds
    are still exact and the others are marked -1 (counted by the kernels)."""
    table, orders = _table(6, 60, 1, 3, 0.1, "k2", None, 0.0)
    full, _ = _extend(table, orders, no_cpt_cache())
    bound = full.flat.shape[0] // 3
    part, n_part = _extend(table, orders, no_cpt_cache(), bound)
    assert 0 < n_part < (full.off >= 0).sum() and part.flat.shape[0] <= bound
    for v, k in zip(*np.nonzero(part.off >= 0), strict=True):
        ref = _counted(table, v, k)
        np.testing.assert_array_equal(part.flat[part.off[v, k]:part.off[v, k] + len(ref)], ref)
    nothing, n_none = _extend(table, orders, no_cpt_cache(), 0)
    assert n_none == 0 and nothing.off.shape == (0, 0)


def test_table_cache_grows_with_new_orders_only():
    """ScoreTable.cpt_cache: an order seen before adds nothing (the same arrays back); a new
    order adds the sets of its windows the cache lacks."""
    table, orders = _table(6, 60, 2, 2, 0.1, "bdeu", None, 1e-4)
    a = table.cpt_cache(orders[:1])
    assert table.cpt_cache(orders[:1]) is a
    b = table.cpt_cache(orders)
    assert ((b.off >= 0) == _window_sets(table, orders)).all()
    assert table.cpt_cache(orders[::-1]) is b
