"""An attack's table that still stands spares the repair an LP (``still_holds``): where
every cell the table moves stays withheld, a fresh attacker LP on the changed pattern
reaches the level too; the repair that relies on it leaves no attack that succeeds."""

from __future__ import annotations

import numpy as np
import pytest
from _suppress_gen import independent_audit, spare_pattern, table_problem

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


def test_cleanup_screens_decide_as_the_full_trial_does(monkeypatch):
    """The warm-started block models of the cleanup (``_Screens.screen``) and the
    one-relation check (``_relation_short``) turn a removal down only when an attack
    truly fails, and accept one only when the full trial would: the cleanup keeps the
    same cells with them as with the full trial alone."""
    from tablesafe.suppress import cleanup as cleaning
    from tablesafe.suppress.cleanup import cleanup

    verdicts = []
    short = []
    real = cleaning._Screens.screen
    real_short = cleaning._relation_short

    def spy(self, cell, keys, withheld):
        out = real(self, cell, keys, withheld)
        verdicts.append("failed" if out[0] is not None else "undecided" if out[1] is None else "passed")
        return out

    def spy_short(*args):
        out = real_short(*args)
        short.append(out)
        return out

    for seed, shape, units in CASES:
        p, b, w, atts = spare_pattern(seed, shape, units, 8)
        monkeypatch.setattr(cleaning._Screens, "screen", spy)
        monkeypatch.setattr(cleaning, "_relation_short", spy_short)
        screened, _, removed = cleanup(p, b, w, atts)
        monkeypatch.setattr(cleaning._Screens, "screen", lambda *a: (None, None))
        monkeypatch.setattr(cleaning, "_relation_short", lambda *a: False)
        plain, _, removed_plain = cleanup(p, b, w, atts)
        assert np.array_equal(screened, plain) and removed == removed_plain, (seed, shape)
        assert independent_audit(p, screened) == []
    assert "passed" in verdicts, "no removal was accepted by the screens"
    assert "failed" in verdicts and any(short), "no removal was turned down by a screen and by one relation"


def test_single_respondents_screened_together_decide_as_one_at_a_time(monkeypatch):
    """A cleanup screen first attacks a target's single respondents together (their
    cells all known): the cleanup keeps the same cells as when each is attacked alone,
    the joint attack answered several at once somewhere, and the pattern passes the
    independent audit."""
    from tablesafe.suppress import cleanup as cleaning
    from tablesafe.suppress.cleanup import cleanup

    answered = []
    real = cleaning._Screens._together

    def spy(self, lp, cell, k, d, req, who, new):
        before = len(new)
        real(self, lp, cell, k, d, req, who, new)
        answered.append(len(new) - before)

    for seed, shape, units in CASES:
        p, b, w, atts = spare_pattern(seed, shape, units, 8)
        monkeypatch.setattr(cleaning._Screens, "_together", spy)
        together, _, removed = cleanup(p, b, w, atts)
        monkeypatch.setattr(cleaning, "TOGETHER_FROM", 10**9)
        alone, _, removed_alone = cleanup(p, b, w, atts)
        monkeypatch.undo()
        assert np.array_equal(together, alone) and removed == removed_alone, (seed, shape)
        assert independent_audit(p, together) == []
    assert max(answered) >= 2, "no joint attack answered two single respondents"


@pytest.mark.parametrize("seed,shape,units", CASES)
def test_a_relation_short_of_a_level_means_a_failing_attack(seed, shape, units):
    """Whenever ``_relation_short`` turns a removal down, a fresh attacker LP on the
    pattern without that complement (insiders included) fails for some sensitive cell."""
    from tablesafe.suppress.cleanup import _relation_short
    from tablesafe.suppress.protection import insiders_of

    p = table_problem(seed, shape, units=units)
    b = Bounds.of(p, singleton=True)
    w, _, _ = repair(p, b, p.sensitive.copy())
    ins = insiders_of(p, b, w, np.flatnonzero(p.sensitive))
    by_cell = p.relations.tocsc()
    short = 0
    for c in np.flatnonzero(w & ~p.sensitive).tolist():
        if not _relation_short(p.relations, by_cell, b, w, c, ins):
            continue
        short += 1
        w2 = w.copy()
        w2[c] = False
        assert failing(b, check(p, b, w2)), f"publishing cell {c} leaves every attack passing"
    assert short > 0


def test_a_single_respondent_who_knows_the_last_other_cell_of_a_relation():
    """Relation T = a + s + r with T published and a sensitive (level 10): once r is
    published, a and s are the relation's only withheld cells. An outsider can still
    move a against s (room 50), but the single respondent of s knows s, so a is exact
    for it: the removal of r is short for that insider alone."""
    import scipy.sparse as sp

    from tablesafe.suppress.cleanup import _relation_short

    rel = sp.csr_matrix(np.array([[1.0, -1.0, -1.0, -1.0]]))  # T, a, s, r
    by_cell = rel.tocsc()
    zero, room = np.zeros(4), np.array([0.0, 20.0, 50.0, 30.0])
    b = Bounds(dn=room, up=room, tdn=room, tup=room, req_up=np.array([0.0, 10.0, 0.0, 0.0]),
               req_dn=np.array([0.0, 10.0, 0.0, 0.0]), req_sl=zero, singleton=np.array([False, False, True, False]))
    w = np.array([False, True, True, True])
    assert not _relation_short(rel, by_cell, b, w, 3, {})
    assert _relation_short(rel, by_cell, b, w, 3, {1: np.array([2])})
    # publishing T instead keeps r withheld: the insider moves a against r (room 30)
    assert not _relation_short(rel, by_cell, b, np.ones(4, dtype=bool), 0, {1: np.array([2])})
    # s's room short of the level: the outsider fails too
    b_small = Bounds(dn=np.array([0.0, 20.0, 5.0, 30.0]), up=np.array([0.0, 20.0, 5.0, 30.0]), tdn=room, tup=room,
                     req_up=b.req_up, req_dn=b.req_dn, req_sl=zero, singleton=b.singleton)
    assert _relation_short(rel, by_cell, b_small, w, 3, {})
