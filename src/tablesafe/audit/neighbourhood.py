"""A target's neighbourhood in a block, as an LP of its own, and the tables found on it
(used by the insider checks of :mod:`tablesafe.audit.singletons`).

The neighbourhood LP keeps every cell outside the neighbourhood at its true value, so
each of its tables is a feasible table of the whole block."""

from __future__ import annotations

from typing import Any

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


def neighbourhood_lp(b: Block, csc: sp.csc_matrix, csr: sp.csr_matrix, cells: np.ndarray) -> Any:
    """The HiGHS model of the local ``cells`` (a :func:`neighbourhood_cells`), the other
    cells at their true values: its columns are the cells in that order, in the block's
    units, with zero costs."""
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
    return h


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


class Neighbourhoods:
    """The neighbourhoods and relaxations of one target of a block at the levels tried,
    each with its LP model once asked for, its objective set for the target and
    direction last asked (a new target starts them afresh)."""

    def __init__(self, b: Block, csc: sp.csc_matrix, csr: sp.csr_matrix) -> None:
        self.b, self.csc, self.csr = b, csc, csr
        self.clear()

    def clear(self) -> None:
        """Forget the current target's neighbourhoods and relaxations."""
        self._k = -1
        self._got: dict[int, tuple[np.ndarray, Any]] = {}
        self._cost: dict[tuple[str, int], int] = {}
        self._relax: dict[int, tuple[np.ndarray, Any] | None] = {}

    def _target(self, k: int) -> None:
        if self._k != k:
            self.clear()
            self._k = k

    def _aim(self, kind: str, level: int, cells: np.ndarray, h: Any, d: int) -> None:
        """Set ``h``'s objective to maximise ``d`` times the current target."""
        if self._cost.get((kind, level)) != d:
            cost = np.zeros(cells.size)
            cost[int(np.searchsorted(cells, self._k))] = -float(d)
            h.changeColsCost(cells.size, np.arange(cells.size, dtype=np.int32), cost)
            self._cost[(kind, level)] = d

    def cells(self, level: int, k: int, hops: int, cap: int) -> np.ndarray:
        """:func:`neighbourhood_cells` of local cell ``k`` at ``level`` (``hops``, ``cap``)."""
        self._target(k)
        got = self._got.get(level)
        if got is None:
            got = self._got[level] = (neighbourhood_cells(self.csc, self.csr, k, hops, cap), None)
        return got[0]

    def model(self, level: int, k: int, hops: int, cap: int, d: int) -> tuple[np.ndarray, Any]:
        """(cells, HiGHS model) of :meth:`cells`, the model maximising ``d`` times ``k``."""
        cells = self.cells(level, k, hops, cap)
        h = self._got[level][1]
        if h is None:
            h = neighbourhood_lp(self.b, self.csc, self.csr, cells)
            self._got[level] = (cells, h)
        self._aim("near", level, cells, h, d)
        return cells, h

    def relaxed_reach(self, level: int, k: int, hops: int, cap: int, d: int,
                      s: int) -> tuple[bool, float]:
        """The ``d``-optimum of local cell ``k`` on its :func:`relaxation_lp` at ``level``
        with local cell ``s`` held at its true value: ``(False, nan)`` when the
        relaxation passes ``cap`` cells or does not hold ``s`` (holding it changes
        nothing there), ``d`` times infinity when the LP is unbounded or not solved."""
        self._target(k)
        if level not in self._relax:
            self._relax[level] = relaxation_lp(self.b, self.csc, self.csr, k, hops, cap)
        got = self._relax[level]
        if got is None:
            return False, float("nan")
        cells, h = got
        if _position(cells, s) is None:
            return False, float("nan")
        self._aim("relaxed", level, cells, h, d)
        return True, self._optimum(cells, h, s, d * float("inf"))

    def relaxed_failures(self, k: int, d: int, need: float, cells: np.ndarray,
                         relax: tuple[tuple[int, int], ...], near: list[tuple[int, int, int]],
                         tol: float, rel_tol: float, counts: dict) -> tuple[list[int], dict[int, float]]:
        """Of the local cells ``cells`` (insiders), those whose cell held keeps local
        target ``k`` short of ``need`` in direction ``d`` (by more than ``tol``) on a
        relaxation of ``relax`` ((hops, most cells), smallest first), and apart those
        of them whose exact bound is pinned: the relaxation's optimum, reached within
        ``rel_tol`` with the cell held on a neighbourhood of ``near`` ((level, hops,
        most cells), built for this goal). The block's optimum lies between the two.
        ``counts`` receives ``insider_relaxed_lps`` and ``insider_relaxed_exact``."""
        sure: list[int] = []
        pinned: dict[int, float] = {}
        for s in cells.tolist():
            for level, (hops, cap) in enumerate(relax):
                ran, val = self.relaxed_reach(level, k, hops, cap, d, s)
                if not ran:
                    continue
                counts["insider_relaxed_lps"] = counts.get("insider_relaxed_lps", 0) + 1
                if not d * val < d * need - tol:
                    continue
                goal = d * val - rel_tol * (1 + abs(val))
                if any(d * self.held_reach(lv, k, lv_hops, lv_cap, d, s) >= goal for lv, lv_hops, lv_cap in near):
                    pinned[s] = float(val)
                    counts["insider_relaxed_exact"] = counts.get("insider_relaxed_exact", 0) + 1
                else:
                    sure.append(s)
                break
        return sure, pinned

    def held_reach(self, level: int, k: int, hops: int, cap: int, d: int, s: int) -> float:
        """The ``d``-optimum of local cell ``k`` on its neighbourhood at ``level`` (the
        model of :meth:`model`) with local cell ``s`` held at its true value: a table of
        the block, so the block's optimum with ``s`` held reaches at least as far
        (``-d`` times infinity when the LP is not solved to optimality)."""
        cells, h = self.model(level, k, hops, cap, d)
        return self._optimum(cells, h, s, -d * float("inf"))

    def _optimum(self, cells: np.ndarray, h: Any, s: int, otherwise: float) -> float:
        """The optimum at the current target of ``h`` (aimed at it) with local cell ``s``
        held at its true value when it is one of ``cells``; ``otherwise`` when the LP
        ends other than optimal."""
        b, sc = self.b, self.b._units()
        i = _position(cells, s)
        idx = None if i is None else np.array([i], dtype=np.int32)
        if idx is not None:
            v = _lp._finite(b.truth[[s]] / sc)
            h.changeColsBounds(1, idx, v, v)
        try:
            h.run()
            if _lp.status(h) != "optimal":
                return otherwise
            return float(h.getSolution().col_value[int(np.searchsorted(cells, self._k))]) * sc
        finally:
            if idx is not None:
                h.changeColsBounds(1, idx, _lp._finite(b.lower[[s]] / sc), _lp._finite(b.upper[[s]] / sc))


def _position(cells: np.ndarray, s: int) -> int | None:
    """Where ``s`` is in the sorted ``cells`` (``None``: not one of them)."""
    i = int(np.searchsorted(cells, s))
    return i if i < cells.size and int(cells[i]) == s else None


def relaxation_lp(b: Block, csc: sp.csc_matrix, csr: sp.csr_matrix, k: int,
                  hops: int, cap: int) -> tuple[np.ndarray, Any] | None:
    """The HiGHS model of a relaxation around local cell ``k``: the relations of the
    cells within ``hops`` relation hops, with every cell they hold as a column
    (ascending, in the block's units, zero costs), the other relations dropped; ``None``
    when it would hold more than ``cap`` cells. Every table of the block is one of it,
    so a goal its LP misses the block's LP misses too."""
    near = neighbourhood_cells(csc, csr, k, hops, cap)
    rows = neighbours(csc, near)
    cells = neighbours(csr, rows)
    if cells.size > cap:
        return None
    s = b._units()
    h = _lp.new_highs()
    h.setOptionValue("presolve", "off")
    _lp.pass_lp(h, np.zeros(cells.size), b.lower[cells] / s, b.upper[cells] / s,
                csr[rows][:, cells], b.rhs[rows] / s, b.rhs[rows] / s)
    return cells, h
