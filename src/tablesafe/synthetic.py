"""Deterministic synthetic business data for tests and benchmarks.

Enterprises belong to holdings (enterprise groups), carry a skewed (lognormal) turnover and
are classified by hierarchical codes in two to four dimensions (an industry-like, a
region-like, a size-class-like and a legal-form-like classification). The sizes of the
classifications are configurable, so tables of about 1,000, 13,000, 60,000 and 1,000,000
cells can be made (see :data:`PRESETS`), and linked tables: data over four dimensions
with ``tables`` naming two three-way tables that share two (``linked65k``: about 40,000
and 25,000 cells sharing industry and region).

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
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import pandas as pd

from tablesafe.problem import EMPTY, PRIMARY, SAFE, Problem
from tablesafe.structure import Dimension, Hierarchy, TableStructure, compile_tables

__all__ = [
    "PRESETS",
    "SyntheticData",
    "make_hierarchy",
    "problem_from_data",
    "synthetic_contributions",
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
    tables: tuple[tuple[str, ...], ...] | None = None

    @property
    def dims(self) -> list[str]:
        """Dimension names in table order."""
        return list(self.hierarchies)

    @property
    def table_list(self) -> list[list[str]]:
        """The tables (dimension names each): ``tables``, or one table over all dimensions."""
        return [list(t) for t in self.tables] if self.tables else [self.dims]

    def table_sizes(self) -> list[int]:
        """Number of cells of each table (see :attr:`table_list`)."""
        return [int(np.prod([len(self.hierarchies[d]) for d in t], dtype=np.int64)) for t in self.table_list]

    @property
    def table_size(self) -> int:
        """Number of distinct cells (totals included) of the table, or of the linked
        tables (a cell the tables share counted once)."""
        if not self.tables:
            return int(np.prod([len(h) for h in self.hierarchies.values()], dtype=np.int64))
        shared = set(self.tables[0]).intersection(*self.tables[1:])
        sizes = self.table_sizes()
        if len(sizes) != 2:  # more tables: count the compiled cells
            return _linked_model(self).size
        common = int(np.prod([len(self.hierarchies[d]) for d in shared], dtype=np.int64))
        return sum(sizes) - common


DIM_NAMES = ("industry", "region", "size", "legal")
DIM_PREFIX = {"industry": "I", "region": "R", "size": "S", "legal": "L"}

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
    # 3-D, 9 x 16 x 13 = 1,872 cells (the 3-D table of about 2,000 cells)
    "2k3d": {"branching": [[2, 3], [3, 4], [2, 5]], "units": 5_000},
    # 2-D, 231 x 265 = 61,215 cells (the 2-D table of about 60,000 cells)
    "60k2d": {"branching": [[5, 5, 8], [4, 5, 12]], "units": 120_000},
    # linked: industry x region x size (52 x 34 x 23 = 40,664 cells) and industry x region
    # x legal form (52 x 34 x 15 = 26,520 cells), sharing industry and region (1,768 cells
    # in both): 65,416 distinct cells in one model
    "linked65k": {
        "branching": [[3, 4, 3], [3, 10], [2, 10], [2, 6]], "units": 50_000,
        "tables": (("industry", "region", "size"), ("industry", "region", "legal")),
    },
    # the same shape scaled down: 9 x 16 x 11 = 1,584 and 9 x 16 x 9 = 1,296 cells, 2,736
    # distinct (for tests and a quick end-to-end run)
    "linked3k": {
        "branching": [[2, 3], [3, 4], [2, 4], [2, 3]], "units": 5_000,
        "tables": (("industry", "region", "size"), ("industry", "region", "legal")),
    },
}
# clearer names of the 3-D presets (same data as "60k" and "1m")
PRESETS["60k3d"] = PRESETS["60k"]
PRESETS["1m3d"] = PRESETS["1m"]
PRESETS["13k3d"] = PRESETS["13k"]


def synthetic_data(
    branching: Sequence[Sequence[int]],
    units: int,
    *,
    seed: int = 0,
    holding_share: float = 0.3,
    mean_holding_size: float = 4.0,
    sigma: float = 1.6,
    concentration: float = 1.0,
    holding_cohesion: float = 0.0,
) -> SyntheticData:
    """Generate enterprises with holdings, skewed turnover and hierarchical classifications.

    Args:
        branching: per dimension (1 to 4 of them), the number of children per node at
            each depth (see :func:`make_hierarchy`). Dimension names are ``industry``,
            ``region``, ``size`` and ``legal`` in that order.
        units: number of enterprises (records).
        seed: random seed; the same arguments always give the same data.
        holding_share: share of enterprises that belong to a multi-enterprise holding.
        mean_holding_size: average number of enterprises per multi-enterprise holding.
        sigma: log-standard deviation of turnover (larger = more skewed).
        concentration: spread of leaf popularity (lognormal sigma of leaf weights); larger
            values leave more cells sparse or empty.
        holding_cohesion: probability that a member of a multi-enterprise holding takes
            the codes of its holding's first member in every dimension but the last (same
            industry, and same region in three dimensions), so that holdings share cells
            and the rule at holding level differs from the rule at enterprise level. With
            0 (the default) members are classified independently and the data are those
            of earlier versions (the other draws do not change with this option).
    """
    if not 1 <= len(branching) <= len(DIM_NAMES):
        raise ValueError(f"synthetic data supports 1 to {len(DIM_NAMES)} dimensions")
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
    if holding_cohesion > 0 and len(branching) > 1:
        _cohere(cols, holding, list(hiers)[:-1], holding_cohesion, seed)

    turnover = np.round(rng.lognormal(mean=6.0, sigma=sigma, size=units), 2)
    employees = np.maximum(1, np.round(turnover / rng.uniform(50, 200, size=units))).astype(np.int64)
    data = pd.DataFrame(
        {"id": ids, "holding": holding, **cols, "turnover": turnover, "employees": employees}
    )
    return SyntheticData(data=data, hierarchies=hiers)


def _cohere(cols: dict[str, np.ndarray], holding: np.ndarray, dims: list[str], share: float, seed: int) -> None:
    """Give a ``share`` of the holdings' later members the codes of the holding's first
    member in ``dims`` (in place; a separate random stream, so other draws are unchanged)."""
    rng = np.random.default_rng([seed, 12])
    _, first, counts = np.unique(holding, return_index=True, return_counts=True)
    head = first[np.searchsorted(np.unique(holding), holding)]  # first member of each record's holding
    follow = (counts[np.searchsorted(np.unique(holding), holding)] > 1) & (head != np.arange(len(holding)))
    follow &= rng.random(len(holding)) < share
    for name in dims:
        cols[name] = np.where(follow, cols[name][head], cols[name])


def synthetic_preset(name: str, *, seed: int = 0, **kw) -> SyntheticData:
    """Data of a named size from :data:`PRESETS` (``1k``, ``10k2d``, ``13k``, ``60k``, ``1m``,
    ``linked65k``, ...); a linked preset's data carry its ``tables``."""
    if name not in PRESETS:
        raise ValueError(f"unknown preset {name!r}; choose one of {sorted(PRESETS)}")
    spec = PRESETS[name]
    syn = synthetic_data(spec["branching"], kw.pop("units", spec["units"]), seed=seed, **kw)
    if spec.get("tables"):
        syn = replace(syn, tables=tuple(tuple(t) for t in spec["tables"]))
    return syn


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

    When ``syn.tables`` names several tables, the result is their linked problem: one
    model (:func:`~tablesafe.structure.compile_tables`) in which a cell the tables share
    appears once; each table is tabulated as above and its cells put in their places.
    """
    if syn.tables and len(syn.tables) > 1:
        return _linked_problem(syn, p=p, use_holdings=use_holdings, cost=cost)
    model, per_unit = _tabulated(syn, use_holdings)
    n = model.size
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
    return _problem(model, value, status, upl, lpl, count, cost,
                    {"rule": f"p({p:g})", "holdings": use_holdings})


def synthetic_contributions(syn: SyntheticData, *, use_holdings: bool = True) -> pd.DataFrame:
    """Each unit's contribution to each cell of ``syn``'s (single) table, as
    :func:`problem_from_data` sums them: ``cell`` (index into the problem's cells),
    ``unit`` (the holding, or the enterprise ``id`` without holdings) and ``value``;
    the frame the criterion-2 functions take (:func:`tablesafe.audit.criterion2`)."""
    if syn.tables and len(syn.tables) > 1:
        raise ValueError("contributions of linked tables are not listed; use one table")
    _, per_unit = _tabulated(syn, use_holdings)
    return pd.DataFrame({"cell": per_unit["cell"].to_numpy(np.int64), "unit": per_unit["unit"].to_numpy(),
                         "value": per_unit["v"].to_numpy(float)})


def _tabulated(syn: SyntheticData, use_holdings: bool) -> tuple[Any, pd.DataFrame]:
    """The compiled model of ``syn``'s table and each unit's sum per cell (``cell``,
    ``unit``, ``v``): every record counts in its leaf cell and all ancestors' cells."""
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
    return model, per_unit


def _problem(model, value: np.ndarray, status: np.ndarray, upl: np.ndarray, lpl: np.ndarray,
             count: np.ndarray, cost: str, notes: dict) -> Problem:
    """The problem of a compiled model's cells (cost = |value| or 1 per cell)."""
    costs = np.abs(value) if cost == "value" else np.ones(len(value))
    return Problem.from_arrays(
        value, model.relations, status=status, names=model.cell_names(), cost=costs, upl=upl,
        lpl=lpl, codes=model.codes, contributors=count, model=model, source="synthetic",
        notes=notes,
    )


def _linked_model(syn: SyntheticData):
    """The compiled model of ``syn``'s linked tables."""
    return compile_tables(
        [TableStructure(tuple(Dimension(d, syn.hierarchies[d]) for d in t)) for t in syn.table_list]
    )


def _linked_problem(syn: SyntheticData, *, p: float, use_holdings: bool, cost: str) -> Problem:
    """The linked problem of ``syn.tables`` (see :func:`problem_from_data`)."""
    model = _linked_model(syn)
    n = model.size
    value = np.zeros(n)
    upl = np.zeros(n)
    lpl = np.zeros(n)
    count = np.zeros(n, dtype=np.int64)
    status = np.full(n, EMPTY, dtype="<U1")
    for table, cells in zip(syn.table_list, model.table_cells):
        one = SyntheticData(syn.data, {d: syn.hierarchies[d] for d in table}, syn.response, syn.holding)
        pr = problem_from_data(one, p=p, use_holdings=use_holdings, cost=cost)
        # a shared cell gets the same values from every table (same records)
        value[cells] = pr.value
        upl[cells] = pr.upl
        lpl[cells] = pr.lpl
        count[cells] = pr.contributors
        status[cells] = pr.status
    dims = [d.name for d in model.dims]
    records = syn.data[dims].astype(str).drop_duplicates().reset_index(drop=True)
    return replace(_problem(model, value, status, upl, lpl, count, cost,
                            {"rule": f"p({p:g})", "holdings": use_holdings,
                             "tables": [list(t) for t in syn.table_list]}),
                   record_cells=records)


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
