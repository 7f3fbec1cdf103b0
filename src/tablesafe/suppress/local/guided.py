"""Guided regions: a small LP in place of a whole block's, when time is short.

Where relation hops reach a target's whole block before any LP is feasible (Castro's
HIER16: every hop up to five infeasible, the sixth is the block of 3,563 cells), the
block's LP is the slow step: 2.7 s each there (simplex and interior point method), 121
of the run's 125 s. A hurried search first ranks the block's cells by how much a smooth
deviation moves them: the least-squares deviation that moves the target by 1 and keeps
every relation, each cell weighted by how far it may move (:func:`ranked`, a few hundred
LSQR iterations on the block's matrix, :mod:`~tablesafe.suppress.local.lsqr`). The LP then runs on the best-ranked cells only,
doubling them until it is feasible (:data:`REGION_SIZES`). Measured on three of HIER16's
whole-block LPs: with 400 LSQR iterations (35 ms) feasible on the best 1,600 cells,
11-49 ms against 2.7 s; with a converged ranking (5,000 iterations, 0.7 s) on the best
800. Either way at about twice the whole block's LP cost. The whole block stays the
last resort, so no target loses its certificate this way.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from tablesafe.parallel import blas_on_one_thread
from tablesafe.suppress.local.lsqr import lsqr_weighted

__all__ = ["GUIDED_FROM", "LSQR_ITERATIONS", "LSQR_ITERATIONS_RELATIONS", "REGION_SIZES", "ranked"]

GUIDED_FROM = 1_500
"""Blocks of at least this many cells are searched by guided regions first (when the
search hurries)."""

REGION_SIZES = (400, 800, 1_600, 3_200)
"""Cells of the guided regions tried, in order (each smaller than the block)."""

LSQR_ITERATIONS = 400
"""LSQR iterations for the ranking (a ranking needs no converged deviation)."""

LSQR_ITERATIONS_RELATIONS = 100
"""LSQR iterations for the ranking on problems without a table structure, where relation
hops reach whole blocks and the ranking is most of a hurried search's time. Measured
with ``fast`` on Castro's problems (fifty-second session, 400 -> 100 iterations): at
5 s NINENEW 7.7 -> 6.2 s (27.61 -> 27.60 M), TWO5IN6 8.8 -> 5.2 s (23.97 M both), HIER16
5.9 -> 4.6 s (38.63 -> 38.05 M); at 10 s NINENEW 6.6 -> 6.0 s, TWO5IN6 7.4 -> 5.7 s, the
same values. With 50, NINENEW at 10 s withheld 29.24 M. On a table with structure
(``modular`` on the generated 13,851-cell three-way table at 60 s, whose completion
hurries and then chains) 881 M against 901 M with 100, within what the clock moves it,
so it keeps the 400 there."""


def ranked(indptr: np.ndarray, rows: np.ndarray, val: np.ndarray, nrow: int, room: np.ndarray,
           target: int = 0, iterations: int = LSQR_ITERATIONS) -> np.ndarray:
    """Positions of a block's columns, the target first, then by how much the smallest
    weighted deviation moving the target by 1 moves each (relative to its room).

    Args:
        indptr, rows, val, nrow: the block's matrix column-wise (``nrow`` rows).
        room: how far each column may move (finite, positive; its weight).
        target: the target's column.
        iterations: LSQR iterations.
    """
    k = len(indptr) - 1
    m = sp.csc_matrix((val, rows, indptr), shape=(nrow, k))
    w = np.asarray(room, dtype=np.float64).copy()
    w[target] = 0.0  # the target's column is the right-hand side, not a variable
    b = np.zeros(nrow)
    b[rows[indptr[target]:indptr[target + 1]]] = -val[indptr[target]:indptr[target + 1]]
    with blas_on_one_thread():  # the same sums in every process
        y = lsqr_weighted(m, w, b, iterations)
    others = np.flatnonzero(np.arange(k) != target)
    # |d_c| / room_c = |w_c y_c| / w_c = |y_c|
    order = others[np.lexsort((others, -np.abs(y[others])))]
    return np.concatenate(([target], order)).astype(np.int64)
