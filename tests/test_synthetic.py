"""Random networks (Dash & Cooper 2002, Procedure 1) and forward sampling."""

from __future__ import annotations

import itertools
import time

import networkx as nx
import numpy as np
import pytest
from scipy import stats

from bnma_core.synthetic import RandomNetwork, random_network


def test_procedure_1_structure():
    net = random_network(40, 5, seed=0)
    assert net.n_nodes == 41 and 0 <= net.class_index < 41
    for i, pa in enumerate(net.parents):
        assert len(pa) <= min(i, 5)
        assert len(set(pa.tolist())) == len(pa)
        assert (pa < i).all()
    g = net.to_digraph()
    assert nx.is_directed_acyclic_graph(g) and g.number_of_nodes() == 41
    assert g.number_of_edges() == sum(len(p) for p in net.parents)


def test_number_of_parents_is_uniform_and_class_node_uniform():
    # node X_{i+1} (0-based i >= N_k) draws N_pa uniformly from 0..N_k
    counts = np.zeros(4)
    classes = []
    for s in range(400):
        net = random_network(6, 3, seed=s)
        counts += np.bincount([len(net.parents[i]) for i in (4, 5, 6)], minlength=4)
        classes.append(net.class_index)
    assert stats.chisquare(counts).pvalue > 1e-3
    assert stats.chisquare(np.bincount(classes, minlength=7)).pvalue > 1e-3


def test_same_seed_same_network_and_records():
    a, b = random_network(30, 4, seed=7), random_network(30, 4, seed=7)
    assert all(np.array_equal(p, q) for p, q in zip(a.parents, b.parents))
    assert a.class_index == b.class_index
    assert np.array_equal(a.sample(50), b.sample(50))
    assert np.array_equal(a.sample(20, seed=3), b.sample(20, seed=3))


def test_forward_sampling_matches_the_exact_joint():
    net = RandomNetwork([[], [0], [0, 1], [2]], np.array([2, 3, 2, 2]), class_index=3, seed=1)
    codes = net.sample(40_000, seed=2)
    assert net.n_columns_drawn == 1 + 2 + 6 + 2
    # exact joint from the drawn columns (mixed-radix key, first parent fastest)
    joint = {}
    for x in itertools.product(range(2), range(3), range(2), range(2)):
        p = net._columns[0][0][x[0]] * net._columns[1][x[0]][x[1]]
        p *= net._columns[2][x[0] + 2 * x[1]][x[2]] * net._columns[3][x[2]][x[3]]
        joint[x] = p
    keys = list(joint)
    obs = np.zeros(len(keys))
    index = {k: j for j, k in enumerate(keys)}
    for row in map(tuple, codes):
        obs[index[row]] += 1
    expected = np.array([joint[k] for k in keys]) * len(codes)
    assert np.isclose(expected.sum(), len(codes))
    assert stats.chisquare(obs, expected).pvalue > 1e-4


def test_columns_are_kept_between_calls_and_uniform_on_the_simplex():
    net = random_network(30, 3, seed=3)
    net.sample(200)
    drawn = net.n_columns_drawn
    snapshot = {k: v.copy() for k, v in net._columns[5].items()}
    net.sample(200)
    assert net.n_columns_drawn >= drawn
    for k, v in snapshot.items():
        assert np.array_equal(net._columns[5][k], v)
    first = np.array([c[0] for cols in net._columns for c in cols.values()])
    assert stats.kstest(first, "uniform").pvalue > 1e-4


def test_dense_networks_stay_cheap_thanks_to_lazy_columns():
    t0 = time.perf_counter()
    net = random_network(200, 200, seed=4)
    data = net.dataset(300, seed=5)
    assert time.perf_counter() - t0 < 20.0  # generous: the machine is shared
    assert max(len(p) for p in net.parents) > 60
    assert net.n_columns_drawn <= net.n_nodes * 300
    assert data.class_index == net.class_index and data.codes.shape == (300, 201)


@pytest.mark.parametrize("args,match", [((0, 2), "n_features"), ((5, -1), "max_parents"),
                                        ((5, 2, 1), "arity")])
def test_bad_arguments(args, match):
    with pytest.raises(ValueError, match=match):
        random_network(*args)
    with pytest.raises(ValueError, match="precede"):
        RandomNetwork([[1], []], np.array([2, 2]), 0)
