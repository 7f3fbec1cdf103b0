"""Tabulation of microdata into a :class:`CellTable`, with DuckDB doing the aggregation.

Units are holdings when a holding variable is given (a holding's records in a cell are
summed into one contribution), otherwise records. Every statistic of every cell, at
every hierarchy level of every dimension, comes from one grouped query:

* without holdings each record is a unit, and one ``GROUPING SETS`` aggregate over the
  records gives sums, counts and the top-K records of all cells;
* with holdings the records are first summed per (bottom-level cell, holding); a
  ``GROUPING SETS`` aggregate then sums those per (cell, holding) at every level, and a
  last aggregate per cell gives counts, sums and the top-K holdings.

Top contributions are ordered by value, then (for ties) by weight, request and waiver
flags, so equal inputs always give equal outputs.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

import numpy as np
import pandas as pd

from tablesafe.celltable import CellTable
from tablesafe.errors import InputError
from tablesafe.tabulate.dims import DimSpec
from tablesafe.tabulate.plan import Plan, connect, prepare
from tablesafe.tabulate.rollup import TopLists, merge_tops, rollup


@contextmanager
def _steps(progress: bool, total: int) -> Iterator[Any]:
    """A rich progress bar over the tabulation steps (or a no-op)."""
    if not progress:
        class _Null:
            def step(self, _text: str) -> None:
                pass

        yield _Null()
        return
    from rich.progress import BarColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    with Progress(SpinnerColumn(), TextColumn("{task.description}"), BarColumn(), TimeElapsedColumn(),
                  transient=False) as bar:
        task = bar.add_task("tabulating", total=total)

        class _Bar:
            first = True

            def step(self, text: str) -> None:
                if not self.first:
                    bar.advance(task)
                self.first = False
                bar.update(task, description=text)

        b = _Bar()
        yield b
        bar.update(task, completed=total, description="tabulated")


def tabulate(
    data: Any,
    dims: Sequence[DimSpec | str | tuple[str, Any]] | Mapping[str, Any],
    response: str,
    *,
    tables: Sequence[Sequence[str]] | None = None,
    holding: str | None = None,
    weight: str | None = None,
    waiver: str | None = None,
    request: str | None = None,
    top_k: int = 4,
    missing_code: str | None = None,
    extra: Sequence[str] | None = None,
    progress: bool = False,
    encoding: str | None = None,
) -> CellTable:
    """Tabulate microdata: one row per cell of the table(s), totals at every level included.

    Args:
        data: a pandas, polars or pyarrow frame; a CSV or Parquet path (scanned by DuckDB,
            never loaded whole); or tau-ARGUS microdata from
            :func:`tablesafe.io.tauargus.read_asc` (declared missing codes and hierarchies
            of the ``.rda`` are then used).
        dims: the dimensions (1 to 6) in the forms :func:`tablesafe.protect` takes: names,
            ``"name=hierarchy"`` strings, ``(name, hierarchy)`` pairs, :class:`DimSpec`,
            or a mapping ``{name: hierarchy}`` (hierarchy as in :class:`DimSpec`).
        response: numeric column to sum.
        tables: linked tables as lists of dimension names (default: one table of all
            dims); cells shared by tables appear once.
        holding: column identifying holdings; contributions are summed per holding first,
            and contributors count holdings.
        weight: sampling weight column; ``value`` is the weighted sum, top contributions
            stay unweighted with their weight in ``top_weight`` (1 for holdings).
        waiver: flag column; a unit is waived when all its records are.
        request: flag column; a unit requests protection when any of its records does.
        top_k: number of largest unit contributions kept per cell.
        missing_code: map codes unknown to a hierarchy to this code (added below the
            total) instead of raising :class:`InputError`.
        extra: further numeric columns summed per cell (weighted like the response) into
            ``CellTable.extra``.
        progress: show a rich progress display.
        encoding: text encoding of a CSV file (default utf-8; also latin-1, utf-16).

    Returns:
        A :class:`CellTable` over ``compile_tables`` of the tables, cells in its order.
    """
    if int(top_k) < 1:
        raise ValueError("top_k must be at least 1")
    k = int(top_k)
    con = connect()
    try:
        with _steps(progress, 4) as bar:
            bar.step("reading and checking data")
            plan = prepare(data, dims, response, tables=tables, holding=holding, weight=weight,
                           waiver=waiver, request=request, missing_code=missing_code, extra=extra, con=con,
                           encoding=encoding)
            bar.step(f"aggregating {plan.n_records:,} records")
            return _compute(plan, k, weight, response, bar)
    finally:
        con.close()


_SUMS = ("records", "value", "unweighted", "ws")
_UNIT = ("contributors", "nc", "ns")


def _struct_top(k: int, weight_col: str) -> str:
    return f"max(struct_pack(c := c, w := {weight_col}, r := req, v := wv), {k}) AS t"


def _unit_stats(k: int, weight_col: str, top: bool = True) -> list[str]:
    """Aggregates over unit rows (columns c, req, wv)."""
    out = [
        "count(*) AS contributors",
        "count(*) FILTER (WHERE c < 0) AS nc",
        "COALESCE(fsum(c) FILTER (WHERE c < 0), 0) AS ns",
        f"max(c, {k}) FILTER (WHERE NOT wv) AS nw",
        f"max(abs(c), {k}) AS ab",
    ]
    return [*out, _struct_top(k, weight_col)] if top else [*out, f"max(c, {k}) AS mk"]


def _unpack_sql(k: int) -> list[str]:
    out = []
    for j in range(1, k + 1):
        out += [f"t[{j}].c AS tc{j}", f"t[{j}].w AS tw{j}", f"t[{j}].r AS tr{j}", f"t[{j}].v AS tv{j}",
                f"nw[{j}] AS nw{j}", f"ab[{j}] AS ab{j}"]
    return out


def _tops_from(frame: pd.DataFrame, k: int) -> TopLists:
    def num(prefix: str, fill: float) -> np.ndarray:
        return np.column_stack([pd.to_numeric(frame[f"{prefix}{j}"]).to_numpy(dtype=float, na_value=fill)
                                for j in range(1, k + 1)])

    def flag(prefix: str) -> np.ndarray:
        return np.column_stack([frame[f"{prefix}{j}"].astype("boolean").to_numpy(dtype=bool, na_value=False)
                                for j in range(1, k + 1)])

    return TopLists(num("tc", np.nan), num("tw", 1.0), flag("tr"), flag("tv"), num("nw", np.nan),
                    num("ab", np.nan))


def _compute(plan: Plan, k: int, weight: str | None, response: str, bar: Any) -> CellTable:
    con = plan.con
    nd = len(plan.specs)
    full_shape = tuple(len(plan.hierarchies[s.name]) for s in plan.specs)
    if np.prod([float(x) for x in full_shape]) >= 2.0 ** 62:
        raise InputError(f"the dimensions have too many code combinations ({' x '.join(map(str, full_shape))}) "
                         "to index cells; tabulate fewer or smaller dimensions per call")
    strides = [int(np.prod(full_shape[j + 1:], dtype=np.int64)) for j in range(nd)]
    cell_sql = " + ".join(f"l{j}::BIGINT * {strides[j]}" for j in range(nd))
    extra = [f"e{i}" for i in range(len(plan.extra))]
    xsum = "".join(f", fsum({e} * w) AS {e}" for e in extra)
    base = f"SELECT *, {cell_sql} AS cell FROM ({plan.base_sql})"
    leaf_cols = ["cell", *_SUMS, *_UNIT, *extra, *_unpack_sql(k)]
    if plan.holding is None:
        # every record is a unit of its bottom-level cell
        q = (f"SELECT cell, count(*) AS records, fsum(x * w) AS value, fsum(x) AS unweighted, "
             f"fsum(w) AS ws{xsum}, {', '.join(_unit_stats(k, 'uw'))} "
             f"FROM (SELECT *, x AS c, w AS uw FROM ({base})) GROUP BY cell")
        leaf = con.execute(f"SELECT {', '.join(leaf_cols)} FROM ({q})").df()
        complex_cells = None
    else:
        cols = plan.all_level_cols
        if plan.src.kind in ("csv", "asc"):
            # text is parsed once: the two passes below read a compact copy
            con.execute(f"CREATE TEMP TABLE tablesafe_base AS {base}")
            base = "SELECT * FROM tablesafe_base"
        # one row per holding; a holding whose records all sit in one bottom-level cell is
        # a unit of that cell only and rolls up like a record
        con.execute(
            f"CREATE TEMP TABLE tablesafe_hold AS SELECT h, min(cell) AS cmin, max(cell) AS cmax, "
            f"count(*) AS n, fsum(x) AS c, fsum(x * w) AS v, fsum(w) AS ws, bool_or(req) AS req, "
            f"bool_and(wv) AS wv{xsum} FROM ({base}) GROUP BY h")
        bar.step("summing holdings per cell")
        hsum = "".join(f", fsum({e}) AS {e}" for e in extra)
        # top-K with weights and flags only over the units that can make it: value at
        # least the K-th largest of the cell (cheap plain top-K first)
        q = (f"WITH s AS (SELECT cmin AS cell, sum(n) AS records, fsum(v) AS value, fsum(c) AS unweighted, "
             f"fsum(ws) AS ws{hsum}, {', '.join(_unit_stats(k, '1.0::DOUBLE', top=False))} "
             f"FROM tablesafe_hold WHERE cmin = cmax GROUP BY cmin), "
             f"tt AS (SELECT hd.cmin AS cell, {_struct_top(k, '1.0::DOUBLE')} FROM tablesafe_hold hd "
             f"JOIN s ON hd.cmin = s.cell WHERE hd.cmin = hd.cmax AND hd.c >= "
             f"CASE WHEN len(s.mk) < {k} THEN '-inf'::DOUBLE ELSE list_min(s.mk) END GROUP BY hd.cmin) "
             f"SELECT s.*, tt.t FROM s JOIN tt USING (cell)")
        simple = con.execute(f"SELECT {', '.join(leaf_cols)} FROM ({q})").df()
        # holdings spread over several bottom-level cells: (cell, holding) pairs, summed
        # per cell and holding at every level of every table
        con.execute(
            f"CREATE TEMP TABLE tablesafe_pairs AS SELECT cell, {', '.join(f'any_value({c}) AS {c}' for c in cols)}, "
            f"h, fsum(x) AS c, fsum(x * w) AS v, count(*) AS n, fsum(w) AS ws, bool_or(req) AS req, "
            f"bool_and(wv) AS wv{xsum} FROM ({base}) "
            f"WHERE h IN (SELECT h FROM tablesafe_hold WHERE cmin <> cmax) GROUP BY cell, h")
        multi_leaf = con.execute(
            f"SELECT cell, sum(n) AS records, fsum(v) AS value, fsum(c) AS unweighted, fsum(ws) AS ws{hsum} "
            f"FROM tablesafe_pairs GROUP BY cell").df()
        for name in _UNIT:
            multi_leaf[name] = 0
        leaf = pd.concat([simple, multi_leaf], ignore_index=True)
        for name in (*_SUMS, *_UNIT, *extra):
            leaf[name] = leaf[name].fillna(0)
        for j in range(1, k + 1):
            for name in ("tc", "tw", "tr", "tv", "nw", "ab"):
                if f"{name}{j}" not in leaf:
                    leaf[f"{name}{j}"] = None
        units = (f"SELECT {', '.join(cols)}, h, fsum(c) AS c, bool_or(req) AS req, bool_and(wv) AS wv "
                 f"FROM tablesafe_pairs GROUP BY {plan.grouping_sql(['h'])} HAVING {plan.having_sql()}")
        q = (f"SELECT {', '.join(cols)}, {', '.join(_unit_stats(k, '1.0::DOUBLE'))} FROM ({units}) "
             f"GROUP BY {', '.join(cols)}")
        complex_cells = con.execute(
            f"SELECT {', '.join([*plan.cell_index_sql(), *_UNIT, *_unpack_sql(k)])} FROM ({q})").df()
    leaf_idx = np.unravel_index(leaf["cell"].to_numpy(np.int64), full_shape)
    for j in range(nd):
        leaf[f"l{j}"] = leaf_idx[j]

    bar.step(f"rolling up {plan.model.size:,} cells")
    n = plan.model.size
    out_sums = {name: np.zeros(n) for name in (*_SUMS, *_UNIT, *extra)}
    out_tops = TopLists.empty(n, k)
    leaf_tops = _tops_from(leaf, k)
    names = [s.name for s in plan.specs]
    for t, tdims in enumerate(plan.table_dims):
        hs = [plan.hierarchies[d] for d in tdims]
        shape = tuple(len(h) for h in hs)
        size = int(np.prod(shape, dtype=np.int64))
        gidx = np.ravel_multi_index(tuple(leaf[f"l{names.index(d)}"].to_numpy(np.int64) for d in tdims), shape)
        sums = {}
        for name in out_sums:
            arr = np.zeros(size)
            np.add.at(arr, gidx, leaf[name].to_numpy(float))
            sums[name] = arr
        if len(tdims) == nd and len(np.unique(gidx)) == len(gidx):
            tops = TopLists.empty(size, k)
            for name in ("c", "w", "r", "v", "nw", "ab"):
                getattr(tops, name)[gidx] = getattr(leaf_tops, name)
        else:  # a linked table over fewer dimensions: merge the lists that project together
            tops = merge_tops(gidx, size, leaf_tops)
        rollup(hs, sums, tops)
        pos = plan.model.table_cells[t]
        for name, arr in sums.items():
            out_sums[name][pos] = arr
        for name in ("c", "w", "r", "v", "nw", "ab"):
            getattr(out_tops, name)[pos] = getattr(tops, name)
    if complex_cells is not None and len(complex_cells):
        cpos = plan.positions(complex_cells)
        for name in _UNIT:
            np.add.at(out_sums[name], cpos, complex_cells[name].to_numpy(float))
        ctops = _tops_from(complex_cells, k)
        touched, slot = np.unique(cpos, return_inverse=True)
        both = TopLists(*(np.concatenate([getattr(out_tops, f)[touched], getattr(ctops, f)])
                          for f in ("c", "w", "r", "v", "nw", "ab")))
        merged = merge_tops(np.concatenate([np.arange(len(touched)), slot]), len(touched), both)
        for f in ("c", "w", "r", "v", "nw", "ab"):
            getattr(out_tops, f)[touched] = getattr(merged, f)
    contributors = out_sums["contributors"].astype(np.int64)
    record_cells = None
    if len(plan.table_dims) > 1:  # linked tables: common parts that are no cell (overlap.py)
        occupied = np.unique(leaf["cell"].to_numpy(np.int64))
        at = np.unravel_index(occupied, full_shape)
        record_cells = pd.DataFrame({s.name: np.asarray(plan.hierarchies[s.name].codes, dtype=object)[at[j]]
                                     for j, s in enumerate(plan.specs)})
    return CellTable(
        model=plan.model,
        response=response,
        value=out_sums["value"],
        records=out_sums["records"].astype(np.int64),
        contributors=contributors,
        top=np.nan_to_num(out_tops.c),
        top_n=np.minimum(contributors, k),
        top_weight=out_tops.w,
        top_request=out_tops.r,
        top_waived=out_tops.v,
        nonwaived_top=np.nan_to_num(out_tops.nw),
        abs_top=np.nan_to_num(out_tops.ab),
        neg_count=out_sums["nc"].astype(np.int64),
        neg_sum=out_sums["ns"],
        weight_sum=out_sums["ws"],
        unweighted_value=out_sums["unweighted"],
        extra={name: out_sums[f"e{i}"] for i, name in enumerate(plan.extra)},
        holding=plan.holding,
        weight=weight,
        declared_missing=plan.declared_missing,
        record_cells=record_cells,
    )


def unit_contributions(
    data: Any,
    dims: Sequence[DimSpec | str],
    response: str,
    holding: str | None = None,
    cells: Sequence[str] | None = None,
    *,
    tables: Sequence[Sequence[str]] | None = None,
    missing_code: str | None = None,
    encoding: str | None = None,
) -> pd.DataFrame:
    """Each unit's contribution to each cell (for insider and aggregation checks).

    Returns a frame with columns ``cell`` (codes joined with ``|`` in the order of the
    model's dimensions, as ``CompiledModel.cell_names``), ``unit`` (the holding, or the
    0-based record position when no holding is given) and ``value`` (the unit's
    unweighted sum of ``response`` in that cell). Only units present in a cell are
    listed; ``cells`` restricts the output to the named cells. Rows are sorted by cell
    order, then unit. ``encoding`` is that of a CSV file (default utf-8).
    """
    con = connect(threads=1, ordered=True)  # record positions in source order
    try:
        return _unit_contributions(con, data, dims, response, holding, cells, tables, missing_code, encoding)
    finally:
        con.close()


def _unit_contributions(con: Any, data: Any, dims: Sequence[DimSpec | str], response: str, holding: str | None,
                        cells: Sequence[str] | None, tables: Sequence[Sequence[str]] | None,
                        missing_code: str | None, encoding: str | None = None) -> pd.DataFrame:
    plan = prepare(data, dims, response, tables=tables, holding=holding, missing_code=missing_code, con=con,
                   encoding=encoding)
    cols = plan.all_level_cols
    unit = "h" if holding else "rn"
    base = plan.base_sql
    if not holding:  # number the records in source order, before any join
        src_sql = f"FROM {plan.src.from_sql} AS src"
        numbered = f"FROM (SELECT *, row_number() OVER () - 1 AS tablesafe_rn FROM {plan.src.from_sql}) AS src"
        base = base.replace(src_sql, numbered, 1).replace("SELECT ", "SELECT src.tablesafe_rn AS rn, ", 1)
    q = (
        f"SELECT {', '.join([*plan.cell_index_sql(), 'u', 'v'])} FROM ("
        f"SELECT {', '.join(cols)}{', ' if cols else ''}{unit} AS u, fsum(x) AS v FROM ({base}) "
        f"GROUP BY {plan.grouping_sql([unit])} HAVING {plan.having_sql()})"
    )
    frame = con.execute(q).df()
    pos = plan.positions(frame)
    names = plan.model.cell_names()
    out = pd.DataFrame({"cell": names[pos], "unit": frame["u"].to_numpy(), "value": frame["v"].to_numpy(float),
                        "_pos": pos})
    if cells is not None:
        wanted = set(cells)
        out = out[out["cell"].isin(wanted)]
    return out.sort_values(["_pos", "unit"], kind="stable").drop(columns="_pos").reset_index(drop=True)
