"""Reading a table: a path, bytes, a file object or a DataFrame -> a DataFrame of text.

:func:`read_table` decodes the text (UTF-8 with or without BOM, else cp1252), sniffs the column
separator and a decimal comma, checks the header, and parses with pandas' C engine or, for files
of :data:`PYARROW_MIN_BYTES` and more, with pyarrow's reader into categoricals (the same table
in a fraction of the time). What was detected is told in ``df.attrs["notices"]``.
"""

from __future__ import annotations

import csv
import io
import os
import re
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..limits import MAX_CELLS, MAX_COLUMNS, MAX_ROWS
from .base import NA_STRINGS, DataError
from .labels import _FACTORIZED


def _decode(raw: bytes) -> str:
    """The file's text: UTF-8 (with or without BOM), else cp1252."""
    if not raw or not raw.strip():
        raise DataError("The file is empty: it has no header and no rows.")
    if b"\x00" in raw[:4096]:
        raise DataError(
            "This file is not a CSV text file (it contains binary data). "
            "Please export your table as CSV (comma-separated values)."
        )
    for enc in ("utf-8-sig", "cp1252"):
        try:
            return raw.decode(enc)
        except UnicodeDecodeError:
            continue
    raise DataError("The file's text could not be decoded; save it as UTF-8 CSV and try again.")


SEPARATORS = {",": "comma", ";": "semicolon", "\t": "tab"}
DECIMAL_MARKS = {".": "point (3.5)", ",": "comma (3,5)"}
_DECIMAL_COMMA = re.compile(r"^\s*[+-]?\d*,\d+\s*$")
_INTEGER = re.compile(r"^\s*[+-]?\d+\s*$")


def _decimal_comma_columns(df: pd.DataFrame) -> list[str]:
    """Columns whose every value is a number written with a decimal comma (``3,5``), at
    least one of them with the comma."""
    out = []
    for name in df.columns:
        vals = df[name].dropna().astype(str)
        if len(vals) == 0:
            continue
        comma = vals.str.match(_DECIMAL_COMMA)
        if comma.any() and (comma | vals.str.match(_INTEGER)).all():
            out.append(name)
    return out


def _head_lines(text: str, k: int = 21) -> list[str]:
    """The first ``k`` non-blank lines (without splitting the whole text)."""
    out: list[str] = []
    start = 0
    while start < len(text) and len(out) < k:
        end = text.find("\n", start)
        end = len(text) if end < 0 else end
        ln = text[start:end].rstrip("\r")
        if ln.strip():
            out.append(ln)
        start = end + 1
    return out


def _na_strings() -> list[str]:
    """The strings read as missing: ours plus pandas' defaults (``keep_default_na``)."""
    try:
        from pandas._libs.parsers import STR_NA_VALUES
    except ImportError:  # pragma: no cover - private pandas name
        STR_NA_VALUES = set()
    return sorted(set(NA_STRINGS) | set(STR_NA_VALUES))


def _read_pyarrow(text: str, raw: bytes | Path | None, sep: str, header: list[str]
                  ) -> pd.DataFrame | None:
    """A large CSV through pyarrow's reader, every column as dictionary-encoded text (read as
    pandas categoricals, so later steps factorize nothing): 500,000 x 37 in about a quarter of
    the time of ``read_csv(dtype=str)``. Returns None — and the caller uses pandas' C engine —
    unless the result is certainly the same: pyarrow installed, the header on the first line
    and unquoted, no value starting with a space (the C engine skips those spaces), every row
    with the header's number of fields."""
    if raw is None or not text[:1].strip() or '"' in text[: text.find("\n")]:
        return None
    try:
        import pyarrow as pa
        import pyarrow.compute as pc
        import pyarrow.csv as pacsv
    except ImportError:  # pragma: no cover - pyarrow is a dependency
        return None
    names = [f"c{j}" for j in range(len(header))]
    try:  # (pyarrow skips a UTF-8 byte-order mark itself)
        table = pacsv.read_csv(
            str(raw) if isinstance(raw, Path) else io.BytesIO(raw),
            read_options=pacsv.ReadOptions(column_names=names, skip_rows=1),
            parse_options=pacsv.ParseOptions(delimiter=sep),
            convert_options=pacsv.ConvertOptions(  # missing-value tokens: in the dictionary
                column_types={c: pa.dictionary(pa.int32(), pa.string()) for c in names},
                null_values=[], strings_can_be_null=False))
    except (pa.ArrowInvalid, ValueError):
        return None
    cols = {}
    missing = _na_strings()
    for name, chunked in zip(header, table.columns):
        chunked = chunked.unify_dictionaries()
        values = chunked.chunk(0).dictionary if chunked.num_chunks else None
        if values is not None and pc.any(pc.match_substring_regex(values, r"^\s")).as_py():
            return None  # (RE2's \s: space, tab, newlines; the C engine skips spaces)
        cols[name] = _arrow_categorical(chunked, table.num_rows, missing)
    del table
    return pd.DataFrame(cols, copy=False)


def _code_dtype(n_categories: int) -> type:
    """The dtype pandas gives the codes of a Categorical with this many categories."""
    return np.int8 if n_categories < 128 else np.int16 if n_categories < 32768 else np.int32


def _arrow_categorical(chunked: Any, n_rows: int, missing: list[str]) -> pd.Categorical:
    """A pandas Categorical of a dictionary-encoded pyarrow column whose chunks share one
    dictionary, as ``to_pandas`` makes it, written chunk by chunk into the final codes (no
    int32 copy of the whole column). The dictionary's values in ``missing`` (the missing-value
    tokens, as the C engine's ``na_values``) become missing values, code ``-1``: matched once
    per distinct value rather than by pyarrow's reader in every cell."""
    import pyarrow.compute as pc

    if chunked.num_chunks:
        values = pd.Index(chunked.chunk(0).dictionary.to_pandas())
    else:
        values = pd.Index(pd.array([], dtype="str"))
    codes = np.empty(n_rows, dtype=_code_dtype(len(values)))
    start = 0
    for chunk in chunked.chunks:
        idx = chunk.indices
        if idx.null_count:
            idx = pc.fill_null(idx, -1)
        codes[start:start + len(idx)] = idx.to_numpy()
        start += len(idx)
    categories = values
    is_na = values.isin(missing)
    if is_na.any():
        categories = values[~is_na]
        remap = np.full(len(values) + 1, -1, dtype=_code_dtype(len(categories)))
        remap[:-1][~is_na] = np.arange(len(categories))
        codes = remap[codes]  # code -1 picks the trailing -1
    cat = pd.Categorical.from_codes(codes, dtype=pd.CategoricalDtype(categories),
                                    validate=False)
    memo = _FACTORIZED.get()
    if memo is not None and cat.codes.base is codes:  # every category occurs: pyarrow's
        # dictionaries hold the values read, so the factorization is the codes themselves
        view = cat.codes
        memo[(view.__array_interface__["data"][0], view.shape, view.strides)] = (
            codes, cat.dtype, (view, list(categories)))
    return cat


PYARROW_MIN_BYTES = 1_000_000
"""Files at least this large are tried with pyarrow's reader first (:func:`_read_pyarrow`)."""


_TOO_BIG_REMEDY = ("Use a part of the table: leave out columns and rows you do not need in your "
                   "spreadsheet, save it as CSV and try again.")


def _check_size(n_rows: int, n_columns: int, estimated: bool = False) -> None:
    """:class:`DataError` when a table of ``n_rows`` x ``n_columns`` exceeds :data:`MAX_ROWS`
    or :data:`MAX_CELLS` (``estimated``: the rows are estimated from the file's beginning)."""
    about = "about " if estimated else ""
    if n_rows > MAX_ROWS:
        raise DataError(f"The file has {about}{n_rows:,} rows; at most {MAX_ROWS:,} are "
                        f"supported. {_TOO_BIG_REMEDY}")
    if n_rows * n_columns > MAX_CELLS:
        raise DataError(f"The file has {about}{n_rows:,} rows x {n_columns:,} columns = "
                        f"{n_rows * n_columns:,} values; at most {MAX_CELLS:,} are supported. "
                        f"{_TOO_BIG_REMEDY}")


def _check_shape(header: list[str], text: str, raw: bytes | Path | None, min_rows: int
                 ) -> None:
    """Refuse a table too wide, too short or too large from its header and beginning, before
    it is parsed: the columns of ``header``, the rows of ``text`` (the whole file: fewer than
    ``min_rows`` data rows are refused; or with ``raw`` its beginning, from which the rows of
    the whole file are estimated)."""
    if len(header) > MAX_COLUMNS:
        raise DataError(f"The file has {len(header):,} columns; at most {MAX_COLUMNS:,} are "
                        "supported. Keep the class and the columns you need in your "
                        "spreadsheet, save it as CSV and try again.")
    if raw is None and len(header) > 1:  # the whole text (one column: refused later)
        n_data = len(_head_lines(text, min_rows + 1)) - 1
        if 0 < n_data < min_rows:  # (more lines than rows if a quoted cell has a line
            raise DataError(  # break: fewer lines than the minimum are fewer rows)
                f"The file has only {n_data} data row(s); at least {min_rows} complete rows "
                "are needed to learn anything. Add rows and try again.")
        return
    if raw is None:
        return
    size = raw.stat().st_size if isinstance(raw, Path) else len(raw)
    head = len(text.encode("utf-8", errors="ignore"))
    first = len(text.partition("\n")[0].encode("utf-8", errors="ignore")) + 1
    n_rows = text.count("\n") + (not text.endswith("\n")) - 1
    if size > head and n_rows > 0:  # the beginning holds the header and some rows
        _check_size(int((size - first) / ((head - first) / n_rows)), len(header),
                    estimated=True)


def _parse_csv_text(text: str, sep: str | None = None, decimal: str | None = None,
                    raw: bytes | Path | None = None, min_rows: int = 0) -> pd.DataFrame:
    """Parse CSV text. With ``raw`` (a large file: its bytes or its path) ``text`` is only its
    beginning (for the separator and the header): pyarrow reads ``raw``, and the whole text
    is read and decoded only if the C engine has to read it instead. The shape limits are
    checked on the header and the beginning first (:func:`_check_shape`)."""
    lines = _head_lines(text)
    if not lines:
        raise DataError("The file is empty: it has no header and no rows.")
    if sep is not None and sep not in SEPARATORS:
        raise DataError(f"Unknown column separator {sep!r}; use a comma, semicolon or tab.")
    if decimal is not None and decimal not in DECIMAL_MARKS:
        raise DataError(f"Unknown decimal mark {decimal!r}; use '.' or ','.")
    notices: list[str] = []
    if sep is None:
        try:
            dialect = csv.Sniffer().sniff(lines[0] if len(lines) == 1
                                          else "\n".join(lines[:20]), delimiters=",;\t")
            sep = dialect.delimiter
        except csv.Error:
            sep = ","
        if sep != ",":
            notices.append(f"Columns are separated by a {SEPARATORS[sep]} (detected).")
    header = next(csv.reader([lines[0]], delimiter=sep))
    header = [h.strip() for h in header]
    dupes = sorted(h for h, n in Counter(header).items() if n > 1)
    if dupes:
        raise DataError(
            "Some column names appear more than once: "
            + ", ".join(repr(d) for d in dupes)
            + ". Give every column a distinct name."
        )
    if any(h == "" for h in header):
        raise DataError("A column has no name in the header row; give every column a name.")
    _check_shape(header, text, raw, min_rows)
    df = _read_pyarrow(text, raw, sep, header)
    try:
        if df is None:
            if raw is not None:
                text = _decode(raw.read_bytes() if isinstance(raw, Path) else raw)
            df = pd.read_csv(io.StringIO(text), sep=sep, na_values=NA_STRINGS,
                             keep_default_na=True, skipinitialspace=True, dtype=str)
    except (pd.errors.ParserError, pd.errors.EmptyDataError, ValueError) as exc:
        raise DataError(f"The file could not be read as a CSV table: {exc}".strip()) from None
    df.columns = [str(c).strip() for c in df.columns]
    _check_size(len(df), df.shape[1])
    if 0 < len(df) < min_rows and df.shape[1] > 1:
        raise DataError(f"The file has only {len(df)} data row(s); at least {min_rows} "
                        "complete rows are needed to learn anything. Add rows and try again.")
    if decimal is None:  # European spreadsheets: "3,5" means 3.5 when ';' separates columns
        commas = _decimal_comma_columns(df) if sep != "," else []
        decimal = "," if commas else "."
        if commas:
            notices.append("Numbers are written with a decimal comma (3,5 = 3.5) in: "
                           + ", ".join(commas[:8]) + ("..." if len(commas) > 8 else "")
                           + " (detected).")
    if decimal == ",":
        for name in _decimal_comma_columns(df):
            df[name] = df[name].str.replace(",", ".", regex=False)
    df.attrs.update(sep=sep, decimal=decimal, notices=notices)
    return df


def read_table(source: Any, sep: str | None = None, decimal: str | None = None,
               min_rows: int = 0) -> pd.DataFrame:
    """Read a table from a path, raw bytes, a file-like object or a DataFrame.

    Values are returned as text (or the DataFrame's own values); typing happens in
    :func:`infer_column_kinds`. ``sep`` (``","``, ``";"``, tab) and ``decimal`` (``"."`` or
    ``","``) default to detection: a decimal comma is recognised when columns are not
    comma-separated and every value of a column is a number like ``3,5``. ``df.attrs`` holds
    the ``sep`` and ``decimal`` used and plain-language ``notices`` of what was detected.

    The shape limits of :mod:`bnma_core.limits` (columns, rows, values) are checked on the
    header and the file's beginning before the table is parsed, and again on the table;
    a file with fewer than ``min_rows`` data rows is refused before it is parsed.

    Raises
    ------
    DataError
        Empty, binary or unparsable input, duplicate or empty column names, a table outside
        the shape limits.
    """
    if isinstance(source, pd.DataFrame):
        if source.columns.duplicated().any():
            d = sorted(set(map(str, source.columns[source.columns.duplicated()])))
            raise DataError("Some column names appear more than once: " + ", ".join(d) + ".")
        df = source.copy()
        df.columns = [str(c) for c in df.columns]
        return df
    if isinstance(source, (str, os.PathLike)):
        path = Path(source)
        if not path.exists():
            raise DataError(f"File not found: {path}")
        if path.is_dir():
            raise DataError(f"{path} is a folder, not a CSV file.")
        if path.stat().st_size >= PYARROW_MIN_BYTES:  # pyarrow reads the file itself
            with path.open("rb") as fh:
                parsed = _parse_large(_head_bytes(fh), sep, decimal, path, min_rows)
            if parsed is not None:
                return parsed
        raw = path.read_bytes()
    elif isinstance(source, (bytes, bytearray)):
        raw = bytes(source)
    elif hasattr(source, "read"):
        raw = source.read()
        if isinstance(raw, str):
            raw = raw.encode("utf-8")
    else:
        raise DataError(f"Cannot read data from an object of type {type(source).__name__}.")
    if len(raw) >= PYARROW_MIN_BYTES:
        parsed = _parse_large(_head_bytes(io.BytesIO(raw)), sep, decimal, raw, min_rows)
        if parsed is not None:
            return parsed
    return _parse_csv_text(_decode(raw), sep, decimal, min_rows=min_rows)


HEAD_BYTES = 65536
"""A large file's beginning read for its separator and header: at least this many bytes, and
always the whole header line (however wide the table)."""


def _head_bytes(fh: Any) -> bytes:
    """The beginning of a binary file: :data:`HEAD_BYTES`, extended to the end of the first
    line that is not blank (the header), and then to the end of a line."""
    head = fh.read(HEAD_BYTES)
    while head and b"\n" not in head.lstrip(b"\r\n \t"):
        more = fh.read(HEAD_BYTES)
        if not more:
            return head
        head += more
    return head


def _parse_large(head_raw: bytes, sep: str | None, decimal: str | None, raw: bytes | Path,
                 min_rows: int = 0) -> pd.DataFrame | None:
    """A large file (its bytes or its path) parsed from its beginning ``head_raw`` (separator,
    header) and then by pyarrow; None when its beginning is binary or blank."""
    if b"\x00" in head_raw[:4096]:
        return None
    head = head_raw.decode("utf-8-sig", errors="ignore")
    if not head.strip():
        return None
    return _parse_csv_text(head[: head.rfind("\n") + 1] or head, sep, decimal, raw, min_rows)
