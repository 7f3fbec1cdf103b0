"""The lean LSQR behind the guided regions' ranking (tablesafe.suppress.local.lsqr):
its iterates are scipy's, it converges to the least-norm least-squares solution, the
columns of weight 0 stay at 0, and the public product gives what the compiled one does."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.sparse.linalg import lsqr

from tablesafe.suppress.local import lsqr as lean
from tablesafe.suppress.local.guided import ranked


def _system(seed: int, rows: int = 40, cols: int = 90) -> tuple[sp.csc_matrix, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    m = sp.random(rows, cols, density=0.08, random_state=rng, format="csc")
    m = (m + sp.eye(rows, cols, format="csc")).tocsc()  # no empty row
    w = rng.uniform(0.2, 3.0, cols)
    b = rng.standard_normal(rows)
    return m, w, b


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000), iterations=st.integers(1, 10))
def test_iterates_are_scipys(seed: int, iterations: int) -> None:
    """The first iterates agree to rounding (later ones drift apart as the Krylov basis
    loses orthogonality in either: both then converge to one solution, tested below)."""
    m, w, b = _system(seed)
    mine = lean.lsqr_weighted(m, w, b, iterations)
    theirs = lsqr((m @ sp.diags(w)).tocsr(), b, iter_lim=iterations)[0]
    assert np.abs(mine - theirs).max() <= 1e-8 * np.abs(theirs).max()


def test_converges_to_the_least_norm_solution() -> None:
    m, w, b = _system(3, rows=30, cols=60)
    y = lean.lsqr_weighted(m, w, b, 2_000, atol=1e-12, btol=1e-12)
    best = np.linalg.lstsq((m @ sp.diags(w)).toarray(), b, rcond=None)[0]  # least norm
    assert np.allclose(y, best, atol=1e-8)
    assert np.allclose(m @ (w * y), b, atol=1e-8)  # consistent: more columns than rows


def test_columns_of_weight_zero_stay_at_zero() -> None:
    m, w, b = _system(5)
    w[[0, 7, 44]] = 0.0
    y = lean.lsqr_weighted(m, w, b, 50)
    assert np.all(y[[0, 7, 44]] == 0.0)
    assert np.abs(y).max() > 0


def test_the_public_product_gives_the_same(monkeypatch: pytest.MonkeyPatch) -> None:
    m, w, b = _system(9)
    compiled = lean.lsqr_weighted(m, w, b, 10)
    monkeypatch.setattr(lean, "_product_into", None)
    public = lean.lsqr_weighted(m, w, b, 10)
    assert np.abs(compiled - public).max() <= 1e-8 * np.abs(compiled).max()


def test_ranking_puts_the_target_first_then_by_movement() -> None:
    """The ranking of a block: the target, then the other columns by how much the
    weighted least-norm deviation moving the target by 1 moves them (relative to
    their room), the same order as scipy's LSQR gives."""
    m, room, _ = _system(11, rows=30, cols=70)
    target = 4
    order = ranked(m.indptr, m.indices, m.data, m.shape[0], room, target=target, iterations=500)
    assert order[0] == target and sorted(order.tolist()) == list(range(70))
    others = np.flatnonzero(np.arange(70) != target)
    b = -m[:, [target]].toarray().ravel()
    y = lsqr((m[:, others] @ sp.diags(room[others])).tocsr(), b, atol=1e-12, btol=1e-12, iter_lim=500)[0]
    moved = dict(zip(others.tolist(), np.abs(y)))
    along = np.array([moved[int(c)] for c in order[1:]])
    # non-increasing along the order, up to rounding
    assert np.all(np.diff(along) <= 1e-7 * along.max())
    assert along[0] > 10 * along[-1]
