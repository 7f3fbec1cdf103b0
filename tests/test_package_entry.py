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


def test_stage_functions_show_their_own_signature_and_description():
    """Issue 13, item 5: ``inspect.signature`` and ``help()`` of the callable stage
    subpackages give the main function's arguments and docstring, not ``(*args, **kwargs)``."""
    import pydoc

    for name in ("tabulate", "suppress", "audit"):
        stage = getattr(tablesafe, name)
        main = getattr(stage, name)
        assert inspect.signature(stage) == inspect.signature(main), name
        text = pydoc.render_doc(stage, renderer=pydoc.plaintext)
        head = text[: text.index("PACKAGE CONTENTS")]
        first_argument = next(iter(inspect.signature(main).parameters))
        assert f"tablesafe.{name}({first_argument}" in head, name
        assert inspect.getdoc(main).splitlines()[0] in head, name


def test_tabulate_takes_the_dimension_forms_protect_takes():
    """Issue 13, item 5: ``tabulate(df, {"industry": "industry.csv", ...}, ...)`` used the
    dict's keys as plain dimensions and dropped the hierarchies; it takes every form
    ``protect`` takes and gives the same table for each."""
    from pathlib import Path

    import pandas as pd

    ex = Path(__file__).resolve().parents[1] / "examples"
    df = pd.read_csv(ex / "enterprises.csv")
    hier = {"industry": str(ex / "industry.csv"), "region": str(ex / "region.hrc")}
    forms = [
        hier,
        [f"{k}={v}" for k, v in hier.items()],
        list(hier.items()),
        [dims.DimSpec(k, v) for k, v in hier.items()],
    ]
    tables = [tablesafe.tabulate(df, form, "turnover") for form in forms]
    assert {"A", "C", "North"} <= set(tables[0].model.codes["industry"]) | set(tables[0].model.codes["region"])
    for t in tables[1:]:
        assert t.model.codes.equals(tables[0].model.codes)
        assert (t.value == tables[0].value).all()
    result = tablesafe.protect(df, dims=hier, response="turnover", rules="p(15)", method="none")
    assert len(result.cells) == tables[0].n
