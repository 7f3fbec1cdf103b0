"""Sensitivity rules, protection levels, a priori bounds and costs (primary suppression).

Public API:
    parse_rules(str | list) -> list[Rule]       rule strings (tablesafe or tau-ARGUS form)
    assess(cells, rules, ...) -> Problem         statuses, levels, bounds, cost, capacity
    analyst_frame(problem) -> DataFrame          codes, value, contributors, status, rule, levels
    cell_costs(cells, cost, cost_lambda)         cost per cell
    required_top_k(rules) -> int                 top contributions the rules need (tabulate top_k)
    params                                       helpers relating p%, (p,q) and (n,k) parameters
"""

from tablesafe.rules import params
from tablesafe.rules.assess import analyst_frame, assess, cell_costs, required_top_k, rule_measure
from tablesafe.rules.measures import expand_top
from tablesafe.rules.model import (
    FreqRule,
    LinearRule,
    ManualRule,
    MissingOption,
    NKRule,
    PQRule,
    PRule,
    RequestRule,
    Rule,
    WeightOption,
    ZeroRule,
)
from tablesafe.rules.parse import parse_rules, rules_to_string, rules_to_tauargus

__all__ = [
    "FreqRule",
    "LinearRule",
    "ManualRule",
    "MissingOption",
    "NKRule",
    "PQRule",
    "PRule",
    "RequestRule",
    "Rule",
    "WeightOption",
    "ZeroRule",
    "analyst_frame",
    "assess",
    "cell_costs",
    "expand_top",
    "params",
    "parse_rules",
    "required_top_k",
    "rule_measure",
    "rules_to_string",
    "rules_to_tauargus",
]
