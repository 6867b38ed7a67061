"""Baselines of the subbagging paper: bagging / AdaBoost of EBN, bAN_mix, aCLL-TAN, EAP NB/TAN
(B-RAI: tests/classifiers/test_brai.py)."""

from __future__ import annotations

import numpy as np
import pytest

from bnma_core.classifiers.acll_tan import ACLLTAN, acll_beta, acll_family
from bnma_core.classifiers.ensembles import AdaBoostEBN, BaggingEBN, BANMix, samme_alpha
from bnma_core.classifiers.exact import ExactBN
from bnma_core.classifiers.naive_bayes import NaiveBayes
from bnma_core.classifiers.registry import make_classifier
from bnma_core.scores import family_counts
from bnma_core.structure.exact import ExactLimits, ResourceLimitError


def _data(n=80, p=4, seed=0, classes=2):
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 3, size=(n, p))
    y = (X[:, 0] + X[:, 1] * (rng.random(n) < 0.7) + rng.integers(0, 2, n)) % classes
    return X, y


def _with_missing(X, seed=1, frac=0.25):
    rng = np.random.default_rng(seed)
    Xt = X.astype(float)
    Xt[rng.random(X.shape) < frac] = np.nan
    Xt[0] = np.nan
    return Xt


def test_one_round_bagging_and_boosting_equal_the_base_ebn():
    X, y = _data()
    Xt = _with_missing(X)
    ref = ExactBN().fit(X, y).predict_proba(Xt)
    bag = BaggingEBN(n_estimators=1, max_samples=1.0, bootstrap=False).fit(X, y)
    ada = AdaBoostEBN(n_estimators=1, voting="soft").fit(X, y)
    np.testing.assert_allclose(bag.predict_proba(Xt), ref, atol=1e-12)
    np.testing.assert_allclose(ada.predict_proba(Xt), ref, atol=1e-12)
    hard = AdaBoostEBN(n_estimators=1, voting="hard").fit(X, y)
    np.testing.assert_array_equal(hard.predict(Xt), ExactBN().fit(X, y).predict(Xt))


def test_bootstrap_member_equals_ebn_on_the_repeated_rows():
    X, y = _data()
    bag = BaggingEBN(n_estimators=2, random_state=3).fit(X, y)
    rows = bag.samples_[1]
    assert len(rows) == 72 and len(np.unique(rows)) < 72
    ref = ExactBN().fit(X[rows], y[rows], arities=bag.arities_)
    assert bag.members_[1].parents == ref.structure_.parents
    post = bag._posterior(bag.networks_[1], X)
    np.testing.assert_allclose(post, ref.predict_proba(X), atol=1e-12)


def test_boosting_reweights_with_samme():
    X, y = _data(classes=3, seed=2)
    ada = AdaBoostEBN(n_estimators=3).fit(X, y)
    assert 1 <= len(ada.members_) <= 3
    e = ada.errors_[0]
    assert ada.estimator_weights_[0] == pytest.approx(samme_alpha(e, 3))
    assert samme_alpha(0.25, 2) == pytest.approx(np.log(3))


def test_banmix_round_zero_is_eap_naive_bayes_and_structures_are_forests():
    X, y = _data(p=5)
    Xt = _with_missing(X)
    one = BANMix(max_rounds=1, voting="soft").fit(X, y)
    np.testing.assert_array_equal(BANMix(max_rounds=1).fit(X, y).predict(Xt),
                                  NaiveBayes(cpt_prior="bdeu", ess=1.0).fit(X, y).predict(Xt))
    nb = NaiveBayes(cpt_prior="bdeu", ess=1.0).fit(X, y)
    np.testing.assert_allclose(one.predict_proba(Xt), nb.predict_proba(Xt), atol=1e-12)
    full = BANMix().fit(X, y)
    c = full.class_index_
    for j, s in enumerate(full.members_):
        feat_parents = [[u for u in s.parents[i] if u != c] for i in range(c)]
        assert all(len(fp) <= 1 for fp in feat_parents)
        assert sum(len(fp) for fp in feat_parents) == j
        assert all(c in s.parents[i] for i in range(c))


def test_acll_family_by_hand():
    N = np.array([[3.0, 1.0], [0.0, 2.0]])  # rows c = 0, 1 (no feature parent); states k
    beta, n1 = 0.5, 0.5
    tot = N.sum(0)
    val = 0.0
    for c in range(2):
        a = N[c] + beta * tot
        plus = np.where(a >= n1, a, n1)
        val += np.sum(a * np.log(plus / plus.sum()))
    assert acll_family(N, 2, beta, n1) == pytest.approx(val)


def test_acll_family_is_the_papers_alpha_beta_form():
    # Carvalho, Adão & Mateus 2013, eq. (28): weights α N_ijck + β sum_{c' != c} N_ijc'k with
    # α = 1 + β, floored at N' inside the log only; three classes, one parent configuration.
    rng = np.random.default_rng(0)
    N = rng.integers(0, 6, size=(2 * 3, 4)).astype(float)       # (j, c) rows, k columns
    beta, n1 = -0.24, 5.0
    val = 0.0
    for j in range(2):
        block = N[3 * j:3 * j + 3]
        for c in range(3):
            w = (1 + beta) * block[c] + beta * (block.sum(0) - block[c])
            plus = np.where(w >= n1, w, n1)
            val += np.sum(w * np.log(plus / plus.sum()))
    assert acll_family(N, 3, beta, n1) == pytest.approx(val, rel=1e-12)


def test_acll_beta_reproduces_the_papers_monte_carlo_values():
    # Example 3.7: Dir(1, ..., 1, 1000), m = 100,000 -> -0.39291 (s = 2), -0.239266 (s = 3);
    # eq. (13): (pi^2 - 18) / 24 for the uniform binary case; Example 3.6: -0.198873 (s = 3).
    assert acll_beta(2, 1000) == pytest.approx(-0.39291, abs=2e-3)
    assert acll_beta(3, 1000) == pytest.approx(-0.239266, abs=3e-3)
    assert acll_beta(2, assumption="uniform") == pytest.approx(-0.338766, abs=1e-6)
    assert acll_beta(3, assumption="uniform") == pytest.approx(-0.198873, abs=3e-3)
    assert acll_beta(2, 1000) == acll_beta(2, 1000)           # fixed seed
    with pytest.raises(ValueError, match="n_rows must be"):
        acll_beta(2)
    with pytest.raises(ValueError, match="n_classes must be"):
        acll_beta(1, 10)


def test_acll_tan_defaults_are_the_papers_and_bad_values_are_refused():
    X, y = _data(classes=3)
    clf = ACLLTAN().fit(X, y)
    assert clf.n_prime == 5.0 and clf.beta_ == pytest.approx(acll_beta(3, len(y)))
    assert -1 < clf.beta_ < 0
    assert ACLLTAN(beta=-0.3).fit(X, y).beta_ == -0.3
    for bad in ("x", 1.5, -1.0):
        with pytest.raises(ValueError, match="beta must be"):
            ACLLTAN(beta=bad).fit(X, y)
    with pytest.raises(ValueError, match="n_prime must be"):
        ACLLTAN(n_prime=0).fit(X, y)


def test_acll_tan_is_a_spanning_tree_with_the_best_gains():
    X, y = _data(p=4, seed=5)
    X[:, 2] = np.where(np.random.default_rng(0).random(80) < 0.9, X[:, 0], X[:, 2])
    clf = ACLLTAN().fit(X, y)
    fp = clf.feature_parents_
    assert sum(len(p) for p in fp) == 3 and all(len(p) <= 1 for p in fp)
    assert [0] in (fp[2],) or [2] in (fp[0],)  # the strong pair is linked
    data = np.column_stack([X, y])
    ar = np.append(clf.arities_, 2)
    cpt = clf.cpts_[1]
    counts = family_counts(data, 1, [4] + fp[1], ar)
    q, r = counts.shape
    np.testing.assert_allclose(cpt, (counts + 1 / (r * q)) / (counts.sum(1, keepdims=True) + 1 / q))


METHODS = ["kbest", "kbest_subbagging", "ebn_bagging", "ebn_adaboost", "banmix", "tan_acll",
           "nb_eap", "tan_eap", "brai"]


@pytest.mark.parametrize("name", METHODS)
def test_registered_methods_give_finite_rows_summing_to_one_with_missing_values(name):
    X, y = _data(n=60, p=4, classes=3, seed=4)
    small = {"kbest": {"n_best": 5}, "kbest_subbagging": {"n_subsamples": 2, "n_best": 3},
             "ebn_bagging": {"n_estimators": 2}, "ebn_adaboost": {"n_estimators": 2},
             "brai": {"n_structures": 5}}.get(name, {})
    est = make_classifier(name, random_state=0, **small)
    P = est.fit(X, y).predict_proba(_with_missing(X))
    assert np.isfinite(P).all()
    np.testing.assert_allclose(P.sum(axis=1), 1.0)
    again = make_classifier(name, random_state=0, **small).fit(X, y)
    np.testing.assert_array_equal(again.predict_proba(_with_missing(X)), P)


def test_ensembles_refuse_above_the_limits_and_bad_parameters():
    X, y = _data()
    with pytest.raises(ResourceLimitError, match="limit is 3 variables"):
        BaggingEBN(limits=ExactLimits(max_vars_k10=3)).fit(X, y)
    with pytest.raises(ValueError, match="voting must be"):
        AdaBoostEBN(voting="x").fit(X, y)
    with pytest.raises(ValueError, match="max_samples must be a number in"):
        BaggingEBN(max_samples=0).fit(X, y)


@pytest.mark.parametrize("name", ["nb_eap", "tan_eap"])
def test_eap_naive_bayes_and_tan_cpts_by_hand(name):
    X, y = _data(p=4, seed=7)
    clf = make_classifier(name).fit(X, y)
    data = np.column_stack([X, y])
    ar = np.append(clf.arities_, 2)
    for i, pa in enumerate(clf.feature_parents_):
        N = family_counts(data, i, [4] + pa, ar)
        q, r = N.shape
        np.testing.assert_allclose(clf.cpts_[i], (N + 1 / (r * q)) / (N.sum(1, keepdims=True)
                                                                   + 1 / q), atol=1e-12)
    Nc = np.bincount(y, minlength=2)
    np.testing.assert_allclose(clf.class_prior_, (Nc + 0.5) / (len(y) + 1), atol=1e-12)
