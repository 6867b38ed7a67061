"""The model report (library and ``bnma report``) and ``bnma cv --predictions``: every
TRIPOD+AI item present or marked not applicable, user names kept as text, printable, one-line
errors."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest

from bnma_core.cli import main
from bnma_core.data import DataError
from bnma_core.datasets import bundled_path
from bnma_core.report import FIGURE_WIDTH_PX, TRIPOD_AI_ITEMS, model_report

WBC = str(bundled_path("wbc.csv"))
SCRIPT = "<script>alert(1)</script>"
LINK = "[click](http://evil.example)"
QUICK = {"fobma": {"max_parents": 1}}


def hostile_frame(n=90, seed=0, n_classes=2):
    """Continuous and categorical predictors, a missing value, and column names that are
    HTML and Markdown."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, n_classes, n)
    df = pd.DataFrame({
        "age": rng.normal(50 + 5 * y, 8.0),
        SCRIPT: rng.normal(-y, 1.5),
        LINK: np.array(["red", "green", "blue"])[(y + rng.integers(0, 2, n)) % 3],
        "outcome": np.array(["no", "yes", "maybe"])[y],
    })
    df.loc[3, "age"] = None
    return df


def checklist(page: str) -> dict[str, str]:
    """TRIPOD+AI item -> status, read from the checklist table."""
    table = page[page.index("<table class='tripod-checklist'>"):]
    table = table[:table.index("</table>")]
    rows = re.findall(r"<tr><td>([^<]+)</td><td>[^<]*</td><td><span class=\"status-\w+\">"
                      r"([^<]+)</span>", table)
    return dict(rows)


@pytest.fixture(scope="module")
def page():
    data = hostile_frame().to_csv(index=False, sep=";", decimal=",").encode()
    return model_report(data, ["nb", "fobma"], target="outcome", folds=3, seed=2,
                        method_params=QUICK, n_bootstrap=50, source="hostile.csv")


def test_report_has_every_item_in_tripod_order_and_marks_each(page):
    marks = checklist(page)
    assert list(marks) == list(TRIPOD_AI_ITEMS)
    assert set(marks.values()) <= {"present", "not applicable"}
    for code in ("5a", "7", "8a", "9a", "9b", "10", "11", "12a", "12c", "12e", "13", "15",
                 "18f", "20a", "21", "22", "23a"):
        assert marks[code] == "present", code
    for code in ("12f", "16", "23b"):
        assert marks[code] == "not applicable", code
    # each present item has its section, in the checklist's order
    heads = [h for h in re.findall(r"<h2>([^<]+)</h2>", page) if " · " in h]
    codes = list(dict.fromkeys(h.split(" · ")[0] for h in heads))
    assert codes == [c for c in TRIPOD_AI_ITEMS if marks[c] == "present" and c != "22"]
    text = re.sub(r"<[^>]+>", " ", page)
    for needle in ("hostile.csv", "separator &#x27;;&#x27;", "decimal mark &#x27;,&#x27;",
                   "Outcome column: outcome",
                   "Positive class", "Cut points per fold", "Rows with a missing value were "
                   "kept", "stratified 3-fold", "seed 2", "fobma", "DeLong", "bootstrap",
                   "Calibration of P(yes)", "Reliability diagram", "Decision curve",
                   "Appendix — fobma: edge posteriors", "BNMA Studio"):
        assert needle in text, needle
    # the per-fold cut points of "age" are listed, one row per fold
    assert "Cut points per fold" in page and "<th>age</th>" in page


def test_report_is_self_contained_and_printable(page):
    assert page.count("* plotly.js v") == 1  # the library embedded once, for every figure
    assert page.count('class="plotly-graph-div"') >= 3
    assert "<script src=" not in page  # nothing fetched when the page opens
    assert "@page{size:A4" in page and "@media print" in page
    widths = [int(w) for w in re.findall(r'"width":\s*(\d+)', page)]
    assert widths and max(widths) <= FIGURE_WIDTH_PX


def test_user_names_stay_text(page):
    assert SCRIPT not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert LINK in page and 'href="http://evil.example"' not in page


def test_multiclass_report_has_no_decision_curve_and_says_top_label():
    page = model_report(hostile_frame(n=120, n_classes=3), ["nb"], target="outcome", folds=3,
                        n_bootstrap=30, structures=False)
    marks = checklist(page)
    assert marks["22"] == "not applicable" and marks["23a"] == "present"
    assert "Decision curve" not in page and "top-label" in page


def test_bad_report_input_raises_one_sentence():
    df = hostile_frame()
    with pytest.raises(ValueError, match="not one of the classes"):
        model_report(df, ["nb"], target="outcome", positive="perhaps", folds=3)
    df["outcome"] = "yes"
    with pytest.raises(DataError, match="single value"):
        model_report(df, ["nb"], target="outcome", folds=3)


# --- command line -----------------------------------------------------------------------------

def run(argv, capsys):
    try:
        code = main(argv)
    except SystemExit as exc:
        code = exc.code
    out, err = capsys.readouterr()
    return code, out, err


def test_bnma_report_writes_the_page(tmp_path, capsys):
    out = tmp_path / "report.html"
    code, stdout, _ = run(["report", "--data", WBC, "--methods", "nb,manb", "--folds", "3",
                           "--bootstrap", "30", "--positive", "malignant", "--out", str(out),
                           "--no-progress"], capsys)
    assert code == 0 and "written to" in stdout
    page = out.read_text()
    assert checklist(page)["22"] == "present" and "P(malignant)" in page


@pytest.mark.parametrize("extra, fragment", [
    (["--positive", "perhaps"], "not one of the classes"),
    (["--out", "/no/such/folder/r.html"], "does not exist"),
    (["--methods", "nb,magic"], "unknown method"),
])
def test_bnma_report_bad_input_is_one_line_exit_2(extra, fragment, tmp_path, capsys):
    argv = ["report", "--data", WBC, "--methods", "nb", "--folds", "3", "--no-progress",
            "--out", str(tmp_path / "r.html"), *extra]
    code, _, err = run(argv, capsys)
    lines = [ln for ln in err.splitlines() if ln.strip() and not ln.startswith("bnma: note")]
    assert code == 2 and len(lines) == 1 and fragment in lines[0], err
    assert "Traceback" not in err


def test_bnma_report_one_class_is_one_line_exit_2(tmp_path, capsys):
    csv = tmp_path / "one.csv"
    pd.DataFrame({"a": np.arange(30) % 4, "b": np.arange(30) % 3, "c": "y"}).to_csv(
        csv, index=False)
    code, _, err = run(["report", "--data", str(csv), "--methods", "nb", "--out",
                        str(tmp_path / "r.html"), "--no-progress"], capsys)
    assert code == 2 and err.count("\n") == 1 and "single value" in err


def test_bnma_cv_writes_out_of_fold_predictions(tmp_path, capsys):
    """``--predictions`` writes the tidy table (CSV with formula cells neutralised, or
    Parquet with the seed and cut points) from which the metrics are computed."""
    from bnma_core.evaluation import CVPredictions

    df = hostile_frame()
    df["outcome"] = df["outcome"].map({"no": "=1+1", "yes": "ok"})
    data = tmp_path / "d.csv"
    df.to_csv(data, index=False)
    csv, pq = tmp_path / "oof.csv", tmp_path / "oof.parquet"
    for target in (csv, pq):
        code, stdout, _ = run(["cv", "--data", str(data), "--target", "outcome", "--methods",
                               "nb,tan", "--folds", "3", "--seed", "4", "--predictions",
                               str(target), "--no-progress"], capsys)
        assert code == 0 and "out-of-fold probabilities written" in stdout
    tab = pd.read_csv(csv)
    assert list(tab.columns[:4]) == ["row", "fold", "method", "true_class"]
    assert len(tab) == 2 * len(df) and set(tab["true_class"]) == {"'=1+1", "ok"}
    assert "'P(=1+1)" not in tab.columns and "P(=1+1)" in tab.columns
    back = CVPredictions.read_parquet(pq)
    assert back.seed == 4 and set(back.cut_points[0]) == {"age", SCRIPT}
    np.testing.assert_allclose(back.proba["nb"], tab[tab["method"] == "nb"][
        ["P(=1+1)", "P(ok)"]].to_numpy())
    again = CVPredictions.from_table(tab)  # the quoted label reads back as its class
    assert again.classes == ["=1+1", "ok"]
    np.testing.assert_array_equal(again.y, back.y)


def test_bnma_cv_workers_and_former_n_jobs(tmp_path, capsys):
    code, _, err = run(["cv", "--data", WBC, "--methods", "nb", "--folds", "3", "--n-jobs",
                        "1", "--no-progress"], capsys)
    assert code == 0 and "--n-jobs is renamed --workers" in err
    code, _, err = run(["cv", "--data", WBC, "--methods", "nb", "--workers", "0"], capsys)
    assert code == 2 and "must be at least 1" in err


def test_settings_list_only_the_parameters_in_effect_in_words(page):
    """Issue 32 item 7: section 12c listed prior='deprecated', missing='deprecated' and
    cpt_prior=None; only what acts on the fit, as words."""
    from bnma_core.classifiers.registry import make_classifier
    from bnma_core.report import settings_in_effect, settings_in_words

    nb = make_classifier("nb", random_state=0).get_params(deep=False)
    assert settings_in_effect(nb) == {"alpha": 1.0}
    assert settings_in_words(nb) == "alpha 1"
    eap = make_classifier("nb_eap", random_state=0).get_params(deep=False)
    assert settings_in_words(eap) == "cpt prior bdeu, ess 1"
    section = page[page.index("12c · Methods and settings"):page.index("12e · ")]
    text = re.sub(r"<[^>]+>", " ", section)
    assert "deprecated" not in text and "None" not in text and "=" not in text


def test_report_without_a_source_name_says_so(page):
    """Issue 32 item 7: from the dashboard the report read "Model report: class ()", an
    empty "data" setting and "Source: ."."""
    from bnma_core.data import load_dataset
    from bnma_core.evaluation import cross_validate
    from bnma_core.report import UNNAMED_SOURCE, build_model_report

    ds = load_dataset(WBC)
    results, pred = cross_validate(ds, ["nb"], folds=2, seed=0, return_proba=True)
    html = build_model_report(ds, results, pred, source="", structures=False, n_bootstrap=20)
    assert "Source: ." not in html and "<title>Model report: class ()" not in html
    assert "<td></td>" not in html[:html.index("</table>")]  # the "data" setting
    assert f"Source: {UNNAMED_SOURCE}." in html


def test_printed_tables_wrap_to_the_page_width():
    """Issue 33 item 4: tables wider than the page were cut when printed (the browser suite
    prints the page and measures them: tests/browser/test_print_geometry.py)."""
    from bnma_core.report import PRINT_CSS

    assert "table{font-size:7.5pt;width:auto;max-width:100%}" in PRINT_CSS
    assert "td{overflow-wrap:anywhere}" in PRINT_CSS


def test_stack_draws_add_up_to_the_draws_asked_for():
    """Issue 32 item 7: 400 draws asked, 401 drawn (a minimum of 2 per component added)."""
    from hypothesis import given
    from hypothesis import strategies as st

    from bnma_core.explain.parameters import draw_counts

    @given(st.lists(st.floats(1e-6, 1.0), min_size=1, max_size=6), st.integers(12, 2000))
    def check(shares, n):
        counts = draw_counts(shares, n)
        assert counts.sum() == n and counts.min() >= 2

    check()
    assert draw_counts([0.999, 0.001], 400).tolist() == [398, 2]
