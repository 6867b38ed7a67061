"""Exact edge posteriors under the order-modular prior (``structure.exact.edge_posteriors``;
Koivisto & Sood 2004, Koivisto 2006): brute-force oracles over all orders and all DAGs, the
DP's own identities, invariance to relabelling the variables, ASIA and WBC in seconds, and
order MCMC converging to the exact answer."""

from __future__ import annotations

import math
import time
from itertools import combinations, permutations, product

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from oracles import all_dag_parents
from scipy import stats
from scipy.special import logsumexp

from bnma_core.data import DataError
from bnma_core.kernels.order_dp import order_modular_edges
from bnma_core.network import load_network
from bnma_core.scores import family_counts, log_ml_counts, log_structure_prior
from bnma_core.structure.exact import (
    MAX_EDGE_VARS,
    ResourceLimitError,
    _order_local_scores,
    edge_posteriors,
)
from bnma_core.structure.orders import OrderMCMC
from bnma_core.structure.score_table import build_score_table

# ------------------------------------------------------------------------------ oracles


def _data(n=5, n_rows=40, seed=0, missing=0.0):
    """Codes with a chain of dependencies (arities 2 and 3), some cells missing if asked."""
    rng = np.random.default_rng(seed)
    ar = np.array([2, 3, 2, 2, 3, 2][:n])
    X = rng.integers(0, ar, size=(n_rows, n))
    for v in range(1, n):
        X[:, v] = np.where(rng.random(n_rows) < 0.6, X[:, v - 1] % ar[v], X[:, v])
    if missing:
        X[rng.random(X.shape) < missing] = -1
    return X, ar


def _family_score(X, ar, v, parents, score, ess, prior):
    """log ρ(v | Z) + the family's node-average log marginal likelihood, written out here from
    the counts: log ML of the n rows complete on the family + (N - n) / n Σ N_jk log θ_jk,
    θ_jk = (N_jk + a) / (N_j + a r) (equal to log ML on complete data)."""
    counts = family_counts(X, v, list(parents), ar)
    q, r = counts.shape
    ml = log_ml_counts(counts, score, ess)
    n_fam, n_all = counts.sum(), X.shape[0]
    if 0 < n_fam < n_all:
        a = 1.0 if score == "k2" else ess / (q * r)
        nj = counts.sum(axis=1, keepdims=True)
        fit = float(np.sum(np.where(counts > 0, counts * np.log((counts + a) / (nj + a * r)),
                                    0.0)))
        ml += (n_all - n_fam) * fit / n_fam
    return log_structure_prior(X.shape[1], len(parents), prior) + ml


def _brute_force(X, ar, max_parents, score, ess, prior):
    """Σ over all n! orders and all DAGs consistent with each (parent sets within the
    predecessors, at most ``max_parents``) of Π_v exp S(v; Pa_v), edge by edge."""
    n = X.shape[1]
    lim = n - 1 if max_parents is None else max_parents
    cache = {}

    def s(v, z):
        if (v, z) not in cache:
            cache[v, z] = _family_score(X, ar, v, z, score, ess, prior)
        return cache[v, z]

    logw, dags = [], []
    for order in permutations(range(n)):
        choices = [[z for k in range(min(p, lim) + 1) for z in combinations(sorted(order[:p]), k)]
                   for p in range(n)]
        for pa in product(*choices):
            logw.append(sum(s(order[p], pa[p]) for p in range(n)))
            dags.append([(order[p], pa[p]) for p in range(n)])
    logw = np.array(logw)
    w = np.exp(logw - logsumexp(logw))
    E = np.zeros((n, n))
    for wi, dag in zip(w, dags):
        for v, z in dag:
            for u in z:
                E[u, v] += wi
    return E, logsumexp(logw)


# ------------------------------------------------------------------------------ exactness


@pytest.mark.parametrize("n, max_parents, score, ess, prior, missing", [
    (5, 2, "k2", 1.0, "uniform", 0.0),
    (5, None, "bdeu", 2.5, "hz", 0.0),
    (5, 1, "bdeu", 1.0, "uniform", 0.0),
    (4, None, "k2", 1.0, "hz", 0.1),
    (5, 3, "bdeu", 1.0, "hz", 0.08),
])
def test_equals_brute_force_over_all_orders_and_dags(n, max_parents, score, ess, prior, missing):
    X, ar = _data(n, missing=missing, seed=n)
    E_bf, log_z = _brute_force(X, ar, max_parents, score, ess, prior)
    E = edge_posteriors(X, ar, max_parents, score, ess, prior)
    np.testing.assert_allclose(E, E_bf, rtol=0, atol=1e-9)
    # the DP's evidence is the same sum (uniform prior over orders up to its constant)
    _, lz, mass = order_modular_edges(_order_local_scores(X, ar, max_parents, score, ess, prior))
    assert lz == pytest.approx(log_z, abs=1e-8)
    np.testing.assert_allclose(mass, 1.0, atol=1e-12)


def test_equals_every_dag_weighted_by_its_consistent_orders():
    """The order-modular prior seen from the DAGs (tests/oracles.py's enumerator): each DAG
    with at most two parents per node counts once per order it is consistent with."""
    X, ar = _data(4, seed=11)
    E = edge_posteriors(X, ar, 2, "k2", 1.0, "hz")
    orders = [dict(zip(o, range(4))) for o in permutations(range(4))]
    logw, dags = [], []
    for pa in all_dag_parents(4):
        if max(len(p) for p in pa) > 2:
            continue
        ext = sum(all(pos[u] < pos[v] for v in range(4) for u in pa[v]) for pos in orders)
        logw.append(math.log(ext) + sum(_family_score(X, ar, v, pa[v], "k2", 1.0, "hz")
                                        for v in range(4)))
        dags.append(pa)
    w = np.exp(np.array(logw) - logsumexp(logw))
    E_bf = np.zeros((4, 4))
    for wi, pa in zip(w, dags):
        for v in range(4):
            E_bf[list(pa[v]), v] += wi
    np.testing.assert_allclose(E, E_bf, rtol=0, atol=1e-9)


def test_missing_values_use_order_mcmcs_own_scores():
    """With -1 codes the local scores are the score table's (node-average) entries; on complete
    data both routes to the local scores give the same edge posteriors."""
    X, ar = _data(6, n_rows=80, seed=4)
    a = _order_local_scores(X, ar, 3, "k2", 1.0, "hz")
    b = _order_local_scores(X, ar, 3, "k2", 1.0, "hz", via_score_table=True)
    assert (np.isfinite(a) == np.isfinite(b)).all()
    np.testing.assert_allclose(a[np.isfinite(a)], b[np.isfinite(b)], rtol=0, atol=1e-9)
    np.testing.assert_allclose(order_modular_edges(a)[0], order_modular_edges(b)[0], atol=1e-9)


@settings(max_examples=40, deadline=None)
@given(n=st.integers(2, 6), n_rows=st.integers(3, 40), seed=st.integers(0, 10_000),
       max_parents=st.sampled_from([0, 1, 2, None]), score=st.sampled_from(["k2", "bdeu"]),
       prior=st.sampled_from(["uniform", "hz"]), missing=st.sampled_from([0.0, 0.15]),
       data=st.data())
def test_relabelling_the_variables_relabels_the_answer(n, n_rows, seed, max_parents, score,
                                                       prior, missing, data):
    """P(π(u) -> π(v)) is P(u -> v) after permuting the columns; probabilities lie in [0, 1],
    u -> v and v -> u exclude each other in every order, a node's expected number of parents
    is at most ``max_parents``, and each node's parent-set posterior sums to 1."""
    X, ar = _data(n, n_rows, seed, missing)
    perm = np.array(data.draw(st.permutations(range(n))))
    E = edge_posteriors(X, ar, max_parents, score, 1.0, prior)
    Ep = edge_posteriors(X[:, perm], ar[perm], max_parents, score, 1.0, prior)
    np.testing.assert_allclose(Ep, E[np.ix_(perm, perm)], rtol=0, atol=1e-9)
    assert (E >= -1e-12).all() and (E <= 1 + 1e-12).all()
    assert np.all(np.diag(E) == 0)
    assert (E + E.T <= 1 + 1e-9).all()
    lim = n - 1 if max_parents is None else max_parents
    assert (E.sum(axis=0) <= lim + 1e-9).all()
    _, _, mass = order_modular_edges(_order_local_scores(X, ar, max_parents, score, 1.0, prior))
    np.testing.assert_allclose(mass, 1.0, atol=1e-9)


def test_log_evidence_equals_the_sum_over_orders_of_the_order_scores():
    """L(V) = R(∅) = log Σ_≺ P(D | ≺), the sum order MCMC's score table gives order by order."""
    X, ar = _data(6, n_rows=60, seed=7)
    tab = build_score_table(X, ar, 2, "bdeu", "hz", 1.0, prune_eps=0.0)
    scores = [tab.order_log_score(np.array(o)) for o in permutations(range(6))]
    _, lz, _ = order_modular_edges(_order_local_scores(X, ar, 2, "bdeu", 1.0, "hz"))
    assert lz == pytest.approx(float(logsumexp(scores)), abs=1e-8)


def test_trivial_cases():
    X, ar = _data(3)
    assert edge_posteriors(X[:, :1], ar[:1]).tolist() == [[0.0]]
    assert not edge_posteriors(X, ar, max_parents=0).any()
    E = edge_posteriors(X[:, :2], ar[:2], max_parents=1)
    assert E[0, 1] + E[1, 0] <= 1 and E[0, 1] > 0


# ------------------------------------------------------------------------------ refusals


def test_refuses_too_many_variables_before_allocating():
    X = np.zeros((5, MAX_EDGE_VARS + 1), dtype=np.int32)
    t = time.perf_counter()
    with pytest.raises(ResourceLimitError, match=f"at most {MAX_EDGE_VARS} variables.*order MCMC"):
        edge_posteriors(X, [2] * (MAX_EDGE_VARS + 1))
    assert time.perf_counter() - t < 1.0


def test_refuses_too_many_parent_sets_with_missing_values():
    """Incomplete data go through the score table, one entry per parent set: 16 variables
    without a parent limit (32,768 sets each) are refused with the limit that fits (7:
    16,384 sets), and so are 10 ten-valued variables (a family table of 10^10 cells)."""
    X = np.zeros((20, 16), dtype=np.int32)
    X[0, 0] = -1
    t = time.perf_counter()
    with pytest.raises(ResourceLimitError, match="32,768 parent sets.*max_parents=7 or less"):
        edge_posteriors(X, [2] * 16, max_parents=None)
    assert time.perf_counter() - t < 1.0
    with pytest.raises(ResourceLimitError, match="GB.*max_parents=7 or less"):
        edge_posteriors(np.full((20, 10), -1), [10] * 10, max_parents=None)
    X[0, 0] = 0
    assert edge_posteriors(X[:, :4], [2] * 4, max_parents=None).shape == (4, 4)


@pytest.mark.parametrize("kwargs, exc, match", [
    ({"max_parents": -1}, ValueError, "max_parents"),
    ({"max_parents": 1.5}, ValueError, "max_parents"),
    ({"score": "bic"}, ValueError, "'bdeu' or 'k2'"),
    ({"ess": 0.0}, ValueError, "positive"),
    ({"structure_prior": "flat"}, ValueError, "uniform, hz"),
])
def test_refuses_bad_options(kwargs, exc, match):
    X, ar = _data(3)
    with pytest.raises(exc, match=match):
        edge_posteriors(X, ar, **kwargs)


def test_refuses_bad_codes():
    X, ar = _data(3)
    with pytest.raises(DataError, match="NaN"):
        edge_posteriors(np.where(X == 0, np.nan, X), ar)
    bad = X.copy()
    bad[0, 1] = 7
    with pytest.raises(DataError, match="Column 1"):
        edge_posteriors(bad, ar)
    with pytest.raises(ValueError, match="one number of states"):
        edge_posteriors(X, ar[:2])
    with pytest.raises(DataError, match="non-empty"):
        edge_posteriors(X[:0], ar)


# ------------------------------------------------------------------------------ ASIA, WBC


@pytest.fixture(scope="module")
def asia():
    bn = load_network("asia")
    return bn.sample_codes(300, seed=1), bn.arities


def test_asia_and_wbc_exact_in_seconds(asia, wbc):
    edge_posteriors(*_data(3))  # the numba cache loaded (or compiled) for both routes
    edge_posteriors(*_data(3, missing=0.2))
    for X, ar in (asia, (wbc.codes, wbc.arities)):
        t = time.perf_counter()
        E = edge_posteriors(X, ar, 3, "k2", 1.0, "hz")
        assert time.perf_counter() - t < 3.0
        assert E.shape == (len(ar), len(ar))
    # ASIA: the strong links of the true network are found (in one direction or the other)
    E = edge_posteriors(*asia)
    adj = E + E.T
    for u, v in ((2, 4), (4, 7), (1, 5), (3, 5)):  # smoke-bronc, bronc-dysp, tub/lung-either
        assert adj[u, v] > 0.9


def _chain_estimates(X, ar, prior, seed, n_chains=16, n_iter=40_000, keep=400):
    """Per chain, the order-MCMC edge posterior: the average of P(u -> v | D, ≺) over its kept
    orders (what ``OrderMCMCBMA.edge_posterior_`` averages)."""
    tab = build_score_table(X, ar, 3, "k2", prior, 1.0)
    m = OrderMCMC(tab, n_iter=n_iter, burn_in=2000, n_orders=keep, n_chains=n_chains,
                  random_state=seed)
    m.run()
    return np.array([np.mean([tab.edge_probabilities(o, 0)[0] for o in c.kept], axis=0)
                     for c in m.chains])


@pytest.mark.parametrize("case, prior", [("asia", "hz"), ("wbc", "uniform")])
def test_order_mcmc_edge_posteriors_approach_the_exact_ones(case, prior, asia, wbc):
    """16 seeded chains of 40,000 iterations (400 kept orders each). Tolerance per edge, from
    the Monte Carlo error: t_{15} quantile at 1 - 0.01 / (2 n (n - 1)) (Bonferroni over the
    edges, 1 % in all) times the between-chain standard error, plus 5 / T (T = 6,400 kept
    orders) for edges too rare for the run to visit at all (an edge of posterior p is missed
    by T independent draws with probability e^{-pT}). Over 10 seeds the largest
    |estimate - exact| / tolerance was 0.55 (WBC) and 0.68 (ASIA); with the exact answer of
    the other structure prior it is above 8, so the test can tell the targets apart."""
    X, ar = asia if case == "asia" else (wbc.codes, wbc.arities)
    n = len(ar)
    exact = edge_posteriors(X, ar, 3, "k2", 1.0, prior)
    ests = _chain_estimates(X, ar, prior, seed=0)
    C, T = ests.shape[0], ests.shape[0] * 400
    est = ests.mean(axis=0)
    se = ests.std(axis=0, ddof=1) / math.sqrt(C)
    tol = stats.t.ppf(1 - 0.01 / (2 * n * (n - 1)), C - 1) * se + 5.0 / T
    assert np.all(np.abs(est - exact) <= tol), np.max(np.abs(est - exact) / tol)
    other = edge_posteriors(X, ar, 3, "k2", 1.0, "uniform" if prior == "hz" else "hz")
    assert np.any(np.abs(est - other) > tol)
