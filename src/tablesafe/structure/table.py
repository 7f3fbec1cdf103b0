"""Table structures and their compilation to the general linear model.

A :class:`TableStructure` is a list of dimensions (each a :class:`Hierarchy`). Its cells are
every combination of codes, totals included, in C order (last dimension varies fastest).
:func:`compile_tables` turns one table, or several linked tables that share dimensions,
into the cells and sparse relations of the general model of Fischetti and Salazar: every
relation reads ``total - sum(parts) = 0`` for one hierarchy node in one dimension crossed
with one code of every other dimension.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
import scipy.sparse as sp

from tablesafe.errors import InputError
from tablesafe.structure.hierarchy import Hierarchy

MAX_DIMS = 6
NAME_SEP = "|"


@dataclass(frozen=True)
class Dimension:
    """A named explanatory variable with its code hierarchy."""

    name: str
    hierarchy: Hierarchy

    @property
    def total(self) -> str:
        """The total code of this dimension."""
        return self.hierarchy.total


@dataclass(frozen=True)
class TableStructure:
    """The cells of one table: the cross product of its dimensions' codes."""

    dims: tuple[Dimension, ...]

    def __post_init__(self) -> None:
        if not 1 <= len(self.dims) <= MAX_DIMS:
            raise InputError(f"a table needs between 1 and {MAX_DIMS} dimensions, got {len(self.dims)}")
        names = [d.name for d in self.dims]
        if len(set(names)) != len(names):
            raise InputError(f"a dimension is listed twice: {names}")

    @property
    def names(self) -> list[str]:
        """Dimension names in order."""
        return [d.name for d in self.dims]

    @property
    def shape(self) -> tuple[int, ...]:
        """Number of codes (totals included) per dimension."""
        return tuple(len(d.hierarchy) for d in self.dims)

    @property
    def size(self) -> int:
        """Number of cells."""
        return int(np.prod(self.shape, dtype=np.int64))

    def code_indices(self) -> np.ndarray:
        """(size, ndims) array of code positions per cell, in cell order."""
        grids = np.indices(self.shape).reshape(len(self.dims), -1).T
        return np.ascontiguousarray(grids)

    def codes_frame(self) -> pd.DataFrame:
        """One row per cell with the code of each dimension (column per dimension name)."""
        idx = self.code_indices()
        data = {}
        for j, d in enumerate(self.dims):
            codes = np.asarray(d.hierarchy.codes, dtype=object)
            data[d.name] = codes[idx[:, j]]
        return pd.DataFrame(data)

    def cell_names(self) -> np.ndarray:
        """Cell identifiers: codes joined with ``|`` in dimension order."""
        return join_codes(self.codes_frame())

    def flat_index(self, code_idx: np.ndarray) -> np.ndarray:
        """Cell positions of rows of code positions (inverse of :meth:`code_indices`)."""
        return np.ravel_multi_index(tuple(np.asarray(code_idx).T), self.shape)

    def relations(self) -> sp.csr_matrix:
        """Sparse matrix A (relations x cells) with ``A @ values == 0`` for an additive table.

        Row entries are -1 for the total of the relation and +1 for each part.
        """
        shape = self.shape
        nd = len(shape)
        rows: list[np.ndarray] = []
        cols: list[np.ndarray] = []
        vals: list[np.ndarray] = []
        nrel = 0
        for d, dim in enumerate(self.dims):
            h = dim.hierarchy
            others = [shape[e] for e in range(nd) if e != d]
            n_other = int(np.prod(others, dtype=np.int64)) if others else 1
            other_idx = np.indices(others).reshape(len(others), -1).T if others else np.zeros((1, 0), int)
            for p in h.parents:
                kids = h.children(p)
                members = np.array((p, *kids), dtype=np.int64)
                coef = np.concatenate(([-1.0], np.ones(len(kids))))
                # full code index arrays: (n_other, len(members), nd)
                full = np.empty((n_other, len(members), nd), dtype=np.int64)
                oi = 0
                for e in range(nd):
                    if e == d:
                        full[:, :, e] = members[None, :]
                    else:
                        full[:, :, e] = other_idx[:, oi][:, None]
                        oi += 1
                flat = np.ravel_multi_index(tuple(full.reshape(-1, nd).T), shape)
                r = nrel + np.repeat(np.arange(n_other), len(members))
                rows.append(r)
                cols.append(flat)
                vals.append(np.tile(coef, n_other))
                nrel += n_other
        if not rows:
            return sp.csr_matrix((0, self.size))
        return sp.csr_matrix(
            (np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))), shape=(nrel, self.size)
        )


@dataclass(frozen=True)
class CompiledModel:
    """Cells and relations of one or more linked tables, shared cells appearing once.

    Attributes:
        dims: all dimensions (union over the tables, in order of first appearance).
        codes: one row per cell, a column per dimension; a dimension absent from the
            table a cell comes from holds that dimension's total code.
        relations: sparse relations over the cells (``relations @ values == 0``).
        table_cells: for each table, the positions of its cells (in that table's order).
    """

    dims: tuple[Dimension, ...]
    codes: pd.DataFrame
    relations: sp.csr_matrix
    table_cells: tuple[np.ndarray, ...]

    @property
    def size(self) -> int:
        """Number of distinct cells."""
        return len(self.codes)

    def cell_names(self) -> np.ndarray:
        """Cell identifiers: codes joined with ``|`` in dimension order."""
        return join_codes(self.codes)


def join_codes(codes: pd.DataFrame) -> np.ndarray:
    """Cell names from a frame of codes: the codes of each row joined with ``|``."""
    out = codes.iloc[:, 0].astype(str)
    for col in codes.columns[1:]:
        out = out + NAME_SEP + codes[col].astype(str)
    return out.to_numpy(dtype=object)


def compile_tables(tables: TableStructure | Sequence[TableStructure]) -> CompiledModel:
    """Compile one table, or linked tables over shared dimensions, to cells and relations.

    Dimensions with the same name must have the same hierarchy. Cells of different tables
    that have the same codes (absent dimensions at their total) are one cell; identical
    relations are kept once.
    """
    if isinstance(tables, TableStructure):
        tables = [tables]
    tables = list(tables)
    if not tables:
        raise InputError("no table to compile")
    dims: dict[str, Dimension] = {}
    for t in tables:
        for d in t.dims:
            if d.name in dims and dims[d.name].hierarchy != d.hierarchy:
                raise InputError(
                    f"linked tables use different hierarchies for dimension {d.name!r}", column=d.name
                )
            dims.setdefault(d.name, d)
    all_dims = tuple(dims.values())
    if len(all_dims) > MAX_DIMS:
        raise InputError(f"linked tables span {len(all_dims)} dimensions; at most {MAX_DIMS} are supported")
    if len(tables) == 1 and tables[0].dims == all_dims:
        t = tables[0]
        return CompiledModel(all_dims, t.codes_frame(), t.relations(), (np.arange(t.size),))

    # global code positions per table cell, absent dims at position 0 (the total)
    gshape = tuple(len(d.hierarchy) for d in all_dims)
    keys_per_table = []
    for t in tables:
        idx = t.code_indices()
        g = np.zeros((t.size, len(all_dims)), dtype=np.int64)
        for j, d in enumerate(t.dims):
            g[:, list(dims).index(d.name)] = idx[:, j]
        keys_per_table.append(np.ravel_multi_index(tuple(g.T), gshape))
    all_keys = np.concatenate(keys_per_table)
    uniq, inverse = np.unique(all_keys, return_inverse=True)
    table_cells = []
    off = 0
    mats = []
    for t, keys in zip(tables, keys_per_table):
        pos = inverse[off: off + len(keys)]
        off += len(keys)
        table_cells.append(pos)
        a = t.relations().tocoo()
        mats.append(sp.csr_matrix((a.data, (a.row, pos[a.col])), shape=(a.shape[0], len(uniq))))
    rel = sp.vstack(mats).tocsr()
    rel = _unique_rows(rel)
    gidx = np.array(np.unravel_index(uniq, gshape)).T
    codes = {}
    for j, d in enumerate(all_dims):
        arr = np.asarray(d.hierarchy.codes, dtype=object)
        codes[d.name] = arr[gidx[:, j]]
    return CompiledModel(all_dims, pd.DataFrame(codes), rel, tuple(table_cells))


def _unique_rows(a: sp.csr_matrix) -> sp.csr_matrix:
    """Drop duplicate rows of a sparse matrix (same columns and coefficients)."""
    a = a.tocsr()
    a.sort_indices()
    seen: dict[tuple, int] = {}
    keep = []
    for i in range(a.shape[0]):
        s, e = a.indptr[i], a.indptr[i + 1]
        key = (a.indices[s:e].tobytes(), a.data[s:e].tobytes())
        if key not in seen:
            seen[key] = i
            keep.append(i)
    return a[keep]
