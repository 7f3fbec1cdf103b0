"""One LP or MILP of an adjustment method, as plain arrays, solved by HiGHS (in this
process for LPs, in a guarded child process for MILPs: :mod:`tablesafe.adjust.guarded`)."""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from tablesafe.adjust.guarded import run_guarded
from tablesafe.audit.lp import col_values, new_highs, pass_lp, status

MIN_SECONDS = 1.0
"""The least time a solve is given, however little of the run's time is left."""


@dataclass(frozen=True)
class Model:
    """``min cost @ x`` subject to ``row_lower <= matrix @ x <= row_upper`` and column
    bounds, with ``integer`` marking the integer columns (None: an LP)."""

    cost: np.ndarray
    col_lower: np.ndarray
    col_upper: np.ndarray
    matrix: sp.csr_matrix
    row_lower: np.ndarray
    row_upper: np.ndarray
    integer: np.ndarray | None = None

    def with_bounds(self, lower: np.ndarray, upper: np.ndarray) -> Model:
        """The same model with other column bounds."""
        return Model(self.cost, lower, upper, self.matrix, self.row_lower, self.row_upper, self.integer)

    def relaxed(self) -> Model:
        """The same model without integrality."""
        return Model(self.cost, self.col_lower, self.col_upper, self.matrix, self.row_lower, self.row_upper)


@dataclass(frozen=True)
class Solved:
    """The outcome of a solve: ``x`` (None when no feasible point was found), HiGHS's
    model status in words, the objective, the MIP gap and the seconds taken."""

    x: np.ndarray | None
    status: str
    objective: float
    gap: float
    seconds: float


def solve(model: Model, seconds: float, *, start: np.ndarray | None = None, gap: float = 1e-4) -> Solved:
    """Solve ``model`` here, within ``seconds`` (HiGHS's own time limit)."""
    t0 = time.perf_counter()
    h = new_highs()
    h.setOptionValue("time_limit", max(MIN_SECONDS, float(seconds)))
    h.setOptionValue("mip_rel_gap", gap)
    integer = model.integer
    pass_lp(h, model.cost, model.col_lower, model.col_upper, model.matrix, model.row_lower, model.row_upper,
            integrality=integer if integer is not None and integer.any() else None)
    if start is not None:
        import highspy

        sol = highspy.HighsSolution()
        sol.col_value = np.asarray(start, dtype=float).tolist()
        sol.value_valid = True
        h.setSolution(sol)
    h.run()
    info = h.getInfo()
    found = info.primal_solution_status == 2
    x = col_values(h) if found else None
    mip_gap = float(info.mip_gap) if integer is not None and integer.any() else 0.0
    objective = float(info.objective_function_value) if found else float("inf")
    return Solved(x, status(h), objective, mip_gap, time.perf_counter() - t0)


def solve_guarded(model: Model, seconds: float, *, start: np.ndarray | None = None, gap: float = 1e-4) -> Solved:
    """:func:`solve` in a child process killed when ``seconds`` have passed (HiGHS
    ignores its time limit in parts of a MILP's root node)."""
    t0 = time.perf_counter()
    seconds = max(MIN_SECONDS, float(seconds))
    kind, answer = run_guarded(_solve_from, (model, seconds * 0.95, start, gap), seconds)
    if kind == "ok":
        return answer
    took = time.perf_counter() - t0
    what = {"timeout": "killed at the time limit", "error": f"failed: {answer}",
            "died": f"child process ended ({answer})"}[kind]
    return Solved(None, what, float("inf"), float("inf"), took)


def _solve_from(model: Model, seconds: float, start: np.ndarray | None, gap: float) -> Solved:
    """:func:`solve` with its keywords as positional arguments (for the child process)."""
    return solve(model, seconds, start=start, gap=gap)
