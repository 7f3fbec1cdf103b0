"""The audit on tables whose values range over many orders of magnitude.

HiGHS's tolerances are absolute, so blocks with values near 1e11 used to be declared
infeasible ("admit no table") although the true table satisfies them; such blocks are
now solved in power-of-two units (:mod:`tablesafe.audit.block`).
"""

from __future__ import annotations

import numpy as np
import pytest

from tablesafe.audit import audit, feasibility_intervals
from tablesafe.audit.block import SCALE_ABOVE, block_scale
from tablesafe.problem import Problem


def scaled(p: Problem, factor: float) -> Problem:
    """The same table in other units (a power of two keeps every number exact)."""
    return p.copy(value=p.value * factor, lower=p.lower * factor, upper=p.upper * factor,
                  upl=p.upl * factor, lpl=p.lpl * factor, spl=p.spl * factor,
                  rhs=p.rhs * factor)


def test_block_scale_is_a_power_of_two():
    assert block_scale(np.array([1e6, -3.0])) == 1.0
    s = block_scale(np.array([2.15e11, 1.0]), np.array([np.inf]))
    assert s == 2.0 ** round(np.log2(s)) and 1e4 < 2.15e11 / s < 1e6
    assert block_scale(np.array([1e6]), force=True) < 1e6 / 1e4
    assert block_scale(np.array([SCALE_ABOVE / 2])) == 1.0
    assert block_scale(np.array([280.0]), np.array([1e30, -1e30])) == 1.0  # JJ's "no bound"


def test_huge_bounds_read_as_infinite(grid):
    """An upper bound written as 1e30 (JJ files) gives the intervals of no bound: it
    neither sets the units of the block nor the implied bounds."""
    inner = np.array([[20.0, 50, 10], [8, 19, 22], [12, 32, 14]])
    p, at = grid(inner, sensitive=[(1, 1), (2, 3)], upl={(1, 1): 4, (2, 3): 5},
                 lpl={(1, 1): 4, (2, 3): 5})
    w = np.ones(p.n, dtype=bool)
    w[at(0, 0)] = False
    huge = p.copy(upper=np.full(p.n, 1e30))
    a, b = audit(p, w, insider=False), audit(huge, w, insider=False)
    assert list(a.verdict) == list(b.verdict) and a.failing.size == 0
    lo, hi = feasibility_intervals(p, w)
    hlo, hhi = feasibility_intervals(huge, w)
    assert np.allclose(lo, hlo) and np.array_equal(np.isinf(hi), hhi >= 1e20)


def test_wide_ranging_grid_matches_small_units(grid):
    """A 4 x 5 table with cells from 1e3 to 1e11: same verdicts and (relative)
    intervals as the table in units of 2**-30."""
    inner = np.array([[3.1e11, 2.0e3, 7.7e10, 4.4e4, 9.0e8],
                      [5.0e3, 8.8e10, 1.2e5, 6.1e11, 3.0e3],
                      [2.5e10, 7.0e3, 9.9e9, 1.0e4, 4.2e11],
                      [6.0e3, 1.5e11, 3.3e3, 2.2e10, 8.1e4]])
    sens = [(1, 2), (2, 1), (3, 4), (4, 3), (1, 4)]
    lev = {rc: 0.2 * inner[rc[0] - 1, rc[1] - 1] for rc in sens}
    p, at = grid(inner, sensitive=sens, upl=lev, lpl=lev)
    w = np.zeros(p.n, dtype=bool)
    for r in range(1, 5):
        for c in range(1, 6):
            w[at(r, c)] = True
    small = scaled(p, 2.0 ** -30)
    lo, hi = feasibility_intervals(p, w)
    slo, shi = feasibility_intervals(small, w)
    for got, want in ((lo, slo * 2.0 ** 30), (hi, shi * 2.0 ** 30)):
        fin = np.isfinite(want)
        assert np.array_equal(np.isinf(got), np.isinf(want))
        assert np.all(np.abs(got[fin] - want[fin]) <= 1e-6 * np.maximum(1.0, np.abs(want[fin])))
    a, b = audit(p, w, insider=False), audit(small, w, insider=False)
    assert np.array_equal(a.verdict, b.verdict)


@pytest.fixture(scope="module")
def toysarah(benchmarks_dir):
    """Castro's TOYSARAH (values up to 2.2e11) and the pattern ``fast`` proves safe."""
    from tablesafe.io.jj import read_jj
    from tablesafe.suppress import suppress

    p = read_jj(benchmarks_dir / "castro" / "TOYSARAH.jj")
    p = p.copy(rhs=p.relations @ p.value)   # the relations as they hold for the truth
    return p, suppress(p, "fast").withheld


def test_toysarah_fast_pattern_audits(toysarah):
    """No error ("admit no table" before), every sensitive cell protected, the same
    verdicts in units of 2**-20 and with exact intervals."""
    p, w = toysarah
    res = audit(p, w, insider=False)
    assert res.counts()["protected"] == int(p.sensitive.sum())
    assert res.failing.size == 0
    small = audit(scaled(p, 2.0 ** -20), w, insider=False)
    assert np.array_equal(small.verdict, res.verdict)
    exact = audit(p, w, insider=False, exact_intervals=True)
    assert np.array_equal(exact.verdict, res.verdict)


def test_toysarah_rescaled_after_infeasible(toysarah, monkeypatch):
    """Without scaling up front, the block HiGHS calls infeasible is re-solved scaled."""
    from tablesafe.audit import block
    from tablesafe.audit.intervals import solve_intervals

    p, w = toysarah
    monkeypatch.setattr(block, "SCALE_ABOVE", np.inf)
    res = solve_intervals(p, w, cells=p.sensitive & w)
    ref = solve_intervals(scaled(p, 2.0 ** -20), w, cells=p.sensitive & w)
    assert res.stats["rescaled_blocks"] >= 1
    cells = np.flatnonzero(p.sensitive & w)
    for got, want in ((res.lower, ref.lower), (res.upper, ref.upper)):
        got, want = got[cells], want[cells] * 2.0 ** 20
        fin = np.isfinite(want)
        assert np.array_equal(np.isinf(got), np.isinf(want))
        assert np.all(np.abs(got[fin] - want[fin]) <= 1e-6 * np.maximum(1.0, np.abs(want[fin])))


@pytest.mark.parametrize("factor", [2.0 ** 36, 1.0])
def test_scaled_block_keeps_insider_bounds(grid, factor):
    """Insider scenarios change bounds in table units, also on a scaled block."""
    from tablesafe.audit import insider_findings

    inner = np.array([[20.0, 50, 10], [8, 19, 22], [12, 32, 14]]) * factor
    p, at = grid(inner, sensitive=[(1, 1)], upl={(1, 1): 6 * factor},
                 lpl={(1, 1): 6 * factor}, contributors=None)
    p = p.copy(contributors=np.where(np.arange(p.n) == at(2, 2), 1, 5))
    w = [at(1, 1), at(1, 2), at(2, 1), at(2, 2)]
    f = insider_findings(p, w)
    ref = insider_findings(scaled(p, 1.0 / factor), w)
    assert list(f["verdict"]) == list(ref["verdict"])
