"""Worked examples of seed 000 (Loeve, notes on sensitivity measures and protection levels)."""

from __future__ import annotations

import numpy as np
import pytest
from rules_builders import build_cells, cells_of

from tablesafe.errors import RuleError
from tablesafe.rules import assess, expand_top, rule_measure


def _one(contribs, rule, **kw):
    cells, (i,) = cells_of(contribs)
    prob = assess(cells, rule, **kw)
    return prob, i


def test_pq_40_15_4_2_is_safe():
    """Seed 000 section 3.1: 40, 15, 4, 2 is safe under (p,q) = (7, 50): 7*40 - 50*6 = -20."""
    prob, i = _one([40, 15, 4, 2], "pq(7, 50)")
    assert prob.status[i] == "S"
    res = rule_measure(cells_of([40, 15, 4, 2])[0], "pq(7, 50, prior=weak)")
    # weak-prior level is (p x1 - q R)/100 = -20/100, i.e. 0.2 of room (clipped to 0)
    assert not res.sensitive[cells_of([40, 15, 4, 2])[1][0]]
    # respondent 2's bounds for x1: 61 - 15 -/+ ... = [37, 43], not within 7% of 40
    x1, x2, rest = 40, 15, 6
    assert (61 - x2 - 0.5 * rest, 61 - x2 - 1.5 * rest) == (43, 37)
    assert 43 > 1.07 * x1 and 37 < 0.93 * x1


def test_pq_15_4_2_is_unsafe_with_levels_eq_11_and_13():
    """Seed 000 section 3.1 and 5.1.1: the cell 15, 4, 2 is unsafe (7*15 - 50*2 = 5 > 0).

    Weak prior (eq. 11/12): U = L = 0.07*15 - 0.5*2 = 0.05; strong prior (eq. 13/14):
    U = L = 7/50*15 - 2 = 0.1.
    """
    prob, i = _one([15, 4, 2], "pq(7, 50, prior=weak)", symmetric=False)
    assert prob.status[i] == "U"
    assert prob.upl[i] == pytest.approx(0.05)
    assert prob.lpl[i] == pytest.approx(0.05)
    prob, i = _one([15, 4, 2], "pq(7, 50)", symmetric=False)
    assert prob.upl[i] == pytest.approx(0.1)
    assert prob.lpl[i] == pytest.approx(0.1)
    # the strong-prior level is 100/q times the weak one (seed 000 after eq. 13)
    assert 0.1 == pytest.approx(0.05 * 100 / 50)


def test_asymmetric_pq_eq3():
    """Seed 000 eq. 3: sensitive if p_l x1 - q_u R > 0 or p_u x1 - q_l R > 0."""
    # x1 = 40, R = 6: p_l=5, q_u=40 -> 200 - 240 < 0 ; p_u=10, q_l=60 -> 400 - 360 > 0
    cells, (i,) = cells_of([40, 15, 4, 2])
    prob = assess(cells, "pq(p_lower=5, p_upper=10, q_lower=60, q_upper=40, prior=weak)", symmetric=False)
    assert prob.status[i] == "U"
    assert prob.upl[i] == pytest.approx((10 * 40 - 60 * 6) / 100)  # eq. 11 with p_u, q_l
    assert prob.lpl[i] == pytest.approx(0.0)  # eq. 12 with p_l, q_u is negative: no lower need
    prob = assess(cells, "pq(p_lower=5, p_upper=5, q_lower=60, q_upper=40)")
    assert prob.status[i] == "S"


def test_pq_authorisation_100_90_10_6():
    """Seed 000 section 4.1: (10,50) with 100, 90, 10, 6 where unit 100 authorises.

    10*90 - 50*(10+6) = 100 > 0: still unsafe; respondent 1's upper bound for x2 is
    206 - 100 - 0.5*16 = 98, within 10% of 90.
    """
    recs = [{"cell": 0, "value": v, "waived": v == 100} for v in (100, 90, 10, 6)]
    cells = build_cells(recs, 1)
    i = list(cells.model.cell_names()).index("c1")
    prob = assess(cells, "pq(10, 50, prior=weak)")
    assert prob.status[i] == "U"
    assert prob.upl[i] == pytest.approx((10 * 90 - 50 * 16) / 100)
    assert 206 - 100 - 0.5 * 16 == 98 and 98 < 1.1 * 90
    # an authorisation that does make the cell publishable: 100, 10, 5, 5
    recs = [{"cell": 0, "value": v, "waived": j == 0} for j, v in enumerate((100, 10, 5, 5))]
    cells = build_cells(recs, 1)
    assert assess(cells, "pq(10, 50)").status[i] == "S"
    cells_nw, _ = cells_of([100, 10, 5, 5])
    assert assess(cells_nw, "pq(10, 50)").status[i] == "U"  # 1000 - 500 > 0 without the waiver


def test_p_percent_with_waiver_and_coalition():
    """Seed 000 section 4.1: p% with authorisations and n-coalitions, x_s largest non-waived."""
    # 50, 30, 10, 5, 5; units 50 and 30 waive; x_s = 10 (s = 3 >= n+1 for n = 2)
    recs = [{"cell": 0, "value": v, "waived": v in (50, 30)} for v in (50, 30, 10, 5, 5)]
    cells = build_cells(recs, 1)
    i = list(cells.model.cell_names()).index("c1")
    res = rule_measure(cells, "p(60, n=2)")
    # p/100 x_s - sum_{k >= n+1, k != s} x_k = 6 - (5 + 5) = -4
    assert res.upl[i] == pytest.approx(0.6 * 10 - 10)
    res = rule_measure(cells, "p(60, n=1)")
    # n = 1: p/100 x_s - sum_{k>=2, k != s} x_k = 6 - (30 + 5 + 5)
    assert res.upl[i] == pytest.approx(6 - 40)


def test_dominance_3_85_example():
    """Seed 000 section 3.3: 25, 19, 13, 8, 2 unsafe under (3,85); 25, 19, 12, 8, 2 safe."""
    cells, (a, b) = cells_of([25, 19, 13, 8, 2], [25, 19, 12, 8, 2])
    prob = assess(cells, "nk(3, 85)")
    assert prob.status[a] == "U" and prob.status[b] == "S"
    assert prob.upl[a] == pytest.approx(100 / 85 * 57 - 67)  # eq. 16
    # the best upper bound of x1 by units 2 and 3 has the same error (10) in both cells
    assert 67 - (19 + 13) - 25 == 66 - (19 + 12) - 25 == 10


def test_dominance_waiver_refused_for_n_at_least_3():
    """Seed 000 section 4.2: 10, 10, 5, 3, 2 is unsafe under (3,80); with a waiver no sound test exists."""
    cells, (i,) = cells_of([10, 10, 5, 3, 2])
    assert assess(cells, "nk(3, 80)").status[i] == "U"
    recs = [{"cell": 0, "value": v, "waived": j == 0} for j, v in enumerate((10, 10, 5, 3, 2))]
    wcells = build_cells(recs, 1)
    with pytest.raises(RuleError, match="no sound"):
        assess(wcells, "nk(3, 80)")
    # (1,k) and (2,k) with waivers are sound (section 4.2 / seed 002): here (2,80) on
    # x_s + x_r = 10 + 10 = 20 <= 24 is safe; (1,k): (T - x1)/x_s = 20/10 = 2 >= 100/k for k >= 50
    assert assess(wcells, "nk(2, 80)").status[i] == "S"
    assert assess(wcells, "nk(1, 50)").status[i] == "S"
    assert assess(wcells, "nk(1, 49)").status[i] == "U"


def test_protection_levels_section_5_1_and_5_2():
    """Seed 000 sections 5.1.2/5.1.3 and the Figure 1 cells of 5.2 under (2,70).

    32, 4, 4, 2, 1 (value 43): U >= 100/70*36 - 43 = 8.43 ("9"); 33, 6, 5, 5 (49): 6.71 ("7").
    p% (eq. 15): U = p/100 x1 - sum_{t>=3} x_t, and no lower level from the rule.
    """
    cells, (a, b) = cells_of([32, 4, 4, 2, 1], [33, 6, 5, 5])
    prob = assess(cells, "nk(2, 70)", symmetric=False)
    assert prob.upl[a] == pytest.approx(100 / 70 * 36 - 43)
    assert prob.upl[b] == pytest.approx(100 / 70 * 39 - 49)
    assert 8 < prob.upl[a] <= 9 and 6 < prob.upl[b] <= 7
    assert prob.lpl[a] == 0 and prob.lpl[b] == 0  # no lower level for (n,k)
    prob = assess(cells, "p(50)", symmetric=False)
    assert prob.upl[a] == pytest.approx(0.5 * 32 - 7)
    assert prob.lpl[a] == 0
    # symmetric default: lower = upper
    prob = assess(cells, "p(50)")
    assert prob.lpl[a] == prob.upl[a]


def test_capacity_section_7_1():
    """Seed 000 section 7.1: (1,75); unsafe 75, 15, 5 needs U >= 5; safe 20, 5, 5 has R = 3 1/3."""
    cells, (a, b) = cells_of([75, 15, 5], [20, 5, 5])
    prob = assess(cells, "nk(1, 75)")
    assert prob.status[a] == "U" and prob.status[b] == "S"
    assert prob.upl[a] == pytest.approx(5.0)
    assert prob.capacity[b] == pytest.approx(10 / 3)
    assert prob.capacity[a] == 0.0  # sensitive cells give no capacity
    # the combination with a common largest respondent is unsafe: 95 / 125 = 76% > 75%
    assert 95 / 125 > 0.75


def test_single_unit_cells_have_no_capacity():
    """Seed 000 section 5.3 remark / 7.1: single-contributor cells never protect others."""
    cells, (a, b) = cells_of([50], [10, 10, 10, 10])
    prob = assess(cells, "nk(1, 90)")
    assert prob.status[a] == "U"
    assert prob.capacity[a] == 0.0
    assert prob.capacity[b] == pytest.approx(40 - 100 / 90 * 10)


def test_weight_expansion_section_8():
    """Seed 000 section 8: value 100 with weight 5.25 becomes five 100s and one 25."""
    top = np.array([[100.0, 0.0]])
    w = np.array([[5.25, 1.0]])
    np.testing.assert_allclose(expand_top(top, w, 6), [[100, 100, 100, 100, 100, 25]])


def test_manual_statuses_section_7_2():
    """Seed 000 section 7.2: a safe cell suppressed by hand (A, margin) and an unsafe cell published (P)."""
    cells, (a, b) = cells_of([10, 10, 10, 10], [50])
    import pandas as pd

    man = pd.DataFrame({"d": ["c1", "c2"], "status": ["A", "P"], "margin": [20, None]})
    prob = assess(cells, "freq(3)", manual=man)
    assert prob.status[a] == "A" and prob.upl[a] == pytest.approx(8.0)
    assert prob.status[b] == "P" and prob.upl[b] == 0
    assert prob.rule[b] == "freq(3, range=10)"  # the rule the P status overrides
    with pytest.raises(RuleError, match="unknown cell"):
        assess(cells, "freq(3)", manual={"nope": "A"})


def test_directional_levels_section_5_3():
    """Seed 000 section 5.3: a few-unit cell needs an upper level above the largest total of
    other few-unit cells of its row that it could combine with while staying below n units.

    Row c1 (10, one unit), c2 (30, one unit), c3 (five units of 10), c4 (two units of 20).
    Under freq(3): c1 may pair with c2 only (c4 has two units) -> U >= 30 + eps; c2 pairs with c1 -> 10 + eps.
    Under freq(4): c1 has room for 2 more units: c4 (40) beats c2 (30); c4 has room for 1.
    """
    cells, (c1, c2, c3, c4) = cells_of([10], [30], [10] * 5, [20, 20])
    prob = assess(cells, "freq(3, range=0)", freq_levels="directional")
    assert prob.upl[c1] == pytest.approx(30, rel=1e-5) and prob.upl[c1] > 30
    assert prob.upl[c2] == pytest.approx(10, rel=1e-5) and prob.upl[c2] > 10
    assert prob.status[c3] == "S"
    assert prob.status[c4] == "U" and prob.upl[c4] == 0  # two units: no room for a partner
    plain = assess(cells, "freq(3, range=10)")
    assert plain.upl[c1] == pytest.approx(1.0)
    prob = assess(cells, "freq(4, range=10)", freq_levels="directional")
    assert prob.upl[c1] == pytest.approx(40, rel=1e-5)
    assert prob.upl[c2] == pytest.approx(40, rel=1e-5)
    assert prob.upl[c4] == pytest.approx(30, rel=1e-5)
