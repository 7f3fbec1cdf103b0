"""Blocks of active cells (:class:`tablesafe.suppress.attacker.Blocks`) against a plain
search over relations and cells: the same blocks, numbered by their first relation
(else their first cell), with published cells and relations without active cells in
none."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from tablesafe.suppress.attacker import Blocks


def _reference(rel: sp.csr_matrix, active: np.ndarray) -> tuple[int, np.ndarray, np.ndarray]:
    m, n = rel.shape
    cells_of = [[int(c) for c in rel.indices[rel.indptr[r]:rel.indptr[r + 1]] if active[c]] for r in range(m)]
    rows_of: list[list[int]] = [[] for _ in range(n)]
    for r, cs in enumerate(cells_of):
        for c in cs:
            rows_of[c].append(r)
    label = np.full(n, -1)
    row_label = np.full(m, -1)
    count = 0
    starts = [("r", r) for r in range(m) if cells_of[r]] + [("c", c) for c in range(n) if active[c]]
    for kind, i in starts:
        if (row_label[i] if kind == "r" else label[i]) >= 0:
            continue
        stack = [(kind, i)]
        while stack:
            kd, j = stack.pop()
            arr = row_label if kd == "r" else label
            if arr[j] >= 0:
                continue
            arr[j] = count
            stack += [("c", c) for c in cells_of[j]] if kd == "r" else [("r", r) for r in rows_of[j]]
        count += 1
    return count, label, row_label


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 10_000), m=st.integers(1, 12), n=st.integers(1, 20),
       density=st.floats(0.0, 0.5), share=st.floats(0.0, 1.0))
def test_blocks_match_a_plain_search(seed, m, n, density, share):
    rng = np.random.default_rng(seed)
    rel = sp.random(m, n, density=density, format="csr", random_state=rng, data_rvs=lambda k: rng.choice([-1.0, 1.0], k))
    x = (rng.random(n) < share).astype(float)
    b = Blocks(rel, x)
    count, label, row_label = _reference(rel, x > 1e-9)
    assert b.count == count
    assert (b.label == label).all()
    assert (b.row_label == row_label).all()
