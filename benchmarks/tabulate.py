"""Benchmark: tabulate a generated microdata file with two 3-level hierarchical dimensions.

Generates (once, with DuckDB) a Parquet or CSV file of N records with a region code
(hierarchy lengths 1,2,4: 10 x 5 x 4 = 200 bottom-level regions), an industry code
(lengths 2,3,5: 20 x 5 x 10 = 1,000 bottom-level industries), a holding identifier
(90% of the records are independent enterprises, their own holding; 10% belong to
N/500 enterprise groups of about 50 records each, which sit in the group's home region
and home industry with probability 0.7 each and anywhere otherwise), a weight, a
turnover response (skewed, a few negatives) and a waiver flag. Then tabulates it in a
fresh child process (so its peak memory is the tabulation's alone) and prints seconds
and peak resident memory (getrusage maxrss of the child).

    python benchmarks/tabulate.py                       # 10M records, Parquet, holdings
    python benchmarks/tabulate.py --records 1000000 --format csv --no-holding
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path


def generate(path: Path, n: int, fmt: str) -> None:
    import duckdb

    con = duckdb.connect()
    groups = max(1, n // 500)
    q = f"""
    SELECT
      CASE WHEN hash(i, 1) % 10 < 7 THEN home_r ELSE (hash(i, 2) % 200)::INT END AS r,
      CASE WHEN hash(i, 3) % 10 < 7 THEN home_i ELSE (hash(i, 4) % 1000)::INT END AS ind,
      h, i
    FROM (
      SELECT i, h,
             (hash(h, 6) % 200)::INT AS home_r,
             (hash(h, 7) % 1000)::INT AS home_i
      FROM (SELECT i, CASE WHEN hash(i, 5) % 10 = 0 THEN -1 - (hash(i, 13) % {groups})::BIGINT
                           ELSE i END AS h
            FROM range({n}) t(i)))
    """
    sel = f"""
    SELECT
      (r // 20)::VARCHAR || ((r // 4) % 5)::VARCHAR || lpad((r % 4)::VARCHAR, 2, '0') AS region,
      lpad((ind // 50)::VARCHAR, 2, '0') || ((ind // 10) % 5)::VARCHAR || lpad((ind % 10)::VARCHAR, 2, '0')
        AS industry,
      CASE WHEN h < 0 THEN 'G' || (-h)::VARCHAR ELSE 'E' || h::VARCHAR END AS holding,
      round(1 + (hash(i, 8) % 100) / 10.0, 1) AS weight,
      CASE WHEN hash(i, 9) % 1000 = 0 THEN -round((hash(i, 10) % 10000) / 10.0, 1)
           ELSE round(exp((hash(i, 11) % 10000) / 1000.0), 2) END AS turnover,
      (hash(i, 12) % 50 = 0) AS waiver
    FROM ({q})
    """
    tmp = path.with_suffix(path.suffix + ".tmp")
    opts = "(FORMAT parquet, COMPRESSION zstd)" if fmt == "parquet" else "(FORMAT csv, HEADER true)"
    con.execute(f"COPY ({sel}) TO '{tmp}' {opts}")
    os.replace(tmp, path)


def run(path: Path, holding: bool) -> None:
    """Child process: tabulate and print a JSON line with the figures."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
    from tablesafe.tabulate import DimSpec, tabulate

    t0 = time.perf_counter()
    cells = tabulate(
        str(path),
        [DimSpec("region", "lengths:1,2,4"), DimSpec("industry", "lengths:2,3,5")],
        "turnover",
        holding="holding" if holding else None,
        weight="weight",
        waiver="waiver",
    )
    secs = time.perf_counter() - t0
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(json.dumps({"seconds": secs, "cells": cells.n, "records": int(cells.records[0]),
                      "maxrss_mib": rss / 1024, "total": float(cells.value[0])}))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--records", type=int, default=10_000_000)
    ap.add_argument("--format", choices=["parquet", "csv"], default="parquet")
    ap.add_argument("--dir", default="/tmp/tablesafe-bench")
    ap.add_argument("--no-holding", action="store_true")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        run(Path(args.child), not args.no_holding)
        return
    d = Path(args.dir)
    d.mkdir(parents=True, exist_ok=True)
    path = d / f"micro_{args.records}.{args.format}"
    if not path.exists():
        t0 = time.perf_counter()
        generate(path, args.records, args.format)
        print(f"generated {path} ({path.stat().st_size / 2**20:.0f} MiB) in {time.perf_counter() - t0:.1f} s")
    load = os.getloadavg()
    cmd = [sys.executable, __file__, "--child", str(path)] + (["--no-holding"] if args.no_holding else [])
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout.strip().splitlines()[-1]
    res = json.loads(out)
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    child_rss = ru.ru_maxrss / 1024
    cpu = ru.ru_utime + ru.ru_stime
    print(f"records {args.records:,}  format {args.format}  holdings {not args.no_holding}  "
          f"cells {res['cells']:,}")
    print(f"tabulate: {res['seconds']:.1f} s, peak RSS {max(res['maxrss_mib'], child_rss):.0f} MiB "
          f"(getrusage maxrss of the child); child CPU time {cpu:.1f} s (user+sys, incl. start-up); "
          f"load average before run {load[0]:.2f}, after {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")


if __name__ == "__main__":
    main()
