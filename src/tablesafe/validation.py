"""Allowed values of options, declared once and checked once, with one error wording.

An object that takes options (the rule set, the assessment) declares, per option name,
the constraints a value may satisfy; :func:`check_options` checks the values against
them where the options enter and refuses the first bad one with one sentence::

    weight_mode must be one of 'expand', 'sample', 'known' or None, got 'expanded'

The idea is scikit-learn's parameter validation (constraints declared beside the
estimator, one validating function); the constraint kinds here are the few tablesafe
needs.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from tablesafe.errors import TablesafeError


class Constraint:
    """One kind of value an option accepts; ``str()`` says which in words."""

    def allows(self, value: Any) -> bool:
        """True when ``value`` satisfies the constraint."""
        raise NotImplementedError


@dataclass(frozen=True)
class OneOf(Constraint):
    """One of a few fixed values (compared with ``==``)."""

    values: tuple[Any, ...]

    def allows(self, value: Any) -> bool:
        return isinstance(value, (str, int, float)) and value in self.values

    def __str__(self) -> str:
        return "one of " + ", ".join(repr(v) for v in self.values)


@dataclass(frozen=True)
class Interval(Constraint):
    """A finite real number within bounds (``None``: unbounded on that side);
    ``integer`` asks for a whole number. Booleans are not numbers here."""

    low: float | None = None
    high: float | None = None
    closed: str = "both"
    integer: bool = False

    def allows(self, value: Any) -> bool:
        if isinstance(value, bool) or not isinstance(value, numbers.Real):
            return False
        v = float(value)
        if not math.isfinite(v) or (self.integer and not v.is_integer()):
            return False
        if self.low is not None and (v < self.low or (v == self.low and self.closed in ("right", "neither"))):
            return False
        return not (self.high is not None and (v > self.high or (v == self.high and self.closed in ("left", "neither"))))

    def __str__(self) -> str:
        what = "a whole number" if self.integer else "a number"
        parts = []
        if self.low is not None:
            parts.append(f"{'>=' if self.closed in ('both', 'left') else '>'} {self.low:g}")
        if self.high is not None:
            parts.append(f"{'<=' if self.closed in ('both', 'right') else '<'} {self.high:g}")
        return what + (" " + " and ".join(parts) if parts else "")


@dataclass(frozen=True)
class Boolean(Constraint):
    """True or False."""

    def allows(self, value: Any) -> bool:
        return isinstance(value, bool)

    def __str__(self) -> str:
        return "True or False"


@dataclass(frozen=True)
class Absent(Constraint):
    """None: the option left out."""

    def allows(self, value: Any) -> bool:
        return value is None

    def __str__(self) -> str:
        return "None"


BOOLEAN = Boolean()
NONE = Absent()
NON_NEGATIVE = Interval(0.0)

Constraints = Mapping[str, Sequence[Constraint]]
"""Per option name, the constraints of which its value must satisfy at least one."""


def check_options(
    values: Mapping[str, Any], constraints: Constraints, *, error: type[TablesafeError]
) -> None:
    """Refuse the first value that satisfies none of its option's constraints.

    Options without a declared constraint are not checked; declared options missing from
    ``values`` are skipped.

    Raises:
        error: ``"<name> must be <allowed values>, got <value>"``.
    """
    for name, allowed in constraints.items():
        if name not in values:
            continue
        value = values[name]
        if not any(c.allows(value) for c in allowed):
            words = [str(c) for c in allowed]
            text = words[0] if len(words) == 1 else ", ".join(words[:-1]) + " or " + words[-1]
            raise error(f"{name} must be {text}, got {value!r}")
