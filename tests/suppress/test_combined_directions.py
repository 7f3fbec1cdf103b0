"""Insiders' certificates combined from directions already found
(tablesafe.suppress.combined_directions): every combination returned keeps the
relations, moves the target by 1 and none of the held cells, stays within every cell's
symmetric range at the target's protection level and moves only withheld cells; one is
found whenever the small LP over the directions says the level is reachable; and
``fast`` runs that use them are proved by their certificates and pass an independent
audit."""

from __future__ import annotations

import numpy as np
import scipy.linalg as la
from _suppress_gen import independent_audit, table_problem
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import linprog

from tablesafe.suppress import suppress
from tablesafe.suppress.combined_directions import CombinedDirections

TOL = 1e-9


def _check(a, cap, withheld, t, held, amount, got):
    cells, e = got
    full = np.zeros(a.shape[1])
    full[cells] = e
    assert np.allclose(a @ full, 0.0, atol=1e-7)  # the relations kept
    assert full[t] == 1.0
    assert np.all(full[held] == 0.0)
    assert np.min(cap[cells] / np.abs(e)) >= amount * (1 - 1e-12)
    assert withheld[cells[cells != t]].all()


def test_two_directions_cancel_the_held_cell():
    """Relations x0 = x1 + x2 and x0 = x3 + x4: u moves x0, x1, x3; w moves x0, x2, x3.
    Neither keeps x1 fixed with x0 moving, but w alone does; and for x3 held, u - w
    moves x0 by 0: only u and w in a ratio that cancels x3 and keeps x0 moving do."""
    a = np.array([[-1.0, 1, 1, 0, 0], [-1.0, 0, 0, 1, 1]])
    cap = np.array([10.0, 5, 5, 8, 8])
    withheld = np.ones(5, dtype=bool)
    combos = CombinedDirections(cap, np.array([True, False, False, False, False]))
    combos.add(np.array([0, 1, 3]), np.array([1.0, 1.0, 1.0]))
    combos.add(np.array([0, 2, 4]), np.array([1.0, 1.0, 1.0]))
    got = combos.certificate(0, np.array([1]), 4.0, withheld, TOL)
    assert got is not None and got[0].tolist() == [0, 2, 4]
    _check(a, cap, withheld, 0, [1], 4.0, got)
    # x3 held: u moves it by 1, w by 0 -> w alone again; x1 and x3 held: w
    got = combos.certificate(0, np.array([1, 3]), 4.0, withheld, TOL)
    assert got is not None and got[0].tolist() == [0, 2, 4]
    # past the range w allows (5): none
    assert combos.certificate(0, np.array([1]), 6.0, withheld, TOL) is None
    # a moved cell not withheld: none
    w2 = withheld.copy()
    w2[4] = False
    assert combos.certificate(0, np.array([1]), 4.0, w2, TOL) is None
    # a pair that cancels: p moves x0, x1 by +1 and x2 by 0 (x3 +1); q moves x0 by +1,
    # x1 by -1 (x2 +2, x4 +1): (p + q) / 2 moves x0 by 1 and x1 by 0
    pair = CombinedDirections(cap, np.array([True, False, False, False, False]))
    pair.add(np.array([0, 1, 3]), np.array([1.0, 1.0, 1.0]))
    pair.add(np.array([0, 1, 2, 4]), np.array([1.0, -1.0, 2.0, 1.0]))
    got = pair.certificate(0, np.array([1]), 2.0, withheld, TOL)
    assert got is not None
    _check(a, cap, withheld, 0, [1], 2.0, got)
    assert set(got[0].tolist()) == {0, 2, 3, 4}
    assert pair.combined == 1 and combos.combined == 2


def _random_case(seed, ndir, nheld, all_withheld):
    """Relations on 14 cells, directions in their null space (moving cell 0), caps,
    held cells and a level, drawn from ``seed``; with its combination."""
    rng = np.random.default_rng(seed)
    n, m = 14, 6
    a = rng.integers(-1, 2, size=(m, n)).astype(float)
    basis = la.null_space(a)
    cap = rng.uniform(0.5, 5.0, n)
    withheld = np.ones(n, dtype=bool) if all_withheld else rng.random(n) < 0.85
    t = 0
    held = rng.choice(np.arange(1, n), size=nheld, replace=False)
    combos = CombinedDirections(cap, np.eye(1, n, 0, dtype=bool).ravel())
    dirs = []
    for _ in range(ndir):
        u = basis @ rng.standard_normal(basis.shape[1])
        if abs(u[t]) < 1e-3:
            continue
        u = u / u[t]
        u[np.abs(u) < 1e-12] = 0.0
        cells = np.flatnonzero(u)
        combos.add(cells, u[cells])
        dirs.append(u)
    amount = float(rng.uniform(0.05, 1.0))
    got = combos.certificate(t, held, amount, withheld, TOL)
    return a, cap, withheld, t, held, amount, dirs, got


def test_combinations_are_found_and_are_certificates():
    """Not a vacuous property: with every cell withheld, most random cases give a
    combination, and each one is a certificate."""
    found = 0
    for seed in range(60):
        a, cap, withheld, t, held, amount, _, got = _random_case(seed, 5, 1 + seed % 3, True)
        if got is not None:
            found += 1
            _check(a, cap, withheld, t, held, amount, got)
    assert found >= 20


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 10_000), ndir=st.integers(1, 7), nheld=st.integers(1, 3),
       all_withheld=st.booleans())
def test_combinations_are_certificates(seed, ndir, nheld, all_withheld):
    a, cap, withheld, t, held, amount, dirs, got = _random_case(seed, ndir, nheld, all_withheld)
    if got is not None:
        _check(a, cap, withheld, t, held, amount, got)
    if not dirs:
        assert got is None
        return
    # the LP over the directions: min sum |mu| / rho with the target moving by 1 and the
    # held cells by 0; where its optimum reaches the level and every cell is withheld,
    # a combination must be found
    u = np.array(dirs).T
    rho = np.array([np.min(cap[v != 0] / np.abs(v[v != 0])) for v in dirs])
    rows = np.concatenate(([t], held))
    aeq = np.hstack([u[rows], -u[rows]])
    beq = np.zeros(len(rows))
    beq[0] = 1.0
    res = linprog(np.concatenate([1 / rho, 1 / rho]), A_eq=aeq, b_eq=beq, bounds=(0, None), method="highs")
    moved_all = np.flatnonzero(np.abs(u).sum(axis=1) > 0)
    if res.status == 0 and res.fun < (1 / amount) * (1 - 1e-6) and withheld[moved_all[moved_all != t]].all():
        assert got is not None


def test_fast_with_combined_certificates_is_proved_and_audited():
    """A three-way table with holdings where some insiders' certificates come from
    combined directions: the pattern is proved by its certificates (their independent
    check) and an independent audit finds no cell under-protected, by any single
    respondent either."""
    p = table_problem(4, [[2, 3], [4], [2]], units=300)
    pat = suppress(p, "fast", audit=False)
    assert pat.stats["found_by"].get("insider-combined", 0) > 0
    assert pat.proof == "certificates"
    assert pat.stats["insider_unprotected"] == 0
    assert independent_audit(p, pat.withheld) == []
