"""Checking and repairing a suppression pattern with the attacker's LPs.

Every method ends here: :func:`check` runs the attacker's LPs for every sensitive cell and
direction (and every singleton insider next to it), :func:`repair` withholds more cells
until every check passes, and :func:`tablesafe.suppress.cleanup.cleanup` drops complements
no longer needed (the "second pass" of seed 003 B.2.b). Withholding more cells only
widens the attacker's intervals, so repair re-checks just the cells that failed.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

import numpy as np

from tablesafe.errors import AuditFailure
from tablesafe.problem import EMPTY, PROTECTED, Problem
from tablesafe.structure.insiders import InsiderModel
from tablesafe.structure.neighbours import neighbours
from tablesafe.suppress.attack_parts import attack_in_parts
from tablesafe.suppress.attack_progress import reporting
from tablesafe.suppress.attack_runs import (
    Insiders,
    LazyInsiders,
    OutOfTime,
    relations_by_cell,
    run_attacks,
)
from tablesafe.suppress.attacker import (
    DOWN,
    UP,
    Attack,
    Bounds,
    Cut,
    Key,
    cut_from,
    row_cuts,
)
from tablesafe.suppress.cover import Revisable, Row

if TYPE_CHECKING:
    from tablesafe.suppress.protection_lp import ProtectionLP

JOINT_SECONDS = 5.0
"""Time for one round's joint choice of complements (:func:`cover`)."""


def candidates(problem: Problem, bounds: Bounds) -> np.ndarray:
    """Cells that may serve as complements: not sensitive, protected or empty, able to move."""
    return (
        ~problem.sensitive
        & (problem.status != PROTECTED)
        & (problem.status != EMPTY)
        & ((bounds.dn > 0) | (bounds.up > 0))
    )


def _neighbours(problem: Problem, k: int) -> np.ndarray:
    """The cells that share a relation with cell ``k`` (``k`` included when it has one)."""
    return neighbours(problem.relations, neighbours(relations_by_cell(problem), np.array([k])))


def insiders_of(problem: Problem, bounds: Bounds, withheld: np.ndarray, targets: np.ndarray) -> Insiders:
    """For each target, the withheld cells whose single respondent attacks it.

    The attackers of :class:`tablesafe.structure.insiders.InsiderModel` (the audit's):
    every single respondent whose cell does not overlap the target. Targets with no
    insider are left out.
    """
    single = bounds.singleton & withheld
    out: Insiders = {}
    if not single.any():
        return out
    cand = np.flatnonzero(single)
    # the audit's attackers (tablesafe.structure.insiders)
    model = InsiderModel.of(problem)
    for k in np.asarray(targets, dtype=np.int64).tolist():
        nb = model.attackers(k, cand)
        if len(nb):
            out[k] = nb.astype(np.int64)
    return out


def lazy_insiders(problem: Problem, bounds: Bounds, withheld: np.ndarray, targets: np.ndarray) -> LazyInsiders:
    """:func:`insiders_of` for :func:`run_attacks`, worked out only for the cells an
    outsider's table moves (:class:`~tablesafe.suppress.attack_runs.LazyInsiders`)."""
    return LazyInsiders(InsiderModel.of(problem), bounds.singleton & withheld, targets)


def outsider_keys(bounds: Bounds, targets: np.ndarray) -> list[Key]:
    """The outsider's attacks on some sensitive cells (each direction with a level)."""
    keys: list[Key] = []
    for k in np.asarray(targets, dtype=np.int64).tolist():
        if bounds.req_up[k] > 0 or bounds.req_sl[k] > 0:
            keys.append((k, UP, -1))
        if bounds.req_dn[k] > 0 or bounds.req_sl[k] > 0:
            keys.append((k, DOWN, -1))
    return keys


def keys_for(problem: Problem, bounds: Bounds, withheld: np.ndarray, targets: np.ndarray) -> list[Key]:
    """Every attack (outsider and insiders, spelt out) on some sensitive cells under a
    pattern. Large tables should pass :func:`insiders_of` to :func:`run_attacks`
    instead: most insider attacks are answered by the outsider's table and need no key."""
    ins = insiders_of(problem, bounds, withheld, targets)
    keys: list[Key] = []
    for k, d, _ in outsider_keys(bounds, targets):
        keys.append((k, d, -1))
        keys.extend((k, d, int(s)) for s in ins.get(k, ()))
    return sorted(keys, key=lambda key: (key[0], key[2], -key[1]))


def sliding_cut(bounds: Bounds, up: Attack, dn: Attack, fixed_one: np.ndarray) -> Cut | None:
    """Sum of the upward and downward capacity inequalities against the sliding level."""
    if up.dual_cells is None or dn.dual_cells is None:
        return None
    cu = cut_from(Attack(up.target, UP, up.insider, 0, 0.0, dual_cells=up.dual_cells, dual_d=up.dual_d), bounds,
                  fixed_one, cap=False)
    cd = cut_from(Attack(dn.target, DOWN, dn.insider, 0, 0.0, dual_cells=dn.dual_cells, dual_d=dn.dual_d), bounds,
                  fixed_one, cap=False)
    # cut_from with required 0 leaves rhs = -constants; recombine without capping
    const = -(cu.rhs + cd.rhs)
    rhs = float(bounds.req_sl[up.target]) - const
    idx, inv = np.unique(np.concatenate([cu.idx, cd.idx]), return_inverse=True)
    coef = np.zeros(len(idx))
    np.add.at(coef, inv, np.concatenate([cu.coef, cd.coef]))
    return Cut(idx, np.minimum(coef, max(rhs, 0.0)), rhs, up.target, 0)


def still_holds(bounds: Bounds, attack: Attack, withheld: np.ndarray) -> bool:
    """Whether a successful attack's table is still feasible under ``withheld``.

    The table moves only the cells of ``attack.cells``; while each of them stays
    withheld it remains a feasible table of the attacker's LP (withholding more cells
    only frees more deviations, and an insider's cell, which the table keeps at its true
    value, may be withheld or not), so the attack still reaches its level and needs no
    new LP. Attacks with a sliding level, unbounded ones (no table kept) and failed ones
    never hold.
    """
    k = attack.target
    if not attack.ok or bounds.req_sl[k] > 0:  # (only sliding levels set sliding_short)
        return False
    if attack.required <= 0:
        return True
    return bool(len(attack.cells)) and np.isfinite(attack.reached) and bool(withheld[attack.cells].all())


def failing(bounds: Bounds, atts: dict[Key, Attack]) -> list[Key]:
    """Keys whose level (or sliding level) is not reached, in a fixed order."""
    return sorted(k for k, a in atts.items() if not a.ok or getattr(a, "sliding_short", 0) > 0)


def cuts_for(problem: Problem, bounds: Bounds, atts: dict[Key, Attack], keys: list[Key],
             fixed_one: np.ndarray) -> list[Cut]:
    """Capacity inequalities of failed attacks."""
    cuts = []
    for key in keys:
        a = atts[key]
        if not a.ok and a.dual_cells is not None:
            cuts.append(cut_from(a, bounds, fixed_one))
        elif getattr(a, "sliding_short", 0) > 0:
            c = sliding_cut(bounds, a, atts.get((key[0], DOWN, key[2]), a), fixed_one)
            if c is not None:
                cuts.append(c)
        elif not a.ok:
            cuts.extend(c for c in row_cuts(problem, bounds, fixed_one) if c.target == key[0])
    return cuts


def _unprotectable(problem: Problem, key: Key, why: str) -> AuditFailure:
    k, d, s = key
    name = problem.names[k]
    direction = "upward" if d == UP else "downward" if d == DOWN else "sliding"
    who = "" if s < 0 else f" against the single respondent of cell {problem.names[s]!r}"
    return AuditFailure(
        f"sensitive cell {name!r} cannot be protected {direction}{who}: {why}. "
        "Withholding every other admissible cell still leaves the attacker's interval short of its "
        "protection level; make more cells eligible as complements (statuses P/Z, a priori bounds, "
        "capacity) or lower its protection level."
    )


def repair(problem: Problem, bounds: Bounds, withheld: np.ndarray, *, deadline: float = float("inf"),
           progress=None, targets: np.ndarray | None = None,
           known: dict[Key, Attack] | None = None) -> tuple[np.ndarray, dict[Key, Attack], int]:
    """Withhold more cells until every sensitive cell passes; returns (mask, attacks, rounds).

    Each failing attack's dual gives a capacity inequality: how much protection the
    published cells could add (Fischetti-Salazar). The inequalities of all rounds so far
    are met together by the cheapest cells (:func:`cover`) on top of the pattern given, so
    a later round can replace a complement an earlier one chose; the cells that ever
    failed are checked again, unless the tables of all their last attacks still stand
    (:func:`still_holds`). ``targets`` limits the first check to some sensitive cells
    (default: all). After :data:`JOINT_ROUNDS` rounds the pattern only grows.
    ``progress``: a function given one line per round (how many attacks fail, how many
    cells are withheld).
    ``known``: tables already proved to be certificates of the whole table under
    ``withheld`` (the subtables', :mod:`tablesafe.suppress.subtable_tables`), which
    answer their attacks in the first check with no LP.

    Past ``deadline`` (a ``time.monotonic()`` value) :class:`OutOfTime` is raised with
    the pattern as far as it got and the latest attack of each key (``OutOfTime.attacks``:
    the ``known`` tables and what the check that ran out of time had settled).
    """
    w = withheld.copy() | problem.sensitive
    choice = Revisable(w, problem.cost)
    cand = candidates(problem, bounds)
    first = np.flatnonzero(problem.sensitive) if targets is None else np.asarray(targets, dtype=np.int64)
    rounds = 0
    ever = np.zeros(problem.n, dtype=bool)
    stubborn = Stubborn()
    final: dict[Key, Attack] | None = None
    try:
        atts = _attack_all(problem, bounds, w, first, deadline, known, progress, "repair check")
        final = dict(atts)
        while True:
            bad = failing(bounds, atts)
            if progress is not None:
                progress(f"repair round {rounds}: {len(atts):,} attacks checked, {len(bad):,} short of "
                         f"their level, {int(w.sum()):,} cells withheld")
            if not bad:
                break
            rounds += 1
            if time.monotonic() > deadline:
                raise OutOfTime
            if rounds > JOINT_ROUNDS:
                choice.freeze(w)  # from here on the pattern only grows
            w = revise(problem, bounds, choice, w, atts, bad, cand, deadline)
            w = stubborn.protect(problem, bounds, choice, w, bad, cand, deadline)
            ever[[key[0] for key in bad]] = True
            # a target is attacked again unless the tables of all its attacks stand
            # (every cell they move still withheld: :func:`still_holds`); new insiders
            # are respondents of cells withheld since, which those tables do not move
            stale = np.zeros(problem.n, dtype=bool)
            for key, a in final.items():
                if ever[key[0]] and not stale[key[0]] and not still_holds(bounds, a, w):
                    stale[key[0]] = True
            again = np.flatnonzero(stale)
            atts = _attack_all(problem, bounds, w, again, deadline, None, progress, f"repair round {rounds} check")
            # the new attacks on these targets replace the old ones (an insider attack that
            # failed before may now be answered by the outsider's table, with no key)
            redone = set(again.tolist())
            final = {key: a for key, a in final.items() if key[0] not in redone}
            final.update(atts)
    except OutOfTime as out:
        # the tables of the attacks settled so far stay with the pattern (their targets
        # need no new search: :mod:`tablesafe.suppress.settled`), also those a check
        # settled before its deadline
        raise OutOfTime(w, {**(final if final is not None else known or {}), **(out.attacks or {})}) from None
    # attacks of insiders that appeared later are included because the insiders are recomputed
    return w, final, rounds


JOINT_ROUNDS = 20
"""Rounds of :func:`repair` that may revise the complements of earlier rounds."""

STUBBORN_FAILS = 1
"""Failures of an attack from which its own protection LP picks its complements: from the
first. On three-way tables the capacity inequality of a failed insider's attack asks for
one more cell, while a new table round the insider's cell needs several at once, so the
same attacks failed round after round (the generated 1,872-cell three-way table with
holdings, seed 3: 551 failing attacks, 458 of them failing again after the first
round's complements). Measured with ``suppress(problem, "auto")`` (thirty-eighth
session), 3 -> 1: that table 53.6 -> 41.0 s, 14.61 -> 14.58 M; seed 2 38.0 -> 29.3 s,
14.41 -> 14.44 M; seed 1 16.4 -> 13.6 s, 7.37 -> 7.34 M; the two-way tables of 2,368
and 13,167 cells 4.19 -> 4.19 M and 5.38 -> 5.36 M in about the same time."""


SKIP_PASSING_FROM = 8_000
"""Cells of a table from which :meth:`Stubborn.protect` first attacks its stubborn
attacks on the pattern it is given (after the round's complements) and asks the
protection LP, a model of the whole table, only of those that still fail (an attack
that passes also passes on every larger pattern). Measured with ``suppress(problem,
"auto")`` on generated tables with holdings (CPU seconds of ``protect``, one CPU; the
same patterns either way): the 13,167-cell two-way table 1.5-1.9 -> 0.8 s (141 of its 207
stubborn attacks passed already); on smaller tables the attacks cost more than the
protection LPs they save: the 3,799-cell skewed two-way one 0.7 -> 1.7 s, the
1,872-cell three-way one 0.36 -> 0.95 s."""


class Stubborn:
    """Attacks that fail again and again although their capacity inequalities are met:
    from the ``fails``-th failure on (default :data:`STUBBORN_FAILS`, the first; the
    audit-guided repair waits longer), the published cells of the attack's protection LP
    (:func:`~tablesafe.suppress.protection_lp.protecting_cells`) are withheld for good."""

    def __init__(self, fails: int | None = None, relax: bool = False) -> None:
        self.limit = STUBBORN_FAILS if fails is None else fails
        self.relax = relax  # attacks that failed so often are tried on relaxations first
        self.fails: dict[Key, int] = {}
        self._model: ProtectionLP | None = None  # the protection LP, kept while it serves

    def protect(self, problem: Problem, bounds: Bounds, choice: Revisable, w: np.ndarray,
                bad: list[Key], cand: np.ndarray, deadline: float = float("inf")) -> np.ndarray:
        """``w`` with the protecting cells of the stubborn attacks among ``bad``; raises
        :class:`OutOfTime` past ``deadline``, checked before each whole-table LP, which
        gets the time left."""
        from tablesafe.suppress.protection_lp import ProtectionLP

        for key in bad:
            self.fails[key] = self.fails.get(key, 0) + 1
        stubborn = sorted(k for k in bad if self.fails[k] >= self.limit)
        if stubborn and problem.n >= SKIP_PASSING_FROM:
            # the complements chosen for this round's inequalities often protect the
            # attack already: it then passes on every larger pattern, and its protection
            # LP (on the whole table) is not needed
            now = run_attacks(problem, bounds, w.astype(float), stubborn, want_dual=False, sparse=True,
                              expect_pass=True, deadline=None if not np.isfinite(deadline) else deadline,
                              split_insiders=not self.relax, relax_first=self.relax)
            stubborn = [key for key in stubborn if not now[key].ok]
        for key in stubborn:
            left = deadline - time.monotonic()
            if left <= 0:
                raise OutOfTime
            if self._model is None or not self._model.serves(problem, bounds, cand, w):
                self._model = ProtectionLP(problem, bounds, w, cand)
            cells = self._model.cells(w, *key, time_limit=left if np.isfinite(left) else None)
            if cells is not None and cells.size:
                w = choice.keep(cells)
                self.fails[key] = 0
        return w


def revise(problem: Problem, bounds: Bounds, choice: Revisable, w: np.ndarray, atts: dict[Key, Attack],
            bad: list[Key], cand: np.ndarray, deadline: float) -> np.ndarray:
    """The pattern meeting the capacity inequalities of ``bad`` (failed on ``w``) and
    every earlier one of ``choice``; when they give nothing new (the duals promised
    protection the LP does not give: numerical), ``w`` widened by a neighbour of each
    failed target, kept from then on."""
    new_cuts = _cut_rows(problem, bounds, w, atts, bad, cand)
    out = (choice.extend(new_cuts, min(JOINT_SECONDS, max(deadline - time.monotonic(), 0.0)))
           if new_cuts else w)
    if not new_cuts or np.array_equal(out, w):
        out = w.copy()
        if widen(problem, out, cand, [key[0] for key in bad]) == 0:
            raise _unprotectable(problem, bad[0], "no admissible complement is left")
        choice.freeze(out)
    return out


def _cut_rows(problem: Problem, bounds: Bounds, w: np.ndarray, atts: dict[Key, Attack], bad: list[Key],
              cand: np.ndarray) -> list[Row]:
    """The capacity inequalities of the failed attacks ``bad`` that ``w`` does not meet,
    over the cells that may be withheld (withheld ones included); raises
    :class:`~tablesafe.errors.AuditFailure` when no admissible cell can meet one."""
    out = []
    for key in bad:
        cs = cuts_for(problem, bounds, atts, [key], problem.sensitive)
        if not cs:
            raise _unprotectable(problem, key, "the attacker's LP gave no usable dual")
        for cut in cs:
            tol = 1e-9 * max(1.0, abs(cut.rhs))
            if cut.rhs - float(np.sum(cut.coef[w[cut.idx]])) <= tol:
                continue
            ok = cand[cut.idx] | w[cut.idx]
            if float(np.sum(cut.coef[ok])) < cut.rhs - tol:
                raise _unprotectable(problem, key, "no admissible complement is left in its relations")
            out.append((cut.idx[ok], cut.coef[ok], float(cut.rhs)))
    return out


def widen(problem: Problem, w: np.ndarray, cand: np.ndarray, targets: list[int]) -> int:
    """Withhold (in ``w``) the cheapest admissible neighbour of each target in turn (a
    target listed twice gets two); returns how many cells were added."""
    added = 0
    for k in targets:
        nb = _neighbours(problem, k)
        nb = nb[cand[nb] & ~w[nb]]
        if len(nb):
            w[nb[np.argmin(problem.cost[nb])]] = True
            added += 1
    return added


def _attack_all(problem: Problem, bounds: Bounds, w: np.ndarray, targets: np.ndarray,
                deadline: float | None = None, known: dict[Key, Attack] | None = None,
                progress=None, label: str = "checking") -> dict[Key, Attack]:
    """The outsider's attacks on ``targets`` and every insider attack they leave open
    (many targets: in two parts of whole blocks side by side, :mod:`tablesafe.suppress.attack_parts`);
    ``progress`` (a function given a line) hears the counts while it runs
    (:mod:`~tablesafe.suppress.attack_progress`), each line starting with ``label``."""
    targets = np.asarray(targets, dtype=np.int64)
    total = len(outsider_keys(bounds, targets)) if progress is not None else 0
    with reporting(progress, total, label):
        return attack_in_parts(lambda part: attack_part(problem, bounds, w, part, deadline, known), problem, w,
                               targets, OutOfTime)


def attack_part(problem: Problem, bounds: Bounds, w: np.ndarray, targets: np.ndarray,
                deadline: float | None, known: dict[Key, Attack] | None = None) -> dict[Key, Attack]:
    """:func:`_attack_all` of some targets in this process, in one pass."""
    ins = lazy_insiders(problem, bounds, w, targets)
    # most attacks on a pattern from the subtables pass: each seeks its sparse
    # certificate first, one LP instead of two for those that pass
    return run_attacks(problem, bounds, w.astype(float), outsider_keys(bounds, targets), sparse=True,
                       insiders=ins, deadline=deadline, expect_pass=True, known=known)


def check(problem: Problem, bounds: Bounds, withheld: np.ndarray,
          deadline: float | None = None) -> dict[Key, Attack]:
    """Every attack on every sensitive cell under a binary pattern (:class:`OutOfTime`
    past ``deadline``)."""
    targets = np.flatnonzero(problem.sensitive)
    return run_attacks(problem, bounds, withheld.astype(float), outsider_keys(bounds, targets),
                       deadline=deadline, insiders=lazy_insiders(problem, bounds, withheld, targets))
