"""The ``fast`` secondary suppression heuristic for very large tables, with certificates.

Sensitive cells are protected one after the other, largest protection need first (the
sequential linear-programming approach of seed 003 B.2.b). For each target a small
*protection network* LP is solved on a local neighbourhood of the target — the cells
reachable through a few relations — with every other cell held at its true value:

    minimise   sum_i  w_i (p_i + q_i)
    subject to A_R (p - q) = 0                    (the relations touching the neighbourhood)
               p_t = M, q_t = 0                   (the target moves by its level)
               0 <= p_i, q_i <= r_i               (r_i = min(v_i - lower_i, upper_i - v_i))

with ``w_i = cost_i / r_i`` (the linear relaxation of the fixed charge of withholding cell
``i`` in the model of Fischetti and Salazar restricted to one target, see seed 002
"Secondary tabular data protection methods") and a tiny weight for cells already withheld.
Every cell with a nonzero deviation ``d = p - q`` is withheld. Because the deviation box is
symmetric, ``v + (UPL/M) d`` and ``v - (LPL/M) d`` are both feasible tables that differ from
the truth only in withheld cells and move the target by its upper and lower protection
level: they are the target's *certificates*. A certificate stays valid when more cells
are withheld later, so the final pattern is proved safe by the certificates alone; they
are checked in one pass over the relations (:func:`tablesafe.audit.check_certificates`).

A certificate's deviation is also a direction that moves other cells: every later target
it moves far enough within the cells' ranges is protected by it, scaled, without an LP.
Targets may be split over worker processes; the union of their patterns is proved by the
union of their certificates.

When the local LP is infeasible the neighbourhood grows by one relation hop. Protected and
empty cells never move. With ``singleton=True`` single-contributor cells (other than the
target) are held fixed first, so that a certificate does not rely on a cell whose only
contributor knows its value (seed 002, "singletons"; seed 000 section 7 suggests zero a
priori intervals for such cells); they are admitted (with a large weight) only when no
certificate exists without them, and ``stats["certificates_with_singletons"]`` counts
those certificates. For each of them a further certificate keeps those singletons fixed
(``insider`` column), unless the singleton's cell overlaps the target (its respondent is
then one of the target's contributors, see :mod:`tablesafe.structure.overlap`).
"""

from __future__ import annotations

import os
import sys
import time
from collections import Counter
from dataclasses import dataclass, field, replace

import highspy
import numpy as np
import pandas as pd
import scipy.sparse as sp

from tablesafe.audit.lp import new_highs
from tablesafe.errors import InfeasibleError, SolverTimeLimit
from tablesafe.problem import EMPTY, PROTECTED, Pattern, Problem
from tablesafe.structure.overlap import CellOverlap, occupied_cells
from tablesafe.suppress.fast_cleanup import Certificates, release_complements

__all__ = ["FastOptions", "fast_pattern"]

_INF = highspy.kHighsInf


@dataclass
class FastOptions:
    """Tuning knobs of :func:`fast_pattern` (the defaults are the measured choice).

    Attributes:
        max_hops: largest neighbourhood radius (relation hops) tried before the target's
            whole connected block is used.
        max_cells: neighbourhood size above which growth jumps to the whole block.
        withheld_weight: weight factor for cells already withheld (relative to their
            normal weight); small so that free cells are preferred.
        tol: relative deviation below which a cell is considered not to move.
        share: let a certificate's direction protect the later targets it moves far
            enough (no LP for them).
        insider_hops: reach (relation hops, never the whole block) of the search for a
            certificate that keeps one single respondent's cell fixed; pairs it cannot
            cover are reported in ``stats["insider_unprotected"]``.
        max_box: most code combinations of a box in the first attempts.
        max_wide_box: most code combinations of a box tried (last) before relation hops.
        box_levels: box levels (see ``_code_sets``) in order of preference, largest
            first; the first within ``max_box`` code combinations is used. Default: up
            to the whole dimension, ``(6, 5, 4, 2, 1, 3)``, for tables of at most
            ``small_table`` cells, else ``(1, 3)``. Measured: on the 2-D 1k table
            the large boxes cut the withheld value from 3.75M to 1.49M (without
            singleton protection); on the 13k table they changed nothing at twice
            the time, and on the sparse 1M table they withheld 28 % more cells.
        cleanup_effort: local LPs the second pass (releasing complements the
            certificates can do without, most expensive first) may spend, as a multiple
            of the first pass's (at least ``cleanup_min_lps``); 0 turns it off.
            Default: 1 for tables of at most ``small_table`` cells, else 0 (measured:
            on the 1k table it cut the withheld value by a further 25 %, on the 13k
            table by 5 % at five times the first pass's time, on the 1M table by
            almost nothing).
        small_table: size (cells) up to which the defaults above favour less withheld
            value over speed.
        cleanup_swap: in that pass, also release a cell when new cells that cost less,
            together, can take its place in the certificates.
        parallel_from: number of targets from which ``workers`` defaults to the CPUs.
        max_workers: most worker processes by default.
    """

    max_hops: int = 6
    max_cells: int = 20_000
    withheld_weight: float = 1e-4
    tol: float = 1e-7
    singleton_penalty: float = 1e3
    inner_hops: int = 4
    box_levels: tuple[int, ...] | None = None
    inner: str = "box"
    strict_hops: int = 4
    strict_whole_max: int = 20_000
    log_every: int = 0
    max_box: int = 4_000
    max_wide_box: int = 40_000
    cleanup_effort: float | None = None
    small_table: int = 5_000
    cleanup_min_lps: int = 2_000
    cleanup_swap: bool = True
    share: bool = True
    insider_hops: int = 3
    parallel_from: int = 20_000
    max_workers: int = 2
    stats: dict = field(default_factory=dict)


class _LocalLP:
    """One reusable HiGHS instance for the many small neighbourhood LPs."""

    def __init__(self) -> None:
        h = new_highs()
        h.setOptionValue("solver", "simplex")
        h.setOptionValue("presolve", "off")  # measured: 2.5x faster on these small LPs
        self._presolve = False
        # LPs on more cells (whole blocks of tables without structure) go to the interior
        # point solver with presolve: measured on Castro's HIER16 (3,563 cells, 5,484
        # relations) 1.6-3 s per LP instead of 5-24 s with the simplex method
        self.presolve_from = 1_000
        self.h = h
        self.solves = 0

    def solve(
        self,
        indptr: np.ndarray,
        index: np.ndarray,
        value: np.ndarray,
        nrow: int,
        cost: np.ndarray,
        cap_up: np.ndarray,
        cap_down: np.ndarray,
        target_pos: int,
        amount: float,
    ) -> np.ndarray | None:
        """Minimise ``cost . (p + q)`` with ``M (p - q) = 0``, ``p_t = amount``; d or None.

        ``M`` is given column-wise (``indptr``, ``index``, ``value``, ``nrow`` rows);
        ``p <= cap_up`` and ``q <= cap_down`` bound the upward and downward deviations.
        """
        k = len(indptr) - 1
        # columns: p_0..p_{k-1}, q_0..q_{k-1}
        start = np.concatenate((indptr[:-1], indptr[:-1] + indptr[-1])).astype(np.int32)
        index = np.concatenate((index, index)).astype(np.int32)
        value = np.concatenate((value, -value)).astype(np.float64)
        col_cost = np.concatenate((cost, cost))
        lo = np.zeros(2 * k)
        hi = np.concatenate((cap_up, cap_down))
        lo[target_pos] = hi[target_pos] = amount
        hi[k + target_pos] = 0.0
        zeros = np.zeros(nrow)
        big = k > self.presolve_from
        if big != self._presolve:
            self.h.setOptionValue("presolve", "on" if big else "off")
            self.h.setOptionValue("solver", "ipm" if big else "simplex")
            self._presolve = big
        self.h.clearSolver()
        self.h.passModel(
            2 * k, nrow, len(value), int(highspy.MatrixFormat.kColwise), int(highspy.ObjSense.kMinimize),
            0.0, col_cost, lo, hi, zeros, zeros, start, index, value,
            np.zeros(2 * k, dtype=np.int32),
        )
        self.h.run()
        self.solves += 1
        if self.h.getModelStatus() != highspy.HighsModelStatus.kOptimal:
            return None
        x = np.asarray(self.h.getSolution().col_value)
        return x[:k] - x[k:]


def _gather(ptr: np.ndarray, sel: np.ndarray) -> np.ndarray:
    """Positions ``ptr[s]:ptr[s+1]`` for every ``s`` in ``sel``, concatenated in order."""
    lens = ptr[sel + 1] - ptr[sel]
    total = int(lens.sum())
    if total == 0:
        return np.zeros(0, dtype=np.int64)
    ends = np.cumsum(lens)
    return np.repeat(ptr[sel] - ends + lens, lens) + np.arange(total)


def _protection_amounts(problem: Problem) -> tuple[np.ndarray, np.ndarray]:
    """Upper and lower amounts each sensitive cell must be movable by (0 elsewhere).

    The lower level is capped at the distance to the a priori lower bound (DESIGN.md). A
    sliding level wider than ``upl + lpl`` raises the upper amount. A sensitive cell with
    no level at all must merely not be exactly recalculable: it gets a small positive
    amount (1% of its value, at least 1, within its bounds).
    """
    sens = problem.sensitive
    v = problem.value
    up_room = problem.upper - v
    down_room = v - problem.lower
    upl = np.where(sens, np.maximum(problem.upl, 0.0), 0.0)
    lpl = np.where(sens, np.minimum(np.maximum(problem.lpl, 0.0), np.maximum(down_room, 0.0)), 0.0)
    extra = np.maximum(problem.spl - upl - lpl, 0.0)
    upl = np.where(sens, upl + extra, 0.0)
    none = sens & (upl <= 0) & (lpl <= 0)
    small = np.maximum(0.01 * np.abs(v), 1.0)
    upl = np.where(none, np.minimum(small, np.where(up_room > 0, up_room, 0.0)), upl)
    lpl = np.where(none & (upl <= 0), np.minimum(small, np.maximum(down_room, 0.0)), lpl)
    return upl, lpl


def fast_pattern(
    problem: Problem,
    *,
    time_limit: float | None = None,
    progress: bool = False,
    seed: int = 0,
    singleton: bool = True,
    capacity: bool = False,
    insiders: bool | None = None,
    initial: np.ndarray | None = None,
    progress_label: str = "fast suppression",
    workers: int | None = None,
    give_up_after: float | None = None,
    options: FastOptions | None = None,
) -> Pattern:
    """Choose complementary suppressions for a large table and prove them by certificates.

    Args:
        problem: the cells, relations, bounds and protection levels.
        time_limit: soft limit in seconds: every sensitive cell is always protected; past
            the limit the run only stops spending time on optional work (there is none yet
            besides progress reporting), and ``stats["time_limit_hit"]`` says so.
        progress: report progress (a live line on a terminal, plain lines in a log).
        progress_label: what the progress report calls this run.
        seed: accepted for interface compatibility; the method is deterministic (ties
            are broken by cell position), so the seed does not change the result.
        singleton: avoid single-contributor cells as partners (see the module text).
        capacity: use ``problem.capacity`` (seed 000 section 7.1) to limit how far a cell
            may move when it protects another.
        insiders: for every certificate that moves a single-respondent cell ``s`` (other
            than the target), also find one that keeps ``s`` at its value: that
            respondent knows it (seed 002, "singletons"). Such certificates carry ``s`` in
            the ``insider`` column (one certificate keeping all of them fixed where
            one exists, else one per cell). Default: the value of ``singleton``. Pairs for which
            no such certificate exists are counted in ``stats["insider_unprotected"]``
            and listed in ``stats["insider_unprotected_pairs"]`` (first 20).
        initial: cells already withheld (for example another method's pattern): they
            cost almost nothing to use, so the certificates lean on them and the run
            only adds cells where that pattern falls short.
        workers: processes that protect disjoint groups of targets at the same time
            (groups are contiguous ranges of the first dimension's codes; the union of
            their patterns is proved by the union of their certificates, which stay valid
            when more cells are withheld). Default: 1 below ``options.parallel_from``
            targets, else the CPUs available (at most ``options.max_workers``).
            Results are deterministic for a given number of workers.
        give_up_after: seconds after which an unfinished first pass raises
            :class:`SolverTimeLimit` (for callers with a fallback, such as the start
            pattern of ``optimal``); the second pass then also stops at that time.
        options: tuning knobs.

    Returns:
        A :class:`Pattern` (method ``fast``) whose ``certificates`` frame proves every
        sensitive cell's protection (columns ``target``, ``direction``, ``cell``,
        ``value``, ``insider``; cells named by ``problem.names``; ``insider`` is empty
        for the outsider's certificate).

    Raises:
        InfeasibleError: a sensitive cell cannot be moved by its level by any table that
            agrees with the relations and bounds (for example when every partner is
            protected).
        SolverTimeLimit: ``give_up_after`` passed before every sensitive cell had a
            certificate.
    """
    del seed
    opts = options or FastOptions()
    small = problem.n <= opts.small_table
    effort = opts.cleanup_effort if opts.cleanup_effort is not None else (1.0 if small else 0.0)
    if opts.box_levels is None:
        opts = replace(opts, box_levels=(6, 5, 4, 2, 1, 3) if small else (1, 3))
    if insiders is None:
        insiders = singleton
    t0 = time.perf_counter()
    n = problem.n
    v = problem.value.astype(float)
    A = problem.relations.tocsr()
    At = A.T.tocsr()
    sens = problem.sensitive
    upl, lpl = _protection_amounts(problem)

    # how far each cell may move either way (symmetric box around the true value)
    down_room = v - problem.lower
    up_room = problem.upper - v
    cap = np.minimum(down_room, up_room)
    if capacity and problem.capacity is not None:
        cap = np.where(sens, cap, np.minimum(cap, np.maximum(problem.capacity, 0.0)))
    fixed = np.isin(problem.status, (PROTECTED, EMPTY)) | ~(cap > 0)
    scale = np.where(np.isfinite(cap), cap, np.maximum(np.abs(v), 1.0))
    cap = np.where(np.isfinite(cap), cap, _INF)
    room_up = np.where(np.isfinite(up_room), np.maximum(up_room, 0.0), _INF)
    room_down = np.where(np.isfinite(down_room), np.maximum(down_room, 0.0), _INF)
    if capacity and problem.capacity is not None:
        room_down = np.where(sens, room_down, np.minimum(room_down, np.maximum(problem.capacity, 0.0)))
    # fixed-charge weight per unit of deviation: cost / min(range, amount), see _Search._solve
    abs_cost = np.abs(problem.cost).astype(float)
    abs_cost = np.maximum(abs_cost, 1e-9 * max(1.0, float(abs_cost.max(initial=0.0))))
    single = (
        (np.asarray(problem.contributors) == 1)
        if singleton and problem.contributors is not None
        else np.zeros(n, dtype=bool)
    )

    withheld = sens.copy()
    if initial is not None:
        withheld |= np.asarray(initial, dtype=bool) & ~fixed
    targets = np.flatnonzero(sens & ((upl > 0) | (lpl > 0)))
    need = np.maximum(upl, lpl)[targets]
    targets = targets[np.lexsort((targets, -need))]  # largest protection need first

    lp = _LocalLP()
    search = _Search(problem, A, At, lp, opts)
    hop_hist: Counter[str] = Counter()
    cert_t: list[np.ndarray] = []
    cert_c: list[np.ndarray] = []
    cert_d: list[np.ndarray] = []
    cert_k: list[np.ndarray] = []
    cert_i: list[np.ndarray] = []
    singleton_used = 0
    unprotectable: list[int] = []
    # singletons: a large weight keeps them out of certificates wherever a local
    # alternative exists (they may still be the only way to protect a cell)
    weight = abs_cost * np.where(single, opts.singleton_penalty, 1.0)
    search.scale = np.where(scale > 0, scale, np.inf)
    free = ~fixed
    occupied = occupied_cells(problem)
    search.occupied = occupied
    search.free = free
    search.strict_free = free & ~single

    bar = None
    if progress:
        from tablesafe.progress import Progress

        bar = Progress(progress_label, total=len(targets))
    done = 0
    insider_pairs = 0
    insider_open: list[tuple[int, int]] = []

    def protect(t: int, movable: np.ndarray, strict: bool = True, local: bool | int = False):
        """``(certificates, direction)`` for ``t`` moving only ``movable`` cells.

        ``certificates`` lists ``(direction, cells, deviation)`` (``None`` if there is
        none); ``direction`` is ``(cells, d)`` with ``d[target] = 1`` when one symmetric
        direction serves both ways (``None`` otherwise).
        """
        amount = max(upl[t], lpl[t])
        found = []
        d, cells, how = search.certify(t, amount, movable, single, withheld, cap, weight, strict=strict,
                                       local=local)
        if d is not None:
            keep = np.abs(d) > opts.tol * amount
            cells, d = cells[keep], d[keep] / amount
            if upl[t] > 0:
                found.append((0, cells, d * upl[t]))
            if lpl[t] > 0:
                found.append((1, cells, -d * lpl[t]))
            hop_hist[how] += 1
            return found, (cells, d)
        # the symmetric box is too tight: each direction on its own, within the
        # a priori bounds (a downward move is an upward move with bounds swapped)
        for direction, amt, cu, cdn, sign in (
            (0, upl[t], room_up, room_down, 1.0),
            (1, lpl[t], room_down, room_up, -1.0),
        ):
            if amt <= 0:
                continue
            d, cells, how = search.certify(t, amt, movable, single, withheld, cu, weight, cdn, strict=strict,
                                           local=local)
            if d is None:
                return None, None
            keep = np.abs(d) > opts.tol * amt
            found.append((direction, cells[keep], sign * d[keep]))
            hop_hist["one-way " + how] += 1
        return found, None

    def record(t: int, found: list, insider: int) -> None:
        for direction, cells, dev in found:
            withheld[cells] = True
            cert_t.append(np.full(len(cells), t, dtype=np.int64))
            cert_k.append(np.full(len(cells), direction, dtype=np.int8))
            cert_c.append(cells)
            cert_d.append(dev)
            cert_i.append(np.full(len(cells), insider, dtype=np.int64))

    def leaning_on(t: int, moved: np.ndarray) -> np.ndarray:
        """Single-respondent cells a certificate of ``t`` moves whose respondent is not
        one of ``t``'s own contributors.

        A single respondent knows its cell's value, so a certificate that moves the cell
        proves nothing to it. The respondent of a cell that overlaps the target (a
        non-empty common part) is one of the target's contributors, whom the rule's
        protection level already allows for (seed 000 section 5.1: the second
        contributor knows its own value).
        """
        lean = moved[single[moved] & (moved != t)]
        if len(lean) and search.geo is not None:
            lean = lean[~search.geo.overlaps(lean, t, occupied)]
        return lean

    labels: list[str] = []
    label_cells: list[np.ndarray] = []  # the cells each insider certificate keeps fixed

    def label(cells: np.ndarray) -> int:
        labels.append("+".join(str(problem.names[c]) for c in cells))
        label_cells.append(np.asarray(cells, dtype=np.int64))
        return len(labels) - 1

    reused = 0

    def share(t: int, direction) -> None:
        """Other targets the direction of ``t``'s certificate already protects.

        ``v + lam * d`` stays within every moved cell's symmetric range for
        ``|lam| <= rho = min(cap / |d|)``; a target ``s`` the direction moves (``d_s != 0``)
        is then protected both ways when its amount is at most ``rho * |d_s|``, and the
        scaled direction is its certificate (no LP needed).
        """
        nonlocal reused
        cells, d = direction
        ad = np.abs(d)
        rho = float(np.min(cap[cells] / ad))
        cand = (cells != t) & open_target[cells]
        if not cand.any():
            return
        amt = np.maximum(upl[cells], lpl[cells])
        fits = cand & (amt <= rho * ad * (1.0 - 1e-9))
        for k in np.flatnonzero(fits).tolist():
            s_cell = int(cells[k])
            if insiders and len(leaning_on(s_cell, cells)):
                continue
            unit = d / d[k]  # the direction with s moving by +1
            found = []
            if upl[s_cell] > 0:
                found.append((0, cells, unit * upl[s_cell]))
            if lpl[s_cell] > 0:
                found.append((1, cells, -unit * lpl[s_cell]))
            record(s_cell, found, -1)
            open_target[s_cell] = False
            reused += 1

    open_target = np.zeros(n, dtype=bool)

    def run(group: np.ndarray) -> None:
        """Protect the targets of ``group`` in order (updates the state above)."""
        nonlocal done, singleton_used, insider_pairs
        open_target[group] = True
        for t in group:
            t = int(t)
            if not open_target[t]:
                continue  # protected by the direction of an earlier certificate
            if give_up_after is not None and time.perf_counter() - t0 > give_up_after:
                raise SolverTimeLimit(
                    f"fast: {done} of {len(group)} sensitive cells had certificates after "
                    f"{give_up_after:.0f} s; giving up as asked"
                )
            open_target[t] = False
            found, direction = protect(t, free)
            if not found:
                unprotectable.append(t)
                continue
            record(t, found, -1)
            moved = np.unique(np.concatenate([c for _, c, _ in found]))
            leaning = leaning_on(t, moved)
            if len(leaning):
                singleton_used += 1
            if insiders and len(leaning):
                # one more certificate that keeps all of them fixed covers every insider
                # (any singleton it moves is covered by the first one); where there is
                # none, one certificate per insider. (The singleton-free search already
                # failed for this target, so these allow the other singletons.)
                insider_pairs += len(leaning)
                held = free.copy()
                held[leaning] = False
                # (within the boxes only: the fallback below covers what it misses)
                alt, _ = protect(t, held, strict=False, local=True) if len(leaning) > 1 else (None, None)
                if alt:
                    record(t, alt, label(leaning))
                else:
                    for s_cell in leaning.tolist():
                        held = free.copy()
                        held[s_cell] = False
                        alt, _ = protect(t, held, strict=False, local=opts.insider_hops)
                        if alt:
                            record(t, alt, label(np.array([s_cell])))
                        else:
                            insider_open.append((t, s_cell))
            if direction is not None and opts.share:
                share(t, direction)
            if bar is not None:
                bar.update(done)
            done += 1
            if opts.log_every and done % opts.log_every == 0:
                print(
                    f"fast: {done} searched, {reused} shared of {len(targets)} targets, "
                    f"{time.perf_counter() - t0:.0f} s, {int(withheld.sum())} withheld",
                    file=sys.stderr, flush=True,
                )

    def snapshot() -> dict:
        """This process's results (a worker sends them back to the parent)."""
        return {
            "withheld": withheld, "cert": _concat(cert_t, cert_k, cert_c, cert_d, cert_i),
            "labels": labels, "label_cells": label_cells, "hop": dict(hop_hist), "done": done, "reused": reused,
            "singleton_used": singleton_used, "insider_pairs": insider_pairs,
            "unprotectable": unprotectable, "insider_open": insider_open, "lps": search.lp.solves,
        }

    def fresh() -> None:
        nonlocal bar
        search.lp = _LocalLP()  # a worker's own solver
        bar = None  # the parent's progress display stays in the parent

    if workers is None:
        workers = _default_workers(len(targets), opts)
    workers = max(1, min(int(workers), len(targets))) if len(targets) else 1
    try:
        if workers > 1:
            parts = _run_parallel(run, fresh, snapshot, _partition(targets, search.geo, workers))
            withheld = np.logical_or.reduce([q["withheld"] for q in parts])
            cert_t, cert_k, cert_c, cert_d, cert_i = [], [], [], [], []
            labels_all: list[str] = []
            label_cells = []
            for q in parts:
                ct, ck, cc, cd, ci = q["cert"]
                cert_t.append(ct)
                cert_k.append(ck)
                cert_c.append(cc)
                cert_d.append(cd)
                cert_i.append(np.where(ci >= 0, ci + len(labels_all), -1))
                labels_all.extend(q["labels"])
                label_cells.extend(q["label_cells"])
                hop_hist.update(q["hop"])
                unprotectable.extend(q["unprotectable"])
                insider_open.extend(q["insider_open"])
            labels = labels_all
            reused = sum(q["reused"] for q in parts)
            singleton_used = sum(q["singleton_used"] for q in parts)
            insider_pairs = sum(q["insider_pairs"] for q in parts)
            lps = sum(q["lps"] for q in parts)
        else:
            run(targets)
            lps = search.lp.solves
    finally:
        if bar is not None:
            bar.close()

    if unprotectable:
        names = ", ".join(str(problem.names[i]) for i in unprotectable[:5])
        raise InfeasibleError(
            f"{len(unprotectable)} sensitive cell(s) cannot be protected: no table that keeps "
            f"the published cells, the relations and the a priori bounds moves them by their "
            f"protection level (first: {names})"
        )
    second = {}
    if effort > 0:
        # second pass: publish complements the certificates can do without
        flat = Certificates(*_concat(cert_t, cert_k, cert_c, cert_d, cert_i))
        cand = withheld & ~sens
        res = release_complements(
            search, withheld, flat, label_cells, candidates=cand, cost=abs_cost, upl=upl, lpl=lpl,
            cap=cap, weight=weight, free=free, single=single if insiders else np.zeros(n, dtype=bool),
            occupied=occupied, max_lps=int(effort * max(lps, opts.cleanup_min_lps)), tol=opts.tol,
            swap=opts.cleanup_swap,
            deadline=None if give_up_after is None else t0 + give_up_after,
        )
        withheld = res.withheld
        cert_t, cert_k, cert_c, cert_d, cert_i = ([x] for x in (
            res.certs.target, res.certs.direction, res.certs.cell, res.certs.dev, res.certs.insider))
        lps += res.lp_solves
        second = {"released": res.released, "swapped": res.swapped, "tried": res.tried, "lp_solves": res.lp_solves,
                  "budget_hit": res.budget_hit}
    certs = _certificate_frame(problem, cert_t, cert_k, cert_c, cert_d, cert_i, labels)
    secs = time.perf_counter() - t0
    stats = {
        "seconds": secs,
        "targets": len(targets),
        "lp_solves": lps,
        "workers": workers,
        "shared_certificates": reused,
        "found_by": dict(sorted(hop_hist.items())),
        "certificates_with_singletons": singleton_used,
        "insider_certificates": insider_pairs - len(insider_open),
        "insider_unprotected": len(insider_open),
        "insider_unprotected_pairs": [
            (str(problem.names[a]), str(problem.names[b])) for a, b in insider_open[:20]
        ],
        "second_pass": second,
        "withheld": int(withheld.sum()),
        "secondary": int((withheld & ~sens).sum()),
        "time_limit_hit": bool(time_limit is not None and secs > time_limit),
    }
    return Pattern(withheld=withheld, method="fast", stats=stats, certificates=certs)


_CERT_DTYPES = (np.int64, np.int8, np.int64, np.float64, np.int64)  # target, direction, cell, dev, insider


def _concat(*lists: list[np.ndarray]) -> tuple[np.ndarray, ...]:
    """Concatenate each list of certificate arrays (empty lists give empty arrays)."""
    return tuple(np.concatenate(x).astype(dt, copy=False) if x else np.zeros(0, dtype=dt)
                 for x, dt in zip(lists, _CERT_DTYPES))


def _default_workers(n_targets: int, opts: FastOptions) -> int:
    """One process for small problems, else the CPUs this process may use (capped)."""
    if n_targets < opts.parallel_from:
        return 1
    try:
        cpus = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        cpus = os.cpu_count() or 1
    return max(1, min(cpus, opts.max_workers))


def _partition(targets: np.ndarray, geo: _Geometry | None, k: int, blocks: int = 8) -> list[np.ndarray]:
    """``k`` groups of about equal size; each keeps the targets' order (largest need first).

    With a table structure the targets are cut into ``blocks * k`` contiguous ranges of
    the first dimension's codes (in hierarchy order, so mostly whole subtrees, whose
    certificates seldom meet), dealt out to the groups in turn so that each group gets
    parts of every region of the table (measured on the 1M table: with one range per
    group, one group took 2.3 times as long per target as the other). The targets at
    that dimension's total, which lie across every range and are the most expensive,
    are dealt out one by one. Without structure: the same with ranges of cell positions.
    """
    if k == 1:
        return [targets]
    pos = np.arange(len(targets))
    if geo is not None:
        key = geo.cells.idx[targets, 0]
        root = key == 0  # hierarchy codes are in pre-order: the total comes first
    else:
        key = targets
        root = np.zeros(len(targets), dtype=bool)
    rest = pos[~root][np.argsort(key[~root], kind="stable")]
    nb = blocks * k
    block = np.arange(len(rest)) * nb // max(len(rest), 1)
    # a range never splits one code: targets with the same key stay in one block
    first = np.concatenate(([True], np.diff(key[rest]) != 0))
    block = np.maximum.accumulate(np.where(first, block, 0))
    group = np.empty(len(targets), dtype=np.int64)
    group[rest] = block % k
    group[pos[root]] = np.arange(int(root.sum())) % k
    return [targets[group == g] for g in range(k)]


_JOB: tuple | None = None


def _worker(i: int) -> dict:
    assert _JOB is not None  # set by _run_parallel before forking
    run, fresh, snapshot, groups = _JOB
    fresh()
    run(groups[i])
    return snapshot()


def _run_parallel(run, fresh, snapshot, groups: list[np.ndarray]) -> list[dict]:
    """Run ``run(group)`` for every group in forked processes; their snapshots, in order."""
    import multiprocessing as mp

    global _JOB
    _JOB = (run, fresh, snapshot, groups)
    try:
        with mp.get_context("fork").Pool(len(groups)) as pool:
            return pool.map(_worker, range(len(groups)))
    finally:
        _JOB = None


class _Search:
    """Neighbourhoods of a target and the local LPs on them.

    Tables that come with their structure (``problem.model``) use *boxes*: per dimension
    the target's code, its siblings, ancestors and descendants (level 1), then also the
    ancestors' siblings and the siblings' children (level 2); the box is the cross product.
    After that (and for problems without structure) neighbourhoods grow by relation
    hops, up to the target's whole block.
    """

    def __init__(self, problem: Problem, A: sp.csr_matrix, At: sp.csr_matrix, lp: _LocalLP, opts: FastOptions):
        self.lp, self.opts = lp, opts
        # the relations as plain CSR arrays, by row (A) and by cell (A transposed)
        self.a_ptr, self.a_ind = A.indptr.astype(np.int64), A.indices.astype(np.int64)
        self.t_ptr, self.t_ind = At.indptr.astype(np.int64), At.indices.astype(np.int64)
        self.t_dat = At.data.astype(np.float64)
        self._boxes: dict[tuple[int, int], np.ndarray] = {}
        self.n = problem.n
        self.geo = _Geometry.of(problem)
        self.scale = np.ones(problem.n)
        self.cap_down: np.ndarray | None = None
        self.occupied: np.ndarray | None = None  # set by fast_pattern
        self.free: np.ndarray | None = None  # the run's movable cells ...
        self.strict_free: np.ndarray | None = None  # ... without single respondents

    def certify(self, t, amount, free, single, withheld, cap, weight, cap_down=None, strict=True,
                local=False):
        """(deviation, cells, how) of the cheapest local certificate found, or (None, ...).

        First (``strict``) without moving any single-contributor cell other than the
        target (so that no singleton's insider can rule the certificate out), within
        boxes and a few hops; then, only if that fails, with singletons allowed
        (penalised) up to the whole block (only the boxes with ``local`` and a table
        structure: for optional attempts that have a fallback).
        """
        self.cap_down = cap_down
        if strict and single.any():
            strict = self._strict_movable(t, free, single)
            # with a table structure the strict search stays within the first box, no
            # wide boxes (measured on the 13k table: growing beyond it found no
            # singleton-free certificate it missed, at 4x the time; on the 1M table most
            # of the time went into strict searches that failed at every level); without
            # one it grows by relation hops
            boxes = self.geo is not None
            d, cells, how = self._certify(
                t, amount, strict, withheld, cap, weight,
                1 if boxes else self.opts.strict_hops,
                not boxes and self.n <= self.opts.strict_whole_max,
            )
            if d is not None:
                return d, cells, how
            d, cells, how = self._certify(t, amount, free, withheld, cap, weight, *self._reach(local))
            return d, cells, "with-singletons " + how
        return self._certify(t, amount, free, withheld, cap, weight, *self._reach(local))

    def _strict_movable(self, t: int, free: np.ndarray, single: np.ndarray) -> np.ndarray:
        """``free`` without the single-respondent cells whose respondent is not one of
        ``t``'s contributors (those overlapping ``t`` may move: see ``leaning_on``)."""
        base = self.strict_free if free is self.free else free & ~single
        assert base is not None  # strict_free is set together with free
        levels = self._levels(t) if self.occupied is not None else []
        if not levels:
            return base
        assert self.geo is not None and self.occupied is not None  # levels need both
        box = self._box(t, levels[0])  # the strict search's only box
        own = box[single[box] & free[box]]
        if len(own):
            own = own[self.geo.overlaps(own, t, self.occupied)]
        if not len(own):
            return base
        out = base.copy()
        out[own] = True
        return out

    def _reach(self, local: bool | int) -> tuple[int, bool]:
        """(max hops, whole block allowed) of a search: ``local=True`` boxes only (with a
        table structure), an integer: that many hops, else up to the whole block."""
        if local is True and self.geo is not None:
            return 1, False
        if local is not True and local:
            return int(local), False
        return self.opts.max_hops, True

    def _certify(self, t, amount, free, withheld, cap, weight, max_hops, allow_whole):
        inner = withheld & free
        inner[t] = True
        # 1. among cells already withheld: no new suppression needed
        levels = self._levels(t)
        if self.geo is not None and self.opts.inner == "box":
            cands = [(f"inner-box{lv}", self._box(t, lv)) for lv in levels]
        else:
            cands = [("inner-hops", None)]
        for how, cells in cands:
            if cells is None:
                d, cells, _ = self._grow(t, amount, inner, cap, weight, withheld, 1, self.opts.inner_hops, False)
            else:
                cells = self._order(t, cells[inner[cells]])
                d = self._solve(t, cells, amount, cap, weight, withheld)
            if d is not None:
                return d, cells, how
        # 2. a cheap set of new complements
        movable = free.copy()
        movable[t] = True
        if self.geo is not None:
            for level in levels:
                cells = self._order(t, self._box(t, level))
                cells = cells[movable[cells]]
                d = self._solve(t, cells, amount, cap, weight, withheld)
                if d is not None:
                    return d, cells, f"box{level}"
            if allow_whole or max_hops > 1:
                # (not in boxes-only searches) before relation hops, which reach most of a
                # sparse table within a few steps and then fall back to the whole block:
                # a box too large for the first attempt. Measured on the 1M table: targets
                # at a total in one dimension spent 2-7 s each in whole-block LPs of
                # 600,000 cells.
                for level in self._wide_levels(t):
                    cells = self._order(t, self._box(t, level))
                    cells = cells[movable[cells]]
                    d = self._solve(t, cells, amount, cap, weight, withheld)
                    if d is not None:
                        return d, cells, f"wide-box{level}"
        d, cells, hops = self._grow(t, amount, movable, cap, weight, withheld, 2, max_hops, allow_whole)
        return d, cells, ("block" if hops > max_hops else f"hops{hops}")

    def _box(self, t: int, level: int) -> np.ndarray:
        """The geometry's box around ``t`` (cached for the current target)."""
        key = (t, level)
        got = self._boxes.get(key)
        if got is None:
            if self._boxes and next(iter(self._boxes))[0] != t:
                self._boxes.clear()
            assert self.geo is not None  # boxes only with a table structure
            got = self._boxes[key] = self.geo.box(t, level)
        return got

    def _levels(self, t: int) -> list[int]:
        """The box level to try for ``t``: the first of ``box_levels`` (largest box
        first) within ``max_box`` code combinations (an LP infeasible on a box is
        infeasible on every smaller one, and a larger box gives a cheaper certificate)."""
        if self.geo is None:
            return []
        assert self.opts.box_levels is not None  # filled in by fast_pattern
        return [lv for lv in self.opts.box_levels if self.geo.box_size(t, lv) <= self.opts.max_box][:1]

    def _wide_levels(self, t: int) -> list[int]:
        """The smallest level above ``max_box`` but within ``max_wide_box`` code
        combinations (a last box before relation hops)."""
        assert self.geo is not None and self.opts.box_levels is not None  # see _levels
        wide = [
            lv for lv in self.opts.box_levels
            if self.opts.max_box < self.geo.box_size(t, lv) <= self.opts.max_wide_box
        ]
        return wide[-1:]

    @staticmethod
    def _order(t: int, cells: np.ndarray) -> np.ndarray:
        cells = cells[cells != t]
        return np.concatenate(([t], cells))

    def _grow(self, t, amount, movable, cap, weight, withheld, start, max_hops, allow_whole):
        prev = -1
        hops = start
        while True:
            whole = hops > max_hops
            if whole and not allow_whole:
                return None, np.zeros(0, dtype=np.int64), hops
            cells = self._neighbourhood(t, 10**9 if whole else hops, movable)
            if len(cells) == prev and not whole:
                return None, cells, hops  # the block is exhausted
            prev = len(cells)
            if len(cells) > self.opts.max_cells and not whole:
                hops = max_hops + 1
                continue
            d = self._solve(t, cells, amount, cap, weight, withheld)
            if d is not None or whole:
                return d, cells, hops
            hops += 1

    def _neighbourhood(self, t: int, hops: int, movable: np.ndarray) -> np.ndarray:
        """Movable cells within ``hops`` relation steps of ``t`` (through movable cells), t first."""
        seen = np.zeros(self.n, dtype=bool)
        seen[t] = True
        rows_seen = np.zeros(len(self.a_ptr) - 1, dtype=bool)
        frontier = np.array([t], dtype=np.int64)
        order = [frontier]
        for _ in range(hops):
            rows = self.t_ind[_gather(self.t_ptr, frontier)]
            rows = rows[~rows_seen[rows]]
            rows_seen[rows] = True
            rows = np.flatnonzero(rows_seen) if len(rows) > 4096 else np.unique(rows)
            if len(rows) == 0:
                break
            cand = self.a_ind[_gather(self.a_ptr, rows)]
            cand = cand[movable[cand] & ~seen[cand]]
            if len(cand) == 0:
                break
            cand = np.unique(cand)
            seen[cand] = True
            order.append(cand)
            frontier = cand
        return np.concatenate(order)

    def _solve(self, t, cells, amount, cap, weight, withheld):
        """Local LP on ``cells`` (target first); all other cells stay at their value."""
        k = len(cells)
        if k < 2:
            return None
        # the local matrix column by column: every relation touching a neighbourhood cell
        # takes part, with the cells outside the neighbourhood held at their value
        at = _gather(self.t_ptr, cells)
        lens = self.t_ptr[cells + 1] - self.t_ptr[cells]
        c = np.repeat(np.arange(k), lens)
        rows, r = np.unique(self.t_ind[at], return_inverse=True)
        val = self.t_dat[at]
        # peel: a cell that is the only neighbourhood member of a relation cannot move
        # (the relation's other cells are held at their value); repeat until stable
        alive = np.ones(k, dtype=bool)
        live = np.ones(len(c), dtype=bool)
        while True:
            cnt = np.bincount(r[live], minlength=len(rows))
            lone = live & (cnt[r] == 1)
            if not lone.any():
                break
            dead = c[lone]
            if alive[0] and (dead == 0).any():
                return None  # the target itself is pinned
            alive[dead] = False
            live = alive[c]
        if not live.all():
            r, c, val = r[live], c[live], val[live]
            idx = np.flatnonzero(alive)
            c = (np.cumsum(alive) - 1)[c]
            used, r = np.unique(r, return_inverse=True)
            nrow = len(used)
        else:
            idx = np.arange(k)
            nrow = len(rows)
        kk = len(idx)
        if kk < 2:
            return None
        # c is sorted (cells were gathered in order), so this is already column-wise
        indptr = np.zeros(kk + 1, dtype=np.int64)
        np.cumsum(np.bincount(c, minlength=kk), out=indptr[1:])
        sel = cells[idx]
        # linear relaxation of the fixed charge cost_i * [d_i != 0] with big-M equal to
        # the most the cell will move for this target: min(range_i, amount)
        w = weight[sel] / np.minimum(self.scale[sel], amount)
        w = w * np.where(withheld[sel], self.opts.withheld_weight, 1.0)
        cd = self.cap_down if self.cap_down is not None else cap
        dd = self.lp.solve(indptr, r, val, nrow, w, cap[sel], cd[sel], 0, amount)
        if dd is None:
            return None
        d = np.zeros(k)
        d[idx] = dd
        return d


@dataclass
class _Geometry:
    """Code positions of every cell and per-code neighbour sets, for box neighbourhoods."""

    cells: CellOverlap
    sets: list[list[list[np.ndarray]]]  # sets[level-1][dim][code] -> code positions

    @classmethod
    def of(cls, problem: Problem) -> _Geometry | None:
        cells = CellOverlap.of(problem)
        if cells is None or problem.model is None:
            return None
        sets: list[list[list[np.ndarray]]] = [[] for _ in range(6)]  # levels 1-6, see _code_sets
        for d in problem.model.dims:
            for level, codes in enumerate(_code_sets(d.hierarchy)):
                sets[level].append(codes)
        return cls(cells, sets)

    def overlaps(self, cells: np.ndarray, t: int, occupied: np.ndarray) -> np.ndarray:
        """Which ``cells`` share a non-empty part with cell ``t`` (see :class:`CellOverlap`)."""
        return self.cells.overlaps(cells, t, occupied)

    def box_size(self, t: int, level: int) -> int:
        """Number of code combinations in the box (an upper bound on its cells)."""
        idx = self.cells.idx
        return int(np.prod([len(self.sets[level - 1][j][idx[t, j]]) for j in range(idx.shape[1])]))

    def box(self, t: int, level: int) -> np.ndarray:
        """Cells of the box around cell ``t`` at the given level (1, 2, or 3 = compact)."""
        g = self.cells
        parts = [self.sets[level - 1][j][g.idx[t, j]] for j in range(len(g.shape))]
        grid = np.meshgrid(*parts, indexing="ij")
        flat = np.ravel_multi_index(tuple(x.ravel() for x in grid), g.shape)
        at = np.searchsorted(g.keys, flat)
        at = np.minimum(at, len(g.keys) - 1)
        ok = g.keys[at] == flat
        return g.key_cell[at[ok]]


def _code_sets(h) -> tuple[list[np.ndarray], ...]:
    """Per code, the code sets of the box levels 1 to 6.

    1: self, siblings, ancestors, descendants; 2: also the ancestors' siblings and the
    siblings' children; 3 (compact): self, siblings, ancestors, children; 4: level 1 and
    the siblings' descendants (the parent's whole subtree and the ancestors); 5: level 2
    and the siblings' descendants; 6: every code of the dimension.
    """
    n = len(h)
    parent = np.asarray(h.parent)
    kids = [list(h.children(i)) for i in range(n)]
    desc: list[list[int]] = [[] for _ in range(n)]
    for i in range(n - 1, -1, -1):  # pre-order: children after parents
        for c in kids[i]:
            desc[i].extend([c, *desc[c]])
    out: tuple[list[np.ndarray], ...] = ([], [], [], [], [], [])
    every = np.arange(n, dtype=np.int64)
    for i in range(n):
        anc = []
        p = parent[i]
        while p != -1:
            anc.append(int(p))
            p = parent[p]
        sib = kids[parent[i]] if parent[i] != -1 else []
        s1 = {i, *sib, *anc, *desc[i]}
        s2 = set(s1)
        for a in anc:
            if parent[a] != -1:
                s2.update(kids[parent[a]])
        for s in sib:
            s2.update(kids[s])
        sub = set()
        for s in sib:
            sub.update(desc[s])
        for k, codes in enumerate((s1, s2, {i, *sib, *anc, *kids[i]}, s1 | sub, s2 | sub)):
            out[k].append(np.array(sorted(codes), dtype=np.int64))
        out[5].append(every)
    return out


def _certificate_frame(
    problem: Problem,
    cert_t: list[np.ndarray],
    cert_k: list[np.ndarray],
    cert_c: list[np.ndarray],
    cert_d: list[np.ndarray],
    cert_i: list[np.ndarray],
    labels: list[str],
) -> pd.DataFrame:
    """Certificates as a frame: one row per (target, direction, insider, moved cell),
    value = v + d; ``insider`` names the single-respondent cells (joined by ``+``) the
    certificate keeps at their values for their respondents ("" for the outsider's
    certificate)."""
    if cert_t:
        t = np.concatenate(cert_t)
        k = np.concatenate(cert_k)
        c = np.concatenate(cert_c)
        d = np.concatenate(cert_d)
        i = np.concatenate(cert_i)
    else:
        t = c = i = np.zeros(0, dtype=np.int64)
        k = np.zeros(0, dtype=np.int8)
        d = np.zeros(0)
    order = np.lexsort((c, i, k, t))
    t, k, c, d, i = t[order], k[order], c[order], d[order], i[order]
    names = problem.names.astype(str)
    cats = pd.Index(names)
    if cats.is_unique:
        target = pd.Categorical.from_codes(t, categories=cats)
        cell = pd.Categorical.from_codes(c, categories=cats)
    else:
        target, cell = cats[t], cats[c]
    lab = np.array([*labels, ""], dtype=object)  # index -1: the outsider's certificate
    insider = lab[i] if len(i) else np.zeros(0, dtype=object)
    return pd.DataFrame(
        {
            "target": target,
            "direction": pd.Categorical.from_codes(k.astype(np.int64), categories=["up", "down"]),
            "cell": cell,
            "value": problem.value[c] + d,
            "insider": insider,
        }
    )
