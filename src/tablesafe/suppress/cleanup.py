"""Cleanup of a protected pattern: complements no longer needed are published again,
most expensive first (seed 003 B.2.b), each removal kept only when every attack still
passes (:func:`cleanup`).
"""

from __future__ import annotations

import time

import numpy as np
import scipy.sparse as sp

from tablesafe.problem import Problem
from tablesafe.suppress.attacker import UP, Attack, BlockLP, Blocks, Bounds
from tablesafe.suppress.protection import (
    Insiders,
    Key,
    insiders_of,
    moved_insiders,
    relations_by_cell,
    run_attacks,
)


def _exposes_target(rel: sp.csr_matrix, by_cell: sp.csc_matrix, bounds: Bounds, w: np.ndarray,
                    cell: int) -> bool:
    """Whether publishing ``cell`` leaves a relation with one withheld cell, a sensitive
    one with a protection level: the relation then gives that cell's value exactly, so
    its attack fails and the removal would be turned down by LP anyway."""
    for r in by_cell.indices[by_cell.indptr[cell]:by_cell.indptr[cell + 1]].tolist():
        cells = rel.indices[rel.indptr[r]:rel.indptr[r + 1]]
        other = cells[w[cells] & (cells != cell)]
        if other.size == 1:
            k = int(other[0])
            if bounds.req_up[k] > 0 or bounds.req_dn[k] > 0 or bounds.req_sl[k] > 0:
                return True
    return False


class _Screens:
    """One attacker model per block of the cleanup's starting pattern, kept up to date
    with the cells the cleanup has published, to reject a removal with warm-started
    LPs on that model: when an attack that uses a complement fails without it, or an
    insider whose cell the attack's new table moves fails, the complement stays (the
    full trial, with its neighbourhood LPs and grouped insiders, would find the same
    failure). Only removals that pass every such LP go on to the full trial."""

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

    def fails_without(self, cell: int, keys: list[Key], withheld: np.ndarray) -> bool:
        """Whether one of the attacks ``keys`` (or an insider attack its new table leaves
        open) reaches less than its level once ``cell`` is published; attacks it cannot
        decide here (sliding levels, targets in another block) are left to the trial."""
        b = int(self.blocks.label[cell])
        if b < 0:
            return False
        lp = None
        for k, d, s in sorted(keys, key=lambda key: key[2] < 0):  # insiders' own attacks first
            if self.bounds.req_sl[k] > 0 or s == cell or int(self.blocks.label[k]) != b:
                continue
            if lp is None:
                lp = self.models.get(b)
                if lp is None:
                    lp = self.models[b] = BlockLP(self.problem, self.bounds, withheld.astype(float),
                                                  self.blocks.cells(b), self.blocks.rows(b))
            req = self.bounds.req_up[k] if d == UP else self.bounds.req_dn[k]
            att = lp.attack_without(cell, k, d, req, s)
            if not att.ok:
                return True
            who = self.insiders.get(k)
            if s >= 0 or who is None or not np.isfinite(att.reached):
                continue
            hit = moved_insiders(who, att)
            for s2 in hit[hit != cell].tolist():
                if not lp.attack_without(cell, k, d, req, int(s2)).ok:
                    return True
        return False


def cleanup(problem: Problem, bounds: Bounds, withheld: np.ndarray, atts: dict[Key, Attack], *,
            deadline: float = float("inf")) -> tuple[np.ndarray, dict[Key, Attack], int]:
    """Drop complements that are no longer needed, most expensive first (seed 003 B.2.b).

    A complement that no certificate uses can go at once (every certificate stays a
    feasible table); otherwise the attacks whose certificates use it are solved again
    without it and the removal is kept only if all still reach their levels.
    """
    w = withheld.copy()
    atts = dict(atts)
    # insiders whose attacks the outsider's tables answer have no key: when an outsider's
    # attack is solved again, those its new table leaves open are attacked too
    ins = insiders_of(problem, bounds, w, np.flatnonzero(problem.sensitive))
    # the blocks of the starting pattern serve every trial (a trial only publishes cells)
    blocks = Blocks(problem.relations, w.astype(float))
    sec = np.flatnonzero(w & ~problem.sensitive)
    order = sec[np.lexsort((sec, -problem.cost[sec]))]
    uses: dict[int, set[Key]] = {}
    for key, a in atts.items():
        for c in a.cells:
            uses.setdefault(int(c), set()).add(key)
    removed = 0
    screens = _Screens(problem, bounds, blocks, ins)
    by_cell = relations_by_cell(problem)
    for r in order:
        r = int(r)
        if time.monotonic() > deadline:
            break
        users = uses.get(r, set())
        if not users:
            w[r] = False
            screens.publish(r)
            removed += 1
            continue
        # the attacks leaning hardest on r first: they are the likeliest to fail
        by_obj: dict[int, float] = {}
        lean = {}
        for key in users:
            a = atts[key]
            v = by_obj.get(id(a))
            if v is None:
                v = by_obj[id(a)] = abs(float(a.dev[a.cells == r].sum())) / max(a.required, 1e-12)
            lean[key] = v
        ordered = sorted(users, key=lambda key: (-lean[key], key))
        if _exposes_target(problem.relations, by_cell, bounds, w, r) or screens.fails_without(r, ordered, w):
            continue  # an attack fails without r: r stays
        w[r] = False
        new = run_attacks(problem, bounds, w.astype(float), ordered, want_dual=False, stop_on_fail=True,
                          sparse=True, insiders=ins, blocks=blocks, expect_pass=True)
        if all(a.ok and getattr(a, "sliding_short", 0) <= 0 for a in new.values()):
            removed += 1
            screens.publish(r)
            for key, a in new.items():
                old = atts.get(key)
                for c in (old.cells if old is not None else ()):
                    s = uses.get(int(c))
                    if s is not None:
                        s.discard(key)
                atts[key] = a
                for c in a.cells:
                    uses.setdefault(int(c), set()).add(key)
        else:
            w[r] = True
    return w, atts, removed
