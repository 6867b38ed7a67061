"""External validation of a saved model (issue 35 item 4): ``bnma report --model``."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bnma_core import cli, save_model
from bnma_core.classifiers.registry import fit_method
from bnma_core.data import DataError
from bnma_core.metrics import metric_intervals
from bnma_core.model_io import read_model
from bnma_core.validation import (
    _shift_tables,
    development_predictions,
    external_validation_report,
)


@pytest.fixture(scope="module")
def model_file(wbc, tmp_path_factory):
    dev = development_predictions(wbc, "nb", folds=3, seed=2)
    path = tmp_path_factory.mktemp("m") / "nb.bnma"
    save_model(fit_method("nb", wbc), path, dataset=wbc, method="nb", development=dev)
    return read_model(path)


@pytest.fixture(scope="module")
def external(wbc_path):
    raw = pd.read_csv(wbc_path, dtype=str)
    ext = raw.iloc[::3].reset_index(drop=True)
    ext["mitoses"] = "1"  # a shifted case mix: every validation case has mitoses = 1
    return ext


def test_report_puts_validation_beside_development(model_file, external):
    page = external_validation_report(model_file, external, positive="malignant",
                                      n_bootstrap=100, seed=0)
    assert "development (out-of-fold)" in page and "3-fold cross-validation (seed 2)" in page
    # the validation accuracy is the library's metric on these cases
    codes = model_file.encoder.transform(external)
    y = (external["class"] == "malignant").to_numpy().astype(int)
    tab = metric_intervals(y, model_file.estimator.predict_proba(codes), n_bootstrap=100)
    acc = tab[(tab["metric"] == "accuracy") & (tab["scope"] == "pooled")]["estimate"].iloc[0]
    assert f"{acc:.4g} [" in page
    assert "calibration slope" in page and "Decision curve" in page
    # mitoses, set to one value, is the most shifted feature
    i = page.index("Case mix: development vs validation")
    assert page.index("mitoses", i) < min(page.index(f, i) for f in ("cell_size", "bare_nuclei"))


def test_without_development_predictions_it_says_so(wbc, external, tmp_path):
    path = save_model(fit_method("nb", wbc), tmp_path / "m.bnma", dataset=wbc, method="nb")
    page = external_validation_report(read_model(path), external, n_bootstrap=50)
    assert "not saved (bnma fit --cv-folds K)" in page


def test_no_class_column_is_one_sentence(model_file, external):
    with pytest.raises(DataError, match="no class column 'class'"):
        external_validation_report(model_file, external.drop(columns="class"))


def test_cli_report_model(model_file, external, tmp_path, capsys, wbc):
    src = tmp_path / "ext.csv"
    external.to_csv(src, index=False)
    model = tmp_path / "m.bnma"
    assert cli.main(["fit", "--data", "wbc", "--method", "nb", "--cv-folds", "3",
                     "--out", str(model)]) == 0
    out = tmp_path / "v.html"
    rc = cli.main(["report", "--model", str(model), "--data", str(src), "--positive",
                   "malignant", "--bootstrap", "50", "--out", str(out)])
    assert rc == 0, capsys.readouterr().err
    assert "External validation of nb" in out.read_text()


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(-1, 2), min_size=1, max_size=30),
       st.lists(st.integers(-1, 2), min_size=1, max_size=30))
def test_total_variation_is_a_distance_between_0_and_1(a, b):
    states = [["x", "y", "z"]]
    A, B = np.array(a)[:, None], np.array(b)[:, None]
    tv = _shift_tables(["f"], states, A, B)[0]["total variation"].iloc[0]
    back = _shift_tables(["f"], states, B, A)[0]["total variation"].iloc[0]
    assert 0 <= tv <= 1 and tv == back
    assert _shift_tables(["f"], states, A, A)[0]["total variation"].iloc[0] == 0
    if not set(a) & set(b):
        assert tv == 1
