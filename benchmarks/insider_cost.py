"""What protecting against single respondents costs, step by step (issue 12): print a
Markdown table for benchmarks/RESULTS.md.

Usage:
    PYTHONPATH=src python benchmarks/insider_cost.py [--generated 2k3d,13k3d] [--seed 1]
        [--methods auto,modular] [--time-limit SECONDS]

Each generated table (p% rule p=15 on holdings, holding cohesion 0.7, as in
``compare_tauargus.py --holdings``) is suppressed by each method twice: with singleton
protection (the default, insiders included) and without it (outsiders only). A row gives
the withheld value and where it came from, as the run's own stats count it:

- ``subtables``: the HiTaS subtables' pattern (``modular``), before anything completes it;
- ``added``: what the full-table repair or the certificates completing the pattern added;
- ``insiders``: of the certificates' cells, those single respondents' insider
  certificates brought in (first withheld by one) (``insider_added_value``; ``fast`` and completions by
  certificates).
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from repeat_runs import generated_problem


def one_row(problem, name: str, method: str, singleton: bool, time_limit: float | None) -> str:
    """The Markdown row of one run."""
    from tablesafe.suppress import suppress

    t0 = time.monotonic()
    pat = suppress(problem, method, singleton=singleton, time_limit=time_limit)
    secs = time.monotonic() - t0
    st = pat.stats
    w = np.asarray(pat.withheld, dtype=bool)
    value = float(np.abs(problem.value[w & ~problem.sensitive]).sum())
    added = st.get("repair_added_value", st.get("certificate_repair_added_value"))
    insiders = st.get("certificate_repair_insider_added_value", st.get("insider_added_value"))
    subtables = None
    if added is not None and "subtables" in st:
        subtables = value + float(st.get("cleanup_removed_value", 0.0)) - float(added)

    def m(x: float | None) -> str:
        return "-" if x is None else f"{x / 1e6:,.2f}"

    chosen = st.get("method_chosen", method)
    how = st.get("repair", "certificates" if "certificate_repair_added" in st else
                 "attacker LPs" if "repair_added" in st else "")
    return (f"| {name} | {problem.n:,} | {method} ({chosen}) | {'on' if singleton else 'off'} | {secs:.1f} | "
            f"{m(value)} | {m(subtables)} | {m(added)} {how} | {m(insiders)} | "
            f"{st.get('audit', '')} | {', '.join(st.get('clock_decided', [])) or 'none'} |")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--generated", default="2k3d,13k3d")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--methods", default="auto,modular")
    ap.add_argument("--time-limit", type=float, default=None)
    args = ap.parse_args()
    print("| table | cells | method (run) | singleton protection | seconds | withheld value (M) | "
          "subtables' pattern (M) | added to it (M) | of which by insider certificates (M) | proof | "
          "steps the clock ended |")
    print("|---|---:|---|---|---:|---:|---:|---|---:|---|---|")
    for name in [n for n in args.generated.split(",") if n]:
        problem = generated_problem(name, args.seed)
        for method in [m for m in args.methods.split(",") if m]:
            for singleton in (True, False):
                print(one_row(problem, name, method, singleton, args.time_limit), flush=True)


if __name__ == "__main__":
    main()
