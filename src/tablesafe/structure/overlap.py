"""Which cells share respondents: overlap of cells along their code hierarchies.

Two cells of a table overlap when, in every dimension, one cell's code equals the other's
or is an ancestor of it. Their common part is then the cell of the deeper codes (the
*meet*); when that cell is empty they have no respondent in common. Overlap decides who
is an insider of a cell: the single respondent of a withheld cell that overlaps a target
is one of the target's own contributors, and the target's protection level already
allows for what a contributor knows about its own value (seed 000 section 5.1, the
second-largest contributor in the p% rule).

Linked tables have common parts that are cells of neither table (industry x region x
size against industry x region x legal form). When the problem carries the
cross-classification cells holding records (:attr:`Problem.record_cells`, from the
tabulation), those common parts are rolled up once into a set of occupied keys, and an
overlap is then read from the data as for any other cell.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from tablesafe.problem import Problem
from tablesafe.structure.neighbours import find_sorted
from tablesafe.structure.table import CompiledModel

__all__ = ["CellOverlap", "occupied_cells"]

#: Most occupied common parts rolled up from the record cells; beyond it the model falls
#: back to what the cells alone tell (a larger set would cost more memory than it saves).
MEET_KEYS_MOST = 20_000_000


@dataclass
class CellOverlap:
    """Code positions of every cell and the ancestor relation of every dimension.

    Attributes:
        idx: ``(n, ndims)`` position of each cell's code in its dimension's hierarchy.
        shape: number of codes per dimension.
        keys: sorted flat keys (``ravel_multi_index`` of ``idx``) of the cells.
        key_cell: the cell of each sorted key.
        anc: per dimension, ``anc[a, b]`` is true when code ``a`` is ``b`` or an ancestor of it.
        parent: per dimension, each code's parent (-1 for the root).
        meet_keys: sorted flat keys of every occupied cross-classification cell (at
            all levels) when the record cells are known, else ``None``.
    """

    idx: np.ndarray
    shape: tuple[int, ...]
    keys: np.ndarray
    key_cell: np.ndarray
    anc: list[np.ndarray]
    parent: list[np.ndarray]
    meet_keys: np.ndarray | None = None

    @classmethod
    def of(cls, problem: Problem) -> CellOverlap | None:
        """Build from ``problem.model``; ``None`` for a problem without table structure."""
        model = problem.model
        if model is None or model.size != problem.n or len(model.dims) < 1:
            return None
        cols = []
        anc = []
        parents = []
        for d in model.dims:
            h = d.hierarchy
            pos = pd.Index(h.codes).get_indexer(model.codes[d.name].astype(str).to_numpy())
            if (pos < 0).any():
                return None
            cols.append(pos)
            parent = np.asarray(h.parent, dtype=np.int64)
            parents.append(parent)
            m = np.eye(len(parent), dtype=bool)
            for b in range(len(parent)):
                a = parent[b]
                while a != -1:
                    m[a, b] = True
                    a = parent[a]
            anc.append(m)
        idx = np.stack(cols, axis=1).astype(np.int64)
        shape = tuple(len(d.hierarchy) for d in model.dims)
        flat = np.ravel_multi_index(tuple(idx.T), shape)
        order = np.argsort(flat, kind="stable")
        meets = _occupied_keys(problem.record_cells, model, shape, parents)
        return cls(idx, shape, flat[order], order, anc, parents, meets)

    def lookup(self, codes: np.ndarray) -> np.ndarray:
        """Cells with the given code positions (rows of ``codes``); ``-1`` where none."""
        return self.lookup_keys(self._flat(codes))

    def lookup_keys(self, keys: np.ndarray) -> np.ndarray:
        """Cells with the given flat keys (code positions times :attr:`key_strides`,
        summed); ``-1`` where none."""
        at, found = find_sorted(self.keys, keys)
        return np.where(found, self.key_cell[at], -1)

    @property
    def key_strides(self) -> np.ndarray:
        """Per dimension, what one step of its code position adds to a flat key."""
        return np.cumprod((1, *self.shape[:0:-1]))[::-1]

    def _flat(self, codes: np.ndarray) -> np.ndarray:
        """Flat keys of code positions (rows of ``codes``)."""
        return np.ravel_multi_index(tuple(np.asarray(codes, dtype=np.int64).T), self.shape)

    def overlaps(self, cells: np.ndarray, t: int, occupied: np.ndarray,
                 single: np.ndarray | None = None) -> np.ndarray:
        """Which ``cells`` share a non-empty part (per ``occupied``) with cell ``t``.

        Linked tables: two cells of different tables may have a common part that is no
        cell of either (industry x region x size against industry x region x legal
        form). They share a respondent when that part holds a record (:attr:`meet_keys`,
        when the record cells are known), and when the smallest cell containing both
        (their *join*, here industry x region) has a single respondent (``single``):
        both cells, being non-empty, are that respondent's (with holdings this can hold
        while no record lies in both).
        """
        cells = np.asarray(cells, dtype=np.int64)
        out = np.ones(len(cells), dtype=bool)
        meet = np.empty((len(cells), len(self.anc)), dtype=np.int64)
        join = np.empty((len(cells), len(self.anc)), dtype=np.int64)
        for j, anc in enumerate(self.anc):
            a, b = self.idx[t, j], self.idx[cells, j]
            below, above = anc[a, b], anc[b, a]
            out &= below | above
            meet[:, j] = np.where(below, b, a)
            join[:, j] = np.where(below, a, b)
        if out.any():
            cell = self.lookup(meet[out])
            hit = (cell >= 0) & occupied[np.maximum(cell, 0)]
            missing = np.flatnonzero(cell < 0)
            if len(missing) and self.meet_keys is not None:
                hit[missing] = find_sorted(self.meet_keys, self._flat(meet[out][missing]))[1]
            if len(missing) and single is not None:
                top = self.lookup(join[out][missing])
                both = occupied[cells[out][missing]] & bool(occupied[t])
                hit[missing] |= (top >= 0) & single[np.maximum(top, 0)] & both
            out[out] = hit
        return out


def _occupied_keys(records: pd.DataFrame | None, model: CompiledModel, shape: tuple[int, ...],
                   parents: list[np.ndarray]) -> np.ndarray | None:
    """Sorted flat keys of every cell of the full cross-classification (all levels) that
    holds a record, rolled up from the record cells; ``None`` when they are unknown,
    name codes the hierarchies lack, or would roll up to more than
    :data:`MEET_KEYS_MOST` keys."""
    if records is None or not len(records) or len(model.dims) < 2:
        return None
    pos = []
    for d in model.dims:
        if d.name not in records:
            return None
        p = pd.Index(d.hierarchy.codes).get_indexer(records[d.name].astype(str).to_numpy())
        if (p < 0).any():
            return None
        pos.append(p.astype(np.int64))
    keys = np.unique(np.ravel_multi_index(tuple(pos), shape))
    for j, parent in enumerate(parents):
        stride = int(np.prod(shape[j + 1:], dtype=np.int64))
        found = [keys]
        code = (keys // stride) % shape[j]
        rest = keys - code * stride
        while True:
            up = parent[code]
            has = up >= 0
            if not has.any():
                break
            code, rest = up[has], rest[has]
            found.append(rest + code * stride)
            if sum(len(f) for f in found) > 4 * MEET_KEYS_MOST:
                return None
        keys = np.unique(np.concatenate(found))
        if len(keys) > MEET_KEYS_MOST:
            return None
    return keys


def occupied_cells(problem: Problem) -> np.ndarray:
    """Cells with at least one respondent (not empty, and a positive contributor count if known)."""
    from tablesafe.problem import EMPTY

    occ = problem.status != EMPTY
    if problem.contributors is not None:
        occ &= np.asarray(problem.contributors) > 0
    return occ
