"""How much protection a contribution still needs, given its uncertainty interval (seed 004
sections 3.4, 4.2, 4.3).

The p% rule asks that no attacker can place the largest contribution ``x`` within p% of
its value. With ``PX = p/100 * x`` and the attacker's interval ``[a, b]``:

- **sliding protection** (the interval may lie anywhere around ``x``): protected when the
  width ``W = b - a`` is at least ``2 PX``; otherwise ``2 PX - W`` units are missing;
- **two-sided protection**: protected when both sub-intervals, ``x - a`` on the left and
  ``b - x`` on the right, are at least ``PX``; each side short of it misses the
  difference.

Theorem 3.4 of the seed: for an interval symmetric about ``x`` the two rules agree
(tests/uncertainty/test_needs.py checks it as a property). The midpoint attack (section
3.2) takes the interval's midpoint as its estimate; section 4.2: conventional rounding to
base ``B`` leaves the attacker an expected absolute error of ``B / 4``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tablesafe.uncertainty.interval import Intervals

SLIDING = "sliding"
TWO_SIDED = "two-sided"
SIDES = (TWO_SIDED, SLIDING)
"""The location rules (seed 004 section 2.1)."""


@dataclass(frozen=True)
class Needs:
    """What each interval lacks for p% protection of ``x``.

    Attributes:
        px: ``p/100 * x``, the one-sided distance the rule asks for.
        sliding: units the whole interval misses under sliding protection (0 when wide enough).
        left, right: units each sub-interval misses under two-sided protection.
        inside: whether ``x`` lies in the interval (step 2 of both outlines; an interval
            missing ``x`` means the knowledge model or the published form is wrong).
    """

    px: np.ndarray
    sliding: np.ndarray
    left: np.ndarray
    right: np.ndarray
    inside: np.ndarray

    def protected(self, side: str) -> np.ndarray:
        """Whether each contribution is protected under the location rule ``side``."""
        if side == SLIDING:
            return self.inside & (self.sliding <= 0)
        if side == TWO_SIDED:
            return self.inside & (self.left <= 0) & (self.right <= 0)
        raise ValueError(f"unknown location rule {side!r}; choose one of {', '.join(SIDES)}")


def _tiny(x: np.ndarray) -> np.ndarray:
    return 1e-9 * np.maximum(1.0, np.abs(x))


def needs(ui: Intervals, x, p: float) -> Needs:
    """Sliding and two-sided needs of contributions ``x`` with uncertainty intervals ``ui``
    under the p% rule (seed 004 section 3.4, both algorithm outlines)."""
    xv = np.asarray(x, dtype=float)
    px = p / 100.0 * np.abs(xv)
    tol = _tiny(xv)
    sliding = 2.0 * px - ui.width
    left = px - ui.left(xv)
    right = px - ui.right(xv)
    clip = lambda a: np.where(a > tol, a, 0.0)
    return Needs(px=px, sliding=clip(sliding), left=clip(left), right=clip(right), inside=ui.contains(xv))


def midpoint_error(ui: Intervals, x) -> np.ndarray:
    """The midpoint attack's error relative to ``x``: ``(midpoint - x) / x`` (seed 004
    section 3.2); ``nan`` where ``x`` is 0."""
    xv = np.asarray(x, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(xv != 0, (ui.midpoint - xv) / np.abs(xv), np.nan)


def midpoint_close(ui: Intervals, x, q: float) -> np.ndarray:
    """Whether the midpoint lands within q% of ``x``: the published form does not protect
    against the midpoint attack, "not fully protective" in seed 004's words (section 3.2;
    the closeness rule of section 4.1 with q)."""
    err = midpoint_error(ui, x)
    return np.isfinite(err) & (np.abs(err) <= q / 100.0 + 1e-12)


def conventional_round(value, base: float) -> np.ndarray:
    """Conventional rounding to a multiple of ``base``, halves up (seed 004 section 3.3:
    with base 10 every value in ``[10k - 5, 10k + 5)`` becomes ``10k``)."""
    if base <= 0:
        raise ValueError("the rounding base must be positive")
    v = np.asarray(value, dtype=float)
    return base * np.floor(v / base + 0.5)


def rounded_interval(published, base: float, integers: bool = False) -> Intervals:
    """What a conventionally rounded value tells about the true one (seed 004 sections 3.3
    and 3.4.3): ``[r - B/2, r + B/2]``; with integer data ``[r - B/2, r + B/2 - 1]``
    (base 10, published 150: ``[145, 154]``)."""
    r = np.asarray(published, dtype=float)
    b = base / 2.0
    return Intervals.of(r - b, r + b - (1.0 if integers else 0.0))


@dataclass(frozen=True)
class SideNeeds:
    """The two sub-intervals of two-sided protection and what they miss.

    Attributes:
        w_right, w_left: the widths right and left of the protected value.
        w_min, w_max: the smaller and the larger of them.
        add_small, add_large: units to add to the smaller and the larger sub-interval.
    """

    w_right: float
    w_left: float
    w_min: float
    w_max: float
    add_small: float
    add_large: float


@dataclass(frozen=True)
class RoundedNeeds(SideNeeds):
    """Seed 004 Example 3.4.3: a total ``T = x1 + x2 + rem`` published conventionally
    rounded to base ``B = 2b``, attacked by the holder of ``x2`` who knows the rest within
    ``[0, 2 rem]``, so that ``UI(x1) = [r(T) - b - x2 - 2 rem, r(T) + b - x2]``.

    Attributes:
        width: ``W = 2b + 2 rem``, the interval's width (sliding protection compares it with ``2 PX``).
        w_right, w_left: the sub-intervals right and left of ``x1``: ``r(T) - T + b + rem``
            and ``T - r(T) + b + rem`` (the example's last step prints the two with their
            labels exchanged; its own first expressions, ``r(T) + b - x2 - x1`` for the
            right one, give these).
        w_min, w_max: their smaller and larger (``rem + b -/+ |r(T) - T|``).
        add_small, add_large: units to add to the smaller and the larger sub-interval.
        add_sliding: units to add under sliding protection.
    """

    width: float
    add_sliding: float


def rounded_total_needs(total: float, x1: float, x2: float, base: float, p: float) -> RoundedNeeds:
    """Protection a rounded total still needs (seed 004 Example 3.4.3, the p% rule with
    both location rules)."""
    rem = total - x1 - x2
    b = base / 2.0
    r = float(conventional_round(total, base))
    px = p / 100.0 * x1
    sides = _sides(r - total + b + rem, total - r + b + rem, px)
    width = 2.0 * b + 2.0 * rem
    return RoundedNeeds(width=width, **sides, add_sliding=max(2.0 * px - width, 0.0))


def _sides(right: float, left: float, px: float) -> dict[str, float]:
    """The two sub-intervals, the smaller and larger, and the units each misses below ``px``."""
    lo, hi = min(right, left), max(right, left)
    return {"w_right": right, "w_left": left, "w_min": lo, "w_max": hi,
            "add_small": max(px - lo, 0.0), "add_large": max(px - hi, 0.0)}


@dataclass(frozen=True)
class PercentageNeeds(SideNeeds):
    """Seed 004 section 4.3: a row total published as a percentage of an exact grand total
    ``G``, rounded to the nearest whole percent.

    Attributes:
        exact: the exact percentage ``100 R / G``; rounded: the published one.
        px: ``p * x1 / G``, the one-sided protection in percentage points.
        sensitive_sliding: ``2 (100 rem / G) + 2 * 0.5 < 2 px``.
        add_sliding: the percentage points sliding protection misses.
        w_right, w_left, w_min, w_max: the sub-intervals of two-sided protection, right
            ``rounded - exact + 0.5 + 100 rem / G`` and left ``exact - rounded + 0.5 +
            100 rem / G`` (as in :class:`RoundedNeeds`, the section prints the labels
            the other way round; the minimum and maximum agree).
        add_small, add_large: points missing on the smaller and the larger side.
    """

    exact: float
    rounded: float
    px: float
    sensitive_sliding: bool
    add_sliding: float


def rounded_percentage_needs(x1: float, x2: float, rem: float, grand_total: float, p: float,
                             step: float = 1.0) -> PercentageNeeds:
    """The p% rule for a cell published as a rounded percentage of an exact grand total
    (seed 004 section 4.3; ``step`` is the rounding unit in percentage points)."""
    g = float(grand_total)
    exact = 100.0 * (x1 + x2 + rem) / g
    rounded = float(conventional_round(exact, step))
    half = step / 2.0
    rem_pct = 100.0 * rem / g
    px = p * x1 / g
    slide_width = 2.0 * rem_pct + 2.0 * half
    sides = _sides(rounded - exact + half + rem_pct, exact - rounded + half + rem_pct, px)
    return PercentageNeeds(exact=exact, rounded=rounded, px=px, sensitive_sliding=slide_width < 2.0 * px,
                           add_sliding=max(2.0 * px - slide_width, 0.0), **sides)


def expected_rounding_error(base: float) -> float:
    """The midpoint attacker's expected absolute error when a total is published
    conventionally rounded to ``base`` and the true value is uniform in its interval:
    ``base / 4`` (seed 004 section 4.2)."""
    return base / 4.0
