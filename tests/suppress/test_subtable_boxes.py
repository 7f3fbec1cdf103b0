"""Box certificates of HiTaS subtables (:mod:`tablesafe.suppress.subtable_boxes`): every
attack they answer is answered by a certificate of the subtable, the attacker's LP agrees
that it passes, and a flat table's one subtable needs far fewer attacker LPs with them."""

from __future__ import annotations

import numpy as np
import pytest
from _suppress_gen import assert_certificate, independent_audit, table_problem
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tablesafe.problem import SAFE
from tablesafe.suppress import suppress
from tablesafe.suppress.attacker import DOWN, UP, Bounds
from tablesafe.suppress.modular import _subproblem, modular_pattern, subtable_grids
from tablesafe.suppress.protection import candidates, run_attacks
from tablesafe.suppress.subtable_boxes import BoxTables

SHAPES = [[[3], [4]], [[2, 2], [3]], [[3], [2], [2]], [[2, 2], [2], [2]]]


def _subtable(seed: int, shape, units: int, pick: int):
    """A subtable of a generated table as its own problem, with its grid."""
    p = table_problem(seed, shape, units=units)
    subs = subtable_grids(p)
    _, cells, grid = subs[pick % len(subs)]
    none = np.zeros(p.n, dtype=bool)
    sub, _, _ = _subproblem(p, p.sensitive.copy(), none, cells)
    return sub, Bounds.of(sub, singleton=True), grid


def _keys(sub, b):
    keys = []
    for k in np.flatnonzero(sub.sensitive).tolist():
        keys += [(k, UP, -1), (k, DOWN, -1)]
        single = np.flatnonzero(b.singleton)
        keys += [(k, UP, int(s)) for s in single[single != k][:2]]
    return keys


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10_000), shape=st.sampled_from(SHAPES), pick=st.integers(0, 50),
       share=st.floats(0.2, 1.0), fractional=st.booleans())
def test_every_box_is_a_certificate_the_attackers_lp_confirms(seed, shape, pick, share, fractional):
    """On random patterns (some fractional, as the master's LP relaxation gives), each
    attack the boxes answer carries a certificate of the subtable under the pattern, and
    the attacker's LP on the same pattern reaches the level too."""
    sub, b, grid = _subtable(seed, shape, 40, pick)
    if not sub.sensitive.any():
        return
    rng = np.random.default_rng(seed)
    cand = candidates(sub, b)
    x = sub.sensitive.astype(float)
    on = cand & (rng.random(sub.n) < share)
    x[on] = rng.uniform(0.3, 1.0, int(on.sum())) if fractional else 1.0
    keys = _keys(sub, b)
    boxes = BoxTables(sub, b, grid)
    got = boxes(x, keys)
    FOUND.append(len(got))
    lp = run_attacks(sub, b, x, keys, want_dual=False)
    for key, att in got.items():
        assert att.ok and lp[key].ok, key
        if not fractional:
            assert_certificate(sub, b, x > 0, key, att, exact=True)
        assert len(att.cells) == 2 ** len(grid.shape)
        assert set(np.unique(np.abs(att.dev))) == {att.required}


FOUND: list[int] = []


def test_the_random_patterns_above_had_boxes_to_check():
    """(Runs after the property test: its examples were not all without a box.)"""
    assert sum(FOUND) > 0


@pytest.mark.parametrize("shape", [[[4], [5]], [[3], [3], [2]]])
def test_a_fully_withheld_flat_table_is_proved_by_rectangles_and_boxes(shape):
    """Seed 000's rectangle (and its three-way box): with every cell of a flat table
    withheld and no single respondent to avoid, each sensitive cell whose siblings can give
    its level moves with 2**d cells, each by the level, and the relations balance."""
    p = table_problem(11, shape, units=40)
    b = Bounds.of(p, singleton=False)
    (_, cells, grid), = subtable_grids(p)  # a flat table is its own single subtable
    assert len(cells) == p.n
    w = np.ones(p.n, dtype=bool)
    keys = [(int(k), d, -1) for k in np.flatnonzero(p.sensitive) for d in (UP, DOWN)]
    got = BoxTables(p, b, grid)(w.astype(float), keys)
    assert keys and len(got) == len(keys)  # (here every one has such siblings)
    for key, att in got.items():
        assert_certificate(p, b, w, key, att, exact=True)


def test_an_insiders_box_leaves_the_insiders_cell_alone():
    """An insider knows its own cell: a box answering its attack never moves that cell,
    and one that would have to is not offered."""
    sub, b, grid = _subtable(11, [[30], [12]], 150, 0)
    x = np.ones(sub.n)
    boxes = BoxTables(sub, b, grid)
    checked = 0
    for k in np.flatnonzero(sub.sensitive).tolist():
        outsider = boxes(x, [(k, UP, -1)]).get((k, UP, -1))
        if outsider is None:
            continue
        moved = [int(c) for c in outsider.cells if c != k]
        key = (k, UP, moved[0])
        att = boxes(x, [key]).get(key)
        if att is not None:
            assert moved[0] not in att.cells.tolist()
            assert_certificate(sub, b, x > 0, key, att, exact=True)
            checked += 1
    assert checked > 0


def test_a_flat_tables_subtable_takes_far_fewer_attacker_lps_with_boxes(monkeypatch):
    """A flat 30 x 12 table is one subtable. Taken as a large subtable (its tables handed
    on from the boxes too), most of its attacks need no LP and its LP work falls by more
    than half; as the small subtable it is (handed-on tables from sparse LPs), the cut
    rounds alone still save LP work. The whole run's pattern passes the independent
    audit either way. (Its attacks are taken as LPs here: a two-way subtable's are flows
    otherwise, cheaper than the boxes, which then serve three-way subtables only.)"""
    import tablesafe.suppress.subtable_cuts as subtable_cuts
    from tablesafe.suppress import flow_attacks

    monkeypatch.setattr(flow_attacks, "USE_FLOWS", False)
    p = table_problem(5, [[30], [12]], units=150)
    b = Bounds.of(p, singleton=True)
    _, without = modular_pattern(p, b, workers=1, boxes=False)
    _, small = modular_pattern(p, b, workers=1, boxes=True)
    assert p.n <= subtable_cuts.BOX_TABLES_FROM
    assert small["subtables_solved"] == 1 and small["subtable_work"] < without["subtable_work"]
    assert independent_audit(p, suppress(p, "modular").withheld) == []
    monkeypatch.setattr(subtable_cuts, "BOX_TABLES_FROM", 0)
    _, large = modular_pattern(p, b, workers=1, boxes=True)
    assert large["subtables_solved"] == 1
    assert large["subtable_work"] < 0.5 * without["subtable_work"]
    assert independent_audit(p, suppress(p, "modular").withheld) == []


def test_a_published_cell_is_never_in_a_box():
    """Cells the pattern publishes cannot move: no box uses one."""
    sub, b, grid = _subtable(11, [[30], [12]], 80, 0)
    x = sub.sensitive.astype(float)
    got = BoxTables(sub, b, grid)(x, _keys(sub, b))
    assert got
    for att in got.values():
        assert sub.sensitive[att.cells].all()
    assert (sub.status[~sub.sensitive] == SAFE).any()


@pytest.mark.parametrize("shape,units", [([[30], [12]], 150), ([[8], [6], [4]], 160)])
def test_large_grids_pick_the_same_boxes_one_key_at_a_time(shape, units, monkeypatch):
    """Large grids are searched one key at a time over the partners whose own corner can
    move; on the same patterns that gives the very boxes the search of many keys at once
    gives (the cheapest, the first of equals)."""
    import tablesafe.suppress.subtable_boxes as boxes_module

    p = table_problem(4, shape, units=units)
    b = Bounds.of(p, singleton=True)
    (_, _, grid), = subtable_grids(p)
    rng = np.random.default_rng(1)
    keys = _keys(p, b)
    for share in (0.3, 0.7, 1.0):
        x = p.sensitive | (rng.random(p.n) < share)
        monkeypatch.setattr(boxes_module, "SLICED_FROM", 10**9)
        together = BoxTables(p, b, grid)(x.astype(float), keys)
        monkeypatch.setattr(boxes_module, "SLICED_FROM", 0)
        one_by_one = BoxTables(p, b, grid)(x.astype(float), keys)
        assert together and together.keys() == one_by_one.keys()
        for key, att in together.items():
            assert att.cells.tolist() == one_by_one[key].cells.tolist()
            assert np.allclose(att.dev, one_by_one[key].dev)


def test_the_box_search_stops_at_its_deadline():
    """Past the deadline the search raises OutOfTime instead of going on (a flat table of
    tens of thousands of cells can take seconds)."""
    import time

    from tablesafe.suppress.attack_runs import OutOfTime

    p = table_problem(5, [[30], [12]], units=150)
    b = Bounds.of(p, singleton=True)
    (_, _, grid), = subtable_grids(p)
    with pytest.raises(OutOfTime):
        BoxTables(p, b, grid)(np.ones(p.n), _keys(p, b), deadline=time.monotonic() - 1.0)
