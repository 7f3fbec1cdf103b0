"""The adjustment stage: a :class:`~tablesafe.Problem` to an :class:`Adjustment`
(:func:`adjust`), checked by :func:`~tablesafe.adjust.check.check_adjustment` before
anything is written. :mod:`tablesafe.api` calls :func:`adjustment_options` at a run's
entry and :func:`adjust_checked` in place of suppression and audit.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from tablesafe.adjust.check import check_adjustment
from tablesafe.adjust.cta import adjust_cta
from tablesafe.adjust.methods import CTA, ROUND
from tablesafe.adjust.options import AdjustOptions
from tablesafe.adjust.random_rounding import adjust_random_round
from tablesafe.adjust.result import Adjustment, measure
from tablesafe.adjust.rounding import adjust_round
from tablesafe.adjust.totals import total_cells
from tablesafe.errors import InputError
from tablesafe.interval_publication import IntervalOptions
from tablesafe.methods import is_adjustment
from tablesafe.problem import Pattern, Problem
from tablesafe.result import ProtectResult

ADJUST_DEFAULTS: dict[str, Any] = {"rounding_base": None, "readd_totals": False, "cta_cost": "weighted",
                                   "cta_directions": "auto", "fix_totals": "none"}
"""The adjustment options of :func:`tablesafe.protect` and their defaults."""


def default_time_limit(n: int) -> float:
    """Seconds an adjustment gets when no time limit is given: 30 plus one per 250
    cells, at most ten minutes."""
    return float(min(600.0, 30.0 + n / 250.0))


def adjustment_options(method: str, *, time_limit: float | None = None, seed: int = 0,
                       **given: Any) -> AdjustOptions | None:
    """The checked adjustment options of a run (None for a suppression method).

    ``given`` holds the options of :data:`ADJUST_DEFAULTS`.

    Raises:
        InputError: a bad option, or an adjustment option given to a suppression method.
    """
    unknown = set(given) - set(ADJUST_DEFAULTS)
    if unknown:
        raise InputError(f"unknown adjustment option(s): {', '.join(sorted(unknown))}")
    if not is_adjustment(method):
        changed = [k for k, v in given.items() if v not in (None, ADJUST_DEFAULTS[k])]
        if changed:
            raise InputError(f"{changed[0]} (--{changed[0].replace('_', '-')}) applies to the adjustment "
                             f"methods (cta, round, random-round; rounding_base also to intervals), not {method}")
        return None
    opts = {**ADJUST_DEFAULTS, **{k: v for k, v in given.items() if v is not None}}
    return AdjustOptions.build(method, time_limit=time_limit, seed=seed, **opts)


def adjust(problem: Problem, options: AdjustOptions) -> Adjustment:
    """Adjust ``problem`` by ``options.method`` (unchecked: see :func:`adjust_checked`).

    Raises:
        InfeasibleError: no adjusted table was found (rounding: none exists or none in time).
    """
    t0 = time.perf_counter()
    seconds = options.time_limit if options.time_limit is not None else default_time_limit(problem.n)
    if options.method == CTA:
        values, direction, stats = adjust_cta(problem, options, seconds)
    elif options.method == ROUND:
        values, direction, stats = adjust_round(problem, options, seconds)
    else:
        values, direction, stats = adjust_random_round(problem, options)
    took = time.perf_counter() - t0
    stats = {**stats, "time_limit_given": options.time_limit is not None, "seconds": round(took, 3)}
    quality = measure(values, problem.value, problem.sensitive, total_cells(problem), took)
    return Adjustment(options.method, np.asarray(values, dtype=float), np.asarray(problem.value, dtype=float),
                      direction, quality, base=options.base, stats=stats)


def adjust_checked(problem: Problem, options: AdjustOptions, timings: dict[str, float] | None = None) -> Adjustment:
    """:func:`adjust`, then the gate: an adjustment that fails its check raises
    :class:`~tablesafe.AuditFailure` and is never returned. ``timings`` gets the seconds
    of both (``adjust``, ``check``)."""
    timings = {} if timings is None else timings
    t0 = time.perf_counter()
    adjustment = adjust(problem, options)
    timings["adjust"] = timings.get("adjust", 0.0) + time.perf_counter() - t0
    t0 = time.perf_counter()
    figures = check_adjustment(problem, adjustment, options)
    timings["check"] = timings.get("check", 0.0) + time.perf_counter() - t0
    stats = {**adjustment.stats, "check": "passed", **{f"check_{k}": v for k, v in figures.items()}}
    return Adjustment(adjustment.method, adjustment.values, adjustment.original, adjustment.direction,
                      adjustment.quality, adjustment.base, stats)


def recorded_adjustment(options: AdjustOptions | IntervalOptions | None) -> dict[str, Any]:
    """The adjustment options as the run's parameters record them (the defaults for a
    suppression method, which takes none; the rounding base of interval publication)."""
    if options is None:
        return dict(ADJUST_DEFAULTS)
    if isinstance(options, IntervalOptions):
        return {**ADJUST_DEFAULTS, "rounding_base": options.base}
    return {"rounding_base": options.base, "readd_totals": options.readd_totals, "cta_cost": options.cost,
            "cta_directions": options.directions, "fix_totals": str(options.fix_totals)}


def adjusted_result(problem: Problem, options: AdjustOptions, *, response: str, params: dict[str, Any],
                    timings: dict[str, float], marker: str | None = None,
                    empty_marker: str | None = None) -> ProtectResult:
    """The adjustment stage of a run: adjust, check (the gate: :class:`~tablesafe.AuditFailure`
    and nothing written when the check fails), and the run's result, whose publication
    holds every cell with its adjusted value."""
    adjustment = adjust_checked(problem, options, timings)
    pattern = Pattern(withheld=np.zeros(problem.n, dtype=bool), method=options.method,
                      stats=dict(adjustment.stats), proof="check")
    return ProtectResult(problem, pattern, None, response=response, method=options.method, params=params,
                         timings=timings, marker=marker, empty_marker=empty_marker, adjustment=adjustment)
