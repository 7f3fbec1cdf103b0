"""Operational criterion 2 in a run (seed 001 sections 4-7): a suppression pattern in
which no aggregation of withheld cells is sensitive, and the criterion-2 check of a given
publication.

Criterion 2 needs each unit's contribution to the cells, so it works from microdata: the
run lists them once (:func:`tablesafe.tabulate.unit_contributions`, the holding as the
unit when one is given). The rule is the first p% rule of the run (``q = 100``, seed 001
section 5).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from tablesafe.errors import InputError
from tablesafe.problem import Pattern, Problem

CRITERIA = (1, 2)
"""Operational criteria a run may ask for: 1 (every sensitive cell's interval wide
enough) or 2 (also no sensitive aggregation of withheld cells)."""


@dataclass(frozen=True)
class Criterion2:
    """What a criterion-2 run needs: the rule and each unit's contributions.

    Attributes:
        p: the p of the p% rule extended to aggregations.
        q: the q of the (p,q) rule (100: the p% rule).
        contributions: ``cell`` (name), ``unit``, ``value``.
    """

    p: float
    q: float = 100.0
    contributions: pd.DataFrame = field(default_factory=pd.DataFrame, repr=False)


def check_criterion(criterion: object, method: str) -> int:
    """The criterion as an integer, refused unless 1 or 2, and 2 only with a suppression
    method (the adjustment methods, interval publication and noise have their own checks)."""
    from tablesafe.suppress.methods import METHODS, NONE

    if criterion not in CRITERIA:
        raise InputError(f"criterion must be 1 or 2, not {criterion!r} (--criterion, Python: criterion=...)")
    if criterion == 2 and (method not in METHODS or method == NONE):
        raise InputError(f"criterion 2 needs a suppression method (auto, optimal, modular, fast), not {method!r}")
    return int(criterion)


def criterion2_inputs(problem: Problem, data: Any, dims: Any, response: str, *, total: str, holding: str | None,
                      tables: Any, missing_code: str | None, encoding: str | None) -> Criterion2:
    """The rule and the unit contributions of a criterion-2 run, or one clear error."""
    from tablesafe.tabulate import dim_specs, unit_contributions

    percent = problem.assessment.percent if problem.assessment is not None else None
    if percent is None:
        raise InputError("criterion 2 needs a p% rule among the rules (the rule it extends to aggregations)")
    if data is None or isinstance(data, Problem) or str(data).lower().endswith((".jj", ".asc", ".tab")):
        raise InputError("criterion 2 needs microdata (each unit's contributions), not a tabulated table, "
                         "a JJ file or a tau-ARGUS file")
    cf = unit_contributions(data, dim_specs(dims, total), response, holding, tables=tables,
                            missing_code=missing_code, encoding=encoding)
    return Criterion2(p=float(percent[0]), contributions=cf)


def criterion2_suppress(problem: Problem, need: Criterion2, *, method: str, time_limit: float | None,
                        singleton: bool, log: Any = None) -> Pattern:
    """A pattern safe under criteria 1 and 2 (:func:`tablesafe.suppress.criterion2.criterion2_pattern`);
    its stats hold the criterion-2 figures under ``criterion2``."""
    from tablesafe.suppress.criterion2 import criterion2_pattern

    withheld, stats = criterion2_pattern(problem, need.contributions, p=need.p, q=need.q, method=method,
                                         time_limit=time_limit, singleton=singleton, log=log)
    first = stats.pop("criterion1", {})
    stats.pop("added_cells", None)
    return Pattern(withheld=withheld, method=method, stats={**first, "criterion2": stats})


def criterion2_check(problem: Problem, withheld: np.ndarray, need: Criterion2,
                     time_limit: float | None = None) -> dict:
    """Whether a pattern passes criterion 2: ``safe`` (proved), the number of independent
    parts of its withheld cells and of those with a sensitive aggregation, and one
    sensitive aggregation (text, attacked and attacking unit, ``f / T``)."""
    from tablesafe.audit.aggregation import criterion2

    res = criterion2(problem, withheld, need.contributions, p=need.p, q=need.q, time_limit=time_limit,
                     decide=True)
    out = {"safe": bool(res.safe and res.status == "optimal"), "status": res.status, "parts": res.parts,
           "sensitive parts": res.sensitive_parts}
    if not res.safe:
        out.update(aggregation=res.describe(problem.names[res.cells]), attacked=str(res.attacked),
                   attacker=str(res.attacker), relative=float(res.relative))
    return out
