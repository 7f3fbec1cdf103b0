"""tau-ARGUS batch files (``.arb``): read them and run a useful subset, so existing jobs run
unchanged.

Supported commands (one per line, ``//`` starts a comment):

- ``<OPENMICRODATA> "file.asc"`` / ``<OPENTABLEDATA> "file.tab"`` and
  ``<OPENMETADATA> "file.rda"``;
- ``<SPECIFYTABLE> "v1""v2"|"response"|"shadow"|"cost"`` (cost: empty = the response
  value, ``-1`` frequency, ``-2`` unity, or a variable);
- ``<SAFETYRULE> P(15,1)|FREQ(3,10)|MAN(20)...`` (for the last table specified); the
  metadata's weight variable is applied only with ``WGT(1)`` (``WGT(0)`` or no ``WGT``:
  unweighted values and rules, as in tau-ARGUS);
- ``<READMICRODATA>``, ``<READTABLE> [0|1]`` (1: recompute totals);
- ``<APRIORI> "file.hst", tabno, "sep"[, ignore errors 0/1[, expand 0/1]]``;
- ``<SUPPRESS> METHOD(tabno, ...)``: ``OPT`` -> optimal, ``MOD`` -> modular, ``GH`` and
  ``NET`` -> fast (tablesafe's heuristic; tau-ARGUS's hypercube and network methods are
  not reproduced), ``NONE`` -> none;
- ``<WRITETABLE> (tabno, type, options, "file")``: type 1, 2 (CSV) and 3 (code-value)
  write one line per cell with the codes and the value; with ``AS+`` the tau-ARGUS
  numeric status is added and values of withheld cells are kept (an analyst file, as
  tau-ARGUS writes it), without it withheld cells show ``x`` (a publication); ``FL+``
  writes the variable names on the first line; ``QU-`` drops the quotes around codes;
  ``SE+`` drops empty cells. Type 5 writes codes, value and tablesafe status letters;
  type 6 writes the problem as a JJ file;
- ``<LOGBOOK>``, ``<SOLVER>``, ``<GOINTERACTIVE>`` and ``<CLEAR>`` are accepted; the
  first three change nothing.

Paths are relative to the batch file; output files go beside it unless an output folder
is given. Every output is written atomically.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from tablesafe.errors import InputError
from tablesafe.rules import NKRule, PRule, RuleSet

#: tau-ARGUS numeric cell statuses written with AS+ (1 safe, 3 unsafe by rule, 5 unsafe
#: by the frequency rule, 6 zero rule, 9 unsafe by hand, 10 protected, 11 secondary,
#: 14 empty).
TAU_STATUS = {"S": 1, "U": 3, "A": 9, "P": 10, "M": 11, "Z": 14}
SUPPRESS_METHODS = {"OPT": "optimal", "MOD": "modular", "GH": "fast", "NET": "fast", "NONE": "none"}


@dataclass
class ArbCommand:
    """One command of a batch file."""

    keyword: str
    args: str
    line: int


@dataclass
class ArbTable:
    """A table specified in the batch, with what the batch says about it."""

    dims: list[str]
    response: str
    shadow: str = ""
    cost: str = ""
    rules: str = ""
    apriori: list[tuple[Path, str, bool]] = field(default_factory=list)
    cells: Any = None
    problem: Any = None
    result: Any = None
    method: str | None = None


def read_arb(path: str | Path) -> list[ArbCommand]:
    """Split a batch file into commands (comments and blank lines dropped)."""
    name = str(path)
    try:
        text = Path(path).read_text(encoding="latin-1")
    except OSError as exc:
        raise InputError(f"cannot read batch file: {exc.strerror}", file=name) from None
    cmds = []
    for lineno, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith(("//", "\\\\")):
            continue
        m = re.match(r"^<\s*([A-Za-z]+)\s*>(.*)$", line)
        if not m:
            raise InputError(f"expected a <COMMAND>, found {line[:40]!r}", file=name, line=lineno)
        cmds.append(ArbCommand(m.group(1).upper(), m.group(2).strip(), lineno))
    if not cmds:
        raise InputError("the batch file has no commands", file=name)
    return cmds


def _unquote(s: str) -> str:
    s = s.strip()
    if len(s) >= 2 and s[0] == s[-1] == '"':
        return s[1:-1]
    return s


def parse_specifytable(args: str, *, file: str | None = None, line: int | None = None) -> ArbTable:
    """``"v1""v2"|"resp"|"shadow"|"cost"`` -> an :class:`ArbTable`."""
    parts = args.split("|")
    dims = re.findall(r'"([^"]*)"', parts[0]) or parts[0].split()
    if not dims:
        raise InputError("SPECIFYTABLE names no explanatory variable", file=file, line=line)
    fields = [_unquote(p) for p in parts[1:]] + ["", "", ""]
    response, shadow, cost = fields[0], fields[1], fields[2]
    if not response:
        raise InputError("SPECIFYTABLE names no response variable", file=file, line=line)
    return ArbTable(dims=[d.strip() for d in dims], response=response, shadow=shadow, cost=cost)


def _table_no(text: str, tables: list[ArbTable], file: str, line: int) -> int:
    try:
        n = int(text)
    except ValueError:
        raise InputError(f"table number expected, found {text!r}", file=file, line=line) from None
    if n == 0 and len(tables) == 1:
        return 0
    if not 1 <= n <= len(tables):
        raise InputError(f"no table {n}: the batch specifies {len(tables)} table(s)", file=file, line=line)
    return n - 1


def _cost(table: ArbTable) -> str:
    c = table.cost.strip()
    if c in ("", table.response):
        return "value"
    return {"-1": "freq", "-2": "unity", "-3": "value"}.get(c, c)


def run_arb(path: str | Path, *, outdir: str | Path | None = None, progress: bool = False) -> list[str]:
    """Run a batch file; returns the log lines (what was done, one line per step).

    Raises:
        InputError: unknown or misplaced commands, missing files, unsupported options,
            naming the batch file and line.
    """
    from tablesafe.api import apply_apriori, protect_problem

    path = Path(path)
    name = str(path)
    base = path.resolve().parent
    out_base = Path(outdir) if outdir is not None else base
    cmds = read_arb(path)
    log: list[str] = []
    data: Path | None = None
    tabular = False
    metadata: Path | None = None
    tables: list[ArbTable] = []

    def resolve(f: str, line: int) -> Path:
        p = Path(_unquote(f))
        p = p if p.is_absolute() else base / p
        if not p.exists():
            raise InputError(f"file {p.name} not found", file=name, line=line)
        return p

    for cmd in cmds:
        kw, args, ln = cmd.keyword, cmd.args, cmd.line
        if kw in ("LOGBOOK", "SOLVER", "GOINTERACTIVE", "SILENT", "ANCO", "COMMENT"):
            continue
        if kw in ("OPENMICRODATA", "OPENTABLEDATA"):
            data, tabular = resolve(args, ln), kw == "OPENTABLEDATA"
            tables = [] if not tables or tables[-1].result is not None else tables
            log.append(f"data: {data.name}")
        elif kw == "OPENMETADATA":
            if data is None:
                raise InputError("OPENMETADATA before a data file was opened", file=name, line=ln)
            metadata = resolve(args, ln)
            log.append(f"metadata: {metadata.name}")
        elif kw == "SPECIFYTABLE":
            if metadata is None:
                raise InputError("SPECIFYTABLE before OPENMETADATA", file=name, line=ln)
            t = parse_specifytable(args, file=name, line=ln)
            if t.response.lower() in ("<freq>", "freq>"):
                raise InputError("frequency-count tables (<freq>) are not supported in .arb jobs yet", file=name, line=ln)
            tables.append(t)
            log.append(f"table {len(tables)}: {' x '.join(t.dims)}, response {t.response}")
        elif kw == "SAFETYRULE":
            if not tables:
                raise InputError("SAFETYRULE before SPECIFYTABLE", file=name, line=ln)
            tables[-1].rules = args.strip()
        elif kw in ("READMICRODATA", "READTABLE"):
            if not tables:
                raise InputError(f"{kw} before SPECIFYTABLE", file=name, line=ln)
            if (kw == "READTABLE") != tabular:
                raise InputError(f"{kw} does not match the data opened ({'tabular' if tabular else 'micro'}data)", file=name, line=ln)
            for i, t in enumerate(tables):
                if t.problem is None:
                    _read_table(t, data, metadata, tabular, recompute=args.strip().startswith("1"), progress=progress)
                    log.append(f"table {i + 1}: {t.problem.n} cells, {int(t.problem.sensitive.sum())} sensitive")
        elif kw in ("APRIORI", "APRIORY"):
            parts = [p.strip() for p in args.split(",")]
            if len(parts) < 3:
                raise InputError('APRIORI needs "file", table number, "separator"', file=name, line=ln)
            f = resolve(parts[0], ln)
            ti = _table_no(parts[1], tables, name, ln)
            sep = _unquote(parts[2]) or ","
            ignore = len(parts) > 3 and parts[3] == "1"
            t = tables[ti]
            if t.problem is None:
                raise InputError("APRIORI before the table was read", file=name, line=ln)
            t.problem = apply_apriori(t.problem, f, ignore_errors=ignore, sep=sep)
            log.append(f"table {ti + 1}: a priori file {f.name} applied")
        elif kw == "SUPPRESS":
            m = re.match(r"^([A-Za-z]+)\s*\((.*)\)\s*$", args)
            if not m:
                raise InputError(f"cannot read SUPPRESS {args!r}; expected e.g. MOD(1)", file=name, line=ln)
            meth = m.group(1).upper()
            if meth not in SUPPRESS_METHODS:
                raise InputError(
                    f"suppression method {meth} is not supported (use OPT, MOD, GH or NET)", file=name, line=ln
                )
            margs = [a.strip() for a in m.group(2).split(",")]
            ti = _table_no(margs[0], tables, name, ln)
            t = tables[ti]
            if t.problem is None:
                raise InputError("SUPPRESS before the table was read", file=name, line=ln)
            t.method = SUPPRESS_METHODS[meth]
            time_limit = None
            if meth in ("OPT", "MOD") and len(margs) > 1 and margs[1]:
                try:
                    time_limit = 60.0 * float(margs[1])
                except ValueError:
                    time_limit = None
            t.result = protect_problem(
                t.problem,
                method=t.method,
                response=t.response,
                time_limit=time_limit,
                progress=progress,
                params={"rules": [t.rules], "source": name, "tau-ARGUS method": meth},
            )
            log.append(f"table {ti + 1}: {meth} -> {t.method}; " + t.result.summary().splitlines()[0])
        elif kw == "WRITETABLE":
            m = re.match(r"^\(\s*(\d+)\s*,\s*(\d+)\s*,\s*([^,]*?)\s*,\s*(\"[^\"]*\"|[^)]*)\s*\)\s*$", args)
            if not m:
                raise InputError(f"cannot read WRITETABLE {args!r}; expected (tabno, type, options, \"file\")", file=name, line=ln)
            ti = _table_no(m.group(1), tables, name, ln)
            t = tables[ti]
            if t.result is None:
                if t.problem is None:
                    raise InputError("WRITETABLE before the table was read", file=name, line=ln)
                t.result = protect_problem(t.problem, method="none", response=t.response)
            target = Path(_unquote(m.group(4)))
            target = target if target.is_absolute() else out_base / target
            _write_table(t, int(m.group(2)), m.group(3), target, file=name, line=ln)
            log.append(f"table {ti + 1}: wrote {target}")
        elif kw == "CLEAR":
            tables, data, metadata = [], None, None
        else:
            raise InputError(f"batch command <{kw}> is not supported", file=name, line=ln)
    return log


def _read_table(t: ArbTable, data: Path, metadata: Path, tabular: bool, *, recompute: bool, progress: bool) -> None:
    """Tabulate (or read) the table and assess it with its safety rule."""
    from tablesafe.io.tauargus import read_asc, read_rda, read_tab
    from tablesafe.rules import RuleSet, assess
    from tablesafe.rules.apriori import given_statuses
    from tablesafe.tabulate import from_tabular, tabulate

    md = read_rda(metadata)
    cost = _cost(t)
    ruleset = RuleSet.build(t.rules or "MAN(10)")  # the safety rule, read once
    top_k = max(4, ruleset.top_k)
    if tabular:
        cells = from_tabular(read_tab(data, md), t.dims, t.response, recompute_totals=recompute, top_k=top_k)
    else:
        extra = [cost] if cost not in ("value", "freq", "unity") else None
        holding = (md.with_role("HOLDING") or [None])[0]
        weight = (md.with_role("WEIGHT") or [None])[0]
        # tau-ARGUS applies the weights only with WGT(1) (mode expand); WGT(0), like no WGT,
        # leaves them out: unweighted cell values and rules on unweighted contributions
        use_weight = ruleset.weight_mode is not None
        cells = tabulate(
            read_asc(data, md), t.dims, t.response, holding=holding if _holding_rules(ruleset) else None,
            weight=weight if use_weight else None, extra=extra, progress=progress, top_k=top_k,
        )
    manual = given_statuses(cells)
    status = cells.extra.get("status") if cells.extra else None
    if not t.rules and manual is None:
        raise InputError("no SAFETYRULE for the table and no unsafe cells in the input")
    t.cells = cells
    problem = assess(cells, ruleset, manual=manual, cost=cost)
    # protection levels given with the table (<LOWERPL>/<UPPERPL>) hold for the cells
    # the table marks unsafe, as in tau-ARGUS; other unsafe cells keep the rule's levels
    if manual is not None and ("upl" in cells.extra or "lpl" in cells.extra):
        given = np.isin(np.asarray(status, dtype=object).astype(str), ["U", "A"])
        upl, lpl = problem.upl.copy(), problem.lpl.copy()
        for arr, key in ((upl, "upl"), (lpl, "lpl")):
            if key in cells.extra:
                g = np.asarray(cells.extra[key], dtype=float)
                use = given & np.isfinite(g) & (g > 0)
                arr[use] = g[use]
        problem = problem.copy(upl=upl, lpl=lpl)
    if tabular and "frequency" not in cells.extra:
        # without a frequency variable the number of contributors is unknown: no cell
        # may be taken for a single contributor (insider checks need real counts)
        problem = problem.copy(contributors=None)
    t.problem = problem


def _holding_rules(ruleset: RuleSet) -> bool:
    """tau-ARGUS puts holding-level rules after the individual ones (3rd/4th P or NK);
    tablesafe groups by holding whenever the metadata declares one and a rule asks."""
    return sum(isinstance(r, (PRule, NKRule)) for r in ruleset.rules) > 2


def _write_table(t: ArbTable, kind: int, options: str, target: Path, *, file: str, line: int) -> None:
    from tablesafe.io.publication import staged_files

    opts = {"AS": False, "FL": kind == 2, "QU": True, "SE": False}  # tau-ARGUS: names first for type 2
    for m in re.finditer(r"([A-Za-z]{2})\s*([+-])", options):
        key = m.group(1).upper()
        if key not in ("AS", "FL", "QU", "SE", "HL", "SO", "AR", "HI", "TR"):
            raise InputError(f"unknown WRITETABLE option {key}", file=file, line=line)
        opts[key] = m.group(2) == "+"
    r = t.result
    if kind == 6:
        from tablesafe.io.jj import write_jj

        with staged_files({"jj": target}) as tmp:
            write_jj(r.protected_problem(), tmp["jj"], secondary="m")
        return
    if kind not in (1, 2, 3, 5):
        raise InputError(f"WRITETABLE output type {kind} is not supported (use 1, 2, 3, 5 or 6)", file=file, line=line)
    codes = r.problem.codes.astype(str)
    dims = list(codes.columns)
    status = r.status
    value = r.problem.value
    withheld = r.withheld
    q = (lambda s: f'"{s}"') if opts["QU"] else (lambda s: str(s))
    lines = []
    if opts["FL"]:
        head = [q(d) for d in dims] + [q(t.response)]
        if opts["AS"] or kind == 5:
            head.append(q("Status"))
        lines.append(",".join(head))
    rule = np.asarray(r.problem.rule if r.problem.rule is not None else [""] * r.problem.n, dtype=object).astype(str)
    for i in range(r.problem.n):
        if opts["SE"] and status[i] == "Z":
            continue
        fields = [q(c) for c in codes.iloc[i]]
        if status[i] == "Z":
            v = "-"
        elif withheld[i] and not (opts["AS"] or kind == 5):
            v = "x"
        else:
            v = f"{value[i]:.10g}"
        fields.append(v)
        if kind == 5:
            fields.append(status[i])
        elif opts["AS"]:
            code = TAU_STATUS[status[i]]
            if status[i] == "U" and rule[i].startswith("freq"):
                code = 5
            elif status[i] == "U" and rule[i].startswith("zero"):
                code = 6
            fields.append(str(code))
        lines.append(",".join(fields))
    with staged_files({"t": target}) as tmp:
        tmp["t"].write_text("\n".join(lines) + "\n", encoding="utf-8")


def read_code_value(path: str | Path) -> pd.DataFrame:
    """Read a code-value table with a header line (as ``WRITETABLE (n, 3, AS+FL+, ...)``
    writes it, by tau-ARGUS or by tablesafe)."""
    return pd.read_csv(path, dtype={0: str, 1: str}, keep_default_na=False)
