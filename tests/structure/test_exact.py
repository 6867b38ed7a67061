"""Exact and K-best structure learning against brute force over every DAG of up to 5 variables
(29,281 DAGs, 8,782 equivalence classes), local scores against bnma_core.scores, limits,
determinism and bad input."""

from itertools import combinations

import numpy as np
import pytest
from sklearn.utils.estimator_checks import parametrize_with_checks

from bnma_core.classifiers.exact import ExactANB, ExactBN
from bnma_core.data import DataError
from bnma_core.kernels.exact import kbest_networks, kbest_parent_sets
from bnma_core.scores import family_counts, log_ml_counts, posterior_cpt
from bnma_core.structure.cpdag import ec_hash, is_equivalent, zobrist_codes
from bnma_core.structure.exact import (
    ExactLimits,
    ResourceLimitError,
    ScoredStructure,
    best_network,
    estimate_resources,
    k_best,
    posterior_weights,
    structure_log_score,
)
from bnma_core.structure.local_scores import local_scores, lookup

N_DAGS = {1: 1, 2: 3, 3: 25, 4: 543, 5: 29281}
N_CLASSES = {1: 1, 2: 2, 3: 11, 4: 185, 5: 8782}


def all_dags(n):
    """Every DAG over n nodes as compressed parent indices (one per node) and full parent
    bitmasks, by vectorised layer peeling over all (2^(n-1))^n parent-set combinations."""
    h = 1 << (n - 1)
    comp = np.indices((h,) * n).reshape(n, -1).T.astype(np.int64)
    full = np.empty_like(comp)
    for v in range(n):
        w = comp[:, v]
        full[:, v] = (w & ((1 << v) - 1)) | ((w >> v) << (v + 1))
    remaining = np.full(len(comp), (1 << n) - 1, dtype=np.int64)
    for _ in range(n):
        removable = np.zeros(len(comp), dtype=np.int64)
        for v in range(n):
            ok = ((remaining >> v) & 1).astype(bool) & ((full[:, v] & remaining) == 0)
            removable |= ok.astype(np.int64) << v
        remaining &= ~removable
    keep = remaining == 0
    return comp[keep], full[keep]


def exact_class(masks):
    """(skeleton, v-structures) of a DAG given by parent bitmasks: equal iff equivalent."""
    n = len(masks)
    pa = [[u for u in range(n) if (int(masks[v]) >> u) & 1] for v in range(n)]
    adj = {frozenset((p, c)) for c in range(n) for p in pa[c]}
    vs = frozenset((a, c, b) for c in range(n) for a, b in combinations(pa[c], 2)
                   if frozenset((a, b)) not in adj)
    return frozenset(adj), vs


def parents_of(masks):
    n = len(masks)
    return [tuple(u for u in range(n) if (int(masks[v]) >> u) & 1) for v in range(n)]


def _data(n_rows=40, seed=1, arities=(2, 3, 2, 2, 3)):
    rng = np.random.default_rng(seed)
    ar = np.array(arities)
    X = rng.integers(0, ar, size=(n_rows, len(ar)))
    X[:, 1] = np.where(rng.random(n_rows) < 0.8, (X[:, 0] + X[:, 2]) % 3, X[:, 1])
    X[:, 4] = np.where(rng.random(n_rows) < 0.7, X[:, 1], X[:, 4])
    return X, ar


def oracle_table(X, ar, score="bdeu", ess=1.0, forced=()):
    """Local scores straight from bnma_core.scores, compressed layout."""
    n = X.shape[1] - len(forced)
    t = np.empty((n, 1 << (n - 1)))
    for v in range(n):
        for idx in range(1 << (n - 1)):
            P = (idx & ((1 << v) - 1)) | ((idx >> v) << (v + 1))
            pa = [u for u in range(n) if (P >> u) & 1] + list(forced)
            t[v, idx] = log_ml_counts(family_counts(X, v, pa, ar), score, ess)
    return t


@pytest.fixture(scope="module")
def five():
    X, ar = _data()
    comp, full = all_dags(5)
    table = oracle_table(X, ar)
    scores = sum(table[v, comp[:, v]] for v in range(5))
    classes = [exact_class(m) for m in full]
    return {"X": X, "ar": ar, "comp": comp, "full": full, "table": table, "scores": scores,
            "classes": classes}


def _class_best(five):
    best = {}
    for c, s in zip(five["classes"], five["scores"]):
        best[c] = max(best.get(c, -np.inf), s)
    return best


# ----------------------------------------------------------------------------- local scores
@pytest.mark.parametrize("score,ess", [("bdeu", 1.0), ("bdeu", 3.5), ("k2", 1.0)])
def test_local_scores_equal_scores_module(score, ess):
    X, ar = _data(n_rows=30)
    X = np.vstack([X, X[:11]])  # repeated rows: patterns with weights
    np.testing.assert_allclose(local_scores(X, ar, score, ess), oracle_table(X, ar, score, ess),
                               rtol=0, atol=1e-9)


def test_local_scores_with_forced_class_and_max_parents():
    X, ar = _data()
    t = local_scores(X, ar, "bdeu", 1.0, max_parents=1, forced=[4])
    ref = oracle_table(X, ar, forced=[4])
    for v in range(4):
        for idx in range(8):
            if bin(idx).count("1") > 1:
                assert t[v, idx] == -np.inf
            else:
                assert abs(t[v, idx] - ref[v, idx]) < 1e-9
    assert lookup(t, 2, [0]) == t[2, 1]


# ----------------------------------------------------------------------------- brute force
@pytest.mark.parametrize("n", [1, 2, 3, 4])
def test_enumerator_counts_dags_and_classes(n):
    comp, full = all_dags(n)
    assert len(comp) == N_DAGS[n]
    assert len({exact_class(m) for m in full}) == N_CLASSES[n]


def test_five_variables_dags_classes_and_hash(five):
    assert len(five["comp"]) == N_DAGS[5]
    assert len(set(five["classes"])) == N_CLASSES[5]
    codes = zobrist_codes(5)
    hashes = [ec_hash(parents_of(m), codes) for m in five["full"]]
    # the hash separates all classes and merges exactly the equivalent DAGs
    pairs = set(zip(five["classes"], hashes))
    assert len(pairs) == len(set(hashes)) == N_CLASSES[5]


def test_equivalent_dags_have_equal_bdeu(five):
    lo, hi = {}, {}
    for c, s in zip(five["classes"], five["scores"]):
        lo[c] = min(lo.get(c, np.inf), s)
        hi[c] = max(hi.get(c, -np.inf), s)
    assert max(hi[c] - lo[c] for c in lo) < 1e-9
    # and non-equivalent classes generally differ
    assert len({round(v, 6) for v in hi.values()}) > 0.5 * N_CLASSES[5]


def test_optimum_equals_brute_force(five):
    b = best_network(five["X"], five["ar"])
    assert abs(b.log_score - five["scores"].max()) < 1e-9
    assert abs(structure_log_score(five["X"], five["ar"], b.parents) - b.log_score) < 1e-9


def test_optimum_k2_equals_brute_force(five):
    X, ar = five["X"], five["ar"]
    t = oracle_table(X, ar, "k2")
    s = sum(t[v, five["comp"][:, v]] for v in range(5))
    b = best_network(X, ar, score="k2")
    assert abs(b.log_score - s.max()) < 1e-9


def _check_topk(got_scores, got_ids, ref_scores, ref_ids, k):
    """Tie-aware: scores equal position by position; every item strictly above the K-th
    score must be in the returned list."""
    order = np.argsort(-np.asarray(ref_scores), kind="stable")[:k]
    want = np.asarray(ref_scores)[order]
    assert len(got_scores) == len(want)
    np.testing.assert_allclose(got_scores, want, rtol=0, atol=1e-9)
    kth = want[-1]
    must = {ref_ids[i] for i in order if ref_scores[i] > kth + 1e-9}
    assert must <= set(got_ids)
    assert len(set(got_ids)) == len(got_ids)


@pytest.mark.parametrize("k", [1, 10, 100])
def test_k_best_dags_equal_sorted_brute_force(five, k):
    res = k_best(five["X"], five["ar"], k, classes=False)
    ids = [tuple(int(x) for x in m) for m in five["full"]]
    got = [tuple(sum(1 << p for p in pa) for pa in r.parents) for r in res]
    _check_topk([r.log_score for r in res], got, five["scores"], ids, k)
    assert [r.log_score for r in res] == sorted((r.log_score for r in res), reverse=True)


@pytest.mark.parametrize("k", [1, 10, 100, 9000])
def test_k_best_classes_equal_grouped_brute_force(five, k):
    best = _class_best(five)
    cls = list(best)
    res = k_best(five["X"], five["ar"], k, classes=True)
    got = [exact_class([sum(1 << p for p in pa) for pa in r.parents]) for r in res]
    _check_topk([r.log_score for r in res], got, [best[c] for c in cls], cls,
                min(k, N_CLASSES[5]))
    for r in res:  # each representative is an optimal member of its class
        assert abs(r.log_score - best[exact_class(
            [sum(1 << p for p in pa) for pa in r.parents])]) < 1e-9


@pytest.mark.parametrize("max_parents", [0, 1, 2])
def test_max_in_degree_equals_restricted_brute_force(five, max_parents):
    indeg = np.array([[bin(int(x)).count("1") for x in row] for row in five["full"]]).max(1)
    ok = indeg <= max_parents
    ref = five["scores"][ok]
    ids = [tuple(int(x) for x in m) for m in five["full"][ok]]
    res = k_best(five["X"], five["ar"], 20, classes=False, max_parents=max_parents)
    got = [tuple(sum(1 << p for p in pa) for pa in r.parents) for r in res]
    _check_topk([r.log_score for r in res], got, ref, ids, min(20, int(ok.sum())))
    b = best_network(five["X"], five["ar"], max_parents=max_parents)
    assert abs(b.log_score - ref.max()) < 1e-9
    # classes with at least one member within the in-degree limit
    best = {}
    for c, sc in zip([c for c, o in zip(five["classes"], ok) if o], ref):
        best[c] = max(best.get(c, -np.inf), sc)
    res = k_best(five["X"], five["ar"], 15, classes=True, max_parents=max_parents)
    got = [exact_class([sum(1 << p for p in pa) for pa in r.parents]) for r in res]
    _check_topk([r.log_score for r in res], got, list(best.values()), list(best),
                min(15, len(best)))


@pytest.mark.parametrize("max_cells", [3, 6, 12, 18])
def test_family_cell_limit_equals_restricted_brute_force(five, max_cells):
    """Families with more than ``max_cells`` cells (r_v · q_v) are left out of the search:
    the K best DAGs are the brute-force best among the DAGs whose families all fit."""
    ar = five["ar"]
    cells = np.array([[ar[v] * np.prod([ar[p] for p in range(5) if (int(x) >> p) & 1])
                       for v, x in enumerate(row)] for row in five["full"]])
    ok = (cells <= max_cells).all(axis=1)
    ref = five["scores"][ok]
    ids = [tuple(int(x) for x in m) for m in five["full"][ok]]
    res = k_best(five["X"], ar, 20, classes=False, max_family_cells=max_cells)
    got = [tuple(sum(1 << p for p in pa) for pa in r.parents) for r in res]
    _check_topk([r.log_score for r in res], got, ref, ids, min(20, int(ok.sum())))
    b = best_network(five["X"], ar)  # the default limit (2^22 cells) binds nothing here
    assert abs(b.log_score - five["scores"].max()) < 1e-9


def test_default_family_cell_limit_keeps_tables_small():
    """The bootstrap sample that asked for 10^7-cell tables (WBC, 80 rows, ebn_bagging seed
    10: an OOM kill of the CI machine) now learns networks whose every table is <= 2^22."""
    from bnma_core import warmup
    from bnma_core.classifiers.registry import make_classifier
    from bnma_core.structure.local_scores import MAX_FAMILY_CELLS

    X, y, ar = warmup._small_data()
    m = make_classifier("ebn_bagging", n_estimators=2, random_state=10).fit(X, y, arities=ar)
    for nets in m.networks_:
        for net in nets if isinstance(nets, list) else [nets]:
            assert max(c.size for c in net.cpts) <= MAX_FAMILY_CELLS


@pytest.mark.parametrize("c", [0, 4])
def test_eanb_equals_brute_force_over_augmented_structures(five, c):
    X, ar = five["X"], five["ar"]
    comp4, full4 = all_dags(4)
    feats = [i for i in range(5) if i != c]
    structs, scores = [], []
    for masks in full4:
        parents = [()] * 5
        for i in range(4):
            parents[feats[i]] = tuple(sorted([feats[u] for u in range(4)
                                               if (int(masks[i]) >> u) & 1] + [c]))
        structs.append(tuple(parents))
        scores.append(structure_log_score(X, ar, parents))
    b = best_network(X, ar, class_index=c, augmented=True)
    assert abs(b.log_score - max(scores)) < 1e-9
    assert all(c in b.parents[f] for f in feats) and b.parents[c] == ()
    res = k_best(X, ar, 10, classes=False, class_index=c, augmented=True)
    _check_topk([r.log_score for r in res], [r.parents for r in res], scores, structs, 10)
    # classes of augmented networks: grouped by the full DAG's class
    best = {}
    for p, s in zip(structs, scores):
        key = exact_class([sum(1 << q for q in pa) for pa in p])
        best[key] = max(best.get(key, -np.inf), s)
    res = k_best(X, ar, 10, classes=True, class_index=c, augmented=True)
    got = [exact_class([sum(1 << q for q in pa) for pa in r.parents]) for r in res]
    _check_topk([r.log_score for r in res], got, list(best.values()), list(best), 10)
    # max in-degree counts the class
    b2 = best_network(X, ar, class_index=c, augmented=True, max_parents=1)
    assert all(b2.parents[f] == (c,) for f in feats)


def test_kernel_keys_equal_python_hash(five):
    ls = local_scores(five["X"], five["ar"])
    bs, bm, bl = kbest_parent_sets(ls, 30)
    e, v = zobrist_codes(5)
    scores, masks, keys, count = kbest_networks(bs, bm, bl, 30, True, e, v)
    assert count == 30
    for r in range(count):
        assert int(keys[r]) == ec_hash(parents_of(masks[r]), (e, v))


def test_same_data_same_result(five):
    a = k_best(five["X"], five["ar"], 50, classes=True)
    b = k_best(five["X"], five["ar"], 50, classes=True)
    assert [(r.log_score, r.parents) for r in a] == [(r.log_score, r.parents) for r in b]


def test_ties_are_broken_deterministically():
    # a constant column and duplicated columns create many exactly tied structures
    X, ar = _data(n_rows=25)
    X[:, 3] = X[:, 0]
    a = k_best(X, ar, 40, classes=False)
    b = k_best(X[:, :], ar, 40, classes=False)
    assert [r.parents for r in a] == [r.parents for r in b]


# ----------------------------------------------------------------------------- structures
def test_scored_structure_views_and_eap_network(five):
    X, ar = five["X"], five["ar"]
    r = k_best(X, ar, 3)[0]
    assert isinstance(r, ScoredStructure)
    assert sorted(r.dag.nodes) == list(range(5))
    assert sorted(r.dag.edges) == sorted((p, v) for v, pa in enumerate(r.parents) for p in pa)
    assert r.key == ec_hash(r.parents)
    und = [(u, w) for u, w, d in r.cpdag.edges(data="directed") if not d]
    assert all(r.cpdag.has_edge(w, u) for u, w in und)
    bn = r.fit_network(X, ar, ess=1.0)
    for i, pa in enumerate(r.parents):
        counts = family_counts(X, i, list(pa), ar)
        q, rr = counts.shape
        np.testing.assert_allclose(bn.cpts[i], posterior_cpt(counts, 1.0 / (rr * q)))


def test_posterior_weights_normalised_within_list(five):
    res = k_best(five["X"], five["ar"], 10)
    w = posterior_weights(res)
    assert abs(w.sum() - 1) < 1e-12 and (np.diff(w) <= 1e-15).all()
    s = np.array([r.log_score for r in res])
    np.testing.assert_allclose(w[1] / w[0], np.exp(s[1] - s[0]))


def test_equivalent_members_give_equal_class_posteriors(five):
    # spec §1: with EAP parameters P(c | x, G) is the same for every member of a class
    X, ar = five["X"], five["ar"]
    by_class = {}
    for m, c in zip(five["full"], five["classes"]):
        by_class.setdefault(c, []).append(m)
    for rep in k_best(X, ar, 20):
        members = [parents_of(m) for m in by_class[exact_class(
            [sum(1 << p for p in pa) for pa in rep.parents])]]
        if len(members) > 2:
            break
    assert len(members) > 2
    rows = X[:7].copy()
    rows[0, 2] = -1
    ref = None
    for pa in members:
        s = ScoredStructure.from_parents(0.0, pa)
        assert is_equivalent(s.dag, rep.dag)
        p = s.fit_network(X, ar).class_posterior(0, rows)
        if ref is None:
            ref = p
        np.testing.assert_allclose(p, ref, atol=1e-12)


# ----------------------------------------------------------------------------- bad input
def test_bad_input_messages():
    X, ar = _data()
    Xm = X.copy()
    Xm[3, 1] = -1
    with pytest.raises(DataError, match="missing values"):
        best_network(Xm, ar)
    with pytest.raises(DataError, match="state code"):
        best_network(X, ar - 1)
    with pytest.raises(ValueError, match="score-equivalent"):
        k_best(X, ar, 3, score="k2")
    with pytest.raises(ValueError, match="positive integer"):
        k_best(X, ar, 0)
    with pytest.raises(ValueError, match="class_index"):
        best_network(X, ar, augmented=True)
    with pytest.raises(ValueError, match="Unknown score"):
        best_network(X, ar, score="bic")
    with pytest.raises(ValueError, match="equivalent sample size"):
        best_network(X, ar, ess=0)


def test_limits_refuse_before_allocation_with_a_plain_message():
    rng = np.random.default_rng(0)
    X = rng.integers(0, 2, size=(20, 23))
    ar = np.full(23, 2)
    with pytest.raises(ResourceLimitError, match=r"23 variables need about [\d.]+ GB for "
                                                 r"K = 10 .*; the limit is 20 variables"):
        k_best(X, ar, 10)
    with pytest.raises(ResourceLimitError, match="memory limit"):
        k_best(X[:, :6], ar[:6], 10, limits=ExactLimits(max_bytes=1e3))
    with pytest.raises(ResourceLimitError, match="19 features"):
        k_best(X[:, :20], ar[:20], 100, class_index=0, augmented=True)
    mem10, _ = estimate_resources(20, 10)
    mem100, _ = estimate_resources(17, 100)
    assert 1e9 < mem10 < 3e9 and 1e9 < mem100 < 4e9
    # configurable: a tiny problem passes a generous limit object
    assert len(k_best(X[:, :4], ar[:4], 2, limits=ExactLimits(max_vars_k10=4))) == 2


# ----------------------------------------------------------------------------- classifiers
def _clf_data(n=120, seed=3):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    X = np.column_stack([np.where(rng.random(n) < 0.8, y, 1 - y), rng.integers(0, 3, n),
                         rng.integers(0, 2, n)])
    X[:, 2] = np.where(rng.random(n) < 0.7, X[:, 0], X[:, 2])
    return X, y


@pytest.mark.parametrize("name,augmented", [("ebn", False), ("eanb", True)])
def test_classifiers_use_the_exact_network_with_eap_parameters(name, augmented):
    from bnma_core.classifiers.registry import make_classifier
    X, y = _clf_data()
    clf = make_classifier(name).fit(X, y)
    data = np.column_stack([X, y])
    ar = np.array([2, 3, 2, 2])
    ref = best_network(data, ar, class_index=3, augmented=augmented)
    assert clf.structure_.parents == ref.parents
    if augmented:
        assert all(3 in clf.structure_.parents[f] for f in range(3))
    # P(c | x) from the Markov blanket, by hand with the EAP CPTs
    bn = ref.fit_network(data, ar)
    rows = np.column_stack([X[:10], np.zeros(10, int)])
    lp = np.zeros((10, 2))
    for c in range(2):
        rows[:, 3] = c
        lp[:, c] = bn.log_prob(rows)
    want = np.exp(lp - np.logaddexp.reduce(lp, axis=1, keepdims=True))
    np.testing.assert_allclose(clf.predict_proba(X[:10]), want, atol=1e-12)


@pytest.mark.parametrize("name", ["ebn", "eanb"])
def test_classifiers_marginalize_missing_test_values_exactly(name):
    from bnma_core.classifiers.registry import make_classifier
    X, y = _clf_data()
    Xm = X.copy()
    Xm[::7, 1] = -1  # missing in training: those rows are left out
    clf = make_classifier(name).fit(Xm, y)
    assert clf.n_rows_dropped_ == len(X[::7])
    test = X[:6].astype(float)
    test[0, 0] = np.nan
    test[1, :] = np.nan
    p = clf.predict_proba(test)
    assert np.isfinite(p).all() and np.allclose(p.sum(1), 1)
    # brute force: sum the joint over the missing value
    bn = clf.network_
    full = np.column_stack([X[:1], [0]])
    lp = np.full(2, -np.inf)
    for c in range(2):
        for v in range(2):
            full[0, 0], full[0, 3] = v, c
            lp[c] = np.logaddexp(lp[c], bn.log_prob(full)[0])
    np.testing.assert_allclose(p[0], np.exp(lp - np.logaddexp.reduce(lp)), atol=1e-12)
    prior = bn.posterior(3)
    np.testing.assert_allclose(p[1], prior, atol=1e-12)


def test_classifier_refuses_too_many_features():
    from bnma_core.classifiers.exact import ExactBN
    rng = np.random.default_rng(0)
    X = rng.integers(0, 2, size=(30, 25))
    y = rng.integers(0, 2, 30)
    with pytest.raises(ResourceLimitError, match="26 variables need about"):
        ExactBN().fit(X, y)


@parametrize_with_checks([ExactBN(), ExactANB()], expected_failed_checks=lambda est: {
    "check_sample_weight_equivalence_on_dense_data":
        "uses 30 features: above the exact-search limit of 20 variables"})
def test_sklearn_compatible(estimator, check):
    check(estimator)


def test_progress_callback_reports_stages_and_can_stop(five):
    from bnma_core.structure.exact import STAGES, Stopped
    seen = []
    k_best(five["X"], five["ar"], 3, progress=lambda s, f: seen.append((s, f)) and False)
    assert [s for s, _ in seen] == [*STAGES, "done"]
    with pytest.raises(Stopped):
        k_best(five["X"], five["ar"], 3, progress=lambda s, f: s == STAGES[1])


def test_dashboard_page_runs_on_wbc():
    from pathlib import Path

    import streamlit.testing.v1 as st_testing

    from bnma_core.data import load_dataset
    from bnma_core.datasets import bundled_path

    root = Path(__file__).resolve().parents[2]
    at = st_testing.AppTest.from_file(str(root / "app.py"), default_timeout=120)
    at.switch_page("pages/5_Exact_K_best.py")
    at.session_state["bnma_dataset"] = load_dataset(bundled_path("wbc.csv"))
    at.session_state["bnma_dataset_label"] = "test data"
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    labels = [e.label for e in at.expander]
    assert "What am I looking at?" in labels and "Equations" in labels
    at.number_input(key="exact_k").set_value(4).run()
    at.button[0].click().run()
    assert not at.exception, [e.value for e in at.exception]
    run = at.session_state["exact__bnma_bg"]  # the page's background run (bnma_ui.background)
    assert run.wait(120), "the search did not end"
    at.run()  # the page takes the result
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error
    res = at.session_state["exact_run"]["entry"]["result"]
    assert len(res) == 4 and res[0].log_score >= res[-1].log_score
    assert len(at.get("plotly_chart")) >= 3  # weights, link heatmap, CPDAGs
    at.radio(key="exact_edges").set_value("arrow").run()
    assert not at.exception, [e.value for e in at.exception]


@pytest.mark.parametrize("score", ["bdeu", "k2"])
@pytest.mark.parametrize("kind", ["fractional", "integer"])
def test_weighted_local_scores_equal_weighted_counts(score, kind):
    X, ar = _data(n_rows=30)
    rng = np.random.default_rng(5)
    w = rng.random(30) * 3 if kind == "fractional" else rng.integers(0, 3, 30).astype(float)
    t = local_scores(X, ar, score, 2.0, sample_weight=w)
    for v in range(5):
        for idx in range(16):
            P = (idx & ((1 << v) - 1)) | ((idx >> v) << (v + 1))
            pa = [u for u in range(5) if (P >> u) & 1]
            ref = log_ml_counts(family_counts(X, v, pa, ar, weights=w), score, 2.0)
            assert abs(t[v, idx] - ref) < 1e-9
    if kind == "integer":  # integer weights = repeated rows
        rep = np.repeat(X, w.astype(int), axis=0)
        b1 = best_network(X, ar, sample_weight=w)
        b2 = best_network(rep, ar)
        assert b1.parents == b2.parents and abs(b1.log_score - b2.log_score) < 1e-9
    with pytest.raises(ValueError, match="non-negative"):
        best_network(X, ar, sample_weight=-w)


@pytest.mark.parametrize("n", [1, 2, 3, 4])
def test_k_above_the_number_of_structures_returns_them_all(n):
    X, ar = _data(n_rows=20)
    X, ar = X[:, :n], ar[:n]
    dags = k_best(X, ar, 1000, classes=False)
    classes = k_best(X, ar, 1000, classes=True)
    assert len(dags) == N_DAGS[n] and len({r.parents for r in dags}) == N_DAGS[n]
    assert len(classes) == N_CLASSES[n] and len({r.key for r in classes}) == N_CLASSES[n]


# ----------------------------------------------------------------- the shared classifier base
def test_exact_structure_classifiers_share_one_public_base():
    from bnma_core.classifiers.brai import BRAI
    from bnma_core.classifiers.ensembles import AdaBoostEBN, BaggingEBN, BANMix
    from bnma_core.classifiers.exact import ExactStructureClassifier
    from bnma_core.classifiers.kbest import KBestEC, SubbaggingKBest

    for cls in (ExactBN, ExactANB, KBestEC, SubbaggingKBest, BaggingEBN, AdaBoostEBN, BANMix,
                BRAI):
        assert issubclass(cls, ExactStructureClassifier), cls.__name__


def test_no_classifier_module_imports_a_private_name_of_another():
    """Shared helpers are public where they live (e.g. the base class and its checks in
    ``classifiers/exact.py``), not private names of one classifier borrowed by others."""
    import ast
    from pathlib import Path

    import bnma_core.classifiers as pkg

    found = []
    for path in sorted(Path(pkg.__file__).parent.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and (node.level or (node.module or "")
                                                     .startswith("bnma_core")):
                found += [f"{path.name}: {node.module}.{a.name}" for a in node.names
                          if a.name.startswith("_") and not a.name.startswith("__")]
    assert found == []


def test_exact_bn_drops_incomplete_and_zero_weight_rows():
    X, ar = _data()
    y = X[:, -1]
    X = X[:, :-1].copy()
    X[0, 0] = -1
    w = np.ones(len(y))
    w[1] = 0.0
    clf = ExactBN().fit(X, y, arities=ar[:-1], sample_weight=w)
    assert clf.n_rows_dropped_ == 2 and clf.class_index_ == X.shape[1]
    keep = np.ones(len(y), dtype=bool)
    keep[:2] = False
    ref = ExactBN().fit(X[keep], y[keep], arities=ar[:-1])
    assert clf.structure_.parents == ref.structure_.parents
    np.testing.assert_allclose(clf.predict_proba(X[keep]), ref.predict_proba(X[keep]),
                               atol=1e-12)
    w[:] = 0.0
    w[0] = 1.0                            # the only weighted row is incomplete
    with pytest.raises(DataError, match="complete with a positive weight"):
        ExactBN().fit(X, y, arities=ar[:-1], sample_weight=w)
