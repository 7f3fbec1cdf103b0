"""Counts of a long step while it runs, added to by forked workers too, and reported by
a thread of the calling process.

Inside :func:`reporting`, :func:`add` adds to named counters in shared memory (in this
process or in a worker forked from it), and a thread reports them every
:data:`REPORT_EVERY` seconds through a function that turns the counts and the seconds
so far into one line. The step's code only adds; it never waits for the report, so
counting changes nothing the step finds. Outside a report :func:`add` does nothing.
"""

from __future__ import annotations

import multiprocessing as mp
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager

__all__ = ["REPORT_EVERY", "active", "add", "reporting", "value"]

REPORT_EVERY = 2.0
"""Seconds between two reports (the log may throttle them further)."""

Line = Callable[[Mapping[str, int], float], str]
"""The report's text from the counts and the seconds since the report started."""


class _Counters:
    """Named counters in memory shared with forked workers."""

    def __init__(self, names: tuple[str, ...]) -> None:
        ctx = mp.get_context("fork")
        self.values = {name: ctx.Value("q", 0) for name in names}

    def add(self, name: str, n: int) -> None:
        v = self.values.get(name)
        if v is not None and n:
            with v.get_lock():
                v.value += n

    def read(self) -> dict[str, int]:
        # without the locks: the reporting thread never holds one while a worker is forked
        return {name: int(v.get_obj().value) for name, v in self.values.items()}


_ACTIVE: _Counters | None = None


def add(name: str, n: int = 1) -> None:
    """Add ``n`` to counter ``name`` of the running report (a no-op when none runs or
    it has no such counter)."""
    if _ACTIVE is not None and n:
        _ACTIVE.add(name, n)


def value(name: str) -> int:
    """Counter ``name`` of the running report so far (0 when none runs or it has no such
    counter)."""
    if _ACTIVE is None or name not in _ACTIVE.values:
        return 0
    return int(_ACTIVE.values[name].get_obj().value)


def active() -> bool:
    """Whether a report is running (in this process or the one that forked it)."""
    return _ACTIVE is not None


@contextmanager
def reporting(log: Callable[[str], None] | None, names: tuple[str, ...], line: Line) -> Iterator[None]:
    """Report counters ``names`` to ``log`` through ``line`` every :data:`REPORT_EVERY`
    seconds while the block runs, and once more when it ends. Does nothing with
    ``log=None``, inside a report already running (that one goes on counting) and in a
    worker process."""
    global _ACTIVE
    if log is None or _ACTIVE is not None or mp.current_process().daemon:
        yield
        return
    counters = _Counters(names)
    stop = threading.Event()
    t0 = time.monotonic()

    def watch() -> None:
        while not stop.wait(REPORT_EVERY):
            log(line(counters.read(), time.monotonic() - t0))

    _ACTIVE = counters
    thread = threading.Thread(target=watch, name="live-counts", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()
        _ACTIVE = None
        log(line(counters.read(), time.monotonic() - t0))
