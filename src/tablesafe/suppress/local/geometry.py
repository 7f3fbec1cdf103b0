"""Boxes around a cell of a table with hierarchical dimensions: the local search's
neighbourhoods when the table's structure is known.

A *box* around a cell is the cross product, over the dimensions, of a set of codes
around the cell's code in that dimension. Six levels of code sets are defined
(:func:`code_sets`); the local search tries them in the order
:attr:`tablesafe.suppress.local.search.SearchOptions.box_levels` gives.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tablesafe.problem import Problem
from tablesafe.structure.hierarchy import Hierarchy
from tablesafe.structure.neighbours import find_sorted
from tablesafe.structure.overlap import CellOverlap

__all__ = ["BOX_LEVELS", "Geometry", "code_sets"]

BOX_LEVELS = (1, 2, 3, 4, 5, 6)
"""The box levels :func:`code_sets` defines."""


@dataclass(frozen=True)
class Geometry:
    """Code positions of every cell and per-code neighbour sets, for box neighbourhoods.

    Attributes:
        cells: the code position of every cell in each dimension (and the lookup from
            code combinations back to cells).
        sets: ``sets[level - 1][dim][code]``: the code positions of the box of the
            given level around ``code`` in dimension ``dim`` (see :func:`code_sets`).
    """

    cells: CellOverlap
    sets: list[list[list[np.ndarray]]]

    @classmethod
    def of(cls, problem: Problem) -> Geometry | None:
        """The geometry of a problem with a table structure, else ``None``."""
        cells = CellOverlap.of(problem)
        if cells is None or problem.model is None:
            return None
        sets: list[list[list[np.ndarray]]] = [[] for _ in BOX_LEVELS]
        for d in problem.model.dims:
            for level, codes in enumerate(code_sets(d.hierarchy)):
                sets[level].append(codes)
        return cls(cells, sets)

    def overlaps(self, cells: np.ndarray, t: int, occupied: np.ndarray) -> np.ndarray:
        """Which ``cells`` share a non-empty part with cell ``t`` (see :class:`CellOverlap`)."""
        return self.cells.overlaps(cells, t, occupied)

    def first_codes(self, cells: np.ndarray) -> np.ndarray:
        """Each cell's code position in the first dimension (0 is its total)."""
        return self.cells.idx[cells, 0]

    def box_size(self, t: int, level: int) -> int:
        """Number of code combinations in the box (an upper bound on its cells)."""
        idx = self.cells.idx
        return int(np.prod([len(self.sets[level - 1][j][idx[t, j]]) for j in range(idx.shape[1])]))

    def box(self, t: int, level: int) -> np.ndarray:
        """Cells of the box around cell ``t`` at ``level`` (1 to 6, see :func:`code_sets`)."""
        g = self.cells
        parts = [self.sets[level - 1][j][g.idx[t, j]] for j in range(len(g.shape))]
        grid = np.meshgrid(*parts, indexing="ij")
        flat = np.ravel_multi_index(tuple(x.ravel() for x in grid), g.shape)
        at, ok = find_sorted(g.keys, flat)
        return g.key_cell[at[ok]]


def code_sets(h: Hierarchy) -> tuple[list[np.ndarray], ...]:
    """Per code of ``h``, the sorted code positions of the box levels 1 to 6.

    1: the code, its siblings, ancestors and descendants; 2: level 1 and the ancestors'
    siblings and the siblings' children; 3 (compact): the code, its siblings, ancestors
    and children; 4: level 1 and the siblings' descendants (the parent's whole subtree
    and the ancestors); 5: level 2 and the siblings' descendants; 6: every code of the
    dimension.
    """
    n = len(h)
    parent = np.asarray(h.parent)
    kids = [list(h.children(i)) for i in range(n)]
    desc: list[list[int]] = [[] for _ in range(n)]
    for i in range(n - 1, -1, -1):  # pre-order: children after parents
        for c in kids[i]:
            desc[i].extend([c, *desc[c]])
    out: tuple[list[np.ndarray], ...] = ([], [], [], [], [], [])
    every = np.arange(n, dtype=np.int64)
    for i in range(n):
        anc = []
        p = parent[i]
        while p != -1:
            anc.append(int(p))
            p = parent[p]
        sib = kids[parent[i]] if parent[i] != -1 else []
        s1 = {i, *sib, *anc, *desc[i]}
        s2 = set(s1)
        for a in anc:
            if parent[a] != -1:
                s2.update(kids[parent[a]])
        for s in sib:
            s2.update(kids[s])
        sub = set()
        for s in sib:
            sub.update(desc[s])
        for k, codes in enumerate((s1, s2, {i, *sib, *anc, *kids[i]}, s1 | sub, s2 | sub)):
            out[k].append(np.array(sorted(codes), dtype=np.int64))
        out[5].append(every)
    return out
