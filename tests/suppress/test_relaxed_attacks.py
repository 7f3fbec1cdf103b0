"""Failing attacks proved on relaxations (:mod:`tablesafe.suppress.relaxed_attacks`).

The table: a generated three-way table with holdings whose `modular` subtables,
protected against outsiders only, leave one block of withheld cells and many attacks
that fail across subtables (the situation of the audit-guided repair on the 13,851-cell
three-way table, fifty-ninth session)."""

from __future__ import annotations

import numpy as np
import pytest

from tablesafe.suppress.attacker import BlockLP, Blocks, Bounds, cut_from, relations_by_cell
from tablesafe.suppress.audit_repair import audit_failures
from tablesafe.suppress.modular import modular_pattern
from tablesafe.suppress.proof import with_true_offsets
from tablesafe.suppress.relaxed_attacks import attack_relaxations
from tablesafe.synthetic import problem_from_data, synthetic_data


@pytest.fixture(scope="module")
def outsider_pattern():
    problem = problem_from_data(synthetic_data([[3, 4], [2, 5], [4]], 800, seed=3, holding_cohesion=0.7), p=15)
    bounds = Bounds.of(problem, capacity=False, singleton=True)
    w, _ = modular_pattern(problem, bounds, insiders=False, workers=1)
    return problem, bounds, w | problem.sensitive


def _block_lp(problem, bounds, x, k):
    blocks = Blocks(problem.relations, x)
    b = int(blocks.label[k])
    return BlockLP(problem, bounds, x, blocks.cells(b), blocks.rows(b))


def test_a_relaxation_that_misses_the_level_proves_the_block_misses_it_and_cuts_off_the_pattern(outsider_pattern):
    """Every attack a relaxation decides fails on the whole block too, reaching no further
    there; its capacity inequality is violated by the pattern and holds on every larger
    pattern on which the block's attack passes (the inequality is valid)."""
    problem, bounds, w = outsider_pattern
    truth = with_true_offsets(problem)
    keys = audit_failures(truth, w, bounds)
    assert any(s >= 0 for _, _, s in keys)  # single respondents among them
    x = w.astype(float)
    out: dict = {}
    left = attack_relaxations(problem, bounds, x, keys, out, relations_by_cell(problem), RuntimeError,
                              block_cells=int(w.sum()))
    assert len(out) >= 100 and len(out) + len(left) == len(keys)
    rng = np.random.default_rng(7)
    free = np.flatnonzero(~w & (problem.value != 0))
    larger = [w.copy() for _ in range(3)]
    for share, m in zip((0.1, 0.3, 1.0), larger):
        m[rng.choice(free, int(share * free.size), replace=False)] = True
    tried = 0
    for key, att in sorted(out.items())[:25]:
        k, d, s = key
        assert not att.ok and att.cells.size == 0  # failed, and no table of the block kept
        lp = _block_lp(problem, bounds, x, k)
        block = lp.attack(k, d, att.required, s, want_dual=False)
        assert not block.ok
        assert att.reached >= block.reached - 1e-6 * max(1.0, abs(block.reached))
        cut = cut_from(att, bounds, problem.sensitive)
        assert float(cut.coef[w[cut.idx]].sum()) < cut.rhs
        for m in larger:
            lp_m = _block_lp(problem, bounds, m.astype(float), k)
            if lp_m.attack(k, d, att.required, s, want_dual=False).ok:
                tried += 1
                assert float(cut.coef[m[cut.idx]].sum()) >= cut.rhs - 1e-6 * max(1.0, cut.rhs)
    assert tried > 0
