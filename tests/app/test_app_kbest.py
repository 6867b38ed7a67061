"""AppTest (headless Streamlit) of the subbagging view of the "Exact & K-best" page."""

from __future__ import annotations

import base64
import threading
import time

import numpy as np
import plotly.io as pio
import streamlit.testing.v1 as st_testing
from conftest import ROOT

from bnma_core.viz.kbest import edge_stability

AppTest = st_testing.AppTest

TIMEOUT = 120
PAGE = "pages/5_Exact_K_best.py"


def _page(ds) -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=TIMEOUT)
    at.switch_page(PAGE)
    at.session_state["bnma_dataset"] = ds
    at.session_state["bnma_dataset_label"] = "test data"
    at.run()
    at.radio(key="exact_view").set_value("subbagging").run()
    _no_failure(at)
    return at


def _no_failure(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]


def _tiny():
    """40 rows, 3 features and a class; row 5 of the file has a missing value; rows 0-1 of
    the file are dropped while loading (the class is missing), so row numbers != positions."""
    from bnma_core.data import load_dataset

    rng = np.random.default_rng(0)
    a = rng.integers(0, 2, 42)
    c = rng.integers(0, 2, 42)
    y = np.where(rng.random(42) < 0.85, a, 1 - a)
    b = np.where(rng.random(42) < 0.7, y, rng.integers(0, 3, 42))
    lines = ["a,b,c,y"]
    for i in range(42):
        lines.append(",".join(["" if i == 5 else str(a[i]), str(b[i]), str(c[i]),
                               "" if i < 2 else f"k{y[i]}"]))
    ds = load_dataset(("\n".join(lines) + "\n").encode(), target="y", missing="keep")
    assert ds.row_ids[0] == 2 and (ds.codes < 0).sum() == 1
    return ds


def _array(value) -> np.ndarray:
    """A plotly array from a chart's JSON spec: a list, or plotly's typed-array encoding
    {"dtype", "bdata" (base64), "shape"}."""
    if isinstance(value, dict) and "bdata" in value:
        out = np.frombuffer(base64.b64decode(value["bdata"]), dtype=value["dtype"])
        shape = value.get("shape")
        if shape:
            out = out.reshape([int(n) for n in str(shape).split(",")])
        return out.astype(float)
    return np.asarray(value, dtype=float)


def _run(at: AppTest, name: str = "subbag") -> None:
    at.button(key="subb_run_btn").click().run()
    _no_failure(at)
    run = at.session_state[name + "__bnma_bg"]
    assert run.wait(TIMEOUT), "the subbagging run did not end"
    at.run()  # the page takes the result
    _no_failure(at)


def test_subbagging_view_shows_the_three_views_computed_from_the_model():
    ds = _tiny()
    at = _page(ds)
    at.number_input(key="subb_T").set_value(3)
    at.number_input(key="exact_k").set_value(4).run()
    assert any("3 subsamples of 35 of the 39 complete rows" in c.value for c in at.caption)
    _run(at)
    assert not at.error
    entry = at.session_state["subbag_run"]["entry"]
    model = entry["model"]
    assert not entry["stopped"] and len(model.subsamples_) == 3
    heads = [h.value for h in at.subheader]
    assert heads == ["Per subsample: its K best classes", "Edge stability across subsamples",
                     "Averaged prediction for one row", "Export"]
    assert [m.value for m in at.metric][:3] == ["3 of 3", "35", "4"]
    # 1. per subsample: the chosen subsample's classes, as the model has them
    at.selectbox(key="subb_show_t").set_value(2).run()
    _no_failure(at)
    shown = next(d.value for d in at.dataframe if "Markov blanket" in d.value.columns)
    np.testing.assert_allclose(shown["weight"], model.subsamples_[2].weights)
    np.testing.assert_allclose(shown["log score"],
                               [s.log_score for s in model.subsamples_[2].structures])
    # 2. edge stability: the heatmap holds the table computed from the fitted model
    table = edge_stability(model)
    charts = at.get("plotly_chart")
    assert len(charts) >= 4  # weights, a class's CPDAG, stability, prediction
    figs = [pio.from_json(c.proto.spec) for c in charts]
    heat = next(f.data[0] for f in figs if f.data and f.data[0].type == "heatmap")
    n = len(heat.y)
    assert n == min(30, len(table)) and list(heat.y) == list(table.index[:n])
    np.testing.assert_allclose(_array(heat.z),
                               table.filter(like="subsample ").to_numpy(float)[:n])
    # 3. the chosen row (file numbering) with its missing value summed out
    at.number_input(key="subb_row").set_value(5).run()
    _no_failure(at)
    pos = ds.position_of_row(5)
    pred = next(d.value for d in at.dataframe if "averaged P" in d.value.columns)
    np.testing.assert_allclose(pred["averaged P"], model.predict_proba(ds.X[[pos]])[0],
                               atol=1e-4)
    per = model.subsample_posteriors(ds.X[[pos]])[:, 0, :]
    np.testing.assert_allclose(pred["min over subsamples"], per.min(axis=0), atol=1e-4)
    text = " ".join(c.value for c in at.caption)
    assert "summed out exactly: a" in text and "no subsample learned from it" in text
    at.button(key="subb_row_spread").click().run()
    _no_failure(at)
    per_all = model.subsample_posteriors(ds.X)
    widest = np.argmax((per_all.max(axis=0) - per_all.min(axis=0)).max(axis=1))
    assert at.number_input(key="subb_row").value == ds.row_ids[widest]
    at.number_input(key="subb_row").set_value(0).run()  # removed while loading
    assert any("not in this dataset" in i.value for i in at.info)
    # 4. exports
    labels = [b.label for b in at.get("download_button")]
    assert {"Edge stability (CSV)", "Report (HTML)"} <= set(labels)
    # the same data and settings again: the finished result is reused, no new run starts
    before = at.session_state["subbag__bnma_bg"]
    at.button(key="subb_run_btn").click().run()
    _no_failure(at)
    assert at.session_state["subbag__bnma_bg"] is before
    assert at.session_state["subbag_run"]["entry"]["model"] is model
    # the K-best view still works beside it
    at.radio(key="exact_view").set_value("kbest").run()
    _no_failure(at)
    assert at.button[0].label == "Run"


def test_stop_keeps_the_finished_subsamples_and_leaves_no_thread():
    from bnma_core.network import load_network

    ds = load_network("alarm").sample(300, seed=0, class_variable="CATECHOL")
    at = _page(ds)
    at.multiselect(key="exact_vars").set_value([ds.class_name, *ds.feature_names[:12]])
    at.number_input(key="subb_T").set_value(100).run()  # about 0.1-0.3 s per subsample
    _no_failure(at)
    at.button(key="subb_run_btn").click().run()
    _no_failure(at)
    run = at.session_state["subbag__bnma_bg"]
    deadline = time.time() + TIMEOUT
    while (sum(e["stage"] == "done" for e in run.events) < 2 and not run.done
           and time.time() < deadline):
        run.wait(0.05)  # a condition, polled: one event per stage of every subsample
    assert not run.done, "the run ended before the test could stop it"
    at.run()  # a rerun while it goes on: live progress is drawn
    _no_failure(at)
    stop = at.button(key="subb_stop_btn")
    assert not stop.disabled
    t0, w0 = time.perf_counter(), time.time()
    stop.click().run()
    print(f"Stop click: worker ended after {run.ended - w0:.2f} s, stopped page drawn after "
          f"{time.perf_counter() - t0:.2f} s")
    _no_failure(at)
    assert run.done
    assert not any(t.name == "bnma-subbag" and t.is_alive() for t in threading.enumerate())
    entry = at.session_state["subbag_run"]["entry"]
    done = len(entry["model"].subsamples_)
    assert entry["stopped"] and 2 <= done < 100
    assert any(f"Stopped after {done} of 100 subsamples" in w.value for w in at.warning)
    assert [m.value for m in at.metric][0] == f"{done} of 100"
    assert any(h.value == "Edge stability across subsamples" for h in at.subheader)


def test_too_many_variables_is_refused_before_the_run_with_the_remedy():
    from bnma_core.network import load_network

    ds = load_network("hepar2").sample(200, 0, "Cirrhosis")  # 70 variables
    at = _page(ds)
    at.multiselect(key="exact_vars").set_value([ds.class_name, *ds.feature_names[:21]]).run()
    _no_failure(at)
    assert at.error and "limit is 20 variables" in at.error[0].value
    assert "EANB" not in at.error[0].value  # no EANB variant of subbagging
    assert at.button(key="subb_run_btn").disabled
    assert "subbag__bnma_bg" not in at.session_state  # nothing started
    at.button(key="exact_remedy").click().run()
    _no_failure(at)
    kept = at.session_state["exact_vars"]
    assert len(kept) == 20 and kept[0] == ds.class_name
    assert not at.error and not at.button(key="subb_run_btn").disabled
    at.number_input(key="exact_k").set_value(20).run()  # K > 10: at most 18
    assert at.error and "limit is 18 variables" in at.error[0].value
    at.button(key="exact_remedy").click().run()
    assert len(at.session_state["exact_vars"]) == 18 and not at.error


def test_no_feature_chosen_is_a_plain_message():
    at = _page(_tiny())
    at.multiselect(key="exact_vars").set_value(["y"]).run()
    _no_failure(at)
    assert at.error and "at least one feature" in at.error[0].value
    assert at.button(key="subb_run_btn").disabled


def test_stop_before_the_first_subsample_finished_says_there_is_no_result():
    from bnma_core.network import load_network

    ds = load_network("alarm").sample(300, seed=0, class_variable="CATECHOL")
    at = _page(ds)
    at.multiselect(key="exact_vars").set_value([ds.class_name, *ds.feature_names[:16]])
    at.number_input(key="subb_T").set_value(3).run()  # seconds per subsample at 17 variables
    _no_failure(at)
    at.button(key="subb_run_btn").click().run()
    run = at.session_state["subbag__bnma_bg"]
    assert not any(e["stage"] == "done" for e in run.events), "a subsample finished already"
    at.button(key="subb_stop_btn").click().run()
    _no_failure(at)
    assert run.done and run.result is None
    assert not any(t.name == "bnma-subbag" and t.is_alive() for t in threading.enumerate())
    assert any("before the first subsample was finished" in w.value for w in at.warning)
    assert not at.subheader  # no views without a result
