"""One attacker model: every method's pattern passes the audit's insider check.

Suppression and audit take their insiders from ``tablesafe.structure.insiders``, so a
pattern a method returns has no insider finding, on two- and three-way generated tables
with holdings and without, and ``protect`` fails on insider findings by default.
"""

from __future__ import annotations

import numpy as np
import pytest

from tablesafe.audit import audit
from tablesafe.structure.insiders import InsiderModel
from tablesafe.suppress import suppress
from tablesafe.synthetic import problem_from_data, synthetic_data

SHAPES = {"2d": ([[3, 3], [4]], 60), "3d": ([[2, 2], [3], [2]], 40)}


def _problem(shape: str, seed: int, holdings: bool):
    branching, units = SHAPES[shape]
    syn = synthetic_data(branching, units, seed=seed)
    return problem_from_data(syn, p=15, use_holdings=holdings)


@pytest.mark.parametrize("method", ["optimal", "modular", "fast"])
@pytest.mark.parametrize("shape", ["2d", "3d"])
@pytest.mark.parametrize("holdings", [True, False])
@pytest.mark.parametrize("seed", [1, 2])
def test_patterns_have_no_insider_findings(method, shape, holdings, seed):
    p = _problem(shape, seed, holdings)
    single = InsiderModel.of(p).single
    pattern = suppress(p, method, time_limit=60)
    res = audit(p, pattern, insider=True)
    assert res.failing.size == 0
    assert len(res.insider_findings) == 0, res.insider_findings.head().to_dict("records")
    if seed == 1 and shape == "3d":
        assert (single & pattern.withheld).any()  # the check has insiders to run


def test_relations_give_the_same_overlap_as_the_codes():
    """Without its table structure the model reads totals from the relations and finds
    the same overlapping cells as from the codes."""
    p = _problem("3d", 1, True)
    bare = p.copy(model=None)
    with_codes, from_rel = InsiderModel.of(p), InsiderModel.of(bare)
    assert with_codes.geo is not None and from_rel.geo is None
    cells = np.arange(p.n)
    for t in range(p.n):
        assert np.array_equal(with_codes.overlaps(cells, t), from_rel.overlaps(cells, t)), t
