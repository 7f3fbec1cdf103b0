"""Cells that protect one stubborn attack outright: the protection LP of one target.

The repairs meet each failed attack's capacity inequality (:func:`~tablesafe.suppress.
attacker.cut_from`), a condition every protecting pattern satisfies but that does not
by itself protect: on three-way tables an insider's attack can fail round after round
with the same reach while each round's cheapest cover adds one cell that does not help
(a 441-cell three-way table: the same eight attacks failed in 33 of 39 rounds).

For such an attack this module asks the question the other way round: which published
cells, withheld in addition, let the attacker's table move the target by its level? One
LP over the deviations ``z = p - q`` of every cell that may move (withheld cells and the
admissible complements), with the relations ``A z = 0``, each cell within its deviation
bounds, the insider's cell held at its value
and the target moved by its level, minimises the cost of the published cells it moves
(``cost_j |z_j| / level``; withheld cells move for a small weight only). Every published
cell the optimum moves is then withheld: the optimum itself is a table that keeps every
published cell, moves the target by its level and respects the bounds, so the attack
passes on the new pattern, whatever else the repair does as long as those cells stay
withheld.

The repair asks this question for attack after attack on the same table, so
:class:`ProtectionLP` keeps one model and changes only the target's level, the insider's
cell and the costs of cells withheld since. Measured on the generated 13,167-cell two-way
table with holdings: 33 questions at 47 ms each as fresh models, 8 ms each on the kept
one; the repair took 3.9 s instead of 5.7 s, the pattern the same.
"""

from __future__ import annotations

import highspy
import numpy as np
import scipy.sparse as sp

from tablesafe.audit.lp import INF, new_highs, pass_lp
from tablesafe.problem import Problem
from tablesafe.suppress.attacker import UP, Bounds, relations_by_cell

WITHHELD_WEIGHT = 1e-4
"""Weight per unit of movement of a withheld cell, relative to a published cell of the
same cost (keeps the certificate sparse without making withheld cells costly)."""


def protecting_cells(problem: Problem, bounds: Bounds, withheld: np.ndarray, target: int, direction: int,
                     insider: int, cand: np.ndarray, time_limit: float | None = None) -> np.ndarray | None:
    """Published cells whose withholding lets ``target`` move by its level in
    ``direction`` against the attacker who knows ``insider``'s cell (-1: an outsider).

    Returns the cells (possibly none: the attack already passes), or None when no
    admissible set of cells can protect it (or none was found within ``time_limit``
    seconds of solver time). One model for one question; :class:`ProtectionLP` keeps its
    model for the next.
    """
    w = np.asarray(withheld, dtype=bool).copy()
    w[target] = True  # the target moves whatever the pattern says of it
    return ProtectionLP(problem, bounds, w, cand).cells(withheld, target, direction, insider, time_limit)


class ProtectionLP:
    """The protection LP over the cells that may move (``withheld | cand``), kept from one
    stubborn attack to the next (:class:`~tablesafe.suppress.protection.Stubborn`).

    Only bounds and costs change between questions: the target's level, the insider's
    cell held, the cells withheld since (their movement costs little). HiGHS starts each
    solve from the last optimal basis, which on two-way tables of 13,000 cells took a
    fraction of a cold solve's time.
    """

    def __init__(self, problem: Problem, bounds: Bounds, withheld: np.ndarray, cand: np.ndarray) -> None:
        w = np.asarray(withheld, dtype=bool)
        self.problem = problem
        self.bounds = bounds
        self.cand = cand
        self.movable = w | cand
        cols = np.flatnonzero(self.movable)
        self.cols = cols
        a = relations_by_cell(problem)[:, cols].tocsr()
        rows = np.flatnonzero(np.diff(a.indptr) > 0)
        a = a[rows]
        nc = self.nc = cols.size
        self.upper = np.concatenate([bounds.up[cols], bounds.dn[cols]]).astype(float)  # of p, then q
        cost = np.abs(np.asarray(problem.cost, dtype=float)[cols])
        scale = float(cost[cost > 0].mean()) if np.any(cost > 0) else 1.0
        self.unit = np.maximum(cost, 1e-6 * scale)
        self.objective = INF  # the last question's optimum (weighted movement)
        h = new_highs()
        pass_lp(h, self._costs(w[cols], 1.0), np.zeros(2 * nc), self.upper, sp.hstack([a, -a]),
                np.zeros(rows.size), np.zeros(rows.size))
        self.h = h

    def _costs(self, withheld: np.ndarray, req: float) -> np.ndarray:
        """Costs of the columns (p, then q) with ``withheld`` (over the model's cells)
        moving for a small weight, per unit of the level ``req``."""
        unit = np.where(withheld, WITHHELD_WEIGHT * self.unit, self.unit) / req
        return np.concatenate([unit, unit])

    def serves(self, problem: Problem, bounds: Bounds, cand: np.ndarray, withheld: np.ndarray) -> bool:
        """Whether this model answers questions on ``problem`` with ``bounds`` and
        ``cand`` under ``withheld``: the same objects, and its columns hold every cell of
        ``withheld`` (else build anew)."""
        return (problem is self.problem and bounds is self.bounds and cand is self.cand
                and not bool(np.any(np.asarray(withheld, dtype=bool) & ~self.movable)))

    def cells(self, withheld: np.ndarray, target: int, direction: int, insider: int,
              time_limit: float | None = None) -> np.ndarray | None:
        """:func:`protecting_cells` under ``withheld`` (which this model must cover)."""
        bounds = self.bounds
        req = float(bounds.req_up[target] if direction == UP else bounds.req_dn[target])
        if req <= 0:
            return np.zeros(0, dtype=np.int64)
        lo_t = np.zeros(2)
        hi_t = np.array([bounds.tup[target], bounds.tdn[target]], dtype=float)
        if direction == UP:
            lo_t[0], hi_t[1] = req, 0.0    # the target moves up by its level, not down
        else:
            lo_t[1], hi_t[0] = req, 0.0
        if hi_t[0 if direction == UP else 1] < req * (1 - 1e-9):
            return None
        cols, nc, h = self.cols, self.nc, self.h
        w = np.asarray(withheld, dtype=bool)[cols]
        cost = self._costs(w, req)
        j = int(np.searchsorted(cols, target))
        cost[[j, nc + j]] = 0.0
        h.changeColsCost(2 * nc, np.arange(2 * nc, dtype=np.int32), cost)
        self._bounds([j, nc + j], lo_t, hi_t)
        changed = [j, nc + j]
        i = int(np.searchsorted(cols, insider)) if insider >= 0 and insider != target else nc
        if i < nc and cols[i] == insider:  # the insider knows its cell: it stays at its value
            self._bounds([i, nc + i], np.zeros(2), np.zeros(2))
            changed += [i, nc + i]
        h.setOptionValue("time_limit", max(float(time_limit), 1e-3) if time_limit is not None else INF)
        try:
            h.run()
            ok = h.getModelStatus() == highspy.HighsModelStatus.kOptimal
            x = np.asarray(h.getSolution().col_value) if ok else None
            self.objective = float(h.getInfo().objective_function_value) if ok else INF
        finally:
            self._bounds(changed, np.zeros(len(changed)), self.upper[changed])
        if x is None:
            return None
        z = x[:nc] - x[nc:]
        moved = np.abs(z) > 1e-9 * max(1.0, req)
        out = cols[moved & ~w]
        return out[out != target].astype(np.int64)

    def _bounds(self, idx, lo: np.ndarray, hi: np.ndarray) -> None:
        hi = np.where(np.isfinite(hi), hi, INF)
        self.h.changeColsBounds(len(idx), np.asarray(idx, dtype=np.int32), np.asarray(lo, dtype=float),
                                np.asarray(hi, dtype=float))
