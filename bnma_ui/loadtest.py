"""A class at once: N browser sessions run order MCMC on one server while an observer switches
pages (issue 14, "A class at once").

Measures, per run: completion of every session's run, Stop latency (click to "Stopped after")
of one session, page-switch latency of an observer (p50 / p95), the server's RSS before the
runs (every session open, the pages' modules imported), at peak and after every session has
closed. Used by ``benchmarks/load_test.py`` (N = 2..8) and, with N = 2, by
``tests/test_load.py``.
"""

from __future__ import annotations

import re
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

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

    def as_dict(self) -> dict:
        return asdict(self)


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


def _switch(page, label: str) -> float:
    t0 = time.perf_counter()
    page.locator('[data-testid="stSidebarNav"] a', has_text=label).first.click()
    page.get_by_role("heading", name=PAGE_HEADINGS[label]).first.wait_for(timeout=120_000)
    return time.perf_counter() - t0


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
    """Click session 0's Stop and wait for "Stopped after" (``res.stop_latency_s``); returns
    the click time and the page state afterwards."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    stop_clicked = time.perf_counter()
    button = page.get_by_test_id("stMainBlockContainer").get_by_role("button", name="Stop")
    try:
        button.click(timeout=30_000)
        page.get_by_text("Stopped after").wait_for(timeout=120_000)
        res.stop_latency_s = time.perf_counter() - stop_clicked
        state = "stopped"
    except PlaywrightTimeout:  # the run ended before the click: say so
        res.errors.append("session 0's run ended before Stop could be "
                          f"clicked (page state: {_state(page)})")
        state = _state(page)
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
        switches.append(_switch(observer[1], target))
        target = "Compare methods" if target == "Order MCMC" else "Order MCMC"
    return ended, switches, peak


def run_load(n_sessions: int, iterations: int = 20_000, log_dir: Path | None = None,
             timeout: float = 600.0) -> LoadResult:
    """Serve the app, open ``n_sessions`` sessions that each start an order-MCMC run on WBC
    (session 0 stops its run once progress shows), and an observer that switches pages while
    the runs go on."""
    res = LoadResult(n_sessions, iterations)
    log_dir = Path(log_dir or Path.cwd() / "benchmarks" / "out")
    with streamlit_server(log_dir / f"load_{n_sessions}.log") as (url, proc), \
            headless_chromium() as browser:
        sessions, observer = _prepare_sessions(browser, url, n_sessions, iterations)
        # every page imported and the server's one-time kernel warm-up settled, before any run
        res.rss_start_mb = _settled_rss(proc.pid, timeout=180.0)
        started = _click_run(sessions, res, log_dir, n_sessions)
        ended, switches, peak = _watch_runs(sessions, observer, res, proc.pid, timeout)
        res.completed = len(ended)
        res.run_seconds = [round(ended[i] - started[i], 2) for i in sorted(ended)]
        if switches:
            res.switches = len(switches)
            res.switch_p50_s = float(np.percentile(switches, 50))
            res.switch_p95_s = float(np.percentile(switches, 95))
        res.rss_peak_mb = peak
        for ctx, _ in [*sessions, observer]:
            ctx.close()
        res.rss_end_mb = _rss_after_sessions_closed(browser, url, proc.pid, res.rss_start_mb)
    res.server_stop_s = server_stop_seconds(log_dir / f"load_{n_sessions}.log")
    return res


_STOP_LINE = re.compile(r"background run \S+ ended ([0-9.]+) s after Stop")


def server_stop_seconds(log: Path) -> float:
    """The largest "ended ... s after Stop" of the server log (``bnma_ui.background``), NaN if
    no run was stopped."""
    try:
        found = [float(m.group(1)) for m in _STOP_LINE.finditer(log.read_text())]
    except OSError:
        return float("nan")
    return max(found) if found else float("nan")
