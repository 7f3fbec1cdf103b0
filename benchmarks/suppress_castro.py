"""Measure tablesafe's optimal and modular suppression on Castro's instances and on a
generated hierarchical 3-D table; print a Markdown table for benchmarks/RESULTS.md.

Usage:
    PYTHONPATH=src python benchmarks/suppress_castro.py [--castro TARGUS,TABLE7,...]
        [--generated CELLS] [--shapes deep2d,sparse3d,...] [--methods optimal,modular]
        [--time-limit SECONDS] [--check-sample N] [--plain-lp N]

Every method of ``--methods`` runs on every table. Every pattern is audited again by a
fresh attacker check (tablesafe.suppress.protection) and the number of under-protected
sensitive cells is reported (0 = fully safe). "before audit" is the suppression's own
time (``stats["seconds_before_audit"]``, what the time limit covers) and "held" says
whether it is within the limit plus 10 %.

``--shapes`` adds generated tables with holdings (p% rule p=15 on holdings, cohesion 0.7,
seed 1 or ``--seed``): the presets of :data:`tablesafe.synthetic.PRESETS` and the shapes of
``compare_tauargus.VARIED`` (other depths and fan-outs, dense and sparse, skewed, without
holdings, 3-D and 4-D) and of ``irregular_shapes.IRREGULAR`` (hierarchies of uneven
depth and fan-out, single children included), as ``compare_tauargus.py --holdings``
builds them; ``rand<N>`` draws a shape at random from seed N (``random_shapes.py``, its own
cohesion; ``--seed`` does not move it).
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
from compare_tauargus import generated as shape
from plain_lp import plain_lp_check

from tablesafe.io.jj import read_jj
from tablesafe.problem import EMPTY, PRIMARY, SAFE, Problem
from tablesafe.structure import Dimension, Hierarchy, TableStructure, compile_tables
from tablesafe.suppress import suppress
from tablesafe.suppress.attacker import Bounds
from tablesafe.suppress.protection import failing, insiders_of, outsider_keys, run_attacks
from tablesafe.synthetic import problem_from_data

SHARED = Path(__file__).resolve().parents[1] / "shared"
CASTRO = Path("/work/shared/benchmarks/castro")


def tree(prefix: str, branching: list[int]) -> Hierarchy:
    """A regular tree: ``branching[l]`` children per node at level ``l``."""
    t: dict[str, list[str]] = {}

    def grow(code: str, level: int) -> None:
        if level == len(branching):
            return
        kids = [f"{code}{i}" if code != "T" else f"{prefix}{i}" for i in range(1, branching[level] + 1)]
        t[code] = kids
        for k in kids:
            grow(k, level + 1)

    grow("T", 0)
    return Hierarchy.from_tree("T", t)


def generated(branchings: list[list[int]], units: int, seed: int = 0, p: float = 15.0) -> Problem:
    """Business-like hierarchical table: lognormal unit values, holdings, p% rule levels."""
    rng = np.random.default_rng(seed)
    hs = [tree("abc"[j], b) for j, b in enumerate(branchings)]
    ts = TableStructure(tuple(Dimension(f"d{j}", h) for j, h in enumerate(hs)))
    model = compile_tables(ts)
    n = ts.size
    hold = rng.integers(0, units * 3 // 4, units)
    val = np.round(rng.lognormal(4.0, 1.5, units)) + 1
    chains = []
    for h in hs:
        leaves = np.array([h.index(c) for c in h.leaves])
        pick = leaves[rng.integers(0, len(leaves), units)]
        chain = [pick]
        par = np.array(h.parent)
        cur = pick
        while True:
            cur = par[cur]
            if (cur < 0).all():
                break
            chain.append(cur)
        chains.append(np.stack(chain))  # depth+1 x units
    import itertools

    cells, holds, vals = [], [], []
    for combo in itertools.product(*[range(c.shape[0]) for c in chains]):
        idx = tuple(chains[j][combo[j]] for j in range(len(hs)))
        cells.append(np.ravel_multi_index(idx, ts.shape))
        holds.append(hold)
        vals.append(val)
    cell = np.concatenate(cells)
    hh = np.concatenate(holds)
    vv = np.concatenate(vals)
    key = cell.astype(np.int64) * (units + 1) + hh
    uk, inv = np.unique(key, return_inverse=True)
    hv = np.bincount(inv, weights=vv)
    hc = uk // (units + 1)
    value = np.bincount(hc, weights=hv, minlength=n)
    cnt = np.bincount(hc, minlength=n)
    order = np.lexsort((-hv, hc))
    hc_o, hv_o = hc[order], hv[order]
    first = np.r_[True, hc_o[1:] != hc_o[:-1]]
    x1 = np.zeros(n)
    x1[hc_o[first]] = hv_o[first]
    second = np.r_[False, (hc_o[1:] == hc_o[:-1]) & first[:-1]]
    x2 = np.zeros(n)
    x2[hc_o[second]] = hv_o[second]
    upl = p / 100.0 * x1 - (value - x1 - x2)
    sens = (upl > 0) & (cnt > 0)
    status = np.where(cnt == 0, EMPTY, np.where(sens, PRIMARY, SAFE))
    lev = np.where(sens, np.ceil(upl), 0.0)
    return Problem.from_arrays(value, model.relations, status=status, names=model.cell_names(),
                               cost=np.maximum(value, 1.0), upl=lev, lpl=lev, contributors=cnt, model=model)


def under_protected(problem: Problem, withheld: np.ndarray, sample: int) -> str:
    """Sensitive cells a fresh attacker LP finds under-protected: all of them, or a
    seeded sample of ``sample`` (0: all; negative: none, "not checked"), as "bad" or
    "bad of checked"."""
    if sample < 0:
        return "not checked"
    b = Bounds.of(problem)
    targets = np.flatnonzero(problem.sensitive)
    if 0 < sample < len(targets):
        targets = np.sort(np.random.default_rng(0).choice(targets, sample, replace=False))
    atts = run_attacks(problem, b, withheld.astype(float), outsider_keys(b, targets),
                       insiders=insiders_of(problem, b, withheld, targets))
    bad = len({k for k, _, _ in failing(b, atts)})
    return str(bad) if len(targets) == int(problem.sensitive.sum()) else f"{bad} of {len(targets)}"


def run(name: str, problem: Problem, method: str, time_limit: float, sample: int = 0,
        plain: int = -1) -> str:
    t = time.monotonic()
    try:
        pat = suppress(problem, method, time_limit=time_limit or None)
    except Exception as exc:  # noqa: BLE001 - report and go on
        return f"| {name} | {problem.n} | {int(problem.sensitive.sum())} | {method} | failed: {type(exc).__name__} | | | | | | | | | |"
    secs = time.monotonic() - t
    bad = under_protected(problem, pat.withheld, sample)
    if plain >= 0:
        pbad, audited, undecided = plain_lp_check(problem, pat.withheld, plain or None)
        plain_text = ((f"{pbad}" if audited == int(problem.sensitive.sum()) else f"{pbad} of {audited}")
                      + (f", {undecided} undecided" if undecided else ""))
    else:
        plain_text = "not checked"
    s = pat.stats
    gap = f"{s['gap']:.3f}" if "gap" in s else ""
    own = float(s.get("seconds_before_audit", secs))
    limit = time_limit or float(s.get("time_limit", 0.0))
    held = "yes" if own <= 1.1 * limit else "**no**"
    # steps the clock ended: another run of the same input may give another pattern
    clock = "; ".join(s.get("clock_decided", [])) or "no"
    return (f"| {name} | {problem.n} | {int(problem.sensitive.sum())} | {method} | {secs:.1f} | {own:.1f} | {held} "
            f"| {s['secondary']} | {s['withheld_value']:.6g} | {gap} | {pat.proof} | {bad} | {plain_text} | {clock} |")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--castro", default="TARGUS,TABLE7,HIE1372D,TABLE8")
    ap.add_argument("--castro-dir", type=Path, default=CASTRO,
                    help="folder of the --castro JJ files (castro_sif.py writes the instances the "
                         "benchmarks had not seen)")
    ap.add_argument("--generated", default="")
    ap.add_argument("--shapes", default="", help="presets, compare_tauargus.VARIED or irregular_shapes.IRREGULAR shapes, or random shapes "
                    "rand<N> (random_shapes.py), with holdings")
    ap.add_argument("--seed", type=int, default=1, help="seed of the --shapes tables")
    ap.add_argument("--methods", default="optimal,modular")
    ap.add_argument("--time-limit", type=float, default=120.0,
                    help="seconds; 0: none given, the automatic limit of the table's size")
    ap.add_argument("--check-sample", type=int, default=0,
                    help="check this many sensitive cells per pattern (seeded sample; 0: all; "
                         "-1: none, the pattern's own proof only)")
    ap.add_argument("--plain-lp", type=int, default=-1,
                    help="also check this many sensitive cells per pattern by benchmarks/plain_lp.py, "
                         "which shares no code with tablesafe's audit (seeded sample; 0: all; -1: none)")
    a = ap.parse_args()
    print("| table | cells | sensitive | method | seconds | before audit | held | secondaries "
          "| withheld value | gap | proof | under-protected | plain LP | decided by the clock |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for f in [x for x in a.castro.split(",") if x]:
        p = read_jj(a.castro_dir / f"{f}.jj")
        for m in a.methods.split(","):
            print(run(f, p, m, a.time_limit, a.check_sample, a.plain_lp), flush=True)
    specs = {"1000": ([[3, 3], [2, 4], [4]], 1500), "13000": ([[4, 5], [4, 5], [3, 6]], 30000),
             "60000": ([[5, 8], [4, 6], [3, 7]], 120000)}
    for name in [x for x in a.shapes.split(",") if x]:
        p = problem_from_data(shape(name, a.seed, 0.7), p=15, use_holdings=True)
        for m in a.methods.split(","):
            print(run(name, p, m, a.time_limit, a.check_sample, a.plain_lp), flush=True)
    for g in [x for x in a.generated.split(",") if x]:
        br, units = specs[g]
        p = generated(br, units)
        for m in a.methods.split(","):
            print(run(f"generated-{g}", p, m, a.time_limit, a.check_sample, a.plain_lp), flush=True)


if __name__ == "__main__":
    main()
