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
import scipy.sparse as sp

from tablesafe import live_counts
from tablesafe.audit.block import Block
from tablesafe.audit.propagate import implied_bounds

BASES_KEPT = 512
"""Optimal bases a :class:`BestTables` keeps before it drops those no cell's best value
comes from."""


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
        self.count = 0
        self.bases: dict[int, object] = {}

    def add(self, x: np.ndarray, k: int, d: int, basis: object | None = None) -> None:
        """Record table ``x``, the optimum of cell ``k`` in direction ``d`` (``d=0``: a
        table that is no cell's optimum), and the optimal basis it came with."""
        pid = self.count
        self.count += 1
        if self.keep:
            self.store.append(x)
        if basis is not None:
            if len(self.bases) >= BASES_KEPT:
                used = set(self.src_hi.tolist()) | set(self.src_lo.tolist())
                self.bases = {i: v for i, v in self.bases.items() if i in used}
            self.bases[pid] = basis
        self._improve(pid, x)
        if d == 1:
            self.src_hi[k] = pid
        elif d == -1:
            self.src_lo[k] = pid

    def add_moves(self, truth: np.ndarray, idx: np.ndarray, dev: np.ndarray) -> None:
        """Record the table ``truth`` moved by ``dev`` at ``idx`` (no cell's optimum), as
        :meth:`add` does, looking only at the cells it moves unless tables are kept."""
        if self.keep:
            x = truth.astype(float).copy()
            x[idx] += dev
            self.add(x, -1, 0)
            return
        pid = self.count
        self.count += 1
        self._improve(pid, truth[idx] + dev, idx)

    def _improve(self, pid: int, vals: np.ndarray, idx: np.ndarray | None = None) -> None:
        """Make table ``pid`` the source of every cell it takes beyond the best so far:
        ``vals`` are its values at ``idx`` (every cell when None)."""
        hi = self.hi if idx is None else self.hi[idx]
        lo = self.lo if idx is None else self.lo[idx]
        up, dn = vals > hi, vals < lo
        at_up = up if idx is None else idx[up]
        at_dn = dn if idx is None else idx[dn]
        self.hi[at_up] = vals[up]
        self.src_hi[at_up] = pid
        self.lo[at_dn] = vals[dn]
        self.src_lo[at_dn] = pid

    def source(self, k: int, d: int) -> int:
        """The number of the table behind the best value of cell ``k`` in direction ``d``
        (-1: the true table)."""
        return int((self.src_hi if d == 1 else self.src_lo)[k])

    def basis_of(self, k: int, d: int) -> tuple[int, object | None]:
        """The number and the basis of the table behind the best value of cell ``k`` in
        direction ``d`` (basis None when not recorded)."""
        pid = self.source(k, d)
        return pid, self.bases.get(pid)

    def point(self, k: int, d: int) -> np.ndarray | None:
        """The table behind the best value of cell ``k`` in direction ``d`` (if kept)."""
        pid = self.source(k, d)
        if pid < 0 or not self.keep:
            return None
        return self.store[pid]


def _tol(a: np.ndarray) -> np.ndarray:
    """Relative tolerance ``1e-9 (1 + |a|)`` where ``a`` is finite, 0 elsewhere."""
    with np.errstate(invalid="ignore"):
        return np.where(np.isfinite(a), 1e-9 * (1.0 + np.abs(a)), 0.0)


SPLIT_MIN_TARGETS = 200
"""Fewest targets of a block for which exact bounds (no goals, no kept tables) are found
in parts, side by side in forked worker processes."""

_SPLIT: tuple | None = None
"""The block, its starting basis and units, and the arrays the part workers read (set
before they are forked)."""


def block_bounds(b: Block, targets: np.ndarray, goal_hi: np.ndarray, goal_lo: np.ndarray,
                 keep: bool, counts: dict, seeds: sp.csr_matrix | None = None
                 ) -> tuple[np.ndarray, np.ndarray, BestTables]:
    """Bounds of the block's ``targets`` (local indices): ``(lower, upper, best)``.

    ``seeds``: feasible tables of the block known beforehand, one row of deviations from
    the true table each; those behind the largest or smallest value of some cell are
    recorded first, as tables found by LPs would be (not where exact bounds are found in
    parts).

    ``goal_hi``/``goal_lo`` (local arrays; ``inf``/``-inf`` = exact bound wanted): a
    bound reported where a table reaches the goal is that table's value. ``counts``
    receives ``lp_solves``, ``lp_skipped`` (settled by an implied bound),
    ``lp_certified`` (goal reached without an LP of its own) and ``lp_batch``.

    Exact bounds of many targets (no goals, no tables kept) are found in four parts (each
    direction for each half of the targets, in cell order), each from the same starting
    basis and fresh tables, in forked processes where two CPUs are free: the largest
    values of a three-way block need several times the LPs of the smallest, so halves
    keep both workers busy. A part never sees another's tables, so the bounds are the
    same with one worker or two. Those LPs run over the block's roots, its relations of
    two unknowns eliminated (:mod:`tablesafe.audit.doubletons`).
    """
    exact_only = (not keep and not np.isfinite(goal_hi[targets]).any()
                  and not np.isfinite(goal_lo[targets]).any())
    if exact_only and len(targets) >= SPLIT_MIN_TARGETS:
        from tablesafe.audit.doubletons import eliminate_doubletons

        red = eliminate_doubletons(b)
        if red is None:
            return _exact_in_parts(b, targets, counts)
        roots = np.unique(red.pos[targets])
        counts["eliminated"] = counts.get("eliminated", 0) + len(b.cols) - len(red.block.cols)
        lo_r, hi_r, best_r = _exact_in_parts(red.block, roots, counts)
        b.rescaled += red.block.rescaled
        lo_c, hi_c = red.cell_bounds(lo_r, hi_r)
        lo_out = np.full(len(b.cols), np.nan)
        hi_out = lo_out.copy()
        lo_out[targets], hi_out[targets] = lo_c[targets], hi_c[targets]
        best = BestTables(b.truth, False)
        best.lo, best.hi = red.cell_bounds(best_r.lo, best_r.hi)
        return lo_out, hi_out, best
    imp_lo, imp_hi = _implied(b)
    best = BestTables(b.truth, keep)
    if seeds is not None and seeds.shape[0]:
        _record_seeds(best, b.truth, seeds)
    hi_out = _direction(b, targets, 1, goal_hi, imp_hi, best, counts)
    lo_out = _direction(b, targets, -1, goal_lo, imp_lo, best, counts)
    return lo_out, hi_out, best


def _record_seeds(best: BestTables, truth: np.ndarray, seeds: sp.csr_matrix) -> None:
    """Record in ``best`` each seed table (row of deviations) that gives some cell its
    largest or smallest value among the seeds, beyond the true table."""
    by_cell = seeds.tocsc()
    cell = np.repeat(np.arange(by_cell.shape[1]), np.diff(by_cell.indptr))
    winners: set[int] = set()
    for sign in (1.0, -1.0):
        data = sign * by_cell.data
        order = np.lexsort((-data, cell))
        first = np.ones(order.size, dtype=bool)
        first[1:] = cell[order][1:] != cell[order][:-1]
        top = order[first]
        top = top[data[top] > 1e-9 * (1.0 + np.abs(truth[cell[top]]))]
        winners.update(by_cell.indices[top].tolist())
    for r in sorted(winners):
        lo, hi = seeds.indptr[r], seeds.indptr[r + 1]
        best.add_moves(truth, seeds.indices[lo:hi], seeds.data[lo:hi])


def _implied(b: Block) -> tuple[np.ndarray, np.ndarray]:
    """The block's bounds implied by its relations, within its a priori bounds."""
    imp_lo, imp_hi = implied_bounds(b.matrix, b.rhs, b.lower, b.upper)
    return np.maximum(imp_lo, b.lower), np.minimum(imp_hi, b.upper)


def _exact_in_parts(b: Block, targets: np.ndarray, counts: dict) -> tuple[np.ndarray, np.ndarray, BestTables]:
    """Exact bounds of ``targets`` in four parts (see :func:`block_bounds`)."""
    global _SPLIT
    from tablesafe.parallel import map_forked, worker_count

    imp_lo, imp_hi = _implied(b)
    start = b.optimise_sum(np.zeros(len(b.cols)))   # one cold solve, shared by the parts
    counts["lp_batch"] += 1
    basis = b.model().getBasis() if start is not None else None
    halves = np.array_split(targets, 2)
    parts = [(1, halves[0]), (1, halves[1]), (-1, halves[0]), (-1, halves[1])]
    _SPLIT = (b, basis, b.scale, imp_lo, imp_hi)
    before = b.rescaled
    try:
        done = map_forked(_one_part, parts, worker_count())
    finally:
        _SPLIT = None
    best = BestTables(b.truth, False)
    hi_out = np.full(len(b.cols), np.nan)
    lo_out = hi_out.copy()
    rescaled = 0
    for (d, part), (out, c, t, r) in zip(parts, done):
        (hi_out if d == 1 else lo_out)[part] = out[part]
        if d == 1:
            best.hi = np.maximum(best.hi, t)
        else:
            best.lo = np.minimum(best.lo, t)
        rescaled += r
        for key, v in c.items():
            counts[key] = counts.get(key, 0) + v
    b.rescaled = before + rescaled  # a worker's rescaling happened on its own copy
    return lo_out, hi_out, best


def _one_part(part: tuple[int, np.ndarray]) -> tuple[np.ndarray, dict, np.ndarray, int]:
    """A part worker: the bounds of its targets in its direction, the LP counts, the best
    values it found and how often it rebuilt the block scaled. It starts from a new
    model with the block's shared basis, whatever ran before it in the same process."""
    assert _SPLIT is not None
    b, basis, scale, imp_lo, imp_hi = _SPLIT
    d, targets = part
    before = b.rescaled
    b.highs, b.scale = None, scale   # a new model from the shared basis: nothing left by an earlier part
    h = b.model()
    if basis is not None:
        h.setBasis(basis)
    b._last = -2   # every cost is set again by the next LP
    best = BestTables(b.truth, False)
    counts = {"lp_solves": 0, "lp_skipped": 0, "lp_certified": 0, "lp_batch": 0}
    exact = np.full(len(b.cols), d * np.inf)   # no goals: exact bounds
    out = _direction(b, targets, d, exact, imp_hi if d == 1 else imp_lo, best, counts)
    return out, counts, (best.hi if d == 1 else best.lo), b.rescaled - before


def _direction(b: Block, targets: np.ndarray, d: int, goal: np.ndarray, implied: np.ndarray, best: BestTables,
               counts: dict) -> np.ndarray:
    """The bounds of ``targets`` in direction ``d`` (``1``: largest values): an LP each,
    unless a table found before already reaches the implied bound or the goal."""
    out = np.full(len(b.cols), np.nan)
    tol, gtol = _tol(implied), _tol(goal)
    if np.isfinite(goal[targets]).any():
        _batch(b, targets, d, goal, best, counts)
    else:  # exact bounds: a batch table reaching a cell's implied bound settles it as well
        _batch(b, targets, d, implied, best, counts, rounds=BATCH_ROUNDS_EXACT, least=BATCH_LEAST_EXACT)
    steps = _Steps()
    for k in targets.tolist():
        live_counts.add("bounds")
        have = best.hi[k] if d == 1 else best.lo[k]
        if d * (have - implied[k]) >= -tol[k]:
            out[k] = min(have, b.upper[k]) if d == 1 else max(have, b.lower[k])
            counts["lp_skipped"] += 1
            continue
        if d * (have - goal[k]) >= -gtol[k]:
            out[k] = have
            counts["lp_certified"] += 1
            continue
        if steps.worth_it():
            _warm_start(b, best, k, d)
        val, x = b.optimise(int(k), d)
        counts["lp_solves"] += 1
        out[k] = val
        steps.count(b)
        if x is not None:
            best.add(x, int(k), d, b.model().getBasis() if steps.worth_it() else None)
    return out


WARM_FROM_STEPS = 20
"""Mean simplex iterations per LP from which the LPs of one direction keep their optimal
bases and start from the best table's (:func:`_warm_start`): below, reading and setting
a basis costs more than the steps it saves (a one-level two-way block of 5,103 cells
takes 6 iterations per LP)."""


class _Steps:
    """Simplex iterations of the LPs of one direction so far."""

    def __init__(self) -> None:
        self.lps = 0
        self.iterations = 0

    def count(self, b: Block) -> None:
        self.lps += 1
        self.iterations += int(b.model().getInfo().simplex_iteration_count)

    def worth_it(self) -> bool:
        """Whether warm starts from the best table's basis pay (three LPs seen first)."""
        return self.lps >= 3 and self.iterations >= WARM_FROM_STEPS * self.lps


def _warm_start(b: Block, best: BestTables, k: int, d: int) -> bool:
    """Start cell ``k``'s LP from the optimal basis of the table behind its best known
    value (True when that is not the model's basis already).

    That table already takes ``k`` as far as any table found so far, so the simplex has
    fewer steps left than from the last LP's optimum: on the 13,851-cell three-way
    table's default pattern 30 % fewer iterations, and the exact intervals in 42 s
    instead of 62 s."""
    pid, warm = best.basis_of(k, d)
    if warm is None or pid == best.count - 1:
        return False
    b.model().setBasis(warm)
    return True


BATCH_MIN_TARGETS = 20
"""Fewest open targets in a block for which :func:`_batch` LPs are tried."""
BATCH_ROUNDS_EXACT = 200
"""Most batch LPs per direction towards the implied bounds (exact bounds)."""
BATCH_LEAST_EXACT = 10
"""Towards the implied bounds, batch LPs go on while each settles at least this many
targets: one such LP costs a few single LPs, and a single LP settles about two (on the
13,851-cell three-way table's `fast` pattern 30 batch LPs instead of 2 saved 380 single
LPs of the largest values)."""


def _batch(b: Block, targets: np.ndarray, d: int, goal: np.ndarray, best: BestTables,
           counts: dict, rounds: int = 4, least: int | None = None) -> None:
    """LPs that push every target still short of its finite goal towards it at once.

    The objective weighs each such cell by the inverse of its remaining distance, so one
    optimal table usually brings many of them to their goals; their own LPs are then
    skipped (the reached goals are certified by a feasible table, so nothing inexact is
    reported). A round that certifies fewer than a tenth of the open targets (fewer than
    ``least``, when given) ends it, as do ``rounds`` rounds.
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
        best.add(x, -1, 0, b.model().getBasis())
        now = best.hi[targets] if d == 1 else best.lo[targets]
        reached = open_ & (d * (goal[targets] - now) <= _tol(goal[targets]))
        if reached.sum() < (0.1 * open_.sum() if least is None else least):
            return
