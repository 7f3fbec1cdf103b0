"""Property test: the vectorised assess agrees with a plain per-cell reference.

The reference below works from the raw records (no CellTable arrays), cell by cell,
in exact rational arithmetic, with the formulas of seed 000 (sections 3-5: p%, (p,q)
strong prior eq. 13, (n,k) eq. 16, waivers section 4) and seed 002 (frequency rule,
holdings, waivers for (2,k)).
"""

from __future__ import annotations

from fractions import Fraction as F

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rules_builders import build_cells

from tablesafe.errors import RuleError
from tablesafe.rules import assess


def _units(records, cell_ids):
    """Unit contributions of the cells in ``cell_ids``: {unit: (sum, waived)}."""
    acc: dict[str, list] = {}
    for j, r in enumerate(records):
        if r["cell"] in cell_ids:
            u = r.get("unit", f"rec{j}")
            e = acc.setdefault(u, [F(0), [], 0])
            e[0] += F(r["value"])
            e[1].append(r.get("waived", False))
            e[2] += 1
    return {u: (v, all(w), nrec) for u, (v, w, nrec) in acc.items()}


def _reference(records, ncells, rules, count="holdings"):
    """Status ('U'/'S'/'Z') and upper level per cell name, computed one cell at a time."""
    out = {}
    groups = {f"c{i + 1}": {i} for i in range(ncells)}
    groups["Total"] = set(range(ncells))
    for name, ids in groups.items():
        units = _units(records, ids)
        if not units:
            out[name] = ("Z", 0.0)
            continue
        vals = sorted((v for v, _, _ in units.values()), reverse=True)
        X = sum(vals)
        waived = [v for v, w, _ in units.values() if w]
        nonwaived = sorted((v for v, w, _ in units.values() if not w), reverse=True)
        xs = nonwaived[0] if nonwaived else F(0)
        others_all = list(vals)
        if nonwaived:
            others_all.remove(xs)  # drop one unit of value x_s (a non-waived one)
        levels = []
        for kind, a, b in rules:
            if kind == "freq":
                cnt = len(units) if count == "holdings" else sum(n for _, _, n in units.values())
                if cnt < a:
                    levels.append(F(b) / 100 * abs(X))
                continue
            if kind in ("p", "pq"):
                c = b if kind == "p" else 1  # intruders
                rem = X - xs - sum(others_all[:c])
                s = (F(a) / 100 * xs - rem) if kind == "p" else (F(a) / F(b) * xs - rem)
            elif kind == "nk":
                n_, k = a, F(b)
                if not waived:
                    s = 100 / k * sum(vals[:n_]) - X
                elif n_ == 1:
                    largest_waived = max(waived)
                    base = X - vals[0] if largest_waived >= xs else X
                    s = 100 / k * xs - base
                else:  # n == 2
                    s = 100 / k * (xs + (others_all[0] if others_all else 0)) - X
            if s > 0:
                levels.append(s)
        out[name] = ("U", float(max(levels))) if levels else ("S", 0.0)
    return out


record = st.fixed_dictionaries(
    {
        "cell": st.integers(0, 4),
        "value": st.integers(0, 1000),
        "unit": st.sampled_from(["A", "B", "C", "D", "E", "F", "G", "H"]),
        "waived": st.booleans(),
    }
)
rule_sets = st.lists(
    st.one_of(
        st.tuples(st.just("p"), st.integers(1, 60), st.integers(1, 3)),
        st.tuples(st.just("pq"), st.integers(1, 40), st.integers(41, 100)),
        st.tuples(st.just("nk"), st.integers(1, 2), st.integers(50, 95)),
        st.tuples(st.just("freq"), st.integers(2, 5), st.integers(0, 20)),
    ),
    min_size=1,
    max_size=4,
)


def _rule_strings(rules):
    out = []
    for kind, a, b in rules:
        out.append({"p": f"p({a}, n={b})", "pq": f"pq({a}, {b})", "nk": f"nk({a}, {b})", "freq": f"freq({a}, range={b})"}[kind])
    return out


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    records=st.lists(record, max_size=25),
    rules=rule_sets,
    holdings=st.booleans(),
    waivers=st.booleans(),
    count=st.sampled_from(["holdings", "records"]),
)
def test_vectorised_equals_reference(records, rules, holdings, waivers, count):
    """Random contributions, several rules, with and without holdings and waivers:
    the same statuses and upper levels as the per-cell reference."""
    recs = []
    for j, r in enumerate(records):
        r = dict(r)
        if not holdings:
            r["unit"] = f"rec{j}"
        if not waivers:
            r["waived"] = False
        recs.append(r)
    ncells = 5
    cells = build_cells(recs, ncells, k=4, holding="h" if holdings else None)
    ref = _reference(recs, ncells, rules, count)
    prob = assess(cells, _rule_strings(rules), count=count)
    names = list(prob.names)
    for name, (status, upl) in ref.items():
        i = names.index(name)
        assert prob.status[i] == status, (name, rules)
        assert prob.upl[i] == pytest.approx(upl, rel=1e-9, abs=1e-9), (name, rules)
        assert prob.lpl[i] == prob.upl[i]


@settings(max_examples=30, deadline=None)
@given(records=st.lists(record, min_size=1, max_size=15), n=st.integers(3, 4))
def test_dominance_n3_with_waivers_refused(records, n):
    """Seed 000 section 4.2: (n,k) with n >= 3 and any waiver is refused."""
    cells = build_cells(records, 5, k=4)
    if np.asarray(cells.top_waived).any():
        with pytest.raises(RuleError, match="no sound"):
            assess(cells, f"nk({n}, 80)")
    else:
        assess(cells, f"nk({n}, 80)")


@settings(max_examples=60, deadline=None)
@given(
    sizes=st.lists(st.lists(st.integers(1, 100), min_size=0, max_size=4), min_size=1, max_size=6),
    n_min=st.integers(2, 5),
)
def test_directional_levels_equal_brute_force(sizes, n_min):
    """Seed 000 section 5.3 levels against a brute-force search over all combinations of
    the other few-unit cells of the relation (one relation: the total and its parts)."""
    from itertools import combinations

    records = [{"cell": i, "value": v} for i, xs in enumerate(sizes) for v in xs]
    cells = build_cells(records, len(sizes), k=4)
    prob = assess(cells, f"freq({n_min}, range=0)", freq_levels="directional")
    names = list(prob.names)
    cnt = {nm: int(c) for nm, c in zip(names, cells.contributors)}
    val = {nm: float(v) for nm, v in zip(names, cells.value)}
    unsafe = [nm for nm in names if 0 < cnt[nm] < n_min]
    for nm in unsafe:
        others = [o for o in unsafe if o != nm]
        best = 0.0
        for r in range(1, len(others) + 1):
            for combo in combinations(others, r):
                if cnt[nm] + sum(cnt[o] for o in combo) <= n_min - 1:
                    best = max(best, sum(val[o] for o in combo))
        i = names.index(nm)
        if best > 0:
            assert prob.upl[i] == pytest.approx(best, rel=1e-5) and prob.upl[i] > best
        else:
            assert prob.upl[i] == 0


@settings(max_examples=80, deadline=None)
@given(
    recs=st.lists(
        st.tuples(st.integers(0, 2), st.integers(1, 500), st.sampled_from([1.0, 1.25, 1.5, 2.0, 3.75, 5.0, 9.0])),
        max_size=12,
    ),
    p=st.integers(1, 60),
    k=st.integers(40, 95),
)
def test_weight_modes_equal_reference(recs, p, k):
    """Seed 000 section 8 and seed 002 "Sampling weights": the three weight modes against
    direct computations from the records (expansion done by physically copying values)."""
    records = [{"cell": c, "value": v, "weight": w} for c, v, w in recs]
    cells = build_cells(records, 3, k=4, weighted=True)
    names = list(cells.model.cell_names())
    probs = {m: assess(cells, [f"p({p})", f"nk(2, {k})"], weight_mode=m) for m in ("expand", "sample", "known")}
    for name in names:
        ids = {0, 1, 2} if name == "Total" else {int(name[1:]) - 1}
        sub = [(F(v), F(w)) for c, v, w in recs if c in ids]
        i = names.index(name)
        if not sub:
            assert all(pr.status[i] == "Z" for pr in probs.values())
            continue
        X = sum(v * w for v, w in sub)
        expanded = []
        for v, w in sub:
            full = int(w)
            expanded += [v] * full
            if w - full:
                expanded.append(v * (w - full))
        expanded.sort(reverse=True)
        e = expanded + [F(0)] * 2
        sample = sorted(sub, key=lambda t: t[0], reverse=True) + [(F(0), F(1))] * 2
        cases = {
            "expand": (F(p) / 100 * e[0] - (X - e[0] - e[1]), 100 / F(k) * (e[0] + e[1]) - X),
            "sample": (F(p) / 100 * sample[0][0] - (X - sample[0][0] - sample[1][0]),
                       100 / F(k) * (sample[0][0] + sample[1][0]) - X),
            "known": (F(p) / 100 * sample[0][0] - (X - sample[0][0] * sample[0][1] - sample[1][0] * sample[1][1]),
                      100 / F(k) * (sample[0][0] * sample[0][1] + sample[1][0] * sample[1][1]) - X),
        }
        for mode, (s_p, s_nk) in cases.items():
            pr = probs[mode]
            want = max(s_p, s_nk)
            if want > 0:
                assert pr.status[i] == "U", (mode, name)
                assert pr.upl[i] == pytest.approx(float(want), rel=1e-9, abs=1e-9), (mode, name)
            else:
                assert pr.status[i] == "S", (mode, name)


@settings(max_examples=60, deadline=None)
@given(
    recs=st.lists(st.tuples(st.integers(0, 2), st.integers(-300, 300), st.booleans()), max_size=12),
    p=st.integers(1, 40),
    q=st.integers(41, 100),
    r1=st.integers(10, 90),
    r2=st.integers(10, 90),
)
def test_absolute_pq_and_request_equal_reference(recs, p, q, r1, r2):
    """Seed 001 section 5 ((p,q) on absolute contributions, data with negatives) and the
    request rule of seed 002 ("Foreign trade rules") against direct computations."""
    records = [{"cell": c, "value": v, "request": rq} for c, v, rq in recs]
    cells = build_cells(records, 3, k=4)
    names = list(cells.model.cell_names())
    prob = assess(cells, [f"pq({p}, {q})", f"request({r1}, {r2})"], bounds=(np.full(cells.n, -1e9), np.full(cells.n, 1e9)))
    for name in names:
        ids = {0, 1, 2} if name == "Total" else {int(name[1:]) - 1}
        sub = [(F(v), rq) for c, v, rq in recs if c in ids]
        i = names.index(name)
        if not sub:
            assert prob.status[i] == "Z"
            continue
        absv = sorted((abs(v) for v, _ in sub), reverse=True) + [F(0)] * 2
        levels = []
        s_pq = F(p) / F(q) * absv[0] - (sum(absv) - absv[0] - absv[1])
        if s_pq > 0:
            levels.append(s_pq)
        # the request rule reads the signed ordering and the cell value
        X = sum(v for v, _ in sub)
        srt = sorted(sub, key=lambda t: t[0], reverse=True) + [(F(0), False)]
        if srt[0][1] and srt[0][0] > F(r1) / 100 * X:
            levels.append(100 / F(r1) * srt[0][0] - X)
        if srt[1][1] and srt[1][0] > F(r2) / 100 * X:
            levels.append(100 / F(r2) * srt[1][0] - X)
        if levels:
            assert prob.status[i] == "U", name
            assert prob.upl[i] == pytest.approx(float(max(levels)), rel=1e-9, abs=1e-9)
        else:
            assert prob.status[i] == "S", name
