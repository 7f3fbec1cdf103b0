"""The analyst file: every cell with its value, status, the rule that fired, protection
levels and the audit interval. Confidential: for the office's analysts, never published.

Columns (DESIGN.md "Command line"): the dimension codes, ``value``, ``contributors``,
``status`` (S U A P M Z), ``rule``, ``upl``, ``lpl``, ``spl``, ``audit_lower``,
``audit_upper`` and ``verdict`` (``protected``/``exact``/``upper``/``lower``/``sliding`` for
sensitive cells, empty otherwise). For a protected direction of a sensitive cell the
audit stops once the attacker's interval reaches the protection level, so
``audit_lower``/``audit_upper`` there are values the attacker cannot exclude (the exact
extremes lie at or beyond them) unless the audit ran with ``exact_intervals=True``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from tablesafe.io.publication import stable_values
from tablesafe.problem import Problem

ANALYST_COLUMNS = (
    "value",
    "contributors",
    "status",
    "rule",
    "upl",
    "lpl",
    "spl",
    "audit_lower",
    "audit_upper",
    "verdict",
)


def codes_of(problem: Problem) -> pd.DataFrame:
    """The code columns of a problem's cells (a single ``cell`` column when it has none)."""
    if problem.codes is not None:
        frame = problem.codes.reset_index(drop=True).copy()
        for c in frame.columns:
            frame[c] = frame[c].astype(str)
        return frame
    return pd.DataFrame({"cell": np.asarray(problem.names, dtype=object).astype(str)})


def analyst_frame(problem: Problem, status: np.ndarray | None = None, audit: Any | None = None) -> pd.DataFrame:
    """Build the analyst table.

    Args:
        problem: the assessed problem (values, statuses, levels, rule, contributors).
        status: final statuses (complements as ``M``); defaults to ``problem.status``.
        audit: an audit result with arrays ``lower``, ``upper``, ``verdict``, or None
            (then the audit columns are empty).
    """
    n = problem.n
    frame = codes_of(problem)
    frame["value"] = stable_values(problem.value)
    contrib = problem.contributors
    frame["contributors"] = (
        pd.array(np.asarray(contrib).astype("int64"), dtype="Int64")
        if contrib is not None
        else pd.array([pd.NA] * n, dtype="Int64")
    )
    frame["status"] = np.asarray(status if status is not None else problem.status).astype(str)
    rule = problem.rule if problem.rule is not None else np.full(n, "", dtype=object)
    frame["rule"] = pd.Series(np.asarray(rule, dtype=object)).fillna("").astype(str).to_numpy()
    frame["upl"] = stable_values(problem.upl)
    frame["lpl"] = stable_values(problem.lpl)
    frame["spl"] = stable_values(problem.spl)
    if audit is not None:
        frame["audit_lower"] = stable_values(audit.lower)
        frame["audit_upper"] = stable_values(audit.upper)
        frame["verdict"] = np.asarray(audit.verdict, dtype=object).astype(str)
    else:
        frame["audit_lower"] = np.full(n, np.nan)
        frame["audit_upper"] = np.full(n, np.nan)
        frame["verdict"] = np.full(n, "", dtype=object)
    return frame
