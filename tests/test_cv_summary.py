"""bnma_core.cv_summary: fold status after Stop, identical predictions, time left, intervals."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from bnma_core.cv_summary import (
    duration_words,
    fold_status,
    identical_predictions,
    interval_table,
    remaining_seconds,
)
from bnma_core.evaluation import CVPredictions


def test_fold_status_names_every_method_and_its_folds():
    res = pd.DataFrame({"method": ["a"] * 4 + ["b"], "fold": [0, 1, 2, 4, 0]})
    st = fold_status(res, ["a", "b", "c"], 5)
    assert list(st["folds_done"]) == [4, 1, 0]
    assert list(st["folds"]) == ["1-3, 5", "1", "none"]
    assert list(st["complete"]) == [False, False, False]
    full = pd.DataFrame({"method": ["a"] * 3, "fold": [2, 0, 1]})
    assert fold_status(full, ["a"], 3).iloc[0].tolist() == ["a", 3, "1-3", True]


def test_identical_predictions_groups_methods_equal_on_their_common_rows():
    rng = np.random.default_rng(0)
    p = rng.dirichlet([1, 1], 50)
    q = rng.dirichlet([1, 1], 50)
    partial = p.copy()
    partial[25:] = np.nan  # stopped early: compared on the rows both predicted
    groups = identical_predictions({"nb": p, "tan": q, "manb": p.copy(), "half": partial,
                                    "near": p + np.r_[1e-9, -1e-9]})
    assert groups == [("nb", "manb", "half")]
    assert identical_predictions({"a": p, "b": q}) == []


def test_remaining_seconds_and_words():
    assert remaining_seconds(0, 10, 5.0) is None
    assert remaining_seconds(2, 10, 6.0) == pytest.approx(24.0)  # 3 s per fit, 8 left
    assert remaining_seconds(10, 10, 6.0) == 0.0
    assert duration_words(7) == "7 s" and duration_words(42) == "40 s"
    assert duration_words(600) == "10 min" and duration_words(5 * 3600 + 120) == "5 h 02 min"


def test_interval_table_pooled_with_auc_of_both_kinds():
    rng = np.random.default_rng(1)
    y = rng.integers(0, 2, 200)
    P1 = np.clip(0.7 * np.eye(2)[y] + 0.3 * rng.dirichlet([1, 1], 200), 0, 1)
    P2 = P1.copy()
    P2[100:] = np.nan
    pred = CVPredictions(y, ["a", "b"], {"m1": P1, "m2": P2}, folds=np.arange(200) % 2)
    res = pd.DataFrame({"method": ["m1", "m1", "m2"], "fold": [0, 1, 0],
                        "auc": [0.9, 0.8, 0.85]})
    tab = interval_table(pred, res, n_bootstrap=200)
    assert list(tab["method"]) == ["m1", "m2"] and list(tab["rows"]) == [200, 100]
    assert (tab["log_loss_lower"] >= 0).all()
    assert tab["auc_fold_mean"].tolist() == pytest.approx([0.85, 0.85])
    for m in ("accuracy", "log_loss", "brier", "auc"):
        assert (tab[f"{m}_lower"] <= tab[m]).all() and (tab[m] <= tab[f"{m}_upper"]).all()


def test_scores_table_of_a_user_and_comparison_over_data_sets():
    from bnma_core.cv_summary import over_datasets, read_scores_table

    rows = ["dataset,method,log_loss"]
    rng = np.random.default_rng(3)
    for d in range(6):
        for m, shift in (("good", 0.0), ("same", 0.001), ("bad", 0.2)):
            rows.append(f"d{d},{m},{0.3 + shift + 0.01 * rng.random():.4f}")
    rows.append("d0,partial,0.1")
    tab = read_scores_table("\n".join(rows).encode())
    out = over_datasets(tab, "log_loss", rope=0.01, n_samples=5000)
    assert out["left_out"] == ["partial"] and set(out["methods"]) == {"good", "same", "bad"}
    assert out["cd"].ranks["method"].iloc[-1] == "bad"  # lower log-loss is better
    pairs = out["pairs"].set_index(["method_a", "method_b"])
    assert pairs.loc[("good", "same"), "decision"] == "equivalent"
    assert pairs.loc[("good", "bad"), "decision"] == "a better"
    assert over_datasets(tab, "log_loss", pair_methods=["good"])["pairs"] is None
    with pytest.raises(ValueError, match="columns dataset, method"):
        read_scores_table(b"name,score\na,1\n")
    with pytest.raises(ValueError, match="not a number"):
        read_scores_table(b"dataset,method,accuracy\na,b,high\n")
    with pytest.raises(ValueError, match="MB"):
        read_scores_table(b"x" * 10, max_bytes=5)


@pytest.mark.parametrize("cell", ["inf", "-inf", "Infinity"])
def test_a_scores_table_holding_inf_is_refused_at_read_time(cell):
    """issue 36 item 6: inf passed the reader and raised an uncaught ValueError in the
    Bayesian test; it is refused with one sentence naming the cell."""
    from bnma_core.cv_summary import read_scores_table

    raw = f"dataset,method,accuracy\nd0,a,0.8\nd0,b,{cell}\nd1,a,0.7\nd1,b,0.75\n".encode()
    with pytest.raises(ValueError, match=r"Column accuracy holds .* in row 2, not a finite "
                                         r"score") as exc:
        read_scores_table(raw)
    assert str(exc.value).count(". ") == 0 and "\n" not in str(exc.value)


def test_a_header_without_rows_and_a_missing_score_say_so():
    """issue 36 item 6: a header-only table said "The table has no None column."."""
    from bnma_core.cv_summary import over_datasets, read_scores_table

    with pytest.raises(ValueError, match="header but no rows"):
        read_scores_table(b"dataset,method,accuracy\n")
    with pytest.raises(ValueError, match="No score column holds a number"):
        read_scores_table(b"dataset,method,accuracy\nd0,a,\nd1,a,\n")
    tab = pd.DataFrame({"dataset": ["d0", "d1"], "method": ["a", "a"], "accuracy": [0.8, 0.7]})
    for metric in (None, "auc"):
        with pytest.raises(ValueError, match="Choose a score column the table has: "
                                             "accuracy") as exc:
            over_datasets(tab, metric)
        assert "None" not in str(exc.value)


def test_score_tables_beyond_the_limits_are_refused_on_upload_with_the_remedy():
    """issue 36 item 3: data sets and methods are counted when the table is read."""
    from bnma_core import cv_summary
    from bnma_core.cv_summary import MAX_SCORE_DATASETS, MAX_SCORE_METHODS, read_scores_table

    n = MAX_SCORE_DATASETS + 1
    raw = "dataset,method,accuracy\n" + "".join(f"d{i},{m},0.5\n" for i in range(n)
                                                 for m in "ab")
    with pytest.raises(ValueError, match=f"{n:,} data sets.*at most "
                                         f"{MAX_SCORE_DATASETS:,} .split the table"):
        read_scores_table(raw.encode())
    k = MAX_SCORE_METHODS + 1
    raw = "dataset,method,accuracy\n" + "".join(f"d{i},m{j},0.5\n" for i in range(2)
                                                 for j in range(k))
    with pytest.raises(ValueError, match=f"{k:,} methods.*keep the best"):
        read_scores_table(raw.encode())
    # the Bayesian test's pairs within the budget of pairs × data sets
    assert cv_summary.max_pair_methods(7) == cv_summary.MAX_PAIR_METHODS
    assert cv_summary.max_pair_methods(2000) == 5
    for sets in (2, 100, 444, 445, 2000):
        k = cv_summary.max_pair_methods(sets)
        assert k * (k - 1) // 2 * sets <= cv_summary.MAX_PAIR_CELLS or k == 2
    rng = np.random.default_rng(0)
    tab = pd.DataFrame({"dataset": np.repeat([f"d{i}" for i in range(2000)], 6),
                        "method": np.tile([f"m{j}" for j in range(6)], 2000),
                        "accuracy": rng.random(12000)})
    with pytest.raises(ValueError, match="choose at most 5"):
        cv_summary.over_datasets(tab, "accuracy", pair_methods=[f"m{j}" for j in range(6)],
                                 ranks=False)


def test_time_left_prices_each_method_by_its_own_fits_without_the_start_up():
    """issue 33 item 11: "about 6 min left" at 15 s for a run that ended at 61 s. A first fit
    of 10 s (compilation), then 1 s fits: the old mean gave 3x the time left."""
    from bnma_core.cv_summary import time_left

    methods, folds = ["nb", "tan", "bma10", "manb", "kdb2"], 10
    fits = [("nb", 10.0)] + [("nb", 1.0)] * 4  # 15 s, 5 of 50 fits done
    truth = 45 * 1.0
    left, rough = time_left(fits, methods, folds)
    assert left == pytest.approx(truth, rel=0.2) and rough
    assert remaining_seconds(5, 50, 15.0) > 2.5 * truth  # the former estimate
    # each method its own price: a slow method's folds cost its own fits, not the mean
    fits = [("nb", 0.1)] * 10 + [("bma10", 4.0)] * 3
    left, rough = time_left(fits, ["nb", "bma10"], 10, running_for=1.0)
    assert left == pytest.approx(7 * 4.0 - 1.0) and not rough
    assert time_left([("nb", 3.0)], ["nb"], 10) == (None, True)  # "estimating..."
