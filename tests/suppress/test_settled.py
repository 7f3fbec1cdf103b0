"""A repair out of time hands the targets it proved to the completion (issue 12: the
value cliffs under short limits): their attack tables are their certificates, and the
local certificates search only for the others."""

from __future__ import annotations

import numpy as np
import pytest
from _suppress_gen import independent_audit, table_problem

import tablesafe.suppress.dispatch as dispatch
import tablesafe.suppress.protection as protection
import tablesafe.suppress.repairs as repairs
from tablesafe.audit import check_certificates
from tablesafe.suppress import suppress
from tablesafe.suppress.attacker import Bounds
from tablesafe.suppress.local.certificates import certificate_frame
from tablesafe.suppress.protection import OutOfTime, repair
from tablesafe.suppress.settled import settled_targets


def _needing(p, b) -> np.ndarray:
    """Sensitive cells with a positive level (the ones that get certificates)."""
    return np.flatnonzero(p.sensitive & ((b.req_up > 0) | (b.req_dn > 0)))


@pytest.mark.parametrize("seed,shape", [(31, [[3, 2], [3]]), (32, [[2, 2], [2], [2]])])
def test_a_finished_repairs_attacks_settle_every_target(seed, shape):
    """After a repair that ends, every target's attacks passed: all are settled, and the
    certificates built from their tables pass the certificate check with the single
    respondents."""
    p = table_problem(seed, shape, units=90)
    b = Bounds.of(p)
    w, atts, _ = repair(p, b, p.sensitive.copy())
    got = settled_targets(p, b, atts, w)
    assert got is not None
    assert set(got.targets.tolist()) == set(_needing(p, b).tolist())
    frame = certificate_frame(p, got.certs, got.labels)
    assert check_certificates(p, w, frame, insiders=True) == []
    assert w[got.cells].all()


def test_a_target_whose_table_moves_a_published_cell_is_not_settled():
    """Publishing a complement that one target's tables move takes that target out (its
    tables no longer stand); the targets whose tables do not move it stay settled."""
    p = table_problem(31, [[3, 2], [3]], units=90)
    b = Bounds.of(p)
    w, atts, _ = repair(p, b, p.sensitive.copy())
    moved_by = {}
    for (k, _, _), a in atts.items():
        for c in a.cells[np.abs(a.dev) > 0].tolist():
            if not p.sensitive[c]:
                moved_by.setdefault(c, set()).add(k)
    cell = max(moved_by, key=lambda c: len(moved_by[c]))
    fewer = w.copy()
    fewer[cell] = False
    got = settled_targets(p, b, atts, fewer)
    settled = set() if got is None else set(got.targets.tolist())
    assert not settled & moved_by[cell]
    assert settled == set(_needing(p, b).tolist()) - moved_by[cell]


def _repair_out_of_time_after_first_check(monkeypatch):
    """Make every repair with a deadline run out of time right after its first check."""
    real_revise = protection.revise

    def out_of_time(problem, bounds, choice, w, atts, bad, cand, deadline):
        if deadline != float("inf"):
            raise OutOfTime
        return real_revise(problem, bounds, choice, w, atts, bad, cand, deadline)

    monkeypatch.setattr(protection, "revise", out_of_time)


def test_a_repair_out_of_time_carries_its_first_checks_attacks(monkeypatch):
    p = table_problem(33, [[3, 2], [3]], units=90)
    b = Bounds.of(p)
    _repair_out_of_time_after_first_check(monkeypatch)
    with pytest.raises(OutOfTime) as out:
        repair(p, b, p.sensitive.copy(), deadline=1e18)
    atts = out.value.attacks
    assert atts, "the first check's attacks are carried"
    assert any(not a.ok for a in atts.values()) and any(a.ok for a in atts.values())
    assert {k for k, _, _ in atts} == set(np.flatnonzero(p.sensitive).tolist())


@pytest.mark.parametrize("method", ["optimal", "modular"])
def test_the_completion_searches_only_for_the_targets_left(monkeypatch, method):
    """The repair runs out of time after its first check: the completion takes the
    targets that check proved (``settled_targets``), searches only for the rest, and the
    pattern is proved by certificates and passes an independent audit; without the
    settled targets it searches for all of them."""
    p = table_problem(34, [[3, 3], [4]], units=150)
    b = Bounds.of(p)
    _repair_out_of_time_after_first_check(monkeypatch)
    monkeypatch.setattr(dispatch, "_lp_repair_max", lambda method, problem: 10**9)  # the attacker-LP repair
    _search_short_of_two_complements(monkeypatch, p, b)
    pat = suppress(p, method, time_limit=600)
    st = pat.stats
    assert st["repair_timed_out"] == "attacker-LP repair"
    assert st["settled_targets"] > 0
    assert st["settled_targets"] + st["certificate_repair_targets"] == len(_needing(p, b))
    assert pat.proof == "certificates"
    assert independent_audit(p, pat.withheld) == []

    monkeypatch.setattr(repairs, "SETTLED_TARGETS", False)
    plain = suppress(p, method, time_limit=600)
    assert "settled_targets" not in plain.stats
    assert plain.stats["certificate_repair_targets"] == len(_needing(p, b))
    assert independent_audit(p, plain.withheld) == []


def _search_short_of_two_complements(monkeypatch, p, b):
    """The search hands on a safe pattern with two complements published again, so that
    the repair finds attacks that pass and attacks that fail."""
    import tablesafe.suppress.modular as modular
    import tablesafe.suppress.optimal as optimal

    safe, _, _ = repair(p, b, p.sensitive.copy())
    short = safe.copy()
    short[np.flatnonzero(safe & ~p.sensitive)[:2]] = False
    search = lambda problem, bounds, **kw: (short.copy(), {})
    monkeypatch.setattr(modular, "modular_pattern", search)
    monkeypatch.setattr(optimal, "optimal_pattern", search)
    return short


def _guided_repair_out_of_time_after_first_audit(monkeypatch):
    """The audit-guided repair (chosen whatever the size) runs out of time after its
    first audit, before any complement is chosen."""
    import tablesafe.suppress.audit_repair as audit_repair

    def out_of_time(problem, bounds, choice, w, *args):
        raise OutOfTime

    monkeypatch.setattr(audit_repair, "revise", out_of_time)
    monkeypatch.setattr(dispatch, "_lp_repair_max", lambda method, problem: 0)


def test_an_audit_guided_repair_out_of_time_carries_what_its_audit_proved(monkeypatch):
    from tablesafe.suppress.audit_repair import audit_failures, audit_repair_proved
    from tablesafe.suppress.proof import with_true_offsets

    p = with_true_offsets(table_problem(35, [[3, 3], [4]], units=150))
    b = Bounds.of(p)
    short = _search_short_of_two_complements(monkeypatch, p, b)
    _guided_repair_out_of_time_after_first_audit(monkeypatch)
    named = {k for k, _, _ in audit_failures(p, short | p.sensitive, b)}
    assert named, "the pattern handed on must fail somewhere"
    with pytest.raises(OutOfTime) as out:
        audit_repair_proved(p, b, short, deadline=1e18)
    audited = out.value.audited
    assert audited is not None
    assert np.array_equal(audited.pattern, short | p.sensitive)
    assert set(np.flatnonzero(audited.named).tolist()) == named
    assert audited.tables, "the audit's feasible tables seed the next audit"


def test_targets_the_last_audit_proved_are_left_out_and_audited_again(monkeypatch):
    """The completion searches only for the targets the audit named; the pattern is then
    proved by an audit of what changed, and passes an independent audit."""
    p = table_problem(35, [[3, 3], [4]], units=150)
    b = Bounds.of(p)
    _search_short_of_two_complements(monkeypatch, p, b)
    _guided_repair_out_of_time_after_first_audit(monkeypatch)
    pat = suppress(p, "modular", time_limit=600)
    st = pat.stats
    assert st["repair_timed_out"] == "audit-guided repair"
    assert st["settled_by_audit"] > 0
    assert 0 < st["certificate_repair_targets"] < len(_needing(p, b))
    assert st["completion_audit_failures"] == 0
    assert pat.proof == "audit" and pat.audit is not None
    assert independent_audit(p, pat.withheld) == []
    from tablesafe.result import ProtectResult

    steps = ProtectResult(problem=p, pattern=pat, audit=None).suppression_steps()
    assert steps["repair stopped"].startswith("audit-guided repair out of time")
    said = steps["certificates completing the pattern"]  # the report says what was proved already
    assert f"{st['settled_by_audit']:,} sensitive cell" in said and "proved by the repair's last audit" in said
    assert f"searched for the other {st['certificate_repair_targets']:,}" in said


def test_a_completion_its_audit_does_not_pass_is_repaired(monkeypatch):
    """Should the audit after the completion name a failing attack, the attacker-LP
    repair without a deadline protects the pattern (fail closed)."""
    p = table_problem(35, [[3, 3], [4]], units=150)
    b = Bounds.of(p)
    _search_short_of_two_complements(monkeypatch, p, b)
    _guided_repair_out_of_time_after_first_audit(monkeypatch)
    monkeypatch.setattr(dispatch, "audit_after_completion", lambda *a, **k: None)
    pat = suppress(p, "modular", time_limit=600)
    assert "repair_rounds" in pat.stats
    assert pat.proof == "audit"
    assert independent_audit(p, pat.withheld) == []


def test_a_repair_out_of_time_in_its_first_check_carries_the_known_tables():
    """Out of time before its first check ends, the attacker-LP repair hands on the
    tables it was given as known (the subtables' whole-table certificates)."""
    import time

    p = table_problem(31, [[3, 2], [3]], units=90)
    b = Bounds.of(p)
    w, atts, _ = repair(p, b, p.sensitive.copy())
    known = {key: a for key, a in atts.items() if a.ok}
    with pytest.raises(OutOfTime) as out:
        repair(p, b, w, deadline=time.monotonic() - 1.0, known=known)
    assert out.value.attacks == known
    got = settled_targets(p, b, out.value.attacks, out.value.withheld)
    assert got is not None and len(got.targets) == len(_needing(p, b))


def test_targets_rest_on_the_audit_only_when_its_recheck_fits_the_time_left():
    """The audit after the completion is taken to last ``RECHECK_SHARE`` of the last
    audit's seconds: when that does not fit in what the limit leaves, the earlier audit
    settles nothing (the certificates prove every target, as before)."""
    from tablesafe.suppress.audit_repair import RECHECK_SHARE
    from tablesafe.suppress.repairs import audit_fits
    from tablesafe.suppress.settled import Audited

    audited = Audited(pattern=np.zeros(4, dtype=bool), named=np.zeros(4, dtype=bool), tables={}, seconds=20.0)
    stats: dict = {}
    assert audit_fits(audited, RECHECK_SHARE * 20.0 + 0.5, stats) is audited and not stats
    assert audit_fits(audited, RECHECK_SHARE * 20.0 - 0.5, stats) is None
    assert "would not fit" in stats["settled_audit_left_out"]


def test_the_parts_of_a_check_hand_on_what_they_settled_before_their_deadline():
    """One part of a check ends, the other runs out of time: the exception carries the
    attacks of both (with one worker or two)."""
    from tablesafe.suppress.attack_parts import in_parts

    def attack(part):
        if part[0] == 1:
            raise OutOfTime(attacks={(1, 1, -1): "late but settled"})
        return {(0, 1, -1): "first"}

    with pytest.raises(OutOfTime) as out:
        in_parts(attack, [[0], [1]], OutOfTime)
    assert out.value.attacks == {(0, 1, -1): "first", (1, 1, -1): "late but settled"}


def test_a_check_out_of_time_hands_on_the_attacks_it_settled(monkeypatch):
    """A clock that moves one tick per look: a check whose deadline comes half-way hands
    on some of the attacks, each the same as the check without a deadline finds."""
    import tablesafe.suppress.attack_runs as attack_runs
    import tablesafe.suppress.neighbourhood_attacks as neighbourhood_attacks

    p = table_problem(36, [[3, 3], [4]], units=150)
    b = Bounds.of(p)
    w, _, _ = repair(p, b, p.sensitive.copy())
    whole = protection.check(p, b, w)

    class Ticks:
        now = 0.0

        @classmethod
        def monotonic(cls) -> float:
            cls.now += 1.0
            return cls.now

    monkeypatch.setattr(attack_runs, "time", Ticks)
    monkeypatch.setattr(neighbourhood_attacks, "time", Ticks)
    protection.check(p, b, w, deadline=1e18)
    looks = Ticks.now
    Ticks.now = 0.0
    with pytest.raises(OutOfTime) as out:
        protection.check(p, b, w, deadline=looks / 2)
    got = out.value.attacks
    assert got and len(got) < len(whole)
    for key, a in got.items():
        assert key in whole and a.ok == whole[key].ok
