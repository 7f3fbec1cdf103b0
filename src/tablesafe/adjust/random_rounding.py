"""Unbiased random rounding to a base (seed 003 A and its chapter II.C.2; frequency
tables).

A value ``x`` with ``r = x mod b`` is rounded up to the next multiple of ``b`` with
probability ``r / b`` and down otherwise, so its expected rounded value is ``x``;
multiples stay as they are. The random numbers come from ``numpy``'s generator seeded
with the run's seed: the same seed gives the same table. Rounded independently, the
cells of a table need not add up; with ``readd_totals`` only the interior cells (no total
of any relation) are rounded and every total is then the sum of its rounded parts.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from tablesafe.adjust.options import AdjustOptions
from tablesafe.adjust.result import DOWN, UP
from tablesafe.adjust.rounding import split_base
from tablesafe.adjust.totals import total_cells
from tablesafe.errors import InfeasibleError
from tablesafe.problem import Problem


def adjust_random_round(problem: Problem, options: AdjustOptions) -> tuple[np.ndarray, np.ndarray, dict]:
    """Randomly rounded values, the direction per rounded cell and stats."""
    base = float(options.base or 0.0)
    v = np.asarray(problem.value, dtype=float)
    floor, multiple = split_base(v, base)
    draw = np.random.default_rng(options.seed).random(len(v))
    up = ~multiple & (draw < (v - floor) / base)
    values = floor + base * up
    rounded = ~multiple
    if options.readd_totals:
        totals = total_cells(problem)
        values = np.where(totals, np.nan, values)
        values = readd(problem.relations, problem.rhs, values)
        rounded &= ~totals
    direction = np.where(rounded, np.where(up, UP, DOWN), 0).astype(np.int8)
    return values, direction, {"base": base, "seed": options.seed, "readd_totals": options.readd_totals}


def readd(relations: sp.spmatrix, rhs: np.ndarray, values: np.ndarray) -> np.ndarray:
    """``values`` with every NaN (a total) set from a relation whose other cells are known,
    repeated until none is left (totals of totals come from their parts' totals).

    Raises:
        InfeasibleError: a total that no chain of relations determines.
    """
    a = sp.csr_matrix(relations)
    out = values.copy()
    while True:
        unknown = np.isnan(out)
        if not unknown.any():
            return out
        count = abs(a) @ unknown.astype(float)
        rows = np.flatnonzero(count == 1)
        if not rows.size:
            raise InfeasibleError(f"{int(unknown.sum())} totals cannot be added up from their parts")
        sub = a[rows]
        partial = sub @ np.where(unknown, 0.0, out)
        coo = (sub @ sp.diags(unknown.astype(float))).tocoo()
        keep = coo.data != 0
        r, c, coef = coo.row[keep], coo.col[keep], coo.data[keep]
        out[c] = (rhs[rows][r] - partial[r]) / coef
