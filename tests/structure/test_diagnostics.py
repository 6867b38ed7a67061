"""Convergence diagnostics (structure.diagnostics): ArviZ's own numbers, the verdict on iid and
on stuck chains, settled edges, the concordance of two halves of the chains, the edge traces
OrderMCMC records, and the lazy import of arviz_stats."""

import json
import subprocess
import sys

import numpy as np
import pytest
from arviz_stats.base import array_stats as az

from bnma_core.kernels.orders import order_edge_probabilities, orders_edge_probabilities
from bnma_core.structure.diagnostics import (
    convergence_diagnostics,
    edge_concordance,
    rank_counts,
)
from bnma_core.structure.orders import OrderMCMC, potential_scale_reduction
from bnma_core.structure.score_table import build_score_table


def _iid(seed=0, chains=4, draws=1000, n=3):
    rng = np.random.default_rng(seed)
    return rng.normal(size=(chains, draws)), rng.random((chains, draws, n, n))


def test_iid_draws_rhat_one_ess_near_draws_and_converged():
    ls, ed = _iid()
    r = convergence_diagnostics(ls, ed, ["a", "b", "c"])
    assert r.log_score.rhat == pytest.approx(1.0, abs=0.01)
    assert r.log_score.ess_bulk == pytest.approx(4000, rel=0.15)
    assert r.log_score.ess_tail == pytest.approx(4000, rel=0.25)
    varying = r.edges[~r.edges["settled"]]
    assert len(varying) == 6 and len(r.edges) == 6  # off-diagonal pairs
    assert (varying["rhat"] - 1).abs().max() < 0.01
    assert varying["ess_bulk"].between(3000, 5000).all()
    assert r.converged and r.verdict.startswith("Converged")
    assert r.max_concordance_difference < 0.05
    # autocorrelation of iid draws: 1 at lag 0, near 0 after
    assert np.allclose(r.log_score.autocorrelation[:, 0], 1)
    assert np.abs(r.log_score.autocorrelation[:, 1:]).max() < 0.15
    # rank plot of agreeing chains: every bin near draws / bins
    counts = r.log_score.rank_counts
    assert counts.shape == (4, 20) and counts.sum() == 4000
    assert np.abs(counts - 50).max() < 30


def test_chains_stuck_in_different_modes_are_not_converged():
    rng = np.random.default_rng(1)
    chains, draws = 4, 800
    ls = rng.normal(size=(chains, draws)) + np.array([0, 0, 5, 5])[:, None]
    ed = np.full((chains, draws, 3, 3), 0.5) + 0.01 * rng.random((chains, draws, 3, 3))
    ed[:2, :, 0, 1] = 0.9 + 0.05 * rng.random((2, draws))  # edge 0 -> 1: two modes
    ed[2:, :, 0, 1] = 0.1 + 0.05 * rng.random((2, draws))
    r = convergence_diagnostics(ls, ed, ["a", "b", "c"], settled=0.02)
    assert r.log_score.rhat > 1.5
    assert not r.converged
    assert r.verdict.startswith("Not yet converged: run longer / more chains.")
    assert "log score" in r.verdict and "a -> b" in r.verdict
    ab = r.edges.set_index(["parent", "child"]).loc[("a", "b")]
    assert ab["rhat"] > 1.5 and ab["posterior"] == pytest.approx(0.525, abs=0.01)
    assert r.least_converged[0].name == "a -> b"
    # the other edges vary by < 0.02: settled, no R-hat, not judged
    assert r.edges["settled"].sum() == 5 and r.edges.loc[r.edges["settled"], "rhat"].isna().all()
    # concordance of chains {0, 1} against {2, 3}: the stuck edge is far off the diagonal
    conc = r.concordance.set_index(["parent", "child"])
    assert conc.loc[("a", "b"), "difference"] == pytest.approx(0.8, abs=0.02)
    # rank plot: the two modes own opposite halves of the ranks
    counts = r.least_converged[0].rank_counts
    assert counts[:2, :10].sum() == 0 and counts[2:, 10:].sum() == 0


def test_chains_constant_in_different_states_are_the_least_converged():
    ls, ed = _iid(seed=3)
    ed[:, :, 1, 2] = np.array([0.0, 0.0, 1.0, 1.0])[:, None]  # each chain stuck, apart
    r = convergence_diagnostics(ls, ed)
    assert not r.converged and "worst 1 -> 2" in r.verdict
    assert r.least_converged[0].name == "1 -> 2"


def test_numbers_equal_arviz_called_directly():
    rng = np.random.default_rng(2)
    ls = np.cumsum(rng.normal(size=(4, 600)), axis=1)  # autocorrelated
    ed = np.clip(0.5 + 0.1 * np.cumsum(rng.normal(size=(4, 300, 2, 2)), axis=1) / 10, 0, 1)
    r = convergence_diagnostics(ls, ed, settled=0.0)
    assert r.log_score.rhat == az.rhat(ls, method="rank")
    assert r.log_score.ess_bulk == az.ess(ls, method="bulk")
    assert r.log_score.ess_tail == az.ess(ls, method="tail", prob=0.05)
    assert r.log_score.mcse == az.mcse(ls, method="mean")
    np.testing.assert_array_equal(r.log_score.autocorrelation,
                                  az.autocorr(ls, axis=-1)[:, :101])
    e01 = ed[:, :, 0, 1]
    row = r.edges.set_index(["parent", "child"]).loc[(0, 1)]
    assert row["rhat"] == az.rhat(e01, method="rank")
    assert row["ess_bulk"] == az.ess(e01, method="bulk")
    assert row["ess_tail"] == az.ess(e01, method="tail", prob=0.05)
    assert row["mcse"] == az.mcse(e01, method="mean")
    assert row["posterior"] == pytest.approx(e01.mean())
    ranks = az.compute_ranks(ls, axis=(0, 1))
    np.testing.assert_array_equal(
        rank_counts(ls, 5), [np.histogram(c, bins=np.linspace(0.5, 2400.5, 6))[0]
                             for c in ranks])
    # the R-hat of OrderMCMC results is ArviZ's rank-normalised split R-hat
    assert potential_scale_reduction(list(ls)) == az.rhat(ls, method="rank")
    assert np.isnan(potential_scale_reduction([ls[0]]))  # one chain: undefined


def test_bad_input_gets_one_sentence():
    ls, ed = _iid(chains=2)
    with pytest.raises(ValueError, match="at least 4 chains .* n_chains=4 or more"):
        convergence_diagnostics(ls, ed)
    ls, ed = _iid(draws=5)
    with pytest.raises(ValueError, match="at least 8 post-burn-in draws"):
        convergence_diagnostics(ls, ed)
    ls, ed = _iid()
    with pytest.raises(ValueError, match="one name per variable"):
        convergence_diagnostics(ls, ed, ["a"])
    with pytest.raises(ValueError, match="n_chains, n_draws, n, n"):
        convergence_diagnostics(ls, ed[:2])
    ls[0, 3] = np.nan
    with pytest.raises(ValueError, match="not finite"):
        convergence_diagnostics(ls, ed)
    with pytest.raises(ValueError, match="square arrays of the same size"):
        edge_concordance(np.zeros((2, 2)), np.zeros((3, 3)))


def _table(candidates=None, n=6, n_rows=300, seed=3):
    rng = np.random.default_rng(seed)
    codes = rng.integers(0, 2, size=(n_rows, n))
    codes[:, 1] = np.where(rng.random(n_rows) < 0.85, codes[:, 0], codes[:, 1])
    codes[:, 2] = np.where(rng.random(n_rows) < 0.75, codes[:, 1], codes[:, 2])
    codes[:, 4] = np.where(rng.random(n_rows) < 0.7, codes[:, 3] ^ codes[:, 2], codes[:, 4])
    return build_score_table(codes.astype(np.int32), np.full(n, 2), max_parents=2,
                             candidates=candidates)


@pytest.mark.parametrize("candidates", [None, 3])
def test_recorded_orders_and_edge_traces(candidates):
    t = _table(candidates=candidates)
    n_iter = 3000
    m = OrderMCMC(t, n_iter=n_iter, burn_in=1000, n_chains=4, move="mix", trace_every=7,
                  random_state=4)
    # the fast path with every order kept, and no recording at all: the same chains
    every = OrderMCMC(t, n_iter=n_iter, burn_in=0, n_orders=n_iter, n_chains=4, move="mix",
                      trace_every=0, random_state=4)
    m.run()
    every.run()
    for k in range(4):
        np.testing.assert_array_equal(m.chains[k].trace_score, every.chains[k].trace_score)
        orders, its = m.recorded_orders(k)
        assert its[0] == 1001 and its[1] - its[0] == 7 and its[-1] <= n_iter
        np.testing.assert_array_equal(orders, every.chains[k].kept[its - 1])
    assert every.recorded_orders(0)[0].shape == (0, t.n_vars)
    ed = m.edge_traces()
    assert ed.shape == (4, len(m.recorded_orders(0)[1]), t.n_vars, t.n_vars)
    tab = t.arrays()
    for k in (0, 3):
        for d in (0, 50, ed.shape[1] - 1):
            edge, _ = order_edge_probabilities(tab, m.recorded_orders(k)[0][d], -1)
            np.testing.assert_allclose(ed[k, d], edge, atol=1e-12)
    np.testing.assert_array_equal(orders_edge_probabilities(tab, m.recorded_orders(1)[0]),
                                  ed[1])
    ls = m.log_score_traces()
    assert ls.shape == (4, n_iter - 1000)
    r = m.diagnostics(names=[f"x{v}" for v in range(t.n_vars)])
    assert r.n_chains == 4 and r.n_draws == 2000 and r.n_edge_draws == ed.shape[1]
    assert r.edges["posterior"].between(0, 1).all()
    assert r.verdict.startswith(("Converged", "Not yet converged"))


def test_a_long_easy_run_converges_and_a_short_one_does_not():
    t = _table()
    long = OrderMCMC(t, n_iter=40000, burn_in=2000, n_chains=4, random_state=0)
    long.run()
    r = long.diagnostics()
    assert r.converged, r.verdict
    short = OrderMCMC(t, n_iter=60, burn_in=10, n_chains=4, trace_every=1, move="adjacent",
                      start="given", start_order=list(range(t.n_vars)), random_state=0)
    short.run()
    assert not short.diagnostics().converged
    with pytest.raises(ValueError, match="at least 4 chains"):
        OrderMCMC(t, n_iter=100, burn_in=10, n_chains=2, random_state=0).diagnostics()
    with pytest.raises(ValueError, match="trace_every must be 0"):
        OrderMCMC(t, n_iter=100, burn_in=10, trace_every=-1)
    with pytest.raises(ValueError, match="would record 300,000 orders .* trace_every >= 3"):
        OrderMCMC(t, n_iter=300000, burn_in=10, trace_every=1)


def test_arviz_is_imported_only_when_diagnostics_run():
    code = ("import sys, json; import bnma_core.structure.orders, "
            "bnma_core.structure.diagnostics; print(json.dumps('arviz_stats' in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout.splitlines()[-1]) is False
