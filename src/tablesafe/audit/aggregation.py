"""Operational criterion 2: the most sensitive aggregation (seed 001 sections 4-6).

An aggregation is a linear combination ``sum_k mu_k (sum_i a_ik x_i) = sum_k mu_k b_k`` of
the explicit aggregations ``A_W x_W = b`` (the relations restricted to withheld cells,
with the published cells moved to the right-hand side). With the (p,q) prior/posterior
rule extended to aggregations (seed 001 section 5, (5.4)) it is sensitive when
``(p+q) A1 + q A2 - q T >= 0``, ``A1 >= A2`` the two largest units' absolute shares and
``T`` the sum of all; the table is safe iff the maximum of that over all aggregations is
negative (Theorem 3; the seed's MIP (6.6)-(6.20)).

How it is solved here:

- Parts: withheld cells that share no relation (and no leaf) are solved apart
  (:func:`aggregation_blocks`; the table is safe iff every part is).
- Elements: with a ``basis`` (:func:`leaf_basis` for hierarchical tables) a unit's share
  is ``sum_e |x_e^r| |c_e|`` over the leaf cells ``e`` with ``c_e`` the sum of the
  coefficients of the withheld cells containing ``e``, so a unit in a leaf and its totals
  counts once; without one each withheld cell is its own element (the seed's tables).
- The compact MIP (:mod:`tablesafe.audit.aggregation_model`): absolute values per
  element, not per (cell, unit) pair, and the scale fixed by ``T = 1``. The seed's model as
  printed bounds ``-1 <= mu <= 1`` and, to exclude the trivial aggregation, needs a floor
  ``T >= tau`` (the smallest ``T`` of one explicit aggregation), which also excludes
  aggregations whose ``T`` is below ``tau`` at every scale the box allows; it is kept as
  ``scale="box"`` for the seed's worked examples. Results are reported at the seed's
  scale (``mu`` in [-1, 1]) and compared by ``relative = objective / T``.
- Yes or no (``decide=True``, :mod:`tablesafe.audit.aggregation_decide`): one attacked
  unit at a time, for the suppression loop.

Units may be holdings (a unit contributing to several cells) and contributions may be
negative. The model can be reduced to chosen attackers and attacked units (the reduced
model of section 6).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import pandas as pd
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components

from tablesafe.audit import lp as _lp
from tablesafe.audit.aggregation_decide import decide_part
from tablesafe.audit.aggregation_model import PartModel, candidates, largest_share, solve_part
from tablesafe.audit.intervals import as_mask
from tablesafe.errors import InfeasibleError, InputError
from tablesafe.problem import Problem


@dataclass
class AggregationResult:
    """The most sensitive aggregation found by the MIP (or, when only deciding, a
    sensitive one).

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
        relative: ``objective / T``, the measure the parts are compared by (scale-free).
        parts: independent parts of the withheld cells solved.
        sensitive_parts: parts with a sensitive aggregation.
        disclosed: with ``every``, the units some aggregation discloses.
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
    relative: float = float("nan")
    parts: int = 1
    sensitive_parts: int = 0
    disclosed: tuple = ()

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


def aggregation_blocks(a, basis=None) -> list[tuple[np.ndarray, np.ndarray]]:
    """The independent parts of the explicit aggregations ``A_W``: ``(rows, columns)``
    per part, two relations being in one part when they share a withheld cell, or
    withheld cells when they share an element of ``basis`` (elements x withheld cells:
    the leaf cells inside each withheld cell); parts in order of their first withheld
    cell, relations without a withheld cell left out.

    An aggregation that combines parts is never more sensitive than its parts together:
    its ``T`` is the sum of the parts' and each unit's share the sum of its shares, so
    ``(p+q) A1 + q A2 - q T`` is at most the sum of the parts' values for the same two
    units, each at most that part's optimum. The table is safe iff every part is.
    """
    a = sp.csr_matrix(a)
    kk, ns = a.shape
    pattern = sp.csr_matrix((np.ones(a.nnz), a.indices, a.indptr), shape=(kk, ns))
    link = sp.csr_matrix((ns, ns))
    if basis is not None:  # cells sharing an element: linked through it
        bas = abs(sp.csr_matrix(basis, dtype=float))
        link = sp.csr_matrix(bas.T @ bas)
    graph = sp.bmat([[sp.csr_matrix((kk, kk)), pattern], [pattern.T, link]]).tocsr()
    _, label = connected_components(graph, directed=False)
    rows_of, cols_of = label[:kk], label[kk:]
    used = np.diff(a.indptr) > 0
    parts = []
    for lab in pd.unique(cols_of):
        rows = np.flatnonzero((rows_of == lab) & used)
        if rows.size:
            parts.append((rows, np.flatnonzero(cols_of == lab)))
    return parts


@dataclass(frozen=True)
class _Units:
    """The contributions to the withheld cells: ``x`` (units x cells, sparse) and labels."""

    labels: pd.Index
    x: sp.csr_matrix


def _unit_matrix(contributions: pd.DataFrame, cells: Any, ns: int) -> _Units:
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
    labels = pd.Index(pd.unique(cf["unit"]))
    x = sp.csr_matrix((cf["value"].to_numpy(float), (labels.get_indexer(cf["unit"]), cf["cell"].to_numpy())),
                      shape=(len(labels), ns))
    return _Units(labels, x)


def _box_scale(a: sp.csr_matrix, lam: np.ndarray) -> tuple[np.ndarray, float]:
    """``mu`` with ``A^T mu = lambda`` and the smallest largest ``|mu_k|`` (that value):
    the aggregation at the scale of seed 001's model, whose ``mu`` lie in [-1, 1]."""
    kk = a.shape[0]
    h = _lp.new_highs()
    at = sp.csr_matrix(a.T)
    ones = sp.csr_matrix(np.ones((kk, 1)))
    eye = sp.identity(kk, format="csr")
    mat = sp.vstack([sp.hstack([at, sp.csr_matrix((at.shape[0], 1))]),
                     sp.hstack([eye, -ones]), sp.hstack([eye, ones])]).tocsr()
    rlo = np.concatenate([lam, np.full(kk, -np.inf), np.zeros(kk)])
    rhi = np.concatenate([lam, np.zeros(kk), np.full(kk, np.inf)])
    cost = np.zeros(kk + 1)
    cost[-1] = 1.0
    lo = np.concatenate([np.full(kk, -np.inf), [0.0]])
    _lp.pass_lp(h, cost, lo, np.full(kk + 1, np.inf), mat, rlo, rhi)
    h.run()
    x = _lp.col_values(h)
    if _lp.status(h) != "optimal" or x[-1] <= 0:
        return np.zeros(kk), 1.0
    return x[:kk], float(x[-1])


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
    cache: dict | None = None,
    scale: str = "total",
    basis=None,
    elements=None,
    decide: bool = False,
    prefer=None,
    every: bool = False,
    unit_limit: float | None = None,
) -> AggregationResult:
    """Solve the MIP of seed 001 section 6 for the most sensitive aggregation.

    The model is solved per independent part of ``a`` (:func:`aggregation_blocks`), in
    the compact form the module docstring describes; the result is the part whose
    aggregation is most sensitive relative to its ``T``.

    Args:
        a: explicit aggregations, (K x Ns) matrix (``a_ik``).
        b: their right-hand sides (``b_k``).
        contributions: frame with ``cell`` (position 0..Ns-1, or a problem index listed
            in ``cells``), ``unit`` and ``value`` (``x_i^r``; holdings summed, may be
            negative); with ``basis``, the cells are its elements (positions, or the
            problem indices listed in ``elements``).
        p, q: rule parameters; the p% rule is ``q = 100`` (seed 001 section 5).
        cells: problem indices of the Ns columns of ``a`` (to map ``contributions``).
        attackers, attacked: optional unit lists restricting who may attack / be
            attacked (the reduced model of section 6).
        time_limit: seconds for all parts together.
        cache: a dict kept between calls on one table and one contributions frame: parts
            (by their withheld cells) solved before are not solved again.
        scale: ``total`` (default): the most sensitive aggregation relative to its
            ``T`` (solved with ``T = 1``, then reported at seed 001's scale); ``box``:
            seed 001's model as printed, ``-1 <= mu <= 1`` with ``T >= tau`` (for its worked
            examples; it can miss aggregations whose ``T`` is below ``tau``, see the
            module docstring).
        basis, elements: the elements the withheld cells are sums of, as an (E x Ns)
            0/1 matrix (the leaf cells of a hierarchical table), and their problem
            indices. Each unit's contribution is then counted once per element with the
            aggregation's coefficient of that element, the sum of the coefficients of the
            withheld cells containing it; without a basis every withheld cell is its own
            element (seed 001's tables of disjoint cells).
        decide: only decide, per part, whether some aggregation is sensitive (faster):
            a sensitive part reports the first sensitive aggregation found, not the
            most sensitive (``scale="total"`` only).
        prefer: with ``decide``, units to ask about first (e.g. those disclosed in the
            previous round of a suppression loop).
        every: with ``decide``, ask about every unit and list those some aggregation
            discloses (``disclosed``) instead of stopping at the first.
        unit_limit: with ``decide``, seconds per attacked unit; a unit not decided
            within them makes its part ``undecided`` (not proved safe: objective 0,
            status ``undecided``, the aggregation its bound found), which a suppression
            loop treats like a disclosure.

    Raises:
        InputError: no contributions, or the unit lists name no contributing unit.
        InfeasibleError: a part's MIP stopped (time limit) without any aggregation.
    """
    a = sp.csr_matrix(a, dtype=float)
    b = np.asarray(b, dtype=float)
    kk, ns = a.shape
    if len(b) != kk:
        raise InputError("b must have one entry per explicit aggregation")
    if scale not in ("total", "box"):
        raise InputError(f"scale must be 'total' or 'box', not {scale!r}")
    box = scale == "box"
    decide = decide and not box
    if basis is None:
        basis, elements = sp.identity(ns, format="csr"), cells
    basis = sp.csr_matrix(basis, dtype=float)
    units = _unit_matrix(contributions, elements, basis.shape[0])
    restricted = attackers is not None or attacked is not None
    atk_set = units.labels if attackers is None else units.labels.intersection(pd.Index(attackers))
    att_set = units.labels if attacked is None else units.labels.intersection(pd.Index(attacked))
    if len(atk_set) == 0 or len(att_set) == 0:
        raise InputError("attackers/attacked name no unit with contributions")
    is_atk = units.labels.isin(atk_set)
    is_att = units.labels.isin(att_set)
    deadline = None if time_limit is None else time.monotonic() + float(time_limit)
    glob = np.arange(ns) if cells is None else np.asarray(cells)
    found: list[AggregationResult] = []
    disclosed: list = []
    statuses = []
    for rows, cols in aggregation_blocks(a, basis):
        elem = np.flatnonzero(np.diff(sp.csr_matrix(basis[:, cols]).indptr) > 0)
        xb = sp.csr_matrix(units.x[:, elem])
        onto = sp.csr_matrix(a[rows][:, cols] @ basis[elem][:, cols].T)  # mu -> element coefficients
        present = np.flatnonzero(np.diff(xb.indptr) > 0)
        if not present.size:
            continue
        xp = abs(xb[present])
        peak = float(xp.max())
        if restricted:
            att_i, atk_i = np.flatnonzero(is_att[present]), np.flatnonzero(is_atk[present])
            phantom = attackers is None or len(pd.Index(attackers).difference(units.labels[present])) > 0
        else:
            cand = candidates(xp)
            # the attacked unit holds at least q / (p + 2q) of T (p A1 >= q (T - 2 A1)), so
            # one whose largest share of an element's total is below that never is
            att_i = cand[largest_share(xp)[cand] >= q / (p + 2.0 * q) * (1.0 - 1e-9)]
            atk_i = cand
            phantom = True
        key = (glob[cols].tobytes(), float(p), float(q), scale, decide,
               restricted and (repr(attackers), repr(attacked)))
        who = None  # with decide: the unit the aggregation discloses (or left undecided)
        if cache is not None and key in cache:
            st, mu = cache[key]
        else:
            left = None if deadline is None else deadline - time.monotonic()
            model = PartModel(onto, sp.csr_matrix(xp / peak), att_i, atk_i, phantom, not restricted)
            if decide:
                first = np.flatnonzero(units.labels[present].isin(list(prefer or [])))
                hits: list | None = [] if every else None
                st, mu, who = decide_part(model, p, q, deadline, first, hits, unit_limit)
                disclosed.extend(units.labels[present[hits or []]])
            else:
                st, mu = solve_part(model, p, q, left, box)
            if cache is not None and st in ("optimal", "safe"):
                cache[key] = (st, mu)
        statuses.append(st)
        if mu is None:
            if st != "safe":
                raise InfeasibleError(f"the aggregation MIP stopped without a solution ({st})")
            continue
        res = _part_result(a, b, (rows, cols, onto), glob, xp, (units.labels[present], att_i, atk_i, phantom),
                           mu, p, q, st, box)
        if st == "undecided":  # not proved safe: ranks with the sensitive parts, names its unit
            res = replace(res, objective=max(res.objective, 0.0), relative=max(res.relative, 0.0),
                          attacked=res.attacked if who is None else units.labels[present[who]])
        found.append(res)
    bad = [s for s in statuses if s not in ("optimal", "safe", "undecided")]
    if not found:
        return AggregationResult(objective=-np.inf, mu=np.zeros(kk), coefficients=np.zeros(ns), cells=glob,
                                 value=0.0, attacker=None, attacked=None, attacker_share=0.0,
                                 attacked_share=0.0, total=0.0, status=bad[0] if bad else "optimal",
                                 relative=-np.inf, parts=len(statuses), sensitive_parts=0)
    best = max(found, key=lambda r: r.relative)
    sensitive = sum(r.relative >= 0 for r in found)
    status = best.status if best.relative >= 0 or not bad else bad[0]
    return replace(best, status=status, parts=len(statuses), sensitive_parts=int(sensitive),
                   disclosed=tuple(disclosed))


def _part_result(a: sp.csr_matrix, b: np.ndarray, where: tuple, glob: np.ndarray, xabs: sp.csr_matrix,
                 who: tuple, mu_part: np.ndarray, p: float, q: float, status: str,
                 box: bool) -> AggregationResult:
    """A part's aggregation at seed 001's scale (``mu`` in [-1, 1], the largest at 1 unless
    solved so), its shares recomputed exactly from the elements' coefficients (``xabs``:
    absolute contributions, units x elements; the two units with the largest shares among
    those allowed: ``who`` = unit labels, attacked, attackers, phantom)."""
    rows, cols, onto = where
    labels, att_i, atk_i, phantom = who
    kk, ns = a.shape
    part = sp.csr_matrix(a[rows][:, cols])
    lam = np.asarray(part.T @ mu_part).ravel()
    if not box:
        mu_part, s = _box_scale(part, lam)
        mu_part, lam = mu_part / s, lam / s
    share = np.asarray(xabs @ np.abs(onto.T @ mu_part)).ravel()
    total = float(share.sum())
    r1 = att_i[int(np.argmax(share[att_i]))]
    others = atk_i[atk_i != r1]
    r2 = others[int(np.argmax(share[others]))] if others.size else None
    s2 = float(share[r2]) if r2 is not None else 0.0
    if phantom and s2 <= 0:
        r2, s2 = None, 0.0
    # every coefficient cancels (T = 0): no aggregation at all, nothing disclosed
    f = (p + q) * float(share[r1]) + q * s2 - q * total if total > 0 else -np.inf
    mu = np.zeros(kk)
    mu[rows] = mu_part
    coef = np.zeros(ns)
    coef[cols] = lam
    return AggregationResult(
        objective=float(f), mu=mu, coefficients=coef, cells=glob, value=float(mu @ b),
        attacker="(any other unit)" if r2 is None else labels[r2],
        attacked=labels[r1], attacker_share=s2, attacked_share=float(share[r1]),
        total=total, status=status, relative=float(f / total) if total > 0 else -np.inf)


def leaf_basis(problem: Problem) -> sp.csr_matrix:
    """The leaf cells inside each cell, as an (n x n) 0/1 matrix (row ``i``: the leaves
    whose sum cell ``i`` is; a leaf's row is itself). A cell is a sum when some relation
    reads ``-x_i + sum of other cells = 0``; every other cell is a leaf. Tables whose
    relations are not all such sums get the identity (each cell its own element)."""
    a = sp.csr_matrix(problem.relations)
    n = problem.n
    row = np.repeat(np.arange(a.shape[0]), np.diff(a.indptr))
    neg = np.bincount(row, weights=(a.data < 0), minlength=a.shape[0])
    odd = np.bincount(row, weights=(a.data > 0) & (a.data != 1.0), minlength=a.shape[0])
    sums = (neg == 1) & (odd == 0) & np.isclose(np.asarray(a.min(axis=1).todense()).ravel(), -1.0) \
        & (np.abs(problem.rhs) == 0)
    if not sums.all():
        return sp.identity(n, format="csr")
    total_of = np.asarray(a.argmin(axis=1)).ravel()
    first = pd.Series(np.arange(a.shape[0])).groupby(total_of).first()  # one defining relation per sum
    parts = a[first.to_numpy()].copy()
    parts.data[parts.data < 0] = 0.0
    parts.eliminate_zeros()
    owner = np.repeat(first.index.to_numpy(), np.diff(parts.indptr))
    step = sp.csr_matrix((np.ones(parts.nnz), (owner, parts.indices)), shape=(n, n))  # sum -> its parts
    is_leaf = np.ones(n, dtype=bool)
    is_leaf[first.index.to_numpy()] = False
    leaf = sp.diags(is_leaf.astype(float), format="csr")
    out = leaf.copy()
    for _ in range(n):
        nxt = sp.csr_matrix(leaf + step @ out)
        nxt.data = np.minimum(nxt.data, 1.0)
        if (nxt != out).nnz == 0:
            return nxt
        out = nxt
    return out


def criterion2(problem: Problem, withheld, contributions: pd.DataFrame, *, p: float,
               q: float = 100.0, basis: sp.csr_matrix | None = None, **kw) -> AggregationResult:
    """:func:`most_sensitive_aggregation` for a problem and pattern.

    ``contributions`` has ``cell`` as problem index or cell name. Each unit counts with its
    contributions to the leaf cells (:func:`leaf_basis`; pass the matrix as ``basis``
    when calling often): in a hierarchical table a unit in a leaf and in the totals
    above it makes one contribution, which an aggregation of a total and its leaf weighs
    with the sum of their coefficients. Contributions to leaves inside withheld cells
    are used; a withheld cell that is itself a leaf uses its own.
    """
    from tablesafe.audit.insider import contribution_frame

    aw, b, cells = explicit_aggregations(problem, withheld)
    full = leaf_basis(problem) if basis is None else basis
    inside = sp.csr_matrix(full[cells].T)  # n x Ns: leaf e inside withheld cell i
    elements = np.flatnonzero(np.diff(inside.indptr) > 0)
    cf = contribution_frame(problem, contributions)
    return most_sensitive_aggregation(aw, b, cf, p=p, q=q, cells=cells, basis=inside[elements],
                                      elements=elements, **kw)
