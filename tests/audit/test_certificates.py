"""Protection certificates: made from the audit LPs, checked in one pass (issue 4)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from tablesafe.audit import audit, check_certificates, make_certificates

TABLE6 = [[160, 380, 340], [40, 80, 60], [610, 800, 270]]


def _safe(grid):
    """seed 001 Example 2: Table 7 protects A x I with levels 30."""
    p, at = grid(TABLE6, sensitive=[(1, 1)], upl={(1, 1): 30}, lpl={(1, 1): 30})
    return p, at, [at(1, 1), at(1, 2), at(2, 1), at(2, 2)]


def test_round_trip_passes(grid, tmp_path):
    p, at, w = _safe(grid)
    cert = make_certificates(p, w)
    assert set(cert.columns) == {"target", "direction", "cell", "value"}
    assert set(cert["direction"]) == {"up", "down"}
    assert set(cert["cell"]) <= {p.names[i] for i in w}
    up = cert[(cert["direction"] == "up") & (cert["cell"] == p.names[at(1, 1)])]
    assert up["value"].iloc[0] >= 190
    assert check_certificates(p, w, cert) == []
    path = tmp_path / "c.parquet"
    cert.to_parquet(path)
    assert check_certificates(p, w, str(path)) == []


def test_tampered_certificates_fail(grid):
    p, at, w = _safe(grid)
    cert = make_certificates(p, w)
    # break a relation
    bad = cert.copy()
    bad.loc[bad.index[0], "value"] += 1.0
    f = check_certificates(p, w, bad)
    assert len(f) == 1 and "relation" in f[0].reason
    # touch a published cell
    extra = pd.DataFrame({"target": [p.names[at(1, 1)]], "direction": ["up"],
                          "cell": [p.names[at(1, 3)]], "value": [340.0]})
    f = check_certificates(p, w, pd.concat([cert, extra], ignore_index=True))
    assert any("published" in x.reason for x in f)
    # go below the a priori bound, keeping relations: shift a cycle by a large amount
    down = cert[cert["direction"] == "down"].copy()
    t = p.names[at(1, 1)]
    cyc = pd.DataFrame({"target": t, "direction": "down",
                        "cell": [p.names[i] for i in (at(1, 1), at(1, 2), at(2, 1), at(2, 2))],
                        "value": [-10.0, 550.0, 210.0, -90.0]})
    f = check_certificates(p, w, pd.concat([cert[cert["direction"] == "up"], cyc]))
    assert [(x.direction, "outside" in x.reason) for x in f] == [("down", True)]
    # a move that is too small: the identity deviation of a valid small cycle
    small = pd.DataFrame({"target": t, "direction": "up",
                          "cell": [p.names[i] for i in (at(1, 1), at(1, 2), at(2, 1), at(2, 2))],
                          "value": [170.0, 370.0, 30.0, 90.0]})
    f = check_certificates(p, w, pd.concat([down, small]))
    assert len(f) == 1 and "moves the target by 10" in f[0].reason
    # a missing direction
    f = check_certificates(p, w, down)
    assert [(x.target, x.direction, x.reason) for x in f] == [(t, "up", "missing")]


def test_unprotected_direction_gets_no_certificate(grid):
    p, at = grid(TABLE6, sensitive=[(1, 1)], upl={(1, 1): 41}, lpl={(1, 1): 30})
    w = [at(1, 1), at(1, 2), at(2, 1), at(2, 2)]
    cert = make_certificates(p, w)
    assert set(cert["direction"]) == {"down"}
    f = check_certificates(p, w, cert)
    assert [(x.direction, x.reason) for x in f] == [("up", "missing")]


def test_unbounded_direction_certificate(grid):
    """A cell with an infinite upper bound still gets a finite certificate."""
    p, at = grid([[5, 6], [7, 8]], sensitive=[(1, 1)], upl={(1, 1): 3}, lpl={(1, 1): 2})
    w = [at(0, 1), at(1, 1), at(2, 1), at(0, 0), at(1, 0), at(2, 0)]
    res = audit(p, w, insider=False)
    assert np.isinf(res.upper[at(1, 1)])
    cert = make_certificates(p, w)
    assert check_certificates(p, w, cert) == []
    up = cert[(cert["direction"] == "up") & (cert["cell"] == p.names[at(1, 1)])]
    assert np.isfinite(up["value"].iloc[0]) and up["value"].iloc[0] >= 8


@pytest.mark.parametrize("name", ["TARGUS.jj", "TABLE7.jj"])
def test_castro_round_trip(benchmarks_dir, name):
    """Castro instances (JJ): certificates of a pattern pass; a tampered one fails."""
    from tablesafe.io.jj import read_jj

    p = read_jj(benchmarks_dir / "castro" / name)
    # Castro's values are rounded and not exactly additive: keep the offsets as rhs
    p = p.copy(rhs=p.relations @ p.value)
    w = _castro_pattern(p)
    res = audit(p, w, insider=False)
    cert = make_certificates(p, w)
    fails = check_certificates(p, w, cert)
    # every protected direction has a passing certificate; failures are exactly the
    # unprotected directions reported as missing
    assert all(f.reason.startswith("missing") for f in fails)
    bad_cells = {f.target for f in fails}
    assert bad_cells == {p.names[i] for i in res.failing}
    tampered = cert.copy()
    tampered.loc[tampered.index[0], "value"] += 0.01 * np.abs(p.value).max()
    assert len(check_certificates(p, w, tampered)) > len(fails)


def _castro_pattern(p):
    """Deterministic pattern: the sensitive cells plus every cell sharing a relation
    with two of them (a crude but valid-looking pattern)."""
    sens = p.sensitive.astype(float)
    a = abs(p.relations)
    touched = (a.T @ (a @ sens)) >= 2
    return p.sensitive | (touched & ~p.empty)


def test_sliding_level_and_zero_levels(grid):
    """Certificates must span the sliding level; a cell with no level must just move."""
    p, at = grid(TABLE6, sensitive=[(1, 1)], upl={(1, 1): 30}, lpl={(1, 1): 30},
                 spl={(1, 1): 121})
    w = [at(1, 1), at(1, 2), at(2, 1), at(2, 2)]
    f = check_certificates(p, w, make_certificates(p, w))
    assert [(x.direction, x.reason) for x in f] == [("sliding", "certificates span 120, needs 121")]
    p.spl[at(1, 1)] = 120
    assert check_certificates(p, w, make_certificates(p, w)) == []
    q, at = grid(TABLE6, sensitive=[(1, 1)])          # frequency-rule style: levels 0
    cert = make_certificates(q, w)
    assert check_certificates(q, w, cert) == []
    assert check_certificates(q, w, cert.iloc[0:0]) == [(q.names[at(1, 1)], "up", "missing")]


def test_insiders_false_means_no_insider_check(grid):
    """``insiders=False`` is read as "no insider check" (it was taken for a mask and
    raised IndexError); a mask of the wrong shape gets a clear InputError."""
    from tablesafe.errors import InputError

    p, at, w = _safe(grid)
    cert = make_certificates(p, w)
    knows = np.zeros(p.n, dtype=bool)
    knows[at(1, 2)] = True  # its respondent knows it: every certificate here moves it
    assert check_certificates(p, w, cert, insiders=knows) != []
    assert check_certificates(p, w, cert, insiders=False) == check_certificates(p, w, cert) == []
    with pytest.raises(InputError, match="one true/false entry per cell"):
        check_certificates(p, w, cert, insiders=np.array(True))
