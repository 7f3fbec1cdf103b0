"""Verdicts per sensitive cell and the AuditResult views (seed 003 B.2.a.iii)."""

from __future__ import annotations

import numpy as np
import pytest

from tablesafe.audit import audit, verdicts
from tablesafe.problem import Pattern

TABLE6 = [[160, 380, 340], [40, 80, 60], [610, 800, 270]]


def _pattern(at):
    return [at(1, 1), at(1, 2), at(2, 1), at(2, 2)]


@pytest.mark.parametrize("upl,lpl,spl,expected", [
    (30, 30, 0, "protected"),      # seed 001 Example 2: [80, 200] reaches 190 and 130
    (41, 30, 0, "upper"),          # 200 < 160 + 41
    (30, 81, 0, "lower"),          # 80 > 160 - 81
    (30, 30, 121, "sliding"),      # width 120 < 121
    (40, 80, 120, "protected"),    # every bound exactly reached (within tolerance)
])
def test_seed001_example2_verdicts(grid, upl, lpl, spl, expected):
    """seed 001 section 3, Example 2 (Tables 6 and 7) under various protection levels."""
    p, at = grid(TABLE6, sensitive=[(1, 1)], upl={(1, 1): upl}, lpl={(1, 1): lpl},
                 spl={(1, 1): spl})
    res = audit(p, Pattern(withheld=np.isin(np.arange(p.n), _pattern(at))), insider=False)
    assert res.verdict[at(1, 1)] == expected
    assert (res.lower[at(1, 1)], res.upper[at(1, 1)]) == pytest.approx((80, 200))
    assert res.ok == (expected == "protected")


def test_exact_and_published_sensitive(grid):
    """seed 001 Table 1: a sensitive cell recalculable exactly; a published one is exact."""
    p, at = grid([[100, 1, 3], [100, 2, 1], [70, 3, 2]], sensitive=[(1, 1), (3, 2)],
                 upl={(1, 1): 5, (3, 2): 1})
    res = audit(p, [at(1, 1), at(2, 1)], insider=False)
    assert res.verdict[at(1, 1)] == "exact"
    assert res.verdict[at(3, 2)] == "exact"
    assert res.verdict[at(2, 1)] == ""
    assert res.counts()["exact"] == 2


def test_lower_level_capped_at_a_priori_bound(grid):
    """DESIGN "Semantics": an LPL beyond the lower a priori bound is capped there."""
    p, at = grid([[5, 3], [4, 6]], sensitive=[(1, 1)], upl={(1, 1): 2}, lpl={(1, 1): 50})
    w = [at(1, 1), at(1, 2), at(2, 1), at(2, 2)]
    res = audit(p, w, insider=False)
    assert res.lower[at(1, 1)] == pytest.approx(0)      # reaches the bound 0 = 5 - 5
    assert res.verdict[at(1, 1)] == "protected"
    p.lower[at(1, 1)] = 1.0                               # interval now [1, 8]; cap 4
    assert audit(p, w, insider=False).verdict[at(1, 1)] == "protected"
    p.lower[:] = 0.0
    p.lower[at(2, 2)] = 5.5                               # x11 >= 5 - ... forces x11 >= 4.5
    res = audit(p, w, insider=False)
    assert res.lower[at(1, 1)] == pytest.approx(4.5)
    assert res.verdict[at(1, 1)] == "lower"


def test_tolerance_is_relative(grid):
    """A bound missing its target by less than REL_TOL * |value| still counts."""
    p, at = grid(TABLE6, sensitive=[(1, 1)], upl={(1, 1): 40 + 1e-5})
    lo = np.full(p.n, np.nan)
    hi = np.full(p.n, np.nan)
    lo[at(1, 1)], hi[at(1, 1)] = 80, 200
    assert verdicts(p, lo, hi)[at(1, 1)] == "protected"
    assert verdicts(p, lo, hi, rel_tol=1e-9)[at(1, 1)] == "upper"


def test_to_frame_and_summary(grid):
    p, at = grid(TABLE6, sensitive=[(1, 1)], upl={(1, 1): 41}, lpl={(1, 1): 30})
    res = audit(p, _pattern(at), insider=False, all_cells=True)
    df = res.to_frame()
    assert list(df.columns) == ["name", "value", "status", "upl", "lpl", "spl",
                                "audit_lower", "audit_upper", "verdict"]
    assert df.loc[at(1, 2), "status"] == "M" and df.loc[at(1, 1), "status"] == "U"
    assert df.loc[at(2, 2), "audit_lower"] == pytest.approx(0)   # all cells computed
    assert df.loc[at(1, 1), "verdict"] == "upper"
    s = res.summary()
    assert "upper 1" in s and "UNDER-PROTECTED" in s
