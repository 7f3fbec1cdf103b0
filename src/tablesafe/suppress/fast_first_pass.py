"""The first pass of ``fast``: a certificate for every target, one target after the other.

Targets are taken largest protection need first. Each gets the cheapest certificate a
local search finds (:class:`tablesafe.suppress.local.LocalSearch`); its cells are
withheld at once, so later targets lean on them. A symmetric certificate's direction
also protects, scaled, every later target it moves far enough (``share``). With
``insiders``, a certificate that moves a single respondent's cell (other than one that
overlaps the target) gets a further certificate that keeps that cell fixed. When the
time left is needed for them (or past the job's ``chain_after`` while the pace of its
hurried searches is unknown: :func:`~tablesafe.suppress.fast_pace.chains_due`), the
targets left get certificates without an LP (:mod:`tablesafe.suppress.local.chains`:
boxes, else chains of totals; they withhold more), so that a time limit holds; a target
whose box would be dear gets a search on a small box instead while the time allows
(:mod:`tablesafe.suppress.fast_fallback`).

All a pass needs is in a :class:`FirstPassJob` (picklable), so groups of targets can be
protected in worker processes (:mod:`tablesafe.suppress.fast_workers`), each returning
a :class:`FirstPassResult` (both in :mod:`tablesafe.suppress.fast_pass_data`).
"""

from __future__ import annotations

import sys
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, Protocol

import numpy as np

from tablesafe.audit.lp import lp_work
from tablesafe.errors import SolverTimeLimit
from tablesafe.suppress import fast_pace
from tablesafe.suppress.combined_directions import CombinedDirections
from tablesafe.suppress.fast_fallback import small_boxes, small_search_due
from tablesafe.suppress.fast_pace import (
    chains_due,
    chains_start,
    hurried_seconds,
    pace_hurries_at,
)
from tablesafe.suppress.fast_pass_data import FirstPassJob, FirstPassResult
from tablesafe.suppress.local import (
    CertificateLog,
    LocalSearch,
    Part,
    Query,
    both_ways,
    unit_deviation,
)
from tablesafe.suppress.local.chains import ChainRoom, RelationChains, TableChains
from tablesafe.suppress.local.lp import LPTimeLimit

__all__ = ["FirstPass", "FirstPassJob", "FirstPassResult", "run_group"]

Direction = tuple[np.ndarray, np.ndarray]
"""``(cells, unit deviation)`` of a symmetric certificate (the target moving by +1)."""


class Reports(Protocol):
    """Where a first pass reports each target it has protected (a :class:`~tablesafe.progress.Progress`,
    or a worker's shared count)."""

    def update(self, done: int, /) -> Any:
        """``done`` targets protected so far."""


def run_group(job: FirstPassJob, group: np.ndarray, progress: Reports | None = None) -> FirstPassResult:
    """Protect the targets of ``group`` with a solver of this process's own (the entry
    point of a worker process)."""
    first = FirstPass(job, LocalSearch(job.space), progress)
    first.run(group)
    return first.result()


class FirstPass:
    """The state of a first pass: the pattern, the certificates and the counters.

    Args:
        job: the pass's data.
        search: the local search to use (its solver's count is the pass's LP count).
        progress: a progress display to update after each target.
    """

    def __init__(self, job: FirstPassJob, search: LocalSearch, progress: Reports | None = None) -> None:
        self.job = job
        self.search = search
        self.progress = progress
        self.withheld = job.withheld.copy()
        self.insider_added = np.zeros(len(job.withheld), dtype=bool)
        self.log = CertificateLog()
        self.found_by: Counter[str] = Counter()
        self.open = np.zeros(len(job.withheld), dtype=bool)  # targets still to protect
        self.searched = 0
        self.shared = 0
        self.singleton_used = 0
        self.insider_pairs = 0
        self.unprotectable: list[int] = []
        self.insider_open: list[tuple[int, int]] = []
        self.hurried_at: int | None = None
        self.hurried_by_clock = False
        self.hurried_searches = 0  # targets searched in a hurry
        self._chains: TableChains | None = None
        self._relation_chains: RelationChains | None = None
        self._chains_tried = 0
        self._chains_found = 0
        self._cost = 0.0  # weight of the cells the certificates withheld
        self._searched_cost = 0.0  # ... that of the searched targets' certificates
        self._slowest = 0.0  # seconds of the slowest target's search so far
        self.lp_capped = 0  # LPs stopped by their cap (:meth:`_capped_protect`)
        self._cap_kind = ""  # the last cap's kind
        self._open_left = 0  # targets of the group still open (``open``'s count)
        self._work0 = lp_work()
        r = job.ranges
        # directions found so far, for insiders' certificates without a search
        self.combos = CombinedDirections(r.cap, (r.upl > 0) | (r.lpl > 0)) if job.insiders else None

    def run(self, group: np.ndarray) -> None:
        """Protect the targets of ``group`` in order.

        Raises:
            SolverTimeLimit: the job's ``give_up_after`` passed.
        """
        job, opts = self.job, self.job.options
        self.open[group] = True
        self._open_left = int(self.open.sum())  # kept as targets close: no count per target
        chaining = False
        began = time.perf_counter() - job.start
        for i, t in enumerate(group.tolist()):
            if not self.open[t]:
                continue  # protected by the direction of an earlier certificate
            self._give_up_when_asked(len(group))
            if job.chain_after is not None and not chaining:
                now = time.perf_counter() - job.start
                # a search begun now may take as long as the slowest so far; the targets
                # not reached yet bound those left from above, and many are closed on the
                # way by shared directions, so they are counted only then
                chaining = chains_due(job, now, now + self._slowest, (len(group) - i, self._open_left),
                                      self.hurried_searches)
            if job.hurry_after is not None and not self.search.hurry:
                by = self._hurry_now(chaining, began, i, len(group))
                if by is not None:
                    self._start_hurry(by)
            self.open[t] = False
            self._open_left -= 1
            if chaining and self._chains_worth_trying() and self._chain(t):
                if self.progress is not None:
                    self.progress.update(self._done())
                continue
            began_target = time.perf_counter()
            try:
                found, direction = self._capped_protect(t, began, i, len(group))
            except LPTimeLimit:
                self.lp_capped += 1
                found = None
                if self._cap_kind == "pace":
                    # the pace rule would have hurried the search during this LP: hurried now
                    self._start_hurry("clock")
                    try:
                        found, direction = self._capped_protect(t, began, i, len(group))
                    except LPTimeLimit:
                        self.lp_capped += 1
                if found is None:
                    # its LP ran into the time the chains need: chains from here on
                    chaining = True
                    if self._chain(t):
                        if self.progress is not None:
                            self.progress.update(self._done())
                        continue
                    found, direction = self.protect(t)  # no chain: the search, whatever it takes
            self._slowest = max(self._slowest, time.perf_counter() - began_target)
            self.hurried_searches += int(self.search.hurry)
            if not found:
                self.unprotectable.append(t)
                continue
            self._accept(t, found, direction, np.unique(np.concatenate([c for _, c, _ in found])))
            if opts.log_every and self.searched % opts.log_every == 0:
                print(
                    f"fast: {self.searched} searched, {self.shared} shared of {job.n_targets} targets, "
                    f"{time.perf_counter() - job.start:.0f} s, {int(self.withheld.sum())} withheld",
                    file=sys.stderr, flush=True,
                )

    def _accept(self, t: int, found: list[Part], direction: Direction | None, moved: np.ndarray) -> None:
        """Keep a searched certificate of ``t`` that moves the cells ``moved`` (its cells
        withheld, its insiders' certificates, its direction shared) and count what it
        added."""
        job = self.job
        before = self._cost
        self._record(t, found, -1)
        leaning = self.leaning_on(t, moved)
        if len(leaning):
            self.singleton_used += 1
        if job.insiders and len(leaning):
            self._insider_certificates(t, leaning)
        if direction is not None and job.options.share:
            self._share(t, direction)
        if self.progress is not None:
            self.progress.update(self._done())
        self.searched += 1
        self._searched_cost += self._cost - before

    def result(self) -> FirstPassResult:
        """What this pass found so far."""
        return FirstPassResult(
            withheld=self.withheld, certs=self.log.flat(), labels=self.log.labels, held=self.log.held,
            found_by=dict(self.found_by), searched=self.searched, shared=self.shared,
            singleton_used=self.singleton_used, insider_pairs=self.insider_pairs,
            unprotectable=self.unprotectable, insider_open=self.insider_open,
            lp_solves=self.search.lp_solves, hurried=self.hurried_at, insider_added=self.insider_added,
            hurried_by_clock=self.hurried_by_clock, work=self._worked(), lp_capped=self.lp_capped,
        )

    def protect(
        self, t: int, movable: np.ndarray | None = None, *, strict: bool = True, local: bool | int = False,
        insider: bool = False,
    ) -> tuple[list[Part] | None, Direction | None]:
        """``(certificates, direction)`` for ``t`` moving only ``movable`` cells (``None``:
        every free cell); ``strict``, ``local`` and ``insider`` as in :meth:`LocalSearch.certify`.

        ``certificates`` lists the parts (``None`` if there is none); ``direction`` is the
        unit deviation when one symmetric deviation serves both ways (``None`` otherwise).
        """
        r, tol = self.job.ranges, self.job.options.tol
        amount = max(r.upl[t], r.lpl[t])
        query = Query(t, amount, r.cap, r.cap, r.weight, self.withheld)
        d, cells, how = self.search.certify(query, movable, strict=strict, local=local, insider=insider)
        if d is not None:
            cells, unit = unit_deviation(cells, d, amount, tol)
            self.found_by[how] += 1
            if self.combos is not None:
                self.combos.add(cells, unit)
            return both_ways(cells, unit, r.upl[t], r.lpl[t], self._directions(t)), (cells, unit)
        # the symmetric box is too tight: each direction on its own, within the
        # a priori bounds (a downward move is an upward move with bounds swapped)
        found: list[Part] = []
        for direction, amt, cu, cdn, sign in (
            (0, r.upl[t], r.room_up, r.room_down, 1.0),
            (1, r.lpl[t], r.room_down, r.room_up, -1.0),
        ):
            if amt <= 0:
                continue
            query = Query(t, amt, cu, cdn, r.weight, self.withheld)
            d, cells, how = self.search.certify(query, movable, strict=strict, local=local, insider=insider)
            if d is None:
                return None, None
            keep = np.abs(d) > tol * amt
            found.append((direction, cells[keep], sign * d[keep]))
            self.found_by["one-way " + how] += 1
        return found, None

    def _start_hurry(self, by: str) -> None:
        """The search hurries from here on; ``by``: what says so (``"work"`` or ``"clock"``)."""
        self.search.hurry = True
        self.hurried_at = self.searched
        self.hurried_by_clock = by == "clock"

    def _capped_protect(self, t: int, began: float, reached: int, size: int
                        ) -> tuple[list[Part] | None, Direction | None]:
        """:meth:`protect` of ``t`` whose LPs may each take only so long, when the job has a
        limit (:data:`~tablesafe.suppress.fast_pace.LP_CAP_FLOOR` at least);
        :attr:`_cap_kind` says which cap it was:

        - ``"pace"``, before the search hurries: the time after which the pace rule of
          :meth:`_short_of_time` would hurry it (``began``, ``reached`` of ``size``: as
          there), so that one long LP does not spend the time a hurried search needs;
        - ``"chains"``, on a table structure: the time until the chains of the open
          targets (``t`` among them) must start (:func:`~tablesafe.suppress.fast_pace.chains_needed`).
          A table's boxes almost always give a target a certificate; the chains read from
          relations alone seldom do, and a target without one would search again,
          uncapped (Castro's NINE12 with ``fast`` at 10 s ran 11.2 s with this cap there).

        Raises:
            LPTimeLimit: an LP ran past it.
        """
        job = self.job
        now = time.perf_counter() - job.start
        caps: list[tuple[float, str]] = []
        if job.limit is not None and job.space.geometry is not None and self._chains_worth_trying():
            # the open targets, t's own search included
            caps.append((chains_start(job, self._open_left + 1) - now, "chains"))
        if job.hurry_after is not None and not self.search.hurry:
            caps.append((pace_hurries_at(job.hurry_after, began, reached, size) - now, "pace"))
        if not caps:
            return self.protect(t)
        cap, self._cap_kind = min(caps)
        with self._lp_cap(cap):
            return self.protect(t)

    @contextmanager
    def _lp_cap(self, seconds: float) -> Iterator[None]:
        """Each local LP within the block may take ``seconds`` at most
        (:data:`~tablesafe.suppress.fast_pace.LP_CAP_FLOOR` at least); no cap after it."""
        lp = self.search.lp
        lp.time_cap = max(seconds, fast_pace.LP_CAP_FLOOR)
        try:
            yield
        finally:
            lp.time_cap = None

    def _worked(self) -> int:
        """LP work done in this process since the pass started (what the job's work
        bounds count)."""
        return lp_work() - self._work0

    def _give_up_when_asked(self, size: int) -> None:
        """Raise :class:`SolverTimeLimit` past the job's ``give_up_work`` (or its guard,
        ``give_up_after``: then with ``by_clock`` set)."""
        job = self.job
        worked = job.give_up_work is not None and self._worked() > job.give_up_work
        timed = job.give_up_after is not None and time.perf_counter() - job.start > job.give_up_after
        if worked or timed:
            exc = SolverTimeLimit(f"fast: {self.searched} of {size} sensitive cells had certificates when "
                                  f"{'its work' if worked else 'the time'} ran out; giving up as asked")
            exc.by_clock = not worked
            # what a hurried pass over the targets left would take at this one's pace
            done = size - int(self.open.sum())
            exc.hurried_estimate = (hurried_seconds(time.perf_counter() - job.start, done, size - done)
                                    if done else None)
            exc.partial = self.withheld.copy()  # the cells of the certificates found so far
            raise exc

    def _hurry_now(self, chaining: bool, began: float, reached: int, size: int) -> str | None:
        """Whether the search must hurry now, and what says so: ``"work"`` past the job's
        ``hurry_work`` (counted from this pass's start, so the same target in every run) or
        when its pace says it would pass it (:data:`~tablesafe.suppress.fast_pace.HURRY_PACE_WORK_GAIN`),
        ``"clock"`` when the chains have started or :meth:`_short_of_time` (the guard);
        ``None`` when neither. ``began``: seconds after the job's start at which this
        pass began; ``reached`` of the group's ``size`` targets are behind it."""
        job = self.job
        if job.hurry_work is not None:
            worked = self._worked()
            if worked >= job.hurry_work:
                return "work"
            # the pace rule of _short_of_time counted in work, so that where it decides
            # every run hurries at the same target
            if (reached > 0 and worked >= fast_pace.HURRY_PACE_FROM * job.hurry_work
                    and worked + worked / reached * (size - reached) / fast_pace.HURRY_PACE_WORK_GAIN
                    > job.hurry_work):
                return "work"
        if chaining or self._short_of_time(began, reached, size):
            return "clock"
        return None

    def _short_of_time(self, began: float, reached: int, size: int) -> bool:
        """Past the job's ``hurry_after``; or (with a chain time) less than two of the
        slowest LPs so far left before it: a search that goes on unhurried would
        overrun the limit by its last LPs (measured: ``optimal``'s completion on Castro's
        HIER16, whose whole-block LPs take 2.7 s, ended 1.2 s past a 30 s limit + 10 %);
        or the targets left would take it past ``hurry_after`` even at
        :data:`~tablesafe.suppress.fast_pace.HURRY_PACE_GAIN` times this pass's pace so far (:data:`~tablesafe.suppress.fast_pace.HURRY_PACE_FROM`)."""
        job = self.job
        now = time.perf_counter() - job.start
        assert job.hurry_after is not None
        if now > job.hurry_after:
            return True
        if job.chain_after is not None and job.chain_after - now < 2.0 * self.search.lp.longest:
            return True
        ran = now - began
        return (reached > 0 and ran >= fast_pace.HURRY_PACE_FROM * job.hurry_after
                and now + hurried_seconds(ran, reached, size - reached) > job.hurry_after)

    def _done(self) -> int:
        """Targets protected so far by a search or without one."""
        return self.searched + self.found_by["chain"] + self.found_by["box"]

    def _chains_worth_trying(self) -> bool:
        """Whether the chains still find certificates often enough to be tried: not
        once :data:`~tablesafe.suppress.fast_pace.CHAIN_TRIAL` of them found less than :data:`~tablesafe.suppress.fast_pace.CHAIN_MIN_SHARE`."""
        return (self._chains_tried < fast_pace.CHAIN_TRIAL
                or self._chains_found >= fast_pace.CHAIN_MIN_SHARE * self._chains_tried)

    def _chain(self, t: int) -> bool:
        """Protect ``t`` without a search (see :mod:`~tablesafe.suppress.local.chains`):
        by the cheapest box of cells around it, else by a chain of totals; ``False`` when
        it has neither. Single respondents a chain moves whose cells do not overlap ``t``
        are left open (no LP is spent on them)."""
        job, r = self.job, self.job.ranges
        room = ChainRoom(job.space.free, r.room_up, r.room_down, r.weight, self.withheld)
        up, down = float(r.upl[t]), float(r.lpl[t])
        geo = job.space.geometry
        got, how = None, "chain"
        if geo is None:
            if self._relation_chains is None:
                self._relation_chains = RelationChains(job.space.relations, job.space.occupied)
            got = self._relation_chains.direction(t, room, up, down)
        else:
            if self._chains is None:
                self._chains = TableChains(geo.cells, job.space.occupied, r.scale)
            got = self._chains.box(t, room, up, down, job.space.single)
            if got is not None:
                how = "box"
            else:
                got = self._chains.direction(t, room, up, down)
            if got is not None and self._small_instead(t, float(room.price(got[0][1:]).sum())):
                return True
        self._chains_tried += 1
        if got is None:
            return False
        self._chains_found += 1
        cells, unit = got
        self._record(t, both_ways(cells, unit, r.upl[t], r.lpl[t], self._directions(t)), -1)
        self.found_by[how] += 1
        leaning = self.leaning_on(t, cells)
        if job.insiders and len(leaning):
            self.insider_pairs += len(leaning)
            self.insider_open.extend((t, int(s_cell)) for s_cell in leaning.tolist())
        if job.options.share:
            self._share(t, (cells, unit))
        return True

    def _small_instead(self, t: int, price: float) -> bool:
        """Protect ``t`` by a search on a small box instead of a box or chain that costs
        ``price``, when :func:`~tablesafe.suppress.fast_fallback.small_search_due` says
        so; its LPs may take only the time until the chains of the targets after it
        must start. ``False`` when it was not due, found nothing, or found a certificate
        whose new cells cost more than the box."""
        job = self.job
        now = time.perf_counter() - job.start
        chains_from = chains_start(job, self._open_left)
        if not small_search_due(price, self._searched_cost, self.searched, now, chains_from):
            return False
        counted = self.found_by.copy()
        try:
            with self._lp_cap(chains_from - now), small_boxes(self.search):
                found, direction = self.protect(t, local=True)
        except LPTimeLimit:
            self.lp_capped += 1
            return False
        if not found:
            return False
        moved = np.unique(np.concatenate([c for _, c, _ in found]))
        new = moved[~self.withheld[moved]]
        if self.job.ranges.weight[new].sum() > price:
            self.found_by = counted  # the box costs less
            return False
        self.found_by["small search, not a box"] += 1
        self._accept(t, found, direction, moved)
        return True

    def leaning_on(self, t: int, moved: np.ndarray) -> np.ndarray:
        """Single-respondent cells a certificate of ``t`` moves whose respondent is not
        one of ``t``'s own contributors.

        A single respondent knows its cell's value, so a certificate that moves the cell
        proves nothing to it. The respondent of a cell that overlaps the target (a
        non-empty common part) is one of the target's contributors, whom the rule's
        protection level already allows for (the second contributor knows its own value).
        """
        lean = moved[self.job.ranges.single[moved] & (moved != t)]
        geo = self.search.geometry
        if len(lean) and geo is not None:
            lean = lean[~geo.overlaps(lean, t, self.job.space.occupied)]
        return lean

    def _directions(self, t: int) -> list[int]:
        """The directions ``t`` must move in (0 up, 1 down)."""
        r = self.job.ranges
        return [k for k, amt in ((0, r.upl[t]), (1, r.lpl[t])) if amt > 0]

    def _record(self, t: int, parts: list[Part], insider: int) -> None:
        """Withhold every cell the certificate moves and log it (an insider certificate's
        new cells are marked in ``insider_added``)."""
        for _, cells, _ in parts:
            new = cells[~self.withheld[cells]]
            self._cost += float(self.job.ranges.weight[new].sum())
            if insider >= 0:
                self.insider_added[new] = True
            self.withheld[cells] = True
        self.log.add(t, parts, insider)

    def _insider_certificates(self, t: int, leaning: np.ndarray) -> None:
        """Certificates of ``t`` that keep the single respondents' cells ``leaning`` fixed.

        One certificate that keeps all of them fixed covers every insider (any singleton
        it moves is covered by the first one); where there is none, one certificate per
        insider. (The singleton-free search already failed for this target, so these
        allow the other singletons.)
        """
        free, names = self.job.space.free, self.job.names
        self.insider_pairs += len(leaning)
        if self._combined(t, leaning):
            return
        alt = None
        if len(leaning) > 1:
            held = free.copy()
            held[leaning] = False
            # (within the boxes only: the fallback below covers what it misses)
            alt, _ = self.protect(t, held, strict=False, local=True, insider=True)
        if alt:
            self._record(t, alt, self.log.label(leaning, names))
            return
        for s_cell in leaning.tolist():
            if len(leaning) > 1 and self._combined(t, np.array([s_cell])):
                continue
            held = free.copy()
            held[s_cell] = False
            alt, _ = self.protect(t, held, strict=False, local=self.job.options.insider_hops, insider=True)
            if alt:
                self._record(t, alt, self.log.label(np.array([s_cell]), names))
            else:
                self.insider_open.append((t, s_cell))

    def _combined(self, t: int, held: np.ndarray) -> bool:
        """Record an insiders' certificate of ``t`` keeping ``held`` fixed, combined from
        the directions found so far (:mod:`~tablesafe.suppress.combined_directions`),
        if they give one."""
        if self.combos is None:
            return False
        r = self.job.ranges
        got = self.combos.certificate(t, held, max(r.upl[t], r.lpl[t]), self.withheld, self.job.options.tol)
        if got is None:
            return False
        self._record(t, both_ways(*got, r.upl[t], r.lpl[t], self._directions(t)),
                     self.log.label(held, self.job.names))
        self.found_by["insider-combined"] += 1
        return True

    def _share(self, t: int, direction: Direction) -> None:
        """Protect the other targets the direction of ``t``'s certificate moves far enough.

        ``v + lam * d`` stays within every moved cell's symmetric range for
        ``|lam| <= rho = min(cap / |d|)``; a target ``s`` the direction moves (``d_s != 0``)
        is then protected both ways when its amount is at most ``rho * |d_s|``, and the
        scaled direction is its certificate (no LP needed).
        """
        r = self.job.ranges
        cells, d = direction
        ad = np.abs(d)
        rho = float(np.min(r.cap[cells] / ad))
        cand = (cells != t) & self.open[cells]
        if not cand.any():
            return
        amt = np.maximum(r.upl[cells], r.lpl[cells])
        fits = cand & (amt <= rho * ad * (1.0 - 1e-9))
        for k in np.flatnonzero(fits).tolist():
            s_cell = int(cells[k])
            if self.job.insiders and len(self.leaning_on(s_cell, cells)):
                continue
            unit = d / d[k]  # the direction with s moving by +1
            parts = both_ways(cells, unit, r.upl[s_cell], r.lpl[s_cell], self._directions(s_cell))
            self._record(s_cell, parts, -1)
            self.open[s_cell] = False
            self._open_left -= 1
            self.shared += 1
