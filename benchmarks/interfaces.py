"""Benchmark: the interface layer on a large table (outputs only, no suppression).

Builds a 2-D table of (rows+1) x (cols+1) cells with flat dimensions (random leaf values,
totals summed, 2% of leaves sensitive), then times what ``protect`` adds on top of the
stages: the analyst table, the publication, the information loss, writing CSV and
Parquet publication and analyst files, and the HTML report.

    python benchmarks/interfaces.py --rows 1000 --cols 1000
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np


def build(rows: int, cols: int):
    from tablesafe import Dimension, Hierarchy, Problem, TableStructure, compile_tables

    a = Hierarchy.flat([f"r{i:05d}" for i in range(rows)], sort=False)
    b = Hierarchy.flat([f"c{j:05d}" for j in range(cols)], sort=False)
    model = compile_tables(TableStructure((Dimension("row", a), Dimension("col", b))))
    rng = np.random.default_rng(0)
    leaf = rng.lognormal(5, 1.5, (rows, cols)).round(2)
    full = np.zeros((rows + 1, cols + 1))
    full[1:, 1:] = leaf
    full[0, 1:] = leaf.sum(axis=0)
    full[1:, 0] = leaf.sum(axis=1)
    full[0, 0] = leaf.sum()
    value = full.ravel()
    status = np.full(value.size, "S", dtype="<U1")
    sens = np.zeros(value.size, dtype=bool)
    sens.reshape(rows + 1, cols + 1)[1:, 1:] = rng.random((rows, cols)) < 0.02
    status[sens] = "U"
    upl = np.where(sens, 0.15 * value, 0.0)
    codes = model.codes
    names = codes["row"].str.cat(codes["col"], sep="|").to_numpy(dtype=object)
    return Problem.from_arrays(value, model.relations, status=status, names=names, upl=upl, lpl=upl.copy(),
                               codes=codes, model=model, contributors=np.full(value.size, 5))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=1000)
    ap.add_argument("--cols", type=int, default=1000)
    args = ap.parse_args()
    from tablesafe import protect

    t0 = time.perf_counter()
    problem = build(args.rows, args.cols)
    print(f"table: {problem.n:,} cells, {problem.m:,} relations, {int(problem.sensitive.sum()):,} sensitive "
          f"(built in {time.perf_counter() - t0:.1f} s)")
    r = protect(problem, method="none", response="value", run_audit=False)
    steps = {}
    for name, fn in [
        ("analyst table", lambda: r.cells),
        ("publication table", lambda: r.publication),
        ("information loss", lambda: r.information_loss),
    ]:
        t = time.perf_counter()
        fn()
        steps[name] = time.perf_counter() - t
    with tempfile.TemporaryDirectory() as d:
        d = Path(d)
        for name, kw in [
            ("write publication CSV", {"out": d / "p.csv"}),
            ("write publication Parquet", {"out": d / "p.parquet"}),
            ("write analyst CSV", {"cells": d / "c.csv"}),
            ("write HTML report", {"report": d / "r.html"}),
        ]:
            t = time.perf_counter()
            r.write(**kw)
            steps[name] = time.perf_counter() - t
    for k, v in steps.items():
        print(f"{k:28s} {v:7.2f} s")


if __name__ == "__main__":
    main()
