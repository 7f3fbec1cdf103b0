"""The tau-ARGUS options written among the rules of a rule string: ``MAN(margin)``,
``WGT(0|1)`` and ``MIS(0|1)``.

They are not sensitivity rules (they mark no cell): :func:`tablesafe.rules.parse_rules`
reads them so that tau-ARGUS strings such as ``P(15,1)|MAN(20)|WGT(1)`` parse, and
:class:`tablesafe.rules.RuleSet` turns them into its typed options (manual margin,
weight mode, missing codes safe) once, where the rules enter.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from tablesafe.rules.spelling import Spelled


@dataclass(frozen=True)
class RuleOption(Spelled):
    """Base class of the options a rule string may carry (written as :class:`Spelled`
    says: ``man(20)``, ``MAN(20)``)."""


@dataclass(frozen=True)
class ManualRule(RuleOption):
    """Safety margin (percent of the value) for cells made sensitive by hand (tau-ARGUS MAN)."""

    margin: float = 10.0

    kind = "man"  # type: ignore[assignment]
    tauargus_name = "MAN"
    wording = "manual safety margin: cells made sensitive by hand get {0}% of their value"
    not_negative = (("margin", "manual safety margin"),)


@dataclass(frozen=True)
class SwitchOption(RuleOption):
    """An option that is on or off, written 1 or 0 (``WGT``, ``MIS``); ``switch_wording``
    says what it does when off, then when on."""

    on: bool = True

    switch_wording: ClassVar[tuple[str, str]] = ("", "")

    def describe(self) -> str:
        return self.switch_wording[int(self.on)]


@dataclass(frozen=True)
class WeightOption(SwitchOption):
    """tau-ARGUS ``WGT(0|1)``: whether the sampling weights are applied. ``WGT(1)``: the
    rules use weight mode ``expand``; ``WGT(0)`` sets no weight mode, the same as no
    ``WGT`` at all. In a tau-ARGUS batch file (:mod:`tablesafe.io.arb`) the weight
    variable of the metadata is used only with ``WGT(1)``, as in tau-ARGUS: with
    ``WGT(0)`` the cell values and the rules leave the weights out."""

    kind = "wgt"  # type: ignore[assignment]
    tauargus_name = "WGT"
    switch_wording = ("ignore sampling weights", "apply sampling weights in the safety rules")


@dataclass(frozen=True)
class MissingOption(SwitchOption):
    """tau-ARGUS ``MIS(0|1)``: whether cells with missing codes are safe (kept for migration)."""

    on: bool = False

    kind = "mis"  # type: ignore[assignment]
    tauargus_name = "MIS"
    switch_wording = ("cells of missing codes are judged by the rules", "cells of missing codes are safe")
