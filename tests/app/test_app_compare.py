"""AppTest of the Compare page's probability quality and honest comparison: metrics with 95 %
intervals, calibration and the decision curve, tests over all pairs with CSV downloads, what
the page says after Stop, identical methods explained, time left while running."""

from __future__ import annotations

import json
import time

import numpy as np
import pytest
from test_app import TIMEOUT, _finish_background, _no_failure, _page, _plain, _wbc

PAGE = "1_Compare_methods.py"


def _titles(at) -> list[str]:
    return [json.loads(c.proto.spec)["layout"]["title"]["text"] for c in at.get("plotly_chart")]


def _table(at, column: str):
    return next(d.value for d in at.dataframe if column in d.value.columns)


def _downloads(at) -> list[str]:
    return [b.proto.label for b in at.get("download_button") if b.proto.label not in ("PNG",
                                                                                       "SVG")]


@pytest.fixture(scope="module")
def wbc_three_methods():
    """WBC, nb / tan / manb over 3 folds: one finished comparison shared by the tests."""
    at = _page(PAGE, _wbc())
    at.multiselect(key="cmp_methods").set_value(["nb", "tan", "manb"])
    at.slider(key="cmp_folds").set_value(3)
    at.number_input(key="cmp_seed").set_value(5)
    at.button[0].click().run()
    _finish_background(at, "compare")
    _no_failure(at)
    return at


def _interval(text: str) -> tuple[float, float, float]:
    est, rest = text.split(" (")
    lo, hi = rest.rstrip(")").split("–")
    return float(est), float(lo), float(hi)


def test_metrics_table_has_95_percent_intervals_pooled_and_per_fold(wbc_three_methods):
    at = wbc_three_methods
    table = _table(at, "Accuracy")
    assert list(table["Method"]) == ["Naive Bayes (nb)", "Tree-augmented naive Bayes (tan)",
                                     "Model-averaged naive Bayes (manb)"]
    for col in ("Accuracy", "Log-loss", "Brier", "AUC"):
        for cell in table[col]:
            est, lo, hi = _interval(cell)
            assert lo <= est <= hi and lo < hi
    assert all(_interval(c)[1] >= 0 for c in table["Log-loss"])  # its own scale
    # which AUC is which: pooled (the ROC legend's) beside the mean over folds
    entry = at.session_state["cmp_run"]["entry"]
    res = entry["results"]
    assert float(table["AUC folds"][0]) == pytest.approx(
        res.loc[res["method"] == "nb", "auc"].mean(), abs=5e-4)
    assert any("AUC pooled" in c.value and "mean over folds" in c.value for c in at.caption)
    roc = next(json.loads(c.proto.spec) for c in at.get("plotly_chart")
               if "ROC" in json.loads(c.proto.spec)["layout"]["title"]["text"])
    assert any("pooled AUC" in (t.get("name") or "") for t in roc["data"])
    # per fold, with intervals, in an expander
    assert "Per fold" in [e.label for e in at.expander]
    per_fold = _table(at, "scope")
    assert set(per_fold["scope"]) == {"fold"} and per_fold["fold"].nunique() == 3
    # the dots are the pooled estimates with their intervals (issue 33 item 6)
    dots = next(json.loads(c.proto.spec) for c in at.get("plotly_chart")
                if json.loads(c.proto.spec)["layout"]["title"]["text"].startswith("Accuracy"))
    assert dots["data"][0]["mode"] == "markers" and "error_x" in dots["data"][0]
    # every table: few columns, short headers (issue 33 item 7)
    for column in ("Accuracy", "Slope", "p (Holm)"):
        assert len(_table(at, column).columns) <= 7


def test_calibration_and_decision_curve_for_binary_wbc(wbc_three_methods):
    at = wbc_three_methods
    titles = _titles(at)
    assert "Reliability diagram (CORP): P(malignant)" in titles
    assert any(t.startswith("Decision curve") for t in titles)
    cal = _table(at, "Slope")
    assert list(cal.columns) == ["Method", "Intercept", "Slope", "Miscalibration",
                                 "Discrimination", "Uncertainty"]
    assert len(cal) == 3
    for cell in cal["Slope"]:
        est, lo, hi = _interval(cell)
        assert lo < est < hi
    # the user's positive class drives all three
    at.selectbox(key="cmp_positive").set_value("benign").run()
    _no_failure(at)
    titles = _titles(at)
    assert "Reliability diagram (CORP): P(benign)" in titles
    assert any("P(benign)" in t and t.startswith("Decision curve") for t in titles)
    at.selectbox(key="cmp_positive").set_value("malignant").run()


def test_all_pairs_friedman_holm_and_csv_downloads(wbc_three_methods):
    at = wbc_three_methods
    pairs = _table(at, "p (Holm)")
    assert len(pairs) == 3  # every pair of three methods, not one baseline
    assert (pairs["p (Holm)"].astype(float) >= pairs["p"].astype(float) - 1e-12).all()
    assert "Better (5 %)" in pairs.columns  # the verdict beside the p-value
    assert any("Friedman test" in m.value for m in at.markdown)
    labels = _downloads(at)
    for name in ("Per-fold results (CSV)", "Metrics with intervals (CSV)", "Calibration (CSV)",
                 "Friedman test (CSV)", "Pairwise Wilcoxon tests (Holm) (CSV)",
                 "Out-of-fold predictions (CSV)", "Report (HTML)", "Model report (HTML)"):
        assert name in labels


def test_identical_methods_are_explained(wbc_three_methods):
    at = wbc_three_methods
    notes = [_plain(i.value) for i in at.info if "Identical predictions" in i.value]
    assert len(notes) == 1
    assert "Naive Bayes (nb)" in notes[0] and "Model-averaged naive Bayes (manb)" in notes[0]
    assert "not a bug" in notes[0] and "Tree-augmented" not in notes[0]


def test_after_stop_every_method_and_its_finished_folds_are_named():
    """A stopped run: a method with no finished fold is named (not dropped), a partial one is
    marked and greyed, and the tests over folds use only the methods that finished."""
    at = _page(PAGE, _wbc())
    at.multiselect(key="cmp_methods").set_value(["nb", "tan", "manb"])
    at.slider(key="cmp_folds").set_value(5)
    at.number_input(key="cmp_seed").set_value(7)
    at.button[0].click().run()
    _finish_background(at, "compare")
    at.multiselect(key="cmp_cal_methods").set_value(["tan"]).run()  # chosen for this run
    entry = at.session_state["cmp_run"]["entry"]
    # the state Stop leaves after 7 fits: nb 5 folds, tan folds 1-2, manb none
    res = entry["results"]
    keep = (res["method"] == "nb") | ((res["method"] == "tan") & (res["fold"] < 2))
    preds = entry["preds"]
    tan = preds.proba["tan"].copy()
    tan[np.asarray(preds.folds) >= 2] = np.nan
    preds.proba = {"nb": preds.proba["nb"], "tan": tan}
    entry.update(results=res[keep].reset_index(drop=True), stopped=True, derived={})
    at.run()
    _no_failure(at)
    assert any("Stopped early: 7 of 15 fits" in w.value for w in at.warning)
    status = _table(at, "folds finished")
    assert list(status["folds finished"]) == ["5 of 5", "2 of 5", "0 of 5"]
    assert list(status["which folds"]) == ["1-5", "1-2", "none"]
    assert list(status["shown"]) == ["yes", "greyed (partial)", "no: no fold finished"]
    table = _table(at, "Accuracy")
    assert list(table["Method"]) == ["Naive Bayes (nb)",
                                     "Tree-augmented naive Bayes (tan) — 2 of 5 folds"]
    bars = json.loads(at.get("plotly_chart")[0].proto.spec)["data"][0]
    assert bars["marker"]["color"][1] != bars["marker"]["color"][0]  # greyed
    assert any("Tests over folds need two methods" in c.value for c in at.caption)
    # the reliability diagram's choice was made for the other run: it starts afresh
    assert at.multiselect(key="cmp_cal_methods").value == ["nb", "tan"]


def test_live_progress_says_how_long_is_left_and_stop_keeps_the_folds():
    import threading

    at = _page(PAGE, _wbc())
    at.multiselect(key="cmp_methods").set_value(["nb", "bma10"])
    at.slider(key="cmp_folds").set_value(10)
    at.number_input(key="cmp_seed").set_value(3).run()
    at.button[0].click().run()
    run = at.session_state["compare__bnma_bg"]
    deadline = time.time() + TIMEOUT
    while len(run.events) < 2 and not run.done and time.time() < deadline:
        run.wait(0.05)  # a condition, polled: one event per finished fit
    assert not run.done, "the run ended before it could be stopped"
    at.run()
    _no_failure(at)
    text = at.get("progress")[0].proto.text
    assert ("left" in text or "estimating the time left" in text) and "fits done" in text
    next(b for b in at.button if b.label == "Stop").click().run()
    assert run.done
    assert run.ended - run.stop_requested < 2.0  # a bma10 fit in progress is abandoned
    _no_failure(at)
    assert not any(t.name == "bnma-compare" and t.is_alive() for t in threading.enumerate())
    status = _table(at, "folds finished")
    assert list(status["Method"]) == ["Naive Bayes (nb)", "Order-MCMC averaging, 10 orders "
                                                          "(bma10)"]


def test_three_classes_top_label_calibration_and_no_decision_curve():
    """More than two classes: calibration is top-label unless the user picks a class; the
    decision curve (binary) is not drawn."""
    import pandas as pd

    from bnma_core.data import load_dataset

    rng = np.random.default_rng(0)
    df = pd.DataFrame({"x": rng.integers(0, 3, 300), "z": rng.integers(0, 2, 300)})
    df["class"] = np.where(rng.random(300) < 0.7, df["x"].map({0: "a", 1: "b", 2: "c"}),
                           rng.choice(["a", "b", "c"], 300))
    ds = load_dataset(df.to_csv(index=False).encode())
    at = _page(PAGE, ds)
    at.multiselect(key="cmp_methods").set_value(["nb", "tan"])
    at.slider(key="cmp_folds").set_value(3)
    at.button[0].click().run()
    _finish_background(at, "compare")
    _no_failure(at)
    titles = _titles(at)
    assert "Reliability diagram (CORP): top-label" in titles
    assert not any(t.startswith("Decision curve") for t in titles)
    at.selectbox(key="cmp_cal_target").set_value("b").run()
    _no_failure(at)
    assert "Reliability diagram (CORP): P(b)" in _titles(at)


def test_compare_over_data_sets_from_the_anchors(monkeypatch):
    """Several data sets: Demšar's critical-difference diagram of the anchors' configurations
    and the Bayesian signed-rank test of the chosen pairs, each table as CSV."""
    from bnma_core.reproduce import anchors

    path = anchors.ROOT.parent.parent / "shared" / "anchors"
    path = anchors.ANCHORS if (anchors.ANCHORS / "results.csv").exists() else path
    if not (path / "results.csv").exists():
        pytest.skip("the shared anchors folder is not here (it is not part of a clone)")
    monkeypatch.setattr(anchors, "ANCHORS", path)
    at = _page(PAGE, _wbc())
    at.toggle(key="cmp_sets").set_value(True).run()
    _no_failure(at)
    at.radio(key="cmp_sets_metric").set_value("log_loss").run()
    _no_failure(at)
    assert any("Nemenyi critical difference" in t for t in _titles(at))
    bayes = _table(at, "p_equivalent")
    assert len(bayes) == 6  # 4 methods chosen by default: every pair
    np.testing.assert_allclose(bayes[["p_a_better", "p_equivalent", "p_b_better"]].sum(axis=1),
                               1.0)
    labels = _downloads(at)
    assert "Critical difference (CSV)" in labels and "Bayesian signed-rank (CSV)" in labels
    assert any("Left out (no score on every data set)" in c.value for c in at.caption)


def _scores_page(raw: bytes, name: str = "scores.csv"):
    at = _page(PAGE, _wbc())
    at.toggle(key="cmp_sets").set_value(True).run()
    if at.radio(key="cmp_sets_source").value != "My own table (CSV)":
        at.radio(key="cmp_sets_source").set_value("My own table (CSV)").run()
    at.file_uploader(key="cmp_sets_file").set_value((name, raw, "text/csv")).run()
    return at


@pytest.mark.parametrize("raw, words", [
    (b"dataset,method,accuracy\nd0,a,0.8\nd0,b,inf\nd1,a,0.7\nd1,b,0.75\n",
     "not a finite score"),
    (b"dataset,method,accuracy\n", "header but no rows")])
def test_a_bad_table_of_scores_is_refused_in_one_sentence(raw, words):
    """issue 36 item 6: inf raised an uncaught ValueError, a header-only table said "The
    table has no None column."."""
    at = _scores_page(raw)
    _no_failure(at)
    errors = " ".join(e.value for e in at.error)
    assert words in errors and "None" not in errors and "Traceback" not in errors


def test_a_table_of_many_methods_draws_the_best_and_is_computed_once(monkeypatch):
    """issue 36 item 3: the ranks and the Bayesian test are cached on the table's content (a
    rerun, e.g. another widget, does not recompute them); the diagram draws the best
    MAX_CD_METHODS, the table ranks every method."""
    import streamlit as st

    from bnma_core import cv_summary
    from bnma_core.viz.calibration import MAX_CD_METHODS

    st.cache_data.clear()
    calls = []
    real = cv_summary.over_datasets
    k = 120

    def counted(scores, *a, **kw):  # only the uploaded table's calls (not the anchors')
        if scores["method"].nunique() == k:
            calls.append(kw.get("ranks", True))
        return real(scores, *a, **kw)

    monkeypatch.setattr(cv_summary, "over_datasets", counted)
    rng = np.random.default_rng(7)
    raw = "dataset,method,accuracy\n" + "".join(
        f"d{i},m{j},{rng.uniform(0.6, 0.9):.4f}\n" for i in range(5) for j in range(k))
    at = _scores_page(raw.encode())
    _no_failure(at)
    assert sorted(calls) == [False, True]  # ranks once, the pairs once
    cd_chart = next(c for c in at.get("plotly_chart")
                    if "critical difference" in json.loads(c.proto.spec)["layout"]["title"]
                    ["text"])
    spec = json.loads(cd_chart.proto.spec)
    assert len(spec["data"]) == MAX_CD_METHODS
    assert any(f"the {MAX_CD_METHODS} best of {k} methods" in c.value for c in at.caption)
    assert len(_table(at, "Mean rank")) == k
    at.number_input(key="cmp_sets_rope").set_value(0.02).run()
    _no_failure(at)
    assert sorted(calls) == [False, False, True]  # a new region: only the pairs again
    at.run()
    assert len(calls) == 3
