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
    assert kept.answer(8, UP, -1, 1.0) is not None
    assert kept.answer(8, UP, -1, 1.5) is None  # moves it by 1 only
    assert kept.answer(5, DOWN, -1, 3.0) is not None
    assert kept.answer(5, DOWN, 8, 3.0) is None  # the insider of cell 8 knows it
    assert kept.answer(5, DOWN, 9, 3.0) is not None  # cell 9 does not move
    assert kept.answer(5, DOWN, 9, 3.0, known=(3,)) is None
    assert kept.answer(9, UP, -1, 0.5) is None  # no table moves it


def test_a_table_moving_its_target_beyond_a_complements_box_is_not_kept():
    """With the capacity option a complement may move down less than a target: a table
    that moves its own target further than that is no table for another target."""
    from tablesafe.suppress.attacker import DOWN, Attack

    cells = np.array([3, 5, 8])
    dn = np.array([2.0, 10.0, 10.0])  # cell 3 may move down by 2 as a complement
    kept = ReachedTables(cells, np.full(3, 10.0), dn)
    kept.add(Attack(3, DOWN, -1, 4.0, 4.0, cells=np.array([3, 5, 8]), dev=np.array([-4.0, 4.0, 1.0])))
    assert kept.answer(5, UP, -1, 3.0) is None
    kept.add(Attack(3, DOWN, -1, 2.0, 2.0, cells=np.array([3, 5, 8]), dev=np.array([-2.0, 2.0, 1.0])))
    assert kept.answer(5, UP, -1, 2.0) is not None
