"""``optimal`` starts where ``modular`` ends on a table with structure: from the HiTaS
subtables' pattern, repaired with their tables and cleaned; on a problem without
structure from the ``fast`` pattern. On unseen generated tables the ``fast`` start had
left ``optimal`` above ``modular`` on three of four tables (forty-ninth session,
benchmarks/RESULTS.md)."""

from __future__ import annotations

import numpy as np
import pytest
from _suppress_gen import independent_audit, table_problem

import tablesafe.suppress.dispatch as dispatch
import tablesafe.suppress.modular as modular
from tablesafe.suppress import suppress
from tablesafe.suppress.attacker import Bounds
from tablesafe.suppress.modular import modular_pattern
from tablesafe.suppress.optimal import SKIPPED_SUBTABLES, _heuristic_start, optimal_pattern


@pytest.fixture(scope="module")
def problem():
    return table_problem(5, [[3, 2], [2, 3]], units=80)


def test_the_start_on_a_table_with_structure_is_the_subtables_pattern(problem, monkeypatch):
    bounds = Bounds.of(problem)
    tables: list = []
    start, gave_up = _heuristic_start(problem, bounds, None, tables=tables)
    subtables, _ = modular_pattern(problem, bounds, insiders=True, workers=1)
    assert not gave_up
    assert np.array_equal(start, subtables | problem.sensitive)
    assert (start & ~problem.sensitive).any()  # complements, not the primaries alone
    assert tables  # their passing tables answer the repair's first attacks

    def no_subtables(*a, **k):
        raise AssertionError("a problem without structure has no subtables")

    monkeypatch.setattr(modular, "modular_pattern", no_subtables)
    flat = problem.copy(model=None)
    fast_start, gave_up = _heuristic_start(flat, Bounds.of(flat), None, tables=[])
    assert not gave_up and fast_start[flat.sensitive].all()


def test_optimal_withholds_no_more_than_modular_on_a_table_with_structure(problem):
    """Its incumbent is ``modular``'s pattern (the same subtables, repair and cleanup),
    and cut generation only replaces it by a cheaper one."""
    opt = suppress(problem, "optimal", time_limit=120)
    mod = suppress(problem, "modular", time_limit=120)
    assert opt.stats["cost"] <= mod.stats["cost"] + 1e-6
    assert not independent_audit(problem, np.asarray(opt.withheld, dtype=bool))


def test_a_completed_search_hands_on_the_subtables_pattern(problem, monkeypatch):
    """Where the certificates complete the pattern (here: limits of 10 cells), the search
    returns the subtables' pattern without whole-table LPs, says so, and the completion
    proves it."""
    bounds = Bounds.of(problem)
    withheld, stats = optimal_pattern(problem, bounds, time_limit=60, completed_by_caller=True)
    subtables, _ = modular_pattern(problem, bounds, insiders=True, workers=1)
    assert stats["start_check_skipped"] == SKIPPED_SUBTABLES and stats["gap"] == 1.0
    assert np.array_equal(withheld, subtables | problem.sensitive)
    monkeypatch.setattr(dispatch, "LP_REPAIR_MAX_CELLS", 10)
    monkeypatch.setattr(dispatch, "MODULAR_LP_REPAIR_MAX_CELLS", 10)
    pat = suppress(problem, "optimal", time_limit=60)
    assert pat.stats["start_check_skipped"] == SKIPPED_SUBTABLES
    assert pat.stats["audit"] == "certificates"
    assert not independent_audit(problem, np.asarray(pat.withheld, dtype=bool))
