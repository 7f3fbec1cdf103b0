"""Errors that tablesafe raises for bad input and failed runs.

Every error carries a one-paragraph message that names what is at fault (file, line,
column, code or cell) so the command line can print it without a traceback.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np


class TablesafeError(Exception):
    """Base class of every error tablesafe raises on purpose."""


class InputError(TablesafeError):
    """Bad input data: unknown codes, missing or non-numeric values, unknown columns.

    The optional fields name where the fault is; they are folded into the message.
    """

    def __init__(
        self,
        message: str,
        *,
        file: str | None = None,
        line: int | None = None,
        column: str | None = None,
        code: str | None = None,
    ) -> None:
        self.file = file
        self.line = line
        self.column = column
        self.code = code
        where = []
        if file is not None:
            where.append(f"file {file}")
        if line is not None:
            where.append(f"line {line}")
        if column is not None:
            where.append(f"column {column!r}")
        if code is not None:
            where.append(f"code {code!r}")
        full = message if not where else f"{message} ({', '.join(where)})"
        super().__init__(full)


class HierarchyError(InputError):
    """A broken hierarchy: duplicate or cyclic entries, bad indentation, unknown parents."""


class NonAdditiveError(InputError):
    """Tabular input whose totals are not the sums of their parts."""


class RuleError(TablesafeError):
    """A sensitivity rule that is malformed or cannot be applied soundly to the data."""


class InfeasibleError(TablesafeError):
    """An optimisation problem without a solution (e.g. a cell that cannot be protected)."""


class SolverTimeLimit(TablesafeError):
    """The solver reached its time limit before finding an acceptable answer.

    ``by_clock``: the real clock ended it (not a bound on its work, which ends at the same
    point in every run). ``hurried_estimate``: seconds a hurried ``fast`` pass over the
    targets would take at the pace of the one that gave up (``None``: not known).
    ``partial``: a ``fast`` pass's pattern as far as it got (a boolean mask: the cells
    withheld before it and those of the certificates it found), or ``None``."""

    by_clock: bool = True
    hurried_estimate: float | None = None
    partial: np.ndarray | None = None


class AuditFailure(TablesafeError):
    """A protected table failed its audit; nothing is published."""
