"""Cleanup of a protected pattern: complements no longer needed are published again,
most expensive first (seed 003 B.2.b), each removal kept only when every attack still
passes (:func:`cleanup`).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import replace

import numpy as np
import scipy.sparse as sp

from tablesafe import live_counts
from tablesafe.audit.lp import LPOutOfTime, credit_work, lp_work, stop_at
from tablesafe.parallel import map_forked, worker_count
from tablesafe.problem import Problem
from tablesafe.structure.neighbours import find_sorted
from tablesafe.suppress.attack_parts import two_parts
from tablesafe.suppress.attack_runs import (
    Insiders,
    moved_insiders,
    relations_by_cell,
    run_attacks,
)
from tablesafe.suppress.attacker import UP, Attack, BlockLP, Blocks, Bounds, _tol, relation_cut
from tablesafe.suppress.protection import Key, insiders_of


def _relation_short(rel: sp.csr_matrix, by_cell: sp.csc_matrix, bounds: Bounds, w: np.ndarray,
                    cell: int, insiders: Insiders) -> bool:
    """Whether publishing ``cell`` leaves a relation that by itself keeps a withheld
    sensitive cell within less than its level, for the outsider or for one of its
    single respondents: the attack then fails and the removal would be turned down by
    LP anyway (no LP needed).

    A relation lets the target ``k`` move by at most what its other withheld cells can
    make up within their bounds: the coefficients of its capacity inequality
    (:func:`~tablesafe.suppress.attacker.relation_cut`). A single respondent knows its
    own cell, which then makes up nothing. A relation left with ``k`` alone gives its
    value exactly.
    """
    nothing_fixed = np.zeros(len(w), dtype=bool)
    for r in by_cell.indices[by_cell.indptr[cell]:by_cell.indptr[cell + 1]].tolist():
        lo, hi = rel.indptr[r], rel.indptr[r + 1]
        cells = rel.indices[lo:hi]
        on = w[cells] & (cells != cell)
        cs, vs = cells[on], rel.data[lo:hi][on]
        for k in cs.tolist():
            reqs = (bounds.req_up[k], bounds.req_dn[k], bounds.req_sl[k])
            if max(reqs) <= 0:
                continue
            # per direction, what each other withheld cell can make up (uncapped)
            room = [relation_cut(bounds, k, direction, 0.0, cs, vs, nothing_fixed, cap=False)
                    for direction in (UP, -UP)]
            for req, cut in zip(reqs[:2], room):
                if req > 0 and float(cut.coef.sum()) < req - _tol(req):
                    return True
            if reqs[2] > 0 and float(room[0].coef.sum() + room[1].coef.sum()) < reqs[2] - _tol(reqs[2]):
                return True
            who = insiders.get(k)
            if who is None:
                continue
            for req, cut in zip(reqs[:2], room):
                known = np.flatnonzero(find_sorted(who, cut.idx)[1])
                if req <= 0 or not len(known):
                    continue
                # the single respondent whose cell makes up the most knows it: the sum of
                # the others (not a difference, which loses small terms next to infinity)
                s = known[np.argmax(cut.coef[known])]
                if float(np.delete(cut.coef, s).sum()) < req - _tol(req):
                    return True
    return False


class _Screens:
    """One attacker model per block of the cleanup's starting pattern, kept up to date
    with the cells the cleanup has published, on which a removal is tried with
    warm-started LPs: every attack whose table uses the complement, and every insider
    whose cell an attack's new table moves, solved with the complement published.

    These are the attacks of the full trial (:func:`run_attacks` on the pattern without
    the complement: the others keep their tables), so the screen's verdict stands for
    it; only attacks it cannot decide here (sliding levels, targets in another block)
    leave the removal to the full trial."""

    def __init__(self, problem: Problem, bounds: Bounds, blocks: Blocks, insiders: Insiders) -> None:
        self.problem = problem
        self.bounds = bounds
        self.blocks = blocks
        self.insiders = insiders
        self.models: dict[int, BlockLP] = {}

    def publish(self, cell: int) -> None:
        """``cell`` is published from now on (in the model of its block, if built)."""
        lp = self.models.get(int(self.blocks.label[cell]))
        if lp is not None:
            lp.publish(cell)

    def _model(self, b: int, withheld: np.ndarray) -> BlockLP:
        lp = self.models.get(b)
        if lp is None:
            lp = self.models[b] = BlockLP(self.problem, self.bounds, withheld.astype(float),
                                          self.blocks.cells(b), self.blocks.rows(b))
        return lp

    def screen(self, cell: int, keys: list[Key], withheld: np.ndarray) -> tuple[Key | None, dict[Key, Attack] | None]:
        """The attacks ``keys`` and the insider attacks their new tables leave open, once
        ``cell`` is published: (the first that fails, None), or (None, the new attacks)
        when all pass, or (None, None) when one of them cannot be decided here.

        The keys go by target and direction, in the order of each pair's first key; a
        pair's single respondents are first attacked together (:meth:`_together`)."""
        b = int(self.blocks.label[cell])
        if b < 0:
            return None, None
        new: dict[Key, Attack] = {}
        undecided = False
        pairs: dict[tuple[int, int], list[Key]] = {}
        for key in keys:
            if key[2] != cell:  # a table keeping the cell at its true value stands
                pairs.setdefault((key[0], key[1]), []).append(key)
        for (k, d), pkeys in pairs.items():
            if self.bounds.req_sl[k] > 0 or int(self.blocks.label[k]) != b:
                undecided = True
                continue
            lp = self._model(b, withheld)
            req = self.bounds.req_up[k] if d == UP else self.bounds.req_dn[k]
            self._together(lp, cell, k, d, req, [s for _, _, s in pkeys if s >= 0], new)
            for _, _, s in pkeys:
                failed = self._one(lp, cell, k, d, req, s, new)
                if failed is not None:
                    return failed, None
        return None, (None if undecided else new)

    def _together(self, lp: BlockLP, cell: int, k: int, d: int, req: float, who: list[int],
                  new: dict[Key, Attack]) -> None:
        """One attack with the cells of all ``who`` known (at least
        :data:`TOGETHER_FROM` of them): where its table reaches the level it is feasible
        for each of them (each knows less) and answers their attacks in ``new``."""
        who = [s for s in who if (k, d, s) not in new]
        if len(who) < TOGETHER_FROM:
            return
        att = lp.attack_without(cell, k, d, req, who[0], also_fixed=tuple(who[1:]))
        if att.ok:
            for s in who:
                new[(k, d, s)] = att

    def _one(self, lp: BlockLP, cell: int, k: int, d: int, req: float, s: int,
             new: dict[Key, Attack]) -> Key | None:
        """Attack ``(k, d, s)`` unless answered (into ``new``), then, for an outsider,
        the single respondents whose cells its new table moves; the first key that
        fails, or None."""
        if not _passes(lp, cell, (k, d, s), req, new):
            return (k, d, s)
        att = new[(k, d, s)]
        who = self.insiders.get(k)
        if s >= 0 or who is None or not np.isfinite(att.reached):
            return None
        moved = moved_insiders(who, att)
        hit = [int(s2) for s2 in moved[moved != cell].tolist()]
        self._together(lp, cell, k, d, req, hit, new)
        for s2 in hit:
            if not _passes(lp, cell, (k, d, s2), req, new):
                return (k, d, s2)
        return None


def _passes(lp: BlockLP, cell: int, key: Key, req: float, new: dict[Key, Attack]) -> bool:
    """Whether attack ``key`` reaches ``req`` with ``cell`` published: answered in ``new``
    already, or attacked on ``lp`` (a passing attack goes into ``new``)."""
    if key in new:
        return True
    att = lp.attack_without(cell, key[0], key[1], req, key[2])
    if att.ok:
        new[key] = att
    return att.ok


TOGETHER_FROM = 2
"""Fewest single respondents of one target and direction that a cleanup screen first
attacks together."""


def cleanup(problem: Problem, bounds: Bounds, withheld: np.ndarray, atts: dict[Key, Attack], *,
            deadline: float = float("inf"), work: int | None = None,
            report: dict | None = None, progress: Callable[[str], None] | None = None,
            ) -> tuple[np.ndarray, dict[Key, Attack], int]:
    """Drop complements that are no longer needed, most expensive first (seed 003 B.2.b).

    Returns the pattern, its attacks and how many complements were dropped. No
    complement is tried once ``work`` units of LP work
    (:func:`~tablesafe.audit.lp.lp_work`) are spent, or past ``deadline`` (a
    ``time.monotonic()`` value). The work bound stops at the same complement in every
    run; the clock is only the outer guard. ``report`` (a dict), when given, gets
    ``work`` (units spent) and ``stopped`` (``"work"``, ``"clock"``, or ``""`` when
    every complement was tried). Both are also checked before every LP of a
    complement's trial (:func:`~tablesafe.audit.lp.stop_at`), whose complement then
    stays withheld: on Castro's HIER13 one trial's screens, at 43 ms an LP, ran 3.2 s past
    the deadline. ``progress`` (a function given a line) hears every
    :data:`~tablesafe.live_counts.REPORT_EVERY` seconds how many complements
    were tried and dropped and how much of ``work`` is spent.

    A complement that no certificate uses can go at once (every certificate stays a
    feasible table); otherwise the attacks whose certificates use it are solved again
    without it and the removal is kept only if all still reach their levels. A removal
    is turned down without an LP when one relation alone keeps a sensitive cell short
    (:func:`_relation_short`); otherwise the attacks are tried on the screens' block
    models, those that turned down earlier removals first, then those of targets that
    share a relation with the complement, then insiders before outsiders, then the
    attacks whose tables lean hardest on it.

    The blocks of the pattern are independent: publishing a cell changes only the
    attacks on its own block, once every table is cut down to its target's block
    (:func:`within_blocks`, still a certificate). So the complements are tried in two
    parts of whole blocks (:func:`cleanup_parts`), side by side in forked workers when
    there are two CPUs, one after the other otherwise, each part from the same starting
    pattern with its share of ``work``: the pattern does not depend on the number of
    workers, and within a part every complement is tried as in one pass.
    """
    w0 = withheld.copy()
    blocks = Blocks(problem.relations, w0.astype(float))
    atts = within_blocks(atts, blocks.label)
    sec = np.flatnonzero(w0 & ~problem.sensitive)
    order = sec[np.lexsort((sec, -problem.cost[sec]))]
    parts, shares = cleanup_parts(blocks, order)
    global _CLEANUP_STATE
    _CLEANUP_STATE = (problem, bounds, w0, atts, blocks, parts, shares, deadline, work)
    before = lp_work()
    try:
        with live_counts.reporting(progress, ("tried", "removed", "work"), _progress_line(len(order), work)):
            outs = map_forked(_clean_part, range(len(parts)), worker_count())
    finally:
        _CLEANUP_STATE = None
    w = w0.copy()
    out_atts = dict(atts)
    removed = 0
    spent = 0
    stopped = ""
    for dropped, part_atts, part_work, part_stopped in outs:
        w[dropped] = False
        out_atts.update(part_atts)
        removed += len(dropped)
        spent += part_work
        stopped = stopped or part_stopped
    credit_work(spent, before)  # the same work clock whether the parts ran here or in workers
    if report is not None:
        report["work"] = spent
        report["stopped"] = stopped
    return w, out_atts, removed


CLEANUP_PARTS_FROM = 150
"""Fewest complements for which :func:`cleanup_parts` cuts the cleanup into two parts
of whole blocks."""

CLEANUP_MOST_IN_ONE_PART = 0.7
"""Share of the cleanup's estimated work above which two parts of whole blocks count as
unbalanced (the cleanup then runs in one part)."""

_CLEANUP_STATE: tuple | None = None  # what the forked workers read (set while they run)


def within_blocks(atts: dict[Key, Attack], label: np.ndarray) -> dict[Key, Attack]:
    """Each attack's table cut down to the cells of its target's block (``label``: the
    blocks of the pattern). Every relation's withheld cells lie in one block, so the
    part of a feasible table on one block meets every relation as well, within the same
    bounds, with the same move of the target: still a certificate. A table shared by
    several keys stays shared."""
    out: dict[Key, Attack] = {}
    cut: dict[int, Attack] = {}
    for key, a in atts.items():
        c = cut.get(id(a))
        if c is None:
            cells = np.asarray(a.cells, dtype=np.int64)
            mine = label[cells] == label[a.target] if len(cells) else np.zeros(0, dtype=bool)
            c = a if mine.all() else replace(a, cells=cells[mine], dev=np.asarray(a.dev)[mine])
            cut[id(a)] = c
        out[key] = c
    return out


def cleanup_parts(blocks: Blocks, order: np.ndarray) -> tuple[list[np.ndarray], list[float]]:
    """The complements ``order`` (in the order they are tried) in two parts of whole
    blocks, each in that order, with each part's share of the estimated work; one part
    when there are fewer than :data:`CLEANUP_PARTS_FROM` complements or no balanced cut.
    A block's estimated work is its complements times its cells (each trial solves LPs on
    the block); blocks go largest first to the part with less."""
    if len(order) < CLEANUP_PARTS_FROM:
        return [order], [1.0]
    label = blocks.label[order]
    ids, counts = np.unique(label, return_counts=True)
    sizes = np.bincount(blocks.label[blocks.label >= 0], minlength=int(ids.max()) + 1)[ids]
    part_of, load = two_parts(ids, counts.astype(float) * sizes)
    total = sum(load)
    if min(load) <= 0 or max(load) > CLEANUP_MOST_IN_ONE_PART * total:
        return [order], [1.0]
    which = np.array([part_of[int(b)] for b in label.tolist()])
    return [order[which == 0], order[which == 1]], [load[0] / total, load[1] / total]


def _progress_line(total: int, work: int | None) -> live_counts.Line:
    def line(c, seconds: float) -> str:
        spent = "" if not work else f", {100 * c['work'] / work:.0f} % of its work bound spent"
        return f"cleanup: {c['tried']:,} of {total:,} complements tried, {c['removed']:,} published again{spent}"
    return line


def _clean_part(j: int) -> tuple[np.ndarray, dict[Key, Attack], int, str]:
    """Part ``j`` of :data:`_CLEANUP_STATE`'s cleanup, from the starting pattern: (the
    complements it published, the attacks of its targets, its LP work, why it stopped)."""
    assert _CLEANUP_STATE is not None
    problem, bounds, w0, atts, blocks, parts, shares, deadline, work = _CLEANUP_STATE
    order = parts[j]
    mine = np.zeros(blocks.count, dtype=bool)
    mine[np.unique(blocks.label[order])] = True
    part_atts = {key: a for key, a in atts.items() if mine[blocks.label[key[0]]]}
    bound = None if work is None else max(1, int(work * shares[j])) if len(parts) > 1 else work
    w, part_atts, spent, stopped = _clean(problem, bounds, w0.copy(), part_atts, blocks, order, mine,
                                          deadline, bound)
    return order[~w[order]], part_atts, spent, stopped


def _clean(problem: Problem, bounds: Bounds, w: np.ndarray, atts: dict[Key, Attack], blocks: Blocks,
           order: np.ndarray, mine: np.ndarray, deadline: float, work: int | None,
           ) -> tuple[np.ndarray, dict[Key, Attack], int, str]:
    """The cleanup's trials of the complements ``order`` (whose blocks ``mine`` marks; the
    attacks ``atts`` are those of their targets) on ``w``: (pattern, attacks, LP work,
    why it stopped)."""
    # insiders whose attacks the outsider's tables answer have no key: when an outsider's
    # attack is solved again, those its new table leaves open are attacked too
    targets = np.flatnonzero(problem.sensitive)
    ins = insiders_of(problem, bounds, w, targets[mine[blocks.label[targets]]])
    uses: dict[int, set[Key]] = {}
    for key, a in atts.items():
        for c in a.cells:
            uses.setdefault(int(c), set()).add(key)
    screens = _Screens(problem, bounds, blocks, ins)
    rel = problem.relations
    by_cell = relations_by_cell(problem)
    turned_down: dict[Key, int] = {}  # attacks that failed a removal, and how often
    work0 = lp_work()
    counted = work0
    stopped = ""
    for r in order.tolist():
        live_counts.add("tried")
        now = lp_work()
        live_counts.add("work", now - counted)
        counted = now
        if work is not None and now - work0 >= work:
            stopped = "work"
            break
        if time.monotonic() > deadline:
            stopped = "clock"
            break
        users = uses.get(r, set())
        if not users:
            w[r] = False
            screens.publish(r)
            live_counts.add("removed")
            continue
        if _relation_short(rel, by_cell, bounds, w, r, ins):
            continue  # a relation alone keeps an attack short without r: r stays
        ordered = _screen_order(problem, atts, users, r, by_cell, turned_down)
        try:
            with stop_at(deadline, None if work is None else work0 + work):
                failed, new = screens.screen(r, ordered, w)
                if failed is not None:
                    turned_down[failed] = turned_down.get(failed, 0) + 1
                    continue
                w[r] = False
                if new is None:
                    # the full trial: attacks the screens could not decide
                    new = run_attacks(problem, bounds, w.astype(float), ordered, want_dual=False,
                                      stop_on_fail=True, sparse=True, insiders=ins, blocks=blocks, expect_pass=True)
                    if not all(a.ok and getattr(a, "sliding_short", 0) <= 0 for a in new.values()):
                        w[r] = True
                        continue
        except LPOutOfTime as halt:
            w[r] = True
            stopped = halt.why
            break
        live_counts.add("removed")
        screens.publish(r)
        for key, a in within_blocks(new, blocks.label).items():
            old = atts.get(key)
            for c in (old.cells if old is not None else ()):
                s = uses.get(int(c))
                if s is not None:
                    s.discard(key)
            atts[key] = a
            for c in a.cells:
                uses.setdefault(int(c), set()).add(key)
    live_counts.add("work", lp_work() - counted)
    return w, atts, lp_work() - work0, stopped


def _screen_order(problem: Problem, atts: dict[Key, Attack], users: set[Key], r: int,
                  by_cell: sp.csc_matrix, turned_down: dict[Key, int]) -> list[Key]:
    """The attacks using ``r`` in the order the screens try them (likeliest to fail
    first): those that turned down more removals, those of targets sharing a relation
    with ``r``, insiders, those whose tables lean hardest on ``r``; ties by key."""
    rows = by_cell.indices[by_cell.indptr[r]:by_cell.indptr[r + 1]]
    rel = problem.relations
    near = set(rel.indices[np.concatenate([np.arange(rel.indptr[i], rel.indptr[i + 1]) for i in rows])].tolist()
               if len(rows) else [])
    by_obj: dict[int, float] = {}
    lean = {}
    for key in users:
        a = atts[key]
        v = by_obj.get(id(a))
        if v is None:
            v = by_obj[id(a)] = abs(float(a.dev[a.cells == r].sum())) / max(a.required, 1e-12)
        lean[key] = v
    return sorted(users, key=lambda key: (-turned_down.get(key, 0), key[0] not in near, key[2] < 0,
                                          -lean[key], key))
