"""Rolling bottom-level cell statistics up a table's hierarchies (numpy, vectorised).

Statistics come in two kinds: sums (value, counts, weights), which add up, and top-K
lists (largest unit contributions with their weight and flags), which merge: the top-K of
a parent is the top-K of the union of its children's lists, as long as every unit
contributes to one child only (records; holdings present in one bottom-level cell).

A table's cells are held on its full grid (C order over its dimensions' codes, totals
included). Rolling up along dimension ``d`` processes depths from the deepest: all cells
whose ``d``-code sits at depth ``L`` are merged into the cell with the parent code, which
is complete before it serves as a child at depth ``L - 1``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tablesafe.structure import Hierarchy


@dataclass
class TopLists:
    """Per-cell top-K lists: value ``c`` (NaN = no entry), weight, request and waiver
    flags, plus the separately ranked non-waived values and absolute values."""

    c: np.ndarray
    w: np.ndarray
    r: np.ndarray
    v: np.ndarray
    nw: np.ndarray
    ab: np.ndarray

    @classmethod
    def empty(cls, n: int, k: int) -> TopLists:
        nan = np.full((n, k), np.nan)
        return cls(nan.copy(), np.ones((n, k)), np.zeros((n, k), bool), np.zeros((n, k), bool), nan.copy(),
                   nan.copy())

    @property
    def k(self) -> int:
        return self.c.shape[1]

    def take(self, rows: np.ndarray) -> TopLists:
        return TopLists(self.c[rows], self.w[rows], self.r[rows], self.v[rows], self.nw[rows], self.ab[rows])


def group_top(ids: np.ndarray, n_out: int, k: int, keys: list[np.ndarray],
              payload: list[np.ndarray] = ()) -> list[np.ndarray]:
    """Top-``k`` entries per group.

    ``ids`` (m,) is the group of each candidate; ``keys`` are (m,) arrays ordering the
    candidates, primary first, all descending; candidates whose first key is NaN are
    ignored. ``payload`` arrays ride along. Returns one (n_out, k) array per key and
    payload: the first key NaN-padded, the others 0-padded.
    """
    keep = ~np.isnan(keys[0])
    ids = ids[keep]
    keys = [kk[keep] for kk in keys]
    payload = [p[keep] for p in payload]
    order = np.lexsort(tuple(-kk for kk in reversed(keys)) + (ids,))
    ids = ids[order]
    start = np.searchsorted(ids, ids, side="left")
    rank = np.arange(len(ids)) - start
    sel = rank < k
    out = []
    for j, kk in enumerate([*keys, *payload]):
        arr = np.full((n_out, k), np.nan) if j == 0 else np.zeros((n_out, k), dtype=kk.dtype)
        arr[ids[sel], rank[sel]] = kk[order][sel]
        out.append(arr)
    return out


def merge_tops(ids: np.ndarray, n_out: int, tops: TopLists) -> TopLists:
    """Merge the lists of candidate rows into ``n_out`` groups (``ids`` per row).

    Ties in value are broken by weight, then request flag, then waiver flag (all
    descending), so the result does not depend on the input order.
    """
    k = tops.k
    rid = np.repeat(ids, k)
    w = tops.w.ravel()
    _, wrank = np.unique(w, return_inverse=True)
    tie = (wrank.astype(np.int64) * 4 + tops.r.ravel() * 2 + tops.v.ravel()).astype(float)
    c, _, w, r, v = group_top(rid, n_out, k, [tops.c.ravel(), tie], [w, tops.r.ravel(), tops.v.ravel()])
    w = np.where(np.isnan(c), 1.0, w)
    # lists equal to the value lists (no waivers, no negatives) merge to the same result
    if np.array_equal(tops.nw, tops.c, equal_nan=True):
        nw = c.copy()
    else:
        (nw,) = group_top(rid, n_out, k, [tops.nw.ravel()])
    if np.array_equal(tops.ab, tops.c, equal_nan=True):
        ab = c.copy()
    else:
        (ab,) = group_top(rid, n_out, k, [tops.ab.ravel()])
    return TopLists(c, w, r.astype(bool), v.astype(bool), nw, ab)


def rollup(hierarchies: list[Hierarchy], sums: dict[str, np.ndarray], tops: TopLists) -> None:
    """Fill every non-bottom cell of the grid in place from the bottom-level cells.

    ``sums`` arrays and ``tops`` are indexed by flat grid position (C order over the
    hierarchies' codes). Non-bottom cells must hold zeros / empty lists on entry.
    """
    shape = tuple(len(h) for h in hierarchies)
    n = int(np.prod(shape, dtype=np.int64))
    for d, h in enumerate(hierarchies):
        depth = h.depths
        parent = np.asarray(h.parent, dtype=np.int64)
        stride = int(np.prod(shape[d + 1:], dtype=np.int64))
        code_of = (np.arange(n, dtype=np.int64) // stride) % shape[d]
        for level in range(int(depth.max()), 0, -1):
            child_cells = np.flatnonzero(depth[code_of] == level)
            if not len(child_cells):
                continue
            pc = code_of[child_cells]
            parent_cells = child_cells + (parent[pc] - pc) * stride
            targets, slot = np.unique(parent_cells, return_inverse=True)
            for arr in sums.values():
                arr[targets] += np.bincount(slot, weights=arr[child_cells], minlength=len(targets))
            sub = tops.take(child_cells)
            live = ~(np.isnan(sub.c).all(axis=1) & np.isnan(sub.nw).all(axis=1))
            merged = merge_tops(slot[live], len(targets), sub.take(np.flatnonzero(live)))
            for name in ("c", "w", "r", "v", "nw", "ab"):
                getattr(tops, name)[targets] = getattr(merged, name)
