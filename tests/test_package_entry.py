"""The package's entry points after the dead code went (issue 13): the stage subpackages
stay callable, ``tablesafe.assess`` is the rules stage's own function (its signature and
docstring in ``help()``), and the removed helpers are gone."""

from __future__ import annotations

import inspect

import tablesafe
import tablesafe.io.frames as frames
import tablesafe.rules
import tablesafe.tabulate.dims as dims


def test_stage_subpackages_are_callable_and_keep_their_contents():
    assert callable(tablesafe.audit) and callable(tablesafe.suppress) and callable(tablesafe.tabulate)
    assert tablesafe.tabulate.DimSpec is dims.DimSpec
    model = tablesafe.compile_tables(tablesafe.TableStructure((
        tablesafe.Dimension("a", tablesafe.Hierarchy.flat(["x", "y"])),)))
    cells = tablesafe.CellTable.from_contributions(model, "v", [[8.0, 1.0, 1.0, 1.0], [8.0], [1.0, 1.0, 1.0]])
    problem = tablesafe.assess(cells, "freq(2)")
    pattern = tablesafe.suppress(problem, method="optimal")
    assert pattern.withheld.sum() == 2
    assert tablesafe.audit(problem, pattern) is not None


def test_assess_is_the_rules_stage_function():
    assert tablesafe.assess is tablesafe.rules.assess
    assert "weight_mode" in inspect.signature(tablesafe.assess).parameters


def test_dead_helpers_are_gone():
    assert not hasattr(dims, "dimension") and not hasattr(frames, "_as_text")
