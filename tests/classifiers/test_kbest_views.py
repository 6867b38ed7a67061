"""What the Exact & K-best page shows, computed by the library: edge probabilities over the K
best classes, the subsamples a row was drawn into, the most disputed row, and the tables and
figures of :mod:`bnma_core.viz.kbest`."""

from __future__ import annotations

import numpy as np
import pytest

from bnma_core.classifiers.kbest import KBestEC, SubbaggingKBest, edge_probabilities
from bnma_core.viz import kbest as viz_kbest


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(5)
    X = rng.integers(0, 2, size=(80, 4))
    X[:, 1] = (X[:, 0] + (rng.random(80) < 0.1)) % 2
    y = (X[:, 1] + (rng.random(80) < 0.2)) % 2
    return X, y


def test_edge_probabilities_sum_the_weights_of_the_classes_holding_the_edge(data):
    X, y = data
    model = KBestEC(n_best=6).fit(X, y)
    links = model.edge_probabilities("link")
    arrows = model.edge_probabilities("arrow")
    p = X.shape[1] + 1
    assert links.shape == arrows.shape == (p, p)
    np.testing.assert_allclose(links, links.T)
    for u in range(p):
        for v in range(p):
            expect = sum(w for w, s in zip(model.weights_, model.structures_)
                         if u in s.parents[v] or v in s.parents[u])
            assert links[u, v] == pytest.approx(min(expect, 1.0))
            arrow = sum(w for w, s in zip(model.weights_, model.structures_)
                        if s.cpdag.has_edge(u, v) and s.cpdag.edges[u, v]["directed"])
            assert arrows[u, v] == pytest.approx(min(arrow, 1.0))
    assert (arrows <= links + 1e-12).all()  # a compelled arrow is a link
    np.testing.assert_allclose(edge_probabilities(model.structures_, model.weights_),
                               links)
    with pytest.raises(ValueError, match="'link' or 'arrow'"):
        model.edge_probabilities("both")
    with pytest.raises(ValueError, match="Fit the model"):
        KBestEC().edge_probabilities()


def test_subsample_counts_number_rows_as_the_training_data(data):
    X, y = data
    X = X.copy()
    X[[3, 10], 2] = -1  # incomplete rows: never learned from
    model = SubbaggingKBest(n_subsamples=4, n_best=3, max_samples=0.5,
                            random_state=1).fit(X, y)
    counts = model.subsample_counts(X, y)
    assert counts[3] == counts[10] == -1
    complete = np.flatnonzero((X >= 0).all(axis=1))
    for pos in (0, 11, 79):
        at = int(np.searchsorted(complete, pos))
        expect = sum(int(at in set(s.rows.tolist())) for s in model.subsamples_)
        assert counts[pos] == expect
    assert counts[counts >= 0].sum() == sum(len(s.rows) for s in model.subsamples_)


def test_posterior_spread_and_the_prediction_table(data):
    X, y = data
    model = SubbaggingKBest(n_subsamples=3, n_best=3, random_state=2).fit(X, y)
    per = model.subsample_posteriors(X)
    spread = model.posterior_spread(X)
    assert spread.shape == (len(X),)
    assert spread[0] == pytest.approx((per[:, 0, :].max(0) - per[:, 0, :].min(0)).max())
    table = viz_kbest.prediction_spread(per[:, 0, :], ["a", "b"],
                                        model.predict_proba(X[:1])[0])
    assert list(table.columns) == ["class", "averaged P", "min over subsamples",
                                   "max over subsamples", "sd over subsamples"]
    np.testing.assert_allclose(table["averaged P"], per[:, 0, :].mean(axis=0))
    every = viz_kbest.all_subsample_classes(model)
    assert every.columns[0] == "subsample"
    assert len(every) == sum(len(s.structures) for s in model.subsamples_)
    fig = viz_kbest.class_weights_figure(model.subsamples_[0].structures,
                                         model.subsamples_[0].weights)
    assert len(fig.data[0].y) == len(model.subsamples_[0].weights)
