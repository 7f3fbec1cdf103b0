"""Verdicts per sensitive cell and the result object of an audit."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from tablesafe.problem import SECONDARY, Problem

REL_TOL = 1e-6
"""Relative tolerance of the verdicts: a bound within ``REL_TOL * max(1, |value|)`` of a
required point counts as reaching it (LP solutions carry rounding errors of ~1e-9)."""

VERDICTS = ("protected", "exact", "upper", "lower", "sliding")


def verdicts(problem: Problem, lower: np.ndarray, upper: np.ndarray,
             cells: np.ndarray | None = None, *, rel_tol: float = REL_TOL) -> np.ndarray:
    """Verdict per cell from attacker bounds (operational criterion 1).

    For each sensitive cell (or each index in ``cells``), in this order of precedence:
    ``exact`` when the interval has (numerically) zero width; ``upper`` when the upper
    bound stays below ``value + upl``; ``lower`` when the lower bound stays above
    ``value - lpl`` where ``lpl`` is capped at the distance to the a priori lower bound
    (DESIGN "Semantics"); ``sliding`` when the width is below ``spl``; else
    ``protected``. Cells not examined get ``""``.
    """
    n = problem.n
    out = np.full(n, "", dtype=object)
    idx = np.flatnonzero(problem.sensitive) if cells is None else np.asarray(cells, dtype=int)
    if idx.size == 0:
        return out
    v = problem.value[idx]
    lo = lower[idx]
    hi = upper[idx]
    tol = rel_tol * np.maximum(1.0, np.abs(v))
    lpl = np.minimum(problem.lpl[idx], v - problem.lower[idx])
    res = np.full(idx.size, "protected", dtype=object)
    with np.errstate(invalid="ignore"):
        width = hi - lo
        res[(width < problem.spl[idx] - tol)] = "sliding"
        res[lo > v - lpl + tol] = "lower"
        res[hi < v + problem.upl[idx] - tol] = "upper"
        res[width <= tol] = "exact"
    out[idx] = res
    return out


def verdict_goals(problem: Problem, *, rel_tol: float = REL_TOL) -> tuple[np.ndarray, np.ndarray]:
    """Per cell, the values an attacker's interval must reach for a ``protected`` verdict.

    ``(up, down)``: ``value + upl`` and ``value - lpl`` (``lpl`` capped at the distance
    to the lower a priori bound), each at least ``4 * rel_tol * max(1, |value|)`` away
    from the value (but not below the lower bound), so that an interval reaching both
    goals can never look ``exact``, even when an insider later pins one side. A bound
    that reaches its goal cannot change the verdict of :func:`verdicts` however much
    further it goes, so the audit stops looking there. Cells whose verdict depends on
    the exact width (a sliding level) and non-sensitive cells get ``inf``/``-inf``:
    their intervals are computed exactly.
    """
    v = problem.value
    tol = rel_tol * np.maximum(1.0, np.abs(v))
    lpl = np.maximum(np.minimum(problem.lpl, v - problem.lower), 0.0)
    up = v + np.maximum(problem.upl, 4 * tol)
    down = np.maximum(v - np.maximum(lpl, 4 * tol), problem.lower)
    exact = (problem.spl > 0) | ~problem.sensitive
    return np.where(exact, np.inf, up), np.where(exact, -np.inf, down)


def verdict_of(problem: Problem, i: int, lower: float, upper: float, *,
               rel_tol: float = REL_TOL) -> str:
    """The verdict of one cell for given attacker bounds (same rule as :func:`verdicts`)."""
    v = problem.value[i]
    tol = rel_tol * max(1.0, abs(v))
    lpl = min(problem.lpl[i], v - problem.lower[i])
    width = upper - lower
    if width <= tol:
        return "exact"
    if upper < v + problem.upl[i] - tol:
        return "upper"
    if lower > v - lpl + tol:
        return "lower"
    if width < problem.spl[i] - tol:
        return "sliding"
    return "protected"


@dataclass
class AuditResult:
    """What an attacker can prove about each cell of a protected table.

    Attributes:
        problem: the audited table.
        withheld: mask of withheld cells.
        lower, upper: attacker bounds per cell (published cells: their value; withheld
            non-sensitive cells: their intervals, or NaN when only sensitive cells were
            computed). For a sensitive cell the bound is exact where its verdict fails
            and with ``audit(..., exact_intervals=True)``; otherwise it is a value the
            attacker cannot exclude, at least as far as the protection level needs
            (``stats["exact_intervals"]`` tells which).
        verdict: per cell, ``protected``/``exact``/``upper``/``lower``/``sliding`` for
            sensitive cells, ``""`` otherwise.
        insider_findings: frame of sensitive cells an insider bounds too closely (columns
            ``target``, ``attacker``, ``kind``, ``verdict``, ``audit_lower``,
            ``audit_upper``).
        union_findings: frame of implicitly published unions of withheld cells that are
            sensitive under the rule (columns ``relation``, ``cells``, ``total``,
            ``largest``, ``second``, ``sensitivity``).
        stats: counts and seconds.
        tables: ``(cell, direction) -> (cells, values)``: a feasible table behind the
            bound of a sensitive cell in that direction (``+1`` upper, ``-1`` lower): the
            cells where it differs from the true table and its values there (only with
            ``audit(..., keep_tables=True)``; empty otherwise).
    """

    problem: Problem
    withheld: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    verdict: np.ndarray
    insider_findings: pd.DataFrame = field(default_factory=lambda: _empty_insider())
    union_findings: pd.DataFrame = field(default_factory=lambda: _empty_union())
    stats: dict = field(default_factory=dict)
    tables: dict = field(default_factory=dict)

    @property
    def failing(self) -> np.ndarray:
        """Indices of sensitive cells whose verdict is not ``protected``."""
        return np.flatnonzero((self.verdict != "") & (self.verdict != "protected"))

    @property
    def ok(self) -> bool:
        """True when every sensitive cell is protected and no insider or union finding."""
        return (self.failing.size == 0 and len(self.insider_findings) == 0
                and len(self.union_findings) == 0)

    @property
    def all_protected(self) -> bool:
        """True when every sensitive cell's verdict is ``protected`` against the default
        attacker (insider and union findings aside: see :meth:`findings`)."""
        return all_protected(self)

    def findings(self) -> list[str]:
        """The insider and union findings in words, one sentence each (empty when none)."""
        return findings_in_words(self)

    def verdict_line(self) -> str:
        """The audit's verdict in one line (see :func:`verdict_line`)."""
        return verdict_line(self)

    def counts(self) -> dict[str, int]:
        """Number of sensitive cells per verdict."""
        vals = self.verdict[self.verdict != ""]
        return {v: int((vals == v).sum()) for v in VERDICTS}

    def summary(self) -> str:
        """A few lines for the terminal."""
        c = self.counts()
        total = sum(c.values())
        lines = [
            (f"audit: {self.problem.n} cells, {int(self.withheld.sum())} withheld, "
             f"{total} sensitive"),
            "  " + ", ".join(f"{k} {v}" for k, v in c.items()),
        ]
        if len(self.insider_findings):
            lines.append(f"  insider findings: {len(self.insider_findings)} "
                         f"({self.insider_findings['target'].nunique()} cells)")
        if len(self.union_findings):
            lines.append(f"  sensitive implicit unions: {len(self.union_findings)}")
        lines.append("  result: " + ("SAFE" if self.ok else "UNDER-PROTECTED"))
        return "\n".join(lines)

    def to_frame(self) -> pd.DataFrame:
        """Analyst view: names, codes, value, status, levels, bounds and verdict."""
        p = self.problem
        status = p.status.copy()
        status[self.withheld & ~p.sensitive] = SECONDARY
        cols: dict[str, object] = {"name": p.names}
        frame = pd.DataFrame(cols)
        if p.codes is not None and len(p.codes) == p.n:
            frame = pd.concat([frame, p.codes.reset_index(drop=True)], axis=1)
        frame["value"] = p.value
        frame["status"] = status
        frame["upl"] = p.upl
        frame["lpl"] = p.lpl
        frame["spl"] = p.spl
        frame["audit_lower"] = self.lower
        frame["audit_upper"] = self.upper
        frame["verdict"] = self.verdict
        return frame


def all_protected(audit: Any) -> bool:
    """True when every sensitive cell's verdict is ``protected``.

    ``audit`` is an :class:`AuditResult` or any object with a ``verdict`` array (``""``
    for cells that are not sensitive), as a result built by hand may be.
    """
    verdict = np.asarray(audit.verdict, dtype=object).astype(str)
    return bool(((verdict == "") | (verdict == "protected")).all())


def findings_in_words(audit: Any) -> list[str]:
    """The insider and union findings of an audit, one sentence each (empty when none,
    or when ``audit`` carries no findings)."""
    out = []
    ins = getattr(audit, "insider_findings", None)
    if ins is not None and len(ins):
        cells = ins["target"].nunique() if hasattr(ins, "columns") and "target" in ins.columns else len(ins)
        out.append(f"{len(ins)} insider finding(s) on {cells} cell(s): a single contributor of a withheld "
                   "cell could narrow down a sensitive cell")
    uni = getattr(audit, "union_findings", None)
    if uni is not None and len(uni):
        out.append(f"{len(uni)} sensitive union(s) of withheld cells are implicitly published")
    return out


def verdict_line(audit: Any) -> str:
    """An audit's verdict in one line, as the summary, the report and the command line
    show it: how many sensitive cells were checked, how many are not protected and why,
    and the findings (:func:`findings_in_words`)."""
    verdict = np.asarray(audit.verdict, dtype=object).astype(str)
    sens = verdict != ""
    bad = sens & (verdict != "protected")
    findings = findings_in_words(audit)
    if not bad.any():
        if findings:
            return (f"every sensitive cell protected against outsiders ({int(sens.sum())} checked), but "
                    + "; ".join(findings))
        return f"every sensitive cell protected ({int(sens.sum())} checked)"
    kinds, n = np.unique(verdict[bad], return_counts=True)
    why = ", ".join(f"{b} {a}" for a, b in zip(kinds, n))
    return (f"{int(bad.sum())} of {int(sens.sum())} sensitive cells NOT protected ({why})"
            + "".join("; " + f for f in findings))


def _empty_insider() -> pd.DataFrame:
    return pd.DataFrame({"target": pd.Series(dtype=object), "attacker": pd.Series(dtype=object),
                         "kind": pd.Series(dtype=object), "verdict": pd.Series(dtype=object),
                         "audit_lower": pd.Series(dtype=float),
                         "audit_upper": pd.Series(dtype=float)})


def _empty_union() -> pd.DataFrame:
    return pd.DataFrame({"relation": pd.Series(dtype=int), "cells": pd.Series(dtype=object),
                         "total": pd.Series(dtype=float), "largest": pd.Series(dtype=float),
                         "second": pd.Series(dtype=float),
                         "sensitivity": pd.Series(dtype=float)})
