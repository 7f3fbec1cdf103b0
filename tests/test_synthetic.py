"""Tests of the synthetic business-data generator (tablesafe.synthetic)."""

from __future__ import annotations

import numpy as np
import pytest

from tablesafe.problem import EMPTY, PRIMARY
from tablesafe.synthetic import (
    PRESETS,
    make_hierarchy,
    problem_from_data,
    synthetic_data,
    synthetic_preset,
)


def test_make_hierarchy_sizes_and_codes():
    h = make_hierarchy([3, 4], "R")
    assert len(h) == 1 + 3 + 12
    assert h.total == "Total"
    assert h.codes[1] == "R1" and h.codes[2] == "R1.1"
    assert len(h.leaves) == 12


def test_same_seed_same_data_other_seed_other_data():
    a = synthetic_data([[3, 4], [2, 5]], 500, seed=7).data
    b = synthetic_data([[3, 4], [2, 5]], 500, seed=7).data
    c = synthetic_data([[3, 4], [2, 5]], 500, seed=8).data
    assert a.equals(b)
    assert not a.equals(c)


def test_holdings_group_enterprises_and_turnover_is_skewed():
    syn = synthetic_data([[3, 4], [2, 5]], 4000, seed=1)
    d = syn.data
    sizes = d.groupby("holding").size()
    assert sizes.max() >= 3  # real groups exist
    assert (sizes == 1).mean() > 0.5  # most enterprises stand alone
    t = d["turnover"].to_numpy()
    assert (t > 0).all()
    assert np.mean(t) > 1.5 * np.median(t)  # right-skewed (lognormal)


@pytest.mark.parametrize("name,lo,hi", [("1k", 900, 1300), ("13k", 12000, 15000)])
def test_presets_have_the_advertised_size(name, lo, hi):
    syn = synthetic_preset(name)
    assert lo <= syn.table_size <= hi
    # 1m and 60k are checked by size arithmetic only (building them takes seconds)
    for key in ("60k", "1m"):
        br = PRESETS[key]["branching"]
        size = np.prod([1 + np.sum(np.cumprod(b)) for b in br])
        assert 0.9 * {"60k": 60_000, "1m": 1_000_000}[key] <= size <= 1.1 * {"60k": 60_000, "1m": 1_000_000}[key]


def test_problem_is_additive_with_p_percent_primaries():
    """p% rule: upl = p/100 x1 - (X - x1 - x2) (seed 002, table of upper protection levels)."""
    syn = synthetic_data([[3, 4], [2, 5]], 800, seed=3)
    pr = problem_from_data(syn, p=15)
    assert np.abs(pr.residual()).max() < 1e-6 * pr.value.max()
    assert pr.n == syn.table_size
    # recompute one sensitive cell's level directly from the microdata
    sens = np.flatnonzero(pr.status == PRIMARY)
    assert len(sens) > 0
    i = sens[len(sens) // 2]
    codes = dict(zip(pr.codes.columns, pr.codes.iloc[i]))
    d = syn.data
    mask = np.ones(len(d), dtype=bool)
    for dim, code in codes.items():
        if code != "Total":
            mask &= d[dim].astype(str).map(lambda c, code=code: c == code or c.startswith(code + ".")).to_numpy()
    per = d[mask].groupby("holding")["turnover"].sum().sort_values(ascending=False).to_numpy()
    X = per.sum()
    x1 = per[0]
    x2 = per[1] if len(per) > 1 else 0.0
    assert pr.value[i] == pytest.approx(X)
    assert pr.upl[i] == pytest.approx(0.15 * x1 - (X - x1 - x2))
    assert pr.contributors[i] == len(per)
    # empty cells are exactly those without contributors
    assert ((pr.status == EMPTY) == (pr.contributors == 0)).all()
    assert (pr.value[pr.status == EMPTY] == 0).all()


def _preset_size(name: str) -> int:
    """Cells of a one-table preset, by size arithmetic (no data generated)."""
    return int(np.prod([1 + np.sum(np.cumprod(b)) for b in PRESETS[name]["branching"]]))


@pytest.mark.parametrize(
    "name,dims,cells",
    [("2k2d", 2, 2_000), ("2k3d", 3, 2_000), ("13k2d", 2, 13_000), ("13k3d", 3, 13_000),
     ("60k2d", 2, 60_000), ("60k3d", 3, 60_000), ("1m3d", 3, 1_000_000)],
)
def test_benchmark_presets_have_their_size_and_dimensions(name, dims, cells):
    """The presets of the tau-ARGUS comparison (issue 12): 2-D and 3-D tables of about
    2,000, 13,000, 60,000 and 1,000,000 cells, every dimension hierarchical (two or more
    levels below the total). Checked by arithmetic: no data, no suppression."""
    spec = PRESETS[name]
    assert len(spec["branching"]) == dims
    assert all(len(b) >= 2 for b in spec["branching"])
    assert 0.85 * cells <= _preset_size(name) <= 1.2 * cells
    assert "tables" not in spec


def test_clear_names_are_the_same_presets():
    assert PRESETS["60k3d"] is PRESETS["60k"]
    assert PRESETS["1m3d"] is PRESETS["1m"]
    assert PRESETS["13k3d"] is PRESETS["13k"]


def test_small_3d_preset_has_holdings():
    syn = synthetic_preset("2k3d")
    assert syn.dims == ["industry", "region", "size"]
    assert syn.table_size == 9 * 16 * 13
    assert syn.data.groupby("holding").size().max() >= 3


def test_linked_preset_sizes_without_data():
    """linked65k: two 3-D tables of about 40,000 and 25,000 cells sharing industry and region."""
    spec = PRESETS["linked65k"]
    names = ("industry", "region", "size", "legal")
    sizes = dict(zip(names, (1 + int(np.sum(np.cumprod(b))) for b in spec["branching"])))
    t1, t2 = ([sizes[d] for d in t] for t in spec["tables"])
    assert set(spec["tables"][0]) & set(spec["tables"][1]) == {"industry", "region"}
    assert 36_000 <= int(np.prod(t1)) <= 44_000
    assert 22_000 <= int(np.prod(t2)) <= 28_000
    assert len(spec["branching"][0]) >= 2 and len(spec["branching"][1]) >= 2  # shared dims hierarchical


def test_linked_problem_is_one_model_of_both_tables():
    syn = synthetic_preset("linked3k", seed=1, holding_cohesion=0.7)
    assert syn.table_sizes() == [1_584, 1_296]
    pr = problem_from_data(syn, p=15)
    assert pr.n == syn.table_size == 1_584 + 1_296 - 9 * 16
    assert np.abs(pr.residual()).max() < 1e-6 * pr.value.max()
    # a cell of the second table: legal form given, size at its total
    names = set(pr.names.astype(str))
    assert "I1|R1|Total|L1" in names and "I1|R1|S1|Total" in names and "I1|R1|S1|L1" not in names
    assert pr.sensitive.sum() > 0


def test_linked_problem_agrees_with_the_tabulation_pipeline():
    """Same cells, values, primaries and levels as tablesafe.prepare_problem(..., tables=...)."""
    import tablesafe

    syn = synthetic_preset("linked3k", seed=2, units=1_500, holding_cohesion=0.7)
    pr = problem_from_data(syn, p=15, use_holdings=True)
    ref, _, _ = tablesafe.prepare_problem(
        syn.data, list(syn.hierarchies.items()), syn.response, ["p(15)"], holding=syn.holding, tables=syn.table_list
    )
    pos = dict(zip(pr.names.astype(str), range(pr.n)))
    idx = np.array([pos[n] for n in ref.names.astype(str)])
    assert len(idx) == pr.n
    np.testing.assert_allclose(pr.value[idx], ref.value, rtol=1e-9, atol=1e-6)
    assert (pr.sensitive[idx] == ref.sensitive).all()
    np.testing.assert_allclose(pr.upl[idx], ref.upl, rtol=1e-9, atol=1e-6)


def test_holding_cohesion_leaves_other_draws_alone_and_makes_holdings_matter():
    a = synthetic_preset("1k", seed=1).data
    b = synthetic_preset("1k", seed=1, holding_cohesion=0.7).data
    assert a[["id", "holding", "turnover", "employees"]].equals(b[["id", "holding", "turnover", "employees"]])
    assert a["size" if "size" in a else "region"].equals(b["size" if "size" in b else "region"])  # last dim kept
    assert (a["industry"] != b["industry"]).sum() > 0
    syn = synthetic_preset("1k", seed=1, holding_cohesion=0.7)
    ent = problem_from_data(syn, use_holdings=False)
    hold = problem_from_data(syn, use_holdings=True)
    assert (hold.sensitive & ~ent.sensitive).sum() > 0  # holdings add primaries
    assert not (ent.sensitive & ~hold.sensitive).any()  # and never remove one
