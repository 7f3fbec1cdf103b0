"""The one entry point of secondary suppression: choose a method, then audit, repair, clean.

Whatever the method, the pattern goes through the same end, and an unsafe pattern is
never returned:

- Tables of up to ``LP_REPAIR_MAX_CELLS`` cells (``optimal`` and ``modular``): every
  sensitive cell is attacked by LP (:mod:`tablesafe.suppress.protection`), cells found
  under-protected get more complements until the whole table passes, complements no
  longer needed are dropped again (seed 003 B.2.b, "second pass"), and the audit area's
  independent audit must pass or :class:`~tablesafe.errors.AuditFailure` is raised.
- ``fast``, and every method on larger tables: each sensitive cell gets a local
  certificate (and one per single respondent next to it) from
  :func:`tablesafe.suppress.fast.fast_pattern`, seeded with the method's pattern so that
  it only adds cells where that pattern falls short (a search over the whole table
  leaves it the primaries when its own start gives up); the certificates are checked in
  one pass (:func:`tablesafe.audit.check_certificates`) and are the proof of safety;
  complements no certificate uses are dropped. Cells where a single respondent was left
  without its certificate get that respondent's attack by LP, and a repair, while time
  is left.
- ``modular`` on tables too large for the attacker LPs (up to ``AUDIT_GUIDED_MAX_CELLS``):
  the audit names the failing attacks and only those are repaired
  (:mod:`tablesafe.suppress.audit_repair`); the audit that passes is the proof.

Time limits: a repair still running at ``1 - FALLBACK_SHARE`` of the limit stops (earlier
when the search estimated that the certificates need more; no repair at all when that
leaves it no time: ``repair_window``), and the certificates complete and prove the
pattern as far as it got (the best it could prove); ``optimal``'s pattern is first proved
by the tables its search found.
"""

from __future__ import annotations

import contextlib
import time

import numpy as np

from tablesafe.errors import AuditFailure, InputError, TablesafeError
from tablesafe.parallel import worker_count
from tablesafe.problem import Pattern, Problem
from tablesafe.suppress import flow_attacks
from tablesafe.suppress.attack_certificates import certificates_frame
from tablesafe.suppress.attacker import Bounds
from tablesafe.suppress.cleanup import cleanup
from tablesafe.suppress.clock_steps import CLOCK_KEYS, clock_decided
from tablesafe.suppress.fast_options import FastOptions
from tablesafe.suppress.method_choice import auto_time_limit, choose_method
from tablesafe.suppress.methods import DEFAULT_METHOD, METHODS
from tablesafe.suppress.outsiders_first import outsiders_first, outsiders_instead
from tablesafe.suppress.proof import (
    AUDIT_STAT,
    final_audit,
    proven_by_certificates,
)
from tablesafe.suppress.protection import OutOfTime, repair
from tablesafe.suppress.repair_estimate import LP_REPAIR_MAX_CELLS, repair_route
from tablesafe.suppress.repairs import (
    FALLBACK_SHARE,
    audit_after_completion,
    audit_fits,
    audit_guided_repair,
    fall_back,
    insider_gaps,
    lp_repair,
    lp_repair_out_of_time,
    repair_window,
    settled_by,
    start_hurry_reason,
)
from tablesafe.suppress.settled import Audited, Settled
from tablesafe.suppress.subtable_tables import whole_table_certificates
from tablesafe.suppress.twins import Twins, collapse_twins, suppress_merged
from tablesafe.suppress.work_clock import GUARD_SLACK, WorkClock

MERGE_COPIES = True
"""Cells that copy another (a code without siblings, :mod:`tablesafe.suppress.twins`) are
merged before the search, which then solves the smaller problem; the pattern is proved
on the original. Measured with ``suppress(problem, "auto")`` on tau-ARGUS's test data
``tau_testW`` IndustryCode x Region (12,070 cells, 6,205 after merging; forty-fifth
session): 33.9 s and 10.22 M withheld without, 6.3 s and 10.14 M with."""

MERGE_RELATION_COPIES = False
"""Whether :func:`suppress` merges the copies of a problem without table structure
(``collapse_twins(..., relations_only=True)``). Off: measured on Castro's instances with
copies (forty-fifth session, all four methods at 30 s, benchmarks/RESULTS.md), the merge
cut the withheld value of HIER13 by 18 % (14.60 -> 11.90 M) and of TWO5IN6 ``fast`` by
18 %, but raised HIER16's ``modular`` and ``optimal`` by 18 % (37.5 -> 44.1 M), and
``fast`` on NINENEW's merged problem ran 50 s past its 30 s limit (its local LPs reach
further once the copies' relations are gone)."""

SEARCH_SHARE = 0.5
"""Share of the time limit for the method's own search; the rest is for the full-table
repair (or the certificates) and the cleanup."""
CLEANUP_SHARE = 0.25
"""Share of the time limit the optional cleanup may take at most, by the clock (the
outer guard: its work bound, :data:`CLEANUP_WORK_SHARE`, normally stops it first)."""
CLEANUP_WORK_SHARE = 0.04
"""Share of the time limit the cleanup may spend in seconds of LP work
(:class:`~tablesafe.suppress.work_clock.WorkClock`). A bound in work, not seconds, stops
the cleanup at the same complement in every run, so the pattern does not depend on the
load of the machine (two runs of the 1,872-cell three-way table of seed 2 had withheld
14.535 M and 14.552 M when a clock share stopped it). The complements are tried most
expensive first, so the later work releases less: measured on four tables whose cleanup
the bound stops (generated 3,080-cell three-way, 3,799-cell skewed two-way, 1,872-cell
three-way of seeds 2 and 3), a share of 0.10 instead of 0.15 cut the whole run by 14-20 %
(32.7 -> 26.2 s, 24.6 -> 21.0 s, 32.1 -> 27.6 s, 46.1 -> 40.9 s) for 0.1-0.7 % more
withheld value; 0.05 cut 25-41 % for 0.6-1.8 % more. Measured again in the sixty-third
session (``suppress(problem, "auto")``, two workers, quicker HiTaS masters without
strong branching at the time), 0.10 -> 0.04: the generated 1,872-cell three-way table
with holdings 24.3 -> 16.9 s for 7.388 -> 7.420 M (+0.4 %; tau-ARGUS MOD took 23.6 s
there and withheld 6.834 M), the 3,799-cell skewed two-way one 33.5 -> 20.5 s for 91.04
-> 91.58 M (+0.6 %); the cleanups of the 2,368-, 4,345-, 4,588- and 13,167-cell two-way
tables ended before either bound (the same patterns). Of the three-way table's 155,339
released at 0.10, 0.02 released 52 %, 0.04 80 %, 0.06 94 %."""


MODULAR_LP_REPAIR_MAX_CELLS = 30_000
"""``modular``'s pattern of a one- or two-way table is repaired by attacker LPs up to this
size. Measured on a generated 13,167-cell two-way table: the modular pattern (5.06 M) left
3 sensitive cells under-protected; the LP repair added 305 cells worth 1.55 M in 92 s,
while the local certificates, which look for a proof within boxes around each cell and
miss the ones that run through several subtables, added 961 cells worth 39.9 M. On the
generated 13,851-cell three-way table the LP repair's first check had not finished after
15 minutes (blocks of thousands of cells, insider attacks), so three-way tables keep the
certificates above ``LP_REPAIR_MAX_CELLS``."""


def _lp_repair_max(method: str, problem: Problem) -> int:
    two_way = problem.model is not None and len(problem.model.dims) <= 2
    return MODULAR_LP_REPAIR_MAX_CELLS if method == "modular" and two_way else LP_REPAIR_MAX_CELLS


def subtable_start(problem: Problem, bounds: Bounds, time_limit: float | None, tables: list):
    """``optimal``'s start on a table with structure: ``modular``'s HiTaS subtables with
    their insiders, in this process (its work clock counts theirs)."""
    from tablesafe.suppress.modular import modular_pattern

    return modular_pattern(problem, bounds, time_limit=time_limit, insiders=True, workers=1, tables=tables)


def _logger(progress: bool, method: str):
    """A log function for the method's messages and the context that ends its display."""
    if not progress:
        return None, contextlib.nullcontext()
    from tablesafe.progress import Progress

    rep = Progress(f"{method} suppression", every=5.0)
    return rep.say, rep


def suppress(
    problem: Problem,
    method: str = DEFAULT_METHOD,
    *,
    time_limit: float | None = None,
    certificates: bool = False,
    singleton: bool = True,
    capacity: bool = False,
    progress: bool = False,
    seed: int = 0,
    audit: bool = True,
    certificates_needed: bool | None = None,
) -> Pattern:
    """Choose complementary suppressions so that every sensitive cell is protected.

    Args:
        problem: the cells, relations, bounds and protection levels.
        method: ``auto`` (:func:`choose_method`), ``optimal`` (Fischetti-Salazar cuts), ``modular`` (HiTaS
            subtables), ``fast`` (large tables) or ``none`` (primaries only, no audit).
        time_limit: seconds for the whole run but the final audit: the method's search
            gets ``SEARCH_SHARE`` of it, the optional cleanup at most ``CLEANUP_SHARE``;
            a repair still running at ``1 - FALLBACK_SHARE`` of it stops, and local
            certificates complete and prove the pattern as far as it got (their search,
            which proves it, is not stopped). ``None``: :func:`auto_time_limit`.
        certificates: attach a certificate per sensitive cell and direction.
        singleton: protect against the single respondent of a withheld sensitive cell
            next to the target (the singleton problem of the Handbook on Statistical
            Disclosure Control).
        capacity: let cells move down only by their protection capacity when they protect
            others (Loeve's notes on protection levels, section 7.1; needs
            ``problem.capacity``).
        progress: show progress with rich. seed: random seed of the solvers (results
            are deterministic for a seed). audit: run the final independent audit.
        certificates_needed: (internal) ``False`` keeps the certificates where they prove
            the pattern but lets ``fast``'s second try replace it, proved by an audit;
            default as ``certificates`` (the copies' route passes the caller's flag).

    Returns:
        The pattern; ``stats`` holds seconds, cost, gap (optimal), repair and cleanup
        counts.

    Raises:
        AuditFailure: a sensitive cell cannot be protected, or the final audit fails.
        InputError: unknown method.
    """
    if method not in METHODS:
        raise InputError(f"unknown suppression method {method!r}; choose one of {', '.join(METHODS)}")
    t0 = time.monotonic()
    sens = problem.sensitive
    if method == "none":
        return Pattern(sens.copy(), method="none", stats={"seconds": time.monotonic() - t0, "safe": False})
    twins = collapse_twins(problem, MERGE_RELATION_COPIES) if MERGE_COPIES else None
    if twins is not None:  # copies of cells (codes without siblings): solved once, proved here
        return _suppress_copies(problem, twins, method, time_limit, t0, dict(
            singleton=singleton, capacity=capacity, progress=progress, seed=seed), audit, certificates)
    given_limit = time_limit
    if time_limit is None:
        time_limit = auto_time_limit(problem.n)
    chosen_reason = ""
    if method == "auto":
        method, chosen_reason = choose_method(problem, time_limit)
    deadline = t0 + float(time_limit)
    if flow_attacks.may_flow(problem):
        flow_attacks.warm()  # before any solve's clock (in the run's time, its limit included)

    def left() -> float:
        return max(deadline - time.monotonic(), 0.0)
    bounds = Bounds.of(problem, capacity=capacity, singleton=singleton)
    log, status = _logger(progress, method)
    stats: dict = {}
    fast_certs = None
    withheld = sens.copy()
    # how the search's pattern is completed and proved
    route = ("guided" if _audit_guided(method, problem, capacity, singleton)
             else "certificates" if method == "fast" or problem.n > _lp_repair_max(method, problem)
             else "lp")
    subtable_tables: list = []  # the subtables' passing attacks (modular, attacker-LP repair)
    search_proofs: list = []  # the tables that proved optimal's pattern (a repair out of time takes them)
    with status:
        search = dict(time_limit=_search_limit(problem, float(time_limit), route), seed=seed, log=log,
                      completed_by_caller=route in ("certificates", "guided") or not problem.structured)
        if method == "optimal":
            from tablesafe.suppress.optimal import optimal_pattern

            withheld, stats = optimal_pattern(problem, bounds, subtables=subtable_start, **search,
                                              proofs=search_proofs if route == "lp" else None)
        elif method == "modular":
            from tablesafe.suppress.modular import modular_pattern

            withheld, stats = modular_pattern(problem, bounds, insiders=_subtable_insiders(route), **search,
                                              tables=subtable_tables if route in ("lp", "guided")
                                              or SUBTABLE_TABLES_SETTLE else None)
        found = withheld | sens  # the search's pattern, before any repair
        route = repair_route(problem, method, route, found, float(time_limit), stats, log, guided_ok=not capacity)
        withheld, atts, passed, route, settled = _repaired(
            problem, bounds, method, route, found, subtable_tables, search_proofs, stats, log,
            (t0, float(time_limit)), singleton)
        if route == "certificates":
            initial = None if method == "fast" else withheld
            # a completion gets a share of what is left (COMPLETION_LIMIT_SHARE)
            withheld, fast_certs, stats = _by_certificates(
                problem, method, initial, stats, progress=progress, seed=seed,
                settled=settled,
                time_limit=left() if initial is None else COMPLETION_LIMIT_SHARE * left(),
                whole_limit=float(time_limit),
                singleton=singleton, capacity=capacity)
        withheld = withheld | sens
        proven = False
        if fast_certs is not None and settled is not None and settled.audit is not None:
            # targets an earlier audit proved have no certificate: what changed is audited
            passed = audit_after_completion(problem, bounds, withheld, settled, fast_certs, stats, log)
        elif fast_certs is not None:
            proven, withheld, gaps = proven_by_certificates(problem, withheld, fast_certs, stats, singleton)
            if proven and len(gaps):
                withheld, atts = insider_gaps(problem, bounds, withheld, gaps, stats, log, deadline)
            if proven and outsiders_first(method, problem, singleton=singleton, capacity=capacity):
                better = outsiders_instead(problem, bounds, withheld, stats, log, started=t0,
                                           time_limit=float(time_limit), seed=seed, progress=progress,
                                           certificates=certificates if certificates_needed is None
                                           else certificates_needed)
                if better is not None:  # proved by the repair's last audit instead of certificates
                    withheld, passed = _second_try_kept(better, stats)
                    proven, fast_certs, atts = False, None, {}
        if route == "certificates" and not proven and passed is None:
            withheld, atts, route = _unproved_repaired(problem, bounds, withheld, stats)
        if route == "lp" and not proven:
            # cleanup is optional work: a fixed share of the limit, within what is left
            withheld, atts = _cleanup(problem, bounds, withheld, atts, stats, log,
                                      min(CLEANUP_SHARE * float(time_limit), left()),
                                      WorkClock().units(CLEANUP_WORK_SHARE * float(time_limit)))
        stats["seconds_before_audit"] = time.monotonic() - t0
        if audit and not proven and passed is None:
            passed = final_audit(problem, withheld, log)
        proof = "certificates" if proven else ("audit" if passed is not None else "")
        stats["audit"] = AUDIT_STAT[proof]
    stats.update(seconds=time.monotonic() - t0, time_limit=float(time_limit), time_limit_given=given_limit is not None)
    if chosen_reason:
        stats.update(method_chosen=method, method_reason=chosen_reason)
    stats["clock_decided"] = clock_decided(stats)
    _summary(stats, problem, withheld)
    certs = (None if not certificates else fast_certs if fast_certs is not None and proven
             else certificates_frame(problem, bounds, atts))
    # the pipeline uses ``passed`` as its own audit only when it audited this very problem
    # (not a copy with the relations' true offsets)
    return Pattern(withheld, method=method, stats=stats, certificates=certs, proof=proof, audit=passed)


COMPLETION_SECONDS_PER_TARGET = 0.0007
"""Seconds per sensitive cell kept after the search of ``modular`` or ``optimal`` when
local certificates complete and prove its pattern (:func:`_search_limit`). Measured on
the generated four-way ``rand318`` (19,929 cells, 7,130 sensitive; ``modular`` at 10 s,
sixty-sixth session): the subtables ended at their guard (6.0 s), the hurried
certificates took 3.1-3.7 s and their check 1.5 s: 11.3 s in all, 0.7 ms per sensitive
cell after the search."""
SEARCH_SHARE_FLOOR = 0.2
"""The search's limit is never cut below this share of the whole limit."""


def _search_limit(problem: Problem, time_limit: float, route: str) -> float:
    """The limit of ``modular``'s or ``optimal``'s own search: ``SEARCH_SHARE`` of
    ``time_limit``; when certificates complete the pattern, at most what leaves them
    :data:`COMPLETION_SECONDS_PER_TARGET` per sensitive cell after the search's guard on
    the clock (``GUARD_SLACK`` times its limit), and at least :data:`SEARCH_SHARE_FLOOR`
    of the limit."""
    limit = SEARCH_SHARE * time_limit
    if route != "certificates":
        return limit
    after = COMPLETION_SECONDS_PER_TARGET * int(problem.sensitive.sum())
    return max(min(limit, (time_limit - after) / GUARD_SLACK), SEARCH_SHARE_FLOOR * time_limit)


COPIES_SECONDS_PER_TARGET = 0.0002
"""Seconds per sensitive cell kept for expanding a merged problem's pattern and
certificates to the copies and checking them (:func:`_suppress_copies`). Measured on the
generated four-way ``rand333`` (11,564 cells of which 588 copies, 4,573 sensitive;
``fast`` at 10 s, sixty-sixth session): 0.69 s after the smaller problem's 10.18 s,
0.15 ms per sensitive cell; the whole run took 10.99 s."""
COPIES_MIN_SHARE = 0.5
"""The smaller problem gets at least this share of the limit, however long the merging."""


NO_HURRY_SETTLED_SHARE = 0.5
"""Share of the sensitive cells settled already (:mod:`tablesafe.suppress.settled`) from
which the certificates completing a pattern whose repair ran out of time, or was left
out, do not hurry from the start: the few targets left fit the time. Measured on the
generated 61,215-cell two-way table at 90 s (21,643 of 22,255 settled): the 612 left
hurried withheld 118.7 M in 0.8 s, unhurried 106.9 M in 1.0 s. On a three-way table
the subtables settle fewer (291 of 1,332 on ``rand308``), and the search hurries as
before."""


def _mostly_settled(problem: Problem, settled: Settled | None) -> bool:
    """Whether ``settled`` holds :data:`NO_HURRY_SETTLED_SHARE` of the sensitive cells."""
    return settled is not None and len(settled.skipped) >= NO_HURRY_SETTLED_SHARE * int(problem.sensitive.sum())


SUBTABLE_TABLES_SETTLE = True
"""Whether ``modular``'s subtables hand on their certificates also when local
certificates complete the pattern (no repair): those that are certificates of the whole
table settle their targets (:mod:`tablesafe.suppress.settled`)."""


def _repaired(problem: Problem, bounds: Bounds, method: str, route: str, found: np.ndarray, subtable_tables: list,
              search_proofs: list, stats: dict, log, clock: tuple[float, float], singleton: bool):
    """The repair of the search's pattern ``found`` by ``route`` (``"guided"`` or
    ``"lp"``; ``"certificates"``: none), stopped in time for the certificates
    (:func:`repair_window`; ``clock``: the run's start and limit). Returns (pattern,
    attacks, the audit it passed or None, route: ``"certificates"`` when local
    certificates must complete and prove the pattern, the targets a repair out of time
    settled already or None)."""
    t0, time_limit = clock
    withheld, passed = found, None
    atts: dict = {}  # Key -> Attack, as repair returns
    carried: dict | None = None  # the attacks of a repair out of time
    audited: Audited | None = None  # what its last audit proved
    # the repair must leave time for the certificates, which prove any pattern
    repair_deadline, route = repair_window(route, t0, time_limit, stats, log)
    if route == "guided":
        try:
            withheld, passed = audit_guided_repair(problem, bounds, found, stats, log, repair_deadline,
                                                   subtable_tables)
        except OutOfTime as out:
            withheld, route = fall_back(stats, "audit-guided repair", out, found, log), "certificates"
            carried = {**whole_table_certificates(problem, bounds, found, subtable_tables), **(out.attacks or {})}
            audited = audit_fits(out.audited if isinstance(out.audited, Audited) else None,
                                 t0 + time_limit - time.monotonic(), stats)
    if route == "lp":
        if log:
            log("repairing: checking every sensitive cell")
        try:
            withheld, atts = lp_repair(problem, bounds, found, subtable_tables, stats, repair_deadline, log)
        except OutOfTime as out:
            withheld, atts, route = lp_repair_out_of_time(problem, bounds, found, search_proofs, out, stats,
                                                          log, t0 + (1 - FALLBACK_SHARE / 2) * time_limit)
            carried = out.attacks if route == "certificates" else None
    if route == "certificates" and carried is None and subtable_tables:
        # the subtables' certificates that are the whole table's settle their targets
        carried = whole_table_certificates(problem, bounds, withheld, subtable_tables)
    settled = (settled_by(problem, bounds, carried, withheld, stats, singleton, audited)
               if route == "certificates" and method != "fast" else None)
    return withheld, atts, passed, route, settled


def _second_try_kept(better: tuple, stats: dict) -> tuple[np.ndarray, object]:
    """(pattern, audit) of ``fast``'s second try when kept, its repair's stats into
    ``stats`` (``fast``'s own insiders' counts, of cells not in this pattern, dropped)."""
    withheld, passed, repaired = better
    for key in ("insider_added", "insider_added_value"):
        stats.pop(key, None)
    stats.update(repaired)
    return withheld, passed


def _unproved_repaired(problem: Problem, bounds: Bounds, withheld: np.ndarray,
                       stats: dict) -> tuple[np.ndarray, dict, str]:
    """The certificates' heuristic gave up or a certificate failed its check: the
    attacker-LP repair protects every cell or proves which one cannot be protected (no
    deadline: nothing else proves the pattern). Returns (pattern, attacks, route)."""
    before = withheld.copy()
    withheld, atts, rounds = repair(problem, bounds, withheld)
    stats["repair_rounds"] = rounds
    stats["repair_added"] = int((withheld & ~before).sum())
    return withheld, atts, "lp"


def _suppress_copies(problem: Problem, twins: Twins, method: str, time_limit: float | None, t0: float,
                     options: dict, audit: bool, certificates: bool) -> Pattern:
    """:func:`suppress` of a problem with copies of cells: the smaller problem of
    ``twins`` suppressed with the same ``options`` and what is left of the time limit
    after the merging and before the expansion (:data:`COPIES_SECONDS_PER_TARGET`; its
    final audit left out, its certificates kept), then expanded and proved on ``problem``
    (:func:`~tablesafe.suppress.twins.suppress_merged`)."""
    limit = auto_time_limit(problem.n) if time_limit is None else float(time_limit)
    # the copies' merging so far and their expansion and proof afterwards count too
    after = COPIES_SECONDS_PER_TARGET * int(problem.sensitive.sum())
    inner = max(limit - (time.monotonic() - t0) - after, COPIES_MIN_SHARE * limit)
    if options.get("progress"):
        from tablesafe.progress import Progress

        with Progress("copies merged") as shown:
            shown.say(f"{twins.merged:,} of {problem.n:,} cells copy another cell (a code without siblings): "
                      f"solving the table of {twins.problem.n:,} cells; the counts below are of that table")
    pat = suppress_merged(twins, problem, lambda small: suppress(
        small, method, time_limit=inner, certificates=True, audit=False, certificates_needed=certificates,
        **options),
        audit=audit, certificates=certificates, seconds_from=t0)
    pat.stats["time_limit_given"] = time_limit is not None
    _summary(pat.stats, problem, np.asarray(pat.withheld, dtype=bool))
    return pat


def _cleanup(problem: Problem, bounds: Bounds, withheld: np.ndarray, atts: dict, stats: dict, log,
             budget: float, work: int) -> tuple[np.ndarray, dict]:
    """Drop complements no longer needed (:func:`~tablesafe.suppress.cleanup.cleanup`)
    within ``work`` units of LP work, and at most ``budget`` seconds."""
    if log:
        log("cleanup: dropping complements no longer needed")
    cdl = time.monotonic() + budget
    sec = withheld & ~problem.sensitive
    stats["cost_before_cleanup"] = float(problem.cost[sec].sum())
    t_cleanup = time.monotonic()
    report: dict = {}
    withheld, atts, removed = cleanup(problem, bounds, withheld, atts, deadline=cdl, work=work, report=report,
                                      progress=log)
    stats["cleanup_seconds"] = time.monotonic() - t_cleanup
    stats["cleanup_removed_value"] = float(np.abs(problem.value[sec & ~withheld]).sum())
    stats["cleanup_work"] = report["work"]
    stats["cleanup_work_budget"] = work
    if report["stopped"]:
        stats["cleanup_stopped_by"] = report["stopped"]
    stats["cleanup_removed"] = removed
    return withheld, atts


def _summary(stats: dict, problem: Problem, withheld: np.ndarray) -> None:
    """The pattern's counts and costs, into ``stats``."""
    sec = withheld & ~problem.sensitive
    stats["withheld"] = int(withheld.sum())
    stats["secondary"] = int(sec.sum())
    stats["cost"] = float(problem.cost[sec].sum())
    stats["withheld_value"] = float(np.abs(problem.value[sec]).sum())
    stats["safe"] = True


AUDIT_GUIDED_MAX_CELLS = 100_000
"""``modular``'s patterns too large for the attacker-LP repair (three-way tables above
``LP_REPAIR_MAX_CELLS``, others above ``MODULAR_LP_REPAIR_MAX_CELLS``) are repaired by
:func:`tablesafe.suppress.audit_repair.audit_repair` up to this size, not by local
certificates: the certificates' boxes miss proofs running through several subtables and
withheld 254 M on a generated 13,851-cell three-way table whose modular pattern cost
45 M. On the generated 61,215-cell two-way table (``60k2d``, singleton protection) the
modular pattern (22.0 M) repaired this way withheld 23.8 M, against 247 M for ``fast``;
its three audits took about 270 s each, and 141, 77 and 27 s once the later ones only
check again what can have changed."""


def _audit_guided(method: str, problem: Problem, capacity: bool, singleton: bool) -> bool:
    """Whether the pattern is repaired by :func:`audit_guided_repair`.

    Not with singleton protection on three-way tables: the insider audit of blocks of
    thousands of cells takes longer than the certificates (measured: 367 s on the
    13,750-cell three-way tau-ARGUS pattern of ``benchmarks/audit.py``; 334 s on
    ``modular``'s pattern of the generated 13,851-cell three-way table with holdings, whose
    2,014 failing attacks then need full-table attacker LPs, against an automatic limit of
    337 s for the whole run)."""
    three_way = problem.model is not None and len(problem.model.dims) >= 3
    return (method == "modular" and not capacity and not (singleton and three_way)
            and _lp_repair_max(method, problem) < problem.n <= AUDIT_GUIDED_MAX_CELLS)


def _subtable_insiders(route: str) -> bool:
    """Whether ``modular``'s subtables attack with single respondents, given how the
    pattern is completed (``route``).

    When local certificates complete it (three-way tables above ``LP_REPAIR_MAX_CELLS``),
    the subtables are protected against outsiders only: the certificates find one for
    every single respondent next to a target anyway. Measured on the generated
    13,851-cell three-way table with holdings (two workers, no limit): the subtables with
    their insiders took 175 s and 38.9 M, without 108 s and 35.3 M; completed by the
    certificates 62.2 M in about 490 s against 66.9 M in 317 s (two groups). Under the
    automatic limit (337 s) the subtables with insiders ran out of their share (42-48 of
    324 left to the certificates) and the completion hurried: 79.5-84.2 M.
    """
    return route != "certificates"


COMPLETION_LIMIT_SHARE = 0.85
"""Share of the time left that the certificates completing another method's pattern get
as their limit. Past it they still certify every target left (chains, then the check),
which took up to 4 s more: ``optimal`` on Castro's NINENEW at a 30 s limit ended at
31.3-34.0 s when they had all that was left (about 15 s)."""

COMPLETION_GROUPS = 2
"""Groups of targets (``FastOptions.groups``) when the certificates complete another
method's pattern, run side by side on up to as many processes; the pattern does not
depend on how many run. Measured on the generated 13,851-cell three-way table with
holdings (``modular``'s pattern completed): one group took 318 s, so that under the
automatic limit the search hurried and added 41-44 M instead of 23 M."""
COMPLETION_GROUPS_FROM = 1_000
"""Sensitive cells from which a completion is split into ``COMPLETION_GROUPS`` groups."""


def _by_certificates(problem: Problem, method: str, initial: np.ndarray | None, stats: dict, *,
                     time_limit: float, progress: bool, seed: int, singleton: bool, capacity: bool,
                     whole_limit: float | None = None, settled: Settled | None = None):
    """``fast``, and the repair of another method's pattern ``initial`` on a large table:
    a local certificate per sensitive cell (and per single respondent next to it), found
    among the cells already withheld where possible. Returns (pattern, certificates or
    None, stats); when the heuristic gives up, the LP repair takes over. After a repair
    that ran out of time, or one left out for its estimate
    (:data:`~tablesafe.suppress.repair_estimate.LP_REPAIR_ESTIMATE_SHARE`), or when the
    search's start gave up with an estimate that asks for it
    (:func:`~tablesafe.suppress.repairs.start_hurry_reason`), the search hurries from the
    start: it has only the rest of the limit (measured: ``modular`` on Castro's TWO5IN6
    at 30 s, 7.5 s left, and the unhurried search's whole-block LPs ended it at 40.3 s).
    With ``whole_limit``, the run's limit, the search hurries after ``HURRY_SHARE`` of it
    (of ``COMPLETION_LIMIT_SHARE`` of it for a completion) in LP work, the same target in
    every run; ``time_limit``, what the clock leaves, is then
    the guard (before, the clock alone decided: ``modular`` on the generated 13,851-cell
    three-way table hurried near the end of some runs and not of others). ``settled``:
    targets a repair out of time proved already (:mod:`tablesafe.suppress.settled`); the
    search is only for the others, and does not hurry from the start when they are most
    of the targets (:data:`NO_HURRY_SETTLED_SHARE`)."""
    from tablesafe.suppress.fast import HURRY_SHARE, fast_pattern

    before = int(initial.sum()) if initial is not None else 0
    options = workers = None
    if initial is not None and int(problem.sensitive.sum()) >= COMPLETION_GROUPS_FROM:
        options = FastOptions(groups=COMPLETION_GROUPS)
        workers = worker_count(COMPLETION_GROUPS)
    by_repair = "repair_timed_out" in stats or "repair_skipped" in stats
    by_estimate = None if by_repair else start_hurry_reason(stats, time_limit)
    hurry = (by_repair or by_estimate is not None) and not _mostly_settled(problem, settled)
    if hurry and by_estimate is not None:
        stats["completion_hurried"] = by_estimate
    try:
        pat = fast_pattern(problem, time_limit=time_limit, progress=progress, seed=seed,
                           singleton=singleton, capacity=capacity, initial=initial,
                           options=options, workers=workers, settled=settled,
                           hurry_work=None if whole_limit is None else
                           HURRY_SHARE * (1.0 if initial is None else COMPLETION_LIMIT_SHARE) * whole_limit,
                           hurry=hurry,
                           progress_label="fast suppression" if initial is None
                           else f"{method}: certificates for every sensitive cell")
    except AuditFailure:
        raise
    except TablesafeError as exc:
        # the heuristic gave up; the LP repair either protects every cell or proves which
        # cell cannot be protected
        stats["fast_failed"] = str(exc)
        return (problem.sensitive.copy() if initial is None else initial), None, stats
    if initial is None:
        stats = dict(pat.stats)
    else:
        stats["certificate_repair_added"] = int(pat.withheld.sum()) - before
        stats["certificate_repair_added_value"] = float(
            np.abs(problem.value[np.asarray(pat.withheld, dtype=bool) & ~initial]).sum())
        stats.update(certificate_repair_seconds=pat.stats["seconds"], certificate_repair_work=pat.stats["first_pass_work"],
                     certificate_repair_targets=pat.stats["targets"])
        stats["insider_unprotected"] = pat.stats["insider_unprotected"]
        stats["certificate_repair_insider_added"] = pat.stats["insider_added"]
        stats["certificate_repair_insider_added_value"] = pat.stats["insider_added_value"]
        for key in CLOCK_KEYS:
            stats[key] = pat.stats[key]
    return np.asarray(pat.withheld, dtype=bool), pat.certificates, stats


