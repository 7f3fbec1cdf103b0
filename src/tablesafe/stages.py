"""The second half of a run, on an assessed problem and options checked at the entry
(:func:`tablesafe.protect`, :func:`tablesafe.protect_problem`): suppression and its audit
(the gate), or an adjustment and its check, or interval publication; then, when asked,
the contribution-level audit of what is published (:mod:`tablesafe.uncertainty`)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from typing import Any

import numpy as np
import pandas as pd

import tablesafe.suppress as suppression  # looked up per call, so a test may replace it
from tablesafe.adjust.options import AdjustOptions
from tablesafe.adjust.stage import adjusted_result, recorded_adjustment
from tablesafe.audit import (
    AuditResult,
    all_protected,
    audit,
    check_certificates,
    findings_in_words,
    verdict_line,
)
from tablesafe.criterion2 import Criterion2, criterion2_suppress
from tablesafe.errors import AuditFailure, InputError, TablesafeError
from tablesafe.interval_publication import (
    SUPPRESSION_METHOD,
    IntervalOptions,
    check_intervals,
    interval_bounds,
)
from tablesafe.noise import (
    NOISE,
    NOISY_COLUMN,
    Noise,
    NoiseOptions,
    noise_stats,
    noised_problem,
    noisy_data,
)
from tablesafe.options import recorded
from tablesafe.problem import Pattern, Problem
from tablesafe.result import ProtectResult
from tablesafe.suppress.methods import NONE
from tablesafe.uncertainty.contributions import contribution_audit
from tablesafe.uncertainty.options import UncertaintyOptions
from tablesafe.uncertainty.published import publication_totals


@contextmanager
def timed(timings: dict[str, float], name: str) -> Iterator[None]:
    """Add the seconds the block takes to ``timings[name]``."""
    t0 = time.perf_counter()
    try:
        yield
    finally:
        timings[name] = timings.get(name, 0.0) + time.perf_counter() - t0


def _audit_once(problem: Problem, pattern: Pattern, insider: bool, progress: bool = False) -> AuditResult:
    """The pattern's audit: the one it passed while it was made when that covers what is
    asked (single respondents checked if ``insider``), otherwise a new one (its progress
    shown with ``progress``)."""
    done = pattern.audit
    if (isinstance(done, AuditResult) and done.problem is problem
            and np.array_equal(done.withheld, pattern.withheld)
            and (bool(done.stats.get("insider")) or not insider)):
        done.stats["reused"] = True
        return done
    return audit(problem, pattern, insider=insider, progress=progress)


def protect_assessed(
    problem: Problem,
    *,
    method: str,
    response: str,
    time_limit: float | None,
    certificates: bool,
    singleton: bool,
    capacity: bool,
    progress: bool,
    seed: int,
    marker: str | None,
    empty_marker: str | None,
    run_audit: bool,
    insider: str,
    params: dict | None,
    timings: dict[str, float] | None,
    adjusting: AdjustOptions | IntervalOptions | None = None,
    knowing: UncertaintyOptions | None = None,
    noising: NoiseOptions | None = None,
    criterion2: Criterion2 | None = None,
) -> ProtectResult:
    """The second half of :func:`protect` and :func:`protect_problem`, on options checked
    by them: suppress, audit (the gate), check the certificates; or, for an adjustment
    method (``adjusting``), the adjustment stage and its check; for interval publication
    also the intervals of the withheld cells and their own check; with ``criterion2``, a
    pattern also safe under operational criterion 2. Then, when asked
    (``knowing``), the contribution-level audit of what was published."""
    if method == NOISE:
        raise InputError("method noise needs microdata (the records, to add noise to them), not an assessed "
                         "problem or a tabulated table")
    timings = {} if timings is None else timings
    params = dict(params or {})
    knowing = knowing or UncertaintyOptions(enabled=False)
    params.update(knowing.recorded())
    if noising is not None:  # recorded whatever the method (the report lists every option)
        params.update(noise_percent=noising.percent, noise_spread=noising.spread)
    params.update({k: recorded(v) for k, v in (
        ("method", method), ("time_limit", time_limit), ("certificates", certificates), ("singleton", singleton),
        ("capacity", capacity), ("seed", seed), ("marker", marker), ("empty_marker", empty_marker),
        ("run_audit", run_audit), ("insider", insider), ("criterion", 2 if criterion2 is not None else 1))})
    params.update(recorded_adjustment(adjusting))
    if isinstance(adjusting, AdjustOptions):
        return _with_contributions(adjusted_result(problem, adjusting, response=response, params=params,
                                                   timings=timings, marker=marker, empty_marker=empty_marker),
                                   knowing, timings)
    if method == NONE:
        pattern = Pattern(withheld=problem.sensitive.copy(), method=NONE)
    elif criterion2 is not None:
        with timed(timings, "suppress"):
            pattern = criterion2_suppress(problem, criterion2, method=method, time_limit=time_limit,
                                          singleton=singleton)
    else:
        with timed(timings, "suppress"):
            pattern = suppression.suppress(
                problem,
                method=SUPPRESSION_METHOD if isinstance(adjusting, IntervalOptions) else method,
                time_limit=time_limit,
                certificates=certificates,
                singleton=singleton,
                capacity=capacity,
                progress=progress,
                seed=seed,
                audit=False,  # the audit below is the gate, run once (or the one the pattern passed)
            )
    audit_result = None
    if method != NONE or run_audit:
        with timed(timings, "audit"):
            try:
                audit_result = _audit_once(problem, pattern, insider != "off", progress)
            except TablesafeError as exc:
                if method != NONE:
                    raise
                # primary suppression only: the audit is information, not a gate
                params["audit"] = f"not possible: {exc}"
        insider_fails = insider == "fail" and audit_result is not None and bool(findings_in_words(audit_result))
        if audit_result is not None and method != NONE and (not all_protected(audit_result) or insider_fails):
            raise AuditFailure(
                "the suppression pattern failed its audit, so nothing is published: "
                + verdict_line(audit_result)
            )
    if certificates and pattern.certificates is not None and method != NONE:
        with timed(timings, "certificates"):
            failures = check_certificates(problem, pattern.withheld, pattern.certificates)
        if failures:
            raise AuditFailure(
                f"{len(failures)} protection certificate(s) failed their check, e.g. {failures[0]}; "
                "nothing is published"
            )
    intervals = None
    if isinstance(adjusting, IntervalOptions):
        with timed(timings, "intervals"):
            intervals = interval_bounds(problem, pattern.withheld, adjusting)
            checked = check_intervals(problem, pattern.withheld, intervals, insider != "off")
        pattern = replace(pattern, stats={**pattern.stats, **{f"intervals_{k}": v for k, v in checked.items()}})
    result = ProtectResult(
        problem=problem,
        pattern=pattern,
        audit=audit_result,
        response=response,
        method=method,
        params=params,
        timings=timings,
        marker=marker,
        empty_marker=empty_marker,
        intervals=intervals,
    )
    return _with_contributions(result, knowing, timings)


def _with_contributions(result: ProtectResult, knowing: UncertaintyOptions, timings: dict[str, float]) -> ProtectResult:
    """The result with its contribution-level audit when the run asks for one."""
    if not knowing.enabled:
        return result
    problem = result.problem
    with timed(timings, "contribution audit"):
        p, coalition = knowing.settled(problem.assessment)
        totals = publication_totals(result)
        found = contribution_audit(problem, totals.ui, totals.form, p=p, coalition=coalition, side=knowing.side,
                                   knowledge=knowing.knowledge, q=knowing.q)
    return replace(result, contributions=found)


def protect_noisy(problem: Problem, *, data: Any, dims: Any, total: str,
                  tables: Any, holding: str | None, weight: str | None, missing_code: str | None,
                  encoding: str | None, params: dict, timings: dict[str, float], **run: Any) -> ProtectResult:
    """Method ``noise`` (:mod:`tablesafe.noise`): tabulate the noise-multiplied microdata,
    publish the sensitive cells their noise protects, withhold the others with complements
    on the noisy table (suppression ``auto`` and its audit gate)."""
    from tablesafe.tabulate import dim_specs, tabulate

    if data is None or isinstance(data, Problem):
        raise InputError("method noise needs microdata: records with the response, not a tabulated table")
    options = run["noising"]
    with timed(timings, "noise"):
        frame = noisy_data(data, run["response"], holding, options, numbers=(weight,) if weight else (),
                           encoding=encoding)
        cells = tabulate(frame, dim_specs(dims, total), NOISY_COLUMN, tables=tables, holding=holding,
                         weight=weight, missing_code=missing_code, top_k=1)
        got = pd.Series(np.asarray(cells.value, dtype=float), index=pd.Index(cells.model.cell_names()))
        noisy = got.reindex(np.asarray(problem.names, dtype=object)).to_numpy()
        if np.isnan(noisy).any():
            raise InputError("the noisy tabulation lacks cells of the table; protect without noise")
        nprob, by_noise = noised_problem(problem, noisy)
    result = protect_assessed(nprob, params=params, timings=timings, **run)
    stats = noise_stats(np.asarray(problem.value, dtype=float), noisy, result.withheld, by_noise, problem.sensitive)
    return replace(result, method=NOISE,
                   noise=Noise(true=np.asarray(problem.value, dtype=float), noisy=noisy, by_noise=by_noise,
                               options=options, stats=stats))
