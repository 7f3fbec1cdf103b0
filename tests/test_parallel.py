"""The shared worker helpers: the count respects its cap and the map over forked
workers gives the plain loop's results, in order."""

from __future__ import annotations

from tablesafe.parallel import map_forked, worker_count


def _square(x: int) -> int:
    return x * x


def test_worker_count_is_capped():
    assert worker_count(1) == 1
    assert 1 <= worker_count(2) <= 2
    assert worker_count(64) >= worker_count(2)


def test_map_forked_equals_the_loop():
    items = list(range(7))
    expected = [_square(x) for x in items]
    assert map_forked(_square, items, 2) == expected
    assert map_forked(_square, items, 1) == expected


def _blas_threads(_: int) -> int:
    from threadpoolctl import threadpool_info

    return max((pool["num_threads"] for pool in threadpool_info() if pool["user_api"] == "blas"), default=1)


def test_forked_workers_keep_blas_to_one_thread():
    """Two forked workers whose BLAS threads spin on two cores slow each other's vector
    operations several times over; every worker is started with one BLAS thread."""
    import numpy as np

    np.linalg.norm(np.ones(10))  # the parent's BLAS is loaded before the fork
    assert map_forked(_blas_threads, [0, 1], 2) == [1, 1]


_BLOCK: tuple = ()


def _rank_block(_: int):
    from tablesafe.suppress.local.guided import ranked

    return ranked(*_BLOCK).tolist()


def test_rankings_are_the_same_in_every_process():
    """The local search's LSQR ranking of a block of more than 10,000 cells, where two
    BLAS threads split the sums, gives the same order in the main process and in forked
    workers (which run one BLAS thread): the pattern does not depend on the workers."""
    global _BLOCK
    import numpy as np
    import scipy.sparse as sp

    rng = np.random.default_rng(1)
    m = sp.random(12_000, 30_000, density=4 / 12_000, random_state=rng, format="csc")
    # the target (column 0) in every relation, so that every sum has 12,000 terms
    m = sp.hstack([sp.csc_matrix(rng.standard_normal((12_000, 1))), m]).tocsc()
    _BLOCK = (m.indptr, m.indices, m.data, 12_000, rng.uniform(0.5, 2.0, 30_001), 0, 100)
    here = _rank_block(0)
    assert map_forked(_rank_block, [0, 1], 2) == [here, here]
