"""Feasibility intervals (operational criterion 1) against the papers' worked examples."""

from __future__ import annotations

import numpy as np
import pytest

from tablesafe.audit import feasibility_intervals, solve_intervals
from tablesafe.audit.intervals import peel_exact, rowspace_members
from tablesafe.errors import InputError
from tablesafe.problem import Problem


def test_seed001_table1_primaries_alone_are_exact(grid):
    """seed 001 section 3, Table 1: with only x11, x21 withheld both must be 100."""
    p, at = grid([[100, 1, 3], [100, 2, 1], [70, 3, 2]])
    w = [at(1, 1), at(2, 1)]
    res = solve_intervals(p, w)
    assert res.exact[w].all()
    assert res.stats["lp_solves"] == 0
    np.testing.assert_allclose(res.lower[w], [100, 100])
    np.testing.assert_allclose(res.upper[w], [100, 100])


def test_seed001_table2_interval_99_103(grid):
    """seed 001 section 3, Table 2: adding x13, x23 gives x11 in [99, 103]."""
    p, at = grid([[100, 1, 3], [100, 2, 1], [70, 3, 2]])
    w = [at(1, 1), at(2, 1), at(1, 3), at(2, 3)]
    lo, hi = feasibility_intervals(p, w)
    assert (lo[at(1, 1)], hi[at(1, 1)]) == pytest.approx((99, 103))
    assert (lo[at(2, 1)], hi[at(2, 1)]) == pytest.approx((97, 101))
    assert (lo[at(1, 3)], hi[at(1, 3)]) == pytest.approx((0, 4))
    # published cells carry their value
    assert lo[at(3, 1)] == hi[at(3, 1)] == 70


def test_seed001_table5_intervals(grid):
    """seed 001 section 3, Example 1, Table 5: intervals of the pattern of Table 4."""
    p, at = grid([[100, 200, 150], [250, 150, 300], [600, 450, 500]])
    w = [at(1, 1), at(1, 3), at(2, 1), at(2, 3)]
    lo, hi = feasibility_intervals(p, w)
    got = [(lo[i], hi[i]) for i in w]
    assert got == [pytest.approx(x) for x in [(0, 250), (0, 250), (100, 350), (200, 450)]]


def test_seed002_example3_interval_3_6(grid):
    """seed 002 "Secondary tabular data protection methods", Example 3: X11 in [3, 6]."""
    # row totals 7, 3, 6; column totals 9, 7; the third row (3, 3) is published
    p, at = grid([[4, 3], [2, 1], [3, 3]])
    assert p.value[at(1, 0)] == 7 and p.value[at(0, 1)] == 9 and p.value[at(0, 0)] == 16
    w = [at(1, 1), at(1, 2), at(2, 1), at(2, 2)]
    lo, hi = feasibility_intervals(p, w)
    assert (lo[at(1, 1)], hi[at(1, 1)]) == pytest.approx((3, 6))


def test_seed001_example2_interval_80_200(grid):
    """seed 001 section 3, Example 2, Table 7: A x I lies in [80, 200]."""
    p, at = grid([[160, 380, 340], [40, 80, 60], [610, 800, 270]])
    w = [at(1, 1), at(1, 2), at(2, 1), at(2, 2)]
    lo, hi = feasibility_intervals(p, w)
    assert (lo[at(1, 1)], hi[at(1, 1)]) == pytest.approx((80, 200))


def test_seed000_figures_1_and_2_intervals(grid):
    """seed 000 section 5.2, Figures 1 and 2: intervals [T-9, T+9] and [34, 52]."""
    p, at = grid([[10, 43, 49], [11, 9, 9]])
    w = [at(1, 2), at(1, 3), at(2, 2), at(2, 3)]
    lo, hi = feasibility_intervals(p, w)
    assert (lo[at(1, 2)], hi[at(1, 2)]) == pytest.approx((34, 52))
    assert (lo[at(1, 3)], hi[at(1, 3)]) == pytest.approx((40, 58))
    p2, at2 = grid([[10, 43, 9], [11, 9, 9]])
    lo, hi = feasibility_intervals(p2, w)
    assert (lo[at2(1, 2)], hi[at2(1, 2)]) == pytest.approx((34, 52))


def test_unbounded_upper_is_inf_and_cells_subset(grid):
    """Withholding a whole column including its total leaves no upper bound."""
    p, at = grid([[5, 6], [7, 8]])
    w = [at(0, 1), at(1, 1), at(2, 1), at(0, 0), at(1, 0), at(2, 0)]
    lo, hi = feasibility_intervals(p, w, cells=[at(1, 1)])
    assert np.isinf(hi[at(1, 1)]) and lo[at(1, 1)] == 0
    assert np.isnan(hi[at(2, 1)])  # not requested


def test_cell_alone_gets_its_bounds():
    """A withheld cell in no relation is limited by its a priori bounds only."""
    p = Problem.from_arrays([3.0, 4.0], None, lower=[1, 0], upper=[9, np.inf])
    lo, hi = feasibility_intervals(p, [0])
    assert (lo[0], hi[0]) == (1, 9)


def test_value_outside_bounds_is_an_input_error(grid):
    p, at = grid([[1, 2], [3, 4]])
    p.upper[at(1, 1)] = 0.5
    with pytest.raises(InputError, match="a priori bounds"):
        feasibility_intervals(p, [at(1, 1), at(1, 2), at(2, 1), at(2, 2)])


def test_peeling_chain_and_rowspace():
    """Peeling follows chains; the row-space test finds exact cells peeling misses."""
    import scipy.sparse as sp

    # x0 = c, x0 + x1 = c, x1 + x2 = c: all exact by peeling
    a = sp.csr_matrix(np.array([[1, 0, 0], [1, 1, 0], [0, 1, 1]], float))
    assert peel_exact(a).all()
    # x0 + x1 = c, x0 - x1 = c: no single-unknown row, but both are exact
    b = sp.csr_matrix(np.array([[1, 1, 0], [1, -1, 0], [0, 1, 1], [0, 0, 0]], float))
    assert not peel_exact(b).any()
    np.testing.assert_array_equal(rowspace_members(b), [True, True, True])
    c = sp.csr_matrix(np.array([[1, 1, 0], [0, 1, 1]], float))
    np.testing.assert_array_equal(rowspace_members(c), [False, False, False])


def test_linear_algebra_exact_cells_skip_lps():
    """x0 + x1 = 10 and x0 - x1 + x2 - x2 ... : cells fixed by two relations need no LP."""
    import scipy.sparse as sp

    # relations: x0 + x1 - x4 = 0 ; x0 - x1 + x2 - x3 = 0 (x2, x3 published) ; x5 free pair
    a = sp.csr_matrix(np.array([
        [1, 1, 0, 0, -1, 0, 0],
        [1, -1, 1, -1, 0, 0, 0],
        [0, 0, 0, 0, 1, -1, -1],
    ], float))
    v = np.array([6, 4, 3, 5, 10, 7, 3], float)
    p = Problem.from_arrays(v, a, lower=[-100] * 7, upper=[100] * 7)
    res = solve_intervals(p, [0, 1, 5, 6])
    assert res.exact[[0, 1]].all() and not res.exact[[5, 6]].any()
    assert res.lower[0] == res.upper[0] == 6
    assert (res.lower[5], res.upper[5]) == pytest.approx((-90, 100))


def test_non_additive_table_is_reported(grid):
    from tablesafe.errors import NonAdditiveError

    p, at = grid([[1, 2], [3, 4]])
    p.value[at(1, 1)] += 0.5
    with pytest.raises(NonAdditiveError, match="relation"):
        feasibility_intervals(p, [at(1, 1), at(1, 2), at(2, 1), at(2, 2)])


@pytest.mark.parametrize("workers", [1, 2])
@pytest.mark.parametrize("shape", [[[3, 4], [2, 5]], [[3], [2, 2], [4]]], ids=["2d", "3d"])
def test_exact_bounds_in_parts_match_fresh_lps(monkeypatch, workers, shape):
    """Exact intervals of a large block found in four parts (each direction for each half
    of the targets, after batch LPs towards the implied bounds), in forked workers or all
    in this process: the same bounds as fresh scipy LPs, whatever the number of workers."""
    import sys

    sys.path.insert(0, str(__import__("pathlib").Path(__file__).parent))
    from _oracle import exact_bounds

    import tablesafe.audit.blocksolve as blocksolve
    import tablesafe.parallel as parallel
    from tablesafe.suppress.fast import fast_pattern
    from tablesafe.synthetic import problem_from_data, synthetic_data

    p = problem_from_data(synthetic_data(shape, 1_500, seed=5))
    w = fast_pattern(p).withheld
    monkeypatch.setattr(blocksolve, "SPLIT_MIN_TARGETS", 1)
    monkeypatch.setattr(blocksolve, "BATCH_MIN_TARGETS", 2)
    monkeypatch.setattr(blocksolve, "BATCH_LEAST_EXACT", 1)
    monkeypatch.setattr(parallel, "worker_count", lambda most=2: workers)
    res = solve_intervals(p, w)
    assert res.stats["lp_solves"] > 0
    lo, hi = exact_bounds(p, w)
    for i in lo:
        assert res.lower[i] == pytest.approx(lo[i], rel=1e-6, abs=1e-6)
        assert res.upper[i] == pytest.approx(hi[i], rel=1e-6, abs=1e-6)


def test_exact_bounds_in_parts_are_the_same_with_one_worker_or_two(monkeypatch):
    """Determinism: every part starts from the block's shared basis with fresh tables, so
    one process running all four parts in turn reports exactly what two workers report."""
    import tablesafe.audit.blocksolve as blocksolve
    import tablesafe.parallel as parallel
    from tablesafe.suppress.fast import fast_pattern
    from tablesafe.synthetic import problem_from_data, synthetic_data

    p = problem_from_data(synthetic_data([[3], [2, 2], [4]], 1_500, seed=5))
    w = fast_pattern(p).withheld
    monkeypatch.setattr(blocksolve, "SPLIT_MIN_TARGETS", 1)
    monkeypatch.setattr(blocksolve, "BATCH_MIN_TARGETS", 2)
    monkeypatch.setattr(blocksolve, "BATCH_LEAST_EXACT", 1)
    runs = []
    for workers in (1, 2):
        monkeypatch.setattr(parallel, "worker_count", lambda most=2, n=workers: n)
        runs.append(solve_intervals(p, w))
    assert runs[0].stats["lp_batch"] > 1 and runs[0].stats["lp_solves"] > 0
    for key in ("lp_solves", "lp_skipped", "lp_batch"):
        assert runs[0].stats[key] == runs[1].stats[key]
    np.testing.assert_array_equal(runs[0].lower, runs[1].lower)
    np.testing.assert_array_equal(runs[0].upper, runs[1].upper)


def test_lps_start_from_the_basis_of_the_table_behind_the_best_value(monkeypatch):
    """Each exact-bound LP restarts from the optimal basis of the table that gives the
    cell its best known value (when that is not the model's last basis), the store of
    bases pruned to those still behind a best value; the bounds stay those of fresh LPs."""
    import sys

    sys.path.insert(0, str(__import__("pathlib").Path(__file__).parent))
    from _oracle import exact_bounds

    import tablesafe.audit.blocksolve as blocksolve
    from tablesafe.suppress.fast import fast_pattern
    from tablesafe.synthetic import problem_from_data, synthetic_data

    p = problem_from_data(synthetic_data([[3], [2, 2], [4]], 1_500, seed=5))
    w = fast_pattern(p).withheld
    starts = []
    real = blocksolve._warm_start

    def counting(b, best, k, d):
        used_by = set(best.src_hi.tolist()) | set(best.src_lo.tolist())
        assert len(set(best.bases) - used_by) <= 3
        used = real(b, best, k, d)
        if used:
            # a basis other than the model's own (the last LP's), kept for that table
            pid = best.source(k, d)
            assert pid != best.count - 1 and pid in best.bases
        starts.append(used)
        return used

    monkeypatch.setattr(blocksolve, "BASES_KEPT", 3)
    monkeypatch.setattr(blocksolve, "_warm_start", counting)
    monkeypatch.setattr(blocksolve, "SPLIT_MIN_TARGETS", 10**9)
    monkeypatch.setattr(blocksolve, "WARM_FROM_STEPS", 0)
    res = solve_intervals(p, w)
    assert any(starts)
    lo, hi = exact_bounds(p, w)
    for i in lo:
        assert res.lower[i] == pytest.approx(lo[i], rel=1e-6, abs=1e-6)
        assert res.upper[i] == pytest.approx(hi[i], rel=1e-6, abs=1e-6)
    # LPs that take few simplex steps do not start from the best table's basis
    starts.clear()
    monkeypatch.setattr(blocksolve, "WARM_FROM_STEPS", 10**9)
    cold = solve_intervals(p, w, keep_points=True)
    assert not starts
    np.testing.assert_allclose(cold.upper[w], res.upper[w], rtol=1e-6, atol=1e-6)


def test_tables_of_a_smaller_pattern_settle_verdicts_and_bad_ones_are_dropped():
    """The feasible tables of an audit of a pattern stay feasible once more cells are
    withheld (those cells at their true values): given as ``seeds`` they settle the
    verdicts they reach without LPs, and the verdicts are those of an audit without them.
    A table off the relations is dropped, never trusted."""
    from tablesafe.audit import audit
    from tablesafe.suppress.fast import fast_pattern
    from tablesafe.synthetic import problem_from_data, synthetic_data

    p = problem_from_data(synthetic_data([[3, 4], [2, 5]], 1_500, seed=5))
    small = fast_pattern(p).withheld
    grown = small.copy()
    extra = np.flatnonzero(~small)[::7]
    grown[extra] = True
    first = audit(p, small, insider=False, keep_tables=True)
    assert first.tables
    plain = audit(p, grown, insider=False)
    seeded = audit(p, grown, insider=False, seeds=first.tables)
    assert list(seeded.verdict) == list(plain.verdict)
    assert seeded.stats["seeds"] > 0 and seeded.stats["seeds_dropped"] == 0
    assert seeded.stats["lp_solves"] + seeded.stats["lp_batch"] < plain.stats["lp_solves"] + plain.stats["lp_batch"]
    # a table moved off its relations: dropped, and the verdicts do not change
    (cell, d), (cols, vals) = next(iter(first.tables.items()))
    bad = dict(first.tables)
    bad[(cell, d)] = (cols, vals + 1_000.0)
    broken = audit(p, grown, insider=False, seeds=bad)
    assert broken.stats["seeds_dropped"] >= 1
    assert list(broken.verdict) == list(plain.verdict)
