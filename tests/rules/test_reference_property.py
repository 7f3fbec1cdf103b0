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

from tablesafe.errors import RuleError
from tablesafe.rules import assess
from conftest import build_cells


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
                c = 1 if kind == "p" else 1
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
        st.tuples(st.just("p"), st.integers(1, 60), st.just(0)),
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
        out.append({"p": f"p({a})", "pq": f"pq({a}, {b})", "nk": f"nk({a}, {b})", "freq": f"freq({a}, range={b})"}[kind])
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
