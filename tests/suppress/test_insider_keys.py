"""Insider attacks checked without spelling out every key (``insiders_of``) find the
same failures as every (target, direction, insider) attacked one by one, and the repair
built on them leaves no insider attack that succeeds."""

from __future__ import annotations

import numpy as np
import pytest
from _suppress_gen import table_problem

from tablesafe.suppress.attacker import Bounds
from tablesafe.suppress.protection import (
    candidates,
    check,
    failing,
    insiders_of,
    keys_for,
    lazy_insiders,
    outsider_keys,
    repair,
    run_attacks,
)
from tablesafe.suppress.subtable_cuts import failing_insiders

CASES = [(11, [[3, 2], [4]], 70), (12, [[2, 2], [2], [3]], 120), (5, [[4], [3, 2]], 90)]


def _one_by_one(problem, bounds, withheld) -> list:
    """Every attack as its own LP (no sharing of the outsider's table)."""
    keys = keys_for(problem, bounds, withheld, np.flatnonzero(problem.sensitive))
    atts = run_attacks(problem, bounds, withheld.astype(float), keys, split_insiders=False)
    return failing(bounds, atts)


def _normalised(keys) -> list:
    """Failing outsider attacks, and failing insider attacks whose outsider's passes."""
    outsider = {(k, d) for k, d, s in keys if s < 0}
    return sorted(key for key in keys if key[2] < 0 or (key[0], key[1]) not in outsider)


@pytest.mark.parametrize("seed,shape,units", CASES)
def test_implicit_insiders_find_the_failures_of_every_attack(seed, shape, units):
    p = table_problem(seed, shape, units=units)
    b = Bounds.of(p, singleton=True)
    assert b.singleton.any()
    rng = np.random.default_rng(seed)
    cand = np.flatnonzero(candidates(p, b))
    patterns = [p.sensitive.copy()]
    for _ in range(4):
        w = p.sensitive.copy()
        w[rng.choice(cand, size=min(len(cand), int(rng.integers(2, 8))), replace=False)] = True
        patterns.append(w)
    for w in patterns:
        assert _normalised(failing(b, check(p, b, w))) == _normalised(_one_by_one(p, b, w))


def _lazy_against_listed(seed, shape, units) -> int:
    """Compare both forms on some patterns of one table; the insider attacks compared."""
    p = table_problem(seed, shape, units=units)
    b = Bounds.of(p, singleton=True)
    rng = np.random.default_rng(seed + 1)
    cand = np.flatnonzero(candidates(p, b))
    targets = np.flatnonzero(p.sensitive)
    compared = 0
    for size in (0, 3, 6, 10):
        w = p.sensitive.copy()
        w[rng.choice(cand, size=min(len(cand), size), replace=False)] = True
        listed = insiders_of(p, b, w, targets)
        lazy = lazy_insiders(p, b, w, targets)
        cells = np.flatnonzero(w)
        for k in targets.tolist():
            assert np.array_equal(lazy.among(k, cells), listed.get(k, np.zeros(0, dtype=np.int64)))
        assert not len(lazy.among(int(np.flatnonzero(~p.sensitive)[0]), np.arange(p.n)))  # not a target
        outs = outsider_keys(b, targets)
        a = run_attacks(p, b, w.astype(float), outs, insiders=listed)
        z = run_attacks(p, b, w.astype(float), outs, insiders=lazy)
        assert sorted(a) == sorted(z)
        assert all(a[key].ok == z[key].ok and np.isclose(a[key].reached, z[key].reached) for key in a)
        compared += sum(key[2] >= 0 for key in a)
    return compared


def test_lazy_insiders_give_the_same_attacks_as_the_listed_ones():
    """``lazy_insiders`` (the insiders worked out only among the cells a table moves)
    names the same insiders as ``insiders_of`` among any cells, and ``run_attacks``
    returns the same attacks, with the same verdicts and reach, with either."""
    compared = 0
    for seed, shape, units in CASES:
        compared += _lazy_against_listed(seed, shape, units)
    assert compared  # some insiders' attacks were compared


@pytest.mark.parametrize("seed,shape,units", CASES)
def test_repair_leaves_no_insider_attack_that_succeeds(seed, shape, units):
    p = table_problem(seed, shape, units=units)
    b = Bounds.of(p, singleton=True)
    w, atts, _ = repair(p, b, p.sensitive.copy())
    assert not failing(b, atts)
    assert not _one_by_one(p, b, w)


def test_subtable_insider_separation_returns_only_failing_attacks():
    """``failing_insiders`` names exactly the insider attacks on a pattern that fail."""
    p = table_problem(11, [[3, 2], [4]], units=70)
    b = Bounds.of(p, singleton=True)
    targets = np.flatnonzero(p.sensitive)
    ins = insiders_of(p, b, p.sensitive, targets)
    assert ins
    outs = outsider_keys(b, targets)
    found = failing_insiders(p, b, p.sensitive, outs, ins, set())
    want = [key for key in _one_by_one(p, b, p.sensitive) if key[2] >= 0]
    assert found == sorted(want)


@pytest.mark.parametrize("seed,shape,units", CASES)
def test_subtable_insider_separation_on_a_pattern_safe_for_outsiders(seed, shape, units):
    """On a pattern every outsider's attack passes (the case of a subtable's insider
    round), ``failing_insiders`` names exactly the insider attacks that fail, though it
    spells out only the insiders whose cell an outsider's table moves."""
    p = table_problem(seed, shape, units=units)
    w, _, _ = repair(p, Bounds.of(p, singleton=False), p.sensitive.copy())
    b = Bounds.of(p, singleton=True)
    targets = np.flatnonzero(p.sensitive)
    outs = outsider_keys(b, targets)
    assert not failing(b, run_attacks(p, b, w.astype(float), outs))
    found = failing_insiders(p, b, w, outs, insiders_of(p, b, w, targets), set())
    want = [key for key in _one_by_one(p, b, w) if key[2] >= 0]
    assert found and found == sorted(want)
