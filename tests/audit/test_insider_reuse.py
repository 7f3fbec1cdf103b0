"""The insider checks keep the block tables their pair LPs find (``singletons._remember``)
and answer a target's other insiders from them (``_answered``: two kept tables with the
insider's cell on either side of its value). The findings must be exactly those found
with no table kept (which tests/audit/test_insider_property.py checks against one fresh
LP per pair), with fewer LPs."""

from __future__ import annotations

import numpy as np
import pandas as pd

from tablesafe.audit import insider_findings, singletons
from tablesafe.suppress.attacker import Bounds
from tablesafe.suppress.modular import modular_pattern
from tablesafe.synthetic import problem_from_data, synthetic_preset


def test_kept_tables_give_the_same_findings_with_fewer_lps(monkeypatch):
    # a generated three-way table of 1,296 cells with holdings, and a pattern made without
    # singleton protection, so that single respondents do find cells to narrow
    p = problem_from_data(synthetic_preset("1k3d", seed=1), p=15, use_holdings=True)
    w, _ = modular_pattern(p, Bounds.of(p, singleton=False), workers=1)
    w = w | p.sensitive
    kept: dict = {}
    with_tables = insider_findings(p, w, stats=kept)
    monkeypatch.setattr(singletons, "KEEP_TABLES", 0)
    none: dict = {}
    without = insider_findings(p, w, stats=none)
    assert len(with_tables) > 0 and kept.get("insider_reused", 0) > 0
    assert "insider_reused" not in none

    def norm(f: pd.DataFrame) -> pd.DataFrame:
        return f.sort_values(["target", "attacker"]).reset_index(drop=True)

    pd.testing.assert_frame_equal(norm(with_tables), norm(without))
    assert kept["insider_lp_solves"] + kept["insider_reused"] == none["insider_lp_solves"]


def test_joint_tests_from_the_targets_own_basis_give_the_same_findings(monkeypatch):
    """The joint tests start from the basis of the target's own optimum in the base audit
    (``singletons.WARM_STARTS``); a basis only decides where the simplex starts, so the
    findings are those of the tests started wherever the last LP left the model."""
    p = problem_from_data(synthetic_preset("1k3d", seed=1), p=15, use_holdings=True)
    w, _ = modular_pattern(p, Bounds.of(p, singleton=False), workers=1)
    w = w | p.sensitive
    started: list[bool] = []
    real = singletons._BlockCheck._warm

    def counting(self, k, d):
        started.append((int(self.b.cols[k]), d) in self.base.bases)
        return real(self, k, d)

    monkeypatch.setattr(singletons._BlockCheck, "_warm", counting)
    warm = insider_findings(p, w)
    assert any(started)
    monkeypatch.setattr(singletons, "WARM_STARTS", False)
    cold = insider_findings(p, w)

    def norm(f: pd.DataFrame) -> pd.DataFrame:
        return f.sort_values(["target", "attacker"]).reset_index(drop=True)

    assert len(warm) > 0
    pd.testing.assert_frame_equal(norm(warm), norm(cold))


def test_a_seed_table_that_leaves_every_insider_alone_answers_them(grid):
    """A feasible table known beforehand (``audit(..., seeds=...)``) that moves the target
    by its level and no single respondent's cell answers every insider at once; the
    findings are those of the audit without it (before, such a table in the stored pool
    broke the search with a shape error)."""
    from tablesafe.audit import audit

    inner = [[10, 20, 30], [40, 50, 60], [70, 80, 90]]
    p, at = grid(inner, sensitive=[(1, 1)], upl={(1, 1): 5}, lpl={(1, 1): 5},
                 contributors={(2, 3): 1, (1, 3): 1})
    w = np.zeros(p.n, dtype=bool)
    for rc in [(1, 1), (1, 2), (1, 3), (2, 1), (2, 2), (2, 3)]:
        w[at(*rc)] = True
    cycle = np.array([at(1, 1), at(1, 2), at(2, 1), at(2, 2)])
    seeds = {"up": (cycle, p.value[cycle] + np.array([5.0, -5.0, -5.0, 5.0])),
             "down": (cycle, p.value[cycle] + np.array([-5.0, 5.0, 5.0, -5.0]))}
    plain = audit(p, w)
    seeded = audit(p, w, seeds=seeds)
    assert seeded.stats["seeds"] == 2 and seeded.stats["seeds_dropped"] == 0
    assert list(seeded.verdict) == list(plain.verdict)
    assert seeded.ok and plain.ok
    assert seeded.stats["insider_pool"] >= 1
