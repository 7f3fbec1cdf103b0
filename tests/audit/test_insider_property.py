"""Property: the bulk insider checks equal one fresh LP per (target, insider, direction).

Small two- and three-way tables (with and without their table structure, i.e. overlap
read from the codes or from the relations), random single respondents and levels. The
reference solves, with scipy's ``linprog`` (a fresh model each time), the attacker's
bounds of every protected sensitive cell with one insider's cell fixed, for every
insider whose cell does not overlap the target (decided here from the codes). The
shortcuts are forced on small tables: neighbourhoods of a few cells at two levels (``LOCAL_LEVELS``),
relaxations of two hops (``RELAX_LEVELS``), no
stored tables (``POOL_MAX_ENTRIES``), one stored table per target (``POOL_ROWS``) and batch LPs for a single open target (``BATCH_MIN``).
"""

from __future__ import annotations

from unittest import mock

import numpy as np
from _oracle import exact_bounds
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tablesafe.audit import insider_findings, singletons, verdicts
from tablesafe.problem import Problem
from tablesafe.structure import Dimension, Hierarchy, TableStructure, compile_tables


def _bounds(p: Problem, withheld: np.ndarray, fixed: int | None = None):
    """Exact attacker bounds of the sensitive withheld cells (``fixed``: a cell known
    exactly); other cells keep their value."""
    lo_d, hi_d = exact_bounds(p, withheld, fixed=fixed, sensitive_only=True)
    lo, hi = p.value.astype(float).copy(), p.value.astype(float).copy()
    for i, v in lo_d.items():
        lo[i] = v
    for i, v in hi_d.items():
        hi[i] = v
    return lo, hi


def _nested(a: str, b: str) -> bool:
    return a == b or "T" in (a, b) or a.startswith(b) or b.startswith(a)


@st.composite
def cases(draw):
    ndim = draw(st.integers(2, 3))
    dims = []
    for j in range(ndim):
        k = draw(st.integers(1, 3 if ndim == 2 else 1))
        if draw(st.booleans()):
            codes = [f"{a}{b}" for a in (1, 2) for b in range(1, k + 1)]
            h = Hierarchy.from_lengths(codes, [1, 2], total="T")
        else:
            h = Hierarchy.flat([str(i) for i in range(1, k + 2)], total="T")
        dims.append(Dimension("abc"[j], h))
    ts = TableStructure(dims)
    model = compile_tables(ts)
    codes = model.codes.to_numpy(dtype=str)
    n = ts.size
    leaf = np.ones(n, dtype=bool)
    for j, d in enumerate(dims):
        h = d.hierarchy
        pos = {c: i for i, c in enumerate(h.codes)}
        leaf &= np.array([h.is_leaf(pos[c]) for c in codes[:, j]])
    inner = np.array(draw(st.lists(st.integers(0, 30), min_size=int(leaf.sum()),
                                   max_size=int(leaf.sum()))), dtype=float)
    value = np.zeros(n)
    value[leaf] = inner
    # every cell is the sum of the leaves below it
    for i in np.flatnonzero(~leaf):
        below = np.ones(n, dtype=bool)
        for j in range(ndim):
            below &= np.array([_nested_below(c, codes[i, j]) for c in codes[:, j]])
        value[i] = value[below & leaf].sum()
    # dense patterns: most targets protected against outsiders, insiders then matter
    withheld = np.array(draw(st.lists(st.sampled_from([True, True, True, False]),
                                      min_size=n, max_size=n)))
    sens = np.array(draw(st.lists(st.booleans(), min_size=n, max_size=n))) & withheld & (value > 0)
    single = np.array(draw(st.lists(st.booleans(), min_size=n, max_size=n))) & (value > 0)
    frac = draw(st.sampled_from([0.1, 0.3, 0.6]))
    lev = np.where(sens, np.ceil(value * frac), 0.0)
    upper = value * 1.5 + 5 if draw(st.booleans()) else np.full(n, np.inf)
    p = Problem.from_arrays(value, ts.relations(), names=model.cell_names(),
                            status=np.where(sens, "U", "S"), upl=lev, lpl=lev,
                            upper=upper, contributors=np.where(single, 1, 4))
    if draw(st.booleans()):
        p = p.copy(model=model)
    return p, withheld, codes


def _nested_below(c: str, parent: str) -> bool:
    return parent == "T" or c.startswith(parent)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cases(), st.sampled_from([(4, 0, 1, 32), (600, 50_000_000, 4, 32), (4, 50_000_000, 1, 1)]))
def test_insider_findings_equal_fresh_lps(case, knobs):
    p, withheld, codes = case
    cap, pool, batch, rows = knobs
    with mock.patch.object(singletons, "LOCAL_LEVELS", ((2, cap), (5, 2 * cap))), \
            mock.patch.object(singletons, "RELAX_LEVELS", ((2, 2 * cap),)), \
            mock.patch.object(singletons, "POOL_MAX_ENTRIES", pool), \
            mock.patch.object(singletons, "POOL_ROWS", rows), \
            mock.patch.object(singletons, "BATCH_MIN", batch):
        got = insider_findings(p, withheld)
    got_set = set(zip(got["target"], got["attacker"], got["verdict"]))
    lo, hi = _bounds(p, withheld)
    base = verdicts(p, lo, hi)
    want = set()
    for i in np.flatnonzero(withheld & (p.contributors == 1)):
        if p.sensitive[i] and lo[i] == hi[i]:
            continue  # known exactly already: its respondent learns nothing more
        flo, fhi = _bounds(p, withheld, fixed=int(i))
        v = verdicts(p, flo, fhi)
        for t in np.flatnonzero(p.sensitive & withheld):
            if t == i or base[t] != "protected" or v[t] == "protected":
                continue
            if all(_nested(x, y) for x, y in zip(codes[t], codes[i])):
                continue  # overlapping cells (all occupied here): a contributor of t
            want.add((p.names[t], f"sole contributor of {p.names[i]}", v[t]))
    assert got_set == want


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cases(), st.data())
def test_recheck_after_growth_finds_what_a_full_audit_finds(case, data):
    """A pattern grown from an audited one: checking again only the pairs whose target
    failed before or whose respondent's cell is new finds every finding of a full audit
    (the audit-guided repair relies on this; seed 002, "singletons": withholding more
    cells only widens the intervals)."""
    from tablesafe.audit import audit

    p, withheld, _codes = case
    dropped = np.array(data.draw(st.lists(st.booleans(), min_size=p.n, max_size=p.n)))
    before = withheld & ~(dropped & ~p.sensitive)
    first = audit(p, before, keep_tables=True)
    failed = p.sensitive & before & (first.verdict != "protected")
    index = {str(name): i for i, name in enumerate(p.names)}
    for t in first.insider_findings["target"] if len(first.insider_findings) else ():
        failed[index[str(t)]] = True
    full = audit(p, withheld)
    again = audit(p, withheld, recheck=(failed, withheld & ~before))
    assert list(again.verdict) == list(full.verdict)
    # the first audit's tables, still feasible, settle verdicts before any LP; the
    # verdicts and findings stay those of the full audit
    seeded = audit(p, withheld, recheck=(failed, withheld & ~before), seeds=first.tables)
    assert list(seeded.verdict) == list(full.verdict)
    assert seeded.stats.get("seeds_dropped", 0) == 0
    if any(len(cells) for cells, _ in first.tables.values()):
        assert seeded.stats["seeds"] > 0

    def pairs(res):
        f = res.insider_findings
        return set(zip(f["target"], f["attacker"], f["verdict"])) if len(f) else set()

    assert pairs(again) == pairs(full)
    assert pairs(seeded) == pairs(full)
