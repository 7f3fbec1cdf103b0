"""Interval publication (issue 14; seed 002 "Secondary tabular data protection methods",
partial suppression): the withheld cells are published as the intervals the audit proves,
and an independent LP (scipy, no tablesafe audit code) confirms that an attacker who knows
those intervals still cannot narrow any sensitive cell below its protection levels."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd
import pytest
from _oracle import exact_bounds
from typer.testing import CliRunner

import tablesafe
from tablesafe.cli.main import app
from tablesafe.errors import AuditFailure, InputError
from tablesafe.interval_publication import IntervalOptions, PublishedIntervals, check_intervals
from tablesafe.synthetic import problem_from_data, synthetic_preset


@pytest.fixture(scope="module", params=["2-D", "3-D"])
def published(request):
    # generated tables with holdings: two-way of 1,122 cells, three-way of 1,296
    syn = synthetic_preset("1k" if request.param == "2-D" else "1k3d", seed=3)
    problem = problem_from_data(syn, p=15, use_holdings=True)
    return problem, tablesafe.protect_problem(problem, method="intervals", rounding_base=100)


def test_intervals_hold_the_true_values_and_are_multiples_of_the_base(published):
    problem, result = published
    iv = result.intervals
    w = result.withheld
    assert w.any() and np.array_equal(iv.withheld, w)
    v = problem.value
    assert np.all(iv.low[w] <= v[w]) and np.all(iv.high[w] >= v[w])
    # never narrower than the audit's exact interval
    assert np.all(iv.low[w] <= iv.audit_low[w]) and np.all(iv.high[w] >= iv.audit_high[w])
    # rounded outward to multiples of 100, unless an a priori bound is nearer
    on_grid = lambda x: np.isclose(x / 100, np.round(x / 100))
    fin = np.isfinite(iv.high[w])
    assert np.all(on_grid(iv.low[w]) | (iv.low[w] == problem.lower[w]))
    assert np.all(on_grid(iv.high[w][fin]) | (iv.high[w][fin] == problem.upper[w][fin]))


def test_attacker_knowing_the_intervals_still_cannot_narrow_a_sensitive_cell(published):
    problem, result = published
    iv = result.intervals
    w = result.withheld
    known = replace(problem, lower=np.where(w, np.maximum(problem.lower, iv.low), problem.lower),
                    upper=np.where(w, np.minimum(problem.upper, iv.high), problem.upper))
    sens = np.flatnonzero(w & problem.sensitive)
    sample = sens[:: max(1, sens.size // 25)]
    only = np.zeros(problem.n, dtype=bool)
    only[sample] = True
    lo, hi = exact_bounds(replace(known, status=np.where(only, problem.status, "S")), w, sensitive_only=True)
    assert set(lo) == set(sample.tolist())
    v = problem.value
    for k in sample.tolist():
        tol = 1e-6 * max(1.0, abs(v[k]))
        assert hi[k] >= v[k] + problem.upl[k] - tol
        assert lo[k] <= v[k] - min(problem.lpl[k], v[k] - problem.lower[k]) + tol


def test_publication_has_low_and_high_for_withheld_cells_only(published):
    _, result = published
    pub = result.publication
    assert list(pub.columns[-3:]) == ["value", "low", "high"]
    w = result.withheld
    assert pub["value"].isna().to_numpy().tolist() == w.tolist()
    assert pub["low"].isna().to_numpy().tolist() == (~w).tolist()
    assert "interval" in result.summary()


def test_the_gate_refuses_an_interval_too_narrow_for_its_cell(published):
    problem, result = published
    iv = result.intervals
    k = int(np.flatnonzero(result.withheld & problem.sensitive)[0])
    low, high = iv.low.copy(), iv.high.copy()
    low[k] = high[k] = problem.value[k]  # the exact value: published in effect
    narrowed = PublishedIntervals(low, high, iv.base, iv.audit_low, iv.audit_high)
    with pytest.raises(AuditFailure, match="too narrow"):
        check_intervals(problem, result.withheld, narrowed, insider=True)
    # an interval that misses the true value is refused as well
    missing = PublishedIntervals(iv.low + 1e6, iv.high + 2e6, iv.base, iv.audit_low, iv.audit_high)
    with pytest.raises(AuditFailure, match="misses its value"):
        check_intervals(problem, result.withheld, missing, insider=True)


def test_intervals_that_give_the_withheld_cells_away_are_refused(published):
    # every withheld cell published as its exact value: the audit with these intervals
    # known must find the sensitive cells exposed
    problem, result = published
    iv = result.intervals
    w = result.withheld
    low = np.where(w, problem.value, np.nan)   # every withheld cell given away exactly
    exact = PublishedIntervals(low, low.copy(), iv.base, iv.audit_low, iv.audit_high)
    with pytest.raises(AuditFailure):
        check_intervals(problem, w, exact, insider=False)


def test_options_are_checked_at_the_entry():
    assert IntervalOptions.build(None).base is None
    assert IntervalOptions.build("5").base == 5.0
    for bad in (0, -2, "x", float("inf"), True):
        with pytest.raises(InputError, match="rounding_base"):
            IntervalOptions.build(bad)
    problem = problem_from_data(synthetic_preset("1k", seed=3), p=15, use_holdings=True)
    with pytest.raises(InputError, match="cta_cost"):
        tablesafe.protect_problem(problem, method="intervals", cta_cost="l1")


def test_command_line_writes_intervals(tmp_path):
    from pathlib import Path

    ex = Path(__file__).resolve().parents[2] / "examples"
    out = tmp_path / "pub.csv"
    res = CliRunner().invoke(app, [
        "protect", str(ex / "enterprises.csv"), "--dim", f"industry={ex / 'industry.csv'}",
        "--dim", f"region={ex / 'region.hrc'}", "--response", "turnover", "--holding", "group",
        "--rule", "p(15)", "--rule", "freq(3)", "--method", "intervals", "--rounding-base", "10",
        "--out", str(out), "--quiet",
    ])
    assert res.exit_code == 0, res.output
    pub = pd.read_csv(out, dtype={"industry": str, "region": str})
    assert list(pub.columns) == ["industry", "region", "turnover", "low", "high"]
    withheld = pub["turnover"].isna()
    assert withheld.any()
    assert pub.loc[withheld, "low"].notna().all() and pub.loc[~withheld, "low"].isna().all()
    assert (pub.loc[withheld, "low"] % 10 == 0).all()
    assert (pub.loc[withheld, "low"] <= pub.loc[withheld, "high"]).all()


def test_report_has_the_interval_section(published, tmp_path):
    _, result = published
    result.report(tmp_path / "report.html")
    text = (tmp_path / "report.html").read_text()
    assert 'id="published-intervals"' in text and 'id="narrowest-intervals"' in text
    assert "suppression by" in result.method_text
