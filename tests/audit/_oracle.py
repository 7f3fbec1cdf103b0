"""The tests' independent oracle: one fresh scipy ``linprog`` per bound of a withheld
cell, with no decomposition, warm start or shortcut of tablesafe's audit."""

from __future__ import annotations

import numpy as np
from scipy.optimize import linprog

from tablesafe.problem import Problem


def exact_bounds(problem: Problem, withheld: np.ndarray, *, fixed: int | None = None,
                 sensitive_only: bool = False) -> tuple[dict[int, float], dict[int, float]]:
    """Smallest and largest value of each withheld cell (``sensitive_only``: of each
    sensitive withheld cell) given the published ones; ``fixed``: a withheld cell the
    attacker knows exactly."""
    wi = np.flatnonzero(withheld)
    a = problem.relations.toarray()
    aw = a[:, wi]
    rhs = problem.rhs - a[:, ~withheld] @ problem.value[~withheld]
    keep = np.abs(aw).sum(axis=1) > 0
    bounds = [(problem.lower[i], None if np.isinf(problem.upper[i]) else problem.upper[i]) for i in wi]
    if fixed is not None:
        bounds[int(np.searchsorted(wi, fixed))] = (problem.value[fixed], problem.value[fixed])
    lo: dict[int, float] = {}
    hi: dict[int, float] = {}
    for k, i in enumerate(wi):
        if sensitive_only and not problem.sensitive[i]:
            continue
        c = np.zeros(len(wi))
        for sense, store in ((1.0, lo), (-1.0, hi)):
            c[k] = sense
            r = linprog(c, A_eq=aw[keep], b_eq=rhs[keep], bounds=bounds, method="highs")
            if r.status == 3:
                store[int(i)] = -sense * np.inf
            else:
                assert r.status == 0, r.message
                store[int(i)] = r.x[k]
    return lo, hi
