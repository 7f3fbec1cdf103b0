"""``fast`` on three-way tables: outsiders by certificates, then the single respondents by
the audit-guided repair (:mod:`tablesafe.suppress.outsiders_first`)."""

from __future__ import annotations

import numpy as np
import pytest
from _suppress_gen import independent_audit, table_problem

import tablesafe.suppress.audit_repair as audit_repair
import tablesafe.suppress.outsiders_first as outsiders_first
from tablesafe.suppress import suppress
from tablesafe.suppress.protection import OutOfTime

SHAPE = [[2, 2], [3], [2, 2]]


@pytest.fixture
def three_way():
    """A three-way table with holdings whose single respondents ``fast``'s outsider
    pattern leaves short (checked by the tests that use it)."""
    return table_problem(11, SHAPE, units=220)


@pytest.fixture
def small_tables_too(monkeypatch):
    """The route allowed on tables of any size."""
    monkeypatch.setattr(outsiders_first, "OUTSIDERS_FIRST_FROM", 0)


def test_the_second_try_is_for_fast_on_three_way_tables(three_way, small_tables_too):
    p = three_way
    ok = lambda method="fast", singleton=True, capacity=False: outsiders_first.outsiders_first(
        method, p, singleton=singleton, capacity=capacity)
    assert ok()
    assert not ok(method="modular")
    assert not ok(singleton=False)  # without single respondents fast's certificates are all
    assert not ok(capacity=True)  # the audit-guided repair knows no capacity bounds
    two_way = table_problem(11, SHAPE[:2], units=220)
    assert not outsiders_first.outsiders_first("fast", two_way, singleton=True, capacity=False)


def test_linked_tables_get_no_second_try(small_tables_too):
    from tablesafe.synthetic import problem_from_data, synthetic_preset

    linked = problem_from_data(synthetic_preset("linked3k", seed=1), p=15)
    assert linked.model is not None and len(linked.model.table_cells) == 2 and len(linked.model.dims) >= 3
    assert not outsiders_first.outsiders_first("fast", linked, singleton=True, capacity=False)


def test_the_second_try_waits_for_tables_of_its_size(three_way):
    assert three_way.n < outsiders_first.OUTSIDERS_FIRST_FROM
    assert not outsiders_first.outsiders_first("fast", three_way, singleton=True, capacity=False)


def _fast_alone(p, monkeypatch):
    with monkeypatch.context() as m:
        m.setattr(outsiders_first, "OUTSIDERS_FIRST", False)
        return suppress(p, "fast")


def test_the_second_try_replaces_fasts_pattern_when_it_withholds_less(three_way, small_tables_too, monkeypatch):
    p = three_way
    alone = _fast_alone(p, monkeypatch)
    assert "outsiders_first" not in alone.stats and alone.proof == "certificates"
    pat = suppress(p, "fast")
    st = pat.stats
    assert st["outsiders_first"].startswith("kept: ")
    assert any(step.startswith("fast's second try") for step in st["clock_decided"])  # it read the clock
    # the outsiders' pattern fell short for single respondents, and the repair added cells
    assert st["repair"] == "audit-guided" and st["repair_added"] > 0
    assert st["withheld_value"] < alone.stats["withheld_value"]
    assert pat.proof == "audit" and pat.audit is not None
    assert independent_audit(p, np.asarray(pat.withheld)) == []
    again = suppress(p, "fast")  # the same input gives the same pattern
    assert np.array_equal(np.asarray(again.withheld), np.asarray(pat.withheld))


def test_a_repair_out_of_time_leaves_fasts_pattern_as_it_was(three_way, small_tables_too, monkeypatch):
    def out_of_time(problem, bounds, choice, w, *args):
        raise OutOfTime

    p = three_way
    alone = _fast_alone(p, monkeypatch)
    monkeypatch.setattr(audit_repair, "revise", out_of_time)
    pat = suppress(p, "fast")
    assert pat.stats["outsiders_first"].startswith("tried: the repair for single respondents ran out of time")
    assert "repair" not in pat.stats  # the second try's repair leaves no trace in the stats
    assert np.array_equal(np.asarray(pat.withheld), np.asarray(alone.withheld))
    assert pat.proof == "certificates"


def test_without_time_to_spare_there_is_no_second_try(three_way, small_tables_too, monkeypatch):
    p = three_way
    alone = _fast_alone(p, monkeypatch)
    monkeypatch.setattr(outsiders_first, "TIME_RATIO", 1e9)
    pat = suppress(p, "fast")
    assert pat.stats["outsiders_first"].startswith("not tried: ")
    assert np.array_equal(np.asarray(pat.withheld), np.asarray(alone.withheld))


def test_the_report_says_what_the_second_try_did(three_way, small_tables_too):
    from tablesafe.result import ProtectResult

    pat = suppress(three_way, "fast")
    steps = ProtectResult(problem=three_way, pattern=pat, audit=None).suppression_steps()
    said = steps["second try, outsiders first"]
    tries = pat.stats["outsiders_first_tries"]  # fast's search against outsiders, then modular's subtables
    assert said == "; then ".join(tries) and pat.stats["outsiders_first"] in tries and "against fast's" in said
    assert steps["full-table repair"].startswith(f"added {pat.stats['repair_added']:,}")
    assert "insider_added" not in pat.stats  # fast's own insiders' cells are not this pattern's


def test_a_run_asking_for_certificates_keeps_fasts_certified_pattern(three_way, small_tables_too, monkeypatch):
    p = three_way
    alone = _fast_alone(p, monkeypatch)
    pat = suppress(p, "fast", certificates=True)
    assert pat.stats["outsiders_first"].startswith("not tried: certificates were asked for")
    assert pat.proof == "certificates" and pat.certificates is not None and len(pat.certificates)
    assert np.array_equal(np.asarray(pat.withheld), np.asarray(alone.withheld))


def _without_subtables(p, monkeypatch):
    with monkeypatch.context() as m:
        m.setattr(outsiders_first, "SUBTABLES_FIRST", False)
        return suppress(p, "fast")


def test_modulars_subtables_are_tried_after_fasts_outsiders_and_the_cheaper_kept(three_way, small_tables_too,
                                                                                   monkeypatch):
    p = three_way
    fast_try = _without_subtables(p, monkeypatch)
    assert fast_try.stats["outsiders_first"].startswith("kept: outsiders' search")
    assert "outsiders_first_tries" not in fast_try.stats
    pat = suppress(p, "fast")
    first, second = pat.stats["outsiders_first_tries"]
    assert first.startswith(("kept: outsiders' search", "tried, not kept: outsiders' search"))
    assert second.startswith(("kept: modular's subtables", "tried, not kept: modular's subtables"))
    assert [first.startswith("kept: "), second.startswith("kept: ")].count(True) == 1
    assert pat.stats["cost"] <= fast_try.stats["cost"]
    if second.startswith("kept: "):  # on this table the subtables' pattern is the cheaper
        assert pat.stats["outsiders_first"] == second and pat.stats["cost"] < fast_try.stats["cost"]
    assert pat.proof == "audit" and independent_audit(p, np.asarray(pat.withheld)) == []
    again = suppress(p, "fast")
    assert np.array_equal(np.asarray(again.withheld), np.asarray(pat.withheld))


def test_without_time_for_the_subtables_fasts_outsiders_stand(three_way, small_tables_too, monkeypatch):
    p = three_way
    fast_try = _without_subtables(p, monkeypatch)
    monkeypatch.setattr(outsiders_first, "SUBTABLES_RATIO", 1e9)
    pat = suppress(p, "fast")
    first, second = pat.stats["outsiders_first_tries"]
    assert first == pat.stats["outsiders_first"] and first.startswith("kept: outsiders' search")
    assert second.startswith("modular's subtables not tried: ")
    assert np.array_equal(np.asarray(pat.withheld), np.asarray(fast_try.withheld))


def test_subtables_that_fail_leave_the_fast_try(three_way, small_tables_too, monkeypatch):
    import tablesafe.suppress.modular as modular
    from tablesafe.errors import TablesafeError

    def failing(*args, **kwargs):
        raise TablesafeError("no subtables today")

    p = three_way
    fast_try = _without_subtables(p, monkeypatch)
    monkeypatch.setattr(modular, "modular_pattern", failing)
    pat = suppress(p, "fast")
    first, second = pat.stats["outsiders_first_tries"]
    assert first == pat.stats["outsiders_first"] and second == "tried: modular's subtables failed (no subtables today)"
    assert np.array_equal(np.asarray(pat.withheld), np.asarray(fast_try.withheld))


def test_tables_with_copies_get_the_second_try(small_tables_too):
    """The copies' route asks the smaller table's run for certificates to prove the
    expanded pattern, but does not need them: the second try may replace them."""
    from test_twins import _with_only_children

    from tablesafe.synthetic import problem_from_data, synthetic_data

    syn = synthetic_data([[2, 2], [3], [2, 2]], 260, seed=5, holding_cohesion=0.5)
    p = problem_from_data(_with_only_children(syn), p=15)
    pat = suppress(p, "fast")
    assert pat.stats["copies_merged"] > 0
    assert pat.stats["outsiders_first"] != outsiders_first.CERTIFICATES_ASKED
    assert pat.stats["outsiders_first"].startswith(("kept: ", "tried, not kept: "))
    assert independent_audit(p, np.asarray(pat.withheld)) == []
    asked = suppress(p, "fast", certificates=True)  # a run asking for certificates still gets them
    assert asked.stats["outsiders_first"] == outsiders_first.CERTIFICATES_ASKED and asked.certificates is not None
