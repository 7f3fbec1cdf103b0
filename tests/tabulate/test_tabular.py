"""Tabular input: cells given directly, totals given or missing."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from tablesafe.structure import Hierarchy
from tablesafe.tabulate import DimSpec, from_tabular, tabulate

REGION = Hierarchy.from_hrc(["N", "@1", "@2", "S", "@3"])


def _micro():
    return pd.DataFrame({
        "region": ["1", "1", "2", "3", "3", "3", "2"],
        "size": ["a", "b", "a", "a", "b", "b", "b"],
        "x": [10.0, 4.0, 7.0, 1.0, 8.0, 2.0, 3.0],
    })


def test_missing_totals_are_summed_and_match_microdata(tmp_path):
    micro = _micro()
    full = tabulate(micro, [DimSpec("region", REGION), "size"], "x")
    leaf = micro.groupby(["region", "size"]).x.agg(["sum", "count", "max"]).reset_index()
    p = tmp_path / "cells.csv"
    leaf.rename(columns={"sum": "value", "count": "freq", "max": "top1"}).to_csv(p, index=False)
    cells = from_tabular(p, [DimSpec("region", REGION), "size"], "value", frequency="freq", top=["top1"])
    assert list(cells.model.codes.itertuples(index=False)) == list(full.model.codes.itertuples(index=False))
    assert np.allclose(cells.value, full.value)
    assert (cells.records == full.records).all()
    # the largest given contribution below each total is its top1
    assert np.allclose(cells.top[:, 0], full.top[:, 0])
    assert np.allclose(cells.model.relations @ cells.value, 0)
    assert (cells.extra["frequency"] == full.records).all()


def test_given_totals_checked_and_recomputed():
    rows = pd.DataFrame({
        "region": ["Total", "N", "1", "2", "S", "3"],
        "value": [30.0, 21.0, 14.0, 7.0, 9.0, 9.0],
        "status": ["S", "S", "U", "S", "P", "S"],
        "upl": [0, 0, 3.5, 0, 0, 0],
        "lpl": [0, 0, 2.0, 0, 0, 0],
        "cost": [1, 1, 1, 1, 1, 2],
    })
    cells = from_tabular(rows, [DimSpec("region", REGION)], "value", status="status", upl="upl", lpl="lpl",
                         cost="cost")
    assert list(cells.extra["status"]) == ["S", "S", "U", "S", "P", "S"]
    assert cells.extra["upl"][2] == 3.5 and cells.extra["lpl"][2] == 2.0
    bad = rows.assign(value=[31.0, 21.0, 14.0, 7.0, 9.0, 9.0])
    with pytest.raises(Exception, match="difference 1"):
        from_tabular(bad, [DimSpec("region", REGION)], "value")
    fixed = from_tabular(bad, [DimSpec("region", REGION)], "value", recompute_totals=True)
    assert fixed.value[0] == 30.0


def test_empty_cells_from_dash():
    rows = pd.DataFrame({"region": ["1", "2", "3"], "value": ["5", "-", "2"]})
    cells = from_tabular(rows, [DimSpec("region", REGION)], "value")
    frame = cells.to_frame().set_index("region")
    assert frame.loc["2", "records"] == 0 and frame.loc["N", "value"] == 5 and frame.loc["Total", "value"] == 7
