"""A second try for ``fast`` on large three-way tables: the outsiders first, then the
single respondents by the audit-guided repair.

With singleton protection, ``fast`` finds a certificate for every target and for every
single respondent next to it, one after the other. On three-way tables the respondents'
certificates are dear: each is searched alone, and the cells it adds serve no other
respondent. The audit-guided repair (:mod:`tablesafe.suppress.audit_repair`) instead
names the respondents' attacks that fail and chooses their complements together, from
the capacity inequalities of all of them (a small set cover); its last audit proves the
pattern. So when ``fast``'s own pattern is proved with time to spare, the search runs
again against outsiders only (quicker), the repair protects that pattern against the
single respondents, and the result replaces ``fast``'s when it withholds less. It is a
second try, not a route: a search that gives up or a repair out of time leaves
``fast``'s pattern as it was, so the run is never worse than ``fast`` alone, only
longer, within its limit. (Taken as the route itself, before ``fast``'s own search, it
withheld 207.4 M on the sparse ``rand353`` against ``fast``'s 104.6 M: there the
outsiders' search alone needs most of the limit, hurried, and the repair ran out of
time.)

Measured with the automatic limit (``suppress(problem, "auto")``, seventieth session,
2 cores; the two steps first by a ``/tmp`` script): on 13k3d (13,851 cells) ``fast``
withholds 61.70 M in 114 s; the outsiders' search 44.48 M in 46 s, the repair 6.84 M
more in 130 s, 51.32 M.

Where time is left after that, ``modular``'s subtables against outsiders go through the
same repair (seventy-first session, unseen random shapes): on ``rand652`` (23,375 cells)
``fast`` took about 5 s, the subtables 33 s (20.77 M) and the repair 26 s (+5.26 M):
26.03 M against 49.49 M from the outsiders' search (tau-ARGUS MOD 21.81 M, not safe);
on ``rand401`` (22,000 cells) 24.81 M against 29.11 M (MOD 23.61 M). They are not
always cheaper, nor quick: on ``rand343`` (11,025 cells) the subtables and the repair
withheld 432.25 M in 270 s (the outsiders' search and repair 375.31 M, ``fast`` alone
404.33 M in 30 s), on 13k3d 46.75 M in about 610 s (limit 337 s); hence second, after
``fast``'s own outsiders are secured, and only with :data:`SUBTABLES_RATIO` times the
run's time so far left (rand652 and rand401 about 30 times, rand343 and 13k3d below 2).
"""

from __future__ import annotations

import time

import numpy as np

from tablesafe.errors import AuditFailure, TablesafeError
from tablesafe.problem import Problem
from tablesafe.suppress.attacker import Bounds
from tablesafe.suppress.protection import OutOfTime

OUTSIDERS_FIRST = True
"""Whether ``fast`` tries again where :func:`outsiders_first` allows it."""

OUTSIDERS_FIRST_FROM = 10_000
"""Fewest cells of a three-way table for the second try: where ``auto`` chooses ``fast``
(:mod:`tablesafe.suppress.method_choice`); below, ``modular``'s subtables protect their
single respondents themselves, and they withheld less than the second try would on the
generated 2k3d (7.29 M against 7.76 M), on the ``mixed3d`` shape (8.50 against 9.11 M)
and on ``rand372`` (45.72 against 48.60 M), more only on ``rand370`` (127.15 against
111.95 M)."""

OUTSIDERS_FIRST_MAX = 30_000
"""Most cells for the second try: measured on tables of 11,000 to 19,000 cells, where the
repair's audits took up to 66 s; on larger three-way tables its single respondents'
screening of large blocks takes minutes (unmeasured here), and the 60,000-cell tables'
runs are held to five minutes."""

TIME_RATIO = 1.5
"""The second try starts only when the time left is at least this many times what
``fast``'s own search and proof took: on 13k3d the outsiders' search and the repair took
176 s against ``fast``'s 114 s (1.55 times)."""

SEARCH_SHARE = 0.4
"""Share of the time left that the outsiders' search gets as its limit (it hurries after
``fast.HURRY_SHARE`` of it in LP work); it gives up at ``GIVE_UP_SHARE`` of it."""

GIVE_UP_SHARE = 0.5
"""Share of the time left after which the outsiders' search gives up (the repair needs
the rest)."""

SUBTABLES_FIRST = True
"""Whether the second try takes ``modular``'s subtables (against outsiders) for its
outsiders' pattern where there is time for them (:data:`SUBTABLES_RATIO`)."""

SUBTABLES_RATIO = 6.0
"""The subtables' try starts only when the time left is at least this many times what the
run took so far (``fast`` and the outsiders' search with its repair): the subtables and
their repair took 1.7 to 3.7 times that on the tables measured (module docstring), and a
try out of time leaves only what was kept before it (``rand492``, 24,080 cells: with
``fast``'s own time as the measure, 12 times, the try ran from 116 s to the limit,
542 s, and withheld no less)."""

SUBTABLES_SHARE = 0.3
"""Share of the time left that the subtables get as their limit (the repair gets the
rest of the run's)."""


CERTIFICATES_ASKED = "not tried: certificates were asked for (its proof would be an audit)"
"""``stats["outsiders_first"]`` of a run asking for certificates: the only outcome the clock
did not decide (:func:`~tablesafe.suppress.clock_steps.clock_decided`)."""


def outsiders_first(method: str, problem: Problem, *, singleton: bool, capacity: bool) -> bool:
    """Whether ``method``'s proved pattern gets the second try: ``fast`` with singleton
    protection and no capacity bounds (the audit-guided repair knows none), on one table
    (not linked tables: unmeasured, and their run is held to ten minutes) of three or more
    dimensions of :data:`OUTSIDERS_FIRST_FROM` to :data:`OUTSIDERS_FIRST_MAX` cells."""
    model = problem.model
    one_table = model is not None and len(model.table_cells) <= 1
    return (OUTSIDERS_FIRST and method == "fast" and singleton and not capacity and one_table
            and model is not None and len(model.dims) >= 3
            and OUTSIDERS_FIRST_FROM <= problem.n <= OUTSIDERS_FIRST_MAX)


def outsiders_instead(problem: Problem, bounds: Bounds, current: np.ndarray, stats: dict, log, *,
                      started: float, time_limit: float, seed: int, progress: bool,
                      certificates: bool = False):
    """The second try on ``problem`` after ``fast``'s proved pattern ``current``, in a run
    that started at ``started`` (``time.monotonic()``) with ``time_limit`` seconds:
    (pattern, the audit it passed, the repair's stats) when it withholds less (by cost)
    and ended in time, else ``None``. Not when the run must hand on a certificate per
    sensitive cell (``certificates``): the second try's proof is an audit.

    The outsiders' pattern comes first from ``fast``'s own search against outsiders
    (:func:`_by_fast`, when the time left is at least :data:`TIME_RATIO` times what
    ``fast`` took); then, on a table with a structure and when the time left is still at
    least :data:`SUBTABLES_RATIO` times the run's so far, from ``modular``'s subtables
    (:func:`_by_subtables`). The cheapest pattern that ended in time is kept.
    ``stats["outsiders_first"]`` says what happened (the kept try's account, else the
    first try's); ``stats["outsiders_first_tries"]`` lists every try's account when the
    subtables' was considered."""
    if certificates:
        stats["outsiders_first"] = CERTIFICATES_ASKED
        return None
    now = time.monotonic()
    spent, left = now - started, started + time_limit - now
    if left < TIME_RATIO * spent:
        stats["outsiders_first"] = (f"not tried: {left:.0f} s left after fast's {spent:.0f} s "
                                    f"(it needs about {TIME_RATIO:g} times as long)")
        return None
    deadline = started + time_limit
    tries = [_by_fast(problem, bounds, seed, log, progress, left, deadline)]
    if SUBTABLES_FIRST and problem.structured:
        now = time.monotonic()
        left, so_far = deadline - now, now - started
        if left >= SUBTABLES_RATIO * so_far:
            tries.append(_by_subtables(problem, bounds, seed, log, SUBTABLES_SHARE * left, deadline))
        else:
            tries.append((None, None, None, f"modular's subtables not tried: {left:.0f} s left after "
                          f"{so_far:.0f} s (they need up to about {SUBTABLES_RATIO:g} times as long)"))
    return _cheapest(problem, current, tries, stats)


def _cheapest(problem: Problem, current: np.ndarray, tries: list, stats: dict):
    """(pattern, audit, repair's stats) of the cheapest of ``tries`` (the first of equals)
    when it costs less than ``fast``'s pattern ``current``, else ``None``; each try's
    account into ``stats``."""
    sens = problem.sensitive
    before = float(problem.cost[current & ~sens].sum())
    costs = [None if w is None else float(problem.cost[w & ~sens].sum()) for w, *_ in tries]
    cheaper = {i: c for i, c in enumerate(costs) if c is not None and c < before}
    kept_at = min(cheaper, key=cheaper.__getitem__) if cheaper else -1
    accounts = [said if cost is None
                else f"{'kept' if i == kept_at else 'tried, not kept'}: {said}; cost {cost:,.2f} against fast's "
                f"{before:,.2f}" for i, ((_, _, _, said), cost) in enumerate(zip(tries, costs))]
    stats["outsiders_first"] = accounts[max(kept_at, 0)]
    if len(accounts) > 1:
        stats["outsiders_first_tries"] = accounts
    return tries[kept_at][:3] if kept_at >= 0 else None


_Tried = tuple  # (pattern, audit, repair's stats, what was said) or (None, None, None, why)


def _by_fast(problem: Problem, bounds: Bounds, seed: int, log, progress: bool, left: float,
             deadline: float) -> _Tried:
    """``fast``'s search against outsiders (limit :data:`SEARCH_SHARE` of ``left``, giving
    up at :data:`GIVE_UP_SHARE` of it), then the repair for single respondents."""
    from tablesafe.suppress.fast import HURRY_SHARE, fast_pattern

    if log:
        log("second try: certificates against outsiders, then the audit-guided repair for single respondents")
    t0 = time.monotonic()
    limit = SEARCH_SHARE * left
    try:
        pat = fast_pattern(problem, time_limit=limit, progress=progress, seed=seed, singleton=False,
                           hurry_work=HURRY_SHARE * limit, give_up_after=GIVE_UP_SHARE * left,
                           progress_label="fast: certificates against outsiders")
    except TablesafeError:  # fast's own pattern is proved: it stands
        return None, None, None, "tried: the outsiders' search ran out of its share of the time left"
    outsiders = np.asarray(pat.withheld, dtype=bool) | problem.sensitive
    return _repaired(problem, bounds, outsiders, None, log, deadline, "outsiders' search", time.monotonic() - t0)


def _by_subtables(problem: Problem, bounds: Bounds, seed: int, log, limit: float, deadline: float) -> _Tried:
    """``modular``'s subtables against outsiders (limit ``limit``), then the repair, which
    protects the whole table against outsiders and single respondents together; the
    subtables' tables seed its first audit."""
    from tablesafe.suppress.modular import modular_pattern

    if log:
        log("second try: modular's subtables against outsiders, then the audit-guided repair")
    t0 = time.monotonic()
    tables: list = []
    try:
        found, _ = modular_pattern(problem, Bounds.of(problem, capacity=False, singleton=False), insiders=False,
                                   time_limit=limit, seed=seed, log=log, tables=tables, completed_by_caller=True)
    except TablesafeError as exc:
        return None, None, None, f"tried: modular's subtables failed ({exc})"
    return _repaired(problem, bounds, found | problem.sensitive, tables, log, deadline, "modular's subtables",
                     time.monotonic() - t0)


def _repaired(problem: Problem, bounds: Bounds, outsiders: np.ndarray, tables: list | None, log,
              deadline: float, source: str, searched: float) -> _Tried:
    """The audit-guided repair of the outsiders' pattern from ``source`` (which took
    ``searched`` seconds) until ``deadline``."""
    from tablesafe.suppress.repairs import audit_guided_repair

    repaired: dict = {}
    try:
        withheld, passed = audit_guided_repair(problem, bounds, outsiders, repaired, log, deadline=deadline,
                                               subtable_tables=tables)
    except (OutOfTime, AuditFailure) as exc:  # out of time, or no convergence: what was kept stands
        why = "ran out of time" if isinstance(exc, OutOfTime) else "did not converge"
        return None, None, None, f"tried: the repair for single respondents {why} ({source} {searched:.1f} s)"
    value = float(np.abs(problem.value[outsiders & ~problem.sensitive]).sum())
    said = (f"{source} {searched:.1f} s, secondaries worth {value:,.2f}; repair for single respondents "
            f"{repaired.get('repair_seconds', 0.0):.1f} s, {repaired.get('repair_added', 0):,} cells worth "
            f"{repaired.get('repair_added_value', 0.0):,.2f}")
    return withheld, passed, repaired, said
