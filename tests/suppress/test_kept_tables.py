"""Passing flow tables kept from one master pattern to the next
(:mod:`tablesafe.suppress.kept_tables`): a kept table answers its attack only while it
fits the pattern, and a subtable protected with kept tables is the same, with the same
tables handed on, as one protected with a fresh flow for every attack."""

from __future__ import annotations

import numpy as np
import pytest
from test_flow_attacks import _random_grid

from tablesafe.suppress import flow_attacks
from tablesafe.suppress import subtable_cuts as sc
from tablesafe.suppress.attack_runs import run_attacks
from tablesafe.suppress.attacker import Bounds
from tablesafe.suppress.kept_tables import KeptTables
from tablesafe.suppress.protection import candidates, outsider_keys


@pytest.fixture(autouse=True)
def _flows_on_small_tables(monkeypatch):
    monkeypatch.setattr(flow_attacks, "FLOW_MIN_SENSITIVE", 0)


def _passing(seed: int):
    """A random two-way table, its bounds, a pattern of every candidate and the flow
    attacks on it that pass with a table moving some complement."""
    rng = np.random.default_rng(seed)
    while True:
        p = _random_grid(rng)
        b = Bounds.of(p, singleton=False)
        x = (p.sensitive | candidates(p, b)).astype(float)
        atts = run_attacks(p, b, x, outsider_keys(b, np.flatnonzero(p.sensitive)))
        moving = {key: a for key, a in atts.items() if a.ok and (~p.sensitive[a.cells]).any()}
        if moving:
            return p, b, x, atts, moving


@pytest.mark.parametrize("seed", range(5))
def test_a_kept_table_answers_only_while_it_fits_the_pattern(seed):
    p, b, x, atts, moving = _passing(seed)
    kept = KeptTables(b)
    kept.update(atts, None)
    assert kept.fresh == set(atts)
    assert set(kept.known(x) or {}) == {key for key, a in atts.items() if a.ok}
    key, a = sorted(moving.items())[0]
    c = int(a.cells[~p.sensitive[a.cells]][0])
    shares = x.copy()
    shares[c] = 0.0  # published: the table moves it, so it no longer fits
    assert key not in (kept.known(shares) or {})
    d = float(abs(a.dev[a.cells == c][0]))
    bound = float(b.up[c] if a.dev[a.cells == c][0] > 0 else b.dn[c])
    if np.isfinite(bound) and bound > 0:
        shares[c] = 0.999 * d / bound  # a share whose bound is just short of the move
        assert key not in (kept.known(shares) or {})
        shares[c] = min(1.0, 1.001 * d / bound)
        assert key in (kept.known(shares) or {})
    # a round that took kept tables: only the new ones are fresh, no single respondent's
    again = run_attacks(p, b, x, sorted(atts), known=kept.known(x))
    kept.update(again, kept.known(x))
    assert kept.fresh == {key for key, a2 in again.items() if not a2.ok}


@pytest.mark.parametrize("seed", range(8))
def test_kept_tables_change_nothing_a_subtable_finds(seed, monkeypatch):
    rng = np.random.default_rng(200 + seed)
    p = _random_grid(rng)
    b = Bounds.of(p, singleton=False)
    flows = []
    real = flow_attacks.FlowBlock.attack

    def counted(self, *a, **kw):
        flows.append(1)
        return real(self, *a, **kw)

    monkeypatch.setattr(flow_attacks.FlowBlock, "attack", counted)
    out = {}
    for keep in (False, True):
        monkeypatch.setattr(sc, "KEEP_FLOW_TABLES", keep)
        flows.clear()
        res = sc.protect_subtable(p, b, candidates(p, b), {}, 60.0, 0.0, 0)
        assert res is not None
        out[keep] = (res, len(flows))
    fresh, kept = out[False][0], out[True][0]
    assert np.array_equal(fresh.withheld, kept.withheld) and fresh.safe == kept.safe
    assert np.array_equal(fresh.need_up, kept.need_up) and np.array_equal(fresh.need_down, kept.need_down)
    assert [key for key, _ in fresh.tables] == [key for key, _ in kept.tables]
    for (_, a), (_, c) in zip(fresh.tables, kept.tables):
        assert np.array_equal(a.cells, c.cells) and np.array_equal(a.dev, c.dev)
    assert out[True][1] <= out[False][1]
