"""Controlled rounding to a base (seed 003 A.1; Cox and Ernst).

Every cell becomes a multiple of the base ``b`` next to its value, rounded down or up;
a multiple stays as it is (zero-restricted); every relation of the table still holds.
With ``floor`` the multiple at or below a value and ``r = value - floor``, a binary
``u`` per cell that is no multiple (1: up) gives the model::

    min  sum (b - 2 r) u                 (the sum of absolute changes, less a constant)
    A (b u) = rhs - A floor              (the rounded table is additive)

Two-way tables always have a controlled rounding and the LP relaxation of this model
already has one at a vertex (a network); three-way and hierarchical tables need not have
one. The MILP runs in a guarded child process (HiGHS may overrun its time limit in the
root node); when it finds no rounding in time, or none exists, the run fails with a clear
message rather than publish a table that does not add up.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from tablesafe.adjust.options import AdjustOptions
from tablesafe.adjust.result import DOWN, UP
from tablesafe.adjust.solve import Model, solve_guarded
from tablesafe.errors import InfeasibleError
from tablesafe.problem import Problem


def split_base(values: np.ndarray, base: float) -> tuple[np.ndarray, np.ndarray]:
    """Per value, the multiple of ``base`` at or below it, and whether the value is a
    multiple already (to a relative 1e-9)."""
    q = np.asarray(values, dtype=float) / base
    near = np.round(q)
    multiple = np.abs(q - near) <= 1e-9 * np.maximum(1.0, np.abs(q))
    floor = np.where(multiple, near, np.floor(q)) * base
    return floor, multiple


def adjust_round(problem: Problem, options: AdjustOptions, seconds: float) -> tuple[np.ndarray, np.ndarray, dict]:
    """The controlled rounding of ``problem`` to ``options.base`` within ``seconds``:
    rounded values, the direction per cell (``UP``, ``DOWN``, 0 for multiples) and stats.

    Raises:
        InfeasibleError: no additive rounding exists, or none was found in time.
    """
    base = float(options.base or 0.0)
    v = np.asarray(problem.value, dtype=float)
    floor, multiple = split_base(v, base)
    free = np.flatnonzero(~multiple)
    stats: dict = {"base": base, "cells_to_round": len(free), "time_limit": seconds}
    rel = sp.csr_matrix(problem.relations)
    target = (problem.rhs - rel @ floor) / base
    sub = rel[:, free]
    used = np.diff(sub.indptr) > 0
    if np.any(np.abs(target[~used]) > 1e-6):
        raise InfeasibleError("the table is not additive among cells that are multiples of the base, so no "
                              "rounding of it is additive")
    if not free.size:  # every cell a multiple already: nothing to round
        return floor, np.zeros(len(v), dtype=np.int8), stats
    rhs = np.round(target[used])
    model = Model(base - 2.0 * (v - floor)[free], np.zeros(len(free)), np.ones(len(free)), sub[used], rhs, rhs,
                  np.ones(len(free), dtype=bool))
    got = solve_guarded(model, seconds, gap=1e-3)
    stats.update(milp_status=got.status, milp_seconds=round(got.seconds, 3), milp_gap=got.gap)
    if got.x is None:
        why = ("no additive rounding exists for this table and base (three-way and hierarchical tables need "
               "not have one)" if got.status == "infeasible" else
               f"no additive rounding was found within {seconds:g} s (solver: {got.status})")
        raise InfeasibleError(f"controlled rounding to base {base:g} failed: {why}; nothing is published. "
                              "Give a longer --time-limit, another --rounding-base, or use --method cta")
    up = np.zeros(len(v), dtype=bool)
    up[free] = got.x > 0.5
    values = floor + base * up
    direction = np.where(multiple, 0, np.where(up, UP, DOWN)).astype(np.int8)
    return values, direction, stats
