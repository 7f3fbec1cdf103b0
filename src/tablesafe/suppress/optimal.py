"""Optimal secondary suppression: the Fischetti-Salazar model solved by cut generation.

Master problem (seed 002 "Secondary tabular data protection methods"; Fischetti and
Salazar, JASA 2000): one binary ``x_i`` per candidate complement, minimise
``sum cost_i x_i`` subject to capacity inequalities. Sensitive cells are fixed withheld,
protected and empty cells fixed published (seed 003 B.1). The inequalities come from
the attacker's LP duals (:mod:`tablesafe.suppress.attacker`):

1. up front, one inequality per sensitive cell, relation and direction (another cell of
   the relation must be withheld and able to move far enough);
2. a few rounds on the LP relaxation (attacker LPs with bounds scaled by fractional x);
3. MIP rounds: solve the master with HiGHS, check the integer pattern with the attacker's
   LPs, add the violated inequalities, repeat. An unsafe master solution is completed into
   a safe pattern by the master itself (its cells kept, the cheapest additions the
   inequalities ask for, checked and cut again until safe), a candidate incumbent;
4. between rounds, a neighbourhood search on the incumbent: some of its complements near
   a seed are freed, the others kept, and the restricted master (small, solved exactly)
   is completed in the same way. Every inequality found on the way is valid for the
   whole problem and strengthens the master's bound.

A time limit always leaves the best safe pattern found, with the master's bound as the
gap. Checks of a pattern close to a checked one re-solve only the attacks whose
certificates lean on a cell that is published again.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import highspy
import numpy as np

from tablesafe.problem import Problem
from tablesafe.suppress.attacker import Attack, Bounds, row_cuts
from tablesafe.suppress.cleanup import cleanup
from tablesafe.suppress.kept_tables import KeptTables
from tablesafe.suppress.master_problem import _Master
from tablesafe.suppress.protection import (
    Key,
    OutOfTime,
    candidates,
    check,
    cuts_for,
    failing,
    lazy_insiders,
    outsider_keys,
    repair,
    run_attacks,
)
from tablesafe.suppress.subtable_tables import whole_table_certificates
from tablesafe.suppress.work_clock import GUARD_SLACK, WorkClock

SubtableStart = Callable[[Problem, Bounds, "float | None", list], tuple[np.ndarray, dict]]
"""Finds the HiTaS subtables' pattern of a table with structure within a limit of LP
work, appending their passing tables to the list given: (pattern, stats with
``subtables_skipped``)."""


def optimal_pattern(
    problem: Problem,
    bounds: Bounds,
    *,
    time_limit: float | None = None,
    start: np.ndarray | None = None,
    seed: int = 0,
    lp_rounds: int = 20,
    mip_gap: float = 1e-5,
    log=None,
    completed_by_caller: bool = False,
    subtables: SubtableStart | None = None,
    proofs: list | None = None,
) -> tuple[np.ndarray, dict]:
    """Minimum-cost safe pattern by cut generation; returns (withheld mask, stats).

    ``start``: a safe pattern to warm-start from (otherwise one is built by repair and
    cleanup from the primaries alone). Stats: ``cost``, ``lower_bound``, ``gap``,
    ``optimal`` (proved within the MIP tolerance), ``iterations``, ``cuts``.

    ``completed_by_caller``: the caller completes and proves whatever this returns
    without this search's whole-table check (local certificates, or the audit-guided
    repair); a heuristic start that gives up then leaves it the primaries (with
    :data:`KEEP_PARTIAL_START`, and the cells of the certificates the start found) at once
    (``stats["start_check_skipped"]``, see :func:`_incumbent`).

    ``subtables``: how to find the HiTaS subtables' pattern (the dispatcher passes
    ``modular``'s), the start on a table with structure (see :func:`_heuristic_start`).

    ``proofs``: a list that gets the tables proving the returned pattern (as
    :data:`~tablesafe.suppress.subtable_tables.Found`), when this search proved it.
    """
    t_real = time.monotonic()
    clock = WorkClock.for_limit(time_limit)
    t0 = clock.now()
    deadline = t0 + (time_limit if time_limit is not None else 1e12)
    sens = problem.sensitive
    cand = candidates(problem, bounds)
    fixed_one = sens
    say = log or (lambda *_: None)

    real_deadline = t_real + (time_limit if time_limit is not None else 1e12)
    w, atts, skipped = _incumbent(problem, bounds, start, clock, t0, deadline, real_deadline, say,
                                  skip_unstarted=completed_by_caller, subtables=subtables)
    if atts is None:
        return w | sens, _unproved(problem, w, time.monotonic() - t_real, skipped, clock)
    best = w
    best_atts = atts
    best_cost = float(problem.cost[best & ~sens].sum())
    say(f"start pattern cost {best_cost:.6g}")
    stats = {"iterations": 0, "lp_rounds": 0, "cuts": 0, "lower_bound": 0.0}
    if not cand.any() or best_cost == 0:
        stats.update(cost=best_cost, gap=0.0, optimal=True, lower_bound=best_cost)
        _hand_over(best_atts, proofs)
        return best, stats

    master = _Master(problem, cand, seed)
    master.h.setOptionValue("mip_rel_gap", float(mip_gap))
    master.add(row_cuts(problem, bounds, fixed_one))

    lb = _lp_rounds(problem, bounds, master, lp_rounds, deadline, stats, clock=clock)
    say(f"LP bound {lb:.6g} after {stats['lp_rounds']} rounds, {master.ncuts} inequalities")

    # MIP rounds, each followed by a search for cheaper safe patterns near the incumbent
    integral_costs = bool(np.all(np.abs(problem.cost[cand] - np.round(problem.cost[cand])) < 1e-9))

    def lift(bound: float) -> float:
        return float(np.ceil(bound - 1e-6)) if integral_costs else bound

    pool: list = []

    def offer(x: np.ndarray, atts: dict) -> bool:
        """Keep a safe pattern if it is cheaper than the incumbent."""
        nonlocal best, best_cost, best_atts
        c = float(problem.cost[x & ~sens].sum())
        if c < best_cost - 1e-9 * max(1.0, abs(best_cost)):
            best, best_cost, best_atts = x, c, atts
            return True
        return False

    def on_solution(xv: np.ndarray) -> None:
        x = sens.copy()
        x[master.var] = xv > 0.5
        atts = _recheck(problem, bounds, x, best, best_atts)
        bad = failing(bounds, atts)
        if bad:
            pool.extend(cuts_for(problem, bounds, atts, bad, fixed_one))
        else:
            offer(x, atts)

    master.integral(True)
    search = _Neighbourhoods(problem, bounds, master, log=log, clock=clock)
    optimal = False
    share = 1.0
    while not clock.passed(deadline):
        stats["iterations"] += 1
        master.start(best)
        pool.clear()
        left = deadline - clock.now()
        # bounded rounds: an unsafe master solution still yields cuts and, completed, a
        # candidate incumbent; the neighbourhood search between rounds improves the incumbent
        xv, bound = master.solve(left if left < 20 else max(10.0, 0.3 * left), on_solution, clock=clock)
        lb = max(lb, lift(bound)) if np.isfinite(bound) else lb
        pooled = master.add(pool)
        if xv is None:
            break
        x = sens.copy()
        x[master.var] = xv > 0.5
        atts = _recheck(problem, bounds, x, best, best_atts)
        bad = failing(bounds, atts)
        cost = float(problem.cost[x & ~sens].sum())
        mip_done = master.status == highspy.HighsModelStatus.kOptimal
        if not bad:
            offer(x, atts)
            say(f"round {stats['iterations']}: safe, cost {cost:.6g}")
            if mip_done:
                optimal = True
                break
        else:
            added = master.add(cuts_for(problem, bounds, atts, bad, fixed_one))
            say(f"round {stats['iterations']}: {len(bad)} attacks succeed, +{added} inequalities, bound {lb:.6g}")
            # a safe pattern from this master solution: keep its cells, add the cheapest
            # cells the master (with the new inequalities) asks for, until safe
            done = _complete(problem, bounds, master, x, x | best, x, atts, deadline, clock)
            if done is not None:
                offer(*done)
            if added == 0 and pooled == 0:
                break  # no inequality cuts this solution off (numerically): no progress
        if best_cost <= lb * (1 + max(mip_gap, 1e-6)):
            optimal = True
            break
        now = clock.now()
        left = deadline - now
        if left > 1.0:
            # as long as a master round would get, and never more than the time spent so
            # far (without a time limit the search and the rounds alternate, doubling)
            # (halved after a turn without improvement, so that the master gets on with its bound)
            budget = min(left if left < 20 else max(10.0, 0.3 * left), max(10.0, now - t0)) * share
            say(f"neighbourhood search from cost {best_cost:.6g}")
            before = best_cost
            best, best_atts, best_cost = search.improve(best, best_atts, now + budget)
            share = 1.0 if best_cost < before else max(share / 2, 0.125)
            say(f"neighbourhood search: cost {best_cost:.6g}, {search.tried} tried, size {search.size}")
    lb = min(lb, best_cost)
    gap = 0.0 if best_cost <= 0 else max(0.0, (best_cost - lb) / best_cost)
    stats.update(cost=best_cost, lower_bound=lb, gap=gap, optimal=optimal or gap <= 1e-6, cuts=master.ncuts,
                 seconds=time.monotonic() - t_real, neighbourhoods=search.tried, improvements=search.improved,
                 work_seconds=clock.now() - t0, clock_guarded=clock.guarded)
    _hand_over(best_atts, proofs)
    return best, stats


def _hand_over(atts: dict[Key, Attack], proofs: list | None) -> None:
    """The tables of the passing attacks ``atts`` appended to ``proofs`` (if a list)."""
    if proofs is not None:
        proofs.extend((key, a.cells, a.dev) for key, a in atts.items() if a.ok and len(a.cells))


def _lp_rounds(problem: Problem, bounds: Bounds, master: _Master, rounds: int, deadline: float,
               stats: dict, keys: list[Key] | None = None, clock: WorkClock | None = None,
               boxes=None, kept: KeptTables | None = None) -> float:
    """Rounds of the master's LP relaxation, each followed by the inequalities of the
    attacks its fractional pattern fails; returns the best lower bound (and counts the
    rounds in ``stats["lp_rounds"]``). Stops when the bound stalls or no cut is new.

    ``keys``: the attacks to run (default: every outsider attack on the sensitive
    cells, and the attack of each single respondent withheld under the rounded pattern
    whose cell the outsider's table moves (:func:`lazy_insiders`); the others fail or
    pass with the outsider's table. Spelt out, the insiders' keys of the first round
    numbered 4.3 million on the 4,961-cell ``wide2d`` table, 4.5 s past a 10 s guard). ``deadline`` is on ``clock``
    (:class:`~tablesafe.suppress.work_clock.WorkClock`), or ``time.monotonic()`` without;
    with a clock, a round's attacks also stop at its guard (the rounds end there).
    ``boxes``: certificates tried before any LP (:func:`run_attacks`); ``kept``: a network's
    tables kept from round to round (:mod:`~tablesafe.suppress.kept_tables`)."""
    sens = problem.sensitive
    targets = np.flatnonzero(sens)
    if master.nv == 0:
        return 0.0
    master.integral(False)
    lb = 0.0
    history: list[float] = []
    for rnd in range(rounds):
        if (time.monotonic() > deadline) if clock is None else clock.passed(deadline):
            break
        xv, val = master.solve(deadline - (time.monotonic() if clock is None else clock.now()), clock=clock)
        if xv is None:
            break
        history.append(val)
        lb = max(lb, val)
        if len(history) > 4 and history[-1] <= history[-4] * (1 + 1e-3) + 1e-9:
            break
        x = sens.astype(float)
        x[master.var] = np.clip(xv, 0.0, 1.0)
        # every outsider attack, and the insiders' where the outsider's table moves their cell
        run, ins = (keys, None) if keys is not None else (
            outsider_keys(bounds, targets), lazy_insiders(problem, bounds, x > 0.5, targets))
        if (time.monotonic() > deadline) if clock is None else clock.passed(deadline):
            break
        known = kept.known(x) if kept is not None else None
        atts = (run_attacks(problem, bounds, x, run, boxes=boxes, insiders=ins, known=known) if clock is None
                else clock.until_guard(run_attacks, problem, bounds, x, run, boxes=boxes, insiders=ins, known=known))
        if atts is None:
            break  # past the clock's guard
        if kept is not None:
            kept.update(atts, known)
        cuts = [c for c in cuts_for(problem, bounds, atts, failing(bounds, atts), sens)
                if float(np.dot(c.coef, x[c.idx])) < c.rhs * (1 - 1e-6)]
        stats["lp_rounds"] = rnd + 1
        if master.add(cuts) == 0:
            break
    return lb


def _unproved(problem: Problem, w: np.ndarray, seconds: float, skipped: str | None, clock: WorkClock) -> dict:
    """Stats of a start returned unproved, for the dispatcher to repair and prove (LP
    check, or certificates on large tables): checking it took longer than the limit
    (measured: a 5,000-cell 3-D table ran 302 s with a 60 s limit), or it was skipped
    (``skipped``: why, for the report; ``clock.guarded``: whether the real clock ended the
    start; ``clock.hurried_estimate``, when the fast start gave up: what certificates for
    every target are estimated to take, ``stats["start_hurried_estimate"]``)."""
    out: dict = {"iterations": 0, "lp_rounds": 0, "cuts": 0, "lower_bound": 0.0,
                 "cost": float(problem.cost[w & ~problem.sensitive].sum()), "gap": 1.0, "optimal": False,
                 "time_limit_hit": True, "seconds": seconds, "clock_guarded": True}
    if skipped is not None:
        out.update(clock_guarded=clock.guarded, start_check_skipped=skipped)
        if clock.hurried_estimate is not None:
            out["start_hurried_estimate"] = clock.hurried_estimate
    return out


SUBTABLE_START_SHARE = 0.5
"""Share of the search's limit that the HiTaS subtables of a start get (in LP work, as
``modular`` counts it) on a table with structure whose pattern the caller does not
complete; the fast start gets ``FAST_START_SHARE``."""
FAST_START_SHARE = 0.25
"""Share of the search's limit that the ``fast`` start gets (in LP work): on a problem
without table structure, or where the caller completes the pattern."""

KEEP_PARTIAL_START = True
"""Whether a ``fast`` start that gave up hands on its pattern as far as it got (the
primaries and the cells of the certificates it found, ``SolverTimeLimit.partial``), so
that the certificates completing it lean on that work instead of doing it again.
Measured with ``optimal`` on Castro's ten instances whose start gives up (fifty-fourth
session, forked workers on one BLAS thread; before, the primaries alone): at 10 s TABLE3
14.02 -> 10.24 M, NINE12 35.19 -> 33.02 M, HIER16 38.05 -> 37.68 M, NINENEW 27.73 ->
29.05 M (+5 %), the rest within 1 %; at 30 s NINE12 28.80 -> 23.45 M (17.5 s instead of
21.7), HIER16 38.36 -> 35.32 M, HIER163A 36.92 -> 36.01 M, HIER163D 37.57 -> 37.16 M,
NINENEW 28.43 -> 29.20 M (+3 %), NINE5D 25.54 -> 27.21 M (+7 %), the rest within 1 %.
Every run within its limit (at most 9.0 s at 10 s, 24.5 s at 30 s). It was off while
NINE5D at 10 s ran up to 24 s with it (fifty-third session): the forked workers' BLAS
threads, spinning on the same two cores, had made the hurried search's rankings up to 15
times slower (:func:`tablesafe.parallel.one_blas_thread`)."""

def _skipped_fast() -> str:
    """``stats["start_check_skipped"]`` when the ``fast`` start gave up: what it handed on
    (:data:`KEEP_PARTIAL_START`) went to the completing repair unchecked."""
    handed = "the primaries and the cells of its certificates" if KEEP_PARTIAL_START else "the primaries"
    return (f"the fast start gave up within its share of the search, so {handed} went to the repair "
            "that completes the pattern, unchecked by whole-table attacker LPs")


def _incumbent(problem: Problem, bounds: Bounds, start: np.ndarray | None, clock: WorkClock, t0: float,
               deadline: float, real_deadline: float, say, skip_unstarted: bool = False,
               subtables: SubtableStart | None = None) -> tuple[np.ndarray, dict | None, str | None]:
    """The first safe pattern and its attacks, from ``start`` or from a heuristic
    (:func:`_heuristic_start`: the HiTaS subtables on a table with structure, the fast
    heuristic's certificates otherwise), checked, repaired against this attacker model and
    cleaned. The attacks are ``None`` when checking or repairing the pattern passed
    ``real_deadline`` (a ``time.monotonic()`` value: the check has no work bound, so it
    gets no slack beyond the limit; ``t0`` and ``deadline`` are on ``clock``), and at
    once when ``skip_unstarted`` (:func:`optimal_pattern`'s ``completed_by_caller``) and
    the heuristic gave up: the third value then says why, for the stats.

    That check would be the first step of a repair from the primaries alone, by
    whole-table LPs, and the time is worth more to the completion. Measured on Castro's
    instances with a 30 s limit (forty-fourth session), where the heuristic gave up on
    the four of more than 5,000 cells: checking the primaries ran out of the search's
    15 s on each, and the certificates completing them with what was left withheld 256
    or 477,078 on DALE by the run (they need about 10 s there; 664,040 at a 20 s limit),
    ``modular``'s audit-guided repair ran out of time and its certificates gave 705,936.
    Skipped: ``optimal`` 256 in 11-13 s at 20 and 30 s, ``modular`` 256 in 18 s.

    The subtables' start (a table with structure whose pattern is not completed by the
    caller, so of at most ``LP_REPAIR_MAX_CELLS`` cells) is repaired with their tables
    as known certificates (:func:`~tablesafe.suppress.subtable_tables.whole_table_certificates`),
    as ``modular``'s is: so ``optimal`` starts where ``modular`` ends. Measured on the
    unseen 1,040-cell three-way table of ``benchmarks/unseen_tables.py`` (seed 202, 60 s):
    6.28 M from the fast start, 5.56 M now (``modular`` 5.54 M). Where the caller
    completes the pattern the fast start stays: handing the subtables' pattern to the
    completion, or repairing it by attacker LPs, withheld 12.1 M instead of 8.8 M on the
    5,056-cell two-way table (seed 203) and 118 M instead of 22 M on the 13,125-cell one
    (seed 205) at 60 s, where the repair does not fit the limit."""
    sens = problem.sensitive
    if start is None:
        structured = subtables is not None and problem.structured and not skip_unstarted
        tables: list | None = [] if structured else None
        share = SUBTABLE_START_SHARE if structured else FAST_START_SHARE
        w, gave_up = _heuristic_start(problem, bounds, share * (deadline - t0), clock, tables=tables,
                                      subtables=subtables)
        if gave_up and skip_unstarted:
            skipped = _skipped_fast()
            say(skipped)
            return w, None, skipped
        try:
            if tables:  # the subtables' start (emptied when it gave up)
                known = whole_table_certificates(problem, bounds, w, tables)
                w, atts, _ = repair(problem, bounds, w, deadline=real_deadline, known=known)
            else:
                atts = check(problem, bounds, w, deadline=real_deadline)
                if failing(bounds, atts):
                    w, atts, _ = repair(problem, bounds, w, deadline=real_deadline)
        except OutOfTime as out:
            say("time limit reached while checking or repairing the start pattern")
            return out.pattern_or(w), None, None
        report: dict = {}
        w, atts, _ = cleanup(problem, bounds, w, atts, deadline=clock.guard,
                             work=clock.units(0.1 * (deadline - t0)), report=report)
        clock.guarded |= report["stopped"] == "clock"
    else:
        w = start.copy() | sens
        atts = check(problem, bounds, w)
        if failing(bounds, atts):
            try:
                w, atts, _ = repair(problem, bounds, w, deadline=real_deadline)
            except OutOfTime as out:
                return out.pattern_or(w), None, None
    return w, atts, None


def _recheck(problem: Problem, bounds: Bounds, x: np.ndarray, base: np.ndarray,
             base_atts: dict[Key, Attack]) -> dict[Key, Attack]:
    """The attacks on pattern ``x``, given those on another pattern ``base``.

    An attack that reached its level on ``base`` with a certificate moving only cells
    that ``x`` withholds too keeps its certificate (a feasible table reaching the level),
    so only the other attacks are solved: those that failed on ``base``, those leaning on
    a cell that ``x`` publishes, those without a certificate, and both directions of a
    target with a sliding level when one of them is solved.
    """
    removed = base & ~x
    any_removed = bool(removed.any())
    redo = set()
    for key, a in base_atts.items():
        if not a.ok or getattr(a, "sliding_short", 0) > 0 or len(a.cells) == 0 \
                or (any_removed and removed[a.cells].any()):
            redo.add(key)
    for k, d, s in list(redo):
        if bounds.req_sl[k] > 0 and (k, -d, s) in base_atts:
            redo.add((k, -d, s))
    out = dict(base_atts)
    if redo:
        # insiders answered by an outsider's table that is solved again are looked at anew
        targets = np.unique([k for k, _, _ in redo])
        ins = lazy_insiders(problem, bounds, x.astype(bool), targets)
        out.update(run_attacks(problem, bounds, x.astype(float), sorted(redo), insiders=ins))
    return out


def _complete(problem: Problem, bounds: Bounds, master: _Master, keep: np.ndarray, start: np.ndarray,
              base: np.ndarray, base_atts: dict[Key, Attack],
              deadline: float, clock: WorkClock) -> tuple[np.ndarray, dict[Key, Attack]] | None:
    """The cheapest pattern withholding ``keep`` that the master allows, made safe.

    The master is solved with the cells of ``keep`` held withheld; its solution is
    attacked and, while some attack succeeds, the attack's inequality is added (valid for
    the whole problem) and the master solved again. ``start`` (a safe pattern withholding
    ``keep``) is the master's starting point; ``base`` / ``base_atts``: a checked pattern
    and its attacks, so that only the attacks :func:`_recheck` names are solved. Returns
    the safe pattern and its attacks, or ``None`` (time, or no progress). ``deadline``
    is on ``clock``.
    """
    sens = problem.sensitive
    fix_one = keep[master.var]
    while not clock.passed(deadline):
        master.start(start)
        xv, _ = master.solve(min(deadline - clock.now(), 30.0), fix_one=fix_one, clock=clock)
        if xv is None:
            return None
        x = sens.copy()
        x[master.var] = xv > 0.5
        atts = _recheck(problem, bounds, x, base, base_atts)
        bad = failing(bounds, atts)
        if not bad:
            return x, atts
        if master.add(cuts_for(problem, bounds, atts, bad, sens)) == 0:
            return None
    return None


class _Neighbourhoods:
    """Large-neighbourhood search on a safe pattern with the master's inequalities.

    A neighbourhood frees ``size`` complements of the incumbent near a seed complement
    (breadth first over the relations, seeds in order of decreasing cost) and keeps the
    others withheld; every cell not withheld stays free to join. The master restricted so
    is small and solved exactly, then completed to a safe pattern (:func:`_complete`);
    the incumbent is a feasible point of every neighbourhood, so a result is never worse.
    After a pass over all seeds without improvement the neighbourhoods grow and the
    search returns (the master gets the time).
    """

    def __init__(self, problem: Problem, bounds: Bounds, master: _Master, size: int = 25,
                 trial_limit: float = 5.0, log=None, clock: WorkClock | None = None) -> None:
        self.problem = problem
        self.say = log or (lambda *_: None)
        self.bounds = bounds
        self.master = master
        self.size = size
        self.pos = 0
        self.since = 0  # neighbourhoods tried since the last improvement
        self.tried = 0
        self.improved = 0
        self.exhausted = False  # a neighbourhood of every complement gave nothing
        self.trial_limit = trial_limit
        self.clock = clock if clock is not None else WorkClock()
        self._last: np.ndarray | None = None
        a = problem.relations.tocsr()
        self._a = a
        self._ac = a.tocsc()
        self._nb: dict[int, np.ndarray] = {}

    def _neighbours(self, k: int) -> np.ndarray:
        hit = self._nb.get(k)
        if hit is None:
            ac, a = self._ac, self._a
            rows = ac.indices[ac.indptr[k]:ac.indptr[k + 1]]
            parts = [a.indices[a.indptr[r]:a.indptr[r + 1]] for r in rows]
            hit = np.unique(np.concatenate(parts)) if parts else np.zeros(0, dtype=np.int64)
            self._nb[k] = hit
        return hit

    def _around(self, seed: int, secondary: np.ndarray) -> np.ndarray:
        """Up to ``size`` complements of the incumbent, breadth first from ``seed``."""
        chosen = [seed]
        seen = {seed}
        frontier = [seed]
        while frontier and len(chosen) < self.size:
            nxt = []
            for c in frontier:
                for d in self._neighbours(c):
                    d = int(d)
                    if d in seen:
                        continue
                    seen.add(d)
                    nxt.append(d)
                    if secondary[d] and len(chosen) < self.size:
                        chosen.append(d)
            frontier = nxt
        out = np.zeros(self.problem.n, dtype=bool)
        out[chosen] = True
        return out

    def improve(self, best: np.ndarray, atts: dict[Key, Attack],
                deadline: float) -> tuple[np.ndarray, dict[Key, Attack], float]:
        """Search neighbourhoods of ``best`` until ``deadline`` (on the search's
        :class:`~tablesafe.suppress.work_clock.WorkClock`); returns (pattern, attacks, cost)."""
        p = self.problem
        sens = p.sensitive
        cost = float(p.cost[best & ~sens].sum())
        if self._last is None or not np.array_equal(self._last, best):
            self.exhausted = False  # a new incumbent from elsewhere: search around it again
            self.since = 0
        clock = self.clock
        while not clock.passed(deadline) and not self.exhausted:
            secondary = best & ~sens
            sec = np.flatnonzero(secondary)
            if len(sec) == 0:
                break
            if self.since >= len(sec):
                # a pass over every seed gave nothing: larger neighbourhoods next time, and
                # the rest of this turn to the master (its bound, its solutions)
                self.exhausted = self.size >= len(sec)
                self.size = min(len(sec), int(self.size * 1.5) + 1)
                self.since = 0
                break
            order = sec[np.lexsort((sec, -p.cost[sec]))]
            seed = int(order[self.pos % len(order)])
            self.pos += 1
            free = self._around(seed, secondary)
            self.tried += 1
            self.since += 1
            res = _complete(p, self.bounds, self.master, best & ~free, best, best, atts,
                            min(deadline, clock.now() + self.trial_limit), clock)
            if res is None:
                continue
            c = float(p.cost[res[0] & ~sens].sum())
            if c < cost - 1e-9 * max(1.0, abs(cost)):
                best, atts = res
                cost = c
                self.say(f"neighbourhood of cell {seed}: cost {c:.6g}")
                self.improved += 1
                self.since = 0
        self._last = best
        return best, atts, cost


def _heuristic_start(problem: Problem, bounds, seconds: float | None = None,
                     clock: WorkClock | None = None, tables: list | None = None,
                     subtables: SubtableStart | None = None) -> tuple[np.ndarray, bool]:
    """A starting point, and whether its heuristic gave up (then the primaries, with the
    cells of the certificates a ``fast`` start found before it gave up when
    :data:`KEEP_PARTIAL_START`).

    With ``tables`` (a list) and ``subtables`` on a table with structure: the HiTaS
    subtables' pattern (``subtables(problem, bounds, seconds, tables)``, with their
    insiders, within ``seconds`` of work, in this process so that ``clock`` counts their
    work); their passing tables are appended to ``tables``. It gives up when the real
    clock left subtables unsolved. Otherwise the ``fast``
    pattern: it gives up when it fails, or takes more than ``seconds`` of work on
    ``clock``, :data:`GUARD_SLACK` times that on the real clock (measured on Castro's
    HIER16, without a table structure, ``fast`` needed 151 s, more than ``optimal``'s
    whole limit). A start the real clock ended is recorded in ``clock.guarded``."""
    from tablesafe.errors import SolverTimeLimit, TablesafeError
    from tablesafe.suppress.fast import fast_pattern

    clock = clock if clock is not None else WorkClock()
    limit = seconds if seconds is not None and seconds < 1e11 else None
    if tables is not None and subtables is not None and problem.structured:
        w, st = subtables(problem, bounds, limit, tables)
        if st.get("subtables_skipped"):
            clock.guarded = True
            tables.clear()
            return problem.sensitive.copy(), True
        return np.asarray(w, dtype=bool) | problem.sensitive, False
    try:
        pat = fast_pattern(problem, singleton=bool(bounds.singleton.any()),
                           capacity=bool(np.any(bounds.dn < bounds.tdn)), workers=1,
                           give_up_after=None if limit is None else GUARD_SLACK * limit,
                           give_up_work=None if limit is None else clock.units(limit))
    except SolverTimeLimit as exc:
        clock.guarded |= exc.by_clock
        clock.hurried_estimate = exc.hurried_estimate
        if KEEP_PARTIAL_START and exc.partial is not None:
            return np.asarray(exc.partial, dtype=bool) | problem.sensitive, True
        return problem.sensitive.copy(), True
    except TablesafeError:
        return problem.sensitive.copy(), True
    # a second pass its guard on the clock ended (not its work bound) leaves a pattern
    # that depends on the machine
    clock.guarded |= bool(pat.stats.get("second_pass_clock_stopped"))
    return np.asarray(pat.withheld, dtype=bool) | problem.sensitive, False
