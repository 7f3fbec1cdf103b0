"""Tabular input: cells given directly (CSV, frames, tau-ARGUS ``.tab`` with ``.rda``).

Bottom-level cells (every code a leaf of its hierarchy) define the table; totals may be
given or left out. Missing totals are summed from the bottom-level cells. Given totals
must add up (a :class:`NonAdditiveError` names the first relation that does not) unless
``recompute_totals=True``, which replaces them by the sums.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import scipy.sparse as sp

from tablesafe.celltable import CellTable
from tablesafe.errors import InputError, NonAdditiveError
from tablesafe.io.frames import (
    check_encoding,
    check_input_file,
    check_unique_columns,
    csv_header,
    decode_error,
    parse_numbers,
)
from tablesafe.io.tauargus import TabularInput
from tablesafe.structure import CompiledModel, Dimension, Hierarchy, TableStructure, compile_tables
from tablesafe.tabulate.dims import DimSpec, as_dimspecs

_TAU_STATUS = {"S": "S", "U": "U", "P": "P", "M": "M", "E": "Z", "Z": "Z", "A": "A"}


def _leaf_matrix(h: Hierarchy) -> sp.csr_matrix:
    """(codes x codes) matrix with 1 where the column is a leaf below (or equal to) the row."""
    rows, cols = [], []
    for i in range(len(h)):
        if not h.is_leaf(i):
            continue
        j = i
        while j != -1:
            rows.append(j)
            cols.append(i)
            j = h.parent[j]
    return sp.csr_matrix((np.ones(len(rows)), (rows, cols)), shape=(len(h), len(h)))


def aggregation_matrix(model: CompiledModel) -> sp.csr_matrix:
    """(cells x cells) 0/1 matrix: row i marks the bottom-level cells that add up to cell i.

    Valid for a single table whose cells are the C-order product of its dimensions.
    """
    mats = [_leaf_matrix(d.hierarchy) for d in model.dims]
    out = mats[0]
    for m in mats[1:]:
        out = sp.kron(out, m, format="csr")
    return out.tocsr()


def _merge_tops(agg: sp.csr_matrix, top: np.ndarray, k: int) -> np.ndarray:
    """Per cell, the ``k`` largest entries among the top lists of its bottom-level cells."""
    coo = agg.tocoo()
    cell = np.repeat(coo.row, top.shape[1])
    vals = top[coo.col].reshape(-1)
    keep = ~np.isnan(vals)
    cell, vals = cell[keep], vals[keep]
    order = np.lexsort((-vals, cell))
    cell, vals = cell[order], vals[order]
    start = np.searchsorted(cell, cell, side="left")
    rank = np.arange(len(cell)) - start
    sel = rank < k
    out = np.full((agg.shape[0], k), np.nan)
    out[cell[sel], rank[sel]] = vals[sel]
    return out


def _read(data: Any, encoding: str | None = None) -> tuple[pd.DataFrame, str | None, int]:
    """A frame of strings/numbers, the file name and the line of its first data row.

    A CSV file is decoded with ``encoding`` (default utf-8); a column named twice is refused.
    """
    if isinstance(data, TabularInput):
        return data.frame, str(data.path), 1
    if isinstance(data, (str, Path)):
        path = check_input_file(data, "tabular file")
        enc = check_encoding(encoding)
        try:
            check_unique_columns(csv_header(path, enc), str(path))
            frame = pd.read_csv(path, dtype=str, keep_default_na=False, skipinitialspace=True, encoding=enc)
        except pd.errors.EmptyDataError:
            raise InputError("empty input: the tabular file has no cells", file=str(path)) from None
        except UnicodeDecodeError:
            raise decode_error(str(path), enc) from None
        frame.columns = [c.strip() for c in frame.columns]
        return frame, str(path), 2
    mod = type(data).__module__
    if mod.startswith(("polars", "pyarrow")):
        data = data.to_pandas()
    if not isinstance(data, pd.DataFrame):
        raise InputError(f"cannot read tabular data of type {type(data).__name__}")
    check_unique_columns(list(data.columns), None)
    return data, None, 1


def _column_numbers(frame: pd.DataFrame, col: str, file: str | None, first_line: int, *,
                    count: bool = False) -> np.ndarray:
    """The numbers of a column of tabular input (NaN for blank or ``-``), refusing
    non-numeric and infinite values and, for a contributor count, negative ones; errors
    name the file, line (``first_line`` is that of the first row), column and value."""

    def at(message: str, i: int) -> InputError:
        return InputError(message, file=file, line=i + first_line, column=col, code=str(frame[col].iloc[i]).strip())

    s = frame[col]
    if pd.api.types.is_numeric_dtype(s):
        out = s.to_numpy(dtype=float)
    else:
        try:
            out = parse_numbers(s.astype(str), col, file or "<frame>")
        except InputError as exc:  # re-point the line at the file's line
            line = None if exc.line is None else exc.line - 1 + first_line
            raise InputError("non-numeric value", file=file, line=line, column=col, code=exc.code) from None
    inf = np.flatnonzero(np.isinf(out))
    if len(inf):
        raise at(f"{len(inf)} infinite value(s) (values must be finite numbers); the first is", int(inf[0]))
    bad = np.flatnonzero(out < 0) if count else []
    if len(bad):
        raise at(f"{len(bad)} negative contributor count(s) in the frequency column (a number of contributors "
                 "cannot be negative); the first is", int(bad[0]))
    return out


@dataclass
class _Roles:
    """The columns of tabular input beside the codes, by role (None: not given)."""

    response: str | None
    frequency: str | None = None
    cost: str | None = None
    status: str | None = None
    lpl: str | None = None
    upl: str | None = None
    shadow: str | None = None
    top: list[str] = field(default_factory=list)

    def named(self) -> list[tuple[str, str | None]]:
        """``(role, column)`` for every role, the top columns last."""
        single = [(f, getattr(self, f)) for f in _ROLE_FIELDS]
        return [("response", self.response), *single, *(("top", t) for t in self.top)]


_ROLE_FIELDS = ("frequency", "cost", "status", "lpl", "upl", "shadow")
_METADATA_ROLES = {"FREQUENCY": "frequency", "COSTVAR": "cost", "STATUS": "status", "LOWERPL": "lpl",
                   "UPPERPL": "upl", "SHADOW": "shadow"}


@dataclass
class _Placed:
    """Where the given rows sit in the compiled table."""

    model: CompiledModel
    cell: np.ndarray      # the cell of each given row
    leaf: np.ndarray      # cells with a leaf code in every dimension
    leaf_agg: sp.csr_matrix  # leaf cells -> every cell (sums)

    def rollup(self, v: np.ndarray) -> np.ndarray:
        """Every cell's sum of ``v`` over its leaf cells."""
        return self.leaf_agg @ v[self.leaf]


def from_tabular(
    data: Any,
    dims: Sequence[DimSpec | str] | None = None,
    response: str | None = None,
    *,
    frequency: str | None = None,
    top: Sequence[str] | None = None,
    cost: str | None = None,
    status: str | None = None,
    lpl: str | None = None,
    upl: str | None = None,
    shadow: str | None = None,
    recompute_totals: bool = False,
    missing_code: str | None = None,
    top_k: int = 4,
    encoding: str | None = None,
) -> CellTable:
    """A :class:`CellTable` from cells given directly.

    Args:
        data: a CSV path, a pandas/polars/pyarrow frame, or
            :func:`tablesafe.io.tauargus.read_tab` output (then the ``.rda`` supplies the
            dimensions, hierarchies and roles: ``<FREQUENCY>``, ``<MAXSCORE>``,
            ``<COSTVAR>``, ``<STATUS>``, ``<LOWERPL>``, ``<UPPERPL>``, ``<SHADOW>``).
        dims: dimension names or :class:`DimSpec`.
        response: the cell value column.
        frequency: number of contributors per cell (without it every given bottom-level
            cell counts as one).
        top: columns holding the largest contributions (largest first).
        cost, status, lpl, upl, shadow: optional columns, kept in ``CellTable.extra``
            under ``cost``, ``status``, ``lpl``, ``upl``, ``shadow`` (and ``frequency``).
            tau-ARGUS statuses are mapped to tablesafe letters (safe S, unsafe U,
            protected P, empty E -> Z); cells computed as totals get status "".
        recompute_totals: replace given totals by the sums of their parts instead of
            checking them.
        missing_code: map codes unknown to a hierarchy to this code.
        top_k: number of top contributions kept.
        encoding: text encoding of a CSV file (default utf-8).

    Blank or ``-`` values mark empty cells (value 0, no contributors). Numbers must be
    finite; contributor counts (``frequency``) whole and not negative.
    """
    frame, file, first_line = _read(data, encoding)
    roles = _Roles(response, frequency, cost, status, lpl, upl, shadow, list(top or []))
    status_map = dict(_TAU_STATUS)
    if isinstance(data, TabularInput):
        specs = _from_metadata(data, dims, roles, status_map, given_top=top is not None)
    else:
        if dims is None or response is None:
            raise InputError("tabular input needs dims and response (or a .tab with its .rda)", file=file)
        specs = as_dimspecs(dims)
    _check_columns(frame, [s.name for s in specs], roles, file)
    assert roles.response is not None

    def num(col: str) -> np.ndarray:
        return _column_numbers(frame, col, file, first_line)

    placed = _place(frame, specs, data, missing_code, file, first_line)
    n = placed.model.size
    value_in = num(roles.response)
    present = ~np.isnan(value_in)
    given = np.zeros(n, dtype=bool)
    given[placed.cell[present]] = True
    value = np.zeros(n)
    value[placed.cell[present]] = value_in[present]
    summed = placed.rollup(value)
    if recompute_totals:
        value = np.where(placed.leaf, value, summed)
    else:
        value = np.where(given | placed.leaf, value, summed)
        _check_additive(placed.model, value, file)

    keep = np.zeros(n, dtype=bool) if recompute_totals else given
    if roles.frequency is not None:
        f = np.zeros(n)
        fin = _column_numbers(frame, roles.frequency, file, first_line, count=True)
        f[placed.cell] = np.nan_to_num(fin)
        f[placed.cell[~present]] = 0
        records = np.where(keep | placed.leaf, f, placed.rollup(f)).astype(np.int64)
    else:
        records = np.where(placed.leaf, given.astype(np.int64), 0)
        records = np.where(placed.leaf, records, placed.rollup(records.astype(float)).astype(np.int64))
    k = int(top_k)
    tops, top_n = _tops(placed, [num(t) for t in roles.top], keep, records, k)
    extra = _extras(frame, roles, placed, keep, records, status_map, num)
    return CellTable(
        model=placed.model,
        response=roles.response,
        value=value,
        records=records,
        contributors=records.copy(),
        top=tops,
        top_n=top_n.astype(np.int64),
        top_weight=np.ones((n, k)),
        top_request=np.zeros((n, k), dtype=bool),
        top_waived=np.zeros((n, k), dtype=bool),
        nonwaived_top=tops.copy(),
        abs_top=-np.sort(-np.abs(tops), axis=1),
        neg_count=np.zeros(n, dtype=np.int64),
        neg_sum=np.zeros(n),
        weight_sum=records.astype(float),
        unweighted_value=value.copy(),
        extra=extra,
        top_given=bool(roles.top),
    )


def _from_metadata(data: TabularInput, dims: Sequence[DimSpec | str] | None, roles: _Roles,
                   status_map: dict[str, str], *, given_top: bool) -> list[DimSpec]:
    """A ``.tab`` file's dimensions (with the ``.rda``'s hierarchies and total codes); the
    roles the caller left out are filled in from the metadata, and ``status_map`` learns
    the file's own status codes."""
    md = data.metadata
    for key, role in _METADATA_ROLES.items():
        if getattr(roles, role) is None and md.with_role(key):
            setattr(roles, role, md.with_role(key)[0])
    if not given_top and md.with_role("MAXSCORE"):
        roles.top = list(md.with_role("MAXSCORE"))
    specs = as_dimspecs(dims if dims is not None else data.dims)
    for i, s in enumerate(specs):
        if s.name in md and s.hierarchy is None and s.codelist is None:
            tot = md[s.name].arg("TOTCODE") or s.total
            specs[i] = DimSpec(s.name, md.hierarchy(s.name, total=tot), total=tot)
    if roles.response is None:
        used = {getattr(roles, f) for f in _ROLE_FIELDS} | set(roles.top)
        nums = [v.name for v in md.variables if v.is_numeric and v.name not in used and not v.is_explanatory]
        if not nums:
            raise InputError("no response variable in the metadata", file=str(md.path))
        roles.response = nums[0]
    for code, letter in (("SAFE", "S"), ("UNSAFE", "U"), ("PROTECT", "P"), ("EMPTY", "Z")):
        if code in md.status_codes:
            status_map[md.status_codes[code].upper()] = letter
    return specs


def _check_columns(frame: pd.DataFrame, names: list[str], roles: _Roles, file: str | None) -> None:
    """Refuse a column the input lacks, and an input without rows."""
    columns = list(frame.columns)
    for role, col in [("dimension", n) for n in names] + roles.named():
        if col is not None and col not in columns:
            raise InputError(f"unknown {role} column {col!r}; the input has the columns "
                             f"{', '.join(map(repr, columns))}", file=file, column=col)
    if len(frame) == 0:
        raise InputError("empty input: no cells given", file=file)


def _place(frame: pd.DataFrame, specs: list[DimSpec], data: Any, missing_code: str | None,
           file: str | None, first_line: int) -> _Placed:
    """The table the given codes span, and the cell of each row (no cell given twice)."""
    names = [s.name for s in specs]
    codes = {nm: frame[nm].astype(str).str.strip().to_numpy(dtype=object) for nm in names}
    hierarchies = {s.name: _hierarchy(s, codes[s.name], data, missing_code) for s in specs}
    model = compile_tables(TableStructure(tuple(Dimension(nm, hierarchies[nm]) for nm in names)))
    shape = tuple(len(hierarchies[nm]) for nm in names)
    idx = []
    for s in specs:
        h = hierarchies[s.name]
        pos = pd.Series(codes[s.name]).map(h._index)
        bad = pos.isna().to_numpy()
        if bad.any():
            if missing_code is not None:
                pos[bad] = h.index(str(missing_code).strip())
            else:
                i = int(np.flatnonzero(bad)[0])
                raise InputError(f"dimension {s.name!r}: code {codes[s.name][i]!r} is not in its hierarchy",
                                 file=file, line=i + first_line, column=s.name, code=codes[s.name][i])
        idx.append(pos.to_numpy(dtype=np.int64))
    cell = np.ravel_multi_index(tuple(idx), shape)
    order = np.argsort(cell, kind="stable")
    dup = np.flatnonzero(np.diff(cell[order]) == 0)
    if len(dup):
        a, b = sorted((order[dup[0]], order[dup[0] + 1]))
        raise InputError(f"cell {model.cell_names()[cell[a]]!r} is given twice (lines {a + first_line} and "
                         f"{b + first_line})", file=file, line=b + first_line)
    leaf = np.ones(model.size, dtype=bool)
    for j, nm in enumerate(names):
        h = hierarchies[nm]
        is_leaf = np.array([h.is_leaf(i) for i in range(len(h))])
        leaf &= is_leaf[np.indices(shape).reshape(len(shape), -1)[j]]
    return _Placed(model, cell, leaf, aggregation_matrix(model)[:, np.flatnonzero(leaf)])


def _hierarchy(spec: DimSpec, codes: np.ndarray, data: Any, missing_code: str | None) -> Hierarchy:
    """One dimension's hierarchy from its spec and the codes the input gives."""
    present = [c for c in dict.fromkeys(codes) if c != spec.total]
    if spec.needs_data_codes() and spec.hierarchy is not None:
        parts = str(spec.hierarchy).partition(":")[2].replace(",", " ").split()
        full = int(sum(int(x) for x in parts)) if str(spec.hierarchy).startswith("digits") else max(
            int(x) for x in parts)
        present = [c for c in present if len(c) == full]
    extra_top = [str(missing_code).strip()] if missing_code is not None else []
    if isinstance(data, TabularInput) and spec.name in data.metadata:
        extra_top += list(data.metadata[spec.name].missing)
    return spec.build(present, extra_top)


def _tops(placed: _Placed, columns: list[np.ndarray], keep: np.ndarray, records: np.ndarray,
          k: int) -> tuple[np.ndarray, np.ndarray]:
    """The ``k`` largest contributions per cell (given, or merged from the leaf cells for
    totals not given) and how many of them are real."""
    n = placed.model.size
    tops = np.full((n, k), np.nan)
    if columns:
        tin = np.column_stack(columns)[:, :k]
        tin = -np.sort(-np.nan_to_num(tin, nan=-np.inf), axis=1)
        tin[np.isinf(tin)] = np.nan
        tops[placed.cell, : tin.shape[1]] = tin
        merged = _merge_tops(placed.leaf_agg, np.where(placed.leaf[:, None], tops, np.nan)[placed.leaf], k)
        fill = ~keep & ~placed.leaf
        tops[fill] = merged[fill]
    n_top = (~np.isnan(tops)).sum(axis=1)
    top_n = np.minimum(np.minimum(n_top, records), k) if columns else np.minimum(records, k)
    return np.nan_to_num(tops), top_n


def _extras(frame: pd.DataFrame, roles: _Roles, placed: _Placed, keep: np.ndarray, records: np.ndarray,
            status_map: dict[str, str], num: Callable[[str], np.ndarray]) -> dict[str, np.ndarray]:
    """The optional columns per cell: frequency, cost and shadow (summed for totals not
    given), levels, and statuses in tablesafe letters ("" for totals not given)."""
    n = placed.model.size
    extra: dict[str, np.ndarray] = {}
    if roles.frequency is not None:
        extra["frequency"] = records.astype(float)
    for name in ("cost", "shadow", "lpl", "upl"):
        col = getattr(roles, name)
        if col is not None:
            a = np.zeros(n)
            a[placed.cell] = np.nan_to_num(num(col))
            extra[name] = np.where(keep | placed.leaf, a, placed.rollup(a)) if name in ("cost", "shadow") else a
    if roles.status is not None:
        st = np.full(n, "", dtype=object)
        raw = pd.Series(frame[roles.status]).astype(str).str.strip().str.upper()
        st[placed.cell] = raw.map(lambda c: status_map.get(c, c)).to_numpy(dtype=object)
        extra["status"] = st
    return extra


def _check_additive(model: CompiledModel, value: np.ndarray, file: str | None) -> None:
    """Raise :class:`NonAdditiveError` for the first relation whose total is not its parts' sum."""
    a = model.relations.tocsr()
    resid = a @ value
    scale = abs(a) @ np.abs(value)
    bad = np.flatnonzero(np.abs(resid) > 1e-9 * scale + 1e-6)
    if not len(bad):
        return
    r = int(bad[0])
    s, e = a.indptr[r], a.indptr[r + 1]
    cols, coef = a.indices[s:e], a.data[s:e]
    names = model.cell_names()
    total = int(cols[coef < 0][0])
    parts = cols[coef > 0]
    shown = ", ".join(repr(names[p]) for p in parts[:12]) + (", ..." if len(parts) > 12 else "")
    psum = float(value[parts].sum())
    raise NonAdditiveError(
        f"non-additive input ({len(bad)} relation(s) fail): total cell {names[total]!r} = "
        f"{value[total]:.10g} but its parts {shown} sum to {psum:.10g} (difference "
        f"{value[total] - psum:.10g}); use --recompute-totals (Python: recompute_totals=True) to replace totals by the sums",
        file=file,
    )
