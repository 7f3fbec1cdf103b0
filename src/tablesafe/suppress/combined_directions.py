"""Insiders' certificates combined from directions already found, without a search.

A single respondent of a withheld cell ``s`` knows ``s``'s value, so a target ``t``
whose certificate moves ``s`` needs another one that keeps ``s`` fixed (``fast``'s first
pass, :meth:`~tablesafe.suppress.fast_first_pass.FirstPass._insider_certificates`).
Every symmetric certificate the pass found is a direction ``u`` (the relations kept,
only withheld cells moved) that may be taken either way up to ``rho_u`` times, the
largest scale within every moved cell's symmetric range. Any combination
``e = sum_j mu_j u_j`` keeps the relations, moves only withheld cells, and stays within
every range up to the scale ``1 / sum_j |mu_j| / rho_j``: ``lambda e`` is then a convex
combination of the feasible ``+-rho_j u_j`` and of no move at all, and the ranges form
a convex box around the published values. So where the directions that move ``t``
combine into one that moves ``t`` by 1 and none of the insiders' cells, at a scale of
at least ``t``'s protection level, that combination is the insiders' certificate: no
LP on the thousands of withheld cells of a large box, and no cell added.

Finding the cheapest such combination is a small LP over the directions (a column per
direction, a row for ``t`` and one per insider's cell). With one insider's cell it has
two rows, so an optimal combination uses at most two directions: every pair is tried
at once (:func:`_best_pair`). With more, HiGHS solves it
(:meth:`CombinedDirections._best_lp`).

Measured on the generated 13,851-cell three-way table with holdings (``fast``, no
limit, sixty-seventh session, by a script that only tried the combination beside the
usual search): of 3,373 targets that needed insiders' certificates, 1,128 had such a
combination among the directions found before them (192 of 327 with one insider's
cell, 936 of 3,046 with more), where the search took 62 s in all.
"""

from __future__ import annotations

from collections import defaultdict

import numpy as np

from tablesafe.suppress.local.lp import INF, LocalLP

__all__ = ["CombinedDirections"]


class CombinedDirections:
    """The symmetric directions a pass found, indexed by the targets they move.

    Args:
        cap: per cell, how far it may move either way (``CellRanges.cap``).
        targets: which cells are targets (only their directions are looked up).
    """

    def __init__(self, cap: np.ndarray, targets: np.ndarray) -> None:
        self._cap = cap
        self._targets = targets
        self._cells: list[np.ndarray] = []  # sorted
        self._unit: list[np.ndarray] = []  # in the order of _cells
        self._rho: list[float] = []
        self._at: defaultdict[int, list[int]] = defaultdict(list)
        self._lp: LocalLP | None = None
        self.combined = 0
        """Insiders' certificates found by combination so far."""

    def add(self, cells: np.ndarray, unit: np.ndarray) -> None:
        """Record a direction: ``unit`` moves each of ``cells`` (relations kept)."""
        order = np.argsort(cells, kind="stable")
        cells, unit = cells[order], unit[order]
        moved = np.abs(unit)
        rho = float(np.min(self._cap[cells] / moved)) if len(cells) else 0.0
        if not rho > 0.0:
            return
        j = len(self._cells)
        self._cells.append(cells)
        self._unit.append(unit)
        self._rho.append(rho)
        for c in cells[self._targets[cells]].tolist():
            self._at[c].append(j)

    def certificate(self, t: int, held: np.ndarray, amount: float, withheld: np.ndarray,
                    tol: float) -> tuple[np.ndarray, np.ndarray] | None:
        """A direction that moves ``t`` by +1 and none of ``held``, which may be taken
        either way by ``amount`` within every cell's symmetric range and moves only
        ``withheld`` cells (and ``t``): ``(cells, unit)``, or ``None`` when the
        directions found so far give none."""
        cand = self._at.get(t)
        if not cand:
            return None
        rows = np.concatenate(([t], np.asarray(held, dtype=np.int64)))
        a = np.zeros((len(rows), len(cand)))
        for k, j in enumerate(cand):
            cells = self._cells[j]
            pos = np.searchsorted(cells, rows)
            hit = (pos < len(cells)) & (cells[np.minimum(pos, len(cells) - 1)] == rows)
            a[hit, k] = self._unit[j][pos[hit]]
        rho = np.array([self._rho[j] for j in cand])
        mu = _best_pair(a, rho) if len(rows) == 2 else self._best_lp(a, rho)
        if mu is None:
            return None
        use = np.flatnonzero(mu)
        cells = np.concatenate([self._cells[cand[k]] for k in use])
        dev = np.concatenate([mu[k] * self._unit[cand[k]] for k in use])
        cells, at = np.unique(cells, return_inverse=True)
        e = np.bincount(at, weights=dev, minlength=len(cells))
        on_held = np.isin(cells, rows[1:])
        if np.abs(e[on_held]).max(initial=0.0) > 1e-7 * np.abs(e).max():
            return None  # not cancelled (numerically): no certificate
        e[on_held] = 0.0  # (the combination's own rounding)
        keep = np.abs(e) > tol
        cells, e = cells[keep], e[keep]
        i = np.searchsorted(cells, t)
        if i == len(cells) or cells[i] != t or abs(e[i] - 1.0) > 1e-6:
            return None
        e = e / e[i]
        # the tests that make it a certificate, on the combination itself
        if float(np.min(self._cap[cells] / np.abs(e))) < amount:
            return None
        if not withheld[cells[cells != t]].all():
            return None
        self.combined += 1
        return cells, e

    def _best_lp(self, a: np.ndarray, rho: np.ndarray) -> np.ndarray | None:
        """The combination of least ``sum |mu| / rho`` with ``a[0] @ mu = 1`` and
        ``a[1:] @ mu = 0``, by a small LP (a fixed column carries the 1)."""
        if self._lp is None:
            self._lp = LocalLP()
        k = a.shape[1]
        full = np.hstack([np.eye(a.shape[0], 1) * -1.0, a])  # column 0: the fixed 1
        nz = np.nonzero(full.T)
        index = nz[1].astype(np.int64)
        value = full.T[nz]
        indptr = np.zeros(k + 2, dtype=np.int64)
        np.cumsum(np.bincount(nz[0], minlength=k + 1), out=indptr[1:])
        cost = np.concatenate(([0.0], 1.0 / rho))
        caps = np.full(k + 1, INF)
        d = self._lp.solve(indptr, index, value, a.shape[0], cost, caps, caps, 0, 1.0)
        if d is None:
            return None
        mu = d[1:]
        mu[np.abs(mu) <= 1e-12 * np.abs(mu).max(initial=0.0)] = 0.0
        return mu


def _best_pair(a: np.ndarray, rho: np.ndarray) -> np.ndarray | None:
    """With one insider's cell (``a`` of two rows: the target's and the held cell's
    movement by each direction): the cheapest of the single directions that leave the
    held cell alone and of the pairs that cancel its movement."""
    at, held = a
    k = len(at)
    best, mu = INF, None
    alone = (held == 0.0) & (at != 0.0)
    if alone.any():
        cost = np.full(k, INF)
        cost[alone] = 1.0 / (np.abs(at[alone]) * rho[alone])
        one = int(np.argmin(cost))
        best, mu = float(cost[one]), np.zeros(k)
        mu[one] = 1.0 / at[one]
    first, second = np.triu_indices(k, 1)
    det = at[first] * held[second] - at[second] * held[first]
    ok = np.abs(det) > 1e-12 * np.maximum(np.abs(at[first] * held[second]), np.abs(at[second] * held[first]))
    if ok.any():
        first, second, det = first[ok], second[ok], det[ok]
        mi, mj = held[second] / det, -held[first] / det
        cost = np.abs(mi) / rho[first] + np.abs(mj) / rho[second]
        p = int(np.argmin(cost))
        if cost[p] < best:
            mu = np.zeros(k)
            mu[first[p]], mu[second[p]] = mi[p], mj[p]
    return mu
