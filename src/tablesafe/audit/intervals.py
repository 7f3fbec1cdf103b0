"""Feasibility intervals of withheld cells (operational criterion 1).

For every withheld cell the attacker's smallest and largest value consistent with the
published cells, the relations ``A x = rhs`` and the a priori bounds (seed 002 section
"Secondary tabular data protection methods", Example 3; seed 003 B.2.a.ii; seed 001
section 3, Tables 1, 2, 4 and 5).

How it is fast:

1. *Peeling.* A relation with a single unknown cell discloses that cell exactly; it
   becomes known and the step repeats (one sparse mat-vec per round).
2. *Blocks.* The remaining withheld cells that share relations form independent blocks
   (connected components of the bipartite relation/cell graph).
3. *Row-space test.* In each block a cell is exactly disclosed when its unit vector lies
   in the row space of the block's relations. We project unit and random vectors on the
   row space with a sparse LU factorisation of ``A A^T + delta I`` and iterative
   refinement; a cell is declared exact only when the projection reproduces its unit
   vector to :data:`EXACT_TOL` (otherwise its LPs decide).
4. *One HiGHS model per block* (:mod:`tablesafe.audit.block`). Only the cost vector
   changes between the min and max of each cell (warm start from the last basis).
5. *Bounds without LPs* (:mod:`tablesafe.audit.blocksolve`). Every optimal table also
   updates the best known bounds of all other cells of its block; a cell whose best
   known bound already reaches the bound implied by the relations
   (:mod:`tablesafe.audit.propagate`) needs no LP of its own, nor, when only verdicts
   are asked for (``goals``), a cell that already reaches its protection level.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components
from scipy.sparse.linalg import splu

from tablesafe import live_counts
from tablesafe.audit.block import Block
from tablesafe.audit.blocksolve import block_bounds
from tablesafe.audit.progress_lines import reporting
from tablesafe.errors import InputError, NonAdditiveError
from tablesafe.problem import Pattern, Problem

EXACT_TOL = 1e-7
"""Largest distance between a unit vector and its row-space projection for 'exact'."""


def as_mask(problem: Problem, withheld) -> np.ndarray:
    """Boolean withheld mask from a :class:`Pattern`, a mask, indices or cell names."""
    if isinstance(withheld, Pattern):
        withheld = withheld.withheld
    arr = np.asarray(withheld)
    n = problem.n
    if arr.dtype == bool:
        if arr.shape != (n,):
            raise InputError(f"withheld mask has {arr.size} entries (shape {arr.shape}) for {n} cells: "
                             "expected one true/false entry per cell")
        return arr.copy()
    mask = np.zeros(n, dtype=bool)
    if arr.size == 0:
        return mask
    if arr.dtype.kind in "iu":
        if arr.min() < 0 or arr.max() >= n:
            raise InputError(f"withheld cell index out of range 0..{n - 1}")
        mask[arr] = True
        return mask
    index = {str(name): i for i, name in enumerate(problem.names)}
    for name in arr:
        if str(name) not in index:
            raise InputError("withheld cell is not in the table", code=str(name))
        mask[index[str(name)]] = True
    return mask


def peel_exact(a_w: sp.csr_matrix) -> np.ndarray:
    """Cells disclosed by chains of relations with one unknown left (column mask).

    ``a_w`` holds the relations restricted to withheld columns.
    """
    n = a_w.shape[1]
    known = np.zeros(n, dtype=bool)
    pattern = a_w.copy()
    pattern.data = np.ones_like(pattern.data)
    pattern = sp.csr_matrix(pattern)
    while True:
        unknown = (~known).astype(float)
        count = pattern @ unknown
        rows = np.flatnonzero(count == 1)
        if rows.size == 0:
            break
        sub = pattern[rows]
        sub = sub.multiply(unknown[None, :]).tocsr()
        sub.eliminate_zeros()
        cols = np.unique(sub.indices)
        if cols.size == 0:
            break
        known[cols] = True
    return known


def rowspace_members(a: sp.csr_matrix, *, seed: int = 0) -> np.ndarray:
    """Columns ``j`` whose unit vector lies in the row space of ``a`` (numerically).

    The projection on the row space uses ``y = (A A^T + delta I)^{-1} A v``,
    ``p = A^T y`` with three steps of iterative refinement, so the regularisation does
    not bias the answer. Random vectors give the candidates (their null-space part is
    zero at exact cells); each candidate is confirmed by projecting its unit vector.
    """
    m, n = a.shape
    if n == 0:
        return np.zeros(0, dtype=bool)
    if m == 0 or a.nnz == 0:
        return np.zeros(n, dtype=bool)
    a = sp.csr_matrix(a, dtype=float)
    gram = (a @ a.T).tocsc()
    diag = gram.diagonal()
    delta = 1e-9 * max(float(diag.max()), 1.0)
    lu = splu((gram + delta * sp.identity(m, format="csc")).tocsc(), permc_spec="MMD_AT_PLUS_A")

    def project(v: np.ndarray) -> np.ndarray:
        p = a.T @ lu.solve(np.asarray(a @ v))
        for _ in range(3):
            p = p + a.T @ lu.solve(np.asarray(a @ (v - p)))
        return p

    rng = np.random.default_rng(seed)
    r = rng.standard_normal((n, 2))
    z = r - project(r)
    cand = np.flatnonzero(np.all(np.abs(z) <= 1e-6, axis=1))
    out = np.zeros(n, dtype=bool)
    for start in range(0, cand.size, 256):
        chunk = cand[start:start + 256]
        e = np.zeros((n, chunk.size))
        e[chunk, np.arange(chunk.size)] = 1.0
        res = np.abs(e - project(e)).max(axis=0)
        out[chunk[res <= EXACT_TOL]] = True
    return out


@dataclass
class IntervalResult:
    """Feasibility intervals with the facts behind them.

    Attributes:
        lower, upper: per cell (published cells: their value; withheld cells outside
            ``cells``: NaN).
        exact: mask of withheld cells disclosed exactly by the relations.
        block: block number per cell (-1 for published or exact cells).
        blocks: the :class:`Block` objects (their HiGHS models stay loaded for reuse).
        points: ``(cell, direction) -> (global columns, values)`` of a feasible table
            that attains the reported bound (only with ``keep_points``; the optimal
            table where the bound is exact); direction ``+1`` max, ``-1`` min.
        moves: like ``points``, the table closest to the truth that moves the cell by its
            protection level (only with ``certify``; see :meth:`Block.smallest_move`).
        bases: like ``points``, the HiGHS basis of that table where it was an LP's
            optimum (only with ``keep_points``): later LPs on the block with a few more
            bounds (the insider checks) start from it.
        seeded: block number -> the ``seeds`` that fit it, one row of deviations from
            the true table each (:func:`seed_tables`): the insider checks try them too.
        stats: counts and seconds.
    """

    lower: np.ndarray
    upper: np.ndarray
    exact: np.ndarray
    block: np.ndarray
    blocks: list[Block]
    points: dict = field(default_factory=dict)
    moves: dict = field(default_factory=dict)
    bases: dict = field(default_factory=dict)
    seeded: dict = field(default_factory=dict)
    stats: dict = field(default_factory=dict)


def build_blocks(problem: Problem, withheld: np.ndarray, *, linear_algebra: bool = True
                 ) -> tuple[np.ndarray, np.ndarray, list[Block]]:
    """Exact cells (mask over all cells), block label per cell, and the blocks."""
    n = problem.n
    a = problem.relations
    wi = np.flatnonzero(withheld)
    exact = np.zeros(n, dtype=bool)
    label = np.full(n, -1, dtype=np.int64)
    if wi.size == 0:
        return exact, label, []
    a_w = sp.csr_matrix(a[:, wi])
    peeled = peel_exact(a_w)
    exact[wi[peeled]] = True
    known = ~withheld | exact
    unk = np.flatnonzero(~known)
    a_u = sp.csr_matrix(a[:, unk])
    rhs_u = problem.rhs - a[:, np.flatnonzero(known)] @ problem.value[known]
    touched = np.flatnonzero(np.diff(a_u.indptr) > 0)
    a_u = a_u[touched]
    rhs_u = rhs_u[touched]
    mr, nu = a_u.shape
    pat = a_u.copy()
    pat.data = np.ones_like(pat.data)
    graph = sp.bmat([[None, pat], [pat.T, None]], format="csr")
    _, comp = connected_components(graph, directed=False)
    row_comp = comp[:mr]
    col_comp = comp[mr:]
    # Relabel components by first column so block order follows cell order.
    order = np.argsort(col_comp, kind="stable")
    blocks: list[Block] = []
    col_groups = np.split(order, np.flatnonzero(np.diff(col_comp[order])) + 1) if nu else []
    row_order = np.argsort(row_comp, kind="stable")
    row_keys = row_comp[row_order]
    for grp in col_groups:
        c = col_comp[grp[0]]
        lo_i, hi_i = np.searchsorted(row_keys, [c, c + 1])
        rws = row_order[lo_i:hi_i]
        sub = a_u[rws][:, grp]
        cols = unk[grp]
        if linear_algebra and rws.size:
            ex = rowspace_members(sub)
            if ex.any():
                exact[cols[ex]] = True
        blocks.append(Block(cols=cols, rows=touched[rws], matrix=sp.csr_matrix(sub),
                            rhs=rhs_u[rws], lower=problem.lower[cols].astype(float),
                            upper=problem.upper[cols].astype(float),
                            truth=problem.value[cols].astype(float)))
    # Rebuild blocks without the cells newly found exact (their value is known).
    final: list[Block] = []
    for b in blocks:
        ex = exact[b.cols]
        if ex.any():
            keep = ~ex
            rhs = b.rhs - b.matrix[:, ex] @ b.truth[ex]
            sub = sp.csr_matrix(b.matrix[:, keep])
            if not keep.any():
                continue
            # Split again: removing exact cells may disconnect the block.
            rowsel = np.flatnonzero(np.diff(sub.indptr) > 0)
            sub2 = sub[rowsel]
            pat = sub2.copy()
            pat.data = np.ones_like(pat.data)
            g = sp.bmat([[None, pat], [pat.T, None]], format="csr")
            _, cc = connected_components(g, directed=False)
            rc, kc = cc[:sub2.shape[0]], cc[sub2.shape[0]:]
            kept_cols = b.cols[keep]
            for c in np.unique(kc):
                ci = np.flatnonzero(kc == c)
                ri = np.flatnonzero(rc == c)
                final.append(Block(cols=kept_cols[ci], rows=b.rows[rowsel[ri]],
                                   matrix=sp.csr_matrix(sub2[ri][:, ci]),
                                   rhs=rhs[rowsel[ri]],
                                   lower=b.lower[keep][ci], upper=b.upper[keep][ci],
                                   truth=b.truth[keep][ci]))
        else:
            final.append(b)
    final.sort(key=lambda b: int(b.cols[0]))
    for i, b in enumerate(final):
        label[b.cols] = i
    return exact, label, final


def _check_bounds(problem: Problem) -> None:
    """The true table must satisfy its bounds and relations (else the audit is void)."""
    res = problem.residual()
    scale = 1e-9 * (1.0 + abs(problem.relations) @ np.abs(problem.value))
    badr = np.flatnonzero(np.abs(res) > scale)
    if badr.size:
        k = int(badr[0])
        row = problem.relations.getrow(k)
        cells = ", ".join(str(problem.names[j]) for j in row.indices[:6])
        raise NonAdditiveError(
            f"relation {k} does not hold for the true values (residual {res[k]:g}; "
            f"cells {cells}); {badr.size} relations are off. Give the offsets as the "
            "right-hand side (rhs) or repair the table before auditing",
            code=str(problem.names[row.indices[0]]) if row.nnz else None,
        )
    bad = np.flatnonzero((problem.value < problem.lower - 1e-9 * (1 + np.abs(problem.lower)))
                         | (problem.value > problem.upper + 1e-9 * (1 + np.abs(problem.upper))))
    if bad.size:
        i = int(bad[0])
        raise InputError(
            f"cell value {problem.value[i]:g} lies outside its a priori bounds "
            f"[{problem.lower[i]:g}, {problem.upper[i]:g}] ({bad.size} such cells)",
            code=str(problem.names[i]),
        )


def solve_intervals(
    problem: Problem,
    withheld,
    *,
    cells=None,
    keep_points: bool = False,
    certify: bool = False,
    linear_algebra: bool = True,
    goals: tuple[np.ndarray, np.ndarray] | None = None,
    seeds: dict | None = None,
) -> IntervalResult:
    """Feasibility intervals with blocks, exact cells and (optionally) optimal points.

    ``cells`` (mask, indices or names) restricts the LPs to those withheld cells; the
    others get NaN. See :func:`feasibility_intervals` for the plain arrays. With
    ``certify``, every requested sensitive cell whose interval reaches its protection
    level also gets the closest table that moves it by that level (``moves``).

    ``goals`` (``(up, down)`` arrays over all cells) asks only whether each requested
    cell can reach ``up`` and ``down`` (enough for a verdict, see
    :func:`tablesafe.audit.result.verdict_goals`): where a feasible table reaches the
    goal the reported bound is that table's value (an inner bound), elsewhere it is
    exact. Infinite goals (and ``goals=None``) ask for the exact bound.

    ``seeds`` (the ``points`` of an earlier result, for a pattern this one contains)
    are feasible tables here too: every cell withheld since keeps its true value, and
    the attacker's feasible set only grows with the pattern. They settle bounds before
    any LP of the blocks they fall in (:func:`seed_tables`).
    """
    t0 = time.perf_counter()
    _check_bounds(problem)
    mask = as_mask(problem, withheld)
    want = mask.copy() if cells is None else (as_mask(problem, cells) & mask)
    exact, label, blocks = build_blocks(problem, mask, linear_algebra=linear_algebra)
    t1 = time.perf_counter()
    n = problem.n
    lower = np.where(mask, np.nan, problem.value).astype(float)
    upper = lower.copy()
    lower[exact] = problem.value[exact]
    upper[exact] = problem.value[exact]
    # Withheld cells in no relation: only their a priori bounds limit them.
    alone = mask & ~exact & (label < 0)
    lower[alone] = problem.lower[alone]
    upper[alone] = problem.upper[alone]
    points: dict = {}
    bases: dict = {}
    if keep_points:
        for i in np.flatnonzero(alone & want):
            for d, bound in ((1, problem.upper[i]), (-1, problem.lower[i])):
                if np.isfinite(bound):
                    points[(int(i), d)] = (np.array([i]), np.array([bound]))
    counts = {"lp_solves": 0, "lp_skipped": 0, "lp_certified": 0, "lp_batch": 0}
    todo = [b for b in blocks if want[b.cols].any()]
    seeded = seed_tables(mask, exact, label, blocks, seeds, counts) if seeds else {}
    live_counts.add("bounds_total", 2 * sum(int(want[b.cols].sum()) for b in todo))
    for b in todo:
        targets = np.flatnonzero(want[b.cols])
        counted = live_counts.value("bounds")
        g_hi = np.full(len(b.cols), np.inf) if goals is None else goals[0][b.cols]
        g_lo = np.full(len(b.cols), -np.inf) if goals is None else goals[1][b.cols]
        lo_out, hi_out, best = block_bounds(b, targets, g_hi, g_lo, keep_points, counts,
                                            seeds=seeded.get(int(label[b.cols[0]])))
        # bounds settled without one of the counted steps (implied, eliminated) count too
        live_counts.add("bounds", 2 * len(targets) - (live_counts.value("bounds") - counted))
        upper[b.cols[targets]] = np.maximum(hi_out[targets], b.truth[targets])
        lower[b.cols[targets]] = np.minimum(lo_out[targets], b.truth[targets])
        if keep_points:
            # one table is often the best point of many cells: its sparse form is
            # computed once (the cells share the arrays, which nobody changes)
            sparse_of: dict[int, tuple[np.ndarray, np.ndarray]] = {}
            tol_truth = 1e-9 * (1 + np.abs(b.truth))
            for k in targets.tolist():
                for d, x in ((1, best.point(k, 1)), (-1, best.point(k, -1))):
                    if x is None:
                        continue
                    sx = sparse_of.get(id(x))
                    if sx is None:
                        diff = np.abs(x - b.truth) > tol_truth
                        sx = sparse_of[id(x)] = (b.cols[diff], x[diff])
                    points[(int(b.cols[k]), d)] = sx
                    _, basis = best.basis_of(k, d)
                    if basis is not None:
                        bases[(int(b.cols[k]), d)] = basis
    moves: dict = {}
    if certify:
        moves = _smallest_moves(problem, blocks, label, want, lower, upper)
    stats = {
        "cells": int(n), "withheld": int(mask.sum()), "exact": int(exact.sum()),
        "blocks": len(blocks),
        "largest_block": max((len(b.cols) for b in blocks), default=0),
        **counts, "rescaled_blocks": sum(1 for b in blocks if b.rescaled),
        "seconds_structure": t1 - t0, "seconds": time.perf_counter() - t0,
    }
    stats["seconds"] = time.perf_counter() - t0
    return IntervalResult(lower=lower, upper=upper, exact=exact, block=label, blocks=blocks,
                          points=points, moves=moves, bases=bases, seeded=seeded, stats=stats)


SEED_TOL = 1e-6
"""Largest residual of a seed table's relations, relative to ``1 + |rhs|`` (and of its
a priori bounds, relative to ``1 + |bound|``), for it to count as feasible: LP optima
meet them to HiGHS's tolerances; anything further off is dropped, never trusted."""


def seed_tables(mask: np.ndarray, exact: np.ndarray, label: np.ndarray, blocks: list[Block],
                seeds: dict, counts: dict) -> dict[int, sp.csr_matrix]:
    """The earlier tables ``seeds`` (see :func:`solve_intervals`) in the blocks they fall
    in: block number -> one row per table, its deviations from the true table over the
    block's cells.

    A table moving a cell that is now published or exact is dropped, and so is its part
    in a block when that part is off the block's relations or a priori bounds by more
    than :data:`SEED_TOL` (``counts["seeds_dropped"]``); ``counts["seeds"]`` counts the
    parts kept. A table spanning several blocks gives each its part (the blocks share no
    relation, so each part is a feasible table of its block).
    """
    tables = list({id(t): t for t in seeds.values()}.values())
    tables = [t for t in tables if len(t[0])]
    if not tables:
        return {}
    lens = np.array([len(t[0]) for t in tables], dtype=np.int64)
    cols = np.concatenate([np.asarray(t[0], dtype=np.int64) for t in tables])
    vals = np.concatenate([np.asarray(t[1], dtype=float) for t in tables])
    sid = np.repeat(np.arange(len(tables)), lens)
    placed = mask[cols] & ~exact[cols]
    good = np.bincount(sid[~placed], minlength=len(tables)) == 0
    dropped = int((~good).sum())
    keep = good[sid] & (label[cols] >= 0)  # a cell in no relation limits nothing else
    cols, vals, sid = cols[keep], vals[keep], sid[keep]
    lab = label[cols]
    out: dict[int, sp.csr_matrix] = {}
    kept = 0
    order = np.lexsort((sid, lab))
    bounds_at = np.flatnonzero(np.diff(lab[order])) + 1
    for grp in np.split(order, bounds_at) if order.size else []:
        bi = int(lab[grp[0]])
        b = blocks[bi]
        loc = np.searchsorted(b.cols, cols[grp])
        parts, part = np.unique(sid[grp], return_inverse=True)
        dev = vals[grp] - b.truth[loc]
        ys = sp.csc_matrix((dev, (loc, part)), shape=(len(b.cols), parts.size))
        res = (b.matrix @ ys).tocsc()
        worst = np.zeros(parts.size)
        if res.nnz:
            rc = np.repeat(np.arange(parts.size), np.diff(res.indptr))
            np.maximum.at(worst, rc, np.abs(res.data) / (1.0 + np.abs(b.rhs[res.indices])))
        lo, up = b.lower[loc], b.upper[loc]
        with np.errstate(invalid="ignore"):
            off = ((vals[grp] < lo - SEED_TOL * (1.0 + np.abs(lo)))
                   | (vals[grp] > up + SEED_TOL * (1.0 + np.abs(up))) | ~np.isfinite(vals[grp]))
        fits = (worst <= SEED_TOL) & (np.bincount(part[off], minlength=parts.size) == 0)
        dropped += int((~fits).sum())
        if fits.any():
            out[bi] = sp.csr_matrix(ys[:, np.flatnonzero(fits)].T)
            kept += int(fits.sum())
    counts["seeds"] = counts.get("seeds", 0) + kept
    counts["seeds_dropped"] = counts.get("seeds_dropped", 0) + dropped
    return out


def _smallest_moves(problem: Problem, blocks: list[Block], label: np.ndarray,
                    want: np.ndarray, lower: np.ndarray, upper: np.ndarray) -> dict:
    """Closest certificates for sensitive cells whose interval reaches their levels."""
    sens = problem.sensitive & want & (label >= 0)
    v = problem.value
    tol = 1e-6 * np.maximum(1.0, np.abs(v))
    lpl = np.maximum(np.minimum(problem.lpl, v - problem.lower), 0.0)
    out: dict = {}
    for i in np.flatnonzero(sens):
        b = blocks[int(label[i])]
        k = int(np.searchsorted(b.cols, i))
        wide = problem.spl[i] > problem.upl[i] + lpl[i]
        for d, need, reach in ((1, problem.upl[i], upper[i] - v[i]),
                               (-1, lpl[i], v[i] - lower[i])):
            if need <= 0 or reach < need - tol[i]:
                continue
            if wide and np.isfinite(reach):
                need = reach       # a sliding level needs the whole interval
            x = b.smallest_move(k, d, min(need, reach))
            if x is None:
                continue
            diff = np.abs(x - b.truth) > 1e-9 * (1 + np.abs(b.truth))
            out[(int(i), d)] = (b.cols[diff], x[diff])
    return out


def feasibility_intervals(problem: Problem, withheld, *, cells=None,
                          progress: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """Smallest and largest value of each withheld cell an attacker can prove.

    The attacker knows every published cell, the relations ``relations @ x == rhs`` and
    the a priori bounds ``[lower, upper]`` (``upper`` may be ``inf``; an unbounded
    maximum is reported as ``inf``). Seed 002 ("Secondary tabular data protection
    methods", Example 3), seed 003 B.2.a.ii, seed 001 section 3 (Tables 1, 2, 4, 5).

    Args:
        problem: the table.
        withheld: a :class:`Pattern`, boolean mask, indices or cell names.
        cells: optional subset of withheld cells to compute (others get NaN).
        progress: report the bounds settled while it runs
            (:func:`tablesafe.audit.progress_lines.reporting`).

    Returns:
        ``(lower, upper)`` arrays over all cells; published cells carry their value.
    """
    with reporting(progress):
        res = solve_intervals(problem, withheld, cells=cells)
    return res.lower, res.upper

