"""End-to-end test of the subbagging view in a real browser: ``streamlit run app.py`` driven by
headless chromium (Debian's ``/usr/bin/chromium`` through playwright-python, helpers of
:mod:`bnma_ui.browser`). Skips with a reason when either is missing. Screenshots go to
``screenshots/`` (git-ignored), as those of ``tests/browser/test_browser.py``; look at them after a
run.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from conftest import no_exception as _no_exception
from conftest import serve_app
from conftest import shot as _shot

from bnma_ui.browser import metric as _metric
from bnma_ui.browser import nav, set_number, wait_idle

pytestmark = pytest.mark.browser


def _warm_numba_cache() -> None:
    """Compile (and cache on disk) the K-best kernels before the server uses them, so the test
    times the page rather than a cold numba compilation."""
    from bnma_core.classifiers.kbest import SubbaggingKBest
    from bnma_core.data import load_dataset
    from bnma_core.datasets import bundled_path

    ds = load_dataset(bundled_path("wbc.csv"))
    model = SubbaggingKBest(n_subsamples=2, n_best=3, random_state=0).fit_dataset(ds)
    model.predict_proba(ds.X[:5])


@pytest.fixture(scope="module")
def server():
    yield from serve_app("streamlit_kbest.log", _warm_numba_cache)


def _plot(page, text: str):
    """The drawn plotly chart whose SVG contains ``text`` (a title, an axis or a legend)."""
    return page.locator(".js-plotly-plot", has_text=text).first


def test_subbagging_view_on_wbc(server, page):
    page.goto(server)
    wait_idle(page)
    page.get_by_text("Wisconsin breast cancer (wbc.csv) — outcome:").wait_for()
    nav(page, "Exact K best")
    _no_exception(page)
    page.get_by_text("Subbagging (K best on each of T subsamples)").click()
    wait_idle(page)
    set_number(page, "T (subsamples)", 5)
    set_number(page, "K (classes)", 4)
    _no_exception(page)
    t0 = time.time()
    page.get_by_test_id("stMainBlockContainer").get_by_role("button", name="Run").click()
    page.get_by_role("heading", name="Averaged prediction for one row").wait_for(
        timeout=240_000)  # generous: a loaded machine
    wait_idle(page)
    print(f"Run click to results: {time.time() - t0:.1f} s")
    _no_exception(page)
    assert _metric(page, "Subsamples averaged") == "5 of 5"
    page.get_by_role("button", name="Most disputed row").click()
    wait_idle(page)
    _no_exception(page)
    heat = _plot(page, "P(edge | subsample)")
    heat.wait_for()
    assert heat.locator(".heatmaplayer image, .heatmaplayer .hm").count() >= 1  # cells drawn
    assert heat.locator(".ytick").count() >= 5  # edge labels
    pred = _plot(page, "average (prediction)")
    pred.wait_for()
    assert pred.locator(".boxlayer path.box").count() == 2  # one box per class
    assert pred.locator(".point").count() >= 2 + 5 * 2  # averages + every subsample
    assert page.locator(".js-plotly-plot").count() >= 4
    _shot(page, "50_subbagging")
    # the exports are built on click: both download and hold this run's numbers
    with page.expect_download() as dl:
        page.get_by_role("button", name="Edge stability (CSV)").click()
    csv = Path(dl.value.path()).read_text()
    assert csv.splitlines()[0].startswith("edge,from,to,type,subsample 1,")
    assert csv.splitlines()[0].endswith("subsample 5,mean,sd")
    with page.expect_download() as dl:
        page.get_by_role("button", name="Report (HTML)").click()
    report = Path(dl.value.path()).read_text()
    assert "Edge stability across subsamples" in report and "Averaged prediction for row" in report
