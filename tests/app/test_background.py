"""Library-level tests of :mod:`bnma_ui.background` (issue 36 item 4): a closed session's run
stops within 2 s, a superseded run ends, work without stop checks is ended by force, one run
per session and a server-wide cap with a queue. Every wait is on a condition (events, joins),
never a fixed sleep."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest

from bnma_ui import background as bg

WAIT = 20.0  # upper bound of a condition wait (the assertions are on measured times)


def _busy_without_checks(run: bg.Run, started: threading.Event | None = None) -> str:
    """Work that never calls should_stop: short numpy calls in a Python loop (as a stacked
    fit's inner fits are), for up to a minute."""
    if started is not None:
        started.set()
    t_end = time.time() + 60
    a = np.random.default_rng(0).random((64, 64))
    while time.time() < t_end:
        a = np.tanh(a @ a)
    return "finished"


def _cooperative(run: bg.Run, started: threading.Event | None = None) -> str:
    if started is not None:
        started.set()
    while not run.should_stop():
        run._stop.wait(0.05)  # a chunk of work
    return "partial"


@pytest.fixture(autouse=True)
def _fast_watchdog(monkeypatch):
    monkeypatch.setattr(bg, "MAX_RUNNING", 2)
    yield
    with bg._ACTIVE_LOCK:
        left = list(bg._ACTIVE)
    for r in left:  # no run of a test outlives it
        r.request_stop("user", force_after=0.0)
        r.wait(WAIT)


def _run(name: str, session: str, alive=None) -> bg.Run:
    return bg.Run(name=name, session=session, session_alive=alive)


def test_a_closed_session_stops_work_without_stop_checks_within_2_s():
    """The watchdog sees the session disconnected, stops the run and ends the work that does
    not listen by force: over within 2 s of the tab closing."""
    connected = {"value": True}
    started = threading.Event()
    run = bg.launch(_run("patient_fit", "s1", lambda: connected["value"]),
                    lambda r: _busy_without_checks(r, started))
    assert started.wait(WAIT)
    closed = time.time()
    connected["value"] = False  # the tab was closed
    assert run.wait(WAIT)
    assert run.ended - closed <= 2.0, run.ended - closed
    assert run.stopped and run.reason == "closed" and run.forced >= 1
    assert run.result is None and run.error is None


def test_a_cooperative_run_returns_its_partial_result_without_force():
    connected = {"value": True}
    started = threading.Event()
    run = bg.launch(_run("compare", "s1", lambda: connected["value"]),
                    lambda r: _cooperative(r, started))
    assert started.wait(WAIT)
    connected["value"] = False
    assert run.wait(WAIT)
    assert run.result == "partial" and run.forced == 0 and run.reason == "closed"


def test_a_user_stop_leaves_time_for_a_partial_result_then_forces():
    started = threading.Event()
    run = bg.launch(_run("patient_fit", "s1", lambda: True),
                    lambda r: _busy_without_checks(r, started))
    assert started.wait(WAIT)
    t0 = time.time()
    run.request_stop("user", force_after=0.5)
    assert run.wait(WAIT)
    assert run.ended - t0 <= 2.0 and run.forced >= 1 and run.reason == "user"


def test_one_run_per_session_and_a_server_wide_cap_with_a_queue():
    """Two slots: a session's second run waits for its first; a third session waits for a
    slot, sees its place, and starts once one is free."""
    gates = {k: threading.Event() for k in ("a1", "b1", "c1")}
    began = {k: threading.Event() for k in ("a1", "a2", "b1", "c1")}

    def work(tag):
        def w(r):
            began[tag].set()
            while not gates.get(tag, threading.Event()).is_set() and not r.should_stop():
                gates.get(tag, r._stop).wait(0.05)
            return tag
        return w

    a1 = bg.launch(_run("compare", "A", lambda: True), work("a1"))
    assert began["a1"].wait(WAIT)
    a2 = bg.launch(_run("patient_fit", "A", lambda: True), work("a2"))
    b1 = bg.launch(_run("compare", "B", lambda: True), work("b1"))
    assert began["b1"].wait(WAIT)  # B's run passes A's waiting second run
    c1 = bg.launch(_run("compare", "C", lambda: True), work("c1"))
    assert a2.queued and c1.queued and not began["a2"].is_set()
    assert a2.session_busy_with() is a1
    assert "your run on the Compare methods page" in bg.busy_note(a2)
    assert c1.queue_position() is not None
    assert "number" in bg.busy_note(c1) and "queue" in bg.busy_note(c1)
    gates["b1"].set()  # a slot is free: C (A's second still waits for A's first)
    assert b1.wait(WAIT) and began["c1"].wait(WAIT)
    assert a2.queued
    gates["a1"].set()
    assert a1.wait(WAIT)
    assert began["a2"].wait(WAIT)
    gates["c1"].set()
    a2.request_stop("user")
    assert a2.wait(WAIT) and c1.wait(WAIT)


def test_a_stopped_run_leaves_the_queue_at_once():
    gate = threading.Event()

    def hold(r):
        while not gate.is_set() and not r.should_stop():
            gate.wait(0.05)

    first = bg.launch(_run("compare", "A", lambda: True), hold)
    waiting = bg.launch(_run("patient_fit", "A", lambda: True), lambda r: "never")
    assert waiting.queued
    waiting.request_stop("superseded")
    assert waiting.wait(WAIT) and waiting.result is None and waiting.admitted is None
    gate.set()
    assert first.wait(WAIT)


def test_late_polls_alone_do_not_stop_a_connected_run():
    connected = {"value": True}
    run = bg.Run(name="t", session_alive=lambda: connected["value"])
    t0 = run.heartbeat
    assert run.orphan_reason(now=t0 + bg.ORPHAN_SECONDS + 30) is None  # user still there
    connected["value"] = False
    assert run.orphan_reason(now=t0 + 31) is None  # first seen gone: a blip may reconnect
    assert run.orphan_reason(now=t0 + 31 + bg.CLOSED_SECONDS) == "closed"
    connected["value"] = True
    assert run.orphan_reason(now=t0 + 40) is None
    assert run.orphan_reason(now=t0 + bg.UNWATCHED_SECONDS + 1) == "unwatched"
    unknown = bg.Run(name="u")  # no runtime to ask (AppTest): the poll rule alone
    assert unknown.orphan_reason(now=unknown.heartbeat + bg.ORPHAN_SECONDS + 1) == "closed"


def test_a_finished_run_is_taken_once_by_two_script_runs_at_once():
    """Streamlit's fast reruns run a session's new script run while the old one goes on up to
    its next Streamlit call: both may take the finished run at the same moment. Exactly one
    of them gets it (issue 36 item 6: rapid row changes on the Patient page). The run below
    holds each reader of ``taken`` until the other has read it too (at most 0.5 s: with the
    lock the other cannot come), so both read "not taken" whenever the check and the mark
    are two steps."""
    gate = threading.Barrier(2, timeout=0.5)

    class Raced(bg.Run):
        @property
        def taken(self) -> bool:
            value = self._taken
            try:
                gate.wait()
            except threading.BrokenBarrierError:
                pass
            return value

        @taken.setter
        def taken(self, value: bool) -> None:
            self._taken = value

    run = Raced(name="t", ended=time.time())
    got = []
    threads = [threading.Thread(target=lambda: got.append(run.take())) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sum(r is not None for r in got) == 1


def test_two_script_runs_of_one_session_share_the_session_state_lock():
    """Streamlit's fast reruns: the old script run reads the session state (a widget's
    ``filtered_state``) while the new run starts (``on_script_will_rerun`` moves values
    into ``_old_state``). Each run wraps the state in its own ``SafeSessionState``; with a
    lock each, the read raised 'dictionary changed size during iteration' (issue 36 item 6,
    seen in a browser on 7be0454). The wrappers of one state now share one lock."""
    import sys

    from streamlit.proto.WidgetStates_pb2 import WidgetStates
    from streamlit.runtime.state.safe_session_state import SafeSessionState
    from streamlit.runtime.state.session_state import SessionState

    assert bg.share_session_state_lock()
    state = SessionState()
    for k in range(300):
        state[f"v{k}"] = k
    old_run = SafeSessionState(state, yield_callback=lambda: None)
    new_run = SafeSessionState(state, yield_callback=lambda: None)
    assert old_run._lock is new_run._lock
    done, ready = threading.Event(), threading.Barrier(2)

    def reruns() -> None:
        ready.wait()
        i = 0
        while not done.is_set():
            new_run[f"n{i % 50}"] = i
            new_run.on_script_will_rerun(WidgetStates())
            i += 1

    thread = threading.Thread(target=reruns, daemon=True)
    switch = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        thread.start()
        ready.wait()
        for _ in range(300):
            assert len(old_run.filtered_state) >= 300
    finally:
        done.set()
        sys.setswitchinterval(switch)
        thread.join()
