"""Single tests that miss on a neighbourhood are tried on a relaxation around the target
(``singletons.RELAX_LEVELS``): the relations within a few hops, every cell they hold
free, the others dropped. Every table of the block is a table of the relaxation, so the
relaxation reaches at least as far as the block's LP with the same cell held, and a
miss there sends the pair straight to its block LP; when a neighbourhood (whose tables
are the block's) reaches as far with the cell held, the two pin the block's optimum and
no block LP is needed. The findings must not change, and fewer LPs must be needed. (tests/audit/test_insider_property.py checks
the findings against one fresh LP per pair with relaxations on.)"""

from __future__ import annotations

import numpy as np
import pandas as pd
import scipy.sparse as sp

from tablesafe.audit import insider_findings, singletons
from tablesafe.audit.intervals import solve_intervals
from tablesafe.audit.neighbourhood import Neighbourhoods, neighbourhood_cells


def _norm(f: pd.DataFrame) -> pd.DataFrame:
    return f.sort_values(["target", "attacker"]).reset_index(drop=True)


def _block_optimum(b, k: int, d: int, s: int) -> float:
    """The block LP's ``d``-optimum of local cell ``k`` with local cell ``s`` held."""
    fixed = np.array([s])
    b.set_bounds(fixed, b.truth[fixed], b.truth[fixed])
    try:
        return b.optimise(k, d)[0]
    finally:
        b.set_bounds(fixed, b.lower[fixed], b.upper[fixed])


def test_the_block_lies_between_a_neighbourhood_and_a_relaxation(insider_case):
    # with a cell held, the block's optimum is at most the relaxation's (every block
    # table is one of it) and at least the neighbourhood's (its tables are the block's)
    p, w = insider_case
    res = solve_intervals(p, w, cells=p.sensitive & w, keep_points=True)
    b = max(res.blocks, key=lambda blk: blk.cols.size)
    assert b.cols.size > 100
    csc, csr = sp.csc_matrix(b.matrix), sp.csr_matrix(b.matrix)
    nb = Neighbourhoods(b, csc, csr)
    rng = np.random.default_rng(0)
    targets = rng.choice(np.flatnonzero(p.sensitive[b.cols]), 12, replace=False)
    compared = above = below = 0
    for k in targets.tolist():
        near = neighbourhood_cells(csc, csr, k, 1, b.cols.size)     # within the relaxation
        for s in rng.choice(near[near != k], min(6, near.size - 1), replace=False).tolist():
            for d in (1, -1):
                ran, relaxed = nb.relaxed_reach(0, k, 2, b.cols.size, d, s)
                if not ran:
                    continue
                held = nb.held_reach(0, k, 2, b.cols.size, d, s)
                exact = _block_optimum(b, k, d, s)
                tol = 1e-6 * (1.0 + abs(exact))
                assert d * held - tol <= d * exact <= d * relaxed + tol, (k, s, d, held, exact, relaxed)
                compared += 1
                above += d * relaxed > d * exact + tol
                below += d * held < d * exact - tol
    assert compared > 50
    # two hops leave out relations that bind, and cells that move: both bounds are
    # strict somewhere
    assert above > 0 and below > 0


def test_relaxations_give_the_same_findings_with_fewer_neighbourhood_lps(insider_case, monkeypatch):
    p, w = insider_case
    monkeypatch.setattr(singletons, "LOCAL_LEVELS", ((3, 100), (6, 400)))
    monkeypatch.setattr(singletons, "RELAX_LEVELS", ())
    off: dict = {}
    want = insider_findings(p, w, stats=off)
    assert len(want) > 0
    monkeypatch.setattr(singletons, "RELAX_LEVELS", ((3, 400),))
    on: dict = {}
    got = insider_findings(p, w, stats=on)
    pd.testing.assert_frame_equal(_norm(got), _norm(want))
    assert on["insider_relaxed_lps"] > 0
    assert "insider_relaxed_lps" not in off
    assert on["insider_local_lps"] < off["insider_local_lps"]
    # findings whose bound a neighbourhood and a relaxation pinned need no block LP
    assert on["insider_relaxed_exact"] > 0
    assert on["insider_lp_solves"] < off["insider_lp_solves"]


def test_bounds_pinned_by_a_neighbourhood_and_a_relaxation_are_the_blocks(insider_case, monkeypatch):
    p, w = insider_case
    monkeypatch.setattr(singletons, "LOCAL_LEVELS", ((3, 100), (6, 400)))
    monkeypatch.setattr(singletons, "RELAX_LEVELS", ((3, 400),))
    monkeypatch.setattr(singletons, "PARALLEL_MIN_TARGETS", 10**9)
    pinned: list[tuple[object, int, int, int, float]] = []
    real = Neighbourhoods.relaxed_failures

    def recording(self, k, d, need, cells, *args):
        sure, pin = real(self, k, d, need, cells, *args)
        pinned.extend((self.b, k, d, s, bound) for s, bound in pin.items())
        return sure, pin

    monkeypatch.setattr(Neighbourhoods, "relaxed_failures", recording)
    insider_findings(p, w)
    assert len(pinned) > 10
    for b, k, d, s, val in pinned:
        exact = _block_optimum(b, k, d, s)
        assert abs(val - exact) <= 1e-6 * (1.0 + abs(exact)), (k, d, s, val, exact)
