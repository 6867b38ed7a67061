"""Data layer: loading, discretization, encoding, and one test per kind of bad input."""

from __future__ import annotations

import io

import numpy as np
import pandas as pd
import pytest
from conftest import ROOT

import bnma_core.data.loaders as loaders_module
import bnma_core.data.reading as reading_module
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
    ds = load_dataset(WBC, missing="drop")
    assert ds.class_name == "class"
    assert ds.classes == ["benign", "malignant"]
    assert ds.n_rows == 683  # 699 rows, 16 with a missing bare_nuclei set aside
    assert ds.n_vars == 10
    assert ds.codes.dtype == np.int32
    assert (ds.codes >= 0).all()
    assert ds.arities[0] == 10  # clump thickness 1..10 stays categorical (ordinal score)
    assert any("missing" in n for n in ds.notices)
    # row numbers refer to the file: the 16 incomplete rows leave gaps
    assert len(ds.row_ids) == 683 and ds.row_ids[-1] == 698
    full = load_dataset(WBC)
    gone = np.setdiff1d(np.arange(699), ds.row_ids)
    assert len(gone) == 16 and (full.codes[gone] < 0).any(axis=1).all()
    np.testing.assert_array_equal(ds.codes, full.codes[ds.row_ids])
    assert ds.position_of_row(ds.row_ids[100]) == 100
    with pytest.raises(ValueError, match="not in this dataset"):
        ds.position_of_row(gone[0])


def test_default_keeps_rows_with_missing_values():
    """One default in the library, the CLI and the dashboard: keep incomplete rows."""
    ds = load_dataset(WBC)
    assert ds.n_rows == 699 and (ds.codes < 0).sum() == 16
    np.testing.assert_array_equal(ds.row_ids, np.arange(699))


def test_row_ids_skip_rows_without_a_class():
    df = _good_frame()
    df.loc[[3, 7], "class"] = None
    ds = load_dataset(df)
    assert ds.n_rows == len(df) - 2
    assert 3 not in ds.row_ids and 7 not in ds.row_ids and ds.row_ids[3] == 4
    sub = ds.subset(np.array([5, 6]))
    np.testing.assert_array_equal(sub.row_ids, ds.row_ids[[5, 6]])


def test_codes_from_states():
    ds = load_dataset(WBC)
    frame = ds.to_frame().iloc[:20]
    np.testing.assert_array_equal(ds.codes_from_states(frame), ds.X[:20])
    typed = pd.DataFrame([{f: None for f in ds.feature_names} | {ds.feature_names[0]: "10"}])
    codes = ds.codes_from_states(typed)
    assert codes[0, 0] == ds.feature_states[0].index("10") and (codes[0, 1:] == -1).all()
    with pytest.raises(DataError, match="Columns missing"):
        ds.codes_from_states(frame.drop(columns=ds.feature_names[0]))


def test_encoder_refit_keeps_kinds_and_states_refits_cuts():
    df = _good_frame()
    X = df.drop(columns="class")
    enc = DiscreteEncoder().fit(X)
    half = enc.refit(X.iloc[:25])
    ref = DiscreteEncoder(max_int_categories=0).fit(
        X[[c.name for c in enc.columns_ if c.kind == "continuous"]].iloc[:25])
    for c in half.columns_:
        old = next(o for o in enc.columns_ if o.name == c.name)
        assert c.kind == old.kind
        if c.kind == "continuous":
            np.testing.assert_array_equal(
                c.cuts, next(r for r in ref.columns_ if r.name == c.name).cuts)
        else:
            assert c.states == old.states
    assert enc.columns_[0].kind == "continuous"
    with pytest.raises(ValueError, match="fit"):
        DiscreteEncoder().refit(X)


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
        ds = load_dataset(src, missing="drop")
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
    assert ds2.states[k] == ["≤ 40", "40–60", "> 60"]


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


# --- the encoder labels each distinct value once; same codes as labelling cell by cell --------

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as hst  # noqa: E402

_CELLS = hst.one_of(hst.none(), hst.just(float("nan")), hst.sampled_from(["a", " a", "b", "?x"]),
                    hst.integers(-2, 3), hst.sampled_from([1.0, 2.5, -0.0]), hst.booleans())


@settings(max_examples=200, deadline=None)
@given(hst.lists(_CELLS, min_size=1, max_size=30))
def test_categorical_encoding_equals_cell_by_cell_labels(cells):
    from bnma_core.data import MISSING, ColumnCoding, _is_na, _label, _state_labels

    col = pd.Series(cells, dtype=object)
    states = _state_labels(col)
    ref_states = sorted({_label(v) for v in cells if not _is_na(v)},
                        key=lambda v: (0, float(v), v) if _is_float(v) else (1, 0.0, v))
    assert states == ref_states
    coding = ColumnCoding("c", "categorical", states)
    ref = [MISSING if _is_na(v) else states.index(_label(v)) for v in cells]
    np.testing.assert_array_equal(coding.encode(col), ref)


def _is_float(v):
    try:
        float(v)
        return True
    except ValueError:
        return False


# --- issue 14 item 13: input a user really has ---------------------------------------------------


def _european(n: int = 40, seed: int = 0) -> bytes:
    """A semicolon-separated file with decimal commas, an ID, a constant and a class."""
    rng = np.random.default_rng(seed)
    weight = rng.normal(70, 10, n).round(1)
    lines = ["id;weight;site;centre;class"]
    lines += [f"{1000 + i};{str(w).replace('.', ',')};{'ab'[i % 2]};Lyon;{'xy'[int(w > 70)]}"
              for i, w in enumerate(weight)]
    return ("\n".join(lines) + "\n").encode()


def test_identifier_columns_are_text_row_counters_or_named_so():
    """Every value distinct is not enough for a number: an all-distinct income is a
    measurement (kept, binned); a row counter or a column named like an identifier is not."""
    rng = np.random.default_rng(3)
    df = _good_frame(60).assign(
        income=rng.permutation(np.arange(60) * 997 + 20_000),   # all distinct, not consecutive
        counter=rng.permutation(np.arange(60)) + 1,              # 1..60: counts the rows
        PatientNo=rng.permutation(np.arange(60) * 13 + 5),       # named as an identifier
        ref_text=[f"r{i}x" for i in range(60)],                  # text, never repeated
        acid=rng.permutation(np.arange(60) * 7))                 # "id" inside a word only
    ds = load_dataset(df)
    assert {"income", "acid"} <= set(ds.names) and ds.arities[ds.names.index("income")] == 2
    assert not {"counter", "PatientNo", "ref_text"} & set(ds.names)
    note = next(n for n in ds.notices if "Identifier" in n)
    assert all(c in note for c in ("counter", "PatientNo", "ref_text"))
    assert "income" not in note and "acid" not in note
    kept = load_dataset(df, drop_id_columns=False)
    assert {"counter", "PatientNo", "ref_text"} <= set(kept.names)


def test_semicolon_and_decimal_comma_detected_and_explained():
    ds = load_dataset(_european())
    assert "weight" in ds.names and ds.encoder.columns_[0].kind == "continuous"
    # the median split of the real numbers (a comma read as text would give 40 categories)
    assert ds.arities[ds.names.index("weight")] == 2
    notes = " ".join(ds.notices)
    assert "semicolon" in notes and "decimal comma" in notes
    assert "id" not in ds.names and "Identifier" in notes  # every value distinct
    assert "centre" not in ds.names and "same value" in notes  # constant column
    # the user can override what was detected
    t = read_table(_european(), sep=";", decimal=".")
    assert t.attrs["decimal"] == "." and t["weight"].str.contains(",").all()
    with pytest.raises(DataError, match="separator"):
        read_table(_european(), sep="|")


def test_comma_separated_file_keeps_point_decimals():
    t = read_table(b"a,b,class\n1.5,2,x\n2.5,3,y\n")
    assert t.attrs["sep"] == "," and t.attrs["decimal"] == "." and t["a"].tolist() == ["1.5",
                                                                                       "2.5"]


def test_drop_columns_leaves_them_out_with_a_notice():
    ds = load_dataset(_european(), drop_columns=["site"])
    assert "site" not in ds.names and any("as you asked" in n for n in ds.notices)
    with pytest.raises(DataError, match="not in the file"):
        load_dataset(_european(), drop_columns=["nope"])


def test_numeric_class_with_many_values_warns_and_can_be_binned():
    from bnma_core.data import numeric_class_warning

    rng = np.random.default_rng(1)
    age = rng.integers(20, 65, 200)
    df = pd.DataFrame({"smoker": rng.choice(["yes", "no"], 200),
                       "bmi": rng.normal(25, 3, 200).round(1), "age": age})
    ds = load_dataset(_csv(df), "age")
    assert len(ds.classes) > 30 and "age" in numeric_class_warning(ds)
    binned = load_dataset(_csv(df), "age", class_bins=3)
    assert len(binned.classes) == 3 and numeric_class_warning(binned) == ""
    assert binned.classes[0].startswith("≤ ") and binned.classes[-1].startswith("> ")
    counts = np.bincount(binned.y)
    assert counts.min() > 50  # equal-frequency groups
    assert numeric_class_warning(load_dataset(WBC)) == ""


def test_bin_labels_are_readable():
    from bnma_core.data import _cut_labels

    assert _cut_labels(np.array([3.5, 7.0])) == ["≤ 3.5", "3.5–7", "> 7"]
    assert _cut_labels(np.array([223.6667, 262.1234])) == ["≤ 223.7", "223.7–262.1", "> 262.1"]
    # rounding never merges two different cut points
    labels = _cut_labels(np.array([1.0001, 1.0002]))
    assert len(set(labels)) == 3


def test_select_features_and_informative_ranking():
    from bnma_core.scores import class_mutual_informations, informative_features

    ds = load_dataset(WBC)
    rank = informative_features(ds)
    assert list(rank.columns) == ["feature", "MI with class (bits)", "states"]
    mi = class_mutual_informations(ds.X, ds.y, ds.arities[ds.feature_indices], 2, base=2.0)
    assert rank["MI with class (bits)"].iloc[0] == pytest.approx(mi.max(), abs=1e-12)
    assert rank["MI with class (bits)"].is_monotonic_decreasing
    top = rank["feature"].head(3).tolist()
    small = ds.select_features(top)
    assert small.feature_names == [n for n in ds.feature_names if n in top]
    assert small.class_name == "class" and small.n_rows == ds.n_rows
    j = ds.names.index(top[0])
    np.testing.assert_array_equal(small.codes[:, small.names.index(top[0])], ds.codes[:, j])
    np.testing.assert_array_equal(small.y, ds.y)
    with pytest.raises(DataError, match="Not features"):
        ds.select_features(["class"])


def _big_csv(tmp_path, leading_space=False, n=40_000):
    """A > 1 MB CSV (the size read by pyarrow first) with categorical, integer, continuous,
    boolean-like and missing values."""
    rng = np.random.default_rng(0)
    sp = " " if leading_space else ""
    cat = rng.choice(["low", "mid", "high", "?", "NA", ""], n)
    integ = rng.integers(1, 6, n).astype(str)
    cont = np.round(rng.normal(10, 3, n), 3).astype(str)
    flag = rng.choice(["TRUE", "FALSE"], n)
    const = np.full(n, "same")
    cls = rng.choice(["yes", "no"], n)
    lines = ["cat,integ,cont,flag,const,class"] + [
        f"{a},{sp}{b},{c},{d},{e},{f}" for a, b, c, d, e, f in zip(cat, integ, cont, flag,
                                                                     const, cls)]
    path = tmp_path / "big.csv"
    path.write_text("\n".join(lines) + "\n")
    assert path.stat().st_size >= reading_module.PYARROW_MIN_BYTES
    return path


@pytest.mark.parametrize("leading_space", [False, True])
def test_large_csv_pyarrow_path_equals_c_engine(tmp_path, monkeypatch, leading_space):
    """Large files are read by pyarrow (categorical columns) unless that could differ from
    pandas' C engine; either way the dataset is the one the C engine gives."""
    path = _big_csv(tmp_path, leading_space)
    fast = load_dataset(path, target="class")
    # pyarrow read it (categorical columns) unless a value starts with a space
    assert isinstance(fast.raw["cat"].dtype, pd.CategoricalDtype) != leading_space
    monkeypatch.setattr(reading_module, "PYARROW_MIN_BYTES", 10**12)
    slow = load_dataset(path, target="class")
    np.testing.assert_array_equal(fast.codes, slow.codes)
    assert fast.names == slow.names and fast.states == slow.states
    assert fast.notices == slow.notices
    np.testing.assert_array_equal(fast.row_ids, slow.row_ids)
    # the raw values (used to refit discretization per fold) agree as text
    pd.testing.assert_frame_equal(fast.raw.astype(object), slow.raw.astype(object),
                                  check_dtype=False)


def test_large_csv_short_row_falls_back_to_c_engine(tmp_path, monkeypatch):
    """pyarrow refuses a row with too few fields; the C engine fills it with missing values."""
    path = _big_csv(tmp_path)
    with open(path, "a") as fh:
        fh.write("low,1,2.5,TRUE\n")
    fast = load_dataset(path, target="class")
    monkeypatch.setattr(reading_module, "PYARROW_MIN_BYTES", 10**12)
    slow = load_dataset(path, target="class")
    np.testing.assert_array_equal(fast.codes, slow.codes)
    assert fast.notices == slow.notices


# --- the fast reading path (pyarrow, categoricals factorized once) equals the C engine --------

_POOLS = [["a", "b", "c"], ["1", "2", "3", "01"], ["1.5", "2.25", "-3", "4e1", "7"],
          ["2,5", "3,75", "1", "-0,5"], ["a", "1", "2.5", "TRUE", "true"],
          ["x,y", 'say "hi"', "é", "a b"], ["a ", "b", "a"]]
_MISSING_TOKENS = ["", "?", "NA", "N/A", "null", "nan", "#N/A"]


@hst.composite
def _tricky_csv(draw):
    sep = draw(hst.sampled_from([",", ";"]))
    n_cols = draw(hst.integers(1, 4))
    n_rows = draw(hst.integers(8, 40))
    pools = [draw(hst.sampled_from(_POOLS)) for _ in range(n_cols)]
    holes = set(draw(hst.lists(hst.tuples(hst.integers(0, n_rows - 1),
                                           hst.integers(0, n_cols)), max_size=8)))
    lines = [sep.join([f"c{j}" for j in range(n_cols)] + ["class"])]
    for i in range(n_rows):
        row = []
        for j in range(n_cols):
            v = draw(hst.sampled_from(_MISSING_TOKENS if (i, j) in holes else pools[j]))
            if sep in v or '"' in v or draw(hst.booleans()):
                v = '"' + v.replace('"', '""') + '"'
            row.append(v)
        row.append("NA" if (i, n_cols) in holes else draw(hst.sampled_from(["yes", "no"])))
        lines.append(sep.join(row))
    return ("\n".join(lines) + "\n").encode()


def _load_or_error(source, **kw):
    try:
        return load_dataset(source, target="class", **kw)
    except DataError as exc:
        return str(exc)


@settings(max_examples=150, deadline=None)
@given(_tricky_csv(), hst.sampled_from(["median", "none"]), hst.sampled_from(["keep", "drop"]))
def test_fast_reading_path_equals_c_engine(monkeypatch_module, raw, discretization, missing):
    """Mixed numeric/text columns, missing tokens, decimal commas and quoted fields: the pyarrow
    path with one factorization per column gives the dataset (or the error) that pandas' C
    engine with cell-level factorization gives."""
    from contextlib import nullcontext

    kw = dict(discretization=discretization, missing=missing)
    monkeypatch_module.setattr(reading_module, "PYARROW_MIN_BYTES", 0)
    fast = _load_or_error(raw, **kw)
    monkeypatch_module.setattr(reading_module, "PYARROW_MIN_BYTES", 10**12)
    monkeypatch_module.setattr(loaders_module, "_factorizing_once", nullcontext)
    slow = _load_or_error(raw, **kw)
    monkeypatch_module.undo()
    if isinstance(slow, str):
        assert fast == slow
        return
    assert not isinstance(fast, str), fast
    np.testing.assert_array_equal(fast.codes, slow.codes)
    np.testing.assert_array_equal(fast.missing_mask(), slow.missing_mask())
    np.testing.assert_array_equal(fast.arities, slow.arities)
    np.testing.assert_array_equal(fast.row_ids, slow.row_ids)
    assert fast.names == slow.names and fast.states == slow.states
    assert fast.notices == slow.notices
    assert [c.kind for c in fast.encoder.columns_] == [c.kind for c in slow.encoder.columns_]
    pd.testing.assert_frame_equal(fast.raw.astype(object), slow.raw.astype(object),
                                  check_dtype=False)


@pytest.fixture(scope="module")
def monkeypatch_module():
    with pytest.MonkeyPatch.context() as mp:
        yield mp


def test_fast_reading_path_is_taken_on_tricky_input(monkeypatch):
    """The comparison above is not vacuous: quoted fields, missing tokens and decimal commas
    are read by pyarrow (categorical raw columns), not handed back to the C engine."""
    monkeypatch.setattr(reading_module, "PYARROW_MIN_BYTES", 0)
    lines = ["c0;c1;class"] + [f'"{"ab"[i % 2]}";{i % 3},5;{["yes", "no"][i % 2]}'
                               for i in range(20)] + ['NA;"?";yes']
    ds = load_dataset(("\n".join(lines) + "\n").encode(), target="class")
    assert isinstance(ds.raw["c0"].dtype, pd.CategoricalDtype)
    assert ds.encoder.columns_[1].kind == "continuous" and ds.missing_mask().sum() == 2
