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
    g2_test,
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


# --- DirichletScore: the one home of the family log marginal likelihood -----------------------


def _lgamma_sum(counts, a):
    """Heckerman et al. (1995) eq. 8 written out with math.lgamma, cell by cell."""
    total = 0.0
    for j in range(counts.shape[0]):
        a_j, n_j = a[j].sum(), counts[j].sum()
        total += math.lgamma(a_j) - math.lgamma(a_j + n_j)
        for k in range(counts.shape[1]):
            total += math.lgamma(a[j, k] + counts[j, k]) - math.lgamma(a[j, k])
    return total


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(1, 6), st.integers(2, 4),
       st.sampled_from(["k2", "bdeu", "bd", "bd-table"]), st.floats(0.1, 10.0))
def test_dirichlet_score_equals_lgamma_sum_for_fractional_counts(seed, q, r, kind, ess):
    rng = np.random.default_rng(seed)
    counts = rng.random((q, r)) * rng.integers(0, 20, (q, r))  # fractional, some zero rows
    counts[rng.random(q) < 0.3] = 0.0
    if kind == "bd-table":
        s = scores.DirichletScore("bd", alpha=rng.uniform(0.05, 3.0, (q, r)))
    else:
        s = scores.DirichletScore(kind, ess, alpha=ess if kind == "bd" else None)
    a = s.alpha(r, q)
    expect = {"k2": 1.0, "bdeu": ess / (r * q), "bd": ess}.get(kind)
    if expect is not None:
        np.testing.assert_allclose(a, expect)
    assert s.log_ml(counts) == pytest.approx(_lgamma_sum(counts, a), abs=1e-9)
    if kind != "bd-table":
        assert scores.log_ml_counts(counts, kind, ess, ess) == pytest.approx(s.log_ml(counts),
                                                                             abs=1e-12)


def _three_var_score(s, data, w, ar, parents):
    return sum(s.local_score(data, v, pa, ar, weights=w) for v, pa in enumerate(parents))


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**32 - 1), st.floats(0.2, 5.0), st.booleans())
def test_bdeu_equal_for_markov_equivalent_three_variable_dags(seed, ess, weighted):
    """Chains a->b->c, c->b->a and the fork a<-b->c are Markov equivalent (no v-structure):
    BDeu equal, with integer or fractional (weighted) counts; the collider a->b<-c is not."""
    rng = np.random.default_rng(seed)
    ar = rng.integers(2, 4, 3)
    data = rng.integers(0, ar, size=(50, 3)).astype(np.int32)
    data[rng.random(data.shape) < 0.05] = -1
    w = rng.random(50) * 3 if weighted else None
    data = data[(data >= 0).all(axis=1)]  # complete rows: equivalence needs the same rows
    w = None if w is None else w[:len(data)]
    s = scores.DirichletScore("bdeu", ess)
    chain = _three_var_score(s, data, w, ar, [[], [0], [1]])
    back = _three_var_score(s, data, w, ar, [[1], [2], []])
    fork = _three_var_score(s, data, w, ar, [[1], [], [1]])
    assert back == pytest.approx(chain, abs=1e-9)
    assert fork == pytest.approx(chain, abs=1e-9)


def test_dirichlet_score_object_and_wrappers_agree():
    data, ar = _random_data(2)
    s = scores.DirichletScore("bdeu", 2.0)
    assert repr(s) == "DirichletScore('bdeu', ess=2)"
    v = s.local_score(data, 0, [1, 2], ar)
    assert v == log_marginal_likelihood(data, 0, [1, 2], ar, "bdeu", 2.0)
    assert v == log_marginal_likelihood(data, 0, [1, 2], ar, s)
    assert scores.dirichlet_score(s) is s
    assert FamilyScoreCache(data, ar, s, prior="uniform")(0, [1, 2]) == pytest.approx(v)
    np.testing.assert_array_equal(scores.dirichlet_alpha("bdeu", 3, 4, 2.0), s.alpha(3, 4))
    counts = family_counts(data, 0, [1], ar)
    np.testing.assert_array_equal(s.posterior_cpt(counts), posterior_cpt(counts, "bdeu", 2.0))


def test_dirichlet_score_bad_input():
    with pytest.raises(ValueError, match="Unknown score"):
        scores.DirichletScore("bic")
    with pytest.raises(ValueError, match="needs the Dirichlet hyperparameters"):
        scores.DirichletScore("bd")
    with pytest.raises(ValueError, match="must be positive"):
        scores.DirichletScore("bd", alpha=[1.0, 0.0])
    with pytest.raises(ValueError, match="do not fit"):
        scores.DirichletScore("bd", alpha=np.ones((2, 3))).alpha(2, 2)
    with pytest.raises(ValueError, match=r"\(q, r\) table"):
        scores.DirichletScore("k2").log_ml(np.ones(3))


# --- posterior-predictive CPT with a named prior -----------------------------------------------


def test_posterior_cpt_named_priors():
    counts = np.array([[3.0, 1.0, 0.0], [0.0, 0.0, 0.0]])  # q = 2, r = 3
    a = 1.0 / 6  # bdeu, ess 1: 1 / (r q)
    np.testing.assert_allclose(posterior_cpt(counts, "bdeu"),
                               [[(3 + a) / 4.5, (1 + a) / 4.5, a / 4.5], [1 / 3] * 3])
    np.testing.assert_allclose(posterior_cpt(counts, "bdeu", ess=6.0),
                               [[4 / 7, 2 / 7, 1 / 7], [1 / 3] * 3])
    k2 = posterior_cpt(counts, "k2")
    np.testing.assert_array_equal(k2, posterior_cpt(counts, "laplace"))
    np.testing.assert_array_equal(k2, posterior_cpt(counts, 1.0))
    np.testing.assert_allclose(k2[0], [4 / 7, 2 / 7, 1 / 7])
    np.testing.assert_array_equal(posterior_cpt(counts, alpha=0.5), posterior_cpt(counts, 0.5))
    # stacks of tables and a zero pseudo-count on a padded state
    stack = np.stack([counts, counts[::-1]])
    np.testing.assert_allclose(posterior_cpt(stack, "bdeu")[1], posterior_cpt(counts[::-1],
                                                                              "bdeu"))
    padded = posterior_cpt(np.array([[2.0, 0.0]]), np.array([1.0, 0.0]))
    np.testing.assert_array_equal(padded, [[1.0, 0.0]])
    for bad, match in (("dirichlet", "Unknown CPT prior"), (-0.5, ">= 0"),
                       (0.0, "no counts and no pseudo-counts"), (None, "prior must be")):
        with pytest.raises(ValueError, match=match):
            posterior_cpt(counts, bad)


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**32 - 1), st.floats(0.1, 10.0))
def test_posterior_cpt_rows_sum_to_one_and_match_the_formula(seed, ess):
    rng = np.random.default_rng(seed)
    q, r = rng.integers(1, 7), rng.integers(2, 5)
    counts = rng.random((q, r)) * rng.integers(0, 9, (q, r))
    cpt = posterior_cpt(counts, "bdeu", ess)
    a = ess / (r * q)
    np.testing.assert_allclose(cpt, (counts + a) / (counts.sum(1, keepdims=True) + ess / q),
                               rtol=1e-12)
    np.testing.assert_allclose(cpt.sum(axis=1), 1.0, rtol=1e-12)


# --- configuration index ----------------------------------------------------------------------


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_config_indices_first_parent_fastest(seed):
    from bnma_core.kernels.counting import config_indices, parent_strides

    rng = np.random.default_rng(seed)
    ar = rng.integers(1, 5, 5).astype(np.int64)
    pa = rng.permutation(5)[: rng.integers(0, 5)].astype(np.int64)
    data = rng.integers(0, ar, size=(30, 5)).astype(np.int32)
    data[rng.random(data.shape) < 0.1] = -1
    s = parent_strides(pa, ar)
    np.testing.assert_array_equal(s, np.cumprod(np.r_[1, ar[pa][:-1]])[: len(pa)])
    got = config_indices(data, pa, ar)
    for row in range(30):
        vals = data[row, pa]
        if (vals < 0).any():
            assert got[row] == -1
        else:  # the reference: numpy's Fortran-order (first index fastest) ravel
            assert got[row] == (np.ravel_multi_index(tuple(vals), tuple(ar[pa]), order="F")
                                if len(pa) else 0)


def test_joint_counts_and_distribution_agree():
    data, ar = _random_data(4)
    data[::7, 1] = -1
    c = scores.joint_counts(data, [0, 1, 3], ar)
    np.testing.assert_allclose(joint_distribution(data, [0, 1, 3], ar), c / c.sum())
    assert c.sum() == (data[:, [0, 1, 3]] >= 0).all(axis=1).sum()


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 2**32 - 1), st.floats(0.5, 1000.0))
def test_batched_local_measures_equal_scalar_ones_and_are_scale_free(seed, scale):
    rng = np.random.default_rng(seed)
    rx, ry, m = rng.integers(2, 4), rng.integers(2, 4), rng.integers(2, 4)
    n = rng.integers(0, 6, (rx, ry, m)).astype(float)
    p = n / n.sum() if n.sum() else n
    n_c = n.sum(axis=(0, 1))
    lmi = scores.local_mutual_information_counts(scale * n.sum(axis=1), scale * n_c, 2.0)
    clmi = scores.conditional_local_mutual_information_counts(
        n, n.sum(axis=1)[:, None, :], n.sum(axis=0)[None, :, :], n_c, 2.0)
    if n.sum() == 0:
        assert (lmi == 0).all() and (clmi == 0).all()
        return
    for a in range(rx):
        assert lmi[a] == pytest.approx(local_mutual_information(p.sum(axis=1), a, 2.0),
                                       abs=1e-12)
        for b in range(ry):
            assert clmi[a, b] == pytest.approx(
                conditional_local_mutual_information(p, a, b, 2.0), abs=1e-12)


def test_a_count_table_too_large_is_refused_before_allocation(monkeypatch):
    """KDB k = 8 on 10-valued columns asked for 2e8-cell tables; the size is named instead."""
    from bnma_core import scores
    from bnma_core.data import DataError

    data = np.zeros((5, 4), dtype=np.int32)
    ar = np.array([10, 10, 10, 2])
    assert scores.family_counts(data, 3, [0, 1, 2], ar).shape == (1000, 2)
    monkeypatch.setattr(scores, "MAX_DENSE_FAMILY_CELLS", 1999)
    with pytest.raises(DataError, match=r"variable 3 with 3 parents would have 2e\+03 cells"):
        scores.family_counts(data, 3, [0, 1, 2], ar)
    assert scores.family_counts(data, 3, [0, 1], ar).shape == (100, 2)


# ------------------------------------------------------------------ G² independence test
def test_g2_test_detects_dependence_and_independence():
    rng = np.random.default_rng(0)
    a = rng.integers(0, 2, 2000)
    b = np.where(rng.random(2000) < 0.9, a, 1 - a)
    z = rng.integers(0, 2, 2000)
    D = np.column_stack([a, b, z])
    ar = np.array([2, 2, 2])
    assert g2_test(D, 0, 1, (), ar) < 1e-10
    assert g2_test(D, 0, 2, (), ar) > 0.01
    c = np.where(rng.random(2000) < 0.9, b, 1 - b)     # a - b - c chain: a ⊥ c | b
    D = np.column_stack([a, b, c])
    assert g2_test(D, 0, 2, (), ar) < 1e-10
    assert g2_test(D, 0, 2, (1,), ar) > 0.01


def test_g2_test_p_value_by_hand():
    from scipy.stats import chi2
    rng = np.random.default_rng(4)
    D = np.column_stack([rng.integers(0, 3, 300), rng.integers(0, 2, 300),
                         rng.integers(0, 2, 300)])
    ar = np.array([3, 2, 2])
    g2 = 0.0
    for z in range(2):
        sub = D[D[:, 2] == z]
        n = np.zeros((3, 2))
        np.add.at(n, (sub[:, 0], sub[:, 1]), 1)
        e = n.sum(1, keepdims=True) * n.sum(0, keepdims=True) / n.sum()
        g2 += 2 * np.sum(np.where(n > 0, n * np.log(np.where(n > 0, n, 1) / e), 0))
    assert g2_test(D, 0, 1, (2,), ar) == pytest.approx(chi2.sf(g2, 2 * 1 * 2), rel=1e-9)
    rows, mult = np.unique(D, axis=0, return_counts=True)         # distinct rows, weighted
    assert g2_test(rows, 0, 1, (2,), ar, mult.astype(float)) == pytest.approx(
        g2_test(D, 0, 1, (2,), ar), rel=1e-12)


def _g2_numpy(data, x, y, z, arities, weights=None):
    """The former numpy body of g2_test (joint_counts + array arithmetic): the oracle of the
    numba kernel."""
    from bnma_core.scores import joint_counts

    n = joint_counts(data, [x, y, *z], arities, weights)
    nxz = n.sum(axis=1, keepdims=True)
    nyz = n.sum(axis=0, keepdims=True)
    nz = n.sum(axis=(0, 1), keepdims=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        term = np.where(n > 0, n * np.log(n * nz / (nxz * nyz)), 0.0)
    return 2.0 * float(term.sum())


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 10_000), n_rows=st.integers(1, 120), n_z=st.integers(0, 3),
       weighted=st.booleans(), missing=st.booleans())
def test_g2_kernel_equals_the_numpy_statistic(seed, n_rows, n_z, weighted, missing):
    from bnma_core.kernels.citests import g2_statistic

    rng = np.random.default_rng(seed)
    n_vars = 2 + n_z + 1
    ar = rng.integers(2, 4, n_vars).astype(np.int64)
    D = np.column_stack([rng.integers(0, a, n_rows) for a in ar]).astype(np.int64)
    if missing:
        D[rng.random(D.shape) < 0.1] = -1
    w = rng.integers(1, 5, n_rows).astype(float) if weighted else None
    z = tuple(int(v) for v in rng.permutation(np.arange(2, n_vars))[:n_z])
    ref = _g2_numpy(D, 0, 1, z, ar, w)
    got = g2_statistic(D, np.ones(n_rows) if w is None else w, 0, 1,
                       np.asarray(z, dtype=np.int64), ar)
    assert got == pytest.approx(ref, rel=1e-9, abs=1e-9)


def test_g2_test_on_a_table_too_large_to_allocate():
    """Twelve 10-state variables: 10^12 cells, counted from the sorted rows; the statistic and
    p-value of a by-hand count of the non-empty cells (p ≈ 1 with so many degrees of
    freedom). Twenty conditioning variables: the degrees of freedom pass int64 and are taken
    in floating point (p = 1)."""
    from collections import Counter

    from scipy.stats import chi2

    rng = np.random.default_rng(3)
    h = rng.integers(0, 10, 400)
    xy = [np.where(rng.random(400) < 0.7, h, rng.integers(0, 10, 400)) for _ in range(2)]
    zs = [np.where(rng.random(400) < 0.97, 0, rng.integers(0, 10, 400)) for _ in range(10)]
    D = np.column_stack(xy + zs)                  # Z mostly 0: slices with many rows
    ar = np.full(12, 10)
    z = tuple(range(2, 12))
    n = Counter(map(tuple, D))
    nxz, nyz, nz = Counter(), Counter(), Counter()
    for (x, y, *zz), c in n.items():
        nxz[(x, *zz)] += c
        nyz[(y, *zz)] += c
        nz[tuple(zz)] += c
    g2 = 2 * sum(c * math.log(c * nz[tuple(zz)] / (nxz[(x, *zz)] * nyz[(y, *zz)]))
                 for (x, y, *zz), c in n.items())
    assert g2 > 0
    assert g2_test(D, 0, 1, z, ar) == pytest.approx(chi2.sf(g2, 81 * 10**10), rel=1e-9)
    wide = np.column_stack([D, D[:, 2:]])          # the same slices, df = 81 * 10^20
    assert g2_test(wide, 0, 1, tuple(range(2, 22)), np.full(22, 10)) == 1.0
    from bnma_core.kernels.citests import g2_statistic

    assert g2_statistic(D.astype(np.int64), np.ones(len(D)), 0, 1, np.array(z),
                        ar.astype(np.int64)) == pytest.approx(g2, rel=1e-12)
