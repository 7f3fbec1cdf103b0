"""Run options checked once, where a run enters (:func:`tablesafe.protect`,
:func:`tablesafe.protect_problem`; the command line and job files call these): the method,
the insider mode and the time limit, each refused with one :class:`~tablesafe.InputError`
that names the option. The rules and their options (weight mode, missing codes, manual
margin) are checked where they enter, by :class:`tablesafe.rules.RuleSet`.
"""

from __future__ import annotations

from tablesafe.errors import InputError
from tablesafe.rules.ruleset import missing_codes_map
from tablesafe.suppress.methods import check_method

__all__ = ["INSIDER_MODES", "check_run_options", "missing_codes_map"]

INSIDER_MODES = ("warn", "fail", "off")
"""What insider findings of the audit do: warn (default), fail the run, or not checked."""


def check_run_options(method: str, time_limit: float | None, insider: str = "warn") -> None:
    """Refuse bad run options before any work starts (:func:`protect`, :func:`protect_problem`).

    Raises:
        InputError: an unknown method or insider mode, or a time limit that is not a
            positive number of seconds.
    """
    check_method(method)
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
                "(--time-limit, Python: time_limit=...); leave it out for no limit"
            )
