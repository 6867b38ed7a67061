"""Step mode of order MCMC (OrderMCMC.step): the stepped chain is the kernel's chain (same seed,
same orders and log scores, iteration for iteration, whether stepped 1, 10 or 100 at a time),
every reported move is consistent with the kernel's decision, and the best network of an order
is each node's best compatible parent set."""

import math

import numpy as np
import pytest

from bnma_core.structure.candidates import best_parent_sets
from bnma_core.structure.orders import OrderMCMC
from bnma_core.structure.score_table import build_score_table


def _table(n_rows=200, seed=2, candidates=None, max_parents=3, n=9):
    rng = np.random.default_rng(seed)
    ar = np.full(n, 2)
    codes = rng.integers(0, 2, size=(n_rows, n))
    codes[:, 1] = np.where(rng.random(n_rows) < 0.8, codes[:, 0], codes[:, 1])
    codes[:, 3] = np.where(rng.random(n_rows) < 0.7, codes[:, 1], codes[:, 3])
    codes[:, 5] = np.where(rng.random(n_rows) < 0.7, codes[:, 3], codes[:, 5])
    return build_score_table(codes.astype(np.int32), ar, max_parents=max_parents,
                             candidates=candidates)


def _full_run(table, n_iter, move, seed, n_chains=1):
    """The fast path with every iteration's order kept (n_orders = n_iter, no burn-in)."""
    m = OrderMCMC(table, n_iter=n_iter, burn_in=0, n_orders=n_iter, move=move,
                  n_chains=n_chains, random_state=seed)
    m.run()
    return m


@pytest.mark.parametrize("move", ["swap", "adjacent", "relocate", "mix"])
@pytest.mark.parametrize("candidates", [None, 4])
def test_stepped_chain_is_the_kernels_chain(move, candidates):
    t = _table(candidates=candidates)
    n_iter = 400
    ref = _full_run(t, n_iter, move, seed=11).chains[0]
    assert np.array_equal(ref.keep_slot, np.arange(n_iter))  # every order kept
    for sizes in ([1] * n_iter, [10] * (n_iter // 10), [100] * (n_iter // 100),
                  [1, 10, 100, 1, 100, 10, 1, 100, 77]):
        m = OrderMCMC(t, n_iter=n_iter, burn_in=0, n_orders=n_iter, move=move,
                      random_state=11)
        moves = []
        for k in sizes:
            res = m.step(k)
            assert res.iteration == m.chains[0].t and len(res.moves) == k
            np.testing.assert_array_equal(res.order, m.chains[0].order)
            moves += res.moves
        assert [mv.iteration for mv in moves] == list(range(1, n_iter + 1))
        c = m.chains[0]
        # identical orders and log scores, iteration for iteration
        np.testing.assert_array_equal(c.kept, ref.kept)
        np.testing.assert_array_equal(c.trace_score, ref.trace_score)
        np.testing.assert_array_equal(c.trace_acc, ref.trace_acc)
        for it, mv in enumerate(moves):
            np.testing.assert_array_equal(mv.new_order, ref.kept[it])
            before = ref.trace_score[it - 1] if it else ref.initial_log_score
            assert mv.log_score == before
            after = mv.proposed_log_score if mv.accepted else mv.log_score
            assert after == ref.trace_score[it]
            assert mv.accepted == bool(ref.trace_acc[it])


@pytest.mark.parametrize("candidates", [None, 4])
def test_move_records_are_consistent(candidates):
    t = _table(candidates=candidates)
    m = OrderMCMC(t, n_iter=300, burn_in=0, move="mix", random_state=5)
    res = m.step(300)
    kinds = set()
    for mv in res.moves:
        i, j = mv.positions
        kinds.add((mv.kind, abs(i - j) == 1))
        # the proposal moves what the record says
        if mv.kind == "swap":
            assert mv.nodes == (mv.order[i], mv.order[j])
            assert mv.proposed_order[i] == mv.order[j] and mv.proposed_order[j] == mv.order[i]
        else:
            assert mv.nodes == (mv.order[i],) and mv.proposed_order[j] == mv.order[i]
            rest = [v for v in mv.order if v != mv.order[i]]
            assert [v for v in mv.proposed_order if v != mv.order[i]] == rest
        assert sorted(mv.proposed_order) == list(range(t.n_vars))
        # the proposed log score is the order's score; the decision is log u < log ratio
        assert mv.proposed_log_score == pytest.approx(t.order_log_score(mv.proposed_order),
                                                      abs=1e-8)
        assert mv.log_score == pytest.approx(t.order_log_score(mv.order), abs=1e-8)
        assert mv.acceptance_probability == pytest.approx(min(1.0, math.exp(mv.log_ratio)))
        assert 0 < mv.uniform < 1
        assert mv.accepted == (math.log(mv.uniform) < mv.log_ratio)
    assert {("swap", False), ("swap", True)} <= kinds  # random and adjacent swaps
    frame = res.to_frame(names=[f"x{v}" for v in range(t.n_vars)])
    assert len(frame) == 300 and frame["accepted"].sum() == sum(mv.accepted for mv in res.moves)


@pytest.mark.parametrize("candidates", [None, 4])
def test_best_dag_and_changed_arcs(candidates):
    t = _table(candidates=candidates)
    m = OrderMCMC(t, n_iter=200, burn_in=0, random_state=1)
    prev = None
    for _ in range(20):
        res = m.step(10)
        dag = res.best_dag
        # the best network of the order: consistent with it, each node's set the best
        # compatible entry of its sorted table
        pos = np.argsort(res.order)
        for v in range(t.n_vars):
            parents = set(np.flatnonzero(dag[:, v]).tolist())
            assert all(pos[u] < pos[v] for u in parents)
            compatible = [k for k in range(t.n_sets)
                          if all(pos[u] < pos[v] for u in t.parents(v, k))
                          and np.isfinite(t.scores[v, k])]
            best = max(compatible, key=lambda k: t.scores[v, k])
            assert parents == set(t.parents(v, best))
        # the same sets as candidate expansion's Python twin
        best = best_parent_sets(t, res.order[None])
        for v in range(t.n_vars):
            assert best[v] == {tuple(np.flatnonzero(dag[:, v]).tolist())}
        if prev is not None:
            assert set(res.added_arcs) == set(zip(*np.nonzero(dag & ~prev)))
            assert set(res.removed_arcs) == set(zip(*np.nonzero(prev & ~dag)))
        prev = dag


def test_step_limits_and_bad_input():
    t = _table(n=6)
    m = OrderMCMC(t, n_iter=25, burn_in=0, n_chains=2, random_state=0)
    assert len(m.step(100, chain=1).moves) == 25  # only the iterations left
    assert m.chains[0].t == 0  # the other chain did not move
    with pytest.raises(ValueError, match="all its 25 iterations"):
        m.step(1, chain=1)
    with pytest.raises(ValueError, match="chain must be between 0 and 1"):
        m.step(1, chain=2)
    with pytest.raises(ValueError, match="at least 1"):
        m.step(0)
    # stepping some iterations then running the rest gives the fast path's chain
    a = OrderMCMC(t, n_iter=25, burn_in=0, n_chains=2, random_state=0)
    a.step(7, chain=0)
    ra = a.run()
    rb = OrderMCMC(t, n_iter=25, burn_in=0, n_chains=2, random_state=0).run()
    np.testing.assert_array_equal(ra.orders, rb.orders)
    np.testing.assert_array_equal(ra.trace["log2_score"], rb.trace["log2_score"])
