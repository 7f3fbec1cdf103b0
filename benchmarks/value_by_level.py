"""Where a pattern's withheld value goes: ``fast`` (or another method) on a generated table,
the secondaries' value by hierarchy depth.

Run (from the repository root):

    PYTHONPATH=src /work/benchvenv/bin/python benchmarks/value_by_level.py --preset 1m3d
    PYTHONPATH=src /work/benchvenv/bin/python benchmarks/value_by_level.py \\
        --branching "3,3,4;3,3,4;2,3,5" --units 48600 --options '{"wide_table": 50000}'

A cell's depth is the sum over its dimensions of its code's level (0 for a total, 1 for
the codes just below it, ...): 0 is the grand total, the largest depth the most detailed
cells. The table is generated as in ``compare_tauargus.py --holdings`` (p% rule with
p = 15 on holdings of cohesion 0.7). ``--options`` passes ``FastOptions`` fields as JSON
(``fast`` only); every certificate is checked (``check_certificates``, insiders included
unless ``--no-singleton``) and the failures are printed beside the figures. Prints one
line of figures and one of value by depth (millions); nothing is written to RESULTS.md.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))

from tablesafe.audit import check_certificates
from tablesafe.problem import PROTECTED, Problem
from tablesafe.suppress import suppress
from tablesafe.suppress.fast import FastOptions, fast_pattern
from tablesafe.synthetic import problem_from_data, synthetic_data, synthetic_preset


def depth(problem: Problem) -> np.ndarray:
    """Per cell, the sum over its dimensions of its code's depth in the hierarchy."""
    assert problem.model is not None and problem.codes is not None  # generated tables have both
    out = np.zeros(problem.n, dtype=np.int64)
    for dim in problem.model.dims:
        h = dim.hierarchy
        out += problem.codes[dim.name].astype(str).map(dict(zip(h.codes, h.depths.tolist()))).to_numpy()
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--preset", default=None, help="a tablesafe.synthetic preset (1m3d, 13k3d, ...)")
    ap.add_argument("--branching", default=None,
                    help="instead of a preset: per dimension the fan-out per level, '3,3,4;3,3,4;2,3,5'")
    ap.add_argument("--units", type=int, default=None, help="enterprises (with --branching, or to scale a preset)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--method", default="fast", help="fast (with --options), or a method name for suppress()")
    ap.add_argument("--options", default="{}", help="FastOptions fields as JSON")
    ap.add_argument("--no-singleton", action="store_true",
                    help="no singleton (insider) protection; the certificates are checked for outsiders only")
    ap.add_argument("--publish-depth", type=int, default=-1,
                    help="mark the non-sensitive cells of depth up to this as protected (never withheld): "
                         "how much the pattern would cost if those totals were out of reach")
    args = ap.parse_args()
    if args.branching:
        branching = [[int(x) for x in dim.split(",")] for dim in args.branching.split(";")]
        syn = synthetic_data(branching, args.units or 10_000, seed=args.seed, holding_cohesion=0.7)
    else:
        kw = {"units": args.units} if args.units else {}
        syn = synthetic_preset(args.preset or "13k3d", seed=args.seed, holding_cohesion=0.7, **kw)
    problem = problem_from_data(syn, p=15, use_holdings=True)
    print(f"{problem.n:,} cells, {int(problem.sensitive.sum()):,} sensitive", flush=True)
    if args.publish_depth >= 0:
        status = problem.status.copy()
        status[(depth(problem) <= args.publish_depth) & ~problem.sensitive] = PROTECTED
        problem = problem.copy(status=status)
    opts = json.loads(args.options)
    if "box_levels" in opts:
        opts["box_levels"] = tuple(opts["box_levels"])
    t = time.perf_counter()
    if args.method == "fast":
        pattern = fast_pattern(problem, options=FastOptions(**opts), singleton=not args.no_singleton)
    else:
        pattern = suppress(problem, args.method, audit=False)
    secs = time.perf_counter() - t
    if pattern.certificates is not None:
        found = check_certificates(problem, pattern.withheld, pattern.certificates,
                                   insiders=not args.no_singleton)
        insider = sum("single respondent" in f.reason for f in found)
        failures = f"{len(found) - insider} (and {insider} insider gaps)"
    else:
        failures = "not checked (the method's own audit ran)"
    sec = pattern.withheld & ~problem.sensitive
    by_depth = pd.Series(np.where(sec, problem.value, 0.0)).groupby(depth(problem)).sum() / 1e6
    print(f"{args.method} {opts}: {secs:.1f} s, withheld value {problem.value[sec].sum() / 1e6:,.2f} M, "
          f"{int(sec.sum()):,} secondaries, certificate failures {failures}, "
          f"found by {pattern.stats.get('found_by')}")
    print("value by depth (M): " + " ".join(f"{d}: {x:,.1f}" for d, x in by_depth.items()))


if __name__ == "__main__":
    main()
