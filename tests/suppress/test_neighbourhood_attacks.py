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
