"""The command line: rules, inspect, protect (JJ input), errors as one paragraph, no partial files."""

from __future__ import annotations

import pandas as pd
import pytest
from iface_helpers import small_jj
from typer.testing import CliRunner

from tablesafe.cli.main import app
from tablesafe.cli.rules_cmd import explain
from tablesafe.rules.params import k_covering_p, p_covering_k
from tablesafe.rules.params import p_within_k2 as p_from_k2_natural

runner = CliRunner()


def invoke(*args):
    return runner.invoke(app, [str(a) for a in args])


def assert_one_paragraph_error(res, *needles):
    assert res.exit_code != 0
    text = res.stderr if hasattr(res, "stderr") else res.output
    assert "Traceback" not in res.output and "Traceback" not in text
    lines = [ln for ln in text.strip().splitlines() if ln.strip()]
    assert len(lines) == 1, text
    assert lines[0].startswith("error: ")
    for n in needles:
        assert n in lines[0], (n, lines[0])


def test_rules_explains_in_words():
    res = invoke("rules", "p(15)", "nk(2,80)", "freq(3, range=10)", "P(15,1)|FREQ(3,10)")
    assert res.exit_code == 0, res.output
    assert "p% rule" in res.output and "15%" in res.output
    assert "dominance rule" in res.output and "80%" in res.output
    assert "fewer than 3 units" in res.output and "10% of the value" in res.output


def test_rules_bad_string_is_one_paragraph():
    assert_one_paragraph_error(invoke("rules", "blah(1)"), "blah")
    assert_one_paragraph_error(invoke("rules", "p(x)"))


def test_rule_conversions_match_seed_003_table_1():
    """seed 003_fc219f942290b0f8.txt Table 1: p = 50, 33.3, 16.7, 11.1 % (q/p = 2, 3, 6, 9)
    give (1,k) thresholds 66.7, 75.0, 85.7, 90.0 % and (2,k) thresholds 80.0, 85.7, 92.3, 94.7 %."""
    table = [(50.0, 66.7, 80.0), (100 / 3, 75.0, 85.7), (100 / 6, 85.7, 92.3), (100 / 9, 90.0, 94.7)]
    for p, k1, k2 in table:
        for n, k in ((1, k1), (2, k2)):
            assert k_covering_p(p, n) == pytest.approx(k, abs=0.05)
            assert p_covering_k(k_covering_p(p, n), n) == pytest.approx(p)
    # technical notes: (2,85) -> p = 35.29; (1,75) -> p = 33.33; p = 35.29 -> (1, 73.91)
    assert p_covering_k(85, 2) == pytest.approx(35.29, abs=0.005)
    assert p_covering_k(75, 1) == pytest.approx(33.33, abs=0.005)
    assert k_covering_p(p_covering_k(85, 2), 1) == pytest.approx(73.91, abs=0.005)
    # seed 002_b3e6e013b0cc448d.txt: k = 100*100/(100+p)
    assert p_from_k2_natural(100 * 100 / 115) == pytest.approx(15)
    res = invoke("rules", "nk(2,85)", "--to", "p")
    assert res.exit_code == 0 and "p(35.29)" in res.output and "p(17.65)" in res.output
    res = invoke("rules", "pq(10,50)", "--to", "p")
    assert "p(20.00)" in res.output
    assert [w.kind for w in explain("P(15,1)|NK(2,80)|FREQ(3,10)")] == ["p", "nk", "freq"]


def test_inspect_summarises_data_and_hierarchies(tmp_path):
    from pathlib import Path

    ex = Path(__file__).resolve().parents[2] / "examples"
    res = invoke("inspect", ex / "enterprises.csv", "--dim", f"industry={ex / 'industry.csv'}", "--dim", f"region={ex / 'region.hrc'}")
    assert res.exit_code == 0, res.output
    assert "1,749 records" in res.output
    assert "dimension industry" in res.output and "depth 2" in res.output
    data = tmp_path / "d.csv"
    data.write_text("region,x\nN1,1\nQQ,2\n")
    res = invoke("inspect", data, "--dim", f"region={ex / 'region.hrc'}")
    assert res.exit_code == 0 and "unknown to the hierarchy" in res.output and "QQ" in res.output
    assert_one_paragraph_error(invoke("inspect", data, "--dim", "nosuch"), "nosuch")
    assert_one_paragraph_error(invoke("inspect", tmp_path / "missing.csv"), "not found")
    bad = tmp_path / "bad.hrc"
    bad.write_text("A\n@@@B\n")
    res = invoke("inspect", data, "--dim", f"region={bad}")
    assert_one_paragraph_error(res, "bad.hrc")


def test_protect_jj_method_none_writes_files(tmp_path, benchmarks_dir):
    out, cells, rep = tmp_path / "pub.csv", tmp_path / "cells.csv", tmp_path / "r.html"
    jj = small_jj(tmp_path / "in.jj")
    res = invoke("protect", "--jj", jj, "--method", "none",
                 "--out", out, "--cells", cells, "--report", rep, "--quiet")
    assert res.exit_code == 1, res.output  # method none: flagged unsafe, files still written
    assert res.output.startswith("warning: the publication written leaves sensitive cells")  # even with --quiet
    pub = pd.read_csv(out)
    assert list(pub.columns) == ["cell", "value"] and len(pub) == 28
    assert pub["value"].isna().sum() == 2
    an = pd.read_csv(cells)
    assert (an["status"] == "U").sum() == 2
    assert (an["verdict"].fillna("") != "").sum() == 2  # the audit ran: primaries alone are exposed
    assert rep.read_text().startswith("<!DOCTYPE html>")


def test_protect_errors_are_one_paragraph_and_write_nothing(tmp_path, benchmarks_dir):
    out = tmp_path / "pub.csv"
    assert_one_paragraph_error(invoke("protect", tmp_path / "nope.csv", "--dim", "a", "--response", "x", "--rule", "p(15)", "--out", out), "not found")
    assert_one_paragraph_error(invoke("protect", "--out", out), "DATA")
    broken = tmp_path / "broken.jj"
    broken.write_text("0\n2\n0 10 1 s 0 100 0 0 0\n1 abc 1 u 0 100 1 1 0\n1\n0 2 : 0 (-1) 1 (1)\n")
    assert_one_paragraph_error(invoke("protect", "--jj", broken, "--method", "none", "--out", out), "broken.jj", "line 4")
    assert_one_paragraph_error(
        invoke("protect", "--jj", small_jj(tmp_path / "ok.jj"), "--method", "none", "--out", out, "--cells", tmp_path / "c.pdf"),
        "unknown table file type",
    )
    assert not out.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["broken.jj", "ok.jj"]


def test_version():
    res = invoke("version")
    assert res.exit_code == 0 and res.output.strip()


def test_audit_of_a_jj_problem(tmp_path):
    """The audit command works on JJ input too (cells named by index): primaries alone are
    exposed (exit 1); withholding everything but the grand total protects them (exit 0)."""
    jj = small_jj(tmp_path / "s.jj")
    pub = tmp_path / "pub.csv"
    assert invoke("protect", "--jj", jj, "--method", "none", "--out", pub, "--quiet").exit_code == 1  # method none: primaries only, the publication is flagged unsafe
    res = invoke("audit", jj, "--pattern", pub)
    assert res.exit_code == 1 and "NOT protected" in res.output
    frame = pd.read_csv(pub, dtype=str, keep_default_na=False)
    frame.loc[1:, "value"] = ""
    frame.to_csv(pub, index=False)
    res = invoke("audit", jj, "--pattern", pub)
    assert res.exit_code == 0, res.output


def test_protect_castro_jj_with_offsets_and_write_jj(tmp_path, benchmarks_dir):
    """Castro's TARGUS (benchmarks/castro) has rounded values whose relations are off by a
    few units; --jj-offsets takes those offsets as right-hand sides, and the protected
    problem is written back as JJ with the complements marked m."""
    from iface_helpers import require_stages

    from tablesafe.io.jj import read_jj

    require_stages("suppress", "audit")
    out, back = tmp_path / "pub.csv", tmp_path / "prot.jj"
    res = invoke("protect", "--jj", benchmarks_dir / "castro/TARGUS.jj", "--method", "none", "--out", out, "--quiet")
    assert res.exit_code == 1  # method none: primaries only, so the written publication is flagged unsafe
    res = invoke("protect", "--jj", benchmarks_dir / "castro/TARGUS.jj", "--jj-offsets", "--method", "optimal",
                 "--out", out, "--write-jj", back, "--quiet")
    assert res.exit_code == 0, res.output
    p = read_jj(back)
    assert p.sensitive.sum() == 13 and (p.status == "M").sum() > 0
    pub = pd.read_csv(out)
    assert pub["value"].isna().sum() == 13 + (p.status == "M").sum()
