"""The second pass of ``fast`` (seed 003 B.2.b, "second pass"): complements whose
certificates can be found again without them are published, and the certificates that
remain prove the smaller pattern, single respondents included."""

from __future__ import annotations

import numpy as np
import pytest

from tablesafe.audit import audit, check_certificates
from tablesafe.suppress.fast import FastOptions, fast_pattern
from tablesafe.synthetic import problem_from_data, synthetic_data


@pytest.fixture(scope="module")
def table():
    return problem_from_data(synthetic_data([[3, 10], [2, 3, 4]], 2500, seed=23))


@pytest.fixture(scope="module")
def both(table):
    first = fast_pattern(table, options=FastOptions(cleanup_effort=0))
    second = fast_pattern(table)
    return first, second


def _value(problem, w):
    return float(problem.value[w & ~problem.sensitive].sum())


def test_second_pass_publishes_complements_and_stays_proved(table, both):
    first, second = both
    st = second.stats["second_pass"]
    assert st["released"] > 0
    assert first.stats["second_pass"] == {}
    assert _value(table, second.withheld) < _value(table, first.withheld)
    assert second.withheld[table.sensitive].all()
    assert check_certificates(table, second.withheld, second.certificates, insiders=True) == []


def test_second_pass_result_passes_the_lp_audit(table, both):
    _, second = both
    res = audit(table, second.withheld)
    assert res.failing.size == 0


def test_without_swaps_only_cells_of_the_first_pattern_remain(table, both):
    first, _ = both
    kept = fast_pattern(table, options=FastOptions(cleanup_swap=False))
    assert kept.stats["second_pass"]["swapped"] == 0
    assert not (kept.withheld & ~first.withheld).any()
    assert kept.withheld.sum() <= first.withheld.sum()
    assert check_certificates(table, kept.withheld, kept.certificates, insiders=True) == []


def test_second_pass_budget_is_counted_in_lps_and_deterministic(table):
    small = FastOptions(cleanup_effort=0.05, cleanup_min_lps=10)
    a = fast_pattern(table, options=small)
    b = fast_pattern(table, options=small)
    assert a.stats["second_pass"]["budget_hit"]
    assert a.stats["second_pass"]["lp_solves"] <= 10 + 50  # the budget, plus the last candidate's LPs
    assert np.array_equal(a.withheld, b.withheld)
    assert check_certificates(table, a.withheld, a.certificates, insiders=True) == []
