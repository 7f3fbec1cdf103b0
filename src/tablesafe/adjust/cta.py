"""Controlled tabular adjustment (seed 003 B.3; seed 002, "Secondary tabular data
protection methods": Cox and Dandekar, Castro and Giessing).

Every sensitive cell is moved to at least ``value + UPL`` (up) or at most
``value - LPL`` (down); the other cells change as little as possible so that every
relation of the table still holds; a priori bounds are kept (no negative turnover) and
the totals ``fix_totals`` names keep their true values.

The model, with ``d = p - q`` the deviation of a movable cell (``p, q >= 0``) and a
binary ``z`` per sensitive cell (1: up)::

    min  sum w (p + q)                              (cost weighted, l1)
    A (p - q) = rhs - A value                       (the table stays additive)
    d - (UPL + down room) z >= -down room           (z = 1: d >= UPL)
    d - (LPL + up room) z   <= -LPL                 (z = 0: d <= -LPL)
    0 <= p <= up room, 0 <= q <= down room          (a priori bounds)

``optimal`` solves it as a MILP; ``alternating`` fixes ``z`` by seed 003's heuristic
(sensitive cells largest first, directions alternating) and solves one LP. Costs: weights
``1/value`` (``weighted``, the LP-based CTA), 1 (``l1``), or the largest relative change
``t >= (p + q)/value`` (``relative``, the simplified CTA's minimum percent deviation).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp

from tablesafe.adjust.options import MILP_MAX_CELLS, AdjustOptions, FixTotals
from tablesafe.adjust.result import DOWN, UP
from tablesafe.adjust.solve import Model, Solved, solve, solve_guarded
from tablesafe.adjust.totals import fixed_cells
from tablesafe.errors import InfeasibleError
from tablesafe.problem import Problem

LP_RESERVE = 0.15
"""Share of the time limit kept back from the MILP for the heuristic's fix-ups."""

SHORTFALL_PENALTY = 1e4
"""Cost of a unit by which a target misses its level in the heuristic's elastic LP,
relative to the largest cost of a unit of deviation."""

REPAIR_ROUNDS = 4
"""How many times the heuristic turns the directions of targets short of their levels."""

POLISH_CELLS = 20
"""How many of the worst-changed non-sensitive cells the heuristic's polish looks around."""

DOMINANT_SHARE = 0.5
"""A sensitive part holding at least this share of a sensitive total follows its direction."""


@dataclass(frozen=True)
class CtaModel:
    """The CTA model of a problem: the MILP, and where its columns sit.

    Attributes:
        model: the MILP (columns ``p``, ``q``, ``z`` and, for ``relative``, ``t``).
        movable: the cells that may change (``p`` and ``q`` columns, in this order).
        targets: positions in ``movable`` of the sensitive cells with a direction to choose.
        forced: per target, the direction its bounds leave (``UP``, ``DOWN``, or 0: either).
        k: the number of movable cells.
    """

    model: Model
    movable: np.ndarray
    targets: np.ndarray
    forced: np.ndarray
    k: int = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "k", len(self.movable))

    def z(self) -> np.ndarray:
        """The columns of the direction binaries."""
        return 2 * self.k + np.arange(len(self.targets))

    def e(self) -> np.ndarray:
        """The columns of the shortfalls (elastic: how far a target misses its level)."""
        return 2 * self.k + len(self.targets) + np.arange(len(self.targets))

    def fixed(self, directions: np.ndarray, *, free: np.ndarray | None = None, elastic: bool = False,
              feasibility: bool = False) -> Model:
        """The model with every direction fixed to ``directions`` (``UP``/``DOWN``) but
        those of the targets ``free`` marks (then a MILP over them); ``elastic`` lets the
        targets miss their levels at a high cost; ``feasibility`` minimises only by how
        much they miss them."""
        lo, up = self.model.col_lower.copy(), self.model.col_upper.copy()
        z = self.z()
        chosen = np.ones(len(z), dtype=bool) if free is None else ~free
        lo[z[chosen]] = up[z[chosen]] = (directions[chosen] == UP).astype(float)
        if elastic:
            up[self.e()] = np.inf
        integer = None
        if free is not None and free.any():
            integer = np.zeros(len(lo), dtype=bool)
            integer[z[free]] = True
        cost = self.model.cost
        if feasibility:
            cost = np.zeros(len(cost))
            cost[self.e()] = 1.0
        return Model(cost, lo, up, self.model.matrix, self.model.row_lower, self.model.row_upper, integer)

    def deviation(self, x: np.ndarray, n: int) -> np.ndarray:
        """Per cell, the deviation a solution ``x`` gives."""
        d = np.zeros(n)
        d[self.movable] = x[: self.k] - x[self.k: 2 * self.k]
        return d


def build_model(problem: Problem, fix: FixTotals, cost: str, *, loose: bool = False) -> CtaModel:
    """The CTA MILP of ``problem`` (see the module text). A cell moves at most twice the
    table's largest value (a sensitive cell: its value plus twice its levels), which keeps
    the MILP tight; ``loose`` allows as far as every leaf moving by the largest level
    (for :func:`all_up`).

    Raises:
        InfeasibleError: a sensitive cell that its a priori bounds let move neither up by
            its UPL nor down by its LPL.
    """
    v = np.asarray(problem.value, dtype=float)
    sens = problem.sensitive
    fixed = (fixed_cells(problem, fix) & ~sens) | problem.empty | (problem.upper <= problem.lower)
    movable = np.flatnonzero(~fixed)
    k = len(movable)
    span = 2.0 * max(1.0, float(np.max(np.abs(v), initial=0.0))) + float(np.max(problem.upl, initial=0.0))
    if loose:
        span += problem.n * float(np.max(np.maximum(problem.upl, problem.lpl), initial=0.0))
    up_room = np.minimum(problem.upper - v, span)[movable].clip(min=0.0)
    down_room = np.minimum(v - problem.lower, span)[movable].clip(min=0.0)
    upl, lpl = problem.upl[movable], problem.lpl[movable]
    targets = np.flatnonzero(sens[movable] & ((upl > 0) | (lpl > 0)))
    # a target moves at most its own value plus twice its levels (a tighter MILP)
    reach = 2.0 * (upl + lpl)[targets] + np.abs(v[movable][targets]) if not loose else np.full(len(targets), span)
    up_room[targets] = np.minimum(up_room[targets], np.maximum(reach, upl[targets]))
    down_room[targets] = np.minimum(down_room[targets], np.maximum(reach, lpl[targets]))
    can_up = up_room[targets] >= upl[targets]
    can_down = down_room[targets] >= lpl[targets]
    stuck = ~can_up & ~can_down
    if stuck.any():
        i = int(movable[targets[np.flatnonzero(stuck)[0]]])
        raise InfeasibleError(f"sensitive cell {problem.names[i]} can move neither up by its upper protection "
                              "level nor down by its lower one within its a priori bounds")
    forced = np.where(can_up & can_down, 0, np.where(can_up, UP, DOWN)).astype(np.int8)
    s = len(targets)
    w = _weights(v[movable], cost)
    rel = sp.csr_matrix(problem.relations)[:, movable]
    keep = np.diff(rel.indptr) > 0
    rel = rel[keep]
    resid = (problem.rhs - problem.relations @ v)[keep]
    eye = sp.identity(k, format="csr")
    pick = eye[targets]
    one = sp.identity(s, format="csr")
    blocks = [[rel, -rel, sp.csr_matrix((rel.shape[0], s)), sp.csr_matrix((rel.shape[0], s))],
              [pick, -pick, sp.diags(-(upl[targets] + down_room[targets])), one],
              [pick, -pick, sp.diags(-(lpl[targets] + up_room[targets])), -one]]
    row_lo = [resid, -down_room[targets], np.full(s, -np.inf)]
    row_up = [resid, np.full(s, np.inf), -lpl[targets]]
    col_lo = np.concatenate([np.zeros(2 * k), (forced == UP).astype(float), np.zeros(s)])
    col_up = np.concatenate([up_room, down_room, (forced != DOWN).astype(float), np.zeros(s)])
    penalty = SHORTFALL_PENALTY * float(np.max(w, initial=1.0))
    obj = np.concatenate([w, w, np.zeros(s), np.full(s, penalty)])
    if cost == "relative":
        safe = np.flatnonzero(~sens[movable])
        scale = 1.0 / _floor_abs(v[movable])[safe]
        blocks = [row + [sp.csr_matrix((row[0].shape[0], 1))] for row in blocks]
        scaled = sp.csr_matrix(sp.diags(scale)) @ eye[safe]
        none = sp.csr_matrix((len(safe), s))
        blocks.append([scaled, scaled, none, none, sp.csr_matrix(-np.ones((len(safe), 1)))])
        row_lo.append(np.full(len(safe), -np.inf))
        row_up.append(np.zeros(len(safe)))
        col_lo, col_up = np.append(col_lo, 0.0), np.append(col_up, np.inf)
        obj = np.append(obj / (10.0 * max(1, len(safe))), 1.0)
        obj[2 * k + s: 2 * k + 2 * s] = penalty
    integer = np.zeros(len(obj), dtype=bool)
    integer[2 * k: 2 * k + s] = True
    model = Model(obj, col_lo, col_up, sp.bmat(blocks, format="csr"), np.concatenate(row_lo),
                  np.concatenate(row_up), integer)
    return CtaModel(model, movable, targets, forced)


def _floor_abs(values: np.ndarray) -> np.ndarray:
    """``|values|``, with zeros raised to the smallest non-zero magnitude (or 1)."""
    a = np.abs(values)
    positive = a[a > 0]
    floor = float(positive.min()) if positive.size else 1.0
    return np.maximum(a, floor)


def _weights(values: np.ndarray, cost: str) -> np.ndarray:
    """Per movable cell, the cost of a unit of deviation."""
    if cost == "l1":
        return np.ones(len(values))
    return 1.0 / _floor_abs(values)


def alternating(problem: Problem, cm: CtaModel) -> np.ndarray:
    """Seed 003 B.3's directions: the sensitive cells ordered largest first, directions
    alternating (up first). One refinement: a target that makes up at least half of a
    sensitive total (:data:`DOMINANT_SHARE`) takes that total's direction instead of the
    next one (the two share their largest contributor; opposite moves would have to be
    made up by the other parts). A direction the bounds forbid is replaced by the other."""
    cells = cm.movable[cm.targets]
    values = problem.value[cells]
    order = np.lexsort((cm.targets, -values))
    follow = _dominating_target(problem, cm)
    dirs = np.zeros(len(order), dtype=np.int8)
    nxt = UP
    for t in order.tolist():
        lead = follow[t]
        if lead >= 0 and dirs[lead] != 0:
            dirs[t] = dirs[lead]
        else:
            dirs[t] = nxt
            nxt = DOWN if nxt == UP else UP
    return np.where(cm.forced != 0, cm.forced, dirs).astype(np.int8)


def _dominating_target(problem: Problem, cm: CtaModel) -> np.ndarray:
    """Per target, the target (position in ``cm.targets``) that is a total of a relation in
    which it is a part holding at least :data:`DOMINANT_SHARE` of that total's value; -1
    when there is none. Among several, the largest total."""
    position = np.full(problem.n, -1, dtype=np.int64)
    position[cm.movable[cm.targets]] = np.arange(len(cm.targets))
    rel = sp.csr_matrix(problem.relations)
    coo = rel.tocoo()
    total_of_row = np.full(rel.shape[0], -1, dtype=np.int64)
    neg = coo.data < 0
    total_of_row[coo.row[neg]] = coo.col[neg]
    part = coo.data > 0
    rows, parts = coo.row[part], coo.col[part]
    totals = total_of_row[rows]
    v = np.abs(problem.value)
    ok = (totals >= 0) & (position[parts] >= 0)
    ok[ok] &= (position[totals[ok]] >= 0) & (v[parts[ok]] >= DOMINANT_SHARE * v[totals[ok]]) & (v[totals[ok]] > 0)
    out = np.full(len(cm.targets), -1, dtype=np.int64)
    pick = np.flatnonzero(ok)
    pick = pick[np.argsort(v[totals[pick]], kind="stable")]  # the largest total written last
    out[position[parts[pick]]] = position[totals[pick]]
    return out


def adjust_cta(problem: Problem, options: AdjustOptions, seconds: float) -> tuple[np.ndarray, np.ndarray, dict]:
    """The CTA of ``problem`` within about ``seconds``: adjusted values, the direction
    per cell (``UP``/``DOWN`` for sensitive cells) and the run's stats.

    The heuristic runs first (:func:`heuristic`); ``optimal`` (or ``auto`` up to
    :data:`~tablesafe.adjust.options.MILP_MAX_CELLS` cells) then improves it by the MILP
    in a guarded child process, which starts from the heuristic's table and is killed at
    the deadline; ``auto`` above that size improves it where it is worst (:func:`polish`). The result is always an adjusted table: the MILP's best, or the
    heuristic's; when neither is found, :func:`all_up` (the totals freed:
    ``stats["totals_released"]``).

    Raises:
        InfeasibleError: no adjusted table exists within the bounds, even with every
            total free to move.
    """
    deadline = time.perf_counter() + seconds
    mode = options.directions
    if mode == "auto":
        mode = "optimal" if problem.n <= MILP_MAX_CELLS else "alternating"
    stats: dict = {"directions": mode, "cost": options.cost, "fix_totals": str(options.fix_totals),
                   "time_limit": seconds}
    cm = build_model(problem, options.fix_totals, options.cost)
    stats.update(movable=cm.k, sensitive_moved=len(cm.targets))
    best = heuristic(problem, cm, stats, deadline)
    if mode == "alternating" and options.directions == "auto" and best is not None:
        best = polish(problem, cm, best, stats, deadline)  # a large table: the MILP is out of reach
    if mode == "optimal" or (best is None and problem.n <= MILP_MAX_CELLS):
        left = deadline - time.perf_counter()
        milp = solve_guarded(cm.model, left * (1.0 - LP_RESERVE) if best is None else left,
                             start=None if best is None else best.x)
        stats.update(milp_status=milp.status, milp_seconds=round(milp.seconds, 3), milp_gap=milp.gap)
        if milp.x is not None and (best is None or milp.objective < best.objective):
            best = milp
            stats["solved_by"] = "milp"
    if best is None:
        cm, best = all_up(problem, options, stats, seconds)
    if best is None or best.x is None:
        raise InfeasibleError("no adjusted table keeps every relation with the sensitive cells moved by "
                              "their levels within the a priori bounds, even with every total free")
    dev = cm.deviation(best.x, problem.n)
    direction = np.zeros(problem.n, dtype=np.int8)
    direction[cm.movable[cm.targets]] = np.where(best.x[cm.z()] > 0.5, UP, DOWN)
    stats["objective"] = best.objective
    return problem.value + dev, direction, stats


def all_up(problem: Problem, options: AdjustOptions, stats: dict, seconds: float) -> tuple[CtaModel, Solved]:
    """The fallback when neither the heuristic nor the MILP found a table: every
    sensitive cell up (down only where its bounds forbid up), the totals free, the
    cells' reach loose, one LP. With bounds ``[0, inf)`` this always has a solution
    (every non-empty leaf up by the largest level moves every sensitive cell up by at
    least its level), so the run returns an adjusted table, if a poor one."""
    stats["fallback"] = "every sensitive cell up, totals free"
    if options.fix_totals.word != "none":
        stats["totals_released"] = True
    cm = build_model(problem, FixTotals(), options.cost, loose=True)
    directions = np.where(cm.forced != 0, cm.forced, UP).astype(np.int8)
    got = solve(cm.fixed(directions), max(seconds * LP_RESERVE, 60.0))
    stats["solved_by"] = f"fallback: {got.status}"
    return cm, got


def heuristic(problem: Problem, cm: CtaModel, stats: dict, deadline: float) -> Solved | None:
    """Seed 003 B.3's heuristic with a repair: the alternating directions, one elastic LP
    (targets may miss their levels at a high cost); a target that misses its level takes
    the direction its deviation leans to, and the elastic LP runs again (up to
    :data:`REPAIR_ROUNDS` times); targets still short, with the targets sharing a
    relation with them, get their directions reopened in a small MILP; then one LP with
    the directions found. Returns its solution, or None when targets still miss their levels."""
    directions = alternating(problem, cm)
    got = solve(cm.fixed(directions, elastic=True), deadline - time.perf_counter())
    if got.x is None:
        stats["heuristic"] = got.status
        return None
    tol = 1e-7 * max(1.0, float(np.max(np.abs(problem.value), initial=0.0)))
    short = got.x[cm.e()] > tol
    stats["heuristic_short"] = int(short.sum())
    for round_ in range(REPAIR_ROUNDS):
        if not short.any() or deadline <= time.perf_counter():
            break
        # a target short of its level takes the direction its deviation leans to
        d = got.x[: cm.k][cm.targets] - got.x[cm.k: 2 * cm.k][cm.targets]
        upl, lpl = problem.upl[cm.movable[cm.targets]], problem.lpl[cm.movable[cm.targets]]
        lean = np.where(cm.forced != 0, cm.forced, np.where(upl - d <= d + lpl, UP, DOWN))
        turned = np.where(short, lean, directions).astype(np.int8)
        if np.array_equal(turned, directions):
            break
        directions = turned
        got = solve(cm.fixed(directions, elastic=True), deadline - time.perf_counter())
        if got.x is None:
            return None
        short = got.x[cm.e()] > tol
        stats[f"repair_{round_ + 1}"] = f"{int(short.sum())} targets short"
    left = deadline - time.perf_counter()
    if short.any() and left > 0:
        free = _widen(problem, cm, short)
        fixed = solve_guarded(cm.fixed(directions, free=free, elastic=True, feasibility=True), left / 2,
                              start=got.x)
        stats["repair_milp"] = f"{int(free.sum())} targets reopened: {fixed.status}"
        if fixed.x is not None:
            got = fixed
            directions = np.where(fixed.x[cm.z()] > 0.5, UP, DOWN).astype(np.int8)
            short = fixed.x[cm.e()] > tol
    if short.any():
        stats["heuristic"] = f"{int(short.sum())} targets short of their levels"
        return None
    final = solve(cm.fixed(directions), max(deadline - time.perf_counter(), 1.0))
    stats["heuristic"] = final.status
    if final.x is not None:
        stats.setdefault("solved_by", "alternating" + (" with repair" if stats["heuristic_short"] else ""))
    return final if final.x is not None else None


def polish(problem: Problem, cm: CtaModel, found: Solved, stats: dict, deadline: float) -> Solved:
    """The heuristic's table improved where it is worst: the directions of the targets
    near the :data:`POLISH_CELLS` non-sensitive cells with the largest relative changes
    (sharing a relation with them, widened once) are reopened in a MILP that starts from
    ``found``, within half the time left. Returns the better of the two."""
    left = deadline - time.perf_counter()
    if found.x is None or left <= 1.0 or not len(cm.targets):
        return found
    d = np.abs(cm.deviation(found.x, problem.n))
    rel = d / np.maximum(np.abs(problem.value), 1.0)
    rel[problem.sensitive] = 0.0
    worst = np.argsort(-rel, kind="stable")[:POLISH_CELLS]
    worst = worst[rel[worst] > 0]
    if not worst.size:
        return found
    a = abs(sp.csr_matrix(problem.relations))
    cells = np.zeros(problem.n)
    cells[worst] = 1.0
    near = (a.T @ ((a @ cells) > 0).astype(float)) > 0
    free = _widen(problem, cm, near[cm.movable[cm.targets]])
    directions = np.where(found.x[cm.z()] > 0.5, UP, DOWN).astype(np.int8)
    better = solve_guarded(cm.fixed(directions, free=free), left / 2, start=found.x)
    stats["polish"] = f"{int(free.sum())} targets reopened: {better.status}"
    if better.x is not None and better.objective < found.objective:
        stats["solved_by"] = str(stats.get("solved_by", "alternating")) + ", polished"
        return better
    return found


def _widen(problem: Problem, cm: CtaModel, targets: np.ndarray) -> np.ndarray:
    """``targets`` with every target that shares a relation with one of them."""
    a = abs(sp.csr_matrix(problem.relations))
    cells = np.zeros(problem.n)
    cells[cm.movable[cm.targets[targets]]] = 1.0
    rows = (a @ cells) > 0
    near = (a.T @ rows.astype(float)) > 0
    return targets | near[cm.movable[cm.targets]]
