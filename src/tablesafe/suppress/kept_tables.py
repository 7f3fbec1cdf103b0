"""Passing tables of a network subtable's attacks kept from one master pattern to the next.

A HiTaS subtable of a two-way table is protected by rounds (:mod:`tablesafe.suppress.
subtable_cuts`): the master proposes a pattern, possibly fractional on its LP relaxation,
every attack is run on it by flows (:mod:`tablesafe.suppress.flow_attacks`), and each
failing attack's minimum cut goes back to the master. Most attacks pass round after
round, and a table that passed on the last pattern often still fits the next one: every
cell it moves may still move that far (a cell's bounds scale with its share in the
pattern). Such an attack passes again, so its flow is not run; only a verdict and, for
a failing attack, its cut reach the master, and failing attacks are always fresh flows.
The master therefore sees the same rounds with or without kept tables.

Which tables are fresh is recorded too: the tables a subtable hands on must be the
cheapest ones on its final pattern, and only fresh flow tables are (a single
respondent's table counts as fresh only when no table of that round was kept, as its
group of single respondents depends on which of its target's attacks were answered).
"""

from __future__ import annotations

import numpy as np

from tablesafe.suppress.attacker import UP, Attack, Bounds, Key
from tablesafe.suppress.subtable_tables import outside_box

__all__ = ["KeptTables", "by_flow"]


def by_flow(bounds: Bounds, key: Key) -> bool:
    """Whether :class:`~tablesafe.suppress.flow_attacks.FlowBlock` answers attack ``key``
    on a withheld target by a flow (not a sliding level, a level within the target's own
    interval), so that its table is the sparse certificate."""
    k, d, _ = key
    req = bounds.req_up[k] if d == UP else bounds.req_dn[k]
    own = bounds.tup[k] if d == UP else bounds.tdn[k]
    return bool(bounds.req_sl[k] <= 0 and 0 < req <= own)


class KeptTables:
    """The passing flow tables of the last round of attacks, and which were fresh."""

    def __init__(self, bounds: Bounds) -> None:
        self.bounds = bounds
        self.passed: dict[Key, Attack] = {}
        self.fresh: set[Key] = set()

    def known(self, x: np.ndarray) -> dict[Key, Attack] | None:
        """The kept tables that fit the pattern ``x`` (possibly fractional): every cell
        they move within its bounds scaled by its share, the target within its own."""
        if not self.passed:
            return None
        keys = list(self.passed)
        atts = [self.passed[key] for key in keys]
        lens = np.fromiter((len(a.cells) for a in atts), dtype=np.int64, count=len(atts))
        cells = np.concatenate([np.asarray(a.cells, dtype=np.int64) for a in atts])
        dev = np.concatenate([np.asarray(a.dev, dtype=float) for a in atts])
        owner = np.repeat(np.arange(len(atts)), lens)
        target = np.array([key[0] for key in keys], dtype=np.int64)[owner]
        bad = outside_box(self.bounds, x, cells, dev, cells == target)
        fits = np.bincount(owner[bad], minlength=len(atts)) == 0
        return {key: a for key, a, ok in zip(keys, atts, fits.tolist()) if ok} or None

    def update(self, atts: dict[Key, Attack], known: dict[Key, Attack] | None) -> None:
        """Keep the passing flow tables of ``atts`` (attacked with ``known`` given) for the
        next round, and record which of them are fresh."""
        kept = {id(a) for a in known.values()} if known else set()
        self.fresh = {key for key, a in atts.items() if id(a) not in kept and (key[2] < 0 or not kept)}
        self.passed = {key: a for key, a in atts.items() if a.ok and by_flow(self.bounds, key)}
