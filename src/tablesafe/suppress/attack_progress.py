"""Progress of a check of many attacks while it runs, also across forked workers.

A check of every sensitive cell (the repair's first check, :func:`~tablesafe.suppress.protection.repair`)
can run for minutes with nothing to show until it ends. While :func:`reporting` is
active, :func:`count` (called by :func:`~tablesafe.suppress.attack_runs.run_attacks` as it
settles attacks, in this process or in a worker forked from it) adds to counters in
shared memory, and a thread of the calling process reports them every
:data:`REPORT_EVERY` seconds: outsider attacks settled of those listed, insider attacks
settled so far, and the time left for the outsiders at the rate so far. Counting does
not change what the attacks find.
"""

from __future__ import annotations

import multiprocessing as mp
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager

__all__ = ["REPORT_EVERY", "count", "reporting"]

REPORT_EVERY = 2.0
"""Seconds between two reports of a running check (the log may throttle them further)."""


class _Counters:
    """Outsider and insider attacks settled, in memory shared with forked workers."""

    def __init__(self) -> None:
        ctx = mp.get_context("fork")
        self.outsider = ctx.Value("q", 0)
        self.insider = ctx.Value("q", 0)

    def add(self, outsiders: int, insiders: int) -> None:
        for v, n in ((self.outsider, outsiders), (self.insider, insiders)):
            if n:
                with v.get_lock():
                    v.value += n


_ACTIVE: _Counters | None = None


def count(keys: Iterable[tuple[int, int, int]]) -> None:
    """Count ``keys`` (target, direction, insider cell or -1) as settled, when a report is
    running (a no-op otherwise)."""
    if _ACTIVE is None:
        return
    outsiders = insiders = 0
    for key in keys:
        if key[2] < 0:
            outsiders += 1
        else:
            insiders += 1
    _ACTIVE.add(outsiders, insiders)


def _line(label: str, outsiders: int, total: int, insiders: int, seconds: float) -> str:
    text = f"{label}: {outsiders:,} of {total:,} outsider attacks, {insiders:,} insider attacks settled, {seconds:.0f} s"
    if 0 < outsiders < total:
        text += f" (outsiders: about {seconds * (total - outsiders) / outsiders:.0f} s left)"
    return text


@contextmanager
def reporting(log: Callable[[str], None] | None, total: int, label: str) -> Iterator[None]:
    """Report the attacks :func:`count` settles to ``log`` every :data:`REPORT_EVERY`
    seconds while the block runs, and once more when it ends (``total``: the outsider
    attacks listed). Nested reports, reports inside a worker and ``log=None`` do
    nothing."""
    global _ACTIVE
    if log is None or _ACTIVE is not None or mp.current_process().daemon:
        yield
        return
    counters = _Counters()
    stop = threading.Event()
    t0 = time.monotonic()

    def watch() -> None:
        while not stop.wait(REPORT_EVERY):
            log(_line(label, counters.outsider.value, total, counters.insider.value, time.monotonic() - t0))

    _ACTIVE = counters
    thread = threading.Thread(target=watch, name="attack-progress", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()
        _ACTIVE = None
        log(_line(label, counters.outsider.value, total, counters.insider.value, time.monotonic() - t0))
