"""Time limits counted in LP work, so that a search stops at the same point in every run.

A search that runs until a time limit (``optimal``'s rounds and neighbourhoods, the
cleanup of complements) returns whatever it had found when the clock stopped it: on a
loaded machine less than on an idle one, so two runs on the same input give different
patterns. :class:`WorkClock` measures the limit in LP work instead
(:func:`tablesafe.audit.lp.lp_work`, converted to seconds at :data:`WORK_PER_SECOND`);
the real clock stays the outer guard that keeps the time limit, and the clock records
when it was the guard that stopped the search (the pattern then depends on the machine,
and the stats say so).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from tablesafe.audit.lp import lp_work
from tablesafe.suppress.attack_runs import OutOfTime

T = TypeVar("T")

WORK_PER_SECOND = 40_000.0
"""Work units (:func:`~tablesafe.audit.lp.lp_work`) counted as one second. Measured alone
on this project's 2-core machines (thirty-third session): ``optimal`` on Castro's
HIE1372D, HIER13, JJTABEL3, TABLE7, TABLE8 and TOYSARAH did 31,600-65,700 units per
second (with a MIP's iterations weighed as ten: 40,000-60,000 on HIE1372D, TABLE7 and
TABLE8); the cleanups of the generated 2-D and 3-D tables with holdings 41,600-68,200
(HIER13's 23,100). A second of work is then at most about a second of time."""


GUARD_SLACK = 1.2
"""How much longer than its limit a search bounded by work may run by the clock before
the guard stops it: a machine up to this much slower than :data:`WORK_PER_SECOND`
assumes still ends the search by work, at the same point as every other run (what
follows the search is bounded by the run's own deadline)."""


@dataclass
class WorkClock:
    """Seconds of LP work, with the real clock as the outer guard.

    ``now()`` advances with the LP work this process does (one second per
    ``rate`` units); deadlines are given on this clock. ``guard`` (a ``time.monotonic()``
    value) ends every search anyway; ``guarded`` records that it did. ``hurried_estimate``:
    when a ``fast`` start searched on this clock gave up, the seconds a hurried pass of
    local certificates over its targets is estimated to take
    (:func:`~tablesafe.suppress.fast_pace.hurried_seconds`; ``None``: no estimate).
    """

    rate: float = WORK_PER_SECOND
    guard: float = float("inf")
    guarded: bool = False
    hurried_estimate: float | None = None

    @classmethod
    def for_limit(cls, seconds: float | None, slack: float = GUARD_SLACK) -> WorkClock:
        """A clock for a search limited to ``seconds`` of work, whose guard is ``slack``
        times that from now (none without a limit)."""
        return cls(guard=float("inf") if seconds is None else time.monotonic() + slack * float(seconds))

    def now(self) -> float:
        """Seconds of work done so far by this process (an arbitrary origin)."""
        return lp_work() / self.rate

    def passed(self, deadline: float) -> bool:
        """Whether ``deadline`` (on this clock) or the guard has passed."""
        if self.now() > deadline:
            return True
        if time.monotonic() > self.guard:
            self.guarded = True
            return True
        return False

    def until_guard(self, step: Callable[..., T], *args: Any, **kwargs: Any) -> T | None:
        """``step(*args, deadline=guard, **kwargs)`` (a step that raises
        :class:`~tablesafe.suppress.attack_runs.OutOfTime` past its ``deadline``, such as
        ``run_attacks``); ``None`` when the guard ended it, which the clock records."""
        try:
            return step(*args, deadline=self.guard, **kwargs)
        except OutOfTime:
            self.guarded = True
            return None

    def real_left(self) -> float:
        """Seconds of real time before the guard (a solver's own time limit)."""
        return max(self.guard - time.monotonic(), 0.0)

    def units(self, seconds: float) -> int:
        """``seconds`` on this clock in work units."""
        return int(seconds * self.rate) if seconds < float("inf") else 2**62
