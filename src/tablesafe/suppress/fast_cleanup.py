"""The second pass of ``fast``: drop complements whose certificates can do without them.

The first pass protects the sensitive cells one after the other, so early certificates
use cells that later turn out to be unnecessary once more cells are withheld (seed 003
B.2.b describes this "second pass" for the sequential heuristics). Here each
complementary cell, most expensive first, is tried for release: every certificate that
moves it is searched again among the cells still withheld, with the cell held at its
value. When every one of them is replaced, the cell is published and the replacements
become the certificates. The pattern stays proved throughout, by construction.

Single respondents: a replacement may move a single-respondent cell that does not
overlap its target only if the certificate it replaces moved that cell too. Every
(target, single respondent) pair that some certificate of the target kept fixed stays
kept fixed, so the insider proof of the first pass carries over (insider certificates
keep their named cells fixed as before).

The work is bounded by a number of local LPs, not by time, so the result is the same on
every machine (unless a caller also sets a deadline).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from tablesafe.audit.lp import lp_work
from tablesafe.suppress.fast_ranges import CellRanges
from tablesafe.suppress.local import (
    Certificates,
    LocalSearch,
    Part,
    Query,
    both_ways,
    target_first,
    unit_deviation,
)

__all__ = ["Certificates", "CleanupResult", "release_complements"]

_WIDE_CELLS = 1_000
_MAX_AREA = 2_000


@dataclass
class CleanupResult:
    """What the second pass changed.

    Attributes:
        withheld: the reduced pattern.
        certs: its certificates.
        released: complements published.
        swapped: of those, complements replaced by cheaper new ones.
        tried: complements tried.
        lp_solves: local LPs solved.
        budget_hit: the LP budget (or the deadline) ended the pass early.
        clock_stopped: the deadline, not the LP budget, ended it (another run on the
            same input may then release other cells).
    """

    withheld: np.ndarray
    certs: Certificates
    released: int
    swapped: int
    tried: int
    lp_solves: int
    budget_hit: bool
    clock_stopped: bool = False


@dataclass
class _Group:
    """The certificate parts of one target and insider (both directions come from one
    symmetric solve)."""

    target: int
    insider: int
    parts: list[Part]

    def cells(self) -> np.ndarray:
        """Every cell the group moves (sorted)."""
        return _cells_of(self.parts)

    def moves(self, c: int) -> bool:
        """Whether some part moves cell ``c``."""
        return any((p[1] == c).any() for p in self.parts)


@dataclass(frozen=True)
class _Context:
    """The fixed inputs of a second pass."""

    search: LocalSearch
    ranges: CellRanges
    single: np.ndarray
    held: list[np.ndarray]
    tol: float
    swap: bool
    deadline: float | None = None

    def late(self) -> bool:
        """Whether the pass's deadline (``time.perf_counter()``) has passed."""
        return self.deadline is not None and time.perf_counter() > self.deadline


def release_complements(
    search: LocalSearch,
    withheld: np.ndarray,
    certs: Certificates,
    held: list[np.ndarray],
    *,
    ranges: CellRanges,
    single: np.ndarray,
    candidates: np.ndarray,
    max_lps: int,
    tol: float = 1e-7,
    swap: bool = True,
    deadline: float | None = None,
    max_work: int | None = None,
) -> CleanupResult:
    """Publish complements (most expensive first) whose certificates can be found anew
    without them among the other withheld cells.

    Args:
        search: the local search (its solver's count measures the budget).
        withheld: the first pass's pattern (not modified).
        certs: its certificates.
        held: per insider index, the cells that certificate keeps at their values.
        ranges: the protection amounts, ranges, costs (the order of the attempts) and
            weights of the first pass.
        single: single-respondent cells that replacements must not newly move.
        candidates: mask of cells that may be released (the complements).
        max_lps: most local LPs to spend.
        tol: relative deviation below which a cell is considered not to move.
        swap: let the replacements also use cells not yet withheld when those cost less,
            together, than the cell released (otherwise only withheld cells).
        deadline: ``time.perf_counter()`` value at which to stop (``budget_hit``); a
            complement whose replacements are still being sought then stays withheld
            (one used by many certificates needs an LP for each: measured on a generated
            3,080-cell three-way table at a 20 s limit, the pass checked the deadline
            only between complements and ended 10 s past it).
        max_work: most LP work (:func:`~tablesafe.audit.lp.lp_work`) to spend, checked
            between complements like ``max_lps`` (the same point in every run; the
            deadline is then the guard).

    Returns:
        The reduced pattern and its certificates (a :class:`CleanupResult`).
    """
    withheld = withheld.copy()
    groups = _groups(certs)
    if not groups:
        return CleanupResult(withheld, certs, 0, 0, 0, 0, False)
    # which groups move each candidate cell
    uses: dict[int, list[int]] = {}
    for g, group in enumerate(groups):
        for c in group.cells().tolist():
            if candidates[c]:
                uses.setdefault(c, []).append(g)
    ctx = _Context(search, ranges, single, held, tol, swap, deadline)
    cost = ranges.cost
    cand = np.flatnonzero(candidates & withheld)
    cand = cand[np.lexsort((cand, -cost[cand]))]  # most expensive first
    lps0 = search.lp_solves
    released = tried = swapped = 0
    budget_hit = clock_stopped = False
    work0 = lp_work()
    for c in cand.tolist():
        if search.lp_solves - lps0 >= max_lps or (max_work is not None and lp_work() - work0 >= max_work):
            budget_hit = True
            break
        if ctx.late():
            budget_hit = clock_stopped = True
            break
        tried += 1
        new = _release(ctx, groups, [g for g in uses.get(c, ()) if groups[g].moves(c)], c, withheld)
        if new is None:
            continue
        released += 1
        swapped += bool(new[1] > 0)
        for g, repl in new[0]:
            groups[g].parts = repl
            for cc in _cells_of(repl).tolist():
                if candidates[cc] and cc != c:
                    lst = uses.setdefault(cc, [])
                    if not lst or lst[-1] != g:
                        lst.append(g)
    out = _flatten(groups)
    return CleanupResult(withheld, out, released, swapped, tried, search.lp_solves - lps0, budget_hit,
                         clock_stopped)


def _release(
    ctx: _Context, groups: list[_Group], gids: list[int], c: int, withheld: np.ndarray,
) -> tuple[list[tuple[int, list[Part]]], float] | None:
    """Try to publish ``c``: replacements for the groups ``gids`` that move it.

    On success ``withheld`` is updated (``c`` published, the replacements' new cells
    withheld) and ``(replacements per group, cost of the new cells)`` returned; on
    failure ``withheld`` is left as it was and ``None`` returned.
    """
    cost = ctx.ranges.cost
    new: list[tuple[int, list[Part]]] = []
    added: list[np.ndarray] = []  # cells newly withheld for the replacements
    spent = 0.0
    for g in gids:
        if ctx.late():
            break  # out of time: the release fails, ``c`` stays
        repl = _replace(ctx, groups[g], c, withheld)
        if repl is None:
            break
        cells = _cells_of(repl)
        fresh = cells[~withheld[cells]]
        spent += float(cost[fresh].sum())
        if spent >= cost[c] * (1 - 1e-9) and len(fresh):
            break  # a swap must be cheaper than the cell it releases
        withheld[fresh] = True
        added.append(fresh)
        new.append((g, repl))
    else:
        withheld[c] = False
        return new, spent
    for fresh in added:  # the release failed: undo the tentative additions
        withheld[fresh] = False
    return None


def _cells_of(parts: list[Part]) -> np.ndarray:
    """Every cell the parts move (sorted)."""
    return np.unique(np.concatenate([p[1] for p in parts]))


def _groups(certs: Certificates) -> list[_Group]:
    """The certificates grouped by (target, insider), each group's parts by direction."""
    order = np.lexsort((certs.cell, certs.direction, certs.insider, certs.target))
    t_all, k_all = certs.target[order], certs.direction[order]
    c_all, d_all, i_all = certs.cell[order], certs.dev[order], certs.insider[order]
    if len(t_all) == 0:
        return []
    brk = np.flatnonzero((np.diff(t_all) != 0) | (np.diff(i_all) != 0)) + 1
    starts = np.concatenate(([0], brk))
    ends = np.concatenate((brk, [len(t_all)]))
    groups = []
    for a, b in zip(starts.tolist(), ends.tolist()):
        parts: list[Part] = []
        kk = k_all[a:b]
        for k in np.unique(kk).tolist():
            sel = slice(a, b) if (kk == k).all() else np.flatnonzero(kk == k) + a
            parts.append((k, c_all[sel], d_all[sel]))
        groups.append(_Group(int(t_all[a]), int(i_all[a]), parts))
    return groups


def _flatten(groups: list[_Group]) -> Certificates:
    """The groups' certificates as flat arrays."""
    rows_t, rows_k, rows_c, rows_d, rows_i = [], [], [], [], []
    for group in groups:
        for k, cells, dev in group.parts:
            rows_t.append(np.full(len(cells), group.target, dtype=np.int64))
            rows_k.append(np.full(len(cells), k, dtype=np.int8))
            rows_c.append(cells.astype(np.int64))
            rows_d.append(dev)
            rows_i.append(np.full(len(cells), group.insider, dtype=np.int64))
    return Certificates(np.concatenate(rows_t), np.concatenate(rows_k), np.concatenate(rows_c),
                        np.concatenate(rows_d), np.concatenate(rows_i))


def _areas(ctx: _Context, t: int, c: int, old: np.ndarray, withheld: np.ndarray) -> list[np.ndarray] | None:
    """Where to search again for ``t`` without ``c``: the first box (with a table
    structure), else the cells near the target or the old certificate (``None``: too
    many cells to search)."""
    search = ctx.search
    if search.geometry is not None:
        return [search.box(t, lv) for lv in search.levels(t)]
    # no table structure: a few relation hops around the target on small blocks,
    # else the old certificate's cells and every cell sharing a relation with one of
    # them (measured on Castro's HIER13: four hops around the target cost 63 s and
    # released nothing)
    free = search.space.free
    mask = free.copy() if ctx.swap else withheld & free
    mask[c] = False
    wide = search.neighbourhood(t, search.options.inner_hops, mask)
    areas = [wide if len(wide) <= _WIDE_CELLS else search.space.relations.around(old, mask)]
    if len(areas[0]) > _MAX_AREA:
        return None  # too large to search again (measured on HIER16: 2 s per LP)
    return areas


def _replace(ctx: _Context, group: _Group, c: int, withheld: np.ndarray) -> list[Part] | None:
    """New certificates for the group's target (same insider) without ``c``, or None:
    among withheld cells, or (``swap``) among all movable cells with withheld ones
    almost free."""
    search, r, t = ctx.search, ctx.ranges, group.target
    free = search.space.free
    old = group.cells()
    amount = max(r.upl[t], r.lpl[t])
    areas = _areas(ctx, t, c, old, withheld)
    if areas is None:
        return None
    for box in areas:
        ok = (free[box] if ctx.swap else withheld[box] & free[box]) & (box != c)
        ok |= box == t
        cells = _singletons_allowed(ctx, t, box[ok], old)
        if group.insider >= 0:
            cells = cells[~np.isin(cells, ctx.held[group.insider])]
        cells = target_first(t, cells)
        d = search.solve(Query(t, amount, r.cap, r.cap, r.weight, withheld), cells)
        if d is None:
            continue
        cells, unit = unit_deviation(cells, d, amount, ctx.tol)
        return both_ways(cells, unit, r.upl[t], r.lpl[t], [k for k, _, _ in group.parts])
    return None


def _singletons_allowed(ctx: _Context, t: int, cells: np.ndarray, old: np.ndarray) -> np.ndarray:
    """``cells`` without the single-respondent cells (other than ``t``) the old
    certificate did not move, unless they overlap ``t``."""
    sing = ctx.single[cells] & (cells != t)
    if not sing.any():
        return cells
    s_cells = cells[sing]
    allowed = np.isin(s_cells, old)
    geo = ctx.search.geometry
    if geo is not None and not allowed.all():
        allowed |= geo.overlaps(s_cells, t, ctx.search.space.occupied)
    keep = np.ones(len(cells), dtype=bool)
    keep[np.flatnonzero(sing)[~allowed]] = False
    return cells[keep]
