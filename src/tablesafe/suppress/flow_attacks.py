"""The attacker's problems of a network table solved as min-cost flows.

A table whose every cell lies in at most two relations, with coefficients +-1 that a
choice of sign per relation turns into one +1 and one -1 per cell, is a *network*: a
two-way table without hierarchy (a HiTaS subtable of a two-way table), or a one-way
table. Each relation is then a node, each cell an edge from the relation where its
signed coefficient is -1 to the one where it is +1 (a cell in one relation only runs to
or from a ground node), and a table of deviations ``z`` with ``A z = 0`` is a
circulation: ``z_e`` is the flow on edge ``e``. (Seed 003, chapter IV: network methods
give the same result as the linear programs on two-dimensional tables in much less
time.)

The attacker's LP for target ``t`` moving up (:mod:`tablesafe.suppress.attacker`) is a
maximum flow from ``t``'s head to its tail through the other withheld cells, each edge
carrying forward up to ``U_e x_e`` and backward up to ``L_e x_e``; moving down it runs
from tail to head. The sparse certificate's LP (the target held at its level, the other
cells' weighted total movement least) is the min-cost flow of that value, and the
capacity inequality of a failing attack is the minimum cut that bounds the flow:
:class:`FlowBlock` answers both with one run of successive shortest paths
(:mod:`tablesafe.suppress.flow_kernel`), the cheapest flow of the level first. A block
of a few dozen cells takes microseconds there against about 0.2 ms per HiGHS LP (two per
passing attack), most of it the call's overhead.

:class:`FlowBlock` has the interface of :class:`~tablesafe.suppress.attacker.BlockLP`
that :func:`~tablesafe.suppress.attack_runs.run_attacks` uses. Attacks it does not model
(a sliding level, a target whose own interval is below its level) go to a ``BlockLP``
of the same block.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import numpy as np
import scipy.sparse as sp

from tablesafe.audit.lp import add_work
from tablesafe.problem import Problem
from tablesafe.structure.neighbours import gather
from tablesafe.suppress.attacker import (
    INF,
    UP,
    Attack,
    BlockLP,
    Blocks,
    Bounds,
    block_bounds,
    movement_weights,
    reduced_costs,
    relations_by_cell,
)

USE_FLOWS = True
"""Whether :func:`~tablesafe.suppress.attack_runs.run_attacks` solves the attacks of a
network table by flows (otherwise by HiGHS, as on every other table)."""

FLOW_RUN_WORK = 1
"""Work units (:func:`~tablesafe.audit.lp.lp_work`) of one flow, besides its arc scans:
a call with its few arrays takes about 20 microseconds, a unit's worth (an LP's simplex
iteration, 28.5 microseconds)."""

SCANS_PER_UNIT = 4000
"""Arcs the kernel looks at per work unit (about 5 nanoseconds each)."""

_SIGNS: dict[int, tuple[sp.csr_matrix, np.ndarray | None]] = {}


FLOW_MIN_SENSITIVE = 200
"""A problem with fewer sensitive cells has its attacks answered by LPs, not flows: its
few attacks do not make up for loading the flow kernel (0.2-0.3 s once per process;
measured on the generated 1,044-cell two-way table with 10 sensitive cells, 0.27 s by
LPs and 0.55 s by flows, fifty-sixth session). A HiTaS subtable is told what its whole
table decided (:func:`allowed`)."""

_ALLOWED: list[bool | None] = [None]


@contextlib.contextmanager
def allowed(flag: bool) -> Iterator[None]:
    """Within the block, flows answer attacks only if ``flag``, whatever the problem's
    own number of sensitive cells (a subtable's whole table decides for it, so the same
    table gets the same attacks in every process)."""
    saved = _ALLOWED[0]
    _ALLOWED[0] = bool(flag)
    try:
        yield
    finally:
        _ALLOWED[0] = saved


def flows_pay(problem: Problem) -> bool:
    """Whether a problem's attacks are worth the flow kernel (:data:`FLOW_MIN_SENSITIVE`)."""
    return int(problem.sensitive.sum()) >= FLOW_MIN_SENSITIVE


def network_signs(problem: Problem) -> np.ndarray | None:
    """A sign per relation that makes ``problem``'s relations a node-edge incidence
    matrix (each cell's column one +1 and one -1, or a single +-1), or None when there is
    none, when the flow kernel cannot be loaded, or when flows are not for this problem
    (:func:`allowed`; outside it, :func:`flows_pay`). Worked out once per relations
    matrix."""
    if not USE_FLOWS:
        return None
    chosen = _ALLOWED[0]
    if not (flows_pay(problem) if chosen is None else chosen):
        return None
    rel = problem.relations
    hit = _SIGNS.get(id(rel))
    if hit is not None and hit[0] is rel:
        return hit[1]
    signs = _signs(relations_by_cell(problem))
    if signs is not None and kernel() is None:
        signs = None  # (the kernel is loaded only for a network)
    if len(_SIGNS) > 64:
        _SIGNS.clear()
    _SIGNS[id(rel)] = (rel, signs)
    return signs


def _signs(csc: sp.csc_matrix) -> np.ndarray | None:
    m = csc.shape[0]
    if m == 0:
        return None
    per_col = np.diff(csc.indptr)
    if per_col.size == 0 or per_col.max() > 2 or not np.all(np.abs(csc.data) == 1.0):
        return None
    two = np.flatnonzero(per_col == 2)
    r1 = csc.indices[csc.indptr[two]]
    r2 = csc.indices[csc.indptr[two] + 1]
    # sigma_r1 * a1 = -sigma_r2 * a2, i.e. sigma_r2 = -a1 * a2 * sigma_r1
    a1 = csc.data[csc.indptr[two]]
    a2 = csc.data[csc.indptr[two] + 1]
    ends = np.concatenate([r1, r2])
    other = np.concatenate([r2, r1])
    link = np.concatenate([-a1 * a2, -a1 * a2])
    order = np.argsort(ends, kind="stable")
    ptr = np.concatenate([[0], np.cumsum(np.bincount(ends, minlength=m))])
    other, link = other[order].tolist(), link[order].tolist()
    signs = np.zeros(m)
    for start in range(m):
        if signs[start]:
            continue
        signs[start] = 1.0
        stack = [start]
        while stack:
            r = stack.pop()
            for k in range(ptr[r], ptr[r + 1]):
                s = other[k]
                if signs[s] == 0:
                    signs[s] = link[k] * signs[r]
                    stack.append(s)
    # every cell's two signed coefficients opposite (a cycle of relations may forbid it)
    if np.any(signs[r1] * a1 != -signs[r2] * a2):
        return None
    return signs


_KERNEL: list = []


def kernel():
    """The compiled flow function, or None when numba cannot be loaded."""
    if not _KERNEL:
        try:
            from tablesafe.suppress.flow_kernel import shortest_paths_flow
        except ImportError:  # pragma: no cover - numba missing: the LPs answer
            _KERNEL.append(None)
        else:
            _KERNEL.append(shortest_paths_flow)
    return _KERNEL[0]


def may_flow(problem: Problem) -> bool:
    """Whether ``problem``'s search may attack by flows: enough sensitive cells
    (:func:`flows_pay`) in a table of at most two dimensions (its HiTaS subtables are
    networks) or, without a table structure, in relations that are a network themselves
    (:func:`network_signs`)."""
    if not (USE_FLOWS and flows_pay(problem)):
        return False
    if problem.model is not None:
        return len(problem.model.dims) <= 2
    return network_signs(problem) is not None


def warm() -> None:
    """Load (or compile) the flow kernel now, in this process: forked workers then
    share it instead of each loading it, and no solve's clock counts the loading (the
    first run after an install compiles the kernel, seconds in which a subtable's guard
    on the clock would have ended its solve: that run's pattern differed from every
    later one's)."""
    run = kernel()
    if run is None:
        return
    tail = np.array([0, 1], dtype=np.int64)
    head = np.array([1, 0], dtype=np.int64)
    ptr = np.array([0, 2, 4], dtype=np.int64)
    edges = np.array([0, 1, 0, 1], dtype=np.int64)
    run(2, tail, head, np.ones(2), np.ones(2), np.ones(2), ptr, edges, 0, 1, 1.0, False, 1e-9,
        np.zeros(2), np.zeros(2, dtype=np.bool_))  # (work not counted: no attack)


def whole_network(problem: Problem, x: np.ndarray) -> Blocks:
    """One block of every active cell (``x > 0``) and every relation they are in: the
    blocks :func:`~tablesafe.suppress.attack_runs.run_attacks` hands to
    :class:`FlowBlock` (a flow stays within its component of the graph, so components
    need not be told apart; finding them cost more than the flows)."""
    blocks = Blocks.__new__(Blocks)
    active = x > 1e-9
    m = problem.relations.shape[0]
    blocks.active = active
    blocks.label = np.where(active, 0, -1).astype(np.int64)
    csc = relations_by_cell(problem)
    cols = np.flatnonzero(active)
    at = gather(csc.indptr, cols)
    blocks.row_label = np.full(m, -1, dtype=np.int64)
    blocks.row_label[csc.indices[at]] = 0
    blocks.count = 1 if cols.size else 0
    return blocks


class FlowBlock:
    """The attacker's problems of one block of withheld cells of a network table.

    Same arguments and attack interface as :class:`~tablesafe.suppress.attacker.BlockLP`
    (``signs``: :func:`network_signs` of the problem). Attacks it does not model go to
    a ``BlockLP`` of the block, built when first needed.
    """

    def __init__(self, problem: Problem, bounds: Bounds, x: np.ndarray, cells: np.ndarray, rows: np.ndarray,
                 signs: np.ndarray) -> None:
        self.problem = problem
        self.bounds = bounds
        self.x = x
        self.cells = cells
        self.rows = rows
        nc = len(cells)
        self.nc = nc
        self.pos = {int(c): j for j, c in enumerate(cells)}
        self.up, self.dn, self.tup, self.tdn = block_bounds(bounds, x, cells)
        self.weight = movement_weights(problem, bounds, cells)
        # nodes: the block's relations 0..R-1, then the ground R
        nr = len(rows)
        self.nn = nr + 1
        local = np.full(problem.relations.shape[0], -1, dtype=np.int64)
        local[rows] = np.arange(nr)
        csc = relations_by_cell(problem)
        tail = np.full(nc, nr, dtype=np.int64)
        head = np.full(nc, nr, dtype=np.int64)
        at = gather(csc.indptr, cells)
        owner = np.repeat(np.arange(nc), np.diff(csc.indptr)[cells])
        node = local[csc.indices[at]]
        plus = signs[csc.indices[at]] * csc.data[at] > 0
        head[owner[plus]] = node[plus]
        tail[owner[~plus]] = node[~plus]
        self.tail, self.head = tail, head
        self.signs = signs
        deg = np.bincount(np.concatenate([tail, head]), minlength=self.nn)
        self.adj_ptr = np.concatenate([[0], np.cumsum(deg)]).astype(np.int64)
        ends = np.concatenate([tail, head])
        self.adj_edge = np.concatenate([np.arange(nc), np.arange(nc)])[np.argsort(ends, kind="stable")].astype(np.int64)
        self._lp: BlockLP | None = None
        self._arows: sp.csr_matrix | None = None

    @property
    def lp(self) -> BlockLP:
        """The block's HiGHS model, for the attacks flows do not model."""
        if self._lp is None:
            self._lp = BlockLP(self.problem, self.bounds, self.x, self.cells, self.rows)
        return self._lp

    def attack(self, target: int, direction: int, required: float, insider: int = -1,
               want_dual: bool = True, force_dual: bool = False, sparse: bool = False,
               also_fixed: tuple[int, ...] = (), expect_pass: bool = False, reach: bool = True) -> Attack:
        """As :meth:`BlockLP.attack <tablesafe.suppress.attacker.BlockLP.attack>`. The table
        of a passing attack is the cheapest one (the sparse certificate) whether or not
        ``sparse`` asks for it; its ``reached`` is the attacker's optimum unless
        ``sparse`` or ``expect_pass`` lets it stop at the level."""
        j = self.pos[int(target)]
        own = self.tup[j] if direction == UP else self.tdn[j]
        if force_dual or not (0 < required <= own):
            return self.lp.attack(target, direction, required, insider, want_dual=want_dual, force_dual=force_dual,
                                  sparse=sparse, also_fixed=also_fixed, expect_pass=expect_pass, reach=reach)
        up, dn = self.up.copy(), self.dn.copy()
        up[j] = dn[j] = 0.0
        for c in (insider, *also_fixed):
            p = self.pos.get(int(c), -1) if c >= 0 else -1
            if p >= 0:
                up[p] = dn[p] = 0.0
        src, snk = (self.head[j], self.tail[j]) if direction == UP else (self.tail[j], self.head[j])
        cert = np.zeros(self.nc)
        side = np.zeros(self.nn, dtype=np.bool_)
        full = not (sparse or expect_pass)
        eps = 1e-9 * max(1.0, abs(required))
        if src == snk:  # both ends at the ground: the cell moves on its own
            total, got, cut, scans = INF, 1, 0, 0
        else:
            total, got, cut, scans = kernel()(self.nn, self.tail, self.head, up, dn, self.weight, self.adj_ptr,
                                              self.adj_edge, int(src), int(snk), float(required), full, eps,
                                              cert, side)
        add_work(FLOW_RUN_WORK + scans // SCANS_PER_UNIT)
        res = Attack(int(target), direction, int(insider), min(float(total), float(own)), float(required))
        z = cert
        z[j] = direction * (float(required) if got else float(total))
        nz = np.abs(z) > 1e-9 * max(1.0, abs(required))
        res.cells, res.dev = self.cells[nz], z[nz]
        if not got and want_dual and cut:
            self._dual(res, side, target, direction)
        return res

    def _dual(self, res: Attack, side: np.ndarray, target: int, direction: int) -> None:
        """The duals of a failing attack from its minimum cut (``side``: the source side):
        node multipliers -1 on the source side and 0 on the sink side, shifted so that
        the ground's is 0 (it has no relation), signed back onto the relations."""
        nr = self.nn - 1
        u = np.where(side[:nr], -1.0, 0.0)
        if side[nr]:
            u += 1.0
        if self._arows is None:
            self._arows = self.problem.relations[self.rows]
        res.dual_cells, res.dual_d = reduced_costs(self._arows, u * self.signs[self.rows], target, direction)

    def certify(self, known: Attack, also_fixed: tuple[int, ...] = ()) -> Attack:
        """As :meth:`BlockLP.certify <tablesafe.suppress.attacker.BlockLP.certify>`: the
        cheapest table of an attack known to pass."""
        att = self.attack(known.target, known.direction, known.required, known.insider, want_dual=False,
                          sparse=True, also_fixed=also_fixed, expect_pass=True)
        if not att.ok or not len(att.cells):
            return known
        return Attack(known.target, known.direction, known.insider, known.reached, known.required,
                      cells=att.cells, dev=att.dev)
