"""The full audit of a protected table: criterion-1 verdicts plus insider checks."""

from __future__ import annotations

import time
from collections.abc import Callable

import numpy as np
import pandas as pd

from tablesafe.audit.intervals import as_mask, solve_intervals
from tablesafe.audit.lp import stop_at
from tablesafe.audit.progress_lines import reporting
from tablesafe.audit.result import REL_TOL, AuditResult, verdict_goals, verdicts
from tablesafe.problem import Problem


def audit(
    problem: Problem,
    pattern_or_mask,
    *,
    insider: bool = True,
    contributions: pd.DataFrame | None = None,
    rule: tuple | None = None,
    all_cells: bool = False,
    rel_tol: float = REL_TOL,
    progress: bool | Callable[[str], None] = False,
    exact_intervals: bool = False,
    recheck: tuple[np.ndarray, np.ndarray] | None = None,
    seeds: dict | None = None,
    keep_tables: bool = False,
    deadline: float | None = None,
) -> AuditResult:
    """Audit a suppression pattern: the attacker's feasibility interval of every withheld
    sensitive cell (Statistical Policy Working Paper 22, chapter IV; Daalmans and de Waal;
    the Handbook on Statistical Disclosure Control).

    Args:
        problem: the table with statuses, levels and a priori bounds.
        pattern_or_mask: a :class:`Pattern`, or a withheld mask / indices / names.
        insider: also re-audit with each single-contributor withheld cell fixed to its
            value (its respondent knows it), and, given ``contributions``, with each
            unit's own contributions known (see :func:`insider_findings`).
        contributions: frame with columns ``cell`` (name or index), ``unit``, ``value``:
            each unit's contribution to each cell (all ancestors included).
        rule: ``("p", p)`` or ``("pq", p, q)`` (or a plain ``(p, q)``) to report
            implicitly published unions of withheld cells that are sensitive under the
            rule (needs ``contributions``; :func:`sensitive_unions`).
        all_cells: compute intervals of every withheld cell, not only sensitive ones.
        rel_tol: relative tolerance of the verdicts (:data:`REL_TOL`).
        progress: report progress while the audit runs (bounds settled, targets
            screened against their single respondents, time left): on its own display
            (True) or to a function given each line (a log).
        exact_intervals: compute the exact interval of every audited cell. By default
            a bound stops at the point its verdict needs (``value + upl``, ``value -
            lpl``; :func:`verdict_goals`): ``lower``/``upper`` of a protected direction
            is then a value an attacker cannot exclude (the interval reaches at least
            that far), and exact wherever the verdict fails. Verdicts are the same.
        recheck: ``(targets, cells)``, two boolean masks over the cells: check only the
            single respondents' attacks on a target of ``targets`` or by the respondent
            of a cell of ``cells``. For a pattern that grew from one whose audit passed
            every other pair: withholding more cells only widens what an attacker
            cannot exclude, so those pairs still pass (the criterion-1 verdicts are
            always computed afresh). Default: every pair.
        seeds: the ``tables`` of an earlier audit of a pattern this one contains: still
            feasible tables (the cells withheld since at their true values), they settle
            the criterion-1 verdicts they reach without LPs
            (:func:`tablesafe.audit.intervals.solve_intervals`).
        keep_tables: return the feasible tables behind the bounds in ``tables`` (they
            are dropped otherwise: on a large three-way block they take hundreds of MB).
        deadline: a ``time.monotonic()`` value past which no LP starts: the audit then
            raises :class:`tablesafe.audit.lp.LPOutOfTime` (for an audit inside a
            time-limited step; a final audit has none).

    Returns:
        :class:`AuditResult`. Sensitive cells that are published count as ``exact``.
    """
    with stop_at(deadline), reporting(progress):
        return _audit(problem, pattern_or_mask, insider, contributions, rule, all_cells, rel_tol,
                      exact_intervals, recheck, seeds, keep_tables)


def _audit(problem: Problem, pattern_or_mask, insider: bool, contributions: pd.DataFrame | None,
           rule: tuple | None, all_cells: bool, rel_tol: float, exact_intervals: bool,
           recheck: tuple[np.ndarray, np.ndarray] | None, seeds: dict | None, keep_tables: bool) -> AuditResult:
    """:func:`audit` within its deadline."""
    t0 = time.perf_counter()
    mask = as_mask(problem, pattern_or_mask)
    sens = problem.sensitive
    cells = None if all_cells else (sens & mask)
    goals = None if exact_intervals else verdict_goals(problem, rel_tol=rel_tol)
    res = solve_intervals(problem, mask, cells=cells, keep_points=insider or keep_tables,
                          certify=insider and contributions is not None,
                          goals=goals, seeds=seeds)
    verdict = verdicts(problem, res.lower, res.upper, rel_tol=rel_tol)
    stats = dict(res.stats)
    stats["exact_intervals"] = exact_intervals
    stats["insider"] = insider
    stats["seconds_criterion1"] = time.perf_counter() - t0
    result = AuditResult(problem=problem, withheld=mask, lower=res.lower, upper=res.upper,
                         verdict=verdict, stats=stats, tables=res.points if keep_tables else {})
    if insider or rule is not None:
        from tablesafe.audit.insider import insider_findings, sensitive_unions
    if insider:
        t1 = time.perf_counter()
        result.insider_findings = insider_findings(
            problem, mask, contributions=contributions, base=res, rel_tol=rel_tol, stats=stats,
            recheck=recheck)
        stats["insider_recheck"] = recheck is not None
        stats["seconds_insider"] = time.perf_counter() - t1
    if rule is not None and contributions is not None:
        result.union_findings = sensitive_unions(problem, mask, contributions, rule=rule)
    stats["seconds"] = time.perf_counter() - t0
    return result
