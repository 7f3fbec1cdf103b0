"""Small seeded generator of hierarchical business tables and an independent auditor.

The generator builds unit records (with holdings, so some cells have a single
respondent) on 2-D or 3-D hierarchical tables, sums them into every cell, marks cells
sensitive by the p% rule grouped by holding (upper level p/100 x1 - (X - x1 - x2),
seed 000 section 5.1.2, symmetric), empty cells Z. The auditor solves a fresh
scipy ``linprog`` per cell and bound, independent of tablesafe's attacker code.
"""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import scipy.sparse as sp
from scipy.optimize import linprog

from tablesafe.problem import EMPTY, PRIMARY, SAFE, Problem
from tablesafe.structure import Dimension, Hierarchy, TableStructure, compile_tables


def hierarchy(rng: np.random.Generator, name: str, branching: list[int]) -> Hierarchy:
    """A random tree with the given number of children per level (+-1)."""
    tree: dict[str, list[str]] = {}

    def grow(code: str, level: int) -> None:
        if level == len(branching):
            return
        k = max(2, branching[level] + int(rng.integers(-1, 2)))
        kids = [f"{code}{i}" if code != "T" else f"{name}{i}" for i in range(1, k + 1)]
        tree[code] = kids
        for c in kids:
            grow(c, level + 1)

    grow("T", 0)
    return Hierarchy.from_tree("T", tree)


def table_problem(seed: int, shape: list[list[int]], units: int = 60, p: float = 15.0) -> Problem:
    """A hierarchical table with holdings; dims given as branching lists."""
    rng = np.random.default_rng(seed)
    hs = [hierarchy(rng, "abcdef"[j], b) for j, b in enumerate(shape)]
    dims = tuple(Dimension(f"d{j}", h) for j, h in enumerate(hs))
    ts = TableStructure(dims)
    model = compile_tables(ts)
    # units: leaf codes per dim, holding, value
    leaves = [[h.index(c) for c in h.leaves] for h in hs]
    n_hold = max(2, units * 2 // 3)
    rec = {
        "hold": rng.integers(0, n_hold, units),
        "val": np.round(rng.lognormal(3.0, 1.2, units), 0) + 1,
    }
    for j in range(len(hs)):
        rec[f"c{j}"] = rng.choice(leaves[j], units)
    df = pd.DataFrame(rec)
    # ancestors (inclusive) per code
    anc = []
    for h in hs:
        a = {}
        for i in range(len(h)):
            chain, k = [], i
            while k != -1:
                chain.append(k)
                k = h.parent[k]
            a[i] = chain
        anc.append(a)
    rows = []
    for r in df.itertuples(index=False):
        for combo in itertools.product(*[anc[j][getattr(r, f"c{j}")] for j in range(len(hs))]):
            rows.append((np.ravel_multi_index(combo, ts.shape), r.hold, r.val))
    ex = pd.DataFrame(rows, columns=["cell", "hold", "val"])
    by = ex.groupby(["cell", "hold"], as_index=False)["val"].sum()
    n = ts.size
    value = np.zeros(n)
    tot = by.groupby("cell")["val"].sum()
    value[tot.index.to_numpy()] = tot.to_numpy()
    cnt = np.zeros(n, dtype=np.int64)
    c = by.groupby("cell")["hold"].count()
    cnt[c.index.to_numpy()] = c.to_numpy()
    by = by.sort_values(["cell", "val"], ascending=[True, False])
    by["rank"] = by.groupby("cell").cumcount()
    x1 = np.zeros(n)
    x2 = np.zeros(n)
    t1 = by[by["rank"] == 0]
    x1[t1["cell"].to_numpy()] = t1["val"].to_numpy()
    t2 = by[by["rank"] == 1]
    x2[t2["cell"].to_numpy()] = t2["val"].to_numpy()
    upl = p / 100.0 * x1 - (value - x1 - x2)
    sens = (upl > 0) & (cnt > 0)
    status = np.where(cnt == 0, EMPTY, np.where(sens, PRIMARY, SAFE))
    lev = np.where(sens, np.ceil(upl), 0.0)
    return Problem.from_arrays(
        value,
        model.relations,
        status=status,
        names=model.cell_names(),
        cost=np.maximum(value, 1.0),
        upl=lev,
        lpl=lev,
        contributors=cnt,
        model=model,
        codes=model.codes,
    )


def independent_audit(problem: Problem, withheld: np.ndarray, *, singleton: bool = True) -> list[str]:
    """Names of sensitive cells an attacker can pin down closer than their levels.

    One fresh ``linprog`` per cell and direction over all cells: published cells fixed at
    their values, withheld cells within their a priori bounds, ``A y = rhs``. With
    ``singleton``, also for each withheld single-respondent sensitive cell sharing a
    relation with the target, the same LPs with that cell fixed (its respondent knows it).
    """
    a = sp.csr_matrix(problem.relations)
    n = problem.n
    v = problem.value
    bad = []
    lo_all = np.where(withheld, problem.lower, v)
    hi_all = np.where(withheld, problem.upper, v)
    single = withheld & problem.sensitive
    if singleton and problem.contributors is not None:
        single &= np.asarray(problem.contributors) == 1
    else:
        single &= False
    ac = a.tocsc()
    for k in np.flatnonzero(problem.sensitive):
        rows = ac.indices[ac.indptr[k]:ac.indptr[k + 1]]
        nb = np.unique(a[rows].indices) if len(rows) else np.zeros(0, int)
        insiders = [-1] + [int(s) for s in nb if single[s] and s != k and _both_parts(a, k, int(s))]
        for s in insiders:
            lo = lo_all.copy()
            hi = hi_all.copy()
            if s >= 0:
                lo[s] = hi[s] = v[s]
            for sign, req in ((1, min(problem.upl[k], problem.upper[k] - v[k])),
                              (-1, min(problem.lpl[k], v[k] - problem.lower[k]))):
                if req <= 0:
                    continue
                c = np.zeros(n)
                c[k] = -sign
                res = linprog(c, A_eq=a, b_eq=a @ v, bounds=list(zip(lo, [None if np.isinf(h) else h for h in hi])),
                              method="highs")
                if res.status == 3:  # unbounded
                    continue
                reach = sign * (res.x[k] - v[k])
                if reach < req - 1e-6 * max(1, req):
                    bad.append(f"{problem.names[k]}:{'up' if sign > 0 else 'down'}:{s}")
        if problem.spl[k] > 0:
            width = 0.0
            for sign in (1, -1):
                c = np.zeros(n)
                c[k] = -sign
                res = linprog(c, A_eq=a, b_eq=a @ v, bounds=list(zip(lo_all, [None if np.isinf(h) else h for h in hi_all])),
                              method="highs")
                width += np.inf if res.status == 3 else sign * (res.x[k] - v[k])
            if width < problem.spl[k] - 1e-6 * max(1, problem.spl[k]):
                bad.append(f"{problem.names[k]}:sliding")
    return bad


def _both_parts(a: sp.csr_matrix, k: int, s: int) -> bool:
    """k and s are both parts (coefficient +1) of one relation: s's respondent is an outsider to k."""
    for r in range(a.shape[0]):
        row = dict(zip(a.indices[a.indptr[r]:a.indptr[r + 1]], a.data[a.indptr[r]:a.indptr[r + 1]]))
        if row.get(k, 0) > 0 and row.get(s, 0) > 0:
            return True
    return False


def spare_pattern(seed: int, shape: list[list[int]], units: int, spares: int):
    """A generated table with holdings, its bounds (singleton protection on), and a
    repaired pattern that started with ``spares`` random complements (cells a cleanup
    can give back), with its attacks."""
    from tablesafe.suppress.attacker import Bounds
    from tablesafe.suppress.protection import candidates, repair

    p = table_problem(seed, shape, units=units)
    b = Bounds.of(p, singleton=True)
    rng = np.random.default_rng(seed + 1)
    cand = np.flatnonzero(candidates(p, b) & ~p.sensitive)
    start = p.sensitive.copy()
    start[rng.choice(cand, size=min(len(cand), spares), replace=False)] = True
    w, atts, _ = repair(p, b, start)
    return p, b, w, atts


def random_complements(seed: int, shape: list[list[int]] | None = None, units: int = 90, spares: int = 12):
    """A generated table with holdings (default shape ``[[3, 2], [4]]``), its bounds
    (singleton protection on) and its sensitive cells with ``spares`` random admissible
    complements, not repaired."""
    from tablesafe.suppress.attacker import Bounds
    from tablesafe.suppress.protection import candidates

    p = table_problem(seed, shape or [[3, 2], [4]], units=units)
    b = Bounds.of(p, singleton=True)
    rng = np.random.default_rng(seed)
    cand = np.flatnonzero(candidates(p, b))
    w = p.sensitive.copy()
    w[rng.choice(cand, size=min(len(cand), spares), replace=False)] = True
    return p, b, w


def repaired_and_random_patterns(p: Problem, b, seed: int) -> list[np.ndarray]:
    """The repaired pattern, and three with random extra complements (passing and failing
    attacks both occur)."""
    from tablesafe.suppress.protection import candidates, repair

    rng = np.random.default_rng(seed)
    w, _, _ = repair(p, b, p.sensitive.copy())
    out = [w]
    cand = np.flatnonzero(candidates(p, b))
    for _ in range(3):
        w2 = p.sensitive.copy()
        w2[rng.choice(cand, size=min(len(cand), int(rng.integers(2, 3 + len(cand) // 3))), replace=False)] = True
        out.append(w2)
    return out


def assert_certificate(p: Problem, b, w: np.ndarray, key: tuple[int, int, int], att, *,
                       exact: bool = False) -> None:
    """``att``'s table is a certificate for ``key`` under the pattern ``w``: additive,
    within the attacker's bounds, moving withheld cells only, moving the target by at
    least its level (``exact``: by exactly its level) and leaving the insider's cell
    alone."""
    from tablesafe.suppress.attacker import UP

    k, d, s = key
    z = np.zeros(p.n)
    z[att.cells] = att.dev
    scale = max(1.0, float(np.abs(att.dev).max(initial=0.0)))
    assert np.abs(p.relations @ z).max(initial=0.0) <= 1e-6 * scale
    assert w[att.cells].all(), "a published cell moves"
    lo = np.where(np.arange(p.n) == k, -b.tdn, -b.dn)
    hi = np.where(np.arange(p.n) == k, b.tup, b.up)
    assert (z >= lo - 1e-6).all() and (z <= hi + 1e-6).all()
    req = b.req_up[k] if d == UP else b.req_dn[k]
    if exact:
        assert abs(d * z[k] - req) <= 1e-6 * max(1.0, req)
    else:
        assert d * z[k] >= req - 1e-6 * max(1.0, req)
    if s >= 0 and s != k:
        assert z[s] == 0.0, "the insider's own cell moves"


def work_by_workers(monkeypatch, module, run) -> list[tuple[int, object]]:
    """This process's LP work for ``run()`` (and what it returned) with one worker and with
    two (``module.worker_count`` patched)."""
    from tablesafe.audit.lp import lp_work

    out = []
    for cpus in (1, 2):
        monkeypatch.setattr(module, "worker_count", lambda most=2, cpus=cpus: cpus)
        before = lp_work()
        got = run()
        out.append((lp_work() - before, got))
    return out
