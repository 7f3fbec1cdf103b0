"""One independent block of unknown withheld cells and its warm-started HiGHS models.

Numerics: HiGHS's feasibility tolerances are absolute (``1e-7``), so a block whose
values reach ``1e11`` (Castro's TOYSARAH) cannot be solved to that accuracy in double
precision and is wrongly declared infeasible. Such a block is solved in units of a power
of two (:attr:`Block.scale`, exact in binary floating point): variables ``x / scale``,
right-hand sides and bounds divided alike, results multiplied back. Blocks whose values
stay below :data:`SCALE_ABOVE` keep their units (scale 1) unless HiGHS reports them
infeasible: the true table is always feasible, so the block is then re-solved scaled
before the error is believed.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import highspy
import numpy as np
import scipy.sparse as sp

from tablesafe.audit import lp as _lp
from tablesafe.errors import InfeasibleError

SCALE_ABOVE = 2.0 ** 30
"""Largest magnitude (true values, right-hand sides) solved in the table's units."""
SCALE_TO = 2.0 ** 17
"""Magnitude the largest value of a scaled block is brought to (about 1.3e5)."""


def block_scale(*arrays: np.ndarray, force: bool = False) -> float:
    """The power of two that brings the largest finite magnitude near :data:`SCALE_TO`
    (1.0 when it is below :data:`SCALE_ABOVE`, unless ``force``).

    Pass the true values and right-hand sides, not the a priori bounds: files write an
    absent bound as a huge number (JJ: ``1e30``), which HiGHS reads as infinite
    (:data:`tablesafe.audit.lp.INFINITE_BOUND`) and which must not set the units.
    """
    big = 0.0
    for arr in arrays:
        a = np.abs(np.asarray(arr, dtype=float))
        a = a[np.isfinite(a) & (a < _lp.INFINITE_BOUND)]
        if a.size:
            big = max(big, float(a.max()))
    if big <= 0.0 or (big <= SCALE_ABOVE and not force):
        return 1.0
    return float(2.0 ** math.floor(math.log2(big / SCALE_TO)))


@dataclass
class Block:
    """One independent group of unknown withheld cells and the HiGHS model over it."""

    cols: np.ndarray          # global cell indices of the block's variables
    rows: np.ndarray          # global relation indices touching the block
    matrix: sp.csr_matrix     # relations restricted to rows x cols
    rhs: np.ndarray           # right-hand sides after moving known cells over
    lower: np.ndarray
    upper: np.ndarray
    truth: np.ndarray         # true values of the block's cells
    highs: highspy.Highs | None = None
    _dev: highspy.Highs | None = None
    _last: int = -1
    solves: int = 0
    scale: float | None = None   # units of the HiGHS models (power of two; None: not chosen)
    rescaled: int = 0            # times a block was rebuilt scaled after "infeasible"

    def _units(self) -> float:
        """The block's scale, chosen on first use."""
        if self.scale is None:
            self.scale = block_scale(self.rhs, self.truth)
        return self.scale

    def model(self):
        """The block's HiGHS model, built on first use."""
        if self.highs is None:
            s = self._units()
            h = _lp.new_highs()
            h.setOptionValue("presolve", "off")
            # Only the cost changes between solves: the basis stays primal feasible, so
            # primal simplex re-optimises far faster than dual (5x on 4,000-cell blocks).
            h.setOptionValue("simplex_strategy", 4)
            # Devex pricing: 1.5x fewer seconds than the default on a 5,292-cell 3-D block
            # (steepest edge: 6x more; dual simplex with devex: 15x more).
            h.setOptionValue("simplex_primal_edge_weight_strategy", 1)
            _lp.pass_lp(
                h, np.zeros(len(self.cols)), self.lower / s, self.upper / s,
                self.matrix, self.rhs / s, self.rhs / s,
            )
            self.highs = h
            self._last = -1
        return self.highs

    def _rescale(self) -> bool:
        """Rebuild the models in scaled units after an 'infeasible'; False if already."""
        s = block_scale(self.rhs, self.truth, force=True)
        if s == self._units() or s == 1.0:
            return False
        old = self._units()
        saved = None
        if self.highs is not None:     # keep bounds changed by insider scenarios
            lp = self.highs.getLp()
            saved = (np.asarray(lp.col_lower_, dtype=float) * old,
                     np.asarray(lp.col_upper_, dtype=float) * old)
        self.scale = s
        self.highs = None
        self._dev = None
        self.rescaled += 1
        self.model()
        if saved is not None:
            lo, hi = saved
            lo[lo <= -_lp.INF * old] = -np.inf
            hi[hi >= _lp.INF * old] = np.inf
            changed = np.flatnonzero((lo != self.lower) | (hi != self.upper))
            if changed.size:
                self.set_bounds(changed, lo[changed], hi[changed])
        return True

    def optimise(self, k: int, direction: int) -> tuple[float, np.ndarray | None]:
        """Max (``direction=+1``) or min (``-1``) of local variable ``k``.

        Returns the optimum (``inf``/``-inf`` when unbounded) and the optimal point.
        """
        h = self.model()
        if self._last == -2:           # after optimise_sum: every cost may be set
            nb = len(self.cols)
            cost = np.zeros(nb)
            cost[k] = -float(direction)
            h.changeColsCost(nb, np.arange(nb, dtype=np.int32), cost)
        else:
            idx = [k] if self._last in (-1, k) else [self._last, k]
            costs = [0.0] * (len(idx) - 1) + [-float(direction)]
            h.changeColsCost(len(idx), np.asarray(idx, dtype=np.int32), np.asarray(costs))
        self._last = k
        h.run()
        self.solves += 1
        st = _lp.status(h)
        if st not in ("optimal", "unbounded", "unbounded_or_infeasible"):
            # Rare simplex stalls on degenerate warm starts, and "infeasible" verdicts on
            # badly scaled blocks (the true table is always feasible): solve again from
            # scratch before believing it, then in scaled units.
            h.clearSolver()
            h.setOptionValue("presolve", "on")
            h.run()
            h.setOptionValue("presolve", "off")
            st = _lp.status(h)
            if st == "infeasible" and self._rescale():
                return self.optimise(k, direction)
        if st == "optimal":
            x = _lp.col_values(h) * self._units()
            return float(x[k]), x
        if st in ("unbounded", "unbounded_or_infeasible"):
            return direction * np.inf, None
        if st == "infeasible":
            raise InfeasibleError(
                "the published cells, relations and a priori bounds admit no table "
                f"(block containing cell index {int(self.cols[k])}); check the bounds"
            )
        raise InfeasibleError(f"HiGHS stopped with status {st!r} on an audit LP")

    def optimise_sum(self, weights: np.ndarray) -> np.ndarray | None:
        """A feasible table maximising ``weights @ x`` (None when unbounded or not
        solved): one LP that moves many cells towards their goals at once."""
        h = self.model()
        nb = len(self.cols)
        h.changeColsCost(nb, np.arange(nb, dtype=np.int32), -np.asarray(weights, dtype=float))
        self._last = -2
        h.run()
        self.solves += 1
        if _lp.status(h) != "optimal":
            return None
        return _lp.col_values(h) * self._units()

    def smallest_move(self, k: int, direction: int, need: float) -> np.ndarray | None:
        """The feasible table closest to the truth (sum of absolute deviations) that
        moves local cell ``k`` by at least ``need`` in ``direction``; None if none.

        Such a certificate touches few cells (a short cycle of the table), so it stays
        valid under most insider knowledge. Variables ``d+``, ``d-`` with
        ``x = truth + d+ - d-``, ``A (d+ - d-) = 0``, ``d+ <= upper - truth``,
        ``d- <= truth - lower`` (all in the block's units).
        """
        nb = len(self.cols)
        s = self._units()
        if self._dev is None:
            h = _lp.new_highs()
            h.setOptionValue("presolve", "off")
            with np.errstate(invalid="ignore"):
                up_room = np.maximum(self.upper - self.truth, 0.0) / s
                dn_room = np.maximum(self.truth - self.lower, 0.0) / s
            mat = sp.hstack([self.matrix, -self.matrix]).tocsr()
            zero = np.zeros(self.matrix.shape[0])
            _lp.pass_lp(h, np.ones(2 * nb), np.zeros(2 * nb),
                        np.concatenate([up_room, dn_room]), mat, zero, zero)
            self._dev = h
        h = self._dev
        col = k if direction > 0 else nb + k
        room = (self.upper[k] - self.truth[k]) if direction > 0 else (self.truth[k] - self.lower[k])
        if need > room + 1e-9 * (1 + abs(need)):
            return None
        other = nb + k if direction > 0 else k
        other_room = (self.truth[k] - self.lower[k]) if direction > 0 else \
            (self.upper[k] - self.truth[k])
        fin = _lp._finite(np.array([room, other_room]) / s)
        h.changeColBounds(col, float(need) / s, float(fin[0]))
        h.changeColBounds(other, 0.0, 0.0)       # no opposite move of the target itself
        try:
            h.run()
            st = _lp.status(h)
            if st not in ("optimal", "infeasible"):
                h.clearSolver()
                h.run()
                st = _lp.status(h)
        finally:
            h.changeColBounds(col, 0.0, float(fin[0]))
            h.changeColBounds(other, 0.0, float(max(fin[1], 0.0)))
        if st != "optimal":
            return None
        d = _lp.col_values(h) * s
        return self.truth + d[:nb] - d[nb:]

    def set_bounds(self, k: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> None:
        """Change bounds of local variables (insider scenarios; in the table's units)."""
        h = self.model()
        s = self._units()
        k = np.asarray(k, dtype=np.int32)
        lo = np.asarray(lo, dtype=float)
        hi = np.asarray(hi, dtype=float)
        h.changeColsBounds(len(k), k, _lp._finite(lo / s), _lp._finite(hi / s))
