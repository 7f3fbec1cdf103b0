"""Attacks on a large block tried first on each target's neighbourhood.

A target in a block of thousands of withheld cells is attacked first on the cells within
a few relation hops of it (as many as the table has dimensions), every cell further away
held at its true value. A table found there is a table of the whole block too (the cells
held fixed move by zero), so an attack that passes there needs no LP on the block.

In tables of three or more dimensions with hierarchies a target's tables often run
through several levels of each code: the first certificate of a total in a generated
13,851-cell three-way table was five hops out, and two hops held no table for any of
150 targets. There the neighbourhood is widened one hop at a time while the attack
fails, up to :data:`NEIGHBOURHOOD_MOST` cells. (In two-way tables widening only cost
time: 16.6 -> 17.2 s on a generated 13,167-cell table, the same pattern.)

Tables found on neighbourhoods are tables of the block, so the block's
:class:`~tablesafe.suppress.reached_tables.ReachedTables` (``found``) keeps them: a later
target that one of them moves far enough gets no LP at all.

The attacks still failing are returned and attacked on the whole block
(:func:`tablesafe.suppress.attack_runs.run_attacks`).
"""

from __future__ import annotations

import time

import numpy as np
import scipy.sparse as sp

from tablesafe.problem import Problem
from tablesafe.structure.neighbours import neighbours
from tablesafe.suppress.attacker import UP, Attack, BlockLP, Bounds, Key
from tablesafe.suppress.reached_tables import ReachedTables, answer_from_tables


def attack_neighbourhoods(problem: Problem, bounds: Bounds, x: np.ndarray, keys: list[Key],
                          out: dict[Key, Attack], by_cell: sp.csc_matrix, timeout: type[Exception],
                          sparse: bool, also_fixed: dict[Key, tuple[int, ...]] | None = None,
                          deadline: float | None = None, block_cells: int | None = None,
                          radius: dict[tuple[int, int], int] | None = None,
                          found: ReachedTables | None = None) -> list[Key]:
    """Attack each target of ``keys`` on its neighbourhood, widened while the attacks
    fail in tables of three or more dimensions (:func:`neighbourhood_hops` relation
    hops, then :data:`WIDEN_HOPS` more at a time while it holds at most
    :data:`NEIGHBOURHOOD_SHARE` of ``block_cells`` and :data:`NEIGHBOURHOOD_MOST`
    cells). Passing attacks go into ``out``; the keys still unresolved are returned
    (attacks with a sliding level always are). With ``sparse`` a neighbourhood is asked
    only whether a table exists there (each passing attack's sparse certificate, no
    attacker's optimum: the whole block gives that when none does). ``by_cell``: the
    relations by cell; ``timeout`` is raised past ``deadline``.

    ``radius`` (shared by the calls of one check of a pattern) records, per target and
    direction, the hops at which the outsider's attack passed, or -1 when no
    neighbourhood held a table. A single respondent knows more than the outsider, so no
    smaller neighbourhood holds a table for it: its attack starts at that radius, and
    goes straight to the block after -1.

    ``found``: the tables found so far in the block; each target's attacks are first
    answered from them where they can be, and every table passed here is added."""
    a = problem.relations
    active = x > 1e-9
    widens = _dimensions(problem) >= 3
    block = block_cells if block_cells is not None else int(active.sum())
    most = min(NEIGHBOURHOOD_SHARE * block, NEIGHBOURHOOD_MOST)  # a widened neighbourhood
    first_most = FIRST_SHARE * block  # the first one
    by_target: dict[int, list[Key]] = {}
    for key in keys:
        by_target.setdefault(key[0], []).append(key)
    left: list[Key] = []
    for k, tkeys in by_target.items():
        if bounds.req_sl[k] > 0:
            left.extend(tkeys)
            continue
        outsider = {key for key in tkeys if not _knows_more(key, also_fixed)}
        start = {key: 0 if key in outsider or radius is None else radius.get((k, key[1]), 0) for key in tkeys}
        left.extend(key for key in tkeys if start[key] < 0)
        pending = [key for key in tkeys if start[key] >= 0]
        if found is not None:
            pending = _from_tables(found, bounds, pending, out, also_fixed)
        cells, hops, exhausted = np.array([k]), 0, False
        while pending:
            if deadline is not None and time.monotonic() > deadline:
                raise timeout
            if hops and not widens:
                exhausted = True
                break
            want = max(hops + WIDEN_HOPS if hops else neighbourhood_hops(problem), min(start[q] for q in pending))
            grown = _grow(a, by_cell, active, cells, want - hops)
            too_wide = (grown.size > most or grown.size == cells.size) if hops else grown.size > first_most
            if too_wide:
                exhausted = True
                break
            cells, hops = grown, want
            lp = BlockLP(problem, bounds, x, cells, neighbours(by_cell, cells))
            still = []
            for key in pending:
                _, d, s = key
                if start[key] > hops:
                    still.append(key)
                    continue
                req = bounds.req_up[k] if d == UP else bounds.req_dn[k]
                extra = also_fixed.get(key, ()) if also_fixed else ()
                att = lp.attack(k, d, req, s, want_dual=False, sparse=sparse, also_fixed=extra,
                                expect_pass=sparse, reach=not sparse)
                if att.ok:
                    out[key] = att
                    if found is not None:
                        found.add(att)
                    if radius is not None and key in outsider:
                        radius[(k, d)] = hops
                else:
                    still.append(key)
            pending = still
        if exhausted and radius is not None:
            for key in pending:
                if key in outsider:
                    radius[(k, key[1])] = -1
        left.extend(pending)
    return left


def _from_tables(found: ReachedTables, bounds: Bounds, keys: list[Key], out: dict[Key, Attack],
                 also_fixed: dict[Key, tuple[int, ...]] | None) -> list[Key]:
    """The keys no table found earlier in the block answers; the answered ones go into
    ``out`` with that table (:mod:`~tablesafe.suppress.reached_tables`)."""
    left = []
    for key in keys:
        k, d, _ = key
        req = bounds.req_up[k] if d == UP else bounds.req_dn[k]
        extra = also_fixed.get(key, ()) if also_fixed else ()
        att = answer_from_tables(found, None, key, req, extra, certify=False)
        if att is None:
            left.append(key)
        else:
            out[key] = att
    return left


def _knows_more(key: Key, also_fixed: dict[Key, tuple[int, ...]] | None) -> bool:
    """Whether ``key``'s attacker knows cells the outsider does not (a single
    respondent's own cell, or further cells fixed)."""
    return key[2] >= 0 or bool(also_fixed and also_fixed.get(key))


def _grow(a: sp.csr_matrix, by_cell: sp.csc_matrix, active: np.ndarray, cells: np.ndarray,
          hops: int) -> np.ndarray:
    """``cells`` and the active cells within ``hops`` relation hops of them."""
    for _ in range(hops):
        cols = neighbours(a, neighbours(by_cell, cells))
        cells = np.union1d(cells, cols[active[cols]])
    return cells


NEIGHBOURHOOD_SHARE = 0.6
"""A neighbourhood is widened only while it holds at most this share of its block's
cells (and at most :data:`NEIGHBOURHOOD_MOST`); past that the block's own LP decides.
Measured on the audit-guided repair of `modular`'s subtable pattern of the generated
13,851-cell three-way table with holdings (one block of 6,516 cells whose relations
hold two or three withheld cells each, so that a table moving a target reaches many
hops away; sixtieth session): its first inner rounds took 248 s at 0.25 and 182 s at
0.6, the whole repair past its first audit about 414 s and 336 s, withholding 47.35 M
and 46.99 M. ``auto`` kept its seconds (within noise) and withheld value on that table,
on the 1,872- and 8,208-cell three-way tables and on the linked pair (one block of
31,000 cells: 153 and 158 s, 517.6 M both)."""

NEIGHBOURHOOD_MOST = 20_000
"""Most cells a widened neighbourhood may hold. (Measured on the generated linked pair,
whose pattern is one block of 31,000 cells: its 622 targets' single respondents were
checked in 159 s with at most 2,000 cells, 61 s with 20,000; most attacks then pass on
a neighbourhood of a few thousand cells at about 5 ms an LP instead of the block's
200 ms. Smaller blocks are bound by :data:`NEIGHBOURHOOD_SHARE`.)"""

FIRST_SHARE = 0.5
"""A target whose first neighbourhood holds more than this share of its block's cells is
attacked on the block at once: an LP built for one target on most of the block costs
more than the block's own LP, which every target of the block shares. (Measured on a
generated flat 121 x 41 two-way table with 2,162 sensitive cells among its 3,617
non-empty ones: two hops from any cell reach its whole block, and the one subtable spent
22 s building and solving an LP of most of the table per target.)"""

WIDEN_HOPS = 1
"""Relation hops added each time a neighbourhood is widened."""


def neighbourhood_hops(problem: Problem) -> int:
    """How many relation hops a target's neighbourhood reaches: the number of the
    table's dimensions (at least two). The smallest table moving a cell of a
    k-dimensional table moves the corners of a box with two codes per dimension, the
    furthest of which is k hops away (a rectangle's opposite corner in two dimensions,
    a cube's in three); two hops in a three-way table hold no such table at all."""
    return max(2, _dimensions(problem))


def _dimensions(problem: Problem) -> int:
    """The table's dimensions (two without a table structure)."""
    model = problem.model
    return len(model.dims) if model is not None and model.size == problem.n else 2
