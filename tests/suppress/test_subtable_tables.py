"""The subtables' certificates reused by the full-table check
(:mod:`tablesafe.suppress.subtable_tables`): only tables that are certificates of the
whole table are kept, and the repair that takes them leaves a safe pattern with fewer
attacker LPs."""

from __future__ import annotations

import numpy as np
import pytest
from _suppress_gen import assert_certificate, independent_audit, table_problem

from tablesafe.suppress import attack_parts, attacker
from tablesafe.suppress.attacker import Bounds
from tablesafe.suppress.modular import modular_pattern
from tablesafe.suppress.protection import repair
from tablesafe.suppress.subtable_tables import whole_table_certificates

CASES = [(3, [[4, 3], [5]], 200), (7, [[2, 2], [2], [3]], 120), (5, [[4, 2], [3]], 90)]


def _subtables(seed: int, shape, units: int):
    p = table_problem(seed, shape, units=units)
    b = Bounds.of(p, singleton=True)
    found: list = []
    w, _ = modular_pattern(p, b, workers=1, tables=found)
    return p, b, w | p.sensitive, found


def _is_certificate(p, b, w, key, cells, dev) -> bool:
    att = attacker.Attack(key[0], key[1], key[2], 0.0, 0.0, cells=cells, dev=dev)
    try:
        assert_certificate(p, b, w, key, att)
    except AssertionError:
        return False
    return True


@pytest.mark.parametrize("seed,shape,units", CASES)
def test_only_certificates_of_the_whole_table_are_kept(seed, shape, units):
    p, b, w, found = _subtables(seed, shape, units)
    known = whole_table_certificates(p, b, w, found)
    assert known, "no subtable table is a certificate of the whole table"
    for key, att in known.items():
        assert_certificate(p, b, w, key, att)
    # what was left out is no certificate of the whole table (or its key has one)
    refused = [(key, c, d) for key, c, d in found if key not in known]
    for key, cells, dev in refused:
        assert not _is_certificate(p, b, w, key, cells, dev)


def test_broken_tables_are_refused():
    p, b, w, found = _subtables(*CASES[0])
    known = whole_table_certificates(p, b, w, found)
    key, att = next((k, a) for k, a in sorted(known.items()) if len(a.cells) > 2)
    cells, dev = att.cells, np.asarray(att.dev, dtype=float)
    other = int(cells[cells != key[0]][0])
    w2 = w.copy()
    w2[other] = False  # a cell it moves is published
    assert key not in whole_table_certificates(p, b, w2, [(key, cells, dev)])
    # the target moved by half its level
    assert key not in whole_table_certificates(p, b, w, [(key, cells, dev * 0.5)])
    # one cell moved further: a relation no longer adds up
    bent = dev.copy()
    bent[cells == other] += 0.5 * abs(float(bent[cells == other][0])) + 1.0
    assert key not in whole_table_certificates(p, b, w, [(key, cells, bent)])
    # the same table for the single respondent of a cell it moves
    ins_key = (key[0], key[1], other)
    assert ins_key not in whole_table_certificates(p, b, w, [(ins_key, cells, dev)])
    # the whole table stretched until a cell moving down passes its bound (still additive)
    down = np.flatnonzero(dev < 0)
    j = down[np.argmin(np.where(cells[down] == key[0], b.tdn[cells[down]], b.dn[cells[down]]) / -dev[down])]
    room = b.tdn[cells[j]] if cells[j] == key[0] else b.dn[cells[j]]
    stretched = dev * (2.0 * (room + 1.0) / -dev[j])
    assert key not in whole_table_certificates(p, b, w, [(key, cells, stretched)])
    # a deviation that is not a number
    broken = dev.copy()
    broken[cells == other] = np.inf
    assert key not in whole_table_certificates(p, b, w, [(key, cells, broken)])
    assert key in whole_table_certificates(p, b, w, [(key, cells, dev)])


@pytest.mark.parametrize("seed,shape,units", CASES)
def test_the_repair_with_known_tables_is_safe_with_fewer_lps(seed, shape, units, monkeypatch):
    p, b, w, found = _subtables(seed, shape, units)
    known = whole_table_certificates(p, b, w, found)
    lps = []
    real = attacker.BlockLP.attack

    def counting(self, *args, **kwargs):
        lps.append(1)
        return real(self, *args, **kwargs)

    monkeypatch.setattr(attacker.BlockLP, "attack", counting)
    # parts run in this process, where the LPs are counted
    monkeypatch.setattr(attack_parts, "worker_count", lambda most=2: 1)
    repair(p, b, w)
    n_plain = len(lps)
    lps.clear()
    reused, atts, _ = repair(p, b, w, known=known)
    assert len(lps) < n_plain
    assert independent_audit(p, reused) == []
    for key, att in atts.items():
        if att.ok and len(att.cells) and b.req_sl[key[0]] <= 0:
            assert_certificate(p, b, reused, key, att)
