"""An audit that shares no code with tablesafe's: one attacker LP per bound, in plain HiGHS.

For every audited sensitive cell ``k`` and direction, the attacker's LP: the published
cells fixed at their values, the withheld cells free within their a priori bounds, the
relations ``A y = A value`` (as they hold for the true values). The cell is
under-protected when the LP cannot move it by its protection level (or it is published).
Only numpy, scipy, HiGHS (``highspy``) and the problem's arrays are used, so a defect in
``tablesafe.audit`` cannot hide itself here.

The LP of a cell is solved on the cell's connected component only: the withheld cells
linked to it through relations that hold two or more withheld cells. That is the same
optimum (the other components' cells enter neither its objective nor its rows, and the
true values keep them feasible), on a far smaller LP. The LPs of one component share one
HiGHS model: each changes the objective and starts from the last optimal basis. An LP
HiGHS does not settle that way is solved again from scratch by scipy's ``linprog``.

A component of more than ``WHOLE_MAX`` cells (the 1,036,350-cell table's pattern is one
component of 548,996 cells, whose first LP did not end in 10 minutes) is not solved whole.
The cell's LP is solved on the withheld cells within a few relation steps of it, every
other cell held at its true value, and the neighbourhood grows (``HOPS``) up to
``NEAR_MAX`` cells. Holding cells at their true values only narrows what the attacker can
reach, so a neighbourhood LP that moves the cell by its protection level proves it
protected. A cell that no neighbourhood proves protected is *undecided*: it is neither
counted as protected nor as under-protected, and the caller reports it.
"""

from __future__ import annotations

import time
from typing import NamedTuple

import highspy
import numpy as np
import scipy.sparse as sp
from scipy.optimize import linprog
from scipy.sparse.csgraph import connected_components

WHOLE_MAX = 60_000
"""Largest component solved whole; larger ones by neighbourhoods (see the module text)."""
HOPS = (2, 4, 8, 16, 32)
"""Relation steps of the neighbourhoods tried, in order, in components above ``WHOLE_MAX``."""
SCALE_FROM = 2.0**20
"""Largest absolute value above which values are rescaled (see ``plain_lp_check``).
Measured: the 1,036,350-cell table (values up to 8.8e8) left unscaled, a neighbourhood LP
that the true values satisfy was called infeasible by HiGHS and scipy alike; scaled, the
sample of 30 cells was decided in 16 s. Scaling at 2**20 instead of 2**30 gave the same
counts on the 15 patterns of the twenty-sixth session's comparison."""
NEAR_MAX = 40_000
"""Largest neighbourhood (cells) solved; growth stops at the first one above it."""


class PlainCheck(NamedTuple):
    """What the plain LP check found.

    Attributes:
        bad: sensitive cells under-protected (published, or not movable by their level).
        audited: sensitive cells decided (protected or under-protected).
        undecided: cells of very large components that no neighbourhood LP proved
            protected (not counted in ``audited``).
    """

    bad: int
    audited: int
    undecided: int = 0


def plain_lp_check(problem, withheld: np.ndarray, sample: int | None = None, seed: int = 0,
                   max_seconds: float | None = None) -> PlainCheck:
    """Under-protected, decided and undecided sensitive cells by fresh attacker LPs.

    ``sample``: audit a deterministic sample of that many sensitive cells. ``max_seconds``:
    stop starting new cells after that long; the cells audited by then are counted.
    """
    stop = time.monotonic() + max_seconds if max_seconds is not None else float("inf")
    sens = np.flatnonzero(problem.sensitive)
    if sample is not None and len(sens) > sample:
        sens = np.sort(np.random.default_rng(seed).choice(sens, size=sample, replace=False))
    w = np.asarray(withheld, dtype=bool)
    bad = int(np.sum(~w[sens]))
    sens = sens[w[sens]]
    audited = len(sens) + int(np.sum(~w[np.flatnonzero(problem.sensitive)]))
    if not len(sens):
        return PlainCheck(bad, audited)
    a = sp.csr_matrix(problem.relations)
    value = np.asarray(problem.value, dtype=float)
    # values up to 1e11 (Castro's TOYSARAH), or 1e9 in a neighbourhood LP, make HiGHS call a
    # feasible LP infeasible:
    # work in power-of-two units (exact rescaling) so that the largest value is about 1e5
    big = float(np.abs(value).max()) if value.size else 0.0
    unit = 2.0 ** np.floor(np.log2(big / 1e5)) if big > SCALE_FROM else 1.0
    value = value / unit
    cols = np.flatnonzero(w)
    aw = a[:, cols].tocsr()
    rhs = aw @ value[cols]  # the relations' part carried by the withheld cells
    used = np.flatnonzero(np.diff(aw.indptr) > 0)
    aw, rhs = aw[used], rhs[used]
    lo = np.asarray(problem.lower, dtype=float)[cols] / unit
    hi = np.asarray(problem.upper, dtype=float)[cols] / unit
    pos = np.full(problem.n, -1, dtype=np.int64)
    pos[cols] = np.arange(len(cols))
    # components of the withheld cells: a cell-row bipartite graph
    nc = len(cols)
    pattern = aw.copy()
    pattern.data[:] = 1.0
    graph = sp.bmat([[None, pattern.T], [pattern, None]], format="csr")
    _, label = connected_components(graph, directed=False)
    cell_label, row_label = label[:nc], label[nc:]
    scale = max(1.0, float(np.abs(value).max()))
    targets = pos[sens]
    undecided = 0
    near: _Neighbourhoods | None = None  # built for the first component above WHOLE_MAX
    for comp in np.unique(cell_label[targets]):
        mine = sens[cell_label[targets] == comp]
        if time.monotonic() > stop:
            audited -= len(mine)  # not audited: out of time (no model built for them)
            continue
        ccols = np.flatnonzero(cell_label == comp)
        if len(ccols) > WHOLE_MAX:
            if near is None:
                near = _Neighbourhoods(aw, value[cols], lo, hi, scale)
            for k in mine:
                if time.monotonic() > stop:
                    audited -= 1
                    continue
                if not near.proves(int(pos[k]), problem.upl[k] / unit, problem.lpl[k] / unit):
                    undecided += 1
                    audited -= 1
            continue
        crows = np.flatnonzero(row_label == comp)
        sub = aw[crows][:, ccols].tocsc()
        solver = _Component(sub, rhs[crows], lo[ccols], hi[ccols])
        for k in mine:
            if time.monotonic() > stop:
                audited -= 1  # not audited: out of time
                continue
            j = int(np.searchsorted(ccols, pos[k]))  # ccols is sorted
            v = value[k]
            tol = _tolerance(v, scale)
            for sign, need in _needs(v, problem.upl[k] / unit, problem.lpl[k] / unit, lo[pos[k]], hi[pos[k]]):
                reached = solver.reach(j, sign)
                if reached is None:  # unbounded: protected
                    continue
                if sign * (reached - v) < need - tol:
                    bad += 1
                    break
    return PlainCheck(bad, audited, undecided)


def _needs(v: float, upl: float, lpl: float, lo: float, hi: float) -> list[tuple[float, float]]:
    """``(sign, amount)`` per direction a withheld sensitive cell of value ``v`` must move:
    its level, or as far as its a priori bounds allow when they are nearer."""
    return [(sign, min(level, (hi - v) if sign > 0 else (v - lo)))
            for sign, level in ((1.0, upl), (-1.0, lpl)) if level > 0]


def _tolerance(v: float, scale: float) -> float:
    """How much short of its need a cell's reach may fall (numerical slack of the LPs)."""
    return 1e-6 * max(1.0, abs(v)) + 1e-9 * scale


class _Neighbourhoods:
    """Attacker LPs on the withheld cells near one cell, all others at their true values."""

    def __init__(self, aw: sp.csr_matrix, value: np.ndarray, lo: np.ndarray, hi: np.ndarray,
                 scale: float) -> None:
        self.aw, self.awt = aw, aw.T.tocsr()
        self.value, self.lo, self.hi, self.scale = value, lo, hi, scale

    def proves(self, j: int, upl: float, lpl: float) -> bool:
        """Whether some neighbourhood LP moves withheld column ``j`` by both levels
        (``False``: undecided, never "under-protected")."""
        v = self.value[j]
        tol = _tolerance(v, self.scale)
        needs = _needs(v, upl, lpl, self.lo[j], self.hi[j])
        ring = np.array([j])
        seen = np.zeros(self.aw.shape[1], dtype=bool)
        seen[j] = True
        steps = 0
        for hops in HOPS:
            while steps < hops and len(ring):
                rows = np.unique(self.awt[ring].indices)
                nxt = np.unique(self.aw[rows].indices)
                ring = nxt[~seen[nxt]]
                seen[ring] = True
                steps += 1
            cells = np.flatnonzero(seen)
            solver = self._solver(cells)
            col = int(np.searchsorted(cells, j))
            needs = [(sign, need) for sign, need in needs
                     if (reached := solver.reach(col, sign)) is not None and sign * (reached - v) < need - tol]
            if not needs:
                return True
            if not len(ring) or len(cells) > NEAR_MAX:
                return False
        return False

    def _solver(self, cells: np.ndarray) -> _Component:
        """The LP with ``cells`` free and every other withheld cell at its true value."""
        rows = np.unique(self.awt[cells].indices)
        part = self.aw[rows][:, cells].tocsc()
        # every cell outside is at its true value, so each row's free part sums to what
        # it sums to in the true table
        return _Component(part, part @ self.value[cells], self.lo[cells], self.hi[cells])


class _Component:
    """One component's attacker LP, re-solved for each objective from the last basis."""

    def __init__(self, a: sp.csc_matrix, rhs: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> None:
        self.a, self.rhs, self.lo, self.hi = a, rhs, lo, hi
        h = highspy.Highs()
        h.setOptionValue("output_flag", False)
        # primal simplex: after an objective change the last basis stays primal feasible
        # (measured on a 25,654-cell component of a 61,215-cell table: 20 cells' LPs in
        # 0.7 s against 3.3 s with HiGHS's default dual simplex)
        h.setOptionValue("simplex_strategy", 4)
        n = a.shape[1]
        inf = highspy.kHighsInf
        h.passModel(n, a.shape[0], a.nnz, int(highspy.MatrixFormat.kColwise), int(highspy.ObjSense.kMinimize),
                    0.0, np.zeros(n), np.where(np.isfinite(lo), lo, -inf), np.where(np.isfinite(hi), hi, inf),
                    rhs, rhs, a.indptr.astype(np.int32), a.indices.astype(np.int32), a.data.astype(float),
                    np.zeros(n, dtype=np.int32))  # all columns continuous
        self.h = h
        self.last = -1

    def reach(self, j: int, sign: float) -> float | None:
        """Largest (sign > 0) or smallest value of column ``j``; None when unbounded."""
        h = self.h
        if self.last >= 0:
            h.changeColCost(self.last, 0.0)
        h.changeColCost(j, -sign)  # minimise -sign * y_j
        self.last = j
        h.run()
        status = h.getModelStatus()
        if status == highspy.HighsModelStatus.kOptimal:
            return float(h.getSolution().col_value[j])
        if status == highspy.HighsModelStatus.kUnbounded:
            return None
        return self._scipy(j, sign)

    def _scipy(self, j: int, sign: float) -> float | None:
        """The same LP from scratch by scipy's ``linprog`` (HiGHS did not settle it)."""
        c = np.zeros(self.a.shape[1])
        c[j] = -sign
        bounds = list(zip(np.where(np.isfinite(self.lo), self.lo, None),
                          np.where(np.isfinite(self.hi), self.hi, None)))
        res = linprog(c, A_eq=self.a, b_eq=self.rhs, bounds=bounds, method="highs")
        if res.status == 3:
            return None
        if res.status != 0:
            raise RuntimeError(f"plain LP check: column {j}: {res.message}")
        return float(res.x[j])
