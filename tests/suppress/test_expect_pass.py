"""Attacks that seek their sparse certificate first (``expect_pass``) give the verdict of
the attacker's own LP, and the table of a passing one is a certificate: additive,
within the attacker's bounds, moving withheld cells only, moving the target by exactly
its level and leaving the insider's own cell alone. The cleanup's screens
(``attack_without``, the level only) agree with the attacker's LP as well."""

from __future__ import annotations

import numpy as np
import pytest
from _suppress_gen import assert_certificate, repaired_and_random_patterns, table_problem

from tablesafe.suppress import attack_runs, attacker
from tablesafe.suppress.attacker import UP, BlockLP, Blocks, Bounds
from tablesafe.suppress.protection import keys_for, repair, run_attacks

CASES = [(11, [[3, 2], [4]], 70), (12, [[2, 2], [2], [3]], 120), (7, [[3], [3], [3]], 150)]


@pytest.mark.parametrize("capacity", [False, True])
@pytest.mark.parametrize("seed,shape,units", CASES)
def test_sparse_first_gives_the_attackers_verdicts_and_certificates(seed, shape, units, capacity, monkeypatch):
    p = table_problem(seed, shape, units=units)
    if capacity:
        p = p.copy(capacity=0.25 * np.abs(p.value))
    b = Bounds.of(p, singleton=True, capacity=capacity)
    monkeypatch.setattr(attack_runs, "REUSE_TABLES", False)  # every attack gets its own LPs
    passed = failed = 0
    for w in repaired_and_random_patterns(p, b, seed):
        keys = keys_for(p, b, w, np.flatnonzero(p.sensitive))
        plain = run_attacks(p, b, w.astype(float), keys, split_insiders=False, sparse=True)
        first = run_attacks(p, b, w.astype(float), keys, split_insiders=False, sparse=True, expect_pass=True)
        assert first.keys() == plain.keys()
        for key, att in first.items():
            assert att.ok == plain[key].ok, key
            if att.ok and b.req_sl[key[0]] <= 0 and len(att.cells):
                passed += 1
                assert_certificate(p, b, w, key, att, exact=True)
            elif not att.ok:
                failed += 1
                # a failing attack still gets the attacker's optimum and its dual
                assert att.reached == pytest.approx(plain[key].reached, rel=1e-6, abs=1e-6)
                assert att.dual_cells is not None
    assert passed > 0 and failed > 0


@pytest.mark.parametrize("seed,shape,units", CASES)
def test_the_cleanups_screen_agrees_with_the_attackers_lp(seed, shape, units, monkeypatch):
    """``attack_without`` asks only whether the level is reached once a cell is
    published; its verdict is the one of the attacker's LP on the same model."""
    p = table_problem(seed, shape, units=units)
    b = Bounds.of(p, singleton=True)
    w, _, _ = repair(p, b, p.sensitive.copy())
    blocks = Blocks(p.relations, w.astype(float))
    sec = np.flatnonzero(w & ~p.sensitive)
    seen = {True: 0, False: 0}
    for k in np.flatnonzero(p.sensitive).tolist():
        lab = int(blocks.label[k])
        if lab < 0:
            continue
        lp = BlockLP(p, b, w.astype(float), blocks.cells(lab), blocks.rows(lab))
        for cell in sec[blocks.label[sec] == lab].tolist():
            for d in (UP, -UP):
                req = float(b.req_up[k] if d == UP else b.req_dn[k])
                if req <= 0:
                    continue
                monkeypatch.setattr(attacker, "SCREEN_SPARSE", True)
                quick = lp.attack_without(cell, k, d, req)
                monkeypatch.setattr(attacker, "SCREEN_SPARSE", False)
                full = lp.attack_without(cell, k, d, req)
                assert quick.ok == full.ok, (k, d, cell)
                seen[full.ok] += 1
    assert seen[True] > 0 and seen[False] > 0


def test_a_certificate_goes_round_a_single_respondents_cell():
    """Relation T = a + s + c with T published and a sensitive: a can move against s or
    against c, which cost the same. The sparse certificate moves c and leaves s, whose
    respondent is a single one, alone (``SINGLETON_WEIGHT``), so that table answers that
    respondent's attack too."""
    import dataclasses

    from tablesafe.problem import PRIMARY, SAFE, Problem

    p = Problem.from_arrays([100.0, 40.0, 30.0, 30.0], np.array([[1.0, -1.0, -1.0, -1.0]]),
                            status=[SAFE, PRIMARY, SAFE, SAFE], cost=[100.0, 40.0, 30.0, 30.0],
                            upl=[0.0, 10.0, 0.0, 0.0], lpl=[0.0, 10.0, 0.0, 0.0])
    b = dataclasses.replace(Bounds.of(p, singleton=False), singleton=np.array([False, False, True, False]))
    w = np.array([0.0, 1.0, 1.0, 1.0])
    lp = BlockLP(p, b, w, np.array([1, 2, 3]), np.array([0]))
    for d in (UP, -UP):
        att = lp.attack(1, d, 10.0, want_dual=False, sparse=True, expect_pass=True)
        assert att.ok
        moved = dict(zip(att.cells.tolist(), att.dev.tolist()))
        assert 2 not in moved and moved[3] == pytest.approx(-d * 10.0)
