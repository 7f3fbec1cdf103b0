"""The single respondents' checks cut into parts and run in worker processes find
exactly what one pass over every block finds (:func:`tablesafe.audit.singletons.singleton_findings`)."""

from __future__ import annotations

import numpy as np
import pytest

from tablesafe.audit import audit, singletons
from tablesafe.synthetic import problem_from_data, synthetic_data


def _findings(p, withheld) -> set[tuple[str, str, str]]:
    res = audit(p, withheld, insider=True)
    f = res.insider_findings
    return set(zip(f["target"], f["attacker"], f["verdict"]))


@pytest.mark.parametrize("shape", [[[3, 3], [4, 2]], [[2, 2], [3], [2]]])
def test_parts_and_workers_do_not_change_findings(shape, monkeypatch):
    syn = synthetic_data(shape, 80, seed=3)
    p = problem_from_data(syn, p=15, use_holdings=True)
    rng = np.random.default_rng(0)
    withheld = p.sensitive | (rng.random(p.n) < 0.3)
    monkeypatch.setattr(singletons, "PARALLEL_MIN_TARGETS", 10**9)
    whole = _findings(p, withheld)
    assert whole, "the pattern should leave some insider findings to compare"
    monkeypatch.setattr(singletons, "PART_TARGETS", 3)
    serial_parts = _findings(p, withheld)
    monkeypatch.setattr(singletons, "PARALLEL_MIN_TARGETS", 1)
    parallel_parts = _findings(p, withheld)
    assert serial_parts == whole
    assert parallel_parts == whole


def test_parts_cover_every_target_once():
    syn = synthetic_data([[3, 3], [4, 2]], 80, seed=3)
    p = problem_from_data(syn, p=15, use_holdings=True)
    withheld = p.sensitive | (np.arange(p.n) % 3 == 0)
    res = audit(p, withheld, insider=False)
    from tablesafe.audit.intervals import solve_intervals

    base = solve_intervals(p, withheld, cells=p.sensitive & withheld, keep_points=True)
    free = withheld & ~base.exact & (base.block >= 0)
    eligible = p.sensitive & (res.verdict == "protected")
    parts = singletons._parts(base, free, eligible, None)
    seen = np.concatenate([base.blocks[bi].cols[t] for bi, t in parts])
    assert len(seen) == len(set(seen.tolist()))
    want = {int(c) for bi in {b for b, _ in parts} for c in base.blocks[bi].cols if eligible[c]}
    assert set(seen.tolist()) == want
