"""Every input kind and every hierarchy format gives the same, correct table."""

from __future__ import annotations

import numpy as np
import pandas as pd
import polars as pl
import pyarrow as pa
import pytest

from tablesafe.structure import Hierarchy
from tablesafe.tabulate import DimSpec, tabulate, unit_contributions

DATA = pd.DataFrame({
    "region": [" 1", "2 ", "11", "2", "11", "1"],
    "nace": ["0111", "0112", "0121", "0111", "2011", "2011"],
    "firm": ["a", "b", "c", "b", "c", "d"],
    "turnover": [10.0, 20.0, 5.0, 7.0, 3.0, 1.5],
})


def _expected_region_totals():
    d = DATA.assign(region=DATA.region.str.strip())
    return d.groupby("region").turnover.sum().to_dict()


@pytest.mark.parametrize("kind", ["pandas", "polars", "arrow", "csv", "parquet"])
def test_every_source_gives_the_same_table(kind, tmp_path):
    if kind == "pandas":
        data = DATA
    elif kind == "polars":
        data = pl.from_pandas(DATA)
    elif kind == "arrow":
        data = pa.Table.from_pandas(DATA)
    elif kind == "csv":
        data = tmp_path / "d.csv"
        DATA.to_csv(data, index=False)
    else:
        data = tmp_path / "d.parquet"
        DATA.to_parquet(data)
    cells = tabulate(data, ["region", DimSpec("nace", "lengths:2,4")], "turnover", holding="firm")
    frame = cells.to_frame()
    # flat region: blanks stripped, natural order (1, 2, 11), total first
    assert list(cells.model.dims[0].hierarchy.codes) == ["Total", "1", "2", "11"]
    totals = frame[frame.nace == "Total"].set_index("region").value.to_dict()
    assert totals.pop("Total") == pytest.approx(DATA.turnover.sum())
    assert totals == pytest.approx(_expected_region_totals())
    # codes from CSV keep their leading zeros
    assert "0111" in set(frame.nace) and "01" in set(frame.nace)
    # holding b has two records in region 2 / nace 01: one contributor of 27
    row = frame[(frame.region == "2") & (frame.nace == "01")].iloc[0]
    assert row.contributors == 1 and row.records == 2 and row.top1 == 27.0
    assert np.allclose(cells.model.relations @ cells.value, 0)


def _hier_files(tmp_path):
    hrc = tmp_path / "nace.hrc"
    hrc.write_text("A\n@01\n@@0111\n@@0112\n@@0121\nC\n@20\n@@2011\n")
    pc = tmp_path / "nace.csv"
    pc.write_text("code,parent\nA,\n01,A\n0111,01\n0112,01\n0121,01\nC,\n20,C\n2011,20\n")
    return hrc, pc


def test_hierarchy_formats_agree(tmp_path):
    hrc, pc = _hier_files(tmp_path)
    results = {}
    for name, spec in {"hrc": str(hrc), "csv": str(pc), "object": Hierarchy.from_hrc(hrc)}.items():
        cells = tabulate(DATA, [DimSpec("nace", spec)], "turnover")
        results[name] = cells.to_frame().set_index("nace").value
    assert list(results["hrc"].index) == ["Total", "A", "01", "0111", "0112", "0121", "C", "20", "2011"]
    for r in results.values():
        pd.testing.assert_series_equal(r, results["hrc"])
    assert results["hrc"]["A"] == pytest.approx(42.0) and results["hrc"]["C"] == pytest.approx(4.5)


def test_lengths_and_digits_agree():
    a = tabulate(DATA, [DimSpec("nace", "lengths:2,3,4")], "turnover").to_frame()
    b = tabulate(DATA, [DimSpec("nace", "digits:2,1,1,0")], "turnover").to_frame()
    pd.testing.assert_frame_equal(a, b)
    assert list(a.nace[:5]) == ["Total", "01", "011", "0111", "0112"]


def test_total_code_and_codelist():
    cells = tabulate(DATA, [DimSpec("region", total="All", codelist=["1", "2", "11", "12"])], "turnover")
    frame = cells.to_frame()
    assert list(frame.region) == ["All", "1", "2", "11", "12"]
    assert frame.records.tolist()[-1] == 0 and frame.value.tolist()[-1] == 0  # listed, no records


def test_six_dimensions():
    rng = np.random.default_rng(1)
    n = 60
    df = pd.DataFrame({f"d{j}": rng.integers(1, 3, n).astype(str) for j in range(6)})
    df["x"] = rng.integers(1, 10, n).astype(float)
    cells = tabulate(df, [f"d{j}" for j in range(6)], "x")
    assert cells.n == 3 ** 6
    assert cells.value[0] == df.x.sum()
    assert np.allclose(cells.model.relations @ cells.value, 0)
    with pytest.raises(Exception, match="between 1 and 6"):
        tabulate(df.assign(d6="1"), [f"d{j}" for j in range(6)] + ["d6"], "x")


def test_unit_contributions_per_cell():
    uc = unit_contributions(DATA, ["region"], "turnover", holding="firm")
    total = uc[uc.cell == "Total"].set_index("unit").value.to_dict()
    assert total == pytest.approx({"a": 10.0, "b": 27.0, "c": 8.0, "d": 1.5})
    only = unit_contributions(DATA, ["region"], "turnover", cells=["11"])
    assert set(only.cell) == {"11"} and sorted(only.unit) == [2, 4]
    assert only.value.sum() == pytest.approx(8.0)
    both = unit_contributions(DATA, ["region", DimSpec("nace", "lengths:2,4")], "turnover", holding="firm")
    # sums per cell equal the tabulated values
    cells = tabulate(DATA, ["region", DimSpec("nace", "lengths:2,4")], "turnover")
    sums = both.groupby("cell").value.sum()
    names = cells.model.cell_names()
    for name, v in zip(names, cells.value):
        assert sums.get(name, 0.0) == pytest.approx(v)


def test_progress_runs():
    cells = tabulate(DATA, ["region"], "turnover", progress=True)
    assert cells.value[0] == pytest.approx(DATA.turnover.sum())


def test_deterministic():
    a = tabulate(DATA, ["region", "nace"], "turnover", holding="firm").to_frame()
    b = tabulate(DATA.sample(frac=1, random_state=3), ["region", "nace"], "turnover", holding="firm").to_frame()
    pd.testing.assert_frame_equal(a, b)
