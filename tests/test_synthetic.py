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
