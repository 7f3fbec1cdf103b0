"""Bad input: each error names the file, line (or row), column and code at fault."""

from __future__ import annotations

import pandas as pd
import pytest

from tablesafe.errors import HierarchyError, InputError, NonAdditiveError
from tablesafe.io.tauargus import read_asc
from tablesafe.tabulate import DimSpec, from_tabular, tabulate


@pytest.fixture
def hrc(tmp_path):
    p = tmp_path / "region.hrc"
    p.write_text("N\n@1\n@2\nS\n@3\n")
    return p


@pytest.fixture
def csv_file(tmp_path):
    p = tmp_path / "micro.csv"
    p.write_text("region,x\n1,10\n2,5\n3,4\n7,1\n3,2\n")
    return p


def test_unknown_code_names_file_line_column_code(csv_file, hrc):
    with pytest.raises(InputError) as err:
        tabulate(csv_file, [DimSpec("region", str(hrc))], "x")
    e = err.value
    assert (e.file, e.line, e.column, e.code) == (str(csv_file), 5, "region", "7")
    assert "micro.csv" in str(e) and "line 5" in str(e) and "'7'" in str(e)


def test_unknown_code_in_frame_names_row(hrc):
    df = pd.DataFrame({"region": ["1", "2", "9"], "x": [1.0, 2.0, 3.0]})
    with pytest.raises(InputError, match=r"row 3"):
        tabulate(df, [DimSpec("region", hrc)], "x")


def test_missing_code_option_maps_unknown_codes(csv_file, hrc):
    cells = tabulate(csv_file, [DimSpec("region", str(hrc))], "x", missing_code="99")
    frame = cells.to_frame().set_index("region")
    assert list(frame.index) == ["Total", "N", "1", "2", "S", "3", "99"]
    assert frame.loc["99", "value"] == 1 and frame.loc["Total", "value"] == 22


def test_unknown_code_in_asc_names_line(tmp_path):
    rda = tmp_path / "m.rda"
    rda.write_text("reg 1 2\n  <RECODEABLE>\n  <HIERARCHICAL>\n  <HIERCODELIST> \"r.hrc\"\n"
                   "  <HIERLEADSTRING> \"@\"\nval 3 4\n  <NUMERIC>\n")
    (tmp_path / "r.hrc").write_text("A\n@ 1\n@ 2\n")
    asc = tmp_path / "m.asc"
    asc.write_text(" 1  10\n 2   5\n 3   1\n")
    with pytest.raises(InputError) as err:
        tabulate(read_asc(asc, rda), ["reg"], "val")
    assert (err.value.line, err.value.column, err.value.code) == (3, "reg", "3")


def test_subtotal_code_in_data_is_rejected(hrc):
    df = pd.DataFrame({"region": ["1", "N"], "x": [1.0, 2.0]})
    with pytest.raises(InputError, match="subtotal"):
        tabulate(df, [DimSpec("region", hrc)], "x")


@pytest.mark.parametrize("text,match", [
    ("A\n@1\n@2\nB\n@1\n", "listed twice"),
    ("A\n@@1\n", "indentation"),
])
def test_bad_hrc_files(tmp_path, text, match):
    p = tmp_path / "bad.hrc"
    p.write_text(text)
    df = pd.DataFrame({"r": ["1"], "x": [1.0]})
    with pytest.raises(HierarchyError, match=match) as err:
        tabulate(df, [DimSpec("r", str(p))], "x")
    assert err.value.file == str(p) and err.value.line is not None


@pytest.mark.parametrize("rows,match", [
    ("A,\n1,A\n1,A\n", "listed twice"),
    ("A,B\nB,A\n1,A\n", "cyclic"),
    ("1,Z\n", "not a known code"),
])
def test_bad_parent_child_files(tmp_path, rows, match):
    p = tmp_path / "bad.csv"
    p.write_text("code,parent\n" + rows)
    df = pd.DataFrame({"r": ["1"], "x": [1.0]})
    with pytest.raises(HierarchyError, match=match) as err:
        tabulate(df, [DimSpec("r", str(p))], "x")
    assert err.value.file == str(p)


def test_non_numeric_response_csv(tmp_path):
    p = tmp_path / "m.csv"
    p.write_text("r,x\na,1\nb,2.5\nc,abc\nd,\n")
    with pytest.raises(InputError) as err:
        tabulate(p, ["r"], "x")
    assert (err.value.line, err.value.column, err.value.code) == (4, "x", "abc")
    assert "2 missing or non-numeric" in str(err.value)


def test_missing_response_frame():
    df = pd.DataFrame({"r": ["a", "b"], "x": [1.0, None]})
    with pytest.raises(InputError, match=r"row 2") as err:
        tabulate(df, ["r"], "x")
    assert err.value.column == "x"


def test_non_numeric_weight_parquet(tmp_path):
    p = tmp_path / "m.parquet"
    pd.DataFrame({"r": ["a", "b"], "x": [1.0, 2.0], "w": ["1", "x"]}).to_parquet(p)
    with pytest.raises(InputError, match=r"weight column.*row 2"):
        tabulate(p, ["r"], "x", weight="w")


def test_empty_inputs(tmp_path):
    p = tmp_path / "empty.csv"
    p.write_text("r,x\n")
    with pytest.raises(InputError, match="empty input"):
        tabulate(p, ["r"], "x")
    with pytest.raises(InputError, match="empty input"):
        tabulate(pd.DataFrame({"r": pd.Series([], dtype=str), "x": pd.Series([], dtype=float)}), ["r"], "x")
    q = tmp_path / "none.csv"
    q.write_text("")
    with pytest.raises(InputError):
        tabulate(q, ["r"], "x")


def test_unknown_columns_list_known_ones():
    df = pd.DataFrame({"region": ["a"], "x": [1.0]})
    with pytest.raises(InputError, match=r"unknown dimension column 'regio'.*'region', 'x'"):
        tabulate(df, ["regio"], "x")
    with pytest.raises(InputError, match=r"unknown response column 'y'"):
        tabulate(df, ["region"], "y")
    with pytest.raises(InputError, match=r"unknown holding column"):
        tabulate(df, ["region"], "x", holding="firm")


def test_missing_file():
    with pytest.raises(InputError, match="not found"):
        tabulate("/nonexistent/data.csv", ["r"], "x")


def test_tabular_errors(tmp_path, hrc):
    p = tmp_path / "t.csv"
    p.write_text("region,value\nTotal,10\nN,6\n1,2\n2,4\nS,5\n3,5\n")
    with pytest.raises(NonAdditiveError) as err:
        from_tabular(p, [DimSpec("region", hrc)], "value")
    msg = str(err.value)
    assert "'Total'" in msg and "'N', 'S'" in msg and "difference -1" in msg
    p.write_text("region,value\n1,2\n1,3\n")
    with pytest.raises(InputError, match=r"given twice \(lines 2 and 3\)"):
        from_tabular(p, [DimSpec("region", hrc)], "value")
    p.write_text("region,value\n1,2\n8,3\n")
    with pytest.raises(InputError) as err2:
        from_tabular(p, [DimSpec("region", hrc)], "value")
    assert (err2.value.line, err2.value.code) == (3, "8")
    p.write_text("region,value\n1,2\n2,x\n")
    with pytest.raises(InputError) as err3:
        from_tabular(p, [DimSpec("region", hrc)], "value")
    assert (err3.value.line, err3.value.column, err3.value.code) == (3, "value", "x")


def test_code_of_wrong_length_for_lengths_hierarchy(tmp_path):
    p = tmp_path / "m.csv"
    p.write_text("nace,x\n0111,1\n0112,2\n011,3\n")
    with pytest.raises(InputError) as err:
        tabulate(p, [DimSpec("nace", "lengths:2,4")], "x")
    assert (err.value.line, err.value.column, err.value.code) == (4, "nace", "011")


def test_blank_code_is_an_error_or_mapped(tmp_path):
    p = tmp_path / "m.csv"
    p.write_text("r,x\na,1\n,2\n")
    with pytest.raises(InputError) as err:
        tabulate(p, ["r"], "x")
    assert (err.value.line, err.value.column) == (3, "r")
    cells = tabulate(p, ["r"], "x", missing_code="99")
    assert list(cells.model.codes["r"]) == ["Total", "a", "99"] and list(cells.value) == [3, 1, 2]
