"""Benchmark of the disclosure audit on tau-ARGUS patterns (issues 4 and 12).

Builds hierarchical tables of about 13,000 cells from generated microdata in three
shapes (:data:`SHAPES`: the issue-4 two-way table whose withheld cells fall into many
small blocks, a two-way table with shallow wide hierarchies whose withheld cells form a
few large blocks, and a three-way table), protects each with tau-ARGUS (pytauargus, p%
rule P(15,1), modular suppression MOD(1)), then audits the pattern with tablesafe and
checks the sensitive cells' verdicts against an independent naive computation (one fresh
HiGHS LP per bound, no decomposition, no warm start, no linear algebra), on all of them
or on a deterministic sample (``--naive-sample``).

Run (from the worktree root)::

    PYTHONPATH=src /work/benchvenv/bin/python benchmarks/audit.py [--records 30000]
        [--seed 1] [--shape small-blocks|large-blocks|3d|all] [--naive]
        [--naive-sample 200] [--insider] [--patterns DIR] [--skip-intervals]
        [--json FILE] [--before FILE] [--write] [--write-insider]

The p% levels are computed here directly from the microdata (UPL = p/100 x1 -
(X - x1 - x2), LPL = UPL, seed 002 table of protection levels); a priori bounds are the
DESIGN default [0, inf). ``--write`` replaces the subsection "Audit speed by block
structure" of RESULTS.md (ratios against the ``--before`` JSON of an earlier run).
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import sys
import tempfile
import time
from pathlib import Path

import highspy
import numpy as np
import pandas as pd
import scipy.sparse as sp
from results_file import write_subsection

from tablesafe.audit import audit, feasibility_intervals
from tablesafe.audit.intervals import build_blocks
from tablesafe.problem import EMPTY, PRIMARY, SAFE, Problem
from tablesafe.structure import Dimension, Hierarchy, TableStructure, compile_tables

P = 15.0


SHAPES: dict[str, list[list[tuple[int, int, int]]]] = {
    # per dimension, per level: (digits, smallest fan-out, largest fan-out)
    "small-blocks": [[(1, 4, 4), (1, 5, 5), (1, 3, 6)]] * 2,   # 2-D, 3 levels (issue 4)
    "large-blocks": [[(1, 5, 5), (2, 44, 44)], [(1, 5, 5), (2, 10, 10)]],  # 226 x 56
    "flat": [[(3, 225, 225)], [(2, 55, 55)]],  # 226 x 56, one level
    "3d": [[(1, 4, 4), (1, 5, 5)], [(1, 4, 4), (1, 5, 5)], [(1, 3, 3), (1, 6, 6)]],
}
"""Table shapes of about 13,000 cells: ``small-blocks`` is the issue-4 table (tau-ARGUS
MOD's withheld cells fall into many small blocks), ``large-blocks`` two shallow, wide
hierarchies (226 x 56 codes, two levels; six blocks of about 1,000 cells), ``flat`` the
same codes without the middle level (one block of every withheld cell), ``3d`` a
three-way table (25 x 25 x 22 codes; one block of 5,292 cells)."""


def make_microdata(records: int, seed: int, shape: str = "small-blocks") -> pd.DataFrame:
    """Enterprises with one hierarchical code per dimension (``SHAPES``) and turnover.

    Dimensions are named A, B, C; codes concatenate one number per level (zero-padded
    to the level's digits), so tau-ARGUS reads the hierarchy from the digit counts.
    """
    rng = np.random.default_rng(seed)

    def codes(levels: list[tuple[int, int, int]]) -> list[str]:
        out = [""]
        for digits, lo, hi in levels:
            out = [f"{p}{k:0{digits}d}" for p in out
                   for k in range(1, 1 + (lo if lo == hi else int(rng.integers(lo, hi + 1))))]
        return out

    dims = SHAPES[shape]
    names = "ABC"[:len(dims)]
    leaves = [codes(levels) for levels in dims]
    weights = [rng.lognormal(0, 1.0, len(c)) for c in leaves]
    data = {name: rng.choice(c, records, p=w / w.sum())
            for name, c, w in zip(names, leaves, weights)}
    data["Y"] = np.round(rng.lognormal(3, 1.5, records), 0) + 1
    return pd.DataFrame(data)


def hrc_digits(shape: str) -> dict[str, str]:
    """tau-ARGUS hierarchy digits per hierarchical dimension (``"1 1 1"``, ``"1 2"``)."""
    return {name: " ".join(str(d) for d, _, _ in levels)
            for name, levels in zip("ABC", SHAPES[shape]) if len(levels) > 1}


def build_problem(micro: pd.DataFrame, shape: str = "small-blocks") -> tuple[Problem, TableStructure]:
    """Cells, values, p% statuses and levels of the table with all subtotals."""
    names = [c for c in micro.columns if c != "Y"]
    lengths = [np.cumsum([d for d, _, _ in levels]).tolist() for levels in SHAPES[shape]]
    hs = [Hierarchy.from_lengths(micro[c].unique(), ln) for c, ln in zip(names, lengths)]
    ts = TableStructure([Dimension(c, h) for c, h in zip(names, hs)])
    n = ts.size
    # every record contributes to its leaf cell and all ancestors in every dimension
    keys = []
    for c, h, ln in zip(names, hs, lengths):
        index = {code: i for i, code in enumerate(h.codes)}
        keys.append([micro[c].str[:k].map(index).to_numpy() for k in ln[:-1]]
                    + [micro[c].map(index).to_numpy(), np.full(len(micro), index["Total"])])
    parts = []
    for combo in itertools.product(*keys):
        cell = np.ravel_multi_index(tuple(combo), ts.shape)
        parts.append(pd.DataFrame({"cell": cell, "unit": micro.index.to_numpy(),
                                   "y": micro["Y"].to_numpy()}))
    contrib = pd.concat(parts, ignore_index=True)
    contrib = contrib.sort_values(["cell", "y"], ascending=[True, False])
    g = contrib.groupby("cell")
    value = np.zeros(n)
    count = np.zeros(n, dtype=int)
    x1 = np.zeros(n)
    x2 = np.zeros(n)
    s = g["y"].sum()
    value[s.index] = s.to_numpy()
    c = g.size()
    count[c.index] = c.to_numpy()
    rank = g.cumcount().to_numpy()
    first = contrib[rank == 0]
    second = contrib[rank == 1]
    x1[first["cell"].to_numpy()] = first["y"].to_numpy()
    x2[second["cell"].to_numpy()] = second["y"].to_numpy()
    upl = P / 100 * x1 - (value - x1 - x2)
    sens = (upl > 0) & (count > 0)
    status = np.where(count == 0, EMPTY, np.where(sens, PRIMARY, SAFE))
    lev = np.where(sens, upl, 0.0)
    # with its table structure, so insiders' overlap is read from the codes as in a
    # tablesafe run (tablesafe.structure.insiders)
    prob = Problem.from_arrays(value, ts.relations(), status=status, names=ts.cell_names(),
                               upl=lev, lpl=lev, contributors=count, model=compile_tables(ts))
    prob.notes["contributions"] = contrib
    return prob, ts


def tau_pattern(micro: pd.DataFrame, prob: Problem, workdir: str,
                shape: str = "small-blocks") -> tuple[np.ndarray, float, pd.DataFrame]:
    """Withheld mask of tau-ARGUS MOD(1) with P(15,1), and its seconds."""
    import pytauargus

    dims = [c for c in micro.columns if c != "Y"]
    t = time.perf_counter()
    here = os.getcwd()
    os.chdir(workdir)  # the engine leaves scratch files in the working directory
    try:
        res = pytauargus.protect(micro, tables=[dims], response="Y",
                                 safety_rules="P(15,1)", suppress="MOD(1)",
                                 hrc=hrc_digits(shape) or None, totcode="Total",
                                 workdir=workdir)
    finally:
        os.chdir(here)
    secs = time.perf_counter() - t
    out = pd.DataFrame(res.tables[0].dataframe())
    names = out[dims[0]].astype(str)
    for d in dims[1:]:
        names = names + "|" + out[d].astype(str)
    index = pd.Series(np.arange(prob.n), index=prob.names)
    idx = index.reindex(names.to_numpy()).to_numpy()
    if np.isnan(idx).any():
        raise SystemExit("tau-ARGUS output has cells unknown to the table structure")
    withheld = np.zeros(prob.n, dtype=bool)
    withheld[idx[out["status"].isin(["U", "M"]).to_numpy()].astype(int)] = True
    out["cell"] = idx.astype(int)
    return withheld, secs, out


def naive_bounds(prob: Problem, withheld: np.ndarray, cells: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """One fresh HiGHS LP per bound over all withheld cells (no blocks, no warm start)."""
    wi = np.flatnonzero(withheld)
    a = sp.csr_matrix(prob.relations)
    aw = sp.csc_matrix(a[:, wi])
    rhs = prob.rhs - a[:, ~withheld] @ prob.value[~withheld]
    pos = {int(c): k for k, c in enumerate(wi)}
    lo = np.full(len(cells), np.nan)
    hi = np.full(len(cells), np.nan)
    inf = highspy.kHighsInf
    ub = np.where(np.isinf(prob.upper[wi]), inf, prob.upper[wi])
    for t, cell in enumerate(cells):
        for sense in (1, -1):
            h = highspy.Highs()
            h.setOptionValue("output_flag", False)
            h.setOptionValue("threads", 1)
            lp = highspy.HighsLp()
            lp.num_col_, lp.num_row_ = len(wi), a.shape[0]
            cost = np.zeros(len(wi))
            cost[pos[int(cell)]] = -sense
            lp.col_cost_ = cost
            lp.col_lower_ = prob.lower[wi].astype(float)
            lp.col_upper_ = ub
            lp.row_lower_ = rhs
            lp.row_upper_ = rhs
            lp.a_matrix_.format_ = highspy.MatrixFormat.kColwise
            lp.a_matrix_.start_ = aw.indptr
            lp.a_matrix_.index_ = aw.indices
            lp.a_matrix_.value_ = aw.data
            h.passModel(lp)
            h.run()
            st = h.getModelStatus()
            if st == highspy.HighsModelStatus.kOptimal:
                v = h.getSolution().col_value[pos[int(cell)]]
            elif st in (highspy.HighsModelStatus.kUnbounded,
                        highspy.HighsModelStatus.kUnboundedOrInfeasible):
                v = sense * np.inf
            else:
                raise RuntimeError(f"naive LP for cell {cell}: {h.modelStatusToString(st)}")
            if sense == 1:
                hi[t] = v
            else:
                lo[t] = v
    return lo, hi


def naive_verdicts(prob: Problem, cells: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """The verdict rule of tablesafe.audit, written out again for the naive bounds."""
    v = prob.value[cells]
    tol = 1e-6 * np.maximum(1.0, np.abs(v))
    lpl = np.minimum(prob.lpl[cells], v - prob.lower[cells])
    out = np.full(len(cells), "protected", dtype=object)
    out[hi < v + prob.upl[cells] - tol] = "upper"
    out[(lo > v - lpl + tol) & (out == "protected")] = "lower"
    out[(hi - lo < prob.spl[cells] - tol) & (out == "protected")] = "sliding"
    out[hi - lo <= tol] = "exact"
    return out


def block_sizes(prob: Problem, withheld: np.ndarray) -> list[int]:
    """Sizes of the LP blocks of the pattern, largest first."""
    _, _, blocks = build_blocks(prob, withheld)
    return sorted((len(b.cols) for b in blocks), reverse=True)


def load() -> str:
    """The machine's load averages (1, 5, 15 minutes)."""
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def run_shape(shape: str, args: argparse.Namespace) -> dict:
    """Protect one table shape with tau-ARGUS MOD, audit it and check it; print and return figures."""
    micro = make_microdata(args.records, args.seed, shape)
    prob, _ts = build_problem(micro, shape)
    saved = Path(args.patterns) / f"pattern-{shape}.npy" if args.patterns else None
    if saved is not None and saved.exists():
        withheld, tau_secs = np.load(saved), float("nan")   # tau-ARGUS's pattern of an earlier run
    else:
        with tempfile.TemporaryDirectory() as wd:
            withheld, tau_secs, _ = tau_pattern(micro, prob, wd, shape)
        if saved is not None:
            saved.parent.mkdir(parents=True, exist_ok=True)
            np.save(saved, withheld)
    sens = prob.sensitive
    fig: dict = {"shape": shape, "cells": prob.n, "sensitive": int((sens & withheld).sum()),
                 "withheld": int(withheld.sum()), "tau_seconds": tau_secs}
    sizes = block_sizes(prob, withheld)
    fig.update(blocks=len(sizes), largest=sizes[:5])
    print(f"[{shape}] table: {prob.n} cells, {int(sens.sum())} sensitive, "
          f"{int(withheld.sum())} withheld (tau-ARGUS MOD {tau_secs:.1f} s); "
          f"{len(sizes)} blocks, largest {sizes[:5]}", flush=True)
    if (sens & ~withheld).any():
        print(f"note: {int((sens & ~withheld).sum())} sensitive cells are published by tau-ARGUS")
    fig["load_before"] = load()
    t = time.perf_counter()
    res = audit(prob, withheld, insider=False)
    fig["audit_seconds"] = time.perf_counter() - t
    fig["lp_solves"] = res.stats.get("lp_solves")
    fig["verdicts"] = res.counts()
    print(f"[{shape}] tablesafe audit (criterion 1): {fig['audit_seconds']:.2f} s "
          f"(load {load()}); {res.stats}", flush=True)
    print(res.summary())
    if not args.skip_intervals:
        t = time.perf_counter()
        feasibility_intervals(prob, withheld)
        fig["intervals_seconds"] = time.perf_counter() - t
        print(f"[{shape}] feasibility intervals of all {int(withheld.sum())} withheld cells: "
              f"{fig['intervals_seconds']:.2f} s (load {load()})", flush=True)
    if args.insider:
        fig["load_insider"] = load()
        t = time.perf_counter()
        res_i = audit(prob, withheld, insider=True)
        fig["insider_seconds"] = time.perf_counter() - t
        fig["singles"] = int((withheld & (prob.contributors == 1)).sum())
        f = res_i.insider_findings
        fig["insider_findings"] = len(f)
        fig["insider_cells"] = int(f["target"].nunique()) if len(f) else 0
        fig["insider_stats"] = {k: v for k, v in res_i.stats.items()
                                if k.startswith("insider") or k == "seconds_insider"}
        print(f"[{shape}] tablesafe audit with singleton insiders: {fig['insider_seconds']:.2f} s "
              f"(load {fig['load_insider']}); {len(f)} insider findings on {fig['insider_cells']} "
              f"cells; {fig['insider_stats']}", flush=True)
    if args.naive:
        fig.update(naive_check(prob, withheld, res, args.naive_sample))
    fig["load_after"] = load()
    return fig


def naive_check(prob: Problem, withheld: np.ndarray, res, sample: int) -> dict:
    """Verdicts and bounds of (a deterministic sample of) the sensitive cells by fresh LPs."""
    cells = np.flatnonzero(prob.sensitive & withheld)
    if 0 < sample < len(cells):
        cells = np.sort(np.random.default_rng(0).choice(cells, sample, replace=False))
    t = time.perf_counter()
    lo, hi = naive_bounds(prob, withheld, cells)
    nsecs = time.perf_counter() - t
    nv = naive_verdicts(prob, cells, lo, hi)
    ours = res.verdict[cells]
    agree = int((nv == ours).sum())
    print(f"naive fresh LP per bound: {nsecs:.1f} s for {2 * len(cells)} LPs; "
          f"verdicts agree on {agree}/{len(cells)} sensitive cells", flush=True)
    if agree != len(cells):
        bad = cells[nv != ours]
        print(pd.DataFrame({"cell": prob.names[bad], "ours": res.verdict[bad],
                            "naive": nv[nv != ours], "lo": lo[nv != ours], "hi": hi[nv != ours],
                            "our_lo": res.lower[bad], "our_hi": res.upper[bad]}).head(20))
    return {"naive_cells": len(cells), "naive_seconds": nsecs, "naive_agree": agree}


SECTION = "## Audit"
SUB = "### Audit speed by block structure (issue 12)"


INTRO = ("tau-ARGUS MOD(1) patterns (P(15,1)) on table shapes of about 13,000 cells "
         "(`SHAPES` in benchmarks/audit.py), audited with "
         "`tablesafe.audit.audit(..., insider=False)` (verdicts of all sensitive withheld "
         "cells) and `feasibility_intervals` (exact intervals of all withheld cells). "
         "Verdicts are checked against fresh HiGHS LPs (one per bound, no decomposition, "
         "no warm start) on a deterministic sample of sensitive cells (column 'fresh "
         "LPs'). 'before' is the previous version of the audit on the same patterns.")
HEADER = ("| shape | cells | withheld | sensitive withheld | blocks (largest) | audit s "
          "(before) | ratio | all intervals s (before) | ratio | verdicts = fresh LPs | "
          "load (1/5/15 min) |")


def _row(f: dict, b: dict) -> str:
    """One table row of :func:`write_results`."""
    def secs(key: str) -> tuple[str, str]:
        now, was = f[key], b.get(key)
        if not was:
            return f"{now:.1f}", "-"
        return f"{now:.1f} ({was:.1f})", f"{was / now:.1f}x"

    audit_s, audit_r = secs("audit_seconds")
    int_s, int_r = secs("intervals_seconds")
    naive = (f"{f['naive_agree']}/{f['naive_cells']} ({f['naive_seconds']:.0f} s)"
             if "naive_cells" in f else "not run")
    largest = ", ".join(f"{x:,}" for x in f["largest"][:3])
    return (f"| {f['shape']} | {f['cells']:,} | {f['withheld']:,} | {f['sensitive']:,} | "
            f"{f['blocks']} ({largest}) | {audit_s} | {audit_r} | {int_s} | {int_r} | "
            f"{naive} | {f['load_before']} |")


def write_results(figs: list[dict], before: dict, command: str) -> None:
    """The subsection of RESULTS.md with one row per shape (and ratios to ``before``)."""
    lines = [SUB, "", INTRO, "", f"Command: `{command}`", "", HEADER,
             "|---|---:|---:|---:|---|---:|---:|---:|---:|---|---|"]
    lines += [_row(f, before.get(f["shape"], {})) for f in figs]
    write_subsection(SECTION, SUB, "\n".join(lines) + "\n")


SUB_INSIDER = "### Insider audit speed (issue 12)"
INSIDER_INTRO = ("The same tau-ARGUS MOD(1) patterns audited with "
                 "`tablesafe.audit.audit(..., insider=True)`: criterion 1 plus every single "
                 "respondent of a withheld cell against every protected sensitive cell its cell "
                 "does not overlap (the attacker model of README, `tablesafe.structure.insiders`). "
                 "'insider s' is the whole audit with insiders (`seconds_insider` the insider "
                 "part); 'pairs' are (target, insider) pairs times directions, 'by stored tables' "
                 "those settled by convex combinations of the criterion-1 tables; LPs: on a "
                 "target's neighbourhood ('local'), on the block with all open insiders fixed "
                 "('joint'), batch and single LPs per insider ('single' includes the joint ones).")
INSIDER_HEADER = ("| shape | cells | withheld | single respondents withheld | findings (cells) | "
                  "insider s (insider part) | pairs | by stored tables | LPs local / joint / "
                  "batch / single | load (1/5/15 min) |")


def _insider_row(f: dict) -> str:
    st = f["insider_stats"]
    return (f"| {f['shape']} | {f['cells']:,} | {f['withheld']:,} | {f.get('singles', 0):,} | "
            f"{f['insider_findings']:,} ({f['insider_cells']:,}) | {f['insider_seconds']:.1f} "
            f"({st.get('seconds_insider', 0):.1f}) | {st.get('insider_pairs', 0):,} | "
            f"{st.get('insider_pool', 0):,} | {st.get('insider_local_lps', 0):,} / "
            f"{st.get('insider_lp_joint', 0):,} / {st.get('insider_lp_batch', 0):,} / "
            f"{st.get('insider_lp_solves', 0):,} | {f['load_insider']} |")


def write_insider(figs: list[dict], command: str, notes: str = "") -> None:
    """The subsection of RESULTS.md on the insider audit (one row per shape)."""
    lines = [SUB_INSIDER, "", INSIDER_INTRO, "", f"Command: `{command}`", "", INSIDER_HEADER,
             "|---|---:|---:|---:|---:|---:|---:|---:|---|---|"]
    lines += [_insider_row(f) for f in figs if "insider_seconds" in f]
    write_subsection(SECTION, SUB_INSIDER, "\n".join(lines) + "\n" + notes)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--records", type=int, default=30000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--shape", default="small-blocks",
                    help=f"one of {', '.join(SHAPES)}, a comma list, or 'all'")
    ap.add_argument("--naive", action="store_true", help="also run the naive LP per bound")
    ap.add_argument("--naive-sample", type=int, default=0,
                    help="naive LPs on this many sensitive cells (deterministic sample; 0: all)")
    ap.add_argument("--insider", action="store_true", help="also time the insider checks")
    ap.add_argument("--patterns", help="directory of saved tau-ARGUS patterns (pattern-SHAPE.npy): "
                    "used when present, else tau-ARGUS runs and its pattern is saved there")
    ap.add_argument("--skip-intervals", action="store_true",
                    help="do not time the exact intervals of all withheld cells")
    ap.add_argument("--json", help="write the figures to this JSON file")
    ap.add_argument("--before", help="JSON figures of an earlier version (for ratios)")
    ap.add_argument("--write", action="store_true", help="write the figures to RESULTS.md")
    ap.add_argument("--write-insider", action="store_true",
                    help="write the insider figures to RESULTS.md (subsection of their own)")
    args = ap.parse_args()
    shapes = list(SHAPES) if args.shape == "all" else args.shape.split(",")
    figs = [run_shape(s, args) for s in shapes]
    if args.json:
        Path(args.json).write_text(json.dumps(figs, indent=1))
    if args.write:
        before = {}
        if args.before:
            before = {f["shape"]: f for f in json.loads(Path(args.before).read_text())}
        cmd = "PYTHONPATH=src /work/benchvenv/bin/python " + " ".join(sys.argv)
        write_results(figs, before, cmd)
    if args.write_insider:
        cmd = "PYTHONPATH=src /work/benchvenv/bin/python " + " ".join(sys.argv)
        write_insider(figs, cmd)


if __name__ == "__main__":
    main()
