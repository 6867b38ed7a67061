"""Long runs in a background thread, shown live by a polling fragment, stopped within a second.

The one skeleton every page uses for "configure -> run with progress and Stop -> show":

1. On *Run*, the page calls :func:`start` with a ``work(ctx)`` function. The work runs in a
   daemon thread that never calls Streamlit; it reports progress with ``ctx.report(event)`` and
   polls ``ctx.should_stop()`` between short chunks of work (a few thousand MCMC iterations, one
   cross-validation fold), then returns its (possibly partial) result.
2. The script run ends at once, so the browser stays responsive: a click on *Stop* reaches the
   server immediately, also when many sessions share two cores. While the work runs,
   :func:`live` draws the progress from a fragment re-run every ``interval`` seconds (only the
   fragment is redrawn, charts keep their keys and update in place).
3. When the work ends the fragment triggers one full rerun; the page then takes the result with
   :meth:`Run.take` and shows it. *Stop* calls :func:`stop`, which signals the work and waits
   (briefly) for its partial result.

A run nobody watches any more stops itself, so no thread is left running behind a closed tab:
once its fragment has not polled it for ``ORPHAN_SECONDS`` *and* its browser session is no
longer connected (the tab was closed). Late polls alone do not stop a run: a browser busy
drawing (many sessions on two cores) can delay the fragment's timer by many seconds, and the
run of a user who is still there must go on (and stay stoppable). A user who moved to another
page of the app keeps the run going; coming back shows its progress or result. A run nobody
has polled for ``UNWATCHED_SECONDS`` stops whatever the connection says (a safety net).
"""

from __future__ import annotations

import os
import threading
import time
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import streamlit as st
from streamlit.logger import get_logger

from .widgets import md_escape

LOG = get_logger("bnma_ui.background")  # Streamlit's handler: lines reach the server log
ORPHAN_SECONDS = 60.0  # stop a run of a closed session that has not been polled this long
UNWATCHED_SECONDS = 1800.0  # stop any run nobody has polled for this long
WORKER_NICENESS = 5  # background work leaves CPU to the server and browser (~1/3 share)
_SUFFIX = "__bnma_bg"
_ACTIVE: weakref.WeakSet[Run] = weakref.WeakSet()  # every live run of this server
_ACTIVE_LOCK = threading.Lock()


@dataclass(eq=False)
class Run:
    """One background run: progress events, result or error, and the stop signal.

    Attributes
    ----------
    name : str
        Kind of run (one per page), e.g. ``"mcmc"``.
    key : Any
        What the run computes (dataset fingerprint + parameters), to match results to settings.
    events : list
        Progress events reported by the work, in order (appended by the worker thread).
    result, error : Any
        The work's return value, or the exception it raised.
    stopped : bool
        True once a stop was requested (by the user or because nobody watched the run).
    """

    name: str
    key: Any = None
    meta: dict = field(default_factory=dict)
    events: list = field(default_factory=list)
    result: Any = None
    error: BaseException | None = None
    stopped: bool = False
    started: float = field(default_factory=time.time)
    ended: float | None = None
    stop_requested: float | None = None
    """When Stop was pressed (``time.time()``); ``ended - stop_requested`` is how long the work
    took to end after it (logged at INFO, read by the load test)."""
    heartbeat: float = field(default_factory=time.time)
    taken: bool = False
    session_alive: Callable[[], bool | None] | None = None
    """Whether the browser session that started the run is still connected (None: unknown)."""
    _stop: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None

    # -- used by the worker ---------------------------------------------------------------
    def should_stop(self) -> bool:
        """True once the user pressed Stop, or the run is orphaned (see :meth:`orphaned`)."""
        if not self._stop.is_set() and self.orphaned():
            self.stopped = True
            self._stop.set()
        return self._stop.is_set()

    def orphaned(self, now: float | None = None) -> bool:
        """Nobody can see this run any more: no poll for ``ORPHAN_SECONDS`` and its session is
        not connected (or cannot be asked), or no poll for ``UNWATCHED_SECONDS``."""
        quiet = (time.time() if now is None else now) - self.heartbeat
        if quiet > UNWATCHED_SECONDS:
            return True
        if quiet <= ORPHAN_SECONDS:
            return False
        alive = self.session_alive() if self.session_alive is not None else None
        return alive is not True

    def report(self, event: Any) -> None:
        """Append one progress event (worker thread; list.append is atomic)."""
        self.events.append(event)

    # -- used by the page ---------------------------------------------------------------
    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    @property
    def done(self) -> bool:
        return self.ended is not None

    @property
    def seconds(self) -> float:
        return (self.ended or time.time()) - self.started

    def request_stop(self) -> None:
        if self.stop_requested is None:
            self.stop_requested = time.time()
        self.stopped = True
        self._stop.set()

    def wait(self, timeout: float | None = None) -> bool:
        """Wait until the work has returned; True if it has."""
        if self._thread is not None:
            self._thread.join(timeout)
        return self.done

    def take(self) -> Run | None:
        """This run once it is done and not yet taken (then marked taken), else None: the page
        turns a finished run into its result exactly once."""
        if self.done and not self.taken:
            self.taken = True
            return self
        return None


def lower_priority() -> None:
    """Give this thread (and the threads it starts, which inherit it) a lower CPU priority, so
    that on a busy machine the server keeps answering clicks (Stop) and page switches while the
    numba kernels compute. Linux schedules threads individually; elsewhere this does nothing."""
    try:
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), WORKER_NICENESS)
    except (AttributeError, OSError):  # not Linux, or not permitted: run at normal priority
        pass


def _target(run: Run, work: Callable[[Run], Any]) -> None:
    lower_priority()
    try:
        run.result = work(run)
    except BaseException as exc:  # handed to the page
        run.error = exc
    finally:
        run.ended = time.time()
        with _ACTIVE_LOCK:
            _ACTIVE.discard(run)
        if run.stop_requested is not None:
            LOG.info("background run %s ended %.3f s after Stop", run.name,
                     run.ended - run.stop_requested)


def start(name: str, work: Callable[[Run], Any], key: Any = None,
          meta: dict | None = None) -> Run:
    """Start ``work(run)`` in a background thread as this session's run ``name``.

    A previous run of the same name in this session is asked to stop first (its result is
    discarded). ``meta`` is kept with the run for the page (e.g. the train/test split).
    ``work`` receives the :class:`Run`: it calls ``run.report(event)`` for progress,
    checks ``run.should_stop()`` between chunks of at most about a second, and returns its
    result (a partial one once stopped).
    """
    previous = current(name)
    if previous is not None and previous.running:
        previous.request_stop()
        previous.taken = True
    run = Run(name=name, key=key, meta=dict(meta or {}), session_alive=_session_probe())
    run._thread = threading.Thread(target=_target, args=(run, work), name=f"bnma-{name}",
                                   daemon=True)
    st.session_state[name + _SUFFIX] = run
    with _ACTIVE_LOCK:
        _ACTIVE.add(run)
    run._thread.start()
    return run


def _session_probe() -> Callable[[], bool | None] | None:
    """A thread-safe check that this script's browser session is still connected, or None
    when there is no Streamlit server (AppTest, bare mode)."""
    try:
        from streamlit.runtime import Runtime
        from streamlit.runtime.scriptrunner import get_script_run_ctx

        ctx = get_script_run_ctx()
        if ctx is None or not Runtime.exists():
            return None
        runtime, session_id = Runtime.instance(), ctx.session_id
    except Exception:  # noqa: BLE001 - a Streamlit internal moved: fall back to polls only
        return None

    def alive() -> bool | None:
        try:
            return runtime.is_active_session(session_id)
        except Exception:  # noqa: BLE001
            return None

    return alive


def current(name: str) -> Run | None:
    """This session's latest run ``name`` (running, or done and maybe not yet taken)."""
    return st.session_state.get(name + _SUFFIX)


def stop(name: str, timeout: float = 30.0) -> Run | None:
    """Ask this session's run ``name`` to stop and wait (at most ``timeout`` seconds) for its
    partial result. Returns the run (done unless the timeout passed), or None if there was
    none."""
    run = current(name)
    if run is None:
        return None
    if not run.done:
        run.request_stop()
        with st.spinner("Stopping and keeping what was computed so far..."):
            run.wait(timeout)
    return run


def active_runs() -> int:
    """Number of runs going on in this server (all sessions): to tell a waiting user that the
    machine is shared."""
    with _ACTIVE_LOCK:
        return sum(1 for r in _ACTIVE if not r.done)


def live(name: str, draw: Callable[[Run], None], interval: float = 1.0) -> None:
    """Show run ``name`` while it goes on: ``draw(run)`` is called from a fragment re-run every
    ``interval`` seconds (Streamlit calls allowed there); when the run has ended, one full rerun
    of the page follows so that the page can show the result."""
    run = current(name)
    if run is None or run.taken:
        return
    run.heartbeat = time.time()  # the page is shown (a full run of it): someone is watching

    @st.fragment(run_every=interval)
    def _poll() -> None:
        r = current(name)
        if r is None or r.taken:
            return
        r.heartbeat = time.time()
        if r.done:
            st.rerun()  # whole page: it takes the result
        draw(r)

    _poll()


def busy_note(run: Run) -> str | None:
    """A sentence for a waiting user when other runs share the machine, else None."""
    n = active_runs()
    if n <= 1:
        return None
    return (f"The server is busy: {n} runs are going on at once, so this one advances more "
            "slowly. Its progress is shown below; Stop keeps what it has so far.")


def finished(name: str, state: dict, expected: tuple[type[BaseException], ...] = (ValueError,)
             ) -> Run | None:
    """This session's run ``name`` if it has just ended successfully (taken once), else None.

    A run that ended with an ``expected`` error (bad input: ``ValueError``, hence
    ``DataError``) leaves its message in ``state["error"]`` for :func:`show_error` and returns
    None; any other error is raised (a bug, shown as one). ``state`` is the page's dict in
    ``st.session_state``; :func:`start_fresh` clears the message when a new run starts."""
    run = current(name)
    run = run.take() if run is not None else None
    if run is None:
        return None
    if run.error is not None:
        if not isinstance(run.error, expected):
            raise run.error
        state["error"] = str(run.error)
        return None
    return run


def show_error(state: dict) -> None:
    """The last run's bad-input message, shown until the next run starts."""
    if state.get("error"):
        st.error(md_escape(state["error"]))


def entry_for_data(state: dict, fingerprint: str, at: int = 1, message: str | None = None
                   ) -> dict | None:
    """The page's last result (``state["entry"]``) if it was computed on the dataset with this
    ``fingerprint`` (item ``at`` of the entry's key), else None — with ``message`` shown, when
    given, so that a user who switched datasets knows why the result went away."""
    entry = state.get("entry")
    if entry is not None and entry["key"][at] != fingerprint:
        if message:
            st.info(message)
        return None
    return entry
