"""The compact (one-model) form of optimal suppression, for small tables such as HiTaS subtables.

Fischetti and Salazar's model (seed 002 "Secondary tabular data protection methods") asks,
for every attack (sensitive cell ``k``, direction, optional insider ``s``), for a table the
attacker cannot exclude that moves ``k`` by its protection level. Cut generation
(:mod:`tablesafe.suppress.optimal`) adds the attacks' dual inequalities one round at a
time. On a table of a few hundred cells it is quicker to write every attack's deviations
into one mixed-integer program and let the solver do the rest:

    min  sum_j c_j y_j
    s.t. for every attack a:   A z^a = 0,   direction_a * z^a_k >= level_a,
                               -L_i y_i <= z^a_i <= U_i y_i   (candidate complements i),
                               -L_i <= z^a_i <= U_i           (cells withheld anyway),
                               z^a_s = 0                      (the insider's own cell),
         y binary.

``U`` and ``L`` are the attacker's deviation bounds (:class:`~tablesafe.suppress.attacker.Bounds`),
capped at the attack's level: on a two-way table every certificate can be decomposed into
cycles through the target, so no cell needs to move further than the target itself, and on
other tables the cap only restricts the attacker, which keeps every pattern found safe.
Each attack's ``z^a`` is a certificate of the pattern.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import highspy
import numpy as np
import scipy.sparse as sp

from tablesafe.audit.lp import new_highs, pass_lp
from tablesafe.problem import Problem
from tablesafe.suppress.attacker import DOWN, UP, Bounds

MIP_OPTIONS: dict[str, bool] = {
    # measured on 39 subtables of a 13,000-cell two-way table (72 cells, 25 targets each):
    # 11.3 s with HiGHS's defaults, 8.0 s without these, the same patterns
    "mip_detect_symmetry": False,
    "mip_allow_restart": False,
    "mip_heuristic_run_feasibility_jump": False,
}

Attack3 = tuple[int, int, int]  # target, direction, insider (-1: outsider)


@dataclass(frozen=True)
class CompactResult:
    """Outcome of :func:`compact_pattern`.

    Attributes:
        withheld: the pattern (sensitive cells included), or None when no safe pattern
            was found (infeasible within the cap, or out of time before the first one).
        optimal: the solver proved the pattern optimal within ``mip_gap``.
        cost: cost of the complements.
        bound: the solver's lower bound on the cost.
        seconds: time spent.
        need_up, need_down: per cell, the largest upward and downward move any attack's
            certificate makes it (0 where none moves it): what a complement must be able
            to give when it is protected in another subtable (seed 000 section 6 asks
            for these amounts and notes that cut generation does not know them).
    """

    withheld: np.ndarray | None
    optimal: bool
    cost: float
    bound: float
    seconds: float
    need_up: np.ndarray | None = None
    need_down: np.ndarray | None = None
    moves: np.ndarray | None = None
    movable: np.ndarray | None = None

    def moved(self, attack: int, cells: np.ndarray, tol: float = 1e-7) -> np.ndarray:
        """Which of ``cells`` the certificate of the ``attack``-th attack moves."""
        assert self.moves is not None and self.movable is not None
        pos = np.searchsorted(self.movable, cells)
        pos = np.minimum(pos, len(self.movable) - 1)
        inside = self.movable[pos] == cells
        dev = np.where(inside, self.moves[attack, pos], 0.0)
        return np.abs(dev) > tol * max(1.0, float(np.abs(self.moves[attack]).max()))


def attacks_of(bounds: Bounds, sensitive: np.ndarray, insiders: dict[int, np.ndarray] | None = None
               ) -> list[Attack3]:
    """Every (target, direction, insider) whose level is positive.

    ``insiders`` maps a target to the cells whose single respondent attacks it.
    """
    out: list[Attack3] = []
    for k in np.flatnonzero(sensitive).tolist():
        who = [-1] + ([int(s) for s in insiders.get(k, ())] if insiders else [])
        for s in who:
            if bounds.req_up[k] > 0:
                out.append((k, UP, s))
            if bounds.req_dn[k] > 0:
                out.append((k, DOWN, s))
    return out


def model_size(problem: Problem, bounds: Bounds, attacks: list[Attack3]) -> int:
    """Nonzeros of the compact model (to decide whether it is worth building)."""
    nnz = problem.relations.nnz
    return len(attacks) * (nnz + 2 * problem.n)


def compact_pattern(
    problem: Problem,
    bounds: Bounds,
    candidates: np.ndarray,
    attacks: list[Attack3],
    *,
    time_limit: float = 10.0,
    mip_gap: float = 1e-4,
    seed: int = 0,
    row_cuts: bool = True,
) -> CompactResult:
    """Minimum-cost pattern protecting ``attacks`` on a small table, in one MIP.

    Args:
        problem: the (sub)table: relations, costs, sensitive cells.
        bounds: the attacker's deviation bounds and the required levels.
        candidates: cells that may be withheld as complements (the others are either
            sensitive, hence withheld, or must stay published).
        attacks: (target, direction, insider) triples to protect against.
        time_limit: seconds for the solver.
        mip_gap: relative optimality gap at which the solver stops.
        seed: the solver's random seed (results are deterministic for a seed).
        row_cuts: add :func:`_add_row_cuts`'s inequalities (same optimum, less search).
    """
    t0 = time.monotonic()
    n = problem.n
    sens = problem.sensitive
    fixed = sens
    movable = fixed | candidates
    mov = np.flatnonzero(movable)
    nm = len(mov)
    loc = np.full(n, -1, dtype=np.int64)
    loc[mov] = np.arange(nm)
    cand_idx = np.flatnonzero(candidates)
    ny = len(cand_idx)
    cost = np.abs(np.asarray(problem.cost, dtype=float))
    if not attacks:
        # (no moves asked of any cell: zeros, which a subtable with no attack records)
        return CompactResult(sens.copy(), True, 0.0, 0.0, time.monotonic() - t0, np.zeros(n), np.zeros(n))
    a = problem.relations.tocsc()[:, mov]
    keep_rows = np.flatnonzero(np.diff(a.tocsr().indptr) > 0)
    a = a.tocsr()[keep_rows]
    m = a.shape[0]
    na = len(attacks)

    lo = np.empty(na * nm)
    hi = np.empty(na * nm)
    link_rows, link_zcol, link_ycol, link_coef = [], [], [], []
    cand_pos = loc[cand_idx]  # position of each candidate among the movable cells
    for t, (k, d, s) in enumerate(attacks):
        req = float(bounds.req_up[k] if d == UP else bounds.req_dn[k])
        up = np.minimum(bounds.up[mov], req)
        dn = np.minimum(bounds.dn[mov], req)
        jk = loc[k]
        up[jk] = min(float(bounds.tup[k]), max(req, 0.0))
        dn[jk] = min(float(bounds.tdn[k]), max(req, 0.0))
        if d == UP:
            lo_k, hi_k = req, up[jk]
        else:
            lo_k, hi_k = -dn[jk], -req
        base = t * nm
        lo[base:base + nm] = -dn
        hi[base:base + nm] = up
        lo[base + jk], hi[base + jk] = lo_k, hi_k
        if s >= 0 and loc[s] >= 0:
            lo[base + loc[s]] = hi[base + loc[s]] = 0.0
        # linking: z - U y <= 0 and -z - L y <= 0 for candidates that can move
        for sign, cap in ((1.0, up[cand_pos]), (-1.0, dn[cand_pos])):
            use = cap > 0
            link_zcol.append(base + cand_pos[use])
            link_ycol.append(na * nm + np.flatnonzero(use))
            link_coef.append((np.full(int(use.sum()), sign), -cap[use]))
            link_rows.append(int(use.sum()))
    if np.any(lo > hi + 1e-9):
        return CompactResult(None, False, float("inf"), float("inf"), time.monotonic() - t0)

    # equality rows: one copy of A per attack
    eq = sp.kron(sp.identity(na, format="csr"), a, format="csr")
    nl = int(sum(link_rows))
    rows = np.repeat(np.arange(nl), 2)
    zc = np.concatenate(link_zcol) if nl else np.zeros(0, dtype=np.int64)
    yc = np.concatenate(link_ycol) if nl else np.zeros(0, dtype=np.int64)
    zs = np.concatenate([c[0] for c in link_coef]) if nl else np.zeros(0)
    ys = np.concatenate([c[1] for c in link_coef]) if nl else np.zeros(0)
    cols = np.column_stack([zc, yc]).ravel()
    vals = np.column_stack([zs, ys]).ravel()
    link = sp.csr_matrix((vals, (rows, cols)), shape=(nl, na * nm + ny))
    eq = sp.hstack([eq, sp.csr_matrix((na * m, ny))], format="csr")
    full = sp.vstack([eq, link], format="csc")

    h = new_highs()
    h.setOptionValue("random_seed", int(seed))
    h.setOptionValue("mip_rel_gap", float(mip_gap))
    h.setOptionValue("time_limit", max(float(time_limit), 0.05))
    for key, val in MIP_OPTIONS.items():
        h.setOptionValue(key, val)
    pass_lp(h, np.concatenate([np.zeros(na * nm), cost[cand_idx]]),
            np.concatenate([lo, np.zeros(ny)]), np.concatenate([hi, np.ones(ny)]), full,
            np.concatenate([np.zeros(na * m), np.full(nl, -np.inf)]), np.zeros(na * m + nl),
            integrality=np.arange(na * nm + ny) >= na * nm)
    if row_cuts:
        _add_row_cuts(h, problem, bounds, attacks, candidates, cand_idx, na * nm)
    h.run()
    status = h.getModelStatus()
    info = h.getInfo()
    has_sol = info.primal_solution_status == 2  # feasible
    if not has_sol:
        return CompactResult(None, False, float("inf"), float("inf"), time.monotonic() - t0)
    x = np.asarray(h.getSolution().col_value)
    y = x[na * nm:] > 0.5
    w = sens.copy()
    w[cand_idx[y]] = True
    optimal = status == highspy.HighsModelStatus.kOptimal
    c = float(cost[cand_idx[y]].sum())
    bound = float(info.mip_dual_bound) if np.isfinite(info.mip_dual_bound) else 0.0
    z = x[: na * nm].reshape(na, nm)
    need_up = np.zeros(n)
    need_dn = np.zeros(n)
    need_up[mov] = np.maximum(z.max(axis=0), 0.0)
    need_dn[mov] = np.maximum(-z.min(axis=0), 0.0)
    return CompactResult(w, optimal, c, bound, time.monotonic() - t0, need_up, need_dn, z, mov)


def _add_row_cuts(h: highspy.Highs, problem: Problem, bounds: Bounds, attacks: list[Attack3],
                  candidates: np.ndarray, cand_idx: np.ndarray, y0: int) -> None:
    """At least one more withheld cell in every relation through a target.

    An attack moves its target by its level, so every relation through the target must
    move another of its cells. When no other withheld cell of that relation can move (the
    insider's own cell is fixed), one of its candidates must be withheld: ``sum y >= 1``,
    the integer rounding of what the relaxation asks (capacities adding up to the level,
    which fractional ``y`` meet cheaply).
    """
    rel = problem.relations.tocsc()
    csr = problem.relations.tocsr()
    ypos = np.full(problem.n, -1, dtype=np.int64)
    ypos[cand_idx] = np.arange(len(cand_idx))
    moves = (bounds.up > 0) | (bounds.dn > 0)
    fixed = problem.sensitive & moves
    can = candidates & moves
    seen: set[tuple[int, int]] = set()
    starts, index = [0], []
    for k, _d, s in attacks:
        for r in rel.indices[rel.indptr[k]:rel.indptr[k + 1]].tolist():
            if (r, s) in seen:
                continue
            seen.add((r, s))
            cells = csr.indices[csr.indptr[r]:csr.indptr[r + 1]]
            cells = cells[(cells != k) & (cells != s)]
            if fixed[cells].any():
                continue
            ys = ypos[cells[can[cells]]]
            if ys.size:
                index.append(y0 + ys)
                starts.append(starts[-1] + ys.size)
    if not index:
        return
    idx = np.concatenate(index).astype(np.int32)
    nrow = len(index)
    h.addRows(nrow, np.ones(nrow), np.full(nrow, highspy.kHighsInf),
              idx.size, np.array(starts[:-1], dtype=np.int32), idx, np.ones(idx.size))
