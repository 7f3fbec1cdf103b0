"""The relations' capacity inequalities (:func:`tablesafe.suppress.attacker.row_cuts`),
worked out for all sensitive cells at once, against the dual ``u = +-e_r`` of each
relation one at a time (:func:`~tablesafe.suppress.attacker.relation_cut`)."""

from __future__ import annotations

import numpy as np
import pytest
from _suppress_gen import table_problem

from tablesafe.suppress.attacker import DOWN, UP, Bounds, relation_cut, row_cuts


def _one_at_a_time(problem, bounds, fixed_one):
    cuts = []
    by_cell = problem.relations.tocsc()
    rows = problem.relations
    for k in np.flatnonzero(problem.sensitive):
        for r in by_cell.indices[by_cell.indptr[k]:by_cell.indptr[k + 1]]:
            cols = rows.indices[rows.indptr[r]:rows.indptr[r + 1]]
            vals = rows.data[rows.indptr[r]:rows.indptr[r + 1]]
            for direction, req in ((UP, bounds.req_up[k]), (DOWN, bounds.req_dn[k])):
                if req > 0:
                    cut = relation_cut(bounds, int(k), direction, float(req), cols, vals, fixed_one)
                    if cut.rhs > 0:
                        cuts.append(cut)
    return cuts


@pytest.mark.parametrize("seed,shape", [(3, [[3, 2], [4]]), (4, [[2, 2], [3], [3]]), (10, [[5], [4]])])
def test_row_cuts_are_the_relations_cuts_in_the_same_order(seed, shape):
    p = table_problem(seed, shape, units=90)
    b = Bounds.of(p, capacity=False, singleton=True)
    rng = np.random.default_rng(seed)
    for fixed_one in (p.sensitive, p.sensitive | (rng.random(p.n) < 0.2)):
        want = _one_at_a_time(p, b, fixed_one)
        got = row_cuts(p, b, fixed_one)
        assert len(got) == len(want) > 0
        for g, w in zip(got, want, strict=True):
            assert (g.target, g.direction) == (w.target, w.direction)
            assert np.array_equal(g.idx, w.idx)
            assert np.array_equal(g.coef, w.coef)
            assert g.rhs == w.rhs
