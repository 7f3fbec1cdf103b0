"""Certificates of a local search: how they are built, collected and written out.

A *certificate* of a target is a deviation ``d`` of the table: ``value + d`` agrees with
every relation and a priori bound, differs from the true table only in withheld cells,
and moves the target by its upper (direction ``up``, 0) or lower (``down``, 1)
protection level. A local search finds one symmetric deviation (the target moving by
+1) that serves both directions, scaled by each level (:func:`both_ways`).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from tablesafe.problem import Problem

__all__ = ["CertificateLog", "Certificates", "Part", "both_ways", "certificate_frame", "unit_deviation"]

Part = tuple[int, np.ndarray, np.ndarray]
"""One direction of a certificate: ``(direction, cells, deviation)`` with direction 0
(up) or 1 (down) and the deviation of each of the cells it moves."""

_COLUMNS = ("target", "direction", "cell", "dev", "insider")
_DTYPES = (np.int64, np.int8, np.int64, np.float64, np.int64)


@dataclass(frozen=True)
class Certificates:
    """Certificates as flat arrays, one row per (target, direction, insider, cell).

    ``insider`` indexes the list of held cell sets (the single-respondent cells the
    certificate keeps fixed) or is -1 for the outsider's certificate.
    """

    target: np.ndarray
    direction: np.ndarray
    cell: np.ndarray
    dev: np.ndarray
    insider: np.ndarray

    @classmethod
    def concat(cls, parts: Iterable[Certificates]) -> Certificates:
        """All rows of ``parts``, in order (empty arrays of the right types for none)."""
        parts = list(parts)
        return _join([getattr(p, name) for p in parts] for name in _COLUMNS)


def unit_deviation(
    cells: np.ndarray, d: np.ndarray, amount: float, tol: float,
) -> tuple[np.ndarray, np.ndarray]:
    """The cells a local LP's deviation ``d`` (target moving by ``amount``) moves by more
    than ``tol * amount``, and the deviation scaled to the target moving by +1."""
    keep = np.abs(d) > tol * amount
    return cells[keep], d[keep] / amount


def both_ways(cells: np.ndarray, unit: np.ndarray, upl: float, lpl: float,
              directions: Iterable[int]) -> list[Part]:
    """The certificate parts of a unit deviation: ``upl`` times it up (direction 0),
    ``lpl`` times its opposite down (direction 1), for each of ``directions``."""
    return [(k, cells, unit * upl if k == 0 else -unit * lpl) for k in directions]


@dataclass
class CertificateLog:
    """The certificates found so far, as lists of arrays (cheap to append to).

    Insider certificates are numbered by :meth:`label`: ``labels`` names the cells each
    keeps at their values (joined by ``+``), ``held`` lists them.
    """

    target: list[np.ndarray] = field(default_factory=list)
    direction: list[np.ndarray] = field(default_factory=list)
    cell: list[np.ndarray] = field(default_factory=list)
    dev: list[np.ndarray] = field(default_factory=list)
    insider: list[np.ndarray] = field(default_factory=list)
    labels: list[str] = field(default_factory=list)
    held: list[np.ndarray] = field(default_factory=list)

    def add(self, t: int, parts: list[Part], insider: int) -> None:
        """Record the parts of a certificate of ``t`` (``insider``: from :meth:`label`, or -1)."""
        for direction, cells, dev in parts:
            self.target.append(np.full(len(cells), t, dtype=np.int64))
            self.direction.append(np.full(len(cells), direction, dtype=np.int8))
            self.cell.append(cells)
            self.dev.append(dev)
            self.insider.append(np.full(len(cells), insider, dtype=np.int64))

    def label(self, cells: np.ndarray, names: np.ndarray) -> int:
        """Number a new insider certificate that keeps ``cells`` fixed."""
        self.labels.append("+".join(str(names[c]) for c in cells))
        self.held.append(np.asarray(cells, dtype=np.int64))
        return len(self.labels) - 1

    def flat(self) -> Certificates:
        """The certificates as flat arrays."""
        return _join([self.target, self.direction, self.cell, self.dev, self.insider])


def _join(columns: Iterable[list[np.ndarray]]) -> Certificates:
    """Concatenate each column's arrays (in the order of ``_COLUMNS``) into flat certificates."""
    cols = [np.concatenate(got).astype(dt, copy=False) if got else np.zeros(0, dtype=dt)
            for got, dt in zip(columns, _DTYPES)]
    return Certificates(*cols)


def certificate_frame(problem: Problem, certs: Certificates, labels: list[str]) -> pd.DataFrame:
    """Certificates as a frame: one row per (target, direction, insider, moved cell).

    Columns ``target``, ``direction`` (``up``/``down``), ``cell``, ``value`` (``value +
    deviation``) and ``insider``: the single-respondent cells (joined by ``+``) the
    certificate keeps at their values for their respondents ("" for the outsider's
    certificate). Cells are named by ``problem.names``.
    """
    t, k, c, d, i = certs.target, certs.direction, certs.cell, certs.dev, certs.insider
    order = np.lexsort((c, i, k, t))
    t, k, c, d, i = t[order], k[order], c[order], d[order], i[order]
    names = problem.names.astype(str)
    cats = pd.Index(names)
    if cats.is_unique:
        target = pd.Categorical.from_codes(t, categories=cats)
        cell = pd.Categorical.from_codes(c, categories=cats)
    else:
        target, cell = cats[t], cats[c]
    lab = np.array([*labels, ""], dtype=object)  # index -1: the outsider's certificate
    insider = lab[i] if len(i) else np.zeros(0, dtype=object)
    return pd.DataFrame(
        {
            "target": target,
            "direction": pd.Categorical.from_codes(k.astype(np.int64), categories=["up", "down"]),
            "cell": cell,
            "value": problem.value[c] + d,
            "insider": insider,
        }
    )
