"""Every suppression method on generated tables the tests never see, checked by an independent audit.

Run (from the repository root)::

    PYTHONPATH=src python benchmarks/unseen_tables.py [--sizes 1k,5k,13k,30k]
        [--methods optimal,modular,fast] [--seconds 60] [--seed-base 101]
        [--section "## ..."] [--title "### ..."] [--no-write]

What it measures: the issue's requirement that on unseen tables (generated business data,
2-D and 3-D, 1,000 to 30,000 cells, enterprises grouped in holdings) an independent
auditor finds no under-protected sensitive cell, whatever the method. Each table is drawn
by :func:`tablesafe.synthetic.synthetic_data` with a seed the test-suite does not use
(101 and up; ``--seed-base`` moves all eight seeds, so that a later run can draw tables no
earlier run has seen), tabulated with the p% rule (p=15) on holdings
(:func:`tablesafe.synthetic.problem_from_data`), and protected by
``tablesafe.suppress.suppress(problem, method, time_limit=T)`` with singleton protection
on. The pattern is then audited apart from the method's own checks:

- tables of up to ``FULL_AUDIT_MAX_CELLS`` cells: ``tablesafe.audit.audit(..., insider=True)``
  on every sensitive cell (criterion-1 LP intervals, then every withheld single-contributor
  cell fixed to its value by its respondent);
- larger tables: the pattern's certificates are checked by
  ``tablesafe.audit.check_certificates(..., insiders=True)``, and the same LP + insider
  audit runs on a deterministic sample of ``SAMPLE`` sensitive cells, plus every cell whose
  certificates failed or left an insider gap (the audit's targets are restricted by
  giving the other sensitive cells status ``M``: still withheld, no longer audited).

Reported per table and method: seconds of ``suppress`` (and before its final audit, which
the time limit does not cover; a run past the limit + 10 % is named), withheld cells, secondaries,
withheld value (sum of the secondaries' values), under-protected sensitive cells (must be
0), insider findings, and for large tables the certificate failures and insider gaps.
A crash or an under-protected cell is kept in the table, never hidden.
"""

from __future__ import annotations

import argparse
import os
import shlex
import sys
import time
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "src"))

from results_file import write_subsection

from tablesafe.audit import audit, check_certificates
from tablesafe.audit.certificates import INSIDER_GAP
from tablesafe.problem import SECONDARY, Problem
from tablesafe.suppress import suppress
from tablesafe.synthetic import problem_from_data, synthetic_data

SECTION = "## Suppression on unseen generated tables (independent audit)"
SUB = "### Every method on generated 2-D and 3-D tables with holdings (p% rule, p=15)"
FULL_AUDIT_MAX_CELLS = 6_000
SAMPLE = 300
OPTIMAL_MAX_CELLS = 6_000
"""Default size above which ``optimal`` is skipped (``--optimal-max-cells``): before its
search, ``optimal`` checks its start pattern with every attacker LP of every sensitive cell,
with no deadline, so on 13,000-cell tables it runs far past the time limit (one 3-D table
was stopped after 17 minutes with a 60 s limit)."""


@dataclass(frozen=True)
class Table:
    size: str
    dims: int
    branching: list[list[int]]
    units: int
    seed: int

    @property
    def label(self) -> str:
        return f"{self.size} {self.dims}-D"


TABLES = [
    Table("1k", 2, [[3, 9], [2, 3, 4]], 3_000, 101),
    Table("1k", 3, [[3, 4], [2, 5], [4]], 3_000, 102),
    Table("5k", 2, [[3, 5, 4], [3, 4, 4]], 6_000, 103),
    Table("5k", 3, [[3, 3, 2], [2, 3, 3], [5]], 6_000, 104),
    Table("13k", 2, [[4, 5, 5], [4, 5, 4]], 15_000, 105),
    Table("13k", 3, [[2, 3, 3], [2, 3, 3], [3, 5]], 15_000, 106),
    Table("30k", 2, [[5, 6, 5], [5, 5, 5]], 30_000, 107),
    Table("30k", 3, [[3, 4, 3], [2, 3, 4], [2, 7]], 30_000, 108),
]


def say(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", flush=True)


def restricted(problem: Problem, targets: np.ndarray) -> Problem:
    """The problem whose only sensitive cells are ``targets`` (the others become ``M``)."""
    status = problem.status.copy()
    others = problem.sensitive.copy()
    others[targets] = False
    status[others] = SECONDARY
    return problem.copy(status=status)


def independent_audit(problem: Problem, withheld: np.ndarray, certs, sample_size: int = SAMPLE) -> dict:
    """Audit a pattern apart from the method; see the module docstring."""
    truth = problem.copy(rhs=problem.relations @ problem.value)  # relations as they hold
    sens = np.flatnonzero(problem.sensitive)
    out: dict = {"published_sensitive": int(np.sum(~withheld[sens]))}
    t0 = time.perf_counter()
    if problem.n <= FULL_AUDIT_MAX_CELLS:
        res = audit(truth, withheld, insider=True)
        out["audited"] = "all"
    else:
        fails = check_certificates(truth, withheld, certs, insiders=True)
        gaps = [f for f in fails if f.reason.startswith(INSIDER_GAP)]
        other = [f for f in fails if not f.reason.startswith(INSIDER_GAP)]
        out["cert_failures"] = len(other)
        out["cert_failure_examples"] = [tuple(f) for f in other[:5]]
        out["insider_gaps"] = len(gaps)
        index = {str(name): k for k, name in enumerate(problem.names)}
        flagged = {index[str(f.target)] for f in fails if str(f.target) in index}
        sample = np.random.default_rng(0).choice(sens, size=min(sample_size, len(sens)), replace=False)
        targets = np.union1d(sample, np.fromiter(flagged, dtype=np.int64, count=len(flagged)))
        res = audit(restricted(truth, targets), withheld, insider=True)
        out["audited"] = f"{len(sample)} sampled" + (f" + {len(flagged) } flagged" if flagged else "")
    bad = res.failing
    out["under"] = len(bad)
    out["under_cells"] = [f"{problem.names[k]} ({res.verdict[k]})" for k in bad[:10]]
    ins = res.insider_findings
    out["insider"] = len(ins)
    out["insider_targets"] = int(ins["target"].nunique()) if len(ins) else 0
    out["insider_examples"] = ins.head(5).to_dict("records") if len(ins) else []
    out["audit_seconds"] = time.perf_counter() - t0
    return out


LIMIT_SLACK = 1.1
"""A run is within its time limit when it ends before ``LIMIT_SLACK`` times the limit (its
final audit aside), as issue 12 asks of every method."""


def run(table: Table, problem: Problem, method: str, seconds: float, sample_size: int = SAMPLE) -> dict:
    row: dict = {"table": table.label, "seed": table.seed, "limit": seconds, "cells": problem.n,
                 "sensitive": int(problem.sensitive.sum()), "method": method}
    t0 = time.perf_counter()
    try:
        pat = suppress(problem, method, time_limit=seconds, certificates=problem.n > FULL_AUDIT_MAX_CELLS)
    except Exception as exc:  # noqa: BLE001 - a crash is a result: report it, never hide it
        row.update(seconds=time.perf_counter() - t0, error=f"{type(exc).__name__}: {exc}")
        return row
    w = np.asarray(pat.withheld, dtype=bool)
    sec = w & ~problem.sensitive
    row.update(seconds=time.perf_counter() - t0, withheld=int(w.sum()), secondary=int(sec.sum()),
               withheld_value=float(np.abs(problem.value[sec]).sum()), stats=pat.stats)
    try:
        row.update(independent_audit(problem, w, pat.certificates, sample_size))
    except Exception as exc:  # noqa: BLE001
        row["error"] = f"audit crashed: {type(exc).__name__}: {exc}"
    return row


def cell(row: dict) -> list[str]:
    """The markdown cells of a result row."""
    base = [row["table"], str(row["seed"]), f"{row['cells']:,}", f"{row['sensitive']:,}", row["method"],
            f"{row['seconds']:.1f}"]
    if "withheld" not in row:
        return base + ["-"] * 9 + [f"**crash**: {row['error']}"]
    notes = []
    st = row["stats"]
    before = float(st.get("seconds_before_audit", row["seconds"]))
    base.append(f"{before:.1f}")
    if before > LIMIT_SLACK * row["limit"]:
        notes.append(f"**past the limit + {100 * (LIMIT_SLACK - 1):.0f} %**")
    if st.get("time_limit_hit") or st.get("cleanup_stopped_by"):
        notes.append("time limit hit")
    if "gap" in st:
        notes.append(f"optimal gap {100 * st['gap']:.1f}%")
    if "certificate_repair_added" in st:
        notes.append(f"certificate repair +{st['certificate_repair_added']} "
                     f"({st.get('certificate_repair_seconds', float('nan')):.0f} s)")
    if "error" in row:
        notes.append(f"**{row['error']}**")
    if row.get("under_cells"):
        notes.append("under-protected: " + ", ".join(row["under_cells"]))
    if row.get("insider_examples"):
        notes.append("insider: " + ", ".join(
            f"{e['target']} by the sole contributor of {e['attacker'].removeprefix('sole contributor of ')}"
            f" ({e['verdict']})" for e in row["insider_examples"][:2]) + (" ..." if row["insider"] > 2 else ""))
    if row.get("published_sensitive"):
        notes.append(f"{row['published_sensitive']} sensitive cells published")
    certs = (f"{row['cert_failures']} / {row['insider_gaps']}" if "cert_failures" in row else "-")
    under = row.get("under", "?")
    return base + [f"{row['withheld']:,}", f"{row['secondary']:,}", f"{row['withheld_value']:,.0f}",
                   row.get("audited", "?"), f"**{under}**" if under else "0",
                   f"{row.get('insider', '?')} ({row.get('insider_targets', '?')} cells)", certs,
                   f"{row.get('audit_seconds', float('nan')):.0f}", "; ".join(notes)]


def write(rows: list[dict], args: argparse.Namespace, skipped: list[str], load: str, wall: float,
          partial: bool = False) -> None:
    cmd = "PYTHONPATH=src python benchmarks/unseen_tables.py " + shlex.join(sys.argv[1:])
    seeds = sorted({r["seed"] for r in rows})
    seed_text = f"seeds {seeds[0]}-{seeds[-1]}" if seeds else "no seed"
    lines = [
        args.title, "", f"Command: `{cmd.strip()}`", "",
        (f"Generated with `tablesafe.synthetic.synthetic_data` ({seed_text}, not used by the tests), "
        "p% rule p=15 on holdings (`problem_from_data`, `use_holdings=True`), cost = value. "
        f"Each method runs through `suppress(problem, method, time_limit={args.seconds:g})` with "
        "singleton protection on. Independent audit: tables up to "
        f"{FULL_AUDIT_MAX_CELLS:,} cells get `tablesafe.audit.audit(..., insider=True)` on every "
        "sensitive cell; larger tables get `check_certificates(..., insiders=True)` on the pattern's "
        f"certificates plus the same LP + insider audit on a deterministic sample of {args.sample} "
        "sensitive cells and on every cell whose certificates failed or left an insider gap."),
        "",
        (f"Machine: 2 cores; load average {load}. Seconds before the audit: the run before "
         "`suppress`'s own final audit, which its time limit does not cover. "
        f"Whole run: {wall / 60:.0f} min."),
        "",
    ]
    if partial:
        lines += ["**Partial: the run was still in progress when this was written.**", ""]
    if skipped:
        lines += ["Skipped: " + "; ".join(skipped) + ".", ""]
    lines += [
        ("| table | seed | cells | sensitive | method | seconds | seconds before the audit | withheld | "
        "secondary | withheld value (secondaries) | audited cells | under-protected | insider findings | "
        "certificate failures / insider gaps | audit s | note |"),
        "|---|---:|---:|---:|---|---:|---:|---:|---:|---:|---|---:|---:|---|---:|---|",
        *["| " + " | ".join(cell(r)) + " |" for r in rows],
        "",
    ]
    write_subsection(args.section, args.title, "\n".join(lines))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="1k,5k,13k,30k")
    ap.add_argument("--dims", default="2,3")
    ap.add_argument("--methods", default="optimal,modular,fast")
    ap.add_argument("--seconds", type=float, default=60.0, help="time limit per suppress call")
    ap.add_argument("--optimal-max-cells", type=int, default=OPTIMAL_MAX_CELLS,
                    help="skip optimal above this many cells")
    ap.add_argument("--modular-max-cells", type=int, default=30_000,
                    help="skip modular above this many cells")
    ap.add_argument("--sample", type=int, default=SAMPLE,
                    help="sensitive cells audited by LP on tables above the full-audit size")
    ap.add_argument("--seed-base", type=int, default=TABLES[0].seed,
                    help="seed of the first table (the others follow in order)")
    ap.add_argument("--section", default=SECTION, help="the RESULTS.md section the subsection goes in")
    ap.add_argument("--title", default=SUB, help="the RESULTS.md subsection the rows are written to")
    ap.add_argument("--no-write", action="store_true")
    args = ap.parse_args()
    sizes, dims = args.sizes.split(","), [int(d) for d in args.dims.split(",")]
    methods = args.methods.split(",")
    t_start = time.perf_counter()
    rows: list[dict] = []
    skipped: list[str] = []
    loads: list[float] = []
    for table in TABLES:
        if table.size not in sizes or table.dims not in dims:
            continue
        table = replace(table, seed=table.seed - TABLES[0].seed + args.seed_base)
        problem = problem_from_data(synthetic_data(table.branching, table.units, seed=table.seed), p=15)
        say(f"{table.label} (seed {table.seed}, branching {table.branching}, {table.units:,} enterprises): "
            f"{problem.n:,} cells, {int(problem.sensitive.sum()):,} sensitive")
        for method in methods:
            if method == "optimal" and problem.n > args.optimal_max_cells:
                skipped.append(f"optimal on {table.label} ({problem.n:,} cells > {args.optimal_max_cells:,}: "
                               "its check of the start pattern runs every attacker LP, past the time limit)")
                say(f"  {method}: skipped")
                continue
            if method == "modular" and problem.n > args.modular_max_cells:
                skipped.append(f"modular on {table.label} ({problem.n:,} cells > {args.modular_max_cells:,})")
                say(f"  {method}: skipped")
                continue
            loads.append(os.getloadavg()[0])
            say(f"  {method}: running (load {loads[-1]:.2f})")
            row = run(table, problem, method, args.seconds, args.sample)
            rows.append(row)
            if "withheld" in row:
                say(f"  {method}: {row['seconds']:.1f} s, {row['withheld']:,} withheld, "
                    f"{row['secondary']:,} secondary, value {row['withheld_value']:,.0f}; audit "
                    f"({row.get('audited')}, {row.get('audit_seconds', 0):.0f} s): "
                    f"under-protected {row.get('under')}, insider findings {row.get('insider')}, "
                    f"cert failures/gaps {row.get('cert_failures', '-')}/{row.get('insider_gaps', '-')}"
                    + (f" ERROR {row['error']}" if "error" in row else ""))
                say(f"    stats: { {k: v for k, v in row['stats'].items() if not isinstance(v, (list, dict))} }")
                for key in ("under_cells", "insider_examples", "cert_failure_examples"):
                    if row.get(key):
                        say(f"    {key}: {row[key]}")
            else:
                say(f"  {method}: CRASH after {row['seconds']:.1f} s: {row['error']}")
        if not args.no_write:  # after every table, so that an interrupted run leaves its rows
            write(rows, args, skipped, load_text(loads), time.perf_counter() - t_start, partial=True)
    wall = time.perf_counter() - t_start
    say(f"done in {wall / 60:.1f} min; load {load_text(loads)}")
    if not args.no_write:
        write(rows, args, skipped, load_text(loads), wall)
        say(f"written to {HERE / 'RESULTS.md'}")


def load_text(loads: list[float]) -> str:
    return f"{min(loads):.1f} to {max(loads):.1f} (1-minute, sampled before each run)" if loads else "n/a"


if __name__ == "__main__":
    main()
