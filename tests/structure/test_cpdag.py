"""CPDAG utilities: Meek-rule CPDAGs against the (skeleton, v-structure) definition of
equivalence over every DAG of 4 variables, consistent extensions, class sizes, networkx
round trips, hypothesis checks on random DAGs; Meek's rules R1-R4 one at a time on small
partially directed graphs (:class:`PDAG`)."""

import itertools

import networkx as nx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from oracles import all_dag_graphs

from bnma_core.structure.cpdag import (
    PDAG,
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


# ----------------------------------------------------------------- Meek's rules on PDAGs
def _pdag(n, arcs=(), und=()):
    g = PDAG(n)
    for u, w in und:
        g.add_undirected(u, w)
    for u, w in arcs:
        g.add_undirected(u, w)
        g.orient(u, w)
    return g


# Each case: a PDAG where exactly one rule orients x --- y (nodes 0 = x, 1 = y), no other
# rule fires, and the arc it compels.
MEEK_CASES = {
    1: (4, [(2, 0)], [(0, 1)]),                                 # 2 -> 0 --- 1, 2, 1 apart
    2: (3, [(0, 2), (2, 1)], [(0, 1)]),                         # 0 -> 2 -> 1, 0 --- 1
    3: (4, [(2, 1), (3, 1)], [(0, 1), (0, 2), (0, 3)]),         # 0 --- 2 -> 1 <- 3 --- 0
    4: (4, [(3, 2), (2, 1)], [(0, 1), (0, 2), (0, 3)]),         # 3 -> 2 -> 1, 0 --- 2, 0 --- 3
}


@pytest.mark.parametrize("rule", [1, 2, 3, 4])
def test_each_meek_rule_orients_its_configuration_and_only_its_own(rule):
    n, arcs, und = MEEK_CASES[rule]
    others = tuple(r for r in (1, 2, 3, 4) if r != rule)
    g = _pdag(n, arcs, und)
    g.meek_closure(others)
    assert 1 in g.und[0] and 0 not in g.par[1]        # no other rule orients 0 --- 1
    g = _pdag(n, arcs, und)
    g.meek_closure((rule,))
    assert 0 in g.par[1] and 1 not in g.und[0] and 1 not in g.par[0]
    g = _pdag(n, arcs, und)
    g.meek_closure()                                  # all four, R4 included by default
    assert 0 in g.par[1]


def test_meek_r4_is_not_implied_by_r1_to_r3():
    """R4's configuration (Meek 1995, Fig. 2): w -> z -> y with x adjacent to w, z and y and
    w, y non-adjacent compels x -> y; R1-R3, which complete a DAG's pattern, leave it
    undirected — the case a constraint-based learner's orientations (RAI) can produce."""
    n, arcs, und = MEEK_CASES[4]
    g = _pdag(n, arcs, und)
    g.meek_closure((1, 2, 3))
    assert g.und[0] == {1, 2, 3}
    g.meek_closure((1, 2, 3, 4))
    assert g.par[1] == {0, 2} and g.und[0] == {2, 3}
    nxg = g.to_networkx()
    assert nxg.edges[0, 1]["directed"] and not nxg.has_edge(1, 0)
    assert not nxg.edges[0, 2]["directed"] and not nxg.edges[2, 0]["directed"]


def test_pdag_edits_and_bad_rule_numbers():
    g = PDAG(3, complete=True)
    assert all(g.adjacent(a, b) for a, b in itertools.combinations(range(3), 2))
    g.orient(0, 1)
    g.orient(1, 0)                                    # conflicting: bidirected, kept
    assert g.par[0] == {1} and g.par[1] == {0} and g.adjacent(0, 1)
    assert g.potential_parents(2) == {0, 1}
    h = g.copy()
    h.delete(0, 1)
    assert not h.adjacent(0, 1) and g.adjacent(0, 1) and len(h) == 3
    with pytest.raises(ValueError, match="numbered 1-4"):
        g.meek_closure((1, 5))


def _former_dag_to_cpdag_key(dag):
    """The former networkx implementation of :func:`dag_to_cpdag` (R1-R3 over edge sets), as
    (arcs, undirected edges): the oracle of the rules now shared with RAI."""
    from bnma_core.structure.cpdag import v_structures

    adj = {u: set(dag.predecessors(u)) | set(dag.successors(u)) for u in dag.nodes}
    directed = set()
    for a, c, b in v_structures(dag):
        directed |= {(a, c), (b, c)}
    undirected = {frozenset(e) for e in dag.edges} - {frozenset(e) for e in directed}
    changed = True
    while changed:
        changed = False
        for edge in list(undirected):
            if edge not in undirected:
                continue
            x, y = tuple(edge)
            for b, c in ((x, y), (y, x)):
                und_b = [a for a in adj[b] if frozenset((a, b)) in undirected and a != c]
                into_c = [a for a in und_b if (a, c) in directed]
                if (any((a, b) in directed and c not in adj[a] for a in adj[b] if a != c)
                        or any((b, a) in directed and (a, c) in directed for a in adj[b])
                        or any(a2 not in adj[a1]
                               for a1, a2 in itertools.combinations(into_c, 2))):
                    undirected.discard(edge)
                    directed.add((b, c))
                    changed = True
                    break
    return frozenset(directed), frozenset(undirected)


@settings(max_examples=150, deadline=None)
@given(dags(), st.booleans())
def test_dag_to_cpdag_equals_the_former_edge_set_rules(g, named):
    if named:                                         # any hashable node names
        g = nx.relabel_nodes(g, {v: f"v{v}" for v in g.nodes})
    assert cpdag_key(dag_to_cpdag(g)) == _former_dag_to_cpdag_key(g)


def test_dag_to_cpdag_keeps_node_names_and_attributes():
    g = nx.DiGraph()
    g.add_node("smoke", label="Smoker")
    g.add_edges_from([("smoke", "lung"), ("smoke", "bronc"), ("lung", "dysp"),
                      ("bronc", "dysp")])
    cp = dag_to_cpdag(g)
    assert cp.nodes["smoke"] == {"label": "Smoker"}
    assert _arcs(cp, True) == [("bronc", "dysp"), ("lung", "dysp")]
    assert _arcs(cp, False) == [("bronc", "smoke"), ("lung", "smoke"), ("smoke", "bronc"),
                                ("smoke", "lung")]
