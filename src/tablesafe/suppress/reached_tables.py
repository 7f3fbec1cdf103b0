"""Tables the attacker has already found in a block, reused to answer later attacks.

Every passing attack of :class:`~tablesafe.suppress.attacker.BlockLP` leaves a feasible
table: deviations ``z`` from the truth with ``A z = 0`` that stay within the attacker's
box of each withheld cell and move only withheld cells. Such a table moves other
targets too. When it moves target ``k`` by at least ``k``'s level in the direction
attacked, and moves none of the cells the attacker knows (an insider's own cell, cells
fixed with it), the attack on ``k`` passes with no LP of its own: the table is a
certificate for ``k`` as it stands (scaled towards the truth it moves ``k`` by exactly
its level, and scaled tables stay feasible because the truth is).

A table is kept at the furthest multiple of it that stays within the boxes, either way
(:func:`_scales`): every multiple of a table is one (``A z = 0`` is linear), so a
table that moves a cell up by ``a`` also moves it down by ``a`` turned round, and
further where its cells have room. An answer is the multiple moving its target by
exactly the level, like a sparse certificate. Measured with ``suppress(problem,
"auto")`` on one worker on generated tables with holdings (sixty-second session), with
the neighbourhoods sharing the block's tables
(:mod:`~tablesafe.suppress.neighbourhood_attacks`): LPs 8,295 -> 7,994 on the
13,167-cell two-way table (the same pattern), 14,396 -> 13,295 on the 1,872-cell
three-way one (7.286 -> 7.295 M), 27,263 -> 27,178 on the 61,215-cell two-way one (the
same pattern). Answering the block's own attacks from the tables with no sparse
certificate of their own (``certify`` off) saved another 340-570 LPs but withheld 1.7 %
more on the three-way table (its cleanup then had wider tables to keep).

Only whether the attack passes is learnt this way, not how far the attacker could go:
the :class:`~tablesafe.suppress.attacker.Attack` it returns carries the table's move of
``k`` as ``reached``, a lower bound of the attacker's optimum that is at least the
level. Attacks with a sliding level (which compare the true reach up and down) and
failing attacks (which need the LP's duals for their cuts) always get their LP.

A target may move within its whole a priori interval, other cells only within their
box as complements (narrower with the capacity option): a table is kept only when it
moves its own target within that box too, so that it is feasible for every other
target's attack.

Per cell of the block only the table moving it furthest each way is kept, so a lookup
is one comparison; the tables themselves are kept whole for the certificates.

Each target's own tables (its outsider's and its insiders' attacks, in the order found)
are kept as well: one of them that leaves an insider's cell alone answers that
insider's attack and is a sparse certificate of the target already, so it needs no LP
at all (:meth:`ReachedTables.own_answer`). Measured on a generated 1,872-cell three-way
table with holdings whose repair attacks about ten insiders per target, the repair ran
42.5 s instead of 46.1 s.
"""

from __future__ import annotations

import numpy as np

from tablesafe.suppress.attacker import UP, Attack, BlockLP, Key, moves_any
from tablesafe.suppress.flow_attacks import FlowBlock

__all__ = ["ReachedTables", "answer_from_tables"]


class ReachedTables:
    """The tables found so far in one block (positions are the block's columns)."""

    def __init__(self, cells: np.ndarray, up: np.ndarray, dn: np.ndarray) -> None:
        """``cells``: the block's cells in increasing order (a cell's position is found
        by bisection); ``up``, ``dn``: how far each may move up and down as a complement
        (the block model's bounds for cells other than the target)."""
        assert cells.size < 2 or bool((np.diff(cells) > 0).all()), "the block's cells must be sorted"
        self.cells = cells
        self.up = up
        self.dn = dn
        nc = len(cells)
        self.best_up = np.zeros(nc)  # furthest move up of each cell by a kept table
        self.best_dn = np.zeros(nc)
        self.up_table = np.full(nc, -1, dtype=np.int64)
        self.dn_table = np.full(nc, -1, dtype=np.int64)
        self.tables: list[tuple[np.ndarray, np.ndarray]] = []  # (cells, deviations)
        self.own: dict[tuple[int, int], list[Attack]] = {}  # each target's own tables, per direction

    def add(self, attack: Attack) -> None:
        """Keep the table of a passing attack (its cells and deviations)."""
        if not attack.ok or not np.isfinite(attack.reached) or not len(attack.cells):
            return
        self.own.setdefault((attack.target, attack.direction), []).append(attack)
        pos = np.searchsorted(self.cells, attack.cells)  # (its cells are the block's)
        dev = np.asarray(attack.dev, dtype=float)
        t = len(self.tables)
        self.tables.append((attack.cells, attack.dev))
        # the table at its furthest multiple within the boxes, forwards and turned round
        for scale in _scales(dev, self.up[pos], self.dn[pos]):
            moved = scale * dev
            better = moved > self.best_up[pos]
            self.best_up[pos[better]] = moved[better]
            self.up_table[pos[better]] = t
            better = -moved > self.best_dn[pos]
            self.best_dn[pos[better]] = -moved[better]
            self.dn_table[pos[better]] = t

    def answer(self, target: int, direction: int, insider: int, required: float,
               known: tuple[int, ...] = ()) -> Attack | None:
        """A passing attack on ``target`` from a kept table, or None when no kept table
        reaches ``required`` without moving ``insider``'s cell or a cell of ``known``."""
        j = int(np.searchsorted(self.cells, target))
        if j >= self.cells.size or self.cells[j] != target or required <= 0:
            return None
        reach = self.best_up[j] if direction == UP else self.best_dn[j]
        t = int(self.up_table[j] if direction == UP else self.dn_table[j])
        if t < 0 or reach < required:
            return None
        cells, dev = self.tables[t]
        fixed = [c for c in (insider, *known) if c >= 0 and c != target]
        if fixed and np.isin(cells, fixed).any():
            return None
        # the multiple of the kept table moving the target by exactly its level (as a
        # sparse certificate does); ``reached`` says how far the table may go
        dev = dev * (direction * required / float(np.sum(dev[cells == target])))
        return Attack(int(target), direction, int(insider), float(reach), float(required),
                      cells=cells, dev=dev)

    def own_answer(self, target: int, direction: int, insider: int, required: float,
                   known: tuple[int, ...] = ()) -> Attack | None:
        """A passing attack on ``target`` from one of its own earlier tables (the
        outsider's or another insider's, in the order found) that reaches ``required``
        and moves neither ``insider``'s cell nor a cell of ``known``; None when none
        does. Such a table is a sparse certificate of the target already: each insider
        it leaves alone needs no LP of its own."""
        fixed = [c for c in (insider, *known) if c >= 0 and c != target]
        for att in self.own.get((target, direction), ()):
            # what the table itself moves the target by (the attacker's optimum found
            # with other cells known may be more than this attacker reaches)
            moved = float(direction * np.sum(att.dev[att.cells == target]))
            if moved < required - 1e-9 * max(1.0, required):
                continue
            if moves_any(att, fixed):
                continue
            return Attack(int(target), direction, int(insider), moved, float(required), cells=att.cells, dev=att.dev)
        return None


MAX_SCALE = 1e6
"""The largest factor a table is stretched by (a box without end would allow any)."""


def _scales(dev: np.ndarray, up: np.ndarray, dn: np.ndarray) -> tuple[float, float]:
    """The multiples ``s`` and ``-r`` of ``dev`` furthest either way within the boxes
    (``-dn <= s * dev <= up`` per cell), ``s`` and ``r`` at most :data:`MAX_SCALE`."""
    pos, neg = dev > 0, dev < 0
    fwd = min(float(np.min(up[pos] / dev[pos], initial=np.inf)),
              float(np.min(dn[neg] / -dev[neg], initial=np.inf)))
    bwd = min(float(np.min(dn[pos] / dev[pos], initial=np.inf)),
              float(np.min(up[neg] / -dev[neg], initial=np.inf)))
    return min(fwd, MAX_SCALE), -min(bwd, MAX_SCALE)


def answer_from_tables(found: ReachedTables, lp: BlockLP | FlowBlock | None, key: Key, req: float,
                       extra: tuple[int, ...], certify: bool) -> Attack | None:
    """A passing attack from a table found earlier in the block, or None: first a table
    of the target's own attacks (another insider's) that leaves this insider's cell
    alone, already the target's sparse certificate; then any table reaching the level,
    which gets the target's own sparse certificate on ``lp`` when ``certify``."""
    k, d, s = key
    own = found.own_answer(k, d, s, req, extra)
    if own is not None:
        return own
    reused = found.answer(k, d, s, req, extra)
    if reused is None or not certify:
        return reused
    assert lp is not None, "a sparse certificate needs the block's model"
    return lp.certify(reused, extra)
