"""Seed 004 (Massell, "Using Uncertainty Intervals to Analyze Confidentiality Rules for
Magnitude Data in Tables") worked examples, with the paper's numbers."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from tablesafe.problem import Contributions, Problem
from tablesafe.uncertainty import (
    Intervals,
    KnowledgeModel,
    conventional_round,
    expected_rounding_error,
    midpoint_error,
    needs,
    rounded_interval,
    rounded_percentage_needs,
    rounded_total_needs,
)
from tablesafe.uncertainty.contributions import contribution_audit


def _one_cell(top, weight=None, value=None):
    """A problem of one sensitive cell with the given largest contributions."""
    top = np.asarray(top, dtype=float)
    w = np.ones_like(top) if weight is None else np.asarray(weight, dtype=float)
    total = float((top * w).sum()) if value is None else value
    con = Contributions(top=top[None, :], count=np.array([len(top)]), weight=w[None, :],
                        unweighted=np.array([top.sum()]), negative=np.array([False]))
    return Problem.from_arrays([total], sp.csr_matrix((0, 1)), status=["U"], upl=[1.0], lpl=[1.0],
                               names=["c"], contributions=con)


def test_example_3_1_interval_subtraction_and_the_fix():
    """Section 3.1, Example 3.1: p=10, x2=50 known, T=150, x3 in [0,10], x4 in [0,6]."""
    ui = Intervals.exact(150) - 50 - Intervals.of(0, 10) - Intervals.of(0, 6)
    assert ui.pairs() == [(84.0, 100.0)]
    nd = needs(ui, 92, 10)
    assert float(nd.px) == pytest.approx(9.2)
    assert (float(nd.left), float(nd.right)) == pytest.approx((1.2, 1.2))  # both sides 8 < 9.2
    assert not bool(nd.protected("two-sided")) and not bool(nd.protected("sliding"))
    assert float(midpoint_error(ui, 92)) == 0.0  # symmetric: the midpoint is x1
    fixed = Intervals.of(148, 152) - 50 - Intervals.of(0, 10) - Intervals.of(0, 6)
    assert fixed.pairs() == [(82.0, 102.0)]
    assert bool(needs(fixed, 92, 10).protected("two-sided"))


def test_example_3_1_through_the_contribution_audit():
    """The same cell through the audit: the data knowledge model [0, 2x] gives x3 in [0, 10]
    and x4 in [0, 6]; respondent 2 gets [84, 100]."""
    problem = _one_cell([92, 50, 5, 3])
    ca = contribution_audit(problem, Intervals.exact([150.0]), np.array(["published"], dtype=object), p=10)
    row = ca.table[ca.table["attacker"] == "respondent 2"].iloc[0]
    assert (row.ui_low, row.ui_high) == (84.0, 100.0)
    assert row.need_left == pytest.approx(1.2) and not row.protected
    published = contribution_audit(problem, Intervals.of([148.0], [152.0]), np.array(["interval"], dtype=object),
                                   p=10)
    r2 = published.table[published.table["attacker"] == "respondent 2"].iloc[0]
    assert (r2.ui_low, r2.ui_high) == (82.0, 102.0) and r2.protected


@pytest.mark.parametrize(("base", "published", "ui_t", "ui_x1", "midpoint", "two_sided"), [
    (10, 150, (145, 154), (79, 104), 91.5, False),
    (20, 160, (150, 169), (84, 119), 101.5, True),
])
def test_section_3_3_rounding(base, published, ui_t, ui_x1, midpoint, two_sided):
    """Section 3.3: x1=96, x2=50, x3=5, x4=3 (T=154), rounded to base 10 and 20 with
    integer data; p=10 (PX = 9.6)."""
    assert float(conventional_round(154, base)) == published
    t = rounded_interval(published, base, integers=True)
    assert t.pairs() == [ui_t]
    ui = t - 50 - Intervals.of(0, 10) - Intervals.of(0, 6)
    assert ui.pairs() == [ui_x1]
    assert float(ui.midpoint) == midpoint
    nd = needs(ui, 96, 10)
    assert bool(nd.protected("two-sided")) is two_sided
    assert bool(nd.protected("sliding"))  # width 25 (base 10) or 35 > 19.2


def test_example_3_4_1_symmetric_interval_makes_the_rules_agree():
    """Example 3.4.1: T and x2 exact, the rest within [0, 2 rem]: UI(x1) is symmetric about
    x1, so sliding and two-sided protection agree (Theorem 3.4)."""
    x1, x2, rem = 80.0, 30.0, 3.0
    problem = _one_cell([x1, x2, 2.0, 1.0])
    ca = contribution_audit(problem, Intervals.exact([x1 + x2 + rem]), np.array(["published"], dtype=object), p=10)
    row = ca.table[ca.table["attacker"] == "respondent 2"].iloc[0]
    assert (row.ui_low, row.ui_high) == (x1 - rem, x1 + rem)
    assert row.midpoint == x1
    assert row.need_sliding == pytest.approx(row.need_left + row.need_right)


def test_example_3_4_2_weights_and_data_knowledge():
    """Example 3.4.2: w1 x1 = T - w2 x2 - w3 x3 - w4 x4, C2 knows x2 but not w2; weights
    within [1, kw w], contributions within [0, kx x]:
    UI(x1; C2) = [(T - kw w2 x2 - kw w3 kx x3 - kw w4 kx x4) / (kw w1), T - x2]."""
    x = np.array([100.0, 40.0, 10.0, 5.0])
    w = np.array([1.5, 2.0, 3.0, 1.2])
    kx, kw = 2.0, 1.5
    total = float((x * w).sum())
    problem = _one_cell(x, w)
    ca = contribution_audit(problem, Intervals.exact([total]), np.array(["published"], dtype=object), p=15,
                            knowledge=KnowledgeModel.build(kx=kx, kw=kw))
    row = ca.table[ca.table["attacker"] == "respondent 2"].iloc[0]
    rhs1 = total - kw * w[1] * x[1] - kw * w[2] * kx * x[2] - kw * w[3] * kx * x[3]
    rhs2 = total - x[1]
    assert row.ui_low == pytest.approx(rhs1 / (kw * w[0]))
    assert row.ui_high == pytest.approx(rhs2)


def test_example_3_4_3_rounded_total_matches_interval_arithmetic():
    """Example 3.4.3: conventional rounding of T (base B = 2b), the holder of x2 attacking;
    W = 2b + 2 rem, W_min = rem + b - |r(T) - T|, W_max = rem + b + |r(T) - T|. Checked
    against the interval [r - b, r + b] - x2 - [0, 2 rem] on the section 3.3 cell."""
    x1, x2, rem = 96.0, 50.0, 8.0
    for base in (10.0, 20.0):
        rn = rounded_total_needs(x1 + x2 + rem, x1, x2, base, p=10)
        ui = rounded_interval(conventional_round(x1 + x2 + rem, base), base) - x2 - Intervals.of(0, 2 * rem)
        assert rn.width == pytest.approx(float(ui.width)) == pytest.approx(base + 2 * rem)
        assert rn.w_right == pytest.approx(float(ui.right(x1)))
        assert rn.w_left == pytest.approx(float(ui.left(x1)))
        r = float(conventional_round(x1 + x2 + rem, base))
        assert rn.w_min == pytest.approx(rem + base / 2 - abs(r - (x1 + x2 + rem)))
        assert rn.w_max == pytest.approx(rem + base / 2 + abs(r - (x1 + x2 + rem)))
        nd = needs(ui, x1, 10)
        assert rn.add_small == pytest.approx(max(float(nd.left), float(nd.right)))
    # base 10: the right side is 17 - 8 = 9 < 9.6: 0.6 units missing there
    assert rounded_total_needs(154.0, 96.0, 50.0, 10.0, p=10).add_small == pytest.approx(0.6)


def test_section_4_2_expected_error_of_the_midpoint_attack_is_a_quarter_base():
    """Section 4.2: with T uniform on [r - b, r + b], E|r(T) - T| = b/2 = B/4."""
    base = 1000.0
    t = np.linspace(-base / 2, base / 2, 200_001)  # T - r(T) over the interval
    assert float(np.abs(t).mean()) == pytest.approx(expected_rounding_error(base), rel=1e-4)


def test_section_4_3_rounded_percentages_match_interval_arithmetic():
    """Section 4.3: a row published as a whole-number percentage of an exact grand total;
    the sub-intervals agree with [rnd - 0.5, rnd + 0.5] - 100 x2/G - [0, 2 * 100 rem/G]."""
    g = 2_000.0
    x1, x2, rem = 300.0, 90.0, 7.0
    pn = rounded_percentage_needs(x1, x2, rem, g, p=10)
    assert pn.exact == pytest.approx(19.85) and pn.rounded == 20.0
    ui = Intervals.of(pn.rounded - 0.5, pn.rounded + 0.5) - 100 * x2 / g - Intervals.of(0, 2 * 100 * rem / g)
    xp = 100 * x1 / g
    assert pn.w_right == pytest.approx(float(ui.right(xp)))
    assert pn.w_left == pytest.approx(float(ui.left(xp)))
    assert pn.px == pytest.approx(10 * x1 / g)
    assert pn.sensitive_sliding == (float(ui.width) < 2 * pn.px)
    assert pn.add_small == pytest.approx(max(pn.px - min(pn.w_left, pn.w_right), 0))
