"""Steps bounded by LP work instead of the clock stop at the same point in every run
(issue 12, "Determinism"): the work meter (``audit.lp.lp_work``) and the cleanup's
work bound, which decide the same whatever the speed of the machine."""

from __future__ import annotations

import time

import numpy as np
from _suppress_gen import independent_audit, spare_pattern, table_problem

from tablesafe.audit import lp as lpmod
from tablesafe.audit.lp import RUN_WORK, lp_work, new_highs
from tablesafe.suppress.attacker import Bounds
from tablesafe.suppress.cleanup import cleanup
from tablesafe.suppress.work_clock import WORK_PER_SECOND, WorkClock


def _small_lp():
    h = new_highs()
    h.setOptionValue("presolve", "off")
    n = 6
    h.addVars(n, np.zeros(n), np.full(n, 10.0))
    h.changeColsCost(n, np.arange(n, dtype=np.int32), -np.arange(1.0, n + 1))
    h.addRows(2, np.full(2, -np.inf), np.array([12.0, 20.0]), 2 * n, np.array([0, n], dtype=np.int32),
              np.concatenate([np.arange(n), np.arange(n)]).astype(np.int32),
              np.concatenate([np.ones(n), np.arange(1.0, n + 1)]))
    return h


def test_the_meter_counts_each_run_and_its_iterations():
    before = lp_work()
    h = _small_lp()
    h.run()
    iterations = h.getInfo().simplex_iteration_count
    assert iterations > 0
    assert lp_work() - before == RUN_WORK + iterations
    # the same models solved again do the same work
    again = lp_work()
    _small_lp().run()
    assert lp_work() - again == RUN_WORK + iterations


def _spare_pattern(seed: int, shape: list[list[int]], units: int):
    """A repaired pattern with spare complements for the cleanup to try."""
    return spare_pattern(seed, shape, units, 12)


def test_a_cleanup_bounded_by_work_stops_at_the_same_complement_on_a_slower_machine(monkeypatch):
    p, b, w, atts = _spare_pattern(12, [[2, 2], [2], [3]], 120)
    full: dict = {}
    everything, _, removed_all = cleanup(p, b, w, atts, report=full)
    assert full["stopped"] == "" and removed_all > 1
    bound = full["work"] // 2
    report: dict = {}
    first, _, removed = cleanup(p, b, w, atts, work=bound, report=report)
    assert report["stopped"] == "work" and report["work"] >= bound
    assert 0 < removed < removed_all
    # every LP run now takes a millisecond longer: a clock share would stop elsewhere
    real_run = lpmod._MeteredHighs.run

    def slow_run(self):
        time.sleep(0.001)
        return real_run(self)

    monkeypatch.setattr(lpmod._MeteredHighs, "run", slow_run)
    slow: dict = {}
    second, _, removed_slow = cleanup(p, b, w, atts, work=bound, report=slow)
    assert np.array_equal(first, second) and removed_slow == removed and slow["work"] == report["work"]
    # stopping earlier keeps a prefix of the same decisions, and the pattern stays safe
    assert not (first & ~w).any() and not (everything & ~first).any()
    assert independent_audit(p, first) == []


def test_a_cleanup_stops_within_the_trial_of_one_complement(monkeypatch):
    """The work bound and the deadline are checked before every LP of a complement's
    trial, not only between complements: a trial of many LPs cannot carry the cleanup
    far past either (measured: ``modular`` on Castro's HIER13 at 30 s, whose screens
    take 43 ms an LP, ended its cleanup 3.2 s past its deadline and the run at 33.1-35.5 s).
    The complement being tried stays withheld and the pattern stays safe."""
    p, b, w, atts = _spare_pattern(12, [[2, 2], [2], [3]], 120)
    real_run = lpmod._MeteredHighs.run
    runs = []

    def counted_run(self):  # counts the LPs that ran, not those stopped before they started
        status = real_run(self)
        runs.append(1)
        return status

    monkeypatch.setattr(lpmod._MeteredHighs, "run", counted_run)
    report: dict = {}
    by_work, _, _ = cleanup(p, b, w, atts, work=1, report=report)
    assert report["stopped"] == "work" and len(runs) == 1
    assert not (by_work & ~w).any()
    assert independent_audit(p, by_work) == []

    # the clock advances a second with every LP: the deadline, half a second away,
    # passes within the first trial
    from types import SimpleNamespace

    import tablesafe.suppress.cleanup as cleanup_mod

    fake = SimpleNamespace(monotonic=lambda: float(len(runs)))
    monkeypatch.setattr(cleanup_mod, "time", fake)
    monkeypatch.setattr(lpmod, "time", fake)
    runs.clear()
    report = {}
    by_clock, _, _ = cleanup(p, b, w, atts, deadline=0.5, report=report)
    assert report["stopped"] == "clock" and len(runs) == 1
    assert not (by_clock & ~w).any()
    assert independent_audit(p, by_clock) == []


def test_the_cleanup_of_suppress_is_bounded_by_work_in_proportion_to_the_limit(monkeypatch):
    from tablesafe.suppress import dispatch
    from tablesafe.suppress.dispatch import suppress

    p = table_problem(5, [[4], [3, 2]], units=90)
    pat = suppress(p, "modular", time_limit=40.0)
    st = pat.stats
    assert st["cleanup_work_budget"] == WorkClock().units(dispatch.CLEANUP_WORK_SHARE * 40.0)
    assert 0 < st["cleanup_work"] < st["cleanup_work_budget"] and "cleanup_stopped_by" not in st
    # one unit of work for the whole limit: the cleanup stops after its first trial by
    # LP, at its work bound, and the pattern is still proved by the audit
    monkeypatch.setattr(dispatch, "CLEANUP_WORK_SHARE", 1 / (40.0 * WORK_PER_SECOND))
    bounded = suppress(p, "modular", time_limit=40.0)
    assert bounded.stats["cleanup_work_budget"] == 1
    assert bounded.stats["cleanup_stopped_by"] == "work"
    assert bounded.stats["cleanup_work"] < st["cleanup_work"]
    assert independent_audit(p, bounded.withheld) == []


def test_the_steps_the_clock_ended_are_named():
    from tablesafe.suppress.clock_steps import clock_decided

    assert clock_decided({"cleanup_stopped_by": "work", "hurried_after_targets": None}) == []
    named = clock_decided({"cleanup_stopped_by": "clock", "clock_guarded": True, "repair_timed_out": "attacker-LP repair",
                           "chain_certificates": 3})
    assert len(named) == 4 and "the cleanup" in named and "attacker-LP repair" in named
    fast_steps = clock_decided({"other_order_skipped": True, "second_pass_clock_stopped": True,
                                "hurried_after_targets": 0})
    assert len(fast_steps) == 3 and any("second pass" in step for step in fast_steps)
    assert clock_decided({"other_order_skipped": False, "second_pass_clock_stopped": False}) == []
    # a hurry or a left-out order decided by the work bound is the same in every run
    assert clock_decided({"hurried_after_targets": 5, "hurried_by": "work", "other_order_skipped": True,
                          "other_order_skipped_by": "work"}) == []


def test_a_search_whose_work_bound_the_clock_outruns_says_so(monkeypatch):
    """With every LP run a hundred times slower than the work clock assumes, ``optimal``'s
    guard on the clock ends its search first: the stats say so (the report's test is in
    tests/report), and the pattern is still proved safe."""
    from tablesafe.suppress.dispatch import suppress

    p = table_problem(11, [[3, 2], [4]], units=70)
    quick = suppress(p, "optimal", time_limit=20.0)
    assert quick.stats["clock_decided"] == []
    real_run = lpmod._MeteredHighs.run

    def slow_run(self):
        time.sleep(0.02)
        return real_run(self)

    monkeypatch.setattr(lpmod._MeteredHighs, "run", slow_run)
    slow = suppress(p, "optimal", time_limit=2.0)
    assert any("search" in step for step in slow.stats["clock_decided"])
    assert independent_audit(p, slow.withheld) == []


def test_modular_subtables_stop_by_work_whatever_the_speed(monkeypatch):
    """Each subtable of ``modular`` is solved within a share of LP work, not of real time:
    with that share small enough to stop the solves early, LPs a millisecond slower give
    the same pattern after the same work, and the clock's guard ended none of them."""
    from tablesafe.suppress import subtable_cuts
    from tablesafe.suppress.modular import modular_pattern

    p = table_problem(5, [[4], [3, 2]], units=90)
    b = Bounds.of(p, capacity=False, singleton=True)
    _, free = modular_pattern(p, b, time_limit=60.0, workers=1)
    assert free["subtables_clock_guarded"] == 0 and free["subtable_work"] > 0

    # a work clock that counts 400 units as a second (its guard a minute away): a
    # subtable's share of 0.5 s is then 200 units, less than its solve needs
    def scarce(cls, seconds, slack=1.2):
        return cls(rate=400.0, guard=time.monotonic() + 60.0)

    monkeypatch.setattr(subtable_cuts.WorkClock, "for_limit", classmethod(scarce))
    first, st = modular_pattern(p, b, time_limit=60.0, workers=1, subtable_limit=0.5)
    assert st["subtable_work"] < free["subtable_work"]  # the work bound stopped solves
    real_run = lpmod._MeteredHighs.run

    def slow_run(self):
        time.sleep(0.001)
        return real_run(self)

    monkeypatch.setattr(lpmod._MeteredHighs, "run", slow_run)
    second, slow = modular_pattern(p, b, time_limit=60.0, workers=1, subtable_limit=0.5)
    assert np.array_equal(first, second)
    assert slow["subtable_work"] == st["subtable_work"]
    assert st["subtables_clock_guarded"] == slow["subtables_clock_guarded"] == 0



def test_the_meter_counts_the_interior_point_method_and_crossover():
    """A run of the interior point method (which only the local searches' large LPs use)
    counts ``IPM_ITERATION_WORK`` per iteration and one per crossover iteration; before,
    such a run of 3 s counted as little as a run of a few milliseconds."""
    n = 2_000
    rng = np.random.default_rng(3)
    h = new_highs()
    h.addVars(n, np.zeros(n), np.ones(n))
    h.changeColsCost(n, np.arange(n, dtype=np.int32), -rng.uniform(1.0, 2.0, n))
    h.addRows(1, np.array([-np.inf]), np.array([n / 3.0]), n, np.array([0], dtype=np.int32),
              np.arange(n, dtype=np.int32), rng.uniform(0.5, 1.5, n))
    h.setOptionValue("solver", "ipm")
    before = lp_work()
    h.run()
    info = h.getInfo()
    assert info.ipm_iteration_count > 0
    assert lp_work() - before == (RUN_WORK + (n + 1) // lpmod.SIZE_PER_UNIT + info.simplex_iteration_count
                                  + info.crossover_iteration_count
                                  + lpmod.IPM_ITERATION_WORK * info.ipm_iteration_count)
