"""Structural Hamming distance (structure.distance) against a hand count and against an
independent count over adjacency matrices."""

import itertools

import networkx as nx
import numpy as np
import pytest

from bnma_core.network import load_network
from bnma_core.structure.distance import structural_hamming_distance, structure_difference


def _matrix_shd(a: np.ndarray, b: np.ndarray) -> int:
    """Pairs (i < j) whose entries (a[i, j], a[j, i]) differ from (b[i, j], b[j, i])."""
    n = len(a)
    return sum((a[i, j], a[j, i]) != (b[i, j], b[j, i])
               for i, j in itertools.combinations(range(n), 2))


def _graph(adj: np.ndarray) -> nx.DiGraph:
    g = nx.DiGraph()
    g.add_nodes_from(range(len(adj)))
    g.add_edges_from(zip(*np.nonzero(adj)))
    return g


def test_hand_counted_differences():
    true = nx.DiGraph([("a", "b"), ("b", "c"), ("c", "d")])
    learned = nx.DiGraph([("b", "a"), ("b", "c"), ("a", "d")])
    d = structure_difference(learned, true)
    assert d.missing == [("c", "d")] and d.extra == [("a", "d")]
    assert d.reversed == [("a", "b")] and d.shd == 3
    assert structural_hamming_distance(true, true) == 0
    assert structural_hamming_distance(nx.DiGraph(), true) == 3


def test_threshold_keeps_arcs_above_it():
    true = nx.DiGraph([("a", "b")])
    learned = nx.DiGraph()
    learned.add_edge("a", "b", weight=0.6)
    learned.add_edge("b", "c", weight=0.4)
    assert structural_hamming_distance(learned, true, threshold=0.5) == 0
    assert structural_hamming_distance(learned, true) == 1  # every arc: b -> c is extra
    learned.add_edge("b", "a", weight=0.3)  # both ways below 0.5: one difference, reversed
    d = structure_difference(learned, true)
    assert d.reversed == [("a", "b")] and d.shd == 2


@pytest.mark.parametrize("seed", range(20))
def test_agrees_with_matrix_count(seed):
    rng = np.random.default_rng(seed)
    n = 6
    a = np.triu(rng.random((n, n)) < 0.4, 1)
    b = rng.random((n, n)) < 0.25
    np.fill_diagonal(b, False)
    b &= ~b.T | (np.arange(n)[:, None] < np.arange(n))  # at most one direction per pair
    assert structural_hamming_distance(_graph(b), _graph(a)) == _matrix_shd(b, a)


def test_asia_against_itself_and_empty():
    g = load_network("asia").graph
    assert structural_hamming_distance(g, g) == 0
    empty = nx.DiGraph()
    empty.add_nodes_from(g.nodes)
    assert structural_hamming_distance(empty, g) == g.number_of_edges() == 8
    assert structural_hamming_distance(g.reverse(), g) == 8
