"""The rule set (issue 13): rules parsed and their options checked once, where a run
enters; tau-ARGUS options become typed options, not rules; a rule is a function of the
cells' contributions (``Rule.evaluate``)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest

import tablesafe
import tablesafe.rules.ruleset as ruleset_module
from tablesafe import RuleError
from tablesafe.rules import (
    FreqRule,
    NKRule,
    PRule,
    Rule,
    RuleSet,
    ZeroRule,
    assess,
    parse_rules,
)
from tablesafe.validation import Interval, OneOf, check_options

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
DEMO = (EXAMPLES / "enterprises.csv", {"industry": EXAMPLES / "industry.csv", "region": EXAMPLES / "region.hrc"},
        "turnover")


def test_tauargus_options_become_typed_options():
    rs = RuleSet.build("P(15,1)|MAN(20)|WGT(1)|FREQ(3,10)|MIS(1)", missing_codes=["region=9"])
    assert rs.rules == (PRule(15), FreqRule(3, 10))
    assert rs.weight_mode == "expand" and rs.manual_margin == 20 and rs.missing_safe
    assert dict(rs.missing_codes) == {"region": ("9",)}
    assert all(isinstance(r, Rule) for r in rs.rules)


def test_keywords_override_the_options_written_among_the_rules():
    rs = RuleSet.build("p(15)|man(20)|wgt(1)", weight_mode="sample", manual_margin=5, zero_unsafe=2)
    assert rs.weight_mode == "sample" and rs.manual_margin == 5
    assert rs.rules == (PRule(15), ZeroRule(2.0))
    # a rule set passes through, the keywords given override its options
    again = RuleSet.build(rs, manual_margin=7)
    assert again.rules == rs.rules and again.manual_margin == 7 and again.weight_mode == "sample"
    assert RuleSet.build(rs) == rs


def test_top_k_is_computed_once_and_the_set_is_frozen():
    rs = RuleSet.build("p(15, n=2)|nk(2, 80)|freq(3)")
    assert rs.top_k == 3
    assert RuleSet.build("freq(3)").top_k == 1
    assert RuleSet.build("MAN(10)").rules == () and RuleSet.build("MAN(10)").top_k == 1
    with pytest.raises(dataclasses.FrozenInstanceError):
        rs.top_k = 9  # type: ignore[misc]
    assert rs.needing_top == (PRule(15, 2), NKRule(2, 80))
    assert rs.has_frequency_rule and not RuleSet.build("p(15)").has_frequency_rule


def test_options_are_refused_with_one_wording():
    with pytest.raises(RuleError, match=r"^weight_mode must be one of 'expand', 'sample', 'known' or None, got 'x'$"):
        RuleSet.build("p(15)", weight_mode="x")
    with pytest.raises(RuleError, match=r"^manual_margin must be a number >= 0, got -1$"):
        RuleSet.build("p(15)", manual_margin=-1)
    with pytest.raises(RuleError, match=r"^zero_unsafe must be True or False, a number >= 0 or None, got 'y'$"):
        RuleSet.build("p(15)", zero_unsafe="y")  # type: ignore[arg-type]
    with pytest.raises(RuleError, match="missing_codes"):
        RuleSet.build("p(15)|MIS(1)")
    with pytest.raises(RuleError, match="sensitivity rules"):
        RuleSet(rules=(parse_rules("man(5)")[0],))  # type: ignore[arg-type]


def test_assessment_options_share_the_wording(plain_cells):
    cells, _ = plain_cells([10, 1], [5, 5, 5])
    for name, bad in (("count", "units"), ("negative", "drop"), ("freq_levels", "up"), ("cost_lambda", -1)):
        with pytest.raises(RuleError, match=rf"^{name} must be "):
            assess(cells, "p(15)", **{name: bad})


def test_constraints():
    assert Interval(0, 100, closed="neither").allows(50) and not Interval(0, 100, closed="neither").allows(100)
    assert not Interval(1, integer=True).allows(1.5) and not Interval(0).allows(True)
    assert not Interval(0).allows(float("inf")) and not OneOf(("a",)).allows(["a"])
    assert str(Interval(1, integer=True)) == "a whole number >= 1"
    check_options({"x": 1}, {"y": [OneOf(("a",))]}, error=RuleError)  # undeclared: not checked


def test_every_rule_evaluates_itself(plain_cells):
    """Rules combine by OR over ``Rule.evaluate``: no dispatch on the rule's class."""
    cells, idx = plain_cells([90, 5, 5], [40, 30, 30], [7])
    rs = RuleSet.build("p(15)|nk(1, 80)|freq(2)")
    problem = assess(cells, rs)
    assert list(problem.status[idx]) == ["U", "S", "U"]
    concrete = [c for c in vars(tablesafe.rules).values()
                if isinstance(c, type) and issubclass(c, Rule) and c is not Rule]
    assert concrete and all("evaluate" in vars(c) for c in concrete)


def test_rules_are_parsed_once_per_run(monkeypatch):
    calls = []
    real = ruleset_module.parse_rules

    def counting(rules):
        calls.append(rules)
        return real(rules)

    monkeypatch.setattr(ruleset_module, "parse_rules", counting)
    result = tablesafe.protect(*DEMO, ["p(15)", "freq(3)"], method="none", run_audit=False)
    assert len(calls) == 1
    assert result.problem.meta["rules"] == ["p(15)", "freq(3, range=10)"]


def test_the_pipeline_hands_the_rule_set_to_the_assessment(monkeypatch):
    import tablesafe.api as api

    seen = []
    real = api.assess

    def spy(cells, rules, **kwargs):
        seen.append((rules, kwargs))
        return real(cells, rules, **kwargs)

    monkeypatch.setattr(api, "assess", spy)
    tablesafe.protect(*DEMO, "P(15,1)|FREQ(3,10)|MAN(25)", method="none", run_audit=False,
                      weight_mode="sample", missing_codes=["region=9"])
    (rules, kwargs), = seen
    assert rules == RuleSet.build("p(15)|freq(3)|man(25)", weight_mode="sample", missing_codes={"region": "9"})
    assert not {"weight_mode", "manual_margin", "missing_codes", "zero_unsafe"} & set(kwargs)


def test_a_rule_set_is_accepted_where_rule_strings_are(plain_cells):
    cells, _ = plain_cells([90, 5, 5], [40, 30, 30])
    a = assess(cells, RuleSet.build("p(15)|freq(3)"))
    b = assess(cells, ["p(15)", "freq(3)"])
    assert np.array_equal(a.status, b.status) and np.array_equal(a.upl, b.upl)
