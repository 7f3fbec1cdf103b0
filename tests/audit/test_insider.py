"""Insider attacks: singletons, units knowing their own contributions, sensitive unions."""

from __future__ import annotations

import numpy as np
import pandas as pd

from tablesafe.audit import audit, sensitive_unions

TABLE3 = [[100, 200, 150], [250, 150, 300], [600, 450, 500]]


def _table4(grid):
    """seed 001 Example 1/3: Table 3 with A x I, A x III sensitive singletons, Table 4 pattern."""
    p, at = grid(TABLE3, sensitive=[(1, 1), (1, 3)], spl={(1, 1): 50, (1, 3): 75},
                 contributors={(1, 1): 1, (1, 3): 1})
    w = [at(1, 1), at(1, 3), at(2, 1), at(2, 3)]
    return p, at, w


def test_seed001_example3_two_singletons(grid):
    """seed 001 section 3, Example 3 / Table 4: criterion 1 passes, but each singleton
    recalculates the other exactly (seed 002 "singletons")."""
    p, at, w = _table4(grid)
    res = audit(p, w, insider=True)
    assert list(res.verdict[[at(1, 1), at(1, 3)]]) == ["protected", "protected"]
    f = res.insider_findings
    assert len(f) == 2
    pairs = set(zip(f["target"], f["attacker"]))
    assert pairs == {(p.names[at(1, 3)], f"sole contributor of {p.names[at(1, 1)]}"),
                     (p.names[at(1, 1)], f"sole contributor of {p.names[at(1, 3)]}")}
    assert set(f["verdict"]) == {"exact"}
    row = f[f["target"] == p.names[at(1, 3)]].iloc[0]
    assert row["audit_lower"] == row["audit_upper"] == 150
    assert not res.ok and res.failing.size == 0
    assert "insider findings: 2" in res.summary()


def test_seed001_example3_union_is_sensitive(grid):
    """seed 003 B.2.a.i / seed 001 Example 3: row A's withheld union (250) is published
    and, with one unit in each cell, sensitive under the p% rule (p = 20)."""
    p, at, w = _table4(grid)
    cf = pd.DataFrame({"cell": [p.names[at(1, 1)], p.names[at(1, 3)]],
                       "unit": ["r1", "r2"], "value": [100.0, 150.0]})
    u = sensitive_unions(p, w, cf, rule=("p", 20))
    assert len(u) >= 1
    row_a = u[u["cells"] == f"{p.names[at(1, 1)]}+{p.names[at(1, 3)]}"]
    assert len(row_a) == 1 and row_a["total"].iloc[0] == 250
    assert row_a["largest"].iloc[0] == 150 and row_a["second"].iloc[0] == 100


def test_seed000_figures_1_and_2_unions_dominance(grid):
    """seed 000 section 5.2, Figures 1 and 2: the first-row union of the suppressed cells
    (92, resp. 52) is unsafe under the (2, 70) dominance rule."""
    p, at = grid([[10, 43, 49], [11, 9, 9]], sensitive=[(1, 2), (1, 3)],
                 upl={(1, 2): 9, (1, 3): 7}, lpl={(1, 2): 9, (1, 3): 7})
    w = [at(1, 2), at(1, 3), at(2, 2), at(2, 3)]
    rows = [(at(1, 2), f"u{k}", v) for k, v in enumerate([32, 4, 4, 2, 1])]
    rows += [(at(1, 3), f"w{k}", v) for k, v in enumerate([33, 6, 5, 5])]
    rows += [(at(2, 2), f"y{k}", 1) for k in range(9)]
    rows += [(at(2, 3), f"z{k}", 1) for k in range(9)]
    cf = pd.DataFrame(rows, columns=["cell", "unit", "value"])
    res = audit(p, w, insider=False, contributions=cf, rule=("nk", 2, 70))
    assert res.failing.size == 0                      # criterion 1: both protected
    u = res.union_findings
    first = u[u["cells"] == f"{p.names[at(1, 2)]}+{p.names[at(1, 3)]}"]
    assert len(first) == 1 and first["total"].iloc[0] == 92
    assert first["largest"].iloc[0] + first["second"].iloc[0] == 65
    assert not res.ok
    # Figure 2: only 43 is sensitive; its neighbour 9 = 5+1+1+1+1 is safe, the union is not
    p2, at2 = grid([[10, 43, 9], [11, 9, 9]], sensitive=[(1, 2)], upl={(1, 2): 9},
                   lpl={(1, 2): 9})
    rows2 = [(at2(1, 2), f"u{k}", v) for k, v in enumerate([32, 4, 4, 2, 1])]
    rows2 += [(at2(1, 3), f"w{k}", v) for k, v in enumerate([5, 1, 1, 1, 1])]
    rows2 += [(at2(2, 2), f"y{k}", 1) for k in range(9)]
    rows2 += [(at2(2, 3), f"z{k}", 1) for k in range(9)]
    u2 = sensitive_unions(p2, w, pd.DataFrame(rows2, columns=["cell", "unit", "value"]),
                          rule=("nk", 2, 70))
    first2 = u2[u2["cells"] == f"{p2.names[at2(1, 2)]}+{p2.names[at2(1, 3)]}"]
    assert len(first2) == 1 and first2["total"].iloc[0] == 52
    assert first2["largest"].iloc[0] + first2["second"].iloc[0] == 37


def test_holding_in_total_and_part_cancels(grid):
    """A unit in a withheld total and its withheld part contributes nothing net."""
    p, at = grid([[5, 6], [7, 8]], sensitive=[(1, 1)])
    w = [at(1, 1), at(1, 0), at(2, 1), at(2, 0)]
    cf = pd.DataFrame({"cell": [at(1, 1), at(1, 0), at(1, 2), at(1, 0)],
                       "unit": ["a", "a", "b", "b"], "value": [5.0, 5.0, 6.0, 6.0]})
    u = sensitive_unions(p, w, cf, rule=("p", 10))
    # row 1 relation: -x10 + x11 + 6 = 0; withheld x10, x11: union x11 - x10 = -6 is b's
    rel_row1 = u[u["cells"] == f"{p.names[at(1, 0)]}+{p.names[at(1, 1)]}"]
    assert len(rel_row1) == 1
    assert rel_row1["largest"].iloc[0] == 6 and rel_row1["second"].iloc[0] == 0
    assert np.isclose(rel_row1["total"].iloc[0], -6)
