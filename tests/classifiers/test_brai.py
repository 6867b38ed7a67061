"""B-RAI (Rohekar et al. 2018) and RAI (Yehezkel & Lerner 2009): skeleton recovery, the
recursive decomposition, score-proportional sampling from the generating tree, seeds."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as hs

from bnma_core.classifiers.brai import BRAI
from bnma_core.network import DiscreteBN
from bnma_core.scores import DirichletScore, family_counts
from bnma_core.structure.cpdag import PDAG, cpdag_key, dag_to_cpdag, parents_to_dag
from bnma_core.structure.rai import (
    _assemble,
    _Cookie,
    _Leaf,
    _Multi,
    _sample,
    _split,
    rai,
)


def _five_node_network() -> DiscreteBN:
    """A -> C <- B, C -> D -> E, all binary with strong dependencies."""
    names = ["A", "B", "C", "D", "E"]
    states = [["0", "1"]] * 5
    parents = [[], [], ["A", "B"], ["C"], ["D"]]
    cpts = [np.array([[0.5, 0.5]]), np.array([[0.4, 0.6]]),
            np.array([[0.9, 0.1], [0.2, 0.8], [0.3, 0.7], [0.05, 0.95]]),
            np.array([[0.85, 0.15], [0.15, 0.85]]),
            np.array([[0.8, 0.2], [0.1, 0.9]])]
    return DiscreteBN(names, states, parents, cpts, name="five")


def _skeleton(cpdag) -> set[frozenset]:
    arcs, und = cpdag_key(cpdag)
    return {frozenset(a) for a in arcs} | set(und)


@pytest.mark.parametrize("net_name", ["five", "chain", "collider"])
def test_rai_recovers_the_true_cpdag_from_a_large_sample(net_name, small_networks):
    net = _five_node_network() if net_name == "five" else small_networks[net_name]
    # Each independence is accepted by a G² test at 5 %, so a given sample keeps a spurious edge
    # with probability about 0.05 (seed 1 does so for the chain: p = 0.012 for A ⊥ C | B).
    codes = net.sample_codes(20000, seed=3)
    learned = rai(codes, net.arities)
    truth = dag_to_cpdag(parents_to_dag([list(p) for p in net.parents]))
    assert _skeleton(learned) == _skeleton(truth)
    assert cpdag_key(learned) == cpdag_key(truth)       # v-structures and R1 too


def test_rai_order_zero_only_removes_marginal_independences():
    net = _five_node_network()
    codes = net.sample_codes(20000, seed=2)
    skel = _skeleton(rai(codes, net.arities, max_order=0))
    assert frozenset((0, 1)) not in skel                # A ⊥ B marginally
    assert frozenset((2, 4)) in skel                    # C - E needs order 1 (given D)
    assert _skeleton(rai(codes, net.arities)) < skel
    with pytest.raises(ValueError, match="complete codes"):
        rai(np.where(codes == 1, -1, codes), net.arities)
    with pytest.raises(ValueError, match="one arity per"):
        rai(codes, net.arities[:3])


def test_split_finds_the_descendant_and_the_ancestor_components():
    g = PDAG(6)
    for u, v in [(0, 2), (1, 2)]:                       # 0 -> 2 <- 1, 2 --- 3, 4 --- 5
        g.orient(u, v)
    for u, v in [(2, 3), (4, 5)]:
        g.add_undirected(u, v)
    desc, ancs, anc = _split(g, list(range(6)))
    # 2 and 3 are lowest (3 is joined to 2 by an undirected edge); 4 --- 5 is not a parent of
    # anyone, so it is lowest as well; 0 and 1 are separate ancestor components.
    assert desc == [2, 3, 4, 5]
    assert ancs == [[0], [1]] and anc == [0, 1]
    g.orient(5, 0)                                      # now 5 is a parent: 4 --- 5 goes up
    desc, ancs, _ = _split(g, list(range(6)))
    assert desc == [2, 3] and ancs == [[0, 4, 5], [1]]


def test_sampling_picks_cookies_in_proportion_to_their_posterior():
    a = _Leaf((0,), {0: (frozenset(), frozenset())}, np.log(1.0))
    b = _Leaf((0,), {0: (frozenset({1}), frozenset())}, np.log(3.0))
    r = _Leaf((1,), {1: (frozenset(), frozenset())}, 0.0)
    tree = _Multi((0, 1), [_Cookie([r], a), _Cookie([r], b)])
    rng = np.random.default_rng(0)
    picks = [1 in _sample(tree, rng)[0][0][0] for _ in range(4000)]
    assert np.mean(picks) == pytest.approx(0.75, abs=0.025)
    dead = _Multi((0, 1), [_Cookie([r], _Leaf((0,), a.edges, -np.inf)),
                           _Cookie([r], _Leaf((0,), b.edges, -np.inf))])
    picks = [1 in _sample(dead, rng)[0][0][0] for _ in range(2000)]   # all -inf: uniform
    assert np.mean(picks) == pytest.approx(0.5, abs=0.04)
    edges, score = _sample(tree, np.random.default_rng(1))
    assert set(edges) == {0, 1} and score in (0.0, pytest.approx(np.log(3.0)))
    assert 1 in _assemble(edges, 2).par[0] or not _assemble(edges, 2).par[0]


def _class_data(n=3000, seed=0):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    x0 = np.where(rng.random(n) < 0.85, y, 1 - y)
    x1 = np.where(rng.random(n) < 0.85, x0, 1 - x0)     # x1 - x0 - y
    x2 = rng.integers(0, 2, n)                          # independent
    x3 = np.where(rng.random(n) < 0.8, y, 1 - y)        # y - x3
    return np.column_stack([x0, x1, x2, x3]), y


def test_s1_with_one_structure_is_plain_rai_and_ignores_the_seed():
    X, y = _class_data()
    one = BRAI(n_structures=1, s=1, random_state=0).fit(X, y)
    other = BRAI(n_structures=1, s=1, random_state=99).fit(X, y)
    assert len(one.structures_) == 1 and one.weights_.tolist() == [1.0]
    assert one.structures_[0].parents == other.structures_[0].parents
    ref = rai(np.column_stack([X, y]), np.array([2, 2, 2, 2, 2]))
    assert cpdag_key(one.structures_[0].cpdag) == cpdag_key(ref)
    assert _skeleton(ref) == {frozenset((0, 4)), frozenset((0, 1)), frozenset((3, 4))}
    assert one.tree_size_["internal"] >= 1 and one.tree_size_["ci_tests"] > 0


def test_brai_scores_are_bdeu_and_weights_are_sampling_frequencies():
    X, y = _class_data(n=400, seed=3)
    clf = BRAI(n_structures=30, random_state=5).fit(X, y)
    np.testing.assert_allclose(clf.weights_.sum(), 1.0)
    assert np.allclose(clf.weights_ * 30, np.round(clf.weights_ * 30))
    data = np.column_stack([X, y])
    ar = np.full(5, 2)
    bdeu = DirichletScore("bdeu", 1.0)
    for st in clf.structures_:
        ref = sum(bdeu.log_ml(family_counts(data, v, list(p), ar))
                  for v, p in enumerate(st.parents))
        assert st.log_score == pytest.approx(ref, abs=1e-9)
        assert len(st.dag.edges) == st.n_edges          # a DAG over all five variables


def test_brai_recovers_the_class_markov_blanket_and_seeds_reproduce():
    X, y = _class_data()
    a = BRAI(n_structures=20, random_state=1).fit(X, y)
    b = BRAI(n_structures=20, random_state=1).fit(X, y)
    assert [s.parents for s in a.structures_] == [s.parents for s in b.structures_]
    np.testing.assert_array_equal(a.weights_, b.weights_)
    for s in a.structures_:
        skel = {frozenset((p, v)) for v, ps in enumerate(s.parents) for p in ps}
        assert {frozenset((0, 4)), frozenset((0, 1)), frozenset((3, 4))} <= skel
        assert frozenset((1, 4)) not in skel            # x1 ⊥ y | x0
    Xt = X[:50].astype(float)
    Xt[np.random.default_rng(0).random(Xt.shape) < 0.3] = np.nan
    Xt[0] = np.nan
    P = a.predict_proba(Xt)
    assert np.isfinite(P).all()
    np.testing.assert_allclose(P.sum(axis=1), 1.0)
    np.testing.assert_array_equal(P, b.predict_proba(Xt))
    np.testing.assert_allclose(P[0], np.bincount(y, minlength=2) / len(y), atol=0.02)


@pytest.mark.parametrize("kw, msg", [({"significance": 0.0}, "significance must be a number in"),
                                     ({"significance": "x"}, "significance must be a number in"),
                                     ({"s": 0}, "s must be a positive integer"),
                                     ({"max_order": -1}, "max_order must be None"),
                                     ({"n_structures": 1.5}, "n_structures must be")])
def test_brai_refuses_bad_parameters(kw, msg):
    X, y = _class_data(n=50)
    with pytest.raises(ValueError, match=msg):
        BRAI(**kw).fit(X, y)


# ------------------------------------------------------- results pinned across speed-ups
def _reference_problems():
    """The problems of ``tests/fixtures/brai_reference.json``: the outputs of the implementation
    before the thinning kernel and the other speed-ups (main at 0e0a183), which must not change
    any result for a given seed."""
    from bnma_core.network import load_network

    out = []
    rng = np.random.default_rng(0)
    n = 600
    y = rng.integers(0, 2, n)
    x0 = np.where(rng.random(n) < 0.85, y, 1 - y)
    x1 = np.where(rng.random(n) < 0.85, x0, 1 - x0)
    x2 = rng.integers(0, 3, n)
    x3 = np.where(rng.random(n) < 0.8, y, 1 - y)
    x4 = (x1 + x2 + (rng.random(n) < 0.3)) % 3
    out.append(("synth5", np.column_stack([x0, x1, x2, x3, x4]), y, {"random_state": 0}))
    codes = load_network("asia").sample_codes(1500, seed=4)
    out.append(("asia", codes[:, :-1], codes[:, -1], {"random_state": 3, "n_structures": 40}))
    rng = np.random.default_rng(7)          # mixed arities, many weak dependencies: deep trees
    n, k = 800, 9
    ar = rng.integers(2, 5, k)
    Z = np.zeros((n, k), dtype=int)
    for j in range(k):
        base = rng.integers(0, ar[j], n)
        if j:
            p = rng.integers(0, j, 2)
            base = np.where(rng.random(n) < 0.6, (Z[:, p[0]] + 2 * Z[:, p[1]]) % ar[j], base)
        Z[:, j] = base
    out.append(("random9", Z[:, 1:], Z[:, 0], {"random_state": 11}))
    out.append(("random9_s2_a20", Z[:, 1:], Z[:, 0],
                {"random_state": 2, "s": 2, "alpha": 0.2, "n_structures": 25}))
    out.append(("random9_mo1", Z[:, 1:], Z[:, 0], {"random_state": 5, "max_order": 1}))
    return out


@pytest.mark.parametrize("problem", _reference_problems(), ids=lambda p: p[0])
def test_brai_results_equal_the_reference_implementation(problem):
    import json
    from pathlib import Path

    name, X, y, kw = problem
    fixture = Path(__file__).parents[1] / "fixtures" / "brai_reference.json"
    ref = json.loads(fixture.read_text())[name]
    assert ref["kw"] == kw
    # the fixture's kw keep the significance level's former name, alpha
    est = BRAI(**{("significance" if k == "alpha" else k): v for k, v in kw.items()}).fit(X, y)
    Xt = X[:60].astype(float)
    Xt[np.random.default_rng(1).random(Xt.shape) < 0.2] = np.nan
    assert est.tree_size_ == ref["tree"]
    assert [list(map(list, s.parents)) for s in est.structures_] == ref["parents"]
    np.testing.assert_allclose([s.log_score for s in est.structures_], ref["scores"],
                               rtol=1e-13, atol=0)
    np.testing.assert_allclose(est.weights_, ref["weights"], rtol=1e-11, atol=1e-15)
    # structures bit for bit; the BDeu scores sum their terms from cached cumulative logs
    # (kernels.counting.log_rising; the last bit moves against the fixture's lgamma), and the
    # probabilities pass through numpy's vectorised sums, whose last bit depends on the CPU's
    # SIMD width (random9_mo1, row 35, differs by one ulp on an AMD EPYC): to 1e-13
    np.testing.assert_allclose(est.predict_proba(Xt), ref["proba"], rtol=1e-13, atol=1e-15)


@pytest.mark.parametrize("cmi", [None, 0.002, 0.02])
@pytest.mark.parametrize("seed", range(6))
def test_thinning_kernel_equals_the_python_thinning_step(seed, cmi):
    from itertools import combinations

    from bnma_core.structure.rai import _BootCI, _CITest, _thin, _thin_fast

    rng = np.random.default_rng(seed)
    n, rows = 7, 300
    ar = rng.integers(2, 4, n)
    data = rng.integers(0, ar, (rows, n))
    data[:, 3] = (data[:, 1] + data[:, 2]) % ar[3]          # some dependence
    w = rng.integers(1, 4, rows).astype(float)
    g = PDAG(n, complete=True)
    for a, b in combinations(range(n), 2):                  # a random partially directed graph
        u = rng.random()
        if u < 0.3:
            g.delete(a, b)
        elif u < 0.5:
            g.orient(a, b)
    pairs = [(a, b) for a, b in combinations(range(n), 2) if rng.random() < 0.8]
    for order in range(4):
        g1, g2, s1, s2 = g.copy(), g.copy(), {}, {}
        ci = _CITest(data, ar, 0.05, w, cmi)
        _thin(g1, s1, pairs, order, ci)
        fast = _BootCI(np.ascontiguousarray(data.T, dtype=np.uint8), w, ar.astype(np.int64),
                       0.05, cmi)
        _thin_fast(g2, s2, pairs, order, fast)
        assert (g1.par, g1.und, s1, ci.n_tests) == (g2.par, g2.und, s2, fast.n_tests)


def _random_tree(rng, depth, s, next_node):
    """A random generating tree with −∞ leaves (nodes with no consistent extension)."""
    def leaf():
        v = next_node()
        score = -np.inf if rng.random() < 0.15 else float(rng.normal(-50, 5))
        return _Leaf((v,), {v: (frozenset(), frozenset())}, score)

    if depth == 0 or rng.random() < 0.2:
        return leaf()
    cookies = []
    for _ in range(s):
        ancestors = [_random_tree(rng, depth - 1, s, next_node)
                     for _ in range(int(rng.integers(0, 3)))]
        cookies.append(_Cookie(ancestors, _random_tree(rng, depth - 1, s, next_node)))
    return _Multi((), cookies)


@pytest.mark.parametrize("seed, s", [(0, 3), (1, 3), (2, 2), (3, 1), (4, 5), (5, 3)])
def test_batched_sampling_equals_one_structure_at_a_time(seed, s):
    from itertools import count

    from bnma_core.structure.rai import _sample_many

    counter = count()
    root = _random_tree(np.random.default_rng(seed), 5, s, lambda: next(counter))
    a, b = np.random.default_rng(seed + 100), np.random.default_rng(seed + 100)
    many = _sample_many(root, a, 40)
    one = [_sample(root, b)[0] for _ in range(40)]
    assert many == one
    assert [list(m) for m in many] == [list(o) for o in one]        # same key order too
    assert a.bit_generator.state == b.bit_generator.state


def _split_networkx(g, en):
    """The former networkx version of :func:`_split` (the reference)."""
    import networkx as nx

    ens = set(en)
    parents = {u for v in en for u in g.par[v] & ens}
    und = nx.Graph()
    und.add_nodes_from(en)
    und.add_edges_from((u, v) for v in en for u in g.und[v] & ens)
    desc = [v for v in en if v not in parents
            and not (nx.node_connected_component(und, v) & parents)]
    anc = [v for v in en if v not in set(desc)]
    ga = nx.Graph()
    ga.add_nodes_from(anc)
    aset = set(anc)
    ga.add_edges_from((u, v) for v in anc for u in (g.par[v] | g.und[v]) & aset)
    comps = sorted((sorted(c) for c in nx.connected_components(ga)), key=lambda c: c[0])
    return desc, comps, anc


@pytest.mark.parametrize("seed", range(30))
def test_split_equals_the_networkx_version(seed):
    from itertools import combinations

    rng = np.random.default_rng(seed)
    n = 9
    g = PDAG(n, complete=True)
    for a, b in combinations(range(n), 2):
        u = rng.random()
        if u < 0.55:
            g.delete(a, b)
        elif u < 0.8:
            g.orient(a, b) if rng.random() < 0.5 else g.orient(b, a)
    en = sorted(rng.choice(n, int(rng.integers(1, n + 1)), replace=False).tolist())
    assert _split(g, en) == _split_networkx(g, en)


@settings(max_examples=200, deadline=None)
@given(seed=hs.integers(0, 10_000), n_rows=hs.integers(0, 80), n_z=hs.integers(0, 3),
       weights=hs.sampled_from(["counts", "fractional"]), missing=hs.booleans())
def test_sorted_rows_g2_equals_the_dense_table_bit_for_bit(seed, n_rows, n_z, weights,
                                                             missing):
    """The sorted-rows count of a table too large to allocate gives the dense table's G² to
    the last bit (the same cell sums in the same order), fractional weights included."""
    from bnma_core.kernels.citests import _half_g2_sorted, g2_statistic

    rng = np.random.default_rng(seed)
    ar = rng.integers(2, 5, 2 + n_z).astype(np.int64)
    D = np.zeros((n_rows, 2 + n_z), dtype=np.int64)
    for v, a in enumerate(ar):
        D[:, v] = rng.integers(0, a, n_rows)
    if missing:
        D[rng.random(D.shape) < 0.1] = -1
    w = (rng.integers(0, 4, n_rows).astype(float) if weights == "counts"
         else rng.random(n_rows) * 3)
    z = np.arange(2, 2 + n_z, dtype=np.int64)
    ok = (D >= 0).all(axis=1)
    codes = np.ascontiguousarray(np.vstack([D[ok, 1], D[ok, 0], *(D[ok, v] for v in z)])
                                 .reshape(2 + n_z, -1))
    sparse = 2.0 * _half_g2_sorted(codes, np.ascontiguousarray(w[ok]), int(ar[0]), int(ar[1]))
    assert sparse == g2_statistic(D, w, 0, 1, z, ar)


def test_thinning_on_tables_too_large_to_allocate():
    """Twelve 10-state variables, orders 9 and 10: each test's table has 10^11 or 10^12 cells
    (0.8 TB and more as a dense table); the kernel and the Python path both count from the
    sorted rows and decide alike."""
    from itertools import combinations

    from bnma_core.structure.rai import _BootCI, _CITest, _thin, _thin_fast

    rng = np.random.default_rng(0)
    n, rows = 12, 150
    h = rng.integers(0, 10, rows)
    data = np.column_stack([np.where(rng.random(rows) < 0.5, h, rng.integers(0, 10, rows))
                            for _ in range(n)])
    ar = np.full(n, 10)
    w = rng.integers(1, 3, rows).astype(float)
    pairs = list(combinations(range(n), 2))[:12]
    for order, cmi in [(9, None), (9, 0.5), (10, None)]:
        g1, g2 = PDAG(n, complete=True), PDAG(n, complete=True)
        s1, s2 = {}, {}
        ci = _CITest(data, ar, 0.05, w, cmi)
        _thin(g1, s1, pairs, order, ci)
        fast = _BootCI(np.ascontiguousarray(data.T, dtype=np.uint8), w, ar.astype(np.int64),
                       0.05, cmi)
        _thin_fast(g2, s2, pairs, order, fast)
        assert ci.n_tests > 0
        assert (g1.par, g1.und, s1, ci.n_tests) == (g2.par, g2.und, s2, fast.n_tests)


def test_bootstrap_columns_selects_the_drawn_rows():
    from bnma_core.kernels.citests import bootstrap_columns

    rng = np.random.default_rng(0)
    cols = rng.integers(0, 3, (4, 50)).astype(np.uint8)
    counts = rng.integers(0, 3, 50)
    sel, w = bootstrap_columns(cols, counts)
    np.testing.assert_array_equal(sel, cols[:, counts > 0])
    np.testing.assert_array_equal(w, counts[counts > 0].astype(float))


@pytest.mark.parametrize("seed", range(4))
def test_cmi_threshold_decision_by_hand(seed):
    """The reference code's test (causality-lab ``CondIndepCMI``): independent when the
    empirical CMI in nats, sum_xyz p(x,y,z) log(p(x,y|z) / (p(x|z) p(y|z))), is at most the
    threshold — computed here from a weighted contingency table in numpy."""
    from bnma_core.structure.rai import _CITest

    rng = np.random.default_rng(seed)
    n, rows = 5, 400
    ar = rng.integers(2, 4, n)
    data = rng.integers(0, ar, (rows, n))
    data[:, 2] = np.where(rng.random(rows) < 0.3, data[:, 0] % ar[2], data[:, 2])
    w = rng.integers(1, 4, rows).astype(float)
    for x, y, z in [(0, 2, ()), (0, 1, (3,)), (1, 2, (0, 4)), (0, 2, (1,))]:
        shape = [ar[x], ar[y], *[ar[v] for v in z]]
        t = np.zeros(shape)
        np.add.at(t, tuple(data[:, v] for v in (x, y, *z)), w)
        t = t.reshape(ar[x], ar[y], -1)
        nz, nxz, nyz = t.sum((0, 1)), t.sum(1), t.sum(0)
        with np.errstate(divide="ignore", invalid="ignore"):
            terms = t * np.log(t * nz[None, None] / (nxz[:, None] * nyz[None]))
        cmi = np.nansum(terms) / w.sum()
        for thr in (cmi * 0.999, cmi * 1.001):
            ci = _CITest(data, ar, 0.05, w, thr)
            assert ci.independent(x, y, z) == (cmi <= thr)


def test_cmi_threshold_prunes_more_as_it_grows():
    """A larger CMI threshold accepts more independences: fewer edges, a smaller tree."""
    rng = np.random.default_rng(0)
    X = rng.integers(0, 2, (300, 5))
    X[:, 1] = np.where(rng.random(300) < 0.8, X[:, 0], X[:, 1])
    y = np.where(rng.random(300) < 0.8, X[:, 1], 1 - X[:, 1])
    small = BRAI(n_structures=20, cmi_threshold=0.001, random_state=0).fit(X, y)
    large = BRAI(n_structures=20, cmi_threshold=0.05, random_state=0).fit(X, y)
    assert large.tree_size_["ci_tests"] <= small.tree_size_["ci_tests"]
    assert np.allclose(large.predict_proba(X).sum(1), 1.0)
    with pytest.raises(ValueError, match="cmi_threshold"):
        BRAI(cmi_threshold=-1).fit(X, y)


# ------------------------------------------------------------------ the size guard (issue 12)
def _latent_data(n: int = 1000, p: int = 6, seed: int = 0):
    """Every variable a noisy copy of one hidden bit: all pairs stay dependent given any other
    observed variables, so RAI climbs to high orders and the B-RAI tree grows fast."""
    rng = np.random.default_rng(seed)
    h = rng.integers(0, 2, n)
    X = np.column_stack([np.where(rng.random(n) < 0.85, h, 1 - h) for _ in range(p)])
    return X, np.where(rng.random(n) < 0.85, h, 1 - h)


def _builder(X, y, max_order=None, max_tests=None):
    from bnma_core.structure.rai import GeneratingTree

    data = np.column_stack([X, y]).astype(np.int64)
    ar = np.full(data.shape[1], 2, dtype=np.int64)
    return GeneratingTree(data, ar, 0.05, 3, max_order, DirichletScore("bdeu", 1.0),
                        np.random.default_rng(0), None, max_tests)


def test_size_guard_refuses_before_building_the_tree_and_names_a_cap_that_fits(monkeypatch):
    import re

    from bnma_core.structure import rai as R
    from bnma_core.structure.exact import ResourceLimitError

    X, y = _latent_data()
    full = BRAI(n_structures=5, random_state=0).fit(X, y)
    est = full.size_estimate_["estimated_ci_tests"]
    assert full.size_estimate_["rai_max_order"] >= 3
    limit = int(est // 4)

    def never(*a, **k):
        raise AssertionError("the tree was built although the estimate exceeds the limit")

    with monkeypatch.context() as m:
        m.setattr(R.GeneratingTree, "learn", never)
        with pytest.raises(ResourceLimitError, match="max_ci_tests=") as info:
            BRAI(n_structures=5, max_ci_tests=limit, random_state=0).fit(X, y)
    msg = str(info.value)
    assert f"about {est:.2g} CI tests" in msg and "cmi_threshold" in msg
    cap = int(re.search(r"max_order=(\d+)", msg).group(1))
    capped = BRAI(n_structures=5, max_order=cap, max_ci_tests=limit, random_state=0).fit(X, y)
    assert capped.size_estimate_["estimated_ci_tests"] <= limit
    too_big = BRAI(n_structures=5, max_order=cap + 1, max_ci_tests=limit, random_state=0)
    with pytest.raises(ResourceLimitError):
        too_big.fit(X, y)
    # no limit: no estimate, the same tree and predictions as under a generous limit
    free = BRAI(n_structures=5, max_ci_tests=None, random_state=0).fit(X, y)
    assert free.size_estimate_ is None and free.tree_size_ == full.tree_size_
    np.testing.assert_array_equal(free.predict_proba(X), full.predict_proba(X))


def test_size_estimate_prices_every_order_cap_from_one_rai_run():
    """Calls of plain RAI up to order k are the same with max_order = k: the remedy the guard
    proposes is priced exactly, from the same run."""
    X, y = _latent_data()
    calls = _builder(X, y).rai_calls()
    top = max(o for o, _ in calls)
    assert top >= 3
    for k in range(top + 1):
        assert _builder(X, y, max_order=k).rai_calls() == [c for c in calls if c[0] <= k]


@pytest.mark.parametrize("n, p", [(500, 6), (1000, 6), (1000, 8)])
def test_size_estimate_is_within_a_small_factor_of_the_tree(n, p):
    clf = BRAI(n_structures=5, random_state=0).fit(*_latent_data(n, p))
    ratio = clf.tree_size_["ci_tests"] / clf.size_estimate_["estimated_ci_tests"]
    assert 0.4 <= ratio <= 2.5, ratio


def test_a_tree_that_outgrows_the_limit_is_stopped_with_the_remedies():
    from bnma_core.structure.exact import ResourceLimitError

    X, y = _latent_data()
    tb = _builder(X, y, max_tests=50)
    with pytest.raises(ResourceLimitError, match="stopped after .* max_ci_tests=50"):
        tb.build()


@pytest.mark.parametrize("bad", [0, -5, True, "many", float("inf"), float("nan")])
def test_max_ci_tests_must_be_none_or_a_positive_number(bad):
    X, y = _class_data(n=50)
    with pytest.raises(ValueError, match="max_ci_tests must be None"):
        BRAI(max_ci_tests=bad).fit(X, y)


@settings(max_examples=40, deadline=None)
@given(hs.integers(0, 2**31 - 1), hs.integers(0, 3), hs.sampled_from(["bdeu", "k2"]))
def test_observed_configurations_give_the_dense_marginal_likelihood(seed, n_parents, kind):
    """Scoring a family from its observed parent configurations (with the full q) equals the
    dense (q, r) table's value: unseen configurations add 0 (K2 and BDeu)."""
    from bnma_core.scores import observed_family_counts

    rng = np.random.default_rng(seed)
    ar = rng.integers(2, 5, 5)
    data = np.column_stack([rng.integers(0, a, 40) for a in ar])
    data[rng.random(data.shape) < 0.1] = -1
    w = rng.integers(1, 4, 40).astype(float)
    pa = sorted(rng.choice(np.arange(1, 5), n_parents, replace=False).tolist())
    score = DirichletScore(kind, 1.0)
    dense = score.log_ml(family_counts(data, 0, pa, ar, w))
    q = int(np.prod(ar[pa]))
    sparse = score.log_ml(observed_family_counts(data, 0, pa, ar, w), q=q)
    assert abs(dense - sparse) <= 1e-9 * max(1.0, abs(dense))


def test_a_structure_too_large_to_tabulate_is_refused_not_allocated():
    """Order-0 tests only on strongly dependent 10-state data leave a nearly complete graph:
    a node with 8 parents, 10^7 configurations. Its leaf is scored sparsely, and the tables
    beyond MAX_NETWORK_CELLS are refused with the remedy instead of exhausting memory."""
    from bnma_core.structure import rai as R
    from bnma_core.structure.exact import ResourceLimitError

    rng = np.random.default_rng(0)
    h = rng.integers(0, 10, 3000)
    X = np.column_stack([np.where(rng.random(3000) < 0.7, h, rng.integers(0, 10, 3000))
                         for _ in range(8)])
    y = (h >= 5).astype(int)
    with pytest.raises(ResourceLimitError, match="leave max_order at None"):
        BRAI(n_structures=3, max_order=0, random_state=0).fit(X, y)
    tb = _builder(X[:, :5], y)
    tb.ar = np.array([10] * 5 + [2], dtype=np.int64)
    big = tuple(range(1, 5))            # q = 10^4 x r = 10: dense; and 10^6 cells: sparse
    dense = tb.score.log_ml(family_counts(tb.rows, 0, list(big), tb.ar, tb.mult))
    old = R._DENSE_CELLS
    try:
        R._DENSE_CELLS = 1000
        assert abs(tb.local_score(0, big) - dense) < 1e-8
    finally:
        R._DENSE_CELLS = old


def test_bdeu_selected_cmi_threshold_is_the_best_scoring_plain_rai_structure():
    """cmi_threshold="bdeu" (Yehezkel & Lerner 2009; causality-lab's search_threshold_bdeu):
    each candidate's score is the BDeu of plain RAI's DAG at that threshold — checked against
    RAI through the Python test path (s = 1) — the best one is used, and the fit equals a fit
    with that threshold given."""
    from bnma_core.classifiers.brai import CMI_THRESHOLD_GRID

    X, y = _latent_data(n=600, p=5)
    clf = BRAI(n_structures=10, cmi_threshold="bdeu", random_state=3).fit(X, y)
    scores = clf.threshold_scores_
    assert list(scores) == list(CMI_THRESHOLD_GRID)
    best = max(scores.values())
    assert clf.cmi_threshold_ == max(t for t, v in scores.items() if v == best)
    for th in (CMI_THRESHOLD_GRID[0], CMI_THRESHOLD_GRID[15], CMI_THRESHOLD_GRID[-1]):
        one = BRAI(s=1, n_structures=1, cmi_threshold=th, random_state=0).fit(X, y)
        assert abs(one.structures_[0].log_score - scores[th]) < 1e-8
    given = BRAI(n_structures=10, cmi_threshold=clf.cmi_threshold_, random_state=3).fit(X, y)
    np.testing.assert_array_equal(given.predict_proba(X), clf.predict_proba(X))
    assert BRAI(n_structures=5, random_state=0).fit(X, y).cmi_threshold_ is None
    with pytest.raises(ValueError, match="'bdeu'"):
        BRAI(cmi_threshold="aic").fit(X, y)


def test_bdeu_threshold_search_skips_thresholds_whose_tree_would_be_refused():
    """Thresholds whose B-RAI tree estimate passes max_ci_tests score −∞ (their plain RAI is
    stopped early); the others keep their scores, and the choice is among them."""
    from bnma_core.classifiers.brai import CMI_THRESHOLD_GRID

    X, y = _latent_data(n=600, p=6)
    tb = _builder(X, y)
    ests = {th: sum(t * 3 ** (o + 1) for o, t in tb.plain_rai(th)[1])
            for th in CMI_THRESHOLD_GRID}
    values = sorted(set(ests.values()))
    limit = int(values[len(values) // 2])
    free = BRAI(n_structures=5, cmi_threshold="bdeu", max_ci_tests=None,
                random_state=0).fit(X, y).threshold_scores_
    lim = BRAI(n_structures=5, cmi_threshold="bdeu", max_ci_tests=limit, random_state=0).fit(X, y)
    assert any(e > limit for e in ests.values()) and any(e <= limit for e in ests.values())
    for th, e in ests.items():
        assert lim.threshold_scores_[th] == (-np.inf if e > limit else free[th])
    assert ests[lim.cmi_threshold_] <= limit
