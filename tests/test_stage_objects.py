"""Stage objects refuse inconsistent contents with an InputError (the command line's
"bad input", exit 2, not an internal error), and carry typed fields instead of a
free-form dict (issue 13)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from tablesafe import CellTable, InputError, Problem
from tablesafe.problem import Assessment
from tablesafe.rules import assess
from tablesafe.structure import Dimension, Hierarchy, TableStructure, compile_tables


def _model():
    return compile_tables(TableStructure((Dimension("a", Hierarchy.flat(["x", "y"])),)))


def test_problem_refuses_inconsistent_arrays():
    rel = np.array([[-1.0, 1.0, 1.0]])
    with pytest.raises(InputError, match="Problem.cost has 2 entries for 3 cells"):
        Problem.from_arrays([3.0, 1.0, 2.0], rel, cost=[1.0, 2.0])
    with pytest.raises(InputError, match="relations have 2 columns for 3 cells"):
        Problem.from_arrays([3.0, 1.0, 2.0], np.array([[-1.0, 1.0]]))
    with pytest.raises(InputError, match="rhs has 2 entries for 1 relations"):
        Problem.from_arrays([3.0, 1.0, 2.0], rel, rhs=[0.0, 0.0])
    with pytest.raises(InputError, match="Problem.contributors"):
        Problem.from_arrays([3.0, 1.0, 2.0], rel, contributors=np.array([1, 2]))


def test_celltable_refuses_inconsistent_arrays():
    model = _model()
    with pytest.raises(InputError, match="2 contribution lists for 3 cells"):
        CellTable.from_contributions(model, "v", [[1.0], [2.0]])
    cells = CellTable.from_contributions(model, "v", [[3.0, 1.0], [1.0], [2.0]])
    with pytest.raises(InputError, match="CellTable.value has 2 entries for 3 cells"):
        dataclasses.replace(cells, value=np.zeros(2))
    with pytest.raises(InputError, match="CellTable.abs_top has shape"):
        dataclasses.replace(cells, abs_top=np.zeros((3, 2)))
    with pytest.raises(InputError, match=r"CellTable.extra\['cost'\]"):
        dataclasses.replace(cells, extra={"cost": np.zeros(1)})


def test_problem_carries_typed_fields():
    cells = CellTable.from_contributions(_model(), "turnover", [[10.0, 1.0, 1.0], [5.0, 5.0], [7.0]])
    problem = assess(cells, "p(15)|freq(2)|WGT(1)", weight_mode="sample")
    assert problem.response == "turnover"
    assert isinstance(problem.assessment, Assessment)
    assert problem.assessment.weight_mode == "sample" and problem.assessment.count == "holdings"
    assert problem.assessment.rules == ("p(15)", "freq(2, range=10)")
    # the older dict view reads the same fields
    assert problem.meta["weight_mode"] == "sample" and problem.meta["response"] == "turnover"
    with pytest.raises(dataclasses.FrozenInstanceError):
        problem.assessment.count = "records"  # type: ignore[misc]
    plain = Problem.from_arrays([3.0, 1.0, 2.0], np.array([[-1.0, 1.0, 1.0]]), source="t.jj",
                                notes={"relation_lines": [4]})
    assert plain.meta == {"source": "t.jj", "relation_lines": [4]} and plain.assessment is None


def test_problem_and_result_are_frozen():
    """Stage objects are values: attributes cannot be reassigned; changes make copies."""
    from tablesafe import protect

    problem = Problem.from_arrays([3.0, 1.0, 2.0], np.array([[-1.0, 1.0, 1.0]]), status=["S", "U", "S"],
                                  upl=[0.0, 0.5, 0.0], lpl=[0.0, 0.5, 0.0])
    with pytest.raises(dataclasses.FrozenInstanceError):
        problem.status = np.array(["S", "S", "S"])  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        problem.model = None  # type: ignore[misc]
    changed = problem.copy(cost=np.ones(3))
    assert changed.cost.tolist() == [1.0, 1.0, 1.0] and problem.cost.tolist() == [3.0, 1.0, 2.0]
    result = protect(problem, method="none")
    with pytest.raises(dataclasses.FrozenInstanceError):
        result.audit = None  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        result.method = "optimal"  # type: ignore[misc]
    # the views computed on first use still work on a frozen result
    assert result.status.tolist() == ["S", "U", "S"] and result.counts["U"] == 1
    assert dataclasses.replace(result, marker="x").marker == "x" and result.marker is None
