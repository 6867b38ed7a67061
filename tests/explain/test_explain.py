"""bnma_core.explain: the models behind each average, the intervals, Shapley values, what-if,
value of information and the conflict measure, against brute force (DESIGN §15)."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from oracles import kbest_data

from bnma_core import explain as E
from bnma_core.classifiers.aode import AODE
from bnma_core.classifiers.ensembles import BaggingEBN
from bnma_core.classifiers.kbest import KBestEC, SubbaggingKBest
from bnma_core.classifiers.kdb import KDB
from bnma_core.classifiers.manb import MANaiveBayes
from bnma_core.classifiers.naive_bayes import NaiveBayes
from bnma_core.classifiers.order_bma import FixedOrderBMA, OrderMCMCBMA
from bnma_core.classifiers.tan import TAN
from bnma_core.scores import log_ml_counts, posterior_cpt

ESTIMATORS = {
    "nb": lambda: NaiveBayes(),
    "tan": lambda: TAN(),
    "kdb1": lambda: KDB(k=1),
    "manb": lambda: MANaiveBayes(),
    "bma_fixed": lambda: FixedOrderBMA(max_parents=2),
    "bma": lambda: OrderMCMCBMA(n_iter=300, burn_in=50, n_orders=6, max_parents=2,
                                random_state=0),
    "aode": lambda: AODE(),
    "kbest": lambda: KBestEC(n_best=12),
    "kbest_subbagging": lambda: SubbaggingKBest(n_subsamples=3, n_best=4, random_state=0),
    "bagging": lambda: BaggingEBN(n_estimators=3, random_state=0),
}


@pytest.fixture(scope="module")
def data():
    D, ar = kbest_data(n=80, seed=3)
    return D[:, :3], D[:, 3], ar[:3]


@pytest.fixture(scope="module")
def fitted(data):
    X, y, ar = data
    return {k: f().fit(X, y, arities=ar) for k, f in ESTIMATORS.items()}


def _cases(ar) -> np.ndarray:
    """Every complete case and every case with one or two findings unknown."""
    vals = [range(-1, int(a)) for a in ar]
    return np.array(list(itertools.product(*vals)), dtype=np.int64)


@pytest.mark.parametrize("name", list(ESTIMATORS))
def test_models_average_to_predict_proba(fitted, data, name):
    est = fitted[name]
    X = _cases(data[2])
    ms = E.model_set(est, X, codes=True)
    assert ms.decomposed and ms.exact
    np.testing.assert_allclose(ms.averaged(), est.predict_proba(X), atol=1e-12, rtol=0)
    np.testing.assert_allclose(ms.model_weights.sum(axis=0), 1.0, atol=1e-12)
    pred = E.predict_with_uncertainty(est, X, codes=True)
    np.testing.assert_allclose(pred.proba, est.predict_proba(X), atol=1e-12, rtol=0)
    lo, hi = pred.structure_interval[..., 0], pred.structure_interval[..., 1]
    assert (lo <= hi + 1e-15).all()
    assert pred.single_structure == (name in ("nb", "tan", "kdb1", "bma_fixed"))
    if pred.single_structure:
        np.testing.assert_allclose(lo, pred.proba, atol=1e-15)
        assert ("one order" if name == "bma_fixed" else "one model") in pred.describe(0)


def _wq(v, w, q):
    """Weighted lower quantile written out loop by loop (the oracle of weighted_quantile)."""
    order = sorted(range(len(v)), key=lambda k: v[k])
    total, acc = sum(w), 0.0
    for k in order:
        acc += w[k] / total
        if acc >= q - 1e-12:
            return v[k]
    return v[order[-1]]


def test_manb_interval_equals_enumeration_of_feature_sets(fitted, data):
    """4 variables: the 2^3 naive structures with their posteriors, enumerated by hand."""
    X, y, ar = data
    est = fitted["manb"]
    C = 2
    Xy = np.column_stack([X, y])
    full = np.array([2, C])
    counts_c = [np.array([[np.sum((X[:, i] == v) & (y == c)) for v in range(ar[i])]
                          for c in range(C)], dtype=float) for i in range(3)]
    counts_0 = [c.sum(axis=0, keepdims=True) for c in counts_c]
    prior = posterior_cpt(np.bincount(y, minlength=C)[None, :].astype(float), 1.0)[0]
    for x in ([1, 2, 0], [0, -1, 1], [-1, 0, -1]):
        vals, ws = [], []
        for S in itertools.product([0, 1], repeat=3):
            logp = sum(math.log(0.5) + log_ml_counts(counts_c[i] if S[i] else counts_0[i], "k2")
                       for i in range(3))
            joint = np.log(prior).copy()
            for i in range(3):
                if x[i] < 0:
                    continue
                if S[i]:
                    joint += np.log(posterior_cpt(counts_c[i], 1.0)[:, x[i]])
                else:
                    joint += math.log(posterior_cpt(counts_0[i], 1.0)[0, x[i]])
            ev = np.logaddexp.reduce(joint)
            vals.append(np.exp(joint - ev))
            ws.append(logp + ev)
        ws = np.exp(np.array(ws) - max(ws))
        vals = np.array(vals)
        pred = E.predict_with_uncertainty(est, np.array(x), codes=True)
        np.testing.assert_allclose(pred.proba[0], ws @ vals / ws.sum(), atol=1e-12)
        for c in range(C):
            lo = _wq(list(vals[:, c]), list(ws), 0.05)
            hi = _wq(list(vals[:, c]), list(ws), 0.95)
            np.testing.assert_allclose(pred.structure_interval[0, c], [lo, hi], atol=1e-12)
    del Xy, full


@pytest.mark.parametrize("name", ["tan", "manb", "bma_fixed", "bma", "aode", "kbest",
                                  "kbest_subbagging", "bagging"])
def test_parameter_draws_converge_to_the_averaged_prediction(fitted, data, name):
    """The likelihood-weighted mean of the (structure, CPT) draws estimates P(c | x): within
    5 Monte Carlo standard errors (seeds 1-3 give at most 2.8 on these cases)."""
    X, y, ar = data
    est = fitted[name]
    cases = np.array([[1, 2, 0], [0, -1, 1], [-1, 0, -1]])
    pred = E.predict_with_uncertainty(est, cases, codes=True, n_draws=3000, train=(X, y),
                                      seed=1)
    mean, se = pred.draws.mean(), pred.draws.standard_error()
    assert (np.abs(mean - pred.proba) <= 5 * se + 1e-12).all(), (mean, pred.proba, se)
    lo, hi = pred.parameter_interval[..., 0], pred.parameter_interval[..., 1]
    assert (lo <= hi).all()
    again = E.predict_with_uncertainty(est, cases, codes=True, n_draws=3000, train=(X, y),
                                       seed=1)
    np.testing.assert_array_equal(again.parameter_interval, pred.parameter_interval)


def test_parameter_draws_need_training_rows(fitted):
    with pytest.raises(ValueError, match="training rows"):
        E.predict_with_uncertainty(fitted["tan"], np.array([0, 1, 0]), codes=True, n_draws=10)


# ---------------------------------------------------------------------- Shapley values
def _brute_shapley(est, x, target):
    F = [j for j in range(len(x)) if x[j] >= 0]

    def v(S):
        r = np.array(x)
        for j in F:
            if j not in S:
                r[j] = -1
        p = est.predict_proba(r[None])[0, target]
        return math.log(p) - math.log1p(-p)

    phi = np.zeros(len(F))
    perms = list(itertools.permutations(F))
    for perm in perms:
        S = set()
        for j in perm:
            before = v(S)
            S.add(j)
            phi[F.index(j)] += v(S) - before
    return phi / len(perms)


@pytest.mark.parametrize("name", ["tan", "manb", "aode", "kbest", "bma"])
def test_shapley_equals_permutation_average(fitted, name):
    est = fitted[name]
    x = np.array([1, 2, 0])
    sh = E.shapley_values(est, x, codes=True)
    assert sh.exact
    np.testing.assert_allclose(sh.values, _brute_shapley(est, x, sh.target), atol=1e-9)
    assert sh.values.sum() == pytest.approx(sh.full - sh.empty, abs=1e-10)
    p = est.predict_proba(x[None])[0, sh.target]
    assert sh.full == pytest.approx(math.log(p / (1 - p)), abs=1e-9)
    if name in ("aode", "kbest", "bma"):
        assert sh.model_values.shape == (len(sh.model_weights), 3)
        assert (sh.model_sd >= 0).all()


def test_shapley_naive_bayes_is_weight_of_evidence(wbc):
    from bnma_core.classifiers.registry import fit_method

    est = fit_method("nb", wbc)
    x = wbc.X[0].astype(np.int64)
    sh = E.shapley_values(est, x, codes=True)
    c, o = sh.target, 1 - sh.target
    woe = [math.log(est.cpts_[j][c, x[j]] / est.cpts_[j][o, x[j]]) for j in sh.findings]
    np.testing.assert_allclose(sh.values, woe, atol=1e-10)
    assert sh.names == [wbc.feature_names[j] for j in sh.findings]


def test_interval_note_says_one_feature_set_carries_the_weight(wbc):
    """Issue 32: Naive BMA on WBC shows "between 0.98 and 0.98" — its posterior sits on one
    feature set, and the note says so where the interval is shown."""
    from bnma_core.classifiers.registry import fit_method

    est = fit_method("manb", wbc)
    pred = E.predict_with_uncertainty(est, wbc.X[:3], codes=True, n_draws=50, train=wbc, seed=0)
    for r in range(3):
        lo, hi = pred.structure_interval[r, pred.predicted[r]]
        assert f"{lo:.2f}" == f"{hi:.2f}"
        assert pred.interval_note(r) == (
            "The data leave no doubt about the structure: one feature set carries "
            f"{100 * pred.models.model_weights[:, r].max():.1f} % of the weight; the wider "
            "interval adds parameter uncertainty.")
    assert "100.0 %" in pred.interval_note(0)
    assert E.predict_with_uncertainty(est, wbc.X[0], codes=True).interval_note(0).endswith(
        "of the weight.")
    single = E.predict_with_uncertainty(fit_method("nb", wbc), wbc.X[0], codes=True)
    assert single.interval_note(0) == ""


def test_sampled_shapley_is_efficient_and_near_exact(fitted):
    est = fitted["kbest"]
    x = np.array([1, 2, 0])
    exact = E.shapley_values(est, x, codes=True)
    sampled = E.shapley_values(est, x, codes=True, exact_limit=0, n_permutations=400, seed=3)
    assert not sampled.exact and sampled.n_permutations == 400
    assert sampled.values.sum() == pytest.approx(exact.full - exact.empty, abs=1e-10)
    assert (np.abs(sampled.values - exact.values) <= 4 * sampled.standard_error + 1e-12).all()


# ---------------------------------------------------------------------- what if
def test_what_if_changes_adds_and_clears(fitted):
    est = fitted["tan"]
    x = np.array([1, -1, 0])
    sc, pred = E.what_if(est, x, [{0: 0}, {"x1": 2}, {2: None}], codes=True)
    rows = np.array([[1, -1, 0], [0, -1, 0], [1, 2, 0], [1, -1, -1]])
    np.testing.assert_array_equal(np.vstack([x] + [s.codes for s in sc]), rows)
    np.testing.assert_allclose(pred.proba, est.predict_proba(rows), atol=1e-12)
    with pytest.raises(ValueError, match="At most 3"):
        E.what_if(est, x, [{0: 0}] * 4, codes=True)
    with pytest.raises(ValueError, match="Unknown finding"):
        E.what_if(est, x, [{"nope": 0}], codes=True)
    with pytest.raises(ValueError, match="not a state"):
        E.what_if(est, x, [{0: 7}], codes=True)


@pytest.mark.parametrize("name", ["tan", "manb", "kbest_subbagging"])
def test_a_scenario_identical_to_the_case_is_judged_like_the_case(fitted, data, name):
    """Issue 32: a what-if that changes nothing (or sets a finding to its own value) gets the
    case's probability, both intervals and "uncertain" flag, to the byte, with draws."""
    X, y, ar = data
    est = fitted[name]
    x = np.array([1, -1, 0])
    case = E.predict_with_uncertainty(est, x, codes=True, n_draws=200, train=(X, y), seed=4)
    _, wi = E.what_if(est, x, [{}, {0: 1}, {2: None}], n_draws=200, train=(X, y), seed=4,
                      codes=True)
    for k in (0, 1, 2):
        assert wi.proba[k].tobytes() == case.proba[0].tobytes()
        assert wi.structure_interval[k].tobytes() == case.structure_interval[0].tobytes()
        assert wi.parameter_interval[k].tobytes() == case.parameter_interval[0].tobytes()
        assert wi.uncertain()[k] == case.uncertain()[0]
        assert wi.describe(k) == case.describe(0)
    cleared = E.predict_with_uncertainty(est, np.array([1, -1, -1]), codes=True, n_draws=200,
                                         train=(X, y), seed=4)
    assert wi.parameter_interval[3].tobytes() == cleared.parameter_interval[0].tobytes()


# ---------------------------------------------------------------------- VOI and conflict
@pytest.fixture(scope="module")
def asia_tan():
    """TAN on ASIA samples (class: dysp) and its joint distribution by enumeration."""
    from bnma_core.network import load_network

    bn = load_network("asia")
    D = bn.sample_codes(400, seed=5).astype(np.int64)
    c = bn.names.index("dysp")
    feats = [j for j in range(bn.n_vars) if j != c]
    X, y = D[:, feats], D[:, c]
    est = TAN().fit(X, y, arities=np.full(len(feats), 2))
    p = len(feats)
    joint = np.zeros((2,) * p + (2,))
    for cfg in itertools.product(range(2), repeat=p + 1):
        x, cls = cfg[:p], cfg[p]
        lp = math.log(est.class_prior_[cls])
        for i in range(p):
            j = cls
            stride = 2
            for u in est.feature_parents_[i]:
                j += x[u] * stride
                stride *= 2
            lp += math.log(est.cpts_[i][j, x[i]])
        joint[cfg] = math.exp(lp)
    return est, joint, X, y


def _marg(joint, x):
    """P(x_obs, C) from the enumerated joint: (2,)."""
    idx = tuple(slice(None) if v < 0 else int(v) for v in x) + (slice(None),)
    t = joint[idx]
    return t.reshape(-1, 2).sum(axis=0)


def test_next_test_equals_brute_force(asia_tan):
    est, joint, _, _ = asia_tan
    x = np.array([-1, 1, -1, 0, -1, 1, -1])
    nt = E.next_test(est, x, threshold=0.4, codes=True)
    pc = _marg(joint, x)
    post0 = pc / pc.sum()
    H = lambda p: -sum(q * math.log(q) for q in p if q > 0)  # noqa: E731
    target = int(np.argmax(post0))
    assert nt.target == target
    for j, voi, flip in zip(nt.columns, nt.voi, nt.flip_probability):
        pv, eh, fl = [], 0.0, 0.0
        for v in range(2):
            xv = x.copy()
            xv[j] = v
            m = _marg(joint, xv)
            pv.append(m.sum() / pc.sum())
            eh += pv[-1] * H(m / m.sum())
            fl += pv[-1] * (((m / m.sum())[target] >= 0.4) != (post0[target] >= 0.4))
        assert voi == pytest.approx(H(post0) - eh, abs=1e-10)
        assert flip == pytest.approx(fl, abs=1e-12)
    assert list(nt.voi) == sorted(nt.voi, reverse=True)


@pytest.mark.parametrize("name", ["kbest", "kbest_subbagging", "bagging", "adaboost_hard"])
def test_value_of_information_is_the_mutual_information_of_the_averaged_joint(fitted, data,
                                                                              name):
    """Averages of posteriors (and a hard vote): VOI = I(C; X_j | x) under the averaged joint
    sum_m w_m P(c, x | m), written out from the models' own joints, on every case with one or
    two findings unknown; never negative (issue 32: K-best went to -0.03 nats)."""
    from bnma_core.classifiers.ensembles import AdaBoostEBN

    X, y, ar = data
    est = (AdaBoostEBN(n_estimators=3, voting="hard").fit(X, y, arities=ar)
           if name == "adaboost_hard" else fitted[name])
    H = lambda p: -sum(q * math.log(q) for q in p if q > 0)  # noqa: E731
    for x in _cases(ar):
        if (x >= 0).all():
            continue
        nt = E.next_test(est, x, codes=True)
        assert (nt.voi >= 0).all()
        for j, voi, pv in zip(nt.columns, nt.voi, nt.value_probabilities):
            rows = np.repeat(x[None], int(ar[j]), axis=0)
            rows[:, j] = np.arange(int(ar[j]))
            lw, lj, _ = est.model_log_joints(rows, codes=True, **(
                {"voting": "soft"} if name == "adaboost_hard" else {}))
            T = np.einsum("m,mvc->vc", np.exp(lw - np.logaddexp.reduce(lw)), np.exp(lj))
            T = T / T.sum()
            np.testing.assert_allclose(pv, T.sum(axis=1), atol=1e-12)
            want = H(T.sum(axis=0)) - sum(T[v].sum() * H(T[v] / T[v].sum())
                                          for v in range(len(T)))
            assert voi == pytest.approx(max(want, 0.0), abs=1e-12)


def test_value_of_information_is_nonnegative_for_joint_averages(fitted):
    nt = E.next_test(fitted["manb"], np.array([1, -1, -1]), codes=True)
    assert len(nt.findings) == 2 and (nt.voi >= -1e-12).all()


def test_conflict_and_percentile_equal_brute_force(asia_tan):
    est, joint, X, y = asia_tan
    x = np.array([0, 1, -1, 0, 1, 1, -1])
    un = E.unusual_case(est, x, train=(X, y), codes=True)
    logp = math.log(_marg(joint, x).sum())
    singles = 0.0
    for j in np.flatnonzero(x >= 0):
        s = np.full(len(x), -1)
        s[j] = x[j]
        singles += math.log(_marg(joint, s).sum())
    assert un.log_likelihood == pytest.approx(logp, abs=1e-10)
    assert un.conflict == pytest.approx(singles - logp, abs=1e-10)
    lt = []
    for r in X:
        r = r.copy()
        r[x < 0] = -1
        lt.append(math.log(_marg(joint, r).sum()))
    assert un.rarer_than == pytest.approx(np.mean(np.array(lt) > logp + 1e-12), abs=1e-12)


def test_no_finding_known_has_no_conflict_and_no_percentile(asia_tan):
    """Issue 32: an empty form is neither unusual nor conflicting; the sentence says there is
    nothing to compare, not "0 % of training cases ... (conflict 0.00)"."""
    from bnma_core.viz.patient import unusual_sentence

    est, _, X, y = asia_tan
    un = E.unusual_case(est, np.full(X.shape[1], -1), train=(X, y), codes=True)
    assert un.no_findings and un.rarer_than is None and un.conflict == 0.0
    assert unusual_sentence(un) == ("No finding is known yet, so there is nothing to compare "
                                    "with the training cases and no conflict between findings.")
    one = E.unusual_case(est, np.array([0] + [-1] * (X.shape[1] - 1)), train=(X, y), codes=True)
    assert not one.no_findings and one.rarer_than is not None


def test_methods_without_models_say_so(wbc):
    from bnma_core.classifiers.registry import fit_method

    est = fit_method("ukdb", wbc)
    x = wbc.X[0]
    pred = E.predict_with_uncertainty(est, x, codes=True)
    assert pred.models.kind == "not decomposed" and pred.single_structure
    np.testing.assert_allclose(pred.proba, est.predict_proba(x[None]), atol=1e-12)
    with pytest.raises(ValueError, match="does not give the probability of findings"):
        E.next_test(est, x, codes=True)
    with pytest.raises(ValueError, match="parameter draws"):
        E.predict_with_uncertainty(est, x, codes=True, n_draws=10, train=wbc)


def test_kbest_interval_equals_enumeration_of_all_dags():
    """4 variables: every DAG, grouped into its equivalence class, scored (BDeu) and fitted
    (EAP) by hand; K-best with K above the 185 classes averages all of them."""
    from oracles import all_dag_parents, equivalence_class_key

    from bnma_core.scores import family_counts

    D, ar = kbest_data(n=60, seed=3)
    est = KBestEC(n_best=300).fit(D[:, :3], D[:, 3], arities=ar[:3])
    classes = {}
    for pa in all_dag_parents(4):
        classes.setdefault(equivalence_class_key(pa), pa)
    assert len(est.structures_) == len(classes) == 185
    scores, cpts = [], []
    for pa in classes.values():
        counts = [family_counts(D, v, list(pa[v]), ar) for v in range(4)]
        scores.append(sum(log_ml_counts(c, "bdeu", 1.0) for c in counts))
        cpts.append([posterior_cpt(c, 1.0 / c.size) for c in counts])
    w = np.exp(np.array(scores) - max(scores))
    pas = list(classes.values())
    for x in ([1, 2, 0], [0, -1, 1], [-1, 0, -1]):
        vals = []
        for pa, cpt in zip(pas, cpts):
            joint = np.zeros(2)
            fills = [range(ar[j]) if x[j] < 0 else [x[j]] for j in range(3)]
            for xs in itertools.product(*fills):
                for c in range(2):
                    v = (*xs, c)
                    p = 1.0
                    for node in range(4):
                        j, stride = 0, 1
                        for u in pa[node]:
                            j += v[u] * stride
                            stride *= ar[u]
                        p *= cpt[node][j, v[node]]
                    joint[c] += p
            vals.append(joint / joint.sum())
        vals = np.array(vals)
        pred = E.predict_with_uncertainty(est, np.array(x), codes=True)
        np.testing.assert_allclose(pred.proba[0], w @ vals / w.sum(), atol=1e-9)
        for c in range(2):
            lo = _wq(list(vals[:, c]), list(w), 0.05)
            hi = _wq(list(vals[:, c]), list(w), 0.95)
            np.testing.assert_allclose(pred.structure_interval[0, c], [lo, hi], atol=1e-9)


def test_results_serialise_to_json(fitted, data):
    import json

    X, y, _ = data
    est = fitted["kbest"]
    x = np.array([1, -1, 0])
    out = {"prediction": E.predict_with_uncertainty(est, x, codes=True, n_draws=50,
                                                    train=(X, y)).to_dict(),
           "shapley": E.shapley_values(est, x, codes=True).to_dict(est.classes_),
           "next_test": E.next_test(est, x, codes=True).ranked(),
           "unusual": E.unusual_case(est, x, train=(X, y), codes=True).to_dict()}
    back = json.loads(json.dumps(out))
    assert set(back["shapley"]["contributions"]) == {"x0", "x2"}
    assert back["prediction"]["n_models"] == len(est.structures_)
    assert back["next_test"][0]["finding"] == "x1"


def test_manb_beyond_the_exact_limit_samples_feature_sets(fitted, data):
    """Sampled feature sets (max_exact below N): the average estimates predict_proba, and the
    model set says it is not exact."""
    est = fitted["manb"]
    X = _cases(data[2])
    ms = E.model_set(est, X, codes=True, max_exact=2, n_sampled=20000, random_state=4)
    assert not ms.exact and ms.n_models == 20000
    assert np.abs(ms.averaged() - est.predict_proba(X)).max() < 0.02


def test_labels_frames_and_edge_cases():
    """Rows given as a labelled DataFrame (the estimator's own encoder), a case without
    findings, a case without unknown findings, and plain-words errors."""
    import pandas as pd

    D, ar = kbest_data(n=80, seed=3)
    frame = pd.DataFrame({f"f{j}": [f"v{c}" for c in D[:, j]] for j in range(3)})
    y = pd.Series(np.where(D[:, 3] == 1, "yes", "no"), name="outcome")
    est = TAN().fit(frame, y)
    case = frame.iloc[[0]]
    pred = E.predict_with_uncertainty(est, case, n_draws=20, train=(frame, y))
    np.testing.assert_allclose(pred.proba, est.predict_proba(case), atol=1e-12)
    sc, wi = E.what_if(est, case, [{"f0": "v1"}, {"f1": None}])
    assert sc[0].codes[0] == list(est.feature_states_[0]).index("v1") and sc[1].codes[1] == -1
    empty = E.shapley_values(est, pd.DataFrame({c: [None] for c in frame.columns}))
    assert len(empty.values) == 0 and empty.full == empty.empty
    assert len(E.next_test(est, case).findings) == 0
    with pytest.raises(ValueError, match="level"):
        E.predict_with_uncertainty(est, case, level=90)
    with pytest.raises(ValueError, match="threshold"):
        E.next_test(est, case, threshold=1.5)
    with pytest.raises(ValueError, match="class index"):
        E.shapley_values(est, case, target=5)


def test_uncertain_flags_intervals_across_the_decision(fitted):
    est = fitted["kbest"]
    X = _cases(np.array([2, 3, 2]))
    pred = E.predict_with_uncertainty(est, X, codes=True)
    c = pred.predicted
    iv = pred.structure_interval
    expected = [iv[i, c[i], 0] <= iv[i, 1 - c[i], 1] for i in range(len(X))]
    np.testing.assert_array_equal(pred.uncertain(), expected)
    assert pred.uncertain().any() and not pred.uncertain().all()
    two = iv[np.arange(len(X)), c, 0] <= 0.5
    np.testing.assert_array_equal(pred.uncertain(), two)


def test_too_many_models_times_rows_is_refused_with_the_rows_that_fit(fitted, monkeypatch):
    from bnma_core.explain import models

    monkeypatch.setattr(models, "MAX_TOTAL_CELLS", 8 * 2 * 10)
    X = _cases(np.array([2, 3, 2]))
    with pytest.raises(ValueError, match="pass at most 10 rows per call"):
        E.model_set(fitted["manb"], X, codes=True)
    with pytest.raises(ValueError, match="pass at most 13 rows per call"):
        E.model_set(fitted["bma"], X, codes=True)


def test_unusual_case_counts_training_rows_in_blocks(asia_tan, monkeypatch):
    from bnma_core.explain import findings

    est, _, X, y = asia_tan
    x = np.array([0, 1, -1, 0, 1, 1, -1])
    whole = E.unusual_case(est, x, train=(X, y), codes=True)
    monkeypatch.setattr(findings, "MAX_TOTAL_CELLS", 2 * 7)
    blocks = E.unusual_case(est, x, train=(X, y), codes=True)
    np.testing.assert_allclose(blocks.training_log_likelihoods, whole.training_log_likelihoods,
                               atol=1e-12)
    assert blocks.rarer_than == whole.rarer_than
