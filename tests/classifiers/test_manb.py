"""MANaiveBayes: brute-force oracles over all 2^N naive structures (Dash & Cooper 2002)."""

from __future__ import annotations

import itertools

import networkx as nx
import numpy as np
import pandas as pd
import pytest
from scipy.special import gammaln, logsumexp
from sklearn.base import clone
from sklearn.utils.estimator_checks import parametrize_with_checks

from bnma_core.classifiers.manb import MANaiveBayes
from bnma_core.classifiers.naive_bayes import NaiveBayes
from bnma_core.classifiers.registry import make_classifier
from bnma_core.datasets import bundled_path

# --- an independent brute-force implementation ----------------------------------------------


def _log_ml(counts: np.ndarray, a: float) -> float:
    """Eq. 8 for one family, counts (q, r), every a_ijk = a."""
    q, r = counts.shape
    return float(np.sum(gammaln(a * r) - gammaln(a * r + counts.sum(axis=1)))
                 + np.sum(gammaln(a + counts) - gammaln(a)))


def _theta(counts: np.ndarray, a: float) -> np.ndarray:
    """Eq. 6, counts (q, r)."""
    return (counts + a) / (counts + a).sum(axis=1, keepdims=True)


def _family_tables(X, y, arities, n_classes, score, alpha, ess):
    """Per feature: (log ML without arc, theta without arc (r,), log ML with arc, theta (c, r))."""
    out = []
    for i, r in enumerate(arities):
        obs = X[:, i] >= 0
        cc = np.zeros((n_classes, r))
        np.add.at(cc, (y[obs], X[obs, i]), 1.0)
        c0 = cc.sum(axis=0, keepdims=True)
        a_c = alpha if score == "k2" else ess / (r * n_classes)
        a_0 = alpha if score == "k2" else ess / r
        out.append((_log_ml(c0, a_0), _theta(c0, a_0)[0], _log_ml(cc, a_c), _theta(cc, a_c)))
    return out


def brute_force_proba(X, y, Xtest, arities, n_classes, arc_prior=0.5, score="k2", alpha=1.0,
                      ess=1.0):
    """P(c | x, D) averaged explicitly over all 2^N structures S (eq. 7): sum_S P(S | D)
    P(c, x | S, D), each structure's weight and prediction computed on its own."""
    p = X.shape[1]
    prior = np.broadcast_to(np.asarray(arc_prior, dtype=float), (p,))
    tables = _family_tables(X, y, arities, n_classes, score, alpha, ess)
    a_cls = alpha if score == "k2" else ess / n_classes
    cls = np.bincount(y, minlength=n_classes) + a_cls
    log_cls = np.log(cls / cls.sum())
    log_terms = []
    for arcs in itertools.product((0, 1), repeat=p):
        log_w = 0.0
        log_pred = np.tile(log_cls, (len(Xtest), 1))
        for i, has_arc in enumerate(arcs):
            lml0, th0, lmlc, thc = tables[i]
            if has_arc:
                log_w += np.log(prior[i]) + lmlc
                f = thc.T  # (r, c)
            else:
                log_w += np.log1p(-prior[i]) + lml0
                f = np.tile(th0[:, None], (1, n_classes))
            x = Xtest[:, i]
            # a missing test value is summed out explicitly
            fac = np.where((x >= 0)[:, None], f[np.maximum(x, 0)], f.sum(axis=0)[None, :])
            log_pred = log_pred + np.log(fac)
        log_terms.append(log_w + log_pred)
    log_joint = logsumexp(np.stack(log_terms), axis=0)
    return np.exp(log_joint - logsumexp(log_joint, axis=1, keepdims=True))


def _problem(seed, n=60, p=10, arities=None, n_classes=2, n_test=40):
    rng = np.random.default_rng(seed)
    ar = np.full(p, 2) if arities is None else np.asarray(arities)
    y = rng.integers(0, n_classes, n)
    # features depend on the class for half of them, so arc posteriors spread over (0, 1)
    X = np.stack([(rng.integers(0, a, n) + (y if i % 2 else 0)) % a
                  for i, a in enumerate(ar)], axis=1)
    flip = rng.random((n, p)) < 0.35
    X = np.where(flip, rng.integers(0, ar, (n, p)), X)
    Xt = rng.integers(0, ar, (n_test, p))
    return X.astype(np.int32), y, Xt.astype(np.int32), ar


# --- oracle tests -----------------------------------------------------------------------------


@pytest.mark.parametrize("arc_prior", [0.5, 0.2])
def test_oracle_binary_all_1024_structures(arc_prior):
    X, y, Xt, ar = _problem(0)
    m = MANaiveBayes(arc_prior=arc_prior).fit(X, y, arities=ar)
    expect = brute_force_proba(X, y, Xt, ar, 2, arc_prior)
    assert np.abs(m.predict_proba(Xt) - expect).max() < 1e-10
    assert np.ptp(m.arc_posterior_) > 0.1  # structures differ in weight


def test_oracle_nonbinary_nonuniform_per_feature_prior():
    ar = [2, 3, 4, 3, 2, 5, 3, 2, 4, 3]
    X, y, Xt, ar = _problem(1, n=80, arities=ar, n_classes=3)
    prior = np.linspace(0.05, 0.95, 10)
    m = MANaiveBayes(arc_prior=prior).fit(X, y, arities=ar)
    expect = brute_force_proba(X, y, Xt, ar, 3, prior)
    assert np.abs(m.predict_proba(Xt) - expect).max() < 1e-10
    # the prior matters: a different prior gives different predictions
    assert np.abs(MANaiveBayes().fit(X, y, arities=ar).predict_proba(Xt) - expect).max() > 1e-6


@pytest.mark.parametrize("score,alpha,ess", [("bdeu", 1.0, 1.0), ("bdeu", 1.0, 7.5),
                                             ("k2", 0.3, 1.0)])
def test_oracle_other_dirichlet_priors(score, alpha, ess):
    ar = [3, 2, 4, 2, 3, 2, 2, 3, 2, 4]
    X, y, Xt, ar = _problem(2, n=50, arities=ar, n_classes=3)
    m = MANaiveBayes(scoring=score, alpha=alpha, ess=ess).fit(X, y, arities=ar)
    expect = brute_force_proba(X, y, Xt, ar, 3, 0.5, score, alpha, ess)
    assert np.abs(m.predict_proba(Xt) - expect).max() < 1e-10


def test_oracle_missing_test_values_are_marginalized():
    X, y, Xt, ar = _problem(3)
    Xt = Xt.copy()
    Xt[np.random.default_rng(0).random(Xt.shape) < 0.3] = -1
    m = MANaiveBayes().fit(X, y, arities=ar)
    expect = brute_force_proba(X, y, Xt, ar, 2)
    assert np.abs(m.predict_proba(Xt) - expect).max() < 1e-10


def test_missing_training_values_equal_exact_bayesian_average_over_completions():
    """With missing feature values in labelled rows, P(c | x, D_obs) = sum_S P(S) sum over
    completions D of P(D | S) P(c, x | D, S) / normaliser: brute force over 8 structures x 2^4
    completions equals the fit (missing leaves integrate out exactly)."""
    rng = np.random.default_rng(4)
    n, p = 9, 3
    y = rng.integers(0, 2, n)
    X = ((rng.integers(0, 2, (n, p)) + y[:, None] * (rng.random((n, p)) < 0.6)) % 2)
    holes = [(0, 0), (2, 1), (5, 2), (7, 0)]
    Xmiss = X.copy()
    for r, c in holes:
        Xmiss[r, c] = -1
    ar = np.full(p, 2)
    Xt = np.array(list(itertools.product((0, 1), repeat=p)))
    log_terms = []
    for fill in itertools.product((0, 1), repeat=len(holes)):
        Xc = Xmiss.copy()
        for (r, c), v in zip(holes, fill):
            Xc[r, c] = v
        tables = _family_tables(Xc, y, ar, 2, "k2", 1.0, 1.0)
        cls = np.bincount(y, minlength=2) + 1.0
        for arcs in itertools.product((0, 1), repeat=p):
            log_w = 0.0
            log_pred = np.tile(np.log(cls / cls.sum()), (len(Xt), 1))
            for i, has_arc in enumerate(arcs):
                lml0, th0, lmlc, thc = tables[i]
                log_w += lmlc if has_arc else lml0
                f = thc.T if has_arc else np.tile(th0[:, None], (1, 2))
                log_pred = log_pred + np.log(f[Xt[:, i]])
            log_terms.append(log_w + log_pred)
    lj = logsumexp(np.stack(log_terms), axis=0)
    expect = np.exp(lj - logsumexp(lj, axis=1, keepdims=True))
    for missing in ("em", "available"):
        m = MANaiveBayes(fit_missing=missing).fit(Xmiss, y, arities=ar)
        assert np.abs(m.predict_proba(Xt) - expect).max() < 1e-10


# --- closed forms and structure ---------------------------------------------------------------


def test_parameters_are_the_mixture_of_eq_13():
    X, y, Xt, ar = _problem(5, arities=[2, 3, 4, 2, 2, 3, 2, 2, 2, 2], n_classes=3)
    m = MANaiveBayes().fit(X, y, arities=ar)
    tables = _family_tables(X, y, ar, 3, "k2", 1.0, 1.0)
    for i, (lml0, th0, lmlc, thc) in enumerate(tables):
        post = 1.0 / (1.0 + np.exp(lml0 - lmlc))
        assert m.arc_posterior_[i] == pytest.approx(post, rel=1e-12)
        assert np.allclose(m.theta_map_[i], thc, atol=1e-14)
        assert np.allclose(m.theta_empty_[i], th0, atol=1e-14)
        assert np.allclose(m.theta_star_[i], post * thc + (1 - post) * th0[None, :], atol=1e-14)
        assert np.allclose(m.theta_star_[i].sum(axis=1), 1.0)
        assert m.log_ml_arc_[i] == pytest.approx(lmlc, rel=1e-12)
    cls = np.bincount(y, minlength=3) + 1.0
    assert np.allclose(m.class_prior_, cls / cls.sum())


def test_k2_arc_posterior_closed_form_single_feature():
    # 1 binary feature, counts per class (3, 1) and (0, 4): ML^C = 3!1!/5! * 0!4!/5!,
    # ML^∅ = 3!5!/9! (K2, a = 1)
    X = np.array([0, 0, 0, 1, 1, 1, 1, 1])[:, None]
    y = np.array([0, 0, 0, 0, 1, 1, 1, 1])
    ml_c = (6 * 1 / 120) * (1 * 24 / 120)
    ml_0 = 6 * 120 / 362880
    m = MANaiveBayes().fit(X, y)
    assert m.arc_posterior_[0] == pytest.approx(ml_c / (ml_c + ml_0), rel=1e-12)


def test_arc_prior_one_is_map_naive_bayes_and_zero_ignores_features():
    X, y, Xt, ar = _problem(6)
    full = MANaiveBayes(arc_prior=1.0).fit(X, y, arities=ar)
    assert np.allclose(full.arc_posterior_, 1.0)
    nb = NaiveBayes(alpha=1.0).fit(X, y, arities=ar)
    assert np.allclose(full.predict_log_proba(Xt), nb.predict_log_proba(Xt), atol=1e-12)
    empty = MANaiveBayes(arc_prior=0.0).fit(X, y, arities=ar)
    assert np.allclose(empty.predict_proba(Xt), empty.class_prior_[None, :], atol=1e-12)


@pytest.mark.parametrize("alpha", [1.0, 0.5])
def test_foundation_naive_bayes_is_the_map_baseline(alpha):
    """NaiveBayes(alpha) has exactly the all-arcs eq. 6 parameters theta_map_ of MANaiveBayes,
    and its predictions are the eq. 6 naive network's, computed here by hand."""
    X, y, Xt, ar = _problem(7, arities=[2, 3, 2, 4, 2, 2, 3, 2, 2, 2], n_classes=3)
    m = MANaiveBayes(alpha=alpha).fit(X, y, arities=ar)
    nb = NaiveBayes(alpha=alpha).fit(X, y, arities=ar)
    for a, b in zip(m.theta_map_, nb.cpts_):
        assert np.allclose(a, b, atol=1e-14)
    assert np.allclose(m.class_prior_, nb.class_prior_, atol=1e-14)
    tables = _family_tables(X, y, ar, 3, "k2", alpha, 1.0)
    cls = np.bincount(y, minlength=3) + alpha
    lj = np.log(cls / cls.sum())[None, :] + sum(
        np.log(t[3].T[Xt[:, i]]) for i, t in enumerate(tables))
    expect = lj - logsumexp(lj, axis=1, keepdims=True)
    assert np.allclose(nb.predict_log_proba(Xt), expect, atol=1e-12)


@pytest.mark.parametrize("alpha", [1.0, 0.5])
def test_predict_proba_map_is_naive_bayes(alpha):
    """The MAP naive Bayes from the same fit (Dash & Cooper's baseline in one fit) equals
    NaiveBayes(alpha) to 1e-9, with and without missing test values, several arities and
    classes."""
    X, y, Xt, ar = _problem(8, arities=[2, 3, 2, 4, 2, 2, 3, 2, 2, 2], n_classes=3)
    Xt = Xt.copy()
    Xt[np.random.default_rng(1).random(Xt.shape) < 0.2] = -1
    m = MANaiveBayes(alpha=alpha).fit(X, y, arities=ar)
    nb = NaiveBayes(alpha=alpha).fit(X, y, arities=ar)
    assert np.allclose(m.predict_proba_map(Xt), nb.predict_proba(Xt), rtol=0, atol=1e-9)
    assert np.allclose(m.predict_proba_map(Xt).sum(axis=1), 1.0)


def test_structure_graph_and_labels():
    X, y, _, ar = _problem(8, p=4)
    df = pd.DataFrame(X, columns=list("abcd")).astype(str)
    labels = pd.Series(np.where(y == 1, "sick", "well"), name="a")
    m = MANaiveBayes().fit(df, labels)
    g = m.structure_
    assert isinstance(g, nx.DiGraph) and m.class_name_ == "a_"  # renamed: a feature is "a"
    assert set(g.successors("a_")) == set("abcd") and g.nodes["a_"]["role"] == "class"
    assert g["a_"]["a"]["weight"] == pytest.approx(m.arc_posterior_[0])
    assert set(m.predict(df)) <= {"sick", "well"}
    assert MANaiveBayes().fit(X, y).feature_names_ == ["x0", "x1", "x2", "x3"]


# --- incomplete data: EM ----------------------------------------------------------------------


def test_em_with_complete_data_equals_complete_data_result():
    X, y, Xt, ar = _problem(9)
    ref = MANaiveBayes(fit_missing="available").fit(X, y, arities=ar)
    em = MANaiveBayes(fit_missing="em").fit(X, y, arities=ar)
    em_empty = MANaiveBayes(fit_missing="em").fit(X, y, arities=ar, X_unlabeled=X[:0])
    for m in (em, em_empty):
        assert m.n_iter_ == 0
        assert np.array_equal(m.predict_proba(Xt), ref.predict_proba(Xt))
        assert np.array_equal(m.arc_posterior_, ref.arc_posterior_)


def test_em_fill_in_of_missing_feature_values_converges_to_the_observed_counts():
    """Per structure, EM that fills a missing feature value with its current expected counts
    converges to the eq. 6 parameters of the observed values, which the fit uses directly."""
    X, y, _, ar = _problem(15, arities=[3, 2, 4, 2, 3, 2, 2, 2, 3, 2], n_classes=2)
    X = X.copy()
    X[np.random.default_rng(1).random(X.shape) < 0.3] = -1
    m = MANaiveBayes().fit(X, y, arities=ar)
    for i, r in enumerate(ar):
        obs = X[:, i] >= 0
        n_obs = np.zeros((2, r))
        np.add.at(n_obs, (y[obs], X[obs, i]), 1.0)
        n_mis = np.bincount(y[~obs], minlength=2)[:, None]
        th_c = np.full((2, r), 1.0 / r)
        th_0 = np.full(r, 1.0 / r)
        for _ in range(300):
            th_c = _theta(n_obs + n_mis * th_c, 1.0)
            th_0 = _theta((n_obs.sum(axis=0) + n_mis.sum() * th_0)[None, :], 1.0)[0]
        assert np.allclose(th_c, m.theta_map_[i], atol=1e-10)
        assert np.allclose(th_0, m.theta_empty_[i], atol=1e-10)


def test_em_uninformative_unlabelled_rows_leave_the_model_unchanged():
    # rows with every feature missing: the E step gives them P(c), and the class prior
    # (a + N_c + M P(c)) / (A + N + M) = P(c) is already the fixed point
    X, y, Xt, ar = _problem(10)
    ref = MANaiveBayes().fit(X, y, arities=ar)
    Xu = np.full((30, X.shape[1]), -1)
    m = MANaiveBayes(tol=1e-13, max_em_iter=500).fit(X, y, arities=ar, X_unlabeled=Xu)
    assert m.n_iter_ == 1
    assert np.allclose(m.predict_proba(Xt), ref.predict_proba(Xt), atol=1e-9)
    assert np.allclose(m.class_prior_, ref.class_prior_, atol=1e-10)


def test_em_with_unlabelled_rows_reaches_a_fixed_point_and_uses_them():
    X, y, Xt, ar = _problem(11, n=40)
    Xu, _, _, _ = _problem(12, n=300)
    m = MANaiveBayes(tol=1e-12, max_em_iter=1000).fit(X, y, arities=ar, X_unlabeled=Xu)
    assert 1 < m.n_iter_ < 1000
    # one more E + M step from the fitted model does not move it
    from bnma_core.kernels.manb import naive_counts, naive_counts_soft
    lj = m._predict_log_proba_codes(Xu.astype(np.int32))
    resp = np.exp(lj - logsumexp(lj, axis=1, keepdims=True))
    counts = naive_counts(X, y.astype(np.int32), 2, 2) + naive_counts_soft(Xu, resp, 2)
    again = MANaiveBayes()
    again.classes_, again.arities_ = m.classes_, m.arities_
    again._set_parameters(counts, np.bincount(y, minlength=2) + resp.sum(axis=0),
                          np.asarray(ar), np.full(X.shape[1], 0.5))
    for a, b in zip(again.theta_star_, m.theta_star_):
        assert np.abs(a - b).max() < 1e-9
    ignored = MANaiveBayes(fit_missing="available").fit(X, y, arities=ar, X_unlabeled=Xu)
    assert ignored.n_iter_ == 0
    assert np.abs(ignored.predict_proba(Xt) - m.predict_proba(Xt)).max() > 1e-4


# --- API and errors ---------------------------------------------------------------------------


def test_sklearn_api_and_registry():
    est = make_classifier("manb")
    assert isinstance(est, MANaiveBayes)
    params = MANaiveBayes(arc_prior=0.3, scoring="bdeu").get_params()
    assert params["arc_prior"] == 0.3 and params["scoring"] == "bdeu"
    X, y, Xt, ar = _problem(13)
    a = clone(MANaiveBayes(alpha=2.0)).fit(X, y).predict_proba(Xt)
    b = MANaiveBayes(alpha=2.0).fit(X, y).predict_proba(Xt)
    assert np.array_equal(a, b)


@pytest.mark.parametrize("kwargs,match", [
    ({"scoring": "bic"}, "scoring must be one of"),
    ({"alpha": 0.0}, "alpha must be a positive"),
    ({"ess": -1.0}, "ess must be a positive"),
    ({"arc_prior": 1.5}, "must lie in"),
    ({"arc_prior": [0.5, 0.5]}, "one value per feature"),
    ({"fit_missing": "drop"}, "fit_missing must be one of"),
    ({"max_em_iter": 0}, "max_em_iter"),
])
def test_bad_parameters_raise_plain_errors(kwargs, match):
    X, y, _, _ = _problem(14, p=3)
    with pytest.raises(ValueError, match=match):
        MANaiveBayes(**kwargs).fit(X, y)


def test_cli_cross_validates_manb_next_to_nb(tmp_path, capsys):
    from bnma_core.cli import main

    out = tmp_path / "cv.csv"
    code = main(["cv", "--data", str(bundled_path("wbc.csv")), "--methods", "nb,manb",
                 "--folds", "3", "--out", str(out), "--no-progress"])
    assert code == 0 and "manb" in capsys.readouterr().out
    res = pd.read_csv(out)
    assert set(res["method"]) == {"nb", "manb"} and len(res) == 6


@parametrize_with_checks([MANaiveBayes()])
def test_sklearn_estimator_checks(estimator, check):
    check(estimator)
