"""What a sensitivity rule looks at and what it answers, for every cell at once.

A rule (:mod:`tablesafe.rules.model`) is evaluated on a :class:`ContributionView`, the
largest unit contributions of each cell after weights, signs and waivers are handled,
and answers with a :class:`RuleResult`: which cells it makes sensitive and the protection
levels it asks for. Rules combine by OR (:mod:`tablesafe.rules.assess`).

Notation as in the handbook: ``x1 >= x2 >= ...`` the unit contributions of a cell (units
are holdings when contributions were grouped by holding), ``X`` the cell value, ``c`` the
number of intruders, ``R = X - x1 - x2 - ... - x(c+1)`` the remainder the intruders
cannot see.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

REL_TOL = 1e-9
"""Relative tolerance when comparing a sensitivity measure with 0 (float noise only)."""


def sum_first(a: np.ndarray, j: int) -> np.ndarray:
    """Row sums of the first ``j`` columns of ``a`` (0 when ``j == 0``)."""
    if j <= 0:
        return np.zeros(a.shape[0])
    return a[:, :j].sum(axis=1)


@dataclass(frozen=True)
class Requests:
    """What the request rule looks at: the units that asked for protection, their
    contributions and the total they are compared with.

    Attributes:
        asked: (n, M) True where the unit asked for protection.
        top: (n, M) the signed contributions aligned with ``asked``.
        total: (n,) the cell values.
    """

    asked: np.ndarray
    top: np.ndarray
    total: np.ndarray


@dataclass(frozen=True, kw_only=True)
class ContributionView:
    """The contributions the rules look at, after weights and signs are handled.

    Attributes:
        value: (n,) the cell values (levels of frequency and request rules are a
            percentage of them).
        X: (n,) the cell total the magnitude rules compare with (weighted estimate when
            weights are used, sum of absolute contributions with negative data).
        target: (n, M) contributions an intruder attacks, descending (unweighted sampled
            values in modes ``sample``/``known``, expanded values in mode ``expand``).
        known: (n, M) what intruders subtract for their own contributions (equals
            ``target`` except with public weights, where it is ``w * x``).
        nonwaived: (n, M) largest contributions of units without a waiver, or None when
            no unit waived protection.
        first_waived: (n,) True where the largest unit waived protection.
        requests: the request rule's units, contributions and totals.
        count: (n,) number of units the frequency rule counts.
        nonempty: (n,) True for cells with at least one contributor.
        allzero: (n,) True for cells with contributors whose contributions are all 0.
    """

    value: np.ndarray
    X: np.ndarray
    target: np.ndarray
    known: np.ndarray
    nonwaived: np.ndarray | None
    first_waived: np.ndarray
    requests: Requests
    count: np.ndarray
    nonempty: np.ndarray
    allzero: np.ndarray

    @property
    def n(self) -> int:
        """Number of cells."""
        return len(self.X)

    @property
    def m(self) -> int:
        """Number of contributions kept per cell."""
        return int(self.target.shape[1])

    def tol(self) -> np.ndarray:
        """Absolute tolerance per cell for the sign of a measure."""
        return REL_TOL * np.maximum(np.maximum(np.abs(self.X), np.abs(self.target[:, 0])), 1.0)

    def attack(self, c: int) -> tuple[np.ndarray, np.ndarray]:
        """Attacked contribution ``x_s`` and remainder ``R`` for ``c`` intruders.

        Without waivers ``x_s = x1`` and ``R = X - x1 - ... - x(c+1)``. With waivers
        ``x_s`` is the largest contribution without a waiver and the intruders are the
        ``c`` largest other units: their total is ``x1 + ... + x(c+1) - max(x_s, x(c+1))``.
        """
        if self.nonwaived is None:
            xs = self.target[:, 0]
            own = self.known[:, 0]
            others = sum_first(self.known[:, 1:], c)
            return xs, self.X - own - others
        t = self.target
        xs = self.nonwaived[:, 0]
        others = sum_first(t, c + 1) - np.maximum(xs, t[:, c])
        return xs, self.X - xs - others


@dataclass(frozen=True)
class RuleResult:
    """What one rule says about every cell.

    Attributes:
        sensitive: boolean mask.
        upl: upper protection level the rule asks for (meaningful where sensitive).
        lower: rule-derived lower protection level (0 where the rule gives none).
        slack: for linear measures, how far a safe cell's value may fall while the cell
            stays safe under this rule (the protection capacity); None for rules that
            are not linear measures.
    """

    sensitive: np.ndarray
    upl: np.ndarray
    lower: np.ndarray
    slack: np.ndarray | None = None


def expand_top(top: np.ndarray, weight: np.ndarray, m: int) -> np.ndarray:
    """Largest ``m`` contributions after expanding each record by its sampling weight.

    A record of value x and weight w counts as floor(w) contributions of x plus one
    contribution ``x * (w - floor(w))`` (100 with weight 4 and 10 with weight 7 give 100,
    100, 100, 100, 10, ...). Exact for the largest ``m`` when the kept records have
    weights >= 1 (their full copies then outnumber ``m`` before any unkept, smaller
    record could enter).
    """
    n, k = top.shape
    w = np.where(weight > 0, weight, 0.0)
    full = np.floor(w + 1e-9)
    frac = w - full
    frac = np.where(frac > 1e-9, frac, 0.0)
    idx = np.arange(m)[None, None, :]
    copies = np.where(idx < full[:, :, None], top[:, :, None], 0.0).reshape(n, k * m)
    pieces = np.concatenate([copies, top * frac], axis=1)
    pieces = -np.sort(-pieces, axis=1)
    return pieces[:, :m]
