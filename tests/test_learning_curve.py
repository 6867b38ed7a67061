"""Learning curves of the single best network, order-MCMC averaging and the true network
(:mod:`bnma_core.learning_curve`) and their figure."""

from __future__ import annotations

import time

import numpy as np
import pandas as pd
import pytest

from bnma_core.learning_curve import (
    MODELS,
    learning_curve,
    run_learning_curve,
    summarize_learning_curve,
)
from bnma_core.viz import learning_curve_figure

FAST = {"n_iter": 400, "burn_in": 100}


def _run(**kw):
    args = dict(sizes=(30, 60), repetitions=2, n_test=400, method_params=FAST, seed=3)
    args.update(kw)
    return run_learning_curve("asia", "dysp", **args)


def test_one_table_per_size_with_every_model():
    parts = list(learning_curve("asia", "dysp", sizes=(60, 30), repetitions=2, n_test=300,
                                method_params=FAST, seed=0))
    assert [p["size"].unique().tolist() for p in parts] == [[30], [60]]  # smallest first
    for p in parts:
        assert sorted(p["model"].unique()) == sorted(MODELS)
        assert len(p) == 2 * len(MODELS)
        assert (p["log_loss"] >= 0).all() and p["accuracy"].between(0, 1).all()


def test_reproducible_with_a_seed():
    cols = ["size", "repetition", "model", "log_loss", "accuracy"]
    a, b = _run()[cols], _run()[cols]
    pd.testing.assert_frame_equal(a, b)
    c = _run(seed=4)[cols]
    assert not np.allclose(a["log_loss"], c["log_loss"])


def test_true_network_has_the_lowest_log_loss_in_expectation():
    """The generating network is the Bayes-optimal predictor: on a large held-out sample
    (20,000 rows, seeded) its mean log-loss is below that of both learners at every size,
    averaged over 3 training samples. The gap is at least 0.002 nats here; the standard
    error of a 20,000-row mean difference is about 0.001, so the test has margin."""
    res = run_learning_curve("asia", "dysp", sizes=(40, 400), repetitions=3, n_test=20_000,
                             method_params={"n_iter": 2000, "burn_in": 500}, seed=11)
    mean = res.groupby(["size", "model"])["log_loss"].mean().unstack()
    for size, row in mean.iterrows():
        assert row["true"] < row["single"] - 0.002, (size, row.to_dict())
        assert row["true"] < row["bma"] - 0.002, (size, row.to_dict())
    # and the learners approach it as the training size grows
    assert mean.loc[400, "bma"] < mean.loc[40, "bma"]


def test_should_stop_after_the_first_size_stops_the_generator():
    seen = []
    gen = learning_curve("asia", "dysp", sizes=(30, 60, 120), repetitions=1, n_test=200,
                         method_params=FAST, seed=0, should_stop=lambda: len(seen) >= 1)
    for part in gen:
        seen.append(part)
    assert len(seen) == 1 and seen[0]["size"].unique().tolist() == [30]


def test_stop_inside_a_long_fit_within_a_second():
    """should_stop is checked inside the MCMC (every ~0.1 s): a fit of 5 million iterations
    ends within a second of Stop, without yielding the unfinished size."""
    flip = [None]

    def stop() -> bool:
        if flip[0] is None:
            flip[0] = time.perf_counter() + 1.0
        return time.perf_counter() >= flip[0]

    parts = list(learning_curve("asia", "dysp", sizes=(200,), repetitions=1, n_test=200,
                                method_params={"n_iter": 5_000_000, "burn_in": 1000},
                                seed=0, should_stop=stop))
    assert parts == []
    assert time.perf_counter() - flip[0] < 1.0


@pytest.mark.parametrize("kw,match", [
    (dict(class_variable="nope"), "not a variable"),
    (dict(method="nb"), "order-MCMC method"),
    (dict(sizes=(1,)), "at least one training size"),
    (dict(repetitions=0), "repetitions"),
])
def test_bad_arguments_get_one_clear_sentence(kw, match):
    args = dict(class_variable="dysp", sizes=(30,), repetitions=1, n_test=100)
    args.update(kw)
    with pytest.raises(ValueError, match=match):
        next(learning_curve("asia", **args))


def test_summary_intervals_and_paired_difference():
    res = pd.DataFrame({"size": [10] * 6, "repetition": [0, 0, 1, 1, 2, 2],
                        "model": ["single", "bma"] * 3,
                        "log_loss": [0.5, 0.4, 0.6, 0.4, 0.7, 0.4],
                        "accuracy": [0.8] * 6})
    s = summarize_learning_curve(res).set_index("model")
    assert s.loc["single", "mean"] == pytest.approx(0.6)
    assert s.loc["single", "low"] < 0.6 < s.loc["single", "high"]
    assert s.loc["single - bma", "mean"] == pytest.approx(0.2)
    assert s.loc["bma", "low"] == pytest.approx(0.4)  # no spread, no width


def test_figure_has_a_curve_and_a_band_per_learner():
    res = _run()
    fig = learning_curve_figure(res, sizes=[30, 60, 120])
    names = [t.name for t in fig.data]
    assert {"single best network", "order-MCMC averaging (BMA)", "true network"} <= set(names)
    assert "single interval" in names and "bma interval" in names
    assert fig.layout.xaxis.type == "log" and list(fig.layout.xaxis.tickvals) == [30, 60, 120]
    acc = learning_curve_figure(res, metric="accuracy")
    assert "accuracy" in acc.layout.yaxis.title.text
    empty = learning_curve_figure(res.iloc[:0], sizes=[25, 50])
    assert len(empty.data) == 0
    ex = learning_curve_figure(res, excess=True)
    true = [t for t in ex.data if t.name == "true network"][0]
    assert np.allclose(true.y, 0.0) and "excess" in ex.layout.yaxis.title.text
    single = [t for t in ex.data if t.name == "single best network"][0]
    plain = [t for t in fig.data if t.name == "single best network"][0]
    truth = [t for t in fig.data if t.name == "true network"][0]
    assert np.allclose(single.y, np.asarray(plain.y) - np.asarray(truth.y))


def test_experiment_script_smoke(tmp_path):
    import importlib.util

    from conftest import ROOT

    spec = importlib.util.spec_from_file_location(
        "learning_curve_experiment", ROOT / "experiments" / "learning_curve.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    res = mod.main(["--cases", "asia:smoke", "--sizes", "30", "60", "--reps", "2",
                    "--n-test", "200", "--n-iter", "300", "--burn-in", "50",
                    "--out", str(tmp_path)])
    assert set(res["size"]) == {30, 60} and set(res["case"]) == {"asia:smoke"}
    summary = pd.read_csv(tmp_path / "summary.csv")
    assert {"single - bma", "true"} <= set(summary["model"])
    assert (tmp_path / "results.csv").exists() and (tmp_path / "curve_asia_smoke.html").exists()
