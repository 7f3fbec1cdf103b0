"""Run the same suppression several times, on two CPUs and on one, and say whether the
patterns are the same (issue 12, "Determinism"); print a Markdown table for
benchmarks/RESULTS.md.

Usage:
    PYTHONPATH=src python benchmarks/repeat_runs.py [--generated 2k2d,2k3d] [--seed 1]
        [--castro TABLE7,JJTABEL3] [--method auto] [--time-limit SECONDS] [--runs 2]
        [--one-cpu]

Each run is a fresh process (nothing cached from the one before). With ``--one-cpu``
every table also runs pinned to one CPU, where every step that shares out work uses one
worker and takes longer. A row says whether its pattern equals the first run's, and which
steps the clock ended (``stats["clock_decided"]``): only those may make a run differ.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import time
from pathlib import Path

CASTRO = Path("/work/shared/benchmarks/castro")


def generated_problem(name: str, seed: int):
    """A generated preset with holdings, as ``compare_tauargus.py --holdings`` builds it
    (p% rule p=15 on holdings, holding cohesion 0.7)."""
    from tablesafe.synthetic import problem_from_data, synthetic_preset

    return problem_from_data(synthetic_preset(name, seed=seed, holding_cohesion=0.7), p=15, use_holdings=True)


def _problem(kind: str, name: str, seed: int):
    if kind == "castro":
        from tablesafe.io.jj import read_jj

        return read_jj(CASTRO / f"{name}.jj")
    return generated_problem(name, seed)


def one_run(kind: str, name: str, seed: int, method: str, time_limit: float | None, cpus: int) -> dict:
    """One suppression in this process, pinned to ``cpus`` CPUs; its figures."""
    os.sched_setaffinity(0, set(sorted(os.sched_getaffinity(0))[:cpus]))
    from tablesafe.suppress import suppress

    problem = _problem(kind, name, seed)
    t = time.monotonic()
    pat = suppress(problem, method, time_limit=time_limit, audit=False)
    st = pat.stats
    return {"cells": problem.n, "seconds": time.monotonic() - t, "value": st["withheld_value"],
            "hash": hashlib.sha256(pat.withheld.tobytes()).hexdigest()[:10],
            "method": st.get("method_chosen", method), "clock": st.get("clock_decided", [])}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--generated", default="2k2d,2k3d")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--castro", default="")
    ap.add_argument("--method", default="auto")
    ap.add_argument("--time-limit", type=float, default=None)
    ap.add_argument("--runs", type=int, default=2)
    ap.add_argument("--one-cpu", action="store_true")
    ap.add_argument("--one", nargs=6, help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.one:
        kind, name, seed, method, limit, cpus = a.one
        out = one_run(kind, name, int(seed), method, None if limit == "none" else float(limit), int(cpus))
        print(json.dumps(out))
        return
    tables = [("generated", x) for x in a.generated.split(",") if x] + [("castro", x) for x in a.castro.split(",") if x]
    print(f"method `{a.method}`, time limit {a.time_limit if a.time_limit is not None else 'automatic'}, "
          f"load at the start {os.getloadavg()[0]:.1f}\n")
    print("| table | cells | method run | CPUs | run | seconds | withheld value | pattern | same as the first | ended by the clock |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    cpu_counts = [2, 1] if a.one_cpu else [2]
    for kind, name in tables:
        first = None
        for cpus in cpu_counts:
            for r in range(a.runs):
                cmd = [sys.executable, __file__, "--one", kind, name, str(a.seed), a.method,
                       "none" if a.time_limit is None else str(a.time_limit), str(cpus)]
                res = subprocess.run(cmd, capture_output=True, text=True, check=True)
                out = json.loads(res.stdout.strip().splitlines()[-1])
                first = first or out["hash"]
                print(f"| {name} | {out['cells']:,} | {out['method']} | {cpus} | {r + 1} | {out['seconds']:.1f} | "
                      f"{out['value']:,.0f} | `{out['hash']}` | {'yes' if out['hash'] == first else 'no'} | "
                      f"{'; '.join(out['clock']) or '-'} |", flush=True)
    print(f"\nload at the end {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
