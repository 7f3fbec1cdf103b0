"""tau-ARGUS batch example ex2 (benchmarks/tauargus/batch): ``FREQ(5,20)|P(20,5)|``.

The expected output (test_batch_ex2.R) marks exactly one primary cell, the 6th of 15
(region A x female: two records, 189.40 in total); the others are safe or secondary.
"""

from __future__ import annotations

import pandas as pd
from rules_builders import build_cells_frame

from tablesafe.rules import assess


def test_batch_ex2_primary(benchmarks_dir):
    """Seed 002 (minimum frequency and p% rule with coalitions; trailing '|' as tau-ARGUS writes it)."""
    path = benchmarks_dir / "tauargus" / "batch" / "ex2" / "microdata_ex2.asc"
    df = pd.read_csv(path, header=None, names=["region", "gender", "weight", "val", "num1", "num2"],
                     skipinitialspace=True)
    df["gender"] = df["gender"].str.strip()
    cells = build_cells_frame(df, ["region", "gender"], "num1", k=6)
    prob = assess(cells, "FREQ(5,20)|P(20,5)|")
    sens = set(prob.names[prob.sensitive])
    assert sens == {"A|female"}
    i = list(prob.names).index("A|female")
    assert prob.rule[i] == "freq(5, range=20)|p(20, n=5)"
    # levels: max(20% of 189.40, 0.2 x1 - 0) with both records known to the 5 intruders
    assert prob.upl[i] >= 0.2 * prob.value[i]
