"""``optimal`` hands the tables that proved its pattern to the dispatcher, whose
full-table check takes them when its own repair runs out of time, and its LP rounds
attack with single respondents only where the outsider's table moves their cell.

Measured on the generated 4,961-cell ``wide2d`` table at a 10 s limit (fiftieth
session): the first LP round spelt out 4.3 million insider attacks when only the
primaries were withheld, listing them ran the search 6 s past its share, and the
dispatcher's check then solved every attack of the pattern ``optimal`` had just proved
again, ran out of time, and the hurried certificates withheld 5.8 M. Now 8.1 s and 1,898.
"""

from __future__ import annotations

import time

import numpy as np
import pytest
from _suppress_gen import independent_audit, table_problem

import tablesafe.suppress.attack_runs as attack_runs
import tablesafe.suppress.optimal as optimal
from tablesafe.suppress import suppress
from tablesafe.suppress.attacker import Bounds
from tablesafe.suppress.dispatch import subtable_start
from tablesafe.suppress.master_problem import _Master
from tablesafe.suppress.optimal import optimal_pattern
from tablesafe.suppress.protection import (
    OutOfTime,
    candidates,
    keys_for,
    outsider_keys,
    run_attacks,
)
from tablesafe.suppress.subtable_tables import whole_table_certificates


@pytest.fixture(scope="module")
def problem():
    return table_problem(5, [[3, 2], [2, 3]], units=80)


def test_the_tables_handed_over_prove_the_returned_pattern(problem):
    bounds = Bounds.of(problem)
    proofs: list = []
    withheld, _ = optimal_pattern(problem, bounds, time_limit=60, proofs=proofs, subtables=subtable_start)
    assert proofs
    known = whole_table_certificates(problem, bounds, withheld, proofs)
    # every table handed over is a certificate of the whole table under the pattern ...
    assert len(known) == len({key for key, _, _ in proofs})
    # ... and every outsider attack on a sensitive cell has one
    targets = np.flatnonzero(problem.sensitive)
    assert set(outsider_keys(bounds, targets)) <= set(known)


def test_a_repair_out_of_time_takes_the_search_s_tables(problem, monkeypatch):
    """The attacker-LP repair of ``optimal``'s pattern first solves its own sparse
    certificates; when it runs out of time the tables that proved the pattern in the
    search prove it again (no hurried certificates), and the audit passes."""
    import tablesafe.suppress.dispatch as dispatch
    import tablesafe.suppress.repairs as repairs

    pat = suppress(problem, "optimal", time_limit=60)
    assert "repair_by_search_tables" not in pat.stats and pat.stats["repair_known_tables"] == 0
    real = repairs.lp_repair
    calls: list = []

    def first_out_of_time(prob, b, found, known, *a, **k):
        calls.append(len(known))
        if len(calls) == 1:
            raise OutOfTime
        return real(prob, b, found, known, *a, **k)

    monkeypatch.setattr(dispatch, "lp_repair", first_out_of_time)  # the first check
    monkeypatch.setattr(repairs, "lp_repair", first_out_of_time)  # the check with the search's tables
    pat = suppress(problem, "optimal", time_limit=60)
    st = pat.stats
    assert calls[0] == 0 and calls[1] > 0  # the second check had the search's tables
    assert st["repair_by_search_tables"] and st["repair_timed_out"] == "attacker-LP repair"
    assert st["repair_known_tables"] >= len(outsider_keys(Bounds.of(problem), np.flatnonzero(problem.sensitive)))
    assert st["repair_added"] == 0 and st["audit"] != "certificates"
    assert not independent_audit(problem, np.asarray(pat.withheld, dtype=bool))


def test_a_search_out_of_time_hands_over_nothing(problem):
    proofs: list = []
    optimal_pattern(problem, Bounds.of(problem), time_limit=1e-9, proofs=proofs, subtables=subtable_start)
    assert proofs == []


def test_the_lp_rounds_spell_out_only_the_outsiders(problem, monkeypatch):
    bounds = Bounds.of(problem)
    seen: list = []
    real = optimal.run_attacks

    def recorded(prob, b, x, keys, **k):
        seen.append((list(keys), k.get("insiders")))
        return real(prob, b, x, keys, **k)

    monkeypatch.setattr(optimal, "run_attacks", recorded)
    master = _Master(problem, candidates(problem, bounds), 0)
    stats: dict = {}
    lb = optimal._lp_rounds(problem, bounds, master, 3, time.monotonic() + 60, stats)
    assert seen and stats["lp_rounds"] >= 1 and lb >= 0
    targets = np.flatnonzero(problem.sensitive)
    keys, insiders = seen[0]
    assert all(s < 0 for _, _, s in keys)
    assert insiders  # the single respondents next to the targets, attacked where needed
    assert len(keys) < len(keys_for(problem, bounds, problem.sensitive, targets))


def test_attacks_past_their_deadline_stop_before_any_work(problem, monkeypatch):
    def no_lp(*a, **k):
        raise AssertionError("no attacker LP past the deadline")

    monkeypatch.setattr(attack_runs, "BlockLP", no_lp)
    monkeypatch.setattr(attack_runs, "attack_neighbourhoods", no_lp)
    bounds = Bounds.of(problem)
    x = problem.sensitive.astype(float)
    keys = keys_for(problem, bounds, problem.sensitive, np.flatnonzero(problem.sensitive))
    with pytest.raises(OutOfTime):
        run_attacks(problem, bounds, x, keys, deadline=time.monotonic() - 1.0)
