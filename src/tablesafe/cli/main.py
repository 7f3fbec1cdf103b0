"""The ``tablesafe`` command line (documented in the README, "Protect the example from the command line").

Commands: ``protect``, ``audit``, ``rules``, ``inspect``, ``run`` (job file), ``arb``
(tau-ARGUS batch file), ``version``. Every failure prints one paragraph on stderr (no
traceback) and exits non-zero; nothing partial is written.
"""

from __future__ import annotations

from enum import Enum
from pathlib import Path
from typing import Any

import typer
from rich.table import Table

import tablesafe
from tablesafe.adjust.options import CTA_COSTS, CTA_DIRECTIONS
from tablesafe.audit import verdict_line
from tablesafe.cli.common import EXIT_UNSAFE, err, fail, guarded, out, say
from tablesafe.methods import ALL_METHODS, ALL_REGISTRY
from tablesafe.suppress.methods import DEFAULT_METHOD

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    help="Statistical disclosure control of tables: tabulate, find sensitive cells, suppress, audit, publish.",
)


Method = Enum("Method", {name: name for name in ALL_METHODS}, type=str)  # type: ignore[misc]
"""The ``--method`` choices: the names of the method registries (:mod:`tablesafe.methods`)."""


METHOD_HELP = "Protection method (secondary suppression, or an adjustment): " + "; ".join(
    f"'{m.name}'{' (default)' if m.name == DEFAULT_METHOD else ''} = {m.summary}" for m in ALL_REGISTRY) + "."

CtaCost = Enum("CtaCost", {name: name for name in CTA_COSTS}, type=str)  # type: ignore[misc]
CtaDirections = Enum("CtaDirections", {name: name for name in CTA_DIRECTIONS}, type=str)  # type: ignore[misc]


class Side(str, Enum):
    two_sided = "two-sided"
    sliding = "sliding"


class Insider(str, Enum):
    warn = "warn"
    fail = "fail"
    off = "off"


class Count(str, Enum):
    holdings = "holdings"
    records = "records"


class FreqLevels(str, Enum):
    range = "range"
    directional = "directional"


class WeightMode(str, Enum):
    expand = "expand"
    sample = "sample"
    known = "known"


# ------------------------------------------------------------------- shared options
DimOpt = typer.Option(None, "--dim", "-d", help="Dimension NAME or NAME=HIERARCHY (.hrc, parent-child .csv, lengths:1,2 or digits:3,1,1). Repeat for each dimension.")
ResponseOpt = typer.Option(None, "--response", "-r", help="Column summed in the cells.")
RuleOpt = typer.Option(None, "--rule", help="Sensitivity rule, e.g. 'p(15)', 'freq(3)', 'nk(2,80)' or 'P(15,1)|FREQ(3,10)'. Repeat for several.")
MetadataOpt = typer.Option(None, "--metadata", help="tau-ARGUS .rda metadata of an .asc data file.")
HoldingOpt = typer.Option(None, "--holding", help="Holding (enterprise group) variable: contributions are summed per holding first.")
WeightOpt = typer.Option(None, "--weight", help="Sampling weight variable.")
WeightModeOpt = typer.Option(None, "--weight-mode", help="How the rules use weights.")
WaiverOpt = typer.Option(None, "--waiver", help="Variable flagging contributors that waived protection.")
RequestOpt = typer.Option(None, "--request", help="Variable flagging contributors that asked for protection (request rule).")
CostOpt = typer.Option("value", "--cost", help="Cost of withholding a cell: value, unity, freq or a column name.")
TotalOpt = typer.Option("Total", "--total", help="Total code of every dimension.")
TableOpt = typer.Option(None, "--table", help="Linked table as comma-separated dimension names; repeat for several tables.")
AprioriOpt = typer.Option(None, "--apriori", help="tau-ARGUS a priori file (.hst): statuses, costs, levels or bounds per cell.")
ManualOpt = typer.Option(None, "--manual", help="CSV of statuses set by hand: dimension codes (or name), status A (sensitive) or P (protected), optional margin (%).")
ManualRangeOpt = typer.Option(10.0, "--manual-range", help="Protection (percent of the value) of cells marked unsafe by hand.")
EncodingOpt = typer.Option(None, "--encoding", help="Text encoding of a CSV data file (default utf-8; e.g. latin-1).")
QuietOpt = typer.Option(False, "--quiet", "-q", help="Print nothing but errors (for scripts).")


def _tables(table: list[str] | None) -> list[list[str]] | None:
    if not table:
        return None
    return [[x.strip() for x in t.split(",") if x.strip()] for t in table]


def _table_options(**kw) -> dict:
    return {k: v for k, v in kw.items() if v is not None}


_DATA_OPTIONS = ("metadata", "holding", "weight", "weight_mode", "waiver", "request", "cost", "total",
                 "apriori", "manual", "manual_range", "encoding")
"""The options of reading, tabulating and assessing that ``protect`` and ``audit`` share
(with ``--table``)."""


CriterionOpt = typer.Option(1, "--criterion", help="2: the suppression is also safe under operational criterion 2: no aggregation of withheld cells is sensitive under the p% rule (needs microdata).")


def _criterion2_audit(problem: Any, withheld: Any, criterion: int, data: str, dims: Any, response: str,
                      quiet: bool, options: dict) -> bool:
    """``audit --criterion 2``: say whether the publication passes operational criterion 2."""
    from tablesafe.criterion2 import check_criterion, criterion2_check, criterion2_inputs

    check_criterion(criterion, "auto")
    need = criterion2_inputs(problem, data, dims, response, total=options.get("total", "Total"),
                             holding=options.get("holding"), tables=options.get("tables"),
                             missing_code=options.get("missing_code"), encoding=options.get("encoding"))
    found = criterion2_check(problem, withheld, need)
    if found["safe"]:
        say(quiet, f"criterion 2: no sensitive aggregation of withheld cells ({found['parts']} independent parts)")
    else:
        say(quiet, f"criterion 2: {found['sensitive parts']} of {found['parts']} independent parts of the withheld "
                   f"cells have a sensitive aggregation, e.g. {found.get('aggregation', '')} (unit "
                   f"{found.get('attacked')} disclosed, attacker {found.get('attacker')})")
    return bool(found["safe"])


def _data_options(given: dict[str, Any]) -> dict:
    """The shared options of a command's arguments (``locals()``), as
    :func:`tablesafe.api.prepare_problem` takes them: paths as strings, choices by value,
    ``--table`` as lists of names; those not given are left out."""
    kw = {k: given[k] for k in _DATA_OPTIONS}
    kw.update({k: str(v) for k, v in kw.items() if isinstance(v, Path)})
    kw.update({k: v.value for k, v in kw.items() if isinstance(v, Enum)})
    return _table_options(tables=_tables(given["table"]), **kw)


# ------------------------------------------------------------------------- protect
@app.command()
def protect(
    data: Path | None = typer.Argument(None, help="Microdata (CSV, Parquet, tau-ARGUS .asc) or a .jj file."),
    metadata: Path | None = MetadataOpt,
    dim: list[str] | None = DimOpt,
    response: str | None = ResponseOpt,
    holding: str | None = HoldingOpt,
    weight: str | None = WeightOpt,
    weight_mode: WeightMode | None = WeightModeOpt,
    waiver: str | None = WaiverOpt,
    request: str | None = RequestOpt,
    rule: list[str] | None = RuleOpt,
    method: Method = typer.Option(DEFAULT_METHOD, "--method", "-m", help=METHOD_HELP),
    cost: str = CostOpt,
    total: str = TotalOpt,
    table: list[str] | None = TableOpt,
    apriori: Path | None = AprioriOpt,
    manual: Path | None = ManualOpt,
    manual_range: float = ManualRangeOpt,
    tabular: bool = typer.Option(False, "--tabular", help="DATA holds cells (codes and value), not records: a CSV, or a tau-ARGUS .tab with --metadata."),
    frequency: str | None = typer.Option(None, "--frequency", help="Tabular input: column with the number of contributors."),
    top: list[str] | None = typer.Option(None, "--top", help="Tabular input: column with a largest contribution (repeat, largest first)."),
    given_status: str | None = typer.Option(None, "--status", "--given-status", help="Tabular input: column with given statuses (S, U, P)."),
    recompute_totals: bool = typer.Option(False, "--recompute-totals", help="Tabular input: replace given totals by the sums of their parts."),
    missing_code: str | None = typer.Option(None, "--missing-code", help="Map codes the hierarchy does not know to this (missing) code instead of failing."),
    negative: str | None = typer.Option(None, "--negative", help="'abs': apply p%, (n,k) and linear rules to absolute contributions when data have negative values."),
    cost_lambda: float = typer.Option(1.0, "--cost-lambda", help="Cost transform: cost ** lambda (log(1 + cost) for 0)."),
    bounds: float | None = typer.Option(None, "--bounds", help="A priori bounds: the value +- this percentage (default [0, inf) for non-negative data)."),
    count: Count = typer.Option(Count.holdings, "--count", help="What the frequency rule counts: holdings (units) or records."),
    zero_unsafe: float | None = typer.Option(None, "--zero-unsafe", help="Make zero cells (all contributions 0) sensitive with this protection range."),
    symmetric: bool = typer.Option(True, "--symmetric/--no-symmetric", help="Lower protection level = upper level (tau-ARGUS); --no-symmetric: rule-derived lower levels."),
    sliding: bool = typer.Option(False, "--sliding", help="Also set sliding protection levels (upper + rule-derived lower)."),
    freq_levels: FreqLevels = typer.Option(FreqLevels.range, "--freq-levels", help="Levels of frequency rules: range (percent of the value) or directional."),
    manual_margin: float | None = typer.Option(None, "--manual-margin", help="Margin (percent of the value) of cells sensitive by hand without their own (default: the MAN rule's, or 10)."),
    missing_codes: list[str] | None = typer.Option(None, "--missing-codes", help="DIMENSION=CODE: a code that stands for a missing value (repeat for several)."),
    top_k: int = typer.Option(4, "--top-k", help="Number of largest contributions kept per cell (more when the rules need more)."),
    singleton: bool = typer.Option(True, "--singleton/--no-singleton", help="Protect against the single respondent of a withheld cell (on by default)."),
    capacity: bool = typer.Option(False, "--capacity", help="Let cells move down only by their protection capacity when they protect others."),
    run_audit: bool = typer.Option(True, "--run-audit/--no-run-audit", help="With --method none, still audit (shows how exposed the primaries are)."),
    jj_offsets: bool = typer.Option(False, "--jj-offsets", help="JJ input whose values do not add up exactly (rounded): take each relation's offset as its right-hand side."),
    jj: Path | None = typer.Option(None, "--jj", help="Protect the problem in a JJ file (cells and relations) instead of microdata."),
    encoding: str | None = EncodingOpt,
    out_file: Path | None = typer.Option(None, "--out", "-o", help="Publication file (.csv, .parquet, .xlsx)."),
    cells: Path | None = typer.Option(None, "--cells", help="Analyst file (confidential): statuses, rules, levels, audit."),
    report: Path | None = typer.Option(None, "--report", help="HTML report (confidential)."),
    certificates: Path | None = typer.Option(None, "--certificates", help="Parquet file of protection certificates."),
    write_jj: Path | None = typer.Option(None, "--write-jj", help="Write the protected problem as a JJ file."),
    write_apriori: Path | None = typer.Option(None, "--write-apriori", help="Write the pattern as a tau-ARGUS a priori file (.hst): withheld u, published p."),
    marker: str | None = typer.Option(None, "--marker", help="Text for withheld cells in the publication (default: empty)."),
    empty_marker: str | None = typer.Option(None, "--empty-marker", help="Text for empty cells (default: 0)."),
    time_limit: float | None = typer.Option(None, "--time-limit", help="Seconds for the suppression method."),
    insider: Insider = typer.Option(Insider.fail, "--insider", help="Insider findings of the audit (a single contributor of a withheld cell narrowing down a sensitive cell): fail (default), warn or off."),
    seed: int = typer.Option(0, "--seed", help="Seed for randomised steps (results are deterministic per seed)."),
    rounding_base: float | None = typer.Option(None, "--rounding-base", help="Methods round and random-round: the base B every cell is rounded to a multiple of; method intervals: the ends of the published intervals are rounded outward to multiples of B."),
    readd_totals: bool = typer.Option(False, "--readd-totals", help="Method random-round: round the interior cells only and add the totals up from them (an additive table)."),
    cta_cost: CtaCost = typer.Option("weighted", "--cta-cost", help="Method cta: what it minimises: weighted (deviations weighted by 1/value, default), l1, or relative (the largest relative change)."),
    cta_directions: CtaDirections = typer.Option("auto", "--cta-directions", help="Method cta: directions of the sensitive cells: optimal (MILP), alternating (heuristic), auto (MILP up to 20,000 cells)."),
    fix_totals: str = typer.Option("none", "--fix-totals", help="Method cta: totals kept at their true values: none, grand, all, or DIM=DEPTH[,DIM=DEPTH] (totals of DIM down to that depth)."),
    uncertainty: bool = typer.Option(False, "--uncertainty", help="Also audit contributions (Massell's uncertainty intervals): per sensitive cell and attacker, the uncertainty interval of the largest contribution the publication leaves."),
    uncertainty_p: float | None = typer.Option(None, "--uncertainty-p", help="The p of the contribution-level audit (default: the p% rule's)."),
    uncertainty_side: Side = typer.Option(Side.two_sided, "--uncertainty-side", help="Location rule of the contribution-level audit: two-sided or sliding."),
    midpoint_q: float | None = typer.Option(None, "--midpoint-q", help="Flag cells whose interval's midpoint lies within this percentage of the largest contribution (default: p)."),
    knowledge_kx: float = typer.Option(2.0, "--knowledge-kx", help="Knowledge model: other respondents' contributions x known to lie below kx*x."),
    knowledge_kx_low: float = typer.Option(0.0, "--knowledge-kx-low", help="Knowledge model: ... and above kx_low*x."),
    knowledge_kw: float = typer.Option(1.0, "--knowledge-kw", help="Knowledge model: sampling weights w > 1 known within [1, kw*w]."),
    noise_percent: float = typer.Option(10.0, "--noise-percent", help="Method noise: the multipliers' distance from 1, in percent (confidential)."),
    noise_spread: float | None = typer.Option(None, "--noise-spread", help="Method noise: half-width of the band of multiplier sizes around --noise-percent (default 0.3 times it)."),
    contributions: Path | None = typer.Option(None, "--contributions", help="Write the contribution-level audit (confidential; needs --uncertainty)."),
    criterion: int = CriterionOpt,
    quiet: bool = QuietOpt,
) -> None:
    """Protect a table: tabulate, find sensitive cells, suppress or adjust, audit, write files."""
    data_options = _data_options(locals())

    def body() -> None:
        from tablesafe.api import protect as run
        from tablesafe.io.publication import check_output_paths

        source = jj if jj is not None else data
        if source is None:
            raise fail("give a DATA file, or --jj FILE.jj")
        if jj is not None and data is not None:
            raise fail("give either DATA or --jj, not both")
        if source.suffix.lower() != ".jj" and not dim and not (tabular and metadata):
            raise fail("name the dimensions of the table with --dim NAME[=HIERARCHY]")
        check_output_paths({"out": out_file, "cells": cells, "report": report, "certificates": certificates,
                            "jj": write_jj, "apriori": write_apriori, "contributions": contributions})
        data_arg: object = str(source)
        if jj is not None and dim:
            data_arg = _jj_as_table(jj, dim, total)
        result = run(
            data_arg,
            dim,
            response,
            rule,
            method=method.value,
            time_limit=time_limit,
            certificates=certificates is not None,
            progress=not quiet,
            seed=seed,
            marker=marker,
            empty_marker=empty_marker,
            insider=insider.value,
            cost_lambda=cost_lambda,
            count=count.value,
            symmetric=symmetric,
            sliding=sliding,
            freq_levels=freq_levels.value,
            top_k=top_k,
            singleton=singleton,
            capacity=capacity,
            run_audit=run_audit,
            rounding_base=rounding_base,
            readd_totals=readd_totals,
            cta_cost=cta_cost.value,
            cta_directions=cta_directions.value,
            fix_totals=fix_totals,
            uncertainty=uncertainty, uncertainty_p=uncertainty_p, uncertainty_side=uncertainty_side.value,
            midpoint_q=midpoint_q, knowledge_kx=knowledge_kx, knowledge_kx_low=knowledge_kx_low,
            knowledge_kw=knowledge_kw, noise_percent=noise_percent, noise_spread=noise_spread,
            criterion=criterion,
            **_table_options(
                bounds=bounds,
                zero_unsafe=zero_unsafe,
                manual_margin=manual_margin,
                missing_codes=missing_codes or None,
                tabular=tabular or None,
                frequency=frequency,
                top=top or None,
                given_status=given_status,
                recompute_totals=recompute_totals or None,
                missing_code=missing_code,
                negative=negative,
                jj_offsets=jj_offsets or None,
            ),
            **data_options,
        )
        result.write(out=out_file, cells=cells, report=report, certificates=certificates, jj=write_jj,
                     apriori=write_apriori, contributions=contributions)
        say(quiet, result.summary())
        for label, path in (("publication", out_file), ("analyst file", cells), ("report", report), ("certificates", certificates), ("JJ file", write_jj), ("a priori file", write_apriori), ("contribution-level audit", contributions)):
            if path is not None:
                say(quiet, f"wrote {label}: {path}")
        if out_file is not None and not result.ok:
            # never a silent unsafe publication: say so even with --quiet, and exit 1
            typer.echo(unsafe_warning(result, out_file), err=True)
            raise typer.Exit(1)

    guarded(body)


def unsafe_warning(result: tablesafe.ProtectResult, out_file: Path) -> str:
    """The warning for a written publication that failed its audit: one self-contained
    paragraph (printed even with --quiet, when no summary precedes it)."""
    if result.audit is not None:
        why = f"the audit finds {verdict_line(result.audit)}"
    else:
        why = "no audit could prove its sensitive cells protected" + (
            f" ({result.params['audit']})" if result.params.get("audit") else "")
    how = ("method 'none' withholds the primary cells only, so they may be recalculable from the "
           "published cells; protect with --method modular, optimal or fast"
           if result.method == "none" else "the analyst file (--cells) shows the audit of every sensitive cell")
    return (f"warning: the publication written leaves sensitive cells recalculable too closely, so it is not "
            f"safe to publish ({out_file}): {why}; {how}.")


def _jj_as_table(jj: Path, dims: list[str], total: str):
    """Read a JJ file and attach the codes of the table named by ``--dim`` (hierarchies)."""
    from tablesafe.cli.inspect_cmd import load_hierarchy
    from tablesafe.errors import InputError
    from tablesafe.io.jj import read_jj, with_structure
    from tablesafe.structure import Dimension, TableStructure, compile_tables

    dd = []
    for d in dims:
        name, _, hier = d.partition("=")
        if not hier.strip() or hier.startswith(("lengths:", "digits:")):
            raise InputError(f"with --jj each --dim needs a hierarchy file (NAME=FILE): {d!r}")
        dd.append(Dimension(name.strip(), load_hierarchy(hier.strip(), [], total)))
    return with_structure(read_jj(jj), compile_tables(TableStructure(tuple(dd))))


# --------------------------------------------------------------------------- audit
@app.command()
def audit(
    data: Path = typer.Argument(..., help="Microdata the publication was made from (or a .jj file)."),
    pattern: Path = typer.Option(..., "--pattern", "-p", help="Publication file to audit (withheld cells empty or --marker)."),
    metadata: Path | None = MetadataOpt,
    dim: list[str] | None = DimOpt,
    response: str | None = ResponseOpt,
    holding: str | None = HoldingOpt,
    weight: str | None = WeightOpt,
    weight_mode: WeightMode | None = WeightModeOpt,
    waiver: str | None = WaiverOpt,
    request: str | None = RequestOpt,
    rule: list[str] | None = RuleOpt,
    cost: str = CostOpt,
    total: str = TotalOpt,
    table: list[str] | None = TableOpt,
    apriori: Path | None = AprioriOpt,
    manual: Path | None = ManualOpt,
    manual_range: float = ManualRangeOpt,
    marker: str | None = typer.Option(None, "--marker", help="Marker of withheld cells in the publication, if not empty."),
    cells: Path | None = typer.Option(None, "--cells", help="Write the analyst file with audit_lower, audit_upper and verdict."),
    report: Path | None = typer.Option(None, "--report", help="HTML report of the audit."),
    certificates: Path | None = typer.Option(None, "--certificates", help="Certificates (Parquet) to check against the pattern."),
    encoding: str | None = EncodingOpt,
    criterion: int = typer.Option(1, "--criterion", help="2: also check operational criterion 2 (no aggregation of withheld cells sensitive under the p% rule; needs microdata)."),
    quiet: bool = QuietOpt,
) -> None:
    """Audit a publication: can any sensitive cell be recalculated too closely?

    Exits with status 1 when any sensitive cell is not protected (or, with
    ``--criterion 2``, when an aggregation of withheld cells is sensitive).
    """
    data_options = _data_options(locals())

    def body() -> int:
        import pandas as pd

        from tablesafe.api import audit_publication, prepare_problem
        from tablesafe.errors import InputError
        from tablesafe.io.analyst import codes_of
        from tablesafe.io.publication import check_output_paths, read_publication

        if data.suffix.lower() != ".jj" and not dim:
            raise fail("name the dimensions of the table with --dim NAME[=HIERARCHY]")
        check_output_paths({"cells": cells, "report": report})
        timings: dict[str, float] = {}
        problem, resp, params = prepare_problem(
            str(data),
            dim,
            response,
            rule,
            progress=not quiet,
            timings=timings,
            **data_options,
        )
        dims = list(codes_of(problem).columns)
        pub = read_publication(pattern, dims, resp, marker=marker)
        certs = None
        if certificates is not None:
            try:
                certs = pd.read_parquet(certificates)
            except (OSError, ValueError) as exc:
                raise InputError(f"cannot read certificates: {exc}", file=str(certificates)) from None
        result = audit_publication(problem, pub, response=resp, certificates=certs, params=params, timings=timings,
                                   progress=not quiet)
        result.write(cells=cells, report=report)
        a = result.audit
        if not quiet:
            out.print(f"{problem.n} cells, {int(result.withheld.sum())} withheld; audit: {verdict_line(a)}")
            bad = [(problem.names[i], a.verdict[i], a.lower[i], a.upper[i]) for i in range(problem.n) if a.verdict[i] not in ("", "protected")]
            if bad:
                t = Table("cell", "verdict", "audit interval", title="cells not protected")
                for name, v, lo, hi in bad[:30]:
                    t.add_row(str(name), str(v), f"[{lo:,.2f}, {hi:,.2f}]")
                out.print(t)
            if params.get("certificate failures"):
                out.print(f"{params['certificate failures']} certificate(s) failed their check")
            if cells:
                out.print(f"wrote analyst file: {cells}")
        failed_certs = bool(params.get("certificate failures"))
        second_ok = True
        if criterion != 1:
            second_ok = _criterion2_audit(problem, result.withheld, criterion, str(data), dim, resp, quiet,
                                          data_options)
        return 0 if result.ok and not failed_certs and second_ok else EXIT_UNSAFE

    code = guarded(body)
    if code:
        raise typer.Exit(code)


# --------------------------------------------------------------------------- rules
@app.command()
def rules(
    rule: list[str] = typer.Argument(..., help="Rule strings, e.g. 'p(15)' 'nk(2,85)' 'P(15,1)|FREQ(3,10)'."),
    to: str | None = typer.Option(None, "--to", help="Convert to another rule family: p, nk2 or nk1."),
) -> None:
    """Explain in words what rule strings mean, and convert between rule families."""

    def body() -> None:
        from tablesafe.cli.rules_cmd import convert, explain, parsed

        for text in rule:
            rules_ = parsed(text)
            details = explain(text)
            out.print(f"[bold]{text}[/bold]")
            for r, d in zip(rules_, details):
                tau = r.to_tauargus()
                out.print(f"  - {r.to_string()}{f'  (tau-ARGUS: {tau})' if tau else ''}: {r.describe()}")
                if d.kind in ("p", "pq", "nk"):
                    out.print(f"    {d.words}")
                if to:
                    for line in convert(d, to):
                        out.print(f"    → {line}")

    guarded(body)


# ------------------------------------------------------------------------- inspect
@app.command()
def inspect(
    data: Path = typer.Argument(..., help="Data file (CSV, Parquet, or tau-ARGUS .asc with --metadata)."),
    metadata: Path | None = MetadataOpt,
    dim: list[str] | None = DimOpt,
    total: str = TotalOpt,
) -> None:
    """Summarise data: records, columns, and codes and hierarchy of each dimension."""

    def body() -> None:
        from tablesafe.cli.inspect_cmd import summarise

        s = summarise(str(data), dim or [], metadata=metadata, total=total)
        out.print(f"[bold]{s.source}[/bold]: {s.records:,} records, {len(s.columns)} columns")
        t = Table("column", "type", "missing", "distinct", "min", "max", "negative")
        for r in s.columns.itertuples(index=False):
            t.add_row(r.column, r.type, str(r.missing), str(r.distinct),
                      "" if r.min != r.min else f"{r.min:,.6g}", "" if r.max != r.max else f"{r.max:,.6g}",
                      str(r.negative) if r.type == "number" else "")
        out.print(t)
        for d in s.dims:
            out.print(
                f"dimension [bold]{d.name}[/bold]: {d.data_codes} codes in the data; hierarchy {d.hierarchy}: "
                f"{d.codes} codes (total included), {d.leaves} leaves, depth {d.depth}"
            )
            if d.unknown:
                out.print(f"  [red]{len(d.unknown)} code(s) in the data unknown to the hierarchy[/red]: {', '.join(d.unknown[:20])}")
            if d.unused_leaves:
                out.print(f"  {d.unused_leaves} leaf code(s) of the hierarchy do not occur in the data (empty cells)")

    guarded(body)


# ----------------------------------------------------------------------------- run
@app.command()
def run(
    job: Path = typer.Argument(..., help="Job file (TOML) describing one or several tables."),
    quiet: bool = QuietOpt,
) -> None:
    """Run a job file: every table it lists, with its outputs (paths relative to the job file)."""

    def body() -> None:
        from tablesafe.io.jobfile import run_job

        for t, result in run_job(job, progress=not quiet):
            say(quiet, f"[bold]{t.name}[/bold]")
            say(quiet, result.summary())
            for k, v in t.outputs.items():
                if v:
                    say(quiet, f"wrote {k}: {v}")

    guarded(body)


# ----------------------------------------------------------------------------- arb
@app.command()
def arb(
    batch: Path = typer.Argument(..., help="tau-ARGUS batch file (.arb)."),
    outdir: Path | None = typer.Option(None, "--outdir", help="Folder for the files the batch writes (default: beside the .arb)."),
    quiet: bool = QuietOpt,
) -> None:
    """Run a tau-ARGUS batch file (.arb): a useful subset of its commands."""

    def body() -> None:
        from tablesafe.io.arb import run_arb

        for line in run_arb(batch, outdir=outdir, progress=not quiet):
            say(quiet, line)

    guarded(body)


# ------------------------------------------------------------------------- version
@app.command()
def version() -> None:
    """Print the tablesafe version."""
    typer.echo(tablesafe.__version__)


def main() -> None:  # pragma: no cover
    """Entry point for ``python -m tablesafe.cli.main``."""
    app()


if __name__ == "__main__":  # pragma: no cover
    app()

__all__ = ["app", "err"]
