"""A target's neighbourhood in a block, as an LP of its own, and the tables found on it
(used by the insider checks of :mod:`tablesafe.audit.singletons`).

The neighbourhood LP keeps every cell outside the neighbourhood at its true value, so
each of its tables is a feasible table of the whole block."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from tablesafe.audit import lp as _lp
from tablesafe.audit.block import Block
from tablesafe.structure.neighbours import neighbours


def neighbourhood_cells(csc: sp.csc_matrix, csr: sp.csr_matrix, k: int, hops: int, cap: int) -> np.ndarray:
    """The local cells within ``hops`` relation hops of local cell ``k``, ascending (a
    hop that would pass ``cap`` cells is not taken)."""
    cells = np.array([k])
    for _ in range(hops):
        rows = neighbours(csc, cells)
        more = np.union1d(cells, neighbours(csr, rows))
        if more.size > cap:
            break
        cells = more
    return cells


def neighbourhood_lp(b: Block, csc: sp.csc_matrix, csr: sp.csr_matrix, k: int, hops: int,
                     cap: int, cells: np.ndarray | None = None) -> tuple[np.ndarray, object]:
    """(cells, HiGHS model) of :func:`neighbourhood_cells` (or ``cells`` when given);
    the model's columns are the cells in that order, in the block's units, with zero
    costs."""
    if cells is None:
        cells = neighbourhood_cells(csc, csr, k, hops, cap)
    rows = neighbours(csc, cells)
    a = csr[rows]
    inside = np.zeros(a.shape[1], dtype=bool)
    inside[cells] = True
    rhs = b.rhs[rows] - a[:, ~inside] @ b.truth[~inside]
    s = b._units()
    h = _lp.new_highs()
    h.setOptionValue("presolve", "off")
    _lp.pass_lp(h, np.zeros(cells.size), b.lower[cells] / s, b.upper[cells] / s,
                a[:, cells], rhs / s, rhs / s)
    return cells, h


class ReachingTables:
    """Neighbourhood tables that reach the current goal (target and direction).

    A test that holds one insider's cell asks whether some table reaching the goal has
    that cell within the held bounds; a table already found answers it when it does
    (its cells outside the neighbourhood are at their true values). Measured on the
    tau-ARGUS MOD pattern of `benchmarks/audit.py`'s three-way shape (100 sampled
    targets, one process): 606 of 1,533 neighbourhood LPs answered this way, insider
    checks 32.9 s -> 27.1 s."""

    def __init__(self, truth: np.ndarray) -> None:
        self.truth = truth
        self.tables: list[tuple[np.ndarray, np.ndarray]] = []

    def clear(self) -> None:
        self.tables = []

    def add(self, cells: np.ndarray, x: np.ndarray) -> None:
        """Keep a table given on ``cells`` (sorted local cells; the rest at the truth)."""
        self.tables.append((cells, x))

    def answers(self, s: int, lo: float, hi: float, tol: float) -> bool:
        """Whether a kept table has cell ``s`` within [``lo``, ``hi``] (within ``tol``)."""
        for cells, x in self.tables:
            i = int(np.searchsorted(cells, s))
            v = x[i] if i < cells.size and cells[i] == s else self.truth[s]
            if lo - tol <= v <= hi + tol:
                return True
        return False
