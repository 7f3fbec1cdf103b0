"""The LPs of one block: which bounds need their own LP and which are already settled.

A cell's largest value needs no LP of its own when a feasible table found earlier (the
optimum of another cell's LP of the same block) already reaches

- an upper bound implied by the relations and the a priori bounds
  (:func:`tablesafe.audit.propagate.implied_bounds`): the bound is then exact; or
- the cell's *goal* (only when the caller asks for verdicts, not intervals): the cell
  can reach ``value + upl``, which is all its verdict needs.

The same holds for smallest values. Every LP solution updates the best known value of
every cell of the block, so on large blocks most bounds come free. With goals, *batch*
LPs first push all targets short of their goals at once (:func:`_batch`); for exact
bounds they push towards the implied bounds, which settle a bound where a table reaches
them (on the 13,851-cell three-way table's `fast` pattern: 1,907 -> 1,707 LPs).
"""

from __future__ import annotations

import numpy as np

from tablesafe.audit.block import Block
from tablesafe.audit.propagate import implied_bounds


class BestTables:
    """Largest and smallest known value of each cell over the tables found so far,
    and (with ``keep``) which table gives it."""

    def __init__(self, truth: np.ndarray, keep: bool) -> None:
        n = len(truth)
        self.hi = truth.astype(float).copy()
        self.lo = truth.astype(float).copy()
        self.src_hi = np.full(n, -1)
        self.src_lo = np.full(n, -1)
        self.keep = keep
        self.store: list[np.ndarray] = []

    def add(self, x: np.ndarray, k: int, d: int) -> None:
        """Record table ``x``, the optimum of cell ``k`` in direction ``d`` (``d=0``: a
        table that is no cell's optimum)."""
        pid = len(self.store) if self.keep else 0
        if self.keep:
            self.store.append(x)
        up = x > self.hi
        self.hi[up] = x[up]
        self.src_hi[up] = pid
        dn = x < self.lo
        self.lo[dn] = x[dn]
        self.src_lo[dn] = pid
        if d == 1:
            self.src_hi[k] = pid
        elif d == -1:
            self.src_lo[k] = pid

    def point(self, k: int, d: int) -> np.ndarray | None:
        """The table behind the best value of cell ``k`` in direction ``d`` (if kept)."""
        pid = (self.src_hi if d == 1 else self.src_lo)[k]
        if pid < 0 or not self.keep:
            return None
        return self.store[pid]


def _tol(a: np.ndarray) -> np.ndarray:
    """Relative tolerance ``1e-9 (1 + |a|)`` where ``a`` is finite, 0 elsewhere."""
    with np.errstate(invalid="ignore"):
        return np.where(np.isfinite(a), 1e-9 * (1.0 + np.abs(a)), 0.0)


SPLIT_MIN_TARGETS = 200
"""Fewest targets of a block for which exact bounds (no goals, no kept tables) are found
one direction per worker process."""

_SPLIT: tuple | None = None
"""The block and arrays the direction workers read (set before they are forked)."""


def block_bounds(b: Block, targets: np.ndarray, goal_hi: np.ndarray, goal_lo: np.ndarray,
                 keep: bool, counts: dict) -> tuple[np.ndarray, np.ndarray, BestTables]:
    """Bounds of the block's ``targets`` (local indices): ``(lower, upper, best)``.

    ``goal_hi``/``goal_lo`` (local arrays; ``inf``/``-inf`` = exact bound wanted): a
    bound reported where a table reaches the goal is that table's value. ``counts``
    receives ``lp_solves``, ``lp_skipped`` (settled by an implied bound),
    ``lp_certified`` (goal reached without an LP of its own) and ``lp_batch``.

    Exact bounds of many targets (no goals, no tables kept) are found one direction at a
    time, each from fresh tables, side by side in two forked processes where two CPUs are
    free (the same bounds with one: each direction never sees the other's tables).
    """
    global _SPLIT
    imp_lo, imp_hi = implied_bounds(b.matrix, b.rhs, b.lower, b.upper)
    imp_lo = np.maximum(imp_lo, b.lower)
    imp_hi = np.minimum(imp_hi, b.upper)
    exact_only = (not keep and not np.isfinite(goal_hi[targets]).any()
                  and not np.isfinite(goal_lo[targets]).any())
    if exact_only and len(targets) >= SPLIT_MIN_TARGETS:
        from tablesafe.parallel import map_forked, worker_count

        _SPLIT = (b, targets, goal_hi, goal_lo, imp_lo, imp_hi)
        before = b.rescaled
        try:
            parts = map_forked(_one_direction, [1, -1], worker_count())
        finally:
            _SPLIT = None
        (hi_out, c_hi, t_hi, r_hi), (lo_out, c_lo, t_lo, r_lo) = parts
        b.rescaled = before + r_hi + r_lo  # a worker's rescaling happened on its own copy
        for c in (c_hi, c_lo):
            for key, v in c.items():
                counts[key] = counts.get(key, 0) + v
        best = BestTables(b.truth, False)
        best.hi, best.lo = t_hi, t_lo
        return lo_out, hi_out, best
    best = BestTables(b.truth, keep)
    hi_out = _direction(b, targets, 1, goal_hi, imp_hi, best, counts)
    lo_out = _direction(b, targets, -1, goal_lo, imp_lo, best, counts)
    return lo_out, hi_out, best


def _one_direction(d: int) -> tuple[np.ndarray, dict, np.ndarray, int]:
    """A direction worker: the bounds, the LP counts, the best values it found and how
    often it rebuilt the block scaled."""
    assert _SPLIT is not None
    b, targets, goal_hi, goal_lo, imp_lo, imp_hi = _SPLIT
    before = b.rescaled
    best = BestTables(b.truth, False)
    counts = {"lp_solves": 0, "lp_skipped": 0, "lp_certified": 0, "lp_batch": 0}
    out = _direction(b, targets, d, goal_hi if d == 1 else goal_lo, imp_hi if d == 1 else imp_lo, best, counts)
    return out, counts, (best.hi if d == 1 else best.lo), b.rescaled - before


def _direction(b: Block, targets: np.ndarray, d: int, goal: np.ndarray, implied: np.ndarray, best: BestTables,
               counts: dict) -> np.ndarray:
    """The bounds of ``targets`` in direction ``d`` (``1``: largest values): an LP each,
    unless a table found before already reaches the implied bound or the goal."""
    out = np.full(len(b.cols), np.nan)
    tol, gtol = _tol(implied), _tol(goal)
    # exact bounds: a batch table reaching a cell's implied bound settles it as well
    _batch(b, targets, d, goal if np.isfinite(goal[targets]).any() else implied, best, counts)
    for k in targets:
        have = best.hi[k] if d == 1 else best.lo[k]
        if d * (have - implied[k]) >= -tol[k]:
            out[k] = min(have, b.upper[k]) if d == 1 else max(have, b.lower[k])
            counts["lp_skipped"] += 1
            continue
        if d * (have - goal[k]) >= -gtol[k]:
            out[k] = have
            counts["lp_certified"] += 1
            continue
        val, x = b.optimise(int(k), d)
        counts["lp_solves"] += 1
        out[k] = val
        if x is not None:
            best.add(x, int(k), d)
    return out


BATCH_MIN_TARGETS = 20
"""Fewest targets with finite goals in a block for which :func:`_batch` LPs are tried."""


def _batch(b: Block, targets: np.ndarray, d: int, goal: np.ndarray, best: BestTables,
           counts: dict, rounds: int = 4) -> None:
    """LPs that push every target still short of its finite goal towards it at once.

    The objective weighs each such cell by the inverse of its remaining distance, so one
    optimal table usually brings many of them to their goals; their own LPs are then
    skipped (the reached goals are certified by a feasible table, so nothing inexact is
    reported). A round that certifies fewer than a tenth of the open targets ends it.
    """
    for _ in range(rounds):
        have = best.hi[targets] if d == 1 else best.lo[targets]
        gap = d * (goal[targets] - have)
        open_ = np.isfinite(gap) & (gap > _tol(goal[targets]))
        if int(open_.sum()) < BATCH_MIN_TARGETS:
            return
        weights = np.zeros(len(b.cols))
        scale = float(np.median(gap[open_]))
        weights[targets[open_]] = d * scale / gap[open_]
        x = b.optimise_sum(weights)
        counts["lp_batch"] = counts.get("lp_batch", 0) + 1
        if x is None:
            return
        best.add(x, -1, 0)
        now = best.hi[targets] if d == 1 else best.lo[targets]
        reached = open_ & (d * (goal[targets] - now) <= _tol(goal[targets]))
        if reached.sum() < 0.1 * open_.sum():
            return
