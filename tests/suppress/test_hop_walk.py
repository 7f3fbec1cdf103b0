"""The lazy hop walk of the local search (tablesafe.suppress.local.relations.HopWalk):
walked once and asked for 0, 1, 2, ... hops (as a search that grows its neighbourhood
does), it gives what a fresh breadth-first walk of that many hops gives, in the same
order, and :meth:`LocalSearch.hop_layers` gives the hop boundaries. Also the search's
shortcut for a target alone among the cells in one of its relations."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from tablesafe.suppress.local.relations import HopWalk, RelationIndex


def _fresh(a: sp.csr_matrix, t: int, hops: int, movable: np.ndarray) -> list[int]:
    """The movable cells within ``hops`` of ``t`` through shared rows of ``a``, walked
    from scratch: by distance, within one distance in increasing order."""
    dist = {t: 0}
    frontier = [t]
    at = a.T.tocsr()
    for h in range(1, hops + 1):
        nxt = set()
        for c in frontier:
            for r in at.indices[at.indptr[c]:at.indptr[c + 1]]:
                for d in a.indices[a.indptr[r]:a.indptr[r + 1]]:
                    if movable[d] and d not in dist:
                        nxt.add(int(d))
        for d in nxt:
            dist[d] = h
        frontier = sorted(nxt)
        if not frontier:
            break
    return sorted(dist, key=lambda c: (dist[c], c))


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 100_000), n=st.integers(2, 60), rows=st.integers(1, 40),
       density=st.floats(0.02, 0.3), order=st.permutations(list(range(8))))
def test_walk_equals_fresh_walks(seed: int, n: int, rows: int, density: float, order: list[int]) -> None:
    rng = np.random.default_rng(seed)
    a = sp.random(rows, n, density=density, random_state=rng, format="csr")
    a.data[:] = rng.choice([-1.0, 1.0], size=len(a.data))
    rel = RelationIndex.of(a)
    movable = rng.random(n) < 0.8
    t = int(rng.integers(n))
    movable[t] = True
    walk = HopWalk(rel, n, t, movable)
    for hops in order:  # asked in any order, as far as asked
        assert walk.within(hops).tolist() == _fresh(a, t, hops, movable)
    everything = walk.within(10**9).tolist()
    assert everything == _fresh(a, t, n, movable)
    # the hop boundaries: cells within h hops are the first ends[h]
    for h, end in enumerate(walk.ends):
        assert everything[:end] == _fresh(a, t, h, movable)


def test_walk_stops_where_it_was_asked() -> None:
    a = sp.csr_matrix(np.array([[1, -1, 0, 0, 0], [0, 1, -1, 0, 0], [0, 0, 1, -1, 0], [0, 0, 0, 1, -1.0]]))
    walk = HopWalk(RelationIndex.of(a), 5, 0, np.ones(5, dtype=bool))
    assert walk.within(2).tolist() == [0, 1, 2]
    assert walk.ends == [1, 2, 3] and not walk.exhausted  # nothing past hop 2 walked yet
    assert walk.within(10).tolist() == [0, 1, 2, 3, 4] and walk.exhausted


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 100_000), n=st.integers(2, 40), rows=st.integers(1, 25),
       density=st.floats(0.05, 0.4), share=st.floats(0.1, 1.0))
def test_a_target_alone_in_a_relation_has_no_local_matrix(seed, n, rows, density, share):
    """The local search's shortcut (``LocalSearch._target_alone``): a target that is the
    only one of the cells in one of its relations is pinned, as building the local
    matrix finds, and the marks it uses are left clear."""
    from types import SimpleNamespace

    from tablesafe.suppress.local.search import LocalSearch, _local_matrix

    rng = np.random.default_rng(seed)
    a = sp.random(rows, n, density=density, random_state=rng, format="csr")
    a.data[:] = rng.choice([-1.0, 1.0], size=len(a.data))
    rel = RelationIndex.of(a)
    t = int(rng.integers(n))
    others = np.flatnonzero((rng.random(n) < share) & (np.arange(n) != t))
    cells = np.concatenate(([t], rng.permutation(others))).astype(np.int64)
    fake = SimpleNamespace(space=SimpleNamespace(relations=rel), _inside=np.zeros(n, dtype=bool))
    alone = LocalSearch._target_alone(fake, cells)
    assert not fake._inside.any()
    rows_t = rel.cell_rows[rel.cell_ptr[t]:rel.cell_ptr[t + 1]]
    expected = any(np.isin(rel.row_cells[rel.row_ptr[r]:rel.row_ptr[r + 1]], cells).sum() == 1 for r in rows_t)
    assert alone == expected
    if alone:
        assert _local_matrix(rel, cells) is None
