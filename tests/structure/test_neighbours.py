"""The one neighbourhood walk over relations (structure/neighbours.py) that the audit and
the suppression methods share."""

from __future__ import annotations

import ast
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from tablesafe.structure.neighbours import gather, neighbours

SRC = Path(__file__).resolve().parents[2] / "src" / "tablesafe"


def _relations() -> sp.csr_matrix:
    # r0: c0 = c1 + c2 ; r1: c3 = c1 + c4
    return sp.csr_matrix(np.array([[1.0, -1.0, -1.0, 0.0, 0.0], [0.0, -1.0, 0.0, 1.0, -1.0]]))


def test_gather_positions_row_after_row() -> None:
    a = _relations()
    assert gather(a.indptr, np.array([1, 0])).tolist() == [3, 4, 5, 0, 1, 2]
    assert gather(a.indptr, np.array([], dtype=np.int64)).size == 0


def test_neighbours_walk_both_ways() -> None:
    a = _relations()
    ac = sp.csc_matrix(a)
    rows = neighbours(ac, np.array([1]))
    assert rows.tolist() == [0, 1]
    assert neighbours(a, rows).tolist() == [0, 1, 2, 3, 4]
    assert neighbours(a, np.array([1])).tolist() == [1, 3, 4]


def test_no_other_copy_of_the_walk() -> None:
    """No module defines its own ``_gather`` (the walk lives in structure/neighbours.py)."""
    for path in SRC.rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        names = {n.name for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)}
        assert not names & {"_gather", "gather"} or path.name == "neighbours.py", path
