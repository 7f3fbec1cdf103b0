"""Which cells are totals, and which of them an adjustment keeps (``fix_totals``)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from tablesafe.adjust.options import FixTotals
from tablesafe.errors import InputError
from tablesafe.problem import Problem


def total_cells(problem: Problem) -> np.ndarray:
    """Mask of cells that are the total of some relation (a negative coefficient)."""
    rel = problem.relations.tocoo()
    out = np.zeros(problem.n, dtype=bool)
    out[rel.col[rel.data < 0]] = True
    return out


def part_cells(problem: Problem) -> np.ndarray:
    """Mask of cells that are a part of some relation (a positive coefficient)."""
    rel = problem.relations.tocoo()
    out = np.zeros(problem.n, dtype=bool)
    out[rel.col[rel.data > 0]] = True
    return out


def fixed_cells(problem: Problem, fix: FixTotals) -> np.ndarray:
    """Mask of the totals ``fix`` keeps at their true values.

    ``grand``: the cell at every dimension's total (without a table structure, every
    total that is no part of another relation); ``all``: every total; ``DIM=DEPTH``: the
    cells whose code in that dimension is a total (not a leaf) at depth at most DEPTH.

    Raises:
        InputError: a dimension the table does not have, or ``DIM=DEPTH`` on a problem
            without table structure.
    """
    n = problem.n
    if fix.word == "none":
        return np.zeros(n, dtype=bool)
    totals = total_cells(problem)
    if fix.word == "all":
        return totals
    model, codes = problem.model, problem.codes
    if fix.word == "grand":
        if model is None or codes is None:
            return totals & ~part_cells(problem)
        grand = np.ones(n, dtype=bool)
        for dim in model.dims:
            grand &= (codes[dim.name].astype(str) == dim.hierarchy.total).to_numpy()
        return grand
    if model is None or codes is None:
        raise InputError("fix_totals (--fix-totals) DIMENSION=DEPTH needs a table with dimensions; "
                         "this problem has none (use none, grand or all)")
    dims = {d.name: d.hierarchy for d in model.dims}
    out = np.zeros(n, dtype=bool)
    for name, depth in fix.depths:
        if name not in dims:
            raise InputError(f"fix_totals (--fix-totals) names dimension {name!r}; the table has "
                             f"{', '.join(dims)}")
        h = dims[name]
        inner = np.array([not h.is_leaf(i) and h.depth(i) <= depth for i in range(len(h))], dtype=bool)
        pos = pd.Index(h.codes).get_indexer(codes[name].astype(str).to_numpy())
        out |= (pos >= 0) & inner[np.maximum(pos, 0)]
    return out
