"""``bnma fit`` / ``bnma predict`` / ``bnma export`` and the output-path checks (issue 35 items
1, 3, 5; issue 36 item 9)."""

from __future__ import annotations

import io
import warnings

import numpy as np
import pandas as pd
import pytest

from bnma_core import cli
from bnma_core.classifiers.base import UnseenValueWarning
from bnma_core.model_io import read_model
from bnma_core.scoring import case_codes


def run(argv, capsys):
    rc = cli.main([str(a) for a in argv])
    out = capsys.readouterr()
    return rc, out.out, out.err


@pytest.fixture(scope="module")
def nb_model(tmp_path_factory):
    path = tmp_path_factory.mktemp("model") / "nb.bnma"
    assert cli.main(["fit", "--data", "wbc", "--method", "nb", "--out", str(path)]) == 0
    return path


def test_fit_writes_a_model_with_its_provenance(nb_model, wbc):
    mf = read_model(nb_model)
    assert mf.info["method"] == "nb" and mf.info["n_rows"] == 699
    assert mf.info["data_fingerprint"] == wbc.fingerprint()
    assert mf.info["settings"]["file"] == "wbc.csv"
    assert [c.name for c in mf.encoder.columns_] == wbc.feature_names


def test_fit_of_a_randomized_method_keeps_its_seed(tmp_path, capsys):
    path = tmp_path / "stack.bnma"
    rc, out, err = run(["fit", "--data", "wbc", "--method", "stack", "--seed", "7",
                        "--set", "candidates=('nb', 'tan')", "--set", "inner_folds=2",
                        "--out", path], capsys)
    assert rc == 0, err
    mf = read_model(path)
    assert mf.info["seed"] == 7 and mf.info["params"]["candidates"] == ["nb", "tan"]


def test_predict_matches_columns_by_name_and_lists_the_extra_ones(nb_model, wbc_path, tmp_path,
                                                                   capsys):
    raw = pd.read_csv(wbc_path, dtype=str)
    shuffled = raw[list(raw.columns[::-1])].assign(note="x").head(40)
    src = tmp_path / "new.csv"
    shuffled.to_csv(src, index=False)
    out = tmp_path / "scored.csv"
    rc, stdout, err = run(["predict", "--model", nb_model, "--data", src, "--out", out], capsys)
    assert rc == 0, err
    assert "columns not used by the model (ignored): class, note" in err
    table = pd.read_csv(out)
    mf = read_model(nb_model)
    expected = mf.estimator.predict_proba(mf.encoder.transform(raw.head(40)))
    np.testing.assert_allclose(table[["P(benign)", "P(malignant)"]], expected, atol=1e-12)
    assert table["row"].tolist() == list(range(40))
    assert set(table["prediction"]) <= {"benign", "malignant", "uncertain"}


def test_predict_refuses_missing_columns_naming_them(nb_model, wbc_path, tmp_path, capsys):
    raw = pd.read_csv(wbc_path, dtype=str).drop(columns=["mitoses", "cell_size"]).head(5)
    src = tmp_path / "new.csv"
    raw.to_csv(src, index=False)
    rc, _, err = run(["predict", "--model", nb_model, "--data", src], capsys)
    assert rc == 2
    assert err.strip() == ("bnma: error: The data lack columns the model needs: cell_size, "
                           "mitoses.")


def test_unseen_values_are_marginalized_with_the_warning(nb_model, wbc_path):
    mf = read_model(nb_model)
    raw = pd.read_csv(wbc_path, dtype=str).head(3)
    raw.loc[1, "mitoses"] = "eleven"
    with pytest.warns(UnseenValueWarning, match="mitoses .1 row, e.g. 'eleven'"):
        codes, _ = case_codes(mf, raw)
    assert codes[1, mf.info["features"].index("mitoses")] == -1
    blank = raw.copy()
    blank.loc[1, "mitoses"] = None
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        np.testing.assert_array_equal(case_codes(mf, blank)[0], codes)


def test_predict_uses_the_patient_pages_rule_and_the_formula_safe_writer(tmp_path, capsys):
    rng = np.random.default_rng(0)
    n = 120
    x = rng.integers(0, 2, n)
    frame = pd.DataFrame({"a": np.where(x == 1, "yes", "no"),
                          "b": rng.choice(["u", "v"], n),
                          "class": np.where(np.where(x == 1, rng.random(n) < 0.9,
                                                     np.arange(n) % 2 == 0),
                                            "=HYPERLINK(1)", "safe")})
    src = tmp_path / "train.csv"
    frame.to_csv(src, index=False)
    model = tmp_path / "m.bnma"
    assert run(["fit", "--data", src, "--method", "nb", "--out", model], capsys)[0] == 0
    rc, stdout, err = run(["predict", "--model", model, "--data", src], capsys)
    assert rc == 0, err
    table = pd.read_csv(io.StringIO(stdout))
    assert "P('=HYPERLINK(1))" not in table.columns  # "P(" first: never a formula
    assert "P(=HYPERLINK(1))" in table.columns
    assert set(table["prediction"]) <= {"'=HYPERLINK(1)", "safe", "uncertain"}
    from bnma_core import explain
    from bnma_core.viz.patient import is_uncertain

    mf = read_model(model)
    codes, _ = case_codes(mf, frame)
    pred = explain.predict_with_uncertainty(mf.estimator, codes, codes=True)
    flags = [is_uncertain(pred, r) for r in range(n)]
    assert (table["prediction"] == "uncertain").tolist() == flags
    assert any(flags) and not all(flags)


def test_predict_with_intervals_to_parquet(nb_model, wbc_path, tmp_path, capsys):
    out = tmp_path / "scored.parquet"
    rc, _, err = run(["predict", "--model", nb_model, "--data", wbc_path, "--interval",
                      "--draws", "20", "--shapley", "--out", out], capsys)
    assert rc == 0, err
    table = pd.read_parquet(out)
    assert len(table) == 699
    low, high = table["P(malignant) parameter low"], table["P(malignant) parameter high"]
    assert (low <= table["P(malignant)"] + 1e-9).mean() > 0.9 and (low <= high).all()
    assert table["top contributions"].str.count(";").eq(2).all()


def test_predict_reports_a_damaged_model_in_one_line(tmp_path, wbc_path, capsys):
    bad = tmp_path / "bad.bnma"
    bad.write_bytes(b"\x80\x04junk")
    rc, _, err = run(["predict", "--model", bad, "--data", wbc_path], capsys)
    assert rc == 2 and err.count("\n") == 1 and "pickle" in err
