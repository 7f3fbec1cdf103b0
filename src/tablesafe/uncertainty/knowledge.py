"""What the best-informed respondent knows before reading the table: knowledge models
(seed 004 sections 1.6, 2.1, 2.2 and Example 3.4.2).

- **Data knowledge model**: every other respondent's contribution ``x`` is known to lie
  within ``[kx_low * x, kx * x]`` (the seed's ``[0, alpha x]`` with ``alpha >= 2`` by
  default; ``kx_low > 0`` for users who know the others' size from earlier publications).
- **Sampling-weight knowledge model**: a weight ``w > 1`` is known only to lie within
  ``[1, kw * w]``; weight 1 (units taken with certainty) is known.
- The attacker knows its own contribution exactly, and (coalitions) those of its partners.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tablesafe.errors import InputError
from tablesafe.uncertainty.interval import Intervals
from tablesafe.validation import Constraints, Interval, check_options

CONSTRAINTS: Constraints = {
    "knowledge_kx": [Interval(1.0)],
    "knowledge_kx_low": [Interval(0.0, 1.0)],
    "knowledge_kw": [Interval(1.0)],
}
"""The knowledge model's options: others' contributions ``x`` within ``[kx_low*x, kx*x]``
(``kx >= 1``, ``0 <= kx_low <= 1``), weights ``w > 1`` within ``[1, kw*w]`` (``kw >= 1``)."""


@dataclass(frozen=True)
class KnowledgeModel:
    """The attacker's a priori knowledge (checked when built with :meth:`build`).

    Attributes:
        kx: others' contributions lie below ``kx`` times their value (at least 1).
        kx_low: ... and above ``kx_low`` times it (0 <= kx_low <= 1).
        kw: a sampling weight ``w > 1`` lies within ``[1, kw * w]`` (at least 1).
    """

    kx: float = 2.0
    kx_low: float = 0.0
    kw: float = 1.0

    @classmethod
    def build(cls, kx: float = 2.0, kx_low: float = 0.0, kw: float = 1.0) -> KnowledgeModel:
        """A model from the run's options, refused with one message when out of range
        (:data:`CONSTRAINTS`)."""
        check_options({"knowledge_kx": kx, "knowledge_kx_low": kx_low, "knowledge_kw": kw}, CONSTRAINTS,
                      error=InputError)
        return cls(kx=float(kx), kx_low=float(kx_low), kw=float(kw))

    def others(self, x, weight=None) -> Intervals:
        """What the attacker knows of contributions ``x`` of other respondents (with their
        weights, of ``w * x``)."""
        xv = np.asarray(x, dtype=float)
        w = self.weight(np.ones_like(xv) if weight is None else weight)
        return Intervals.of(self.kx_low * xv * w.low, self.kx * xv * w.high)

    def weight(self, w) -> Intervals:
        """What the attacker knows of sampling weights ``w``: 1 exactly, larger ones
        within ``[1, kw * w]`` (seed 004 section 2.2)."""
        wv = np.asarray(w, dtype=float)
        return Intervals.of(np.where(wv > 1, 1.0, wv), np.where(wv > 1, self.kw * wv, wv))

    def describe(self) -> str:
        """The model in one sentence (report and analyst file)."""
        text = (f"every other respondent's contribution x known within [{self.kx_low:g}·x, {self.kx:g}·x], "
                "the attacker's own exactly")
        if self.kw > 1:
            text += f"; sampling weights w > 1 known within [1, {self.kw:g}·w]"
        return text
