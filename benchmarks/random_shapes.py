"""Generated tables whose shape is drawn at random: tables no one chose.

The presets, ``compare_tauargus.VARIED`` and ``irregular_shapes.IRREGULAR`` are shapes
someone picked, and the issue says tables picked by us were kinder than real ones. A name
``rand<N>`` (``--sizes rand301,rand302`` in ``compare_tauargus.py``, ``--shapes`` in
``suppress_castro.py``) draws, from seed ``N`` alone:

- 2, 3 or 4 dimensions (chances 0.5, 0.4, 0.1);
- per dimension a balanced hierarchy of 1-4 levels with fan-outs of 2-12 per level (at
  most 6 in hierarchies of three or four levels), or
  (chance :data:`IRREGULAR_SHARE`) an irregular one of 1-4 levels (uneven fan-outs,
  single children, leaves at every depth; :func:`irregular_shapes.irregular_hierarchy`);
- 0.6-15 enterprises per cell (log-uniform), turnover log-sd 1.2-2.6, leaf popularity
  spread 0.3-2.0 (dense to sparse), holdings for 0-45 % of enterprises with cohesion 0-0.9;

and redraws the hierarchies until the table's cell count is within :data:`CELLS`. The draw is
described by :func:`describe`, so a table in RESULTS.md can be told apart and rebuilt.
"""

from __future__ import annotations

import re

import numpy as np
from irregular_shapes import HOLDING_SHARE_OF_CODES, irregular_hierarchy, leaf_codes

from tablesafe.structure import Hierarchy
from tablesafe.synthetic import SyntheticData, make_hierarchy, synthetic_data

NAME = re.compile(r"^rand(\d+)$")
"""Shape names this module answers."""

CELLS = (1_500, 25_000)
"""Fewest and most cells (all combinations of codes, totals included) of a drawn table."""

IRREGULAR_SHARE = 0.35
"""Chance that a dimension's hierarchy is irregular rather than balanced."""


def is_random(name: str) -> bool:
    """Whether ``name`` is a random shape (``rand<N>``)."""
    return NAME.match(name) is not None


def _hierarchy(dim: str, rng: np.random.Generator) -> tuple[Hierarchy, list[str], str]:
    """One dimension's hierarchy, its leaves and a short description."""
    prefix = dim[0].upper()
    depth = int(rng.integers(1, 5))
    if rng.random() < IRREGULAR_SHARE:
        single = float(rng.choice([0.0, 0.15, 0.3]))
        h, leaves = irregular_hierarchy(prefix, depth, single, rng)
        return h, leaves, f"irregular, {depth} level{'s' if depth > 1 else ''} ({len(h)} codes)"
    fan = [int(rng.integers(2, 13)) for _ in range(depth)]
    if depth >= 3:
        fan = [min(f, 6) for f in fan]  # deep and wide at once is rarely a real classification
    h = make_hierarchy(fan, prefix)
    return h, list(h.leaves), "x".join(map(str, fan))


def _draw(seed: int):
    """The drawn hierarchies (within :data:`CELLS`) and the data's parameters."""
    rng = np.random.default_rng(seed)
    dims = int(rng.choice([2, 3, 4], p=[0.5, 0.4, 0.1]))
    names = ["industry", "region", "size", "legal"][:dims]
    for _ in range(10_000):
        drawn = [_hierarchy(d, rng) for d in names]
        cells = int(np.prod([len(h) for h, _, _ in drawn]))
        if CELLS[0] <= cells <= CELLS[1]:
            break
    else:  # pragma: no cover - the bounds are wide enough for every seed tried
        raise ValueError(f"no shape of {CELLS[0]}-{CELLS[1]} cells drawn from seed {seed}")
    params = {
        "per_cell": float(np.exp(rng.uniform(np.log(0.6), np.log(15.0)))),
        "sigma": float(rng.uniform(1.2, 2.6)),
        "concentration": float(rng.uniform(0.3, 2.0)),
        "holding_share": float(rng.choice([0.0, 0.15, 0.3, 0.45])),
        "cohesion": float(rng.uniform(0.0, 0.9)),
    }
    return names, drawn, cells, params, rng


def describe(name: str) -> str:
    """A one-line description of shape ``name``: hierarchies, cells and data parameters."""
    seed = int(NAME.match(name).group(1))  # type: ignore[union-attr]
    names, drawn, cells, prm, _ = _draw(seed)
    hier = " x ".join(f"{d} {desc}" for d, (_, _, desc) in zip(names, drawn))
    return (f"{hier}; {cells:,} cells, {prm['per_cell']:.1f} enterprises per cell, turnover log-sd "
            f"{prm['sigma']:.1f}, leaf spread {prm['concentration']:.1f}, holdings {prm['holding_share']:.0%} "
            f"(cohesion {prm['cohesion']:.1f})")


def random_data(name: str) -> SyntheticData:
    """The enterprises of random shape ``name`` (``rand<N>``) on its drawn hierarchies."""
    seed = int(NAME.match(name).group(1))  # type: ignore[union-attr]
    names, drawn, cells, prm, rng = _draw(seed)
    units = max(200, int(prm["per_cell"] * cells))
    base = synthetic_data([[2]] * len(names), units, seed=seed, sigma=prm["sigma"],
                          concentration=prm["concentration"], holding_share=prm["holding_share"],
                          holding_cohesion=prm["cohesion"])
    data = base.data.copy()
    hold = data[base.holding].to_numpy()
    hierarchies = {}
    for dim, (h, leaves, _) in zip(base.hierarchies, drawn):
        data[dim] = leaf_codes(leaves, hold, rng, spread=prm["concentration"],
                               holding_share=HOLDING_SHARE_OF_CODES * prm["cohesion"] / 0.7)
        hierarchies[dim] = h
    return SyntheticData(data=data, hierarchies=hierarchies, response=base.response, holding=base.holding)
