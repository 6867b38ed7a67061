"""The library's input limits on a shared server: a file's shape (columns, rows, values) and
the bin counts are refused with a plain message before anything large is parsed or
allocated, and a wide header is read whole."""

from __future__ import annotations

import time

import numpy as np
import pandas as pd
import pytest

import bnma_core.data.loaders as loaders_module
import bnma_core.data.preparation as preparation_module
import bnma_core.data.reading as reading_module
from bnma_core.data import DataError, check_class_bins, load_dataset, read_table
from bnma_core.datasets import bundled_path
from bnma_core.limits import INPUT_RANGES, MAX_CLASS_VALUES, MAX_COLUMNS

WBC = bundled_path("wbc.csv")


def _wide(n_columns: int, n_rows: int, names: list[str] | None = None) -> bytes:
    names = names or [f"g{j}" for j in range(n_columns - 1)] + ["class"]
    rng = np.random.default_rng(0)
    lines = [",".join(names)]
    for r in range(n_rows):
        lines.append(",".join(map(str, rng.integers(0, 3, n_columns - 1))) + "," + "ab"[r % 2])
    return ("\n".join(lines) + "\n").encode()


# --- a file's shape --------------------------------------------------------------------------


def test_many_columns_and_few_rows_are_refused_from_the_header_at_once():
    raw = _wide(60_000, 3)  # 60,000 columns x 3 rows: ~0.8 MB
    start = time.perf_counter()
    with pytest.raises(DataError, match=f"60,000 columns; at most {MAX_COLUMNS:,}"):
        load_dataset(raw)
    assert time.perf_counter() - start < 2.0  # was 80 s (25 s to read, 55 s to encode)


def test_too_few_rows_are_refused_before_the_file_is_parsed(monkeypatch):
    def no_parse(*args, **kwargs):
        raise AssertionError("the table was parsed")

    monkeypatch.setattr(pd, "read_csv", no_parse)
    with pytest.raises(DataError, match="only 3 data row.*at least 10 complete rows"):
        load_dataset(_wide(50, 3))
    # reading a table for its columns (the Data page's column lists) takes any number of rows
    monkeypatch.undo()
    assert read_table(_wide(50, 3)).shape == (3, 50)


def test_too_many_values_are_refused_from_the_beginning_of_a_large_file(monkeypatch):
    monkeypatch.setattr(reading_module, "PYARROW_MIN_BYTES", 0)  # the large-file path
    monkeypatch.setattr(reading_module, "MAX_CELLS", 2_000)
    monkeypatch.setattr(reading_module, "HEAD_BYTES", 512)  # the beginning: a few rows

    def no_arrow(*args, **kwargs):
        raise AssertionError("the file was parsed")

    monkeypatch.setattr(reading_module, "_read_pyarrow", no_arrow)
    with pytest.raises(DataError, match=r"about [\d,]+ rows x 10 columns.*at most 2,000"):
        read_table(_wide(10, 1_000))


def test_too_many_values_are_refused_before_encoding(monkeypatch):
    monkeypatch.setattr(reading_module, "MAX_CELLS", 2_000)

    def no_encoding(*args, **kwargs):
        raise AssertionError("the table was encoded")

    monkeypatch.setattr(loaders_module, "_encode_transposed", no_encoding)
    with pytest.raises(DataError, match="1,000 rows x 10 columns = 10,000 values"):
        load_dataset(_wide(10, 1_000))


def test_the_whole_header_line_is_read_however_wide(monkeypatch, tmp_path):
    """A header longer than the first 64 KiB read of a large file: cut there, its last name
    was empty ("A column has no name") or a prefix of another ("appear more than once")."""
    monkeypatch.setattr(reading_module, "PYARROW_MIN_BYTES", 0)
    names = [f"measurement_with_a_long_name_{j}" for j in range(2_500)] + ["class"]
    pad = reading_module.HEAD_BYTES - len(",".join(names)[: reading_module.HEAD_BYTES]
                                       .rpartition(",")[0]) - 1
    names[0] += "x" * pad  # the 64 KiB boundary falls just after a comma
    assert ",".join(names)[reading_module.HEAD_BYTES - 1] == ","
    raw = _wide(len(names), 12, names)
    assert len(raw.partition(b"\n")[0]) > reading_module.HEAD_BYTES
    for source in (raw, tmp_path / "wide.csv"):
        if not isinstance(source, bytes):
            source.write_bytes(raw)
        df = read_table(source)
        assert list(df.columns) == names and len(df) == 12


# --- bin counts -------------------------------------------------------------------------------


def test_absurd_class_bins_are_refused_before_any_bin_is_computed(monkeypatch):
    def no_quantile(*args, **kwargs):
        raise AssertionError("bins were computed")

    monkeypatch.setattr(preparation_module, "_cut_points", no_quantile)
    for k in (30_000_000, MAX_CLASS_VALUES + 1, -5):
        with pytest.raises(DataError, match=f"between 2 and {MAX_CLASS_VALUES}"):
            load_dataset(WBC, "clump_thickness", class_bins=k)
    assert check_class_bins(0) == 0 and check_class_bins(7) == 7


def test_absurd_feature_bins_are_refused_before_the_file_is_read(monkeypatch):
    def no_read(*args, **kwargs):
        raise AssertionError("the file was read")

    monkeypatch.setattr(preparation_module, "read_table", no_read)
    for k in (99, 30_000_000, 1, -3):
        with pytest.raises(DataError, match="between 2 and 20"):
            load_dataset(WBC, discretization="quantile", n_bins=k)


def test_input_ranges_say_what_is_wrong_in_one_sentence():
    rows = INPUT_RANGES["rows"]
    assert rows.accepts(1000) and rows.accepts("50000") and not rows.accepts(3_000_000)
    assert rows.problem(3_000_000) == ("The number of rows to sample must be between 50 and "
                                       "50,000 (got 3,000,000).")
    assert "whole number" in INPUT_RANGES["seed"].problem("abc")
    assert INPUT_RANGES["cbins"].accepts(0) and not INPUT_RANGES["cbins"].accepts(1)
    assert not INPUT_RANGES["seed"].accepts(-1)
