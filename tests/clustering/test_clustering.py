"""EMA-TAN clustering and baselines (issue 13; spec ema-tan-clustering.md §9 oracles)."""

from __future__ import annotations

import itertools
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from conftest import no_exception, shot
from hypothesis import given, settings
from hypothesis import strategies as st

from bnma_core.clustering import (
    EMA,
    EMATAN,
    EMBNET,
    EMTAN,
    cluster_accuracy,
    expand_missing,
    make_clusterer,
)
from bnma_core.data import dataset_from_codes
from bnma_core.kernels.counting import config_index, parent_strides
from bnma_core.scores import family_counts, log_ml_counts, posterior_cpt
from bnma_ui.browser import nav, set_number, wait_idle


def _planted(n_rows=300, n_feat=6, noise=0.12, seed=0, k=2):
    rng = np.random.default_rng(seed)
    c = rng.integers(0, k, n_rows)
    X = np.column_stack([np.where(rng.random(n_rows) < 1 - noise, c, rng.integers(0, k, n_rows))
                         for _ in range(n_feat)])
    return X.astype(np.int32), c


def _engine(est, X, arities):
    codes = est._prepare_fit(X, arities)
    est._check_params(codes.shape[0])
    order = np.arange(codes.shape[1])
    Xe, starts = expand_missing(codes, est.arities_)
    return est._make_engine(Xe, starts, est.arities_, order), Xe, starts


def _model_joint(engine, params, arities, k):
    """p(c, x) of the fitted model on the full grid of x."""
    grid = np.array(list(itertools.product(*[range(r) for r in arities])), dtype=np.int32)
    starts = np.arange(len(grid) + 1, dtype=np.int64)
    gamma, _, row_ll = engine.e_step(params, grid, starts, new_data=True)
    return grid, gamma * np.exp(row_ll)[:, None]


# ---------------------------------------------------------------------------------------------
# Oracle 1: brute-force model averaging over every structure of L(π)
# ---------------------------------------------------------------------------------------------

def _brute_force(X, gamma, arities, k, log_prior, alpha=1.0, bdeu=False):
    """Average of p(c, x | S) = theta_C(c) prod_i theta^{S_i}(x_i | pa) over every S in L(π)
    (π = identity), weighted by prod_i p_S M_i (spec §3), with the project's own counting,
    log-ML and posterior-CPT functions on the C-completed data."""
    n = len(arities)
    N = len(X)
    C = n  # the class column of the completed data
    data = np.vstack([np.column_stack([X, np.full(N, c)]) for c in range(k)]).astype(np.int32)
    w = np.concatenate([gamma[:, c] for c in range(k)])
    ar = np.append(arities, k).astype(np.int64)
    options = []
    for i in range(n):
        sets = [(), (C,)] + [(j,) for j in range(i)] + [(C, j) for j in range(i)]
        opts = []
        for pa in sets:
            cnt = family_counts(data, i, list(pa), ar, weights=w)
            if bdeu:
                logm = log_ml_counts(cnt, "bdeu", ess=alpha)
                a = alpha / cnt.size
            else:
                logm = log_ml_counts(cnt, "k2") if alpha == 1.0 else log_ml_counts(
                    cnt, "bd", alpha=alpha)
                a = alpha
            opts.append((pa, posterior_cpt(cnt, a), log_prior(i, pa) + logm))
        options.append(opts)
    nc = w.reshape(k, N).sum(axis=1)
    ac = alpha / k if bdeu else alpha
    theta_c = (ac + nc) / (k * ac + N)
    grid = np.array(list(itertools.product(*[range(r) for r in arities])), dtype=np.int32)
    full = np.vstack([np.column_stack([grid, np.full(len(grid), c)]) for c in range(k)]
                     ).astype(np.int32)
    # per variable and option: theta(x_i | pa) on every (c, x) of the grid
    tabs = []
    for i in range(n):
        row = []
        for pa, cpt, _ in options[i]:
            pa_arr = np.asarray(pa, dtype=np.int64)
            strides = parent_strides(pa_arr, ar)
            j = np.array([config_index(full, r, pa_arr, strides) for r in range(len(full))])
            row.append(cpt[j, full[:, i]])
        tabs.append(row)
    logw, joint = [], []
    class_post = np.zeros(n)
    for choice in itertools.product(*[range(len(o)) for o in options]):
        lw = sum(options[i][v][2] for i, v in enumerate(choice))
        p = np.repeat(theta_c, len(grid))
        for i, v in enumerate(choice):
            p = p * tabs[i][v]
        logw.append(lw)
        joint.append(p)
    logw = np.array(logw)
    wts = np.exp(logw - logw.max())
    wts /= wts.sum()
    avg = (wts[:, None] * np.array(joint)).sum(axis=0)
    for s, choice in enumerate(itertools.product(*[range(len(o)) for o in options])):
        for i, v in enumerate(choice):
            if C in options[i][v][0]:
                class_post[i] += wts[s]
    n_struct = len(wts)
    return grid, avg.reshape(k, len(grid)).T, class_post, n_struct


@pytest.mark.parametrize("n,k", [(3, 2), (3, 3), (4, 2), (4, 3)])
@pytest.mark.parametrize("prior", ["uniform", "random"])
def test_averaged_model_equals_brute_force_average(n, k, prior):
    rng = np.random.default_rng(10 * n + k)
    arities = rng.integers(2, 4, n).astype(np.int64)
    N = 30
    X = np.column_stack([rng.integers(0, r, N) for r in arities]).astype(np.int32)
    gamma = rng.dirichlet(np.ones(k), size=N)
    table: dict = {}

    def log_prior(i, pa):
        if prior == "uniform":
            return 0.0
        key = (i, tuple(sorted(map(str, pa))))
        if key not in table:
            table[key] = float(rng.normal())
        return table[key]

    def sp(i, parents):  # the estimator's view: "C" and column indices
        return log_prior(i, tuple(n if p == "C" else p for p in parents))

    est = EMATAN(n_clusters=k, order=list(range(n)),
                 structure_prior="uniform" if prior == "uniform" else sp)
    engine, Xe, starts = _engine(est, X, arities)
    params = engine.m_step(np.ascontiguousarray(gamma))
    grid, model = _model_joint(engine, params, arities, k)
    g2, brute, class_post, n_struct = _brute_force(X, gamma, arities, k, log_prior)
    assert n_struct == 2 ** n * int(np.prod(range(1, n + 1)))
    assert np.array_equal(grid, g2)
    assert abs(model.sum() - 1) < 1e-12 and abs(brute.sum() - 1) < 1e-12
    assert np.abs(model - brute).max() < 1e-12
    cond_m = model / model.sum(axis=1, keepdims=True)
    cond_b = brute / brute.sum(axis=1, keepdims=True)
    assert np.abs(cond_m - cond_b).max() < 1e-12
    assert np.abs(params.wc + params.wcx.sum(axis=1) - class_post).max() < 1e-12


@pytest.mark.parametrize("scoring,alpha", [("k2", 0.5), ("bdeu", 1.0), ("bdeu", 4.0)])
def test_other_priors_match_brute_force(scoring, alpha):
    rng = np.random.default_rng(3)
    arities = np.array([2, 3, 2])
    X = np.column_stack([rng.integers(0, r, 25) for r in arities]).astype(np.int32)
    gamma = rng.dirichlet(np.ones(3), size=25)
    est = EMATAN(n_clusters=3, order=[0, 1, 2], alpha=alpha, scoring=scoring)
    engine, _, _ = _engine(est, X, arities)
    params = engine.m_step(np.ascontiguousarray(gamma))
    _, model = _model_joint(engine, params, arities, 3)
    _, brute, _, _ = _brute_force(X, gamma, arities, 3, lambda i, pa: 0.0, alpha=alpha,
                                  bdeu=scoring == "bdeu")
    assert np.abs(model - brute).max() < 1e-12


# ---------------------------------------------------------------------------------------------
# Structure of the candidate family (oracle 3), constant C-free counts (oracle 5)
# ---------------------------------------------------------------------------------------------

def test_parent_set_counts():
    X, _ = _planted(60, 5)
    m = EMATAN(n_init=1, random_state=0, max_iter=3).fit(X)
    sizes = sorted(len(s) for s in m.parent_sets_)
    assert sizes == [2 * i for i in range(1, 6)]
    assert int(np.prod(sizes)) == 2 ** 5 * 120
    for w in m.parent_set_weights_:
        assert abs(w.sum() - 1) < 1e-12
    a = EMATAN(n_init=1, random_state=0, max_iter=3, class_parent="always").fit(X)
    assert sorted(len(s) for s in a.parent_sets_) == [1, 2, 3, 4, 5]
    assert all("C" in s for sets in a.parent_sets_ for s in sets)
    e = EMA(n_init=1, random_state=0, max_iter=3).fit(X)
    assert all(s == [(), ("C",)] for s in e.parent_sets_)


def test_class_free_statistics_do_not_depend_on_gamma():
    X, _ = _planted(80, 4)
    est = EMATAN(n_clusters=2, order=[0, 1, 2, 3])
    engine, _, _ = _engine(est, X, None)
    rng = np.random.default_rng(0)
    p1 = engine.m_step(rng.dirichlet([1, 1], size=80))
    p2 = engine.m_step(rng.dirichlet([1, 1], size=80))
    assert np.array_equal(p1.t0, p2.t0)
    assert np.abs(p1.tx - p2.tx).max() < 1e-12
    assert np.abs(p1.tc - p2.tc).max() > 1e-3


# ---------------------------------------------------------------------------------------------
# Oracle 4: EMA with the class parent forced = naive-Bayes EM with eq. 6 updates
# ---------------------------------------------------------------------------------------------

def _nb_em(X, arities, gamma, k, iters, alpha=1.0):
    lls = []
    for _ in range(iters):
        nc = gamma.sum(axis=0)
        theta_c = (alpha + nc) / (k * alpha + len(X))
        logp = np.tile(np.log(theta_c), (len(X), 1))
        for i, r in enumerate(arities):
            cnt = np.zeros((k, r))
            for c in range(k):
                cnt[c] = np.bincount(X[:, i], weights=gamma[:, c], minlength=r)
            theta = (alpha + cnt) / (r * alpha + cnt.sum(axis=1, keepdims=True))
            logp += np.log(theta[:, X[:, i]]).T
        mx = logp.max(axis=1, keepdims=True)
        lse = mx[:, 0] + np.log(np.exp(logp - mx).sum(axis=1))
        lls.append(lse.sum())
        gamma = np.exp(logp - lse[:, None])
    return theta_c, gamma, np.array(lls)


def test_ema_with_class_parent_forced_is_naive_bayes_em():
    X, _ = _planted(120, 5, noise=0.3, seed=4)
    est = EMA(n_clusters=2, class_parent="always", tol=1e-300, max_iter=15,
              stop_collapsed=False)
    engine, Xe, starts = _engine(est, X, None)
    g0 = np.random.default_rng(1).dirichlet([1, 1], size=len(X))
    res = est._run_start(engine, g0.copy(), Xe, starts, 0, None, None)
    theta_c, gamma, lls = _nb_em(X, est.arities_, g0.copy(), 2, 15)
    assert np.abs(res["trace"] - lls).max() < 1e-9
    assert np.abs(res["params"].theta_c - theta_c).max() < 1e-12


# ---------------------------------------------------------------------------------------------
# EM-BNET monotonicity (oracle 9), EM-TAN == EM-BNET at n = 2 (oracle 8)
# ---------------------------------------------------------------------------------------------

def test_embnet_map_objective_never_decreases():
    X, _ = _planted(160, 5, noise=0.3, seed=2)
    X[:, 4] = (X[:, 3] + np.random.default_rng(0).integers(0, 2, 160)) % 3
    m = EMBNET(n_init=4, random_state=0, max_iter=60, tol=1e-10, stop_collapsed=False).fit(X)
    for obj in m.objective_traces_:
        assert len(obj) > 1
        assert np.diff(obj).min() >= -1e-9


def test_emtan_equals_embnet_for_two_features():
    X, _ = _planted(90, 2, noise=0.25, seed=5)
    X[:, 1] = np.where(np.random.default_rng(1).random(90) < 0.3, 2, X[:, 1])
    kw = dict(n_init=3, random_state=7, max_iter=40, tol=1e-8, stop_collapsed=False)
    a = EMTAN(**kw).fit(X)
    b = EMBNET(order=[0, 1], **kw).fit(X)
    assert np.abs(a.predict_proba(X) - b.predict_proba(X)).max() < 1e-10
    assert abs(a.log_likelihood_ - b.log_likelihood_) < 1e-9


# ---------------------------------------------------------------------------------------------
# Planted partition, label symmetry, determinism (oracles 6, 7, 10)
# ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["ematan", "ema", "emtan"])
def test_planted_partition_is_recovered(name):
    X, c = _planted(300, 6, noise=0.1, seed=11)
    m = make_clusterer(name, n_init=5, random_state=0).fit(X)
    assert cluster_accuracy(c, m.labels_) > 0.95
    assert cluster_accuracy(c, 1 - m.labels_) > 0.95
    assert not m.collapsed_
    assert np.array_equal(m.predict(X), m.labels_)


@given(st.lists(st.integers(0, 3), min_size=1, max_size=40), st.permutations([0, 1, 2, 3]))
@settings(max_examples=50, deadline=None)
def test_cluster_accuracy_invariant_to_relabelling(labels, perm):
    y = np.array(labels)
    pred = (y + 1) % 4
    assert cluster_accuracy(y, np.array(perm)[pred]) == 1.0
    rng = np.random.default_rng(len(labels))
    other = rng.integers(0, 3, len(y))
    assert cluster_accuracy(y, other) == cluster_accuracy(y, np.array(perm)[other])


def test_cluster_accuracy_known_value():
    assert cluster_accuracy([0, 0, 1, 1, 1], [1, 1, 0, 0, 1]) == pytest.approx(0.8)
    with pytest.raises(ValueError):
        cluster_accuracy([0, 1], [0])


def test_permuting_start_labels_permutes_the_fit():
    X, _ = _planted(100, 5, noise=0.25, seed=8)
    k = 3
    est = EMATAN(n_clusters=k, order=[2, 0, 1, 4, 3], max_iter=20, stop_collapsed=False)
    engine, Xe, starts = _engine(est, X, None)
    g0 = np.random.default_rng(2).dirichlet(np.ones(k), size=len(X))
    perm = np.array([2, 0, 1])
    a = est._run_start(engine, g0.copy(), Xe, starts, 0, None, None)
    b = est._run_start(engine, np.ascontiguousarray(g0[:, perm]), Xe, starts, 0, None, None)
    ga, _, _ = engine.e_step(a["params"], Xe, starts)
    gb, _, _ = engine.e_step(b["params"], Xe, starts)
    assert np.abs(ga[:, perm] - gb).max() < 1e-10
    assert np.abs(a["trace"] - b["trace"]).max() < 1e-8


@pytest.mark.parametrize("cls", [EMATAN, EMA, EMTAN, EMBNET])
def test_same_seed_same_result(cls):
    X, _ = _planted(120, 5, noise=0.3, seed=9)
    a = cls(n_init=4, random_state=3, max_iter=30).fit(X)
    b = cls(n_init=4, random_state=3, max_iter=30).fit(X)
    c = cls(n_init=4, random_state=3, max_iter=30, n_jobs=2).fit(X)
    for m in (b, c):
        assert np.array_equal(a.predict_proba(X), m.predict_proba(X))
        assert np.array_equal(a.order_, m.order_)
        assert all(np.array_equal(s, t) for s, t in zip(a.loglik_traces_, m.loglik_traces_))


def test_flat_start_stays_flat_and_is_collapsed():
    X, _ = _planted(150, 6, noise=0.2, seed=1)
    est = EMATAN(n_clusters=2, order=list(range(6)), max_iter=20, tol=1e-300,
                 stop_collapsed=False)
    engine, Xe, starts = _engine(est, X, None)
    g0 = np.tile([0.6, 0.4], (len(X), 1))
    res = est._run_start(engine, g0, Xe, starts, 0, None, None)
    assert res["collapsed"]
    assert res["spread"] < 0.004


def test_collapse_remedies_reported():
    X, _ = _planted(80, 8, noise=0.45, seed=3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = EMATAN(n_init=8, random_state=0).fit(X)
    assert m.n_starts_ == 8 and 0 <= m.collapsed_starts_ <= 8
    assert m.start_collapsed_.sum() == m.collapsed_starts_
    s = EMATAN(n_init=8, random_state=0, selection="best_non_collapsed").fit(X)
    if m.collapsed_starts_ < 8:
        assert not s.collapsed_
    r = EMATAN(n_init=4, random_state=0, restart_collapsed=True).fit(X)
    assert (~r.start_collapsed_).sum() >= 4 or r.n_starts_ == 12


# ---------------------------------------------------------------------------------------------
# Missing values, inputs, attributes, errors
# ---------------------------------------------------------------------------------------------

@pytest.mark.filterwarnings("ignore::bnma_core.clustering.base.CollapsedStartWarning")
@pytest.mark.parametrize("cls", [EMATAN, EMA, EMTAN, EMBNET])
def test_missing_values_are_marginalised(cls):
    X, _ = _planted(120, 4, noise=0.2, seed=6)
    Xm = X.astype(float)
    Xm[np.random.default_rng(0).random(Xm.shape) < 0.1] = np.nan
    m = cls(n_init=2, random_state=0, max_iter=20).fit(Xm)
    row = Xm[[0]].copy()
    row[0, 1] = np.nan
    row[0, 3] = np.nan
    comps = []
    for a in range(m.arities_[1]):
        for b in range(m.arities_[3]):
            r = row.copy()
            r[0, 1], r[0, 3] = a, b
            comps.append(r[0])
    comps = np.array(comps)
    ls = m.score_samples(comps)
    assert m.score_samples(row)[0] == pytest.approx(np.logaddexp.reduce(ls), abs=1e-10)
    joint = m.predict_proba(comps) * np.exp(ls)[:, None]
    expected = joint.sum(axis=0) / joint.sum()
    assert np.abs(m.predict_proba(row)[0] - expected).max() < 1e-10


def test_expand_missing_limits():
    X = np.full((2, 20), -1, dtype=np.int32)
    X[:, 0] = 0
    with pytest.raises(ValueError, match="completions"):
        expand_missing(X, np.full(20, 3))


def test_dataframe_and_dataset_inputs():
    X, c = _planted(150, 4, noise=0.1, seed=12)
    df = pd.DataFrame({f"v{i}": np.array(["lo", "hi"])[X[:, i]] for i in range(4)})
    m = EMATAN(n_init=10, random_state=0).fit(df)
    assert cluster_accuracy(c, m.labels_) > 0.9
    assert list(m.structure_.nodes) == ["cluster", "v0", "v1", "v2", "v3"]
    assert m.predict(df.iloc[:5]).shape == (5,)
    ds = dataset_from_codes(np.column_stack([X, c]), names=["a", "b", "d", "e", "cls"])
    m2 = EMATAN(n_init=10, random_state=0).fit(ds)
    assert m2.n_features_in_ == 4
    assert cluster_accuracy(c, m2.labels_) > 0.9


def test_scores_and_attributes():
    X, _ = _planted(200, 5, noise=0.15, seed=13)
    m = EMATAN(n_init=3, random_state=0).fit(X)
    assert m.score(X) == pytest.approx(m.log_likelihood_ / len(X))
    assert m.bic() > -2 * m.log_likelihood_
    assert m.aic() < m.bic()
    assert m.edge_posterior_.shape == (5, 5)
    assert np.all(np.diag(m.edge_posterior_) == 0)
    assert m.class_prior_.sum() == pytest.approx(1)
    assert len(m.loglik_traces_) == 3 and m.n_iter_ >= 1
    assert m.cluster_profiles_[0].shape == (2, 2)
    for name in ("emtan", "ema", "embnet"):
        b = make_clusterer(name, n_init=2, random_state=0).fit(X)
        assert np.isfinite(b.bic())


@pytest.mark.parametrize("kw,match", [
    ({"n_clusters": 1}, "n_clusters"), ({"n_init": 0}, "n_init"), ({"tol": -1}, "tol"),
    ({"order": [0, 0, 1, 2, 3]}, "permutation"), ({"order": "given"}, "permutation"),
    ({"selection": "x"}, "selection"), ({"alpha": 0}, "alpha"), ({"scoring": "bic"}, "scoring"),
    ({"init": "kmeans"}, "init"), ({"class_parent": "never"}, "class_parent")])
def test_bad_parameters_raise_clear_errors(kw, match):
    X, _ = _planted(30, 5)
    with pytest.raises(ValueError, match=match):
        EMATAN(**kw).fit(X)


@pytest.mark.filterwarnings("ignore::bnma_core.clustering.base.CollapsedStartWarning")
def test_bad_inputs():
    with pytest.raises(ValueError, match="integer"):
        EMATAN().fit(np.array([[0.5, 1.0], [1.0, 0.0]]))
    with pytest.raises(ValueError, match="rows"):
        EMATAN(n_clusters=3).fit(np.array([[0, 1], [1, 0]]))
    with pytest.raises(ValueError, match="Unknown clustering"):
        make_clusterer("kmeans")
    m = EMATAN(n_init=1, random_state=0).fit(_planted(40, 3)[0])
    with pytest.raises(ValueError, match="features"):
        m.predict(np.zeros((2, 4), dtype=int))


# ---------------------------------------------------------------------------------------------
# Table 1 reproduction: smoke run (oracles 10, 11)
# ---------------------------------------------------------------------------------------------

def test_random_tan_generator():
    from bnma_core.clustering.synthetic import random_tan

    net = random_tan(8, np.random.default_rng(0))
    assert set(net.arities) <= {2, 3} and (net.parent == -1).sum() == 1
    pos = np.argsort(net.order)
    assert all(pos[net.parent[i]] < pos[i] for i in range(8) if net.parent[i] >= 0)
    X, c = net.sample(500, np.random.default_rng(1))
    assert X.shape == (500, 8) and (X < net.arities).all() and set(c) <= {0, 1}


@pytest.mark.parametrize("seed", range(5))
def test_prim_tree_equals_networkx_maximum_spanning_tree(seed):
    import networkx as nx

    from bnma_core.kernels.clustering import max_spanning_tree_parents

    rng = np.random.default_rng(seed)
    n = 7
    w = rng.random((n, n))
    w = (w + w.T) / 2
    parent = max_spanning_tree_parents(w)
    g = nx.Graph()
    g.add_weighted_edges_from((i, j, w[i, j]) for i in range(n) for j in range(i + 1, n))
    ref = nx.maximum_spanning_tree(g)
    ours = {frozenset((i, int(parent[i]))) for i in range(1, n)}
    assert parent[0] == -1
    assert ours == {frozenset(e) for e in ref.edges}


# ---------------------------------------------------------------------------------------------
# Dashboard page (AppTest) and figures
# ---------------------------------------------------------------------------------------------

def _clustering_page(ds):
    import streamlit.testing.v1 as st_testing
    root = Path(__file__).resolve().parents[2]
    at = st_testing.AppTest.from_file(str(root / "app.py"), default_timeout=120)
    at.switch_page("pages/6_Clustering.py")
    at.session_state["bnma_dataset"] = ds
    at.session_state["bnma_dataset_label"] = "test data"
    at.run()
    return at


def _finish_run(at) -> None:
    """Wait on the page's background run (no sleep), then rerun once so it shows the result."""
    run = at.session_state["clustering__bnma_bg"]
    assert run.wait(120), "the clustering run did not end"
    at.run()


def test_clustering_page_run_and_bic_range():
    X, c = _planted(120, 5, noise=0.1, seed=21)
    ds = dataset_from_codes(np.column_stack([X, c]), names=["a", "b", "d", "e", "f", "cls"])
    at = _clustering_page(ds)
    assert not at.exception
    at.number_input(key="clu_starts").set_value(10)
    at.button[0].click().run()
    _finish_run(at)
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Clusters"] == "2"
    assert float(metrics["Adjusted Rand index"]) > 0.8
    assert "of 10" in metrics["Collapsed starts"]
    assert len(at.get("plotly_chart")) >= 5  # traces, network, profiles, sizes, contingency
    assert at.get("download_button")
    at.checkbox(key="clu_bic").check().run()
    at.slider(key="clu_krange").set_value((2, 3))
    at.selectbox(key="clu_method").set_value("ema")
    at.button[0].click().run()
    _finish_run(at)
    assert not at.exception, [e.value for e in at.exception]
    table = at.dataframe[0].value
    assert list(table["clusters"]) == [2, 3]


@pytest.mark.filterwarnings("ignore::bnma_core.clustering.base.CollapsedStartWarning")
def test_clustering_figures():
    from bnma_core import viz

    X, _ = _planted(80, 3, seed=2)
    m = EMATAN(n_init=3, random_state=0).fit(X)
    fig = viz.loglik_traces_figure(m.loglik_traces_, m.start_collapsed_, m.best_start_)
    assert len(fig.data) == 3
    fig = viz.cluster_profiles_figure(m.cluster_profiles_, ["x0", "x1", "x2"],
                                      [["0", "1"]] * 3)
    assert fig.data[0].z.shape == (6, 2)
    assert len(viz.cluster_sizes_figure(m.cluster_sizes_).data) == 1
    assert viz.contingency_figure(np.eye(2), ["a", "b"]).data[0].z.shape == (2, 2)


@pytest.mark.browser
def test_clustering_page_in_browser(server, page):  # noqa: F811  (server: test_browser's)
    """Headless chromium: the page runs EMA-TAN on the default WBC data, draws the live traces
    and the results."""
    if not (Path(__file__).resolve().parents[2] / "pages" / "6_Clustering.py").exists():
        pytest.skip("no clustering page")
    page.goto(server)
    wait_idle(page)
    nav(page, "Clustering")
    no_exception(page)
    set_number(page, "Random starts", 5)
    page.get_by_role("button", name="Run").click()
    page.get_by_role("heading", name="Log-likelihood of each start").wait_for(timeout=240_000)
    wait_idle(page)
    no_exception(page)
    assert page.locator(".js-plotly-plot").count() >= 5
    assert page.get_by_text("Adjusted Rand index").count() >= 1
    shot(page, "60_clustering")
