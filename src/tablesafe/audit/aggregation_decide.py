"""Whether some aggregation of one part is sensitive, decided one attacked unit at a time
(the question the criterion-2 suppression asks in every round).

For an attacked unit ``r`` and any attacker, ``f = (p+q) s_r + q s_2 - q T`` (seed 001
(6.6)) is at most ``(p+q) s_r - q sum_e (X_e - m_e) |c_e|``, where ``c_e`` is the
aggregation's coefficient of element ``e``, ``X_e`` the element's sum of absolute
contributions and ``m_e`` the largest contribution to ``e`` of a unit other than ``r`` (a
virtual attacker holding, in every element, the largest of the others' contributions).
As ``r`` is the attacked unit (the largest share), also ``s_2 <= s_r``, so
``T <= (p + 2q) / q s_r``. With ``s_r = 1`` (the bound is homogeneous) the right-hand
side is concave in ``c`` except through ``s_r``, so its maximum is a small programme: one
linear programme per sign pattern of the elements ``r`` contributes to, on a model kept
per part and warm-started from unit to unit (:class:`_Warm`), or for units in many
elements a mixed-integer programme with the signs as binaries (:func:`_bound`). If its
optimum is below 0, no aggregation discloses ``r``; otherwise the aggregation found is
checked exactly with the real attackers, who are then named one by one (each its own
programme), and only after :data:`MAX_NAMED` is the full model
(:func:`~tablesafe.audit.aggregation_model.solve_part`) solved for ``r`` alone. Units that
can never be attacked (their largest share of an element below ``q / (p + 2q)``) are
skipped by the caller.

With a time cap per unit (``unit_limit``) a unit not decided within it is reported as
``undecided`` with the last aggregation the bound found: not proved safe, so a suppression
loop treats it as disclosed (withholding more is always allowed), and no unit can hold up
the others for minutes.
"""

from __future__ import annotations

import itertools
import time

import numpy as np
import scipy.sparse as sp

from tablesafe.audit import lp as _lp
from tablesafe.audit.aggregation_model import DECIDE_SLACK, PartModel, largest_share, solve_part


def decide_part(m: PartModel, p: float, q: float, deadline: float | None,
                first: np.ndarray | None = None, every: list | None = None,
                unit_limit: float | None = None) -> tuple[str, np.ndarray | None, int | None]:
    """``("optimal", mu, r)`` of a sensitive aggregation of the part disclosing unit ``r``
    (a row of ``m.x``), or ``("safe", None, None)`` when none exists (proved), or a solver
    status and None when the time ran out.
    ``first``: units (rows of ``m.x``) to ask about before the others; ``every``: a list
    to which every disclosed unit is added (all units are then asked about);
    ``unit_limit``: seconds per unit, after which it is ``("undecided", mu)`` (see the
    module docstring)."""
    x = sp.csr_matrix(m.x)  # units x elements, absolute values
    total = np.asarray(x.sum(axis=0)).ravel()
    onto_t = sp.csr_matrix(m.a.T)  # element x mu
    order = _order(x, m.attacked)
    if first is not None and len(first):
        front = order[np.isin(order, first)]
        order = np.concatenate([front, order[~np.isin(order, front)]])
    found: tuple[str, np.ndarray | None, int | None] = ("safe", None, None)
    warm = (_Warm(onto_t, total, total - x.max(axis=0).toarray().ravel(), p, q, cut=True),
            _Warm(onto_t, total, total.copy(), p, q, cut=False))
    for r in order.tolist():
        if deadline is not None and time.monotonic() > deadline:
            return "Time limit reached", None, None
        cap = deadline if unit_limit is None else time.monotonic() + unit_limit
        if cap is not None and deadline is not None:
            cap = min(cap, deadline)
        st, mu = _decide_unit(m, x, total, onto_t, r, p, q, cap, warm)
        if st not in ("safe", "optimal"):
            if unit_limit is None or mu is None:
                return st, None, None
            st = "undecided"  # the unit's cap ran out; its bound's aggregation is returned
        if st == "safe":
            continue
        if every is None or mu is None:
            return st, mu, r
        every.append(r)
        if found[1] is None:
            found = (st, mu, r)
    return found


MAX_SIGNED = 4
"""Units in at most this many elements are decided with the kept programme, one linear
programme per sign pattern of their elements (the first element's sign fixed by symmetry);
units in more get a mixed-integer programme of their own."""

MAX_NAMED = 40
"""Attackers named one by one for an attacked unit before its full model is solved instead."""


def _decide_unit(m: PartModel, x: sp.csr_matrix, total: np.ndarray, onto_t: sp.csr_matrix, r: int, p: float,
                 q: float, deadline: float | None, warm: tuple[_Warm, _Warm]) -> tuple[str, np.ndarray | None]:
    """Whether some aggregation discloses unit ``r``: the virtual attacker's bound over the
    units not yet named; when it holds, the real attacker with the largest share in its
    aggregation is named and its own (exact) programme solved, until the bound fails."""
    own = np.flatnonzero(np.asarray(x[r].todense()).ravel() > 0)
    xr = np.asarray(x[r, own].todense()).ravel()

    def programme(virtual: bool, weight: np.ndarray) -> np.ndarray | None:
        """The virtual attacker's bound (``virtual``) or a named attacker's programme: kept
        and warm-started for units in few elements, a mixed-integer programme otherwise."""
        if own.size <= MAX_SIGNED:
            return warm[0 if virtual else 1].solve(weight, own, xr)
        return _bound(onto_t, weight, total if virtual else None, own, xr, p, q)

    named = [r]
    attackers = np.asarray(m.attackers, dtype=np.int64)
    last = None  # the last aggregation the bound found (reported when the time runs out)
    for _ in range(MAX_NAMED):
        if deadline is not None and time.monotonic() > deadline:
            return "Time limit reached", last
        keep = np.ones(x.shape[0])
        keep[named] = 0.0
        others = sp.csr_matrix(sp.diags(keep) @ x).max(axis=0).toarray().ravel()  # largest of the rest
        mu = programme(True, total - others)
        if mu is None:
            return "safe", None  # no attacker outside those named discloses r
        last = mu
        if _exact(m, x, total, mu, p, q) >= -DECIDE_SLACK:
            return "optimal", mu
        share = np.asarray(x @ np.abs(onto_t @ mu)).ravel()
        free = attackers[~np.isin(attackers, named)]
        if not free.size:
            break
        r2 = int(free[int(np.argmax(share[free]))])
        named.append(r2)
        pair = programme(False, total - np.asarray(x[r2].todense()).ravel())
        if pair is not None and _exact(m, x, total, pair, p, q) >= -DECIDE_SLACK:
            return "optimal", pair
    left = None if deadline is None else deadline - time.monotonic()
    st, mu = solve_part(PartModel(m.a, m.x, np.array([r]), m.attackers, m.phantom, m.ordered), p, q, left,
                        decide=True)
    if mu is not None:  # in decide mode any solution is a sensitive aggregation
        return "optimal", mu
    return (st, None) if st == "safe" else (st, last)


class _Warm:
    """One part's virtual-attacker programme for units of a single element, kept in HiGHS
    from one unit to the next: only the weights of elements whose largest other
    contribution differs from the largest contribution, and the lower bound of the unit's
    own element's coefficient (``c_e >= 1 / x_re``, its sign by symmetry), change, so each
    solve starts from the last basis. The same programme as :func:`_bound` for one element
    (``cut``: with the row ``T <= (p+2q)/q`` of the virtual attacker's bound; without it
    for a named attacker's programme, whose base weights are ``X``)."""

    def __init__(self, onto_t: sp.csr_matrix, total: np.ndarray, base: np.ndarray, p: float, q: float, *,
                 cut: bool) -> None:
        ne, kk = onto_t.shape
        self.kk, self.ne, self.base, self.onto_t = kk, ne, base.copy(), onto_t
        eye = sp.identity(ne, format="csr")
        z = sp.csr_matrix
        mat = sp.vstack([
            sp.hstack([-onto_t, eye]), sp.hstack([onto_t, eye]),     # t >= c, t >= -c
            sp.hstack([onto_t, z((ne, ne))]),                         # c, bounded for the unit's own element
            sp.hstack([z((1, kk)), z(base[None, :])]),                # the budget: sum w t <= (p+q)/q
            sp.hstack([z((1, kk)), z(total[None, :])]),               # T <= (p+2q)/q (the attacker's share <= r's)
        ]).tocsr()
        rlo = np.concatenate([np.zeros(2 * ne), np.full(ne, -np.inf), [-np.inf, -np.inf]])
        rhi = np.concatenate([np.full(3 * ne, np.inf), [(p + q) / q, (p + 2.0 * q) / q if cut else np.inf]])
        self.h = _lp.new_highs()
        _lp.pass_lp(self.h, np.concatenate([np.zeros(kk), base]), np.concatenate([np.full(kk, -np.inf),
                    np.zeros(ne)]), np.full(kk + ne, np.inf), mat, rlo, rhi)
        self.row_c, self.row_budget = 2 * ne, 3 * ne

    def solve(self, weight: np.ndarray, own: np.ndarray, xr: np.ndarray) -> np.ndarray | None:
        """``mu`` of the programme with these weights for a unit of the elements ``own``
        (its contributions ``xr``), or None when the budget cannot be met: for one element
        ``c_e >= 1 / x_re``; for several, each sign pattern in turn (``sigma_e c_e >= 0`` and
        ``sum_e sigma_e x_re c_e >= 1``)."""
        h, kk = self.h, self.kk
        changed = np.flatnonzero(weight != self.base)
        for e in changed.tolist():
            h.changeColCost(kk + e, float(weight[e]))
            h.changeCoeff(self.row_budget, kk + e, float(weight[e]))
        mu = None
        if own.size == 1:
            h.changeRowBounds(self.row_c + int(own[0]), 1.0 / float(xr[0]), _lp.INF)
            h.run()
            mu = _lp.col_values(h)[:kk] if _lp.status(h) == "optimal" else None
        else:
            rows = self.onto_t[own]
            for tail in itertools.product((1.0, -1.0), repeat=own.size - 1):
                sign = np.array((1.0, *tail))
                for e, sg in zip(own.tolist(), sign.tolist(), strict=True):
                    h.changeRowBounds(self.row_c + e, 0.0 if sg > 0 else -_lp.INF, _lp.INF if sg > 0 else 0.0)
                share = sp.csr_matrix((sign * xr)[None, :] @ rows)
                h.addRow(1.0, _lp.INF, share.nnz, share.indices.astype(np.int32), share.data.astype(float))
                h.run()
                ok = _lp.status(h) == "optimal"
                mu = _lp.col_values(h)[:kk] if ok else None
                h.deleteRows(1, np.array([h.getNumRow() - 1], dtype=np.int32))
                if ok:
                    break
        for e in changed.tolist():
            h.changeColCost(kk + e, float(self.base[e]))
            h.changeCoeff(self.row_budget, kk + e, float(self.base[e]))
        for e in own.tolist():
            h.changeRowBounds(self.row_c + e, -_lp.INF, _lp.INF)
        return mu


def _order(x: sp.csr_matrix, attacked: np.ndarray) -> np.ndarray:
    """The attacked units, those with the largest share of an element first (the likeliest
    to be disclosed, so a sensitive aggregation is found early)."""
    ratio = largest_share(x)
    att = np.asarray(attacked, dtype=np.int64)
    return att[np.argsort(-ratio[att], kind="stable")]


def _bound(onto_t: sp.csr_matrix, weight: np.ndarray, total: np.ndarray | None, own: np.ndarray,
           xr: np.ndarray, p: float, q: float) -> np.ndarray | None:
    """``mu`` of an aggregation with ``s_r = 1`` and ``sum_e weight_e |c_e| <= (p+q)/q`` (the
    bound of the module docstring at least 0), the smallest such sum; None if none. A
    mixed-integer programme with the signs of the unit's elements as binaries (units in
    more than :data:`MAX_SIGNED` elements; the others go to :class:`_Warm`)."""
    ne, kk = onto_t.shape
    budget = (p + q) / q
    cap = np.where(weight > 0, budget / np.maximum(weight, 1e-300), np.inf)  # |c_e| at most this
    no = own.size
    # columns: mu (kk, free), t (ne), al (no), be (no, binary)
    nvar = kk + ne + 2 * no
    lo = np.concatenate([np.full(kk, -np.inf), np.zeros(ne), np.zeros(no), np.zeros(no)])
    hi = np.concatenate([np.full(kk, np.inf), np.where(np.isfinite(cap), cap, np.inf), cap[own],
                         np.ones(no)])
    cost = np.concatenate([np.zeros(kk), weight, np.zeros(2 * no)])
    eye = sp.identity(ne, format="csr")
    pick = sp.csr_matrix((np.ones(no), (np.arange(no), own)), shape=(no, ne))
    c_own = sp.csr_matrix(pick @ onto_t)
    big = 2.0 * cap[own]
    big = np.where(np.isfinite(big), big, 2.0 * budget / max(float(xr.min()), 1e-300))
    z = sp.csr_matrix
    rows = [
        (sp.hstack([-onto_t, eye, z((ne, 2 * no))]), np.zeros(ne), np.full(ne, np.inf)),  # t >= c
        (sp.hstack([onto_t, eye, z((ne, 2 * no))]), np.zeros(ne), np.full(ne, np.inf)),   # t >= -c
        (sp.hstack([z((1, kk)), z(weight[None, :]), z((1, 2 * no))]), np.full(1, -np.inf), np.full(1, budget)),
        # the attacker's share at most r's (r the largest; ``total`` given): (p+q) + q - q T >= 0
        (sp.hstack([z((1, kk)), z((np.zeros(ne) if total is None else total)[None, :]), z((1, 2 * no))]),
         np.full(1, -np.inf), np.full(1, np.inf if total is None else (p + 2.0 * q) / q)),
        (sp.hstack([z((1, kk + ne)), z(xr[None, :]), z((1, no))]), np.ones(1), np.full(1, np.inf)),  # s_r >= 1
        (sp.hstack([-c_own, z((no, ne)), sp.identity(no), sp.diags(big)]), np.full(no, -np.inf), big),
        (sp.hstack([c_own, z((no, ne)), sp.identity(no), -sp.diags(big)]), np.full(no, -np.inf), np.zeros(no)),
    ]
    mat = sp.vstack([r[0] for r in rows]).tocsr()
    h = _lp.new_highs()
    integ = np.zeros(nvar, dtype=bool)
    integ[kk + ne + no:] = True
    _lp.pass_lp(h, cost, lo, hi, mat, np.concatenate([r[1] for r in rows]), np.concatenate([r[2] for r in rows]),
                integrality=integ)
    h.run()
    if _lp.status(h) != "optimal":
        return None
    return _lp.col_values(h)[:kk]


def _exact(m: PartModel, x: sp.csr_matrix, total: np.ndarray, mu: np.ndarray, p: float, q: float) -> float:
    """``f / T`` of the aggregation ``mu`` with the real units (largest share attacked, the
    next attacking; an outsider with no share when allowed and no one else has any)."""
    c = np.abs(np.asarray(m.a.T @ mu).ravel())
    tt = float(total @ c)
    if tt <= 0:
        return -np.inf
    share = np.asarray(x @ c).ravel()
    att = np.asarray(m.attacked)
    r1 = att[int(np.argmax(share[att]))]
    rest = np.asarray(m.attackers)
    rest = rest[rest != r1]
    s2 = float(share[rest].max()) if rest.size else 0.0
    return ((p + q) * float(share[r1]) + q * s2 - q * tt) / tt
