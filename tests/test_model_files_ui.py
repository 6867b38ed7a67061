"""The dashboard's model-file widget (issue 35 item 6): upload limits, provenance, compatibility
with the active data, and a loaded model explaining a case exactly as the one fitted in place."""

from __future__ import annotations

import numpy as np
import pytest

from bnma_core import explain
from bnma_core.classifiers.registry import fit_method
from bnma_core.model_io import ModelFileError, model_bytes
from bnma_ui import model_files


@pytest.fixture(scope="module")
def fitted(wbc):
    model = fit_method("nb", wbc)
    return model, model_files.read_upload(model_bytes(model, dataset=wbc, method="nb"))


def test_provenance_names_method_data_rows_seed_version_date(fitted, wbc):
    text = model_files.provenance(fitted[1].info)
    for part in ("(nb)", "699 rows", wbc.fingerprint()[:12], "seed None", "BNMA Studio 0.1.0",
                 "saved 20"):
        assert part in text


def test_a_loaded_model_explains_a_case_exactly_as_the_one_fitted_in_place(fitted, wbc):
    model, mf = fitted
    x = wbc.X[23]
    a = explain.predict_with_uncertainty(model, x, n_draws=50, train=wbc, seed=0, codes=True)
    b = explain.predict_with_uncertainty(mf.estimator, x, n_draws=50, train=mf.train, seed=0,
                                         codes=True)
    np.testing.assert_array_equal(a.proba, b.proba)
    np.testing.assert_array_equal(a.parameter_interval, b.parameter_interval)
    sa = explain.shapley_values(model, x, codes=True)
    sb = explain.shapley_values(mf.estimator, x, codes=True)
    np.testing.assert_array_equal(sa.values, sb.values)


def test_compatibility_with_the_active_data(fitted, wbc):
    assert model_files.compatibility(fitted[1], wbc) == ""
    other = wbc.select_features(wbc.feature_names[:4])
    assert "other columns" in model_files.compatibility(fitted[1], other)


def test_the_servers_upload_size_applies(monkeypatch):
    monkeypatch.setattr(model_files, "upload_limit", lambda: 1000)
    with pytest.raises(ModelFileError, match="more than the 0 MB this server accepts"):
        model_files.read_upload(b"PK\x03\x04" + b"\0" * 2000)
    with pytest.raises(ModelFileError, match="pickle"):
        model_files.read_upload(b"\x80\x04.")
