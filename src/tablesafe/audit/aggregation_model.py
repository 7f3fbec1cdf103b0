"""The mixed-integer programme of one part of the explicit aggregations (seed 001 section
6), in a compact form: a unit's contribution to an aggregation is its contribution to
each element (leaf cell) times the element's coefficient, so absolute values are needed
per element, not per (cell, unit) pair, and ``T = 1`` fixes the scale (the objective is
homogeneous). See :mod:`tablesafe.audit.aggregation`."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from tablesafe.audit import lp as _lp


def candidates(x: sp.csr_matrix) -> np.ndarray:
    """Units that may be one of the two largest shares of some aggregation: of units whose
    absolute contributions are multiples of one another (the same cells in the same
    proportions, such as enterprises of one cell and its totals), the two largest; every
    other unit. A unit whose contributions are at most another's in every cell never has
    a larger share, so two such others make it irrelevant to (6.6)."""
    x = abs(sp.csr_matrix(x))
    x.sort_indices()
    peak = np.asarray(x.max(axis=1).todense()).ravel()
    keys: dict[tuple, list[int]] = {}
    for r in np.flatnonzero(peak > 0).tolist():
        lo, hi = x.indptr[r], x.indptr[r + 1]
        key = (x.indices[lo:hi].tobytes(), np.round(x.data[lo:hi] / peak[r], 9).tobytes())
        keys.setdefault(key, []).append(r)
    keep = []
    for members in keys.values():
        ranked = sorted(members, key=lambda r: (-peak[r], r))
        keep.extend(ranked[:2])
    return np.sort(np.asarray(keep, dtype=np.int64))


def largest_share(x: sp.csr_matrix) -> np.ndarray:
    """Per unit (row of the non-negative units x elements matrix): its largest share of an
    element's total."""
    total = np.asarray(x.sum(axis=0)).ravel()
    return sp.csr_matrix(x @ sp.diags(1.0 / np.maximum(total, 1e-300))).max(axis=1).toarray().ravel()


def _top(x: sp.csr_matrix, k: int) -> np.ndarray:
    """Per column: the sum of the ``k`` largest entries of the (non-negative) matrix."""
    c = sp.csc_matrix(x)
    out = np.zeros(c.shape[1])
    for j in range(c.shape[1]):
        d = c.data[c.indptr[j]:c.indptr[j + 1]]
        if d.size:
            out[j] = np.sort(d)[-k:].sum()
    return out


class _Layout:
    """Where each group of variables lies in the MIP's columns: ``mu`` (one per explicit
    aggregation), ``t`` (|lambda_i|), ``al`` (alpha_i, at most |lambda_i|) and ``be`` (its
    sign, binary) per withheld cell with contributions, ``u``/``v`` (attacked /
    attacking unit, binary), then the scalars ``a1`` and ``a2``."""

    def __init__(self, kk: int, nl: int, nu: int, nv: int) -> None:
        self.widths: dict[str, int] = {"mu": kk, "t": nl, "al": nl, "be": nl, "u": nu, "v": nv, "a1": 1, "a2": 1}
        ends = np.cumsum(list(self.widths.values()))
        self.start: dict[str, int] = {g: int(e) - w for (g, w), e in zip(self.widths.items(), ends, strict=True)}
        self.nvar = int(ends[-1])

    def span(self, group: str) -> slice:
        """The columns of one group."""
        return slice(self.start[group], self.start[group] + self.widths[group])

    def block(self, parts: dict[str, sp.spmatrix], nrow: int) -> sp.csr_matrix:
        """Rows with the given blocks (by group) and zeros elsewhere."""
        cols = [parts.get(g, sp.csr_matrix((nrow, w))) for g, w in self.widths.items()]
        return sp.csr_matrix(sp.hstack(cols))


DECIDE_SLACK = 1e-7
"""In a yes/no question (``decide``), aggregations within this share of their ``T`` of being
sensitive count as sensitive, so a proof of safety keeps that margin."""


@dataclass(frozen=True)
class PartModel:
    """One part's MIP inputs: explicit aggregations ``a`` (K x cells), the absolute
    contributions ``x`` (units x cells, scaled), the attacked and attacking units (rows of
    ``x``; ``phantom``: one more attacker with no share, any unit outside the part)."""

    a: sp.csr_matrix
    x: sp.csr_matrix
    attacked: np.ndarray
    attackers: np.ndarray
    phantom: bool
    ordered: bool = True


def solve_part(m: PartModel, p: float, q: float, time_limit: float | None,
                box: bool = False, decide: bool = False) -> tuple[str, np.ndarray | None]:
    """Solve one part; returns the status and mu (or None when no aggregation has
    contributions: status ``safe``). ``box``: seed 001's scale (``-1 <= mu <= 1``,
    ``T >= tau``, the objective in value units) instead of ``T = 1``. ``decide`` (with
    ``T = 1``): only whether some aggregation is sensitive; the model then asks for
    ``(p+q) A1 + q A2 >= q`` and stops at the first such aggregation (status ``safe``
    when there is none, which the solver proves)."""
    kk = m.a.shape[0]
    total = np.asarray(m.x.sum(axis=0)).ravel()  # X_i, all units
    live = np.flatnonzero(total > 0)
    nl = live.size
    atk_x = m.x[m.attacked][:, live]
    att_x = m.x[m.attackers][:, live]
    nu, nv = len(m.attacked), len(m.attackers) + int(m.phantom)
    if nl == 0 or nu == 0 or nv == 0:
        return "safe", None
    lay = _Layout(kk, nl, nu, nv)
    lam = sp.csr_matrix(m.a[:, live].T)  # lambda_live = lam @ mu
    lo = np.zeros(lay.nvar)
    hi = np.full(lay.nvar, np.inf)
    cost = np.zeros(lay.nvar)
    if box:  # |lambda_i| <= sum_k |a_ik|; T >= the smallest T of one explicit aggregation
        reach = np.asarray(abs(m.a[:, live]).sum(axis=0)).ravel()
        lo[lay.span("mu")], hi[lay.span("mu")] = -1.0, 1.0
        share_top = float(max((abs(atk_x) @ reach).max(), (abs(att_x) @ reach).max(initial=0.0)))
        per_row = np.asarray(abs(m.a[:, live]) @ total[live]).ravel()
        t_lo, t_hi = float(per_row[per_row > 0].min()), np.inf
        cost[lay.span("t")] = -q * total[live]
    else:  # T = 1: every share at most 1, |lambda_i| at most 1 / X_i
        reach = 1.0 / total[live]
        lo[lay.span("mu")] = -np.inf
        share_top, t_lo, t_hi = 1.0, 1.0, 1.0
    big = 2.0 * reach
    hi[lay.span("al")] = reach
    integ = np.zeros(lay.nvar, dtype=bool)
    for binary in ("be", "u", "v"):
        hi[lay.span(binary)] = 1.0
        integ[lay.span(binary)] = True
    hi[lay.start["a1"]] = hi[lay.start["a2"]] = share_top
    cost[lay.start["a1"]], cost[lay.start["a2"]] = p + q, q
    eye = sp.identity(nl, format="csr")
    mb = sp.diags(big, format="csr")
    one = sp.csr_matrix([[1.0]])
    inf_l, inf_h = np.full(nl, -np.inf), np.full(nl, np.inf)
    blocks = [
        (lay.block({"mu": -lam, "t": eye}, nl), np.zeros(nl), inf_h),                # t >= lambda
        (lay.block({"mu": lam, "t": eye}, nl), np.zeros(nl), inf_h),                 # t >= -lambda
        (lay.block({"t": sp.csr_matrix(total[live][None, :])}, 1), np.full(1, t_lo), np.full(1, t_hi)),  # T
        (lay.block({"mu": -lam, "al": eye, "be": mb}, nl), inf_l, big),              # al <= lambda + M(1-be)
        (lay.block({"mu": lam, "al": eye, "be": -mb}, nl), inf_l, np.zeros(nl)),     # al <= -lambda + M be
        (lay.block({"al": -atk_x, "u": sp.identity(nu, format="csr") * share_top,
                    "a1": sp.csr_matrix(np.ones((nu, 1)))}, nu),
         np.full(nu, -np.inf), np.full(nu, share_top)),                               # A1 <= share_r + M(1-u_r)
        (lay.block({"al": -sp.vstack([att_x, sp.csr_matrix((int(m.phantom), nl))]),
                    "v": sp.identity(nv, format="csr") * share_top, "a2": sp.csr_matrix(np.ones((nv, 1)))}, nv),
         np.full(nv, -np.inf), np.full(nv, share_top)),                               # A2 <= share_r + M(1-v_r)
        (lay.block({"u": sp.csr_matrix(np.ones((1, nu)))}, 1), np.ones(1), np.ones(1)),
        (lay.block({"v": sp.csr_matrix(np.ones((1, nv)))}, 1), np.ones(1), np.ones(1)),
        (lay.block({"t": eye, "al": -eye}, nl), np.zeros(nl), inf_h),                # al <= t (valid)
        # valid: a unit's share is at most the largest contribution of each element times
        # its coefficient, two units' shares at most the two largest (a strong LP bound)
        (lay.block({"a1": one, "al": -sp.csr_matrix(_top(atk_x, 1)[None, :])}, 1), np.full(1, -np.inf), np.zeros(1)),
        (lay.block({"a1": one, "a2": one, "al": -sp.csr_matrix(_top(m.x[:, live], 2)[None, :])}, 1),
         np.full(1, -np.inf), np.zeros(1)),
    ]
    if m.ordered:  # anyone may attack and be attacked: A1 >= A2
        blocks.append((lay.block({"a1": one, "a2": -one}, 1), np.zeros(1), np.full(1, np.inf)))
    both, iu, iv = np.intersect1d(m.attacked, m.attackers, return_indices=True)
    if both.size:  # u_r + v_r <= 1
        nb2 = both.size
        blocks.append((lay.block({
            "u": sp.csr_matrix((np.ones(nb2), (np.arange(nb2), iu)), shape=(nb2, nu)),
            "v": sp.csr_matrix((np.ones(nb2), (np.arange(nb2), iv)), shape=(nb2, nv))}, nb2),
            np.full(nb2, -np.inf), np.ones(nb2)))
    if decide and not box:  # sensitive: (p+q) A1 + q A2 - q T >= 0 with T = 1
        blocks.append((lay.block({"a1": one * (p + q), "a2": one * q}, 1), np.full(1, q * (1.0 - DECIDE_SLACK)),
                       np.full(1, np.inf)))
    mat = sp.vstack([b[0] for b in blocks]).tocsr()
    h = _lp.new_highs()
    h.setOptionValue("mip_rel_gap", 0.0)
    h.setOptionValue("mip_abs_gap", 1e-7)
    if decide:
        h.setOptionValue("mip_max_improving_sols", 1)
    if time_limit is not None:
        h.setOptionValue("time_limit", max(float(time_limit), 0.01))
    _lp.pass_lp(h, cost, lo, hi, mat, np.concatenate([b[1] for b in blocks]),
                np.concatenate([b[2] for b in blocks]), integrality=integ, maximize=True)
    h.run()
    st = _lp.status(h)
    if st == "infeasible":
        return "safe", None  # no aggregation with contributions (lambda vanishes on them)
    if st != "optimal" and h.getInfo().primal_solution_status < 2:
        return st, None
    mu = _lp.col_values(h)[lay.span("mu")]
    return st, mu
