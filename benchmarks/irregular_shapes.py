"""Generated tables whose hierarchies are irregular, as real classifications are.

`tablesafe.synthetic` builds balanced hierarchies: every node at a depth has the same
number of children and every leaf sits at the bottom. Classifications an office
publishes are not like that: some sections have one division (a total equal to its
only part), some stop at the first level while others go three levels down, and fan-outs
run from 2 to a dozen. These shapes draw such a tree per dimension and place the
enterprises of :func:`tablesafe.synthetic.synthetic_data` (holdings, skewed turnover)
on its leaves, members of a holding often on the holding's leaf.

Used by ``compare_tauargus.py`` and ``suppress_castro.py`` through ``--sizes`` /
``--shapes`` (the names of :data:`IRREGULAR`).
"""

from __future__ import annotations

import numpy as np

from tablesafe.structure import Hierarchy
from tablesafe.synthetic import SyntheticData, synthetic_data

IRREGULAR: dict[str, dict] = {
    # two-way, three levels each, some single children
    "irr2d_a": {"dims": [(3, 0.15), (3, 0.15)], "units": 12_000},
    # two-way, one deep (four levels, a quarter single children) and one short
    "irr2d_b": {"dims": [(4, 0.25), (2, 0.1)], "units": 30_000},
    # two-way, about 13,000 cells
    "irr2d_c": {"dims": [(4, 0.2), (3, 0.2)], "units": 40_000},
    # three-way, two short irregular dimensions and a flat one
    "irr3d_a": {"dims": [(2, 0.3), (2, 0.2), (1, 0.0)], "units": 8_000},
    # three-way, about 13,000 cells
    "irr3d_b": {"dims": [(3, 0.15), (2, 0.3), (1, 0.0)], "units": 15_000},
}
"""Irregular shapes: per dimension (deepest level, share of single children)."""

SEEDS = {"irr2d_a": 1, "irr2d_b": 2, "irr2d_c": 6, "irr3d_a": 3, "irr3d_b": 5}
"""The seed each shape is drawn with when the run's seed is 1 (another run seed moves
them all by the same step), chosen so the five differ in fan-outs."""

LEAF_SHARE = 0.25
"""Chance that a node below the total stops as a leaf before the deepest level."""

FAN_OUT = (2, 8)
"""Fewest and most children of a node that has more than one."""

HOLDING_SHARE_OF_CODES = 0.6
"""Chance that an enterprise takes its holding's leaf in a dimension (else its own)."""


def irregular_hierarchy(prefix: str, depth: int, single: float, rng: np.random.Generator) -> tuple[Hierarchy, list[str]]:
    """A random hierarchy of at most ``depth`` levels below ``Total``: a node is a leaf
    with chance :data:`LEAF_SHARE` (below the total), else it has one child with chance
    ``single`` (below the total) or 2-8 children. Returns it and its leaves."""
    tree: dict[str, list[str]] = {"Total": []}
    queue = [("Total", 0)]
    leaves: list[str] = []
    made = 0
    while queue:
        node, level = queue.pop(0)
        if level >= depth or (level > 0 and rng.random() < LEAF_SHARE):
            leaves.append(node)
            continue
        one = level > 0 and rng.random() < single
        count = 1 if one else int(rng.integers(FAN_OUT[0], FAN_OUT[1] + 1))
        kids = []
        for _ in range(count):
            made += 1
            kids.append(f"{prefix}{made}")
            queue.append((kids[-1], level + 1))
        tree[node] = kids
    return Hierarchy.from_tree("Total", tree), leaves


def irregular_data(name: str, seed: int = 1, cohesion: float = 0.7) -> SyntheticData:
    """The enterprises of shape ``name`` (:data:`IRREGULAR`) on irregular hierarchies."""
    spec = IRREGULAR[name]
    draw = SEEDS[name] + seed - 1
    rng = np.random.default_rng(draw)
    dims = spec["dims"]
    base = synthetic_data([[2]] * len(dims), spec["units"], seed=draw, holding_cohesion=cohesion)
    data = base.data.copy()
    hold = data[base.holding].to_numpy()
    hierarchies = {}
    for dim, (depth, single) in zip(base.hierarchies, dims):
        h, leaves = irregular_hierarchy(dim[0].upper(), depth, single, rng)
        data[dim] = leaf_codes(leaves, hold, rng, spread=1.0, holding_share=HOLDING_SHARE_OF_CODES)
        hierarchies[dim] = h
    return SyntheticData(data=data, hierarchies=hierarchies, response=base.response, holding=base.holding)


def leaf_codes(leaves: list[str], hold: np.ndarray, rng: np.random.Generator, *, spread: float,
               holding_share: float) -> np.ndarray:
    """One dimension's code for each enterprise (``hold``: its holding's number): leaves
    are popular by lognormal weights of sigma ``spread``; an enterprise takes its
    holding's leaf with chance ``holding_share``, else a leaf of its own."""
    weight = rng.lognormal(0.0, spread, size=len(leaves))
    weight /= weight.sum()
    codes = np.asarray(leaves, dtype=object)
    by_holding = rng.choice(len(leaves), size=int(hold.max()) + 1, p=weight)
    own = rng.choice(len(leaves), size=len(hold), p=weight)
    same = rng.random(len(hold)) < holding_share
    return codes[np.where(same, by_holding[hold], own)]
