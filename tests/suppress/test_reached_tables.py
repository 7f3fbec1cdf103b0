"""Attacks answered from a table found earlier in the same block
(:mod:`tablesafe.suppress.reached_tables`) get the verdict a fresh LP gives, and the
table they carry is checked here as a certificate: additive, within the attacker's
bounds, moving withheld cells only, moving the target by its level and leaving the
insider's own cell alone."""

from __future__ import annotations

import numpy as np
import pytest
from _suppress_gen import assert_certificate, repaired_and_random_patterns, table_problem

from tablesafe.suppress import attack_runs
from tablesafe.suppress.attacker import UP, Bounds
from tablesafe.suppress.protection import keys_for, run_attacks
from tablesafe.suppress.reached_tables import ReachedTables

CASES = [(11, [[3, 2], [4]], 70), (12, [[2, 2], [2], [3]], 120), (5, [[4], [3, 2]], 90),
         (7, [[3], [3], [3]], 150)]


@pytest.mark.parametrize("capacity", [False, True])
@pytest.mark.parametrize("certify", [True, False])
@pytest.mark.parametrize("seed,shape,units", CASES)
def test_reused_tables_give_the_fresh_verdicts_and_are_certificates(seed, shape, units, certify, capacity,
                                                                     monkeypatch):
    """With ``certify`` the attack gets its own sparse certificate, without it carries the
    earlier table: a certificate either way. With ``capacity`` complements may move down
    by a quarter of their value only (targets by their whole value)."""
    p = table_problem(seed, shape, units=units)
    if capacity:
        p = p.copy(capacity=0.25 * np.abs(p.value))
    b = Bounds.of(p, singleton=True, capacity=capacity)
    hits = []
    answer = ReachedTables.answer

    def counting(self, *args, **kw):
        got = answer(self, *args, **kw)
        if got is not None:
            hits.append((got.target, got.direction, got.insider))
        return got

    own_answer = ReachedTables.own_answer
    own_hits = []

    def counting_own(self, *args, **kw):
        got = own_answer(self, *args, **kw)
        if got is not None:
            hits.append((got.target, got.direction, got.insider))
            own_hits.append(got)
        return got

    monkeypatch.setattr(ReachedTables, "answer", counting)
    monkeypatch.setattr(ReachedTables, "own_answer", counting_own)
    reused_keys = 0
    for w in repaired_and_random_patterns(p, b, seed):
        keys = keys_for(p, b, w, np.flatnonzero(p.sensitive))
        monkeypatch.setattr(attack_runs, "REUSE_TABLES", False)
        fresh = run_attacks(p, b, w.astype(float), keys, split_insiders=False, sparse=True)
        monkeypatch.setattr(attack_runs, "REUSE_TABLES", True)
        before = len(hits)
        got = run_attacks(p, b, w.astype(float), keys, split_insiders=False, sparse=True, certify=certify)
        reused = set(hits[before:])
        assert got.keys() == fresh.keys()
        for key, att in got.items():
            assert att.ok == fresh[key].ok, key
            if key in reused:
                reused_keys += 1
                assert att.reached <= fresh[key].reached + 1e-6 * max(1.0, abs(fresh[key].reached))
                assert_certificate(p, b, w, key, att)
    assert reused_keys > 0
    assert own_hits, "no insider attack was answered by a table of the target's own"


def test_a_targets_own_table_answers_the_insiders_it_leaves_alone():
    from tablesafe.suppress.attacker import Attack

    cells = np.array([3, 5, 8, 9])
    kept = ReachedTables(cells, np.full(4, 10.0), np.full(4, 10.0))
    kept.add(Attack(3, UP, 5, 2.0, 2.0, cells=np.array([3, 8]), dev=np.array([2.0, -2.0])))
    kept.add(Attack(3, UP, 8, 2.0, 2.0, cells=np.array([3, 5, 9]), dev=np.array([2.0, -1.0, -1.0])))
    assert kept.own_answer(3, UP, 9, 2.0).cells.tolist() == [3, 8]  # the first table leaves 9 alone
    assert kept.own_answer(3, UP, 5, 2.0).cells.tolist() == [3, 8]
    assert kept.own_answer(3, UP, 8, 2.0).cells.tolist() == [3, 5, 9]
    assert kept.own_answer(3, UP, 9, 2.0, known=(8,)) is None  # each table moves 8 or 9
    assert kept.own_answer(3, UP, 9, 2.5) is None  # a higher level than they reach
    assert kept.own_answer(3, -UP, 9, 2.0) is None  # no table downwards
    assert kept.own_answer(3, UP, 9, 2.0).insider == 9


def test_a_table_moving_the_insiders_cell_is_not_reused():
    from tablesafe.suppress.attacker import DOWN, Attack

    cells = np.array([3, 5, 8, 9])
    kept = ReachedTables(cells, np.full(4, 10.0), np.full(4, 10.0))
    kept.add(Attack(3, UP, -1, 4.0, 2.0, cells=np.array([3, 5, 8]), dev=np.array([4.0, -4.0, 1.0])))
    # stretched 2.5 times (cells 3 and 5 then reach their boxes of 10): cell 8 moves 2.5
    assert kept.answer(8, UP, -1, 2.5) is not None
    assert kept.answer(8, UP, -1, 2.6) is None
    assert kept.answer(5, DOWN, -1, 3.0) is not None
    assert kept.answer(5, DOWN, 8, 3.0) is None  # the insider of cell 8 knows it
    assert kept.answer(5, DOWN, 9, 3.0) is not None  # cell 9 does not move
    assert kept.answer(5, DOWN, 9, 3.0, known=(3,)) is None
    assert kept.answer(9, UP, -1, 0.5) is None  # no table moves it


def test_a_kept_table_is_stretched_and_turned_round_within_the_boxes():
    """A multiple of a table is a table (``A z = 0``): the kept one answers as far as the
    boxes let it go, either way, and the answer carries that multiple."""
    from tablesafe.suppress.attacker import DOWN, Attack

    cells = np.array([3, 5, 8])
    kept = ReachedTables(cells, np.array([10.0, 6.0, 30.0]), np.array([8.0, 20.0, 3.0]))
    kept.add(Attack(3, UP, -1, 2.0, 2.0, cells=cells, dev=np.array([2.0, -2.0, 1.0])))
    # forwards: 3 up to 10 (x5), 5 down to 20 (x10), 8 up to 30 (x30): x5
    up = kept.answer(3, UP, -1, 10.0)
    assert up is not None and np.allclose(up.dev, [10.0, -10.0, 5.0], rtol=1e-6)
    assert kept.answer(3, UP, -1, 10.1) is None
    # backwards: 3 down to 8 (x4), 5 up to 6 (x3), 8 down to 3 (x3): x3
    dn = kept.answer(5, UP, -1, 6.0)
    assert dn is not None and np.allclose(dn.dev, [-6.0, 6.0, -3.0], rtol=1e-6)
    # the answer moves its target by exactly the level asked for; ``reached`` is how far
    # the kept table goes
    less = kept.answer(5, UP, -1, 4.0)
    assert less is not None and np.allclose(less.dev, [-4.0, 4.0, -2.0], rtol=1e-6)
    assert less.reached == pytest.approx(6.0)
    assert kept.answer(3, DOWN, -1, 6.0) is not None
    assert kept.answer(3, DOWN, -1, 6.1) is None
    for att in (up, dn):
        pos = np.searchsorted(cells, att.cells)
        assert (att.dev <= kept.up[pos] + 1e-9).all() and (-att.dev <= kept.dn[pos] + 1e-9).all()


def test_a_table_moving_its_target_beyond_a_complements_box_is_shrunk():
    """With the capacity option a complement may move down less than a target: a table
    that moves its own target further than that is kept only scaled down into the box."""
    from tablesafe.suppress.attacker import DOWN, Attack

    cells = np.array([3, 5, 8])
    dn = np.array([2.0, 10.0, 10.0])  # cell 3 may move down by 2 as a complement
    kept = ReachedTables(cells, np.full(3, 10.0), dn)
    kept.add(Attack(3, DOWN, -1, 4.0, 4.0, cells=np.array([3, 5, 8]), dev=np.array([-4.0, 4.0, 1.0])))
    assert kept.answer(5, UP, -1, 2.1) is None  # halved, it moves cell 5 up by 2
    got = kept.answer(5, UP, -1, 1.0)
    assert got is not None and np.allclose(got.dev, [-1.0, 1.0, 0.25], rtol=1e-6)
