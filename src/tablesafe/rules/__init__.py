"""Sensitivity rules, protection levels, a priori bounds and costs (primary suppression).

Public API:
    RuleSet.build(rules, ...) -> RuleSet         rules and their options, parsed and checked once
    parse_rules(str | list) -> list[Rule | RuleOption]   rule strings (tablesafe or tau-ARGUS form)
    assess(cells, rules, ...) -> Problem         statuses, levels, bounds, cost, capacity
    analyst_frame(problem) -> DataFrame          codes, value, contributors, status, rule, levels
    cell_costs(cells, cost, cost_lambda)         cost per cell
    required_top_k(rules) -> int                 top contributions the rules need (RuleSet.top_k)
    params                                       helpers relating p%, (p,q) and (n,k) parameters
"""

from tablesafe.rules import params
from tablesafe.rules.assess import analyst_frame, assess, cell_costs, required_top_k, rule_measure
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
from tablesafe.rules.parse import parse_rules, rules_to_string, rules_to_tauargus
from tablesafe.rules.ruleset import RuleSet, missing_codes_map
from tablesafe.rules.tauoptions import ManualRule, MissingOption, RuleOption, WeightOption
from tablesafe.rules.view import ContributionView, RuleResult, expand_top

__all__ = [
    "ContributionView",
    "FreqRule",
    "LinearRule",
    "ManualRule",
    "MissingOption",
    "NKRule",
    "PQRule",
    "PRule",
    "RequestRule",
    "Rule",
    "RuleOption",
    "RuleResult",
    "RuleSet",
    "WeightOption",
    "ZeroRule",
    "analyst_frame",
    "assess",
    "cell_costs",
    "expand_top",
    "missing_codes_map",
    "params",
    "parse_rules",
    "required_top_k",
    "rule_measure",
    "rules_to_string",
    "rules_to_tauargus",
]
