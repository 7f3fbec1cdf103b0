"""Every bad input gives a one-paragraph error, no traceback, and no output file."""

from __future__ import annotations

from pathlib import Path

from iface_helpers import require_stages, small_jj
from typer.testing import CliRunner

from tablesafe.cli.main import app

EX = Path(__file__).resolve().parents[2] / "examples"
runner = CliRunner()


def run_protect(tmp_path, data, *extra, dims=None):
    out = tmp_path / "out"
    args = ["protect", str(data)]
    for d in dims or [f"industry={EX / 'industry.csv'}", f"region={EX / 'region.hrc'}"]:
        args += ["--dim", d]
    args += ["--response", "turnover", "--rule", "p(15)", "--method", "none",
             "--out", str(out / "pub.csv"), "--cells", str(out / "cells.csv"), "--report", str(out / "r.html"), *extra]
    res = runner.invoke(app, args)
    return res, out


def check(res, out, *needles):
    assert res.exit_code not in (0, 3), res.output  # a clear error, not an internal one
    text = res.output
    assert "Traceback" not in text
    lines = [ln for ln in text.splitlines() if ln.startswith("error: ")]
    assert len(lines) == 1, text
    for n in needles:
        assert n.lower() in lines[0].lower(), (n, lines[0])
    assert not out.exists() or not any(out.iterdir())


def data_with(tmp_path, edit):
    text = (EX / "enterprises.csv").read_text().splitlines()
    text = edit(text)
    p = tmp_path / "data.csv"
    p.write_text("\n".join(text) + "\n")
    return p


def test_unknown_code(tmp_path):
    require_stages("tabulate")
    p = data_with(tmp_path, lambda t: t[:5] + [t[5].replace(",G47,", ",ZZ9,")] + t[6:] if ",G47," in t[5] else
                  t[:1] + ["G9999,E9,ZZ9,N1,5.0,1,1.0,0"] + t[1:])
    res, out = run_protect(tmp_path, p)
    check(res, out, "ZZ9")


def test_missing_and_non_numeric_response(tmp_path):
    require_stages("tabulate")
    p = data_with(tmp_path, lambda t: t[:1] + ["G9999,E9,G47,N1,,1,1.0,0"] + t[1:])
    res, out = run_protect(tmp_path, p)
    check(res, out, "turnover")
    p = data_with(tmp_path, lambda t: t[:1] + ["G9999,E9,G47,N1,abc,1,1.0,0"] + t[1:])
    res, out = run_protect(tmp_path, p)
    check(res, out, "turnover")


def test_unknown_column(tmp_path):
    require_stages("tabulate")
    res, out = run_protect(tmp_path, EX / "enterprises.csv", dims=["sector"])
    check(res, out, "sector")


def test_negative_contributions_refused_by_p_rule(tmp_path):
    require_stages("tabulate", "rules")
    p = data_with(tmp_path, lambda t: t[:1] + ["G9999,E9,G47,N1,-50.0,1,1.0,0"] + t[1:])
    res, out = run_protect(tmp_path, p)
    check(res, out, "negative")


def test_broken_hierarchy_file(tmp_path):
    require_stages("tabulate")
    bad = tmp_path / "region.hrc"
    bad.write_text("North\n@N1\n@@@@N2\n")
    res, out = run_protect(tmp_path, EX / "enterprises.csv", dims=[f"industry={EX / 'industry.csv'}", f"region={bad}"])
    check(res, out, "region.hrc")
    cyc = tmp_path / "industry.csv"
    cyc.write_text("code,parent\nA,B\nB,A\n")
    res, out = run_protect(tmp_path, EX / "enterprises.csv", dims=[f"industry={cyc}", f"region={EX / 'region.hrc'}"])
    check(res, out, "industry.csv")


def test_bad_rule(tmp_path):
    require_stages("tabulate", "rules")
    res, out = run_protect(tmp_path, EX / "enterprises.csv", "--rule", "nk(3)")
    check(res, out)


def test_empty_data(tmp_path):
    require_stages("tabulate")
    p = tmp_path / "empty.csv"
    p.write_text("group,enterprise,industry,region,turnover\n")
    res, out = run_protect(tmp_path, p)
    check(res, out, "empty")




def test_infeasible_and_time_limit(tmp_path):
    """A sensitive cell whose protection cannot be reached (its level exceeds what its
    only relation allows), and a zero time limit."""
    require_stages("suppress")
    jj = tmp_path / "inf.jj"
    # total 10 = a 5 + b 5; a is sensitive with upl 100 but b's a priori upper bound is 6
    jj.write_text("0\n3\n0 10 10 z 10 10 0 0 0\n1 5 5 u 0 100 100 100 0\n2 5 5 s 0 6 0 0 0\n1\n0 3 : 0 (-1) 1 (1) 2 (1)\n")
    out = tmp_path / "out"
    res = runner.invoke(app, ["protect", "--jj", str(jj), "--method", "optimal", "--out", str(out / "p.csv")])
    check(res, out)
    res = runner.invoke(app, ["protect", "--jj", small_jj(tmp_path / "s.jj"), "--method", "optimal",
                              "--time-limit", "0", "--out", str(out / "p.csv")])
    assert res.exit_code in (0, 2), res.output
    if res.exit_code:
        check(res, out)


def test_non_additive_tabular_input(tmp_path, benchmarks_dir):
    """ex1's table with one total changed: READTABLE without recomputing must refuse it."""
    require_stages("from_tabular", "rules")
    import shutil

    work = tmp_path / "job"
    shutil.copytree(benchmarks_dir / "tauargus/batch/ex1", work)
    tab = work / "tabdata_ex1.tab"
    tab.write_text(tab.read_text().replace("Total, Total,5146", "Total, Total,5147"))
    (work / "batch_ex1.arb").write_text(
        (work / "batch_ex1.arb").read_text().replace("<SUPPRESS> OPT(1,1)\n", "")
    )
    out = tmp_path / "out"
    out.mkdir()
    res = runner.invoke(app, ["arb", str(work / "batch_ex1.arb"), "--outdir", str(out)])
    check(res, out)


def test_missing_code_and_negative_options_on_the_command_line(tmp_path):
    """The options that the error messages name exist on the command line and work."""
    from typer.testing import CliRunner

    from tablesafe.cli.main import app

    runner = CliRunner()
    hrc = tmp_path / "r.hrc"
    hrc.write_text("A\nB\n")
    data = tmp_path / "d.csv"
    data.write_text("region,x\nA,10\nB,5\nZZ,7\nB,4\nA,3\n")
    base = ["protect", str(data), "--dim", f"region={hrc}", "--response", "x", "--rule", "p(15)",
            "--method", "none", "--quiet"]
    bad = runner.invoke(app, base)
    assert bad.exit_code == 2 and "--missing-code" in bad.output
    cells = tmp_path / "c.csv"
    ok = runner.invoke(app, [*base, "--missing-code", "A", "--cells", str(cells)])
    assert ok.exit_code == 0, ok.output
    assert "ZZ" not in cells.read_text()
    negdata = tmp_path / "n.csv"
    negdata.write_text("region,x\nA,10\nB,5\nA,-2\nB,4\nA,3\n")
    neg = runner.invoke(app, ["protect", str(negdata), *base[2:]])
    assert neg.exit_code == 2 and "--negative abs" in neg.output
