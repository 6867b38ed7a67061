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


# --- geometry of what is drawn (issue 33: text over text, text cut, hidden columns) -----------

_GEOMETRY_JS = r"""
([figSel, ignore]) => {
  const problems = [];
  const shown = el => {
    for (let e = el; e && e.nodeType === 1; e = e.parentElement) {
      const s = getComputedStyle(e);
      if (s.display === 'none' || s.visibility === 'hidden' || +s.opacity === 0) return false;
    }
    return true;
  };
  const inter = (a, b) => Math.max(0, Math.min(a.right, b.right) - Math.max(a.left, b.left)) *
                          Math.max(0, Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top));
  const figs = [...document.querySelectorAll(figSel)];
  figs.forEach((fig, i) => {
    const svg = fig.matches('svg') ? fig : (fig.querySelector('svg.main-svg') || fig);
    const r = svg.getBoundingClientRect();
    if (r.width === 0) return;
    // what is seen of the figure: its SVG within every ancestor that clips (a container
    // narrower than the drawing cuts it there) and within the page's width
    const frame = {left: Math.max(r.left, 0), top: r.top,
                   right: Math.min(r.right, document.documentElement.clientWidth),
                   bottom: r.bottom};
    for (let e = svg.parentElement; e && e !== document.body; e = e.parentElement) {
      if (getComputedStyle(e).overflowX === 'visible') continue;
      const c = e.getBoundingClientRect();
      frame.left = Math.max(frame.left, c.left); frame.right = Math.min(frame.right, c.right);
    }
    const title = (fig.querySelector('.gtitle, .g-gtitle text, .xtitle, .ytitle') || {})
                  .textContent || `figure ${i + 1}`;
    const texts = [...fig.querySelectorAll('text')]
      .filter(t => t.textContent.trim() && !t.closest('.hoverlayer') && shown(t))
      .map(t => ({s: t.textContent.trim(), r: t.getBoundingClientRect()}))
      .filter(t => t.r.width > 0 && !ignore.some(w => t.s.includes(w)));
    for (const t of texts) {
      if (t.r.left < frame.left - 1 || t.r.right > frame.right + 1 ||
          t.r.top < frame.top - 1 || t.r.bottom > frame.bottom + 1)
        problems.push(`${title}: "${t.s}" is cut at the figure's edge`);
    }
    for (let a = 0; a < texts.length; a++) for (let b = a + 1; b < texts.length; b++) {
      const A = texts[a], B = texts[b];
      const small = Math.min(A.r.width * A.r.height, B.r.width * B.r.height);
      if (inter(A.r, B.r) > Math.max(4, 0.2 * small))
        problems.push(`${title}: "${A.s}" is drawn over "${B.s}"`);
    }
    const bar = fig.querySelector('.modebar-container .modebar');
    if (bar && shown(bar)) {
      const r = bar.getBoundingClientRect();
      const hit = texts.find(t => inter(t.r, r) > 0);
      if (hit) problems.push(`${title}: the chart toolbar covers "${hit.s}"`);
    }
  });
  return problems;
}
"""

_PAGE_JS = r"""
() => {
  const problems = [];
  const main = document.querySelector('[data-testid="stMain"]') || document.body;
  for (const grid of main.querySelectorAll('[data-testid="stDataFrame"]')) {
    if (grid.closest('[class*="st-key-data_preview"]')) continue;  // the user's own columns
    const sc = grid.querySelector('.dvn-scroller');
    const heads = [...grid.querySelectorAll('[role="columnheader"]')].map(h => h.textContent);
    if (sc && sc.scrollWidth > sc.clientWidth + 2)
      problems.push(`a table hides columns at this width (${heads.join(' | ')})`);
  }
  const cut = new Set();
  for (const el of main.querySelectorAll('*')) {
    const s = getComputedStyle(el);
    if (s.textOverflow !== 'ellipsis' || s.overflow === 'visible') continue;
    if (el.scrollWidth > el.clientWidth + 1 && el.textContent.trim() && !el.closest('input'))
      cut.add(el.textContent.trim());
  }
  for (const text of cut) problems.push(`"${text}" is cut off (…)`);
  return problems;
}
"""


def figure_text_problems(page, selector: str = ".js-plotly-plot",
                         ignore: tuple[str, ...] = ()) -> list[str]:
    """Every text of the figures matching ``selector`` (plotly's SVG ``text`` elements, as
    laid out by the browser: ``getBoundingClientRect``) that is cut at its figure's edge or
    drawn over another text (more than a fifth of the smaller box), and every chart toolbar
    shown over a text: one sentence each, empty when the figures read whole. Texts holding
    one of ``ignore`` are left out."""
    return page.evaluate(_GEOMETRY_JS, [selector, list(ignore)])


def page_layout_problems(page) -> list[str]:
    """Tables of the main area that hide columns (their grid scrolls sideways; rows of the
    user's data, :data:`bnma_ui.widgets.DATA_PREVIEW_KEY`, may) and texts cut off with an
    ellipsis: one sentence each."""
    return page.evaluate(_PAGE_JS)


def settle_figures(page, timeout: float = 30.0) -> None:
    """Wait until the plotly figures on the page have finished drawing: their texts' boxes
    are the same in two looks 150 ms apart (plotly redraws once after measuring its labels
    for ``automargin``)."""
    look = ("() => [...document.querySelectorAll('.js-plotly-plot text, svg.main-svg text')]"
            ".map(t => { const r = t.getBoundingClientRect(); return [r.x, r.y, r.width]"
            ".map(Math.round).join(','); }).join(';')")
    deadline = time.time() + timeout
    last = page.evaluate(look)
    while time.time() < deadline:
        page.wait_for_timeout(150)  # the interval between two looks
        now = page.evaluate(look)
        if now == last:
            return
        last = now
    raise AssertionError("the figures kept moving")
