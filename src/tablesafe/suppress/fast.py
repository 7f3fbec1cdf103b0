"""The ``fast`` secondary suppression heuristic for very large tables, with certificates.

Sensitive cells are protected one after the other (the sequential linear-programming
approach of seed 003 B.2.b), smallest value first on tables of up to
``FastOptions.wide_table`` cells, largest protection need first above, and on small
tables both, keeping the cheaper pattern (``FastOptions.order``). For each target a small
*protection network* LP is solved on a local neighbourhood of the target — the cells
reachable through a few relations — with every other cell held at its true value:

    minimise   sum_i  w_i (p_i + q_i)
    subject to A_R (p - q) = 0                    (the relations touching the neighbourhood)
               p_t = M, q_t = 0                   (the target moves by its level)
               0 <= p_i, q_i <= r_i               (r_i = min(v_i - lower_i, upper_i - v_i))

with ``w_i = cost_i / r_i`` (the linear relaxation of the fixed charge of withholding cell
``i`` in the model of Fischetti and Salazar restricted to one target, see seed 002
"Secondary tabular data protection methods") and a tiny weight for cells already withheld.
Every cell with a nonzero deviation ``d = p - q`` is withheld. Because the deviation box is
symmetric, ``v + (UPL/M) d`` and ``v - (LPL/M) d`` are both feasible tables that differ from
the truth only in withheld cells and move the target by its upper and lower protection
level: they are the target's *certificates*. A certificate stays valid when more cells
are withheld later, so the final pattern is proved safe by the certificates alone; they
are checked in one pass over the relations (:func:`tablesafe.audit.check_certificates`).

A certificate's deviation is also a direction that moves other cells: every later target
it moves far enough within the cells' ranges is protected by it, scaled, without an LP.
Targets may be split over worker processes; the union of their patterns is proved by the
union of their certificates.

When the local LP is infeasible the neighbourhood grows: from the cells already withheld
near the target to boxes of codes around it (with a table structure; six box levels, see
:func:`tablesafe.suppress.local.geometry.code_sets`), then by relation hops up to the
target's whole block (:class:`tablesafe.suppress.local.LocalSearch`). Protected and
empty cells never move. With ``singleton=True`` single-contributor cells (other than the
target) are held fixed first, so that a certificate does not rely on a cell whose only
contributor knows its value (seed 002, "singletons"; seed 000 section 7 suggests zero a
priori intervals for such cells): among the cells already withheld. When that fails they
are admitted (with a large weight) in the search that may add complements (on tables
with a structure up to 100,000 cells; on others, and with ``FastOptions.strict_adds``,
the search that keeps them fixed first adds complements too: quicker, but it withholds
more), and ``stats["certificates_with_singletons"]`` counts those certificates. For each
of them a further certificate keeps those singletons fixed (``insider`` column), unless
the singleton's cell overlaps the target (its respondent is then one of the target's
contributors, see :mod:`tablesafe.structure.overlap`).

Where the parts live: :mod:`~tablesafe.suppress.fast_options` (the knobs),
:mod:`~tablesafe.suppress.fast_ranges` (amounts, ranges and weights per cell),
:mod:`~tablesafe.suppress.local` (the local search and certificates, shared with the
second pass), :mod:`~tablesafe.suppress.fast_first_pass` (one certificate per target),
:mod:`~tablesafe.suppress.fast_workers` (that pass over several processes) and
:mod:`~tablesafe.suppress.fast_cleanup` (the second pass). This module runs them.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from tablesafe.audit.lp import lp_work
from tablesafe.errors import InfeasibleError
from tablesafe.problem import Pattern, Problem
from tablesafe.progress import Progress
from tablesafe.structure.overlap import occupied_cells
from tablesafe.suppress.fast_cleanup import CleanupResult, release_complements
from tablesafe.suppress.fast_first_pass import FirstPass, FirstPassJob, FirstPassResult
from tablesafe.suppress.fast_options import FastOptions
from tablesafe.suppress.fast_ranges import CellRanges
from tablesafe.suppress.fast_workers import merge_results, partition, run_parallel
from tablesafe.suppress.local import (
    Certificates,
    Geometry,
    LocalSearch,
    RelationIndex,
    SearchSpace,
    certificate_frame,
)
from tablesafe.suppress.settled import Settled
from tablesafe.suppress.work_clock import GUARD_SLACK

__all__ = ["FastOptions", "fast_pattern"]


def fast_pattern(
    problem: Problem,
    *,
    time_limit: float | None = None,
    progress: bool = False,
    seed: int = 0,
    singleton: bool = True,
    capacity: bool = False,
    insiders: bool | None = None,
    initial: np.ndarray | None = None,
    progress_label: str = "fast suppression",
    workers: int | None = None,
    give_up_after: float | None = None,
    give_up_work: int | None = None,
    options: FastOptions | None = None,
    hurry: bool = False,
    hurry_work: float | None = None,
    settled: Settled | None = None,
) -> Pattern:
    """Choose complementary suppressions for a large table and prove them by certificates.

    Args:
        problem: the cells, relations, bounds and protection levels.
        time_limit: limit in seconds: every sensitive cell is always protected.
            After ``HURRY_SHARE`` of it, in seconds of LP work (``hurry_work``), the
            search hurries (``stats["hurried_after_targets"]`` says after how many
            targets, ``stats["hurried_by"]`` whether the work bound or its guard on the
            clock, ``HURRY_GUARD_SHARE`` of the limit, decided; only the clock makes the
            pattern depend on the machine's speed).
            After ``CHAIN_SHARE`` of it (or when needed: ``fast_pace.chains_due``) each
            target left gets a certificate without an LP where it has one (a box, else
            the totals containing it; ``stats["box_certificates"]`` and
            ``stats["chain_certificates"]`` count them) and the second pass stops, so the run ends near the limit at the
            price of a costlier pattern (a second pass stopped there sets
            ``stats["second_pass_clock_stopped"]``; with ``FastOptions.order == "both"``
            the second order is left out when the first took more than
            ``BOTH_ORDERS_SHARE`` of the limit in LP work, or ``GUARD_SLACK`` times that
            by the clock: ``stats["other_order_skipped"]`` and, ``"work"`` or
            ``"clock"``, ``stats["other_order_skipped_by"]``). Past the limit
            ``stats["time_limit_hit"]`` says so. ``stats["first_pass_work"]`` and
            ``stats["search_work"]`` give the LP work of the kept order's first pass
            (all groups) and of both its passes.
        progress: report progress (a live line on a terminal, plain lines in a log).
        progress_label: what the progress report calls this run.
        seed: accepted for interface compatibility; the method is deterministic (ties
            are broken by cell position), so the seed does not change the result.
        singleton: avoid single-contributor cells as partners (see the module text).
        capacity: use ``problem.capacity`` (seed 000 section 7.1) to limit how far a cell
            may move when it protects another.
        insiders: for every certificate that moves a single-respondent cell ``s`` (other
            than the target), also find one that keeps ``s`` at its value: that
            respondent knows it (seed 002, "singletons"). Such certificates carry ``s`` in
            the ``insider`` column (one certificate keeping all of them fixed where
            one exists, else one per cell). Default: the value of ``singleton``. Pairs for which
            no such certificate exists are counted in ``stats["insider_unprotected"]``
            and listed in ``stats["insider_unprotected_pairs"]`` (first 20).
            ``stats["insider_added"]`` and ``stats["insider_added_value"]`` give the
            cells of the pattern that insider certificates brought in (first withheld
            by one; later targets' certificates may use them too), and the value of
            those that are not sensitive.
        initial: cells already withheld (for example another method's pattern): they
            cost almost nothing to use, so the certificates lean on them and the run
            only adds cells where that pattern falls short.
        workers: processes that protect disjoint groups of targets at the same time
            (groups are contiguous ranges of the first dimension's codes; the union of
            their patterns is proved by the union of their certificates, which stay valid
            when more cells are withheld). Default: 1 below ``options.parallel_from``
            targets, else the CPUs available (at most ``options.max_workers``).
            The pattern depends on the number of groups (``options.groups``, by
            default 1 below ``options.parallel_from`` targets, else
            ``options.max_workers``), never on the workers that run them.
        hurry: hurry from the start (with a ``time_limit``; for the completion of a
            pattern whose own method ran out of time, which has only the rest of it).
        hurry_work: seconds of LP work (:func:`~tablesafe.audit.lp.lp_work` at
            :data:`SEARCH_WORK_PER_SECOND` units a second) each group of targets does
            before its search hurries, counted from the group's start so that it hurries
            at the same target in every run. Default, with a ``time_limit``:
            ``HURRY_SHARE`` of it (a completion of another method's pattern passes its
            share of the run's whole limit, which does not depend on the clock).
        give_up_after: seconds after which an unfinished first pass raises
            :class:`SolverTimeLimit` (for callers with a fallback, such as the start
            pattern of ``optimal``); the second pass then also stops at that time.
        give_up_work: LP work (:func:`~tablesafe.audit.lp.lp_work`) after which a group
            of the first pass raises :class:`SolverTimeLimit`, and the second pass stops
            at what is left of it (the same point in every run; ``give_up_after`` guards).
        options: tuning knobs.
        settled: targets proved already (:mod:`tablesafe.suppress.settled`; counted in
            ``stats["found_by"]``): the search is only for the others.

    Returns:
        A :class:`Pattern` (method ``fast``) whose ``certificates`` frame proves every
        sensitive cell's protection (columns ``target``, ``direction``, ``cell``,
        ``value``, ``insider``; cells named by ``problem.names``; ``insider`` is empty
        for the outsider's certificate).

    Raises:
        InfeasibleError: a sensitive cell cannot be moved by its level by any table that
            agrees with the relations and bounds (for example when every partner is
            protected).
        SolverTimeLimit: ``give_up_after`` passed before every sensitive cell had a
            certificate.
    """
    del seed
    t0 = time.perf_counter()
    geometry = Geometry.of(problem)
    opts = (options or FastOptions()).for_table(problem.n, structured=geometry is not None)
    insiders = singleton if insiders is None else insiders
    ranges = CellRanges.of(problem, singleton=singleton, capacity=capacity,
                           singleton_penalty=opts.singleton_penalty)
    sens = problem.sensitive
    withheld = sens.copy()
    if initial is not None:
        withheld |= np.asarray(initial, dtype=bool) & ranges.free
    targets = _targets(sens & ((ranges.upl > 0) | (ranges.lpl > 0)), withheld, settled)
    space = SearchSpace(
        relations=RelationIndex.of(problem.relations), geometry=geometry, scale=ranges.scale,
        free=ranges.free, single=ranges.single, occupied=occupied_cells(problem),
        options=opts.search_options(),
    )
    if workers is None:
        workers = opts.default_workers(len(targets))
    if hurry_work is None and time_limit is not None:
        hurry_work = HURRY_SHARE * time_limit
    run = _OrderRun(problem=problem, space=space, ranges=ranges, withheld=withheld, targets=targets,
                    options=opts, insiders=insiders, workers=int(workers), give_up_after=give_up_after,
                    give_up_work=give_up_work,
                    hurry=hurry, progress_label=progress_label if progress else None, settled=settled)
    assert opts.order is not None  # settled by for_table
    orders = ("value", "need") if opts.order == "both" else (opts.order,)
    out = run(orders[0], t0, time_limit, hurry_work)
    capped = out.first.lp_capped  # in every order run: the clock decided either way
    other_skipped: str | None = None
    if len(orders) > 1 and give_up_after is None and give_up_work is None:
        # the other order too, when the time allows, and the cheaper pattern is kept
        # (measured in FastOptions.order); ties keep the first
        other_skipped = _other_order_skipped(time.perf_counter() - t0, out.work, time_limit)
        if other_skipped is None:
            t1 = time.perf_counter()
            other = run(orders[1], t1, None if time_limit is None else time_limit - (t1 - t0),
                        None if hurry_work is None else max(hurry_work - out.work / SEARCH_WORK_PER_SECOND, 0.0))
            capped += other.first.lp_capped
            if np.abs(problem.cost[other.withheld]).sum() < np.abs(problem.cost[out.withheld]).sum():
                out = other
    frame = certificate_frame(problem, out.certs, out.first.labels)
    stats = _stats(problem, out.first, len(targets), out.withheld, out.lps, out.workers, out.second,
                   time.perf_counter() - t0, time_limit)
    stats.update(order=out.order, other_order_skipped=other_skipped is not None, other_order_skipped_by=other_skipped,
                 search_work=out.work, second_pass_clock_stopped=bool(out.second.get("clock_stopped", False)),
                 lp_capped=capped)
    return Pattern(withheld=out.withheld, method="fast", stats=stats, certificates=frame)


BOTH_ORDERS_SHARE = 0.4
"""With ``FastOptions.order == "both"`` and a time limit, the second order runs only when
the first ended within this share of the limit, in seconds of LP work, and within
``GUARD_SLACK`` times that by the clock (it gets the rest of the limit)."""


def _other_order_skipped(spent: float, work: int, time_limit: float | None) -> str | None:
    """Why the second order of targets is left out after a first that took ``spent``
    seconds and ``work`` units of LP work: ``"work"`` (the same in every run),
    ``"clock"`` (the guard: a slow or loaded machine), or ``None`` when it runs."""
    if time_limit is None:
        return None
    if work / SEARCH_WORK_PER_SECOND > BOTH_ORDERS_SHARE * time_limit:
        return "work"
    if spent > GUARD_SLACK * BOTH_ORDERS_SHARE * time_limit:
        return "clock"
    return None


@dataclass(frozen=True)
class _OrderOutcome:
    """One order's pattern, certificates and figures (see :class:`_OrderRun`)."""

    order: str
    first: FirstPassResult
    withheld: np.ndarray
    certs: Certificates
    lps: int
    second: dict[str, object]
    workers: int
    work: int


@dataclass(frozen=True)
class _OrderRun:
    """The first and second pass of ``fast`` for the targets in one order."""

    problem: Problem
    space: SearchSpace
    ranges: CellRanges
    withheld: np.ndarray
    targets: np.ndarray
    options: FastOptions
    insiders: bool
    workers: int
    give_up_after: float | None
    give_up_work: int | None
    hurry: bool
    progress_label: str | None
    settled: Settled | None = None

    def __call__(self, order: str, t0: float, time_limit: float | None, hurry_work: float | None) -> _OrderOutcome:
        """Protect every target in ``order``, the run's time counted from ``t0``; each
        group hurries after ``hurry_work`` seconds of LP work (see :func:`fast_pattern`)."""
        problem, opts, ranges = self.problem, self.options, self.ranges
        need = np.maximum(ranges.upl, ranges.lpl)[self.targets]
        targets = protection_order(self.targets, need, np.abs(problem.value[self.targets]), order)
        job = FirstPassJob(space=self.space, ranges=ranges, withheld=self.withheld, names=problem.names,
                           options=opts, insiders=self.insiders, n_targets=len(targets), start=t0,
                           give_up_after=self.give_up_after, give_up_work=self.give_up_work,
                           hurry_after=None if time_limit is None
                           else (0.0 if self.hurry else HURRY_GUARD_SHARE) * time_limit,
                           hurry_work=0 if self.hurry else None if hurry_work is None
                           else int(hurry_work * SEARCH_WORK_PER_SECOND),
                           chain_after=None if time_limit is None else CHAIN_SHARE * time_limit,
                           limit=time_limit)
        search = LocalSearch(self.space)
        groups = opts.default_groups(len(targets))
        groups = max(1, min(groups, len(targets))) if len(targets) else 1
        workers = max(1, min(self.workers, groups))
        bar = Progress(self.progress_label, total=len(targets)) if self.progress_label else None
        try:
            if groups > 1:
                parts = partition(targets, self.space.geometry, groups)
                first = merge_results(run_parallel(job, parts, bar, processes=workers))
            else:
                one = FirstPass(job, search, bar)
                one.run(targets)
                first = one.result()
        finally:
            if bar is not None:
                bar.close()
        if self.settled is not None:
            first = merge_results([first, _settled_result(self.settled, self.withheld)])
        if first.unprotectable:
            names = ", ".join(str(problem.names[i]) for i in first.unprotectable[:5])
            raise InfeasibleError(
                f"{len(first.unprotectable)} sensitive cell(s) cannot be protected: no table that keeps "
                f"the published cells, the relations and the a priori bounds moves them by their "
                f"protection level (first: {names})"
            )
        withheld, certs, lps = first.withheld, first.certs, first.lp_solves
        second: dict[str, object] = {}
        work0 = lp_work()
        assert opts.cleanup_effort is not None  # settled by for_table
        if opts.cleanup_effort > 0:
            # second pass: publish complements the certificates can do without
            res = release_complements(
                search, withheld, certs, first.held, ranges=ranges,
                single=ranges.single if self.insiders else np.zeros(problem.n, dtype=bool),
                candidates=withheld & ~problem.sensitive & ~self._audited_pattern(),
                max_lps=int(opts.cleanup_effort * max(lps, opts.cleanup_min_lps)), tol=opts.tol,
                swap=opts.cleanup_swap, deadline=_second_pass_deadline(t0, time_limit, self.give_up_after),
                # the work bound holds for each group: what the groups left of it
                max_work=None if self.give_up_work is None else max(groups * self.give_up_work - first.work, 0),
            )
            withheld, certs, lps = res.withheld, res.certs, lps + res.lp_solves
            second = _second_pass_stats(res)
        return _OrderOutcome(order=order, first=first, withheld=withheld, certs=certs, lps=lps,
                             second=second, workers=workers, work=first.work + lp_work() - work0)

    def _audited_pattern(self) -> np.ndarray:
        """The pattern an earlier audit proved settled targets on (no certificate of
        theirs says which of its cells they need, so the second pass keeps them all)."""
        audit = None if self.settled is None else self.settled.audit
        return np.zeros(self.problem.n, dtype=bool) if audit is None else audit.pattern


def _targets(need: np.ndarray, withheld: np.ndarray, settled: Settled | None) -> np.ndarray:
    """The targets to search for among the cells of ``need``: all but the ``settled``
    ones, whose certificates join the search's (the cells they move are withheld, in
    place); targets an earlier audit proved (``settled.audited``) get no certificate
    here: the caller audits the pattern again."""
    targets = np.flatnonzero(need)
    if settled is None:
        return targets
    withheld[settled.cells] = True
    return np.setdiff1d(targets, settled.skipped)


def _settled_result(settled: Settled, withheld: np.ndarray) -> FirstPassResult:
    """The settled targets as a first pass's result (to merge with the search's), on the
    job's pattern ``withheld``, which holds their cells (:func:`_targets`)."""
    return FirstPassResult(withheld=withheld, certs=settled.certs, labels=list(settled.labels),
                           held=list(settled.held), found_by=_settled_counts(settled), searched=0,
                           shared=0, singleton_used=0, insider_pairs=0, unprotectable=[], insider_open=[],
                           lp_solves=0, insider_added=np.zeros(len(withheld), dtype=bool))


def _settled_counts(settled: Settled) -> dict[str, int]:
    """How many targets the settled certificates and the earlier audit account for."""
    counts = {"settled": len(settled.targets)}
    if len(settled.audited):
        counts["audited"] = len(settled.audited)
    return counts


def protection_order(targets: np.ndarray, need: np.ndarray, size: np.ndarray, order: str) -> np.ndarray:
    """``targets`` in the order they are protected (one of ``FastOptions.order``'s single
    orders): ``"value"``, smallest ``size`` first, then largest ``need``; ``"need"``,
    largest ``need`` first; ties by cell index, so the order is the same on every run."""
    if order == "value":
        return targets[np.lexsort((targets, -need, size))]
    assert order == "need", order
    return targets[np.lexsort((targets, -need))]


HURRY_SHARE = 0.8
"""Share of ``fast_pattern``'s time limit, in seconds of LP work, after which the search
that keeps single respondents' cells fixed may add complements again
(``FastOptions.strict_adds``): the quicker search of before, which withholds more. Measured on the 13,851-cell three-way
table with holdings (`auto`, 337 s limit, 168 s left for completing `modular`'s
pattern): unhurried the completion took 163 s (+22 M, 335 s in all); hurrying after
half of it, 103 s (+40 M, 273 s in all); after 80 %, 147 s (+31 M, 312 s in all)."""


HURRY_GUARD_SHARE = 0.85
"""Share of ``fast_pattern``'s time limit, by the clock, after which the search hurries
whatever its LP work (the guard of ``HURRY_SHARE`` on a machine slower than
:data:`SEARCH_WORK_PER_SECOND` assumes, or a loaded one; ``stats["hurried_by"]`` is
then ``"clock"``). It also hurries when the chains start, or when less than two of its
slowest LPs are left before them."""


SEARCH_WORK_PER_SECOND = 20_000.0
"""LP work units (:func:`~tablesafe.audit.lp.lp_work`) counted as one second of
``fast``'s search (for ``HURRY_SHARE`` and ``BOTH_ORDERS_SHARE``). Measured alone on a
2-core machine (forty-eighth session, ``fast`` with one group, the search's work over
the run's seconds): the generated 13,000-cell two-way table 28,900 a second, the
13,851-cell three-way one 23,400, the 2,000-cell two-way one 14,500-25,600, Castro's
TOYSARAH 32,900 and DALE 25,300: there the work bound decides. Castro's problems without
a table structure whose local LPs span whole blocks do far less: HIER13 12,100, NINENEW
4,800, HIER16 2,700, TWO5IN6 1,900 (its LPs of 10,000 rows take 0.2-0.6 ms an
iteration, those of the three-way table 40 microseconds at the same size), so there the
clock's guard (``HURRY_GUARD_SHARE``) decides, as before, and the stats say so. No
weighting of iterations by the LP's size fitted both (tried: it hurried the completion
of ``modular``'s pattern on the three-way table after 1,037 targets, 81.5 M against
64.5 M unhurried)."""


CHAIN_SHARE = 0.9
"""Share of ``fast_pattern``'s time limit after which the targets left get certificates
without an LP (boxes, else chains: :mod:`tablesafe.suppress.local.chains`) instead of
local LPs, unless the pass has made ``fast_pace.PACED_FROM`` hurried searches (then only
``fast_pace.chains_needed`` starts them: ``fast_pace.chains_due``); the second pass stops
here in any case. The rest of the limit is for checking the certificates. Measured on a one-level three-way table of
14,976 cells with holdings, where the local LPs take up to 400 ms each: ``auto``
(``modular``, whose one subtable is left to the certificates) ran 529.7 s against an
automatic limit of 359 s before, 327.5 s now, withholding 107.8 M instead of 3.55 M
(benchmarks/RESULTS.md, twenty-second session)."""


def _second_pass_deadline(t0: float, time_limit: float | None, give_up_after: float | None) -> float | None:
    """When the second pass must stop: at the chain time or ``give_up_after``."""
    ends = [t0 + s for s in (None if time_limit is None else CHAIN_SHARE * time_limit, give_up_after)
            if s is not None]
    return min(ends) if ends else None


def _insider_added(problem: Problem, first: FirstPassResult, withheld: np.ndarray) -> dict[str, object]:
    """Cells of the pattern first withheld by an insider certificate, and their value:
    what protecting against single respondents brought in beyond the targets' own
    certificates (later targets' certificates may lean on those cells too, so without
    insiders the pattern would not be smaller by all of it)."""
    added = withheld & first.insider_added
    return {"insider_added": int(added.sum()),
            "insider_added_value": float(np.abs(problem.value[added & ~problem.sensitive]).sum())}


def _second_pass_stats(res: CleanupResult) -> dict[str, object]:
    """The second pass's part of the stats."""
    return {"released": res.released, "swapped": res.swapped, "tried": res.tried,
            "lp_solves": res.lp_solves, "budget_hit": res.budget_hit, "clock_stopped": res.clock_stopped}


def _stats(
    problem: Problem, first: FirstPassResult, n_targets: int, withheld: np.ndarray, lps: int, workers: int,
    second: dict[str, object], secs: float, time_limit: float | None,
) -> dict[str, object]:
    """The pattern's stats (see :func:`fast_pattern`)."""
    return {
        "seconds": secs,
        "targets": n_targets,
        "lp_solves": lps,
        "workers": workers,
        "shared_certificates": first.shared,
        "found_by": dict(sorted(first.found_by.items())),
        "certificates_with_singletons": first.singleton_used,
        "insider_certificates": first.insider_pairs - len(first.insider_open),
        "insider_unprotected": len(first.insider_open),
        **_insider_added(problem, first, withheld),
        "insider_unprotected_pairs": [
            (str(problem.names[a]), str(problem.names[b])) for a, b in first.insider_open[:20]
        ],
        "second_pass": second,
        "withheld": int(withheld.sum()),
        "secondary": int((withheld & ~problem.sensitive).sum()),
        "time_limit_hit": bool(time_limit is not None and secs > time_limit),
        "hurried_after_targets": first.hurried,
        "hurried_by": None if first.hurried is None else "clock" if first.hurried_by_clock else "work",
        "first_pass_work": first.work,
        "chain_certificates": int(first.found_by.get("chain", 0)),
        "box_certificates": int(first.found_by.get("box", 0)),
    }
