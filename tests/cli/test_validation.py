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


@pytest.mark.parametrize("limit", ["-5", "0"])
def test_non_positive_time_limit_is_refused(tmp_path, limit):
    require_stages("tabulate", "rules")
    res, out = protect_csv(tmp_path, EX / "enterprises.csv", "--time-limit", limit)
    refused(res, out, "time limit", limit)
    with pytest.raises(InputError, match="time limit"):
        tablesafe.protect(EX / "enterprises.csv", dims=DIMS, response="turnover", rules="p(15)",
                          time_limit=float(limit))


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


# ----------------------------------------------------------------------- defect 3: JJ additivity
def test_non_additive_jj_is_refused_on_reading(tmp_path, benchmarks_dir, monkeypatch):
    """Castro's TABLE7 (rounded values) without --jj-offsets: refused before the suppression
    starts, naming the file, the first failing relation and the option."""
    require_stages("suppress", "audit")
    import tablesafe.suppress as suppress_stage

    def no_suppression(*_a, **_k):
        raise AssertionError("the suppression ran on non-additive input")

    monkeypatch.setattr(suppress_stage, "suppress", no_suppression)
    jj = benchmarks_dir / "castro/TABLE7.jj"
    out = tmp_path / "out"
    t0 = time.perf_counter()
    res = invoke("protect", "--jj", jj, "--method", "optimal", "--out", out / "pub.csv")
    assert time.perf_counter() - t0 < 60
    refused(res, out, "TABLE7.jj", "relation 1 of 230", "line 628", "--jj-offsets")
    with pytest.raises(InputError, match="jj_offsets=True") as err:
        tablesafe.protect(jj, method="fast")
    assert err.value.file == str(jj) and err.value.line == 628


# ------------------------------------------------------------------ defect 4: files and options
def test_output_paths_are_checked_before_the_work_starts(tmp_path, monkeypatch):
    require_stages("tabulate", "rules")
    from tablesafe import api

    def no_work(*_a, **_k):
        raise AssertionError("the run started before its output paths were checked")

    monkeypatch.setattr(api, "prepare_problem", no_work)
    long_name = tmp_path / ("p" * 300 + ".csv")
    res = invoke("protect", EX / "enterprises.csv", "--dim", DIMS[0], "--dim", DIMS[1], "--response", "turnover",
                 "--rule", "p(15)", "--out", long_name)
    refused(res, None, "too long", "p" * 300)
    blocker = tmp_path / "afile"
    blocker.write_text("")
    res = invoke("protect", EX / "enterprises.csv", "--dim", DIMS[0], "--dim", DIMS[1], "--response", "turnover",
                 "--rule", "p(15)", "--out", blocker / "pub.csv")
    refused(res, None, "not a folder", "afile")
    res = invoke("protect", EX / "enterprises.csv", "--dim", DIMS[0], "--dim", DIMS[1], "--response", "turnover",
                 "--rule", "p(15)", "--out", tmp_path)
    refused(res, None, "folder", str(tmp_path))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["afile"]


def test_job_file_outputs_are_checked_before_any_table_runs(tmp_path, monkeypatch):
    from tablesafe import api

    def no_work(*_a, **_k):
        raise AssertionError("a table ran before the job's output paths were checked")

    monkeypatch.setattr(api, "protect", no_work)
    job = tmp_path / "job.toml"
    job.write_text(f'data = "{EX / "enterprises.csv"}"\nrules = ["p(15)"]\n[[table]]\ndims = {DIMS!r}\n'
                   f'response = "turnover"\nout = "{"q" * 300}.csv"\n'.replace("'", '"'))
    res = invoke("run", job)
    refused(res, None, "too long")


def test_directory_given_as_data_says_so(tmp_path):
    folder = tmp_path / "data"
    folder.mkdir()
    (folder / "a.csv").write_text("region,x\nA,1\n")
    res, out = protect_csv(tmp_path, folder)
    refused(res, out, "directory", "where a data file is expected", str(folder))
    res, out = protect_csv(tmp_path, folder, "--tabular")
    refused(res, out, "directory", str(folder))


def test_latin1_csv_needs_the_encoding_option(tmp_path):
    require_stages("tabulate", "from_tabular", "rules")
    hrc = tmp_path / "r.hrc"
    hrc.write_bytes("A\nB\xe9\nC\n".encode("latin-1"))
    data = tmp_path / "latin.csv"
    data.write_bytes("region,x\nA,10\nB\xe9,5\nC,7\n".encode("latin-1"))
    for tabular in ([], ["--tabular"]):
        res, out = protect_csv(tmp_path, data, *tabular, dims=[f"region={hrc}"], response="x", rules=["man(10)"])
        refused(res, out, "cannot be decoded as utf-8", "latin.csv", "line 3", "--encoding latin-1")
    res, out = protect_csv(tmp_path, data, "--encoding", "latin-1", dims=[f"region={hrc}"], response="x",
                           rules=["p(15)"])
    assert res.exit_code in (0, 1), res.output
    assert "Bé" in (out / "pub.csv").read_text(encoding="utf-8")
    r = tablesafe.protect(data, dims={"region": hrc}, response="x", rules="man(10)", tabular=True,
                          encoding="latin-1", method="none")
    assert "Bé" in set(r.publication["region"])
    job = tmp_path / "job.toml"
    job.write_text('data = "latin.csv"\ndims = ["region=r.hrc"]\nresponse = "x"\nrules = ["p(15)"]\n'
                   'method = "none"\nencoding = "latin-1"\n[[table]]\nout = "job.csv"\n')
    res = invoke("run", job, "--quiet")
    assert res.exit_code == 0, res.output
    assert (tmp_path / "job.csv").read_bytes() == (out / "pub.csv").read_bytes()


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


@pytest.mark.parametrize("text,needles", [
    ("industry,region,status\nZZ,N1,A\n", ["unknown cell", "line 2"]),
    ("industry,region,status\nG47,N1,Q\n", ["A (sensitive by hand) or P", "line 2", "'Q'"]),
    ("industry,region,state\nG47,N1,A\n", ["'status' column"]),
])
def test_manual_file_errors_name_the_file(tmp_path, text, needles):
    require_stages("tabulate", "rules")
    manual = tmp_path / "manual.csv"
    manual.write_text(text)
    res, out = protect_csv(tmp_path, EX / "enterprises.csv", "--manual", manual)
    refused(res, out, "manual.csv", *needles)


def test_audit_pattern_errors_name_the_file(tmp_path):
    require_stages("tabulate", "rules", "audit")
    pub = tmp_path / "pattern.csv"
    pub.write_text("industry,region,turnover\nTotal,Total,\nZZ,N1,\n")
    res = invoke("audit", EX / "enterprises.csv", "--dim", DIMS[0], "--dim", DIMS[1], "--response", "turnover",
                 "--rule", "p(15)", "--pattern", pub, "--quiet")
    refused(res, None, "pattern.csv", "line 3", "ZZ")
    pub.write_text("industry,region,turnover\nTotal,Total,\n")
    res = invoke("audit", EX / "enterprises.csv", "--dim", DIMS[0], "--dim", DIMS[1], "--response", "turnover",
                 "--rule", "p(15)", "--pattern", pub, "--quiet")
    refused(res, None, "pattern.csv", "lacks")


# ----------------------------------------------------------------------- defect 7: wording
def test_method_none_quiet_warning_stands_on_its_own(tmp_path):
    require_stages("tabulate", "rules", "audit")
    res, out = protect_csv(tmp_path, EX / "enterprises.csv")
    assert res.exit_code == 1, res.output
    text = res.output.strip()
    assert text.startswith("warning: ") and len(text.splitlines()) == 1
    assert "above" not in text
    assert "NOT protected" in text and str(out / "pub.csv") in text and "--method" in text


def test_time_limit_error_says_what_leaving_it_out_does(tmp_path):
    """Without a time limit one is set from the table size; the error must not promise
    'no limit' (README: time limits)."""
    res, out = protect_csv(tmp_path, EX / "enterprises.csv", "--time-limit", "-5")
    line = refused(res, out, "time limit", "set from the table size")
    assert "no limit" not in line
