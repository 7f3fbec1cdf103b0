"""One reusable HiGHS instance for the many small protection LPs of a local search."""

from __future__ import annotations

import time

import highspy
import numpy as np

from tablesafe.audit.lp import new_highs

__all__ = ["INF", "LPTimeLimit", "LocalLP"]

INF: float = highspy.kHighsInf
"""HiGHS's infinity (an unbounded deviation)."""
_NO_LIMIT = 2**31 - 1
_SETTLED = (highspy.HighsModelStatus.kOptimal, highspy.HighsModelStatus.kInfeasible)


class LPTimeLimit(Exception):
    """A local LP ran past :attr:`LocalLP.time_cap`: neither a deviation nor a proof that
    there is none (the caller protects its target another way)."""


class LocalLP:
    """One reusable HiGHS instance for the many small neighbourhood LPs.

    LPs are solved by the simplex method without presolve (measured: 2.5x faster on
    small LPs). An LP on more than :attr:`presolve_from` cells that the simplex method
    has not solved within :attr:`ipm_after` times as many iterations as it has cells goes
    to the interior point solver with presolve. Measured on Castro's instances (``fast``,
    one process, CPU seconds): HIER16 (3,563 cells; whole-block LPs) 42 s with the
    interior point method for every large LP, 87 s with the simplex method alone, 43 s
    switching after k/4 iterations (57 s after k); DALE (16,514 cells; searches among
    thousands of withheld cells that the simplex method solves in a few iterations)
    175 s, 17 s and 15 s. Measured again in the twenty-second session (``fast`` on one
    process, wall seconds, switching after k/4, k/2 and k iterations): HIER16 95.5, 92.9
    and 117.6 s; DALE 31.6 and 30.5 s (k/4, k); the 13,851-cell three-way table 120.1,
    100.6 and 92.7 s; the 13,167-cell two-way table 39.5 and 43.6 s (k/4, k); a one-level
    14 x 14 x 14 table 268.0, 212.9 and 112.2 s (its second pass's LPs of about 1,400
    cells need 0.4-1 k iterations: the simplex method takes 36 ms where switching took
    82 ms). Hence k: the same patterns but on the one-level table, twice as fast there and
    a quarter faster on the three-way table, a quarter slower on HIER16.

    Attributes:
        presolve_from: number of cells above which presolve and the interior point
            solver are used.
        solves: LPs solved so far (the work measure of the second pass's budget).
        longest: wall seconds of the slowest LP so far (a run short of time hurries
            when less than twice this is left).
        ipm_after: simplex iterations, per cell of the LP, after which a large LP goes
            to the interior point method.
        retries: LPs solved a second time, with presolve and the interior point method,
            after the simplex method ended neither optimal nor infeasible (numerical
            trouble).
        time_cap: seconds one LP may take (``None``: no cap); an LP past it raises
            :class:`LPTimeLimit`. A search short of time sets it, so that one LP on a
            large block cannot take it past its limit (a whole-block LP of 7,125 cells
            of the generated four-way ``rand333`` took 1.5-5.2 s, the last from an
            interior point run after the simplex method's iteration limit).
    """

    def __init__(self) -> None:
        h = new_highs()
        h.setOptionValue("solver", "simplex")
        h.setOptionValue("presolve", "off")
        self._presolve = False
        self.presolve_from = 1_000
        self.ipm_after = 1.0
        self.h = h
        self.solves = 0
        self.retries = 0
        self.longest = 0.0
        self.time_cap: float | None = None
        self._capped = False  # whether HiGHS's time limit is set

    def _cap(self) -> None:
        """HiGHS's time limit (counted over the instance's whole life) at
        :attr:`time_cap` seconds from now, or none."""
        if self.time_cap is not None:
            self.h.setOptionValue("time_limit", float(self.h.getRunTime()) + max(float(self.time_cap), 0.0))
            self._capped = True
        elif self._capped:
            self.h.setOptionValue("time_limit", INF)
            self._capped = False

    def _use_ipm(self, on: bool) -> None:
        """Presolve and the interior point method (``on``), or the plain simplex method."""
        if on != self._presolve:
            self.h.setOptionValue("presolve", "on" if on else "off")
            self.h.setOptionValue("solver", "ipm" if on else "simplex")
            self._presolve = on

    def solve(
        self,
        indptr: np.ndarray,
        index: np.ndarray,
        value: np.ndarray,
        nrow: int,
        cost: np.ndarray,
        cap_up: np.ndarray,
        cap_down: np.ndarray,
        target_pos: int,
        amount: float,
    ) -> np.ndarray | None:
        """Minimise ``cost . (p + q)`` with ``M (p - q) = 0``, ``p_t = amount``; d or None.

        ``M`` is given column-wise (``indptr``, ``index``, ``value``, ``nrow`` rows);
        ``p <= cap_up`` and ``q <= cap_down`` bound the upward and downward deviations.
        Returns the deviation ``d = p - q`` of an optimal solution, or ``None`` when
        the LP has none (infeasible).

        Raises:
            LPTimeLimit: past :attr:`time_cap`.
        """
        k = len(indptr) - 1
        # columns: p_0..p_{k-1}, q_0..q_{k-1}
        start = np.concatenate((indptr[:-1], indptr[:-1] + indptr[-1])).astype(np.int32)
        index = np.concatenate((index, index)).astype(np.int32)
        value = np.concatenate((value, -value)).astype(np.float64)
        col_cost = np.concatenate((cost, cost))
        lo = np.zeros(2 * k)
        hi = np.concatenate((cap_up, cap_down))
        lo[target_pos] = hi[target_pos] = amount
        hi[k + target_pos] = 0.0
        zeros = np.zeros(nrow)
        big = k > self.presolve_from
        # every LP starts with the simplex method; a large one that needs more than
        # ``ipm_after * k`` iterations goes to the interior point method
        began = time.perf_counter()
        self._use_ipm(False)
        self.h.setOptionValue("simplex_iteration_limit", max(int(self.ipm_after * k), 1) if big else _NO_LIMIT)
        self.h.clearSolver()
        self.h.passModel(
            2 * k, nrow, len(value),
            int(highspy.MatrixFormat.kColwise), int(highspy.ObjSense.kMinimize), 0.0, col_cost, lo, hi, zeros, zeros, start, index, value,
            np.zeros(2 * k, dtype=np.int32),
        )
        self._cap()
        self.h.run()
        status = self.h.getModelStatus()
        if status == highspy.HighsModelStatus.kTimeLimit:
            self.longest = max(self.longest, time.perf_counter() - began)
            raise LPTimeLimit(f"a local LP of {k} cells ran past its {self.time_cap} s")
        if status not in _SETTLED:
            # again with presolve and the interior point method: a large LP past its
            # simplex iterations, or numerical trouble (a retry; Castro's TOYSARAH: levels
            # of 4.1e9 beside cells of a few units, status unknown after the simplex
            # method without presolve) before the target is called unprotectable.
            # (Solving it scaled so that the target moves by 1 also settled it, but the
            # solution scaled back broke the relations by more than the certificate
            # check allows.)
            if not (big and status == highspy.HighsModelStatus.kIterationLimit):
                self.retries += 1
            self._use_ipm(True)
            self.h.clearSolver()
            self.h.run()
            if self.h.getModelStatus() == highspy.HighsModelStatus.kTimeLimit:
                self.longest = max(self.longest, time.perf_counter() - began)
                raise LPTimeLimit(f"a local LP of {k} cells ran past its {self.time_cap} s")
        self.solves += 1
        self.longest = max(self.longest, time.perf_counter() - began)
        if self.h.getModelStatus() != highspy.HighsModelStatus.kOptimal:
            return None
        x = np.asarray(self.h.getSolution().col_value)
        return x[:k] - x[k:]
