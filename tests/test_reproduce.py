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
    client.wait_for_workers(2, timeout=60)  # the nanny restarts the killed worker


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
    for paper, issue in (("santafe", 13), ("anchors", 16)):
        with pytest.raises(NotAvailable, match=f"issue {issue}"):
            load_paper(paper)
    r = subprocess.run([sys.executable, "-m", "bnma_core.reproduce", "santafe", "--quick"],
                       env=ENV, capture_output=True, text=True)
    assert r.returncode == 2 and "not yet available: issue 13" in r.stderr
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


def test_reports_page_lists_opens_and_runs(tmp_path):
    from streamlit.testing.v1 import AppTest

    from bnma_core.reproduce.runner import write_report

    run_grid("smoke", tmp_path, quick=True, workers=0)
    write_report("smoke", tmp_path, quick=True)
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    at.switch_page("pages/8_Reports.py")
    at.run()
    at.text_input(key="rep_out").set_value(str(tmp_path)).run()
    assert not at.exception
    assert at.selectbox(key="rep_choice").value == "smoke (quick)"
    assert list(at.dataframe[0].value["paper"]) == ["smoke"]
    at.selectbox(key="rep_paper").set_value("santafe").run()
    assert any("issue 13" in w.value for w in at.warning)
    at.selectbox(key="rep_paper").set_value("smoke")
    at.radio(key="rep_workers").set_value(0).run()
    at.button[0].click().run()
    deadline = time.monotonic() + 60
    while "reports_last" not in at.session_state and time.monotonic() < deadline:
        at.run()  # the fragment polls the background run; rerun until it has been taken
    assert not at.exception
    last = at.session_state["reports_last"]
    assert last["reused"] == 12 and last["computed"] == 0 and last["report"]
