"""The local search: a small protection LP on a neighbourhood of one target cell.

For a target ``t`` that must move by ``amount`` the search solves, on a neighbourhood
of ``t`` with every other cell held at its true value,

    minimise   sum_i  w_i (p_i + q_i)
    subject to A_R (p - q) = 0        (the relations touching the neighbourhood)
               p_t = amount, q_t = 0
               0 <= p_i <= up_i,  0 <= q_i <= down_i

with ``w_i = weight_i / min(scale_i, amount)`` (the linear relaxation of the fixed charge
of withholding cell ``i``, Fischetti and Salazar's model restricted to one target) and
``withheld_weight`` times less for cells already withheld. The deviation ``d = p - q``
is the target's certificate (see :mod:`tablesafe.suppress.fast`).

Neighbourhoods, in the order they are tried (:meth:`LocalSearch.certify`):

1. the cells already withheld within the first box (or a few relation hops): no new
   suppression needed;
2. the first box within ``max_box`` code combinations, then (in searches that may go
   further) the smallest box within ``max_wide_box``;
3. relation hops around the target, up to ``max_hops``, then the target's whole block
   (when the search hurries, a large block's best-ranked cells first:
   :mod:`tablesafe.suppress.local.guided`).

Boxes exist for tables that come with their structure (``problem.model``): per
dimension a set of codes around the target's code (six levels, see
:func:`tablesafe.suppress.local.geometry.code_sets`), crossed over the dimensions.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tablesafe.structure.neighbours import gather
from tablesafe.suppress.local.geometry import Geometry
from tablesafe.suppress.local.guided import (
    GUIDED_FROM,
    LSQR_ITERATIONS,
    LSQR_ITERATIONS_RELATIONS,
    REGION_SIZES,
    ranked,
)
from tablesafe.suppress.local.lp import LocalLP
from tablesafe.suppress.local.relations import HopWalk, RelationIndex

__all__ = ["Found", "LocalSearch", "Query", "SearchOptions", "SearchSpace", "target_first"]

INSIDER_HOPS_FROM = 2_000
"""First boxes whose withheld cells are more than this many get an insider's search
within ``SearchOptions.insider_inner_hops`` hops first (smaller ones cost little)."""

INSIDER_LADDER_MIN = 300
"""The smallest region (cells) of an insider's search within a few hops
(:meth:`LocalSearch._insider_hops`): smaller ones found no certificate on the three-way
tables measured (sixty-first session: on the 12,180-cell one with fan-outs 4x6, 3x8 and
2x6, 2, 3 and 4 hops, 40-380 cells, found none of 735 insiders' certificates)."""

INSIDER_LADDER_GROWTH = 1.5
"""Each region an insider's search within a few hops tries holds at least this many times
the cells of the one before (a hop that adds few cells seldom turns an infeasible LP
feasible)."""

Found = tuple[np.ndarray | None, np.ndarray, str]
"""``(deviation, cells, how)``: the deviation of every neighbourhood cell (``None`` when
no certificate was found), the neighbourhood (target first), and which neighbourhood
gave it (``inner-box4``, ``box1``, ``wide-box2``, ``hops3``, ``guided``, ``block``,
...)."""


@dataclass(frozen=True)
class SearchOptions:
    """How far a local search looks (see :class:`tablesafe.suppress.fast.FastOptions`,
    whose fields of the same names these are)."""

    max_hops: int
    max_cells: int
    withheld_weight: float
    inner_hops: int
    inner: str
    strict_hops: int
    strict_whole_max: int
    strict_adds: bool
    max_box: int
    max_wide_box: int
    box_levels: tuple[int, ...]
    inner_first: tuple[int, ...] = ()
    insider_inner_hops: int = 0


@dataclass(frozen=True)
class SearchSpace:
    """What a local search needs that stays the same for a whole run (picklable: worker
    processes receive it).

    Attributes:
        relations: the relations, indexed both ways.
        geometry: boxes around cells (``None`` for problems without a table structure).
        scale: per cell, the most it moves for any target (its symmetric range, or its
            magnitude when that is unbounded; ``inf`` when it cannot move).
        free: cells that may move at all (not protected, not empty, a positive range).
        single: single-respondent cells kept out of certificates where possible (all
            ``False`` without singleton protection).
        occupied: cells with at least one respondent (for overlaps with the target).
        options: the search's reach.
    """

    relations: RelationIndex
    geometry: Geometry | None
    scale: np.ndarray
    free: np.ndarray
    single: np.ndarray
    occupied: np.ndarray
    options: SearchOptions

    @property
    def n(self) -> int:
        """Number of cells."""
        return len(self.free)


@dataclass(frozen=True)
class Query:
    """One search: move ``target`` by ``amount`` within the given ranges.

    Attributes:
        target: the cell to move.
        amount: how far it must move (up; a certificate is symmetric).
        up, down: per cell, the most it may move up and down.
        weight: per cell, the cost of making it move (before scaling, see the module).
        withheld: the cells withheld so far (cheap to move; read at each LP).
    """

    target: int
    amount: float
    up: np.ndarray
    down: np.ndarray
    weight: np.ndarray
    withheld: np.ndarray


def target_first(t: int, cells: np.ndarray) -> np.ndarray:
    """``cells`` with ``t`` first (added if missing, never twice)."""
    cells = cells[cells != t]
    return np.concatenate(([t], cells))


HOP_TRIAL = 40
"""Hurried LPs on relation hops of fewer than ``GUIDED_FROM`` cells a search tries before
it judges whether they are worth trying (:data:`HOP_MIN_SHARE`)."""

HOP_MIN_SHARE = 0.05
"""Share of those LPs that must find a certificate for a hurried search to go on trying
them; below it the search walks on to the first hop of at least ``GUIDED_FROM`` cells
(its guided regions), or to the block's last hop. On Castro's problems without a table
structure no hurried search found its certificate on such hops (sixty-seventh session,
``fast`` at 5 s: NINE12 415 guided regions, 61 among withheld cells, none on hops; NINE5D
356 guided regions, none on hops), and their LPs, mostly on a target pinned by its
relations, cost about 2 ms of each target's 12."""


class LocalSearch:
    """Neighbourhoods of a target and the local LPs on them (one LP solver per process).

    Args:
        space: the run's fixed data.
        lp: the solver to use (a new one by default).
    """

    def __init__(self, space: SearchSpace, lp: LocalLP | None = None) -> None:
        self.space = space
        self.lp = lp if lp is not None else LocalLP()
        self.options = space.options
        self.geometry = space.geometry
        self._strict_free = space.free & ~space.single
        self._any_single = bool(space.single.any())
        self._boxes: dict[tuple[int, int], np.ndarray] = {}
        self.hurry = False  # from now on as with ``strict_adds`` (quicker)
        self._inside = np.zeros(space.n, dtype=bool)  # scratch marks (``_target_alone``)
        self._hop_tries = 0  # hurried LPs on small relation hops (see HOP_TRIAL)
        self._hop_found = 0  # ... that found a certificate

    @property
    def lp_solves(self) -> int:
        """Local LPs solved so far by this search's solver."""
        return self.lp.solves

    def certify(
        self, query: Query, movable: np.ndarray | None = None, *, strict: bool = True,
        local: bool | int = False, insider: bool = False,
    ) -> Found:
        """The cheapest local certificate found for ``query`` moving only ``movable``
        cells (``None``: every free cell).

        First (``strict``) without moving any single-respondent cell other than the
        target (so that no singleton's insider can rule the certificate out): among the
        cells already withheld, and with ``strict_adds`` also with new complements
        within the first box (with a table structure) or a few hops; then, only if that
        fails, with singletons allowed (penalised by their weight) up to the whole
        block (their insiders then get certificates of their own). With
        ``local=True`` and a table structure only the boxes are searched, with an
        integer ``local`` that many relation hops (for optional attempts that have a
        fallback). ``insider``: a certificate for one of the target's single
        respondents (``movable`` keeps its cell fixed), whose search among the cells
        already withheld tries ``insider_inner_hops`` hops before a large first box.
        """
        free = self.space.free if movable is None else movable
        if strict and self._any_single:
            strict_free = self._strict_movable(query.target, movable)
            if not (self.options.strict_adds or self.hurry):
                found = self._among_withheld(query, strict_free, self.levels(query.target))
                if found is not None:
                    return found
                d, cells, how = self._certify(query, free, *self._reach(local))
                return d, cells, "with-singletons " + how
            # with a table structure the strict search stays within the first box, no
            # wide boxes (measured on the 13k table: growing beyond it found no
            # singleton-free certificate it missed, at 4x the time; on the 1M table most
            # of the time went into strict searches that failed at every level); without
            # one it grows by relation hops
            boxes = self.geometry is not None
            d, cells, how = self._certify(
                query, strict_free,
                1 if boxes else self.options.strict_hops,
                not boxes and self.space.n <= self.options.strict_whole_max,
            )
            if d is not None:
                return d, cells, how
            d, cells, how = self._certify(query, free, *self._reach(local))
            return d, cells, "with-singletons " + how
        return self._certify(query, free, *self._reach(local), insider=insider)

    def box(self, t: int, level: int) -> np.ndarray:
        """The geometry's box around ``t`` (cached for the current target)."""
        key = (t, level)
        got = self._boxes.get(key)
        if got is None:
            if self._boxes and next(iter(self._boxes))[0] != t:
                self._boxes.clear()
            assert self.geometry is not None  # boxes only with a table structure
            got = self._boxes[key] = self.geometry.box(t, level)
        return got

    def levels(self, t: int) -> list[int]:
        """The box level to try for ``t`` (none without a table structure): the first of
        ``box_levels`` within ``max_box`` code combinations (an LP infeasible on a box is
        infeasible on every smaller one, and a larger box gives a cheaper certificate)."""
        if self.geometry is None:
            return []
        geo, opts = self.geometry, self.options
        return [lv for lv in opts.box_levels if geo.box_size(t, lv) <= opts.max_box][:1]

    def wide_levels(self, t: int) -> list[int]:
        """The smallest level above ``max_box`` but within ``max_wide_box`` code
        combinations (a last box before relation hops)."""
        assert self.geometry is not None  # boxes only with a table structure
        geo, opts = self.geometry, self.options
        wide = [lv for lv in opts.box_levels if opts.max_box < geo.box_size(t, lv) <= opts.max_wide_box]
        return wide[-1:]

    def neighbourhood(self, t: int, hops: int, movable: np.ndarray) -> np.ndarray:
        """Movable cells within ``hops`` relation steps of ``t`` (through movable cells), t first."""
        return self.hop_layers(t, hops, movable)[0]

    def hop_layers(self, t: int, hops: int, movable: np.ndarray) -> tuple[np.ndarray, list[int]]:
        """:meth:`neighbourhood` and, for each ``h`` from 0, how many of its first cells are
        within ``h`` hops (the cells come in order of their distance)."""
        walk = HopWalk(self.space.relations, self.space.n, t, movable)
        cells = walk.within(hops)
        return cells, walk.ends

    def solve(self, query: Query, cells: np.ndarray, any_one: bool = False) -> np.ndarray | None:
        """Local LP on ``cells`` (target first); all other cells stay at their value.
        ``any_one``: any certificate will do (an insider's, among cells withheld already:
        it adds none), so the LP has no cost to minimise, only a feasible point to find.

        Returns the deviation of each of ``cells`` (``None``: no certificate there).
        """
        k = len(cells)
        if k < 2 or self._target_alone(cells):
            return None
        local = _local_matrix(self.space.relations, cells)
        if local is None:
            return None  # the target itself is pinned
        idx, indptr, r, val, nrow = local
        if len(idx) < 2:
            return None
        sel = cells[idx]
        amount = query.amount
        if any_one:
            w = np.zeros(len(sel))
        else:
            # linear relaxation of the fixed charge cost_i * [d_i != 0] with big-M equal
            # to the most the cell will move for this target: min(range_i, amount)
            w = query.weight[sel] / np.minimum(self.space.scale[sel], amount)
            w = w * np.where(query.withheld[sel], self.options.withheld_weight, 1.0)
        dd = self.lp.solve(indptr, r, val, nrow, w, query.up[sel], query.down[sel], 0, amount)
        if dd is None:
            return None
        d = np.zeros(k)
        d[idx] = dd
        return d

    def _target_alone(self, cells: np.ndarray) -> bool:
        """Whether the target (``cells[0]``) is the only one of ``cells`` in one of its
        relations: then it cannot move with the rest held (``_local_matrix`` would peel
        it off first), found here without building the local matrix. Measured on NINE12
        (``fast`` at 5 s): 1,429 of 3,862 local matrices ended this way at 0.2-0.4 ms
        each."""
        rel = self.space.relations
        t = int(cells[0])
        inside = self._inside
        inside[cells] = True
        try:
            for r in rel.cell_rows[rel.cell_ptr[t]:rel.cell_ptr[t + 1]].tolist():
                if np.count_nonzero(inside[rel.row_cells[rel.row_ptr[r]:rel.row_ptr[r + 1]]]) == 1:
                    return True
            return False
        finally:
            inside[cells] = False

    def _strict_movable(self, t: int, movable: np.ndarray | None) -> np.ndarray:
        """The movable cells without the single-respondent cells whose respondent is not
        one of ``t``'s contributors (those overlapping ``t`` may move: their respondent
        is one of ``t``'s own contributors)."""
        single = self.space.single
        base = self._strict_free if movable is None else movable & ~single
        free = self.space.free if movable is None else movable
        levels = self.levels(t)
        if not levels:
            return base
        assert self.geometry is not None  # levels need it
        box = self.box(t, levels[0])  # the strict search's only box
        own = box[single[box] & free[box]]
        if len(own):
            own = own[self.geometry.overlaps(own, t, self.space.occupied)]
        if not len(own):
            return base
        out = base.copy()
        out[own] = True
        return out

    def _reach(self, local: bool | int) -> tuple[int, bool]:
        """(max hops, whole block allowed) of a search: ``local=True`` boxes only (with a
        table structure), an integer: that many hops, else up to the whole block."""
        if local is True and self.geometry is not None:
            return 1, False
        if local is not True and local:
            return int(local), False
        return self.options.max_hops, True

    def _certify(self, query: Query, free: np.ndarray, max_hops: int, allow_whole: bool,
                 insider: bool = False) -> Found:
        """Inner cells first, then boxes, then relation hops (see the module text);
        ``insider`` as in :meth:`certify`."""
        t = query.target
        levels = self.levels(t)
        found = self._among_withheld(query, free, levels, insider)
        if found is not None:
            return found
        # 2. a cheap set of new complements
        movable = free.copy()
        movable[t] = True
        if self.geometry is not None:
            for level in levels:
                cells = target_first(t, self.box(t, level))
                cells = cells[movable[cells]]
                d = self.solve(query, cells)
                if d is not None:
                    return d, cells, f"box{level}"
            if allow_whole or max_hops > 1:
                # (not in boxes-only searches) before relation hops, which reach most of a
                # sparse table within a few steps and then fall back to the whole block:
                # a box too large for the first attempt. Measured on the 1M table: targets
                # at a total in one dimension spent 2-7 s each in whole-block LPs of
                # 600,000 cells.
                for level in self.wide_levels(t):
                    cells = target_first(t, self.box(t, level))
                    cells = cells[movable[cells]]
                    d = self.solve(query, cells)
                    if d is not None:
                        return d, cells, f"wide-box{level}"
        d, cells, hops = self.grow(query, movable, 2, max_hops, allow_whole)
        return d, cells, ("guided" if hops == 0 else "block" if hops > max_hops else f"hops{hops}")

    def _inner_levels(self, t: int, levels: list[int]) -> list[int]:
        """The box levels of the search among the withheld cells: those of
        ``inner_first`` whose box is smaller than the first box, then the first box."""
        if not levels:
            return []
        assert self.geometry is not None  # levels need it
        size = self.geometry.box_size(t, levels[0])
        first = [lv for lv in self.options.inner_first if self.geometry.box_size(t, lv) < size]
        return first + list(levels)

    def _among_withheld(self, query: Query, free: np.ndarray, levels: list[int],
                        insider: bool = False) -> Found | None:
        """1. A certificate among the cells already withheld (no new suppression);
        ``insider`` as in :meth:`certify`."""
        t = query.target
        inner = query.withheld & free
        inner[t] = True
        if self.geometry is not None and self.options.inner == "box":
            last = None
            inner_levels = self._inner_levels(t, levels)
            for i, lv in enumerate(inner_levels):
                cells = self.box(t, lv)
                cells = target_first(t, cells[inner[cells]])
                if last is not None and np.array_equal(cells, last):
                    continue   # the same withheld cells: the same LP
                last = cells
                if insider and i == len(inner_levels) - 1:
                    found = self._insider_hops(query, cells)
                    if found is not None:
                        return found
                d = self.solve(query, cells, any_one=insider)
                if d is not None:
                    return d, cells, f"inner-box{lv}"
            return None
        d, cells, _ = self.grow(query, inner, 1, self.options.inner_hops, False)
        if d is not None:
            return d, cells, "inner-hops"
        return None

    def _insider_hops(self, query: Query, box: np.ndarray) -> Found | None:
        """An insider's certificate among ``box`` (the withheld movable cells of its first
        box, target first) within ``insider_inner_hops`` relation hops of the target, on a
        box of more than :data:`INSIDER_HOPS_FROM` cells; None otherwise or when there is
        none. The regions tried grow hop by hop (:data:`INSIDER_LADDER_MIN`,
        :data:`INSIDER_LADDER_GROWTH`) up to half of the box, where the box's own LP
        is cheaper than one more region."""
        hops = self.options.insider_inner_hops
        if hops <= 0 or len(box) <= INSIDER_HOPS_FROM:
            return None
        mask = np.zeros(self.space.n, dtype=bool)
        mask[box] = True
        cells, ends = self.hop_layers(query.target, hops, mask)
        tried = 0
        for h, end in enumerate(ends):
            if 2 * end > len(box):
                break
            if end < INSIDER_LADDER_MIN or end < INSIDER_LADDER_GROWTH * tried:
                continue
            tried = end
            d = self.solve(query, cells[:end], any_one=True)
            if d is not None:
                return d, cells[:end], f"inner-hops{h}"
        return None

    def grow(
        self, query: Query, movable: np.ndarray, start: int, max_hops: int, allow_whole: bool,
    ) -> tuple[np.ndarray | None, np.ndarray, int]:
        """Solve on ``start``, ``start + 1``, ... relation hops around the target until a
        certificate is found; past ``max_hops`` (or ``max_cells`` cells) the whole block,
        if ``allow_whole`` (a hurried search tries guided regions of a large block
        first). Returns ``(deviation or None, cells, hops used)``, hops 0 for a guided
        region."""
        t = query.target
        prev = -1
        hops = start
        walk = HopWalk(self.space.relations, self.space.n, t, movable)
        skip = allow_whole and self.hurry and not self._small_hops_pay()
        while True:
            whole = hops > max_hops
            if whole and not allow_whole:
                return None, np.zeros(0, dtype=np.int64), hops
            cells = walk.within(10**9 if whole else hops)
            if len(cells) == prev and not whole:
                return None, cells, hops  # the block is exhausted
            prev = len(cells)
            if len(cells) > self.options.max_cells and not whole:
                hops = max_hops + 1
                continue
            small = self.hurry and allow_whole and len(cells) < GUIDED_FROM and not whole
            if small and skip and len(walk.within(hops + 1)) > len(cells):
                hops += 1  # (an LP on a block's last hop is still tried: nothing follows)
                continue
            if self.hurry and len(cells) >= GUIDED_FROM:
                d, region = self.guided(query, cells)
                if d is not None:
                    return d, region, 0
            d = self.solve(query, cells)
            if small:
                self._hop_tries += 1
                self._hop_found += d is not None
            if d is not None or whole:
                return d, cells, hops
            hops += 1

    def _small_hops_pay(self) -> bool:
        """Whether a hurried search still tries its LPs on relation hops of fewer than
        :data:`GUIDED_FROM` cells: until :data:`HOP_TRIAL` were tried, and then while
        at least :data:`HOP_MIN_SHARE` of them found a certificate."""
        return self._hop_tries < HOP_TRIAL or self._hop_found >= HOP_MIN_SHARE * self._hop_tries

    def guided(self, query: Query, cells: np.ndarray) -> tuple[np.ndarray | None, np.ndarray]:
        """The LP on guided regions of a large block (``cells``, target first; see
        :mod:`~tablesafe.suppress.local.guided`): ``(deviation, region)`` of the first
        feasible one, ``(None, cells)`` when none of them is."""
        local = _local_matrix(self.space.relations, cells)
        if local is None:
            return None, cells
        idx, indptr, r, val, nrow = local
        if len(idx) < 2:
            return None, cells
        sel = cells[idx]
        room = np.minimum(np.minimum(query.up[sel], query.down[sel]), 10.0 * query.amount)
        room = np.where(room > 0, room, 1e-9 * query.amount)
        iterations = LSQR_ITERATIONS if self.geometry is not None else LSQR_ITERATIONS_RELATIONS
        order = cells[idx[ranked(indptr, r, val, nrow, room, iterations=iterations)]]
        for size in REGION_SIZES:
            if size >= len(order):
                break
            region = order[:size]
            d = self.solve(query, region)
            if d is not None:
                return d, region
        return None, cells


def _local_matrix(
    rel: RelationIndex, cells: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, int] | None:
    """The local LP's matrix on ``cells`` (target first), column-wise.

    Every relation touching a neighbourhood cell takes part, with the cells outside the
    neighbourhood held at their value. A cell that is the only neighbourhood member of a
    relation cannot move (the relation's other cells are held): such cells are peeled
    off until none is left. Returns ``(positions in cells of the columns, indptr, row
    index, value, rows)``, or ``None`` when the target itself is pinned.
    """
    k = len(cells)
    at = gather(rel.cell_ptr, cells)
    lens = rel.cell_ptr[cells + 1] - rel.cell_ptr[cells]
    c = np.repeat(np.arange(k), lens)
    rows, r = _codes(rel.cell_rows[at], rel.n_relations)
    val = rel.cell_coef[at]
    alive = np.ones(k, dtype=bool)
    live = np.ones(len(c), dtype=bool)
    while True:
        cnt = np.bincount(r[live], minlength=len(rows))
        lone = live & (cnt[r] == 1)
        if not lone.any():
            break
        dead = c[lone]
        if alive[0] and (dead == 0).any():
            return None
        alive[dead] = False
        live = alive[c]
    if not live.all():
        r, c, val = r[live], c[live], val[live]
        idx = np.flatnonzero(alive)
        c = (np.cumsum(alive) - 1)[c]
        used, r = _codes(r, len(rows))
        nrow = len(used)
    else:
        idx = np.arange(k)
        nrow = len(rows)
    # c is sorted (cells were gathered in order), so this is already column-wise
    indptr = np.zeros(len(idx) + 1, dtype=np.int64)
    np.cumsum(np.bincount(c, minlength=len(idx)), out=indptr[1:])
    return idx, indptr, r, val, nrow


def _codes(values: np.ndarray, bound: int) -> tuple[np.ndarray, np.ndarray]:
    """``np.unique(values, return_inverse=True)`` of non-negative integers below
    ``bound``: by marking an array of ``bound`` flags when that is not much longer than
    ``values`` (no sort), else by ``np.unique``. On the generated 13,851-cell three-way
    table, whose first box is the whole table, the sort took 6 % of ``fast``'s time."""
    if bound > 4 * len(values):
        return np.unique(values, return_inverse=True)
    present = np.zeros(bound, dtype=bool)
    present[values] = True
    return np.flatnonzero(present), (np.cumsum(present) - 1)[values]
