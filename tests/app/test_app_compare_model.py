"""AppTest of the Compare page's model files (issue 35 item 6, DESIGN §17): a compared method's
model saved from the page predicts as ``fit_method`` with the comparison's seed; a loaded model
shows its provenance and its external validation on the active data (the library's numbers); a
tampered or pickle upload is one sentence; a loaded model stays in its session."""

from __future__ import annotations

import io
import json
import zipfile

import numpy as np
import pytest
from streamlit.runtime.media_file_manager import MediaFileManager
from test_app import _finish_background, _no_failure, _page, _plain, _wbc

from bnma_core import load_model
from bnma_core.classifiers.registry import fit_method
from bnma_core.model_io import read_model
from bnma_ui import model_files

PAGE = "1_Compare_methods.py"
SEED = 3


_BUILDERS: dict[str, object] = {}


@pytest.fixture(scope="module", autouse=True)
def _record_deferred_downloads():
    """Keep each deferred download's builder (AppTest's media manager lives for one run)."""
    original = MediaFileManager.add_deferred

    def add_deferred(self, data_callable, *args, **kwargs):
        file_id = original(self, data_callable, *args, **kwargs)
        _BUILDERS[file_id] = data_callable
        return file_id

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(MediaFileManager, "add_deferred", add_deferred)
        yield


def _deferred_bytes(at, label: str) -> bytes:
    """The bytes a deferred download button of ``at`` builds on click."""
    button = next(b for b in at.get("download_button") if b.proto.label == label)
    data = _BUILDERS[button.proto.deferred_file_id]()
    return data if isinstance(data, bytes) else data.encode()


@pytest.fixture(scope="module")
def compared():
    """WBC, nb / manb over 3 folds with seed 3: one finished comparison."""
    at = _page(PAGE, _wbc())
    at.multiselect(key="cmp_methods").set_value(["nb", "manb"])
    at.slider(key="cmp_folds").set_value(3)
    at.number_input(key="cmp_seed").set_value(SEED)
    at.button[0].click().run()
    _finish_background(at, "compare")
    _no_failure(at)
    return at


@pytest.fixture(scope="module")
def saved(compared):
    at = compared
    at.selectbox(key="cmp_save_method").set_value("manb").run()
    _no_failure(at)
    return _deferred_bytes(at, "Save this method's model (.bnma)")


def test_a_model_saved_from_the_page_predicts_as_fit_method_with_the_seed(saved, compared):
    ds = _wbc()
    model = load_model(io.BytesIO(saved))
    ref = fit_method("manb", ds, random_state=SEED)
    np.testing.assert_allclose(model.predict_proba(ds.X), ref.predict_proba(ds.X), atol=1e-12)
    mf = read_model(io.BytesIO(saved))
    assert mf.info["method"] == "manb" and mf.info["data_fingerprint"] == ds.fingerprint()
    preds = compared.session_state["cmp_run"]["entry"]["preds"]
    np.testing.assert_array_equal(mf.development.proba["manb"], preds.proba["manb"])
    assert mf.info["development"]["folds"] == 3 and mf.development.seed == SEED


def test_an_uploaded_model_shows_provenance_and_the_librarys_validation(saved, compared):
    at = compared
    at.file_uploader(key="cmp_model_upload").set_value(("manb.bnma", saved,
                                                        "application/zip")).run()
    _no_failure(at)
    mf = read_model(io.BytesIO(saved))
    assert model_files.provenance(mf.info) in [_plain(c.value) for c in at.caption]
    shown = next(d.value for d in at.dataframe if "validation" in d.value.columns)
    expected = model_files.external_validation(mf, _wbc(), seed=0)[0]
    assert shown.equals(expected)
    assert "development (out-of-fold)" in shown.columns
    assert any("apparent (in-sample) performance" in i.value for i in at.info)  # its own data
    traces = [t.get("name") for c in at.get("plotly_chart")
              for t in json.loads(c.proto.spec)["data"]]
    for curve in ("development (out-of-fold)", "validation"):  # the reliability of both
        assert f"{curve}: consistency band" in traces
    assert "External validation report (HTML)" in [b.proto.label for b in
                                                   at.get("download_button")]
    html = _deferred_bytes(at, "External validation report (HTML)").decode()
    assert "External validation of manb" in html
    for cell in shown["validation"]:  # the report's numbers are the page's
        assert cell in html


def test_the_validation_table_is_the_librarys(saved):
    """The page's table: CVPredictions.metric_intervals of the model's predictions on the
    active codes beside the stored development predictions' (the report's first table)."""
    from bnma_core.evaluation import CVPredictions
    from bnma_core.validation import _side_by_side

    ds = _wbc()
    mf = read_model(io.BytesIO(saved))
    val = CVPredictions(ds.y, list(ds.classes), {"validation": mf.estimator.predict_proba(ds.X)},
                        folds=np.zeros(ds.n_rows, dtype=np.int64))
    expected = _side_by_side(mf.development.metric_intervals(seed=0),
                             val.metric_intervals(seed=0), "metric")
    assert model_files.external_validation(mf, ds, seed=0)[0].equals(expected)


def _tampered(raw: bytes) -> bytes:
    src = zipfile.ZipFile(io.BytesIO(raw))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as zf:
        for item in src.infolist():
            data = src.read(item.filename)
            if item.filename == "info.json":
                data = data.replace(b'"manb"', b'"nb"', 1)
            zf.writestr(item, data)
    return out.getvalue()


@pytest.mark.parametrize("kind", ["tampered", "pickle"])
def test_a_tampered_or_pickle_upload_is_one_sentence(kind, saved):
    at = _page(PAGE, _wbc())
    raw = _tampered(saved) if kind == "tampered" else b"\x80\x04\x95."
    at.file_uploader(key="cmp_model_upload").set_value(("m.bnma", raw, "application/zip")).run()
    _no_failure(at)
    assert len(at.error) == 1
    text = at.error[0].value
    assert text.count(". ") == 0 and text.endswith(".")
    assert not any("Loaded model" in c.value for c in at.caption)


def test_a_loaded_model_does_not_reach_another_session(saved):
    first = _page(PAGE, _wbc())
    first.file_uploader(key="cmp_model_upload").set_value(("manb.bnma", saved,
                                                           "application/zip")).run()
    assert any("Loaded model" in c.value for c in first.caption)
    second = _page(PAGE, _wbc())
    _no_failure(second)
    assert not any("Loaded model" in c.value for c in second.caption)
    assert "_model_file_cmp" not in second.session_state
