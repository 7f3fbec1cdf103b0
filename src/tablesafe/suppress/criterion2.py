"""Suppression safe under operational criterion 2 (seed 001 section 7, the iterative
procedure its discussion sketches): grow a criterion-1 pattern until no aggregation of
withheld cells is sensitive.

1. A pattern safe under criterion 1 (every sensitive cell's interval wide enough) comes
   from :func:`tablesafe.suppress.suppress`.
2. A screen: every explicit aggregation on its own (one relation restricted to the
   withheld cells, its published cells moved to the right-hand side) is checked with the
   (p,q) rule extended to aggregations, all at once; each sensitive one gets its
   cheapest publishable cell withheld. Repeated until none is sensitive.
3. The separation oracle is the aggregation MIP of seed 001 section 6
   (:func:`tablesafe.audit.criterion2`, asked only whether some aggregation is
   sensitive): while one is, it exists because every relation it combines has its other
   cells published. Any larger pattern that keeps those cells published keeps the same
   aggregation (the cut "at least one of them withheld" of section 7), so the cheapest
   few of them are withheld (optionally the first of the cheapest that ends that unit's
   disclosure), the screen run again and the oracle asked again. Withholding more never
   narrows a criterion-1 interval, so criterion 1 still holds. A unit the oracle cannot
   decide within its time cap counts as disclosed. The first check lists every disclosed
   unit; later checks ask about those (and the latest) first, so a round meets a
   disclosed unit before walking the safe ones.
4. Give back: once a pattern is proved safe, the cells the loop added are tried for
   publication again, most valuable first and in small groups, each kept when its
   publication lets an aggregation disclose one of the units disclosed on the way (the
   greedy of step 3 adds cells that later additions make useless). The smaller pattern is not proved by this, so
   step 3 runs on it again (asking about every unit), and the cheapest pattern proved safe
   is the result.

Contributions count per leaf cell (:func:`tablesafe.audit.aggregation.leaf_basis`): a
unit in a leaf and in the totals above it makes one contribution. A time limit ends the
loop with :class:`~tablesafe.errors.AuditFailure` unless the oracle has proved the
pattern safe: no pattern is returned without that proof (after a proof, the cheapest
pattern proved so far is returned). An aggregation whose relations
have no published cell left cannot be broken this way and also ends the loop with an
error.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np
import pandas as pd
import scipy.sparse as sp

from tablesafe.errors import AuditFailure, InfeasibleError
from tablesafe.problem import EMPTY, PROTECTED, Problem

UNIT_LIMIT = 10.0
"""Default seconds the oracle may spend on one unit in the suppression loop."""

GIVE_BACK_UNIT_LIMIT = 2.0
"""Seconds per unit when trying to give a cell back (not decided in time: the cell stays)."""

GIVE_BACK_GROUP = 8
"""Cells tried for giving back at once (most added cells are not needed in the end)."""

CLEANUP_ROUNDS = 3
"""Most times the loop gives cells back and proves the smaller pattern again."""


def criterion2_pattern(problem: Problem, contributions: pd.DataFrame, *, p: float, q: float = 100.0,
                       method: str = "optimal", time_limit: float | None = None, singleton: bool = False,
                       max_rounds: int = 500, look_ahead: int = 0, per_round: int = 3, log: Any = None,
                       start: np.ndarray | None = None, cleanup: bool = True,
                       unit_limit: float = UNIT_LIMIT) -> tuple[np.ndarray, dict]:
    """A pattern safe under criteria 1 and 2; returns ``(withheld mask, stats)``.

    Args:
        problem: the table.
        contributions: ``cell`` (index or name), ``unit``, ``value``: each unit's
            contribution to each cell (holdings summed, may be negative); the leaf cells'
            are the ones used.
        p, q: the (p,q) prior/posterior rule extended to aggregations (``q = 100``: the p% rule).
        method: the criterion-1 suppression method the loop starts from.
        time_limit: seconds for the whole loop (the criterion-1 suppression gets half).
        singleton: passed to the criterion-1 suppression.
        max_rounds: most cells added before giving up.
        look_ahead: up to this many candidates (cheapest first) are each tried with the
            oracle asked only about the disclosed unit: the cheapest that ends its
            disclosure is taken, else the cheapest (0 or 1: the cheapest).
        per_round: cells withheld per sensitive aggregation found: the one chosen by
            ``look_ahead`` and the next cheapest candidates (fewer rounds of the oracle;
            what is not needed in the end is given back by ``cleanup``).
        start: a criterion-1 pattern to start from instead of suppressing with ``method``.
        cleanup: after a pattern is proved safe, give back the cells the loop added that
            the units disclosed on the way no longer need (most valuable first), then prove
            the smaller pattern again; the cheapest pattern proved safe is returned.
        unit_limit: seconds the oracle may spend on one unit; a unit it cannot decide
            within them counts as disclosed (more is withheld, never less).

    Raises:
        AuditFailure: the oracle did not prove a pattern safe within the limits.
    """
    from tablesafe.audit.aggregation import leaf_basis
    from tablesafe.audit.insider import contribution_frame
    from tablesafe.suppress import suppress

    t0 = time.monotonic()
    deadline = t0 + (time_limit if time_limit is not None else 1e12)
    stats1: dict = {}
    if start is None:
        first = suppress(problem, method, time_limit=None if time_limit is None else 0.5 * time_limit,
                         singleton=singleton)
        start, stats1 = np.asarray(first.withheld, dtype=bool), dict(first.stats)
    start = np.asarray(start, dtype=bool)
    t1 = time.monotonic()
    loop = _Loop(problem, contribution_frame(problem, contributions), leaf_basis(problem), p, q, deadline, log,
                 unit_limit, max(int(per_round), 1))
    cost = np.asarray(problem.cost, dtype=float)
    best: np.ndarray | None = None
    w, given_back = start.copy(), 0
    for _ in range(CLEANUP_ROUNDS + 1):
        try:
            w = loop.grow(w, max_rounds, look_ahead)
        except AuditFailure:
            if best is None:
                raise
            break  # the time ran out: the cheapest pattern proved so far stands
        if best is None or cost[w].sum() < cost[best].sum():
            best = w.copy()
        if not cleanup:
            break
        smaller = loop.give_back(w, start)
        if not smaller.any() or (smaller == w).all():
            break
        given_back += int((w & ~smaller).sum())
        w = smaller
    assert best is not None
    added = np.flatnonzero(best & ~start)
    return best, {"rounds": loop.rounds, "added": len(added), "screened": loop.screened, "oracle calls": loop.calls,
                  "given back": given_back, "added_cells": [str(problem.names[i]) for i in added],
                  "criterion1_cost": float(cost[start & ~problem.sensitive].sum()),
                  "cost": float(cost[best & ~problem.sensitive].sum()),
                  "seconds": time.monotonic() - t0, "criterion 2 seconds": time.monotonic() - t1,
                  "criterion1": stats1}


class _Loop:
    """What the rounds share: the contributions at the leaves, the oracle's cache of parts
    already decided, the costs and the cells that may be withheld."""

    def __init__(self, problem: Problem, cf: pd.DataFrame, basis: sp.csr_matrix, p: float, q: float,
                 deadline: float, log: Any, unit_limit: float | None = None, per_round: int = 1) -> None:
        self.problem, self.cf, self.basis, self.p, self.q = problem, cf, basis, p, q
        self.deadline, self.log, self.unit_limit = deadline, log, unit_limit
        self.cache: dict = {}
        self.recent: list = []  # units disclosed in recent rounds, asked about first
        self.seen: list = []  # every unit disclosed in some round
        self.keep: set = set()  # cells added for units the oracle could not decide
        # every unit disclosed when the loop (or a give-back) started, asked about first so
        # that a round's check meets a disclosed unit before walking the safe ones
        self.pending: list = []
        self.listed = False
        self.calls = self.rounds = self.screened = 0
        self.per_round = per_round
        self.cost = np.asarray(problem.cost, dtype=float)
        self.allowed = ~np.isin(problem.status, (PROTECTED, EMPTY))
        self.a = problem.relations.tocsr()
        leaves = np.flatnonzero(np.diff(basis.indptr) > 0)
        own = cf[cf["cell"].isin(leaves)]
        units = pd.Index(pd.unique(own["unit"]))
        self.x = sp.csr_matrix((np.abs(own["value"].to_numpy(float)), (own["cell"].to_numpy(),
                                units.get_indexer(own["unit"]))), shape=(problem.n, len(units)))  # leaf x unit
        self.xtotal = np.asarray(self.x.sum(axis=1)).ravel()

    def grow(self, w: np.ndarray, max_rounds: int, look_ahead: int) -> np.ndarray:
        """Withhold more (screen, then ``per_round`` cells per sensitive aggregation the
        oracle finds) until the oracle proves ``w`` safe; returns the proved pattern."""
        w = w.copy()
        for rounds in range(max_rounds + 1):
            self.screened += self.screen(w)
            res = self.ask(w)
            if res.safe and res.status == "optimal":
                return w
            if res.safe:  # an incumbent below 0 proves nothing
                raise AuditFailure(f"criterion 2: the aggregation MIP ended with status {res.status!r}, so the "
                                   "pattern is not proved safe; nothing is published")
            if rounds == max_rounds:
                break
            picks = self.withhold(w, res, look_ahead)
            pick = picks[0]
            w[picks] = True
            if res.status == "undecided":
                self.keep.add(pick)  # never given back: deciding that unit again is slow
            self.rounds += 1
            if self.log:
                what = "undecided unit" if res.status == "undecided" else \
                    f"sensitive aggregation (relative {res.relative:.3g})"
                self.log(f"criterion 2 round {self.rounds}: {what}; withholding {self.problem.names[pick]}")
        raise AuditFailure(f"criterion 2: still a sensitive aggregation after {max_rounds} added cells; "
                           "nothing is published")

    def give_back(self, w: np.ndarray, start: np.ndarray) -> np.ndarray:
        """``w`` less the added cells (not in ``start``, most valuable first) whose
        publication discloses none of the units disclosed so far; not proved safe (the
        caller asks the oracle about every unit again). Cells are tried in groups of
        :data:`GIVE_BACK_GROUP` (a group that fails is split in halves, down to single
        cells). Cells added for undecided units stay (asking about such units again would
        take their whole time cap per cell)."""
        out = w.copy()
        if not self.seen:
            return out
        cand = np.flatnonzero(w & ~start)
        cand = cand[~np.isin(cand, list(self.keep))]
        cand = cand[np.argsort(-self.cost[cand], kind="stable")]
        todo = [cand[i:i + GIVE_BACK_GROUP] for i in range(0, len(cand), GIVE_BACK_GROUP)]
        while todo and time.monotonic() < self.deadline:
            group = todo.pop(0)
            out[group] = False
            if self._safe_for_seen(out):
                continue
            out[group] = True
            if len(group) > 1:
                half = (len(group) + 1) // 2
                todo[:0] = [group[:half], group[half:]]
        if self.log:
            self.log(f"criterion 2: {int((w & ~out).sum())} of {len(cand)} added cells given back")
        self.listed = False
        return out

    def _safe_for_seen(self, w: np.ndarray) -> bool:
        """Whether no single relation of ``w`` is sensitive (the screen) and the oracle
        proves, within :data:`GIVE_BACK_UNIT_LIMIT` per unit, that no aggregation of ``w``
        discloses a unit disclosed so far."""
        if self._sensitive_rows(w).size:  # the screen would withhold it again at once
            return False
        try:
            res = self.ask(w, attacked=list(self.seen), unit_limit=GIVE_BACK_UNIT_LIMIT)
            return bool(res.safe and res.status == "optimal")
        except AuditFailure:
            return False

    def left(self) -> float:
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise AuditFailure("criterion 2: no pattern proved safe within the time limit; nothing is published")
        return left

    def ask(self, w: np.ndarray, attacked: list | None = None, unit_limit: float | None = None):
        """The oracle: is some aggregation of ``w`` sensitive (disclosing one of
        ``attacked``, when given)? ``unit_limit``: seconds per unit (default the loop's)."""
        from tablesafe.audit import criterion2

        self.calls += 1
        listing = attacked is None and not self.listed  # list every disclosed unit once
        prefer = self.recent + [u for u in self.pending if u not in self.recent]
        try:
            res = criterion2(self.problem, w, self.cf, p=self.p, q=self.q, basis=self.basis, cache=self.cache,
                             decide=True, prefer=prefer, attacked=attacked, every=listing,
                             time_limit=self.left(),
                             unit_limit=self.unit_limit if unit_limit is None else unit_limit)
        except InfeasibleError as err:
            raise AuditFailure(f"criterion 2: the aggregation MIP did not decide within the time limit ({err}); "
                               "nothing is published") from err
        if listing:
            self.pending, self.listed = list(res.disclosed), True
        if not res.safe and res.attacked is not None and attacked is None:
            self.recent = [res.attacked] + [u for u in self.recent if u != res.attacked][:19]
            if res.attacked not in self.seen and res.status != "undecided":
                self.seen.append(res.attacked)
        return res

    def screen(self, w: np.ndarray) -> int:
        """Withhold, for every sensitive single explicit aggregation, its cheapest
        publishable cell, until none is left; returns the cells added."""
        added = 0
        while True:
            self.left()
            rows = self._sensitive_rows(w)
            picks = set()
            for k in rows.tolist():
                lo, hi = self.a.indptr[k], self.a.indptr[k + 1]
                cells = self.a.indices[lo:hi]
                cand = cells[~w[cells] & self.allowed[cells]]
                if cand.size:
                    picks.add(int(cand[np.argmin(self.cost[cand])]))
            if not picks:
                return added
            w[sorted(picks)] = True
            added += len(picks)
            if self.log:
                self.log(f"criterion 2 screen: {len(rows)} sensitive explicit aggregations; withholding "
                         f"{len(picks)} cells")

    def _sensitive_rows(self, w: np.ndarray) -> np.ndarray:
        """Relations whose explicit aggregation alone is sensitive."""
        cols = np.flatnonzero(w)
        aw = sp.csr_matrix(self.a[:, cols])
        rows = np.flatnonzero(np.diff(aw.indptr) > 0)
        if not rows.size:
            return rows
        coef = sp.csr_matrix(aw[rows] @ self.basis[cols])  # relation x leaf: each leaf's coefficient
        coef.data = np.abs(np.round(coef.data, 12))
        coef.eliminate_zeros()
        share = sp.csr_matrix(coef @ self.x)  # relation x unit
        total = coef @ self.xtotal
        a1 = np.zeros(rows.size)
        a2 = np.zeros(rows.size)
        for r in range(rows.size):
            d = np.sort(share.data[share.indptr[r]:share.indptr[r + 1]])[::-1]
            if d.size:
                a1[r] = d[0]
                a2[r] = d[1] if d.size > 1 else 0.0
        sens = (self.p + self.q) * a1 + self.q * a2 - self.q * total
        return rows[(total > 0) & (sens >= -1e-9 * total)]

    def withhold(self, w: np.ndarray, res, look_ahead: int) -> list[int]:
        """The cells to withhold against the sensitive aggregation ``res``: one chosen by
        ``look_ahead`` (see :meth:`break_aggregation`) and the next cheapest, ``per_round``
        in all."""
        from tablesafe.audit.aggregation import explicit_rows

        used = explicit_rows(self.problem, w)[np.abs(np.asarray(res.mu, dtype=float)) > 1e-9]
        cand = np.unique(self.a[used].indices) if len(used) else np.zeros(0, dtype=np.int64)
        cand = cand[~w[cand] & self.allowed[cand]]
        ordered = cand[np.argsort(self.cost[cand], kind="stable")]
        pick = self.break_aggregation(w, res, look_ahead, ordered)
        return [pick, *ordered[ordered != pick][:self.per_round - 1].tolist()]

    def break_aggregation(self, w: np.ndarray, res, look_ahead: int, ordered: np.ndarray) -> int:
        """The cell to withhold against the sensitive aggregation ``res`` among its
        publishable cells ``ordered`` cheapest first (see ``look_ahead``)."""
        if not len(ordered):
            raise AuditFailure(f"criterion 2: the sensitive aggregation {res.describe(self.problem.names[res.cells])} "
                               "combines relations with no publishable cell left to withhold; nothing is published")
        if look_ahead <= 1 or res.attacked is None or res.status == "undecided":
            return int(ordered[0])
        for c in ordered[:look_ahead].tolist():
            trial = w.copy()
            trial[c] = True
            if self.ask(trial, attacked=[res.attacked]).safe:
                return int(c)  # the cheapest that stops this unit's disclosure
        return int(ordered[0])
