"""Chain certificates (issue 12, time limits that hold): when ``fast``'s time is up, the
targets left are protected by a bottom cell inside them and every total containing it,
which needs no LP. These tests check the chains themselves against the relations and
the overlap of respondents, that a run past its limit ends on time with a pattern
that an independent audit passes, and that a hurried search's guided regions (small LPs
in place of a whole block's) give certificates that hold."""

from __future__ import annotations

import time

import numpy as np
from _suppress_gen import independent_audit, table_problem
from hypothesis import given, settings
from hypothesis import strategies as st

from tablesafe.structure.overlap import CellOverlap, occupied_cells
from tablesafe.suppress import suppress
from tablesafe.suppress.fast_ranges import CellRanges
from tablesafe.suppress.local import RelationIndex
from tablesafe.suppress.local.chains import ChainRoom, RelationChains, TableChains, relation_chain
from tablesafe.suppress.local.guided import ranked


def _room(problem, withheld=None):
    r = CellRanges.of(problem, singleton=True, capacity=False, singleton_penalty=1e3)
    w = problem.sensitive.copy() if withheld is None else withheld
    return r, ChainRoom(r.free, r.room_up, r.room_down, r.weight, w)


def _deviation(problem, cells, unit):
    d = np.zeros(problem.n)
    d[cells] = unit
    return d


def _check_chain(problem, t, cells, unit, r):
    """The chain moves ``t`` by +1, keeps every relation and stays within the ranges."""
    assert cells[0] == t and unit[0] == 1.0
    assert len(np.unique(cells)) == len(cells)
    d = _deviation(problem, cells, unit)
    assert np.allclose(problem.relations @ d, 0.0, atol=1e-9)
    rest, u = cells[1:], unit[1:]
    up, down = r.upl[t], r.lpl[t]
    rise = np.where(u > 0, r.room_up[rest], r.room_down[rest])
    fall = np.where(u > 0, r.room_down[rest], r.room_up[rest])
    assert (np.abs(u) * up <= rise * (1 + 1e-9)).all()
    assert (np.abs(u) * down <= fall * (1 + 1e-9)).all()
    assert r.free[rest].all()


def _aggregate_targets(problem, overlap, k=15):
    """Occupied cells that are totals in some dimension (for chains that reach down)."""
    bottom = [anc.sum(axis=1) == 1 for anc in overlap.anc]
    is_total = np.zeros(problem.n, dtype=bool)
    for j, b in enumerate(bottom):
        is_total |= ~b[overlap.idx[:, j]]
    occ = occupied_cells(problem)
    return np.flatnonzero(is_total & occ)[:k]


def test_table_chains_keep_the_relations_and_share_a_respondent_with_the_target():
    """Every sensitive cell and some totals of a 3-D hierarchical table: the chain keeps
    every relation, each of its cells contains a non-empty bottom cell of the target, so
    it overlaps the target (no single respondent's certificate needed)."""
    p = table_problem(31, [[3, 2], [2, 2], [3]], units=150)
    overlap = CellOverlap.of(p)
    occ = occupied_cells(p)
    chains = TableChains(overlap, occ, p.value)
    r, room = _room(p)
    targets = np.concatenate((np.flatnonzero(p.sensitive), _aggregate_targets(p, overlap)))
    found = 0
    for t in targets.tolist():
        got = chains.direction(t, room, float(max(r.upl[t], 1.0)), float(max(r.lpl[t], 1.0)))
        if got is None:
            continue
        found += 1
        cells, unit = got
        assert (unit == 1.0).all()
        _check_chain(p, t, cells, unit, CellRangesView(r, t))
        assert overlap.overlaps(cells, t, occ).all()
    assert found >= 0.9 * len(targets)


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 10_000), shape=st.sampled_from([[[4], [5]], [[2, 3], [3, 2]], [[3], [2], [2]],
                                                           [[2, 2], [2, 2], [2]], [[2, 2, 2], [3]]]))
def test_boxes_keep_the_relations_and_move_no_other_respondent_alone(seed, shape):
    """A box (the product of one hierarchy-keeping vector per dimension) keeps every
    relation, stays within the ranges, and moves a single respondent's cell only where
    it overlaps the target; targets include totals."""
    p = table_problem(seed, shape, units=120)
    overlap = CellOverlap.of(p)
    occ = occupied_cells(p)
    chains = TableChains(overlap, occ, p.value)
    r, room = _room(p)
    targets = np.concatenate((np.flatnonzero(p.sensitive)[:25], _aggregate_targets(p, overlap, 5)))
    for t in targets.tolist():
        view = CellRangesView(r, t)
        got = chains.box(t, room, float(view.upl[t]), float(view.lpl[t]), r.single)
        if got is None:
            continue
        cells, unit = got
        _check_chain(p, t, cells, unit, view)
        apart = ~overlap.overlaps(cells, t, occ)
        assert not (r.single[cells] & apart).any()


class CellRangesView:
    """The ranges with the target's levels at least 1 (as the test asks for them)."""

    def __init__(self, r, t):
        self.upl = r.upl.copy()
        self.lpl = r.lpl.copy()
        self.upl[t] = max(self.upl[t], 1.0)
        self.lpl[t] = max(self.lpl[t], 1.0)
        self.room_up, self.room_down, self.free = r.room_up, r.room_down, r.free


def test_a_chain_of_a_total_runs_through_one_of_its_bottom_cells():
    p = table_problem(32, [[2, 3], [3]], units=120)
    overlap = CellOverlap.of(p)
    occ = occupied_cells(p)
    chains = TableChains(overlap, occ, p.value)
    _, room = _room(p)
    t = 0  # the grand total: every cell is inside it
    assert all(overlap.idx[t, j] == 0 for j in range(overlap.idx.shape[1]))
    cells, unit = chains.direction(t, room, 1.0, 1.0)
    bottom = [anc.sum(axis=1) == 1 for anc in overlap.anc]
    at_bottom = [c for c in cells.tolist() if all(bottom[j][overlap.idx[c, j]] for j in range(2))]
    assert len(at_bottom) == 1 and occ[at_bottom[0]]
    # every cell of the chain contains that bottom cell
    b = at_bottom[0]
    for c in cells.tolist():
        assert all(overlap.anc[j][overlap.idx[c, j], overlap.idx[b, j]] for j in range(2))
    assert np.allclose(p.relations @ _deviation(p, cells, unit), 0.0)


def test_a_chain_prefers_a_bottom_cell_already_withheld():
    p = table_problem(33, [[3], [4]], units=100)
    overlap = CellOverlap.of(p)
    occ = occupied_cells(p)
    r, _ = _room(p)
    t = 0
    below = [c for c in range(p.n) if occ[c] and r.free[c] and r.room_down[c] >= 1.0
             and overlap.idx[c, 0] != 0 and overlap.idx[c, 1] != 0]
    pick = below[-1]
    withheld = np.zeros(p.n, dtype=bool)
    withheld[pick] = True
    room = ChainRoom(r.free, r.room_up, r.room_down, r.weight, withheld)
    cells, _ = TableChains(overlap, occ, p.value).direction(t, room, 1.0, 1.0)
    assert pick in cells.tolist()


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000), shape=st.sampled_from([[[4], [5]], [[2, 2], [3]], [[3], [2], [2]],
                                                           [[2, 2], [2, 2], [2]], [[6], [6], [6]]]))
def test_chains_by_relations_keep_every_relation(seed, shape):
    """Without the table structure the chain grows relation by relation; whatever it
    returns keeps every relation and stays within the ranges."""
    p = table_problem(seed, shape, units=80)
    rel = RelationIndex.of(p.relations)
    r, room = _room(p)
    chains = RelationChains(rel, occupied_cells(p))
    for t in np.flatnonzero(p.sensitive).tolist()[:20]:
        for got in (relation_chain(rel, t, room, float(r.upl[t]), float(r.lpl[t])),
                    chains.direction(t, room, float(r.upl[t]), float(r.lpl[t]))):
            if got is not None:
                _check_chain(p, t, got[0], got[1], r)


def test_chains_read_from_the_relations_are_the_table_chains():
    """On a hierarchical table given by its relations alone, the chain of a total is a
    bottom cell inside it and every cell containing that bottom cell, as with the
    table structure; every total of the table gets one."""
    p = table_problem(41, [[2, 2], [3]], units=120)
    overlap = CellOverlap.of(p)
    occ = occupied_cells(p)
    r, room = _room(p, np.zeros(p.n, dtype=bool))
    chains = RelationChains(RelationIndex.of(p.relations), occ)
    targets = _aggregate_targets(p, overlap, k=50)
    assert len(targets) >= 5
    for t in targets.tolist():
        got = chains._closure_chain(t, room, 1.0, 1.0)
        assert got is not None
        cells, unit = got
        _check_chain(p, t, cells, unit, r)
        assert (unit == 1.0).all()
        bottom = [anc.sum(axis=1) == 1 for anc in overlap.anc]
        leaf = cells[np.all([bottom[j][overlap.idx[cells, j]] for j in range(len(bottom))], axis=0)]
        assert len(leaf) == 1 and occ[leaf[0]]
        # every cell containing the bottom cell, and nothing else
        b = overlap.idx[leaf[0]]
        contains = np.all([anc[overlap.idx[:, j], b[j]] for j, anc in enumerate(overlap.anc)], axis=0)
        assert set(np.flatnonzero(contains).tolist()) == set(cells.tolist())
        assert contains[t]


def test_ranked_puts_the_target_first_and_unrelated_cells_last():
    """The guided ranking: the target first, every column once, and a column the
    target's relations never reach ranked last (it does not move)."""
    import scipy.sparse as sp

    # x0 = x1 + x2, x1 = x3 + x4, and x5 in a relation of its own with x6
    rows = [[-1, 1, 1, 0, 0, 0, 0], [0, -1, 0, 1, 1, 0, 0], [0, 0, 0, 0, 0, 1, -1]]
    m = sp.csc_matrix(np.array(rows, dtype=float))
    order = ranked(m.indptr, m.indices, m.data, 3, np.ones(7), target=3)
    assert order[0] == 3
    assert sorted(order.tolist()) == list(range(7))
    assert set(order[-2:].tolist()) == {5, 6}


def test_a_hurried_search_gives_certificates_from_guided_regions(monkeypatch):
    """A search hurried from the start on a problem without its table structure (so
    relation hops reach the whole block) solves small guided regions of the large
    neighbourhoods first: some targets are protected that way, the pattern is proved by
    its certificates and an independent audit passes it."""
    import tablesafe.suppress.fast as fast
    import tablesafe.suppress.local.search as search

    monkeypatch.setattr(fast, "HURRY_SHARE", 0.0)
    monkeypatch.setattr(fast, "CHAIN_SHARE", 1e30)
    monkeypatch.setattr(search, "GUIDED_FROM", 20)
    monkeypatch.setattr(search, "REGION_SIZES", (8, 16, 32))
    p = table_problem(42, [[2, 3], [4]], units=150)
    p = p.copy(model=None)
    pat = suppress(p, "fast", time_limit=600)
    assert pat.stats["found_by"].get("guided", 0) > 0
    assert pat.proof == "certificates"
    assert independent_audit(p, pat.withheld) == []


def test_a_hurried_search_stops_trying_small_hops_that_never_pay(monkeypatch):
    """Once a hurried search's LPs on small relation hops have found nothing (here they
    are made to fail, as they did on Castro's NINE12), it walks straight to its guided
    regions or the block's last hop: no LP on a small hop after the trial, every target
    still protected, the pattern proved by its certificates and passed by an
    independent audit."""
    import tablesafe.suppress.fast as fast
    import tablesafe.suppress.local.search as search

    monkeypatch.setattr(fast, "HURRY_SHARE", 0.0)
    monkeypatch.setattr(fast, "CHAIN_SHARE", 1e30)
    monkeypatch.setattr(search, "GUIDED_FROM", 30)
    monkeypatch.setattr(search, "REGION_SIZES", (30, 45))
    monkeypatch.setattr(search, "HOP_TRIAL", 3)
    real_grow, real_solve = search.LocalSearch.grow, search.LocalSearch.solve
    grows: dict[int, list[tuple[bool, int]]] = {}  # per search: (skipping, small LPs)
    made = iter(range(10**6))

    def grow(self, query, movable, start, max_hops, allow_whole):
        if not (allow_whole and self.hurry):
            return real_grow(self, query, movable, start, max_hops, allow_whole)
        self.small_lps = 0
        skipping = not self._small_hops_pay()
        try:
            return real_grow(self, query, movable, start, max_hops, allow_whole)
        finally:
            if not hasattr(self, "token"):
                self.token = next(made)
            grows.setdefault(self.token, []).append((skipping, self.small_lps))
            self.small_lps = None

    def solve(self, query, cells, any_one=False):
        if getattr(self, "small_lps", None) is not None and len(cells) < search.GUIDED_FROM:
            self.small_lps += 1
            return None  # small hops never pay here
        return real_solve(self, query, cells, any_one)

    monkeypatch.setattr(search.LocalSearch, "grow", grow)
    monkeypatch.setattr(search.LocalSearch, "solve", solve)
    p = table_problem(42, [[2, 3], [4]], units=150).copy(model=None)
    pat = suppress(p, "fast", time_limit=600)
    judged = [calls for calls in grows.values() if any(skipping for skipping, _ in calls)]
    assert judged  # (fast runs two orders here, each with its own search)
    for calls in grows.values():
        tried = np.cumsum([n for _, n in calls])
        first = next((i for i, (skipping, _) in enumerate(calls) if skipping), len(calls))
        assert first == len(calls) or tried[first - 1] >= 3  # skipping after the trial only
        assert all(skipping for skipping, _ in calls[first:])
        # (a block's last hop is still tried: none is that small here)
        assert all(n == 0 for _, n in calls[first:])
    assert pat.proof == "certificates"
    assert independent_audit(p, pat.withheld) == []


def test_fast_past_its_time_limit_protects_the_targets_left_by_chains():
    """A limit of a millisecond: every target is past the chain time, so the pattern is
    all chains (deterministic); it is proved by its certificates, no single respondent
    is left without one, and an independent audit finds nothing."""
    p = table_problem(34, [[5], [5], [6]], units=400)
    pat = suppress(p, "fast", time_limit=0.001)
    assert pat.stats["box_certificates"] > pat.stats["chain_certificates"]
    assert pat.stats["lp_solves"] == 0
    assert pat.proof == "certificates"
    assert pat.stats["insider_unprotected"] == 0 and pat.stats["insider_certificate_gaps"] == 0
    assert independent_audit(p, pat.withheld) == []


def test_a_slow_search_still_ends_within_the_limit(monkeypatch):
    """Local LPs slowed down artificially: the run ends within the limit plus 10 % (the
    final audit aside), the targets left protected by chains."""
    import tablesafe.suppress.local.search as search

    p = table_problem(35, [[5], [5], [6]], units=500)
    real = search.LocalSearch.solve

    def slow(self, query, cells, **kw):
        time.sleep(0.1)
        return real(self, query, cells, **kw)

    monkeypatch.setattr(search.LocalSearch, "solve", slow)
    limit = 2.0
    pat = suppress(p, "fast", time_limit=limit)
    assert pat.stats["seconds_before_audit"] <= 1.1 * limit
    assert pat.stats["chain_certificates"] + pat.stats["box_certificates"] > 0 and pat.stats["lp_solves"] > 0
    assert independent_audit(p, pat.withheld) == []


def test_the_summary_and_report_say_the_limit_was_reached():
    """A run past its chain time tells the user how many cells were protected without a
    search and that a longer limit withholds less (summary and the report's parameters)."""
    from tablesafe.api import protect_problem

    p = table_problem(36, [[4], [4], [5]], units=300)
    res = protect_problem(p, method="fast", time_limit=0.001)
    quick = res.pattern.stats["box_certificates"] + res.pattern.stats["chain_certificates"]
    assert quick > 0
    assert f"time limit reached: {quick:,} sensitive cells were protected without a search" in res.summary()
    assert "a longer time limit gives a pattern that withholds less" in res.parameters()["time_limit"]
    # a run with time to spare says nothing of the kind
    calm = protect_problem(p, method="fast", time_limit=600)
    assert "time limit reached" not in calm.summary()


def _short_of_time(elapsed, *, longest=0.0, began=0.0, reached=500, size=1000, hurry_after=80.0,
                   chain_after=90.0):
    """``FirstPass._short_of_time`` on a pass ``elapsed`` seconds after its job's start
    whose slowest LP took ``longest``; by default its pace reaches every target in time
    (half of them in half the time)."""
    from types import SimpleNamespace

    from tablesafe.suppress.fast_first_pass import FirstPass

    job = SimpleNamespace(start=time.perf_counter() - elapsed, hurry_after=hurry_after, chain_after=chain_after)
    state = SimpleNamespace(job=job, search=SimpleNamespace(lp=SimpleNamespace(longest=longest)))
    return FirstPass._short_of_time(state, began, reached, size)


def test_a_pass_hurries_when_less_than_two_of_its_slowest_lps_are_left():
    """Hurrying starts at the job's ``hurry_after``, or earlier when the time left before
    the chain time is less than twice the slowest LP so far (a search that goes on
    unhurried would overrun the limit by its last LPs)."""
    assert not _short_of_time(10.0, longest=1.0)
    assert _short_of_time(81.0)  # past hurry_after
    assert _short_of_time(50.0, longest=25.0)  # 40 s left, 2 x 25 s needed
    assert not _short_of_time(50.0, longest=19.0)
    assert not _short_of_time(50.0, longest=25.0, chain_after=None)


def test_a_pass_hurries_when_its_pace_would_not_reach_the_targets_left():
    """A pass whose targets left would take it past ``hurry_after`` even at
    ``HURRY_PACE_GAIN`` times its pace so far hurries at once (Castro's NINENEW at 10 s
    hurried at the guard and ended at 13.7 s); not before it has run
    ``HURRY_PACE_FROM`` of the time before ``hurry_after``, and not when the pace is
    quick enough."""
    from tablesafe.suppress.fast_pace import HURRY_PACE_FROM, HURRY_PACE_GAIN

    def short(elapsed, reached, size, began=0.0, hurry_after=80.0):
        return _short_of_time(elapsed, began=began, reached=reached, size=size, hurry_after=hurry_after,
                              chain_after=None)

    early = 0.5 * HURRY_PACE_FROM * 80.0
    later = 2.0 * HURRY_PACE_FROM * 80.0
    # one second a target: the 990 left need 99 s at ten times that pace, 80 s is the mark
    assert HURRY_PACE_GAIN == 10.0
    assert short(later, int(later), int(later) + 990)
    assert not short(early, int(early), int(early) + 990)  # too soon to judge
    assert not short(later, int(later), int(later) + 500)  # 50 s more at the hurried pace
    assert not short(later, 0, 990)  # no target reached yet
    # the pace counts from the pass's own start (a second order starts later): 30 targets
    # in the 30 s since it began at 60 s, not in 90 s
    assert not short(90.0, 30, 630, began=60.0, hurry_after=200.0)
    assert short(90.0, 30, 1530, began=60.0, hurry_after=200.0)


def test_a_pass_hurries_when_its_pace_in_work_would_pass_its_work_bound():
    """The pace rule counted in LP work (sixty-first session): a pass hurries when its
    work so far, and the targets left at ``HURRY_PACE_WORK_GAIN`` times less work each,
    would pass the job's ``hurry_work``, whatever the clock says (``"work"``: the same
    target in every run); not before it has done ``HURRY_PACE_FROM`` of that work."""
    from types import SimpleNamespace

    from tablesafe.suppress.fast_first_pass import FirstPass
    from tablesafe.suppress.fast_pace import HURRY_PACE_FROM, HURRY_PACE_WORK_GAIN

    def by(worked, reached, size, bound=1000):
        state = SimpleNamespace(job=SimpleNamespace(hurry_work=bound), _worked=lambda: worked,
                                _short_of_time=lambda *args: False)
        return FirstPass._hurry_now(state, False, 0.0, reached, size)

    assert HURRY_PACE_WORK_GAIN == 4.0 and HURRY_PACE_FROM == 0.1
    assert by(1000, 900, 1000) == "work"  # the bound itself
    # 20 units a target so far: the 90 left need 450 at a quarter of that, 650 in all
    assert by(200, 10, 100) is None
    # 40 a target: 400 + 900 pass the bound of 1,000
    assert by(400, 10, 100) == "work"
    assert by(400, 10, 100, bound=1400) is None
    # 90 units in 1 target would project far past it, but 90 is under a tenth of it
    assert by(90, 1, 1000) is None
    assert by(110, 1, 1000) == "work"
    assert by(400, 0, 100) is None  # no target reached yet


def test_chains_that_find_nothing_are_no_longer_tried(monkeypatch):
    """Past the chain time on a problem without its table structure, a pass whose first
    ``CHAIN_TRIAL`` chains all fail tries no more (each failure costs a search's time on
    Castro's problems): every target still gets a searched certificate, the pattern is
    proved by them and an independent audit passes it."""
    import tablesafe.suppress.fast_pace as fast_pace
    from tablesafe.suppress.local import chains

    calls = []

    def nothing(self, t, room, up, down):
        calls.append(t)
        return None

    monkeypatch.setattr(chains.RelationChains, "direction", nothing)
    monkeypatch.setattr(fast_pace, "CHAIN_TRIAL", 5)
    p = table_problem(34, [[5], [5], [6]], units=400).copy(model=None)
    pat = suppress(p, "fast", time_limit=0.001)
    assert len(calls) == 5 < pat.stats["lp_solves"]
    assert pat.stats["chain_certificates"] == 0 and pat.stats["box_certificates"] == 0
    assert pat.proof == "certificates"
    assert independent_audit(p, pat.withheld) == []


def test_chains_wait_past_the_fixed_share_once_the_hurried_pace_is_known(monkeypatch):
    """Past the job's ``chain_after`` a pass that has made ``PACED_FROM`` hurried searches
    goes on searching while ``chains_needed`` says the chains and last steps of the
    targets left still fit (on ``rand345`` at 20 s the chains of 52-159 targets doubled the
    withheld value where hurried searches would have ended in time); with fewer hurried
    searches, or the rule off, the fixed share starts them as before; and when the
    targets left need the time, whatever the pace."""
    from types import SimpleNamespace

    from tablesafe.suppress import fast_pace
    from tablesafe.suppress.fast_pace import PACED_FROM, chains_due

    job = SimpleNamespace(limit=60.0, n_targets=2_000, chain_after=54.0)
    left = (100, 80)  # about 0.6 s of chains and last steps: they fit after 55 s
    assert chains_due(job, 55.0, 55.1, left, PACED_FROM) is False
    assert chains_due(job, 55.0, 55.1, left, PACED_FROM - 1) is True
    assert chains_due(job, 53.0, 53.1, left, 0) is False  # before chain_after
    assert chains_due(job, 55.0, 59.9, left, PACED_FROM) is True  # the slowest search would overrun
    assert chains_due(job, 55.0, 55.1, (100_000, 90_000), PACED_FROM) is True  # too many left
    assert chains_due(SimpleNamespace(limit=None, n_targets=10, chain_after=None), 1e9, 1e9, left, 0) is False
    monkeypatch.setattr(fast_pace, "PACED_CHAINS", False)
    assert chains_due(job, 55.0, 55.1, left, PACED_FROM) is True


def test_a_hurried_pass_past_its_chain_share_searches_on_while_there_is_time(monkeypatch):
    """A pass hurried from its start whose ``chain_after`` is past at once (a tiny share
    of a long limit) gives no target a box or chain once its pace is known, where the
    fixed share alone would give every target one; both patterns proved and passed by
    an independent audit."""
    import tablesafe.suppress.fast as fast
    from tablesafe.suppress import fast_pace

    p = table_problem(35, [[5], [5], [6]], units=500)
    monkeypatch.setattr(fast, "HURRY_SHARE", 0.0)
    monkeypatch.setattr(fast, "CHAIN_SHARE", 1e-9)
    monkeypatch.setattr(fast_pace, "PACED_FROM", 0)
    paced = suppress(p, "fast", time_limit=600)
    monkeypatch.setattr(fast_pace, "PACED_CHAINS", False)
    fixed = suppress(p, "fast", time_limit=600)
    no_search = ("box", "chain")
    assert sum(paced.stats["found_by"].get(k, 0) for k in no_search) == 0
    assert sum(fixed.stats["found_by"].get(k, 0) for k in no_search) > 0
    for pat in (paced, fixed):
        assert pat.proof == "certificates"
        assert independent_audit(p, pat.withheld) == []


def test_chains_start_when_the_targets_left_need_the_time_left():
    """Besides the fixed chain time, a pass starts the chains when the open targets left
    (at ``CHAIN_SECONDS`` each) and the run's last steps (``FINISH_SECONDS`` per target
    of the run) would end past its limit; without a limit never."""
    from types import SimpleNamespace

    from tablesafe.suppress.fast_pace import CHAIN_SECONDS, FINISH_SECONDS, chains_needed

    job = SimpleNamespace(limit=60.0, n_targets=20_000)
    finish = 20_000 * FINISH_SECONDS
    room = 60.0 - finish - 40.0  # seconds for chains when 40 s have passed
    fits = int(room / CHAIN_SECONDS)
    assert not chains_needed(job, 40.0, fits - 10)
    assert chains_needed(job, 40.0, fits + 10)
    assert chains_needed(job, 60.0 - finish + 0.01, 0)
    assert not chains_needed(SimpleNamespace(limit=None, n_targets=20_000), 1e9, 10**9)


def test_slow_chains_start_early_enough_to_end_within_the_limit(monkeypatch):
    """Local LPs and chains slowed down artificially (50 and 20 ms, ``CHAIN_SECONDS``
    told so): the chains start early enough for the open targets left, and the run ends
    within the limit plus 10 %. (With the fixed chain time alone, at 90 % of the limit,
    the chains of the targets left ran past it.)"""
    import tablesafe.suppress.fast_first_pass as first_pass
    import tablesafe.suppress.fast_pace as fast_pace
    import tablesafe.suppress.local.search as search

    p = table_problem(35, [[5], [5], [6]], units=500)
    real = first_pass.FirstPass._chain
    real_solve = search.LocalSearch.solve

    def slow(self, t):
        time.sleep(0.02)
        return real(self, t)

    def slow_solve(self, query, cells, **kw):
        time.sleep(0.05)
        return real_solve(self, query, cells, **kw)

    monkeypatch.setattr(first_pass.FirstPass, "_chain", slow)
    monkeypatch.setattr(search.LocalSearch, "solve", slow_solve)
    monkeypatch.setattr(fast_pace, "CHAIN_SECONDS", 0.025)
    # the chains' timing alone: no hurry by the search's pace (it leaves the chains fewer
    # targets; test_a_pass_hurries_when_its_pace_would_not_reach_the_targets_left)
    monkeypatch.setattr(fast_pace, "HURRY_PACE_FROM", 1e9)
    limit = 2.0
    pat = suppress(p, "fast", time_limit=limit)
    assert pat.stats["seconds_before_audit"] <= 1.1 * limit
    assert pat.stats["chain_certificates"] + pat.stats["box_certificates"] > 20
    assert pat.proof == "certificates" and independent_audit(p, pat.withheld) == []


def _grid_lp(rows: int, cols: int):
    """The column-wise relations of a ``rows`` x ``cols`` table with its row, column and
    grand totals, as :meth:`LocalLP.solve` takes them."""
    import scipy.sparse as sp

    r, c = rows + 1, cols + 1
    cell = np.arange(r * c).reshape(r, c)
    entries = []
    for i in range(rows):  # each row's total is in the last column
        entries += [(i, int(cell[i, j]), 1.0) for j in range(cols)] + [(i, int(cell[i, cols]), -1.0)]
    for j in range(c):  # each column's total is in the last row
        k = rows + j
        entries += [(k, int(cell[i, j]), 1.0) for i in range(rows)] + [(k, int(cell[rows, j]), -1.0)]
    a, b, v = zip(*entries)
    m = sp.csc_matrix((v, (a, b)), shape=(rows + c, r * c))
    return m.indptr, m.indices, m.data, m.shape[0], r * c


def test_a_local_lp_past_its_time_cap_raises_and_the_next_one_is_not_capped():
    """``LocalLP.time_cap`` stops an LP with :class:`LPTimeLimit` (no deviation, no
    proof of none); with the cap taken off, the same LP is solved again (HiGHS counts
    its time limit over the instance's life: the cap must not stay behind)."""
    import pytest

    from tablesafe.suppress.local.lp import LocalLP, LPTimeLimit

    indptr, index, value, nrow, k = _grid_lp(60, 60)
    ones = np.ones(k)
    lp = LocalLP()
    args = (indptr, index, value, nrow, ones, 1e6 * ones, 1e6 * ones, 0, 5.0)
    lp.time_cap = 0.0
    with pytest.raises(LPTimeLimit):
        lp.solve(*args)
    lp.time_cap = None
    d = lp.solve(*args)
    assert d is not None and d[0] == pytest.approx(5.0)
    lp.time_cap = 60.0
    d = lp.solve(*args)
    assert d is not None and d[0] == pytest.approx(5.0)


def test_a_target_whose_lp_passes_its_cap_gets_a_chain_and_so_do_the_rest(monkeypatch):
    """A pass with a time limit caps each LP at the time before the chains must start;
    the target whose LP passes it gets a chain, and so does every target after it that
    has one. The
    stats count it and name the step as decided by the clock; the pattern is proved by
    its certificates and passes an independent audit."""
    import tablesafe.suppress.local.lp as local_lp

    p = table_problem(35, [[5], [5], [6]], units=500)
    real = local_lp.LocalLP.solve
    capped: list[float] = []

    def solve(self, *args):
        if self.time_cap is not None:
            capped.append(self.time_cap)
            if len(capped) >= 3:  # from the third capped LP on (in each order of targets)
                raise local_lp.LPTimeLimit("stopped by the test")
        return real(self, *args)

    monkeypatch.setattr(local_lp.LocalLP, "solve", solve)
    pat = suppress(p, "fast", time_limit=600)
    assert len(capped) >= 3 and all(0 < c < 600 for c in capped)  # targets without a chain search on
    assert pat.stats["lp_capped"] >= 1
    assert pat.stats["box_certificates"] + pat.stats["chain_certificates"] > 0
    assert any("an LP stopped by its cap on the time left" in s for s in pat.stats["clock_decided"])
    assert pat.proof == "certificates"
    assert independent_audit(p, pat.withheld) == []


def test_an_unhurried_lp_is_capped_where_the_pace_rule_would_hurry_the_pass():
    """The cap of an LP before the pass hurries (``fast_pace.pace_hurries_at``) is the
    moment from which the pace rule of ``_short_of_time`` hurries it (a single long LP
    then no longer spends the time the hurried search needs: Castro's NINE12 at 10 s
    spent 2.9 s on one target's LPs and ended at 10.9-12.5 s); ``hurry_after`` itself
    before any target is reached."""
    from tablesafe.suppress.fast_pace import pace_hurries_at

    for began, reached, size in ((0.0, 31, 1178), (60.0, 30, 1530), (0.0, 400, 1000), (5.0, 2, 90_000)):
        at = pace_hurries_at(200.0, began, reached, size)
        assert began < at <= 200.0
        hurry = [_short_of_time(e, began=began, reached=reached, size=size, hurry_after=200.0, chain_after=None)
                 for e in (at - 0.01, at + 0.01)]
        assert hurry == [False, True], (began, reached, size, at)
    assert pace_hurries_at(200.0, 0.0, 0, 1000) == 200.0


def test_a_long_lp_before_the_pass_hurries_makes_it_hurry(monkeypatch):
    """The first LP past its cap, before the pass hurries, hurries it (by the clock) and
    its target is searched again hurried; the pattern is proved and passes an independent
    audit."""
    import tablesafe.suppress.local.lp as local_lp

    p = table_problem(35, [[5], [5], [6]], units=500)
    real = local_lp.LocalLP.solve
    stopped: list[float] = []

    def solve(self, *args):
        if self.time_cap is not None and not stopped:
            stopped.append(self.time_cap)
            raise local_lp.LPTimeLimit("stopped by the test")
        return real(self, *args)

    monkeypatch.setattr(local_lp.LocalLP, "solve", solve)
    pat = suppress(p, "fast", time_limit=600, certificates=True)
    assert len(stopped) == 1 and pat.stats["lp_capped"] >= 1
    assert pat.stats["hurried_by"] == "clock" and pat.stats["hurried_after_targets"] is not None
    assert pat.proof == "certificates"
    assert independent_audit(p, pat.withheld) == []


def test_a_small_search_is_due_only_for_a_dear_box_with_time_to_spare():
    """:func:`small_search_due`: not before a target was searched (no average yet), not
    for a box within :data:`PRICEY_BOX` times the searched targets' average cost, not
    when the search would end past the time the chains after it need."""
    from tablesafe.suppress.fast_fallback import PRICEY_BOX, SMALL_SEARCH_SECONDS, small_search_due

    avg = 2.0  # 10 searched targets added 20
    dear, cheap = PRICEY_BOX * avg * 1.01, PRICEY_BOX * avg * 0.99
    assert small_search_due(dear, 20.0, 10, now=1.0, chains_from=2.0)
    assert not small_search_due(cheap, 20.0, 10, now=1.0, chains_from=2.0)
    assert not small_search_due(dear, 0.0, 0, now=1.0, chains_from=2.0)
    assert not small_search_due(dear, 20.0, 10, now=2.0 - SMALL_SEARCH_SECONDS / 2, chains_from=2.0)


def test_dear_boxes_give_way_to_small_searches_while_there_is_time(monkeypatch):
    """Chains from the sixth target on, with the whole limit left: every target whose
    box costs more than the average searched target (``PRICEY_BOX`` 1) gets a small
    search instead, and the pattern withholds less than with every box kept (no second
    pass, which would release some of the boxes' cells); an independent audit passes
    both."""
    import tablesafe.suppress.fast_first_pass as first_pass
    from tablesafe.suppress import fast_fallback
    from tablesafe.suppress.fast import fast_pattern
    from tablesafe.suppress.fast_options import FastOptions

    calls = {"n": 0}

    def after_five(*args):
        calls["n"] += 1
        return calls["n"] > 5

    p = table_problem(36, [[3, 2], [4], [2, 3]], units=300)
    once = FastOptions(cleanup_effort=0.0)
    monkeypatch.setattr(first_pass, "chains_due", after_five)
    monkeypatch.setattr(fast_fallback, "PRICEY_BOX", 1.0)
    small = fast_pattern(p, time_limit=600, options=once, workers=1)
    calls["n"] = 0
    monkeypatch.setattr(fast_fallback, "PRICEY_BOX", float("inf"))
    boxes = fast_pattern(p, time_limit=600, options=once, workers=1)
    assert small.stats["found_by"].get("small search, not a box", 0) > 0
    assert boxes.stats["found_by"].get("small search, not a box", 0) == 0
    secondary = ~p.sensitive
    assert p.value[small.withheld & secondary].sum() < p.value[boxes.withheld & secondary].sum()
    for pat in (small, boxes):
        assert independent_audit(p, pat.withheld) == []
