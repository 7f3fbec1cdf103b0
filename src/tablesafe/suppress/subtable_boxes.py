"""Box certificates of a HiTaS subtable: attacks answered without an attacker LP.

A subtable of a hierarchical table (:mod:`tablesafe.suppress.modular`) is a table
without hierarchy: in each dimension one parent code and its children. Such a table has
the cheapest certificates there are. Pick, in every dimension, one more code (the
*partner*) in the same relation as the target's code, and move the ``2**d`` cells whose
codes are the target's or the partner's in each dimension by the level, with sign
``-1`` for each dimension where the two codes are siblings and ``+1`` where one of them
is the parent. Every relation along a dimension then sees two cells moving, which
balance: two siblings in opposite directions, or a parent and its child together. This
is the rectangle (two dimensions) or the box (three or more) of seed 000's examples of
disclosure by differencing, read the other way round: when all its cells are withheld and
each can move by the level in its direction within the attacker's bounds, the attacker
cannot pin the target closer than the level, and no LP is needed to know it.

In a subtable whose pattern is safe or nearly so most attacks are answered this way.
Measured on the generated flat 300 x 42 two-way table with holdings (``flat13k2d``, one
subtable of 12,943 cells, no complement needed): a whole-subtable attacker LP took about
30 ms, so the first round of its 11,176 outsider attacks ran out of a 30 s share.

Nothing is taken on trust: every box found is checked against the subtable's own
relations and bounds (:func:`~tablesafe.suppress.subtable_tables.tables_under`) before it
answers an attack; a box that fails the check (a subtable whose relations are not the
grid's) is dropped and the attack goes to its LP.
"""

from __future__ import annotations

import dataclasses
import itertools
import time

import numpy as np

from tablesafe.problem import Problem
from tablesafe.suppress.attack_runs import OutOfTime
from tablesafe.suppress.attacker import SINGLETON_WEIGHT, UP, Attack, Bounds, Key
from tablesafe.suppress.subtable_tables import tables_under

OUTER_WEIGHT = 4.0
"""How much more a cell weighs in the choice of a box when it lies in relations outside
the subtable (``outer``): a box that moves none of those, its target aside, is a
certificate of the whole table as well, which the full-table check then takes with no LP
(:mod:`tablesafe.suppress.subtable_tables`)."""

SLICED_FROM = 4096
"""Grids of more points than this are searched one key at a time, crossing only the
partners whose own corner can move (a flat 300 x 42 table: about 120 microseconds a
key, against 570 for the gathers of many keys at once over the whole grid; on the
120-point subtables of a 1,872-cell three-way table the gathers are 4x faster than one
key at a time)."""

CHUNK_ENTRIES = 1_000_000
"""Keys times grid points handled in one array (a flat 300 x 42 subtable: 77 keys)."""

SLACK = 1e-9
"""Relative tolerance when a cell's room is compared with the level."""


def _check(deadline: float | None) -> None:
    if deadline is not None and time.monotonic() > deadline:
        raise OutOfTime


def _sign(partner: np.ndarray, code: np.ndarray | int) -> np.ndarray:
    """The sign of a box corner's move in one dimension: -1 where the partner and the
    target's code are siblings, +1 where one of them is the parent (index 0)."""
    return np.where((partner == 0) | (code == 0), 1.0, -1.0)


@dataclasses.dataclass(frozen=True)
class SubtableGrid:
    """Where a subtable's cells lie on its grid of codes.

    Attributes:
        local: per grid point (one axis per dimension, the parent code at index 0 and
            its children after it), the cell's position in the subtable.
    """

    local: np.ndarray

    @property
    def shape(self) -> tuple[int, ...]:
        """Codes per dimension (the parent included)."""
        return tuple(self.local.shape)

    def coordinates(self, n: int) -> np.ndarray:
        """Per subtable cell (``n`` of them), its grid index in each dimension."""
        out = np.full((n, self.local.ndim), -1, dtype=np.int64)
        idx = np.indices(self.shape).reshape(self.local.ndim, -1).T
        out[self.local.ravel()] = idx
        return out


class BoxTables:
    """The box certificates of one subtable (see the module); call with the pattern
    ``x`` (possibly fractional: each cell's room scales with it, as in the attacker's
    LP) and the attacks to answer. The attacks it answers come back as passing
    :class:`~tablesafe.suppress.attacker.Attack` objects carrying their table."""

    def __init__(self, sub: Problem, bounds: Bounds, grid: SubtableGrid,
                 outer: np.ndarray | None = None) -> None:
        self.sub = sub
        self.bounds = bounds
        self.grid = grid
        self.coords = grid.coordinates(sub.n)
        cost = np.abs(sub.cost).astype(float)
        top = float(cost.max()) if sub.n and cost.max() > 0 else 1.0
        # the attacker LP's sparse certificates' weights (single respondents' cells avoided)
        weight = (1.0 + cost / top) * np.where(bounds.singleton, SINGLETON_WEIGHT, 1.0)
        if outer is not None:
            weight = weight * np.where(outer, OUTER_WEIGHT, 1.0)
        self.weight = weight
        self.grid_weight = weight[grid.local]
        self.shape = grid.shape
        self.local = grid.local.ravel()
        # per dimension, the grid index of each grid point (flat, C order)
        self.point = [np.asarray(p).ravel() for p in np.indices(self.shape)]
        self.strides = [int(np.prod(self.shape[k + 1:])) for k in range(len(self.shape))]
        # the box's corners by the dimensions in which they take the partner's code
        self.subsets = [dims for n in range(len(self.shape) + 1)
                        for dims in itertools.combinations(range(len(self.shape)), n)]
        # the answers under the last pattern asked about (the cut rounds, the insiders'
        # round and the moves of one subtable often ask about the same pattern)
        self._x: np.ndarray | None = None
        self._memo: dict[tuple[Key, tuple[int, ...]], Attack | None] = {}

    def __call__(self, x: np.ndarray, keys: list[Key], also_fixed: dict[Key, tuple[int, ...]] | None = None,
                 deadline: float | None = None) -> dict[Key, Attack]:
        """The attacks of ``keys`` answered by boxes under ``x`` (``also_fixed``: further
        cells each attacker knows); past ``deadline`` (``time.monotonic()``)
        :class:`~tablesafe.suppress.attack_runs.OutOfTime` is raised."""
        if self._x is None or not np.array_equal(self._x, x):
            self._x = np.array(x, dtype=float)
            self._memo = {}
        out: dict[Key, Attack] = {}
        ask = []
        for key in keys:
            memo = (key, tuple(also_fixed.get(key, ())) if also_fixed else ())
            if memo not in self._memo:
                ask.append(memo)
            elif (got := self._memo[memo]) is not None:
                out[key] = got
        if ask:
            new = self._search(x, [key for key, _ in ask], also_fixed, deadline)
            for memo in ask:
                self._memo[memo] = new.get(memo[0])
            out.update(new)
        return out

    def _search(self, x: np.ndarray, keys: list[Key], also_fixed: dict[Key, tuple[int, ...]] | None,
                deadline: float | None) -> dict[Key, Attack]:
        """Box certificates for ``keys`` under ``x``, checked (see the module)."""
        b = self.bounds
        on = x > 0
        xs = np.where(on, x, 1.0)
        room_up = np.where(on, b.up * xs, 0.0)
        room_dn = np.where(on, b.dn * xs, 0.0)
        t = np.array([k[0] for k in keys], dtype=np.int64)
        d = np.array([k[1] for k in keys], dtype=np.int64)
        s = np.array([k[2] for k in keys], dtype=np.int64)
        level = np.where(d == UP, b.req_up[t], b.req_dn[t])
        own = np.where(on[t], np.where(d == UP, b.tup[t], b.tdn[t]) * xs[t], 0.0)
        fixed = [tuple(also_fixed.get(k, ())) if also_fixed else () for k in keys]
        ask = np.flatnonzero((b.req_sl[t] <= 0) & (level > 0) & (own >= level * (1 - SLACK))
                             & (self.coords[t] >= 0).all(axis=1))
        found = []
        size = self.local.size
        if size > SLICED_FROM:
            # a large grid: one key at a time, over the partners whose own corner can move
            grid = self.grid.local
            for n, i in enumerate(ask.tolist()):
                if n % 32 == 0:
                    _check(deadline)
                box = self._box_sliced(int(t[i]), int(d[i]), float(level[i]),
                                       ([int(s[i])] if s[i] >= 0 else []) + list(fixed[i]),
                                       room_up[grid], room_dn[grid])
                if box is not None:
                    found.append((keys[i], *box))
            return tables_under(self.sub, b, x, found) if found else {}
        chunk = max(1, CHUNK_ENTRIES // max(size, 1))
        for lo in range(0, len(ask), chunk):
            _check(deadline)
            idx = ask[lo:lo + chunk]
            best = self._boxes(t[idx], d[idx], s[idx], level[idx], room_up, room_dn,
                               [fixed[i] for i in idx.tolist()])
            for j, box in enumerate(best):
                if box is not None:
                    found.append((keys[int(idx[j])], *box))
        return tables_under(self.sub, b, x, found) if found else {}

    def _boxes(self, t: np.ndarray, d: np.ndarray, s: np.ndarray, level: np.ndarray, room_up: np.ndarray,
               room_dn: np.ndarray, fixed: list[tuple[int, ...]]) -> list[tuple[np.ndarray, np.ndarray] | None]:
        """Per key (target ``t``, direction ``d``, insider ``s``, ``level``; the cells the
        attacker also knows, ``fixed``), the cheapest box: (cells, deviations) or None."""
        local = self.local
        a = self.coords[t]  # (keys, dims)
        need = (level * (1 - SLACK))[:, None]
        feasible = np.ones((len(t), local.size), dtype=bool)
        cost = np.zeros((len(t), local.size))
        for dims in self.subsets[1:]:
            flat, sign = self._points(a, dims)
            cells = local[flat]
            up = sign * d[:, None] > 0
            feasible &= np.where(up, room_up[cells] >= need, room_dn[cells] >= need)
            feasible &= cells != s[:, None]
            cost += self.weight[cells]
            for j, f in enumerate(fixed):
                if f:
                    feasible[j] &= ~np.isin(cells[j], f)
        for k in range(a.shape[1]):
            feasible &= self.point[k][None, :] != a[:, k][:, None]  # a partner differs from the target's code
        pick = np.argmin(np.where(feasible, cost, np.inf), axis=1)
        out: list[tuple[np.ndarray, np.ndarray] | None] = [None] * len(t)
        rows = np.flatnonzero(feasible[np.arange(len(t)), pick])
        if not len(rows):
            return out
        chosen = np.stack([self.point[k][pick[rows]] for k in range(a.shape[1])], axis=1)
        cells, devs = self._corners(a[rows], chosen, d[rows], level[rows])
        for j, r in enumerate(rows.tolist()):
            out[r] = (cells[j], devs[j])
        return out

    def _corners(self, a: np.ndarray, chosen: np.ndarray, d: np.ndarray,
                 level: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Per key (target coordinates ``a``, the partners ``chosen``, direction and
        level), the box's ``2**dims`` cells (the target first) and their deviations."""
        cells = np.empty((len(a), len(self.subsets)), dtype=np.int64)
        devs = np.empty((len(a), len(self.subsets)))
        for i, dims in enumerate(self.subsets):
            coord = a.copy()
            sign = np.ones(len(a))
            for k in dims:
                coord[:, k] = chosen[:, k]
                sign *= _sign(chosen[:, k], a[:, k])
            cells[:, i] = self.local[np.ravel_multi_index(tuple(coord.T), self.shape)]
            devs[:, i] = d * sign * level
        return cells, devs

    def _points(self, a: np.ndarray, dims: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray]:
        """For each key (target coordinates ``a``) and each grid point taken as the
        partners, the flat grid index of the box's corner that takes the partner's code in
        ``dims`` and the target's elsewhere, and that corner's sign."""
        flat = np.zeros((len(a), self.local.size), dtype=np.int64)
        sign = np.ones((len(a), self.local.size))
        for k, stride in enumerate(self.strides):
            if k in dims:
                p = self.point[k][None, :]
                flat += stride * p
                sign *= _sign(p, a[:, k][:, None])
            else:
                flat += stride * a[:, k][:, None]
        return flat, sign

    def _box_sliced(self, t: int, d: int, level: float, known: list[int], room_up: np.ndarray,
                    room_dn: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
        """The cheapest box of one key on a large grid (``room_up``, ``room_dn`` on the
        grid's shape): (cells, deviations) or None. Only partners whose own corner (the
        target's codes but one) can move are crossed, so the work follows the withheld
        cells in the target's lines, not the grid's size."""
        a = self.coords[t]
        shape = self.shape
        ndim = len(shape)
        need = level * (1 - SLACK)
        ok_up = room_up >= need
        ok_dn = room_dn >= need
        if known:
            at = self.coords[np.asarray(known, dtype=np.int64)]
            at = at[(at >= 0).all(axis=1)]
            ok_up[tuple(at.T)] = False
            ok_dn[tuple(at.T)] = False
        sign = [_sign(np.arange(n), a[k]) for k, n in enumerate(shape)]
        cand = []
        for k in range(ndim):
            line = tuple(slice(None) if i == k else int(a[i]) for i in range(ndim))
            ok = np.where(sign[k] * d > 0, ok_up[line], ok_dn[line])
            ok[int(a[k])] = False  # a partner differs from the target's code
            c = np.flatnonzero(ok)
            if not len(c):
                return None
            cand.append(c)
        feasible = np.ones([len(c) for c in cand], dtype=bool)
        cost = np.zeros(feasible.shape)
        axes = [[-1 if i == k else 1 for i in range(ndim)] for k in range(ndim)]
        for dims in self.subsets[1:]:
            index = tuple(cand[k].reshape(axes[k]) if k in dims else int(a[k]) for k in range(ndim))
            corner = np.ones([1] * ndim)
            for k in dims:
                corner = corner * sign[k][cand[k]].reshape(axes[k])
            if len(dims) > 1:  # (single dimensions were sifted above)
                feasible &= np.where(corner * d > 0, ok_up[index], ok_dn[index])
            cost = cost + self.grid_weight[index]
        if not feasible.any():
            return None
        pick = np.unravel_index(int(np.argmin(np.where(feasible, cost, np.inf))), feasible.shape)
        best = np.array([[cand[k][pick[k]] for k in range(ndim)]], dtype=np.int64)
        cells, devs = self._corners(a[None, :], best, np.array([d]), np.array([level]))
        return cells[0], devs[0]
