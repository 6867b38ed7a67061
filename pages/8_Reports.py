"""Reports: the stored paper reproductions (``bnma reproduce``), their HTML reports, and a quick
reproduction started from the browser with progress and Stop."""

from __future__ import annotations

import streamlit as st

st.set_page_config(page_title="Reports · BNMA Studio", page_icon=":material/description:",
                   layout="wide")

from pathlib import Path

import pandas as pd
import streamlit.components.v1 as components

from bnma_core.reproduce import PAPERS, PENDING, ResultStore, load_paper, missing_inputs
from bnma_core.reproduce.cli import DEFAULT_OUT
from bnma_core.reproduce.runner import run_grid, write_report
from bnma_core.reproduce.store import RESULTS_ROOT_ENV, inside, results_root, store_folder
from bnma_ui import ROOT, background
from bnma_ui.state import persistent, remember
from bnma_ui.widgets import equations, what_am_i_looking_at

RUN = "reproduce"
STATE = "reports_last"
RUN_COLUMNS = {  # the stored run records, in words
    "paper": "Paper", "quick": "Quick grid", "status": "Status", "n_cells": "Cells",
    "n_computed": "Computed", "n_skipped": "Reused from earlier runs", "wall_seconds": "Time (s)",
    "workers": "Helper processes", "started": "Started", "code_version": "Code version",
    "run_id": "Run",
}
SHOWN = [*(p for p in PAPERS if p != "smoke"), "smoke"]  # smoke: the runner self-test

st.title("Reports: paper reproductions")
what_am_i_looking_at(
    "Each paper behind BNMA Studio is reproduced by one command, `bnma reproduce PAPER`: its "
    "experiment is a **grid** of independent **cells** (one data set × method × fold × "
    "repetition each), run in parallel on **Dask** and stored one by one, so an interrupted "
    "run resumes where it stopped. The result is one **HTML report** per paper: the paper's "
    "numbers beside ours with confidence intervals, the settings, the run time and machine, "
    "and one plain sentence per claim — *reproduced*, *not reproduced* (with the reason "
    "found) or *not checkable*.\n\n"
    "- **Stored runs**: every run of the store folder (inside the server's results folder), "
    "with how many cells it computed and how many it reused.\n"
    "- **Open a report**: read it here or download it (it opens without internet).\n"
    "- **Quick reproduction**: the smoke-size grid of a paper, a few minutes; the full grids "
    "take hours and are meant for the command line.")
equations(
    "A cell's random seed is derived from its key alone, "
    "$\\text{seed} = \\mathrm{SHA256}(\\text{key})\\ \\mathrm{mod}\\ 2^{32}$, so the results "
    "do not depend on which worker ran it or when. Confidence intervals are Student-t: "
    "$\\bar x \\pm t_{1-\\alpha/2,\\,n-1}\\, s / \\sqrt{n}$ (95 %, or 99 % where the paper "
    "used 99 %).")

root = results_root(ROOT / DEFAULT_OUT)  # a server setting; nothing is created to look


def shown(path: Path) -> str:
    """A path as the page shows it: relative to the results folder (no server paths)."""
    rel = path.relative_to(root) if path.is_relative_to(root) else None
    return "the results folder" if rel in (None, Path(".")) else f"`{rel}`"


typed = st.text_input("Store folder", key=persistent("rep_out", ""),
                      help="A folder inside the results folder, where `bnma reproduce --out` "
                           "keeps cells, runs and reports; empty: the results folder itself. "
                           f"The server sets the results folder ({RESULTS_ROOT_ENV}).")
remember("rep_out")
try:
    out = store_folder(root, typed)
except ValueError as e:
    st.error(str(e))
    out = root

# --- stored runs -------------------------------------------------------------------------------
st.subheader("Stored runs")
frames = []
reports: dict[str, tuple[ResultStore, str]] = {}
for paper in PAPERS:
    if not (out / paper).is_dir() or not inside(root, out / paper):
        continue
    store = ResultStore(out, paper, create=False)
    runs = store.runs()
    if len(runs):
        frames.append(runs)
    for grid in ("quick", "full"):  # only reports this program wrote (the store's manifest)
        if (store.dir / f"report_{grid}.html").is_file():
            reports[f"{paper} ({grid})"] = (store, f"report_{grid}.html")
if frames:
    runs = pd.concat(frames, ignore_index=True)
    cols = [c for c in RUN_COLUMNS if c in runs]
    st.dataframe(runs[cols].rename(columns=RUN_COLUMNS), hide_index=True, width="stretch")
else:
    st.info(f"No stored runs in {shown(out)} yet. Start a quick reproduction below, or run "
            "`bnma reproduce PAPER --quick` from the repository folder.")

# --- open a report -------------------------------------------------------------------------------
st.subheader("Open a report")
data = None
if reports:
    choice = st.selectbox("Report", list(reports), key="rep_choice")
    data = reports[choice][0].read_report(reports[choice][1])
    if data is None:
        st.warning(f"{choice}: this report was not written by BNMA Studio, or was changed "
                   "since; it is not shown. Run the reproduction again to rewrite it.")
if data is not None:
    c1, c2 = st.columns([1, 4])
    c1.download_button("Download HTML", data, file_name=f"{choice.split()[0]}_report.html",
                       mime="text/html", help="Self-contained: opens without internet.")
    if c2.toggle("Show it here", key="rep_show", help="The report embeds plotly.js (~5 MB)."):
        components.html(data.decode("utf-8"), height=900, scrolling=True)
elif not reports:
    st.caption("No report yet.")

# --- quick reproduction ----------------------------------------------------------------------
st.subheader("Quick reproduction")
c1, c2 = st.columns(2)
paper = c1.selectbox("Paper", SHOWN + list(PENDING), key=persistent("rep_paper", SHOWN[0]),
                     format_func=lambda p: f"{p} — not yet available in this version"
                     if p in PENDING else f"{p} — {load_paper(p).TITLE}")
workers = c2.radio("Workers", [0, 1, 2], index=1, horizontal=True, key="rep_workers",
                   format_func=lambda w: "in the app" if w == 0 else f"{w} helper process"
                   + "es" * (w > 1),
                   help="Helper processes on this machine (Dask workers; 'in the app': the "
                        "app's own process). "
                        "The machine is shared: one worker is the polite choice.")
remember("rep_paper")
pending = paper in PENDING
if pending:
    st.warning(f"{paper}: not yet available in this version. Nothing to run.")
else:  # data that is not part of the package (anchors, the subbagging paper's files)
    absent = missing_inputs(paper, quick=True)
    if absent:
        st.warning(absent)
        pending = True

active = background.current(RUN)
running = active is not None and not active.done
b1, b2, _ = st.columns([1, 1, 8], gap="small")
go = b1.button("Run", type="primary", disabled=pending or running,
               help="Run the paper's quick grid; finished cells are kept, a rerun reuses them.")
stop = b2.button("Stop", disabled=not running, help="Stop after the cells already running.")


def draw_live(r: background.Run) -> None:
    done, total = r.events[-1] if r.events else (0, 1)
    st.progress(done / max(total, 1), text=f"{r.meta['paper']}: {done} of {total} cells, "
                f"{r.seconds:.0f} s")
    note = background.busy_note(r)
    if note:
        st.caption(note)


if go and not pending:
    def work(r: background.Run, paper=paper, workers=int(workers), out=out) -> dict:
        s = run_grid(paper, out, quick=True, workers=workers,
                     progress=lambda done, total, row: r.report((done, total)),
                     should_stop=r.should_stop)
        done = s.n_computed + s.n_skipped
        r.report((done, s.n_cells))
        path = write_report(paper, out, True, s) if done == s.n_cells else None
        return {"summary": s, "report": path}

    background.start(RUN, work, key=(paper, str(out)), meta={"paper": paper})
    st.rerun()
if stop:
    background.stop(RUN)

finished = background.current(RUN)
finished = finished.take() if finished is not None else None
if finished is not None:
    if finished.error is not None:
        st.session_state[STATE] = {"error": f"{type(finished.error).__name__}: "
                                            f"{finished.error}"}
    else:
        s = finished.result["summary"]
        st.session_state[STATE] = {
            "paper": s.paper, "computed": s.n_computed, "reused": s.n_skipped,
            "total": s.n_cells, "seconds": s.wall_seconds, "stopped": s.stopped,
            "failures": s.failures, "report": finished.result["report"]}
last = st.session_state.get(STATE)
if last:
    if "error" in last:
        st.error(f"The run failed: {last['error']}")
    else:
        msg = (f"{last['paper']}: {last['computed']} cells computed, {last['reused']} reused, "
               f"{last['seconds']:.0f} s.")
        if last["report"]:
            st.success(msg + f" Report written: {shown(Path(last['report']))} (open it "
                       "above).")
        else:
            st.warning(msg + f" {last['total'] - last['computed'] - last['reused']} cells are "
                       "missing" + (" (stopped)" if last["stopped"] else "")
                       + "; run again to finish them.")
        for f in last["failures"][:3]:
            st.error(f"A cell failed: {f}")
background.live(RUN, draw_live, interval=1.0)
