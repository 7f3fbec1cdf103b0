"""The README's promise: the bundled example protected from Python, from the command line
and from a job file gives the same publication, byte for byte."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from iface_helpers import require_stages
from typer.testing import CliRunner

import tablesafe
from tablesafe.cli.main import app

EX = Path(__file__).resolve().parents[2] / "examples"


@pytest.mark.parametrize("method", ["none", "modular"])
def test_api_cli_and_job_file_give_identical_publications(method, tmp_path):
    require_stages("tabulate", "rules", "audit")
    if method != "none":
        require_stages("suppress")
    # 1. Python
    result = tablesafe.protect(
        EX / "enterprises.csv",
        dims={"industry": EX / "industry.csv", "region": EX / "region.hrc"},
        response="turnover",
        rules=["p(15)", "freq(3)"],
        holding="group",
        method=method,
    )
    result.write(out=tmp_path / "api.csv", cells=tmp_path / "api_cells.csv")
    # 2. command line
    res = CliRunner().invoke(app, [
        "protect", str(EX / "enterprises.csv"), "--dim", f"industry={EX / 'industry.csv'}",
        "--dim", f"region={EX / 'region.hrc'}", "--response", "turnover", "--holding", "group",
        "--rule", "p(15)", "--rule", "freq(3)", "--method", method, "--out", str(tmp_path / "cli.csv"), "--quiet",
    ])
    assert res.exit_code == (1 if method == "none" else 0), res.output
    # 3. job file, paths relative to it
    (tmp_path / "job").mkdir()
    for f in ("enterprises.csv", "industry.csv", "region.hrc"):
        (tmp_path / "job" / f).write_bytes((EX / f).read_bytes())
    (tmp_path / "job" / "job.toml").write_text(
        'data = "enterprises.csv"\nholding = "group"\nrules = ["p(15)", "freq(3)"]\n'
        f'method = "{method}"\n[[table]]\nname = "demo"\n'
        'dims = ["industry=industry.csv", "region=region.hrc"]\nresponse = "turnover"\n'
        'out = "out/job.csv"\n'
    )
    res = CliRunner().invoke(app, ["run", str(tmp_path / "job" / "job.toml"), "--quiet"])
    assert res.exit_code == 0, res.output
    api = (tmp_path / "api.csv").read_bytes()
    assert api == (tmp_path / "cli.csv").read_bytes()
    assert api == (tmp_path / "job" / "out" / "job.csv").read_bytes()
    # the publication shows one marker for primaries and complements, and every cell
    pub = pd.read_csv(tmp_path / "api.csv", dtype={"industry": str, "region": str})
    cells = pd.read_csv(tmp_path / "api_cells.csv", dtype={"industry": str, "region": str})
    assert len(pub) == len(cells) == 18 * 15
    withheld = cells["status"].isin(["U", "A", "M"])
    assert pub["turnover"].isna().tolist() == withheld.tolist()
    assert list(pub.columns) == ["industry", "region", "turnover"]
    if method != "none":
        assert result.ok and (cells.loc[cells["status"].isin(["U", "A"]), "verdict"] == "protected").all()


def test_audit_command_checks_a_publication(tmp_path):
    require_stages("tabulate", "rules", "audit")
    common = [
        str(EX / "enterprises.csv"), "--dim", f"industry={EX / 'industry.csv'}", "--dim", f"region={EX / 'region.hrc'}",
        "--response", "turnover", "--holding", "group", "--rule", "p(15)", "--rule", "freq(3)",
    ]
    runner = CliRunner()
    res = runner.invoke(app, ["protect", *common, "--method", "none", "--out", str(tmp_path / "pub.csv"), "--quiet"])
    assert res.exit_code == 1, res.output  # primaries only: flagged unsafe
    # primaries alone are recalculable: the audit must say so and exit 1
    res = runner.invoke(app, ["audit", *common, "--pattern", str(tmp_path / "pub.csv"), "--cells", str(tmp_path / "a.csv")])
    assert res.exit_code == 1, res.output
    assert "NOT protected" in res.output
    a = pd.read_csv(tmp_path / "a.csv")
    assert (a["verdict"].fillna("") == "exact").any()
    # withholding everything but the grand total protects every cell
    pub = pd.read_csv(tmp_path / "pub.csv", dtype=str, keep_default_na=False)
    pub.loc[1:, "turnover"] = ""
    pub.to_csv(tmp_path / "all.csv", index=False)
    res = runner.invoke(app, ["audit", *common, "--pattern", str(tmp_path / "all.csv")])
    assert res.exit_code == 0, res.output
    # a publication made from other data is refused with one paragraph
    pub = pd.read_csv(tmp_path / "pub.csv", dtype=str, keep_default_na=False)
    pub.loc[0, "turnover"] = "1"
    pub.to_csv(tmp_path / "other.csv", index=False)
    res = runner.invoke(app, ["audit", *common, "--pattern", str(tmp_path / "other.csv")])
    assert res.exit_code == 2 and "other data" in res.output


def test_pandas_polars_and_pyarrow_inputs_give_the_same_publication():
    require_stages("tabulate", "rules")
    import polars as pl
    import pyarrow as pa

    frame = pd.read_csv(EX / "enterprises.csv", dtype={"industry": str, "region": str})
    kw = {
        "dims": {"industry": EX / "industry.csv", "region": EX / "region.hrc"},
        "response": "turnover", "rules": ["p(15)", "freq(3)"], "holding": "group", "method": "none",
    }
    base = tablesafe.protect(frame, **kw).publication
    for data in (pl.from_pandas(frame), pa.Table.from_pandas(frame)):
        other = tablesafe.protect(data, **kw).publication
        pd.testing.assert_frame_equal(base, other)


def test_tau_argus_microdata_from_the_command_line(tmp_path, benchmarks_dir):
    """Simple2D (benchmarks/tauargus): Size x Region of Var2, p% rule p=15: 162 cells and
    exactly 9 primaries in tau-ARGUS's output; --method none writes them to the analyst file."""
    require_stages("tabulate", "rules")
    b = benchmarks_dir / "tauargus"
    res = CliRunner().invoke(app, [
        "protect", str(b / "tau_testW.asc"), "--metadata", str(b / "Tau_TestW.rda"), "--dim", "Size",
        "--dim", f"Region={b / 'region2.hrc'}", "--response", "Var2", "--rule", "P(15,1)", "--method", "none",
        "--cells", str(tmp_path / "cells.csv"), "--out", str(tmp_path / "pub.xlsx"), "--quiet",
    ])
    assert res.exit_code == 1, res.output  # primaries only: flagged unsafe
    cells = pd.read_csv(tmp_path / "cells.csv", dtype={"Size": str, "Region": str})
    assert len(cells) == 162 and (cells["status"] == "U").sum() == 9
    # issue 3: Size 9 x Region 4 has upper protection level 0.15 x1 - (X - x1 - x2) = 1288.15
    row = cells[(cells["Size"].str.strip() == "9") & (cells["Region"].str.strip() == "4")].iloc[0]
    assert row["upl"] == 1288.15 and row["status"] == "U"
    pub = pd.read_excel(tmp_path / "pub.xlsx", dtype={"Size": str, "Region": str})
    assert pub["Var2"].isna().sum() == 9
    res = CliRunner().invoke(app, ["inspect", str(b / "tau_testW.asc"), "--metadata", str(b / "Tau_TestW.rda"),
                                   "--dim", f"Region={b / 'region2.hrc'}"])
    assert res.exit_code == 0 and "42,723 records" in res.output
    res = CliRunner().invoke(app, ["inspect", str(b / "tau_testW.asc"), "--metadata", str(b / "Tau_TestW.rda"),
                                   "--dim", "IndustryCode"])
    assert res.exit_code == 0 and "digits:3,1,1" in res.output and "depth 3" in res.output


COMMON = [
    "--dim", f"industry={EX / 'industry.csv'}", "--dim", f"region={EX / 'region.hrc'}",
    "--response", "turnover", "--holding", "group", "--rule", "p(15)", "--rule", "freq(3)",
]


def test_certificates_written_and_checked_by_the_audit_command(tmp_path):
    require_stages("tabulate", "rules", "audit", "suppress")
    runner = CliRunner()
    res = runner.invoke(app, ["protect", str(EX / "enterprises.csv"), *COMMON, "--method", "modular",
                              "--out", str(tmp_path / "pub.csv"), "--certificates", str(tmp_path / "c.parquet"), "--quiet"])
    assert res.exit_code == 0, res.output
    certs = pd.read_parquet(tmp_path / "c.parquet")
    assert list(certs.columns)[:4] == ["target", "direction", "cell", "value"]
    assert set(certs["direction"]) <= {"up", "down"}
    assert certs["target"].str.contains("|", regex=False).all()  # codes joined with |
    res = runner.invoke(app, ["audit", str(EX / "enterprises.csv"), *COMMON, "--pattern", str(tmp_path / "pub.csv"),
                              "--certificates", str(tmp_path / "c.parquet"), "--cells", str(tmp_path / "a.csv")])
    assert res.exit_code == 0, res.output
    assert "every sensitive cell protected" in res.output


def test_job_file_with_two_tables_and_all_or_nothing(tmp_path):
    require_stages("tabulate", "rules", "audit", "suppress")
    job = tmp_path / "job.toml"
    job.write_text(
        f'data = "{EX / "enterprises.csv"}"\nholding = "group"\nrules = ["p(15)", "freq(3)"]\nmethod = "modular"\n'
        '[[table]]\nname = "turnover"\n'
        f'dims = ["industry={EX / "industry.csv"}", "region={EX / "region.hrc"}"]\nresponse = "turnover"\n'
        'out = "out/turnover.csv"\ncertificates = "out/turnover_certificates.parquet"\n'
        'write_apriori = "out/turnover.hst"\n'
        '[[table]]\nname = "employees"\n'
        f'dims = ["region={EX / "region.hrc"}"]\nresponse = "employees"\nout = "out/employees.parquet"\n'
        'report = "out/employees.html"\n'
    )
    res = CliRunner().invoke(app, ["run", str(job)])
    assert res.exit_code == 0, res.output
    assert (tmp_path / "out/turnover.csv").exists() and (tmp_path / "out/employees.html").exists()
    assert len(pd.read_parquet(tmp_path / "out/turnover_certificates.parquet")) > 0
    # the a priori file marks exactly the cells the publication withholds
    pub = pd.read_csv(tmp_path / "out/turnover.csv")
    assert (tmp_path / "out/turnover.hst").read_text().count(";u\n") == int(pub["turnover"].isna().sum()) > 0
    emp = pd.read_parquet(tmp_path / "out/employees.parquet")
    assert list(emp.columns) == ["region", "employees"] and len(emp) == 15
    # a failing second table: nothing of the job is written
    job.write_text(job.read_text().replace('response = "employees"', 'response = "nosuch"').replace("out/", "out2/"))
    res = CliRunner().invoke(app, ["run", str(job)])
    assert res.exit_code == 2 and "nosuch" in res.output
    assert not (tmp_path / "out2").exists() or not any((tmp_path / "out2").iterdir())


def test_apriori_file_from_the_command_line(tmp_path):
    require_stages("tabulate", "rules", "audit", "suppress")
    hst = tmp_path / "a.hst"
    hst.write_text('"A01";"N1";u\n"C10";"";p\n')
    res = CliRunner().invoke(app, ["protect", str(EX / "enterprises.csv"), *COMMON, "--apriori", str(hst),
                                   "--manual-range", "20", "--cells", str(tmp_path / "c.csv"), "--quiet"])
    assert res.exit_code == 0, res.output
    cells = pd.read_csv(tmp_path / "c.csv", dtype={"industry": str, "region": str})
    a = cells[(cells["industry"] == "A01") & (cells["region"] == "N1")].iloc[0]
    assert a["status"] == "A" and a["verdict"] == "protected"
    p = cells[(cells["industry"] == "C10") & (cells["region"] == "Total")].iloc[0]
    assert p["status"] == "P"


def test_tabular_input_from_the_command_line(tmp_path):
    """Cells given directly (codes, value, contributors): totals are summed from the
    leaves, and the frequency rule flags the same cells as on the microdata."""
    require_stages("tabulate", "rules")
    runner = CliRunner()
    dims = ["--dim", f"industry={EX / 'industry.csv'}", "--dim", f"region={EX / 'region.hrc'}"]
    res = runner.invoke(app, ["protect", str(EX / "enterprises.csv"), *dims, "--response", "turnover",
                              "--rule", "freq(3)", "--method", "none", "--cells", str(tmp_path / "micro.csv"), "--quiet"])
    assert res.exit_code == 0, res.output
    micro = pd.read_csv(tmp_path / "micro.csv", dtype={"industry": str, "region": str})
    leaves = micro[(micro["industry"].str.len() == 3) & (micro["region"].str.len() == 2)]
    leaves[["industry", "region", "value", "contributors"]].rename(columns={"value": "turnover"}).to_csv(
        tmp_path / "cells_in.csv", index=False)
    res = runner.invoke(app, ["protect", str(tmp_path / "cells_in.csv"), "--tabular", *dims, "--response", "turnover",
                              "--frequency", "contributors", "--rule", "freq(3)", "--method", "none",
                              "--cells", str(tmp_path / "tab.csv"), "--quiet"])
    assert res.exit_code == 0, res.output
    tab = pd.read_csv(tmp_path / "tab.csv", dtype={"industry": str, "region": str})
    merged = micro.merge(tab, on=["industry", "region"], suffixes=("_m", "_t"))
    assert len(merged) == len(micro)
    assert (merged["value_m"] - merged["value_t"]).abs().max() < 1e-6
    assert (merged["status_m"] == merged["status_t"]).all()


def test_simple2d_protected_from_the_command_line(tmp_path, benchmarks_dir):
    """Simple2D with Modular: tau-ARGUS 4.1.5 withholds 9 primaries and 12 secondaries
    (benchmarks/tauargus/Simple2D.txt); ours must withhold the same primaries, protect
    every one against the default attacker, and the report says how much was withheld."""
    require_stages("tabulate", "rules", "audit", "suppress")
    b = benchmarks_dir / "tauargus"
    res = CliRunner().invoke(app, [
        "protect", str(b / "tau_testW.asc"), "--metadata", str(b / "Tau_TestW.rda"), "--dim", "Size",
        "--dim", f"Region={b / 'region2.hrc'}", "--response", "Var2", "--rule", "P(15,1)", "--method", "modular",
        "--cells", str(tmp_path / "cells.csv"), "--out", str(tmp_path / "pub.csv"), "--quiet",
    ])
    assert res.exit_code == 0, res.output
    cells = pd.read_csv(tmp_path / "cells.csv", dtype={"Size": str, "Region": str})
    theirs = pd.read_csv(b / "Simple2D.txt", header=None, names=["Size", "Region", "Var2", "status"], dtype={"Size": str, "Region": str})
    theirs["Size"], theirs["Region"] = theirs["Size"].str.strip(), theirs["Region"].str.strip()
    cells["Size"], cells["Region"] = cells["Size"].str.strip(), cells["Region"].str.strip()
    m = cells.merge(theirs, on=["Size", "Region"])
    assert len(m) == 162
    assert ((m["status_x"] == "U") == (m["status_y"] == 3)).all()
    sens = m["status_x"] == "U"
    assert (m.loc[sens, "verdict"] == "protected").all()
    ours_secondary = (m["status_x"] == "M").sum()
    assert ours_secondary > 0
    print(f"Simple2D: secondaries tablesafe {ours_secondary} vs tau-ARGUS {(m['status_y'] == 11).sum()}; "
          f"withheld value {m.loc[m['status_x'].isin(['U', 'M']), 'value'].sum():,.2f} vs "
          f"{m.loc[m['status_y'].isin([3, 11]), 'value'].sum():,.2f}")


def test_example_enterprise_with_apriori_file_matches_tau_argus(tmp_path, benchmarks_dir):
    """tau-ARGUS GUI scenario 3 (benchmarks/tauargus/example_enterprise/GUItests.Rmd):
    region x product of turnover, p% rule p=10 on holdings, zero cells unsafe (range 10),
    the a priori file test_3a.hst (marginal cells protected), Modular. tau-ARGUS's output
    test_3b.txt has 17 primaries, 15 protected, 13 empty and 8 secondary cells; ours must
    have the same primaries, protected and empty cells and protect every primary."""
    require_stages("tabulate", "rules", "audit", "suppress")
    e = benchmarks_dir / "tauargus/example_enterprise"
    res = CliRunner().invoke(app, [
        "protect", str(e / "example_enterprise.asc"), "--metadata", str(e / "example_enterprise.rda"),
        "--dim", "region", "--dim", "product", "--response", "turnover", "--holding", "h_id",
        "--rule", "p(10)", "--rule", "zero(10)", "--apriori", str(e / "test_3a.hst"), "--method", "modular",
        "--cells", str(tmp_path / "cells.csv"), "--quiet",
    ])
    assert res.exit_code == 0, res.output
    ours = pd.read_csv(tmp_path / "cells.csv", dtype={"region": str, "product": str})
    theirs = pd.read_csv(e / "test_3b.txt", header=None, names=["region", "product", "v", "st"],
                         dtype={"region": str, "product": str})
    m = ours.merge(theirs, on=["region", "product"])
    assert len(m) == len(ours) == len(theirs) == 225
    for letter, code in (("U", 3), ("P", 10), ("Z", 14)):
        assert ((m["status"] == letter) == (m["st"] == code)).all(), letter
    assert (m.loc[m["status"] == "U", "verdict"] == "protected").all()
    sec_ours = m.loc[m["status"] == "M", "value"].abs().sum()
    sec_theirs = m.loc[m["st"] == 11, "value"].abs().sum()
    print(f"example_enterprise scenario 3: secondaries {(m['status'] == 'M').sum()} vs {(m['st'] == 11).sum()}, "
          f"withheld secondary value {sec_ours:,.2f} vs {sec_theirs:,.2f}")
