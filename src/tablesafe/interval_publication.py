"""Interval publication (partial suppression, seed 002 "Secondary tabular data protection
methods"): a suppression pattern whose withheld cells are published as intervals
``[low, high]`` instead of blanks.

Each interval is the one the audit proves: the smallest and largest value the cell takes
over every table an outside attacker cannot rule out (it knows the published cells, the
relations and the a priori bounds), rounded outward (to multiples of a base when one is
given). Publishing these intervals tells the attacker nothing new: every table it could
not rule out before lies inside all of them, so each sensitive cell keeps the interval it
had, and the same holds for the tables a single respondent cannot rule out (they are a
subset). :func:`check_intervals` does not rely on this argument: it audits the pattern
again with the published intervals added to the attacker's knowledge as bounds, and the
run fails closed when any sensitive cell is no longer protected.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from tablesafe.adjust.options import positive_base
from tablesafe.errors import AuditFailure
from tablesafe.problem import Problem
from tablesafe.suppress.methods import MethodInfo

INTERVALS = "intervals"
"""The method name: suppression (``auto``), then intervals for the withheld cells."""

INTERVAL_REGISTRY: tuple[MethodInfo, ...] = (
    MethodInfo(INTERVALS, "suppression (auto), withheld cells published as the intervals the audit "
                          "proves, [low, high] (rounded outward to --rounding-base)"),
)
"""The interval publication method, as help texts list it."""

SUPPRESSION_METHOD = "auto"
"""The suppression method whose pattern the intervals describe."""


@dataclass(frozen=True)
class IntervalOptions:
    """The checked options of an interval publication.

    Attributes:
        base: endpoints are rounded outward to multiples of ``base``; None: to whole units
            when every cell value is whole, else to hundredths.
        method: always :data:`INTERVALS`.
    """

    base: float | None = None
    method: str = INTERVALS

    @classmethod
    def build(cls, rounding_base: Any = None) -> IntervalOptions:
        """Check the rounding base (a positive finite number, or None).

        Raises:
            InputError: a base that is not a positive number.
        """
        return cls() if rounding_base is None else cls(base=positive_base(rounding_base))


@dataclass(frozen=True)
class PublishedIntervals:
    """The intervals published for the withheld cells.

    Attributes:
        low: per cell, the interval's lower end (NaN for published cells).
        high: per cell, the interval's upper end (NaN for published cells).
        base: the multiple the ends were rounded outward to.
        audit_low: per cell, the audit's exact lower bound before rounding (NaN: published).
        audit_high: per cell, the audit's exact upper bound before rounding.
    """

    low: np.ndarray
    high: np.ndarray
    base: float
    audit_low: np.ndarray
    audit_high: np.ndarray

    @property
    def withheld(self) -> np.ndarray:
        """The cells published as intervals."""
        return ~np.isnan(self.low)

    def widths(self, value: np.ndarray) -> np.ndarray:
        """Width of each published interval relative to the cell's absolute value (NaN
        for published cells; inf for an interval around a zero value)."""
        v = np.abs(np.asarray(value, dtype=float))
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(v > 0, (self.high - self.low) / v, np.where(self.high > self.low, np.inf, 0.0))


def default_base(problem: Problem) -> float:
    """Whole units when every cell value is whole, else hundredths."""
    v = np.asarray(problem.value, dtype=float)
    return 1.0 if np.all(np.isfinite(v) & (v == np.round(v))) else 0.01


def interval_bounds(problem: Problem, withheld: np.ndarray, options: IntervalOptions) -> PublishedIntervals:
    """The audit's exact interval of every withheld cell, rounded outward.

    The ends stay within the a priori bounds (which the attacker knows anyway), so a
    rounded interval still contains the true value and is never narrower than the
    audit's.
    """
    from tablesafe.audit import audit

    w = np.asarray(withheld, dtype=bool)
    res = audit(problem, w, insider=False, all_cells=True, exact_intervals=True)
    base = options.base if options.base is not None else default_base(problem)
    lo_a = np.where(w, np.asarray(res.lower, dtype=float), np.nan)
    hi_a = np.where(w, np.asarray(res.upper, dtype=float), np.nan)
    v = np.asarray(problem.value, dtype=float)
    # an exactly known withheld cell (numerically zero width) still gets its true value inside
    lo_a = np.where(w, np.minimum(lo_a, v), np.nan)
    hi_a = np.where(w, np.maximum(hi_a, v), np.nan)
    with np.errstate(invalid="ignore"):
        low = np.floor(lo_a / base) * base
        high = np.ceil(hi_a / base) * base
    low = np.where(w, np.maximum(low, problem.lower), np.nan)
    high = np.where(w, np.minimum(high, problem.upper), np.nan)
    # snap the multiples (floating point) without moving an end past the audit's bound
    low = np.where(w, np.minimum(np.round(low, 10), lo_a), np.nan)
    high = np.where(w, np.maximum(np.round(high, 10), hi_a), np.nan)
    return PublishedIntervals(low=low, high=high, base=float(base), audit_low=lo_a, audit_high=hi_a)


def check_intervals(problem: Problem, withheld: np.ndarray, intervals: PublishedIntervals,
                    insider: bool) -> dict[str, Any]:
    """The gate of an interval publication: every published interval holds its cell's
    true value, and the pattern passes the audit again with the intervals added to what
    the attacker knows (each withheld cell bounded by its interval); with ``insider`` the
    single respondents' attacks are checked too.

    Returns:
        Figures of the check (cells, audited sensitive cells, seconds).

    Raises:
        AuditFailure: an interval misses its true value or a sensitive cell is no
            longer protected; nothing may then be published.
    """
    import time

    from tablesafe.audit import all_protected, audit, findings_in_words, verdict_line
    from tablesafe.audit.result import verdicts

    t0 = time.perf_counter()
    w = np.asarray(withheld, dtype=bool)
    v = np.asarray(problem.value, dtype=float)
    if not np.array_equal(intervals.withheld, w):
        raise AuditFailure("the published intervals do not cover exactly the withheld cells; nothing is published")
    tol = 1e-9 * np.maximum(1.0, np.abs(v))
    miss = w & ((intervals.low > v + tol) | (intervals.high < v - tol))
    if miss.any():
        k = int(np.flatnonzero(miss)[0])
        raise AuditFailure(f"the published interval of cell {problem.names[k]} "
                           f"[{intervals.low[k]:g}, {intervals.high[k]:g}] misses its value; nothing is published")
    # the intervals of the sensitive cells themselves must span what their levels ask
    # (judged with the problem's own a priori bounds, which the audit below would
    # otherwise read from the intervals)
    sens = np.flatnonzero(w & problem.sensitive)
    own = verdicts(problem, intervals.low, intervals.high, sens)[sens]
    if np.any(own != "protected"):
        k = int(sens[np.flatnonzero(own != "protected")[0]])
        raise AuditFailure(f"the published interval of sensitive cell {problem.names[k]} "
                           f"[{intervals.low[k]:g}, {intervals.high[k]:g}] is too narrow ({own[own != 'protected'][0]}); "
                           "nothing is published")
    lower = np.where(w, np.maximum(problem.lower, intervals.low), problem.lower)
    upper = np.where(w, np.minimum(problem.upper, intervals.high), problem.upper)
    known = replace(problem, lower=lower, upper=upper)
    res = audit(known, w, insider=insider)
    if not all_protected(res) or (insider and findings_in_words(res)):
        raise AuditFailure("the pattern fails its audit once the published intervals are known, so nothing "
                           "is published: " + verdict_line(res))
    return {"cells": int(w.sum()), "sensitive_audited": int((w & problem.sensitive).sum()),
            "seconds": round(time.perf_counter() - t0, 3)}
