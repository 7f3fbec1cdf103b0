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

from collections.abc import Sequence
from contextlib import contextmanager
from typing import Any, Iterator

import numpy as np
import pandas as pd

from tablesafe.celltable import CellTable
from tablesafe.structure import NAME_SEP
from tablesafe.tabulate.dims import DimSpec
from tablesafe.tabulate.plan import Plan, connect, prepare


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
    dims: Sequence[DimSpec | str],
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
) -> CellTable:
    """Tabulate microdata: one row per cell of the table(s), totals at every level included.

    Args:
        data: a pandas, polars or pyarrow frame; a CSV or Parquet path (scanned by DuckDB,
            never loaded whole); or tau-ARGUS microdata from
            :func:`tablesafe.io.tauargus.read_asc` (declared missing codes and hierarchies
            of the ``.rda`` are then used).
        dims: dimension names or :class:`DimSpec` (1 to 6).
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

    Returns:
        A :class:`CellTable` over ``compile_tables`` of the tables, cells in its order.
    """
    if int(top_k) < 1:
        raise ValueError("top_k must be at least 1")
    k = int(top_k)
    with _steps(progress, 3) as bar:
        bar.step("reading and checking data")
        plan = prepare(data, dims, response, tables=tables, holding=holding, weight=weight,
                       waiver=waiver, request=request, missing_code=missing_code, extra=extra)
        bar.step(f"aggregating {plan.n_records:,} records into {plan.model.size:,} cells")
        frame = plan.con.execute(_cells_sql(plan, k)).df()
        bar.step("assembling the cell table")
        cells = _assemble(plan, frame, response, k, weight)
    plan.con.close()
    return cells


def _cells_sql(plan: Plan, k: int) -> str:
    extra_sums = [f"fsum(e{i} * w) AS e{i}" for i in range(len(plan.extra))]
    top = f"max(struct_pack(c := c, w := uw, r := req, v := wv), {k}) AS t"
    stats = [
        f"{top}",
        f"max(c, {k}) FILTER (WHERE NOT wv) AS nw",
        f"max(abs(c), {k}) AS ab",
        "count(*) FILTER (WHERE c < 0) AS nc",
        "COALESCE(fsum(c) FILTER (WHERE c < 0), 0) AS ns",
    ]
    cols = plan.all_level_cols
    if plan.holding is None:
        inner = (
            f"SELECT {', '.join([*cols, 'count(*) AS contributors', 'count(*) AS records', 'fsum(x * w) AS value', 'fsum(x) AS unweighted', 'fsum(w) AS ws', *stats, *extra_sums])} "
            f"FROM (SELECT *, x AS c, w AS uw FROM ({plan.base_sql})) "
            f"GROUP BY {plan.grouping_sql()} HAVING {plan.having_sql()}"
        )
    else:
        pair_extra = [f"fsum(e{i} * w) AS e{i}" for i in range(len(plan.extra))]
        pairs = (
            f"SELECT {', '.join([*cols, 'h', 'fsum(x) AS c', 'fsum(x * w) AS v', 'count(*) AS n', 'fsum(w) AS ws', 'bool_or(req) AS req', 'bool_and(wv) AS wv', *pair_extra])} "
            f"FROM ({plan.base_sql}) GROUP BY {', '.join([*cols, 'h'])}"
        )
        unit_extra = [f"fsum(e{i}) AS e{i}" for i in range(len(plan.extra))]
        units = (
            f"SELECT {', '.join([*cols, 'h', 'fsum(c) AS c', 'fsum(v) AS v', 'sum(n) AS n', 'fsum(ws) AS ws', 'bool_or(req) AS req', 'bool_and(wv) AS wv', *unit_extra])} "
            f"FROM ({pairs}) GROUP BY {plan.grouping_sql(['h'])} HAVING {plan.having_sql()}"
        )
        cell_extra = [f"fsum(e{i}) AS e{i}" for i in range(len(plan.extra))]
        inner = (
            f"SELECT {', '.join([*cols, 'count(*) AS contributors', 'sum(n) AS records', 'fsum(v) AS value', 'fsum(c) AS unweighted', 'fsum(ws) AS ws', *stats, *cell_extra])} "
            f"FROM (SELECT *, 1.0::DOUBLE AS uw FROM ({units})) GROUP BY {', '.join(cols) if cols else '()'}"
        )
    outer = [*plan.cell_index_sql(), "contributors", "records", "value", "unweighted", "ws", "nc", "ns"]
    for j in range(1, k + 1):
        outer += [f"t[{j}].c AS tc{j}", f"t[{j}].w AS tw{j}", f"t[{j}].r AS tr{j}", f"t[{j}].v AS tv{j}",
                  f"nw[{j}] AS nw{j}", f"ab[{j}] AS ab{j}"]
    outer += [f"e{i}" for i in range(len(plan.extra))]
    return f"SELECT {', '.join(outer)} FROM ({inner})"


def _assemble(plan: Plan, frame: pd.DataFrame, response: str, k: int, weight: str | None) -> CellTable:
    n = plan.model.size
    pos = plan.positions(frame)

    def col(name: str, dtype: Any, fill: Any = 0) -> np.ndarray:
        return frame[name].fillna(fill).to_numpy(dtype=dtype)

    def arr(name: str, dtype: Any) -> np.ndarray:
        out = np.zeros(n, dtype=dtype)
        out[pos] = col(name, dtype)
        return out

    def mat(prefix: str, dtype: Any, fill: Any) -> np.ndarray:
        out = np.full((n, k), fill, dtype=dtype)
        for j in range(k):
            out[pos, j] = col(f"{prefix}{j + 1}", dtype, fill)
        return out

    contributors = arr("contributors", np.int64)
    records = arr("records", np.int64)
    extra = {name: arr(f"e{i}", float) for i, name in enumerate(plan.extra)}
    return CellTable(
        model=plan.model,
        response=response,
        value=arr("value", float),
        records=records,
        contributors=contributors,
        top=mat("tc", float, 0.0),
        top_n=np.minimum(contributors, k),
        top_weight=mat("tw", float, 1.0),
        top_request=mat("tr", bool, False),
        top_waived=mat("tv", bool, False),
        nonwaived_top=mat("nw", float, 0.0),
        abs_top=mat("ab", float, 0.0),
        neg_count=arr("nc", np.int64),
        neg_sum=arr("ns", float),
        weight_sum=arr("ws", float),
        unweighted_value=arr("unweighted", float),
        extra=extra,
        holding=plan.holding,
        weight=weight,
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
) -> pd.DataFrame:
    """Each unit's contribution to each cell (for insider and aggregation checks).

    Returns a frame with columns ``cell`` (codes joined with ``|`` in the order of the
    model's dimensions, as ``CompiledModel.cell_names``), ``unit`` (the holding, or the
    0-based record position when no holding is given) and ``value`` (the unit's
    unweighted sum of ``response`` in that cell). Only units present in a cell are
    listed; ``cells`` restricts the output to the named cells. Rows are sorted by cell
    order, then unit.
    """
    con = connect(threads=1)  # one thread keeps the record positions in file order
    plan = prepare(data, dims, response, tables=tables, holding=holding, missing_code=missing_code, con=con)
    cols = plan.all_level_cols
    unit = "h" if holding else "rn"
    base = f"SELECT *, row_number() OVER () - 1 AS rn FROM ({plan.base_sql})" if not holding else plan.base_sql
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
    out = out.sort_values(["_pos", "unit"], kind="stable").drop(columns="_pos").reset_index(drop=True)
    con.close()
    return out
