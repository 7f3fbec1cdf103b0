"""``optimal`` starts where ``modular`` ends on a table with structure whose pattern it
proves itself: from the HiTaS subtables' pattern, repaired with their tables and
cleaned; otherwise from the ``fast`` pattern. On an unseen 1,040-cell three-way table
the ``fast`` start had left ``optimal`` 13 % above ``modular`` (forty-ninth session,
benchmarks/RESULTS.md)."""

from __future__ import annotations

import numpy as np
import pytest
from _suppress_gen import independent_audit, table_problem

import tablesafe.suppress.dispatch as dispatch
import tablesafe.suppress.modular as modular
from tablesafe.suppress import suppress
from tablesafe.suppress.attacker import Bounds
from tablesafe.suppress.dispatch import subtable_start
from tablesafe.suppress.modular import modular_pattern
from tablesafe.suppress.optimal import _heuristic_start, optimal_pattern


@pytest.fixture(scope="module")
def problem():
    return table_problem(5, [[3, 2], [2, 3]], units=80)


def test_the_start_on_a_table_with_structure_is_the_subtables_pattern(problem, monkeypatch):
    bounds = Bounds.of(problem)
    tables: list = []
    start, gave_up = _heuristic_start(problem, bounds, None, tables=tables, subtables=subtable_start)
    subtables, _ = modular_pattern(problem, bounds, insiders=True, workers=1)
    assert not gave_up
    assert np.array_equal(start, subtables | problem.sensitive)
    assert (start & ~problem.sensitive).any()  # complements, not the primaries alone
    assert tables  # their passing tables answer the repair's first attacks

    def no_subtables(*a, **k):
        raise AssertionError("a problem without structure has no subtables")

    monkeypatch.setattr(modular, "modular_pattern", no_subtables)
    flat = problem.copy(model=None)
    fast_start, gave_up = _heuristic_start(flat, Bounds.of(flat), None, tables=[], subtables=subtable_start)
    assert not gave_up and fast_start[flat.sensitive].all()


def test_optimal_withholds_no_more_than_modular_on_a_table_with_structure(problem):
    """Its incumbent is ``modular``'s pattern (the same subtables, repair and cleanup),
    and cut generation only replaces it by a cheaper one."""
    opt = suppress(problem, "optimal", time_limit=120)
    mod = suppress(problem, "modular", time_limit=120)
    assert opt.stats["cost"] <= mod.stats["cost"] + 1e-6
    assert not independent_audit(problem, np.asarray(opt.withheld, dtype=bool))


def test_a_search_the_certificates_complete_keeps_the_fast_start(problem, monkeypatch):
    """Where the caller completes the pattern (certificates, on tables above
    ``LP_REPAIR_MAX_CELLS``; here limits of 10 cells), the subtables' pattern would go to
    the completion unrepaired, or to attacker LPs that do not fit the limit on such
    tables (measured: 12.1 M instead of 8.8 M on an unseen 5,056-cell two-way table at
    60 s): the start stays ``fast``'s, and the completion proves the pattern."""
    calls = []
    real = modular.modular_pattern

    def counted(*a, **k):
        calls.append(1)
        return real(*a, **k)

    monkeypatch.setattr(modular, "modular_pattern", counted)
    withheld, stats = optimal_pattern(problem, Bounds.of(problem), time_limit=60, completed_by_caller=True,
                                      subtables=subtable_start)
    assert not calls and "start_check_skipped" not in stats and withheld[problem.sensitive].all()
    monkeypatch.setattr(dispatch, "LP_REPAIR_MAX_CELLS", 10)
    pat = suppress(problem, "optimal", time_limit=60)
    assert not calls and pat.stats["audit"] == "certificates"
    assert not independent_audit(problem, np.asarray(pat.withheld, dtype=bool))
