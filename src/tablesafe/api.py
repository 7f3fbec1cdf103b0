"""The one-call Python API: :func:`protect` runs tabulate -> assess -> suppress -> audit and
returns a :class:`ProtectResult` with the analyst cell table, the publication, the audit,
information-loss figures and run times, ready to :meth:`~ProtectResult.write` or
:meth:`~ProtectResult.report`.

Each stage is also public on its own (``tablesafe.tabulate``, ``tablesafe.assess``,
``tablesafe.suppress``, ``tablesafe.audit``); :func:`protect` only chains them, applies a
priori files and builds the outputs. It never decides a status itself: statuses come from
the rules (``assess``), from the user (manual statuses, a priori files) and from the
suppression method.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from tablesafe.celltable import CellTable
from tablesafe.errors import AuditFailure, InputError, RuleError, TablesafeError
from tablesafe.problem import EMPTY, MANUAL, PROTECTED, SAFE, SECONDARY, SENSITIVE, Pattern, Problem

METHODS = ("auto", "optimal", "modular", "fast", "none")
TABLE_DATA_SUFFIXES = (".csv", ".parquet", ".pq", ".txt", ".asc")


# =============================================================================== result
@dataclass(repr=False)
class ProtectResult:
    """Everything a protection run produced.

    Attributes:
        problem: the assessed problem (statuses before suppression, levels, bounds).
        pattern: the withheld cells chosen by the method (primaries included).
        audit: the audit of the pattern (arrays ``lower``, ``upper``, ``verdict``), or
            None when no audit ran (``method="none"`` without the audit stage).
        response: name of the value column of the publication.
        method: the protection method used.
        params: the run's parameters (rules included: confidential, analyst use only).
        timings: seconds per stage.
        marker: text written for withheld cells in the publication (None: empty).
        empty_marker: text written for empty cells (None: 0).
    """

    problem: Problem
    pattern: Pattern
    audit: Any | None
    response: str = "value"
    method: str = "auto"
    params: dict = field(default_factory=dict)
    timings: dict[str, float] = field(default_factory=dict)
    marker: str | None = None
    empty_marker: str | None = None

    # ------------------------------------------------------------------ views
    @property
    def withheld(self) -> np.ndarray:
        """Boolean mask of withheld cells (primary and secondary)."""
        return np.asarray(self.pattern.withheld, dtype=bool)

    @cached_property
    def status(self) -> np.ndarray:
        """Final statuses: the problem's, with complements marked ``M``."""
        return self.pattern.statuses(self.problem)

    @cached_property
    def cells(self) -> pd.DataFrame:
        """The analyst table (confidential): codes, value, contributors, status, rule,
        protection levels, audit interval and verdict."""
        from tablesafe.io.analyst import analyst_frame

        return analyst_frame(self.problem, self.status, self.audit)

    @cached_property
    def publication(self) -> pd.DataFrame:
        """The publication table: codes then the response column, withheld cells empty."""
        from tablesafe.io.analyst import codes_of
        from tablesafe.io.publication import publication_frame

        return publication_frame(
            codes_of(self.problem),
            self.problem.value,
            self.withheld,
            self.response,
            empty=self.problem.status == EMPTY,
            marker=self.marker,
            empty_marker=self.empty_marker,
        )

    @property
    def certificates(self) -> pd.DataFrame | None:
        """Protection certificates of the pattern (None when not requested)."""
        return self.pattern.certificates

    @property
    def ok(self) -> bool:
        """True when an audit ran and every sensitive cell is protected against the
        default attacker (insider findings are reported by :meth:`summary`)."""
        return self.audit is not None and verdicts_ok(self.audit)

    @cached_property
    def counts(self) -> dict[str, int]:
        """Number of cells per final status letter (S U A P M Z)."""
        letters, n = np.unique(self.status, return_counts=True)
        out = {s: 0 for s in (SAFE, "U", MANUAL, PROTECTED, SECONDARY, EMPTY)}
        out.update({str(a): int(b) for a, b in zip(letters, n)})
        return out

    @cached_property
    def information_loss(self) -> pd.DataFrame:
        """Withheld cells and value, overall and per level of each dimension.

        Columns: ``scope`` (``all`` or a dimension name), ``level`` (hierarchy depth, 0 for
        the total; -1 for the overall row), ``cells``, ``withheld``, ``primary``,
        ``secondary``, ``value`` (sum of absolute values), ``withheld_value``,
        ``secondary_value``, ``withheld_pct`` and ``withheld_value_pct``.
        """
        return information_loss(self.problem, self.withheld)

    # ---------------------------------------------------------------- summary
    def __repr__(self) -> str:
        first = self.summary().splitlines()
        return f"<ProtectResult method={self.method!r}: {first[0]}; {first[2] if len(first) > 2 else ''}>"

    def summary(self) -> str:
        """A few lines for the terminal: cells per status, information loss, audit, time.

        Names no rule parameter, but does count primary and secondary cells: for the
        analyst, not for the public.
        """
        c = self.counts
        loss = self.information_loss.iloc[0]
        lines = [
            (
                f"{self.problem.n} cells: {c['S']} safe, {c['U'] + c['A']} primary, {c['M']} secondary, "
                f"{c['P']} protected, {c['Z']} empty"
            ),
            (
                f"withheld {int(loss['withheld'])} cells ({loss['withheld_pct']:.1f}%), "
                f"value {loss['withheld_value']:,.2f} ({loss['withheld_value_pct']:.2f}% of the sum of all cell values, totals included)"
            ),
        ]
        if self.audit is not None:
            lines.append("audit: " + _audit_line(self.audit))
        elif self.method == "none":
            lines.append("audit: not run (method none: primary suppression only, no safety claim)")
        total = sum(self.timings.values())
        lines.append(
            f"time {total:.2f} s ("
            + ", ".join(f"{k} {v:.2f}" for k, v in self.timings.items())
            + ")"
        )
        return "\n".join(lines)

    # ------------------------------------------------------------------ files
    def write(
        self,
        out: str | Path | None = None,
        cells: str | Path | None = None,
        report: str | Path | None = None,
        certificates: str | Path | None = None,
        jj: str | Path | None = None,
        apriori: str | Path | None = None,
    ) -> None:
        """Write the requested files, all or nothing.

        Args:
            out: publication file (``.csv``, ``.parquet`` or ``.xlsx``).
            cells: analyst file (same formats).
            report: HTML report.
            certificates: Parquet file of protection certificates (columns ``target``,
                ``direction``, ``cell``, ``value``).
            jj: the protected problem as a JJ file (complements marked).
            apriori: the pattern as a tau-ARGUS a priori file (:meth:`apriori_frame`).

        Every file is first written under a temporary name beside its target; only when
        all are complete are they renamed into place. On any error no target is touched.
        """
        from tablesafe.io.publication import staged_files, write_frame_to

        if certificates is not None and self.certificates is None:
            raise InputError(
                "no certificates to write: run with certificates=True (--certificates) and a "
                "suppression method that produces them"
            )
        t0 = time.perf_counter()
        targets = {"out": out, "cells": cells, "report": report, "certificates": certificates, "jj": jj,
                   "apriori": apriori}
        with staged_files(targets) as tmp:
            if "out" in tmp:
                write_frame_to(self.publication, tmp["out"], out, sheet="publication")
            if "cells" in tmp:
                write_frame_to(self.cells, tmp["cells"], cells, sheet="cells")
            if "certificates" in tmp:
                self.certificates.to_parquet(tmp["certificates"], index=False)
            if "jj" in tmp:
                from tablesafe.io.jj import write_jj

                write_jj(self.protected_problem(), tmp["jj"], secondary="m")
            if "apriori" in tmp:
                from tablesafe.io.hst import hst_text

                tmp["apriori"].write_text(hst_text(self.apriori_frame(), list(self.problem.codes.columns)), encoding="utf-8")
            if "report" in tmp:
                from tablesafe.report import render_report

                tmp["report"].write_text(render_report(self), encoding="utf-8")
        self.timings["write"] = self.timings.get("write", 0.0) + time.perf_counter() - t0

    def report(self, path: str | Path) -> None:
        """Write the self-contained HTML report to ``path``."""
        self.write(report=path)

    def apriori_frame(self, *, safe: str = "p", withheld: str = "u") -> pd.DataFrame:
        """The pattern as tau-ARGUS a priori requests (see :mod:`tablesafe.io.hst`), so a
        later run (of this or a linked table) keeps it: withheld cells (primary and
        secondary) get ``withheld`` (default ``u``), published non-empty cells ``safe``
        (default ``p``: must stay published); empty cells are left out."""
        if self.problem.codes is None:
            raise InputError("a priori files name cells by their codes; this table has none")
        keep = self.problem.status != EMPTY
        frame = self.problem.codes.loc[keep].reset_index(drop=True).astype(str)
        kind = np.where(self.withheld[keep], withheld, safe)
        return frame.assign(kind=kind, a=np.nan, b=np.nan)

    def protected_problem(self) -> Problem:
        """The problem with the final statuses (complements as ``M``)."""
        return self.problem.copy(status=self.status.copy())


def check_run_options(method: str, time_limit: float | None, insider: str = "warn") -> None:
    """Refuse bad run options before any work starts (:func:`protect`, :func:`protect_problem`).

    Raises:
        InputError: an unknown method or insider mode, or a time limit that is not a
            positive number of seconds.
    """
    if method not in METHODS:
        raise InputError(f"unknown method {method!r}; choose one of {', '.join(METHODS)}")
    if insider not in ("warn", "fail", "off"):
        raise InputError(f"insider must be warn, fail or off, not {insider!r}")
    if time_limit is not None:
        try:
            seconds = float(time_limit)
        except (TypeError, ValueError):
            raise InputError(f"the time limit must be a number of seconds, got {time_limit!r}") from None
        if not seconds > 0:
            raise InputError(
                f"the time limit must be a positive number of seconds, got {time_limit!r} "
                "(--time-limit, Python: time_limit=...); leave it out for no limit"
            )


def verdicts_ok(audit: Any, insider: bool = False) -> bool:
    """True when every sensitive cell's verdict is ``protected`` (and, with ``insider``,
    there is no insider or union finding)."""
    verdict = np.asarray(audit.verdict, dtype=object).astype(str)
    ok = bool(((verdict == "") | (verdict == "protected")).all())
    if insider:
        ok = ok and not _findings(audit)
    return ok


def _audit_line(audit: Any) -> str:
    verdict = np.asarray(audit.verdict, dtype=object).astype(str)
    sens = verdict != ""
    bad = sens & (verdict != "protected")
    if not bad.any():
        extra = _findings(audit)
        if extra:
            return f"every sensitive cell protected against outsiders ({int(sens.sum())} checked), but" + extra[1:]
        return f"every sensitive cell protected ({int(sens.sum())} checked)"
    kinds, n = np.unique(verdict[bad], return_counts=True)
    return f"{int(bad.sum())} of {int(sens.sum())} sensitive cells NOT protected (" + ", ".join(
        f"{b} {a}" for a, b in zip(kinds, n)
    ) + ")" + _findings(audit)


def _findings(audit: Any) -> str:
    """Insider and union findings of an audit, in words (empty when none)."""
    out = []
    ins = getattr(audit, "insider_findings", None)
    if ins is not None and len(ins):
        cells = ins["target"].nunique() if hasattr(ins, "columns") and "target" in ins.columns else len(ins)
        out.append(f"{len(ins)} insider finding(s) on {cells} cell(s): a single contributor of a withheld "
                   "cell could narrow down a sensitive cell")
    uni = getattr(audit, "union_findings", None)
    if uni is not None and len(uni):
        out.append(f"{len(uni)} sensitive union(s) of withheld cells are implicitly published")
    return ("; " + "; ".join(out)) if out else ""


def cell_keys(frame: pd.DataFrame, dims: Sequence[str]) -> np.ndarray:
    """One text key per row: the codes of ``dims`` joined by a separator (column-wise,
    fast for millions of cells)."""
    cols = [frame[d].astype(str) for d in dims]
    if len(cols) == 1:
        return cols[0].to_numpy(dtype=object)
    return cols[0].str.cat(cols[1:], sep="\x1f").to_numpy(dtype=object)


def information_loss(problem: Problem, withheld: np.ndarray) -> pd.DataFrame:
    """Withheld cells and value, overall and per hierarchy level of each dimension."""
    withheld = np.asarray(withheld, dtype=bool)
    sens = problem.sensitive
    absval = np.abs(np.asarray(problem.value, dtype=float))
    rows = []

    def row(scope: str, level: int, mask: np.ndarray) -> None:
        w = withheld & mask
        total = float(absval[mask].sum())
        wv = float(absval[w].sum())
        rows.append(
            {
                "scope": scope,
                "level": level,
                "cells": int(mask.sum()),
                "withheld": int(w.sum()),
                "primary": int((w & sens).sum()),
                "secondary": int((w & ~sens).sum()),
                "value": total,
                "withheld_value": wv,
                "secondary_value": float(absval[w & ~sens].sum()),
                "withheld_pct": 100.0 * w.sum() / max(mask.sum(), 1),
                "withheld_value_pct": 100.0 * wv / total if total > 0 else 0.0,
            }
        )

    row("all", -1, np.ones(problem.n, dtype=bool))
    model = problem.model
    if model is not None and problem.codes is not None:
        for dim in model.dims:
            h = dim.hierarchy
            pos = pd.Categorical(problem.codes[dim.name].astype(str), categories=list(h.codes)).codes
            col = np.where(pos >= 0, np.asarray(h.depths)[pos], -1)
            for level in np.unique(col[col >= 0]):
                row(dim.name, int(level), col == level)
    return pd.DataFrame(rows)


# ============================================================================ protect
@contextmanager
def _stage(timings: dict[str, float], name: str) -> Iterator[None]:
    t0 = time.perf_counter()
    try:
        yield
    finally:
        timings[name] = timings.get(name, 0.0) + time.perf_counter() - t0


def _stage_function(module: str, name: str, what: str):
    """Import a stage function, with a clear error when that stage is missing."""
    import importlib

    try:
        mod = importlib.import_module(module)
        return getattr(mod, name)
    except (ImportError, AttributeError):
        raise TablesafeError(
            f"the {what} stage ({module}.{name}) is not available in this installation of tablesafe"
        ) from None


def dim_specs(dims: Any, total: str = "Total") -> list:
    """Normalise dimension arguments to ``tablesafe.tabulate.DimSpec`` objects.

    Accepts a list of names, ``"name=hierarchy"`` strings (hierarchy: a ``.hrc`` file, a
    parent-child CSV, ``lengths:1,2`` or ``digits:3,1,1``), ``(name, hierarchy)`` pairs,
    ``DimSpec`` objects, or a mapping ``{name: hierarchy}``.
    """
    DimSpec = _stage_function("tablesafe.tabulate", "DimSpec", "tabulation")
    if dims is None:
        raise InputError("no dimensions given: name at least one explanatory variable (--dim)")
    if isinstance(dims, (str, DimSpec)):
        dims = [dims]
    if isinstance(dims, Mapping):
        dims = list(dims.items())
    out = []
    for d in dims:
        if isinstance(d, DimSpec):
            out.append(d)
        elif isinstance(d, str):
            name, _, hier = d.partition("=")
            name = name.strip()
            if not name:
                raise InputError(f"empty dimension name in {d!r}")
            out.append(DimSpec(name, hier.strip() or None, total=total))
        elif isinstance(d, Sequence) and len(d) == 2:
            name, hier = d
            out.append(DimSpec(str(name), hier, total=total))
        else:
            raise InputError(f"cannot understand the dimension {d!r}")
    return out


def apply_apriori(
    problem: Problem,
    apriori: pd.DataFrame | str | Path,
    *,
    manual_range: float = 10.0,
    ignore_errors: bool = False,
    sep: str | None = None,
) -> Problem:
    """Apply a priori requests (a tau-ARGUS ``.hst`` file or its frame) to a problem.

    ``u`` makes a cell primary by hand (status A) with protection levels of
    ``manual_range`` percent of its value unless it has levels already; ``m`` makes it
    withheld by hand with no required width beyond not being exact; ``p`` protects a cell
    (must be published); ``s`` makes it safe; ``c`` sets the cost; ``pl`` the lower and
    upper protection levels; ``ab`` the a priori bounds. Empty cells cannot be withheld.
    """
    if problem.codes is None:
        raise InputError("a priori files name cells by their codes; this problem has none")
    dims = list(problem.codes.columns)
    totals = [d.total for d in problem.model.dims] if problem.model is not None else None
    if not isinstance(apriori, pd.DataFrame):
        from tablesafe.io.hst import read_hst

        src = str(apriori)
        apriori = read_hst(apriori, dims, totals, sep=sep)
    else:
        src = "<frame>"
    index = {k: i for i, k in enumerate(cell_keys(problem.codes, dims))}
    status = problem.status.copy()
    cost = problem.cost.copy()
    lower, upper = problem.lower.copy(), problem.upper.copy()
    lpl, upl, spl = problem.lpl.copy(), problem.upl.copy(), problem.spl.copy()
    rule = np.asarray(problem.rule if problem.rule is not None else [""] * problem.n, dtype=object).copy()
    for r in apriori.itertuples(index=False):
        d = r._asdict()
        key = "\x1f".join(str(d[c]) for c in dims)
        i = index.get(key)
        line = int(d["line"]) if "line" in d and d["line"] == d["line"] else None
        if i is None:
            if ignore_errors:
                continue
            raise InputError(
                "the a priori file names a cell that is not in the table",
                file=src,
                line=line,
                code=" x ".join(str(d[c]) for c in dims),
            )
        kind = d["kind"]
        if kind in ("u", "m"):
            if status[i] == EMPTY:
                if ignore_errors:
                    continue
                raise InputError("an empty cell cannot be withheld", file=src, line=line, code=problem.names[i])
            if status[i] not in SENSITIVE:
                status[i] = MANUAL
                rule[i] = "apriori"
                if kind == "u" and upl[i] <= 0 and lpl[i] <= 0:
                    upl[i] = lpl[i] = abs(problem.value[i]) * manual_range / 100.0
        elif kind == "p":
            status[i] = PROTECTED if status[i] != EMPTY else EMPTY
            upl[i] = lpl[i] = spl[i] = 0.0
        elif kind == "s":
            if status[i] != EMPTY:
                status[i] = SAFE
                upl[i] = lpl[i] = spl[i] = 0.0
        elif kind == "c":
            cost[i] = float(d["a"])
        elif kind == "pl":
            lpl[i], upl[i] = float(d["a"]), float(d["b"])
        elif kind == "ab":
            lower[i], upper[i] = float(d["a"]), float(d["b"])
    return problem.copy(status=status, cost=cost, lower=lower, upper=upper, lpl=lpl, upl=upl, spl=spl, rule=rule)


def given_statuses(cells: CellTable) -> pd.DataFrame | None:
    """Manual statuses from a tabular input's status column: unsafe (U, A) -> A, protected
    (P) -> P; None when the input gave no such cells."""
    status = cells.extra.get("status") if cells.extra else None
    if status is None:
        return None
    st = np.asarray(status, dtype=object).astype(str)
    given = np.isin(st, ["U", "A", "P"])
    if not given.any():
        return None
    codes = cells.model.codes.loc[given].reset_index(drop=True).astype(str)
    return codes.assign(status=np.where(st[given] == "P", "P", "A"))


def rules_need_top(rules: Sequence[str] | str | None) -> int:
    """How many of the largest contributions per cell the rules need (0 if unknown)."""
    if not rules:
        return 0
    try:
        from tablesafe.rules import parse_rules

        return max((int(getattr(r, "needs_top", 0) or 0) for r in parse_rules(list(rules) if not isinstance(rules, str) else rules)), default=0)
    except ImportError:
        return 0


def _read_manual(path: str | Path) -> pd.DataFrame:
    """Manual statuses from a CSV file: the dimension codes (or ``name``), ``status``
    (A sensitive by hand, P protected) and optionally ``margin`` (percent).

    The file is checked here (status column and letters, numeric margins), each error
    naming the file and line; its name is kept in ``frame.attrs["file"]`` so that the
    rules stage can name it for cells the table does not have.
    """
    from tablesafe.io.frames import check_input_file

    name = str(path)
    check_input_file(path, "manual status file")
    try:
        frame = pd.read_csv(path, dtype=str, keep_default_na=False)
    except (ValueError, OSError) as exc:
        raise InputError(f"cannot read manual statuses: {exc}", file=name) from None
    if "status" not in frame.columns:
        raise InputError("manual statuses need a 'status' column (A = sensitive by hand, P = protected)", file=name)
    st = frame["status"].astype(str).str.strip().str.upper()
    bad = np.flatnonzero(~st.isin(["A", "U", "P"]).to_numpy())
    if len(bad):
        raise InputError("manual status must be A (sensitive by hand) or P (protected)", file=name,
                         line=int(bad[0]) + 2, column="status", code=str(frame["status"].iloc[bad[0]]))
    if "margin" in frame.columns:
        margin = pd.to_numeric(frame["margin"].replace("", None), errors="coerce")
        bad = np.flatnonzero((margin.isna() & (frame["margin"].str.strip() != "")).to_numpy())
        if len(bad):
            raise InputError("non-numeric margin", file=name, line=int(bad[0]) + 2, column="margin",
                             code=str(frame["margin"].iloc[bad[0]]))
        frame["margin"] = margin.astype(float)
    frame.attrs["file"] = name
    return frame


def _load_data(data: Any, metadata: str | Path | None) -> Any:
    """Pass frames through (polars/pyarrow as they are); check paths; read JJ and .asc."""
    if isinstance(data, (str, Path)):
        from tablesafe.io.frames import check_input_file

        path = check_input_file(data)
        if path.suffix.lower() == ".jj":
            from tablesafe.io.jj import read_jj

            return read_jj(path)
        if path.suffix.lower() == ".asc" or metadata is not None:
            if metadata is None:
                raise InputError(
                    "a tau-ARGUS .asc file needs its metadata: give the .rda file (--metadata)", file=str(path)
                )
            read_asc = _stage_function("tablesafe.io.tauargus", "read_asc", "tau-ARGUS microdata reader")
            return read_asc(path, metadata)
        return str(path)
    return data


def _read_inputs(data: Any, manual: Any, *, tabular: bool, metadata: str | Path | None, jj_offsets: bool,
                 require_additive: bool) -> tuple[Any, Any]:
    """The read stage of :func:`prepare_problem`: data and manual statuses, checked.

    A problem (read from JJ or given) gets its offsets as right-hand sides with
    ``jj_offsets`` (for rounded values that do not add up exactly), or else must satisfy
    its relations when ``require_additive``. (``encoding``, the text encoding of a CSV
    data file, default utf-8, is passed to the tabulation.)
    """
    if not tabular:
        data = _load_data(data, metadata)
    elif isinstance(data, (str, Path)):
        from tablesafe.io.frames import check_input_file

        check_input_file(data)
    if isinstance(manual, (str, Path)):
        manual = _read_manual(manual)
    if isinstance(data, Problem):
        from tablesafe.io.jj import check_additive, with_offsets

        if jj_offsets:
            data = with_offsets(data)
        elif require_additive:
            check_additive(data)
    return data, manual


def prepare_problem(
    data: Any,
    dims: Any = None,
    response: str | None = None,
    rules: str | Sequence[str] | None = None,
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
    """Tabulate and assess (the first half of :func:`protect`).

    Returns the assessed problem (a priori file applied), the response name and the run
    parameters. Arguments as for :func:`protect`, plus tabular input: with
    ``tabular=True`` the data holds cells, not records (a CSV or frame with the codes and
    the value, or a tau-ARGUS ``.tab`` with its ``metadata``), read by
    ``tablesafe.tabulate.from_tabular`` with the optional ``frequency`` (contributors),
    ``top`` (largest contributions) and ``given_status`` columns; ``recompute_totals``
    replaces given totals by the sums of their parts instead of refusing non-additive
    input. Cells the input marks unsafe (U) or protected (P) become manual statuses.
    ``encoding``, ``jj_offsets`` and ``require_additive``: see :func:`_read_inputs`.
    """
    timings = {} if timings is None else timings
    params: dict[str, Any] = {
        "rules": [rules] if isinstance(rules, str) else list(rules or []),
        "cost": cost,
        "cost_lambda": cost_lambda,
        "holding": holding,
        "weight": weight,
        "weight_mode": weight_mode,
        "waiver": waiver,
        "request": request,
        "total": total,
        "apriori": str(apriori) if isinstance(apriori, (str, Path)) else (None if apriori is None else "<frame>"),
        "manual_range": manual_range if apriori is not None else None,
    }
    with _stage(timings, "read"):
        data, manual = _read_inputs(data, manual, tabular=tabular, metadata=metadata, jj_offsets=jj_offsets,
                                    require_additive=require_additive)
    if isinstance(data, Problem):
        problem = data
        resp = response or str(problem.meta.get("response", "value"))
    else:
        if isinstance(data, CellTable):
            cells = data
        elif tabular:
            from_tabular = _stage_function("tablesafe.tabulate", "from_tabular", "tabular input")
            src = data
            if metadata is not None:
                read_tab = _stage_function("tablesafe.io.tauargus", "read_tab", "tau-ARGUS table reader")
                src = read_tab(data, metadata)
                dims = dims or None
            specs = dim_specs(dims, total) if dims else None
            with _stage(timings, "tabulate"):
                cells = from_tabular(
                    src, specs, response, frequency=frequency, top=list(top) if top else None,
                    status=given_status, recompute_totals=recompute_totals, missing_code=missing_code,
                    top_k=max(top_k, rules_need_top(params["rules"])), encoding=encoding,
                )
            if "frequency" not in cells.extra and params["rules"]:
                from tablesafe.rules import parse_rules
                from tablesafe.rules.model import FreqRule

                if any(isinstance(r, FreqRule) for r in parse_rules(list(params["rules"]))):
                    raise RuleError(
                        "a frequency rule on tabular input needs the number of contributors per "
                        "cell: name the column with --frequency (Python: frequency=...); without "
                        "it every given cell would count as one contributor"
                    )
            given = given_statuses(cells)
            if given is not None:
                manual = given if manual is None else pd.concat([manual, given], ignore_index=True)
                if not params["rules"]:
                    params["rules"] = [f"man({manual_range:g})"]
        else:
            if response is None:
                raise InputError("no response variable given (--response)")
            tabulate = _stage_function("tablesafe.tabulate", "tabulate", "tabulation")
            specs = dim_specs(dims, total)
            params["dims"] = [f"{s.name}={s.hierarchy}" if s.hierarchy is not None else s.name for s in specs]
            top_k = max(top_k, rules_need_top(params["rules"]))
            extra = None
            if isinstance(cost, str) and cost not in ("value", "unity", "freq", "contributors"):
                extra = [cost]  # a cost variable is summed per cell like the response
            with _stage(timings, "tabulate"):
                cells = tabulate(
                    data,
                    specs,
                    response,
                    extra=extra,
                    tables=tables,
                    holding=holding,
                    weight=weight,
                    waiver=waiver,
                    request=request,
                    top_k=top_k,
                    missing_code=missing_code,
                    progress=progress,
                    encoding=encoding,
                )
        resp = response or cells.response
        if not params["rules"]:
            raise InputError("no sensitivity rule given (--rule), e.g. p(15) or freq(3)")
        assess = _stage_function("tablesafe.rules", "assess", "rules")
        with _stage(timings, "assess"):
            kwargs: dict[str, Any] = {"weight_mode": weight_mode, "manual": manual, "bounds": bounds, "cost": cost}
            if cost_lambda != 1.0:
                kwargs["cost_lambda"] = cost_lambda
            if count != "holdings":
                kwargs["count"] = count
            if zero_unsafe is not None:
                kwargs["zero_unsafe"] = zero_unsafe
            if not symmetric:
                kwargs["symmetric"] = symmetric
            if negative is not None:
                kwargs["negative"] = negative
            problem = assess(cells, params["rules"], **kwargs)
    if apriori is not None:
        with _stage(timings, "apriori"):
            problem = apply_apriori(problem, apriori, manual_range=manual_range)
    return problem, resp, params


def protect(
    data: Any,
    dims: Any = None,
    response: str | None = None,
    rules: str | Sequence[str] | None = None,
    *,
    holding: str | None = None,
    weight: str | None = None,
    weight_mode: str | None = None,
    waiver: str | None = None,
    request: str | None = None,
    method: str = "auto",
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
    progress: bool = False,
    seed: int = 0,
    marker: str | None = None,
    empty_marker: str | None = None,
    run_audit: bool = True,
    insider: str = "fail",
) -> ProtectResult:
    """Protect a table: tabulate, find sensitive cells, suppress, audit.

    Args:
        data: microdata (pandas, polars or pyarrow frame, or a CSV/Parquet path, or a
            tau-ARGUS ``.asc`` path with ``metadata``), an already tabulated
            :class:`~tablesafe.CellTable`, an assessed :class:`~tablesafe.Problem`, or a
            ``.jj`` file (then dims, response and rules are not needed).
        dims: explanatory variables: names, ``"name=hierarchy"`` strings, ``(name,
            hierarchy)`` pairs or ``DimSpec`` objects (see :func:`dim_specs`).
        response: the variable summed in the cells.
        rules: rule strings such as ``"p(15)"``, ``"freq(3)"``, ``"nk(2, 80)"``, or
            tau-ARGUS strings such as ``"P(15,1)|FREQ(3,10)"``.
        holding: unit variable (enterprise group) whose contributions are summed before
            any rule; the frequency rule then counts holdings (``count="records"`` counts
            records).
        weight, weight_mode: sampling weight variable and how the rules use it
            (``expand``, ``sample``, ``known``).
        waiver, request: per-record flags: waived protection / asked for protection.
        method: ``optimal``, ``modular``, ``fast`` or ``none`` (primary suppression only;
            no safety claim).
        cost: cost of withholding a cell: ``value``, ``unity``, ``freq`` or a variable
            (summed per cell); ``cost_lambda`` transforms it (cost ** lambda, log for 0).
        total: total code of every dimension.
        tables: linked tables, each a list of dimension names (default: one table).
        metadata: the ``.rda`` file of a tau-ARGUS ``.asc`` data file.
        apriori: a tau-ARGUS ``.hst`` file (or the frame
            :func:`tablesafe.io.hst.read_hst` returns): statuses, costs, protection levels
            or bounds per cell; cells it marks unsafe get ``manual_range`` percent.
        manual: statuses set by hand (frame or CSV path: codes or ``name``, ``status`` A
            or P, optional ``margin``).
        bounds, zero_unsafe, symmetric: a priori bounds, zero-cell rule and symmetric
            levels, passed to the rules stage (``tablesafe.rules.assess``).
        top_k: number of largest contributions kept per cell.
        missing_code: map codes unknown to a hierarchy to this code instead of failing.
        tabular, frequency, top, given_status, recompute_totals: the data holds cells, not
            records (see :func:`prepare_problem`).
        encoding: text encoding of a CSV data file (default ``utf-8``; e.g. ``latin-1``).
        jj_offsets: for a ``.jj`` file whose rounded values do not add up exactly: take
            each relation's offset as its right-hand side (``--jj-offsets``).
        time_limit: seconds for the suppression method (positive; None for no limit).
        certificates: ask the method for protection certificates (checked here).
        progress: show progress bars.
        seed: seed for randomised steps (same seed, same result).
        marker, empty_marker: publication text for withheld and empty cells.
        run_audit: with ``method="none"``, still audit (shows how exposed the primaries
            are); a suppression method is always audited.
        insider: what insider findings of the audit do: ``fail`` (default), ``warn`` or
            ``off`` (see :func:`protect_problem`).

    Returns:
        A :class:`ProtectResult`.

    Raises:
        TablesafeError: any bad input or failed stage, with a one-paragraph message.
    """
    check_run_options(method, time_limit, insider)
    timings: dict[str, float] = {}
    problem, resp, params = prepare_problem(
        data, dims, response, rules,
        holding=holding, weight=weight, weight_mode=weight_mode, waiver=waiver, request=request,
        cost=cost, cost_lambda=cost_lambda, total=total, tables=tables, metadata=metadata,
        apriori=apriori, manual=manual, manual_range=manual_range, bounds=bounds, count=count,
        zero_unsafe=zero_unsafe, symmetric=symmetric, top_k=top_k, missing_code=missing_code,
        negative=negative,
        tabular=tabular, frequency=frequency, top=top, given_status=given_status,
        recompute_totals=recompute_totals, encoding=encoding, jj_offsets=jj_offsets,
        require_additive=method != "none", progress=progress, timings=timings,
    )
    params["method"] = method
    params["time_limit"] = time_limit
    return protect_problem(
        problem,
        method=method,
        response=resp,
        time_limit=time_limit,
        certificates=certificates,
        progress=progress,
        seed=seed,
        marker=marker,
        empty_marker=empty_marker,
        run_audit=run_audit,
        insider=insider,
        params=params,
        timings=timings,
    )


def audit_publication(
    problem: Problem,
    publication: pd.DataFrame,
    *,
    response: str = "value",
    certificates: pd.DataFrame | None = None,
    params: dict | None = None,
    timings: dict[str, float] | None = None,
) -> ProtectResult:
    """Audit a given publication against the confidential table.

    Args:
        problem: the assessed problem (from the data and rules).
        publication: frame from :func:`tablesafe.io.publication.read_publication` (codes
            per dimension, ``value``, ``withheld``).
        certificates: optional certificates to check against the pattern.

    Returns:
        A result whose ``audit`` holds the verdicts; ``result.ok`` tells whether every
        sensitive cell is protected.

    Raises:
        InputError: when the publication lacks cells of the table, names cells the table
            does not have, or publishes a value that differs from the data.
    """
    from tablesafe.io.analyst import codes_of

    timings = {} if timings is None else timings
    source = publication.attrs.get("file")  # set by read_publication
    codes = codes_of(problem)  # a single "cell" column for problems without codes (JJ)
    dims = list(codes.columns)
    key_t = cell_keys(codes, dims)
    key_p = cell_keys(publication, dims)
    pos = {k: i for i, k in enumerate(key_t)}
    withheld = np.zeros(problem.n, dtype=bool)
    seen = np.zeros(problem.n, dtype=bool)
    pv = publication["value"].to_numpy(dtype=float)
    pw = publication["withheld"].to_numpy(dtype=bool)
    for r, k in enumerate(key_p):
        i = pos.get(k)
        if i is None:
            raise InputError("the publication has a cell the table does not have", file=source, line=r + 2,
                             code=k.replace("\x1f", " x "))
        seen[i] = True
        withheld[i] = pw[r]
        if not pw[r] and problem.status[i] != EMPTY:
            tol = 1e-6 * max(1.0, abs(problem.value[i]))
            if abs(pv[r] - problem.value[i]) > max(tol, 0.5 if float(pv[r]).is_integer() else tol):
                raise InputError(
                    f"the publication shows {pv[r]:g} for a cell whose value in the data is "
                    f"{problem.value[i]:g}; it was made from other data or other options",
                    file=source,
                    line=r + 2,
                    code=k.replace("\x1f", " x "),
                )
    if not seen.all():
        i = int(np.flatnonzero(~seen)[0])
        raise InputError(
            f"the publication lacks {int((~seen).sum())} cell(s) of the table, e.g. {problem.names[i]}",
            file=source,
        )
    pattern = Pattern(withheld=withheld, method="given", certificates=certificates)
    audit_fn = _stage_function("tablesafe.audit", "audit", "audit")
    with _stage(timings, "audit"):
        result = audit_fn(problem, pattern)
    params = dict(params or {})
    params["method"] = "audit of a given publication"
    if certificates is not None:
        check = _stage_function("tablesafe.audit", "check_certificates", "audit")
        with _stage(timings, "certificates"):
            failures = check(problem, withheld, certificates)
        params["certificate failures"] = len(failures)
    return ProtectResult(problem, pattern, result, response=response, method="given", params=params, timings=timings)


def protect_problem(
    problem: Problem,
    *,
    method: str = "auto",
    response: str = "value",
    time_limit: float | None = None,
    certificates: bool = False,
    progress: bool = False,
    seed: int = 0,
    marker: str | None = None,
    empty_marker: str | None = None,
    run_audit: bool = True,
    insider: str = "fail",
    params: dict | None = None,
    timings: dict[str, float] | None = None,
) -> ProtectResult:
    """Suppress and audit an assessed :class:`~tablesafe.Problem` (e.g. read from JJ).

    With ``method="none"`` only the sensitive cells are withheld (no complements, no
    safety claim); the audit, when available, then shows how exposed they are.

    The gate is the default attacker of DESIGN.md (knows every published cell, the
    relations and the a priori bounds): any sensitive cell whose audit verdict is not
    ``protected`` raises :class:`~tablesafe.AuditFailure`. ``insider`` says what the
    audit's insider findings (a single contributor of a withheld cell narrowing down a
    sensitive cell) do: ``"fail"`` (default: raise like an outsider failure), ``"warn"``
    (reported in the summary, analyst result and report) or ``"off"`` (not checked).
    """
    check_run_options(method, time_limit, insider)
    timings = {} if timings is None else timings
    params = dict(params or {})
    params.setdefault("method", method)
    if method == "none":
        pattern = Pattern(withheld=problem.sensitive.copy(), method="none")
    else:
        suppress = _stage_function("tablesafe.suppress", "suppress", "suppression")
        with _stage(timings, "suppress"):
            pattern = suppress(
                problem,
                method=method,
                time_limit=time_limit,
                certificates=certificates,
                progress=progress,
                seed=seed,
            )
    audit_result = None
    if method != "none" or run_audit:
        try:
            audit_fn = _stage_function("tablesafe.audit", "audit", "audit")
        except TablesafeError:
            if method != "none":
                raise
            audit_fn = None
        if audit_fn is not None:
            with _stage(timings, "audit"):
                try:
                    audit_result = audit_fn(problem, pattern, insider=insider != "off")
                except TablesafeError as exc:
                    if method != "none":
                        raise
                    # primary suppression only: the audit is information, not a gate
                    params["audit"] = f"not possible: {exc}"
            if audit_result is not None and method != "none" and not verdicts_ok(audit_result, insider == "fail"):
                raise AuditFailure(
                    "the suppression pattern failed its audit, so nothing is published: "
                    + _audit_line(audit_result)
                )
    if certificates and pattern.certificates is not None and method != "none":
        check = _stage_function("tablesafe.audit", "check_certificates", "audit")
        with _stage(timings, "certificates"):
            failures = check(problem, pattern.withheld, pattern.certificates)
        if failures:
            raise AuditFailure(
                f"{len(failures)} protection certificate(s) failed their check, e.g. {failures[0]}; "
                "nothing is published"
            )
    return ProtectResult(
        problem=problem,
        pattern=pattern,
        audit=audit_result,
        response=response,
        method=method,
        params=params,
        timings=timings,
        marker=marker,
        empty_marker=empty_marker,
    )
