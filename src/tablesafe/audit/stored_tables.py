"""The base audit's stored optimal tables of one block, ready for the insider checks
(:mod:`tablesafe.audit.singletons`)."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from tablesafe.audit.block import Block
from tablesafe.audit.intervals import IntervalResult


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
