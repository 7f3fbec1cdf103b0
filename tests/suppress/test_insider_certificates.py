"""Single respondents as attackers: insider certificates of ``fast``, their check, and the
overlap rule shared by the certificate check and the audit (seed 002 "singletons")."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy.optimize import linprog

from tablesafe.audit import audit, check_certificates
from tablesafe.problem import EMPTY, PRIMARY, PROTECTED, SAFE, Problem
from tablesafe.structure import Dimension, Hierarchy, TableStructure, compile_tables
from tablesafe.structure.overlap import CellOverlap, occupied_cells
from tablesafe.suppress import suppress
from tablesafe.suppress.clock_steps import clock_decided
from tablesafe.suppress.fast import fast_pattern
from tablesafe.suppress.fast_options import FastOptions
from tablesafe.synthetic import problem_from_data, synthetic_data


def grid_with_model(inner, *, sensitive=(), upl=None, contributors=None, empty=(), protected=()):
    """A two-way table with margins that carries its structure (codes 1..R, 1..C, Total)."""
    inner = np.asarray(inner, dtype=float)
    r, c = inner.shape
    ts = TableStructure([Dimension("row", Hierarchy.flat([str(i) for i in range(1, r + 1)])),
                         Dimension("col", Hierarchy.flat([str(j) for j in range(1, c + 1)]))])
    model = compile_tables(ts)
    g = np.zeros((r + 1, c + 1))
    g[1:, 1:] = inner
    g[0, 1:] = inner.sum(axis=0)
    g[1:, 0] = inner.sum(axis=1)
    g[0, 0] = inner.sum()

    def at(i, j):
        return i * (c + 1) + j

    n = (r + 1) * (c + 1)
    status = np.array([SAFE] * n)
    for rc in sensitive:
        status[at(*rc)] = PRIMARY
    for rc in empty:
        status[at(*rc)] = EMPTY
    for rc in protected:
        status[at(*rc)] = PROTECTED
    lv = np.zeros(n)
    for rc, v in (upl or {}).items():
        lv[at(*rc)] = v
    contrib = np.full(n, 10, dtype=int)
    for rc, v in (contributors or {}).items():
        contrib[at(*rc)] = v
    for rc in empty:
        contrib[at(*rc)] = 0
    p = Problem.from_arrays(g.ravel(), ts.relations(), status=status, names=ts.cell_names(),
                            contributors=contrib, upl=lv, lpl=lv, model=model)
    return p, at


def test_overlap_is_nesting_in_every_dimension_with_a_nonempty_common_part():
    p, at = grid_with_model([[40, 30, 20], [10, 50, 60], [5, 5, 5]], empty=[])
    geo = CellOverlap.of(p)
    occ = occupied_cells(p)
    s = at(1, 1)
    cells = np.array([at(1, 0), at(0, 1), at(0, 0), at(1, 1), at(2, 1), at(1, 2), at(2, 0)])
    assert list(geo.overlaps(cells, s, occ)) == [True, True, True, True, False, False, False]
    # row 1 total and column 1 total meet in cell (1, 1): no overlap once it is empty
    p2, at2 = grid_with_model([[0, 30, 20], [10, 50, 60], [5, 5, 5]], empty=[(1, 1)])
    geo2 = CellOverlap.of(p2)
    assert not geo2.overlaps(np.array([at2(0, 1)]), at2(1, 0), occupied_cells(p2))[0]
    assert geo2.overlaps(np.array([at2(0, 2)]), at2(1, 0), occupied_cells(p2))[0]
    # no table structure: no overlap information
    assert CellOverlap.of(Problem.from_arrays([1.0, 2.0, 3.0], [[1, 1, -1]])) is None


def test_audit_ignores_a_singleton_inside_the_target_but_not_elsewhere():
    """Rectangle (1,0),(1,1),(2,0),(2,1): fixing the single-respondent cell (1,1) pins the
    row total (1,0) (which contains it: its respondent is a contributor there) and the
    cell (2,1) (a different respondent's cell: a real insider disclosure)."""
    p, at = grid_with_model([[40, 30, 20], [10, 50, 60], [5, 5, 5]],
                            sensitive=[(1, 1), (1, 0), (2, 1)],
                            upl={(1, 1): 4, (1, 0): 4, (2, 1): 2}, contributors={(1, 1): 1})
    w = [at(1, 1), at(1, 0), at(2, 1), at(2, 0)]
    res = audit(p, w, insider=True)
    assert res.verdict[w[:3]].tolist() == ["protected"] * 3
    f = res.insider_findings
    got = set(zip(f["target"], f["attacker"]))
    attacker = f"sole contributor of {p.names[at(1, 1)]}"
    assert (p.names[at(2, 1)], attacker) in got
    assert (p.names[at(1, 0)], attacker) not in got
    # without the structure the relations tell the same (the row total contains (1,1);
    # tablesafe.structure.insiders reads totals from the relations)
    bare = p.copy(model=None)
    f2 = audit(bare, w, insider=True).insider_findings
    assert set(zip(f2["target"], f2["attacker"])) == got


@pytest.fixture(scope="module")
def table():
    # 2-D, about 1,100 cells, holdings: many single-holding cells
    return problem_from_data(synthetic_data([[3, 10], [2, 3, 4]], 2500, seed=23))


@pytest.fixture(scope="module")
def pattern(table):
    return fast_pattern(table)


@pytest.fixture(scope="module")
def leaning():
    """A 4 x 5 table with published (protected) margins whose rows 2 and 3 hold only
    single-respondent cells: every certificate of a cell in those rows moves another
    single respondent's cell of its row (no singleton-free one exists), so insider
    certificates are needed; row 4 gives them."""
    r, c = 4, 5
    inner = np.arange(1, r * c + 1).reshape(r, c) * 10.0 + 50
    single = {(i, j): 1 for i in (2, 3) for j in range(1, c + 1)}
    sens = [(1, j) for j in range(1, c + 1)] + list(single)
    margins = [(0, j) for j in range(c + 1)] + [(i, 0) for i in range(1, r + 1)]
    p, _ = grid_with_model(inner, sensitive=sens, upl={rc: 8.0 for rc in sens},
                           contributors=single, protected=margins)
    return p, fast_pattern(p)


def test_fast_gives_insider_certificates_that_pass_the_check(leaning):
    table, pattern = leaning
    certs = pattern.certificates
    assert "insider" in certs.columns
    assert (certs["insider"] != "").any()
    assert pattern.stats["insider_unprotected"] == 0
    assert check_certificates(table, pattern.withheld, certs, insiders=True) == []


def test_check_finds_a_missing_insider_certificate(leaning):
    table, pattern = leaning
    certs = pattern.certificates
    outsider_only = certs[certs["insider"] == ""].reset_index(drop=True)
    assert check_certificates(table, pattern.withheld, outsider_only) == []
    gaps = check_certificates(table, pattern.withheld, outsider_only, insiders=True)
    assert gaps and all(g.reason.startswith("every certificate moves") for g in gaps)


def _insider_interval_ok(problem: Problem, withheld: np.ndarray, t: int, s: int) -> bool:
    """Independent LP: with cell s fixed at its value, does t still reach its levels?"""
    A = problem.relations.tocsc()
    w = np.flatnonzero(withheld)
    pub = np.flatnonzero(~withheld)
    rhs = A @ problem.value - A[:, pub] @ problem.value[pub]
    Aw = A[:, w]
    lo = problem.lower[w].copy()
    hi = np.where(np.isfinite(problem.upper[w]), problem.upper[w], np.inf)
    k = int(np.flatnonzero(w == s)[0])
    lo[k] = hi[k] = problem.value[s]
    bounds = [(a, None if not np.isfinite(b) else b) for a, b in zip(lo, hi)]
    c = np.zeros(len(w))
    c[int(np.flatnonzero(w == t)[0])] = 1.0
    v = problem.value[t]
    tol = 1e-6 * max(1.0, abs(v))
    low = linprog(c, A_eq=Aw, b_eq=rhs, bounds=bounds, method="highs")
    high = linprog(-c, A_eq=Aw, b_eq=rhs, bounds=bounds, method="highs")
    up = np.inf if high.status == 3 else -high.fun
    need_dn = min(problem.lpl[t], v - problem.lower[t])
    return up >= v + problem.upl[t] - tol and low.fun <= v - need_dn + tol


def test_independent_lp_confirms_insider_certificates(leaning):
    """For targets whose outsider certificate moves a single-respondent cell, an
    independent LP with that cell fixed still reaches the protection levels."""
    table, pattern = leaning
    certs = pattern.certificates
    pairs = certs.loc[certs["insider"] != "", ["target", "insider"]].drop_duplicates()
    assert len(pairs) >= 5
    index = pd.Index(table.names.astype(str))
    checked = 0
    for tname, snames in pairs.head(25).itertuples(index=False):
        for sname in str(snames).split("+"):  # one certificate may keep several fixed
            t, s = index.get_loc(str(tname)), index.get_loc(sname)
            assert _insider_interval_ok(table, pattern.withheld, t, s), (tname, sname)
            checked += 1
    assert checked >= 5


def test_singletons_a_target_overlaps_may_move_in_its_first_certificate(table):
    """The respondent of a single-respondent cell that overlaps the target is one of the
    target's contributors (allowed for by the rule), so such cells are no reason for an
    insider certificate: with the strict search that may add complements
    (``strict_adds``) every certificate on this table is singleton-free in that sense
    and the insider check passes without any."""
    pattern = fast_pattern(table, options=FastOptions(strict_adds=True))
    assert pattern.stats["certificates_with_singletons"] == 0
    assert (pattern.certificates["insider"] == "").all()
    assert check_certificates(table, pattern.withheld, pattern.certificates, insiders=True) == []
    geo, occ = CellOverlap.of(table), occupied_cells(table)
    single = np.asarray(table.contributors) == 1
    certs = pattern.certificates
    index = pd.Index(table.names.astype(str))
    t_idx = index.get_indexer(certs["target"].astype(str))
    c_idx = index.get_indexer(certs["cell"].astype(str))
    moved_single = (c_idx != t_idx) & single[c_idx]
    assert moved_single.any()  # the case occurs on this table ...
    for t, s_cell in zip(t_idx[moved_single][:200], c_idx[moved_single][:200]):
        assert geo.overlaps(np.array([s_cell]), int(t), occ)[0]  # ... and only with overlap


def test_certificates_may_move_singletons_when_insider_certificates_back_them(table, pattern):
    """By default a target without a singleton-free certificate among the cells already
    withheld gets one that may move single respondents' cells; each such cell that does
    not overlap the target then has a certificate keeping it fixed, and the pattern
    withholds less than the strict search's."""
    strict = fast_pattern(table, options=FastOptions(strict_adds=True))
    assert pattern.stats["certificates_with_singletons"] > 0
    assert (pattern.certificates["insider"] != "").any()
    assert check_certificates(table, pattern.withheld, pattern.certificates, insiders=True) == []
    cost = float(table.cost[pattern.withheld & ~table.sensitive].sum())
    assert cost <= float(table.cost[strict.withheld & ~table.sensitive].sum())


def test_dispatcher_proves_insiders_by_certificates(table):
    pat = suppress(table, "fast", certificates=True)
    assert pat.stats["audit"] == "certificates"
    assert pat.stats["insider_certificate_gaps"] == 0
    res = audit(table, pat.withheld, insider=True)
    assert res.ok or res.failing.size == 0
    singles = res.insider_findings
    assert singles.empty or (singles["kind"] != "singleton").all()


def test_two_workers_give_a_proved_deterministic_pattern(table, pattern):
    """Targets split over two processes: the union of their patterns is proved by the
    union of their certificates (insiders included), and a rerun gives the same pattern."""
    from tablesafe.suppress.fast_options import FastOptions

    two = FastOptions(groups=2)
    a = fast_pattern(table, workers=2, options=two)
    b = fast_pattern(table, workers=2, options=two)
    assert a.stats["workers"] == 2
    assert np.array_equal(a.withheld, b.withheld)
    assert a.certificates.equals(b.certificates)
    assert check_certificates(table, a.withheld, a.certificates, insiders=True) == []
    assert a.withheld[table.sensitive].all()
    assert pattern.stats["workers"] == 1


def test_lp_methods_attack_with_every_non_overlapping_single_respondent():
    """``optimal``/``modular`` run an insider attack for each withheld single-respondent
    cell that does not overlap the target, not only for the target's relation siblings
    (the audit's attackers; the generated 1k table of benchmarks/unseen_tables.py had 14
    insider findings against ``optimal`` before)."""
    from tablesafe.suppress.attacker import Bounds
    from tablesafe.suppress.protection import keys_for

    p, at = grid_with_model([[40, 30, 20], [10, 50, 60], [5, 5, 5]],
                            sensitive=[(1, 1), (2, 2), (1, 0)], upl={(1, 1): 4.0, (2, 2): 4.0, (1, 0): 4.0},
                            contributors={(2, 2): 1, (1, 0): 1})
    withheld = p.sensitive.copy()
    keys = keys_for(p, Bounds.of(p), withheld, np.array([at(1, 1)]))
    insiders = {s for _, _, s in keys if s >= 0}
    assert at(2, 2) in insiders  # neither in its row nor in its column
    assert at(1, 0) not in insiders  # the row total contains the target: overlap


def test_a_search_late_in_its_time_limit_hurries(table, pattern, monkeypatch):
    """Past ``HURRY_SHARE`` of its time limit the search may add complements while it
    keeps singletons fixed (the quicker search): with a limit already spent it is the
    ``strict_adds`` search from the first target, and still proved. (The certificates
    without a search that come past ``CHAIN_SHARE``, or earlier when the time left
    needs them, are put off here; test_chains.py covers them.)"""
    import tablesafe.suppress.fast as fast
    import tablesafe.suppress.fast_first_pass as first_pass

    monkeypatch.setattr(fast, "CHAIN_SHARE", 1e30)
    monkeypatch.setattr(first_pass, "chains_due", lambda *a: False)
    strict = fast_pattern(table, options=FastOptions(strict_adds=True))
    hurried = fast_pattern(table, time_limit=1e-9)
    assert hurried.stats["hurried_after_targets"] == 0
    assert np.array_equal(hurried.withheld, strict.withheld)
    assert check_certificates(table, hurried.withheld, hurried.certificates, insiders=True) == []
    assert pattern.stats["hurried_after_targets"] is None


def test_the_steps_the_clock_cut_short_are_in_the_stats(table, pattern):
    """A limit spent before the search starts hurries it by its work bound (a share of
    the limit: none here, the same in every run, so ``clock_decided`` leaves it out),
    chains the targets, leaves out the second order of targets and stops the second pass
    at the chain time (the clock: each named). When the work bound is out of reach the
    clock's guard hurries the search, which is named too, also when the certificates
    complete another method's pattern (``dispatch._by_certificates``). An unlimited run
    sets none of them."""
    from tablesafe.suppress import dispatch

    assert pattern.stats["other_order_skipped"] is False
    assert pattern.stats["second_pass_clock_stopped"] is False
    assert pattern.stats["hurried_by"] is None
    both = FastOptions(order="both", cleanup_effort=1.0)
    late = fast_pattern(table, time_limit=1e-9, options=both)
    assert late.stats["hurried_after_targets"] == 0 and late.stats["hurried_by"] == "work"
    assert late.stats["other_order_skipped"] is True and late.stats["other_order_skipped_by"] == "clock"
    assert late.stats["second_pass_clock_stopped"] is True
    named = clock_decided(late.stats)
    assert "the certificates' search (hurried)" not in named and len(named) >= 2
    assert "the certificates' second pass (releasing cells)" in named
    assert check_certificates(table, late.withheld, late.certificates, insiders=True) == []
    guarded = fast_pattern(table, time_limit=1e-9, hurry_work=1e9, options=both)
    assert guarded.stats["hurried_after_targets"] == 0 and guarded.stats["hurried_by"] == "clock"
    assert guarded.stats["other_order_skipped_by"] == "clock"
    assert len(clock_decided(guarded.stats)) >= 3
    _, _, stats = dispatch._by_certificates(table, "modular", table.sensitive.copy(), {}, time_limit=1e-9,
                                            progress=False, seed=0, singleton=True, capacity=False,
                                            whole_limit=1e9)
    assert stats["hurried_after_targets"] == 0 and stats["hurried_by"] == "clock"
    assert "the certificates' search (hurried)" in clock_decided(stats)


def test_a_search_hurries_after_its_work_whatever_the_clock(table, pattern, monkeypatch):
    """The search hurries after ``hurry_work`` seconds of LP work, not of the clock: with
    a limit the clock never nears, a work bound of a third of an unhurried run's work
    hurries it at the same target in two runs, the second with every LP a millisecond
    slower, with the same pattern (``hurried_by`` is ``"work"``); the pattern is proved."""
    import time as clock

    from tablesafe.audit import lp as lpmod
    from tablesafe.suppress.fast import SEARCH_WORK_PER_SECOND

    third = pattern.stats["first_pass_work"] / 3 / SEARCH_WORK_PER_SECOND
    runs = [fast_pattern(table, time_limit=1e6, hurry_work=third)]
    real_run = lpmod._MeteredHighs.run

    def slow_run(self):
        clock.sleep(0.001)
        return real_run(self)

    monkeypatch.setattr(lpmod._MeteredHighs, "run", slow_run)
    runs.append(fast_pattern(table, time_limit=1e6, hurry_work=third))
    assert [r.stats["hurried_by"] for r in runs] == ["work", "work"]
    assert 0 < runs[0].stats["hurried_after_targets"] == runs[1].stats["hurried_after_targets"]
    assert runs[0].stats["hurried_after_targets"] < pattern.stats["targets"]
    assert np.array_equal(runs[0].withheld, runs[1].withheld)
    assert check_certificates(table, runs[0].withheld, runs[0].certificates, insiders=True) == []


def test_the_second_order_is_left_out_by_its_work_or_its_guard():
    from tablesafe.suppress.fast import (
        BOTH_ORDERS_SHARE,
        SEARCH_WORK_PER_SECOND,
        _other_order_skipped,
    )

    units = int(SEARCH_WORK_PER_SECOND)  # one second of work
    assert _other_order_skipped(1.0, units, None) is None
    assert _other_order_skipped(1.0, units, 10.0) is None
    assert _other_order_skipped(1.0, 5 * units, 10.0) == "work"
    assert _other_order_skipped(BOTH_ORDERS_SHARE * 10.0 * 1.5, units, 10.0) == "clock"


def test_insider_gaps_are_checked_whatever_the_table_size(table, monkeypatch):
    """Targets whose single respondents were left without a certificate get those
    attacks by LP (and a repair) on any table size while time is left; they used to be
    flagged unchecked above ``LP_REPAIR_MAX_CELLS`` (on the generated linked pair,
    12,086 pairs on 622 targets, all then found protected). The gaps are made here by
    a search that never finds an insider certificate, and the table counts as large."""
    import tablesafe.suppress.dispatch as dispatch
    from tablesafe.suppress.fast_first_pass import FirstPass

    def none_found(self, t, leaning):
        self.insider_pairs += len(leaning)
        self.insider_open.extend((t, int(s)) for s in leaning)

    monkeypatch.setattr(dispatch, "LP_REPAIR_MAX_CELLS", 10)
    monkeypatch.setattr(FirstPass, "_insider_certificates", none_found)
    pat = suppress(table, "fast")
    assert pat.stats["insider_certificate_gaps"] > 0
    assert pat.stats["insider_gaps_checked"] > 0
    assert "singleton_attacks_checked" not in pat.stats
    res = audit(table, pat.withheld, insider=True)
    assert res.ok and res.insider_findings.empty


def _moved_by(problem: Problem, certs: pd.DataFrame) -> np.ndarray:
    mask = np.zeros(problem.n, dtype=bool)
    index = pd.Index(problem.names.astype(str))
    mask[index.get_indexer(certs["cell"].astype(str))] = True
    return mask


def test_the_cells_only_insider_certificates_need_are_counted(table, pattern):
    """``insider_added`` counts the cells an insider certificate brought into the pattern:
    each is moved by an insider certificate, and every complement that only insider
    certificates move is among them, and their value is within the secondaries'. Without
    singleton protection there are none."""
    problem, pat = table, pattern
    certs = pat.certificates
    by_insiders = _moved_by(problem, certs[certs["insider"] != ""])
    by_outsiders = _moved_by(problem, certs[certs["insider"] == ""])
    only_insiders = by_insiders & ~by_outsiders & ~problem.sensitive
    assert only_insiders.any()  # the case occurs on this table
    # the counted cells: complements moved by an insider certificate, at least those
    # that only insider certificates move
    assert pat.stats["insider_added"] >= int(only_insiders.sum())
    assert pat.stats["insider_added"] <= int((by_insiders & pat.withheld).sum())
    assert pat.stats["insider_added_value"] >= float(np.abs(problem.value[only_insiders]).sum()) - 1e-6
    secondary_value = float(np.abs(problem.value[pat.withheld & ~problem.sensitive]).sum())
    assert pat.stats["insider_added_value"] <= secondary_value + 1e-6
    outsiders_only = fast_pattern(problem, singleton=False)
    assert outsiders_only.stats["insider_added"] == 0
    assert outsiders_only.stats["insider_added_value"] == 0.0


def test_insider_certificates_found_within_a_few_hops_leave_the_pattern_as_it_was(monkeypatch):
    """``FastOptions.insider_inner_hops`` (fifty-eighth session): an insider's certificate
    is first sought among the withheld cells within a few relation hops of its target,
    before the first box, on regions that grow hop by hop (sixty-first session). It adds
    no cell either way, so ``fast`` withholds the same cells and protects the same
    insiders with the reach as without it; some insiders' certificates come from those
    hops, some from fewer than the most, and every certificate passes the check."""
    import tablesafe.suppress.local.search as search

    # on the 13,851-cell three-way table the rule applies to boxes of thousands of
    # withheld cells; here, on a table of 1,040 cells, to boxes of more than 20
    monkeypatch.setattr(search, "INSIDER_HOPS_FROM", 20)
    monkeypatch.setattr(search, "INSIDER_LADDER_MIN", 5)
    problem = problem_from_data(synthetic_data([[3, 4], [2, 5], [4]], 800, seed=3, holding_cohesion=0.7), p=15)
    without = fast_pattern(problem, options=FastOptions(insider_inner_hops=0))
    within = fast_pattern(problem, options=FastOptions(insider_inner_hops=8))
    hops = {int(how.removeprefix("inner-hops")) for how in within.stats["found_by"] if how.startswith("inner-hops")}
    # the regions grow hop by hop: certificates from more than one reach, none beyond 8
    assert len(hops) > 1 and max(hops) <= 8
    assert not any("inner-hops" in how for how in without.stats["found_by"])
    assert np.array_equal(within.withheld, without.withheld)
    assert within.stats["insider_unprotected"] == without.stats["insider_unprotected"] == 0
    assert check_certificates(problem, within.withheld, within.certificates, insiders=True) == []


def test_insider_certificates_among_withheld_cells_need_no_cost(monkeypatch):
    """An insider's certificate among the cells already withheld adds no cell, so its LP
    seeks only a feasible point (``LocalSearch.solve(..., any_one=True)``, sixty-first
    session): ``fast`` withholds the same cells as with the cost minimised, the
    certificates differ, and every one of them passes the check."""
    import tablesafe.suppress.local.search as search

    problem = problem_from_data(synthetic_data([[3, 4], [2, 5], [4]], 800, seed=3, holding_cohesion=0.7), p=15)
    any_one = fast_pattern(problem)
    solve = search.LocalSearch.solve
    monkeypatch.setattr(search.LocalSearch, "solve",
                        lambda self, query, cells, any_one=False: solve(self, query, cells))
    costed = fast_pattern(problem)
    assert np.array_equal(any_one.withheld, costed.withheld)
    assert any_one.stats["insider_unprotected"] == costed.stats["insider_unprotected"] == 0
    insiders = any_one.certificates["insider"].astype(str) != ""
    assert insiders.any()
    assert not any_one.certificates.equals(costed.certificates)
    assert check_certificates(problem, any_one.withheld, any_one.certificates, insiders=True) == []
