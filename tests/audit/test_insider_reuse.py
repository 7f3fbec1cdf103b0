"""The insider checks keep the block tables their pair LPs find (``singletons._remember``)
and answer a target's other insiders from them (``_answered``: two kept tables with the
insider's cell on either side of its value). The findings must be exactly those found
with no table kept (which tests/audit/test_insider_property.py checks against one fresh
LP per pair), with fewer LPs."""

from __future__ import annotations

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
