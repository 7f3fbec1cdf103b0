"""The relations of a problem indexed both ways, for neighbourhood walks and local LPs."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from tablesafe.structure.neighbours import gather

__all__ = ["HopWalk", "RelationIndex"]


@dataclass(frozen=True)
class RelationIndex:
    """The relations ``A`` as plain CSR arrays, by relation and by cell.

    Attributes:
        row_ptr, row_cells, row_coef: ``A`` by row: the cells of relation ``r`` are
            ``row_cells[row_ptr[r]:row_ptr[r + 1]]``, their coefficients ``row_coef[...]``
            at the same positions.
        cell_ptr, cell_rows, cell_coef: ``A`` transposed: the relations cell ``i``
            takes part in, and its coefficient in each, at ``cell_ptr[i]:cell_ptr[i + 1]``.
    """

    row_ptr: np.ndarray
    row_cells: np.ndarray
    row_coef: np.ndarray
    cell_ptr: np.ndarray
    cell_rows: np.ndarray
    cell_coef: np.ndarray

    @classmethod
    def of(cls, relations: sp.spmatrix) -> RelationIndex:
        """Index a sparse ``(relations, cells)`` matrix."""
        A = relations.tocsr()
        At = A.T.tocsr()
        return cls(
            row_ptr=A.indptr.astype(np.int64),
            row_cells=A.indices.astype(np.int64),
            row_coef=A.data.astype(np.float64),
            cell_ptr=At.indptr.astype(np.int64),
            cell_rows=At.indices.astype(np.int64),
            cell_coef=At.data.astype(np.float64),
        )

    @property
    def n_relations(self) -> int:
        """Number of relations."""
        return len(self.row_ptr) - 1

    def relations_of(self, cells: np.ndarray) -> np.ndarray:
        """The relations each of ``cells`` takes part in, cell after cell (with repeats)."""
        return self.cell_rows[gather(self.cell_ptr, cells)]

    def cells_of(self, rows: np.ndarray) -> np.ndarray:
        """The cells of each relation in ``rows``, relation after relation (with repeats)."""
        return self.row_cells[gather(self.row_ptr, rows)]

    def around(self, cells: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """``cells`` and the ``mask`` cells that share a relation with one of them (sorted)."""
        rows = np.unique(self.relations_of(cells))
        near = self.cells_of(rows)
        return np.unique(np.concatenate((cells, near[mask[near]])))


class HopWalk:
    """The cells around a target, hop by hop through shared relations (only through
    ``movable`` cells), walked as far as asked and no further: a search that tries 2, 3,
    4, ... hops walks each hop once, not once per try.

    Args:
        rel: the relations.
        n: the number of cells.
        target: the cell the walk starts from (its hop 0).
        movable: the cells the walk may enter.
    """

    def __init__(self, rel: RelationIndex, n: int, target: int, movable: np.ndarray) -> None:
        self._rel = rel
        self._movable = movable
        self._seen = np.zeros(n, dtype=bool)
        self._seen[target] = True
        self._rows_seen = np.zeros(rel.n_relations, dtype=bool)
        self._frontier = np.array([target], dtype=np.int64)
        self._parts = [self._frontier]
        self.ends = [1]
        """For each hop ``h`` walked so far, how many of :attr:`cells` are within ``h``."""
        self.cells = self._frontier
        """The cells walked so far, in order of their distance (the target first; within a
        hop in increasing order)."""
        self.exhausted = False
        """Whether the last hop found no new cell (the walk has reached all it can)."""

    def within(self, hops: int) -> np.ndarray:
        """The movable cells within ``hops`` hops of the target, the target first."""
        while len(self.ends) <= hops and not self.exhausted:
            self._step()
        return self.cells[:self.ends[min(hops, len(self.ends) - 1)]]

    def _step(self) -> None:
        rel = self._rel
        rows = rel.relations_of(self._frontier)
        rows = rows[~self._rows_seen[rows]]
        self._rows_seen[rows] = True
        # (past 4,096 rows a scan of the flags is quicker than a sort; the relations seen
        # before add no cell: every movable cell of theirs is seen already)
        rows = np.flatnonzero(self._rows_seen) if len(rows) > 4096 else np.unique(rows)
        cand = rel.cells_of(rows) if len(rows) else rows
        cand = cand[self._movable[cand] & ~self._seen[cand]]
        if len(cand) == 0:
            self.exhausted = True
            return
        cand = np.unique(cand)
        self._seen[cand] = True
        self._parts.append(cand)
        self.ends.append(self.ends[-1] + len(cand))
        self._frontier = cand
        self.cells = np.concatenate(self._parts)
