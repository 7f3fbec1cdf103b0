"""Controlled rounding (seed 003 A.1) and unbiased random rounding (seed 003 A), checked
by the independent checks of ``_adjust_checks.py``."""

from __future__ import annotations

import time

import numpy as np
import pytest
import scipy.sparse as sp
from _adjust_checks import assert_additive, assert_rounded
from hypothesis import given, settings
from hypothesis import strategies as st
from test_cta import geurts_problem

from tablesafe.adjust import AdjustOptions, adjust, adjust_checked
from tablesafe.adjust.guarded import run_guarded
from tablesafe.adjust.totals import total_cells
from tablesafe.errors import InfeasibleError
from tablesafe.problem import Problem


def two_way(inner: np.ndarray) -> Problem:
    """A two-way table with row, column and grand totals (cells row-major, totals last)."""
    r, c = inner.shape
    full = np.zeros((r + 1, c + 1))
    full[:r, :c] = inner
    full[:r, c] = inner.sum(axis=1)
    full[r, :c] = inner.sum(axis=0)
    full[r, c] = inner.sum()
    pos = np.arange((r + 1) * (c + 1)).reshape(r + 1, c + 1)
    rows = []
    for i in range(r + 1):
        rows.append({pos[i, c]: -1.0, **{pos[i, j]: 1.0 for j in range(c)}})
    for j in range(c + 1):
        rows.append({pos[r, j]: -1.0, **{pos[i, j]: 1.0 for i in range(r)}})
    a = sp.lil_matrix((len(rows), full.size))
    for k, row in enumerate(rows):
        for col, coef in row.items():
            a[k, col] = coef
    return Problem.from_arrays(full.ravel(), a.tocsr())


def test_seed002_example3_rounded_to_base_5():
    """Seed 002 Example 3 (Geurts) rounded to base 5: additive, every cell a multiple of 5
    within one base of its value; the grand total 16 can only become 15 or 20."""
    problem = geurts_problem({})
    adj = adjust_checked(problem, AdjustOptions.build("round", rounding_base=5, time_limit=10))
    assert_additive(problem, adj.values)
    assert_rounded(problem, adj.values, 5)
    assert adj.values[-1] in (15, 20)


@settings(max_examples=25, deadline=None)
@given(st.integers(2, 6), st.integers(2, 6), st.sampled_from([2, 3, 5, 10]), st.integers(0, 2**31 - 1))
def test_every_two_way_table_has_a_controlled_rounding(rows, cols, base, seed):
    """Seed 003 A.1: controlled rounding can always be solved for two-dimensional tables
    (Cox and Ernst): the method finds one for random count tables and every base."""
    inner = np.random.default_rng(seed).integers(0, 40, size=(rows, cols)).astype(float)
    problem = two_way(inner)
    adj = adjust_checked(problem, AdjustOptions.build("round", rounding_base=base, time_limit=10))
    assert_additive(problem, adj.values)
    assert_rounded(problem, adj.values, base)


def test_generated_tables_round_additively(problem_1k, problem_1k3d):
    """Generated 2-D (base 5) and 3-D (base 10) tables with holdings: a rounding that adds
    up, every cell a multiple of the base within one base of its value."""
    for problem, base in ((problem_1k, 5), (problem_1k3d, 10)):
        adj = adjust_checked(problem, AdjustOptions.build("round", rounding_base=base, time_limit=30))
        assert_additive(problem, adj.values)
        assert_rounded(problem, adj.values, base)


def test_a_table_without_a_controlled_rounding_fails_clearly():
    """Seed 003 A.1: three-way structures need not have a controlled rounding. Cells a, b,
    c of 2.5 with the pair sums a + b, b + c, a + c all 5 (multiples, so kept): to base 5
    each pair needs exactly one of its cells up, an odd cycle that no rounding meets. The
    run fails saying so; no table is returned."""
    rel = sp.csr_matrix(np.array([[1, 1, 0, -1, 0, 0], [0, 1, 1, 0, -1, 0], [1, 0, 1, 0, 0, -1]], dtype=float))
    problem = Problem.from_arrays([2.5, 2.5, 2.5, 5, 5, 5], rel)
    with pytest.raises(InfeasibleError, match="no additive rounding exists"):
        adjust(problem, AdjustOptions.build("round", rounding_base=5, time_limit=5))
    # with base 2.5 every cell is a multiple already, and nothing changes
    same = adjust_checked(problem, AdjustOptions.build("round", rounding_base=2.5, time_limit=5))
    assert np.array_equal(same.values, problem.value)


def test_random_rounding_is_unbiased_and_seeded():
    """Each cell goes up with probability (x mod b)/b: over many seeds the mean rounded
    value is close to the value; the same seed gives the same table."""
    problem = two_way(np.array([[1.0, 7.0, 12.0], [4.0, 9.0, 3.0]]))
    base = 5.0
    first = adjust(problem, AdjustOptions.build("random-round", rounding_base=base, seed=11)).values
    again = adjust(problem, AdjustOptions.build("random-round", rounding_base=base, seed=11)).values
    assert np.array_equal(first, again)
    runs = np.array([adjust(problem, AdjustOptions.build("random-round", rounding_base=base, seed=s)).values
                     for s in range(400)])
    assert_rounded(problem, runs[0], base)
    # standard error of a mean of 400 draws with spread at most b/2 is at most 0.125
    assert np.all(np.abs(runs.mean(axis=0) - problem.value) < 0.6)


def test_random_rounding_with_totals_readded_is_additive(problem_1k3d):
    """``readd_totals``: interior cells rounded (multiples within one base), totals the sums
    of their rounded parts, so the table is additive."""
    adj = adjust_checked(problem_1k3d, AdjustOptions.build("random-round", rounding_base=10, readd_totals=True))
    assert_additive(problem_1k3d, adj.values)
    assert_rounded(problem_1k3d, adj.values, 10, cells=~total_cells(problem_1k3d))


def test_a_solver_past_its_deadline_is_killed():
    """The guarded child process is killed at its deadline, whatever it is doing."""
    t0 = time.perf_counter()
    kind, _ = run_guarded(time.sleep, (30,), 0.2)
    assert kind == "timeout" and time.perf_counter() - t0 < 10
    assert run_guarded(sum, ([1, 2, 3],), 5) == ("ok", 6)
    kind, message = run_guarded(int, ("x",), 5)
    assert kind == "error" and "ValueError" in message
