"""structure.rai: RAI on a known network, its parameter checks, the generating tree's public
entry points (build, size, sample_dags) and the old import locations. The recursion's steps,
the kernels and the pinned B-RAI results are tested in ``test_brai.py``."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from bnma_core.network import load_network
from bnma_core.scores import DirichletScore
from bnma_core.structure.cpdag import (
    consistent_extension,
    cpdag_key,
    dag_to_cpdag,
    dag_to_parents,
    parents_to_dag,
)
from bnma_core.structure.rai import GeneratingTree, rai, sample_dags


def _skeleton(cpdag) -> set[frozenset]:
    arcs, und = cpdag_key(cpdag)
    return {frozenset(a) for a in arcs} | set(und)


@pytest.fixture(scope="module")
def alarm():
    return load_network("alarm")


@pytest.mark.parametrize("seed", [0, 1])
def test_rai_recovers_most_of_the_alarm_network(alarm, seed):
    """ALARM (37 variables, 46 edges; the network Yehezkel & Lerner evaluate RAI on): from
    2,000 rows the learned skeleton has precision and recall of at least 0.85 (measured 0.89-0.95
    on these seeds), and more compelled arcs point the true way than the reverse."""
    truth = dag_to_cpdag(parents_to_dag([list(p) for p in alarm.parents]))
    cp = rai(alarm.sample_codes(2000, seed=seed), alarm.arities)
    assert sorted(cp.nodes) == list(range(len(alarm.arities)))
    got, true = _skeleton(cp), _skeleton(truth)
    assert len(got & true) / len(got) >= 0.85
    assert len(got & true) / len(true) >= 0.85
    arcs, _ = cpdag_key(cp)
    true_arcs = cpdag_key(truth)[0] | {(u, w) for e in cpdag_key(truth)[1] for u, w in [tuple(e)]}
    right = sum((u, w) in true_arcs for u, w in arcs)
    assert right > 2 * (len(arcs) - right)


def test_rai_significance_thins_the_graph_and_alpha_is_its_deprecated_name(alarm):
    """Marginal tests only (order 0: each pair tested once, whatever the graph): a smaller
    level accepts more independences, so its skeleton is a subset."""
    codes = alarm.sample_codes(1000, seed=2)
    strict = _skeleton(rai(codes, alarm.arities, significance=0.001, max_order=0))
    loose = _skeleton(rai(codes, alarm.arities, significance=0.2, max_order=0))
    assert strict < loose
    with pytest.warns(FutureWarning, match="renamed significance"):
        old = rai(codes, alarm.arities, alpha=0.001)
    assert cpdag_key(old) == cpdag_key(rai(codes, alarm.arities, 0.001))


@pytest.mark.parametrize("kw, msg", [({"significance": 0.0}, "significance must be in"),
                                     ({"significance": 1.5}, "significance must be in"),
                                     ({"significance": "x"}, "significance must be in"),
                                     ({"significance": True}, "significance must be in"),
                                     ({"max_order": -1}, "max_order must be None"),
                                     ({"max_order": 1.5}, "max_order must be None")])
def test_rai_refuses_bad_parameters(kw, msg):
    codes = np.zeros((10, 3), dtype=int)
    with pytest.raises(ValueError, match=msg):
        rai(codes, [2, 2, 2], **kw)


def _tree(codes, arities, s, seed=0):
    return GeneratingTree(np.asarray(codes, dtype=np.int64), np.asarray(arities, dtype=np.int64),
                          0.05, s, None, DirichletScore("bdeu", 1.0), np.random.default_rng(seed))


def test_a_tree_without_bootstrap_is_plain_rai():
    """s = 1: one path, so every sampled DAG is the same, a consistent extension of rai's
    CPDAG, and the tree counts its nodes and tests."""
    net = load_network("asia")
    codes = net.sample_codes(3000, seed=5)
    tree = _tree(codes, net.arities, 1)
    root = tree.build()
    size = tree.size()
    assert size["internal"] >= 1 and size["leaves"] >= 1 and size["ci_tests"] > 0
    dags = sample_dags(root, np.random.default_rng(0), 7)
    assert len(set(dags)) == 1
    cp = rai(codes, net.arities)
    assert list(dags[0]) == dag_to_parents(consistent_extension(cp))


def test_sample_dags_draws_dags_reproducibly_from_a_bootstrap_tree():
    net = load_network("asia")
    codes = net.sample_codes(1500, seed=6)
    draws = []
    for _ in range(2):
        tree = _tree(codes, net.arities, 3, seed=4)
        draws.append(sample_dags(tree.build(), tree.rng, 25))
    assert draws[0] == draws[1] and len(draws[0]) == 25
    for parents in set(draws[0]):
        assert len(parents) == len(net.arities)
        dag = parents_to_dag([list(p) for p in parents])
        assert dag_to_parents(dag) == list(parents)        # acyclic, sorted parent tuples
    assert tree.size()["internal"] > 1                     # bootstrap children: a real tree


def test_moved_names_still_import_from_the_classifier_module_with_a_warning():
    from bnma_core import scores
    from bnma_core.classifiers import brai
    from bnma_core.structure import rai as rai_module

    for name, home in [("rai", rai_module), ("g2_test", scores)]:
        with pytest.warns(FutureWarning, match=f"moved to {home.__name__}.{name}"):
            assert getattr(brai, name) is getattr(home, name)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(AttributeError):
            brai.no_such_name  # noqa: B018
