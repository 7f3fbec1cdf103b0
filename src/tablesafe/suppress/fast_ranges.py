"""How far each cell may move, and at what cost, in one run of ``fast``."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tablesafe.problem import EMPTY, PROTECTED, Problem
from tablesafe.suppress.local import INF

__all__ = ["CellRanges", "protection_amounts"]


def protection_amounts(problem: Problem) -> tuple[np.ndarray, np.ndarray]:
    """Upper and lower amounts each sensitive cell must be movable by (0 elsewhere).

    The lower level is capped at the distance to the a priori lower bound. A sliding
    level wider than ``upl + lpl`` raises the upper amount. A sensitive cell with no
    level at all must merely not be exactly recalculable: it gets a small positive
    amount (1% of its value, at least 1, within its bounds).
    """
    sens = problem.sensitive
    v = problem.value
    up_room = problem.upper - v
    down_room = v - problem.lower
    upl = np.where(sens, np.maximum(problem.upl, 0.0), 0.0)
    lpl = np.where(sens, np.minimum(np.maximum(problem.lpl, 0.0), np.maximum(down_room, 0.0)), 0.0)
    extra = np.maximum(problem.spl - upl - lpl, 0.0)
    upl = np.where(sens, upl + extra, 0.0)
    none = sens & (upl <= 0) & (lpl <= 0)
    small = np.maximum(0.01 * np.abs(v), 1.0)
    upl = np.where(none, np.minimum(small, np.where(up_room > 0, up_room, 0.0)), upl)
    lpl = np.where(none & (upl <= 0), np.minimum(small, np.maximum(down_room, 0.0)), lpl)
    return upl, lpl


@dataclass(frozen=True)
class CellRanges:
    """Per cell: what a target needs, how far a cell may move, and what moving it costs.

    Attributes:
        upl, lpl: the amounts each sensitive cell must move up and down
            (:func:`protection_amounts`; 0 elsewhere).
        cap: how far each cell may move either way (the symmetric box around its value
            within its a priori bounds, and its capacity with ``capacity``); ``INF``
            when unbounded.
        room_up, room_down: how far each cell may move up and down on its own (for
            one-way certificates when the symmetric box is too tight).
        scale: the most a cell moves for any target (its range, or its magnitude when
            that is unbounded; ``inf`` when it cannot move).
        cost: the cost of withholding each cell (positive).
        weight: the local LPs' cost per cell (``cost``, times the singleton penalty for
            single-respondent cells).
        free: cells that may move (not protected, not empty, a positive range).
        single: single-respondent cells (all ``False`` without singleton protection).
    """

    upl: np.ndarray
    lpl: np.ndarray
    cap: np.ndarray
    room_up: np.ndarray
    room_down: np.ndarray
    scale: np.ndarray
    cost: np.ndarray
    weight: np.ndarray
    free: np.ndarray
    single: np.ndarray

    @classmethod
    def of(
        cls, problem: Problem, *, singleton: bool, capacity: bool, singleton_penalty: float,
    ) -> CellRanges:
        """The ranges of ``problem`` (``capacity``: limit moves by ``problem.capacity``;
        ``singleton``: penalise single-respondent cells by ``singleton_penalty``)."""
        n = problem.n
        v = problem.value.astype(float)
        sens = problem.sensitive
        upl, lpl = protection_amounts(problem)
        # how far each cell may move either way (symmetric box around the true value)
        down_room = v - problem.lower
        up_room = problem.upper - v
        cap = np.minimum(down_room, up_room)
        limit = problem.capacity if capacity else None
        if limit is not None:
            cap = np.where(sens, cap, np.minimum(cap, np.maximum(limit, 0.0)))
        fixed = np.isin(problem.status, (PROTECTED, EMPTY)) | ~(cap > 0)
        scale = np.where(np.isfinite(cap), cap, np.maximum(np.abs(v), 1.0))
        cap = np.where(np.isfinite(cap), cap, INF)
        room_up = np.where(np.isfinite(up_room), np.maximum(up_room, 0.0), INF)
        room_down = np.where(np.isfinite(down_room), np.maximum(down_room, 0.0), INF)
        if limit is not None:
            room_down = np.where(sens, room_down, np.minimum(room_down, np.maximum(limit, 0.0)))
        # fixed-charge weight per unit of deviation: cost / min(range, amount), see LocalSearch.solve
        abs_cost = np.abs(problem.cost).astype(float)
        abs_cost = np.maximum(abs_cost, 1e-9 * max(1.0, float(abs_cost.max(initial=0.0))))
        single = (
            (np.asarray(problem.contributors) == 1)
            if singleton and problem.contributors is not None
            else np.zeros(n, dtype=bool)
        )
        # singletons: a large weight keeps them out of certificates wherever a local
        # alternative exists (they may still be the only way to protect a cell)
        weight = abs_cost * np.where(single, singleton_penalty, 1.0)
        return cls(
            upl=upl, lpl=lpl, cap=cap, room_up=room_up, room_down=room_down,
            scale=np.where(scale > 0, scale, np.inf), cost=abs_cost, weight=weight, free=~fixed,
            single=single,
        )
