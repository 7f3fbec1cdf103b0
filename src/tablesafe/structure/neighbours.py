"""Walking the relations of a table from cell to relation to cell, by index arithmetic,
and finding values in sorted index arrays (:func:`find_sorted`).

The relations are a sparse ``(relations, cells)`` matrix. Stored compressed by row (CSR)
it says which cells each relation holds; compressed by column (CSC), which relations
each cell takes part in. A neighbourhood walk alternates the two: the relations of some
cells, then the cells of those relations. Both the audit (local attacks on single-unit
cells) and the suppression methods (local protection searches) walk this way, with the
functions here.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

__all__ = ["find_sorted", "gather", "neighbours"]


def gather(ptr: np.ndarray, sel: np.ndarray) -> np.ndarray:
    """Positions ``ptr[s]:ptr[s+1]`` for every ``s`` in ``sel``, concatenated in order.

    ``ptr`` is a CSR (or CSC) index pointer; the result indexes the matching ``indices``
    and ``data`` arrays (the entries of the rows ``sel``, row after row).
    """
    lens = ptr[sel + 1] - ptr[sel]
    total = int(lens.sum())
    if total == 0:
        return np.zeros(0, dtype=np.int64)
    ends = np.cumsum(lens)
    return np.repeat(ptr[sel] - ends + lens, lens) + np.arange(total)


def find_sorted(sorted_keys: np.ndarray, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Where each of ``values`` sits in ``sorted_keys`` (ascending), and whether it is
    there: ``np.isin`` by binary search, which neither hashes nor sorts ``sorted_keys``
    (thousands of keys looked up for a few values). Positions of absent values are not
    meaningful."""
    values = np.asarray(values)
    if not len(sorted_keys):
        return np.zeros(len(values), dtype=np.int64), np.zeros(len(values), dtype=bool)
    at = np.minimum(np.searchsorted(sorted_keys, values), len(sorted_keys) - 1)
    return at, sorted_keys[at] == values


def neighbours(m: sp.csr_matrix | sp.csc_matrix, major: np.ndarray) -> np.ndarray:
    """The distinct minor indices of some rows of a CSR matrix (columns of a CSC matrix),
    sorted: with the relations as CSC, the relations the cells ``major`` take part in;
    as CSR, the cells of the relations ``major``."""
    return np.unique(m.indices[gather(m.indptr, major)])
