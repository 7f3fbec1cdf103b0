"""The repair guided by the audit ends with a pattern the audit and an independent LP
check pass, from the primaries alone and from a pattern with some complements."""

from __future__ import annotations

import pytest
from _suppress_gen import independent_audit, table_problem

from tablesafe.audit import audit
from tablesafe.suppress.attacker import Bounds
from tablesafe.suppress.audit_repair import audit_failures, audit_repair
from tablesafe.suppress.protection import check, failing


@pytest.mark.parametrize("seed,shape,units", [(11, [[3, 2], [4]], 70), (12, [[2, 2], [2], [3]], 120)])
@pytest.mark.parametrize("singleton", [False, True])
def test_audit_repair_protects_every_cell(seed, shape, units, singleton):
    p = table_problem(seed, shape, units=units)
    b = Bounds.of(p, singleton=singleton)
    assert audit_failures(p, p.sensitive.copy(), b)
    w, rounds = audit_repair(p, b, p.sensitive.copy())
    assert rounds >= 1
    assert audit(p, w, insider=singleton).ok
    assert not failing(b, check(p, b, w))
    assert not independent_audit(p, w, singleton=False)
    assert w[p.sensitive].all()
    assert not audit_failures(p, w, b)


def test_modular_on_a_large_three_way_table_is_repaired_by_the_audit(monkeypatch):
    """Above the attacker-LP repair's size, modular's pattern of a three-way table without
    singleton protection is repaired guided by the audit (here the size limit is lowered
    to reach that path); with singleton protection it keeps the certificates."""
    import tablesafe.suppress.dispatch as dispatch
    from tablesafe.suppress import suppress

    p = table_problem(12, [[2, 2], [2], [3]], units=120)
    assert len(p.model.dims) == 3
    monkeypatch.setattr(dispatch, "LP_REPAIR_MAX_CELLS", 10)
    pat = suppress(p, "modular", time_limit=60, singleton=False)
    assert pat.stats["repair"] == "audit-guided"
    assert pat.stats["audit"] == "lp"
    assert not independent_audit(p, pat.withheld, singleton=False)
    assert audit(p, pat.withheld, insider=False).ok
    assert suppress(p, "modular", time_limit=60).stats["audit"] == "certificates"


def test_audit_repair_ends_when_the_capacity_inequalities_do_not_help(monkeypatch):
    """An attack that keeps failing after its capacity inequalities were met (here the
    revision withholds nothing at all, the worst case) gets its own protection LP after
    ``AUDIT_STUBBORN_FAILS`` rounds, as in the plain repair; before, the repair guided by the
    audit swapped complements round after round and gave up with an error (measured on
    modular's outsider pattern of the generated 13,851-cell three-way table)."""
    import tablesafe.suppress.audit_repair as ar

    p = table_problem(11, [[3, 2], [4]], units=70)
    b = Bounds.of(p, singleton=False)
    monkeypatch.setattr(ar, "revise", lambda problem, bounds, choice, w, *args: w)
    w, _ = audit_repair(p, b, p.sensitive.copy(), max_rounds=10)
    assert audit(p, w, insider=False).ok
    assert not independent_audit(p, w, singleton=False)
    assert w[p.sensitive].all()


def test_subtable_certificates_seed_the_audits_of_a_guided_repair(monkeypatch):
    """On the audit-guided route (a two-way table, singleton protection, the size limit of
    the attacker-LP repair lowered to reach it) the subtables' certificates seed the
    first audit and each audit's tables the next; the pattern is the one found without
    seeds, and it passes the audit and the independent LP check."""
    import importlib

    import tablesafe.suppress.audit_repair as ar
    import tablesafe.suppress.dispatch as dispatch
    from tablesafe.suppress import suppress

    package = importlib.import_module("tablesafe.audit")
    p = table_problem(11, [[3, 2], [4]], units=70)
    assert len(p.model.dims) == 2
    monkeypatch.setattr(dispatch, "MODULAR_LP_REPAIR_MAX_CELLS", 10)
    seen = []
    real_audit = package.audit

    def spy(*args, **kwargs):
        res = real_audit(*args, **kwargs)
        seen.append((kwargs.get("seeds") is not None, res.stats.get("seeds", 0)))
        return res

    monkeypatch.setattr(package, "audit", spy)
    pat = suppress(p, "modular", time_limit=60)
    assert pat.stats["repair"] == "audit-guided"
    assert seen and seen[0][0] and seen[0][1] > 0
    assert all(given for given, _ in seen)
    monkeypatch.setattr(package, "audit", real_audit)
    assert not independent_audit(p, pat.withheld, singleton=False)
    assert audit(p, pat.withheld).ok
    # without any seeds: the same pattern
    real_failures = ar._failures
    monkeypatch.setattr(ar, "_failures", lambda problem, w, bounds, recheck=None, seeds=None, deadline=None, log=None:
                        real_failures(problem, w, bounds, recheck, None, deadline, log))
    assert (suppress(p, "modular", time_limit=60).withheld == pat.withheld).all()


@pytest.mark.parametrize("singleton", [False, True])
def test_audit_repair_in_halves_is_the_same_with_one_worker_or_two(monkeypatch, singleton):
    """The attacks an audit names are attacked in two halves of keys, each on models of
    its own: side by side (two workers) or one after the other (one), the same pattern;
    and it passes the audit and the independent LP check."""
    import tablesafe.suppress.attack_parts as attack_parts
    import tablesafe.suppress.audit_repair as ar

    p = table_problem(12, [[2, 2], [2], [3]], units=120)
    b = Bounds.of(p, singleton=singleton)
    monkeypatch.setattr(ar, "HALVES_FROM", 2)
    halves = []
    real = attack_parts.key_halves
    monkeypatch.setattr(ar, "key_halves", lambda keys, least: halves.append(len(keys)) or real(keys, least))
    runs = []
    for workers in (1, 2):
        monkeypatch.setattr(attack_parts, "worker_count", lambda most=2, n=workers: n)
        runs.append(audit_repair(p, b, p.sensitive.copy())[0])
    assert max(halves) >= 2
    assert (runs[0] == runs[1]).all()
    assert audit(p, runs[0], insider=singleton).ok
    assert not independent_audit(p, runs[0], singleton=False)


def test_a_two_way_pattern_in_large_blocks_goes_to_the_audit_guided_repair(monkeypatch):
    """``modular``'s two-way pattern whose withheld cells form blocks too large for the
    attacker-LP repair (``repair_estimate.TWO_WAY_GUIDED_WORK``, lowered here) is repaired
    by the audit instead, and says so; within the bound, or with capacity bounds (which
    the audit-guided repair does not know), the attacker-LP repair stays."""
    import tablesafe.suppress.repair_estimate as estimate
    from tablesafe.suppress import suppress

    p = table_problem(11, [[3, 2], [4]], units=70)
    kept = suppress(p, "modular", time_limit=60)
    assert "repair_chosen" not in kept.stats and kept.stats.get("repair") != "audit-guided"
    monkeypatch.setattr(estimate, "TWO_WAY_GUIDED_WORK", 0.0)
    pat = suppress(p, "modular", time_limit=60)
    assert pat.stats["repair"] == "audit-guided"
    assert pat.stats["repair_chosen"].startswith("audit-guided repair")
    assert pat.proof == "audit" and audit(p, pat.withheld, insider=True).ok
    assert not independent_audit(p, pat.withheld)
    capped = suppress(p, "modular", time_limit=60, capacity=True)
    assert "repair_chosen" not in capped.stats and capped.stats.get("repair") != "audit-guided"
