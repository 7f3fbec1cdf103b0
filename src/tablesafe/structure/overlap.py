"""Which cells share respondents: overlap of cells along their code hierarchies.

Two cells of a table overlap when, in every dimension, one cell's code equals the other's
or is an ancestor of it. Their common part is then the cell of the deeper codes (the
*meet*); when that cell is empty they have no respondent in common. Overlap decides who
is an insider of a cell: the single respondent of a withheld cell that overlaps a target
is one of the target's own contributors, and the target's protection level already
allows for what a contributor knows about its own value (seed 000 section 5.1, the
second-largest contributor in the p% rule).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from tablesafe.problem import Problem

__all__ = ["CellOverlap", "occupied_cells"]


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
    """

    idx: np.ndarray
    shape: tuple[int, ...]
    keys: np.ndarray
    key_cell: np.ndarray
    anc: list[np.ndarray]
    parent: list[np.ndarray]

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
        return cls(idx, shape, flat[order], order, anc, parents)

    def lookup(self, codes: np.ndarray) -> np.ndarray:
        """Cells with the given code positions (rows of ``codes``); ``-1`` where none."""
        flat = np.ravel_multi_index(tuple(np.asarray(codes, dtype=np.int64).T), self.shape)
        at = np.minimum(np.searchsorted(self.keys, flat), len(self.keys) - 1)
        return np.where(self.keys[at] == flat, self.key_cell[at], -1)

    def overlaps(self, cells: np.ndarray, t: int, occupied: np.ndarray,
                 single: np.ndarray | None = None) -> np.ndarray:
        """Which ``cells`` share a non-empty part (per ``occupied``) with cell ``t``.

        Linked tables: two cells of different tables may have a common part that is no
        cell of either (industry x region x size against industry x region x legal
        form). Whether it holds a respondent is then unknown, except when the smallest
        cell containing both (their *join*, here industry x region) has a single
        respondent (``single``): both cells, being non-empty, are that respondent's.
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
            if single is not None and (cell < 0).any():
                missing = np.flatnonzero(cell < 0)
                top = self.lookup(join[out][missing])
                both = occupied[cells[out][missing]] & bool(occupied[t])
                hit[missing] = (top >= 0) & single[np.maximum(top, 0)] & both
            out[out] = hit
        return out


def occupied_cells(problem: Problem) -> np.ndarray:
    """Cells with at least one respondent (not empty, and a positive contributor count if known)."""
    from tablesafe.problem import EMPTY

    occ = problem.status != EMPTY
    if problem.contributors is not None:
        occ &= np.asarray(problem.contributors) > 0
    return occ
