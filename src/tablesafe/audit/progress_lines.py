"""What an audit reports while it runs: bounds settled (criterion 1), then targets
screened against their single respondents and suspects checked, with the time left of
the current phase at its rate so far (:func:`reporting`, on
:mod:`tablesafe.live_counts`, so that the forked workers of either phase count too)."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager, nullcontext
from typing import Any

from tablesafe import live_counts
from tablesafe.progress import time_left

__all__ = ["reporting"]

NAMES = ("bounds", "bounds_total", "insider", "insider_total", "suspect")


def _left(done: int, total: int, seconds: float) -> str:
    left = time_left(done, total, seconds)
    return f", {left}" if left else ""


def _line(prefix: str) -> live_counts.Line:
    started: dict[str, tuple[float, int]] = {}  # when the insider phase began, and its count then

    def line(c: Mapping[str, int], seconds: float) -> str:
        text = f"{prefix}{c['bounds']:,} of {c['bounds_total']:,} bounds settled"
        if not c["insider_total"]:
            return text + f", {seconds:.0f} s" + _left(c["bounds"], c["bounds_total"], seconds)
        s0, d0 = started.setdefault("insider", (seconds, c["insider"]))
        text += (f"; single respondents: {c['insider']:,} of {c['insider_total']:,} targets screened, "
                 f"{c['suspect']:,} suspects checked, {seconds:.0f} s")
        done, total = c["insider"] - d0, c["insider_total"] - d0
        return text + (_left(done, total, seconds - s0) if c["insider"] < c["insider_total"] else "")
    return line


@contextmanager
def reporting(progress: bool | Callable[[str], None]) -> Iterator[None]:
    """Report the audit's counts while the block runs: to ``progress`` when it is a
    function (a log), on a :class:`tablesafe.progress.Progress` of its own when it is
    True; nothing when False."""
    if not progress:
        yield
        return
    shown: Any = nullcontext()
    if callable(progress):
        log, prefix = progress, "audit: "  # another stage's log: say whose lines these are
    else:
        from tablesafe.progress import Progress

        shown = Progress("audit", every=5.0)  # its label names the stage
        log, prefix = shown.say, ""
    with shown, live_counts.reporting(log, NAMES, _line(prefix)):
        yield
