"""The CellTable: one row per cell of a (possibly linked) table, as tabulation produces it.

Arrays are aligned with ``model.codes``. Top contributions are per *unit*: a holding
when a holding variable is given (contributions of one holding summed first), else a
record. They are sorted in decreasing order and padded with 0 where a cell has fewer
than ``K`` units; ``top_n`` says how many entries are real.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from tablesafe.errors import InputError
from tablesafe.percell import PerCell
from tablesafe.structure import CompiledModel

_PER_CELL = ("value", "records", "contributors", "top", "top_n", "neg_count", "neg_sum", "weight_sum",
             "unweighted_value")
"""Arrays with one entry (or row) per cell."""
_TOP_COLUMNS = ("top_weight", "top_request", "top_waived", "nonwaived_top", "abs_top")
"""(n, K) arrays aligned with ``top``."""


@dataclass
class CellTable(PerCell):
    """Tabulated cells with everything the sensitivity rules need.

    Attributes:
        model: the table structure (cells and relations).
        response: name of the response variable.
        value: cell value, the (weighted) sum of the response.
        records: number of records in the cell.
        contributors: number of distinct units (holdings when given, else records).
        top: (n, K) largest unit contributions, descending, 0-padded.
        top_n: number of real entries in ``top`` per cell (min(K, contributors)).
        top_weight: (n, K) sampling weight of each top unit (1 without weights;
            for a holding, the weight of its records' sum is not defined and 1 is used).
        top_request: (n, K) True where the unit asked for protection (request rule).
        top_waived: (n, K) True where the unit waived protection (authorisation).
        nonwaived_top: (n, K) largest contributions of units without a waiver.
        abs_top: (n, K) largest absolute contributions (for data with negative values).
        neg_count: number of negative unit contributions.
        neg_sum: sum of the negative unit contributions.
        weight_sum: sum of sampling weights of the records (records count without weights).
        unweighted_value: sum of the response without weights.
        extra: further per-cell arrays (cost variable, shadow variable, tabular input
            columns such as given status or protection levels).
        holding: name of the holding variable, if contributions were grouped by it.
        weight: name of the weight variable, if any.
        top_given: False when the top contributions are not known (tabular input without
            top-contribution columns): rules that need them (p%, (p,q), (n,k), linear,
            request) then refuse to run instead of treating every cell as safe.
        declared_missing: per dimension, the missing codes added below its total because
            they were declared (tau-ARGUS metadata, ``missing_code=``) rather than found in
            the data; a publication leaves out such a code when no record carries it.
        record_cells: linked tables only: the bottom-level cells of the
            cross-classification of all dimensions that hold a record (a code column
            per dimension), carried into :attr:`Problem.record_cells` for the insider
            model; ``None`` for one table, where every common part is a cell.
    """

    model: CompiledModel
    response: str
    value: np.ndarray
    records: np.ndarray
    contributors: np.ndarray
    top: np.ndarray
    top_n: np.ndarray
    top_weight: np.ndarray
    top_request: np.ndarray
    top_waived: np.ndarray
    nonwaived_top: np.ndarray
    abs_top: np.ndarray
    neg_count: np.ndarray
    neg_sum: np.ndarray
    weight_sum: np.ndarray
    unweighted_value: np.ndarray
    extra: dict[str, np.ndarray] = field(default_factory=dict)
    holding: str | None = None
    weight: str | None = None
    top_given: bool = True
    declared_missing: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    record_cells: pd.DataFrame | None = None

    def __post_init__(self) -> None:
        n = self.model.size
        for name in _PER_CELL:
            arr = getattr(self, name)
            if len(arr) != n:
                raise InputError(f"CellTable.{name} has {len(arr)} entries for {n} cells")
        k = np.shape(self.top)[1] if np.ndim(self.top) == 2 else None
        for name in _TOP_COLUMNS:
            shape = np.shape(getattr(self, name))
            if len(shape) != 2 or shape[1] != k:
                raise InputError(f"CellTable.{name} has shape {shape}; expected ({n}, {k}) like CellTable.top")
        for name, arr in self.extra.items():
            if len(arr) != n:
                raise InputError(f"CellTable.extra[{name!r}] has {len(arr)} entries for {n} cells")

    @property
    def k(self) -> int:
        """Number of top contributions kept per cell."""
        return self.top.shape[1]

    @property
    def empty(self) -> np.ndarray:
        """True for cells without any record (status Z)."""
        return self.records == 0

    def to_frame(self) -> pd.DataFrame:
        """A pandas view: codes, value, counts and top contributions as columns."""
        df = self.model.codes.copy()
        df["value"] = self.value
        df["records"] = self.records
        df["contributors"] = self.contributors
        for j in range(self.k):
            df[f"top{j + 1}"] = self.top[:, j]
        df["neg_count"] = self.neg_count
        df["neg_sum"] = self.neg_sum
        for name, arr in self.extra.items():
            df[name] = arr
        return df

    @classmethod
    def from_contributions(
        cls,
        model: CompiledModel,
        response: str,
        contributions: list[list[float]],
        k: int = 4,
    ) -> CellTable:
        """Build from explicit per-cell unit contributions (tests and small examples).

        ``contributions[i]`` lists the unit contributions of cell ``i`` (weights 1, no
        waivers or requests).
        """
        n = len(contributions)
        if n != model.size:
            raise InputError(f"{n} contribution lists for {model.size} cells")
        top = np.zeros((n, k))
        abs_top = np.zeros((n, k))
        top_n = np.zeros(n, dtype=np.int64)
        value = np.zeros(n)
        neg_count = np.zeros(n, dtype=np.int64)
        neg_sum = np.zeros(n)
        for i, xs in enumerate(contributions):
            xs = np.asarray(xs, dtype=float)
            value[i] = xs.sum()
            s = np.sort(xs)[::-1][:k]
            top[i, : len(s)] = s
            a = np.sort(np.abs(xs))[::-1][:k]
            abs_top[i, : len(a)] = a
            top_n[i] = len(s)
            neg_count[i] = int((xs < 0).sum())
            neg_sum[i] = float(xs[xs < 0].sum())
        counts = np.array([len(x) for x in contributions], dtype=np.int64)
        return cls(
            model=model,
            response=response,
            value=value,
            records=counts.copy(),
            contributors=counts,
            top=top,
            top_n=top_n,
            top_weight=np.ones((n, k)),
            top_request=np.zeros((n, k), dtype=bool),
            top_waived=np.zeros((n, k), dtype=bool),
            nonwaived_top=top.copy(),
            abs_top=abs_top,
            neg_count=neg_count,
            neg_sum=neg_sum,
            weight_sum=counts.astype(float),
            unweighted_value=value.copy(),
        )
