"""Tabular input: cells given directly (CSV, frames, tau-ARGUS ``.tab`` with ``.rda``).

Bottom-level cells (every code a leaf of its hierarchy) define the table; totals may be
given or left out. Missing totals are summed from the bottom-level cells. Given totals
must add up (a :class:`NonAdditiveError` names the first relation that does not) unless
``recompute_totals=True``, which replaces them by the sums.
"""

from __future__ import annotations

from collections.abc import Sequence
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
    status_map = dict(_TAU_STATUS)
    if isinstance(data, TabularInput):
        md = data.metadata
        roles = {"FREQUENCY": "frequency", "COSTVAR": "cost", "STATUS": "status", "LOWERPL": "lpl",
                 "UPPERPL": "upl", "SHADOW": "shadow"}
        given = {"frequency": frequency, "cost": cost, "status": status, "lpl": lpl, "upl": upl, "shadow": shadow}
        for key, role in roles.items():
            if given[role] is None and md.with_role(key):
                given[role] = md.with_role(key)[0]
        frequency, cost, status, lpl, upl, shadow = (given[r] for r in
                                                      ("frequency", "cost", "status", "lpl", "upl", "shadow"))
        if top is None and md.with_role("MAXSCORE"):
            top = md.with_role("MAXSCORE")
        if dims is None:
            dims = data.dims
        specs = as_dimspecs(dims)
        for i, s in enumerate(specs):
            if s.name in md and s.hierarchy is None and s.codelist is None:
                v = md[s.name]
                tot = v.arg("TOTCODE") or s.total
                specs[i] = DimSpec(s.name, md.hierarchy(s.name, total=tot), total=tot)
        if response is None:
            used = {frequency, cost, status, lpl, upl, shadow, *(top or [])}
            nums = [v.name for v in md.variables if v.is_numeric and v.name not in used and not v.is_explanatory]
            if not nums:
                raise InputError("no response variable in the metadata", file=str(md.path))
            response = nums[0]
        for code, letter in (("SAFE", "S"), ("UNSAFE", "U"), ("PROTECT", "P"), ("EMPTY", "Z")):
            if code in md.status_codes:
                status_map[md.status_codes[code].upper()] = letter
    else:
        if dims is None or response is None:
            raise InputError("tabular input needs dims and response (or a .tab with its .rda)", file=file)
        specs = as_dimspecs(dims)
    top = list(top or [])
    names = [s.name for s in specs]
    columns = list(frame.columns)
    for role, col in [("dimension", n) for n in names] + [
        ("response", response), ("frequency", frequency), ("cost", cost), ("status", status),
        ("lpl", lpl), ("upl", upl), ("shadow", shadow)] + [("top", t) for t in top]:
        if col is not None and col not in columns:
            raise InputError(f"unknown {role} column {col!r}; the input has the columns "
                             f"{', '.join(map(repr, columns))}", file=file, column=col)
    if len(frame) == 0:
        raise InputError("empty input: no cells given", file=file)

    def num(col: str) -> np.ndarray:
        return _column_numbers(frame, col, file, first_line)

    codes = {n: frame[n].astype(str).str.strip().to_numpy(dtype=object) for n in names}

    # hierarchies
    hierarchies: dict[str, Hierarchy] = {}
    for s in specs:
        present = [c for c in dict.fromkeys(codes[s.name]) if c != s.total]
        if s.needs_data_codes() and s.hierarchy is not None:
            spec = str(s.hierarchy).partition(":")[2].replace(",", " ").split()
            full = int(sum(int(x) for x in spec)) if str(s.hierarchy).startswith("digits") else max(
                int(x) for x in spec)
            present = [c for c in present if len(c) == full]
        extra_top = [str(missing_code).strip()] if missing_code is not None else []
        if isinstance(data, TabularInput) and s.name in data.metadata:
            extra_top += [m for m in data.metadata[s.name].missing]
        hierarchies[s.name] = s.build(present, extra_top)
    model = compile_tables(TableStructure(tuple(Dimension(n, hierarchies[n]) for n in names)))
    n = model.size
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

    value_in = num(response)
    present = ~np.isnan(value_in)
    given = np.zeros(n, dtype=bool)
    given[cell[present]] = True
    value = np.zeros(n)
    value[cell[present]] = value_in[present]
    leaf = np.ones(n, dtype=bool)
    for j, nm in enumerate(names):
        h = hierarchies[nm]
        is_leaf = np.array([h.is_leaf(i) for i in range(len(h))])
        leaf &= is_leaf[np.indices(shape).reshape(len(shape), -1)[j]]
    agg = aggregation_matrix(model)
    leaf_agg = agg[:, np.flatnonzero(leaf)]

    def rollup(v: np.ndarray) -> np.ndarray:
        return leaf_agg @ v[leaf]

    summed = rollup(value)
    if recompute_totals:
        value = np.where(leaf, value, summed)
    else:
        value = np.where(given | leaf, value, summed)
        _check_additive(model, value, file)

    keep = np.zeros(n, dtype=bool) if recompute_totals else given
    if frequency is not None:
        f = np.zeros(n)
        fin = _column_numbers(frame, frequency, file, first_line, count=True)
        f[cell] = np.nan_to_num(fin)
        f[cell[~present]] = 0
        f = np.where(keep | leaf, f, rollup(f))
        records = f.astype(np.int64)
    else:
        records = np.where(leaf, given.astype(np.int64), 0)
        records = np.where(leaf, records, rollup(records.astype(float)).astype(np.int64))

    k = int(top_k)
    tops = np.full((n, k), np.nan)
    if top:
        tin = np.column_stack([num(t) for t in top])[:, :k]
        tin = -np.sort(-np.nan_to_num(tin, nan=-np.inf), axis=1)
        tin[np.isinf(tin)] = np.nan
        tops[cell, : tin.shape[1]] = tin
        merged = _merge_tops(leaf_agg, np.where(leaf[:, None], tops, np.nan)[leaf], k)
        fill = ~keep & ~leaf
        tops[fill] = merged[fill]
    n_top = (~np.isnan(tops)).sum(axis=1)
    tops = np.nan_to_num(tops)
    top_n = np.minimum(np.minimum(n_top, records), k) if top else np.minimum(records, k)
    abs_top = -np.sort(-np.abs(tops), axis=1)

    extra: dict[str, np.ndarray] = {}
    if frequency is not None:
        extra["frequency"] = records.astype(float)
    for name, col in (("cost", cost), ("shadow", shadow)):
        if col is not None:
            a = np.zeros(n)
            a[cell] = np.nan_to_num(num(col))
            extra[name] = np.where(keep | leaf, a, rollup(a))
    for name, col in (("lpl", lpl), ("upl", upl)):
        if col is not None:
            a = np.zeros(n)
            a[cell] = np.nan_to_num(num(col))
            extra[name] = a
    if status is not None:
        st = np.full(n, "", dtype=object)
        raw = pd.Series(frame[status]).astype(str).str.strip().str.upper()
        st[cell] = raw.map(lambda c: status_map.get(c, c)).to_numpy(dtype=object)
        extra["status"] = st
    return CellTable(
        model=model,
        response=response,
        value=value,
        records=records,
        contributors=records.copy(),
        top=tops,
        top_n=top_n.astype(np.int64),
        top_weight=np.ones((n, k)),
        top_request=np.zeros((n, k), dtype=bool),
        top_waived=np.zeros((n, k), dtype=bool),
        nonwaived_top=tops.copy(),
        abs_top=abs_top,
        neg_count=np.zeros(n, dtype=np.int64),
        neg_sum=np.zeros(n),
        weight_sum=records.astype(float),
        unweighted_value=value.copy(),
        extra=extra,
        top_given=bool(top),
    )


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
