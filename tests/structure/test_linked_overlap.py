"""Cells of two linked tables whose common part is no cell of either.

Whether such a pair shares a respondent decides whether the single respondent of one
attacks the other (tablesafe.structure.insiders). With the record cells of the
tabulation the common part is read from the data; without them only the smallest cell
containing both can tell (when it has one respondent). Found on the generated linked
pair with holdings: a respondent 'attacking' a cell of which it is the largest
contributor made the cell impossible to protect (benchmarks/RESULTS.md, "The linked
pair: single respondents the insider model cannot place").
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd
import pytest

from tablesafe.rules import assess
from tablesafe.structure.insiders import InsiderModel
from tablesafe.synthetic import (
    SyntheticData,
    problem_from_data,
    synthetic_contributions,
    synthetic_preset,
)
from tablesafe.tabulate import DimSpec, tabulate


@pytest.fixture(scope="module")
def linked():
    syn = synthetic_preset("linked3k", seed=1, holding_cohesion=0.7)
    return syn, problem_from_data(syn, p=15, use_holdings=True)


def _under(syn: SyntheticData, names: np.ndarray) -> np.ndarray:
    """``(cells, records)``: whether each record lies in each named cell."""
    dims = list(syn.hierarchies)
    out = np.ones((len(names), len(syn.data)), dtype=bool)
    for j, d in enumerate(dims):
        h = syn.hierarchies[d]
        codes = list(h.codes)
        anc = np.eye(len(codes), dtype=bool)
        for b in range(len(codes)):
            a = h.parent[b]
            while a != -1:
                anc[a, b] = True
                a = h.parent[a]
        rec = pd.Index(codes).get_indexer(syn.data[d].astype(str).to_numpy())
        cell = pd.Index(codes).get_indexer([str(n).split("|")[j] for n in names])
        out &= anc[cell][:, rec]
    return out


def test_without_record_cells_the_join_of_one_respondent_decides(linked):
    _, p = linked
    p = replace(p, record_cells=None)
    names = list(p.names.astype(str))
    k = names.index("I2.1|R2.2|Total|L2")  # industry x region x legal form
    s = names.index("I2.1|R2.2|S2|Total")  # industry x region x size
    join = names.index("I2.1|R2.2|Total|Total")
    assert p.contributors[join] == 1 and p.contributors[k] >= 1 and p.contributors[s] >= 1
    model = InsiderModel.of(p)
    assert model.overlaps(np.array([s]), k)[0]
    assert len(model.attackers(k, np.array([s]))) == 0


def test_common_parts_are_read_from_the_records(linked):
    """Overlap of cells from the two tables equals 'some record lies in both', checked
    record by record; without the record cells part of those pairs is missed."""
    syn, p = linked
    names = p.names.astype(str)
    parts = np.array([n.split("|") for n in names])
    size_table = (parts[:, 3] == "Total") & (parts[:, 2] != "Total")
    legal_table = (parts[:, 2] == "Total") & (parts[:, 3] != "Total")
    single = np.flatnonzero((p.contributors == 1) & legal_table)
    targets = np.flatnonzero(p.sensitive & size_table)
    assert len(single) and len(targets)
    inside_s = _under(syn, names[single])
    inside_t = _under(syn, names[targets])
    shares = (inside_t.astype(np.int64) @ inside_s.T.astype(np.int64)) > 0  # (targets, singles)
    model = InsiderModel.of(p)
    without = InsiderModel.of(replace(p, record_cells=None))
    got = np.array([model.overlaps(single, int(t)) for t in targets])
    old = np.array([without.overlaps(single, int(t)) for t in targets])
    assert np.array_equal(got, shares)
    assert not (old & ~got).any()
    assert (got & ~old).sum() > 0  # pairs only the records place


def test_an_overlapping_single_respondent_contributes_to_the_target(linked):
    """Soundness: a single respondent the model excludes as an attacker of a target is
    one of that target's own contributors (from each table's unit contributions)."""
    syn, p = linked
    names = list(p.names.astype(str))
    units: dict[str, set] = {}
    for table in syn.table_list:
        one = SyntheticData(syn.data, {d: syn.hierarchies[d] for d in table}, syn.response, syn.holding)
        con = synthetic_contributions(one, use_holdings=True)
        table_names = problem_from_data(one, p=15, use_holdings=True).names.astype(str)
        dims = list(syn.hierarchies)
        for cell, grp in con.groupby("cell"):
            codes = dict(zip(table, table_names[int(cell)].split("|")))
            full = "|".join(codes.get(d, "Total") for d in dims)
            units.setdefault(full, set()).update(grp["unit"].tolist())
    model = InsiderModel.of(p)
    single = np.flatnonzero(p.contributors == 1)
    checked = 0
    for t in np.flatnonzero(p.sensitive)[:200]:
        near = single[model.overlaps(single, int(t)) & (single != t)]
        for s in near:
            (unit,) = units[names[s]]
            assert unit in units[names[t]], (names[t], names[s])
            checked += 1
    assert checked > 100


def test_tabulated_linked_tables_carry_their_record_cells():
    syn = synthetic_preset("linked3k", seed=2)
    dims = [DimSpec(d, h) for d, h in syn.hierarchies.items()]
    cells = tabulate(syn.data, dims, syn.response, tables=[list(t) for t in syn.table_list], holding=syn.holding)
    assert cells.record_cells is not None
    want = syn.data[list(syn.hierarchies)].astype(str).drop_duplicates()
    got = cells.record_cells[list(syn.hierarchies)].astype(str)
    assert set(map(tuple, got.to_numpy())) == set(map(tuple, want.to_numpy()))
    problem = assess(cells, "p(15)")
    assert problem.record_cells is not None
    # one table: every common part is a cell, nothing to carry
    one = tabulate(syn.data, dims[:2], syn.response, holding=syn.holding)
    assert one.record_cells is None
    # the tabulated problem places the same pairs as the generated one
    gen = problem_from_data(syn, p=15, use_holdings=True)
    assert list(gen.names.astype(str)) == list(problem.names.astype(str))
    a, b = InsiderModel.of(gen), InsiderModel.of(problem)
    single = np.flatnonzero(problem.contributors == 1)
    for t in np.flatnonzero(problem.sensitive)[:100]:
        assert np.array_equal(a.overlaps(single, int(t)), b.overlaps(single, int(t)))
