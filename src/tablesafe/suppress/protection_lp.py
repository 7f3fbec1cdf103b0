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
"""

from __future__ import annotations

import highspy
import numpy as np
import scipy.sparse as sp

from tablesafe.audit.lp import new_highs, pass_lp
from tablesafe.problem import Problem
from tablesafe.suppress.attacker import UP, Bounds

WITHHELD_WEIGHT = 1e-4
"""Weight per unit of movement of a withheld cell, relative to a published cell of the
same cost (keeps the certificate sparse without making withheld cells costly)."""


def protecting_cells(problem: Problem, bounds: Bounds, withheld: np.ndarray, target: int, direction: int,
                     insider: int, cand: np.ndarray, time_limit: float | None = None) -> np.ndarray | None:
    """Published cells whose withholding lets ``target`` move by its level in
    ``direction`` against the attacker who knows ``insider``'s cell (-1: an outsider).

    Returns the cells (possibly none: the attack already passes), or None when no
    admissible set of cells can protect it (or none was found within ``time_limit``
    seconds of solver time).
    """
    req = float(bounds.req_up[target] if direction == UP else bounds.req_dn[target])
    if req <= 0:
        return np.zeros(0, dtype=np.int64)
    w = np.asarray(withheld, dtype=bool)
    movable = w | cand
    movable[target] = True
    if insider >= 0:
        movable[insider] = False
    cols = np.flatnonzero(movable)
    a = problem.relations.tocsc()[:, cols].tocsr()
    rows = np.flatnonzero(np.diff(a.indptr) > 0)
    a = a[rows]
    nc = cols.size
    up = np.where(cols == target, bounds.tup[cols], bounds.up[cols])
    dn = np.where(cols == target, bounds.tdn[cols], bounds.dn[cols])
    cost = np.abs(np.asarray(problem.cost, dtype=float)[cols])
    scale = float(cost[cost > 0].mean()) if np.any(cost > 0) else 1.0
    unit = np.maximum(cost, 1e-6 * scale) / req
    unit = np.where(w[cols], WITHHELD_WEIGHT * unit, unit)
    j = int(np.searchsorted(cols, target))
    unit[j] = 0.0
    lo = np.zeros(2 * nc)
    hi = np.concatenate([up, dn])
    if direction == UP:
        lo[j], hi[nc + j] = req, 0.0    # the target moves up by its level, not down
    else:
        lo[nc + j], hi[j] = req, 0.0
    if hi[j if direction == UP else nc + j] < req * (1 - 1e-9):
        return None
    h = new_highs()
    if time_limit is not None:
        h.setOptionValue("time_limit", max(float(time_limit), 1e-3))
    pass_lp(h, np.concatenate([unit, unit]), lo, hi, sp.hstack([a, -a]), np.zeros(rows.size), np.zeros(rows.size))
    h.run()
    if h.getModelStatus() != highspy.HighsModelStatus.kOptimal:
        return None
    x = np.asarray(h.getSolution().col_value)
    z = x[:nc] - x[nc:]
    moved = np.abs(z) > 1e-9 * max(1.0, req)
    out = cols[moved & ~w[cols]]
    return out[out != target].astype(np.int64)
