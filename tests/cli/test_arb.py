"""tau-ARGUS batch files: parsing, and the benchmark jobs run through tablesafe."""

from __future__ import annotations

import shutil

import numpy as np
import pandas as pd
import pytest
from iface_helpers import require_stages

from tablesafe import InputError
from tablesafe.io.arb import parse_specifytable, read_arb, run_arb

# Expected patterns stated in benchmarks/tauargus/batch/test_batch_ex{1,2}.R (sdcTable's
# recoding of tau-ARGUS statuses: s safe, u primary, x secondary), rows in tau-ARGUS order.
EXPECTED = ["s", "s", "s", "s", "x", "u", "s", "s", "s", "s", "x", "x", "s", "s", "s"]


def test_read_arb_and_specifytable(benchmarks_dir, tmp_path):
    cmds = read_arb(benchmarks_dir / "tauargus/batch/ex1/batch_ex1.arb")
    assert [c.keyword for c in cmds] == [
        "LOGBOOK", "OPENTABLEDATA", "OPENMETADATA", "SPECIFYTABLE", "SAFETYRULE", "READTABLE",
        "SOLVER", "SUPPRESS", "WRITETABLE",
    ]
    t = parse_specifytable(cmds[3].args)
    assert t.dims == ["region", "gender"] and t.response == "freq" and t.cost == ""
    t = parse_specifytable('"Size""Region"|"Var2"|"Var2_Shadow"|"Var2"')
    assert t.dims == ["Size", "Region"] and t.shadow == "Var2_Shadow"
    cmds = read_arb(benchmarks_dir / "tauargus/tableinput/TestTable.arb")
    assert cmds[-1].keyword == "GOINTERACTIVE"
    bad = tmp_path / "bad.arb"
    bad.write_text('<OPENTABLEDATA> "x.tab"\nSUPPRESS MOD(1)\n')
    with pytest.raises(InputError) as e:
        read_arb(bad)
    assert "line 2" in str(e.value)
    bad.write_text('<FLY> "x"\n')
    with pytest.raises(InputError, match="FLY"):
        run_arb(bad)
    bad.write_text('<OPENTABLEDATA> "missing.tab"\n')
    with pytest.raises(InputError, match="missing.tab"):
        run_arb(bad)


def _status_letters(frame: pd.DataFrame) -> list[str]:
    code = frame["Status"].astype(int)
    return ["u" if c in (3, 4, 5, 6, 7, 8, 9) else "x" if c in (11, 12) else "s" for c in code]


@pytest.mark.parametrize("job", ["ex1/batch_ex1.arb", "ex2/batch_ex2.arb"])
def test_benchmark_batch_jobs_give_safe_publications(job, benchmarks_dir, tmp_path):
    require_stages("suppress")

    src = benchmarks_dir / "tauargus/batch" / job
    work = tmp_path / "job"
    shutil.copytree(src.parent, work)
    log = run_arb(work / src.name, outdir=tmp_path)
    first = pd.read_csv(tmp_path / ("tabout_ex1.txt" if "ex1" in job else "tabout_ex2.txt")).iloc[0, 2]
    assert first == (5146 if "ex1" in job else 10484.95)  # the grand totals the .R files expect
    out = tmp_path / ("tabout_ex1.txt" if "ex1" in job else "tabout_ex2.txt")
    assert out.exists(), log
    res = pd.read_csv(out)
    assert len(res) == 15
    got = _status_letters(res)
    # the same primaries as tau-ARGUS; secondaries may differ
    assert [g == "u" for g in got] == [e == "u" for e in EXPECTED]
    value_col = res.columns[2]
    ours = res[value_col][[g == "x" for g in got]].sum()
    theirs = res[value_col][[e == "x" for e in EXPECTED]].sum()
    print(f"{job}: withheld secondary value tablesafe {ours:g} vs tau-ARGUS {theirs:g}")
    assert "audit" not in log[-1] or "NOT" not in log[-1]
    assert np.isfinite(ours)


def _weighted_job(work, rule: str) -> pd.DataFrame:
    """Batch ex2 (microdata with a weight variable) with ``rule``, published unsuppressed."""
    (work / "job.arb").write_text(
        '<OPENMICRODATA> "microdata_ex2.asc"\n<OPENMETADATA> "metadata_ex2.rda"\n'
        '<SPECIFYTABLE> "region""gender"|"num1"|""|""\n'
        f"<SAFETYRULE> {rule}\n<READMICRODATA>\n"
        '<WRITETABLE> (1, 3, AS+FL+, "out.txt")\n'
    )
    run_arb(work / "job.arb")
    return pd.read_csv(work / "out.txt")


def test_wgt0_leaves_the_weights_out_as_tau_argus_does(benchmarks_dir, tmp_path):
    """``WGT(0)`` in a safety rule: the weights are not applied (neither to the cell
    values nor in the rules), the same as a rule without ``WGT``; ``WGT(1)`` applies them."""
    src = benchmarks_dir / "tauargus/batch/ex2"
    work = tmp_path / "job"
    shutil.copytree(src, work)
    raw = pd.read_csv(src / "microdata_ex2.asc", header=None,
                      names=["region", "gender", "weight", "val", "num1", "num2"])
    without = _weighted_job(work, "P(20,1)|FREQ(3,10)")
    wgt0 = _weighted_job(work, "P(20,1)|FREQ(3,10)|WGT(0)")
    wgt1 = _weighted_job(work, "P(20,1)|FREQ(3,10)|WGT(1)")
    assert wgt0.equals(without)
    assert np.isclose(wgt0.iloc[0, 2], raw.num1.sum())
    assert np.isclose(wgt1.iloc[0, 2], (raw.num1 * raw.weight).sum())
