"""NaiveBayes, TAN, KDB: hand computations, brute-force oracles, structure and sklearn checks."""

from __future__ import annotations

import itertools
import math

import networkx as nx
import numpy as np
import pandas as pd
import pytest
from sklearn.model_selection import StratifiedKFold, cross_val_score
from sklearn.utils.estimator_checks import parametrize_with_checks

from bnma_core.classifiers import augmented
from bnma_core.classifiers.kdb import KDB
from bnma_core.classifiers.naive_bayes import NaiveBayes
from bnma_core.classifiers.registry import make_classifier
from bnma_core.classifiers.tan import TAN
from bnma_core.data import load_dataset
from bnma_core.datasets import bundled_path
from bnma_core.scores import pairwise_conditional_mutual_information


def random_data(n=200, p=5, arity=3, n_classes=2, seed=0, missing=0.0):
    """Class-dependent chain data so that structures are non-trivial."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, n_classes, n)
    X = np.empty((n, p), dtype=np.int32)
    X[:, 0] = (y + rng.integers(0, 2, n)) % arity
    for j in range(1, p):
        flip = rng.random(n) < 0.3
        X[:, j] = np.where(flip, rng.integers(0, arity, n), (X[:, j - 1] + y) % arity)
    if missing:
        X[rng.random((n, p)) < missing] = -1
    return X, y.astype(np.int32)


# --- naive Bayes against a hand computation ---------------------------------------------------

def test_naive_bayes_matches_hand_computation_alpha_1():
    # class counts: c0 = 3 rows, c1 = 2 rows; feature 0 binary, feature 1 ternary
    X = np.array([[0, 0], [0, 1], [1, 2], [1, 2], [1, 0]])
    y = np.array([0, 0, 0, 1, 1])
    nb = NaiveBayes().fit(X, y, arities=[2, 3])
    # MAP naive Bayes (Dash & Cooper 2002 eq. 6, a_ijk = 1):
    # P(c0) = (1+3)/(2+5) = 4/7, P(c1) = 3/7
    # f0 | c0: counts (2, 1) -> (3/5, 2/5); f0 | c1: counts (0, 2) -> (1/4, 3/4)
    # f1 | c0: counts (1, 1, 1) -> (2/6, 2/6, 2/6); f1 | c1: counts (1, 0, 1) -> (2/5, 1/5, 2/5)
    np.testing.assert_allclose(nb.class_prior_, [4 / 7, 3 / 7])
    np.testing.assert_allclose(nb.cpts_[0], [[3 / 5, 2 / 5], [1 / 4, 3 / 4]])
    np.testing.assert_allclose(nb.cpts_[1], [[2 / 6, 2 / 6, 2 / 6], [2 / 5, 1 / 5, 2 / 5]])
    # x = (1, 2): P(c0, x) = 4/7 * 2/5 * 2/6, P(c1, x) = 3/7 * 3/4 * 2/5
    a, b = 4 / 7 * 2 / 5 * 2 / 6, 3 / 7 * 3 / 4 * 2 / 5
    np.testing.assert_allclose(nb.predict_proba([[1, 2]]), [[a / (a + b), b / (a + b)]])
    # missing feature 1: its factor drops out
    a, b = 4 / 7 * 2 / 5, 3 / 7 * 3 / 4
    np.testing.assert_allclose(nb.predict_proba([[1, -1]]), [[a / (a + b), b / (a + b)]])


def test_alpha_is_the_pseudo_count():
    X = np.array([[0], [0], [1], [1]])
    y = np.array([0, 0, 0, 1])
    nb = NaiveBayes(alpha=0.5).fit(X, y)
    np.testing.assert_allclose(nb.cpts_[0][0], [2.5 / 4, 1.5 / 4])
    np.testing.assert_allclose(nb.class_prior_, [3.5 / 5, 1.5 / 5])


def test_training_rows_with_missing_values_count_per_family():
    X = np.array([[0, 1], [-1, 1], [1, -1], [1, 0]])
    y = np.array([0, 0, 1, 1])
    nb = NaiveBayes().fit(X, y, arities=[2, 2])
    # feature 0 sees rows 0, 2, 3: c0 counts (1, 0), c1 counts (0, 2)
    # feature 1 sees rows 0, 1, 3: c0 counts (0, 2), c1 counts (1, 0)
    np.testing.assert_allclose(nb.cpts_[0], [[2 / 3, 1 / 3], [1 / 4, 3 / 4]])
    np.testing.assert_allclose(nb.cpts_[1], [[1 / 4, 3 / 4], [2 / 3, 1 / 3]])
    np.testing.assert_allclose(nb.class_prior_, [0.5, 0.5])


# --- exact marginalization of missing test values ---------------------------------------------

def brute_force_posterior(model, x):
    """P(c | observed part of x) by enumerating every completion of the missing values."""
    p = len(x)
    miss = [j for j in range(p) if x[j] < 0]
    n_classes = len(model.classes_)
    post = np.zeros(n_classes)
    for fill in itertools.product(*[range(int(model.arities_[j])) for j in miss]):
        full = list(x)
        for j, v in zip(miss, fill):
            full[j] = v
        for c in range(n_classes):
            prob = model.class_prior_[c]
            for i in range(p):
                row, stride = c, n_classes
                for pa in model.feature_parents_[i]:
                    row += stride * full[pa]
                    stride *= int(model.arities_[pa])
                prob *= model.cpts_[i][row, full[i]]
            post[c] += prob
    return post / post.sum()


@pytest.mark.parametrize("model", [NaiveBayes(), TAN(), KDB(k=1), KDB(k=2), KDB(k=3)])
@pytest.mark.parametrize("mode", ["enumerate", "eliminate", "small blocks"])
def test_missing_values_marginalized_exactly(model, mode, monkeypatch):
    if mode == "eliminate":
        monkeypatch.setattr(augmented, "ENUMERATION_LIMIT", 0)
    if mode == "small blocks":
        monkeypatch.setattr(augmented, "_CHUNK_CELLS", 1)
    X, y = random_data(n=150, p=5, arity=3, n_classes=3, seed=1, missing=0.05)
    model.fit(X, y, arities=[3] * 5)
    rng = np.random.default_rng(2)
    Xt = rng.integers(0, 3, (40, 5)).astype(np.int32)
    Xt[rng.random((40, 5)) < 0.4] = -1
    Xt[0] = -1  # nothing observed: the class prior
    P = model.predict_proba(Xt)
    oracle = np.array([brute_force_posterior(model, x) for x in Xt])
    np.testing.assert_allclose(P, oracle, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(P[0], model.class_prior_)


@pytest.mark.parametrize("model", [NaiveBayes(alpha=0.3), TAN(root=2), KDB(k=2)])
def test_posteriors_sum_to_one(model):
    X, y = random_data(n=120, p=6, n_classes=3, seed=3, missing=0.1)
    P = model.fit(X, y).predict_proba(X)
    assert P.shape == (120, 3)
    np.testing.assert_allclose(P.sum(axis=1), 1.0)
    assert (P > 0).all()


# --- structures ---------------------------------------------------------------------------------

def feature_graph(model):
    g = model.structure_.copy()
    g.remove_node(model.class_name_)
    return g


def test_structures_acyclic_with_right_in_degrees():
    X, y = random_data(n=200, p=6, seed=4)
    names = [f"x{j}" for j in range(6)]
    nb = NaiveBayes().fit(X, y)
    tan = TAN(root=3).fit(X, y)
    kdb = KDB(k=2).fit(X, y)
    for m in (nb, tan, kdb):
        g = m.structure_
        assert nx.is_directed_acyclic_graph(g)
        assert set(g.nodes) == set(names) | {"class"}
        assert g.in_degree("class") == 0
        assert all(g.has_edge("class", n) for n in names)
    assert all(nb.structure_.in_degree(n) == 1 for n in names)
    assert {n: tan.structure_.in_degree(n) for n in names} == {
        n: (1 if n == "x3" else 2) for n in names}
    assert nx.is_tree(feature_graph(tan).to_undirected())
    for pos, i in enumerate(kdb.order_):
        assert kdb.structure_.in_degree(f"x{i}") == 1 + min(2, pos)
        assert all(list(kdb.order_).index(j) < pos for j in kdb.feature_parents_[i])


def brute_force_max_spanning_tree_weight(W):
    p = W.shape[0]
    edges = list(itertools.combinations(range(p), 2))
    best = -math.inf
    for tree in itertools.combinations(edges, p - 1):
        g = nx.Graph(tree)
        g.add_nodes_from(range(p))
        if nx.is_connected(g):
            best = max(best, sum(W[i, j] for i, j in tree))
    return best


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_tan_tree_is_the_maximum_spanning_tree(seed):
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 3, (60, 5)).astype(np.int32)
    y = rng.integers(0, 2, 60).astype(np.int32)
    tan = TAN().fit(X, y)
    W = pairwise_conditional_mutual_information(X, y, tan.arities_, 2)
    edges = [(pa[0], i) for i, pa in enumerate(tan.feature_parents_) if pa]
    assert len(edges) == 4
    assert sum(W[u, v] for u, v in edges) == pytest.approx(
        brute_force_max_spanning_tree_weight(W), abs=1e-12)
    for u, v in edges:
        assert tan.structure_[f"x{u}"][f"x{v}"]["weight"] == pytest.approx(W[u, v])


def test_kdb_parents_have_largest_cmi():
    X, y = random_data(n=300, p=6, seed=5)
    kdb = KDB(k=2).fit(X, y)
    W = pairwise_conditional_mutual_information(X, y, kdb.arities_, 2)
    for pos, i in enumerate(kdb.order_):
        before = list(kdb.order_[:pos])
        chosen = kdb.feature_parents_[i]
        rest = [j for j in before if j not in chosen]
        if chosen and rest:
            assert min(W[i, j] for j in chosen) >= max(W[i, j] for j in rest)


def test_kdb_k0_equals_naive_bayes():
    X, y = random_data(n=150, p=5, n_classes=3, seed=6, missing=0.1)
    a = KDB(k=0).fit(X, y).predict_proba(X)
    b = NaiveBayes().fit(X, y).predict_proba(X)
    np.testing.assert_allclose(a, b)


def test_tan_root_by_name_and_bad_root():
    X, y = random_data(n=100, p=4, seed=7)
    df = pd.DataFrame(X, columns=list("abcd")).astype(str)
    tan = TAN(root="c").fit(df, y)
    assert tan.structure_.in_degree("c") == 1
    with pytest.raises(ValueError, match="not a feature name"):
        TAN(root="zz").fit(df, y)
    with pytest.raises(ValueError, match="root must be"):
        TAN(root=9).fit(X, y)


@pytest.mark.parametrize("bad", [0, -1, float("nan"), "x"])
def test_bad_alpha_is_rejected(bad):
    X, y = random_data(n=40, p=3)
    with pytest.raises(ValueError, match="alpha must be a positive number"):
        NaiveBayes(alpha=bad).fit(X, y)


@pytest.mark.parametrize(("bad", "message"), [(float("nan"), "missing values"),
                                              (None, "missing values"),
                                              (float("inf"), "infinity"),
                                              (0.5, "continuous")])
def test_bad_labels_are_named(bad, message):
    """A missing, infinite or non-integral float label is refused by name, never cast."""
    X, y = random_data(n=40, p=3)
    y = y.astype(object if bad is None else float)
    y[3] = bad
    if message == "continuous":
        y = y + bad
    with pytest.raises(ValueError, match=message):
        NaiveBayes().fit(X, y)


@pytest.mark.parametrize("bad", [-1, 1.5, "2"])
def test_bad_k_is_rejected(bad):
    X, y = random_data(n=40, p=3)
    with pytest.raises(ValueError, match="k must be a non-negative integer"):
        KDB(k=bad).fit(X, y)


# --- inputs ------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["nb", "tan", "kdb1", "kdb2"])
def test_labels_and_codes_give_the_same_predictions(name):
    X, y = random_data(n=150, p=5, seed=8, missing=0.05)
    states = np.array(["low", "mid", "high"], dtype=object)
    df = pd.DataFrame({f"f{j}": np.where(X[:, j] < 0, None, states[X[:, j]])
                       for j in range(5)})
    # the encoder sorts labels alphabetically: high, low, mid -> map codes the same way
    relabel = {"high": 0, "low": 1, "mid": 2}
    codes = np.vectorize(lambda v: relabel.get(v, -1), otypes=[int])(df.to_numpy(dtype=object))
    labels = np.array(["benign", "malignant"])[y]
    m_df = make_classifier(name).fit(df, pd.Series(labels, name="diagnosis"))
    m_codes = make_classifier(name).fit(codes, labels, arities=[3] * 5)
    np.testing.assert_allclose(m_df.predict_proba(df), m_codes.predict_proba(codes))
    assert list(m_df.predict(df)) == list(m_codes.predict(codes))
    assert m_df.class_name_ == "diagnosis"
    assert set(m_df.structure_.nodes) == {f"f{j}" for j in range(5)} | {"diagnosis"}


def test_wbc_naive_bayes_accuracy():
    d = load_dataset(str(bundled_path("wbc.csv")))
    cv = StratifiedKFold(10, shuffle=True, random_state=1)
    assert cross_val_score(NaiveBayes(), d.X, d.y, cv=cv).mean() > 0.9
    assert cross_val_score(TAN(), d.X, d.y, cv=cv).mean() > 0.9


def test_registry_entries():
    assert isinstance(make_classifier("nb"), NaiveBayes)
    assert make_classifier("kdb1").k == 1
    assert make_classifier("kdb2").k == 2
    assert make_classifier("kdb").k == 2
    assert isinstance(make_classifier("tan", alpha=2.0), TAN)


# --- scikit-learn estimator checks ---------------------------------------------------------------
# The full check suite runs. The only check not run is check_array_api_input, which sklearn
# itself skips unless SCIPY_ARRAY_API is set (these estimators take discrete codes/labels, not
# array-API tensors).

@parametrize_with_checks([NaiveBayes(), TAN(), KDB(), TAN(cpt_prior="bdeu", ess=1.0)])
def test_sklearn_compatible(estimator, check):
    check(estimator)


# --- named CPT priors (the EAP prior of Sugahara et al.) -----------------------------------------

def test_naive_bayes_eap_prior_matches_hand_computation():
    # EAP: theta_ijk = (N_ijk + ess/(r_i q_i)) / (N_ij + ess/q_i); the class is parentless (q=1)
    X = np.array([[0, 0], [0, 1], [1, 2], [1, 2], [1, 0]])
    y = np.array([0, 0, 0, 1, 1])
    nb = NaiveBayes(cpt_prior="bdeu", ess=1.0).fit(X, y, arities=[2, 3])
    # class: r = 2, q = 1 -> a = 1/2: ((3 + 1/2) / 6, (2 + 1/2) / 6)
    np.testing.assert_allclose(nb.class_prior_, [3.5 / 6, 2.5 / 6], rtol=1e-12)
    # f0: r = 2, q = 2 -> a = 1/4; c0 counts (2, 1), c1 counts (0, 2)
    np.testing.assert_allclose(nb.cpts_[0], [[2.25 / 3.5, 1.25 / 3.5], [0.25 / 2.5, 2.25 / 2.5]],
                               rtol=1e-12)
    # f1: r = 3, q = 2 -> a = 1/6; c0 counts (1, 1, 1), c1 counts (1, 0, 1)
    a = 1 / 6
    np.testing.assert_allclose(nb.cpts_[1], [[(1 + a) / 3.5] * 3,
                                             [(1 + a) / 2.5, a / 2.5, (1 + a) / 2.5]],
                               rtol=1e-12)
    # ess scales every pseudo-count
    nb2 = NaiveBayes(cpt_prior="bdeu", ess=4.0).fit(X, y, arities=[2, 3])
    np.testing.assert_allclose(nb2.class_prior_, [5 / 9, 4 / 9], rtol=1e-12)


def test_tan_eap_prior_matches_hand_computed_cpts():
    X, y = random_data(n=120, p=4, arity=3, n_classes=2, seed=11)
    tan = TAN(cpt_prior="bdeu", ess=1.0).fit(X, y)
    m = 2
    for i, pa in enumerate(tan.feature_parents_):
        fam = [None] + pa  # class first, then the feature parents
        q = m * int(np.prod([3 for _ in pa]))
        a = 1.0 / (3 * q)
        for cfg in itertools.product(range(m), *[range(3)] * len(pa)):
            mask = y == cfg[0]
            for v, val in zip(fam[1:], cfg[1:]):
                mask &= X[:, v] == val
            j = cfg[0] + m * sum(val * 3 ** k for k, val in enumerate(cfg[1:]))
            n_jk = np.array([(X[mask, i] == k).sum() for k in range(3)], dtype=float)
            np.testing.assert_allclose(tan.cpts_[i][j], (n_jk + a) / (n_jk.sum() + 1 / q),
                                       rtol=1e-12)


@pytest.mark.parametrize("cls", [NaiveBayes, TAN, KDB])
def test_prior_none_keeps_alpha_and_named_k2_equals_alpha_1(cls):
    X, y = random_data(n=150, p=5, seed=12, missing=0.05)
    ref = cls().fit(X, y).predict_proba(X)
    for kw in ({"cpt_prior": "k2"}, {"cpt_prior": "laplace"}, {"cpt_prior": 1.0},
               {"cpt_prior": None}):
        np.testing.assert_array_equal(cls(**kw).fit(X, y).predict_proba(X), ref)
    a = cls(alpha=0.3).fit(X, y)
    b = cls(cpt_prior=0.3).fit(X, y)
    np.testing.assert_array_equal(a.predict_proba(X), b.predict_proba(X))


@pytest.mark.parametrize("kw, match", [
    ({"cpt_prior": "dirichlet"}, "cpt_prior must be None, one of 'bdeu'"),
    ({"cpt_prior": -1.0}, "cpt_prior must be None, .* or a positive number"),
    ({"cpt_prior": "bdeu", "ess": 0.0}, "ess must be a positive"),
    ({"cpt_prior": "bdeu", "alpha": 2.0}, "either cpt_prior")])
def test_bad_prior_is_rejected(kw, match):
    X, y = random_data(n=40, p=3)
    with pytest.raises(ValueError, match=match):
        NaiveBayes(**kw).fit(X, y)


def test_structure_vocabulary():
    X, y = random_data(n=100, p=4, seed=13)
    g = TAN().fit(X, y).structure_
    assert g.nodes["class"]["role"] == "class"
    assert {g.nodes[v]["role"] for v in g if v != "class"} == {"feature"}
    roles = {(a, b): d["role"] for a, b, d in g.edges(data=True)}
    assert {r for (a, _), r in roles.items() if a == "class"} == {"class"}
    assert {r for (a, _), r in roles.items() if a != "class"} == {"parent"}
    assert all("weight" in d and "kind" not in d for _, _, d in g.edges(data=True))


def test_unseen_values_warn_and_are_marginalized():
    """A label or state code no training row had is treated as missing, with a warning that
    names the column; missing and seen values do not warn."""
    import warnings

    from bnma_core.classifiers.base import UnseenValueWarning

    X, y = random_data(n=60, p=3)
    frame = pd.DataFrame(X, columns=["a", "b", "c"]).astype(str)
    m = NaiveBayes().fit(frame, y)
    test = frame.iloc[:4].copy()
    test.iloc[1, 1] = "never"
    test.iloc[2, 1] = "seen-nowhere"
    with pytest.warns(UnseenValueWarning, match=r"b \(2 rows, e\.g\. 'never'\)") as rec:
        p = m.predict_proba(test)
    assert len(rec) == 1 and rec[0].filename == __file__  # points at this call
    as_missing = test.copy()
    as_missing.iloc[1:3, 1] = None
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        np.testing.assert_allclose(p, m.predict_proba(as_missing), atol=1e-12)
    codes = NaiveBayes().fit(X, y)
    bad = X[:3].copy()
    bad[0, 2] = codes.arities_[2] + 4
    with pytest.warns(UnseenValueWarning, match=rf"x2 \(1 row, e\.g\. {bad[0, 2]}\)"):
        p = codes.predict_proba(bad)
    bad[0, 2] = -1
    np.testing.assert_allclose(p, codes.predict_proba(bad), atol=1e-12)
