"""Interval arithmetic on uncertainty intervals (seed 004, "Using Uncertainty Intervals to
Analyze Confidentiality Rules for Magnitude Data in Tables", sections 3.1-3.4).

An uncertainty interval (UI) is what an attacker knows for certain about a quantity: it
lies in ``[low, high]``. Sums and differences of quantities get the sums and differences
of their intervals (``[a, b] - [c, d] = [a - d, b - c]``), products with a known positive
factor scale both ends, and a quantity divided by an unknown positive factor known to lie
in ``[c, d]`` lies in ``[min(a/c, a/d), max(b/c, b/d)]``. :class:`Intervals` holds one
interval per entry of its arrays, so a whole table's cells or attacks are computed at
once; a single interval is the same object with 0-d arrays.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Union

import numpy as np

Operand = Union["Intervals", float, np.ndarray]
"""What an interval can be combined with: another interval, or exact numbers."""


@dataclass(frozen=True)
class Intervals:
    """Closed intervals ``[low, high]``, one per entry (numpy arrays of one shape).

    Attributes:
        low, high: the ends; ``low <= high`` everywhere (checked when built).
    """

    low: np.ndarray
    high: np.ndarray

    def __post_init__(self) -> None:
        lo = np.asarray(self.low, dtype=float)
        hi = np.asarray(self.high, dtype=float)
        if lo.shape != hi.shape:
            lo, hi = np.broadcast_arrays(lo, hi)
        if np.any(lo > hi + 1e-9 * np.maximum(1.0, np.abs(hi))):
            raise ValueError("an interval's low end lies above its high end")
        object.__setattr__(self, "low", lo)
        object.__setattr__(self, "high", hi)

    @classmethod
    def of(cls, low, high) -> Intervals:
        """Intervals from their ends (numbers or arrays)."""
        return cls(np.asarray(low, dtype=float), np.asarray(high, dtype=float))

    @classmethod
    def exact(cls, x) -> Intervals:
        """Quantities known exactly: ``[x, x]``."""
        a = np.asarray(x, dtype=float)
        return cls(a, a.copy())

    @staticmethod
    def _ends(other: Operand) -> tuple[np.ndarray, np.ndarray]:
        if isinstance(other, Intervals):
            return other.low, other.high
        a = np.asarray(other, dtype=float)
        return a, a

    def __add__(self, other: Operand) -> Intervals:
        lo, hi = self._ends(other)
        return Intervals(self.low + lo, self.high + hi)

    __radd__ = __add__

    def __sub__(self, other: Operand) -> Intervals:
        lo, hi = self._ends(other)
        return Intervals(self.low - hi, self.high - lo)

    def __rsub__(self, other: Operand) -> Intervals:
        lo, hi = self._ends(other)
        return Intervals(lo - self.high, hi - self.low)

    def scaled(self, factor) -> Intervals:
        """The intervals times a known non-negative factor."""
        f = np.asarray(factor, dtype=float)
        if np.any(f < 0):
            raise ValueError("a scale factor must not be negative")
        return Intervals(self.low * f, self.high * f)

    def divided_by(self, divisor: Intervals) -> Intervals:
        """The quotient when the divisor is an unknown factor within ``divisor`` (whose
        low end must be positive), e.g. a sampling weight known to lie in ``[1, kw*w]``
        (seed 004 Example 3.4.2)."""
        if np.any(divisor.low <= 0):
            raise ValueError("an interval divisor must lie above 0")
        q = [self.low / divisor.low, self.low / divisor.high, self.high / divisor.low, self.high / divisor.high]
        return Intervals(np.minimum.reduce(q), np.maximum.reduce(q))

    @property
    def width(self) -> np.ndarray:
        """``high - low``."""
        return self.high - self.low

    @property
    def midpoint(self) -> np.ndarray:
        """The midpoint, the estimate of the midpoint attack (seed 004 section 3.2)."""
        return (self.low + self.high) / 2.0

    def contains(self, x) -> np.ndarray:
        """Whether each interval holds ``x`` (with a relative tolerance of 1e-9)."""
        a = np.asarray(x, dtype=float)
        tol = 1e-9 * np.maximum(1.0, np.abs(a))
        return (self.low <= a + tol) & (a <= self.high + tol)

    def left(self, x) -> np.ndarray:
        """Width of the sub-interval left of ``x``: ``x - low`` (seed 004 section 3.4)."""
        return np.asarray(x, dtype=float) - self.low

    def right(self, x) -> np.ndarray:
        """Width of the sub-interval right of ``x``: ``high - x``."""
        return self.high - np.asarray(x, dtype=float)

    def __getitem__(self, index) -> Intervals:
        return Intervals(self.low[index], self.high[index])

    def __len__(self) -> int:
        return int(self.low.shape[0]) if self.low.ndim else 1

    def pairs(self) -> list[tuple[float, float]]:
        """The intervals as ``(low, high)`` pairs of floats (for reading and tests)."""
        return list(zip(np.atleast_1d(self.low).tolist(), np.atleast_1d(self.high).tolist(), strict=True))
