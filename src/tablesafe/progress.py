"""Progress of long stages: a live line on a terminal, plain timestamped lines in a log.

A rich live display draws nothing when standard error is not a terminal (a log file, a
CI job), so a long run looked frozen there. :class:`Progress` writes the same news either
way: on a terminal a rich status line that is updated in place, otherwise one plain line
at most every ``every`` seconds (and always the last one), each with counts and an
estimate of the time left.
"""

from __future__ import annotations

import re
import sys
import time
from typing import Self, TextIO


def time_left(done: int, total: int, seconds: float) -> str | None:
    """"about N s left" for ``done`` of ``total`` steps in ``seconds``, at that rate;
    None before the first step, after the last, or with no time spent."""
    if 0 < done < total and seconds > 0:
        return f"about {seconds * (total - done) / done:.0f} s left"
    return None


class Progress:
    """Reports ``done`` of ``total`` steps of a named stage, with the time left.

    Args:
        label: what is being done (e.g. ``"modular: subtables"``).
        total: number of steps, if known.
        stream: where to write (standard error by default).
        every: seconds between plain lines when the stream is not a terminal.
        enabled: False makes every call a no-op.
    """

    def __init__(self, label: str, total: int | None = None, *, stream: TextIO | None = None,
                 every: float = 10.0, enabled: bool = True) -> None:
        self.label = label
        self.total = total
        self.stream = stream if stream is not None else sys.stderr
        self.every = every
        self.enabled = enabled
        self.t0 = time.monotonic()
        self._last = -float("inf")
        self._stage = ""
        self._status = None
        if enabled and getattr(self.stream, "isatty", lambda: False)():
            from rich.console import Console

            self._status = Console(file=self.stream).status(label)
            self._status.start()

    def line(self, done: int, note: str = "") -> str:
        """The text of one report: label, counts, elapsed and estimated time left."""
        spent = time.monotonic() - self.t0
        parts = [self.label]
        if self.total:
            parts.append(f"{done:,}/{self.total:,}")
            left = time_left(done, self.total, spent)
            if left:
                parts.append(left)
        parts.append(f"{spent:.0f} s")
        if note:
            parts.append(note)
        return ", ".join(parts)

    def update(self, done: int, note: str = "", *, force: bool = False) -> None:
        """Report progress (throttled when writing plain lines)."""
        self._show(self.line(done, note), force)

    def say(self, note: str) -> None:
        """Report a message without counts. Plain lines are throttled within a stage
        (the words before the first number or colon: "subtable", "audit repair round");
        the first message of a new stage is always written."""
        stage = re.match(r"[^\d:,]*", note)
        key = stage.group().strip() if stage else ""
        self._show(f"{self.label}: {note}", key != self._stage)
        self._stage = key

    def close(self, note: str = "") -> None:
        """End the report (the last plain line is always written)."""
        if self._status is not None:
            self._status.stop()
            self._status = None
        elif note or self.total:
            self._show(self.line(self.total or 0, note), True)

    def _show(self, text: str, force: bool) -> None:
        """Update the live line, or write a plain line unless one was written lately."""
        if not self.enabled:
            return
        if self._status is not None:
            self._status.update(text)
            return
        now = time.monotonic()
        if force or now - self._last >= self.every:
            self._last = now
            print(f"[{time.strftime('%H:%M:%S')}] {text}", file=self.stream, flush=True)

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
