"""bnma_core.calibration: logistic recalibration (slope 1 on data drawn from the model, below 1
for an over-confident one), the CORP curve (monotone, scikit-learn's isotonic fit, bands under
the calibration hypothesis, the score decomposition) and decision curves (dcurves' numbers)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.special import expit, logit
from sklearn.isotonic import IsotonicRegression

from bnma_core.calibration import (
    calibration_intercept_slope,
    calibration_target,
    corp_decomposition,
    corp_reliability,
    decision_curve,
    net_benefit,
)


def _model_data(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Forecasts p and outcomes drawn from them, y ~ Bernoulli(p): calibrated by construction."""
    rng = np.random.default_rng(seed)
    p = expit(rng.normal(0, 1.5, n))
    return p, (rng.random(n) < p).astype(int)


def _by_parameter(tab: pd.DataFrame) -> pd.DataFrame:
    return tab.set_index("parameter")


def test_calibration_slope_is_1_and_intercept_0_on_data_from_the_model():
    p, y = _model_data(20_000, 0)
    tab = _by_parameter(calibration_intercept_slope(p, y))
    assert tab.loc["slope", "estimate"] == pytest.approx(1.0, abs=0.06)
    assert tab.loc["slope", "lower"] < 1 < tab.loc["slope", "upper"]
    assert tab.loc["intercept", "estimate"] == pytest.approx(0.0, abs=0.05)
    assert tab.loc["intercept", "lower"] < 0 < tab.loc["intercept", "upper"]
    assert tab["converged"].all()


def test_calibration_slope_is_below_1_for_an_over_confident_model():
    p, y = _model_data(20_000, 1)
    sharpened = expit(2.0 * logit(p))  # the same ranking, pushed towards 0 and 1
    tab = _by_parameter(calibration_intercept_slope(sharpened, y))
    assert tab.loc["slope", "estimate"] == pytest.approx(0.5, abs=0.04)
    assert tab.loc["slope", "upper"] < 1
    softened = expit(0.5 * logit(p))
    assert _by_parameter(calibration_intercept_slope(softened, y)).loc[
        "slope", "lower"] > 1


def test_calibration_intercept_is_negative_when_forecasts_are_too_high():
    p, y = _model_data(20_000, 2)
    tab = _by_parameter(calibration_intercept_slope(expit(logit(p) + 1.0), y))
    assert tab.loc["intercept", "estimate"] == pytest.approx(-1.0, abs=0.06)
    assert tab.loc["slope", "estimate"] == pytest.approx(1.0, abs=0.06)


def test_logistic_recalibration_equals_statsmodels_glm():
    import statsmodels.api as sm
    p, y = _model_data(500, 3)
    L = logit(p)
    slope_fit = sm.GLM(y, sm.add_constant(L), family=sm.families.Binomial()).fit()
    int_fit = sm.GLM(y, np.ones((len(y), 1)), family=sm.families.Binomial(), offset=L).fit()
    tab = _by_parameter(calibration_intercept_slope(p, y))
    assert tab.loc["slope", "estimate"] == pytest.approx(slope_fit.params[1], abs=1e-8)
    assert tab.loc["slope", "se"] == pytest.approx(slope_fit.bse[1], rel=1e-6)
    assert tab.loc["intercept", "estimate"] == pytest.approx(int_fit.params[0], abs=1e-8)
    assert tab.loc["intercept", "se"] == pytest.approx(int_fit.bse[0], rel=1e-6)


def test_separating_forecasts_do_not_converge_and_say_so():
    p = np.array([0.1, 0.2, 0.3, 0.7, 0.8, 0.9])
    y = np.array([0, 0, 0, 1, 1, 1])
    tab = _by_parameter(calibration_intercept_slope(p, y))
    assert not tab.loc["slope", "converged"] and np.isnan(tab.loc["slope", "estimate"])


def test_one_outcome_only_is_refused_in_one_sentence():
    with pytest.raises(ValueError, match="need both outcomes"):
        calibration_intercept_slope([0.2, 0.4], [1, 1])


def test_corp_curve_is_monotone_and_equals_sklearn_isotonic_regression():
    rng = np.random.default_rng(4)
    p = np.round(rng.random(800), 2)  # many ties, as from a discrete classifier
    y = (rng.random(800) < p ** 1.5).astype(int)
    curve = corp_reliability(p, y, band_level=None)
    assert np.all(np.diff(curve["forecast"]) > 0)
    assert np.all(np.diff(curve["calibrated"]) >= -1e-12)
    iso = IsotonicRegression(y_min=0, y_max=1).fit(p, y)
    np.testing.assert_allclose(curve["calibrated"], iso.predict(curve["forecast"]), atol=1e-12)
    assert curve["n"].sum() == 800


def test_corp_bands_hold_calibrated_forecasts_and_not_over_confident_ones():
    p, y = _model_data(3000, 5)
    calibrated = corp_reliability(p, y, n_resamples=300, seed=1)
    inside = ((calibrated["band_lower"] <= calibrated["calibrated"])
              & (calibrated["calibrated"] <= calibrated["band_upper"]))
    assert inside.mean() > 0.8
    # the band surrounds the diagonal: it is built under the calibration hypothesis
    assert ((calibrated["band_lower"] <= calibrated["forecast"] + 1e-9)
            & (calibrated["forecast"] <= calibrated["band_upper"] + 1e-9)).mean() > 0.95
    sharp = corp_reliability(expit(3 * logit(p)), y, n_resamples=300, seed=1)
    inside = (sharp["band_lower"] <= sharp["calibrated"]) & (sharp["calibrated"]
                                                             <= sharp["band_upper"])
    assert inside.mean() < 0.5
    again = corp_reliability(p, y, n_resamples=300, seed=1)
    pd.testing.assert_frame_equal(calibrated, again)


@st.composite
def _binary(draw):
    n = draw(st.integers(2, 60))
    rng = np.random.default_rng(draw(st.integers(0, 2**31 - 1)))
    p = np.round(rng.random(n), draw(st.integers(1, 3)))
    return p, rng.integers(0, 2, n)


@settings(max_examples=50, deadline=None)
@given(_binary())
def test_corp_decomposition_adds_up_with_nonnegative_parts(case):
    p, y = case
    d = corp_decomposition(p, y).iloc[0]
    assert d["mean_score"] == pytest.approx(
        d["miscalibration"] - d["discrimination"] + d["uncertainty"], abs=1e-12)
    assert d["miscalibration"] >= -1e-12 and d["discrimination"] >= -1e-12


def test_net_benefit_equals_dcurves():
    import dcurves
    p, y = _model_data(500, 6)
    p = np.round(p, 2)  # forecasts equal to a threshold count as treated (p >= t)
    t = np.round(np.arange(0.0, 1.0, 0.01), 2)
    ref = dcurves.dca(data=pd.DataFrame({"y": y, "p": p}), outcome="y", modelnames=["p"],
                      thresholds=t)
    ours = decision_curve(y, np.column_stack([1 - p, p]), thresholds=t)
    names = {"p": "model", "all": "treat all", "none": "treat none"}
    for theirs, mine in names.items():
        a = ref[ref["model"] == theirs].reset_index(drop=True)
        b = ours[ours["model"] == mine].reset_index(drop=True)
        for col in ("tp_rate", "fp_rate", "net_benefit", "test_pos_rate"):
            np.testing.assert_allclose(b[col].to_numpy(float), a[col].to_numpy(float),
                                       atol=1e-12, err_msg=f"{mine} {col}")


def test_decision_curve_treat_all_and_none():
    p, y = _model_data(300, 7)
    tab = decision_curve(y, {"m": np.column_stack([1 - p, p])}, thresholds=[0.1, 0.5])
    assert set(tab["model"]) == {"m", "treat all", "treat none"}
    prev = y.mean()
    all_ = tab[tab["model"] == "treat all"]
    np.testing.assert_allclose(all_["net_benefit"],
                               prev - (1 - prev) * np.array([0.1, 0.5]) / (1 - np.array([0.1,
                                                                                        0.5])))
    assert (tab.loc[tab["model"] == "treat none", "net_benefit"] == 0).all()


def test_decision_curve_positive_class_by_label_flips_the_event():
    p, y = _model_data(300, 8)
    P = np.column_stack([1 - p, p])
    a = net_benefit(p, y, [0.3])
    b = decision_curve(1 - y, P[:, ::-1], positive="yes", classes=["yes", "no"],
                       thresholds=[0.3])
    assert b.loc[b["model"] == "model", "net_benefit"].item() == pytest.approx(
        a["net_benefit"].item())


def test_decision_curve_refuses_more_than_two_classes_and_bad_thresholds():
    P = np.full((4, 3), 1 / 3)
    with pytest.raises(ValueError, match="need two classes"):
        decision_curve([0, 1, 2, 0], P)
    with pytest.raises(ValueError, match=r"lie in \[0, 1\)"):
        net_benefit([0.2, 0.8], [0, 1], thresholds=[0.5, 1.0])


def test_calibration_target_top_label_and_one_vs_rest():
    y = np.array([0, 1, 2, 2])
    P = np.array([[.7, .2, .1], [.5, .3, .2], [.1, .1, .8], [.2, .6, .2]])
    f, o, what = calibration_target(y, P)
    assert what == "top-label"
    np.testing.assert_allclose(f, [.7, .5, .8, .6])
    np.testing.assert_array_equal(o, [1, 0, 1, 0])
    f, o, what = calibration_target(y, P, positive="c", classes=["a", "b", "c"])
    assert what == "P(c)"
    np.testing.assert_allclose(f, P[:, 2])
    np.testing.assert_array_equal(o, [0, 0, 1, 1])
    with pytest.raises(ValueError, match="not one of the classes"):
        calibration_target(y, P, positive="d", classes=["a", "b", "c"])


def test_reliability_and_decision_figures_draw_the_tables():
    from bnma_core.viz import decision_curve_figure, reliability_figure

    p, y = _model_data(400, 9)
    curve = corp_reliability(p, y, n_resamples=50)
    fig = reliability_figure({"m": curve}, {"m": corp_decomposition(p, y)},
                             forecast_label="P(yes)")
    names = [t.name for t in fig.data]
    assert names[0] == "calibrated (diagonal)" and "m: consistency band" in names
    line = next(t for t in fig.data if t.name.startswith("m (MCB"))
    np.testing.assert_allclose(line.y, curve["calibrated"])
    band = next(t for t in fig.data if t.name == "m: consistency band")
    assert len(band.x) == 2 * len(curve)
    assert fig.layout.xaxis.title.text == "P(yes)"
    tab = decision_curve(y, {"m": np.column_stack([1 - p, p])})
    fig = decision_curve_figure(tab, positive="yes")
    assert [t.name for t in fig.data] == ["m", "treat all", "treat none"]
    assert fig.layout.yaxis.range[1] == pytest.approx(1.1 * y.mean())


def test_calibration_summary_pooled_and_per_fold_for_several_methods(tmp_path):
    from bnma_core.calibration import calibration_summary

    p, y = _model_data(2000, 10)
    folds = np.arange(2000) % 4
    P = np.column_stack([1 - p, p])
    sharp = expit(2 * logit(p))
    tab = calibration_summary(y, {"ok": P, "sharp": np.column_stack([1 - sharp, sharp])},
                              folds=folds, classes=["no", "yes"], positive="yes")
    assert list(tab.columns[:4]) == ["method", "scope", "fold", "target"]
    assert len(tab) == 2 * (1 + 4) * 2 and set(tab["target"]) == {"P(yes)"}
    pooled = tab[tab["scope"] == "pooled"].set_index(["method", "parameter"])
    want = _by_parameter(calibration_intercept_slope(p, y))
    assert pooled.loc[("ok", "slope"), "estimate"] == pytest.approx(want.loc["slope",
                                                                             "estimate"])
    assert pooled.loc[("sharp", "slope"), "upper"] < 1
    assert pooled.loc[("sharp", "intercept"), "miscalibration"] > pooled.loc[
        ("ok", "intercept"), "miscalibration"]
    fold1 = tab[(tab["scope"] == "fold") & (tab["fold"] == 1) & (tab["method"] == "ok")]
    want = _by_parameter(calibration_intercept_slope(p[folds == 1], y[folds == 1]))
    np.testing.assert_allclose(fold1.set_index("parameter")["estimate"],
                               want["estimate"][["intercept", "slope"]])
    tab.to_csv(tmp_path / "calibration.csv", index=False)
    # a fold with one outcome only: NaN, not an error
    one = calibration_summary(np.r_[y[:10] * 0, y], np.vstack([P[:10], P]),
                              folds=np.r_[np.full(10, 9), folds])
    assert not one[one["fold"] == 9]["converged"].any()
