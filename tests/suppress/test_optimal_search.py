"""The optimal method's search between master rounds: re-checking a changed pattern and
the neighbourhood search on the master's inequalities."""

from __future__ import annotations

import numpy as np
import pytest
from _suppress_gen import independent_audit, table_problem

from tablesafe.suppress import suppress
from tablesafe.suppress.attacker import Bounds, row_cuts
from tablesafe.suppress.optimal import _Master, _Neighbourhoods, _recheck
from tablesafe.suppress.protection import candidates, check, failing, repair


@pytest.mark.parametrize("singleton", [False, True])
@pytest.mark.parametrize("seed,shape,units", [(11, [[3, 2], [4]], 70), (12, [[2, 2], [2], [3]], 120)])
def test_recheck_agrees_with_a_full_check(singleton, seed, shape, units):
    """Attacks re-solved only where a certificate leans on a published cell give the same
    failures as attacking every sensitive cell again, for patterns near a safe one."""
    p = table_problem(seed, shape, units=units)
    b = Bounds.of(p, singleton=singleton)
    base, base_atts, _ = repair(p, b, p.sensitive.copy())
    assert not failing(b, base_atts)
    cand = np.flatnonzero(candidates(p, b))
    sec = np.flatnonzero(base & ~p.sensitive)
    rng = np.random.default_rng(seed)
    seen_failures = 0
    for _ in range(12):
        x = base.copy()
        if len(sec):
            x[rng.choice(sec, size=int(rng.integers(1, min(4, len(sec)) + 1)), replace=False)] = False
        x[rng.choice(cand, size=int(rng.integers(0, 3)), replace=False)] = True
        quick = _failures(failing(b, _recheck(p, b, x, base, base_atts)))
        full = _failures(failing(b, check(p, b, x)))
        assert quick == full
        seen_failures += len(full) > 0
    assert seen_failures  # the perturbations did break the pattern sometimes


def _failures(keys):
    """Failing outsider attacks, and failing insider attacks whose outsider's attack
    passes (an insider's attack on a target and direction the outsider already breaks
    is reported by some checks and not by others: it needs no LP of its own)."""
    outsider = {(k, d) for k, d, s in keys if s < 0}
    return sorted(key for key in keys if key[2] < 0 or (key[0], key[1]) not in outsider)


@pytest.mark.parametrize("singleton", [False, True])
def test_neighbourhood_search_from_the_worst_pattern_reaches_the_optimum(singleton):
    """Starting from every admissible cell withheld, the search (neighbourhoods growing up
    to the whole pattern) ends safe, never worse than its start, at the proved optimum."""
    p = table_problem(11, [[3, 2], [4]], units=70)
    b = Bounds.of(p, singleton=singleton)
    cand = candidates(p, b)
    start = p.sensitive | cand
    atts = check(p, b, start)
    assert not failing(b, atts)
    start_cost = float(p.cost[start & ~p.sensitive].sum())

    master = _Master(p, cand, 0)
    master.add(row_cuts(p, b, p.sensitive))
    master.integral(True)
    search = _Neighbourhoods(p, b, master, size=2, trial_limit=float("inf"))
    best, cost = start, start_cost
    costs = [cost]
    while not search.exhausted:
        best, atts, cost = search.improve(best, atts, float("inf"))
        costs.append(cost)
    assert costs == sorted(costs, reverse=True)
    assert search.improved > 0 and cost < start_cost
    assert not independent_audit(p, best, singleton=singleton)
    assert cost == pytest.approx(float(p.cost[best & ~p.sensitive].sum()))

    ref = suppress(p, "optimal", singleton=singleton)
    assert ref.stats["optimal"]
    assert cost == pytest.approx(ref.stats["cost"], rel=1e-4)
