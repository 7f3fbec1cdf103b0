"""The gate of an adjusted table, run before anything is written: it reads the adjusted
values against the problem alone (not the method's model) and fails closed.

What it proves: the table is additive (every relation within 1e-6 of the table's scale;
random rounding without ``readd_totals`` promises no additivity), every cell within its
a priori bounds, empty cells and kept totals unchanged; for CTA every sensitive cell moved
by at least its protection level in its direction; for rounding every cell a multiple of
the base within one base of its value, multiples unchanged.
"""

from __future__ import annotations

import numpy as np

from tablesafe.adjust.methods import CTA, RANDOM_ROUND
from tablesafe.adjust.options import AdjustOptions
from tablesafe.adjust.result import DOWN, UP, Adjustment
from tablesafe.adjust.totals import fixed_cells, total_cells
from tablesafe.errors import AuditFailure
from tablesafe.problem import Problem

RELATIVE_TOLERANCE = 1e-6
"""Tolerance of every comparison, relative to the table's scale (its largest |value|)."""


def check_adjustment(problem: Problem, adjustment: Adjustment, options: AdjustOptions) -> dict[str, float]:
    """Check ``adjustment`` of ``problem``; returns the worst figures found.

    Raises:
        AuditFailure: naming the first cell (or relation's total) that fails, and why.
    """
    y = np.asarray(adjustment.values, dtype=float)
    v = np.asarray(problem.value, dtype=float)
    method = adjustment.method
    if y.shape != v.shape or not np.all(np.isfinite(y)):
        _fail(method, "the adjusted values are missing or not finite")
    tol = RELATIVE_TOLERANCE * max(1.0, float(np.max(np.abs(v), initial=0.0)))
    dev = y - v
    figures = {"tolerance": tol}
    if method != RANDOM_ROUND or options.readd_totals:
        resid = np.abs(problem.relations @ y - problem.rhs)
        worst = int(np.argmax(resid)) if resid.size else -1
        figures["largest_residual"] = float(resid[worst]) if resid.size else 0.0
        if resid.size and resid[worst] > tol:
            _fail(method, f"relation of total {_total_of(problem, worst)} is off by {resid[worst]:g}")
    _first(problem, method, y < problem.lower - tol, "lies below its a priori lower bound")
    _first(problem, method, y > problem.upper + tol, "lies above its a priori upper bound")
    _first(problem, method, problem.empty & (np.abs(dev) > tol), "is empty but was changed")
    if method == CTA:
        _check_cta(problem, adjustment, options, dev, tol)
    else:
        _check_rounding(problem, adjustment, options, dev)
    return figures


def _check_cta(problem: Problem, adjustment: Adjustment, options: AdjustOptions, dev: np.ndarray,
               tol: float) -> None:
    """Sensitive cells moved by their levels; kept totals unchanged."""
    sens = problem.sensitive & ((problem.upl > 0) | (problem.lpl > 0))
    d = np.asarray(adjustment.direction)
    _first(problem, CTA, sens & (d != UP) & (d != DOWN), "is sensitive but has no direction")
    _first(problem, CTA, sens & (d == UP) & (dev < problem.upl - tol),
           "moved up by less than its upper protection level")
    _first(problem, CTA, sens & (d == DOWN) & (dev > -problem.lpl + tol),
           "moved down by less than its lower protection level")
    if not adjustment.stats.get("totals_released"):
        kept = fixed_cells(problem, options.fix_totals) & ~problem.sensitive
        _first(problem, CTA, kept & (np.abs(dev) > tol), "is a total to keep but was changed")


def _check_rounding(problem: Problem, adjustment: Adjustment, options: AdjustOptions, dev: np.ndarray) -> None:
    """Multiples of the base, within one base of the value; multiples unchanged."""
    base = float(adjustment.base or 0.0)
    method = adjustment.method
    if base <= 0:
        _fail(method, "no rounding base")
    q = adjustment.values / base
    _first(problem, method, np.abs(q - np.round(q)) > 1e-9 * np.maximum(1.0, np.abs(q)),
           f"is not a multiple of the base {base:g}")
    v = problem.value / base
    was_multiple = np.abs(v - np.round(v)) <= 1e-9 * np.maximum(1.0, np.abs(v))
    # rounding moves each cell by less than a base: compared cell by cell, not at the table's scale
    near = 1e-9 * np.maximum(1.0, np.abs(problem.value))
    rounded = ~total_cells(problem) if method == RANDOM_ROUND and options.readd_totals else np.ones(problem.n, bool)
    _first(problem, method, rounded & was_multiple & (np.abs(dev) > near),
           "was a multiple of the base but was changed")
    _first(problem, method, rounded & (np.abs(dev) >= base - near), f"moved by a whole base {base:g} or more")


def _first(problem: Problem, method: str, bad: np.ndarray, what: str) -> None:
    """Fail naming the first cell of ``bad``, if any."""
    hit = np.flatnonzero(bad)
    if hit.size:
        i = int(hit[0])
        more = f" (and {hit.size - 1} more cells)" if hit.size > 1 else ""
        _fail(method, f"cell {problem.names[i]} {what}{more}")


def _total_of(problem: Problem, row: int) -> str:
    """The name of a relation's total (its cell with a negative coefficient)."""
    a = problem.relations
    cols = a.indices[a.indptr[row]: a.indptr[row + 1]]
    coef = a.data[a.indptr[row]: a.indptr[row + 1]]
    neg = cols[coef < 0]
    return str(problem.names[int(neg[0] if neg.size else cols[0])])


def _fail(method: str, why: str) -> None:
    raise AuditFailure(f"the {method} table failed its check, so nothing is published: {why}")
