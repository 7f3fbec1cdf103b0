"""Run tau-ARGUS (pytauargus) on generated microdata in a subprocess and read its statuses.

Used by benchmarks/compare_tauargus.py. tau-ARGUS's native engine can crash or ignore its
time limit, so :func:`run_tau` runs it in a child process (this file run as a script with
the path of a JSON spec) and stops it after ``timeout`` seconds.

Codes are recoded to zero-padded positions in their hierarchy (tau-ARGUS matches codes as
fixed-width text) and the hierarchies written as ``.hrc`` files with those codes; the
statuses come back under our cell names (codes joined with ``|``).

Holdings. With ``holdings=True`` the holding column is passed as tau-ARGUS's HOLDING
variable and the safety rule is ``P(p,1)|P(p,1)|P(p,1)``: tau-ARGUS applies the first two
P rules to individual contributions and the third and fourth to holding contributions
(pytauargus ``SafetyRuleSet.from_rules``: a P rule in position 3 or 4 with p > 0 switches
``apply_holding`` on). The individual rule cannot be switched off (a P rule with p = 0 is
still a rule), but it adds nothing: a cell sensitive at enterprise level is sensitive at
holding level with at least as high a protection level, since ``x1 <= h1`` and
``x1 + x2 <= h1 + h2`` (the two largest holdings contain at least the two largest
enterprises' values). So tau-ARGUS then marks the primaries of
``tablesafe.synthetic.problem_from_data(syn, use_holdings=True)``. The microdata are
sorted by holding, as tau-ARGUS expects records of one holding to be adjacent.

Linked tables. pytauargus 0.6.0 cannot protect linked tables: ``protect`` writes one
``<SUPPRESS>`` per table (``micro_arb`` is called without ``linked``), and its engine
runs MOD and OPT on one table only (``Engine.suppress`` handles table numbers from 1;
the linked ``MOD(0,...)``/``GH(0,...)`` of tau-ARGUS's batch language are not ported:
"GH/NET/CTA require external executables"). :func:`run_tau` with several tables
therefore protects each table on its own (``tables`` of more than one entry), which is
not a linked protection; compare_tauargus.py says so in its notes.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd

HERE = Path(__file__).resolve().parent
WITHHELD = ("U", "M")  # tau-ARGUS statuses of withheld cells (primary, secondary)


def safety_rule(p: float, holdings: bool) -> str:
    """tau-ARGUS safety rule string for the p% rule (n = 1), at holding level if asked."""
    one = f"P({p:g},1)"
    return "|".join([one] * 3) if holdings else one


def cpu_seconds() -> float:
    """CPU seconds used so far by this process and its finished children (the box is
    shared: on a loaded machine wall seconds say more about the load than the method)."""
    me = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def tau_worker(spec_file: str) -> None:
    """Subprocess entry: run ``pytauargus.protect`` and write each table's statuses."""
    import pytauargus

    spec = json.loads(Path(spec_file).read_text())
    os.chdir(spec["workdir"])  # HiTaS (MOD) writes into the working directory
    df = pd.read_parquet(spec["data"])
    t0 = time.perf_counter()
    res = pytauargus.protect(
        df, tables=spec["tables"], response=spec["response"], safety_rules=spec["rules"],
        suppress=spec["suppress"], hrc=spec["hrc"], hierleadstring="@", totcode="Total",
        holding_var=spec["holding"], workdir=spec["workdir"],
    )
    secs = time.perf_counter() - t0
    for i, table in enumerate(res.tables):
        table.dataframe().to_parquet(f"{spec['out']}.{i}")
    # this process's own CPU seconds (with its children): the parent's RUSAGE_CHILDREN
    # mixes runs when several run at once (compare_tauargus.py --tau-jobs)
    Path(spec["out"] + ".json").write_text(json.dumps({"seconds": secs, "tables": len(res.tables),
                                                       "cpu": cpu_seconds()}))


def run_tau(syn, suppress: str, timeout: float, *, p: float = 15.0, holdings: bool = False,
            tables: list[list[str]] | None = None) -> dict:
    """Run tau-ARGUS on ``syn`` (a ``SyntheticData``) in a subprocess.

    Args:
        syn: the microdata and hierarchies.
        suppress: tau-ARGUS suppression spec, e.g. ``MOD(1,3,1,1,0)`` or ``OPT(1,3)``.
        timeout: seconds after which the subprocess is stopped.
        p: the p of the p% rule (n = 1).
        holdings: apply the rule to holding contributions (see the module docstring).
        tables: the tables (dimension names each); default one table over all dimensions.

    Returns:
        ``{"status": {cell name: status}, "levels": {cell name: (lower, upper)}, "values":
        {cell name: published value}, "seconds", "cpu", "workdir"}`` (statuses of all tables, names over all dimensions of ``syn``,
        an absent dimension at its total; protection levels of the cells tau-ARGUS marks
        primary, ``U``) or ``{"error", "seconds"}``.
    """
    wd = Path(tempfile.mkdtemp(prefix="tau_bench_"))
    dims = syn.dims
    tables = tables or [dims]
    used = [d for d in dims if any(d in t for t in tables)]
    hrc = {}
    back: dict[str, dict[str, str]] = {}
    cols = [*used, syn.response] + ([syn.holding] if holdings else [])
    df = syn.data[cols].copy()
    if holdings:
        df = df.sort_values(syn.holding, kind="stable").reset_index(drop=True)
    for name in used:
        h = syn.hierarchies[name]
        width = len(str(len(h)))
        code = {c: f"{i:0{width}d}" for i, c in enumerate(h.codes) if i > 0}
        back[name] = {v: k for k, v in code.items()} | {"Total": h.total}
        df[name] = df[name].astype(str).map(code)
        if not h.is_flat:
            path = wd / f"{name}.hrc"
            depth = h.depths
            lines = ["@" * (int(depth[i]) - 1) + code[h.codes[i]] for i in range(1, len(h))]
            path.write_text("\n".join(lines) + "\n")
            hrc[name] = str(path)
    df.to_parquet(wd / "data.parquet")
    spec = {
        "workdir": str(wd), "data": str(wd / "data.parquet"), "tables": tables, "response": syn.response,
        "suppress": suppress, "hrc": hrc or None, "out": str(wd / "result.parquet"),
        "rules": safety_rule(p, holdings), "holding": syn.holding if holdings else None,
    }
    (wd / "spec.json").write_text(json.dumps(spec))
    t0 = time.perf_counter()
    c0 = cpu_seconds()
    try:
        proc = subprocess.run(
            [sys.executable, str(HERE / "tau_runner.py"), str(wd / "spec.json")],
            capture_output=True, text=True, timeout=timeout, cwd=wd, check=False,
        )
    except subprocess.TimeoutExpired:
        return {"error": f"no result within {timeout:.0f} s", "seconds": time.perf_counter() - t0}
    wall = time.perf_counter() - t0
    meta = wd / "result.parquet.json"
    if proc.returncode != 0 or not meta.exists():
        tail = (proc.stderr or "").strip().splitlines()[-1:] or [f"exit status {proc.returncode}"]
        return {"error": tail[0][:80], "seconds": wall}
    info = json.loads(meta.read_text())
    status: dict[str, str] = {}
    levels: dict[str, tuple[float, float]] = {}
    values: dict[str, float] = {}  # the response column as tau-ARGUS wrote it (rounded after RND)
    for i, tab in enumerate(tables):
        frame = pd.read_parquet(f"{wd / 'result.parquet'}.{i}")
        parts = []
        for name in dims:
            if name in tab:
                parts.append(frame[name].astype(str).str.strip().map(back[name]))
            else:
                parts.append(pd.Series(syn.hierarchies[name].total, index=frame.index))
        names = parts[0].astype(str)
        for s in parts[1:]:
            names = names + "|" + s.astype(str)
        for name, val in zip(names, frame[syn.response]):
            values[name] = float(val)
        for name, st, lo, up in zip(names, frame["status"], frame["lower"], frame["upper"]):
            if status.get(name) not in WITHHELD:  # a cell of two tables: withheld if either withholds
                status[name] = st
            if st == "U":
                levels[name] = (float(lo), float(up))
    return {"status": status, "levels": levels, "values": values, "seconds": info["seconds"],
            "cpu": float(info.get("cpu", cpu_seconds() - c0)), "workdir": str(wd)}


if __name__ == "__main__":
    tau_worker(sys.argv[1])
