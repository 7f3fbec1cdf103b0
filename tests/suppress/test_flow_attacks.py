"""The attacker's problems of network tables as min-cost flows
(:mod:`tablesafe.suppress.flow_attacks`) against the HiGHS LPs they replace."""

from __future__ import annotations

import numpy as np
import pytest
from test_suppress import grid_problem

from tablesafe.problem import PRIMARY, SAFE, Problem
from tablesafe.structure import Dimension, Hierarchy, TableStructure
from tablesafe.suppress import attack_runs, flow_attacks
from tablesafe.suppress.attacker import DOWN, UP, BlockLP, Blocks, Bounds, cut_from
from tablesafe.suppress.flow_attacks import FlowBlock, network_signs, whole_network


@pytest.fixture(autouse=True)
def _flows_on_small_tables(monkeypatch):
    """The random tables here have a few sensitive cells: flows for them all the same."""
    monkeypatch.setattr(flow_attacks, "FLOW_MIN_SENSITIVE", 0)


def _random_grid(rng: np.random.Generator):
    r, c = (int(v) for v in rng.integers(2, 7, 2))
    inner = np.round(rng.lognormal(3, 1.5, (r, c)))
    inner[rng.random((r, c)) < 0.2] = 0
    sens = [(i, j) for i in range(1, r + 1) for j in range(1, c + 1)
            if rng.random() < 0.25 and inner[i - 1, j - 1] > 0]
    if not sens:
        sens = [(1, 1)]
        inner[0, 0] = max(inner[0, 0], 5.0)
    levels = {}
    for rc in sens:
        level = float(inner[rc[0] - 1, rc[1] - 1] * rng.uniform(0.05, 0.6))
        levels[rc] = (level, level)
    return grid_problem(inner, levels)


def _pattern(rng: np.random.Generator, p: Problem, fractional: bool) -> np.ndarray:
    x = (rng.random(p.n) < 0.45).astype(float)
    if fractional:
        x = x * rng.uniform(0.2, 1.0, p.n)
    x[p.sensitive] = 1.0
    return x


@pytest.mark.parametrize("seed", range(6))
def test_flows_reach_what_the_attackers_lp_reaches(seed):
    """On random two-way tables and patterns (some fractional, as in the master's LP
    rounds), outsiders and single respondents: the same verdict and, without a sparse
    certificate asked for, the same optimum as the LP; a failing attack's cut is tight
    (its left-hand side under the pattern equals the maximum flow, so it cuts the
    pattern off); a passing attack's table meets the relations, moves the target by
    its level, leaves the insider's cell alone and moves the others at no more
    weighted cost than the LP's sparse certificate."""
    rng = np.random.default_rng(seed)
    checked = 0
    for _ in range(25):
        p = _random_grid(rng)
        signs = network_signs(p)
        assert signs is not None
        b = Bounds.of(p)
        x = _pattern(rng, p, fractional=bool(rng.random() < 0.3))
        blocks = Blocks(p.relations, x)
        for bl in range(blocks.count):
            cells, rows = blocks.cells(bl), blocks.rows(bl)
            lp = BlockLP(p, b, x, cells, rows)
            fb = FlowBlock(p, b, x, cells, rows, signs)
            for k in cells[p.sensitive[cells]]:
                for d in (UP, DOWN):
                    req = float(b.req_up[k] if d == UP else b.req_dn[k])
                    ins = int(rng.choice(cells)) if rng.random() < 0.3 else -1
                    ins = -1 if ins == k else ins
                    for sparse in (False, True):
                        a_lp = lp.attack(k, d, req, ins, sparse=sparse, expect_pass=sparse)
                        a_fl = fb.attack(k, d, req, ins, sparse=sparse, expect_pass=sparse)
                        checked += 1
                        assert a_lp.ok == a_fl.ok
                        tol = 1e-6 * max(1.0, req)
                        if not sparse:
                            assert min(a_fl.reached, 1e12) == pytest.approx(min(a_lp.reached, 1e12), abs=tol)
                        if not a_fl.ok:
                            cut = cut_from(a_fl, b, np.zeros(p.n, dtype=bool), cap=False)
                            on = x[cut.idx] > 0
                            assert float(np.sum(cut.coef[on] * x[cut.idx][on])) == pytest.approx(a_fl.reached, abs=tol)
                            continue
                        z = np.zeros(p.n)
                        z[a_fl.cells] = a_fl.dev
                        assert np.abs(p.relations @ z).max() <= tol
                        assert d * z[k] == pytest.approx(req, abs=tol)
                        others = np.arange(p.n) != k
                        on = x > 0
                        assert np.all(z[others & ~on] == 0.0)  # published cells stay
                        assert np.all(z[others & on] <= b.up[others & on] * x[others & on] + tol)
                        assert np.all(-z[others & on] <= b.dn[others & on] * x[others & on] + tol)
                        if ins >= 0:
                            assert z[ins] == 0.0
                        if sparse:
                            w = np.zeros(p.n)
                            w[cells] = lp.weight
                            z_lp = np.zeros(p.n)
                            z_lp[a_lp.cells] = a_lp.dev
                            moved = np.sum((w * np.abs(z))[others])
                            assert moved <= np.sum((w * np.abs(z_lp))[others]) * (1 + 1e-7) + tol
    assert checked > 200


def _table(*branchings: list[str]) -> Problem:
    dims = [Dimension(f"d{i}", Hierarchy.flat(codes)) for i, codes in enumerate(branchings)]
    ts = TableStructure(dims)
    rel = ts.relations()
    n = rel.shape[1]
    return Problem.from_arrays(np.ones(n), rel, status=np.array([SAFE] * n))


def test_two_way_and_one_way_tables_are_networks_and_three_way_tables_are_not():
    assert network_signs(_table(["a", "b", "c"], ["x", "y"])) is not None
    assert network_signs(_table(["a", "b", "c"])) is not None
    assert network_signs(_table(["a", "b"], ["x", "y"], ["u", "v"])) is None
    tree = Hierarchy.from_tree("T", {"T": ["A", "B"], "A": ["A1", "A2"], "B": ["B1", "B2"]})
    ts = TableStructure([Dimension("h", tree), Dimension("c", Hierarchy.flat(["x", "y"]))])
    rel = ts.relations()
    nested = Problem.from_arrays(np.ones(rel.shape[1]), rel, status=np.array([SAFE] * rel.shape[1]))
    assert network_signs(nested) is None  # a subtotal cell lies in three relations


def test_run_attacks_by_flows_gives_the_lps_verdicts(monkeypatch):
    """The whole check of a pattern (outsiders, single respondents spelt out, duals of the
    failing ones) by flows and by the LPs: the same verdicts, key by key."""
    rng = np.random.default_rng(7)
    for _ in range(10):
        p = _random_grid(rng)
        b = Bounds.of(p)
        x = _pattern(rng, p, fractional=False)
        sens = np.flatnonzero(p.sensitive)
        keys = [(int(k), d, -1) for k in sens for d in (UP, DOWN)]
        keys += [(int(k), d, int(s)) for k in sens for d in (UP, DOWN)
                 for s in np.flatnonzero(x > 0)[:3] if s != k]
        by_flow = attack_runs.run_attacks(p, b, x, keys, want_dual=True)
        monkeypatch.setattr(flow_attacks, "USE_FLOWS", False)
        by_lp = attack_runs.run_attacks(p, b, x, keys, want_dual=True)
        monkeypatch.setattr(flow_attacks, "USE_FLOWS", True)
        assert {k: a.ok for k, a in by_flow.items()} == {k: a.ok for k, a in by_lp.items()}
        for key, att in by_flow.items():
            if not att.ok and key[2] < 0:
                assert att.dual_cells is not None  # a cut for the master


def _at(i: int, j: int, cols: int) -> int:
    return i * (cols + 1) + j


def test_one_graph_of_every_withheld_cell():
    p = grid_problem(np.arange(1.0, 13.0).reshape(3, 4), {(1, 1): (1.0, 1.0)})

    def at(i, j):
        return _at(i, j, 4)
    x = np.zeros(p.n)
    x[[at(1, 1), at(1, 2), at(2, 1), at(2, 2), at(3, 4)]] = 1.0
    whole = whole_network(p, x)
    assert whole.count == 1
    assert set(whole.cells(0).tolist()) == {at(1, 1), at(1, 2), at(2, 1), at(2, 2), at(3, 4)}
    # the relations of those cells: rows 1, 2, 3 and columns 1, 2, 4
    assert len(whole.rows(0)) == 6
    assert Blocks(p.relations, x).count == 2


def test_a_target_whose_partners_cannot_make_up_its_level_fails_with_a_cut():
    """A cycle of four inner cells: the target moves up only as far as its small
    partners can fall, so the flow falls short and the cut asks for more; moving down
    its partners rise without bound."""
    p = grid_problem(np.array([[10.0, 1.0], [1.0, 10.0]]), {(1, 1): (5.0, 5.0)})

    def at(i, j):
        return _at(i, j, 2)

    assert p.status[at(1, 1)] == PRIMARY
    b = Bounds.of(p)
    x = np.zeros(p.n)
    x[[at(1, 1), at(1, 2), at(2, 1), at(2, 2)]] = 1.0  # the inner cells: a cycle
    signs = network_signs(p)
    blocks = whole_network(p, x)
    fb = FlowBlock(p, b, x, blocks.cells(0), blocks.rows(0), signs)
    up = fb.attack(at(1, 1), UP, 5.0)
    assert not up.ok and up.reached == pytest.approx(1.0)  # the 1s can only fall by 1
    cut = cut_from(up, b, p.sensitive)
    assert cut.rhs > 0 and len(cut.idx)
    # the cut counts the published totals that would let the target move further
    assert set(cut.idx.tolist()) & {at(0, 1), at(1, 0)}
    down = fb.attack(at(1, 1), DOWN, 5.0)
    assert down.ok


def test_sliding_levels_on_a_network_go_to_the_lp_with_the_same_verdicts(monkeypatch):
    """A sliding level compares the reach up and down: such attacks are answered by the
    block's LP, and the check's verdicts (sliding shortfalls included) are the LPs'."""
    rng = np.random.default_rng(11)
    for _ in range(8):
        p = _random_grid(rng)
        spl = np.where(p.sensitive, p.value * rng.uniform(0.2, 1.5, p.n), 0.0)
        p = p.copy(spl=spl)
        b = Bounds.of(p)
        assert (b.req_sl > 0).any()
        x = _pattern(rng, p, fractional=False)
        keys = [(int(k), d, -1) for k in np.flatnonzero(p.sensitive) for d in (UP, DOWN)]
        by_flow = attack_runs.run_attacks(p, b, x, keys, want_dual=True)
        monkeypatch.setattr(flow_attacks, "USE_FLOWS", False)
        by_lp = attack_runs.run_attacks(p, b, x, keys, want_dual=True)
        monkeypatch.setattr(flow_attacks, "USE_FLOWS", True)
        assert {k: (a.ok, a.sliding_short > 0) for k, a in by_flow.items()} == \
            {k: (a.ok, a.sliding_short > 0) for k, a in by_lp.items()}


def test_a_table_with_few_sensitive_cells_keeps_its_subtables_on_lps(monkeypatch):
    """Below ``FLOW_MIN_SENSITIVE`` sensitive cells the subtables' attacks are LPs (the
    kernel's loading would cost more than it saves); at or above it, flows. The choice
    comes from the table, and the pattern passes the independent audit either way."""
    from _suppress_gen import independent_audit, table_problem

    from tablesafe.suppress import suppress

    p = table_problem(5, [[4], [3, 2]], units=90)
    calls = []
    real = FlowBlock.attack

    def counted(self, *args, **kwargs):
        calls.append(1)
        return real(self, *args, **kwargs)

    monkeypatch.setattr(FlowBlock, "attack", counted)
    monkeypatch.setattr(flow_attacks, "FLOW_MIN_SENSITIVE", int(p.sensitive.sum()) + 1)
    few = suppress(p, "modular")
    assert calls == []
    monkeypatch.setattr(flow_attacks, "FLOW_MIN_SENSITIVE", int(p.sensitive.sum()))
    many = suppress(p, "modular")
    assert len(calls) > 0
    for pattern in (few, many):
        assert independent_audit(p, pattern.withheld) == []


def test_every_flow_counts_its_work():
    """Work clocks see the flows: each attack adds at least ``FLOW_RUN_WORK`` units to
    ``lp_work``, and the same attacks add the same work every time."""
    from tablesafe.audit.lp import lp_work

    rng = np.random.default_rng(3)
    p = _random_grid(rng)
    b = Bounds.of(p)
    x = _pattern(rng, p, fractional=False)
    blocks = whole_network(p, x)
    keys = [(int(k), d) for k in np.flatnonzero(p.sensitive) for d in (UP, DOWN)]
    spent = []
    for _ in range(2):
        fb = FlowBlock(p, b, x, blocks.cells(0), blocks.rows(0), network_signs(p))
        before = lp_work()
        for k, d in keys:
            fb.attack(k, d, float(b.req_up[k] if d == UP else b.req_dn[k]))
        spent.append(lp_work() - before)
    assert spent[0] == spent[1] >= flow_attacks.FLOW_RUN_WORK * len(keys)


def test_a_table_that_is_no_network_does_not_load_the_kernel(monkeypatch):
    """Loading the kernel costs a fraction of a second: only a network asks for it."""
    def no_kernel():
        raise AssertionError("the flow kernel was asked for")

    monkeypatch.setattr(flow_attacks, "kernel", no_kernel)
    flow_attacks._SIGNS.clear()
    assert network_signs(_table(["a", "b"], ["x", "y"], ["u", "v"])) is None


@pytest.mark.parametrize("seed", range(4))
def test_a_network_subtable_hands_on_its_flows_tables_without_solving_them_again(seed, monkeypatch):
    """A subtable attacked by flows (no boxes) already holds the sparse certificates of its
    pattern: ``_moves`` takes them from the attacks (``flows=True``) and gives the very
    moves and tables that solving them again gives."""
    from tablesafe.suppress import subtable_cuts as sc
    from tablesafe.suppress.protection import candidates

    real = sc._moves
    compared = []

    def both(sub, bounds, x, keys, clock, found=None, boxes=None, flows=False, fresh=None):
        got = real(sub, bounds, x, keys, clock, found, boxes, flows, fresh)
        again = real(sub, bounds, x, keys, clock, found, boxes, False)
        assert np.array_equal(got[0], again[0]) and np.array_equal(got[1], again[1])
        assert [key for key, _ in got[2]] == [key for key, _ in again[2]]
        for (_, a), (_, b) in zip(got[2], again[2]):
            assert np.array_equal(a.cells, b.cells) and np.array_equal(a.dev, b.dev)
        compared.append(flows)
        return got

    monkeypatch.setattr(sc, "_moves", both)
    rng = np.random.default_rng(100 + seed)
    p = _random_grid(rng)
    b = Bounds.of(p, singleton=False)
    res = sc.protect_subtable(p, b, candidates(p, b), {}, 60.0, 0.0, 0)
    assert res is not None and res.safe and compared == [True]


def test_the_kernel_is_loaded_before_any_search_clock_starts(monkeypatch):
    """``suppress`` loads the flow kernel before the subtables' search starts its clocks:
    the first run after an install compiles it (seconds), and a subtable's guard on the
    clock counting those seconds ended its solve early, so that run's pattern differed
    from every later one's (sixty-third session)."""
    from tablesafe.suppress import modular, suppress
    from tablesafe.synthetic import problem_from_data, synthetic_data

    problem = problem_from_data(synthetic_data([[3, 4], [2, 5]], 1_500, seed=5))
    assert flow_attacks.may_flow(problem)
    calls: list[str] = []
    real_warm, real_search = flow_attacks.warm, modular.modular_pattern

    def warm() -> None:
        calls.append("warm")
        real_warm()

    def search(*args, **kwargs):
        calls.append("search")
        return real_search(*args, **kwargs)

    monkeypatch.setattr(flow_attacks, "warm", warm)
    monkeypatch.setattr(modular, "modular_pattern", search)
    suppress(problem, "modular", audit=False)
    assert calls and calls[0] == "warm" and "search" in calls


def test_which_problems_are_taken_for_flow_tables():
    """``may_flow``: a two-way table (its subtables are networks), and relations that are
    a network without a table structure; not a three-way table, whose subtables are no
    networks (numba is then not loaded)."""
    from dataclasses import replace

    from tablesafe.synthetic import problem_from_data, synthetic_data

    three_way = problem_from_data(synthetic_data([[3, 4], [3, 3], [4]], 2_500, seed=12))
    assert not flow_attacks.may_flow(three_way)
    assert not flow_attacks.may_flow(replace(three_way, model=None))
    flat = grid_problem(np.array([[5.0, 7.0, 2.0], [3.0, 9.0, 4.0]]), {(1, 1): (2.0, 2.0)})
    assert flow_attacks.may_flow(flat)
    assert flow_attacks.may_flow(replace(flat, model=None))
