"""Property: the decomposed, warm-started intervals equal a naive fresh LP per bound."""

from __future__ import annotations

import numpy as np
from _oracle import exact_bounds
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tablesafe.audit import feasibility_intervals
from tablesafe.problem import Problem
from tablesafe.structure import Dimension, Hierarchy, TableStructure


def naive(problem: Problem, withheld: np.ndarray):
    """scipy linprog (fresh HiGHS model) for every bound of every withheld cell."""
    return exact_bounds(problem, withheld)


@st.composite
def tables(draw):
    nr = draw(st.integers(1, 4))
    nc = draw(st.integers(1, 4))
    nested = draw(st.booleans())
    rows = Hierarchy.flat([str(i) for i in range(1, nr + 1)])
    if nested and nc >= 2:
        cols = Hierarchy.from_lengths([f"{a}{b}" for a in (1, 2) for b in range(1, nc + 1)],
                                      [1, 2])
    else:
        cols = Hierarchy.flat([str(j) for j in range(1, nc + 1)])
    ts = TableStructure([Dimension("r", rows), Dimension("c", cols)])
    # inner values on leaf x leaf, aggregated up through the relations
    leaves_r = [i for i in range(len(rows.codes)) if rows.is_leaf(i)]
    leaves_c = [j for j in range(len(cols.codes)) if cols.is_leaf(j)]
    vals = np.zeros((len(rows.codes), len(cols.codes)))
    inner = draw(st.lists(st.integers(0, 50), min_size=len(leaves_r) * len(leaves_c),
                          max_size=len(leaves_r) * len(leaves_c)))
    vals[np.ix_(leaves_r, leaves_c)] = np.array(inner, float).reshape(len(leaves_r),
                                                                        len(leaves_c))
    for _ in range(4):  # fill totals bottom-up (depth <= 3)
        for i in range(len(rows.codes)):
            if not rows.is_leaf(i):
                vals[i] = vals[list(rows.children(i))].sum(axis=0)
        for j in range(len(cols.codes)):
            if not cols.is_leaf(j):
                vals[:, j] = vals[:, list(cols.children(j))].sum(axis=1)
    value = vals.ravel()
    n = value.size
    withheld = np.array(draw(st.lists(st.booleans(), min_size=n, max_size=n)))
    finite = draw(st.booleans())
    upper = value * 1.5 + 5 if finite else np.full(n, np.inf)
    lower = np.maximum(value * 0.5 - 3, 0) if draw(st.booleans()) else np.zeros(n)
    p = Problem.from_arrays(value, ts.relations(), lower=lower, upper=upper,
                            names=ts.cell_names())
    return p, withheld


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tables())
def test_intervals_equal_naive_lp(case):
    p, withheld = case
    lo, hi = feasibility_intervals(p, withheld)
    nlo, nhi = naive(p, withheld)
    for i in np.flatnonzero(withheld):
        for got, want in ((lo[i], nlo[i]), (hi[i], nhi[i])):
            if np.isinf(want):
                assert got == want
            else:
                assert abs(got - want) <= 1e-6 * max(1.0, abs(want)), (i, got, want)
    pub = ~withheld
    assert np.array_equal(lo[pub], p.value[pub]) and np.array_equal(hi[pub], p.value[pub])


@st.composite
def insider_cases(draw):
    p, withheld = draw(tables())
    n = p.n
    sens = np.array(draw(st.lists(st.booleans(), min_size=n, max_size=n))) & withheld
    sens &= p.value > 0
    single = np.array(draw(st.lists(st.booleans(), min_size=n, max_size=n))) & (p.value > 0)
    frac = draw(st.sampled_from([0.1, 0.3, 0.6]))
    status = np.where(sens, "U", "S")
    lev = np.where(sens, np.ceil(p.value * frac), 0.0)
    contributors = np.where(single, 1, 5)
    q = p.copy(status=status, upl=lev, lpl=lev, contributors=contributors)
    return q, withheld


def _overlap(a: str, b: str) -> bool:
    """Cells of :func:`tables` that share a part (every cell has respondents there): in
    each dimension one code equals the other, is the total, or is its prefix."""
    return all(x == y or "Total" in (x, y) or x.startswith(y) or y.startswith(x)
               for x, y in zip(a.split("|"), b.split("|")))


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(insider_cases())
def test_singleton_insiders_equal_brute_force(case):
    """The shortcut re-checks (stored tables, convex segments) find exactly the
    findings of a fresh audit per singleton with its cell fixed (seed 002 singletons)."""
    from tablesafe.audit import insider_findings, verdicts

    p, withheld = case
    got = insider_findings(p, withheld)
    got_set = set(zip(got["target"], got["attacker"], got["verdict"]))
    lo, hi = feasibility_intervals(p, withheld)
    base_v = verdicts(p, lo, hi)
    want = set()
    exact_lo, exact_hi = lo, hi
    for i in np.flatnonzero(withheld & (p.contributors == 1)):
        if exact_lo[i] == exact_hi[i]:
            continue  # already known exactly: knowing it adds nothing
        fixed = p.copy(lower=p.lower.copy(), upper=p.upper.copy())
        fixed.lower[i] = fixed.upper[i] = p.value[i]
        flo, fhi = feasibility_intervals(fixed, withheld)
        v = verdicts(p, flo, fhi)
        for t in np.flatnonzero(p.sensitive & withheld):
            if _overlap(p.names[t], p.names[i]):
                continue  # a contributor of t: its level allows for that (one attacker model)
            if base_v[t] == "protected" and v[t] != "protected":
                want.add((p.names[t], f"sole contributor of {p.names[i]}", v[t]))
    assert got_set == want


@st.composite
def verdict_cases(draw):
    """Insider cases with some levels zeroed and some sliding levels."""
    p, withheld = draw(insider_cases())
    n = p.n
    zero_up = np.array(draw(st.lists(st.booleans(), min_size=n, max_size=n)))
    slide = np.array(draw(st.lists(st.booleans(), min_size=n, max_size=n)))
    upl = np.where(zero_up, 0.0, p.upl)
    spl = np.where(slide & p.sensitive, 2.5 * p.lpl, 0.0)
    return p.copy(upl=upl, spl=spl), withheld


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(verdict_cases(), st.sampled_from([1, 20]))
def test_audit_verdicts_equal_naive_lp(case, batch_min):
    """The audit stops each bound at its goal (verdict_goals) and pushes many cells at
    once (batch LPs, forced on small tables with ``batch_min=1``): its verdicts equal
    those of exact naive bounds, and its reported bounds are inner bounds that are exact
    wherever the verdict fails."""
    from unittest import mock

    from tablesafe.audit import audit, blocksolve, verdicts

    p, withheld = case
    with mock.patch.object(blocksolve, "BATCH_MIN_TARGETS", batch_min):
        res = audit(p, withheld, insider=False)
        ins = audit(p, withheld, insider=True)
    exact = audit(p, withheld, insider=False, exact_intervals=True)
    nlo, nhi = naive(p, withheld)
    lo = np.array([nlo.get(i, p.value[i]) for i in range(p.n)])
    hi = np.array([nhi.get(i, p.value[i]) for i in range(p.n)])
    want = verdicts(p, lo, hi)
    assert list(res.verdict) == list(want)
    assert list(exact.verdict) == list(want)
    assert list(ins.verdict) == list(want)
    for i in np.flatnonzero(p.sensitive & withheld):
        tol = 1e-6 * max(1.0, abs(hi[i]) if np.isfinite(hi[i]) else 1.0)
        assert res.upper[i] <= hi[i] + tol and res.lower[i] >= lo[i] - tol
    ref = audit(p, withheld, insider=True, exact_intervals=True).insider_findings
    key = ["target", "attacker", "verdict"]
    assert set(map(tuple, ins.insider_findings[key].to_numpy())) == \
        set(map(tuple, ref[key].to_numpy()))
