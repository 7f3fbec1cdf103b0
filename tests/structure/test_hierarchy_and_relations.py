"""Hierarchies in every format and the relations a table compiles to."""

from __future__ import annotations

import numpy as np
import pytest

from tablesafe import Dimension, Hierarchy, HierarchyError, TableStructure, compile_tables


def test_hrc_region2_matches_tau_argus_order():
    h = Hierarchy.from_hrc(["Nr", "@ 1", "@ 2", "Os", "@ 4", "@10"])
    assert h.codes == ("Total", "Nr", "1", "2", "Os", "4", "10")
    assert h.parent == (-1, 0, 1, 1, 0, 4, 4)
    assert h.leaves == ["1", "2", "4", "10"]


def test_hrc_bad_indentation_names_line():
    with pytest.raises(HierarchyError, match="line 2"):
        Hierarchy.from_hrc(["A", "@@B"])


def test_hrc_duplicate_names_code():
    with pytest.raises(HierarchyError, match="'B'"):
        Hierarchy.from_hrc(["A", "@B", "C", "@B"])


def test_parent_child_cycle_detected():
    with pytest.raises(HierarchyError, match="cyclic"):
        Hierarchy.from_parent_child([("A", "B"), ("B", "A")])


def test_parent_child_and_lengths_agree():
    a = Hierarchy.from_parent_child([("1", ""), ("11", "1"), ("12", "1"), ("2", ""), ("21", "2")])
    b = Hierarchy.from_lengths(["11", "12", "21"], [1, 2])
    assert a == b


def test_tau_argus_digits_increments():
    h = Hierarchy.from_lengths(["34100", "29240"], [3, 1, 1, 0, 0], cumulative=False)
    assert "341" in h and "3410" in h and "34100" in h
    assert h.depth(h.index("34100")) == 3


def test_relations_hold_on_additive_values():
    region = Hierarchy.from_hrc(["A", "@a1", "@a2", "B", "@b1"])
    size = Hierarchy.flat(["1", "2"])
    t = TableStructure((Dimension("size", size), Dimension("region", region)))
    model = compile_tables(t)
    rng = np.random.default_rng(1)
    leaf = rng.integers(0, 100, size=(2, 3)).astype(float)  # size leaves x region leaves
    # build the full table by aggregation
    full = np.zeros(t.shape)
    rl = {"a1": 2, "a2": 3, "b1": 5}
    for si, s in enumerate(["1", "2"]):
        for rj, r in enumerate(["a1", "a2", "b1"]):
            v = leaf[si, rj]
            for sc in (0, si + 1):
                for rc in {rl[r], 1 if r.startswith("a") else 4, 0}:
                    full[sc, rc] += v
    assert np.allclose(model.relations @ full.ravel(), 0)
    # one relation per (node with children) x (codes of the other dimension)
    assert model.relations.shape[0] == 1 * 6 + 3 * 3


def test_linked_tables_share_cells_once():
    a = Dimension("a", Hierarchy.flat(["x", "y"]))
    b = Dimension("b", Hierarchy.flat(["u", "v"]))
    c = Dimension("c", Hierarchy.flat(["p", "q"]))
    m = compile_tables([TableStructure((a, b)), TableStructure((a, c))])
    # 9 + 9 cells, sharing the 3 cells (a, Total, Total)
    assert m.size == 15
    # the a-margin relation Total = x + y at b=Total, c=Total occurs in both tables, kept once
    assert m.relations.shape[0] == 6 + 6 - 1


def test_parent_child_cycle_through_the_total_is_an_error():
    """A row giving the total a parent closes a cycle (Total -> A -> A1 -> Total)."""
    with pytest.raises(HierarchyError, match="line 3"):
        Hierarchy.from_parent_child([("A", ""), ("A1", "A"), ("Total", "A1")])
