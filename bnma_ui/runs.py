"""Long runs with live progress and a Stop button — the old skeleton, being replaced.

**Use :mod:`bnma_ui.background` for new and migrated pages** (the Order-MCMC page uses it): the
work runs in a background thread, the script run ends at once and a fragment polls the progress,
so a Stop click reaches the server at once, even on a loaded machine. This module remains only
until the Compare page has moved over, then it is deleted.

The work runs in a worker thread that never calls Streamlit; the script thread polls it a few
times a second and redraws (progress bars, figures). A click on Stop (or leaving the page)
starts a new script run at once (Streamlit's fast reruns) while the old script thread is told
to stop at its next Streamlit call. The old thread then asks the worker to stop, waits for what
it has so far and hands it to ``on_finish`` (which stores it in a plain dict kept in
``st.session_state``; a stopping script may not call Streamlit, not even to set state). The new
run calls :func:`settle_previous_run` first: it asks a still-running worker to stop and waits
until that partial result is stored, so it can show it.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import streamlit as st

_SUFFIX = "__bnma_run"


def settle_previous_run(name: str, timeout: float = 120.0) -> None:
    """If a run started under ``name`` is still going, stop it and wait until its result has
    been handed to its ``on_finish``."""
    run = st.session_state.get(name + _SUFFIX)
    if run is None:
        return
    stop, done = run
    if not done.is_set():
        stop.set()
        with st.spinner("Stopping the run and keeping what it has so far..."):
            done.wait(timeout)


def run_with_stop(work: Callable[[Callable[[], bool]], Any], *,
                  on_tick: Callable[[], None] | None = None,
                  on_finish: Callable[[Any, bool], None] | None = None,
                  interval: float = 0.25, name: str = "run") -> Any:
    """Run ``work(should_stop)`` in a worker thread, ticking in the calling thread.

    Parameters
    ----------
    work : callable
        Receives ``should_stop()`` (True once a stop was requested) and returns a result; it
        must return promptly (with a partial result) once ``should_stop()`` is True.
    on_tick : callable, optional
        Called every ``interval`` seconds in the calling (script) thread while the work runs,
        and once at the end: the place for Streamlit calls (redraws).
    on_finish : callable, optional
        ``on_finish(result, stopped)`` after the work returned, also when the script was
        interrupted (then ``stopped`` is True). It must not call Streamlit, not even
        ``st.session_state[...] = ...`` (a stopping script raises there): store the result in
        a plain dict that lives in ``st.session_state`` and was fetched before the run.
    interval : float
        Seconds between ticks.
    name : str
        Key of this kind of run for :func:`settle_previous_run`.

    Returns
    -------
    The work's result. Exceptions raised by the work are re-raised here.
    """
    stop, done = threading.Event(), threading.Event()
    st.session_state[name + _SUFFIX] = (stop, done)
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["result"] = work(stop.is_set)
        except BaseException as exc:  # handed to the script thread
            box["error"] = exc

    worker = threading.Thread(target=target, name=f"bnma-{name}", daemon=True)
    worker.start()
    try:
        try:
            while worker.is_alive():
                if on_tick is not None:
                    on_tick()
                worker.join(interval)
        except BaseException:
            # Streamlit interrupted the script (Stop clicked, page left): stop the worker,
            # keep what it has, and let the interruption continue.
            stop.set()
            worker.join()
            if "error" not in box and on_finish is not None:
                on_finish(box.get("result"), True)
            raise
        if "error" in box:
            raise box["error"]
        if on_tick is not None:
            on_tick()
        if on_finish is not None:
            on_finish(box["result"], stop.is_set())
    finally:
        done.set()
    return box["result"]
