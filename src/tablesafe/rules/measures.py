"""Vectorised evaluation of sensitivity rules over all cells.

Every function works on whole arrays (one entry per cell) and returns, per rule, a
:class:`RuleResult`: which cells the rule makes sensitive, the upper protection level
(UPL) the rule asks for, the rule-derived lower level, and the raw measure used for the
protection capacity of safe cells (seed 000 section 7.1).

Notation as in the seeds: ``x1 >= x2 >= ...`` the unit contributions of a cell (units are
holdings when contributions were grouped by holding), ``X`` the cell value, ``c`` the
number of intruders, ``R = X - x1 - x2 - ... - x(c+1)`` the remainder the intruders
cannot see.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tablesafe.errors import RuleError
from tablesafe.rules.model import (
    FreqRule,
    LinearRule,
    NKRule,
    PQRule,
    PRule,
    RequestRule,
    Rule,
    ZeroRule,
)

# Relative tolerance when comparing a sensitivity measure with 0 (float noise only).
REL_TOL = 1e-9


@dataclass
class ContributionView:
    """The contributions the magnitude rules look at, after weights and signs are handled.

    Attributes:
        X: the cell total the rules compare with (weighted estimate when weights are used).
        target: (n, M) contributions an intruder attacks, descending (unweighted sampled
            values in modes ``sample``/``known``, expanded values in mode ``expand``).
        known: (n, M) what intruders subtract for their own contributions (equals
            ``target`` except with public weights, where it is ``w * x``, seed 002 eq.
            p-percent-weighted-alt).
        nonwaived: (n, M) largest contributions of units without a waiver, or None when
            no unit waived protection.
        first_waived: (n,) True where the largest unit waived protection.
        request: (n, M) True where the unit asked for protection (request rule).
        count: (n,) number of units the frequency rule counts.
        nonempty: (n,) True for cells with at least one contributor.
        allzero: (n,) True for cells with contributors whose contributions are all 0.
        req_top: (n, M) signed contributions aligned with ``request`` (default: target).
        req_X: (n,) the total the request rule compares with (default: X).
    """

    X: np.ndarray
    target: np.ndarray
    known: np.ndarray
    nonwaived: np.ndarray | None
    first_waived: np.ndarray
    request: np.ndarray
    count: np.ndarray
    nonempty: np.ndarray
    allzero: np.ndarray
    req_top: np.ndarray | None = None
    req_X: np.ndarray | None = None

    @property
    def n(self) -> int:
        return len(self.X)

    @property
    def m(self) -> int:
        return self.target.shape[1]

    def tol(self) -> np.ndarray:
        """Absolute tolerance per cell for the sign of a measure."""
        return REL_TOL * np.maximum(np.maximum(np.abs(self.X), np.abs(self.target[:, 0])), 1.0)


@dataclass
class RuleResult:
    """What one rule says about every cell.

    Attributes:
        sensitive: boolean mask.
        upl: upper protection level the rule asks for (meaningful where sensitive).
        lower: rule-derived lower protection level (0 where the rule gives none).
        slack: for linear measures, how far a safe cell's value may fall while the cell
            stays safe under this rule (the protection capacity of seed 000 section 7.1);
            None for rules that are not linear measures.
    """

    sensitive: np.ndarray
    upl: np.ndarray
    lower: np.ndarray
    slack: np.ndarray | None = None


def expand_top(top: np.ndarray, weight: np.ndarray, m: int) -> np.ndarray:
    """Largest ``m`` contributions after expanding each record by its sampling weight.

    A record of value x and weight w counts as floor(w) contributions of x plus one
    contribution ``x * (w - floor(w))`` (seed 000 section 8; seed 002 "Sampling weights":
    100 with weight 4 and 10 with weight 7 give 100, 100, 100, 100, 10, ...). Exact for
    the largest ``m`` when the kept records have weights >= 1 (their full copies then
    outnumber ``m`` before any unkept, smaller record could enter).
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


def _sum_first(a: np.ndarray, j: int) -> np.ndarray:
    """Row sums of the first ``j`` columns (0 when ``j == 0``)."""
    if j <= 0:
        return np.zeros(a.shape[0])
    return a[:, :j].sum(axis=1)


def _attack(view: ContributionView, c: int) -> tuple[np.ndarray, np.ndarray]:
    """Attacked contribution ``x_s`` and remainder ``R`` for ``c`` intruders.

    Without waivers ``x_s = x1`` and ``R = X - x1 - ... - x(c+1)``. With waivers ``x_s`` is
    the largest contribution without a waiver and the intruders are the ``c`` largest
    other units (seed 000 section 4.1, seed 002 "Waivers"): their total is
    ``x1 + ... + x(c+1) - max(x_s, x(c+1))``.
    """
    if view.nonwaived is None:
        xs = view.target[:, 0]
        own = view.known[:, 0]
        others = _sum_first(view.known[:, 1:], c)
        return xs, view.X - own - others
    t = view.target
    xs = view.nonwaived[:, 0]
    others = _sum_first(t, c + 1) - np.maximum(xs, t[:, c])
    return xs, view.X - xs - others


def eval_p(rule: PRule, view: ContributionView) -> RuleResult:
    """p% rule: ``UPL = p/100 x_s - R`` (seed 000 eq. 15, seed 002 table); no lower level (5.1.2)."""
    xs, rem = _attack(view, rule.n)
    upl = rule.p / 100.0 * xs - rem
    sens = upl > view.tol()
    return RuleResult(sens, upl, np.zeros(view.n), slack=-upl)


def eval_pq(rule: PQRule, view: ContributionView) -> RuleResult:
    """(p,q) rule, symmetric or asymmetric (seed 000 eq. 3, 9; levels eq. 11-14).

    Sensitive when ``p_lower x1 - q_upper R > 0`` or ``p_upper x1 - q_lower R > 0``.
    Strong prior (default): ``UPL = p_upper/q_lower x1 - R``, ``LPL = p_lower/q_upper x1 - R``.
    Weak prior: ``UPL = p_upper/100 x1 - q_lower/100 R``, ``LPL = p_lower/100 x1 - q_upper/100 R``.
    """
    xs, rem = _attack(view, rule.n)
    if rule.prior == "strong":
        up = rule.p_upper / rule.q_lower * xs - rem
        lo = rule.p_lower / rule.q_upper * xs - rem
    else:
        up = (rule.p_upper * xs - rule.q_lower * rem) / 100.0
        lo = (rule.p_lower * xs - rule.q_upper * rem) / 100.0
    tol = view.tol()
    sens = (up > tol) | (lo > tol)
    # capacity (seed 000 7.1, footnote 4): T minus the smallest safe total, weak form
    weak_up = (rule.p_upper * xs - rule.q_lower * rem) / 100.0
    weak_lo = (rule.p_lower * xs - rule.q_upper * rem) / 100.0
    return RuleResult(sens, np.maximum(up, 0.0), np.maximum(lo, 0.0), slack=-np.maximum(weak_up, weak_lo))


def eval_nk(rule: NKRule, view: ContributionView) -> RuleResult:
    """(n,k) dominance: ``UPL = 100/k (x1 + ... + xn) - X`` (seed 000 eq. 16); no lower level.

    With waivers (seed 000 section 4.2, seed 002 "Waivers"): for n = 1 the largest
    non-waived ``x_s`` against ``X - x1`` when unit 1 waived (unit 1 then knows the rest);
    for n = 2 ``x_s + x_r`` against ``X``; for n >= 3 no sound test exists and we refuse.
    """
    k = rule.k
    if view.nonwaived is None:
        top_sum = _sum_first(view.known, rule.n)
        upl = 100.0 / k * top_sum - view.X
    elif rule.n == 1:
        xs = view.nonwaived[:, 0]
        base = view.X - np.where(view.first_waived, view.target[:, 0], 0.0)
        upl = 100.0 / k * xs - base
    elif rule.n == 2:
        xs, rem = _attack(view, 1)
        upl = 100.0 / k * (view.X - rem) - view.X
    else:
        raise RuleError(
            f"the dominance rule {rule.to_string()} cannot be applied with waivers: for n >= 3 no sound "
            "test is known (seed 000 section 4.2, e.g. contributions 10, 10, 5, 3, 2 under (3,80)). "
            "Use a p% or (p,q) rule, or a (1,k)/(2,k) rule, when units waive protection."
        )
    sens = upl > view.tol()
    return RuleResult(sens, upl, np.zeros(view.n), slack=-upl)


def eval_linear(rule: LinearRule, view: ContributionView) -> RuleResult:
    """General linear measure ``S = sum w_i x_i`` (seed 003 B.1); ``UPL = S / -w_m``."""
    if view.nonwaived is not None:
        raise RuleError(
            f"the linear measure {rule.to_string()} has no sound form with waivers; "
            "use a p%, (p,q), (1,k) or (2,k) rule"
        )
    w = np.asarray(rule.weights)
    m = len(w) - 1
    head = view.target[:, :m]
    s = head @ w[:m] + w[m] * (view.X - head.sum(axis=1))
    upl = s / -w[m]
    sens = upl > view.tol()
    return RuleResult(sens, upl, np.zeros(view.n), slack=-upl)


def eval_freq(rule: FreqRule, view: ContributionView, value: np.ndarray) -> RuleResult:
    """Minimum frequency: sensitive when ``0 < count < n``; levels ``range`` % of |value|."""
    sens = view.nonempty & (view.count < rule.n - 1e-9)
    lvl = rule.range / 100.0 * np.abs(value)
    return RuleResult(sens, lvl, lvl)


def eval_zero(rule: ZeroRule, view: ContributionView) -> RuleResult:
    """Zero cells (seed 001 section 2): all contributions 0; absolute level ``range``."""
    lvl = np.full(view.n, float(rule.range))
    return RuleResult(view.allzero.copy(), lvl, lvl)


def eval_request(rule: RequestRule, view: ContributionView, value: np.ndarray) -> RuleResult:
    """Request rule (seed 002 "Foreign trade rules"): a protected-by-request unit dominates."""
    t = view.target if view.req_top is None else view.req_top
    X = view.X if view.req_X is None else view.req_X
    tol = REL_TOL * np.maximum(np.maximum(np.abs(X), np.abs(t[:, 0])), 1.0)
    s1 = view.request[:, 0] & (t[:, 0] - rule.p1 / 100.0 * X > tol)
    s2 = view.request[:, 1] & (t[:, 1] - rule.second / 100.0 * X > tol) if t.shape[1] > 1 else np.zeros(view.n, bool)
    sens = s1 | s2
    if rule.margin is not None:
        lvl = rule.margin / 100.0 * np.abs(value)
    else:
        l1 = np.where(s1, 100.0 / rule.p1 * t[:, 0] - X, 0.0)
        l2 = np.where(s2, 100.0 / rule.second * t[:, 1] - X, 0.0) if t.shape[1] > 1 else 0.0
        lvl = np.maximum(l1, l2)
    return RuleResult(sens, lvl, np.zeros(view.n))


def evaluate(rule: Rule, view: ContributionView, value: np.ndarray) -> RuleResult | None:
    """Dispatch one rule; None for options that do not mark cells (MAN, WGT, MIS)."""
    if isinstance(rule, PRule):
        return eval_p(rule, view)
    if isinstance(rule, PQRule):
        return eval_pq(rule, view)
    if isinstance(rule, NKRule):
        return eval_nk(rule, view)
    if isinstance(rule, LinearRule):
        return eval_linear(rule, view)
    if isinstance(rule, FreqRule):
        return eval_freq(rule, view, value)
    if isinstance(rule, ZeroRule):
        return eval_zero(rule, view)
    if isinstance(rule, RequestRule):
        return eval_request(rule, view, value)
    return None
