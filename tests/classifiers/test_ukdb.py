"""UKDB: information identities through the model, k = 0 == naive Bayes, brute-force oracles
for both networks and for missing-value marginalization, structure properties, explanation."""

from __future__ import annotations

import itertools
import math
from pathlib import Path

import networkx as nx
import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as hst
from sklearn.base import clone
from sklearn.utils.estimator_checks import parametrize_with_checks

from bnma_core.classifiers.ukdb import (
    MODES,
    UKDB,
    build_k_dependence_structure,
    chain_conditionals,
)
from bnma_core.data import load_dataset
from bnma_core.datasets import bundled_path
from bnma_core.scores import (
    conditional_local_mutual_information,
    joint_distribution,
    local_mutual_information,
)

WBC = str(bundled_path("wbc.csv"))


def _random_problem(seed: int, n: int = 120, arities=(2, 3, 2, 3), m: int = 2,
                    missing: float = 0.0):
    rng = np.random.default_rng(seed)
    p = len(arities)
    y = rng.integers(0, m, n)
    X = np.empty((n, p), dtype=np.int64)
    X[:, 0] = (y + rng.integers(0, 2, n) * rng.integers(0, arities[0], n)) % arities[0]
    for j in range(1, p):  # a chain of dependences so CMI is not flat
        X[:, j] = (X[:, j - 1] + y * rng.integers(0, 2, n) + rng.integers(0, 2, n)) % arities[j]
    if missing:
        X[rng.random((n, p)) < missing] = -1
    return X, y


def _brute_log_posterior(X, y, m, arities, class_parents, parents, x, alpha):
    """P(c | x_p) prod P(x_i | c, pi_i) by direct counting (rows with a missing value in a
    family are skipped), normalised over c."""
    out = np.zeros(m)
    for c in range(m):
        sel = np.all([X[:, v] == x[v] for v in class_parents], axis=0) if class_parents \
            else np.ones(len(y), bool)
        out[c] += np.log(((y[sel] == c).sum() + alpha) / (sel.sum() + m * alpha))
        for i, pa in parents.items():
            if x[i] < 0:
                continue
            s = (X[:, i] >= 0) & (y == c)
            for v in pa:
                s &= X[:, v] == x[v]
            out[c] += np.log(((X[s, i] == x[i]).sum() + alpha) / (s.sum() + arities[i] * alpha))
    return out - np.logaddexp.reduce(out)


# --- information measures through the model's code path --------------------------------------

@pytest.mark.parametrize("smoothing", [0.0, 0.5])
def test_lmi_and_clmi_average_to_mi_and_cmi(smoothing):
    X, y = _random_problem(0, missing=0.1)
    model = UKDB(mi_smoothing=smoothing, base=2.0).fit(X, y)
    p = X.shape[1]
    data = np.column_stack([X, y])
    ar = np.append(model.arities_, 2)
    for i in range(p):
        pxc = joint_distribution(data, [i, p], ar, smoothing=smoothing)
        total = 0.0
        for a in range(ar[i]):
            x = np.full(p, -1)
            x[i] = a
            lmi, _ = model.local_information(x)
            total += pxc[a].sum() * lmi[i]
        assert total == pytest.approx(model.mi_[i], abs=1e-12)
    for i, j in itertools.combinations(range(p), 2):
        pxyc = joint_distribution(data, [i, j, p], ar, smoothing=smoothing)
        total = 0.0
        for a in range(ar[i]):
            for b in range(ar[j]):
                x = np.full(p, -1)
                x[i], x[j] = a, b
                _, clmi = model.local_information(x)
                total += pxyc[a, b].sum() * clmi[i, j]
        assert total == pytest.approx(model.cmi_[i, j], abs=1e-12)
        assert model.cmi_[i, j] >= -1e-12


@pytest.mark.parametrize("smoothing", [0.0, 0.5])
def test_pseudo_instances_equal_weighted_rows(smoothing):
    """local_information with pseudo weights == the scores functions on the training rows plus
    the weighted pseudo rows (an independent path through joint_distribution)."""
    X, y = _random_problem(1, missing=0.05)
    model = UKDB(mi_smoothing=smoothing).fit(X, y)
    x = X[3].copy()
    x[1] = 2
    x[2] = -1
    w = np.array([0.3, 0.7])
    lmi, clmi = model.local_information(x, w)
    p = X.shape[1]
    data = np.vstack([np.column_stack([X, y]), np.column_stack([np.tile(x, (2, 1)), [0, 1]])])
    weights = np.concatenate([np.ones(len(y)), w])
    ar = np.append(model.arities_, 2)
    for i in range(p):
        if x[i] < 0:
            assert np.isnan(lmi[i])
            continue
        pj = joint_distribution(data, [i, p], ar, weights, smoothing)
        assert lmi[i] == pytest.approx(local_mutual_information(pj, x[i], 2.0), abs=1e-12)
    for i, j in itertools.combinations(range(p), 2):
        if x[i] < 0 or x[j] < 0:
            assert np.isnan(clmi[i, j])
            continue
        pj = joint_distribution(data, [i, j, p], ar, weights, smoothing)
        ref = conditional_local_mutual_information(pj, x[i], x[j], 2.0)
        assert clmi[i, j] == pytest.approx(ref, abs=1e-12)


# --- structure ---------------------------------------------------------------------------------

def test_structure_construction_by_hand():
    d = np.array([[0, 5, 1, 0],
                  [5, 0, 4, 1],
                  [1, 4, 0, 3],
                  [0, 1, 3, 0]], dtype=float)
    st = build_k_dependence_structure(d, 1)
    # SCMI: 6, 10, 8, 4 -> order 1, 2, 0, 3
    assert st.order == [1, 2, 0, 3]
    assert st.class_parents == [1]
    assert st.parents == {2: [1], 0: [1], 3: [2]}
    st2 = build_k_dependence_structure(d, 2, candidates=[0, 2, 3])
    assert st2.order == [2, 3, 0] and st2.class_parents == [2, 3] and st2.parents == {0: [2, 3]}
    st3 = build_k_dependence_structure(d, 2, min_dependence=2.0)
    assert st3.parents == {0: [1], 3: [2]}


def test_floating_point_ties_fall_to_lower_index():
    d = np.full((4, 4), 0.3)
    np.fill_diagonal(d, 0)
    noisy = d + np.triu(np.full((4, 4), 1e-14), 1) * np.array([[0, 1, 0, 1]] * 4)
    noisy = np.triu(noisy, 1) + np.triu(noisy, 1).T
    a = build_k_dependence_structure(d, 1)
    b = build_k_dependence_structure(noisy, 1)
    assert a.order == b.order == [0, 1, 2, 3]
    assert a.parents == b.parents == {1: [0], 2: [0], 3: [0]}


@pytest.mark.parametrize("k", [0, 1, 2, 3])
def test_structures_acyclic_and_k_bounded(k):
    X, y = _random_problem(2, n=150, arities=(2, 3, 2, 3, 2), missing=0.1)
    model = UKDB(k=k).fit(X, y)
    for r in range(0, 150, 15):
        e = model.explain(X[r])
        for g, cps in ((e.domain_graph, e.class_parents_domain),
                       (e.personalized_graph, e.class_parents_personalized)):
            assert nx.is_directed_acyclic_graph(g)
            assert set(g.predecessors("class")) == set(cps)
            for node in g.nodes:
                if node == "class":
                    continue
                att_parents = [u for u in g.predecessors(node) if u != "class"]
                if node in cps:
                    assert "class" not in g.predecessors(node)
                else:
                    assert len(att_parents) <= k
        n_obs = int((X[r] >= 0).sum())
        assert len(e.class_parents_personalized) == min(k, n_obs)
        missing = {f"x{j}" for j in np.flatnonzero(X[r] < 0)}
        for v in missing:  # missing values are left out of UKDB_P
            assert e.personalized_graph.degree(v) == 0


# --- predictions against brute force -----------------------------------------------------------

@pytest.mark.parametrize("k", [1, 2])
def test_domain_and_personalized_match_brute_force(k):
    X, y = _random_problem(3, n=100, arities=(2, 3, 2, 3))
    model = UKDB(k=k, alpha=0.7, pseudo_weights="none").fit(X, y)
    st = model.domain_structure_
    dom = UKDB(k=k, alpha=0.7, mode="domain").fit(X, y).predict_proba(X[:20])
    per = UKDB(k=k, alpha=0.7, mode="personalized", pseudo_weights="none").fit(X, y)
    per_p = per.predict_proba(X[:20])
    for r in range(20):
        ref = _brute_log_posterior(X, y, 2, model.arities_, st.class_parents, st.parents,
                                   X[r], 0.7)
        assert np.allclose(np.log(dom[r]), ref, atol=1e-12)
        pst, _, _ = model.personalized_structure(X[r], np.zeros(2))
        ref_p = _brute_log_posterior(X, y, 2, model.arities_, pst.class_parents, pst.parents,
                                     X[r], 0.7)
        assert np.allclose(np.log(per_p[r]), ref_p, atol=1e-12)
    ens = UKDB(k=k, alpha=0.7, pseudo_weights="none").fit(X, y).predict_proba(X[:20])
    assert np.allclose(ens, 0.5 * (dom + per_p), atol=1e-12)


@pytest.mark.parametrize("mode", ["domain", "personalized", "ensemble"])
def test_k0_is_naive_bayes(mode):
    X, y = _random_problem(4, n=90, arities=(3, 2, 3, 2), m=3, missing=0.1)
    alpha = 1.0
    model = UKDB(k=0, mode=mode, alpha=alpha).fit(X, y)
    Xt = X[:30].copy()
    Xt[0] = -1  # a row with nothing observed: the class prior
    post = model.predict_proba(Xt)
    m = 3
    for r, x in enumerate(Xt):
        lp = np.log((np.bincount(y, minlength=m) + alpha) / (len(y) + m * alpha))
        for i in range(X.shape[1]):
            if x[i] < 0:
                continue
            for c in range(m):
                s = (y == c) & (X[:, i] >= 0)
                lp[c] += np.log(((X[s, i] == x[i]).sum() + alpha)
                                / (s.sum() + model.arities_[i] * alpha))
        assert np.allclose(post[r], np.exp(lp - np.logaddexp.reduce(lp)), atol=1e-12)


def test_missing_values_marginalized_exactly_in_domain_model():
    """P_L(c | x_obs) == sum over completions of the network's joint (brute force)."""
    X, y = _random_problem(5, n=150, arities=(2, 3, 2, 2))
    model = UKDB(k=1, mode="domain").fit(X, y)
    ar = model.arities_
    rows = [np.array([-1, 1, 0, 1]), np.array([1, -1, -1, 0]), np.array([-1, -1, -1, -1]),
            np.array([0, 2, -1, -1]), np.array([-1, 0, 1, -1])]
    full = np.array(list(itertools.product(*[range(a) for a in ar])))
    joint = np.exp(_grid_eval(model, full))  # log P(x, c) of every complete instance
    assert joint.sum() == pytest.approx(1.0, abs=1e-12)  # a proper distribution
    for x in rows:
        keep = np.all([(full[:, j] == x[j]) | (x[j] < 0) for j in range(len(x))], axis=0)
        ref = joint[keep].sum(axis=0)
        assert np.allclose(model.predict_proba(x[None, :])[0], ref / ref.sum(), atol=1e-12)


# --- UKDB_L through bnma_core.factors == the former grid enumeration ---------------------------

def _grid_tables(model):
    """The former UKDB_L parameters, recomputed from the training codes: log P(x_p) +
    log P(c | x_p) as a (q_p, m) table and log P(x_i | c, pi_i) with parents (C, *pi_i)."""
    from bnma_core.kernels.counting import parent_strides
    from bnma_core.scores import family_counts, posterior_cpt

    st, data, ar, c = model.domain_structure_, model._data, model._ar, len(model.arities_)
    cp = np.asarray(st.class_parents, dtype=np.int64)
    cc = family_counts(data, c, cp, ar)
    log_pxp = np.log(posterior_cpt(cc.sum(axis=1)[None, :], model.alpha)[0])
    class_table = np.log(posterior_cpt(cc, model.alpha)) + log_pxp[:, None]
    cpts, strides = {}, {}
    for i, pa in st.parents.items():
        fam = np.asarray([c, *pa], dtype=np.int64)
        cpts[i] = np.log(posterior_cpt(family_counts(data, i, fam, ar), model.alpha))
        strides[i] = parent_strides(fam, ar)
    return class_table, parent_strides(cp, ar), cpts, strides


def _grid_eval(model, rows):
    """Former ``UKDB._domain_eval``: log P(c, observed part) for rows whose missing attributes
    are barren except X_p, which must be complete."""
    class_table, class_strides, cpts, strides = _grid_tables(model)
    st = model.domain_structure_
    n, m = rows.shape[0], model.n_classes_
    if st.class_parents:
        out = class_table[rows[:, st.class_parents].astype(np.int64) @ class_strides].copy()
    else:
        out = np.repeat(class_table, n, axis=0)
    for i, pa in st.parents.items():
        xi = rows[:, i]
        present = xi >= 0
        cfg = np.where(present[:, None], rows[:, pa], 0).astype(np.int64) @ strides[i][1:]
        xs = np.where(present, xi, 0)
        for c in range(m):
            out[:, c] += np.where(present, cpts[i][cfg + c, xs], 0.0)
    return out


def _grid_log_scores(model, X):
    """Former ``UKDB._domain_log_scores``: missing X_p members and ancestors of observed
    attributes enumerated on a grid, the other missing attributes dropped (barren)."""
    st = model.domain_structure_
    children = {i: [j for j, pa in st.parents.items() if i in pa] for i in range(X.shape[1])}
    out = np.empty((X.shape[0], model.n_classes_))
    for idx, row in enumerate(X):
        missing = {int(i) for i in np.flatnonzero(row < 0)}
        changed = True
        while changed:
            changed = False
            for v in sorted(missing):
                if v not in st.class_parents and all(row[ch] < 0 and ch not in missing
                                                     for ch in children[v]):
                    missing.discard(v)
                    changed = True
        rel = sorted(missing)
        sizes = [int(model._ar[v]) for v in rel]
        grid = np.repeat(row[None, :], int(np.prod(sizes)), axis=0)
        if rel:
            grid[:, rel] = np.indices(sizes).reshape(len(rel), -1).T
        out[idx] = np.logaddexp.reduce(_grid_eval(model, grid), axis=0)
    return out


def _normalised(lp):
    return np.exp(lp - np.logaddexp.reduce(lp, axis=1, keepdims=True))


def _assert_domain_equals_grid(model, Xt):
    got = model.predict_proba(Xt)
    ref = _normalised(_grid_log_scores(model, np.asarray(Xt, dtype=np.int64)))
    np.testing.assert_allclose(got, ref, rtol=0, atol=1e-12)


@pytest.mark.parametrize("k", [1, 2, 3])
def test_domain_missing_values_equal_grid_on_wbc(wbc, k):
    feats = [j for j in range(wbc.codes.shape[1]) if j != wbc.class_index]
    codes = wbc.codes[:, feats].astype(np.int64)
    model = UKDB(k=k, mode="domain").fit(codes, wbc.codes[:, wbc.class_index],
                                         arities=wbc.arities[feats])
    rng = np.random.default_rng(k)
    rows = codes[rng.choice(len(codes), 120, replace=False)]
    rows[rng.random(rows.shape) < 0.15] = -1
    rows[0] = -1  # nothing observed: the class prior
    rows[1, model.domain_structure_.class_parents] = -1  # all of X_p missing
    assert len(model.domain_structure_.class_parents) == k
    _assert_domain_equals_grid(model, rows)
    _assert_domain_equals_grid(model, codes[:80])  # complete rows unchanged


@pytest.mark.parametrize("k", [1, 2, 3])
@pytest.mark.parametrize("seed", [0, 1])
def test_domain_missing_values_equal_grid_on_random_data(k, seed):
    arities = (2, 3, 2, 3, 2)
    X, y = _random_problem(30 + seed, n=200, arities=arities, m=3, missing=0.05)
    model = UKDB(k=k, mode="domain", alpha=0.7).fit(X, y)
    assert len(model.domain_structure_.class_parents) == k
    full = np.array(list(itertools.product(*[range(a) for a in arities])))
    rng = np.random.default_rng(seed)
    Xt = full.copy()
    Xt[rng.random(Xt.shape) < 0.4] = -1
    patterns = np.array(list(itertools.product([False, True], repeat=len(arities))))
    Xt2 = np.where(patterns, -1, full[rng.integers(0, len(full), len(patterns))])
    _assert_domain_equals_grid(model, np.vstack([Xt, Xt2]))  # every missingness pattern
    _assert_domain_equals_grid(model, full)  # complete rows unchanged


def test_domain_factor_model_matches_fitted_tables():
    """The FactorModel's chain of X_p conditionals multiplies back to the smoothed joint
    P(x_p); the class and attribute CPTs are the fitted ones; the model is cached outside
    ``__dict__`` and rebuilt after a new fit."""
    X, y = _random_problem(8, n=150, arities=(2, 3, 2, 3), m=2)
    model = UKDB(k=2, mode="domain").fit(X, y)
    before = dict(model.__dict__)
    fm = model._factor_model()
    assert model._factor_model() is fm and model.__dict__.keys() == before.keys()
    cp = model.domain_structure_.class_parents
    full = np.array(list(itertools.product(*[range(model.arities_[v]) for v in cp[::-1]])))
    full = full[:, ::-1]  # first member fastest, the layout of _pxp
    prod = np.ones(len(full))
    for j, v in enumerate(cp):
        assert list(fm.parents[v]) == cp[:j]
        row = full[:, :j] @ fm.strides(v) if j else np.zeros(len(full), dtype=np.int64)
        prod *= fm.cpts[v][row, full[:, j]]
    np.testing.assert_allclose(prod, model._pxp, rtol=1e-13)
    np.testing.assert_array_equal(fm.cpts[X.shape[1]], model._class_cpt)
    model.fit(X[:100], y[:100])
    assert model._factor_model() is not fm


@pytest.mark.parametrize("seed", range(4))
def test_chain_conditionals_multiply_back_to_the_joint(seed):
    rng = np.random.default_rng(seed)
    cards = rng.integers(1, 4, rng.integers(1, 4))
    cards[-1] = 3  # not all of size 1
    joint = rng.random(int(np.prod(cards)))
    joint /= joint.sum()
    chain = chain_conditionals(joint, cards)
    for j, t in enumerate(chain):
        assert t.shape == (int(np.prod(cards[:j])), cards[j])
        np.testing.assert_allclose(t.sum(axis=1), 1.0, rtol=1e-13)
    states = np.array(list(itertools.product(*[range(r) for r in cards[::-1]])))[:, ::-1]
    prod = np.ones(len(states))
    for j, t in enumerate(chain):
        strides = np.cumprod(np.r_[1, cards[:j]])[:j]
        prod *= t[states[:, :j] @ strides, states[:, j]]
    idx = states @ np.cumprod(np.r_[1, cards[:-1]])
    np.testing.assert_allclose(prod, joint[idx], rtol=1e-13)


# --- data with missing values, determinism, API ------------------------------------------------

def test_wbc_missing_values_classify_and_reproduce():
    df = pd.read_csv(WBC)
    X, y = df.drop(columns="class"), df["class"]
    miss = X["bare_nuclei"].isna().to_numpy()
    assert miss.sum() == 16
    a = UKDB().fit(X, y)
    b = clone(a).fit(X, y)
    pa, pb = a.predict_proba(X[miss]), b.predict_proba(X[miss])
    assert np.isfinite(pa).all() and np.allclose(pa.sum(axis=1), 1)
    assert np.array_equal(pa, pb)
    assert (a.predict(X.iloc[::4]) == y.iloc[::4]).mean() > 0.95
    e = a.explain(X[miss].iloc[[0]])
    assert e.instance["bare_nuclei"] is None
    assert "bare_nuclei" not in set(e.differing_pairs["feature_a"]) | set(
        e.differing_pairs["feature_b"])
    assert e.personalized_graph.degree("bare_nuclei") == 0
    assert e.domain_graph.nodes["bare_nuclei"]["missing"]


def test_explanation_contents():
    df = pd.read_csv(WBC)
    X, y = df.drop(columns="class"), df["class"]
    model = UKDB(k=2).fit(X, y)
    e = model.explain(X.iloc[[5]])
    assert e.class_name == "class" and e.classes == ["benign", "malignant"]
    assert np.allclose(e.posterior_ensemble, model.predict_proba(X.iloc[[5]])[0])
    assert np.allclose(e.posterior_ensemble, (e.posterior_domain + e.posterior_personalized) / 2)
    assert list(e.differing_pairs.columns) == ["feature_a", "value_a", "feature_b", "value_b",
                                               "clmi", "cmi", "difference", "text"]
    assert len(e.differing_pairs) == 36
    d = e.differing_pairs["difference"].abs().to_numpy()
    assert (np.diff(d) <= 1e-15).all()
    first = e.differing_pairs.iloc[0]
    assert first["text"] == (f"{first['feature_a'].replace('_', ' ')} = {first['value_a']} and "
                             f"{first['feature_b'].replace('_', ' ')} = {first['value_b']}: "
                             f"CLMI {first['clmi']:.4f} here, CMI {first['cmi']:.4f} overall")
    for a, b, w in e.domain_graph.edges(data="weight"):
        if a != "class" and b != "class":
            i, j = list(X.columns).index(a), list(X.columns).index(b)
            assert w == pytest.approx(model.cmi_[i, j])
    assert "ensemble (UKDB)" in e.summary()
    # the same explanation from a code array
    codes = model._prepare_predict(X.iloc[[5]])[0]
    e2 = model.explain(codes)
    assert np.allclose(e2.posterior_ensemble, e.posterior_ensemble)


def test_bad_input_is_explained():
    X, y = _random_problem(7, n=40)
    with pytest.raises(ValueError, match="k must be"):
        UKDB(k=-1).fit(X, y)
    with pytest.raises(ValueError, match="mode must be one of"):
        UKDB(mode="both").fit(X, y)
    with pytest.raises(ValueError, match="alpha"):
        UKDB(alpha=0).fit(X, y)
    with pytest.raises(ValueError, match="pseudo_weights"):
        UKDB(pseudo_weights="x").fit(X, y)
    model = UKDB().fit(X, y)
    with pytest.raises(ValueError, match="one instance"):
        model.explain(pd.DataFrame(X[:2], columns=[f"x{j}" for j in range(4)]))
    with pytest.raises(ValueError, match="trained on 4 features"):
        model.explain(X[0, :3])
    assert UKDB(k=1, mode="domain").get_params()["k"] == 1


def test_wbc_largest_cmi_reproduces_paper():
    """Paper: largest CMI 0.4733 on WBC. Found: maximum-likelihood CMI in bits on the 683
    complete rows, pair uniformity of cell size / uniformity of cell shape, 0.4744."""
    ds = load_dataset(WBC, missing="drop")
    model = UKDB(mode="domain", base=2.0, mi_smoothing=0.0).fit(ds.X, ds.y)
    i, j = np.unravel_index(np.argmax(model.cmi_), model.cmi_.shape)
    assert {ds.feature_names[i], ds.feature_names[j]} == {"cell_size", "cell_shape"}
    assert model.cmi_[i, j] == pytest.approx(0.4744, abs=5e-5)
    assert abs(model.cmi_[i, j] - 0.4733) < 0.002


def test_registrations():
    from bnma_core.classifiers.registry import make_classifier
    for name, k, mode in [("ukdb", 2, "ensemble"), ("ukdb1", 1, "ensemble"),
                          ("ukdb2", 2, "ensemble"), ("ukdb_l", 2, "domain"),
                          ("ukdb_p", 2, "personalized"), ("ukdb_cv", 2, "ensemble")]:
        est = make_classifier(name, random_state=0)
        assert isinstance(est, UKDB) and est.k == k and est.mode == mode
    assert make_classifier("ukdb_cv").k_grid == (1, 2)


def test_figures():
    from bnma_core.viz import posterior_bars_figure, ukdb_structures_figure
    df = pd.read_csv(WBC)
    X, y = df.drop(columns="class"), df["class"]
    model = UKDB().fit(X, y)
    e = model.explain(X.iloc[[23]])
    fig = ukdb_structures_figure(e)
    red = [a for a in fig.layout.annotations if a.arrowcolor == "#d62728"]
    only_d = {(a, b) for a, b in e.domain_graph.edges
              if "class" not in (a, b) and not (e.personalized_graph.has_edge(a, b)
                                                or e.personalized_graph.has_edge(b, a))}
    only_p = {(a, b) for a, b in e.personalized_graph.edges
              if "class" not in (a, b) and not (e.domain_graph.has_edge(a, b)
                                                or e.domain_graph.has_edge(b, a))}
    assert len(red) == len(only_d) + len(only_p) > 0
    bars = posterior_bars_figure(e, e.classes)
    assert len(bars.data) == 3 and np.allclose(bars.data[2].y, e.posterior_ensemble)


@pytest.mark.parametrize("mode", ["domain", "ensemble"])
def test_k0_equals_project_naive_bayes(mode):
    from bnma_core.classifiers.naive_bayes import NaiveBayes
    df = pd.read_csv("/work/shared/data/vote.csv") if Path(
        "/work/shared/data/vote.csv").exists() else pd.read_csv(WBC)
    X, y = df.drop(columns="class"), df["class"]
    Xt = X.iloc[:80]
    ours = UKDB(k=0, mode=mode).fit(X, y).predict_proba(Xt)
    ref = NaiveBayes(alpha=1.0).fit(X, y).predict_proba(Xt)
    assert Xt.isna().any(axis=1).sum() > 0
    assert np.allclose(ours, ref, atol=1e-10)


@parametrize_with_checks([UKDB(k=1)])
def test_sklearn_compatible(estimator, check):
    check(estimator)


def test_cli_explain(capsys):
    from bnma_core.cli import main
    assert main(["explain", "--data", WBC, "--row", "23", "--k", "1", "--pairs", "2"]) == 0
    out = capsys.readouterr().out
    assert "Row 23" in out and "bare_nuclei = ?" in out and "ensemble (UKDB)" in out
    assert out.count("CLMI") == 2
    assert main(["explain", "--data", WBC, "--row", "5000"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("bnma: error:") and "past the end" in err and "Traceback" not in err


def test_graph_vocabulary_and_cpt_layout_match_the_library():
    """Node ``role`` / edge ``role`` + ``weight`` as in the augmented classifiers; attribute CPTs
    in the (q, r) layout with the class as the first (fastest) parent."""
    from bnma_core.scores import family_counts, posterior_cpt

    X, y = _random_problem(21, missing=0.05)
    model = UKDB(k=2, alpha=0.5).fit(X, y)
    for g in (model.structure_, model.explain(X[0]).personalized_graph):
        assert g.nodes[model.class_name_]["role"] == "class"
        assert {d["role"] for v, d in g.nodes(data=True) if v != model.class_name_} \
            == {"feature"}
        assert all("kind" not in d for _, d in g.nodes(data=True))
        assert {d["role"] for *_, d in g.edges(data=True)} <= {"class", "class-parent",
                                                               "joint", "parent"}
    data = np.column_stack([X, y])
    ar = np.append(model.arities_, 2)
    for i, pa in model.domain_structure_.parents.items():
        ref = posterior_cpt(family_counts(data, i, [4] + list(pa), ar), 0.5)
        np.testing.assert_allclose(model._cpts[i], ref, rtol=1e-12)


@pytest.mark.parametrize("pseudo_in_parameters", [False, True])
def test_personalized_scores_equal_weighted_family_counts(pseudo_in_parameters):
    """UKDB_P's factors are posterior CPT entries of the training rows plus (optionally) the
    pseudo instances "x labelled c" with weight w_c, counted family by family."""
    from bnma_core.kernels.counting import parent_strides
    from bnma_core.scores import family_counts, posterior_cpt

    X, y = _random_problem(23, m=3, missing=0.1)
    model = UKDB(k=2, alpha=0.7, pseudo_in_parameters=pseudo_in_parameters).fit(X, y)
    p, m = X.shape[1], 3
    ar = np.append(model.arities_, m).astype(np.int64)
    for x in X[:15]:
        w = np.array([0.2, 0.5, 0.3])
        st, _, _ = model.personalized_structure(x, w)
        got = model._personalized_log_scores(x, st, w)
        pseudo = np.column_stack([np.repeat(x[None, :], m, axis=0), np.arange(m)])
        data = np.vstack([np.column_stack([X, y]), pseudo]).astype(np.int32)
        wts = np.r_[np.ones(len(X)), w if pseudo_in_parameters else np.zeros(m)]
        cp = np.array(st.class_parents, dtype=np.int64)
        cc = family_counts(data, p, cp, ar, wts)
        j = int(x[cp] @ parent_strides(cp, ar)) if len(cp) else 0
        ref = np.log(posterior_cpt(cc, 0.7)[j])
        for i, pa in st.parents.items():
            fam = np.array([p] + list(pa), dtype=np.int64)
            cpt = posterior_cpt(family_counts(data, i, fam, ar, wts), 0.7)
            s = parent_strides(fam, ar)
            base = int(x[list(pa)] @ s[1:]) if len(pa) else 0
            ref += np.log(cpt[np.arange(m) + base, x[i]])
        np.testing.assert_allclose(got, ref, rtol=1e-12, atol=1e-12)


def _scan_personalized_log_scores(model, X, y, x, st, pseudo):
    """The former UKDB_P scoring (before the count tables of issue 15): the CPT rows at the
    instance's values counted by scanning every training row, for each test row."""
    from bnma_core.scores import posterior_cpt

    m, a = model.n_classes_, model.alpha
    extra = pseudo if model.pseudo_in_parameters else np.zeros(m)
    match = np.ones(len(y), dtype=bool)
    for v in st.class_parents:
        match &= X[:, v] == x[v]
    out = np.log(posterior_cpt((np.bincount(y[match], minlength=m) + extra)[None, :], a)[0])
    for i, pa in st.parents.items():
        match = X[:, i] >= 0
        for v in pa:
            match &= X[:, v] == x[v]
        counts = np.zeros((m, model.arities_[i]))
        np.add.at(counts, (y[match], X[match, i]), 1.0)
        counts[:, x[i]] += extra
        out = out + np.log(posterior_cpt(counts, a)[:, x[i]])
    return out


@pytest.mark.parametrize("pseudo_in_parameters", [False, True])
@pytest.mark.parametrize("max_table_cells", [2 ** 24, 0])
@pytest.mark.parametrize("k", [1, 2, 3])
def test_precomputed_tables_equal_scanning_the_training_rows(k, max_table_cells,
                                                              pseudo_in_parameters):
    """Issue 15 oracle: UKDB_P's per-row path, whose count tables are built together at the
    first read (or each on its first use when the budget is 0), and the batch prediction
    (value bit sets) give what scanning the training rows for each test row gives, to 1e-12,
    with missing values in training and test rows. A fit builds no table."""
    X, y = _random_problem(31 + k, n=150, arities=(2, 3, 4, 3, 2), m=3, missing=0.1)
    model = UKDB(k=k, mode="personalized", alpha=0.6, max_table_cells=max_table_cells,
                 pseudo_in_parameters=pseudo_in_parameters).fit(X, y)
    assert not model._subset_tables
    ref = np.empty((len(X), 3))
    per_row = np.empty((len(X), 3))
    dom = UKDB(k=k, mode="domain", alpha=0.6).fit(X, y).predict_proba(X)
    for r, x in enumerate(X):
        w = model._pseudo(dom[r])
        st, _, _ = model.personalized_structure(x, w)
        lp = _scan_personalized_log_scores(model, X, y, x, st, w)
        ref[r] = np.exp(lp - np.logaddexp.reduce(lp))
        lp = model._personalized_log_scores(x, st, w)
        per_row[r] = np.exp(lp - np.logaddexp.reduce(lp))
        if r == 0:  # the first read built every table within the budget, or just its own
            n_all = sum(math.comb(5, s_) for s_ in range(min(k + 1, 5) + 1))
            assert (len(model._subset_tables) == n_all) == (max_table_cells > 0)
    np.testing.assert_allclose(per_row, ref, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(model.predict_proba(X), ref, rtol=1e-12, atol=1e-12)


def test_k_chosen_on_training_rows_by_inner_cv():
    """k_grid = (0, 1, 2): k_ is the candidate with the best inner-CV accuracy on the training
    rows (recomputed here), and the model then equals UKDB(k=k_)."""
    from sklearn.model_selection import StratifiedKFold

    X, y = _random_problem(41, n=100, missing=0.05)
    model = UKDB(k_grid=(2, 0, 1), inner_folds=4).fit(X, y)
    splits = list(StratifiedKFold(4, shuffle=True, random_state=0).split(X, y))
    for k in (0, 1, 2):
        hits = sum(int(np.sum(UKDB(k=k, inner_folds=4).fit(X[tr], y[tr], arities=model.arities_)
                              .predict(X[te]) == y[te])) for tr, te in splits)
        assert model.k_scores_[k] == pytest.approx(hits / len(y), abs=1e-15)
    best = max(model.k_scores_.values())
    assert model.k_ == min(k for k, v in model.k_scores_.items() if v == best)
    ref = UKDB(k=model.k_).fit(X, y)
    np.testing.assert_allclose(model.predict_proba(X), ref.predict_proba(X), rtol=1e-12)
    assert UKDB(k_grid=(2,)).fit(X, y).k_ == 2
    for bad in ((), (1, -1), "2"):
        with pytest.raises(ValueError, match="k_grid must be"):
            UKDB(k_grid=bad).fit(X, y)
    with pytest.raises(ValueError, match="k must be"):
        UKDB(k="2").fit(X, y)
    with pytest.raises(ValueError, match="inner_folds"):
        UKDB(k_grid=(1, 2), inner_folds=1).fit(X, y)


@pytest.mark.parametrize("k, min_dependence, pseudo_in_parameters, pseudo_weights", [
    (0, None, False, "domain"), (1, None, True, "domain"), (2, None, False, "domain"),
    (2, 0.0, True, "uniform"), (3, None, False, "none"), (7, None, False, "domain"),
    (40, None, False, "domain")])  # k = 40: families too wide for one int64 key each
def test_batched_personalized_path_equals_the_per_row_path(monkeypatch, k, min_dependence,
                                                           pseudo_in_parameters,
                                                           pseudo_weights):
    """Issue 34 oracle: UKDB_P predicted for all rows at once (local measures, structures and
    CPT rows gathered over the batch, in batches of a few rows) equals the per-row path
    (:meth:`UKDB.personalized_structure`, :meth:`UKDB._personalized_log_scores`) to 1e-12,
    with missing values (some rows with fewer observed attributes than k), and gives the same
    structures."""
    import bnma_core.classifiers.ukdb as ukdb

    X, y = _random_problem(41 + k, n=160, arities=(2, 3, 4, 3, 2, 3, 2), m=3, missing=0.25)
    X[0] = -1
    X[1, 1:] = -1
    model = UKDB(k=k, alpha=0.8, min_dependence=min_dependence, pseudo_weights=pseudo_weights,
                 pseudo_in_parameters=pseudo_in_parameters).fit(X[:100], y[:100])
    T = X[100:]
    T[:2] = X[:2]
    pd_, _ = model._posteriors(T[:0])
    ld = model._domain_log_scores(T)
    dom = np.exp(ld - np.logaddexp.reduce(ld, axis=1, keepdims=True))
    W = np.stack([model._pseudo(r) for r in dom])
    ref = np.empty((len(T), 3))
    order, n_obs, parents = model._personalized_structures_batch(
        T, model._local_information_batch(T, W)[1])
    for r, x in enumerate(T):
        st, lmi, clmi = model.personalized_structure(x, W[r])
        ref[r] = model._personalized_log_scores(x, st, W[r])
        got_l, got_c = model._local_information_batch(T[r:r + 1], W[r:r + 1])
        np.testing.assert_array_equal(got_l[0], lmi)
        np.testing.assert_array_equal(got_c[0], clmi)
        assert order[r, :n_obs[r]].tolist() == st.order
        for i, pa in st.parents.items():
            assert parents[r, i][parents[r, i] >= 0].tolist() == pa
    np.testing.assert_allclose(model._personalized_log_scores_batch(T, W), ref, rtol=1e-12,
                               atol=1e-12)
    monkeypatch.setattr(ukdb, "BATCH_CELLS", 1)  # one row per batch
    one = model._posteriors(T)[1]
    monkeypatch.undo()
    np.testing.assert_allclose(model._posteriors(T)[1], one, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(one, np.exp(ref - np.logaddexp.reduce(ref, axis=1,
                                                                      keepdims=True)),
                               rtol=1e-12, atol=1e-12)
    assert pd_.shape == (0, 3)


@pytest.mark.parametrize("seed", [0, 1])
def test_one_pass_tables_and_mi_equal_the_per_table_path(seed):
    """Issue 34: the fit's tables counted in one pass (``kernels.ukdb_counts``) and I(X_i; C)
    derived from them equal the per-table path (:func:`bnma_core.scores.joint_counts`,
    :func:`bnma_core.scores.class_mutual_informations`), with missing values."""
    from bnma_core.scores import class_mutual_informations, joint_counts

    X, y = _random_problem(seed, n=90, arities=(2, 3, 4, 3), m=3, missing=0.2)
    model = UKDB(k=2, mi_smoothing=0.5 + seed).fit(X, y)
    ar = np.append(model.arities_, 3)
    data = np.column_stack([X, y])
    np.testing.assert_allclose(model.mi_, class_mutual_informations(
        X, y, model.arities_, 3, None, 0.5 + seed, 2.0), rtol=1e-12, atol=1e-15)
    for i, j in itertools.combinations(range(4), 2):
        t = joint_counts(data, [i, j, 4], ar)
        off = model._pair_off[i, j]
        np.testing.assert_array_equal(model._pair_flat[off:off + t.size], t.ravel())
    model._subset_table((0,))  # the first read builds every subset table (within the budget)
    assert len(model._subset_tables) == 1 + 4 + 6 + 4
    for subset, (table, _) in model._subset_tables.items():
        np.testing.assert_array_equal(table.reshape(-1), joint_counts(
            data, [*subset[::-1], 4], ar).reshape(-1, 3).reshape(-1))


# --- leave-one-out log posteriors without refits (issue 34) ------------------------------------


def _forced_structure(structure):
    """UKDB whose domain structure is ``structure`` whatever the data (the oracle of
    :meth:`UKDB.loo_log_proba`: its one approximation is UKDB_L's structure of the full fit)."""

    class Forced(UKDB):
        def _learn_domain_structure(self):
            return structure

    return Forced


def _loo_problem(seed, n=30, arities=(2, 3, 3, 2), m=3, missing=0.15):
    X, y = _random_problem(seed, n=n, arities=arities, m=m, missing=missing)
    y[:2 * m] = np.repeat(np.arange(m), 2)  # every class on >= 2 rows: D_{-i} keeps classes_
    X[0] = -1
    X[1, 1:] = -1
    return X, y


def _assert_loo_equals_refits(X, y, params, atol=1e-10):
    """``loo_log_proba`` against refits on D_{-i} of every row: plain refits for the default
    (``domain_structure="refit"``), refits with the full fit's UKDB_L structure forced for
    ``"full"``. Returns the full fit, both LOO arrays and how many rows' refit structure
    differs from the full fit's."""
    full = UKDB(**params).fit(X, y)
    loo = full.loo_log_proba(X, y)
    loo_full = full.loo_log_proba(X, y, domain_structure="full")
    assert loo.shape == loo_full.shape == (len(y), len(full.classes_))
    st = full.domain_structure_
    forced = _forced_structure(st)
    changed = 0
    for i in range(len(y)):
        keep = np.arange(len(y)) != i
        ref = UKDB(**params).fit(X[keep], y[keep], arities=full.arities_)
        assert list(ref.classes_) == list(full.classes_)
        np.testing.assert_allclose(loo[i], ref.predict_log_proba(X[i:i + 1])[0], rtol=0,
                                   atol=atol)
        rs = ref.domain_structure_
        changed += (rs.class_parents, rs.parents) != (st.class_parents, st.parents)
        ref = forced(**params).fit(X[keep], y[keep], arities=full.arities_)
        np.testing.assert_allclose(loo_full[i], ref.predict_log_proba(X[i:i + 1])[0], rtol=0,
                                   atol=atol)
    return full, loo, loo_full, changed


@pytest.mark.parametrize("k, mode, pseudo_in_parameters, pseudo_weights", [
    (2, "ensemble", False, "domain"), (2, "ensemble", True, "domain"),
    (1, "personalized", False, "uniform"), (2, "domain", False, "domain"),
    (3, "ensemble", False, "none"), (0, "ensemble", False, "domain")])
def test_loo_equals_refits(k, mode, pseudo_in_parameters, pseudo_weights):
    """Oracle: for every row i of a 30-row, 4-feature data set with missing values (one row
    all missing, one with a single value), ``loo_log_proba`` equals UKDB refitted on D_{-i},
    to 1e-10 (with ``domain_structure="full"``: the refit with UKDB_L's structure forced to
    the full fit's); some rows' refits change UKDB_L's structure; and the batch local
    measures with the row's counts dropped equal the refit's (LMI and CLMI, 1e-12)."""
    X, y = _loo_problem(k + 7)
    params = dict(k=k, mode=mode, alpha=0.7, mi_smoothing=0.5,
                  pseudo_in_parameters=pseudo_in_parameters, pseudo_weights=pseudo_weights)
    full, _, _, changed = _assert_loo_equals_refits(X, y, params)
    assert changed > 0 or k == 0
    m = len(full.classes_)
    forced = _forced_structure(full.domain_structure_)
    w = np.full((1, m), 0.3)
    for i in (0, 1, 5, 17):
        keep = np.arange(len(y)) != i
        ref = forced(**params).fit(X[keep], y[keep], arities=full.arities_)
        lmi, clmi = ref.local_information(X[i], w[0])
        got_l, got_c = full._local_information_batch(X[i:i + 1], w,
                                                     drop=np.eye(m)[y[i:i + 1]])
        np.testing.assert_allclose(got_l[0], lmi, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(got_c[0], clmi, rtol=1e-12, atol=1e-12)


def test_loo_full_structure_equals_plain_refits_where_the_structure_is_the_same():
    """With ``domain_structure="full"``, where refitting on D_{-i} learns the full fit's
    UKDB_L structure (21 of the 60 rows here), ``loo_log_proba`` is exactly the plain refit's
    prediction (1e-10): its approximation is only the structure."""
    X, y = _loo_problem(21, n=60, missing=0.1)
    full = UKDB(k=2).fit(X, y)
    loo = full.loo_log_proba(X, y, domain_structure="full")
    st = full.domain_structure_
    same = 0
    for i in range(len(y)):
        keep = np.arange(len(y)) != i
        ref = UKDB(k=2).fit(X[keep], y[keep], arities=full.arities_)
        rs = ref.domain_structure_
        if (rs.order, rs.class_parents, rs.parents) == (st.order, st.class_parents, st.parents):
            same += 1
            np.testing.assert_allclose(loo[i], ref.predict_log_proba(X[i:i + 1])[0], rtol=0,
                                       atol=1e-10)
    assert same >= 10  # 21 of the 60 rows


@settings(max_examples=15, deadline=None)
@given(seed=hst.integers(0, 2**31), n=hst.integers(8, 22),
       arities=hst.lists(hst.integers(1, 3), min_size=1, max_size=4), m=hst.integers(2, 3),
       missing=hst.sampled_from([0.0, 0.2]), k=hst.integers(0, 2),
       mode=hst.sampled_from(MODES), alpha=hst.sampled_from([0.5, 1.0]))
def test_loo_equals_refits_on_random_data(seed, n, arities, m, missing, k, mode, alpha):
    """Hypothesis: the oracle of the refits (plain, and forced structure for "full") over
    random small data sets (constant attributes, missing values, k above the number of
    attributes included)."""
    rng = np.random.default_rng(seed)
    y = np.concatenate([np.repeat(np.arange(m), 2), rng.integers(0, m, n - 2 * m)])
    X = np.column_stack([(rng.integers(0, r, n) + y * (j % 2)) % r
                         for j, r in enumerate(arities)])
    X[rng.random(X.shape) < missing] = -1
    _assert_loo_equals_refits(X, y, dict(k=k, mode=mode, alpha=alpha))


def test_loo_removes_the_rows_own_counts():
    """Not the in-sample posterior: every row's LOO log probability of its own class is lower
    than the fitted model's (the row no longer supports its class), by a clear margin on a
    small data set."""
    X, y = _loo_problem(5)
    full = UKDB(k=2).fit(X, y)
    loo = full.loo_log_proba(X, y)
    fit = full.predict_log_proba(X)
    rows = np.arange(len(y))
    assert (loo[rows, y] < fit[rows, y]).all()
    assert (fit[rows, y] - loo[rows, y]).mean() > 0.1
    np.testing.assert_allclose(np.exp(loo).sum(axis=1), 1.0, rtol=1e-12)


def test_loo_and_batch_prediction_build_no_subset_tables():
    """Issue 34: leave-one-out and batch prediction count every family from the value bit
    sets of the fit in one kernel pass, so they build none of the subset tables n(x_S, c)
    (HEPAR II 500 rows: 8,560 of them were counted per ``loo_log_proba`` before, a third of
    its cost); the per-row explanation path builds its own, and agrees."""
    X, y = _loo_problem(3, n=60, arities=(2, 3, 3, 2, 4, 2))
    model = UKDB(k=2, alpha=0.7, max_table_cells=0).fit(X, y)
    loo = model.loo_log_proba(X, y)
    proba = model.predict_proba(X)
    assert model._subset_tables == {}
    assert np.isfinite(loo).all()
    w = model._pseudo(model._posteriors(X[:1])[0][0])
    st, _, _ = model.personalized_structure(X[5], w)
    got = model._personalized_log_scores_batch(X[5:6], w[None, :])[0]
    np.testing.assert_allclose(got, model._personalized_log_scores(X[5], st, w), rtol=1e-12)
    assert model._subset_tables
    np.testing.assert_array_equal(model.predict_proba(X), proba)


def test_loo_refuses_other_rows():
    """One clear sentence when the rows are not the fitted ones (shape or values)."""
    X, y = _loo_problem(5)
    full = UKDB(k=1).fit(X, y)
    with pytest.raises(ValueError, match="the 30 training rows of 4 feature codes"):
        full.loo_log_proba(X[:-1], y[:-1])
    with pytest.raises(ValueError, match="the 30 training rows"):
        full.loo_log_proba(X, y[:, None])
    other = X.copy()
    other[3, 2] = (other[3, 2] + 1) % 3
    with pytest.raises(ValueError, match="the rows given differ"):
        full.loo_log_proba(other, y)
    with pytest.raises(ValueError, match="the rows given differ"):
        full.loo_log_proba(X, (y + 1) % 3)
    with pytest.raises(ValueError, match="domain_structure must be"):
        full.loo_log_proba(X, y, domain_structure="fixed")


def test_the_ukdb_loo_benchmark_runs():
    """Smoke test of benchmarks/ukdb_loo.py (issue 34 item 1's measurements) on 60 WBC rows."""
    import importlib.util
    import sys

    bench_dir = Path(__file__).resolve().parents[2] / "benchmarks"
    sys.path.insert(0, str(bench_dir))
    try:
        spec = importlib.util.spec_from_file_location("ukdb_loo", bench_dir / "ukdb_loo.py")
        bench = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(bench)
    finally:
        sys.path.remove(str(bench_dir))
    out = bench._one("wbc60", load_dataset(WBC).subset(np.arange(60)), repeats=1)
    assert out["fit_s"] >= 0 and out["loo_s"] >= 0 and out["inner_loo_s"] >= 0
    assert 0 <= out["exact_structure_rows"] <= 1
    assert np.isfinite([out["elpd_cv"], out["elpd_loo"], out["elpd_exact_loo"]]).all()


@pytest.mark.parametrize("completions", [1, 64])
def test_loo_incomplete_rows_by_completions_or_by_models(monkeypatch, completions):
    """Incomplete rows whose leave-one-out UKDB_L structure changes are summed over their
    completions (default) or, above ``LOO_COMPLETIONS``, marginalised in a model of their
    structure: both equal the refits on D_{-i} (1e-10), and both paths are taken."""
    import bnma_core.classifiers.ukdb as ukdb

    built = []
    real = UKDB._build_factor_model
    monkeypatch.setattr(ukdb, "LOO_COMPLETIONS", completions)
    monkeypatch.setattr(UKDB, "_build_factor_model",
                        lambda self, *a: built.append(1) or real(self, *a))
    X, y = _loo_problem(9, n=40, missing=0.2)
    full = UKDB(k=2, alpha=0.7).fit(X, y)
    built.clear()
    full.loo_log_proba(X, y)
    assert (len(built) > 1) == (completions == 1)
    _assert_loo_equals_refits(X, y, dict(k=2, alpha=0.7))
