"""Online query protection (issue 14; seed 003 C, the ARMS approach).

An online query system answers tables that users design themselves, so there is no
table to protect in advance and no time for secondary suppression. Following the
Agriculture Resource Management Survey's system (seed 003, "Online Data Query Systems"):

1. noise is added once to the sampling weights of the microdata: every unit (holding, or
   record) gets a multiplier near ``1 +- m/100`` (one direction per unit, symmetric about 1,
   :func:`tablesafe.noise.multipliers`), fixed by a confidential seed, so that the same
   query always gets the same answer and repeating it teaches nothing;
2. each cell of a query is estimated with the noisy weights, and suppressed when its
   weighted count of units is below a minimum, when its noise is out of range (the noisy
   estimate differs from the true one by more than a set ratio), or when it fails the p%
   rule (on the weighted unit contributions) and its noise is smaller than its protection
   level;
3. primary suppression only: the noise protects the aggregates, so no complements.

:class:`QueryServer` keeps the microdata with both weights in an in-memory DuckDB
database and answers :meth:`QueryServer.answer` with one grouping-sets query.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from tablesafe.errors import InputError
from tablesafe.noise import NoiseOptions, multipliers

TOTAL = "Total"
"""The code of a dimension's total in an answer."""

STATUSES = ("published", "count", "noise", "p%")
"""Why a cell of an answer is published or suppressed: published; too few units; noise
out of range; p% rule failed with too little noise."""


@dataclass(frozen=True)
class QueryRules:
    """What every answer applies.

    Attributes:
        p: the p% rule's p (on the weighted contributions of units).
        min_count: the smallest weighted number of units a published cell may have.
        max_ratio: a published cell's noisy estimate lies within ``[1/max_ratio, max_ratio]``
            times its true estimate (the noise out of range otherwise).
    """

    p: float = 15.0
    min_count: float = 3.0
    max_ratio: float = 1.25

    def __post_init__(self) -> None:
        if not self.p > 0 or not self.min_count >= 0 or not self.max_ratio > 1:
            raise InputError(f"query rules need p > 0, min_count >= 0 and max_ratio > 1, got p={self.p!r}, "
                             f"min_count={self.min_count!r}, max_ratio={self.max_ratio!r}")


class QueryServer:
    """Answers table queries on microdata with noisy weights (see the module text).

    Args:
        data: the microdata (a pandas frame).
        weight: the sampling weight column (None: every record weighs 1).
        unit: the column identifying units whose records are summed before the p% rule
            and share one noise direction (holdings or enterprises; None: each record).
        noise_percent, noise_spread, seed: the weight noise (:class:`tablesafe.noise.NoiseOptions`;
            confidential).
        rules: the suppression rules of every answer.
    """

    def __init__(self, data: pd.DataFrame, *, weight: str | None = None, unit: str | None = None,
                 noise_percent: float = 10.0, noise_spread: float | None = None, seed: int = 0,
                 rules: QueryRules | None = None) -> None:
        import duckdb

        if not isinstance(data, pd.DataFrame):
            raise InputError("a query server needs the microdata as a pandas frame")
        for col in (weight, unit):
            if col is not None and col not in data.columns:
                raise InputError("the column is not in the data", column=col)
        self.rules = rules or QueryRules()
        self.options = NoiseOptions.build(noise_percent, noise_spread, seed)
        self.columns = [str(c) for c in data.columns]
        w = data[weight].to_numpy(dtype=float) if weight is not None else np.ones(len(data))
        units = data[unit].to_numpy() if unit is not None else np.arange(len(data))
        frame = data.copy()
        frame["__w"] = w
        frame["__wn"] = w * multipliers(units, self.options)
        frame["__unit"] = pd.Series(units).astype(str).to_numpy()
        self._db = duckdb.connect()
        self._db.register("micro_frame", frame)
        self._db.execute("create table micro as select * from micro_frame")
        self._db.unregister("micro_frame")

    def answer(self, dims: Sequence[str], response: str) -> pd.DataFrame:
        """The table of ``response`` by ``dims`` (every combination of codes and totals).

        Returns a frame with the dimension codes (``Total`` for a total), ``value`` (the
        noisy estimate; missing when suppressed), ``count`` (weighted units, missing when
        suppressed) and ``status`` (one of :data:`STATUSES`). The same query always gets
        the same answer.
        """
        dims = [str(d) for d in dims]
        for col in [*dims, response]:
            if col not in self.columns:
                raise InputError("the query names a column the data does not have", column=col)
        if len(set(dims)) != len(dims) or response in dims:
            raise InputError(f"a query needs distinct dimensions and a response that is none of them: {dims}, "
                             f"{response}")
        q = _sql(dims, response)
        raw = self._db.execute(q).df()
        return _judge(raw, dims, self.rules)


def _quoted(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _sql(dims: list[str], response: str) -> str:
    """One query: unit contributions per cell of every grouping set, then per cell the
    true and noisy estimates, the weighted count and the two largest contributions."""
    qd = [_quoted(d) for d in dims]
    r = _quoted(response)
    sets = []
    for k in range(len(dims) + 1):
        for combo in itertools.combinations(range(len(dims)), k):
            sets.append("(" + ", ".join([*(qd[i] for i in combo), "__unit"]) + ")")
    cols = ", ".join(f"cast({d} as varchar) as {d}" for d in qd)
    # fixed-point sums (each record's product rounded to 1e-6 first): exact, so the answer
    # does not depend on the order DuckDB's threads add in
    dec = "decimal(38, 6)"
    inner = (f"select {cols}, __unit, grouping({', '.join(qd)}) as gid, sum(cast({r} * __w as {dec})) as x, "
             f"sum(cast({r} * __wn as {dec})) as xn, max(cast(__w as {dec})) as w from micro "
             f"group by grouping sets ({', '.join(sets)})")
    return (f"select {', '.join(qd)}, gid, cast(sum(x) as double) as true_value, cast(sum(xn) as double) as noisy, "
            f"cast(sum(w) as double) as count, cast(max(x, 2) as double[]) as top "
            f"from ({inner}) group by {', '.join([*qd, 'gid'])} order by gid desc, {', '.join(qd)}")


def _judge(raw: pd.DataFrame, dims: list[str], rules: QueryRules) -> pd.DataFrame:
    """Apply the rules to the cells of a query's result."""
    from tablesafe.io.publication import stable_values

    n = len(raw)
    out = pd.DataFrame({d: raw[d].astype(object).where(raw[d].notna(), TOTAL).to_numpy() for d in dims})
    true = raw["true_value"].to_numpy(dtype=float)
    noisy = raw["noisy"].to_numpy(dtype=float)
    count = raw["count"].to_numpy(dtype=float)
    tops = raw["top"].to_numpy()
    x1 = np.fromiter((t[0] if len(t) > 0 else 0.0 for t in tops), dtype=float, count=n)
    x2 = np.fromiter((t[1] if len(t) > 1 else 0.0 for t in tops), dtype=float, count=n)
    need = rules.p / 100.0 * x1 - (true - x1 - x2)
    fails_p = need > 1e-9 * np.maximum(1.0, np.abs(true))
    protected_by_noise = np.abs(noisy - true) >= need
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(true != 0, noisy / true, 1.0)
    out_of_range = (ratio > rules.max_ratio) | (ratio < 1.0 / rules.max_ratio)
    status = np.select([count < rules.min_count, out_of_range, fails_p & ~protected_by_noise],
                       ["count", "noise", "p%"], "published")
    shown = status == "published"
    out["value"] = pd.array(np.where(shown, stable_values(noisy), np.nan), dtype="Float64")
    out.loc[~shown, "value"] = pd.NA
    out["count"] = pd.array(np.where(shown, np.round(count, 6), np.nan), dtype="Float64")
    out.loc[~shown, "count"] = pd.NA
    out["status"] = status
    return out


__all__ = ["STATUSES", "TOTAL", "QueryRules", "QueryServer"]
