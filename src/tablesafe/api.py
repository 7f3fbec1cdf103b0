"""The pipeline: :func:`protect` reads the data, tabulates, assesses, suppresses and audits,
and returns a :class:`~tablesafe.result.ProtectResult` ready to write.

This is the one chain that every entry runs: the Python API, the command line
(``tablesafe protect``, ``tablesafe audit``), job files (:mod:`tablesafe.io.jobfile`) and
tau-ARGUS batch files (:mod:`tablesafe.io.arb`). Each stage is public on its own
(``tablesafe.tabulate``, ``tablesafe.assess``, ``tablesafe.suppress``, ``tablesafe.audit``);
this module only chains them, checks the run options once at the entry and times the
stages. It never decides a status itself: statuses come from the rules (``assess``), from
the user (manual statuses, a priori files: :mod:`tablesafe.rules.apriori`) and from the
suppression method.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from tablesafe.audit import (
    audit,
    check_certificates,
)
from tablesafe.celltable import CellTable
from tablesafe.criterion2 import check_criterion, criterion2_inputs
from tablesafe.errors import InputError, RuleError
from tablesafe.io.analyst import codes_of
from tablesafe.io.hst import read_hst
from tablesafe.io.inputs import read_inputs
from tablesafe.io.publication import withheld_in
from tablesafe.io.tauargus import read_tab
from tablesafe.noise import NOISE, NoiseOptions
from tablesafe.options import check_run_options, missing_codes_map, recorded
from tablesafe.problem import Pattern, Problem
from tablesafe.result import ProtectResult, information_loss
from tablesafe.rules import assess
from tablesafe.rules.apriori import apply_requests, given_statuses
from tablesafe.rules.assess import COST_KINDS
from tablesafe.rules.ruleset import RuleSet
from tablesafe.stages import protect_assessed, protect_noisy
from tablesafe.stages import timed as _timed
from tablesafe.suppress.methods import DEFAULT_METHOD, NONE
from tablesafe.tabulate import dim_specs, from_tabular, tabulate
from tablesafe.uncertainty.options import UncertaintyOptions

__all__ = [
    "ProtectResult",
    "apply_apriori",
    "audit_publication",
    "check_run_options",
    "information_loss",
    "missing_codes_map",
    "prepare_problem",
    "protect",
    "protect_problem",
]


def apply_apriori(
    problem: Problem,
    apriori: pd.DataFrame | str | Path,
    *,
    manual_range: float = 10.0,
    ignore_errors: bool = False,
    sep: str | None = None,
) -> Problem:
    """Apply a priori requests (a tau-ARGUS ``.hst`` file, read with ``sep``, or the frame
    :func:`tablesafe.io.hst.read_hst` returns) to a problem: see
    :func:`tablesafe.rules.apriori.apply_requests` for what each request does."""
    if problem.codes is None:
        raise InputError("a priori files name cells by their codes; this problem has none")
    if isinstance(apriori, pd.DataFrame):
        return apply_requests(problem, apriori, manual_range=manual_range, ignore_errors=ignore_errors)
    totals = [d.total for d in problem.model.dims] if problem.model is not None else None
    requests = read_hst(apriori, list(problem.codes.columns), totals, sep=sep)
    return apply_requests(problem, requests, manual_range=manual_range, ignore_errors=ignore_errors,
                          source=str(apriori))


def prepare_problem(
    data: Any,
    dims: Any = None,
    response: str | None = None,
    rules: str | Sequence[str] | RuleSet | None = None,
    *,
    holding: str | None = None,
    weight: str | None = None,
    weight_mode: str | None = None,
    waiver: str | None = None,
    request: str | None = None,
    cost: str = "value",
    cost_lambda: float = 1.0,
    total: str = "Total",
    tables: Sequence[Sequence[str]] | None = None,
    metadata: str | Path | None = None,
    apriori: str | Path | pd.DataFrame | None = None,
    manual: Any = None,
    manual_range: float = 10.0,
    bounds: Any = None,
    count: str = "holdings",
    zero_unsafe: float | None = None,
    symmetric: bool = True,
    sliding: bool = False,
    freq_levels: str = "range",
    manual_margin: float | None = None,
    missing_codes: Any = None,
    top_k: int = 4,
    missing_code: str | None = None,
    negative: str | None = None,
    tabular: bool = False,
    frequency: str | None = None,
    top: Sequence[str] | None = None,
    given_status: str | None = None,
    recompute_totals: bool = False,
    encoding: str | None = None,
    jj_offsets: bool = False,
    require_additive: bool = True,
    progress: bool = False,
    timings: dict[str, float] | None = None,
) -> tuple[Problem, str, dict[str, Any]]:
    """Read, tabulate and assess (the first half of :func:`protect`).

    Returns the assessed problem (a priori file applied), the response name and the run
    parameters. Arguments as for :func:`protect`, plus tabular input: with
    ``tabular=True`` the data holds cells, not records (a CSV or frame with the codes and
    the value, or a tau-ARGUS ``.tab`` with its ``metadata``), read by
    ``tablesafe.tabulate.from_tabular`` with the optional ``frequency`` (contributors),
    ``top`` (largest contributions) and ``given_status`` columns; ``recompute_totals``
    replaces given totals by the sums of their parts instead of refusing non-additive
    input. Cells the input marks unsafe (U) or protected (P) become manual statuses.
    ``encoding``, ``jj_offsets`` and ``require_additive``: see
    :func:`tablesafe.io.inputs.read_inputs`.
    """
    # every option, as given, for the run's parameters (the report lists them all)
    params: dict[str, Any] = {k: recorded(v) for k, v in locals().items() if k not in _NOT_RECORDED}
    timings = {} if timings is None else timings
    rule_options: dict[str, Any] = {"weight_mode": weight_mode, "zero_unsafe": zero_unsafe,
                                    "manual_margin": manual_margin, "missing_codes": missing_codes}
    ruleset = RuleSet.build(rules, **rule_options) if rules else None  # read once, here
    params.update(rules=_rule_strings(rules), manual_range=manual_range if apriori is not None else None)
    with _timed(timings, "read"):
        data, manual = read_inputs(data, manual, tabular=tabular, metadata=metadata, jj_offsets=jj_offsets,
                                   require_additive=require_additive)
    if isinstance(data, Problem):
        problem = data
        resp = response or problem.response or "value"
    else:
        if isinstance(data, CellTable):
            cells = data
        elif tabular:
            with _timed(timings, "tabulate"):
                cells = _tabular_cells(data, dims, response, ruleset, total=total, metadata=metadata,
                                       frequency=frequency, top=top, given_status=given_status,
                                       recompute_totals=recompute_totals, missing_code=missing_code,
                                       top_k=top_k, encoding=encoding)
            given = given_statuses(cells)
            if given is not None:
                manual = given if manual is None else pd.concat([manual, given], ignore_index=True)
                if ruleset is None:
                    params["rules"] = [f"man({manual_range:g})"]
                    ruleset = RuleSet.build(params["rules"], **rule_options)
        else:
            if response is None:
                raise InputError("no response variable given (--response)")
            specs = dim_specs(dims, total)
            params["dims"] = [f"{s.name}={s.hierarchy}" if s.hierarchy is not None else s.name for s in specs]
            # a cost variable is summed per cell like the response
            extra = [cost] if isinstance(cost, str) and cost not in COST_KINDS else None
            with _timed(timings, "tabulate"):
                cells = tabulate(
                    data, specs, response, extra=extra, tables=tables, holding=holding, weight=weight,
                    waiver=waiver, request=request, top_k=_top_k(top_k, ruleset),
                    missing_code=missing_code, progress=progress, encoding=encoding,
                )
        resp = response or cells.response
        if ruleset is None:
            raise InputError("no sensitivity rule given (--rule), e.g. p(15) or freq(3)")
        with _timed(timings, "assess"):
            problem = assess(cells, ruleset, manual=manual, bounds=bounds, cost=cost, cost_lambda=cost_lambda,
                             count=count, symmetric=symmetric, negative=negative or "refuse", sliding=sliding,
                             freq_levels=freq_levels)
    if apriori is not None:
        with _timed(timings, "apriori"):
            problem = apply_apriori(problem, apriori, manual_range=manual_range)
    params["response"] = resp
    return problem, resp, params


_NOT_RECORDED = ("progress", "timings", "require_additive")
"""Arguments of :func:`prepare_problem` that are not options of the run."""


def _rule_strings(rules: str | Sequence[str] | RuleSet | None) -> list[str]:
    """The rules as the run's parameters record them (as given, one string per entry)."""
    if isinstance(rules, RuleSet):
        return rules.to_strings()
    return [rules] if isinstance(rules, str) else [str(r) for r in rules or []]


def _top_k(top_k: int, ruleset: RuleSet | None) -> int:
    """The number of largest contributions to keep per cell: ``top_k``, or more when the
    rules need more."""
    return max(top_k, ruleset.top_k) if ruleset is not None else top_k


def _tabular_cells(
    data: Any,
    dims: Any,
    response: str | None,
    ruleset: RuleSet | None,
    *,
    total: str,
    metadata: str | Path | None,
    frequency: str | None,
    top: Sequence[str] | None,
    given_status: str | None,
    recompute_totals: bool,
    missing_code: str | None,
    top_k: int,
    encoding: str | None,
) -> CellTable:
    """The cells of tabular input (a CSV or frame, or a tau-ARGUS ``.tab`` with its
    metadata); a frequency rule needs the contributor counts (``frequency``)."""
    src = data
    if metadata is not None:
        src = read_tab(data, metadata)
        dims = dims or None
    specs = dim_specs(dims, total) if dims else None
    cells = from_tabular(
        src, specs, response, frequency=frequency, top=list(top) if top else None,
        status=given_status, recompute_totals=recompute_totals, missing_code=missing_code,
        top_k=_top_k(top_k, ruleset), encoding=encoding,
    )
    if "frequency" not in cells.extra and ruleset is not None and ruleset.has_frequency_rule:
        raise RuleError(
            "a frequency rule on tabular input needs the number of contributors per "
            "cell: name the column with --frequency (Python: frequency=...); without "
            "it every given cell would count as one contributor"
        )
    return cells


def protect(
    data: Any,
    dims: Any = None,
    response: str | None = None,
    rules: str | Sequence[str] | RuleSet | None = None,
    *,
    holding: str | None = None,
    weight: str | None = None,
    weight_mode: str | None = None,
    waiver: str | None = None,
    request: str | None = None,
    method: str = DEFAULT_METHOD,
    cost: str = "value",
    cost_lambda: float = 1.0,
    total: str = "Total",
    tables: Sequence[Sequence[str]] | None = None,
    metadata: str | Path | None = None,
    apriori: str | Path | pd.DataFrame | None = None,
    manual: Any = None,
    manual_range: float = 10.0,
    bounds: Any = None,
    count: str = "holdings",
    zero_unsafe: float | None = None,
    symmetric: bool = True,
    sliding: bool = False,
    freq_levels: str = "range",
    manual_margin: float | None = None,
    missing_codes: Any = None,
    top_k: int = 4,
    missing_code: str | None = None,
    negative: str | None = None,
    tabular: bool = False,
    frequency: str | None = None,
    top: Sequence[str] | None = None,
    given_status: str | None = None,
    recompute_totals: bool = False,
    encoding: str | None = None,
    jj_offsets: bool = False,
    time_limit: float | None = None,
    certificates: bool = False,
    singleton: bool = True,
    capacity: bool = False,
    progress: bool = False,
    seed: int = 0,
    marker: str | None = None,
    empty_marker: str | None = None,
    run_audit: bool = True,
    insider: str = "fail",
    rounding_base: float | None = None, readd_totals: bool = False, cta_cost: str = "weighted",
    cta_directions: str = "auto", fix_totals: Any = "none",
    uncertainty: bool = False, uncertainty_p: float | None = None, uncertainty_side: str = "two-sided",
    midpoint_q: float | None = None, knowledge_kx: float = 2.0, knowledge_kx_low: float = 0.0,
    knowledge_kw: float = 1.0, noise_percent: float = 10.0, noise_spread: float | None = None,
    criterion: int = 1,
) -> ProtectResult:
    """Protect a table: tabulate, find sensitive cells, suppress (or adjust), audit.

    Args:
        data: microdata (pandas, polars or pyarrow frame, a CSV/Parquet path, or a tau-ARGUS
            ``.asc`` path with ``metadata``), a tabulated :class:`~tablesafe.CellTable`, an assessed
            :class:`~tablesafe.Problem`, or a ``.jj`` file (then dims, response and rules are not needed).
        dims: explanatory variables: names, ``"name=hierarchy"`` strings, ``(name,
            hierarchy)`` pairs or ``DimSpec`` objects (see :func:`dim_specs`).
        response: the variable summed in the cells.
        rules: rule strings such as ``"p(15)"``, ``"freq(3)"``, ``"nk(2, 80)"``, or tau-ARGUS strings
            such as ``"P(15,1)|FREQ(3,10)"``, or a :class:`~tablesafe.rules.RuleSet`; read once, with
            ``weight_mode``, ``zero_unsafe``, ``manual_margin`` and ``missing_codes``, into a rule set.
        holding: unit variable (enterprise group) whose contributions are summed before any rule;
            the frequency rule then counts holdings (``count="records"`` counts records).
        weight, weight_mode: sampling weight variable and how the rules use it
            (``expand``, ``sample``, ``known``).
        waiver, request: per-record flags: waived protection / asked for protection.
        method: ``auto`` (default) or another suppression method, ``none`` (primaries only,
            no safety claim), an adjustment (``cta``, ``round``, ``random-round``),
            ``intervals`` or ``noise`` (:data:`tablesafe.methods.ALL_METHODS`).
        cost, total: cost of withholding a cell: ``value``, ``unity``, ``freq`` or a variable
            (summed per cell; ``cost_lambda`` transforms it: cost ** lambda, log for 0); the total code.
        tables: linked tables, each a list of dimension names (default: one table).
        metadata: the ``.rda`` file of a tau-ARGUS ``.asc`` data file.
        apriori: a tau-ARGUS ``.hst`` file (or the frame :func:`tablesafe.io.hst.read_hst` returns):
            statuses, costs, protection levels or bounds per cell; cells it marks unsafe get
            ``manual_range`` percent.
        manual: statuses set by hand (frame or CSV path: codes or ``name``, ``status`` A
            or P, optional ``margin``).
        bounds, zero_unsafe, symmetric: a priori bounds (a percentage of the value, or
            what ``tablesafe.rules.assess`` takes), zero-cell rule and symmetric levels,
            passed to the rules stage (``tablesafe.rules.assess``).
        sliding, freq_levels, manual_margin, missing_codes: sliding protection levels,
            ``range`` or ``directional`` levels of frequency rules, the margin (percent) of
            cells sensitive by hand without their own, and the codes standing for a
            missing value per dimension (a mapping ``{dimension: code or codes}`` or
            ``"dimension=code"`` strings); see ``tablesafe.rules.assess``.
        top_k, missing_code: the largest contributions kept per cell; a code that codes
            unknown to a hierarchy are mapped to instead of failing.
        tabular, frequency, top, given_status, recompute_totals: the data holds cells, not
            records (see :func:`prepare_problem`).
        encoding: text encoding of a CSV data file (default ``utf-8``; e.g. ``latin-1``).
        jj_offsets: for a ``.jj`` file whose rounded values do not add up exactly: take
            each relation's offset as its right-hand side (``--jj-offsets``).
        time_limit, certificates: seconds for the suppression method (None: set from the table size);
            ask the method for protection certificates (checked here).
        singleton, capacity: protect against the single respondent of a withheld cell (on by default)
            and let cells move down only by their protection capacity when they protect others.
        progress, seed, marker, empty_marker: show progress; the seed of randomised steps (same
            seed, same result); publication text for withheld and empty cells.
        run_audit: with ``method="none"``, still audit (shows how exposed the primaries
            are); a suppression method is always audited.
        insider: what insider findings of the audit do: ``fail`` (default), ``warn`` or
            ``off`` (see :func:`protect_problem`).
        rounding_base, readd_totals, cta_cost, cta_directions, fix_totals: options of the
            adjustment methods (``method="cta"``, ``"round"``, ``"random-round"``): see
            :class:`tablesafe.adjust.AdjustOptions`; refused with a suppression method.
        uncertainty, uncertainty_p, uncertainty_side, midpoint_q, knowledge_kx, knowledge_kx_low,
            knowledge_kw: the contribution-level audit (Massell's uncertainty intervals) and its options, see
            :meth:`tablesafe.uncertainty.options.UncertaintyOptions.build`.
        noise_percent, noise_spread: method ``noise``, see :class:`tablesafe.noise.NoiseOptions`.
        criterion: 2: a suppression also safe under operational criterion 2 (no aggregation of
            withheld cells sensitive under the p% rule; microdata only), see :mod:`tablesafe.criterion2`.

    Returns a :class:`ProtectResult`; raises :class:`TablesafeError` with a one-paragraph
    message on any bad input or failed stage.
    """
    adjusting = check_run_options(method, time_limit, insider, seed=seed, rounding_base=rounding_base,
                                  readd_totals=readd_totals, cta_cost=cta_cost, cta_directions=cta_directions,
                                  fix_totals=fix_totals)
    knowing = UncertaintyOptions.build(uncertainty, uncertainty_p, uncertainty_side, midpoint_q, knowledge_kx,
                                       knowledge_kx_low, knowledge_kw)
    noising = NoiseOptions.build(noise_percent, noise_spread, seed)
    criterion = check_criterion(criterion, method)
    timings: dict[str, float] = {}
    problem, resp, params = prepare_problem(
        data, dims, response, rules, holding=holding, weight=weight, weight_mode=weight_mode, waiver=waiver,
        request=request, cost=cost, cost_lambda=cost_lambda, total=total, tables=tables, metadata=metadata,
        apriori=apriori, manual=manual, manual_range=manual_range, bounds=bounds, count=count,
        zero_unsafe=zero_unsafe, symmetric=symmetric, sliding=sliding, freq_levels=freq_levels,
        manual_margin=manual_margin, missing_codes=missing_codes, top_k=top_k, missing_code=missing_code,
        negative=negative, tabular=tabular, frequency=frequency, top=top, given_status=given_status,
        recompute_totals=recompute_totals, encoding=encoding, jj_offsets=jj_offsets,
        require_additive=method != NONE, progress=progress, timings=timings)
    run = dict(response=resp, time_limit=time_limit, certificates=certificates, singleton=singleton,
               capacity=capacity, progress=progress, seed=seed, marker=marker, empty_marker=empty_marker,
               run_audit=run_audit, insider=insider, adjusting=adjusting, knowing=knowing, noising=noising)
    if criterion == 2:  # each unit's contributions, from the microdata
        run["criterion2"] = criterion2_inputs(problem, None if tabular else data, dims, resp, total=total, holding=holding,
                                              tables=tables, missing_code=missing_code, encoding=encoding)
    if method == NOISE:
        return protect_noisy(problem, data=None if tabular else data, dims=dims, total=total,
                             tables=tables, holding=holding, weight=weight, missing_code=missing_code,
                             encoding=encoding, params=params, timings=timings, method=DEFAULT_METHOD, **run)
    return protect_assessed(problem, method=method, params=params, timings=timings, **run)


def audit_publication(
    problem: Problem,
    publication: pd.DataFrame,
    *,
    response: str = "value",
    certificates: pd.DataFrame | None = None,
    params: dict | None = None,
    timings: dict[str, float] | None = None,
    progress: bool = False,
) -> ProtectResult:
    """Audit a given publication against the confidential table.

    Args:
        problem: the assessed problem (from the data and rules).
        publication: frame from :func:`tablesafe.io.publication.read_publication` (codes
            per dimension, ``value``, ``withheld``).
        certificates: optional certificates to check against the pattern.
        progress: report the audit's progress while it runs.

    Returns:
        A result whose ``audit`` holds the verdicts; ``result.ok`` tells whether every
        sensitive cell is protected.

    Raises:
        InputError: when the publication lacks cells of the table, names cells the table
            does not have, or publishes a value that differs from the data.
    """
    timings = {} if timings is None else timings
    withheld = withheld_in(publication, problem, codes_of(problem))
    pattern = Pattern(withheld=withheld, method="given", certificates=certificates)
    with _timed(timings, "audit"):
        result = audit(problem, pattern, progress=progress)
    params = dict(params or {})
    params["method"] = "audit of a given publication"
    if certificates is not None:
        with _timed(timings, "certificates"):
            failures = check_certificates(problem, withheld, certificates)
        params["certificate failures"] = len(failures)
    return ProtectResult(problem, pattern, result, response=response, method="given", params=params, timings=timings)


def protect_problem(
    problem: Problem,
    *,
    method: str = DEFAULT_METHOD,
    response: str = "value",
    time_limit: float | None = None,
    certificates: bool = False,
    singleton: bool = True,
    capacity: bool = False,
    progress: bool = False,
    seed: int = 0,
    marker: str | None = None,
    empty_marker: str | None = None,
    run_audit: bool = True,
    insider: str = "fail",
    params: dict | None = None,
    timings: dict[str, float] | None = None,
    rounding_base: float | None = None, readd_totals: bool = False, cta_cost: str = "weighted",
    cta_directions: str = "auto", fix_totals: Any = "none",
    uncertainty: bool = False, uncertainty_p: float | None = None, uncertainty_side: str = "two-sided",
    midpoint_q: float | None = None, knowledge_kx: float = 2.0, knowledge_kx_low: float = 0.0,
    knowledge_kw: float = 1.0,
) -> ProtectResult:
    """Suppress and audit an assessed :class:`~tablesafe.Problem` (e.g. read from JJ), or
    adjust it (``method="cta"``, ``"round"``, ``"random-round"``, with the adjustment
    options of :func:`protect`) and check the adjusted table.

    With ``method="none"`` only the sensitive cells are withheld (no complements, no
    safety claim); the audit, when available, then shows how exposed they are.

    The gate is the default attacker (docs/architecture.md: knows every published cell, the
    relations and the a priori bounds): any sensitive cell whose audit verdict is not
    ``protected`` raises :class:`~tablesafe.AuditFailure`. ``insider`` says what the
    audit's insider findings (a single contributor of a withheld cell narrowing down a
    sensitive cell) do: ``"fail"`` (default: raise like an outsider failure), ``"warn"``
    (reported in the summary, analyst result and report) or ``"off"`` (not checked).
    The ``uncertainty`` and ``knowledge_*`` options ask for the contribution-level audit
    (see :func:`protect`).
    """
    adjusting = check_run_options(method, time_limit, insider, seed=seed, rounding_base=rounding_base,
                                  readd_totals=readd_totals, cta_cost=cta_cost, cta_directions=cta_directions,
                                  fix_totals=fix_totals)
    knowing = UncertaintyOptions.build(uncertainty, uncertainty_p, uncertainty_side, midpoint_q, knowledge_kx,
                                       knowledge_kx_low, knowledge_kw)
    return protect_assessed(problem, method=method, response=response, time_limit=time_limit,
                               certificates=certificates, singleton=singleton, capacity=capacity,
                               progress=progress, seed=seed, marker=marker,
                               empty_marker=empty_marker, run_audit=run_audit, insider=insider,
                               params=params, timings=timings, adjusting=adjusting, knowing=knowing)
