"""The compact (one-model) subtable solver, modular's carried levels, ``auto`` and progress."""

from __future__ import annotations

import io

import numpy as np
import pytest
from _suppress_gen import independent_audit
from hypothesis import HealthCheck, given, settings
from test_suppress import TWO_BY_THREE, brute_force_min_cost, grid_problem

from tablesafe.progress import Progress
from tablesafe.suppress import suppress
from tablesafe.suppress.attacker import UP, Bounds
from tablesafe.suppress.compact import attacks_of, compact_pattern
from tablesafe.suppress.dispatch import auto_time_limit, choose_method
from tablesafe.suppress.modular import modular_pattern
from tablesafe.suppress.protection import candidates, check, failing
from tablesafe.synthetic import synthetic_problem


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(**TWO_BY_THREE)
def test_compact_model_matches_brute_force_on_two_way_tables(interior, sens, frac):
    """On a 2 x 3 table with totals the compact model (deviations capped at the level) is
    exact: its cost equals the brute-force minimum over every pattern the independent
    auditor passes, its pattern passes that auditor, and its certificates move each target
    by at least its level."""
    grid = np.array(interior, dtype=float).reshape(2, 3)
    levels = {(i, j): (np.ceil(frac * grid[i - 1, j - 1]), np.ceil(frac * grid[i - 1, j - 1])) for i, j in sens}
    p = grid_problem(grid, levels)
    b = Bounds.of(p, singleton=False)
    atts = attacks_of(b, p.sensitive)
    res = compact_pattern(p, b, candidates(p, b), atts)
    assert res.withheld is not None and res.optimal
    assert not independent_audit(p, res.withheld, singleton=False)
    assert res.cost == pytest.approx(brute_force_min_cost(p, singleton=False))
    for t, (k, d, _) in enumerate(atts):
        req = b.req_up[k] if d == UP else b.req_dn[k]
        col = int(np.searchsorted(res.movable, k))
        assert d * res.moves[t, col] >= req - 1e-6


def test_compact_certificates_keep_the_insiders_cell_fixed():
    """An insider attack in the model: its certificate leaves the insider's own cell alone."""
    grid = np.array([[5.0, 7.0, 9.0], [4.0, 6.0, 8.0]])
    p = grid_problem(grid, {(1, 1): (2.0, 2.0), (2, 2): (2.0, 2.0)})
    b = Bounds.of(p, singleton=False)
    k, s = 1 * 4 + 1, 2 * 4 + 2  # R1|C1 attacked by the respondent of R2|C2
    atts = attacks_of(b, p.sensitive, {k: np.array([s])})
    res = compact_pattern(p, b, candidates(p, b), atts)
    assert res.withheld is not None
    for t, (kk, _, ins) in enumerate(atts):
        if ins >= 0:
            assert not res.moved(t, np.array([ins]))[0]


def test_compact_model_without_attacks_asks_no_moves():
    """A subtable whose withheld cells have no level to protect (no attack): its pattern is
    the sensitive cells and every cell's asked move is zero, an array like any other
    result's (modular records it for the carried levels and failed on None)."""
    grid = np.array([[5.0, 7.0, 9.0], [4.0, 6.0, 8.0]])
    p = grid_problem(grid, {})
    b = Bounds.of(p, singleton=False)
    res = compact_pattern(p, b, candidates(p, b), [])
    assert res.withheld is not None and not res.withheld.any()
    assert res.need_up is not None and res.need_down is not None
    assert res.need_up.shape == (p.n,) and not res.need_up.any() and not res.need_down.any()


def test_modular_pattern_with_carried_levels_is_safe_and_not_dearer_than_section6_levels():
    """HiTaS with the moves the subtable certificates ask of each complement: the pattern
    (after the dispatcher's repair) passes the attacker check, and before any repair it
    costs no more than with seed 000 section 6's row-maximum levels on this table."""
    p = synthetic_problem("1k", seed=5, use_holdings=False)
    b = Bounds.of(p, singleton=False)
    w_cert, st_cert = modular_pattern(p, b)
    w_row, _ = modular_pattern(p, b, certified_levels=False)
    cost = lambda w: float(p.cost[w & ~p.sensitive].sum())
    assert cost(w_cert) <= cost(w_row)
    assert st_cert["subtable_model"] == "cuts" and st_cert["subtable_failures"] == 0
    pat = suppress(p, "modular", singleton=False)
    assert not failing(b, check(p, b, pat.withheld))


def test_auto_chooses_by_structure_and_size_and_says_why(benchmarks_dir):
    """``auto``: modular on a hierarchical table, optimal without table structure; the
    stats name the choice and the reason."""
    from tablesafe.io.jj import read_jj

    p = synthetic_problem("1k", seed=2, use_holdings=False)
    assert choose_method(p)[0] == "modular"
    pat = suppress(p, "auto", singleton=False)
    assert pat.stats["method_chosen"] == "modular" and "subtables" in pat.stats["method_reason"]
    jj = read_jj(benchmarks_dir / "castro" / "TARGUS.jj")
    assert choose_method(jj)[0] == "optimal"
    assert auto_time_limit(2_000) == 100.0 and auto_time_limit(10**7) == 900.0


def test_progress_writes_plain_lines_when_not_a_terminal():
    """A log file gets timestamped lines with counts and the time left (a live display
    would draw nothing there), throttled, and always the closing line."""
    out = io.StringIO()
    rep = Progress("modular: subtables", total=10, stream=out, every=0.0)
    rep.update(5, "5 new complements")
    rep.close()
    lines = out.getvalue().splitlines()
    assert len(lines) == 2
    assert "modular: subtables, 5/10, about" in lines[0] and "5 new complements" in lines[0]
    assert "10/10" in lines[1]
    quiet = io.StringIO()
    rep = Progress("x", total=3, stream=quiet, every=3600.0)
    rep.update(1)
    rep.update(2)
    assert len(quiet.getvalue().splitlines()) == 1


def test_progress_always_writes_the_first_message_of_a_stage():
    """Throttling keeps a log short within a stage but never hides that a new stage
    began (a long audit after many subtable lines used to go unannounced)."""
    out = io.StringIO()
    rep = Progress("modular", stream=out, every=3600.0)
    rep.say("subtable 1/9 solved")
    rep.say("subtable 2/9 solved")
    rep.say("audit repair round 1: auditing 12 withheld cells")
    rep.say("audit repair round 1: the audit names 0 failing attack(s)")
    lines = out.getvalue().splitlines()
    assert len(lines) == 2
    assert "subtable 1/9" in lines[0] and "auditing 12 withheld cells" in lines[1]


def test_modular_pattern_is_the_same_whatever_the_number_of_workers():
    """Subtables solved side by side (two processes) give exactly the pattern solved one
    after the other, singleton protection included."""
    p = synthetic_problem("1k", seed=4)
    b = Bounds.of(p)
    w1, st1 = modular_pattern(p, b, workers=1)
    w2, st2 = modular_pattern(p, b, workers=2)
    assert st1["subtables"] >= 24  # enough subtables for the pool to be used
    assert np.array_equal(w1, w2)
    assert st1["subtables_solved"] == st2["subtables_solved"]


def test_modular_with_workers_then_the_audit_in_a_fresh_process():
    """In a new process whose first HiGHS models are the subtables' (in workers), the
    attacker LPs and the audit that follow still run: every HiGHS model asks for the same
    number of threads (a mismatch made the final audit fail with status 'Not Set')."""
    import subprocess
    import sys

    code = (
        "from tablesafe.synthetic import synthetic_problem\n"
        "from tablesafe.suppress import suppress\n"
        "p = synthetic_problem('1k', seed=4)\n"
        "pat = suppress(p, 'modular')\n"
        "assert pat.stats['subtables'] >= 24 and pat.stats['safe']\n"
        "print('ok')\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600, check=False)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip().endswith("ok")


@pytest.mark.parametrize("seed,shape,units", [(21, [[2, 2], [3], [2]], 90), (22, [[3], [2, 2]], 80),
                                              (23, [[2], [2], [3]], 70)])
def test_row_cuts_keep_the_optimum(seed, shape, units):
    """The 'one more withheld cell in every relation through a target' rows only cut off
    fractional solutions: the optimum is the same with and without them, insider attacks
    included, and the pattern passes the independent audit."""
    from _suppress_gen import table_problem

    from tablesafe.structure.insiders import InsiderModel

    p = table_problem(seed, shape, units=units)
    b = Bounds.of(p, singleton=True)
    model = InsiderModel.of(p)
    single = np.flatnonzero(b.singleton)
    insiders = {int(k): single[~model.overlaps(single, int(k))] for k in np.flatnonzero(p.sensitive)}
    atts = attacks_of(b, p.sensitive, {k: v[:3] for k, v in insiders.items() if len(v)})
    assert any(s >= 0 for _, _, s in atts)
    cand = candidates(p, b)
    with_cuts = compact_pattern(p, b, cand, atts, time_limit=60, mip_gap=0.0)
    without = compact_pattern(p, b, cand, atts, time_limit=60, mip_gap=0.0, row_cuts=False)
    assert with_cuts.optimal and without.optimal
    assert with_cuts.cost == pytest.approx(without.cost, rel=1e-9)
    assert not independent_audit(p, with_cuts.withheld, singleton=False)


def test_auto_keeps_modular_longer_on_two_way_tables(monkeypatch):
    """Two-way tables get ``modular`` up to ``MODULAR_MAX_CELLS_TWO_WAY`` cells, other
    tables up to ``MODULAR_MAX_CELLS``; above, ``fast``; the reason names the limit."""
    from _suppress_gen import table_problem

    import tablesafe.suppress.method_choice as method_choice

    two = table_problem(22, [[3], [2, 2]], units=80)
    three = table_problem(21, [[2, 2], [3], [2]], units=90)
    assert len(two.model.dims) == 2 and len(three.model.dims) == 3
    monkeypatch.setattr(method_choice, "MODULAR_MAX_CELLS", min(two.n, three.n) - 1)
    monkeypatch.setattr(method_choice, "MODULAR_MAX_CELLS_TWO_WAY", two.n)
    method, why = choose_method(two)
    assert method == "modular" and "two-way" in why
    assert choose_method(three)[0] == "fast"
    monkeypatch.setattr(method_choice, "MODULAR_MAX_CELLS_TWO_WAY", two.n - 1)
    assert choose_method(two)[0] == "fast"


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_lazy_attacks_give_the_optimum_of_all_attacks(seed):
    """A subtable's model that starts with a quarter of the outsiders' attacks and adds
    the ones its patterns fail ends at a pattern that every attack passes, as cheap as
    the model holding every attack from the start (a constraint subset's optimum that
    meets the other constraints is optimal for all of them)."""
    from tablesafe.suppress import modular
    from tablesafe.suppress.protection import run_attacks

    p = synthetic_problem([[9], [12]], units=400, seed=seed, use_holdings=False)
    b = Bounds.of(p, singleton=False)
    cand = candidates(p, b)
    atts = attacks_of(b, p.sensitive)
    assert len(atts) > modular.LAZY_MIN  # the lazy path is taken
    lazy = modular._solve_subtable(p, b, cand, {}, 60.0, 1e-6, 0, 10**9, rounds=0)
    full = compact_pattern(p, b, cand, atts, time_limit=60.0, mip_gap=1e-6)
    assert lazy is not None and full.withheld is not None
    found = run_attacks(p, b, lazy.withheld.astype(float), atts, want_dual=False)
    assert all(found[key].ok for key in atts)
    assert lazy.cost == pytest.approx(full.cost, rel=1e-5)
    # the carried levels cover the moves of the attacks checked outside the model
    assert lazy.need_up is not None and (lazy.need_up[lazy.withheld & ~p.sensitive] > 0).all()


def test_auto_takes_fast_earlier_on_nested_tables_of_three_dimensions(monkeypatch):
    """Tables of three or more dimensions with a hierarchy of two or more levels get
    ``fast`` above ``MODULAR_MAX_CELLS_NESTED`` cells; with every dimension one level deep
    they keep ``modular`` up to ``MODULAR_MAX_CELLS``; two-way tables are not affected."""
    from _suppress_gen import table_problem

    import tablesafe.suppress.method_choice as method_choice

    nested = table_problem(21, [[2, 2], [3], [2]], units=90)
    flat = table_problem(23, [[4], [3], [3]], units=90)
    two = table_problem(22, [[3, 2], [2, 2]], units=80)
    assert len(flat.model.dims) == 3 and len(two.model.dims) == 2
    monkeypatch.setattr(method_choice, "MODULAR_MAX_CELLS_NESTED", min(nested.n, flat.n, two.n) - 1)
    method, why = choose_method(nested)
    assert method == "fast" and "nested" in why
    assert choose_method(flat)[0] == "modular"
    assert choose_method(two)[0] == "modular"
    monkeypatch.setattr(method_choice, "MODULAR_MAX_CELLS_NESTED", nested.n)
    assert choose_method(nested)[0] == "modular"


def test_auto_takes_fast_on_tables_of_four_dimensions():
    """Tables of more than ``MODULAR_MAX_DIMS`` dimensions get ``fast`` whatever their size
    and depth; three-way tables, nested or one level deep, keep ``modular``."""
    from _suppress_gen import table_problem

    nested4 = table_problem(24, [[2, 2], [2], [2], [2]], units=60)
    flat4 = table_problem(25, [[2], [2], [3], [2]], units=60)
    nested3 = table_problem(21, [[2, 2], [3], [2]], units=90)
    flat3 = table_problem(23, [[4], [3], [3]], units=90)
    assert len(nested4.model.dims) == 4 and len(flat4.model.dims) == 4
    for four in (nested4, flat4):
        method, why = choose_method(four, time_limit=3600)
        assert method == "fast" and "4 dimensions" in why
    assert choose_method(nested3, time_limit=3600)[0] == "modular"
    assert choose_method(flat3, time_limit=3600)[0] == "modular"


def test_linked_tables_count_each_tables_own_dimensions():
    """Two linked three-way tables span four dimensions but are no four-way table: ``auto``
    keeps ``modular`` on them (a four-way table of the same kind gets ``fast``)."""
    from tablesafe.synthetic import problem_from_data, synthetic_preset

    p = problem_from_data(synthetic_preset("linked3k", seed=1), p=15, use_holdings=True)
    assert len(p.model.dims) == 4 and len(p.model.table_cells) == 2
    method, why = choose_method(p)
    assert method == "modular", why


def test_auto_takes_fast_when_the_limit_is_short_for_the_subtables():
    """On tables of three or more dimensions ``auto`` picks ``fast`` under a limit of less
    than ``MODULAR_SECONDS_PER_TARGET`` a sensitive cell (``modular`` cut short withholds far
    more); two-way tables keep ``modular`` under any limit. The limit decides, not the
    clock, and ``suppress`` passes the one it was given (the stats say why)."""
    from _suppress_gen import table_problem

    from tablesafe.suppress.method_choice import MODULAR_SECONDS_PER_TARGET

    three = table_problem(21, [[2, 2], [3], [2]], units=90)
    two = table_problem(22, [[3, 2], [2, 2]], units=80)
    edge = MODULAR_SECONDS_PER_TARGET * int(three.sensitive.sum())
    assert edge > 0
    method, why = choose_method(three, time_limit=0.9 * edge)
    assert method == "fast" and "short" in why and f"{int(three.sensitive.sum()):,} sensitive" in why
    assert choose_method(three, time_limit=edge)[0] == "modular"
    assert choose_method(three)[0] == "modular"  # the automatic limit is long enough here
    assert choose_method(two, time_limit=1e-3)[0] == "modular"
    pat = suppress(three, "auto", time_limit=0.9 * edge, audit=False)
    assert pat.stats["method_chosen"] == "fast" and "short" in pat.stats["method_reason"]
