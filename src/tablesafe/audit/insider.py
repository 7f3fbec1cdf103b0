"""Insider attacks: respondents who know their own contributions.

- *Singletons* (seed 002 "Secondary tabular data protection methods", singletons; seed
  000 section 7.1): the only contributor of a withheld cell knows that cell exactly.
  Who attacks which cell is :mod:`tablesafe.structure.insiders` (the suppression's
  model too); the checks run in bulk in :mod:`tablesafe.audit.singletons`.
- *Units* (seed 003 B.2.a.i; seed 001 Example 5): a unit (or holding) knows its own
  contribution ``c`` to every cell it is in, so the rest of each such cell is at least
  the a priori lower bound: the cell is at least ``max(lower, c)`` (exactly ``c`` when
  it is the only contributor).

For a target cell, the attacker's knowledge of the target itself is left out: the
protection levels already model a contributor of the target (the second largest one for
the p% rule). For the same reason a singleton's respondent is not an attacker of the
targets its cell overlaps (:mod:`tablesafe.structure.insiders`): it is one of their
contributors. Every sensitive cell whose verdict turns from ``protected`` into something
else is reported with the attacker who achieves it.

- *Sensitive unions* (seed 003 B.2.a.i; seed 001 sections 3-5; seed 000 section 5.2):
  the withheld cells of one relation have a published (signed) sum; the rule is applied
  to that union with each unit's net contribution to it.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from tablesafe.audit.intervals import IntervalResult, as_mask, solve_intervals
from tablesafe.audit.result import REL_TOL, _empty_insider, _empty_union, verdict_of, verdicts
from tablesafe.audit.singletons import singleton_findings
from tablesafe.errors import InputError
from tablesafe.problem import Problem


def contribution_frame(problem: Problem, contributions: pd.DataFrame) -> pd.DataFrame:
    """Normalise a contributions frame to integer ``cell``, ``unit`` and float ``value``."""
    for col in ("cell", "unit", "value"):
        if col not in contributions.columns:
            raise InputError("contributions need columns cell, unit, value", column=col)
    cells = contributions["cell"]
    if cells.dtype.kind in "iu":
        idx = cells.to_numpy().astype(int)
        if idx.size and (idx.min() < 0 or idx.max() >= problem.n):
            raise InputError("contribution cell index out of range", column="cell")
    else:
        index = pd.Series(np.arange(problem.n), index=pd.Index(problem.names.astype(str)))
        got = index.reindex(cells.astype(str).to_numpy()).to_numpy()
        if np.isnan(got).any():
            bad = cells.astype(str).to_numpy()[np.isnan(got)][0]
            raise InputError("contribution to a cell that is not in the table", code=str(bad))
        idx = got.astype(int)
    out = pd.DataFrame({"cell": idx, "unit": contributions["unit"].to_numpy(),
                        "value": contributions["value"].to_numpy(dtype=float)})
    return out.groupby(["cell", "unit"], as_index=False, sort=True)["value"].sum()


def _scenarios(problem: Problem, mask: np.ndarray, base: IntervalResult,
               contributions: pd.DataFrame | None):
    """Yield (attacker label, kind, cells, new lower, new upper, own cells)."""
    free = mask & ~base.exact & (base.block >= 0)
    if contributions is not None:
        cf = contribution_frame(problem, contributions)
        own_all = cf
        cf = cf[free[cf["cell"].to_numpy()]]
        if len(cf) == 0:
            return
        count = (problem.contributors if problem.contributors is not None
                 else np.bincount(own_all["cell"].to_numpy(), minlength=problem.n))
        for unit, grp in cf.groupby("unit", sort=True):
            cells = grp["cell"].to_numpy()
            c = grp["value"].to_numpy()
            sole = np.asarray(count)[cells] == 1
            lo = np.where(sole, problem.value[cells], np.maximum(problem.lower[cells], c))
            hi = np.where(sole, problem.value[cells], problem.upper[cells])
            tighter = (lo > problem.lower[cells]) | (hi < problem.upper[cells])
            if not tighter.any():
                continue
            own = own_all["cell"].to_numpy()[own_all["unit"].to_numpy() == unit]
            yield (f"unit {unit}", "unit", cells[tighter], lo[tighter], hi[tighter], own)


def insider_findings(problem: Problem, withheld, *, contributions: pd.DataFrame | None = None,
                     base: IntervalResult | None = None, rel_tol: float = REL_TOL,
                     stats: dict | None = None,
                     recheck: tuple[np.ndarray, np.ndarray] | None = None) -> pd.DataFrame:
    """Sensitive cells that an insider bounds too closely, and by whom.

    Args:
        problem: the table (``contributors`` gives the single-contributor cells).
        withheld: pattern, mask, indices or names.
        contributions: optional frame ``cell``, ``unit``, ``value`` (each unit's own
            contribution to each cell, ancestors included; use holdings as units to
            model holdings).
        base: intervals already computed with ``keep_points=True`` (reused).
        stats: optional dict that receives the counts ``insider_lp_solves`` (block LPs),
            ``insider_pairs``, ``insider_pool``, ``insider_local_lps``, ``insider_lp_joint``,
            ``insider_lp_batch`` and ``insider_reused`` (pairs answered by kept tables; see
            :mod:`tablesafe.audit.singletons`).
        recheck: ``(targets, cells)``: only the single respondents' attacks on a target
            of ``targets`` or by the respondent of a cell of ``cells`` (see
            :func:`tablesafe.audit.audit`); units of ``contributions`` are all checked.

    Singletons: see :mod:`tablesafe.audit.singletons`. A unit's scenario needs no LP
    for a target when a stored optimal table or the closest certificate of the base
    audit already satisfies the insider's bounds, or when a point on the segment
    between the target's optimal table and the true table (or the target's other
    optimal table) does and still reaches the protection level: feasible tables form
    a convex set, so such a point is a valid certificate.

    Returns:
        Frame with ``target``, ``attacker``, ``kind`` (``singleton``/``unit``),
        ``verdict``, ``audit_lower``, ``audit_upper``.
    """
    mask = as_mask(problem, withheld)
    sens = problem.sensitive & mask
    units = contributions is not None
    if base is None or not base.points or (units and not base.moves):
        base = solve_intervals(problem, mask, cells=sens, keep_points=True, certify=units)
    base_verdict = verdicts(problem, base.lower, base.upper, rel_tol=rel_tol)
    up_need, dn_need = _needs(problem, rel_tol)
    counts: dict = {"insider_lp_solves": 0}
    records = singleton_findings(problem, mask, base, sens & (base_verdict == "protected"),
                                 up_need, dn_need, rel_tol, counts, recheck=recheck)
    cache: dict[int, _BlockView] = {}
    lp_count = 0
    for label, kind, cells, lo, hi, own in _scenarios(problem, mask, base, contributions):
        for bi in np.unique(base.block[cells]):
            b = base.blocks[int(bi)]
            if int(bi) not in cache:
                cache[int(bi)] = _BlockView(b, base, sens & (base_verdict == "protected"))
            view = cache[int(bi)]
            if view.targets.size == 0:
                continue
            inb = base.block[cells] == bi
            glo, ghi = lo[inb], hi[inb]
            loc = np.searchsorted(b.cols, cells[inb])
            keep_t = ~np.isin(view.targets, own)
            redo = view.unresolved(loc, glo, ghi, up_need, dn_need)
            redo = [r & keep_t for r in redo]
            if not (redo[0].any() or redo[1].any()):
                continue
            b.set_bounds(loc, glo, ghi)
            try:
                for j in np.flatnonzero(redo[0] | redo[1]):
                    t = int(view.targets[j])
                    k = int(view.tloc[j])
                    new = {1: base.upper[t], -1: base.lower[t]}
                    for d, need in ((1, redo[0][j]), (-1, redo[1][j])):
                        if not need:
                            continue
                        val, _ = b.optimise(k, d)
                        lp_count += 1
                        new[d] = max(val, problem.value[t]) if d == 1 else min(val, problem.value[t])
                    v = verdict_of(problem, t, new[-1], new[1], rel_tol=rel_tol)
                    if v != "protected":
                        records.append({"target": str(problem.names[t]), "attacker": label,
                                        "kind": kind, "verdict": v, "audit_lower": new[-1],
                                        "audit_upper": new[1]})
            finally:
                b.set_bounds(loc, b.lower[loc], b.upper[loc])
    if stats is not None:
        counts["insider_lp_solves"] += lp_count
        stats.update(counts)
    if not records:
        return _empty_insider()
    return pd.DataFrame.from_records(records)


def _needs(problem: Problem, rel_tol: float) -> tuple[np.ndarray, np.ndarray]:
    """Per cell, the value an up (down) certificate must reach; NaN = decide by LP.

    A direction whose level is zero needs nothing (``-inf``/``+inf``) when the other
    level is positive; cells with only zero levels or with a sliding level go to LPs.
    """
    v = problem.value
    tol = rel_tol * np.maximum(1.0, np.abs(v))
    upl = problem.upl
    lpl = np.maximum(np.minimum(problem.lpl, v - problem.lower), 0.0)
    up = np.where(upl > 0, v + upl - tol, -np.inf)
    dn = np.where(lpl > 0, v - lpl + tol, np.inf)
    lp_only = ((upl <= 0) & (lpl <= 0)) | (problem.spl > 0)
    up[lp_only] = np.nan
    dn[lp_only] = np.nan
    return up, dn


class _BlockView:
    """Targets of a block with their stored optimal tables, for insider re-checks."""

    def __init__(self, b, base: IntervalResult, eligible: np.ndarray) -> None:
        self.block = b
        self.base = base
        self._points: dict[tuple[int, int], np.ndarray | None] = {}
        self.targets = b.cols[eligible[b.cols]]
        self.tloc = np.searchsorted(b.cols, self.targets)
        self.mats, self.has = self._tables(base.points)
        # closest certificates (few cells moved): valid under most insider knowledge
        self.cmats, self.chas = self._tables(base.moves)

    def _tables(self, stored: dict) -> tuple[list[np.ndarray], list[np.ndarray]]:
        """Per direction (up, down): every target's stored table from ``stored`` as a
        column of a block matrix (the true values where none is stored), and which
        targets have one."""
        b = self.block
        mats: list[np.ndarray] = []
        has: list[np.ndarray] = []
        for d in (1, -1):
            mat = np.repeat(b.truth[:, None], len(self.targets), axis=1)
            found = np.zeros(len(self.targets), dtype=bool)
            for j, t in enumerate(self.targets):
                pt = stored.get((int(t), d))
                if pt is not None:
                    found[j] = True
                    mat[np.searchsorted(b.cols, pt[0]), j] = pt[1]
            mats.append(mat)
            has.append(found)
        return mats, has

    def _point(self, cell: int, d: int) -> np.ndarray | None:
        """The stored optimal table of ``cell`` in direction ``d`` as a dense block vector."""
        key = (cell, d)
        if key not in self._points:
            pt = self.base.points.get(key)
            if pt is None:
                self._points[key] = None
            else:
                x = self.block.truth.copy()
                x[np.searchsorted(self.block.cols, pt[0])] = pt[1]
                self._points[key] = x
        return self._points[key]

    def unresolved(self, loc: np.ndarray, glo: np.ndarray, ghi: np.ndarray,
                   up_need: np.ndarray, dn_need: np.ndarray) -> list[np.ndarray]:
        """Masks over targets (up, down) whose protection needs a new LP."""
        out = []
        for di, (mat, has, need) in enumerate(zip(self.mats, self.has, (up_need, dn_need))):
            sign = 1.0 if di == 0 else -1.0
            req = need[self.targets]
            sub = mat[loc]
            tol = 1e-9 * (1.0 + np.abs(sub))
            inside = np.all((sub >= glo[:, None] - tol) & (sub <= ghi[:, None] + tol), axis=0)
            done = inside & has
            csub = self.cmats[di][loc]
            ctol = 1e-9 * (1.0 + np.abs(csub))
            done |= self.chas[di] & np.all((csub >= glo[:, None] - ctol)
                                           & (csub <= ghi[:, None] + ctol), axis=0)
            trivial = np.isinf(req)
            todo = ~done & ~trivial & has & ~np.isnan(req)
            if todo.any():
                idx = np.flatnonzero(todo)
                pt = mat[self.tloc[idx], idx]            # target value at its optimum
                if loc.size == 1:
                    best = self._best_single(loc[0], glo[0], ghi[0], mat, idx, pt, sign)
                else:
                    # segment from the true table (inside all bounds) towards the optimum
                    px = mat[np.ix_(loc, idx)]
                    tx = self.block.truth[loc][:, None]
                    with np.errstate(divide="ignore", invalid="ignore"):
                        lam_hi = np.where(px > ghi[:, None] + 1e-9,
                                          (ghi[:, None] - tx) / (px - tx), 1.0)
                        lam_lo = np.where(px < glo[:, None] - 1e-9,
                                          (tx - glo[:, None]) / (tx - px), 1.0)
                    lam = np.clip(np.minimum(lam_hi, lam_lo).min(axis=0), 0.0, 1.0)
                    tv = self.block.truth[self.tloc[idx]]
                    best = sign * (tv + lam * (pt - tv))
                reached = best >= sign * req[idx]
                done[idx[reached]] = True
            out.append(~done & ~trivial)
        return out

    def _best_single(self, x: int, lo: float, hi: float, mat: np.ndarray, idx: np.ndarray,
                     pt: np.ndarray, sign: float) -> np.ndarray:
        """Best target value (times ``sign``) with cell ``x`` in ``[lo, hi]`` on segments
        from the true table and the target's two stored optima to its optimum ``mat``."""
        tl = self.tloc[idx]
        # candidate segment starts: truth, the target's up and down optima, and the
        # optima of the insider's cell itself (they move x furthest both ways)
        qxs = [np.full(idx.size, self.block.truth[x]), self.mats[0][x, idx],
               self.mats[1][x, idx]]
        qts = [self.block.truth[tl], self.mats[0][tl, idx], self.mats[1][tl, idx]]
        for d in (1, -1):
            own = self._point(int(self.block.cols[x]), d)
            if own is not None:
                qxs.append(np.full(idx.size, own[x]))
                qts.append(own[tl])
        qx = np.stack(qxs, axis=1)
        qt = np.stack(qts, axis=1)
        px = mat[x, idx][:, None]
        finite = [abs(v) for v in (lo, hi) if np.isfinite(v)]
        eps = 1e-9 * (1.0 + max(finite, default=0.0))
        with np.errstate(divide="ignore", invalid="ignore"):
            above = px > hi
            lam = np.where(above, (hi - qx) / (px - qx), (qx - lo) / (qx - px))
            ok_q = np.where(above, qx <= hi + eps, qx >= lo - eps)
            lam = np.clip(np.where(ok_q, lam, np.nan), 0.0, 1.0)
            val = sign * (qt + lam * (pt[:, None] - qt))
            inside = (qx >= lo - eps) & (qx <= hi + eps)
            val0 = np.where(inside, sign * qt, np.nan)
        both = np.concatenate([val, val0], axis=1)
        both = np.where(np.isnan(both), -np.inf, both)
        return both.max(axis=1)


def _rule_pq(rule) -> tuple[float, float]:
    """``("p", p)``, ``("pq", p, q)``, ``(p, q)`` or a number -> (p, q).

    ``("nk", n, k)`` is returned as ``(-n, k)`` (a dominance rule marker).
    """
    if isinstance(rule, (int, float)):
        return float(rule), 100.0
    r = tuple(rule)
    if r and isinstance(r[0], str):
        name = r[0].lower()
        if name == "p" and len(r) == 2:
            return float(r[1]), 100.0
        if name in ("pq", "p,q") and len(r) == 3:
            return float(r[1]), float(r[2])
        if name == "nk" and len(r) == 3:
            return -float(r[1]), float(r[2])
        raise InputError(f"unknown rule {rule!r}; use ('p', p) or ('pq', p, q)")
    if len(r) == 2:
        return float(r[0]), float(r[1])
    if len(r) == 1:
        return float(r[0]), 100.0
    raise InputError(f"unknown rule {rule!r}; use ('p', p) or ('pq', p, q)")


def sensitive_unions(problem: Problem, withheld, contributions: pd.DataFrame, *,
                     rule=("p", 15)) -> pd.DataFrame:
    """Implicitly published unions of withheld cells that are sensitive (seed 003 B.2.a.i).

    For every relation with two or more withheld cells, at least one of them sensitive,
    the signed sum ``sum_i a_i x_i`` over its withheld cells is published. Each unit's
    contribution to that union is its net ``sum_i a_i c_i`` (a unit in a total and in
    one of its parts cancels out); the (p, q) rule of seed 001 section 5 is applied to
    the absolute values: sensitive when ``p * a1 - q * (T - a1 - a2) >= 0``. With
    ``rule=("nk", n, k)`` the dominance rule is applied instead: sensitive when the
    ``n`` largest shares exceed ``k`` percent of ``T`` (seed 000 section 5.2).

    Returns a frame with ``relation``, ``cells`` (names joined by ``+``), ``total`` (the
    published union value), ``largest``, ``second``, ``sensitivity``.
    """
    p, q = _rule_pq(rule)
    mask = as_mask(problem, withheld)
    a = problem.relations.tocoo()
    keep = mask[a.col]
    rel = pd.DataFrame({"row": a.row[keep], "cell": a.col[keep], "coef": a.data[keep]})
    nw = rel.groupby("row")["cell"].transform("size")
    hs = rel.groupby("row")["cell"].transform(lambda c: problem.sensitive[c.to_numpy()].any())
    rel = rel[(nw >= 2) & hs.astype(bool)]
    if rel.empty:
        return _empty_union()
    cf = contribution_frame(problem, contributions)
    m = rel.merge(cf, on="cell", how="inner")
    m["net"] = m["coef"] * m["value"]
    per_unit = m.groupby(["row", "unit"], sort=True)["net"].sum().abs().reset_index()
    per_unit = per_unit.sort_values(["row", "net"], ascending=[True, False])
    rank = per_unit.groupby("row").cumcount()
    tot = per_unit.groupby("row")["net"].sum()
    a1 = per_unit[rank == 0].set_index("row")["net"]
    a2 = per_unit[rank == 1].set_index("row")["net"].reindex(tot.index, fill_value=0.0)
    a1 = a1.reindex(tot.index, fill_value=0.0)
    if p < 0:
        n_dom = int(-p)
        topn = per_unit[rank < n_dom].groupby("row")["net"].sum().reindex(tot.index)
        sens = topn - q / 100.0 * tot
        sens = sens.where(sens > 0, -1.0)
    else:
        sens = p * a1 - q * (tot - a1 - a2)
    hit = sens[sens >= 0].index
    if len(hit) == 0:
        return _empty_union()
    names = rel.groupby("row")["cell"].apply(lambda c: "+".join(problem.names[c.to_numpy()]))
    value = rel.assign(v=rel["coef"] * problem.value[rel["cell"].to_numpy()]).groupby("row")["v"].sum()
    return pd.DataFrame({"relation": hit.to_numpy().astype(int),
                         "cells": names.reindex(hit).to_numpy(),
                         "total": value.reindex(hit).to_numpy(),
                         "largest": a1.reindex(hit).to_numpy(),
                         "second": a2.reindex(hit).to_numpy(),
                         "sensitivity": sens.reindex(hit).to_numpy()})
