"""Statuses set before the rules' verdict is final: a priori requests (tau-ARGUS ``.hst``
files: unsafe, protected, safe, costs, levels, bounds per cell) and the statuses a tabular
input gives its cells. Files are read in :mod:`tablesafe.io`; this module only applies
what they say to a :class:`~tablesafe.Problem`.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from tablesafe.celltable import CellTable
from tablesafe.errors import InputError
from tablesafe.problem import EMPTY, MANUAL, PROTECTED, SAFE, SENSITIVE, Problem
from tablesafe.structure.cellkeys import KEY_SEPARATOR, cell_keys


def apply_requests(
    problem: Problem,
    requests: pd.DataFrame,
    *,
    manual_range: float = 10.0,
    ignore_errors: bool = False,
    source: str = "<frame>",
) -> Problem:
    """Apply a priori requests (the frame :func:`tablesafe.io.hst.read_hst` returns: the
    codes, ``kind``, ``a``, ``b`` and the file's ``line``) to a problem.

    ``u`` makes a cell primary by hand (status A) with protection levels of
    ``manual_range`` percent of its value unless it has levels already; ``m`` makes it
    withheld by hand with no required width beyond not being exact; ``p`` protects a cell
    (must be published); ``s`` makes it safe; ``c`` sets the cost; ``pl`` the lower and
    upper protection levels; ``ab`` the a priori bounds. Empty cells cannot be withheld.
    Errors name ``source`` (the file the requests came from) and its line; with
    ``ignore_errors`` requests for unknown or empty cells are skipped (tau-ARGUS's option).
    """
    if problem.codes is None:
        raise InputError("a priori files name cells by their codes; this problem has none")
    dims = list(problem.codes.columns)
    index = {k: i for i, k in enumerate(cell_keys(problem.codes, dims))}
    status = problem.status.copy()
    cost = problem.cost.copy()
    lower, upper = problem.lower.copy(), problem.upper.copy()
    lpl, upl, spl = problem.lpl.copy(), problem.upl.copy(), problem.spl.copy()
    rule = np.asarray(problem.rule if problem.rule is not None else [""] * problem.n, dtype=object).copy()
    for r in requests.itertuples(index=False):
        d = r._asdict()
        key = KEY_SEPARATOR.join(str(d[c]) for c in dims)
        i = index.get(key)
        line = int(d["line"]) if "line" in d and d["line"] == d["line"] else None
        if i is None:
            if ignore_errors:
                continue
            raise InputError(
                "the a priori file names a cell that is not in the table",
                file=source,
                line=line,
                code=" x ".join(str(d[c]) for c in dims),
            )
        kind = d["kind"]
        if kind in ("u", "m"):
            if status[i] == EMPTY:
                if ignore_errors:
                    continue
                raise InputError("an empty cell cannot be withheld", file=source, line=line, code=problem.names[i])
            if status[i] not in SENSITIVE:
                status[i] = MANUAL
                rule[i] = "apriori"
                if kind == "u" and upl[i] <= 0 and lpl[i] <= 0:
                    upl[i] = lpl[i] = abs(problem.value[i]) * manual_range / 100.0
        elif kind == "p":
            status[i] = PROTECTED if status[i] != EMPTY else EMPTY
            upl[i] = lpl[i] = spl[i] = 0.0
        elif kind == "s":
            if status[i] != EMPTY:
                status[i] = SAFE
                upl[i] = lpl[i] = spl[i] = 0.0
        elif kind == "c":
            cost[i] = float(d["a"])
        elif kind == "pl":
            lpl[i], upl[i] = float(d["a"]), float(d["b"])
        elif kind == "ab":
            lower[i], upper[i] = float(d["a"]), float(d["b"])
    return problem.copy(status=status, cost=cost, lower=lower, upper=upper, lpl=lpl, upl=upl, spl=spl, rule=rule)


def given_statuses(cells: CellTable) -> pd.DataFrame | None:
    """Manual statuses from a tabular input's status column: unsafe (U, A) -> A, protected
    (P) -> P; None when the input gave no such cells."""
    status = cells.extra.get("status") if cells.extra else None
    if status is None:
        return None
    st = np.asarray(status, dtype=object).astype(str)
    given = np.isin(st, ["U", "A", "P"])
    if not given.any():
        return None
    codes = cells.model.codes.loc[given].reset_index(drop=True).astype(str)
    return codes.assign(status=np.where(st[given] == "P", "P", "A"))
