"""Cross-validation, summaries, Wilcoxon tests, bias-variance and evaluation figures."""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import pytest
from scipy.stats import wilcoxon
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.metrics import roc_auc_score
from sklearn.model_selection import StratifiedKFold

from bnma_core import viz
from bnma_core.classifiers.naive_bayes import NaiveBayes
from bnma_core.data import DataError, DiscreteEncoder, dataset_from_codes, load_dataset
from bnma_core.datasets import bundled_path
from bnma_core.evaluation import (
    RESULT_COLUMNS,
    _metrics,
    bias_variance,
    cross_validate,
    roc_curves,
    summarize,
    wilcoxon_against,
    zero_one_decomposition,
)

WBC = str(bundled_path("wbc.csv"))


def continuous_frame(n=120, seed=0, n_classes=2):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, n_classes, n)
    return pd.DataFrame({
        "a": rng.normal(y, 1.0),
        "b": rng.normal(-y, 1.5),
        "colour": np.array(["red", "green", "blue"])[(y + rng.integers(0, 2, n)) % 3],
        "outcome": np.array(["no", "yes", "maybe"])[y],
    })


class NoMissingInFit(ClassifierMixin, BaseEstimator):
    """Predicts the training majority; fails if a training row has a missing value."""

    def fit(self, X, y):
        assert (np.asarray(X) >= 0).all()
        self.classes_, counts = np.unique(y, return_counts=True)
        self.n_fit_ = len(y)
        return self

    def predict_proba(self, X):
        p = np.zeros((len(X), len(self.classes_)))
        p[:, 0] = 1.0
        return p


# --- cross-validation ----------------------------------------------------------------------------

def test_cross_validate_shape_and_reproducibility():
    r1 = cross_validate(WBC, ["nb", "tan"], folds=5, seed=3)
    r2 = cross_validate(WBC, "nb,tan", folds=5, seed=3)
    assert list(r1.columns) == RESULT_COLUMNS
    assert len(r1) == 10
    assert list(r1["method"]) == ["nb"] * 5 + ["tan"] * 5
    # every row (incomplete ones included) is tested exactly once per method
    n_rows = len(pd.read_csv(WBC))
    assert r1.groupby("method")["n_test"].sum().tolist() == [n_rows, n_rows]
    pd.testing.assert_frame_equal(r1.drop(columns=["fit_time_s", "predict_time_s"]),
                                  r2.drop(columns=["fit_time_s", "predict_time_s"]))
    assert (r1["accuracy"] > 0.85).all()
    assert (r1["auc"] > 0.9).all()


def test_discretization_refitted_on_training_folds_only():
    df = continuous_frame(n=90, seed=1, n_classes=3)
    res = cross_validate(df, ["nb"], folds=3, seed=5, target="outcome",
                         discretization="quantile", n_bins=3)
    X = df.drop(columns=["outcome"])
    labels = df["outcome"]
    classes = sorted(labels.unique())
    y = np.array([classes.index(v) for v in labels])
    skf = StratifiedKFold(3, shuffle=True, random_state=5)
    for f, (tr, te) in enumerate(skf.split(X, y)):
        enc = DiscreteEncoder("quantile", 3).fit(X.iloc[tr].reset_index(drop=True),
                                                  vocabulary=X)
        Xtr = enc.transform(X.iloc[tr].reset_index(drop=True))
        Xte = enc.transform(X.iloc[te].reset_index(drop=True))
        m = NaiveBayes().fit(Xtr, y[tr], arities=enc.arities)
        row = res[res["fold"] == f].iloc[0]
        assert row["accuracy"] == pytest.approx(np.mean(m.predict(Xte) == y[te]))
        P = m.predict_proba(Xte)
        assert row["log_loss"] == pytest.approx(-np.mean(np.log(P[np.arange(len(te)), y[te]])))
        assert row["auc"] == pytest.approx(roc_auc_score(y[te], P, multi_class="ovr"))


def test_dataset_input_uses_its_encoder_and_equals_path_input():
    d = load_dataset(WBC, missing="keep")
    a = cross_validate(d, ["kdb1"], folds=4, seed=2)
    b = cross_validate(WBC, ["kdb1"], folds=4, seed=2)
    np.testing.assert_allclose(a["accuracy"], b["accuracy"])
    np.testing.assert_allclose(a["log_loss"], b["log_loss"])
    # a dataset without raw values is used as coded
    coded = dataset_from_codes(d.complete_rows().codes, names=d.names,
                               arities=d.arities, class_index=d.class_index)
    c = cross_validate(coded, ["nb"], folds=4, seed=2)
    assert len(c) == 4 and (c["accuracy"] > 0.9).all()


def test_missing_rows_dropped_from_training_unless_handled():
    df = continuous_frame(n=80, seed=2)
    df.loc[:9, "colour"] = None
    res = cross_validate(df, {"majority": NoMissingInFit(), "nb": NaiveBayes()}, folds=4,
                         target="outcome")
    maj = res[res["method"] == "majority"]
    nb = res[res["method"] == "nb"]
    assert maj["n_test"].sum() == 80 and nb["n_test"].sum() == 80
    assert maj["n_train"].sum() == 3 * 70  # the 10 incomplete rows never train it
    assert nb["n_train"].sum() == 3 * 80


def test_same_tables_in_process_and_on_two_dask_workers():
    """One grid engine: workers=1 fits in this process, workers=2 on a local Dask cluster of
    two processes (the reproductions' runner); the per-fold table and the out-of-fold
    probabilities are the same, whatever order the fits finished in."""
    a, pa = cross_validate(WBC, ["nb", "kdb2"], folds=3, workers=1, return_proba=True)
    calls = []
    b, pb = cross_validate(WBC, ["nb", "kdb2"], folds=3, workers=2, return_proba=True,
                           progress=lambda done, total, m, f: calls.append((done, total)))
    timing = ["fit_time_s", "predict_time_s"]
    pd.testing.assert_frame_equal(a.drop(columns=timing), b.drop(columns=timing))
    pd.testing.assert_frame_equal(pa.table(), pb.table())
    assert sorted(calls) == [(i, 6) for i in range(1, 7)]


def test_stop_on_dask_cancels_the_fits_not_finished():
    calls = []
    res, pred = cross_validate(WBC, ["nb", "tan"], folds=3, workers=2, return_proba=True,
                               progress=lambda done, total, m, f: calls.append((m, f)),
                               should_stop=lambda: len(calls) >= 1)
    assert 1 <= len(res) < 6 and len(calls) == len(res)
    tab = pred.table()
    assert set(zip(tab["method"], tab["fold"])) == set(zip(res["method"], res["fold"]))


def test_n_jobs_is_the_former_name_of_workers():
    with pytest.warns(FutureWarning, match="renamed workers"):
        a = cross_validate(WBC, ["nb"], folds=3, n_jobs=1)
    pd.testing.assert_frame_equal(a.drop(columns=["fit_time_s", "predict_time_s"]),
                                  cross_validate(WBC, ["nb"], folds=3).drop(
                                      columns=["fit_time_s", "predict_time_s"]))
    with pytest.raises(ValueError, match="workers must be a whole number"):
        cross_validate(WBC, ["nb"], folds=3, workers=0)


def test_progress_and_stop():
    calls = []
    res = cross_validate(WBC, ["nb", "tan"], folds=3,
                         progress=lambda done, total, m, f: calls.append((done, total, m, f)))
    assert [c[0] for c in calls] == list(range(1, 7)) and {c[1] for c in calls} == {6}
    assert len(res) == 6
    finished = []
    partial = cross_validate(WBC, ["nb", "tan"], folds=3, should_stop=lambda: len(finished) >= 2,
                             progress=lambda *a: finished.append(a))
    assert len(partial) == 2 and list(partial.columns) == RESULT_COLUMNS


def test_bad_cv_arguments():
    with pytest.raises(DataError, match="fewer than the 3 classes"):
        cross_validate(continuous_frame(n=20, n_classes=3), ["nb"], folds=10,
                       target="outcome")
    with pytest.raises(ValueError, match="at least 2"):
        cross_validate(WBC, ["nb"], folds=1)
    with pytest.raises(ValueError, match="Unknown method 'nope'"):
        cross_validate(WBC, ["nb", "nope"], folds=3)
    with pytest.raises(DataError, match="discretization"):
        cross_validate(WBC, ["nb"], discretization="kmeans")
    with pytest.raises(DataError, match="not in the file"):
        cross_validate(WBC, ["nb"], target="nope")


def test_metrics_binary_and_multiclass():
    y = np.array([0, 1, 1, 0, 1])
    P = np.array([[0.8, 0.2], [0.3, 0.7], [0.6, 0.4], [0.5, 0.5], [0.1, 0.9]])
    m = _metrics(y, P)
    assert m["accuracy"] == pytest.approx(0.8)  # the tie (row 3) goes to class 0
    assert m["auc"] == pytest.approx(roc_auc_score(y, P[:, 1]))
    assert m["log_loss"] == pytest.approx(-np.mean(np.log([0.8, 0.7, 0.4, 0.5, 0.9])))
    y3 = np.array([0, 1, 2, 2, 1, 0])
    P3 = np.random.default_rng(0).dirichlet(np.ones(3), 6)
    assert _metrics(y3, P3)["auc"] == pytest.approx(
        roc_auc_score(y3, P3, multi_class="ovr", average="macro"))
    assert np.isnan(_metrics(np.zeros(3, int), P3[:3])["auc"])


# --- summaries and tests -------------------------------------------------------------------------

def fake_results():
    acc = {"a": [0.8, 0.9, 0.7, 0.85, 0.75, 0.9], "b": [0.82, 0.95, 0.72, 0.9, 0.8, 0.91],
           "c": [0.8, 0.9, 0.7, 0.85, 0.75, 0.9]}
    rows = [{"method": m, "fold": f, "accuracy": v, "log_loss": 1 - v, "auc": v,
             "fit_time_s": 0.1, "predict_time_s": 0.0, "n_train": 9, "n_test": 1}
            for m, vals in acc.items() for f, v in enumerate(vals)]
    return pd.DataFrame(rows), acc


def test_summarize():
    res, acc = fake_results()
    s = summarize(res)
    assert list(s["method"]) == ["a", "b", "c"]
    assert s.loc[1, "accuracy_mean"] == pytest.approx(np.mean(acc["b"]))
    assert s.loc[1, "accuracy_std"] == pytest.approx(np.std(acc["b"], ddof=1))
    assert s.loc[0, "fit_time_s_total"] == pytest.approx(0.6)


def test_wilcoxon_against():
    res, acc = fake_results()
    w = wilcoxon_against(res, "a").set_index("method")
    d = np.array(acc["b"]) - np.array(acc["a"])
    assert w.loc["b", "p_value"] == pytest.approx(wilcoxon(d).pvalue)
    assert w.loc["b", "wins"] == 6 and w.loc["b", "mean_diff"] == pytest.approx(d.mean())
    # identical results: every difference is zero
    assert w.loc["c", "p_value"] == 1.0 and w.loc["c", "ties"] == 6
    with pytest.raises(ValueError, match="Baseline 'z'"):
        wilcoxon_against(res, "z")
    with pytest.raises(ValueError, match="Unknown metric"):
        wilcoxon_against(res, "a", metric="f1")


# --- bias-variance -----------------------------------------------------------------------------

def test_zero_one_decomposition_closed_form():
    # 4 training sets, 2 test points, 3 classes; true classes 0 and 2
    preds = np.array([[0, 1], [0, 2], [1, 2], [0, 2]])
    t = zero_one_decomposition(preds, np.array([0, 2]), 3)
    # point 0: P_H = (3/4, 1/4, 0): bias2 = 1/2 ((1/4)^2 + (1/4)^2) = 1/16,
    #          variance = 1/2 (1 - 9/16 - 1/16) = 3/16, error 1/4
    # point 1: P_H = (0, 1/4, 3/4): same numbers
    np.testing.assert_allclose(t["bias2"], [1 / 16, 1 / 16])
    np.testing.assert_allclose(t["variance"], [3 / 16, 3 / 16])
    np.testing.assert_allclose(t["error"], [1 / 4, 1 / 4])


def test_bias_variance_on_wbc():
    d = load_dataset(WBC)
    bv = bias_variance(["nb", "kdb2"], d, n_repeats=5, seed=0)
    assert list(bv["method"]) == ["nb", "kdb2"]
    np.testing.assert_allclose(bv["error"], bv["bias2"] + bv["variance"])
    assert (bv["noise"] == 0).all()
    assert (bv["error"] < 0.15).all()
    again = bias_variance(["nb", "kdb2"], d, n_repeats=5, seed=0)
    pd.testing.assert_frame_equal(bv, again)
    pts = bias_variance({"maj": NoMissingInFit()}, d, n_repeats=3, per_point=True)
    assert len(pts) == bv.loc[0, "n_test"]
    assert (pts["variance"] == 0).all()  # a constant prediction never varies
    with pytest.raises(ValueError, match="train_fraction"):
        bias_variance(["nb"], d, train_fraction=1.5)
    with pytest.raises(ValueError, match="n_repeats"):
        bias_variance(["nb"], d, n_repeats=1)
    with pytest.warns(FutureWarning, match="renamed workers"):
        pd.testing.assert_frame_equal(bias_variance(["nb", "kdb2"], d, n_repeats=5, seed=0,
                                                    n_jobs=1), bv)


# --- figures -------------------------------------------------------------------------------------

def test_figures():
    res, acc = fake_results()
    fig = viz.accuracy_bar_figure(summarize(res))
    assert isinstance(fig, go.Figure)
    bar = fig.data[0]
    assert list(bar.x) == ["a", "b", "c"]
    np.testing.assert_allclose(bar.error_y.array[1], np.std(acc["b"], ddof=1))
    assert isinstance(viz.accuracy_bar_figure(res, metric="auc"), go.Figure)
    with pytest.raises(ValueError, match="no 'f1' column"):
        viz.accuracy_bar_figure(res, metric="f1")
    roc = viz.roc_figure({"nb": ([0, 0.2, 1], [0, 0.8, 1], 0.8),
                          "tan": {"fpr": [0, 1], "tpr": [0, 1]}})
    assert len(roc.data) == 3 and "AUC 0.800" in roc.data[1].name
    long = pd.DataFrame({"method": ["a", "a"], "fpr": [0, 1], "tpr": [0, 1]})
    assert len(viz.roc_figure(long).data) == 2


def test_out_of_fold_probabilities_and_roc_curves():
    res, pred = cross_validate(WBC, ["nb", "tan"], folds=4, seed=1, return_proba=True)
    plain = cross_validate(WBC, ["nb", "tan"], folds=4, seed=1)
    pd.testing.assert_frame_equal(res.drop(columns=["fit_time_s", "predict_time_s"]),
                                  plain.drop(columns=["fit_time_s", "predict_time_s"]))
    assert pred.classes == ["benign", "malignant"]
    P = pred.proba["nb"]
    assert P.shape == (699, 2) and not np.isnan(P).any()
    np.testing.assert_allclose(P.sum(axis=1), 1.0)
    # pooled accuracy equals the n_test-weighted fold accuracies
    nb = res[res["method"] == "nb"]
    assert np.mean(P.argmax(axis=1) == pred.y) == pytest.approx(
        (nb["accuracy"] * nb["n_test"]).sum() / nb["n_test"].sum())
    curves = roc_curves(pred, positive="malignant")
    assert set(curves) == {"nb", "tan"}
    assert curves["nb"]["auc"] == pytest.approx(roc_auc_score(pred.y == 1, P[:, 1]))
    assert len(viz.roc_figure(curves).data) == 3
    with pytest.raises(ValueError, match="not a class"):
        roc_curves(pred, positive="unknown")


def test_out_of_fold_table_keeps_rows_folds_and_cut_points_per_fold():
    df = continuous_frame(n=90, seed=4)
    df.loc[5, "a"] = None
    res, pred = cross_validate(df, ["nb", "tan"], folds=3, seed=7, target="outcome",
                               return_proba=True)
    tab = pred.table()
    assert pred.classes == ["no", "yes"]
    assert list(tab.columns) == ["row", "fold", "method", "true_class",
                                 *[f"P({c})" for c in pred.classes]]
    assert len(tab) == 2 * 90 and list(dict.fromkeys(tab["method"])) == ["nb", "tan"]
    nb = tab[tab["method"] == "nb"]
    assert list(nb["row"]) == list(range(90))
    assert list(nb["true_class"]) == list(df["outcome"])
    # the folds are StratifiedKFold's with the seed
    skf = StratifiedKFold(n_splits=3, shuffle=True, random_state=7)
    y = np.array([pred.classes.index(c) for c in df["outcome"]])
    expect = np.empty(90, dtype=int)
    for f, (_, te) in enumerate(skf.split(np.zeros(90), y)):
        expect[te] = f
    np.testing.assert_array_equal(nb["fold"], expect)
    assert pred.seed == 7 and pred.class_name == "outcome"
    # cut points refitted on each fold's training rows: the median of "a" over them
    assert set(pred.cut_points) == {0, 1, 2}
    for f in range(3):
        train = df.loc[expect != f, "a"].dropna()
        assert pred.cut_points[f]["a"] == [pytest.approx(float(np.median(train)))]
        assert "colour" not in pred.cut_points[f]
    assert len({pred.cut_points[f]["a"][0] for f in range(3)}) == 3
    # the fold metrics of the results table come from the same probabilities
    for (m, f), r in res.set_index(["method", "fold"]).iterrows():
        sel = tab[(tab["method"] == m) & (tab["fold"] == f)]
        P = sel[[f"P({c})" for c in pred.classes]].to_numpy()
        truth = sel["true_class"].map(pred.classes.index).to_numpy()
        assert r["accuracy"] == pytest.approx(np.mean(P.argmax(axis=1) == truth))


def test_metrics_from_predictions_restored_from_parquet(tmp_path):
    """Every metric is computed from the one stored table: the same numbers after a round
    trip through Parquet (class order, seed and cut points in the file's metadata)."""
    from bnma_core.evaluation import CVPredictions

    df = continuous_frame(n=120, seed=1)
    _, pred = cross_validate(df, ["nb", "kdb1"], folds=4, seed=3, target="outcome",
                             return_proba=True)
    back = CVPredictions.read_parquet(pred.to_parquet(tmp_path / "oof.parquet"))
    pd.testing.assert_frame_equal(back.table(), pred.table())
    assert back.classes == pred.classes and back.seed == 3 and back.cut_points == \
        pred.cut_points and back.class_name == "outcome"
    kw = dict(n_bootstrap=200, seed=0)
    pd.testing.assert_frame_equal(back.metric_intervals(**kw), pred.metric_intervals(**kw))
    pd.testing.assert_frame_equal(back.calibration_summary(positive="yes"),
                                  pred.calibration_summary(positive="yes"))
    pooled = pred.metric_intervals(**kw).query("scope == 'pooled' and metric == 'accuracy'")
    y, P, _ = pred.finished("nb")
    assert pooled.set_index("method").loc["nb", "estimate"] == pytest.approx(
        np.mean(P.argmax(axis=1) == y))
    assert set(pred.metric_intervals(**kw)["scope"]) == {"pooled", "fold"}
    # a table from elsewhere (e.g. the CSV of bnma cv --predictions) reads the same way
    from bnma_core.export import table_csv

    (tmp_path / "oof.csv").write_bytes(table_csv(pred.table(), index=False))
    again = CVPredictions.from_table(pd.read_csv(tmp_path / "oof.csv"))
    assert again.classes == pred.classes
    np.testing.assert_array_equal(again.proba["nb"], pred.proba["nb"])
    with pytest.raises(ValueError, match="no column"):
        CVPredictions.from_table(pred.table().drop(columns=["fold"]))
    (tmp_path / "plain.parquet").write_bytes(b"")
    pd.DataFrame({"a": [1]}).to_parquet(tmp_path / "plain.parquet")
    with pytest.raises(ValueError, match="no cross-validation predictions"):
        CVPredictions.read_parquet(tmp_path / "plain.parquet")


def test_stopped_run_keeps_the_finished_folds_in_the_table():
    started = []

    def stop():
        started.append(1)
        return len(started) > 4

    res, pred = cross_validate(WBC, ["nb", "tan"], folds=3, should_stop=stop,
                               return_proba=True)
    assert len(res) == 4
    tab = pred.table()
    assert set(tab.loc[tab["method"] == "tan", "fold"]) == {0}
    assert len(tab[tab["method"] == "nb"]) == 699
    m = pred.metric_intervals(n_bootstrap=50)
    assert m.query("method == 'tan' and scope == 'pooled'")["n"].iloc[0] == (
        res.query("method == 'tan'")["n_test"].sum())


def test_wilcoxon_pairs_over_datasets_and_folds():
    res, acc = fake_results()
    two = pd.concat([res.assign(dataset="d1"), res.assign(dataset="d2", fold=res["fold"])])
    two.loc[two["dataset"] == "d2", "accuracy"] += np.where(
        two.loc[two["dataset"] == "d2", "method"] == "b", 0.01, 0.0)
    w = wilcoxon_against(two, "a").set_index("method")
    d = np.concatenate([np.array(acc["b"]) - acc["a"], np.array(acc["b"]) + 0.01 - acc["a"]])
    assert w.loc["b", "n_pairs"] == 12
    assert w.loc["b", "p_value"] == pytest.approx(wilcoxon(d).pvalue)


# --- declared capabilities decide the training rows (issue 10 item 3) --------------------------

def test_same_training_rows_for_every_registered_method():
    """The bug: MA-NB and the order-BMA methods silently lost the incomplete training rows
    while NB kept them. Every registered method learns from incomplete rows (declared and
    tested in test_registry), so all train on the same rows, and the table says so."""
    params = {"bma1": {"n_iter": 200, "burn_in": 50, "max_parents": 1},
              "bma_fixed": {"max_parents": 1}}
    res = cross_validate(WBC, ["nb", "manb", "bma_fixed", "bma1", "ukdb"], folds=3, seed=0,
                         method_params=params)
    assert list(res.columns) == RESULT_COLUMNS
    per_method = res.groupby("method", sort=False)["n_train"].apply(list)
    assert len({tuple(v) for v in per_method}) == 1
    assert res.groupby("method")["n_train"].sum().eq(2 * 699).all()
    assert (res["n_train_dropped"] == 0).all()


def test_method_that_cannot_learn_from_incomplete_rows_is_reported():
    df = continuous_frame(n=80, seed=2)
    df.loc[:9, "colour"] = None
    res = cross_validate(df, {"majority": NoMissingInFit(), "nb": NaiveBayes()}, folds=4,
                         target="outcome")
    maj = res[res["method"] == "majority"]
    assert maj["n_train_dropped"].sum() == 3 * 10
    assert (maj["n_train"] + maj["n_train_dropped"]).sum() == 3 * 80
    s = summarize(res).set_index("method")
    assert s.loc["majority", "n_train_dropped_mean"] == pytest.approx(7.5)
    assert s.loc["nb", "n_train_dropped_mean"] == 0 and s.loc["nb", "n_train_mean"] == 60


def test_missing_drop_removes_incomplete_rows_for_every_method():
    res = cross_validate(WBC, ["nb", "manb"], folds=3, missing="drop")
    assert res.groupby("method")["n_test"].sum().eq(683).all()
    assert res.groupby("method")["n_train"].sum().eq(2 * 683).all()
    d = load_dataset(WBC)
    pd.testing.assert_frame_equal(
        cross_validate(d, ["nb"], folds=3, missing="drop")[["accuracy", "n_train"]],
        res[res["method"] == "nb"][["accuracy", "n_train"]].reset_index(drop=True))
    with pytest.raises(DataError, match="missing-value policy"):
        cross_validate(WBC, ["nb"], missing="impute")


def test_fold_cut_points_come_from_the_dataset_encoder():
    df = continuous_frame(n=90, seed=4)
    d = load_dataset(df, target="outcome", discretization="quantile", n_bins=3)
    a = cross_validate(d, ["nb"], folds=3, seed=5)
    b = cross_validate(df, ["nb"], folds=3, seed=5, target="outcome",
                       discretization="quantile", n_bins=3)
    np.testing.assert_allclose(a["log_loss"], b["log_loss"])


# --- issue 14 items 2 and 3 ----------------------------------------------------------------------

def test_wilcoxon_wins_follow_the_metric_direction():
    """Lower log-loss is better: a method with lower log-loss on every fold wins them all."""
    res, acc = fake_results()  # b has higher accuracy, hence lower log-loss, on every fold
    w = wilcoxon_against(res, "a", metric="log_loss").set_index("method")
    assert w.loc["b", "wins"] == 6 and w.loc["b", "losses"] == 0
    assert w.loc["b", "mean_diff"] < 0
    w = wilcoxon_against(res, "b", metric="log_loss").set_index("method")
    assert w.loc["a", "wins"] == 0 and w.loc["a", "losses"] == 6
    assert wilcoxon_against(res, "a", metric="auc").set_index("method").loc["b", "wins"] == 6


def test_summary_has_spread_of_every_metric_and_the_chart_uses_it():
    res, acc = fake_results()
    res["log_loss"] = res["log_loss"] * 3  # sd 0.079-like spread, not ~0
    s = summarize(res)
    for m in ("accuracy", "auc", "log_loss"):
        assert f"{m}_std" in s.columns
    assert s.loc[1, "log_loss_std"] == pytest.approx(np.std(3 * (1 - np.array(acc["b"])),
                                                            ddof=1))
    bar = viz.accuracy_bar_figure(s, metric="log_loss").data[0]
    np.testing.assert_allclose(bar.error_y.array, s["log_loss_std"])
    assert bar.error_y.array[1] > 0.05


_RELEASE = None  # the blocking fit's gate (module level: estimators are cloned with their params)
_FITTING = None


class BlocksInFit(ClassifierMixin, BaseEstimator):
    """A fit that cannot be interrupted: it waits until the test opens the gate (a numba kernel
    or a stack of inner fits, as far as the cross-validation can tell)."""

    def fit(self, X, y):
        _FITTING.set()
        _RELEASE.wait(60)
        self.classes_ = np.unique(y)
        return self

    def predict_proba(self, X):
        return np.full((len(X), len(self.classes_)), 1.0 / len(self.classes_))


def test_stop_during_a_long_fit_returns_within_two_seconds():
    """issue 34 item 5: Stop waited for the fit in progress (~20 s for stack on a busy
    server). The fit is abandoned: the cross-validation returns the finished folds at once,
    while the fit is still running, and drops the abandoned fit's result."""
    import threading
    import time

    global _RELEASE, _FITTING
    _RELEASE, _FITTING = threading.Event(), threading.Event()
    stop = threading.Event()
    out = {}

    def run():
        out["result"] = cross_validate(WBC, {"nb": NaiveBayes(),
                                             "slow": BlocksInFit()}, folds=3,
                                       should_stop=stop.is_set)

    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    try:
        assert _FITTING.wait(60), "the blocking fit never started"
        t0 = time.perf_counter()
        stop.set()
        worker.join(2.0)
        assert not worker.is_alive(), "cross_validate did not return within 2 s of Stop"
        assert time.perf_counter() - t0 < 2.0
        assert not _RELEASE.is_set()  # the fit was still running when the run returned
        res = out["result"]
        assert list(res["method"]) == ["nb"] * 3  # the finished folds, not the abandoned fit
    finally:
        _RELEASE.set()
