"""Smoke-size runs of the UKDB experiments (WBC case study, bias-variance)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from experiments import bias_variance as bv
from experiments import ukdb_wbc


def test_cmi_variants_find_the_paper_value():
    t = ukdb_wbc.cmi_variants()
    assert len(t) == 12
    best = t.loc[t["abs_diff_to_paper"].idxmin()]
    assert best["rows"].startswith("complete") and best["log_base"].startswith("2")
    assert best["smoothing"] == "0" and best["largest_cmi"] == pytest.approx(0.4744)
    assert (t["largest_pair"] == "cell_size / cell_shape").all()


def test_case_study_instances_differ():
    ex = ukdb_wbc.case_study(rows=(23,))
    e = ex[23]
    assert e.instance["bare_nuclei"] is None
    dom = {(a, b) for a, b, r in e.domain_graph.edges(data="role") if r == "parent"}
    per = {(a, b) for a, b, r in e.personalized_graph.edges(data="role") if r == "parent"}
    assert dom != per
    assert e.classes[int(np.argmax(e.posterior_ensemble))] == "malignant"


def test_win_draw_loss_counts():
    res = pd.DataFrame({
        "dataset": ["a", "a", "b", "b", "c", "c"],
        "method": ["ukdb2", "kdb2"] * 3,
        "error": [0.1, 0.2, 0.3, 0.3005, 0.5, 0.4],
        "bias2": [0.1, 0.1, 0.1, 0.1, 0.1, 0.1],
        "variance": [0.0, 0.1, 0.2, 0.1, 0.0, 0.0]})
    w = bv.win_draw_loss(res, pairs=(("ukdb2", "kdb2"),), tolerance=0.001)
    row = w.set_index("metric").loc["error"]
    assert (row["win"], row["draw"], row["loss"]) == (1, 1, 1)
    row = w.set_index("metric").loc["variance"]
    assert (row["win"], row["draw"], row["loss"]) == (1, 1, 1)


def test_datasets_skip_absent_files(tmp_path):
    d = bv.datasets(shared=tmp_path / "nowhere")
    assert list(d) == ["wbc"]


@pytest.mark.slow
def test_smoke_runs(tmp_path):
    folds, table = ukdb_wbc.cv_table(folds=2, ks=(1,), sensitivity=False)
    assert set(table["method"]) == {"nb", "tan", "kdb1", "ukdb_l1", "ukdb_p1", "ukdb1"}
    assert (table["zero_one_loss"] < 0.2).all()


@pytest.mark.slow
def test_bias_variance_smoke_on_shared_data(tmp_path, shared_data):
    """lenses.csv lives in the shared data folder next to the repository (skipped when absent)."""
    kw = dict(methods=("nb", "kdb1", "ukdb1"), n_repeats=2, names=["lenses"], shared=shared_data)
    tables = bv.run(tmp_path, **kw)
    assert (tmp_path / "bias_variance.csv").exists()
    r = tables["results"]
    assert np.allclose(r["error"], r["bias2"] + r["variance"])
    again = bv.run(None, **kw)
    assert np.array_equal(again["results"]["error"], r["error"])  # seeds reproduce


def test_bias_variance_smoke_on_bundled_wbc(tmp_path):
    """Runs in a bare clone: WBC only, one fast method."""
    tables = bv.run(tmp_path, methods=("nb",), n_repeats=2, names=["wbc"],
                    shared=tmp_path / "nowhere")
    r = tables["results"]
    assert list(r["dataset"].unique()) == ["wbc"] and (tmp_path / "bias_variance.csv").exists()
    assert np.allclose(r["error"], r["bias2"] + r["variance"])
