"""Tables and figures of the subbagging view (bnma_core.viz.kbest) against hand computation:
each class's CPDAG found by enumerating every DAG of 4 variables, edge posteriors summed by
hand."""

from __future__ import annotations

from itertools import combinations

import numpy as np
import pandas as pd
import pytest
from oracles import all_dag_parents as _all_dags
from oracles import equivalence_class_key as _ec
from oracles import kbest_data as _data

from bnma_core import viz
from bnma_core.classifiers.kbest import SubbaggingKBest
from bnma_core.viz.kbest import edge_stability, subsample_classes, subsample_summary

NAMES = ["a", "b", "c", "y"]


ALL = list(_all_dags(4))


def _hand_cpdag_features(pa):
    """Edge features of the class of ``pa``: 'u → v' if every member has u -> v, else
    'u — v' (u < v), from the members found by enumeration."""
    key = _ec(pa)
    members = [m for m in ALL if _ec(m) == key]
    out = set()
    for pair in key[0]:
        u, v = sorted(pair)
        forward = {u in m[v] for m in members}
        if forward == {True}:
            out.add(f"{NAMES[u]} → {NAMES[v]}")
        elif forward == {False}:
            out.add(f"{NAMES[v]} → {NAMES[u]}")
        else:
            out.add(f"{NAMES[u]} — {NAMES[v]}")
    return out


@pytest.fixture(scope="module")
def fitted():
    D, ar = _data()
    X = pd.DataFrame(D[:, :3], columns=NAMES[:3])
    y = pd.Series(D[:, 3], name="y")
    return SubbaggingKBest(n_subsamples=2, max_samples=0.8, n_best=5, random_state=1).fit(
        X, y, arities=ar[:3]), D


def test_edge_stability_equals_hand_computed_edge_frequencies(fitted):
    model, _ = fitted
    assert len(model.subsamples_) == 2
    expect: dict[str, np.ndarray] = {}
    for t, sub in enumerate(model.subsamples_):
        assert len(sub.structures) == 5
        for s, w in zip(sub.structures, sub.weights):
            for f in _hand_cpdag_features(s.parents):
                expect.setdefault(f, np.zeros(2))[t] += w
    table = edge_stability(model)
    assert set(table.index) == set(expect)
    for f, p in expect.items():
        np.testing.assert_allclose(table.loc[f, ["subsample 1", "subsample 2"]].to_numpy(float),
                                   p, atol=1e-12)
        assert table.loc[f, "mean"] == pytest.approx(p.mean(), abs=1e-12)
        assert table.loc[f, "sd"] == pytest.approx(np.std(p, ddof=1), abs=1e-12)
    assert list(table["mean"]) == sorted(table["mean"], reverse=True)
    assert set(table["type"]) <= {"arc", "undirected"}

    fig = viz.edge_stability_figure(table, max_rows=None)
    heat, bar = fig.data[0], fig.data[1]
    assert list(heat.y) == list(table.index) and list(heat.x) == ["1", "2"]
    np.testing.assert_allclose(np.asarray(heat.z, float),
                               [expect[f] for f in table.index], atol=1e-12)
    np.testing.assert_allclose(bar.x, [expect[f].mean() for f in table.index], atol=1e-12)
    np.testing.assert_allclose(bar.error_x.array, [np.std(expect[f], ddof=1)
                                                   for f in table.index], atol=1e-12)
    assert len(viz.edge_stability_figure(table, max_rows=3).data[0].y) == min(3, len(table))


def test_features_of_a_pair_sum_to_its_link_probability(fitted):
    """Identity for every pair: P(u → v) + P(v → u) + P(u — v) = sum of the weights of the
    classes whose skeleton links u and v."""
    model, _ = fitted
    table = edge_stability(model)
    for t, sub in enumerate(model.subsamples_):
        for u, v in combinations(range(4), 2):
            link = sum(w for s, w in zip(sub.structures, sub.weights)
                       if u in s.parents[v] or v in s.parents[u])
            pair = {NAMES[u], NAMES[v]}
            got = table.loc[[e for e in table.index
                             if {table.loc[e, "from"], table.loc[e, "to"]} == pair],
                            f"subsample {t + 1}"].sum()
            assert got == pytest.approx(link, abs=1e-12)


def test_subsample_classes_and_summary(fitted):
    model, _ = fitted
    for t, sub in enumerate(model.subsamples_):
        tab = subsample_classes(model, t)
        assert list(tab["rank"]) == [1, 2, 3, 4, 5]
        assert tab["weight"].sum() == pytest.approx(1.0)
        np.testing.assert_allclose(tab["weight"], sub.weights)
        np.testing.assert_allclose(tab["log score"], [s.log_score for s in sub.structures])
        for row, s in zip(tab.itertuples(), sub.structures):
            feats = set() if row.edges == "(none)" else set(row.edges.split(", "))
            assert feats == _hand_cpdag_features(s.parents)
            pa = s.parents
            children = [v for v in range(4) if 3 in pa[v]]
            mb = set(pa[3]) | set(children) | {p for c in children for p in pa[c]}
            mb.discard(3)
            shown = set() if row[4] == "(empty)" else set(row[4].split(", "))
            assert shown == {NAMES[i] for i in mb}
    summ = subsample_summary(model)
    assert list(summ["subsample"]) == [1, 2] and list(summ["rows"]) == [32, 32]
    assert list(summ["classes"]) == [5, 5]
    fig = viz.subsample_weights_figure(model)
    assert len(fig.data) == 5
    np.testing.assert_allclose(np.sum([tr.y for tr in fig.data], axis=0), 1.0)


def test_posterior_figure_shows_every_subsample_and_the_average(fitted):
    model, D = fitted
    row = pd.DataFrame([[D[0, 0], None, D[0, 2]]], columns=NAMES[:3])  # b missing
    per = model.subsample_posteriors(row)[:, 0, :]
    avg = model.predict_proba(row)[0]
    np.testing.assert_allclose(per.mean(axis=0), avg, atol=1e-12)
    classes = [str(c) for c in model.classes_]
    fig = viz.subsample_posterior_figure(per, classes, avg, truth=classes[0])
    box, mean = fig.data[0], fig.data[1]
    np.testing.assert_allclose(np.asarray(box.y, float), per.T.ravel())
    assert list(box.x) == [c for c in classes for _ in range(2)]
    np.testing.assert_allclose(mean.y, avg)
    assert list(fig.layout.xaxis.ticktext) == [f"<b>{classes[0]}</b><br>(recorded class)",
                                               *classes[1:]]


def test_bad_input_is_a_plain_error(fitted):
    model, _ = fitted
    with pytest.raises(ValueError, match="fitted SubbaggingKBest"):
        edge_stability(SubbaggingKBest())
    with pytest.raises(ValueError, match="subsample index 0..1"):
        subsample_classes(model, 2)
    with pytest.raises(ValueError, match="names for 4 variables"):
        edge_stability(model, names=["a"])
    with pytest.raises(ValueError, match="edge_stability"):
        viz.edge_stability_figure(pd.DataFrame({"x": [1]}))
    with pytest.raises(ValueError, match=r"\(T, 2\)"):
        viz.subsample_posterior_figure(np.zeros((3, 3)), ["a", "b"])


def test_same_seed_same_table():
    D, ar = _data(seed=4)
    tabs = [edge_stability(SubbaggingKBest(n_subsamples=3, n_best=3, random_state=9).fit(
        D[:, :3], D[:, 3], arities=ar[:3])) for _ in range(2)]
    pd.testing.assert_frame_equal(tabs[0], tabs[1])
