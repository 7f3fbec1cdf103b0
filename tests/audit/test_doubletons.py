"""Relations of two unknowns eliminated from a block (tablesafe.audit.doubletons): the
reduced block describes exactly the tables of the original one."""

from __future__ import annotations

import numpy as np
import pytest

from tablesafe.audit.doubletons import eliminate_doubletons
from tablesafe.audit.intervals import build_blocks
from tablesafe.suppress.fast import fast_pattern
from tablesafe.synthetic import problem_from_data, synthetic_data


def _largest_block(shape, seed):
    p = problem_from_data(synthetic_data(shape, 1_500, seed=seed))
    _, _, blocks = build_blocks(p, fast_pattern(p).withheld)
    return max(blocks, key=lambda b: len(b.cols))


@pytest.mark.parametrize("shape", [[[3, 4], [2, 5]], [[3], [2, 2], [4]]], ids=["2d", "3d"])
def test_reduced_block_maps_truth_and_optima_to_tables_of_the_block(shape):
    b = _largest_block(shape, 5)
    red = eliminate_doubletons(b)
    assert red is not None and len(red.block.cols) < len(b.cols)
    rb = red.block
    # the truth of the roots gives back the truth of every cell, and satisfies the rest
    x = red.alpha + red.beta * rb.truth[red.pos]
    np.testing.assert_allclose(x, b.truth, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(rb.matrix @ rb.truth, rb.rhs, rtol=1e-9, atol=1e-6)
    # every optimum over the roots is a table of the original block (relations, bounds)
    for k in range(len(rb.cols)):
        for d in (1, -1):
            _, y = rb.optimise(k, d)
            if y is None:
                continue
            x = red.alpha + red.beta * y[red.pos]
            scale = 1e-7 * (1 + np.abs(b.rhs))
            assert np.all(np.abs(b.matrix @ x - b.rhs) <= scale * 10)
            assert np.all(x >= b.lower - 1e-6 * (1 + np.abs(b.lower)))
            assert np.all(x <= b.upper + 1e-6 * (1 + np.abs(b.upper)))


def test_cells_on_one_root_get_their_bounds_from_its_two_ends():
    b = _largest_block([[3], [2, 2], [4]], 5)
    red = eliminate_doubletons(b)
    assert red is not None
    lo_r = np.arange(len(red.block.cols), dtype=float)
    hi_r = lo_r + 10.0
    lo, hi = red.cell_bounds(lo_r, hi_r)
    assert np.all(hi - lo >= -1e-9)
    flipped = red.beta < 0
    assert flipped.any()   # a total and a child of one relation move in opposite directions
    np.testing.assert_allclose(hi[flipped], red.alpha[flipped] + red.beta[flipped] * lo_r[red.pos[flipped]])
