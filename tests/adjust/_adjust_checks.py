"""Checks of adjusted tables written for the tests, independent of ``tablesafe.adjust.check``."""

from __future__ import annotations

import numpy as np

from tablesafe.problem import Problem


def assert_additive(problem: Problem, values: np.ndarray) -> None:
    """Every relation holds within 1e-6 of the table's scale."""
    scale = max(1.0, float(np.abs(problem.value).max()))
    residual = problem.relations @ values - problem.rhs
    assert np.abs(residual).max(initial=0.0) <= 1e-6 * scale


def assert_cta_valid(problem: Problem, values: np.ndarray, direction: np.ndarray) -> None:
    """Additive, within the a priori bounds, empty cells unchanged, and every sensitive
    cell moved by at least its level in its direction."""
    scale = max(1.0, float(np.abs(problem.value).max()))
    tol = 1e-6 * scale
    assert_additive(problem, values)
    assert np.all(values >= problem.lower - tol) and np.all(values <= problem.upper + tol)
    assert np.all(np.abs(values - problem.value)[problem.status == "Z"] <= tol)
    dev = values - problem.value
    for i in np.flatnonzero(problem.sensitive & ((problem.upl > 0) | (problem.lpl > 0))):
        assert direction[i] in (1, -1), problem.names[i]
        if direction[i] == 1:
            assert dev[i] >= problem.upl[i] - tol, problem.names[i]
        else:
            assert dev[i] <= -problem.lpl[i] + tol, problem.names[i]


def assert_rounded(problem: Problem, values: np.ndarray, base: float, *, cells: np.ndarray | None = None) -> None:
    """Every cell a multiple of ``base``; the cells ``cells`` marks (default all) within
    one base of their value, multiples among them unchanged."""
    q = values / base
    assert np.allclose(q, np.round(q), rtol=0, atol=1e-9)
    mask = np.ones(problem.n, dtype=bool) if cells is None else cells
    dev = np.abs(values - problem.value)[mask]
    assert np.all(dev < base - 1e-9)
    v = problem.value[mask] / base
    was_multiple = np.isclose(v, np.round(v), rtol=0, atol=1e-9)
    assert np.all(dev[was_multiple] <= 1e-9 * np.maximum(1.0, np.abs(problem.value[mask][was_multiple])))
