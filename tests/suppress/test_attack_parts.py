"""A repair's first check in parts of whole blocks (``attack_in_parts``) gives the very
attacks of one pass, with two workers or one; targets that one block holds are cut into
halves, which give the same attacks with two workers or one and the verdicts of one
pass."""

from __future__ import annotations

import numpy as np
import pytest
from _suppress_gen import random_complements, table_problem, work_by_workers

from tablesafe.suppress import attack_parts
from tablesafe.suppress.attacker import Blocks, Bounds
from tablesafe.suppress.protection import OutOfTime, attack_part, candidates


def _pattern(seed: int):
    return random_complements(seed)


def _same(a: dict, b: dict) -> None:
    assert list(sorted(a)) == list(sorted(b))
    for key in a:
        x, y = a[key], b[key]
        assert (x.reached, x.ok, x.insider) == (y.reached, y.ok, y.insider), key
        assert np.array_equal(x.cells, y.cells) and np.allclose(x.dev, y.dev), key


@pytest.mark.parametrize("seed", [11, 12])
@pytest.mark.parametrize("cpus", [1, 2])
def test_parts_give_the_attacks_of_one_pass(seed, cpus, monkeypatch):
    p, b, w = _pattern(seed)
    targets = np.flatnonzero(p.sensitive)
    monkeypatch.setattr(attack_parts, "PARALLEL_MIN_TARGETS", 1)
    monkeypatch.setattr(attack_parts, "MOST_IN_ONE_PART", 1.0)  # whole blocks however unbalanced
    parts = attack_parts.block_parts(p, w, targets)
    label = Blocks(p.relations, w.astype(float)).label
    assert len(parts) == 2
    assert not set(label[parts[0]].tolist()) & set(label[parts[1]].tolist())
    assert np.array_equal(np.sort(np.concatenate(parts)), targets)
    monkeypatch.setattr(attack_parts, "worker_count", lambda most=2: cpus)
    parted = attack_parts.attack_in_parts(lambda part: attack_part(p, b, w, part, None), p, w, targets,
                                          OutOfTime)
    _same(parted, attack_part(p, b, w, targets, None))


def test_few_targets_stay_in_one_part(monkeypatch):
    p, _, w = _pattern(11)
    targets = np.flatnonzero(p.sensitive)
    assert len(targets) < attack_parts.PARALLEL_MIN_TARGETS
    monkeypatch.setattr(attack_parts, "HALVES_MIN_TARGETS", len(targets) + 1)
    assert len(attack_parts.block_parts(p, w, targets)) == 1


def _one_block():
    """A pattern of a three-way table whose withheld cells form one block."""
    p = table_problem(12, [[2, 2], [2], [3]], units=120)
    b = Bounds.of(p, singleton=True)
    w = p.sensitive | candidates(p, b)
    label = Blocks(p.relations, w.astype(float)).label
    targets = np.flatnonzero(p.sensitive)
    assert len(set(label[targets].tolist())) == 1
    return p, b, w, targets


@pytest.mark.parametrize("cpus", [1, 2])
def test_targets_of_one_block_are_cut_into_halves(cpus, monkeypatch):
    p, b, w, targets = _one_block()
    monkeypatch.setattr(attack_parts, "HALVES_MIN_TARGETS", 2)
    shuffled = targets[::-1].copy()
    parts = attack_parts.block_parts(p, w, shuffled)
    assert len(parts) == 2 and abs(len(parts[0]) - len(parts[1])) <= 1
    assert np.array_equal(np.concatenate(parts), targets)  # two halves in ascending order
    monkeypatch.setattr(attack_parts, "worker_count", lambda most=2: cpus)
    parted = attack_parts.attack_in_parts(lambda part: attack_part(p, b, w, part, None), p, w, shuffled,
                                          OutOfTime)
    # each half builds its own models: the same attacks with one worker or two ...
    one_by_one = {}
    for part in parts:
        one_by_one.update(attack_part(p, b, w, part, None))
    _same(parted, one_by_one)
    # ... and the outsiders' verdicts of a single pass
    whole = attack_part(p, b, w, targets, None)
    for key, a in whole.items():
        if key[2] < 0:
            assert parted[key].ok == a.ok, key


def test_a_repair_in_halves_is_the_same_with_one_worker_or_two(monkeypatch):
    """A repair whose later checks run in halves of targets (many targets of one block
    attacked again): one worker and two give the same pattern, which passes the attacker
    check. The start is the repair's own pattern with its first four complements given
    up, so that several rounds re-check targets of a large block."""
    from tablesafe.suppress.protection import check, failing, repair

    p, b, _, _ = _one_block()
    monkeypatch.setattr(attack_parts, "HALVES_MIN_TARGETS", 2)
    monkeypatch.setattr(attack_parts, "worker_count", lambda most=2: 1)
    start = repair(p, b, p.sensitive.copy())[0]
    start[np.flatnonzero(start & ~p.sensitive)[:4]] = False
    assert failing(b, check(p, b, start))
    calls = []
    real = attack_parts.in_parts
    monkeypatch.setattr(attack_parts, "in_parts", lambda attack, parts, out: calls.append(len(parts))
                        or real(attack, parts, out))
    runs = []
    for cpus in (1, 2):
        monkeypatch.setattr(attack_parts, "worker_count", lambda most=2, n=cpus: n)
        runs.append(repair(p, b, start)[0])
    assert max(calls) == 2
    assert np.array_equal(runs[0], runs[1])
    assert not failing(b, check(p, b, runs[0]))


@pytest.mark.parametrize("cpus", [1, 2])
def test_a_part_out_of_time_stops_the_check(cpus, monkeypatch):
    p, b, w = _pattern(12)
    targets = np.flatnonzero(p.sensitive)
    monkeypatch.setattr(attack_parts, "PARALLEL_MIN_TARGETS", 1)
    monkeypatch.setattr(attack_parts, "worker_count", lambda most=2: cpus)
    with pytest.raises(OutOfTime):
        attack_parts.attack_in_parts(lambda part: attack_part(p, b, w, part, 0.0), p, w, targets, OutOfTime)


@pytest.mark.parametrize("seed", [11, 12])
def test_parts_count_the_same_work_with_one_worker_or_two(seed, monkeypatch):
    """The LP work of the parts is counted in this process's work meter whether they ran
    here or in forked workers (``credit_work``), so a work clock read after them reads
    the same with one worker or two."""
    p, b, w = _pattern(seed)
    targets = np.flatnonzero(p.sensitive)
    monkeypatch.setattr(attack_parts, "PARALLEL_MIN_TARGETS", 1)
    monkeypatch.setattr(attack_parts, "MOST_IN_ONE_PART", 1.0)
    (one, _), (two, _) = work_by_workers(monkeypatch, attack_parts, lambda: attack_parts.attack_in_parts(
        lambda part: attack_part(p, b, w, part, None), p, w, targets, OutOfTime))
    assert one > 0 and one == two
