"""A repair's first check in parts of whole blocks (``attack_in_parts``) gives the very
attacks of one pass, with two workers or one."""

from __future__ import annotations

import numpy as np
import pytest
from _suppress_gen import table_problem

from tablesafe.suppress import attack_parts
from tablesafe.suppress.attacker import Blocks, Bounds
from tablesafe.suppress.protection import OutOfTime, attack_part, candidates


def _pattern(seed: int):
    p = table_problem(seed, [[3, 2], [4]], units=90)
    b = Bounds.of(p, singleton=True)
    rng = np.random.default_rng(seed)
    cand = np.flatnonzero(candidates(p, b))
    w = p.sensitive.copy()
    w[rng.choice(cand, size=min(len(cand), 12), replace=False)] = True
    return p, b, w


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
    parts = attack_parts.block_parts(p, w, targets)
    label = Blocks(p.relations, w.astype(float)).label
    assert len(parts) == 2
    assert not set(label[parts[0]].tolist()) & set(label[parts[1]].tolist())
    assert np.array_equal(np.sort(np.concatenate(parts)), targets)
    monkeypatch.setattr(attack_parts, "worker_count", lambda most=2: cpus)
    parted = attack_parts.attack_in_parts(lambda part: attack_part(p, b, w, part, None), p, w, targets,
                                          OutOfTime)
    _same(parted, attack_part(p, b, w, targets, None))


def test_few_targets_stay_in_one_part():
    p, _, w = _pattern(11)
    targets = np.flatnonzero(p.sensitive)
    assert len(targets) < attack_parts.PARALLEL_MIN_TARGETS
    assert len(attack_parts.block_parts(p, w, targets)) == 1


@pytest.mark.parametrize("cpus", [1, 2])
def test_a_part_out_of_time_stops_the_check(cpus, monkeypatch):
    p, b, w = _pattern(12)
    targets = np.flatnonzero(p.sensitive)
    monkeypatch.setattr(attack_parts, "PARALLEL_MIN_TARGETS", 1)
    monkeypatch.setattr(attack_parts, "worker_count", lambda most=2: cpus)
    with pytest.raises(OutOfTime):
        attack_parts.attack_in_parts(lambda part: attack_part(p, b, w, part, 0.0), p, w, targets, OutOfTime)
