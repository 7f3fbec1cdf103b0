"""Subtables protected by cut generation (:mod:`tablesafe.suppress.subtable_cuts`) and the
capacity inequalities it relies on."""

from __future__ import annotations

import numpy as np
import pytest
from _suppress_gen import independent_audit, table_problem
from hypothesis import HealthCheck, given, settings
from test_suppress import TWO_BY_THREE, brute_force_min_cost, grid_problem

from tablesafe.suppress import suppress
from tablesafe.suppress.attacker import DOWN, UP, Attack, Bounds, cut_from
from tablesafe.suppress.compact import attacks_of, compact_pattern
from tablesafe.suppress.modular import modular_pattern
from tablesafe.suppress.protection import candidates, check, failing
from tablesafe.suppress.subtable_cuts import protect_subtable


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(**TWO_BY_THREE)
def test_cut_generation_matches_brute_force_on_two_way_tables(interior, sens, frac):
    """On a 2 x 3 table with totals the pattern found by cut generation costs the
    brute-force minimum over every pattern the independent auditor passes (Fischetti and
    Salazar's capacity inequalities are exact for an attacker against sums, seed 002),
    passes that auditor, and asks each target to move by at least its level."""
    grid = np.array(interior, dtype=float).reshape(2, 3)
    levels = {(i, j): (np.ceil(frac * grid[i - 1, j - 1]), np.ceil(frac * grid[i - 1, j - 1])) for i, j in sens}
    p = grid_problem(grid, levels)
    b = Bounds.of(p, singleton=False)
    res = protect_subtable(p, b, candidates(p, b), {}, 60.0, 0.0, 0)
    assert res is not None and res.safe
    assert not independent_audit(p, res.withheld, singleton=False)
    cost = float(p.cost[res.withheld & ~p.sensitive].sum())
    assert cost == pytest.approx(brute_force_min_cost(p, singleton=False))
    for k in np.flatnonzero(p.sensitive):
        assert res.need_up[k] >= b.req_up[k] - 1e-6 and res.need_down[k] >= b.req_dn[k] - 1e-6


@pytest.mark.parametrize("seed,shape,units", [(21, [[2, 2], [3], [2]], 90), (22, [[3], [2, 2]], 80)])
def test_cut_generation_costs_what_the_compact_model_costs(seed, shape, units):
    """Against the outsiders and the same insider attacks, cut generation and the compact
    model (one copy of the table per attack) reach the same optimum on a generated table
    with holdings, and both patterns pass every attack they were given."""
    from tablesafe.structure.insiders import InsiderModel

    p = table_problem(seed, shape, units=units)
    b = Bounds.of(p, singleton=True)
    model = InsiderModel.of(p)
    single = np.flatnonzero(b.singleton)
    insiders = {int(k): single[~model.overlaps(single, int(k))][:3] for k in np.flatnonzero(p.sensitive)}
    insiders = {k: v for k, v in insiders.items() if len(v)}
    cand = candidates(p, b)
    atts = attacks_of(b, p.sensitive, insiders)
    compact = compact_pattern(p, b, cand, atts, time_limit=60, mip_gap=0.0)
    assert compact.optimal and compact.withheld is not None
    # every insider of the compact model at once (rounds enough to add them all)
    cuts = protect_subtable(p, b, cand, insiders, 60.0, 0.0, 0, rounds=len(atts))
    assert cuts is not None and cuts.safe
    cost = float(p.cost[cuts.withheld & ~p.sensitive].sum())
    # the rounds add only the insider attacks each pattern fails, so the pattern found
    # may be cheaper than the compact model's (which holds all of them from the start)
    assert cost <= compact.cost * (1 + 1e-9)
    from tablesafe.suppress.protection import run_attacks

    given = run_attacks(p, b, cuts.withheld.astype(float), atts, want_dual=False)
    assert not failing(b, given)


def test_a_subtable_without_candidates_keeps_its_sensitive_cells():
    """With no cell admissible as a complement the sensitive cells alone are the pattern
    (the master has no variable; a first version read that as no pattern at all and left
    the subtable to the full-table repair)."""
    grid = np.array([[5.0, 7.0, 9.0], [4.0, 6.0, 8.0]])
    p = grid_problem(grid, {(1, 1): (2.0, 2.0), (1, 2): (2.0, 2.0), (2, 1): (2.0, 2.0), (2, 2): (2.0, 2.0)})
    b = Bounds.of(p, singleton=False)
    none = np.zeros(p.n, dtype=bool)
    res = protect_subtable(p, b, none, {}, 10.0, 1e-4, 0)
    assert res is not None and res.safe
    assert np.array_equal(res.withheld, p.sensitive)


def test_a_right_hand_side_of_rounding_error_asks_for_no_complement():
    """A capacity inequality whose sensitive cells already give the level up to rounding
    error (1e-13 on a level of hundreds, measured on a subtable of a generated three-way
    table) has no right-hand side left: scaled to 1 in the master it demanded a
    complement the level does not need, and the master's pattern cost 15 M where the
    compact model's cost nothing."""
    level = 0.1 + 0.2 + 1000.0  # rounding in the level's own arithmetic
    given = level - 1e-13  # what the fixed sensitive cell can move, computed another way
    bounds = Bounds(dn=np.array([0.0, given, 50.0]), up=np.array([0.0, given, 50.0]),
                    tdn=np.array([level, given, 50.0]), tup=np.array([level, given, 50.0]),
                    req_up=np.array([level, 0.0, 0.0]), req_dn=np.array([level, 0.0, 0.0]),
                    req_sl=np.zeros(3), singleton=np.zeros(3, dtype=bool))
    att = Attack(0, UP, -1, 0.0, level, dual_cells=np.array([1, 2]), dual_d=np.array([1.0, 1.0]))
    fixed = np.array([True, True, False])
    cut = cut_from(att, bounds, fixed)
    assert cut.rhs <= 0
    # a real shortfall still gives its inequality
    att2 = Attack(0, DOWN, -1, 0.0, level, dual_cells=np.array([1, 2]), dual_d=np.array([1.0, 1.0]))
    short = Bounds(dn=np.array([0.0, level / 2, 50.0]), up=bounds.up, tdn=bounds.tdn, tup=bounds.tup,
                   req_up=bounds.req_up, req_dn=bounds.req_dn, req_sl=bounds.req_sl, singleton=bounds.singleton)
    cut2 = cut_from(att2, short, fixed)
    assert cut2.rhs == pytest.approx(level / 2) and list(cut2.idx) == [2]


def test_modular_subtable_models_both_give_safe_patterns_and_a_bad_name_is_refused():
    """``modular`` with either subtable model, then the dispatcher's repair: both patterns
    pass the attacker check; an unknown model name is refused before any work."""
    p = table_problem(22, [[3], [2, 2]], units=80)
    b = Bounds.of(p, singleton=False)
    w_cuts, st = modular_pattern(p, b, subtable_model="cuts", workers=1)
    w_compact, _ = modular_pattern(p, b, subtable_model="compact", workers=1)
    assert st["subtable_model"] == "cuts" and st["subtable_failures"] == 0
    assert w_cuts[p.sensitive].all() and w_compact[p.sensitive].all()
    pat = suppress(p, "modular", singleton=False)
    assert not failing(b, check(p, b, pat.withheld))
    with pytest.raises(ValueError, match="subtable_model"):
        modular_pattern(p, b, subtable_model="benders")


def test_the_masters_options_are_ones_highs_takes():
    """Each of ``MASTER_OPTIONS`` is an option HiGHS knows, of the type given, and a
    subtable's master runs with it (HiGHS answers a misspelt name or a wrong type with
    a warning and keeps its default, which would silently undo the setting)."""
    import highspy

    from tablesafe.suppress.subtable_cuts import MASTER_OPTIONS, _Cuts

    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    for name, value in MASTER_OPTIONS.items():
        assert h.setOptionValue(name, value) == highspy.HighsStatus.kOk, name
    p = table_problem(22, [[3], [2, 2]], units=80)
    b = Bounds.of(p, singleton=False)
    cuts = _Cuts(p, b, candidates(p, b), 1e-3, 0)
    for name, value in MASTER_OPTIONS.items():
        status, got = cuts.master.h.getOptionValue(name)
        assert status == highspy.HighsStatus.kOk and got == value, name


def _with_every_insider():
    """A generated table with holdings, its bounds with single respondents, every
    insider of each sensitive cell (cells not nested in it) and the candidates."""
    from tablesafe.structure.insiders import InsiderModel

    p = table_problem(21, [[2, 2], [3], [2]], units=90)
    b = Bounds.of(p, singleton=True)
    model = InsiderModel.of(p)
    single = np.flatnonzero(b.singleton)
    insiders = {int(k): single[~model.overlaps(single, int(k))] for k in np.flatnonzero(p.sensitive)}
    return p, b, {k: v for k, v in insiders.items() if len(v)}, candidates(p, b)


def test_a_subtable_short_of_work_leaves_its_insiders_to_the_repair(monkeypatch):
    """A subtable whose outsiders' pattern took more than ``INSIDER_ROUND_SHARE`` of its
    work gets no insider round (its pattern is the outsiders'); with the share not
    reached the same subtable runs its round, which adds the failing insider attacks."""
    from tablesafe.suppress import subtable_cuts as sc

    p, b, insiders, cand = _with_every_insider()
    calls: list[int] = []
    real = sc.failing_insiders

    def counted(*a, **kw):
        out = real(*a, **kw)
        calls.append(len(out))
        return out

    monkeypatch.setattr(sc, "failing_insiders", counted)
    with_round = protect_subtable(p, b, cand, insiders, 60.0, 0.0, 0)
    assert with_round is not None and with_round.safe and calls and calls[0] > 0
    calls.clear()
    monkeypatch.setattr(sc, "INSIDER_ROUND_SHARE", 0.0)
    without = protect_subtable(p, b, cand, insiders, 60.0, 0.0, 0)
    assert without is not None and without.safe and not calls
    outsiders = [key for key, _ in without.tables if key[2] < 0]
    assert outsiders and not failing(b, check(p, Bounds.of(p, singleton=False), without.withheld))


def test_a_subtable_past_its_guard_takes_its_checks_tables_for_its_moves(monkeypatch):
    """When the clock's guard passes before the final pattern's sparse certificates are
    found, the subtable keeps its pattern and takes the tables of the check that passed
    it (feasible tables of the subtable) for the moves it carries, with no LP; the clock
    records that its guard ended the work."""
    from tablesafe.suppress import subtable_cuts as sc
    from tablesafe.suppress.attack_runs import OutOfTime
    from tablesafe.suppress.work_clock import WorkClock

    p = table_problem(22, [[3], [2, 2]], units=80)
    b = Bounds.of(p, singleton=False)
    cand = candidates(p, b)
    full = protect_subtable(p, b, cand, {}, 60.0, 0.0, 0)
    assert full is not None and full.safe and full.tables
    real = sc.run_attacks

    def no_time_for_certificates(*a, **kw):
        if not kw.get("want_dual", True) and kw.get("sparse"):
            raise OutOfTime
        return real(*a, **kw)

    monkeypatch.setattr(sc, "run_attacks", no_time_for_certificates)
    clock = WorkClock.for_limit(60.0)
    res = protect_subtable(p, b, cand, {}, 60.0, 0.0, 0, clock=clock)
    assert res is not None and res.safe and clock.guarded
    assert np.array_equal(res.withheld, full.withheld)
    assert res.tables and (res.need_up > 0).any()
    for key, att in res.tables:
        assert att.ok and key[2] < 0
        dev = np.zeros(p.n)
        dev[att.cells] = att.dev
        assert np.allclose(p.relations @ dev, 0.0, atol=1e-6 * max(1.0, float(np.abs(dev).max())))


def test_a_subtables_master_rounds_stop_at_the_clocks_guard(monkeypatch):
    """The attacks of every master round (on the LP relaxation and on each integral
    pattern) are given the clock's guard as their deadline: on a large block one round
    takes seconds, and a round that runs past the guard ends the subtable there with
    its last pattern, unsafe, for the full-table repair (found on a generated flat
    40 x 25 x 6 table, whose one subtable ran 127 s at a 20 s limit)."""
    from tablesafe.suppress import optimal as opt
    from tablesafe.suppress import subtable_cuts as sc
    from tablesafe.suppress.attack_runs import OutOfTime
    from tablesafe.suppress.work_clock import WorkClock

    p = table_problem(22, [[3], [2, 2]], units=80)
    b = Bounds.of(p, singleton=False)
    cand = candidates(p, b)
    clock = WorkClock.for_limit(60.0)
    seen: list[float | None] = []
    real = sc.run_attacks

    def past_the_guard(*a, **kw):
        seen.append(kw.get("deadline"))
        if kw.get("deadline") is not None:
            raise OutOfTime
        return real(*a, **kw)

    monkeypatch.setattr(sc, "run_attacks", past_the_guard)
    monkeypatch.setattr(opt, "run_attacks", past_the_guard)
    res = protect_subtable(p, b, cand, {}, 60.0, 0.0, 0, clock=clock)
    assert seen and all(d == clock.guard for d in seen)
    assert clock.guarded
    assert res is not None and not res.safe and not res.tables
    assert res.withheld[p.sensitive].all()


def test_the_tables_handed_on_answer_the_insiders_check(monkeypatch):
    """With ``REUSE_MOVES`` a subtable finds the tables it hands on before its insiders'
    check, which takes them for the outsiders' attacks: the same pattern as without, the
    insiders' check given the tables, and about the same LP work (here an insider round
    follows, so the tables found first for the first pattern are found again for the
    next; where none follows, the check's LPs for the outsiders are saved)."""
    from tablesafe.audit.lp import lp_work
    from tablesafe.suppress import subtable_cuts as sc

    p, b, insiders, cand = _with_every_insider()
    real = sc.failing_insiders
    given: list[int] = []

    def seen(*a, known=None, **kw):
        given.append(len(known or {}))
        return real(*a, known=known, **kw)

    monkeypatch.setattr(sc, "failing_insiders", seen)
    runs = {}
    for reuse in (False, True):
        monkeypatch.setattr(sc, "REUSE_MOVES", reuse)
        given.clear()
        w0 = lp_work()
        res = protect_subtable(p, b, cand, insiders, 60.0, 0.0, 0)
        assert res is not None and res.safe and given
        runs[reuse] = (res.withheld, lp_work() - w0, given[0])
    assert (runs[True][0] == runs[False][0]).all()
    assert runs[False][2] == 0 and runs[True][2] > 0
    assert runs[True][1] <= 1.05 * runs[False][1]


def test_a_subtable_hands_on_its_insiders_tables(monkeypatch):
    """A subtable hands on the tables of its single respondents' passing attacks too
    (``HAND_ON_INSIDERS``): each leaves the insider's cell at its value, meets the
    relations within the bounds and moves its target by its level on the subtable's
    pattern, so the full-table check can take it instead of solving that attack's LP."""
    from tablesafe.suppress import subtable_cuts as sc
    from tablesafe.suppress.subtable_tables import tables_under

    p, b, insiders, cand = _with_every_insider()
    res = protect_subtable(p, b, cand, insiders, 60.0, 0.0, 0)
    assert res is not None and res.safe
    own = [(key, np.asarray(a.cells), np.asarray(a.dev)) for key, a in res.tables if key[2] >= 0]
    assert own
    assert set(tables_under(p, b, res.withheld.astype(float), own)) == {key for key, _, _ in own}
    monkeypatch.setattr(sc, "HAND_ON_INSIDERS", False)
    plain = protect_subtable(p, b, cand, insiders, 60.0, 0.0, 0)
    assert plain is not None and np.array_equal(plain.withheld, res.withheld)
    assert len([key for key, _ in plain.tables if key[2] >= 0]) < len(own)
