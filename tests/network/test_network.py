"""Tests for bnma_core.network: BIF parsing/writing, sampling, exact inference, fitting."""

from __future__ import annotations

import itertools
import math

import networkx as nx
import numpy as np
import pytest
from oracles import brute_joint as brute_joint_of_model

from bnma_core.data import DiscreteDataset
from bnma_core.network import DiscreteBN, bif_text, load_network, read_bif, write_bif


@pytest.fixture(scope="module")
def asia() -> DiscreteBN:
    return load_network("asia")


@pytest.fixture(scope="module")
def alarm() -> DiscreteBN:
    return load_network("alarm")


@pytest.fixture(scope="module")
def hepar2() -> DiscreteBN:
    return load_network("hepar2")


def brute_joint(bn: DiscreteBN) -> np.ndarray:
    """The full joint distribution by enumeration (the oracle of tests/test_factors.py, which
    indexes CPT rows with the documented layout independently of the library's code)."""
    return brute_joint_of_model(bn.factor_model())


def brute_posterior(joint: np.ndarray, target: int, evidence: dict[int, int]) -> np.ndarray:
    idx: list = [slice(None)] * joint.ndim
    for v, s in evidence.items():
        idx[v] = slice(s, s + 1)
    sub = joint[tuple(idx)]
    p = sub.sum(axis=tuple(a for a in range(joint.ndim) if a != target))
    return p.ravel() / p.sum()


# ------------------------------------------------------------------------------ BIF parsing
@pytest.mark.parametrize("name, nodes, arcs, params",
                         [("alarm", 37, 46, 509), ("hepar2", 70, 123, 1453), ("asia", 8, 8, 18)])
def test_bundled_network_counts(name, nodes, arcs, params):
    bn = load_network(name)
    assert bn.n_vars == nodes and bn.n_arcs == arcs and bn.n_parameters == params
    g = bn.graph
    assert isinstance(g, nx.DiGraph) and nx.is_directed_acyclic_graph(g)
    assert g.number_of_nodes() == nodes and g.number_of_edges() == arcs
    assert g.nodes[bn.names[0]]["states"] == bn.states[0]
    assert bn.arities.dtype == np.int64 and all(p.dtype == np.int64 for p in bn.parents)
    for i, c in enumerate(bn.cpts):
        assert c.shape == (int(np.prod(bn.arities[bn.parents[i]])), bn.arities[i])
        np.testing.assert_allclose(c.sum(axis=1), 1.0, atol=1e-12)
    pos = {v: k for k, v in enumerate(bn.topological_order())}
    assert sorted(pos) == list(range(nodes))
    assert all(pos[int(p)] < pos[i] for i, pa in enumerate(bn.parents) for p in pa)


def test_known_cpt_entries(asia, alarm, hepar2):
    # ASIA: dysp | bronc, either; row (bronc=no, either=yes) = 0.7, 0.3 -> j = 1 + 2 * 0
    d = asia.index("dysp")
    assert [asia.names[p] for p in asia.parents[d]] == ["bronc", "either"]
    np.testing.assert_allclose(asia.cpts[d][1], [0.7, 0.3])
    np.testing.assert_allclose(asia.cpts[asia.index("asia")][0], [0.01, 0.99])
    # ALARM: EXPCO2 | ARTCO2, VENTLUNG; (HIGH, LOW) = 0.01, 0.01, 0.97, 0.01 -> j = 2 + 3 * 1
    e = alarm.index("EXPCO2")
    np.testing.assert_allclose(alarm.cpts[e][5], [0.01, 0.01, 0.97, 0.01])
    h = alarm.index("HRBP")  # (ERRLOWOUTPUT=FALSE, HR=LOW) -> j = 1
    np.testing.assert_allclose(alarm.cpts[h][1], [0.40, 0.59, 0.01])
    # HEPAR II: PBC | sex, age; (male, age31_50) -> j = 1 + 2 * 2
    np.testing.assert_allclose(hepar2.cpts[hepar2.index("PBC")][5], [0.06730769, 0.93269231])
    np.testing.assert_allclose(hepar2.cpts[hepar2.index("age")][0],
                               [0.07725322, 0.38769671, 0.39771102, 0.13733906])
    assert hepar2.states[hepar2.index("Cirrhosis")] == ["decompensate", "compensate", "absent"]


def test_rows_are_mapped_by_state_names_not_position(asia):
    """Shuffled configuration rows, comments and property lines give the same network."""
    text = bif_text(asia)
    head, rest = text.split("probability ( dysp | bronc, either ) {\n")
    rows, tail = rest.split("}\n", 1)
    shuffled = "".join(reversed(rows.splitlines(keepends=True)))
    noisy = ("// a comment\n/* block\ncomment */\n" + head.replace(
        "variable asia {", "variable asia {\n  property \"position = (1, 2)\" ;")
        + "probability ( dysp | bronc, either ) {\n  property weight 3 ;\n" + shuffled
        + "}\n" + tail)
    bn = read_bif(noisy)
    for a, b in zip(asia.cpts, bn.cpts):
        np.testing.assert_array_equal(a, b)


def test_write_read_round_trip(tmp_path, asia, alarm, hepar2):
    for bn in (asia, alarm, hepar2):
        for suffix in (".bif", ".bif.gz"):
            path = tmp_path / f"{bn.name}{suffix}"
            write_bif(bn, path)
            back = read_bif(path)
            assert back.names == bn.names and back.states == bn.states
            assert all(np.array_equal(a, b) for a, b in zip(back.parents, bn.parents))
            assert all(np.array_equal(a, b) for a, b in zip(back.cpts, bn.cpts))
            assert bif_text(back) == bif_text(bn)
    write_bif(asia, tmp_path / "a.bif.gz")
    assert (tmp_path / "a.bif.gz").read_bytes()[:2] == b"\x1f\x8b"
    assert read_bif((tmp_path / "a.bif.gz").read_bytes()).names == asia.names
    assert load_network(tmp_path / "a.bif.gz").n_arcs == 8


GOOD = """network tiny {
}
variable A {
  type discrete [ 2 ] { a0, a1 };
}
variable B {
  type discrete [ 3 ] { b0, b1, b2 };
}
probability ( A ) {
  table 0.3, 0.7;
}
probability ( B | A ) {
  (a0) 0.2, 0.3, 0.5;
  (a1) 0.1, 0.1, 0.8;
}
"""


def test_tiny_bif_parses():
    bn = read_bif(GOOD)
    assert bn.name == "tiny" and bn.names == ["A", "B"] and bn.index("B") == 1
    np.testing.assert_allclose(bn.cpts[1], [[0.2, 0.3, 0.5], [0.1, 0.1, 0.8]])


@pytest.mark.parametrize("old, new, message", [
    ("(a1) 0.1, 0.1, 0.8;", "(a2) 0.1, 0.1, 0.8;", "not a state of parent"),
    ("(a1) 0.1, 0.1, 0.8;", "(a1) 0.1, 0.9;", "has 2 values"),
    ("(a1) 0.1, 0.1, 0.8;", "", "have no probabilities"),
    ("[ 3 ] { b0, b1, b2 }", "[ 4 ] { b0, b1, b2 }", "declares 4 states"),
    ("table 0.3, 0.7;", "table 0.3, 0.8;", "sums to"),
    ("table 0.3, 0.7;", "table 0.3, x;", "expected a probability"),
    ("probability ( B | A )", "probability ( B | C )", "not a declared variable"),
    ("probability ( A ) {\n  table 0.3, 0.7;\n}\n", "", "has no probability block"),
    ("network tiny", "netwrk tiny", "expected 'network'"),
    ("(a0) 0.2, 0.3, 0.5;\n", "(a0) 0.2, 0.3, 0.5;\n(a0) 0.2, 0.3, 0.5;\n", "given twice"),
    ("type discrete", "type continuous", "only discrete"),
    ("  table 0.3, 0.7;\n}\n", "  table 0.3, 0.7;\n", "unexpected 'probability'"),
    ("0.8;\n}\n", "0.8;\n", "ends too early"),
])
def test_bad_bif_raises(old, new, message):
    assert old in GOOD
    with pytest.raises(ValueError, match=message):
        read_bif(GOOD.replace(old, new))


def test_bad_bif_cycle_and_empty():
    cyclic = GOOD.replace("probability ( A ) {\n  table 0.3, 0.7;\n}",
                          "probability ( A | B ) {\n (b0) 0.3, 0.7;\n (b1) 0.3, 0.7;\n"
                          " (b2) 0.3, 0.7;\n}")
    with pytest.raises(ValueError, match="cycle"):
        read_bif(cyclic)
    with pytest.raises(ValueError, match="no variables"):
        read_bif("network x { }")
    with pytest.raises(ValueError, match="Unknown network"):
        load_network("no_such_network")


# ------------------------------------------------------------------------------ constructor
def test_constructor_validation():
    names, states = ["A", "B"], [["0", "1"], ["0", "1"]]
    good = [np.array([[0.5, 0.5]]), np.array([[0.9, 0.1], [0.2, 0.8]])]
    bn = DiscreteBN(names, states, [[], ["A"]], good)
    assert bn.parents[1].tolist() == [0]
    with pytest.raises(ValueError, match="cycle"):
        DiscreteBN(names, states, [[1], [0]], [good[1], good[1]])
    with pytest.raises(ValueError, match="shape"):
        DiscreteBN(names, states, [[], [0]], [good[0], good[0]])
    with pytest.raises(ValueError, match="sums to"):
        DiscreteBN(names, states, [[], [0]], [good[0], np.array([[0.9, 0.2], [0.2, 0.8]])])
    with pytest.raises(ValueError, match="negative"):
        DiscreteBN(names, states, [[], [0]], [good[0], np.array([[1.1, -0.1], [0.2, 0.8]])])
    with pytest.raises(ValueError, match="own parent"):
        DiscreteBN(names, states, [[0], [0]], good)
    with pytest.raises(ValueError, match="not a variable"):
        DiscreteBN(names, states, [[], ["C"]], good)
    with pytest.raises(ValueError, match="unique"):
        DiscreteBN(["A", "A"], states, [[], [0]], good)


# ------------------------------------------------------------------------------ inference
def test_posterior_equals_enumeration_on_asia(asia):
    joint = brute_joint(asia)
    assert joint.sum() == pytest.approx(1.0, abs=1e-12)
    rng = np.random.default_rng(5)
    evidence_sets = [{}, {"xray": "yes"}, {"dysp": "yes", "smoke": "no"},
                     {"asia": "yes", "xray": "yes", "dysp": "no"}, {"either": 0, "bronc": 1},
                     {"tub": "no", "lung": "no", "xray": "yes", "dysp": "yes", "smoke": "yes"}]
    for ev in evidence_sets:
        ev_idx = {asia.index(k): asia.state_index(k, v) for k, v in ev.items()}
        for t in range(asia.n_vars):
            if t in ev_idx:
                continue
            np.testing.assert_allclose(asia.posterior(t, ev), brute_posterior(joint, t, ev_idx),
                                       atol=1e-12, rtol=0)
    for k, m in enumerate(asia.marginals()):
        np.testing.assert_allclose(m, brute_posterior(joint, k, {}), atol=1e-12, rtol=0)
    # log_prob of complete rows
    codes = np.array(list(itertools.product(*(range(a) for a in asia.arities))))
    with np.errstate(divide="ignore"):
        expect = np.log(joint[tuple(codes.T)])
    np.testing.assert_allclose(asia.log_prob(codes), expect, atol=1e-12)
    # class_posterior, every path, against enumeration
    codes = asia.sample_codes(300, seed=1)
    codes[rng.random(codes.shape) < 0.3] = -1
    t = asia.index("lung")
    post = asia.class_posterior(t, codes)
    for r in range(len(codes)):
        ev = {v: int(codes[r, v]) for v in range(asia.n_vars) if v != t and codes[r, v] >= 0}
        np.testing.assert_allclose(post[r], brute_posterior(joint, t, ev), atol=1e-12, rtol=0)


def random_network(rng: np.random.Generator, n: int = 6) -> DiscreteBN:
    """A random DAG (parents drawn among earlier nodes of a shuffled order) with random CPTs,
    some entries exactly zero."""
    perm = rng.permutation(n)
    arities = rng.integers(2, 4, n)
    parents = []
    for k in range(n):
        earlier = perm[:k]
        m = int(rng.integers(0, min(3, k) + 1))
        parents.append(rng.choice(earlier, m, replace=False).tolist() if m else [])
    order_parents = [None] * n
    for k in range(n):
        order_parents[perm[k]] = parents[k]
    cpts = []
    for i in range(n):
        q = int(np.prod([arities[p] for p in order_parents[i]]))
        c = rng.dirichlet(np.ones(arities[i]), q)
        c[rng.random(c.shape) < 0.1] = 0.0
        c[c.sum(axis=1) == 0, 0] = 1.0
        cpts.append(c / c.sum(axis=1, keepdims=True))
    return DiscreteBN([f"V{i}" for i in range(n)], [[f"s{k}" for k in range(a)] for a in arities],
                      order_parents, cpts, name="random")


def test_random_networks_against_enumeration(tmp_path):
    rng = np.random.default_rng(42)
    for rep in range(8):
        bn = random_network(rng)
        joint = brute_joint(bn)
        write_bif(bn, tmp_path / "r.bif")
        back = read_bif(tmp_path / "r.bif")
        assert all(np.array_equal(a, b) for a, b in zip(back.cpts, bn.cpts))
        codes = bn.sample_codes(60, seed=rep)
        codes[rng.random(codes.shape) < 0.35] = -1
        for t in range(bn.n_vars):
            post = bn.class_posterior(t, codes)
            for r in range(0, len(codes), 4):
                ev = {v: int(codes[r, v]) for v in range(bn.n_vars)
                      if v != t and codes[r, v] >= 0}
                expect = brute_posterior(joint, t, ev)
                np.testing.assert_allclose(post[r], expect, atol=1e-12, rtol=0)
                np.testing.assert_allclose(bn.posterior(t, ev), expect, atol=1e-12, rtol=0)


def test_class_posterior_paths_equal_posterior(alarm, hepar2):
    for bn, target in ((alarm, alarm.n_vars - 1), (alarm, "LVFAILURE"), (hepar2, "Cirrhosis")):
        t = bn.index(target)
        codes = bn.sample_codes(400, seed=7)
        mb = bn.markov_blanket(t)
        full = codes.copy()
        full[:, t] = -1  # the target column is ignored
        one_pattern = codes.copy()
        one_pattern[:, mb[:2]] = -1
        scattered = codes.copy()
        scattered[np.random.default_rng(3).random(codes.shape) < 0.15] = -1
        for c in (full, one_pattern, scattered):
            post = bn.class_posterior(t, c)
            np.testing.assert_allclose(post.sum(axis=1), 1.0, atol=1e-12)
            for r in range(0, len(c), 23):
                ev = {v: int(c[r, v]) for v in range(bn.n_vars) if v != t and c[r, v] >= 0}
                np.testing.assert_allclose(post[r], bn.posterior(t, ev), atol=1e-12, rtol=0)


def test_inference_bad_input(asia):
    with pytest.raises(ValueError, match="not a state"):
        asia.posterior("lung", {"xray": "maybe"})
    with pytest.raises(ValueError, match="not a variable"):
        asia.posterior("lung", {"cough": "yes"})
    with pytest.raises(ValueError, match="also given as evidence"):
        asia.posterior("lung", {"lung": "yes"})
    with pytest.raises(ValueError, match="probability zero"):
        asia.posterior("xray", {"tub": "yes", "either": "no"})
    with pytest.raises(ValueError, match="shape"):
        asia.class_posterior("lung", np.zeros((3, 5), dtype=int))
    with pytest.raises(ValueError, match="state indices"):
        asia.log_prob(-np.ones((1, 8), dtype=int))


# ------------------------------------------------------------------------------ sampling
def test_alarm_sample_marginals_match_exact(alarm):
    n = 20_000
    codes = alarm.sample_codes(n, seed=2024)
    assert codes.dtype == np.int32 and codes.shape == (n, 37)
    worst = 0.0
    for i, m in enumerate(alarm.marginals()):
        emp = np.bincount(codes[:, i], minlength=alarm.arities[i]) / n
        se = np.sqrt(m * (1 - m) / n) + 1.0 / n
        worst = max(worst, float((np.abs(emp - m) / se).max()))
    assert worst < 4.5
    assert np.isfinite(alarm.log_prob(codes[:500])).all()


def test_sampling_reproducible_and_datasets(asia, alarm):
    a = alarm.sample_codes(1000, seed=3)
    assert np.array_equal(a, alarm.sample_codes(1000, seed=3))
    assert not np.array_equal(a, alarm.sample_codes(1000, seed=4))
    ds = alarm.sample(500, seed=3, class_variable="LVFAILURE")
    assert isinstance(ds, DiscreteDataset) and ds.class_name == "LVFAILURE"
    assert ds.states == alarm.states and np.array_equal(ds.codes, a[:500])
    assert alarm.sample(10, seed=0).class_index == alarm.n_vars - 1
    frame = asia.sample_frame(200, seed=9)
    codes = asia.sample_codes(200, seed=9)
    assert list(frame.columns) == asia.names
    assert (frame["either"].to_numpy() == np.array(asia.states[5], dtype=object)[codes[:, 5]]).all()
    # deterministic CPTs: "either" is exactly (lung or tub), never violated by the sampler
    big = asia.sample_codes(20_000, seed=11)
    assert np.isfinite(asia.log_prob(big)).all()
    with pytest.raises(ValueError):
        asia.sample_codes(-1, seed=0)


@pytest.mark.parametrize(("n", "chunk"), [(0, 5), (1, 5), (50, 7), (50, 50), (50, 64)])
def test_chunked_sample_is_the_one_draw(alarm, n, chunk):
    """Blocks of any size from one seed concatenate to sample_codes' rows, in order."""
    from bnma_core.network.sampling import sample_chunks

    blocks = list(sample_chunks(alarm, n, seed=5, chunk_rows=chunk))
    assert all(len(b) <= chunk for b in blocks) and len(blocks) == -(-n // chunk)
    got = np.concatenate(blocks) if blocks else np.zeros((0, alarm.n_vars), np.int32)
    assert np.array_equal(got, alarm.sample_codes(n, seed=5))


def test_a_sample_too_large_for_memory_is_refused_by_name(alarm, monkeypatch):
    from bnma_core.data import DataError
    from bnma_core.network import sampling

    monkeypatch.setattr(sampling, "MAX_SAMPLE_CELLS", 37 * 100)
    alarm.sample_codes(100, seed=0)  # at the limit
    with pytest.raises(DataError, match=r"at most 100 rows here.*sample_chunks"):
        alarm.sample_codes(101, seed=0)
    assert sum(len(b) for b in sampling.sample_chunks(alarm, 1000, 0, chunk_rows=64)) == 1000


# ------------------------------------------------------------------------------ fitting
def test_from_structure_closed_form():
    codes = np.array([[0, 0], [0, 1], [0, 1], [1, 1], [1, 1], [1, 1], [1, 0]])
    bn = DiscreteBN.from_structure(["A", "B"], [["a0", "a1"], ["b0", "b1"]], [[], ["A"]], codes,
                                   alpha=1.0)
    np.testing.assert_allclose(bn.cpts[0], [[(1 + 3) / 9, (1 + 4) / 9]])
    np.testing.assert_allclose(bn.cpts[1], [[2 / 5, 3 / 5], [2 / 6, 4 / 6]])
    with pytest.raises(ValueError, match="cycle"):
        DiscreteBN.from_structure(["A", "B"], [["a0", "a1"], ["b0", "b1"]], [["B"], ["A"]],
                                  codes)


def test_from_structure_recovers_cpts(alarm):
    n = 30_000
    ds = alarm.sample(n, seed=5)
    fit = DiscreteBN.from_structure(alarm.names, alarm.states, alarm.parents, ds, alpha=1.0)
    checked = 0
    for i in range(alarm.n_vars):
        counts = np.zeros(fit.cpts[i].shape[0])
        pa = alarm.parents[i]
        strides = np.cumprod(np.r_[1, alarm.arities[pa][:-1]]).astype(int)
        j = ds.codes[:, pa] @ strides if len(pa) else np.zeros(n, int)
        counts += np.bincount(j, minlength=len(counts))
        for row in np.flatnonzero(counts >= 200):
            theta = alarm.cpts[i][row]
            tol = 5 * np.sqrt(theta * (1 - theta) / counts[row]) + len(theta) / counts[row]
            assert (np.abs(fit.cpts[i][row] - theta) <= tol).all(), (alarm.names[i], row)
            checked += 1
    assert checked > 100
    assert math.isclose(float(np.mean(fit.log_prob(ds.codes))),
                        float(np.mean(alarm.log_prob(ds.codes))), rel_tol=0.01)
