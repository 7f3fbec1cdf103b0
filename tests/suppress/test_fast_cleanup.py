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


def test_second_pass_seeks_no_replacement_past_its_deadline(table, monkeypatch):
    """A complement used by several certificates needs a search for each; past the
    deadline the pass seeks none (the complement stays withheld, the pattern as it was),
    where it used to finish every search of that complement first."""
    import dataclasses

    from tablesafe.suppress import fast_cleanup as fc

    seen = {"late_releases": 0, "late_searches": 0, "in_late": False}
    real_release, real_replace = fc._release, fc._replace

    def release(ctx, groups, gids, c, withheld):
        if len(gids) > 1:
            before = withheld.copy()
            seen["in_late"] = True
            late = real_release(dataclasses.replace(ctx, deadline=float("-inf")), groups, gids, c, withheld)
            seen["in_late"] = False
            assert late is None and np.array_equal(withheld, before)
            seen["late_releases"] += 1
        return real_release(ctx, groups, gids, c, withheld)

    def replace(*a, **kw):
        seen["late_searches"] += seen["in_late"]
        return real_replace(*a, **kw)

    monkeypatch.setattr(fc, "_release", release)
    monkeypatch.setattr(fc, "_replace", replace)
    pat = fast_pattern(table, time_limit=1_000.0)
    assert seen["late_releases"] > 0 and seen["late_searches"] == 0
    assert pat.stats["second_pass"]["released"] > 0
    assert check_certificates(table, pat.withheld, pat.certificates, insiders=True) == []
