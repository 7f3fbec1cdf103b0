"""The repairs that make a search's pattern safe for the whole table, and what happens
when one runs out of time (see :mod:`tablesafe.suppress.dispatch` for when each runs).

- :func:`lp_repair`: every sensitive cell attacked by LP, complements added until all
  attacks pass (:func:`tablesafe.suppress.protection.repair`), the subtables' tables
  answering what they can;
- :func:`lp_repair_out_of_time`: after that repair ran out of time, ``optimal``'s own
  tables prove its pattern, or the certificates complete it (:func:`fall_back`);
- :func:`audit_guided_repair`: the audit names the failing attacks, only those are
  repaired (:mod:`tablesafe.suppress.audit_repair`);
- :func:`insider_gaps`: single respondents left without a certificate get their attacks
  by LP while time is left.
"""

from __future__ import annotations

import time

import numpy as np
import pandas as pd

from tablesafe.problem import Problem
from tablesafe.suppress.attacker import Bounds
from tablesafe.suppress.proof import with_true_offsets
from tablesafe.suppress.protection import OutOfTime, repair
from tablesafe.suppress.settled import Audited, Settled, settled_targets
from tablesafe.suppress.subtable_tables import whole_table_certificates

__all__ = [
    "FALLBACK_SHARE",
    "audit_after_completion",
    "audit_guided_repair",
    "certificate_tables",
    "fall_back",
    "fallback_reserve",
    "insider_gaps",
    "lp_repair",
    "lp_repair_out_of_time",
    "repair_window",
    "settled_by",
]


def lp_repair(problem: Problem, bounds: Bounds, found: np.ndarray, subtable_tables: list, stats: dict,
              deadline: float, log=None) -> tuple[np.ndarray, dict]:
    """The attacker-LP repair of the search's pattern (:func:`repair`), the subtables'
    tables that are certificates of the whole table answering their attacks; its
    figures go into ``stats``. Raises :class:`OutOfTime` past ``deadline``."""
    t_repair = time.monotonic()
    known = whole_table_certificates(problem, bounds, found, subtable_tables)
    stats["repair_known_tables"] = len(known)
    withheld, atts, rounds = repair(problem, bounds, found, deadline=deadline, known=known, progress=log)
    added = withheld & ~found
    stats.update(repair_seconds=time.monotonic() - t_repair, repair_rounds=rounds,
                 repair_added=int(added.sum()), repair_added_value=float(np.abs(problem.value[added]).sum()))
    return withheld, atts


def lp_repair_out_of_time(problem: Problem, bounds: Bounds, found: np.ndarray, proofs: list, out: OutOfTime,
                          stats: dict, log, deadline: float) -> tuple[np.ndarray, dict, str]:
    """After the attacker-LP repair of ``found`` ran out of time: (pattern, attacks,
    route). The search's pattern checked with the tables that proved it
    (``optimal_pattern(proofs=)``) as known, route ``"lp"``, when there are such tables
    and that check ends before ``deadline``; otherwise the pattern as far as the repair
    got, for the certificates (:func:`fall_back`). Only then: the repair's sparse tables
    leave the cleanup less to solve again (the search's at once, ``optimal`` at 30 s:
    JJTABEL3 694 M against 658 M, 2k3d 7.56 M against 7.07 M), but where the repair does
    not fit (``wide2d``, 4,961 cells, 30 s) the certificates withheld 44,895 for 1,898."""
    if proofs:
        try:
            withheld, atts = lp_repair(problem, bounds, found, proofs, stats, deadline, log)
        except OutOfTime:
            pass
        else:
            stats.update(repair_timed_out="attacker-LP repair", repair_by_search_tables=True)
            if log:
                log("attacker-LP repair out of time: the search's own tables prove its pattern")
            return withheld, atts, "lp"
    return fall_back(stats, "attacker-LP repair", out, found, log), {}, "certificates"


FALLBACK_SHARE = 0.25
"""Share of the time limit kept for the certificates when a repair has not finished: a
repair (attacker LPs or audit-guided) still running at ``1 - FALLBACK_SHARE`` of the limit
stops, and the pattern as far as it got is completed and proved by local certificates
(:func:`tablesafe.suppress.fast.fast_pattern` seeded with it)."""


FALLBACK_ESTIMATE_MARGIN = 2.5
"""How many times its estimate (``stats["start_hurried_estimate"]``: the pace of a ``fast``
start that gave up, :func:`~tablesafe.suppress.fast_pace.hurried_seconds`) the
certificates are kept when that is more than ``FALLBACK_SHARE`` of the limit. Measured
with ``modular`` at 10 s on Castro's problems without a table structure (fifty-second
session): the start gave up after 1.5 s with estimates of 2.8 s (NINENEW) and 8.5 s
(TWO5IN6); the certificates completing the audit-guided repair's pattern then took
5.5-7.5 s and 5.4 s, so that with ``FALLBACK_SHARE`` alone the runs ended at 13-15 s."""


def fallback_reserve(time_limit: float, stats: dict) -> float:
    """Seconds at the end of the limit kept for the certificates in case a repair does
    not finish: ``FALLBACK_SHARE`` of it, or ``FALLBACK_ESTIMATE_MARGIN`` times the
    search's estimate of what they take, whichever is more."""
    share = FALLBACK_SHARE * time_limit
    estimate = stats.get("start_hurried_estimate")
    return share if estimate is None else max(share, FALLBACK_ESTIMATE_MARGIN * float(estimate))


def start_hurry_reason(stats: dict, time_limit: float) -> str | None:
    """Why the certificates that complete a pattern must hurry from their start (the
    text for ``stats["completion_hurried"]``), or ``None`` when they need not: they must
    when the search's ``fast`` start gave up with an estimate of their hurried pass
    (``stats["start_hurried_estimate"]``) that, taken ``FALLBACK_ESTIMATE_MARGIN``
    times, is more than :data:`START_HURRY_SHARE` of their ``time_limit``. (The estimate
    is the start's pace by the clock, so a run that hurries for it lists the step among
    those the clock decided.)"""
    estimate = stats.get("start_hurried_estimate")
    if estimate is None or FALLBACK_ESTIMATE_MARGIN * float(estimate) <= START_HURRY_SHARE * time_limit:
        return None
    return (f"the certificates hurried from their start: the search's start estimated "
            f"their hurried pass at {float(estimate):.1f} s of their {time_limit:.1f} s")


START_HURRY_SHARE = 0.25
"""See :func:`start_hurry_reason` (with its margin of 2.5: an estimate of more than a tenth
of the limit). The unhurried search's first LPs, on blocks of most of the table, then
take the time the hurried pass needs, and their pace would make it hurry within a few
targets anyway. Measured with ``modular`` on Castro's instances (sixty-fourth session).
At 10 s, with estimates of 2.4-2.5 s against a limit of 6.8-7.0 s on NINE12, 3.5 against
6.3 on NINENEW, 5.9 against 6.3 on TWO5IN6 and 0.85 against 7.1 on NINE5D, unhurried at
first they ran 11.0-13.3 s, 9.0-11.4 s, 10.4-12.4 s and 9.5-11.2 s, the certificates' first
pass ending 0.4-4.2 s past its limit (on NINE5D the hurried search was only 2.3 times
quicker per target than the unhurried one, and the relation chains found nothing);
hurried from their start 7.1-9.3 s, 7.0-8.7 s, 5.6-6.8 s and 7.1-7.8 s, withholding 1 %,
7 % and 1 % less and, on NINE5D, 10 % more. At 30 s (the same rule hurried NINE12,
NINENEW, TWO5IN6, HIER16, HIER163A and HIER163D): NINE12 29.2 M instead of 32.6 M,
NINENEW 27.7 M instead of 29.3 M, HIER16 37.5 M instead of 39.6 M, HIER163A and
HIER163D 6 % and 5 % more. Estimates of CBS and TABLE3 stay below it (0.26 s and 0.11 s
at 10 s): hurried from the start, CBS withheld 339,556 instead of 403, TABLE3 44 % more."""


REPAIR_AFTER_GIVING_UP = False
"""Whether the pattern of a problem without table structure whose search's heuristic
(``fast``) start gave up is still repaired, by attacker LPs or the audit-guided repair:
it then holds the primaries (and, with ``optimal.KEEP_PARTIAL_START``, the cells of the
few certificates the start found). Off: the certificates complete it, with the time
left. Measured on Castro's instances (fifty-third session):

- ``modular``'s audit-guided repair of the primaries at 30 s withheld 2,600 times the
  certificates' value on DALE (677,127 against 256), 22-25 % more on NINE12 and NINE5D
  (instances the benchmarks had not seen) and on NINE5D ran to 35.5 s: the certificates
  completing its pattern took 11 s where the reserve was 7.5 s (from the primaries their
  hurried pass takes 2.6 s there). It withheld less only on NINENEW (-6 %) and TWO5IN6
  (-1 %).
- ``optimal``'s attacker-LP repair of the primaries (up to ``LP_REPAIR_MAX_CELLS``
  cells; before the search returned them, it checked and repaired them itself) on
  HIER163A at 120 s: 444 of 448 attacks still failed after the search's 60 s, the
  dispatcher's repair added 390 cells in 30 s more and the hurried certificates the rest,
  34.8 M, where ``fast`` withholds 30.7 M at 30 s."""


def repair_window(route: str, t0: float, time_limit: float, stats: dict, log) -> tuple[float, str]:
    """When a repair of the search's pattern must stop (a ``time.monotonic()`` value:
    :func:`fallback_reserve` before the end of the limit that began at ``t0``), and the
    route: ``"certificates"`` instead of a repair (``"guided"`` or ``"lp"``) when the
    search estimated the certificates' time and that moment has passed already
    (``stats["repair_skipped"]`` says so), and instead of either when the search's
    heuristic start gave up (``stats["start_check_skipped"]``: the repair would start from
    little more than the primaries; ``stats["completion_chosen"]`` says so; see
    :data:`REPAIR_AFTER_GIVING_UP`); ``route`` otherwise."""
    deadline = t0 + time_limit - fallback_reserve(time_limit, stats)
    if route in ("guided", "lp") and stats.get("start_check_skipped") and not REPAIR_AFTER_GIVING_UP:
        stats["completion_chosen"] = ("local certificates: the search's start gave up, so a repair would have "
                                      "started from little more than the primaries")
        if log:
            log(stats["completion_chosen"])
        return deadline, "certificates"
    if route in ("guided", "lp") and "start_hurried_estimate" in stats and time.monotonic() >= deadline:
        stats["repair_skipped"] = ("no time for a repair: the certificates need what is left "
                                   f"(estimated at {stats['start_hurried_estimate']:.1f} s)")
        if log:
            log(stats["repair_skipped"])
        return deadline, "certificates"
    return deadline, route


def fall_back(stats: dict, what: str, out: OutOfTime, found: np.ndarray, log) -> np.ndarray:
    """Record that ``what`` ran out of time; returns the pattern as far as it got, which
    the certificates complete and prove."""
    grown = out.pattern_or(found)
    stats["repair_timed_out"] = what
    stats["repair_added_before_timeout"] = int((grown & ~found).sum())
    if log:
        log(f"{what} out of time: local certificates complete and prove the pattern")
    return grown


SETTLED_TARGETS = True
"""Whether the completion of a repair out of time takes the tables of the attacks that
repair settled as the certificates of their targets (:mod:`tablesafe.suppress.settled`)
and searches only for the others (off: it searches for every target)."""


def settled_by(problem: Problem, bounds: Bounds, attacks: dict | None, pattern: np.ndarray, stats: dict,
               singleton: bool, audited: Audited | None = None) -> Settled | None:
    """The targets the ``attacks`` of a repair out of time prove under ``pattern``, and
    those its last audit (``audited``) proved (None without either, or with
    :data:`SETTLED_TARGETS` off); ``stats["settled_targets"]``,
    ``stats["settled_by_audit"]`` and ``stats["settled_seconds"]`` say how many and how
    long finding them took."""
    if not (attacks or audited) or not SETTLED_TARGETS:
        return None
    t = time.monotonic()
    settled = settled_targets(problem, bounds, attacks or {}, pattern | problem.sensitive, singleton, audited)
    stats["settled_targets"] = 0 if settled is None else len(settled.targets)
    if settled is not None and len(settled.audited):
        stats["settled_by_audit"] = len(settled.audited)
    stats["settled_seconds"] = time.monotonic() - t
    return settled


def audit_fits(audited: Audited | None, left: float, stats: dict) -> Audited | None:
    """``audited`` when the audit after the completion (:func:`audit_after_completion`),
    taken to last ``RECHECK_SHARE`` of that audit's seconds, fits in the ``left`` seconds
    of the limit; otherwise None (the certificates then prove every target, as without
    it; ``stats["settled_audit_left_out"]`` says so)."""
    from tablesafe.suppress.audit_repair import RECHECK_SHARE

    if audited is None or RECHECK_SHARE * audited.seconds <= left:
        return audited
    stats["settled_audit_left_out"] = (f"the audit after the completion (about {RECHECK_SHARE * audited.seconds:.0f} s) "
                                       f"would not fit in the {max(left, 0.0):.0f} s left")
    return None


def audit_after_completion(problem: Problem, bounds: Bounds, withheld: np.ndarray, settled: Settled,
                           certificates: pd.DataFrame, stats: dict, log):
    """The proof of a pattern completed by certificates for the targets an earlier
    audit (``settled.audit``) did not prove: the audit once more, of what can have
    changed since (the single respondents of those targets and of the cells withheld
    since; the criterion-1 verdicts afresh, settled without LPs where the earlier
    audit's tables or the certificates reach them), as the audit-guided repair's next
    round would have done. Returns the audit when it passes, else None (the pattern is
    then repaired without a deadline, as when certificates fail their check)."""
    from tablesafe.suppress.audit_repair import repair_audit

    assert settled.audit is not None
    if log:
        log("auditing what changed since the last audit of the repair")
    t = time.monotonic()
    truth = with_true_offsets(problem)
    # the targets that audit named (the others are ``settled.audited``), and the cells since
    recheck = (problem.sensitive & settled.audit.named, withheld & ~settled.audit.pattern)
    seeds = {**settled.audit.tables, **certificate_tables(problem, certificates)}
    keys, result = repair_audit(truth, withheld, bounds, recheck, seeds, log)
    stats["completion_audit_seconds"] = time.monotonic() - t
    stats["completion_audit_failures"] = len(keys)
    return None if keys else result


def certificate_tables(problem: Problem, certificates: pd.DataFrame) -> dict:
    """The tables of a certificates frame (columns ``target``, ``direction``, ``cell``,
    ``value``, ``insider``) as an audit's seeds: (cell positions, values) per certificate."""
    if not len(certificates):
        return {}
    index = pd.Index(problem.names.astype(str))
    frame = pd.DataFrame({"key": certificates["target"].astype(str) + "\x00" + certificates["direction"].astype(str)
                          + "\x00" + certificates["insider"].astype(str),
                          "cell": index.get_indexer(certificates["cell"].astype(str)),
                          "value": certificates["value"].to_numpy(dtype=float)})
    out: dict = {}
    for key, group in frame.groupby("key", sort=True):
        out[("certificate", key)] = (group["cell"].to_numpy(dtype=np.int64), group["value"].to_numpy(dtype=float))
    return out


def insider_gaps(problem: Problem, bounds: Bounds, withheld: np.ndarray, gaps: np.ndarray, stats: dict,
                 log, deadline: float) -> tuple[np.ndarray, dict]:
    """Targets whose single respondents' certificates are missing: their attacks are
    checked, and repaired, by attacker LPs while time is left (on any table size: the
    neighbourhood attacks keep them affordable); when time runs out they are flagged in
    the stats and the pattern stays as the certificates proved it."""
    if log:
        log(f"checking the attacks of single respondents on {len(gaps):,} cells without their certificate")
    t = time.monotonic()
    try:
        out, atts, rounds = repair(problem, bounds, withheld, targets=gaps, deadline=deadline, progress=log)
        stats["repair_rounds"] = rounds
        stats["repair_added"] = int((out & ~withheld).sum())
        stats["insider_gaps_checked"] = len(gaps)
        stats["insider_gaps_seconds"] = time.monotonic() - t
        return out, atts
    except OutOfTime:
        stats["repair_timed_out"] = "single respondents' attacks"
    stats["singleton_attacks_checked"] = False
    stats["insider_gaps"] = len(gaps)
    return withheld, {}


def audit_guided_repair(problem: Problem, bounds: Bounds, withheld: np.ndarray, stats: dict, log,
                        deadline: float = float("inf"), subtable_tables: list | None = None):
    """The audit names the failing attacks, only those get attacker LPs; see
    :mod:`tablesafe.suppress.audit_repair`. The subtables' certificates (``subtable_tables``,
    in table positions) seed the first audit: those that meet the whole table's relations
    settle verdicts and answer insiders without LPs. Returns the pattern and the audit it
    passed (on the problem as given, so that it can stand as the final audit)."""
    from tablesafe.suppress.audit_repair import audit_repair_proved

    if log:
        log("repairing: the audit names the cells still under-protected")
    t0 = time.monotonic()
    truth = with_true_offsets(problem)
    seeds = {i: (cells, truth.value[cells] + dev) for i, (_, cells, dev) in enumerate(subtable_tables or ())}
    out, rounds, passed = audit_repair_proved(truth, bounds, withheld, log=log, deadline=deadline,
                                              seeds=seeds or None)
    stats["repair"] = "audit-guided"
    stats["repair_rounds"] = rounds
    stats["repair_added"] = int((out & ~withheld).sum())
    stats["repair_added_value"] = float(np.abs(problem.value[out & ~withheld]).sum())
    stats["repair_seconds"] = time.monotonic() - t0
    return out, passed
