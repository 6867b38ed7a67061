"""Data layer: loading, discretization, encoding, and one test per kind of bad input."""

from __future__ import annotations

import io

import numpy as np
import pandas as pd
import pytest
from conftest import ROOT

from bnma_core.data import (
    DataError,
    DiscreteEncoder,
    dataset_from_codes,
    load_dataset,
    prepare_frame,
    read_table,
)
from bnma_core.datasets import bundled_path

WBC = bundled_path("wbc.csv")


def _csv(df: pd.DataFrame) -> bytes:
    return df.to_csv(index=False).encode()


def _good_frame(n: int = 40, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame({
        "age": rng.normal(50, 10, n).round(2),
        "smoker": rng.choice(["yes", "no"], n),
        "grade": rng.integers(1, 4, n),
        "class": rng.choice(["benign", "malignant"], n),
    })


# --- good input ---------------------------------------------------------------------------------


def test_wbc_loads_with_documented_shape():
    ds = load_dataset(WBC)
    assert ds.class_name == "class"
    assert ds.classes == ["benign", "malignant"]
    assert ds.n_rows == 683  # 699 rows, 16 with a missing bare_nuclei set aside
    assert ds.n_vars == 10
    assert ds.codes.dtype == np.int32
    assert (ds.codes >= 0).all()
    assert ds.arities[0] == 10  # clump thickness 1..10 stays categorical (ordinal score)
    assert any("missing" in n for n in ds.notices)


def test_wbc_keep_missing_codes_minus_one():
    ds = load_dataset(WBC, missing="keep")
    assert ds.n_rows == 699
    j = ds.names.index("bare_nuclei")
    assert (ds.codes[:, j] == -1).sum() == 16
    assert (ds.codes[:, [i for i in range(10) if i != j]] >= 0).all()


@pytest.mark.parametrize("kind", ["path", "str", "bytes", "filelike", "frame"])
def test_sources_agree(kind):
    df = _good_frame()
    src = {"path": None, "str": None, "bytes": _csv(df), "filelike": io.BytesIO(_csv(df)),
           "frame": df}[kind]
    if src is None:
        src = WBC if kind == "path" else str(WBC)
        ds = load_dataset(src)
        assert ds.n_rows == 683
        return
    ds = load_dataset(src)
    ref = load_dataset(_csv(df))
    np.testing.assert_array_equal(ds.codes, ref.codes)
    assert ds.states == ref.states


def test_class_column_detection_and_choice():
    df = _good_frame()
    df = df[["class", "age", "smoker", "grade"]]  # class first: found by name
    ds = load_dataset(df)
    assert ds.class_name == "class"
    df2 = df.rename(columns={"class": "outcome"})  # no known name: the last column
    ds2 = load_dataset(df2.assign(y=df2["outcome"]).drop(columns="outcome"))
    assert ds2.class_name == "y"
    ds3 = load_dataset(df, target="smoker")
    assert ds3.class_name == "smoker"


def test_median_discretization_fitted_on_training_rows():
    df = _good_frame(50)
    ds = load_dataset(df)
    j = ds.names.index("age")
    assert ds.arities[j] == 2
    med = np.median(df["age"])
    np.testing.assert_array_equal(ds.codes[:, j], (df["age"] > med).astype(int))
    # an encoder fitted on half the rows applies its own cut to the others
    enc = DiscreteEncoder().fit(df.iloc[:25].drop(columns="class"))
    codes = enc.transform(df.drop(columns="class"))
    cut = np.median(df["age"].iloc[:25])
    np.testing.assert_array_equal(codes[:, 0], (df["age"] > cut).astype(int))


def test_quantile_and_given_cut_points():
    df = _good_frame(90)
    ds = load_dataset(df, discretization="quantile", n_bins=3)
    j = ds.names.index("age")
    counts = np.bincount(ds.codes[:, j])
    assert len(counts) == 3 and counts.min() >= 25
    ds2 = load_dataset(df, discretization="cuts", cut_points={"age": [40, 60]})
    k = ds2.names.index("age")
    expect = np.searchsorted([40, 60], df["age"].to_numpy(), side="left")
    np.testing.assert_array_equal(ds2.codes[:, k], expect)
    assert ds2.states[k] == ["<= 40", "(40, 60]", "> 60"]


def test_unknown_category_at_prediction_is_missing():
    df = _good_frame()
    enc = DiscreteEncoder().fit(df.drop(columns="class"))
    new = df.drop(columns="class").iloc[:2].copy()
    new.loc[0, "smoker"] = "sometimes"
    codes = enc.transform(new)
    assert codes[0, 1] == -1 and codes[1, 1] >= 0


def test_id_column_dropped_with_notice():
    df = _good_frame()
    df.insert(0, "patient_id", np.arange(1000, 1000 + len(df)))
    ds = load_dataset(df)
    assert "patient_id" not in ds.names
    assert any("patient_id" in n for n in ds.notices)


def test_semicolon_csv_is_sniffed():
    df = _good_frame()
    raw = df.to_csv(index=False, sep=";").encode()
    ds = load_dataset(raw)
    assert ds.n_vars == 4


def test_subset_fingerprint_and_frame_roundtrip():
    ds = load_dataset(WBC)
    assert ds.fingerprint() == load_dataset(WBC).fingerprint()
    sub = ds.subset(np.arange(20))
    assert sub.n_rows == 20 and sub.fingerprint() != ds.fingerprint()
    frame = ds.to_frame()
    assert list(frame.columns) == ds.names and frame.iloc[0, -1] in ds.classes


def test_dataset_from_codes():
    codes = np.array([[0, 1, 1], [1, 0, 0], [1, 1, 1]])
    ds = dataset_from_codes(codes)
    assert ds.class_index == 2 and list(ds.arities) == [2, 2, 2]


# --- bad input: one test per case (issue #2) ------------------------------------------------------


def test_empty_file():
    with pytest.raises(DataError, match="empty"):
        load_dataset(b"")
    with pytest.raises(DataError, match="empty"):
        load_dataset(b"   \n\n")


def test_binary_bytes():
    with pytest.raises(DataError, match="not a CSV"):
        load_dataset(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)))


def test_undecodable_text_is_reported_or_read_sensibly():
    # cp1252 text (not UTF-8) is decoded, not crashed on
    raw = b"name,class\n" + "caf\xe9,a\n".encode("cp1252") * 6 + b"tea,b\n" * 6
    X, y, _ = prepare_frame(raw)
    assert X.iloc[0, 0] == "caf\xe9"


def test_fewer_than_two_columns():
    with pytest.raises(DataError, match="at least two"):
        load_dataset(b"class\na\nb\na\n")


def test_header_only():
    with pytest.raises(DataError, match="no data rows"):
        load_dataset(b"a,b,class\n")


def test_class_column_absent():
    with pytest.raises(DataError, match="not in the file"):
        load_dataset(_csv(_good_frame()), target="diagnosis_code")


def test_single_class():
    df = _good_frame().assign(**{"class": "benign"})
    with pytest.raises(DataError, match="single value"):
        load_dataset(df)


def test_too_many_class_values():
    df = _good_frame(120)
    df["class"] = [f"c{i}" for i in range(len(df))]
    with pytest.raises(DataError, match="more than 50"):
        load_dataset(df, drop_id_columns=False)


def test_too_many_categories():
    df = _good_frame(200)
    df["city"] = [f"city{i % 80}" for i in range(len(df))]
    with pytest.raises(DataError, match="at most 64"):
        load_dataset(df)


def test_fewer_than_ten_complete_rows():
    df = _good_frame(30)
    df.loc[5:, "smoker"] = np.nan
    with pytest.raises(DataError, match="at least 10 complete rows"):
        load_dataset(df)


def test_duplicate_column_names():
    raw = b"a,b,a,class\n" + b"1,2,3,x\n4,5,6,y\n" * 10
    with pytest.raises(DataError, match="more than once"):
        load_dataset(raw)
    df = pd.DataFrame([[1, 2, "x"]] * 12, columns=["a", "a", "class"])
    with pytest.raises(DataError, match="more than once"):
        load_dataset(df)


def test_column_entirely_missing():
    df = _good_frame()
    df["notes"] = np.nan
    with pytest.raises(DataError, match="entirely missing"):
        load_dataset(df)


def test_missing_file_and_folder():
    with pytest.raises(DataError, match="not found"):
        load_dataset(ROOT / "no_such_file.csv")
    with pytest.raises(DataError, match="folder"):
        load_dataset(ROOT)


def test_bad_parameters():
    with pytest.raises(DataError, match="discretization"):
        load_dataset(WBC, discretization="kmeans")
    with pytest.raises(DataError, match="between 2 and 20"):
        load_dataset(_good_frame(), discretization="quantile", n_bins=1)
    with pytest.raises(DataError, match="missing-value policy"):
        load_dataset(WBC, missing="impute")


def test_ragged_rows():
    raw = b"a,b,class\n1,2,x\n1,2,3,4,5\n" + b"1,2,y\n" * 12
    with pytest.raises(DataError, match="could not be read"):
        load_dataset(raw)


def test_read_table_rejects_unknown_objects():
    with pytest.raises(DataError, match="Cannot read"):
        read_table(12345)


def test_no_discretization_keeps_values_as_categories():
    df = _good_frame(40)
    df["age"] = np.round(df["age"] / 10) * 10  # a few distinct numeric values
    ds = load_dataset(df, discretization="none")
    j = ds.names.index("age")
    assert ds.arities[j] == df["age"].nunique()
    assert ds.encoder.columns_[0].kind == "categorical"
    many = _good_frame(200)  # 200 distinct real values -> too many categories: a clear error
    with pytest.raises(DataError, match="at most 64"):
        load_dataset(many, discretization="none")
