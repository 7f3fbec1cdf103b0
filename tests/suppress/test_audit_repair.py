"""The repair guided by the audit ends with a pattern the audit and an independent LP
check pass, from the primaries alone and from a pattern with some complements."""

from __future__ import annotations

import numpy as np
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
