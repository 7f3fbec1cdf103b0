"""The ``fast`` secondary suppression heuristic for very large tables, with certificates.

Sensitive cells are protected one after the other, largest protection need first (the
sequential linear-programming approach of seed 003 B.2.b). For each target a small
*protection network* LP is solved on a local neighbourhood of the target — the cells
reachable through a few relations — with every other cell held at its true value:

    minimise   sum_i  w_i (p_i + q_i)
    subject to A_R (p - q) = 0                    (the relations touching the neighbourhood)
               p_t = M, q_t = 0                   (the target moves by its level)
               0 <= p_i, q_i <= r_i               (r_i = min(v_i - lower_i, upper_i - v_i))

with ``w_i = cost_i / r_i`` (the linear relaxation of the fixed charge of withholding cell
``i`` in the model of Fischetti and Salazar restricted to one target, see seed 002
"Secondary tabular data protection methods") and a tiny weight for cells already withheld.
Every cell with a nonzero deviation ``d = p - q`` is withheld. Because the deviation box is
symmetric, ``v + (UPL/M) d`` and ``v - (LPL/M) d`` are both feasible tables that differ from
the truth only in withheld cells and move the target by its upper and lower protection
level: they are the target's *certificates*. A certificate stays valid when more cells
are withheld later, so the final pattern is proved safe by the certificates alone; they
are checked in one pass over the relations (:func:`tablesafe.audit.check_certificates`).

When the local LP is infeasible the neighbourhood grows by one relation hop. Protected and
empty cells never move. With ``singleton=True`` single-contributor cells (other than the
target) are held fixed first, so that a certificate does not rely on a cell whose only
contributor knows its value (seed 002, "singletons"; seed 000 section 7 suggests zero a
priori intervals for such cells); they are admitted (with a large weight) only when no
certificate exists without them, and ``stats["certificates_with_singletons"]`` counts
those certificates (an insider audit may then still find the target too exposed).
"""

from __future__ import annotations

import sys
import time
from collections import Counter
from dataclasses import dataclass, field

import highspy
import numpy as np
import pandas as pd
import scipy.sparse as sp

from tablesafe.errors import InfeasibleError
from tablesafe.problem import EMPTY, PROTECTED, Pattern, Problem

__all__ = ["FastOptions", "fast_pattern"]

_INF = highspy.kHighsInf


@dataclass
class FastOptions:
    """Tuning knobs of :func:`fast_pattern` (the defaults are the measured choice).

    Attributes:
        max_hops: largest neighbourhood radius (relation hops) tried before the target's
            whole connected block is used.
        max_cells: neighbourhood size above which growth jumps to the whole block.
        withheld_weight: weight factor for cells already withheld (relative to their
            normal weight); small so that free cells are preferred.
        tol: relative deviation below which a cell is considered not to move.
    """

    max_hops: int = 6
    max_cells: int = 20_000
    withheld_weight: float = 1e-4
    tol: float = 1e-7
    singleton_penalty: float = 1e3
    inner_hops: int = 4
    box_levels: tuple[int, ...] = (1, 2)
    inner: str = "box"
    strict_hops: int = 4
    strict_whole_max: int = 20_000
    log_every: int = 0
    max_box: int = 4_000
    stats: dict = field(default_factory=dict)


class _LocalLP:
    """One reusable HiGHS instance for the many small neighbourhood LPs."""

    def __init__(self) -> None:
        h = highspy.Highs()
        h.setOptionValue("output_flag", False)
        h.setOptionValue("threads", 1)
        h.setOptionValue("solver", "simplex")
        h.setOptionValue("presolve", "off")  # measured: 2.5x faster on these small LPs
        self.h = h
        self.solves = 0

    def solve(
        self,
        sub: sp.csc_matrix,
        cost: np.ndarray,
        cap_up: np.ndarray,
        cap_down: np.ndarray,
        target_pos: int,
        amount: float,
    ) -> np.ndarray | None:
        """Minimise ``cost . (p + q)`` with ``sub (p - q) = 0``, ``p_t = amount``; d or None.

        ``p <= cap_up`` and ``q <= cap_down`` bound the upward and downward deviations.
        """
        k = sub.shape[1]
        nrow = sub.shape[0]
        # columns: p_0..p_{k-1}, q_0..q_{k-1}
        start = np.concatenate((sub.indptr, sub.indptr[1:] + sub.indptr[-1])).astype(np.int32)
        index = np.concatenate((sub.indices, sub.indices)).astype(np.int32)
        value = np.concatenate((sub.data, -sub.data)).astype(np.float64)
        col_cost = np.concatenate((cost, cost))
        lo = np.zeros(2 * k)
        hi = np.concatenate((cap_up, cap_down))
        lo[target_pos] = hi[target_pos] = amount
        hi[k + target_pos] = 0.0
        zeros = np.zeros(nrow)
        self.h.clearSolver()
        self.h.passModel(
            2 * k, nrow, len(value), int(highspy.MatrixFormat.kColwise), int(highspy.ObjSense.kMinimize),
            0.0, col_cost, lo, hi, zeros, zeros, start[: 2 * k], index, value,
            np.zeros(2 * k, dtype=np.int32),
        )
        self.h.run()
        self.solves += 1
        if self.h.getModelStatus() != highspy.HighsModelStatus.kOptimal:
            return None
        x = np.asarray(self.h.getSolution().col_value)
        return x[:k] - x[k:]


def _protection_amounts(problem: Problem) -> tuple[np.ndarray, np.ndarray]:
    """Upper and lower amounts each sensitive cell must be movable by (0 elsewhere).

    The lower level is capped at the distance to the a priori lower bound (DESIGN.md). A
    sliding level wider than ``upl + lpl`` raises the upper amount. A sensitive cell with
    no level at all must merely not be exactly recalculable: it gets a small positive
    amount (1% of its value, at least 1, within its bounds).
    """
    sens = problem.sensitive
    v = problem.value
    up_room = problem.upper - v
    down_room = v - problem.lower
    upl = np.where(sens, np.maximum(problem.upl, 0.0), 0.0)
    lpl = np.where(sens, np.minimum(np.maximum(problem.lpl, 0.0), np.maximum(down_room, 0.0)), 0.0)
    extra = np.maximum(problem.spl - upl - lpl, 0.0)
    upl = np.where(sens, upl + extra, 0.0)
    none = sens & (upl <= 0) & (lpl <= 0)
    small = np.maximum(0.01 * np.abs(v), 1.0)
    upl = np.where(none, np.minimum(small, np.where(up_room > 0, up_room, 0.0)), upl)
    lpl = np.where(none & (upl <= 0), np.minimum(small, np.maximum(down_room, 0.0)), lpl)
    return upl, lpl


def fast_pattern(
    problem: Problem,
    *,
    time_limit: float | None = None,
    progress: bool = False,
    seed: int = 0,
    singleton: bool = True,
    capacity: bool = False,
    options: FastOptions | None = None,
) -> Pattern:
    """Choose complementary suppressions for a large table and prove them by certificates.

    Args:
        problem: the cells, relations, bounds and protection levels.
        time_limit: soft limit in seconds: every sensitive cell is always protected; past
            the limit the run only stops spending time on optional work (there is none yet
            besides progress reporting), and ``stats["time_limit_hit"]`` says so.
        progress: show a rich progress bar.
        seed: accepted for interface compatibility; the method is deterministic (ties
            are broken by cell position), so the seed does not change the result.
        singleton: avoid single-contributor cells as partners (see the module text).
        capacity: use ``problem.capacity`` (seed 000 section 7.1) to limit how far a cell
            may move when it protects another.
        options: tuning knobs.

    Returns:
        A :class:`Pattern` (method ``fast``) whose ``certificates`` frame proves every
        sensitive cell's protection (columns ``target``, ``direction``, ``cell``,
        ``value``; cells named by ``problem.names``).

    Raises:
        InfeasibleError: a sensitive cell cannot be moved by its level by any table that
            agrees with the relations and bounds (for example when every partner is
            protected).
    """
    del seed
    opts = options or FastOptions()
    t0 = time.perf_counter()
    n = problem.n
    v = problem.value.astype(float)
    A = problem.relations.tocsr()
    At = A.T.tocsr()
    sens = problem.sensitive
    upl, lpl = _protection_amounts(problem)

    # how far each cell may move either way (symmetric box around the true value)
    down_room = v - problem.lower
    up_room = problem.upper - v
    cap = np.minimum(down_room, up_room)
    if capacity and problem.capacity is not None:
        cap = np.where(sens, cap, np.minimum(cap, np.maximum(problem.capacity, 0.0)))
    fixed = np.isin(problem.status, (PROTECTED, EMPTY)) | ~(cap > 0)
    scale = np.where(np.isfinite(cap), cap, np.maximum(np.abs(v), 1.0))
    cap = np.where(np.isfinite(cap), cap, _INF)
    room_up = np.where(np.isfinite(up_room), np.maximum(up_room, 0.0), _INF)
    room_down = np.where(np.isfinite(down_room), np.maximum(down_room, 0.0), _INF)
    if capacity and problem.capacity is not None:
        room_down = np.where(sens, room_down, np.minimum(room_down, np.maximum(problem.capacity, 0.0)))
    # fixed-charge weight per unit of deviation: cost / min(range, amount), see _Search._solve
    abs_cost = np.abs(problem.cost).astype(float)
    abs_cost = np.maximum(abs_cost, 1e-9 * max(1.0, float(abs_cost.max(initial=0.0))))
    single = (
        (np.asarray(problem.contributors) == 1)
        if singleton and problem.contributors is not None
        else np.zeros(n, dtype=bool)
    )

    withheld = sens.copy()
    targets = np.flatnonzero(sens & ((upl > 0) | (lpl > 0)))
    need = np.maximum(upl, lpl)[targets]
    targets = targets[np.lexsort((targets, -need))]  # largest protection need first

    lp = _LocalLP()
    search = _Search(problem, A, At, lp, opts)
    hop_hist: Counter[str] = Counter()
    cert_t: list[np.ndarray] = []
    cert_c: list[np.ndarray] = []
    cert_d: list[np.ndarray] = []
    cert_k: list[np.ndarray] = []
    singleton_used = 0
    unprotectable: list[int] = []
    # singletons: a large weight keeps them out of certificates wherever a local
    # alternative exists (they may still be the only way to protect a cell)
    weight = abs_cost * np.where(single, opts.singleton_penalty, 1.0)
    search.scale = np.where(scale > 0, scale, np.inf)
    free = ~fixed

    bar = None
    if progress:
        from rich.progress import Progress

        bar = Progress(transient=False)
        task = bar.add_task("fast suppression", total=len(targets))
        bar.start()
    done = 0
    try:
        for t in targets:
            t = int(t)
            amount = max(upl[t], lpl[t])
            found = []  # (direction, cells, deviation)
            d, cells, how = search.certify(t, amount, free, single, withheld, cap, weight)
            if d is not None:
                keep = np.abs(d) > opts.tol * amount
                cells, d = cells[keep], d[keep] / amount
                if upl[t] > 0:
                    found.append((0, cells, d * upl[t]))
                if lpl[t] > 0:
                    found.append((1, cells, -d * lpl[t]))
                hop_hist[how] += 1
            else:
                # the symmetric box is too tight: each direction on its own, within the
                # a priori bounds (a downward move is an upward move with bounds swapped)
                for direction, amt, cu, cdn, sign in (
                    (0, upl[t], room_up, room_down, 1.0),
                    (1, lpl[t], room_down, room_up, -1.0),
                ):
                    if amt <= 0:
                        continue
                    d, cells, how = search.certify(t, amt, free, single, withheld, cu, weight, cdn)
                    if d is None:
                        found = None
                        break
                    keep = np.abs(d) > opts.tol * amt
                    found.append((direction, cells[keep], sign * d[keep]))
                    hop_hist["one-way " + how] += 1
            if not found:
                unprotectable.append(t)
                continue
            for direction, cells, dev in found:
                if single[cells[cells != t]].any():
                    singleton_used += 1
                withheld[cells] = True
                cert_t.append(np.full(len(cells), t, dtype=np.int64))
                cert_k.append(np.full(len(cells), direction, dtype=np.int8))
                cert_c.append(cells)
                cert_d.append(dev)
            if bar is not None:
                bar.advance(task)
            done += 1
            if opts.log_every and done % opts.log_every == 0:
                print(
                    f"fast: {done}/{len(targets)} targets, {time.perf_counter() - t0:.0f} s, "
                    f"{int(withheld.sum())} withheld",
                    file=sys.stderr, flush=True,
                )
    finally:
        if bar is not None:
            bar.stop()

    if unprotectable:
        names = ", ".join(str(problem.names[i]) for i in unprotectable[:5])
        raise InfeasibleError(
            f"{len(unprotectable)} sensitive cell(s) cannot be protected: no table that keeps "
            f"the published cells, the relations and the a priori bounds moves them by their "
            f"protection level (first: {names})"
        )
    certs = _certificate_frame(problem, cert_t, cert_k, cert_c, cert_d)
    secs = time.perf_counter() - t0
    stats = {
        "seconds": secs,
        "targets": len(targets),
        "lp_solves": lp.solves,
        "found_by": dict(sorted(hop_hist.items())),
        "certificates_with_singletons": singleton_used,
        "withheld": int(withheld.sum()),
        "secondary": int((withheld & ~sens).sum()),
        "time_limit_hit": bool(time_limit is not None and secs > time_limit),
    }
    return Pattern(withheld=withheld, method="fast", stats=stats, certificates=certs)


class _Search:
    """Neighbourhoods of a target and the local LPs on them.

    Tables that come with their structure (``problem.model``) use *boxes*: per dimension
    the target's code, its siblings, ancestors and descendants (level 1), then also the
    ancestors' siblings and the siblings' children (level 2); the box is the cross product.
    After that (and for problems without structure) neighbourhoods grow by relation
    hops, up to the target's whole block.
    """

    def __init__(self, problem: Problem, A: sp.csr_matrix, At: sp.csr_matrix, lp: _LocalLP, opts: FastOptions):
        self.A, self.At, self.lp, self.opts = A, At, lp, opts
        self.n = problem.n
        self.pos = np.full(problem.n, -1, dtype=np.int64)
        self.geo = _Geometry.of(problem)
        self.scale = np.ones(problem.n)
        self.cap_down: np.ndarray | None = None

    def certify(self, t, amount, free, single, withheld, cap, weight, cap_down=None):
        """(deviation, cells, how) of the cheapest local certificate found, or (None, ...).

        First without moving any single-contributor cell other than the target (so that
        no singleton's insider can rule the certificate out), within boxes and a few hops;
        then, only if that fails, with singletons allowed (penalised) up to the whole block.
        """
        self.cap_down = cap_down
        if single.any():
            strict = free & ~single
            d, cells, how = self._certify(
                t, amount, strict, withheld, cap, weight, self.opts.strict_hops, self.n <= self.opts.strict_whole_max
            )
            if d is not None:
                return d, cells, how
            d, cells, how = self._certify(t, amount, free, withheld, cap, weight, self.opts.max_hops, True)
            return d, cells, "with-singletons " + how
        return self._certify(t, amount, free, withheld, cap, weight, self.opts.max_hops, True)

    def _certify(self, t, amount, free, withheld, cap, weight, max_hops, allow_whole):
        inner = withheld & free
        inner[t] = True
        # 1. among cells already withheld: no new suppression needed
        levels = self._levels(t)
        if self.geo is not None and self.opts.inner == "box":
            cands = [(f"inner-box{lv}", self.geo.box(t, lv)) for lv in levels]
        else:
            cands = [("inner-hops", None)]
        for how, cells in cands:
            if cells is None:
                d, cells, _ = self._grow(t, amount, inner, cap, weight, withheld, 1, self.opts.inner_hops, False)
            else:
                cells = self._order(t, cells[inner[cells]])
                d = self._solve(t, cells, amount, cap, weight, withheld)
            if d is not None:
                return d, cells, how
        # 2. a cheap set of new complements
        movable = free.copy()
        movable[t] = True
        if self.geo is not None:
            for level in levels:
                cells = self._order(t, self.geo.box(t, level))
                cells = cells[movable[cells]]
                d = self._solve(t, cells, amount, cap, weight, withheld)
                if d is not None:
                    return d, cells, f"box{level}"
        d, cells, hops = self._grow(t, amount, movable, cap, weight, withheld, 2, max_hops, allow_whole)
        return d, cells, ("block" if hops > max_hops else f"hops{hops}")

    def _levels(self, t: int) -> list[int]:
        """Box levels to try for ``t``: those within ``max_box`` code combinations."""
        if self.geo is None:
            return []
        out = [lv for lv in self.opts.box_levels if self.geo.box_size(t, lv) <= self.opts.max_box]
        too_big = not out or self.geo.box_size(t, 1) > self.opts.max_box
        if too_big and self.geo.box_size(t, 3) <= self.opts.max_box:
            out = [3, *out]  # compact box (children only below the target's codes)
        return out

    @staticmethod
    def _order(t: int, cells: np.ndarray) -> np.ndarray:
        cells = cells[cells != t]
        return np.concatenate(([t], cells))

    def _grow(self, t, amount, movable, cap, weight, withheld, start, max_hops, allow_whole):
        prev = -1
        hops = start
        while True:
            whole = hops > max_hops
            if whole and not allow_whole:
                return None, np.zeros(0, dtype=np.int64), hops
            cells = self._neighbourhood(t, 10**9 if whole else hops, movable)
            if len(cells) == prev and not whole:
                return None, cells, hops  # the block is exhausted
            prev = len(cells)
            if len(cells) > self.opts.max_cells and not whole:
                hops = max_hops + 1
                continue
            d = self._solve(t, cells, amount, cap, weight, withheld)
            if d is not None or whole:
                return d, cells, hops
            hops += 1

    def _neighbourhood(self, t: int, hops: int, movable: np.ndarray) -> np.ndarray:
        """Movable cells within ``hops`` relation steps of ``t`` (through movable cells), t first."""
        A, At = self.A, self.At
        seen = np.zeros(self.n, dtype=bool)
        seen[t] = True
        frontier = np.array([t], dtype=np.int64)
        order = [frontier]
        for _ in range(hops):
            rows = np.unique(At[frontier].indices)
            if len(rows) == 0:
                break
            cand = np.unique(A[rows].indices)
            cand = cand[movable[cand] & ~seen[cand]]
            if len(cand) == 0:
                break
            seen[cand] = True
            order.append(cand)
            frontier = cand
        return np.concatenate(order)

    def _solve(self, t, cells, amount, cap, weight, withheld):
        """Local LP on ``cells`` (target first); all other cells stay at their value."""
        k = len(cells)
        if k < 2:
            return None
        A = self.A
        pos = self.pos
        pos[cells] = np.arange(k)
        try:
            rows = np.unique(self.At[cells].indices)
            sub = A[rows]
            col = pos[sub.indices]
        finally:
            pos[cells] = -1
        keep = col >= 0
        r = np.repeat(np.arange(len(rows)), np.diff(sub.indptr))[keep]
        c = col[keep]
        val = sub.data[keep]
        # peel: a cell that is the only neighbourhood member of a relation cannot move
        # (the relation's other cells are held at their value); repeat until stable
        alive = np.ones(k, dtype=bool)
        while True:
            live = alive[c]
            cnt = np.bincount(r[live], minlength=len(rows))
            lone = live & (cnt[r] == 1)
            if not lone.any():
                break
            dead = np.unique(c[lone])
            if dead[0] == 0:
                return None  # the target itself is pinned
            alive[dead] = False
        live = alive[c]
        r, c, val = r[live], c[live], val[live]
        idx = np.flatnonzero(alive)
        newpos = np.cumsum(alive) - 1
        c = newpos[c]
        used_rows, r = np.unique(r, return_inverse=True)
        kk = len(idx)
        if kk < 2:
            return None
        order = np.argsort(c, kind="stable")
        indptr = np.concatenate(([0], np.cumsum(np.bincount(c, minlength=kk))))
        mat = sp.csc_matrix((val[order], r[order], indptr), shape=(len(used_rows), kk))
        sel = cells[idx]
        # linear relaxation of the fixed charge cost_i * [d_i != 0] with big-M equal to
        # the most the cell will move for this target: min(range_i, amount)
        w = weight[sel] / np.minimum(self.scale[sel], amount)
        w = w * np.where(withheld[sel], self.opts.withheld_weight, 1.0)
        cd = self.cap_down if self.cap_down is not None else cap
        dd = self.lp.solve(mat, w, cap[sel].copy(), cd[sel].copy(), 0, amount)
        if dd is None:
            return None
        d = np.zeros(k)
        d[idx] = dd
        return d


@dataclass
class _Geometry:
    """Code positions of every cell and per-code neighbour sets, for box neighbourhoods."""

    idx: np.ndarray              # (n, ndims) code position per dimension
    shape: tuple[int, ...]
    keys: np.ndarray             # sorted flat keys of the cells
    key_cell: np.ndarray         # cell of each sorted key
    sets: list[list[list[np.ndarray]]]  # sets[level-1][dim][code] -> code positions

    @classmethod
    def of(cls, problem: Problem) -> _Geometry | None:
        model = problem.model
        if model is None or model.size != problem.n or len(model.dims) < 1:
            return None
        cols = []
        for d in model.dims:
            h = d.hierarchy
            pos = pd.Index(h.codes).get_indexer(model.codes[d.name].astype(str).to_numpy())
            if (pos < 0).any():
                return None
            cols.append(pos)
        idx = np.stack(cols, axis=1).astype(np.int64)
        shape = tuple(len(d.hierarchy) for d in model.dims)
        flat = np.ravel_multi_index(tuple(idx.T), shape)
        order = np.argsort(flat, kind="stable")
        sets = [[], [], []]  # levels 1, 2 and 3 (compact: children only below the code)
        for d in model.dims:
            l1, l2, l0 = _code_sets(d.hierarchy)
            sets[0].append(l1)
            sets[1].append(l2)
            sets[2].append(l0)
        return cls(idx, shape, flat[order], order, sets)

    def box_size(self, t: int, level: int) -> int:
        """Number of code combinations in the box (an upper bound on its cells)."""
        return int(np.prod([len(self.sets[level - 1][j][self.idx[t, j]]) for j in range(len(self.shape))]))

    def box(self, t: int, level: int) -> np.ndarray:
        """Cells of the box around cell ``t`` at the given level (1, 2, or 3 = compact)."""
        parts = [self.sets[level - 1][j][self.idx[t, j]] for j in range(len(self.shape))]
        grid = np.meshgrid(*parts, indexing="ij")
        flat = np.ravel_multi_index(tuple(g.ravel() for g in grid), self.shape)
        at = np.searchsorted(self.keys, flat)
        at = np.minimum(at, len(self.keys) - 1)
        ok = self.keys[at] == flat
        return self.key_cell[at[ok]]


def _code_sets(h) -> tuple[list[np.ndarray], list[np.ndarray], list[np.ndarray]]:
    """Per code: level-1 set (self, siblings, ancestors, descendants), level-2 set (also
    the ancestors' siblings and the siblings' children) and the compact set (self,
    siblings, ancestors, children)."""
    n = len(h)
    parent = np.asarray(h.parent)
    kids = [list(h.children(i)) for i in range(n)]
    desc: list[list[int]] = [[] for _ in range(n)]
    for i in range(n - 1, -1, -1):  # pre-order: children after parents
        for c in kids[i]:
            desc[i].extend([c, *desc[c]])
    l1, l2, l0 = [], [], []
    for i in range(n):
        anc = []
        p = parent[i]
        while p != -1:
            anc.append(int(p))
            p = parent[p]
        sib = kids[parent[i]] if parent[i] != -1 else []
        s1 = {i, *sib, *anc, *desc[i]}
        s2 = set(s1)
        for a in anc:
            if parent[a] != -1:
                s2.update(kids[parent[a]])
        for s in sib:
            s2.update(kids[s])
        l1.append(np.array(sorted(s1), dtype=np.int64))
        l2.append(np.array(sorted(s2), dtype=np.int64))
        l0.append(np.array(sorted({i, *sib, *anc, *kids[i]}), dtype=np.int64))
    return l1, l2, l0


def _certificate_frame(
    problem: Problem,
    cert_t: list[np.ndarray],
    cert_k: list[np.ndarray],
    cert_c: list[np.ndarray],
    cert_d: list[np.ndarray],
) -> pd.DataFrame:
    """Certificates as a frame: one row per (target, direction, moved cell), value = v + d."""
    if cert_t:
        t = np.concatenate(cert_t)
        k = np.concatenate(cert_k)
        c = np.concatenate(cert_c)
        d = np.concatenate(cert_d)
    else:
        t = c = np.zeros(0, dtype=np.int64)
        k = np.zeros(0, dtype=np.int8)
        d = np.zeros(0)
    order = np.lexsort((c, k, t))
    t, k, c, d = t[order], k[order], c[order], d[order]
    cats = pd.Index(problem.names.astype(str))
    if cats.is_unique:
        target = pd.Categorical.from_codes(t, categories=cats)
        cell = pd.Categorical.from_codes(c, categories=cats)
    else:
        target, cell = cats[t], cats[c]
    return pd.DataFrame(
        {
            "target": target,
            "direction": pd.Categorical.from_codes(k.astype(np.int64), categories=["up", "down"]),
            "cell": cell,
            "value": problem.value[c] + d,
        }
    )
