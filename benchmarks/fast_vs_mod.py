"""``fast`` against tau-ARGUS MOD on the audit benchmark's two-way table of about 13,000 cells.

Run (from the repository root)::

    PYTHONPATH=src /work/benchvenv/bin/python benchmarks/fast_vs_mod.py [--records 30000] [--seed 1]

The table is the one of ``benchmarks/audit.py`` (generated enterprises, two 3-level
classifications, p% rule p=15 computed from the microdata, cost = value). tau-ARGUS
protects it with MOD(1) through pytauargus; tablesafe with ``suppress(..., "fast")`` (its
certificates checked in one pass, singleton protection on). Both patterns are audited by
``tablesafe.audit.audit(..., insider=False)``. The figures go to the subsection
``### fast and tau-ARGUS MOD on a 13,000-cell two-way table`` of RESULTS.md.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "src"))

from audit import build_problem, make_microdata, tau_pattern
from results_file import write_subsection

from tablesafe.audit import audit
from tablesafe.structure import compile_tables
from tablesafe.suppress import suppress

SECTION = "## Suppression: fast and comparison with tau-ARGUS"
SUB = "### fast and tau-ARGUS MOD on a 13,000-cell two-way table"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--records", type=int, default=30000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--no-write", action="store_true")
    args = ap.parse_args()
    micro = make_microdata(args.records, args.seed)
    prob, ts = build_problem(micro)
    prob = prob.copy(model=compile_tables(ts))
    sens = prob.sensitive
    rows = []
    with tempfile.TemporaryDirectory() as wd:
        tau_w, tau_secs, _ = tau_pattern(micro, prob, wd)
    t = time.perf_counter()
    pat = suppress(prob, "fast")
    ours_secs = time.perf_counter() - t
    for tool, w, secs, note in (
        ("tau-ARGUS MOD(1)", tau_w, tau_secs, ""),
        ("tablesafe fast", pat.withheld, ours_secs,
         f"certificates: {pat.stats.get('certificate_failures')} failures, "
         f"{pat.stats.get('insider_certificate_gaps')} insider gaps"),
    ):
        res = audit(prob, w, insider=False)
        verdict = np.asarray(res.verdict)
        bad = int(np.sum(sens & (verdict != "protected")))
        sec = w & ~sens
        rows.append((tool, secs, int(w.sum()), int(sec.sum()), float(prob.value[sec].sum()), bad, note))
        print(rows[-1], flush=True)
    if args.no_write:
        return
    cmd = "PYTHONPATH=src /work/benchvenv/bin/python benchmarks/fast_vs_mod.py " + " ".join(sys.argv[1:])
    lines = [
        SUB, "", f"Command: `{cmd.strip()}`", "",
        f"Table: {prob.n:,} cells (2-D, 3-level hierarchies), {int(sens.sum()):,} sensitive "
        "(p% rule p=15 from the microdata). Audit: tablesafe criterion 1 on every sensitive cell.", "",
        "| tool | seconds | withheld | secondary | withheld value (secondaries) | under-protected | note |",
        "|---|---:|---:|---:|---:|---:|---|",
        *[f"| {a} | {b:.1f} | {c:,} | {d:,} | {e:,.0f} | {f} | {g} |" for a, b, c, d, e, f, g in rows],
        "",
    ]
    write_subsection(SECTION, SUB, "\n".join(lines))


if __name__ == "__main__":
    main()
