"""bnma_core.metrics: DeLong's AUC variance (fast algorithm against the direct double sum and
scikit-learn), the macro one-vs-rest AUC's variance, seeded bootstrap intervals that cover,
and identities of the scores."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.metrics import roc_auc_score

from bnma_core.evaluation import classification_metrics
from bnma_core.metrics import (
    auc_per_class,
    bootstrap_mean_interval,
    check_predictions,
    delong_auc,
    macro_auc,
    metric_intervals,
    row_scores,
)


def _slow_delong(positive: np.ndarray, scores: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """DeLong et al. (1988) written out: placement values by all m·n comparisons."""
    pos, neg = scores[positive], scores[~positive]
    m, n = len(pos), len(neg)
    M = scores.shape[1]
    v10 = np.zeros((m, M))
    v01 = np.zeros((n, M))
    for r in range(M):
        for i in range(m):
            for j in range(n):
                psi = 1.0 if pos[i, r] > neg[j, r] else 0.5 if pos[i, r] == neg[j, r] else 0.0
                v10[i, r] += psi / n
                v01[j, r] += psi / m
    auc = v10.mean(axis=0)
    s10 = (v10 - auc).T @ (v10 - auc) / (m - 1)
    s01 = (v01 - auc).T @ (v01 - auc) / (n - 1)
    return auc, s10 / m + s01 / n


def _probs(rng: np.random.Generator, n: int, k: int, sharp: float = 1.0
           ) -> tuple[np.ndarray, np.ndarray]:
    """Rows of probabilities and classes drawn from them (a calibrated model)."""
    P = rng.dirichlet(np.full(k, sharp), size=n)
    y = (rng.random(n)[:, None] > np.cumsum(P, axis=1)).sum(axis=1)
    return np.minimum(y, k - 1), P


def test_fast_delong_equals_slow_placement_value_variance():
    rng = np.random.default_rng(3)
    positive = rng.random(60) < 0.4
    # two correlated score columns with ties (rounded), the case midranks must get right
    s1 = np.round(positive * 0.8 + rng.normal(size=60), 1)
    s2 = np.round(s1 + rng.normal(scale=0.7, size=60), 1)
    scores = np.column_stack([s1, s2])
    auc, cov = delong_auc(positive, scores)
    auc_slow, cov_slow = _slow_delong(positive, scores)
    np.testing.assert_allclose(auc, auc_slow, atol=1e-12)
    np.testing.assert_allclose(cov, cov_slow, atol=1e-12)
    assert cov[0, 1] > 0  # correlated scores: positive covariance


def test_delong_auc_equals_sklearn_roc_auc_score():
    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, 300)
    s = np.round(y + rng.normal(size=300), 2)
    auc, _ = delong_auc(y, s)
    assert auc[0] == pytest.approx(roc_auc_score(y, s), abs=1e-12)


def test_delong_refuses_one_outcome():
    with pytest.raises(ValueError, match="both positive and negative"):
        delong_auc(np.ones(5), np.arange(5.0))


def test_macro_auc_equals_sklearn_ovr_macro_and_evaluation():
    rng = np.random.default_rng(1)
    y, P = _probs(rng, 400, 4)
    auc, se = macro_auc(y, P)
    assert auc == pytest.approx(roc_auc_score(y, P, multi_class="ovr", average="macro"),
                                abs=1e-12)
    assert auc == pytest.approx(classification_metrics(y, P)["auc"], abs=1e-12)
    assert 0 < se < 0.05


def test_macro_auc_variance_reduces_to_delong_for_two_present_classes():
    """Three columns, third class absent with probability 0: the macro OvR AUC is the binary
    AUC and its generalised variance DeLong's."""
    rng = np.random.default_rng(2)
    y2, P2 = _probs(rng, 200, 2)
    P3 = np.column_stack([P2, np.zeros(200)])
    auc3, se3 = macro_auc(y2, P3)
    auc2, cov2 = delong_auc(y2 == 1, P2[:, 1])
    assert auc3 == pytest.approx(auc2[0], abs=1e-12)
    assert se3 == pytest.approx(np.sqrt(cov2[0, 0]), rel=1e-10)


def test_macro_auc_standard_error_matches_the_bootstrap():
    rng = np.random.default_rng(4)
    y, P = _probs(rng, 600, 3, sharp=0.7)
    _, se = macro_auc(y, P)
    boot = []
    for _ in range(400):
        i = rng.integers(0, len(y), len(y))
        boot.append(macro_auc(y[i], P[i])[0])
    assert se == pytest.approx(np.std(boot, ddof=1), rel=0.15)


def test_bootstrap_and_delong_intervals_cover_the_population_value():
    """Rows drawn from a calibrated model; the population value of each metric from one
    large sample. 95 % intervals cover it in about 95 % of 150 replicate samples."""
    rng = np.random.default_rng(5)
    y_big, P_big = _probs(rng, 400_000, 3, sharp=0.8)
    truth = {k: float(v.mean()) for k, v in row_scores(y_big, P_big).items()}
    truth["auc"] = macro_auc(y_big[:60_000], P_big[:60_000])[0]
    hits = {k: 0 for k in truth}
    reps = 150
    for r in range(reps):
        y, P = _probs(rng, 250, 3, sharp=0.8)
        tab = metric_intervals(y, P, n_bootstrap=400, seed=r).set_index("metric")
        for k in hits:
            hits[k] += tab.loc[k, "lower"] <= truth[k] <= tab.loc[k, "upper"]
    cover = {k: h / reps for k, h in hits.items()}
    assert all(0.88 <= c <= 0.995 for c in cover.values()), cover


def test_metric_intervals_are_seeded_and_per_fold():
    rng = np.random.default_rng(6)
    y, P = _probs(rng, 300, 2)
    folds = np.arange(300) % 5
    a = metric_intervals(y, P, folds=folds, seed=11, n_bootstrap=300)
    b = metric_intervals(y, P, folds=folds, seed=11, n_bootstrap=300)
    c = metric_intervals(y, P, folds=folds, seed=12, n_bootstrap=300)
    pd.testing.assert_frame_equal(a, b)
    boot = a["interval"] == "bootstrap"
    assert not np.allclose(a.loc[boot, "lower"], c.loc[boot, "lower"])
    assert len(a) == 4 * (1 + 5) and set(a["scope"]) == {"pooled", "fold"}
    for f in range(5):
        sel = folds == f
        want = classification_metrics(y[sel], P[sel])
        got = a[a["fold"] == f].set_index("metric")["estimate"]
        for k, v in want.items():
            assert got[k] == pytest.approx(v, abs=1e-12)
    assert (a["lower"] <= a["estimate"] + 1e-12).all()
    assert (a["estimate"] <= a["upper"] + 1e-12).all()
    assert (a.loc[a["metric"] == "log_loss", "lower"] >= 0).all()


def test_metric_intervals_for_several_methods_export_as_csv(tmp_path):
    rng = np.random.default_rng(7)
    y, P = _probs(rng, 100, 3)
    tab = metric_intervals(y, {"a": P, "b": np.full_like(P, 1 / 3)}, n_bootstrap=100,
                           classes=["x", "y", "z"])
    assert list(tab.columns[:3]) == ["method", "scope", "fold"]
    uniform = tab[(tab["method"] == "b")].set_index("metric")
    assert uniform.loc["log_loss", "estimate"] == pytest.approx(np.log(3))
    assert uniform.loc["auc", "estimate"] == pytest.approx(0.5)
    path = tmp_path / "metrics.csv"
    tab.to_csv(path, index=False)
    assert len(pd.read_csv(path)) == len(tab)


def test_auc_per_class_gives_delong_intervals():
    rng = np.random.default_rng(8)
    y, P = _probs(rng, 300, 3)
    tab = auc_per_class(y, P, ["a", "b", "c"])
    assert list(tab["class"]) == ["a", "b", "c"]
    for c in range(3):
        assert tab.loc[c, "auc"] == pytest.approx(roc_auc_score(y == c, P[:, c]))
    assert (tab["lower"] < tab["auc"]).all() and (tab["auc"] < tab["upper"]).all()


@pytest.mark.parametrize("y, P, match", [
    ([0, 1], [[0.5, 0.6], [0.5, 0.5]], "sums to"),
    ([0, 2], [[0.5, 0.5], [0.5, 0.5]], "codes must be"),
    ([0], [[0.5, 0.5], [0.5, 0.5]], "one class code per row"),
    ([0, 1], [0.5, 0.5], "at least two class columns"),
    ([0, 1], [[np.nan, 1.0], [0.5, 0.5]], "did not finish"),
    ([0, 1], [[np.inf, 1.0], [0.5, 0.5]], "finite numbers"),
    (["a", "b"], [[0.5, 0.5], [0.5, 0.5]], "integer codes"),
])
def test_bad_predictions_get_one_sentence(y, P, match):
    with pytest.raises(ValueError, match=match):
        check_predictions(y, P)


def test_bootstrap_of_too_few_rows_is_nan():
    assert np.isnan(bootstrap_mean_interval(np.array([1.0]))).all()


@st.composite
def _predictions(draw):
    k = draw(st.integers(2, 5))
    n = draw(st.integers(2, 40))
    seed = draw(st.integers(0, 2**31 - 1))
    rng = np.random.default_rng(seed)
    P = rng.dirichlet(np.ones(k), size=n)
    y = rng.integers(0, k, n)
    return y, P, rng.permutation(k)


@settings(max_examples=40, deadline=None)
@given(_predictions())
def test_scores_are_invariant_to_relabelling_the_classes(case):
    y, P, perm = case
    # class code c becomes perm[c]: column perm[c] of the new matrix is column c of the old
    Q = np.empty_like(P)
    Q[:, perm] = P
    a, b = row_scores(y, P), row_scores(perm[y], Q)
    np.testing.assert_allclose(a["log_loss"], b["log_loss"], atol=1e-12)
    np.testing.assert_allclose(a["brier"], b["brier"], atol=1e-12)
    if len(np.unique(y)) > 1 and P.shape[1] > 2:
        assert macro_auc(y, P)[0] == pytest.approx(macro_auc(perm[y], Q)[0], abs=1e-12)


@settings(max_examples=40, deadline=None)
@given(_predictions())
def test_a_perfect_forecast_scores_brier_0_log_loss_0_accuracy_1(case):
    y, P, _ = case
    perfect = np.eye(P.shape[1])[y]
    s = row_scores(y, perfect)
    assert s["brier"].max() == 0.0 and s["log_loss"].max() == 0.0 and s["accuracy"].min() == 1
    # and any forecast scores Brier in [0, 2]
    assert 0.0 <= row_scores(y, P)["brier"].min() and row_scores(y, P)["brier"].max() <= 2.0


def test_metric_modules_import_no_heavy_module():
    """metrics, calibration and comparison load scipy / scikit-learn when a function needs
    them: importing them costs numpy and pandas only."""
    import json
    import subprocess
    import sys

    code = ("import sys, json; import bnma_core.metrics, bnma_core.calibration, "
            "bnma_core.comparison; print(json.dumps(sorted({m.split('.')[0] "
            "for m in sys.modules})))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr
    heavy = {"scipy", "sklearn", "numba", "plotly", "statsmodels", "matplotlib", "dcurves",
             "autorank", "baycomp", "streamlit"}
    assert not set(json.loads(out.stdout.splitlines()[-1])) & heavy


def test_boolean_outcomes_are_class_codes():
    y, P = check_predictions(np.array([True, False]), [[0.2, 0.8], [0.6, 0.4]])
    assert y.tolist() == [1, 0]


# ---- issue 32 item 5: no interval of zero width from a finite sample -------------------------


def test_all_right_on_139_rows_is_not_proved_to_be_perfect():
    """The Compare page showed "accuracy 1 [1, 1]" and "AUC 1 [1, 1]" for a fold of 139 rows:
    Wilson's interval of 139/139 is about [0.973, 1] and Newcombe's of an AUC of 1 from 50
    and 89 rows about [0.969, 1]."""
    y = np.r_[np.zeros(89, int), np.ones(50, int)]
    p = np.r_[np.full(89, 0.1), np.full(50, 0.9)]
    tab = metric_intervals(y, np.c_[1 - p, p]).set_index("metric")
    assert tab.loc["accuracy", "lower"] == pytest.approx(0.9731, abs=1e-4)
    assert tab.loc["accuracy", "interval"] == "Wilson"
    assert tab.loc["auc", "lower"] == pytest.approx(0.9692, abs=1e-4)
    assert tab.loc["auc", "interval"] == "Newcombe"
    assert tab.loc["accuracy", "upper"] == tab.loc["auc", "upper"] == 1.0


def test_newcombe_interval_against_a_hand_computation():
    """At each limit θ the squared distance from the estimate is z² times Newcombe's
    variance θ(1 − θ)/(mn) [2N* − 1 − (3N* − 3)/((2 − θ)(1 + θ))], N* = (m + n)/2."""
    from bnma_core.metrics import newcombe_auc_interval

    z, m, n = 1.959963984540054, 12, 20
    for auc in (0.0, 0.3, 0.8, 1.0):
        lo, hi = newcombe_auc_interval(auc, m, n)
        for theta in (lo, hi):
            if theta in (0.0, 1.0) and theta in (auc, 1.0 - auc + auc):
                continue  # the limit at the estimate's own end
            half = (m + n) / 2
            var = theta * (1 - theta) / (m * n) * (2 * half - 1 - (3 * half - 3)
                                                   / ((2 - theta) * (1 + theta)))
            assert (auc - theta) ** 2 == pytest.approx(z * z * var, abs=1e-9)
        assert lo < auc or auc == 0.0
        assert hi > auc or auc == 1.0


@st.composite
def _finite_samples(draw):
    """Small samples of every shape the Compare page meets: 1-60 rows, 2-4 classes,
    probabilities random, one-hot (right or wrong), constant or tied."""
    n = draw(st.integers(1, 60))
    k = draw(st.integers(2, 4))
    seed = draw(st.integers(0, 10_000))
    kind = draw(st.sampled_from(["random", "perfect", "wrong", "constant", "ties"]))
    rng = np.random.default_rng(seed)
    y = rng.integers(0, k, n)
    if kind == "random":
        P = rng.dirichlet(np.ones(k), n)
    elif kind == "perfect":
        P = np.eye(k)[y] * 0.9 + 0.1 / k
    elif kind == "wrong":
        P = np.eye(k)[(y + 1) % k] * 0.9 + 0.1 / k
    elif kind == "constant":
        P = np.full((n, k), 1.0 / k)
    else:
        P = np.eye(k)[rng.integers(0, k, n)] * 0.5 + 0.5 / k
    P = P / P.sum(axis=1, keepdims=True)
    folds = rng.integers(0, draw(st.integers(1, 3)), n)
    return y, P, folds


@settings(max_examples=120, deadline=None)
@given(_finite_samples())
def test_every_interval_of_a_proportion_has_positive_width_and_holds_its_estimate(sample):
    """Property (issue 32 item 5): every accuracy and AUC interval from a finite sample,
    pooled and per fold, lies in [0, 1], contains its estimate and has positive width."""
    y, P, folds = sample
    tab = metric_intervals(y, P, folds=folds, n_bootstrap=50)
    for r in tab[tab["metric"].isin(["accuracy", "auc"])].itertuples():
        if r.metric == "auc" and np.isnan(r.estimate):
            continue  # one class only: no AUC to bound
        assert 0.0 <= r.lower < r.upper <= 1.0, r
        assert r.lower <= r.estimate <= r.upper, r
    per_class = auc_per_class(y, P).dropna()
    assert ((per_class["lower"] < per_class["upper"])
            & (per_class["lower"] <= per_class["auc"])
            & (per_class["auc"] <= per_class["upper"])).all()
