"""Implied bounds of a block's cells by propagating its relations (no LP).

For a relation ``sum_i a_i x_i = b`` each cell ``j`` satisfies
``a_j x_j = b - sum_{i != j} a_i x_i``; the smallest and largest value of the other terms
under the current bounds bound ``x_j``. Repeating this over all relations and cells
(the bound tightening of LP presolvers) gives an outer box of the feasible set.

Why the audit needs it: the largest value of a cell is known *exactly*, without an LP
of its own, as soon as some feasible table already reaches an upper bound implied by
the relations (it can neither be exceeded nor is it out of reach). In tables many
maxima and minima are set by a single relation, so earlier optimal tables of the same
block often settle them.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from tablesafe.audit import lp as _lp


def _row_activity(a: sp.csr_matrix, lo: np.ndarray, hi: np.ndarray
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray,
                             np.ndarray, np.ndarray]:
    """Per entry: its term's smallest and largest value; per row: the finite sums of
    those and the counts of infinite ones."""
    cols = a.indices
    coef = a.data
    with np.errstate(invalid="ignore"):
        t1 = coef * lo[cols]
        t2 = coef * hi[cols]
    tmin = np.where(coef > 0, t1, t2)
    tmax = np.where(coef > 0, t2, t1)
    rows = np.repeat(np.arange(a.shape[0]), np.diff(a.indptr))
    m = a.shape[0]
    fin_min = np.isfinite(tmin)
    fin_max = np.isfinite(tmax)
    smin = np.bincount(rows, weights=np.where(fin_min, tmin, 0.0), minlength=m)
    smax = np.bincount(rows, weights=np.where(fin_max, tmax, 0.0), minlength=m)
    nmin = np.bincount(rows, weights=(~fin_min).astype(float), minlength=m)
    nmax = np.bincount(rows, weights=(~fin_max).astype(float), minlength=m)
    return tmin, tmax, smin, smax, nmin, nmax


def implied_bounds(a: sp.csr_matrix, rhs: np.ndarray, lower: np.ndarray, upper: np.ndarray,
                   *, rounds: int = 30) -> tuple[np.ndarray, np.ndarray]:
    """Bounds of each column implied by ``a @ x == rhs`` and ``lower <= x <= upper``.

    Valid outer bounds (every feasible ``x`` lies inside them, up to rounding of the
    order of ``1e-12`` relative to the row activities); ``rounds`` passes at most, fewer
    when a pass tightens no bound by more than a relative ``1e-9``.
    """
    a = sp.csr_matrix(a, dtype=float)
    lo = np.asarray(lower, dtype=float).copy()
    hi = np.asarray(upper, dtype=float).copy()
    lo[lo <= -_lp.INFINITE_BOUND] = -np.inf      # as HiGHS reads them (JJ's 1e30)
    hi[hi >= _lp.INFINITE_BOUND] = np.inf
    if a.nnz == 0:
        return lo, hi
    rows = np.repeat(np.arange(a.shape[0]), np.diff(a.indptr))
    cols = a.indices
    coef = a.data
    b = np.asarray(rhs, dtype=float)[rows]
    for _ in range(rounds):
        tmin, tmax, smin, smax, nmin, nmax = _row_activity(a, lo, hi)
        # smallest / largest value of the other terms of the entry's row
        own_min_inf = ~np.isfinite(tmin)
        own_max_inf = ~np.isfinite(tmax)
        other_min = np.where(nmin[rows] - own_min_inf > 0, -np.inf,
                             smin[rows] - np.where(own_min_inf, 0.0, tmin))
        other_max = np.where(nmax[rows] - own_max_inf > 0, np.inf,
                             smax[rows] - np.where(own_max_inf, 0.0, tmax))
        with np.errstate(invalid="ignore", divide="ignore"):
            v1 = (b - other_max) / coef      # a_j x_j >= b - other_max
            v2 = (b - other_min) / coef      # a_j x_j <= b - other_min
        new_lo = np.where(coef > 0, v1, v2)
        new_hi = np.where(coef > 0, v2, v1)
        new_lo = np.where(np.isnan(new_lo), -np.inf, new_lo)
        new_hi = np.where(np.isnan(new_hi), np.inf, new_hi)
        cand_lo = np.full(lo.size, -np.inf)
        cand_hi = np.full(hi.size, np.inf)
        np.maximum.at(cand_lo, cols, new_lo)
        np.minimum.at(cand_hi, cols, new_hi)
        tol_lo = 1e-9 * (1.0 + np.abs(np.where(np.isfinite(lo), lo, 0.0)))
        tol_hi = 1e-9 * (1.0 + np.abs(np.where(np.isfinite(hi), hi, 0.0)))
        up = cand_lo > lo + tol_lo
        dn = cand_hi < hi - tol_hi
        if not (up.any() or dn.any()):
            break
        lo[up] = cand_lo[up]
        hi[dn] = cand_hi[dn]
    return lo, np.maximum(hi, lo)
