"""Sensitivity rules as plain data objects.

Each rule is a frozen dataclass holding its parameters, and a function of the cells'
contributions: ``rule.evaluate(view)`` returns, for every cell at once, whether the rule
makes it sensitive and the protection levels it asks for (a :class:`RuleResult` over a
:class:`ContributionView`, :mod:`tablesafe.rules.view`). Every rule knows how to describe itself in words
(``describe``), how to write itself back as a rule string (``to_string``, parsed again by
:func:`tablesafe.rules.parse_rules`) and, where it is a linear sensitivity measure in the
sense of seed 003 (B.1), how to express itself as weights (``to_linear``).

Rule parameters are confidential (seed 003 B.1.e): these strings belong in analyst files
and logs, never in a publication.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np

from tablesafe.errors import RuleError
from tablesafe.rules.spelling import Spelled, num
from tablesafe.rules.view import REL_TOL, ContributionView, RuleResult, sum_first


@dataclass(frozen=True)
class Rule(Spelled):
    """Base class of all sensitivity rules (written as :class:`Spelled` says)."""

    assumes_nonnegative: ClassVar[bool] = False
    """True for measures that assume non-negative contributions (p%, (n,k), linear)."""

    magnitude: ClassVar[bool] = False
    """True for concentration rules on the size of contributions."""

    def to_linear(self) -> LinearRule | None:
        """The rule as a linear sensitivity measure (seed 003 B.1), if it is one."""
        return None

    @property
    def needs_top(self) -> int:
        """How many of the largest contributions the rule needs per cell."""
        return 0

    def evaluate(self, view: ContributionView) -> RuleResult:
        """Which cells the rule makes sensitive, and the levels it asks for (all cells)."""
        raise NotImplementedError


@dataclass(frozen=True)
class PRule(Rule):
    """The p% rule with coalitions of ``n`` intruders (seed 000 eq. 5 and 10).

    A cell is sensitive when the intruders (the ``n`` largest other units) can estimate
    the largest contribution to within ``p`` percent: ``p/100 x1 - (X - x1 - x2 - ... -
    x(n+1)) > 0``. Upper protection level: that same left-hand side (seed 002 table).
    """

    p: float
    n: int = 1
    assumes_nonnegative: ClassVar[bool] = True

    def __post_init__(self) -> None:
        if not (0 < self.p < 100):
            raise RuleError(f"p% rule: p must lie strictly between 0 and 100 (percent), got {self.p}")
        if int(self.n) != self.n or self.n < 1:
            raise RuleError(f"p% rule: the number of intruders n must be a whole number >= 1, got {self.n}")

    kind = "p"  # type: ignore[assignment]
    magnitude: ClassVar[bool] = True
    tauargus_name = "P"

    @property
    def needs_top(self) -> int:
        return self.n + 1

    def describe(self) -> str:
        who = "the second largest unit" if self.n == 1 else f"a coalition of the {self.n} next largest units"
        return (
            f"p% rule: sensitive when {who} can estimate the largest contribution to within "
            f"{num(self.p)}% (p={num(self.p)}, intruders={self.n})"
        )

    def arguments(self) -> list[str]:
        return [num(self.p)] if self.n == 1 else [num(self.p), f"n={self.n}"]

    def tauargus_arguments(self) -> list[str]:
        return [num(self.p), str(self.n)]

    def evaluate(self, view: ContributionView) -> RuleResult:
        """``UPL = p/100 x_s - R`` (handbook: p% rule); no lower level."""
        xs, rem = view.attack(self.n)
        upl = self.p / 100.0 * xs - rem
        sens = upl > view.tol()
        return RuleResult(sens, upl, np.zeros(view.n), slack=-upl)

    def to_linear(self) -> LinearRule:
        # seed 003 B.1.a: S = x1 - 100/p sum_{i>=c+2} x_i (normalised with w1 = 1)
        return LinearRule(tuple([1.0] + [0.0] * self.n + [-100.0 / self.p]))

    def covered_by_nk(self, n: int) -> NKRule:
        """The (1,k) or (2,k) rule whose sensitive cells this p% rule all flags (seed 003 Table 1)."""
        from tablesafe.rules import params

        if n == 1:
            return NKRule(1, params.k_covering_p(self.p, 1))
        if n == 2:
            return NKRule(2, params.k_covering_p(self.p, 2))
        raise RuleError("p% rules are related to (1,k) and (2,k) dominance rules only (Statistical Policy Working Paper 22)")


@dataclass(frozen=True)
class PQRule(Rule):
    """The (p,q) prior-posterior rule, symmetric or asymmetric (seed 000 eq. 2, 3, 9).

    Every unit knows every other contribution a priori to within ``q`` percent; a cell is
    sensitive when intruders can bound the largest contribution to within ``p`` percent.
    The asymmetric form has separate ``p_lower``/``p_upper`` (posterior accuracy of lower
    and upper bounds) and ``q_lower``/``q_upper`` (a priori interval ``[(1 - q_lower/100)
    x, (1 + q_upper/100) x]``); the cell is sensitive when ``p_lower x1 - q_upper R > 0``
    or ``p_upper x1 - q_lower R > 0`` with ``R = X - x1 - ... - x(n+1)`` (seed 000 eq. 3).

    ``prior`` chooses the protection levels: ``"strong"`` (default; a unit also knows
    other cells to within q%, seed 000 eq. 13/14, the seed 002 table: ``p/q x1 - R``) or
    ``"weak"`` (only its own cell, eq. 11/12: ``p/100 x1 - q/100 R``).
    """

    p_lower: float
    q_lower: float
    p_upper: float
    q_upper: float
    n: int = 1
    prior: str = "strong"

    kind = "pq"  # type: ignore[assignment]
    magnitude: ClassVar[bool] = True

    def __post_init__(self) -> None:
        for name in ("p_lower", "q_lower", "p_upper", "q_upper"):
            v = getattr(self, name)
            if not v > 0:
                raise RuleError(f"(p,q) rule: {name} must be positive, got {v}")
        for name in ("q_lower", "q_upper"):
            v = getattr(self, name)
            if v > 100:
                raise RuleError(f"(p,q) rule: {name} must be at most 100 (percent), got {num(v)}")
        if not (self.p_lower < self.q_lower and self.p_upper < self.q_upper):
            raise RuleError(
                f"(p,q) rule: p must be smaller than q (got p={num(self.p_lower)}/{num(self.p_upper)}, "
                f"q={num(self.q_lower)}/{num(self.q_upper)}); the rule is defined for p < q "
                "(Loeve, Notes on sensitivity measures and protection levels)"
            )
        if int(self.n) != self.n or self.n < 1:
            raise RuleError(f"(p,q) rule: the number of intruders n must be a whole number >= 1, got {self.n}")
        if self.prior not in ("strong", "weak"):
            raise RuleError(f"(p,q) rule: prior must be 'strong' or 'weak', got {self.prior!r}")

    @classmethod
    def symmetric(cls, p: float, q: float, n: int = 1, prior: str = "strong") -> PQRule:
        """The usual (p,q) rule with one p and one q."""
        return cls(p, q, p, q, n, prior)

    @property
    def is_symmetric(self) -> bool:
        return self.p_lower == self.p_upper and self.q_lower == self.q_upper

    @property
    def p(self) -> float:
        return self.p_upper

    @property
    def q(self) -> float:
        return self.q_lower

    @property
    def needs_top(self) -> int:
        return self.n + 1

    def describe(self) -> str:
        if self.is_symmetric:
            par = f"p={num(self.p)}, q={num(self.q)}"
        else:
            par = (
                f"p_lower={num(self.p_lower)}, p_upper={num(self.p_upper)}, "
                f"q_lower={num(self.q_lower)}, q_upper={num(self.q_upper)}"
            )
        return (
            "(p,q) prior-posterior rule: sensitive when contributions known a priori to within q% "
            f"can be estimated to within p% after publication ({par}, intruders={self.n}, "
            f"{self.prior} prior for protection levels)"
        )

    def arguments(self) -> list[str]:
        if self.is_symmetric:
            out = [num(self.p), num(self.q)]
        else:
            out = [f"{name}={num(getattr(self, name))}" for name in ("p_lower", "p_upper", "q_lower", "q_upper")]
        out += [] if self.n == 1 else [f"n={self.n}"]
        return out + ([] if self.prior == "strong" else [f"prior={self.prior}"])

    def equivalent_p(self) -> PRule:
        """The p% rule flagging exactly the same cells: p* = 100 p/q (seed 002 eq. p-star)."""
        if not self.is_symmetric:
            raise RuleError("only a symmetric (p,q) rule has an equivalent p% rule")
        return PRule(100.0 * self.p / self.q, self.n)

    def evaluate(self, view: ContributionView) -> RuleResult:
        """Sensitive when ``p_lower x1 - q_upper R > 0`` or ``p_upper x1 - q_lower R > 0``.

        Strong prior (default): ``UPL = p_upper/q_lower x1 - R``, ``LPL = p_lower/q_upper
        x1 - R``. Weak prior: ``UPL = p_upper/100 x1 - q_lower/100 R``, ``LPL =
        p_lower/100 x1 - q_upper/100 R``.
        """
        xs, rem = view.attack(self.n)
        weak_up = (self.p_upper * xs - self.q_lower * rem) / 100.0
        weak_lo = (self.p_lower * xs - self.q_upper * rem) / 100.0
        if self.prior == "strong":
            up = self.p_upper / self.q_lower * xs - rem
            lo = self.p_lower / self.q_upper * xs - rem
        else:
            up, lo = weak_up, weak_lo
        tol = view.tol()
        sens = (up > tol) | (lo > tol)
        # capacity: the total minus the smallest safe total, weak form
        return RuleResult(sens, np.maximum(up, 0.0), np.maximum(lo, 0.0), slack=-np.maximum(weak_up, weak_lo))

    def to_linear(self) -> LinearRule | None:
        if not self.is_symmetric:
            return None
        # seed 003 B.1.b: S = x1 - q/p sum_{i>=c+2} x_i
        return LinearRule(tuple([1.0] + [0.0] * self.n + [-self.q / self.p]))


@dataclass(frozen=True)
class NKRule(Rule):
    """The (n,k) dominance rule: sensitive when ``x1 + ... + xn > k/100 X`` (seed 000 eq. 6).

    Upper protection level ``100/k (x1 + ... + xn) - X`` (seed 000 eq. 16).
    """

    n: int
    k: float
    assumes_nonnegative: ClassVar[bool] = True

    kind = "nk"  # type: ignore[assignment]
    magnitude: ClassVar[bool] = True
    tauargus_name = "NK"

    def __post_init__(self) -> None:
        if int(self.n) != self.n or self.n < 1:
            raise RuleError(f"(n,k) rule: n must be a whole number >= 1, got {self.n}")
        if not (0 < self.k <= 100):
            raise RuleError(f"(n,k) rule: k must lie between 0 and 100 (0 < k <= 100), got {self.k}")

    @property
    def needs_top(self) -> int:
        return self.n

    def describe(self) -> str:
        return (
            f"(n,k) dominance rule: sensitive when the {self.n} largest units hold more than "
            f"{num(self.k)}% of the cell value (n={self.n}, k={num(self.k)})"
        )

    def evaluate(self, view: ContributionView) -> RuleResult:
        """``UPL = 100/k (x1 + ... + xn) - X``; no lower level.

        With waivers: for n = 1 the largest non-waived ``x_s`` against ``X - x1`` when
        unit 1 waived (unit 1 then knows the rest); for n = 2 ``x_s + x_r`` against
        ``X``; for n >= 3 no sound test exists and the rule refuses.
        """
        k = self.k
        if view.nonwaived is None:
            upl = 100.0 / k * sum_first(view.known, self.n) - view.X
        elif self.n == 1:
            xs = view.nonwaived[:, 0]
            base = view.X - np.where(view.first_waived, view.target[:, 0], 0.0)
            upl = 100.0 / k * xs - base
        elif self.n == 2:
            _, rem = view.attack(1)
            upl = 100.0 / k * (view.X - rem) - view.X
        else:
            raise RuleError(
                f"the dominance rule {self.to_string()} cannot be applied with waivers: for n >= 3 no sound "
                "test is known (e.g. contributions 10, 10, 5, 3, 2 under (3,80)). "
                "Use a p% or (p,q) rule, or a (1,k)/(2,k) rule, when units waive protection."
            )
        sens = upl > view.tol()
        return RuleResult(sens, upl, np.zeros(view.n), slack=-upl)

    def to_linear(self) -> LinearRule:
        # seed 003 B.1.c: S = sum_{i<=n} x_i - k/(100-k) sum_{i>n} x_i
        return LinearRule(tuple([1.0] * self.n + [-self.k / (100.0 - self.k)]))

    def covering_p(self) -> PRule:
        """The most lenient p% rule flagging every cell this (1,k)/(2,k) rule flags (seed 003)."""
        from tablesafe.rules import params

        if self.n == 1:
            return PRule(params.p_covering_k(self.k, 1))
        if self.n == 2:
            return PRule(params.p_covering_k(self.k, 2))
        raise RuleError("p% rules are related to (1,k) and (2,k) dominance rules only (Statistical Policy Working Paper 22)")

    def replacing_p(self) -> PRule:
        """Seed 002's replacement of a (2,k) rule by a p% rule: p = 100 (100 - k)/k ((2,80) -> p(25))."""
        from tablesafe.rules import params

        if self.n != 2:
            raise RuleError("only a (2,k) dominance rule has a replacing p% rule (Handbook on Statistical Disclosure Control)")
        return PRule(params.p_from_k2_seed002(self.k))


@dataclass(frozen=True)
class FreqRule(Rule):
    """Minimum frequency rule: sensitive when ``0 < contributors < n``.

    Protection levels ``range`` percent of the cell value (tau-ARGUS ``FREQ(n, range)``);
    with range 0 the cell must merely not be recalculable exactly (seed 002 recommends
    level zero when only a frequency rule is used).
    """

    n: int
    range: float = 10.0

    kind = "freq"  # type: ignore[assignment]
    tauargus_name = "FREQ"

    def __post_init__(self) -> None:
        if int(self.n) != self.n or self.n < 1:
            raise RuleError(f"frequency rule: the minimum frequency must be a whole number >= 1, got {self.n}")
        if self.range < 0:
            raise RuleError(f"frequency rule: the safety range must be >= 0, got {self.range}")

    def describe(self) -> str:
        return (
            f"minimum frequency rule: sensitive when fewer than {self.n} units contribute "
            f"(protection {num(self.range)}% of the value)"
        )

    def arguments(self) -> list[str]:
        return [str(self.n), f"range={num(self.range)}"]

    def tauargus_arguments(self) -> list[str]:
        return [str(self.n), num(self.range)]

    def evaluate(self, view: ContributionView) -> RuleResult:
        """Sensitive when ``0 < count < n``; levels ``range`` % of |value|."""
        sens = view.nonempty & (view.count < self.n - 1e-9)
        lvl = self.range / 100.0 * np.abs(view.value)
        return RuleResult(sens, lvl, lvl)


@dataclass(frozen=True)
class ZeroRule(Rule):
    """Zero cells (contributors present, all contributions 0) are sensitive (seed 001 section 2).

    ``range`` is an absolute protection level, as tau-ARGUS ``ZERO(range)`` (a percentage
    of a zero value would be zero).
    """

    range: float = 0.0

    kind = "zero"  # type: ignore[assignment]
    tauargus_name = "ZERO"
    wording = "zero rule: cells whose contributions are all zero are sensitive (protection {0})"
    not_negative = (("range", "zero rule: the safety range"),)

    def evaluate(self, view: ContributionView) -> RuleResult:
        """Cells whose contributions are all 0; absolute level ``range``."""
        lvl = np.full(view.n, float(self.range))
        return RuleResult(view.allzero.copy(), lvl, lvl)


@dataclass(frozen=True)
class RequestRule(Rule):
    """Request rule of foreign-trade statistics (seed 002 "Foreign trade rules", tau-ARGUS REQ).

    A cell is sensitive when the largest unit asked for protection and holds more than
    ``p1`` percent of the cell value, or the second largest asked and holds more than
    ``p2`` percent. Protection level: ``margin`` percent of the value when given, else
    the dominance level ``100/p x - X`` of the unit that fired.
    """

    p1: float
    p2: float | None = None
    margin: float | None = None

    kind = "request"  # type: ignore[assignment]
    magnitude: ClassVar[bool] = True
    tauargus_name = "REQ"

    def __post_init__(self) -> None:
        for name in ("p1", "p2"):
            v = getattr(self, name)
            if v is not None and not (0 < v < 100):
                raise RuleError(f"request rule: {name} must lie strictly between 0 and 100, got {v}")
        if self.margin is not None and self.margin < 0:
            raise RuleError(f"request rule: the safety margin must be >= 0, got {self.margin}")

    @property
    def second(self) -> float:
        return self.p1 if self.p2 is None else self.p2

    @property
    def needs_top(self) -> int:
        return 2

    def describe(self) -> str:
        return (
            f"request rule: sensitive when a unit that asked for protection is the largest and holds more "
            f"than {num(self.p1)}% of the value, or is the second largest and holds more than "
            f"{num(self.second)}%"
        )

    def arguments(self) -> list[str]:
        out = [num(self.p1), num(self.second)]
        return out if self.margin is None else [*out, f"margin={num(self.margin)}"]

    def tauargus_arguments(self) -> list[str]:
        return [num(self.p1), num(self.second), num(self.margin or 0)]

    def evaluate(self, view: ContributionView) -> RuleResult:
        """A unit that asked for protection dominates the cell."""
        req = view.requests
        t, X = req.top, req.total
        tol = REL_TOL * np.maximum(np.maximum(np.abs(X), np.abs(t[:, 0])), 1.0)
        s1 = req.asked[:, 0] & (t[:, 0] - self.p1 / 100.0 * X > tol)
        two = t.shape[1] > 1
        s2 = req.asked[:, 1] & (t[:, 1] - self.second / 100.0 * X > tol) if two else np.zeros(view.n, bool)
        if self.margin is not None:
            lvl = self.margin / 100.0 * np.abs(view.value)
        else:
            l1 = np.where(s1, 100.0 / self.p1 * t[:, 0] - X, 0.0)
            l2 = np.where(s2, 100.0 / self.second * t[:, 1] - X, 0.0) if two else 0.0
            lvl = np.maximum(l1, l2)
        return RuleResult(s1 | s2, lvl, np.zeros(view.n))


@dataclass(frozen=True)
class LinearRule(Rule):
    """A general linear sensitivity measure ``S(X) = sum_i w_i x_i`` (seed 003 B.1).

    ``weights`` are ``w1, ..., wm`` for the ordered contributions ``x1 >= x2 >= ...``;
    the last weight applies to every contribution from ``xm`` on. A cell is sensitive when
    ``S(X) > 0``. The weights must be non-increasing (the measure is then subadditive:
    unions of safe cells are safe) and end negative (else no cell could ever be safe).
    The upper protection level is ``S(X) / -wm``: the amount the remainder must grow
    for ``S`` to reach 0 (this gives the seed 002 levels for p%, (p,q) and (n,k)).
    """

    weights: tuple[float, ...] = field(default_factory=tuple)
    assumes_nonnegative: ClassVar[bool] = True

    kind = "linear"  # type: ignore[assignment]
    magnitude: ClassVar[bool] = True

    def __post_init__(self) -> None:
        w = tuple(float(x) for x in self.weights)
        object.__setattr__(self, "weights", w)
        if len(w) < 2:
            raise RuleError("linear rule: give at least two weights (w1, ..., wm; wm applies to the rest)")
        bad = [i for i in range(len(w) - 1) if w[i + 1] > w[i]]
        if bad:
            i = bad[0]
            raise RuleError(
                f"linear rule: weights must be non-increasing for the measure to be subadditive "
                f"(a linear sensitivity measure), but w{i + 1}={num(w[i])} < w{i + 2}={num(w[i + 1])}"
            )
        if not w[-1] < 0:
            raise RuleError(
                f"linear rule: the last weight (applied to all smaller contributions) must be negative, "
                f"got {num(w[-1])}; otherwise no cell could be safe"
            )

    @property
    def needs_top(self) -> int:
        return len(self.weights) - 1

    def describe(self) -> str:
        return (
            "linear sensitivity measure: sensitive when sum w_i x_i > 0 with weights "
            + ", ".join(num(x) for x in self.weights)
            + " (the last for all further contributions)"
        )

    def to_linear(self) -> LinearRule:
        return self

    def evaluate(self, view: ContributionView) -> RuleResult:
        """``S = sum w_i x_i``; ``UPL = S / -w_m``."""
        if view.nonwaived is not None:
            raise RuleError(
                f"the linear measure {self.to_string()} has no sound form with waivers; "
                "use a p%, (p,q), (1,k) or (2,k) rule"
            )
        w = np.asarray(self.weights)
        m = len(w) - 1
        head = view.target[:, :m]
        s = head @ w[:m] + w[m] * (view.X - head.sum(axis=1))
        upl = s / -w[m]
        sens = upl > view.tol()
        return RuleResult(sens, upl, np.zeros(view.n), slack=-upl)
