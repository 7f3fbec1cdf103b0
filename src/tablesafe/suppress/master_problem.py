"""The master problem of ``optimal`` (and of ``modular``'s subtables): one binary per
candidate complement, the capacity inequalities found so far as rows, solved by HiGHS
(seed 002 "Secondary tabular data protection methods"; Fischetti and Salazar, JASA
2000). A round's time limit is real seconds, or seconds of LP work on a
:class:`~tablesafe.suppress.work_clock.WorkClock` (the MIP interrupted by a callback once
its work reaches them), so that a search bounded by work stops at the same point in
every run.
"""

from __future__ import annotations

import contextlib

import highspy
import numpy as np

from tablesafe.audit.lp import MIP_ITERATION_WORK, lp_work, new_highs
from tablesafe.problem import Problem
from tablesafe.suppress.attacker import Cut
from tablesafe.suppress.work_clock import WorkClock

_HINF = highspy.kHighsInf
INT_LIMIT = 2**31 - 1
"""HiGHS's infinite iteration limit."""


class _Master:
    """The master of one search: a binary column per candidate (``var``: their cells),
    cost as the cells', capacity inequalities added as rows (:meth:`add`)."""

    def __init__(self, problem: Problem, cand: np.ndarray, seed: int) -> None:
        self.var = np.flatnonzero(cand)
        self.col_of = np.full(problem.n, -1, dtype=np.int64)
        self.col_of[self.var] = np.arange(len(self.var))
        h = new_highs()
        h.setOptionValue("random_seed", int(seed))
        h.setOptionValue("mip_rel_gap", 1e-5)
        nv = len(self.var)
        lp = highspy.HighsLp()
        lp.num_col_ = nv
        lp.num_row_ = 0
        self.cost = problem.cost[self.var].astype(float)
        lp.col_cost_ = self.cost
        lp.col_lower_ = np.zeros(nv)
        lp.col_upper_ = np.ones(nv)
        lp.a_matrix_.format_ = highspy.MatrixFormat.kColwise
        lp.a_matrix_.start_ = np.zeros(nv + 1, dtype=np.int32)
        h.passModel(lp)
        self.h = h
        self.nv = nv
        self.ncuts = 0
        self._seen: set[bytes] = set()
        self.is_integral = False
        self.status = highspy.HighsModelStatus.kNotset

    def add(self, cuts: list[Cut]) -> int:
        starts, idx, val, lo = [], [], [], []
        nnz = 0
        for c in cuts:
            cols = self.col_of[c.idx]
            keep = cols >= 0
            cols, coef = cols[keep], c.coef[keep]
            if c.rhs <= 0:
                continue
            order = np.argsort(cols)
            cols, coef = cols[order], coef[order]
            key = cols.tobytes() + np.round(coef / c.rhs, 9).tobytes()
            if key in self._seen:
                continue
            self._seen.add(key)
            starts.append(nnz)
            idx.append(cols)
            val.append(coef / c.rhs)  # scaled to rhs 1 for numerics
            lo.append(1.0)
            nnz += len(cols)
        if not starts:
            return 0
        n = len(starts)
        self.h.addRows(n, np.array(lo), np.full(n, _HINF), nnz, np.array(starts, dtype=np.int32),
                       np.concatenate(idx).astype(np.int32), np.concatenate(val))
        self.ncuts += n
        return n

    def integral(self, on: bool) -> None:
        kind = highspy.HighsVarType.kInteger if on else highspy.HighsVarType.kContinuous
        self.is_integral = on
        if self.nv:
            self.h.changeColsIntegrality(self.nv, np.arange(self.nv, dtype=np.int32),
                                         np.array([kind] * self.nv))

    def solve(self, time_limit: float, on_solution=None, fix_one: np.ndarray | None = None,
              fix_zero: np.ndarray | None = None, clock: WorkClock | None = None) -> tuple[np.ndarray | None, float]:
        """Solve the master; ``on_solution(x)`` sees every improving integer solution.

        ``fix_one`` / ``fix_zero``: masks over the master's columns held at 1 / 0 for this
        solve only (a neighbourhood of a pattern); the returned bound is then the
        neighbourhood's, not a bound of the whole problem.

        ``clock``: ``time_limit`` is in seconds of work on it (the MIP is interrupted once
        its work, and that of ``on_solution``'s checks, reaches them; an LP relaxation
        gets as many simplex iterations), and the real time before its guard is HiGHS's
        own limit. Without it, ``time_limit`` is real seconds.
        """
        h = self.h
        interrupt = None
        if clock is None:
            h.setOptionValue("time_limit", max(float(time_limit), 0.5))
        else:
            h.setOptionValue("time_limit", max(clock.real_left(), 0.05))
            units = max(clock.units(max(float(time_limit), 0.0)), 1)
            ends = lp_work() + units  # counting the checks ``on_solution`` runs meanwhile
            if self.is_integral:
                def interrupt(out, inp) -> None:
                    if lp_work() + MIP_ITERATION_WORK * int(out.simplex_iteration_count) >= ends:
                        inp.user_interrupt = True
            h.setOptionValue("simplex_iteration_limit", INT_LIMIT if self.is_integral else units)
        restricted = fix_one is not None or fix_zero is not None
        if restricted:
            lo = np.zeros(self.nv) if fix_one is None else fix_one.astype(float)
            hi = np.ones(self.nv) if fix_zero is None else (~fix_zero).astype(float)
            h.changeColsBounds(self.nv, np.arange(self.nv, dtype=np.int32), lo, np.maximum(hi, lo))
        if on_solution is not None or interrupt is not None:
            def _cb(kind, _msg, out, inp, _data):
                if kind == highspy.cb.HighsCallbackType.kCallbackMipInterrupt:
                    if interrupt is not None:
                        interrupt(out, inp)
                    return
                # a check that raises must not kill the solver: that solution is simply
                # not offered (the round's own solution is checked after the run)
                with contextlib.suppress(Exception):
                    if on_solution is not None:
                        on_solution(np.asarray(out.mip_solution, dtype=float)[: self.nv].copy())

            h.setCallback(_cb, None)
            if on_solution is not None:
                h.startCallback(highspy.cb.HighsCallbackType.kCallbackMipImprovingSolution)
            if interrupt is not None:
                h.startCallback(highspy.cb.HighsCallbackType.kCallbackMipInterrupt)
        try:
            h.run()
            st = h.getModelStatus()
            info = h.getInfo()
            self.status = st
            if clock is not None and st == highspy.HighsModelStatus.kTimeLimit:
                clock.guarded = True
            if st == highspy.HighsModelStatus.kInfeasible:
                return None, float("inf")
            if info.primal_solution_status == 0:  # no feasible point found in time
                return None, float(getattr(info, "mip_dual_bound", -np.inf))
            x = np.asarray(h.getSolution().col_value).copy()
            if self.is_integral and abs(float(self.cost @ x) - info.objective_function_value) > 1e-6 * max(
                    1.0, abs(info.objective_function_value)):
                # measured with HiGHS 1.16: when presolve solves the master outright, the
                # solution returned can be the start given by ``start`` rather than the
                # optimum it reports; solve again without the start
                h.clearSolver()
                h.run()
                info = h.getInfo()
                self.status = h.getModelStatus()
                if info.primal_solution_status == 0:
                    return None, float(getattr(info, "mip_dual_bound", -np.inf))
                x = np.asarray(h.getSolution().col_value).copy()
            bound = info.mip_dual_bound if self.is_integral else info.objective_function_value
            return x, float(bound)
        finally:
            if on_solution is not None:
                h.stopCallback(highspy.cb.HighsCallbackType.kCallbackMipImprovingSolution)
            if interrupt is not None:
                h.stopCallback(highspy.cb.HighsCallbackType.kCallbackMipInterrupt)
            if restricted:
                h.changeColsBounds(self.nv, np.arange(self.nv, dtype=np.int32), np.zeros(self.nv), np.ones(self.nv))

    def start(self, mask: np.ndarray) -> None:
        sol = highspy.HighsSolution()
        sol.col_value = mask[self.var].astype(float)
        sol.value_valid = True
        self.h.setSolution(sol)
