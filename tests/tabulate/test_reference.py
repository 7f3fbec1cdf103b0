"""Property: tabulate equals a straightforward pure-Python computation for every field."""

from __future__ import annotations

import numpy as np
import pandas as pd
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tabulate_reference import compare, reference

from tablesafe.structure import Hierarchy
from tablesafe.tabulate import DimSpec, tabulate

REGION = Hierarchy.from_hrc(["N", "@n1", "@n2", "S", "@s1", "@@s1a", "@@s1b", "@s2", "W"])
REGION_LEAVES = REGION.leaves  # n1 n2 s1a s1b s2 W (leaves at depths 1, 2 and 3)
INDUSTRY_CODES = ["111", "112", "121", "211", "212"]
SIZE_CODES = ["a", "b", "c"]

record = st.fixed_dictionaries({
    "region": st.sampled_from(REGION_LEAVES),
    "industry": st.sampled_from(INDUSTRY_CODES),
    "size": st.sampled_from(SIZE_CODES),
    "x": st.integers(-6, 30).map(float),
    "w": st.sampled_from([1.0, 1.5, 2.0, 4.0]),
    "h": st.sampled_from(["g1", "g2", "g3", "g4", "g5"]),
    "req": st.booleans(),
    "wv": st.booleans(),
    "e": st.integers(0, 5).map(float),
})


def _frame(recs):
    return pd.DataFrame({
        "region": [r["region"] for r in recs],
        "industry": [r["industry"] for r in recs],
        "size": [r["size"] for r in recs],
        "turnover": [r["x"] for r in recs],
        "weight": [r["w"] for r in recs],
        "group": [r["h"] for r in recs],
        "request": [int(r["req"]) for r in recs],
        "waiver": [r["wv"] for r in recs],
        "cost": [r["e"] for r in recs],
    })


def _hierarchies(cells):
    return {d.name: d.hierarchy for d in cells.model.dims}


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(recs=st.lists(record, min_size=1, max_size=30), holding=st.booleans(), k=st.integers(1, 5))
def test_two_way_matches_reference(recs, holding, k):
    dims = [DimSpec("region", REGION), DimSpec("industry", "lengths:1,2,3")]
    cells = tabulate(_frame(recs), dims, "turnover", holding="group" if holding else None,
                     weight="weight", waiver="waiver", request="request", top_k=k, extra=["cost"])
    ref = reference(recs, _hierarchies(cells), [["region", "industry"]], holding, k, ["region", "industry"])
    compare(cells, ref, k)
    assert np.allclose(cells.model.relations @ cells.value, 0, atol=1e-9)
    assert np.allclose(cells.model.relations @ cells.records, 0)


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(recs=st.lists(record, min_size=1, max_size=25), holding=st.booleans())
def test_three_way_matches_reference(recs, holding):
    dims = [DimSpec("size"), DimSpec("region", REGION), DimSpec("industry", "digits:1,1,1")]
    cells = tabulate(_frame(recs), dims, "turnover", holding="group" if holding else None,
                     weight="weight", waiver="waiver", request="request", extra=["cost"])
    assert cells.model.size == len(cells.model.dims[0].hierarchy) * len(REGION) * len(
        cells.model.dims[2].hierarchy)
    ref = reference(recs, _hierarchies(cells), [["size", "region", "industry"]], holding, 4,
                    ["size", "region", "industry"])
    compare(cells, ref, 4)
    assert np.allclose(cells.model.relations @ cells.value, 0, atol=1e-9)


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(recs=st.lists(record, min_size=1, max_size=25), holding=st.booleans())
def test_linked_tables_match_reference(recs, holding):
    dims = [DimSpec("size"), DimSpec("region", REGION), DimSpec("industry", "lengths:1,2,3")]
    tables = [["size", "region"], ["size", "industry"]]
    cells = tabulate(_frame(recs), dims, "turnover", tables=tables, holding="group" if holding else None,
                     weight="weight", waiver="waiver", request="request", extra=["cost"])
    order = [d.name for d in cells.model.dims]
    ref = reference(recs, _hierarchies(cells), tables, holding, 4, order)
    # shared cells (size x Total x Total) appear once
    n_size, n_region, n_ind = (len(cells.model.dims[j].hierarchy) for j in range(3))
    assert cells.model.size == n_size * n_region + n_size * n_ind - n_size
    names = list(cells.model.cell_names())
    assert len(names) == len(set(names))
    compare(cells, ref, 4)
    assert np.allclose(cells.model.relations @ cells.value, 0, atol=1e-9)


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(recs=st.lists(record.map(lambda r: {**r, "wv": False, "x": abs(r["x"])}), min_size=1, max_size=30),
       holding=st.booleans())
def test_no_waivers_no_negatives_matches_reference(recs, holding):
    """Without waivers and negatives the non-waived and absolute lists equal the top list."""
    dims = [DimSpec("region", REGION), DimSpec("industry", "lengths:1,2,3")]
    cells = tabulate(_frame(recs), dims, "turnover", holding="group" if holding else None, weight="weight",
                     waiver="waiver", request="request", extra=["cost"])
    ref = reference(recs, _hierarchies(cells), [["region", "industry"]], holding, 4, ["region", "industry"])
    compare(cells, ref, 4)
    assert np.array_equal(cells.nonwaived_top, cells.top) and np.array_equal(cells.abs_top, cells.top)
