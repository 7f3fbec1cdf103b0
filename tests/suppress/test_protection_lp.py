"""The protection LP of one stubborn attack (``protection_lp.protecting_cells``): the
published cells it names, once withheld, make that very attack pass a fresh attacker LP;
the repair that uses it for attacks failing round after round still leaves every
sensitive cell protected (independent audit) and converges in few rounds on a three-way
table where the capacity inequalities alone took dozens."""

from __future__ import annotations

import numpy as np
import pytest
from _suppress_gen import independent_audit, table_problem

from tablesafe.suppress import protection
from tablesafe.suppress.attacker import UP, Bounds
from tablesafe.suppress.protection import candidates, failing, keys_for, repair, run_attacks
from tablesafe.suppress.protection_lp import protecting_cells
from tablesafe.synthetic import problem_from_data, synthetic_data

CASES = [(12, [[2, 2], [2], [3]], 120), (11, [[3, 2], [4]], 70), (7, [[2, 2], [2, 2], [2]], 150)]


@pytest.mark.parametrize("seed,shape,units", CASES)
def test_the_cells_named_make_the_attack_pass(seed, shape, units):
    p = table_problem(seed, shape, units=units)
    b = Bounds.of(p, singleton=True)
    cand = candidates(p, b)
    w = p.sensitive.copy()
    keys = keys_for(p, b, w, np.flatnonzero(p.sensitive))
    atts = run_attacks(p, b, w.astype(float), keys, split_insiders=False)
    bad = failing(b, atts)
    assert bad, "the primaries alone should leave attacks that succeed"
    checked = 0
    for key in bad[:12]:
        k, d, s = key
        cells = protecting_cells(p, b, w, k, d, s, cand)
        if cells is None:
            continue
        assert not np.any(w[cells]) and np.all(cand[cells])
        w2 = w.copy()
        w2[cells] = True
        again = run_attacks(p, b, w2.astype(float), [key], split_insiders=False)[key]
        assert again.ok, (key, again.reached, again.required)
        checked += 1
    assert checked > 0


def test_a_kept_model_answers_as_a_fresh_one():
    """The stubborn attacks share one protection LP (bounds and costs changed between
    questions, each solve warm-started): each answer has the optimum a model built for
    that question alone has, and its cells make the attack pass."""
    from tablesafe.suppress.protection_lp import ProtectionLP

    p = table_problem(7, [[2, 2], [2, 2], [2]], units=150)
    b = Bounds.of(p, singleton=True)
    cand = candidates(p, b)
    w = p.sensitive.copy()
    keys = keys_for(p, b, w, np.flatnonzero(p.sensitive))
    bad = failing(b, run_attacks(p, b, w.astype(float), keys, split_insiders=False))
    kept = ProtectionLP(p, b, w, cand)
    answered = 0
    for key in bad[:15]:
        assert kept.serves(p, b, cand, w)
        cells = kept.cells(w, *key)
        fresh = ProtectionLP(p, b, w, cand)
        again = fresh.cells(w, *key)
        if cells is None:
            assert again is None
            continue
        assert fresh.objective == pytest.approx(kept.objective, rel=1e-6, abs=1e-9)
        w = w.copy()
        w[cells] = True
        assert run_attacks(p, b, w.astype(float), [key], split_insiders=False)[key].ok
        answered += 1
    assert answered > 2


def test_nothing_named_when_the_attack_already_passes():
    p = table_problem(12, [[2, 2], [2], [3]], units=120)
    b = Bounds.of(p, singleton=True)
    cand = candidates(p, b)
    w, _, _ = repair(p, b, p.sensitive.copy())
    k = int(np.flatnonzero(p.sensitive & (b.req_up > 0))[0])
    cells = protecting_cells(p, b, w, k, UP, -1, cand)
    assert cells is not None and cells.size == 0


def test_repair_with_stubborn_attacks_is_safe_and_converges_quickly(monkeypatch):
    # a three-way table of 441 cells with holdings on which the capacity inequalities
    # alone needed 39 rounds (the same eight insider attacks failing in most of them)
    p = problem_from_data(synthetic_data([[2, 2], [2, 3], [2, 2]], 1_500, seed=3), p=15, use_holdings=True)
    b = Bounds.of(p, singleton=True)
    from tablesafe.suppress.modular import modular_pattern

    start, _ = modular_pattern(p, b, workers=1)
    start = start | p.sensitive
    w, _, rounds = repair(p, b, start)
    assert rounds <= 8
    assert independent_audit(p, w) == []
    # without the protection LP the same repair takes many more rounds
    monkeypatch.setattr(protection, "STUBBORN_FAILS", 10**9)
    _, _, slow_rounds = repair(p, b, start)
    assert slow_rounds > 2 * rounds


def test_stubborn_attacks_stop_at_the_deadline(monkeypatch):
    """Each stubborn attack's protection LP covers the whole table (seconds on a few
    thousand cells: ``optimal`` ran minutes past a 30 s limit on Castro's HIER16 in
    them), so the deadline is checked before each: past it, ``OutOfTime`` is raised and
    no LP is started; before it, each LP gets the time left as its solver limit."""
    from tablesafe.suppress.cover import Revisable

    p = table_problem(12, [[2, 2], [2], [3]], units=120)
    b = Bounds.of(p, singleton=True)
    cand = candidates(p, b)
    w = p.sensitive.copy()
    keys = keys_for(p, b, w, np.flatnonzero(p.sensitive))
    bad = failing(b, run_attacks(p, b, w.astype(float), keys, split_insiders=False))
    assert bad
    limits = []
    from tablesafe.suppress.protection_lp import ProtectionLP

    cells = ProtectionLP.cells

    def spy(self, *args, time_limit=None, **kw):
        limits.append(time_limit)
        return cells(self, *args, time_limit=time_limit, **kw)

    monkeypatch.setattr(ProtectionLP, "cells", spy)
    stubborn = protection.Stubborn()
    stubborn.fails = {key: protection.STUBBORN_FAILS - 1 for key in bad}
    import time

    with pytest.raises(protection.OutOfTime):
        stubborn.protect(p, b, Revisable(w, p.cost), w, bad, cand, deadline=time.monotonic() - 1.0)
    assert limits == []
    stubborn.fails = {key: protection.STUBBORN_FAILS - 1 for key in bad}
    out = stubborn.protect(p, b, Revisable(w, p.cost), w, bad, cand, deadline=time.monotonic() + 600)
    assert limits and all(0 < x <= 600 for x in limits)
    assert out.sum() > w.sum()


def test_stubborn_attacks_that_pass_already_get_no_protection_lp(monkeypatch):
    """On tables of ``SKIP_PASSING_FROM`` cells or more, the stubborn attacks that the
    round's complements protect already get no protection LP (on a larger pattern they
    pass too): fewer LPs, and the repair gives the same safe pattern."""
    from tablesafe.suppress import protection_lp

    asked: list[tuple] = []
    real = protection_lp.ProtectionLP.cells

    def counted(self, withheld, *key, **kw):
        asked.append(key)
        return real(self, withheld, *key, **kw)

    monkeypatch.setattr(protection_lp.ProtectionLP, "cells", counted)
    lps = {10**9: 0, 0: 0}
    for seed, shape, units in CASES:
        p = table_problem(seed, shape, units=units)
        b = Bounds.of(p, singleton=True)
        out = {}
        for skip_from in lps:
            monkeypatch.setattr(protection, "SKIP_PASSING_FROM", skip_from)
            asked.clear()
            out[skip_from], _, _ = repair(p, b, p.sensitive.copy())
            lps[skip_from] += len(asked)
        assert np.array_equal(out[10**9], out[0])
        assert independent_audit(p, out[0]) == []
    assert lps[0] < lps[10**9]
