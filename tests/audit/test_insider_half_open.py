"""The joint insider tests hold each open insider's cell only on the side of its true
value that the target's reaching tables do not move it to (``singletons.HALF_OPEN``),
on neighbourhoods of two sizes before the block (``singletons.LOCAL_LEVELS``). A
table found that way and a reaching stored table bracket the cell, so a convex
combination keeps it and reaches the goal: the findings must be those of tests that fix
the cells, with fewer whole-block LPs. (tests/audit/test_insider_property.py checks the
findings against one fresh LP per pair.)"""

from __future__ import annotations

import numpy as np
import pandas as pd

from tablesafe.audit import insider_findings, singletons


def _norm(f: pd.DataFrame) -> pd.DataFrame:
    return f.sort_values(["target", "attacker"]).reset_index(drop=True)


def test_half_open_tests_give_the_same_findings_with_fewer_block_lps(insider_case, monkeypatch):
    p, w = insider_case
    held: list[np.ndarray] = []
    real = singletons._BlockCheck._held

    def recording(self, cells, half):
        lo, hi = real(self, cells, half)
        if half:
            held.append(lo < hi)
        return lo, hi

    monkeypatch.setattr(singletons._BlockCheck, "_held", recording)
    half: dict = {}
    got = insider_findings(p, w, stats=half)
    # some cells were held on one side only
    assert any(h.any() for h in held)
    monkeypatch.setattr(singletons, "HALF_OPEN", False)
    fixed: dict = {}
    want = insider_findings(p, w, stats=fixed)
    assert len(want) > 0
    pd.testing.assert_frame_equal(_norm(got), _norm(want))
    assert half["insider_lp_solves"] < fixed["insider_lp_solves"]


def test_a_second_neighbourhood_gives_the_same_findings(insider_case, monkeypatch):
    p, w = insider_case
    monkeypatch.setattr(singletons, "LOCAL_LEVELS", ((2, 60),))
    one: dict = {}
    want = insider_findings(p, w, stats=one)
    monkeypatch.setattr(singletons, "LOCAL_LEVELS", ((2, 60), (6, 400)))
    two: dict = {}
    got = insider_findings(p, w, stats=two)
    pd.testing.assert_frame_equal(_norm(got), _norm(want))
    assert two["insider_lp_solves"] < one["insider_lp_solves"]


def test_neighbourhood_tables_answer_single_tests_with_the_same_findings(insider_case, monkeypatch):
    # a table a neighbourhood LP found reaching the goal answers each later single test
    # whose held cell it keeps within the held bounds (singletons.REUSE_LOCAL)
    p, w = insider_case
    monkeypatch.setattr(singletons, "LOCAL_LEVELS", ((2, 60), (6, 400)))
    tested: list[int] = []
    real = singletons._BlockCheck._local_reaches

    def recording(self, level, k, d, need, fixed):
        if fixed.size == 1:
            tested.append(int(fixed[0]))
        return real(self, level, k, d, need, fixed)

    monkeypatch.setattr(singletons._BlockCheck, "_local_reaches", recording)
    on: dict = {}
    got = insider_findings(p, w, stats=on)
    singles_on = len(tested)
    monkeypatch.setattr(singletons, "REUSE_LOCAL", False)
    tested.clear()
    off: dict = {}
    want = insider_findings(p, w, stats=off)
    pd.testing.assert_frame_equal(_norm(got), _norm(want))
    assert on["insider_local_reused"] > 0
    assert "insider_local_reused" not in off
    assert singles_on < len(tested)
    assert on["insider_local_lps"] < off["insider_local_lps"]
