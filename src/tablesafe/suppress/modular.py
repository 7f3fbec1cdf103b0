"""Modular suppression of hierarchical tables (HiTaS; seed 000 sections 1 and 6).

The table is split into non-hierarchical subtables: for every choice of one parent node
per dimension, the subtable holds the cells whose code in each dimension is that parent
or one of its children. Subtables are protected top-down (by the sum of the parents'
depths), each to optimality within a MIP gap, by cut generation
(:mod:`tablesafe.suppress.subtable_cuts`) or as one compact MIP
(:mod:`tablesafe.suppress.compact`). Cells withheld in one subtable are carried into
every other subtable they occur in as cells to protect, with the moves their
certificates asked of them as levels (or seed 000 section 6's: the maximum of the
levels of the withheld cells in the same relations, row/column and marginals included,
symmetric, repeated until nothing changes). A subtable whose published cells get
withheld later is protected again, until stable.

tau-ARGUS's Modular stops here and can leave cells recalculable across subtables; the
dispatcher always follows with the full-table audit, repair and cleanup.
"""

from __future__ import annotations

import dataclasses
import itertools
import time

import numpy as np

from tablesafe.audit.lp import lp_work
from tablesafe.parallel import one_blas_thread, worker_count
from tablesafe.problem import PRIMARY, SAFE, Problem
from tablesafe.suppress import flow_attacks
from tablesafe.suppress.attacker import UP, Bounds, relations_by_cell
from tablesafe.suppress.compact import CompactResult, attacks_of, compact_pattern, model_size
from tablesafe.suppress.optimal import optimal_pattern
from tablesafe.suppress.protection import candidates, run_attacks
from tablesafe.suppress.subtable_boxes import BoxTables, SubtableGrid
from tablesafe.suppress.subtable_cuts import (
    SubtablePattern,
    failing_insiders,
    protect_subtable,
    scaled_moves,
)
from tablesafe.suppress.subtable_tables import in_table_positions
from tablesafe.suppress.work_clock import GUARD_SLACK, WORK_PER_SECOND, WorkClock


def subtables(problem: Problem) -> list[tuple[int, np.ndarray]]:
    """Non-hierarchical subtables as (sum of parent depths, cell positions), top-down."""
    return [(depth, cells) for depth, cells, _ in subtable_grids(problem)]


def subtable_grids(problem: Problem) -> list[tuple[int, np.ndarray, SubtableGrid]]:
    """:func:`subtables` with each subtable's grid of codes (parent first in each
    dimension; :class:`~tablesafe.suppress.subtable_boxes.SubtableGrid`)."""
    model = problem.model
    assert model is not None  # the caller checks for a table structure
    dims = model.dims
    codes = model.codes
    shape = tuple(len(d.hierarchy) for d in dims)
    pos = np.empty((problem.n, len(dims)), dtype=np.int64)
    for j, d in enumerate(dims):
        h = d.hierarchy
        lookup = {c: i for i, c in enumerate(h.codes)}
        pos[:, j] = np.fromiter((lookup[c] for c in codes[d.name].astype(str)), dtype=np.int64, count=problem.n)
    # numpy's stub picks the scalar overload for a tuple of index arrays
    keys: np.ndarray = np.ravel_multi_index(tuple(pos.T), shape)  # type: ignore[assignment]
    order = np.argsort(keys)
    skeys = keys[order]
    per_dim = []
    for d in dims:
        h = d.hierarchy
        depths = h.depths
        per_dim.append([(int(depths[p]), np.array((p, *h.children(p)), dtype=np.int64)) for p in h.parents])
    out: list[tuple[int, np.ndarray, SubtableGrid]] = []
    for combo in itertools.product(*per_dim):
        depth = sum(c[0] for c in combo)
        axes = [c[1] for c in combo]
        k = np.ravel_multi_index(np.ix_(*axes), shape).ravel()  # the grid's cells, C order
        loc = np.searchsorted(skeys, k)
        loc = np.minimum(loc, len(skeys) - 1)
        found = skeys[loc] == k
        if not found.all():  # a subtable of linked tables not present in any table
            continue
        at = order[loc]
        cells = np.sort(at)
        local = np.searchsorted(cells, at).reshape(tuple(len(a) for a in axes))
        out.append((depth, cells, SubtableGrid(local)))
    out.sort(key=lambda t: (t[0], t[1][0]))
    return out


def _carried_levels(problem: Problem, withheld: np.ndarray) -> np.ndarray:
    """Levels of withheld complements (seed 000 section 6): the maximum level of withheld
    cells sharing a relation with them, iterated to a fixed point; symmetric."""
    sens = problem.sensitive
    level = np.where(sens, np.maximum(problem.upl, problem.lpl), 0.0)
    level = np.where(withheld, level, 0.0)
    a = problem.relations
    rows_w = a[:, withheld].tocsr() if withheld.any() else None
    if rows_w is None:
        return level
    wi = np.flatnonzero(withheld)
    sub = rows_w.copy()
    sub.data[:] = 1.0
    for _ in range(50):
        # max level per row among withheld cells, then max over rows per cell
        coo = sub.tocoo()
        row_max = np.zeros(a.shape[0])
        np.maximum.at(row_max, coo.row, level[wi[coo.col]])
        cell_max = np.zeros(len(wi))
        np.maximum.at(cell_max, coo.col, row_max[coo.row])
        new = level.copy()
        sec = ~sens[wi]
        new[wi[sec]] = np.maximum(level[wi[sec]], cell_max[sec])
        if np.array_equal(new, level):
            break
        level = new
    return level


def modular_pattern(
    problem: Problem,
    bounds: Bounds,
    *,
    time_limit: float | None = None,
    seed: int = 0,
    log=None,
    max_passes: int = 3,
    subtable_limit: float = 30.0,
    mip_gap: float = 1e-3,
    compact_max: int = 2_000_000,
    insiders: bool = True,
    certified_levels: bool = True,
    workers: int | None = None,
    subtable_model: str = "cuts",
    tables: list | None = None,
    boxes: bool = True,
    completed_by_caller: bool = False,
) -> tuple[np.ndarray, dict]:
    """HiTaS-style pattern (not yet audited across subtables); returns (mask, stats).

    Each subtable gets at most ``subtable_limit`` seconds (and its share of the time
    left) and is solved to a relative MIP gap of ``mip_gap``. With cut generation those
    are seconds of LP work (:mod:`tablesafe.suppress.work_clock`): the time left is the
    limit less the subtables' work so far (divided by ``SUBTABLE_LANES`` where they run
    side by side), so each subtable's share is the same in every run; the real clock
    guards at ``GUARD_SLACK`` times the limit (``stats["subtables_clock_guarded"]``
    counts solves it ended, ``subtables_skipped`` the subtables it left). Solved by cut generation
    (``subtable_model="cuts"``, :mod:`tablesafe.suppress.subtable_cuts`) or by one MIP
    holding every attack (``"compact"``, :mod:`tablesafe.suppress.compact`, models of
    at most ``compact_max`` nonzeros). Subtables that share no cell are solved side by
    side by ``workers`` processes (default: up to 2 CPUs); the pattern is the same
    whatever their number. ``boxes``: box certificates answer attacks before any LP
    (:mod:`~tablesafe.suppress.subtable_boxes`). ``tables``: when a list, the subtables'
    passing attacks are appended to it in the positions of the whole table
    (:func:`~tablesafe.suppress.subtable_tables.in_table_positions`), in solve order, for
    the full-table check. ``completed_by_caller``: see ``optimal_pattern`` (no structure).
    """
    if subtable_model not in SUBTABLE_MODELS:
        raise ValueError(f"subtable_model must be one of {', '.join(SUBTABLE_MODELS)}, not {subtable_model!r}")
    t0 = time.monotonic()
    limit = time_limit if time_limit is not None else 1e12
    deadline = t0 + GUARD_SLACK * limit
    work_done = 0  # LP work of the subtables' solves, in whichever process they ran
    clock_guarded = 0
    say = log or (lambda *_: None)
    sens = problem.sensitive
    if not problem.structured:
        say("no table structure: protecting the whole table at once")
        w, st = optimal_pattern(problem, bounds, time_limit=time_limit, seed=seed, log=log,
                                completed_by_caller=completed_by_caller)
        st["subtables"] = 0
        return w, st
    subs = subtable_grids(problem)
    say(f"{len(subs)} subtables")
    w = sens.copy()
    seen = np.zeros(problem.n, dtype=bool)  # cells of subtables already protected
    queue = list(range(len(subs)))
    passes = np.zeros(len(subs), dtype=np.int64)
    solved = 0
    failures = 0
    use_capacity = bool(np.any(bounds.dn < bounds.tdn))
    skipped = 0
    need_up = np.zeros(problem.n)
    need_dn = np.zeros(problem.n)
    geo = None
    if insiders and bounds.singleton.any():
        from tablesafe.structure.insiders import InsiderModel

        # the one insider model (the audit's), restricted to each subtable below
        geo = InsiderModel.of(problem)
    # with seed 000 section 6's levels (a row maximum over the whole pattern) a subtable
    # sees every earlier one: one at a time then
    batch_max = BATCH if certified_levels else 1
    batches = 0
    lanes = SUBTABLE_LANES if len(subs) >= PARALLEL_MIN_SUBTABLES and certified_levels else 1
    pool = _pool(workers if lanes > 1 else 1, problem)
    try:
        while queue:
            if time.monotonic() > deadline:
                skipped = len(queue)  # the dispatcher's repair protects what is left
                say(f"time limit: {skipped} subtables left to the repair")
                break
            # a batch: subtables from the front of the queue that share no cell; each is
            # built from the state before the batch, which is what it would see one after
            # the other (a subtable changes only its own cells), so the result does not
            # depend on the number of workers
            batch: list[int] = []
            used = np.zeros(problem.n, dtype=bool)
            while queue and len(batch) < batch_max:
                cells = subs[queue[0]][1]
                if used[cells].any():
                    break
                i = queue.pop(0)
                passes[i] += 1
                if not w[cells].any():
                    seen[cells] = True
                    continue
                used[cells] = True
                batch.append(i)
            if not batch:
                continue
            batches += 1
            # each subtable's share in seconds of LP work, from the work done so far
            # (the same in every run; the clock only guards, above and in each solve)
            remaining = max(limit - work_done / (WORK_PER_SECOND * lanes), 0.5)
            per = max(remaining / max(len(queue) + len(batch), 1), min(remaining, SUBTABLE_MIN_SHARE))
            levels = (need_up, need_dn) if certified_levels else None
            tasks = [_task(problem, bounds, w, seen, subs[i][1], levels, use_capacity, insiders, geo,
                           min(per, subtable_limit), mip_gap, seed, compact_max, subtable_model,
                           subs[i][2] if boxes else None, deadline)
                     for i in batch]
            outcomes = list(pool.map(_solve_task, tasks)) if pool is not None else [_solve_task(t) for t in tasks]
            for i, (out, work, guarded) in zip(batch, outcomes):
                cells = subs[i][1]
                work_done += work
                clock_guarded += int(guarded)
                if out is None:
                    failures += 1  # left to the full-table repair
                    seen[cells] = True
                    continue
                sw, n_up, n_dn, sens_sub, found = out
                solved += 1
                if tables is not None:
                    tables.extend(found)
                if certified_levels:
                    sec = sw & ~sens_sub
                    need_up[cells[sec]] = np.maximum(need_up[cells[sec]], n_up[sec])
                    need_dn[cells[sec]] = np.maximum(need_dn[cells[sec]], n_dn[sec])
                new = cells[sw & ~w[cells]]
                w[new] = True
                # published cells of earlier subtables that are now withheld: protect those again
                reopened = new[seen[new]]
                seen[cells] = True
                if len(reopened):
                    for j, (_, other, _) in enumerate(subs):
                        if j != i and passes[j] < max_passes and j not in queue and np.isin(reopened, other).any():
                            queue.append(j)
            spent = time.monotonic() - t0
            done = solved + failures
            eta = spent / max(done, 1) * len(queue)
            say(f"subtable {done}/{done + len(queue)} solved, about {eta:.0f} s left")
    finally:
        if pool is not None:
            pool.shutdown()
    stats = {"subtables": len(subs), "subtables_solved": solved, "subtable_failures": failures,
             "subtables_skipped": skipped, "subtable_model": subtable_model, "time_limit_hit": skipped > 0,
             "subtable_batches": batches, "seconds_modular": time.monotonic() - t0,
             "subtable_work": int(work_done), "subtables_clock_guarded": clock_guarded}
    return w, stats


def _subproblem(problem: Problem, withheld: np.ndarray, seen: np.ndarray, cells: np.ndarray,
                levels: tuple[np.ndarray, np.ndarray] | None = None):
    """The subtable as a problem of its own: withheld cells carried as cells to protect.

    ``levels``: the moves (up, down) each complement's certificates asked of it in the
    subtables that withheld it; without them, seed 000 section 6's heuristic levels.
    """
    a = problem.relations[:, cells].tocsr()
    full = np.diff(problem.relations.indptr)
    inside = np.diff(a.indptr)
    rows = np.flatnonzero((inside == full) & (inside > 0))
    rel = a[rows]
    sens = problem.sensitive[cells]
    w = withheld[cells]
    carried = w & ~sens
    if levels is None:
        lv_up = lv_dn = _carried_levels(problem, withheld)[cells]
    else:
        lv_up, lv_dn = levels[0][cells], levels[1][cells]
    status = problem.status[cells].copy()
    status[carried] = PRIMARY
    upl = np.where(carried, lv_up, problem.upl[cells])
    lpl = np.where(carried, lv_dn, problem.lpl[cells])
    spl = np.where(carried, 0.0, problem.spl[cells])
    cost = problem.cost[cells].astype(float).copy()
    # published in a subtable already protected: withhold only if nothing else will do
    boost = seen[cells] & ~w & (status == SAFE)
    cost[boost] = cost[boost] * 10.0 + float(np.max(np.abs(problem.cost)) if problem.n else 1.0)
    contributors = None
    if problem.contributors is not None:
        contributors = np.where(carried, -1, problem.contributors[cells])
    sub = Problem(
        names=problem.names[cells],
        value=problem.value[cells],
        cost=cost,
        status=status,
        lower=problem.lower[cells],
        upper=problem.upper[cells],
        upl=upl,
        lpl=lpl,
        spl=spl,
        relations=rel,
        rhs=np.zeros(len(rows)),
        contributors=contributors,
    )
    return sub, carried, boost


def _overlap_insiders(geo, cells: np.ndarray, bounds: Bounds, carried: np.ndarray) -> dict[int, np.ndarray]:
    """Per sensitive cell of a subtable (local positions; complements carried from other
    subtables aside), the subtable's single-respondent cells that do not overlap it: the
    audit's insider attackers, restricted to the subtable."""
    single = np.flatnonzero(bounds.singleton)
    out = {}
    for k in np.flatnonzero(((bounds.req_up > 0) | (bounds.req_dn > 0)) & ~carried):
        others = single[single != k]
        if not len(others):
            continue
        keep = others[~geo.overlaps(cells[others], int(cells[k]))]
        if len(keep):
            out[int(k)] = keep
    return out


def _solve_subtable(sub: Problem, bounds: Bounds, cand: np.ndarray, insiders: dict[int, np.ndarray],
                    seconds: float, mip_gap: float, seed: int, max_size: int, rounds: int = 1,
                    reopens: np.ndarray | None = None):
    """The subtable's compact model against outsiders, then against the insider attacks
    the pattern fails (:func:`_failing_insiders`), for at most ``rounds`` more models.

    Outsiders' attacks enter the model lazily: those with the largest levels first
    (:func:`_first_attacks`), the others checked by attacker LP on each pattern found and
    added when they fail (measured on subtables of a 13,000-cell two-way table: the same
    patterns in 30 % less time; most attacks of small cells are met by what protects
    the large ones). A pattern is kept only when every outsider's attack passes.

    At most twice as many insider attacks as the subtable has targets are added per
    round (measured: adding every insider whose cell a certificate moves grew 72-cell
    subtables of a 13,000-cell two-way table to 800 attacks and 3 s each), and one round
    is the default (on the same table four rounds gave the same withheld value after
    the full-table repair, 5.65 M against 5.63 M, and took 50 % longer). The last
    pattern found is kept; the full-table repair protects against the insiders left.
    A round whose pattern withholds more of ``reopens`` (cells published by subtables
    already protected) than the one before is not kept, and ends the rounds: reopening
    those subtables costs more than leaving its insiders to that repair.

    When the time runs out before any pattern passes every outsider's attack, the last
    pattern found is returned all the same (the full-table repair protects the attacks it
    fails) rather than none. Measured on the generated 1,872-cell three-way table with
    holdings (`auto`, 97 s limit): its subtables of 120 cells with 26-36 sensitive cells
    added attacks four times and ran out of their 3-17 s; 6-8 of 36 subtables were left
    to the repair, which itself ran out of time, and certificates completed the pattern:
    83 s and 8.59 M. Keeping the last pattern: no subtable left, the repair finished,
    75 s and 7.15 M.
    """
    deadline = time.monotonic() + seconds
    outsiders = attacks_of(bounds, sub.sensitive, None)
    atts = _first_attacks(bounds, outsiders)
    pending = sorted(set(outsiders) - set(atts))
    have = set(outsiders)
    best = None
    partial = None
    per_round = 2 * max(int(sub.sensitive.sum()), 1)
    done = 0  # insider rounds made
    while True:
        left = deadline - time.monotonic()
        if model_size(sub, bounds, atts) > max_size or left <= 0:
            break
        res = compact_pattern(sub, bounds, cand, atts, time_limit=left, mip_gap=mip_gap, seed=seed)
        pattern = res.withheld
        if pattern is None:
            break
        if pending:
            # (attacks answered by an earlier table carry that table: no LP of their own,
            # measured the same subtable patterns with a third fewer attacker LPs)
            checked = run_attacks(sub, bounds, pattern.astype(float), pending, want_dual=False,
                                  sparse=True, certify=False)
            passed = {key for key in pending if key in checked and checked[key].ok}
            if len(passed) < len(pending):
                partial = res
                atts = atts + [key for key in pending if key not in passed]
                pending = [key for key in pending if key in passed]
                continue
            up, dn = scaled_moves([checked[key] for key in pending], sub.n)
            if res.need_up is not None and res.need_down is not None:
                up, dn = np.maximum(up, res.need_up), np.maximum(dn, res.need_down)
            res = dataclasses.replace(res, need_up=up, need_down=dn)
        if best is not None and reopens is not None and _reopened(res, reopens) > _reopened(best, reopens):
            break
        best = res
        if not insiders or done == rounds:
            break  # (the attacks a further round would find are the full-table repair's)
        more = failing_insiders(sub, bounds, pattern, outsiders, insiders, have)
        if not more:
            break
        more = more[:per_round]
        atts = atts + more
        have.update(more)
        done += 1
    if best is None and partial is not None:
        return partial
    return best


LAZY_SHARE = 0.25
"""Share of a subtable's outsider attacks (largest levels first) that start in its model."""
LAZY_MIN = 8
"""Subtables with at most this many outsider attacks get them all at once."""


def _first_attacks(bounds: Bounds, outsiders: list) -> list:
    """The outsider attacks a subtable's first model holds: the ``LAZY_SHARE`` with the
    largest levels (at least ``LAZY_MIN``), in their original order."""
    if len(outsiders) <= LAZY_MIN:
        return list(outsiders)
    level = np.array([bounds.req_up[k] if d == UP else bounds.req_dn[k] for k, d, _ in outsiders])
    take = max(LAZY_MIN, int(LAZY_SHARE * len(outsiders)))
    keep = np.sort(np.argsort(-level, kind="stable")[:take])
    return [outsiders[i] for i in keep.tolist()]


def _reopened(res, reopens: np.ndarray) -> int:
    """How many cells of ``reopens`` a subtable's pattern withholds."""
    return int((res.withheld & reopens).sum())


SUBTABLE_MODELS = ("cuts", "compact")
"""How a subtable is solved. Measured with ``suppress(problem, "auto")`` on generated
tables with holdings (twenty-eighth session): the 1,872-cell three-way table 41 s and
7.41 M with cut generation against 64 s and 7.45 M with the compact model (its 33
subtables alone 10 s against 33 s on two workers); the 13,167-cell two-way table 31.6 s
and 5.38 M against 41.2 s and 5.35 M; the 61,215-cell two-way table 241 s and 19.18 M
against 289 s and 19.26 M."""

BATCH = 16
"""Subtables taken from the queue at a time (a fixed number, so that the pattern does not
depend on the number of workers)."""
SUBTABLE_MIN_SHARE = 2.0
"""Seconds of LP work a subtable may take however many are left (within the time left;
before the thirty-fourth session, 2 s of real time)."""
SUBTABLE_LANES = 2
"""The subtables' LP work is divided by this when it is set against the search's limit:
batches of subtables sharing no cell are solved by up to this many processes at once.
A fixed number, not the workers of the run, so that each subtable's share of work (and
so the pattern) is the same on one CPU and on two."""
PARALLEL_MIN_SUBTABLES = 24
"""Tables with fewer subtables are solved in this process (starting workers costs more)."""


FLOW_BOXES_FROM = 1000
"""Network subtables (of two-way tables) of more cells than this still try box
certificates before the flows (:mod:`~tablesafe.suppress.subtable_boxes`): on a large
subtable a box costs less than a flow through thousands of cells."""


def _pool(workers: int | None, problem: Problem):
    """A process pool for subtables, or None to solve them here. The subtables of a
    two-way table are networks: the flow kernel is loaded before the workers fork."""
    n = worker_count() if workers is None else int(workers)
    if n <= 1:
        return None
    if flow_attacks.may_flow(problem):
        flow_attacks.warm()
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    return ProcessPoolExecutor(max_workers=n, mp_context=multiprocessing.get_context("fork"),
                               initializer=one_blas_thread)


def _task(problem: Problem, bounds: Bounds, w: np.ndarray, seen: np.ndarray, cells: np.ndarray,
          levels, use_capacity: bool, insiders: bool, geo, seconds: float, mip_gap: float, seed: int,
          compact_max: int, subtable_model: str, grid: SubtableGrid | None = None,
          deadline: float = float("inf")) -> tuple:
    """Everything one subtable's solve needs (picklable: plain arrays and a Problem);
    ``deadline`` (``time.monotonic()``) is the whole search's guard, which also ends a
    solve of a batch and stops the batch's later solves from starting."""
    sub, carried, reopens = _subproblem(problem, w, seen, cells, levels)
    sb = Bounds.of(sub, capacity=use_capacity, singleton=bool(bounds.singleton.any()))
    if use_capacity and problem.capacity is not None:
        sb.dn = np.minimum(sb.tdn, np.where(carried, sb.tdn, problem.capacity[cells]))
    cand = candidates(sub, sb)
    ins: dict = {}
    if insiders and sb.singleton.any():
        ins = _overlap_insiders(geo, cells, sb, carried)
    outer = None
    if grid is not None:
        # cells in relations outside the subtable (moving one breaks those; the table's
        # relations by cell are built once per run)
        ptr = relations_by_cell(problem).indptr
        in_table = ptr[cells + 1] - ptr[cells]
        outer = in_table > np.bincount(sub.relations.indices, minlength=sub.n)
    return (sub, sb, cand, ins, seconds, mip_gap, seed, compact_max, reopens, subtable_model, cells,
            problem.sensitive[cells], grid, outer, deadline, flow_attacks.flows_pay(problem))


def _solve_task(task: tuple):
    """Solve one prepared subtable: ((pattern, moves up, moves down, sensitive, passing
    attacks in table positions) or None, its LP work, whether the clock's guard ended it)."""
    (sub, sb, cand, ins, seconds, mip_gap, seed, compact_max, reopens, subtable_model, cells, sensitive_here,
     grid, outer, deadline, flows) = task
    if time.monotonic() > deadline:
        return None, 0, True  # past the search's guard: left to the full-table repair
    with flow_attacks.allowed(flows):
        return _solved(sub, sb, cand, ins, seconds, mip_gap, seed, compact_max, reopens, subtable_model, cells,
                       sensitive_here, grid, outer, deadline)


def _solved(sub: Problem, sb: Bounds, cand: np.ndarray, ins: dict, seconds: float, mip_gap: float, seed: int,
            compact_max: int, reopens: np.ndarray, subtable_model: str, cells: np.ndarray,
            sensitive_here: np.ndarray, grid: SubtableGrid | None, outer: np.ndarray | None,
            deadline: float) -> tuple:
    """:func:`_solve_task` once the task is unpacked."""
    work0 = lp_work()
    clock = WorkClock.for_limit(seconds)
    clock.guard = min(clock.guard, deadline)
    res: SubtablePattern | CompactResult | None
    if subtable_model == "cuts":
        # a small network's attacks are flows, cheaper than the box certificates' search
        boxed = grid is not None and (sub.n > FLOW_BOXES_FROM or flow_attacks.network_signs(sub) is None)
        res = protect_subtable(sub, sb, cand, ins, seconds, mip_gap, seed, reopens=reopens, clock=clock,
                               boxes=BoxTables(sub, sb, grid, outer) if boxed and grid is not None else None)
    else:
        res = _solve_subtable(sub, sb, cand, ins, seconds, mip_gap, seed, compact_max, reopens=reopens)
    work = lp_work() - work0
    if res is None:
        return None, work, clock.guarded
    found = in_table_positions(res.tables, cells, sensitive_here) if isinstance(res, SubtablePattern) else []
    return (res.withheld, res.need_up, res.need_down, sub.sensitive, found), work, clock.guarded
