"""Adjustment instead of suppression: CTA and controlled rounding on generated tables.

Run (from the repository root)::

    PYTHONPATH=src .venv/bin/python benchmarks/alternatives.py [--sizes 1k,13k,100k] [--base 5]
        [--methods auto,alternating,round] [--time-limit SECONDS] [--no-write]
    PYTHONPATH=src /work/benchvenv/bin/python benchmarks/alternatives.py --tau-rnd 1k,13k2d,1k3d,13k

The tables are ``tablesafe.synthetic`` data with holdings (p% rule, p=15): ``1k`` (2-D,
1,122 cells), ``13k`` (3-D, 13,851 cells) and ``100k`` (3-D, 105 x 34 x 27 = 96,390 cells,
generated here). On each, CTA runs with ``cta_directions="auto"`` (the MILP up to 20,000
cells, seed 003's alternating heuristic above) and with ``"alternating"``, and controlled
rounding to ``--base``; every table passes ``tablesafe.adjust.check`` (a failed check
raises). Columns: seconds, the sum of relative deviations, the largest relative change of
a non-sensitive cell, cells changed and totals moved. The figures go to the subsection
``### CTA and controlled rounding on generated tables`` of RESULTS.md unless
``--no-write``.

``--tau-rnd PRESETS`` instead rounds the generated tables of those presets (seed 1) with
tablesafe's controlled rounding and with tau-ARGUS RND through pytauargus (a
benchmark-only dependency, in a subprocess: ``tau_runner.run_tau``), both to the smallest
base pytauargus accepts for the table (a power of ten a digit below the largest cell),
and checks each table the same way, independently of either tool: every cell a multiple
of the base within one base of its value, the relations adding up. Columns: seconds,
cells changed, sum of absolute changes, and that check (subsection ``### Controlled
rounding beside tau-ARGUS RND``).

``--noise PRESETS`` protects the microdata of those presets (seed 1, holdings, holding
cohesion 0.7) with ``method="noise"`` (``--noise-percent``, default 10): seconds, the share
of cells published, their mean and largest relative error, the sensitive cells the noise
protected and the cells withheld (subsection ``### Noise added to the microdata``).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "src"))

from results_file import write_subsection

from tablesafe.adjust import AdjustOptions, adjust_checked
from tablesafe.errors import TablesafeError
from tablesafe.problem import Problem
from tablesafe.synthetic import problem_from_data, synthetic_preset, synthetic_problem

SECTION = "## Adjustment: CTA and controlled rounding (issue 14)"
SUB = "### CTA and controlled rounding on generated tables"

SUB_TAU = "### Controlled rounding beside tau-ARGUS RND"

SUB_NOISE = "### Noise added to the microdata"

SIZES = {
    "1k": ("1k", None),
    "13k": ("13k", None),
    "100k": ([[4, 5, 4], [3, 10], [2, 12]], 100_000),
}
"""Size name -> (preset or branching, units)."""


def make(size: str) -> Problem:
    """The generated problem of a size name."""
    shape, units = SIZES[size]
    return synthetic_problem(shape, units=units) if units else synthetic_problem(shape)


def run(problem: Problem, options: AdjustOptions) -> dict:
    """One adjustment, checked; its figures (or the failure in words)."""
    t0 = time.perf_counter()
    try:
        adj = adjust_checked(problem, options)
    except TablesafeError as exc:
        return {"seconds": time.perf_counter() - t0, "failed": str(exc).split(";")[0]}
    q = adj.quality
    how = adj.stats.get("solved_by") or adj.stats.get("milp_status", "")
    return {"seconds": time.perf_counter() - t0, "rel": q.rel_deviation, "max_safe": q.max_rel_change_safe,
            "changed": q.cells_changed, "totals": q.totals_moved, "how": how}


def tau_min_base(values) -> int:
    """The smallest rounding base pytauargus 0.6.0 accepts for a table: for the smallest
    and the largest cell value, ten to the power of one less than its number of digits
    before the point; the larger of the two."""
    import numpy as np

    out = 0
    for v in (float(np.min(values)), float(np.max(values))):
        d, t = 0, v
        while t > 1:
            t /= 10.0
            d += 1
        if d >= 1:
            out = max(out, 10 ** (d - 1))
    return out


def rounding_check(problem: Problem, rounded, base: float) -> str:
    """'valid' when every cell is a multiple of ``base`` within one base of its value and
    the relations add up (1e-6 relative), else what is wrong (tool-independent)."""
    import numpy as np

    r = np.asarray(rounded, dtype=float)
    v = problem.value
    tol = 1e-6 * max(1.0, float(np.max(np.abs(v))))
    off_grid = int(np.sum(np.abs(r / base - np.round(r / base)) > 1e-9))
    far = int(np.sum(np.abs(r - v) >= base - tol))
    resid = np.abs(problem.relations @ r - problem.rhs)
    bad_rel = int(np.sum(resid > tol))
    if not (off_grid or far or bad_rel):
        return "valid"
    return (f"not a rounding: {far:,} cells a base or more from their value, {off_grid:,} off the "
            f"base's multiples, {bad_rel:,} relations not adding up")


def tau_rnd_rows(presets: list[str], timeout: float) -> list[str]:
    """Table rows comparing tablesafe's controlled rounding with tau-ARGUS RND."""
    import numpy as np
    from tau_runner import run_tau

    rows = []
    for name in presets:
        syn = synthetic_preset(name, seed=1)
        problem = problem_from_data(syn, p=15, use_holdings=True)
        base = tau_min_base(problem.value)
        label = f"{name} ({problem.n:,} cells)"
        t0 = time.perf_counter()
        try:
            adj = adjust_checked(problem, AdjustOptions.build("round", rounding_base=base))
            ours = (f"| {label} | {base:,} | tablesafe round | {time.perf_counter() - t0:.1f} | "
                    f"{adj.quality.cells_changed:,} | {adj.quality.abs_deviation:,.0f} | "
                    f"{rounding_check(problem, adj.values, base)} |")
        except TablesafeError as exc:
            ours = (f"| {label} | {base:,} | tablesafe round | {time.perf_counter() - t0:.1f} | — | — | "
                    f"failed: {str(exc).split(';')[0]} |")
        rows.append(ours)
        print(ours, flush=True)
        tau = run_tau(syn, f"RND(1,{base})", timeout)
        if "error" in tau:
            row = f"| {label} | {base:,} | tau-ARGUS RND | {tau['seconds']:.1f} | — | — | {tau['error']} |"
        else:
            got = np.array([tau["values"].get(str(c), np.nan) for c in problem.names])
            missing = int(np.isnan(got).sum())
            got = np.where(np.isnan(got), 0.0, got)
            diff = np.abs(got - problem.value)
            verdict = rounding_check(problem, got, base)
            if missing:
                verdict += f"; {missing:,} cells not in its output"
            row = (f"| {label} | {base:,} | tau-ARGUS RND | {tau['seconds']:.1f} | "
                   f"{int(np.sum(diff > 1e-9)):,} | {diff.sum():,.0f} | {verdict} |")
        rows.append(row)
        print(row, flush=True)
    return rows


def noise_block(presets: list[str], percent: float) -> str:
    """Method noise on generated microdata: one row per preset."""
    import os

    import tablesafe

    load0 = os.getloadavg()
    rows = []
    for preset in presets:
        syn = synthetic_preset(preset, seed=1, holding_cohesion=0.7)
        t0 = time.perf_counter()
        res = tablesafe.protect(syn.data, list(syn.hierarchies.items()), syn.response, "p(15)",
                                holding=syn.holding, tables=syn.table_list, method="noise", noise_percent=percent)
        secs = time.perf_counter() - t0
        st = res.noise.stats
        rows.append(f"| {preset} | {st['cells']:,} | {secs:.1f} | {100 * st['published_share']:.1f} % | "
                    f"{100 * st['mean_relative_error']:.2f} % | {100 * st['largest_relative_error']:.1f} % | "
                    f"{st['sensitive_published_by_noise']:,} of {st['sensitive']:,} | {st['withheld']:,} |")
        print(rows[-1], flush=True)
    load1 = os.getloadavg()
    return "\n".join([
        SUB_NOISE, "",
        f"Command: `PYTHONPATH=src /work/benchvenv/bin/python benchmarks/alternatives.py --noise {','.join(presets)} "
        f"--noise-percent {percent:g}`. Machine: {os.cpu_count()} cores, load average "
        f"{'/'.join(f'{x:.1f}' for x in load0)} at the start, {'/'.join(f'{x:.1f}' for x in load1)} at the end. "
        "Every run passed the suppression audit gate on the noisy table (levels measured from the true values).", "",
        "| table | cells | seconds | cells published | mean relative error (published) | largest | "
        "sensitive cells protected by their noise | withheld |",
        "|---|---:|---:|---:|---:|---:|---:|---:|", *rows, ""])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="1k,13k", help="comma-separated: 1k, 13k, 100k")
    ap.add_argument("--base", type=float, default=5.0)
    ap.add_argument("--time-limit", type=float, default=None, help="seconds per run (default: from the size)")
    ap.add_argument("--methods", default="auto,alternating,round",
                    help="comma-separated: auto (CTA), alternating (CTA heuristic), round")
    ap.add_argument("--no-write", action="store_true")
    ap.add_argument("--tau-rnd", default="", help="presets to round with tablesafe and tau-ARGUS RND (see above)")
    ap.add_argument("--tau-seconds", type=float, default=600.0, help="tau-ARGUS RND limit per table")
    ap.add_argument("--noise", default="", help="presets to protect with method noise (see above)")
    ap.add_argument("--noise-percent", type=float, default=10.0)
    args = ap.parse_args()
    if args.noise:
        block = noise_block([x.strip() for x in args.noise.split(",") if x.strip()], args.noise_percent)
        print(block)
        if not args.no_write:
            write_subsection(SECTION, SUB_NOISE, block)
        return
    if args.tau_rnd:
        presets = [x.strip() for x in args.tau_rnd.split(",") if x.strip()]
        lines = [SUB_TAU, "", "Command: `PYTHONPATH=src /work/benchvenv/bin/python benchmarks/alternatives.py "
                 f"--tau-rnd {args.tau_rnd}` (one run, one machine). Base: the smallest pytauargus accepts for the "
                 "table. Check: done here on each published table, the same for both tools.", "",
                 "| table | base | tool | seconds | cells changed | sum of absolute changes | check |",
                 "|---|---:|---|---:|---:|---:|---|"]
        lines += tau_rnd_rows(presets, args.tau_seconds)
        block = "\n".join(lines) + "\n"
        print(block)
        if not args.no_write:
            write_subsection(SECTION, SUB_TAU, block)
        return
    wanted = {m.strip() for m in args.methods.split(",")}
    rows = []
    for size in [s.strip() for s in args.sizes.split(",") if s.strip()]:
        problem = make(size)
        label = f"{size} ({problem.n:,} cells, {int(problem.sensitive.sum()):,} sensitive)"
        for key, name, options in (
            ("auto", "CTA auto", AdjustOptions.build("cta", time_limit=args.time_limit)),
            ("alternating", "CTA alternating",
             AdjustOptions.build("cta", cta_directions="alternating", time_limit=args.time_limit)),
            ("round", f"rounding base {args.base:g}",
             AdjustOptions.build("round", rounding_base=args.base, time_limit=args.time_limit)),
        ):
            if key not in wanted:
                continue
            got = run(problem, options)
            rows.append((label, name, got))
            print(label, name, got, flush=True)
    lines = [SUB, "", f"Command: `PYTHONPATH=src .venv/bin/python benchmarks/alternatives.py --sizes {args.sizes} "
             f"--base {args.base:g} --methods {args.methods}`"
             + (f" `--time-limit {args.time_limit:g}`" if args.time_limit else "")
             + ". Every table produced passed `tablesafe.adjust.check` (additive within 1e-6, sensitive "
             "cells moved by their levels, bounds kept; rounded cells multiples of the base within one base); "
             "a run that found none says why (nothing would be published).", "",
             "| table | method | seconds | sum of relative deviations | largest relative change of a "
             "non-sensitive cell | cells changed | totals moved | how |",
             "|---|---|---:|---:|---:|---:|---:|---|"]
    for label, name, got in rows:
        if "failed" in got:
            lines.append(f"| {label} | {name} | {got['seconds']:.1f} | — | — | — | — | failed: {got['failed']} |")
        else:
            lines.append(f"| {label} | {name} | {got['seconds']:.1f} | {got['rel']:,.2f} | "
                         f"{100 * got['max_safe']:,.1f} % | {got['changed']:,} | {got['totals']:,} | {got['how']} |")
    block = "\n".join(lines) + "\n"
    print(block)
    if not args.no_write:
        write_subsection(SECTION, SUB, block)


if __name__ == "__main__":
    main()
