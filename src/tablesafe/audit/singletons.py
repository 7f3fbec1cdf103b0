"""Singleton insider attacks, decided in bulk per block and target.

An insider (:mod:`tablesafe.structure.insiders`) knows its cell ``s`` exactly. Against
a target ``t`` and direction ``d`` it fails exactly when some feasible table keeps
``x_s`` at its true value and still moves ``t`` to its goal (``value + upl``, ``value -
lpl``). Feasible tables form a convex set, so

1. *Stored tables.* If two tables that reach the goal have ``x_s`` on both sides of its
   true value (or one has it equal), a convex combination of them keeps ``x_s`` and
   reaches the goal. The audit's stored optimal tables settle most pairs this way,
   without an LP.
2. *All open insiders at once.* Every insider still open is moved the same way (above
   or below its true value) by all the stored tables that reach the goal. One LP holds
   all of them on the other side of their true values (``x_s <= value`` for those the
   tables move up, ``>=`` for those they move down) and maximises ``d x_t``: if it
   reaches the goal, its table and a stored one bracket every such ``x_s``, and for
   each insider a convex combination of the two keeps ``x_s`` and reaches the goal. The
   LP is tried on the target's neighbourhoods first, smallest first (cells further away
   held at their true values: their tables are feasible for the whole block), then on
   the whole block.
3. *Peeling.* When the joint LP misses the goal, the held cells with a non-zero reduced
   cost are set aside and the rest is tested again; the cells set aside are tested one
   by one (on the neighbourhood, then with the block LP of step 5). Held on one side, a
   single insider misses the goal exactly when held at its value does (the largest
   ``d x_t`` with ``x_s`` fixed is concave in the value it is fixed at, and a reaching
   table has ``x_s`` beyond it).
   A single test that misses on a neighbourhood is tried on a relaxation around the
   target (the relations within a few hops, every cell they hold free, the rest
   dropped): every table of the block is one of it, so a miss there means the block's
   LP misses too, and the pair goes to step 5 without the larger neighbourhoods; when
   a neighbourhood with the cell held reaches the relaxation's optimum, that optimum is
   the block's, the finding's exact bound, and step 5 is not needed either.
4. *Kept tables.* The block tables these LPs find that reach a target's goal are kept
   (a few per target and direction) and answer the target's later insiders the way the
   stored tables of step 1 do, before their own LP.
5. *Per insider.* The insiders still open are checked with the block LP that fixes
   their cell (batch LPs first for an insider with many open targets); its optimum is
   the exact bound of the finding when it misses the goal.

Every "protected" is backed by a feasible table that keeps the insider's cell fixed,
every finding by the LP optimum with only that cell fixed, so verdicts equal those of
one fresh LP per (target, insider) pair (tests/audit/test_property.py).

Targets whose verdict needs exact bounds (a sliding level, or no positive level) are
checked pair by pair with LPs, after the stored tables.
"""

from __future__ import annotations

from collections import Counter

import numpy as np
import scipy.sparse as sp

from tablesafe import live_counts
from tablesafe.audit import lp as _lp
from tablesafe.audit.block import Block
from tablesafe.audit.intervals import IntervalResult
from tablesafe.audit.neighbourhood import Neighbourhoods, ReachingTables
from tablesafe.audit.result import verdict_of
from tablesafe.audit.stored_tables import StoredTables
from tablesafe.parallel import map_forked, worker_count
from tablesafe.problem import Problem
from tablesafe.structure.insiders import InsiderModel

DUAL_TOL = 1e-9
"""Reduced cost (in the LP's units) above which a fixed cell counts as binding."""
LOCAL_LEVELS = ((5, 2000), (8, 3000), (12, 4500))
"""Neighbourhoods tried around a target, smallest first: (relation hops, most cells; a
hop that would pass the cap is not taken). A three-way table's smallest cycle, a cube of
eight cells, spans three hops. On the one 6,445-cell block of a generated 13,851-cell
three-way `modular` pattern (100 sampled targets, one process) the insider checks took
65 s with the first level alone (440 whole-block LPs for single insiders, 65-75 ms each,
and 169 for joint tests, 190 ms), 41 s with the second alone (1,168 of its LPs, 31 ms).
A relation of its subtables' 6,511-cell block holds two or three withheld cells: 5 hops
reach about 500 cells, 8 about 2,000, 10 about 4,000. On 300 sampled targets (sixtieth
session) the middle level and ``RELAX_LEVELS`` took 28.1 s to 18.0 s."""
TWO_WAY_LOCAL_SHARE = 1 / 3
"""On tables of one or two dimensions, a neighbourhood of ``LOCAL_LEVELS`` holding more
than this share of its block's cells is passed over for the block's LP, warm-started
from the base audit (a few ms there; such a neighbourhood is a new model, 21 ms per LP
on the generated flat 12,943-cell table, whose insider checks took 143.6 s before and
58.2 s after; benchmarks/RESULTS.md, forty-third session). Three-way tables keep every
level: their block LPs are slow even from a warm basis."""
POOL_MAX_ENTRIES = 50_000_000
"""Most deviations the stored tables of one block may hold (about 600 MB)."""
POOL_ROWS = 32
"""Most stored tables tried per target and direction before the LPs decide."""
BATCH_MIN = 4
"""Fewest open targets of one insider and direction for which batch LPs are tried."""
BATCH_ROUNDS = 3
WARM_STARTS = True
"""Joint tests start from the basis of the target's own optimum in the base audit (on a
150-target sample of the 13,851-cell three-way table's `modular` pattern: insider checks
55 s instead of 62 s, 879 block LPs instead of 963). The per-insider LPs keep their
predecessor's basis: started from the target's own, each was faster but their tables
answered fewer later pairs (1,619 LPs, 80 s)."""
HALF_OPEN = True
"""Joint tests hold each open insider's cell only on the side of its true value that the
target's reaching tables do not move it to (:meth:`_BlockCheck._held`)."""
REUSE_LOCAL = True
"""Neighbourhood tables reaching a goal answer the single tests they can
(:class:`~tablesafe.audit.neighbourhood.ReachingTables`)."""
KEEP_TABLES = 8
"""Most block tables kept per target and direction for the insiders still to check."""
RELAX_LEVELS: tuple[tuple[int, int], ...] = ((5, 2000),)
"""Relaxations (relation hops, most cells; one that would pass the cap is not tried) on
which an insider whose single test missed its goal on a neighbourhood is tried, once
per target and direction: a miss there proves the pair fails on the block, which sends
it to its block LP without the larger neighbourhoods' tests, or to none when a
neighbourhood of at most ``EXACT_SHARE`` of the block reaches the relaxation's optimum
with the cell held (within ``EXACT_REL_TOL``): the block's optimum lies between the two.
On 1,000 sampled targets of 13k3d's subtable block (sixtieth session, one process) the
screening took 68-75 s with that, 77-80 s without (781 block LPs instead of 335)."""
EXACT_SHARE, EXACT_REL_TOL = 0.4, 1e-9


def singleton_findings(problem: Problem, mask: np.ndarray, base: IntervalResult,
                       eligible: np.ndarray, up_need: np.ndarray, dn_need: np.ndarray,
                       rel_tol: float, counts: dict,
                       recheck: tuple[np.ndarray, np.ndarray] | None = None,
                       workers: int | None = None) -> list[dict]:
    """Findings (records for :func:`tablesafe.audit.insider.insider_findings`) of the
    single respondents of withheld cells against the ``eligible`` targets (with
    ``recheck = (targets, cells)``: only pairs whose target is in ``targets`` or whose
    respondent's cell is in ``cells``).

    The targets are cut into parts (:func:`_parts`: whole blocks, large blocks in
    contiguous runs of targets) that are checked side by side by ``workers`` forked
    processes (default: :func:`tablesafe.parallel.worker_count`) when there are at least ``PARALLEL_MIN_TARGETS``.
    The parts do not depend on the number of workers, and every verdict is decided
    exactly, so the findings do not either.
    """
    model = InsiderModel.of(problem)
    free = mask & ~base.exact & (base.block >= 0) & model.single
    if not free.any():
        return []
    parts = _parts(base, free, eligible, recheck)
    job = _Job(problem, base, free, model, up_need, dn_need, rel_tol, recheck)
    job.share(parts)
    n = worker_count() if workers is None else int(workers)
    total = sum(t.size for _, t in parts)
    live_counts.add("insider_total", total)
    if n > 1 and len(parts) > 1 and total >= PARALLEL_MIN_TARGETS:
        global _JOB
        _JOB = job
        try:
            outcomes = map_forked(_run_part, parts, n)
        finally:
            _JOB = None
    else:
        outcomes = [job.run(part) for part in parts]
    records: list[dict] = []
    for found, part_counts in outcomes:
        records.extend(found)
        for key, val in part_counts.items():
            counts[key] = counts.get(key, 0) + val
    return records


PARALLEL_MIN_TARGETS = 1000
"""Fewest targets for which the insider checks are shared among worker processes."""
PART_TARGETS = 600
"""Targets of a block above which it is checked in parts of about this many targets
(contiguous runs, so that each single respondent's targets mostly fall into one part)."""


def _parts(base: IntervalResult, free: np.ndarray, eligible: np.ndarray,
           recheck: tuple[np.ndarray, np.ndarray] | None) -> list[tuple[int, np.ndarray]]:
    """(block, local targets) to check, large blocks cut into runs of targets."""
    out: list[tuple[int, np.ndarray]] = []
    for bi in np.unique(base.block[free]).tolist():
        b = base.blocks[int(bi)]
        targets = np.flatnonzero(eligible[b.cols])
        if targets.size == 0:
            continue
        if recheck is not None and not recheck[1][b.cols[free[b.cols]]].any():
            # a target outside ``recheck[0]`` only meets the respondents of ``recheck[1]``,
            # and this block has none of them
            targets = targets[recheck[0][b.cols[targets]]]
            if targets.size == 0:
                continue
        pieces = max(1, round(targets.size / PART_TARGETS))
        out.extend((int(bi), t) for t in np.array_split(targets, pieces))
    return out


class _Job:
    """What every part's checks share (module global in forked workers)."""

    def __init__(self, problem: Problem, base: IntervalResult, free: np.ndarray, model: InsiderModel,
                 up_need: np.ndarray, dn_need: np.ndarray, rel_tol: float,
                 recheck: tuple[np.ndarray, np.ndarray] | None) -> None:
        self.problem, self.base, self.free, self.model = problem, base, free, model
        self.up_need, self.dn_need, self.rel_tol, self.recheck = up_need, dn_need, rel_tol, recheck
        self.stored: dict[int, StoredTables] = {}

    def run(self, part: tuple[int, np.ndarray]) -> tuple[list[dict], dict]:
        """The findings and counts of one part."""
        bi, targets = part
        b = self.base.blocks[bi]
        single = np.flatnonzero(self.free[b.cols])
        counts: dict = {}
        records: list[dict] = []
        _BlockCheck(self.problem, b, self.base, single, self.model, self.up_need, self.dn_need,
                    self.rel_tol, counts, self.recheck, self.stored.get(bi)).run(targets, records)
        return records, counts

    def share(self, parts: list[tuple[int, np.ndarray]]) -> None:
        """Build the stored tables of every block checked in more than one part once."""
        count = Counter(bi for bi, _ in parts)
        for bi in sorted(bi for bi, n in count.items() if n > 1):
            b = self.base.blocks[bi]
            self.stored[bi] = StoredTables(b, self.base, np.flatnonzero(self.free[b.cols]), POOL_MAX_ENTRIES)


_JOB: _Job | None = None


def _run_part(part: tuple[int, np.ndarray]) -> tuple[list[dict], dict]:
    assert _JOB is not None  # set by singleton_findings before the workers fork
    return _JOB.run(part)


class _BlockCheck:
    """The insider checks of one block (local indices into ``b.cols`` throughout)."""

    def __init__(self, problem: Problem, b: Block, base: IntervalResult, single: np.ndarray,
                 model: InsiderModel, up_need: np.ndarray, dn_need: np.ndarray,
                 rel_tol: float, counts: dict,
                 recheck: tuple[np.ndarray, np.ndarray] | None = None,
                 stored: StoredTables | None = None) -> None:
        self.p = problem
        self.two_way = problem.model is not None and len(problem.model.dims) <= 2
        self.recheck = recheck
        self.b = b
        self.base = base
        self.single = single
        self.model = model
        self.up_need = up_need[b.cols]
        self.dn_need = dn_need[b.cols]
        self.rel_tol = rel_tol
        self.counts = counts
        self.truth = b.truth
        self.tol = 1e-9 * (1.0 + np.abs(self.truth))
        if stored is None:
            stored = StoredTables(b, base, single, POOL_MAX_ENTRIES)
        self.stored = stored
        self._tol_single = self.tol[single]
        self.csc = sp.csc_matrix(b.matrix)
        self.csr = sp.csr_matrix(b.matrix)
        self._nb = Neighbourhoods(b, self.csc, self.csr)
        self._reaching: dict[tuple[int, int], list[np.ndarray]] = {}
        self._warm_key: tuple[int, int] | None = None
        self._side = np.zeros(self.truth.size, dtype=np.int8)
        self._found = ReachingTables(self.truth)

    # --- main loop ----------------------------------------------------------------

    def run(self, targets: np.ndarray, records: list[dict]) -> None:
        b = self.b
        cells = b.cols[self.single]
        found: dict[int, dict[int, dict[int, float]]] = {}
        suspects: dict[int, list[tuple[int, int, float]]] = {}
        for k in targets.tolist():
            live_counts.add("insider")
            t = int(b.cols[k])
            att = self.single[np.isin(cells, self.model.attackers(t, cells))]
            if self.recheck is not None and not self.recheck[0][t]:
                att = att[self.recheck[1][b.cols[att]]]
            if att.size == 0:
                continue
            needs = {1: self.up_need[k], -1: self.dn_need[k]}
            if np.isnan(needs[1]) or np.isnan(needs[-1]):
                self._exact_pairs(k, att, found.setdefault(k, {}))
                continue
            for d in (1, -1):
                need = needs[d]
                if np.isinf(need):
                    continue
                open_ = self._open_after_pool(k, d, need, att)
                if open_.size:
                    left, pinned = self._suspects(k, d, need, open_)
                    for s, bound in pinned.items():
                        found.setdefault(k, {}).setdefault(s, {})[d] = bound
                    for s in left.tolist():
                        suspects.setdefault(s, []).append((k, d, need))
        self._nb.clear()
        for s, todo in suspects.items():
            live_counts.add("suspect")
            self._by_insider(s, todo, found)
        for k, fk in found.items():
            self._record(k, {1: self.up_need[k], -1: self.dn_need[k]}, fk, records)

    def _suspects(self, k: int, d: int, need: float, group: np.ndarray) -> tuple[np.ndarray, dict[int, float]]:
        """The insiders of ``group`` that joint tests against (``k``, ``d``) leave open,
        and those found failing with their exact bound pinned on relaxations.

        Each neighbourhood of ``LOCAL_LEVELS`` smaller than the block in turn: when all
        open insiders held at once reach the goal, one LP answers them all; when the
        neighbourhood reaches it at all, the tests that miss name the cells to set aside
        (:meth:`_peel`) and each of those is tested alone; one that misses and also misses
        on a relaxation (:meth:`Neighbourhoods.relaxed_failures`) is a suspect for certain, the rest goes
        on to the next level. When no neighbourhood reaches the goal, joint block LPs
        decide."""
        reached = False
        self._found.clear()
        last = None
        sure: list[int] = []        # suspects proved on relaxations
        pinned: dict[int, float] = {}   # failing, with the exact bound: no block LP
        tried = group[:0]           # the insiders tried on them
        tested: list[int] = []      # the levels whose neighbourhoods were tried
        for level, (hops, cap) in enumerate(LOCAL_LEVELS):
            if self.b.cols.size <= cap:
                break
            cells = self._nb.cells(level, k, hops, cap)
            if last is not None and np.array_equal(cells, last):
                continue  # the neighbourhood did not grow (its next hop passes the cap): the same tests
            last = cells
            if self.two_way and cells.size > TWO_WAY_LOCAL_SHARE * self.b.cols.size:
                continue  # the block's warm-started LP is quicker than a new model this large
            tested.append(level)
            first = self._local_reaches(level, k, d, need, group)
            if first[0]:
                return np.array(sorted(sure), dtype=np.int64), pinned
            if self._local_reaches(level, k, d, need, group[:0])[0]:
                reached = True
                cands = self._peel(lambda f, lv=level: self._local_reaches(lv, k, d, need, f),
                                   group, first)
                group = np.array([s for s in cands.tolist() if not self._reached(s)
                                  and not self._local_reaches(level, k, d, need, np.array([s]))[0]],
                                 dtype=np.int64)
                new = np.setdiff1d(group, tried)    # a relaxation's verdict does not change
                if new.size:
                    tried = np.union1d(tried, new)
                    near = [(lv, *LOCAL_LEVELS[lv]) for lv in sorted({tested[0], level})   # to pin bounds on
                            if self._nb.cells(lv, k, *LOCAL_LEVELS[lv]).size <= EXACT_SHARE * self.b.cols.size]
                    more, pin = self._nb.relaxed_failures(k, d, need, new, RELAX_LEVELS, near, self.tol[k],
                                                          EXACT_REL_TOL, self.counts)
                    sure.extend(more)
                    pinned.update(pin)
                    group = group[~np.isin(group, [*sure, *pinned])]
                if group.size == 0:
                    return np.array(sorted(sure), dtype=np.int64), pinned
        if not (reached or group.size <= 1):
            group = self._peel(lambda f: self._block_reaches(k, d, need, f), group)
        return np.union1d(group, np.array(sure, dtype=np.int64)).astype(np.int64), pinned

    def _by_insider(self, s: int, todo: list[tuple[int, int, float]],
                    found: dict[int, dict[int, dict[int, float]]]) -> None:
        """Block LPs with the cell of insider ``s`` fixed: batch LPs push all its open
        targets at once, then each one still short of its goal gets its own (exact) LP."""
        b = self.b
        self._warm_key = None       # these LPs leave the model's basis elsewhere
        fixed = np.array([s])
        b.set_bounds(fixed, self.truth[fixed], self.truth[fixed])
        try:
            best = {1: self.truth.copy(), -1: self.truth.copy()}
            for d in (1, -1):
                ks = np.array([k for k, dd, _ in todo if dd == d], dtype=np.int64)
                if ks.size < BATCH_MIN:
                    continue
                goal = np.array([need for _, dd, need in todo if dd == d])
                for _ in range(BATCH_ROUNDS):
                    gap = d * (goal - best[d][ks])
                    open_ = gap > 0
                    if open_.sum() < BATCH_MIN:
                        break
                    w = np.zeros(self.truth.size)
                    w[ks[open_]] = d * float(np.median(gap[open_])) / gap[open_]
                    x = b.optimise_sum(w)
                    self.counts["insider_lp_batch"] = self.counts.get("insider_lp_batch", 0) + 1
                    if x is None:
                        break
                    for k, need in zip(ks.tolist(), goal.tolist()):
                        if d * x[k] >= d * need:
                            self._remember(k, d, x)
                    best[d] = np.maximum(best[d], x) if d == 1 else np.minimum(best[d], x)
                    if (open_ & (d * (goal - best[d][ks]) <= 0)).sum() < 0.1 * open_.sum():
                        break
            for k, d, need in todo:
                if d * best[d][k] >= d * need:
                    continue
                if self._answered(k, d, s):
                    self.counts["insider_reused"] = self.counts.get("insider_reused", 0) + 1
                    continue
                val, x = b.optimise(k, d)
                self.counts["insider_lp_solves"] = self.counts.get("insider_lp_solves", 0) + 1
                if not d * val >= d * need:
                    found.setdefault(k, {}).setdefault(s, {})[d] = val
                elif x is not None and np.all(np.isfinite(x)):
                    self._remember(k, d, x)
        finally:
            b.set_bounds(fixed, b.lower[fixed], b.upper[fixed])

    def _remember(self, k: int, d: int, x: np.ndarray) -> None:
        """Keep a block table that reaches the goal of (``k``, ``d``) (found with some
        insider's cell fixed) for the target's other insiders (:meth:`_answered`)."""
        kept = self._reaching.setdefault((k, d), [])
        if len(kept) < KEEP_TABLES:
            kept.append(np.asarray(x, dtype=float).copy())

    def _answered(self, k: int, d: int, s: int) -> bool:
        """Whether kept tables reaching the goal of (``k``, ``d``) have insider ``s``'s
        cell at or above its value and at or below it: a convex combination of two such
        tables keeps the cell and still reaches the goal."""
        kept = self._reaching.get((k, d))
        if not kept:
            return False
        dev = np.array([t[s] for t in kept]) - self.truth[s]
        tol = self.tol[s]
        return bool(np.any(dev >= -tol) and np.any(dev <= tol))

    def _open_after_pool(self, k: int, d: int, need: float, att: np.ndarray) -> np.ndarray:
        """Attackers not answered by (convex combinations of) stored tables
        (:meth:`StoredTables.open_after`), with the side the reaching tables move each
        to (:attr:`_side`)."""
        self.counts["insider_pairs"] = self.counts.get("insider_pairs", 0) + att.size
        cand, side = self.stored.open_after(k, d, need, att, self.truth, self._tol_single, POOL_ROWS)
        self.counts["insider_pool"] = self.counts.get("insider_pool", 0) + att.size - cand.size
        self._side = np.zeros(self.truth.size, dtype=np.int8)
        self._side[cand] = side
        return cand

    def _reached(self, s: int) -> bool:
        """Whether a neighbourhood table found for the current goal answers a test that
        holds insider ``s``'s cell alone (:class:`ReachingTables`)."""
        lo, hi = self._held(np.array([s]), HALF_OPEN)
        if not (REUSE_LOCAL and self._found.answers(s, float(lo[0]), float(hi[0]), float(self.tol[s]))):
            return False
        self.counts["insider_local_reused"] = self.counts.get("insider_local_reused", 0) + 1
        return True

    def _peel(self, test, group: np.ndarray, first: tuple[bool, np.ndarray] | None = None) -> np.ndarray:
        """Suspects of ``group``: fix all and test; when the goal is missed, the fixed
        cells with a non-zero reduced cost are set aside (fixing only them misses it
        just the same, by LP duality) and the rest is tested again. Returns the cells
        set aside (all of the rest when a failed test names none). ``first``: the
        outcome of the test of the whole ``group`` when the caller already made it."""
        rest = group
        aside: list[np.ndarray] = []
        while rest.size:
            ok, binding = first if first is not None and rest is group else test(rest)
            if ok:
                break
            binding = np.intersect1d(binding, rest)
            if binding.size == 0:
                aside.append(rest)
                break
            aside.append(binding)
            rest = np.setdiff1d(rest, binding)
        return np.unique(np.concatenate(aside)) if aside else np.zeros(0, dtype=np.int64)

    # --- LPs ------------------------------------------------------------------------

    def _held(self, cells: np.ndarray, half: bool) -> tuple[np.ndarray, np.ndarray]:
        """Bounds that hold ``cells`` in a test: at their true values, or with ``half``
        only on the side the reaching tables do not move them to (:meth:`_open_after_pool`):
        a table that reaches the goal with such a cell on its side of the true value and
        a reaching table beyond it have a convex combination that keeps the cell and
        reaches the goal."""
        v = self.truth[cells]
        if not half:
            return v, v
        side = self._side[cells]
        return np.where(side > 0, self.b.lower[cells], v), np.where(side < 0, self.b.upper[cells], v)

    def _block_max(self, k: int, d: int, fixed: np.ndarray,
                   half: bool = False) -> tuple[float, np.ndarray]:
        """``d``-optimum of local cell ``k`` over the block with ``fixed`` at their
        values (``half``: see :meth:`_held`), and the fixed cells with a non-zero
        reduced cost."""
        b = self.b
        lo, hi = self._held(fixed, half)
        b.set_bounds(fixed, lo, hi)
        binding = np.zeros(0, dtype=np.int64)
        try:
            self._warm(k, d)
            val, x = b.optimise(k, d)
            if x is not None and b.highs is not None and fixed.size > 1:
                dual = np.asarray(b.highs.getSolution().col_dual, dtype=float)[fixed]
                binding = fixed[np.abs(dual) > DUAL_TOL]
        finally:
            b.set_bounds(fixed, b.lower[fixed], b.upper[fixed])
        self.counts["insider_lp_solves"] = self.counts.get("insider_lp_solves", 0) + 1
        return val, binding

    def _warm(self, k: int, d: int) -> None:
        """Start the next joint test of (``k``, ``d``) from the basis of the target's own
        optimum in the base audit (when there is one, unless the model's basis is that
        of the target's previous test)."""
        if not WARM_STARTS:
            return
        basis = self.base.bases.get((int(self.b.cols[k]), d))
        if basis is not None and self._warm_key != (k, d):
            self.b.model().setBasis(basis)
            self._warm_key = (k, d)

    def _block_reaches(self, k: int, d: int, need: float,
                       fixed: np.ndarray) -> tuple[bool, np.ndarray]:
        val, binding = self._block_max(k, d, fixed, half=HALF_OPEN)
        self.counts["insider_lp_joint"] = self.counts.get("insider_lp_joint", 0) + 1
        return bool(d * val >= d * need), binding

    def _local_reaches(self, level: int, k: int, d: int, need: float,
                       fixed: np.ndarray) -> tuple[bool, np.ndarray]:
        """Whether the LP of the neighbourhood at ``level`` with ``fixed`` held reaches
        ``need``, and the fixed cells with a non-zero reduced cost."""
        cells, h = self._nb.model(level, k, *LOCAL_LEVELS[level], d)
        s = self.b._units()
        inn = np.flatnonzero(np.isin(cells, fixed)).astype(np.int32)
        kk = int(np.searchsorted(cells, k))
        if inn.size:
            lo, hi = self._held(cells[inn], HALF_OPEN)
            h.changeColsBounds(inn.size, inn, _lp._finite(lo / s), _lp._finite(hi / s))
        binding = np.zeros(0, dtype=np.int64)
        try:
            h.run()
            st = _lp.status(h)
            self.counts["insider_local_lps"] = self.counts.get("insider_local_lps", 0) + 1
            if st in ("unbounded", "unbounded_or_infeasible"):
                return True, binding    # the true table is feasible: unbounded
            if st != "optimal":
                return False, binding
            sol = h.getSolution()
            xs = np.asarray(sol.col_value, dtype=float) * s
            x = float(xs[kk])
            if REUSE_LOCAL and d * x >= d * need:
                self._found.add(cells, xs)
            if inn.size:
                dual = np.asarray(sol.col_dual, dtype=float)[inn]
                binding = cells[inn[np.abs(dual) > DUAL_TOL]]
        finally:
            if inn.size:
                lo = _lp._finite(self.b.lower[cells[inn]] / s)
                hi = _lp._finite(self.b.upper[cells[inn]] / s)
                h.changeColsBounds(inn.size, inn, lo, hi)
        return bool(d * x >= d * need), binding

    # --- exact pairs and records -----------------------------------------------------

    def _exact_pairs(self, k: int, att: np.ndarray, found: dict[int, dict[int, float]]) -> None:
        """Both exact bounds with each attacker's cell fixed, unless the target's two
        stored optimal tables keep that cell (the insider then has the outsider's interval)."""
        t = int(self.b.cols[k])
        keep = np.ones(att.size, dtype=bool)
        for d in (1, -1):
            pt = self.base.points.get((t, d))
            if pt is None:
                keep[:] = False
                break
            moved = np.searchsorted(self.b.cols, pt[0])
            keep &= ~np.isin(att, moved)
        for s in att[~keep].tolist():
            fixed = np.array([s])
            found[s] = {d: self._block_max(k, d, fixed)[0] for d in (1, -1)}

    def _record(self, k: int, needs: dict[int, float], found: dict[int, dict[int, float]],
                records: list[dict]) -> None:
        """Verdicts of the insiders with a failed (or exactly computed) direction."""
        t = int(self.b.cols[k])
        for s, vals in found.items():
            bound = {}
            for d in (1, -1):
                if d in vals:
                    bound[d] = vals[d]
                elif np.isinf(needs[d]):
                    bound[d] = self.base.upper[t] if d == 1 else self.base.lower[t]
                else:
                    bound[d] = needs[d]         # reached with the cell fixed (a certificate)
            hi = max(bound[1], self.truth[k])
            lo = min(bound[-1], self.truth[k])
            v = verdict_of(self.p, t, lo, hi, rel_tol=self.rel_tol)
            if v == "exact" and len(vals) == 1:
                # the certified side may reach further: its exact bound decides
                d = -next(iter(vals))
                other = self._block_max(k, d, np.array([s]))[0]
                hi, lo = (max(other, self.truth[k]), lo) if d == 1 else (hi, min(other, self.truth[k]))
                v = verdict_of(self.p, t, lo, hi, rel_tol=self.rel_tol)
            if v != "protected":
                records.append({"target": str(self.p.names[t]),
                                "attacker": f"sole contributor of {self.p.names[self.b.cols[s]]}",
                                "kind": "singleton", "verdict": v,
                                "audit_lower": lo, "audit_upper": hi})
