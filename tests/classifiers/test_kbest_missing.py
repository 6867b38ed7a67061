"""Exact-structure classifiers on many rows with many missingness patterns: the grouped,
stacked and closed-form prediction path against the per-network elimination it replaces."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.special import logsumexp

from bnma_core.classifiers.base import DiscreteBNClassifier
from bnma_core.classifiers.kbest import KBestEC, SubbaggingKBest
from bnma_core.data import load_dataset
from bnma_core.datasets import bundled_path
from bnma_core.factors import log_joint_batch


def _coalitions(x: np.ndarray) -> np.ndarray:
    """All 2^N rows of ``x`` with a subset of its findings left out (-1), as Shapley asks."""
    F = np.flatnonzero(x >= 0)
    masks = np.arange(2 ** len(F))
    keep = ((masks[:, None] >> np.arange(len(F))[None, :]) & 1).astype(bool)
    rows = np.repeat(x[None], len(keep), axis=0)
    sub = rows[:, F]
    sub[~keep] = -1
    rows[:, F] = sub
    return rows


def _reference_log_joints(est, nets, X):
    """The slow path: one elimination per network and block (the base class)."""
    return DiscreteBNClassifier._networks_log_joints(est, nets, X, est.class_index_)


def _reference_posteriors(est, nets, X):
    """P(c | x) per network, each row eliminated on its own (no pooling, no grouping)."""
    out = []
    c = est.class_index_
    for net in nets:
        fm = net.factor_model()
        codes = np.column_stack([X, np.full(len(X), -1)]).astype(np.int64)
        rows = []
        for row in codes:
            obs = np.flatnonzero(row >= 0)
            obs = obs[obs != c]
            lj = log_joint_batch(fm, c, obs, row[obs][None])[0]
            rows.append(np.exp(lj - logsumexp(lj)))
        out.append(rows)
    return np.array(out)


@pytest.fixture(scope="module")
def wbc_small():
    ds = load_dataset(bundled_path("wbc.csv"))
    X = ds.X[:, :5].astype(np.int64)
    return X, ds.y


@pytest.fixture(scope="module")
def subbagging(wbc_small):
    X, y = wbc_small
    return SubbaggingKBest(n_subsamples=4, n_best=4, random_state=0).fit(X, y)


def _rows(X):
    rng = np.random.default_rng(0)
    rand = X[rng.integers(0, len(X), 40)].copy()
    rand[rng.random(rand.shape) < 0.4] = -1
    return np.vstack([_coalitions(X[23]), _coalitions(X[7]), rand, X[:30]]).astype(np.int32)


def test_subbagging_predictions_equal_per_network_reference(subbagging, wbc_small):
    est = subbagging
    R = _rows(wbc_small[0])
    nets = [n for ns in est.networks_ for n in ns]
    ref = _reference_posteriors(est, nets, R)
    got = est._networks_posteriors(nets, R)
    np.testing.assert_allclose(got, ref, rtol=0, atol=1e-12)
    per_t = np.array([sum(w * ref[t * 4 + k] for k, w in enumerate(s.weights))
                      for t, s in enumerate(est.subsamples_)])
    np.testing.assert_allclose(est.subsample_posteriors(R, codes=True), per_t, rtol=0,
                               atol=1e-12)
    np.testing.assert_allclose(np.exp(est._predict_log_proba_codes(R)), per_t.mean(axis=0),
                               rtol=0, atol=1e-12)


def test_subbagging_model_joints_equal_per_network_reference(subbagging, wbc_small):
    est = subbagging
    R = _rows(wbc_small[0])
    nets = [n for ns in est.networks_ for n in ns]
    assert len({tuple(map(tuple, n.parents)) for n in nets}) < len(nets)  # groups are shared
    got = est.model_log_joints(R, codes=True)[1]
    np.testing.assert_allclose(got, _reference_log_joints(est, nets, R), rtol=0, atol=1e-12)


def test_kbest_predictions_equal_per_network_reference(wbc_small):
    X, y = wbc_small
    est = KBestEC(n_best=6).fit(X, y)
    R = _rows(X)
    ref = _reference_posteriors(est, est.networks_, R)
    expected = sum(w * p for w, p in zip(est.weights_, ref))
    np.testing.assert_allclose(np.exp(est._predict_log_proba_codes(R)), expected, rtol=0,
                               atol=1e-12)
    np.testing.assert_allclose(est.model_log_joints(R, codes=True)[1],
                               _reference_log_joints(est, est.networks_, R), rtol=0,
                               atol=1e-12)


def test_no_rows_and_repeated_calls(subbagging):
    est = subbagging
    assert est._predict_log_proba_codes(np.zeros((0, 5), np.int32)).shape == (0, 2)
    assert est.model_log_joints(np.zeros((0, 5), np.int32), codes=True)[1].shape == (16, 0, 2)
    R = np.array([[0, -1, 2, -1, 1]], np.int32)
    a = est._predict_log_proba_codes(R)
    np.testing.assert_array_equal(a, est._predict_log_proba_codes(R))  # cached stacks


def test_stacks_follow_the_network_list_and_are_released(subbagging, wbc_small):
    """A different list of networks with the same first member gets its own stack; the
    cached stacks go with the networks."""
    import gc

    from bnma_core.classifiers import exact

    est = subbagging
    R = _rows(wbc_small[0])[:40]
    nets = [n for ns in est.networks_ for n in ns]
    est._networks_posteriors(nets, R)
    by_dag: dict = {}
    for n in nets:
        by_dag.setdefault(tuple(map(tuple, n.parents)), []).append(n)
    group = max(by_dag.values(), key=len)
    assert len(group) > 1
    fewer = [group[0], group[-1]]
    np.testing.assert_allclose(est._networks_posteriors(fewer, R),
                               _reference_posteriors(est, fewer, R), rtol=0, atol=1e-12)
    X, y = wbc_small
    gc.collect()
    before = len(exact._STACKS)
    tmp = KBestEC(n_best=3).fit(X, y)
    tmp._predict_log_proba_codes(R)
    assert len(exact._STACKS) > before
    del tmp
    gc.collect()
    assert len(exact._STACKS) == before
