"""A pattern records how it was proved, and the pipeline audits it once (issue 13: "a
Pattern that records how it was proved ... so the final audit runs once")."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from _suppress_gen import table_problem

import tablesafe
import tablesafe.stages as stages
from tablesafe.audit import AuditResult
from tablesafe.suppress import suppress

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def test_suppress_records_the_audit_it_passed():
    p = table_problem(11, [[3, 2], [4]], units=70)
    pat = suppress(p, "optimal", time_limit=60)
    assert pat.proof == "audit" and pat.stats["audit"] == "lp"
    assert isinstance(pat.audit, AuditResult) and pat.audit.ok
    assert np.array_equal(pat.audit.withheld, pat.withheld)
    unaudited = suppress(p, "optimal", time_limit=60, audit=False)
    assert unaudited.proof == "" and unaudited.audit is None
    assert np.array_equal(unaudited.withheld, pat.withheld)


def test_guided_repair_passes_its_audit_on_as_the_proof(monkeypatch):
    """The repair guided by the audit ends with an audit that passed: that audit is the
    pattern's proof, and dispatch does not run another one."""
    import tablesafe.suppress.dispatch as dispatch

    p = table_problem(12, [[2, 2], [2], [3]], units=120)
    monkeypatch.setattr(dispatch, "LP_REPAIR_MAX_CELLS", 10)
    calls = []
    real = dispatch.final_audit
    monkeypatch.setattr(dispatch, "final_audit", lambda *a: calls.append(1) or real(*a))
    pat = suppress(p, "modular", time_limit=60, singleton=False)
    assert pat.stats["repair"] == "audit-guided"
    assert pat.proof == "audit" and pat.audit is not None and pat.audit.ok
    assert not calls


@pytest.mark.parametrize("method", ["optimal", "modular", "fast"])
def test_protect_audits_the_pattern_once(monkeypatch, method):
    """Whatever the method, ``protect`` runs the independent audit once per pattern."""
    import tablesafe.audit as audit_pkg

    calls = []
    real = audit_pkg.audit

    def counted(*a, **k):
        calls.append(k.get("insider"))
        return real(*a, **k)

    monkeypatch.setattr(audit_pkg, "audit", counted)
    monkeypatch.setattr(stages, "audit", counted)
    res = tablesafe.protect(EXAMPLES / "enterprises.csv",
                            {"industry": EXAMPLES / "industry.csv", "region": EXAMPLES / "region.hrc"},
                            "turnover", ["p(15)", "freq(3)"], method=method)
    assert res.audit is not None and res.audit.ok
    assert len(calls) == 1, calls


def test_an_audit_made_without_insiders_does_not_stand_for_one_with_them():
    p = table_problem(11, [[3, 2], [4]], units=70)
    pat = suppress(p, "optimal", time_limit=60)
    assert pat.audit.stats["insider"] is False
    again = stages._audit_once(p, pat, insider=True)
    assert again is not pat.audit and again.stats["insider"] is True
    assert stages._audit_once(p, pat, insider=False) is pat.audit
