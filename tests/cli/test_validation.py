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


# ------------------------------------------------------------------ defect 2: numbers and names
def test_negative_frequency_in_tabular_input_is_refused(tmp_path, cells_csv):
    require_stages("from_tabular", "rules")
    data, hrc = cells_csv
    res, out = protect_csv(tmp_path, data, "--tabular", "--frequency", "n", dims=[f"region={hrc}"], response="x",
                           rules=["freq(3)"])
    refused(res, out, "negative", "cells.csv", "line 3", "column 'n'", "'-2'")


@pytest.mark.parametrize("weight", ["-1", "0"])
def test_non_positive_sampling_weights_are_refused(tmp_path, weight):
    require_stages("tabulate", "rules")
    data = edited_example(tmp_path, 3, ",1.0,0", f",{weight},0")
    res, out = protect_csv(tmp_path, data, "--weight", "weight")
    refused(res, out, "weight", "data.csv", "line 3", "column 'weight'", f"'{weight}'")


def test_infinite_response_is_refused_without_a_numpy_warning(tmp_path, cells_csv):
    require_stages("tabulate", "from_tabular", "rules")
    data = edited_example(tmp_path, 3, "1821.32", "inf")
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        res, out = protect_csv(tmp_path, data)
    refused(res, out, "infinite", "data.csv", "line 3", "column 'turnover'")
    tab, hrc = cells_csv
    tab.write_text("region,x,n\nA,10,3\nB,inf,2\nC,7,4\n")
    res, out = protect_csv(tmp_path, tab, "--tabular", "--frequency", "n", dims=[f"region={hrc}"], response="x",
                           rules=["freq(3)"])
    refused(res, out, "infinite", "cells.csv", "line 3", "column 'x'")


def test_duplicate_column_names_are_refused(tmp_path, cells_csv):
    require_stages("tabulate", "from_tabular", "rules")
    data = edited_example(tmp_path, 1, "turnover,employees", "turnover,turnover")
    res, out = protect_csv(tmp_path, data)
    refused(res, out, "more than once", "data.csv", "column 'turnover'")
    tab, hrc = cells_csv
    tab.write_text("region,x,x\nA,10,3\nB,5,2\nC,7,4\n")
    res, out = protect_csv(tmp_path, tab, "--tabular", dims=[f"region={hrc}"], response="x", rules=["man(10)"])
    refused(res, out, "more than once", "cells.csv", "column 'x'")
    frame = pd.read_csv(EX / "enterprises.csv")
    frame.columns = [c if c != "employees" else "turnover" for c in frame.columns]
    with pytest.raises(InputError, match="'turnover' occurs more than once"):
        tablesafe.protect(frame, dims=DIMS, response="turnover", rules="p(15)", method="none")


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


def test_directory_given_as_data_says_so(tmp_path):
    folder = tmp_path / "data"
    folder.mkdir()
    (folder / "a.csv").write_text("region,x\nA,1\n")
    res, out = protect_csv(tmp_path, folder)
    refused(res, out, "directory", "where a data file is expected", str(folder))
    res, out = protect_csv(tmp_path, folder, "--tabular")
    refused(res, out, "directory", str(folder))


def test_empty_hierarchy_file_is_named(tmp_path):
    require_stages("tabulate")
    empty = tmp_path / "empty.hrc"
    empty.write_text("")
    res, out = protect_csv(tmp_path, EX / "enterprises.csv", dims=[DIMS[0], f"region={empty}"])
    refused(res, out, "lists no codes", "empty.hrc")
    pc = tmp_path / "empty.csv"
    pc.write_text("code,parent\n")
    res, out = protect_csv(tmp_path, EX / "enterprises.csv", dims=[f"industry={pc}", DIMS[1]])
    refused(res, out, "lists no codes", "empty.csv")
