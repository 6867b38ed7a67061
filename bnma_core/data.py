"""CSV -> :class:`DiscreteDataset`: validation, discretization, encoding, missing values.

Everything downstream (scores, structures, classifiers) sees small integer codes only:
``codes[r, v]`` in ``0 .. arities[v]-1`` and ``-1`` for a missing value (DESIGN §2).

Bad input raises :class:`DataError` with a message written for the person who chose the file,
never a traceback and never a silently wrong result.
"""

from __future__ import annotations

import csv
import hashlib
import io
import os
import re
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from bnma_core.limits import MAX_BINS, MAX_CELLS, MAX_CLASS_VALUES, MAX_COLUMNS, MAX_ROWS

CODE_DTYPE = np.int32
"""dtype of every code array handed to kernels (one dtype = one numba specialisation)."""

MISSING = -1
MAX_CATEGORIES = 64
MIN_COMPLETE_ROWS = 10
MAX_INT_CATEGORIES = 10
"""An integer column with at most this many distinct values is categorical (e.g. WBC's 1-10
scores); with more it is treated as continuous and discretized."""

CLASS_COLUMN_NAMES = ("class", "target", "label", "diagnosis")
NA_STRINGS = ["", "?", "NA", "N/A", "NaN", "nan", "null", "NULL", "None"]
DISCRETIZATIONS = ("median", "quantile", "cuts", "none")
MISSING_POLICIES = ("keep", "drop")
"""Dataset-level missing-value policy (rows): keep rows with a missing value, or drop them."""


class DataError(ValueError):
    """A problem with the user's data, with a message meant for the user."""


# --------------------------------------------------------------------------------------------
# Reading
# --------------------------------------------------------------------------------------------


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


# --------------------------------------------------------------------------------------------
# Column typing, discretization and encoding
# --------------------------------------------------------------------------------------------


def _as_numeric(col: pd.Series) -> pd.Series | None:
    """The column as floats if every non-missing value is a number, else None."""
    if pd.api.types.is_bool_dtype(col):
        return col.astype(float)
    if pd.api.types.is_numeric_dtype(col):
        return col.astype(float)
    factorized = _factorize(col)
    if factorized is not None:  # parse each distinct value once
        inverse, uniques = factorized
        if not uniques:
            return None
        num_u = pd.to_numeric(pd.Series(uniques, dtype=object), errors="coerce")
        if num_u.isna().any():
            return None
        vals = np.append(num_u.to_numpy(dtype=float), np.nan)
        return pd.Series(vals[inverse], index=col.index, dtype=float)
    nonmiss = col.dropna()
    num = pd.to_numeric(nonmiss, errors="coerce")
    if len(nonmiss) and num.notna().all():
        out = pd.Series(np.nan, index=col.index, dtype=float)
        out[nonmiss.index] = num.astype(float)
        return out
    return None


def _is_continuous(num: pd.Series, max_int_categories: int) -> bool:
    vals = num.dropna().to_numpy()
    if vals.size == 0:
        return False
    if not np.all(np.equal(np.mod(vals, 1), 0)):
        return True
    return np.unique(vals).size > max_int_categories


def _fmt(x: float) -> str:
    return f"{x:.6g}"


_BIN_LABEL = re.compile(r"^(?:≤ (?P<le>\S+)|(?P<lo>[^–]+)–(?P<hi>\S+)|> (?P<gt>\S+))$")


def _sort_key(v: str) -> tuple:
    """Numbers by value, bin labels (``≤ 3.5``, ``3.5–7``, ``> 7``) by their upper end, then
    text."""
    try:
        return (0, float(v), v)
    except ValueError:
        pass
    m = _BIN_LABEL.match(v)
    if m:
        try:
            upper = float(m["le"] or m["hi"]) if not m["gt"] else float("inf")
            return (0, upper, v)
        except ValueError:
            pass
    return (1, 0.0, v)


def _label(v: Any) -> str:
    """Text label of a raw categorical value (1.0 -> '1')."""
    if isinstance(v, (float, np.floating)) and float(v).is_integer():
        return str(int(v))
    return str(v).strip()


def _labels(col: pd.Series) -> pd.Series:
    """``col.map(_label)`` computed once per distinct value (missing stays missing)."""
    factorized = _factorize(col)
    if factorized is None:
        return col.map(_label)
    inverse, uniques = factorized
    if isinstance(col.dtype, pd.CategoricalDtype):  # stays categorical: labels merged by code
        names = [_label(u) for u in uniques]
        states = list(dict.fromkeys(names))
        if len(states) < len(names):
            pos = {s: k for k, s in enumerate(states)}
            remap = np.array([pos[v] for v in names] + [MISSING], dtype=np.intp)
            inverse = remap[inverse]
        cat = pd.Categorical.from_codes(inverse, categories=pd.Index(states, dtype=object))
        return pd.Series(cat, index=col.index, name=col.name)
    lab = np.array([_label(u) for u in uniques] + [np.nan], dtype=object)
    return pd.Series(lab[inverse], index=col.index, name=col.name, dtype=object)


def _n_labels(col: pd.Series) -> int:
    """Number of distinct labels of the non-missing values."""
    factorized = _factorize(col)
    if factorized is None:
        return col.dropna().map(_label).nunique()
    return len({_label(u) for u in factorized[1] if not _is_na(u)})


def _is_na(v: Any) -> bool:
    return v is None or v is pd.NA or (isinstance(v, (float, np.floating)) and np.isnan(v))


def _factorize(col: pd.Series) -> tuple[np.ndarray, list] | None:
    """(codes of the distinct values, -1 = missing; the distinct values) by hashing, so that
    :func:`_label` runs once per distinct value, not per cell. None for mixed columns such as
    booleans next to numbers (hashing would merge True with 1)."""
    if isinstance(col.dtype, pd.CategoricalDtype):  # codes as they are, unused states dropped
        codes = col.array.codes
        memo = _FACTORIZED.get()
        if memo is None:
            return _factorize_categorical(codes, col.cat.categories)
        base = codes if codes.base is None else codes.base
        key = (codes.__array_interface__["data"][0], codes.shape, codes.strides)
        hit = memo.get(key)
        if hit is None or hit[0] is not base or hit[1] is not col.dtype:
            hit = (base, col.dtype, _factorize_categorical(codes, col.cat.categories))
            memo[key] = hit
        return hit[2]
    if pd.api.types.infer_dtype(col, skipna=True) not in _HASH_SAFE:
        return None
    inverse, uniques = pd.factorize(col, use_na_sentinel=True)
    return inverse, list(uniques)


def _factorize_categorical(codes: np.ndarray, cats: pd.Index) -> tuple[np.ndarray, list]:
    used = np.bincount(codes.astype(np.intp) + 1, minlength=len(cats) + 1)[1:] > 0
    if used.all():
        return codes, list(cats)
    remap = np.full(len(cats) + 1, -1, dtype=np.intp)
    remap[:-1][used] = np.arange(int(used.sum()))
    return remap[codes], list(cats[used])


_FACTORIZED: ContextVar[dict | None] = ContextVar("_FACTORIZED", default=None)
"""Within :func:`_factorizing_once` (one :func:`load_dataset` call): each categorical column's
factorization by the address, shape and strides of its codes (the codes array and the dtype
are kept and compared, so a key is never reused for other data), so that the constant-column,
identifier, numeric and state checks and the encoding share one pass over the codes."""


@contextmanager
def _factorizing_once() -> Iterator[None]:
    token = _FACTORIZED.set({})
    try:
        yield
    finally:
        _FACTORIZED.reset(token)


_HASH_SAFE = {"string", "integer", "floating", "mixed-integer-float", "boolean", "empty",
              "decimal", "categorical"}
"""Kinds of column (``pandas.api.types.infer_dtype``) whose distinct values hash apart exactly
when their labels differ or coincide; other mixes (e.g. True next to 1) are labelled cell by
cell."""


def _state_labels(col: pd.Series) -> list[str]:
    """Sorted distinct labels of the non-missing values of a categorical column."""
    factorized = _factorize(col)
    values = col.dropna() if factorized is None else [u for u in factorized[1] if not _is_na(u)]
    return sorted({_label(v) for v in values}, key=_sort_key)


@dataclass
class ColumnCoding:
    """How one raw column becomes codes: its kind, its states and (if continuous) cut points."""

    name: str
    kind: str  # "categorical" or "continuous"
    states: list[str]
    cuts: np.ndarray | None = None  # x <= cuts[0] -> 0, cuts[0] < x <= cuts[1] -> 1, ...

    def encode(self, col: pd.Series, out: np.ndarray | None = None) -> np.ndarray:
        """Codes of ``col`` (``-1`` = missing), written into ``out`` when it is given."""
        if out is None:
            out = np.empty(len(col), dtype=CODE_DTYPE)
        if self.kind == "continuous":
            out[:] = MISSING
            num = _as_numeric(col)
            if num is None:
                num = pd.to_numeric(col, errors="coerce")
            x = num.to_numpy(dtype=float)
            ok = ~np.isnan(x)
            out[ok] = np.searchsorted(self.cuts, x[ok], side="left").astype(CODE_DTYPE)
            return out
        index = {s: i for i, s in enumerate(self.states)}
        factorized = _factorize(col)
        if factorized is None:  # bools mixed with numbers: label value by value
            out[:] = MISSING
            for r, v in enumerate(col.to_numpy(dtype=object)):
                if not _is_na(v):
                    out[r] = index.get(_label(v), MISSING)
            return out
        inverse, uniques = factorized
        lookup = np.array([index.get(_label(u), MISSING) for u in uniques] + [MISSING],
                          dtype=out.dtype)
        return np.take(lookup, inverse, out=out)  # inverse -1 (missing): the trailing MISSING


def _cut_points(x: np.ndarray, method: str, n_bins: int, given: Any) -> np.ndarray:
    x = x[~np.isnan(x)]
    if method == "cuts":
        cuts = np.unique(np.asarray(given, dtype=float))
    elif method == "median":
        med = float(np.median(x))
        # x <= median -> low bin. If the median is the maximum every value would land low;
        # then split just below it instead, so both bins are used when two values exist.
        if med >= x.max() and np.unique(x).size > 1:
            med = float(np.max(x[x < med]))
        cuts = np.array([med])
    elif method == "quantile":
        qs = np.quantile(x, np.linspace(0, 1, n_bins + 1)[1:-1])
        cuts = np.unique(qs)
        cuts = cuts[cuts < x.max()] if np.unique(x).size > 1 else cuts
    else:  # pragma: no cover - validated earlier
        raise DataError(f"Unknown discretization {method!r}.")
    return cuts


def _fmt_short(x: float) -> str:
    """A cut point as a reader writes it: 3 significant digits (4 for large numbers)."""
    return f"{x:.4g}" if abs(x) >= 100 else f"{x:.3g}"


def _cut_labels(cuts: np.ndarray) -> list[str]:
    """Readable bin labels: ``["≤ 3.5", "3.5–7", "> 7"]`` (a bin holds x with
    ``lower < x ≤ upper``; the rounding never makes two labels equal)."""
    if cuts.size == 0:
        return ["all"]
    text = [_fmt_short(c) for c in cuts]
    if len(set(text)) < len(text):  # rounding merged two cut points: keep full precision
        text = [_fmt(c) for c in cuts]
    labels = [f"≤ {text[0]}"]
    for a, b in zip(text[:-1], text[1:]):
        labels.append(f"{a}–{b}")
    labels.append(f"> {text[-1]}")
    return labels


@dataclass
class DiscreteEncoder:
    """Learns, on training rows only, how each raw column maps to codes.

    Parameters
    ----------
    discretization : {"median", "quantile", "cuts", "none"}
        Continuous columns: two bins split at the training median (Sugahara et al.; default),
        ``n_bins`` equal-frequency bins, or the user's ``cut_points`` ({column: [c1, c2, ...]});
        ``"none"`` keeps every column's values as its categories (at most 64 per column).
    n_bins : int
        Number of bins for ``"quantile"`` (2..20).
    cut_points : dict, optional
        Cut points per column for ``"cuts"``; columns without an entry use the median.
    max_int_categories : int
        Integer columns with more distinct values than this are treated as continuous.
    vocabulary : DataFrame, optional
        Rows whose categorical values define the state lists (e.g. the whole file while the
        cut points are fitted on a training fold: state names carry no label information).
    """

    discretization: str = "median"
    n_bins: int = 3
    cut_points: dict | None = None
    max_int_categories: int = MAX_INT_CATEGORIES
    columns_: list[ColumnCoding] = field(default_factory=list)

    def fit(self, df: pd.DataFrame, vocabulary: pd.DataFrame | None = None) -> DiscreteEncoder:
        check_discretization(self.discretization, self.n_bins)
        self.columns_ = []
        vocab = df if vocabulary is None else vocabulary
        for name in df.columns:
            col = df[name]
            if col.isna().all():
                raise DataError(f"Column {name!r} is entirely missing; remove it or fill it in.")
            num = _as_numeric(col)
            continuous = (num is not None and self.discretization != "none"
                          and _is_continuous(num, self.max_int_categories))
            if self.discretization == "cuts" and self.cut_points and name in self.cut_points:
                if num is None:
                    raise DataError(f"Cut points were given for {name!r}, which is not numeric.")
                continuous = True
            if continuous:
                given = (self.cut_points or {}).get(name)
                method = self.discretization if (self.discretization != "cuts"
                                                 or given is not None) else "median"
                cuts = _cut_points(num.to_numpy(dtype=float), method, self.n_bins, given)
                self.columns_.append(ColumnCoding(name, "continuous", _cut_labels(cuts), cuts))
            else:
                states = _state_labels(vocab[name] if name in vocab.columns else col)
                if len(states) > MAX_CATEGORIES:
                    raise DataError(
                        f"Column {name!r} has {len(states)} different values; at most "
                        f"{MAX_CATEGORIES} categories are supported. If it is a measurement, "
                        "make it numeric so it can be discretized; if it is an identifier, "
                        "remove it."
                    )
                self.columns_.append(ColumnCoding(name, "categorical", states))
        return self

    def refit(self, df: pd.DataFrame) -> DiscreteEncoder:
        """A copy whose continuous columns have their cut points fitted on ``df`` (e.g. the
        training rows of a cross-validation fold); which columns are continuous and the states
        of categorical columns stay as fitted (they carry no label information).

        Parameters
        ----------
        df : DataFrame
            Raw rows holding at least the continuous columns.

        Returns
        -------
        DiscreteEncoder
            A new fitted encoder (``self`` is not changed).
        """
        if not self.columns_:
            raise ValueError("refit() needs a fitted encoder; call fit() first.")
        out = DiscreteEncoder(self.discretization, self.n_bins, self.cut_points,
                              self.max_int_categories)
        for c in self.columns_:
            if c.kind != "continuous":
                out.columns_.append(c)
                continue
            num = _as_numeric(df[c.name])
            if num is None:
                num = pd.to_numeric(df[c.name], errors="coerce")
            x = num.to_numpy(dtype=float)
            if np.isnan(x).all():  # no value in these rows: keep the cut points
                out.columns_.append(c)
                continue
            given = (self.cut_points or {}).get(c.name)
            method = self.discretization if (self.discretization != "cuts"
                                             or given is not None) else "median"
            if method not in ("median", "quantile", "cuts"):
                method = "median"
            cuts = _cut_points(x, method, self.n_bins, given)
            out.columns_.append(ColumnCoding(c.name, "continuous", _cut_labels(cuts), cuts))
        return out

    def transform(self, df: pd.DataFrame) -> np.ndarray:
        missing = [c.name for c in self.columns_ if c.name not in df.columns]
        if missing:
            raise DataError("Columns missing from the data: " + ", ".join(missing) + ".")
        out = np.empty((len(self.columns_), len(df)), dtype=CODE_DTYPE)  # column by column
        self._transform_into(df, out)
        return np.ascontiguousarray(out.T)

    def _transform_into(self, df: pd.DataFrame, out: np.ndarray) -> None:
        """Write the codes of column ``j`` into row ``out[j]`` (``out``: (n_columns, n_rows))."""
        for j, c in enumerate(self.columns_):
            c.encode(df[c.name], out[j])

    @property
    def names(self) -> list[str]:
        return [c.name for c in self.columns_]

    @property
    def states(self) -> list[list[str]]:
        return [list(c.states) for c in self.columns_]

    @property
    def arities(self) -> np.ndarray:
        return np.array([len(c.states) for c in self.columns_], dtype=np.int64)


def check_discretization(method: str, n_bins: int = 3) -> None:
    if method not in DISCRETIZATIONS:
        raise DataError(
            f"Unknown discretization {method!r}; choose one of {', '.join(DISCRETIZATIONS)}."
        )
    try:
        k = int(n_bins)
    except (TypeError, ValueError):
        k = -1
    if method == "quantile" and not 2 <= k <= MAX_BINS:
        raise DataError(f"The number of bins must be between 2 and {MAX_BINS} (got "
                        f"{str(n_bins)[:40]}); choose fewer bins.")


# --------------------------------------------------------------------------------------------
# The dataset
# --------------------------------------------------------------------------------------------


@dataclass
class DiscreteDataset:
    """A fully discrete data set (DESIGN §2).

    Attributes
    ----------
    codes : ndarray of shape (n_rows, n_vars), dtype int32
        State index of each value; ``-1`` marks a missing value.
    arities : ndarray of shape (n_vars,), int64
        Number of states r_i of each variable.
    names : list of str
        Variable names (the class included, at ``class_index``).
    states : list of list of str
        State labels per variable.
    class_index : int
        Column of the class variable in ``codes``.
    notices : list of str
        Plain-language notes on what loading did (dropped columns/rows, discretization).
    encoder : DiscreteEncoder or None
        How the feature columns were coded (reuse it on new rows; :meth:`DiscreteEncoder.refit`
        refits its cut points on training rows).
    raw : DataFrame or None
        The raw values of the kept rows (features and class), as read from the file.
    row_ids : ndarray of shape (n_rows,), int64
        Row number of each row in the original file (0 = first data row after the header),
        so that the numbers a user sees refer to the file even after rows were removed.
        Default ``0 .. n_rows-1``.
    """

    codes: np.ndarray
    arities: np.ndarray
    names: list[str]
    states: list[list[str]]
    class_index: int
    notices: list[str] = field(default_factory=list)
    encoder: DiscreteEncoder | None = None
    raw: pd.DataFrame | None = None
    row_ids: np.ndarray | None = None

    def __post_init__(self) -> None:
        self.codes = np.ascontiguousarray(self.codes, dtype=CODE_DTYPE)
        self.arities = np.asarray(self.arities, dtype=np.int64)
        if self.codes.ndim != 2 or self.codes.shape[1] != len(self.names):
            raise ValueError("codes must be (n_rows, n_vars) with one name per column")
        if self.codes.size and (self.codes.max(axis=0) >= self.arities).any():
            raise ValueError("a code is >= its variable's arity")
        if self.row_ids is None:
            self.row_ids = np.arange(self.codes.shape[0], dtype=np.int64)
        self.row_ids = np.asarray(self.row_ids, dtype=np.int64)
        if self.row_ids.shape != (self.codes.shape[0],):
            raise ValueError("row_ids must have one entry per row")

    # convenient views --------------------------------------------------------------------
    @property
    def n_rows(self) -> int:
        return int(self.codes.shape[0])

    @property
    def n_vars(self) -> int:
        return int(self.codes.shape[1])

    @property
    def feature_indices(self) -> np.ndarray:
        return np.array([i for i in range(self.n_vars) if i != self.class_index], dtype=np.int64)

    @property
    def X(self) -> np.ndarray:
        """Feature codes (n_rows, n_features), class column removed."""
        return np.ascontiguousarray(self.codes[:, self.feature_indices])

    @property
    def y(self) -> np.ndarray:
        """Class codes (n_rows,)."""
        return np.ascontiguousarray(self.codes[:, self.class_index])

    @property
    def feature_names(self) -> list[str]:
        return [self.names[i] for i in self.feature_indices]

    @property
    def feature_states(self) -> list[list[str]]:
        return [self.states[i] for i in self.feature_indices]

    @property
    def class_name(self) -> str:
        return self.names[self.class_index]

    @property
    def classes(self) -> list[str]:
        return list(self.states[self.class_index])

    def fingerprint(self) -> str:
        """Stable hash of codes, names and states (a cache key for dashboards)."""
        h = hashlib.sha1()
        h.update(self.codes.tobytes())
        h.update(repr((self.names, self.states, self.class_index)).encode())
        return h.hexdigest()

    def missing_mask(self) -> np.ndarray:
        return self.codes < 0

    def complete_rows(self) -> DiscreteDataset:
        """The dataset restricted to rows without a missing value."""
        keep = ~self.missing_mask().any(axis=1)
        return self.subset(np.flatnonzero(keep))

    def subset(self, rows: np.ndarray) -> DiscreteDataset:
        """The dataset restricted to ``rows`` (positions); ``row_ids`` keep the file's row
        numbers."""
        raw = None if self.raw is None else self.raw.iloc[rows].reset_index(drop=True)
        return DiscreteDataset(self.codes[rows], self.arities.copy(), list(self.names),
                               [list(s) for s in self.states], self.class_index,
                               list(self.notices), self.encoder, raw, self.row_ids[rows])

    def select_features(self, features: Any) -> DiscreteDataset:
        """The dataset with only ``features`` (names, kept in the dataset's order) and the
        class; the encoder and raw values follow, so cross-validation still refits bins."""
        wanted = [str(f) for f in features]
        unknown = [f for f in wanted if f not in self.feature_names]
        if unknown:
            raise DataError("Not features of this dataset: " + ", ".join(unknown[:10]) + ".")
        if not wanted:
            raise DataError("Keep at least one feature.")
        keep = [j for j, n in enumerate(self.names)
                if j == self.class_index or n in set(wanted)]
        names = [self.names[j] for j in keep]
        enc = self.encoder
        if enc is not None:
            enc = replace(enc, columns_=[c for c in enc.columns_ if c.name in names])
        raw = None if self.raw is None else self.raw[[n for n in names if n in self.raw]]
        dropped = len(self.feature_names) - len(wanted)
        notices = list(self.notices) + [
            f"{len(wanted)} of {len(self.feature_names)} features kept ({dropped} left out)."]
        return DiscreteDataset(self.codes[:, keep], self.arities[keep], names,
                               [list(self.states[j]) for j in keep], keep.index(
                                   self.class_index), notices, enc, raw, self.row_ids)

    def position_of_row(self, row_id: int) -> int:
        """Position in ``codes`` of the file's row ``row_id`` (ValueError if it was removed)."""
        hit = np.flatnonzero(self.row_ids == int(row_id))
        if not len(hit):
            raise ValueError(f"Row {row_id} of the file is not in this dataset (it was removed "
                             "while loading, e.g. for a missing value).")
        return int(hit[0])

    def codes_from_states(self, frame: pd.DataFrame) -> np.ndarray:
        """Feature codes of rows given as state labels (a DataFrame with the feature columns;
        ``None`` / NaN / an unknown label -> ``-1``), e.g. a patient typed into a form."""
        absent = [n for n in self.feature_names if n not in frame.columns]
        if absent:
            raise DataError("Columns missing from the data: " + ", ".join(absent) + ".")
        out = np.full((len(frame), len(self.feature_names)), MISSING, dtype=CODE_DTYPE)
        for j, (name, states) in enumerate(zip(self.feature_names, self.feature_states)):
            index = {s: k for k, s in enumerate(states)}
            for r, v in enumerate(frame[name].to_numpy(dtype=object)):
                if v is None or (isinstance(v, float) and np.isnan(v)) or v is pd.NA:
                    continue
                out[r, j] = index.get(str(v), index.get(_label(v), MISSING))
        return out

    def to_frame(self) -> pd.DataFrame:
        """State labels as a DataFrame (missing values as NaN)."""
        cols = {}
        for j, name in enumerate(self.names):
            lab = np.array(self.states[j] + [np.nan], dtype=object)
            cols[name] = lab[np.where(self.codes[:, j] < 0, len(self.states[j]), self.codes[:, j])]
        return pd.DataFrame(cols)

    def summary(self) -> pd.DataFrame:
        """One row per variable: role, kind, number of states, missing count, state counts."""
        rows = []
        kinds = {}
        if self.encoder is not None:
            kinds = {c.name: c.kind for c in self.encoder.columns_}
        for j, name in enumerate(self.names):
            col = self.codes[:, j]
            counts = np.bincount(col[col >= 0], minlength=self.arities[j])
            rows.append({
                "variable": name,
                "role": "class" if j == self.class_index else "feature",
                "kind": kinds.get(name, "categorical"),
                "states": int(self.arities[j]),
                "missing": int((col < 0).sum()),
                "counts": ", ".join(f"{s}: {c}" for s, c in zip(self.states[j], counts)),
            })
        return pd.DataFrame(rows)


def choose_class_column(columns: list[str], target: str | None = None) -> str:
    """The class column: ``target`` if given, else a column named class/target/label/diagnosis
    (case-insensitive), else the last column."""
    if target is not None:
        if target not in columns:
            raise DataError(
                f"The class column {target!r} is not in the file. Columns are: "
                + ", ".join(columns[:20]) + ("..." if len(columns) > 20 else "")
            )
        return target
    lower = {c.lower(): c for c in columns}
    for name in CLASS_COLUMN_NAMES:
        if name in lower:
            return lower[name]
    return columns[-1]


_ID_WORDS = frozenset({"id", "ids", "uid", "uuid", "key", "code", "no", "nr", "num", "number",
                       "index", "idx", "ref", "record", "row"})


def _id_name(name: Any) -> bool:
    """A column name with a word that names identifiers (``patient_id``, ``PatientID``,
    ``Sample code number``, ``row``) — word by word, so ``acid`` or ``fluid`` do not count."""
    words = re.findall(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+", str(name))
    return any(w.lower() in _ID_WORDS for w in words)


def _id_like(col: pd.Series) -> bool:
    """All values present and distinct, and either text (a label that is never repeated
    carries no information) or whole numbers that count rows (consecutive) or sit in a column
    named like an identifier. Other all-distinct whole numbers (an income, a count) are
    measurements: kept and binned like any numeric column."""
    if col.isna().any() or len(col) < MIN_COMPLETE_ROWS:
        return False
    factorized = _factorize(col)
    if (len(factorized[1]) if factorized is not None else col.nunique()) != len(col):
        return False
    num = _as_numeric(col)
    if num is None:
        return True
    values = num.to_numpy()
    if not np.all(np.equal(np.mod(values, 1), 0)):
        return False
    return _id_name(col.name) or bool(np.all(np.diff(np.sort(values)) == 1))


def prepare_frame(source: Any, target: str | None = None, drop_id_columns: bool = True
                  ) -> tuple[pd.DataFrame, pd.Series, list[str]]:
    """Read and validate a table; split it into raw features and class labels.

    Returns ``(features, labels, notices)``; rows with a missing class are dropped (noted).
    Raises :class:`DataError` for every problem listed in issue #2.
    """
    X, labels, notices, _ = prepare_frame_rows(source, target, drop_id_columns)
    return X, labels, notices


def prepare_frame_rows(source: Any, target: str | None = None, drop_id_columns: bool = True,
                       *, sep: str | None = None, decimal: str | None = None,
                       drop_columns: Any = (), class_bins: int = 0,
                       drop_constant_columns: bool = True
                       ) -> tuple[pd.DataFrame, pd.Series, list[str], np.ndarray]:
    """:func:`prepare_frame` plus the file row number (0 = first data row) of every row kept.

    ``sep`` / ``decimal`` as in :func:`read_table`; ``drop_columns`` are left out (the user's
    choice); ``class_bins`` > 1 groups a numeric class column into that many equal-frequency
    bins; constant columns (one value in every row) are left out with a notice.
    """
    class_bins = check_class_bins(class_bins)
    df = read_table(source, sep=sep, decimal=decimal, min_rows=MIN_COMPLETE_ROWS)
    notices: list[str] = list(df.attrs.get("notices", []))
    drop_columns = [str(c) for c in (drop_columns or ())]
    unknown = [c for c in drop_columns if c not in df.columns]
    if unknown:
        raise DataError("Columns to leave out are not in the file: " + ", ".join(unknown) + ".")
    if drop_columns:
        df = df.drop(columns=drop_columns)
        notices.append("Left out as you asked: " + ", ".join(drop_columns) + ".")
    if df.shape[1] < 2:
        raise DataError(
            f"The table has {df.shape[1]} column(s); at least two are needed "
            "(one or more features and a class). Is the file comma-separated?"
        )
    if len(df) == 0:
        raise DataError("The file has a header but no data rows.")
    cls = choose_class_column(list(df.columns), target)
    for name in df.columns:
        if df[name].isna().all():
            raise DataError(f"Column {name!r} is entirely missing; remove it or fill it in.")
    y = df[cls]
    row_ids = np.arange(len(df), dtype=np.int64)
    if y.isna().any():
        n = int(y.isna().sum())
        notices.append(f"{n} row(s) without a value in the class column {cls!r} were removed.")
        row_ids = row_ids[y.notna().to_numpy()]
        df = df.loc[y.notna()].reset_index(drop=True)
        y = df[cls]
    labels = _labels(y)
    if class_bins > 1:
        labels = _bin_class(y, cls, class_bins, notices)
    n_classes = labels.nunique()
    if n_classes < 2:
        only = labels.iloc[0] if len(labels) else "(none)"
        raise DataError(
            f"The class column {cls!r} has a single value ({only!r}); a classifier needs at "
            "least two classes. Choose another class column."
        )
    if n_classes > MAX_CLASS_VALUES:
        raise DataError(
            f"The class column {cls!r} has {n_classes} different values (more than "
            f"{MAX_CLASS_VALUES}). Is it the right column? A continuous outcome must be "
            "grouped into bins before classification (choose a number of class groups)."
        )
    X = df.drop(columns=[cls])
    if drop_constant_columns:
        const = [c for c in X.columns if _n_labels(X[c]) == 1]
        if const and len(const) < X.shape[1]:
            X = X.drop(columns=const)
            notices.append("Left out because every row has the same value (a constant "
                           "carries no information): " + ", ".join(const) + ".")
    if drop_id_columns:
        ids = [c for c in X.columns if _id_like(X[c])]
        if ids and len(ids) < X.shape[1]:
            X = X.drop(columns=ids)
            notices.append("Identifier-like column(s) removed (every value distinct): "
                           + ", ".join(ids) + ".")
    return X.reset_index(drop=True), labels.reset_index(drop=True), notices, row_ids


def check_class_bins(class_bins: Any) -> int:
    """The number of class bins as an int (0 or 1: the class is not grouped), or
    :class:`DataError` unless it is a whole number from 0 to :data:`MAX_CLASS_VALUES` (more
    classes are refused anyway): checked before any bin is computed."""
    try:
        k = int(class_bins or 0)
    except (TypeError, ValueError):
        k = -1
    if not 0 <= k <= MAX_CLASS_VALUES:
        raise DataError(f"The number of class groups must be between 2 and {MAX_CLASS_VALUES} "
                        f"(got {str(class_bins)[:40]}); choose fewer groups.")
    return k


def _bin_class(y: pd.Series, cls: str, k: int, notices: list[str]) -> pd.Series:
    """A numeric class column grouped into ``k`` equal-frequency bins with readable labels."""
    num = _as_numeric(y)
    if num is None:
        raise DataError(f"The class column {cls!r} is not numeric, so it cannot be grouped "
                        "into bins; its values are used as classes.")
    cuts = _cut_points(num.to_numpy(dtype=float), "quantile", k, None)
    names = _cut_labels(cuts)
    codes = np.searchsorted(cuts, num.to_numpy(dtype=float), side="left")
    notices.append(f"The numeric class column {cls!r} was grouped into {len(names)} classes "
                   "of about equal size: " + ", ".join(names) + ".")
    return pd.Series([names[c] for c in codes], index=y.index, name=y.name)


def informative_features(ds: DiscreteDataset) -> pd.DataFrame:
    """Features ranked by their mutual information with the class (bits, from the rows where
    both are known; :func:`bnma_core.scores.class_mutual_informations`), most informative
    first: columns ``feature``, ``MI with class (bits)``, ``states``."""
    from bnma_core.scores import class_mutual_informations  # scores imports this module

    mi = class_mutual_informations(ds.X, ds.y, ds.arities[ds.feature_indices],
                                   len(ds.classes), base=2.0)
    out = pd.DataFrame({"feature": ds.feature_names, "MI with class (bits)": mi,
                        "states": ds.arities[ds.feature_indices]})
    return out.sort_values("MI with class (bits)", ascending=False,
                           kind="stable").reset_index(drop=True)


def numeric_class_warning(ds: DiscreteDataset, limit: int = MAX_INT_CATEGORIES) -> str:
    """A plain warning when the class looks like a measurement (numeric, more than ``limit``
    values, e.g. an ``age`` column), else ``""``: such a target is rarely meant as that many
    separate classes."""
    classes = ds.classes
    if len(classes) <= limit:
        return ""
    try:
        [float(c) for c in classes]
    except ValueError:
        return ""
    return (f"The class column {ds.class_name!r} holds numbers with {len(classes)} different "
            "values, so every value is treated as a class of its own. If it is a "
            "measurement, group it into a few bins, or choose another class column.")


def encode_labels(labels: pd.Series, classes: list[str] | None = None) -> tuple[np.ndarray,
                                                                                 list[str]]:
    """Class labels -> codes (classes sorted like states; unknown labels -> -1)."""
    labels = pd.Series(labels) if not isinstance(labels, pd.Series) else labels
    factorized = _factorize(labels)
    if factorized is None or (factorized[0] < 0).any():  # missing labels: label them as text
        if classes is None:
            classes = sorted(set(labels.map(_label)), key=_sort_key)
        index = {c: i for i, c in enumerate(classes)}
        codes = np.array([index.get(_label(v), MISSING) for v in labels], dtype=CODE_DTYPE)
        return codes, classes
    inverse, uniques = factorized
    names = [_label(u) for u in uniques]
    if classes is None:
        classes = sorted(set(names), key=_sort_key)
    index = {c: i for i, c in enumerate(classes)}
    lookup = np.array([index.get(v, MISSING) for v in names] + [MISSING], dtype=CODE_DTYPE)
    return lookup[inverse], classes


def _encode_transposed(X: pd.DataFrame, labels: pd.Series, discretization: str, n_bins: int,
                       cut_points: dict | None) -> tuple[DiscreteEncoder, np.ndarray,
                                                         list[str], np.ndarray]:
    """Fit the encoder on ``X`` and encode the class labels; the features' codes are written
    variable by variable into a ``(n_vars + 1, n_rows)`` array (int8 when every arity is below
    128) whose last row is left for the class codes. Returns ``(enc, y, classes, codes_t)``."""
    enc = DiscreteEncoder(discretization, n_bins, cut_points).fit(X)
    y, classes = encode_labels(labels)
    small = max([len(classes), *enc.arities]) < 128  # codes fit in int8 before the copy
    codes_t = np.empty((X.shape[1] + 1, len(X)), dtype=np.int8 if small else CODE_DTYPE)
    enc._transform_into(X, codes_t[:-1])  # variable by variable
    return enc, y, classes, codes_t


def _complete_rows(codes_t: np.ndarray) -> tuple[np.ndarray, int]:
    """Mask and count of the rows with no missing feature value (``codes_t`` is transposed,
    class last); :class:`DataError` when fewer than :data:`MIN_COMPLETE_ROWS`."""
    complete = ~(codes_t[:-1] < 0).any(axis=0)
    n_complete = int(complete.sum())
    if n_complete < MIN_COMPLETE_ROWS:
        raise DataError(
            f"Only {n_complete} row(s) have no missing value; at least {MIN_COMPLETE_ROWS} "
            "complete rows are needed to learn anything."
        )
    return complete, n_complete


def _note_discretized(enc: DiscreteEncoder, notices: list[str]) -> None:
    """Append a notice naming the continuous columns ``enc`` discretized, and how (if any)."""
    cont = [c.name for c in enc.columns_ if c.kind == "continuous"]
    if cont:
        how = {"median": "two bins split at the median",
               "quantile": f"{enc.n_bins} equal-frequency bins",
               "cuts": "the given cut points"}[enc.discretization]
        notices.append(f"Continuous column(s) discretized into {how}: " + ", ".join(cont) + ".")


def load_dataset(source: Any, target: str | None = None, *, discretization: str = "median",
                 n_bins: int = 3, cut_points: dict | None = None, missing: str = "keep",
                 drop_id_columns: bool = True, sep: str | None = None,
                 decimal: str | None = None, drop_columns: Any = (),
                 class_bins: int = 0) -> DiscreteDataset:
    """Read a CSV (path, bytes, file object or DataFrame) into a :class:`DiscreteDataset`.

    Parameters
    ----------
    source : path, bytes, file-like or DataFrame
    target : str, optional
        Class column; default a column named class/target/label/diagnosis, else the last.
    discretization, n_bins, cut_points
        How continuous columns are binned (see :class:`DiscreteEncoder`).
    missing : {"keep", "drop"}
        ``"keep"`` (default; the same default as the CLI and the dashboard) keeps rows with a
        missing feature value, coded ``-1`` (the methods learn from available cases and
        marginalize at prediction); ``"drop"`` removes them (noted). ``row_ids`` keep the
        file's row numbers either way.
    drop_id_columns : bool
        Remove identifier-like columns (every value distinct), with a notice.
    sep, decimal : str, optional
        Column separator and decimal mark; detected when None (see :func:`read_table`).
    drop_columns : list of str
        Columns to leave out. Constant columns are always left out (with a notice).
    class_bins : int
        Group a numeric class column into this many equal-frequency classes (0 = no).

    Raises
    ------
    DataError
        For every kind of bad input, with a plain-language message.
    """
    if missing not in MISSING_POLICIES:
        raise DataError(f"Unknown missing-value policy {missing!r}; use 'drop' or 'keep'.")
    check_discretization(discretization, n_bins)  # before the file is read
    with _factorizing_once():  # each categorical column factorized once
        X, labels, notices, row_ids = prepare_frame_rows(
            source, target, drop_id_columns, sep=sep, decimal=decimal,
            drop_columns=drop_columns, class_bins=class_bins)
        cls = labels.name
        enc, y, classes, codes_t = _encode_transposed(X, labels, discretization, n_bins,
                                                      cut_points)
    codes_t[-1] = y
    complete, n_complete = _complete_rows(codes_t)
    raw = X.copy(deep=False)  # (copy on write: X's columns are not changed)
    raw[cls] = labels
    codes = np.empty(codes_t.shape[::-1], dtype=CODE_DTYPE)
    codes[...] = codes_t.T
    del codes_t
    if missing == "drop" and n_complete < len(codes):
        notices.append(f"{len(codes) - n_complete} row(s) with missing values were set aside "
                       f"for training ({n_complete} complete rows remain).")
        codes, raw = codes[complete], raw.loc[complete].reset_index(drop=True)
        row_ids = row_ids[complete]
    _note_discretized(enc, notices)
    y = codes[:, -1]
    if y.size == 0 or y.min() == y.max():
        raise DataError("After removing incomplete rows only one class is left.")
    return DiscreteDataset(
        codes=codes,
        arities=np.append(enc.arities, len(classes)),
        names=enc.names + [str(cls)],
        states=enc.states + [classes],
        class_index=len(enc.names),
        notices=notices,
        encoder=enc,
        raw=raw,
        row_ids=row_ids,
    )


def dataset_from_codes(codes: np.ndarray, names: list[str] | None = None,
                       arities: np.ndarray | None = None, class_index: int = -1,
                       states: list[list[str]] | None = None) -> DiscreteDataset:
    """Wrap an integer code matrix (e.g. samples of a network) as a dataset."""
    codes = np.asarray(codes, dtype=CODE_DTYPE)
    n_vars = codes.shape[1]
    if names is None:
        names = [f"X{i}" for i in range(n_vars)]
    if arities is None:
        arities = np.maximum(codes.max(axis=0) + 1, 1)
    arities = np.asarray(arities, dtype=np.int64)
    if states is None:
        states = [[str(s) for s in range(a)] for a in arities]
    return DiscreteDataset(codes, arities, list(names), states, class_index % n_vars)
