"""The cleanup in two parts of whole blocks (``cleanup.cleanup_parts``): each table cut
down to its target's block is still a certificate, the parts hold whole blocks, and the
pattern is the same with one worker or two and the same as one pass over all the
complements (issue 12, "Determinism")."""

from __future__ import annotations

import numpy as np
import pytest
from _suppress_gen import independent_audit, spare_pattern, work_by_workers

from tablesafe.suppress import cleanup as cleaning
from tablesafe.suppress.attacker import Blocks
from tablesafe.suppress.subtable_tables import tables_under

CASES = [(11, [[3, 3], [3, 2]], 200), (1, [[3, 3], [3, 2]], 200)]


def _spread(a, n: int) -> np.ndarray:
    out = np.zeros(n)
    out[a.cells] = a.dev
    return out


@pytest.mark.parametrize("seed, shape, units", CASES)
def test_tables_cut_to_their_blocks_are_certificates(seed, shape, units):
    p, b, w, atts = spare_pattern(seed, shape, units, 30)
    label = Blocks(p.relations, w.astype(float)).label
    cut = cleaning.within_blocks(atts, label)
    assert set(cut) == set(atts)
    found = [(key, np.asarray(a.cells), np.asarray(a.dev)) for key, a in cut.items() if a.ok and len(a.cells)]
    assert found
    for key, cells, _ in found:
        assert (label[cells] == label[key[0]]).all()
    proved = tables_under(p, b, w.astype(float), found)
    # every cut table meets every relation, stays within the bounds and moves its target
    # by its level, as the whole table did
    assert set(proved) == {key for key, _, _ in found}
    for key, a in cut.items():
        whole = atts[key]
        assert np.isclose(_spread(a, p.n)[key[0]], _spread(whole, p.n)[key[0]])


def test_a_table_over_two_blocks_is_cut_to_its_targets():
    """The sum of two certificates of different blocks is a certificate of each target
    (the blocks share no relation); cut down, each key gets its own block's table back."""
    from dataclasses import replace

    seed, shape, units = CASES[0]
    p, _, w, atts = spare_pattern(seed, shape, units, 30)
    label = Blocks(p.relations, w.astype(float)).label
    by_block = {}
    for key, a in sorted(atts.items()):
        if a.ok and len(a.cells) and key[2] < 0:
            by_block.setdefault(int(label[key[0]]), (key, a))
    (ka, ta), (kb, tb) = list(by_block.values())[:2]
    both = np.concatenate([ta.cells, tb.cells])
    dev = np.concatenate([ta.dev, tb.dev])
    spanning = {ka: replace(ta, cells=both, dev=dev), kb: replace(tb, cells=both, dev=dev)}
    cut = cleaning.within_blocks(spanning, label)
    for key, alone in ((ka, ta), (kb, tb)):
        assert np.array_equal(np.sort(cut[key].cells), np.sort(alone.cells))
        assert np.allclose(_spread(cut[key], p.n), _spread(alone, p.n))


@pytest.mark.parametrize("seed, shape, units", CASES)
@pytest.mark.parametrize("cpus", [1, 2])
def test_parts_give_the_pattern_of_one_pass(seed, shape, units, cpus, monkeypatch):
    p, b, w, atts = spare_pattern(seed, shape, units, 30)
    one, one_atts, removed_one = cleaning.cleanup(p, b, w, atts)  # too few complements: one part
    monkeypatch.setattr(cleaning, "CLEANUP_PARTS_FROM", 1)
    monkeypatch.setattr(cleaning, "CLEANUP_MOST_IN_ONE_PART", 1.0)
    blocks = Blocks(p.relations, w.astype(float))
    sec = np.flatnonzero(w & ~p.sensitive)
    parts, shares = cleaning.cleanup_parts(blocks, sec)
    assert len(parts) == 2 and np.isclose(sum(shares), 1.0)
    assert not set(blocks.label[parts[0]].tolist()) & set(blocks.label[parts[1]].tolist())
    assert np.array_equal(np.sort(np.concatenate(parts)), sec)
    monkeypatch.setattr(cleaning, "worker_count", lambda most=2: cpus)
    parted, parted_atts, removed = cleaning.cleanup(p, b, w, atts)
    assert np.array_equal(parted, one) and removed == removed_one > 0
    assert set(parted_atts) == set(one_atts)
    for key, a in parted_atts.items():
        assert np.array_equal(a.cells, one_atts[key].cells) and np.allclose(a.dev, one_atts[key].dev)
    assert independent_audit(p, parted) == []


def test_a_work_bound_is_shared_by_the_parts(monkeypatch):
    seed, shape, units = CASES[0]
    p, b, w, atts = spare_pattern(seed, shape, units, 30)
    monkeypatch.setattr(cleaning, "CLEANUP_PARTS_FROM", 1)
    monkeypatch.setattr(cleaning, "CLEANUP_MOST_IN_ONE_PART", 1.0)
    full: dict = {}
    cleaning.cleanup(p, b, w, atts, report=full)
    bound = full["work"] // 3
    outs = []
    for cpus in (1, 2):
        monkeypatch.setattr(cleaning, "worker_count", lambda most=2, cpus=cpus: cpus)
        report: dict = {}
        out, _, removed = cleaning.cleanup(p, b, w, atts, work=bound, report=report)
        assert report["stopped"] == "work"
        outs.append((out, removed, report["work"]))
    assert np.array_equal(outs[0][0], outs[1][0]) and outs[0][1:] == outs[1][1:]
    assert not (outs[0][0] & ~w).any() and independent_audit(p, outs[0][0]) == []


def test_the_parts_work_is_counted_here_with_one_worker_or_two(monkeypatch):
    """The parts' LP work reaches this process's work meter whether they ran here or in
    forked workers, the same amount either way."""
    seed, shape, units = CASES[0]
    p, b, w, atts = spare_pattern(seed, shape, units, 30)
    monkeypatch.setattr(cleaning, "CLEANUP_PARTS_FROM", 1)
    monkeypatch.setattr(cleaning, "CLEANUP_MOST_IN_ONE_PART", 1.0)

    def run() -> int:
        report: dict = {}
        cleaning.cleanup(p, b, w, atts, report=report)
        return report["work"]

    (one, reported), (two, reported2) = work_by_workers(monkeypatch, cleaning, run)
    assert one > 0 and one == two == reported == reported2
