"""AODE (Webb, Boughton & Wang 2005): brute-force oracles for the estimates, the frequency
limit, the naive-Bayes fallback and the exact marginalisation of missing test values."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from sklearn.utils.estimator_checks import parametrize_with_checks

from bnma_core.classifiers.aode import AODE
from bnma_core.classifiers.naive_bayes import NaiveBayes
from bnma_core.classifiers.registry import make_classifier


def _problem(seed, n=80, arities=(2, 3, 2, 3), m=3, missing=0.0):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, m, n)
    X = np.empty((n, len(arities)), dtype=np.int64)
    X[:, 0] = (y + rng.integers(0, 2, n)) % arities[0]
    for j in range(1, len(arities)):
        X[:, j] = (X[:, j - 1] + y * rng.integers(0, 2, n) + rng.integers(0, 2, n)) % arities[j]
    if missing:
        X[rng.random(X.shape) < missing] = -1
    return X, y


def _brute_joint(X, y, m, ar, x, a, limit, parents=None):
    """sum over qualifying super-parents i of P(c, x_i) prod_j P(x_j | c, x_i), by counting
    the rows directly (Weka's Laplace estimates; rows missing a value skipped family-wise).
    ``x`` must be complete in the super-parents used; missing children are skipped."""
    p = X.shape[1]
    out = np.zeros(m)
    used = 0
    for i in (range(p) if parents is None else parents):
        if x[i] < 0 or (X[:, i] == x[i]).sum() < limit:
            continue
        used += 1
        for c in range(m):
            obs_i = X[:, i] >= 0
            pr = (((y == c) & (X[:, i] == x[i])).sum() + a) / (obs_i.sum() + a * m * ar[i])
            for j in range(p):
                if j == i or x[j] < 0:
                    continue
                s = (y == c) & (X[:, i] == x[i]) & (X[:, j] >= 0)
                pr *= ((X[s, j] == x[j]).sum() + a) / (s.sum() + a * ar[j])
            out[c] += pr
    return out, used


@pytest.mark.parametrize("alpha", [1.0, 0.4])
def test_complete_rows_equal_brute_force(alpha):
    X, y = _problem(1, missing=0.05)
    ar = np.array([2, 3, 2, 3])
    model = AODE(alpha=alpha, frequency_limit=0).fit(X, y, arities=ar)
    Xt, _ = _problem(2, n=30)
    got = model.predict_proba(Xt)
    for r, x in enumerate(Xt):
        joint, _ = _brute_joint(X, y, 3, ar, x, alpha, 0)
        np.testing.assert_allclose(got[r], joint / joint.sum(), rtol=1e-12, atol=1e-12)


def test_missing_values_are_the_exact_marginal_of_the_spode_sum():
    """'marginalize': P(c | x_obs) ∝ sum over completions x_M of sum_i P_i(c, x) (brute-force
    enumeration); a missing child's factor drops out, a missing super-parent is summed."""
    X, y = _problem(3, missing=0.1)
    ar = np.array([2, 3, 2, 3])
    model = AODE(frequency_limit=0).fit(X, y, arities=ar)
    Xt, _ = _problem(4, n=40, missing=0.35)
    got = model.predict_proba(Xt)
    checked = 0
    for r, x in enumerate(Xt):
        miss = np.flatnonzero(x < 0)
        if len(miss) == len(x):
            continue
        total = np.zeros(3)
        for vals in itertools.product(*[range(ar[v]) for v in miss]):
            full = x.copy()
            full[miss] = vals
            total += _brute_joint(X, y, 3, ar, full, 1.0, 0)[0]
        np.testing.assert_allclose(got[r], total / total.sum(), rtol=1e-12, atol=1e-12)
        checked += len(miss) > 0
    assert checked >= 10


def test_skip_leaves_out_missing_super_parents_as_weka():
    """'skip' (Weka): the SPODEs of the observed super-parents only, missing children dropped;
    with only children missing both modes agree."""
    X, y = _problem(5, missing=0.1)
    ar = np.array([2, 3, 2, 3])
    skip = AODE(frequency_limit=0, predict_missing="skip").fit(X, y, arities=ar)
    marg = AODE(frequency_limit=0).fit(X, y, arities=ar)
    Xt, _ = _problem(6, n=40, missing=0.3)
    got = skip.predict_proba(Xt)
    for r, x in enumerate(Xt):
        joint, used = _brute_joint(X, y, 3, ar, x, 1.0, 0)
        if used:
            np.testing.assert_allclose(got[r], joint / joint.sum(), rtol=1e-12, atol=1e-12)
    full = Xt[(Xt >= 0).all(axis=1)]
    np.testing.assert_allclose(skip.predict_proba(full), marg.predict_proba(full), rtol=1e-12)


def test_frequency_limit_and_naive_bayes_fallback():
    X, y = _problem(7, n=60)
    ar = np.array([2, 3, 2, 3])
    model = AODE(frequency_limit=15).fit(X, y, arities=ar)
    freq = [np.bincount(X[:, i], minlength=ar[i]) for i in range(4)]
    Xt, _ = _problem(8, n=30)
    got = model.predict_proba(Xt)
    n_fallback = 0
    for r, x in enumerate(Xt):
        joint, used = _brute_joint(X, y, 3, ar, x, 1.0, 15)
        assert used == sum(freq[i][x[i]] >= 15 for i in range(4))
        if used:
            np.testing.assert_allclose(got[r], joint / joint.sum(), rtol=1e-12, atol=1e-12)
    # a limit no value reaches: every row falls back to the project's naive Bayes (alpha 1)
    nb = NaiveBayes(alpha=1.0).fit(X, y, arities=ar).predict_proba(Xt)
    none = AODE(frequency_limit=10 ** 6).fit(X, y, arities=ar).predict_proba(Xt)
    np.testing.assert_allclose(none, nb, rtol=1e-12)
    n_fallback += len(Xt)
    assert n_fallback


def test_unseen_declared_values_and_all_missing_rows():
    """A value declared but absent from training gets Laplace estimates (no crash); a row
    with every value missing gets the class prior of the mixture."""
    X, y = _problem(9, n=50)
    ar = np.array([4, 3, 2, 5])          # states 2, 3 of X0 and 3, 4 of X3 never occur
    model = AODE().fit(X, y, arities=ar)
    Xt = np.array([[3, 0, 1, 4], [-1, -1, -1, -1]])
    P = model.predict_proba(Xt)
    assert np.isfinite(P).all() and np.allclose(P.sum(axis=1), 1)


def test_bad_parameters_are_explained():
    X, y = _problem(10, n=20)
    for kw, msg in (({"frequency_limit": -1}, "frequency_limit"), ({"alpha": 0}, "alpha"),
                    ({"predict_missing": "impute"}, "predict_missing must be one of")):
        with pytest.raises(ValueError, match=msg):
            AODE(**kw).fit(X, y)


def test_registered_and_reproducible():
    X, y = _problem(11)
    a = make_classifier("aode").fit(X, y).predict_proba(X)
    b = AODE().fit(X, y).predict_proba(X)
    assert np.array_equal(a, b)


@parametrize_with_checks([AODE()])
def test_sklearn_compatible(estimator, check):
    check(estimator)
