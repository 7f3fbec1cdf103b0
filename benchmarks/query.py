"""Online query protection (issue 14, seed 003 C): seconds to answer a query of about
10,000 cells from 1,000,000 records.

Run (from the repository root):

    PYTHONPATH=src /work/benchvenv/bin/python benchmarks/query.py [--records 1000000]

Microdata generated here (seed 0): three categorical columns of 20, 25 and 20 codes (a
query over all three has 21 x 26 x 21 = 11,466 cells with totals), 300,000 farms as units,
sampling weights uniform in [1, 5], lognormal sales (sigma 2). The server adds 10 % noise to
the weights once; each query is answered five times (the same answer each time, checked)
and the seconds reported are the median. Target (issue 14): under 1 s. The figures go to
``### Online queries`` of ``## Adjustment: CTA and controlled rounding (issue 14)``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "src"))
sys.path.insert(0, str(HERE))

import numpy as np
import pandas as pd
from results_file import run_lines, write_subsection

from tablesafe.query import QueryServer

SECTION = "## Adjustment: CTA and controlled rounding (issue 14)"
SUB = "### Online queries"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--records", type=int, default=1_000_000)
    ap.add_argument("--no-write", action="store_true")
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    n = args.records
    df = pd.DataFrame({"a": rng.integers(0, 20, n).astype(str), "b": rng.integers(0, 25, n).astype(str),
                       "c": rng.integers(0, 20, n).astype(str), "farm": rng.integers(0, 300_000, n),
                       "w": rng.uniform(1, 5, n), "sales": rng.lognormal(3, 2.0, n)})
    load0 = os.getloadavg()
    t0 = time.perf_counter()
    server = QueryServer(df, weight="w", unit="farm", noise_percent=10, seed=1)
    setup = time.perf_counter() - t0
    rows = []
    for dims in (["a", "b", "c"], ["a", "b"], ["b"]):
        secs, first = [], None
        for _ in range(5):
            t = time.perf_counter()
            ans = server.answer(dims, "sales")
            secs.append(time.perf_counter() - t)
            assert first is None or ans.equals(first), "the same query got another answer"
            first = ans
        counts = first["status"].value_counts().to_dict()
        rows.append(f"| {' x '.join(dims)} | {len(first):,} | {statistics.median(secs):.2f} | {max(secs):.2f} | "
                    + ", ".join(f"{k} {v:,}" for k, v in sorted(counts.items())) + " |")
        print(rows[-1], flush=True)
    load1 = os.getloadavg()
    block = "\n".join([
        *run_lines(SUB, "query.py", load0, load1,
                   f"{n:,} records, 300,000 farms; setting the server up (noisy weights, the records into "
                   f"DuckDB) took {setup:.1f} s. Every query was answered five times with the same answer."),
        "| query | cells | median seconds | slowest | cells by status |", "|---|---:|---:|---:|---|",
        *rows, ""])
    print(block)
    if not args.no_write:
        write_subsection(SECTION, SUB, block)


if __name__ == "__main__":
    main()
