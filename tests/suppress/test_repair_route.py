"""The attacker-LP repair's estimate on tables of three or more dimensions (issue 12):
a repair estimated past a share of the limit is left to the local certificates from
the start, instead of running out of time first."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from _suppress_gen import independent_audit, table_problem
from scipy.sparse.csgraph import connected_components

import tablesafe.suppress.repair_estimate as estimate
from tablesafe.suppress import suppress


def _work_by_graph(problem, withheld) -> float:
    """The estimate's work counted another way: components of the graph of withheld
    cells that share a relation (the cells as nodes)."""
    a = sp.csr_matrix(problem.relations)[:, withheld]
    cells = np.flatnonzero(withheld)
    share = (abs(a).T @ abs(a)) > 0
    _, lab = connected_components(share, directed=False)
    in_relation = np.asarray(abs(a).sum(axis=0)).ravel() > 0
    total = 0.0
    for b in np.unique(lab[in_relation]):
        members = cells[(lab == b) & in_relation]
        total += float(problem.sensitive[members].sum()) * len(members) ** 2
    return total


def test_the_work_counts_each_block_by_its_targets_and_size():
    p = table_problem(41, [[2, 2], [3], [2]], units=120)
    rng = np.random.default_rng(0)
    for share in (0.0, 0.3, 0.7, 1.0):
        w = p.sensitive | (rng.random(p.n) < share)
        assert estimate.lp_repair_work(p, w) == _work_by_graph(p, w)
    assert estimate.lp_repair_work(p, np.zeros(p.n, dtype=bool)) == 0.0


def test_a_repair_estimated_too_long_goes_to_the_certificates(monkeypatch):
    p = table_problem(42, [[2, 2], [3], [2]], units=120)
    # every unit of work a minute: far past any share of the limit
    monkeypatch.setattr(estimate, "LP_REPAIR_SECONDS_PER_UNIT", 60.0)
    pat = suppress(p, "modular", time_limit=60)
    assert "60 s limit" in pat.stats["repair_skipped"]
    assert pat.stats["repair_estimate_seconds"] > 0.5 * 60
    assert "repair_timed_out" not in pat.stats
    assert pat.proof == "certificates" and "certificate_repair_added" in pat.stats
    assert independent_audit(p, pat.withheld) == []


def test_a_repair_estimated_within_its_share_runs_and_two_way_tables_are_not_estimated():
    p = table_problem(43, [[2, 2], [3], [2]], units=120)
    pat = suppress(p, "modular", time_limit=60)
    assert "repair_skipped" not in pat.stats
    assert pat.stats["repair_estimate_seconds"] <= 0.5 * 60
    assert pat.proof == "audit"
    two = table_problem(44, [[3, 2], [4]], units=120)
    pat2 = suppress(two, "modular", time_limit=60)
    assert "repair_estimate_seconds" not in pat2.stats and "repair_skipped" not in pat2.stats
