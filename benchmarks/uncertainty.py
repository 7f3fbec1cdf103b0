"""The contribution-level audit (issue 15, seed 004) on generated tables with holdings.

Run (from the repository root):

    PYTHONPATH=src /work/benchvenv/bin/python benchmarks/uncertainty.py [--sizes 13k2d:auto,13k3d:fast]

Each table: tablesafe.synthetic microdata (preset, holdings, holding cohesion 0.7), the p%
rule p=15 on holdings, protected with the given method through ``tablesafe.protect``
with ``uncertainty=True``. Reported: seconds of the contribution-level audit alone (the
exact audit intervals of the withheld sensitive cells plus the interval arithmetic, the
run's ``contribution audit`` timing) and of the whole run, the attacks, the cells with an
attacker that places the largest contribution within p% (two-sided protection, others
known within [0, 2x]) and the cells whose interval's midpoint lies within p% of it.
The figures go to ``## Contribution-level audit (issue 15)`` of benchmarks/RESULTS.md.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "src"))
sys.path.insert(0, str(HERE))

from results_file import run_lines, write_subsection

import tablesafe
from tablesafe.synthetic import synthetic_preset

SECTION = "## Contribution-level audit (issue 15)"


def run(preset: str, method: str, seed: int) -> dict:
    syn = synthetic_preset(preset, seed=seed, holding_cohesion=0.7)
    t0 = time.perf_counter()
    kw = {"rounding_base": 1000.0} if method == "round" else {}
    res = tablesafe.protect(syn.data, list(syn.hierarchies.items()), syn.response, "p(15)", holding=syn.holding,
                            tables=syn.table_list, method=method, uncertainty=True, **kw)
    total = time.perf_counter() - t0
    st = res.contributions.stats
    return {"table": preset, "cells": res.problem.n, "sensitive": int(res.problem.sensitive.sum()), "method": method,
            "seconds": res.timings["contribution audit"], "run": total, "attacks": st["rows"],
            "unprotected": st["unprotected_cells"], "midpoint": st["midpoint_cells"]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="13k2d:auto,13k3d:fast", help="preset:method pairs")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--no-write", action="store_true")
    ap.add_argument("--title", default="### Contribution-level audit of generated tables",
                    help="subsection of RESULTS.md to write (a subsection with the same title is replaced)")
    args = ap.parse_args()
    load0 = os.getloadavg()
    rows = []
    for item in args.sizes.split(","):
        preset, _, method = item.partition(":")
        r = run(preset, method or "auto", args.seed)
        print(r, flush=True)
        rows.append(r)
    load1 = os.getloadavg()
    if args.no_write:
        return
    lines = [
        *run_lines(args.title, "uncertainty.py", load0, load1,
                   "Target (issue 15): the contribution-level audit of a 13,000-cell table in under 60 s."),
        "| table | cells | sensitive | method | contribution audit s | whole run s | attacks | cells within p% | midpoint within p% |",
        "|---|---:|---:|---|---:|---:|---:|---:|---:|",
        *[f"| {r['table']} | {r['cells']:,} | {r['sensitive']:,} | {r['method']} | {r['seconds']:.1f} | {r['run']:.1f} | "
          f"{r['attacks']:,} | {r['unprotected']:,} | {r['midpoint']:,} |" for r in rows],
        "",
    ]
    write_subsection(SECTION, lines[0], "\n".join(lines))


if __name__ == "__main__":
    main()
