"""Operational criterion 2: the MIP of seed 001 section 6 and Examples 4, 5 and 7."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp

from tablesafe.audit import audit, criterion2, explicit_aggregations, most_sensitive_aggregation


def _example7():
    a = sp.csr_matrix(np.array([[1, 1, 0, 0], [1, 0, 1, 0], [0, 0, 1, 1], [0, 1, 0, 1]], float))
    b = np.array([540, 200, 120, 460.0])
    cf = pd.DataFrame({"cell": [0, 0, 1, 1, 2, 2, 3],
                       "unit": ["R1", "R2", "R3", "R4", "R3", "R5", "R6"],
                       "value": [155, 5, 200, 180, 28, 12, 80.0]})
    return a, b, cf


def test_seed001_example7_most_sensitive_aggregation():
    """seed 001 section 6, Example 7: optimum 6720, -2 x2 + 2 x3 = -680, R4 attacks R3."""
    a, b, cf = _example7()
    r = most_sensitive_aggregation(a, b, cf, p=20, q=100)
    assert r.objective == pytest.approx(6720)
    assert not r.safe
    # aggregations are defined up to a factor (seed 001 end of section 3)
    sign = -1 if r.coefficients[1] < 0 else 1
    np.testing.assert_allclose(sign * r.coefficients, -np.array([0, -2, 2, 0]), atol=1e-9)
    assert sign * r.value == pytest.approx(680)
    assert (r.attacker, r.attacked) == ("R4", "R3")
    assert (r.attacked_share, r.attacker_share, r.total) == pytest.approx((456, 360, 840))
    assert "x2" in r.describe() and "x3" in r.describe()


def test_seed001_example7_reduced_model():
    """seed 001 section 6, reduced model: only R1 may be attacked, only R2 attacks."""
    a, b, cf = _example7()
    r = most_sensitive_aggregation(a, b, cf, p=20, q=100, attacked=["R1"], attackers=["R2"])
    assert (r.attacker, r.attacked) == ("R2", "R1")
    # objective equals the formula (6.6) evaluated at the reported shares
    assert r.objective == pytest.approx(120 * r.attacked_share + 100 * r.attacker_share
                                        - 100 * r.total, abs=1e-6)


def _table6(grid, second_row_first):
    """seed 001 Table 6 with the pattern of Table 7 and contributions of Example 4."""
    p, at = grid([[160, 380, 340], [40, 80, 60], [610, 800, 270]], sensitive=[(1, 1)],
                 upl={(1, 1): 30}, lpl={(1, 1): 30})
    w = [at(1, 1), at(1, 2), at(2, 1), at(2, 2)]
    names = p.names
    rows = [(at(1, 1), "a1", 155), (at(1, 1), "a2", 4), (at(1, 1), "a3", 1)]
    rows += [(at(2, 1), f"b{k}", v) for k, v in enumerate(second_row_first)]
    rows += [(at(1, 2), f"c{k}", 95) for k in range(4)]
    rows += [(at(2, 2), f"d{k}", 40) for k in range(2)]
    cf = pd.DataFrame(rows, columns=["cell", "unit", "value"])
    cf["cell"] = names[cf["cell"].to_numpy()]
    return p, at, w, cf


def test_seed001_example4_criterion2_stricter(grid):
    """seed 001 section 4, Example 4: criterion 1 passes Table 7, criterion 2 does not."""
    p, at, w, cf = _table6(grid, [28, 10, 2])
    res = audit(p, w, insider=False)
    assert res.verdict[at(1, 1)] == "protected"          # [80, 200] reaches 190 and 130
    r = criterion2(p, w, cf, p=20, q=100)
    assert not r.safe
    # the column-I union x1 + x3 = 200 is the disclosing aggregation: 155 attacked by 28
    assert (r.attacked, r.attacker) == ("a1", "b0")
    assert r.objective >= 120 * 155 + 100 * 28 - 100 * 200 - 1e-6


def test_seed001_example5_criterion2_looser(grid):
    """seed 001 section 4, Example 5 (Table 8): criterion 1 fails, criterion 2 passes.

    The largest contributor to B x I (100) knows its own share, so it bounds A x I by
    3750 - 2000 - 100 = 1650 < 1700 = 1600 + UPL; the aggregations themselves are safe.
    """
    p, at = grid([[1600, 900], [150, 2350], [2000, 1000]], sensitive=[(1, 1)],
                 upl={(1, 1): 100}, lpl={(1, 1): 100})
    assert p.value[at(0, 1)] == 3750 and p.value[at(1, 0)] == 2500
    w = [at(1, 1), at(1, 2), at(2, 1), at(2, 2)]
    rows = [(at(1, 1), "a1", 1000), (at(1, 1), "a2", 500), (at(1, 1), "a3", 100),
            (at(2, 1), "b1", 100), (at(2, 1), "b2", 30), (at(2, 1), "b3", 20)]
    rows += [(at(1, 2), f"c{k}", 300) for k in range(3)]
    rows += [(at(2, 2), f"d{k}", 470) for k in range(5)]
    cf = pd.DataFrame(rows, columns=["cell", "unit", "value"])
    # ancestors: every unit is also in its row total, column total and the grand total
    anc = []
    for cell, unit, v in rows:
        r, c = divmod(cell, 3)
        anc += [(at(r, 0), unit, v), (at(0, c), unit, v), (at(0, 0), unit, v)]
    cf_all = pd.concat([cf, pd.DataFrame(anc, columns=cf.columns)], ignore_index=True)
    plain = audit(p, w, insider=False)
    assert plain.verdict[at(1, 1)] == "protected" and plain.upper[at(1, 1)] == pytest.approx(1750)
    res = audit(p, w, insider=True, contributions=cf_all)
    hit = res.insider_findings
    row = hit[(hit["target"] == p.names[at(1, 1)]) & (hit["attacker"] == "unit b1")]
    assert len(row) == 1 and row["verdict"].iloc[0] == "upper"
    assert row["audit_upper"].iloc[0] == pytest.approx(1650)
    assert not res.ok
    r = criterion2(p, w, cf, p=20, q=100)
    assert r.safe and r.objective < 0


def test_explicit_aggregations_move_published_cells(grid):
    """The explicit aggregations of Table 7 are x1+x2=540, x3+x4=120, x1+x3=200, x2+x4=460."""
    p, _, w, _ = _table6(grid, [28, 10, 2])
    a, b, cells = explicit_aggregations(p, w)
    got = {tuple(a[k].toarray().ravel()): b[k] for k in range(a.shape[0])}
    assert got[(1.0, 1.0, 0.0, 0.0)] == 540 and got[(0.0, 0.0, 1.0, 1.0)] == 120
    assert got[(1.0, 0.0, 1.0, 0.0)] == 200 and got[(0.0, 1.0, 0.0, 1.0)] == 460
    np.testing.assert_array_equal(cells, sorted(w))
