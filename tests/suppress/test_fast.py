"""Tests of the ``fast`` suppression heuristic and its protection certificates.

The auditor here is deliberately naive and independent of tablesafe: a fresh
``scipy.optimize.linprog`` per sensitive cell and direction over the whole table, with
the published cells fixed (the attacker of seed 002 "Secondary tabular data protection
methods": knows the published cells, the relations and the a priori bounds).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy.optimize import linprog

from tablesafe.audit import check_certificates
from tablesafe.io.jj import read_jj
from tablesafe.problem import EMPTY, PROTECTED, SAFE, Problem
from tablesafe.suppress.fast import fast_pattern
from tablesafe.synthetic import problem_from_data, synthetic_data


def naive_audit(problem: Problem, withheld: np.ndarray, first_only: bool = False) -> list[str]:
    """Sensitive cells whose feasibility interval misses value + upl or value - lpl."""
    A = problem.relations.tocsc()
    w = np.flatnonzero(withheld)
    pub = np.flatnonzero(~withheld)
    Aw = A[:, w]
    # the truth's own row sums (equal to rhs for additive tables; JJ instances may carry
    # rounding residuals, and the attacker's system is then the published one as is)
    rhs = A @ problem.value - A[:, pub] @ problem.value[pub]
    used = np.flatnonzero(np.asarray(abs(Aw).sum(axis=1)).ravel() > 0)
    Aw, rhs = Aw[used], rhs[used]
    bounds = list(zip(problem.lower[w], np.where(np.isfinite(problem.upper[w]), problem.upper[w], None)))
    col = {c: k for k, c in enumerate(w)}
    bad = []
    for t in np.flatnonzero(problem.sensitive):
        v = problem.value[t]
        need_up = problem.upl[t]
        need_down = min(problem.lpl[t], v - problem.lower[t])
        c = np.zeros(len(w))
        c[col[t]] = 1.0
        tol = 1e-6 * max(1.0, abs(v))
        lo = linprog(c, A_eq=Aw, b_eq=rhs, bounds=bounds, method="highs")
        hi = linprog(-c, A_eq=Aw, b_eq=rhs, bounds=bounds, method="highs")
        if hi.status == 3:  # unbounded above
            hi_val = np.inf
        else:
            assert hi.status == 0, hi.message
            hi_val = -hi.fun
        assert lo.status == 0, lo.message
        if hi_val < v + need_up - tol or lo.fun > v - need_down + tol:
            bad.append(str(problem.names[t]))
            if first_only:
                break
    return bad


@pytest.fixture(scope="module")
def table2d() -> Problem:
    return problem_from_data(synthetic_data([[3, 10], [2, 3, 4]], 3000, seed=11))


@pytest.fixture(scope="module")
def table3d() -> Problem:
    return problem_from_data(synthetic_data([[3, 4], [3, 3], [4]], 2500, seed=12))


@pytest.fixture(scope="module")
def pattern2d(table2d):
    return fast_pattern(table2d)


@pytest.fixture(scope="module")
def pattern3d(table3d):
    return fast_pattern(table3d)


def test_tables_are_in_the_tested_size_range(table2d, table3d):
    assert 1000 <= table2d.n <= 30000 and len(table2d.model.dims) == 2
    assert 1000 <= table3d.n <= 30000 and len(table3d.model.dims) == 3
    assert table2d.sensitive.sum() > 50 and table3d.sensitive.sum() > 50


@pytest.mark.parametrize("which", ["2d", "3d"])
def test_independent_auditor_finds_no_underprotected_cell(which, table2d, table3d, pattern2d, pattern3d):
    problem, pattern = (table2d, pattern2d) if which == "2d" else (table3d, pattern3d)
    assert pattern.withheld[problem.sensitive].all()
    assert pattern.secondary(problem).sum() > 0
    assert naive_audit(problem, pattern.withheld) == []


def test_naive_auditor_catches_primary_only_pattern(table2d):
    """The auditor is not vacuous: withholding only the primaries leaves cells exposed."""
    assert len(naive_audit(table2d, table2d.sensitive.copy(), first_only=True)) > 0


@pytest.mark.parametrize("which", ["2d", "3d"])
def test_certificates_pass(which, table2d, table3d, pattern2d, pattern3d):
    problem, pattern = (table2d, pattern2d) if which == "2d" else (table3d, pattern3d)
    certs = pattern.certificates
    assert set(certs.columns) >= {"target", "direction", "cell", "value"}
    assert set(certs["direction"].astype(str)) == {"up", "down"}
    assert check_certificates(problem, pattern.withheld, certs) == []
    # each certificate is a table differing from the truth only in withheld cells
    idx = pd.Index(problem.names.astype(str)).get_indexer(certs["cell"].astype(str))
    assert pattern.withheld[idx].all()


def test_tampered_certificates_fail(table2d, pattern2d):
    problem, pattern = table2d, pattern2d
    certs = pattern.certificates.copy()
    names = problem.names.astype(str)
    # 1. change one value of a non-target cell: a relation breaks
    c1 = certs.copy()
    row = int(np.flatnonzero((c1["cell"].astype(str) != c1["target"].astype(str)).to_numpy())[0])
    c1.loc[row, "value"] = c1.loc[row, "value"] + 0.1 * max(1.0, abs(c1.loc[row, "value"])) + 1.0
    assert any("relation" in f.reason for f in check_certificates(problem, pattern.withheld, c1))
    # 2. drop every 'up' certificate of one target: its upper level is unproved
    tgt = str(certs["target"].iloc[0])
    c2 = certs[~((certs["target"].astype(str) == tgt) & (certs["direction"].astype(str) == "up"))]
    fails = check_certificates(problem, pattern.withheld, c2)
    assert any(f.target == tgt and f.direction == "up" and "missing" in f.reason for f in fails)
    # 3. a certificate may not change a published cell
    mask = pattern.withheld.copy()
    used = pd.Index(names).get_indexer(certs["cell"].astype(str))
    sec = [i for i in used if not problem.sensitive[i]]
    mask[sec[0]] = False
    assert any("published" in f.reason for f in check_certificates(problem, mask, certs))
    # 4. shrinking the movement of a target below its level fails
    c4 = certs.copy()
    is_t = (c4["cell"].astype(str) == c4["target"].astype(str)) & (c4["direction"].astype(str) == "up")
    k = int(np.flatnonzero(is_t.to_numpy())[0])
    t = int(pd.Index(names).get_loc(str(c4.loc[k, "target"])))
    c4.loc[k, "value"] = problem.value[t] + 0.5 * problem.upl[t]
    assert check_certificates(problem, pattern.withheld, c4) != []


def test_protected_and_empty_cells_never_withheld():
    problem = problem_from_data(synthetic_data([[3, 5], [2, 3, 3]], 1000, seed=5))
    status = problem.status.copy()
    safe = np.flatnonzero(status == SAFE)
    rng = np.random.default_rng(0)
    protect = rng.choice(safe, size=len(safe) // 20, replace=False)
    status[protect] = PROTECTED
    problem = problem.copy(status=status)
    pattern = fast_pattern(problem)
    assert not pattern.withheld[problem.status == PROTECTED].any()
    assert not pattern.withheld[problem.status == EMPTY].any()
    assert check_certificates(problem, pattern.withheld, pattern.certificates) == []
    assert naive_audit(problem, pattern.withheld) == []


def test_deterministic(table3d, pattern3d):
    again = fast_pattern(table3d, seed=0)
    assert np.array_equal(again.withheld, pattern3d.withheld)
    pd.testing.assert_frame_equal(again.certificates, pattern3d.certificates)


def test_castro_instance_without_table_structure(benchmarks_dir):
    """A JJ instance (general linear model, no dimensions): neighbourhoods by relation hops."""
    problem = read_jj(benchmarks_dir / "castro" / "TARGUS.jj")
    pattern = fast_pattern(problem)
    assert check_certificates(problem, pattern.withheld, pattern.certificates) == []
    assert naive_audit(problem, pattern.withheld) == []
    assert not pattern.withheld[problem.status == EMPTY].any()


def test_unprotectable_cell_raises():
    """A sensitive cell whose every partner is protected cannot be hidden."""
    from tablesafe.errors import InfeasibleError

    # total = a + b; a sensitive, b protected
    problem = Problem.from_arrays(
        [30.0, 20.0, 10.0], [[-1, 1, 1]], status=["P", "U", "P"], upl=[0, 2, 0], lpl=[0, 2, 0]
    )
    with pytest.raises(InfeasibleError):
        fast_pattern(problem)


def test_tiny_table_rectangle():
    """2x2 table with margins: one sensitive cell needs the whole interior rectangle."""
    # rows r1, r2, total; cols c1, c2, total  -> cells in C order (r, c)
    vals = np.array([[10, 20, 30], [30, 40, 70], [40, 60, 100]], dtype=float).ravel()
    idx = lambda r, c: 3 * r + c
    rel = []
    for r in range(3):
        row = np.zeros(9); row[idx(r, 2)] = -1; row[idx(r, 0)] = 1; row[idx(r, 1)] = 1; rel.append(row)
    for c in range(3):
        row = np.zeros(9); row[idx(2, c)] = -1; row[idx(0, c)] = 1; row[idx(1, c)] = 1; rel.append(row)
    status = ["S"] * 9
    status[idx(0, 0)] = "U"
    upl = np.zeros(9); upl[idx(0, 0)] = 5
    problem = Problem.from_arrays(vals, np.array(rel), status=status, upl=upl, lpl=upl)
    pattern = fast_pattern(problem)
    assert naive_audit(problem, pattern.withheld) == []
    assert check_certificates(problem, pattern.withheld, pattern.certificates) == []
    # cost = value: the cheapest protection is the interior rectangle (10+20+30+40)
    assert set(np.flatnonzero(pattern.withheld)) == {idx(0, 0), idx(0, 1), idx(1, 0), idx(1, 1)}


def test_workers_report_progress_to_the_parent(table2d):
    """With two workers the parent shows how many targets they protected together (the
    display froze for minutes before); the counts grow and end at the targets searched."""
    import io

    from tablesafe.progress import Progress
    from tablesafe.suppress import fast_workers
    from tablesafe.suppress.fast_first_pass import FirstPassJob

    seen: list[int] = []

    class Recording(Progress):
        def update(self, done: int, note: str = "", *, force: bool = False) -> None:
            seen.append(done)
            super().update(done, note, force=force)

    jobs: list[tuple[FirstPassJob, list[np.ndarray]]] = []
    real = fast_workers.run_parallel

    def spy(job, groups, progress=None, poll=2.0, processes=None):
        jobs.append((job, groups))
        return real(job, groups, Recording("fast", stream=io.StringIO(), every=0.0), poll=0.01,
                    processes=processes)

    import tablesafe.suppress.fast as fast_mod

    old = fast_mod.run_parallel
    fast_mod.run_parallel = spy
    try:
        from tablesafe.suppress.fast_options import FastOptions

        pat = fast_pattern(table2d, workers=2, options=FastOptions(groups=2, order="value"))
    finally:
        fast_mod.run_parallel = old
    assert jobs and seen
    assert seen == sorted(seen)
    assert seen[-1] == pat.stats["targets"] - pat.stats["shared_certificates"] > 0


def test_groups_not_workers_decide_the_pattern(table2d):
    """With the groups fixed (``FastOptions.groups``) one process and two give the same
    pattern and certificates, and the pattern passes the naive audit."""
    from tablesafe.suppress.fast_options import FastOptions

    opts = FastOptions(groups=2)
    one = fast_pattern(table2d, options=opts, workers=1)
    two = fast_pattern(table2d, options=opts, workers=2)
    assert np.array_equal(one.withheld, two.withheld)
    pd.testing.assert_frame_equal(one.certificates, two.certificates)
    assert naive_audit(table2d, one.withheld) == []
    assert check_certificates(table2d, one.withheld, one.certificates) == []


def test_default_pattern_does_not_depend_on_the_workers(table2d):
    """The default groups follow the number of targets, not the CPUs or the workers
    asked for: from ``parallel_from`` targets on one worker and two give the same
    pattern (before, one worker meant one group and another pattern)."""
    from tablesafe.suppress.fast_options import FastOptions

    opts = FastOptions(parallel_from=50)
    assert opts.default_groups(int(table2d.sensitive.sum())) == opts.max_workers == 2
    one = fast_pattern(table2d, options=opts, workers=1)
    two = fast_pattern(table2d, options=opts, workers=2)
    assert one.stats["workers"] == 1 and two.stats["workers"] == 2
    assert np.array_equal(one.withheld, two.withheld)
    pd.testing.assert_frame_equal(one.certificates, two.certificates)
    # below parallel_from one group, whatever the workers asked for
    assert FastOptions().default_groups(100) == 1


def test_tables_without_structure_split_their_targets_into_groups_sooner():
    """Without a table structure the targets go into two groups from
    ``PARALLEL_FROM_RELATIONS_ONLY`` targets on, with one from ``PARALLEL_FROM``; a
    ``parallel_from`` given stands either way."""
    from tablesafe.suppress.fast_options import (
        PARALLEL_FROM,
        PARALLEL_FROM_RELATIONS_ONLY,
        FastOptions,
    )

    assert PARALLEL_FROM_RELATIONS_ONLY < PARALLEL_FROM
    n = PARALLEL_FROM_RELATIONS_ONLY
    assert FastOptions().for_table(10_000, structured=False).default_groups(n) == 2
    assert FastOptions().for_table(10_000, structured=False).default_groups(n - 1) == 1
    assert FastOptions().for_table(10_000, structured=True).default_groups(n) == 1
    assert FastOptions().for_table(10_000, structured=True).default_groups(PARALLEL_FROM) == 2
    assert FastOptions(parallel_from=5 * n).for_table(10_000, structured=False).default_groups(n) == 1


def test_protection_order_smallest_value_first_ties_by_need_then_index():
    from tablesafe.suppress.fast import protection_order

    targets = np.array([7, 3, 5, 9, 1])
    need = np.array([1.0, 4.0, 2.0, 4.0, 3.0])
    size = np.array([50.0, 10.0, 10.0, 10.0, 99.0])
    # smallest value first; among the three of value 10 the larger need first, then index
    assert protection_order(targets, need, size, "value").tolist() == [3, 9, 5, 7, 1]
    # largest need first, ties by index
    assert protection_order(targets, need, size, "need").tolist() == [3, 9, 1, 5, 7]


def test_order_default_depends_on_the_table_size_and_is_checked():
    from tablesafe.suppress.fast import FastOptions

    assert FastOptions().for_table(3_000).order == "both"
    assert FastOptions().for_table(13_000).order == "value"
    assert FastOptions().for_table(1_000_000).order == "need"
    assert FastOptions(order="need").for_table(13_000).order == "need"


def test_small_tables_may_use_the_whole_table_as_a_box():
    # a small table of more than 4,000 code combinations (sparse, or with irregular
    # hierarchies) gets the same box limit as the tables above it: its whole table
    from tablesafe.suppress.fast import FastOptions

    opts = FastOptions()
    assert opts.for_table(4_500).max_box == opts.wide_max_box == opts.for_table(13_000).max_box
    assert opts.for_table(1_000_000).max_box == 4_000
    assert FastOptions(max_box=500).for_table(4_500).max_box == 500
    with pytest.raises(ValueError, match="order"):
        FastOptions(order="largest")


def test_largest_need_first_is_protected_too(table3d):
    """The other order gives another pattern, also passing the independent auditor and its
    certificates."""
    from tablesafe.suppress.fast import FastOptions

    other = fast_pattern(table3d, options=FastOptions(order="need"))
    smallest = fast_pattern(table3d, options=FastOptions(order="value"))
    assert not np.array_equal(other.withheld, smallest.withheld)
    assert naive_audit(table3d, other.withheld) == []
    assert check_certificates(table3d, other.withheld, other.certificates) == []


def test_numerical_trouble_is_solved_again_not_called_unprotectable(benchmarks_dir):
    """Castro's TOYSARAH (levels of 4.1e9 beside cells of a few units): smallest values
    first, the simplex method without presolve ended some whole-block LPs with status
    unknown, and a protectable cell was reported as unprotectable. Solved again with
    presolve, every target gets a certificate that the check passes."""
    from tablesafe.suppress.fast import FastOptions

    problem = read_jj(benchmarks_dir / "castro" / "TOYSARAH.jj")
    pattern = fast_pattern(problem, options=FastOptions(order="value"))
    assert check_certificates(problem, pattern.withheld, pattern.certificates) == []
    assert pattern.withheld[problem.sensitive].all()


def test_local_lp_solves_again_after_an_unsettled_status():
    """The retry itself: a solver that ends its first run with status unknown is run again
    (presolve, interior point), and the deviation found keeps the relation."""
    import highspy

    from tablesafe.suppress.local.lp import INF, LocalLP

    lp = LocalLP()

    class Flaky:
        def __init__(self, h):
            self._h, self.runs = h, 0

        def __getattr__(self, name):
            return getattr(self._h, name)

        def run(self):
            self.runs += 1
            if self.runs > 1:
                return self._h.run()
            return None

        def getModelStatus(self):
            return highspy.HighsModelStatus.kUnknown if self.runs == 1 else self._h.getModelStatus()

    lp.h = Flaky(lp.h)
    # one relation a + b - c = 0; a moves up by 2, b may only go down, c only up (dearer)
    d = lp.solve(np.array([0, 1, 2, 3]), np.array([0, 0, 0]), np.array([1.0, 1.0, -1.0]), 1,
                 np.array([1.0, 1.0, 3.0]), np.array([INF, 0.0, INF]), np.array([0.0, 5.0, 5.0]), 0, 2.0)
    assert lp.retries == 1 and lp.h.runs == 2
    assert d is not None
    np.testing.assert_allclose(d, [2.0, -2.0, 0.0], atol=1e-9)


def test_both_orders_keep_the_cheaper_pattern(table3d):
    """``order="both"`` runs the two orders and keeps the cheaper pattern, proved by its
    own certificates; ``stats["order"]`` names the order that gave it."""
    from tablesafe.suppress.fast import FastOptions

    by = {o: fast_pattern(table3d, options=FastOptions(order=o)) for o in ("value", "need", "both")}
    cost = {o: float(table3d.cost[p.withheld].sum()) for o, p in by.items()}
    both = by["both"]
    assert cost["both"] == min(cost["value"], cost["need"])
    assert both.stats["order"] == min(("value", "need"), key=lambda o: (cost[o], o != "value"))
    assert np.array_equal(both.withheld, by[both.stats["order"]].withheld)
    assert check_certificates(table3d, both.withheld, both.certificates) == []


def test_both_orders_second_only_when_time_allows(table3d, monkeypatch):
    """With a time limit the second order runs only when the first ended within
    ``BOTH_ORDERS_SHARE`` of it."""
    import tablesafe.suppress.fast as fast_mod
    from tablesafe.suppress.fast import FastOptions

    ran: list[str] = []
    real = fast_mod._OrderRun.__call__

    def spy(self, order, t0, time_limit, hurry_work):
        ran.append(order)
        return real(self, order, t0, time_limit, hurry_work)

    monkeypatch.setattr(fast_mod._OrderRun, "__call__", spy)
    fast_pattern(table3d, options=FastOptions(order="both"), time_limit=600)
    assert ran == ["value", "need"]
    ran.clear()
    monkeypatch.setattr(fast_mod, "BOTH_ORDERS_SHARE", 0.0)
    pat = fast_pattern(table3d, options=FastOptions(order="both"), time_limit=600)
    assert ran == ["value"] and pat.stats["order"] == "value"
    assert pat.stats["other_order_skipped_by"] == "work"  # its work, not the clock
