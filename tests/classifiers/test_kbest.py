"""KBestEC and SubbaggingKBest against brute-force enumeration of all DAGs (n = 4 variables)."""

from __future__ import annotations

from itertools import product

import numpy as np
import pytest
from oracles import all_dag_parents as _all_dags
from oracles import equivalence_class_key as _ec
from oracles import kbest_data as _data

from bnma_core.classifiers.exact import ExactBN
from bnma_core.classifiers.kbest import KBestEC, SubbaggingKBest, subsample_size
from bnma_core.data import DataError
from bnma_core.scores import family_counts
from bnma_core.structure.exact import ExactLimits, ResourceLimitError, structure_log_score


def _brute_classes(D, ar):
    """{class key: (score, a member)} over all DAGs, by exhaustive enumeration."""
    out = {}
    for pa in _all_dags(D.shape[1]):
        key = _ec(pa)
        if key not in out:
            out[key] = (structure_log_score(D, ar, pa), pa)
    return out


def _eap_posterior(D, ar, pa, x, c=3, ess=1.0):
    """P(c | x) by enumerating the joint with hand-written EAP parameters; x has -1 = missing."""
    cpts = []
    for i in range(len(ar)):
        N = family_counts(D, i, list(pa[i]), ar)
        q, r = N.shape
        cpts.append((N + ess / (r * q)) / (N.sum(1, keepdims=True) + ess / q))
    free = [j for j in range(len(ar)) if j == c or x[j] < 0]
    post = np.zeros(ar[c])
    for states in product(*[range(ar[j]) for j in free]):
        z = np.array(x, dtype=int)
        z[free] = states
        p = 1.0
        for i in range(len(ar)):
            j, stride = 0, 1
            for u in pa[i]:
                j += stride * z[u]
                stride *= ar[u]
            p *= cpts[i][j, z[i]]
        post[z[c]] += p
    return post / post.sum()


@pytest.fixture(scope="module")
def tiny():
    D, ar = _data()
    ranked = sorted(_brute_classes(D, ar).values(), key=lambda t: -t[0])
    return D, ar, ranked


def _oracle(D, ar, ranked, K, rows):
    top = ranked[:K]
    s = np.array([t[0] for t in top])
    w = np.exp(s - s.max())
    w /= w.sum()
    return np.array([sum(wk * _eap_posterior(D, ar, t[1], x) for wk, t in zip(w, top))
                     for x in rows])


def test_brute_force_counts(tiny):
    assert len(tiny[2]) == 185


@pytest.mark.parametrize("K", [1, 7, 185, 300])
def test_kbest_equals_explicit_average_over_enumerated_classes(tiny, K):
    D, ar, ranked = tiny
    clf = KBestEC(n_best=K).fit(D[:, :3], D[:, 3], arities=ar[:3])
    assert len(clf.structures_) == min(K, 185)
    np.testing.assert_allclose([s.log_score for s in clf.structures_],
                               [t[0] for t in ranked[:K]], atol=1e-9)
    rows = np.array([[0, 1, 1, 0], [1, -1, 0, 0], [-1, 2, -1, 0], [-1, -1, -1, 0]])
    got = clf.predict_proba(rows[:, :3])
    np.testing.assert_allclose(got, _oracle(D, ar, ranked, K, rows), atol=1e-9)
    np.testing.assert_allclose(clf.weights_.sum(), 1.0)


def test_subbagging_with_whole_sample_equals_kbest(tiny):
    D, ar, _ = tiny
    X, y = D[:, :3], D[:, 3]
    a = KBestEC(n_best=10).fit(X, y)
    b = SubbaggingKBest(n_subsamples=1, max_samples=1.0, n_best=10, random_state=0).fit(X, y)
    Xt = np.vstack([X, [[-1, 1, -1]]])
    np.testing.assert_allclose(a.predict_proba(Xt), b.predict_proba(Xt), atol=1e-12)


def test_subbagging_equals_explicit_average_of_subsample_oracles(tiny):
    D, ar, _ = tiny
    X, y = D[:, :3], D[:, 3]
    clf = SubbaggingKBest(n_subsamples=3, max_samples=0.9, n_best=5, random_state=4).fit(X, y,
                                                                                 arities=ar[:3])
    rows = np.array([[0, 1, 1, 0], [1, -1, 0, 0]])
    expect = np.zeros((2, 2))
    for sub in clf.subsamples_:
        assert len(sub.rows) == subsample_size(40, 0.9) == 36
        assert len(np.unique(sub.rows)) == 36
        Dt = D[sub.rows]
        ranked = sorted(_brute_classes(Dt, ar).values(), key=lambda t: -t[0])
        expect += _oracle(Dt, ar, ranked, 5, rows) / 3
    np.testing.assert_allclose(clf.predict_proba(rows[:, :3]), expect, atol=1e-9)
    assert clf.subsample_posteriors(rows[:, :3]).shape == (3, 2, 2)
    assert len(clf.structures_) == 15


def test_one_class_one_subsample_reproduces_ebn(tiny):
    D, _, _ = tiny
    X, y = D[:, :3], D[:, 3]
    a = ExactBN().fit(X, y)
    b = SubbaggingKBest(n_subsamples=1, max_samples=1.0, n_best=1).fit(X, y)
    np.testing.assert_allclose(a.predict_proba(X), b.predict_proba(X), atol=1e-12)


def test_same_seed_same_model_and_rows_sum_to_one():
    rng = np.random.default_rng(0)
    X = rng.integers(0, 3, size=(60, 5))
    y = (X[:, 0] + rng.integers(0, 2, 60)) % 2
    f = [SubbaggingKBest(n_subsamples=3, n_best=4, random_state=s).fit(X, y) for s in (7, 7, 8)]
    Xt = X.copy()
    Xt[rng.random(Xt.shape) < 0.3] = -1
    p = [e.predict_proba(Xt) for e in f]
    np.testing.assert_array_equal(p[0], p[1])
    assert not np.array_equal(f[0].subsamples_[0].rows, f[2].subsamples_[0].rows)
    for q in p + [KBestEC(n_best=5).fit(X, y).predict_proba(Xt)]:
        assert np.isfinite(q).all()
        np.testing.assert_allclose(q.sum(axis=1), 1.0)


def test_incomplete_training_rows_are_dropped_and_counted():
    rng = np.random.default_rng(1)
    X = rng.integers(0, 2, size=(30, 3)).astype(float)
    y = rng.integers(0, 2, 30)
    X[:4, 1] = np.nan
    clf = KBestEC(n_best=3).fit(X, y)
    assert clf.n_rows_dropped_ == 4


def test_bad_input_and_limits_give_plain_messages():
    X = np.zeros((10, 3), dtype=int)
    y = np.arange(10) % 2
    for bad in ({"n_best": 0}, {"n_best": 2.5}, {"ess": -1}):
        with pytest.raises(ValueError, match="must be a positive"):
            KBestEC(**bad).fit(X, y)
    with pytest.raises(ValueError, match="max_samples must be a number in"):
        SubbaggingKBest(max_samples=1.5).fit(X, y)
    with pytest.raises(ResourceLimitError, match="limit is 2 variables"):
        SubbaggingKBest(n_best=3, limits=ExactLimits(max_vars_k10=2)).fit(X, y)
    with pytest.raises(DataError, match="No training row is complete"):
        KBestEC(n_best=2).fit(np.full((4, 2), np.nan), [0, 1, 0, 1])


def test_uniform_weighting_averages_the_classes_equally(tiny):
    D, ar, ranked = tiny
    clf = KBestEC(n_best=7, weighting="uniform").fit(D[:, :3], D[:, 3], arities=ar[:3])
    np.testing.assert_allclose(clf.weights_, np.full(7, 1 / 7))
    rows = np.array([[0, 1, 1, 0], [1, -1, 0, 0]])
    expect = np.mean([[_eap_posterior(D, ar, t[1], x) for x in rows] for t in ranked[:7]], axis=0)
    np.testing.assert_allclose(clf.predict_proba(rows[:, :3]), expect, atol=1e-9)
    with pytest.raises(ValueError, match="weighting must be"):
        SubbaggingKBest(weighting="x").fit(D[:, :3], D[:, 3])


def test_progress_hook_reports_each_subsample_and_a_stop_keeps_the_finished_ones(tiny):
    """The dashboard's hook: one event per stage of every subsample; True after subsample t
    keeps subsamples 0..t, equal to the same seed's first t + 1 subsamples of a full fit."""
    from bnma_core.structure.exact import STAGES, Stopped

    D, ar, _ = tiny
    X, y = D[:, :3], D[:, 3]
    events = []
    full = SubbaggingKBest(n_subsamples=3, n_best=4, random_state=2).fit(
        X, y, progress=lambda ev: events.append(ev) and False)
    assert not full.stopped_ and len(full.subsamples_) == 3
    assert [(e["subsample"], e["stage"]) for e in events] == [
        (t, s) for t in range(3) for s in (*STAGES, "done")]
    assert events[-1]["fraction"] == 1.0
    assert all(a["fraction"] <= b["fraction"] for a, b in zip(events, events[1:]))

    part = SubbaggingKBest(n_subsamples=3, n_best=4, random_state=2).fit(
        X, y, progress=lambda ev: ev["subsample"] == 1 and ev["stage"] == "done")
    assert part.stopped_ and len(part.subsamples_) == 2
    for a, b in zip(part.subsamples_, full.subsamples_):
        np.testing.assert_array_equal(a.rows, b.rows)
        np.testing.assert_array_equal(a.weights, b.weights)
    expect = full.subsample_posteriors(X)[:2].mean(axis=0)
    np.testing.assert_allclose(part.predict_proba(X), expect, atol=1e-12)

    mid = SubbaggingKBest(n_subsamples=3, n_best=4, random_state=2).fit(
        X, y, progress=lambda ev: ev["subsample"] == 2 and ev["stage"] == STAGES[1])
    assert mid.stopped_ and len(mid.subsamples_) == 2  # the unfinished third one is dropped
    with pytest.raises(Stopped, match="first subsample"):
        SubbaggingKBest(n_subsamples=3, n_best=4).fit(X, y, progress=lambda ev: True)
    assert not hasattr(mid, "_progress") or mid._progress is None
