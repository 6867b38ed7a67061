"""Drive the dashboard in a real browser: a ``streamlit run`` server and headless chromium.

Shared by the browser tests (``tests/browser/test_browser.py``, ``tests/load/test_load.py``) and
the load benchmark (``benchmarks/load_test.py``). Uses Debian's ``/usr/bin/chromium`` through
playwright-python (never downloads a browser). Every wait is on a condition with a timeout.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from contextlib import contextmanager
from pathlib import Path

from . import ROOT

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                 "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--no-first-run"]


def missing_requirement() -> str | None:
    """Why a browser session cannot run here (no chromium, no playwright), else None."""
    if not os.path.exists(CHROMIUM):
        return f"{CHROMIUM} is absent (apt-get install chromium)"
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "playwright-python is not installed"
    return None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def streamlit_server(log_path: Path, start_timeout: float = 90.0, app_dir: Path | None = None,
                     env: dict[str, str] | None = None):
    """Serve ``app.py`` on a free loopback port; yields ``(url, process)``. ``app_dir``: the
    checkout to serve (default this one), its packages first on the server's path; ``env``:
    extra environment variables of the server (e.g. ``NUMBA_DEBUG_CACHE``)."""
    port = free_port()
    log_path.parent.mkdir(parents=True, exist_ok=True)
    app_dir = Path(app_dir or ROOT).resolve()
    env = {**os.environ, **(env or {}), "PYTHONPATH": str(app_dir)}
    with open(log_path, "w") as log:
        proc = subprocess.Popen(
            [sys.executable, "-m", "streamlit", "run", "app.py", "--server.headless", "true",
             "--server.port", str(port), "--server.address", "127.0.0.1",
             "--browser.gatherUsageStats", "false", "--server.fileWatcherType", "none"],
            cwd=app_dir, env=env, stdout=log, stderr=subprocess.STDOUT)
        url = f"http://127.0.0.1:{port}"
        deadline = time.time() + start_timeout
        try:
            while True:
                try:
                    with urllib.request.urlopen(url + "/_stcore/health", timeout=2) as r:
                        if r.read().strip() == b"ok":
                            break
                except OSError:
                    pass
                if proc.poll() is not None or time.time() > deadline:
                    raise RuntimeError(f"streamlit did not start; see {log_path}")
                time.sleep(0.3)  # polling the health endpoint
            yield url, proc
        finally:
            proc.terminate()
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()


LAPTOP = {"width": 1280, "height": 800}
"""The viewport of every browser session here (issue 14: the dashboard on a laptop)."""


@contextmanager
def headless_chromium():
    """Debian's chromium, headless, through playwright-python; yields the browser."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        try:
            yield browser
        finally:
            browser.close()


@contextmanager
def laptop_page(browser, timeout_ms: int = 60_000):
    """A page in a fresh context with the :data:`LAPTOP` viewport; every locator wait times
    out after ``timeout_ms``."""
    ctx = browser.new_context(viewport=LAPTOP)
    try:
        page = ctx.new_page()
        page.set_default_timeout(timeout_ms)
        yield page
    finally:
        ctx.close()


def exception_text(page) -> str | None:
    """The text of the first Streamlit exception box on the page, or None when there is none."""
    boxes = page.locator('[data-testid="stException"]')
    return boxes.first.inner_text() if boxes.count() else None


def screenshot(page, path: Path) -> None:
    """Screenshot of the whole page: Streamlit scrolls inside its main block, so the viewport
    is stretched to the content's height for the picture, then restored."""
    path.parent.mkdir(parents=True, exist_ok=True)
    page.mouse.move(5, 5)  # no tooltip over the content
    page.evaluate("() => document.activeElement && document.activeElement.blur()")
    size = page.viewport_size
    height = page.evaluate(
        "() => { const m = document.querySelector('[data-testid=\"stMain\"]');"
        " return m ? m.scrollHeight : document.body.scrollHeight; }")
    page.set_viewport_size({"width": size["width"], "height": int(min(max(height, 600), 7000))})
    page.screenshot(path=str(path))
    page.set_viewport_size(size)


def rss_mb(pid: int) -> float:
    """Resident memory of a process in MB (Linux ``/proc``), NaN elsewhere."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return float("nan")


def wait_idle(page, settle: float = 0.6, timeout: float = 90) -> None:
    """Wait until the app has rendered and no script run is in progress for ``settle`` s."""
    page.wait_for_selector('[data-testid="stApp"]', timeout=timeout * 1000)
    deadline = time.time() + timeout
    quiet_since = None
    while time.time() < deadline:
        running = page.locator('[data-testid="stStatusWidget"]').count() > 0
        skeleton = page.locator('[data-testid="stSkeleton"]').count() > 0
        if running or skeleton:
            quiet_since = None
        elif quiet_since is None:
            quiet_since = time.time()
        elif time.time() - quiet_since >= settle:
            return
        page.wait_for_timeout(100)  # polling interval of the condition above
    raise AssertionError("the app kept running for too long")


def nav(page, label: str) -> None:
    """Click a page in the sidebar navigation (keeps the session, unlike a new URL)."""
    page.locator('[data-testid="stSidebarNav"] a', has_text=label).first.click()
    wait_idle(page)


def metric(page, label: str) -> str:
    m = page.locator('[data-testid="stMetric"]', has_text=label).first
    return m.locator('[data-testid="stMetricValue"]').inner_text(timeout=5_000)


def set_number(page, label: str, value: int) -> None:
    box = page.locator(f'input[aria-label="{label}"]')
    box.fill(str(value))
    box.press("Enter")
    wait_idle(page)


def set_slider(page, label: str, value: int) -> None:
    """Move a Streamlit slider (an ``input type=range``) with the keyboard to ``value``."""
    slider = page.locator(f'input[type="range"][aria-label="{label}"]')
    slider.focus()
    for _ in range(50):
        now = int(slider.input_value())
        if now == value:
            break
        slider.press("ArrowRight" if now < value else "ArrowLeft")
    wait_idle(page)
    if int(slider.input_value()) != value:
        raise AssertionError(f"slider {label!r} did not reach {value}")
