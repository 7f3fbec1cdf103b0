"""Run options checked once, where a run enters (:func:`tablesafe.protect`,
:func:`tablesafe.protect_problem`; the command line and job files call these): the method,
the insider mode and the time limit, each refused with one :class:`~tablesafe.InputError`
that names the option. The rules and their options (weight mode, missing codes, manual
margin) are checked where they enter, by :class:`tablesafe.rules.RuleSet`.
"""

from __future__ import annotations

import numbers
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from tablesafe.adjust.options import AdjustOptions
from tablesafe.adjust.stage import adjustment_options
from tablesafe.errors import InputError
from tablesafe.interval_publication import INTERVALS, IntervalOptions
from tablesafe.methods import check_any_method
from tablesafe.rules.ruleset import missing_codes_map

__all__ = ["INSIDER_MODES", "check_run_options", "missing_codes_map", "recorded"]

INSIDER_MODES = ("warn", "fail", "off")
"""What insider findings of the audit do: warn (default), fail the run, or not checked."""


def check_run_options(method: str, time_limit: float | None, insider: str = "warn", *, seed: int = 0,
                      **adjusting: Any) -> AdjustOptions | IntervalOptions | None:
    """Refuse bad run options before any work starts (:func:`protect`, :func:`protect_problem`).

    ``adjusting`` holds the adjustment options (``rounding_base``, ``readd_totals``,
    ``cta_cost``, ``cta_directions``, ``fix_totals``). Returns them checked for an
    adjustment method (CTA, rounding), the interval options for ``intervals`` (whose
    endpoints ``rounding_base`` rounds outward), None for a suppression method.

    Raises:
        InputError: an unknown method or insider mode, a time limit that is not a
            positive number of seconds, or a bad adjustment option (or one given to a
            suppression method).
    """
    check_any_method(method)
    if insider not in INSIDER_MODES:
        raise InputError(f"insider must be warn, fail or off, not {insider!r}")
    if time_limit is not None:
        try:
            seconds = float(time_limit)
        except (TypeError, ValueError):
            raise InputError(f"the time limit must be a number of seconds, got {time_limit!r}") from None
        if not seconds > 0:
            raise InputError(
                f"the time limit must be a positive number of seconds, got {time_limit!r} "
                "(--time-limit, Python: time_limit=...); leave it out for a limit set from the table size"
            )
    if method == INTERVALS:
        base = adjusting.pop("rounding_base", None)
        adjustment_options(method, time_limit=time_limit, seed=seed, **adjusting)  # refuses the others
        return IntervalOptions.build(base)
    return adjustment_options(method, time_limit=time_limit, seed=seed, **adjusting)


def recorded(value: Any) -> Any:
    """An option's value as the run's parameters record it (for the report and the
    analyst): numbers, flags, text and None as they are, paths as text, lists item by
    item, mappings as ``key=value`` items, and data given as objects (frames, cell
    tables) by their type only."""
    if value is None or isinstance(value, (str, numbers.Number)):
        return value
    if isinstance(value, Path):
        return str(value)
    if isinstance(value, Mapping):
        return [f"{k}={_item(v)}" for k, v in value.items()]
    if isinstance(value, (list, tuple)):
        return [_item(v) for v in value]
    return f"<{type(value).__name__}>"


def _item(value: Any) -> str:
    """One item of a recorded list: a nested list in parentheses."""
    if isinstance(value, (list, tuple)):
        return "(" + ", ".join(_item(v) for v in value) + ")"
    shown = recorded(value)
    return ", ".join(shown) if isinstance(shown, list) else str(shown)
