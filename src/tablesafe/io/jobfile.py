"""Job files (TOML): a whole run, one or several tables, in one file, so a publication can be
reproduced exactly from it. Paths are relative to the job file.

Example::

    # defaults for every table (any table key may appear here)
    data = "enterprises.csv"
    holding = "group"
    rules = ["p(15)", "freq(3)"]
    method = "modular"

    [[table]]
    name = "turnover by industry and region"
    dims = ["industry=industry.csv", "region=region.hrc"]
    response = "turnover"
    out = "demo-output/publication.csv"
    cells = "demo-output/cells.csv"
    report = "demo-output/report.html"

Table keys: ``name``, ``data``, ``metadata``, ``jj``, ``dims``, ``response``, ``rules``,
``holding``, ``weight``, ``weight_mode``, ``waiver``, ``request``, ``method``, ``cost``,
``cost_lambda``, ``total``, ``tables``, ``apriori``, ``manual_range``, ``count``,
``zero_unsafe``, ``top_k``, ``missing_code``, ``time_limit``, ``seed``, ``marker``,
``empty_marker``, ``manual``, ``insider``, tabular input (``tabular``, ``frequency``,
``top``, ``given_status``, ``recompute_totals``), ``encoding`` (of a CSV data file),
``jj_offsets``, ``bounds`` (percent), ``symmetric``, ``negative``, ``run_audit``,
``sliding``, ``freq_levels``, ``manual_margin``, ``missing_codes`` (a table
``{dimension = "code"}`` or ``["dimension=code"]``), ``singleton``, ``capacity``, the
adjustment options ``rounding_base``, ``readd_totals``, ``cta_cost``, ``cta_directions``,
``fix_totals`` (a string or a table ``{dimension = depth}``), and the outputs ``out``, ``cells``,
``report``, ``certificates``, ``write_jj``, ``write_apriori``.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tablesafe.errors import InputError
from tablesafe.methods import check_any_method

PATH_KEYS = ("data", "metadata", "jj", "apriori", "manual", "out", "cells", "report", "certificates", "write_jj",
             "write_apriori")
OUTPUT_KEYS = ("out", "cells", "report", "certificates", "write_jj", "write_apriori", "contributions")
TABLE_KEYS = {
    "name", "data", "metadata", "jj", "dims", "response", "rules", "holding", "weight", "weight_mode",
    "waiver", "request", "method", "cost", "cost_lambda", "total", "tables", "apriori", "manual_range",
    "count", "zero_unsafe", "top_k", "missing_code", "time_limit", "seed", "marker", "empty_marker",
    "manual", "insider", "tabular", "frequency", "top", "given_status", "recompute_totals",
    "encoding", "jj_offsets", "bounds", "symmetric", "negative", "run_audit", "sliding", "freq_levels",
    "manual_margin", "missing_codes", "singleton", "capacity", "rounding_base", "readd_totals", "cta_cost",
    "cta_directions", "fix_totals", "uncertainty", "uncertainty_p", "uncertainty_side", "midpoint_q",
    "knowledge_kx", "knowledge_kx_low", "knowledge_kw", "noise_percent", "noise_spread", "criterion", *OUTPUT_KEYS,
}


@dataclass
class TableJob:
    """One table of a job, with paths resolved."""

    name: str
    options: dict[str, Any]

    @property
    def outputs(self) -> dict[str, str | None]:
        """The output files of this table (keys of :data:`OUTPUT_KEYS`)."""
        return {k: self.options.get(k) for k in OUTPUT_KEYS}


def _resolve_dim(spec: str, base: Path) -> str:
    name, eq, hier = spec.partition("=")
    hier = hier.strip()
    if not eq or not hier or hier.startswith(("lengths:", "digits:")):
        return spec
    p = Path(hier)
    return f"{name.strip()}={p if p.is_absolute() else (base / p)}"


def read_job(path: str | Path) -> list[TableJob]:
    """Read a job file into its tables (defaults merged, paths made absolute).

    Raises:
        InputError: TOML syntax errors (with line), unknown keys, missing required keys.
    """
    path = Path(path)
    name = str(path)
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise InputError("job file not found", file=name) from None
    except tomllib.TOMLDecodeError as exc:
        msg = str(exc)
        line = getattr(exc, "lineno", None)
        raise InputError(f"the job file is not valid TOML: {msg}", file=name, line=line) from None
    base = path.resolve().parent
    tables = raw.pop("table", None)
    defaults = raw
    for key in defaults:
        if key not in TABLE_KEYS:
            raise InputError(f"unknown key {key!r} in the job file", file=name)
    if tables is None:
        tables = [{}] if defaults else []
    if not isinstance(tables, list) or not tables:
        raise InputError("the job file has no table: add a [[table]] section", file=name)
    jobs = []
    seen_outputs: dict[str, str] = {}
    for t_index, t in enumerate(tables, start=1):
        for key in t:
            if key not in TABLE_KEYS:
                raise InputError(f"unknown key {key!r} in table {t_index} of the job file", file=name)
        opts = {**defaults, **t}
        tname = str(opts.pop("name", f"table {t_index}"))
        if "method" in opts:
            check_any_method(opts["method"], file=name)
        for key in PATH_KEYS:
            if key in opts and opts[key] is not None:
                p = Path(str(opts[key]))
                opts[key] = str(p if p.is_absolute() else base / p)
        if "dims" in opts:
            dims = opts["dims"]
            if isinstance(dims, str):
                dims = [dims]
            opts["dims"] = [_resolve_dim(str(d), base) for d in dims]
        if "data" not in opts and "jj" not in opts:
            raise InputError(f"{tname}: no data (give data = \"file.csv\" or jj = \"file.jj\")", file=name)
        if "jj" not in opts:
            for key in ("dims", "response", "rules"):
                if key not in opts:
                    raise InputError(f"{tname}: missing key {key!r}", file=name)
        for key in OUTPUT_KEYS:
            target = opts.get(key)
            if target is not None:
                if target in seen_outputs:
                    raise InputError(
                        f"{tname} writes {target}, which {seen_outputs[target]} writes too", file=name
                    )
                seen_outputs[target] = tname
        jobs.append(TableJob(tname, opts))
    return jobs


def run_job(path: str | Path, *, progress: bool = False) -> list[tuple[TableJob, Any]]:
    """Run every table of a job file and write its outputs.

    All tables are protected before any file is written, so a failing table leaves no
    output of the job behind. Returns ``(table, ProtectResult)`` pairs.
    """
    from tablesafe.api import protect
    from tablesafe.io.publication import check_output_paths

    jobs = read_job(path)
    for job in jobs:  # before any table is protected
        o = job.outputs
        check_output_paths({"out": o["out"], "cells": o["cells"], "report": o["report"],
                            "certificates": o["certificates"], "jj": o["write_jj"], "apriori": o["write_apriori"],
                            "contributions": o["contributions"]})
    results = []
    for job in jobs:
        opts = dict(job.options)
        for key in OUTPUT_KEYS:
            opts.pop(key, None)
        data = opts.pop("jj", None) or opts.pop("data")
        opts.pop("data", None)
        wants_certs = job.options.get("certificates") is not None
        results.append((job, protect(data, progress=progress, certificates=wants_certs, **opts)))
    for job, result in results:
        o = job.outputs
        result.write(out=o["out"], cells=o["cells"], report=o["report"], certificates=o["certificates"],
                     jj=o["write_jj"], apriori=o["write_apriori"], contributions=o["contributions"])
    return results
