"""Failing attacks proved on a relaxation: the relations within a few hops of the target.

An attack on a large block is decided by the attacker's LP on the whole block. A
relaxation keeps only the relations within a few hops of the target, with every
withheld cell they hold as a column, and drops the others: every table of the block is
a table of the relaxation, so the attacker reaches at least as far there. When the
relaxation misses the level, the attack fails on the block as well, and its duals (zero
on the relations dropped) are a dual solution of the block's LP: the capacity
inequality they give (Fischetti-Salazar, :func:`~tablesafe.suppress.attacker.cut_from`)
holds for every safe pattern and is violated by this one, which is all a repair asks of
a failing attack.

This is the mirror image of :mod:`tablesafe.suppress.neighbourhood_attacks`, whose
restrictions (the cells further away held at their true values) prove that an attack
passes. Attacks named as failing (by the audit, in
:mod:`tablesafe.suppress.audit_repair`) are tried here first, one more hop at a time;
those no relaxation within :data:`RELAX_HOPS` hops and :data:`RELAX_SHARE` of the block
proves failing go on to the restrictions and the block's own LP.
"""

from __future__ import annotations

import time

import numpy as np
import scipy.sparse as sp

from tablesafe.problem import Problem
from tablesafe.structure.neighbours import neighbours
from tablesafe.suppress.attacker import UP, Attack, BlockLP, Bounds, Key

RELAX_HOPS = 10
"""Most relation hops around the target a relaxation reaches. Measured on the pattern
of `modular`'s subtables on the generated 13,851-cell three-way table with holdings
(one block of 6,516 withheld cells): of 60 sampled attacks the audit named failing, all
missed their level on a relaxation of 1 to 8 hops, most with the block's own optimum;
their relaxations took 0.44 s in all against 5.58 s for the block's LPs."""

RELAX_SHARE = 0.5
"""Largest share of the block's cells a relaxation may hold: beyond it the block's own
LP (warm-started, shared by its targets) costs less than a new model."""


def attack_relaxations(problem: Problem, bounds: Bounds, x: np.ndarray, keys: list[Key],
                       out: dict[Key, Attack], by_cell: sp.csc_matrix, timeout: type[Exception],
                       also_fixed: dict[Key, tuple[int, ...]] | None = None,
                       deadline: float | None = None, block_cells: int | None = None) -> list[Key]:
    """Attack each of ``keys`` on relaxations around its target, widened one relation
    hop at a time; an attack that misses its level on one goes into ``out`` (failed,
    with that relaxation's duals and no table: its optimum is not a table of the block).
    Returns the keys no relaxation decided, in their order (attacks with a sliding
    level, which compare the true reach up and down, always). ``by_cell``: the relations
    by cell; ``timeout`` is raised past ``deadline``; ``block_cells``: the size of the
    block (default: every withheld cell)."""
    a = problem.relations
    active = x > 1e-9
    most = RELAX_SHARE * (block_cells if block_cells is not None else int(active.sum()))
    left: list[Key] = []
    for key in keys:
        k, d, s = key
        if bounds.req_sl[k] > 0:
            left.append(key)
            continue
        req = float(bounds.req_up[k] if d == UP else bounds.req_dn[k])
        extra = also_fixed.get(key, ()) if also_fixed else ()
        cells = np.array([k])
        # each hop adds the relations of the cells the last one reached, and their cells
        # (the same sets as walking out from every cell again)
        fresh, rows, cols = cells, np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
        decided = False
        for _ in range(RELAX_HOPS):
            if deadline is not None and time.monotonic() > deadline:
                raise timeout
            new_rows = np.setdiff1d(neighbours(by_cell, fresh), rows, assume_unique=True)
            rows = np.union1d(rows, new_rows)
            reached = neighbours(a, new_rows)
            cols = np.union1d(cols, reached[active[reached]])
            if cols.size > most:
                break
            att = BlockLP(problem, bounds, x, cols, rows).attack(k, d, req, s, want_dual=True,
                                                                 also_fixed=extra)
            if not att.ok:
                att.cells, att.dev = np.zeros(0, dtype=np.int64), np.zeros(0)
                out[key] = att
                decided = True
                break
            if cols.size == cells.size:
                break  # the relaxation holds the whole block: its LP is the block's
            fresh = np.setdiff1d(cols, cells, assume_unique=True)
            cells = cols
        if not decided:
            left.append(key)
    return left
