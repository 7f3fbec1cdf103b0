"""``fast`` gives up when asked (``give_up_after``), and ``optimal`` then starts from the
primaries instead of the ``fast`` pattern and still returns a safe pattern."""

from __future__ import annotations

import pytest
from _suppress_gen import independent_audit, table_problem

from tablesafe.errors import SolverTimeLimit
from tablesafe.suppress.attacker import Bounds
from tablesafe.suppress.fast import fast_pattern
from tablesafe.suppress.optimal import _heuristic_start, optimal_pattern


@pytest.fixture(scope="module")
def problem():
    return table_problem(11, [[3, 2], [4]], units=70)


def _slow_lps(monkeypatch) -> None:
    """Make every LP run a millisecond slower (a slower machine for the clock, the
    same work for the work bounds)."""
    import time

    from tablesafe.audit import lp as lpmod

    real_run = lpmod._MeteredHighs.run

    def slow_run(self):
        time.sleep(0.001)
        return real_run(self)

    monkeypatch.setattr(lpmod._MeteredHighs, "run", slow_run)


def test_fast_gives_up_when_asked(problem):
    with pytest.raises(SolverTimeLimit, match="giving up") as by_time:
        fast_pattern(problem, give_up_after=0.0)
    assert by_time.value.by_clock
    done = fast_pattern(problem, give_up_after=600.0)
    assert done.withheld[problem.sensitive].all()


def test_fast_gives_up_after_its_work_at_the_same_target_in_every_run(problem, monkeypatch):
    """A bound on LP work ends the first pass at the same target whatever the speed of
    the machine (each LP run here made a millisecond slower), and says it was not the
    clock."""
    messages = []
    for slow in (False, True):
        if slow:
            _slow_lps(monkeypatch)
        with pytest.raises(SolverTimeLimit, match="its work ran out") as by_work:
            fast_pattern(problem, give_up_work=60, give_up_after=600.0)
        assert not by_work.value.by_clock
        messages.append(str(by_work.value))
    assert messages[0] == messages[1]  # the same count of certified cells
    certified = int(messages[0].split("fast: ")[1].split(" of ")[0])
    assert 0 < certified < int(problem.sensitive.sum())  # it gave up part of the way
    done = fast_pattern(problem, give_up_work=10**9)
    assert done.withheld[problem.sensitive].all()


def test_the_second_pass_of_a_start_stops_at_what_its_work_leaves(problem, monkeypatch):
    """The work bound of a ``fast`` start covers its second pass too: that pass stops at
    what the first left of it, at the same point however slow the machine (each LP made
    a millisecond slower), not at the clock's guard (on Castro's JJTABEL3 at 10 s the
    guard ended it at a different complement from run to run, unflagged)."""
    import numpy as np

    free = fast_pattern(problem)
    assert free.stats["second_pass"]["tried"] > 1
    bound = free.stats["first_pass_work"] + 1  # the first pass fits; the second has one unit
    patterns = []
    for slow in (False, True):
        if slow:
            _slow_lps(monkeypatch)
        pat = fast_pattern(problem, give_up_work=bound, give_up_after=600.0)
        second = pat.stats["second_pass"]
        assert second["budget_hit"] and not second["clock_stopped"]
        assert second["tried"] < free.stats["second_pass"]["tried"]
        patterns.append(pat.withheld)
    assert np.array_equal(patterns[0], patterns[1])


def test_a_start_that_gives_up_part_of_the_way_hands_on_its_pattern(problem, monkeypatch):
    """A ``fast`` pass that gives up says how far it got (``SolverTimeLimit.partial``: the
    primaries and the cells of its certificates, the same in every run under a work
    bound); ``optimal``'s start returns that pattern (``KEEP_PARTIAL_START``), or the
    primaries alone without it, and the dispatcher's certificates complete either into a
    pattern an independent audit passes."""
    import tablesafe.suppress.dispatch as dispatch
    import tablesafe.suppress.optimal as opt
    from tablesafe.suppress import suppress
    from tablesafe.suppress.work_clock import WorkClock

    monkeypatch.setattr(opt, "KEEP_PARTIAL_START", True)
    # only the work bound ends the start (its guard on the real clock, a few milliseconds
    # here, could end it before its first certificate on a loaded machine)
    monkeypatch.setattr(opt, "GUARD_SLACK", 1e6)
    sens = problem.sensitive
    partials = []
    for _ in range(2):
        with pytest.raises(SolverTimeLimit) as part_way:
            fast_pattern(problem, give_up_work=60, give_up_after=600.0, workers=1)
        partials.append(part_way.value.partial)
    partial = partials[0]
    assert partial is not None and (partial == partials[1]).all()
    assert partial[sens].all() and (partial & ~sens).any()  # its certificates withheld cells
    started, gave_up = _heuristic_start(problem, Bounds.of(problem), 60 / WorkClock().rate, WorkClock())
    assert gave_up and started[sens].all() and (started & ~sens).any()
    monkeypatch.setattr(opt, "KEEP_PARTIAL_START", False)
    started, gave_up = _heuristic_start(problem, Bounds.of(problem), 60 / WorkClock().rate, WorkClock())
    assert gave_up and (started == sens).all()
    monkeypatch.setattr(opt, "KEEP_PARTIAL_START", True)
    # through the dispatcher, on the problem without structure: the certificates complete it
    monkeypatch.setattr(opt, "_heuristic_start",
                        lambda p, b, s=None, clock=None, **k: _heuristic_start(p, b, 60 / WorkClock().rate,
                                                                               clock, **k))
    monkeypatch.setattr(dispatch, "LP_REPAIR_MAX_CELLS", 10)
    relations_only = problem.copy(model=None)
    pat = suppress(relations_only, "optimal", time_limit=20)
    assert pat.stats["start_check_skipped"] and pat.proof == "certificates"
    assert not independent_audit(relations_only, pat.withheld)


def test_optimal_falls_back_to_the_primaries_and_stays_safe(problem, monkeypatch):
    bounds = Bounds.of(problem)
    start, gave_up = _heuristic_start(problem, bounds, 0.0)
    assert gave_up and (start == problem.sensitive).all()
    import tablesafe.suppress.optimal as opt

    monkeypatch.setattr(opt, "_heuristic_start",
                        lambda p, b, s=None, clock=None, **k: _heuristic_start(p, b, 0.0, clock, **k))
    withheld, _ = optimal_pattern(problem, bounds, time_limit=20)
    assert withheld[problem.sensitive].all()
    assert not independent_audit(problem, withheld)


def test_optimal_returns_its_start_when_checking_it_exceeds_the_limit(problem, monkeypatch):
    """Checking the start pattern is stopped at the deadline; ``optimal`` then returns the
    start unproved (gap 1) and the dispatcher makes it safe."""
    import tablesafe.suppress.protection as prot
    from tablesafe.suppress import suppress

    real = prot.run_attacks

    def slow(*a, deadline=None, **k):
        if deadline is not None:
            raise prot.OutOfTime
        return real(*a, **k)

    monkeypatch.setattr(prot, "run_attacks", slow)
    withheld, stats = optimal_pattern(problem, Bounds.of(problem), time_limit=5)
    assert stats["time_limit_hit"] and stats["gap"] == 1.0
    assert withheld[problem.sensitive].all()
    pat = suppress(problem, "optimal", time_limit=5)
    assert not independent_audit(problem, pat.withheld)


def test_optimal_leaves_the_primaries_to_the_certificates_when_its_start_gives_up(problem, monkeypatch):
    """When the certificates complete ``optimal``'s pattern (tables above
    ``LP_REPAIR_MAX_CELLS``), or on a problem without table structure, and the ``fast``
    start gives up, the primaries are not checked by whole-table LPs: the search returns
    them at once, says so in the stats, and the certificates complete them (no repair
    starts from the primaries alone: ``REPAIR_AFTER_GIVING_UP``) and make the pattern
    safe. Called without such a completion the search checks them."""
    import tablesafe.suppress.dispatch as dispatch
    import tablesafe.suppress.optimal as opt
    from tablesafe.suppress import suppress

    monkeypatch.setattr(opt, "_heuristic_start",
                        lambda p, b, s=None, clock=None, **k: _heuristic_start(p, b, 0.0, clock, **k))
    checked = []
    real_check = opt.check

    def counting_check(*a, **k):
        checked.append(1)
        return real_check(*a, **k)

    monkeypatch.setattr(opt, "check", counting_check)
    withheld, stats = optimal_pattern(problem, Bounds.of(problem), time_limit=20, completed_by_caller=True)
    assert stats["start_check_skipped"] and stats["gap"] == 1.0 and not checked
    assert (withheld == problem.sensitive).all()
    _, stats = optimal_pattern(problem, Bounds.of(problem), time_limit=20)
    assert "start_check_skipped" not in stats and checked

    monkeypatch.setattr(dispatch, "LP_REPAIR_MAX_CELLS", 10)
    checked.clear()
    pat = suppress(problem, "optimal", time_limit=20)
    assert pat.stats["start_check_skipped"] and not checked
    assert pat.stats["audit"] == "certificates"
    assert not independent_audit(problem, pat.withheld)
    # without a table structure ``modular`` is the same search; its audit-guided repair
    # would start from the primaries alone, so the certificates complete them instead
    relations_only = problem.copy(model=None)
    monkeypatch.setattr(dispatch, "_audit_guided", lambda *a: True)
    pat = suppress(relations_only, "modular", time_limit=20)
    assert pat.stats["start_check_skipped"] and not checked
    assert pat.stats["completion_chosen"].startswith("local certificates")
    assert "repair_seconds" not in pat.stats and pat.proof == "certificates"
    from tablesafe.result import ProtectResult

    steps = ProtectResult(problem=relations_only, pattern=pat, audit=None).suppression_steps()
    assert steps["completion chosen"] == pat.stats["completion_chosen"]  # the report says why
    assert not independent_audit(relations_only, pat.withheld)
    # the same where the attacker-LP repair would take them (up to LP_REPAIR_MAX_CELLS)
    monkeypatch.setattr(dispatch, "LP_REPAIR_MAX_CELLS", 10**6)
    monkeypatch.setattr(dispatch, "_audit_guided", lambda *a: False)
    pat = suppress(relations_only, "optimal", time_limit=20)
    assert pat.stats["start_check_skipped"] and pat.stats["completion_chosen"] and not checked
    assert "repair_seconds" not in pat.stats and pat.proof == "certificates"
    assert not independent_audit(relations_only, pat.withheld)
    # with REPAIR_AFTER_GIVING_UP the audit-guided repair takes them (its audit proves it)
    monkeypatch.setattr(dispatch, "LP_REPAIR_MAX_CELLS", 10)
    monkeypatch.setattr(dispatch, "_audit_guided", lambda *a: True)
    import tablesafe.suppress.repairs as repairs

    monkeypatch.setattr(repairs, "REPAIR_AFTER_GIVING_UP", True)
    pat = suppress(relations_only, "modular", time_limit=20)
    assert pat.stats["start_check_skipped"] and "completion_chosen" not in pat.stats
    assert pat.stats["repair"] == "audit-guided"
    assert not independent_audit(relations_only, pat.withheld)


def test_a_fast_start_that_gives_up_estimates_a_hurried_pass(problem):
    """A pass that gives up part of the way says what a hurried pass over all its
    targets would take at its pace (``hurried_seconds``); one that gave up before any
    target says nothing."""
    import math

    with pytest.raises(SolverTimeLimit) as part_way:
        fast_pattern(problem, give_up_work=60, give_up_after=600.0)
    estimate = part_way.value.hurried_estimate
    assert estimate is not None and 0.0 < estimate < math.inf
    with pytest.raises(SolverTimeLimit) as at_once:
        fast_pattern(problem, give_up_after=0.0)
    assert at_once.value.hurried_estimate is None


def test_the_certificates_keep_their_estimated_time():
    """``fallback_reserve``: a share of the limit, or the margin times the search's
    estimate of the certificates' time when that is more."""
    from tablesafe.suppress.repairs import (
        FALLBACK_ESTIMATE_MARGIN,
        FALLBACK_SHARE,
        fallback_reserve,
    )

    assert fallback_reserve(10.0, {}) == pytest.approx(FALLBACK_SHARE * 10.0)
    assert fallback_reserve(10.0, {"start_hurried_estimate": 0.1}) == pytest.approx(FALLBACK_SHARE * 10.0)
    assert fallback_reserve(10.0, {"start_hurried_estimate": 3.0}) == pytest.approx(FALLBACK_ESTIMATE_MARGIN * 3.0)


def _start_gives_up(monkeypatch, estimate: float) -> list[float]:
    """Make ``optimal``'s heuristic start give up at once, reporting ``estimate`` seconds
    for the hurried certificates; the list returned holds the estimate (set its item to
    change it for later runs)."""
    import tablesafe.suppress.optimal as opt

    said = [estimate]

    def gives_up(p, b, s=None, clock=None, **k):
        out = _heuristic_start(p, b, 0.0, clock, **k)
        clock.hurried_estimate = said[0]
        return out

    monkeypatch.setattr(opt, "_heuristic_start", gives_up)
    return said


def test_no_repair_when_the_certificates_need_all_the_time_left(problem, monkeypatch):
    """A search whose fast start gave up with an estimate beyond the limit hands the
    primaries straight to the certificates (Castro's NINENEW and TWO5IN6 with ``modular``
    at 10 s: the audit-guided repair ran to its deadline, then the certificates took
    5-7 s more, to 13-15 s): the stats say why, the certificates prove the pattern and an
    independent audit passes it."""
    import tablesafe.suppress.dispatch as dispatch
    import tablesafe.suppress.repairs as repairs
    from tablesafe.suppress import suppress

    flat = problem.copy(model=None)  # modular's search is then optimal's fast start
    estimate = _start_gives_up(monkeypatch, 1e6)
    monkeypatch.setattr(dispatch, "_audit_guided", lambda *a: True)
    monkeypatch.setattr(repairs, "REPAIR_AFTER_GIVING_UP", True)  # else the certificates at once
    pat = suppress(flat, "modular", time_limit=20)
    assert pat.stats["start_hurried_estimate"] == 1e6
    assert pat.stats["repair_skipped"].startswith("no time for a repair")
    assert "repair_seconds" not in pat.stats and "repair_timed_out" not in pat.stats
    assert pat.proof == "certificates"
    assert not independent_audit(flat, pat.withheld)
    # an estimate that leaves the repair its time changes nothing: it runs
    estimate[0] = 1e-3
    repaired = suppress(flat, "modular", time_limit=20)
    assert "repair_skipped" not in repaired.stats and repaired.stats["repair"] == "audit-guided"
    assert not independent_audit(flat, repaired.withheld)


def test_the_certificates_hurry_from_their_start_when_the_start_estimates_they_need_it(problem, monkeypatch):
    """A search whose fast start gave up with an estimate of the hurried certificates
    that, with its margin, is more than ``START_HURRY_SHARE`` of their limit hands the
    pattern to certificates that hurry from their first target (Castro's NINE12, NINENEW
    and TWO5IN6 with ``modular`` at 10 s: unhurried at first they ran 11-13 s); the stats
    say so, the run lists it among the steps the clock decided, the certificates prove the
    pattern and an independent audit passes it. With a small estimate they do not."""
    from tablesafe.suppress import suppress
    from tablesafe.suppress.repairs import (
        FALLBACK_ESTIMATE_MARGIN,
        START_HURRY_SHARE,
        start_hurry_reason,
    )

    flat = problem.copy(model=None)  # modular's search is then optimal's fast start
    estimate = _start_gives_up(monkeypatch, 1e6)
    pat = suppress(flat, "modular", time_limit=20)
    assert pat.stats["completion_chosen"].startswith("local certificates")
    assert pat.stats["completion_hurried"].startswith("the certificates hurried from their start")
    assert pat.stats["hurried_after_targets"] == 0
    assert any("hurried from its start" in step for step in pat.stats["clock_decided"])
    assert pat.proof == "certificates"
    assert not independent_audit(flat, pat.withheld)
    # targets settled already for the most part keep the search unhurried, and the
    # stats name no hurry then
    import tablesafe.suppress.dispatch as dispatch

    with monkeypatch.context() as m:
        m.setattr(dispatch, "_mostly_settled", lambda *a: True)
        settled = suppress(flat, "modular", time_limit=20)
    assert "completion_hurried" not in settled.stats and settled.stats["hurried_after_targets"] != 0
    estimate[0] = 1e-3
    calm = suppress(flat, "modular", time_limit=20)
    assert "completion_hurried" not in calm.stats and calm.stats["hurried_after_targets"] != 0
    assert calm.proof == "certificates" and not independent_audit(flat, calm.withheld)
    # the rule itself: the margin times the estimate against the share of the limit
    limit = 8.0
    edge = START_HURRY_SHARE * limit / FALLBACK_ESTIMATE_MARGIN
    assert start_hurry_reason({"start_hurried_estimate": 1.01 * edge}, limit)
    assert not start_hurry_reason({"start_hurried_estimate": 0.99 * edge}, limit)
    assert not start_hurry_reason({}, limit)
