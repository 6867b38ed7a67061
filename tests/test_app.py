"""AppTest (headless Streamlit) tests of the data page and the pages' dataset guard."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import ROOT

from bnma_core.datasets import bundled_path

st_testing = pytest.importorskip("streamlit.testing.v1")
AppTest = st_testing.AppTest

TIMEOUT = 120


def _app() -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=TIMEOUT)
    at.run()
    return at


def _no_failure(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]


def _good_csv(n: int = 60, seed: int = 0) -> bytes:
    rng = np.random.default_rng(seed)
    age = rng.normal(55, 10, n).round(1)
    marker = rng.choice(["low", "mid", "high"], n)
    outcome = np.where((age > 55) ^ (marker == "high"), "sick", "well")
    lines = ["patient_id,age,marker,outcome"]
    lines += [f"P{i},{a},{m},{o}" for i, (a, m, o) in enumerate(zip(age, marker, outcome))]
    return ("\n".join(lines) + "\n").encode()


def test_default_loads_wbc():
    at = _app()
    _no_failure(at)
    assert not at.error
    ds = at.session_state["bnma_dataset"]
    assert ds.class_name == "class"
    assert ds.classes == ["benign", "malignant"]
    assert ds.n_rows == 683  # 16 rows with a missing bare_nuclei left out
    assert [m.value for m in at.metric][:3] == ["683", "9", "2"]
    assert any("missing" in i.value for i in at.info)
    assert at.session_state["bnma_dataset_label"] == "sample_data/wbc.csv"


def test_keep_missing_rows_and_class_column_choice():
    at = _app()
    at.radio(key="app_missing").set_value("keep").run()
    _no_failure(at)
    ds = at.session_state["bnma_dataset"]
    assert ds.n_rows == 699 and (ds.codes < 0).sum() == 16
    at.selectbox(key="app_target").set_value("mitoses").run()
    _no_failure(at)
    assert at.session_state["bnma_dataset"].class_name == "mitoses"


def test_upload_good_csv_quantile_bins():
    at = _app()
    at.radio(key="app_source").set_value("upload").run()
    _no_failure(at)
    assert "bnma_dataset" not in at.session_state  # nothing uploaded yet
    at.file_uploader(key="app_upload").set_value(("trial.csv", _good_csv(), "text/csv")).run()
    _no_failure(at)
    assert not at.error
    ds = at.session_state["bnma_dataset"]
    # no column named class/target/label/diagnosis -> the last column is the class
    assert at.selectbox(key="app_target").value == "outcome"
    assert ds.class_name == "outcome" and ds.n_rows == 60
    assert "patient_id" not in ds.names  # identifier column removed with a notice
    assert any("Identifier" in i.value for i in at.info)
    assert ds.arities[ds.names.index("age")] == 2  # median split
    at.radio(key="app_disc").set_value("quantile").run()
    at.slider(key="app_bins").set_value(4).run()
    _no_failure(at)
    ds = at.session_state["bnma_dataset"]
    assert ds.arities[ds.names.index("age")] == 4
    assert at.session_state["bnma_dataset_label"] == "uploaded trial.csv"


BAD_CSVS = {
    "empty": (b"", "empty"),
    "binary": (b"\x00\x01\x02PK\x03\x04" * 50, "not a CSV"),
    "one column": (b"a\n1\n2\n3\n", "at least two"),
    "single class": (b"x,class\n" + b"".join(b"%d,yes\n" % i for i in range(20)),
                     "single value"),
    "too few rows": (b"x,class\n1,a\n2,b\n1,a\n", "complete rows"),
    "duplicate names": (b"x,x,class\n1,2,a\n", "more than once"),
    "all missing column": (b"x,y,class\n" + b"".join(b"%d,,%s\n" % (i % 3, b"ab"[i % 2:i % 2 + 1])
                                                   for i in range(20)), "entirely missing"),
}


@pytest.mark.parametrize("case", list(BAD_CSVS))
def test_upload_bad_csv_shows_error_without_exception(case):
    raw, words = BAD_CSVS[case]
    at = _app()
    at.radio(key="app_source").set_value("upload").run()
    at.file_uploader(key="app_upload").set_value(("bad.csv", raw, "text/csv")).run()
    _no_failure(at)
    assert at.error, f"no st.error for {case}"
    assert words.lower() in " ".join(e.value for e in at.error).lower()
    assert "Traceback" not in " ".join(e.value for e in at.error)
    assert "bnma_dataset" not in at.session_state


def test_bad_upload_then_good_upload_recovers():
    at = _app()
    at.radio(key="app_source").set_value("upload").run()
    at.file_uploader(key="app_upload").set_value(("bad.csv", b"", "text/csv")).run()
    assert at.error
    at.file_uploader(key="app_upload").set_value(("ok.csv", _good_csv(), "text/csv")).run()
    _no_failure(at)
    assert not at.error
    assert at.session_state["bnma_dataset"].n_rows == 60


def test_network_sample_source():
    at = _app()
    at.radio(key="app_source").set_value("network").run()
    _no_failure(at)
    assert not at.error
    ds = at.session_state["bnma_dataset"]
    assert ds.n_rows == 1000 and ds.n_vars == 37 and ds.class_name == "CATECHOL"
    assert at.session_state["bnma_dataset_network"] == "alarm"
    at.number_input(key="app_net_rows").set_value(300)
    at.number_input(key="app_net_seed").set_value(7)
    at.selectbox(key="app_network").set_value("asia").run()
    _no_failure(at)
    ds = at.session_state["bnma_dataset"]
    assert ds.n_rows == 300 and ds.n_vars == 8 and ds.class_name == "lung"
    assert at.session_state["bnma_dataset_label"] == "asia sample (300 rows, seed 7)"
    first = ds.codes.copy()
    at.run()  # same seed -> same data
    assert (at.session_state["bnma_dataset"].codes == first).all()


# --- pages -----------------------------------------------------------------------------------

DATASET_FREE_PAGES = {"9_Glossary.py"}  # pages that need no dataset (tested on their own)
PAGES = sorted(p.name for p in (ROOT / "pages").glob("[0-9]*_*.py")
               if p.name not in DATASET_FREE_PAGES)


def _page(name: str, ds=None) -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=TIMEOUT)
    at.switch_page(f"pages/{name}")
    if ds is not None:
        at.session_state["bnma_dataset"] = ds
        at.session_state["bnma_dataset_label"] = "test data"
    at.run()
    return at


def _wbc():
    from bnma_core.data import load_dataset

    return load_dataset(bundled_path("wbc.csv"))


@pytest.mark.parametrize("name", PAGES)
def test_page_without_dataset_says_so_and_links_back(name):
    at = _page(name)
    _no_failure(at)
    assert any("No dataset is loaded" in w.value for w in at.warning)
    links = at.get("page_link")
    assert links and links[0].proto.label == "Go to the data page"
    assert links[0].proto.page_script_hash  # resolves to the main page


@pytest.mark.parametrize("name", PAGES)
def test_page_has_teaching_expanders(name):
    at = _page(name, _wbc())
    _no_failure(at)
    labels = [e.label for e in at.expander]
    assert "What am I looking at?" in labels and "Equations" in labels


def test_compare_three_folds():
    at = _page("1_Compare_methods.py", _wbc())
    at.multiselect(key="cmp_methods").set_value(["nb", "tan"])
    at.slider(key="cmp_folds").set_value(3)
    at.button[0].click().run()
    _no_failure(at)
    assert not at.error and not at.warning
    table = at.dataframe[1].value
    assert list(table["method"]) == ["nb", "tan"] and list(table["folds"]) == [3, 3]
    acc = float(table["accuracy"][0].split(" ± ")[0])
    assert 0.9 < acc <= 1.0  # naive Bayes on WBC is ~0.97
    assert len(at.get("plotly_chart")) == 2  # bars + ROC
    wil = at.dataframe[2].value
    assert list(wil["method"]) == ["tan"] and wil["n_pairs"][0] == 3
    assert at.get("download_button")
    # a rerun with the same settings reuses the stored result
    at.button[0].click().run()
    assert at.session_state["cmp_run"]["entry"]["results"].shape[0] == 6


def test_compare_too_many_folds_is_a_plain_error():
    from bnma_core.data import load_dataset

    tiny = load_dataset(b"x,class\n" + b"".join(b"%d,%s\n" % (i % 3, b"ab"[i % 2:i % 2 + 1])
                                                for i in range(12)))
    at = _page("1_Compare_methods.py", tiny)
    at.multiselect(key="cmp_methods").set_value(["nb"])
    at.slider(key="cmp_folds").set_value(10)
    at.button[0].click().run()
    _no_failure(at)
    assert at.error and "folds" in at.error[0].value


def test_ukdb_row_and_form():
    at = _page("3_UKDB_instances.py", _wbc())
    _no_failure(at)
    assert not at.error
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["True class of this case"] == "benign"
    assert metrics["UKDB predicts"] in ("benign", "malignant")
    assert len(at.get("plotly_chart")) == 2  # posterior bars + the two networks
    bullets = [m.value for m in at.markdown if m.value.startswith("- ")]
    assert bullets and "CLMI" in bullets[0] and "overall" in bullets[0]
    at.number_input(key="ukdb_row").set_value(5).run()
    _no_failure(at)
    assert {m.label: m.value for m in at.metric}["True class of this case"] == "malignant"
    # a patient typed in the form, with missing values
    at.radio(key="ukdb_source").set_value("form").run()
    assert any("Explain this patient" in i.value for i in at.info)
    at.selectbox(key="ukdb_form_clump_thickness").set_value("10")
    at.selectbox(key="ukdb_form_cell_size").set_value("10")
    at.selectbox(key="ukdb_form_bare_nuclei").set_value("10")
    at.button[0].click().run()
    _no_failure(at)
    assert not at.error
    assert {m.label: m.value for m in at.metric}["UKDB predicts"] == "malignant"


def test_naive_bma_page_on_network_data():
    from bnma_core.network import load_network

    ds = load_network("alarm").sample(400, 1, "CATECHOL")
    at = _page("4_Naive_BMA.py", ds)
    _no_failure(at)
    assert not at.error
    assert len(at.get("plotly_chart")) == 3  # arc posteriors, parameters, ROC
    table = at.dataframe[-1].value
    assert list(table["model"]) == ["MAP naive Bayes", "Model-averaged naive Bayes"]
    assert table["accuracy"].between(0.5, 1).all()
    # preselected feature = the least certain arc
    post = at.dataframe[0].value
    assert at.selectbox(key="manb_feature").value == post.iloc[0]["feature"]
    at.slider(key="manb_prior").set_value(0.95).run()
    _no_failure(at)


# --- bnma_ui helpers (no Streamlit run needed) ----------------------------------------------


def test_parse_order_and_model_index():
    from bnma_ui.models import model_index, parse_order

    ds = _wbc()
    text = ", ".join(reversed(ds.names))
    order = parse_order(text, ds)
    assert order == list(reversed(ds.names))
    idx = model_index(ds, order)
    assert idx[0] == len(ds.feature_names)  # the class is last in the estimator's variables
    assert sorted(idx) == list(range(ds.n_vars))
    with pytest.raises(ValueError, match="Not variables"):
        parse_order(text + ", tumour_size", ds)
    with pytest.raises(ValueError, match="more than once"):
        parse_order(text + ", mitoses", ds)
    with pytest.raises(ValueError, match="missing: class"):
        parse_order(", ".join(ds.feature_names), ds)


def test_holdout_split_is_stratified_and_seeded():
    from bnma_ui.models import holdout_split

    ds = _wbc()
    tr, te = holdout_split(ds, 0.3, 4)
    assert len(set(tr) & set(te)) == 0 and len(tr) + len(te) == ds.n_rows
    share = np.bincount(ds.y[te]) / len(te)
    assert np.allclose(share, np.bincount(ds.y) / ds.n_rows, atol=0.01)
    tr2, te2 = holdout_split(ds, 0.3, 4)
    assert (te == te2).all()


def _finish_background(at: AppTest, name: str, timeout: float = TIMEOUT) -> None:
    """Wait (on the run itself, no fixed sleep) until the page's background run ``name`` has
    returned, then rerun the page once so that it takes and shows the result."""
    run = at.session_state[name + "__bnma_bg"]
    assert run.wait(timeout), f"the {name} run did not end within {timeout} s"
    at.run()


def _mcmc_settings(at: AppTest, n_iter: int, burn: int, orders: int = 10) -> None:
    at.number_input(key="mcmc_iter").set_value(n_iter)
    at.number_input(key="mcmc_burn").set_value(burn)
    at.number_input(key="mcmc_orders").set_value(orders)
    at.slider(key="mcmc_parents").set_value(2)


def test_order_mcmc_short_run():
    at = _page("2_Order_MCMC.py", _wbc())
    _no_failure(at)
    _mcmc_settings(at, 1500, 300)
    at.radio(key="mcmc_ref").set_value("typed").run()
    at.button[0].click().run()
    _no_failure(at)
    _finish_background(at, "mcmc")
    _no_failure(at)
    assert not at.error and not at.warning
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Iterations per chain"] == "1,500"
    assert metrics["Orders averaged"] == "20"  # 10 per chain, 2 chains
    # final trace + Spearman, averaged DAG, accuracy (+ heatmap)
    assert len(at.get("plotly_chart")) >= 4
    acc = at.dataframe[-1].value
    assert list(acc["n_orders"]) == [1, 5, 10]
    downloads = {d.proto.label for d in at.get("download_button")}
    assert {"Edge posteriors (CSV)", "Averaged network (GraphML)", "Markov blanket (CSV)",
            "Report (HTML)"} <= downloads
    assert acc["accuracy"].between(0.85, 1.0).all()
    entry = at.session_state["mcmc_run"]["entry"]
    assert not entry["stopped"] and len(entry["test"]) == round(0.3 * 683)
    # the threshold slider redraws without rerunning the chains
    model = entry["model"]
    at.slider(key="mcmc_threshold").set_value(0.9).run()
    _no_failure(at)
    assert at.session_state["mcmc_run"]["entry"]["model"] is model
    # the same settings again: the stored result, no new run
    at.button[0].click().run()
    assert at.session_state["mcmc_run"]["entry"]["model"] is model


def test_order_mcmc_live_progress_and_stop_within_a_second():
    """While the chains run the page shows live progress; Stop ends the worker thread within
    about a second (measured on the thread, not slept) and the kept orders are averaged."""
    import threading
    import time

    at = _page("2_Order_MCMC.py", _wbc())
    _mcmc_settings(at, 500_000, 1_000, orders=30)
    at.run()
    at.button[0].click().run()
    _no_failure(at)
    run = at.session_state["mcmc__bnma_bg"]
    deadline = time.time() + TIMEOUT
    while len(run.events) < 4 and not run.done and time.time() < deadline:
        run.wait(0.05)  # a condition, polled: the chains report every few hundred iterations
    assert not run.done and len(run.events) >= 4, "no live progress before the run ended"
    at.run()  # a rerun while the chains go on: live progress is drawn
    assert any("Iterations per chain (of" in m.label for m in at.metric)
    stop = next(b for b in at.button if b.label == "Stop")
    assert not stop.disabled
    t0 = time.perf_counter()
    stop.click().run()
    assert run.done
    latency = time.perf_counter() - t0
    _no_failure(at)
    assert latency < 5.0, latency  # generous on a loaded machine; about 0.1-0.5 s when idle
    assert not any(t.name == "bnma-mcmc" and t.is_alive() for t in threading.enumerate())
    assert any("Stopped after" in w.value for w in at.warning)
    entry = at.session_state["mcmc_run"]["entry"]
    assert entry["stopped"] and entry["model"].iterations_done_ < 500_000


def test_order_mcmc_bad_typed_order_is_a_plain_error():
    at = _page("2_Order_MCMC.py", _wbc())
    at.radio(key="mcmc_ref").set_value("typed").run()
    at.text_area(key="mcmc_ref_text").set_value("class, mitoses").run()
    _no_failure(at)
    assert at.error and "missing" in at.error[0].value
    assert at.button[0].disabled


def test_order_mcmc_too_many_variables_is_a_plain_error():
    from bnma_core.network import load_network

    ds = load_network("hepar2").sample(200, 0, "Cirrhosis")  # 70 variables > 64
    at = _page("2_Order_MCMC.py", ds)
    at.button[0].click().run()
    _finish_background(at, "mcmc")
    _no_failure(at)
    assert at.error and "64 variables" in at.error[0].value
