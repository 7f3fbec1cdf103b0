"""Suppression safe under operational criterion 2 (seed 001 section 7, the iterative
procedure its discussion sketches): grow a criterion-1 pattern until no aggregation of
withheld cells is sensitive.

1. A pattern safe under criterion 1 (every sensitive cell's interval wide enough) comes
   from :func:`tablesafe.suppress.suppress`.
2. The separation oracle is the aggregation MIP of seed 001 section 6
   (:func:`tablesafe.audit.criterion2`): the most sensitive aggregation of the withheld
   cells, built from the explicit aggregations (relations restricted to withheld cells)
   with coefficients ``mu``.
3. While it is sensitive: the aggregation exists because every relation it combines has
   its other cells published. Any larger pattern that keeps those cells published keeps
   the same aggregation (the cut "at least one of them withheld" of section 7), so one
   of them is withheld (the cheapest that makes the pattern safe, else the one leaving
   the least sensitive aggregation, among the few cheapest) and the oracle asked again. Withholding more never
   narrows a criterion-1 interval, so criterion 1 still holds.

A time limit ends the loop with :class:`~tablesafe.errors.AuditFailure` unless the oracle
has proved the pattern safe: no pattern is returned without that proof. Contributions
must be given per unit and cell for every cell a relation may combine (the cells that
may be withheld); an aggregation whose relations have no published cell left cannot be
broken this way and also ends the loop with an error.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np
import pandas as pd

from tablesafe.errors import AuditFailure
from tablesafe.problem import EMPTY, PROTECTED, Problem


def criterion2_pattern(problem: Problem, contributions: pd.DataFrame, *, p: float, q: float = 100.0,
                       method: str = "optimal", time_limit: float | None = None, singleton: bool = False,
                       max_rounds: int = 200, look_ahead: int = 8, log: Any = None) -> tuple[np.ndarray, dict]:
    """A pattern safe under criteria 1 and 2; returns ``(withheld mask, stats)``.

    Args:
        problem: the table.
        contributions: ``cell`` (index or name), ``unit``, ``value``: each unit's
            contribution to each cell (holdings summed, may be negative).
        p, q: the (p,q) prior/posterior rule extended to aggregations (``q = 100``: the p% rule).
        method: the criterion-1 suppression method the loop starts from.
        time_limit: seconds for the whole loop (the criterion-1 suppression gets half).
        singleton: passed to the criterion-1 suppression.
        max_rounds: most cells added before giving up.
        look_ahead: up to this many candidates (cheapest first) are each tried with the
            oracle: the cheapest one that makes the pattern safe is taken, else the one
            whose most sensitive aggregation is least sensitive (0: the cheapest).

    Raises:
        AuditFailure: the oracle did not prove a pattern safe within the limits.
    """
    from tablesafe.audit import criterion2
    from tablesafe.audit.aggregation import explicit_rows
    from tablesafe.suppress import suppress

    t0 = time.monotonic()
    deadline = t0 + (time_limit if time_limit is not None else 1e12)
    first = suppress(problem, method, time_limit=None if time_limit is None else 0.5 * time_limit,
                     singleton=singleton)
    w = np.asarray(first.withheld, dtype=bool).copy()
    start = w.copy()
    allowed = ~np.isin(problem.status, (PROTECTED, EMPTY))
    a = problem.relations.tocsr()
    added: list[int] = []
    for rounds in range(max_rounds + 1):
        left = deadline - time.monotonic()
        if left <= 0:
            raise AuditFailure("criterion 2: no pattern proved safe within the time limit; nothing is published")
        res = criterion2(problem, w, contributions, p=p, q=q, time_limit=left)
        if res.status != "optimal" and res.safe:  # an incumbent below 0 proves nothing
            raise AuditFailure(f"criterion 2: the aggregation MIP ended with status {res.status!r}, so the "
                               "pattern is not proved safe; nothing is published")
        if res.safe:
            cost = np.asarray(problem.cost, dtype=float)
            return w, {"rounds": rounds, "added": len(added), "added_cells": [str(problem.names[i]) for i in added],
                       "criterion1_cost": float(cost[start & ~problem.sensitive].sum()),
                       "cost": float(cost[w & ~problem.sensitive].sum()), "objective": float(res.objective),
                       "seconds": time.monotonic() - t0, "criterion1": first.stats}
        if rounds == max_rounds:
            break
        used = explicit_rows(problem, w)[np.abs(np.asarray(res.mu, dtype=float)) > 1e-9]
        cand = np.unique(a[used].indices) if len(used) else np.zeros(0, dtype=np.int64)
        cand = cand[~w[cand] & allowed[cand]]
        if not len(cand):
            raise AuditFailure(f"criterion 2: the sensitive aggregation {res.describe(problem.names[res.cells])} "
                               "combines relations with no publishable cell left to withhold; nothing is published")
        pick = _best_candidate(problem, w, cand, contributions, p, q, deadline, look_ahead)
        w[pick] = True
        added.append(pick)
        if log:
            log(f"criterion 2 round {rounds + 1}: sensitive aggregation (objective {res.objective:,.0f}); "
                f"withholding {problem.names[pick]}")
    raise AuditFailure(f"criterion 2: still a sensitive aggregation after {max_rounds} added cells; "
                       "nothing is published")


def _best_candidate(problem: Problem, withheld: np.ndarray, cand: np.ndarray, contributions: pd.DataFrame,
                    p: float, q: float, deadline: float, look_ahead: int) -> int:
    """The cell to withhold next among ``cand`` (see ``look_ahead``)."""
    from tablesafe.audit import criterion2

    cost = np.asarray(problem.cost, dtype=float)
    ordered = cand[np.argsort(cost[cand], kind="stable")]
    best, best_obj = int(ordered[0]), np.inf
    for c in ordered[:look_ahead].tolist():
        left = deadline - time.monotonic()
        if left <= 0:
            break
        trial = withheld.copy()
        trial[c] = True
        res = criterion2(problem, trial, contributions, p=p, q=q, time_limit=left)
        if res.status == "optimal" and res.safe:
            return int(c)  # the cheapest that ends the loop
        if res.objective < best_obj:
            best, best_obj = int(c), res.objective
    return best

