"""Chain certificates: a deviation that needs no LP, for targets left when time runs out.

On a table with hierarchical dimensions (:class:`TableChains`) a target first tries a
*box*: the product over the dimensions of one vector per dimension that keeps that
dimension's hierarchy (each parent's entry the sum of its children's). In dimension
``j`` the vector is +1 on the target's code and on a path from it down to a bottom code,
and -1 on a sibling code (same parent) and a path from that one down; on the root code,
which has no sibling, just the path down. The product keeps every relation: a relation
runs along one dimension with the other codes fixed, and there the vector adds up. A
target at the bottom of every hierarchy gets the ``2^dims`` cells crossing its codes
with one sibling code per dimension. A box's cells that are not inside the target must
not be single respondents' cells; the cheapest box is taken. Otherwise the *chain*
of a target
``t`` is a bottom cell ``b`` inside ``t`` (``t`` itself when it is one) together with
every total that contains ``b``: in each dimension ``b``'s code and its ancestors,
crossed over the dimensions. Moving all of them by the same amount keeps every relation:
a relation whose total is in the chain has exactly one part in it (the child on the way
down to ``b``), and a relation whose total is not has none. Every cell of the chain
contains ``b``, which is not empty, so each shares a respondent with ``t``: no single
respondent's certificate is needed (the rule's protection level allows for the target's
own contributors).

Without a table structure (:class:`RelationChains`) the chain is read from the
relations: the *total* of a relation is its one cell whose coefficient has the other
sign, a *bottom* cell is the total of no relation. Going down from the target (from a
total to its parts) reaches bottom cells; the chain of such a bottom cell ``b`` is ``b``
with every cell reached by going up from it (from a part to the relation's total). On a
table of hierarchical dimensions written as relations this is exactly the chain above;
on other relations it is kept only when it contains the target and every relation it
touches still adds up. Where no bottom cell gives one, the chain is grown relation by
relation (:func:`relation_chain`): move the target by +1 and balance every relation
that no longer adds up by moving one more cell of it, its total while that has not
moved, else one of its parts that has not moved (the cheapest that can move far
enough, cells already withheld first). Each cell moves once; a
relation that cannot be balanced that way ends the attempt.

A chain withholds many totals, so it is the way out when the time limit is reached
(:mod:`tablesafe.suppress.fast`), never the first choice. ``None`` from either means no
chain was found; the caller then falls back to the local search.
"""

from __future__ import annotations

from collections import deque

import numpy as np

from tablesafe.structure.overlap import CellOverlap
from tablesafe.suppress.local.relations import RelationIndex

__all__ = ["ChainRoom", "RelationChains", "TableChains", "relation_chain", "total_entries"]


class ChainRoom:
    """How far each cell may move, and what moving it costs, for chains.

    Args:
        movable: cells that may move at all.
        room_up, room_down: how far each cell may move up and down on its own.
        weight: the cost of withholding each cell.
        withheld: cells withheld so far (moving them costs nothing new).
    """

    def __init__(self, movable: np.ndarray, room_up: np.ndarray, room_down: np.ndarray,
                 weight: np.ndarray, withheld: np.ndarray) -> None:
        self.movable = movable
        self.room_up = room_up
        self.room_down = room_down
        self.weight = weight
        self.withheld = withheld

    def fits(self, cells: np.ndarray, unit: np.ndarray, up: float, down: float) -> np.ndarray:
        """Which ``cells`` can move by ``unit * up`` and by ``-unit * down`` (the target
        moving up by ``up`` and down by ``down``) within their ranges."""
        a = np.abs(unit)
        rise = np.where(unit > 0, self.room_up[cells], self.room_down[cells])
        fall = np.where(unit > 0, self.room_down[cells], self.room_up[cells])
        slack = 1.0 + 1e-9
        return self.movable[cells] & (a * up <= rise * slack) & (a * down <= fall * slack)

    def price(self, cells: np.ndarray) -> np.ndarray:
        """Cost of moving each of ``cells`` (withheld cells almost free)."""
        return self.weight[cells] * np.where(self.withheld[cells], 1e-4, 1.0)


class TableChains:
    """Chains on a table with hierarchical dimensions (see the module text).

    Args:
        cells: code positions and ancestor relations of the table's cells.
        occupied: cells with at least one respondent (a chain's bottom cell must be one).
        size: how far each cell can move (paths down follow the largest; infinite
            counts as 0).
        max_bottom: most bottom cells inside a target that are looked at.
        tries: bottom cells tried, cheapest first, before giving up.
    """

    def __init__(self, cells: CellOverlap, occupied: np.ndarray, size: np.ndarray,
                 max_bottom: int = 100_000, tries: int = 5) -> None:
        self.cells = cells
        self.occupied = occupied
        self.size = np.where(np.isfinite(size), size, 0.0)
        self.max_bottom = max_bottom
        self.tries = tries
        self.parent = cells.parent
        self.bottom = [np.bincount(p[p >= 0], minlength=len(p)) == 0 for p in cells.parent]  # no children

    def box(self, t: int, room: ChainRoom, up: float, down: float, single: np.ndarray,
            budget: int = 5_000) -> tuple[np.ndarray, np.ndarray] | None:
        """``(cells, unit)`` of the cheapest box around ``t`` found (see the module text;
        ``t`` first), or ``None``.

        Boxes are tried level by level: first with a sibling of the target's own code in
        every dimension, then also with a sibling of its parent (the vector then also
        holds the parent), and so on up to the root. ``single``: cells a box may use only
        where they overlap ``t``; ``budget``: about how many combinations of siblings are tried
        per level (the cheapest siblings first; fewer at higher levels)."""
        g = self.cells
        code = g.idx[t]
        dims = len(g.anc)
        below = [self.path_down(code, j, int(code[j]))[1:] for j in range(dims)]
        ups = [self.ancestors(j, int(code[j])) for j in range(dims)]
        options: list[list[tuple[int, np.ndarray, np.ndarray]]] = [[] for _ in range(dims)]
        for top in range(max(len(u) for u in ups)):
            for j in range(dims):  # add this level's vectors (levels below were added before)
                if top < len(ups[j]):
                    options[j] += self._options(code, j, ups[j], top, below[j], room, up, down, single, budget)
            if not all(options):
                continue
            best = self._cheapest(t, options, top, room, up, down, single)
            if best is not None:
                return best
        return None

    def _options(self, code: np.ndarray, j: int, ups: np.ndarray, k: int, below: np.ndarray, room: ChainRoom,
                 up: float, down: float, single: np.ndarray, budget: int
                 ) -> list[tuple[int, np.ndarray, np.ndarray]]:
        """At level ``k`` of ``ups`` (the target's code and its ancestors, nearest
        first): ``(k, codes, unit)`` vectors of dimension ``j`` that keep its hierarchy."""
        g = self.cells
        own = np.concatenate((ups[: k + 1][::-1], below))
        a = int(ups[k])
        if self.parent[j][a] < 0:
            return [(k, own, np.ones(len(own)))]
        sib = self.siblings(j, a)
        at = np.repeat(code[None, :], len(sib), axis=0)
        at[:, j] = sib
        line = g.lookup(at)
        ok = line >= 0
        ok[ok] = room.fits(line[ok], -np.ones(int(ok.sum())), up, down) & ~single[line[ok]]
        sib, line = sib[ok], line[ok]
        out = []
        per = max(1, int(budget ** (1.0 / len(g.anc)) / (1 + k)))
        for s_code in sib[np.lexsort((sib, room.price(line)))][:per].tolist():
            other = self.path_down(code, j, s_code)
            out.append((k, np.concatenate((own, other)),
                        np.concatenate((np.ones(len(own)), -np.ones(len(other))))))
        return out

    def _cheapest(self, t: int, options: list[list[tuple[int, np.ndarray, np.ndarray]]], top: int,
                  room: ChainRoom, up: float, down: float, single: np.ndarray
                  ) -> tuple[np.ndarray, np.ndarray] | None:
        """The cheapest box among the products of one option per dimension with at least
        one at level ``top`` (the lower ones were tried before). All products are
        evaluated together, the shorter options padded with entries of unit 0 (which
        belong to no box)."""
        padded = [_padded(opts) for opts in options]
        cells, unit, mine = _products(self.cells, [c for _, c, _ in padded], [u for _, _, u in padded])
        live = unit != 0.0
        found = cells >= 0
        other = found & live & (cells != t)
        safe = np.maximum(cells, 0)
        ok = (found | ~live).all(axis=1)
        if top > 0:  # a product of lower levels only was tried before
            level = np.zeros([len(k) for k, _, _ in padded], dtype=np.int64)
            for j, (k, _, _) in enumerate(padded):
                view = [1] * len(padded)
                view[j] = len(k)
                level = np.maximum(level, k.reshape(view))
            ok &= level.ravel() == top
        if not ok.any():
            return None
        fit = room.fits(safe.ravel(), unit.ravel(), up, down).reshape(cells.shape)
        ok &= (fit | ~other).all(axis=1) & ~(single[safe] & ~mine & other).any(axis=1)
        if not ok.any():
            return None
        price = np.where(other, room.price(safe.ravel()).reshape(cells.shape), 0.0).sum(axis=1)
        price[~ok] = np.inf
        row = int(np.argmin(price))  # the first of the cheapest
        keep = live[row] & (cells[row] != t)
        return (np.concatenate(([t], cells[row][keep])).astype(np.int64),
                np.concatenate(([1.0], unit[row][keep])))

    def ancestors(self, j: int, c: int) -> np.ndarray:
        """``c`` and its ancestors in dimension ``j``, nearest first."""
        out = [c]
        while self.parent[j][out[-1]] >= 0:
            out.append(int(self.parent[j][out[-1]]))
        return np.array(out, dtype=np.int64)

    def path_down(self, code: np.ndarray, j: int, c: int) -> np.ndarray:
        """``c`` and a path of its descendants in dimension ``j`` down to a bottom code:
        at each step the child whose cell (the other codes as in ``code``) can move
        furthest (children without respondents are skipped)."""
        out = [c]
        g = self.cells
        while not self.bottom[j][c]:
            kids = np.flatnonzero(self.parent[j] == c)
            at = np.repeat(code[None, :], len(kids), axis=0)
            at[:, j] = kids
            line = g.lookup(at)
            ok = (line >= 0)
            ok[ok] = self.occupied[line[ok]]
            if not ok.any():
                break
            score = np.where(ok, self.size[np.maximum(line, 0)], -np.inf)
            c = int(kids[int(np.argmax(score))])
            out.append(c)
        return np.array(out, dtype=np.int64)

    def siblings(self, j: int, c: int) -> np.ndarray:
        """Codes of dimension ``j`` with the same parent as ``c`` (``c`` excluded)."""
        p = self.parent[j][c]
        if p < 0:
            return np.zeros(0, dtype=np.int64)
        sib = np.flatnonzero(self.parent[j] == p)
        return sib[sib != c]

    def direction(self, t: int, room: ChainRoom, up: float, down: float) -> tuple[np.ndarray, np.ndarray] | None:
        """``(cells, unit)`` of the cheapest chain of ``t`` found (``t`` first, every unit
        +1), or ``None``; ``up`` and ``down`` as in :func:`relation_chain`."""
        g = self.cells
        code = g.idx[t]
        below = [np.flatnonzero(anc[code[j]] & self.bottom[j]) for j, anc in enumerate(g.anc)]
        if int(np.prod([len(b) for b in below])) > self.max_bottom:
            return None
        grid = np.meshgrid(*below, indexing="ij")
        leaves = g.lookup(np.stack([x.ravel() for x in grid], axis=1))
        leaves = leaves[leaves >= 0]
        leaves = leaves[self.occupied[leaves]]
        ok = (leaves == t) | room.fits(leaves, np.ones(len(leaves)), up, down)
        leaves = leaves[ok]
        leaves = leaves[np.lexsort((leaves, room.price(leaves)))][: self.tries]
        for b in leaves.tolist():
            above = [np.flatnonzero(anc[:, g.idx[b, j]]) for j, anc in enumerate(g.anc)]
            grid = np.meshgrid(*above, indexing="ij")
            chain = g.lookup(np.stack([x.ravel() for x in grid], axis=1))
            if (chain < 0).any():
                continue
            rest = chain[chain != t]
            if len(rest) and room.fits(rest, np.ones(len(rest)), up, down).all():
                cells = np.concatenate(([t], rest)).astype(np.int64)
                return cells, np.ones(len(cells))
        return None


class RelationChains:
    """Chains on a problem given only by its relations (see the module text).

    Args:
        rel: the relations.
        occupied: cells with at least one respondent (a chain's bottom cell must be one).
        max_visit: most cells looked at going down from a target, and most cells in a
            chain (the time a target without a chain costs: measured on Castro's NINENEW,
            5,000 spent 2.2 s of a 30 s limit on targets that got none).
        tries: bottom cells tried, cheapest first, before growing a chain relation by
            relation.
    """

    def __init__(self, rel: RelationIndex, occupied: np.ndarray, max_visit: int = 2_000,
                 tries: int = 5) -> None:
        self.rel = rel
        self.occupied = occupied
        self.max_visit = max_visit
        self.tries = tries
        self.total_at = total_entries(rel)
        self.total = np.where(self.total_at >= 0, rel.row_cells[self.total_at], -1)  # each relation's total

    def direction(self, t: int, room: ChainRoom, up: float, down: float) -> tuple[np.ndarray, np.ndarray] | None:
        """``(cells, unit)`` of the cheapest chain of ``t`` found (``t`` first), or
        ``None``; ``up`` and ``down`` as in :func:`relation_chain`."""
        got = self._closure_chain(t, room, up, down)
        if got is None:
            return relation_chain(self.rel, t, room, up, down, max_cells=self.max_visit,
                                  total_at=self.total_at)
        return got

    def _closure_chain(self, t: int, room: ChainRoom, up: float, down: float
                       ) -> tuple[np.ndarray, np.ndarray] | None:
        """The cheapest chain of ``t`` made of a bottom cell and every cell above it."""
        leaves = self._bottoms(t)
        leaves = leaves[(leaves == t) | room.fits(leaves, np.ones(len(leaves)), up, down)]
        best: tuple[float, np.ndarray, np.ndarray] | None = None
        for b in leaves[np.lexsort((leaves, room.price(leaves)))][: self.tries].tolist():
            got = self._closure(b)
            if got is None:
                continue
            cells, unit = got
            at = np.flatnonzero(cells == t)
            if not len(at) or not np.isclose(unit[at[0]], 1.0):
                continue
            rest = cells != t
            if not room.fits(cells[rest], unit[rest], up, down).all():
                continue
            price = float(room.price(cells[rest]).sum())
            if best is None or price < best[0]:
                best = (price, cells[rest], unit[rest])
        if best is None:
            return None
        return np.concatenate(([t], best[1])).astype(np.int64), np.concatenate(([1.0], best[2]))

    def _bottoms(self, t: int) -> np.ndarray:
        """Occupied bottom cells reached going down from ``t`` (``t`` when it is one)."""
        rel = self.rel
        seen = {t}
        todo = [t]
        out = []
        while todo and len(seen) < self.max_visit:
            c = todo.pop()
            rows = rel.cell_rows[rel.cell_ptr[c]:rel.cell_ptr[c + 1]]
            rows = rows[self.total[rows] == c]
            if not len(rows):
                if self.occupied[c]:
                    out.append(c)
                continue
            for r in rows.tolist():
                for k in rel.row_cells[rel.row_ptr[r]:rel.row_ptr[r + 1]].tolist():
                    if k not in seen:
                        seen.add(k)
                        todo.append(k)
        return np.array(sorted(out), dtype=np.int64)

    def _closure(self, b: int, tol: float = 1e-9) -> tuple[np.ndarray, np.ndarray] | None:
        """``b`` moving by +1 and every cell above it moving with it, when that keeps
        every relation it touches (else ``None``)."""
        rel = self.rel
        dev = {b: 1.0}
        todo = [b]
        while todo:
            c = todo.pop()
            lo, hi = rel.cell_ptr[c], rel.cell_ptr[c + 1]
            for r, a in zip(rel.cell_rows[lo:hi].tolist(), rel.cell_coef[lo:hi].tolist()):
                top = int(self.total[r])
                if top < 0 or top == c:
                    continue
                x = -a * dev[c] / float(rel.row_coef[self.total_at[r]])
                if top in dev:
                    if abs(dev[top] - x) > tol:
                        return None
                    continue
                dev[top] = x
                if len(dev) > self.max_visit:
                    return None
                todo.append(top)
        cells = np.fromiter(dev.keys(), dtype=np.int64, count=len(dev))
        unit = np.fromiter(dev.values(), dtype=np.float64, count=len(dev))
        order = np.argsort(cells)
        cells, unit = cells[order], unit[order]
        rows = np.unique(rel.relations_of(cells))
        for r in rows.tolist():
            lo, hi = rel.row_ptr[r], rel.row_ptr[r + 1]
            rc = rel.row_cells[lo:hi]
            pos = np.searchsorted(cells, rc)
            hit = (pos < len(cells)) & (cells[np.minimum(pos, len(cells) - 1)] == rc)
            if abs(float(rel.row_coef[lo:hi][hit] @ unit[pos[hit]])) > tol:
                return None
        return cells, unit


def total_entries(rel: RelationIndex) -> np.ndarray:
    """Per relation, the entry (position in ``rel.row_cells``) of its total: the one cell
    whose coefficient has the other sign; -1 for a relation without one."""
    n_rows = rel.n_relations
    lens = np.diff(rel.row_ptr)
    neg = rel.row_coef < 0
    row_of = np.repeat(np.arange(n_rows), lens)
    n_neg = np.bincount(row_of, weights=neg, minlength=n_rows).astype(np.int64)
    one_neg = n_neg == 1
    one_pos = ~one_neg & (n_neg == lens - 1)
    at = np.flatnonzero((neg & one_neg[row_of]) | (~neg & one_pos[row_of]))
    out = np.full(n_rows, -1, dtype=np.int64)
    out[row_of[at]] = at
    return out


def relation_chain(rel: RelationIndex, t: int, room: ChainRoom, up: float, down: float,
                   max_cells: int = 10_000, tol: float = 1e-9, total_at: np.ndarray | None = None
                   ) -> tuple[np.ndarray, np.ndarray] | None:
    """A unit deviation (``t`` moving by +1) that keeps every relation, grown relation
    by relation (see the module text), or ``None``.

    Args:
        rel: the relations.
        t: the target.
        room: ranges and costs of the cells.
        up, down: how far the target must move up and down; every cell of the chain
            must be able to move by its unit deviation times these.
        max_cells: give up beyond this many cells.
        tol: a relation whose sum of deviations is within this of 0 holds.
        total_at: :func:`total_entries` of ``rel`` (computed when not given).

    Returns:
        ``(cells, unit)`` with ``t`` first, or ``None`` when no chain was found.
    """
    if total_at is None:
        total_at = total_entries(rel)
    dev: dict[int, float] = {t: 1.0}
    pending = deque(rel.cell_rows[rel.cell_ptr[t]:rel.cell_ptr[t + 1]].tolist())
    while pending:
        r = pending.popleft()
        lo, hi = rel.row_ptr[r], rel.row_ptr[r + 1]
        cells = rel.row_cells[lo:hi]
        coef = rel.row_coef[lo:hi]
        moved = np.fromiter((dev.get(c, 0.0) for c in cells.tolist()), dtype=np.float64, count=len(cells))
        residual = float(coef @ moved)
        if abs(residual) <= tol:
            continue
        total = int(total_at[r] - lo) if total_at[r] >= 0 else -1
        pick = _balancing_cell(cells, coef, total, moved != 0.0, residual, room, up, down)
        if pick < 0:
            return None
        c = int(cells[pick])
        dev[c] = -residual / float(coef[pick])
        if len(dev) > max_cells:
            return None
        pending.extend(rel.cell_rows[rel.cell_ptr[c]:rel.cell_ptr[c + 1]].tolist())
    out = np.fromiter(dev.keys(), dtype=np.int64, count=len(dev))
    unit = np.fromiter(dev.values(), dtype=np.float64, count=len(dev))
    return out, unit


def _balancing_cell(cells: np.ndarray, coef: np.ndarray, total: int, moved: np.ndarray, residual: float,
                    room: ChainRoom, up: float, down: float) -> int:
    """Position in ``cells`` of the cell that balances the relation (-1: none); ``total``:
    the position of the relation's total (-1: none)."""
    if total >= 0 and not moved[total]:
        u = np.array([-residual / coef[total]])
        if room.fits(cells[total:total + 1], u, up, down)[0]:
            return total
    cand = np.flatnonzero(~moved)
    if total >= 0:
        cand = cand[cand != total]
    if not len(cand):
        return -1
    unit = -residual / coef[cand]
    cand = cand[room.fits(cells[cand], unit, up, down)]
    if not len(cand):
        return -1
    price = room.price(cells[cand])
    return int(cand[np.lexsort((cells[cand], price))[0]])


def _padded(opts: list[tuple[int, np.ndarray, np.ndarray]]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One dimension's options as arrays, one row per option in the order given:
    ``(levels, codes, units)``, the shorter rows padded with their first code and unit 0."""
    width = max(len(v) for _, v, _ in opts)
    codes = np.empty((len(opts), width), dtype=np.int64)
    units = np.zeros((len(opts), width))
    for i, (_, v, u) in enumerate(opts):
        codes[i, : len(v)] = v
        codes[i, len(v):] = v[0]
        units[i, : len(v)] = u
    return np.array([k for k, _, _ in opts], dtype=np.int64), codes, units


def _products(g: CellOverlap, codes: list[np.ndarray], units: list[np.ndarray]
              ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For every choice of one row per dimension (``codes[j]``: one vector's codes per
    row, ``units[j]`` their units), the cells of the product of the chosen vectors
    (``-1`` where none), their units, and whether each is made of the target's own
    codes only (positive unit in every dimension: it overlaps the target): arrays of
    (choices, cells per product)."""
    dims = len(codes)
    m = [c.shape[0] for c in codes]
    ln = [c.shape[1] for c in codes]
    shape = (*m, *ln)
    strides = g.key_strides
    flat = np.zeros(shape, dtype=np.int64)
    unit = np.ones(shape)
    mine = np.ones(shape, dtype=bool)
    for j in range(dims):
        view = [1] * (2 * dims)
        view[j], view[dims + j] = m[j], ln[j]
        flat = flat + (codes[j] * int(strides[j])).reshape(view)
        unit = unit * units[j].reshape(view)
        mine = mine & (units[j] > 0).reshape(view)
    rows, cols = int(np.prod(m)), int(np.prod(ln))
    cells = g.lookup_keys(flat.ravel()).reshape(rows, cols)
    return cells, unit.reshape(rows, cols), mine.reshape(rows, cols)
