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

import time

import numpy as np
import pandas as pd
import scipy.sparse as sp

from tablesafe.adjust.options import AdjustOptions
from tablesafe.adjust.result import DOWN, UP
from tablesafe.adjust.solve import Model, solve_guarded
from tablesafe.errors import InfeasibleError
from tablesafe.problem import Problem

SLICE_SHARE = 0.6
"""Share of the time limit the slice-by-slice rounding may take before the whole MILP."""

RETRIES = 30
"""How many times the slice-by-slice rounding re-rounds an earlier step, its costs
shaken, when a later step finds no rounding given it."""


def split_base(values: np.ndarray, base: float) -> tuple[np.ndarray, np.ndarray]:
    """Per value, the multiple of ``base`` at or below it, and whether the value is a
    multiple already (to a relative 1e-9)."""
    q = np.asarray(values, dtype=float) / base
    near = np.round(q)
    multiple = np.abs(q - near) <= 1e-9 * np.maximum(1.0, np.abs(q))
    floor = np.where(multiple, near, np.floor(q)) * base
    return floor, multiple


def round_part(rows: sp.csr_matrix, rhs: np.ndarray, values: np.ndarray, known: np.ndarray, cells: np.ndarray,
               base: float, seconds: float, shake: np.random.Generator | None = None) -> tuple[np.ndarray | None, str]:
    """Round ``values[cells]`` so that every relation of ``rows`` holds, the other cells
    of those rows taking their ``known`` (already rounded) values. ``shake`` adds random
    costs (another rounding than the closest, for a retry).

    Returns the rounded values of ``cells`` (None when none was found) and the solver's
    status in words (``infeasible`` when no rounding exists).
    """
    floor, multiple = split_base(values[cells], base)
    free = np.flatnonzero(~multiple)
    mask = np.zeros(len(values), dtype=bool)
    mask[cells] = True
    rest = np.where(mask, 0.0, np.nan_to_num(known))
    part = rows[:, cells]
    target = (rhs - rows @ rest - part @ floor) / base
    sub = part[:, free]
    used = np.diff(sub.indptr) > 0
    if np.any(np.abs(target[~used]) > 1e-6):
        return None, "infeasible"
    if not free.size:  # every cell a multiple already: nothing to round
        return floor, "optimal"
    rhs_free = np.round(target[used])
    cost = base - 2.0 * (values[cells] - floor)[free]
    if shake is not None:
        cost = cost + shake.uniform(-base, base, len(free))
    model = Model(cost, np.zeros(len(free)), np.ones(len(free)), sub[used],
                  rhs_free, rhs_free, np.ones(len(free), dtype=bool))
    got = solve_guarded(model, seconds, gap=1e-3)
    if got.x is None:
        return None, got.status
    out = floor.copy()
    out[free] += base * (got.x > 0.5)
    return out, got.status


def adjust_round(problem: Problem, options: AdjustOptions, seconds: float) -> tuple[np.ndarray, np.ndarray, dict]:
    """The controlled rounding of ``problem`` to ``options.base`` within ``seconds``:
    rounded values, the direction per cell (``UP``, ``DOWN``, 0 for multiples) and stats.

    Tables of three or more dimensions are first rounded slice by slice
    (:func:`round_by_slices`); the whole table's MILP runs when that finds nothing (and
    for two-way tables, which it solves at once).

    Raises:
        InfeasibleError: no additive rounding exists, or none was found in time.
    """
    deadline = time.perf_counter() + seconds
    base = float(options.base or 0.0)
    v = np.asarray(problem.value, dtype=float)
    _, multiple = split_base(v, base)
    stats: dict = {"base": base, "cells_to_round": int((~multiple).sum()), "time_limit": seconds}
    rel = sp.csr_matrix(problem.relations)
    values = None
    if problem.model is not None and problem.codes is not None and len(problem.model.dims) >= 3:
        values, stats["slices"] = round_by_slices(problem, base, time.perf_counter() + SLICE_SHARE * seconds)
    if values is None:
        values, status = round_part(rel, problem.rhs, v, np.zeros(len(v)), np.arange(len(v)), base,
                                    deadline - time.perf_counter())
        stats["milp_status"] = status
        if values is None:
            why = ("no additive rounding exists for this table and base (three-way and hierarchical tables need "
                   "not have one)" if status == "infeasible" else
                   f"no additive rounding was found within {seconds:g} s (solver: {status})")
            raise InfeasibleError(f"controlled rounding to base {base:g} failed: {why}; nothing is published. "
                                  "Give a longer --time-limit, another --rounding-base, or use --method cta")
    direction = np.where(multiple, 0, np.where(values > v, UP, DOWN)).astype(np.int8)
    return values, direction, stats


def round_by_slices(problem: Problem, base: float, deadline: float) -> tuple[np.ndarray | None, str]:
    """A controlled rounding of a table of three or more dimensions, one dimension's
    hierarchy at a time (after Cox's sequence of two-way problems, seed 003 A.1): see
    :func:`slice_rounding`. The dimensions are tried as the cut one after the other, the
    one with the fewest codes first, each with an equal share of the time left, until one
    gives a rounding.

    Returns the rounded values (None when no cut gave one) and what happened, in words.
    """
    model = problem.model
    assert model is not None
    said = []
    dims = sorted(model.dims, key=lambda d: len(d.hierarchy))
    for k, dim in enumerate(dims):
        now = time.perf_counter()
        if now >= deadline:
            break
        values, how = slice_rounding(problem, dim.name, base, now + (deadline - now) / (len(dims) - k))
        said.append(how)
        if values is not None:
            return values, "; ".join(said)
    return None, "; ".join(said) or "no time left"


def slice_rounding(problem: Problem, dim_name: str, base: float, deadline: float) -> tuple[np.ndarray | None, str]:
    """Round top-down along ``dim_name``'s hierarchy: first the cells at its total, then,
    for each of its codes with children, the cells at the children, their relations
    holding with the parent's cells already rounded (each step a smaller MILP). When a
    step has no rounding given its parent, the step that rounded the parent runs again
    with its costs shaken (up to :data:`RETRIES` times), and everything after it too.

    Returns the rounded values (None when it found none) and what happened, in words.
    """
    model, codes = problem.model, problem.codes
    assert model is not None and codes is not None
    h = next(d for d in model.dims if d.name == dim_name).hierarchy
    pos = pd.Index(h.codes).get_indexer(codes[dim_name].astype(str).to_numpy())
    rel = sp.csr_matrix(problem.relations)
    pattern = rel.copy()
    pattern.data = np.ones_like(pattern.data)  # which cells each relation holds
    v = np.asarray(problem.value, dtype=float)
    steps = [[0]] + [list(h.children(i)) for i in range(len(h)) if h.children(i)]
    groups = [np.flatnonzero(np.isin(pos, g)) for g in steps]
    if np.isin(pos, -1).any():
        return None, f"by {dim_name}: cells outside the dimension's hierarchy"
    step_of = {code: k for k, g in enumerate(steps) for code in g}
    parent_step = [-1] + [step_of[h.parent[g[0]]] for g in steps[1:]]
    shaken = np.zeros(len(steps), dtype=bool)
    rng = np.random.default_rng(0)
    known = np.full(problem.n, np.nan)
    k, retries = 0, 0
    while k < len(steps):
        inside = np.zeros(problem.n)
        inside[groups[k]] = 1.0
        reach = pattern @ (inside + ~np.isnan(known))  # cells of each relation rounded or being rounded
        rows = np.flatnonzero((pattern @ inside > 0) & (reach >= np.diff(rel.indptr) - 0.5))
        left = (deadline - time.perf_counter()) / max(1, len(steps) - k)
        got, status = round_part(rel[rows], problem.rhs[rows], v, known, groups[k], base, left,
                                 shake=rng if shaken[k] else None)
        if got is not None:
            known[groups[k]] = got
            k += 1
            continue
        back = parent_step[k]
        if back < 0 or retries >= RETRIES or time.perf_counter() >= deadline:
            return None, f"by {dim_name}: step {k + 1} of {len(steps)} found none ({status}), {retries} retries"
        retries += 1
        shaken[back] = True
        for later in groups[back:]:
            known[later] = np.nan
        k = back
    return known, f"by {dim_name}: {len(steps)} steps, {retries} retries"
