"""Scores against closed forms, BDeu score equivalence, priors and information measures."""

from __future__ import annotations

import itertools
import math

import networkx as nx
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.special import gammaln

from bnma_core import scores
from bnma_core.scores import (
    FamilyScoreCache,
    conditional_local_mutual_information,
    conditional_mutual_information,
    family_counts,
    joint_distribution,
    local_mutual_information,
    log_marginal_likelihood,
    log_structure_prior,
    mutual_information,
    posterior_cpt,
    structure_score,
)


def _independent_log_ml(data, child, parents, arities, a_fn):
    """Closed form computed independently: dictionary counting + scipy's gammaln."""
    r = arities[child]
    configs = list(itertools.product(*[range(arities[p]) for p in parents]))
    q = len(configs)
    total = 0.0
    for cfg in configs:
        mask = np.ones(len(data), bool)
        for p, v in zip(parents, cfg):
            mask &= data[:, p] == v
        n_jk = np.array([(data[mask, child] == k).sum() for k in range(r)])
        a_jk = np.full(r, a_fn(r, q))
        total += gammaln(a_jk.sum()) - gammaln(a_jk.sum() + n_jk.sum())
        total += (gammaln(a_jk + n_jk) - gammaln(a_jk)).sum()
    return total


def _random_data(seed, n=60, arities=(2, 3, 2, 3)):
    rng = np.random.default_rng(seed)
    return rng.integers(0, arities, size=(n, len(arities))).astype(np.int32), np.array(arities)


def test_hand_checked_k2_value():
    # Cooper & Herskovits: (r-1)! / (N + r - 1)! * prod_k N_k!  -> 1!/4! * 2! 1! = 1/12
    data = np.array([[0], [0], [1]], dtype=np.int32)
    assert log_marginal_likelihood(data, 0, [], np.array([2])) == pytest.approx(math.log(1 / 12))
    # with one binary parent: configs (p=0: x=0,0) (p=1: x=1) -> (1!/3! * 2!) * (1!/2! * 1!)
    data = np.array([[0, 0], [0, 0], [1, 1]], dtype=np.int32)
    expect = math.log((1 / 6 * 2) * (1 / 2))
    assert log_marginal_likelihood(data, 0, [1], np.array([2, 2])) == pytest.approx(expect)


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("parents", [[], [1], [1, 2], [3, 1, 2]])
def test_k2_and_bdeu_match_closed_form(seed, parents):
    data, ar = _random_data(seed)
    k2 = log_marginal_likelihood(data, 0, parents, ar, "k2")
    assert k2 == pytest.approx(_independent_log_ml(data, 0, parents, ar, lambda r, q: 1.0),
                               abs=1e-9)
    for ess in (1.0, 4.5):
        bdeu = log_marginal_likelihood(data, 0, parents, ar, "bdeu", ess=ess)
        ref = _independent_log_ml(data, 0, parents, ar, lambda r, q, e=ess: e / (r * q))
        assert bdeu == pytest.approx(ref, abs=1e-9)


def test_bd_with_given_alpha_equals_k2_for_ones():
    data, ar = _random_data(7)
    assert log_marginal_likelihood(data, 0, [1], ar, "bd", alpha=1.0) == pytest.approx(
        log_marginal_likelihood(data, 0, [1], ar, "k2"))
    with pytest.raises(ValueError, match="alpha"):
        log_marginal_likelihood(data, 0, [1], ar, "bd")


def test_counts_skip_missing_and_weights():
    data = np.array([[0, 1], [1, 1], [-1, 0], [1, -1], [1, 0]], dtype=np.int32)
    c = family_counts(data, 0, [1], np.array([2, 2]))
    np.testing.assert_array_equal(c, [[0, 1], [1, 1]])
    cw = family_counts(data, 0, [1], np.array([2, 2]), weights=np.ones(5))
    np.testing.assert_array_equal(c, cw)
    cw2 = family_counts(data, 0, [1], np.array([2, 2]), weights=np.arange(5.0))
    np.testing.assert_array_equal(cw2, [[0, 4], [0, 1]])


def test_posterior_cpt():
    counts = np.array([[3.0, 1.0], [0.0, 0.0]])
    cpt = posterior_cpt(counts, 1.0)
    np.testing.assert_allclose(cpt, [[4 / 6, 2 / 6], [0.5, 0.5]])


def test_hz_prior_closed_form_and_penalty():
    n = 10
    for k in range(4):
        expect = -math.log(n) - math.log(math.comb(n, k))
        assert log_structure_prior(n, k, "hz") == pytest.approx(expect)
    assert log_structure_prior(n, 0, "uniform") == 0.0
    vals = [log_structure_prior(n, k, "hz") for k in range(n // 2 + 1)]
    assert all(a > b for a, b in zip(vals, vals[1:]))
    with pytest.raises(ValueError, match="prior"):
        log_structure_prior(n, 1, "bic")


def test_bad_score_parameters():
    data, ar = _random_data(0)
    with pytest.raises(ValueError, match="Unknown score"):
        log_marginal_likelihood(data, 0, [], ar, "aic")
    with pytest.raises(ValueError, match="positive"):
        log_marginal_likelihood(data, 0, [], ar, "bdeu", ess=0.0)


def test_cache_equals_direct():
    data, ar = _random_data(3)
    cache = FamilyScoreCache(data, ar, "bdeu", 2.0, "hz")
    v = cache(0, [2, 1])
    assert v == cache(0, [1, 2]) and cache.hits == 1
    assert v == pytest.approx(scores.local_score(data, 0, [1, 2], ar, "bdeu", 2.0, "hz"))


# --- BDeu score equivalence --------------------------------------------------------------------


def _random_dag(rng, n):
    order = rng.permutation(n)
    g = nx.DiGraph()
    g.add_nodes_from(range(n))
    for a in range(n):
        for b in range(a + 1, n):
            if rng.random() < 0.5:
                g.add_edge(int(order[a]), int(order[b]))
    return g


def _covered_edges(g):
    return [(u, v) for u, v in g.edges if set(g.predecessors(v)) == set(g.predecessors(u)) | {u}]


def _score(g, data, ar, score):
    return structure_score(data, [sorted(g.predecessors(i)) for i in range(len(ar))], ar, score,
                           ess=2.0)


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 10_000), st.integers(3, 5))
def test_bdeu_is_score_equivalent(seed, n):
    """Reversing a covered edge gives a Markov-equivalent DAG (Chickering 1995): BDeu equal."""
    rng = np.random.default_rng(seed)
    ar = rng.integers(2, 4, n)
    data = rng.integers(0, ar, size=(40, n)).astype(np.int32)
    g = _random_dag(rng, n)
    for u, v in _covered_edges(g):
        h = g.copy()
        h.remove_edge(u, v)
        h.add_edge(v, u)
        assert nx.is_directed_acyclic_graph(h)
        assert _score(h, data, ar, "bdeu") == pytest.approx(_score(g, data, ar, "bdeu"), abs=1e-9)


def test_k2_is_not_score_equivalent():
    """The equivalence test above can fail: K2 differs on X->Y vs Y->X with unequal arities."""
    rng = np.random.default_rng(1)
    ar = np.array([2, 3])
    data = rng.integers(0, ar, size=(50, 2)).astype(np.int32)
    a = structure_score(data, [[], [0]], ar, "k2")
    b = structure_score(data, [[1], []], ar, "k2")
    assert abs(a - b) > 1e-6


# --- information measures ----------------------------------------------------------------------


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 10_000))
def test_local_measures_average_to_global(seed):
    rng = np.random.default_rng(seed)
    ar = np.array([rng.integers(2, 5), rng.integers(2, 4), rng.integers(2, 4)])
    data = rng.integers(0, ar, size=(80, 3)).astype(np.int32)
    w = rng.random(80) if seed % 2 else None
    p_xc = joint_distribution(data, [0, 2], ar, weights=w)
    mi = mutual_information(p_xc)
    px = p_xc.sum(axis=1)
    assert sum(px[x] * local_mutual_information(p_xc, x) for x in range(ar[0])) == \
        pytest.approx(mi, abs=1e-12)
    p = joint_distribution(data, [0, 1, 2], ar, weights=w)
    cmi = conditional_mutual_information(p)
    pxy = p.sum(axis=2)
    total = sum(pxy[a, b] * conditional_local_mutual_information(p, a, b)
                for a in range(ar[0]) for b in range(ar[1]))
    assert total == pytest.approx(cmi, abs=1e-12)
    assert mi >= -1e-12 and cmi >= -1e-12


def test_mutual_information_closed_form():
    p = np.array([[0.5, 0.0], [0.0, 0.5]])
    assert mutual_information(p) == pytest.approx(math.log(2))
    assert mutual_information(p, base=2) == pytest.approx(1.0)
    assert mutual_information(np.outer([0.3, 0.7], [0.6, 0.4])) == pytest.approx(0.0, abs=1e-15)
    # X = Y copies given C -> I(X;Y|C) = H(X|C)
    p3 = np.zeros((2, 2, 2))
    p3[0, 0, 0], p3[1, 1, 0], p3[0, 0, 1] = 0.25, 0.25, 0.5
    assert conditional_mutual_information(p3) == pytest.approx(0.5 * math.log(2))


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("smoothing", [0.0, 0.5])
def test_pairwise_cmi_kernel_matches_reference(weighted, smoothing):
    from bnma_core.scores import pairwise_conditional_mutual_information

    rng = np.random.default_rng(5)
    ar = np.array([2, 3, 4, 2])
    X = rng.integers(0, ar, size=(120, 4)).astype(np.int32)
    X[rng.random(X.shape) < 0.1] = -1
    y = rng.integers(0, 3, 120).astype(np.int32)
    w = rng.random(120) if weighted else None
    got = pairwise_conditional_mutual_information(X, y, ar, 3, w, smoothing, base=2)
    data = np.column_stack([X, y])
    far = np.append(ar, 3)
    for i in range(4):
        assert got[i, i] == 0.0
        for j in range(4):
            if i != j:
                p = joint_distribution(data, [i, j, 4], far, w, smoothing)
                assert got[i, j] == pytest.approx(conditional_mutual_information(p, 2), abs=1e-12)
