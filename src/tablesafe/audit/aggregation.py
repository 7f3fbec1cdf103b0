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
from typing import Any

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
    keep = explicit_rows(problem, mask)
    return sp.csr_matrix(aw[keep]), np.asarray(b[keep], dtype=float), cells


def explicit_rows(problem: Problem, withheld) -> np.ndarray:
    """The relations behind the explicit aggregations, in their order: those with at least
    one withheld cell (an aggregation's ``mu_k`` belongs to the ``k``-th of them)."""
    aw = sp.csr_matrix(problem.relations[:, np.flatnonzero(as_mask(problem, withheld))])
    return np.flatnonzero(np.diff(aw.indptr) > 0)


@dataclass(frozen=True)
class _Pairs:
    """The non-zero contributions ``x_i^r`` to the withheld cells, one per (cell, unit)."""

    units: pd.Index      # the units, in order of first appearance
    ur: np.ndarray       # unit of each pair (position in ``units``)
    ic: np.ndarray       # cell of each pair (column of ``a``)
    xv: np.ndarray       # the contribution
    atk_idx: np.ndarray  # units that may be attacked
    att_idx: np.ndarray  # units that may attack

    @property
    def npair(self) -> int:
        return len(self.xv)

    @property
    def nunit(self) -> int:
        return len(self.units)


def _pairs(contributions: pd.DataFrame, cells: Any, attackers: Any, attacked: Any) -> _Pairs:
    """Contributions summed per (cell, unit), cells mapped to the columns of ``a``."""
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
    att_set = units if attackers is None else units.intersection(pd.Index(attackers))
    atk_set = units if attacked is None else units.intersection(pd.Index(attacked))
    if len(att_set) == 0 or len(atk_set) == 0:
        raise InputError("attackers/attacked name no unit with contributions")
    return _Pairs(units, units.get_indexer(cf["unit"]), cf["cell"].to_numpy(), cf["value"].to_numpy(),
                  units.get_indexer(atk_set), units.get_indexer(att_set))


class _Layout:
    """Where each group of variables lies in the MIP's columns.

    The groups follow one another in the order of the model (6.6)-(6.20): ``mu`` (one
    per explicit aggregation), ``xp``/``xm`` (xi+ and xi-), ``al`` (alpha) and ``be``
    (beta), one per (cell, unit) pair, ``u`` and ``v`` (one per attacked and attacking
    unit), then the scalars ``a1``, ``a2`` and ``t`` (A1, A2, T).
    """

    def __init__(self, kk: int, npair: int, nu: int, nv: int) -> None:
        self.widths: dict[str, int] = {
            "mu": kk, "xp": npair, "xm": npair, "al": npair, "be": npair,
            "u": nu, "v": nv, "a1": 1, "a2": 1, "t": 1,
        }
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
    pr = _pairs(contributions, cells, attackers, attacked)
    lay = _Layout(kk, pr.npair, len(pr.atk_idx), len(pr.att_idx))
    # |l_ir| <= |x_i^r| * sum_k |a_ik| since |mu_k| <= 1.
    colabs = np.asarray(abs(a).sum(axis=0)).ravel()
    bound = np.abs(pr.xv) * colabs[pr.ic]
    per_unit = np.bincount(pr.ur, weights=bound, minlength=pr.nunit)
    amax = float(per_unit.max()) if pr.nunit else 0.0

    lo, hi, integ, cost = _columns(lay, bound, amax, p, q)
    mat, rlo, rhi = _rows(a, lay, pr, 2.0 * bound + 1.0, amax + 1.0,
                          ordered=attackers is None and attacked is None)
    # T >= tau: excludes the trivial aggregations (see the module docstring).
    per_row = np.asarray(abs(a) @ np.bincount(pr.ic, weights=np.abs(pr.xv), minlength=ns)).ravel()
    per_row = per_row[per_row > 0]
    lo[lay.start["t"]] = float(per_row.min()) if per_row.size else 1.0

    h = _lp.new_highs()
    h.setOptionValue("mip_rel_gap", 0.0)
    if time_limit is not None:
        h.setOptionValue("time_limit", float(time_limit))
    _lp.pass_lp(h, cost, lo, hi, mat, rlo, rhi, integrality=integ, maximize=True)
    h.run()
    st = _lp.status(h)
    if st not in ("optimal",):
        if st == "infeasible":
            raise InfeasibleError("the aggregation MIP is infeasible (fewer than two units?)")
        if h.getInfo().primal_solution_status < 2:
            raise InfeasibleError(f"the aggregation MIP stopped without a solution ({st})")
    x = _lp.col_values(h)
    mu = x[lay.span("mu")]
    lam = np.asarray(a.T @ mu).ravel()
    # Recompute shares exactly from the aggregation (robust to MIP tolerances).
    share = np.bincount(pr.ur, weights=np.abs(pr.xv * lam[pr.ic]), minlength=pr.nunit)
    atk_u = pr.atk_idx[int(np.argmax(x[lay.span("u")]))]
    att_u = pr.att_idx[int(np.argmax(x[lay.span("v")]))]
    return AggregationResult(
        objective=float(h.getInfo().objective_function_value),
        mu=mu, coefficients=lam,
        cells=np.asarray(cells) if cells is not None else np.arange(ns),
        value=float(mu @ b), attacker=pr.units[att_u], attacked=pr.units[atk_u],
        attacker_share=float(share[att_u]), attacked_share=float(share[atk_u]),
        total=float(share.sum()), status=st,
    )


def _columns(lay: _Layout, bound: np.ndarray, amax: float, p: float,
             q: float) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Bounds, integrality and objective of the MIP's variables: max (p+q) A1 + q A2 - q T."""
    lo = np.zeros(lay.nvar)
    hi = np.full(lay.nvar, np.inf)
    lo[lay.span("mu")] = -1.0
    hi[lay.span("mu")] = 1.0
    hi[lay.span("al")] = bound
    integ = np.zeros(lay.nvar, dtype=bool)
    for binary in ("be", "u", "v"):
        hi[lay.span(binary)] = 1.0
        integ[lay.span(binary)] = True
    cost = np.zeros(lay.nvar)
    for group, top, weight in (("a1", amax, p + q), ("a2", amax, q), ("t", np.inf, -q)):
        hi[lay.start[group]] = top
        cost[lay.start[group]] = weight
    return lo, hi, integ, cost


def _rows(a: sp.csr_matrix, lay: _Layout, pr: _Pairs, big_alpha: np.ndarray, big_a: float, *,
          ordered: bool) -> tuple[sp.csr_matrix, np.ndarray, np.ndarray]:
    """The constraints (6.7)-(6.16) as one matrix with row bounds; ``ordered`` adds A1 >= A2
    (valid when anyone may be attacker and attacked)."""
    npair = pr.npair
    # l_ir as a row over mu: x_i^r * a[:, i]  (coefficients of mu_k).
    l_rows = sp.csr_matrix(sp.csc_matrix(a)[:, pr.ic].T.multiply(pr.xv[:, None]))  # npair x K
    rows: list[sp.csr_matrix] = []
    rlo: list[np.ndarray] = []
    rhi: list[np.ndarray] = []

    def add(block: sp.csr_matrix, low: np.ndarray, high: np.ndarray) -> None:
        rows.append(block)
        rlo.append(low)
        rhi.append(high)

    eye = sp.identity(npair, format="csr")
    ones_t = sp.csr_matrix(np.ones((1, npair)))
    # (6.7) T - sum xi+ - sum xi- = 0
    add(lay.block({"xp": -ones_t, "xm": -ones_t, "t": sp.csr_matrix([[1.0]])}, 1),
        np.zeros(1), np.zeros(1))
    # (6.8) xi+ - l >= 0 ; (6.9) xi- + l >= 0
    add(lay.block({"mu": -l_rows, "xp": eye}, npair), np.zeros(npair), np.full(npair, np.inf))
    add(lay.block({"mu": l_rows, "xm": eye}, npair), np.zeros(npair), np.full(npair, np.inf))
    # (6.12) alpha - l + M beta <= M ; (6.13) alpha + l - M beta <= 0
    mb = sp.diags(big_alpha, format="csr")
    add(lay.block({"mu": -l_rows, "al": eye, "be": mb}, npair), np.full(npair, -np.inf), big_alpha)
    add(lay.block({"mu": l_rows, "al": eye, "be": -mb}, npair), np.full(npair, -np.inf),
        np.zeros(npair))
    # (6.10)/(6.11): A - sum_i alpha_ir + M u_r <= M
    member = sp.csr_matrix((np.ones(npair), (pr.ur, np.arange(npair))), shape=(pr.nunit, npair))
    for idx, o_sel, o_a in ((pr.atk_idx, "u", "a1"), (pr.att_idx, "v", "a2")):
        nsel = len(idx)
        add(lay.block({
            "al": -member[idx],
            o_sel: sp.identity(nsel, format="csr") * big_a,
            o_a: sp.csr_matrix(np.ones((nsel, 1))),
        }, nsel), np.full(nsel, -np.inf), np.full(nsel, big_a))
    # (6.14), (6.15)
    add(lay.block({"u": sp.csr_matrix(np.ones((1, lay.widths["u"])))}, 1), np.ones(1), np.ones(1))
    add(lay.block({"v": sp.csr_matrix(np.ones((1, lay.widths["v"])))}, 1), np.ones(1), np.ones(1))
    # (6.16) u_r + v_r <= 1 for units in both sets
    both = np.intersect1d(pr.atk_idx, pr.att_idx)
    if both.size:
        pu = pd.Index(pr.atk_idx).get_indexer(both)
        pv = pd.Index(pr.att_idx).get_indexer(both)
        nb = both.size
        su = sp.csr_matrix((np.ones(nb), (np.arange(nb), pu)), shape=(nb, lay.widths["u"]))
        sv = sp.csr_matrix((np.ones(nb), (np.arange(nb), pv)), shape=(nb, lay.widths["v"]))
        add(lay.block({"u": su, "v": sv}, nb), np.full(nb, -np.inf), np.ones(nb))
    if ordered:
        add(lay.block({"a1": sp.csr_matrix([[1.0]]), "a2": sp.csr_matrix([[-1.0]])}, 1),
            np.zeros(1), np.full(1, np.inf))
    return sp.vstack(rows).tocsr(), np.concatenate(rlo), np.concatenate(rhi)


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
