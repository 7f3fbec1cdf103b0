"""The adjustment options: refused clearly when bad, and reachable with the same names
from Python, the command line and job files; the publication of an adjusted table."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

import tablesafe
from tablesafe.adjust import AdjustOptions, adjust_checked
from tablesafe.adjust.check import check_adjustment
from tablesafe.adjust.result import Adjustment
from tablesafe.cli.main import app
from tablesafe.errors import AuditFailure, InputError

EX = Path(__file__).resolve().parents[2] / "examples"
ARGS = (EX / "enterprises.csv", {"industry": EX / "industry.csv", "region": EX / "region.hrc"}, "turnover",
        ["p(15)", "freq(3)"])
CLI_TABLE = [str(EX / "enterprises.csv"), "--dim", f"industry={EX / 'industry.csv'}", "--dim",
             f"region={EX / 'region.hrc'}", "--response", "turnover", "--rule", "p(15)", "--rule", "freq(3)"]


@pytest.mark.parametrize(("method", "options", "named"), [
    ("cta", {"cta_cost": "cheap"}, "cta_cost"),
    ("cta", {"cta_directions": "random"}, "cta_directions"),
    ("cta", {"fix_totals": "region=x"}, "fix_totals"),
    ("cta", {"rounding_base": 5}, "rounding_base"),
    ("cta", {"readd_totals": True}, "readd_totals"),
    ("round", {}, "rounding_base"),
    ("round", {"rounding_base": -5}, "rounding_base"),
    ("round", {"rounding_base": "five"}, "rounding_base"),
    ("round", {"rounding_base": 5, "fix_totals": "grand"}, "fix_totals"),
    ("modular", {"rounding_base": 5}, "rounding_base"),
    ("fast", {"cta_cost": "l1"}, "cta_cost"),
])
def test_bad_options_are_refused_before_any_work_naming_the_option(method, options, named):
    with pytest.raises(InputError, match=named):
        tablesafe.protect("no-such-file.csv", ["a"], "v", ["p(15)"], method=method, **options)


def test_an_unknown_dimension_in_fix_totals_is_named():
    with pytest.raises(InputError, match="'nowhere'.*industry"):
        tablesafe.protect(*ARGS, method="cta", fix_totals="nowhere=1")


def test_python_cta_publishes_every_cell_with_its_adjusted_value():
    """Same layout as a suppression publication, no empty cell; the analyst file carries
    the adjusted value, the deviation and the direction."""
    suppressed = tablesafe.protect(*ARGS, method="modular")
    adjusted = tablesafe.protect(*ARGS, method="cta", cta_cost="l1", fix_totals="grand")
    pub = adjusted.publication
    assert list(pub.columns) == list(suppressed.publication.columns)
    assert len(pub) == len(suppressed.publication)
    assert pub["turnover"].notna().all()
    cells = adjusted.cells
    assert {"adjusted", "deviation", "direction"} <= set(cells.columns)
    sens = cells["status"].isin(["U", "A"]).to_numpy()
    assert set(cells.loc[sens, "direction"]) <= {"up", "down"} and (cells.loc[~sens, "direction"] == "").all()
    assert np.allclose(pub["turnover"].to_numpy(float), cells["adjusted"].to_numpy(float))
    assert adjusted.ok and "adjusted (cta)" in adjusted.summary()
    grand = (cells["industry"] == "Total") & (cells["region"] == "Total")
    assert np.allclose(cells.loc[grand, "deviation"], 0.0)


def test_command_line_round_writes_publication_analyst_file_and_report(tmp_path):
    out, cells, report = tmp_path / "pub.csv", tmp_path / "cells.csv", tmp_path / "report.html"
    run = CliRunner().invoke(app, ["protect", *CLI_TABLE, "--method", "round", "--rounding-base", "1000",
                                   "--out", str(out), "--cells", str(cells), "--report", str(report), "--quiet"])
    assert run.exit_code == 0, run.output
    pub = pd.read_csv(out)
    assert pub["turnover"].notna().all() and (pub["turnover"] % 1000 == 0).all()
    analyst = pd.read_csv(cells)
    assert (abs(analyst["adjusted"] - analyst["value"]) < 1000).all()
    html = report.read_text()
    assert 'id="adjustment"' in html and "sum of absolute deviations" in html


def test_command_line_and_job_file_reach_every_adjustment_option(tmp_path, monkeypatch):
    from tablesafe import api

    seen: list[dict] = []

    def fake_protect(data, *args, **kwargs):
        seen.append(kwargs)
        raise InputError("stop here")

    monkeypatch.setattr(api, "protect", fake_protect)
    CliRunner().invoke(app, ["protect", *CLI_TABLE, "--method", "random-round", "--rounding-base", "5",
                             "--readd-totals", "--cta-cost", "relative", "--cta-directions", "alternating",
                             "--fix-totals", "region=1"])
    job = tmp_path / "job.toml"
    job.write_text(f'data = "{EX / "enterprises.csv"}"\ndims = ["industry", "region"]\nresponse = "turnover"\n'
                   'rules = ["p(15)"]\nmethod = "random-round"\nrounding_base = 5\nreadd_totals = true\n'
                   'cta_cost = "relative"\ncta_directions = "alternating"\nfix_totals = "region=1"\n')
    CliRunner().invoke(app, ["run", str(job)])
    assert len(seen) == 2
    for kwargs in seen:
        assert kwargs["method"] == "random-round" and kwargs["rounding_base"] == 5
        assert kwargs["readd_totals"] is True and kwargs["cta_cost"] == "relative"
        assert kwargs["cta_directions"] == "alternating" and kwargs["fix_totals"] == "region=1"


def test_a_job_file_runs_cta(tmp_path):
    out = tmp_path / "pub.csv"
    job = tmp_path / "job.toml"
    job.write_text(f'data = "{EX / "enterprises.csv"}"\ndims = ["industry={EX / "industry.csv"}", '
                   f'"region={EX / "region.hrc"}"]\nresponse = "turnover"\nrules = ["p(15)"]\n'
                   f'method = "cta"\nfix_totals = {{ region = 0 }}\nout = "{out}"\n')
    run = CliRunner().invoke(app, ["run", str(job), "--quiet"])
    assert run.exit_code == 0, run.output
    assert pd.read_csv(out)["turnover"].notna().all()


def test_time_limit_returns_a_valid_adjusted_table(problem_1k):
    """With a one-second limit the MILP is cut short (killed if need be); the heuristic's
    table, or the MILP's best, comes back adjusted and checked, never the true table."""
    from _adjust_checks import assert_cta_valid

    adj = adjust_checked(problem_1k, AdjustOptions.build("cta", cta_directions="optimal", time_limit=1))
    assert_cta_valid(problem_1k, adj.values, adj.direction)
    assert adj.quality.cells_changed > 0 and adj.stats["check"] == "passed"


def test_the_check_fails_closed_naming_the_cell(problem_1k):
    """An adjustment that leaves a sensitive cell short of its level, or breaks a
    relation, is refused by the gate with the cell's name."""
    options = AdjustOptions.build("cta", cta_directions="alternating")
    good = adjust_checked(problem_1k, options)
    i = int(np.flatnonzero(problem_1k.sensitive & (problem_1k.upl > 0))[0])
    values = good.values.copy()
    values[i] = problem_1k.value[i]
    bad = Adjustment("cta", values, good.original, good.direction, good.quality, stats={})
    with pytest.raises(AuditFailure, match="nothing is published"):
        check_adjustment(problem_1k, bad, options)
    rounded = Adjustment("round", np.round(problem_1k.value / 5) * 5, good.original, good.direction,
                         good.quality, base=5.0)
    with pytest.raises(AuditFailure, match="relation of total"):
        check_adjustment(problem_1k, rounded, AdjustOptions.build("round", rounding_base=5))
