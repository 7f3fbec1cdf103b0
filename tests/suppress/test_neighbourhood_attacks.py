"""Attacks on a target's neighbourhood (:mod:`tablesafe.suppress.neighbourhood_attacks`).

A table found on a neighbourhood (the cells further away held at their true values) is
a table of the whole block, so every attack passed there is a certificate; the
neighbourhood reaches as many relation hops as the table has dimensions, since the
smallest table of a three-way table moves the eight corners of a cube, the furthest of
them three hops from the target."""

from __future__ import annotations

import numpy as np
import pytest
from _suppress_gen import assert_certificate, repaired_and_random_patterns, table_problem

from tablesafe.suppress import neighbourhood_attacks as na
from tablesafe.suppress.attacker import DOWN, UP, BlockLP, Bounds
from tablesafe.suppress.protection import OutOfTime, keys_for, relations_by_cell


@pytest.fixture(autouse=True)
def _any_first_neighbourhood(monkeypatch):
    """On these small tables a first neighbourhood often holds most of its block, which
    is then attacked on the block at once (``FIRST_SHARE``); the tests below are about
    what neighbourhoods find, so they allow any."""
    monkeypatch.setattr(na, "FIRST_SHARE", 1.0)


@pytest.mark.parametrize("seed,shape,units", [(12, [[2, 2], [2], [3]], 120), (7, [[3], [3], [3]], 150),
                                              (11, [[3, 2], [4]], 70)])
def test_what_a_neighbourhood_passes_is_a_certificate_of_the_table(seed, shape, units):
    p = table_problem(seed, shape, units=units)
    b = Bounds.of(p, singleton=True)
    by_cell = relations_by_cell(p)
    passed = 0
    for w in repaired_and_random_patterns(p, b, seed):
        keys = keys_for(p, b, w, np.flatnonzero(p.sensitive))
        out: dict = {}
        left = na.attack_neighbourhoods(p, b, w.astype(float), keys, out, by_cell, OutOfTime, sparse=True,
                                        block_cells=int(w.sum()))
        assert set(left) | set(out) == set(keys) and not set(left) & set(out)
        for key, att in out.items():
            assert att.ok
            assert_certificate(p, b, w, key, att, exact=True)
            passed += 1
    assert passed > 0


@pytest.mark.parametrize("seed,shape,units", [(12, [[2, 2], [2], [3]], 120), (11, [[3, 2], [4]], 70),
                                              (5, [[4, 3], [3, 2]], 400)])
def test_tables_found_earlier_in_the_block_answer_certificates_with_fewer_lps(seed, shape, units, monkeypatch):
    """With the block's :class:`ReachedTables`, an attack that a table found for an earlier
    target answers (stretched or turned round within the boxes) gets no LP: the same
    verdicts, each answer a certificate of the table, and fewer neighbourhood LPs."""
    from tablesafe.suppress.attacker import block_bounds
    from tablesafe.suppress.reached_tables import ReachedTables

    p = table_problem(seed, shape, units=units)
    b = Bounds.of(p, singleton=True)
    by_cell = relations_by_cell(p)
    solved = []
    attack = BlockLP.attack

    def counted(self, *args, **kw):
        solved.append(1)
        return attack(self, *args, **kw)

    monkeypatch.setattr(BlockLP, "attack", counted)
    saved = 0
    for w in repaired_and_random_patterns(p, b, seed):
        keys = keys_for(p, b, w, np.flatnonzero(p.sensitive))
        runs = []
        for reuse in (False, True):
            cells = np.flatnonzero(w)
            found = ReachedTables(cells, *block_bounds(b, w.astype(float), cells)[:2]) if reuse else None
            out: dict = {}
            del solved[:]
            left = na.attack_neighbourhoods(p, b, w.astype(float), keys, out, by_cell, OutOfTime, sparse=True,
                                            block_cells=int(w.sum()), found=found)
            runs.append((set(left), out, len(solved)))
        (left0, out0, lps0), (left1, out1, lps1) = runs
        assert set(out0) <= set(out1) and left1 <= left0  # a reused table passes what an LP passed
        for key, att in out1.items():
            assert att.ok
            assert_certificate(p, b, w, key, att, exact=True)
        assert lps1 <= lps0
        saved += lps0 - lps1
    assert saved > 0


def _cube_case():
    """A one-level three-way table, a sensitive inner cell and the 2 x 2 x 2 cube of inner
    cells around it withheld (and nothing else), on which the target moves by its level."""
    p = table_problem(7, [[3], [3], [3]], units=400)
    b = Bounds.of(p, singleton=False)
    model = p.model
    assert model is not None
    codes = [list(d.hierarchy.codes) for d in model.dims]
    index = {name: i for i, name in enumerate(p.names.astype(str))}
    inner = [c[1:] for c in codes]  # the codes below each total

    def cell(a, bb, c):
        return index["|".join((a, bb, c))]

    for k in np.flatnonzero(p.sensitive).tolist():
        parts = str(p.names[k]).split("|")
        if any(part == c[0] for part, c in zip(parts, codes)):
            continue  # a total
        for other in [(x, y, z) for x in inner[0] for y in inner[1] for z in inner[2]]:
            if any(o == q for o, q in zip(other, parts)):
                continue
            cube = [cell(x, y, z) for x in (parts[0], other[0]) for y in (parts[1], other[1])
                    for z in (parts[2], other[2])]
            w = np.zeros(p.n, dtype=bool)
            w[cube] = True
            rows = np.unique(relations_by_cell(p)[:, cube].indices)
            att = BlockLP(p, b, w.astype(float), np.array(sorted(cube)), rows).attack(k, UP, b.req_up[k], sparse=True)
            if att.ok and b.req_up[k] > 0:
                return p, b, w, k
    raise AssertionError("no cube found")


def test_a_three_way_cube_is_found_three_hops_out(monkeypatch):
    p, b, w, k = _cube_case()
    assert na.neighbourhood_hops(p) == 3
    by_cell = relations_by_cell(p)
    keys = [(k, UP, -1), (k, DOWN, -1)]

    def run():
        out: dict = {}
        left = na.attack_neighbourhoods(p, b, w.astype(float), keys, out, by_cell, OutOfTime, sparse=True,
                                        block_cells=int(w.sum()))
        return out, left

    out, left = run()
    assert not left
    for key, att in out.items():
        assert_certificate(p, b, w, key, att, exact=True)
        assert len(att.cells) == 8  # the cube's corners
    # two hops and no widening (what the neighbourhood was before): no table there
    monkeypatch.setattr(na, "neighbourhood_hops", lambda problem: 2)
    monkeypatch.setattr(na, "NEIGHBOURHOOD_SHARE", 0.0)
    out, left = run()
    assert not out and sorted(left) == sorted(keys)


def test_a_neighbourhood_is_widened_until_the_attack_passes(monkeypatch):
    """Started at one hop, the neighbourhood grows by ``WIDEN_HOPS`` until the cube is in
    it; with no room to widen the attack is left to the whole block."""
    p, b, w, k = _cube_case()
    by_cell = relations_by_cell(p)
    monkeypatch.setattr(na, "neighbourhood_hops", lambda problem: 1)
    monkeypatch.setattr(na, "WIDEN_HOPS", 1)
    out: dict = {}
    left = na.attack_neighbourhoods(p, b, w.astype(float), [(k, UP, -1)], out, by_cell, OutOfTime, sparse=True,
                                    block_cells=int(w.sum()) * 8)
    assert not left and out[(k, UP, -1)].ok
    monkeypatch.setattr(na, "NEIGHBOURHOOD_SHARE", 0.0)
    out = {}
    left = na.attack_neighbourhoods(p, b, w.astype(float), [(k, UP, -1)], out, by_cell, OutOfTime, sparse=True,
                                    block_cells=int(w.sum()))
    assert left == [(k, UP, -1)] and not out


def _sizes_attacked(monkeypatch) -> list[int]:
    """Record the neighbourhood size of every attacker LP solved from now on."""
    sizes: list[int] = []
    real = BlockLP.attack

    def counted(self, *a, **kw):
        sizes.append(len(self.cells))
        return real(self, *a, **kw)

    monkeypatch.setattr(BlockLP, "attack", counted)
    return sizes


def test_a_single_respondent_starts_where_the_outsider_passed(monkeypatch):
    """The outsider's table of the cube is found at three hops (from one, widened); a
    single respondent knows more, so no smaller neighbourhood holds its table: its
    attack starts at three hops. After an outsider that no neighbourhood served, the
    respondent's attack goes straight to the block with no neighbourhood LP."""
    p, b, w, k = _cube_case()
    by_cell = relations_by_cell(p)
    monkeypatch.setattr(na, "neighbourhood_hops", lambda problem: 1)
    monkeypatch.setattr(na, "WIDEN_HOPS", 1)
    x = w.astype(float)
    radius: dict = {}
    out: dict = {}
    left = na.attack_neighbourhoods(p, b, x, [(k, UP, -1)], out, by_cell, OutOfTime, sparse=True,
                                    block_cells=int(w.sum()) * 8, radius=radius)
    assert not left and radius[(k, UP)] == 3
    three = na._grow(p.relations, by_cell, w, np.array([k]), 3).size
    s = int(np.flatnonzero(w & (np.arange(p.n) != k))[0])  # a corner of the cube
    sizes = _sizes_attacked(monkeypatch)
    out = {}
    left = na.attack_neighbourhoods(p, b, x, [(k, UP, s)], out, by_cell, OutOfTime, sparse=True,
                                    block_cells=int(w.sum()) * 8, radius=radius)
    assert sizes and sizes[0] == three  # no LP on the one- and two-hop neighbourhoods
    # without the radius the same attack climbs from one hop
    sizes.clear()
    na.attack_neighbourhoods(p, b, x, [(k, UP, s)], {}, by_cell, OutOfTime, sparse=True,
                             block_cells=int(w.sum()) * 8)
    assert sizes[0] < three
    # an outsider left to the block: its respondents skip the neighbourhoods
    monkeypatch.setattr(na, "NEIGHBOURHOOD_SHARE", 0.0)
    radius = {}
    left = na.attack_neighbourhoods(p, b, x, [(k, DOWN, -1)], {}, by_cell, OutOfTime, sparse=True,
                                    block_cells=int(w.sum()), radius=radius)
    assert left == [(k, DOWN, -1)] and radius[(k, DOWN)] == -1
    sizes.clear()
    left = na.attack_neighbourhoods(p, b, x, [(k, DOWN, s)], {}, by_cell, OutOfTime, sparse=True,
                                    block_cells=int(w.sum()), radius=radius)
    assert left == [(k, DOWN, s)] and not sizes


@pytest.mark.parametrize("seed,shape,units", [(12, [[2, 2], [2], [3]], 120), (7, [[3], [3], [3]], 150)])
def test_starting_insiders_at_the_outsiders_radius_keeps_every_verdict(seed, shape, units, monkeypatch):
    """Every attack (outsider and single respondents, spelt out) passes or fails alike
    with and without the radius, with fewer attacker LPs with it."""
    from tablesafe.suppress import attack_runs

    p = table_problem(seed, shape, units=units)
    b = Bounds.of(p, singleton=True)
    monkeypatch.setattr(attack_runs, "LOCAL_FIRST", 0)  # every block attacked locally first
    sizes = _sizes_attacked(monkeypatch)
    real_knows_more = na._knows_more
    counts = {True: 0, False: 0}
    checked = 0
    for w in repaired_and_random_patterns(p, b, seed):
        keys = keys_for(p, b, w, np.flatnonzero(p.sensitive))
        verdicts = {}
        for with_radius in (True, False):
            # without: every attack counts as the outsider's and starts at the first neighbourhood
            monkeypatch.setattr(na, "_knows_more", real_knows_more if with_radius else (lambda key, also: False))
            sizes.clear()
            got = attack_runs.run_attacks(p, b, w.astype(float), keys, want_dual=False, sparse=True,
                                          expect_pass=True)
            counts[with_radius] += len(sizes)
            verdicts[with_radius] = {key: got[key].ok for key in keys}
        assert verdicts[True] == verdicts[False]
        checked += len(keys)
    assert checked > 0 and counts[True] <= counts[False]


def test_a_first_neighbourhood_holding_most_of_the_block_is_left_to_the_block(monkeypatch):
    """A flat two-way table: two hops from any cell reach every withheld cell, so an LP
    on that neighbourhood is the block's LP built again for one target. With the default
    ``FIRST_SHARE`` the attack goes to the block with no neighbourhood LP; the block's
    own LP then passes it, as the neighbourhood's did."""
    from tablesafe.suppress import attack_runs

    monkeypatch.setattr(na, "FIRST_SHARE", 0.5)
    p = table_problem(5, [[8], [6]], units=60)
    b = Bounds.of(p, singleton=False)
    w = p.status != "Z"  # every non-empty cell withheld: one block
    x = w.astype(float)
    by_cell = relations_by_cell(p)
    k = int(np.flatnonzero(p.sensitive & (b.req_up > 0))[0])
    sizes = _sizes_attacked(monkeypatch)
    left = na.attack_neighbourhoods(p, b, x, [(k, UP, -1)], {}, by_cell, OutOfTime, sparse=True,
                                    block_cells=int(w.sum()))
    assert left == [(k, UP, -1)] and not sizes
    monkeypatch.setattr(na, "FIRST_SHARE", 1.0)
    out: dict = {}
    left = na.attack_neighbourhoods(p, b, x, [(k, UP, -1)], out, by_cell, OutOfTime, sparse=True,
                                    block_cells=int(w.sum()))
    assert not left and out[(k, UP, -1)].ok and sizes and sizes[0] > 0.5 * int(w.sum())
    got = attack_runs.run_attacks(p, b, x, [(k, UP, -1)], want_dual=False, sparse=True, expect_pass=True)
    assert got[(k, UP, -1)].ok
