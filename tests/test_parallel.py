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
