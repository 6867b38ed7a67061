"""``bnma reproduce sugahara`` (issues 12 and 17): the Table 1 grid as cells, run on the Dask
runner, stored, resumed, reported; the claims checked against the paper's own table."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from bnma_core.reproduce import sugahara as S
from bnma_core.reproduce.papers import PAPERS, PENDING, load_paper
from bnma_core.reproduce.runner import run_grid, write_report
from bnma_core.reproduce.store import ResultStore, key_id

QUICK_SETS = ["lenses", "mtx6", "iris"]


def _data_present() -> bool:
    return all((S.data_dir() / S.BY_NAME[d].file).exists() for d in QUICK_SETS)


needs_data = pytest.mark.skipif(not _data_present(), reason="shared Sugahara data absent")


def test_registered_and_no_longer_pending():
    assert "sugahara" in PAPERS and "sugahara" not in PENDING
    assert load_paper("sugahara") is S


@needs_data
def test_quick_grid_keys_carry_everything():
    keys = S.grid(quick=True)
    assert len(keys) == 3 * len(S.PAPER_METHODS) * 2
    assert len({key_id(k) for k in keys}) == len(keys)
    assert {k["dataset"] for k in keys} == set(QUICK_SETS)
    k = keys[0]
    for field in ("dataset", "file", "sha256", "continuous", "method", "registry", "params",
                  "fold", "folds", "seed", "apses"):
        assert field in k
    assert {k["apses"] for k in keys if k["method"] in ("kbestec100", "proposed")} == {True}
    assert not any(k["apses"] for k in keys if k["method"] not in S.APSES_METHODS)
    assert S.grid(quick=True) == keys                      # deterministic
    narrow = S.grid(datasets=["iris"], methods=["nb"], folds=3, seed=5)
    assert [(k["fold"], k["seed"]) for k in narrow] == [(0, 5), (1, 5), (2, 5)]


def test_grid_refuses_bad_arguments():
    with pytest.raises(ValueError, match="unknown data sets"):
        S.grid(datasets=["nope"])
    with pytest.raises(ValueError, match="methods"):
        S.grid(methods=["nope"])
    with pytest.raises(ValueError, match="folds must be >= 2"):
        S.grid(folds=1)


def test_absent_data_gives_an_empty_grid_and_a_plain_report(tmp_path, monkeypatch):
    monkeypatch.setenv("BNMA_SUGAHARA_DATA", str(tmp_path / "none"))
    assert S.grid(quick=True) == []
    assert S.missing_datasets(quick=True) == QUICK_SETS
    html = S.report(pd.DataFrame(columns=["key", "result", "seconds"]),
                    {"config": S.config(True)})
    assert "nothing was run" in html


@pytest.fixture(scope="module")
def quick_store(tmp_path_factory):
    """The quick grid (3 small data sets, 2 folds, 11 methods) run once in this process."""
    if not _data_present():
        pytest.skip("shared Sugahara data absent")
    out = tmp_path_factory.mktemp("reproduce")
    summary = run_grid("sugahara", out, quick=True, workers=0)
    return out, summary


def test_quick_grid_runs_every_cell(quick_store):
    out, summary = quick_store
    assert summary.failures == []
    assert summary.n_computed == summary.n_cells == 66
    f = S.fold_frame(ResultStore(out, "sugahara").cells())
    assert (f["error"] == "").all()
    assert (f["correct"] <= f["tested"]).all()
    assert f.groupby("dataset")["tested"].sum().to_dict() == {
        "lenses": 24 * 11, "mtx6": 64 * 11, "iris": 150 * 11}
    assert (f["cpu_seconds"] > 0).all()
    assert f.loc[f["method"].isin(S.APSES_METHODS), "apses"].between(0, 0.5).all()
    assert f.loc[f["method"].isin(S.PARENT_METHODS), "class_parents"].notna().all()


def test_resume_skips_finished_cells_and_dask_recomputes_identically(quick_store, tmp_path):
    out, _ = quick_store
    again = run_grid("sugahara", out, quick=True, workers=0)
    assert again.n_computed == 0 and again.n_skipped == 66
    # copy the store, lose two cells (randomized methods), rerun them on a Dask worker
    store = ResultStore(out, "sugahara")
    before = store.cells()
    copy = ResultStore(tmp_path, "sugahara")
    for _, row in before.iterrows():
        copy.append(row.to_dict())
    lost = [k for k in S.grid(quick=True) if k["method"] in ("proposed", "b_rai")
            and k["dataset"] == "lenses" and k["fold"] == 1]
    for k in lost:
        (copy.cells_dir / f"{key_id(k)}.parquet").unlink()
    resumed = run_grid("sugahara", tmp_path, quick=True, workers=1)
    assert resumed.n_computed == len(lost) == 2 and resumed.failures == []
    after = copy.cells()
    assert len(after) == 66 and after["key_id"].is_unique
    strip = ("fit_seconds", "predict_seconds", "cpu_seconds")
    old = {r.key_id: {a: b for a, b in r.result.items() if a not in strip}
           for r in before.itertuples()}
    new = {r.key_id: {a: b for a, b in r.result.items() if a not in strip}
           for r in after.itertuples()}
    assert new == old                      # same seed, same result, whatever the executor


def test_report_and_script_outputs(quick_store):
    out, summary = quick_store
    path = write_report("sugahara", out, quick=True, summary=summary)
    html = path.read_text()
    for text in ("within 2 SE", "Hommel", "Wilcoxon", "APSES", "Runtime", "Claims",
                 "KBestEC100", "plotly"):
        assert text in html
    from experiments import sugahara_table1 as t1

    assert t1.main(["--quick", "--workers", "0", "--out", str(out)]) == 0  # all reused
    tab = pd.read_csv(out / "sugahara" / "table1.csv").set_index("dataset")
    assert list(tab["N"]) == [24, 64, 150]
    for m in S.PAPER_METHODS:
        assert tab[m].between(0, 1).all() and tab[f"{m}_paper"].notna().all()
    md = (out / "sugahara" / "table1.md").read_text()
    assert "proposed vs" in md and "Claims:" in md
    assert len(pd.read_csv(out / "sugahara" / "folds.csv")) == 66


def _paper_as_folds(paper: pd.DataFrame) -> pd.DataFrame:
    """The printed Table 1 as a one-fold-per-cell frame (correct = accuracy × N)."""
    rows = []
    for d in paper.index:
        if d not in S.BY_NAME:
            continue
        for m in S.PAPER_METHODS:
            n = int(paper.loc[d, "rows"])
            rows.append({"dataset": d, "method": m, "fold": 0, "correct": paper.loc[d, m] * n,
                         "tested": n, "cpu_seconds": 1.0, "cell_seconds": 1.0,
                         "class_parents": paper.loc[d, f"parents_{m}"]
                         if m in S.PARENT_METHODS else np.nan,
                         "apses": paper.loc[d, f"apses_{m}"] if m in S.APSES_METHODS
                         else np.nan, "error": ""})
    return pd.DataFrame(rows)


def test_claims_on_the_papers_own_numbers_are_reproduced():
    paper = S.paper_table()
    s = S.summarize(_paper_as_folds(paper), paper, S.PAPER_METHODS)
    t = s["table"]
    for m in S.PAPER_METHODS:
        assert t[f"{m}_within_2se"].all()
        assert np.allclose(t[f"{m}_diff"], 0, atol=1e-12)
    assert len(s["complete"]) == 25                 # shuttle-small is not among our data sets
    p = s["tests"].set_index("method")["p_wilcoxon"]
    claims = {c["claim"]: c for c in S.check_claims(s)}
    avg = claims["average accuracy: proposed (subbagging) ≥ KBestEC100 ≥ EBN"]
    assert avg["status"] == "reproduced"
    best = claims["the proposed method has the best average accuracy of the 11 methods"]
    assert best["status"] == "reproduced"
    apses = [c for c in claims.values() if c["claim"].startswith("the APSES of the proposed")]
    assert apses[0]["status"] == "reproduced"
    assert p["eanb"] > 0.1 and p["kbestec100"] > 0.1 and p["ebn"] < 0.01


def test_a_refused_cell_shows_its_limit_in_the_table():
    f = pd.DataFrame([
        {"dataset": "zoo", "method": "ebn", "fold": 0, "correct": 9, "tested": 10,
         "cpu_seconds": 1.0, "cell_seconds": 1.0, "class_parents": 1.0, "apses": np.nan,
         "error": ""},
        {"dataset": "zoo", "method": "kbestec100", "fold": 0, "correct": 0, "tested": 0,
         "cpu_seconds": 0.1, "cell_seconds": 0.1, "class_parents": np.nan, "apses": np.nan,
         "error": "17 variables exceed the limit of 16 for K = 100"}])
    s = S.summarize(f, None, ["ebn", "kbestec100"])
    w = S.comparison_table(s, ["ebn", "kbestec100"])
    assert w.loc[0, "KBestEC100"].startswith("limit: 17 variables")
    assert w.loc[0, "EBN"] == "0.9000"


def test_a_partial_grid_is_marked_not_averaged():
    rows = [{"dataset": "iris", "method": m, "fold": k, "n_folds": 3, "correct": 40,
             "tested": 50, "cpu_seconds": 1.0, "cell_seconds": 1.0, "class_parents": 1.0,
             "apses": 0.01, "error": ""} for m in ("ebn", "proposed") for k in range(3)]
    f = pd.DataFrame(rows[:-1])                      # proposed: fold 2 not finished
    s = S.summarize(f, None, ["ebn", "proposed"])
    assert s["accuracy"].loc["iris", "ebn"] == pytest.approx(0.8)
    assert np.isnan(s["accuracy"].loc["iris", "proposed"]) and len(s["complete"]) == 0
    assert S.comparison_table(s, ["ebn", "proposed"]).loc[0, "proposed"] == (
        "only 2 of 3 folds finished")
    assert list(s["errors"].columns) == ["dataset", "method", "error"]


@needs_data
def test_a_diagnostic_method_alone_gets_a_report(tmp_path):
    """Only a method outside the paper's columns (B-RAI with the reference code's CMI test):
    the report is written without the ours-vs-paper figure (this crashed before)."""
    from experiments import sugahara_table1 as t1

    assert t1.main(["--methods", "b_rai_cmi", "--datasets", "lenses", "--workers", "0",
                    "--out", str(tmp_path)]) == 0
    html = (tmp_path / "sugahara" / "report_subset.html").read_text()
    assert "b_rai_cmi" in html and "Ours vs the paper" not in html
