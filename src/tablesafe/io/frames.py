"""Turn user data (frames, CSV and Parquet paths, tau-ARGUS microdata) into a DuckDB source.

DuckDB reads CSV and Parquet files directly (out of core), and scans pandas, polars and
pyarrow frames in place. Every source is exposed as a SQL ``FROM`` expression together
with its column names and types, plus a way to find the line or row of a bad value for
error messages (only used on the error path).
"""

from __future__ import annotations

import codecs
import csv
import itertools
import math
import re
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import duckdb
import numpy as np
import pandas as pd

from tablesafe.errors import InputError

#: Encodings DuckDB's CSV reader decodes itself (Python codec name -> DuckDB name).
DUCKDB_ENCODINGS = {"utf-8": "utf-8", "iso8859-1": "latin-1", "utf-16": "utf-16"}
DEFAULT_ENCODING = "utf-8"

NUMERIC_TYPES = ("TINYINT", "SMALLINT", "INTEGER", "BIGINT", "HUGEINT", "UTINYINT", "USMALLINT",
                 "UINTEGER", "UBIGINT", "FLOAT", "DOUBLE", "REAL")


def sql_string(s: str) -> str:
    """A SQL string literal."""
    return "'" + str(s).replace("'", "''") + "'"


def sql_ident(name: str) -> str:
    """A quoted SQL identifier."""
    return '"' + str(name).replace('"', '""') + '"'


@dataclass
class Source:
    """Data registered with a DuckDB connection.

    Attributes:
        from_sql: SQL expression usable after ``FROM``.
        columns: column names in order.
        types: DuckDB type name per column.
        file: file name for error messages (None for in-memory frames).
        kind: ``"csv"``, ``"parquet"``, ``"frame"`` or ``"asc"``.
        locate: ``locate(column, predicate)`` returns ``(position, value)`` for the first
            value for which ``predicate(raw_string_or_None)`` holds: the 1-based line (text
            files) or row (frames, Parquet); None when no value matches.
        line_word: ``"line"`` for text files, ``"row"`` otherwise.
        metadata: tau-ARGUS metadata when the source came with an ``.rda`` file.
    """

    from_sql: str
    columns: list[str]
    types: dict[str, str]
    file: str | None
    kind: str
    locate: Callable[[str, Callable[[str | None], bool]], tuple[int, str | None] | None]
    line_word: str = "line"
    metadata: Any = None
    keep: list[Any] = field(default_factory=list)
    encoding: str = DEFAULT_ENCODING

    def read_error(self, exc: Exception, what: str = "cannot read the data") -> InputError:
        """An :class:`InputError` for a failed read of this source (a decoding failure
        says so and suggests ``--encoding``)."""
        text = str(exc)
        if self.kind == "csv" and re.search(r"unicode|not utf-8 encoded|encoding", text, re.IGNORECASE):
            found = re.search(r"CSV Error on Line: (\d+)", text)
            return decode_error(self.file or "<data>", self.encoding, int(found.group(1)) if found else None)
        return InputError(f"{what}: {text.splitlines()[0]}", file=self.file)

    def is_numeric(self, column: str) -> bool:
        """True when DuckDB already types the column as a number."""
        t = self.types.get(column, "").upper()
        return t.startswith(NUMERIC_TYPES) or t.startswith("DECIMAL")

    def error_at(self, message: str, column: str, found: tuple[int, str | None] | None,
                 code: str | None = None) -> InputError:
        """An :class:`InputError` pointing at the line or row ``found`` of ``column``."""
        if found is None:
            return InputError(message, file=self.file, column=column, code=code)
        pos, value = found
        code = code if code is not None else ("" if value is None else value)
        if self.line_word == "line":
            return InputError(message, file=self.file, line=pos, column=column, code=code)
        return InputError(f"{message} (row {pos})", file=self.file, column=column, code=code)

    def check_columns(self, names: list[str | None], role: str = "column") -> None:
        """Raise :class:`InputError` for a name that is not a column (listing the known ones)."""
        for n in names:
            if n is not None and n not in self.columns:
                raise InputError(
                    f"unknown {role} {n!r}; the data has the columns {', '.join(map(repr, self.columns))}",
                    file=self.file,
                    column=n,
                )



class SourceOpener(ABC):
    """Data that registers itself with a DuckDB connection (tau-ARGUS microdata, whose
    fixed-width or free-format lines need their metadata to be cut into columns)."""

    @abstractmethod
    def open(self, con: duckdb.DuckDBPyConnection) -> Source:
        """Register the data with ``con`` and describe it."""

def _describe(con: duckdb.DuckDBPyConnection, from_sql: str) -> tuple[list[str], dict[str, str]]:
    rows = con.execute(f"DESCRIBE SELECT * FROM {from_sql}").fetchall()
    cols = [r[0] for r in rows]
    return cols, {r[0]: str(r[1]) for r in rows}


def check_input_file(path: str | Path, what: str = "data file") -> Path:
    """The path of an input file that exists and is not a directory (else :class:`InputError`).

    Every reader of user data calls this first (microdata, tabular input, JJ files).
    """
    p = Path(path)
    if p.is_dir():
        raise InputError(
            f"a directory was given where a {what} is expected: name the file itself", file=str(p)
        )
    if not p.exists():
        raise InputError(f"{what} not found", file=str(p))
    return p


def check_encoding(encoding: str | None) -> str:
    """The Python codec name of ``encoding`` (default utf-8); :class:`InputError` if unknown."""
    if encoding is None:
        return DEFAULT_ENCODING
    try:
        return codecs.lookup(str(encoding)).name
    except LookupError:
        raise InputError(
            f"unknown encoding {encoding!r} (--encoding, Python: encoding=...); e.g. utf-8 or latin-1"
        ) from None


def decode_error(file: str, encoding: str, line: int | None = None) -> InputError:
    """The error for a text file that does not decode with ``encoding`` (the first line
    that does not is found when ``line`` is not given)."""
    if line is None and not codecs.lookup(encoding).name.startswith(("utf-16", "utf-32")):
        with open(file, "rb") as fh:
            for lineno, raw in enumerate(fh, start=1):
                try:
                    raw.decode(encoding)
                except UnicodeDecodeError:
                    line = lineno
                    break
    other = "latin-1" if codecs.lookup(encoding).name != "iso8859-1" else "utf-8"
    return InputError(
        f"the file cannot be decoded as {encoding} text; give its encoding with --encoding "
        f"(Python and job files: encoding=...), e.g. --encoding {other}",
        file=file,
        line=line,
    )


def check_unique_columns(columns: list[Any], file: str | None) -> None:
    """Refuse a header that names a column twice (readers would silently use one of them)."""
    seen: set[str] = set()
    for c in columns:
        key = str(c).strip()
        if key in seen:
            raise InputError(
                f"the column name {key!r} occurs more than once in the input; give each column its own name",
                file=file,
                column=key,
            )
        seen.add(key)


def csv_header(path: str | Path, encoding: str = DEFAULT_ENCODING) -> list[str]:
    """The column names in the first line of a CSV file (delimiter sniffed as DuckDB and
    pandas would: comma, semicolon, tab or bar)."""
    with open(path, newline="", encoding=encoding, errors="replace") as fh:
        first = fh.readline()
    if "\ufffd" in first:
        raise decode_error(str(path), encoding, 1)
    try:
        dialect: Any = csv.Sniffer().sniff(first, delimiters=",;\t|")
    except csv.Error:
        dialect = csv.excel
    return [h.strip() for h in next(csv.reader([first], dialect), [])]


def open_source(con: duckdb.DuckDBPyConnection, data: Any, *, name: str = "tablesafe_src",
                encoding: str | None = None) -> Source:
    """Register ``data`` with ``con`` and describe it.

    ``data`` may be a pandas, polars or pyarrow frame, a path to a CSV (``.csv``, ``.txt``,
    ``.csv.gz``) or Parquet file, or a tau-ARGUS microdata source
    (:class:`tablesafe.io.tauargus.AscSource`, or any other :class:`SourceOpener`). CSV columns are all read as text so that
    codes such as ``01`` keep their leading zeros; numbers are cast where needed; a CSV
    file is decoded with ``encoding`` (default utf-8). A header that names a column twice
    is refused.
    """
    if isinstance(data, SourceOpener):
        return data.open(con)
    if isinstance(data, (str, Path)):
        path = check_input_file(data)
        suffixes = "".join(path.suffixes).lower()
        if suffixes.endswith((".parquet", ".pq")):
            return _parquet_source(con, path)
        if suffixes.endswith((".asc", ".dat")):
            raise InputError(
                "tau-ARGUS microdata needs its metadata: pass tablesafe.io.tauargus.read_asc(asc, rda)",
                file=str(path),
            )
        return _csv_source(con, path, check_encoding(encoding))
    return _frame_source(con, data, name)


def _csv_source(con: duckdb.DuckDBPyConnection, path: Path, encoding: str) -> Source:
    if encoding not in DUCKDB_ENCODINGS:
        raise InputError(
            f"CSV microdata can be read as utf-8, latin-1 or utf-16, not {encoding}: convert the file "
            "or give one of these with --encoding (Python: encoding=...)",
            file=str(path),
        )
    check_unique_columns(csv_header(path, encoding), str(path))
    enc = "" if encoding == DEFAULT_ENCODING else f", encoding={sql_string(DUCKDB_ENCODINGS[encoding])}"
    from_sql = (
        f"read_csv({sql_string(str(path))}, header=true, all_varchar=true, auto_detect=true{enc})"
    )
    src = Source(from_sql, [], {}, str(path), "csv", lambda c, p: None, encoding=encoding)
    try:
        cols, types = _describe(con, from_sql)
    except duckdb.Error as exc:
        raise src.read_error(exc, "cannot read CSV file") from None
    if path.stat().st_size == 0:
        raise InputError("empty input: the file has no header and no records", file=str(path))

    def locate(column: str, pred: Callable[[str | None], bool]) -> tuple[int, str | None] | None:
        with open(path, newline="", encoding=encoding, errors="replace") as fh:
            sample = fh.read(65536)
            fh.seek(0)
            try:
                dialect = csv.Sniffer().sniff(sample, delimiters=",;\t|")
            except csv.Error:
                dialect = csv.excel
            reader = csv.reader(fh, dialect)
            header = next(reader, [])
            header = [h.strip() for h in header]
            if column not in header:
                return None
            j = header.index(column)
            for lineno, rec in enumerate(reader, start=2):
                value = rec[j] if j < len(rec) else None
                if value == "":
                    value = None
                if pred(value):
                    return lineno, value
        return None

    src.columns, src.types, src.locate = cols, types, locate
    return src


def _parquet_source(con: duckdb.DuckDBPyConnection, path: Path) -> Source:
    from_sql = f"read_parquet({sql_string(str(path))})"
    try:
        cols, types = _describe(con, from_sql)
    except duckdb.Error as exc:
        raise InputError(f"cannot read Parquet file: {str(exc).splitlines()[0]}", file=str(path)) from None
    import pyarrow.parquet as pq

    check_unique_columns(pq.read_schema(path).names, str(path))

    def locate(column: str, pred: Callable[[str | None], bool]) -> tuple[int, str | None] | None:
        import pyarrow.parquet as pq

        pf = pq.ParquetFile(path)
        offset = 0
        for batch in pf.iter_batches(columns=[column], batch_size=1 << 16):
            for i, v in enumerate(batch.column(0).to_pylist()):
                t = None if v is None else str(v)
                if pred(t):
                    return offset + i + 1, t
            offset += batch.num_rows
        return None

    return Source(from_sql, cols, types, str(path), "parquet", locate, line_word="row")


def _frame_source(con: duckdb.DuckDBPyConnection, data: Any, name: str) -> Source:
    mod = type(data).__module__
    obj = data
    if mod.startswith("polars"):
        obj = data.to_arrow()
    elif not mod.startswith(("pandas", "pyarrow")):
        raise InputError(
            f"cannot read data of type {type(data).__name__}: pass a pandas, polars or pyarrow "
            "frame, or a path to a CSV, Parquet or tau-ARGUS file"
        )
    check_unique_columns(list(data.columns) if mod.startswith("pandas") else list(obj.schema.names), None)
    con.register(name, obj)
    cols, types = _describe(con, sql_ident(name))

    def locate(column: str, pred: Callable[[str | None], bool]) -> tuple[int, str | None] | None:
        if mod.startswith("pandas"):
            values = data[column].tolist()
        else:
            values = obj.column(column).to_pylist()
        for i, v in enumerate(values):
            if v is not None and isinstance(v, float) and math.isnan(v):
                v = None
            t = None if v is None else str(v)
            if pred(t):
                return i + 1, t
        return None

    return Source(sql_ident(name), cols, types, None, "frame", locate, line_word="row", keep=[obj])


def first_lines(path: str | Path, n: int) -> list[str]:
    """The first ``n`` lines of a text file (for sniffing)."""
    with open(path, encoding="latin-1") as fh:
        return [line.rstrip("\r\n") for line in itertools.islice(fh, n)]


def parse_numbers(text: Any, column: str, file: str) -> np.ndarray:
    """The numbers of a text column (a pandas Series): blanks and ``-`` become NaN, a
    decimal comma is read as a point (thousands points dropped); a value that is not a
    number raises :class:`InputError` naming the file, line, column and value."""
    txt = text.astype(str).str.strip()
    has_comma = txt.str.contains(",", regex=False)
    if has_comma.any():
        txt = txt.where(~has_comma, txt.str.replace(".", "", regex=False).str.replace(",", ".", regex=False))
    out = pd.to_numeric(txt.replace({"": None, "-": None}), errors="coerce")
    bad = out.isna() & ~txt.isin(["", "-"])
    if bad.any():
        i = int(np.flatnonzero(bad.to_numpy())[0])
        raise InputError("non-numeric value", file=file, line=i + 1, column=column, code=txt.iloc[i])
    return out.to_numpy(dtype=float)
