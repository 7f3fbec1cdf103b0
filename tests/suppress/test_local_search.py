"""The local search that ``fast`` and its second pass share (:mod:`tablesafe.suppress.local`)
and the parts of ``fast`` around it: box levels, the relation index, one certificate
checked against the relations, a search rebuilt from its pickled data (as worker
processes get it), and the split of the targets over workers."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from tablesafe.problem import Problem
from tablesafe.structure.hierarchy import Hierarchy
from tablesafe.structure.overlap import occupied_cells
from tablesafe.suppress.fast_options import FastOptions
from tablesafe.suppress.fast_ranges import CellRanges
from tablesafe.suppress.fast_workers import partition
from tablesafe.suppress.local import (
    BOX_LEVELS,
    CertificateLog,
    Certificates,
    Geometry,
    LocalSearch,
    Query,
    RelationIndex,
    SearchSpace,
    code_sets,
    gather,
)
from tablesafe.synthetic import problem_from_data, synthetic_data

# T -> A (A1, A2), B (B1)
TREE = Hierarchy(("T", "A", "A1", "A2", "B", "B1"), (-1, 0, 1, 1, 0, 4))


def as_set(codes: np.ndarray) -> set[str]:
    return {TREE.codes[i] for i in codes.tolist()}


def test_six_box_levels_as_documented():
    sets = code_sets(TREE)
    assert len(sets) == len(BOX_LEVELS) == 6
    a1, a = 2, 1
    assert as_set(sets[0][a1]) == {"A1", "A2", "A", "T"}  # self, siblings, ancestors
    assert as_set(sets[1][a1]) == {"A1", "A2", "A", "T", "B"}  # + the ancestors' siblings
    assert as_set(sets[0][a]) == {"A", "B", "T", "A1", "A2"}  # + descendants
    assert as_set(sets[1][a]) == {"A", "B", "T", "A1", "A2", "B1"}  # + the siblings' children
    assert as_set(sets[2][a]) == {"A", "B", "T", "A1", "A2"}  # compact: children only
    assert as_set(sets[3][a]) == {"A", "B", "T", "A1", "A2", "B1"}  # + the siblings' descendants
    for code in range(len(TREE)):
        assert as_set(sets[5][code]) == set(TREE.codes)
        for small, large in ((0, 1), (0, 3), (1, 4), (3, 4), (2, 0)):
            assert as_set(sets[small][code]) <= as_set(sets[large][code])


def test_relation_index_walks_both_ways():
    A = sp.csr_matrix(np.array([[1.0, 1.0, -1.0, 0.0, 0.0], [0.0, 0.0, 1.0, 1.0, -1.0]]))
    rel = RelationIndex.of(A)
    assert rel.n_relations == 2
    assert gather(rel.row_ptr, np.array([1, 0])).tolist() == [3, 4, 5, 0, 1, 2]
    assert rel.cells_of(np.array([1])).tolist() == [2, 3, 4]
    assert rel.relations_of(np.array([2, 0])).tolist() == [0, 1, 0]
    assert rel.cell_coef[gather(rel.cell_ptr, np.array([4]))].tolist() == [-1.0]
    everything = np.ones(5, dtype=bool)
    assert rel.around(np.array([0]), everything).tolist() == [0, 1, 2]
    assert rel.around(np.array([3]), everything).tolist() == [2, 3, 4]


@pytest.fixture(scope="module")
def table() -> Problem:
    return problem_from_data(synthetic_data([[2, 3], [3]], 400, seed=5))


def search_space(problem: Problem) -> tuple[SearchSpace, CellRanges]:
    opts = FastOptions().for_table(problem.n)
    ranges = CellRanges.of(problem, singleton=True, capacity=False, singleton_penalty=opts.singleton_penalty)
    space = SearchSpace(
        relations=RelationIndex.of(problem.relations), geometry=Geometry.of(problem),
        scale=ranges.scale, free=ranges.free, single=ranges.single,
        occupied=occupied_cells(problem), options=opts.search_options(),
    )
    return space, ranges


def test_a_certificate_keeps_the_relations_and_ranges(table):
    space, ranges = search_space(table)
    assert space.geometry is not None
    t = int(np.flatnonzero(table.sensitive & (ranges.upl > 0))[0])
    amount = max(ranges.upl[t], ranges.lpl[t])
    query = Query(t, amount, ranges.cap, ranges.cap, ranges.weight, table.sensitive.copy())
    d, cells, how = LocalSearch(space).certify(query)
    assert d is not None and cells[0] == t and how
    full = np.zeros(table.n)
    full[cells] = d
    assert full[t] == pytest.approx(amount)
    assert np.abs(table.relations @ full).max() <= 1e-6 * amount
    moved = np.flatnonzero(np.abs(full) > 1e-9 * amount)
    assert space.free[moved].all()  # protected and empty cells never move
    assert (np.abs(full[moved]) <= ranges.cap[moved] * (1 + 1e-9)).all()


def test_a_search_rebuilt_from_its_pickled_space_finds_the_same(table):
    space, ranges = search_space(table)
    again = pickle.loads(pickle.dumps(space))
    targets = np.flatnonzero(table.sensitive & (ranges.upl > 0))[:5]
    one, two = LocalSearch(space), LocalSearch(again)
    for t in targets.tolist():
        amount = max(ranges.upl[t], ranges.lpl[t])
        q1 = Query(t, amount, ranges.cap, ranges.cap, ranges.weight, table.sensitive.copy())
        q2 = Query(t, amount, ranges.cap, ranges.cap, ranges.weight, table.sensitive.copy())
        d1, c1, h1 = one.certify(q1)
        d2, c2, h2 = two.certify(q2)
        assert h1 == h2 and np.array_equal(c1, c2)
        assert d1 is not None and d2 is not None and np.array_equal(d1, d2)


@pytest.mark.parametrize("structured", [True, False])
def test_partition_splits_targets_into_ordered_disjoint_groups(table, structured):
    geo = Geometry.of(table) if structured else None
    targets = np.flatnonzero(table.sensitive)[::-1]
    groups = partition(targets, geo, 3)
    assert len(groups) == 3
    joined = np.concatenate(groups)
    assert sorted(joined.tolist()) == sorted(targets.tolist())
    rank = {t: k for k, t in enumerate(targets.tolist())}
    for g in groups:
        assert [rank[t] for t in g.tolist()] == sorted(rank[t] for t in g.tolist())
    assert partition(targets, geo, 1)[0] is targets


def test_certificates_flatten_with_fixed_types():
    empty = Certificates.concat([])
    assert [a.dtype for a in (empty.target, empty.direction, empty.cell, empty.dev, empty.insider)] == [
        np.int64, np.int8, np.int64, np.float64, np.int64]
    log = CertificateLog()
    log.add(3, [(0, np.array([3, 4]), np.array([1.0, -1.0])), (1, np.array([3, 4]), np.array([-2.0, 2.0]))], -1)
    names = np.array(["a", "b", "c", "d", "e"])
    assert log.label(np.array([4, 1]), names) == 0 and log.labels == ["e+b"]
    flat = log.flat()
    assert flat.target.tolist() == [3, 3, 3, 3] and flat.direction.tolist() == [0, 0, 1, 1]
    both = Certificates.concat([flat, flat])
    assert len(both.cell) == 8 and both.dev.dtype == np.float64


def test_the_search_among_withheld_cells_tries_the_smaller_box_first():
    """``FastOptions.inner_first``: a box level smaller than the first box is tried first
    by the search among the cells already withheld; its certificate moves only cells of
    that box, keeps the relations and needs no new cell; with ``inner_first=()`` the
    first box alone is searched."""
    from dataclasses import replace

    table = problem_from_data(synthetic_data([[3, 4], [2, 5]], 1_500, seed=5))
    space, ranges = search_space(table)
    geo = space.geometry
    assert geo is not None
    search = LocalSearch(space)
    withheld = table.sensitive.copy()
    hits = 0
    for t in np.flatnonzero(table.sensitive & (ranges.upl > 0)).tolist():
        levels = search.levels(t)
        order = search._inner_levels(t, levels)
        assert order[-len(levels):] == levels
        for lv in order[:-len(levels)]:
            assert lv in space.options.inner_first
            assert geo.box_size(t, lv) < geo.box_size(t, levels[0])
        amount = max(ranges.upl[t], ranges.lpl[t])
        query = Query(t, amount, ranges.cap, ranges.cap, ranges.weight, withheld.copy())
        found = search._among_withheld(query, space.free, levels)
        if found is None or found[2] != f"inner-box{order[0]}" or len(order) == len(levels):
            continue
        d, cells, _ = found
        hits += 1
        box = set(geo.box(t, order[0]).tolist())
        assert set(cells.tolist()) <= box
        assert withheld[cells[1:]].all()
        full = np.zeros(table.n)
        full[cells] = d
        assert full[t] == pytest.approx(amount)
        assert np.abs(table.relations @ full).max() <= 1e-6 * amount
    assert hits > 0
    plain = LocalSearch(replace(space, options=replace(space.options, inner_first=())))
    t = int(np.flatnonzero(table.sensitive & (ranges.upl > 0))[0])
    assert plain._inner_levels(t, plain.levels(t)) == plain.levels(t)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(min_value=0, max_value=40), max_size=60), st.integers(min_value=0, max_value=2000))
def test_relation_codes_equal_numpy_unique_whichever_way_they_are_found(values, extra):
    """The local LP's rows are numbered by marking flags where the table has few
    relations and by sorting where it has many: the same rows and positions either way."""
    from tablesafe.suppress.local.search import _codes

    a = np.array(values, dtype=np.int64)
    expect_rows, expect_at = np.unique(a, return_inverse=True)
    for bound in (41, 41 + extra, 4 * len(a) + 1 + extra):  # marking, either, sorting
        rows, at = _codes(a, bound)
        assert np.array_equal(rows, expect_rows)
        assert np.array_equal(at, expect_at)
