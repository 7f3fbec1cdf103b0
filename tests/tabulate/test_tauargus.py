"""tau-ARGUS formats and the reference output Simple2D.txt of tau-ARGUS 4.1.5."""

from __future__ import annotations

import csv

import numpy as np
import pandas as pd
import pytest

from tablesafe.errors import NonAdditiveError
from tablesafe.io.tauargus import read_asc, read_rda, read_tab
from tablesafe.tabulate import DimSpec, from_tabular, tabulate


@pytest.fixture(scope="module")
def tau(benchmarks_dir):
    return benchmarks_dir / "tauargus"


@pytest.fixture(scope="module")
def simple2d(tau):
    micro = read_asc(tau / "tau_testW.asc", tau / "Tau_TestW.rda")
    return tabulate(micro, ["Size", DimSpec("Region", str(tau / "region2.hrc"))], "Var2")


def test_simple2d_values_in_order(tau, simple2d):
    """Var2 by Size x Region (region2.hrc) equals tau-ARGUS's 162 cells, in its order;
    '-' there marks empty cells. Missing code 99 is listed for both dimensions."""
    with open(tau / "Simple2D.txt", newline="") as fh:
        rows = list(csv.reader(fh))
    assert len(rows) == 162 == simple2d.n
    frame = simple2d.to_frame()
    assert list(frame["Size"]) == [r[0].strip() for r in rows]
    assert list(frame["Region"]) == [r[1].strip() for r in rows]
    for (size, region, val, _), got, recs in zip(rows, simple2d.value, simple2d.records):
        if val == "-":
            assert recs == 0 and got == 0, (size, region)
        else:
            assert recs > 0 and round(got, 2) == float(val), (size, region, got, val)
    assert simple2d.empty.sum() == 43
    assert np.allclose(simple2d.model.relations @ simple2d.value, 0, atol=1e-6)


def test_simple2d_counts_match_plain_pandas(tau, simple2d):
    """Records and top contributions of the bottom-level cells, checked against pandas
    reading the fixed-width file independently."""
    df = pd.read_fwf(tau / "tau_testW.asc", colspecs=[(8, 10), (11, 13), (27, 37)], header=None,
                     names=["Size", "Region", "Var2"], dtype={"Size": str, "Region": str})
    df["Size"] = df["Size"].str.strip()
    df["Region"] = df["Region"].str.strip()
    frame = simple2d.to_frame()
    for (s, r), g in df.groupby(["Size", "Region"]):
        row = frame[(frame.Size == s) & (frame.Region == r)].iloc[0]
        assert row.records == len(g)
        top = sorted(g.Var2, reverse=True)[:4]
        assert np.allclose([row[f"top{j + 1}"] for j in range(len(top))], top)


def test_rda_roles(tau):
    md = read_rda(tau / "Tau_TestW.rda")
    assert md["Var2"].start == 28 and md["Var2"].length == 10
    assert md["Region"].missing == ("99",)
    assert md.hierarchy("IndustryCode") == "digits:3,1,1,0,0"
    assert md.with_role("WEIGHT") == ["Wgt"]
    assert md["Request"].props["REQUEST"] == ["1", "2"]


def test_weights_and_request_from_asc(tau):
    """Weighted tabulation of the asc with its request variable (codes "1"/"2")."""
    micro = read_asc(tau / "tau_testW.asc", tau / "Tau_TestW.rda")
    cells = tabulate(micro, ["Size"], "Var2", weight="Wgt", request="Request")
    df = pd.read_fwf(tau / "tau_testW.asc", colspecs=[(14, 18), (27, 37), (98, 99)], header=None,
                     names=["w", "x", "req"])
    assert np.isclose(cells.value[0], (df.w * df.x).sum())
    assert np.isclose(cells.weight_sum[0], df.w.sum())
    assert np.isclose(cells.unweighted_value[0], df.x.sum())
    assert cells.top_request.any() == df.req.isin([1, 2]).any()


def test_industry_digits_hierarchy_from_rda(tau):
    """IndustryCode declares hierarchy digits 3 1 1: levels of 3, 4 and 5 characters."""
    micro = read_asc(tau / "tau_testW.asc", tau / "Tau_TestW.rda")
    cells = tabulate(micro, ["IndustryCode"], "Var1")
    codes = list(cells.model.codes["IndustryCode"])
    assert codes[0] == "Total"
    assert {len(c) for c in codes[1:]} <= {3, 4, 5}
    assert "99999" in codes  # declared missing code
    assert np.allclose(cells.model.relations @ cells.value, 0)


def test_free_format_asc(benchmarks_dir):
    """batch/ex2: comma-separated microdata described by an .rda with <SEPARATOR>."""
    ex2 = benchmarks_dir / "tauargus" / "batch" / "ex2"
    cells = tabulate(read_asc(ex2 / "microdata_ex2.asc", ex2 / "metadata_ex2.rda"), ["region", "gender"],
                     "num1", weight="weight")
    raw = pd.read_csv(ex2 / "microdata_ex2.asc", header=None, names=["region", "gender", "weight", "val",
                                                                      "num1", "num2"])
    assert cells.records[0] == len(raw)
    assert np.isclose(cells.value[0], (raw.num1 * raw.weight).sum())
    frame = cells.to_frame()
    female_a = frame[(frame.region == "A") & (frame.gender == "female")].iloc[0]
    sub = raw[(raw.region.str.strip() == "A") & (raw.gender.str.strip() == "female")]
    assert female_a.records == len(sub)


def test_tab_non_additive_names_relation(tau):
    """pp.tab is the Simple2D table as tabular input; its totals are off by rounding
    (Total x Os = 3,703,896 but its parts sum to 3,703,895)."""
    tab = read_tab(tau / "tableinput" / "pp.tab", tau / "tableinput" / "pp.rda")
    with pytest.raises(NonAdditiveError) as err:
        from_tabular(tab)
    msg = str(err.value)
    assert "'Total|Os'" in msg and "'5|Os'" in msg and "difference 1" in msg and "pp.tab" in msg


def test_tab_recompute_totals(tau, simple2d):
    tab = read_tab(tau / "tableinput" / "pp.tab", tau / "tableinput" / "pp.rda")
    cells = from_tabular(tab, recompute_totals=True)
    assert cells.n == 162
    assert list(cells.model.codes["Region"]) == list(simple2d.model.codes["Region"])
    assert np.allclose(cells.model.relations @ cells.value, 0, atol=1e-6)
    assert set(cells.extra) >= {"status", "lpl", "upl", "cost", "frequency"}
    frame = cells.to_frame()
    row = frame[(frame.Size == "2") & (frame.Region == "Nr")].iloc[0]
    assert row.status == "U" and row.upl == 0.75 and row.top1 == 5.0
    empty = frame[(frame.Size == "Total") & (frame.Region == "99")].iloc[0]
    assert empty.status == "Z" and empty.records == 0  # tau-ARGUS "E" (empty) -> Z
    # bottom-level frequencies equal the microdata record counts
    leaf = (cells.model.codes["Size"] != "Total") & ~cells.model.codes["Region"].isin(["Total", "Nr", "Os", "Ws", "Zd"])
    assert (cells.records[leaf.to_numpy()] == simple2d.records[leaf.to_numpy()]).mean() > 0.9


def test_tab_ex1_statuses(benchmarks_dir):
    """batch/ex1: tabular input with declared status codes (S safe, U unsafe, Z protect)."""
    ex1 = benchmarks_dir / "tauargus" / "batch" / "ex1"
    cells = from_tabular(read_tab(ex1 / "tabdata_ex1.tab", ex1 / "metadata_ex1.rda"))
    frame = cells.to_frame()
    assert cells.response == "freq"
    assert cells.value[0] == 5146
    assert list(frame.status).count("U") == 1
    assert frame[(frame.region == "A") & (frame.gender == "female")].iloc[0].status == "U"


def test_example_enterprise_scenario2_values(benchmarks_dir):
    """example_enterprise, scenario 2 of GUItests.Rmd (act x product, turnover, holdings):
    the 1,665 cells of tau-ARGUS's test_1.txt, in order. The .rda names its hierarchy
    files by foreign absolute paths; they are found beside the .rda by file name."""
    b = benchmarks_dir / "tauargus" / "example_enterprise"
    cells = tabulate(read_asc(b / "example_enterprise.asc", b / "example_enterprise.rda"), ["act", "product"],
                     "turnover", holding="h_id")
    with open(b / "test_1.txt", newline="") as fh:
        rows = list(csv.reader(fh))
    assert len(rows) == cells.n
    codes = cells.model.codes
    assert list(codes["act"]) == [r[0].strip() for r in rows]
    assert list(codes["product"]) == [r[1].strip() for r in rows]
    for r, v, n in zip(rows, cells.value, cells.records):
        assert (n == 0) if r[2] == "-" else round(v, 2) == float(r[2])
    assert (cells.contributors <= cells.records).all() and cells.contributors[0] < cells.records[0]
