"""The reproduction runner (issue 17): Dask grid, crash-safe store, resume, determinism, CLI.

One 2-worker ``LocalCluster`` (processes) is shared by the module; cells are tiny (the
``smoke`` paper), so the Dask tests take seconds once the workers are up.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import numpy as np
import pandas as pd
import pytest
from conftest import ROOT

from bnma_core.reproduce import (
    NotAvailable,
    ResultStore,
    cell_seed,
    key_id,
    load_paper,
    run_grid,
    smoke,
)
from bnma_core.reproduce.report import NOT_CHECKABLE, REPRODUCED, claim, claims_text, mean_ci
from bnma_core.reproduce.runner import write_report

ENV = {**os.environ, "PYTHONPATH": str(ROOT)}


@pytest.fixture(scope="module")
def cluster():
    from dask.distributed import Client, LocalCluster

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                      dashboard_address=":0", silence_logs=50) as lc, Client(lc) as client:
        client.run(lambda: __import__("bnma_core.reproduce.smoke"))  # warm the workers
        yield lc, client


def _results(out, paper="smoke") -> dict[str, dict]:
    cells = ResultStore(out, paper).cells()
    return dict(zip(cells["key_id"], cells["result"], strict=True))


def test_key_id_and_seed_depend_on_the_key_only():
    a = {"x": 1, "y": [1, 2], "name": "n"}
    b = {"name": "n", "y": [1, 2], "x": 1}
    assert key_id(a) == key_id(b) and cell_seed(a) == cell_seed(b)
    assert key_id(a) != key_id({**a, "x": 2}) and cell_seed(a) != cell_seed({**a, "x": 2})
    assert 0 <= cell_seed(a) < 2**32


def test_store_append_is_atomic_and_idempotent(tmp_path):
    st = ResultStore(tmp_path, "smoke")
    row = {"key_id": "abc", "key": {"a": 1}, "result": {"m": 0.5}, "seconds": 0.1,
           "worker": "w", "run_id": "r1", "code_version": "v", "machine": "m"}
    st.append(row)
    st.append({**row, "run_id": "r2"})  # a retried cell overwrites, never duplicates
    cells = st.cells()
    assert len(cells) == 1 and cells["key"][0] == {"a": 1} and cells["run_id"][0] == "r2"
    assert not list(st.cells_dir.glob("*.tmp")) and st.done_ids() == {"abc"}
    assert st.clear() == 1 and st.cells().empty


def test_smoke_grid_on_two_workers_and_rerun_skips(cluster, tmp_path):
    lc, _ = cluster
    s = run_grid("smoke", tmp_path, quick=True, scheduler=lc.scheduler_address)
    assert (s.n_cells, s.n_computed, s.n_skipped) == (12, 12, 0)
    cells = ResultStore(tmp_path, "smoke").cells()
    assert len(cells) == 12 and cells["key_id"].is_unique
    assert cells["worker"].nunique() >= 1 and (cells["seconds"] >= 0).all()
    assert (cells["cpu_seconds"] >= 0).all()
    again = run_grid("smoke", tmp_path, quick=True, scheduler=lc.scheduler_address)
    assert (again.n_computed, again.n_skipped) == (0, 12)
    fresh = run_grid("smoke", tmp_path, quick=True, scheduler=lc.scheduler_address, fresh=True)
    assert fresh.n_computed == 12
    runs = ResultStore(tmp_path, "smoke").runs()
    assert len(runs) == 3 and set(runs["status"]) == {"complete"}


def test_killed_worker_grid_completes_every_cell_once(cluster, tmp_path):
    lc, client = cluster
    pids = client.run(os.getpid)  # worker address -> pid
    keys = smoke.grid(n=10, hold=0.3)
    killed = []

    def on_cell(done, total, row):
        if done == 2 and not killed:  # both workers are busy with the next cells now
            pid = next(iter(pids.values()))
            os.kill(pid, signal.SIGKILL)
            killed.append(pid)

    s = run_grid("smoke", tmp_path, keys=keys, scheduler=lc.scheduler_address,
                 progress=on_cell)
    assert killed and s.n_computed == 10 and s.record["status"] == "complete"
    cells = ResultStore(tmp_path, "smoke").cells()
    assert sorted(cells["key_id"]) == sorted(key_id(k) for k in keys)
    client.wait_for_workers(2, timeout=300)  # the nanny restarts the killed worker (slow when busy)


def test_a_lost_result_is_resubmitted_a_cell_error_is_reported():
    from bnma_core.reproduce.runner import _collect

    class Fut:
        def __init__(self, status, exc=None, row=None):
            self.status, self.exc, self.row = status, exc, row

        def result(self):
            if self.exc:
                raise self.exc
            return self.row

    rows, failures = [], []
    assert _collect(Fut("finished", row={"a": 1}), rows.append, failures) and rows == [{"a": 1}]
    # distributed raised from the gather (worker lost meanwhile): not the cell's fault
    assert not _collect(Fut("pending", RuntimeError("bound to a different event loop")),
                        rows.append, failures) and failures == []
    assert _collect(Fut("error", ValueError("bad cell")), rows.append, failures)
    assert failures == ["ValueError: bad cell"] and len(rows) == 1


def test_killed_run_restarts_with_only_the_missing_cells(cluster, tmp_path):
    lc, _ = cluster
    cmd = [sys.executable, "-m", "bnma_core.reproduce", "smoke", "--scheduler",
           lc.scheduler_address, "--out", str(tmp_path), "--no-progress"]
    proc = subprocess.Popen(cmd, env=ENV, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    store = ResultStore(tmp_path, "smoke")
    deadline = time.monotonic() + 60
    while len(store.done_ids()) < 4 and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)  # polling for a condition, not a fixed wait
    proc.kill()
    proc.wait()
    before = store.cells()
    n_before = len(before)
    assert 4 <= n_before < 24, "the run finished before it could be killed"
    s = run_grid("smoke", tmp_path, scheduler=lc.scheduler_address)
    assert (s.n_skipped, s.n_computed) == (n_before, 24 - n_before)
    after = store.cells().set_index("key_id")
    assert len(after) == 24
    assert (after.loc[before["key_id"], "run_id"].to_numpy() == before["run_id"].to_numpy()).all()


def test_same_results_serially_with_one_and_two_workers(cluster, tmp_path):
    lc, _ = cluster
    keys = smoke.grid(n=8)
    run_grid("smoke", tmp_path / "serial", keys=keys, workers=0)
    run_grid("smoke", tmp_path / "two", keys=keys, scheduler=lc.scheduler_address)
    run_grid("smoke", tmp_path / "one", keys=keys[::-1], workers=1)  # own 1-worker cluster
    serial = _results(tmp_path / "serial")
    assert len(serial) == 8
    assert _results(tmp_path / "two") == serial == _results(tmp_path / "one")


def test_should_stop_cancels_and_a_rerun_resumes(tmp_path):
    s = run_grid("smoke", tmp_path, quick=True, workers=0, should_stop=lambda: len(
        ResultStore(tmp_path, "smoke").done_ids()) >= 5)
    assert s.stopped and s.n_computed == 5 and s.record["status"] == "stopped"
    with pytest.raises(ValueError, match="not finished"):
        write_report("smoke", tmp_path, quick=True)
    assert run_grid("smoke", tmp_path, quick=True, workers=0).n_computed == 7


def test_cli_pending_unknown_and_a_report(tmp_path):
    from bnma_core.reproduce import PENDING

    for paper, issue in PENDING.items():
        with pytest.raises(NotAvailable, match=f"issue {issue}"):
            load_paper(paper)
    pending = next(iter(PENDING.items()), None)  # papers leave PENDING as they are added
    if pending is not None:
        r = subprocess.run([sys.executable, "-m", "bnma_core.reproduce", pending[0], "--quick"],
                           env=ENV, capture_output=True, text=True)
        assert r.returncode == 2 and f"not yet available: issue {pending[1]}" in r.stderr
        assert "Traceback" not in r.stderr
    r = subprocess.run([sys.executable, "-m", "bnma_core.reproduce", "nosuchpaper"],
                       env=ENV, capture_output=True, text=True)
    assert r.returncode == 2 and "unknown paper" in r.stderr
    r = subprocess.run([sys.executable, "-m", "bnma_core.reproduce", "smoke", "--quick",
                        "--workers", "0", "--out", str(tmp_path), "--no-progress"],
                       env=ENV, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    html = (tmp_path / "smoke" / "report.html").read_text()
    assert r.stdout.strip().endswith("report.html") and "<table" in html


def test_papers_on_absent_data_say_so_before_running(tmp_path, monkeypatch):
    """A pip-installed package has no anchors folder and no subbagging data: `bnma reproduce`
    names the folder, the environment variable and exits 2 before planning a cell (it used to
    fail every anchors cell, and write an empty sugahara report)."""
    from bnma_core.reproduce import PAPERS, missing_inputs
    from bnma_core.reproduce import anchors as ra
    from bnma_core.reproduce import sugahara as rs

    for paper in ("hwang2005", "dash2002", "ukdb", "santafe", "smoke"):  # bundled data only
        assert missing_inputs(paper, quick=True) is None and missing_inputs(paper) is None
    assert set(PAPERS) == {"hwang2005", "dash2002", "ukdb", "santafe", "smoke", "anchors",
                           "sugahara"}
    none = tmp_path / "none"
    env = {**ENV, "BNMA_ANCHORS": str(none), "BNMA_SUGAHARA_DATA": str(none)}
    for paper, var in (("anchors", "BNMA_ANCHORS"), ("sugahara", "BNMA_SUGAHARA_DATA")):
        r = subprocess.run([sys.executable, "-m", "bnma_core.reproduce", paper, "--quick",
                            "--workers", "0", "--out", str(tmp_path), "--no-progress"],
                           env=env, capture_output=True, text=True)
        assert r.returncode == 2 and var in r.stderr and str(none) in r.stderr, r.stderr
        assert "Traceback" not in r.stderr and len(r.stderr.strip().splitlines()) == 1
        assert not (tmp_path / paper).exists()  # nothing planned, nothing stored
    monkeypatch.setattr(ra, "ANCHORS", none)
    monkeypatch.setenv("BNMA_SUGAHARA_DATA", str(none))
    assert "BNMA_ANCHORS" in missing_inputs("anchors") and "BNMA_SUGAHARA_DATA" in \
        missing_inputs("sugahara")
    partial = tmp_path / "partial"  # the folder is there, one data set's folds are not
    (partial / "data").mkdir(parents=True)
    (partial / "folds").mkdir()
    (partial / "results.csv").write_text("x\n")
    for d in ra.QUICK_DATASETS:
        (partial / "data" / f"{d}.csv").write_text("x\n")
        if d != "iris":
            (partial / "folds" / f"{d}.weka.txt").write_text("1\n")
    monkeypatch.setattr(ra, "ANCHORS", partial)
    assert "lacks the data or folds of iris" in missing_inputs("anchors", quick=True)
    (tmp_path / "sug").mkdir()
    (tmp_path / "sug" / rs.BY_NAME["iris"].file).write_text("x\n")
    monkeypatch.setenv("BNMA_SUGAHARA_DATA", str(tmp_path / "sug"))
    assert missing_inputs("sugahara", quick=True) is None  # the others are listed in the report


def test_report_helpers():
    m, h = mean_ci([1.0, 2.0, 3.0], 0.95)
    assert m == 2.0 and h == pytest.approx(2.4841377, rel=1e-6)  # t(0.975, 2) * 1 / sqrt(3)
    c = [claim("A holds", "1", "1.1", REPRODUCED),
         claim("B holds", "2", "not run", NOT_CHECKABLE, "not in this grid")]
    text = claims_text(c)
    assert text.startswith("Reproduced: A holds") and "Not checkable: B holds" in text
    with pytest.raises(ValueError):
        claim("x", "", "", "maybe")


def test_dash2002_cells_and_report():
    d = load_paper("dash2002")
    keys = d.grid(quick=True)
    full = {key_id(k) for k in d.grid(quick=False)}
    assert {key_id(k) for k in keys} <= full  # quick cells are reused by a full run
    sub = [k for k in keys if k["test"] == "nodes" and k["value"] == 5][:3]
    res = [d.cell(k) for k in sub]
    assert res == [d.cell(k) for k in sub]  # a cell is a function of its key
    cells = pd.DataFrame({"key": sub, "result": res, "seconds": 0.1, "worker": "w"})
    html = d.report(cells, {"config": d.config(True)})
    assert "Not checkable" in html and "plotly" in html


def test_roc_area_equals_sklearn_with_ties():
    from sklearn.metrics import roc_auc_score

    from bnma_core.reproduce.dash2002 import roc_area

    rng = np.random.default_rng(0)
    for n in (2, 5, 40, 300):
        pos = np.r_[True, False, rng.random(n - 2) < 0.3]
        score = rng.integers(0, 6, n) / 5  # many ties
        assert abs(roc_area(pos, score) - roc_auc_score(pos, score)) < 1e-12
        score = rng.random(n)
        assert abs(roc_area(pos, score) - roc_auc_score(pos, score)) < 1e-12
    with pytest.raises(ValueError, match="both classes"):
        roc_area(np.ones(3, bool), np.arange(3.0))


def test_dash2002_cells_equal_the_two_fit_implementation(monkeypatch):
    """The one-fit cell (MAP naive Bayes from the MANaiveBayes fit, Mann-Whitney ROC area)
    gives the results of the former cell (NaiveBayes fit + sklearn roc_auc_score) to 1e-9,
    on cells of every test."""
    from sklearn.metrics import roc_auc_score

    from bnma_core.classifiers.manb import MANaiveBayes
    from bnma_core.classifiers.naive_bayes import NaiveBayes

    d = load_paper("dash2002")

    def two_fits(Xtr, ytr, Xte, yte, ar):
        ma = MANaiveBayes(alpha=1.0, scoring="k2", arc_prior=0.5).fit(Xtr, ytr, arities=ar)
        nb = NaiveBayes(alpha=1.0).fit(Xtr, ytr, arities=ar)
        pos = yte == ma.classes_[1]
        return (float(roc_auc_score(pos, nb.predict_proba(Xte)[:, 1])),
                float(roc_auc_score(pos, ma.predict_proba(Xte)[:, 1])))

    keys = d.grid(quick=False)
    rng = np.random.default_rng(3)
    sub = [k for t in d.TESTS for k in rng.permutation(
        [k for k in keys if k["test"] == t and k["value"] <= 800])[:4]]
    new = [d.cell(k) for k in sub]
    monkeypatch.setattr(d, "compare_on", two_fits)
    old = [d.cell(k) for k in sub]
    for a, b in zip(new, old, strict=True):
        assert a["redraws"] == b["redraws"]
        for f in ("R", "R_hat", "Delta", "delta"):
            assert abs(a[f] - b[f]) < 1e-9


def test_hwang2005_thin_trace_keeps_ends_and_head():
    from bnma_core.reproduce.hwang2005 import thin_trace

    tr = pd.DataFrame({"chain": np.repeat([0, 1], 5000), "iteration": np.tile(
        np.arange(1, 5001), 2), "log2_score": np.arange(10000.0)})
    t = pd.DataFrame(thin_trace(tr, n_points=50, head=0.1))
    for c, g in t.groupby("chain"):
        assert g["iteration"].iloc[0] == 1 and g["iteration"].iloc[-1] == 5000
        assert g["iteration"].is_monotonic_increasing and g["iteration"].is_unique
        assert (g["iteration"] <= 500).sum() >= 50 and len(g) <= 100
        ref = tr[tr["chain"] == c].set_index("iteration")["log2_score"]
        assert (ref.loc[g["iteration"]].to_numpy() == g["log2_score"].to_numpy()).all()


def test_hwang2005_report_draws_fig5_and_checks_the_trace_claim():
    h = load_paper("hwang2005")
    base = {"class_variable": "CATECHOL", "n_test": 200, "n_iter": 600, "burn_in": 200,
            "n_orders": 5, "max_parents": 2, "missing_n_train": 500, "missing_pcts": [10]}
    keys = [{**base, "n_train": n, "rep": 0, "trace_points": 100} for n in (500, 1000)]
    keys.append({**base, "n_train": 500, "rep": 1})
    res = [h.cell(k) for k in keys]
    assert "trace" in res[0] and "trace" not in res[2]
    assert len(res[0]["trace"]["iteration"]) <= 200 and res[0]["trace"]["iteration"][-1] == 600
    s = res[0]["scores"]
    assert s["max_log2_after_burn_in"] >= s["mean_log2_after_burn_in"]
    cells = pd.DataFrame({"key": keys, "result": res, "seconds": 1.0, "worker": "w"})
    t = h.tables(cells)
    assert len(t["scores"]) == 3 and set(t["traces"]["n_train"]) == {500, 1000}
    claims = h.check_claims(t)
    assert "Fig. 5" in claims[0]["claim"] and claims[0]["status"] != NOT_CHECKABLE
    html = h.report(cells, {"config": h.config(True)})
    assert html.count("Fig. 5: log2 P(order, D)") == 2 and "Fig. 5: first 60 iterations" in html
    old = pd.DataFrame({"key": keys, "result": [{k: v for k, v in r.items()
                                                  if k not in ("scores", "trace")} for r in res],
                        "seconds": 1.0, "worker": "w"})  # cells stored before traces were kept
    assert h.check_claims(h.tables(old))[0]["status"] == NOT_CHECKABLE
    assert "rerun with --fresh" in h.report(old, {"config": h.config(True)})


def test_bundled_papers_declare_the_interface():
    for name in ("hwang2005", "dash2002", "ukdb", "smoke"):
        mod = load_paper(name)
        for attr in ("TITLE", "grid", "cell", "config", "report"):
            assert hasattr(mod, attr), (name, attr)
        keys = mod.grid(True)
        assert keys and len({key_id(k) for k in keys}) == len(keys)
        json.dumps(keys)


def test_a_failing_cell_is_reported_and_the_others_stored(cluster, tmp_path):
    lc, _ = cluster
    keys = [*smoke.grid(n=3), {**smoke.grid(n=1)[0], "fail": True}]
    for kw in ({"workers": 0}, {"scheduler": lc.scheduler_address}):
        s = run_grid("smoke", tmp_path / str(len(kw)) / next(iter(kw)), keys=keys, **kw)
        assert s.n_computed == 3 and s.record["status"] == "failed"
        assert s.failures == ["ValueError: this cell fails on purpose (runner test)"]


def test_reports_page_lists_opens_and_runs(tmp_path, monkeypatch):
    from streamlit.testing.v1 import AppTest

    from bnma_core.reproduce.runner import write_report
    from bnma_core.reproduce.store import RESULTS_ROOT_ENV

    run_grid("smoke", tmp_path, quick=True, workers=0)
    write_report("smoke", tmp_path, quick=True)
    monkeypatch.setenv(RESULTS_ROOT_ENV, str(tmp_path))  # the server's results folder
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    at.switch_page("pages/8_Reports.py")
    at.run()
    assert not at.exception
    assert at.selectbox(key="rep_choice").value == "smoke (quick)"
    assert list(at.dataframe[0].value["Paper"]) == ["smoke"]
    from bnma_core.reproduce import PENDING

    pending = next(iter(PENDING.items()), None)
    if pending is not None:
        at.selectbox(key="rep_paper").set_value(pending[0]).run()
        assert any(f"issue {pending[1]}" in w.value for w in at.warning)
    from bnma_core.reproduce import anchors as ra

    ra_anchors = ra.ANCHORS
    ra.ANCHORS = tmp_path / "no-anchors"  # the anchors folder is not part of the package
    try:
        at.selectbox(key="rep_paper").set_value("anchors").run()
        assert any("BNMA_ANCHORS" in w.value for w in at.warning)
        assert at.button[0].disabled
    finally:
        ra.ANCHORS = ra_anchors
    at.selectbox(key="rep_paper").set_value("smoke")
    at.radio(key="rep_workers").set_value(0).run()
    at.button[0].click().run()
    deadline = time.monotonic() + 60
    while "reports_last" not in at.session_state and time.monotonic() < deadline:
        at.run()  # the fragment polls the background run; rerun until it has been taken
    assert not at.exception
    last = at.session_state["reports_last"]
    assert last["reused"] == 12 and last["computed"] == 0 and last["report"]


# --- compaction of the store (many cells, one file) ------------------------------------------
def _fill(store: ResultStore, n: int, run_id: str = "r1", start: int = 0) -> None:
    for i in range(start, start + n):
        key = {"i": i}
        store.append({"key_id": key_id(key), "key": key, "result": {"v": i * 0.5},
                      "seconds": 0.1, "cpu_seconds": 0.05, "worker": "w", "run_id": run_id,
                      "code_version": "v", "machine": "m"})


def _by_key(store: ResultStore) -> dict[str, tuple]:
    cells = store.cells()
    assert cells["key_id"].is_unique, "a cell is stored twice"
    return {k: (r["v"], run) for k, r, run in zip(cells["key_id"], cells["result"],
                                                   cells["run_id"], strict=True)}


def test_compaction_folds_cells_into_one_part(tmp_path):
    st = ResultStore(tmp_path, "smoke")
    _fill(st, 30)
    before = _by_key(st)
    assert st.compact() == 30
    assert not st._cell_files() and len(st._parts()) == 1
    assert _by_key(st) == before and st.done_ids() == set(before)
    _fill(st, 5, start=30)
    assert st.compact() == 35 and len(st._parts()) == 1 and len(_by_key(st)) == 35
    assert set(st.cells({key_id({"i": 3}), key_id({"i": 33})})["key_id"]) == {
        key_id({"i": 3}), key_id({"i": 33})}
    assert st.compact() == 0  # nothing to fold
    assert st.clear() == 35 and st.cells().empty and not st.done_ids()


def test_a_cell_file_written_after_compaction_wins_over_the_part(tmp_path):
    st = ResultStore(tmp_path, "smoke")
    _fill(st, 4, run_id="old")
    st.compact()
    _fill(st, 1, run_id="new")  # the same key, stored again (a retried task)
    got = _by_key(st)
    assert len(got) == 4 and got[key_id({"i": 0})][1] == "new"
    st.compact()
    assert _by_key(st) == got


@pytest.mark.parametrize("fail_after", [0, 1, 8, 15])  # 16 files to delete
def test_compaction_interrupted_midway_loses_and_duplicates_nothing(tmp_path, monkeypatch,
                                                                    fail_after):
    from pathlib import Path

    st = ResultStore(tmp_path, "smoke")
    _fill(st, 25)
    st.compact()
    _fill(st, 15, start=25)  # one earlier part + 15 cell files
    before = _by_key(st)
    real_unlink, calls = Path.unlink, []

    def dying_unlink(self, missing_ok=False):
        if len(calls) >= fail_after:
            raise KeyboardInterrupt("killed during the deletions")
        calls.append(self)
        real_unlink(self, missing_ok=missing_ok)

    monkeypatch.setattr(Path, "unlink", dying_unlink)
    with pytest.raises(KeyboardInterrupt):
        st.compact()
    monkeypatch.setattr(Path, "unlink", real_unlink)
    assert len(st._parts()) >= 2  # the new part is there, some old files are left
    assert _by_key(st) == before and st.done_ids() == set(before)
    st.compact()  # the next compaction finishes the job
    assert len(st._parts()) == 1 and not st._cell_files() and _by_key(st) == before


def test_compaction_interrupted_before_the_rename_changes_nothing(tmp_path, monkeypatch):
    from bnma_core.reproduce import store as store_mod

    st = ResultStore(tmp_path, "smoke")
    _fill(st, 12)
    before = _by_key(st)

    def no_replace(src, dst):
        raise KeyboardInterrupt("killed before the rename")

    monkeypatch.setattr(store_mod.os, "replace", no_replace)
    with pytest.raises(KeyboardInterrupt):
        st.compact()
    monkeypatch.undo()
    assert not st._parts() and len(st._cell_files()) == 12 and _by_key(st) == before


def test_compaction_killed_by_sigkill_keeps_every_cell_once(tmp_path):
    st = ResultStore(tmp_path, "smoke")
    _fill(st, 400)
    before = _by_key(st)
    code = ("import sys; from bnma_core.reproduce import ResultStore; "
            "ResultStore(sys.argv[1], 'smoke').compact()")
    proc = subprocess.Popen([sys.executable, "-c", code, str(tmp_path)], env=ENV)
    deadline = time.monotonic() + 120
    while not st._parts() and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.002)  # polling for the part file, then kill at once
    proc.kill()
    proc.wait()
    assert _by_key(st) == before and st.done_ids() == set(before)
    st.compact()
    assert _by_key(st) == before and len(st._parts()) == 1


def test_old_cell_files_without_cpu_seconds_are_read(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    st = ResultStore(tmp_path, "smoke")
    old = {"key_id": "k0", "paper": "smoke", "key": '{"a":1}', "result": '{"m":1}',
           "seconds": 0.5, "worker": "w", "run_id": "r", "code_version": "v", "machine": "m",
           "finished": "t"}
    pq.write_table(pa.Table.from_pylist([old]), st.cells_dir / "k0.parquet")
    _fill(st, 2)
    cells = st.cells().set_index("key_id")
    assert len(cells) == 3 and np.isnan(cells.loc["k0", "cpu_seconds"])
    st.compact()
    assert len(st.cells()) == 3


def test_run_grid_compacts_as_it_goes_and_at_the_end(tmp_path):
    s = run_grid("smoke", tmp_path, quick=True, workers=0, compact_every=5)
    st = ResultStore(tmp_path, "smoke")
    assert s.n_computed == 12 and not st._cell_files() and len(st._parts()) == 1
    assert len(st.cells()) == 12 and run_grid("smoke", tmp_path, quick=True,
                                               workers=0).n_skipped == 12
    assert write_report("smoke", tmp_path, quick=True).exists()
