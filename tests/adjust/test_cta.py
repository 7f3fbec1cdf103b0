"""Controlled tabular adjustment (seed 003 B.3; seed 002 "Secondary tabular data
protection methods", "Controlled tabular adjustment"), checked by the independent
checks of ``conftest.py``."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from _adjust_checks import assert_cta_valid

from tablesafe.adjust import AdjustOptions, adjust, adjust_checked
from tablesafe.adjust.cta import alternating, build_model
from tablesafe.adjust.options import FixTotals
from tablesafe.adjust.totals import total_cells
from tablesafe.problem import Problem

# seed 002, Example 3 (Geurts 1992, Table 10): a 3 x 2 table with row totals 7, 3, 6,
# column totals 9, 7 and grand total 16; row 3 is (3, 3) and the seed leaves the four
# cells X11, X12, X21, X22 open (X11 + X21 = 6, X12 + X22 = 4). We take X = (5, 2; 1, 2).
GEURTS_CELLS = ["11", "12", "1T", "21", "22", "2T", "31", "32", "3T", "T1", "T2", "TT"]
GEURTS_VALUES = [5, 2, 7, 1, 2, 3, 3, 3, 6, 9, 7, 16]


def geurts_problem(sensitive: dict[str, float]) -> Problem:
    """Seed 002 Example 3 as a problem: row, column and grand-total relations; the cells
    named in ``sensitive`` get that upper and lower protection level."""
    idx = {c: i for i, c in enumerate(GEURTS_CELLS)}
    rows = []
    for r in "123T":
        rows.append({f"{r}T": -1, f"{r}1": 1, f"{r}2": 1})
    for c in "12T":
        rows.append({f"T{c}": -1, f"1{c}": 1, f"2{c}": 1, f"3{c}": 1})
    a = sp.lil_matrix((len(rows), len(GEURTS_CELLS)))
    for k, row in enumerate(rows):
        for name, coef in row.items():
            a[k, idx[name]] = coef
    status = ["U" if c in sensitive else "S" for c in GEURTS_CELLS]
    levels = [sensitive.get(c, 0.0) for c in GEURTS_CELLS]
    return Problem.from_arrays(GEURTS_VALUES, a.tocsr(), status=status, names=GEURTS_CELLS, upl=levels, lpl=levels)


@pytest.mark.parametrize("directions", ["optimal", "alternating"])
@pytest.mark.parametrize("cost", ["weighted", "l1", "relative"])
def test_seed002_example3_cta_moves_the_sensitive_cell_and_keeps_the_table_additive(directions, cost):
    """Seed 002 Example 3 with X11 sensitive (level 2): every cost and way of choosing
    directions gives an additive, non-negative table with X11 moved by at least 2."""
    problem = geurts_problem({"11": 2.0})
    adj = adjust_checked(problem, AdjustOptions.build("cta", cta_cost=cost, cta_directions=directions,
                                                      time_limit=10))
    assert_cta_valid(problem, adj.values, adj.direction)
    assert abs(adj.deviation[0]) >= 2.0 - 1e-9
    assert adj.quality.cells_changed >= 3  # X11 cannot move alone in an additive table


def test_seed002_example3_with_every_total_kept_moves_only_inner_cells():
    """With the margins fixed (the classical CTA), X11 moved by 2 forces X12, X21, X22 (or
    the third row) to balance it: margins unchanged, inner cells non-negative."""
    problem = geurts_problem({"11": 2.0})
    adj = adjust_checked(problem, AdjustOptions.build("cta", fix_totals="all", time_limit=10))
    assert_cta_valid(problem, adj.values, adj.direction)
    totals = total_cells(problem)
    assert np.allclose(adj.values[totals], problem.value[totals])
    assert adj.quality.totals_moved == 0
    # X21 = 1 can fall by 1 only, so X11 moving down by 2 must be paid by row 3 or by X11 going up
    assert adj.values.min() >= -1e-9


def test_the_optimal_directions_cost_no_more_than_the_heuristic(problem_1k):
    """On a generated 1,122-cell table the MILP starts from the heuristic's table, so its
    objective is never worse (the weighted sum of absolute deviations)."""
    heur = adjust(problem_1k, AdjustOptions.build("cta", cta_directions="alternating"))
    opt = adjust(problem_1k, AdjustOptions.build("cta", cta_directions="optimal", time_limit=4))
    assert opt.stats["objective"] <= heur.stats["objective"] + 1e-6
    assert_cta_valid(problem_1k, opt.values, opt.direction)
    assert_cta_valid(problem_1k, heur.values, heur.direction)


def test_seed003_heuristic_orders_largest_first_with_alternating_directions():
    """Seed 003 B.3: sensitive cells ordered largest first, directions alternating. A flat
    table 200 = 50 + 40 + 30 + 80 with the first three sensitive (none dominates the total)."""
    a = sp.csr_matrix(np.array([[-1, 1, 1, 1, 1]], dtype=float))
    problem = Problem.from_arrays([200, 50, 40, 30, 80], a, status=["S", "U", "U", "U", "S"],
                                  upl=[0, 5, 4, 3, 0], lpl=[0, 5, 4, 3, 0])
    cm = build_model(problem, FixTotals(), "weighted")
    assert alternating(problem, cm).tolist() == [1, -1, 1]
    adj = adjust_checked(problem, AdjustOptions.build("cta", cta_directions="alternating"))
    assert adj.direction.tolist() == [0, 1, -1, 1, 0]
    assert_cta_valid(problem, adj.values, adj.direction)


def test_a_dominant_part_follows_its_sensitive_total():
    """The refinement of the heuristic: a sensitive part holding most of a sensitive total
    moves the same way (else another part would have to make up both moves)."""
    a = sp.csr_matrix(np.array([[-1, 1, 1]], dtype=float))
    problem = Problem.from_arrays([100, 90, 10], a, status=["U", "U", "S"], upl=[10, 9, 0], lpl=[10, 9, 0])
    cm = build_model(problem, FixTotals(), "weighted")
    assert alternating(problem, cm).tolist() == [1, 1]


@pytest.mark.parametrize("directions", ["alternating", "optimal"])
def test_generated_tables_pass_the_independent_check(problem_1k, problem_1k3d, directions):
    """Generated 2-D (1,122 cells) and 3-D (1,296 cells) tables with holdings: additive
    within 1e-6, every sensitive cell moved by its level in its direction, bounds kept."""
    for problem in (problem_1k, problem_1k3d):
        adj = adjust_checked(problem, AdjustOptions.build("cta", cta_directions=directions, time_limit=3))
        assert_cta_valid(problem, adj.values, adj.direction)
        assert adj.quality.cells_changed >= int(problem.sensitive.sum())


@pytest.mark.parametrize("fix", ["grand", "region=0", "all"])
def test_kept_totals_do_not_move(fix):
    """``fix_totals``: the grand total, the totals of one dimension, or every total keep
    their true values (unless no table exists with them kept: then the run says so)."""
    from tablesafe.synthetic import synthetic_problem

    problem = synthetic_problem([[3, 4], [2, 5]], units=800, seed=3)
    dims = [d.name for d in problem.model.dims]
    fix = fix.replace("region", dims[1])
    options = AdjustOptions.build("cta", fix_totals=fix, cta_directions="alternating", time_limit=20)
    adj = adjust_checked(problem, options)
    assert_cta_valid(problem, adj.values, adj.direction)
    if not adj.stats.get("totals_released"):
        from tablesafe.adjust.totals import fixed_cells

        kept = fixed_cells(problem, options.fix_totals) & ~problem.sensitive
        assert kept.any()
        assert np.allclose(adj.values[kept], problem.value[kept])


def test_negative_values_are_not_produced_where_the_bounds_forbid_them(problem_1k):
    """A priori bounds [0, inf): small sensitive cells moved down stop at 0 at most."""
    adj = adjust_checked(problem_1k, AdjustOptions.build("cta", cta_directions="alternating"))
    assert adj.values.min() >= -1e-6 * problem_1k.value.max()


def test_auto_above_the_milp_size_polishes_the_heuristic(problem_1k, monkeypatch):
    """``auto`` on a table above the MILP's size runs the heuristic, then reopens the
    directions near the worst-changed cells: never worse than the heuristic alone."""
    import tablesafe.adjust.cta as cta

    monkeypatch.setattr(cta, "MILP_MAX_CELLS", 100)
    plain = adjust(problem_1k, AdjustOptions.build("cta", cta_directions="alternating"))
    polished = adjust_checked(problem_1k, AdjustOptions.build("cta", time_limit=6))
    assert polished.stats["directions"] == "alternating" and "polish" in polished.stats
    assert polished.stats["objective"] <= plain.stats["objective"] + 1e-6
    assert_cta_valid(problem_1k, polished.values, polished.direction)


def test_totals_that_cannot_be_kept_are_freed_and_said_so():
    """A sensitive cell that is the only part of its total cannot move while the total
    stays: the run frees the totals (``totals_released``) rather than return no table."""
    a = sp.csr_matrix(np.array([[-1, 1]], dtype=float))
    problem = Problem.from_arrays([40, 40], a, status=["S", "U"], upl=[0, 6], lpl=[0, 6])
    adj = adjust_checked(problem, AdjustOptions.build("cta", fix_totals="all", time_limit=5))
    assert adj.stats["totals_released"] is True
    assert_cta_valid(problem, adj.values, adj.direction)
    assert abs(adj.values[0] - 40) >= 6 - 1e-9


def test_when_nothing_else_is_found_every_sensitive_cell_goes_up(problem_1k3d, monkeypatch):
    """The last fallback (heuristic and MILP found nothing): every sensitive cell up, the
    totals free, one LP; still a valid adjusted table, never an unadjusted one."""
    import tablesafe.adjust.cta as cta

    monkeypatch.setattr(cta, "heuristic", lambda *args: None)
    monkeypatch.setattr(cta, "MILP_MAX_CELLS", 100)
    adj = adjust_checked(problem_1k3d, AdjustOptions.build("cta", fix_totals="grand", time_limit=5))
    assert adj.stats["fallback"] and adj.stats["totals_released"] is True
    assert_cta_valid(problem_1k3d, adj.values, adj.direction)
    sens = problem_1k3d.sensitive & (problem_1k3d.upl > 0)
    assert np.all(adj.direction[sens] == 1)
