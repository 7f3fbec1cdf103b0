"""The one insider model: which single respondents attack which sensitive cells.

Suppression (``tablesafe.suppress``) and audit (``tablesafe.audit.insider``) both ask
this module, so they protect against, and check for, the same attackers:

- An *insider* is the single respondent of a withheld cell (``contributors == 1``): it
  knows that cell's value exactly (seed 002 "Secondary tabular data protection
  methods", singletons; seed 000 section 7.1). Every such cell counts, sensitive or not.
- It attacks every sensitive cell except its own cell and the cells its cell
  *overlaps*: cells with which it shares a non-empty part (a common descendant with at
  least one respondent). Of those it is one of the contributors, and the cell's
  protection level already allows for what a contributor knows about its own value
  (seed 000 section 5.1: the second-largest contributor of the p% rule).

Overlap is read from the codes when the problem carries its table structure
(:class:`tablesafe.structure.overlap.CellOverlap`), otherwise from the relations: in a
relation, the cell whose coefficient sign no other cell of the relation shares is the
total, the others its parts (a two-cell relation makes each cell a part of the other;
a relation without such a cell says nothing). On tables compiled from a structure both
readings give the same answer (tests/structure/test_insiders.py).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from tablesafe.problem import Problem
from tablesafe.structure.overlap import CellOverlap, occupied_cells

__all__ = ["InsiderModel", "single_respondents"]


def single_respondents(problem: Problem) -> np.ndarray:
    """Cells with exactly one respondent (all false when contributor counts are unknown)."""
    if problem.contributors is None:
        return np.zeros(problem.n, dtype=bool)
    return np.asarray(problem.contributors) == 1


class InsiderModel:
    """Which single respondents attack which cells of one problem.

    Build once per problem with :meth:`of`; :meth:`attackers` then answers per target.
    """

    def __init__(self, problem: Problem, geo: CellOverlap | None, occupied: np.ndarray) -> None:
        self.problem = problem
        self.geo = geo
        self.occupied = occupied
        self.single = single_respondents(problem)
        self._near: dict[int, np.ndarray] = {}
        self._parts: sp.csr_matrix | None = None

    @classmethod
    def of(cls, problem: Problem) -> InsiderModel:
        """The model of ``problem`` (geometry from its table structure when it has one)."""
        return cls(problem, CellOverlap.of(problem), occupied_cells(problem))

    def overlaps(self, cells: np.ndarray, target: int) -> np.ndarray:
        """Which ``cells`` share a non-empty part with ``target`` (a cell overlaps itself
        when it has a respondent)."""
        cells = np.asarray(cells, dtype=np.int64)
        if self.geo is not None:
            return self.geo.overlaps(cells, int(target), self.occupied, self.single)
        return np.isin(cells, self._overlapping(int(target)))

    def attackers(self, target: int, cells: np.ndarray) -> np.ndarray:
        """The members of ``cells`` whose single respondent attacks ``target``: single
        respondent cells other than ``target`` that do not overlap it."""
        cells = np.asarray(cells, dtype=np.int64)
        cells = cells[self.single[cells] & (cells != int(target))]
        if cells.size == 0:
            return cells
        return cells[~self.overlaps(cells, int(target))]

    # --- overlap from the relations (no table structure) -------------------------------

    def _part_matrix(self) -> sp.csr_matrix:
        """``M[total, part] = 1`` for every total/part pair of a relation."""
        if self._parts is None:
            a = sp.csr_matrix(self.problem.relations).tocoo()
            n = self.problem.n
            m = a.shape[0]
            sign = np.sign(a.data)
            pos = np.bincount(a.row, weights=(sign > 0), minlength=m)
            neg = np.bincount(a.row, weights=(sign < 0), minlength=m)
            # the total with the lone positive (negative) sign of each row, -1 if none
            tot_pos = np.full(m, -1, dtype=np.int64)
            tot_neg = np.full(m, -1, dtype=np.int64)
            lp = (sign > 0) & (pos[a.row] == 1)
            ln = (sign < 0) & (neg[a.row] == 1)
            tot_pos[a.row[lp]] = a.col[lp]
            tot_neg[a.row[ln]] = a.col[ln]
            total = np.where(sign < 0, tot_pos[a.row], tot_neg[a.row])
            keep = total >= 0
            r, c = total[keep], a.col[keep]
            self._parts = sp.csr_matrix((np.ones(r.size), (r, c)), shape=(n, n))
            self._parts.data[:] = 1.0
        return self._parts

    def _overlapping(self, cell: int) -> np.ndarray:
        """Cells sharing a non-empty descendant (or self) with ``cell``, from the relations."""
        hit = self._near.get(cell)
        if hit is not None:
            return hit
        parts = self._part_matrix()
        down = _closure(parts, np.array([cell]))
        down = down[self.occupied[down]]
        out = _closure(parts.T.tocsr(), down) if down.size else np.zeros(0, dtype=np.int64)
        self._near[cell] = out
        return out


def _closure(step: sp.csr_matrix, start: np.ndarray) -> np.ndarray:
    """Cells reachable from ``start`` (included) along the rows of ``step``."""
    seen = np.zeros(step.shape[0], dtype=bool)
    seen[start] = True
    front = np.unique(start)
    while front.size:
        nxt = np.unique(step[front].indices)
        nxt = nxt[~seen[nxt]]
        seen[nxt] = True
        front = nxt
    return np.flatnonzero(seen)
