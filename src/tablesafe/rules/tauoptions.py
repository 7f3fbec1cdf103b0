"""The tau-ARGUS options written among the rules of a rule string: ``MAN(margin)``,
``WGT(0|1)`` and ``MIS(0|1)``.

They are not sensitivity rules (they mark no cell): :func:`tablesafe.rules.parse_rules`
reads them so that tau-ARGUS strings such as ``P(15,1)|MAN(20)|WGT(1)`` parse, and
:class:`tablesafe.rules.RuleSet` turns them into its typed options (manual margin,
weight mode, missing codes safe) once, where the rules enter.
"""

from __future__ import annotations

from dataclasses import dataclass

from tablesafe.errors import RuleError
from tablesafe.rules.model import _num


@dataclass(frozen=True)
class RuleOption:
    """Base class of the options a rule string may carry."""

    kind = ""
    """Short name of the option (``man``, ``wgt``, ``mis``)."""

    def describe(self) -> str:
        """One sentence saying what the option does."""
        raise NotImplementedError

    def to_string(self) -> str:
        """The text that :func:`tablesafe.rules.parse_rules` turns back into this option."""
        raise NotImplementedError

    def to_tauargus(self) -> str:
        """The tau-ARGUS batch form of this option."""
        raise NotImplementedError

    def __str__(self) -> str:
        return self.to_string()


@dataclass(frozen=True)
class ManualRule(RuleOption):
    """Safety margin (percent of the value) for cells made sensitive by hand (tau-ARGUS MAN)."""

    margin: float = 10.0

    kind = "man"

    def __post_init__(self) -> None:
        if self.margin < 0:
            raise RuleError(f"manual safety margin must be >= 0, got {self.margin}")

    def describe(self) -> str:
        return f"manual safety margin: cells made sensitive by hand get {_num(self.margin)}% of their value"

    def to_string(self) -> str:
        return f"man({_num(self.margin)})"

    def to_tauargus(self) -> str:
        return f"MAN({_num(self.margin)})"


@dataclass(frozen=True)
class WeightOption(RuleOption):
    """tau-ARGUS ``WGT(1)``: apply sampling weights in the rules (mode ``expand``)."""

    apply: bool = True

    kind = "wgt"

    def describe(self) -> str:
        return "apply sampling weights in the safety rules" if self.apply else "ignore sampling weights"

    def to_string(self) -> str:
        return f"wgt({int(self.apply)})"

    def to_tauargus(self) -> str:
        return f"WGT({int(self.apply)})"


@dataclass(frozen=True)
class MissingOption(RuleOption):
    """tau-ARGUS ``MIS(0|1)``: whether cells with missing codes are safe (kept for migration)."""

    safe: bool = False

    kind = "mis"

    def describe(self) -> str:
        return "cells of missing codes are " + ("safe" if self.safe else "judged by the rules")

    def to_string(self) -> str:
        return f"mis({int(self.safe)})"

    def to_tauargus(self) -> str:
        return f"MIS({int(self.safe)})"
