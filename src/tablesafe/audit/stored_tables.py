"""The base audit's stored optimal tables of one block, ready for the insider checks
(:mod:`tablesafe.audit.singletons`)."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from tablesafe.audit.block import Block
from tablesafe.audit.intervals import IntervalResult
from tablesafe.structure.neighbours import find_sorted


class StoredTables:
    """The base audit's stored tables of one block, as deviations from the true table:
    one sparse row each (distinct), the true table (no deviation) first, then the seeds
    that fit the block (:attr:`IntervalResult.seeded`: a subtable's certificate moves
    few cells and so leaves most insiders alone), then the row of each target's own
    optimum.

    Rows are sparse: on blocks made of many short cycles a table moves few cells (a dense
    pool of a 20,000-cell block took longer to search than the LPs it saved), although
    an optimal vertex of a large three-way block moves nearly every cell (all 6,445 of
    the block of the generated 13,851-cell table's `modular` pattern); tables are kept
    up to ``max_entries`` deviations. Built once per block and shared by its parts (in
    forked workers too).
    """

    def __init__(self, b: Block, base: IntervalResult, single: np.ndarray,
                 max_entries: int) -> None:
        truth = b.truth
        self.own: dict[tuple[int, int], int] = {}
        starts, index, dev = [0], [], []
        seen: set[tuple[bytes, bytes]] = set()
        seen_ids: set[int] = set()  # tables shared by several cells (one object each)
        nnz = 0
        label = int(base.block[b.cols[0]]) if b.cols.size else -1
        seeded = base.seeded.get(label)
        if seeded is not None and seeded.shape[0]:
            # rows while they stay within ``max_entries``
            rows_in = int(np.searchsorted(seeded.indptr, max_entries, side="right")) - 1
            part = seeded[:max(rows_in, 0)]
            index.append(part.indices.astype(np.int64))
            dev.append(part.data.astype(float))
            starts.extend((part.indptr[1:]).tolist())
            nnz = int(part.nnz)
        for j, k in enumerate(b.cols.tolist()):
            for d in (1, -1):
                pt = base.points.get((k, d))
                if pt is None or id(pt) in seen_ids:
                    continue
                seen_ids.add(id(pt))
                key = (pt[0].tobytes(), pt[1].tobytes())
                if key in seen:
                    continue
                seen.add(key)
                self.own[(j, d)] = len(starts)
                loc = np.searchsorted(b.cols, pt[0])
                index.append(loc)
                dev.append(np.asarray(pt[1], dtype=float) - truth[loc])
                nnz += loc.size
                starts.append(nnz)
            if nnz >= max_entries:
                break                   # enough to shortcut; the LPs decide the rest
        n = b.cols.size
        rows = sp.csr_matrix((np.concatenate([np.zeros(0)] + dev),
                              np.concatenate([np.zeros(0, dtype=np.int64)] + index),
                              np.array([0] + starts)), shape=(len(starts), n))
        rows.sum_duplicates()
        self.rows = rows
        self.cols = rows.tocsc()
        # the deviations of the insiders' cells only (what the pool search looks at:
        # scattering whole rows of a large block took a quarter of the insider checks on
        # a 61,000-cell two-way table)
        self.single_rows = rows[:, single].tocsr()
        self.single = single
        self._scratch = np.zeros(single.size)

    def open_after(self, k: int, d: int, need: float, att: np.ndarray, truth: np.ndarray,
                   tol_single: np.ndarray, most_rows: int) -> tuple[np.ndarray, np.ndarray]:
        """The insiders' cells of ``att`` (a sorted subset of ``single``, local) that
        stored tables reaching the goal ``need`` of local target ``k`` in direction ``d``
        leave open, and for each the side of its true value (1 above, -1 below) that the
        reaching tables move it to (every cell of ``att`` when none reaches, side 0).

        Insider ``s`` is answered when one reaching table has ``x_s`` at or below its
        true value and one at or above it (within ``tol_single``, given by position in
        ``single``): a convex combination of the two keeps it and reaches the goal; a
        table that leaves ``s`` alone does both. The target's own optimum is tried
        first, then other reaching tables, up to ``most_rows``."""
        cols = self.cols
        at_k = np.zeros(self.rows.shape[0])
        lo, hi = cols.indptr[k], cols.indptr[k + 1]
        at_k[cols.indices[lo:hi]] = cols.data[lo:hi]
        reach = np.flatnonzero(d * (truth[k] + at_k) >= d * need)
        if reach.size == 0:
            return att, np.zeros(att.size, dtype=np.int8)
        own = self.own.get((k, d))
        if own is not None and bool(np.any(reach == own)):
            reach = np.concatenate([[own], reach[reach != own]])
        rows = self.single_rows
        cand = np.searchsorted(self.single, att)     # positions among the insiders' cells
        open_lo = np.ones(att.size, dtype=bool)
        open_hi = np.ones(att.size, dtype=bool)
        scratch = self._scratch
        for r in reach[:most_rows].tolist():
            lo, hi = rows.indptr[r], rows.indptr[r + 1]
            idx = rows.indices[lo:hi]
            if idx.size == 0:
                # a table that moves no insider's cell answers them all
                cand, open_lo, open_hi = cand[:0], open_lo[:0], open_hi[:0]
                break
            if 16 * cand.size < idx.size:
                # few candidates left: look them up in the row (sorted indices)
                pos, hit = find_sorted(idx, cand)
                dev = np.where(hit, rows.data[lo:hi][pos], 0.0)
            else:
                scratch[idx] = rows.data[lo:hi]
                dev = scratch[cand]
                scratch[idx] = 0.0
            t = tol_single[cand]
            open_lo &= dev > t
            open_hi &= dev < -t
            keep = open_lo | open_hi
            cand, open_lo, open_hi = cand[keep], open_lo[keep], open_hi[keep]
            if cand.size == 0:
                break
        return self.single[cand], np.where(open_lo, 1, -1).astype(np.int8)
