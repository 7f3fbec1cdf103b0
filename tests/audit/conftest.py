"""Helpers for audit tests: small two-way tables with margins as Problems, and a
generated three-way table with a pattern that leaves single respondents findings."""

from __future__ import annotations

import numpy as np
import pytest

from tablesafe.problem import PRIMARY, SAFE, Problem
from tablesafe.structure import Dimension, Hierarchy, TableStructure


def grid_problem(inner, *, sensitive=(), upl=None, lpl=None, spl=None, contributors=None):
    """A two-way table with row/column totals built from its inner cells.

    ``inner`` is an (R, C) array. Cells are addressed by (row, col) with row/col codes
    1..R, 1..C and 0 for the total; the returned function ``at(r, c)`` gives the cell
    index. ``sensitive`` lists (r, c) pairs; ``upl``/``lpl``/``spl`` map (r, c) -> level.
    """
    inner = np.asarray(inner, dtype=float)
    r, c = inner.shape
    rows = Hierarchy.flat([str(i) for i in range(1, r + 1)])
    cols = Hierarchy.flat([str(j) for j in range(1, c + 1)])
    ts = TableStructure([Dimension("row", rows), Dimension("col", cols)])
    grid = np.zeros((r + 1, c + 1))
    grid[1:, 1:] = inner
    grid[0, 1:] = inner.sum(axis=0)
    grid[1:, 0] = inner.sum(axis=1)
    grid[0, 0] = inner.sum()

    def at(i, j):
        return i * (c + 1) + j

    n = (r + 1) * (c + 1)
    status = np.array([SAFE] * n)
    for rc in sensitive:
        status[at(*rc)] = PRIMARY
    levels = {}
    for name, spec in (("upl", upl), ("lpl", lpl), ("spl", spl)):
        arr = np.zeros(n)
        for rc, v in (spec or {}).items():
            arr[at(*rc)] = v
        levels[name] = arr
    contrib = None
    if contributors is not None:
        contrib = np.full(n, 10, dtype=int)
        for rc, v in contributors.items():
            contrib[at(*rc)] = v
    p = Problem.from_arrays(grid.ravel(), ts.relations(), status=status,
                            names=ts.cell_names(), contributors=contrib, **levels)
    return p, at


@pytest.fixture
def grid():
    """The :func:`grid_problem` builder."""
    return grid_problem


@pytest.fixture(scope="session")
def insider_case():
    """A generated three-way table of 1,296 cells with holdings and a pattern made
    without singleton protection, so that single respondents do find cells to narrow:
    ``(problem, withheld mask)``."""
    from tablesafe.suppress.attacker import Bounds
    from tablesafe.suppress.modular import modular_pattern
    from tablesafe.synthetic import problem_from_data, synthetic_preset

    p = problem_from_data(synthetic_preset("1k3d", seed=1), p=15, use_holdings=True)
    w, _ = modular_pattern(p, Bounds.of(p, singleton=False), workers=1)
    return p, w | p.sensitive

