"""Cells that copy another (a code that is its parent's only child) are protected once.

Real classifications have such codes (tau-ARGUS's test data: 250 of the 268 four-digit
IndustryCode groups of tau_testW have one five-digit class). The tables here are
generated, then given one more level in which some codes have a single child.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from _suppress_gen import independent_audit

from tablesafe.audit import audit, check_certificates
from tablesafe.problem import PROTECTED, Problem
from tablesafe.structure import Hierarchy
from tablesafe.suppress import suppress
from tablesafe.suppress.twins import _collapsed, collapse_twins
from tablesafe.synthetic import SyntheticData, problem_from_data, synthetic_data


def _with_only_children(syn: SyntheticData, every: int = 2, copies: bool = True) -> SyntheticData:
    """``syn`` with one more industry level: every ``every``-th leaf gets a single child
    (its code + ``x``) that takes its records (``copies``; otherwise it stays a leaf);
    the others get two children."""
    h = syn.hierarchies["industry"]
    tree: dict[str, list[str]] = {}
    for i, c in enumerate(h.codes):
        kids = [h.codes[j] for j in h.children(i)]
        if kids:
            tree[c] = kids
    data = syn.data.copy()
    rng = np.random.default_rng(7)
    new_code = data["industry"].astype(str).to_numpy().copy()
    for j, leaf in enumerate(h.leaves):
        if j % every == 0:
            if not copies:
                continue
            tree[leaf] = [leaf + "x"]
            new_code[new_code == leaf] = leaf + "x"
        else:
            tree[leaf] = [leaf + "y", leaf + "z"]
            rows = np.flatnonzero(new_code == leaf)
            new_code[rows] = np.where(rng.random(len(rows)) < 0.5, leaf + "y", leaf + "z")
    data["industry"] = new_code
    hier = dict(syn.hierarchies)
    hier["industry"] = Hierarchy.from_tree(h.total, tree)
    return SyntheticData(data=data, hierarchies=hier, response=syn.response, tables=syn.tables)


@pytest.fixture(scope="module")
def tables() -> tuple[Problem, Problem]:
    """(a table with copies, the same table without them: one level shorter where the
    copies are)."""
    syn = synthetic_data([[3, 2], [4]], 220, seed=3, holding_cohesion=0.5)
    return problem_from_data(_with_only_children(syn)), problem_from_data(_with_only_children(syn, copies=False))


def test_a_chain_of_only_children_collapses_to_its_top():
    h = Hierarchy.from_tree("T", {"T": ["A", "B"], "A": ["A1"], "A1": ["A11"], "B": ["B1", "B2"]})
    small, up = _collapsed(h)
    assert up == {"A1": "A", "A11": "A"}
    assert small.codes == ("T", "A", "B", "B1", "B2")
    assert small.leaves == ["A", "B1", "B2"]
    # a dimension that would shrink to its total is left alone
    single = Hierarchy.from_tree("T", {"T": ["A"], "A": ["A1"]})
    assert _collapsed(single) == (single, {})


def test_the_merged_problem_is_the_table_without_the_copies(tables):
    deeper, shorter = tables
    twins = collapse_twins(deeper)
    assert twins is not None
    small = twins.problem
    # one cell per set of copies: exactly the table one level shorter
    assert twins.merged == deeper.n - shorter.n > 0
    order = pd.Index(shorter.names.astype(str)).get_indexer(small.names.astype(str))
    assert (order >= 0).all() and len(np.unique(order)) == shorter.n
    np.testing.assert_allclose(small.value, shorter.value[order])
    np.testing.assert_array_equal(small.sensitive, shorter.sensitive[order])
    np.testing.assert_allclose(small.upl, shorter.upl[order])
    np.testing.assert_array_equal(small.contributors, shorter.contributors[order])
    assert small.relations.shape[0] == shorter.relations.shape[0]
    np.testing.assert_allclose(small.relations @ small.value, 0.0, atol=1e-6)
    # the cost of a merged cell is what withholding all its copies costs
    np.testing.assert_allclose(np.bincount(twins.rep, weights=deeper.cost), small.cost)


def test_copies_are_withheld_together_and_the_pattern_passes_an_independent_audit(tables):
    deeper, _ = tables
    pat = suppress(deeper, "auto")
    twins = collapse_twins(deeper)
    w = np.asarray(pat.withheld)
    # every copy shares its cell's status
    for j in range(twins.problem.n):
        members = w[twins.rep == j]
        assert members.all() or not members.any()
    assert pat.stats["copies_merged"] == twins.merged
    assert pat.stats["withheld"] == int(w.sum())
    assert pat.proof in ("audit", "certificates")
    assert audit(deeper, w, insider=False).ok
    assert independent_audit(deeper, w) == []


def test_certificates_of_the_merged_problem_prove_the_original(tables):
    deeper, _ = tables
    pat = suppress(deeper, "fast", certificates=True)
    assert pat.proof == "certificates"
    certs = pat.certificates
    assert certs is not None
    # certificates name the original cells, copies included, and hold there
    assert set(certs["cell"]) <= set(deeper.names.astype(str))
    assert set(certs["target"]) == set(deeper.names[deeper.sensitive & np.asarray(pat.withheld)].astype(str))
    assert check_certificates(deeper, pat.withheld, certs) == []


def test_copies_that_disagree_are_not_merged(tables):
    deeper, _ = tables
    twins = collapse_twins(deeper)
    # a copy of a sensitive cell that must be published: no pattern can keep both
    sens = np.flatnonzero(deeper.sensitive)
    j = next(int(twins.rep[k]) for k in sens if (twins.rep == twins.rep[k]).sum() > 1)
    members = np.flatnonzero(twins.rep == j)
    copy = next(int(i) for i in members if deeper.sensitive[i]) if deeper.sensitive[members].all() else \
        next(int(i) for i in members if not deeper.sensitive[i])
    status = deeper.status.copy()
    status[copy] = PROTECTED
    assert collapse_twins(deeper.copy(status=status)) is None
    # nor a table whose relations carry offsets (rounded input)
    rhs = deeper.rhs.copy()
    rhs[0] = 1.0
    assert collapse_twins(deeper.copy(rhs=rhs)) is None


def test_a_table_without_copies_is_solved_as_it_is(tables):
    _, shorter = tables
    assert collapse_twins(shorter) is None
    assert "copies_merged" not in suppress(shorter, "auto").stats


def test_protect_reports_the_copies_and_its_insider_audit_finds_nothing():
    """End to end from microdata: an industry classification by code digits (1, 2, 3)
    in which group ``21`` has the single class ``211`` and division ``3`` the single
    group ``31`` with the single class ``311``."""
    from tablesafe import protect
    from tablesafe.report import render_report

    rng = np.random.default_rng(11)
    classes = ["111", "112", "121", "122", "211", "221", "222", "311"]
    rows = []
    for code in classes:
        for region in ("N", "S", "E", "W"):
            for _ in range(int(rng.integers(1, 5))):
                rows.append((code, region, float(np.round(rng.lognormal(4, 1.4)))))
    data = pd.DataFrame(rows, columns=["industry", "region", "turnover"])
    dims = {"industry": Hierarchy.from_lengths(data["industry"], [1, 2, 3]),
            "region": Hierarchy.flat(["N", "S", "E", "W"])}
    result = protect(data, dims, "turnover", "p(15)", method="auto")
    stats = result.pattern.stats
    # 211 copies 21; 31 and 311 copy 3 (five regions each)
    assert stats["copies_merged"] == 15
    w = np.asarray(result.pattern.withheld)
    names = list(result.problem.names)
    for copy, cell in (("211", "21"), ("31", "3"), ("311", "3")):
        for region in ("Total", "N", "S", "E", "W"):
            assert w[names.index(f"{copy}|{region}")] == w[names.index(f"{cell}|{region}")]
    assert result.audit is not None and result.audit.ok
    assert len(result.audit.insider_findings) == 0
    steps = render_report(result)
    assert "copies merged" in steps and "15 cells copy another cell" in steps


def test_without_table_structure_the_relations_say_which_cells_are_copies(tables, monkeypatch):
    """A problem of relations only (as Castro's JJ instances): the cells of each relation
    ``x_i - x_j = 0`` are merged, and the pattern passes the independent audit."""
    import tablesafe.suppress.dispatch as dispatch

    deeper, _ = tables
    flat = deeper.copy(model=None)
    assert collapse_twins(flat) is None  # only when asked (MERGE_RELATION_COPIES)
    twins = collapse_twins(flat, relations_only=True)
    structured = collapse_twins(deeper)
    assert twins is not None and structured is not None
    assert twins.merged == structured.merged
    assert twins.problem.model is None
    # the same sets of copies either way
    same = pd.crosstab(twins.rep, structured.rep).to_numpy()
    assert ((same > 0).sum(axis=1) == 1).all() and ((same > 0).sum(axis=0) == 1).all()
    monkeypatch.setattr(dispatch, "MERGE_RELATION_COPIES", True)
    pat = suppress(flat, "optimal", time_limit=60)
    assert pat.stats["copies_merged"] == twins.merged
    assert independent_audit(flat, np.asarray(pat.withheld)) == []
    # copies whose values differ (a relation x_i - x_j = 0 the data do not meet) stay apart
    value = flat.value.copy()
    k = int(np.flatnonzero(np.bincount(twins.rep) > 1)[0])
    value[np.flatnonzero(twins.rep == k)[0]] += 1.0
    assert collapse_twins(flat.copy(value=value), relations_only=True) is None


def test_linked_tables_with_copies_are_merged_and_protected_in_one_model():
    """Two linked tables (industry x region, industry x size) sharing the industry codes
    with copies: one merged model, its record cells remapped for the insider model, and
    the pattern passes the independent audit with insiders."""
    from dataclasses import replace

    syn = replace(synthetic_data([[3, 2], [3], [2]], 260, seed=5, holding_cohesion=0.5),
                  tables=(("industry", "region"), ("industry", "size")))
    linked = problem_from_data(_with_only_children(syn))
    assert linked.record_cells is not None and len(linked.model.table_cells) == 2
    twins = collapse_twins(linked)
    assert twins is not None and twins.merged > 0
    small = twins.problem
    assert len(small.model.table_cells) == 2
    # every record cell names codes the merged hierarchies hold
    for d in small.model.dims:
        assert set(small.record_cells[d.name].astype(str)) <= set(d.hierarchy.codes)
    pat = suppress(linked, "auto")
    assert pat.stats["copies_merged"] == twins.merged
    assert independent_audit(linked, np.asarray(pat.withheld)) == []
    assert audit(linked, pat.withheld).ok


def test_progress_says_the_counts_are_of_the_merged_table(tables, capsys):
    deeper, _ = tables
    twins = collapse_twins(deeper)
    suppress(deeper, "auto", progress=True)
    out = capsys.readouterr()
    text = out.out + out.err
    assert (f"copies merged: {twins.merged:,} of {deeper.n:,} cells copy another cell" in text
            and f"solving the table of {twins.problem.n:,} cells" in text)


def test_the_merged_problem_gets_the_limit_less_the_merging_and_the_expansion(tables, monkeypatch):
    """The copies' expansion and proof come after the smaller problem's run, within the
    same limit: the smaller problem is given the limit less what the merging took and
    ``COPIES_SECONDS_PER_TARGET`` per sensitive cell (at least ``COPIES_MIN_SHARE`` of
    it)."""
    import tablesafe.suppress.dispatch as dispatch

    deeper, _ = tables
    given: list[float] = []
    real = dispatch.suppress_merged

    def spy(twins, problem, run, **kw):
        def run_and_note(small):
            pat = run(small)
            given.append(float(pat.stats["time_limit"]))
            return pat
        return real(twins, problem, run_and_note, **kw)

    monkeypatch.setattr(dispatch, "suppress_merged", spy)
    monkeypatch.setattr(dispatch, "COPIES_SECONDS_PER_TARGET", 0.01)
    limit = 30.0
    pat = suppress(deeper, "fast", time_limit=limit)
    after = 0.01 * int(deeper.sensitive.sum())
    assert len(given) == 1 and given[0] <= limit - after
    assert given[0] >= dispatch.COPIES_MIN_SHARE * limit
    assert pat.stats["time_limit"] == given[0] and pat.stats["seconds"] <= 1.1 * limit
    monkeypatch.setattr(dispatch, "COPIES_SECONDS_PER_TARGET", 1.0)  # more than the limit: the floor
    given.clear()
    suppress(deeper, "fast", time_limit=limit)
    assert given == [dispatch.COPIES_MIN_SHARE * limit]
