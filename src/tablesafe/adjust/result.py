"""What an adjustment produces: the adjusted values, their deviations from the true
values, the direction of each sensitive cell, and the quality measures of seed 003 B.3
(sum of absolute and relative deviations, the largest relative change of a
non-sensitive cell, how many totals moved)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

UP, DOWN = 1, -1
"""Directions of a sensitive cell's move (0: not a sensitive cell, or not moved)."""


@dataclass(frozen=True)
class Quality:
    """How far an adjusted table lies from the true one.

    Attributes:
        abs_deviation: sum over cells of ``|adjusted - value|``.
        rel_deviation: sum over non-zero cells of ``|adjusted - value| / |value|``.
        max_rel_change_safe: the largest ``|adjusted - value| / |value|`` of a
            non-sensitive cell (a moved zero cell counts as infinite).
        totals_moved: totals (cells that are the total of some relation) whose value changed.
        cells_changed: cells whose value changed.
        seconds: time the method took.
    """

    abs_deviation: float
    rel_deviation: float
    max_rel_change_safe: float
    totals_moved: int
    cells_changed: int
    seconds: float

    def as_dict(self) -> dict[str, float | int]:
        """The measures by name (for the report, the summary and benchmarks)."""
        return {
            "sum of absolute deviations": self.abs_deviation,
            "sum of relative deviations": self.rel_deviation,
            "largest relative change of a non-sensitive cell": self.max_rel_change_safe,
            "totals moved": self.totals_moved,
            "cells changed": self.cells_changed,
            "seconds": self.seconds,
        }


@dataclass(frozen=True)
class Adjustment:
    """An adjusted table.

    Attributes:
        method: ``cta``, ``round`` or ``random-round``.
        values: the adjusted value of every cell (what is published).
        original: the true values.
        direction: per cell ``UP`` (+1) or ``DOWN`` (-1) for sensitive cells moved by CTA
            and for rounded cells (up or down to the base), 0 otherwise.
        quality: the quality measures.
        base: the rounding base (rounding methods), else None.
        stats: how the method ran (solver, time limit, fall-backs, model status).
    """

    method: str
    values: np.ndarray
    original: np.ndarray
    direction: np.ndarray
    quality: Quality
    base: float | None = None
    stats: Mapping[str, Any] = field(default_factory=dict)

    @property
    def deviation(self) -> np.ndarray:
        """``values - original`` per cell."""
        return self.values - self.original


def measure(values: np.ndarray, original: np.ndarray, sensitive: np.ndarray, totals: np.ndarray,
            seconds: float, tol: float = 1e-9) -> Quality:
    """The :class:`Quality` of ``values`` against ``original``; changes below ``tol``
    times the table's scale count as none (solver noise)."""
    dev = np.abs(values - original)
    scale = max(1.0, float(np.max(np.abs(original), initial=0.0)))
    moved = dev > tol * scale
    nonzero = np.abs(original) > 0
    rel = np.zeros(len(values))
    rel[nonzero] = dev[nonzero] / np.abs(original[nonzero])
    rel[~nonzero & moved] = np.inf
    safe_rel = rel[~sensitive & moved]
    return Quality(
        abs_deviation=float(dev[moved].sum()),
        rel_deviation=float(rel[nonzero & moved].sum()),
        max_rel_change_safe=float(safe_rel.max()) if safe_rel.size else 0.0,
        totals_moved=int((moved & totals).sum()),
        cells_changed=int(moved.sum()),
        seconds=float(seconds),
    )
