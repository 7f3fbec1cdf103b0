"""What a protected publication tells about each cell's true total, whatever method
protected it: one uncertainty interval per cell (seed 004 sections 3.1-3.4).

- published as is: ``[T, T]``;
- withheld (suppression): the interval the audit's attacker LPs prove from the published
  cells, the relations and the a priori bounds (exact LP bounds);
- published as an interval (interval publication): that interval;
- controlled or random rounding to base ``B``: the published multiple ``r`` says only
  that ``T`` lies within one base of it, ``[r - B, r + B]`` (a cell may be rounded up or
  down), within the a priori bounds;
- controlled tabular adjustment: the adjusted value ``a`` with the size of its move
  ``d`` known but not its direction (the worst case short of knowing the value):
  ``[a - |d|, a + |d|]``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tablesafe.problem import Problem
from tablesafe.uncertainty.interval import Intervals

PUBLISHED, WITHHELD, INTERVAL, ROUNDED, ADJUSTED = "published", "withheld", "interval", "rounded", "adjusted"
"""How a cell's total reached the publication."""


@dataclass(frozen=True)
class PublishedTotals:
    """Per cell, what the publication tells about its total, and how it was published.

    Attributes:
        ui: the uncertainty interval of every cell's total.
        form: per cell one of ``published``, ``withheld``, ``interval``, ``rounded``, ``adjusted``.
    """

    ui: Intervals
    form: np.ndarray


def _within_bounds(problem: Problem, low: np.ndarray, high: np.ndarray) -> Intervals:
    lo = np.maximum(low, np.asarray(problem.lower, dtype=float))
    hi = np.minimum(high, np.asarray(problem.upper, dtype=float))
    v = np.asarray(problem.value, dtype=float)
    return Intervals.of(np.minimum(lo, v), np.maximum(hi, v))


def suppressed_totals(problem: Problem, withheld: np.ndarray) -> PublishedTotals:
    """Totals of a suppression pattern: the exact audit interval of every withheld
    sensitive cell, the value of every published one."""
    from tablesafe.audit import audit

    w = np.asarray(withheld, dtype=bool)
    v = np.asarray(problem.value, dtype=float)
    want = w & problem.sensitive
    low, high = v.copy(), v.copy()
    if want.any():
        res = audit(problem, w, insider=False, exact_intervals=True)
        low[want] = np.asarray(res.lower, dtype=float)[want]
        high[want] = np.asarray(res.upper, dtype=float)[want]
    form = np.where(w, WITHHELD, PUBLISHED).astype(object)
    return PublishedTotals(ui=_within_bounds(problem, low, high), form=form)


def interval_totals(problem: Problem, low: np.ndarray, high: np.ndarray) -> PublishedTotals:
    """Totals of an interval publication (NaN ends: published as is)."""
    v = np.asarray(problem.value, dtype=float)
    shown = np.isfinite(low) & np.isfinite(high)
    lo = np.where(shown, low, v)
    hi = np.where(shown, high, v)
    return PublishedTotals(ui=_within_bounds(problem, lo, hi), form=np.where(shown, INTERVAL, PUBLISHED).astype(object))


def rounded_totals(problem: Problem, published: np.ndarray, base: float) -> PublishedTotals:
    """Totals of a table rounded (controlled or at random) to multiples of ``base``."""
    r = np.asarray(published, dtype=float)
    return PublishedTotals(ui=_within_bounds(problem, r - base, r + base),
                           form=np.full(problem.n, ROUNDED, dtype=object))


def adjusted_totals(problem: Problem, adjusted: np.ndarray) -> PublishedTotals:
    """Totals of a table adjusted by CTA: the move's size known, its direction not."""
    a = np.asarray(adjusted, dtype=float)
    d = np.abs(a - np.asarray(problem.value, dtype=float))
    return PublishedTotals(ui=_within_bounds(problem, a - d, a + d),
                           form=np.where(d > 0, ADJUSTED, PUBLISHED).astype(object))


def publication_totals(result) -> PublishedTotals:
    """The totals of any :class:`~tablesafe.ProtectResult`: adjustment, interval
    publication or suppression (the one function the contribution-level audit uses)."""
    problem = result.problem
    adj = getattr(result, "adjustment", None)
    if adj is not None:
        if adj.base is not None:
            return rounded_totals(problem, adj.values, float(adj.base))
        return adjusted_totals(problem, adj.values)
    iv = getattr(result, "intervals", None)
    if iv is not None:
        return interval_totals(problem, iv.low, iv.high)
    return suppressed_totals(problem, result.pattern.withheld)
