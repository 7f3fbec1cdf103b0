"""Checking, repairing and cleaning a suppression pattern with the attacker's LPs.

Every method ends here: :func:`check` runs the attacker's LPs for every sensitive cell and
direction (and every singleton insider next to it), :func:`repair` withholds more cells
until every check passes, :func:`cleanup` drops complements no longer needed (the "second
pass" of seed 003 B.2.b), trying the most expensive first. Withholding more cells only
widens the attacker's intervals, so repair re-checks just the cells that failed.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace

import numpy as np
import pandas as pd
import scipy.sparse as sp

from tablesafe.errors import AuditFailure
from tablesafe.problem import EMPTY, PROTECTED, Problem
from tablesafe.structure.insiders import InsiderModel
from tablesafe.suppress.attacker import (
    DOWN,
    UP,
    Attack,
    BlockLP,
    Blocks,
    Bounds,
    Cut,
    cut_from,
    row_cuts,
)

Key = tuple[int, int, int]  # target, direction, insider (-1: outsider)


def candidates(problem: Problem, bounds: Bounds) -> np.ndarray:
    """Cells that may serve as complements: not sensitive, protected or empty, able to move."""
    return (
        ~problem.sensitive
        & (problem.status != PROTECTED)
        & (problem.status != EMPTY)
        & ((bounds.dn > 0) | (bounds.up > 0))
    )


def _neighbours(problem: Problem, k: int) -> np.ndarray:
    a = problem.relations
    ac = _csc(problem)
    rows = ac.indices[ac.indptr[k]:ac.indptr[k + 1]]
    if len(rows) == 0:
        return np.zeros(0, dtype=np.int64)
    return np.unique(a[rows].indices)


_CSC_CACHE: dict[int, tuple[sp.csr_matrix, sp.csc_matrix]] = {}


def _csc(problem: Problem):
    key = id(problem.relations)
    hit = _CSC_CACHE.get(key)
    if hit is None or hit[0] is not problem.relations:
        hit = (problem.relations, problem.relations.tocsc())
        _CSC_CACHE.clear()
        _CSC_CACHE[key] = hit
    return hit[1]


def _siblings(problem: Problem, k: int) -> np.ndarray:
    """Cells that are parts of a relation in which ``k`` is a part too (same sign).

    A single respondent of such a sibling is an insider for ``k`` (seed 002
    "singletons"); the respondent of a part of ``k`` (or of a total ``k`` is part of)
    contributes to ``k`` itself, which the sensitivity rule already accounts for.
    """
    a = problem.relations
    ac = _csc(problem)
    s, e = ac.indptr[k], ac.indptr[k + 1]
    out = []
    for r, ck in zip(ac.indices[s:e], ac.data[s:e]):
        cols = a.indices[a.indptr[r]:a.indptr[r + 1]]
        vals = a.data[a.indptr[r]:a.indptr[r + 1]]
        out.append(cols[(np.sign(vals) == np.sign(ck)) & (cols != k)])
    if not out:
        return np.zeros(0, dtype=np.int64)
    return np.unique(np.concatenate(out))


def _overlap(problem: Problem):
    """(CellOverlap, occupied cells) of a problem with a table structure, else None."""
    from tablesafe.structure.overlap import CellOverlap, occupied_cells

    geo = CellOverlap.of(problem)
    return None if geo is None else (geo, occupied_cells(problem))


def keys_for(problem: Problem, bounds: Bounds, withheld: np.ndarray, targets: np.ndarray) -> list[Key]:
    """The attacks to run for some sensitive cells under a pattern."""
    keys: list[Key] = []
    single = bounds.singleton & withheld
    any_single = bool(single.any())
    cand = np.flatnonzero(single)
    # the audit's attackers (tablesafe.structure.insiders); an attack whose outsider
    # table leaves the insider's cell unchanged costs no LP, see run_attacks
    model = InsiderModel.of(problem) if any_single else None
    for k in targets:
        k = int(k)
        up = bounds.req_up[k] > 0 or bounds.req_sl[k] > 0
        dn = bounds.req_dn[k] > 0 or bounds.req_sl[k] > 0
        insiders = [-1]
        if model is not None:
            insiders += [int(s) for s in model.attackers(k, cand)]
        for s in insiders:
            if up:
                keys.append((k, UP, s))
            if dn:
                keys.append((k, DOWN, s))
    return keys


class OutOfTime(Exception):
    """``run_attacks`` passed its deadline before every attack was solved."""


def run_attacks(problem: Problem, bounds: Bounds, x: np.ndarray, keys: list[Key],
                want_dual: bool = True, stop_on_fail: bool = False, sparse: bool = False,
                local: bool = True, split_insiders: bool = True,
                deadline: float | None = None) -> dict[Key, Attack]:
    """Solve the attacker's LPs for ``keys`` under the (possibly fractional) pattern ``x``.

    ``stop_on_fail``: return as soon as one attack succeeds (for removal trials).
    ``deadline``: a ``time.monotonic()`` value; past it :class:`OutOfTime` is raised.

    Insider attacks (a single respondent who knows its own withheld cell ``s``) are run
    only where needed: when the outsider's best table for the same target and direction
    reaches the level without moving ``s``, that table is feasible for the insider too,
    so the insider's attack fails just the same and no LP is solved for it.
    """
    insider_keys = [key for key in keys if key[2] >= 0]
    if insider_keys and split_insiders:
        wanted = set(keys)
        outsider_keys = list(dict.fromkeys([key for key in keys if key[2] < 0]
                                           + [(k, d, -1) for k, d, _ in insider_keys]))
        out = run_attacks(problem, bounds, x, outsider_keys, want_dual, stop_on_fail, sparse, local,
                          split_insiders=False, deadline=deadline)
        if stop_on_fail and any(not a.ok for a in out.values()):
            return {key: a for key, a in out.items() if key in wanted}
        rest = []
        moved: dict[tuple[int, int], set[int]] = {}
        for key in insider_keys:
            k, d, ins = key
            o = out.get((k, d, -1))
            if o is not None and o.ok:
                mv = moved.get((k, d))
                if mv is None:
                    mv = moved[(k, d)] = set(o.cells[o.dev != 0].tolist())
                if ins not in mv:
                    # the outsider's table holds for the insider too; the same object is
                    # shared (its ``insider`` field matters only for cuts and sliding levels)
                    out[key] = o if bounds.req_sl[k] <= 0 else replace(o, insider=ins)
                    continue
            rest.append(key)
        if rest:
            out.update(run_attacks(problem, bounds, x, rest, want_dual, stop_on_fail, sparse, local,
                                   split_insiders=False, deadline=deadline))
        return {key: a for key, a in out.items() if key in wanted}
    blocks = Blocks(problem.relations, x)
    by_block: dict[int, list[Key]] = {}
    out = {}  # dict[Key, Attack], as declared by the return above
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
            bkeys = _local_first(problem, bounds, x, bkeys, out, want_dual, sparse)
            if not bkeys:
                continue
        lp = BlockLP(problem, bounds, x, blocks.cells(b), blocks.rows(b))
        for key in bkeys:
            if deadline is not None and time.monotonic() > deadline:
                raise OutOfTime
            k, d, s = key
            req = bounds.req_up[k] if d == UP else bounds.req_dn[k]
            force = bounds.req_sl[k] > 0
            out[key] = lp.attack(k, d, req, s, want_dual=want_dual, force_dual=force, sparse=sparse)
            if stop_on_fail and not out[key].ok:
                return out
    _sliding(bounds, out)
    return out


LOCAL_FIRST = 400  # blocks with more cells are attacked locally first


def _local_first(problem: Problem, bounds: Bounds, x: np.ndarray, keys: list[Key], out: dict[Key, Attack],
                 want_dual: bool, sparse: bool) -> list[Key]:
    """Attack targets within two relation hops; returns the keys still unresolved."""
    ac = _csc(problem)
    a = problem.relations
    active = x > 1e-9
    by_target: dict[int, list[Key]] = {}
    for key in keys:
        by_target.setdefault(key[0], []).append(key)
    left: list[Key] = []
    for k, tkeys in by_target.items():
        cells = np.array([k])
        for _ in range(2):
            rows = np.unique(ac[:, cells].indices)
            cols = np.unique(a[rows].indices)
            cells = np.union1d(cells, cols[active[cols]])
        rows = np.unique(ac[:, cells].indices)
        lp = BlockLP(problem, bounds, x, cells, rows)
        for key in tkeys:
            _, d, s = key
            req = bounds.req_up[k] if d == UP else bounds.req_dn[k]
            att = lp.attack(k, d, req, s, want_dual=False, sparse=sparse)
            if att.ok and bounds.req_sl[k] <= 0:
                out[key] = att
            else:
                left.append(key)
    return left


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
           progress=None, targets: np.ndarray | None = None) -> tuple[np.ndarray, dict[Key, Attack], int]:
    """Withhold more cells until every sensitive cell passes; returns (mask, attacks, rounds).

    For each failing attack, the capacity inequality of its dual says how much protection the
    published cells could add; the cheapest cells per unit of protection are withheld
    until the inequality holds, then the failing cells are checked again. ``targets``
    limits the first check to some sensitive cells (default: all).
    """
    w = withheld.copy() | problem.sensitive
    cand = candidates(problem, bounds)
    fixed_one = problem.sensitive
    first = np.flatnonzero(problem.sensitive) if targets is None else np.asarray(targets, dtype=np.int64)
    keys = keys_for(problem, bounds, w, first)
    atts = run_attacks(problem, bounds, w.astype(float), keys, sparse=True)
    final = dict(atts)
    rounds = 0
    while True:
        bad = failing(bounds, atts)
        if not bad:
            break
        rounds += 1
        if time.monotonic() > deadline and rounds > 1000:
            raise _unprotectable(problem, bad[0], "repair did not converge")
        added = 0
        for key in bad:
            cs = cuts_for(problem, bounds, atts, [key], fixed_one)
            if not cs:
                raise _unprotectable(problem, key, "the attacker's LP gave no usable dual")
            for cut in cs:
                ok_idx = cand[cut.idx]
                have = float(np.sum(cut.coef[w[cut.idx]]))
                deficit = cut.rhs - have
                if deficit <= 1e-9 * max(1.0, abs(cut.rhs)):
                    continue
                free = ok_idx & ~w[cut.idx]
                if float(np.sum(cut.coef[free])) < deficit - 1e-9 * max(1.0, abs(cut.rhs)):
                    raise _unprotectable(problem, key, "no admissible complement is left in its relations")
                idx = cut.idx[free]
                coef = cut.coef[free]
                while deficit > 1e-9 * max(1.0, abs(cut.rhs)) and len(idx):
                    ratio = problem.cost[idx] / np.minimum(coef, deficit)
                    j = int(np.lexsort((idx, ratio))[0])
                    w[idx[j]] = True
                    deficit -= coef[j]
                    added += 1
                    idx = np.delete(idx, j)
                    coef = np.delete(coef, j)
        if added == 0:
            # the duals promised protection the LP does not give (numerical): widen by neighbours
            for key in bad:
                nb = _neighbours(problem, key[0])
                nb = nb[cand[nb] & ~w[nb]]
                if len(nb):
                    w[nb[np.argmin(problem.cost[nb])]] = True
                    added += 1
            if added == 0:
                raise _unprotectable(problem, bad[0], "no admissible complement is left")
        keys = keys_for(problem, bounds, w, np.unique([k[0] for k in bad]))
        atts = run_attacks(problem, bounds, w.astype(float), keys, sparse=True)
        final.update(atts)
    # attacks of insiders that appeared later are included because keys_for is recomputed
    return w, final, rounds


def check(problem: Problem, bounds: Bounds, withheld: np.ndarray,
          deadline: float | None = None) -> dict[Key, Attack]:
    """Every attack on every sensitive cell under a binary pattern (:class:`OutOfTime`
    past ``deadline``)."""
    keys = keys_for(problem, bounds, withheld, np.flatnonzero(problem.sensitive))
    return run_attacks(problem, bounds, withheld.astype(float), keys, deadline=deadline)


def cleanup(problem: Problem, bounds: Bounds, withheld: np.ndarray, atts: dict[Key, Attack], *,
            deadline: float = float("inf")) -> tuple[np.ndarray, dict[Key, Attack], int]:
    """Drop complements that are no longer needed, most expensive first (seed 003 B.2.b).

    A complement that no certificate uses can go at once (every certificate stays a
    feasible table); otherwise the attacks whose certificates use it are solved again
    without it and the removal is kept only if all still reach their levels.
    """
    w = withheld.copy()
    atts = dict(atts)
    sec = np.flatnonzero(w & ~problem.sensitive)
    order = sec[np.lexsort((sec, -problem.cost[sec]))]
    uses: dict[int, set[Key]] = {}
    for key, a in atts.items():
        for c in a.cells:
            uses.setdefault(int(c), set()).add(key)
    removed = 0
    for r in order:
        r = int(r)
        if time.monotonic() > deadline:
            break
        users = uses.get(r, set())
        w[r] = False
        if not users:
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
        new = run_attacks(problem, bounds, w.astype(float), ordered, want_dual=False, stop_on_fail=True,
                          sparse=True)
        if all(a.ok and getattr(a, "sliding_short", 0) <= 0 for a in new.values()):
            removed += 1
            for key, a in new.items():
                for c in atts[key].cells:
                    s = uses.get(int(c))
                    if s is not None:
                        s.discard(key)
                atts[key] = a
                for c in a.cells:
                    uses.setdefault(int(c), set()).add(key)
        else:
            w[r] = True
    return w, atts, removed


def certificates_frame(problem: Problem, bounds: Bounds, atts: dict[Key, Attack]) -> pd.DataFrame:
    """Certificates (target, direction, cell, value) from outsider attacks.

    Each attacker solution is scaled to move the target by exactly its level (the scaled
    table stays feasible: the deviation bounds contain zero).
    """
    rows_t, rows_d, rows_c, rows_v = [], [], [], []
    for (k, d, s), a in sorted(atts.items()):
        if s >= 0 or a.required <= 0 or len(a.cells) == 0:
            continue
        scale = 1.0
        moved = abs(float(a.dev[a.cells == k].sum()))
        if moved > a.required:
            scale = a.required / moved
        dev = a.dev * scale
        keep = np.abs(dev) > 0
        vals = problem.value[a.cells[keep]] + dev[keep]
        rows_t += [problem.names[k]] * int(keep.sum())
        rows_d += ["up" if d == UP else "down"] * int(keep.sum())
        rows_c += list(problem.names[a.cells[keep]])
        rows_v += list(vals)
    return pd.DataFrame({"target": rows_t, "direction": rows_d, "cell": rows_c, "value": np.asarray(rows_v, float)})


@dataclass
class CheckSummary:
    """Outcome of checking a pattern."""

    failures: list[Key] = field(default_factory=list)
    attacks: dict[Key, Attack] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return not self.failures
