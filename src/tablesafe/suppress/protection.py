"""Checking and repairing a suppression pattern with the attacker's LPs.

Every method ends here: :func:`check` runs the attacker's LPs for every sensitive cell and
direction (and every singleton insider next to it), :func:`repair` withholds more cells
until every check passes, and :func:`tablesafe.suppress.cleanup.cleanup` drops complements
no longer needed (the "second pass" of seed 003 B.2.b). Withholding more cells only
widens the attacker's intervals, so repair re-checks just the cells that failed.
"""

from __future__ import annotations

import time
from dataclasses import replace

import numpy as np
import scipy.sparse as sp

from tablesafe.errors import AuditFailure
from tablesafe.problem import EMPTY, PROTECTED, Problem
from tablesafe.structure.insiders import InsiderModel
from tablesafe.structure.neighbours import neighbours
from tablesafe.suppress.attack_parts import attack_in_parts
from tablesafe.suppress.attacker import (
    DOWN,
    UP,
    Attack,
    BlockLP,
    Blocks,
    Bounds,
    Cut,
    Key,
    cut_from,
    row_cuts,
)
from tablesafe.suppress.cover import Revisable, Row
from tablesafe.suppress.neighbourhood_attacks import attack_neighbourhoods
from tablesafe.suppress.reached_tables import ReachedTables, answer_from_tables
from tablesafe.suppress.subtable_tables import take_known

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


_CSC_CACHE: dict[int, tuple[sp.csr_matrix, sp.csc_matrix]] = {}


def relations_by_cell(problem: Problem) -> sp.csc_matrix:
    """``problem.relations`` as CSC (the relations of each cell), built once per relations
    matrix and shared by the attack and cleanup stages."""
    key = id(problem.relations)
    hit = _CSC_CACHE.get(key)
    if hit is None or hit[0] is not problem.relations:
        hit = (problem.relations, problem.relations.tocsc())
        _CSC_CACHE.clear()
        _CSC_CACHE[key] = hit
    return hit[1]


Insiders = dict[int, np.ndarray]
"""Per target, the cells whose single respondent attacks it (see :func:`insiders_of`)."""


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


class OutOfTime(Exception):
    """A check or repair passed its deadline before it was done.

    ``withheld``: the pattern as far as the repair got (not proved safe), when known.
    """

    def __init__(self, withheld: np.ndarray | None = None) -> None:
        super().__init__("out of time")
        self.withheld = withheld

    def pattern_or(self, start: np.ndarray) -> np.ndarray:
        """The pattern as far as the repair got, or ``start`` when it is not known."""
        return start if self.withheld is None else self.withheld


def run_attacks(problem: Problem, bounds: Bounds, x: np.ndarray, keys: list[Key],
                want_dual: bool = True, stop_on_fail: bool = False, sparse: bool = False,
                local: bool = True, split_insiders: bool = True,
                deadline: float | None = None,
                also_fixed: dict[Key, tuple[int, ...]] | None = None,
                insiders: Insiders | None = None, blocks: Blocks | None = None,
                certify: bool = True, expect_pass: bool = False,
                known: dict[Key, Attack] | None = None) -> dict[Key, Attack]:
    """Solve the attacker's LPs for ``keys`` under the (possibly fractional) pattern ``x``.

    ``stop_on_fail``: return as soon as one attack succeeds (for removal trials).
    ``deadline``: a ``time.monotonic()`` value; past it :class:`OutOfTime` is raised.

    Insider attacks (a single respondent who knows its own withheld cell ``s``) are run
    only where needed: when the outsider's best table for the same target and direction
    reaches the level without moving ``s``, that table is feasible for the insider too,
    so the insider's attack fails just the same and no LP is solved for it. The insiders
    of one target and direction whose cells that table moves are first attacked together
    (one LP with all their cells known): a table found then answers each of them.
    ``also_fixed`` (internal) maps a key to further cells the attacker knows.

    ``insiders`` (:func:`insiders_of`) lists, per target, insiders whose keys are not
    spelt out: each is attacked only where the outsider's table for the target moves its
    cell, and only those attacks are returned (the others are answered by the outsider's).

    ``blocks``: the blocks of a pattern withholding at least the cells of ``x`` (a cell
    published since keeps bounds of zero in its block's LP, which is the same attack);
    computed from ``x`` when not given.

    An attack that a table found earlier in the same block answers
    (:mod:`tablesafe.suppress.reached_tables`) gets no attacker LP; with ``sparse`` and
    ``certify`` it still gets its own sparse certificate (one LP: tables kept for later
    rounds and the cleanup then move as few cells as before), without ``certify`` it
    carries the earlier table.

    ``expect_pass`` (with ``sparse``): most attacks are expected to pass (checks of a
    pattern that is safe or nearly so), so each attack's sparse certificate is sought
    first and the attacker's optimum only when there is none
    (:meth:`~tablesafe.suppress.attacker.BlockLP.attack`).

    ``known``: tables proved certificates under ``x`` (:mod:`~tablesafe.suppress.subtable_tables`);
    an attack with the same key takes its table with no LP.
    """
    insider_keys = [key for key in keys if key[2] >= 0]
    if (insider_keys or insiders) and split_insiders:
        wanted = set(keys)
        outer = list(dict.fromkeys([key for key in keys if key[2] < 0]
                                   + [(k, d, -1) for k, d, _ in insider_keys]))
        out = run_attacks(problem, bounds, x, outer, want_dual, stop_on_fail, sparse, local,
                          split_insiders=False, deadline=deadline, blocks=blocks, certify=certify,
                          expect_pass=expect_pass, known=known)
        if stop_on_fail and any(not a.ok for a in out.values()):
            return {key: a for key, a in out.items() if key in wanted}
        if insiders:
            # implicit insiders: only those whose cell the outsider's table moves need an
            # attack of their own (a failed outsider attack is repaired first)
            for (k, d, s0), att in list(out.items()):
                who = insiders.get(k)
                if s0 >= 0 or who is None or not att.ok or (k, d, -1) not in wanted:
                    continue
                hit = moved_insiders(who, att)
                for s in hit.tolist():
                    key = (k, d, int(s))
                    if key not in wanted:
                        wanted.add(key)
                        insider_keys.append(key)
        rest = []
        moved: dict[tuple[int, int], set[int]] = {}
        for key in insider_keys:
            k, d, ins = key
            o = out.get((k, d, -1))
            if o is not None and not o.ok and bounds.req_sl[k] <= 0:
                # the insider knows more than the outsider, so it reaches the level no
                # better: the attack fails as well, and the outsider's capacity
                # inequality is the one to satisfy first (the repair checks the insider
                # again once the outsider's attack passes)
                out[key] = o
                continue
            if o is not None and o.ok:
                mv = moved.get((k, d))
                if mv is None:
                    mv = moved[(k, d)] = set(o.cells[o.dev != 0].tolist())
                if ins not in mv:
                    # the outsider's table holds for the insider too; the same object is
                    # shared (its ``insider`` field matters only for cuts and sliding levels)
                    out[key] = o if bounds.req_sl[k] <= 0 else replace(o, insider=ins)
                    continue
            if not (known and take_known(known, key, None, out)):
                rest.append(key)
        if rest:
            rest = _grouped_insiders(problem, bounds, x, rest, out, sparse, local, deadline, blocks, certify,
                                     expect_pass, known)
        if rest:
            out.update(run_attacks(problem, bounds, x, rest, want_dual, stop_on_fail, sparse, local,
                                   split_insiders=False, deadline=deadline, blocks=blocks, certify=certify,
                                   expect_pass=expect_pass, known=known))
        return {key: a for key, a in out.items() if key in wanted}
    out = {}  # dict[Key, Attack], as declared by the return above
    if known:
        keys = [key for key in keys if not take_known(known, key, also_fixed, out)]
        if not keys:
            return out
    if blocks is None:
        blocks = Blocks(problem.relations, x)
    by_block: dict[int, list[Key]] = {}
    for key in keys:
        k = key[0]
        b = int(blocks.label[k])
        if b < 0:  # withheld but in no relation with another active cell
            req = bounds.req_up[k] if key[1] == UP else bounds.req_dn[k]
            own = bounds.tup[k] if key[1] == UP else bounds.tdn[k]
            att = Attack(k, key[1], key[2], float(own), float(req))
            att.dual_cells = np.array([k])
            att.dual_d = np.array([-float(key[1])])
            out[key] = att
            continue
        by_block.setdefault(b, []).append(key)
    sizes = np.bincount(blocks.label[blocks.label >= 0], minlength=max(blocks.count, 1))
    for b, bkeys in by_block.items():
        if sizes[b] > LOCAL_FIRST and local:
            # big block: try each target on its neighbourhood first (cells further away held
            # at their true values: a feasible point there is feasible for the block too)
            bkeys = attack_neighbourhoods(problem, bounds, x, bkeys, out, relations_by_cell(problem), OutOfTime,
                                          sparse, also_fixed, deadline, int(sizes[b]))
            if not bkeys:
                continue
        lp = BlockLP(problem, bounds, x, blocks.cells(b), blocks.rows(b))
        found = ReachedTables(lp.cells, lp.up, lp.dn) if REUSE_TABLES else None
        for key in bkeys:
            if deadline is not None and time.monotonic() > deadline:
                raise OutOfTime
            k, d, s = key
            req = bounds.req_up[k] if d == UP else bounds.req_dn[k]
            force = bounds.req_sl[k] > 0
            extra = also_fixed.get(key, ()) if also_fixed else ()
            reused = None if found is None or force else answer_from_tables(found, lp, key, req, extra,
                                                                                 sparse and certify)
            if reused is not None:
                att = reused
            else:
                att = lp.attack(k, d, req, s, want_dual=want_dual, force_dual=force, sparse=sparse,
                                also_fixed=extra, expect_pass=expect_pass)
                if found is not None:
                    found.add(att)
            out[key] = att
            if stop_on_fail and not att.ok:
                return out
    _sliding(bounds, out)
    return out


LOCAL_FIRST = 400  # blocks with more cells are attacked locally first
REUSE_TABLES = True
"""Answer an attack from a table found earlier in the same block where one reaches its
level (:mod:`tablesafe.suppress.reached_tables`)."""


def _grouped_insiders(problem: Problem, bounds: Bounds, x: np.ndarray, keys: list[Key],
                      out: dict[Key, Attack], sparse: bool, local: bool,
                      deadline: float | None, blocks: Blocks | None = None, certify: bool = True,
                      expect_pass: bool = False, known: dict[Key, Attack] | None = None) -> list[Key]:
    """Attack each target and direction once with all its listed insiders' cells known.

    Where that table reaches the level it is feasible for every one of those insiders
    (each knows less), so their attacks succeed with no LP of their own; the keys of the
    groups that fall short are returned, to be attacked one insider at a time.
    """
    groups: dict[tuple[int, int], list[Key]] = {}
    for key in keys:
        groups.setdefault((key[0], key[1]), []).append(key)
    lead: list[Key] = []
    fixed: dict[Key, tuple[int, ...]] = {}
    for (k, d), gkeys in groups.items():
        if len(gkeys) < 2 or bounds.req_sl[k] > 0:
            continue
        first = gkeys[0]
        lead.append(first)
        fixed[first] = tuple(s for _, _, s in gkeys[1:])
    if not lead:
        return keys
    res = run_attacks(problem, bounds, x, lead, want_dual=False, sparse=sparse, local=local,
                      split_insiders=False, deadline=deadline, also_fixed=fixed, blocks=blocks,
                      certify=certify, expect_pass=expect_pass, known=known)
    solved = set()
    for first in lead:
        a = res[first]
        if a.ok:
            for key in groups[(first[0], first[1])]:
                out[key] = a
                solved.add(key)
    return [key for key in keys if key not in solved]


def _sliding(bounds: Bounds, atts: dict[Key, Attack]) -> None:
    """Mark sliding-level failures: up + down reach must be at least the sliding level."""
    for key, up in list(atts.items()):
        k, d, s = key
        if d != UP or bounds.req_sl[k] <= 0:
            continue
        dn = atts.get((k, DOWN, s))
        if dn is None:
            continue
        width = up.reached + dn.reached
        if width < bounds.req_sl[k] - 1e-6 * max(1.0, bounds.req_sl[k]):
            up.sliding_short = bounds.req_sl[k] - width


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


def moved_insiders(who: np.ndarray, attack: Attack) -> np.ndarray:
    """The insiders' cells among ``who`` that the attack's table moves: the only ones
    whose own attack that table does not answer."""
    return who[np.isin(who, attack.cells[attack.dev != 0])]


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
    the pattern as far as it got.
    """
    w = withheld.copy() | problem.sensitive
    choice = Revisable(w, problem.cost)
    cand = candidates(problem, bounds)
    first = np.flatnonzero(problem.sensitive) if targets is None else np.asarray(targets, dtype=np.int64)
    rounds = 0
    ever = np.zeros(problem.n, dtype=bool)
    stubborn = Stubborn()
    try:
        atts = _attack_all(problem, bounds, w, first, deadline, known)
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
            atts = _attack_all(problem, bounds, w, again, deadline)
            # the new attacks on these targets replace the old ones (an insider attack that
            # failed before may now be answered by the outsider's table, with no key)
            redone = set(again.tolist())
            final = {key: a for key, a in final.items() if key[0] not in redone}
            final.update(atts)
    except OutOfTime:
        raise OutOfTime(w) from None
    # attacks of insiders that appeared later are included because the insiders are recomputed
    return w, final, rounds


JOINT_ROUNDS = 20
"""Rounds of :func:`repair` that may revise the complements of earlier rounds."""

STUBBORN_FAILS = 3
"""Rounds an attack may fail before its own protection LP picks its complements."""


class Stubborn:
    """Attacks that keep failing after their capacity inequalities were met: from the
    :data:`STUBBORN_FAILS`-th failure on, the published cells of the attack's protection LP
    (:func:`~tablesafe.suppress.protection_lp.protecting_cells`) are withheld for good
    (``fails``: from how many failures on)."""

    def __init__(self, fails: int | None = None) -> None:
        self.limit = STUBBORN_FAILS if fails is None else fails
        self.fails: dict[Key, int] = {}

    def protect(self, problem: Problem, bounds: Bounds, choice: Revisable, w: np.ndarray,
                bad: list[Key], cand: np.ndarray, deadline: float = float("inf")) -> np.ndarray:
        """``w`` with the protecting cells of the stubborn attacks among ``bad``; raises
        :class:`OutOfTime` past ``deadline``, checked before each whole-table LP, which
        gets the time left."""
        from tablesafe.suppress.protection_lp import protecting_cells

        for key in bad:
            self.fails[key] = self.fails.get(key, 0) + 1
        for key in sorted(k for k in bad if self.fails[k] >= self.limit):
            left = deadline - time.monotonic()
            if left <= 0:
                raise OutOfTime
            cells = protecting_cells(problem, bounds, w, *key, cand, time_limit=left if np.isfinite(left) else None)
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
                deadline: float | None = None, known: dict[Key, Attack] | None = None) -> dict[Key, Attack]:
    """The outsider's attacks on ``targets`` and every insider attack they leave open
    (many targets: in two parts of whole blocks side by side, :mod:`tablesafe.suppress.attack_parts`)."""
    return attack_in_parts(lambda part: attack_part(problem, bounds, w, part, deadline, known), problem, w,
                           np.asarray(targets, dtype=np.int64), OutOfTime)


def attack_part(problem: Problem, bounds: Bounds, w: np.ndarray, targets: np.ndarray,
                deadline: float | None, known: dict[Key, Attack] | None = None) -> dict[Key, Attack]:
    """:func:`_attack_all` of some targets in this process, in one pass."""
    ins = insiders_of(problem, bounds, w, targets)
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
                       deadline=deadline, insiders=insiders_of(problem, bounds, withheld, targets))
