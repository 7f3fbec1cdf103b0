"""The publication file: one row per cell, codes then the value, withheld cells masked.

A publication never says why a cell is withheld: primary and secondary suppressions get
the same marker (an empty field by default), and no rule parameter is written anywhere
(seed 003 B.1.e: parameter values stay confidential). Empty cells (no contributors) are
published as 0, or as a chosen ``empty_marker``.

All writers here are atomic: the file is written next to its target under a temporary
name and renamed into place only when complete, so a failed run leaves no partial file.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from tablesafe.errors import InputError, TablesafeError
from tablesafe.problem import EMPTY, Problem
from tablesafe.structure.cellkeys import cell_keys, key_text

#: File suffixes the frame writers understand.
TABLE_FORMATS = {".csv": "csv", ".txt": "csv", ".parquet": "parquet", ".pq": "parquet", ".xlsx": "excel"}


def publication_frame(
    codes: pd.DataFrame,
    value: np.ndarray,
    withheld: np.ndarray,
    response: str,
    *,
    empty: np.ndarray | None = None,
    marker: str | None = None,
    empty_marker: str | None = None,
) -> pd.DataFrame:
    """Build the publication table.

    Args:
        codes: one row per cell, a column per dimension (total codes for totals).
        value: cell values.
        withheld: True for every withheld cell (primary and secondary alike).
        response: name of the value column (the response variable's name).
        empty: True for empty cells (no contributors); they are published as 0.
        marker: text written for withheld cells; ``None`` leaves them empty (NA).
        empty_marker: text written for empty cells instead of 0 (e.g. ``"-"``).

    Returns:
        A frame with the dimension columns then ``response``. Values are integers when
        every published value is whole, else floats. With a marker the value column holds
        text.
    """
    if response in codes.columns:
        raise InputError(f"the response name {response!r} is also a dimension name", column=response)
    value = np.asarray(value, dtype=float)
    withheld = np.asarray(withheld, dtype=bool)
    if len(value) != len(codes) or len(withheld) != len(codes):
        raise ValueError("codes, value and withheld differ in length")
    empty = np.zeros(len(value), dtype=bool) if empty is None else np.asarray(empty, dtype=bool)
    shown = np.where(empty, 0.0, stable_values(value))
    published = ~withheld
    integral = bool(np.all(np.isfinite(shown[published])) and np.all(shown[published] == np.round(shown[published])))
    if integral:
        col = pd.array(np.round(shown).astype("int64"), dtype="Int64")
        col[withheld] = pd.NA
    else:
        col = pd.array(shown, dtype="Float64")
        col[withheld] = pd.NA
    frame = codes.reset_index(drop=True).copy()
    for c in frame.columns:
        frame[c] = frame[c].astype(str)
    if marker is None and empty_marker is None:
        frame[response] = col
        return frame
    text = number_text(col)
    if marker is not None:
        text[withheld] = marker
    if empty_marker is not None:
        text[empty & ~withheld] = empty_marker
    frame[response] = text
    return frame


def number_text(values: Any) -> pd.Series:
    """Published numbers as text, by one rule for every cell: whole numbers without a
    decimal point (``4373664``, ``0``), other numbers in the shortest form that reads back
    as the same number (``245655.8``, ``3712781.99``); missing values stay missing."""
    col = pd.array(values, dtype="Float64")
    missing = np.asarray(col.isna(), dtype=bool)
    data = col.to_numpy(dtype=float, na_value=0.0)
    texts = []
    for v, gone in zip(data, missing, strict=True):
        if gone:
            texts.append(None)
            continue
        t = repr(float(v) + 0.0)  # + 0.0: no "-0"
        texts.append(t[:-2] if t.endswith(".0") else t)
    return pd.Series(texts, dtype="string")


def unlisted_cells(problem: Problem) -> np.ndarray:
    """Cells a publication leaves out: those of a declared missing code
    (:attr:`Problem.declared_missing`, e.g. the missing codes of tau-ARGUS metadata) whose
    cells are all empty, because no record carries the code."""
    out = np.zeros(problem.n, dtype=bool)
    if not problem.declared_missing or problem.codes is None:
        return out
    empty = problem.status == EMPTY
    for dim, codes in problem.declared_missing.items():
        if dim not in problem.codes.columns:
            continue
        column = problem.codes[dim].astype(str).str.strip().to_numpy()
        for code in codes:
            cells = column == code
            if cells.any() and empty[cells].all():
                out |= cells
    return out


def withheld_in(publication: pd.DataFrame, problem: Problem, codes: pd.DataFrame) -> np.ndarray:
    """The withheld cells of a publication read back (:func:`read_publication`), checked
    against the table: every published row a cell of it (``codes``, one row per cell) with
    the value of the data, and every cell listed (:func:`unlisted_cells` aside).

    Raises:
        InputError: naming the file, line and cell at fault.
    """
    source = publication.attrs.get("file")  # set by read_publication
    dims = list(codes.columns)
    key_t = cell_keys(codes, dims)
    key_p = cell_keys(publication, dims)
    pos = {k: i for i, k in enumerate(key_t)}
    withheld = np.zeros(problem.n, dtype=bool)
    seen = np.zeros(problem.n, dtype=bool)
    pv = publication["value"].to_numpy(dtype=float)
    pw = publication["withheld"].to_numpy(dtype=bool)
    for r, k in enumerate(key_p):
        i = pos.get(k)
        if i is None:
            raise InputError("the publication has a cell the table does not have", file=source, line=r + 2,
                             code=key_text(k))
        seen[i] = True
        withheld[i] = pw[r]
        if not pw[r] and problem.status[i] != EMPTY:
            tol = 1e-6 * max(1.0, abs(problem.value[i]))
            if abs(pv[r] - problem.value[i]) > max(tol, 0.5 if float(pv[r]).is_integer() else tol):
                raise InputError(
                    f"the publication shows {pv[r]:g} for a cell whose value in the data is "
                    f"{problem.value[i]:g}; it was made from other data or other options",
                    file=source,
                    line=r + 2,
                    code=key_text(k),
                )
    seen |= unlisted_cells(problem)  # empty cells of a missing code no record carries
    if not seen.all():
        i = int(np.flatnonzero(~seen)[0])
        raise InputError(
            f"the publication lacks {int((~seen).sum())} cell(s) of the table, e.g. {problem.names[i]}",
            file=source,
        )
    return withheld


def interval_columns(frame: pd.DataFrame, low: np.ndarray, high: np.ndarray, response: str) -> pd.DataFrame:
    """``frame`` with the published intervals of the withheld cells as two columns after
    the response, ``low`` and ``high`` (``<response>_low`` / ``_high`` when a column of
    that name exists), empty for published cells; whole numbers as integers."""
    out = frame.copy()
    names = ("low", "high") if not {"low", "high"} & set(frame.columns) else (f"{response}_low", f"{response}_high")
    for name, ends in zip(names, (low, high)):
        v = stable_values(np.asarray(ends, dtype=float))
        known = ~np.isnan(v)
        if np.all(np.isfinite(v[known])) and np.all(v[known] == np.round(v[known])):
            out[name] = pd.array(np.where(known, np.round(v), 0).astype(np.int64), dtype="Int64")
            out.loc[~known, name] = pd.NA
        else:
            out[name] = v
    return out


def stable_values(value: np.ndarray, digits: int = 12) -> np.ndarray:
    """Values rounded to ``digits`` significant digits.

    Sums of the same numbers in a different order may differ in the last bits; rounding
    far below any published precision makes files byte-identical across runs.
    """
    v = np.asarray(value, dtype=float)
    out = v.copy()
    fin = np.isfinite(v) & (v != 0)
    mag = np.floor(np.log10(np.abs(v[fin])))
    scale = 10.0 ** (digits - 1 - mag)
    out[fin] = np.round(v[fin] * scale) / scale
    return out


def read_publication(
    path: str | Path,
    dims: list[str],
    response: str | None = None,
    *,
    marker: str | None = None,
) -> pd.DataFrame:
    """Read a publication file back: codes per dimension and a ``withheld`` flag.

    Withheld cells are those with an empty value (or ``marker``). Returns a frame with the
    dimension columns (as text), ``value`` (NaN where withheld) and ``withheld``; its
    ``attrs["file"]`` is the file name.
    """
    from tablesafe.io.frames import check_input_file

    path = check_input_file(path, "publication file")
    fmt = table_format(path)
    try:
        if fmt == "csv":
            df = pd.read_csv(path, dtype=str, keep_default_na=False)
        elif fmt == "parquet":
            df = pd.read_parquet(path)
        else:
            df = pd.read_excel(path, dtype=str, keep_default_na=False)
    except FileNotFoundError:
        raise InputError("publication file not found", file=str(path)) from None
    except (ValueError, OSError) as exc:
        raise InputError(f"cannot read publication file: {exc}", file=str(path)) from None
    missing = [d for d in dims if d not in df.columns]
    if missing:
        raise InputError(
            f"the publication file has no column for dimension(s) {', '.join(missing)}; "
            f"its columns are {', '.join(map(str, df.columns))}",
            file=str(path),
            column=missing[0],
        )
    if response is None or response not in df.columns:
        rest = [c for c in df.columns if c not in dims]
        if len(rest) != 1:
            raise InputError(
                "cannot tell which column of the publication holds the values "
                f"(candidates: {', '.join(map(str, rest)) or 'none'})",
                file=str(path),
            )
        response = rest[0]
    raw = df[response].astype("string").fillna("").str.strip()
    withheld = raw == ""
    if marker:
        withheld |= raw == marker
    num = pd.to_numeric(raw.where(~withheld, None), errors="coerce")
    bad = (~withheld) & num.isna()
    if bad.any():
        i = int(np.flatnonzero(bad.to_numpy())[0])
        raise InputError(
            f"non-numeric value {raw.iloc[i]!r} in the publication (use --marker if withheld cells "
            "carry a marker)",
            file=str(path),
            line=i + 2 if fmt == "csv" else None,
            column=response,
        )
    out = pd.DataFrame({d: df[d].astype(str).str.strip() for d in dims})
    out["value"] = num.to_numpy(dtype=float, na_value=np.nan)
    out["withheld"] = withheld.to_numpy(dtype=bool)
    out.attrs["file"] = str(path)  # for errors found later (audit_publication)
    return out


# ---------------------------------------------------------------------------- writers
def table_format(path: str | Path) -> str:
    """The table format implied by a file name (``csv``, ``parquet`` or ``excel``)."""
    suffix = Path(path).suffix.lower()
    if suffix not in TABLE_FORMATS:
        raise InputError(
            f"unknown table file type {suffix or '(none)'!r}; use .csv, .parquet or .xlsx", file=str(path)
        )
    return TABLE_FORMATS[suffix]


def _write_any(frame: pd.DataFrame, path: Path, fmt: str, sheet: str) -> None:
    if fmt == "csv":
        frame.to_csv(path, index=False, lineterminator="\n")
    elif fmt == "parquet":
        frame.to_parquet(path, index=False)
    else:
        from tablesafe.io.excel import write_excel

        write_excel(frame, path, sheet=sheet)


#: Output keys whose files are tables (format from the suffix).
TABLE_OUTPUTS = ("out", "cells", "contributions")


def _existing_folder(path: Path) -> Path:
    """The nearest existing ancestor of ``path`` (the folder a new file would go under)."""
    folder = path.absolute().parent
    while not os.path.exists(folder) and folder != folder.parent:  # os.path: never raises
        folder = folder.parent
    return folder


def check_output_paths(targets: Mapping[str, str | Path | None]) -> None:
    """Check output files before any work starts, so a run never fails at its end.

    Every target must be a file name (not a folder) short enough for the file system,
    under a folder that exists and is writable, or that can be created under one;
    tables (``out``, ``cells``) need a known suffix; no two targets may be the same file.

    Raises:
        InputError: naming the output file at fault.
    """
    seen: dict[Path, str] = {}
    for key, target in targets.items():
        if target is None:
            continue
        final = Path(target)
        name = str(final)
        folder = _existing_folder(final)
        try:
            name_max = os.pathconf(folder, "PC_NAME_MAX")
        except (OSError, ValueError):
            name_max = 255
        too_long = [part for part in final.parts if len(os.fsencode(part)) > name_max]
        if too_long:
            raise InputError(
                f"the output file name is too long ({len(os.fsencode(too_long[0]))} bytes; the file system "
                f"allows {name_max}): choose a shorter name",
                file=name,
            )
        if os.path.isdir(final) or not final.name:
            raise InputError("the output path is a folder; give a file name", file=name)
        if not os.path.isdir(folder):
            raise InputError(f"cannot create the output folder: {folder} is a file, not a folder", file=name)
        if not os.access(folder, os.W_OK | os.X_OK):
            raise InputError(f"cannot write the output file: the folder {folder} is not writable", file=name)
        if key in TABLE_OUTPUTS:
            table_format(final)
        resolved = final.absolute()
        if resolved in seen:
            raise InputError(f"the same file is given for two outputs ({seen[resolved]} and {key})", file=name)
        seen[resolved] = key


@contextmanager
def staged_files(targets: Mapping[str, str | Path | None]) -> Iterator[dict[str, Path]]:
    """Stage several output files and publish them together.

    Yields a dict of temporary paths (one per non-None target, in the target's folder).
    When the block completes, every temporary file is renamed onto its target; when it
    raises, every temporary file is removed and no target is touched. The targets are
    checked first (:func:`check_output_paths`).
    """
    check_output_paths(targets)
    temps: dict[str, Path] = {}
    finals: dict[str, Path] = {}
    try:
        for key, target in targets.items():
            if target is None:
                continue
            final = Path(target)
            if final.parent and not final.parent.exists():
                try:
                    final.parent.mkdir(parents=True, exist_ok=True)
                except OSError as exc:
                    raise InputError(f"cannot create the output folder: {exc.strerror}", file=str(final)) from None
            # the staged name stays short whatever the target's length
            fd, tmp = tempfile.mkstemp(prefix=f".{final.stem[:64]}.", suffix=".part" + final.suffix[:16],
                                       dir=final.parent)
            os.close(fd)
            os.chmod(tmp, 0o666 & ~_umask())
            temps[key] = Path(tmp)
            finals[key] = final
        yield temps
    except BaseException:
        for tmp in temps.values():
            tmp.unlink(missing_ok=True)
        raise
    for key, tmp in temps.items():
        os.replace(tmp, finals[key])


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def write_frame(frame: pd.DataFrame, path: str | Path, *, sheet: str = "table") -> None:
    """Write a frame atomically as CSV, Parquet or Excel (chosen by the file suffix)."""
    fmt = table_format(path)
    with staged_files({"out": path}) as tmp:
        try:
            _write_any(frame, tmp["out"], fmt, sheet)
        except OSError as exc:
            raise TablesafeError(f"cannot write {path}: {exc.strerror or exc}") from None


def write_frame_to(frame: pd.DataFrame, tmp: Path, final: str | Path, *, sheet: str = "table") -> None:
    """Write a frame to a staged temporary path in the format the final name implies."""
    _write_any(frame, tmp, table_format(final), sheet)


def write_publication_to(frame: pd.DataFrame, response: str, tmp: Path, final: str | Path) -> None:
    """Write a publication to a staged temporary path; in a CSV file its numbers follow
    :func:`number_text` (Parquet and Excel keep them as numbers)."""
    fmt = table_format(final)
    if fmt == "csv" and response in frame.columns and pd.api.types.is_float_dtype(frame[response].dtype):
        frame = frame.assign(**{response: number_text(frame[response]).to_numpy()})
    _write_any(frame, tmp, fmt, "publication")


def write_text_to(text: str | bytes, tmp: Path) -> None:
    """Write text (UTF-8) or bytes to a staged temporary path."""
    if isinstance(text, bytes):
        tmp.write_bytes(text)
    else:
        tmp.write_text(text, encoding="utf-8")

