"""Benchmark: rule evaluation (tablesafe.rules.assess) over about one million cells.

Builds a synthetic CellTable for a 2-dimensional table (1000 x 1000 codes plus totals:
1,002,001 cells) with random top-4 contributions, and times ``assess`` under several rule
sets. The table structure and the synthetic arrays are built before timing starts.

Run:  PYTHONPATH=src python benchmarks/rules.py [--side 1000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from tablesafe.celltable import CellTable
from tablesafe.rules import assess
from tablesafe.structure import Dimension, Hierarchy, TableStructure, compile_tables


def synthetic_cells(side: int, k: int = 4, seed: int = 0) -> CellTable:
    """Random cells: contributor counts 0..30, top-k contributions lognormal, descending."""
    codes = [f"{i:04d}" for i in range(side)]
    h = Hierarchy.flat(codes, sort=False)
    model = compile_tables(TableStructure((Dimension("a", h), Dimension("b", h))))
    n = model.size
    rng = np.random.default_rng(seed)
    contributors = rng.integers(0, 30, n)
    top = -np.sort(-rng.lognormal(3.0, 1.5, (n, k)), axis=1)
    top_n = np.minimum(contributors, k)
    top[np.arange(k)[None, :] >= top_n[:, None]] = 0.0
    rest = np.where(contributors > k, rng.lognormal(2.0, 1.0, n) * (contributors - k), 0.0)
    value = top.sum(axis=1) + rest
    z = np.zeros((n, k), dtype=bool)
    return CellTable(
        model=model,
        response="x",
        value=value,
        records=contributors.copy(),
        contributors=contributors,
        top=top,
        top_n=top_n,
        top_weight=np.ones((n, k)),
        top_request=z,
        top_waived=z.copy(),
        nonwaived_top=top.copy(),
        abs_top=top.copy(),
        neg_count=np.zeros(n, dtype=np.int64),
        neg_sum=np.zeros(n),
        weight_sum=contributors.astype(float),
        unweighted_value=value.copy(),
    )


RULE_SETS = {
    "p(15)": (["p(15)"], {}),
    "P(15,1)|FREQ(3,10)|NK(2,80)": (["P(15,1)|FREQ(3,10)|NK(2,80)"], {}),
    "p(15,n=2)|pq(10,50)|nk(1,75)|nk(3,90)|freq(3)": (["p(15, n=2)", "pq(10, 50)", "nk(1, 75)", "nk(3, 90)", "freq(3)"], {}),
    "p(15)|freq(5), direction-wise levels": (["p(15)", "freq(5)"], {"freq_levels": "directional"}),
}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--side", type=int, default=1000)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    t0 = time.perf_counter()
    cells = synthetic_cells(args.side)
    print(f"synthetic table: {cells.n:,} cells, built in {time.perf_counter() - t0:.1f} s (not timed below)")
    for label, (rules, kwargs) in RULE_SETS.items():
        times = []
        for _ in range(args.repeat):
            t = time.perf_counter()
            prob = assess(cells, rules, **kwargs)
            times.append(time.perf_counter() - t)
        sens = int(prob.sensitive.sum())
        print(f"{label:52s} best {min(times):6.2f} s  median {sorted(times)[len(times) // 2]:6.2f} s  sensitive {sens:,}")


if __name__ == "__main__":
    main()
