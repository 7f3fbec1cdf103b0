"""Attacks on a large block tried first on each target's neighbourhood.

A target in a block of thousands of withheld cells is attacked first on the cells within
two relation hops of it, every cell further away held at its true value. A table found
there is a table of the whole block too (the cells held fixed move by zero), so an
attack that passes there needs no LP on the block; the others are returned and attacked
on the whole block (:func:`tablesafe.suppress.protection.run_attacks`).
"""

from __future__ import annotations

import time

import numpy as np
import scipy.sparse as sp

from tablesafe.problem import Problem
from tablesafe.structure.neighbours import neighbours
from tablesafe.suppress.attacker import UP, Attack, BlockLP, Bounds, Key


def attack_neighbourhoods(problem: Problem, bounds: Bounds, x: np.ndarray, keys: list[Key],
                          out: dict[Key, Attack], by_cell: sp.csc_matrix, timeout: type[Exception],
                          sparse: bool, also_fixed: dict[Key, tuple[int, ...]] | None = None,
                          deadline: float | None = None, expect_pass: bool = False) -> list[Key]:
    """Attack each target of ``keys`` within two relation hops; passing attacks go into
    ``out``, the keys still unresolved are returned (attacks with a sliding level always
    are). ``by_cell``: the relations by cell; ``timeout`` is raised past ``deadline``."""
    a = problem.relations
    active = x > 1e-9
    by_target: dict[int, list[Key]] = {}
    for key in keys:
        by_target.setdefault(key[0], []).append(key)
    left: list[Key] = []
    for k, tkeys in by_target.items():
        if deadline is not None and time.monotonic() > deadline:
            raise timeout
        cells = np.array([k])
        for _ in range(2):
            rows = neighbours(by_cell, cells)
            cols = neighbours(a, rows)
            cells = np.union1d(cells, cols[active[cols]])
        rows = neighbours(by_cell, cells)
        lp = BlockLP(problem, bounds, x, cells, rows)
        for key in tkeys:
            _, d, s = key
            req = bounds.req_up[k] if d == UP else bounds.req_dn[k]
            extra = also_fixed.get(key, ()) if also_fixed else ()
            att = lp.attack(k, d, req, s, want_dual=False, sparse=sparse, also_fixed=extra,
                            expect_pass=expect_pass)
            if att.ok and bounds.req_sl[k] <= 0:
                out[key] = att
            else:
                left.append(key)
    return left
