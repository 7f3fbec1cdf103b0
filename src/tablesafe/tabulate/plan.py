"""Preparing a tabulation: open the data in DuckDB, check it, resolve hierarchies, and
write the SQL that attaches to every record the codes of all its ancestor cells.

Each dimension ``d`` with hierarchy depth ``D`` gets columns ``d{d}_1 .. d{d}_D``: the
position (in the hierarchy's pre-order) of the record's ancestor at depth ``l``, or -1
when the record's code is shallower than ``l``. A cell at depths ``(l_1, .., l_n)`` is
then the group of the columns ``d{j}_{l_j}`` (depth 0, the total, needs no column); all
cells of all (linked) tables are the grouping sets over these level combinations.
"""

from __future__ import annotations

import itertools
import math
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import duckdb
import numpy as np
import pandas as pd

from tablesafe.errors import HierarchyError, InputError
from tablesafe.io.frames import Source, open_source, sql_ident, sql_string
from tablesafe.structure import CompiledModel, Dimension, Hierarchy, TableStructure, compile_tables
from tablesafe.tabulate.dims import DimSpec, as_dimspecs

_FALSY = "('', '0', '0.0', 'false', 'f', 'no', 'n')"


def connect(threads: int | None = None, ordered: bool = False) -> duckdb.DuckDBPyConnection:
    """An in-process DuckDB connection set up for out-of-core aggregation (``ordered``
    keeps scans in source order, for record positions)."""
    con = duckdb.connect(config={"preserve_insertion_order": ordered})
    tmp = Path(tempfile.gettempdir()) / "tablesafe-duckdb"
    con.execute(f"SET temp_directory={sql_string(str(tmp))}")
    con.execute("SET memory_limit='3GB'")
    con.execute("SET enable_progress_bar=false")
    if threads:
        con.execute(f"SET threads={int(threads)}")
    return con


def code_sql(col: str) -> str:
    """A column as a code: text with surrounding blanks removed ('' for missing)."""
    return f"COALESCE(trim(CAST({sql_ident(col)} AS VARCHAR)), '')"


def num_sql(src: Source, col: str) -> str:
    """A column as a number (NULL when missing or not a number)."""
    if src.is_numeric(col):
        return f"CAST({sql_ident(col)} AS DOUBLE)"
    return f"TRY_CAST(NULLIF(trim(CAST({sql_ident(col)} AS VARCHAR)), '') AS DOUBLE)"


def flag_sql(src: Source, col: str) -> str:
    """A column as a flag. tau-ARGUS ``<REQUEST>`` codes are honoured; otherwise any
    value but blank, 0, false or no counts as set."""
    md = src.metadata
    if md is not None and col in md and md[col].props.get("REQUEST"):
        codes = ", ".join(sql_string(c.strip()) for c in md[col].props["REQUEST"])
        return f"COALESCE(trim(CAST({sql_ident(col)} AS VARCHAR)) IN ({codes}), false)"
    return (f"COALESCE(lower(trim(CAST({sql_ident(col)} AS VARCHAR))) NOT IN {_FALSY}, false)")


def _is_infinite(v: str | None) -> bool:
    try:
        return math.isinf(float(str(v).strip()))
    except ValueError:
        return False


def _is_not_positive(v: str | None) -> bool:
    try:
        return not float(str(v).strip()) > 0
    except ValueError:
        return False


def _is_bad_number(v: str | None) -> bool:
    if v is None or not str(v).strip():
        return True
    try:
        return math.isnan(float(str(v).strip()))
    except ValueError:
        return True


def _check_values(src: Source, counts: list[int], checks: list[tuple[str, str]], weight: str | None,
                  holding: str | None) -> None:
    """Raise for the first bad value the first scan counted, in the order of the counts:
    missing or non-numeric values per checked column, infinite values per checked
    column, non-positive weights (with ``weight``), missing holdings (with ``holding``)."""
    n = len(checks)
    for k, (role, col) in enumerate(checks):
        if counts[k]:
            raise src.error_at(f"{counts[k]} missing or non-numeric value(s) in the {role} column; the first is",
                               col, src.locate(col, _is_bad_number))
    for k, (role, col) in enumerate(checks):
        if counts[n + k]:
            raise src.error_at(
                f"{counts[n + k]} infinite value(s) in the {role} column (values must be finite numbers); the first is",
                col, src.locate(col, _is_infinite))
    off = 2 * n
    if weight:
        if counts[off]:
            raise src.error_at(
                f"{counts[off]} zero or negative sampling weight(s) in the weight column {weight!r} (a weight is the "
                "number of units a record stands for and must be positive); the first is",
                weight, src.locate(weight, _is_not_positive))
        off += 1
    if holding and counts[off]:
        raise src.error_at("missing holding identifier", holding, src.locate(holding, lambda v: v is None))


@dataclass
class Plan:
    """Everything the aggregation queries need."""

    con: duckdb.DuckDBPyConnection
    src: Source
    specs: list[DimSpec]
    hierarchies: dict[str, Hierarchy]
    model: CompiledModel
    base_sql: str
    level_cols: dict[str, list[str]]
    grouping_sets: list[tuple[str, ...]]
    table_dims: list[list[str]]
    holding: str | None
    extra: list[str]
    n_records: int
    keep: list[Any] = field(default_factory=list)
    declared_missing: dict[str, tuple[str, ...]] = field(default_factory=dict)

    @property
    def all_level_cols(self) -> list[str]:
        return [c for cols in self.level_cols.values() for c in cols]

    def cell_index_sql(self) -> list[str]:
        """Per dimension, the SQL giving the code position of a grouped cell (0 = total)."""
        out = []
        for j, s in enumerate(self.specs):
            cols = self.level_cols[s.name]
            out.append(f"COALESCE({', '.join([*cols, '0'])}) AS i{j}")
        return out

    def having_sql(self) -> str:
        """Drops groups of records too shallow for the level combination."""
        cols = self.all_level_cols
        if not cols:
            return "true"
        return " AND ".join(f"COALESCE({c}, 0) >= 0" for c in cols)

    def grouping_sql(self, extra_cols: Sequence[str] = ()) -> str:
        sets = []
        for gs in self.grouping_sets:
            sets.append("(" + ", ".join([*gs, *extra_cols]) + ")")
        return "GROUPING SETS (" + ", ".join(sets) + ")"

    def positions(self, frame: pd.DataFrame) -> np.ndarray:
        """Model cell positions of result rows with code position columns ``i0..``."""
        mdims = [d.name for d in self.model.dims]
        shape = tuple(len(self.hierarchies[n]) for n in mdims)
        order = [[s.name for s in self.specs].index(n) for n in mdims]
        got = np.ravel_multi_index(tuple(frame[f"i{j}"].to_numpy(dtype=np.int64) for j in order), shape)
        mkeys = np.ravel_multi_index(
            tuple(pd.Index(self.hierarchies[n].codes).get_indexer(self.model.codes[n]) for n in mdims),
            shape,
        )
        sorter = np.argsort(mkeys)
        pos = np.searchsorted(mkeys, got, sorter=sorter)
        pos = np.clip(pos, 0, len(mkeys) - 1)
        ok = mkeys[sorter[pos]] == got
        if not ok.all():  # pragma: no cover - grouping sets only produce table cells
            raise AssertionError("tabulated a cell outside the model")
        return sorter[pos]


def prepare(
    data: Any,
    dims: Any,
    response: str,
    *,
    tables: Sequence[Sequence[str]] | None = None,
    holding: str | None = None,
    weight: str | None = None,
    waiver: str | None = None,
    request: str | None = None,
    missing_code: str | None = None,
    extra: Sequence[str] | None = None,
    con: duckdb.DuckDBPyConnection | None = None,
    encoding: str | None = None,
) -> Plan:
    """Open and check the data (see :func:`_check_values`; ``encoding``: of a CSV file),
    resolve hierarchies and compile the table model."""
    specs = as_dimspecs(dims)
    names = [s.name for s in specs]
    extra = [extra] if isinstance(extra, str) else list(extra or [])
    con = con or connect()
    src = open_source(con, data, encoding=encoding)
    src.check_columns(names, "dimension column")
    src.check_columns([response], "response column")
    for role, col in (("holding", holding), ("weight", weight), ("waiver", waiver), ("request", request)):
        src.check_columns([col], f"{role} column")
    src.check_columns(extra, "extra column")
    table_dims = _table_dims(names, tables)
    extra_top = _complete_from_metadata(specs, src, missing_code)
    n_records, data_codes = _scan(con, src, names, response, weight, holding, extra)

    # hierarchies and code maps
    hierarchies: dict[str, Hierarchy] = {}
    maps: dict[str, pd.DataFrame] = {}
    level_cols: dict[str, list[str]] = {}
    for j, s in enumerate(specs):
        h = hierarchies[s.name] = _hierarchy(src, s, data_codes[s.name], extra_top[s.name], missing_code)
        level_cols[s.name] = [f"d{j}_{lvl}" for lvl in range(1, int(h.depths.max()) + 1)]
        maps[s.name] = _code_map(src, s, h, data_codes[s.name], level_cols[s.name], missing_code)
        con.register(f"tablesafe_map{j}", maps[s.name])

    structures = [TableStructure(tuple(Dimension(n, hierarchies[n]) for n in t)) for t in table_dims]
    model = compile_tables(structures if len(structures) > 1 else structures[0])
    base_sql = _base_sql(src, specs, level_cols, response, weight=weight, request=request, waiver=waiver,
                         holding=holding, extra=extra)
    return Plan(con, src, specs, hierarchies, model, base_sql, level_cols, _grouping_sets(table_dims, level_cols),
                table_dims, holding, extra, n_records, keep=list(maps.values()),
                declared_missing={d: tuple(dict.fromkeys(c for c in codes if c)) for d, codes in extra_top.items()
                                  if any(codes)})


def _table_dims(names: list[str], tables: Sequence[Sequence[str]] | None) -> list[list[str]]:
    """The dimensions of each linked table (default: one table of all dimensions)."""
    if tables is None:
        return [names]
    table_dims = [[t] if isinstance(t, str) else list(t) for t in tables]
    for t in table_dims:
        for n in t:
            if n not in names:
                raise InputError(f"table dimension {n!r} is not among the dimensions {names}", column=n)
        if not t:
            raise InputError("a linked table needs at least one dimension")
    return table_dims


def _complete_from_metadata(specs: list[DimSpec], src: Source, missing_code: str | None) -> dict[str, list[str]]:
    """Complete the specs from tau-ARGUS metadata (hierarchies, total codes; in place) and
    return per dimension the codes to add below its total (missing codes)."""
    md = src.metadata
    extra_top: dict[str, list[str]] = {s.name: [] for s in specs}
    if md is not None:
        for i, s in enumerate(specs):
            if s.name not in md:
                continue
            v = md[s.name]
            if s.hierarchy is None and s.codelist is None:
                tot = v.arg("TOTCODE") if s.total == "Total" and v.arg("TOTCODE") else s.total
                specs[i] = s = replace(s, hierarchy=md.hierarchy(s.name, total=tot), total=tot)
            extra_top[s.name].extend(v.missing)
    if missing_code is not None:
        for codes in extra_top.values():
            codes.append(str(missing_code).strip())
    return extra_top


def _scan(con: duckdb.DuckDBPyConnection, src: Source, names: list[str], response: str, weight: str | None,
          holding: str | None, extra: list[str]) -> tuple[int, dict[str, list[str]]]:
    """Scan 1: the number of records, the distinct codes per dimension, and the numbers
    checked (see :func:`_check_values`)."""
    checks = [("response", response, num_sql(src, response))]
    if weight:
        checks.append(("weight", weight, num_sql(src, weight)))
    for e in extra:
        checks.append(("extra", e, num_sql(src, e)))
    parts = ["count(*)"]
    parts += [f"list(DISTINCT {code_sql(n)})" for n in names]
    parts += [f"count(*) FILTER (WHERE {expr} IS NULL OR isnan({expr}))" for _, _, expr in checks]
    parts += [f"count(*) FILTER (WHERE isinf({expr}))" for _, _, expr in checks]
    if weight:
        parts.append(f"count(*) FILTER (WHERE {checks[1][2]} <= 0)")
    if holding:
        parts.append(f"count(*) FILTER (WHERE {sql_ident(holding)} IS NULL)")
    try:
        row = con.execute(f"SELECT {', '.join(parts)} FROM {src.from_sql}").fetchall()[0]
    except duckdb.Error as exc:
        raise src.read_error(exc) from None
    n_records = int(row[0])
    if n_records == 0:
        raise InputError("empty input: the data has no records", file=src.file)
    data_codes = {n: sorted(row[1 + j]) for j, n in enumerate(names)}
    _check_values(src, list(row[1 + len(names):]), [(role, col) for role, col, _ in checks], weight, holding)
    return n_records, data_codes


def _hierarchy(src: Source, s: DimSpec, codes: list[str], extra_top: list[str], missing_code: str | None) -> Hierarchy:
    """A dimension's hierarchy from its spec and the codes in the data; errors name the
    first record with the code at fault."""
    if "" in codes and missing_code is None:
        raise src.error_at(f"dimension {s.name!r}: blank or missing code; use --missing-code CODE (Python: missing_code=...) to map "
                           "blank codes to a missing code", s.name, src.locate(s.name, lambda v: not (v or "").strip()),
                           code="")
    try:
        return s.build([c for c in codes if c], extra_top)
    except HierarchyError as exc:
        if exc.file is not None or exc.code is None:
            raise
        bad = exc.code
        raise src.error_at(f"dimension {s.name!r}: {exc.args[0].split(' (')[0]}", s.name,
                           src.locate(s.name, lambda v, bad=bad: (v or "").strip() == bad), code=bad) from None


def _code_map(src: Source, s: DimSpec, h: Hierarchy, codes: list[str], level_cols: list[str],
              missing_code: str | None) -> pd.DataFrame:
    """Per code in the data (``k``): its leaf position and its ancestors' positions per
    depth (-1 below the leaf); records must carry leaf codes (or unknown codes mapped to
    the missing code)."""
    leaf_of: dict[str, str] = {}
    for c in codes:
        if c in h:
            if not h.is_leaf(h.index(c)):
                raise src.error_at(
                    f"dimension {s.name!r}: code {c!r} is a total or subtotal in the hierarchy; "
                    "records must carry bottom-level codes",
                    s.name, src.locate(s.name, lambda v, c=c: (v or "").strip() == c), code=c)
            leaf_of[c] = c
        elif missing_code is not None:
            leaf_of[c] = str(missing_code).strip()
        else:
            leaves = h.leaves
            shown = ", ".join(map(repr, leaves[:20])) + (", ..." if len(leaves) > 20 else "")
            raise src.error_at(
                f"dimension {s.name!r}: code {c!r} is not in its hierarchy (known codes: {shown}); "
                "use --missing-code CODE (Python: missing_code=...) to map unknown codes to a missing code",
                s.name, src.locate(s.name, lambda v, c=c: (v or "").strip() == c), code=c)
    dmax = len(level_cols)
    rows = []
    for c, leaf in leaf_of.items():
        i = h.index(leaf)
        chain = [i]
        p = h.parent[i]
        while p > 0:
            chain.append(p)
            p = h.parent[p]
        chain = chain[::-1]  # depth 1 .. depth(leaf)
        rows.append([c, i] + chain + [-1] * (dmax - len(chain)))
    frame = pd.DataFrame(rows, columns=["k", "leaf", *level_cols])
    for col in ["leaf", *level_cols]:
        frame[col] = frame[col].astype("int32")
    return frame


def _grouping_sets(table_dims: list[list[str]], level_cols: dict[str, list[str]]) -> list[tuple[str, ...]]:
    """Every level combination of every table, each once."""
    sets: dict[tuple[str, ...], None] = {}
    for t in table_dims:
        ranges = [range(len(level_cols[n]) + 1) for n in t]
        for combo in itertools.product(*ranges):
            gs = tuple(level_cols[n][lvl - 1] for n, lvl in zip(t, combo) if lvl > 0)
            sets[gs] = None
    return list(sets)


def _base_sql(src: Source, specs: list[DimSpec], level_cols: dict[str, list[str]], response: str, *,
              weight: str | None, request: str | None, waiver: str | None, holding: str | None,
              extra: list[str]) -> str:
    """The base view: one row per record with its ancestor positions and numbers."""
    sel = [f"m{j}.{c}" for j, s in enumerate(specs) for c in level_cols[s.name]]
    sel += [f"m{j}.leaf AS l{j}" for j in range(len(specs))]
    sel.append(f"{num_sql(src, response)} AS x")
    sel.append(f"{num_sql(src, weight)} AS w" if weight else "1.0::DOUBLE AS w")
    sel.append(f"{flag_sql(src, request)} AS req" if request else "false AS req")
    sel.append(f"{flag_sql(src, waiver)} AS wv" if waiver else "false AS wv")
    if holding:
        sel.append(f"{sql_ident(holding)} AS h")
    for k, e in enumerate(extra):
        sel.append(f"{num_sql(src, e)} AS e{k}")
    joins = " ".join(
        f"JOIN tablesafe_map{j} m{j} ON m{j}.k = {code_sql(s.name)}" for j, s in enumerate(specs)
    )
    return f"SELECT {', '.join(sel)} FROM {src.from_sql} AS src {joins}"
