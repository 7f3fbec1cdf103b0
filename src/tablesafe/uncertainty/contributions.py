"""The contribution-level audit: what the best-informed respondents can deduce about the
largest contribution of every sensitive cell from a protected publication (seed 004).

For a sensitive cell with total ``T = w1 x1 + w2 x2 + ... + rest`` and an attacker who
holds some of the other contributions (one respondent, or a coalition as in the p% rule):

    UI(w1 x1) = UI(T) - own contributions - UI(other listed contributions) - UI(rest)
    UI(x1)    = UI(w1 x1) / UI(w1)

``UI(T)`` is what the publication tells about the total, whatever method protected it
(:mod:`tablesafe.uncertainty.published`); the others' contributions and the weights are
known per the :class:`~tablesafe.uncertainty.knowledge.KnowledgeModel`. The needs of both
location rules and the midpoint attack follow from the interval
(:mod:`tablesafe.uncertainty.needs`).

Attackers per sensitive cell: each respondent 2..K among the K largest kept (respondent 2
alone is the p% rule's attacker), the coalition of respondents 2..c+1 when the rule's
coalition size c is above 1, and, for a cell of a single respondent, any user.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from tablesafe.errors import InputError
from tablesafe.problem import Problem
from tablesafe.uncertainty.interval import Intervals
from tablesafe.uncertainty.knowledge import KnowledgeModel
from tablesafe.uncertainty.needs import SIDES, TWO_SIDED, midpoint_close, midpoint_error, needs

COLUMNS = ("cell", "attacker", "published_as", "x1", "ui_low", "ui_high", "width", "left", "right",
           "midpoint", "midpoint_error", "need_sliding", "need_left", "need_right", "protected",
           "midpoint_close", "verdict")
"""Columns of the contribution-level audit table (one row per sensitive cell and attacker)."""


@dataclass(frozen=True)
class ContributionAudit:
    """The contribution-level audit of a publication.

    Attributes:
        table: one row per sensitive cell and attacker (:data:`COLUMNS`); ``need_*`` are
            the units still missing, ``protected`` follows the location rule ``side``,
            ``midpoint_close`` flags a midpoint within ``q`` percent of ``x1``.
        p, coalition: the p% rule's parameters the audit applies.
        q: the closeness (percent) of the midpoint attack.
        side: ``two-sided`` or ``sliding``.
        knowledge: the attacker's a priori knowledge.
        stats: counts and seconds.
    """

    table: pd.DataFrame
    p: float
    coalition: int
    q: float
    side: str
    knowledge: KnowledgeModel
    stats: dict = field(default_factory=dict)

    @property
    def unprotected(self) -> pd.DataFrame:
        """The rows whose largest contribution is not protected under ``side``."""
        return self.table[~self.table["protected"]]

    def most_exposed(self) -> pd.DataFrame:
        """Per audited cell, the row of its most exposed attacker: the largest need under
        ``side`` (then the narrower smaller sub-interval relative to ``x1``); indexed by cell."""
        t = self.table
        if t.empty:
            return t.set_index("cell")
        need = t["need_sliding"] if self.side == "sliding" else np.maximum(t["need_left"], t["need_right"])
        with np.errstate(divide="ignore", invalid="ignore"):
            closeness = np.minimum(t["left"], t["right"]) / np.abs(t["x1"])
        order = (t.assign(_need=need, _close=closeness, _pos=np.arange(len(t)))
                 .sort_values(["_need", "_close", "_pos"], ascending=[False, True, True], kind="stable"))
        return order.drop_duplicates("cell").drop(columns=["_need", "_close", "_pos"]).set_index("cell")

    def summary(self) -> str:
        """One sentence on the result."""
        t = self.table
        cells = t["cell"].nunique()
        bad = self.unprotected["cell"].nunique()
        mid = t.loc[t["midpoint_close"], "cell"].nunique()
        return (f"contribution-level audit (uncertainty intervals; p={self.p:g}, {self.side} protection, "
                f"{self.knowledge.describe()}): {len(t):,} attacks on {cells:,} sensitive cells; "
                f"{bad:,} cells with an attacker that places the largest contribution within p%; "
                f"{mid:,} cells whose interval's midpoint lies within {self.q:g}% of it")


def _attackers(count: np.ndarray, k: int, coalition: int) -> list[tuple[str, tuple[int, ...], np.ndarray]]:
    """(label, positions in the top list, cells it applies to) for every attacker."""
    out: list[tuple[str, tuple[int, ...], np.ndarray]] = [("any user", (), count == 1)]
    for j in range(1, k):
        out.append((f"respondent {j + 1}", (j,), count > j))
    if coalition > 1 and coalition + 1 <= k:
        members = tuple(range(1, coalition + 1))
        out.append((f"respondents 2-{coalition + 1}", members, count > coalition))
    return out


def contribution_audit(problem: Problem, totals: Intervals, published_as: np.ndarray, *, p: float,
                       coalition: int = 1, side: str = TWO_SIDED, knowledge: KnowledgeModel | None = None,
                       q: float | None = None, cells: np.ndarray | None = None) -> ContributionAudit:
    """Audit the largest contribution of each sensitive cell against each attacker.

    Args:
        problem: the assessed problem; it must carry :attr:`Problem.contributions`.
        totals: per cell of the problem, what the publication tells about its total.
        published_as: per cell, how it was published (a word for the table).
        p: the p% rule's p; coalition: how many respondents pool their contributions.
        side: the location rule, ``two-sided`` or ``sliding``.
        knowledge: the attacker's a priori knowledge (default: others within [0, 2x]).
        q: closeness of the midpoint attack in percent (default: ``p``).
        cells: the cells to audit (default: every sensitive cell).
    """
    t0 = time.perf_counter()
    if side not in SIDES:
        raise InputError(f"unknown location rule {side!r}; choose one of {', '.join(SIDES)}")
    con = problem.contributions
    if con is None:
        raise InputError("the contribution-level audit needs each cell's largest contributions: give microdata, "
                         "or tabular input with its top-contribution columns (--top)")
    if not p > 0:
        raise InputError(f"the contribution-level audit needs a positive p (got {p!r}); give uncertainty_p")
    knowledge = knowledge or KnowledgeModel()
    q = p if q is None else float(q)
    idx = np.flatnonzero(problem.sensitive) if cells is None else np.asarray(cells, dtype=np.int64)
    idx = idx[con.count[idx] >= 1]
    neg = con.negative[idx]
    if neg.any():
        first = problem.names[idx[np.flatnonzero(neg)[0]]]
        raise InputError(f"the contribution-level audit assumes non-negative contributions, but sensitive cell "
                         f"{first!r} has a negative one (the knowledge models bound contributions below by 0)")
    top = con.top[idx]
    w = con.weight[idx]
    cnt = con.count[idx]
    k = con.k
    real = np.arange(k)[None, :] < cnt[:, None]
    xs = np.where(real, top, 0.0)
    ws = np.where(real, w, 1.0)
    value = np.asarray(problem.value, dtype=float)[idx]
    rest_w = np.maximum(value - (xs * ws).sum(axis=1), 0.0)
    rest_u = np.maximum(con.unweighted[idx] - xs.sum(axis=1), 0.0)
    weighted = bool(np.any(ws != 1.0)) or bool(np.any(np.abs(con.unweighted[idx] - value) > 1e-9 * np.abs(value)))
    kw_rest = knowledge.kw if weighted else 1.0
    rest = Intervals.of(knowledge.kx_low * rest_u, knowledge.kx * kw_rest * rest_w)
    total = totals[idx]
    x1 = xs[:, 0]
    w1 = knowledge.weight(ws[:, 0])
    frames = []
    for label, members, applies in _attackers(cnt, k, coalition):
        if not applies.any():
            continue
        sel = np.flatnonzero(applies)
        ui = total[sel]
        for j in range(1, k):
            xj = xs[sel, j]
            wj = ws[sel, j]
            if j in members:
                ui = ui - knowledge.weight(wj).scaled(xj)
            elif label != "any user":
                ui = ui - knowledge.others(xj, wj)
        if label != "any user":
            ui = ui - rest[sel]
        ui = ui.divided_by(w1[sel])
        x = x1[sel]
        nd = needs(ui, x, p)
        ok = nd.protected(side)
        close = midpoint_close(ui, x, q)
        verdict = np.where(~nd.inside, "x1 outside the interval (knowledge model or publication inconsistent)",
                           np.where(ok, "protected", "not protected"))
        frames.append(pd.DataFrame({
            "cell": problem.names[idx[sel]], "attacker": label, "published_as": np.asarray(published_as)[idx[sel]],
            "x1": x, "ui_low": ui.low, "ui_high": ui.high, "width": ui.width, "left": ui.left(x),
            "right": ui.right(x), "midpoint": ui.midpoint, "midpoint_error": midpoint_error(ui, x),
            "need_sliding": nd.sliding, "need_left": nd.left, "need_right": nd.right, "protected": ok,
            "midpoint_close": close, "verdict": verdict, "_pos": idx[sel]}))
    table = (pd.concat(frames, ignore_index=True) if frames
             else pd.DataFrame({c: [] for c in (*COLUMNS, "_pos")}))
    table = table.sort_values(["_pos", "attacker"], kind="stable").drop(columns="_pos").reset_index(drop=True)
    table = table.astype({"protected": bool, "midpoint_close": bool})
    stats = {"rows": len(table), "cells": int(table["cell"].nunique()),
             "unprotected_cells": int(table.loc[~table["protected"], "cell"].nunique()),
             "midpoint_cells": int(table.loc[table["midpoint_close"], "cell"].nunique()),
             "seconds": time.perf_counter() - t0}
    return ContributionAudit(table=table[list(COLUMNS)], p=float(p), coalition=int(coalition), q=q, side=side,
                             knowledge=knowledge, stats=stats)
