"""Benchmark of the disclosure audit on a tau-ARGUS pattern (issue 4, "Done when").

Builds a hierarchical two-way table of about 13,000 cells from generated microdata,
protects it with tau-ARGUS (pytauargus, p% rule P(15,1), modular suppression MOD(1)),
then audits the pattern with tablesafe and checks every sensitive cell's verdict against
an independent naive computation (one fresh HiGHS LP per bound, no decomposition, no
warm start, no linear algebra).

Run (from the worktree root)::

    PYTHONPATH=src /work/benchvenv/bin/python benchmarks/audit.py [--records 30000]
        [--seed 1] [--naive] [--insider]

The p% levels are computed here directly from the microdata (UPL = p/100 x1 -
(X - x1 - x2), LPL = UPL, seed 002 table of protection levels); a priori bounds are the
DESIGN default [0, inf).
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time

import highspy
import numpy as np
import pandas as pd
import scipy.sparse as sp

from tablesafe.audit import audit, feasibility_intervals
from tablesafe.problem import EMPTY, PRIMARY, SAFE, Problem
from tablesafe.structure import Dimension, Hierarchy, TableStructure

P = 15.0


def make_microdata(records: int, seed: int) -> pd.DataFrame:
    """Enterprises with two 3-level classification codes (digits 1 1 1) and turnover."""
    rng = np.random.default_rng(seed)

    def codes() -> list[str]:
        out = []
        for a in range(1, 5):
            for b in range(1, 6):
                for c in range(1, 1 + int(rng.integers(3, 7))):
                    out.append(f"{a}{b}{c}")
        return out

    ca, cb = codes(), codes()
    wa = rng.lognormal(0, 1.0, len(ca))
    wb = rng.lognormal(0, 1.0, len(cb))
    return pd.DataFrame({
        "A": rng.choice(ca, records, p=wa / wa.sum()),
        "B": rng.choice(cb, records, p=wb / wb.sum()),
        "Y": np.round(rng.lognormal(3, 1.5, records), 0) + 1,
    })


def build_problem(micro: pd.DataFrame) -> tuple[Problem, TableStructure]:
    """Cells, values, p% statuses and levels of the A x B table with all subtotals."""
    ha = Hierarchy.from_lengths(micro["A"].unique(), [1, 2, 3])
    hb = Hierarchy.from_lengths(micro["B"].unique(), [1, 2, 3])
    ts = TableStructure([Dimension("A", ha), Dimension("B", hb)])
    n = ts.size
    ia = {c: i for i, c in enumerate(ha.codes)}
    ib = {c: i for i, c in enumerate(hb.codes)}
    nb = len(hb.codes)
    # every record contributes to its leaf cell and all ancestors (3 x 3 + totals)
    parts = []
    for la in (0, 1, 2, 3):
        ka = micro["A"].str[:la] if la else pd.Series("Total", index=micro.index)
        for lb in (0, 1, 2, 3):
            kb = micro["B"].str[:lb] if lb else pd.Series("Total", index=micro.index)
            parts.append(pd.DataFrame({
                "cell": ka.map(ia).to_numpy() * nb + kb.map(ib).to_numpy(),
                "unit": micro.index.to_numpy(), "y": micro["Y"].to_numpy()}))
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
    prob = Problem.from_arrays(value, ts.relations(), status=status, names=ts.cell_names(),
                               upl=lev, lpl=lev, contributors=count)
    prob.meta["contributions"] = contrib
    return prob, ts


def tau_pattern(micro: pd.DataFrame, prob: Problem, workdir: str) -> tuple[np.ndarray, float, pd.DataFrame]:
    """Withheld mask of tau-ARGUS MOD(1) with P(15,1), and its seconds."""
    import pytauargus

    t = time.perf_counter()
    here = os.getcwd()
    os.chdir(workdir)  # the engine leaves scratch files in the working directory
    try:
        res = pytauargus.protect(micro, tables=[["A", "B"]], response="Y",
                                 safety_rules="P(15,1)", suppress="MOD(1)",
                                 hrc={"A": "1 1 1", "B": "1 1 1"}, totcode="Total",
                                 workdir=workdir)
    finally:
        os.chdir(here)
    secs = time.perf_counter() - t
    out = pd.DataFrame(res.tables[0].dataframe())
    names = out["A"].astype(str) + "|" + out["B"].astype(str)
    index = pd.Series(np.arange(prob.n), index=prob.names)
    idx = index.reindex(names.to_numpy()).to_numpy()
    if np.isnan(idx).any():
        raise SystemExit("tau-ARGUS output has cells unknown to the table structure")
    withheld = np.zeros(prob.n, dtype=bool)
    withheld[idx[out["status"].isin(["U", "M"]).to_numpy()].astype(int)] = True
    tau_status = np.full(prob.n, "?", dtype=object)
    tau_status[idx.astype(int)] = out["status"].to_numpy()
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


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--records", type=int, default=30000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--naive", action="store_true", help="also run the naive LP per bound")
    ap.add_argument("--insider", action="store_true", help="also time the insider checks")
    args = ap.parse_args()

    micro = make_microdata(args.records, args.seed)
    prob, _ts = build_problem(micro)
    with tempfile.TemporaryDirectory() as wd:
        withheld, tau_secs, tau_out = tau_pattern(micro, prob, wd)
    sens = prob.sensitive
    tau_u = np.zeros(prob.n, dtype=bool)
    tau_u[tau_out["cell"].to_numpy()[tau_out["status"].to_numpy() == "U"]] = True
    print(f"table: {prob.n} cells, {int(sens.sum())} sensitive here, "
          f"{int(tau_u.sum())} primary in tau-ARGUS, {int(withheld.sum())} withheld "
          f"(tau-ARGUS MOD {tau_secs:.1f} s)")
    if (sens & ~withheld).any():
        print(f"note: {int((sens & ~withheld).sum())} sensitive cells are published by tau-ARGUS")
    t = time.perf_counter()
    res = audit(prob, withheld, insider=False)
    secs = time.perf_counter() - t
    print(f"tablesafe audit (criterion 1): {secs:.2f} s; {res.stats}")
    print(res.summary())
    t = time.perf_counter()
    feasibility_intervals(prob, withheld)
    print(f"feasibility intervals of all {int(withheld.sum())} withheld cells: "
          f"{time.perf_counter() - t:.2f} s")
    if args.insider:
        t = time.perf_counter()
        res_i = audit(prob, withheld, insider=True)
        f = res_i.insider_findings
        print(f"tablesafe audit with singleton insiders: {time.perf_counter() - t:.2f} s; "
              f"{len(f)} insider findings on {f['target'].nunique() if len(f) else 0} cells")
    if args.naive:
        cells = np.flatnonzero(sens & withheld)
        t = time.perf_counter()
        lo, hi = naive_bounds(prob, withheld, cells)
        nsecs = time.perf_counter() - t
        nv = naive_verdicts(prob, cells, lo, hi)
        ours = res.verdict[cells]
        agree = int((nv == ours).sum())
        print(f"naive fresh LP per bound: {nsecs:.1f} s for {2 * len(cells)} LPs; "
              f"verdicts agree on {agree}/{len(cells)} sensitive cells")
        dl = np.nanmax(np.abs(np.where(np.isfinite(lo), lo - res.lower[cells], 0)))
        dh = np.nanmax(np.abs(np.where(np.isfinite(hi), hi - res.upper[cells], 0)))
        print(f"largest bound difference: lower {dl:.3g}, upper {dh:.3g}; "
              f"infinite upper bounds agree: {bool(np.all(np.isinf(hi) == np.isinf(res.upper[cells])))}")
        if agree != len(cells):
            bad = cells[nv != ours]
            print(pd.DataFrame({"cell": prob.names[bad], "ours": res.verdict[bad],
                                "naive": nv[nv != ours]}).head(20))


if __name__ == "__main__":
    main()
