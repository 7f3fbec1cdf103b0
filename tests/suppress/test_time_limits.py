"""Time limits that hold (issue 12): a repair still running near the end of the limit
stops, and local certificates complete and prove the pattern as far as it got."""

from __future__ import annotations

import time

import pytest
from _suppress_gen import independent_audit, table_problem

import tablesafe.suppress.dispatch as dispatch
import tablesafe.suppress.repairs as repairs
from tablesafe.suppress import suppress
from tablesafe.suppress.attacker import BlockLP, Bounds
from tablesafe.suppress.audit_repair import audit_repair_proved
from tablesafe.suppress.protection import OutOfTime, repair


def test_repair_past_its_deadline_stops_with_the_pattern_so_far():
    p = table_problem(21, [[3, 2], [4]], units=80)
    b = Bounds.of(p)
    with pytest.raises(OutOfTime) as out:
        repair(p, b, p.sensitive.copy(), deadline=time.monotonic() - 1.0)
    assert out.value.withheld is not None
    assert (out.value.withheld >= p.sensitive).all()
    # without a deadline the same repair ends (and protects every cell)
    w, _, _ = repair(p, b, p.sensitive.copy())
    assert independent_audit(p, w) == []


def test_audit_guided_repair_does_not_start_a_round_past_its_deadline():
    p = table_problem(22, [[2, 2], [2], [3]], units=120)
    b = Bounds.of(p, singleton=False)
    with pytest.raises(OutOfTime) as out:
        audit_repair_proved(p, b, p.sensitive.copy(), deadline=time.monotonic() - 1.0)
    assert out.value.withheld is not None


@pytest.mark.parametrize("share,finishes", [(0.5, True), (1.0, False)])
def test_a_later_audit_round_is_expected_to_take_a_share_of_the_first(monkeypatch, share, finishes):
    """Each audit of the audit-guided repair is made to seem to take 10 s: with a
    deadline 16 s away the second round starts when it is expected to take
    ``RECHECK_SHARE`` (0.5) of the first audit's time, and the repair ends with a pattern
    the independent audit passes; expected to take as long as the first, it is not
    started."""
    import tablesafe.suppress.audit_repair as audit_repair

    p = table_problem(22, [[2, 2], [2], [3]], units=120)
    b = Bounds.of(p, singleton=False)
    seemed = [0.0]
    real_failures = audit_repair._failures

    def slow_failures(*args, **kwargs):
        seemed[0] += 10.0
        return real_failures(*args, **kwargs)

    class Clock:
        @staticmethod
        def monotonic():
            return time.monotonic() + seemed[0]

    monkeypatch.setattr(audit_repair, "_failures", slow_failures)
    monkeypatch.setattr(audit_repair, "time", Clock)
    monkeypatch.setattr(audit_repair, "RECHECK_SHARE", share)
    deadline = time.monotonic() + 16.0
    if finishes:
        w, rounds, _ = audit_repair_proved(p, b, p.sensitive.copy(), deadline=deadline)
        assert rounds >= 1 and independent_audit(p, w, singleton=False) == []
    else:
        with pytest.raises(OutOfTime):
            audit_repair_proved(p, b, p.sensitive.copy(), deadline=deadline)


@pytest.mark.parametrize("method", ["optimal", "modular"])
def test_a_repair_out_of_time_falls_back_to_certificates(monkeypatch, method):
    """The repair is made to run out of time at once: the certificates complete the
    search's pattern, prove it, and the stats say what happened."""
    p = table_problem(23, [[3, 2], [3]], units=90)

    def out_of_time(problem, bounds, withheld, **kw):
        if kw.get("deadline", float("inf")) == float("inf"):
            return real(problem, bounds, withheld, **kw)
        raise OutOfTime(withheld | problem.sensitive)

    real = dispatch.repair
    monkeypatch.setattr(dispatch, "repair", out_of_time)
    monkeypatch.setattr(repairs, "repair", out_of_time)
    pat = suppress(p, method, time_limit=60)
    assert pat.stats["repair_timed_out"] == "attacker-LP repair"
    assert pat.proof == "certificates" and pat.stats["audit"] == "certificates"
    assert independent_audit(p, pat.withheld) == []


def test_the_run_ends_within_its_limit(monkeypatch):
    """A repair slowed down artificially: the run still ends within the limit plus 10 %
    (the final audit aside), with a pattern proved by certificates."""
    import tablesafe.suppress.attack_runs as attack_runs
    import tablesafe.suppress.protection as protection

    p = table_problem(24, [[3, 3], [4]], units=150)
    real = protection.run_attacks

    def slow(*a, **kw):
        time.sleep(0.6)
        return real(*a, **kw)

    monkeypatch.setattr(protection, "run_attacks", slow)
    monkeypatch.setattr(attack_runs, "run_attacks", slow)  # its calls for insiders too
    limit = 4.0
    pat = suppress(p, "optimal", time_limit=limit)
    assert pat.stats["seconds_before_audit"] <= 1.1 * limit
    assert pat.stats["repair_timed_out"] and pat.stats["audit"] == "certificates"
    assert independent_audit(p, pat.withheld) == []


def test_audit_guided_repair_stops_between_attacker_lps_at_its_deadline(monkeypatch):
    """The deadline is checked before each attacker LP of a repair step, not only between
    steps: slowed to 0.3 s per LP, the repair stops within one LP of its deadline with
    the pattern so far (an earlier version ran every attack of the step first)."""
    p = table_problem(22, [[2, 2], [2], [3]], units=120)
    b = Bounds.of(p, singleton=False)
    real = BlockLP.attack
    calls = []

    def slow(self, *a, **kw):
        calls.append(1)
        time.sleep(0.3)
        return real(self, *a, **kw)

    monkeypatch.setattr(BlockLP, "attack", slow)
    t0 = time.monotonic()
    with pytest.raises(OutOfTime) as out:
        audit_repair_proved(p, b, p.sensitive.copy(), deadline=t0 + 0.5)
    assert out.value.withheld is not None
    assert time.monotonic() - t0 < 0.5 + 0.3 + 0.4
    # the step had more attacks than the deadline allowed: the LPs left were not solved
    assert 1 <= len(calls) <= 3


def test_the_audit_of_a_repair_stops_at_its_deadline(monkeypatch):
    """The audit that opens each round of the audit-guided repair starts no LP past the
    repair's deadline (found on the generated 61,215-cell two-way table: under a 60 s
    limit its first audit started with 24 s left and took 58 s): the repair stops with
    the pattern so far, and the audit never finished."""
    import sys

    audit_module = sys.modules["tablesafe.audit.audit"]  # the package's ``audit`` is the function
    p = table_problem(22, [[2, 2], [2], [3]], units=120)
    b = Bounds.of(p, singleton=False)
    real = audit_module.solve_intervals
    finished = []

    def late(*a, **kw):
        time.sleep(0.3)  # the deadline passes before the audit's first LP
        res = real(*a, **kw)
        finished.append(1)
        return res

    start, _, _ = repair(p, b, p.sensitive.copy())  # a pattern whose audit needs LPs
    monkeypatch.setattr(audit_module, "solve_intervals", late)
    with pytest.raises(OutOfTime) as out:
        audit_repair_proved(p, b, start, deadline=time.monotonic() + 0.1)
    assert out.value.withheld is not None and (out.value.withheld >= start).all()
    assert not finished
    monkeypatch.undo()
    audit_repair_proved(p, b, start, deadline=time.monotonic() + 600.0)  # and with time it passes


def test_an_audit_without_a_deadline_is_the_same_and_one_past_it_stops():
    """``audit(..., deadline=...)``: no LP starts past it (:class:`LPOutOfTime`); the
    deadline is lifted afterwards, and an audit without one gives the same verdicts."""
    from tablesafe.audit import audit
    from tablesafe.audit.lp import LPOutOfTime

    p = table_problem(21, [[3, 2], [4]], units=80)
    w, _, _ = repair(p, Bounds.of(p, singleton=False), p.sensitive.copy())
    with pytest.raises(LPOutOfTime):
        audit(p, w, insider=False, deadline=time.monotonic() - 1.0)
    a = audit(p, w, insider=False)
    c = audit(p, w, insider=False, deadline=time.monotonic() + 600.0)
    assert list(a.verdict) == list(c.verdict) and a.stats["lp_solves"] > 0


def test_a_search_completed_by_certificates_leaves_them_time_per_sensitive_cell(monkeypatch):
    """``modular``'s and ``optimal``'s own search gets ``SEARCH_SHARE`` of the limit, but
    when local certificates complete its pattern, at most what leaves them
    ``COMPLETION_SECONDS_PER_TARGET`` per sensitive cell after the search's guard on the
    clock (a four-way table of 7,130 sensitive cells at 10 s ran 11.3 s: the search's
    half and its guard, then 5 s of certificates and their check); never less than
    ``SEARCH_SHARE_FLOOR`` of the limit. The route chosen and the search's limit are what
    ``suppress`` passes on."""
    from tablesafe.suppress.work_clock import GUARD_SLACK

    p = table_problem(33, [[4], [5], [6]], units=300)
    n_sens = int(p.sensitive.sum())
    share = dispatch.SEARCH_SHARE
    assert dispatch._search_limit(p, 10.0, "lp") == share * 10.0
    assert dispatch._search_limit(p, 10.0, "certificates") == share * 10.0  # few targets: no cut
    monkeypatch.setattr(dispatch, "COMPLETION_SECONDS_PER_TARGET", 4.0 / n_sens)  # 4 s after the search
    assert dispatch._search_limit(p, 10.0, "certificates") == pytest.approx(6.0 / GUARD_SLACK)
    assert dispatch._search_limit(p, 10.0, "guided") == share * 10.0
    monkeypatch.setattr(dispatch, "COMPLETION_SECONDS_PER_TARGET", 20.0 / n_sens)  # more than the limit
    assert dispatch._search_limit(p, 10.0, "certificates") == dispatch.SEARCH_SHARE_FLOOR * 10.0
    seen: list[float] = []
    import tablesafe.suppress.modular as modular

    real = modular.modular_pattern

    def spy(problem, bounds, **kw):
        seen.append(kw["time_limit"])
        return real(problem, bounds, **kw)

    monkeypatch.setattr(modular, "modular_pattern", spy)
    monkeypatch.setattr(dispatch, "LP_REPAIR_MAX_CELLS", 10)  # every pattern completed by certificates
    pat = suppress(p, "modular", time_limit=10.0)
    assert seen == [dispatch._search_limit(p, 10.0, "certificates")]
    assert pat.proof in ("certificates", "audit")
    assert independent_audit(p, pat.withheld) == []
