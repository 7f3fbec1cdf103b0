"""The relations of a problem indexed both ways, for neighbourhood walks and local LPs."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from tablesafe.structure.neighbours import gather

__all__ = ["RelationIndex"]


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
