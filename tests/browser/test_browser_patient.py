"""The Patient page in a real browser (``streamlit run app.py`` + headless chromium): what is
drawn — the probability bar, the waterfall, the uncertain flag, the what-if scenarios, the UKDB
networks beside the contributions — and the printed case report. Screenshots at 1280 px go to
``screenshots/4x_patient_*.png``; look at them after a run."""

from __future__ import annotations

import pytest
from conftest import no_exception, serve_app, shot

from bnma_ui.browser import metric, nav, set_number, wait_idle

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def server():
    yield from serve_app("streamlit_patient.log")


def _choose(page, label: str, option: str) -> None:
    page.locator('[data-testid="stSelectbox"]', has_text=label).first.click()
    options = page.get_by_role("option", name=option, exact=True)
    if not options.count():
        page.keyboard.type(option)  # a long list shows the first options only: filter it
    options.first.click()
    wait_idle(page)


def _results(page) -> None:
    page.get_by_text("on the server.").wait_for(timeout=300_000)  # the last line of results
    wait_idle(page)
    no_exception(page)


def test_patient_page_draws_the_case(server, page):
    page.goto(server)
    wait_idle(page)
    page.get_by_text("Wisconsin breast cancer (wbc.csv) — outcome:").wait_for()
    nav(page, "Patient")
    _results(page)  # the recommended method, learned in the background
    assert page.locator(".js-plotly-plot").count() >= 2  # probability bar + waterfall
    assert page.get_by_text("no finding known").first.is_visible()
    shot(page, "40_patient_default")

    _choose(page, "Method", "Model-averaged naive Bayes")
    set_number(page, "Row number in the file (0 to 698)", 23)
    _results(page)
    box = page.locator('[data-testid="stSelectbox"]', has_text="bare_nuclei").first
    shot(page, "40b_patient_row23")
    shown = box.evaluate("b => b.innerText + ' ' + [...b.querySelectorAll('input')]"
                         ".map(i => i.value + ' ' + (i.getAttribute('aria-label') || ''))"
                         ".join(' ')")
    assert "missing" in shown, shown
    assert "None" not in page.locator('[data-testid="stMain"]').inner_text()
    _choose(page, "Scenario 1: change", "bare_nuclei")
    _choose(page, "Scenario 1: new value", "1")
    _choose(page, "Scenario 2: change", "clump_thickness")
    _choose(page, "Scenario 2: new value", "1")
    no_exception(page)
    page.get_by_text("Computed in").wait_for()
    assert page.locator(".js-plotly-plot").count() >= 3  # + the scenarios
    shot(page, "41_patient_what_if")

    _choose(page, "Method", "UKDB (general + per-row network), 2 feature parents")
    _results(page)
    assert metric(page, "Most probable class") == "uncertain"
    # left out with its part of the data (cross-fitting, seed 0): 0.52 vs 0.48
    assert page.get_by_text("Uncertain: benign 0.52 vs malignant 0.48").first.is_visible()
    assert page.get_by_text("General network: learned from all training cases").count() >= 1
    shot(page, "42_patient_ukdb_uncertain")

    nav(page, "UKDB instances")  # the same case on the UKDB page: the same flag, plain words
    page.get_by_role("heading", name="Where this case differs from the general "
                     "pattern").wait_for(timeout=120_000)
    set_number(page, "Row number in the file (0 to 698)", 23)
    no_exception(page)
    assert metric(page, "Most probable class") == "uncertain"
    main = page.locator('[data-testid="stMain"]').inner_text()
    assert "UKDB_L" not in main and "UKDB_P" not in main and "None" not in main
    shot(page, "44_ukdb_row23")


def test_case_report_prints_on_a4(page, tmp_path):
    """The report the page offers (its sections and settings), rendered by chromium at A4: the
    figures fit the page width (nothing clipped), the patient fields are there, and its PDF is
    one A4 page."""
    import numpy as np
    import pandas as pd

    from bnma_core import explain, export, viz
    from bnma_core.classifiers.registry import fit_method
    from bnma_core.data import load_dataset
    from bnma_core.datasets import bundled_path

    ds = load_dataset(bundled_path("wbc.csv"))
    pos = ds.position_of_row(23)
    rows = np.delete(np.arange(ds.n_rows), pos)
    est = fit_method("manb", ds, rows)
    pred = explain.predict_with_uncertainty(est, ds.X[pos], n_draws=400, train=ds.subset(rows),
                                            codes=True)
    shap = explain.shapley_values(est, ds.X[pos], codes=True)
    unusual = explain.unusual_case(est, ds.X[pos], train=ds.subset(rows), codes=True)
    values = {f: (None if c < 0 else ds.feature_states[j][c])
              for j, (f, c) in enumerate(zip(ds.feature_names, ds.X[pos]))}
    nt = explain.next_test(est, ds.X[pos], codes=True)
    table = pd.DataFrame({"finding not yet known": nt.findings,
                          "uncertainty it removes on average": ["28 %"],
                          "chance it changes the decision": ["0 %"]})
    settings = {"data": "sample_data/wbc.csv", "method": "Model-averaged naive Bayes",
                "method code": "manb", "case": "row 23 of the file", "trained on": "698 cases",
                "seed": 0, "parameter draws": 400, "BNMA Studio version": "0.1.0"}
    html = export.html_report(
        "Case report", viz.case_report_sections(pred, values, shap, unusual, table),
        settings=settings, fields={"Patient identifier": "P-17", "Notes": "seen on Friday"},
        figures="static")
    size = len(html.encode())
    print(f"case report: {size / 1024:.0f} kB")
    assert size < 1_000_000
    path = tmp_path / "report.html"
    path.write_text(html)
    page.set_viewport_size({"width": 794, "height": 1123})  # A4 at 96 dpi
    page.goto(path.as_uri())
    page.emulate_media(media="print")
    widths = page.evaluate("() => [...document.querySelectorAll('.figure svg')]"
                           ".map(s => s.getBoundingClientRect().right)")
    assert widths and max(widths) <= 794
    assert page.locator("input[value='P-17']").count() == 1
    shot(page, "43_patient_report_print")
    pdf = page.pdf(format="A4", print_background=True)
    n_pages = pdf.count(b"/Type /Page") - pdf.count(b"/Type /Pages")
    print(f"case report PDF: {n_pages} A4 pages, {len(pdf) / 1024:.0f} kB")
    assert n_pages == 1
