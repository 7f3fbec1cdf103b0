"""Issue 13, "validate once at the entry": bad input is refused where it enters, before any
work, with one paragraph naming the file, column, line, code or option at fault (exit
status 2), and nothing is written."""

from __future__ import annotations

import time
import warnings
from pathlib import Path

import pandas as pd
import pytest
from iface_helpers import require_stages
from typer.testing import CliRunner

import tablesafe
from tablesafe.cli.main import app
from tablesafe.errors import InputError, RuleError

EX = Path(__file__).resolve().parents[2] / "examples"
DIMS = [f"industry={EX / 'industry.csv'}", f"region={EX / 'region.hrc'}"]
runner = CliRunner()


def invoke(*args: object):
    return runner.invoke(app, [str(a) for a in args])


def refused(res, out: Path | None, *needles: str) -> str:
    """The run failed with exit 2 and one ``error:`` paragraph holding every needle; no output."""
    assert res.exit_code == 2, res.output
    assert "Traceback" not in res.output
    lines = [ln for ln in res.output.splitlines() if ln.startswith("error: ")]
    assert len(lines) == 1, res.output
    for n in needles:
        assert n.lower() in lines[0].lower(), (n, lines[0])
    if out is not None:
        assert not out.exists() or not any(out.iterdir())
    return lines[0]


def protect_csv(tmp_path: Path, data: Path, *extra: object, dims=None, response="turnover", rules=("p(15)",)):
    out = tmp_path / "out"
    args: list[object] = ["protect", data]
    for d in dims or DIMS:
        args += ["--dim", d]
    for r in rules:
        args += ["--rule", r]
    args += ["--response", response, "--method", "none", "--out", out / "pub.csv", "--cells", out / "cells.csv",
             "--quiet", *extra]
    return invoke(*args), out


def edited_example(tmp_path: Path, line: int, old: str, new: str, name: str = "data.csv") -> Path:
    """The example data with ``old`` replaced by ``new`` on line ``line`` (1-based)."""
    rows = (EX / "enterprises.csv").read_text().splitlines()
    assert old in rows[line - 1]
    rows[line - 1] = rows[line - 1].replace(old, new, 1)
    p = tmp_path / name
    p.write_text("\n".join(rows) + "\n")
    return p


@pytest.fixture
def cells_csv(tmp_path: Path) -> tuple[Path, Path]:
    """Tabular input (three regions and their contributors) and its hierarchy."""
    hrc = tmp_path / "r.hrc"
    hrc.write_text("A\nB\nC\n")
    data = tmp_path / "cells.csv"
    data.write_text("region,x,n\nA,10,3\nB,5,-2\nC,7,4\n")
    return data, hrc


@pytest.mark.parametrize("rule,needle", [
    ("p(150)", "between 0 and 100"),
    ("p(100)", "between 0 and 100"),
    ("pq(10, 150)", "at most 100"),
    ("nk(2, 0)", "between 0 and 100"),
    ("freq(0)", ">= 1"),
    ("freq(inf)", "finite"),
    ("zero(nan)", "finite"),
])
def test_rule_parameters_out_of_range_are_refused(tmp_path, rule, needle):
    res, out = protect_csv(tmp_path, EX / "enterprises.csv", rules=[rule])
    refused(res, out, needle)
    with pytest.raises(RuleError, match=needle.replace("(", r"\(").replace(")", r"\)")):
        tablesafe.rules.parse_rules(rule)


def test_rule_parameters_at_the_edge_of_their_range_are_accepted():
    assert tablesafe.rules.parse_rules("p(99.5)|pq(10, 100)|nk(2, 100)|freq(1)")
