"""Every option of ``tablesafe.protect`` is reachable with the same name from the command
line and from a job file (issue 13): the three signatures are compared here."""

from __future__ import annotations

import inspect

import pytest
import typer.main

import tablesafe
from tablesafe.cli.main import app
from tablesafe.io.jobfile import TABLE_KEYS, read_job

NOT_AN_OPTION = {
    "progress": "the command line shows progress unless --quiet (tablesafe run --quiet for job files)",
}
"""Python parameters that are not options of a run, with where their effect is set."""

REPEATED = {"dims": "dim", "rules": "rule", "tables": "table"}
"""List parameters whose command-line option is given once per item, in the singular."""


def _cli_names() -> set[str]:
    """The names of the ``protect`` command's parameters: the argument, and every long
    flag of each option (``--given-status`` -> ``given_status``, ``--no-x`` left out)."""
    command = typer.main.get_command(app).commands["protect"]  # type: ignore[attr-defined]
    names = set()
    for param in command.params:
        if param.param_type_name == "argument":
            names.add(param.name)
            continue
        for flag in [*param.opts, *param.secondary_opts]:
            if flag.startswith("--") and not flag.startswith("--no-"):
                names.add(flag[2:].replace("-", "_"))
    return names


def _python_names() -> list[str]:
    return [n for n in inspect.signature(tablesafe.protect).parameters if n not in NOT_AN_OPTION]


def test_every_protect_option_is_a_command_line_option():
    cli = _cli_names()
    missing = [n for n in _python_names() if REPEATED.get(n, n) not in cli]
    assert not missing, f"options of tablesafe.protect missing from `tablesafe protect`: {missing}"


def test_every_protect_option_is_a_job_file_key():
    missing = [n for n in _python_names() if n not in TABLE_KEYS]
    assert not missing, f"options of tablesafe.protect missing from job files: {missing}"


def test_the_exceptions_are_still_parameters():
    params = inspect.signature(tablesafe.protect).parameters
    assert set(NOT_AN_OPTION) <= set(params) and set(REPEATED) <= set(params)


def test_issue_13_options_reach_protect_from_every_entry(tmp_path, monkeypatch):
    """The options the issue found unreachable arrive at ``protect`` with their values."""
    from typer.testing import CliRunner

    from tablesafe import api
    from tablesafe.cli.main import app as cli_app

    seen: list[dict] = []

    def fake_protect(data, *args, **kwargs):
        seen.append(kwargs)
        raise tablesafe.InputError("stop here")

    monkeypatch.setattr(api, "protect", fake_protect)
    data = tmp_path / "d.csv"
    data.write_text("a,v\nx,1\n")
    CliRunner().invoke(cli_app, [
        "protect", str(data), "--dim", "a", "--response", "v", "--rule", "p(15)", "--no-singleton",
        "--capacity", "--sliding", "--freq-levels", "directional", "--missing-codes", "a=9",
        "--manual-margin", "20",
    ])
    job = tmp_path / "job.toml"
    job.write_text('data = "d.csv"\ndims = ["a"]\nresponse = "v"\nrules = ["p(15)"]\nsingleton = false\n'
                   'capacity = true\nsliding = true\nfreq_levels = "directional"\n'
                   'missing_codes = ["a=9"]\nmanual_margin = 20\n')
    assert read_job(job)[0].options["missing_codes"] == ["a=9"]
    CliRunner().invoke(cli_app, ["run", str(job)])
    assert len(seen) == 2
    for kwargs in seen:
        assert kwargs["singleton"] is False and kwargs["capacity"] is True and kwargs["sliding"] is True
        assert kwargs["freq_levels"] == "directional" and kwargs["missing_codes"] == ["a=9"]
        assert kwargs["manual_margin"] == 20


def test_missing_codes_are_read_in_one_place():
    from tablesafe.api import missing_codes_map

    assert missing_codes_map(None) is None
    assert missing_codes_map(["a=9", "a=99", "b = x"]) == {"a": ["9", "99"], "b": ["x"]}
    assert missing_codes_map({"a": "9", "b": ["x", "y"]}) == {"a": ["9"], "b": ["x", "y"]}
    with pytest.raises(tablesafe.InputError, match="DIMENSION=CODE"):
        missing_codes_map(["a"])


def test_the_options_reach_the_stages(monkeypatch):
    """``sliding`` and ``manual_margin`` reach the rules stage, ``singleton`` and
    ``capacity`` the suppression stage."""
    from pathlib import Path

    import tablesafe.suppress as suppression

    ex = Path(__file__).resolve().parents[2] / "examples"
    args = (ex / "enterprises.csv", {"industry": ex / "industry.csv", "region": ex / "region.hrc"}, "turnover",
            ["p(15)", "freq(3)"])
    plain = tablesafe.protect(*args, method="none").problem
    sliding = tablesafe.protect(*args, method="none", sliding=True).problem
    assert not plain.spl.any() and sliding.spl.any()

    seen = {}

    def fake_suppress(problem, **kwargs):
        seen.update(kwargs)
        raise tablesafe.InputError("stop here")

    monkeypatch.setattr(suppression, "suppress", fake_suppress)
    with pytest.raises(tablesafe.InputError, match="stop here"):
        tablesafe.protect(*args, method="optimal", singleton=False, capacity=True)
    assert seen["singleton"] is False and seen["capacity"] is True
