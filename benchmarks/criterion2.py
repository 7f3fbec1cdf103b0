"""Criterion 2 (issue 15; seed 001 sections 4-7): how many units an aggregation of
withheld cells discloses in the patterns of tau-ARGUS OPT and MOD (pytauargus) and of
tablesafe under criterion 1, and what tablesafe's criterion-2 suppression costs.

Run (from the repository root):

    PYTHONPATH=src /work/benchvenv/bin/python benchmarks/criterion2.py [--tables 1k,5k2d]

Tables: generated two-way hierarchical tables with holdings (``1k``: the preset of that
name; ``5k2d``: industry 4/5/4 x region 4/3/3, 15,000 enterprises), p% rule p=15 applied
to holdings on both sides (tau-ARGUS: HOLDING variable, ``P(15,1)|P(15,1)|P(15,1)``; see
tau_runner.py), cost = cell value. For every pattern: withheld value (the secondary
cells' values), seconds, sensitive cells under-protected by the LP audit (criterion 1),
and the units some aggregation of its withheld cells discloses (criterion 2: the p% rule
extended to aggregations, each unit's contributions counted per leaf cell), found by
asking about every unit (``tablesafe.audit.criterion2(..., decide=True, every=True)``).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "src"))

from results_file import run_lines, write_subsection
from tau_runner import run_tau

from tablesafe.audit import audit, criterion2
from tablesafe.audit.aggregation import leaf_basis
from tablesafe.errors import AuditFailure
from tablesafe.suppress import suppress
from tablesafe.suppress.criterion2 import criterion2_pattern
from tablesafe.synthetic import (
    problem_from_data,
    synthetic_contributions,
    synthetic_data,
    synthetic_preset,
)

SECTION = "## Suppression safe under criterion 2 (issue 15)"


def table(name: str):
    if name == "5k2d":
        return synthetic_data([[4, 5, 4], [4, 3, 3]], 15_000, seed=1, holding_cohesion=0.7)
    return synthetic_preset(name, seed=1, holding_cohesion=0.7)


def figures(problem, cf, basis, withheld: np.ndarray, seconds: float) -> dict:
    """Withheld value, criterion-1 audit and criterion-2 disclosures of one pattern."""
    t0 = time.monotonic()
    c2 = criterion2(problem, withheld, cf, p=15, basis=basis, decide=True, every=True)
    c2s = time.monotonic() - t0
    a = audit(problem, withheld, insider=False)
    sens = problem.sensitive
    under = int(np.sum(sens & withheld & (a.verdict != "protected")))
    value = float(np.asarray(problem.value)[withheld & ~sens].sum())
    return {"seconds": seconds, "withheld": int(withheld.sum()), "value": value, "under": under,
            "disclosed": len(c2.disclosed), "parts": c2.parts, "sensitive_parts": c2.sensitive_parts,
            "check": c2s}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tables", default="1k,5k2d")
    ap.add_argument("--tau-minutes", type=float, default=3.0)
    ap.add_argument("--limit", type=float, default=600.0, help="seconds for the criterion-2 suppression")
    ap.add_argument("--no-tau", action="store_true")
    ap.add_argument("--no-write", action="store_true")
    ap.add_argument("--title", default="Criterion 2 beside tau-ARGUS and criterion 1",
                    help="the RESULTS.md subsection to write (replaced when it exists)")
    args = ap.parse_args()
    load0 = os.getloadavg()
    rows = []
    for name in args.tables.split(","):
        syn = table(name)
        problem = problem_from_data(syn, p=15)
        cf = synthetic_contributions(syn)
        basis = leaf_basis(problem)
        base = {"table": name, "cells": problem.n, "sensitive": int(problem.sensitive.sum())}
        if not args.no_tau:
            for spec, label in ((f"OPT(1,{args.tau_minutes:g})", "tau-ARGUS OPT"),
                                (f"MOD(1,{args.tau_minutes:g},1,1,0)", "tau-ARGUS MOD")):
                res = run_tau(syn, spec, timeout=args.tau_minutes * 60 + 60, p=15, holdings=True)
                if "error" in res:
                    rows.append({**base, "tool": label, "note": str(res["error"])[:80]})
                    continue
                names = problem.names.astype(str)
                st = np.array([res["status"].get(n, "?") for n in names])
                mask = np.isin(st, ("U", "M"))
                rows.append({**base, "tool": label, **figures(problem, cf, basis, mask, res["seconds"])})
                print(rows[-1], flush=True)
        t0 = time.monotonic()
        first = suppress(problem, "auto")
        s1 = time.monotonic() - t0
        w1 = np.asarray(first.withheld, dtype=bool)
        rows.append({**base, "tool": "tablesafe auto, criterion 1", **figures(problem, cf, basis, w1, s1)})
        print(rows[-1], flush=True)
        t0 = time.monotonic()
        try:
            w2, stats = criterion2_pattern(problem, cf, p=15, start=w1, time_limit=args.limit)
            after = time.monotonic() - t0
            row = {**base, "tool": "tablesafe auto, criterion 2", **figures(problem, cf, basis, w2, s1 + after),
                   "note": f"{stats['added']} cells added in {stats['rounds']} rounds, {stats['oracle calls']} "
                           f"oracle calls, {after:.1f} s after criterion 1; "
                           f"{stats['cost'] / max(stats['criterion1_cost'], 1e-9):.3f}x criterion 1's value"}
        except AuditFailure as exc:  # a time limit: no pattern proved safe
            row = {**base, "tool": "tablesafe auto, criterion 2", "seconds": s1 + time.monotonic() - t0,
                   "note": f"no pattern: {exc}"[:160]}
        rows.append(row)
        print(rows[-1], flush=True)
    load1 = os.getloadavg()
    if args.no_write:
        return
    lines = [
        *run_lines(f"### {args.title}", "criterion2.py", load0, load1,
                   "Targets (issue 15): criterion-2 suppression of a 1,000-cell table in under 2 minutes with "
                   "at most 15 % more withheld value than criterion 1. 'disclosed' counts units that some "
                   "aggregation of withheld cells discloses (p% rule p=15 on the aggregation); "
                   "'under-protected' counts sensitive cells whose LP audit interval is too narrow "
                   "(criterion 1); tau-ARGUS's patterns are on its own primaries (the same as ours, compared "
                   "in compare_tauargus.py)."),
        "| table | cells | sensitive | tool | seconds | withheld | withheld value (secondaries) | "
        "under-protected (criterion 1) | units disclosed (criterion 2) | parts / with a sensitive aggregation | "
        "check s | note |",
        "|---|---:|---:|---|---:|---:|---:|---:|---:|---|---:|---|",
    ]
    for r in rows:
        if "value" not in r:
            lines.append(f"| {r['table']} | {r['cells']:,} | {r['sensitive']:,} | {r['tool']} | "
                         f"{r.get('seconds', float('nan')):.1f} | - | - | - | - | - | - | {r.get('note', '')} |")
            continue
        lines.append(f"| {r['table']} | {r['cells']:,} | {r['sensitive']:,} | {r['tool']} | {r['seconds']:.1f} | "
                     f"{r['withheld']:,} | {r['value']:,.0f} | {r['under']} | {r['disclosed']} | "
                     f"{r['parts']} / {r['sensitive_parts']} | {r['check']:.1f} | {r.get('note', '')} |")
    lines.append("")
    write_subsection(SECTION, lines[0], "\n".join(lines))


if __name__ == "__main__":
    main()
