"""The second pass of ``fast``: drop complements whose certificates can do without them.

The first pass protects the sensitive cells one after the other, so early certificates
use cells that later turn out to be unnecessary once more cells are withheld (seed 003
B.2.b describes this "second pass" for the sequential heuristics). Here each
complementary cell, most expensive first, is tried for release: every certificate that
moves it is searched again among the cells still withheld, with the cell held at its
value. When every one of them is replaced, the cell is published and the replacements
become the certificates. The pattern stays proved throughout, by construction.

Single respondents: a replacement may move a single-respondent cell that does not
overlap its target only if the certificate it replaces moved that cell too. Every
(target, single respondent) pair that some certificate of the target kept fixed stays
kept fixed, so the insider proof of the first pass carries over (insider certificates
keep their named cells fixed as before).

The work is bounded by a number of local LPs, not by time, so the result is the same on
every machine (unless a caller also sets a deadline).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np


@dataclass
class Certificates:
    """Certificates as flat arrays, one row per (target, direction, insider, cell).

    ``insider`` indexes ``held`` (the single-respondent cells the certificate keeps
    fixed) or is -1 for the outsider's certificate.
    """

    target: np.ndarray
    direction: np.ndarray
    cell: np.ndarray
    dev: np.ndarray
    insider: np.ndarray


@dataclass
class CleanupResult:
    """What the second pass changed."""

    withheld: np.ndarray
    certs: Certificates
    released: int
    swapped: int
    tried: int
    lp_solves: int
    budget_hit: bool


def release_complements(
    search,
    withheld: np.ndarray,
    certs: Certificates,
    held: list[np.ndarray],
    *,
    candidates: np.ndarray,
    cost: np.ndarray,
    upl: np.ndarray,
    lpl: np.ndarray,
    cap: np.ndarray,
    weight: np.ndarray,
    free: np.ndarray,
    single: np.ndarray,
    occupied: np.ndarray | None,
    max_lps: int,
    tol: float = 1e-7,
    swap: bool = True,
    deadline: float | None = None,
) -> CleanupResult:
    """Publish complements (most expensive first) whose certificates can be found anew
    without them among the other withheld cells.

    Args:
        search: the first pass's local-LP searcher (:class:`tablesafe.suppress.fast._Search`).
        withheld: the first pass's pattern (not modified).
        certs: its certificates.
        held: per insider index, the cells that certificate keeps at their values.
        candidates: mask of cells that may be released (the complements).
        cost: cost of withholding each cell (the order of the attempts).
        upl, lpl: the protection amounts; cap: symmetric movement range per cell.
        weight: per-cell weight of the local LPs; free: cells that may move at all.
        single: single-respondent cells; occupied: cells with contributors (overlap).
        max_lps: most local LPs to spend.
        swap: let the replacements also use cells not yet withheld when those cost less,
            together, than the cell released (otherwise only withheld cells).
        deadline: ``time.perf_counter()`` value at which to stop (``budget_hit``).

    Returns:
        The reduced pattern and its certificates (a :class:`CleanupResult`).
    """
    withheld = withheld.copy()
    # one group per (target, insider): both directions come from one symmetric solve
    order = np.lexsort((certs.cell, certs.direction, certs.insider, certs.target))
    t_all, k_all = certs.target[order], certs.direction[order]
    c_all, d_all, i_all = certs.cell[order], certs.dev[order], certs.insider[order]
    if len(t_all) == 0:
        return CleanupResult(withheld, certs, 0, 0, 0, 0, False)
    brk = np.flatnonzero((np.diff(t_all) != 0) | (np.diff(i_all) != 0)) + 1
    starts = np.concatenate(([0], brk))
    ends = np.concatenate((brk, [len(t_all)]))
    groups: list[list] = []  # [target, insider, [(direction, cells, dev), ...]]
    for a, b in zip(starts.tolist(), ends.tolist()):
        parts = []
        kk = k_all[a:b]
        for k in np.unique(kk).tolist():
            sel = slice(a, b) if (kk == k).all() else np.flatnonzero(kk == k) + a
            parts.append((k, c_all[sel], d_all[sel]))
        groups.append([int(t_all[a]), int(i_all[a]), parts])
    # which groups move each candidate cell
    uses: dict[int, list[int]] = {}
    for g, (_, _, parts) in enumerate(groups):
        for c in np.unique(np.concatenate([p[1] for p in parts])).tolist():
            if candidates[c]:
                uses.setdefault(c, []).append(g)

    cand = np.flatnonzero(candidates & withheld)
    cand = cand[np.lexsort((cand, -cost[cand]))]  # most expensive first
    lps0 = search.lp.solves
    released = tried = swapped = 0
    budget_hit = False
    search.cap_down = None
    for c in cand.tolist():
        if search.lp.solves - lps0 >= max_lps or (deadline is not None and time.perf_counter() > deadline):
            budget_hit = True
            break
        gids = [g for g in uses.get(c, ()) if _moves(groups[g], c)]
        tried += 1
        new = []
        added: list[np.ndarray] = []  # cells newly withheld for the replacements
        spent = 0.0
        for g in gids:
            t, ins, parts = groups[g]
            repl = _replace(search, t, ins, parts, c, withheld, held, upl, lpl, cap, weight, free, single,
                            occupied, tol, swap)
            if repl is None:
                break
            cells = np.unique(np.concatenate([p[1] for p in repl]))
            fresh = cells[~withheld[cells]]
            spent += float(cost[fresh].sum())
            if spent >= cost[c] * (1 - 1e-9) and len(fresh):
                break  # a swap must be cheaper than the cell it releases
            withheld[fresh] = True
            added.append(fresh)
            new.append((g, repl))
        else:
            withheld[c] = False
            released += 1
            swapped += bool(spent > 0)
            for g, repl in new:
                groups[g][2] = repl
                for cc in np.unique(np.concatenate([p[1] for p in repl])).tolist():
                    if candidates[cc] and cc != c:
                        lst = uses.setdefault(cc, [])
                        if not lst or lst[-1] != g:
                            lst.append(g)
            continue
        for fresh in added:  # the release failed: undo the tentative additions
            withheld[fresh] = False
    rows_t, rows_k, rows_c, rows_d, rows_i = [], [], [], [], []
    for t, ins, parts in groups:
        for k, cells, dev in parts:
            rows_t.append(np.full(len(cells), t, dtype=np.int64))
            rows_k.append(np.full(len(cells), k, dtype=np.int8))
            rows_c.append(cells.astype(np.int64))
            rows_d.append(dev)
            rows_i.append(np.full(len(cells), ins, dtype=np.int64))
    out = Certificates(np.concatenate(rows_t), np.concatenate(rows_k), np.concatenate(rows_c),
                       np.concatenate(rows_d), np.concatenate(rows_i))
    return CleanupResult(withheld, out, released, swapped, tried, search.lp.solves - lps0, budget_hit)


_WIDE_CELLS = 1_000
_MAX_AREA = 2_000


def _around(search, cells: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """``cells`` and the ``mask`` cells that share a relation with one of them."""
    from tablesafe.suppress.fast import _gather

    rows = np.unique(search.t_ind[_gather(search.t_ptr, cells)])
    near = search.a_ind[_gather(search.a_ptr, rows)]
    return np.unique(np.concatenate((cells, near[mask[near]])))


def _moves(group: list, c: int) -> bool:
    return any((p[1] == c).any() for p in group[2])


def _replace(search, t, ins, parts, c, withheld, held, upl, lpl, cap, weight, free, single, occupied, tol,
             swap):
    """New certificates for ``t`` (same insider) without ``c``, or None: among withheld
    cells, or (``swap``) among all movable cells with withheld ones almost free."""
    old = np.unique(np.concatenate([p[1] for p in parts]))
    amount = max(upl[t], lpl[t])
    if search.geo is not None:
        areas = [search._box(t, lv) for lv in search._levels(t)]
    else:
        # no table structure: a few relation hops around the target on small blocks,
        # else the old certificate's cells and every cell sharing a relation with one of
        # them (measured on Castro's HIER13: four hops around the target cost 63 s and
        # released nothing)
        mask = free.copy() if swap else withheld & free
        mask[c] = False
        wide = search._neighbourhood(t, search.opts.inner_hops, mask)
        areas = [wide if len(wide) <= _WIDE_CELLS else _around(search, old, mask)]
        if len(areas[0]) > _MAX_AREA:
            return None  # too large to search again (measured on HIER16: 2 s per LP)
    for box in areas:
        ok = (free[box] if swap else withheld[box] & free[box]) & (box != c)
        ok |= box == t
        cells = box[ok]
        sing = single[cells] & (cells != t)
        if sing.any():
            # singletons not overlapping t may move only if the old certificate moved them
            s_cells = cells[sing]
            allowed = np.isin(s_cells, old)
            if occupied is not None and search.geo is not None and not allowed.all():
                allowed |= search.geo.overlaps(s_cells, t, occupied)
            keep = np.ones(len(cells), dtype=bool)
            keep[np.flatnonzero(sing)[~allowed]] = False
            cells = cells[keep]
        if ins >= 0:
            cells = cells[~np.isin(cells, held[ins])]
        cells = search._order(t, cells)
        d = search._solve(t, cells, amount, cap, weight, withheld)
        if d is None:
            continue
        keep = np.abs(d) > tol * amount
        cells, d = cells[keep], d[keep] / amount
        out = []
        for k, _, _ in parts:
            out.append((k, cells, d * upl[t] if k == 0 else -d * lpl[t]))
        return out
    return None
