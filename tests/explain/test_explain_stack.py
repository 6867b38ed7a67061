"""bnma_core.explain under a stack of methods (PredictiveStacking): the flattened models, both
intervals, Shapley values, value of information and the conflict measure against the
components' own decompositions (DESIGN §15)."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from oracles import kbest_data

from bnma_core import explain as E
from bnma_core.classifiers.kbest import KBestEC
from bnma_core.classifiers.manb import MANaiveBayes
from bnma_core.classifiers.order_bma import OrderMCMCBMA
from bnma_core.classifiers.stacking import PredictiveStacking
from bnma_core.classifiers.ukdb import UKDB

SMALL = {
    "bma10": lambda seed: OrderMCMCBMA(n_iter=300, burn_in=50, n_orders=6, max_parents=2,
                                       random_state=seed),
    "manb": lambda seed: MANaiveBayes(),
    "kbest": lambda seed: KBestEC(n_best=12),
    "ukdb2": lambda seed: UKDB(k=2),
}
WEIGHTS = {"bma10": 0.4, "manb": 0.25, "kbest": 0.2, "ukdb2": 0.15}


class SmallStack(PredictiveStacking):
    """The stack with small, fast candidates (the registry's defaults are the full methods)."""

    def _make(self, name, seed):
        return SMALL[name](seed)


def _with_weights(est, X, y, weights):
    """The fitted stack with the given weights (every component refitted on all rows)."""
    est.weights_ = dict(weights)
    est.models_ = {n: est._fit_candidate(n, est.seed_, X, y) for n, w in weights.items()
                   if w > 0}
    return est


@pytest.fixture(scope="module")
def data():
    D, ar = kbest_data(n=80, seed=3)
    return D[:, :3], D[:, 3], ar[:3]


@pytest.fixture(scope="module")
def stack(data):
    X, y, ar = data
    est = SmallStack(candidates=tuple(WEIGHTS), inner_folds=2, random_state=0)
    est.fit(X, y, arities=ar)
    return _with_weights(est, X, y, WEIGHTS)


def _cases(ar) -> np.ndarray:
    """Every complete case and every case with one or two findings unknown."""
    return np.array(list(itertools.product(*[range(-1, int(a)) for a in ar])), dtype=np.int64)


def _wq(v, w, q):
    """Weighted lower quantile written out loop by loop."""
    order = sorted(range(len(v)), key=lambda k: v[k])
    total, acc = sum(w), 0.0
    for k in order:
        acc += w[k] / total
        if acc >= q - 1e-12:
            return v[k]
    return v[order[-1]]


def _component_models(stack, x):
    """Each component's class posteriors and weights in the stack, from its own decomposition
    (UKDB: its prediction, one model): lists over the flattened models."""
    post, wts = [], []
    for name, w, comp in stack.stack_components():
        if name == "ukdb2":
            post.append(comp.predict_proba(x[None])[0])
            wts.append(w)
            continue
        ms = E.model_set(comp, x[None], codes=True)
        for m in range(ms.n_models):
            post.append(ms.posteriors()[m, 0])
            wts.append(w * ms.model_weights[m, 0])
    return np.array(post), np.array(wts)


def test_flattened_models_average_to_predict_proba(stack, data):
    X = _cases(data[2])
    ms = E.model_set(stack, X, codes=True)
    assert ms.averaging == "stack" and ms.decomposed and ms.exact
    assert [p.name for p in ms.parts] == list(WEIGHTS)
    assert ms.without_joint == ("ukdb2",)
    np.testing.assert_allclose(ms.averaged(), stack.predict_proba(X), atol=1e-12, rtol=0)
    np.testing.assert_allclose(ms.model_weights.sum(axis=0), 1.0, atol=1e-12)
    for p in ms.parts:  # each component keeps its stack weight, whatever the case
        np.testing.assert_allclose(ms.model_weights[p.start:p.stop].sum(axis=0), p.weight,
                                   atol=1e-12)
    np.testing.assert_allclose(np.log(stack.predict_proba(X)), np.log(np.einsum(
        "k,knc->nc", np.array(list(WEIGHTS.values())),
        np.exp(stack.component_log_proba(X, codes=True)))), atol=1e-12)
    pred = E.predict_with_uncertainty(stack, X, codes=True)
    np.testing.assert_allclose(pred.proba, stack.predict_proba(X), atol=1e-12, rtol=0)
    assert not pred.single_structure
    assert "models of the stacked methods" in pred.describe(0)


def test_structure_interval_is_a_weighted_quantile_over_the_components(stack):
    for x in (np.array([1, 2, 0]), np.array([0, -1, 1]), np.array([-1, 0, -1])):
        pred = E.predict_with_uncertainty(stack, x, codes=True)
        post, wts = _component_models(stack, x)
        assert len(wts) == pred.models.n_models
        np.testing.assert_allclose(wts @ post, pred.proba[0], atol=1e-12)
        for c in range(post.shape[1]):
            want = [_wq(post[:, c], wts, 0.05), _wq(post[:, c], wts, 0.95)]
            np.testing.assert_allclose(pred.structure_interval[0, c], want, atol=1e-12)


def test_parameter_draws_per_component_with_ukdb_fixed(stack, data):
    X, y, ar = data
    cases = np.array([[1, 2, 0], [0, -1, 1], [-1, 0, -1]])
    pred = E.predict_with_uncertainty(stack, cases, codes=True, n_draws=3000, train=(X, y),
                                      seed=1)
    assert pred.draws.fixed == ("ukdb2",)
    assert pred.to_dict(0)["fixed_components"] == ["ukdb2"]
    assert ("the share of UKDB (general + per-row network), 2 feature parents is counted "
            "without parameter uncertainty") in pred.describe(0)
    mean, se = pred.draws.mean(), pred.draws.standard_error()
    assert (np.abs(mean - pred.proba) <= 5 * se + 1e-12).all(), (mean, pred.proba, se)
    np.testing.assert_allclose(pred.draws.weights.sum(axis=0), 1.0, atol=1e-12)
    lo, hi = pred.parameter_interval[..., 0], pred.parameter_interval[..., 1]
    assert (lo <= hi).all()
    again = E.predict_with_uncertainty(stack, cases, codes=True, n_draws=3000, train=(X, y),
                                       seed=1)
    np.testing.assert_array_equal(again.parameter_interval, pred.parameter_interval)
    with pytest.raises(ValueError, match="training rows"):
        E.predict_with_uncertainty(stack, cases, codes=True, n_draws=10)


def test_identical_intervals_name_the_method_at_their_end(stack, data):
    """Issue 32: where both intervals read the same, the note says what that means and names
    a stacked method without parameter draws whose probability is an end."""
    import dataclasses

    X, y, ar = data
    pred = E.predict_with_uncertainty(stack, _cases(ar), codes=True, n_draws=100,
                                      train=(X, y), seed=1)
    same = dataclasses.replace(pred, parameter_interval=pred.structure_interval.copy())
    ms = pred.models
    ukdb = next(p for p in ms.parts if p.name == "ukdb2")
    named = 0
    for r in range(len(pred.proba)):
        c = int(pred.predicted[r])
        note = same.interval_note(r)
        lo, hi = pred.structure_interval[r, c]
        assert note.startswith(f"Both intervals are {lo:.2f}" if f"{lo:.2f}" != f"{hi:.2f}"
                               else f"Both intervals are the one number {lo:.2f}")
        at_end = np.isclose(ms.posteriors()[ukdb.start, r, c], [lo, hi], atol=1e-12).any()
        if f"{lo:.2f}" != f"{hi:.2f}":
            assert ("given by UKDB (general + per-row network), 2 feature parents (" in note) \
                == at_end
            named += at_end
        assert pred.interval_note(r) == "" or pred.interval_note(r) == note
    assert named > 0


def test_shapley_is_efficient_and_flattens_the_components_models(stack):
    x = np.array([1, 2, 0])
    sh = E.shapley_values(stack, x, codes=True)
    assert sh.exact
    assert sh.values.sum() == pytest.approx(sh.full - sh.empty, abs=1e-10)
    p = stack.predict_proba(x[None])[0, sh.target]
    assert sh.full == pytest.approx(math.log(p / (1 - p)), abs=1e-10)
    ms = E.model_set(stack, x[None], codes=True)
    assert sh.model_values.shape == (ms.n_models, 3)
    np.testing.assert_allclose(sh.model_weights, ms.model_weights[:, 0], atol=1e-12)
    for part in ms.parts:  # each model's own game = the component's per-model game
        own = E.shapley_values(part.estimator, x, target=sh.target, codes=True)
        got = sh.model_values[part.start:part.stop]
        if part.models.n_models == 1:
            np.testing.assert_allclose(got[0], own.values, atol=1e-9)
        else:
            np.testing.assert_allclose(got, own.model_values, atol=1e-9)
    assert (sh.model_sd >= 0).all()


def _joint_table(stack, x, j):
    """P(x_j = v, c | x) under the stack's averaged joint, written out from each component's
    own models: sum_k w'_k sum_m w_km P(c, x, v | m) / sum_m w_km over the components that
    define a joint (UKDB left out), normalised; (r_j, C)."""
    joint = {n: w for n, w, _ in stack.stack_components() if n != "ukdb2"}
    total = sum(joint.values())
    r = int(stack.arities_[j])
    rows = np.repeat(x[None], r, axis=0)
    rows[:, j] = np.arange(r)
    T = 0.0
    for name, w, comp in stack.stack_components():
        if name in joint:
            ms = E.model_set(comp, rows, codes=True)
            wm = np.exp(ms.log_weights - np.logaddexp.reduce(ms.log_weights))
            T = T + w / total * np.einsum("m,mvc->vc", wm, np.exp(ms.log_joints))
    return T / T.sum()


def test_next_test_uses_the_averaged_joint_of_the_components_that_define_findings(stack):
    """VOI, P(v | x), P(c | x, v) and the flip probability under one joint: the mixture of the
    components' own joints (the issue-32 defect: the stack's own posteriors made VOI < 0)."""
    H = lambda p: -sum(q * math.log(q) for q in p if q > 0)  # noqa: E731
    x = np.array([1, -1, -1])
    nt = E.next_test(stack, x, codes=True, threshold=0.6)
    assert nt.without_joint == ("ukdb2",)
    assert "is left out" in nt.note
    for j, voi, flip, pv, post in zip(nt.columns, nt.voi, nt.flip_probability,
                                      nt.value_probabilities, nt.value_posteriors):
        T = _joint_table(stack, x, int(j))
        np.testing.assert_allclose(pv, T.sum(axis=1), atol=1e-12)
        np.testing.assert_allclose(post, T / T.sum(axis=1, keepdims=True), atol=1e-12)
        pc = T.sum(axis=0)
        r = range(len(T))
        assert voi == pytest.approx(H(pc) - sum(T.sum(axis=1)[v] * H(T[v] / T[v].sum())
                                                 for v in r), abs=1e-12)
        d0 = pc[nt.target] >= 0.6
        assert flip == pytest.approx(sum(T[v].sum() for v in r
                                         if (T[v, nt.target] / T[v].sum() >= 0.6) != d0),
                                     abs=1e-12)
    np.testing.assert_allclose(nt.prediction, stack.predict_proba(x[None])[0], atol=1e-12)


def test_value_of_information_is_nonnegative_for_the_stack(stack, data):
    for x in _cases(data[2]):
        if (x >= 0).all():
            continue
        nt = E.next_test(stack, x, codes=True)
        assert (nt.voi >= 0).all() and ((nt.flip_probability >= 0)
                                        & (nt.flip_probability <= 1)).all()


def test_value_of_information_is_nonnegative_for_one_joint_component(data):
    """A stack whose weight is on one joint average predicts with it: VOI = I(C; X_j | x) >= 0
    and equals the component's own."""
    X, y, ar = data
    est = SmallStack(candidates=tuple(WEIGHTS), inner_folds=2, random_state=0).fit(
        X, y, arities=ar)
    est = _with_weights(est, X, y, {"bma10": 1.0})
    for x in _cases(ar):
        if (x >= 0).all():
            continue
        nt = E.next_test(est, x, codes=True)
        assert (nt.voi >= -1e-12).all()
        own = E.next_test(est.models_["bma10"], x, codes=True)
        np.testing.assert_allclose(nt.voi, own.voi, atol=1e-12)


def test_conflict_mixes_the_components_that_define_findings(stack, data):
    X, y, ar = data
    x = np.array([1, 2, -1])
    un = E.unusual_case(stack, x, train=(X, y), codes=True)
    assert un.without_joint == ("ukdb2",) and un.to_dict()["without_joint"] == ["ukdb2"]
    joint = [(w, c) for n, w, c in stack.stack_components() if n != "ukdb2"]
    total = sum(w for w, _ in joint)
    own = [E.unusual_case(c, x, codes=True) for _, c in joint]
    want = math.log(sum(w / total * math.exp(u.log_likelihood) for (w, _), u in zip(joint, own)))
    assert un.log_likelihood == pytest.approx(want, abs=1e-12)
    for name, lp in un.finding_log_probabilities.items():
        want = math.log(sum(w / total * math.exp(u.finding_log_probabilities[name])
                            for (w, _), u in zip(joint, own)))
        assert lp == pytest.approx(want, abs=1e-12)
    assert un.conflict == pytest.approx(
        sum(un.finding_log_probabilities.values()) - un.log_likelihood, abs=1e-12)
    assert 0.0 <= un.rarer_than <= 1.0


def test_stack_without_joint_components_refuses_findings(data):
    X, y, ar = data
    est = SmallStack(candidates=tuple(WEIGHTS), inner_folds=2, random_state=0).fit(
        X, y, arities=ar)
    est = _with_weights(est, X, y, {"ukdb2": 1.0})
    x = np.array([1, -1, 0])
    pred = E.predict_with_uncertainty(est, x, codes=True)
    np.testing.assert_allclose(pred.proba, est.predict_proba(x[None]), atol=1e-12)
    assert pred.single_structure
    with pytest.raises(ValueError, match="does not give the probability of findings"):
        E.next_test(est, x, codes=True)
    with pytest.raises(ValueError, match="does not give the probability of findings"):
        E.unusual_case(est, x, codes=True)


def test_what_if_under_the_stack(stack):
    x = np.array([1, 2, 0])
    sc, pred = E.what_if(stack, x, [{0: 0}, {1: None}], codes=True)
    rows = np.array([[1, 2, 0], [0, 2, 0], [1, -1, 0]])
    np.testing.assert_allclose(pred.proba, stack.predict_proba(rows), atol=1e-12)
    assert pred.structure_interval.shape == (3, 2, 2)


def test_component_without_a_class_is_placed_on_the_stacks_classes():
    """K-best learns from complete rows only; when every row of class 2 misses a finding it
    never sees class 2, and its models enter the stack with P(2 | x, m) = 0."""
    D, ar = kbest_data(n=90, seed=3)
    X, y = D[:, :3].copy(), D[:, 3].copy()
    y[:15] = 2
    X[:15, 0] = -1
    est = SmallStack(candidates=tuple(WEIGHTS), inner_folds=2, random_state=0).fit(
        X, y, arities=ar[:3])
    est = _with_weights(est, X, y, WEIGHTS)
    assert list(est.models_["kbest"].classes_) == [0, 1]
    cases = _cases(ar[:3])
    ms = E.model_set(est, cases, codes=True)
    np.testing.assert_allclose(ms.averaged(), est.predict_proba(cases), atol=1e-12, rtol=0)
    part = ms.parts[2]
    assert part.name == "kbest" and (part.models.posteriors()[:, :, 2] == 0).all()
    pred = E.predict_with_uncertainty(est, cases[:5], codes=True, n_draws=500, train=(X, y))
    mean, se = pred.draws.mean(), pred.draws.standard_error()
    assert (np.abs(mean - pred.proba) <= 5 * se + 1e-12).all()
