"""Builders of small cell tables for the rules tests (a reference tabulation written plainly).

A module with its own name (not conftest) so that test directories never import each
other's conftest by accident."""

from __future__ import annotations

from collections import defaultdict

import numpy as np

from tablesafe.celltable import CellTable
from tablesafe.structure import Dimension, Hierarchy, TableStructure, compile_tables


def build_cells(records, ncells: int, k: int = 6, holding: str | None = None, weighted: bool = False) -> CellTable:
    """CellTable of a flat table with cells c1..c<ncells> and their Total.

    ``records``: iterable of dicts with keys cell (0-based), value, and optional unit
    (default: a fresh unit per record), weight, waived, request. The Total (cell 0 of the
    model) holds every record; units with the same id are summed (holdings).
    """
    codes = [f"c{i + 1}" for i in range(ncells)]
    model = compile_tables(TableStructure((Dimension("d", Hierarchy.flat(codes, sort=False)),)))
    names = list(model.cell_names())
    pos = {c: names.index(c) for c in codes}
    total = names.index("Total")
    n = model.size
    per_cell: list[dict] = [defaultdict(lambda: {"x": 0.0, "w": [], "waived": [], "req": []}) for _ in range(n)]
    value = np.zeros(n)
    recs = np.zeros(n, dtype=np.int64)
    wsum = np.zeros(n)
    unw = np.zeros(n)
    for j, r in enumerate(records):
        unit = r.get("unit", f"rec{j}")
        w = float(r.get("weight", 1.0))
        for cell in (pos[codes[r["cell"]]], total):
            u = per_cell[cell][unit]
            u["x"] += r["value"]
            u["w"].append(w)
            u["waived"].append(bool(r.get("waived", False)))
            u["req"].append(bool(r.get("request", False)))
            value[cell] += w * r["value"]
            recs[cell] += 1
            wsum[cell] += w
            unw[cell] += r["value"]
    top = np.zeros((n, k))
    top_w = np.ones((n, k))
    top_req = np.zeros((n, k), dtype=bool)
    top_wv = np.zeros((n, k), dtype=bool)
    nonw = np.zeros((n, k))
    abs_top = np.zeros((n, k))
    top_n = np.zeros(n, dtype=np.int64)
    contributors = np.zeros(n, dtype=np.int64)
    neg_count = np.zeros(n, dtype=np.int64)
    neg_sum = np.zeros(n)
    for i in range(n):
        units = list(per_cell[i].values())
        contributors[i] = len(units)
        # ties: units that waived protection first (the stricter reading)
        units.sort(key=lambda u: (-u["x"], not all(u["waived"])))
        for j, u in enumerate(units[:k]):
            top[i, j] = u["x"]
            top_w[i, j] = u["w"][0] if len(u["w"]) == 1 else 1.0
            top_req[i, j] = any(u["req"])
            top_wv[i, j] = all(u["waived"])
        top_n[i] = min(k, len(units))
        nw = sorted((u["x"] for u in units if not all(u["waived"])), reverse=True)[:k]
        nonw[i, : len(nw)] = nw
        ab = sorted((abs(u["x"]) for u in units), reverse=True)[:k]
        abs_top[i, : len(ab)] = ab
        neg = [u["x"] for u in units if u["x"] < 0]
        neg_count[i] = len(neg)
        neg_sum[i] = sum(neg)
    return CellTable(
        model=model,
        response="x",
        value=value,
        records=recs,
        contributors=contributors,
        top=top,
        top_n=top_n,
        top_weight=top_w,
        top_request=top_req,
        top_waived=top_wv,
        nonwaived_top=nonw,
        abs_top=abs_top,
        neg_count=neg_count,
        neg_sum=neg_sum,
        weight_sum=wsum,
        unweighted_value=unw,
        holding=holding,
        weight="w" if weighted else None,
    )


def cells_of(*contribs, k: int = 6, **kw) -> tuple[CellTable, list[int]]:
    """Cells from plain contribution lists (one unit per number); returns the table and
    the positions of the given cells in it."""
    records = [{"cell": i, "value": float(x)} for i, xs in enumerate(contribs) for x in xs]
    cells = build_cells(records, len(contribs), k=k, **kw)
    names = list(cells.model.cell_names())
    return cells, [names.index(f"c{i + 1}") for i in range(len(contribs))]


def build_cells_frame(frame, dims: list[str], response: str, k: int = 6) -> CellTable:
    """CellTable of a flat multi-way table from a record frame (one unit per record),
    written plainly cell by cell as a reference tabulation for tests."""
    hs = [Hierarchy.flat(sorted(frame[d].astype(str).unique()), sort=False) for d in dims]
    model = compile_tables(TableStructure(tuple(Dimension(d, h) for d, h in zip(dims, hs))))
    recs = []
    codes = model.codes
    for j, row in enumerate(frame.itertuples(index=False)):
        recs.append((tuple(str(getattr(row, d)) for d in dims), float(getattr(row, response))))
    n = model.size
    lists = []
    for i in range(n):
        want = [codes.iloc[i][d] for d in dims]
        xs = [x for key, x in recs if all(w == "Total" or w == c for w, c in zip(want, key))]
        lists.append(xs)
    return CellTable.from_contributions(model, response, lists, k=k)
