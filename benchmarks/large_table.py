"""Protect a hierarchical 3-D table of about 1,000,000 cells with ``fast`` and check it.

Run (from the repository root):

    PYTHONPATH=src /work/benchvenv/bin/python benchmarks/large_table.py [--preset 1m] [--units N]

Steps, each timed: generate the microdata (tablesafe.synthetic preset ``1m``: industry 105 x
region 105 x size class 94 codes, three-level hierarchies, enterprises grouped in
holdings), tabulate it with p%-rule primaries (p=15, holdings grouped), run
``fast_pattern`` and check every certificate in one pass over the relations. The figures
(seconds per step, peak memory) go to the subsection ``### Large table`` of
``## Suppression: fast and comparison with tau-ARGUS`` in benchmarks/RESULTS.md.
"""

from __future__ import annotations

import argparse
import resource
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "src"))
sys.path.insert(0, str(HERE))

from results_file import write_subsection

from tablesafe.audit import check_certificates
from tablesafe.suppress.fast import FastOptions, fast_pattern
from tablesafe.synthetic import problem_from_data, synthetic_preset

SECTION = "## Suppression: fast and comparison with tau-ARGUS"
SUB = "### Large table (fast, certificates)"


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--preset", default="1m")
    ap.add_argument("--units", type=int, default=None)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--progress", action="store_true")
    ap.add_argument("--no-write", action="store_true")
    ap.add_argument("--workers", type=int, default=None, help="processes for fast (default: automatic)")
    ap.add_argument("--log-every", type=int, default=10_000, help="progress line every N targets")
    args = ap.parse_args()
    times: dict[str, float] = {}
    t = time.perf_counter()
    syn = synthetic_preset(args.preset, seed=args.seed, **({"units": args.units} if args.units else {}))
    times["generate"] = time.perf_counter() - t
    t = time.perf_counter()
    problem = problem_from_data(syn, p=15)
    times["tabulate + rules"] = time.perf_counter() - t
    print(f"{problem.n} cells, {int(problem.sensitive.sum())} sensitive, {int(problem.empty.sum())} empty", flush=True)
    t = time.perf_counter()
    pattern = fast_pattern(problem, progress=args.progress, workers=args.workers,
                           options=FastOptions(log_every=args.log_every))
    times["fast suppression"] = time.perf_counter() - t
    t = time.perf_counter()
    failures = check_certificates(problem, pattern.withheld, pattern.certificates, insiders=True)
    times["certificate check"] = time.perf_counter() - t
    times["total"] = sum(times.values())
    sec = pattern.withheld & ~problem.sensitive
    res = {
        "cells": problem.n,
        "records": len(syn.data),
        "sensitive": int(problem.sensitive.sum()),
        "secondary": int(sec.sum()),
        "withheld value (secondaries)": float(problem.value[sec].sum()),
        "certificate rows": len(pattern.certificates),
        "certificate failures": len(failures),
        "peak memory (MB)": peak_mb(),
    }
    print(times, res, pattern.stats, flush=True)
    if failures:
        print("FAILURES:", failures[:5])
    if args.no_write:
        return
    cmd = "PYTHONPATH=src /work/benchvenv/bin/python benchmarks/large_table.py " + " ".join(sys.argv[1:])
    lines = [
        SUB, "", f"Command: `{cmd.strip()}`", "",
        (f"Table: {res['cells']:,} cells (3-D, three-level hierarchies), {res['records']:,} "
         f"enterprises, {res['sensitive']:,} sensitive (p% rule p=15 on holdings)."), "",
        "| step | seconds |", "|---|---:|",
        *[f"| {k} | {v:.1f} |" for k, v in times.items()],
        "", "| figure | value |", "|---|---:|",
        f"| secondary cells | {res['secondary']:,} |",
        f"| withheld value (secondaries) | {res['withheld value (secondaries)']:,.0f} |",
        f"| certificate rows | {res['certificate rows']:,} |",
        f"| certificate check failures | {res['certificate failures']} |",
        f"| LP solves | {pattern.stats.get('lp_solves')} |",
        f"| worker processes | {pattern.stats.get('workers')} |",
        f"| certificates found by | {pattern.stats.get('found_by')} |",
        f"| targets protected by an earlier certificate's direction (no LP) | {pattern.stats.get('shared_certificates')} |",
        f"| insider certificates (single respondents) | {pattern.stats.get('insider_certificates')} |",
        f"| insider pairs left unprotected | {pattern.stats.get('insider_unprotected')} |",
        f"| peak memory (MB, whole process) | {res['peak memory (MB)']:,.0f} |",
        "",
    ]
    write_subsection(SECTION, SUB, "\n".join(lines))


if __name__ == "__main__":
    main()
