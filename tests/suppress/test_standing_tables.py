"""An attack's table that still stands spares the repair an LP (``still_holds``): where
every cell the table moves stays withheld, a fresh attacker LP on the changed pattern
reaches the level too; the repair that relies on it leaves no attack that succeeds."""

from __future__ import annotations

import numpy as np
import pytest
from _suppress_gen import independent_audit, table_problem

from tablesafe.suppress.attacker import Bounds
from tablesafe.suppress.protection import (
    candidates,
    check,
    failing,
    keys_for,
    repair,
    run_attacks,
    still_holds,
)

CASES = [(11, [[3, 2], [4]], 70), (12, [[2, 2], [2], [3]], 120), (5, [[4], [3, 2]], 90)]


@pytest.mark.parametrize("seed,shape,units", CASES)
def test_a_standing_table_means_a_fresh_attack_passes(seed, shape, units):
    p = table_problem(seed, shape, units=units)
    b = Bounds.of(p, singleton=True)
    rng = np.random.default_rng(seed)
    cand = np.flatnonzero(candidates(p, b))
    w, _, _ = repair(p, b, p.sensitive.copy())
    keys = keys_for(p, b, w, np.flatnonzero(p.sensitive))
    atts = run_attacks(p, b, w.astype(float), keys, split_insiders=False, sparse=True)
    standing = published = 0
    for _ in range(6):
        # change the pattern: publish some complements, withhold some other cells
        w2 = w.copy()
        sec = np.flatnonzero(w & ~p.sensitive)
        if len(sec):
            w2[rng.choice(sec, size=min(len(sec), int(rng.integers(1, 4))), replace=False)] = False
        w2[rng.choice(cand, size=min(len(cand), int(rng.integers(0, 4))), replace=False)] = True
        w2 |= p.sensitive
        keep = [key for key, a in atts.items() if still_holds(b, a, w2)]
        gone = [key for key, a in atts.items() if a.ok and not still_holds(b, a, w2)]
        standing += len(keep)
        published += len(gone)
        fresh = run_attacks(p, b, w2.astype(float), keep, split_insiders=False)
        assert not failing(b, fresh), "a standing table's attack failed afresh"
        for key in gone:
            a = atts[key]
            assert (b.req_sl[key[0]] > 0 or not a.ok or not np.isfinite(a.reached)
                    or not len(a.cells) or not w2[a.cells].all())
    assert standing > 0 and published > 0  # both cases occurred


def test_a_failed_attack_never_stands():
    p = table_problem(11, [[3, 2], [4]], units=70)
    b = Bounds.of(p, singleton=True)
    atts = check(p, b, p.sensitive.copy())
    failed = [a for a in atts.values() if not a.ok]
    assert failed
    everything = np.ones(p.n, dtype=bool)
    assert not any(still_holds(b, a, everything) for a in failed)


@pytest.mark.parametrize("seed,shape,units", CASES)
def test_the_repair_with_standing_tables_passes_an_independent_audit(seed, shape, units):
    p = table_problem(seed, shape, units=units)
    b = Bounds.of(p, singleton=True)
    w, _, _ = repair(p, b, p.sensitive.copy())
    assert not failing(b, check(p, b, w))
    assert independent_audit(p, w) == []


@pytest.mark.parametrize("seed,shape,units", CASES)
def test_cleanup_screens_reject_only_what_the_full_trial_rejects(seed, shape, units, monkeypatch):
    """The warm-started block models of the cleanup (``_Screens``) and the check for a
    relation left with one withheld sensitive cell (``_exposes_target``) turn down a
    removal only when an attack truly fails: the cleanup keeps the same cells with and
    without them."""
    from tablesafe.suppress import cleanup as cleaning
    from tablesafe.suppress.cleanup import cleanup

    p = table_problem(seed, shape, units=units)
    b = Bounds.of(p, singleton=True)
    rng = np.random.default_rng(seed + 1)
    cand = np.flatnonzero(candidates(p, b) & ~p.sensitive)
    start = p.sensitive.copy()
    start[rng.choice(cand, size=min(len(cand), 8), replace=False)] = True  # spare complements
    w, atts, _ = repair(p, b, start)
    screened, _, removed = cleanup(p, b, w, atts)
    calls = []
    real = cleaning._Screens.fails_without

    def spy(self, cell, keys, withheld):
        out = real(self, cell, keys, withheld)
        calls.append(out)
        return out

    exposed = []
    real_exposes = cleaning._exposes_target

    def spy_exposes(*args):
        out = real_exposes(*args)
        exposed.append(out)
        return out

    monkeypatch.setattr(cleaning._Screens, "fails_without", spy)
    monkeypatch.setattr(cleaning, "_exposes_target", spy_exposes)
    cleanup(p, b, w, atts)
    assert any(calls) or any(exposed), "no removal was turned down by a screen"
    monkeypatch.setattr(cleaning._Screens, "fails_without", lambda *a: False)
    monkeypatch.setattr(cleaning, "_exposes_target", lambda *a: False)
    plain, _, removed_plain = cleanup(p, b, w, atts)
    assert np.array_equal(screened, plain) and removed == removed_plain
    assert independent_audit(p, screened) == []


@pytest.mark.parametrize("seed,shape,units", CASES)
def test_a_relation_left_with_one_sensitive_cell_means_a_failing_attack(seed, shape, units):
    """Whenever ``_exposes_target`` turns a removal down, a fresh attacker LP on the
    pattern without that complement fails for some sensitive cell."""
    from tablesafe.suppress.cleanup import _exposes_target

    p = table_problem(seed, shape, units=units)
    b = Bounds.of(p, singleton=True)
    w, _, _ = repair(p, b, p.sensitive.copy())
    by_cell = p.relations.tocsc()
    exposed = 0
    for c in np.flatnonzero(w & ~p.sensitive).tolist():
        if not _exposes_target(p.relations, by_cell, b, w, c):
            continue
        exposed += 1
        w2 = w.copy()
        w2[c] = False
        assert failing(b, check(p, b, w2)), f"publishing cell {c} leaves every attack passing"
    assert exposed > 0
