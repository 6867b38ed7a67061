"""CPDAG utilities: Meek-rule CPDAGs against the (skeleton, v-structure) definition of
equivalence over every DAG of 4 variables, consistent extensions, class sizes, networkx
round trips, hypothesis checks on random DAGs."""

import itertools

import networkx as nx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from oracles import all_dag_graphs

from bnma_core.structure.cpdag import (
    consistent_extension,
    count_dags_in_class,
    cpdag_key,
    dag_to_cpdag,
    dag_to_parents,
    ec_hash,
    equivalence_key,
    is_equivalent,
    parents_to_dag,
)


@pytest.fixture(scope="module")
def four():
    dags = list(all_dag_graphs(4))
    groups = {}
    for g in dags:
        groups.setdefault(equivalence_key(g), []).append(g)
    return dags, groups


def _arcs(cp, directed):
    return sorted((u, w) for u, w, d in cp.edges(data="directed") if d == directed)


def test_collider_and_chain():
    col = parents_to_dag([(), (), (0, 1)])
    cp = dag_to_cpdag(col)
    assert _arcs(cp, True) == [(0, 2), (1, 2)] and _arcs(cp, False) == []
    chain = parents_to_dag([(), (0,), (1,)])
    cp = dag_to_cpdag(chain)
    assert _arcs(cp, True) == [] and _arcs(cp, False) == [(0, 1), (1, 0), (1, 2), (2, 1)]


def test_meek_rules_orient_compelled_arcs():
    # 0 -> 2 <- 1, 2 - 3: R1 forces 2 -> 3
    g = parents_to_dag([(), (), (0, 1), (2,)])
    assert (2, 3) in _arcs(dag_to_cpdag(g), True)
    # R2: 0 -> 1 -> 2 compelled by the collider 3 -> 1 <- 0 and 1 -> 2 by R1; 0 - 2 -> 0 -> 2
    g = parents_to_dag([(), (0, 3), (0, 1), ()])
    cp = dag_to_cpdag(g)
    assert (0, 2) in _arcs(cp, True)
    # R3: 0 - 1, 0 - 2, 0 - 3, 1 -> 3 <- 2 (1, 2 non-adjacent) -> 0 -> 3
    g = parents_to_dag([(), (0,), (0,), (0, 1, 2)])
    cp = dag_to_cpdag(g)
    assert (0, 3) in _arcs(cp, True)
    assert _arcs(cp, False) == [(0, 1), (0, 2), (1, 0), (2, 0)]


def test_cpdag_identifies_classes_over_all_four_node_dags(four):
    dags, groups = four
    assert len(dags) == 543 and len(groups) == 185
    keys = {}
    for g in dags:
        keys.setdefault(cpdag_key(dag_to_cpdag(g)), set()).add(equivalence_key(g))
    assert len(keys) == 185 and all(len(v) == 1 for v in keys.values())


def test_extension_and_class_size_over_all_four_node_dags(four):
    _, groups = four
    for members in groups.values():
        cp = dag_to_cpdag(members[0])
        ext = consistent_extension(cp)
        assert nx.is_directed_acyclic_graph(ext)
        assert is_equivalent(ext, members[0])
        assert count_dags_in_class(cp) == len(members)
        assert len({ec_hash(dag_to_parents(g)) for g in members}) == 1


def test_no_extension_for_a_chordless_cycle():
    cp = nx.DiGraph()
    for a, b in [(0, 1), (1, 2), (2, 3), (3, 0)]:
        cp.add_edge(a, b, directed=False)
        cp.add_edge(b, a, directed=False)
    with pytest.raises(ValueError, match="no consistent extension"):
        consistent_extension(cp)


def test_networkx_round_trip_and_bad_input():
    parents = [(), (0,), (0, 1), (2,)]
    g = parents_to_dag(parents)
    assert dag_to_parents(g) == parents
    named = parents_to_dag(parents, nodes=["a", "b", "c", "d"])
    assert set(named.edges) == {("a", "b"), ("a", "c"), ("b", "c"), ("c", "d")}
    assert dag_to_cpdag(named).has_edge("c", "d")
    cyc = nx.DiGraph([(0, 1), (1, 0)])
    with pytest.raises(ValueError, match="cycle"):
        dag_to_cpdag(cyc)
    assert not is_equivalent(parents_to_dag([(), (0,)]), parents_to_dag([(), ()]))


@st.composite
def dags(draw):
    n = draw(st.integers(2, 7))
    order = draw(st.permutations(range(n)))
    g = nx.DiGraph()
    g.add_nodes_from(range(n))
    for i, j in itertools.combinations(range(n), 2):
        if draw(st.booleans()):
            g.add_edge(order[i], order[j])
    return g


@settings(max_examples=60, deadline=None)
@given(dags())
def test_cpdag_extension_roundtrip(g):
    cp = dag_to_cpdag(g)
    ext = consistent_extension(cp)
    assert is_equivalent(ext, g)
    assert cpdag_key(dag_to_cpdag(ext)) == cpdag_key(cp)
    assert ec_hash(dag_to_parents(ext)) == ec_hash(dag_to_parents(g))
    # the CPDAG keeps the skeleton; directed arcs are those of g
    assert {frozenset(e) for e in cp.edges} == {frozenset(e) for e in g.edges}
    assert all(g.has_edge(u, w) for u, w, d in cp.edges(data="directed") if d)
