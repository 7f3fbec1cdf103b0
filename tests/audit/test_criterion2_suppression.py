"""Suppression safe under operational criterion 2 (issue 15; seed 001 sections 4-7): the
loop grows a criterion-1 pattern until the aggregation MIP finds no sensitive
aggregation, checked by enumerating aggregations independently."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest

from tablesafe.audit import audit, criterion2, explicit_aggregations
from tablesafe.errors import AuditFailure
from tablesafe.problem import PROTECTED
from tablesafe.suppress.criterion2 import criterion2_pattern


def _table6(grid):
    """seed 001 Table 6 with Example 4's contributions (A x I: 155, 4, 1; B x I: 28, 10, 2;
    A x II: four of 95; B x II: two of 40), the other inner cells split into five equal
    units; the margins are published (status P), as in the seed's tables."""
    p, at = grid([[160, 380, 340], [40, 80, 60], [610, 800, 270]], sensitive=[(1, 1)],
                 upl={(1, 1): 30}, lpl={(1, 1): 30})
    rows = [(at(1, 1), "a1", 155.0), (at(1, 1), "a2", 4.0), (at(1, 1), "a3", 1.0),
            (at(2, 1), "b0", 28.0), (at(2, 1), "b1", 10.0), (at(2, 1), "b2", 2.0)]
    rows += [(at(1, 2), f"c{k}", 95.0) for k in range(4)] + [(at(2, 2), f"d{k}", 40.0) for k in range(2)]
    given = {r[0] for r in rows}
    for r in range(1, 4):
        for c in range(1, 4):
            if at(r, c) not in given:
                rows += [(at(r, c), f"u{r}{c}-{k}", p.value[at(r, c)] / 5) for k in range(5)]
    margins = np.array([i for i in range(p.n) if i % 4 == 0 or i < 4])
    status = p.status.copy()
    status[margins] = PROTECTED
    cf = pd.DataFrame(rows, columns=["cell", "unit", "value"])
    return p.copy(status=status), at, cf


def _sensitive_by_enumeration(problem, withheld, cf, p, q=100.0):
    """Every aggregation with coefficients mu in {-1, 0, 1} on the explicit aggregations:
    its absolute contributions per unit and the extended (p,q) rule (seed 001 (5.4))."""
    a, _, cells = explicit_aggregations(problem, withheld)
    a = a.toarray()
    pos = {int(c): k for k, c in enumerate(cells)}
    sub = cf[cf["cell"].isin(pos)]
    col = sub["cell"].map(pos).to_numpy()
    for mu in itertools.product((-1.0, 0.0, 1.0), repeat=a.shape[0]):
        lam = np.asarray(mu) @ a
        if not np.any(np.abs(lam) > 1e-9):
            continue
        share = (np.abs(lam[col] * sub["value"].to_numpy())).astype(float)
        per_unit = pd.Series(share).groupby(sub["unit"].to_numpy()).sum().sort_values(ascending=False).to_numpy()
        if len(per_unit) < 2 or per_unit[0] <= 0:
            continue
        if p * per_unit[0] - q * per_unit[2:].sum() >= 0:
            return mu
    return None


def test_seed001_example4_pattern_grows_until_criterion2_holds(grid):
    problem, _, cf = _table6(grid)
    w, stats = criterion2_pattern(problem, cf, p=20, q=100, method="optimal", singleton=False)
    assert criterion2(problem, w, cf, p=20, q=100).safe
    assert _sensitive_by_enumeration(problem, w, cf, p=20) is None
    assert audit(problem, w, insider=False).ok  # criterion 1 still holds
    assert stats["added"] >= 1 and stats["cost"] >= stats["criterion1_cost"]
    # the criterion-1 pattern the loop started from was not safe under criterion 2
    start = w.copy()
    for name in stats["added_cells"]:
        start[list(problem.names).index(name)] = False
    assert _sensitive_by_enumeration(problem, start, cf, p=20) is not None
    assert not (w & (problem.status == PROTECTED)).any()


def test_a_time_limit_never_returns_an_unproved_pattern(grid, monkeypatch):
    problem, _, cf = _table6(grid)
    import tablesafe.audit as audit_pkg

    real = audit_pkg.criterion2

    def never_optimal(*a, **k):
        r = real(*a, **k)
        from dataclasses import replace

        return replace(r, status="time_limit", objective=-1.0)

    monkeypatch.setattr(audit_pkg, "criterion2", never_optimal)
    with pytest.raises(AuditFailure, match="not proved safe"):
        criterion2_pattern(problem, cf, p=20, q=100)


@pytest.mark.parametrize("inner, sensitive, pp", [
    ([[100, 1, 3], [100, 2, 1], [70, 3, 2]], [(1, 1), (2, 1)], 2.0),            # seed 001 Tables 1 and 2
    ([[100, 200, 150], [250, 150, 300], [600, 450, 500]], [(1, 1), (1, 3)], 15.0),  # seed 001 Tables 3 to 5
])
def test_seed001_tables_get_patterns_safe_under_criterion2(grid, inner, sensitive, pp):
    """seed 001 section 3: the tables of Example 1 and of Tables 1-2 with their sensitive
    cells of one contributor each (p% rule; p = 2 for Table 1, whose rows allow x11 to rise
    by at most 4, p = 15 for Table 3), the other inner cells of five equal
    units and the margins published as in the seed: the criterion-2 loop's pattern passes
    the aggregation check, the enumeration of aggregations and the criterion-1 audit."""
    levels = {rc: pp / 100 * inner[rc[0] - 1][rc[1] - 1] for rc in sensitive}
    p, at = grid(inner, sensitive=sensitive, upl=levels, lpl=levels)
    rows = []
    for r in range(1, 4):
        for c in range(1, 4):
            v = p.value[at(r, c)]
            if (r, c) in sensitive:
                rows.append((at(r, c), f"s{r}{c}", v))
            else:
                rows += [(at(r, c), f"u{r}{c}-{k}", v / 5) for k in range(5)]
    margins = np.array([i for i in range(p.n) if i % 4 == 0 or i < 4])
    status = p.status.copy()
    status[margins] = PROTECTED
    problem = p.copy(status=status)
    cf = pd.DataFrame(rows, columns=["cell", "unit", "value"])
    w, stats = criterion2_pattern(problem, cf, p=pp, q=100, method="optimal", singleton=False)
    assert criterion2(problem, w, cf, p=pp, q=100).safe
    assert _sensitive_by_enumeration(problem, w, cf, p=pp) is None
    assert audit(problem, w, insider=False).ok
    assert stats["cost"] >= stats["criterion1_cost"]
