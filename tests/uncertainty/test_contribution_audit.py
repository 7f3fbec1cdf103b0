"""The contribution-level audit of a whole publication (issue 15, seed 004): the interval
of each sensitive cell's largest contribution, whatever method protected the table,
checked against an independent LP (scipy) on the published table."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy.optimize import linprog
from typer.testing import CliRunner

import tablesafe
from tablesafe.cli.main import app
from tablesafe.errors import InputError
from tablesafe.synthetic import synthetic_data


@pytest.fixture(scope="module")
def data():
    syn = synthetic_data([[3, 4], [2, 5]], 1_500, seed=5, holding_cohesion=0.7)  # 208 cells, 46 sensitive
    return syn


def _protect(syn, **kw):
    return tablesafe.protect(syn.data, list(syn.hierarchies.items()), syn.response, "p(15)", holding=syn.holding,
                             uncertainty=True, **kw)


@pytest.fixture(scope="module")
def suppressed(data):
    return _protect(data)


def _lp_range_of_x1(problem, withheld, cell, kx=2.0):
    """Smallest and largest x1 an attacker holding x2 finds: variables are the withheld
    cells, the other listed contributions and the rest; the cell's total is their sum."""
    con = problem.contributions
    wi = np.flatnonzero(withheld)
    a = problem.relations.toarray()
    rhs = problem.rhs - a[:, ~withheld] @ problem.value[~withheld]
    cnt = int(con.count[cell])
    others = con.top[cell, 2:cnt]
    rest = problem.value[cell] - con.top[cell, :cnt].sum()
    # variables: withheld cells..., x1, others..., rest
    nv = len(wi) + 1 + len(others) + 1
    eq = [np.concatenate([a[r, wi], np.zeros(nv - len(wi))]) for r in range(a.shape[0]) if np.abs(a[r, wi]).sum() > 0]
    b = [rhs[r] for r in range(a.shape[0]) if np.abs(a[r, wi]).sum() > 0]
    row = np.zeros(nv)  # T - x1 - others - rest = x2
    row[int(np.searchsorted(wi, cell))] = 1.0
    row[len(wi):] = -1.0
    eq.append(row)
    b.append(con.top[cell, 1])
    bounds = [(problem.lower[i], None) for i in wi] + [(None, None)] + [(0, kx * o) for o in others] + [(0, kx * max(rest, 0))]
    out = []
    for sense in (1.0, -1.0):
        c = np.zeros(nv)
        c[len(wi)] = sense
        r = linprog(c, A_eq=np.array(eq), b_eq=np.array(b), bounds=bounds, method="highs")
        assert r.status == 0, r.message
        out.append(r.x[len(wi)])
    return out[0], out[1]


def test_intervals_agree_with_an_independent_lp(suppressed):
    problem, ca = suppressed.problem, suppressed.contributions
    t = ca.table[ca.table["attacker"] == "respondent 2"]
    assert len(t) > 5
    pos = {str(n): i for i, n in enumerate(problem.names)}
    for _, row in t.iloc[:: max(1, len(t) // 8)].iterrows():
        lo, hi = _lp_range_of_x1(problem, suppressed.withheld, pos[str(row.cell)])
        assert row.ui_low == pytest.approx(lo, rel=1e-6, abs=1e-4)
        assert row.ui_high == pytest.approx(hi, rel=1e-6, abs=1e-4)


def test_every_sensitive_cell_is_audited_and_holds_its_largest_contribution(suppressed):
    problem, ca = suppressed.problem, suppressed.contributions
    sens = {str(n) for n in problem.names[problem.sensitive]}
    assert set(ca.table["cell"].astype(str)) == sens
    assert (ca.table["ui_low"] <= ca.table["x1"] + 1e-6).all() and (ca.table["x1"] <= ca.table["ui_high"] + 1e-6).all()
    assert set(ca.table["published_as"]) == {"withheld"}
    # the needs follow from the interval and p
    t = ca.table
    px = 0.15 * t["x1"]
    np.testing.assert_allclose(t["need_left"], np.maximum(px - (t["x1"] - t["ui_low"]), 0), atol=1e-6)
    np.testing.assert_allclose(t["need_right"], np.maximum(px - (t["ui_high"] - t["x1"]), 0), atol=1e-6)
    assert (t["protected"] == ((t["need_left"] == 0) & (t["need_right"] == 0))).all()
    close = (t["midpoint"] - t["x1"]).abs() <= 0.15 * t["x1"]
    assert (t["midpoint_close"] == close).all()


def test_a_suppressed_cell_is_protected_for_respondent_two(suppressed):
    """The suppression protected every cell against the p% rule's attacker in the table's
    own model (levels from x1 and the rest); with others known within [0, 2x] respondent
    2 therefore never places x1 within p% on both sides at once."""
    t = suppressed.contributions.table
    r2 = t[t["attacker"] == "respondent 2"]
    assert not ((r2["need_left"] > 0) & (r2["need_right"] > 0)).any()


def test_analyst_file_and_contribution_file(suppressed, tmp_path):
    cells = suppressed.cells
    sens = suppressed.problem.sensitive
    assert cells.loc[sens, "x1_attacker"].notna().all() and cells.loc[~sens, "x1_attacker"].isna().all()
    assert (cells.loc[sens, "x1_low"] <= cells.loc[sens, "x1_high"]).all()
    out = tmp_path / "contrib.csv"
    suppressed.write(contributions=out)
    back = pd.read_csv(out)
    assert len(back) == len(suppressed.contributions.table)
    assert "contribution-level audit" in suppressed.summary()


def test_rounded_publication_widens_by_the_base(data):
    """Controlled rounding to base B: the total is known within one base, so respondent
    2's interval is the exact-total interval widened by B on each side (bounds aside)."""
    base = 1_000.0
    rounded = _protect(data, method="round", rounding_base=base)
    t = rounded.contributions.table
    r2 = t[(t["attacker"] == "respondent 2")]
    assert set(r2["published_as"]) == {"rounded"}
    problem = rounded.problem
    con = problem.contributions
    pos = {str(n): i for i, n in enumerate(problem.names)}
    for _, row in r2.iloc[:5].iterrows():
        i = pos[str(row.cell)]
        cnt = int(con.count[i])
        rest = problem.value[i] - con.top[i, :cnt].sum()
        adj = rounded.adjustment.values[i]
        expect_hi = adj + base - con.top[i, 1]
        expect_lo = max(adj - base, problem.lower[i]) - con.top[i, 1] - 2 * (con.top[i, 2:cnt].sum() + rest)
        assert row.ui_high == pytest.approx(expect_hi) and row.ui_low == pytest.approx(expect_lo)


def test_options_are_checked_at_the_entry(data):
    with pytest.raises(InputError, match="knowledge_kx"):
        _protect(data, knowledge_kx=0.5)
    with pytest.raises(InputError, match="uncertainty_side"):
        _protect(data, uncertainty_side="left")
    with pytest.raises(InputError, match="uncertainty_p"):
        tablesafe.protect(data.data, list(data.hierarchies.items()), data.response, "freq(3)",
                          holding=data.holding, uncertainty=True)


def test_command_line(data, tmp_path):
    csv = tmp_path / "d.csv"
    data.data.to_csv(csv, index=False)
    dims = []
    for name, h in data.hierarchies.items():
        hrc = tmp_path / f"{name}.hrc"  # tau-ARGUS hierarchy: one code per line, "@" per level below the first
        hrc.write_text("".join("@" * (int(h.depths[i]) - 1) + c + "\n" for i, c in enumerate(h.codes) if i > 0))
        dims += ["--dim", f"{name}={hrc}"]
    out = tmp_path / "c.csv"
    r = CliRunner().invoke(app, ["protect", str(csv), *dims, "--response", data.response, "--rule", "p(15)",
                                 "--holding", data.holding, "--uncertainty", "--uncertainty-side", "sliding",
                                 "--contributions", str(out), "--quiet"])
    assert r.exit_code == 0, r.output
    back = pd.read_csv(out)
    assert len(back) > 0 and {"attacker", "ui_low", "ui_high", "need_sliding"} <= set(back.columns)


def test_report_section(suppressed):
    from tablesafe.report import render_report

    html = render_report(suppressed)
    section = html.split('id="contribution-audit"', 1)[1].split("</section>", 1)[0]
    assert "data:image/png;base64" in section
    shown = section.count("<tr>") - 1
    assert shown == min(15, suppressed.contributions.stats["cells"])
