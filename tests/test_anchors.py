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
    for ds in ("contact-lenses", "iris", "breast-cancer"):
        got = np.mean([r["accuracy"] for r in an.run_method("aode", ds)])
        want = ref[(ref["dataset"] == ds) & (ref["method"] == "AODE")]["acc_mean"].item()
        assert got == pytest.approx(want, abs=1.5e-4), ds


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
    assert {k["dataset"] for k in quick} == set(ra.QUICK_DATASETS)
    assert [k["method"] for k in quick][0] == DEFAULT_METHOD
    assert len(quick) == len(ra.QUICK_DATASETS) * len({k["method"] for k in quick}) * 10
    full = ra.grid()
    assert {k["method"] for k in full} == set(available_methods())
    assert {k["dataset"] for k in full} == set(ra.DATASETS)
    assert len({tuple(sorted(k.items())) for k in full}) == len(full)


def test_cell_is_one_weka_fold_of_run_method():
    from bnma_core.reproduce import anchors as ra

    recs = an.run_method("nb", "iris")
    r = ra.cell({"dataset": "iris", "method": "nb", "fold": 3, "seed": 1})
    assert r["accuracy"] == recs[3]["accuracy"] and r["n_test"] == 15


def _summary(accs: dict[str, float], method: str) -> pd.DataFrame:
    folds = pd.DataFrame([{"dataset": d, "method": method, "fold": k, "accuracy": a,
                           "seconds": 0.1} for d, a in accs.items() for k in range(10)])
    return an.summarize(folds)


def test_target_claims_in_plain_sentences():
    from bnma_core.reproduce import anchors as ra
    from bnma_core.reproduce.report import NOT_CHECKABLE, NOT_REPRODUCED, REPRODUCED

    best = an.anchor_table().set_index("dataset")["best_anchor"]
    ahead = {d: best[d] + (0.01 if i < 4 else 0.0) for i, d in enumerate(ra.DATASETS)}
    ahead["contact-lenses"] = 0.90
    claims = ra.target_claims(_summary(ahead, "m"), "m")
    assert [c["status"] for c in claims] == [REPRODUCED] * 4
    assert "at least 6 of the 7" in claims[0]["claim"]
    behind = {d: best[d] - 0.02 for d in ra.DATASETS}
    claims = ra.target_claims(_summary(behind, "m"), "m")
    assert [c["status"] for c in claims] == [NOT_REPRODUCED] * 4
    assert "contact-lenses" in claims[0]["reason"]
    part = ra.target_claims(_summary({"iris": 0.9}, "m"), "m")
    assert [c["status"] for c in part] == [NOT_CHECKABLE] * 3
    assert "1 of the 7 datasets" in part[0]["reason"]


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
