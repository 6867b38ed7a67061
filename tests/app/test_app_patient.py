"""AppTest (headless Streamlit) tests of the Patient page: the uncertain flag, what-if,
"missing" for an unknown finding, the case report; and the page's figure builders."""

from __future__ import annotations

import numpy as np
import pytest
import streamlit.testing.v1 as st_testing
from conftest import ROOT

from bnma_core.datasets import bundled_path

AppTest = st_testing.AppTest

TIMEOUT = 180
PAGE = "pages/3_Patient.py"


def _wbc():
    from bnma_core.data import load_dataset

    return load_dataset(bundled_path("wbc.csv"))


def _no_failure(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]


def _fitted(at: AppTest) -> AppTest:
    """Wait (on the run itself) until the page's background fit has returned, then rerun."""
    for _ in range(3):
        run = at.session_state["patient_fit__bnma_bg"] if \
            "patient_fit__bnma_bg" in at.session_state else None
        if run is None or run.taken:  # no fit, or its result shown
            break
        assert run.wait(TIMEOUT), "the fit did not end"
        at.run()
    _no_failure(at)
    return at


def _page(method: str, row: int = 23, ds=None) -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=TIMEOUT)
    at.switch_page(PAGE)
    at.session_state["bnma_dataset"] = _wbc() if ds is None else ds
    at.session_state["bnma_dataset_label"] = "wbc.csv"
    at.session_state["pt_method"] = method
    at.session_state["pt_row"] = row
    at.run()
    return _fitted(at)


def _plain(markdown: str) -> str:
    """Text shown from Markdown whose user-supplied parts are escaped (backslashes removed)."""
    import re

    return re.sub(r"\\([!-/:-@\[-`{-~])", r"\1", markdown)


def _metrics(at: AppTest) -> dict:
    return {m.label: m.value for m in at.metric}


def test_row_23_is_flagged_uncertain_not_a_verdict():
    """UKDB gives row 23 (left out with its part of the data: cross-fitting, seed 0) 0.52
    benign vs 0.48 malignant: shown as uncertain, with both probabilities in words, never as a
    plain "benign"."""
    at = _page("ukdb2")
    m = _metrics(at)
    assert m["Most probable class"] == "uncertain"
    assert m["True class of this row"] == "malignant"
    warning = _plain(" ".join(w.value for w in at.warning))
    assert "Uncertain" in warning and "benign 0.52" in warning and "malignant 0.48" in warning


def test_default_method_row_shows_interval_sentence_and_contributions():
    at = _page("manb", row=0)
    m = _metrics(at)
    assert m["Most probable class"] == "benign"
    sentence = next(_plain(x.value) for x in at.markdown if x.value.startswith("benign"))
    assert "90 % of the averaged feature sets between" in sentence
    assert "with parameter uncertainty" in sentence
    assert any(_plain(c.value).startswith("The data leave no doubt about the structure: one "
                                          "feature set carries") for c in at.caption)
    charts = at.get("plotly_chart")
    assert len(charts) == 2  # probability bar + contributions waterfall


def test_missing_finding_shows_missing_and_what_if_changes_probability():
    at = _page("manb")  # row 23: bare_nuclei is missing in the file
    box = at.selectbox(key="pt_row23_5")
    assert box.value == "missing"
    assert "None" not in box.options
    before = at.session_state["_patient_results"]
    p0 = next(v for k, v in before.items() if k[2] == "prediction").proba[0, 1]
    # the next-test ranking names the missing finding
    table = at.dataframe[-1].value
    assert table["finding not yet known"].tolist() == ["bare_nuclei"]
    # a scenario: bare nuclei = 1 lowers P(malignant)
    at.selectbox(key="pt_wi_f0").set_value("bare_nuclei").run()
    at.selectbox(key="pt_wi_v0_5").set_value("1").run()
    _no_failure(at)
    bullets = [_plain(x.value) for x in at.markdown if _plain(x.value).startswith("- **bare")]
    assert bullets and "malignant" in bullets[0]
    # changing the finding itself recomputes at once (no stale probability)
    at.selectbox(key="pt_row23_0").set_value("1").run()
    _no_failure(at)
    preds = [v for k, v in at.session_state["_patient_results"].items()
             if k[2] == "prediction"]
    assert len(preds) == 2 and preds[-1].proba[0, 1] < p0
    assert any("Changed from the file's row" in c.value for c in at.caption)


def test_report_has_patient_fields_and_is_small():
    """The case report as the page builds it: patient identifier and notes fields, the data,
    method, seed and version, static figures, well under 1 MB."""
    from bnma_core import explain, export, viz
    from bnma_core.classifiers.registry import fit_method

    at = _page("manb")
    labels = [t.label for t in at.text_input] + [t.label for t in at.text_area]
    assert any("Patient identifier" in s for s in labels)
    assert any("Notes" in s for s in labels)
    assert any("Case report" in b.proto.label for b in at.get("download_button"))
    ds = _wbc()
    pos = ds.position_of_row(23)
    est = fit_method("manb", ds, np.delete(np.arange(ds.n_rows), pos))
    pred = explain.predict_with_uncertainty(est, ds.X[pos], n_draws=50, train=ds, codes=True)
    shap = explain.shapley_values(est, ds.X[pos], codes=True)
    values = dict(zip(ds.feature_names, ds.to_frame().iloc[pos]))
    values = {f: (None if v != v else v) for f, v in values.items()}  # NaN -> missing
    html = export.html_report(
        "Case report", viz.case_report_sections(pred, values, shap),
        settings={"method": "manb", "seed": 0, "version": "x"},
        fields={"Patient identifier": "<P-17>", "Notes": "a & b"}, figures="static")
    assert "Patient identifier" in html and "&lt;P-17&gt;" in html and "a &amp; b" in html
    assert "<textarea" in html and "@page{size:A4" in html
    assert "Not known: bare_nuclei." in html and "None" not in html
    assert len(html.encode()) < 1_000_000
    import pandas as pd

    table = pd.DataFrame({"finding not yet known": ["bare_nuclei"],
                          "uncertainty it removes on average": ["28 %"]})
    note = "These values are computed under one joint model of the findings."
    assert viz.case_report_sections(pred, values, shap, None, table, note)[-1] == (
        "How the next tests are computed", note)
    interactive = export.html_report("r", [("p", viz.probability_figure(pred)),
                                           ("q", viz.probability_figure(pred))])
    assert interactive.count("plotly.js v") <= 2  # plotly.js once (its banner names it)


def test_verdict_flags_a_coin_flip_of_a_single_network():
    from types import SimpleNamespace

    from bnma_core.viz.patient import is_uncertain, verdict

    def pred(p):
        p = np.array([p])
        return SimpleNamespace(proba=p, classes=np.array(["benign", "malignant"]),
                               predicted=p.argmax(1), uncertain=lambda: np.array([False]),
                               describe=lambda row=0: "x")

    assert is_uncertain(pred([0.504, 0.496]))
    assert verdict(pred([0.504, 0.496]))["label"] == "uncertain"
    assert not is_uncertain(pred([0.9, 0.1]))
    assert verdict(pred([0.9, 0.1]))["label"] == "benign"


def test_contributions_figure_sorts_and_colours():
    from bnma_core import explain, viz
    from bnma_core.classifiers.registry import fit_method

    ds = _wbc()
    est = fit_method("manb", ds)
    x = ds.X[ds.position_of_row(23)]
    shap = explain.shapley_values(est, x, codes=True)
    values = dict(zip(ds.feature_names, ds.to_frame().iloc[23]))
    fig = viz.contributions_figure(shap, values, est.classes_)
    wf = fig.data[0]
    steps = np.asarray(wf.x[1:-1], dtype=float)
    assert list(np.abs(steps)) == sorted(np.abs(steps), reverse=True)
    assert wf.y[0] == "no finding known" and wf.y[-1] == "this case"
    assert wf.x[-1] == pytest.approx(shap.full)
    assert not any("None" in str(y) for y in wf.y)


def test_learning_runs_in_the_background_and_stops(monkeypatch):
    """The model is learned in a background run with Stop; after Stop the page says so and
    learns again only when asked."""
    import threading

    from bnma_core.classifiers import registry

    started, release = threading.Event(), threading.Event()
    real = registry.fit_method

    def slow_fit(*args, **kwargs):  # a fit still running when Stop is pressed, however fast
        started.set()
        release.wait(TIMEOUT)
        return real(*args, **kwargs)

    monkeypatch.setattr(registry, "fit_method", slow_fit)
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=TIMEOUT)
    at.switch_page(PAGE)
    at.session_state["bnma_dataset"] = _wbc()
    at.session_state["bnma_dataset_label"] = "wbc.csv"
    at.session_state["pt_method"] = "nb"
    at.session_state["pt_seed"] = 98  # a seed of its own: not in the server's result store
    at.run()
    _no_failure(at)
    assert started.wait(TIMEOUT)
    run = at.session_state["patient_fit__bnma_bg"]
    assert not run.done
    stop = next(b for b in at.button if b.label == "Stop")
    stop.click().run()
    _no_failure(at)
    assert any("Stopped" in i.value for i in at.info)
    assert any(b.label == "Learn" for b in at.button)
    assert run.stopped
    release.set()
    assert run.wait(TIMEOUT) and run.reason == "user"


def test_a_patient_entered_by_hand_starts_with_nothing_known():
    at = _page("manb")
    at.radio(key="pt_source").set_value("form").run()
    _fitted(at)
    assert at.selectbox(key="pt_form_0").value == "missing"
    assert any("No finding is known" in i.value for i in at.info)
    # issue 32: no "0 % of training cases ...; conflict 0.00" for an empty form
    captions = " ".join(_plain(c.value) for c in at.caption)
    assert ("No finding is known yet, so there is nothing to compare with the training cases "
            "and no conflict between findings.") in captions
    assert "0 % of training cases" not in captions and "conflict" not in captions.replace(
        "no conflict", "")
    table = at.dataframe[-1].value  # every finding can be tested next
    assert len(table) == 9
    at.selectbox(key="pt_form_1").set_value("10").run()
    _no_failure(at)
    assert _metrics(at)["Most probable class"] == "malignant"
    assert len(at.dataframe[-1].value) == 8


def test_an_unusual_combination_is_warned_about():
    """clump thickness 10, cell size 10, normal nucleoli 10 with every other finding at 1 and
    bare nuclei 6: rarer than 99 % of the training cases, said before the numbers are
    trusted."""
    at = _page("manb")
    at.radio(key="pt_source").set_value("form").run()
    _fitted(at)
    values = {0: "10", 1: "10", 2: "1", 3: "1", 4: "1", 5: "6", 6: "1", 7: "10", 8: "1"}
    for j, v in values.items():
        at.selectbox(key=f"pt_form_{j}").set_value(v)
    at.run()
    _no_failure(at)
    warning = _plain(" ".join(w.value for w in at.warning))
    assert "This combination of findings is rarer than 99 % of training cases" in warning


def test_unusual_sentence_words():
    from types import SimpleNamespace

    from bnma_core.viz.patient import unusual_sentence

    rare = unusual_sentence(SimpleNamespace(rarer_than=0.995, conflict=-1.0))
    assert rare == "This combination of findings is rarer than 99 % of training cases."
    common = unusual_sentence(SimpleNamespace(rarer_than=0.2, conflict=0.5))
    assert common.startswith("20 % of training cases have a more probable combination")
    assert "not unusual" in common and "conflict 0.50" in common
    assert unusual_sentence(SimpleNamespace(rarer_than=None, conflict=0.0)) is None
    empty = unusual_sentence(SimpleNamespace(rarer_than=None, conflict=0.0, no_findings=True))
    assert empty.startswith("No finding is known yet")


def test_a_scenario_identical_to_the_case_is_judged_like_the_case():
    """Issue 32: row 23, Naive BMA, clump_thickness changed to 1; the scenario
    "clump_thickness = 1" is the same case: the same sentence (parameter interval included)
    and the same "uncertain" flag, not a point interval without it."""
    at = _page("manb")
    at.selectbox(key="pt_row23_0").set_value("1").run()
    at.selectbox(key="pt_wi_f0").set_value("clump_thickness").run()
    at.selectbox(key="pt_wi_v0_0").set_value("1").run()
    _no_failure(at)
    case_uncertain = _metrics(at)["Most probable class"] == "uncertain"
    sentence = next(_plain(x.value) for x in at.markdown
                    if _plain(x.value).startswith(("malignant:", "benign:")))
    bullet = next(_plain(x.value) for x in at.markdown
                  if _plain(x.value).startswith("- **clump_thickness = 1**"))
    assert "with parameter uncertainty" in sentence
    assert bullet == f"- **clump_thickness = 1**: {sentence[:-1]}" + (
        " — uncertain" if case_uncertain else "")
    assert case_uncertain


def test_finding_labels_read_as_the_names_and_ukdb_scenarios_as_two_networks():
    """Issue 32 words: a screen reader reads "clump_thickness", not "clump\\_thickness"; a
    UKDB scenario is described by UKDB's two networks (not "one model (no structure
    interval)"); the refusal of next test / conflict names methods of the page's own list."""
    import ast
    import re

    at = _page("ukdb2")
    assert at.selectbox(key="pt_row23_0").label == "clump_thickness"
    assert all("\\" not in at.selectbox(key=f"pt_row23_{j}").label for j in range(9))
    at.selectbox(key="pt_wi_f0").set_value("cell_size").run()
    at.selectbox(key="pt_wi_v0_1").set_value("1").run()
    _no_failure(at)
    bullet = next(_plain(x.value) for x in at.markdown
                  if _plain(x.value).startswith("- **cell_size = 1**"))
    assert "general network" in bullet and "one model" not in bullet
    tree = ast.parse((ROOT / PAGE).read_text())
    choices = next(n.value for n in ast.walk(tree) if isinstance(n, ast.Assign)
                   and getattr(n.targets[0], "id", "") == "METHOD_CHOICES")
    listed = {e.value for e in choices.elts if isinstance(e, ast.Constant)}
    refusals = " ".join(c.value for c in at.caption if "probability of findings" in c.value)
    named = set(re.findall(r"\((\w+)\)", _plain(refusals)))
    assert named and named <= listed, (named, listed)
