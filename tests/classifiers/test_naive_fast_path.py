"""Naive Bayes predicts through one pass over the rows (``kernels.manb.naive_log_joint``); it
must equal the general exact elimination (``factors.class_log_posterior``) to 1e-12, missing
test values included (issue 15, wide features)."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.special import logsumexp

from bnma_core.classifiers.naive_bayes import NaiveBayes
from bnma_core.factors import class_log_posterior


@settings(max_examples=30, deadline=None)
@given(n_features=st.integers(1, 12), seed=st.integers(0, 10_000),
       prior=st.sampled_from([None, "bdeu"]), missing=st.sampled_from([0.0, 0.3]))
def test_naive_fast_path_equals_elimination(n_features, seed, prior, missing):
    rng = np.random.default_rng(seed)
    ar = rng.integers(1, 5, n_features)
    y = rng.integers(0, 3, 60)
    y[:3] = [0, 1, 2]
    X = (rng.random((60, n_features)) * ar).astype(np.int32)
    X[rng.random(X.shape) < missing] = -1
    nb = NaiveBayes(cpt_prior=prior).fit(X, y, arities=ar)
    assert nb._naive_log_theta is not None
    Xte = (rng.random((40, n_features)) * ar).astype(np.int32)
    Xte[rng.random(Xte.shape) < missing] = -1
    fast = nb._predict_log_proba_codes(Xte)
    codes = np.column_stack([Xte, np.zeros(len(Xte), dtype=np.int32)])
    slow = class_log_posterior(nb._factor_model(), n_features, codes)
    fast -= logsumexp(fast, axis=1, keepdims=True)
    slow -= logsumexp(slow, axis=1, keepdims=True)
    np.testing.assert_allclose(fast, slow, rtol=0, atol=1e-12)
