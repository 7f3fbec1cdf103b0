"""Run options checked once, where a run enters (:func:`tablesafe.protect`,
:func:`tablesafe.protect_problem`; the command line and job files call these): the method,
the insider mode, the time limit and the missing codes, each refused with one
:class:`~tablesafe.InputError` that names the option.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tablesafe.errors import InputError
from tablesafe.suppress.methods import check_method

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


def missing_codes_map(missing_codes: Any) -> dict[str, list[str]] | None:
    """The codes that stand for a missing value, per dimension, from a mapping
    ``{dimension: code or codes}`` (Python, a job file's table) or ``"dimension=code"``
    strings (``--missing-codes``, a job file's list); None when none are given.

    Raises:
        InputError: a string without ``=``, or an empty dimension name or code.
    """
    if not missing_codes:
        return None
    out: dict[str, list[str]] = {}
    if isinstance(missing_codes, Mapping):
        for dim, codes in missing_codes.items():
            out.setdefault(str(dim), []).extend([codes] if isinstance(codes, str) else [str(c) for c in codes])
        return out
    for item in [missing_codes] if isinstance(missing_codes, str) else missing_codes:
        dim, eq, code = str(item).partition("=")
        if not eq or not dim.strip() or not code.strip():
            raise InputError(f"missing codes are given as DIMENSION=CODE, not {item!r} (--missing-codes)")
        out.setdefault(dim.strip(), []).append(code.strip())
    return out
