"""Optimal secondary suppression: the Fischetti-Salazar model solved by cut generation.

Master problem (seed 002 "Secondary tabular data protection methods"; Fischetti and
Salazar, JASA 2000): one binary ``x_i`` per candidate complement, minimise
``sum cost_i x_i`` subject to capacity inequalities. Sensitive cells are fixed withheld,
protected and empty cells fixed published (seed 003 B.1). The inequalities come from
the attacker's LP duals (:mod:`tablesafe.suppress.attacker`):

1. up front, one inequality per sensitive cell, relation and direction (another cell of
   the relation must be withheld and able to move far enough);
2. a few rounds on the LP relaxation (attacker LPs with bounds scaled by fractional x);
3. MIP rounds: solve the master with HiGHS, check the integer pattern with the attacker's
   LPs, add the violated inequalities, repeat. Each unsafe master solution is also
   repaired into a safe pattern (a candidate incumbent), so a time limit always leaves
   the best safe pattern found, with the master's bound as the gap.
"""

from __future__ import annotations

import time

import highspy
import numpy as np

from tablesafe.problem import Problem
from tablesafe.suppress.attacker import Bounds, Cut, row_cuts
from tablesafe.suppress.protection import (
    candidates,
    check,
    cleanup,
    cuts_for,
    failing,
    keys_for,
    repair,
    run_attacks,
)

_HINF = highspy.kHighsInf


class _Master:
    def __init__(self, problem: Problem, cand: np.ndarray, seed: int, threads: int | None = None) -> None:
        self.var = np.flatnonzero(cand)
        self.col_of = np.full(problem.n, -1, dtype=np.int64)
        self.col_of[self.var] = np.arange(len(self.var))
        h = highspy.Highs()
        h.setOptionValue("output_flag", False)
        h.setOptionValue("random_seed", int(seed))
        h.setOptionValue("mip_rel_gap", 1e-5)
        if threads:
            h.setOptionValue("threads", threads)
        nv = len(self.var)
        lp = highspy.HighsLp()
        lp.num_col_ = nv
        lp.num_row_ = 0
        lp.col_cost_ = problem.cost[self.var].astype(float)
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

    def solve(self, time_limit: float, on_solution=None) -> tuple[np.ndarray | None, float]:
        """Solve the master; ``on_solution(x)`` sees every improving integer solution."""
        h = self.h
        h.setOptionValue("time_limit", max(float(time_limit), 0.5))
        if on_solution is not None:
            def _cb(kind, _msg, out, _inp, _data):
                try:
                    on_solution(np.asarray(out.mip_solution, dtype=float)[: self.nv].copy())
                except Exception:  # noqa: BLE001 - a failing check must not kill the solver
                    pass

            h.setCallback(_cb, None)
            h.startCallback(highspy.cb.HighsCallbackType.kCallbackMipImprovingSolution)
        try:
            h.run()
        finally:
            if on_solution is not None:
                h.stopCallback(highspy.cb.HighsCallbackType.kCallbackMipImprovingSolution)
        st = h.getModelStatus()
        info = h.getInfo()
        if st == highspy.HighsModelStatus.kInfeasible:
            return None, float("inf")
        if info.primal_solution_status == 0:  # no feasible point found in time
            return None, float(getattr(info, "mip_dual_bound", -np.inf))
        x = np.asarray(h.getSolution().col_value)
        if self.is_integral:
            bound = info.mip_dual_bound
        else:
            bound = info.objective_function_value
        return x, float(bound)

    def start(self, mask: np.ndarray) -> None:
        sol = highspy.HighsSolution()
        sol.col_value = mask[self.var].astype(float)
        sol.value_valid = True
        self.h.setSolution(sol)


def optimal_pattern(
    problem: Problem,
    bounds: Bounds,
    *,
    time_limit: float | None = None,
    start: np.ndarray | None = None,
    seed: int = 0,
    lp_rounds: int = 20,
    mip_gap: float = 1e-5,
    log=None,
) -> tuple[np.ndarray, dict]:
    """Minimum-cost safe pattern by cut generation; returns (withheld mask, stats).

    ``start``: a safe pattern to warm-start from (otherwise one is built by repair and
    cleanup from the primaries alone). Stats: ``cost``, ``lower_bound``, ``gap``,
    ``optimal`` (proved within the MIP tolerance), ``iterations``, ``cuts``.
    """
    t0 = time.monotonic()
    deadline = t0 + (time_limit if time_limit is not None else 1e12)
    sens = problem.sensitive
    cand = candidates(problem, bounds)
    fixed_one = sens
    say = log or (lambda *_: None)

    # incumbent: a safe pattern, from the fast heuristic's certificates where it succeeds
    # (one local LP per cell instead of repair rounds of whole-table attacks), checked and
    # repaired against this attacker model, then cleaned
    if start is None:
        w = _heuristic_start(problem, bounds)
        atts = check(problem, bounds, w)
        if failing(bounds, atts):
            w, atts, _ = repair(problem, bounds, w, deadline=deadline)
        w, atts, _ = cleanup(problem, bounds, w, atts, deadline=time.monotonic() + 0.1 * (deadline - t0))
    else:
        w = start.copy() | sens
    best = w
    best_cost = float(problem.cost[best & ~sens].sum())
    say(f"start pattern cost {best_cost:.6g}")
    stats = {"iterations": 0, "lp_rounds": 0, "cuts": 0, "lower_bound": 0.0}
    if not cand.any() or best_cost == 0:
        stats.update(cost=best_cost, gap=0.0, optimal=True, lower_bound=best_cost)
        return best, stats

    master = _Master(problem, cand, seed)
    master.h.setOptionValue("mip_rel_gap", float(mip_gap))
    master.add(row_cuts(problem, bounds, fixed_one))
    targets = np.flatnonzero(sens)

    # LP relaxation rounds
    master.integral(False)
    lb = 0.0
    history: list[float] = []
    for rnd in range(lp_rounds):
        if time.monotonic() > deadline:
            break
        xv, val = master.solve(deadline - time.monotonic())
        if xv is None:
            break
        history.append(val)
        if len(history) > 4 and history[-1] <= history[-4] * (1 + 1e-3) + 1e-9:
            lb = max(lb, val)
            break
        lb = max(lb, val)
        x = sens.astype(float)
        x[master.var] = np.clip(xv, 0.0, 1.0)
        keys = keys_for(problem, bounds, x > 0.5, targets)
        atts = run_attacks(problem, bounds, x, keys)
        bad = failing(bounds, atts)
        cuts = [c for c in cuts_for(problem, bounds, atts, bad, fixed_one)
                if float(np.dot(c.coef, x[c.idx])) < c.rhs * (1 - 1e-6)]
        stats["lp_rounds"] = rnd + 1
        if master.add(cuts) == 0:
            break
    say(f"LP bound {lb:.6g} after {stats['lp_rounds']} rounds, {master.ncuts} inequalities")

    # MIP rounds
    integral_costs = bool(np.all(np.abs(problem.cost[cand] - np.round(problem.cost[cand])) < 1e-9))

    def lift(bound: float) -> float:
        return float(np.ceil(bound - 1e-6)) if integral_costs else bound

    pool: list = []

    def on_solution(xv: np.ndarray) -> None:
        x = sens.copy()
        x[master.var] = xv > 0.5
        atts = check(problem, bounds, x)
        bad = failing(bounds, atts)
        if bad:
            pool.extend(cuts_for(problem, bounds, atts, bad, fixed_one))
        else:
            nonlocal best, best_cost
            c = float(problem.cost[x & ~sens].sum())
            if c < best_cost:
                best, best_cost = x, c

    master.integral(True)
    optimal = False
    full_next = False
    while time.monotonic() < deadline:
        stats["iterations"] += 1
        master.start(best)
        pool.clear()
        left = deadline - time.monotonic()
        # bounded rounds: an unsafe master solution found early still yields cuts and,
        # repaired, a candidate incumbent; the last round gets the rest of the time
        xv, bound = master.solve(left if (left < 20 or full_next) else max(10.0, 0.3 * left), on_solution)
        lb = max(lb, lift(bound)) if np.isfinite(bound) else lb
        master.add(pool)
        if xv is None:
            break
        x = sens.copy()
        x[master.var] = xv > 0.5
        atts = check(problem, bounds, x)
        bad = failing(bounds, atts)
        cost = float(problem.cost[x & ~sens].sum())
        mip_done = master.h.getModelStatus() == highspy.HighsModelStatus.kOptimal
        if not bad:
            if cost < best_cost:
                best, best_cost = x, cost
            say(f"round {stats['iterations']}: safe, cost {cost:.6g}")
            if mip_done or full_next:
                optimal = mip_done
                break
            full_next = True  # safe but not proved: let the master use the time left
            continue
        added = master.add(cuts_for(problem, bounds, atts, bad, fixed_one))
        say(f"round {stats['iterations']}: {len(bad)} attacks succeed, +{added} inequalities, bound {lb:.6g}")
        # a safe pattern from this master solution
        if time.monotonic() < deadline:
            try:
                w, watts, _ = repair(problem, bounds, x, deadline=deadline)
                w, _, _ = cleanup(problem, bounds, w, watts,
                                  deadline=time.monotonic() + 0.1 * max(deadline - time.monotonic(), 0.0))
                c = float(problem.cost[w & ~sens].sum())
                if c < best_cost:
                    best, best_cost = w, c
            except Exception:  # noqa: BLE001 - repair failure here only loses a candidate
                pass
        if added == 0 and not pool:
            break
        if best_cost <= lb * (1 + max(mip_gap, 1e-6)):
            optimal = True
            break
    lb = min(lb, best_cost)
    gap = 0.0 if best_cost <= 0 else max(0.0, (best_cost - lb) / best_cost)
    stats.update(cost=best_cost, lower_bound=lb, gap=gap, optimal=optimal or gap <= 1e-6, cuts=master.ncuts,
                 seconds=time.monotonic() - t0)
    return best, stats


def _heuristic_start(problem: Problem, bounds) -> np.ndarray:
    """The ``fast`` pattern as a starting point (the primaries alone if it gives up)."""
    from tablesafe.errors import TablesafeError
    from tablesafe.suppress.fast import fast_pattern

    try:
        pat = fast_pattern(problem, singleton=bool(bounds.singleton.any()),
                           capacity=bool(np.any(bounds.dn < bounds.tdn)), workers=1)
    except TablesafeError:
        return problem.sensitive.copy()
    return np.asarray(pat.withheld, dtype=bool) | problem.sensitive
