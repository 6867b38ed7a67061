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

Runs are bounded four ways (DESIGN §7):

* **Stopped with their user.** A server-wide watchdog thread (:func:`_watchdog`, every
  ``WATCH_SECONDS``) asks Streamlit's runtime whether each run's browser session is still
  connected (``Runtime.is_active_session``); a session gone for ``CLOSED_SECONDS`` (a closed
  tab) has its runs stopped. Without a runtime to ask (AppTest, bare mode) the poll rule
  applies: no poll for ``ORPHAN_SECONDS``. A run nobody has polled for ``UNWATCHED_SECONDS``
  stops whatever the connection says (a safety net). Late polls alone never stop a run: a
  browser busy drawing can delay the fragment's timer by many seconds.
* **Superseded.** Starting a run of the same name in a session (a new row, another method)
  stops the previous one, whose result nobody will take.
* **Ended by force when they do not listen.** The work is asked first (``should_stop``). If it
  has not returned ``FORCE_SECONDS`` after a stop of a closed or superseded run (or
  ``USER_STOP_FORCE_SECONDS`` after the user's Stop, which leaves time for a partial result),
  the watchdog raises :class:`RunStopped` in the worker thread
  (``PyThreadState_SetAsyncExc``): it surfaces at the worker's next Python bytecode, so library
  code without stop checks (a stacked fit's 24 inner fits) ends between two kernel calls. A
  single numba call is not interrupted (order MCMC chunks its calls to ~0.1 s when streamed).
* **Capped.** At most ``MAX_RUNNING`` runs compute at once on the server (environment variable
  ``BNMA_MAX_RUNS``, default the number of CPUs, at least 2) and at most one per session; the
  others wait in a first-come queue, and :func:`busy_note` tells a waiting user their place.
"""

from __future__ import annotations

import ctypes
import os
import sys
import threading
import time
import uuid
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import streamlit as st
from streamlit.logger import get_logger

from .widgets import md_escape

LOG = get_logger("bnma_ui.background")  # Streamlit's handler: lines reach the server log
ORPHAN_SECONDS = 60.0  # without a runtime to ask: stop a run that has not been polled this long
CLOSED_SECONDS = 0.75  # a session disconnected this long is gone (its tab was closed)
UNWATCHED_SECONDS = 1800.0  # stop any run nobody has polled for this long
WATCH_SECONDS = 0.25  # the watchdog's period
FORCE_SECONDS = 0.5  # a closed or superseded run that has not returned by then is ended
USER_STOP_FORCE_SECONDS = 15.0  # the same after the user's Stop (time for a partial result)
WORKER_NICENESS = 5  # background work leaves CPU to the server and browser (~1/3 share)
SESSION_KEY = "_bnma_session_slot"  # this session's identity in the run queue
_SUFFIX = "__bnma_bg"
_ACTIVE: weakref.WeakSet[Run] = weakref.WeakSet()  # every live run of this server
_ACTIVE_LOCK = threading.Lock()


def _max_running() -> int:
    """``BNMA_MAX_RUNS`` (a positive integer), else the number of CPUs, at least 2."""
    try:
        value = int(os.environ.get("BNMA_MAX_RUNS", "0"))
    except ValueError:
        value = 0
    return value if value > 0 else max(2, os.cpu_count() or 2)


MAX_RUNNING = _max_running()
"""Runs that compute at once on this server; the others wait in :data:`_QUEUE`."""
_SLOTS = threading.Condition()  # guards _QUEUE and _RUNNING
_QUEUE: list[Run] = []  # runs waiting for a slot, first come first
_RUNNING: set[Run] = set()  # runs holding a slot


_STATE_LOCKS: dict[int, threading.RLock] = {}
_STATE_LOCKS_GUARD = threading.Lock()


def share_session_state_lock() -> bool:
    """Make every Streamlit ``SafeSessionState`` of one session hold the same lock.

    With ``runner.fastReruns`` (Streamlit's default) a rerun request stops the session's
    script run and starts a new one at once, in a new thread; the old run goes on until its
    next Streamlit call. Streamlit wraps the session's one ``SessionState`` in a
    ``SafeSessionState`` per script run, each with a lock of its own, so the old run's widget
    (reading ``filtered_state``) and the new run's start (``on_script_will_rerun``, which
    moves widget values into ``_old_state``) ran at once: rapid row changes on the Patient
    page raised ``RuntimeError: dictionary changed size during iteration`` inside Streamlit
    (issue 36 item 6; reproduced in a browser on 7be0454). One ``RLock`` per session state
    (kept by ``id``: a ``SessionState`` has slots, no weak references) serializes them.
    Installed once when this module is imported; returns False when Streamlit's internals
    moved (then nothing is changed)."""
    try:
        from streamlit.runtime.state.safe_session_state import SafeSessionState
    except ImportError:  # pragma: no cover - a Streamlit internal moved
        return False
    if getattr(SafeSessionState, "_bnma_shared_lock", False):
        return True
    original = SafeSessionState.__init__

    def __init__(self, state: Any, yield_callback: Callable[[], None]) -> None:
        original(self, state, yield_callback)
        with _STATE_LOCKS_GUARD:
            lock = _STATE_LOCKS.setdefault(id(state), self._lock)
        object.__setattr__(self, "_lock", lock)

    SafeSessionState.__init__ = __init__
    SafeSessionState._bnma_shared_lock = True
    return True


share_session_state_lock()


class RunStopped(BaseException):
    """Raised in a worker thread that did not return after its run was stopped (a
    ``BaseException``, like ``KeyboardInterrupt``, so that ``except Exception`` in library code
    does not swallow it)."""


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
    reason : str or None
        Why it was stopped: ``"user"`` (Stop), ``"superseded"`` (a new run of the same name in
        the session), ``"closed"`` (the session's tab was closed), ``"unwatched"``.
    forced : int
        How many times :class:`RunStopped` was raised in the worker (0: it returned itself).
    session : str
        The session the run belongs to (one running run per session).
    """

    name: str
    key: Any = None
    meta: dict = field(default_factory=dict)
    events: list = field(default_factory=list)
    result: Any = None
    error: BaseException | None = None
    stopped: bool = False
    started: float = field(default_factory=time.time)
    admitted: float | None = None
    """When the run got its slot and its work began (None while it waits in the queue)."""
    ended: float | None = None
    stop_requested: float | None = None
    """When Stop was pressed (``time.time()``); ``ended - stop_requested`` is how long the work
    took to end after it (logged at INFO, read by the load test)."""
    heartbeat: float = field(default_factory=time.time)
    taken: bool = False
    session_alive: Callable[[], bool | None] | None = None
    """Whether the browser session that started the run is still connected (None: unknown)."""
    session: str = ""
    capped: bool = True
    """Counts toward the server's ``MAX_RUNNING`` (False without a Streamlit server: AppTest
    and bare mode have no server to share; one run per session still holds)."""
    reason: str | None = None
    forced: int = 0
    force_at: float | None = None
    gone_since: float | None = None
    """When the session was first seen disconnected (None while it is connected)."""
    _stop: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _in_work: bool = False
    _tid: int | None = None

    # -- used by the worker ---------------------------------------------------------------
    def should_stop(self) -> bool:
        """True once the user pressed Stop, a new run superseded this one, or nobody can see
        it any more (see :meth:`orphaned`)."""
        if not self._stop.is_set():
            why = self.orphan_reason()
            if why is not None:
                self.request_stop(why)
        return self._stop.is_set()

    def orphan_reason(self, now: float | None = None) -> str | None:
        """``"closed"`` once the run's session has been disconnected for ``CLOSED_SECONDS``
        (or, with no runtime to ask, once nobody polled it for ``ORPHAN_SECONDS``),
        ``"unwatched"`` once nobody polled it for ``UNWATCHED_SECONDS``, else None."""
        now = time.time() if now is None else now
        quiet = now - self.heartbeat
        if quiet > UNWATCHED_SECONDS:
            return "unwatched"
        alive = self.session_alive() if self.session_alive is not None else None
        if alive is None:
            return "closed" if quiet > ORPHAN_SECONDS else None
        if alive:
            self.gone_since = None
            return None
        if self.gone_since is None:
            self.gone_since = now
        return "closed" if now - self.gone_since >= CLOSED_SECONDS else None

    def orphaned(self, now: float | None = None) -> bool:
        """Nobody can see this run any more (:meth:`orphan_reason` is not None)."""
        return self.orphan_reason(now) is not None

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
    def queued(self) -> bool:
        """Waiting for a slot (:data:`MAX_RUNNING`, one per session)."""
        return self.admitted is None and not self.done

    @property
    def seconds(self) -> float:
        """Seconds of work so far (from the slot, not from the click: waiting excluded)."""
        begun = self.admitted if self.admitted is not None else time.time()
        return (self.ended or time.time()) - begun

    def request_stop(self, reason: str = "user", force_after: float | None = None) -> None:
        """Ask the work to stop; if it has not returned ``force_after`` seconds later (default
        ``USER_STOP_FORCE_SECONDS`` for the user's Stop, else ``FORCE_SECONDS``), the watchdog
        ends it (:class:`RunStopped`)."""
        now = time.time()
        if self.stop_requested is None:
            self.stop_requested = now
        if self.reason is None:
            self.reason = reason
        grace = force_after if force_after is not None else (
            USER_STOP_FORCE_SECONDS if reason == "user" else FORCE_SECONDS)
        at = now + grace
        self.force_at = at if self.force_at is None else min(self.force_at, at)
        self.stopped = True
        self._stop.set()
        with _SLOTS:
            _SLOTS.notify_all()  # a queued run leaves the queue at once
        _ensure_watchdog()

    def wait(self, timeout: float | None = None) -> bool:
        """Wait until the work has returned; True if it has."""
        if self._thread is not None:
            self._thread.join(timeout)
        return self.done

    def take(self) -> Run | None:
        """This run once it is done and not yet taken (then marked taken), else None: the page
        turns a finished run into its result exactly once, also when two script runs of one
        session take it at once (Streamlit's fast reruns start the new run while the old one
        still runs up to its next Streamlit call): the check and the mark are one step under
        the run's lock (issue 36 item 6)."""
        with self._lock:
            if self.done and not self.taken:
                self.taken = True
                return self
        return None

    def queue_position(self) -> int | None:
        """Runs ahead of this one in the queue (0: next), None when it is not waiting."""
        with _SLOTS:
            if self not in _QUEUE:
                return None
            return sum(1 for r in _QUEUE[:_QUEUE.index(self)] if not r._stop.is_set())

    def session_busy_with(self) -> Run | None:
        """Another run of this session that holds a slot (this one waits for it), else None."""
        with _SLOTS:
            return next((r for r in _RUNNING if r.session == self.session and r is not self),
                        None)


def lower_priority() -> None:
    """Give this thread (and the threads it starts, which inherit it) a lower CPU priority, so
    that on a busy machine the server keeps answering clicks (Stop) and page switches while the
    numba kernels compute. Linux schedules threads individually; elsewhere this does nothing."""
    try:
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), WORKER_NICENESS)
    except (AttributeError, OSError):  # not Linux, or not permitted: run at normal priority
        pass


# --- the queue -------------------------------------------------------------------------------
def _admissible(run: Run) -> bool:
    """Under ``_SLOTS``: a slot is free and ``run`` is the first waiting run whose session
    computes nothing else."""
    full = sum(r.capped for r in _RUNNING) >= MAX_RUNNING
    busy = {r.session for r in _RUNNING}
    for r in _QUEUE:
        if r._stop.is_set() or r.session in busy or (r.capped and full):
            continue
        return r is run
    return False


def _wait_for_slot(run: Run) -> bool:
    """Queue ``run`` until it may compute (True) or is stopped while waiting (False)."""
    with _SLOTS:
        _QUEUE.append(run)
        try:
            while not run._stop.is_set() and not _admissible(run):
                _SLOTS.wait(WATCH_SECONDS)
            if run._stop.is_set():
                return False
            _RUNNING.add(run)
            run.admitted = time.time()
            return True
        finally:
            _QUEUE.remove(run)
            _SLOTS.notify_all()


def _release_slot(run: Run) -> None:
    with _SLOTS:
        _RUNNING.discard(run)
        _SLOTS.notify_all()


# --- ending a run by force ---------------------------------------------------------------------
def _async_raise(tid: int, exc: type[BaseException] | None) -> int:
    """Raise ``exc`` in thread ``tid`` at its next bytecode (None: clear a pending one)."""
    return ctypes.pythonapi.PyThreadState_SetAsyncExc(
        ctypes.c_ulong(tid), ctypes.py_object(exc) if exc is not None else None)


def _leave_work(run: Run) -> None:
    """The worker is out of ``work``: no exception may be raised in it any more; one raised
    but not yet delivered is cleared (the flag and the clearing happen under the lock the
    watchdog raises under, so none slips in between)."""
    while True:
        try:
            with run._lock:
                run._in_work = False
                if run._tid is not None:
                    _async_raise(run._tid, None)
            return
        except RunStopped:  # delivered just before the lock: try again
            continue


_UNSAFE_FRAMES = ("<frozen importlib", f"{os.sep}numba{os.sep}", f"{os.sep}logging{os.sep}",
                  f"{os.sep}concurrent{os.sep}futures{os.sep}thread.py", f"{os.sep}pickle.py",
                  f"{os.sep}streamlit{os.sep}")


def safe_to_raise(tid: int) -> bool:
    """Whether thread ``tid`` may be interrupted now: no frame on its stack is importing a
    module, compiling or loading a numba kernel, logging, unpickling, inside Streamlit or a
    thread pool's worker, and its innermost frame is not waiting in ``threading`` (an exception
    there could leave a half-imported module or a lock held: an interrupted import broke
    ``scipy.signal`` for the rest of the process before this check). The worker is then asked
    again at the watchdog's next round."""
    frame = sys._current_frames().get(tid)
    if frame is None or frame.f_code.co_filename.endswith(f"{os.sep}threading.py"):
        return False
    while frame is not None:
        name = frame.f_code.co_filename
        if any(part in name for part in _UNSAFE_FRAMES):
            return False
        frame = frame.f_back
    return True


def _force(run: Run, now: float) -> None:
    """Raise :class:`RunStopped` in a stopped run's worker once its grace has passed and the
    worker is at a safe point (:func:`safe_to_raise`; else at the next round), again every
    second until the worker has left the work."""
    if run.done or run.force_at is None or now < run.force_at:
        return
    with run._lock:
        if not run._in_work or run._tid is None or not safe_to_raise(run._tid):
            return
        _async_raise(run._tid, RunStopped)
        run.forced += 1
        run.force_at = now + 1.0
    LOG.info("background run %s did not return %.1f s after its stop (%s): ended by force",
             run.name, now - (run.stop_requested or now), run.reason)


def _watch_once(now: float | None = None) -> None:
    """One round of the watchdog: stop the runs nobody can see any more, end by force the
    stopped runs that did not return."""
    now = time.time() if now is None else now
    with _ACTIVE_LOCK:
        runs = [r for r in _ACTIVE if not r.done]
    for run in runs:
        if not run._stop.is_set():
            why = run.orphan_reason(now)
            if why is not None:
                run.request_stop(why)
                LOG.info("background run %s stopped: %s", run.name,
                         "its session closed" if why == "closed" else "nobody watched it")
        _force(run, now)


_WATCHDOG: list[threading.Thread] = []
_WATCHDOG_LOCK = threading.Lock()


def _watchdog() -> None:
    while True:
        time.sleep(WATCH_SECONDS)  # the watchdog's period
        try:
            _watch_once()
        except Exception:  # noqa: BLE001 - the watchdog must outlive any one run
            LOG.exception("background watchdog")


def _ensure_watchdog() -> None:
    """Start the server's one watchdog thread (once)."""
    with _WATCHDOG_LOCK:
        if not _WATCHDOG or not _WATCHDOG[0].is_alive():
            thread = threading.Thread(target=_watchdog, name="bnma-watchdog", daemon=True)
            thread.start()
            _WATCHDOG[:] = [thread]


def _target(run: Run, work: Callable[[Run], Any]) -> None:
    run._tid = threading.get_ident()
    lower_priority()
    try:
        if _wait_for_slot(run):
            try:
                with run._lock:
                    run._in_work = True
                run.result = work(run)
            finally:
                _leave_work(run)
    except RunStopped:  # ended by force: no result
        run.result = None
        run.stopped = True
    except BaseException as exc:  # handed to the page
        run.error = exc
    finally:
        _leave_work(run)
        _release_slot(run)
        run.ended = time.time()
        with _ACTIVE_LOCK:
            _ACTIVE.discard(run)
        if run.stop_requested is not None:
            closed = (f", {run.ended - run.gone_since:.3f} s after its session closed"
                      if run.reason == "closed" and run.gone_since is not None else "")
            LOG.info("background run %s ended %.3f s after Stop (%s%s%s)", run.name,
                     run.ended - run.stop_requested, run.reason,
                     ", by force" if run.forced else "", closed)


def session_slot() -> str:
    """This session's identity in the run queue (kept in its session state)."""
    if SESSION_KEY not in st.session_state:
        st.session_state[SESSION_KEY] = uuid.uuid4().hex
    return st.session_state[SESSION_KEY]


def start(name: str, work: Callable[[Run], Any], key: Any = None,
          meta: dict | None = None) -> Run:
    """Start ``work(run)`` in a background thread as this session's run ``name``.

    A previous run of the same name in this session is stopped first (superseded: its result
    is discarded, and it is ended by force if it does not return within ``FORCE_SECONDS``).
    The new run waits in the server's queue while ``MAX_RUNNING`` runs compute or while
    another run of this session does. ``meta`` is kept with the run for the page (e.g. the
    train/test split). ``work`` receives the :class:`Run`: it calls ``run.report(event)`` for
    progress, checks ``run.should_stop()`` between chunks of at most about a second, and
    returns its result (a partial one once stopped).
    """
    previous = current(name)
    if previous is not None and previous.running:
        previous.request_stop("superseded")
        previous.taken = True
    probe = _session_probe()
    run = Run(name=name, key=key, meta=dict(meta or {}), session_alive=probe,
              session=session_slot(), capped=probe is not None)
    st.session_state[name + _SUFFIX] = run
    return launch(run, work)


def launch(run: Run, work: Callable[[Run], Any]) -> Run:
    """Queue ``run`` and start its worker thread (:func:`start` without Streamlit: the run
    carries its session and liveness check)."""
    run._thread = threading.Thread(target=_target, args=(run, work), name=f"bnma-{run.name}",
                                   daemon=True)
    with _ACTIVE_LOCK:
        _ACTIVE.add(run)
    _ensure_watchdog()
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


def stop(name: str, timeout: float = 30.0, force_after: float | None = None) -> Run | None:
    """Ask this session's run ``name`` to stop and wait (at most ``timeout`` seconds) for its
    partial result. Returns the run (done unless the timeout passed), or None if there was
    none. ``force_after``: seconds after which a run that has not returned is ended by force
    (default ``USER_STOP_FORCE_SECONDS``; a page whose partial result is of no use passes
    ``FORCE_SECONDS``)."""
    run = current(name)
    if run is None:
        return None
    if not run.done:
        run.request_stop("user", force_after)
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


RUN_LABELS = {"compare": "Compare methods", "mcmc": "Order MCMC", "patient_fit": "Patient",
              "clustering": "Clustering", "exact": "Exact & K-best", "subbag": "Exact & K-best",
              "teach_exact": "Teach", "teach_curve": "Teach", "reproduce": "Reports"}
"""Run names in words (the page that started them), for :func:`busy_note`."""


def busy_note(run: Run) -> str | None:
    """A sentence for a waiting user: the run's place in the queue (or the run of the same
    session it waits for), or that other runs share the machine; else None."""
    if run.queued and not run.stopped:
        other = run.session_busy_with()
        if other is not None:
            where = RUN_LABELS.get(other.name, other.name)
            return (f"Waiting for your run on the {where} page to end: each user computes one "
                    "run at a time. Stop that run to start this one now.")
        ahead = run.queue_position()
        if ahead is not None:
            return (f"Waiting for a free slot: this server computes {MAX_RUNNING} runs at a "
                    f"time; this one is number {ahead + 1} in the queue and starts by itself.")
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
