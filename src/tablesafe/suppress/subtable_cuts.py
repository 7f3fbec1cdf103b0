"""One HiTaS subtable protected by cut generation (Fischetti-Salazar, seed 002).

A subtable of a hierarchical table is a small table without hierarchy (tens to a few
hundred cells). Its pattern is found by a master MIP over the candidate complements
alone, whose rows are the capacity inequalities of the attacks its solutions fail; each
integer solution is checked by the attacker's LPs and cut off until every attack passes.
Compared with the compact model (:mod:`tablesafe.suppress.compact`, one copy of the
table per attack in a single MIP) the master stays as small as the subtable, and an
attacker LP on a subtable takes about a millisecond. Measured on the 33 subtables of the
generated 1,872-cell three-way table with holdings (120-cell subtables with 26-62
sensitive cells), one after the other in one process: 16 s against 135 s for the
compact models, at the same total cost (107.38 M against 107.39 M).
"""

from __future__ import annotations

import dataclasses

import numpy as np

from tablesafe.problem import Problem
from tablesafe.suppress.attacker import Attack, Bounds, row_cuts
from tablesafe.suppress.flow_attacks import network_signs
from tablesafe.suppress.kept_tables import KeptTables, by_flow
from tablesafe.suppress.optimal import _lp_rounds, _Master
from tablesafe.suppress.protection import Key, cuts_for, failing, outsider_keys, run_attacks
from tablesafe.suppress.subtable_boxes import BoxTables
from tablesafe.suppress.work_clock import WorkClock

MASTER_OPTIONS: dict[str, bool] = {
    "mip_allow_restart": False,
    "mip_heuristic_run_rins": False,
    "mip_heuristic_run_rens": False,
    "mip_heuristic_run_root_reduced_cost": False,
    "mip_heuristic_run_feasibility_jump": False,
}
"""HiGHS options of a subtable's master. Its MIPs have a hundred binaries or so and are
solved again after every round of inequalities, so HiGHS's restarts after root
presolve and its large-neighbourhood and reduced-cost heuristics cost more than they
find. Measured on the 34 masters of the generated 1,872-cell three-way table that took
longer than 80 ms (HiGHS 1.16, one thread): 3.9 s with HiGHS's defaults, 1.5 s without
restarts, 0.9 s without the three heuristics as well, each master at the same optimum;
in the whole run the subtables' MIPs took 5.1 CPU-s instead of 8.8. Nor does a master
need HiGHS's feasibility jump (withholding every candidate always meets its covering
rows): measured on the masters of ``suppress(problem, "auto")`` on the generated tables
with holdings, each solved again alone with the options above it (HiGHS 1.16, gap 1e-3,
sixty-third session), without it the 2,368-cell two-way table's 282 masters (median 6
rows by 35 columns) took 0.15 s instead of 0.48, the 13,167-cell two-way one's 653 0.74 s
instead of 1.72, the 1,872-cell three-way one's 339 6.7 s instead of 7.8, every objective
within the gap; the whole runs gave the same patterns on the two-way tables, and 7.288 M
instead of 7.295 M on the three-way one (its masters' ties break otherwise). Without
strong branching as well (``mip_pscost_minreliable`` 0) the three-way masters took 5.4 s
but that pattern withheld 7.388 M: left out. (``optimal``'s own masters keep HiGHS's defaults.)"""

LP_ROUNDS = 30
"""Rounds on the master's LP relaxation before it is solved as a MIP (inequalities that
the fractional patterns violate; they are valid for every pattern)."""


BOX_TABLES_FROM = 2000
"""Subtables of more cells than this take the tables they hand on (the moves carried into
other subtables, the insiders' round, the full-table check's reused tables) from their box
certificates (:mod:`tablesafe.suppress.subtable_boxes`); smaller ones from the attacker
LP's sparse certificates, which may run through more cells than a box's corners and move
cheaper ones. Their cut rounds use the boxes either way. Measured with
``suppress(problem, "auto")`` on ten generated tables (forty-first session): boxes for
everything moved the withheld value by -0.7 % to +0.2 % on nine, but +3.9 % on the
three-way ``mixed3d`` (8.38 -> 8.70 M); with this split none is more than 0.1 % above
the value without boxes (``mixed3d`` 8.39 M), and the subtables keep most of the time
saved (13k2d's 4.7 s -> 4.1 s against 3.1 s). On a flat table's one large subtable the
sparse LPs alone would take minutes (``flat13k2d``: 11,176 at about 14 ms)."""

REUSE_MOVES = True
"""Whether a subtable finds the certificates it hands on (:func:`_moves`) before checking
its insiders, so that they answer the outsiders' attacks of that check and stand when no
insider fails (otherwise they are found again for the next pattern). Measured with
``modular_pattern(workers=1)`` (fifty-fourth session): LP work on the generated 13,167-cell
two-way table with holdings 493,021 -> 477,760 units (7.9 and 8.5 s -> 7.7 and 8.1 s), on
the 2,368-cell one 64,377 -> 56,286 (1.8 and 1.9 s -> 1.7 and 1.6 s); with ``auto`` the same
patterns there and on deep2d, skew2d, irr2d_a and 2k3d."""

KEEP_FLOW_TABLES = True
"""Whether a network subtable's attacks keep their last passing tables from one master's
pattern to the next while every cell they move may still move that far
(:class:`~tablesafe.suppress.kept_tables.KeptTables`); the tables it hands on are found
again on its final pattern, so the subtable's result is the same either way. Measured on
the generated 13,167-cell two-way table (``modular_pattern``, one CPU): 48,265 flows ->
32,924, 2.83-2.96 -> 2.57-2.70 CPU seconds, the same pattern and tables."""

HAND_ON_INSIDERS = True
"""Whether a subtable hands on the tables of its single respondents' passing attacks too
(found for its pattern if its insiders' check did not run on it), so that the full-table
check reuses those that are certificates of the whole table instead of solving their LPs."""

INSIDER_ROUND_SHARE = 0.4
"""A subtable whose pattern against outsiders took more than this share of its work
gets no insider round: that round attacks the insiders and solves the master again,
which takes about as much again, and out of work it keeps the outsiders' pattern anyway.
(Measured on a generated flat 121 x 41 two-way table, one subtable of 3,617 non-empty
cells: the outsiders' pattern took 12 s of its 30 s, the insider round 18 s more and ran
out of work; the full-table repair then protected the insiders in 0.3 s.)"""


@dataclasses.dataclass(frozen=True)
class SubtablePattern:
    """A subtable's pattern and what its certificates ask of each cell.

    Attributes:
        withheld: the pattern (sensitive cells included).
        safe: every attack of the model passes (False: out of time, the last pattern
            found, which the full-table repair completes).
        need_up, need_down: per cell, the largest move up and down that a certificate
            of the pattern makes (what a complement must be able to give when it is
            protected in another subtable; seed 000 section 6).
        tables: (key, attack) of the passing attacks of the pattern (sparse
            certificates in the subtable's positions): the outsiders', and those of the
            single respondents the subtable's model holds. The full-table check reuses
            those that are certificates of the whole table too
            (:mod:`tablesafe.suppress.subtable_tables`).
    """

    withheld: np.ndarray
    safe: bool
    need_up: np.ndarray
    need_down: np.ndarray
    tables: tuple[tuple[Key, Attack], ...] = ()


class _Cuts:
    """The master of one subtable and the attacks it must defeat."""

    def __init__(self, sub: Problem, bounds: Bounds, cand: np.ndarray, mip_gap: float, seed: int,
                 boxes: BoxTables | None = None) -> None:
        self.sub = sub
        self.boxes = boxes
        self.bounds = bounds
        self.sens = sub.sensitive
        self.master = _Master(sub, cand, seed)
        self.master.h.setOptionValue("mip_rel_gap", float(mip_gap))
        for name, value in MASTER_OPTIONS.items():
            self.master.h.setOptionValue(name, value)
        self.master.add(row_cuts(sub, bounds, self.sens))
        self.last: dict[Key, Attack] = {}  # the attacks of the last pattern that passed them all
        # a network without boxes: its attacks are flows, whose tables are sparse certificates
        self.flows = boxes is None and network_signs(sub) is not None
        # its passing tables, kept for the next pattern (:mod:`~tablesafe.suppress.kept_tables`)
        self.kept = KeptTables(bounds) if KEEP_FLOW_TABLES and self.flows else None

    def _attack(self, x: np.ndarray, keys: list[Key], clock: WorkClock) -> dict[Key, Attack] | None:
        """The attacks of ``keys`` on ``x``; ``None`` past the clock's guard (a round's
        attacks on a block of thousands of cells can take seconds). On a network the
        last round's passing tables that still fit answer their attacks
        (:class:`~tablesafe.suppress.kept_tables.KeptTables`)."""
        known = self.kept.known(x) if self.kept is not None else None
        atts = clock.until_guard(run_attacks, self.sub, self.bounds, x, keys, want_dual=True, boxes=self.boxes,
                                 known=known)
        if atts is not None and self.kept is not None:
            self.kept.update(atts, known)
        return atts

    @property
    def fresh(self) -> set[Key]:
        """The keys of the last round's attacks whose tables are new (all without kept
        tables); right after :meth:`solve` found a safe pattern, those of ``last``."""
        return self.kept.fresh if self.kept is not None else set(self.last)

    def relax(self, keys: list[Key], deadline: float, clock: WorkClock) -> None:
        """Strengthen the master on its LP relaxation (at most ``LP_ROUNDS`` rounds),
        then make it integral. ``deadline`` is on ``clock``."""
        _lp_rounds(self.sub, self.bounds, self.master, LP_ROUNDS, deadline, {}, keys=keys, clock=clock,
                   boxes=self.boxes, kept=self.kept)
        self.master.integral(True)

    def solve(self, keys: list[Key], deadline: float, clock: WorkClock) -> tuple[np.ndarray | None, bool]:
        """The cheapest pattern the master finds that passes every attack of ``keys``:
        (pattern, safe); out of work (``deadline`` on ``clock``), the last pattern found
        and False."""
        if self.master.nv == 0:
            # no candidate complement: the sensitive cells alone, safe or not
            atts = self._attack(self.sens.astype(float), keys, clock)
            if atts is None:
                return self.sens.copy(), False
            safe = not failing(self.bounds, atts)
            self.last = atts if safe else {}
            return self.sens.copy(), safe
        last = None
        while True:
            if clock.passed(deadline):
                return last, False
            xv, _ = self.master.solve(deadline - clock.now(), clock=clock)
            if xv is None:
                return last, False
            x = self.sens.copy()
            x[self.master.var] = xv > 0.5
            atts = self._attack(x.astype(float), keys, clock)
            if atts is None:
                return (last if last is not None else x), False
            bad = failing(self.bounds, atts)
            if not bad:
                self.last = atts
                return x, True
            last = x
            if self.master.add(cuts_for(self.sub, self.bounds, atts, bad, self.sens)) == 0:
                return x, False  # no inequality cuts it off (numerically): no progress


def protect_subtable(sub: Problem, bounds: Bounds, cand: np.ndarray, insiders: dict[int, np.ndarray],
                     seconds: float, mip_gap: float, seed: int, rounds: int = 1,
                     reopens: np.ndarray | None = None, clock: WorkClock | None = None,
                     boxes: BoxTables | None = None) -> SubtablePattern | None:
    """The subtable's pattern against outsiders, then against the insider attacks it
    fails, for at most ``rounds`` more solves (the full-table repair takes the rest),
    within ``seconds`` of LP work (:class:`~tablesafe.suppress.work_clock.WorkClock`,
    whose guard on the real clock is ``GUARD_SLACK`` times that; pass ``clock`` to
    read its ``guarded`` afterwards, whatever the solve returned).

    ``insiders`` maps a sensitive cell (local position) to the cells whose single
    respondent attacks it. At most twice as many insider attacks as the subtable has
    targets are added per round, and a round whose pattern withholds more of
    ``reopens`` (cells published by subtables already protected) than the one before is
    not kept and ends the rounds: reopening those subtables costs more than leaving its
    insiders to that repair. Out of time before any pattern passes the outsiders, the
    last pattern found is returned (unsafe, for the repair to complete); None when the
    master found none at all. ``boxes``: the subtable's box certificates, which answer
    the attacks they can before any LP (:mod:`tablesafe.suppress.subtable_boxes`).
    """
    clock = WorkClock.for_limit(seconds) if clock is None else clock
    start = clock.now()
    deadline = start + seconds
    sens = sub.sensitive
    keys = outsider_keys(bounds, np.flatnonzero(sens))
    cuts = _Cuts(sub, bounds, cand, mip_gap, seed, boxes)
    # the tables a subtable hands on (moves, insiders, the full-table check) come from
    # the boxes only on large subtables (BOX_TABLES_FROM)
    handing_on = boxes if sub.n > BOX_TABLES_FROM else None
    cuts.relax(keys, deadline, clock)
    best: np.ndarray | None = None
    best_atts: dict[Key, Attack] = {}
    best_fresh: set[Key] = set()  # the keys of best_atts attacked on best itself
    partial: np.ndarray | None = None
    moved = None  # best's moves and tables (:func:`_moves`), once found
    best_insiders: dict[Key, Attack] | None = None  # best's passing insider attacks, once checked
    short = False  # too little work left for the insiders
    have = set(keys)
    per_round = 2 * max(int(sens.sum()), 1)
    done = 0
    while True:
        x, safe = cuts.solve(keys, deadline, clock)
        if x is None:
            break
        if not safe:
            partial = x
            break
        if best is not None and reopens is not None and int((x & reopens).sum()) > int((best & reopens).sum()):
            break
        best, best_atts, moved, best_insiders = x, cuts.last, None, None
        best_fresh = cuts.fresh
        if not insiders or done == rounds:
            break
        if clock.now() - start > INSIDER_ROUND_SHARE * seconds:
            short = True
            break  # too little work left for an insider round (the full-table repair takes them)
        if REUSE_MOVES:
            # the certificates the subtable hands on, found first: they answer the
            # outsiders' attacks of the insiders' check, and stand when no insider fails
            moved = _moves(sub, bounds, best, keys, clock, best_atts, handing_on, cuts.flows, best_fresh)
        best_insiders = {}
        more = clock.until_guard(failing_insiders, sub, bounds, x, keys, insiders, have, boxes=handing_on,
                                 known=dict(moved[2]) if moved is not None else None, passed=best_insiders)
        if more is None:
            best_insiders = None  # past the clock's guard: not all checked
        if not more:
            break  # none failing, or past the clock's guard
        more = more[:per_round]
        keys = keys + more
        have.update(more)
        done += 1
    if best is None:
        if partial is None:
            return None
        return SubtablePattern(partial, False, *_moves(sub, bounds, partial, [k for k in keys if k[2] < 0], clock,
                                                       boxes=handing_on))
    if moved is None:
        moved = _moves(sub, bounds, best, keys, clock, best_atts, handing_on, cuts.flows, best_fresh)
    up, dn, tables = moved
    if insiders and HAND_ON_INSIDERS and not short:
        tables = tables + _insider_tables(sub, bounds, best, keys, insiders, clock, handing_on, tables,
                                          best_insiders)
    return SubtablePattern(best, True, up, dn, tables)


def _insider_tables(sub: Problem, bounds: Bounds, x: np.ndarray, keys: list[Key], insiders: dict[int, np.ndarray],
                    clock: WorkClock, boxes: BoxTables | None, tables: tuple[tuple[Key, Attack], ...],
                    checked: dict[Key, Attack] | None) -> tuple[tuple[Key, Attack], ...]:
    """The passing insider attacks on the subtable's pattern ``x`` with tables of their own
    that ``tables`` (the pattern's sparse certificates) does not hold: ``checked`` when
    the insiders' check ran on ``x``, else found now (none past the clock's guard)."""
    if checked is None:
        checked = {}
        if clock.until_guard(failing_insiders, sub, bounds, x, keys, insiders, set(keys), boxes=boxes,
                             known=dict(tables), passed=checked) is None:
            return ()
    have = {key for key, _ in tables}
    return tuple((key, a) for key, a in sorted(checked.items()) if key not in have and len(a.cells))


def failing_insiders(sub: Problem, bounds: Bounds, x: np.ndarray, keys: list[Key],
                      insiders: dict[int, np.ndarray], have: set, deadline: float | None = None,
                      boxes: BoxTables | None = None, known: dict[Key, Attack] | None = None,
                      passed: dict[Key, Attack] | None = None) -> list[Key]:
    """Insider attacks on the pattern that reach no level, in a fixed order.

    Each insider of an outsider attack among ``keys`` is attacked by LP on the subtable
    where the outsider's table moves its cell (the others are answered by that table, so
    their keys are never spelt out: a flat table's targets can each have a thousand
    insiders), and every insider of an outsider attack that fails fails too; only the
    failing ones go into the next model, so the model grows by what the pattern lacks.
    Past ``deadline`` (``time.monotonic()``) it raises
    :class:`~tablesafe.suppress.attack_runs.OutOfTime`. ``known``: certificates of the
    outsiders' attacks under ``x`` found already (their attacks take them with no LP).
    ``passed`` (a dict), when given, gets the insider attacks that pass with a table of
    their own (not the outsider's).
    """
    outer = [key for key in keys if key[2] < 0 and len(insiders.get(key[0], ()))]
    if not outer:
        return []
    found = run_attacks(sub, bounds, x.astype(float), outer, want_dual=False, sparse=True, certify=False,
                        expect_pass=True, insiders={k: insiders[k] for k, _, _ in outer}, deadline=deadline,
                        boxes=boxes, known=known)
    bad = {key for key, att in found.items() if key[2] >= 0 and not att.ok}
    if passed is not None:
        passed.update((key, att) for key, att in found.items()
                      if key[2] >= 0 and att.ok and att is not found.get((key[0], key[1], -1)))
    for k, d, _ in outer:
        if not found[(k, d, -1)].ok:  # its insiders know more: they fail as well
            bad.update((k, d, int(c)) for c in insiders[k])
    return sorted(bad - have)


def _moves(sub: Problem, bounds: Bounds, x: np.ndarray, keys: list[Key], clock: WorkClock,
           found: dict[Key, Attack] | None = None,
           boxes: BoxTables | None = None,
           flows: bool = False, fresh: set[Key] | None = None,
           ) -> tuple[np.ndarray, np.ndarray, tuple[tuple[Key, Attack], ...]]:
    """Per cell, the largest move up and down of the pattern's sparse certificates of
    ``keys``, and those of them that pass as (key, attack). Past the clock's guard the
    tables the pattern's check ``found`` take their place (no LP; they move more cells),
    or none when there are none.

    ``flows``: ``found`` comes from the attacks of a network subtable without boxes on
    ``x`` (:mod:`~tablesafe.suppress.flow_attacks`), whose tables are the sparse
    certificates already (the cheapest flow at the level, whether or not the run went on
    to the maximum flow); those keys are taken from it with no flow of their own, and only
    the attacks a flow does not model (:func:`by_flow`) are solved again, and those whose
    table was kept from an earlier pattern (not in ``fresh``, when given)."""
    keys = sorted(keys)
    have = ({key: found[key] for key in keys
             if key in found and by_flow(bounds, key) and (fresh is None or key in fresh)}
            if flows and found else {})
    rest = [key for key in keys if key not in have]
    atts = (clock.until_guard(run_attacks, sub, bounds, x.astype(float), rest, want_dual=False,
                              sparse=True, expect_pass=True, boxes=boxes, known=have or None)
            if rest else {})
    if atts is None:
        atts = {key: found[key] for key in keys if found and key in found}
    else:
        atts = {key: atts[key] if key in atts else have[key] for key in keys}
    up, dn = scaled_moves(list(atts.values()), sub.n)
    tables = tuple((key, a) for key, a in sorted(atts.items()) if a.ok and len(a.cells))
    return up, dn, tables


def scaled_moves(attacks: list[Attack], n: int) -> tuple[np.ndarray, np.ndarray]:
    """Per cell, the largest move up and down of the attacks' tables, each table scaled
    down to reach its level exactly (a table within the attacker's box that meets the
    relations stays feasible when scaled towards the true table). An unbounded attack
    counts by the table it carries (a sparse certificate moves its target by the level).
    """
    up = np.zeros(n)
    dn = np.zeros(n)
    for att in attacks:
        if not att.ok or att.reached <= 0 or not len(att.cells):
            continue
        dev = np.asarray(att.dev, dtype=float)
        if not np.all(np.isfinite(dev)):
            continue
        # the table's own move of the target (a sparse certificate moves it by exactly
        # its level, an attacker's optimal table by ``reached``)
        own = float(att.direction * dev[att.cells == att.target].sum())
        if own <= 0:
            continue
        dev = dev * min(1.0, att.required / own)
        np.maximum.at(up, att.cells, np.maximum(dev, 0.0))
        np.maximum.at(dn, att.cells, np.maximum(-dev, 0.0))
    return up, dn
