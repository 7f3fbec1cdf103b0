"""When ``fast``'s first pass hurries, when its chains start, and how long one of its LPs
may take: the pace rules of :class:`~tablesafe.suppress.fast_first_pass.FirstPass`, with
the measurements behind their constants.

A pass with a time limit keeps three clocks apart: its hurry (a quicker search, by its
LP work or, as a guard, by the clock and its pace so far), its chains (certificates
without an LP for the targets left, started early enough for them and for the steps
after the pass), and the cap on each of its LPs (so that no single LP spends the time
the hurried search or the chains need).
"""

from __future__ import annotations

from typing import Any

__all__ = ["CHAIN_MIN_SHARE", "CHAIN_SECONDS", "CHAIN_TRIAL", "FINISH_SECONDS", "HURRY_PACE_FROM",
           "HURRY_PACE_GAIN", "HURRY_PACE_WORK_GAIN", "LP_CAP_FLOOR", "PACED_CHAINS", "PACED_FROM", "chains_due",
           "chains_needed", "chains_start", "hurried_seconds", "pace_hurries_at"]

CHAIN_SECONDS = 0.0009
"""Seconds per target still open when the chains start (see :func:`chains_needed`): a
chain's shared direction closes other targets, so not every open target needs one.
Measured on the generated 60,112-cell three-way table with holdings (``fast`` at a 60 s
limit): from 12,241 open targets, 5,371 chains in 10.2 s, 0.83 ms per open target."""
HURRY_PACE_FROM = 0.1
"""Share of the time before ``hurry_after`` a pass runs before its pace so far may make
it hurry (:meth:`~tablesafe.suppress.fast_first_pass.FirstPass._short_of_time`): when the targets left would not be reached
before ``hurry_after`` even at :data:`HURRY_PACE_GAIN` times the seconds per target so
far. A pass that hurries only at the guard has spent the time before it on searches it
cannot finish, and the hurried ones left then overrun the limit; on Castro's problems
without a table structure the hurried search (LPs on guided regions of large blocks) is
also no dearer. Measured with ``fast`` at 10 s (fifty-second session): NINENEW hurried
after 21 targets by the old guard, 13.7 s and 29.21 M; TWO5IN6 after 5, 12.1 s and
24.05 M; hurried from the start, 5.5 s and 27.24 M, 5.1 s and 23.98 M; by this rule,
7.5 s and 27.61 M, 6.5 s and 23.97 M. The share keeps the first targets' noise out:
those are the largest needs, and often the slowest."""
CHAIN_TRIAL = 20
"""Chains a pass tries before it judges whether they are worth trying
(:data:`CHAIN_MIN_SHARE`)."""
CHAIN_MIN_SHARE = 0.1
"""Share of the chains tried that must find a certificate for the pass to go on trying
them; below it each target left goes straight to the (hurried) search. On Castro's
problems without a table structure the relation chains found none (fifty-second
session, ``fast`` at 5 s: NINENEW 0 of 91, TWO5IN6 0 of 29; ``modular`` at 10 s: 0 of
220 and 0 of 65, HIER16 0 of 6) at 5-12 ms each before the search every target then
needed: completing ``modular``'s pattern on NINENEW within a 1.85 s limit took 10.9 s
against 6.3 s within 100 s, the same certificates."""
HURRY_PACE_GAIN = 10.0
"""How many times quicker than the unhurried search the hurried one is taken to be when
a pass judges by its pace whether it must hurry (:data:`HURRY_PACE_FROM`). Measured per
target reached (fifty-second session, ``fast``): Castro's HIER16 at 60 s 0.47 s
unhurried, 0.03 s hurried (16x); NINENEW at 10 s about 1.1 s and 7 ms. Taking the
unhurried pace itself hurried HIER16 after 2 targets, 27.4 s and 36.56 M, where the
guard's hurry after 24 targets gave 54.5 s and 34.95 M."""
HURRY_PACE_WORK_GAIN = 4.0
"""The pace rule of :data:`HURRY_PACE_GAIN` counted in LP work (the same target in every
run; the clock's rule stays as the guard): a pass hurries once its work so far, and the
targets left at this many times less work each than the unhurried search's so far, would
pass the job's ``hurry_work``. Lower than the clock's gain: measured on the 12,180-cell
three-way table with fan-outs 4x6, 3x8 and 2x6 (sixty-first session, ``fast`` under its
automatic limit of 303.6 s), the hurried search did 545 units a target, the unhurried one
about 1,500 a target over its first 1,500 targets and 2,500 over the next 900; by the
clock's rule alone it hurried where the clock stopped it, after 1,347-2,388 targets, and
withheld 23-88 M."""
LP_CAP_FLOOR = 0.05
"""Seconds a local LP of a pass with a time limit may always take. Beyond that, each LP
may take only the time before the pass must hurry, or before the chains of the open
targets must start (:meth:`~tablesafe.suppress.fast_first_pass.FirstPass._capped_protect`); one past the first hurries the
search, one past the second leaves its target, and the targets after it, to chains.
Measured on the generated four-way ``rand333`` (``fast`` at 10 s,
sixty-sixth session): one hurried whole-block LP of 7,125 cells took 4.3-5.2 s of the
search's time, and the run ended at 11.0-15.6 s."""
FINISH_SECONDS = 0.00025
"""Seconds per target of the run (all groups) that the steps after the first pass are
expected to take: the certificates' frame and their check. Measured on the same run:
1.3-1.4 s and 2.3 s for 18,409 targets, 0.2 ms per target."""


def chains_needed(job: Any, now: float, left: int) -> bool:
    """Whether the ``left`` open targets of this group must get chains from ``now``
    (seconds after the job's start) for the run to end within ``job.limit``: past
    :func:`chains_start`. Before this, a fixed share of the limit (``chain_after``) was
    the only trigger: at 60 s the 60,112-cell three-way table reached it with 4,026
    targets left and ended at 65.7 s, the completion of ``modular``'s pattern there
    (21 s left) at 66.9 s."""
    if job.limit is None:
        return False
    return now > chains_start(job, left)


def chains_start(job: Any, left: int) -> float:
    """Seconds after the job's start by which the chains of ``left`` open targets must
    begin for the run to end within ``job.limit`` (not ``None``): :data:`CHAIN_SECONDS`
    each, and :data:`FINISH_SECONDS` per target of the run for the steps after the pass."""
    return float(job.limit - left * CHAIN_SECONDS - job.n_targets * FINISH_SECONDS)


PACED_CHAINS = True
"""Whether a pass that has made :data:`PACED_FROM` hurried searches starts its chains
only when :func:`chains_needed` says so (the slowest search so far, and the chains and
last steps of the targets left, reaching the limit), not already at the job's
``chain_after`` (a fixed share of the limit, kept for passes that hurried too late to
know their pace). On a table's boxes the chains climb to its largest totals. Measured
on the generated three-way ``rand345`` (10,570 cells, ``fast`` at 20 s, sixty-eighth
session): at ``chain_after`` (17.4 s) 52-159 targets were left, whose hurried searches
took about 10 ms each, and their boxes took the withheld value from 82.0 M to 156-243 M
in 6 of 25 runs; with this rule 3 of 16 runs needed chains (143-198 M, the slowest
runs)."""

PACED_FROM = 5
"""Hurried searches after which a pass's pace is taken as known (:data:`PACED_CHAINS`)."""


def chains_due(job: Any, now: float, ahead: float, left: tuple[int, int], hurried: int) -> bool:
    """Whether a pass gives the targets it has left chains from ``now`` (seconds after the
    job's start) on: past the job's ``chain_after`` while fewer than :data:`PACED_FROM`
    of its searches have hurried (:data:`PACED_CHAINS`; ``hurried``: how many did), or when
    :func:`chains_needed` holds at ``ahead`` (``now`` and the slowest search so far) for
    both counts of ``left``: the group's targets not reached yet and those still open."""
    paced = PACED_CHAINS and hurried >= PACED_FROM
    if job.chain_after is not None and now > job.chain_after and not paced:
        return True
    return chains_needed(job, ahead, left[0]) and chains_needed(job, ahead, left[1])


def hurried_seconds(ran: float, reached: int, left: int) -> float:
    """Seconds a hurried search would take over ``left`` targets, when an unhurried one
    reached ``reached`` in ``ran`` seconds: that pace, :data:`HURRY_PACE_GAIN` times
    quicker."""
    return ran / reached * left / HURRY_PACE_GAIN


def pace_hurries_at(hurry_after: float, began: float, reached: int, size: int) -> float:
    """Seconds after the job's start at which the pace rule of
    :meth:`~tablesafe.suppress.fast_first_pass.FirstPass._short_of_time` would hurry a pass
    that began at ``began`` and has ``reached`` of its ``size`` targets behind it, if no
    more were reached before: ``hurry_after`` when none is behind it yet."""
    if reached <= 0:
        return hurry_after
    # t + (t - began) / reached * (size - reached) / GAIN = hurry_after, solved for t
    a = (size - reached) / (reached * HURRY_PACE_GAIN)
    return max((hurry_after + began * a) / (1.0 + a), began + HURRY_PACE_FROM * hurry_after)
