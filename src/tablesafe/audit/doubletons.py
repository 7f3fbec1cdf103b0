"""A smaller LP for a block: relations between two unknown cells eliminated.

A relation that links exactly two unknowns, ``a x_u + b x_v = c`` (a total and its one
withheld child beside published ones, two withheld cells of a line), fixes one of them
given the other: ``x_v = (c - a x_u) / b``. Repeating this while relations collapse to two
unknowns writes every cell of the block as ``x = alpha + beta * y`` with ``y`` one of
fewer *root* variables; each cell's a priori bounds become bounds on its root (an
interval, divided by ``beta``), and the remaining relations are rewritten over the
roots. The tables of the reduced block and of the block correspond one to one, so a
cell's largest value is ``alpha + beta * max y`` (``min y`` when ``beta < 0``), and two
cells on one root share their LPs.

On the 13,851-cell three-way table's ``fast`` pattern the block of 7,903 unknowns and
8,979 relations shrinks to 5,746 roots and 6,611 relations; its 3,847 sensitive cells
sit on 3,064 roots, and each LP runs about 15 % faster.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from tablesafe.audit.block import Block

_ZERO = 1e-12
"""Coefficients of a rewritten relation smaller than this (in absolute value) cancel."""


@dataclass(frozen=True)
class Reduced:
    """A block over its roots: local cell ``i`` of the original block is
    ``alpha[i] + beta[i] * y[pos[i]]`` for ``y`` the variables of :attr:`block`."""

    block: Block
    pos: np.ndarray
    alpha: np.ndarray
    beta: np.ndarray

    def cell_bounds(self, lo: np.ndarray, hi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Smallest and largest value of every original cell from its root's."""
        ylo, yhi = lo[self.pos], hi[self.pos]
        up = self.beta > 0
        with np.errstate(invalid="ignore"):
            a = self.alpha + self.beta * ylo
            b = self.alpha + self.beta * yhi
        return np.where(up, a, b), np.where(up, b, a)


def _row(a: sp.csr_matrix, i: int, root: np.ndarray, alpha: np.ndarray, beta: np.ndarray,
         rhs: float) -> tuple[dict[int, float], float]:
    """Relation ``i`` over the roots: ``{root: coefficient}`` and its right-hand side."""
    lo, hi = a.indptr[i], a.indptr[i + 1]
    coef: dict[int, float] = {}
    const = 0.0
    for j, v in zip(a.indices[lo:hi].tolist(), a.data[lo:hi].tolist()):
        r = int(root[j])
        coef[r] = coef.get(r, 0.0) + v * float(beta[j])
        const += v * float(alpha[j])
    return {r: c for r, c in coef.items() if abs(c) > _ZERO}, rhs - const


def eliminate_doubletons(b: Block) -> Reduced | None:
    """The block with its two-unknown relations eliminated (None when it has none)."""
    a = sp.csr_matrix(b.matrix)
    m, n = a.shape
    root = np.arange(n)
    alpha = np.zeros(n)
    beta = np.ones(n)
    members: dict[int, list[int]] = {i: [i] for i in range(n)}
    alive = np.ones(m, dtype=bool)
    changed = True
    while changed:
        changed = False
        for i in np.flatnonzero(alive).tolist():
            coef, c = _row(a, i, root, alpha, beta, float(b.rhs[i]))
            if len(coef) == 0:
                alive[i] = False        # the relation holds for every table (the truth satisfies it)
            elif len(coef) == 2:
                (ru, cu), (rv, cv) = sorted(coef.items())
                mv = members.pop(rv)    # y_rv = (c - cu y_ru) / cv
                alpha[mv] += beta[mv] * (c / cv)
                beta[mv] *= -cu / cv
                root[mv] = ru
                members[ru].extend(mv)
                alive[i] = False
                changed = True
    if alive.all():
        return None
    roots = np.array(sorted(members), dtype=np.int64)
    pos = np.full(n, -1, dtype=np.int64)
    pos[roots] = np.arange(len(roots))
    pos = pos[root]
    rows, cols, vals, rhs = [], [], [], []
    for k, i in enumerate(np.flatnonzero(alive).tolist()):
        coef, c = _row(a, i, root, alpha, beta, float(b.rhs[i]))
        for r, v in coef.items():
            rows.append(k)
            cols.append(int(pos[r]))
            vals.append(v)
        rhs.append(c)
    nr = len(roots)
    matrix = sp.csr_matrix((vals, (rows, cols)), shape=(len(rhs), nr))
    with np.errstate(divide="ignore", invalid="ignore"):
        lo_v = np.where(beta > 0, (b.lower - alpha) / beta, (b.upper - alpha) / beta)
        hi_v = np.where(beta > 0, (b.upper - alpha) / beta, (b.lower - alpha) / beta)
    lower = np.full(nr, -np.inf)
    upper = np.full(nr, np.inf)
    np.maximum.at(lower, pos, np.nan_to_num(lo_v, nan=-np.inf))
    np.minimum.at(upper, pos, np.nan_to_num(hi_v, nan=np.inf))
    reduced = Block(cols=b.cols[roots], rows=b.rows[np.flatnonzero(alive)], matrix=matrix,
                    rhs=np.asarray(rhs, dtype=float), lower=lower, upper=upper,
                    truth=b.truth[roots].astype(float))
    return Reduced(block=reduced, pos=pos, alpha=alpha, beta=beta)
