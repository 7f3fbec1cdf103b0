"""Deterministic synthetic business data for tests and benchmarks.

Enterprises belong to holdings (enterprise groups), carry a skewed (lognormal) turnover and
are classified by hierarchical codes in two or three dimensions (an industry-like, a
region-like and a size-class-like classification). The sizes of the classifications are
configurable, so tables of about 1,000, 13,000, 60,000 and 1,000,000 cells can be made
(see :data:`PRESETS`).

:func:`synthetic_problem` goes straight from such data to a :class:`~tablesafe.Problem`
with p%-rule primaries computed by a small vectorised tabulation here (holdings grouped
before the rule, as DESIGN.md asks), so suppression tests and benchmarks do not depend on
the tabulation and rules areas. The upper protection level of the p% rule is
``p/100 x1 - (X - x1 - x2)`` (seed 002, table "Upper protection levels"; seed 000
section 5.1.2); the lower level equals it, capped at the distance to the a priori lower
bound 0 (DESIGN.md).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from tablesafe.problem import EMPTY, PRIMARY, SAFE, Problem
from tablesafe.structure import Dimension, Hierarchy, TableStructure, compile_tables

__all__ = [
    "PRESETS",
    "SyntheticData",
    "make_hierarchy",
    "problem_from_data",
    "synthetic_data",
    "synthetic_preset",
    "synthetic_problem",
]


def make_hierarchy(branching: Sequence[int], prefix: str, total: str = "Total") -> Hierarchy:
    """A balanced code hierarchy: ``branching[j]`` children per node at depth ``j``.

    Codes are ``prefix`` followed by the 1-based child positions joined with ``.``
    (``R1``, ``R1.2``, ``R1.2.3``). ``make_hierarchy([3, 4], "R")`` has 1 + 3 + 12 codes.
    """
    if not branching or any(int(b) < 1 for b in branching):
        raise ValueError(f"branching needs positive entries, got {list(branching)}")
    tree: dict[str, list[str]] = {total: []}

    def grow(node: str, path: str, level: int) -> None:
        if level == len(branching):
            return
        kids = [f"{path}.{k + 1}" if path else f"{prefix}{k + 1}" for k in range(int(branching[level]))]
        tree[node] = kids
        for kid in kids:
            grow(kid, kid, level + 1)

    grow(total, "", 0)
    return Hierarchy.from_tree(total, tree)


def _size(branching: Sequence[int]) -> int:
    return 1 + int(np.sum(np.cumprod(branching)))


@dataclass(frozen=True)
class SyntheticData:
    """Generated microdata with the hierarchies of its classification variables.

    Attributes:
        data: one row per enterprise: ``id``, ``holding``, a leaf code per dimension,
            ``turnover`` (lognormal) and ``employees``.
        hierarchies: dimension name -> :class:`Hierarchy` (in table dimension order).
        response: name of the magnitude column (``turnover``).
        holding: name of the holding column.
    """

    data: pd.DataFrame
    hierarchies: dict[str, Hierarchy]
    response: str = "turnover"
    holding: str = "holding"

    @property
    def dims(self) -> list[str]:
        """Dimension names in table order."""
        return list(self.hierarchies)

    @property
    def table_size(self) -> int:
        """Number of cells (totals included) of the full cross table."""
        return int(np.prod([len(h) for h in self.hierarchies.values()], dtype=np.int64))


DIM_NAMES = ("industry", "region", "size")
DIM_PREFIX = {"industry": "I", "region": "R", "size": "S"}

#: Named sizes: branching per dimension and number of enterprises.
PRESETS: dict[str, dict] = {
    # 34 x 33 = 1,122 cells
    "1k": {"branching": [[3, 10], [2, 3, 4]], "units": 3_000},
    # 2-D, 105 x 94 = 9,870 cells (a larger two-way table for tests)
    "10k2d": {"branching": [[4, 5, 4], [3, 5, 5]], "units": 12_000},
    # 2-D, 64 x 37 = 2,368 cells (three-level hierarchies, one wide)
    "2k2d": {"branching": [[3, 4, 4], [4, 2, 3]], "units": 6_000},
    # 3-D, 9 x 16 x 9 = 1,296 cells
    "1k3d": {"branching": [[2, 3], [3, 4], [2, 3]], "units": 4_000},
    # 2-D, 231 x 57 = 13,167 cells (a wide, shallow two-way table: few large blocks)
    "13k2d": {"branching": [[5, 5, 8], [7, 7]], "units": 40_000},
    # 3-D, 27 x 27 x 19 = 13,851 cells
    "13k": {"branching": [[2, 3, 3], [2, 3, 3], [3, 5]], "units": 15_000},
    # 3-D, 52 x 34 x 34 = 60,112 cells
    "60k": {"branching": [[3, 4, 3], [3, 10], [3, 10]], "units": 60_000},
    # 3-D, 105 x 105 x 94 = 1,036,350 cells
    "1m": {"branching": [[4, 5, 4], [4, 5, 4], [3, 5, 5]], "units": 600_000},
}


def synthetic_data(
    branching: Sequence[Sequence[int]],
    units: int,
    *,
    seed: int = 0,
    holding_share: float = 0.3,
    mean_holding_size: float = 4.0,
    sigma: float = 1.6,
    concentration: float = 1.0,
) -> SyntheticData:
    """Generate enterprises with holdings, skewed turnover and hierarchical classifications.

    Args:
        branching: per dimension (2 or 3 of them), the number of children per node at each
            depth (see :func:`make_hierarchy`). Dimension names are ``industry``,
            ``region`` and ``size`` in that order.
        units: number of enterprises (records).
        seed: random seed; the same arguments always give the same data.
        holding_share: share of enterprises that belong to a multi-enterprise holding.
        mean_holding_size: average number of enterprises per multi-enterprise holding.
        sigma: log-standard deviation of turnover (larger = more skewed).
        concentration: spread of leaf popularity (lognormal sigma of leaf weights); larger
            values leave more cells sparse or empty.
    """
    if not 1 <= len(branching) <= 3:
        raise ValueError("synthetic data supports 1 to 3 dimensions")
    if units < 1:
        raise ValueError("units must be positive")
    rng = np.random.default_rng(seed)
    hiers: dict[str, Hierarchy] = {}
    cols: dict[str, np.ndarray] = {}
    for name, br in zip(DIM_NAMES, branching):
        h = make_hierarchy(br, DIM_PREFIX[name])
        hiers[name] = h
        leaves = np.asarray(h.leaves, dtype=object)
        w = rng.lognormal(0.0, concentration, size=len(leaves))
        cols[name] = leaves[rng.choice(len(leaves), size=units, p=w / w.sum())]

    # holdings: a share of the units is grouped; members share the first dimension's
    # top-level branch often (same industry), spread over the others.
    ids = np.arange(units)
    in_group = rng.random(units) < holding_share
    n_groups = max(1, round(in_group.sum() / max(mean_holding_size, 1.0)))
    holding = ids.astype(np.int64) + n_groups  # singletons: own holding id
    grouped = np.flatnonzero(in_group)
    holding[grouped] = rng.integers(0, n_groups, size=len(grouped))
    # relabel holdings in order of first appearance so ids are compact and stable
    _, first = np.unique(holding, return_index=True)
    order = np.argsort(first, kind="stable")
    remap = np.empty(len(first), dtype=np.int64)
    remap[order] = np.arange(len(first))
    holding = remap[np.unique(holding, return_inverse=True)[1]]

    turnover = np.round(rng.lognormal(mean=6.0, sigma=sigma, size=units), 2)
    employees = np.maximum(1, np.round(turnover / rng.uniform(50, 200, size=units))).astype(np.int64)
    data = pd.DataFrame(
        {"id": ids, "holding": holding, **cols, "turnover": turnover, "employees": employees}
    )
    return SyntheticData(data=data, hierarchies=hiers)


def synthetic_preset(name: str, *, seed: int = 0, **kw) -> SyntheticData:
    """Data of a named size from :data:`PRESETS` (``1k``, ``10k2d``, ``13k``, ``60k``, ``1m``)."""
    if name not in PRESETS:
        raise ValueError(f"unknown preset {name!r}; choose one of {sorted(PRESETS)}")
    spec = PRESETS[name]
    return synthetic_data(spec["branching"], kw.pop("units", spec["units"]), seed=seed, **kw)


def problem_from_data(
    syn: SyntheticData,
    *,
    p: float = 15.0,
    use_holdings: bool = True,
    cost: str = "value",
) -> Problem:
    """Tabulate ``syn`` over all its dimensions and mark p%-rule primaries.

    Every record contributes to its leaf cell and to all ancestors' cells in every
    dimension; contributions are first summed per holding (when ``use_holdings``). A cell
    with no contributor is empty (status ``Z``); a cell is primary (``U``) when
    ``p/100 x1 > X - x1 - x2`` with ``x1 >= x2`` the two largest holding contributions;
    its upper protection level is ``p/100 x1 - (X - x1 - x2)`` and the lower level the
    same, capped at ``X`` (a priori bounds ``[0, inf)``). Costs are the cell values
    (``cost="value"``) or 1 (``"unity"``).
    """
    dims = [Dimension(name, h) for name, h in syn.hierarchies.items()]
    ts = TableStructure(tuple(dims))
    model = compile_tables(ts)
    shape = ts.shape
    data = syn.data
    nrec = len(data)
    # ancestor chains (leaf first) per dimension, padded with -1
    flat = np.zeros(nrec, dtype=np.int64)[:, None]
    stride = np.cumprod((1, *shape[::-1]))[:-1][::-1]
    for j, (name, h) in enumerate(syn.hierarchies.items()):
        depth = h.depths
        dmax = int(depth.max())
        chains = np.full((len(h), dmax + 1), -1, dtype=np.int64)
        for i in range(len(h)):
            k, c = 0, i
            while c != -1:
                chains[i, k] = c
                c = h.parent[c]
                k += 1
        pos = pd.Index(h.codes).get_indexer(data[name].astype(str).to_numpy())
        if (pos < 0).any():
            raise ValueError(f"codes of {name!r} not in its hierarchy")
        ch = chains[pos]  # (nrec, dmax+1)
        # combine: flat index of every ancestor combination
        comb = flat[:, :, None] + np.where(ch >= 0, ch * stride[j], -(10**15))[:, None, :]
        flat = comb.reshape(nrec, -1)
    rec = np.repeat(np.arange(nrec), flat.shape[1])
    cell = flat.ravel()
    ok = cell >= 0
    rec, cell = rec[ok], cell[ok]
    unit = data[syn.holding].to_numpy(np.int64) if use_holdings else data["id"].to_numpy(np.int64)
    val = data[syn.response].to_numpy(float)
    frame = pd.DataFrame({"cell": cell, "unit": unit[rec], "v": val[rec]})
    per_unit = frame.groupby(["cell", "unit"], sort=False)["v"].sum().reset_index()
    n = ts.size
    c = per_unit["cell"].to_numpy()
    v = per_unit["v"].to_numpy()
    value = np.bincount(c, weights=v, minlength=n)
    count = np.bincount(c, minlength=n)
    order = np.lexsort((-v, c))
    c_s, v_s = c[order], v[order]
    start = np.searchsorted(c_s, np.arange(n))
    has1 = count >= 1
    has2 = count >= 2
    x1 = np.zeros(n)
    x2 = np.zeros(n)
    x1[has1] = v_s[start[has1]]
    x2[has2] = v_s[start[has2] + 1]
    value = np.round(value, 6)
    upl = p / 100.0 * x1 - (value - x1 - x2)
    sensitive = has1 & (upl > 1e-9)
    status = np.where(count == 0, EMPTY, np.where(sensitive, PRIMARY, SAFE)).astype("<U1")
    upl = np.where(sensitive, upl, 0.0)
    lpl = np.minimum(upl, value)
    costs = np.abs(value) if cost == "value" else np.ones(n)
    return Problem.from_arrays(
        value,
        model.relations,
        status=status,
        names=model.cell_names(),
        cost=costs,
        upl=upl,
        lpl=lpl,
        codes=model.codes,
        contributors=count,
        model=model,
        source="synthetic",
        notes={"rule": f"p({p:g})", "holdings": use_holdings},
    )


def synthetic_problem(
    size: str | Sequence[Sequence[int]] = "1k",
    *,
    units: int | None = None,
    seed: int = 0,
    p: float = 15.0,
    use_holdings: bool = True,
    **kw,
) -> Problem:
    """Generate data (a preset name or a branching list) and return its p%-rule Problem."""
    if isinstance(size, str):
        syn = synthetic_preset(size, seed=seed, **({"units": units} if units else {}), **kw)
    else:
        syn = synthetic_data(size, units or 2_000, seed=seed, **kw)
    return problem_from_data(syn, p=p, use_holdings=use_holdings)
