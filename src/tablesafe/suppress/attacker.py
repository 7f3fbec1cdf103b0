"""The attacker's linear programs, their duals (capacity cuts) and certificates.

The attacker knows every published cell, the relations ``A y = rhs`` and an a priori
interval per cell. Written in deviations ``z = y - value`` from the true table, the
attacker's problem for a target cell ``k`` reads

    max  s * z_k   s.t.  A z = 0,   -L_i x_i <= z_i <= U_i x_i

with ``x_i = 1`` for withheld cells and 0 for published ones, ``L_i = value_i - lower_i``,
``U_i = upper_i - value_i`` and ``s = +1`` (upward) or ``-1`` (downward). The cell is
protected in direction ``s`` when the optimum reaches its protection level.

For any row multipliers ``u`` the reduced costs ``d = c - A^T u`` (``c = -s e_k``) give the
dual bound ``sum_i (max(d_i, 0) L_i + max(-d_i, 0) U_i) x_i`` on the attacker's optimum,
valid for every ``x``. Requiring it to reach the protection level is the capacity (Benders)
inequality of Fischetti and Salazar (JASA 2000; seed 002 "Secondary tabular data protection
methods"); the same LPs with fractional ``x`` separate the master's LP relaxation.

Suppressed cells linked by relations form independent blocks (DESIGN.md, performance
habits): one HiGHS model is built per block and only its objective changes per target.
An optimal attacker solution is a *certificate*: a feasible table that differs from the
truth in withheld cells only and moves the target by the level.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import highspy
import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components

from tablesafe.audit.lp import new_highs, pass_columns
from tablesafe.problem import Problem
from tablesafe.structure.insiders import single_respondents
from tablesafe.structure.neighbours import find_sorted, gather

INF = float("inf")
UP, DOWN = 1, -1
_HINF = highspy.kHighsInf
SIMPLEX_STRATEGY = 1  # dual simplex (measured faster here than primal)


def _tol(req: float) -> float:
    return 1e-6 * max(1.0, abs(req))


@dataclass
class Bounds:
    """Deviation bounds the attacker uses.

    ``dn[i]`` / ``up[i]``: how far cell ``i`` may move down / up when it protects other
    cells (with the capacity option ``dn`` is capped by the protection capacity, seed 000
    section 7.1); ``tdn`` / ``tup``: how far a target may move itself (its full a priori
    interval). ``req_up`` / ``req_dn`` / ``req_sl``: required deviations per cell (levels
    capped at the a priori interval, DESIGN.md).
    """

    dn: np.ndarray
    up: np.ndarray
    tdn: np.ndarray
    tup: np.ndarray
    req_up: np.ndarray
    req_dn: np.ndarray
    req_sl: np.ndarray
    singleton: np.ndarray  # cells whose single respondent is an insider

    @classmethod
    def of(cls, problem: Problem, *, capacity: bool = False, singleton: bool = True) -> Bounds:
        """Deviation bounds and required levels of a problem."""
        v = problem.value
        tdn = np.maximum(v - problem.lower, 0.0)
        tup = np.maximum(problem.upper - v, 0.0)
        dn = tdn.copy()
        up = tup.copy()
        if capacity and problem.capacity is not None:
            dn = np.minimum(dn, np.maximum(np.asarray(problem.capacity, dtype=float), 0.0))
        sens = problem.sensitive
        req_up = np.where(sens, np.minimum(problem.upl, tup), 0.0)
        req_dn = np.where(sens, np.minimum(problem.lpl, tdn), 0.0)
        req_sl = np.where(sens, np.minimum(problem.spl, tup + tdn), 0.0)
        # the single respondents of tablesafe.structure.insiders (sensitive or not)
        single = single_respondents(problem) if singleton else np.zeros(problem.n, dtype=bool)
        return cls(dn, up, tdn, tup, req_up, req_dn, req_sl, single)


@dataclass
class Cut:
    """Capacity inequality ``sum coef[j] * x[idx[j]] >= rhs`` (constants moved to rhs)."""

    idx: np.ndarray
    coef: np.ndarray
    rhs: float
    target: int
    direction: int


Key = tuple[int, int, int]
"""An attack: target cell, direction (``UP``/``DOWN``), insider cell (-1: an outsider)."""


@dataclass
class Attack:
    """One attacker LP's outcome for a target, direction and (optional) insider cell."""

    target: int
    direction: int  # UP, DOWN
    insider: int  # -1 for an outsider
    reached: float  # the attacker's best deviation (inf when unbounded)
    required: float
    cells: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    dev: np.ndarray = field(default_factory=lambda: np.zeros(0))  # certificate deviations
    dual_cells: np.ndarray | None = None  # reduced costs over all cells of the block rows
    dual_d: np.ndarray | None = None
    sliding_short: float = 0.0  # how much the interval width misses the sliding level

    @property
    def ok(self) -> bool:
        """Whether the level is reached."""
        return self.reached >= self.required - _tol(self.required)


class Blocks:
    """Connected blocks of active cells (``x > 0``) linked by relations."""

    def __init__(self, relations: sp.csr_matrix, x: np.ndarray) -> None:
        m, n = relations.shape
        active = x > 1e-9
        self.active = active
        self.label = np.full(n, -1, dtype=np.int64)
        self.row_label = np.full(m, -1, dtype=np.int64)
        rel = relations if sp.isspmatrix_csr(relations) else sp.csr_matrix(relations)
        if not active.any():
            self.count = 0
            return
        keep = active[rel.indices]
        # one graph over relations (nodes 0..m-1) and cells (m..m+n-1), an edge per active
        # entry, built from the CSR arrays directly (the subtables build blocks thousands
        # of times; a block matrix of the active part took most of that time)
        row_of = np.repeat(np.arange(m, dtype=np.int64), np.diff(rel.indptr))[keep]
        col = rel.indices[keep].astype(np.int64)
        g = sp.csr_matrix((np.ones(col.size), (row_of, m + col)), shape=(m + n, m + n))
        _, lab = connected_components(g, directed=False)
        rows = np.unique(row_of)
        cols = np.flatnonzero(active)
        # blocks are numbered by their first relation, else their first cell, as a
        # labelling of the active part alone numbers them
        kept = np.concatenate([lab[rows], lab[m + cols]])
        uniq, first = np.unique(kept, return_index=True)
        order = np.empty(uniq.size, dtype=np.int64)
        order[np.argsort(first, kind="stable")] = np.arange(uniq.size)
        renum = order[np.searchsorted(uniq, kept)]
        self.count = int(uniq.size)
        self.row_label[rows] = renum[:rows.size]
        self.label[cols] = renum[rows.size:]

    def cells(self, b: int) -> np.ndarray:
        return np.flatnonzero(self.label == b)

    def rows(self, b: int) -> np.ndarray:
        return np.flatnonzero(self.row_label == b)


_CSC_CACHE: dict[int, tuple[sp.csr_matrix, sp.csc_matrix]] = {}


CSC_CACHE_SIZE = 8
"""Relations matrices :func:`relations_by_cell` keeps: a table's and the subtables solved
in the same process between its uses (the flows of :mod:`~tablesafe.suppress.flow_attacks`
read each subtable's)."""


def relations_by_cell(problem: Problem) -> sp.csc_matrix:
    """``problem.relations`` as CSC (the relations of each cell), built once per relations
    matrix and shared by the attack, flow and cleanup stages."""
    key = id(problem.relations)
    hit = _CSC_CACHE.get(key)
    if hit is None or hit[0] is not problem.relations:
        hit = (problem.relations, problem.relations.tocsc())
        if len(_CSC_CACHE) >= CSC_CACHE_SIZE:
            _CSC_CACHE.pop(next(iter(_CSC_CACHE)))  # the oldest
        _CSC_CACHE[key] = hit
    return hit[1]


def block_bounds(bounds: Bounds, x: np.ndarray,
                 cells: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """How far each of ``cells`` may move under the pattern ``x`` (possibly fractional):
    up and down as a complement, up and down as the target, each scaled by ``x``; a
    published cell (x = 0) cannot move, whatever its bounds (inf * 0 is 0 here)."""
    xs = x[cells]
    on = xs > 0
    scale = np.where(on, xs, 1.0)
    return tuple(np.where(on, b[cells] * scale, 0.0)  # type: ignore[return-value]
                 for b in (bounds.up, bounds.dn, bounds.tup, bounds.tdn))


def movement_weights(problem: Problem, bounds: Bounds, cells: np.ndarray) -> np.ndarray:
    """Per cell, the weight of a unit of its movement in a sparse certificate: 1 plus its
    cost relative to the block's largest, and single respondents' cells moved as little
    as possible (``SINGLETON_WEIGHT``)."""
    c = np.abs(problem.cost[cells]).astype(float)
    weight = 1.0 + c / (float(c.max()) if len(cells) and c.max() > 0 else 1.0)
    return np.where(bounds.singleton[cells], weight * SINGLETON_WEIGHT, weight)


def reduced_costs(arows: sp.csr_matrix, y: np.ndarray, target: int, direction: int) -> tuple[np.ndarray, np.ndarray]:
    """The attacker's reduced costs ``d = c - A^T y`` (``c = -direction e_target``) over the
    cells of the relations ``arows`` with multipliers ``y``: the cells where ``d`` is not
    zero and its values (what :func:`cut_from` reads)."""
    d_all = -(arows.T @ y)
    d_all[target] -= direction
    cols = np.flatnonzero(np.abs(d_all) > 1e-12)
    return cols, d_all[cols]


class BlockLP:
    """One HiGHS model of the attacker's deviations over a block of active cells.

    Deviations are split, ``z = p - q`` with ``0 <= p <= U x`` and ``0 <= q <= L x``, so
    that a second solve can find a sparse certificate: with the target held at its level,
    minimise the cost-weighted total movement of the other cells. ``cells`` are in
    increasing order.
    """

    def __init__(self, problem: Problem, bounds: Bounds, x: np.ndarray, cells: np.ndarray, rows: np.ndarray) -> None:
        self.problem = problem
        self.bounds = bounds
        self.cells = cells
        self.rows = rows
        self.pos = {int(c): j for j, c in enumerate(cells)}
        self._arows: sp.csr_matrix | None = None  # rows x all cells, built when a dual is asked for
        nc = len(cells)
        # the block's columns by index arithmetic on the CSR arrays (scipy's fancy indexing
        # costs more than the LP on small neighbourhoods)
        rel = problem.relations
        nz = gather(rel.indptr, rows)
        # each entry's column by bisection in the sorted cells (no table-sized array per
        # model)
        col, keep = find_sorted(cells, rel.indices[nz])
        row_of = np.repeat(np.arange(len(rows)), rel.indptr[rows + 1] - rel.indptr[rows])[keep]
        col = col[keep]
        val = rel.data[nz][keep].astype(float)
        order = np.lexsort((row_of, col))
        row_of, col, val = row_of[order], col[order], val[order]
        ptr = np.concatenate([[0], np.cumsum(np.bincount(col, minlength=nc))])
        self.nc = nc
        self.up, self.dn, self.tup, self.tdn = block_bounds(bounds, x, cells)
        self.weight = movement_weights(problem, bounds, cells)
        h = new_highs()
        h.setOptionValue("presolve", "off")
        h.setOptionValue("simplex_strategy", SIMPLEX_STRATEGY)
        hi = np.concatenate([self.up, self.dn])
        pass_columns(h, np.zeros(2 * nc), np.zeros(2 * nc), np.where(np.isfinite(hi), hi, _HINF),
                     np.zeros(len(rows)), np.zeros(len(rows)), np.concatenate([ptr, ptr[1:] + ptr[-1]]),
                     np.concatenate([row_of, row_of]), np.concatenate([val, -val]))
        self.h = h
        self._cols = np.arange(2 * nc, dtype=np.int32)
        self._costs = (np.zeros(2 * nc), np.concatenate([self.weight, self.weight]))  # by ``weighted``
        self._weighted = False  # the model's costs: zero (attacker's LP) or the weights

    def _use_weights(self, weighted: bool) -> None:
        """Switch the model's standing costs between zero (the attacker's LP, whose
        target column gets its own cost) and the movement weights (the sparse
        certificate's LP), only when they change: where most attacks pass, the sparse
        LPs follow one another with no full cost update."""
        if self._weighted != weighted:
            self.h.changeColsCost(2 * self.nc, self._cols, self._costs[weighted])
            self._weighted = weighted

    @property
    def arows(self) -> sp.csr_matrix:
        """The block's relations over all cells of the table (for the duals)."""
        if self._arows is None:
            self._arows = self.problem.relations[self.rows]
        return self._arows

    def _bound(self, col: int, lo: float, hi: float) -> None:
        self.h.changeColBounds(col, float(lo), float(hi) if np.isfinite(hi) else _HINF)

    def _set_cell(self, j: int, up_lo: float, up_hi: float, dn_lo: float, dn_hi: float) -> None:
        self._bound(j, up_lo, up_hi)
        self._bound(self.nc + j, dn_lo, dn_hi)

    def publish(self, cell: int) -> None:
        """Publish ``cell`` in this model for good (its deviations bounded to zero)."""
        j = self.pos[int(cell)]
        self.up[j] = self.dn[j] = self.tup[j] = self.tdn[j] = 0.0
        self._restore(j)

    def attack_without(self, cell: int, target: int, direction: int, required: float,
                       insider: int = -1, also_fixed: tuple[int, ...] = ()) -> Attack:
        """:meth:`attack` with ``cell`` published for this attack only (no dual);
        ``also_fixed`` as there."""
        j = self.pos[int(cell)]
        self._set_cell(j, 0.0, 0.0, 0.0, 0.0)
        try:
            return self.attack(target, direction, required, insider, want_dual=False, sparse=SCREEN_SPARSE,
                               also_fixed=also_fixed, expect_pass=SCREEN_SPARSE, reach=not SCREEN_SPARSE)
        finally:
            self._restore(j)

    def _restore(self, j: int) -> None:
        self._set_cell(j, 0.0, self.up[j], 0.0, self.dn[j])

    def _z(self) -> np.ndarray:
        v = np.asarray(self.h.getSolution().col_value)
        return v[: self.nc] - v[self.nc:]

    def attack(self, target: int, direction: int, required: float, insider: int = -1,
               want_dual: bool = True, force_dual: bool = False, sparse: bool = False,
               also_fixed: tuple[int, ...] = (), expect_pass: bool = False, reach: bool = True) -> Attack:
        """Solve the attacker's LP for ``target`` moving in ``direction``.

        ``insider``'s cell (and every cell of ``also_fixed``) keeps its true value: the
        attacker knows it. A table found with several cells fixed answers the attack of
        each of their respondents at once.

        ``expect_pass`` (with ``sparse``): where most attacks pass, the sparse
        certificate's LP (the target held at its level) is solved first. When it is
        feasible the attack passes with that table and ``reached`` is the level (a lower
        bound of the attacker's optimum), one LP instead of two; otherwise the attacker's
        LP follows as usual (its optimum and duals). Not with a sliding level
        (``force_dual``), which compares the true reach up and down. ``reach=False``
        skips that attacker's LP too: an attack without a sparse certificate then fails
        with ``reached`` 0 (only below the level is known; no duals).
        """
        j = self.pos[int(target)]
        h = self.h
        nc = self.nc
        self._set_cell(j, 0.0, self.tup[j], 0.0, self.tdn[j])
        fixed_pos = self._hold_known(j, insider, also_fixed)
        own = self.tup[j] if direction == UP else self.tdn[j]
        if expect_pass and sparse and not force_dual and 0 < required <= own:
            z = self._sparse_table(j, direction, required, None)
            if z is not None:
                res = Attack(int(target), direction, int(insider), float(required), float(required))
                res.cells, res.dev = self._moved(z, required)
                self._release(j, fixed_pos)
                return res
            if not reach:
                self._release(j, fixed_pos)
                return Attack(int(target), direction, int(insider), 0.0, float(required))
            self._set_cell(j, 0.0, self.tup[j], 0.0, self.tdn[j])
        # maximise direction * z_j = direction * (p_j - q_j)
        self._use_weights(False)
        h.changeColCost(j, -float(direction))
        h.changeColCost(nc + j, float(direction))
        h.run()
        status = h.getModelStatus()
        res = Attack(int(target), direction, int(insider), 0.0, float(required))
        z = None
        if status == highspy.HighsModelStatus.kOptimal:
            sol = h.getSolution()
            z = self._z()
            res.reached = float(direction * z[j])
            if want_dual and (force_dual or not res.ok):
                res.dual_cells, res.dual_d = reduced_costs(self.arows, np.asarray(sol.row_dual), target, direction)
        elif status in (highspy.HighsModelStatus.kUnbounded, highspy.HighsModelStatus.kUnboundedOrInfeasible):
            res.reached = INF
        else:
            h.clearSolver()
            h.run()
            if h.getModelStatus() == highspy.HighsModelStatus.kOptimal:
                z = self._z()
                res.reached = float(direction * z[j])
            else:
                res.reached = -INF
        h.changeColCost(j, 0.0)
        h.changeColCost(nc + j, 0.0)
        if res.ok and required > 0 and (sparse or z is None):
            z = self._sparse_table(j, direction, required, z)
        if z is not None:
            res.cells, res.dev = self._moved(z, required)
        self._release(j, fixed_pos)
        return res

    def _hold_known(self, j: int, insider: int, also_fixed: tuple[int, ...]) -> list[int]:
        """Fix the cells the attacker knows (``insider``'s and ``also_fixed``; not the
        target's column ``j``) at their true values; returns their columns."""
        known = ([int(insider)] if insider >= 0 else []) + [int(c) for c in also_fixed]
        fixed_pos = [p for p in (self.pos.get(c, -1) for c in known) if p >= 0 and p != j]
        for ji in fixed_pos:
            self._set_cell(ji, 0.0, 0.0, 0.0, 0.0)
        return fixed_pos

    def _release(self, j: int, fixed_pos: list[int]) -> None:
        """Give the target's column and the held columns their bounds back."""
        self._restore(j)
        for ji in fixed_pos:
            self._restore(ji)

    def _moved(self, z: np.ndarray, required: float) -> tuple[np.ndarray, np.ndarray]:
        """The cells a table moves and their deviations."""
        nz = np.abs(z) > 1e-9 * max(1.0, abs(required))
        return self.cells[nz], z[nz]

    def _sparse_table(self, j: int, direction: int, required: float, z: np.ndarray | None) -> np.ndarray | None:
        """A certificate moving the block's column ``j`` by exactly ``required``, the other
        cells moving little (their cost-weighted total movement least); ``z`` when the LP
        finds none."""
        h, nc = self.h, self.nc
        if direction == UP:
            self._set_cell(j, required, required, 0.0, 0.0)
        else:
            self._set_cell(j, 0.0, 0.0, required, required)
        self._use_weights(True)
        h.changeColCost(j, 0.0)
        h.changeColCost(nc + j, 0.0)
        h.run()
        if h.getModelStatus() == highspy.HighsModelStatus.kOptimal:
            z = self._z()
        h.changeColCost(j, float(self.weight[j]))
        h.changeColCost(nc + j, float(self.weight[j]))
        return z

    def certify(self, known: Attack, also_fixed: tuple[int, ...] = ()) -> Attack:
        """The sparse certificate (as :meth:`attack` with ``sparse=True`` finds it) of an
        attack already known to pass (``known``: a table reaching its level); the
        attacker's optimum is not computed, ``reached`` stays ``known``'s."""
        j = self.pos[int(known.target)]
        fixed_pos = self._hold_known(j, known.insider, also_fixed)
        z = self._sparse_table(j, known.direction, known.required, None)
        self._release(j, fixed_pos)
        if z is None:
            return known
        cells, dev = self._moved(z, known.required)
        return Attack(known.target, known.direction, known.insider, known.reached, known.required,
                      cells=cells, dev=dev)


SCREEN_SPARSE = True
""":meth:`BlockLP.attack_without` (the cleanup's screens) asks only whether the level is
reached: one LP for the sparse certificate, none for the attacker's optimum."""

SINGLETON_WEIGHT = 8.0
"""How much more a single respondent's cell weighs in the sparse certificate's movement
than another cell of the same cost. A table that leaves a single respondent's cell alone
answers that respondent's attack too, with no LP of its own, so certificates go round
those cells where they can. Measured with ``suppress(problem, "auto")`` on generated
tables with holdings (thirtieth session), weight 1 / 4 / 8 / 20: the 13,167-cell two-way
table 20.0 / 16.2 / 15.4 / 15.7 s at 5.375 / 5.381 / 5.381 / 5.379 M; the 2,132-cell
one 5.3 / 4.4 / 4.6 / 4.4 s at 4.20 / 4.20 / 4.19 / 4.29 M; the 1,872-cell three-way
table 28.0 / 28.0 / 27.8 s at 7.40 / 7.35 / 7.32 M (1 / 4 / 8)."""

RHS_TOLERANCE = 1e-9
"""Relative size below which a capacity inequality's right-hand side counts as zero."""


def moves_any(attack: Attack, cells) -> bool:
    """Whether the attack's table moves one of ``cells`` (cells the attacker knows, whose
    attacks that table then cannot answer)."""
    return bool(len(cells)) and bool(np.isin(attack.cells[attack.dev != 0], cells).any())


def cut_from(attack: Attack, bounds: Bounds, fixed_one: np.ndarray, cap: bool = True) -> Cut:
    """The capacity inequality of an unsuccessful attack (Fischetti-Salazar).

    ``fixed_one``: cells withheld whatever the master decides (sensitive cells); their
    terms move to the right-hand side. Coefficients above the remaining right-hand side
    are lowered to it (valid for binary ``x``).
    """
    cells = attack.dual_cells
    d = attack.dual_d
    assert cells is not None and d is not None  # an unsuccessful attack carries its duals
    k = attack.target
    dn = np.where(cells == k, bounds.tdn[cells], bounds.dn[cells])
    up = np.where(cells == k, bounds.tup[cells], bounds.up[cells])
    pos = np.maximum(d, 0.0)
    neg = np.maximum(-d, 0.0)
    with np.errstate(invalid="ignore"):
        coef = np.where(pos > 0, pos * dn, 0.0) + np.where(neg > 0, neg * up, 0.0)
    coef = np.where(np.isnan(coef), INF, coef)
    if attack.insider >= 0:
        coef[cells == attack.insider] = 0.0
    const = fixed_one[cells]
    given = float(np.sum(np.minimum(coef[const], 1e300)))
    rhs = attack.required - given
    if rhs <= RHS_TOLERANCE * max(1.0, abs(attack.required), given):
        # what is left is rounding error of the subtraction (measured: 1e-13 on levels of
        # hundreds), not a capacity to provide; scaled to a right-hand side of 1 it
        # would demand a complement the level does not need
        rhs = min(rhs, 0.0)
    cells, coef = cells[~const], coef[~const]
    keep = coef > 1e-9 * max(1.0, abs(attack.required))
    cells, coef = cells[keep], coef[keep]
    if cap:
        coef = np.minimum(coef, max(rhs, 0.0))
    return Cut(cells.astype(np.int64), coef, float(rhs), k, attack.direction)


def row_cuts(problem: Problem, bounds: Bounds, fixed_one: np.ndarray) -> list[Cut]:
    """Cheap valid inequalities: for each sensitive cell, relation and direction.

    The relation alone must let the target move by its level: the dual ``u = +-e_r``
    of the attacker's LP, so another cell of the relation must be withheld and able to
    move far enough (the "at least two withheld cells per relation" condition, weighted
    by capacity). The same cuts as :func:`relation_cut` per relation, worked out for all
    of them at once (a subtable asks for thousands).
    """
    a = problem.relations.tocsc()
    arow = problem.relations.tocsr()
    sens = np.flatnonzero(problem.sensitive)
    if not sens.size:
        return []
    # one entry per (target, relation): the relations of each sensitive cell
    per = np.diff(a.indptr)[sens]
    at = gather(a.indptr, sens)
    tgt = np.repeat(sens, per)
    rel = a.indices[at]
    akr = a.data[at].astype(float)
    cuts: list[Cut] = []
    # the cells of each (target, relation), in the order of the relation's row
    size = np.diff(arow.indptr)[rel]
    nz = gather(arow.indptr, rel)
    pair = np.repeat(np.arange(rel.size), size)
    cols = arow.indices[nz].astype(np.int64)
    vals = arow.data[nz].astype(float)
    own = cols == tgt[pair]
    first = np.concatenate([[0], np.cumsum(size)[:-1]])
    per_direction = []
    for direction, req_all in ((UP, bounds.req_up), (DOWN, bounds.req_dn)):
        req = req_all[tgt]
        d = vals * (direction / akr[pair])  # d = -vals * (-direction / a_kr), 0 at the target
        d[own] = 0.0
        dn = np.where(own, bounds.tdn[cols], bounds.dn[cols])
        up = np.where(own, bounds.tup[cols], bounds.up[cols])
        pos = np.maximum(d, 0.0)
        neg = np.maximum(-d, 0.0)
        with np.errstate(invalid="ignore"):
            coef = np.where(pos > 0, pos * dn, 0.0) + np.where(neg > 0, neg * up, 0.0)
        coef = np.where(np.isnan(coef), INF, coef)
        const = fixed_one[cols]
        given = np.add.reduceat(np.where(const, np.minimum(coef, 1e300), 0.0), first)
        rhs = req - given
        small = rhs <= RHS_TOLERANCE * np.maximum(np.maximum(1.0, np.abs(req)), given)
        rhs = np.where(small, np.minimum(rhs, 0.0), rhs)
        kept = (req > 0) & (rhs > 0)
        keep = ~const & (coef > 1e-9 * np.maximum(1.0, np.abs(req[pair])))
        per_direction.append((direction, kept, keep, np.minimum(coef, np.maximum(rhs[pair], 0.0)), rhs))
    # in the order of a loop over targets, their relations, then the two directions
    for i in np.flatnonzero(per_direction[0][1] | per_direction[1][1]).tolist():
        sl = slice(int(first[i]), int(first[i] + size[i]))
        for direction, kept, keep, capped, rhs in per_direction:
            if kept[i]:
                k_ = keep[sl]
                cuts.append(Cut(cols[sl][k_], capped[sl][k_], float(rhs[i]), int(tgt[i]), direction))
    return cuts


def relation_cut(bounds: Bounds, k: int, direction: int, required: float, cols: np.ndarray, vals: np.ndarray,
                 fixed_one: np.ndarray, cap: bool = True) -> Cut:
    """The capacity inequality of one relation (its cells ``cols`` with coefficients
    ``vals``, ``k`` among them) for ``k`` moving in ``direction``: the attacker's dual
    ``u = +-e_r``. Its coefficient of a cell is how far that cell can make up ``k``'s
    move within its bounds, so ``k`` moves by at most their sum over the relation's
    other withheld cells (:func:`cut_from`)."""
    akr = vals[cols == k][0]
    # d = c - a_r * u with u chosen so that d_k = 0: u = -direction / a_kr
    d = -vals * (-direction / akr)
    d[cols == k] = 0.0
    att = Attack(int(k), direction, -1, 0.0, float(required), dual_cells=cols, dual_d=d)
    return cut_from(att, bounds, fixed_one, cap=cap)
