"""Order MCMC: exact order posterior on n = 5 (all 120 orders), incremental == full rescoring,
seeds, Spearman, R-hat, thinning."""

import numpy as np
import pytest
from scipy.stats import spearmanr

from bnma_core.structure.orders import (
    OrderMCMC,
    exact_order_posterior,
    keep_iterations,
    potential_scale_reduction,
    spearman_orders,
)
from bnma_core.structure.score_table import build_score_table


def _table(n_rows=30, seed=1, candidates=None, max_parents=2, n=5):
    rng = np.random.default_rng(seed)
    ar = np.full(n, 2)
    codes = rng.integers(0, 2, size=(n_rows, n))
    codes[:, 1] = np.where(rng.random(n_rows) < 0.8, codes[:, 0], codes[:, 1])
    codes[:, 3] = np.where(rng.random(n_rows) < 0.7, codes[:, 1], codes[:, 3])
    return build_score_table(codes.astype(np.int32), ar, max_parents=max_parents,
                             candidates=candidates, prune_eps=0.0)


@pytest.mark.parametrize("move", ["swap", "mix"])
def test_visit_frequencies_match_exact_order_posterior(move):
    t = _table()
    orders, p = exact_order_posterior(t)
    assert len(orders) == 120 and p.sum() == pytest.approx(1.0)
    n_iter, burn = 60000, 1000
    m = OrderMCMC(t, n_iter=n_iter, burn_in=burn, n_orders=n_iter - burn, move=move,
                  random_state=0)
    r = m.run()
    index = {tuple(o): k for k, o in enumerate(orders)}
    f = np.bincount([index[tuple(o)] for o in r.orders], minlength=120) / len(r.orders)
    assert 0.5 * np.abs(f - p).sum() < 0.05


@pytest.mark.parametrize("move", ["swap", "adjacent", "relocate", "mix"])
@pytest.mark.parametrize("candidates", [None, 3])
def test_incremental_equals_full_rescoring(move, candidates):
    t = _table(n_rows=200, seed=2, candidates=candidates, max_parents=3, n=9)
    m = OrderMCMC(t, n_iter=5000, burn_in=0, n_orders=50, move=move, random_state=3)
    c = m.chains[0]
    for stop in range(500, 5001, 500):
        c.advance(stop)
        assert c.log_score == pytest.approx(t.order_log_score(c.order), abs=1e-8)
        np.testing.assert_allclose(c.terms, t.order_terms(c.order), atol=1e-10)
    r = m.result()
    # every kept order's recorded score matches a full evaluation
    for o, it in zip(r.orders, r.order_iteration):
        assert c.trace_score[it] == pytest.approx(t.order_log_score(o), abs=1e-8)
    assert 0 < r.acceptance_rate <= 1


def test_same_seed_same_trace_and_chunking():
    t = _table(n=7)
    a = OrderMCMC(t, n_iter=3000, burn_in=500, n_orders=10, n_chains=2, random_state=11).run()
    b = OrderMCMC(t, n_iter=3000, burn_in=500, n_orders=10, n_chains=2, random_state=11)
    events = list(b.stream(every=700))
    assert len(events) == 2 * 5 and events[-1]["done"]
    rb = b.result()
    assert a.trace.equals(rb.trace)
    np.testing.assert_array_equal(a.orders, rb.orders)
    c = OrderMCMC(t, n_iter=3000, burn_in=500, n_orders=10, n_chains=2, random_state=12).run()
    assert not a.trace.equals(c.trace)
    assert a.orders.shape == (20, 7) and list(a.order_chain[:4]) == [0, 1, 0, 1]


def test_spearman_trace_and_starts():
    t = _table(n=6)
    ref = [5, 4, 3, 2, 1, 0]
    m = OrderMCMC(t, n_iter=2000, burn_in=100, n_orders=20, start="reversed", start_order=ref,
                  reference_order=ref, random_state=0)
    c = m.chains[0]
    np.testing.assert_array_equal(c.order, ref[::-1])
    assert spearman_orders(c.order, ref) == pytest.approx(-1.0)
    r = m.run()
    for o, it in zip(r.orders, r.order_iteration):
        assert r.trace["spearman"].iloc[it] == pytest.approx(spearman_orders(o, ref))
        pos, rpos = np.argsort(o), np.argsort(ref)
        assert spearman_orders(o, ref) == pytest.approx(spearmanr(pos, rpos).statistic)
    g = OrderMCMC(t, n_iter=10, burn_in=1, start="given", start_order=ref)
    np.testing.assert_array_equal(g.chains[0].order, ref)


def test_rhat_and_thinning():
    rng = np.random.default_rng(0)
    same = [rng.normal(size=2000) for _ in range(3)]
    assert potential_scale_reduction(same) == pytest.approx(1.0, abs=0.02)
    apart = [rng.normal(size=2000) + 3 * k for k in range(3)]
    assert potential_scale_reduction(apart) > 1.5
    assert np.isnan(potential_scale_reduction([np.ones(5)]))
    its = keep_iterations(60000, 10000, 30)
    assert len(its) == 30 and its[0] == 10000 and its[1] - its[0] == 1667
    assert its[-1] < 60000


def test_bad_arguments():
    t = _table()
    with pytest.raises(ValueError, match="Unknown move"):
        OrderMCMC(t, move="flip")
    with pytest.raises(ValueError, match="needs start_order"):
        OrderMCMC(t, start="given")
    with pytest.raises(ValueError, match="exactly once"):
        OrderMCMC(t, start="given", start_order=[0, 0, 1, 2, 3])
    with pytest.raises(ValueError, match="burn_in"):
        OrderMCMC(t, n_iter=10, burn_in=10)
    with pytest.raises(ValueError, match="same variables"):
        spearman_orders([0, 1], [0, 2])


@pytest.mark.parametrize("move", ["swap", "mix"])
def test_candidate_local_masks_stay_equal_to_full_recomputation(move):
    """The candidate regime's per-position masks, positions and terms, updated incrementally
    by swaps (XOR with the moved nodes' candidate bits) and relocations, equal a full
    recomputation after thousands of moves; so does the Spearman trace."""
    from bnma_core.kernels.orders import candidate_local_masks, order_terms

    rng = np.random.default_rng(4)
    n, n_rows = 20, 150
    codes = rng.integers(0, 2, size=(n_rows, n))
    for v in range(1, n):
        codes[:, v] = np.where(rng.random(n_rows) < 0.6, codes[:, v - 1], codes[:, v])
    t = build_score_table(codes.astype(np.int32), np.full(n, 2), max_parents=2, candidates=5)
    ref = np.arange(n)
    m = OrderMCMC(t, n_iter=20000, burn_in=0, n_orders=10, move=move, random_state=9,
                  reference_order=ref)
    c = m.chains[0]
    for stop in range(2000, 20001, 2000):
        c.advance(stop)
        np.testing.assert_array_equal(c.local, candidate_local_masks(c.order, t.cand, t.cbit))
        _, terms, local = order_terms(c.order, t.arrays())
        np.testing.assert_array_equal(c.local, local)
        np.testing.assert_array_equal(c.pos[c.order], np.arange(n))
        np.testing.assert_array_equal(c.terms, terms)
        assert c.trace_spear[stop - 1] == pytest.approx(spearman_orders(c.order, ref))
    assert 0.05 < c.acceptance_rate < 1
