"""Anchors experiment (issue 16): Weka's folds, the comparison table, and AODE against Weka's.

Skips cleanly when the shared anchors folder next to the repository is absent."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from experiments import anchors as an

pytestmark = pytest.mark.skipif(not (an.ANCHORS / "results.csv").exists(),
                                reason="shared anchors folder (../shared/anchors) is absent")


def test_load_matches_weka_folds():
    X, y, ar, folds = an.load("contact-lenses")
    assert X.shape == (24, 4) and len(y) == 24 and sorted(set(folds)) == list(range(10))
    assert (X.max(axis=0) < ar).all() and (X >= 0).all()
    # Weka's stratified folds: every fold of wbc holds about a tenth of each class
    _, y, _, folds = an.load("wbc")
    per_fold = pd.crosstab(folds, y).to_numpy()
    assert (per_fold.max(axis=0) - per_fold.min(axis=0) <= 1).all()


def test_aode_reproduces_weka_fold_for_fold():
    """Our AODE (Laplace estimates, frequency limit 1) gives Weka 3.6's AODE accuracy on the
    same folds (the anchors' acc_mean to its 4 printed decimals; breast-cancer differs by 8.5e-5,
    less than one test row in one fold, 1/28 / 10 = 3.6e-3)."""
    ref = pd.read_csv(an.ANCHORS / "results.csv")
    proba = pd.read_csv(an.ANCHORS / "proba_results.csv")
    for ds in ("contact-lenses", "iris", "breast-cancer"):
        recs = an.run_method("aode", ds)
        got = np.mean([r["accuracy"] for r in recs])
        want = ref[(ref["dataset"] == ds) & (ref["method"] == "AODE")]["acc_mean"].item()
        assert got == pytest.approx(want, abs=1.5e-4), ds
        if ds != "breast-cancer":  # same predictions as Weka's: same log-loss and Brier score
            w = proba[(proba["dataset"] == ds) & (proba["method"] == "AODE")].iloc[0]
            assert np.mean([r["log_loss"] for r in recs]) == pytest.approx(
                w["logloss_mean"], abs=1e-6), ds
            assert np.mean([r["brier"] for r in recs]) == pytest.approx(
                w["brier_mean"], abs=1e-6), ds


def test_smoke_table(tmp_path):
    res = an.run(tmp_path, methods=["nb", "aode"], datasets=["contact-lenses", "iris"])
    s = res["summary"]
    assert len(s) == 4 and set(s["result"]) <= {"win", "tie", "loss"}
    assert (tmp_path / "table.md").read_text().count("\n") == 2 + 2 + 2
    # the naive Bayes with alpha 1 is within fold noise of Weka's (alpha 0.5)
    nb = s[(s["method"] == "nb") & (s["dataset"] == "iris")].iloc[0]
    assert nb["acc_mean"] == pytest.approx(0.7133, abs=0.02)
    assert abs(nb["diff_to_best"] - (nb["acc_mean"] - nb["best_anchor"])) < 1e-12
    again = an.run(None, methods=["nb"], datasets=["iris"])
    assert again["folds"]["accuracy"].tolist() == res["folds"].query(
        "method == 'nb' and dataset == 'iris'")["accuracy"].tolist()


def test_win_tie_loss_uses_half_a_point():
    folds = pd.DataFrame({"dataset": ["iris"] * 3, "method": ["a", "b", "c"], "fold": 0,
                          "accuracy": [0.8133 + 0.006, 0.8133 - 0.004, 0.8133 - 0.006],
                          "seconds": 0.1})
    s = an.summarize(folds)
    assert s["result"].tolist() == ["win", "tie", "loss"]


# --- bnma reproduce anchors (the same functions as a grid of cells) ---------------------------
def test_grid_keys_quick_and_full():
    from bnma_core.classifiers.registry import DEFAULT_METHOD, available_methods
    from bnma_core.reproduce import anchors as ra

    quick = ra.grid(quick=True)
    # the recommended method on all seven (the target is checkable), the others on three
    assert {k["dataset"] for k in quick if k["method"] == DEFAULT_METHOD} == set(ra.DATASETS)
    assert {k["dataset"] for k in quick if k["method"] != DEFAULT_METHOD} == set(
        ra.QUICK_DATASETS)
    assert [k["method"] for k in quick][0] == DEFAULT_METHOD
    n_others = len({k["method"] for k in quick}) - 1
    assert len(quick) == (len(ra.DATASETS) + len(ra.QUICK_DATASETS) * n_others) * 10
    assert len({tuple(sorted(k.items())) for k in quick}) == len(quick)
    full = ra.grid()
    assert {k["method"] for k in full} == set(available_methods())
    assert {k["dataset"] for k in full} == set(ra.DATASETS)
    assert len({tuple(sorted(k.items())) for k in full}) == len(full)


def test_cell_is_one_weka_fold_of_run_method():
    from bnma_core.reproduce import anchors as ra

    recs = an.run_method("nb", "iris")
    r = ra.cell({"dataset": "iris", "method": "nb", "fold": 3, "seed": 1})
    assert r["accuracy"] == recs[3]["accuracy"] and r["n_test"] == 15


def _summary(accs: dict[str, float], method: str, loglosses: dict[str, float] | None = None
             ) -> pd.DataFrame:
    folds = pd.DataFrame([{"dataset": d, "method": method, "fold": k, "accuracy": a,
                           "log_loss": (loglosses or {}).get(d, np.nan), "seconds": 0.1}
                          for d, a in accs.items() for k in range(10)])
    return an.summarize(folds)


def _best_loglosses() -> pd.Series:
    conf = an.anchor_configurations()
    return conf.pivot_table(index="method", columns="dataset", values="logloss_mean").min()


def test_anchor_configurations_drop_the_cache_duplicates():
    conf = an.anchor_configurations()
    assert not conf["method"].str.contains("noADTree").any()
    k2 = conf[conf["method"] == "Weka BayesNet-K2-P3-N"]
    assert len(k2) == 7 and k2["logloss_mean"].mean() == pytest.approx(0.4844, abs=5e-5)
    assert _best_loglosses()["wbc"] == pytest.approx(0.1026, abs=5e-5)


def test_target_claims_in_plain_sentences():
    from bnma_core.reproduce import anchors as ra
    from bnma_core.reproduce.report import NOT_CHECKABLE, NOT_REPRODUCED, REPRODUCED

    best_acc = an.anchor_table().set_index("dataset")["best_anchor"]
    best_ll = _best_loglosses()
    ahead = {d: best_acc[d] + 0.01 for d in ra.DATASETS}
    claims = ra.target_claims(_summary(ahead, "m", {d: best_ll[d] - 0.001
                                                    for d in ra.DATASETS}), "m")
    assert [c["status"] for c in claims] == [REPRODUCED] * 3
    assert "lower mean log-loss" in claims[0]["claim"] and "Bayesian signed-rank" in \
        claims[0]["reason"]
    assert "at least 5 of the 7" in claims[1]["claim"] and claims[1]["ours"].startswith("7 of 7")
    assert "accuracy rank" in claims[2]["claim"] and "place 1 of" in claims[2]["ours"]
    # behind on four datasets by more than 0.02, and less accurate than every configuration
    behind = {d: best_acc[d] - 0.3 for d in ra.DATASETS}
    ll = {d: best_ll[d] + (0.05 if i < 4 else 0.0) for i, d in enumerate(ra.DATASETS)}
    claims = ra.target_claims(_summary(behind, "m", ll), "m")
    assert [c["status"] for c in claims[:2]] == [REPRODUCED, NOT_REPRODUCED]
    assert claims[2]["status"] == NOT_REPRODUCED
    assert claims[1]["ours"].startswith("3 of 7") and "wbc (+0.050)" in claims[1]["ours"]
    # no log-loss stored (cells of an older run) or a partial grid: not checkable
    for summary in (_summary(ahead, "m"), _summary({"iris": 0.9}, "m", {"iris": 0.4})):
        part = ra.target_claims(summary, "m")
        assert [c["status"] for c in part] == [NOT_CHECKABLE] * 3
        assert "--fresh" in part[0]["reason"]


def test_comparison_table_has_every_configuration_and_the_verdicts():
    from bnma_core.reproduce import anchors as ra

    best_acc = an.anchor_table().set_index("dataset")["best_anchor"]
    best_ll = _best_loglosses()
    tab = ra.comparison_table(_summary({d: best_acc[d] for d in ra.DATASETS}, "m",
                                       {d: best_ll[d] for d in ra.DATASETS}), "m")
    conf = an.anchor_configurations().dropna(subset=["acc_mean"])
    assert len(tab) == int((conf.groupby("method").size() == 7).sum()) + 1  # complete + ours
    me = tab.set_index("method").loc["m"]
    assert me["within_0.02"] == 7 and tab["logloss_mean"].idxmin() == 0
    assert tab.iloc[0]["method"] == "m"
    k2 = tab.set_index("method").loc["Weka BayesNet-K2-P3-N"]
    assert k2[["ll_p_ours", "ll_p_equivalent", "ll_p_theirs"]].sum() == pytest.approx(1.0)
    assert np.isnan(tab.set_index("method").loc["pyAgrum TAN/s0.5/thr", "logloss_mean"])
    with pytest.raises(ValueError, match="needs all seven"):
        ra.comparison_table(_summary({"iris": 0.9}, "m", {"iris": 0.4}), "m")


def test_reproduce_cells_store_and_report(tmp_path):
    from bnma_core.classifiers.registry import DEFAULT_METHOD
    from bnma_core.reproduce.runner import run_grid, write_report

    keys = [{"dataset": "iris", "method": m, "fold": k, "seed": 1}
            for m in ("nb", "aode") for k in range(10)]
    s = run_grid("anchors", tmp_path, workers=0, keys=keys)
    assert s.n_computed == 20 and not s.failures
    path = write_report("anchors", tmp_path, keys=keys)
    html = path.read_text()
    assert "Weka" in html and "pyAgrum" in html and "iris" in html
    assert "Ceilings" in html and "fold_oracle" in html  # what the data allow
    assert f"recommended method ({DEFAULT_METHOD})" in html
    assert "Not checkable" in html  # the default method did not run in these cells
    again = run_grid("anchors", tmp_path, workers=0, keys=keys)
    assert again.n_computed == 0 and again.n_skipped == 20


def test_missing_anchors_folder_is_a_plain_error(tmp_path):
    from bnma_core.reproduce import anchors as ra

    with pytest.raises(FileNotFoundError, match="no anchors at"):
        ra.load("iris", tmp_path)
    with pytest.raises(ValueError, match="Unknown method 'magic'"):
        ra.run(None, ["magic"], ["iris"])
