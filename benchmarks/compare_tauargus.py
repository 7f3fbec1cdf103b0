"""Side-by-side benchmark of tablesafe's suppression methods and tau-ARGUS (pytauargus).

Run (from the repository root):

    PYTHONPATH=src /work/benchvenv/bin/python benchmarks/compare_tauargus.py [--quick]
    ... compare_tauargus.py --holdings --sizes 2k2d,2k3d --no-castro --no-tau-testw
    ... compare_tauargus.py --linked [--linked-preset linked3k]

Tables: the tau-ARGUS test data (tau_testW, Var2 by Size x Region with region2.hrc, p% rule
p=15; its larger tables with the hierarchical IndustryCode are ``--sizes`` of
:data:`TESTW_TABLES`), generated hierarchical business tables (tablesafe.synthetic presets, the shapes of
:data:`VARIED` and the irregular hierarchies of ``irregular_shapes.py``, ``--sizes``;
default ``1k``, ``13k``, ``60k``; p% rule p=15, n=1), and the Castro JJ instances (our
methods only: tau-ARGUS cannot read JJ through pytauargus' microdata pipeline).

Holdings. By default the rule applies to enterprises. With ``--holdings`` it applies to
holdings on both sides: ``problem_from_data(..., use_holdings=True)`` for tablesafe and
the HOLDING variable with ``P(15,1)|P(15,1)|P(15,1)`` for tau-ARGUS (its third P rule is
the holding-level rule; see benchmarks/tau_runner.py), and the generated data let
holdings share cells (``holding_cohesion``, default 0.7 with ``--holdings``) so that the
holding rule matters. Every tau-ARGUS row's note compares its primaries (status ``U``)
and their protection levels with ours.

Linked tables. ``--linked`` runs only the linked pair (preset ``linked65k``: industry x
region x size, 40,664 cells, and industry x region x legal form, 26,520 cells, one
model of 65,416 cells; ``linked3k`` is the same shape with 2,736 cells): tablesafe
protects the linked problem (the one ``tablesafe.protect(..., tables=[...])`` builds);
tau-ARGUS through pytauargus cannot link tables, so its rows protect each table on its
own (a shared cell withheld when either table withholds it), audited on the linked model.

Every pattern — ours and tau-ARGUS's — is audited by the same LP audit on OUR model
(``tablesafe.audit.audit(..., insider=False)``; for tables with more sensitive cells than
``--audit-sample`` and for non-additive JJ instances the block-decomposed HiGHS audit below,
on a deterministic sample): the table counts the sensitive cells whose feasibility interval does not
reach value + upl and value - lpl. tau-ARGUS runs in a subprocess (its native engine can
crash) with its own time limit (OPT(1,minutes), MOD(1,minutes,1,1,0)).

Results are written to the section ``## Suppression: fast and comparison with tau-ARGUS``
of benchmarks/RESULTS.md (the rest of the file is left alone).
"""

from __future__ import annotations

import argparse
import os
import shlex
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT / "src"))

import plain_lp
from irregular_shapes import IRREGULAR, irregular_data
from plain_lp import plain_lp_check
from random_shapes import is_random, random_data
from tau_runner import cpu_seconds, run_tau

from tablesafe.problem import Problem
from tablesafe.structure import Hierarchy
from tablesafe.synthetic import SyntheticData, problem_from_data, synthetic_data, synthetic_preset

SHARED = Path(os.environ.get("TABLESAFE_SHARED", "/work/shared"))
SECTION = "## Suppression: fast and comparison with tau-ARGUS"


# ----------------------------------------------------------------------------- data
TESTW_COLUMNS = {"industry": (3, 8), "size": (8, 10), "region": (11, 13)}
"""Fixed-width columns of tau_testW's classification variables (Tau_TestW.rda)."""

TESTW_TABLES = {
    "testw-industry-region": ("industry", "region"),
    "testw-industry-size": ("industry", "size"),
    "testw-industry-size-region": ("industry", "size", "region"),
}
"""tau-ARGUS's own test data as further ``--sizes``: IndustryCode (hierarchy digits 3 1 1,
some 710 codes), Size (8 codes) and Region (region2.hrc) crossed, response Var2; every
record its own holding (the file has none). Real data: its skew and its gaps are not
``tablesafe.synthetic``'s."""


def tau_testw(dims: tuple[str, ...] = ("size", "region")) -> SyntheticData:
    """tau_testW: the table of ``dims`` (default Size x Region with region2.hrc), response Var2."""
    base = SHARED / "benchmarks" / "tauargus"
    cols = [TESTW_COLUMNS[d] for d in dims]
    df = pd.read_fwf(
        base / "tau_testW.asc", colspecs=[*cols, (27, 37)], names=[*dims, "Var2"], dtype={d: str for d in dims},
    )
    for d in dims:
        df[d] = df[d].str.strip()
    df.insert(0, "id", np.arange(len(df)))
    df.insert(1, "holding", np.arange(len(df)))
    every = {
        "industry": lambda: Hierarchy.from_lengths(df["industry"], [3, 1, 1], cumulative=False),
        "size": lambda: Hierarchy.flat(sorted(df["size"].unique(), key=int)),
        "region": lambda: Hierarchy.from_hrc(base / "region2.hrc"),
    }
    return SyntheticData(data=df, hierarchies={d: every[d]() for d in dims}, response="Var2")


ENTERPRISE_TABLES = {
    "enterprise-act-region": ("act", "region"),
    "enterprise-act-product": ("act", "product"),
    "enterprise-act-region-product": ("act", "region", "product"),
}
"""tau-ARGUS's ``example_enterprise`` data as further ``--sizes``: 8,169 records of 5,100
holdings; NACE divisions (nace_divisions.hrc, 110 codes) by region (KohStatReg.hrc, 15)
and product (14, flat), response turnover. The three-way table has 24,750 cells, 70 %
of them empty. Records with the missing activity code ``00`` (14) are left out, as the
hierarchy does not list it. (The municipality hierarchy NUTS.hrc lists code 11 under
two regions, so it is not used.)"""


def enterprise(dims: tuple[str, ...]) -> SyntheticData:
    """tau-ARGUS's example_enterprise microdata tabulated over ``dims``, with its holdings."""
    base = SHARED / "benchmarks" / "tauargus" / "example_enterprise"
    cols = {"act": (9, 11), "region": (13, 15), "product": (11, 13)}
    df = pd.read_fwf(
        base / "example_enterprise.asc", colspecs=[(0, 9), *(cols[d] for d in dims), (18, 26)],
        names=["holding", *dims, "turnover"], dtype={"holding": str, **{d: str for d in dims}},
    )
    if "act" in dims:
        df = df[df["act"] != "00"].reset_index(drop=True)
    df.insert(0, "id", np.arange(len(df)))
    every = {
        "act": lambda: Hierarchy.from_hrc(base / "nace_divisions.hrc"),
        "region": lambda: Hierarchy.from_hrc(base / "KohStatReg.hrc"),
        "product": lambda: Hierarchy.flat(sorted(df["product"].unique())),
    }
    return SyntheticData(data=df, hierarchies={d: every[d]() for d in dims}, response="turnover")


VARIED: dict[str, dict] = {
    # deep and narrow: five and four levels of two or three children
    "deep2d": {"branching": [[2, 2, 2, 2, 3], [2, 2, 3, 3]], "units": 8_000},
    # wide and flat: one level of 120 by 40 codes (one subtable: the whole table)
    "wide2d": {"branching": [[120], [40]], "units": 20_000},
    # dense: few cells, many enterprises each (few sensitive cells)
    "dense2d": {"branching": [[4, 6], [5, 6]], "units": 200_000},
    # very skewed turnover and uneven leaves
    "skew2d": {"branching": [[5, 5, 4], [4, 6]], "units": 10_000, "sigma": 2.6, "concentration": 1.6},
    # no holdings: every enterprise its own
    "nohold2d": {"branching": [[5, 5, 8], [7, 7]], "units": 40_000, "holding_share": 0.0},
    # sparse three-way: few enterprises over many cells
    "sparse3d": {"branching": [[3, 4], [3, 4], [2, 5]], "units": 3_000, "concentration": 2.0},
    # three-way, one deep, one flat and one short dimension
    "mixed3d": {"branching": [[3, 3, 3], [10], [2, 2]], "units": 10_000},
    # four-way
    "4d": {"branching": [[2, 3], [3], [2, 3], [3]], "units": 6_000},
    # flat and large: one subtable of about 13,000 cells (300 by 42 codes)
    "flat13k2d": {"branching": [[300], [42]], "units": 40_000},
    # three-way and flat: 40 by 25 by 6 codes
    "wide3d": {"branching": [[40], [25], [6]], "units": 15_000},
    # three-way and deep: four, three and two levels
    "deep3d": {"branching": [[2, 2, 2, 3], [2, 2, 3], [2, 2]], "units": 8_000},
}
"""Generated shapes other than the presets (``--sizes`` names them like presets): other
depths and fan-outs of hierarchies, dense and sparse, skewed sizes, without holdings, 3-D
and 4-D, each about 1,000-13,000 cells."""


def generated(name: str, seed: int, cohesion: float) -> SyntheticData:
    """A preset of :data:`tablesafe.synthetic.PRESETS`, a shape of :data:`VARIED` or
    one of :data:`irregular_shapes.IRREGULAR`, or a random shape ``rand<N>``
    (:mod:`random_shapes`; ``seed`` and ``cohesion`` do not move it)."""
    if is_random(name):
        return random_data(name)
    if name in IRREGULAR:
        return irregular_data(name, seed, cohesion)
    if name in TESTW_TABLES:
        return tau_testw(TESTW_TABLES[name])
    if name in ENTERPRISE_TABLES:
        return enterprise(ENTERPRISE_TABLES[name])
    if name in VARIED:
        spec = dict(VARIED[name])
        return synthetic_data(spec.pop("branching"), spec.pop("units"), seed=seed, holding_cohesion=cohesion,
                              **spec)
    return synthetic_preset(name, seed=seed, holding_cohesion=cohesion)


def datasets(quick: bool, sizes: list[str], testw: bool = True, seed: int = 1,
             cohesion: float = 0.0) -> list[tuple[str, SyntheticData]]:
    """The tables of the run: tau_testW (if ``testw``) and the generated presets or shapes."""
    out = [("tau_testW Size x Region", tau_testw())] if testw else []
    for name in (["1k"] if quick else sizes):
        syn = generated(name, seed, cohesion)
        label = f"generated {name}"
        if name in TESTW_TABLES or name in ENTERPRISE_TABLES:
            label = ("tau_testW " if name in TESTW_TABLES else "example_enterprise ") + " x ".join(syn.dims)
        if syn.tables:
            label += " (linked " + " + ".join(f"{n:,}" for n in syn.table_sizes()) + " cells)"
        out.append((label, syn))
    return out


# ----------------------------------------------------------------------------- audit
def lp_audit(problem: Problem, withheld: np.ndarray, sample: int | None = None) -> tuple[int, int]:
    """(under-protected, audited) sensitive cells by LP, block by block, warm-started.

    The attacker knows every published cell, the relations and the a priori bounds; for
    each audited sensitive cell two LPs give its feasibility interval. With ``sample`` only
    a deterministic sample of that many sensitive cells is audited (for large tables).
    """
    try:  # the audit area's implementation, once it is on main
        from tablesafe.audit import audit as real_audit  # type: ignore[attr-defined]
    except ImportError:
        real_audit = None
    if real_audit is not None and sample is None:
        try:
            # relations as they hold for the true values (JJ instances carry rounding)
            truth = problem.copy(rhs=problem.relations @ problem.value)
            res = real_audit(truth, withheld, insider=False)
        except Exception:  # noqa: BLE001 - e.g. non-additive JJ instances: the LP below copes
            res = None
        if res is not None:
            verdict = np.asarray(res.verdict)
            return int(np.sum((verdict != "") & (verdict != "protected"))), int(problem.sensitive.sum())
    # a deterministic sample of the sensitive cells, audited by the same LPs
    from tablesafe.audit.intervals import solve_intervals
    from tablesafe.audit.result import verdicts

    sens = np.flatnonzero(problem.sensitive)
    bad = int(np.sum(~withheld[sens]))  # a published sensitive cell is exact
    sens = sens[withheld[sens]]
    if sample is not None and len(sens) > sample:
        sens = np.sort(np.random.default_rng(0).choice(sens, size=sample, replace=False))
    truth = problem.copy(rhs=problem.relations @ problem.value)
    res = solve_intervals(truth, withheld, cells=sens)
    v = np.asarray(verdicts(truth, res.lower, res.upper, sens))
    if len(v) == problem.n:
        v = v[sens]
    bad += int(np.sum((v != "") & (v != "protected")))
    return bad, len(sens) + int(np.sum(~withheld[np.flatnonzero(problem.sensitive)]))


# ----------------------------------------------------------------------------- tau-ARGUS
def compare_primaries(problem: Problem, res: dict) -> str:
    """How tau-ARGUS's primaries (status ``U``) and protection levels compare with ours."""
    names = problem.names.astype(str)
    st = np.array([res["status"].get(n, "?") for n in names])
    tau = st == "U"
    ours = problem.sensitive
    only_ours, only_tau = int(np.sum(ours & ~tau)), int(np.sum(tau & ~ours))
    levels = res.get("levels", {})
    both = np.flatnonzero(ours & tau)
    up = np.array([levels.get(names[k], (np.nan, np.nan))[1] for k in both])
    # tau-ARGUS writes levels with two decimals
    off = int(np.sum(~(np.abs(up - problem.upl[both]) <= 0.01 + 1e-6 * np.abs(problem.upl[both]))))
    if not (only_ours or only_tau or off):
        return f"same {int(ours.sum())} primaries and levels"
    return (f"primaries: {int(tau.sum())} tau-ARGUS, {int(ours.sum())} ours ({only_ours} only ours, "
            f"{only_tau} only tau-ARGUS); {off} upper levels differ")


# ----------------------------------------------------------------------------- ours
def run_ours(problem: Problem, method: str, time_limit: float) -> dict:
    """Our method through the dispatcher: search, repair or certificate check, cleanup, audit.

    ``METHOD-nosingleton`` runs it without singleton protection (like tau-ARGUS OPT).
    """
    from tablesafe.suppress import suppress

    t0 = time.perf_counter()
    c0 = cpu_seconds()
    singleton = not method.endswith("-nosingleton")
    try:
        pat = suppress(problem, method=method.removesuffix("-nosingleton"), time_limit=time_limit or None,
                       singleton=singleton)
    except Exception as exc:  # noqa: BLE001 - a benchmark records failures and goes on
        return {"error": f"{type(exc).__name__}: {str(exc)[:70]}", "seconds": time.perf_counter() - t0}
    st = pat.stats
    note = "proved by certificates" if st.get("audit") == "certificates" else "LP audit passed"
    if st.get("insider_certificate_gaps"):
        note += f"; {st['insider_certificate_gaps']} insider gaps"
        if st.get("insider_gaps_checked"):
            note += (f", their {st['insider_gaps_checked']} targets checked by attacker LPs "
                     f"({st['insider_gaps_seconds']:.0f} s, {st.get('repair_added', 0)} cells added)")
        elif st.get("singleton_attacks_checked") is False:
            note += " left unchecked"
    if st.get("gap") is not None:
        note += f"; MIP gap {st['gap']:.3f}"
    if st.get("lower_bound"):
        # valid for every pattern safe against the same attackers (cut generation's bound)
        note += f"; lower bound {st['lower_bound']:,.0f}"
    if st.get("repair_timed_out"):
        note += f"; {st['repair_timed_out']} out of time, certificates completed it"
    if st.get("outsiders_first"):
        # fast's second try (tablesafe.suppress.outsiders_first): what happened, in short
        note += f"; second try {str(st['outsiders_first']).split(':')[0]}"
    if "seconds_before_audit" in st:
        note += f"; {st['seconds_before_audit']:.0f} s of its {st['time_limit']:.0f} s limit before the final audit"
    if st.get("clock_decided"):
        # another run on the same input, on a faster or less loaded machine, may differ
        note += "; ended by the clock: " + ", ".join(st["clock_decided"])
    return {"withheld": pat.withheld, "seconds": time.perf_counter() - t0, "cpu": cpu_seconds() - c0, "note": note,
            "proven": st.get("audit") == "certificates" and not st.get("insider_certificate_gaps")}


INSIDER_3D_MAX_CELLS = 5_000
"""Three-way tables up to this size get the insider audit unless ``--insider-3d-max-cells``
says otherwise (example_enterprise's 24,750-cell table: 345 s for tablesafe's pattern,
998 s for tau-ARGUS MOD's, forty-sixth session)."""


def insider_audit(problem: Problem, withheld: np.ndarray, max_cells: int,
                  three_way_max: int = INSIDER_3D_MAX_CELLS) -> str:
    """Sensitive cells that a single respondent of a withheld cell, knowing its own cell,
    bounds too closely although the outsider cannot (tablesafe's audit, every cell); "-"
    where the table is too large for it (``max_cells``; three-way tables above
    ``three_way_max`` cells, whose insider audit takes minutes)."""
    from tablesafe.audit import audit

    dims = len(problem.model.dims) if problem.model is not None else 0
    if problem.n > max_cells or (dims >= 3 and problem.n > three_way_max):
        return "-"
    res = audit(_truth(problem), withheld)
    found = res.insider_findings
    if not len(found):
        return "0"
    failing = set(problem.names[res.failing].astype(str).tolist())
    return str(len({str(t) for t in found["target"]} - failing))


def row(table: str, tool: str, problem: Problem, res: dict, sample: int | None,
        insider_max_cells: int = 0, plain_max_cells: int = 0,
        insider_3d_max_cells: int = INSIDER_3D_MAX_CELLS) -> dict:
    out = {"table": table, "cells": problem.n, "sensitive": int(problem.sensitive.sum()), "tool": tool}
    if "error" in res:
        out.update(seconds=res["seconds"], withheld="-", withheld_value="-", secondary="-",
                   under_protected="-", note=res["error"])
        return out
    w = res["withheld"]
    t0 = time.perf_counter()
    if res.get("proven"):
        bad, audited = 0, out["sensitive"]  # every certificate checked (dispatcher)
    else:
        bad, audited = lp_audit(problem, w, sample)
    audit_secs = time.perf_counter() - t0
    t2 = time.perf_counter()
    out["insider"] = (insider_audit(problem, w, insider_max_cells, insider_3d_max_cells)
                      if insider_max_cells else "-")
    insider_secs = time.perf_counter() - t2
    t1 = time.perf_counter()
    plain_sample = (None if problem.n <= PLAIN_ALL_MAX else PLAIN_SAMPLE if problem.n <= PLAIN_BIG
                    else PLAIN_SAMPLE_BIG)
    if plain_max_cells and problem.n > plain_max_cells:
        out["plain_lp"] = "not run"
    else:
        pbad, paudited, undecided = plain_lp_check(_truth(problem), w, plain_sample, max_seconds=PLAIN_SECONDS)
        out["plain_lp"] = ((f"{pbad}" if paudited == out["sensitive"] else f"{pbad} of {paudited} sampled")
                           + (f", {undecided} undecided" if undecided else ""))
    plain_secs = time.perf_counter() - t1
    sec = w & ~problem.sensitive
    out.update(
        seconds=res["seconds"], cpu=res.get("cpu"), withheld=int(w.sum()), secondary=int(sec.sum()),
        withheld_value=float(problem.value[sec].sum()),
        under_protected=(f"{bad}" if audited == out["sensitive"] else f"{bad} of {audited} sampled")
        + (" (certificates)" if res.get("proven") else ""),
        note=(res.get("note", "") + ("" if res.get("proven") else f" (audit {audit_secs:.0f} s)")
              + (f" (insider audit {insider_secs:.0f} s)" if out["insider"] != "-" else "")
              + f" (plain LP {plain_secs:.0f} s)").strip(),
    )
    return out


PLAIN_ALL_MAX = 3_000  # tables up to this size: every sensitive cell by plain LP
PLAIN_SAMPLE = 150  # larger tables: a deterministic sample
PLAIN_BIG = 200_000  # tables above this size: a smaller sample
PLAIN_SAMPLE_BIG = 30
PLAIN_SECONDS = 900.0  # the plain check of one pattern stops starting cells after this long


def _truth(problem: Problem) -> Problem:
    return problem.copy(rhs=problem.relations @ problem.value)


def tau_mask(problem: Problem, status: dict) -> tuple[np.ndarray, int]:
    names = problem.names.astype(str)
    st = np.array([status.get(n, "?") for n in names])
    missing = int(np.sum(st == "?"))
    return np.isin(st, ("U", "M")), missing


def write_results(rows: list[dict], command: str, notes: list[str], section: str = SECTION) -> None:
    path = HERE / "RESULTS.md"
    text = path.read_text() if path.exists() else "# Benchmark results\n"
    lines = [section, "", f"Command: `{command}`", ""]
    lines += notes + [""]
    lines.append("| table | cells | sensitive | tool | seconds | CPU seconds | withheld | secondary | withheld value "
                 "(secondaries) | under-protected (our audit) | under-protected (plain LP) | "
                 "recalculable by a single respondent (our audit) | note |")
    lines.append("|---|---:|---:|---|---:|---:|---:|---:|---:|---|---|---|---|")
    for r in rows:
        wv = r["withheld_value"]
        wv = f"{wv:,.0f}" if isinstance(wv, float) else wv
        cpu = f"{r['cpu']:.1f}" if isinstance(r.get("cpu"), float) else "-"
        lines.append(
            f"| {r['table']} | {r['cells']:,} | {r['sensitive']:,} | {r['tool']} | {r['seconds']:.1f} | {cpu} | "
            f"{r['withheld']} | {r['secondary']} | {wv} | {r['under_protected']} | "
            f"{r.get('plain_lp', '-')} | {r.get('insider', '-')} | {r['note']} |"
        )
    block = "\n".join(lines) + "\n"
    if section in text:
        start = text.index(section)
        nxt = text.find("\n## ", start + len(section))
        end = len(text) if nxt < 0 else nxt + 1
        # keep a large-table subsection written by large_table.py
        sub = text.find("\n### ", start)
        if 0 <= sub < end:
            block += text[sub + 1:end]
        text = text[:start] + block + text[end:]
    else:
        text = text.rstrip("\n") + "\n\n" + block
    tmp = path.with_suffix(".md.tmp")
    tmp.write_text(text)
    tmp.replace(path)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="only tau_testW, 1k and two Castro instances")
    ap.add_argument("--methods", default="fast,modular,optimal")
    ap.add_argument("--tau-minutes", type=int, default=3, help="tau-ARGUS OPT/MOD time limit (minutes)")
    ap.add_argument("--ours-seconds", type=float, default=0.0,
                    help="time limit for our methods (0: the automatic limit of the table size)")
    ap.add_argument("--audit-sample", type=int, default=0,
                    help="audit only a sample of this many sensitive cells on tables of more than 5,000 cells with more (0: all)")
    ap.add_argument("--rows-from", default=None,
                    help="log of an earlier run whose result rows are put first in the table")
    ap.add_argument("--no-castro", action="store_true")
    ap.add_argument("--no-tau-testw", action="store_true")
    ap.add_argument("--castro-names", default="", help="only these Castro instances (comma-separated)")
    ap.add_argument("--sizes", default="1k,13k,60k",
                    help=f"generated table presets, shapes of VARIED ({', '.join(VARIED)}), or tau_testW "
                         f"tables ({', '.join(TESTW_TABLES)}) and example_enterprise tables "
                         f"({', '.join(ENTERPRISE_TABLES)}), or random shapes rand<N> (random_shapes.py)")
    ap.add_argument("--castro-methods", default="fast,optimal",
                    help="our methods on Castro's instances (no table structure: modular = optimal)")
    ap.add_argument("--castro-seconds", type=float, default=60.0, help="time limit on Castro's instances")
    ap.add_argument("--big-methods", default="fast",
                    help="our methods on generated tables of more than 20,000 cells")
    ap.add_argument("--small-methods", default="optimal-nosingleton",
                    help="extra methods on tables of up to 2,000 cells (like for like with OPT)")
    ap.add_argument("--no-tau", action="store_true",
                    help="run only our methods (tau-ARGUS rows can come from --rows-from)")
    ap.add_argument("--no-write", action="store_true")
    ap.add_argument("--insider-max-cells", type=int, default=70_000,
                    help="tables up to this size also get the insider audit (0: none); three-way "
                         "tables only up to --insider-3d-max-cells")
    ap.add_argument("--insider-3d-max-cells", type=int, default=INSIDER_3D_MAX_CELLS,
                    help="three-way tables up to this size get the insider audit (it takes minutes "
                         "on 25,000 cells)")
    ap.add_argument("--section", default=SECTION, help="RESULTS.md heading to write (replaced if present)")
    ap.add_argument("--seed", type=int, default=1, help="seed of the generated tables")
    ap.add_argument("--holdings", action="store_true",
                    help="apply the p%% rule to holdings (both tools; see the module docstring)")
    ap.add_argument("--holding-cohesion", type=float, default=None,
                    help="share of holding members put in their holding's industry (and region) "
                         "(default 0.7 with --holdings, else 0: the data of earlier runs)")
    ap.add_argument("--linked", action="store_true",
                    help="run only the linked pair (--linked-preset): tablesafe on the linked model, "
                         "tau-ARGUS table by table")
    ap.add_argument("--linked-preset", default="linked65k", help="the linked preset of --linked")
    ap.add_argument("--plain-max-cells", type=int, default=0,
                    help="no plain LP check on tables of more cells (0: every table); on the 1,036,350-cell "
                         "table the withheld cells form one component of 549,000 cells, whose first LP did "
                         "not end in 15 minutes")
    ap.add_argument("--note", action="append", default=[], help="a note added above the table (repeatable)")
    ap.add_argument("--tau-methods", default="OPT,MOD", help="the tau-ARGUS methods run (OPT, MOD or both)")
    ap.add_argument("--tau-jobs", type=int, default=1,
                    help="run tau-ARGUS OPT on every table first, this many at a time, with nothing else "
                         "running (OPT mostly runs to its limit; each run is one process on one core); "
                         "1: OPT table by table beside MOD, as before")
    args = ap.parse_args()
    if args.linked:  # the linked pair only
        args.sizes, args.no_tau_testw, args.no_castro = args.linked_preset, True, True
    cohesion = args.holding_cohesion if args.holding_cohesion is not None else (0.7 if args.holdings else 0.0)
    methods = [m for m in args.methods.split(",") if m]
    load_start = os.getloadavg()
    rows: list[dict] = []
    if args.rows_from:
        import ast

        for line in Path(args.rows_from).read_text().splitlines():
            if line.startswith("{'table'"):
                rows.append(ast.literal_eval(line))
    tables = datasets(args.quick, [x for x in args.sizes.split(",") if x], not args.no_tau_testw, args.seed, cohesion)
    opt_spec = f"OPT(1,{args.tau_minutes})"
    tau_runs = [(s, t) for s, t in ((opt_spec, "tau-ARGUS OPT"), (f"MOD(1,{args.tau_minutes},1,1,0)", "tau-ARGUS MOD"))
                if t.split()[-1] in args.tau_methods.split(",")]
    early: dict[str, dict] = {}  # table label -> tau-ARGUS OPT's result, run up front
    if _opt_first(args):
        early = _opt_up_front(tables, opt_spec, args)
    for done, (label, syn) in enumerate(tables):
        holdings = args.holdings and syn.holding in syn.data and not label.startswith("tau_testW")
        problem = problem_from_data(syn, p=15, use_holdings=holdings)
        these = methods if problem.n <= 20_000 else [m for m in args.big_methods.split(",") if m]
        if problem.n <= 2_000:
            these = these + [m for m in args.small_methods.split(",") if m and m not in these]
        big = args.audit_sample and problem.n > 5000 and problem.sensitive.sum() > args.audit_sample
        sample = args.audit_sample if big else None
        print(f"== {label}: {problem.n} cells, {int(problem.sensitive.sum())} sensitive", flush=True)
        for m in these:
            r = row(label, f"tablesafe {m}", problem, run_ours(problem, m, args.ours_seconds), sample,
                    args.insider_max_cells, args.plain_max_cells, args.insider_3d_max_cells)
            print(r, flush=True)
            rows.append(r)
        one_by_one = " (tables one by one)" if syn.tables and len(syn.tables) > 1 else ""
        for sup, tool in () if args.no_tau else tau_runs:
            if sup == opt_spec and label in early:
                res = early.pop(label)
            else:
                res = run_tau(syn, sup, timeout=_tau_timeout(args, syn), p=15, holdings=holdings,
                              tables=syn.table_list)
            if "status" in res:
                prim = compare_primaries(problem, res)
                print(f"   {tool}: {prim}", flush=True)
                mask, missing = tau_mask(problem, res.pop("status"))
                res["withheld"] = mask
                tau_prim = int(np.sum(mask & problem.sensitive))
                res["note"] = (f"{prim}; {tau_prim} of our primaries withheld"
                               + (f"; {missing} cells unmatched" if missing else ""))
            tool += one_by_one
            r = row(label, tool, problem, res, sample, args.insider_max_cells, args.plain_max_cells,
                    args.insider_3d_max_cells)
            print(r, flush=True)
            rows.append(r)
        del problem
        if not args.no_write and done + 1 < len(tables):
            # the rows so far, so that a run stopped later still leaves them (replaced below)
            progress = [f"Run in progress: {done + 1} of {len(tables)} tables done."]
            write_results(_latest(rows), _command(), progress + _notes(args, cohesion, tables, load_start),
                          args.section)
    if not args.no_castro:
        from tablesafe.io.jj import read_jj

        files = sorted((SHARED / "benchmarks" / "castro").glob("*.jj"))
        if args.quick:
            files = [f for f in files if f.stem in ("TARGUS", "TABLE7")]
        if args.castro_names:
            files = [f for f in files if f.stem in args.castro_names.split(",")]
        for f in files:
            problem = read_jj(f)
            big = args.audit_sample and problem.n > 5000 and problem.sensitive.sum() > args.audit_sample
            for m in [x for x in args.castro_methods.split(",") if x]:
                r = row(f"Castro {f.stem}", f"tablesafe {m}", problem,
                        run_ours(problem, m, args.castro_seconds), args.audit_sample if big else None)
                print(r, flush=True)
                rows.append(r)
    notes = _notes(args, cohesion, tables, load_start)
    if not args.no_write:
        cmd = _command()
        if args.rows_from:
            notes.append(f"Rows not produced by this run come from the log of an earlier run of "
                         f"this script (`{Path(args.rows_from).name}`); a row of this run replaces "
                         "the earlier row of the same table and tool.")
        write_results(_latest(rows), cmd, notes, args.section)


def _notes(args, cohesion: float, tables, load_start) -> list[str]:
    """The notes above the results table: limits, audit, data, machine."""
    audit_text = ("every sensitive cell" + (
        f", or a deterministic sample of {args.audit_sample} on tables with more" if args.audit_sample else "")
        + "; a pattern our dispatcher proved by checked certificates (insiders included) is "
        "marked `(certificates)` and not audited again")
    notes = [
        f"Limits: tau-ARGUS OPT(1,{args.tau_minutes}) and MOD(1,{args.tau_minutes},1,1,0) "
        "(minutes; the subprocess is stopped one minute after the limit times the number of tables, as OPT does not always honour "
        "its limit); our methods: " + (f"time_limit={args.ours_seconds:.0f} s" if args.ours_seconds
                                        else "the automatic time limit of `auto_time_limit`") + " "
        f"({args.castro_seconds:.0f} s on Castro's instances; the "
        "repair and proof come after it; `fast` has no search limit). Our methods run through "
        "`tablesafe.suppress` with singleton protection on (its default) unless marked "
        "`-nosingleton` (like tau-ARGUS OPT). Audit: `tablesafe.audit.audit(..., insider=False)` "
        f"(LP feasibility intervals on our model) for {audit_text}, the same for both tools; "
        "Castro instances with the relations as they hold for the true values. "
        "Generated tables: p% rule p=15, n=1 " + (
            f"on holdings (tau-ARGUS: HOLDING variable, rule P(15,1)|P(15,1)|P(15,1), the third "
            f"being its holding rule; holding cohesion {cohesion:g})" if args.holdings else
            "on enterprises (holdings not used)")
        + "; each tau-ARGUS note compares its primaries and levels with ours; "
        "cost = cell value; bounds [0, inf). Withheld value = sum of the "
        "secondary cells' values. Machine: 2 cores; load average (1/5/15 min) "
        f"{'/'.join(f'{x:.1f}' for x in load_start)} at the start and "
        f"{'/'.join(f'{x:.1f}' for x in os.getloadavg())} at the end; 'CPU seconds' are the "
        "run's own and its child processes' (tau-ARGUS runs in one), which a shared machine "
        "inflates less than wall seconds.",
    ]
    notes.append(f"Plain LP: `benchmarks/plain_lp.py` (HiGHS through highspy, no tablesafe code; the "
                 "attacker's LP of each audited cell on its component of the withheld cells) on every "
                 f"sensitive cell of tables up to {PLAIN_ALL_MAX:,} cells, a deterministic sample of "
                 f"{PLAIN_SAMPLE} up to {PLAIN_BIG:,} cells and of {PLAIN_SAMPLE_BIG} above; it stops "
                 f"starting cells after {PLAIN_SECONDS:.0f} s per pattern (the cells it reached are counted). "
                 f"A component of more than {plain_lp.WHOLE_MAX:,} withheld cells is solved on "
                 "neighbourhoods of the cell (the other cells at their true values, which can only "
                 "narrow the attacker's reach): a cell none of them proves protected is counted "
                 "'undecided', not audited"
                 + (f"; not run on tables of more than {args.plain_max_cells:,} cells"
                    if args.plain_max_cells else "") + ".")
    if any(syn.tables and len(syn.tables) > 1 for _, syn in tables):
        notes.append("Linked tables: tablesafe protects the linked tables in one model (shared cells "
                     "once, the relations of both tables). pytauargus 0.6.0 cannot protect linked "
                     "tables (its batch engine runs MOD and OPT on one table; MOD(0,...) fails in "
                     "PrepareHITAS and GH is not ported), so the tau-ARGUS rows protect each table "
                     "on its own and the union of the two patterns is audited on the linked model.")
    notes += list(args.note)
    if _opt_first(args):
        notes.append(f"tau-ARGUS OPT ran first on every table, {args.tau_jobs} at a time (one process, one "
                     "core each), with nothing else running; MOD and our methods then ran one at a time.")
    return notes


def _opt_first(args) -> bool:
    """Whether tau-ARGUS OPT runs on every table up front (``--tau-jobs`` above 1)."""
    return not args.no_tau and args.tau_jobs > 1 and "OPT" in args.tau_methods.split(",")


def _command() -> str:
    return ("PYTHONPATH=src /work/benchvenv/bin/python benchmarks/compare_tauargus.py "
            + shlex.join(sys.argv[1:])).strip()


def _tau_timeout(args, syn) -> float:
    """Seconds after which a tau-ARGUS run is stopped: its limit per table plus a minute."""
    return args.tau_minutes * 60 * len(syn.table_list) + 60


def _opt_up_front(tables, opt_spec: str, args) -> dict[str, dict]:
    """tau-ARGUS OPT on every table, ``args.tau_jobs`` runs at a time: label -> result."""
    from concurrent.futures import ThreadPoolExecutor

    def one(item):
        label, syn = item
        holdings = args.holdings and syn.holding in syn.data and not label.startswith("tau_testW")
        t0 = time.perf_counter()
        res = run_tau(syn, opt_spec, timeout=_tau_timeout(args, syn), p=15, holdings=holdings,
                      tables=syn.table_list)
        print(f"   tau-ARGUS OPT on {label}: {time.perf_counter() - t0:.0f} s"
              + (f" ({res['error']})" if "error" in res else ""), flush=True)
        return label, res

    # the longest runs first (linked pairs run one table after the other, then the
    # largest), so that the runs end together
    order = sorted(tables, key=lambda t: (-len(t[1].table_list), -len(t[1].data)))
    print(f"== tau-ARGUS OPT on {len(tables)} tables, {args.tau_jobs} at a time", flush=True)
    with ThreadPoolExecutor(max_workers=args.tau_jobs) as pool:
        return dict(pool.map(one, order))


def _latest(rows: list[dict]) -> list[dict]:
    """One row per (table, tool): a later row replaces an earlier one in its place; rows
    stay grouped by table (in order of first appearance), ours before tau-ARGUS's."""
    out: dict[tuple[str, str], dict] = {}
    for r in rows:
        out[(r["table"], r["tool"])] = r
    tables = list(dict.fromkeys(t for t, _ in out))
    return sorted(out.values(), key=lambda r: (tables.index(r["table"]), r["tool"].startswith("tau"),
                                               [k for k in out if k[0] == r["table"]].index((r["table"], r["tool"]))))


if __name__ == "__main__":
    main()
