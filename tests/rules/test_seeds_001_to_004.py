"""Worked examples of seeds 001 (Daalmans & de Waal), 002 (SDC handbook, magnitude tables),
003 (FCSM working paper 22, B.1 and Technical Notes) and 004 (Massell, uncertainty)."""

from __future__ import annotations

import numpy as np
import pytest
from rules_builders import build_cells, cells_of

from tablesafe.errors import RuleError
from tablesafe.rules import assess, params, parse_rules, rule_measure

# ---------------------------------------------------------------- seed 001


def test_zero_cells_sensitive_only_on_request():
    """Seed 001 section 2: a cell whose contributions are all zero reveals them exactly.

    Sensitive only when asked (zero_unsafe or the zero rule), with its own absolute range;
    a cell without contributors is empty (Z) and never sensitive.
    """
    cells, (z, ok, empty) = cells_of([0, 0, 0], [5, 5, 5, 5], [])
    prob = assess(cells, "p(10)")
    assert prob.status[z] == "S" and prob.status[empty] == "Z"
    prob = assess(cells, "p(10)", zero_unsafe=3)
    assert prob.status[z] == "U" and prob.upl[z] == 3 and prob.status[ok] == "S"
    prob = assess(cells, "p(10)|ZERO(2)")
    assert prob.status[z] == "U" and prob.upl[z] == 2 and prob.rule[z] == "zero(2)"
    assert prob.status[empty] == "Z" and prob.upl[empty] == 0


def test_pq_on_absolute_contributions_example_6():
    """Seed 001 section 5, example 6: (p,q) = (20,100) on absolute contributions.

    The aggregation x1 - x4 has absolute contributions 155, 80 and 5 (sum 240):
    p*155 - q*5 = 2600 > 0, so it is sensitive. We give the same contributions as one cell
    with signed values 155, 4, 1, -80.
    """
    cells, (i,) = cells_of([155, 4, 1, -80])
    prob = assess(cells, "pq(20, 100)", bounds=50)
    assert prob.status[i] == "U"
    # strong prior: p/q x1 - R with R = 240 - 155 - 80 = 5
    assert prob.upl[i] == pytest.approx(20 / 100 * 155 - 5)
    res = rule_measure(cells, "pq(20, 100, prior=weak)")
    assert res.upl[i] * 100 == pytest.approx(2600)


def test_negative_contributions_refused_by_p_percent_unless_abs():
    """Seed 001 section 5 / seed 002 "Negative contributions": p% and (n,k) assume
    non-negative data; they refuse (naming the cell) unless the absolute form is chosen."""
    cells, (i, _j) = cells_of([155, 4, 1, -80], [10, 10, 10])
    with pytest.raises(RuleError, match="c1"):
        assess(cells, "p(20)", bounds=50)
    prob = assess(cells, "p(20)", bounds=50, negative="abs")
    # p% as (p,q) with q = 100 on absolute contributions (seed 001 section 5)
    assert prob.status[i] == "U" and prob.upl[i] == pytest.approx(0.2 * 155 - 5)
    with pytest.raises(RuleError, match="negative"):
        assess(cells, "pq(20, 100)")  # no bounds: [0, inf) would be wrong
    assert params.p_negative(20, 2) == 10
    # (100 - k_f)/100 = (100 - k)/(100 f): k = 80, f = 2 -> k_f = 90
    assert params.k_negative(80, 2) == pytest.approx(90)


# ---------------------------------------------------------------- seed 002


def test_seed002_example1_one_k_misses_insider():
    """Seed 002 example 1: X = 100000, x1 = 50000, x2 = 49000 is safe under (1,90) but the
    second largest unit estimates x1 to within 2%; the p% rule flags it."""
    cells, (i,) = cells_of([50000, 49000, 1000])
    assert assess(cells, "nk(1, 90)").status[i] == "S"
    assert assess(cells, "p(10)").status[i] == "U"
    assert (100000 - 49000 - 50000) / 50000 == pytest.approx(0.02)


def test_seed002_example2_p_safe_2k_unsafe():
    """Seed 002 example 2: p = 10, k = 100*100/110 = 90.9; X = 110000, x1 = 52000,
    x2 = 50000: safe under p% (15.4% overestimate) but unsafe under (2,k)."""
    k = params.k2_from_p_seed002(10)
    assert k == pytest.approx(90.909, abs=1e-3)
    cells, (i,) = cells_of([52000, 50000, 8000])
    assert assess(cells, "p(10)").status[i] == "S"
    assert assess(cells, [f"nk(2, {k!r})"]).status[i] == "U"
    assert 100 * (60000 - 52000) / 52000 == pytest.approx(15.4, abs=0.05)
    assert params.p_from_k2_seed002(80) == pytest.approx(25)
    assert params.p_from_k2_seed002(95) == pytest.approx(5.26, abs=0.005)


def test_seed002_example4_one_k_level():
    """Seed 002 example 4: 300, 20, 10 unsafe under (1,85); upper level so that X + U = 352.94."""
    cells, (i,) = cells_of([300, 20, 10])
    prob = assess(cells, "nk(1, 85)")
    assert prob.status[i] == "U"
    assert prob.value[i] + prob.upl[i] == pytest.approx(352.94, abs=0.005)


def test_seed002_example5_p_percent_level():
    """Seed 002 example 5: U = p/100 x1 - (X - x1 - x2) makes X + U - x2 >= (1 + p/100) x1."""
    cells, (i,) = cells_of([92, 50, 5, 3])
    prob = assess(cells, "p(10)")
    u = prob.upl[i]
    assert u == pytest.approx(0.1 * 92 - (150 - 92 - 50))
    assert 150 + u - 50 == pytest.approx(1.1 * 92)


def test_seed002_table_of_levels_several_rules_take_max():
    """Seed 002 table of upper protection levels; with several rules the maximum that fires."""
    cells, (i,) = cells_of([80, 10, 6, 4])
    prob = assess(cells, "p(20)|nk(1, 75)|nk(2, 85)|pq(20, 50)")
    levels = {
        "p": 0.2 * 80 - 10,
        "nk1": 100 / 75 * 80 - 100,
        "nk2": 100 / 85 * 90 - 100,
        "pq": 20 / 50 * 80 - 10,
    }
    assert prob.status[i] == "U"
    assert prob.upl[i] == pytest.approx(max(levels.values()))
    assert prob.rule[i] == "p(20)|nk(1, 75)|nk(2, 85)|pq(20, 50)"


def test_seed002_waivers_p_and_2k():
    """Seed 002 "Waivers": X - x_s - x_r < p/100 x_s and x_r + x_s > k/100 X, s the largest
    unit without a waiver, r the largest other unit."""
    recs = [{"cell": 0, "value": v, "waived": j == 0} for j, v in enumerate((60, 30, 5, 5))]
    cells = build_cells(recs, 1)
    i = list(cells.model.cell_names()).index("c1")
    res = rule_measure(cells, "p(50)")
    assert res.upl[i] == pytest.approx(0.5 * 30 - (100 - 30 - 60))
    res = rule_measure(cells, "nk(2, 85)")
    assert res.upl[i] == pytest.approx(100 / 85 * 90 - 100)
    # without waivers the p% rule attacks 60 instead
    plain, _ = cells_of([60, 30, 5, 5])
    assert rule_measure(plain, "p(50)").upl[i] == pytest.approx(0.5 * 60 - 10)


def test_seed002_weights_example_expand():
    """Seed 002 "Sampling weights": 100 with weight 4 and 10 with weight 7 give a value of
    470 and the approximate contributions 100 x 4, 10 x 7; the two largest are 100 and 100."""
    recs = [{"cell": 0, "value": 100, "weight": 4}, {"cell": 0, "value": 10, "weight": 7}]
    cells = build_cells(recs, 1, weighted=True)
    i = list(cells.model.cell_names()).index("c1")
    assert cells.value[i] == 470
    res = rule_measure(cells, "p(10)", weight_mode="expand")
    assert res.upl[i] == pytest.approx(0.1 * 100 - (470 - 200))
    # 11 approximate contributors for the frequency rule
    assert not rule_measure(cells, "freq(11)", weight_mode="expand").sensitive[i]
    assert rule_measure(cells, "freq(12)", weight_mode="expand").sensitive[i]
    # WGT(1) in a tau-ARGUS rule string selects the same mode
    prob = assess(cells, "NK(2,40)|WGT(1)")
    assert prob.status[i] == "U" and prob.meta["weight_mode"] == "expand"


def test_seed002_sampling_example_900():
    """Seed 002: population 900, 100, 100, 7 x 5; sample two units of 100 with weights 1
    and 9, estimate 1000. The expansion procedure and the sample form find it safe; with
    public weights (eq. p-percent-weighted-alt) 1000 - 9*100 - 1*100 = 0 < p/100 * 100."""
    recs = [{"cell": 0, "value": 100, "weight": 1}, {"cell": 0, "value": 100, "weight": 9}]
    cells = build_cells(recs, 1, weighted=True)
    i = list(cells.model.cell_names()).index("c1")
    assert cells.value[i] == 1000
    assert assess(cells, "p(10)", weight_mode="expand").status[i] == "S"
    assert assess(cells, "p(10)", weight_mode="sample").status[i] == "S"
    assert assess(cells, "p(10)", weight_mode="known").status[i] == "U"


def test_seed002_sampling_example_overprotection():
    """Seed 002: population 100, 50, 50, 1, 1; sampled 100 (weight 2) and 1 (weight 3),
    estimate 203. Expansion gives 100, 100, ... : sensitive under p% for any p > 3; the
    sample form (eq. p-percent-weighted: 203 - 100 - 1 = 102) finds it safe."""
    recs = [{"cell": 0, "value": 100, "weight": 2}, {"cell": 0, "value": 1, "weight": 3}]
    cells = build_cells(recs, 1, weighted=True)
    i = list(cells.model.cell_names()).index("c1")
    assert cells.value[i] == 203
    assert assess(cells, "p(4)", weight_mode="expand").status[i] == "U"
    assert assess(cells, "p(2.9)", weight_mode="expand").status[i] == "S"
    assert assess(cells, "p(50)", weight_mode="sample").status[i] == "S"
    # dominance, eq. dominance-weighted: x1^s + x2^s = 101 > k/100 * 203 only for k < 49.75
    assert assess(cells, "nk(2, 49)", weight_mode="sample").status[i] == "U"
    assert assess(cells, "nk(2, 50)", weight_mode="sample").status[i] == "S"


def test_expand_refuses_holdings():
    """Seed 002: the expansion cannot be combined with holdings."""
    recs = [{"cell": 0, "value": 100, "weight": 2, "unit": "h1"}, {"cell": 0, "value": 1, "weight": 3}]
    cells = build_cells(recs, 1, weighted=True, holding="group")
    with pytest.raises(RuleError, match="holdings"):
        assess(cells, "p(10)", weight_mode="expand")


def test_seed002_request_rule():
    """Seed 002 "Foreign trade rules" (tau-ARGUS REQ): only units that asked for protection count."""
    recs = [
        {"cell": 0, "value": 80, "request": True}, {"cell": 0, "value": 20},
        {"cell": 1, "value": 80}, {"cell": 1, "value": 20, "request": True},
        {"cell": 2, "value": 50}, {"cell": 2, "value": 45, "request": True}, {"cell": 2, "value": 5},
    ]
    cells = build_cells(recs, 3)
    names = list(cells.model.cell_names())
    a, b, c = (names.index(x) for x in ("c1", "c2", "c3"))
    prob = assess(cells, "REQ(70,40,10)")
    assert prob.status[a] == "U" and prob.upl[a] == pytest.approx(10.0)
    assert prob.status[b] == "S"
    assert prob.status[c] == "U"
    prob = assess(cells, "request(70)")
    assert prob.status[c] == "S"  # 45% < 70%
    assert prob.upl[a] == pytest.approx(100 / 70 * 80 - 100)


def test_holdings_are_units_and_frequency_counts_holdings():
    """Seed 002 "Holdings": contributions of one holding are one contribution; the
    frequency rule counts holdings (option: records)."""
    recs = [
        {"cell": 0, "value": 40, "unit": "H1"}, {"cell": 0, "value": 40, "unit": "H1"},
        {"cell": 0, "value": 10, "unit": "H2"}, {"cell": 0, "value": 10, "unit": "H3"},
    ]
    cells = build_cells(recs, 1, holding="group")
    i = list(cells.model.cell_names()).index("c1")
    assert assess(cells, "freq(4)").status[i] == "U"
    assert assess(cells, "freq(4)", count="records").status[i] == "S"
    prob = assess(cells, "nk(1, 75)")
    assert prob.status[i] == "U" and prob.upl[i] == pytest.approx(100 / 75 * 80 - 100)


# ---------------------------------------------------------------- seed 003

TABLE1 = [  # p, q/p, x1/T exceeds, (x1+x2)/T exceeds
    (50.0, 2, 66.7, 80.0),
    (33.3, 3, 75.0, 85.7),
    (16.7, 6, 85.7, 92.3),
    (11.1, 9, 90.0, 94.7),
]


@pytest.mark.parametrize("p,gain,k1,k2", TABLE1)
def test_seed003_table1(p, gain, k1, k2):
    """Seed 003 Table 1 and Technical Notes: k1 = 100/(p/100 + 1), k2 = 200/(p/100 + 2)."""
    assert params.k_covering_p(p, 1) == pytest.approx(k1, abs=0.05)
    assert params.k_covering_p(p, 2) == pytest.approx(k2, abs=0.05)
    assert params.information_gain(p) == pytest.approx(gain, abs=0.02)  # p is rounded in the table
    assert params.p_covering_k(params.k_covering_p(p, 1), 1) == pytest.approx(p)
    assert params.p_covering_k(params.k_covering_p(p, 2), 2) == pytest.approx(p)


def test_seed003_technical_notes_parameters():
    """Seed 003 Technical Notes: (2,85) -> p = 17.65 (inside) and 35.29 (covering);
    p = 35.29 -> k1 = 73.91; (1,75) -> p = 33.3 covering and -66.7 inside."""
    assert params.p_within_k2(85) == pytest.approx(17.65, abs=0.005)
    assert params.p_covering_k(85, 2) == pytest.approx(35.29, abs=0.005)
    assert params.k_covering_p(params.p_covering_k(85, 2), 1) == pytest.approx(73.91, abs=0.005)
    assert params.p_covering_k(75, 1) == pytest.approx(33.33, abs=0.005)
    assert params.p_within_k1(75) == pytest.approx(-66.7, abs=0.05)
    assert params.k1_within_p(17.65) == pytest.approx(45.94, abs=0.01)
    # seed 002: p* = 100 p/q and k*
    assert params.p_star(10, 50) == 20
    assert params.k_star(90, 50) == pytest.approx(80)


def test_seed003_three_cell_example():
    """Seed 003 Technical Notes example: Cell 1 = 100, Cell 2 = twenty 1s, Cell 3 = 100.

    Normalised linear measures of Cell1 u Cell2 and of the Total under (2,85), p = 17.65,
    (1,73.91) and p = 35.29: -6.67, -7.67, 43.34, 46.16 and 86.66, -13.34, -239.96, 43.32.
    The seed prints "-43.34" for (1,73.91) on the union, but its own arithmetic
    100 - 2.833 * 20 is +43.34 and its text says the (1,k) rule flags the union.
    """
    cells, (union, total, c1, c2) = cells_of([100] + [1] * 20, [100, 100] + [1] * 20, [100], [1] * 20)
    expected = {
        "nk(2, 85)": (-6.67, 86.66),
        "p(17.65)": (-7.67, -13.34),
        "nk(1, 73.91)": (43.34, -239.96),
        "p(35.29)": (46.16, 43.32),
    }
    for rule_s, (su, st) in expected.items():
        (rule,) = parse_rules(rule_s)
        w = rule.to_linear().weights
        res = rule_measure(cells, rule)
        s = res.upl * -w[-1]  # back to the measure normalised with w1 = 1
        assert s[union] == pytest.approx(su, abs=0.06), rule_s
        assert s[total] == pytest.approx(st, abs=0.06), rule_s
        # the same through the general linear rule
        lin = rule_measure(cells, f"linear({', '.join(repr(x) for x in w)})")
        np.testing.assert_allclose(lin.upl, res.upl, atol=1e-9)
        prob = assess(cells, rule)
        assert prob.status[c1] == "U" and prob.status[c2] == "S"
    # the (2,85) rule alone misses the union but flags the total; (1,73.91) the reverse
    prob = assess(cells, "nk(2, 85)|p(17.65)")
    assert prob.status[union] == "S" and prob.status[total] == "U"
    prob = assess(cells, "nk(1, 73.91)")
    assert prob.status[union] == "U" and prob.status[total] == "S"
    prob = assess(cells, "p(35.29)")
    assert prob.status[union] == "U" and prob.status[total] == "U"


def test_seed003_linear_weights_must_be_non_increasing():
    """Seed 003 B.1: subadditivity requires non-increasing weights; refuse otherwise."""
    with pytest.raises(RuleError, match="non-increasing"):
        parse_rules("linear(1, 2, -3)")
    with pytest.raises(RuleError, match="negative"):
        parse_rules("linear(1, 0.5, 0)")
    (r,) = parse_rules("linear(1, 0, -5)")
    assert r.to_string() == "linear(1, 0, -5)"


# ---------------------------------------------------------------- seed 004


def test_seed004_example_3_1():
    """Seed 004 example 3.1: p = 10; x1 = 92, x2 = 50, x3 = 5, x4 = 3, T = 150.

    C2's interval for x1 is [84, 100]: 8 units each side, less than 9.2 (10% of 92), so the
    cell is sensitive; levels of 9.2 - 8 = 1.2 on each side are needed, and publishing
    [148, 152] (2 each side) gives [82, 102], enough.
    """
    cells, (i,) = cells_of([92, 50, 5, 3])
    prob = assess(cells, "p(10)")
    assert prob.status[i] == "U"
    assert prob.upl[i] == pytest.approx(1.2) and prob.lpl[i] == pytest.approx(1.2)
    # the two-sided (weak prior, q = 100) form derives the same lower level
    prob = assess(cells, "pq(10, 100, prior=weak)", symmetric=False)
    assert prob.lpl[i] == pytest.approx(1.2) and prob.upl[i] == pytest.approx(1.2)
    lo, hi = 150 - prob.lpl[i] - 50 - 16, 150 + prob.upl[i] - 50
    assert 92 - lo == pytest.approx(9.2) and hi - 92 == pytest.approx(9.2)
    assert 148 - 50 - 16 == 82 and 152 - 50 == 102 and 2 >= prob.upl[i]
