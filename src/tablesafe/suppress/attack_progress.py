"""Progress of a check of many attacks while it runs, also across forked workers.

A check of every sensitive cell (the repair's first check, :func:`~tablesafe.suppress.protection.repair`)
can run for minutes with nothing to show until it ends. While :func:`reporting` is
active, :func:`count` (called by :func:`~tablesafe.suppress.attack_runs.run_attacks` as it
settles attacks, in this process or in a worker forked from it) adds to counters of
:mod:`tablesafe.live_counts`, reported as outsider attacks settled of those listed,
insider attacks settled so far, and the time left for the outsiders at the rate so far.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager

from tablesafe import live_counts
from tablesafe.progress import time_left

__all__ = ["count", "reporting"]


def count(keys: Iterable[tuple[int, int, int]]) -> None:
    """Count ``keys`` (target, direction, insider cell or -1) as settled, when a report is
    running (a no-op otherwise)."""
    if not live_counts.active():
        return
    outsiders = insiders = 0
    for key in keys:
        if key[2] < 0:
            outsiders += 1
        else:
            insiders += 1
    live_counts.add("outsider", outsiders)
    live_counts.add("insider", insiders)


def _line(label: str, total: int) -> live_counts.Line:
    def line(c: Mapping[str, int], seconds: float) -> str:
        done = c["outsider"]
        text = (f"{label}: {done:,} of {total:,} outsider attacks, {c['insider']:,} insider attacks settled, "
                f"{seconds:.0f} s")
        left = time_left(done, total, seconds)
        return text + (f" (outsiders: {left})" if left else "")
    return line


@contextmanager
def reporting(log: Callable[[str], None] | None, total: int, label: str) -> Iterator[None]:
    """Report the attacks :func:`count` settles to ``log`` while the block runs and when
    it ends (``total``: the outsider attacks listed), each line starting with ``label``;
    see :func:`tablesafe.live_counts.reporting`."""
    with live_counts.reporting(log, ("outsider", "insider"), _line(label, total)):
        yield
