"""Choosing complements that meet many capacity inequalities at once.

A failed attack on a pattern gives an inequality over the published cells: withheld, they
must add up to at least what the attack still lacks (Fischetti and Salazar's capacity
inequality, :func:`tablesafe.suppress.attacker.cut_from`). Met one after the other, each
by its cheapest cells, the choices of later inequalities cannot undo needless ones of
earlier ones; :func:`cover` meets them together by a small MIP (a weighted set
multi-cover), started from that greedy choice.
"""

from __future__ import annotations

import highspy
import numpy as np

from tablesafe.audit.lp import new_highs

Row = tuple[np.ndarray, np.ndarray, float]
"""An inequality ``sum coef[j] * x[cells[j]] >= rhs``: (cells, coefficients, right-hand side)."""


def deficits(cuts: list[Row], fixed: np.ndarray) -> list[Row]:
    """``cuts`` with the cells of ``fixed`` counted in: the rows still to meet, over the
    other cells, with what each still lacks."""
    rows = []
    for idx, coef, rhs in cuts:
        have = fixed[idx]
        left = rhs - float(np.sum(coef[have]))
        if left > 1e-9 * max(1.0, abs(rhs)):
            rows.append((idx[~have], coef[~have], left))
    return rows


def greedy_cover(cost: np.ndarray, rows: list[Row], start: np.ndarray | None = None) -> np.ndarray:
    """Cells meeting every ``sum coef * x >= deficit`` row: ``start``, then, one row after
    the other, the cheapest cells per unit of what is still missing."""
    taken: set[int] = set() if start is None else set(start.tolist())
    for idx, coef, deficit in rows:
        tol = 1e-9 * max(1.0, abs(deficit))
        have = np.fromiter((j in taken for j in idx.tolist()), dtype=bool, count=len(idx))
        left = deficit - float(np.sum(coef[have]))
        idx, coef = idx[~have], coef[~have]
        while left > tol and len(idx):
            ratio = cost[idx] / np.minimum(coef, left)
            j = int(np.lexsort((idx, ratio))[0])
            taken.add(int(idx[j]))
            left -= coef[j]
            idx, coef = np.delete(idx, j), np.delete(coef, j)
    return np.array(sorted(taken), dtype=np.int64)


def cover(cost: np.ndarray, rows: list[Row], seconds: float, start: np.ndarray | None = None) -> np.ndarray:
    """The cheapest cells meeting every row ``sum coef[j] * x[idx[j]] >= deficit``
    (``x`` binary), by MIP within ``seconds``; the greedy choice (completing ``start``,
    cells of a previous choice) when the MIP does not improve on it. Coefficients are
    capped at the row's deficit (the same binary points)."""
    if start is not None and len(rows):
        start = start[np.isin(start, np.concatenate([r[0] for r in rows]))]
    greedy = greedy_cover(cost, rows, start)
    if not rows or seconds <= 0:
        return greedy
    var = np.unique(np.concatenate([r[0] for r in rows]))
    col = {int(j): i for i, j in enumerate(var.tolist())}
    starts, idx, val = [], [], []
    nnz = 0
    for cells, coef, deficit in rows:
        starts.append(nnz)
        idx.append(np.fromiter((col[j] for j in cells.tolist()), dtype=np.int32, count=len(cells)))
        val.append(np.minimum(coef, deficit) / deficit)  # scaled to 1 for numerics
        nnz += len(cells)
    c = np.abs(cost[var]).astype(float)
    nv = len(var)

    def solve(with_start: bool) -> highspy.Highs:
        h = new_highs()
        h.setOptionValue("time_limit", float(seconds))
        h.setOptionValue("mip_rel_gap", 1e-4)
        h.addVars(nv, np.zeros(nv), np.ones(nv))
        h.changeColsCost(nv, np.arange(nv, dtype=np.int32), c)
        h.changeColsIntegrality(nv, np.arange(nv, dtype=np.int32),
                                np.array([highspy.HighsVarType.kInteger] * nv))
        h.addRows(len(rows), np.full(len(rows), 1.0 - 1e-9), np.full(len(rows), highspy.kHighsInf), nnz,
                  np.array(starts, dtype=np.int32), np.concatenate(idx), np.concatenate(val))
        if with_start:
            sol = highspy.HighsSolution()
            sol.col_value = np.isin(var, greedy).astype(float)
            sol.value_valid = True
            h.setSolution(sol)
        h.run()
        return h

    h = solve(True)
    if h.getInfo().primal_solution_status == 2 and abs(
            float(c @ np.asarray(h.getSolution().col_value)) - h.getInfo().objective_function_value) > 1e-6:
        # HiGHS 1.16 can report the start's values beside a better optimum: solve again without it
        h = solve(False)
    if h.getInfo().primal_solution_status != 2:
        return greedy
    x = np.asarray(h.getSolution().col_value) > 0.5
    found = var[x]
    # the MIP's rows hold to its feasibility tolerance; keep it only where it is cheaper
    if float(np.abs(cost[found]).sum()) < float(np.abs(cost[greedy]).sum()) - 1e-9 and covers(found, rows):
        return found
    return greedy


def covers(cells: np.ndarray, rows: list[Row]) -> bool:
    """Whether ``cells`` meet every row exactly (no solver tolerance)."""
    for idx, coef, deficit in rows:
        if float(np.sum(coef[np.isin(idx, cells)])) < deficit - 1e-9 * max(1.0, abs(deficit)):
            return False
    return True


class Revisable:
    """Complements chosen on top of a fixed pattern against a growing set of capacity
    inequalities: each :meth:`extend` meets all inequalities so far again (:func:`cover`),
    so it may drop a complement an earlier choice needed only for lack of the later
    inequalities. The pattern is always ``base`` plus the current choice, hence never
    smaller than ``base``.
    """

    def __init__(self, base: np.ndarray, cost: np.ndarray) -> None:
        self.base = base.copy()
        self.cost = cost
        self.cuts: list[Row] = []
        self.chosen = np.zeros(0, dtype=np.int64)

    def extend(self, cuts: list[Row], seconds: float) -> np.ndarray:
        """The pattern meeting ``cuts`` and every earlier inequality."""
        self.cuts += cuts
        rows = deficits(self.cuts, self.base)
        self.chosen = (cover(self.cost, rows, seconds, start=self.chosen) if rows
                       else np.zeros(0, dtype=np.int64))
        w = self.base.copy()
        w[self.chosen] = True
        return w

    def keep(self, cells: np.ndarray) -> np.ndarray:
        """Withhold ``cells`` for good (added to the base) and return the pattern."""
        self.base[np.asarray(cells, dtype=np.int64)] = True
        w = self.base.copy()
        w[self.chosen] = True
        return w

    def freeze(self, pattern: np.ndarray) -> None:
        """Keep ``pattern`` from now on (the inequalities so far are met by it)."""
        self.base = pattern.copy()
        self.cuts = []
        self.chosen = np.zeros(0, dtype=np.int64)
