"""Running the attacker's LPs of many attacks on one pattern: :func:`run_attacks`.

Attacks are grouped by the block of withheld cells their target lies in, and each block
gets one LP model (:class:`tablesafe.suppress.attacker.BlockLP`). Before an LP is
solved, an attack may be answered without one: by a table proved earlier
(``known``, :mod:`tablesafe.suppress.subtable_tables`), by a table found earlier in the
same block (:mod:`tablesafe.suppress.reached_tables`), by a neighbourhood of its target
in a large block (:mod:`tablesafe.suppress.neighbourhood_attacks`), or, for a single
respondent, by the outsider's table when that table keeps the respondent's cell fixed.
The repair loop that uses these attacks is :mod:`tablesafe.suppress.protection`.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import replace

import numpy as np

from tablesafe.problem import Problem
from tablesafe.structure.insiders import InsiderModel
from tablesafe.structure.neighbours import find_sorted
from tablesafe.suppress.attack_progress import count
from tablesafe.suppress.attacker import (
    DOWN,
    UP,
    Attack,
    BlockLP,
    Blocks,
    Bounds,
    Key,
    block_bounds,
    relations_by_cell,
)
from tablesafe.suppress.flow_attacks import FlowBlock, network_signs, whole_network
from tablesafe.suppress.neighbourhood_attacks import attack_neighbourhoods
from tablesafe.suppress.reached_tables import ReachedTables, answer_from_tables
from tablesafe.suppress.relaxed_attacks import attack_relaxations
from tablesafe.suppress.subtable_tables import take_known

Insiders = dict[int, np.ndarray]
"""Per target, the cells whose single respondent attacks it, ascending (see
:func:`insiders_of`)."""


class LazyInsiders:
    """The insiders of some targets, worked out only among the cells asked about.

    Args:
        model: the one insider model of the problem.
        single: the withheld cells with a single respondent.
        targets: the sensitive cells whose insiders may be asked for.

    Same answers as :data:`Insiders` from :func:`~tablesafe.suppress.protection.insiders_of`
    (the cells of ``single`` that ``model`` makes attackers of a target), without
    listing every target's insiders up front:
    :func:`run_attacks` only asks which cells an outsider's table moves. Listing them all
    took 2.3 s per round on a flat 4,961-cell table whose 2,162 targets each had about
    2,000 insiders (fiftieth session).
    """

    def __init__(self, model: InsiderModel, single: np.ndarray, targets: np.ndarray) -> None:
        self.model = model
        self.single = np.asarray(single, dtype=bool)
        self.targets = np.zeros(len(self.single), dtype=bool)
        self.targets[np.asarray(targets, dtype=np.int64)] = True

    def __bool__(self) -> bool:
        return bool(self.single.any() and self.targets.any())

    def among(self, k: int, cells: np.ndarray) -> np.ndarray:
        """The insiders of target ``k`` among ``cells``, ascending (empty for a cell
        that is not a target)."""
        if not self.targets[k]:
            return np.zeros(0, dtype=np.int64)
        cells = np.asarray(cells, dtype=np.int64)
        return np.unique(self.model.attackers(int(k), cells[self.single[cells]]))  # sorted


def insiders_moved(insiders: Insiders | LazyInsiders, k: int, attack: Attack) -> np.ndarray:
    """The insiders of target ``k`` whose cells ``attack``'s table moves, ascending."""
    if isinstance(insiders, LazyInsiders):
        return insiders.among(k, attack.cells[attack.dev != 0])
    who = insiders.get(k)
    return np.zeros(0, dtype=np.int64) if who is None else moved_insiders(who, attack)


class OutOfTime(Exception):
    """A check or repair passed its deadline before it was done.

    ``withheld``: the pattern as far as the repair got (not proved safe), when known.
    ``attacks``: attacks the repair ran on the way, by key (those that passed and whose
    tables still stand under ``withheld`` prove their targets:
    :mod:`tablesafe.suppress.settled`), when known. ``audited``: what the last audit
    that ended proved (:class:`tablesafe.suppress.settled.Audited`), when there was one.
    """

    def __init__(self, withheld: np.ndarray | None = None, attacks: dict | None = None,
                 audited: object | None = None) -> None:
        super().__init__("out of time")
        self.withheld = withheld
        self.attacks = attacks
        self.audited = audited

    def pattern_or(self, start: np.ndarray) -> np.ndarray:
        """The pattern as far as the repair got, or ``start`` when it is not known."""
        return start if self.withheld is None else self.withheld


def run_attacks(problem: Problem, bounds: Bounds, x: np.ndarray, keys: list[Key],
                want_dual: bool = True, stop_on_fail: bool = False, sparse: bool = False,
                local: bool = True, split_insiders: bool = True,
                deadline: float | None = None,
                also_fixed: dict[Key, tuple[int, ...]] | None = None,
                insiders: Insiders | LazyInsiders | None = None, blocks: Blocks | None = None,
                certify: bool = True, expect_pass: bool = False,
                known: dict[Key, Attack] | None = None,
                radius: dict[tuple[int, int], int] | None = None,
                boxes: Callable[..., dict[Key, Attack]] | None = None,
                relax_first: bool = False) -> dict[Key, Attack]:
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

    ``insiders`` (:func:`insiders_of`, or :class:`LazyInsiders`) lists, per target,
    insiders whose keys are not spelt out: each is attacked only where the outsider's
    table for the target moves its cell, and only those attacks are returned (the others
    are answered by the outsider's).

    ``blocks``: the blocks of a pattern withholding at least the cells of ``x`` (a cell
    published since keeps bounds of zero in its block's LP, which is the same attack);
    computed from ``x`` when not given.

    An attack that a table found earlier in the same block answers
    (:mod:`tablesafe.suppress.reached_tables`) gets no attacker LP; with ``sparse`` and
    ``certify`` it still gets its own sparse certificate (one LP: tables kept for later
    rounds and the cleanup then move as few cells as before), without ``certify`` it
    carries the earlier table.

    ``expect_pass`` (with ``sparse``): most attacks are expected to pass (a pattern safe
    or nearly so): each sparse certificate is sought first, the attacker's optimum only
    when there is none (:meth:`~tablesafe.suppress.attacker.BlockLP.attack`). ``known``:
    tables proved certificates under ``x`` (:mod:`~tablesafe.suppress.subtable_tables`);
    an attack with the same key takes its table with no LP.

    ``boxes``: a source of certificates tried before any LP, called with ``x``, the keys,
    ``also_fixed`` and ``deadline`` (a subtable's :class:`~tablesafe.suppress.subtable_boxes.BoxTables`);
    the attacks it answers pass with its tables.

    ``radius`` (internal): where the outsider's attacks passed on a neighbourhood, so that
    the insiders' attacks start there (:func:`~tablesafe.suppress.neighbourhood_attacks.attack_neighbourhoods`).

    ``relax_first``: the attacks are expected to fail (the audit named them, or they
    failed before): on a large block each is first attacked on relaxations around its
    target (:mod:`tablesafe.suppress.relaxed_attacks`), whose failure and duals stand
    for the block's; only the attacks none decides go on to the neighbourhoods and the
    block's LP.
    """
    if deadline is not None and time.monotonic() > deadline:
        raise OutOfTime
    done: dict[Key, Attack] = {}  # the attacks settled so far (OutOfTime carries them)
    try:
        return _run_attacks(problem, bounds, x, keys, want_dual, stop_on_fail, sparse, local, split_insiders,
                            deadline, also_fixed, insiders, blocks, certify, expect_pass, known, radius, boxes, done,
                            relax_first)
    except OutOfTime as out:
        raise OutOfTime(attacks={**done, **(out.attacks or {})}) from None


def _run_attacks(problem: Problem, bounds: Bounds, x: np.ndarray, keys: list[Key], want_dual: bool,
                 stop_on_fail: bool, sparse: bool, local: bool, split_insiders: bool, deadline: float | None,
                 also_fixed: dict[Key, tuple[int, ...]] | None, insiders: Insiders | LazyInsiders | None,
                 blocks: Blocks | None, certify: bool, expect_pass: bool, known: dict[Key, Attack] | None,
                 radius: dict[tuple[int, int], int] | None, boxes: Callable[..., dict[Key, Attack]] | None,
                 done: dict[Key, Attack], relax_first: bool = False) -> dict[Key, Attack]:
    """:func:`run_attacks`, every attack it settles also put into ``done`` as it goes
    (what an :class:`OutOfTime` part of the way hands on)."""
    insider_keys = [key for key in keys if key[2] >= 0]
    if (insider_keys or insiders) and split_insiders:
        wanted, radius = set(keys), {}
        outer = list(dict.fromkeys([key for key in keys if key[2] < 0]
                                   + [(k, d, -1) for k, d, _ in insider_keys]))
        out = run_attacks(problem, bounds, x, outer, want_dual, stop_on_fail, sparse, local,
                          split_insiders=False, deadline=deadline, blocks=blocks, certify=certify,
                          expect_pass=expect_pass, known=known, radius=radius, boxes=boxes)
        if stop_on_fail and any(not a.ok for a in out.values()):
            return {key: a for key, a in out.items() if key in wanted}
        done.update(out)
        if insiders:
            # implicit insiders: only those whose cell the outsider's table moves need an
            # attack of their own (a failed outsider attack is repaired first)
            for (k, d, s0), att in list(out.items()):
                if s0 >= 0 or not att.ok or (k, d, -1) not in wanted:
                    continue
                hit = insiders_moved(insiders, k, att)
                for s in hit.tolist():
                    key = (k, d, int(s))
                    if key not in wanted:
                        wanted.add(key)
                        insider_keys.append(key)
        rest = _unanswered_insiders(bounds, insider_keys, out, known)
        if rest:
            rest = _grouped_insiders(problem, bounds, x, rest, out, sparse, local, deadline, blocks, certify,
                                     expect_pass, known, radius, boxes)
            done.update(out)
        if rest:
            out.update(run_attacks(problem, bounds, x, rest, want_dual, stop_on_fail, sparse, local,
                                   split_insiders=False, deadline=deadline, blocks=blocks, certify=certify,
                                   expect_pass=expect_pass, known=known, radius=radius, boxes=boxes))
        return {key: a for key, a in out.items() if key in wanted}
    out = done  # dict[Key, Attack], as declared by the return above (filled as it goes)
    if known:
        keys = [key for key in keys if not take_known(known, key, also_fixed, out)]
        count(out)
        if not keys:
            return out
    if boxes is not None:
        got = boxes(x, keys, also_fixed, deadline)
        if got:
            out.update(got)
            count(got)
            keys = [key for key in keys if key not in got]
            if not keys:
                _sliding(bounds, out)
                return out
    signs = network_signs(problem)
    if signs is not None:
        # flows need no split into blocks: one graph of every withheld cell (a flow
        # stays within its component)
        blocks = whole_network(problem, x)
    elif blocks is None:
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
            count((key,))
            continue
        by_block.setdefault(b, []).append(key)
    sizes = np.bincount(blocks.label[blocks.label >= 0], minlength=max(blocks.count, 1))
    for b, bkeys in by_block.items():
        bcells = blocks.cells(b)
        found: ReachedTables | None = None
        if REUSE_TABLES and signs is None:
            found = ReachedTables(bcells, *block_bounds(bounds, x, bcells)[:2])
        if sizes[b] > LOCAL_FIRST and local and signs is None:
            by_cell = relations_by_cell(problem)
            if relax_first:
                # attacks expected to fail: relaxations around the target first (a miss
                # there is a miss on the block, with the duals of a valid inequality)
                left = attack_relaxations(problem, bounds, x, bkeys, out, by_cell, OutOfTime, also_fixed,
                                          deadline, int(sizes[b]))
                count(key for key in bkeys if key in out)
                bkeys = left
                if not bkeys:
                    continue
            # big block: try each target on its neighbourhood first (cells further away held
            # at their true values: a feasible point there is feasible for the block too)
            left = attack_neighbourhoods(problem, bounds, x, bkeys, out, by_cell, OutOfTime,
                                         sparse, also_fixed, deadline, int(sizes[b]), radius, found)
            count(key for key in bkeys if key in out)  # those it settled (read only while reporting)
            bkeys = left
            if not bkeys:
                continue
        lp: BlockLP | FlowBlock
        if signs is not None:  # a network: the attacks are flows (:mod:`~tablesafe.suppress.flow_attacks`)
            lp = FlowBlock(problem, bounds, x, bcells, blocks.rows(b), signs)
        else:
            lp = BlockLP(problem, bounds, x, bcells, blocks.rows(b))
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
            count((key,))
            if stop_on_fail and not att.ok:
                return out
    _sliding(bounds, out)
    return out


LOCAL_FIRST = 400  # blocks with more cells are attacked locally first
REUSE_TABLES = True
"""Answer an attack from a table found earlier in the same block where one reaches its
level (:mod:`tablesafe.suppress.reached_tables`)."""


def _unanswered_insiders(bounds: Bounds, insider_keys: list[Key], out: dict[Key, Attack],
                         known: dict[Key, Attack] | None) -> list[Key]:
    """The insider attacks the outsider's attacks in ``out`` (or ``known`` tables) do not
    answer; the answered ones go into ``out``."""
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
    return rest


def _grouped_insiders(problem: Problem, bounds: Bounds, x: np.ndarray, keys: list[Key],
                      out: dict[Key, Attack], sparse: bool, local: bool,
                      deadline: float | None, blocks: Blocks | None = None, certify: bool = True,
                      expect_pass: bool = False, known: dict[Key, Attack] | None = None,
                      radius: dict[tuple[int, int], int] | None = None,
                      boxes: Callable[..., dict[Key, Attack]] | None = None) -> list[Key]:
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
                      certify=certify, expect_pass=expect_pass, known=known, radius=radius, boxes=boxes)
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


def moved_insiders(who: np.ndarray, attack: Attack) -> np.ndarray:
    """The insiders' cells among ``who`` (sorted, as :class:`Insiders` holds them) that
    the attack's table moves: the only ones whose own attack that table does not answer."""
    moved = attack.cells[attack.dev != 0]
    return np.sort(moved[find_sorted(who, moved)[1]])

