"""Rule strings, costs, a priori bounds and the analyst frame."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from rules_builders import cells_of

from tablesafe.errors import RuleError
from tablesafe.rules import (
    FreqRule,
    NKRule,
    PQRule,
    PRule,
    RequestRule,
    ZeroRule,
    analyst_frame,
    assess,
    cell_costs,
    parse_rules,
    rules_to_string,
    rules_to_tauargus,
)


def test_parse_tauargus_and_tablesafe_forms():
    """DESIGN.md rule strings and the tau-ARGUS batch forms give the same rules."""
    a = parse_rules("P(15,1)|FREQ(3,10)|NK(2,80)")
    b = parse_rules(["p(15)", "freq(3, range=10)", "nk(2, 80)"])
    assert a == b == [PRule(15, 1), FreqRule(3, 10), NKRule(2, 80)]
    assert parse_rules("p(15, n=2)") == [PRule(15, 2)] == parse_rules("P(15,2)")
    assert parse_rules("pq(10, 50)") == [PQRule.symmetric(10, 50)]
    assert parse_rules("ZERO(5)|REQ(70,50,10)") == [ZeroRule(5), RequestRule(70, 50, 10)]
    rules = parse_rules("p(15)|pq(10,50,n=2,prior=weak)|nk(3,90)|freq(3,range=0)|zero(1)|request(70, 40)|linear(1, 0, -5)|man(5)")
    assert parse_rules(rules_to_string(rules)) == rules  # round trip
    assert rules_to_tauargus(parse_rules("p(15)|freq(3)|nk(2,80)")) == "P(15,1)|FREQ(3,10)|NK(2,80)"
    for r in rules:
        assert isinstance(r.describe(), str) and len(r.describe()) > 20


@pytest.mark.parametrize(
    "bad,match",
    [
        ("p()", "needs p"),
        ("q(15)", "unknown rule"),
        ("nk(2)", "needs n and k"),
        ("nk(2, 120)", "between 0 and 100"),
        ("pq(60, 50)", "smaller than q"),
        ("p(15, n=1.5)", "whole number"),
        ("freq(3, foo=2)", "unknown argument"),
        ("p 15", "expected NAME"),
        ("linear(1, 2, -1)", "non-increasing"),
    ],
)
def test_parse_errors_are_clear(bad, match):
    with pytest.raises(RuleError, match=match):
        parse_rules(bad)


def test_coalition_of_two_intruders():
    """Seed 002 footnote to the rules table / seed 000 eq. 10: with n intruders the remainder
    is X - x1 - ... - x(n+1)."""
    cells, (i,) = cells_of([50, 20, 15, 10, 5])
    p1 = assess(cells, "p(20)")
    p2 = assess(cells, "p(20, n=2)")
    assert p1.status[i] == "S"  # 10 - (15 + 10 + 5) < 0
    assert p2.status[i] == "S"  # 10 - 15 < 0
    p3 = assess(cells, "p(20, n=3)")
    assert p3.status[i] == "U" and p3.upl[i] == pytest.approx(10 - 5)


def test_costs_and_lambda():
    """Costs: value, unity, contributors, a user column; lambda transform (log for 0)."""
    cells, _ = cells_of([10, 10], [100, 1, 1, 1])
    cells.extra["turnover"] = np.arange(cells.n, dtype=float) + 1
    np.testing.assert_allclose(cell_costs(cells, "value"), np.abs(cells.value))
    np.testing.assert_allclose(cell_costs(cells, "unity"), 1.0)
    np.testing.assert_allclose(cell_costs(cells, "freq"), cells.contributors)
    np.testing.assert_allclose(cell_costs(cells, "turnover"), cells.extra["turnover"])
    np.testing.assert_allclose(cell_costs(cells, "value", 0.5), np.sqrt(np.abs(cells.value)))
    np.testing.assert_allclose(cell_costs(cells, "value", 0.0), np.log1p(np.abs(cells.value)))
    prob = assess(cells, "p(10)", cost="unity")
    assert (prob.cost == 1).all()
    with pytest.raises(RuleError, match="unknown cost"):
        cell_costs(cells, "nope")


def test_bounds_default_band_and_frame():
    """A priori bounds: [0, inf) by default; a percentage band; per-cell frame; levels capped."""
    cells, (a, b) = cells_of([90, 5, 5], [10, 10, 10, 10])
    prob = assess(cells, "nk(1, 50)")
    assert (prob.lower == 0).all() and np.isinf(prob.upper).all()
    prob = assess(cells, "nk(1, 50)", bounds=10)
    assert prob.lower[a] == pytest.approx(90) and prob.upper[a] == pytest.approx(110)
    # the level 100/50*90 - 100 = 80 exceeds the a priori room (10): capped there
    assert prob.upl[a] == pytest.approx(10) and prob.meta["levels_capped_at_bounds"] >= 1
    fr = pd.DataFrame({"d": ["c2"], "lower": [30.0], "upper": [50.0]})
    prob = assess(cells, "nk(1, 50)", bounds=fr)
    assert prob.lower[b] == 30 and prob.upper[b] == 50 and prob.lower[a] == 0
    with pytest.raises(RuleError, match="do not contain"):
        assess(cells, "nk(1, 50)", bounds=pd.DataFrame({"d": ["c2"], "lower": [45.0], "upper": [50.0]}))


def test_capacity_under_p_and_pq():
    """Seed 000 section 7.1: capacity T - T_min with T_min = T + p/100 x1 - sum_{t>=3} (p%)
    and T + p/100 x1 - q/100 sum_{t>=3} ((p,q), whatever the prior)."""
    cells, (a,) = cells_of([40, 20, 20, 20])
    prob = assess(cells, "p(50)")
    assert prob.capacity[a] == pytest.approx(40 - 0.5 * 40)
    prob = assess(cells, "pq(10, 50)")
    assert prob.capacity[a] == pytest.approx(0.5 * 40 - 0.1 * 40)
    prob = assess(cells, "p(50)|nk(1, 60)")
    assert prob.capacity[a] == pytest.approx(min(20, 100 - 100 / 60 * 40))


def test_analyst_frame_columns():
    cells, (a, b) = cells_of([90, 5, 5], [10, 10, 10, 10])
    df = analyst_frame(assess(cells, "nk(1, 50)|freq(3)"))
    assert list(df.columns) == ["d", "value", "contributors", "status", "rule", "upl", "lpl", "spl"]
    assert df.loc[a, "rule"] == "nk(1, 50)" and df.loc[a, "status"] == "U"
    assert df.loc[b, "rule"] == "" and df.loc[b, "status"] == "S"


def test_sliding_level_and_rule_derived_lower():
    """Seed 000 5.1.1: sliding level = sum of the upper and lower requirements."""
    cells, (i,) = cells_of([15, 4, 2])
    prob = assess(cells, "pq(7, 50, prior=weak)", sliding=True, symmetric=False)
    assert prob.spl[i] == pytest.approx(0.05 + 0.05)


def test_too_few_top_contributions():
    """Rules needing more top contributions than tabulated raise a clear error."""
    cells, _ = cells_of([5, 4, 3, 2, 1], k=2)
    with pytest.raises(RuleError, match="top_k >= 3"):
        assess(cells, "nk(3, 80)")


def test_required_top_k():
    from tablesafe.rules import required_top_k

    assert required_top_k("FREQ(5,20)|P(20,5)|") == 6
    assert required_top_k("nk(3, 80)|freq(3)") == 3
    assert required_top_k("freq(3)") == 1


def test_empty_cells_are_known_zeros():
    """DESIGN.md: empty cells (no contributors) are Z, never sensitive, known to be 0."""
    cells, (a, b) = cells_of([], [5])
    prob = assess(cells, "freq(3)")
    assert prob.status[a] == "Z" and prob.lower[a] == 0 and prob.upper[a] == 0 and prob.capacity[a] == 0
    assert prob.status[b] == "U"
    with pytest.raises(RuleError, match="A \\(sensitive by hand\\) or P"):
        assess(cells, "freq(3)", manual={"c2": "S"})


def test_rule_conversions():
    """Seed 002 (p* = 100 p/q; (2,k) -> p) and seed 003 Table 1 as methods of the rules."""
    (pq,) = parse_rules("pq(10, 50)")
    assert pq.equivalent_p() == PRule(20)
    assert PRule(50).covered_by_nk(1).k == pytest.approx(66.67, abs=0.01)
    assert PRule(50).covered_by_nk(2).k == pytest.approx(80)
    assert NKRule(2, 85).covering_p().p == pytest.approx(35.29, abs=0.01)
    assert NKRule(1, 75).covering_p().p == pytest.approx(33.33, abs=0.01)
    assert NKRule(2, 80).replacing_p() == PRule(25)
    # equivalence of (p,q) and p* on cells: same sensitive cells
    cells, _ = cells_of([40, 15, 4, 2], [15, 4, 2], [100, 10, 5, 5], [9, 9, 9])
    a = assess(cells, "pq(10, 50)").status
    b = assess(cells, "p(20)").status
    assert (a == b).all()


def test_non_finite_values_named():
    cells, (a, _) = cells_of([5, 5, 5], [1, 2, 3])
    cells.value[a] = np.nan
    with pytest.raises(RuleError, match="c1"):
        assess(cells, "p(10)")


def test_missing_codes_safe():
    """tau-ARGUS MIS(1) ("Missing=safe"): cells of a missing code are never sensitive by rule."""
    cells, (a, b) = cells_of([50], [60])
    prob = assess(cells, "freq(3)|MIS(1)", missing_codes={"d": "c2"})
    assert prob.status[a] == "U" and prob.status[b] == "S" and prob.upl[b] == 0
    assert assess(cells, "freq(3)|MIS(0)", missing_codes={"d": "c2"}).status[b] == "U"
    with pytest.raises(RuleError, match="missing_codes"):
        assess(cells, "freq(3)", missing_safe=True)
