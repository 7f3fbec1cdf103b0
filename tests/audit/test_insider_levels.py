"""The single respondents' checks find the same whatever neighbourhoods they try first:
the levels of ``LOCAL_LEVELS`` only decide which LPs answer a test, and on two-way tables
a neighbourhood holding much of its block is passed over for the block's own LP
(``TWO_WAY_LOCAL_SHARE``) with the same findings."""

from __future__ import annotations

import numpy as np
import pytest

from tablesafe.audit import audit, singletons
from tablesafe.synthetic import problem_from_data, synthetic_data


def _findings(p, withheld) -> set[tuple[str, str, str]]:
    f = audit(p, withheld, insider=True).insider_findings
    return set(zip(f["target"], f["attacker"], f["verdict"]))


@pytest.mark.parametrize(("shape", "seed"), [([[12], [9]], 5), ([[3, 3], [4, 2]], 3)])
def test_levels_and_share_do_not_change_findings(shape, seed, monkeypatch):
    syn = synthetic_data(shape, 150, seed=seed)
    p = problem_from_data(syn, p=15, use_holdings=True)
    withheld = p.sensitive | (np.random.default_rng(seed).random(p.n) < 0.35)
    monkeypatch.setattr(singletons, "PARALLEL_MIN_TARGETS", 10**9)
    monkeypatch.setattr(singletons, "LOCAL_LEVELS", ())
    block_only = _findings(p, withheld)
    assert block_only, "the pattern should leave some insider findings to compare"
    # neighbourhoods small enough to be tried on this table
    monkeypatch.setattr(singletons, "LOCAL_LEVELS", ((1, 15), (3, 40)))
    counts: list[int] = []
    real = singletons._BlockCheck._local_reaches

    def counted(self, *args):
        counts.append(1)
        return real(self, *args)

    monkeypatch.setattr(singletons._BlockCheck, "_local_reaches", counted)
    for share in (1.0, 1 / 3, 0.0):
        counts.clear()
        monkeypatch.setattr(singletons, "TWO_WAY_LOCAL_SHARE", share)
        assert _findings(p, withheld) == block_only, share
        if share == 0.0:
            assert not counts  # every neighbourhood passed over on a two-way table
        elif share == 1.0:
            assert counts  # the neighbourhoods were tried
