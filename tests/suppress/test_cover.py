"""Joint choice of complements in the repair (issue 12): the capacity inequalities of a
round are met together by the cheapest cells, and a later round may revise what an
earlier one chose."""

from __future__ import annotations

import itertools

import numpy as np
from _suppress_gen import independent_audit, table_problem
from hypothesis import given, settings
from hypothesis import strategies as st

from tablesafe.suppress.attacker import Bounds
from tablesafe.suppress.cover import cover, covers, greedy_cover
from tablesafe.suppress.protection import repair


def _rows(draw_rng: np.random.Generator, n: int, m: int):
    rows = []
    for _ in range(m):
        size = int(draw_rng.integers(1, min(n, 5) + 1))
        idx = np.sort(draw_rng.choice(n, size=size, replace=False)).astype(np.int64)
        coef = draw_rng.integers(1, 6, size=size).astype(float)
        deficit = float(draw_rng.integers(1, int(coef.sum()) + 1))
        rows.append((idx, coef, deficit))
    return rows


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 10_000), st.integers(3, 9), st.integers(1, 6))
def test_cover_is_the_cheapest_set_meeting_every_row(seed, n, m):
    rng = np.random.default_rng(seed)
    cost = rng.integers(1, 20, size=n).astype(float)
    rows = _rows(rng, n, m)
    got = cover(cost, rows, seconds=5.0)
    assert covers(got, rows)
    best = min(
        (cost[list(s)].sum() for r in range(n + 1) for s in itertools.combinations(range(n), r)
         if covers(np.array(s, dtype=np.int64), rows)),
    )
    assert cost[got].sum() == best
    assert cost[got].sum() <= cost[greedy_cover(cost, rows)].sum()


def test_greedy_cover_one_row_after_the_other_beats_no_joint_choice():
    # two rows that one cell meets together: the greedy takes the cheap cell of each
    # row, the joint choice the one shared cell
    cost = np.array([1.0, 1.0, 1.5])
    rows = [(np.array([0, 2]), np.array([1.0, 1.0]), 1.0), (np.array([1, 2]), np.array([1.0, 1.0]), 1.0)]
    assert sorted(greedy_cover(cost, rows).tolist()) == [0, 1]
    assert cover(cost, rows, seconds=5.0).tolist() == [2]


def test_cover_completes_a_start_that_is_still_useful():
    cost = np.array([5.0, 1.0, 1.0])
    rows = [(np.array([0, 1]), np.array([1.0, 1.0]), 1.0)]
    assert greedy_cover(cost, rows, start=np.array([0])).tolist() == [0]
    assert cover(cost, rows, seconds=5.0, start=np.array([0])).tolist() == [1]


@settings(max_examples=8, deadline=None)
@given(st.integers(0, 10_000))
def test_repair_protects_every_cell_and_keeps_the_pattern_given(seed):
    p = table_problem(seed, [[3, 2], [4]], units=60)
    b = Bounds.of(p)
    start = p.sensitive.copy()
    w, atts, _ = repair(p, b, start)
    assert (w >= start).all()
    assert independent_audit(p, w) == []
    # the attacks returned are those of the final pattern: every one passes
    assert all(a.ok for a in atts.values())


def test_cover_reads_the_optimum_not_its_start():
    """A case hypothesis found: HiGHS 1.16, given the greedy choice (cost 17) as a start,
    reported the optimum 15 with the start's values; the cover must return cost 15."""
    rows = [(np.array([0, 2, 4, 7]), np.array([2.0, 5.0, 1.0, 5.0]), 6.0),
            (np.array([1, 3, 5, 6, 7]), np.array([5.0, 5.0, 5.0, 4.0, 3.0]), 9.0),
            (np.array([2]), np.array([4.0]), 3.0)]
    cost = np.array([17.0, 1.0, 3.0, 10.0, 1.0, 14.0, 18.0, 2.0])
    got = cover(cost, rows, seconds=5.0)
    assert covers(got, rows) and cost[got].sum() == 15.0
