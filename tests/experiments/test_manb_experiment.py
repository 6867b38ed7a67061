"""Smoke-size run of experiments/manb_roc.py and the naive-Bayes figures."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import pytest
from scipy import stats

from bnma_core.classifiers.manb import MANaiveBayes
from bnma_core.viz import (
    arc_posterior_figure,
    parameter_comparison_figure,
    roc_curves_figure,
    roc_gain_figure,
)
from experiments import manb_roc


def test_roc_gains_definitions():
    assert manb_roc.roc_gains(0.8, 0.9) == pytest.approx((0.125, 0.5))
    assert manb_roc.roc_gains(0.9, 0.8) == pytest.approx((-0.1 / 0.9, -1.0))
    assert manb_roc.roc_gains(1.0, 1.0) == (0.0, 0.0)  # the paper's convention for R = T


def test_summary_uses_student_t_99_percent_interval():
    trials = pd.DataFrame(dict(test="x", series="", param="n", value=1, R=0.7, R_hat=0.7,
                               redraws=0, Delta=[0.01, 0.03, -0.02, 0.05],
                               delta=[0.1, 0.0, 0.2, 0.1]))
    s = manb_roc.summarize(trials).iloc[0]
    v = trials["Delta"].to_numpy()
    assert s["Delta_mean"] == pytest.approx(v.mean())
    assert s["Delta_ci99"] == pytest.approx(stats.t.ppf(0.995, 3) * v.std(ddof=1) / 2)


def test_smoke_run_writes_csv_and_figures(tmp_path):
    trials, summary = manb_roc.run(["nodes", "worst"], trials=2, out_dir=tmp_path, smoke=True,
                                   verbose=False)
    assert len(trials) == 2 * 2 * 2 and set(summary["test"]) == {"nodes", "worst"}
    assert trials[["R", "R_hat"]].apply(lambda c: c.between(0, 1)).all().all()
    for name in ("trials.csv", "summary.csv", "nodes.html", "worst.json"):
        assert (tmp_path / name).exists()
    assert json.loads((tmp_path / "nodes.json").read_text())["data"]
    # same seed, same numbers
    again, _ = manb_roc.run(["nodes"], trials=2, smoke=True, verbose=False)
    assert np.array_equal(again["R_hat"].to_numpy(),
                          trials[trials["test"] == "nodes"]["R_hat"].to_numpy())
    assert "Delta%" in manb_roc.format_summary(summary)


def test_run_rejects_unknown_tests_and_single_trial():
    with pytest.raises(ValueError, match="Unknown test"):
        manb_roc.run(["nodez"], trials=2)
    with pytest.raises(ValueError, match="at least 2"):
        manb_roc.run(["nodes"], trials=1)


def test_figures():
    rng = np.random.default_rng(0)
    X = rng.integers(0, 3, (80, 4))
    y = (X[:, 0] > 0).astype(int)
    m = MANaiveBayes().fit(X, y)
    fig = arc_posterior_figure(list("abcd"), m.arc_posterior_)
    assert isinstance(fig, go.Figure) and fig.data[0].y[-1] == "a"  # most probable on top
    fig = parameter_comparison_figure(m.theta_map_[0], m.theta_star_[0], "a",
                                      theta_empty=m.theta_empty_[0],
                                      arc_posterior=m.arc_posterior_[0])
    assert len(fig.data) == 6
    fig = roc_curves_figure(y, {"MA": m.predict_proba(X)[:, 1]})
    assert any("AUC 1.000" in t.name for t in fig.data)  # the one ROC drawing
    summary = pd.DataFrame(dict(n=[5, 10], Delta_mean=[0.01, 0.02], Delta_ci99=[0.01, 0.01],
                                Delta_sd=[0.05, 0.05], delta_mean=[0.02, 0.04],
                                delta_ci99=[0.01, 0.01], delta_sd=[0.1, 0.1]))
    assert len(roc_gain_figure(summary, "n", log_x=True).data) == 4
    with pytest.raises(ValueError, match="one name"):
        arc_posterior_figure(["a"], [0.1, 0.2])
    with pytest.raises(ValueError, match="both classes"):
        roc_curves_figure([1, 1], {"x": [0.2, 0.3]})


def test_smoke_run_on_alarm_redraws_samples_without_both_classes():
    trials, summary = manb_roc.run(["alarm"], trials=2, smoke=True, verbose=False)
    assert set(trials["series"]) == {"ANAPHYLAXIS", "HYPOVOLEMIA"}
    assert len(summary) == 4 and trials[["R", "R_hat"]].notna().all().all()
    # anaphylaxis is rare (P = 0.01): with 25 training rows most draws lack a positive case
    assert trials.loc[trials["series"] == "ANAPHYLAXIS", "redraws"].sum() > 0
