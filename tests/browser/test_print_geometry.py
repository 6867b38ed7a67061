"""Figures that read and exports that print (issue 33, the automatic check): every page at
1280 px and every exported document (the case report and a Teach handout from their pages'
buttons, the model report from the library) laid out by headless chromium, measured as drawn.

On a page: no text of a figure cut at the figure's edge or drawn over another text, no chart
toolbar over a text, every table header in view (rows of the user's own data excepted), no
text cut off with an ellipsis. On a document printed to A4: the same for its figures, no table
wider than the printable width, the case report on one page, and every axis title, legend
entry, class name and finding name of its figures whole in the PDF's text (``pdftotext``).

Screenshots go to ``screenshots/60_geometry_*.png``; the documents and their PDFs to
``screenshots/61_*``. Look at them after a run."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import SHOTS, no_exception, serve_app, served_checkout, shot

from bnma_ui.browser import (
    figure_text_problems,
    nav,
    page_layout_problems,
    set_slider,
    settle_figures,
    wait_idle,
)

pytestmark = pytest.mark.browser

A4_PRINTABLE_PX = 680
"""Width of A4 less 15 mm margins on each side, at 96 px per inch: the layout width of a
printed document (the narrowest of the documents' own @page margins)."""

DOCUMENT_FIGURES = ".figure > svg, .js-plotly-plot"
"""Figures of an exported document: inline static SVGs and interactive plotly charts."""

SETTLED = {"Naive BMA": "Posterior probability that each feature depends on the class",
           "UKDB instances": "Where this case differs from the general pattern"}
"""Text a page shows once its computation has finished (the check measures the final page)."""

_WIDER_JS = r"""
([sel, w]) => [...document.querySelectorAll(sel)].flatMap((f, i) => {
  const r = (f.matches('svg') ? f : (f.querySelector('svg.main-svg') || f))
            .getBoundingClientRect();
  const name = (f.querySelector('.gtitle, .xtitle') || {}).textContent || `figure ${i + 1}`;
  return r.right > w + 1 ? [`${name}: the figure is wider than the page (${Math.round(r.right)}`
                            + ` of ${w} px)`] : [];
})
"""

_NAMES_JS = r"""
(sel) => [...document.querySelectorAll(sel)].flatMap(f =>
  [...f.querySelectorAll('.xtitle, .ytitle, .legendtext, .ytick text, .gtitle')]
    .map(t => t.textContent.trim()))
    .filter(s => s && !/^[-+−\d.,\s%e]+$/.test(s))
"""


def _pages() -> list[str]:
    from bnma_ui.widgets import DATA_PAGE, page_files, page_title

    return ["Data"] + [page_title(p) for p in page_files() if p != DATA_PAGE]


def _choose(page, label: str, option: str) -> None:
    page.locator('[data-testid="stSelectbox"]', has_text=label).first.click()
    page.get_by_role("option", name=option, exact=True).first.click()
    wait_idle(page)


def _patient_results(page) -> None:
    page.get_by_text("on the server.").wait_for(timeout=300_000)  # the page's last line
    wait_idle(page)
    no_exception(page)


def _download(page, button: str, path: Path) -> Path:
    with page.expect_download() as dl:
        page.get_by_role("button", name=button).first.click()
    shutil.copy(dl.value.path(), path)
    return path


def _slug(text: str) -> str:
    return re.sub(r"\W+", "_", text).strip("_").lower()


def _document_problems(page, path: Path) -> tuple[list[str], list[str], int, str]:
    """(problems, names in the figures, PDF pages, PDF text) of a document as printed."""
    # opened in a laptop's window (figures drawn at that width), then printed: the print
    # layout is the printable width of the paper
    page.set_viewport_size({"width": 1280, "height": 800})
    page.emulate_media(media="screen")
    page.goto(path.resolve().as_uri())
    settle_figures(page)
    # a browser prints without giving a "responsive" plotly chart the chance to redraw at the
    # paper's width: its resize handler is taken away before the print layout
    page.evaluate("() => document.querySelectorAll('.js-plotly-plot').forEach(d => "
                  "d._responsiveChartHandler && "
                  "window.removeEventListener('resize', d._responsiveChartHandler))")
    page.emulate_media(media="print")
    page.set_viewport_size({"width": A4_PRINTABLE_PX, "height": 1000})
    settle_figures(page)
    problems = figure_text_problems(page, DOCUMENT_FIGURES)
    problems += page.evaluate(
        "(w) => [...document.querySelectorAll('table')].filter(t => "
        "t.getBoundingClientRect().right > w + 1).map(t => 'a table is wider than the page ('"
        " + Math.round(t.getBoundingClientRect().width) + ' px): ' + "
        "(t.querySelector('th, td') || {textContent: ''}).textContent.slice(0, 40))",
        A4_PRINTABLE_PX)
    problems += page.evaluate(_WIDER_JS, [DOCUMENT_FIGURES, A4_PRINTABLE_PX])
    names = page.evaluate(_NAMES_JS, DOCUMENT_FIGURES)
    pdf = path.with_suffix(".pdf")
    pdf.write_bytes(page.pdf(format="A4", print_background=True))
    n_pages = pdf.read_bytes().count(b"/Type /Page") - pdf.read_bytes().count(b"/Type /Pages")
    text = ""
    if shutil.which("pdftotext"):
        text = subprocess.run(["pdftotext", str(pdf), "-"], capture_output=True, text=True,
                              check=True).stdout
    return problems, names, n_pages, text


def _missing_names(names: list[str], text: str) -> list[str]:
    """The names not found whole in the PDF's text (white space ignored: pdftotext breaks
    lines where the page does)."""
    flat = re.sub(r"\s+", "", text)
    return sorted({n for n in names if re.sub(r"\s+", "", n) not in flat})


@pytest.fixture(scope="module")
def server():
    yield from serve_app("streamlit_geometry.log")


def test_every_page_reads_whole_at_1280(server, page):
    page.goto(server)
    wait_idle(page)
    page.get_by_text("Wisconsin breast cancer (wbc.csv) — outcome:").wait_for()
    found: dict[str, list[str]] = {}
    for title in _pages():
        if title != "Data":
            nav(page, title)
        if title in SETTLED:
            page.get_by_text(SETTLED[title]).first.wait_for(timeout=180_000)
            wait_idle(page)
        if title == "Patient":
            _choose(page, "Method", "Naive Bayes")
            _patient_results(page)
        page.mouse.move(5, 5)  # the pointer away from every chart
        settle_figures(page)
        found[title] = figure_text_problems(page) + page_layout_problems(page)
        shot(page, f"60_geometry_{_slug(title)}")
    print({t: len(p) for t, p in found.items()})
    assert {t: p for t, p in found.items() if p} == {}


def test_compare_results_read_whole_at_1280(server, page):
    """The Compare page after a short cross-validation (3 folds): its tables and figures."""
    page.goto(server)
    wait_idle(page)
    page.get_by_text("Wisconsin breast cancer (wbc.csv) — outcome:").wait_for()
    nav(page, "Compare methods")
    main = page.get_by_test_id("stMainBlockContainer")
    set_slider(page, "Folds (k)", 3)
    main.get_by_role("button", name="Run").click()
    main.get_by_role("heading", name="Do the methods differ? (tests over folds)").wait_for(
        timeout=300_000)
    wait_idle(page)
    page.mouse.move(5, 5)
    settle_figures(page)
    shot(page, "60_geometry_compare_results")
    problems = figure_text_problems(page) + page_layout_problems(page)
    print(problems)
    assert problems == []


def _check_documents(page, docs: dict) -> tuple[dict, dict, dict]:
    """(problems, names missing from the PDF text, PDF pages) of each document."""
    found, absent, pages = {}, {}, {}
    for name, path in docs.items():
        problems, names, n_pages, text = _document_problems(page, path)
        found[name], pages[name] = problems, n_pages
        if text:
            absent[name] = _missing_names(names, text)
        print(f"{name}: {n_pages} A4 pages, {len(names)} figure names, "
              f"{len(problems)} problems")
    return ({n: p for n, p in found.items() if p}, {n: a for n, a in absent.items() if a},
            pages)


def test_case_report_and_model_report_print_whole_on_a4(server, page):
    """The case report as the Patient page's button writes it (built in the server's process,
    with Streamlit's plotly template) and the model report as the served checkout writes it."""
    out = SHOTS / "61_documents"
    out.mkdir(parents=True, exist_ok=True)
    page.goto(server)
    wait_idle(page)
    page.get_by_text("Wisconsin breast cancer (wbc.csv) — outcome:").wait_for()
    nav(page, "Patient")
    _choose(page, "Method", "Naive Bayes")
    _patient_results(page)
    docs = {"case report": _download(page, "Case report (HTML, prints on one A4 page)",
                                     out / "case_report.html"),
            "model report": out / "model_report.html"}
    docs["model report"].write_text(_model_report())
    problems, absent, pages = _check_documents(page, docs)
    assert pages["case report"] == 1
    assert problems == {}
    assert absent == {}


def test_teach_handout_prints_whole_on_a4(server, page):
    """Lesson 1's handout as the Teach page's button writes it, after a few steps."""
    out = SHOTS / "61_documents"
    out.mkdir(parents=True, exist_ok=True)
    page.goto(server)
    wait_idle(page)
    nav(page, "Teach")
    player = page.frame_locator("iframe").first  # the steps are played in the browser
    player.get_by_role("button", name="+1", exact=True).click()
    assert "Iteration 1:" in player.locator("#movetitle").inner_text()
    player.get_by_role("button", name="+100", exact=True).click()
    wait_idle(page)
    docs = {"handout, lesson 1": _download(page, "Handout (HTML)",
                                           out / "handout_lesson1.html")}
    problems, absent, _ = _check_documents(page, docs)
    print(problems, absent)
    assert problems == {}
    assert absent == {}


def _model_report() -> str:
    """A small model report (two quick methods, three folds) written by the served checkout
    (:func:`conftest.served_checkout`) in a Python of its own that has imported Streamlit, as
    the dashboard's server has (Streamlit sets plotly's default template)."""
    code = ("import sys, streamlit\n"
            "from bnma_core.data import load_dataset\n"
            "from bnma_core.datasets import bundled_path\n"
            "from bnma_core.evaluation import cross_validate\n"
            "from bnma_core.report import build_model_report\n"
            "ds = load_dataset(bundled_path('wbc.csv'))\n"
            "r, p = cross_validate(ds, ['nb', 'tan'], folds=3, seed=0, return_proba=True)\n"
            "sys.stdout.write(build_model_report(ds, r, p, source='wbc.csv', "
            "structures=False, n_bootstrap=50))\n")
    app = served_checkout()
    env = {**os.environ, "PYTHONPATH": str(app)}
    return subprocess.run([sys.executable, "-c", code], cwd=app, env=env, capture_output=True,
                          text=True, check=True, timeout=600).stdout
