"""Direction-wise protection levels for frequency-rule cells (seed 000 section 5.3).

With a minimum frequency rule ``n``, a suppressed cell ``i`` with ``c_i < n`` units could
be protected by other few-unit cells in the same relation (row, column, ...) so that the
combination, whose total the attacker learns, still has fewer than ``n`` units. Seed 000
proposes: for each direction ``d`` find the combination of other cells of that relation
whose units together with ``c_i`` stay below ``n`` and whose total value ``V_i(d)`` is
largest, and ask for an upper level of at least ``V_i(d) + eps``; the level of the cell is
then ``max(U_i(rule), max_d V_i(d) + eps)``. Only combinations with enough units can then
supply the protection.

The search is a tiny knapsack per (relation, cell): capacity ``n - 1 - c_i``, item weights
= unit counts. It is solved for all relations and cells at once by enumerating the few
possible "shapes" (how many cells of each unit count), using per-relation sorted values.
"""

from __future__ import annotations

import itertools

import numpy as np
import scipy.sparse as sp

EPS_REL = 1e-6


def _shapes(budget: int) -> list[tuple[int, ...]]:
    """All (a_1, ..., a_budget) with sum c * a_c <= budget (a_c cells of c units)."""
    out = []
    ranges = [range(budget // c + 1) for c in range(1, budget + 1)]
    for a in itertools.product(*ranges):
        if sum((c + 1) * x for c, x in enumerate(a)) <= budget and any(a):
            out.append(a)
    return out


def directional_levels(
    relations: sp.spmatrix,
    value: np.ndarray,
    count: np.ndarray,
    unsafe: np.ndarray,
    n_min: int,
) -> np.ndarray:
    """Upper levels ``max_d V_i(d) + eps`` for frequency-unsafe cells (0 where none is needed).

    Args:
        relations: (m, n) relations; every row is one direction (a total and its parts).
        value: cell values (non-negative).
        count: units per cell as the frequency rule counts them.
        unsafe: mask of cells sensitive by the frequency rule.
        n_min: the rule's minimum frequency.
    """
    ncell = len(value)
    out = np.zeros(ncell)
    budget_max = n_min - 2  # a cell with c >= 1 units leaves at most n - 2 for others
    if budget_max < 1 or not unsafe.any():
        return out
    coo = sp.coo_matrix(relations)
    rows, cols = coo.row.astype(np.int64), coo.col.astype(np.int64)
    cnt = np.rint(count).astype(np.int64)
    # items: few-unit cells that could join a combination
    item = unsafe[cols] & (cnt[cols] >= 1) & (cnt[cols] <= budget_max)
    inc = item.copy()  # incidences to evaluate: the same cells (budget >= 1 iff c <= n - 2)
    if not inc.any():
        return out
    used_rows, rr_all = np.unique(rows[item], return_inverse=True)
    r_item = rr_all
    c_item = cnt[cols[item]]
    v_item = np.abs(value[cols[item]])
    # rank of each item within its (row, count) group, largest value first
    order = np.lexsort((-v_item, c_item, r_item))
    key = r_item[order] * (budget_max + 1) + c_item[order]
    start = np.r_[0, np.flatnonzero(np.diff(key)) + 1]
    group_start = np.repeat(start, np.diff(np.r_[start, len(key)]))
    rank = np.arange(len(key)) - group_start
    depth = budget_max + 1  # enough values to leave the cell itself out
    keep = rank < depth
    g = np.zeros((len(used_rows), budget_max + 1, depth))
    g[r_item[order][keep], c_item[order][keep], rank[keep]] = v_item[order][keep]
    csum = np.concatenate([np.zeros(g.shape[:2] + (1,)), np.cumsum(g, axis=2)], axis=2)

    # each incidence (row, cell) of an unsafe few-unit cell
    rr = r_item
    ci = c_item
    vi = v_item
    budget = n_min - 1 - ci
    best = np.zeros(len(rr))
    for shape in _shapes(budget_max):
        need = sum((c + 1) * a for c, a in enumerate(shape))
        ok = budget >= need
        if not ok.any():
            continue
        total = np.zeros(len(rr))
        for c0, a in enumerate(shape):
            if a == 0:
                continue
            c = c0 + 1
            plain = csum[rr, c, a]
            # leave the cell itself out when it is among the a largest of its group
            own = (ci == c) & (vi >= g[rr, c, a - 1])
            total += np.where(own, csum[rr, c, a + 1] - vi, plain)
        best = np.where(ok, np.maximum(best, total), best)
    lvl = np.where(best > 0, best * (1 + EPS_REL) + EPS_REL, 0.0)
    np.maximum.at(out, cols[item], lvl)
    return out
