"""A class at once: N browser sessions run order MCMC on one server while an observer switches
pages (issue 14, "A class at once"), optionally beside a hostile visitor.

Measures, per run: completion of every session's run, Stop latency (click to "Stopped after")
of one session, page-switch latency of an observer (p50 / p95), the server's RSS before the
runs (every session open, the pages' modules imported), at peak and after every session has
closed. Used by ``benchmarks/load_test.py`` (N = 2..8) and, with N = 2, by
``tests/load/test_load.py``.

With ``hostile=True`` a separate browser process (:func:`hostile_session`) meanwhile opens
crafted links and uploads odd files (:data:`HOSTILE_LINKS`, :func:`hostile_uploads`) in a loop
until the normal runs end; ``benchmarks/load_hostile.py`` compares the normal sessions'
figures with and without it.

:func:`classroom_round` is a class instead: many sessions step ASIA chains on the Teach page
while a few run order MCMC on WBC; step latency (click on the step player's "+1" to the new
iteration shown, timed in the browser), the server's CPU per step, errors and the server's
RSS before, at peak and after the class has left. Used by ``benchmarks/load_classroom.py``
(30 + 2 sessions, cold and warm) and, with 3 stepping sessions, by ``tests/load/test_load.py``.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import re
import shutil
import tempfile
import threading
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from .browser import (
    LAPTOP,
    exception_text,
    headless_chromium,
    nav,
    rss_mb,
    set_number,
    set_slider,
    streamlit_server,
    wait_idle,
)

STOPPED_RUN_ITERATIONS = 500_000
PAGE_HEADINGS = {"Compare methods": "Compare methods",
                 "Order MCMC": "Order MCMC: averaging over node orders"}


@dataclass
class LoadResult:
    n_sessions: int
    iterations: int
    completed: int = 0
    run_seconds: list[float] = field(default_factory=list)
    stop_latency_s: float = float("nan")
    """Stop click in the browser -> "Stopped after" drawn (delivery, work ending, page rerun)."""
    server_stop_s: float = float("nan")
    """Stop received by the server -> the run's work ended (from the server log)."""
    switch_p50_s: float = float("nan")
    switch_p95_s: float = float("nan")
    switches: int = 0
    rss_start_mb: float = float("nan")
    rss_peak_mb: float = float("nan")
    rss_end_mb: float = float("nan")
    errors: list[str] = field(default_factory=list)
    hostile: bool = False
    hostile_actions: list[dict] = field(default_factory=list)
    """One record per hostile action: what, seconds, and what the page showed."""
    heavy: bool = False
    """The hostile visitor's heavy actions were on (:data:`HEAVY_SIZES`, issue 36 items 1-4)."""
    closed_run_end_s: list[float] = field(default_factory=list)
    """Per background run stopped because its session closed: seconds from the session's
    close to the end of its work (server log)."""
    cpu_share_after_close: float = float("nan")
    """The server's CPU seconds per second 5-10 s after every session closed (0: no
    computation outlived its session)."""
    rss_limit_hit: bool = False
    """The server passed the driver's RSS guard and was ended (the machine is shared)."""
    cpu_window_s: float = float("nan")
    """The CPU figures below are taken from the clicks on Run until every normal run ended."""
    server_cpu_s: float = float("nan")
    """CPU seconds of the server (and anything it started) over ``cpu_window_s``."""
    browser_cpu_s: float = float("nan")
    """CPU seconds of the normal sessions' browser (playwright's driver and chromium)."""
    visitor_cpu_s: float = float("nan")
    """CPU seconds of the hostile visitor's process and its browser (0 without one)."""
    visitor_priority: str = ""
    """The CPU priority of the hostile visitor's process and browser (:func:`run_load`)."""
    server_tracebacks: int = 0
    """Tracebacks in the server's log (an error the pages did not turn into a sentence)."""
    phase_seconds: dict[str, float] = field(default_factory=dict)
    """Wall seconds of each phase of the run (where a test's time goes)."""

    def as_dict(self) -> dict:
        return asdict(self)


class _CpuSampler:
    """CPU seconds of this driver's descendants over a window, split into the server (and the
    processes it started), the hostile visitor (its process and browser) and the rest (the
    normal sessions' browser). Every process's user + system time is read every ``interval``
    s (Linux ``/proc``) and the last reading kept, so a process that ends (a closed tab's
    renderer) counts up to its last reading: at most ``interval`` s of each is missed."""

    def __init__(self, server_pid: int, visitor_pid: int | None = None,
                 interval: float = 0.5) -> None:
        self.server_pid, self.visitor_pid, self.interval = server_pid, visitor_pid, interval
        self._first: dict[int, float] = {}
        self._last: dict[int, tuple[str, float]] = {}
        self._done = threading.Event()
        self._read(first=True)
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _read(self, first: bool = False) -> None:
        tree = _children()
        own = set(_descendants(self.server_pid, tree)) | {self.server_pid}
        visitor = (set(_descendants(self.visitor_pid, tree)) | {self.visitor_pid}
                   if self.visitor_pid is not None else set())
        for pid in _descendants(os.getpid(), tree):
            cpu = cpu_seconds(pid)
            if cpu != cpu:  # ended while reading
                continue
            if first:
                self._first[pid] = cpu
            group = "server" if pid in own else "visitor" if pid in visitor else "browser"
            self._last[pid] = (group, cpu)

    def _run(self) -> None:
        while not self._done.wait(self.interval):
            self._read()

    def stop(self) -> dict[str, float]:
        """CPU seconds per group since the sampler started."""
        self._done.set()
        self._thread.join()
        self._read()
        out = {"server": 0.0, "visitor": 0.0, "browser": 0.0}
        for pid, (group, cpu) in self._last.items():
            out[group] += cpu - self._first.get(pid, 0.0)
        return {k: round(v, 1) for k, v in out.items()}


def _open_session(browser, url: str):
    ctx = browser.new_context(viewport=LAPTOP)
    page = ctx.new_page()
    page.set_default_timeout(120_000)
    page.goto(url)
    wait_idle(page, timeout=180)
    return ctx, page


def _state(page) -> str:
    if page.get_by_text("Stopped after").count():
        return "stopped"
    if page.get_by_role("heading", name="Held-out accuracy").count():
        return "done"
    if exception_text(page) is not None:
        return "error"
    return "running"


SWITCH_TIMEOUT_S = 120.0


def _switch(page, label: str, res: LoadResult | None = None) -> float:
    """Seconds from the click on a page's link to its heading; a switch that takes longer than
    :data:`SWITCH_TIMEOUT_S` counts as that long (a lower bound) and is noted in
    ``res.errors``."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    t0 = time.perf_counter()
    try:
        page.locator('[data-testid="stSidebarNav"] a', has_text=label).first.click(
            timeout=SWITCH_TIMEOUT_S * 1000)
        page.get_by_role("heading", name=PAGE_HEADINGS[label]).first.wait_for(
            timeout=SWITCH_TIMEOUT_S * 1000)
    except PlaywrightTimeout:
        if res is None:
            raise
        res.errors.append(f"observer: the switch to {label} took more than "
                          f"{SWITCH_TIMEOUT_S:.0f} s")
    return time.perf_counter() - t0


class _PeakRss:
    """The largest RSS of a process, read every ``interval`` s in a thread until
    :meth:`stop`. With ``limit_mb``, a process that passes it is ended (SIGTERM, then SIGKILL:
    the server this driver started, on a machine shared with other work) and ``limit_hit``
    set."""

    def __init__(self, pid: int, interval: float = 0.25, limit_mb: float | None = None) -> None:
        self.pid, self.interval, self.peak = pid, interval, rss_mb(pid)
        self.limit_mb, self.limit_hit = limit_mb, False
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._done.wait(self.interval):
            now = rss_mb(self.pid)
            if now == now:  # not NaN
                self.peak = max(self.peak, now)
                if self.limit_mb is not None and now > self.limit_mb and not self.limit_hit:
                    self.limit_hit = True
                    _end_process(self.pid)

    def stop(self) -> float:
        self._done.set()
        self._thread.join()
        return self.peak


def _end_process(pid: int) -> None:
    """SIGTERM the process ``pid`` (started by this driver), SIGKILL after 5 s."""
    import signal

    try:
        os.kill(pid, signal.SIGTERM)
        deadline = time.time() + 5
        while time.time() < deadline and Path(f"/proc/{pid}").exists():
            time.sleep(0.1)  # polling the process's exit
        if Path(f"/proc/{pid}").exists():
            os.kill(pid, signal.SIGKILL)
    except OSError:
        pass


def _settled_rss(pid: int, timeout: float = 90.0) -> float:
    """RSS once it stops falling (two readings 3 s apart within 5 MB), at most ``timeout``."""
    deadline = time.time() + timeout
    last = rss_mb(pid)
    while time.time() < deadline:
        time.sleep(3.0)  # sampling interval of a slowly settling quantity
        now = rss_mb(pid)
        if abs(now - last) < 5:
            return now
        last = now
    return last


def _rss_after_sessions_closed(browser, url: str, pid: int, baseline: float,
                               timeout: float = 150.0) -> float:
    """RSS once closed sessions are freed. Streamlit keeps a closed tab's session for
    ``server.disconnectedSessionTTL`` seconds (30 here) for a reconnect and frees expired ones
    when the session store next changes, i.e. when another tab closes; so a short probe session
    is opened and closed every few seconds until the RSS is back within 200 MB of ``baseline``
    and settled, or ``timeout`` passes."""
    deadline = time.time() + timeout
    now = _settled_rss(pid, timeout=30.0)
    while time.time() < deadline and now - baseline >= 200:
        ctx, _ = _open_session(browser, url)  # a tab that opens and closes, like a visitor
        ctx.close()
        now = _settled_rss(pid, timeout=30.0)
    return now


def _prepare_sessions(browser, url: str, n_sessions: int, iterations: int):
    """Open ``n_sessions`` sessions set up on the Order MCMC page (session 0 for a long run to
    be stopped) and an observer on Compare methods; returns ``(sessions, observer)``."""
    sessions = [_open_session(browser, url) for _ in range(n_sessions)]
    observer = _open_session(browser, url)
    for i, (_, page) in enumerate(sessions):
        nav(page, "Order MCMC")
        # session 0 runs long enough to be stopped (4 chains, up to 4 parents: tens of
        # seconds on WBC); the others run to the end
        set_number(page, "Iterations", STOPPED_RUN_ITERATIONS if i == 0 else iterations)
        if i == 0:
            set_slider(page, "Chains", 4)
            set_slider(page, "Max parents", 4)
    nav(observer[1], "Compare methods")
    return sessions, observer


def _click_run(sessions, res: LoadResult, log_dir: Path, n_sessions: int) -> list[float]:
    """Click Run in every session; the click times (a Run button that stays disabled is
    recorded in ``res.errors`` with a screenshot, and the others still start)."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    started = []
    for i, (_, page) in enumerate(sessions):
        try:
            page.get_by_test_id("stMainBlockContainer").get_by_role(
                "button", name="Run").click()
        except PlaywrightTimeout:  # keep the evidence, measure the others
            shot = log_dir / f"load_{n_sessions}_session{i}_run_disabled.png"
            page.screenshot(path=str(shot), full_page=True)
            res.errors.append(f"session {i}: the Run button stayed disabled ({shot.name})")
        started.append(time.perf_counter())
    return started


def _stop_session0(page, res: LoadResult) -> tuple[float, str]:
    """Click session 0's Stop and wait for "Stopped after" (``res.stop_latency_s``) or the
    finished run's results (the run ended before Stop landed: noted in ``res.errors``, not
    waited for until a timeout, which held up every other session's end); returns the click
    time and the page state afterwards."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    stop_clicked = time.perf_counter()
    button = page.get_by_test_id("stMainBlockContainer").get_by_role("button", name="Stop")
    ended = page.get_by_text("Stopped after").or_(
        page.get_by_role("heading", name="Held-out accuracy"))
    try:
        button.click(timeout=30_000)
        ended.first.wait_for(timeout=120_000)
    except PlaywrightTimeout:
        pass
    state = _state(page)
    if state == "stopped":
        res.stop_latency_s = time.perf_counter() - stop_clicked
    else:  # the run ended before the click or before Stop landed: say so
        res.errors.append(f"session 0's run ended before Stop landed (page state: {state})")
    return stop_clicked, state


def _watch_runs(sessions, observer, res: LoadResult, pid: int,
                timeout: float) -> tuple[dict[int, float], list[float], float]:
    """Until every run has ended or ``timeout`` passes: track the server's peak RSS, stop
    session 0's run once progress shows, note the sessions whose run ended, and have the
    observer switch pages once per round. Returns ``(ended, switches, peak)``."""
    ended: dict[int, float] = {}
    stop_clicked = None
    switches: list[float] = []
    peak = res.rss_start_mb
    deadline = time.time() + timeout
    target = "Order MCMC"
    while len(ended) < len(sessions) and time.time() < deadline:
        peak = max(peak, rss_mb(pid))
        for i, (_, page) in enumerate(sessions):
            if i in ended:
                continue
            state = _state(page)
            if i == 0 and stop_clicked is None and state == "running" and \
                    page.get_by_text("Iterations per chain (of").count():
                stop_clicked, state = _stop_session0(page, res)
            if i == 0 and stop_clicked is None and state != "running":
                res.errors.append(f"session 0's run ended ({state}) before Stop could be "
                                  "clicked")
            if state != "running":
                ended[i] = time.perf_counter()
                if state == "error":
                    res.errors.append(f"session {i}: exception shown")
        switches.append(_switch(observer[1], target, res))
        target = "Compare methods" if target == "Order MCMC" else "Order MCMC"
    return ended, switches, peak


RSS_GUARD_MB = 5000.0
"""The driver ends the server it started when its RSS passes this (the machine is shared)."""
VISITOR_PRIORITIES = ("normal", "idle")
"""The hostile visitor's CPU priority: ``"normal"`` (as the server and the normal sessions'
browser) or ``"idle"`` (Linux ``SCHED_IDLE``: only CPU that no other process wants, as if its
browser ran on a machine of its own; :func:`_lower_visitor_priority`)."""


def run_load(n_sessions: int, iterations: int = 20_000, log_dir: Path | None = None,
             timeout: float = 600.0, hostile: bool = False,
             app_dir: Path | None = None, heavy: dict | None = None, light: bool = True,
             rss_guard_mb: float | None = RSS_GUARD_MB, visitor_priority: str = "normal",
             smoke: bool = False, end_rss: bool = True,
             server_env: dict[str, str] | None = None) -> LoadResult:
    """Serve the app, open ``n_sessions`` sessions that each start an order-MCMC run on WBC
    (session 0 stops its run once progress shows), and an observer that switches pages while
    the runs go on; with ``hostile``, a hostile visitor (:func:`hostile_session`; ``heavy``:
    the sizes of its heavy actions, ``light``: its links and odd uploads) in its own browser
    process from the clicks on Run until the runs end. ``app_dir``: serve the app of another
    checkout (e.g. an export of ``main`` for a before / after comparison). The server is ended
    if its RSS passes ``rss_guard_mb`` (``res.rss_limit_hit``). ``visitor_priority``: the
    visitor's CPU priority (:data:`VISITOR_PRIORITIES`); ``smoke``: the visitor's smoke-sized round
    (:func:`hostile_session`), begun while the sessions are set up (so ``res.rss_start_mb`` is
    the RSS at the clicks on Run, not a settled one); ``end_rss``: wait for the server's RSS
    to come back after every session closed (``res.rss_end_mb``; up to 150 s). The CPU
    seconds of the server, the normal sessions' browser and the visitor while the normal runs
    ran are in ``res.server_cpu_s``, ``res.browser_cpu_s``, ``res.visitor_cpu_s``
    (:class:`_CpuSampler`). ``server_env``: extra environment variables of the server (e.g.
    a shorter ``STREAMLIT_SERVER_DISCONNECTED_SESSION_TTL`` for a test that waits for closed
    sessions to be freed)."""
    res = LoadResult(n_sessions, iterations, hostile=hostile, heavy=heavy is not None,
                     visitor_priority=visitor_priority if hostile else "")
    log_dir = Path(log_dir or Path.cwd() / "benchmarks" / "out")
    tag = f"load_{n_sessions}{'_hostile' if hostile else ''}{'_heavy' if heavy else ''}"
    clock = [time.perf_counter()]

    def phase(name: str) -> None:
        now = time.perf_counter()
        res.phase_seconds[name] = round(now - clock[0], 1)
        clock[0] = now

    with streamlit_server(log_dir / f"{tag}.log", app_dir=app_dir,
                          env=server_env) as (url, proc), \
            headless_chromium() as browser:
        visitor = sampler = None
        if hostile and smoke:  # the visitor's tabs begin while the sessions are set up
            sampler = _PeakRss(proc.pid, limit_mb=rss_guard_mb)
            visitor = _start_hostile(url, log_dir / f"{tag}_actions.json", heavy=heavy,
                                     light=light, priority=visitor_priority, smoke=smoke)
        sessions, observer = _prepare_sessions(browser, url, n_sessions, iterations)
        if visitor is None:
            # every page imported and the server's one-time kernel warm-up settled, before
            # any run
            res.rss_start_mb = _settled_rss(proc.pid, timeout=180.0)
        phase("server and sessions ready")
        if sampler is None:
            sampler = _PeakRss(proc.pid, limit_mb=rss_guard_mb)  # every 0.25 s: no spike missed
        if hostile and visitor is None:
            visitor = _start_hostile(url, log_dir / f"{tag}_actions.json", heavy=heavy,
                                     light=light, priority=visitor_priority, smoke=smoke)
        if visitor is not None:  # its first round begun: its heavy part meets the runs
            visitor[1].wait(300)
            phase("visitor's tabs begun")
            if smoke:
                res.rss_start_mb = rss_mb(proc.pid)  # not settled: the visitor is at work
        cpu = _CpuSampler(proc.pid, visitor_pid=visitor[0].pid if visitor else None)
        t_cpu = time.perf_counter()
        started = _click_run(sessions, res, log_dir, n_sessions)
        try:
            ended, switches, peak = _watch_runs(sessions, observer, res, proc.pid, timeout)
            used = cpu.stop()
            res.cpu_window_s = round(time.perf_counter() - t_cpu, 1)
            res.server_cpu_s, res.browser_cpu_s = used["server"], used["browser"]
            res.visitor_cpu_s = used["visitor"]
            phase("normal runs")
        finally:
            if visitor is not None:
                res.hostile_actions = _stop_hostile(*visitor)
                phase("visitor's round ended")
            peak = max(peak, sampler.stop())
        res.completed = len(ended)
        res.run_seconds = [round(ended[i] - started[i], 2) for i in sorted(ended)]
        if switches:
            res.switches = len(switches)
            res.switch_p50_s = float(np.percentile(switches, 50))
            res.switch_p95_s = float(np.percentile(switches, 95))
        res.rss_peak_mb = peak
        res.rss_limit_hit = sampler.limit_hit
        if res.rss_limit_hit:
            res.errors.append(f"the server passed {rss_guard_mb:.0f} MB and was ended")
        for ctx, _ in [*sessions, observer]:
            ctx.close()
        if not res.rss_limit_hit:
            time.sleep(5.0)  # every session closed 5 s ago: what still computes now outlived it
            cpu0, t0 = cpu_seconds(proc.pid), time.perf_counter()
            time.sleep(5.0)  # the measuring window
            res.cpu_share_after_close = round(
                (cpu_seconds(proc.pid) - cpu0) / (time.perf_counter() - t0), 3)
            phase("CPU after every session closed")
            if end_rss:
                res.rss_end_mb = _rss_after_sessions_closed(browser, url, proc.pid,
                                                            res.rss_start_mb)
                phase("RSS after every session closed")
    res.server_stop_s = server_stop_seconds(log_dir / f"{tag}.log")
    res.closed_run_end_s = closed_run_seconds(log_dir / f"{tag}.log")
    res.server_tracebacks = server_tracebacks(log_dir / f"{tag}.log")
    return res


# --- the hostile visitor -----------------------------------------------------------------------
HOSTILE_LINKS = {
    "class bins 30,000,000": "?src=bundled&file=wbc.csv&target=clump_thickness&cbins=30000000",
    "rows 3,000,000": "?src=network&net=alarm&rows=3000000&seed=6",
    "seed -1": "?src=network&net=asia&seed=-1",
    "rows -5": "?src=network&net=asia&rows=-5",
    "99 quantile bins": "?src=bundled&file=wbc.csv&disc=quantile&bins=99",
    "Markdown in a file name": "?src=upload&file=%5Bclick%5D(http%3A%2F%2Fevil.example)"
                               "!%5Bx%5D(http%3A%2F%2Fevil.example%2Fx.png)",
    "path traversal": "?src=bundled&file=..%2F..%2F..%2Fetc%2Fpasswd",
}
"""Crafted links of a hostile visitor (query strings of the Data page)."""

MARKDOWN_NAME = "**bold** [click](javascript:alert(1)) ![x](http:evil.example).csv"
LINK_NAME = '<a href="https://evil.example/c">c</a>'
"""A name that Plotly would draw as a live link (issue 36 item 5): given to a column of an
upload explained on the Patient page and to a method of a table of scores on Compare."""


def hostile_uploads() -> dict[str, tuple[str, bytes]]:
    """Odd uploads of a hostile visitor: label -> (file name, bytes). 60,000 columns x 3 rows
    (0.9 MB), a Markdown file name with formula cells, 20,000 columns with long names, and a
    file over the 50 MB upload limit."""
    wide = ",".join(f"c{i}" for i in range(60_000)) + "\n"
    wide += "".join(",".join("1" for _ in range(60_000)) + "\n" for _ in range(3))
    long = ",".join(f"g{i:05d}_{'x' * 50}" for i in range(20_000)) + ",y\n"
    long += "".join(",".join(str((i + r) % 3) for i in range(20_001)) + "\n" for r in range(20))
    formulas = "a,b,y\n" + "".join(f'=HYPERLINK("http://evil.example"),@SUM(A{i}),{i % 2}\n'
                                    for i in range(60))
    return {"60,000 columns": ("wide.csv", wide.encode()),
            "Markdown file name": (MARKDOWN_NAME, formulas.encode()),
            "20,000 long column names": ("long_header.csv", long.encode()),
            "over 50 MB": ("big.csv", b"a,b\n" + b"1,2\n" * (13 * 2**20 + 1))}


HEAVY_SIZES = {"patient_rows": 200, "patient_features": 16, "wide_rows": 60,
               "wide_features": 1000, "score_datasets": 4000}
"""The hostile visitor's heavy inputs (issue 36 items 1-3): a 200 x 16 upload (values 0-2,
~7 KB) explained on the Patient page with the default method, a 1,000-feature upload explained
with naive Bayes, and 2 methods x 4,000 data sets of scores on Compare."""
SMOKE_SIZES = {"patient_rows": 60, "patient_features": 8, "wide_rows": 40,
               "wide_features": 40, "score_datasets": 200}
"""The same actions at a size a test can afford (``tests/load``)."""


def _csv_cell(text: str) -> str:
    """``text`` as one CSV cell (quoted, inner quotes doubled)."""
    return '"' + text.replace('"', '""') + '"'


def _coded_table(n_rows: int, n_features: int, seed: int,
                 names: list[str] | None = None) -> bytes:
    """``n_rows`` rows of ``n_features`` columns (named ``names``, else f0, f1, ...) of values
    0-2 and a two-valued ``class``."""
    rng = np.random.default_rng(seed)
    x = rng.integers(0, 3, size=(n_rows, n_features))
    y = (x[:, : max(1, n_features // 4)].sum(axis=1) + rng.integers(0, 2, n_rows)) % 2
    names = names or [f"f{j}" for j in range(n_features)]
    head = ",".join(_csv_cell(n) for n in names) + ",class\n"
    return (head + "".join(",".join(map(str, r)) + f",{c}\n" for r, c in zip(x, y))).encode()


def _scores_table(n_datasets: int, methods: tuple[str, ...], seed: int) -> bytes:
    """A table of scores (data set, method, accuracy) of ``methods`` on ``n_datasets``."""
    rng = np.random.default_rng(seed)
    acc = rng.uniform(0.6, 0.95, size=(n_datasets, len(methods)))
    return ("dataset,method,accuracy\n" + "".join(
        f"d{i},{_csv_cell(m)},{acc[i, k]:.4f}\n" for i in range(n_datasets)
        for k, m in enumerate(methods))).encode()


def heavy_uploads(sizes: dict | None = None, smoke: bool = False
                  ) -> dict[str, tuple[str, bytes]]:
    """The heavy visitor's files (:data:`HEAVY_SIZES`): label -> (file name, bytes). With
    ``smoke`` the link names ride on the heavy files (the Patient upload's first column, a
    third method of the table of scores) instead of files of their own (:func:`_heavy_starts`)."""
    z = {**HEAVY_SIZES, **(sizes or {})}
    patient_names = ([LINK_NAME] + [f"f{j}" for j in range(1, z["patient_features"])]
                     if smoke else None)
    files = {
        "patient": ("patient_16.csv", _coded_table(z["patient_rows"], z["patient_features"], 1,
                                                   names=patient_names)),
        "wide_nb": ("wide_nb.csv", _coded_table(z["wide_rows"], z["wide_features"], 2)),
        "scores": ("scores.csv", _scores_table(
            z["score_datasets"], (LINK_NAME, "nb", "tan") if smoke else ("nb", "tan"), 3))}
    if not smoke:
        files["link_columns"] = ("link_names.csv", _coded_table(
            60, 4, 4, names=[LINK_NAME, "f1", "f2", "f3"]))
        files["link_methods"] = ("link_scores.csv", _scores_table(30, (LINK_NAME, "nb", "tan"), 5))
    return files


def _choose(page, label: str, option: str) -> None:
    """Pick ``option`` in the selectbox labelled ``label`` (typed to filter a long list)."""
    box = page.locator('[data-testid="stSelectbox"]', has_text=label).first
    box.wait_for()  # a busy server draws the page late
    box.click()
    options = page.get_by_role("option", name=option, exact=True)
    if not options.count():
        page.keyboard.type(option)
    options.first.click()
    wait_idle(page, timeout=120)


def _start_patient_upload(url: str, name: str, path: Path, timeout: float,
                          method: str | None = None):
    """Item 1 / 2: upload a file on the Data page, open the Patient page (its first row), and
    with ``method`` (a display name) choose that method."""
    upload = _start_upload(url, name, path, timeout)

    def start(page) -> None:
        upload(page)
        # the app has read the file (a busy server answers late; the Patient page needs it)
        page.get_by_text(f"uploaded {name} — outcome:").first.wait_for(timeout=timeout * 1000)
        wait_idle(page, timeout=timeout)
        nav(page, "Patient")
        if method is not None:
            _choose(page, "Method", method)
    return start


WBC_LINK = "?src=bundled&file=wbc.csv"
"""The query string of the Data page's default data set: a link to any page with it opens
that page on WBC (``app.py`` restores the data set a link names), without drawing the Data
page first."""


def _page_link(url: str, label: str) -> str:
    """The link to the page ``label`` of the sidebar (e.g. "Compare methods") on WBC."""
    return f"{url}/{label.replace(' ', '_')}{WBC_LINK}"


def _start_scores(url: str, name: str, path: Path, timeout: float):
    """Item 3: a table of scores on Compare's "over several data sets"."""
    def start(page) -> None:
        page.goto(_page_link(url, "Compare methods"))
        wait_idle(page, timeout=timeout)
        page.get_by_text("Compare methods over several data sets").click()
        wait_idle(page, timeout=timeout)
        own = page.get_by_text("My own table (CSV)")
        if own.count():
            own.first.click()
            wait_idle(page, timeout=timeout)
        page.locator('[data-testid="stFileUploader"]', has_text="Table of scores").locator(
            '[data-testid="stFileUploaderDropzoneInput"]').set_input_files(_named(path, name))
    return start


def _start_and_leave(url: str, where: str, timeout: float):
    """Item 4: start a computation and close the tab while it runs: the Patient page's fit
    (WBC, the default method) or a cross-validation on Compare (its default methods)."""
    def start(page) -> None:
        page.goto(url)
        wait_idle(page, timeout=timeout)
        nav(page, where)
        if where == "Compare methods":
            page.get_by_test_id("stMainBlockContainer").get_by_role(
                "button", name="Run").click(timeout=timeout * 1000)
        page.get_by_role("progressbar").first.wait_for(timeout=timeout * 1000)
    return start


def _heavy_starts(url: str, files: dict, timeout: float, sizes: dict, smoke: bool = False
                  ) -> list[tuple[str, Any, bool]]:
    """(label, start, close at once) of the heavy actions, and of the uploads whose column or
    method names are links (:data:`LINK_NAME`; labels "names: ..."). With ``smoke`` (the files
    of ``heavy_uploads(smoke=True)``) one tab per item: the link names ride on item 1's upload
    and item 3's table, five tabs instead of seven."""
    pname, ppath = files["patient"]
    wname, wpath = files["wide_nb"]
    sname, spath = files["scores"]
    z = {**HEAVY_SIZES, **sizes}
    patient = f"{z['patient_rows']} x {z['patient_features']} upload on Patient, default method"
    scores = f"{z['score_datasets']:,} data sets of scores on Compare"
    starts = [
        ("names: " + patient + ", a link for a column name" if smoke else "heavy: " + patient,
         _start_patient_upload(url, pname, ppath, timeout), False),
        (f"heavy: {z['wide_rows']} x {z['wide_features']} upload on Patient, naive Bayes",
         _start_patient_upload(url, wname, wpath, timeout, method="Naive Bayes"), False),
        ("names: 3 methods (one named by a link) x " + scores if smoke
         else "heavy: 2 methods x " + scores, _start_scores(url, sname, spath, timeout), False)]
    if not smoke:
        starts += [
            ("names: a link for a column name, explained on Patient with naive Bayes",
             _start_patient_upload(url, *files["link_columns"], timeout, method="Naive Bayes"),
             False),
            ("names: a link for a method name in a table of scores on Compare",
             _start_scores(url, *files["link_methods"], timeout), False)]
    return starts + [
        ("heavy: tab closed during the Patient fit",
         _start_and_leave(url, "Patient", timeout), True),
        ("heavy: tab closed during a cross-validation",
         _start_and_leave(url, "Compare methods", timeout), True)]


def _outcome(page) -> str:
    """What the page shows after an action: an exception box, else its first error /
    warning, else "ok"."""
    exc = exception_text(page)
    if exc is not None:
        return "EXCEPTION: " + exc.splitlines()[0][:160]
    planted = page.locator('a[href^="javascript:"], a[href*="evil.example"], '
                           'a[*|href*="evil.example"], img[src*="evil.example"]')
    if planted.count():
        tag = planted.first.evaluate("e => e.outerHTML")
        return f"LINK RENDERED: the visitor's text became {tag[:120]}"
    chip = page.locator('[data-testid="stFileChipIconError"]')
    if chip.count():
        return "upload refused by the uploader"
    for test_id in ("stAlertContentError", "stAlertContentWarning"):
        box = page.get_by_test_id("stMain").locator(f'[data-testid="{test_id}"]')
        if box.count():
            return box.first.inner_text()[:160]
    return "ok"


def _settle(page, label: str, t0: float, deadline: float) -> dict:
    """Wait (until ``deadline``) for a tab's action to finish; what it showed and how long it
    took from its start (an upper bound: the tabs are waited for one after another)."""
    try:
        wait_idle(page, timeout=max(deadline - time.time(), 1.0))
        if label.startswith("names:"):  # the names must reach a drawn chart to be checked
            try:
                page.locator(".js-plotly-plot .main-svg").first.wait_for(
                    timeout=max(deadline - time.time(), 1.0) * 1000)
            except Exception:  # noqa: BLE001 - recorded below
                return {"action": label, "seconds": round(time.perf_counter() - t0, 2),
                        "shown": "no chart drawn"}
        outcome = _outcome(page)
    except Exception as e:  # noqa: BLE001 - a hostile action that hangs is itself a finding
        outcome = f"no answer by the end of the round ({type(e).__name__})"
    return {"action": label, "seconds": round(time.perf_counter() - t0, 2), "shown": outcome}


def _launch(browser, label: str, start, timeout: float):
    """A fresh tab with ``start(page)`` begun in it; ``(label, context, page, t0)`` or a record
    of the failure to begin."""
    ctx = browser.new_context(viewport=LAPTOP)
    page = ctx.new_page()
    page.set_default_timeout(timeout * 1000)
    try:
        start(page)
    except Exception as e:  # noqa: BLE001 - recorded, the other actions go on
        ctx.close()
        first = str(e).strip().splitlines()[0][:120] if str(e).strip() else ""
        return {"action": label, "seconds": 0.0,
                "shown": f"could not start ({type(e).__name__}: {first})"}
    return label, ctx, page, time.perf_counter()


def _start_upload(url: str, name: str, path: Path, timeout: float):
    def start(page) -> None:
        page.goto(url)
        wait_idle(page, timeout=timeout)
        page.get_by_text("My own CSV file").click()
        wait_idle(page, timeout=timeout)
        page.locator('[data-testid="stFileUploaderDropzoneInput"]').set_input_files(
            _named(path, name))
    return start


def _start_reports(url: str, timeout: float):
    def start(page) -> None:
        page.goto(url)
        wait_idle(page, timeout=timeout)
        _type_store_folder(page)
    return start


def _lower_visitor_priority() -> None:
    """Put this process (and every process it starts) in Linux's ``SCHED_IDLE`` class: it runs
    only on CPU no other process wants. Not ``nice 19``: Chromium sets its own processes'
    niceness (measured: its browser process at -8, renderers at 0 and 5, whatever the
    niceness it was started with), but keeps the scheduling class it inherits (every thread of
    a headless chromium started under ``SCHED_IDLE`` stayed there). Falls back to ``nice 19``
    where ``SCHED_IDLE`` is missing."""
    try:
        os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))
    except (AttributeError, OSError):
        os.nice(19)


def hostile_session(url: str, stop, out: Path, timeout: float = 120.0, begun=None,
                    heavy: dict | None = None, light: bool = True, priority: str = "normal",
                    smoke: bool = False) -> None:
    """Rounds of hostile actions until ``stop`` (a multiprocessing event) is set: every crafted
    link and every odd upload (``light``), and with ``heavy`` (sizes, :data:`HEAVY_SIZES`) the
    heavy actions of issue 36 items 1-4 (:func:`_heavy_starts`), each in a fresh tab, all begun
    at once (a visitor does not wait for the server), then each tab waited for until the
    round's ``timeout`` (a tab of item 4 is closed as soon as its computation shows progress);
    the records go to ``out`` (JSON). Runs in its own process (playwright's sync API is
    single-threaded); ``begun`` (a multiprocessing event) is set once the first round's tabs
    have all begun. ``priority``: the CPU priority of the visitor's process and browser
    (:data:`VISITOR_PRIORITIES`, set before the browser starts). ``smoke``: one round, then
    idle until ``stop``, with the link names on the heavy files (:func:`heavy_uploads`,
    :func:`_heavy_starts`: five tabs, not seven)."""
    files = hostile_uploads() if light else {}
    heavy_files = heavy_uploads(heavy, smoke=smoke) if heavy is not None else {}
    records: list[dict] = []
    folder = Path(tempfile.mkdtemp(prefix="bnma_hostile_"))
    for group in (files, heavy_files):
        for label, (name, data) in group.items():  # playwright takes a path, not > 50 MB
            path = folder / f"{len(list(folder.iterdir()))}.csv"
            path.write_bytes(data)
            group[label] = (name, path)
    if priority == "idle":
        _lower_visitor_priority()  # before the browser starts: its processes inherit it
    rounds = 0
    with headless_chromium() as browser:
        while not stop.is_set() and not (smoke and rounds):
            rounds += 1
            starts = [(f"link: {label}", lambda p, q=query: p.goto(url + "/" + q,
                                                                   wait_until="commit"), False)
                      for label, query in (HOSTILE_LINKS.items() if light else ())]
            starts += [(f"upload: {label}", _start_upload(url, name, path, timeout), False)
                       for label, (name, path) in files.items()]
            if light:
                starts.append(("Reports: store folder /tmp/bnma_hostile",
                               _start_reports(url, timeout), False))
            if heavy_files:
                starts += _heavy_starts(url, heavy_files, timeout, heavy or {}, smoke=smoke)
            tabs = []
            for label, start, leave in starts:
                tab = _launch(browser, label, start, timeout)
                if isinstance(tab, dict):
                    records.append(tab)
                elif leave:  # item 4: the tab goes away while its computation runs
                    tab[1].close()
                    records.append({"action": label, "seconds": round(
                        time.perf_counter() - tab[3], 2), "shown": "closed mid-run"})
                else:
                    tabs.append(tab)
            if begun is not None:
                begun.set()
            deadline = time.time() + timeout
            for label, ctx, page, t0 in tabs:
                records.append(_settle(page, label, t0, deadline))
                ctx.close()
            out.write_text(json.dumps(records, indent=1))
    out.write_text(json.dumps(records, indent=1))
    stop.wait()  # its rounds done (browser closed): the visitor waits until the runs end
    shutil.rmtree(folder, ignore_errors=True)


def _named(path: Path, name: str) -> Path:
    """``path`` under the file name the visitor wants the server to see (a link in the same
    folder; the browser sends the file's own name)."""
    target = path.parent / "named" / name
    if not target.exists():
        target.parent.mkdir(exist_ok=True)
        target.symlink_to(path)
    return target


def _type_store_folder(page) -> None:
    nav(page, "Reports")
    box = page.locator('input[aria-label="Store folder"]')
    box.fill("/tmp/bnma_hostile")
    box.press("Enter")


def _start_hostile(url: str, out: Path, timeout: float = 120.0, heavy: dict | None = None,
                   light: bool = True, priority: str = "normal", smoke: bool = False):
    """The hostile visitor in a child process (spawned: a fresh interpreter)."""
    ctx = multiprocessing.get_context("spawn")
    stop, begun = ctx.Event(), ctx.Event()
    proc = ctx.Process(target=hostile_session,
                       args=(url, stop, out, timeout, begun, heavy, light, priority, smoke),
                       daemon=True)
    proc.start()
    return proc, begun, stop, out


def _stop_hostile(proc, begun, stop, out: Path, timeout: float = 180.0) -> list[dict]:
    """Ask the visitor to stop after its current action; its records."""
    stop.set()
    proc.join(timeout)
    if proc.is_alive():  # an action that never answers: end the visitor we started
        proc.terminate()
        proc.join(10)
    try:
        return json.loads(out.read_text())
    except (OSError, ValueError):
        return []


_STOP_LINE = re.compile(r"background run \S+ ended ([0-9.]+) s after Stop")


_CLOSED_LINE = re.compile(r"background run \S+ ended [0-9.]+ s after Stop \(closed[^)]*?"
                          r"([0-9.]+) s after its session closed\)")


def closed_run_seconds(log: Path) -> list[float]:
    """Per run stopped because its session closed (``bnma_ui.background``'s log line): seconds
    from the close to the end of its work."""
    try:
        return [float(m.group(1)) for m in _CLOSED_LINE.finditer(log.read_text())]
    except OSError:
        return []


WARMUP_LINE = re.compile(r"kernel warm-up done in [0-9.]+ s")


WARMUP_WAIT_S = 900.0
"""How long :func:`classroom_round` waits for the server's kernel warm-up before it measures
the server's resting memory. The warm-up runs at low priority: on a fresh clone it compiles
every kernel (89 s on an idle machine), and beside a test suite busy on both cores it took
over 300 s (a CI run measured the baseline mid-warm-up, 320 MB, then 537 MB once it ended)."""


def wait_for_warmup(log: Path, timeout: float = WARMUP_WAIT_S) -> bool:
    """Wait until the server log says its one-time kernel warm-up ended
    (``bnma_ui.cache.start_warmup``'s line), at most ``timeout`` seconds; whether it did. The
    warm-up loads every kernel's machine code (~200 MB on a fresh clone): memory measured
    before it ends is not the server's resting size."""
    deadline = time.time() + timeout
    while True:
        try:
            if WARMUP_LINE.search(log.read_text(errors="replace")):
                return True
        except OSError:
            pass
        if time.time() >= deadline:
            return False
        time.sleep(0.5)  # polling a file for a condition


def server_tracebacks(log: Path) -> int:
    """How many tracebacks the server log holds."""
    try:
        return len(re.findall(r"^Traceback", log.read_text(errors="replace"), flags=re.M))
    except OSError:
        return 0


def server_stop_seconds(log: Path) -> float:
    """The largest "ended ... s after Stop" of the server log (``bnma_ui.background``), NaN if
    no run was stopped."""
    try:
        found = [float(m.group(1)) for m in _STOP_LINE.finditer(log.read_text())]
    except OSError:
        return float("nan")
    return max(found) if found else float("nan")


# --- the classroom: many sessions stepping chains on the Teach page -------------------------
STEP_TIMEOUT_S = 60.0
"""A step whose iteration has not shown after this long counts as an error."""

# One "+1" click in the Teach page's step player (an iframe: the browser plays a batch of
# moves the server computed at once, DESIGN §14), timed in the player itself: the click, then
# a MutationObserver (not throttled like timers of a page without focus) until "#iteration"
# shows a larger number. The outcome goes to window.__bnmaStep for the driver to collect.
_JS_STEP = """
(timeoutMs) => {
  const iteration = () => {
    const el = document.getElementById('iteration');
    return el ? (parseInt(el.innerText.split(' of ')[0].replace(/,/g, ''), 10) || 0) : 0;
  };
  const button = document.getElementById('b1');
  if (!button || button.disabled) {
    window.__bnmaStep = {pending: false, ms: null, error: 'no enabled +1 button'};
    return;
  }
  const from = iteration();
  const t0 = performance.now();
  window.__bnmaStep = {pending: true, from: from};
  let observer = null;
  const check = () => {
    if (!window.__bnmaStep.pending) return;
    const now = iteration();
    if (now > from) {
      window.__bnmaStep = {pending: false, ms: performance.now() - t0, from: from, to: now};
    } else if (performance.now() - t0 > timeoutMs) {
      window.__bnmaStep = {pending: false, ms: null, from: from, to: now,
                           error: 'the next iteration did not show'};
    } else {
      setTimeout(check, 250);
      return;
    }
    if (observer) observer.disconnect();
  };
  observer = new MutationObserver(check);
  observer.observe(document.body, {subtree: true, childList: true, characterData: true});
  button.click();
  setTimeout(check, 250);
}
"""


def _player(page, timeout: float = 240.0):
    """The frame of the Teach page's step player (waits until it has drawn)."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        for frame in page.frames:
            try:
                if frame.locator("#iteration").count():
                    return frame
            except Exception:  # noqa: BLE001 - a frame detached while looking
                continue
        page.wait_for_timeout(200)  # polling the frames
    return None


@dataclass
class ClassroomResult:
    label: str
    n_steppers: int
    n_runners: int
    step_interval_s: float
    steps: int = 0
    step_p50_s: float = float("nan")
    step_p95_s: float = float("nan")
    step_max_s: float = float("nan")
    steps_per_session_per_s: float = float("nan")
    """Achieved step rate (the target is 1 / step_interval_s)."""
    iterations_reached: list[int] = field(default_factory=list)
    runs_completed: int = 0
    run_seconds: list[float] = field(default_factory=list)
    open_seconds: float = float("nan")
    """Opening every session on its page (first page view: imports, compilation)."""
    first_step_p95_s: float = float("nan")
    """p95 of each stepper's first step (the part a cold server pays compilation in)."""
    rss_before_mb: float = float("nan")
    """The server before the class arrives (one visit to each page made and closed)."""
    warmup_ended: bool | None = None
    """Whether the server's kernel warm-up had ended before ``rss_before_mb`` was measured
    (None: no server log to tell)."""
    rss_start_mb: float = float("nan")
    rss_peak_mb: float = float("nan")
    rss_end_mb: float = float("nan")
    stepping_seconds: float = float("nan")
    server_cpu_share: float = float("nan")
    """The server's CPU seconds per second while the class stepped (2 = both cores)."""
    server_cpu_idle_share: float = float("nan")
    """The server's CPU share with every tab open and nothing clicked (Streamlit's own
    keep-alive work, the kernels' warm-up thread): the floor under ``server_cpu_share``."""
    server_cpu_per_step_s: float = float("nan")
    """The server's CPU seconds while the class stepped, per step taken (an upper bound of a
    step's cost: it includes the runners' order MCMC and Streamlit's own work)."""
    browser_cpu_share: float = float("nan")
    """The same for the headless chromium driving the sessions (this process's children): on
    one machine the browser competes with the server for the cores."""
    errors: list[str] = field(default_factory=list)
    uptime: str = ""

    def as_dict(self) -> dict:
        return asdict(self)


def load_average() -> str:
    """The machine's 1 / 5 / 15-minute load averages (the figures depend on what else runs)."""
    try:
        return " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return ""


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of a process (Linux ``/proc``), NaN elsewhere."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return float("nan")


def _children() -> dict[int, list[int]]:
    """Parent pid -> its children's pids, from one scan of Linux ``/proc``."""
    children: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
            children.setdefault(int(fields[1]), []).append(int(stat.parent.name))
        except (OSError, IndexError, ValueError):
            continue
    return children


def _descendants(pid: int, children: dict[int, list[int]] | None = None) -> list[int]:
    """Every process below ``pid`` (Linux ``/proc``; ``children``: a scan of
    :func:`_children` to reuse)."""
    children = _children() if children is None else children
    found, todo = [], [pid]
    while todo:
        kids = children.get(todo.pop(), [])
        found += kids
        todo += kids
    return found


def _browser_cpu_seconds(server_pid: int) -> float:
    """CPU seconds of this process's descendants other than the server (the browser's)."""
    return sum(cpu_seconds(p) for p in _descendants(os.getpid()) if p != server_pid
               and cpu_seconds(p) == cpu_seconds(p))


def _open(browser, url: str, path: str):
    ctx = browser.new_context(viewport=LAPTOP)
    page = ctx.new_page()
    page.set_default_timeout(180_000)
    page.goto(f"{url}/{path}")
    wait_idle(page, timeout=240)
    return ctx, page


def _step_state(frame) -> dict | None:
    return frame.evaluate("() => window.__bnmaStep || null")


def _class_baseline(browser, url: str, pid: int, n_runners: int, log: Path | None,
                    res: ClassroomResult) -> None:
    """The server before a class arrives (``res.rss_before_mb``): one visit to each page the
    class uses made and closed, the kernel warm-up it started waited for (``log``)."""
    probe = [_open(browser, url, "Teach")] + ([_open(browser, url, "")] if n_runners else [])
    # the page idle before its script ran (the session not yet connected) would close it
    # unrun and the warm-up would never start: wait for its title, then for the run's end
    probe[0][1].get_by_role("heading", name="Teach: guided lessons").wait_for(timeout=240_000)
    wait_idle(probe[0][1], timeout=240)
    if n_runners:
        nav(probe[1][1], "Order MCMC")
    for ctx, _ in probe:
        ctx.close()
    if log is not None:  # the probe's page started the server's kernel warm-up
        res.warmup_ended = wait_for_warmup(log)
    res.rss_before_mb = _settled_rss(pid, timeout=60.0)


def _start_runs(runners: list, res: ClassroomResult) -> dict[int, float]:
    """Click Run on every runner's Order MCMC page: runner -> when it started (a click that
    failed is an error in ``res``)."""
    started = {}
    for i, (_, page) in enumerate(runners):
        try:
            page.get_by_test_id("stMainBlockContainer").get_by_role(
                "button", name="Run").click(timeout=30_000)
            started[i] = time.perf_counter()
        except Exception as e:  # noqa: BLE001 - recorded, the class goes on
            res.errors.append(f"runner {i}: Run could not be clicked ({type(e).__name__})")
    return started


def _runs_ended(runners: list, started: dict, ended: dict, res: ClassroomResult) -> None:
    """Record in ``ended`` when each started run stopped running (an exception shown: an
    error in ``res``)."""
    for i, (_, page) in enumerate(runners):
        if i in ended or i not in started:
            continue
        state = _state(page)
        if state != "running":
            ended[i] = time.perf_counter()
            if state == "error":
                res.errors.append(f"runner {i}: exception shown")


def _collect_in_flight(players: list, pending: list, latencies: list, reached: list) -> None:
    """The steps still in flight when the class ends, collected up to their timeout."""
    deadline = time.perf_counter() + STEP_TIMEOUT_S
    while any(pending) and time.perf_counter() < deadline:
        for i in range(len(players)):
            if pending[i]:
                state = _step_state(players[i])
                if state is not None and not state.get("pending"):
                    pending[i] = False
                    if state.get("ms") is not None:
                        latencies.append(state["ms"] / 1000)
                        reached[i] = int(state["to"])
        time.sleep(0.05)  # polling


def _step_summary(res: ClassroomResult, latencies: list[float], first: list[float]) -> None:
    """The step figures of ``res`` from every step's latency and each stepper's first."""
    res.steps = len(latencies)
    if latencies:
        res.step_p50_s = round(float(np.percentile(latencies, 50)), 3)
        res.step_p95_s = round(float(np.percentile(latencies, 95)), 3)
        res.step_max_s = round(max(latencies), 3)
        res.steps_per_session_per_s = round(len(latencies) / res.n_steppers
                                            / res.stepping_seconds, 3)
        res.server_cpu_per_step_s = round(res.server_cpu_share * res.stepping_seconds
                                          / len(latencies), 4)
    if first:
        res.first_step_p95_s = round(float(np.percentile(first, 95)), 3)


def _poll_steppers(players: list, pending: list, due: list, step_interval: float,
                   latencies: list, first: dict, reached: list, res: ClassroomResult) -> None:
    """One pass over the steppers: a step that has shown is recorded (its latency, the
    iteration reached; a failed one is an error in ``res``) and the next one due
    ``step_interval`` s later; a stepper whose step is due clicks "+1"."""
    for i in range(len(players)):
        if pending[i]:
            state = _step_state(players[i])
            if state is None or state.get("pending"):
                continue
            pending[i] = False
            if state.get("ms") is None:
                res.errors.append(f"stepper {i}: {state.get('error')} "
                                  f"(iteration {state.get('from')})")
            else:
                latencies.append(state["ms"] / 1000)
                first.setdefault(i, state["ms"] / 1000)
                reached[i] = int(state["to"])
            due[i] = max(due[i] + step_interval, time.perf_counter())
        elif time.perf_counter() >= due[i]:
            players[i].evaluate(_JS_STEP, STEP_TIMEOUT_S * 1000)
            pending[i] = True


def classroom_round(browser, url: str, pid: int, label: str, n_steppers: int = 30,
                    n_runners: int = 2, step_interval: float = 2.0,
                    min_seconds: float = 60.0, max_seconds: float = 240.0,
                    log: Path | None = None, idle_seconds: float = 0.0) -> ClassroomResult:
    """One class on a served app: open ``n_steppers`` sessions on the Teach page and
    ``n_runners`` on Order MCMC (the Data page's default WBC, the page's default settings),
    click Run in the latter, then have every stepper click "+1" in the page's step player
    every ``step_interval`` s (staggered; the next click once the previous step has shown; the
    player plays the moves the server sent in one batch, so a step is the browser's work
    alone) until the runs have ended and
    ``min_seconds`` have passed, or ``max_seconds``; then close every tab and wait until the
    server has freed them. ``idle_seconds``: a window, with every tab open and nothing clicked,
    over which the server's idle CPU share is measured first (``server_cpu_idle_share``)."""
    res = ClassroomResult(label, n_steppers, n_runners, step_interval, uptime=load_average())
    log_offset = log.stat().st_size if log is not None and log.exists() else 0
    _class_baseline(browser, url, pid, n_runners, log, res)
    sampler = _PeakRss(pid)  # from the class's arrival on: opening a page costs memory too
    t0 = time.perf_counter()
    steppers = [_open(browser, url, "Teach") for _ in range(n_steppers)]
    runners = [_open(browser, url, "") for _ in range(n_runners)]  # the Data page loads WBC
    for _, page in runners:
        nav(page, "Order MCMC")
    res.open_seconds = round(time.perf_counter() - t0, 1)
    players = [_player(page) for _, page in steppers]
    for i, frame in enumerate(players):
        if frame is None:
            res.errors.append(f"stepper {i}: no step player on the Teach page")
    if any(f is None for f in players):
        players = []  # nothing to click: the errors say why
    res.rss_start_mb = rss_mb(pid)
    if idle_seconds > 0:  # a measurement window, nothing to wait for
        idle0, t_idle = cpu_seconds(pid), time.perf_counter()
        time.sleep(idle_seconds)
        res.server_cpu_idle_share = round((cpu_seconds(pid) - idle0)
                                          / (time.perf_counter() - t_idle), 3)
    started = _start_runs(runners, res)
    latencies: list[float] = []
    first: dict[int, float] = {}
    ended: dict[int, float] = {}
    begin = time.perf_counter()
    cpu0 = cpu_seconds(pid), _browser_cpu_seconds(pid)
    due = [begin + step_interval * i / max(n_steppers, 1) for i in range(n_steppers)]
    pending = [False] * n_steppers
    reached = [0] * n_steppers
    last_runner_check = 0.0
    while True:
        now = time.perf_counter()
        runs_over = len(ended) + (n_runners - len(started)) >= n_runners
        if now - begin >= max_seconds or (runs_over and now - begin >= min_seconds):
            break
        _poll_steppers(players, pending, due, step_interval, latencies, first, reached, res)
        if time.perf_counter() - last_runner_check > 2.0:
            last_runner_check = time.perf_counter()
            _runs_ended(runners, started, ended, res)
        time.sleep(0.02)  # the driver's polling interval
    res.stepping_seconds = round(time.perf_counter() - begin, 1)
    res.server_cpu_share = round((cpu_seconds(pid) - cpu0[0]) / res.stepping_seconds, 2)
    res.browser_cpu_share = round((_browser_cpu_seconds(pid) - cpu0[1])
                                  / res.stepping_seconds, 2)
    _collect_in_flight(players, pending, latencies, reached)
    for i in [i for i in range(n_steppers) if pending[i]]:
        res.errors.append(f"stepper {i}: a step still pending at the end")
    for i, (_, page) in enumerate([*steppers, *runners]):
        if exception_text(page) is not None:
            res.errors.append(f"session {i}: exception shown")
    res.rss_peak_mb = sampler.stop()
    res.runs_completed = len(ended)
    res.run_seconds = [round(ended[i] - started[i], 1) for i in sorted(ended)]
    res.iterations_reached = reached
    _step_summary(res, latencies, list(first.values()))
    for ctx, _ in [*steppers, *runners]:
        ctx.close()
    res.rss_end_mb = _rss_after_sessions_closed(browser, url, pid, res.rss_before_mb)
    if log is not None and log.exists():
        text = log.read_text(errors="replace")[log_offset:]
        n_tb = len(re.findall(r"^Traceback", text, flags=re.M))
        if n_tb:
            res.errors.append(f"{n_tb} traceback(s) in the server log")
    return res
