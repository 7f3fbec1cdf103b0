"""Operational criterion 2: the most sensitive aggregation (seed 001 sections 4-6).

An aggregation is a linear combination ``sum_k mu_k (sum_i a_ik x_i) = sum_k mu_k b_k`` of
the explicit aggregations ``A_W x_W = b`` (the relations restricted to withheld cells,
with the published cells moved to the right-hand side). With the (p,q) prior/posterior
rule extended to aggregations (seed 001 section 5, (5.4)) the table is safe if and only
if the mixed-integer programme (6.6)-(6.20) has a negative optimum (Theorem 3):

    max (p+q) A1 + q A2 - q T
    T = sum_{i,r} (xi+_ir + xi-_ir),   xi+_ir >= l_ir, xi-_ir >= -l_ir,
    l_ir = x_i^r sum_k mu_k a_ik  (contribution of r to cell i in the aggregation),
    A1 <= sum_i alpha_ir + M (1 - u_r),  A2 <= sum_i alpha_ir + M (1 - v_r),
    alpha_ir <= l_ir + M (1 - beta_ir),  alpha_ir <= -l_ir + M beta_ir,
    sum u = 1, sum v = 1, u_r + v_r <= 1, -1 <= mu_k <= 1, u, v, beta binary.

The model as printed admits the trivial aggregation (``mu = 0``, or any ``mu`` whose
``lambda = A^T mu`` vanishes because relations are dependent) with objective 0, so a
negative optimum (Theorem 3) could never occur. We add ``T >= tau`` with ``tau`` the
smallest ``T`` of a single explicit aggregation (``mu = e_k``); that excludes only the
trivial aggregations (the objective is homogeneous in ``mu``), and the box
``-1 <= mu <= 1`` still contains every solution of the original model with ``T >= tau``.

Units may be holdings (a unit contributing to several cells) and contributions may be
negative. The model can be reduced to chosen attackers and attacked units (the
``u``/``v`` variables and constraints (6.10)-(6.13) only for them).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
import scipy.sparse as sp

from tablesafe.audit import lp as _lp
from tablesafe.audit.intervals import as_mask
from tablesafe.errors import InfeasibleError, InputError
from tablesafe.problem import Problem


@dataclass
class AggregationResult:
    """The most sensitive aggregation found by the MIP.

    Attributes:
        objective: optimum of (6.6); the table is safe under criterion 2 iff negative.
        mu: coefficients of the explicit aggregations.
        coefficients: coefficient ``lambda_i`` per withheld cell (index into ``cells``).
        cells: the withheld cells (indices into the problem, or positions 0..Ns-1).
        value: the aggregation's published value ``sum_k mu_k b_k``.
        attacker, attacked: unit labels.
        attacker_share, attacked_share: their absolute contributions ``A2``, ``A1``.
        total: ``T``, the sum of absolute contributions.
        status: HiGHS model status.
    """

    objective: float
    mu: np.ndarray
    coefficients: np.ndarray
    cells: np.ndarray
    value: float
    attacker: object
    attacked: object
    attacker_share: float
    attacked_share: float
    total: float
    status: str

    @property
    def safe(self) -> bool:
        """Criterion 2 holds (Theorem 3 of seed 001: optimum negative)."""
        return self.objective < 0

    def describe(self, names=None, digits: int = 6) -> str:
        """The aggregation as text, e.g. ``-2 x2 + 2 x3 = -680``."""
        terms = []
        for i, c in enumerate(self.coefficients):
            c = round(float(c), digits)
            if c == 0:
                continue
            label = names[i] if names is not None else f"x{i + 1}"
            terms.append(f"{'-' if c < 0 else '+'} {abs(c):g} {label}")
        s = " ".join(terms).lstrip("+ ").strip()
        return f"{s} = {round(self.value, digits):g}"


def explicit_aggregations(problem: Problem, withheld) -> tuple[sp.csr_matrix, np.ndarray, np.ndarray]:
    """The relations restricted to withheld cells: ``(A_W (K x Ns), b, cells)``.

    Only relations with at least one withheld cell are kept; ``b = rhs - A_P v_P``.
    """
    mask = as_mask(problem, withheld)
    cells = np.flatnonzero(mask)
    a = problem.relations
    aw = sp.csr_matrix(a[:, cells])
    b = problem.rhs - a[:, ~mask] @ problem.value[~mask]
    keep = np.flatnonzero(np.diff(aw.indptr) > 0)
    return sp.csr_matrix(aw[keep]), np.asarray(b[keep], dtype=float), cells


def most_sensitive_aggregation(
    a,
    b,
    contributions: pd.DataFrame,
    *,
    p: float,
    q: float = 100.0,
    cells=None,
    attackers=None,
    attacked=None,
    time_limit: float | None = None,
) -> AggregationResult:
    """Solve the MIP of seed 001 section 6 for the most sensitive aggregation.

    Args:
        a: explicit aggregations, (K x Ns) matrix (``a_ik``).
        b: their right-hand sides (``b_k``).
        contributions: frame with ``cell`` (position 0..Ns-1, or a problem index listed
            in ``cells``), ``unit`` and ``value`` (``x_i^r``; holdings summed, may be
            negative).
        p, q: rule parameters; the p% rule is ``q = 100`` (seed 001 section 5).
        cells: problem indices of the Ns columns of ``a`` (to map ``contributions``).
        attackers, attacked: optional unit lists restricting who may attack / be
            attacked (the reduced model of section 6).
        time_limit: seconds for HiGHS.
    """
    a = sp.csr_matrix(a, dtype=float)
    b = np.asarray(b, dtype=float)
    kk, ns = a.shape
    if len(b) != kk:
        raise InputError("b must have one entry per explicit aggregation")
    cf = contributions[["cell", "unit", "value"]].copy()
    if cells is not None:
        pos = pd.Series(np.arange(len(cells)), index=np.asarray(cells))
        cf["cell"] = pos.reindex(cf["cell"].to_numpy()).to_numpy()
        cf = cf[~cf["cell"].isna()]
    cf["cell"] = cf["cell"].astype(int)
    cf = cf.groupby(["cell", "unit"], as_index=False, sort=True)["value"].sum()
    cf = cf[cf["value"] != 0].reset_index(drop=True)
    if cf.empty:
        raise InputError("no non-zero contributions to the withheld cells")
    units = pd.Index(pd.unique(cf["unit"]))
    ur = units.get_indexer(cf["unit"])
    ic = cf["cell"].to_numpy()
    xv = cf["value"].to_numpy()
    npair = len(cf)
    nunit = len(units)
    att_set = units if attackers is None else units.intersection(pd.Index(attackers))
    atk_set = units if attacked is None else units.intersection(pd.Index(attacked))
    if len(att_set) == 0 or len(atk_set) == 0:
        raise InputError("attackers/attacked name no unit with contributions")
    att_idx = units.get_indexer(att_set)
    atk_idx = units.get_indexer(atk_set)
    # |l_ir| <= |x_i^r| * sum_k |a_ik| since |mu_k| <= 1.
    colabs = np.asarray(abs(a).sum(axis=0)).ravel()
    bound = np.abs(xv) * colabs[ic]
    per_unit = np.bincount(ur, weights=bound, minlength=nunit)
    amax = float(per_unit.max()) if nunit else 0.0
    big_alpha = 2.0 * bound + 1.0
    big_a = amax + 1.0

    # Variable layout.
    o_mu = 0
    o_xp = o_mu + kk
    o_xm = o_xp + npair
    o_al = o_xm + npair
    o_be = o_al + npair
    o_u = o_be + npair
    o_v = o_u + len(atk_idx)
    o_a1 = o_v + len(att_idx)
    o_a2 = o_a1 + 1
    o_t = o_a2 + 1
    nvar = o_t + 1

    lo = np.zeros(nvar)
    hi = np.full(nvar, np.inf)
    lo[o_mu:o_mu + kk] = -1.0
    hi[o_mu:o_mu + kk] = 1.0
    hi[o_al:o_al + npair] = bound
    hi[o_be:o_be + npair] = 1.0
    hi[o_u:o_v] = 1.0
    hi[o_v:o_a1] = 1.0
    hi[o_a1] = amax
    hi[o_a2] = amax
    integ = np.zeros(nvar, dtype=bool)
    integ[o_be:o_be + npair] = True
    integ[o_u:o_a1] = True
    cost = np.zeros(nvar)
    cost[o_a1] = p + q
    cost[o_a2] = q
    cost[o_t] = -q

    # l_ir as a row over mu: x_i^r * a[:, i]  (coefficients of mu_k).
    a_csc = sp.csc_matrix(a)
    l_rows = sp.csr_matrix(a_csc[:, ic].T.multiply(xv[:, None]))  # npair x K
    rows: list[sp.csr_matrix] = []
    rlo: list[np.ndarray] = []
    rhi: list[np.ndarray] = []

    def block(parts: dict[int, sp.spmatrix], nrow: int) -> sp.csr_matrix:
        cols = []
        for start, width in ((o_mu, kk), (o_xp, npair), (o_xm, npair), (o_al, npair),
                             (o_be, npair), (o_u, len(atk_idx)), (o_v, len(att_idx)),
                             (o_a1, 1), (o_a2, 1), (o_t, 1)):
            cols.append(parts.get(start, sp.csr_matrix((nrow, width))))
        return sp.csr_matrix(sp.hstack(cols))

    eye = sp.identity(npair, format="csr")
    ones_t = sp.csr_matrix(np.ones((1, npair)))
    # (6.7) T - sum xi+ - sum xi- = 0
    rows.append(block({o_xp: -ones_t, o_xm: -ones_t, o_t: sp.csr_matrix([[1.0]])}, 1))
    rlo.append(np.zeros(1)); rhi.append(np.zeros(1))
    # (6.8) xi+ - l >= 0 ; (6.9) xi- + l >= 0
    rows.append(block({o_mu: -l_rows, o_xp: eye}, npair))
    rlo.append(np.zeros(npair)); rhi.append(np.full(npair, np.inf))
    rows.append(block({o_mu: l_rows, o_xm: eye}, npair))
    rlo.append(np.zeros(npair)); rhi.append(np.full(npair, np.inf))
    # (6.12) alpha - l + M beta <= M ; (6.13) alpha + l - M beta <= 0
    mb = sp.diags(big_alpha, format="csr")
    rows.append(block({o_mu: -l_rows, o_al: eye, o_be: mb}, npair))
    rlo.append(np.full(npair, -np.inf)); rhi.append(big_alpha)
    rows.append(block({o_mu: l_rows, o_al: eye, o_be: -mb}, npair))
    rlo.append(np.full(npair, -np.inf)); rhi.append(np.zeros(npair))
    # (6.10)/(6.11): A - sum_i alpha_ir + M u_r <= M
    member = sp.csr_matrix((np.ones(npair), (ur, np.arange(npair))), shape=(nunit, npair))
    for idx, o_sel, o_a in ((atk_idx, o_u, o_a1), (att_idx, o_v, o_a2)):
        nsel = len(idx)
        rows.append(block({
            o_al: -member[idx],
            o_sel: sp.identity(nsel, format="csr") * big_a,
            o_a: sp.csr_matrix(np.ones((nsel, 1))),
        }, nsel))
        rlo.append(np.full(nsel, -np.inf)); rhi.append(np.full(nsel, big_a))
    # (6.14), (6.15)
    rows.append(block({o_u: sp.csr_matrix(np.ones((1, len(atk_idx))))}, 1))
    rlo.append(np.ones(1)); rhi.append(np.ones(1))
    rows.append(block({o_v: sp.csr_matrix(np.ones((1, len(att_idx))))}, 1))
    rlo.append(np.ones(1)); rhi.append(np.ones(1))
    # (6.16) u_r + v_r <= 1 for units in both sets
    both = np.intersect1d(atk_idx, att_idx)
    if both.size:
        pu = pd.Index(atk_idx).get_indexer(both)
        pv = pd.Index(att_idx).get_indexer(both)
        nb = both.size
        su = sp.csr_matrix((np.ones(nb), (np.arange(nb), pu)), shape=(nb, len(atk_idx)))
        sv = sp.csr_matrix((np.ones(nb), (np.arange(nb), pv)), shape=(nb, len(att_idx)))
        rows.append(block({o_u: su, o_v: sv}, nb))
        rlo.append(np.full(nb, -np.inf)); rhi.append(np.ones(nb))
    # T >= tau: excludes the trivial aggregations (see the module docstring).
    per_row = np.asarray(abs(a) @ np.bincount(ic, weights=np.abs(xv), minlength=ns)).ravel()
    per_row = per_row[per_row > 0]
    tau = float(per_row.min()) if per_row.size else 1.0
    lo[o_t] = tau
    # Optional A1 >= A2 (valid when anyone may be attacker and attacked).
    if attackers is None and attacked is None:
        rows.append(block({o_a1: sp.csr_matrix([[1.0]]), o_a2: sp.csr_matrix([[-1.0]])}, 1))
        rlo.append(np.zeros(1)); rhi.append(np.full(1, np.inf))

    mat = sp.vstack(rows).tocsr()
    h = _lp.new_highs()
    h.setOptionValue("mip_rel_gap", 0.0)
    if time_limit is not None:
        h.setOptionValue("time_limit", float(time_limit))
    _lp.pass_lp(h, cost, lo, hi, mat, np.concatenate(rlo), np.concatenate(rhi),
                integrality=integ, maximize=True)
    h.run()
    st = _lp.status(h)
    if st not in ("optimal",):
        if st == "infeasible":
            raise InfeasibleError("the aggregation MIP is infeasible (fewer than two units?)")
        if h.getInfo().primal_solution_status < 2:
            raise InfeasibleError(f"the aggregation MIP stopped without a solution ({st})")
    x = _lp.col_values(h)
    mu = x[o_mu:o_mu + kk]
    lam = np.asarray(a.T @ mu).ravel()
    u = x[o_u:o_v]
    v = x[o_v:o_a1]
    # Recompute shares exactly from the aggregation (robust to MIP tolerances).
    lvals = xv * lam[ic]
    share = np.bincount(ur, weights=np.abs(lvals), minlength=nunit)
    atk_u = atk_idx[int(np.argmax(u))]
    att_u = att_idx[int(np.argmax(v))]
    return AggregationResult(
        objective=float(h.getInfo().objective_function_value),
        mu=mu, coefficients=lam,
        cells=np.asarray(cells) if cells is not None else np.arange(ns),
        value=float(mu @ b), attacker=units[att_u], attacked=units[atk_u],
        attacker_share=float(share[att_u]), attacked_share=float(share[atk_u]),
        total=float(share.sum()), status=st,
    )


def criterion2(problem: Problem, withheld, contributions: pd.DataFrame, *, p: float,
               q: float = 100.0, **kw) -> AggregationResult:
    """Convenience: :func:`most_sensitive_aggregation` for a problem and pattern.

    ``contributions`` has ``cell`` as problem index or cell name; only withheld cells
    are used.
    """
    from tablesafe.audit.insider import contribution_frame

    aw, b, cells = explicit_aggregations(problem, withheld)
    cf = contribution_frame(problem, contributions)
    return most_sensitive_aggregation(aw, b, cf, p=p, q=q, cells=cells, **kw)
