"""Our suppression methods side by side, with and without singleton protection.

tau-ARGUS OPT protects against the outside attacker only; tablesafe also protects, by
default, against the single respondent of a withheld sensitive cell next to the target
(seed 002 "singletons"). This script runs ``optimal`` and ``modular`` both ways so the
withheld value can be compared like for like with tau-ARGUS's figures
(benchmarks/compare_tauargus.py).

Usage::

    PYTHONPATH=src python benchmarks/suppress_methods.py [--tables tau,1k] [--time-limit 60]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from tablesafe.api import prepare_problem
from tablesafe.audit import audit
from tablesafe.io.tauargus import read_asc
from tablesafe.suppress import suppress
from tablesafe.synthetic import problem_from_data, synthetic_preset
from tablesafe.tabulate import DimSpec

SHARED = Path(__file__).resolve().parents[2] / "shared" / "benchmarks" / "tauargus"


def tau_problem():
    """tau_testW Var2 by Size x Region (region2.hrc), p% rule p=15."""
    src = read_asc(SHARED / "tau_testW.asc", SHARED / "Tau_TestW.rda")
    problem, _, _ = prepare_problem(src, ["Size", DimSpec("Region", str(SHARED / "region2.hrc"))], "Var2", ["p(15)"])
    return problem


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tables", default="tau,1k", help="tau and/or synthetic presets (1k, 13k, ...)")
    ap.add_argument("--methods", default="optimal,modular")
    ap.add_argument("--time-limit", type=float, default=60.0)
    args = ap.parse_args()
    print("| table | cells | sensitive | method | singleton protection | seconds | secondaries | "
          "withheld value (secondaries) | gap | under-protected (audit) |")
    print("|---|---:|---:|---|---|---:|---:|---:|---:|---:|")
    for name in args.tables.split(","):
        problem = tau_problem() if name == "tau" else problem_from_data(synthetic_preset(name, seed=1))
        for method in args.methods.split(","):
            for single in (True, False):
                t0 = time.monotonic()
                pat = suppress(problem, method, time_limit=args.time_limit, singleton=single)
                secs = time.monotonic() - t0
                res = audit(problem, pat.withheld, insider=False)
                s = pat.stats
                gap = s.get("gap")
                print(f"| {name} | {problem.n:,} | {int(problem.sensitive.sum()):,} | {method} | "
                      f"{'on' if single else 'off'} | {secs:.1f} | {s['secondary']:,} | "
                      f"{s['withheld_value']:,.0f} | {'' if gap is None else f'{gap:.3f}'} | "
                      f"{int(res.failing.size)} |", flush=True)


if __name__ == "__main__":
    main()
