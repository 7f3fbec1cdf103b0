"""The subtables' certificates reused by the full-table check.

A HiTaS subtable (:mod:`tablesafe.suppress.modular`) proves each of its targets by a
sparse certificate: deviations from the truth that meet the subtable's relations, keep
every cell within the attacker's box, move only withheld cells and move the target by
its level (:mod:`tablesafe.suppress.subtable_cuts`). Most of them touch no cell that
other subtables share in a way that breaks their relations (measured on generated
tables with holdings: 92 % of the outsiders' certificates of a 13,167-cell two-way
table, 58 % on 2,132 cells, 44 % on a 1,872-cell three-way table), and then they are
certificates of the whole table as well: the full-table check needs no attacker LP
for those attacks.

Nothing is taken on trust: :func:`whole_table_certificates` keeps a table only when it
meets every relation of the whole table, stays within the attacker's bounds there,
moves only cells withheld in the full pattern, leaves the insider's own cell alone and
moves its target by at least the level.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from tablesafe.problem import Problem
from tablesafe.suppress.attacker import UP, Attack, Bounds, Key, moves_any

Found = tuple[Key, np.ndarray, np.ndarray]
"""A subtable's passing attack in table positions: (key, cells moved, deviations)."""

RESIDUAL_TOLERANCE = 1e-7
"""A relation counts as met when ``|A y|`` is at most this times ``max(1, max |y|)``
(the LP solutions carry rounding errors near 1e-9 of their size)."""


def in_table_positions(tables, cells: np.ndarray, sensitive_here: np.ndarray) -> list[Found]:
    """A subtable's ``(key, attack)`` pairs in the positions of the whole table
    (``cells``: the subtable's cells there), for targets sensitive in the whole table
    (``sensitive_here``, per subtable cell; complements carried in as targets are left
    out)."""
    out = []
    for (k, d, s), a in tables:
        if not sensitive_here[k]:
            continue
        key = (int(cells[k]), int(d), -1 if s < 0 else int(cells[s]))
        out.append((key, cells[a.cells], np.asarray(a.dev, dtype=float)))
    return out


def whole_table_certificates(problem: Problem, bounds: Bounds, withheld: np.ndarray,
                             found: list[Found]) -> dict[Key, Attack]:
    """The tables of ``found`` that are certificates of the whole table under
    ``withheld``, as passing attacks (the first valid one per key)."""
    return tables_under(problem, bounds, withheld.astype(float), found)


def tables_under(problem: Problem, bounds: Bounds, x: np.ndarray, found: list[Found]) -> dict[Key, Attack]:
    """The tables of ``found`` that are certificates of ``problem`` under the pattern
    ``x`` (possibly fractional: a cell's bounds scale with it, as in the attacker's LP),
    as passing attacks (the first valid one per key)."""
    if not found:
        return {}
    lens = np.array([len(c) for _, c, _ in found], dtype=np.int64)
    rows = np.concatenate([c for _, c, _ in found]).astype(np.int64)
    devs = np.concatenate([d for _, _, d in found])
    col = np.repeat(np.arange(len(found)), lens)
    keys = np.array([key for key, _, _ in found], dtype=np.int64).reshape(len(found), 3)
    tgt, direction, ins = keys[:, 0], keys[:, 1], keys[:, 2]
    is_tgt = rows == tgt[col]
    bad_row = outside_box(bounds, x, rows, devs, is_tgt) | (rows == ins[col]) | ~np.isfinite(devs)
    ok = np.bincount(col[bad_row], minlength=len(found)) == 0
    # every relation of the whole table met
    y = sp.csc_matrix((devs, (rows, col)), shape=(problem.n, len(found)))
    res = (problem.relations @ y).tocsc()
    worst = np.zeros(len(found))
    if res.nnz:
        rc = np.repeat(np.arange(len(found)), np.diff(res.indptr))
        np.maximum.at(worst, rc, np.abs(res.data))
    scale = np.zeros(len(found))
    np.maximum.at(scale, col, np.abs(devs))
    ok &= worst <= RESIDUAL_TOLERANCE * np.maximum(1.0, scale)
    # the target moved by its level in the direction attacked
    moved = np.zeros(len(found))
    np.add.at(moved, col[is_tgt], devs[is_tgt])
    moved *= direction
    required = np.where(direction == UP, bounds.req_up[tgt], bounds.req_dn[tgt])
    ok &= (required > 0) & (moved >= required - 1e-6 * np.maximum(1.0, required))
    ok &= bounds.req_sl[tgt] <= 0  # sliding levels compare true reaches: their own LP
    out: dict[Key, Attack] = {}
    for i in np.flatnonzero(ok).tolist():
        key, cells, dev = found[i]
        if key not in out:
            out[key] = Attack(key[0], key[1], key[2], float(moved[i]), float(required[i]), cells=cells, dev=dev)
    return out


def outside_box(bounds: Bounds, x: np.ndarray, cells: np.ndarray, devs: np.ndarray,
                is_target: np.ndarray) -> np.ndarray:
    """Per entry of tables flattened to ``cells`` and their deviations ``devs``, whether it
    leaves the attacker's box under the pattern ``x`` (possibly fractional: bounds scale
    with a cell's share): a target (``is_target``) may move over its whole a priori
    interval, the other cells as complements, and only withheld cells move."""
    on = x[cells] > 0
    share = np.where(on, x[cells], 1.0)  # (inf times a share is inf; a published cell fails below)
    up = np.where(is_target, bounds.tup[cells], bounds.up[cells]) * share
    dn = np.where(is_target, bounds.tdn[cells], bounds.dn[cells]) * share
    slack = 1e-9 * np.maximum(1.0, np.abs(devs))
    return (devs > up + slack) | (-devs > dn + slack) | ~on


def take_known(known: dict[Key, Attack], key: Key, also_fixed: dict[Key, tuple[int, ...]] | None,
               out: dict[Key, Attack]) -> bool:
    """Answer ``key`` from a known table (into ``out``) when there is one that moves none
    of the further cells the attacker knows (``also_fixed``); returns whether it was."""
    a = known.get(key)
    if a is None or moves_any(a, also_fixed.get(key, ()) if also_fixed else ()):
        return False
    out[key] = a
    return True
